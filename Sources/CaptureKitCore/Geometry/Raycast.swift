import Glibc

/// A validated ray (`ck_ray`): finite origin within limits and a finite, non-zero direction.
public struct Ray: Equatable, Sendable {
    public var origin: Vec3
    /// Unit direction.
    public var direction: Vec3

    /// - Throws: `invalidArgument` for a non-finite origin or direction, or a zero direction.
    public init(origin: Vec3, direction: Vec3, name: String = "ray") throws(CaptureKitError) {
        try requireCoordinate(origin, "\(name).origin")
        try requireFinite(direction, "\(name).direction")
        let d = SIMD3<Double>(direction)
        let n = dot(d, d).squareRoot()
        guard n > 1e-30, n.isFinite else { throw .invalidArgument("\(name).direction has zero length") }
        self.origin = origin
        let u = d / n
        self.direction = Vec3(Float(u.x), Float(u.y), Float(u.z))
    }

    /// The ray through pixel (u, v) of a camera (origin at the camera, unit direction).
    public init(pixelU u: Float, v: Float, pose: Pose, intrinsics: Intrinsics) throws(CaptureKitError) {
        try requireFinite(u, "u")
        try requireFinite(v, "v")
        try self.init(origin: pose.t, direction: pose.rotate(intrinsics.cameraDirection(u: u, v: v)))
    }

    /// The point at `distance` metres along the ray.
    public func point(at distance: Float) -> Vec3 { origin + direction * distance }
}

/// The result of a ray query (`ck_hit`).
public struct Hit: Equatable, Sendable {
    public var point: Vec3
    /// Metres from the ray origin; +inf on a miss.
    public var distance: Float
    /// Face index 0...5 for box hits, −1 for planes and misses.
    public var face: Int32
    /// True when the ray started inside the box (then `face` is the exit face).
    public var inside: Bool

    public static let miss = Hit(point: .zero, distance: .infinity, face: -1, inside: false)
}

extension Ray {
    /// Intersection with the plane through `point` with normal `normal` (either side).
    /// - Returns: the hit, or nil when the plane is behind the origin or the ray is parallel to
    ///   it (a ray lying in the plane misses too).
    /// - Throws: `invalidArgument` for a non-finite point or a zero/non-finite normal.
    public func intersect(planePoint point: Vec3, normal: Vec3) throws(CaptureKitError) -> Hit? {
        try requireCoordinate(point, "point")
        try requireFinite(normal, "normal")
        let n = SIMD3<Double>(normal)
        guard dot(n, n) > 1e-30 else { throw .invalidArgument("normal has zero length") }
        let o = SIMD3<Double>(origin), d = SIMD3<Double>(direction), p = SIMD3<Double>(point)
        let denom = dot(n, d)
        // Parallel within float rounding of the direction: treated as parallel.
        guard abs(denom) > 1e-9 * dot(n, n).squareRoot() else { return nil }
        let t = dot(n, p - o) / denom
        guard t >= 0, t.isFinite else { return nil }
        let hit = o + d * t
        return Hit(point: Vec3(Float(hit.x), Float(hit.y), Float(hit.z)), distance: Float(t) + 0, face: -1, inside: false)  // + 0: −0 → +0
    }

    /// Intersection with the horizontal plane y = `floorY`.
    public func intersect(floorY: Float) throws(CaptureKitError) -> Hit? {
        try requireFinite(floorY, "floor_y")
        guard abs(floorY) <= Geometry.maxCoordinate else { throw .invalidArgument("floor_y is beyond ±\(Geometry.maxCoordinate) m") }
        return try intersect(planePoint: Vec3(origin.x, floorY, origin.z), normal: Vec3(0, 1, 0))
    }

    /// Intersection with a closed box (slab method, in Double). Touching an edge or a corner
    /// counts. The face is the one entered first, ties going to the lower face index; a ray that
    /// starts inside (on a face counts) reports its exit face with `inside = true`.
    /// - Returns: the hit, or nil when the box is missed or lies entirely behind the origin.
    public func intersect(box: Box) -> Hit? {
        let c = SIMD3<Double>(box.center)
        let cy = cos(Double(box.yaw)), sy = sin(Double(box.yaw))
        func local(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(cy * v.x - sy * v.z, v.y, sy * v.x + cy * v.z) }
        let o = local(SIMD3<Double>(origin) - c)
        let d = local(SIMD3<Double>(direction))
        let h = SIMD3<Double>(box.halfSize)
        // Faces per axis (negative side, positive side): x → left/right, y → bottom/top, z → front/back.
        let negFace = SIMD3<Int32>(1, 3, 0), posFace = SIMD3<Int32>(2, 4, 5)
        var tNear = -Double.infinity, tFar = Double.infinity
        var nearFace: Int32 = -1, farFace: Int32 = -1
        for i in 0..<3 {
            if d[i] == 0 {
                if abs(o[i]) > h[i] { return nil }
                continue
            }
            let t1 = (-h[i] - o[i]) / d[i], t2 = (h[i] - o[i]) / d[i]
            let (near, far) = t1 <= t2 ? (t1, t2) : (t2, t1)
            let enter = d[i] > 0 ? negFace[i] : posFace[i]
            let exit = d[i] > 0 ? posFace[i] : negFace[i]
            if near > tNear || (near == tNear && enter < nearFace) { tNear = near; nearFace = enter }
            if far < tFar || (far == tFar && exit < farFace) { tFar = far; farFace = exit }
        }
        guard tNear <= tFar, tFar >= 0 else { return nil }
        let inside = abs(o.x) <= h.x && abs(o.y) <= h.y && abs(o.z) <= h.z
        let t = inside ? tFar : tNear
        let face = inside ? farFace : nearFace
        guard face >= 0 else { return nil }  // unreachable for a non-zero direction
        let p = SIMD3<Double>(origin) + SIMD3<Double>(direction) * t
        return Hit(point: Vec3(Float(p.x), Float(p.y), Float(p.z)), distance: Float(t) + 0, face: face, inside: inside)
    }
}
