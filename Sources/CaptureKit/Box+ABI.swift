import CCaptureKitAPI
import CaptureKitCore

// Header section "Oriented bounding box".

@c @implementation public func ck_box_init(_ box_out: UnsafeMutablePointer<ck_box>?, _ center: ck_vec3, _ size: ck_vec3, _ yaw: Float) -> ck_status {
    boundary("ck_box_init") { () throws(CaptureKitError) in
        let out = try required(box_out, "box_out")
        out.pointee = ck_box(try Box(center: center.vec, size: size.vec, yaw: yaw))
        return CK_OK
    }
}

@c @implementation public func ck_box_corners(_ corners_out: UnsafeMutablePointer<ck_vec3>?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_box_corners") { () throws(CaptureKitError) in
        let out = try required(corners_out, "corners_out")
        let b = try required(box, "box").pointee.validated(seat: false)
        for (i, c) in b.corners.enumerated() { out[i] = ck_vec3(c) }
        return CK_OK
    }
}

@c @implementation public func ck_box_face(_ center_out: UnsafeMutablePointer<ck_vec3>?, _ normal_out: UnsafeMutablePointer<ck_vec3>?,
                                            _ orientation_out: UnsafeMutablePointer<ck_quat>?, _ box: UnsafePointer<ck_box>?,
                                            _ face: Int32) -> ck_status {
    boundary("ck_box_face") { () throws(CaptureKitError) in
        let c = try required(center_out, "center_out")
        let n = try required(normal_out, "normal_out")
        let q = try required(orientation_out, "orientation_out")
        let b = try required(box, "box").pointee.validated(seat: false)
        let f = try b.face(Int(face))
        c.pointee = ck_vec3(f.center); n.pointee = ck_vec3(f.normal); q.pointee = ck_quat(f.orientation)
        return CK_OK
    }
}

@c @implementation public func ck_box_contains(_ inside_out: UnsafeMutablePointer<Int32>?, _ box: UnsafePointer<ck_box>?, _ point: ck_vec3) -> ck_status {
    boundary("ck_box_contains") { () throws(CaptureKitError) in
        let out = try required(inside_out, "inside_out")
        let b = try required(box, "box").pointee.validated(seat: false)
        try requireFiniteVector(point.vec, "point")
        out.pointee = b.contains(point.vec) ? 1 : 0
        return CK_OK
    }
}

@c @implementation public func ck_box_set_center(_ box: UnsafeMutablePointer<ck_box>?, _ center: ck_vec3) -> ck_status {
    boundary("ck_box_set_center") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.setCenter(center.vec) } }
}

@c @implementation public func ck_box_translate(_ box: UnsafeMutablePointer<ck_box>?, _ delta: ck_vec3) -> ck_status {
    boundary("ck_box_translate") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.translate(by: delta.vec) } }
}

@c @implementation public func ck_box_translate_camera(_ box: UnsafeMutablePointer<ck_box>?, _ camera_pose: UnsafePointer<ck_mat4>?,
                                                        _ right: Float, _ up: Float, _ forward: Float) -> ck_status {
    boundary("ck_box_translate_camera") { () throws(CaptureKitError) in
        let pose = try readPose(camera_pose, "camera_pose")
        return try editBox(box) { (b) throws(CaptureKitError) in try b.translate(relativeTo: pose, right: right, up: up, forward: forward) }
    }
}

@c @implementation public func ck_box_face_camera(_ box: UnsafeMutablePointer<ck_box>?, _ camera_pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_box_face_camera") { () throws(CaptureKitError) in
        let pose = try readPose(camera_pose, "camera_pose")
        return try editBox(box) { (b) throws(CaptureKitError) in try b.faceCamera(pose) }
    }
}

@c @implementation public func ck_box_set_yaw(_ box: UnsafeMutablePointer<ck_box>?, _ yaw: Float) -> ck_status {
    boundary("ck_box_set_yaw") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.setYaw(yaw) } }
}

@c @implementation public func ck_box_rotate(_ box: UnsafeMutablePointer<ck_box>?, _ delta: Float) -> ck_status {
    boundary("ck_box_rotate") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.rotate(by: delta) } }
}

@c @implementation public func ck_box_rotate_degrees(_ box: UnsafeMutablePointer<ck_box>?, _ delta_degrees: Float) -> ck_status {
    boundary("ck_box_rotate_degrees") { () throws(CaptureKitError) in
        guard delta_degrees.isFinite else { throw .invalidArgument("delta_degrees is not finite (\(delta_degrees))") }
        let radians = Float((Double(delta_degrees).remainder(dividingBy: 360)) * Double.pi / 180)
        return try editBox(box) { (b) throws(CaptureKitError) in try b.rotate(by: radians) }
    }
}

@c @implementation public func ck_box_set_size(_ box: UnsafeMutablePointer<ck_box>?, _ size: ck_vec3) -> ck_status {
    boundary("ck_box_set_size") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.setSize(size.vec) } }
}

@c @implementation public func ck_box_scale(_ box: UnsafeMutablePointer<ck_box>?, _ factors: ck_vec3) -> ck_status {
    boundary("ck_box_scale") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.scale(by: factors.vec) } }
}

@c @implementation public func ck_box_extend_face(_ box: UnsafeMutablePointer<ck_box>?, _ face: Int32, _ distance: Float) -> ck_status {
    boundary("ck_box_extend_face") { () throws(CaptureKitError) in
        try editBox(box) { (b) throws(CaptureKitError) in try b.extendFace(Int(face), by: distance) }
    }
}

@c @implementation public func ck_box_set_floor(_ box: UnsafeMutablePointer<ck_box>?, _ floor_y: Float) -> ck_status {
    boundary("ck_box_set_floor") { () throws(CaptureKitError) in try editBox(box) { (b) throws(CaptureKitError) in try b.setFloor(floor_y) } }
}

@c @implementation public func ck_box_clear_floor(_ box: UnsafeMutablePointer<ck_box>?) -> ck_status {
    boundary("ck_box_clear_floor") { () throws(CaptureKitError) in
        let p = try required(box, "box")
        var b = try p.pointee.validated(seat: false)  // clearing keeps the box exactly where it is
        b.clearFloor()
        p.pointee = ck_box(b)
        return CK_OK
    }
}

@c @implementation public func ck_box_place_on_floor(_ box: UnsafeMutablePointer<ck_box>?, _ x: Float, _ z: Float) -> ck_status {
    boundary("ck_box_place_on_floor") { () throws(CaptureKitError) in
        try editBox(box) { (b) throws(CaptureKitError) in try b.placeOnFloor(x: x, z: z) }
    }
}

extension ck_fit_options: GrowableStruct {
    static let firstReleaseSize = 20  // 0.1
    static var defaults: ck_fit_options {
        ck_fit_options(struct_size: UInt32(MemoryLayout<ck_fit_options>.size), use_floor: 0, floor: 0, floor_margin: 0.01, padding: 0)
    }
}

@c @implementation public func ck_fit_options_init_sized(_ options_out: UnsafeMutablePointer<ck_fit_options>?, _ struct_size: Int) -> ck_status {
    boundary("ck_fit_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_fit_options.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_fit_options_init(_ options_out: UnsafeMutablePointer<ck_fit_options>?) -> ck_status {
    boundary("ck_fit_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_fit_options.firstReleaseSize, ck_fit_options.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_floor_from_points(_ floor_y_out: UnsafeMutablePointer<Float>?, _ inliers_out: UnsafeMutablePointer<Int>?,
                                                     _ points: UnsafePointer<ck_vec3>?, _ count: Int, _ tolerance: Float) -> ck_status {
    boundary("ck_floor_from_points") { () throws(CaptureKitError) in
        let out = try required(floor_y_out, "floor_y_out")
        let n = try checkedCount(count, stride: MemoryLayout<ck_vec3>.stride, "count")
        guard tolerance > 0, tolerance <= 1 else { throw .invalidArgument("tolerance \(tolerance) must be in (0, 1] m") }
        var ys: [Float] = []
        if n > 0 {
            let base = try required(points, "points")
            ys.reserveCapacity(n)
            for i in 0..<n {
                let p = base[i]
                guard p.x.isFinite, p.y.isFinite, p.z.isFinite else { throw .invalidArgument("points[\(i)] is not finite") }
                ys.append(p.y)
            }
        }
        guard let floor = Box.floorHeight(ys: ys, tolerance: tolerance) else {
            throw .notFound("no horizontal layer holds 3 points (\(n) points)")
        }
        out.pointee = floor.y
        inliers_out?.pointee = floor.inliers
        return CK_OK
    }
}

@c @implementation public func ck_box_fit_points(_ box_out: UnsafeMutablePointer<ck_box>?, _ points: UnsafePointer<ck_vec3>?,
                                                  _ count: Int, _ options: UnsafePointer<ck_fit_options>?) -> ck_status {
    boundary("ck_box_fit_points") { () throws(CaptureKitError) in
        let out = try required(box_out, "box_out")
        let n = try checkedCount(count, stride: MemoryLayout<ck_vec3>.stride, "count")
        let opts = try readOptions(options, "options", defaults: FitOptions()) { (o: ck_fit_options) throws(CaptureKitError) in
            guard o.use_floor == 0 || o.use_floor == 1 else {
                throw .invalidArgument("options.use_floor must be 0 or 1 (got \(o.use_floor))")
            }
            return FitOptions(floor: o.use_floor == 1 ? o.floor : nil, floorMargin: o.floor_margin, padding: o.padding)
        }
        let base: UnsafePointer<ck_vec3>
        if n == 0 {
            throw .notFound("no points (count is 0)")
        } else {
            base = try required(points, "points")
        }
        // ck_vec3 and SIMD3<Float> differ in stride (12 vs 16): copy into the core's layout.
        var pts: [Vec3] = []
        pts.reserveCapacity(n)
        for i in 0..<n { pts.append(base[i].vec) }
        let box = try pts.withUnsafeBufferPointer { (buf) throws(CaptureKitError) in try Box.fit(points: buf, options: opts) }
        out.pointee = ck_box(box)
        return CK_OK
    }
}

func requireFiniteVector(_ v: Vec3, _ name: String) throws(CaptureKitError) {
    guard v.x.isFinite, v.y.isFinite, v.z.isFinite else { throw .invalidArgument("\(name) is not finite (\(v.x), \(v.y), \(v.z))") }
}
