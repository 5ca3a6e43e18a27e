import Glibc

/// A 3-vector of metres (or a direction) in CaptureKit's world: right-handed, +y up.
public typealias Vec3 = SIMD3<Float>

/// Shared limits and small vector helpers.
public enum Geometry {
    /// Largest accepted absolute coordinate, metres (`CK_MAX_COORDINATE`).
    public static let maxCoordinate: Float = 1.0e6
    /// Largest accepted image width or height, pixels (`CK_MAX_IMAGE_DIMENSION`).
    public static let maxImageDimension: UInt32 = 65536
    /// Tolerance of the rigid-pose check (orthonormality and bottom row).
    public static let rigidTolerance: Float = 1e-3
}

@inline(__always) func dot(_ a: Vec3, _ b: Vec3) -> Float { (a * b).sum() }
@inline(__always) func cross(_ a: Vec3, _ b: Vec3) -> Vec3 {
    Vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
@inline(__always) func length(_ a: Vec3) -> Float { dot(a, a).squareRoot() }

/// Whether any (every) lane of a 4-lane mask is set, inline. The standard library's generic
/// `any` / `all` stay calls here (perf: `any` alone was 5 % of `ck_surface_fuse` on a 640 × 480
/// frame); an OR (AND) of the lanes as integers compiles to a few register operations.
@inline(__always) func anyLane(_ m: SIMDMask<SIMD4<Int32>>) -> Bool {
    let v = unsafeBitCast(m, to: SIMD4<Int32>.self)
    return (v[0] | v[1] | v[2] | v[3]) != 0
}
@inline(__always) func allLanes(_ m: SIMDMask<SIMD4<Int32>>) -> Bool {
    let v = unsafeBitCast(m, to: SIMD4<Int32>.self)
    return (v[0] & v[1] & v[2] & v[3]) != 0
}

extension SIMD3 where Scalar == Float {
    /// `(x, y, z)` for messages.
    var text: String { "(\(x), \(y), \(z))" }
}

extension SIMD3 where Scalar == Double {
    @inline(__always) init(_ v: Vec3) { self.init(Double(v.x), Double(v.y), Double(v.z)) }
}

@inline(__always) func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }

/// Wraps an angle to (-π, π].
public func wrapAngle(_ angle: Float) -> Float {
    let twoPi = 2 * Float.pi
    var r = angle.remainder(dividingBy: twoPi)  // [-π, π]
    if r <= -Float.pi { r += twoPi }
    if r > Float.pi { r -= twoPi }
    return r
}
