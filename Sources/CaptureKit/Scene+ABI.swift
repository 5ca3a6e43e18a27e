import CCaptureKitAPI
import CaptureKitCore

// Header section ck_scene.h: the synthetic test scene.

@c @implementation public func ck_scene_create(_ scene_out: UnsafeMutablePointer<OpaquePointer?>?, _ seed: UInt64) -> ck_status {
    boundary("ck_scene_create") { () throws(CaptureKitError) in
        let out = try required(scene_out, "scene_out")
        out.pointee = handOut(SceneHandle(SyntheticScene(seed: seed)))
        return CK_OK
    }
}

/// Scenes are values in the core; the handle boxes one.
final class SceneHandle {
    let scene: SyntheticScene
    init(_ scene: SyntheticScene) { self.scene = scene }
}

@c @implementation public func ck_scene_free(_ scene: OpaquePointer?) {
    release(scene, as: SceneHandle.self)
}

@c @implementation public func ck_scene_target(_ box_out: UnsafeMutablePointer<ck_box>?, _ scene: OpaquePointer?) -> ck_status {
    boundary("ck_scene_target") { () throws(CaptureKitError) in
        let out = try required(box_out, "box_out")
        out.pointee = ck_box(try object(scene, "scene", as: SceneHandle.self).scene.target)
        return CK_OK
    }
}

@c @implementation public func ck_scene_render_depth(_ depth_dst: UnsafeMutablePointer<Float>?, _ confidence_dst: UnsafeMutablePointer<UInt8>?,
                                                      _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                      _ scene: OpaquePointer?, _ camera_pose: UnsafePointer<ck_mat4>?,
                                                      _ intrinsics: UnsafePointer<ck_intrinsics>?, _ frame: UInt64) -> ck_status {
    boundary("ck_scene_render_depth") { () throws(CaptureKitError) in
        let s = try object(scene, "scene", as: SceneHandle.self).scene
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        guard depth_dst != nil || confidence_dst != nil else { throw .invalidArgument("depth_dst and confidence_dst are both NULL") }
        let n = Int(k.width) * Int(k.height)
        try checkCapacity(dst_capacity, needed: n, written_out, unit: "samples", elementSize: MemoryLayout<Float>.stride)
        // Render into owned buffers, then copy what the caller asked for.
        var depth = [Float](repeating: 0, count: n), conf = [UInt8](repeating: 0, count: n)
        depth.withUnsafeMutableBufferPointer { d in conf.withUnsafeMutableBufferPointer { c in
            s.renderDepth(pose: pose, intrinsics: k, frame: frame, depth: d, confidence: c) } }
        if let depth_dst { depth.withUnsafeBufferPointer { d in if let b = d.baseAddress { depth_dst.update(from: b, count: n) } } }
        if let confidence_dst { conf.withUnsafeBufferPointer { c in if let b = c.baseAddress { confidence_dst.update(from: b, count: n) } } }
        written_out?.pointee = n
        return CK_OK
    }
}

@c @implementation public func ck_scene_render_rgb(_ dst: UnsafeMutablePointer<UInt8>?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                    _ scene: OpaquePointer?, _ camera_pose: UnsafePointer<ck_mat4>?,
                                                    _ intrinsics: UnsafePointer<ck_intrinsics>?) -> ck_status {
    boundary("ck_scene_render_rgb") { () throws(CaptureKitError) in
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let s = try object(scene, "scene", as: SceneHandle.self).scene
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        let n = Int(k.width) * Int(k.height) * 3
        try checkCapacity(cap, needed: n, written_out)
        let out = try required(dst, "dst")
        s.renderColor(pose: pose, intrinsics: k, rgb: UnsafeMutableBufferPointer(start: out, count: n))
        written_out?.pointee = n
        return CK_OK
    }
}
