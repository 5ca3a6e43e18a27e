import CCaptureKitAPI
import Foundation
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

/// The C entry points called directly (same symbols the .so exports).
@Suite struct ABITests {
    func lastError() -> String { String(cString: ck_last_error_message()) }

    @Test func errorsNameTheFunctionAndTheArgument() {
        var box = ck_box()
        #expect(ck_box_init(&box, ck_vec3(x: 0, y: 0, z: 0), ck_vec3(x: .nan, y: 1, z: 1), 0) == CK_E_INVALID_ARGUMENT)
        #expect(lastError().hasPrefix("ck_box_init: size"))
        #expect(ck_box_init(nil, ck_vec3(), ck_vec3(x: 1, y: 1, z: 1), 0) == CK_E_INVALID_ARGUMENT)
        #expect(lastError() == "ck_box_init: box_out is NULL")
        #expect(ck_box_corners(nil, &box) == CK_E_INVALID_ARGUMENT)
        #expect(lastError() == "ck_box_corners: corners_out is NULL")
    }

    @Test func statusStringsAreStaticAndComplete() {
        let codes: [ck_status] = [CK_OK, CK_MISS, CK_E_INVALID_ARGUMENT, CK_E_BUFFER_TOO_SMALL, CK_E_IO, CK_E_CORRUPT,
                                  CK_E_STATE, CK_E_UNSUPPORTED, CK_E_NOT_FOUND, CK_E_NO_MEMORY, CK_E_EXISTS]
        #expect(codes.map { $0 } == [0, 1, -1, -2, -3, -4, -5, -6, -7, -8, -9])
        let names = codes.map { String(cString: ck_status_string($0)) }
        #expect(Set(names).count == codes.count)
        #expect(names[2].hasPrefix("CK_E_INVALID_ARGUMENT"))
        #expect(String(cString: ck_status_string(-99)) == "unknown status")
        #expect(String(cString: ck_status_string(Int32.min)) == "unknown status")
        // The core's statuses mirror the header.
        #expect(CaptureKitError.Status.noMemory.rawValue == CK_E_NO_MEMORY)
        #expect(CaptureKitError.Status.invalidArgument.rawValue == CK_E_INVALID_ARGUMENT)
    }

    @Test func versionMatchesHeader() {
        #expect(ck_version_number() == UInt32(CK_VERSION_MAJOR * 10000 + CK_VERSION_MINOR * 100 + CK_VERSION_PATCH))
        #expect(String(cString: ck_version_string()) == "\(CK_VERSION_MAJOR).\(CK_VERSION_MINOR).\(CK_VERSION_PATCH)")
    }

    @Test func messagesAreThreadLocal() async {
        // Eight threads, each failing with its own argument name, read back only their own message.
        let ok = await withTaskGroup(of: Bool.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var good = true
                    for i in 0..<200 {
                        var box = ck_box()
                        _ = ck_box_init(&box, ck_vec3(), ck_vec3(x: 1, y: 1, z: 1), 0)
                        let status = t % 2 == 0 ? ck_box_rotate(&box, .infinity) : ck_box_set_floor(&box, .nan)
                        let message = String(cString: ck_last_error_message())
                        let want = t % 2 == 0 ? "ck_box_rotate: delta" : "ck_box_set_floor: floor_y"
                        if status != CK_E_INVALID_ARGUMENT || !message.hasPrefix(want) { good = false; print("thread \(t) iteration \(i): \(message)") }
                    }
                    return good
                }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(ok)
    }

    @Test func optionsVersioning() {
        var points = [ck_vec3(x: 0, y: 0, z: 0), ck_vec3(x: 1, y: 1, z: 1)]
        var box = ck_box()
        var opts = ck_fit_options()
        #expect(ck_fit_options_init_sized(&opts, MemoryLayout<ck_fit_options>.size) == CK_OK)
        #expect(opts.struct_size == 20 && opts.floor_margin == 0.01)
        #expect(ck_box_fit_points(&box, &points, 2, &opts) == CK_OK)
        #expect(ck_box_fit_points(&box, &points, 2, nil) == CK_OK)
        // A newer caller's bigger struct: zero tail accepted, non-zero tail unsupported.
        var bigger = [UInt8](repeating: 0, count: 32)
        withUnsafeBytes(of: opts) { src in for i in 0..<20 { bigger[i] = src[i] } }
        bigger[0] = 32
        bigger.withUnsafeBytes { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: ck_fit_options.self)  // trap-ok: test
            #expect(ck_box_fit_points(&box, &points, 2, p) == CK_OK)
        }
        bigger[25] = 1
        bigger.withUnsafeBytes { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: ck_fit_options.self)  // trap-ok: test
            #expect(ck_box_fit_points(&box, &points, 2, p) == CK_E_UNSUPPORTED)
        }
        opts.struct_size = 8
        #expect(ck_box_fit_points(&box, &points, 2, &opts) == CK_E_INVALID_ARGUMENT)
        #expect(ck_box_fit_points(&box, &points, -1, nil) == CK_E_INVALID_ARGUMENT)  // SIZE_MAX
        #expect(ck_box_fit_points(&box, nil, 0, nil) == CK_E_NOT_FOUND)
    }

    @Test func editsLeaveTheBoxUnchangedOnError() {
        var box = ck_box()
        #expect(ck_box_init(&box, ck_vec3(x: 1, y: 2, z: 3), ck_vec3(x: 1, y: 1, z: 1), 0.5) == CK_OK)
        #expect(ck_box_set_floor(&box, 0) == CK_OK)
        let before = box
        func same() -> Bool { withUnsafeBytes(of: box) { a in withUnsafeBytes(of: before) { b in a.elementsEqual(b) } } }
        #expect(ck_box_extend_face(&box, CK_FACE_BOTTOM.rawValue, 0.1) == CK_E_STATE); #expect(same())
        #expect(ck_box_extend_face(&box, 6, 0.1) == CK_E_INVALID_ARGUMENT); #expect(same())
        #expect(ck_box_extend_face(&box, 2, -0.995) == CK_E_INVALID_ARGUMENT); #expect(same())
        #expect(ck_box_scale(&box, ck_vec3(x: 1, y: .infinity, z: 1)) == CK_E_INVALID_ARGUMENT); #expect(same())
        #expect(ck_box_set_size(&box, ck_vec3(x: 1, y: 0, z: 1)) == CK_E_INVALID_ARGUMENT); #expect(same())
        #expect(ck_box_set_center(&box, ck_vec3(x: 2e6, y: 0, z: 0)) == CK_E_INVALID_ARGUMENT); #expect(same())
        box.has_floor = 2
        #expect(ck_box_rotate(&box, 0.1) == CK_E_INVALID_ARGUMENT)
        #expect(lastError().contains("has_floor"))
    }

    @Test func gridReportsTheNeededCapacity() {
        var pose = ck_mat4()
        withUnsafeMutableBytes(of: &pose.m) { raw in
            let f = raw.bindMemory(to: Float.self)
            for i in 0..<16 { f[i] = i % 5 == 0 ? 1 : 0 }
        }
        var k = ck_intrinsics(fx: 10, fy: 10, cx: 4, cy: 3, width: 8, height: 6)
        var box = ck_box()
        _ = ck_box_init(&box, ck_vec3(x: 0, y: 0, z: -3), ck_vec3(x: 1, y: 1, z: 1), 0)
        var faces = [Int32](repeating: 7, count: 48), dist = [Float](repeating: 7, count: 48)
        var count = 0
        #expect(ck_ray_box_grid(&faces, &dist, 47, &count, &pose, &k, &box) == CK_E_BUFFER_TOO_SMALL)
        #expect(count == 48 && faces.allSatisfy { $0 == 7 })
        #expect(ck_ray_box_grid(&faces, &dist, 48, &count, &pose, &k, &box) == CK_OK)
        #expect(faces.contains(5) && faces.contains(-1))  // the back face is seen, the corners of the image miss
    }

    // MARK: API 0.2: the shape of every call

    @Test func imageAndDepthMapAreFrozen32ByteValues() {
        #expect(MemoryLayout<ck_image>.size == 32 && MemoryLayout<ck_depth_map>.size == 32)
        #expect(MemoryLayout<ck_image>.offset(of: \ck_image.stride) == 16 && MemoryLayout<ck_image>.offset(of: \ck_image.format) == 24)
        #expect(MemoryLayout<ck_depth_map>.offset(of: \ck_depth_map.stride) == 16)
        #expect(ck_format_size(Int32(CK_FORMAT_DEPTH_F32.rawValue)) == 4 && ck_format_size(Int32(CK_FORMAT_U8.rawValue)) == 1)
        #expect(CK_IMAGE_FORMAT_NONE.rawValue == 0 && CK_IMAGE_FORMAT_GRAY16.rawValue == 4)
    }

    @Test func closeAcceptsNullAndReturnsAStatus() {
        #expect(ck_depth_reader_close(nil) == CK_OK)
        #expect(ck_zstream_reader_close(nil) == CK_OK)
        #expect(ck_session_close(nil) == CK_OK)
        #expect(ck_dataset_close(nil) == CK_OK && ck_dataset_cancel(nil) == CK_OK)
    }

    @Test func sharpnessOfAStridedImageEqualsThePackedOne() {
        let w = 20, h = 9, stride = 32
        var packed = [UInt8](repeating: 0, count: w * h), padded = [UInt8](repeating: 0xEE, count: stride * h)
        for y in 0..<h { for x in 0..<w { let v = UInt8(truncatingIfNeeded: x &* 37 &+ y &* 11 &+ (x * y) % 7); packed[y * w + x] = v; padded[y * stride + x] = v } }
        let gray = Int32(CK_IMAGE_FORMAT_GRAY8.rawValue)
        var a: Float = -1, b: Float = -2
        packed.withUnsafeBytes { p in
            var image = ck_image(data: p.baseAddress, width: UInt32(w), height: UInt32(h), stride: 0, format: gray, reserved: 0)
            #expect(ck_sharpness_score(&a, &image) == CK_OK)
        }
        padded.withUnsafeBytes { p in
            var image = ck_image(data: p.baseAddress, width: UInt32(w), height: UInt32(h), stride: stride, format: gray, reserved: 0)
            #expect(ck_sharpness_score(&b, &image) == CK_OK)
            image.format = Int32(CK_IMAGE_FORMAT_RGB8.rawValue)
            #expect(ck_sharpness_score(&b, &image) == CK_E_INVALID_ARGUMENT)
            image.format = gray; image.stride = w - 1
            #expect(ck_sharpness_score(&b, &image) == CK_E_INVALID_ARGUMENT)
        }
        #expect(a == b && a > 0)
        #expect(ck_sharpness_score(&a, nil) == CK_E_INVALID_ARGUMENT)
    }

    @Test func placeAtPixelTakesANullHit() {
        var pose = ck_mat4(m: (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1.5, 0, 1))
        var k = ck_intrinsics(fx: 100, fy: 100, cx: 50, cy: 40, width: 100, height: 80)
        var box = ck_box(), hit = ck_hit()
        _ = ck_box_init(&box, ck_vec3(x: 0, y: 0.25, z: -2), ck_vec3(x: 0.5, y: 0.5, z: 0.5), 0)
        #expect(ck_box_place_at_pixel(&hit, &box, &pose, &k, 50, 79) == CK_E_STATE)  // no floor yet
        #expect(ck_box_set_floor(&box, 0) == CK_OK)
        var other = box
        #expect(ck_box_place_at_pixel(&hit, &box, &pose, &k, 50, 79) == CK_OK)
        #expect(ck_box_place_at_pixel(nil, &other, &pose, &k, 50, 79) == CK_OK)
        #expect(withUnsafeBytes(of: box) { a in withUnsafeBytes(of: other) { b in a.elementsEqual(b) } })
        #expect(hit.point.y == 0 && hit.face == CK_FACE_NONE.rawValue)
    }

    @Test func outputBuffersFollowTheTripleRule() {
        var scene: OpaquePointer?
        #expect(ck_scene_create(&scene, 3) == CK_OK)
        defer { ck_scene_free(scene) }
        var pose = ck_mat4(m: (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1.2, 2.5, 1))
        var k = ck_intrinsics(fx: 8, fy: 8, cx: 4, cy: 3, width: 8, height: 6)
        var rgb = [UInt8](repeating: 0xA5, count: 8 * 6 * 3), written = 0
        #expect(ck_scene_render_rgb(&rgb, rgb.count - 1, &written, scene, &pose, &k) == CK_E_BUFFER_TOO_SMALL)
        #expect(written == 144 && rgb.allSatisfy { $0 == 0xA5 })
        #expect(ck_scene_render_rgb(&rgb, rgb.count, nil, scene, &pose, &k) == CK_OK)
        #expect(!rgb.allSatisfy { $0 == 0xA5 })
        var depth = [Float](repeating: -1, count: 48), conf = [UInt8](repeating: 9, count: 48)
        written = 0
        #expect(ck_scene_render_depth(&depth, &conf, 47, &written, scene, &pose, &k, 0) == CK_E_BUFFER_TOO_SMALL)
        #expect(written == 48 && depth.allSatisfy { $0 == -1 } && conf.allSatisfy { $0 == 9 })
        #expect(ck_scene_render_depth(&depth, nil, 48, &written, scene, &pose, &k, 0) == CK_OK && written == 48)
        #expect(depth.allSatisfy { $0 >= 0 } && conf.allSatisfy { $0 == 9 })
    }
}
