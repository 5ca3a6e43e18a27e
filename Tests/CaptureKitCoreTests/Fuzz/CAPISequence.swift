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
/// Capacities of output buffers (`dst_capacity`) may be any claim: the library writes only what
/// the call produces, which always fits the harness's buffer.
extension FuzzTargets {
    static let maxOps = 48

    /// A row stride for a `ck_image` / `ck_depth_map` of `height` rows of `rowBytes` over a buffer
    /// whose rows are `bufferRow` bytes apart (the buffer holds `height` such rows): 0 (packed),
    /// the buffer's row, one byte short of a row (an invalid claim), or a claim that overflows
    /// (`(height − 1) × stride` beyond memory; with one row any stride is a legal claim).
    static func mapStride(_ i: inout FuzzInput, rowBytes: Int, bufferRow: Int, height: Int) -> Int {
        switch i.u8() % 6 {
        case 0: return bufferRow
        case 1: return max(rowBytes - 1, 1)
        case 2: return height <= 1 ? rowBytes : Int.max
        case 3: return -1  // SIZE_MAX
        default: return 0
        }
    }

    /// Live handles (nil = none yet; the program may pass NULL on purpose anyway).
    final class Handles {
        var scheduler: OpaquePointer?, coverage: OpaquePointer?, codec: OpaquePointer?
        var depthWriter: OpaquePointer?, depthReader: OpaquePointer?
        var zWriter: OpaquePointer?, zReader: OpaquePointer?
        var scene: OpaquePointer?, dataset: OpaquePointer?, surface: OpaquePointer?
        var box = ck_box(center: ck_vec3(x: 0, y: 0, z: -2), size: ck_vec3(x: 0.5, y: 0.5, z: 0.5), yaw: 0, floor: 0, has_floor: 0)

        deinit {
            ck_scheduler_free(scheduler); ck_coverage_free(coverage); ck_depth_codec_free(codec)
            _ = ck_depth_writer_close(depthWriter); _ = ck_depth_reader_close(depthReader)
            _ = ck_zstream_writer_close(zWriter); _ = ck_zstream_reader_close(zReader)
            ck_scene_free(scene); _ = ck_dataset_close(dataset); ck_surface_free(surface)
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
            let s = ck_box_place_at_pixel(&hit, maybe(&i, &box), &m, &k, i.float(), i.float())
            h.box = box
            if i.u8() % 4 == 0 { _ = ck_box_place_at_pixel(nil, &box, &m, &k, 0.5, 0.5); h.box = box }  // hit_out may be NULL
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
                ck_ray_box_grid(f.baseAddress, i.bool() ? d.baseAddress : nil, cap, &count, &m, &k, &box) } }
        case 9:
            let n = Int(i.u8() % 8)
            var uv = (0..<(2 * n)).map { _ in i.float() }
            var faces = [Int32](repeating: 0, count: max(n, 1)), dist = [Float](repeating: 0, count: max(n, 1))
            var m = pose(&i), k = intrinsics(&i)
            let count = i.size(fit: n)
            guard count <= n || count < 0 || count > Int.max / 8 else { return 0 }
            return uv.withUnsafeMutableBufferPointer { u in faces.withUnsafeMutableBufferPointer { f in dist.withUnsafeMutableBufferPointer { d in
                ck_ray_box_pixels(f.baseAddress, d.baseAddress, u.baseAddress, count, &m, &k, &box) } } }
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
            _ = ck_scheduler_options_preset_sized(&o, i.bool() ? MemoryLayout<ck_scheduler_options>.size : Int(i.u32() % 300), Int32(i.u8() % 4))
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
            // The sized filler with any size: above the layout it writes nothing (refused), never past it.
            _ = ck_scheduler_frame_init_sized(&f, i.bool() ? MemoryLayout<ck_scheduler_frame>.size : Int(i.u32() % 400))
            f.timestamp = i.double(); f.pose = pose(&i); f.sharpness = i.float(); f.tracking = Int32(i.u8() % 5)
            var g = ck_guidance()
            let depth = [Float](repeating: 1.5, count: 16 * 12)  // 12 rows of 64 bytes
            return depth.withUnsafeBytes { d in
                withUnsafePointer(to: &box) { b in
                    f.box = i.bool() ? b : nil
                    if i.bool() {
                        // Any depth format (U8 and unknown ones must be refused), rows of at most 64 bytes.
                        let format = Int32(i.u8() % 6)
                        let rowBytes = 16 * max(ck_format_size(format), 1)
                        f.depth = ck_depth_map(data: i.u8() % 8 == 0 ? nil : d.baseAddress, width: 16, height: 12,
                                               stride: mapStride(&i, rowBytes: rowBytes, bufferRow: 64, height: 12),
                                               format: format, reserved: 0)
                        switch i.u8() % 3 {
                        case 0: f.depth_intrinsics = ck_intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
                        case 1: f.depth_intrinsics = intrinsics(&i)  // mostly another size: refused
                        default: break  // all zero: the map's centre
                        }
                        return ck_scheduler_update(&g, handle(&i, h.scheduler), &f)
                    }
                    let sched = handle(&i, h.scheduler)
                    return ck_scheduler_update(maybe(&i, &g), sched, &f)
                }
            }
        case 13:
            var e = ck_event()
            return i.bool() ? ck_scheduler_next_event(&e, handle(&i, h.scheduler)) : ck_scheduler_reset(handle(&i, h.scheduler))
        // Coverage.
        case 14:
            ck_coverage_free(h.coverage); h.coverage = nil
            var o = ck_coverage_options()
            _ = ck_coverage_options_init_sized(&o, MemoryLayout<ck_coverage_options>.size)
            if i.bool() { o.cells_per_side = i.u32() % 70; o.azimuth_bins = i.u32() % 400; o.elevation_rings = i.u32() % 20; o.goal = i.u32() }
            if i.bool() { o.elevation_min_deg = i.float(); o.elevation_max_deg = i.float(); o.grid_width = i.u32() % 600 }
            var out: OpaquePointer?
            let b = maybe(&i, &box)
            let s = i.bool() ? ck_coverage_create(&out, b, &o) : ck_coverage_create(&out, b, nil)
            h.coverage = out
            return s
        case 15:
            var m = pose(&i), k = intrinsics(&i), face: Int32 = 0
            return ck_coverage_add_view(&face, handle(&i, h.coverage), &m, &k, i.double())
        case 16:
            var fc = ck_face_coverage(), sum = ck_coverage_summary(), hint = ck_coverage_hint(), m = pose(&i), e = ck_event()
            _ = ck_coverage_face(&fc, handle(&i, h.coverage), Int32(bitPattern: i.u32() % 9 &- 1))
            _ = ck_coverage_summarize(&sum, handle(&i, h.coverage))
            _ = ck_coverage_next_event(&e, handle(&i, h.coverage))
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
            let gray = Int32(CK_IMAGE_FORMAT_GRAY8.rawValue)
            return luma.withUnsafeBytes { l in
                if Int(w) > 64 || ht > 48 {
                    var image = ck_image(data: l.baseAddress, width: w, height: ht, stride: -1, format: gray, reserved: 0)
                    return ck_sharpness_score(&score, &image)
                }
                var image = ck_image(data: l.baseAddress, width: w, height: ht, stride: stride, format: gray, reserved: 0)
                let nullScore = i.u8() % 8 == 0  // as maybe()
                switch i.u8() % 8 {
                case 0: image.format = Int32(i.u8() % 6)  // not GRAY8: refused (before reading 3 or 4 bytes a pixel)
                case 1: image.data = nil
                case 2: image.reserved = 1
                default: break
                }
                let nullImage = i.u8() % 16 == 0
                return withUnsafeMutablePointer(to: &score) { sp in
                    nullImage ? ck_sharpness_score(nullScore ? nil : sp, nil) : ck_sharpness_score(nullScore ? nil : sp, &image)
                }
            }
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
            // Rows of up to 4 bytes a sample, 4 bytes of padding after each.
            let bufferRow = Int(w) * 4 + 4
            var src = [UInt8](repeating: 0, count: max(Int(ht) * bufferRow, 1))
            for k in 0..<max(n * 4, 1) { src[k] = i.u8() }
            var dst = [UInt8](repeating: 0, count: max(ck_depth_encode_bound(w, ht, format), 1))
            var written = 0
            let cap = i.size(fit: dst.count)
            let codec = handle(&i, h.codec)
            let writtenOut = i.u8() % 8 != 0
            let rowBytes = Int(w) * max(ck_format_size(format), 1)
            let st = mapStride(&i, rowBytes: rowBytes, bufferRow: bufferRow, height: Int(ht))
            let s = src.withUnsafeBytes { sp in
                var map = ck_depth_map(data: sp.baseAddress, width: w, height: ht, stride: st, format: format, reserved: 0)
                return dst.withUnsafeMutableBytes { d in
                    withUnsafeMutablePointer(to: &written) { wp in
                        i.u8() % 16 == 0 ? ck_depth_encode(d.baseAddress, cap, writtenOut ? wp : nil, codec, nil)
                                         : ck_depth_encode(d.baseAddress, cap, writtenOut ? wp : nil, codec, &map)
                    }
                }
            }
            if s == CK_OK && writtenOut {
                try require(written <= dst.count, "written \(written) above the bound")
                var back = [UInt8](repeating: 0, count: max(n * 4, 1))
                var got = 0
                let d = ck_depth_decode(&back, back.count, &got, h.codec, dst, written, Int32(i.u8() % 6))
                try require(d == CK_OK || d == CK_E_INVALID_ARGUMENT, "decoding our own frame gave \(d)")
                if d == CK_OK { try require(got > 0 && got <= back.count, "ck_depth_decode wrote \(got) of \(back.count) bytes") }
            }
            if s == CK_E_BUFFER_TOO_SMALL && writtenOut {
                try require(written > cap, "ck_depth_encode: too small at \(cap) but \(written) bytes needed")
            }
            return s
        case 22:
            let frame = i.take(Int(i.u8()))
            var k: Int32 = 0, w: UInt32 = 0, ht: UInt32 = 0
            var dst = [UInt8](repeating: 0, count: 4096)
            _ = frame.withUnsafeBytes { f in dst.withUnsafeBytes { d in ck_depth_frame_info(&k, &w, &ht, f.baseAddress ?? d.baseAddress, f.count) } }
            let srcSize = i.size(fit: frame.count)
            guard srcSize <= frame.count || srcSize < 0 || srcSize > Int.max / 2 else { return 0 }
            let codec = handle(&i, h.codec)
            let cap = i.size(fit: dst.count) & 0xFFF
            let format = Int32(i.u8() % 6)
            var written = -7
            let s = frame.withUnsafeBytes { f in ck_depth_decode(&dst, cap, &written, codec, f.baseAddress, srcSize, format) }
            switch s {
            case CK_OK: try require(written >= 0 && written <= cap, "ck_depth_decode: written \(written), capacity \(cap)")
            case CK_E_BUFFER_TOO_SMALL: try require(written > cap, "ck_depth_decode: too small at \(cap) but \(written) bytes needed")
            default: break
            }
            return s
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
            // The frame size is the writer's (the library refuses another): the harness's buffer holds
            // the largest, 8 rows of 32 bytes (8 floats).
            let writer = handle(&i, h.depthWriter)
            let useMap = i.bool()
            let format = Int32(i.u8() % 6)
            let w = UInt32(i.u8() % 9), ht = UInt32(i.u8() % 9)
            let st = mapStride(&i, rowBytes: Int(w) * max(ck_format_size(format), 1), bufferRow: 32, height: Int(ht))
            let t = i.double()
            return src.withUnsafeBytes { sp in
                var map = ck_depth_map(data: i.u8() % 8 == 0 ? nil : sp.baseAddress, width: w, height: ht, stride: st,
                                       format: format, reserved: 0)
                return useMap ? ck_depth_writer_append(writer, &map, t) : ck_depth_writer_append(writer, nil, t)
            }
        case 26:
            var count: UInt64 = 0
            return i.bool() ? ck_depth_writer_flush(handle(&i, h.depthWriter)) : ck_depth_writer_frame_count(&count, handle(&i, h.depthWriter))
        case 27:
            _ = ck_depth_reader_close(h.depthReader); h.depthReader = nil
            var out: OpaquePointer?
            let s = ck_depth_reader_open(&out, i.bool() ? dir + "/d.ckdepth" : dir + "/missing")
            h.depthReader = out
            return s
        case 28:
            var dst = [UInt8](repeating: 0xA5, count: 8 * 8 * 4)
            var ts = 0.0, info = ck_depth_info()
            _ = ck_depth_reader_info(&info, handle(&i, h.depthReader))
            let index: UInt64 = i.bool() ? UInt64.max : UInt64(i.u8() % 4)
            let reader = handle(&i, h.depthReader)
            let cap = i.size(fit: dst.count) & 0x1FFF
            let format = Int32(i.u8() % 6)
            var written = -7
            let s = i.u8() % 8 == 0 ? ck_depth_reader_read(&dst, cap, nil, nil, reader, index, format)
                                    : ck_depth_reader_read(&dst, cap, &written, &ts, reader, index, format)
            if s != CK_OK { try require(dst.allSatisfy { $0 == 0xA5 }, "ck_depth_reader_read wrote dst and returned \(s)") }
            if s == CK_OK && written != -7 { try require(written > 0 && written <= cap, "ck_depth_reader_read: written \(written), capacity \(cap)") }
            if s == CK_E_BUFFER_TOO_SMALL && written != -7 { try require(written > cap, "ck_depth_reader_read: too small at \(cap) but \(written) needed") }
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
            // As for case 25: at most 8 rows of 32 bytes.
            let writer = handle(&i, h.zWriter)
            let useMap = i.bool()
            let format = Int32(i.u8() % 6)
            let w = UInt32(i.u8() % 9), ht = UInt32(i.u8() % 9)
            let st = mapStride(&i, rowBytes: Int(w) * max(ck_format_size(format), 1), bufferRow: 32, height: Int(ht))
            return src.withUnsafeBytes { sp in
                var map = ck_depth_map(data: i.u8() % 8 == 0 ? nil : sp.baseAddress, width: w, height: ht, stride: st,
                                       format: format, reserved: 0)
                return useMap ? ck_zstream_writer_append(writer, &map) : ck_zstream_writer_append(writer, nil)
            }
        case 31:
            _ = ck_zstream_reader_close(h.zReader); h.zReader = nil
            var out: OpaquePointer?
            let s = ck_zstream_reader_open(&out, dir + "/z.zlib", UInt32(i.u8() % 9), UInt32(i.u8() % 9), Int32(i.u8() % 6))
            h.zReader = out
            return s
        case 32:
            var dst = [UInt8](repeating: 0xA5, count: 8 * 8 * 4)
            let cap = i.size(fit: dst.count) & 0x1FFF
            let format = Int32(i.u8() % 6)
            let s: Int32
            var written = -7
            switch i.u8() % 3 {
            case 0:
                let reader = handle(&i, h.zReader)
                s = ck_zstream_reader_next(&dst, cap, &written, reader, format)
            case 1:
                let reader = handle(&i, h.zReader)
                let index = i.bool() ? UInt64.max : UInt64(i.u8() % 8)
                s = i.u8() % 8 == 0 ? ck_zstream_reader_read(&dst, cap, nil, reader, index, format)
                                    : ck_zstream_reader_read(&dst, cap, &written, reader, index, format)
            default: var c: UInt64 = 0; return ck_zstream_reader_frame_count(&c, handle(&i, h.zReader))
            }
            if s != CK_OK { try require(dst.allSatisfy { $0 == 0xA5 }, "zstream read wrote dst and returned \(s)") }
            if s == CK_OK && written != -7 { try require(written > 0 && written <= cap, "zstream read: written \(written), capacity \(cap)") }
            if s == CK_E_BUFFER_TOO_SMALL && written != -7 { try require(written > cap, "zstream read: too small at \(cap) but \(written) needed") }
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
            var written = -7
            let needed = Int(k.width) * Int(k.height)
            if i.bool() {
                let scene = handle(&i, h.scene)
                let cap = i.size(fit: rgb.count)
                let s = ck_scene_render_rgb(&rgb, cap, &written, scene, &m, &k)
                if s == CK_OK || s == CK_E_BUFFER_TOO_SMALL { try require(written == 3 * needed, "ck_scene_render_rgb: written \(written) for \(needed) pixels") }
                if s != CK_OK { try require(rgb.allSatisfy { $0 == 0 }, "ck_scene_render_rgb wrote dst and returned \(s)") }
                return s
            }
            let (useDepth, useConf, scene, frame) = (i.bool(), i.bool(), handle(&i, h.scene), i.u64())
            let cap = i.size(fit: depth.count)
            let s = depth.withUnsafeMutableBufferPointer { d in conf.withUnsafeMutableBufferPointer { c in
                ck_scene_render_depth(useDepth ? d.baseAddress : nil, useConf ? c.baseAddress : nil, cap, &written, scene, &m, &k, frame) } }
            if s == CK_OK || s == CK_E_BUFFER_TOO_SMALL { try require(written == needed, "ck_scene_render_depth: written \(written) for \(needed) pixels") }
            if s == CK_E_BUFFER_TOO_SMALL { try require(depth.allSatisfy { $0 == 0 } && conf.allSatisfy { $0 == 0 }, "ck_scene_render_depth wrote dst and returned \(s)") }
            return s
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
            return pixels.withUnsafeBytes { p in
                var image = ck_image(data: p.baseAddress, width: w, height: ht, stride: stride, format: format, reserved: 0)
                return dst.withUnsafeMutableBytes { d in ck_png_encode(useDst ? d.baseAddress : nil, cap, &written, &image, level) }
            }
        // Datasets and sessions (Dataset*.swift, Session.swift).
        case 37:
            if h.dataset != nil { let s = ck_dataset_close(h.dataset); h.dataset = nil; return s }
            var o = ck_dataset_options()
            _ = ck_dataset_options_init_sized(&o, MemoryLayout<ck_dataset_options>.size)
            o.start_time_unix = i.double()
            let sub = dir + "/ds\(i.u8() % 2)"
            var out: OpaquePointer?
            let s = i.bool() ? ck_dataset_create(&out, sub, &o) : ck_dataset_open(&out, sub)
            h.dataset = out
            return s
        case 38:
            var desc = ck_frame_desc()
            _ = ck_frame_desc_init_sized(&desc, MemoryLayout<ck_frame_desc>.size)
            desc.timestamp = i.double(); desc.pose = pose(&i); desc.intrinsics = intrinsics(&i); desc.sharpness = i.float()
            var id: UInt64 = 0
            switch i.u8() % 4 {
            case 0: return ck_dataset_add_frame(&id, handle(&i, h.dataset), &desc)
            case 1: return ck_dataset_remove_frame(handle(&i, h.dataset), i.bool() ? UInt64.max : UInt64(i.u8() % 4))
            case 2: return ck_dataset_set_box(handle(&i, h.dataset), &box)
            default: var c: UInt64 = 0; return ck_dataset_frame_count(&c, handle(&i, h.dataset))
            }
        // Opcode 39: the surface map (SurfaceMap.swift; sub-ops 0-2: hostile options, boxes, depth,
        // poses and intrinsics) and the NULL-session calls (sub-op 3). Nested under the last
        // opcode so that the committed corpus keeps its meaning for opcodes 0-38 (the opcode byte
        // is still taken % 40); only programs that used opcode 39 (NULL-session calls) replay
        // differently.
        default:
            return try surfaceOrSession(&i, h, box)
        }
    }

    static func surfaceOrSession(_ i: inout FuzzInput, _ h: Handles, _ box: ck_box) throws(FuzzFailure) -> Int32 {
        var box = box
        switch i.u8() % 4 {
        case 0:
            ck_surface_free(h.surface); h.surface = nil
            var o = ck_surface_options()
            _ = ck_surface_options_init_sized(&o, MemoryLayout<ck_surface_options>.size)
            if i.bool() { o.voxel_size = i.float(); o.max_depth = i.float(); o.goal_fraction = i.float() }
            if i.bool() { o.min_views = i.u32(); o.face_cells = i.u32() % 300; o.side_mask = i.u32() }
            var out: OpaquePointer?
            let noBox = i.u8() % 8 == 0, withOptions = i.bool()
            let s = withUnsafePointer(to: box) { b in
                withUnsafePointer(to: o) { op in ck_surface_create(&out, noBox ? nil : b, withOptions ? op : nil) }
            }
            h.surface = out
            return s
        case 1:
            // Depth of any format (U8 and unknown refused), NaN / inf / negative samples, a
            // confidence map of the right or wrong size, intrinsics of the map or not.
            var m = pose(&i), k = intrinsics(&i)
            if i.bool() { k = ck_intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12) }
            let specials: [Float] = [.nan, .infinity, -.infinity, -1, 0, 1e30, 0.4, 1.5, 2.5, 2]  // 2: inside the default box
            let depth = (0..<(16 * 12)).map { _ in specials[Int(i.u8()) % specials.count] }
            let conf = (0..<(16 * 12)).map { _ in i.u8() % 3 }
            let format = Int32(i.u8() % 6)
            let rowBytes = 16 * max(ck_format_size(format), 1)
            let stride = mapStride(&i, rowBytes: rowBytes, bufferRow: 64, height: 12)
            let cw: UInt32 = i.bool() ? 16 : 8
            let t = i.bool() ? 0.0 : i.double()
            return depth.withUnsafeBytes { d in conf.withUnsafeBytes { c in
                var dm = ck_depth_map(data: i.u8() % 8 == 0 ? nil : d.baseAddress, width: 16, height: 12, stride: stride,
                                      format: format, reserved: 0)
                let cm = ck_depth_map(data: c.baseAddress, width: cw, height: 12, stride: 0, format: 4, reserved: 0)
                let surface = handle(&i, h.surface), withConfidence = i.bool()
                return withUnsafePointer(to: cm) { cp in ck_surface_fuse(surface, &dm, withConfidence ? cp : nil, &k, &m, t) }
            } }
        case 2:
            var m = pose(&i), k = intrinsics(&i)
            switch i.u8() % 9 {
            case 8:
                // The dataset's point cloud from the map (NULL dataset or map; read-only not here).
                return ck_dataset_set_surface(handle(&i, h.dataset), handle(&i, h.surface))
            case 0:
                var seen: UInt32 = 0
                let rgb = [UInt8](repeating: 90, count: 16 * 12 * 3)
                return rgb.withUnsafeBytes { p in
                    let img = ck_image(data: p.baseAddress, width: 16, height: 12, stride: 0, format: Int32(i.u8() % 5), reserved: 0)
                    let withSeen = i.bool(), surface = handle(&i, h.surface), withImage = i.bool(), t = i.double()
                    return withUnsafeMutablePointer(to: &seen) { sp in
                        withUnsafePointer(to: img) { ip in ck_surface_add_view(withSeen ? sp : nil, surface, &m, &k, withImage ? ip : nil, t) }
                    }
                }
            case 1: var f = ck_surface_figures(); return ck_surface_summarize(maybe(&i, &f), handle(&i, h.surface))
            case 2: var sd = ck_surface_side(); return ck_surface_side_figures(&sd, handle(&i, h.surface), Int32(bitPattern: i.u32() % 9 &- 1))
            case 3: var hint = ck_surface_hint(); return ck_surface_suggest(&hint, handle(&i, h.surface), &m)
            case 4: return ck_surface_set_box(handle(&i, h.surface), &box)
            case 5:
                var els = [ck_surface_element](repeating: ck_surface_element(), count: 64)
                var written = 0
                let cap = i.size(fit: 64) & 63
                return els.withUnsafeMutableBufferPointer { ck_surface_elements(i.bool() ? $0.baseAddress : nil, cap, &written, handle(&i, h.surface)) }
            case 6:
                var vox = [UInt8](repeating: 0, count: 4096)
                var written = 0
                let cap = i.size(fit: 4096) & 0xFFF
                return vox.withUnsafeMutableBufferPointer { ck_surface_voxels(i.bool() ? $0.baseAddress : nil, cap, &written, handle(&i, h.surface)) }
            default:
                var e = ck_event()
                if i.bool() { return ck_surface_reset(handle(&i, h.surface)) }
                return ck_surface_next_event(&e, handle(&i, h.surface))
            }
        default:
            // Sessions: every entry point with a NULL session (creating one is the lead's fuzzing).
            var r = ck_session_result(), e = ck_event(), f = ck_session_frame()
            _ = ck_session_frame_init_sized(&f, MemoryLayout<ck_session_frame>.size)
            var cov: OpaquePointer?, ds: OpaquePointer?
            var surface: OpaquePointer?
            switch i.u8() % 7 {
            case 0: return ck_session_process(&r, nil, &f)
            case 1: return ck_session_next_event(&e, nil)
            case 2: return ck_session_set_box(nil, &box)
            case 3: return ck_session_dataset(&ds, nil)
            case 4: return withUnsafeMutablePointer(to: &cov) { p in p.withMemoryRebound(to: Optional<OpaquePointer>.self, capacity: 1) { ck_session_coverage($0, nil) } }
            case 5: return withUnsafeMutablePointer(to: &surface) { p in p.withMemoryRebound(to: Optional<OpaquePointer>.self, capacity: 1) { ck_session_surface($0, nil) } }
            default:
                let c = ck_session_close(nil)
                try require(c == CK_OK, "ck_session_close(NULL) gave \(c)")
                return ck_session_finish(nil, 0, nil)
            }
        }
    }
}
