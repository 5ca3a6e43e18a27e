import Testing
@testable import CaptureKitCore

/// `SurfaceMap.dropFlyingPixels` against its definition, pixel by pixel in doubles: a valid
/// sample (0 < d <= maxDepth, d <= farthest) inside the rectangle and off the border is dropped
/// when, on one of the four lines through it, one valid neighbour lies nearer than d − jump and
/// the other further than d + jump (jump = 8 d / fx + 2 voxel); every other sample is kept as
/// it is, invalid ones (0, negative, NaN, ±inf, beyond maxDepth) included. Both kernels: the
/// Swift one and its AVX2 twin (`cks_flying_row_avx2`), where the CPU has AVX2.
@Suite struct SurfaceFlyingPixelsTests {
    struct Frame {
        var w: Int, h: Int, fx: Float, voxel: Float, maxDepth: Float, farthest: Float
        var rect: SurfaceMap.PixelRect?
        var depth: [Float]
    }

    /// A frame of a few planes at different depths, each pixel by chance a blend across an edge,
    /// noise, or an invalid value of every kind.
    func frame(_ rng: inout SplitMix64) -> Frame {
        let w = Int(rng.float(3...41)), h = Int(rng.float(3...17))
        let fx = rng.float(20...400), voxel = rng.float(0.002...0.02)
        let maxDepth: Float = rng.float(0...1) < 0.2 ? .greatestFiniteMagnitude : rng.float(1...4)
        let farthest: Float = rng.float(0...1) < 0.3 ? .infinity : rng.float(0.5...3.5)
        let levels = (0..<3).map { _ in rng.float(0.3...3.5) }
        var depth = [Float](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let plane = levels[(x / max(1, w / 3) + y / 5) % 3]
                var d = plane + rng.float(-0.003...0.003) * plane + Float(x) * rng.float(0...0.002)
                let u = rng.float(0...1)
                if u < 0.15 {
                    d = rng.float(0.2...4)  // a blend, anywhere between the planes
                } else if u < 0.25 {
                    let bad: [Float] = [0, -1, .nan, .infinity, -.infinity, maxDepth.nextUp, 1e30, -0.0]
                    d = bad[Int(rng.float(0...7.99))]
                }
                depth[y * w + x] = d
            }
        }
        var rect: SurfaceMap.PixelRect?
        if rng.float(0...1) < 0.5 {
            let x0 = Int(rng.float(0...Float(w))), y0 = Int(rng.float(0...Float(h)))
            rect = SurfaceMap.PixelRect(x0: x0, x1: x0 + Int(rng.float(0...Float(w))), y0: y0, y1: y0 + Int(rng.float(0...Float(h))))
        }
        return Frame(w: w, h: h, fx: fx, voxel: voxel, maxDepth: maxDepth, farthest: farthest, rect: rect, depth: depth)
    }

    enum Expected { case kept, dropped, either }

    /// The definition in doubles; `either` where a neighbour lies within a relative 1e-5 of a
    /// limit (single-precision rounding may go either way there).
    func expected(_ f: Frame, _ x: Int, _ y: Int) -> Expected {
        let r = f.rect ?? SurfaceMap.PixelRect(x0: 0, x1: f.w, y0: 0, y1: f.h)
        guard x >= 1, x < f.w - 1, y >= 1, y < f.h - 1, x >= r.x0, x < r.x1, y >= r.y0, y < r.y1 else { return .kept }
        func at(_ x: Int, _ y: Int) -> Double { Double(f.depth[y * f.w + x]) }
        func valid(_ v: Double) -> Bool { v > 0 && v <= Double(f.maxDepth) }
        let d = at(x, y)
        guard valid(d), d <= Double(f.farthest) else { return .kept }
        let jump = 8 * d / Double(f.fx) + 2 * Double(f.voxel)
        let lo = d - jump, hi = d + jump
        var close = false, dropped = false
        for (dx, dy) in [(1, 0), (0, 1), (1, 1), (-1, 1)] {
            let a = at(x - dx, y - dy), b = at(x + dx, y + dy)
            guard valid(a), valid(b) else { continue }
            for v in [a, b] where abs(v - lo) <= 1e-5 * d || abs(v - hi) <= 1e-5 * d { close = true }
            if (a < lo && b > hi) || (b < lo && a > hi) { dropped = true }
        }
        return close ? .either : (dropped ? .dropped : .kept)
    }

    @Test(arguments: [SIMDKernel.baseline, .avx2])
    func dropsExactlyWhatTheDefinitionSays(kernel: SIMDKernel) {
        guard SIMDDispatch.resolve(kernel) == kernel else { return }  // no AVX2 here: the baseline ran
        var rng = SplitMix64(seed: 4101)
        var dropped = 0, kept = 0, invalidSeen = 0, rectFrames = 0
        for _ in 0..<3000 {
            let f = frame(&rng)
            if f.rect != nil { rectFrames += 1 }
            var out = f.depth
            f.depth.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    guard let s = src.baseAddress, let d = dst.baseAddress else { return }
                    SurfaceMap.dropFlyingPixels(src: s, dst: d, width: f.w, height: f.h, fx: f.fx, voxel: f.voxel,
                                                maxDepth: f.maxDepth, farthest: f.farthest, within: f.rect, kernel: kernel)
                }
            }
            for y in 0..<f.h {
                for x in 0..<f.w {
                    let i = y * f.w + x, before = f.depth[i], after = out[i]
                    let same = before.bitPattern == after.bitPattern
                    switch expected(f, x, y) {
                    case .kept:
                        #expect(same, "\(kernel): kept pixel (\(x), \(y)) of \(f.w) x \(f.h) changed: \(before) -> \(after)")
                        if same { kept += 1 }
                        if !(before > 0 && before <= f.maxDepth) { invalidSeen += 1 }
                    case .dropped:
                        #expect(after == 0, "\(kernel): flying pixel (\(x), \(y)) of \(f.w) x \(f.h) kept: \(before)")
                        if after == 0 { dropped += 1 }
                    case .either:
                        #expect(same || after == 0)
                    }
                }
            }
        }
        // The generated frames exercise both outcomes, invalid samples and rectangles.
        #expect(dropped > 5000 && kept > 100_000 && invalidSeen > 20_000 && rectFrames > 1000,
                "dropped \(dropped), kept \(kept), invalid \(invalidSeen), with rectangles \(rectFrames)")
    }
}
