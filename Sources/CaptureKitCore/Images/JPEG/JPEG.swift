import CTurboJPEG

/// JPEG encoding of captured images through libjpeg-turbo's TurboJPEG API (SIMD DCT and colour
/// conversion): baseline JPEG, 4:2:0 chroma for colour images (what phone cameras, nerfstudio's
/// datasets and Pillow's default write), one gray channel for gray images; RGBA's alpha is
/// dropped. Stateless and safe from any thread (each call has its own compressor).
public enum JPEG {
    /// The default quality (`ck_dataset_options.jpeg_quality` 0).
    public static let defaultQuality: Int32 = 90
    /// JPEG's largest width or height.
    public static let maxDimension = 65_535

    /// Checks the arguments every encoder shares and returns the pixels' row bytes.
    public static func check(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: ImageFormat,
                      quality: Int32) throws(CaptureKitError) -> Int {
        guard format != .gray16 else { throw .unsupported("JPEG holds 8-bit images only (gray8, rgb8, rgba8), not gray16") }
        guard (1...maxDimension).contains(width), (1...maxDimension).contains(height) else {
            throw .invalidArgument("JPEG width and height must be 1...\(maxDimension) (got \(width)x\(height))")
        }
        guard (1...100).contains(quality) else { throw .invalidArgument("JPEG quality must be 1...100 (got \(quality))") }
        let rowBytes = width * format.bytesPerPixel
        guard stride >= rowBytes, stride <= Int(Int32.max) else { throw .invalidArgument("stride \(stride) is below width × bytes per pixel (\(rowBytes)) or too large") }
        let span = (height - 1).multipliedReportingOverflow(by: stride)
        guard !span.overflow, span.partialValue <= Int.max - rowBytes else { throw .invalidArgument("stride \(stride) × height is too large") }
        guard pixels.count >= span.partialValue + rowBytes, pixels.baseAddress != nil else {
            throw .invalidArgument("pixels holds \(pixels.count) bytes, \(span.partialValue + rowBytes) needed")
        }
        return rowBytes
    }

    /// The subsampling used for a format.
    static func subsampling(_ format: ImageFormat) -> Int32 {
        format == .gray8 ? Int32(TJSAMP_GRAY.rawValue) : Int32(TJSAMP_420.rawValue)
    }

    /// Worst-case size of an encoded JPEG (libjpeg-turbo's own bound).
    public static func encodeBound(width: Int, height: Int, format: ImageFormat) throws(CaptureKitError) -> Int {
        guard format != .gray16 else { throw .unsupported("JPEG holds 8-bit images only (gray8, rgb8, rgba8), not gray16") }
        guard (1...maxDimension).contains(width), (1...maxDimension).contains(height) else {
            throw .invalidArgument("JPEG width and height must be 1...\(maxDimension) (got \(width)x\(height))")
        }
        let n = tjBufSize(Int32(width), Int32(height), subsampling(format))
        guard n != UInt.max, n > 0 else { throw .invalidArgument("no JPEG bound for \(width)x\(height)") }
        return Int(n)
    }

    /// Encodes pixels (`height` rows `stride` bytes apart) as a JPEG into `dst`; returns its size.
    /// - Throws: `invalidArgument` (sizes, stride, quality, too few pixel bytes), `unsupported`
    ///   (gray16), `bufferTooSmall` (`dst` below `encodeBound`), `noMemory`.
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: ImageFormat,
                              quality: Int32 = defaultQuality, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        _ = try check(pixels, width: width, height: height, stride: stride, format: format, quality: quality)
        let bound = try encodeBound(width: width, height: height, format: format)
        guard dst.count >= bound, let out = dst.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let src = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .bufferTooSmall("a JPEG of \(width)x\(height) needs a buffer of \(bound) bytes (got \(dst.count))")
        }
        guard let tj = tjInitCompress() else { throw .noMemory("could not create a JPEG compressor") }
        defer { tjDestroy(tj) }
        let pf: TJPF = switch format {
        case .gray8: TJPF_GRAY
        case .rgb8: TJPF_RGB
        default: TJPF_RGBA
        }
        var buf: UnsafeMutablePointer<UInt8>? = out
        var size = UInt(bound)
        let rc = tjCompress2(tj, src, Int32(width), Int32(stride), Int32(height), Int32(pf.rawValue), &buf, &size,
                             subsampling(format), quality, TJFLAG_NOREALLOC)
        guard rc == 0, buf == out, size <= UInt(bound) else {
            let why = tjGetErrorStr2(tj).map { String(cString: $0) } ?? "unknown error"
            throw .noMemory("JPEG encoding failed: \(why)")
        }
        return Int(size)
    }

    /// Encodes into a new array (tests, tools).
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: ImageFormat,
                              quality: Int32 = defaultQuality) throws(CaptureKitError) -> [UInt8] {
        let bound = try encodeBound(width: width, height: height, format: format)
        return try withBytes(bound) { (buffer) throws(CaptureKitError) in
            let n = try encode(pixels, width: width, height: height, stride: stride, format: format, quality: quality, into: buffer)
            return Array(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Encodes and writes a JPEG file atomically (temporary file, fsync, rename).
    /// - Throws: as `encode`, plus `exists` (the file exists and `overwrite` is false), `io`, `notFound`.
    public static func write(_ path: String, _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
                             format: ImageFormat, quality: Int32 = defaultQuality, overwrite: Bool) throws(CaptureKitError) {
        let bound = try encodeBound(width: width, height: height, format: format)
        if !overwrite && FileIO.exists(path) { throw .exists("\(path) exists (pass the overwrite flag to replace it)") }
        try withBytes(bound) { (buffer) throws(CaptureKitError) in
            let n = try encode(pixels, width: width, height: height, stride: stride, format: format, quality: quality, into: buffer)
            try FileIO.writeAtomically(path, UnsafeRawBufferPointer(rebasing: buffer[0..<n]), overwrite: overwrite)
        }
    }
}
