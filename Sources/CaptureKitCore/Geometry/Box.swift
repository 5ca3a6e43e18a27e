import Glibc

/// An upright oriented box (`ck_box`): centre, full edge lengths, yaw about +y, optional floor.
///
/// A local point p maps to world as `center + R_y(yaw)·p` with R_y rows [cos,0,sin],[0,1,0],
/// [−sin,0,cos]. Front is local −z, left −x, top +y. Corner order 0–7: top_left_front,
/// top_right_front, bot_right_front, bot_left_front, top_left_back, top_right_back, bot_right_back,
/// bot_left_back. Face order 0–5: front, left, right, bottom, top, back.
///
/// Invariants (kept by every initialiser and edit): every edge in
/// `Box.minSize...Box.maxSize`, yaw in (−π, π], centre within ±`Geometry.maxCoordinate`, and with a
/// floor the bottom face lies on it (`center.y == floor + size.y / 2`).
public struct Box: Equatable, Sendable {
    public private(set) var center: Vec3
    public private(set) var size: Vec3
    public private(set) var yaw: Float
    public private(set) var floor: Float?

    /// Smallest edge, metres (`CK_BOX_MIN_SIZE`).
    public static let minSize: Float = 0.01
    /// Largest edge, metres (`CK_BOX_MAX_SIZE`).
    public static let maxSize: Float = 1000

    /// Local corner signs in corner order.
    public static let cornerSigns: [Vec3] = [
        Vec3(-1, 1, -1), Vec3(1, 1, -1), Vec3(1, -1, -1), Vec3(-1, -1, -1),
        Vec3(-1, 1, 1), Vec3(1, 1, 1), Vec3(1, -1, 1), Vec3(-1, -1, 1),
    ]
    /// Local outward normals in face order.
    public static let faceNormals: [Vec3] = [
        Vec3(0, 0, -1), Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 1, 0), Vec3(0, 0, 1),
    ]
    /// Face names in face order.
    public static let faceNames = ["front", "left", "right", "bottom", "top", "back"]

    /// A validated box. With a floor, the centre's y is replaced so the bottom lies on the floor.
    /// - Throws: `invalidArgument` for a non-finite value, a size outside the limits or a centre
    ///   or floor beyond `Geometry.maxCoordinate`.
    /// - Parameter seat: false keeps the centre as given even with a floor (a box read from a
    ///   caller for a query; the next edit seats it).
    public init(center: Vec3, size: Vec3, yaw: Float, floor: Float? = nil, seat: Bool = true) throws(CaptureKitError) {
        try requireCoordinate(center, "center")
        try Box.requireSize(size, "size")
        try requireFinite(yaw, "yaw")
        // Sizes within float rounding below the minimum (0.1 − 0.09 = 0.0099999) count as the minimum.
        let size = Vec3(max(size.x, Box.minSize), max(size.y, Box.minSize), max(size.z, Box.minSize))
        if let floor {
            try requireFinite(floor, "floor")
            guard abs(floor) <= Geometry.maxCoordinate else { throw .invalidArgument("floor is beyond ±\(Geometry.maxCoordinate) m") }
        }
        self.center = center
        self.size = size
        self.yaw = wrapAngle(yaw)
        self.floor = floor
        if seat, let floor { self.center.y = floor + size.y / 2 }
    }

    /// A box from values the caller guarantees valid (constants); not checked.
    init(uncheckedCenter center: Vec3, size: Vec3, yaw: Float = 0, floor: Float? = nil) {
        self.center = center; self.size = size; self.yaw = yaw; self.floor = floor
    }

    static func requireSize(_ size: Vec3, _ name: @autoclosure () -> String) throws(CaptureKitError) {
        try requireFinite(size, name())
        for i in 0..<3 where !(size[i] >= minSize * (1 - 1e-5) && size[i] <= maxSize) {
            throw .invalidArgument("\(name()) \(size.text) must be within [\(minSize), \(maxSize)] m on every axis")
        }
    }

    // MARK: Frames

    /// Half edge lengths.
    public var halfSize: Vec3 { size / 2 }

    /// The box's local x (right) and z (back) axes in world coordinates.
    public var axisX: Vec3 { Vec3(cos(yaw), 0, -sin(yaw)) }
    public var axisZ: Vec3 { Vec3(sin(yaw), 0, cos(yaw)) }

    /// Local → world direction.
    @inline(__always) public func toWorld(direction p: Vec3) -> Vec3 {
        let c = cos(yaw), s = sin(yaw)
        return Vec3(c * p.x + s * p.z, p.y, -s * p.x + c * p.z)
    }
    /// World → local direction.
    @inline(__always) public func toLocal(direction p: Vec3) -> Vec3 {
        let c = cos(yaw), s = sin(yaw)
        return Vec3(c * p.x - s * p.z, p.y, s * p.x + c * p.z)
    }

    /// The 8 world corners in corner order.
    public var corners: [Vec3] { Box.cornerSigns.map { center + toWorld(direction: $0 * halfSize) } }

    /// Centre, outward unit normal and orientation (+z on the normal) of face `face` (0...5).
    /// - Throws: `invalidArgument` if `face` is not 0...5.
    public func face(_ face: Int) throws(CaptureKitError) -> (center: Vec3, normal: Vec3, orientation: Quaternion) {
        guard (0..<6).contains(face) else { throw .invalidArgument("face must be 0...5 (got \(face))") }
        let n = Box.faceNormals[face]
        let r = Float.pi / 4
        let local: Quaternion
        switch face {
        case 0: local = Quaternion(x: 0, y: 1, z: 0, w: 0)                       // about y by π
        case 1: local = Quaternion(x: 0, y: -sin(r), z: 0, w: cos(r))            // about y by −π/2
        case 2: local = Quaternion(x: 0, y: sin(r), z: 0, w: cos(r))             // about y by +π/2
        case 3: local = Quaternion(x: sin(r), y: 0, z: 0, w: cos(r))             // about x by +π/2
        case 4: local = Quaternion(x: -sin(r), y: 0, z: 0, w: cos(r))            // about x by −π/2
        default: local = .identity
        }
        let q = Quaternion(angle: yaw, axis: Vec3(0, 1, 0)) * local
        return (center + toWorld(direction: n * halfSize), toWorld(direction: n), q)
    }

    /// True if `point` is inside the closed box (faces included, within 1e-6 m).
    public func contains(_ point: Vec3) -> Bool {
        let d = SIMD3<Double>(point) - SIMD3<Double>(center)
        let c = cos(Double(yaw)), s = sin(Double(yaw))
        let local = SIMD3<Double>(c * d.x - s * d.z, d.y, s * d.x + c * d.z)
        let h = SIMD3<Double>(halfSize) + 1e-6
        return abs(local.x) <= h.x && abs(local.y) <= h.y && abs(local.z) <= h.z
    }

    // MARK: Edits (each validates first and changes nothing when it throws)

    private func with(center: Vec3? = nil, size: Vec3? = nil, yaw: Float? = nil,
                      floor: Float?? = nil) throws(CaptureKitError) -> Box {
        try Box(center: center ?? self.center, size: size ?? self.size, yaw: yaw ?? self.yaw,
                floor: floor ?? self.floor)
    }

    /// Moves the centre (with a floor, `center.y` is ignored). The corresponding C function is `ck_box_set_center`.
    public mutating func setCenter(_ newCenter: Vec3) throws(CaptureKitError) {
        try requireCoordinate(newCenter, "center")
        self = try with(center: newCenter)
    }

    /// Moves by a world offset (with a floor, `delta.y` is ignored).
    public mutating func translate(by delta: Vec3) throws(CaptureKitError) {
        try requireCoordinate(delta, "delta")
        self = try with(center: center + delta)
    }

    /// Moves relative to a camera: right/forward along its horizontal axes, up along +y.
    public mutating func translate(relativeTo camera: Pose, right: Float, up: Float, forward: Float) throws(CaptureKitError) {
        try requireCoordinate(Vec3(right, up, forward), "offset (right, up, forward)")
        let f = camera.horizontalHeading
        let r = Vec3(-f.z, 0, f.x)  // f rotated −90° about +y
        self = try with(center: center + r * right + Vec3(0, up, 0) + f * forward)
    }

    /// Sets the yaw (wrapped to (−π, π]).
    public mutating func setYaw(_ newYaw: Float) throws(CaptureKitError) {
        try requireFinite(newYaw, "yaw")
        yaw = wrapAngle(newYaw)
    }

    /// Turns the box about its vertical axis so that its front face (local −z) faces the camera:
    /// the front normal points horizontally from the centre toward the camera's position; with the
    /// camera within 1 mm of the vertical through the centre, against the camera's horizontal
    /// heading (`Pose.horizontalHeading`: the face toward the operator). Centre, size and floor
    /// are kept.
    public mutating func faceCamera(_ camera: Pose) throws(CaptureKitError) {
        let c = camera.t
        var d = Vec3(c.x - center.x, 0, c.z - center.z)
        if length(d) < 1e-3 {
            let f = camera.horizontalHeading
            d = Vec3(-f.x, 0, -f.z)
        }
        // front normal = R_y(yaw)·(0, 0, −1) = (−sin yaw, 0, −cos yaw) ∥ d
        yaw = wrapAngle(Float(atan2(-Double(d.x), -Double(d.z))))
    }

    /// Rotates about the vertical axis through the centre.
    public mutating func rotate(by delta: Float) throws(CaptureKitError) {
        try requireFinite(delta, "delta")
        // Add in Double and wrap, so that many small steps do not drift.
        let sum = Double(yaw) + Double(delta).remainder(dividingBy: 2 * Double.pi)
        yaw = wrapAngle(Float(sum.remainder(dividingBy: 2 * Double.pi)))
    }

    /// Sets the size about the centre (with a floor: the bottom stays on the floor).
    public mutating func setSize(_ newSize: Vec3) throws(CaptureKitError) {
        try Box.requireSize(newSize, "size")
        self = try with(size: newSize)
    }

    /// Scales the size per axis about the centre (with a floor: about the bottom).
    public mutating func scale(by factors: Vec3) throws(CaptureKitError) {
        try requireFinite(factors, "factors")
        guard factors.x > 0, factors.y > 0, factors.z > 0 else {
            throw .invalidArgument("factors \(factors.text) must be > 0")
        }
        let newSize = size * factors
        try Box.requireSize(newSize, "scaled size")
        self = try with(size: newSize)
    }

    /// Moves face `face` outward by `distance` (negative: inward); the opposite face stays put.
    /// - Throws: `invalidArgument` (face, size limits), `state` for the bottom face with a floor.
    public mutating func extendFace(_ face: Int, by distance: Float) throws(CaptureKitError) {
        guard (0..<6).contains(face) else { throw .invalidArgument("face must be 0...5 (got \(face))") }
        try requireFinite(distance, "distance")
        guard abs(distance) <= 2 * Box.maxSize else { throw .invalidArgument("distance \(distance) is beyond the size limits") }
        if face == 3, floor != nil {
            throw .state("the bottom face is held on the floor; extend the top face or clear the floor")
        }
        let n = Box.faceNormals[face]
        let axisGrowth = Vec3(abs(n.x), abs(n.y), abs(n.z)) * distance
        let newSize = size + axisGrowth
        try Box.requireSize(newSize, "resulting size")
        self = try with(center: center + toWorld(direction: n * (distance / 2)), size: newSize)
    }

    /// Sets the floor and stands the box on it.
    public mutating func setFloor(_ y: Float) throws(CaptureKitError) {
        try requireFinite(y, "floor_y")
        guard abs(y) <= Geometry.maxCoordinate else { throw .invalidArgument("floor_y is beyond ±\(Geometry.maxCoordinate) m") }
        self = try with(floor: .some(y))
    }

    /// Removes the floor; the box stays where it is.
    public mutating func clearFloor() { floor = nil }

    /// Stands the box on its floor with its centre above (x, z). - Throws: `state` without a floor.
    public mutating func placeOnFloor(x: Float, z: Float) throws(CaptureKitError) {
        guard floor != nil else { throw .state("the box has no floor; set one first") }
        try requireCoordinate(Vec3(x, 0, z), "(x, z)")
        self = try with(center: Vec3(x, center.y, z))
    }
}
