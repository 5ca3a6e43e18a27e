import Glibc

/// Options of `Coverage` (`ck_coverage_options`).
public struct CoverageOptions: Equatable, Sendable {
    /// Centre-ray hits that complete a face, 1...1_000_000 (the reference app's 10).
    public var goal: UInt32 = 10
    /// Faces that count toward completion, bit f = face f (default: all but the bottom).
    public var faceMask: UInt32 = 0x37
    /// Each face is split into n × n cells, n in 1...64.
    public var cellsPerSide: UInt32 = 4
    /// Rays cast per view for the cells: a grid across the whole image, each 1...1024, or 0 × 0
    /// for no cells.
    public var gridWidth: UInt32 = 64
    public var gridHeight: UInt32 = 48
    /// Dial: azimuth bins (1...360) × elevation rings (1...90) over
    /// [elevationMinDeg, elevationMaxDeg] (views outside fall in the nearest ring).
    public var azimuthBins: UInt32 = 24
    public var elevationRings: UInt32 = 2
    public var elevationMinDeg: Float = 0
    public var elevationMaxDeg: Float = 60
    /// Views from a camera inside the box count (faces, cells, dial) when true. By default they
    /// do not: from inside, the centre ray hits a face from behind (on the real HMC chair capture
    /// such frames counted as "bottom", a face nobody saw), and the operator is told to step back.
    public var countInsideViews = false

    public init() {}

    /// - Throws: `invalidArgument` naming the C field.
    public func validate() throws(CaptureKitError) {
        guard goal >= 1, goal <= 1_000_000 else { throw .invalidArgument("goal = \(goal) is out of range [1, 1000000]") }
        guard faceMask != 0, faceMask & ~0x3F == 0 else {
            throw .invalidArgument("face_mask 0x\(String(faceMask, radix: 16)) must be non-zero with bits 0...5 only")
        }
        guard cellsPerSide >= 1, cellsPerSide <= 64 else { throw .invalidArgument("cells_per_side = \(cellsPerSide) is out of range [1, 64]") }
        let noGrid = gridWidth == 0 && gridHeight == 0
        guard noGrid || (gridWidth >= 1 && gridWidth <= 1024 && gridHeight >= 1 && gridHeight <= 1024) else {
            throw .invalidArgument("grid_width x grid_height = \(gridWidth) x \(gridHeight) must both be in [1, 1024], or both 0")
        }
        guard azimuthBins >= 1, azimuthBins <= 360 else { throw .invalidArgument("azimuth_bins = \(azimuthBins) is out of range [1, 360]") }
        guard elevationRings >= 1, elevationRings <= 90 else { throw .invalidArgument("elevation_rings = \(elevationRings) is out of range [1, 90]") }
        guard elevationMinDeg.isFinite, elevationMinDeg >= -90, elevationMinDeg < 90 else {
            throw .invalidArgument("elevation_min_deg = \(elevationMinDeg) is out of range [-90, 90)")
        }
        guard elevationMaxDeg.isFinite, elevationMaxDeg > elevationMinDeg, elevationMaxDeg <= 90 else {
            throw .invalidArgument("elevation_max_deg = \(elevationMaxDeg) must be in (elevation_min_deg, 90]")
        }
    }
}

/// Coverage of one face (`ck_face_coverage`).
public struct FaceCoverage: Equatable, Sendable {
    public var count: UInt32
    public var goal: UInt32
    /// min(count, goal) / goal.
    public var progress: Float
    /// Yellow (1, 1, 0) at progress 0 → cyan (0, 1, 1) at 1: (1 − p, 1, p).
    public var color: Vec3
    /// 0.25 + 0.5 · progress.
    public var opacity: Float
    /// Fraction of the face's cells seen by at least one view.
    public var cellFraction: Float
    public var completed: Bool
}

/// Overall coverage (`ck_coverage_summary`).
public struct CoverageSummary: Equatable, Sendable {
    public var views: UInt32
    /// Counted faces (face mask) at their goal, and whether all of them are.
    public var facesCompleted: UInt32
    public var allCompleted: Bool
    /// Mean progress of the counted faces, 0...1.
    public var completion: Float
    /// Fraction of dial bins with at least one view.
    public var dialFraction: Float
    /// Fraction of the counted faces' cells seen at least once.
    public var cellFraction: Float
}

/// Where to go next (`ck_coverage_hint`).
public struct CoverageHint: Equatable, Sendable {
    /// Angle to walk around the object to reach the target bin, radians: positive = to the
    /// operator's left while facing the object (clockwise seen from above), in (−π, π].
    public var moveAngle: Float
    /// Azimuths in the box frame (0 = in front of the front face, π/2 = the left side, positive
    /// counter-clockwise seen from above) of the camera and of the target bin's centre; the
    /// camera's elevation seen from the box centre.
    public var cameraAzimuth: Float
    public var targetAzimuth: Float
    public var cameraElevation: Float
    /// The target ring and bin (on the side the views saw least: `Coverage.hint`) and its view count.
    public var ring: Int32
    public var bin: Int32
    public var targetCount: UInt32
    /// ring minus the camera's current ring: > 0 go higher, < 0 go lower, 0 stay.
    public var ringDelta: Int32
}

/// How much of a box has been seen, and from where: per-face counts compatible with the
/// reference object-capture app, sub-face cells, and a view-direction dial.
///
/// Not thread-safe (one thread at a time). The corresponding C object is `ck_coverage`.
public final class Coverage {
    public let options: CoverageOptions
    /// The counter belongs to a session (`ck_session_coverage` hands it out borrowed).
    public internal(set) var isOwnedBySession = false
    public private(set) var box: Box
    public private(set) var views: UInt32 = 0
    /// The last view was from inside the box (the event fires once per spell).
    private var inside = false
    private var counts = [UInt32](repeating: 0, count: 6)
    private var completed = [Bool](repeating: false, count: 6)
    private var allCompleted = false
    private var cells: [UInt32]
    private var cellStamp: [UInt32]
    private var dial: [UInt32]
    private var ringCompleted: [Bool]
    private var events = EventQueue()
    /// The cell hit by each ray of the grid (scratch, reused across views).
    private var gridCells: [Int32]

    /// - Throws: `invalidArgument` for options out of range.
    public init(box: Box, options: CoverageOptions = CoverageOptions()) throws(CaptureKitError) {
        try options.validate()
        self.options = options
        self.box = box
        let n = Int(options.cellsPerSide)
        cells = [UInt32](repeating: 0, count: 6 * n * n)
        cellStamp = cells
        dial = [UInt32](repeating: 0, count: Int(options.azimuthBins) * Int(options.elevationRings))
        ringCompleted = [Bool](repeating: false, count: Int(options.elevationRings))
        gridCells = [Int32](repeating: -1, count: Int(options.gridWidth) * Int(options.gridHeight))
    }

    public var cellCount: Int { cells.count }
    public var dialCount: Int { dial.count }
    public var cellCounts: [UInt32] { cells }
    public var dialCounts: [UInt32] { dial }
    public var pendingEvents: Int { events.count }

    /// The oldest queued event, removed from the queue; nil when empty.
    public func nextEvent() -> GuidanceEvent? { events.pop() }

    /// Re-binds to an edited box; every count is kept (they follow the box's faces and frame).
    public func setBox(_ box: Box) { self.box = box }

    /// Forgets every view, count and queued event; keeps the box and the options.
    public func reset() {
        views = 0
        inside = false
        for i in 0..<6 { counts[i] = 0; completed[i] = false }
        allCompleted = false
        for i in cells.indices { cells[i] = 0; cellStamp[i] = 0 }
        for i in dial.indices { dial[i] = 0 }
        for i in ringCompleted.indices { ringCompleted[i] = false }
        events.removeAll()
    }

    /// Adds one captured view: the image-centre ray (pixel (width/2, height/2)) gives its
    /// nearest face +1 (`Ray.intersect(box:)`: a camera inside the box counts its exit face);
    /// the ray grid marks the cells it hits; the dial bin of the direction the box centre is seen
    /// from gets +1 when the centre projects into the image.
    /// - Returns: the face the centre ray hit, −1 on a miss.
    /// - Throws: `invalidArgument` for a non-finite timestamp. Nothing changes when it throws.
    @discardableResult
    public func addView(pose: Pose, intrinsics k: Intrinsics, timestamp: Double) throws(CaptureKitError) -> Int32 {
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite (\(timestamp))") }
        let centre = try Ray(pixelU: Float(k.width) / 2, v: Float(k.height) / 2, pose: pose, intrinsics: k)
        let grid: Intrinsics? = options.gridWidth > 0 ? try k.scaled(width: options.gridWidth, height: options.gridHeight) : nil
        if box.contains(pose.t) && !options.countInsideViews {
            // Once per spell inside, not every frame.
            if !inside { events.push(GuidanceEvent(code: .insideBox, timestamp: timestamp)) }
            inside = true
            return -1
        }
        inside = false
        views &+= 1
        let face = centre.intersect(box: box)?.face ?? -1
        if face >= 0 { countFace(Int(face), at: timestamp) }
        if let grid { markCells(pose: pose, grid: grid) }
        markDial(pose: pose, intrinsics: k, at: timestamp)
        return face
    }

    private func countFace(_ f: Int, at t: Double) {
        counts[f] = counts[f] &+ (counts[f] == .max ? 0 : 1)
        guard counts[f] >= options.goal, !completed[f] else { return }
        completed[f] = true
        events.push(GuidanceEvent(code: .sideCompleted, index: Int32(f), timestamp: t, value: Float(counts[f])))
        if !allCompleted && (0..<6).allSatisfy({ options.faceMask & (1 << UInt32($0)) == 0 || completed[$0] }) {
            allCompleted = true
            events.push(GuidanceEvent(code: .allSidesCompleted, timestamp: t, value: Float(views)))
        }
    }

    private func markCells(pose: Pose, grid: Intrinsics) {
        let caster = BoxRaycaster(pose: pose, intrinsics: grid, box: box)
        let camera = box.toLocal(direction: pose.t - box.center)
        let stamp = views
        gridCells.withUnsafeMutableBufferPointer { rayCells in
            let hits = caster.castGridCells(cellsPerSide: Int(options.cellsPerSide), camera: camera, halfSize: box.halfSize,
                                            cells: rayCells)
            cells.withUnsafeMutableBufferPointer { counts in
                cellStamp.withUnsafeMutableBufferPointer { stamps in
                    // Each cell counts a view once, however many of its rays hit it.
                    for j in 0..<min(hits, rayCells.count) {
                        let i = Int(rayCells[j])
                        guard i >= 0 && i < counts.count && stamps[i] != stamp else { continue }
                        stamps[i] = stamp
                        if counts[i] < .max { counts[i] += 1 }
                    }
                }
            }
        }
    }

    /// The dial bin and ring of a box-frame direction from the box centre to a camera.
    private func dialPosition(_ d: Vec3) -> (azimuth: Float, elevation: Float, bin: Int, ring: Int) {
        let azimuth = atan2(-d.x, -d.z)
        let elevation = atan2(d.y, (d.x * d.x + d.z * d.z).squareRoot())
        let bins = Int(options.azimuthBins), rings = Int(options.elevationRings)
        let width = 2 * Float.pi / Float(bins)
        var bin = Int(clampedFinite((azimuth / width).rounded())) % bins
        if bin < 0 { bin += bins }
        let lo = options.elevationMinDeg * .pi / 180, hi = options.elevationMaxDeg * .pi / 180
        let ring = min(rings - 1, max(0, Int(clampedFinite(((elevation - lo) / (hi - lo) * Float(rings)).rounded(.down)))))
        return (azimuth, elevation, bin, ring)
    }

    private func markDial(pose: Pose, intrinsics k: Intrinsics, at t: Double) {
        // The box centre must be in front of the camera and project into the image.
        guard let px = k.project(camera: pose.toCamera(box.center)),
              px.x >= 0, px.x <= Float(k.width), px.y >= 0, px.y <= Float(k.height) else { return }
        let d = box.toLocal(direction: pose.t - box.center)
        let pos = dialPosition(d)
        let bins = Int(options.azimuthBins)
        let i = pos.ring * bins + pos.bin
        dial[i] = dial[i] == .max ? .max : dial[i] + 1
        if !ringCompleted[pos.ring] && dial[(pos.ring * bins)..<((pos.ring + 1) * bins)].allSatisfy({ $0 > 0 }) {
            ringCompleted[pos.ring] = true
            events.push(GuidanceEvent(code: .ringCompleted, index: Int32(pos.ring), timestamp: t))
        }
    }

    // MARK: Queries

    /// - Throws: `invalidArgument` for a face outside 0...5.
    public func face(_ f: Int) throws(CaptureKitError) -> FaceCoverage {
        guard (0..<6).contains(f) else { throw .invalidArgument("face must be 0...5 (got \(f))") }
        let p = Float(min(counts[f], options.goal)) / Float(options.goal)
        let n = Int(options.cellsPerSide) * Int(options.cellsPerSide)
        let seen = cells[(f * n)..<((f + 1) * n)].reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        return FaceCoverage(count: counts[f], goal: options.goal, progress: p, color: Vec3(1 - p, 1, p),
                            opacity: 0.25 + 0.5 * p, cellFraction: Float(seen) / Float(n), completed: counts[f] >= options.goal)
    }

    public var summary: CoverageSummary {
        var done: UInt32 = 0, total = 0, progress: Float = 0, seen = 0, cellTotal = 0
        let n = Int(options.cellsPerSide) * Int(options.cellsPerSide)
        for f in 0..<6 where options.faceMask & (1 << UInt32(f)) != 0 {
            total += 1
            if counts[f] >= options.goal { done += 1 }
            progress += Float(min(counts[f], options.goal)) / Float(options.goal)
            cellTotal += n
            seen += cells[(f * n)..<((f + 1) * n)].reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        }
        let filled = dial.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        return CoverageSummary(views: views, facesCompleted: done, allCompleted: Int(done) == total,
                               completion: total > 0 ? progress / Float(total) : 0,
                               dialFraction: Float(filled) / Float(dial.count),
                               cellFraction: cellTotal > 0 ? Float(seen) / Float(cellTotal) : 0)
    }

    /// The four side faces with the azimuth (dial convention) they are seen from.
    private static let sides: [(face: Int, azimuth: Float)] = [(0, 0), (1, .pi / 2), (5, .pi), (2, -.pi / 2)]

    /// How much of face `f` the captured views saw: the sum over its cells of
    /// min(views that saw the cell, goal); without cells (a 0 × 0 grid), min(centre-ray hits, goal).
    /// Then, to order faces that tie, its centre-ray progress min(centre-ray hits, goal).
    private func seen(_ f: Int) -> (cells: UInt64, centre: UInt32) {
        let centre = min(counts[f], options.goal)
        guard options.gridWidth > 0 else { return (UInt64(centre), centre) }
        let n = Int(options.cellsPerSide) * Int(options.cellsPerSide)
        return (cells[(f * n)..<((f + 1) * n)].reduce(UInt64(0)) { $0 + UInt64(min($1, options.goal)) }, centre)
    }

    /// Where the camera should go next: toward the side the captured views saw least.
    ///
    /// The side: of the side faces in the face mask (all four if none is), the one with the
    /// least `seen` (ties: the fewer centre-ray hits up to the goal, then the nearest to the
    /// camera's azimuth, then front, left, back, right).
    /// The ring: the highest when the top face is in the mask and seen less than that side (the
    /// same order), else the ring of a level view (elevation 0, clamped to the rings' range),
    /// which sees the side face on. The bin: of the side's sector — the bins centred less than
    /// 45° from the side's azimuth, or the nearest bin if none is — the one with the fewest
    /// views in that ring (ties: the nearest to the side's azimuth, then to the camera's).
    public func hint(pose: Pose) -> CoverageHint {
        let d = box.toLocal(direction: pose.t - box.center)
        let cam = dialPosition(d)
        let bins = Int(options.azimuthBins), rings = Int(options.elevationRings)
        let width = 2 * Float.pi / Float(bins)
        let masked = Coverage.sides.filter { options.faceMask & (1 << UInt32($0.face)) != 0 }
        var side = (face: 0, azimuth: Float(0)), sideSeen = (cells: UInt64.max, centre: UInt32.max), sideTurn = Float.infinity
        for s in masked.isEmpty ? Coverage.sides : masked {
            let v = seen(s.face), turn = abs(wrapAngle(s.azimuth - cam.azimuth))
            if v < sideSeen || (v == sideSeen && turn < sideTurn) { side = s; sideSeen = v; sideTurn = turn }
        }
        // Bins exactly 45° off (within rounding) belong to neither side.
        var sector = (0..<bins).filter { abs(wrapAngle(Float($0) * width - side.azimuth)) < .pi / 4 - 1e-4 }
        if sector.isEmpty {
            let nearest = (0..<bins).min { abs(wrapAngle(Float($0) * width - side.azimuth)) < abs(wrapAngle(Float($1) * width - side.azimuth)) } ?? 0
            sector = [nearest]
        }
        let topFirst = options.faceMask & (1 << 4) != 0 && seen(4) < sideSeen
        let bestRing = topFirst ? rings - 1 : dialPosition(Vec3(0, 0, -1)).ring
        var bestBin = sector[0], bestCount = UInt32.max, bestOffset = Float.infinity, bestTurn = Float.infinity
        for b in sector {
            let count = dial[bestRing * bins + b]
            let offset = abs(wrapAngle(Float(b) * width - side.azimuth)), turn = abs(wrapAngle(Float(b) * width - cam.azimuth))
            if count < bestCount || (count == bestCount && (offset < bestOffset || (offset == bestOffset && turn < bestTurn))) {
                bestBin = b; bestCount = count; bestOffset = offset; bestTurn = turn
            }
        }
        let target = wrapAngle(Float(bestBin) * width)
        return CoverageHint(moveAngle: wrapAngle(-(target - cam.azimuth)), cameraAzimuth: cam.azimuth, targetAzimuth: target,
                            cameraElevation: cam.elevation, ring: Int32(bestRing), bin: Int32(bestBin),
                            targetCount: bestCount, ringDelta: Int32(bestRing - cam.ring))
    }
}

/// A finite value clamped to ±2^30 (so that `Int(_:)` cannot trap); NaN becomes 0.
@inline(__always) func clampedFinite(_ x: Float) -> Float {
    x.isNaN ? 0 : max(-1_073_741_824, min(1_073_741_824, x))
}
