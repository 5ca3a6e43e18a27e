import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: "MultiScan-compatible streams" (ck_zstream_*). Validates, converts,
// calls CaptureKitCore's ZStreamWriter / ZStreamReader and maps errors to status codes.

// MARK: Handles and arguments

/// The stream kind of a `stored_format` (CK_FORMAT_DEPTH_F16 or CK_FORMAT_U8).
private func streamKind(_ format: Int32) throws(CaptureKitError) -> ZStream.Kind {
    switch SampleFormat(rawValue: format) {
    case .depthF16: return .depth
    case .u8: return .confidence
    default:
        throw .invalidArgument("stored_format \(format) is not CK_FORMAT_DEPTH_F16 (2, depth) or CK_FORMAT_U8 (4, confidence)")
    }
}

/// Frame dimensions as the core takes them (range checked there).
private func dimension(_ v: UInt32) -> Int { Int(v) }

// MARK: Writer

@c @implementation public func ck_zstream_writer_open(_ writer_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ stored_format: Int32, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_zstream_writer_open") { () throws(CaptureKitError) in
        let out = try required(writer_out, "writer_out")
        out.pointee = nil
        let p = try readPath(path, "path")
        let kind = try streamKind(stored_format)
        let known = CK_OPEN_OVERWRITE | CK_ZSTREAM_INDEX
        guard flags & ~known == 0 else {
            throw .invalidArgument("flags 0x\(String(flags, radix: 16)) has bits other than CK_OPEN_OVERWRITE | CK_ZSTREAM_INDEX")
        }
        guard (0...9).contains(level) else { throw .invalidArgument("level \(level) is outside 0...9 (0 = CK_ZSTREAM_DEFAULT_LEVEL)") }
        let w = try ZStreamWriter(path: p, width: dimension(width), height: dimension(height), kind: kind, level: level,
                                  index: flags & CK_ZSTREAM_INDEX != 0, overwrite: flags & CK_OPEN_OVERWRITE != 0)
        out.pointee = handOut(w)
        return CK_OK
    }
}

@c @implementation public func ck_zstream_writer_append(_ writer: OpaquePointer?, _ src: UnsafePointer<ck_depth_map>?) -> ck_status {
    boundary("ck_zstream_writer_append") { () throws(CaptureKitError) in
        let w = try object(writer, "writer", as: ZStreamWriter.self)
        let map = try requiredDepthMap(src, "src")
        guard map.width == w.width, map.height == w.height else {
            throw .invalidArgument("src is \(map.width)x\(map.height); the stream's frames are \(w.width)x\(w.height)")
        }
        try map.withPacked { (b: UnsafeRawBufferPointer) throws(CaptureKitError) in
            guard let base = b.baseAddress else { throw .invalidArgument("src.data is NULL") }
            try w.append(base, format: map.format)
        }
        return CK_OK
    }
}

@c @implementation public func ck_zstream_writer_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ writer: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_writer_frame_count") { () throws(CaptureKitError) in
        let out = try required(count_out, "count_out")
        out.pointee = try object(writer, "writer", as: ZStreamWriter.self).frameCount
        return CK_OK
    }
}

@c @implementation public func ck_zstream_writer_close(_ writer: OpaquePointer?) -> ck_status {
    guard let writer else { return CK_OK }
    let handle = Unmanaged<ZStreamWriter>.fromOpaque(UnsafeRawPointer(writer))
    defer { handle.release() }  // freed even on error
    return boundary("ck_zstream_writer_close") { () throws(CaptureKitError) in
        try handle.takeUnretainedValue().close()
        return CK_OK
    }
}

// MARK: Reader

@c @implementation public func ck_zstream_reader_open(_ reader_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ stored_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_open") { () throws(CaptureKitError) in
        let out = try required(reader_out, "reader_out")
        out.pointee = nil
        let p = try readPath(path, "path")
        let kind = try streamKind(stored_format)
        let r = try ZStreamReader(path: p, width: dimension(width), height: dimension(height), kind: kind)
        out.pointee = handOut(r)
        return CK_OK
    }
}

@c @implementation public func ck_zstream_reader_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ reader: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_reader_frame_count") { () throws(CaptureKitError) in
        let out = try required(count_out, "count_out")
        out.pointee = try object(reader, "reader", as: ZStreamReader.self).frameCount()
        return CK_OK
    }
}

/// Validates `dst` and runs a read; CK_END when there is no such frame.
private func readFrame(_ dst: UnsafeMutableRawPointer?, _ capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                       _ reader: OpaquePointer?, _ format: Int32,
                       _ body: (ZStreamReader, UnsafeMutableRawBufferPointer, SampleFormat) throws(CaptureKitError) -> Bool) throws(CaptureKitError) -> ck_status {
    let r = try object(reader, "reader", as: ZStreamReader.self)
    let capacity = try checkedCount(capacity, stride: 1, "dst_capacity")
    let f = try readFormat(format, "dst_format")
    let need = r.width * r.height * f.bytesPerSample
    try checkCapacity(capacity, needed: need, written_out)
    guard let dst else { throw .invalidArgument("dst is NULL") }
    guard try body(r, UnsafeMutableRawBufferPointer(start: dst, count: capacity), f) else { return CK_END }
    written_out?.pointee = need
    return CK_OK
}

@c @implementation public func ck_zstream_reader_next(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                       _ reader: OpaquePointer?, _ dst_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_next") { () throws(CaptureKitError) in
        try readFrame(dst, dst_capacity, written_out, reader, dst_format) { (r, d, f) throws(CaptureKitError) in try r.next(into: d, format: f) }
    }
}

@c @implementation public func ck_zstream_reader_read(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                       _ reader: OpaquePointer?, _ index: UInt64, _ dst_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_read") { () throws(CaptureKitError) in
        try readFrame(dst, dst_capacity, written_out, reader, dst_format) { (r, d, f) throws(CaptureKitError) in try r.read(index, into: d, format: f) }
    }
}

@c @implementation public func ck_zstream_reader_close(_ reader: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_reader_close") { () throws(CaptureKitError) in
        release(reader, as: ZStreamReader.self)
        return CK_OK
    }
}
