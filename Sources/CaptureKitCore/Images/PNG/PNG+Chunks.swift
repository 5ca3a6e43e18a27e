// PNG chunks: writing the chunk stream into the caller's buffer and reading it back, CRC-checked.

import CZlib
import Glibc

/// Chunk type codes as big-endian 32-bit values.
enum ChunkType {
    static let IHDR: UInt32 = 0x4948_4452
    static let PLTE: UInt32 = 0x504C_5445
    static let IDAT: UInt32 = 0x4944_4154
    static let IEND: UInt32 = 0x4945_4E44
}

/// Printable name of a chunk type (letters only, as checked by the reader).
func chunkName(_ type: UInt32) -> String {
    var s = ""
    for shift in [24, 16, 8, 0] { s.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: type >> UInt32(shift)))) }
    return s
}

@inline(__always)
func storeBE(_ v: UInt32, _ a: inout [UInt8], _ at: Int) {
    a[at] = UInt8(truncatingIfNeeded: v >> 24)
    a[at + 1] = UInt8(truncatingIfNeeded: v >> 16)
    a[at + 2] = UInt8(truncatingIfNeeded: v >> 8)
    a[at + 3] = UInt8(truncatingIfNeeded: v)
}

/// Runs `body` with `count` malloc'd bytes (Swift's `allocate` would trap when memory runs out).
func withBytes<R>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
    guard count >= 0, let p = malloc(max(count, 1)) else {
        throw .noMemory("cannot allocate \(count) bytes")
    }
    defer { free(p) }
    return try body(UnsafeMutableRawBufferPointer(start: p, count: count))
}

/// The writer's cursor over the caller's buffer, with the open IDAT chunk.
struct PNGOutput {
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
struct ChunkReader {
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
        let format: ImageFormat
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
