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

do {
    try depthBench(width: 256, height: 192, frames: 40)
    try depthBench(width: 640, height: 480, frames: 10)
    try depthBench(width: 1280, height: 720, frames: 6)
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
