import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct CoverageTests {
    /// A chair-like box standing on the floor (y = 0), turned by 0.3 rad.
    static let box = (try? Box(center: Vec3(0.2, 0.5, -0.1), size: Vec3(0.6, 1.0, 0.6), yaw: 0.3, floor: 0)) ?? Box.unit
    static let k = (try? Intrinsics(fx: 1500, fy: 1500, cx: 960, cy: 720, width: 1920, height: 1440)) ?? (try? Intrinsics(fx: 1, fy: 1, cx: 0, cy: 0, width: 1, height: 1))

    func intrinsics() throws -> Intrinsics { try #require(CoverageTests.k) }

    /// A camera at the dial azimuth / elevation around the box centre, `distance` away, looking at the centre.
    func view(_ box: Box, azimuth: Float, elevation: Float, distance: Float = 2) -> Pose {
        let local = Vec3(-sin(azimuth) * cos(elevation), sin(elevation), -cos(azimuth) * cos(elevation)) * distance
        return lookAt(eye: box.center + box.toWorld(direction: local), target: box.center)
    }

    // MARK: Reference mode

    @Test func centreRayCountsMatchRayIntersect() throws {
        var rng = SplitMix64(seed: 71)
        let k = try intrinsics()
        for trial in 0..<20 {
            let box = rng.box(floor: trial % 2 == 0)
            var o = CoverageOptions()
            o.gridWidth = 0; o.gridHeight = 0  // the centre ray only
            o.countInsideViews = true  // the reference app's rule, eyes inside the box included
            let c = try Coverage(box: box, options: o)
            var want = [UInt32](repeating: 0, count: 6)
            for i in 0..<200 {
                let eye = box.center + rng.unitVector() * rng.float(0.5...6)
                let pose = lookAt(eye: eye, target: box.center + rng.vec(-1...1) * box.halfSize * 1.5)
                let face = try Ray(pixelU: 960, v: 720, pose: pose, intrinsics: k).intersect(box: box)?.face ?? -1
                if face >= 0 { want[Int(face)] += 1 }
                #expect(try c.addView(pose: pose, intrinsics: k, timestamp: Double(i)) == face)
            }
            #expect((0..<6).map { (try? c.face($0).count) ?? 0 } == want, "trial \(trial)")
            #expect(c.views == 200)
        }
    }

    @Test func sideCompletedFiresOnceAtTheGoalWithTheReferenceColours() throws {
        let box = CoverageTests.box, k = try intrinsics()
        let c = try Coverage(box: box)
        for i in 1...25 {
            let face = try c.addView(pose: view(box, azimuth: 0.01 * Float(i % 5), elevation: 0.1), intrinsics: k, timestamp: Double(i))
            #expect(face == 0)
            let f = try c.face(0)
            let p = Float(min(i, 10)) / 10
            #expect(f.count == UInt32(i) && f.goal == 10 && f.progress == p && f.completed == (i >= 10))
            #expect(f.color == Vec3(1 - p, 1, p) && f.opacity == 0.25 + 0.5 * p)
            let events = Array(sequence(state: c) { $0.nextEvent() })
            if i == 10 {
                #expect(events.map(\.code) == [.sideCompleted] && events.first?.index == 0 && events.first?.value == 10
                        && events.first?.timestamp == 10, "\(events)")
            } else {
                #expect(events.filter { $0.code == .sideCompleted }.isEmpty, "view \(i): \(events)")
            }
        }
        let untouched = try c.face(5)
        #expect(untouched.count == 0 && untouched.color == Vec3(1, 1, 0) && untouched.opacity == 0.25 && !untouched.completed)
        #expect(throws: CaptureKitError.self) { try c.face(6) }
        #expect(throws: CaptureKitError.self) { try c.face(-1) }
        // Reset: everything goes, and the side completes again at the goal.
        c.reset()
        #expect(try c.face(0).count == 0 && c.summary.views == 0 && c.nextEvent() == nil && c.dialCounts.allSatisfy { $0 == 0 })
        for i in 1...10 { _ = try c.addView(pose: view(box, azimuth: 0, elevation: 0.1), intrinsics: k, timestamp: Double(i)) }
        #expect(Array(sequence(state: c) { $0.nextEvent() }).filter { $0.code == .sideCompleted }.count == 1)
    }

    @Test func countsSurviveBoxEdits() throws {
        var box = CoverageTests.box
        let k = try intrinsics()
        let c = try Coverage(box: box)
        for i in 0..<6 { try c.addView(pose: view(box, azimuth: 0, elevation: 0.2), intrinsics: k, timestamp: Double(i)) }
        for i in 0..<3 { try c.addView(pose: view(box, azimuth: .pi / 2, elevation: 0.2), intrinsics: k, timestamp: Double(i)) }
        let before = (0..<6).map { (try? c.face($0).count) ?? 0 }
        let cells = c.cellCounts, dial = c.dialCounts
        try box.translate(by: Vec3(0.5, 0, 0.3))
        try box.rotate(by: 1.0)
        try box.setSize(Vec3(0.8, 1.2, 0.5))
        c.setBox(box)
        #expect((0..<6).map { (try? c.face($0).count) ?? 0 } == before && c.cellCounts == cells && c.dialCounts == dial)
        // The front of the edited box keeps counting toward the same face and completes at 10.
        for i in 6..<10 { #expect(try c.addView(pose: view(box, azimuth: 0.05, elevation: 0.2), intrinsics: k, timestamp: Double(i)) == 0) }
        #expect(try c.face(0).completed && c.face(0).count == 10)
        #expect(Array(sequence(state: c) { $0.nextEvent() }).filter { $0.code == .sideCompleted }.map(\.index) == [0])
    }

    // MARK: Dial and completion from a guided orbit

    /// Orbits at two elevations driven by the scheduler: the dial fills to >= 90 % and every side
    /// face reaches its goal; each ring completes once.
    @Test func fullOrbitAtTwoElevationsCompletesTheSides() throws {
        let box = CoverageTests.box, k = try intrinsics()
        let s = try Scheduler()
        let c = try Coverage(box: box)
        let radius: Float = 2, speed: Float = 0.45
        let lap = 2 * Double.pi * Double(radius) / Double(speed)
        var t = 0.0, captured = 0
        var events: [GuidanceEvent] = []
        for (lapIndex, elevationDeg) in [Float(15), 40].enumerated() {
            let height = radius * tan(elevationDeg * .pi / 180)
            for i in 0...Int((lap + 4) * 60) {  // a little more than a lap: the first capture waits 3 s
                let azimuth = Float(Double(i) / 60 * Double(speed / radius)) + Float(lapIndex) * 0.1
                let eye = box.center + box.toWorld(direction: Vec3(-sin(azimuth) * radius, height, -cos(azimuth) * radius))
                let pose = lookAt(eye: eye, target: box.center)
                let g = try s.update(SchedulerFrame(timestamp: t, pose: pose, box: box))
                if g.capture {
                    captured += 1
                    try c.addView(pose: pose, intrinsics: k, timestamp: t)
                }
                while let e = c.nextEvent() { events.append(e) }
                t += 1.0 / 60
            }
        }
        let summary = c.summary
        #expect(summary.dialFraction >= 0.9, "dial \(summary.dialFraction) after \(captured) captures")
        for f in [0, 1, 2, 5] {
            let fc = try c.face(f)
            #expect(fc.completed && fc.count >= 10, "face \(f): \(fc.count)")
            #expect(fc.cellFraction == 1, "face \(f) cells \(fc.cellFraction)")
        }
        #expect(events.filter { $0.code == .sideCompleted }.map(\.index).sorted() == [0, 1, 2, 5])
        #expect(events.filter { $0.code == .ringCompleted }.map(\.index) == [0, 1])
        #expect(summary.views == UInt32(captured) && summary.facesCompleted == 4 && !summary.allCompleted)  // the top is never hit
        #expect(try c.face(4).count == 0)
        #expect(abs(summary.completion - 0.8) < 1e-6, "four of the five counted faces")
    }

    @Test func aCameraOnOneSideNeverCompletesTheOthers() throws {
        let box = CoverageTests.box, k = try intrinsics()
        let c = try Coverage(box: box)
        var rng = SplitMix64(seed: 12)
        for i in 0..<300 {
            let pose = view(box, azimuth: rng.float(-0.6...0.6), elevation: rng.float(-0.2...0.6), distance: rng.float(1.2...3))
            #expect(try c.addView(pose: pose, intrinsics: k, timestamp: Double(i)) == 0)
        }
        #expect(try c.face(0).count == 300 && c.summary.facesCompleted == 1)
        for f in 1..<6 { #expect(try c.face(f).count == 0 && !c.face(f).completed) }
        let events = Array(sequence(state: c) { $0.nextEvent() })
        #expect(events.filter { $0.code == .sideCompleted }.map(\.index) == [0])
        #expect(!events.contains { $0.code == .allSidesCompleted || $0.code == .ringCompleted })
        #expect(c.summary.dialFraction < 0.25)
    }

    @Test func allSidesCompletedFiresOnceForTheFaceMask() throws {
        let box = CoverageTests.box, k = try intrinsics()
        var o = CoverageOptions()
        o.faceMask = 0b100001  // front and back
        o.goal = 3
        let c = try Coverage(box: box, options: o)
        for i in 0..<3 { try c.addView(pose: view(box, azimuth: 0, elevation: 0.1), intrinsics: k, timestamp: Double(i)) }
        #expect(!c.summary.allCompleted)
        for i in 3..<9 { try c.addView(pose: view(box, azimuth: .pi, elevation: 0.1), intrinsics: k, timestamp: Double(i)) }
        let events = Array(sequence(state: c) { $0.nextEvent() })
        #expect(events.map(\.code) == [.sideCompleted, .sideCompleted, .allSidesCompleted], "\(events)")
        #expect(events.last?.timestamp == 5 && events.last?.value == 6)
        let s = c.summary
        #expect(s.allCompleted && s.facesCompleted == 2 && s.completion == 1)
    }

    // MARK: Cells

    /// The batched local hit points agree with single-ray intersections.
    @Test func gridPointsMatchSingleRays() throws {
        var rng = SplitMix64(seed: 5)
        let k = try Intrinsics(fx: 40, fy: 40, cx: 16, cy: 12, width: 32, height: 24)
        var compared = 0
        for trial in 0..<200 {
            let box = rng.box(floor: false)
            let eye = trial % 10 == 0 ? box.center + box.toWorld(direction: rng.vec(-0.8...0.8) * box.halfSize) : box.center + rng.unitVector() * rng.float(1...6)
            let pose = lookAt(eye: eye, target: box.center + rng.vec(-0.5...0.5))
            let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
            var f = [Int32](repeating: 0, count: 768), x = [Float](repeating: 0, count: 768), y = x, z = x
            f.withUnsafeMutableBufferPointer { fp in x.withUnsafeMutableBufferPointer { xp in y.withUnsafeMutableBufferPointer { yp in
                z.withUnsafeMutableBufferPointer { zp in caster.castGridPoints(faces: fp, x: xp, y: yp, z: zp) } } } }
            let o = box.toLocal(direction: pose.t - box.center)
            for row in 0..<24 {
                for col in 0..<32 {
                    let i = row * 32 + col
                    let hit = try Ray(pixelU: Float(col) + 0.5, v: Float(row) + 0.5, pose: pose, intrinsics: k).intersect(box: box)
                    guard let hit, f[i] == hit.face else { continue }  // edge rays may differ (tested for the grid kernel)
                    let local = box.toLocal(direction: hit.point - box.center)
                    #expect(close(Vec3(x[i], y[i], z[i]) + o, local, 2e-4 * max(1, hit.distance)), "trial \(trial) pixel \(col),\(row)")
                    compared += 1
                }
            }
        }
        #expect(compared > 20000)
    }

    /// Cells from an independent mapping through `Box.face` frames (column along the face's +x,
    /// row 0 at its +y edge) for random views; and two hand-checked cells.
    /// The 23 × 17 grid has a partial group of rays at the end of every row (the kernel casts
    /// four rays at a time and keeps only the hits).
    @Test(arguments: [(24, 18), (23, 17)])
    func cellsFollowTheFaceFrames(grid: (width: Int, height: Int)) throws {
        var rng = SplitMix64(seed: 8)
        var o = CoverageOptions()
        o.gridWidth = UInt32(grid.width); o.gridHeight = UInt32(grid.height); o.cellsPerSide = 5
        let n = 5
        let k = try Intrinsics(fx: 30, fy: 30, cx: Float(grid.width) / 2, cy: Float(grid.height) / 2,
                               width: UInt32(grid.width), height: UInt32(grid.height))
        var checked = 0
        for trial in 0..<150 {
            let box = rng.box(floor: false)
            let c = try Coverage(box: box, options: o)
            let pose = lookAt(eye: box.center + rng.unitVector() * rng.float(1.5...5), target: box.center + rng.vec(-0.3...0.3))
            try c.addView(pose: pose, intrinsics: k, timestamp: 0)
            var want = Set<Int>()
            var ambiguous = false
            for row in 0..<grid.height {
                for col in 0..<grid.width {
                    guard let hit = try Ray(pixelU: Float(col) + 0.5, v: Float(row) + 0.5, pose: pose, intrinsics: k).intersect(box: box) else { continue }
                    let frame = try box.face(Int(hit.face))
                    let axes = frame.orientation.axes
                    let d = hit.point - frame.center
                    let l = box.toLocal(direction: axes.x), m = box.toLocal(direction: axes.y)
                    let hx = abs(dot(l, box.halfSize)), hy = abs(dot(m, box.halfSize))  // half extents along the face axes
                    let u = (dot(d, axes.x) + hx) / (2 * hx) * Float(n), v = (hy - dot(d, axes.y)) / (2 * hy) * Float(n)
                    for q in [u, v] where abs(q - q.rounded()) < 1e-4 && q > 0.5 && q < Float(n) - 0.5 { ambiguous = true }
                    let cell = (Int(hit.face) * n + min(n - 1, max(0, Int(v)))) * n + min(n - 1, max(0, Int(u)))
                    want.insert(cell)
                }
            }
            guard !ambiguous else { continue }
            let got = Set(c.cellCounts.enumerated().filter { $0.element > 0 }.map(\.offset))
            #expect(got == want, "trial \(trial)")
            #expect(c.cellCounts.allSatisfy { $0 <= 1 })
            checked += 1
        }
        #expect(checked > 100)
        guard grid.width == 24 else { return }  // the hand-checked views below are for the 24 × 18 grid
        // Hand-checked: the front face's top-left cell as seen from the front is cell 0 (the
        // front face's +x is the box's −x); the top face's row 0 is at the front edge.
        let unit = try Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0)
        o.cellsPerSide = 4
        let narrow = try Intrinsics(fx: 2000, fy: 2000, cx: 12, cy: 9, width: 24, height: 18)
        let front = try Coverage(box: unit, options: o)
        try front.addView(pose: lookAt(eye: Vec3(0.4, 0.4, -1), target: Vec3(0.4, 0.4, 0)), intrinsics: narrow, timestamp: 0)
        #expect(front.cellCounts.enumerated().filter { $0.element > 0 }.map(\.offset) == [0])
        let top = try Coverage(box: unit, options: o)
        try top.addView(pose: Pose(x: Vec3(1, 0, 0), y: Vec3(0, 0, -1), z: Vec3(0, 1, 0), t: Vec3(0.4, 1.5, -0.4)), intrinsics: narrow, timestamp: 0)
        #expect(top.cellCounts.enumerated().filter { $0.element > 0 }.map(\.offset) == [4 * 16 + 0 * 4 + 3])
        // Several views: a cell counts each view once.
        for i in 1...3 { try front.addView(pose: lookAt(eye: Vec3(0, 0, -3), target: .zero), intrinsics: try Intrinsics(fx: 20, fy: 20, cx: 12, cy: 9, width: 24, height: 18), timestamp: Double(i)) }
        #expect(front.cellCounts[0] == 4 && front.cellCounts[5] == 3 && front.cellCounts[16...].allSatisfy { $0 == 0 })
        #expect(try front.face(0).cellFraction == 1)
    }

    // MARK: Hint

    /// The side a face mask counts, seen amounts from the cells: sum over its cells of
    /// min(views, goal) (face order front, left, back, right = azimuth 0, 90°, 180°, −90°).
    func sideSeen(_ c: Coverage) -> [UInt32] {
        [0, 1, 5, 2].map { f in c.cellCounts[(f * 16)..<((f + 1) * 16)].reduce(0) { $0 + min($1, c.options.goal) } }
    }

    /// Since 0.2 the hint aims at the side the captured views saw least (0.1 aimed at the dial
    /// bin where the camera had stood least, which on real captures pointed at the least-seen
    /// side in 33 % of hints).
    @Test func hintPointsAtTheSideTheViewsSawLeast() throws {
        let box = CoverageTests.box, k = try intrinsics()
        var o = CoverageOptions()
        o.azimuthBins = 8; o.elevationRings = 2
        o.faceMask = 0x27  // the four sides, not the top: the ring is always the level one
        let c = try Coverage(box: box, options: o)
        let step = Float.pi / 4
        // Nothing seen: the sides tie; the nearest to the camera (the front) wins: stay.
        var h = c.hint(pose: view(box, azimuth: 0.1, elevation: 0.17))
        #expect(h.bin == 0 && h.ring == 0 && h.ringDelta == 0 && h.targetCount == 0 && close(h.moveAngle, 0.1, 1e-5), "\(h)")
        // Front, left and back seen (low): the right side (−90°, bin 6) is the least seen, 16 cells
        // each for the others. From the front walk 90° to the left (clockwise seen from above).
        for b in [0, 2, 4] { try c.addView(pose: view(box, azimuth: Float(b) * step, elevation: 0.17), intrinsics: k, timestamp: 0) }
        #expect(sideSeen(c) == [16, 16, 16, 0])
        h = c.hint(pose: view(box, azimuth: 0, elevation: 0.17))
        #expect(h.bin == 6 && h.ring == 0 && h.targetCount == 0 && close(h.targetAzimuth, -2 * step, 1e-5) && close(h.moveAngle, 2 * step, 1e-5), "\(h)")
        // The right side seen twice from 45° high, the front 9 more times (low): the left and the
        // back (16 each) tie as least; the back (180°) is farther from a camera at 60° than the left
        // (90°). From 45° high (ring 1) go down to the level ring, which sees the side face on.
        for _ in 0..<2 { try c.addView(pose: view(box, azimuth: 6 * step, elevation: 0.8), intrinsics: k, timestamp: 0) }
        for _ in 0..<9 { try c.addView(pose: view(box, azimuth: 0, elevation: 0.17), intrinsics: k, timestamp: 0) }
        #expect(sideSeen(c) == [160, 16, 16, 32])
        h = c.hint(pose: view(box, azimuth: 60 * .pi / 180, elevation: 0.8))
        #expect(h.bin == 2 && h.ring == 0 && h.ringDelta == -1 && h.targetCount == 1 && close(h.moveAngle, -30 * .pi / 180, 1e-5), "\(h)")
        // Many views of one side count no more than goal per cell: the front (160) is not "more
        // seen" than it was after 10 views.
        try c.addView(pose: view(box, azimuth: 0, elevation: 0.17), intrinsics: k, timestamp: 0)
        #expect(sideSeen(c)[0] == 160)
    }

    /// With the top in the mask and seen less than the least-seen side, the hint names the
    /// highest ring; without cells (a 0 × 0 grid) the sides' centre-ray counts decide.
    @Test func hintGoesHigherForTheTopAndUsesCentreRaysWithoutCells() throws {
        let box = CoverageTests.box, k = try intrinsics()
        var o = CoverageOptions()
        o.azimuthBins = 8; o.elevationRings = 3
        let c = try Coverage(box: box, options: o)
        for b in 0..<8 { try c.addView(pose: view(box, azimuth: Float(b) * .pi / 4, elevation: 0), intrinsics: k, timestamp: 0) }
        let top = c.cellCounts[64..<80].reduce(0) { $0 + min($1, 10) }
        #expect(top < sideSeen(c).min() ?? 0)
        var h = c.hint(pose: view(box, azimuth: 0, elevation: 0))
        #expect(h.ring == 2 && h.ringDelta == 2, "\(h)")
        o.gridWidth = 0; o.gridHeight = 0; o.elevationRings = 1
        let d = try Coverage(box: box, options: o)
        // Centre rays: front 3, left 1, back 2, right 0 → the right (bin 6).
        for (b, n) in [(0, 3), (2, 1), (4, 2)] { for _ in 0..<n { try d.addView(pose: view(box, azimuth: Float(b) * .pi / 4, elevation: 0.2), intrinsics: k, timestamp: 0) } }
        h = d.hint(pose: view(box, azimuth: 0, elevation: 0.2))
        #expect(h.bin == 6 && h.ring == 0, "\(h)")
        try d.addView(pose: view(box, azimuth: 6 * .pi / 4, elevation: 0.2), intrinsics: k, timestamp: 0)
        try d.addView(pose: view(box, azimuth: 6 * .pi / 4, elevation: 0.2), intrinsics: k, timestamp: 0)
        h = d.hint(pose: view(box, azimuth: 0, elevation: 0.2))
        #expect(h.bin == 2, "\(h)")  // the left, with 1
    }

    // MARK: Validation

    @Test func badOptionsAreRejectedNamingTheField() throws {
        func expectRejected(_ field: String, _ edit: (inout CoverageOptions) -> Void) {
            var o = CoverageOptions()
            edit(&o)
            do {
                _ = try Coverage(box: CoverageTests.box, options: o)
                Issue.record("\(field) accepted")
            } catch {
                #expect(error.status == .invalidArgument && error.message.contains(field), "\(field): \(error.message)")
            }
        }
        expectRejected("goal") { $0.goal = 0 }
        expectRejected("goal") { $0.goal = 2_000_000 }
        expectRejected("face_mask") { $0.faceMask = 0 }
        expectRejected("face_mask") { $0.faceMask = 0x40 }
        expectRejected("cells_per_side") { $0.cellsPerSide = 0 }
        expectRejected("cells_per_side") { $0.cellsPerSide = 65 }
        expectRejected("grid_width") { $0.gridWidth = 0 }
        expectRejected("grid_width") { $0.gridHeight = 2000 }
        expectRejected("azimuth_bins") { $0.azimuthBins = 0 }
        expectRejected("azimuth_bins") { $0.azimuthBins = 361 }
        expectRejected("elevation_rings") { $0.elevationRings = 0 }
        expectRejected("elevation_min_deg") { $0.elevationMinDeg = .nan }
        expectRejected("elevation_min_deg") { $0.elevationMinDeg = -91 }
        expectRejected("elevation_max_deg") { $0.elevationMaxDeg = -10 }
        expectRejected("elevation_max_deg") { $0.elevationMaxDeg = .infinity }
        var none = CoverageOptions()
        none.gridWidth = 0; none.gridHeight = 0
        let c = try Coverage(box: CoverageTests.box, options: none)
        try c.addView(pose: view(CoverageTests.box, azimuth: 0, elevation: 0.2), intrinsics: try intrinsics(), timestamp: 0)
        #expect(try c.cellCounts.allSatisfy { $0 == 0 } && c.summary.cellFraction == 0 && c.face(0).count == 1)
        #expect(throws: CaptureKitError.self) { try c.addView(pose: view(CoverageTests.box, azimuth: 0, elevation: 0.2), intrinsics: try intrinsics(), timestamp: .nan) }
        #expect(c.views == 1)
    }

    @Test func viewsThatDoNotSeeTheBoxCentreLeaveTheDial() throws {
        let box = CoverageTests.box, k = try intrinsics()
        let c = try Coverage(box: box)
        // Looking away: no face, no cell, no dial bin.
        #expect(try c.addView(pose: lookAt(eye: box.center + Vec3(0, 0.3, -2), target: box.center + Vec3(0, 0.3, -4)), intrinsics: k, timestamp: 0) == -1)
        #expect(c.dialCounts.allSatisfy { $0 == 0 } && c.cellCounts.allSatisfy { $0 == 0 } && c.views == 1)
        // Inside the box: nothing counts, and "step back" is queued once per spell inside.
        let inside = lookAt(eye: box.center + Vec3(0, 0.1, 0), target: box.center + box.toWorld(direction: Vec3(0, 0.1, -1)))
        while c.nextEvent() != nil {}
        #expect(try c.addView(pose: inside, intrinsics: k, timestamp: 1) == -1)
        #expect(try c.addView(pose: inside, intrinsics: k, timestamp: 2) == -1)
        #expect(try c.views == 1 && c.face(0).count == 0 && c.dialCounts.allSatisfy { $0 == 0 } && c.cellCounts.allSatisfy { $0 == 0 })
        var events: [GuidanceEvent] = []
        while let e = c.nextEvent() { events.append(e) }
        #expect(events.map(\.code) == [.insideBox] && events.first?.timestamp == 1)
        try c.addView(pose: view(box, azimuth: 0, elevation: 0.2), intrinsics: k, timestamp: 3)
        #expect(try c.addView(pose: inside, intrinsics: k, timestamp: 4) == -1)
        #expect(c.nextEvent()?.code == .insideBox)  // a second spell
        // Counted when asked: the centre ray counts the exit face (the reference app's rule).
        var o = CoverageOptions()
        o.countInsideViews = true
        let counting = try Coverage(box: box, options: o)
        #expect(try counting.addView(pose: inside, intrinsics: k, timestamp: 1) == 0)
        #expect(counting.nextEvent() == nil)
    }

    /// The real HMC chair capture: the frames whose camera is inside the placed box (found here
    /// from the file's poses and corners) count nothing, so the bottom face nobody saw stays at 0.
    @Test func realCaptureViewsFromInsideTheBoxDoNotCount() throws {
        let m = try TransformsManifest.read(from: fixture("hmc-clinic-chair/transforms.json").path)
        let box = try BoundingBoxManifest.read(from: fixture("hmc-clinic-chair/boundingbox.json").path).box
        let insideFrames = m.frames.indices.filter { box.contains(Vec3(m.frames[$0].transform[0, 3], m.frames[$0].transform[1, 3], m.frames[$0].transform[2, 3])) }
        #expect(insideFrames.count >= 1, "the capture has frames taken from inside its box")
        func replay(_ o: CoverageOptions) throws -> (Coverage, [GuidanceEvent], [Int32]) {
            let c = try Coverage(box: box, options: o)
            var faces: [Int32] = []
            for (i, f) in m.frames.enumerated() {
                faces.append(try c.addView(pose: try Pose(f.transform), intrinsics: f.intrinsics, timestamp: Double(i)))
            }
            var events: [GuidanceEvent] = []
            while let e = c.nextEvent() { events.append(e) }
            return (c, events, faces)
        }
        let (c, events, faces) = try replay(CoverageOptions())
        for i in insideFrames { #expect(faces[i] == -1) }
        #expect(c.views == UInt32(m.frames.count - insideFrames.count))
        #expect(try c.face(3).count == 0, "bottom")  // face order: front, left, right, bottom, top, back
        // One event per spell of consecutive inside frames.
        let spells = insideFrames.enumerated().filter { $0.offset == 0 || insideFrames[$0.offset - 1] != $0.element - 1 }.count
        #expect(events.filter { $0.code == .insideBox }.count == spells)
        var counting = CoverageOptions()
        counting.countInsideViews = true
        let (all, _, _) = try replay(counting)
        #expect(all.views == UInt32(m.frames.count))
        let bottom = try all.face(3).count
        #expect(bottom == 5, "the reference rule counted the inside views as bottom (issue 11)")
        print("HMC chair: \(insideFrames.count) of \(m.frames.count) frames inside the box (\(spells) spells); bottom counted \(bottom) with count_inside_views, 0 without")
    }
}
