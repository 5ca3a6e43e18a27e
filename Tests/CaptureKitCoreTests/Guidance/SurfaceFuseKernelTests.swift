import Testing
@testable import CaptureKitCore

/// Fusion's AVX2 twins (`cks_fuse_row_avx2`, `cks_flying_row_avx2`, `cks_valid_copy_avx2`)
/// against the Swift kernels: two maps fed the same frames, one per kernel, hold the same voxel
/// states and the same elements in the same order after every frame. The frames are the
/// synthetic scene's LiDAR-like depth, by chance quantized in steps up to 3 voxels (structured
/// light: the bridges, one-sample and longer), with blended pixels between surfaces, invalid
/// samples of every kind and a confidence map; widths and heights of every residue, boxes of
/// every size (so voxels from a few pixels across to a fraction of one).
@Suite struct SurfaceFuseKernelTests {
    @Test(.enabled(if: SIMDDispatch.avx2Supported, "the CPU has no AVX2"))
    func avx2FusesTheSameMapAsTheBaseline() throws {
        var rng = SplitMix64(seed: 7303)
        var frames = 0, elements = 0, longBridges = 0
        for trial in 0..<36 {
            let scene = SyntheticScene(seed: UInt64(trial))
            let w = UInt32(rng.float(9...203)), h = UInt32(rng.float(7...121))
            let f = rng.float(0.6...1.6) * Float(w)
            let k = try Intrinsics(fx: f, fy: f * rng.float(0.95...1.05), cx: Float(w) / 2 + rng.float(-3...3),
                                   cy: Float(h) / 2 + rng.float(-3...3), width: w, height: h)
            let box = try Box(center: scene.target.center, size: scene.target.size + rng.float(0.01...0.4), yaw: scene.target.yaw)
            var options = SurfaceOptions()
            options.maxDepth = rng.float(0...1) < 0.2 ? 1.2 : 5
            let a = try SurfaceMap(box: box, options: options), b = try SurfaceMap(box: box, options: options)
            a.kernel = .baseline
            b.kernel = .avx2
            let voxel = a.voxelSize
            var depth = [Float](repeating: 0, count: Int(w * h)), conf = [UInt8](repeating: 0, count: Int(w * h))
            for i in 0..<4 {
                let pose = orbitPose(center: box.center, radius: rng.float(0.35...2.0), height: rng.float(-0.2...1.2),
                                     azimuth: rng.float(0...6.28))
                depth.withUnsafeMutableBufferPointer { d in
                    conf.withUnsafeMutableBufferPointer { c in scene.renderDepth(pose: pose, intrinsics: k, frame: UInt64(i), depth: d, confidence: c) }
                }
                let quantum = rng.float(0...1) < 0.5 ? rng.float(0.5...3) * voxel : 0
                for p in depth.indices {
                    if quantum > 0 { depth[p] = (depth[p] / quantum).rounded() * quantum }
                    let u = rng.float(0...1)
                    if u < 0.04 {
                        depth[p] = rng.float(0.1...3)
                    } else if u < 0.07 {
                        let bad: [Float] = [0, -0.5, .nan, .infinity, -.infinity, options.maxDepth.nextUp, 1e30]
                        depth[p] = bad[Int(rng.float(0...6.99))]
                    }
                }
                let withConfidence = rng.float(0...1) < 0.4
                for m in [a, b] {
                    depth.withUnsafeBufferPointer { d in
                        conf.withUnsafeBufferPointer { c in
                            m.fuse(metres: d, confidence: withConfidence ? c : nil, intrinsics: k, pose: pose)
                        }
                    }
                }
                let same = a.voxelStates == b.voxelStates && a.elements.map(\.voxel) == b.elements.map(\.voxel)
                #expect(same, "trial \(trial), frame \(i): \(w) x \(h), voxel \(voxel), quantum \(quantum)")
                if !same { return }
                frames += 1
                if quantum >= 2 * voxel { longBridges += 1 }
            }
            elements += a.elements.count
        }
        #expect(frames == 144 && elements > 20_000 && longBridges > 10, "elements \(elements), frames with long bridges \(longBridges)")
    }

    /// Neighbour pairs exactly on the kernels' limits: a camera on the box's z axis over a 1 m box
    /// (voxels of 2⁻⁷ m, grid coordinates exact in floats) sees depths on whole voxels, stepping
    /// 0-3 voxels from pixel to pixel, so pairs lie exactly 1 and 2 voxels apart along z (where
    /// a pair stops being a one-sample bridge and takes `span`). Both kernels mark the same voxels.
    @Test(.enabled(if: SIMDDispatch.avx2Supported, "the CPU has no AVX2"))
    func avx2AgreesOnPairsExactlyOnTheLimits() throws {
        let box = try Box(center: Vec3(0, 0, 0), size: Vec3(1, 1, 1), yaw: 0)
        let pose = lookAt(eye: Vec3(0, 0, 2), target: Vec3(0, 0, 0))
        let k = try Intrinsics(fx: 400, fy: 400, cx: 37, cy: 21, width: 75, height: 43)
        var rng = SplitMix64(seed: 9011)
        var exactTwo = 0
        for frame in 0..<12 {
            let a = try SurfaceMap(box: box), b = try SurfaceMap(box: box)
            #expect(a.voxelSize == 0.0078125)
            a.kernel = .baseline
            b.kernel = .avx2
            var steps = [Int](repeating: 0, count: 75 * 43)
            for y in 0..<43 {
                var j = Int(rng.float(-20...20))
                for x in 0..<75 {
                    j = max(-60, min(60, j + Int(rng.float(-3.99...3.99))))
                    steps[y * 75 + x] = j
                    if x > 0, abs(j - steps[y * 75 + x - 1]) == 2 { exactTwo += 1 }
                }
            }
            let depth = steps.map { 2 + Float($0) / 128 }
            for m in [a, b] {
                depth.withUnsafeBufferPointer { m.fuse(metres: $0, confidence: nil, intrinsics: k, pose: pose) }
            }
            #expect(a.voxelStates == b.voxelStates && a.elements.map(\.voxel) == b.elements.map(\.voxel), "frame \(frame)")
        }
        #expect(exactTwo > 1000, "pairs exactly 2 voxels apart: \(exactTwo)")
    }
}
