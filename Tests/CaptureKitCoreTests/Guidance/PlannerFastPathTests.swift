import Testing
@testable import CaptureKitCore

/// The next-best view's shared and vectorised steps, each against the plain computation it
/// replaces: the frontier steps against the voxel grid read neighbour by neighbour, and the
/// two-step splat (`PlannerMemory.gather`) against splatting each sample's square.
@Suite struct PlannerFastPathTests {
    /// Per element, the neighbours (bit o: +x, −x, +y, −y, +z, −z) that lie in the grid, are
    /// unknown and border a free voxel, read from the grid one neighbour at a time.
    static func expectedSteps(_ map: SurfaceMap) -> [UInt8] {
        let d = map.dims
        return map.withVoxels { st, _ in
            func state(_ x: Int, _ y: Int, _ z: Int) -> UInt8? {
                guard x >= 0, y >= 0, z >= 0, x < d.x, y < d.y, z < d.z else { return nil }
                return st[(z * d.y + y) * d.x + x] & 3
            }
            let steps: [SIMD3<Int>] = [SIMD3(1, 0, 0), SIMD3(-1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, -1, 0), SIMD3(0, 0, 1), SIMD3(0, 0, -1)]
            return map.elements.map { e in
                let c = map.coordinates(ofIndex: Int(e.voxel))
                var m: UInt8 = 0
                for (o, s) in steps.enumerated() {
                    let q = c &+ s
                    guard state(q.x, q.y, q.z) == VoxelState.unknown.rawValue else { continue }
                    if steps.contains(where: { state(q.x + $0.x, q.y + $0.y, q.z + $0.z) == VoxelState.free.rawValue }) { m |= 1 << o }
                }
                return m
            }
        }
    }

    /// Elements whose steps differ (a count missing on either side counts whole).
    static func differing(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).filter { $0 != $1 }.count + abs(a.count - b.count)
    }

    /// The synthetic scene's target from an orbit of 256 x 192 LiDAR-like frames: after every
    /// fused frame and every captured view (which removes elements seen through), the map's
    /// frontier steps are those of its grid as it is then. Frames fused again change the free
    /// space without new surface, so a stale cache would show.
    @Test func frontierStepsFollowTheGrid() throws {
        let scene = SyntheticScene(seed: 3)
        let k = try Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192)
        let box = try Box(center: scene.target.center, size: scene.target.size + 0.1, yaw: scene.target.yaw)
        let map = try SurfaceMap(box: box)
        var depth = [Float](repeating: 0, count: 256 * 192), conf = [UInt8](repeating: 0, count: 256 * 192)
        var checked = 0, withFrontier = 0
        for i in 0..<8 {
            let pose = orbitPose(center: box.center, radius: 1.2, height: 0.5, azimuth: Float(i) * 0.7)
            depth.withUnsafeMutableBufferPointer { d in
                conf.withUnsafeMutableBufferPointer { c in scene.renderDepth(pose: pose, intrinsics: k, frame: UInt64(i), depth: d, confidence: c) }
            }
            for _ in 0..<2 {
                depth.withUnsafeBufferPointer { map.fuse(metres: $0, confidence: nil, intrinsics: k, pose: pose) }
                let steps = map.frontierSteps()
                #expect(PlannerFastPathTests.differing(steps, PlannerFastPathTests.expectedSteps(map)) == 0, "after frame \(i)")
                checked += 1
                withFrontier += steps.filter { $0 != 0 }.count
            }
            if i % 2 == 1 {
                map.addView(pose: pose, intrinsics: k, image: nil, timestamp: Double(i))
                _ = map.figures
                #expect(PlannerFastPathTests.differing(map.frontierSteps(), PlannerFastPathTests.expectedSteps(map)) == 0, "after the view at frame \(i)")
            }
        }
        #expect(checked == 16 && withFrontier > 1000, "elements beside the frontier: \(withFrontier)")
    }

    /// Once a next view has been asked for, a captured view leaves the frontier steps computed
    /// for the next one (which then only reads them); before that, and after a frame fused since
    /// the view, the planning call computes them. A second map fed the same frames and views,
    /// never asked for a next view, shows that the views' event checks did not need them here; a
    /// third, asked through `hint` (`ck_surface_suggest`, which plans one), is served the same.
    @Test func aViewComputesTheStepsOnceTheNextViewIsAsked() throws {
        let scene = SyntheticScene(seed: 5)
        let k = try Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192)
        let box = try Box(center: scene.target.center, size: scene.target.size + 0.1, yaw: scene.target.yaw)
        let map = try SurfaceMap(box: box), control = try SurfaceMap(box: box), viaHint = try SurfaceMap(box: box)
        var depth = [Float](repeating: 0, count: 256 * 192), conf = [UInt8](repeating: 0, count: 256 * 192)
        func capture(_ i: Int) -> Pose {
            let pose = orbitPose(center: box.center, radius: 1.2, height: 0.5, azimuth: Float(i) * 0.9)
            depth.withUnsafeMutableBufferPointer { d in
                conf.withUnsafeMutableBufferPointer { c in scene.renderDepth(pose: pose, intrinsics: k, frame: UInt64(i), depth: d, confidence: c) }
            }
            for m in [map, control, viaHint] {
                depth.withUnsafeBufferPointer { m.fuse(metres: $0, confidence: nil, intrinsics: k, pose: pose) }
                m.addView(pose: pose, intrinsics: k, image: nil, timestamp: Double(i))
            }
            return pose
        }
        let first = capture(0)
        #expect(!map.frontierStepsCached, "no next view asked yet: the view leaves the steps to the planner")
        _ = map.nextBestView(from: first, intrinsics: k)
        _ = viaHint.hint(pose: first)
        for i in 1..<5 {
            let pose = capture(i)
            #expect(map.frontierStepsCached && viaHint.frontierStepsCached, "after view \(i)")
            #expect(!control.frontierStepsCached, "the control's view \(i) did not take them")
            #expect(PlannerFastPathTests.differing(map.frontierSteps(), PlannerFastPathTests.expectedSteps(map)) == 0, "after view \(i)")
            // The cache is this map's steps as they stand, not an earlier state's of the same size.
            #expect(PlannerFastPathTests.differing(viaHint.frontierSteps(), PlannerFastPathTests.expectedSteps(viaHint)) == 0, "hint, after view \(i)")
            _ = map.nextBestView(from: pose, intrinsics: k)
            _ = viaHint.hint(pose: pose)
        }
        depth.withUnsafeBufferPointer { map.fuse(metres: $0, confidence: nil, intrinsics: k, pose: first) }
        #expect(!map.frontierStepsCached, "a frame fused since the view")
    }

    /// Depth noise from many directions strews elements through the box: up to two samples per
    /// cell (one for the elements, one for the frontier) would each cost every candidate a
    /// projection. The planner's cells grow until at most `maxSamples` remain, and the next view
    /// is still a candidate with a gain. Filled to the element limit, the map with the planner's
    /// buffers stays under the 32 MiB the header states.
    @Test func strewnSurfaceIsSampledWithinTheBudget() throws {
        let k = try Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192)
        let box = try Box(center: Vec3(0, 0.2, 0), size: Vec3(0.4, 0.4, 0.4), yaw: 0)
        let map = try SurfaceMap(box: box)
        var rng = SplitMix64(seed: 11)
        var depth = [Float](repeating: 0, count: 256 * 192)
        var pose = orbitPose(center: box.center, radius: 0.9, height: 0, azimuth: 0)
        for i in 0..<36 {
            pose = orbitPose(center: box.center, radius: 0.9, height: rng.float(-0.5...0.7), azimuth: rng.float(-3...3))
            for p in depth.indices { depth[p] = rng.float(0.7...1.1) }
            depth.withUnsafeBufferPointer { map.fuse(metres: $0, confidence: nil, intrinsics: k, pose: pose) }
            if i % 8 == 7 { map.addView(pose: pose, intrinsics: k, image: nil, timestamp: Double(i)) }
        }
        let cellsBefore = map.planner.cellVoxels
        let next = map.nextBestView(from: pose, intrinsics: k)
        #expect(map.elements.count > 50_000 && map.elementsDropped > 0, "strewn elements: \(map.elements.count), \(map.elementsDropped) dropped")
        #expect(map.memoryBytes < 32 << 20, "\(map.memoryBytes) bytes")
        #expect(map.planner.count > 0 && map.planner.count <= PlannerMemory.maxSamples, "samples: \(map.planner.count)")
        #expect(map.planner.cellVoxels > max(cellsBefore, 4), "cells of \(map.planner.cellVoxels) voxels")
        #expect(next.candidates == 48 && next.gain > 0 && next.side >= 0, "\(next.candidates) candidates, gain \(next.gain)")
    }

    /// `gather` against the plain splat: random samples, each a depth at a pixel of the image,
    /// a splat size (1, 3 or 5 pixels square) and a buffer (the second: those facing the camera,
    /// which also go into the first); the minimum of every square over a pixel, per buffer.
    @Test func gatherEqualsSplattingEverySquare() throws {
        var rng = SplitMix64(seed: 7)
        let bw = 84
        for trial in 0..<200 {
            let zh = Int(rng.next() % 120) + 1, bh = zh + 4, plane = bw * bh
            var planes = [Float](repeating: .infinity, count: PlannerMemory.planes * plane)
            var expected = [[Float]](repeating: [Float](repeating: .infinity, count: plane), count: 2)
            var used = 0
            let samples = Int(rng.next() % 400)
            for _ in 0..<samples {
                let u = Int(rng.next() % 80) + 2, v = Int(rng.next() % UInt64(zh)) + 2
                let size = Int(rng.next() % 3), z = Float(rng.next() % 10_000) / 1000 + 0.01
                let facing = rng.next() % 2 == 0
                for buffer in 0..<(facing ? 2 : 1) {
                    let at = (3 + 2 * size + buffer) * plane + v * bw + u
                    planes[at] = min(planes[at], z)
                    used |= 1 << (2 * size + buffer)
                    for dy in -size...size {
                        for dx in -size...size {
                            let p = (v + dy) * bw + u + dx
                            expected[buffer][p] = min(expected[buffer][p], z)
                        }
                    }
                }
            }
            if trial % 10 == 0 { used |= 0x3F }  // planes marked but empty change nothing
            planes.withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress else { return }
                for buffer in 0..<2 { PlannerMemory.gather(base, plane: plane, width: bw, rows: zh, buffer: buffer, used: used) }
            }
            for buffer in 0..<2 {
                var wrong = 0
                for r in 2..<(zh + 2) {
                    for c in 2..<(bw - 2) where planes[buffer * plane + r * bw + c] != expected[buffer][r * bw + c] { wrong += 1 }
                }
                #expect(wrong == 0, "trial \(trial), buffer \(buffer): \(wrong) pixels differ")
            }
            let leftover = (3 * plane..<9 * plane).filter { planes[$0] != .infinity }.count
            #expect(leftover == 0, "trial \(trial): the splat planes are left at infinity (\(leftover) not)")
        }
    }
}
