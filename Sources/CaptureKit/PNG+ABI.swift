import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: PNG. Thin: validates the C arguments, calls `PNG` in the core.

/// The format argument as a `PNGFormat`, or `invalidArgument`.
private func pngFormat(_ format: Int32) throws(CaptureKitError) -> PNGFormat {
    guard let f = PNGFormat(rawValue: format) else {
        throw .invalidArgument("format \(format) is not a CK_PNG_* value (1...4)")
    }
    return f
}

/// The caller's pixels: `(height − 1) × stride + width × bpp` bytes, all sizes checked.
private func pngPixels(_ pixels: UnsafeRawPointer?, width: UInt32, height: UInt32, stride: Int,
                       format: PNGFormat) throws(CaptureKitError) -> UnsafeRawBufferPointer {
    let w = Int(width), h = Int(height)
    guard w >= 1, w <= PNG.maxDimension else { throw .invalidArgument("width \(width) is outside 1...\(PNG.maxDimension)") }
    guard h >= 1, h <= PNG.maxDimension else { throw .invalidArgument("height \(height) is outside 1...\(PNG.maxDimension)") }
    guard stride != 0 else { throw .invalidArgument("stride 0 is below width × bytes per pixel (\(w * format.bytesPerPixel))") }
    return try imageSpan(pixels, "pixels", width: w, height: h, bytesPerPixel: format.bytesPerPixel, stride: stride, strideName: "stride").bytes
}

/// zlib level: 0 (default) or 1...9.
private func pngLevel(_ level: Int32) throws(CaptureKitError) -> Int32 {
    guard level == 0 || (1...9).contains(level) else {
        throw .invalidArgument("level must be 0 (default) or 1...9 (got \(level))")
    }
    return level
}

@c @implementation public func ck_png_encode_bound(_ width: UInt32, _ height: UInt32, _ format: Int32) -> Int {
    guard let f = PNGFormat(rawValue: format) else { return 0 }
    return (try? PNG.encodeBound(width: Int(width), height: Int(height), format: f)) ?? 0
}

@c @implementation public func ck_png_encode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?, _ pixels: UnsafeRawPointer?, _ width: UInt32, _ height: UInt32, _ stride: Int, _ format: Int32, _ level: Int32) -> ck_status {
    boundary("ck_png_encode") { () throws(CaptureKitError) in
        let written = try required(written_out, "written_out")
        let f = try pngFormat(format)
        let src = try pngPixels(pixels, width: width, height: height, stride: stride, format: f)
        let z = try pngLevel(level)
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let bound = try PNG.encodeBound(width: Int(width), height: Int(height), format: f)
        guard let d = dst else {
            guard capacity == 0 else { throw .invalidArgument("dst is NULL") }
            written.pointee = bound
            throw .bufferTooSmall("dst_capacity 0 is too small; up to \(bound) bytes are needed (ck_png_encode_bound)")
        }
        do throws(CaptureKitError) {
            let n = try PNG.encode(src, width: Int(width), height: Int(height), stride: stride, format: f, level: z,
                                   into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
            written.pointee = n
            return CK_OK
        } catch {
            guard error.status == .bufferTooSmall else { throw error }
            written.pointee = bound
            throw .bufferTooSmall("dst_capacity \(capacity) is too small for this PNG; \(bound) bytes always suffice (ck_png_encode_bound)")
        }
    }
}

@c @implementation public func ck_png_write(_ path: UnsafePointer<CChar>?, _ pixels: UnsafeRawPointer?, _ width: UInt32, _ height: UInt32, _ stride: Int, _ format: Int32, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_png_write") { () throws(CaptureKitError) in
        let p = try readPath(path, "path")
        let f = try pngFormat(format)
        let src = try pngPixels(pixels, width: width, height: height, stride: stride, format: f)
        let z = try pngLevel(level)
        guard flags & ~CK_OPEN_OVERWRITE == 0 else {
            throw .invalidArgument("flags 0x\(String(flags, radix: 16)) has bits other than CK_OPEN_OVERWRITE")
        }
        try PNG.write(p, src, width: Int(width), height: Int(height), stride: stride, format: f, level: z,
                      overwrite: flags & CK_OPEN_OVERWRITE != 0)
        return CK_OK
    }
}

/// Writes the three info outputs (all required).
private func reportInfo(_ info: PNGInfo, _ width_out: UnsafeMutablePointer<UInt32>, _ height_out: UnsafeMutablePointer<UInt32>,
                        _ format_out: UnsafeMutablePointer<Int32>) {
    width_out.pointee = UInt32(truncatingIfNeeded: info.width)
    height_out.pointee = UInt32(truncatingIfNeeded: info.height)
    format_out.pointee = info.format.rawValue
}

@c @implementation public func ck_png_info(_ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?, _ format_out: UnsafeMutablePointer<Int32>?, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_png_info") { () throws(CaptureKitError) in
        let w = try required(width_out, "width_out")
        let h = try required(height_out, "height_out")
        let f = try required(format_out, "format_out")
        let n = try checkedCount(src_size, stride: 1, "src_size")
        guard let s = src else { throw .invalidArgument("src is NULL") }
        reportInfo(try PNG.info(UnsafeRawBufferPointer(start: s, count: n)), w, h, f)
        return CK_OK
    }
}

@c @implementation public func ck_png_decode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_png_decode") { () throws(CaptureKitError) in
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let n = try checkedCount(src_size, stride: 1, "src_size")
        guard let s = src else { throw .invalidArgument("src is NULL") }
        guard let d = dst else { throw .invalidArgument("dst is NULL") }
        try PNG.decode(UnsafeRawBufferPointer(start: s, count: n), into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
        return CK_OK
    }
}

@c @implementation public func ck_png_read_info(_ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?, _ format_out: UnsafeMutablePointer<Int32>?, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_png_read_info") { () throws(CaptureKitError) in
        let w = try required(width_out, "width_out")
        let h = try required(height_out, "height_out")
        let f = try required(format_out, "format_out")
        let p = try readPath(path, "path")
        let bytes = try FileIO.readAll(p)
        let info = try bytes.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try PNG.info(b) } }.get()
        reportInfo(info, w, h, f)
        return CK_OK
    }
}

@c @implementation public func ck_png_read(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_png_read") { () throws(CaptureKitError) in
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        guard let d = dst else { throw .invalidArgument("dst is NULL") }
        let p = try readPath(path, "path")
        let bytes = try FileIO.readAll(p)
        _ = try bytes.withUnsafeBytes { b in
            Result { () throws(CaptureKitError) in
                try PNG.decode(b, into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
            }
        }.get()
        return CK_OK
    }
}
