import CCaptureKitAPI
import CaptureKitCore

// Conversions between the header's value types and the core's.


extension ck_vec3 {
    var vec: Vec3 { Vec3(x, y, z) }
    init(_ v: Vec3) { self.init(x: v.x, y: v.y, z: v.z) }
}

extension ck_quat {
    var quaternion: Quaternion { Quaternion(x: x, y: y, z: z, w: w) }
    init(_ q: Quaternion) { self.init(x: q.x, y: q.y, z: q.z, w: q.w) }
}

extension ck_mat4 {
    var matrix: Matrix4 {
        withUnsafeBytes(of: m) { raw in
            let f = raw.bindMemory(to: Float.self)
            return Matrix4(SIMD4(f[0], f[1], f[2], f[3]), SIMD4(f[4], f[5], f[6], f[7]),
                           SIMD4(f[8], f[9], f[10], f[11]), SIMD4(f[12], f[13], f[14], f[15]))
        }
    }
    init(_ matrix: Matrix4) {
        self.init()
        let (a, b, c, d) = matrix.columns
        m = (a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w)
    }
}

extension ck_intrinsics {
    /// All fields zero: "not given" where a call derives the intrinsics (a depth map's).
    var isZero: Bool { fx == 0 && fy == 0 && cx == 0 && cy == 0 && width == 0 && height == 0 }

    func validated(_ name: String = "intrinsics") throws(CaptureKitError) -> Intrinsics {
        try Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: width, height: height, name: name)
    }
    init(_ k: Intrinsics) {
        self.init(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height)
    }
}

extension ck_box {
    /// The validated core box. `seat` stands it on its floor (edits); read-only queries use the
    /// box exactly as given.
    func validated(_ name: String = "box", seat: Bool) throws(CaptureKitError) -> Box {
        guard has_floor == 0 || has_floor == 1 else {
            throw .invalidArgument("\(name).has_floor must be 0 or 1 (got \(has_floor))")
        }
        do {
            return try Box(center: center.vec, size: size.vec, yaw: yaw, floor: has_floor == 1 ? floor : nil, seat: seat)
        } catch {
            throw .invalidArgument("\(name).\(error.message)")
        }
    }
    init(_ b: Box) {
        self.init(center: ck_vec3(b.center), size: ck_vec3(b.size), yaw: b.yaw,
                  floor: b.floor ?? 0, has_floor: b.floor == nil ? 0 : 1)
    }
}

extension ck_hit {
    init(_ h: Hit) {
        self.init(point: ck_vec3(h.point), distance: h.distance, face: h.face, inside: h.inside ? 1 : 0)
    }
}

/// Reads a pose argument as a validated rigid transform.
func readPose(_ p: UnsafePointer<ck_mat4>?, _ name: String) throws(CaptureKitError) -> Pose {
    try Pose(try required(p, name).pointee.matrix, name: name)
}

/// Edits a caller's box in place: validates it (seated on its floor), applies `edit`, and writes
/// it back only on success.
func editBox(_ box: UnsafeMutablePointer<ck_box>?, _ edit: (inout Box) throws(CaptureKitError) -> Void) throws(CaptureKitError) -> ck_status {
    let p = try required(box, "box")
    var b = try p.pointee.validated(seat: true)
    try edit(&b)
    p.pointee = ck_box(b)
    return CK_OK
}
