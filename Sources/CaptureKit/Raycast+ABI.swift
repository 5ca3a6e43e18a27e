import CCaptureKitAPI
import CaptureKitCore

// Header section "Raycast".

@c @implementation public func ck_ray_from_pixel(_ ray_out: UnsafeMutablePointer<ck_ray>?, _ camera_pose: UnsafePointer<ck_mat4>?,
                                                  _ intrinsics: UnsafePointer<ck_intrinsics>?, _ u: Float, _ v: Float) -> ck_status {
    boundary("ck_ray_from_pixel") { () throws(CaptureKitError) in
        let out = try required(ray_out, "ray_out")
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        let ray = try Ray(pixelU: u, v: v, pose: pose, intrinsics: k)
        out.pointee = ck_ray(origin: ck_vec3(ray.origin), direction: ck_vec3(ray.direction))
        return CK_OK
    }
}

func readRay(_ p: UnsafePointer<ck_ray>?) throws(CaptureKitError) -> Ray {
    let r = try required(p, "ray").pointee
    return try Ray(origin: r.origin.vec, direction: r.direction.vec)
}

/// Writes a hit (or the miss record) and returns CK_OK or CK_MISS.
func report(_ hit: Hit?, _ out: UnsafeMutablePointer<ck_hit>) -> ck_status {
    out.pointee = ck_hit(hit ?? .miss)
    return hit == nil ? CK_MISS : CK_OK
}

@c @implementation public func ck_ray_plane(_ hit_out: UnsafeMutablePointer<ck_hit>?, _ ray: UnsafePointer<ck_ray>?,
                                             _ point: ck_vec3, _ normal: ck_vec3) -> ck_status {
    boundary("ck_ray_plane") { () throws(CaptureKitError) in
        let out = try required(hit_out, "hit_out")
        let r = try readRay(ray)
        return report(try r.intersect(planePoint: point.vec, normal: normal.vec), out)
    }
}

@c @implementation public func ck_ray_floor(_ hit_out: UnsafeMutablePointer<ck_hit>?, _ ray: UnsafePointer<ck_ray>?, _ floor_y: Float) -> ck_status {
    boundary("ck_ray_floor") { () throws(CaptureKitError) in
        let out = try required(hit_out, "hit_out")
        let r = try readRay(ray)
        return report(try r.intersect(floorY: floor_y), out)
    }
}

@c @implementation public func ck_ray_box(_ hit_out: UnsafeMutablePointer<ck_hit>?, _ ray: UnsafePointer<ck_ray>?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_ray_box") { () throws(CaptureKitError) in
        let out = try required(hit_out, "hit_out")
        let r = try readRay(ray)
        let b = try required(box, "box").pointee.validated(seat: false)
        return report(r.intersect(box: b), out)
    }
}

@c @implementation public func ck_ray_box_pixels(_ faces_out: UnsafeMutablePointer<Int32>?, _ distances_out: UnsafeMutablePointer<Float>?,
                                                      _ pixels_uv: UnsafePointer<Float>?, _ count: Int,
                                                      _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                      _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_ray_box_pixels") { () throws(CaptureKitError) in
        let n = try checkedCount(count, stride: 8, limit: Int(Int32.max), "count")
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        let b = try required(box, "box").pointee.validated(seat: false)
        if n == 0 { return CK_OK }
        let faces = try required(faces_out, "faces_out")
        let distances = try required(distances_out, "distances_out")
        let uv = try required(pixels_uv, "pixels_uv")
        BoxRaycaster(pose: pose, intrinsics: k, box: b).cast(
            pixelsUV: UnsafeBufferPointer(start: uv, count: 2 * n),
            faces: UnsafeMutableBufferPointer(start: faces, count: n),
            distances: UnsafeMutableBufferPointer(start: distances, count: n))
        return CK_OK
    }
}

@c @implementation public func ck_ray_box_grid(_ faces_dst: UnsafeMutablePointer<Int32>?, _ distances_dst: UnsafeMutablePointer<Float>?,
                                                _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_ray_box_grid") { () throws(CaptureKitError) in
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        let b = try required(box, "box").pointee.validated(seat: false)
        let needed = Int(k.width) * Int(k.height)  // ≤ 2^32: no overflow on 64-bit
        try checkCapacity(dst_capacity, needed: needed, written_out, unit: "rays", elementSize: 8)
        let faces = try required(faces_dst, "faces_dst")
        let distances = try required(distances_dst, "distances_dst")
        BoxRaycaster(pose: pose, intrinsics: k, box: b).castGrid(
            faces: UnsafeMutableBufferPointer(start: faces, count: needed),
            distances: UnsafeMutableBufferPointer(start: distances, count: needed))
        written_out?.pointee = needed
        return CK_OK
    }
}

@c @implementation public func ck_box_place_at_pixel(_ hit_out: UnsafeMutablePointer<ck_hit>?, _ box: UnsafeMutablePointer<ck_box>?,
                                                      _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                      _ u: Float, _ v: Float) -> ck_status {
    boundary("ck_box_place_at_pixel") { () throws(CaptureKitError) in
        let boxPtr = try required(box, "box")
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        var b = try boxPtr.pointee.validated(seat: true)
        let hit = try b.place(atPixelU: u, v: v, pose: pose, intrinsics: k)
        if hit != nil { boxPtr.pointee = ck_box(b) }
        hit_out?.pointee = ck_hit(hit ?? .miss)
        return hit == nil ? CK_MISS : CK_OK
    }
}
