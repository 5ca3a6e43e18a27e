/// A 2-D map of samples in caller memory (`ck_depth_map`): `height` rows of `width` samples of
/// `format`, rows `stride` bytes apart. Borrowed: valid only while the caller's call runs.
/// The ABI layer builds it after checking every size (`imageSpan`), so the span here is valid.
public struct SampleMap {
    public let base: UnsafeRawPointer
    public let width: Int, height: Int
    /// Bytes from one row to the next (at least a row's bytes).
    public let stride: Int
    public let format: SampleFormat

    public init(base: UnsafeRawPointer, width: Int, height: Int, stride: Int, format: SampleFormat) {
        self.base = base; self.width = width; self.height = height; self.stride = stride; self.format = format
    }

    public var count: Int { width * height }
    public var rowBytes: Int { width * format.bytesPerSample }
    public var isPacked: Bool { stride == rowBytes || height == 1 }

    /// Calls `body` with the samples tightly packed: the caller's memory when it already is, else a
    /// packed copy (one row-by-row memcpy).
    public func withPacked<R>(_ body: (UnsafeRawBufferPointer) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
        if isPacked { return try body(UnsafeRawBufferPointer(start: base, count: count * format.bytesPerSample)) }
        let row = rowBytes
        var copy = [UInt8](repeating: 0, count: row * height)
        copy.withUnsafeMutableBytes { d in
            guard let out = d.baseAddress else { return }
            for r in 0..<height { (out + r * row).copyMemory(from: base + r * stride, byteCount: row) }
        }
        return try copy.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try body(b) } }.get()
    }

    /// Calls `body` with the samples converted to `target` (depth rules) and tightly packed.
    /// Callers check `format.converts(to: target)` first.
    public func withPacked<R>(as target: SampleFormat,
                              _ body: (UnsafeRawBufferPointer) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
        if target == format { return try withPacked(body) }
        return try withPacked { (src: UnsafeRawBufferPointer) throws(CaptureKitError) -> R in
            var out = [UInt8](repeating: 0, count: count * target.bytesPerSample)
            out.withUnsafeMutableBytes { d in
                if let s = src.baseAddress, let o = d.baseAddress { DepthConversion.convert(s, format, o, target, count: count) }
            }
            return try out.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try body(b) } }.get()
        }
    }
}
