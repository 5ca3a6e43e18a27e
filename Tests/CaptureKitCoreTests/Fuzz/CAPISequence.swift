import CCaptureKitAPI
import Glibc
@testable import CaptureKitCore

/// The API-sequence target: the input is a program of `ck_*` calls (one opcode byte, then the
/// call's arguments), run against a table of live handles of every type. Arguments are hostile:
/// NaN/inf/huge floats, sizes such as SIZE_MAX and 1 << 62, NULL for every handle and pointer.
/// The invariant is the C contract: every call returns a documented status and never traps or
/// touches memory it was not given; freed handles are never reused (the harness forgets them).
///
/// Buffers the harness passes are really as large as the size it claims, except for claims no
/// buffer can satisfy (negative as `Int`, 1 << 62, `Int.max`), which the library must refuse
/// before touching anything. Strides above the row size are claimed only with height 1 or when
/// `(height − 1) × stride` overflows, for the same reason (a C caller cannot have such a buffer).
extension FuzzTargets {
    static let maxOps = 48

    /// Live handles (nil = none yet; the program may pass NULL on purpose anyway).
    final class Handles {
        var scheduler: OpaquePointer?, coverage: OpaquePointer?, codec: OpaquePointer?
        var depthWriter: OpaquePointer?, depthReader: OpaquePointer?
        var zWriter: OpaquePointer?, zReader: OpaquePointer?
        var scene: OpaquePointer?, dataset: OpaquePointer?
        var box = ck_box(center: ck_vec3(x: 0, y: 0, z: -2), size: ck_vec3(x: 0.5, y: 0.5, z: 0.5), yaw: 0, floor: 0, has_floor: 0)

        deinit {
            ck_scheduler_free(scheduler); ck_coverage_free(coverage); ck_depth_codec_free(codec)
            _ = ck_depth_writer_close(depthWriter); ck_depth_reader_free(depthReader)
            _ = ck_zstream_writer_close(zWriter); ck_zstream_reader_free(zReader)
            ck_scene_free(scene); _ = ck_dataset_close(dataset)
        }
    }

    static func vec3(_ i: inout FuzzInput) -> ck_vec3 { ck_vec3(x: i.float(), y: i.float(), z: i.float()) }

    /// A pose: identity-ish most of the time, sometimes hostile numbers in every slot.
    static func pose(_ i: inout FuzzInput) -> ck_mat4 {
        var m = ck_mat4(m: (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1))
        switch i.u8() % 4 {
        case 0: withUnsafeMutableBytes(of: &m.m) { b in for k in 0..<16 { b.storeBytes(of: i.float(), toByteOffset: 4 * k, as: Float.self) } }
        case 1: m.m.12 = i.float(); m.m.13 = i.float(); m.m.14 = i.float()
        default: break
        }
        return m
    }

    static func intrinsics(_ i: inout FuzzInput) -> ck_intrinsics {
        if i.bool() { return ck_intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12) }
        let dims: [UInt32] = [0, 1, 16, 65536, 65537, UInt32.max]
        return ck_intrinsics(fx: i.float(), fy: i.float(), cx: i.float(), cy: i.float(),
                             width: dims[Int(i.u8()) % dims.count], height: dims[Int(i.u8()) % dims.count])
    }

    /// `p` or NULL (one time in eight).
    static func maybe<T>(_ i: inout FuzzInput, _ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T>? { i.u8() % 8 == 0 ? nil : p }

    /// A handle or NULL.
    static func handle(_ i: inout FuzzInput, _ h: OpaquePointer?) -> OpaquePointer? { i.u8() % 8 == 0 ? nil : h }

    static func capiSequence(_ data: [UInt8]) throws(FuzzFailure) {
        var i = FuzzInput(data)
        let h = Handles()
        let dir = FuzzScratch.folder("capi_sequence")
        var ops = 0
        while !i.isAtEnd && ops < maxOps {
            ops += 1
            let s = try step(&i, h, dir)
            // Every status is a documented one (CK_OK, CK_MISS, CK_END or a negative CK_E_*) and, on
            // failure, the thread's message is set.
            try require(s >= -20 && s <= 2, "status \(s) is not a ck_status")
            if s < 0 { try require(ck_last_error_message().map { $0.pointee != 0 } ?? false, "failure \(s) without a message") }
        }
    }

    /// Runs one call; returns its status (0 for void calls).
    static func step(_ i: inout FuzzInput, _ h: Handles, _ dir: String) throws(FuzzFailure) -> Int32 {
        var box = h.box
        switch i.u8() % 40 {
        // Geometry and box (value types).
        case 0:
            let s = ck_box_init(maybe(&i, &box), vec3(&i), vec3(&i), i.float())
            if s == CK_OK { h.box = box }
            return s
        case 1: let s = ck_box_set_floor(maybe(&i, &box), i.float()); h.box = box; return s
        case 2: let s = ck_box_extend_face(maybe(&i, &box), Int32(bitPattern: i.u32() % 8 &- 1), i.float()); h.box = box; return s
        case 3: var m = pose(&i); let s = ck_box_translate_camera(maybe(&i, &box), &m, i.float(), i.float(), i.float()); h.box = box; return s
        case 4:
            var c = [ck_vec3](repeating: ck_vec3(), count: 8)
            return c.withUnsafeMutableBufferPointer { ck_box_corners(i.bool() ? $0.baseAddress : nil, &box) }
        case 5:
            let n = Int(i.u8() % 16)
            let pts = (0..<n).map { _ in vec3(&i) }
            var out = ck_box()
            let count = i.size(fit: n)
            guard count <= n || count < 0 || count > Int.max / 16 else { return 0 }
            return pts.withUnsafeBufferPointer { ck_box_fit_points(&out, $0.baseAddress, count, nil) }
        case 6:
            var m = pose(&i), k = intrinsics(&i), ray = ck_ray(), hit = ck_hit()
            let s = ck_ray_from_pixel(maybe(&i, &ray), &m, &k, i.float(), i.float())
            _ = ck_ray_box(&hit, &ray, &box)
            _ = ck_ray_floor(&hit, &ray, i.float())
            return s
        case 7:
            var m = pose(&i), k = intrinsics(&i), hit = ck_hit()
            let s = ck_box_place_at_pixel(maybe(&i, &box), &hit, &m, &k, i.float(), i.float())
            h.box = box
            return s
        case 8:
            var m = pose(&i)
            var k = ck_intrinsics(fx: i.float(), fy: i.float(), cx: 4, cy: 3, width: UInt32(i.u8() % 12), height: UInt32(i.u8() % 10))
            let n = Int(k.width) * Int(k.height)
            var faces = [Int32](repeating: 0, count: max(n, 1)), dist = [Float](repeating: 0, count: max(n, 1))
            var count = 0
            let cap = i.size(fit: n)
            guard cap <= n || cap < 0 || cap > Int.max / 8 else { return 0 }
            return faces.withUnsafeMutableBufferPointer { f in dist.withUnsafeMutableBufferPointer { d in
                ck_raycast_box_grid(f.baseAddress, i.bool() ? d.baseAddress : nil, cap, &count, &m, &k, &box) } }
        case 9:
            let n = Int(i.u8() % 8)
            var uv = (0..<(2 * n)).map { _ in i.float() }
            var faces = [Int32](repeating: 0, count: max(n, 1)), dist = [Float](repeating: 0, count: max(n, 1))
            var m = pose(&i), k = intrinsics(&i)
            let count = i.size(fit: n)
            guard count <= n || count < 0 || count > Int.max / 8 else { return 0 }
            return uv.withUnsafeMutableBufferPointer { u in faces.withUnsafeMutableBufferPointer { f in dist.withUnsafeMutableBufferPointer { d in
                ck_raycast_box_pixels(f.baseAddress, d.baseAddress, u.baseAddress, count, &m, &k, &box) } } }
        case 10:
            var q = ck_quat(x: i.float(), y: i.float(), z: i.float(), w: i.float()), t = vec3(&i)
            var m = ck_mat4(), yaw: Float = 0, pitch: Float = 0, roll: Float = 0
            let s = ck_pose_from_quat(&m, q, t)
            _ = ck_pose_to_quat(&q, &t, &m)
            var inv = ck_mat4(); _ = ck_pose_inverse(&inv, &m)
            _ = ck_pose_yaw_pitch_roll(&yaw, &pitch, &roll, &m)
            var k = intrinsics(&i), k2 = ck_intrinsics()
            _ = ck_intrinsics_scale(&k2, &k, i.u32(), i.u32())
            return s
        // Scheduler.
        case 11:
            ck_scheduler_free(h.scheduler); h.scheduler = nil
            var o = ck_scheduler_options()
            _ = ck_scheduler_options_preset(&o, Int32(i.u8() % 4))
            if i.bool() { o.speed_slow = i.float(); o.interval_fast = i.float(); o.drift_time = i.float() }
            var out: OpaquePointer?
            let s: Int32
            if i.bool() {
                // A struct_size from an older or newer header: the options sit in a zeroed 256-byte
                // buffer (what a caller with a newer header has), sometimes with a non-zero tail.
                let declared = i.u32() % 257
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 16)
                defer { buffer.deallocate() }
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
                withUnsafeBytes(of: &o) { buffer.copyMemory(from: $0) }
                buffer.storeBytes(of: min(declared, 256), as: UInt32.self)
                if i.bool() { buffer[255] = 1 }
                s = ck_scheduler_create(&out, buffer.baseAddress.map { UnsafePointer($0.assumingMemoryBound(to: ck_scheduler_options.self)) })
            } else {
                s = i.bool() ? ck_scheduler_create(&out, &o) : ck_scheduler_create(&out, nil)
            }
            h.scheduler = out
            return s
        case 12:
            var f = ck_scheduler_frame()
            _ = ck_scheduler_frame_init(&f)
            f.timestamp = i.double(); f.pose = pose(&i); f.sharpness = i.float(); f.tracking = Int32(i.u8() % 5)
            var g = ck_guidance()
            var depth = [Float](repeating: 1.5, count: 16 * 12)
            var dk = ck_intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
            return depth.withUnsafeMutableBufferPointer { d in
                withUnsafePointer(to: &box) { b in
                    f.box = i.bool() ? b : nil
                    if i.bool() {
                        f.depth = UnsafePointer(d.baseAddress)
                        f.depth_stride = i.u8() % 2 == 0 ? 64 : (i.bool() ? Int.max : 0)  // rows of 16 floats
                        return withUnsafePointer(to: &dk) { k in f.depth_intrinsics = k; return ck_scheduler_update(handle(&i, h.scheduler), &g, &f) }
                    }
                    return ck_scheduler_update(handle(&i, h.scheduler), maybe(&i, &g), &f)
                }
            }
        case 13:
            var e = ck_event()
            return i.bool() ? ck_scheduler_next_event(handle(&i, h.scheduler), &e) : ck_scheduler_reset(handle(&i, h.scheduler))
        // Coverage.
        case 14:
            ck_coverage_free(h.coverage); h.coverage = nil
            var o = ck_coverage_options()
            _ = ck_coverage_options_init(&o)
            if i.bool() { o.cells_per_side = i.u32() % 70; o.azimuth_bins = i.u32() % 400; o.elevation_rings = i.u32() % 20; o.goal = i.u32() }
            if i.bool() { o.elevation_min_deg = i.float(); o.elevation_max_deg = i.float(); o.grid_width = i.u32() % 600 }
            var out: OpaquePointer?
            let b = maybe(&i, &box)
            let s = i.bool() ? ck_coverage_create(&out, b, &o) : ck_coverage_create(&out, b, nil)
            h.coverage = out
            return s
        case 15:
            var m = pose(&i), k = intrinsics(&i), face: Int32 = 0
            return ck_coverage_add_view(handle(&i, h.coverage), &face, &m, &k, i.double())
        case 16:
            var fc = ck_face_coverage(), sum = ck_coverage_summary(), hint = ck_coverage_hint(), m = pose(&i), e = ck_event()
            _ = ck_coverage_face(&fc, handle(&i, h.coverage), Int32(bitPattern: i.u32() % 9 &- 1))
            _ = ck_coverage_summarize(&sum, handle(&i, h.coverage))
            _ = ck_coverage_next_event(handle(&i, h.coverage), &e)
            return ck_coverage_suggest(&hint, handle(&i, h.coverage), &m)
        case 17:
            var cells = [UInt32](repeating: 0, count: 4096)
            var count = 0
            let cap = i.size(fit: cells.count)
            guard cap <= cells.count || cap < 0 || cap > Int.max / 4 else { return 0 }
            return cells.withUnsafeMutableBufferPointer { c in
                i.bool() ? ck_coverage_cells(c.baseAddress, cap, &count, handle(&i, h.coverage))
                         : ck_coverage_dial(c.baseAddress, cap, &count, handle(&i, h.coverage))
            }
        case 18: return i.bool() ? ck_coverage_set_box(handle(&i, h.coverage), &box) : ck_coverage_reset(handle(&i, h.coverage))
        case 19:
            var luma = [UInt8](repeating: 0, count: 64 * 48)
            for k in 0..<luma.count { luma[k] = UInt8(truncatingIfNeeded: k &* Int(i.u8() | 1)) }
            var score: Float = 0
            let w = UInt32(i.u8() % 66), ht = UInt32(i.u8() % 50)
            var stride = i.size(fit: Int(w))
            // A stride above 64 is only a legal claim for one row, or when it overflows.
            if stride > 64 && !(ht <= 1 || stride > Int.max / 64) { stride = 64 }
            if Int(w) > 64 || ht > 48 { return ck_sharpness_score(&score, luma, w, ht, -1) }
            return ck_sharpness_score(maybe(&i, &score), luma, w, ht, stride)
        // Depth codec.
        case 20:
            ck_depth_codec_free(h.codec); h.codec = nil
            var out: OpaquePointer?
            let s = ck_depth_codec_create(&out, Int32(Int8(bitPattern: i.u8())))
            h.codec = out
            return s
        case 21:
            let w = UInt32(i.u8() % 20), ht = UInt32(i.u8() % 20)
            let format = Int32(i.u8() % 6)
            let n = Int(w) * Int(ht)
            var src = [UInt8](repeating: 0, count: max(n * 4, 1))
            for k in 0..<src.count { src[k] = i.u8() }
            var dst = [UInt8](repeating: 0, count: max(ck_depth_encode_bound(w, ht, format), 1))
            var written = 0
            let cap = i.size(fit: dst.count)
            let s = dst.withUnsafeMutableBytes { d in ck_depth_encode(handle(&i, h.codec), d.baseAddress, cap, maybe(&i, &written), src, w, ht, format) }
            if s == CK_OK {
                try require(written <= dst.count, "written \(written) above the bound")
                var back = [UInt8](repeating: 0, count: max(n * 4, 1))
                let d = ck_depth_decode(h.codec, &back, back.count, Int32(i.u8() % 6), dst, written)
                try require(d == CK_OK || d == CK_E_INVALID_ARGUMENT, "decoding our own frame gave \(d)")
            }
            return s
        case 22:
            let frame = i.take(Int(i.u8()))
            var k: Int32 = 0, w: UInt32 = 0, ht: UInt32 = 0
            var dst = [UInt8](repeating: 0, count: 4096)
            _ = frame.withUnsafeBytes { f in dst.withUnsafeBytes { d in ck_depth_frame_info(&k, &w, &ht, f.baseAddress ?? d.baseAddress, f.count) } }
            let srcSize = i.size(fit: frame.count)
            guard srcSize <= frame.count || srcSize < 0 || srcSize > Int.max / 2 else { return 0 }
            return frame.withUnsafeBytes { f in ck_depth_decode(handle(&i, h.codec), &dst, i.size(fit: dst.count) & 0xFFF, Int32(i.u8() % 6), f.baseAddress, srcSize) }
        case 23:
            var src = [Float](repeating: 0, count: 16), dst = [UInt8](repeating: 0, count: 64)
            for k in 0..<16 { src[k] = i.float() }
            let count = i.size(fit: 16)
            guard count <= 16 || count < 0 || count > Int.max / 4 else { return 0 }
            return ck_depth_convert(&dst, Int32(i.u8() % 6), src, Int32(i.u8() % 6), count)
        // .ckdepth writer and reader.
        case 24:
            _ = ck_depth_writer_close(h.depthWriter); h.depthWriter = nil
            var out: OpaquePointer?
            let s = ck_depth_writer_open(&out, dir + "/d.ckdepth", UInt32(i.u8() % 9), UInt32(i.u8() % 9), Int32(i.u8() % 5),
                                         Int32(i.u8() % 4), UInt32(i.u8() % 8))
            h.depthWriter = out
            return s
        case 25:
            var src = [Float](repeating: 0, count: 8 * 8)
            for k in 0..<src.count where i.bool() { src[k] = i.float() }
            // The frame size is the writer's: the harness's buffer holds the largest (8 × 8 floats).
            return ck_depth_writer_append(handle(&i, h.depthWriter), i.bool() ? src : nil, Int32(i.u8() % 6), i.double())
        case 26:
            var count: UInt64 = 0
            return i.bool() ? ck_depth_writer_flush(handle(&i, h.depthWriter)) : ck_depth_writer_frame_count(&count, handle(&i, h.depthWriter))
        case 27:
            ck_depth_reader_free(h.depthReader); h.depthReader = nil
            var out: OpaquePointer?
            let s = ck_depth_reader_open(&out, i.bool() ? dir + "/d.ckdepth" : dir + "/missing")
            h.depthReader = out
            return s
        case 28:
            var dst = [UInt8](repeating: 0xA5, count: 8 * 8 * 4)
            var ts = 0.0, info = ck_depth_info()
            _ = ck_depth_reader_info(&info, handle(&i, h.depthReader))
            let index: UInt64 = i.bool() ? UInt64.max : UInt64(i.u8() % 4)
            let s = ck_depth_reader_read(handle(&i, h.depthReader), index, &dst, i.size(fit: dst.count) & 0x1FFF, Int32(i.u8() % 6), &ts)
            if s != CK_OK { try require(dst.allSatisfy { $0 == 0xA5 }, "ck_depth_reader_read wrote dst and returned \(s)") }
            return s
        // MultiScan streams.
        case 29:
            _ = ck_zstream_writer_close(h.zWriter); h.zWriter = nil
            var out: OpaquePointer?
            let s = ck_zstream_writer_open(&out, dir + "/z.zlib", UInt32(i.u8() % 9), UInt32(i.u8() % 9), Int32(i.u8() % 6),
                                           Int32(Int8(bitPattern: i.u8()) % 11), UInt32(i.u8() % 8))
            h.zWriter = out
            return s
        case 30:
            var src = [Float](repeating: 0, count: 8 * 8)
            for k in 0..<src.count where i.bool() { src[k] = i.float() }
            var count: UInt64 = 0
            _ = ck_zstream_writer_frame_count(&count, handle(&i, h.zWriter))
            return ck_zstream_writer_append(handle(&i, h.zWriter), i.bool() ? src : nil, Int32(i.u8() % 6))
        case 31:
            ck_zstream_reader_free(h.zReader); h.zReader = nil
            var out: OpaquePointer?
            let s = ck_zstream_reader_open(&out, dir + "/z.zlib", UInt32(i.u8() % 9), UInt32(i.u8() % 9), Int32(i.u8() % 6))
            h.zReader = out
            return s
        case 32:
            var dst = [UInt8](repeating: 0xA5, count: 8 * 8 * 4)
            let cap = i.size(fit: dst.count) & 0x1FFF
            let format = Int32(i.u8() % 6)
            let s: Int32
            switch i.u8() % 3 {
            case 0: s = ck_zstream_reader_next(handle(&i, h.zReader), &dst, cap, format)
            case 1: s = ck_zstream_reader_read(handle(&i, h.zReader), i.bool() ? UInt64.max : UInt64(i.u8() % 8), &dst, cap, format)
            default: var c: UInt64 = 0; return ck_zstream_reader_frame_count(&c, handle(&i, h.zReader))
            }
            if s != CK_OK { try require(dst.allSatisfy { $0 == 0xA5 }, "zstream read wrote dst and returned \(s)") }
            return s
        case 33:
            if i.bool() { let s = ck_zstream_writer_close(h.zWriter); h.zWriter = nil; return s }
            let s = ck_depth_writer_close(h.depthWriter); h.depthWriter = nil; return s
        // Scene.
        case 34:
            ck_scene_free(h.scene); h.scene = nil
            var out: OpaquePointer?
            let s = ck_scene_create(&out, i.u64())
            h.scene = out
            return s
        case 35:
            var m = pose(&i)
            var k = ck_intrinsics(fx: i.float(), fy: i.float(), cx: 4, cy: 3, width: UInt32(i.u8() % 10), height: UInt32(i.u8() % 8))
            var depth = [Float](repeating: 0, count: 80), conf = [UInt8](repeating: 0, count: 80), rgb = [UInt8](repeating: 0, count: 240)
            _ = ck_scene_target(&box, handle(&i, h.scene))
            if i.bool() { return ck_scene_render_rgb(&rgb, handle(&i, h.scene), &m, &k) }
            let (useDepth, useConf, scene, frame) = (i.bool(), i.bool(), handle(&i, h.scene), i.u64())
            return depth.withUnsafeMutableBufferPointer { d in conf.withUnsafeMutableBufferPointer { c in
                ck_scene_render_depth(useDepth ? d.baseAddress : nil, useConf ? c.baseAddress : nil, scene, &m, &k, frame) } }
        // PNG in memory.
        case 36:
            let w = UInt32(i.u8() % 9), ht = UInt32(i.u8() % 9), format = Int32(i.u8() % 6)
            var pixels = [UInt8](repeating: 0, count: 8 * 8 * 4)
            for k in 0..<pixels.count where i.bool() { pixels[k] = i.u8() }
            var stride = i.size(fit: Int(w) * 4)
            if stride > 32 && !(ht <= 1 || stride > Int.max / 8) { stride = 32 }  // see the type's comment
            var dst = [UInt8](repeating: 0, count: 4096)
            var written = 0
            let cap = i.size(fit: dst.count) & 0xFFF
            let (useDst, level) = (i.bool(), Int32(i.u8() % 11))
            return dst.withUnsafeMutableBytes { d in ck_png_encode(useDst ? d.baseAddress : nil, cap, &written, pixels, w, ht, stride, format, level) }
        // Datasets and sessions (Dataset.swift / Session.swift: the lead's code).
        case 37:
            if h.dataset != nil { let s = ck_dataset_close(h.dataset); h.dataset = nil; return s }
            var o = ck_dataset_options()
            _ = ck_dataset_options_init(&o)
            o.start_time_unix = i.double()
            let sub = dir + "/ds\(i.u8() % 2)"
            var out: OpaquePointer?
            let s = i.bool() ? ck_dataset_create(&out, sub, &o) : ck_dataset_open(&out, sub)
            h.dataset = out
            return s
        case 38:
            var desc = ck_frame_desc()
            _ = ck_frame_desc_init(&desc)
            desc.timestamp = i.double(); desc.pose = pose(&i); desc.intrinsics = intrinsics(&i); desc.sharpness = i.float()
            var id: UInt64 = 0
            switch i.u8() % 4 {
            case 0: return ck_dataset_add_frame(handle(&i, h.dataset), &id, &desc)
            case 1: return ck_dataset_remove_frame(handle(&i, h.dataset), i.bool() ? UInt64.max : UInt64(i.u8() % 4))
            case 2: return ck_dataset_set_box(handle(&i, h.dataset), &box)
            default: var c: UInt64 = 0; return ck_dataset_frame_count(&c, handle(&i, h.dataset))
            }
        default:
            // Sessions: every entry point with a NULL session (creating one is the lead's fuzzing).
            var r = ck_session_result(), e = ck_event(), f = ck_session_frame()
            _ = ck_session_frame_init(&f)
            var cov: OpaquePointer?, ds: OpaquePointer?
            switch i.u8() % 6 {
            case 0: return ck_session_process(nil, &r, &f)
            case 1: return ck_session_next_event(nil, &e)
            case 2: return ck_session_set_box(nil, &box)
            case 3: return ck_session_dataset(&ds, nil)
            case 4: return withUnsafeMutablePointer(to: &cov) { p in p.withMemoryRebound(to: Optional<OpaquePointer>.self, capacity: 1) { ck_session_coverage($0, nil) } }
            default: ck_session_free(nil); return ck_session_finish(nil, 0, nil)
            }
        }
    }
}
