// A small verifying ZIP reader, used by the tests to check what ZipWriter writes (the library
// itself never reads archives).

@testable import CaptureKitCore
import CZlib
import Glibc


/// Reads a ZIP archive's central directory and verifies entries (CRC-32, sizes, local headers).
/// Treats the file as hostile: every offset and size is bounds-checked; problems are `corrupt`.
/// Supports stored and deflated entries and ZIP64; not encryption or multi-disk archives.
public final class ZipReader {
    public let path: String
    public let entries: [ZipEntry]
    private let file: File
    private let fileSize: UInt64

    /// Opens an archive and reads its central directory.
    /// - Throws: `corrupt` (no end record, bad offsets, bad signatures), `notFound`, `io`.
    public init(path: String) throws(CaptureKitError) {
        self.path = path
        file = try File.open(path, .readOnly)
        fileSize = try file.size()
        entries = try ZipReader.readDirectory(file, fileSize, path)
    }

    deinit { file.closeQuietly() }

    private static func read(_ file: File, _ offset: UInt64, _ count: Int, _ path: String) throws(CaptureKitError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBufferPointer { (b) throws(CaptureKitError) in
            try file.read(into: UnsafeMutableRawBufferPointer(b), at: offset)
        }
        guard n == count else { throw .corrupt("\(path): truncated at byte \(offset + UInt64(n))") }
        return bytes
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
    private static func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(u32(b, i)) | UInt64(u32(b, i + 4)) << 32 }

    private static func readDirectory(_ file: File, _ size: UInt64, _ path: String) throws(CaptureKitError) -> [ZipEntry] {
        // The end record is in the last 22 + 65,535 bytes (its comment is at most 64 KiB).
        guard size >= 22 else { throw .corrupt("\(path): too small for a zip archive (\(size) bytes)") }
        let tailCount = Int(min(size, 22 + 0xFFFF))
        let tailStart = size - UInt64(tailCount)
        let tail = try read(file, tailStart, tailCount, path)
        var eocd = -1
        var i = tailCount - 22
        while i >= 0 {
            if tail[i] == 0x50 && tail[i + 1] == 0x4B && tail[i + 2] == 0x05 && tail[i + 3] == 0x06
                && i + 22 + Int(u16(tail, i + 20)) == tailCount {
                eocd = i
                break
            }
            i -= 1
        }
        guard eocd >= 0 else { throw .corrupt("\(path): no end of central directory record") }
        guard u16(tail, eocd + 4) == 0, u16(tail, eocd + 6) == 0 else { throw .corrupt("\(path): multi-disk archives are not supported") }
        var count = UInt64(u16(tail, eocd + 10))
        var cdSize = UInt64(u32(tail, eocd + 12))
        var cdOffset = UInt64(u32(tail, eocd + 16))
        let eocdOffset = tailStart + UInt64(eocd)
        // ZIP64 locator right before the end record.
        if eocdOffset >= 20 {
            let loc = try read(file, eocdOffset - 20, 20, path)
            if u32(loc, 0) == 0x0706_4B50 {
                let recordOffset = u64(loc, 8)
                guard recordOffset <= eocdOffset &- 20, eocdOffset - 20 - recordOffset >= 56 else {
                    throw .corrupt("\(path): ZIP64 locator points outside the archive")
                }
                let rec = try read(file, recordOffset, 56, path)
                guard u32(rec, 0) == 0x0606_4B50 else { throw .corrupt("\(path): bad ZIP64 end of central directory signature") }
                count = u64(rec, 32)
                cdSize = u64(rec, 40)
                cdOffset = u64(rec, 48)
            }
        }
        let (cdEnd, overflow) = cdOffset.addingReportingOverflow(cdSize)
        guard !overflow, cdEnd <= eocdOffset, cdSize <= 1 << 30 else {
            throw .corrupt("\(path): central directory (offset \(cdOffset), \(cdSize) bytes) is outside the archive")
        }
        guard count <= cdSize / 46 else { throw .corrupt("\(path): \(count) entries cannot fit a \(cdSize)-byte central directory") }
        let cd = try read(file, cdOffset, Int(cdSize), path)
        var entries: [ZipEntry] = []
        entries.reserveCapacity(Int(count))
        var p = 0
        for n in 0..<Int(count) {
            guard p + 46 <= cd.count, u32(cd, p) == 0x0201_4B50 else { throw .corrupt("\(path): bad central directory entry \(n)") }
            let nameLen = Int(u16(cd, p + 28)), extraLen = Int(u16(cd, p + 30)), commentLen = Int(u16(cd, p + 32))
            let next = p + 46 + nameLen + extraLen + commentLen
            guard next <= cd.count else { throw .corrupt("\(path): central directory entry \(n) overruns the directory") }
            var e = ZipEntry(name: String(decoding: cd[(p + 46)..<(p + 46 + nameLen)], as: UTF8.self),
                             method: u16(cd, p + 10), flags: u16(cd, p + 8), crc32: u32(cd, p + 16),
                             compressedSize: UInt64(u32(cd, p + 20)), uncompressedSize: UInt64(u32(cd, p + 24)),
                             localHeaderOffset: UInt64(u32(cd, p + 42)), dosTime: u16(cd, p + 12), dosDate: u16(cd, p + 14))
            // ZIP64 extra: the fields whose 32-bit value is the 0xFFFFFFFF marker, in this order.
            var x = p + 46 + nameLen
            let xEnd = x + extraLen
            while x + 4 <= xEnd {
                let id = u16(cd, x), len = Int(u16(cd, x + 2))
                guard x + 4 + len <= xEnd else { throw .corrupt("\(path): entry \(e.name): bad extra field") }
                if id == 1 {
                    var f = x + 4
                    func take() throws(CaptureKitError) -> UInt64 {
                        guard f + 8 <= x + 4 + len else { throw .corrupt("\(path): entry \(e.name): short ZIP64 extra field") }
                        defer { f += 8 }
                        return u64(cd, f)
                    }
                    if e.uncompressedSize == 0xFFFF_FFFF { e.uncompressedSize = try take() }
                    if e.compressedSize == 0xFFFF_FFFF { e.compressedSize = try take() }
                    if e.localHeaderOffset == 0xFFFF_FFFF { e.localHeaderOffset = try take() }
                }
                x += 4 + len
            }
            guard e.method == 0 || e.method == 8 else { throw .corrupt("\(path): entry \(e.name): unsupported method \(e.method)") }
            guard e.flags & 1 == 0 else { throw .corrupt("\(path): entry \(e.name) is encrypted") }
            guard e.localHeaderOffset < cdOffset else { throw .corrupt("\(path): entry \(e.name): local header beyond the data") }
            entries.append(e)
            p = next
        }
        return entries
    }

    /// Streams an entry's uncompressed bytes to `body` in chunks, checking the local header, the
    /// sizes, the CRC-32 and (for bit-3 entries) the data descriptor.
    /// - Throws: `corrupt` for any mismatch, `io`.
    public func forEachChunk(of e: ZipEntry, _ body: (UnsafeRawBufferPointer) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        let what = "\(path): entry \(e.name)"
        let h = try ZipReader.read(file, e.localHeaderOffset, 30, path)
        guard ZipReader.u32(h, 0) == 0x0403_4B50 else { throw .corrupt("\(what): bad local header signature") }
        guard ZipReader.u16(h, 8) == e.method else { throw .corrupt("\(what): local header method differs from the central directory") }
        let nameLen = UInt64(ZipReader.u16(h, 26)), extraLen = UInt64(ZipReader.u16(h, 28))
        let nameBytes = try ZipReader.read(file, e.localHeaderOffset + 30, Int(nameLen), path)
        guard String(decoding: nameBytes, as: UTF8.self) == e.name else { throw .corrupt("\(what): local header name differs") }
        let localExtra = try ZipReader.read(file, e.localHeaderOffset + 30 + nameLen, Int(extraLen), path)
        let dataStart = e.localHeaderOffset + 30 + nameLen + extraLen
        let (dataEnd, overflow) = dataStart.addingReportingOverflow(e.compressedSize)
        guard !overflow, dataEnd <= fileSize else { throw .corrupt("\(what): data runs past the end of the archive") }

        let chunk = 1 << 20
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { output.deallocate() }
        let inflater: Inflater? = e.method == 8 ? try Inflater(raw: true) : nil
        var position = dataStart
        var produced: UInt64 = 0
        var crc: UInt32 = 0
        while position < dataEnd {
            let want = Int(min(UInt64(chunk), dataEnd - position))
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<want]), at: position)
            guard n == want else { throw .corrupt("\(what): truncated") }
            position += UInt64(n)
            var part = UnsafeRawBufferPointer(rebasing: input[0..<n])
            if let inflater {
                while !part.isEmpty || (!inflater.finished && position == dataEnd) {
                    let (used, made) = try inflater.inflate(part, into: output)
                    part = UnsafeRawBufferPointer(rebasing: part[used...])
                    if made > 0 {
                        let bytes = UnsafeRawBufferPointer(rebasing: output[0..<made])
                        crc = Zlib.crc32(bytes, crc)
                        produced += UInt64(made)
                        guard produced <= e.uncompressedSize else { throw .corrupt("\(what): inflates beyond its size \(e.uncompressedSize)") }
                        try body(bytes)
                    }
                    if used == 0 && made == 0 {
                        guard part.isEmpty else { throw .corrupt("\(what): data after the end of the deflate stream") }
                        break
                    }
                }
            } else {
                crc = Zlib.crc32(part, crc)
                produced += UInt64(n)
                try body(part)
            }
        }
        if let inflater, !inflater.finished { throw .corrupt("\(what): the deflate stream does not end with the entry") }
        guard produced == e.uncompressedSize else { throw .corrupt("\(what): \(produced) bytes, the directory says \(e.uncompressedSize)") }
        guard crc == e.crc32 else { throw .corrupt("\(what): CRC-32 mismatch") }
        if e.flags & 8 != 0 {
            // Data descriptor: optional signature, CRC, sizes (8-byte with a ZIP64 local extra).
            let zip64 = localExtra.count >= 4 && ZipReader.u16(localExtra, 0) == 1
            let d = try ZipReader.read(file, dataEnd, zip64 ? 24 : 16, path)
            let s = ZipReader.u32(d, 0) == 0x0807_4B50 ? 4 : 0
            guard ZipReader.u32(d, s) == e.crc32 else { throw .corrupt("\(what): data descriptor CRC differs") }
            if s == 4 {
                let c = zip64 ? ZipReader.u64(d, 8) : UInt64(ZipReader.u32(d, 8))
                let u = zip64 ? ZipReader.u64(d, 16) : UInt64(ZipReader.u32(d, 12))
                guard c == e.compressedSize, u == e.uncompressedSize else { throw .corrupt("\(what): data descriptor sizes differ") }
            }
        }
    }

    /// An entry's bytes (at most `limit`). - Throws: `notFound`, `unsupported` beyond the limit, `corrupt`.
    public func read(_ name: String, limit: Int = 1 << 30) throws(CaptureKitError) -> [UInt8] {
        guard let e = entries.first(where: { $0.name == name }) else { throw .notFound("\(path): no entry \(name)") }
        guard e.uncompressedSize <= UInt64(limit) else { throw .unsupported("\(path): entry \(name) is \(e.uncompressedSize) bytes") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(e.uncompressedSize))
        try forEachChunk(of: e) { (b) throws(CaptureKitError) in bytes.append(contentsOf: b) }
        return bytes
    }

    /// Verifies every entry (see `forEachChunk`); also rejects repeated names.
    public func verify() throws(CaptureKitError) {
        var seen = Set<String>()
        for e in entries {
            guard seen.insert(e.name).inserted else { throw .corrupt("\(path): entry \(e.name) appears twice") }
            try forEachChunk(of: e) { _ in }
        }
    }
}
