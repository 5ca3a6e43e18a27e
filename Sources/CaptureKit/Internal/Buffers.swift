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
