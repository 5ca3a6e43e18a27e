import Foundation
import Testing
@testable import CaptureKitCore

/// Issue 11's gates: the object partly out of frame, the distance to the box without depth, low
/// light and the limited-tracking reasons.
@Suite struct CaptureGateTests {
    static let identity = Pose(x: Vec3(1, 0, 0), y: Vec3(0, 1, 0), z: Vec3(0, 0, 1), t: .zero)

    // MARK: Box in frame

    /// Head-on cases whose answer is known by hand: a 0.5 m cube 2 m ahead of a camera at the
    /// origin looking down −z projects to the square of its near face, side 100 · 0.5 / 1.75 =
    /// 28.6 px, centred on the principal point. Moving the principal point to the image's left
    /// edge (cx = 0) leaves exactly half of it in the image; to the top-left corner, a quarter.
    @Test func headOnFractionsAreExact() throws {
        let box = try Box(center: Vec3(0, 0, -2), size: Vec3(0.5, 0.5, 0.5), yaw: 0)
        let inside = try Intrinsics(fx: 100, fy: 100, cx: 50, cy: 50, width: 100, height: 100)
        let half = try Intrinsics(fx: 100, fy: 100, cx: 0, cy: 50, width: 100, height: 100)
        let quarter = try Intrinsics(fx: 100, fy: 100, cx: 0, cy: 0, width: 100, height: 100)
        #expect(abs(box.fractionInFrame(pose: Self.identity, intrinsics: inside) - 1) < 1e-6)
        #expect(abs(box.fractionInFrame(pose: Self.identity, intrinsics: half) - 0.5) < 1e-5)
        #expect(abs(box.fractionInFrame(pose: Self.identity, intrinsics: quarter) - 0.25) < 1e-5)
        // The near face's corners by hand: (±0.25, ±0.25, −1.75) → u = 50 ± 100·0.25/1.75.
        let near = try #require(inside.project(camera: Vec3(0.25, 0.25, -1.75)))
        #expect(abs(Double(near.x) - (50 + 100 * 0.25 / 1.75)) < 1e-4 && abs(Double(near.y) - (50 - 100 * 0.25 / 1.75)) < 1e-4)
        #expect(inside.project(camera: Vec3(0, 0, 1)) == nil)
    }

    /// A box wholly behind the camera has nothing in the image; a camera inside a box sees a
    /// silhouette (clipped at the near plane) far larger than the image.
    @Test func behindTheCameraOrInsideTheBoxIsOut() throws {
        let k = try Intrinsics(fx: 100, fy: 100, cx: 50, cy: 50, width: 100, height: 100)
        let behind = try Box(center: Vec3(0, 0, 2), size: Vec3(0.5, 0.5, 0.5), yaw: 0.4)
        #expect(behind.fractionInFrame(pose: Self.identity, intrinsics: k) == 0)
        let around = try Box(center: Vec3(0.1, 0, 0), size: Vec3(1, 1, 1), yaw: 0.2)
        #expect(around.fractionInFrame(pose: Self.identity, intrinsics: k) < 0.01)
        // Reaching behind the camera: the part in front still spans far beyond the image.
        let straddling = try Box(center: Vec3(0.6, 0, -0.5), size: Vec3(0.4, 0.4, 2), yaw: 0)
        let f = straddling.fractionInFrame(pose: Self.identity, intrinsics: k)
        #expect(f >= 0 && f < 0.05, "\(f)")
    }

    /// Oblique views against an independent estimate in Double: the silhouette of a convex box
    /// is the set of pixel rays that hit it (slab test in the box frame, built from centre, size
    /// and yaw, not from the library's corners or projection), counted on a fine pixel grid over
    /// an area three times the image on each side.
    @Test func obliqueFractionsMatchARaySampledSilhouette() throws {
        var rng = SplitMix64(seed: 1111)
        let k = try Intrinsics(fx: 120, fy: 110, cx: 62, cy: 45, width: 128, height: 96)
        var checked = 0, partial = 0
        for caseIndex in 0..<40 {
            let box = try Box(center: Vec3(Float(rng.double(-0.3...0.3)), Float(rng.double(0.1...0.6)), Float(rng.double(-0.3...0.3))),
                              size: Vec3(Float(rng.double(0.2...0.8)), Float(rng.double(0.2...0.8)), Float(rng.double(0.2...0.8))),
                              yaw: Float(rng.double(-3...3)))
            let eye = Vec3(Float(rng.double(-2...2)), Float(rng.double(0.5...1.8)), Float(rng.double(-2...2)))
            guard length(eye - box.center) > 1.4 else { continue }
            let aim = box.center + Vec3(Float(rng.double(-0.5...0.5)), Float(rng.double(-0.4...0.4)), Float(rng.double(-0.5...0.5)))
            let pose = lookAt(eye: eye, target: aim)
            // Every corner well in front, so the silhouette lies within the sampled area.
            guard box.corners.allSatisfy({ pose.toCamera($0).z < -0.5 }) else { continue }
            let expected = sampledFraction(box: box, pose: pose, k: k)
            guard expected.total > 200 else { continue }
            let got = Double(box.fractionInFrame(pose: pose, intrinsics: k))
            #expect(abs(got - expected.fraction) < 0.02, "case \(caseIndex): \(got) vs sampled \(expected.fraction)")
            checked += 1
            if expected.fraction > 0.05 && expected.fraction < 0.95 { partial += 1 }
        }
        #expect(checked >= 15 && partial >= 3, "checked \(checked), partial \(partial)")
    }

    /// Hits of pixel rays on a grid of step 0.5 px over [−W, 2W] × [−H, 2H]: the fraction of them
    /// inside [0, W] × [0, H], all in Double.
    func sampledFraction(box: Box, pose: Pose, k: Intrinsics) -> (fraction: Double, total: Int) {
        let c = SIMD3<Double>(box.center), h = SIMD3<Double>(box.size) / 2
        let cy = cos(Double(box.yaw)), sy = sin(Double(box.yaw))
        // World → box frame: the inverse of R_y(yaw) (docs/DESIGN.md#the-box: rows [cos,0,sin],[0,1,0],[−sin,0,cos]).
        func local(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(cy * v.x - sy * v.z, v.y, sy * v.x + cy * v.z) }
        let o = local(SIMD3<Double>(pose.t) - c)
        let rx = SIMD3<Double>(pose.x), ry = SIMD3<Double>(pose.y), rz = SIMD3<Double>(pose.z)
        let w = Double(k.width), hh = Double(k.height)
        var inside = 0, total = 0
        let step = 0.5
        var v = -hh + step / 2
        while v < 2 * hh {
            var u = -w + step / 2
            while u < 2 * w {
                // docs/DESIGN.md#intrinsics-and-pixels: d_cam = ((u − cx)/fx, −(v − cy)/fy, −1).
                let dc = SIMD3<Double>((u - Double(k.cx)) / Double(k.fx), -(v - Double(k.cy)) / Double(k.fy), -1)
                let d = local(rx * dc.x + ry * dc.y + rz * dc.z)
                var t0 = 0.0, t1 = Double.infinity
                for i in 0..<3 {
                    if abs(d[i]) < 1e-15 {
                        if abs(o[i]) > h[i] { t0 = 1; t1 = 0 }
                    } else {
                        let a = (-h[i] - o[i]) / d[i], b = (h[i] - o[i]) / d[i]
                        t0 = max(t0, min(a, b)); t1 = min(t1, max(a, b))
                    }
                }
                if t0 <= t1 {
                    total += 1
                    if u >= 0 && u <= w && v >= 0 && v <= hh { inside += 1 }
                }
                u += step
            }
            v += step
        }
        return (total > 0 ? Double(inside) / Double(total) : 0, total)
    }

    /// The scheduler raises the condition (value: the fraction); in the object-capture preset it
    /// blocks only when the object is mostly outside the image (less than half of the silhouette
    /// in, covering less than half of the image) and is advice otherwise (since 0.2: 0.1 blocked
    /// on every raise, which refused 90 % of real operators' frames); without intrinsics, or with
    /// min_box_in_frame 0, it is off.
    @Test func outOfFrameGate() throws {
        let box = try Box(center: Vec3(0, 0, -2), size: Vec3(0.5, 0.5, 0.5), yaw: 0)
        let half = try Intrinsics(fx: 100, fy: 100, cx: 0, cy: 50, width: 100, height: 100)
        let quarter = try Intrinsics(fx: 100, fy: 100, cx: 0, cy: 0, width: 100, height: 100)
        let twoThirds = try Intrinsics(fx: 100, fy: 100, cx: 5, cy: 50, width: 100, height: 100)
        let closeUp = try Intrinsics(fx: 1000, fy: 1000, cx: 0, cy: 0, width: 100, height: 100)
        func runWith(_ o: SchedulerOptions, _ k: Intrinsics?) throws -> Run {
            var o = o
            o.boxViewAngleDeg = 0
            return try run(try Scheduler(options: o), frames(duration: 5, box: box) { _ in Self.identity }.map { var f = $0; f.intrinsics = k; return f })
        }
        let flag = EventCode.objectOutOfFrame.flag
        let r = try runWith(SchedulerOptions(), quarter)
        #expect(r.guidance.allSatisfy { $0.flags & flag != 0 && $0.blocked & flag != 0 && !$0.capture })
        let e = try #require(r.events.first { $0.code == .objectOutOfFrame })
        #expect(abs(e.value - 0.25) < 1e-5 && abs(e.timestamp - 100.3) < 1.01 / 60)
        // Two thirds in, or a quarter in while filling the image (a close view): advice.
        for k in [twoThirds, closeUp] {
            let advice = try runWith(SchedulerOptions(), k)
            #expect(advice.guidance.allSatisfy { $0.flags & flag != 0 && $0.blocked & flag == 0 })
            #expect(advice.codes.contains(.objectOutOfFrame) && advice.captureTimes.count == 1)
        }
        #expect(!(try runWith(SchedulerOptions(), nil)).codes.contains(.objectOutOfFrame))
        var off = SchedulerOptions(); off.minBoxInFrame = 0
        #expect(!(try runWith(off, half)).codes.contains(.objectOutOfFrame))
        var lenient = SchedulerOptions(); lenient.minBoxInFrame = 0.4
        #expect(!(try runWith(lenient, half)).codes.contains(.objectOutOfFrame))
        #expect(SchedulerOptions(preset: .roomScan).minBoxInFrame == 0)
    }

    // MARK: Distance without depth

    /// Without depth the distance is the camera's distance to the nearest point of the box: in
    /// front of a face it is the distance to that face's plane, off a corner the distance to
    /// the corner, inside 0. It feeds depth_min / depth_max; depth, when given, wins.
    @Test func boxDistanceFeedsTooCloseAndTooFar() throws {
        let box = try Box(center: Vec3(0, 0.3, 0), size: Vec3(0.4, 0.6, 0.8), yaw: 0)
        // In front of the front face (z = −0.4): 0.1 m away.
        #expect(abs(box.distance(to: Vec3(0.05, 0.3, -0.5)) - 0.1) < 1e-6)
        // Off the corner (0.2, 0.6, −0.4), by hand.
        let p = Vec3(1.2, 1.6, -3.4)
        let byHand = (1.0 * 1.0 + 1.0 * 1.0 + 3.0 * 3.0).squareRoot()   // 3.32 m: beyond depth_max 3
        #expect(abs(Double(box.distance(to: p)) - byHand) < 1e-5)
        #expect(box.distance(to: Vec3(0.1, 0.2, 0.3)) == 0)
        // Turned by 90°: its 0.8 m side now runs along x.
        let turned = try Box(center: Vec3(0, 0.3, 0), size: Vec3(0.4, 0.6, 0.8), yaw: .pi / 2)
        #expect(abs(turned.distance(to: Vec3(0.9, 0.3, 0)) - 0.5) < 1e-5)

        func first(_ eye: Vec3, _ code: EventCode, depth: Float? = nil) throws -> GuidanceEvent? {
            let s = try Scheduler()
            let pose = lookAt(eye: eye, target: box.center)
            var values = [Float](repeating: depth ?? 0, count: 16 * 12)
            var r = Run()
            try values.withUnsafeMutableBytes { raw in
                let map = try f32Map(UnsafeRawBufferPointer(raw), width: 16, height: 12)
                for f in frames(duration: 2, box: box, { _ in pose }) {
                    var f = f
                    if depth != nil { f.depth = map }
                    r.guidance.append(try s.update(f))
                    while let e = s.nextEvent() { r.events.append(e) }
                }
            }
            return r.events.first { $0.code == code }
        }
        let close = try #require(try first(Vec3(0.05, 0.3, -0.5), .tooClose))
        #expect(abs(close.value - 0.1) < 1e-5)
        // Measured from the box (a bound on the object) it is advice, unless inside the box.
        for (eye, blocks) in [(Vec3(0.05, 0.3, -0.5), false), (Vec3(0.05, 0.35, 0.1), true)] {
            let g = try Scheduler().update(SchedulerFrame(timestamp: 1, pose: lookAt(eye: eye, target: box.center), box: box))
            #expect(g.flags & EventCode.tooClose.flag != 0 && (g.blocked & EventCode.tooClose.flag != 0) == blocks)
        }
        let far = try #require(try first(p, .tooFar))
        #expect(abs(Double(far.value) - byHand) < 1e-5)
        #expect(try first(Vec3(0.05, 0.35, 0.1), .tooClose)?.value == 0)    // inside the box
        #expect(try first(Vec3(0.05, 0.3, -0.5), .tooClose, depth: 1.0) == nil)  // depth says 1 m
        #expect(try first(p, .tooFar, depth: 1.0) == nil)
        #expect(try first(Vec3(0, 0.3, -1.4), .tooClose) == nil && first(Vec3(0, 0.3, -1.4), .tooFar) == nil)
    }

    // MARK: Low light

    /// Mean luma of images with a known answer, sampled on the every-4th-pixel grid.
    @Test func meanLumaOfKnownImages() throws {
        func mean(_ px: [UInt8], _ w: Int, _ h: Int, _ stride: Int, _ f: ImageFormat) throws -> Float {
            try px.withUnsafeBytes { try Luma.mean(pixels: $0, width: w, height: h, stride: stride, format: f) }
        }
        #expect(abs(try mean([UInt8](repeating: 51, count: 20 * 10), 20, 10, 20, .gray8) - 0.2) < 1e-6)
        // Bright only on the sampled grid (x, y multiples of 4): the sample sees 200 everywhere.
        var grid = [UInt8](repeating: 0, count: 17 * 9)
        for y in stride(from: 0, to: 9, by: 4) { for x in stride(from: 0, to: 17, by: 4) { grid[y * 17 + x] = 200 } }
        #expect(abs(try mean(grid, 17, 9, 17, .gray8) - 200.0 / 255) < 1e-6)
        // Left half 0, right half 255 on an 8-wide image: samples at x = 0 and 4 → mean 0.5.
        var split = [UInt8](repeating: 0, count: 8 * 8)
        for y in 0..<8 { for x in 4..<8 { split[y * 8 + x] = 255 } }
        #expect(abs(try mean(split, 8, 8, 8, .gray8) - 0.5) < 1e-6)
        // Pure red, green, blue: the BT.601 weights; alpha is ignored; padded rows are skipped.
        for (i, weight) in [0.299, 0.587, 0.114].enumerated() {
            var rgb = [UInt8](repeating: 0, count: 6 * 5 * 3)
            for p in 0..<30 { rgb[p * 3 + i] = 255 }
            #expect(abs(Double(try mean(rgb, 6, 5, 18, .rgb8)) - weight) < 1e-6)
            var rgba = [UInt8](repeating: 0, count: 5 * 28)     // stride 28 > 6 · 4
            for y in 0..<5 { for x in 0..<6 { rgba[y * 28 + x * 4 + i] = 255; rgba[y * 28 + x * 4 + 3] = 9 } ; for b in 24..<28 { rgba[y * 28 + b] = 255 } }
            #expect(abs(Double(try mean(rgba, 6, 5, 28, .rgba8)) - weight) < 1e-6)
        }
        #expect(throws: CaptureKitError.self) { try mean([0, 0], 2, 1, 2, .gray16) }
        #expect(throws: CaptureKitError.self) { try mean([0, 0, 0], 2, 2, 2, .gray8) }
    }

    /// mean_luma below min_luma raises "more light needed" (value: the luma); it advises, never
    /// blocks, in both presets; 0 turns it off.
    @Test func lowLightGate() throws {
        let box = try Box(center: Vec3(0, 0.4, 0), size: Vec3(0.6, 0.6, 0.6), yaw: 0.3)
        let still = lookAt(eye: Vec3(0, 1.2, -2), target: box.center)
        func runWith(_ o: SchedulerOptions, luma: Float?) throws -> Run {
            try run(try Scheduler(options: o), frames(duration: 4, box: box) { _ in still }.map { var f = $0; f.meanLuma = luma; return f })
        }
        let dark = try runWith(SchedulerOptions(), luma: 0.1)
        #expect(dark.guidance.allSatisfy { $0.flags & EventCode.lowLight.flag != 0 })
        #expect(dark.events.first { $0.code == .lowLight }?.value == 0.1)
        #expect(dark.captureTimes.count == 1)
        #expect(try runWith(SchedulerOptions(), luma: 0.15).guidance.allSatisfy { $0.flags & EventCode.lowLight.flag == 0 })
        #expect(try runWith(SchedulerOptions(), luma: nil).guidance.allSatisfy { $0.flags & EventCode.lowLight.flag == 0 })
        var off = SchedulerOptions(); off.minLuma = 0
        #expect(try runWith(off, luma: 0).guidance.allSatisfy { $0.flags & EventCode.lowLight.flag == 0 })
        #expect(SchedulerOptions().blockingFlags & EventCode.lowLight.flag == 0)
        #expect(SchedulerOptions(preset: .roomScan).blockingFlags & EventCode.lowLight.flag == 0)
    }

    // MARK: Tracking reasons

    /// Every reason sets its own flag beside TRACKING_LIMITED, prompts its own text instead of
    /// the generic one and blocks; a reason with normal tracking is ignored.
    @Test(arguments: TrackingReason.allCases)
    func trackingReasons(reason: TrackingReason) throws {
        let still = lookAt(eye: Vec3(0, 1.2, -2), target: Vec3(0, 0.4, 0))
        let limited = frames(duration: 4, tracking: .limited) { _ in still }.map { var f = $0; f.trackingReason = reason; return f }
        let r = try run(try Scheduler(), limited)
        let trackingCodes: Set<EventCode> = [.trackingLimited, .trackingInitializing, .trackingExcessiveMotion,
                                             .trackingInsufficientFeatures, .trackingRelocalizing]
        let expected: [TrackingReason: (EventCode, String)] = [
            .initializing: (.trackingInitializing, "Move the device slowly to start"),
            .excessiveMotion: (.trackingExcessiveMotion, "Slow down: moving too fast for tracking"),
            .insufficientFeatures: (.trackingInsufficientFeatures, "Point at a more detailed surface, or add light"),
            .relocalizing: (.trackingRelocalizing, "Return to where you were"),
        ]
        #expect(r.guidance.allSatisfy { $0.flags & EventCode.trackingLimited.flag != 0 && !$0.capture })
        if let (code, text) = expected[reason] {
            #expect(EventCode(trackingReason: reason) == code)
            #expect(code.rawValue == 17 + reason.rawValue && code.flag == UInt32(1) << UInt32(16 + reason.rawValue))
            #expect(r.guidance.allSatisfy { $0.flags & GuidanceFlags.trackingReasons == code.flag })
            #expect(r.codes.intersection(trackingCodes) == [code], "\(r.codes)")
            #expect(String(cString: UnsafeRawPointer(code.text.utf8Start).assumingMemoryBound(to: CChar.self)) == text)
        } else {
            #expect(EventCode(trackingReason: reason) == nil)
            #expect(r.guidance.allSatisfy { $0.flags & GuidanceFlags.trackingReasons == 0 })
            #expect(r.codes.intersection(trackingCodes) == [.trackingLimited])
        }
        let normal = frames(duration: 4) { _ in still }.map { var f = $0; f.trackingReason = reason; return f }
        #expect(try run(try Scheduler(), normal).guidance.allSatisfy { $0.flags & (GuidanceFlags.trackingReasons | EventCode.trackingLimited.flag) == 0 })
    }
}
