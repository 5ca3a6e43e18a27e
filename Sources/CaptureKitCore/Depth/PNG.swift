import CZlib
import Glibc

// PNG (FORMATS.md §6), written and read with zlib alone: 8-bit gray, RGB and RGBA, and 16-bit gray
// (depth in millimetres), non-interlaced. The writer filters every row (PNGFilterChoice), deflates
// the rows as one zlib (RFC 1950) stream and splits it into IDAT chunks of at most
// `PNG.idatChunkSize` bytes. The reader treats its input as hostile: it checks the signature and
// every chunk's CRC, validates IHDR, inflates exactly height × (1 + row bytes) bytes into the
// caller's buffer, undoes all five filters, skips ancillary chunks and requires IEND.

/// Pixel layouts (raw values = the C header's `CK_PNG_*`).
public enum PNGFormat: Int32, Sendable, CaseIterable {
    case gray8 = 1
    case rgb8 = 2
    case rgba8 = 3
    /// 16-bit gray, native-endian in memory (big-endian in the file). Depth in millimetres.
    case gray16 = 4

    /// Bytes per pixel in memory and in the file.
    public var bytesPerPixel: Int {
        switch self {
        case .gray8: 1
        case .rgb8: 3
        case .rgba8: 4
        case .gray16: 2
        }
    }

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
    public var format: PNGFormat

    public init(width: Int, height: Int, format: PNGFormat) {
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
    public static func defaultFilter(for format: PNGFormat) -> PNGFilterChoice {
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
    static func sizes(width: Int, height: Int, format: PNGFormat) throws(CaptureKitError) -> (row: Int, stream: Int) {
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
    public static func encodeBound(width: Int, height: Int, format: PNGFormat) throws(CaptureKitError) -> Int {
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
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: PNGFormat,
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
    public static func encode(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: PNGFormat,
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
                             format: PNGFormat, level: Int32 = 0, overwrite: Bool) throws(CaptureKitError) {
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

// MARK: - Filters

extension PNG {
    static var isLittleEndian: Bool {
        #if _endian(little)
        true
        #else
        false
        #endif
    }

    /// Copies `count` bytes swapping each byte pair (native ↔ big-endian 16-bit samples); `src`
    /// may equal `dst` (not otherwise overlap).
    @inline(__always)
    static func swapPairs(from src: UnsafePointer<UInt8>, to dst: UnsafeMutablePointer<UInt8>, count: Int) {
        var i = 0
        while i + 16 <= count {
            let w = UnsafeRawPointer(src + i).loadUnaligned(as: SIMD8<UInt16>.self)
            UnsafeMutableRawPointer(dst + i).storeBytes(of: (w &<< 8) | (w &>> 8), as: SIMD8<UInt16>.self)
            i += 16
        }
        while i + 1 < count {
            let first = src[i]  // read both before writing: src may equal dst
            dst[i] = src[i + 1]
            dst[i + 1] = first
            i += 2
        }
    }

    /// Swaps each byte pair in place.
    @inline(__always)
    static func swapPairs(in p: UnsafeMutablePointer<UInt8>, count: Int) {
        swapPairs(from: p, to: p, count: count)
    }

    typealias Bytes16 = SIMD16<UInt8>

    @inline(__always)
    static func load16(_ p: UnsafePointer<UInt8>) -> Bytes16 { UnsafeRawPointer(p).loadUnaligned(as: Bytes16.self) }

    @inline(__always)
    static func store16(_ v: Bytes16, _ p: UnsafeMutablePointer<UInt8>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: Bytes16.self) }

    /// ⌊(a + b) / 2⌋ without overflow.
    @inline(__always)
    static func average(_ a: Bytes16, _ b: Bytes16) -> Bytes16 { (a & b) &+ ((a ^ b) &>> 1) }

    // Codegen note: compare SIMD values with vectors (`x .< y`), not scalar literals (`x .< 0`
    // compiles to a per-lane loop through memory).

    /// |x − y| per byte.
    @inline(__always)
    static func absoluteDifference(_ x: Bytes16, _ y: Bytes16) -> Bytes16 { (x &- y).replacing(with: y &- x, where: x .< y) }

    /// The Paeth predictor of the PNG specification, 16 lanes, in bytes (a left, b up, c up-left).
    /// With p = a + b − c: |p − a| = |b − c|, |p − b| = |a − c|, and |p − c| = |(b − c) + (a − c)|,
    /// which is ||b − c| − |a − c|| when the two differences have opposite signs, and otherwise at
    /// least both of them (then only "≥ both" matters to the choice, so 255 stands for it).
    @inline(__always)
    static func paeth(_ a: Bytes16, _ b: Bytes16, _ c: Bytes16) -> Bytes16 {
        let pa = absoluteDifference(b, c), pb = absoluteDifference(a, c)
        let opposite = (b .>= c) .^ (a .>= c)
        let pc = Bytes16(repeating: 255).replacing(with: absoluteDifference(pa, pb), where: opposite)
        return c.replacing(with: b, where: pb .<= pc).replacing(with: a, where: (pa .<= pb) .& (pa .<= pc))
    }

    /// The Paeth predictor, one byte (branch-free selects).
    @inline(__always)
    static func paethPredictor(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let ia = Int(a), ib = Int(b), ic = Int(c)
        let pa = abs(ib - ic), pb = abs(ia - ic), pc = abs(ia + ib - 2 * ic)
        let bc = pb <= pc ? b : c
        return pa <= pb && pa <= pc ? a : bc
    }

    /// The predictor of filter `f` from the left (a), up (b) and up-left (c) bytes.
    @inline(__always)
    static func predictor(_ f: PNGFilter, _ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        switch f {
        case .none: 0
        case .sub: a
        case .up: b
        case .average: UInt8(truncatingIfNeeded: (UInt16(a) &+ UInt16(b)) >> 1)
        case .paeth: paethPredictor(a, b, c)
        }
    }

    /// `out[i] = cur[i] − predictor(i)` over a row, 16 bytes at a time.
    @inline(__always)
    static func filterLoop(_ f: PNGFilter, _ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                           _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int,
                           _ predict: (Bytes16, Bytes16, Bytes16) -> Bytes16) {
        var i = min(bpp, n)
        for k in 0..<i { out[k] = cur[k] &- predictor(f, 0, prev[k], 0) }
        while i + 16 <= n {
            let p = predict(load16(cur + i - bpp), load16(prev + i), load16(prev + i - bpp))
            store16(load16(cur + i) &- p, out + i)
            i += 16
        }
        while i < n {
            out[i] = cur[i] &- predictor(f, cur[i - bpp], prev[i], prev[i - bpp])
            i += 1
        }
    }

    /// Filters one row of `n` bytes (`prev`: the row above, all zeros for the first row).
    static func applyFilter(_ f: PNGFilter, _ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                            _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int) {
        switch f {
        case .none: out.update(from: cur, count: n)
        case .sub: filterLoop(f, cur, prev, out, n, bpp) { a, _, _ in a }
        case .up: filterLoop(f, cur, prev, out, n, bpp) { _, b, _ in b }
        case .average: filterLoop(f, cur, prev, out, n, bpp) { a, b, _ in average(a, b) }
        case .paeth: filterLoop(f, cur, prev, out, n, bpp) { a, b, c in paeth(a, b, c) }
        }
    }

    /// Undoes a filter: `out[i] = line[i] + predictor(out)`. `prev` and `out` are rows of the
    /// output image (`prev` all zeros for the first row); `line` is the filtered row. Sub, Average
    /// and Paeth depend on the byte just produced, so only Up runs 16 bytes at a time.
    static func undoFilter(_ f: PNGFilter, _ line: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                           _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int) {
        let first = min(bpp, n)
        switch f {
        case .none:
            out.update(from: line, count: n)
        case .up:
            var i = 0
            while i + 16 <= n { store16(load16(line + i) &+ load16(prev + i), out + i); i += 16 }
            while i < n { out[i] = line[i] &+ prev[i]; i += 1 }
        case .sub:
            for i in 0..<first { out[i] = line[i] }
            for i in first..<n { out[i] = line[i] &+ out[i - bpp] }
        case .average:
            for i in 0..<first { out[i] = line[i] &+ (prev[i] >> 1) }
            for i in first..<n { out[i] = line[i] &+ UInt8(truncatingIfNeeded: (UInt16(out[i - bpp]) &+ UInt16(prev[i])) >> 1) }
        case .paeth:
            for i in 0..<first { out[i] = line[i] &+ prev[i] }
            for i in first..<n { out[i] = line[i] &+ paethPredictor(out[i - bpp], prev[i], prev[i - bpp]) }
        }
    }

    /// |r| of residual bytes read as signed (0...128), 16 lanes.
    @inline(__always)
    static func magnitude(_ r: Bytes16) -> Bytes16 {
        let n = 0 &- r
        return r.replacing(with: n, where: n .< r)
    }

    /// |r| of one residual byte read as signed.
    @inline(__always)
    static func magnitude(_ r: UInt8) -> Int { Int(min(r, 0 &- r)) }

    /// The filter whose residuals have the smallest sum of |signed byte| for this row (ties: the
    /// lower filter type). One pass computes all five sums, 16 bytes at a time.
    static func bestFilter(_ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>, _ n: Int, _ bpp: Int) -> PNGFilter {
        var sums = SIMD8<Int>()  // lanes 0...4: None, Sub, Up, Average, Paeth
        var i = min(bpp, n)
        for k in 0..<i {
            for f in PNGFilter.allCases { sums[Int(f.rawValue)] &+= magnitude(cur[k] &- predictor(f, 0, prev[k], 0)) }
        }
        // Magnitudes (≤ 128) are summed in pairs into 8 × UInt16 lanes (≤ 256 a block), which stay
        // below 65536 for 255 blocks; then they go to the totals.
        var sNone = SIMD8<UInt16>(), sSub = SIMD8<UInt16>(), sUp = SIMD8<UInt16>(), sAvg = SIMD8<UInt16>(), sPaeth = SIMD8<UInt16>()
        var blocks = 0
        @inline(__always) func pairs(_ m: Bytes16) -> SIMD8<UInt16> {
            let w = unsafeBitCast(m, to: SIMD8<UInt16>.self)
            return (w & SIMD8(repeating: 0xFF)) &+ (w &>> 8)
        }
        func total(_ v: SIMD8<UInt16>) -> Int {  // once per 255 blocks: scalar is fine
            var t = 0
            for k in 0..<8 { t &+= Int(v[k]) }
            return t
        }
        func drain() {
            sums[0] &+= total(sNone)
            sums[1] &+= total(sSub)
            sums[2] &+= total(sUp)
            sums[3] &+= total(sAvg)
            sums[4] &+= total(sPaeth)
            sNone = .zero; sSub = .zero; sUp = .zero; sAvg = .zero; sPaeth = .zero
            blocks = 0
        }
        while i + 16 <= n {
            let x = load16(cur + i), a = load16(cur + i - bpp), b = load16(prev + i), c = load16(prev + i - bpp)
            sNone &+= pairs(magnitude(x))
            sSub &+= pairs(magnitude(x &- a))
            sUp &+= pairs(magnitude(x &- b))
            sAvg &+= pairs(magnitude(x &- average(a, b)))
            sPaeth &+= pairs(magnitude(x &- paeth(a, b, c)))
            i += 16
            blocks += 1
            if blocks == 255 { drain() }
        }
        drain()
        while i < n {
            let a = cur[i - bpp], b = prev[i], c = prev[i - bpp]
            for f in PNGFilter.allCases { sums[Int(f.rawValue)] &+= magnitude(cur[i] &- predictor(f, a, b, c)) }
            i += 1
        }
        var best = PNGFilter.none, cost = sums[0]
        for f in PNGFilter.allCases where sums[Int(f.rawValue)] < cost {
            best = f
            cost = sums[Int(f.rawValue)]
        }
        return best
    }
}

// MARK: - Chunks

/// Chunk type codes as big-endian 32-bit values.
fileprivate enum ChunkType {
    static let IHDR: UInt32 = 0x4948_4452
    static let PLTE: UInt32 = 0x504C_5445
    static let IDAT: UInt32 = 0x4944_4154
    static let IEND: UInt32 = 0x4945_4E44
}

/// Printable name of a chunk type (letters only, as checked by the reader).
fileprivate func chunkName(_ type: UInt32) -> String {
    var s = ""
    for shift in [24, 16, 8, 0] { s.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: type >> UInt32(shift)))) }
    return s
}

@inline(__always)
fileprivate func storeBE(_ v: UInt32, _ a: inout [UInt8], _ at: Int) {
    a[at] = UInt8(truncatingIfNeeded: v >> 24)
    a[at + 1] = UInt8(truncatingIfNeeded: v >> 16)
    a[at + 2] = UInt8(truncatingIfNeeded: v >> 8)
    a[at + 3] = UInt8(truncatingIfNeeded: v)
}

/// Runs `body` with `count` malloc'd bytes (Swift's `allocate` would trap when memory runs out).
fileprivate func withBytes<R>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
    guard count >= 0, let p = malloc(max(count, 1)) else {
        throw .noMemory("cannot allocate \(count) bytes")
    }
    defer { free(p) }
    return try body(UnsafeMutableRawBufferPointer(start: p, count: count))
}

/// The writer's cursor over the caller's buffer, with the open IDAT chunk.
fileprivate struct PNGOutput {
    let dst: UnsafeMutableRawBufferPointer
    private(set) var position = 0
    /// Offset of the open IDAT chunk's length field, or nil.
    private var idatStart: Int? = nil

    init(_ dst: UnsafeMutableRawBufferPointer) { self.dst = dst }

    private func tooSmall() -> CaptureKitError {
        .bufferTooSmall("dst_capacity \(dst.count) is too small for this PNG")
    }

    mutating func put(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) {
        guard bytes.count <= dst.count - position else { throw tooSmall() }
        if let s = bytes.baseAddress, bytes.count > 0, let d = dst.baseAddress {
            (d + position).copyMemory(from: s, byteCount: bytes.count)
        }
        position += bytes.count
    }

    mutating func put(_ bytes: [UInt8]) throws(CaptureKitError) {
        try bytes.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try put(b) } }.get()
    }

    mutating func putBE(_ v: UInt32) throws(CaptureKitError) {
        var be = v.bigEndian
        try withUnsafeBytes(of: &be) { (b) throws(CaptureKitError) in try put(b) }
    }

    /// Finishes the chunk whose length field is at `start`: length, then CRC of type + data.
    private mutating func finish(_ start: Int) throws(CaptureKitError) {
        let length = position - start - 8
        guard let d = dst.baseAddress else { throw tooSmall() }
        let crc = Zlib.crc32(UnsafeRawBufferPointer(start: d + start + 4, count: length + 4))
        (d + start).storeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian, as: UInt32.self)
        try putBE(crc)
    }

    /// A whole chunk.
    mutating func chunk(_ type: StaticString, _ data: [UInt8]) throws(CaptureKitError) {
        let start = position
        try putBE(0)
        try put(UnsafeRawBufferPointer(start: type.utf8Start, count: 4))
        try put(data)
        try finish(start)
    }

    /// Appends zlib output to IDAT chunks of at most `PNG.idatChunkSize` data bytes.
    mutating func idat(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) {
        var rest = bytes
        while rest.count > 0 {
            let start: Int
            if let s = idatStart {
                start = s
            } else {
                start = position
                try putBE(0)
                try putBE(ChunkType.IDAT)
                idatStart = start
            }
            let n = min(rest.count, PNG.idatChunkSize - (position - start - 8))
            try put(UnsafeRawBufferPointer(rebasing: rest[0..<n]))
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if position - start - 8 == PNG.idatChunkSize { try closeIDAT() }
        }
    }

    /// Closes the open IDAT chunk, if any.
    mutating func closeIDAT() throws(CaptureKitError) {
        guard let s = idatStart else { return }
        idatStart = nil
        try finish(s)
    }
}

/// The reader's walk over chunks; every chunk is bounds- and CRC-checked before use.
fileprivate struct ChunkReader {
    let src: UnsafeRawBufferPointer
    var position = 0

    init(_ src: UnsafeRawBufferPointer) { self.src = src }

    @inline(__always)
    func loadBE(_ at: Int) -> UInt32 {
        // Callers have checked at + 4 <= src.count.
        UInt32(src[at]) << 24 | UInt32(src[at + 1]) << 16 | UInt32(src[at + 2]) << 8 | UInt32(src[at + 3])
    }

    /// The next chunk: its type and data (CRC verified).
    /// - Throws: `corrupt` for a truncated chunk, a bad length or type, a CRC mismatch.
    mutating func next() throws(CaptureKitError) -> (type: UInt32, data: UnsafeRawBufferPointer) {
        let left = src.count - position
        guard left >= 12 else {
            throw .corrupt(left == 0 ? "missing IEND chunk (truncated file)" : "truncated chunk at byte \(position)")
        }
        let length = loadBE(position)
        let type = loadBE(position + 4)
        guard length <= 0x7FFF_FFFF else { throw .corrupt("chunk at byte \(position) has length \(length) (above 2^31 − 1)") }
        for shift in [24, 16, 8, 0] {
            let c = UInt8(truncatingIfNeeded: type >> UInt32(shift))
            guard (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) else {
                throw .corrupt("chunk at byte \(position) has an invalid type (not letters)")
            }
        }
        let n = Int(length)
        guard n <= left - 12 else { throw .corrupt("chunk \(chunkName(type)) at byte \(position) is truncated (\(n) data bytes, \(left - 12) left)") }
        let crc = loadBE(position + 8 + n)
        let actual = Zlib.crc32(UnsafeRawBufferPointer(rebasing: src[(position + 4)..<(position + 8 + n)]))
        guard crc == actual else { throw .corrupt("chunk \(chunkName(type)) at byte \(position) fails its CRC") }
        let data = UnsafeRawBufferPointer(rebasing: src[(position + 8)..<(position + 8 + n)])
        position += 12 + n
        return (type, data)
    }

    /// Checks the signature and IHDR, returning the image's dimensions and format.
    mutating func header() throws(CaptureKitError) -> PNGInfo {
        guard src.count >= 8, PNG.signature.indices.allSatisfy({ src[$0] == PNG.signature[$0] }) else {
            throw .corrupt("not a PNG (bad signature)")
        }
        position = 8
        let (type, d) = try next()
        guard type == ChunkType.IHDR else { throw .corrupt("the first chunk is \(chunkName(type)), not IHDR") }
        guard d.count == 13 else { throw .corrupt("IHDR has \(d.count) bytes (13 expected)") }
        let width = Int(UInt32(d[0]) << 24 | UInt32(d[1]) << 16 | UInt32(d[2]) << 8 | UInt32(d[3]))
        let height = Int(UInt32(d[4]) << 24 | UInt32(d[5]) << 16 | UInt32(d[6]) << 8 | UInt32(d[7]))
        let depth = d[8], colour = d[9], compression = d[10], filter = d[11], interlace = d[12]
        guard width >= 1, height >= 1, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw .corrupt("IHDR size \(width)×\(height) is invalid")
        }
        let valid: [UInt8]
        switch colour {
        case 0: valid = [1, 2, 4, 8, 16]
        case 3: valid = [1, 2, 4, 8]
        case 2, 4, 6: valid = [8, 16]
        default: throw .corrupt("IHDR colour type \(colour) is invalid")
        }
        guard valid.contains(depth) else { throw .corrupt("IHDR bit depth \(depth) is invalid for colour type \(colour)") }
        guard compression == 0 else { throw .corrupt("IHDR compression method \(compression) is invalid") }
        guard filter == 0 else { throw .corrupt("IHDR filter method \(filter) is invalid") }
        guard interlace <= 1 else { throw .corrupt("IHDR interlace method \(interlace) is invalid") }
        let format: PNGFormat
        switch (colour, depth) {
        case (0, 8): format = .gray8
        case (0, 16): format = .gray16
        case (2, 8): format = .rgb8
        case (6, 8): format = .rgba8
        case (3, _): throw .unsupported("palette PNGs are not supported (8-bit gray, RGB, RGBA and 16-bit gray are)")
        case (4, _): throw .unsupported("gray+alpha PNGs are not supported (8-bit gray, RGB, RGBA and 16-bit gray are)")
        default: throw .unsupported("\(depth)-bit \(colour == 0 ? "gray" : "colour") PNGs are not supported (8-bit gray, RGB, RGBA and 16-bit gray are)")
        }
        guard interlace == 0 else { throw .unsupported("interlaced (Adam7) PNGs are not supported") }
        guard width <= PNG.maxDimension, height <= PNG.maxDimension else {
            throw .unsupported("\(width)×\(height) is larger than \(PNG.maxDimension) pixels a side")
        }
        return PNGInfo(width: width, height: height, format: format)
    }
}
