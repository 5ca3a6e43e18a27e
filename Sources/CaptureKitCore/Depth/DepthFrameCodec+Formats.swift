// The native codec in the caller's sample formats: which stored kind a format is encoded as, and
// decoding into any format the stored kind converts to. The one place F32 depth meets the codec
// (the C API, the Python binding and the writers all come through here).

extension DepthFrameCodec {
    /// Encodes a map given in any format: F32 and F16 as float16 metres, MM as millimetres, U8 as
    /// bytes (`SampleFormat.defaultKind`). Returns the encoded size.
    /// - Throws: `bufferTooSmall` when `dst` cannot hold the frame (`bound` always suffices).
    public func encode(_ map: SampleMap, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let kind = map.format.defaultKind
        if kind == .bytes {
            return try map.withPacked { (b: UnsafeRawBufferPointer) throws(CaptureKitError) -> Int in
                try encode(bytes: b, width: map.width, height: map.height, into: dst)
            }
        }
        return try map.withPacked(as: SampleFormat.storage(of: kind)) { (b: UnsafeRawBufferPointer) throws(CaptureKitError) -> Int in
            try encode(b.assumingMemoryBound(to: UInt16.self), width: map.width, height: map.height, kind: kind, into: dst)
        }
    }

    /// Decodes a frame into `dst` as `format` (tightly packed; it must hold `header.pixels`
    /// samples of `format`, which must convert from the frame's kind). `dst` is written only when
    /// the whole frame decodes.
    /// - Throws: `corrupt`, `invalidArgument` (format does not fit the kind).
    @discardableResult
    public func decode(_ src: UnsafeRawBufferPointer, as format: SampleFormat,
                       into dst: UnsafeMutableRawPointer) throws(CaptureKitError) -> Header {
        let header = try DepthFrameCodec.header(src)
        let storage = SampleFormat.storage(of: header.kind)
        guard format.converts(to: storage) else {
            throw .invalidArgument("a frame of kind \(header.kind) cannot be decoded as \(format)")
        }
        let n = header.pixels
        if header.kind == .bytes {
            return try decode(bytes: src, into: UnsafeMutableRawBufferPointer(start: dst, count: n))
        }
        if format == storage {
            return try decode(src, into: UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: UInt16.self), count: n))
        }
        var tmp = [UInt16](repeating: 0, count: n)
        let h = try tmp.withUnsafeMutableBufferPointer { (t) throws(CaptureKitError) in try decode(src, into: t) }
        tmp.withUnsafeBufferPointer { t in
            if let base = t.baseAddress { DepthConversion.convert(UnsafeRawPointer(base), storage, dst, format, count: n) }
        }
        return h
    }
}
