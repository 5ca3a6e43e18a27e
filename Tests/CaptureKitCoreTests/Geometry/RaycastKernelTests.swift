import Foundation
import Testing
@testable import CaptureKitCore

/// The AVX2 twins of the batched raycast kernels (CCaptureKitSIMD) against the baseline Swift
/// kernels, bit for bit: faces equal, distances with equal bit patterns, on random scenes with the
/// camera outside and inside, pixels inside and outside the image, rays grazing the box's edges and
/// corners, and NaN / ±inf / huge pixel coordinates.
@Suite struct RaycastKernelTests {
    /// Random rays through `scenes` scenes, `perScene` pixels each (not a multiple of 8: tails).
    static func compare(scenes: Int, perScene: Int, seed: UInt64) throws -> (rays: Int, hits: Int, faceDiffs: Int, distDiffs: Int) {
        var rng = SplitMix64(seed: seed)
        var rays = 0, hits = 0, faceDiffs = 0, distDiffs = 0
        let specials: [Float] = [.nan, .infinity, -.infinity, 1e30, -1e30, 0, -0.0, .leastNormalMagnitude, .greatestFiniteMagnitude]
        var uv = [Float](repeating: 0, count: 2 * perScene)
        var f0 = [Int32](repeating: 0, count: perScene), f1 = f0
        var d0 = [Float](repeating: 0, count: perScene), d1 = d0
        for s in 0..<scenes {
            let box = rng.box(floor: rng.next() % 2 == 0)
            let inside = s % 5 == 4
            let eye = inside ? box.center + box.toWorld(direction: rng.vec(-0.9...0.9) * box.halfSize)
                             : box.center + rng.unitVector() * rng.float(1.2...8) * box.size.max()
            let pose = inside ? try Pose(rotation: rng.quaternion(), translation: eye)
                              : lookAt(eye: eye, target: box.center + rng.vec(-0.5...0.5) * box.size.min())
            let w = Float(16 + rng.next() % 2000), h = Float(12 + rng.next() % 1500)
            let k = try Intrinsics(fx: rng.float(0.3...2) * w, fy: rng.float(0.3...2) * w, cx: w / 2 + rng.float(-20...20),
                                   cy: h / 2 + rng.float(-20...20), width: UInt32(w), height: UInt32(h))
            // Pixels on the box's silhouette edges: projections of points along its 12 edges.
            let corners = box.corners
            var edgePixels: [SIMD2<Float>] = []
            for i in 0..<8 { for j in (i + 1)..<8 where (0..<3).filter({ Box.cornerSigns[i][$0] != Box.cornerSigns[j][$0] }).count == 1 {
                for q in stride(from: Float(0), through: 1, by: 0.125) {
                    if let p = k.project(camera: pose.toCamera(corners[i] + (corners[j] - corners[i]) * q)) { edgePixels.append(p) }
                }
            } }
            for i in 0..<perScene {
                let r = rng.next() % 100
                var u: Float, v: Float
                if r < 2 {
                    u = specials[Int(rng.next() % UInt64(specials.count))]; v = rng.float(-0.2...1.2) * h
                    if rng.next() % 2 == 0 { swap(&u, &v) }
                } else if r < 20, !edgePixels.isEmpty {
                    // An edge pixel, or one a few ulps away from it.
                    let p = edgePixels[Int(rng.next() % UInt64(edgePixels.count))]
                    u = p.x; v = p.y
                    for _ in 0..<Int(rng.next() % 4) { u = rng.next() % 2 == 0 ? u.nextUp : u.nextDown; v = rng.next() % 2 == 0 ? v.nextUp : v.nextDown }
                } else if r < 30 {
                    u = (Float(rng.next() % UInt64(w)) + 0.5); v = (Float(rng.next() % UInt64(h)) + 0.5)
                } else {
                    u = rng.float(-0.2...1.2) * w; v = rng.float(-0.2...1.2) * h
                }
                uv[2 * i] = u; uv[2 * i + 1] = v
            }
            let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
            uv.withUnsafeBufferPointer { p in
                f0.withUnsafeMutableBufferPointer { f in d0.withUnsafeMutableBufferPointer { d in caster.cast(pixelsUV: p, faces: f, distances: d, kernel: .baseline) } }
                f1.withUnsafeMutableBufferPointer { f in d1.withUnsafeMutableBufferPointer { d in caster.cast(pixelsUV: p, faces: f, distances: d, kernel: .avx2) } }
            }
            for i in 0..<perScene {
                if f0[i] >= 0 { hits += 1 }
                if f0[i] != f1[i] { faceDiffs += 1 }
                if d0[i].bitPattern != d1[i].bitPattern { distDiffs += 1 }
            }
            rays += perScene
        }
        return (rays, hits, faceDiffs, distDiffs)
    }

    /// Whole grids (widths not multiples of 8) through castGrid, both kernels.
    static func compareGrids(scenes: Int, seed: UInt64) throws -> (rays: Int, diffs: Int) {
        var rng = SplitMix64(seed: seed)
        var rays = 0, diffs = 0
        for s in 0..<scenes {
            let box = rng.box(floor: false)
            let inside = s % 4 == 3
            let eye = inside ? box.center + box.toWorld(direction: rng.vec(-0.9...0.9) * box.halfSize)
                             : box.center + rng.unitVector() * rng.float(1.2...6) * box.size.max()
            let pose = inside ? try Pose(rotation: rng.quaternion(), translation: eye) : lookAt(eye: eye, target: box.center)
            let w = UInt32(1 + rng.next() % 300), h = UInt32(1 + rng.next() % 200)
            let k = try Intrinsics(fx: rng.float(0.3...2) * Float(w), fy: rng.float(0.3...2) * Float(w), cx: Float(w) / 2,
                                   cy: Float(h) / 2, width: w, height: h)
            let n = Int(w * h)
            var f0 = [Int32](repeating: 7, count: n), f1 = [Int32](repeating: 9, count: n)
            var d0 = [Float](repeating: 7, count: n), d1 = [Float](repeating: 9, count: n)
            let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
            f0.withUnsafeMutableBufferPointer { f in d0.withUnsafeMutableBufferPointer { d in caster.castGrid(faces: f, distances: d, kernel: .baseline) } }
            f1.withUnsafeMutableBufferPointer { f in d1.withUnsafeMutableBufferPointer { d in caster.castGrid(faces: f, distances: d, kernel: .avx2) } }
            for i in 0..<n where f0[i] != f1[i] || d0[i].bitPattern != d1[i].bitPattern { diffs += 1 }
            rays += n
        }
        return (rays, diffs)
    }

    @Test(.enabled(if: SIMDDispatch.avx2Supported, "this CPU has no AVX2"))
    func avx2EqualsBaselineOnOneMillionRays() throws {
        let r = try Self.compare(scenes: 200, perScene: 5_001, seed: 2022)
        #expect(r.rays > 1_000_000)
        // Not a vacuous agreement: a fair share of the rays hit (the rest miss or are special).
        #expect(r.hits > r.rays / 10 && r.hits < r.rays * 9 / 10, "\(r.hits) of \(r.rays) hit")
        #expect(r.faceDiffs == 0 && r.distDiffs == 0, "\(r.faceDiffs) faces and \(r.distDiffs) distances differ of \(r.rays)")
        let g = try Self.compareGrids(scenes: 60, seed: 2023)
        #expect(g.diffs == 0, "\(g.diffs) of \(g.rays) grid rays differ")
    }

    /// The coverage kernel (hit cells of a grid, compacted) through both kernels: the same cells in
    /// the same order, on grids with partial groups, cameras outside and inside, 1...64 cells a side.
    @Test(.enabled(if: SIMDDispatch.avx2Supported, "this CPU has no AVX2"))
    func avx2CellsEqualBaseline() throws {
        var rng = SplitMix64(seed: 2025)
        var rays = 0, hits = 0
        for s in 0..<400 {
            let box = rng.box(floor: false)
            let inside = s % 4 == 3
            let eye = inside ? box.center + box.toWorld(direction: rng.vec(-0.9...0.9) * box.halfSize)
                             : box.center + rng.unitVector() * rng.float(1.2...6) * box.size.max()
            let pose = inside ? try Pose(rotation: rng.quaternion(), translation: eye) : lookAt(eye: eye, target: box.center)
            let w = UInt32(1 + rng.next() % 130), h = UInt32(1 + rng.next() % 100)
            let k = try Intrinsics(fx: rng.float(0.3...2) * Float(w), fy: rng.float(0.3...2) * Float(w), cx: Float(w) / 2,
                                   cy: Float(h) / 2, width: w, height: h)
            let n = [1, 4, 5, 64][s % 4]
            let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
            let camera = box.toLocal(direction: pose.t - box.center)
            var c0 = [Int32](repeating: 7, count: Int(w * h)), c1 = [Int32](repeating: 9, count: Int(w * h))
            let n0 = c0.withUnsafeMutableBufferPointer { caster.castGridCells(cellsPerSide: n, camera: camera, halfSize: box.halfSize, cells: $0, kernel: .baseline) }
            let n1 = c1.withUnsafeMutableBufferPointer { caster.castGridCells(cellsPerSide: n, camera: camera, halfSize: box.halfSize, cells: $0, kernel: .avx2) }
            #expect(n0 == n1, "scene \(s): \(n0) vs \(n1) hits")
            #expect(c0[0..<min(n0, n1)] == c1[0..<min(n0, n1)], "scene \(s)")
            #expect(c0[0..<n0].allSatisfy { $0 >= 0 && Int($0) < 6 * n * n }, "scene \(s)")
            rays += Int(w * h); hits += n0
        }
        #expect(hits > rays / 10, "\(hits) of \(rays)")
    }

    /// The 10 M rays (CK_SLOW_TESTS=1; `make bench` checks 10 M rays in release too).
    @Test(.enabled(if: SIMDDispatch.avx2Supported && ProcessInfo.processInfo.environment["CK_SLOW_TESTS"] == "1"))
    func avx2EqualsBaselineOnTenMillionRays() throws {
        let r = try Self.compare(scenes: 2_000, perScene: 5_001, seed: 2024)
        #expect(r.rays >= 10_000_000)
        #expect(r.faceDiffs == 0 && r.distDiffs == 0, "\(r.faceDiffs) faces and \(r.distDiffs) distances differ of \(r.rays)")
    }

    /// A request for AVX2 on a CPU without it runs the baseline (never an illegal instruction);
    /// the process's choice is AVX2 exactly when supported and not disabled by CAPTUREKIT_NO_AVX2.
    @Test func dispatchFallsBackAndHonoursTheEnvironment() {
        #expect(SIMDDispatch.resolve(.baseline) == .baseline)
        #expect(SIMDDispatch.resolve(.avx2) == (SIMDDispatch.avx2Supported ? .avx2 : .baseline))
        let env = ProcessInfo.processInfo.environment["CAPTUREKIT_NO_AVX2"] ?? ""
        let disabled = !env.isEmpty && env != "0"
        #expect(SIMDDispatch.kernel == (SIMDDispatch.avx2Supported && !disabled ? .avx2 : .baseline))
    }
}
