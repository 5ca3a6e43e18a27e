import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: conversions, the native frame codec, .ckdepth files, transcoding.

/// A caller's ck_format value.
func readFormat(_ raw: Int32, _ name: String) throws(CaptureKitError) -> SampleFormat {
    guard let f = SampleFormat(rawValue: raw) else { throw .invalidArgument("\(name) \(raw) is not a ck_format (1...4)") }
    return f
}

/// A caller's ck_depth_kind value.
func readKind(_ raw: Int32, _ name: String) throws(CaptureKitError) -> PixelKind {
    guard raw >= 1, raw <= 3, let k = PixelKind(rawValue: UInt8(raw)) else { throw .invalidArgument("\(name) \(raw) is not a ck_depth_kind (1...3)") }
    return k
}

/// Frame dimensions within CK_DEPTH_MAX_DIMENSION; returns the pixel count.
func readDimensions(_ width: UInt32, _ height: UInt32) throws(CaptureKitError) -> Int {
    let maxD = UInt32(DepthFrameCodec.maxDimension)
    guard width >= 1, height >= 1, width <= maxD, height <= maxD else {
        throw .invalidArgument("width x height \(width)x\(height) must be within 1...\(maxD)")
    }
    return Int(width) * Int(height)
}

// MARK: conversions

@c @implementation public func ck_format_size(_ format: Int32) -> Int {
    SampleFormat(rawValue: format)?.bytesPerSample ?? 0
}

@c @implementation public func ck_depth_to_points(_ dst: UnsafeMutablePointer<ck_vec3>?, _ dst_capacity: Int,
                                                   _ written_out: UnsafeMutablePointer<Int>?, _ depth: UnsafePointer<ck_depth_map>?,
                                                   _ intrinsics: UnsafePointer<ck_intrinsics>?, _ camera_pose: UnsafePointer<ck_mat4>?,
                                                   _ max_depth: Float) -> ck_status {
    boundary("ck_depth_to_points") { () throws(CaptureKitError) in
        let map = try requiredDepthMap(depth, "depth", allowed: depthFormats)
        let k = try required(intrinsics, "intrinsics").pointee.validated("intrinsics")
        guard Int(k.width) == map.width, Int(k.height) == map.height else {
            throw .invalidArgument("intrinsics are for \(k.width)x\(k.height) but the depth map is \(map.width)x\(map.height) (ck_intrinsics_scale them)")
        }
        let pose = try readPose(camera_pose, "camera_pose")
        guard !max_depth.isNaN, max_depth > 0 else { throw .invalidArgument("max_depth \(max_depth) must be > 0 (inf: no limit)") }
        return try map.withPacked(as: .depthF32) { (b) throws(CaptureKitError) -> ck_status in
            let metres = b.bindMemory(to: Float.self)
            let needed = DepthPoints.backProject(metres: metres, width: map.width, height: map.height, intrinsics: k, pose: pose,
                                                 maxDepth: max_depth, into: UnsafeMutableBufferPointer<Float>(start: nil, count: 0))
            try checkCapacity(dst_capacity, needed: needed, written_out, unit: "points", elementSize: MemoryLayout<ck_vec3>.stride)
            if needed > 0 {
                let out = try required(dst, "dst")
                // ck_vec3 is three packed floats.
                UnsafeMutableRawPointer(out).withMemoryRebound(to: Float.self, capacity: 3 * needed) { p in
                    _ = DepthPoints.backProject(metres: metres, width: map.width, height: map.height, intrinsics: k, pose: pose,
                                               maxDepth: max_depth, into: UnsafeMutableBufferPointer(start: p, count: 3 * needed))
                }
            }
            written_out?.pointee = needed
            return CK_OK
        }
    }
}

@c @implementation public func ck_depth_convert(_ dst: UnsafeMutableRawPointer?, _ dst_format: Int32, _ src: UnsafeRawPointer?,
                                                 _ src_format: Int32, _ count: Int) -> ck_status {
    boundary("ck_depth_convert") { () throws(CaptureKitError) in
        let to = try readFormat(dst_format, "dst_format"), from = try readFormat(src_format, "src_format")
        guard from.converts(to: to) else { throw .invalidArgument("cannot convert \(from) samples to \(to)") }
        let n = try checkedCount(count, stride: 4, "count")
        if n == 0 { return CK_OK }
        let d = try requiredRaw(dst, "dst"), s = try requiredRaw(src, "src")
        if from != to {
            // Different formats must not overlap (the conversion streams through both buffers).
            let sEnd = s + n * from.bytesPerSample, dEnd = UnsafeRawPointer(d) + n * to.bytesPerSample
            guard sEnd <= UnsafeRawPointer(d) || dEnd <= s else { throw .invalidArgument("dst and src overlap") }
        }
        DepthConversion.convert(s, from, d, to, count: n)
        return CK_OK
    }
}

// MARK: codec

@c @implementation public func ck_depth_codec_create(_ codec_out: UnsafeMutablePointer<OpaquePointer?>?, _ level: Int32) -> ck_status {
    boundary("ck_depth_codec_create") { () throws(CaptureKitError) in
        let out = try required(codec_out, "codec_out")
        out.pointee = nil
        let l = try readLevel(level)
        out.pointee = handOut(try DepthFrameCodec(level: l))
        return CK_OK
    }
}

/// A zstd level argument: 0 = default (1), else 1...19.
func readLevel(_ level: Int32) throws(CaptureKitError) -> Int32 {
    if level == 0 { return 1 }
    guard (1...19).contains(level) else { throw .invalidArgument("level \(level) must be 0 (default) or 1...19") }
    return level
}

@c @implementation public func ck_depth_codec_free(_ codec: OpaquePointer?) {
    release(codec, as: DepthFrameCodec.self)
}

@c @implementation public func ck_depth_encode_bound(_ width: UInt32, _ height: UInt32, _ src_format: Int32) -> Int {
    guard let n = try? readDimensions(width, height), let f = SampleFormat(rawValue: src_format) else { return 0 }
    return DepthFrameCodec.bound(pixels: n, kind: f.defaultKind)
}

@c @implementation public func ck_depth_encode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                _ codec: OpaquePointer?, _ src: UnsafePointer<ck_depth_map>?) -> ck_status {
    boundary("ck_depth_encode") { () throws(CaptureKitError) in
        let c = try object(codec, "codec", as: DepthFrameCodec.self)
        let map = try requiredDepthMap(src, "src")
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let bound = DepthFrameCodec.bound(pixels: map.count, kind: map.format.defaultKind)
        let d = try requiredRaw(dst, "dst")
        do throws(CaptureKitError) {
            let n = try c.encode(map, into: UnsafeMutableRawBufferPointer(start: d, count: cap))
            written_out?.pointee = n
        } catch {
            guard error.status == .bufferTooSmall else { throw error }
            written_out?.pointee = bound
            throw .bufferTooSmall("dst_capacity \(cap) is too small for this frame (ck_depth_encode_bound gives \(bound), in *written_out)")
        }
        return CK_OK
    }
}

@c @implementation public func ck_depth_frame_info(_ kind_out: UnsafeMutablePointer<Int32>?, _ width_out: UnsafeMutablePointer<UInt32>?,
                                                    _ height_out: UnsafeMutablePointer<UInt32>?, _ src: UnsafeRawPointer?,
                                                    _ src_size: Int) -> ck_status {
    boundary("ck_depth_frame_info") { () throws(CaptureKitError) in
        let k = try required(kind_out, "kind_out"), w = try required(width_out, "width_out"), h = try required(height_out, "height_out")
        let size = try checkedCount(src_size, stride: 1, "src_size")
        let s = try requiredRaw(src, "src")
        let header = try DepthFrameCodec.header(UnsafeRawBufferPointer(start: s, count: size))
        k.pointee = Int32(header.kind.rawValue); w.pointee = UInt32(header.width); h.pointee = UInt32(header.height)
        return CK_OK
    }
}

@c @implementation public func ck_depth_decode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                _ codec: OpaquePointer?, _ src: UnsafeRawPointer?, _ src_size: Int,
                                                _ dst_format: Int32) -> ck_status {
    boundary("ck_depth_decode") { () throws(CaptureKitError) in
        let c = try object(codec, "codec", as: DepthFrameCodec.self)
        let format = try readFormat(dst_format, "dst_format")
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let size = try checkedCount(src_size, stride: 1, "src_size")
        let s = UnsafeRawBufferPointer(start: try requiredRaw(src, "src"), count: size)
        let header = try DepthFrameCodec.header(s)
        guard format.converts(to: SampleFormat.storage(of: header.kind)) else {
            throw .invalidArgument("a frame of kind \(header.kind) cannot be decoded as \(format)")
        }
        let need = header.pixels * format.bytesPerSample
        try checkCapacity(cap, needed: need, written_out)
        try c.decode(s, as: format, into: try requiredRaw(dst, "dst"))
        written_out?.pointee = need
        return CK_OK
    }
}

// MARK: .ckdepth files

/// Writer open flags → mode.
func openMode(_ flags: UInt32, allowed: UInt32) throws(CaptureKitError) -> DepthFileWriter.OpenMode {
    guard flags & ~allowed == 0 else { throw .invalidArgument("flags 0x\(String(flags, radix: 16)) has unknown bits") }
    let overwrite = flags & CK_OPEN_OVERWRITE != 0, append = flags & CK_OPEN_APPEND != 0
    guard !(overwrite && append) else { throw .invalidArgument("flags: CK_OPEN_OVERWRITE and CK_OPEN_APPEND exclude each other") }
    return append ? .append : (overwrite ? .overwrite : .create)
}

@c @implementation public func ck_depth_writer_open(_ writer_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?,
                                                     _ width: UInt32, _ height: UInt32, _ kind: Int32, _ level: Int32,
                                                     _ flags: UInt32) -> ck_status {
    boundary("ck_depth_writer_open") { () throws(CaptureKitError) in
        let out = try required(writer_out, "writer_out")
        out.pointee = nil
        let p = try readPath(path, "path")
        _ = try readDimensions(width, height)
        let k = try readKind(kind, "kind")
        let l = try readLevel(level)
        let mode = try openMode(flags, allowed: CK_OPEN_OVERWRITE | CK_OPEN_APPEND)
        do throws(CaptureKitError) {
            out.pointee = handOut(try DepthFileWriter(path: p, width: Int(width), height: Int(height), kind: k, level: l, mode: mode))
        } catch {
            guard error.status == .exists else { throw error }
            throw .exists("\(p) exists; pass CK_OPEN_OVERWRITE to replace it or CK_OPEN_APPEND to continue it")
        }
        return CK_OK
    }
}

@c @implementation public func ck_depth_writer_append(_ writer: OpaquePointer?, _ src: UnsafePointer<ck_depth_map>?,
                                                       _ timestamp: Double) -> ck_status {
    boundary("ck_depth_writer_append") { () throws(CaptureKitError) in
        let w = try object(writer, "writer", as: DepthFileWriter.self)
        let map = try requiredDepthMap(src, "src")
        guard map.width == w.width, map.height == w.height else {
            throw .invalidArgument("src is \(map.width)x\(map.height); the file's frames are \(w.width)x\(w.height)")
        }
        try map.withPacked { (b: UnsafeRawBufferPointer) throws(CaptureKitError) in
            guard let base = b.baseAddress else { throw .invalidArgument("src.data is NULL") }
            try w.append(base, format: map.format, timestamp: timestamp)
        }
        return CK_OK
    }
}

@c @implementation public func ck_depth_writer_flush(_ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_flush") { () throws(CaptureKitError) in
        try object(writer, "writer", as: DepthFileWriter.self).flush()
        return CK_OK
    }
}

@c @implementation public func ck_depth_writer_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_frame_count") { () throws(CaptureKitError) in
        let out = try required(count_out, "count_out")
        out.pointee = UInt64(try object(writer, "writer", as: DepthFileWriter.self).frameCount)
        return CK_OK
    }
}

@c @implementation public func ck_depth_writer_close(_ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_close") { () throws(CaptureKitError) in
        guard let writer else { return CK_OK }
        defer { release(writer, as: DepthFileWriter.self) }
        try object(writer, "writer", as: DepthFileWriter.self).close()
        return CK_OK
    }
}

@c @implementation public func ck_depth_reader_open(_ reader_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_depth_reader_open") { () throws(CaptureKitError) in
        let out = try required(reader_out, "reader_out")
        out.pointee = nil
        let p = try readPath(path, "path")
        out.pointee = handOut(try DepthFileReader(path: p))
        return CK_OK
    }
}

@c @implementation public func ck_depth_reader_info(_ info_out: UnsafeMutablePointer<ck_depth_info>?, _ reader: OpaquePointer?) -> ck_status {
    boundary("ck_depth_reader_info") { () throws(CaptureKitError) in
        let out = try required(info_out, "info_out")
        let i = try object(reader, "reader", as: DepthFileReader.self).info
        out.pointee = ck_depth_info(width: UInt32(i.width), height: UInt32(i.height), kind: Int32(i.kind.rawValue),
                                    version: i.version, frame_count: UInt64(i.frameCount), torn_bytes: i.tornBytes)
        return CK_OK
    }
}

@c @implementation public func ck_depth_reader_read(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                     _ timestamp_out: UnsafeMutablePointer<Double>?, _ reader: OpaquePointer?,
                                                     _ index: UInt64, _ dst_format: Int32) -> ck_status {
    boundary("ck_depth_reader_read") { () throws(CaptureKitError) in
        let r = try object(reader, "reader", as: DepthFileReader.self)
        let format = try readFormat(dst_format, "dst_format")
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let info = r.info
        guard format.converts(to: SampleFormat.storage(of: info.kind)) else {
            throw .invalidArgument("frames of kind \(info.kind) cannot be read as \(format)")
        }
        guard index < UInt64(info.frameCount) else { return CK_END }
        let need = info.width * info.height * format.bytesPerSample
        try checkCapacity(cap, needed: need, written_out)
        let d = try requiredRaw(dst, "dst")
        guard let t = try r.read(Int(index), into: d, format: format) else { return CK_END }
        written_out?.pointee = need
        timestamp_out?.pointee = t
        return CK_OK
    }
}

@c @implementation public func ck_depth_reader_close(_ reader: OpaquePointer?) -> ck_status {
    boundary("ck_depth_reader_close") { () throws(CaptureKitError) in
        release(reader, as: DepthFileReader.self)
        return CK_OK
    }
}

// MARK: transcoding

@c @implementation public func ck_transcode_zstream_to_ckdepth(_ frames_out: UnsafeMutablePointer<UInt64>?, _ dst_path: UnsafePointer<CChar>?,
                                                                _ src_path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32,
                                                                _ stored_format: Int32, _ timestamps: UnsafePointer<Double>?,
                                                                _ timestamp_count: Int, _ flags: UInt32) -> ck_status {
    boundary("ck_transcode_zstream_to_ckdepth") { () throws(CaptureKitError) in
        let dst = try readPath(dst_path, "dst_path"), src = try readPath(src_path, "src_path")
        _ = try readDimensions(width, height)
        let format = try readFormat(stored_format, "stored_format")
        guard format == .depthF16 || format == .u8 else { throw .invalidArgument("stored_format must be CK_FORMAT_DEPTH_F16 or CK_FORMAT_U8") }
        guard flags & ~(CK_OPEN_OVERWRITE | CK_TRANSCODE_ARCHIVAL) == 0 else {
            throw .invalidArgument("flags has unknown bits (only CK_OPEN_OVERWRITE, CK_TRANSCODE_ARCHIVAL)")
        }
        let n = try checkedCount(timestamp_count, stride: 8, "timestamp_count")
        var times: [Double] = []
        if n > 0 { times = Array(UnsafeBufferPointer(start: try required(timestamps, "timestamps"), count: n)) }
        let count = try Transcode.zstreamToDepthFile(source: src, destination: dst, width: Int(width), height: Int(height),
                                                     kind: format == .u8 ? .confidence : .depth, timestamps: times,
                                                     overwrite: flags & CK_OPEN_OVERWRITE != 0,
                                                     level: flags & CK_TRANSCODE_ARCHIVAL != 0 ? Int32(CK_DEPTH_LEVEL_ARCHIVAL) : 1)
        frames_out?.pointee = UInt64(count)
        return CK_OK
    }
}

@c @implementation public func ck_transcode_ckdepth_to_zstream(_ frames_out: UnsafeMutablePointer<UInt64>?, _ dst_path: UnsafePointer<CChar>?,
                                                                _ src_path: UnsafePointer<CChar>?, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_transcode_ckdepth_to_zstream") { () throws(CaptureKitError) in
        let dst = try readPath(dst_path, "dst_path"), src = try readPath(src_path, "src_path")
        guard (0...9).contains(level) else { throw .invalidArgument("level \(level) must be 0 (default) or 1...9") }
        guard flags & ~(CK_OPEN_OVERWRITE | CK_ZSTREAM_INDEX) == 0 else { throw .invalidArgument("flags has unknown bits") }
        let count = try Transcode.depthFileToZstream(source: src, destination: dst, level: level, index: flags & CK_ZSTREAM_INDEX != 0,
                                                     overwrite: flags & CK_OPEN_OVERWRITE != 0)
        frames_out?.pointee = UInt64(count)
        return CK_OK
    }
}
