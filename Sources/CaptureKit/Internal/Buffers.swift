import CCaptureKitAPI
import CaptureKitCore

// Caller buffer sizes: every count and image span a C caller passes is checked before use.

/// A caller count checked against the element size so that `count * stride` cannot overflow, and
/// against an optional upper limit.
func checkedCount(_ count: Int, stride: Int, limit: Int = Int.max, _ name: String) throws(CaptureKitError) -> Int {
    guard count >= 0 else { throw .invalidArgument("\(name) is negative or above SIZE_MAX/2 (\(UInt(bitPattern: count)))") }
    guard count <= limit, !count.multipliedReportingOverflow(by: max(stride, 1)).overflow else {
        throw .invalidArgument("\(name) \(count) is too large (limit \(limit))")
    }
    return count
}

/// The bytes of a caller's image: `height` rows of `width × bytesPerPixel` bytes, `stride` bytes
/// apart (0 = tightly packed), that is `(height − 1) × stride + width × bytesPerPixel` bytes from
/// `base`. The one place caller image sizes are computed: every product and sum is
/// overflow-checked, so no stride or size a C caller passes (1 << 62, SIZE_MAX) can trap.
/// - Throws: `invalidArgument` naming `name` (the pointer) or `strideName`.
func imageSpan(_ base: UnsafeRawPointer?, _ name: String, width: Int, height: Int, bytesPerPixel: Int,
               stride: Int, strideName: String) throws(CaptureKitError) -> (bytes: UnsafeRawBufferPointer, stride: Int) {
    guard width >= 1, height >= 1, bytesPerPixel >= 1 else {
        throw .invalidArgument("\(name): width x height \(width) x \(height) must be at least 1 x 1")
    }
    let row = width.multipliedReportingOverflow(by: bytesPerPixel)
    guard !row.overflow else { throw .invalidArgument("\(name): width \(width) x \(bytesPerPixel) bytes overflows") }
    guard stride >= 0 else { throw .invalidArgument("\(strideName) \(UInt(bitPattern: stride)) is above SIZE_MAX/2") }
    let s = stride == 0 ? row.partialValue : stride
    guard s >= row.partialValue else {
        throw .invalidArgument("\(strideName) \(s) is below width x bytes per pixel = \(row.partialValue)")
    }
    let rows = (height - 1).multipliedReportingOverflow(by: s)
    let total = rows.partialValue.addingReportingOverflow(row.partialValue)
    // No process can own a buffer of 2^56 bytes (64 PiB, the largest 64-bit address space in use):
    // a larger span is a bad stride, not a buffer to read.
    guard !rows.overflow, !total.overflow, total.partialValue <= 1 << 56 else {
        throw .invalidArgument("\(strideName) \(s) x (height - 1 = \(height - 1)) is beyond any address space")
    }
    guard let base else { throw .invalidArgument("\(name) is NULL") }
    return (UnsafeRawBufferPointer(start: base, count: total.partialValue), s)
}

/// Checks a caller's output buffer: `capacity` elements of `elementSize` bytes against the `needed`
/// ones. A capacity whose bytes would exceed SIZE_MAX/2 describes no real buffer and is refused
/// (CK_E_INVALID_ARGUMENT). When it is too small, *written_out (optional) gets `needed` and the
/// call fails with CK_E_BUFFER_TOO_SMALL before anything is written: the one rule of every "fill
/// my buffer" call (capturekit.h).
func checkCapacity(_ capacity: Int, needed: Int, _ written_out: UnsafeMutablePointer<Int>?,
                   _ name: String = "dst_capacity", unit: String = "bytes", elementSize: Int = 1) throws(CaptureKitError) {
    guard capacity >= 0 else { throw .invalidArgument("\(name) \(UInt(bitPattern: capacity)) is above SIZE_MAX/2") }
    guard !capacity.multipliedReportingOverflow(by: max(elementSize, 1)).overflow else {
        throw .invalidArgument("\(name) \(capacity) \(unit) of \(elementSize) bytes is above SIZE_MAX/2 bytes: no buffer is that large")
    }
    guard capacity >= needed else {
        written_out?.pointee = needed
        throw .bufferTooSmall("\(name) \(capacity) is below the \(needed) \(unit) needed (in *written_out)")
    }
}

/// A caller's `ck_depth_map`: nil when absent (`data` NULL); otherwise every field checked (format
/// one of `allowed`, reserved 0, 1 ≤ sides ≤ `maxDimension`, stride and span via `imageSpan`).
func readDepthMap(_ m: ck_depth_map, _ name: String, allowed: [SampleFormat] = SampleFormat.allCases,
                  maxDimension: Int = DepthFrameCodec.maxDimension) throws(CaptureKitError) -> SampleMap? {
    guard m.data != nil else { return nil }
    guard let f = SampleFormat(rawValue: m.format), allowed.contains(f) else {
        let names = allowed.map { "\($0)" }.joined(separator: ", ")
        throw .invalidArgument("\(name).format \(m.format) is not one of the accepted ck_format values (\(names))")
    }
    guard m.reserved == 0 else { throw .invalidArgument("\(name).reserved is not 0") }
    guard m.width >= 1, m.height >= 1, Int(m.width) <= maxDimension, Int(m.height) <= maxDimension else {
        throw .invalidArgument("\(name): width x height \(m.width)x\(m.height) must be within 1...\(maxDimension)")
    }
    let span = try imageSpan(m.data, "\(name).data", width: Int(m.width), height: Int(m.height),
                             bytesPerPixel: f.bytesPerSample, stride: m.stride, strideName: "\(name).stride")
    guard let base = span.bytes.baseAddress else { throw .invalidArgument("\(name).data is NULL") }
    return SampleMap(base: base, width: Int(m.width), height: Int(m.height), stride: span.stride, format: f)
}

/// `readDepthMap` through a pointer: nil when the pointer or its data is NULL.
func readDepthMap(_ p: UnsafePointer<ck_depth_map>?, _ name: String, allowed: [SampleFormat] = SampleFormat.allCases,
                  maxDimension: Int = DepthFrameCodec.maxDimension) throws(CaptureKitError) -> SampleMap? {
    guard let p else { return nil }
    return try readDepthMap(p.pointee, name, allowed: allowed, maxDimension: maxDimension)
}

/// A required map: NULL pointer or NULL data is `invalidArgument`.
func requiredDepthMap(_ p: UnsafePointer<ck_depth_map>?, _ name: String, allowed: [SampleFormat] = SampleFormat.allCases,
                      maxDimension: Int = DepthFrameCodec.maxDimension) throws(CaptureKitError) -> SampleMap {
    guard let m = try readDepthMap(try required(p, name), name, allowed: allowed, maxDimension: maxDimension) else {
        throw .invalidArgument("\(name).data is NULL")
    }
    return m
}

/// A caller's image, checked: its pixels and layout.
struct CallerImage {
    let bytes: UnsafeRawBufferPointer
    let width: Int, height: Int, stride: Int
    let format: ImageFormat
}

/// A caller's `ck_image`: nil when absent (`data` NULL and format NONE); otherwise every field
/// checked (format one of `allowed`, reserved 0, sides within 1...`maxDimension`, span).
func readImage(_ i: ck_image, _ name: String, allowed: [ImageFormat] = ImageFormat.allCases,
               maxDimension: Int = PNG.maxDimension) throws(CaptureKitError) -> CallerImage? {
    if i.data == nil && i.format == 0 { return nil }   // CK_IMAGE_FORMAT_NONE
    guard let f = ImageFormat(rawValue: i.format), allowed.contains(f) else {
        let names = allowed.map { "\($0)" }.joined(separator: ", ")
        throw .invalidArgument("\(name).format \(i.format) is not one of the accepted ck_image_format values (\(names))")
    }
    guard i.reserved == 0 else { throw .invalidArgument("\(name).reserved is not 0") }
    guard i.width >= 1, i.height >= 1, Int(i.width) <= maxDimension, Int(i.height) <= maxDimension else {
        throw .invalidArgument("\(name): width x height \(i.width)x\(i.height) must be within 1...\(maxDimension)")
    }
    let span = try imageSpan(i.data, "\(name).data", width: Int(i.width), height: Int(i.height),
                             bytesPerPixel: f.bytesPerPixel, stride: i.stride, strideName: "\(name).stride")
    return CallerImage(bytes: span.bytes, width: Int(i.width), height: Int(i.height), stride: span.stride, format: f)
}

/// A required image through a pointer.
func requiredImage(_ p: UnsafePointer<ck_image>?, _ name: String, allowed: [ImageFormat] = ImageFormat.allCases,
                   maxDimension: Int = PNG.maxDimension) throws(CaptureKitError) -> CallerImage {
    guard let i = try readImage(try required(p, name).pointee, name, allowed: allowed, maxDimension: maxDimension) else {
        throw .invalidArgument("\(name).data is NULL")
    }
    return i
}

/// Checks a map destination: format, capacity (reporting the bytes and size when too small), pointer.
func mapDestination(_ dst: UnsafeMutableRawPointer?, _ capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                            _ format: SampleFormat, _ size: (width: Int, height: Int),
                            _ width_out: UnsafeMutablePointer<UInt32>? = nil, _ height_out: UnsafeMutablePointer<UInt32>? = nil)
    throws(CaptureKitError) -> UnsafeMutableRawBufferPointer {
    let capacity = try checkedCount(capacity, stride: 1, "dst_capacity")
    width_out?.pointee = UInt32(size.width); height_out?.pointee = UInt32(size.height)
    let need = size.width * size.height * format.bytesPerSample
    try checkCapacity(capacity, needed: need, written_out)
    guard let dst else { throw .invalidArgument("dst is NULL") }
    return UnsafeMutableRawBufferPointer(start: dst, count: need)
}

func depthFormat(_ raw: Int32) throws(CaptureKitError) -> SampleFormat {
    let f = try readFormat(raw, "dst_format")
    guard f.isDepth else { throw .invalidArgument("dst_format must be a depth format (CK_FORMAT_F32, F16 or MM)") }
    return f
}
