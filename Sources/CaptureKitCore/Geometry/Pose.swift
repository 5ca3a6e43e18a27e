import Glibc

/// A rigid transform (rotation + translation) validated from a 4×4 matrix.
///
/// Poses are camera-to-world with OpenGL/ARKit camera axes (look down −z, +y up, +x right), unless
/// a function says otherwise.
public struct Pose: Equatable, Sendable {
    /// Rotation columns (the images of the local x, y, z axes) and translation.
    public var x: Vec3, y: Vec3, z: Vec3, t: Vec3

    /// Validates `matrix` as a rigid transform: finite, orthonormal rotation within
    /// `Geometry.rigidTolerance`, determinant +1, bottom row (0,0,0,1), translation within limits.
    /// - Throws: `invalidArgument` naming `name`.
    public init(_ matrix: Matrix4, name: String = "pose") throws(CaptureKitError) {
        try matrix.requireFinite(name)
        let tol = Geometry.rigidTolerance
        let bottom = SIMD4<Float>(matrix[3, 0], matrix[3, 1], matrix[3, 2], matrix[3, 3])
        guard abs(bottom.x) <= tol, abs(bottom.y) <= tol, abs(bottom.z) <= tol, abs(bottom.w - 1) <= tol else {
            throw .invalidArgument("\(name) is not a rigid transform: bottom row is not (0, 0, 0, 1)")
        }
        let x = matrix.axisX, y = matrix.axisY, z = matrix.axisZ
        let norms = SIMD3<Float>(dot(x, x), dot(y, y), dot(z, z)) - 1
        let dots = SIMD3<Float>(dot(x, y), dot(y, z), dot(x, z))
        let worst = max(abs(norms.x), abs(norms.y), abs(norms.z), abs(dots.x), abs(dots.y), abs(dots.z))
        guard worst <= 2 * tol, dot(cross(x, y), z) > 0 else {
            throw .invalidArgument("\(name) is not a rigid transform: its rotation is not orthonormal with determinant +1")
        }
        try requireCoordinate(matrix.translation, "\(name) translation")
        self.x = x; self.y = y; self.z = z; self.t = matrix.translation
    }

    /// A pose from already valid parts (not checked).
    init(x: Vec3, y: Vec3, z: Vec3, t: Vec3) { self.x = x; self.y = y; self.z = z; self.t = t }

    public var matrix: Matrix4 {
        Matrix4(SIMD4(x, 0), SIMD4(y, 0), SIMD4(z, 0), SIMD4(t, 1))
    }

    /// R·v
    @inline(__always) public func rotate(_ v: Vec3) -> Vec3 { x * v.x + y * v.y + z * v.z }
    /// Rᵀ·v
    @inline(__always) public func inverseRotate(_ v: Vec3) -> Vec3 { Vec3(dot(x, v), dot(y, v), dot(z, v)) }

    /// A world point in this camera's frame (for a camera-to-world pose): Rᵀ·(p − t).
    @inline(__always) public func toCamera(_ p: Vec3) -> Vec3 { inverseRotate(p - t) }

    /// The inverse rigid transform (Rᵀ, −Rᵀt).
    public var inverse: Pose {
        let rx = Vec3(x.x, y.x, z.x), ry = Vec3(x.y, y.y, z.y), rz = Vec3(x.z, y.z, z.z)
        return Pose(x: rx, y: ry, z: rz, t: -(rx * t.x + ry * t.y + rz * t.z))
    }

    /// The pose with its camera axes flipped between OpenGL (−z forward, +y up) and OpenCV (+z
    /// forward, +y down): pose · diag(1, −1, −1, 1). The flip is its own inverse.
    public var flippedCameraAxes: Pose { Pose(x: x, y: -y, z: -z, t: t) }

    /// The view direction (camera −z) in world coordinates.
    public var forward: Vec3 { -z }

    /// Yaw, pitch, roll with R = R_y(yaw)·R_x(pitch)·R_z(roll) (ARKit's eulerAngles order).
    /// yaw ∈ (−π, π], 0 looking down −z, positive turning left; pitch ∈ [−π/2, π/2], positive
    /// looking up; roll ∈ (−π, π]. At |pitch| = π/2 roll is 0 and yaw carries the rest.
    public var yawPitchRoll: (yaw: Float, pitch: Float, roll: Float) {
        // R = [x y z] (columns). For R_y R_x R_z: R[1][2] = −sin p, R[0][2] = sin y cos p,
        // R[2][2] = cos y cos p, R[1][0] = cos p sin r, R[1][1] = cos p cos r.
        let sp = max(-1, min(1, -Double(z.y)))
        let pitch = asin(sp)
        let cp = (1 - sp * sp).squareRoot()
        if cp > 1e-6 {
            let yaw = atan2(Double(z.x), Double(z.z))
            let roll = atan2(Double(x.y), Double(y.y))
            return (wrapAngle(Float(yaw)), Float(pitch), wrapAngle(Float(roll)))
        }
        // Gimbal lock: R = R_y(yaw ± roll)·R_x(±π/2); report roll = 0.
        // With roll = 0: x column = (cos y, 0, −sin y).
        let yaw = atan2(-Double(x.z), Double(x.x))
        return (wrapAngle(Float(yaw)), Float(pitch), 0)
    }

    /// The horizontal unit heading used to move things "forward" relative to a camera: the yaw of
    /// the view direction (independent of roll). Within ~6° of looking straight down (up), where
    /// that yaw is undefined, it is the direction of the top (bottom) of the image instead.
    public var horizontalHeading: Vec3 {
        let f = forward
        let hf = Vec3(f.x, 0, f.z)
        let nf = length(hf)
        if nf > 0.1 { return hf / nf }
        let u = f.y < 0 ? y : -y
        let hu = Vec3(u.x, 0, u.z)
        let nu = length(hu)
        if nu > 1e-6 { return hu / nu }
        return nf > 0 ? hf / nf : Vec3(0, 0, -1)
    }
}

/// A unit quaternion, vector part first (`ck_quat`).
public struct Quaternion: Equatable, Sendable {
    public var x: Float, y: Float, z: Float, w: Float
    public init(x: Float, y: Float, z: Float, w: Float) { self.x = x; self.y = y; self.z = z; self.w = w }

    public static let identity = Quaternion(x: 0, y: 0, z: 0, w: 1)

    /// Rotation by `angle` radians about a unit axis.
    public init(angle: Float, axis: Vec3) {
        let s = sin(angle / 2)
        self.init(x: axis.x * s, y: axis.y * s, z: axis.z * s, w: cos(angle / 2))
    }

    /// The normalised quaternion. - Throws: `invalidArgument` if it is zero, tiny or non-finite.
    public func normalized(_ name: String = "rotation") throws(CaptureKitError) -> Quaternion {
        guard x.isFinite, y.isFinite, z.isFinite, w.isFinite else {
            throw .invalidArgument("\(name) is not finite")
        }
        let n = (Double(x) * Double(x) + Double(y) * Double(y) + Double(z) * Double(z) + Double(w) * Double(w)).squareRoot()
        guard n > 1e-12, n.isFinite else { throw .invalidArgument("\(name) has zero length") }
        return Quaternion(x: Float(Double(x) / n), y: Float(Double(y) / n), z: Float(Double(z) / n), w: Float(Double(w) / n))
    }

    /// Hamilton product a·b (apply b first, then a).
    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                   w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z)
    }

    /// Rotation matrix columns of a unit quaternion.
    public var axes: (x: Vec3, y: Vec3, z: Vec3) {
        let (x, y, z, w) = (self.x, self.y, self.z, self.w)
        return (Vec3(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)),
                Vec3(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)),
                Vec3(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)))
    }

    /// The quaternion (w ≥ 0) of a rotation given by its columns (Shepperd's method, in Double).
    public init(rotationColumns c: (x: Vec3, y: Vec3, z: Vec3)) {
        let m00 = Double(c.x.x), m10 = Double(c.x.y), m20 = Double(c.x.z)
        let m01 = Double(c.y.x), m11 = Double(c.y.y), m21 = Double(c.y.z)
        let m02 = Double(c.z.x), m12 = Double(c.z.y), m22 = Double(c.z.z)
        let trace = m00 + m11 + m22
        var q: (Double, Double, Double, Double)  // x, y, z, w
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            q = ((m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4)
        } else if m00 > m11 && m00 > m22 {
            let s = max(1e-30, (1 + m00 - m11 - m22)).squareRoot() * 2
            q = (s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s)
        } else if m11 > m22 {
            let s = max(1e-30, (1 + m11 - m00 - m22)).squareRoot() * 2
            q = ((m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s)
        } else {
            let s = max(1e-30, (1 + m22 - m00 - m11)).squareRoot() * 2
            q = ((m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s)
        }
        if q.3 < 0 { q = (-q.0, -q.1, -q.2, -q.3) }
        let n = (q.0 * q.0 + q.1 * q.1 + q.2 * q.2 + q.3 * q.3).squareRoot()
        self.init(x: Float(q.0 / n), y: Float(q.1 / n), z: Float(q.2 / n), w: Float(q.3 / n))
    }
}

extension Pose {
    /// A pose from a rotation (normalised here) and a translation.
    /// - Throws: `invalidArgument` for a zero or non-finite quaternion or translation out of range.
    public init(rotation: Quaternion, translation: Vec3) throws(CaptureKitError) {
        let q = try rotation.normalized("rotation")
        try requireCoordinate(translation, "translation")
        let a = q.axes
        self.init(x: a.x, y: a.y, z: a.z, t: translation)
    }

    /// The rotation as a unit quaternion with w ≥ 0.
    public var rotation: Quaternion { Quaternion(rotationColumns: (x, y, z)) }
}

extension Pose {
    /// The camera-to-world pose of a camera at `eye` looking at `target` (OpenGL/ARKit camera axes:
    /// the camera's −z points at the target, +x is horizontal to the right of the view and +y as
    /// close to `up` as the view allows). Computed in Double, so the rotation is orthonormal to
    /// float precision.
    /// - Throws: `invalidArgument` when a point is non-finite or beyond `Geometry.maxCoordinate`,
    ///   `up` is zero or non-finite, the eye and target are closer than 1 µm, or the view direction
    ///   is parallel to `up` (within 1e-6 rad), where no horizontal right axis exists.
    public static func lookAt(eye: Vec3, target: Vec3, up: Vec3) throws(CaptureKitError) -> Pose {
        try requireCoordinate(eye, "eye")
        try requireCoordinate(target, "target")
        guard up.x.isFinite, up.y.isFinite, up.z.isFinite else { throw .invalidArgument("up is not finite") }
        let e = SIMD3<Double>(Double(eye.x), Double(eye.y), Double(eye.z))
        let f0 = SIMD3<Double>(Double(target.x), Double(target.y), Double(target.z)) - e
        let u0 = SIMD3<Double>(Double(up.x), Double(up.y), Double(up.z))
        let fl = (f0 * f0).sum().squareRoot(), ul = (u0 * u0).sum().squareRoot()
        guard fl >= 1e-6 else { throw .invalidArgument("eye and target are the same point") }
        guard ul > 0, ul.isFinite else { throw .invalidArgument("up has zero length") }
        let f = f0 / fl, u = u0 / ul
        func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        }
        let r0 = cross(f, u)
        let rl = (r0 * r0).sum().squareRoot()
        guard rl > 1e-6 else { throw .invalidArgument("the view direction is parallel to up") }
        let r = r0 / rl
        let y = cross(r, f)
        func v(_ d: SIMD3<Double>) -> Vec3 { Vec3(Float(d.x), Float(d.y), Float(d.z)) }
        return Pose(x: v(r), y: v(y), z: v(-f), t: eye)
    }
}
