import CZlib
import Glibc

// PNG (docs/FORMATS.md §6), written and read with zlib alone: 8-bit gray, RGB and RGBA, and 16-bit gray
// (depth in millimetres), non-interlaced. The writer filters every row (PNGFilterChoice), deflates
// the rows as one zlib (RFC 1950) stream and splits it into IDAT chunks of at most
// `PNG.idatChunkSize` bytes. The reader treats its input as hostile: it checks the signature and
// every chunk's CRC, validates IHDR, inflates exactly height × (1 + row bytes) bytes into the
// caller's buffer, undoes all five filters, skips ancillary chunks and requires IEND.

extension ImageFormat {
    /// IHDR colour type (0 gray, 2 RGB, 6 RGBA).
    var colorType: UInt8 {
        switch self {
        case .gray8, .gray16: 0
        case .rgb8: 2
        case .rgba8: 6
        }
    }

    /// IHDR bit depth.
    var bitDepth: UInt8 { self == .gray16 ? 16 : 8 }
}

/// The five PNG row filters (the filter-type byte that starts each row).
public enum PNGFilter: UInt8, Sendable, CaseIterable {
    case none = 0, sub = 1, up = 2, average = 3, paeth = 4
}

/// How the writer picks each row's filter.
public enum PNGFilterChoice: Sendable, Equatable {
    /// The same filter on every row.
    case fixed(PNGFilter)
    /// Per row, the filter whose output has the smallest sum of absolute values, bytes read as
    /// signed (the classic heuristic of the PNG specification and libpng).
    case minimumSum
    /// What measurement chose (`PNG.defaultFilter(for:)`: the minimum sum for every format).
    case automatic
}

/// zlib strategies worth trying on filtered rows.
public enum PNGStrategy: Sendable {
    case `default`, filtered, rle

    var zlibValue: Int32 {
        switch self {
        case .default: Z_DEFAULT_STRATEGY
        case .filtered: Z_FILTERED
        case .rle: Z_RLE
        }
    }
}

/// Dimensions and pixel layout of a PNG.
public struct PNGInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var format: ImageFormat

    public init(width: Int, height: Int, format: ImageFormat) {
        self.width = width
        self.height = height
        self.format = format
    }

    /// Bytes of one tightly packed row.
    public var rowBytes: Int { width * format.bytesPerPixel }
    /// Bytes of the whole tightly packed image.
    public var byteCount: Int { height * rowBytes }
}

/// The PNG writer and reader.
public enum PNG {
    /// Largest accepted width or height (`CK_PNG_MAX_DIMENSION`). Every size computed from it fits
    /// in 64 bits (32768 × (1 + 32768 × 4) ≈ 4.3 GB), and is still checked for overflow.
    public static let maxDimension = 32768
    /// zlib level handed to deflateInit for `level == 0` (the default strategy, Z_RLE, does not
    /// use the level).
    public static let defaultLevel: Int32 = 6
    /// Largest IDAT chunk the writer emits (its data part).
    public static let idatChunkSize = 1 << 18
    /// The 8-byte PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The filter choice `.automatic` stands for. Measured (BENCHMARKS.md, "PNG"): on 16-bit
    /// depth in mm the per-row minimum sum ties with the best fixed filter (Sub) under zlib's
    /// standard strategy and beats every fixed filter under Z_RLE (2.74 vs 2.68); on a camera
    /// photo it ties with the best fixed filter (Paeth) and is 8 % smaller than Sub. Only flat,
    /// noise-free renders (the synthetic scene's colour) prefer None or Sub.
    public static func defaultFilter(for format: ImageFormat) -> PNGFilterChoice {
        .minimumSum
    }

    /// The zlib strategy for a `level` argument: 0 (the default) is Z_RLE, chosen by measurement
    /// (on 256×192 depth in mm: ratio 2.74 at ~6× the speed of level 6's 2.86, and better than
    /// level 1's 2.63 at the same speed; on a camera photo smaller than level 6); levels 1...9
    /// use Z_FILTERED (libpng's choice for filtered rows) at that level, for smaller files.
    public static func defaultStrategy(level: Int32) -> PNGStrategy {
        level == 0 ? .rle : .filtered
    }

    // MARK: sizes

    /// Validated dimensions: bytes of a packed row and of the filtered stream (height × (1 + row)).
    /// - Throws: `invalidArgument` naming `width`/`height` (zero, above `maxDimension`).
    static func sizes(width: Int, height: Int, format: ImageFormat) throws(CaptureKitError) -> (row: Int, stream: Int) {
        guard width >= 1, width <= maxDimension else { throw .invalidArgument("width \(width) is outside 1...\(maxDimension)") }
        guard height >= 1, height <= maxDimension else { throw .invalidArgument("height \(height) is outside 1...\(maxDimension)") }
        let row = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        guard !row.overflow else { throw .invalidArgument("width \(width) is too large") }
        let stream = height.multipliedReportingOverflow(by: row.partialValue + 1)
        guard !stream.overflow else { throw .invalidArgument("width × height is too large") }
        return (row.partialValue, stream.partialValue)
    }

    /// Worst-case zlib output for `n` input bytes with windowBits 15 and memLevel 8 (zlib's tight
    /// `deflateBound` for these parameters, valid for every level and for Z_NO_FLUSH feeding,
    /// plus 16 bytes of slack).
    static func zlibBound(_ n: Int) -> Int {
        n + (n >> 12) + (n >> 14) + (n >> 25) + 13 + 16
    }

    /// Worst-case size of an encoded PNG (signature, IHDR, IDAT chunks, IEND).
    /// - Throws: `invalidArgument` for zero or too large dimensions.
    public static func encodeBound(width: Int, height: Int, format: ImageFormat) throws(CaptureKitError) -> Int {
        let (_, stream) = try sizes(width: width, height: height, format: format)
        let z = zlibBound(stream)
        let chunks = (z + idatChunkSize - 1) / idatChunkSize
        return 8 + 25 + z + 12 * max(chunks, 1) + 12
    }

    // MARK: encoding

    /// Encodes pixels as a PNG into `dst`.
    ///
    /// - Parameters:
    ///   - pixels: `height` rows `stride` bytes apart, each `width × bytesPerPixel` bytes; 16-bit
    ///     samples native-endian. Must hold at least `(height − 1) × stride + width × bytesPerPixel` bytes.
    ///   - level: zlib level 1...9, or 0 for the measured default (Z_RLE; `defaultStrategy(level:)`).
    ///   - filter: the row filter choice (`.automatic`: the measured default for the format).
    ///   - strategy: the zlib strategy (nil: `defaultStrategy(level:)`).
    ///   - dst: the output; a buffer of `encodeBound` bytes always suffices.
    /// - Returns: bytes written to `dst`.
    /// - Throws: `invalidArgument` (sizes, stride, level, too few pixel bytes), `bufferTooSmall`
    ///   (the PNG does not fit in `dst`), `noMemory`.
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: ImageFormat,
                              level: Int32 = 0, filter: PNGFilterChoice = .automatic, strategy: PNGStrategy? = nil,
                              into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let (rowBytes, _) = try sizes(width: width, height: height, format: format)
        guard stride >= rowBytes else { throw .invalidArgument("stride \(stride) is below width × bytes per pixel (\(rowBytes))") }
        let span = (height - 1).multipliedReportingOverflow(by: stride)
        guard !span.overflow, span.partialValue <= Int.max - rowBytes else { throw .invalidArgument("stride \(stride) × height is too large") }
        let needed = span.partialValue + rowBytes
        guard pixels.count >= needed, let src = pixels.baseAddress else {
            throw .invalidArgument("pixels holds \(pixels.count) bytes, \(needed) needed")
        }
        guard level == 0 || (1...9).contains(level) else { throw .invalidArgument("level must be 0 (default) or 1...9 (got \(level))") }
        let choice = filter == .automatic ? defaultFilter(for: format) : filter

        var out = PNGOutput(dst)
        try out.put(signature)
        // IHDR
        var ihdr = [UInt8](repeating: 0, count: 13)
        storeBE(UInt32(truncatingIfNeeded: width), &ihdr, 0)
        storeBE(UInt32(truncatingIfNeeded: height), &ihdr, 4)
        ihdr[8] = format.bitDepth
        ihdr[9] = format.colorType  // compression 0, filter method 0, interlace 0
        try out.chunk("IHDR", ihdr)

        let deflater = try Deflater(level: level == 0 ? defaultLevel : level, raw: false, memLevel: 8,
                                    strategy: (strategy ?? defaultStrategy(level: level)).zlibValue)
        let bpp = format.bytesPerPixel
        let filtered = rowBytes + 1
        // Filtered rows are batched (≥ 128 KiB or one row) before each deflate call.
        let rowsPerBatch = max(1, min(height, (1 << 17) / filtered))
        let bigEndianCopy = format == .gray16 && isLittleEndian
        // Scratch: the batch of filtered rows, a zero row (the row above the first), and for 16-bit
        // samples two big-endian row copies (current and previous).
        let batchBytes = rowsPerBatch * filtered
        try withBytes(batchBytes + rowBytes + (bigEndianCopy ? 2 * rowBytes : 0)) { (scratch) throws(CaptureKitError) in
            guard let base = scratch.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            let batch = base
            let zeros = base + batchBytes
            zeros.initialize(repeating: 0, count: rowBytes)
            var beCurrent = zeros + rowBytes
            var bePrevious = beCurrent + rowBytes
            var inBatch = 0
            var previous = UnsafePointer(zeros)
            for y in 0..<height {
                var current = (src + y * stride).assumingMemoryBound(to: UInt8.self)
                if bigEndianCopy {
                    swapPairs(from: current, to: beCurrent, count: rowBytes)
                    current = UnsafePointer(beCurrent)
                }
                let f: PNGFilter
                switch choice {
                case .fixed(let fixed): f = fixed
                case .minimumSum, .automatic: f = bestFilter(current, previous, rowBytes, bpp)
                }
                let row = batch + inBatch * filtered
                row[0] = f.rawValue
                applyFilter(f, current, previous, row + 1, rowBytes, bpp)
                inBatch += 1
                if inBatch == rowsPerBatch {
                    try deflater.deflate(UnsafeRawBufferPointer(start: batch, count: inBatch * filtered), flush: Z_NO_FLUSH) { (bytes) throws(CaptureKitError) in
                        try out.idat(bytes)
                    }
                    inBatch = 0
                }
                previous = current
                if bigEndianCopy { swap(&beCurrent, &bePrevious) }
            }
            try deflater.deflate(UnsafeRawBufferPointer(start: batch, count: inBatch * filtered), flush: Z_FINISH) { (bytes) throws(CaptureKitError) in
                try out.idat(bytes)
            }
        }
        try out.closeIDAT()
        try out.chunk("IEND", [])
        return out.position
    }

    /// Encodes into a new array (tests, tools).
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: ImageFormat,
                              level: Int32 = 0, filter: PNGFilterChoice = .automatic,
                              strategy: PNGStrategy? = nil) throws(CaptureKitError) -> [UInt8] {
        let bound = try encodeBound(width: width, height: height, format: format)
        return try withBytes(bound) { (buffer) throws(CaptureKitError) in
            let n = try encode(pixels, width: width, height: height, stride: stride, format: format, level: level,
                               filter: filter, strategy: strategy, into: buffer)
            return Array(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Encodes and writes a PNG file atomically (temporary file, fsync, rename).
    /// - Throws: as `encode`, plus `state` (the file exists and `overwrite` is false), `io`, `notFound`.
    public static func write(_ path: String, _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
                             format: ImageFormat, level: Int32 = 0, overwrite: Bool) throws(CaptureKitError) {
        let bound = try encodeBound(width: width, height: height, format: format)
        if !overwrite && FileIO.exists(path) { throw .exists("\(path) exists (pass the overwrite flag to replace it)") }
        try withBytes(bound) { (buffer) throws(CaptureKitError) in
            let n = try encode(pixels, width: width, height: height, stride: stride, format: format, level: level, into: buffer)
            try FileIO.writeAtomically(path, UnsafeRawBufferPointer(rebasing: buffer[0..<n]), overwrite: overwrite)
        }
    }

    // MARK: decoding

    /// Reads the dimensions and format from the signature and IHDR (nothing after IHDR is read).
    /// - Throws: `corrupt` (not a PNG, bad IHDR or its CRC), `unsupported` (palette, interlace,
    ///   gray+alpha, 16-bit colour, bit depths below 8, dimensions above `maxDimension`).
    public static func info(_ src: UnsafeRawBufferPointer) throws(CaptureKitError) -> PNGInfo {
        var reader = ChunkReader(src)
        return try reader.header()
    }

    /// Decodes a PNG into tightly packed rows (`info.byteCount` bytes; 16-bit samples native-endian).
    /// - Returns: the image's dimensions and format.
    /// - Throws: `corrupt` (signature, chunk CRC or order, zlib stream, image data size, missing
    ///   IEND), `unsupported` (as `info`, and unknown critical chunks), `bufferTooSmall`
    ///   (`dst` below `info.byteCount`), `noMemory`.
    @discardableResult
    public static func decode(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> PNGInfo {
        var reader = ChunkReader(src)
        let info = try reader.header()
        let rowBytes = info.rowBytes, total = info.byteCount
        guard dst.count >= total, let out = dst.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .bufferTooSmall("dst holds \(dst.count) bytes, the \(info.width)×\(info.height) image needs \(total)")
        }
        let filtered = rowBytes + 1
        let rowsPerBatch = max(1, min(info.height, (1 << 16) / filtered))
        let bpp = info.format.bytesPerPixel
        let swapBytes = info.format == .gray16 && isLittleEndian
        let inflater = try Inflater(raw: false)
        // Scratch: the staging buffer of filtered rows, then a zero row (the row above the first).
        return try withBytes(rowsPerBatch * filtered + rowBytes) { (scratch) throws(CaptureKitError) -> PNGInfo in
            guard let stage = scratch.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .noMemory("no scratch memory") }
            let zeros = stage + rowsPerBatch * filtered
            zeros.initialize(repeating: 0, count: rowBytes)
            var row = 0            // next row to undo
            var filled = 0         // bytes in the staging buffer
            var batchBytes = min(rowsPerBatch, info.height) * filtered
            var sawIDAT = false, idatEnded = false, sawPLTE = false
            var extra: UInt8 = 0

            /// Undoes the filters of the complete rows in the staging buffer.
            func flushRows() throws(CaptureKitError) {
                let rows = filled / filtered
                for k in 0..<rows {
                    let line = stage + k * filtered
                    guard let f = PNGFilter(rawValue: line[0]) else {
                        throw .corrupt("row \(row) has filter type \(line[0]) (0...4 are defined)")
                    }
                    let current = out + row * rowBytes
                    undoFilter(f, line + 1, row == 0 ? zeros : current - rowBytes, current, rowBytes, bpp)
                    // 16-bit: the previous row is no longer needed big-endian.
                    if swapBytes && row > 0 { swapPairs(in: current - rowBytes, count: rowBytes) }
                    row += 1
                }
                filled = 0
                batchBytes = min(rowsPerBatch, info.height - row) * filtered
            }

            /// Feeds one IDAT chunk's data to the inflater.
            func feed(_ data: UnsafeRawBufferPointer) throws(CaptureKitError) {
                var input = data
                while input.count > 0 && !inflater.finished {
                    let r: (consumed: Int, produced: Int)
                    if row < info.height {
                        r = try inflater.inflate(input, into: UnsafeMutableRawBufferPointer(start: stage + filled, count: batchBytes - filled))
                        filled += r.produced
                        if filled == batchBytes { try flushRows() }
                    } else {
                        // Every row is complete: the stream may only end now (checksum), not produce bytes.
                        r = try withUnsafeMutableBytes(of: &extra) { (b) throws(CaptureKitError) in try inflater.inflate(input, into: b) }
                        if r.produced > 0 { throw .corrupt("the zlib stream holds more than the \(info.height) rows of image data") }
                    }
                    if r.consumed == 0 && r.produced == 0 && !inflater.finished { throw .corrupt("the zlib stream does not progress") }
                    input = UnsafeRawBufferPointer(rebasing: input[r.consumed...])
                }
                // Bytes after the end of the zlib stream are ignored (as libpng does).
            }

            while true {
                let chunk = try reader.next()
                switch chunk.type {
                case ChunkType.IDAT:
                    guard !idatEnded else { throw .corrupt("IDAT chunks are not consecutive") }
                    sawIDAT = true
                    try feed(chunk.data)
                case ChunkType.IEND:
                    guard sawIDAT else { throw .corrupt("no IDAT chunk before IEND") }
                    guard chunk.data.count == 0 else { throw .corrupt("IEND has \(chunk.data.count) data bytes (0 expected)") }
                    guard row == info.height else {
                        throw .corrupt("image data ends after \(row) of \(info.height) rows (truncated zlib stream)")
                    }
                    guard inflater.finished else { throw .corrupt("the zlib stream does not end after the image data (truncated)") }
                    // The last row is still big-endian.
                    if swapBytes { swapPairs(in: out + (info.height - 1) * rowBytes, count: rowBytes) }
                    return info
                case ChunkType.IHDR:
                    throw .corrupt("a second IHDR chunk")
                case ChunkType.PLTE:
                    // A suggested palette is allowed for RGB(A) before the image data; ignored.
                    guard info.format.colorType != 0 else { throw .corrupt("PLTE chunk in a grayscale image") }
                    guard !sawIDAT, !sawPLTE else { throw .corrupt("PLTE chunk after IDAT or repeated") }
                    guard chunk.data.count % 3 == 0, (3...768).contains(chunk.data.count) else {
                        throw .corrupt("PLTE chunk of \(chunk.data.count) bytes")
                    }
                    sawPLTE = true
                    if sawIDAT { idatEnded = true }
                default:
                    if chunk.type & 0x2000_0000 == 0 {
                        throw .unsupported("critical chunk \"\(chunkName(chunk.type))\" is not supported")
                    }
                    if sawIDAT { idatEnded = true }  // ancillary: skipped
                }
            }
        }
    }

    /// Reads and decodes a PNG file into a new array.
    /// - Throws: as `decode`, plus `notFound` and `io`.
    public static func read(_ path: String) throws(CaptureKitError) -> (pixels: [UInt8], info: PNGInfo) {
        let bytes = try FileIO.readAll(path)
        // Array's withUnsafe… functions rethrow untyped errors: carry typed ones through Result.
        return try bytes.withUnsafeBytes { src in
            Result { () throws(CaptureKitError) -> ([UInt8], PNGInfo) in
                let info = try PNG.info(src)
                var pixels = [UInt8](repeating: 0, count: info.byteCount)
                try pixels.withUnsafeMutableBytes { dst in
                    Result { () throws(CaptureKitError) in _ = try decode(src, into: dst) }
                }.get()
                return (pixels, info)
            }
        }.get()
    }
}

