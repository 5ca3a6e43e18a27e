import CCaptureKitAPI
import CaptureKitCore

// Header ck_image.h: ck_format_size and the image files (PNG, JPEG). Thin: validates the C
// arguments, calls `PNG` and `JPEG` in the core.

/// The format argument as a `ImageFormat`, or `invalidArgument`.
private func pngFormat(_ format: Int32) throws(CaptureKitError) -> ImageFormat {
    guard let f = ImageFormat(rawValue: format) else {
        throw .invalidArgument("format \(format) is not a CK_IMAGE_FORMAT_* value (1...4)")
    }
    return f
}

/// zlib level: 0 (default) or 1...9.
private func pngLevel(_ level: Int32) throws(CaptureKitError) -> Int32 {
    guard level == 0 || (1...9).contains(level) else {
        throw .invalidArgument("level must be 0 (default) or 1...9 (got \(level))")
    }
    return level
}

@c @implementation public func ck_png_encode_bound(_ width: UInt32, _ height: UInt32, _ format: Int32) -> Int {
    guard let f = ImageFormat(rawValue: format) else { return 0 }
    return (try? PNG.encodeBound(width: Int(width), height: Int(height), format: f)) ?? 0
}

@c @implementation public func ck_png_encode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                              _ image: UnsafePointer<ck_image>?, _ level: Int32) -> ck_status {
    boundary("ck_png_encode") { () throws(CaptureKitError) in
        let img = try requiredImage(image, "image")
        let z = try pngLevel(level)
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let bound = try PNG.encodeBound(width: img.width, height: img.height, format: img.format)
        guard let d = dst else {
            guard capacity == 0 else { throw .invalidArgument("dst is NULL") }
            written_out?.pointee = bound
            throw .bufferTooSmall("dst_capacity 0 is too small; up to \(bound) bytes are needed (ck_png_encode_bound)")
        }
        do throws(CaptureKitError) {
            let n = try PNG.encode(img.bytes, width: img.width, height: img.height, stride: img.stride, format: img.format, level: z,
                                   into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
            written_out?.pointee = n
            return CK_OK
        } catch {
            guard error.status == .bufferTooSmall else { throw error }
            written_out?.pointee = bound
            throw .bufferTooSmall("dst_capacity \(capacity) is too small for this PNG; \(bound) bytes always suffice (ck_png_encode_bound)")
        }
    }
}

@c @implementation public func ck_png_write(_ path: UnsafePointer<CChar>?, _ image: UnsafePointer<ck_image>?, _ level: Int32,
                                            _ flags: UInt32) -> ck_status {
    boundary("ck_png_write") { () throws(CaptureKitError) in
        let p = try readPath(path, "path")
        let img = try requiredImage(image, "image")
        let z = try pngLevel(level)
        guard flags & ~CK_OPEN_OVERWRITE == 0 else {
            throw .invalidArgument("flags 0x\(String(flags, radix: 16)) has bits other than CK_OPEN_OVERWRITE")
        }
        try PNG.write(p, img.bytes, width: img.width, height: img.height, stride: img.stride, format: img.format, level: z,
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

/// Decodes a PNG into the caller's buffer under the buffer rule (capacity checked against the
/// image's size first, so *written_out gets the size needed).
private func decodePNG(_ src: UnsafeRawBufferPointer, _ dst: UnsafeMutableRawPointer?, _ capacity: Int,
                       _ written_out: UnsafeMutablePointer<Int>?) throws(CaptureKitError) {
    let info = try PNG.info(src)
    let need = info.width * info.height * info.format.bytesPerPixel
    try checkCapacity(capacity, needed: need, written_out)
    guard let d = dst else { throw .invalidArgument("dst is NULL") }
    try PNG.decode(src, into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
    written_out?.pointee = need
}

@c @implementation public func ck_png_decode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                              _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_png_decode") { () throws(CaptureKitError) in
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let n = try checkedCount(src_size, stride: 1, "src_size")
        guard let s = src else { throw .invalidArgument("src is NULL") }
        try decodePNG(UnsafeRawBufferPointer(start: s, count: n), dst, capacity, written_out)
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

@c @implementation public func ck_png_read(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                            _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_png_read") { () throws(CaptureKitError) in
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        let p = try readPath(path, "path")
        let bytes = try FileIO.readAll(p)
        try bytes.withUnsafeBytes { b in
            Result { () throws(CaptureKitError) in try decodePNG(b, dst, capacity, written_out) }
        }.get()
        return CK_OK
    }
}

// JPEG (same section of ck_depth.h).

@c @implementation public func ck_jpeg_encode_bound(_ width: UInt32, _ height: UInt32, _ format: Int32) -> Int {
    guard let f = ImageFormat(rawValue: format) else { return 0 }
    return (try? JPEG.encodeBound(width: Int(width), height: Int(height), format: f)) ?? 0
}

@c @implementation public func ck_jpeg_encode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                               _ image: UnsafePointer<ck_image>?, _ quality: Int32) -> ck_status {
    boundary("ck_jpeg_encode") { () throws(CaptureKitError) in
        let img = try requiredImage(image, "image", maxDimension: JPEG.maxDimension)
        guard (0...100).contains(quality) else { throw .invalidArgument("quality \(quality) is not 0 (default) or 1...100") }
        let q = quality == 0 ? JPEG.defaultQuality : quality
        let capacity = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        _ = try JPEG.check(img.bytes, width: img.width, height: img.height, stride: img.stride, format: img.format, quality: q)
        let bound = try JPEG.encodeBound(width: img.width, height: img.height, format: img.format)
        guard let d = dst, capacity >= bound else {
            guard dst != nil || capacity == 0 else { throw .invalidArgument("dst is NULL") }
            written_out?.pointee = bound
            throw .bufferTooSmall("dst_capacity \(capacity) is below the JPEG bound \(bound) (ck_jpeg_encode_bound)")
        }
        written_out?.pointee = try JPEG.encode(img.bytes, width: img.width, height: img.height, stride: img.stride, format: img.format,
                                               quality: q, into: UnsafeMutableRawBufferPointer(start: d, count: capacity))
        return CK_OK
    }
}
