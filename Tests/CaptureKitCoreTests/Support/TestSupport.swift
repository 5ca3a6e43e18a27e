import Foundation
@testable import CaptureKitCore

/// Deterministic generator (SplitMix64) so that every property test can print and replay its case.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func float(_ range: ClosedRange<Float>) -> Float { Float.random(in: range, using: &self) }
    mutating func double(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }
    mutating func vec(_ range: ClosedRange<Float>) -> Vec3 { Vec3(float(range), float(range), float(range)) }
    mutating func unitVector() -> Vec3 {
        while true {
            let v = vec(-1...1)
            let n = length(v)
            if n > 0.1 && n <= 1 { return v / n }
        }
    }
    mutating func quaternion() -> Quaternion {
        let v = SIMD4<Float>(float(-1...1), float(-1...1), float(-1...1), float(-1...1))
        let n = (v * v).sum().squareRoot()
        if n < 0.1 { return .identity }
        return Quaternion(x: v.x / n, y: v.y / n, z: v.z / n, w: v.w / n)
    }
    mutating func box(floor: Bool) -> Box {
        let size = Vec3(float(0.05...3), float(0.05...3), float(0.05...3))
        // A throwing initialiser with valid inputs: a failure here is a test bug, reported by `try?` as nil.
        return (try? Box(center: vec(-5...5), size: size, yaw: float(-4...4), floor: floor ? float(-2...1) : nil))
            ?? (try? Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0)) ?? Box.unit
    }
}

extension Box {
    static let unit = Box.fallback
}

func close(_ a: Float, _ b: Float, _ tol: Float) -> Bool { abs(a - b) <= tol }
func close(_ a: Double, _ b: Double, _ tol: Double) -> Bool { abs(a - b) <= tol }

/// Camera-to-world pose looking from `eye` at `target` (OpenGL axes, world +y up).
func lookAt(eye: Vec3, target: Vec3) -> Pose {
    let f = (target - eye) / length(target - eye)
    var right = cross(f, Vec3(0, 1, 0))
    if length(right) < 1e-4 { right = Vec3(1, 0, 0) }
    right /= length(right)
    let up = cross(right, f)
    return Pose(x: right, y: up, z: -f, t: eye)
}

/// Path of a fixture file.
func fixture(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent(name)
}

func maxAbs(_ v: SIMD3<Double>) -> Double { max(abs(v.x), abs(v.y), abs(v.z)) }
func close(_ a: Vec3, _ b: Vec3, _ tol: Float) -> Bool { let d = a - b; return max(abs(d.x), abs(d.y), abs(d.z)) <= tol }

/// A float32 metre map over `raw` (the scheduler's and session's depth input).
func f32Map(_ raw: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int? = nil) throws -> SampleMap {
    guard let base = raw.baseAddress else { throw CaptureKitError.invalidArgument("empty depth buffer") }
    return SampleMap(base: base, width: width, height: height, stride: stride ?? width * 4, format: .depthF32)
}
