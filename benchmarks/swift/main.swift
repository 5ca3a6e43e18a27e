// Core-level micro-benchmarks (release build, one core): `make bench` runs this beside the C and
// Python benchmarks. Ratios are against references measured in the same run.
import CaptureKitCore
import Glibc

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// Median seconds per call of `body` over 7 runs of ≥ 50 ms each.
func measure(_ body: () -> Void) -> Double {
    var runs: [Double] = []
    for _ in 0..<7 {
        var reps = 0
        let t0 = now()
        var t = 0.0
        repeat { body(); reps += 1; t = now() - t0 } while t < 0.05
        runs.append(t / Double(reps))
    }
    return runs.sorted()[3]
}

func lookAt(_ eye: Vec3, _ target: Vec3) -> Matrix4 {
    let f = (target - eye) / ((target - eye) * (target - eye)).sum().squareRoot()
    var r = Vec3(-f.z, 0, f.x)
    r /= (r * r).sum().squareRoot()
    let u = Vec3(r.y * f.z - r.z * f.y, r.z * f.x - r.x * f.z, r.x * f.y - r.y * f.x)
    return Matrix4(SIMD4(r, 0), SIMD4(u, 0), SIMD4(-f, 0), SIMD4(eye, 1))
}

func depthBench(width: Int, height: Int, frames: Int) throws {
    let scene = SyntheticScene(seed: 7)
    let k = try Intrinsics(fx: Float(width) * 0.82, fy: Float(width) * 0.82, cx: Float(width) / 2, cy: Float(height) / 2,
                           width: UInt32(width), height: UInt32(height))
    let n = width * height
    var f32 = [[Float]](), f16 = [[UInt16]](), conf = [[UInt8]]()
    for f in 0..<frames {
        let a = Float(f) * 0.35
        let pose = try Pose(lookAt(Vec3(1.6 * sin(a), 1.1 + 0.3 * sin(a * 0.7), 1.6 * cos(a)), Vec3(0, 0.2, 0)))
        var d = [Float](repeating: 0, count: n), c = [UInt8](repeating: 0, count: n), h = [UInt16](repeating: 0, count: n)
        d.withUnsafeMutableBufferPointer { db in c.withUnsafeMutableBufferPointer { cb in
            scene.renderDepth(pose: pose, intrinsics: k, frame: UInt64(f), depth: db, confidence: cb) } }
        d.withUnsafeBufferPointer { s in h.withUnsafeMutableBufferPointer { o in DepthConversion.toFloat16(s, o) } }
        f32.append(d); f16.append(h); conf.append(c)
    }
    let codec = try DepthFrameCodec(level: 1)
    let bound = DepthFrameCodec.bound(pixels: n, kind: .float16Metres)
    var out = [UInt8](repeating: 0, count: bound)
    var encoded = [[UInt8]]()
    var total = 0
    for h in f16 {
        let size = h.withUnsafeBufferPointer { s in out.withUnsafeMutableBytes { o in (try? codec.encode(s, width: width, height: height, kind: .float16Metres, into: o)) ?? -1 } }
        encoded.append(Array(out[0..<size])); total += size
    }
    let ratio = Double(frames * n * 2) / Double(total)
    var fi = 0
    let enc = measure {
        let h = f16[fi % frames]; fi += 1
        _ = h.withUnsafeBufferPointer { s in out.withUnsafeMutableBytes { o in try? codec.encode(s, width: width, height: height, kind: .float16Metres, into: o) } }
    }
    var back = [UInt16](repeating: 0, count: n)
    let dec = measure {
        let e = encoded[fi % frames]; fi += 1
        _ = e.withUnsafeBytes { s in back.withUnsafeMutableBufferPointer { d in try? codec.decode(s, into: d) } }
    }
    var ok = true
    for (i, e) in encoded.enumerated() {
        _ = e.withUnsafeBytes { s in back.withUnsafeMutableBufferPointer { d in try? codec.decode(s, into: d) } }
        if back != f16[i] { ok = false }
    }
    var h16 = [UInt16](repeating: 0, count: n), b32 = [Float](repeating: 0, count: n)
    let conv = measure { f32[fi % frames].withUnsafeBufferPointer { s in h16.withUnsafeMutableBufferPointer { o in DepthConversion.toFloat16(s, o) } }; fi += 1 }
    let convBack = measure { f16[fi % frames].withUnsafeBufferPointer { s in b32.withUnsafeMutableBufferPointer { o in DepthConversion.toFloat32(s, o) } }; fi += 1 }
    let scalar = measure { f32[fi % frames].withUnsafeBufferPointer { s in h16.withUnsafeMutableBufferPointer { o in for i in 0..<n { o[i] = Float16(s[i]).bitPattern } } }; fi += 1 }
    print("depth \(width)x\(height): ratio \(format2(ratio)), encode \(Int(1 / enc)) fps, decode \(Int(1 / dec)) fps, lossless \(ok)")
    print("  float32->float16 \(format2(conv * 1e6)) us/frame (plain Float16() loop \(format2(scalar * 1e6)) us, \(format2(scalar / conv))x), float16->float32 \(format2(convBack * 1e6)) us")
    var ctotal = 0
    let cb = DepthFrameCodec.bound(pixels: n, kind: .bytes)
    var cout = [UInt8](repeating: 0, count: cb)
    for c in conf { ctotal += c.withUnsafeBytes { s in cout.withUnsafeMutableBytes { o in (try? codec.encode(bytes: s, width: width, height: height, into: o)) ?? 0 } } }
    let cenc = measure { _ = conf[fi % frames].withUnsafeBytes { s in cout.withUnsafeMutableBytes { o in try? codec.encode(bytes: s, width: width, height: height, into: o) } }; fi += 1 }
    print("  confidence: ratio \(format2(Double(frames * n) / Double(ctotal))), encode \(Int(1 / cenc)) fps")
}

func format2(_ x: Double) -> String {
    let r = (x * 100).rounded() / 100
    return "\(r)"
}

/// The raycast kernels (issue 22): the baseline Swift kernel against its AVX2 twin, interleaved in
/// one process (`kernel:` picks each explicitly, whatever CAPTUREKIT_NO_AVX2 says), M rays/s for
/// the pixel list and the grid; then both on 10 M generated rays, compared bit for bit.
func raycastKernelBench() throws {
    print("raycast kernels: SIMDDispatch.kernel = \(SIMDDispatch.kernel), AVX2 supported: \(SIMDDispatch.avx2Supported)")
    let box = try Box(center: Vec3(0, 0.5, 0), size: Vec3(0.6, 1.0, 0.6), yaw: 0.52)
    let pose = try Pose(lookAt(Vec3(-0.9, 1.1, -1.6), Vec3(0, 0.5, 0)))
    for (w, h) in [(256, 192), (1920, 1440)] {
        let k = try Intrinsics(fx: Float(w) * 0.8, fy: Float(w) * 0.8, cx: Float(w) / 2, cy: Float(h) / 2, width: UInt32(w), height: UInt32(h))
        let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
        let n = w * h
        var uv = [Float](repeating: 0, count: 2 * n)
        for j in 0..<h { for i in 0..<w { uv[2 * (j * w + i)] = Float(i) + 0.5; uv[2 * (j * w + i) + 1] = Float(j) + 0.5 } }
        var f = [Int32](repeating: 0, count: n), d = [Float](repeating: 0, count: n)
        func pixels(_ kernel: SIMDKernel) -> Double {
            measure { uv.withUnsafeBufferPointer { p in f.withUnsafeMutableBufferPointer { fp in d.withUnsafeMutableBufferPointer { dp in
                caster.cast(pixelsUV: p, faces: fp, distances: dp, kernel: kernel) } } } }
        }
        func grid(_ kernel: SIMDKernel) -> Double {
            measure { f.withUnsafeMutableBufferPointer { fp in d.withUnsafeMutableBufferPointer { dp in caster.castGrid(faces: fp, distances: dp, kernel: kernel) } } }
        }
        // Five interleaved pairs (baseline, then AVX2); medians of the times and of the pair ratios,
        // so one pair that caught a different slice of a shared machine does not decide.
        let m = Double(n) / 1e6
        for (name, run) in [("pixels", pixels), ("grid  ", grid)] {
            var tb: [Double] = [], ta: [Double] = [], ratio: [Double] = []
            for _ in 0..<5 {
                let b = run(.baseline), a = run(.avx2)
                tb.append(b); ta.append(a); ratio.append(b / a)
            }
            let med = { (v: [Double]) in v.sorted()[v.count / 2] }
            print("  \(w)x\(h) \(name): baseline \(format2(m / med(tb))) M rays/s, avx2 \(format2(m / med(ta))) M rays/s, " +
                  "ratio \(format2(med(ratio)))x (pairs \(format2(ratio.min() ?? 0))-\(format2(ratio.max() ?? 0)))")
        }
    }
    // 10 M rays: random views and pixels (in and outside the image, on the box's edges, NaN, inf).
    var state: UInt64 = 0x2022
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    func unit() -> Float { Float(next() >> 40) / Float(1 << 24) }
    let perView = 10_007, views = 1_000
    var uv = [Float](repeating: 0, count: 2 * perView)
    var f0 = [Int32](repeating: 0, count: perView), f1 = f0, d0 = [Float](repeating: 0, count: perView), d1 = d0
    var rays = 0, hits = 0, diffs = 0
    let specials: [Float] = [.nan, .infinity, -.infinity, 1e30, 0]
    for view in 0..<views {
        let b = try Box(center: Vec3(unit() * 4 - 2, unit() * 2, unit() * 4 - 2), size: Vec3(0.1 + unit() * 2, 0.1 + unit() * 2, 0.1 + unit() * 2),
                        yaw: unit() * 6 - 3)
        let a = unit() * 6.28, r = (view % 5 == 4 ? 0.2 : 1.5 + unit() * 4) * b.size.max()
        let eye = b.center + Vec3(r * sin(a), (unit() - 0.3) * r, r * cos(a))
        let p = try Pose(lookAt(eye, b.center + Vec3(unit() - 0.5, unit() - 0.5, unit() - 0.5) * 0.3))
        let k = try Intrinsics(fx: 500 + unit() * 1000, fy: 500 + unit() * 1000, cx: 480, cy: 360, width: 960, height: 720)
        for i in 0..<perView {
            let s = next() % 100
            uv[2 * i] = s == 0 ? specials[Int(next() % 5)] : unit() * 1150 - 95
            uv[2 * i + 1] = s == 1 ? specials[Int(next() % 5)] : unit() * 860 - 70
        }
        let c = BoxRaycaster(pose: p, intrinsics: k, box: b)
        uv.withUnsafeBufferPointer { q in
            f0.withUnsafeMutableBufferPointer { fp in d0.withUnsafeMutableBufferPointer { dp in c.cast(pixelsUV: q, faces: fp, distances: dp, kernel: .baseline) } }
            f1.withUnsafeMutableBufferPointer { fp in d1.withUnsafeMutableBufferPointer { dp in c.cast(pixelsUV: q, faces: fp, distances: dp, kernel: .avx2) } }
        }
        for i in 0..<perView {
            if f0[i] >= 0 { hits += 1 }
            if f0[i] != f1[i] || d0[i].bitPattern != d1[i].bitPattern { diffs += 1 }
        }
        rays += perView
    }
    print("  bit-identical check: \(rays) rays (\(hits) hits), \(diffs) differ in face or distance bits" +
          (SIMDDispatch.avx2Supported ? "" : " (no AVX2 here: both ran the baseline)"))
    if diffs != 0 { throw CaptureKitError.invalidArgument("AVX2 and baseline kernels differ on \(diffs) rays") }
}

if CommandLine.arguments.dropFirst().first == "raycast" {
    do { try raycastKernelBench() } catch { print("benchmark failed: \(error)"); exit(1) }
    exit(0)
}

do {
    try raycastKernelBench()
    try depthBench(width: 256, height: 192, frames: 40)
    try depthBench(width: 640, height: 480, frames: 10)
    try depthBench(width: 1280, height: 720, frames: 6)
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
