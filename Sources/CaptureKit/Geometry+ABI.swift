import CCaptureKitAPI
import CaptureKitCore

// Header section "Geometry: value types, poses, intrinsics".

@c @implementation public func ck_pose_from_quat(_ pose_out: UnsafeMutablePointer<ck_mat4>?, _ rotation: ck_quat,
                                                  _ translation: ck_vec3) -> ck_status {
    boundary("ck_pose_from_quat") { () throws(CaptureKitError) in
        let out = try required(pose_out, "pose_out")
        let pose = try Pose(rotation: rotation.quaternion, translation: translation.vec)
        out.pointee = ck_mat4(pose.matrix)
        return CK_OK
    }
}

@c @implementation public func ck_pose_look_at(_ pose_out: UnsafeMutablePointer<ck_mat4>?, _ eye: ck_vec3,
                                                _ target: ck_vec3, _ up: ck_vec3) -> ck_status {
    boundary("ck_pose_look_at") { () throws(CaptureKitError) in
        let out = try required(pose_out, "pose_out")
        out.pointee = ck_mat4(try Pose.lookAt(eye: eye.vec, target: target.vec, up: up.vec).matrix)
        return CK_OK
    }
}

@c @implementation public func ck_pose_to_quat(_ rotation_out: UnsafeMutablePointer<ck_quat>?,
                                                _ translation_out: UnsafeMutablePointer<ck_vec3>?,
                                                _ pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_pose_to_quat") { () throws(CaptureKitError) in
        let r = try required(rotation_out, "rotation_out")
        let t = try required(translation_out, "translation_out")
        let p = try readPose(pose, "pose")
        r.pointee = ck_quat(p.rotation)
        t.pointee = ck_vec3(p.t)
        return CK_OK
    }
}

@c @implementation public func ck_pose_inverse(_ out: UnsafeMutablePointer<ck_mat4>?, _ pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_pose_inverse") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let p = try readPose(pose, "pose")
        o.pointee = ck_mat4(p.inverse.matrix)
        return CK_OK
    }
}

@c @implementation public func ck_mat4_multiply(_ out: UnsafeMutablePointer<ck_mat4>?, _ a: UnsafePointer<ck_mat4>?,
                                                 _ b: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_mat4_multiply") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let ma = try required(a, "a").pointee.matrix, mb = try required(b, "b").pointee.matrix
        try ma.requireFinite("a")
        try mb.requireFinite("b")
        let product = ma * mb
        try product.requireFinite("the product a * b")
        o.pointee = ck_mat4(product)
        return CK_OK
    }
}

@c @implementation public func ck_mat4_transpose(_ out: UnsafeMutablePointer<ck_mat4>?, _ m: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_mat4_transpose") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let matrix = try required(m, "m").pointee.matrix
        try matrix.requireFinite("m")
        o.pointee = ck_mat4(matrix.transposed)
        return CK_OK
    }
}

@c @implementation public func ck_pose_opengl_to_opencv(_ out: UnsafeMutablePointer<ck_mat4>?, _ pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_pose_opengl_to_opencv") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        o.pointee = ck_mat4(try readPose(pose, "pose").flippedCameraAxes.matrix)
        return CK_OK
    }
}

@c @implementation public func ck_pose_opencv_to_opengl(_ out: UnsafeMutablePointer<ck_mat4>?, _ pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_pose_opencv_to_opengl") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        o.pointee = ck_mat4(try readPose(pose, "pose").flippedCameraAxes.matrix)
        return CK_OK
    }
}

@c @implementation public func ck_pose_yaw_pitch_roll(_ yaw_out: UnsafeMutablePointer<Float>?, _ pitch_out: UnsafeMutablePointer<Float>?,
                                                       _ roll_out: UnsafeMutablePointer<Float>?, _ pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_pose_yaw_pitch_roll") { () throws(CaptureKitError) in
        let y = try required(yaw_out, "yaw_out")
        let p = try required(pitch_out, "pitch_out")
        let r = try required(roll_out, "roll_out")
        let angles = try readPose(pose, "pose").yawPitchRoll
        y.pointee = angles.yaw; p.pointee = angles.pitch; r.pointee = angles.roll
        return CK_OK
    }
}

/// `layout` (ck_matrix_layout) as "column-major?".
private func columnMajor(_ layout: Int32) throws(CaptureKitError) -> Bool {
    switch layout {
    case Int32(CK_MATRIX_LAYOUT_ROW_MAJOR.rawValue): return false
    case Int32(CK_MATRIX_LAYOUT_COLUMN_MAJOR.rawValue): return true
    default: throw .invalidArgument("layout \(layout) is not a ck_matrix_layout (0 row-major, 1 column-major)")
    }
}

@c @implementation public func ck_intrinsics_from_matrix(_ intrinsics_out: UnsafeMutablePointer<ck_intrinsics>?,
                                                          _ matrix: UnsafePointer<Float>?, _ layout: Int32,
                                                          _ width: UInt32, _ height: UInt32) -> ck_status {
    boundary("ck_intrinsics_from_matrix") { () throws(CaptureKitError) in
        let out = try required(intrinsics_out, "intrinsics_out")
        let m = try required(matrix, "matrix")
        let k = try Intrinsics(matrix: Array(UnsafeBufferPointer(start: m, count: 9)), columnMajor: try columnMajor(layout),
                               width: width, height: height)
        out.pointee = ck_intrinsics(k)
        return CK_OK
    }
}

@c @implementation public func ck_intrinsics_to_matrix(_ matrix_out: UnsafeMutablePointer<Float>?,
                                                        _ intrinsics: UnsafePointer<ck_intrinsics>?, _ layout: Int32) -> ck_status {
    boundary("ck_intrinsics_to_matrix") { () throws(CaptureKitError) in
        let out = try required(matrix_out, "matrix_out")
        let k = try required(intrinsics, "intrinsics").pointee.validated("intrinsics")
        for (i, v) in k.matrix(columnMajor: try columnMajor(layout)).enumerated() { out[i] = v }
        return CK_OK
    }
}

@c @implementation public func ck_intrinsics_scale(_ out: UnsafeMutablePointer<ck_intrinsics>?, _ input: UnsafePointer<ck_intrinsics>?,
                                                    _ width: UInt32, _ height: UInt32) -> ck_status {
    boundary("ck_intrinsics_scale") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let k = try required(input, "in").pointee.validated("in")
        guard width >= 1, width <= Geometry.maxImageDimension, height >= 1, height <= Geometry.maxImageDimension else {
            throw .invalidArgument("width x height \(width)x\(height) must be within 1...\(Geometry.maxImageDimension)")
        }
        o.pointee = ck_intrinsics(try k.scaled(width: width, height: height))
        return CK_OK
    }
}
