// A streaming ZIP (PKZIP APPNOTE 6.3) writer (its verifying reader lives in the tests).
//
// The writer produces what Python's `zipfile`, Info-ZIP `unzip`, libarchive and the platform
// archive tools read: deflated entries (raw DEFLATE through `Deflater(raw: true)`) written with
// the data-descriptor flag (bit 3) so their sizes need not be known before the data, stored entries
// for data that does not shrink (or when asked), UTF-8 names (bit 11), a fixed DOS timestamp (the
// library never reads a clock), and ZIP64 records as soon as a size, an offset or the entry count
// needs them. The archive is written to a temporary file beside the target and renamed into place
// after an fsync, so a crash never leaves a half-written archive under the final name.

import CZlib
import Glibc

/// How an entry's bytes are stored.
public enum ZipMethod: Sendable {
    /// Deflate, falling back to stored when deflating does not make the entry smaller.
    case automatic
    /// Always deflate.
    case deflate
    /// Always store (method 0): already compressed data (PNG, JPEG, zlib streams, .ckdepth).
    case store

    /// `.store` for names whose extension says the data is already compressed (png, jpg, jpeg,
    /// zlib, zst, ckdepth, mp4, mov, heic, webp, gz, zip), else `.automatic`.
    public static func suggested(forName name: String) -> ZipMethod {
        let lower = String(name.split(separator: "/").last ?? "").lowercased()
        guard let dot = lower.lastIndex(of: ".") else { return .automatic }
        let ext = lower[lower.index(after: dot)...]
        let compressed: Set<Substring> = ["png", "jpg", "jpeg", "zlib", "zst", "ckdepth", "mp4", "mov", "heic", "webp", "gz", "zip"]
        return compressed.contains(ext) ? .store : .automatic
    }
}

/// One entry of an archive's central directory.
public struct ZipEntry: Equatable, Sendable {
    public var name: String
    /// 0 stored, 8 deflated.
    public var method: UInt16
    public var flags: UInt16
    public var crc32: UInt32
    public var compressedSize: UInt64
    public var uncompressedSize: UInt64
    public var localHeaderOffset: UInt64
    public var dosTime: UInt16
    public var dosDate: UInt16
}

/// Little-endian field packing.
struct ZipBytes {
    var bytes: [UInt8] = []
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(truncatingIfNeeded: v)); bytes.append(UInt8(truncatingIfNeeded: v >> 8)) }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) } }
    mutating func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
    mutating func append(_ b: [UInt8]) { bytes += b }
}

/// Writes a ZIP archive entry by entry, streaming each file from disk in chunks.
///
/// Not thread-safe. Call `finish()` to publish the archive under `path`; until then (and after any
/// I/O error, or `cancel()`, or when the writer is released unfinished) only a temporary file
/// `<path>.tmp-<pid>` exists, and it is removed. Argument errors (a bad or repeated name, a missing
/// source file) leave the writer usable; an I/O error while writing ends it (`state` afterwards).
public final class ZipWriter {
    /// The archive's final path.
    public let path: String
    private let tempPath: String
    private let overwrite: Bool
    private var file: File?
    private var failed = false
    private var tempRemoved = false
    private var offset: UInt64 = 0
    private var out: [UInt8] = []
    private var entries: [ZipEntry] = []
    private var names: Set<String> = []
    private var zip64Entries: Set<Int> = []
    private let dosTime: UInt16, dosDate: UInt16
    private let deflater: Deflater
    private let chunk = 1 << 20

    // Limits of the 32-bit and 16-bit fields; ZIP64 records are written beyond them.
    static let defaultSizeLimit: UInt64 = 0xFFFF_FFFF
    static let defaultCountLimit = 0xFFFF
    #if DEBUG
    /// Debug-only: lower the limits so that tests exercise the ZIP64 records with small archives
    /// (per thread, like `FileIO.failCall`; nil restores the real limits). The archive stays valid:
    /// fields beyond the lowered limit hold their 0xFFFF… marker and the value moves to ZIP64 records.
    public static func debugLimits(size: UInt64?, count: Int?) {
        if let k = sizeKey { _ = pthread_setspecific(k, size.flatMap { UnsafeRawPointer(bitPattern: UInt($0)) }) }
        if let k = countKey { _ = pthread_setspecific(k, count.flatMap { UnsafeRawPointer(bitPattern: $0) }) }
    }
    private static let sizeKey = makeKey(), countKey = makeKey()
    private static func makeKey() -> pthread_key_t? {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }
    private static var debugSizeLimit: UInt64? { sizeKey.flatMap { pthread_getspecific($0) }.map { UInt64(UInt(bitPattern: $0)) } }
    private static var debugCountLimit: Int? { countKey.flatMap { pthread_getspecific($0) }.map { Int(bitPattern: $0) } }
    #endif
    let sizeLimit: UInt64
    let countLimit: Int

    /// Starts an archive.
    /// - Parameters:
    ///   - path: where the finished archive goes.
    ///   - overwrite: replace an existing file at `path` (otherwise that is a `state` error).
    ///   - unixTime: the entries' modification time (UTC, seconds since 1970); nil writes
    ///     1980-01-01 00:00:00, the earliest DOS time. Times outside 1980...2107 are clamped.
    ///   - level: deflate level 1...9.
    /// - Throws: `state` if `path` exists without `overwrite`, `invalidArgument` for a bad level,
    ///   `io`/`notFound` from the file system.
    public init(path: String, overwrite: Bool = false, unixTime: Int64? = nil, level: Int32 = 6) throws(CaptureKitError) {
        if !overwrite && FileIO.exists(path) { throw .exists("\(path) exists (pass the overwrite flag to replace it)") }
        self.path = path
        self.overwrite = overwrite
        self.tempPath = "\(path).tmp-\(getpid())"
        (dosTime, dosDate) = ZipWriter.dosDateTime(unixTime)
        deflater = try Deflater(level: level, raw: true)
        #if DEBUG
        // Only ever lowered: the fields cannot hold more than the real limits.
        sizeLimit = min(ZipWriter.debugSizeLimit ?? ZipWriter.defaultSizeLimit, ZipWriter.defaultSizeLimit)
        countLimit = min(ZipWriter.debugCountLimit ?? ZipWriter.defaultCountLimit, ZipWriter.defaultCountLimit)
        #else
        sizeLimit = ZipWriter.defaultSizeLimit
        countLimit = ZipWriter.defaultCountLimit
        #endif
        // Truncating: a leftover temporary file can only come from a crashed process with our pid.
        file = try File.open(tempPath, .createOrTruncate)
        out.reserveCapacity(chunk)
    }

    deinit { cancel() }

    /// Entries added so far.
    public var count: Int { entries.count }

    /// (time, date) in MS-DOS format, UTC.
    static func dosDateTime(_ unixTime: Int64?) -> (UInt16, UInt16) {
        guard let unixTime else { return (0, 0x21) }  // 1980-01-01 00:00:00
        let lo: Int64 = 315_532_800, hi: Int64 = 4_354_819_198  // 1980-01-01T00:00:00Z, 2107-12-31T23:59:58Z
        let c = CivilTime(unixSeconds: min(max(unixTime, lo), hi))
        let time = UInt16(c.hour << 11 | c.minute << 5 | c.second / 2)
        let date = UInt16(Int(c.year - 1980) << 9 | c.month << 5 | c.day)
        return (time, date)
    }

    /// Checks an entry name: relative, "/"-separated, UTF-8, no empty, "." or ".." parts, no NUL or
    /// backslash, at most 65,535 bytes, not used before.
    func validate(_ name: String) throws(CaptureKitError) {
        let utf8 = name.utf8
        guard !name.isEmpty, utf8.count <= 0xFFFF, !utf8.contains(0), !utf8.contains(0x5C) else {
            throw .invalidArgument("zip entry name \"\(name)\" must be 1...65535 bytes without NUL or backslash")
        }
        for part in name.split(separator: "/", omittingEmptySubsequences: false) where part.isEmpty || part == "." || part == ".." {
            throw .invalidArgument("zip entry name \"\(name)\" must be relative, without empty, \".\" or \"..\" parts")
        }
        guard !names.contains(name) else { throw .invalidArgument("zip entry name \"\(name)\" is already in the archive") }
    }

    private func requireOpen() throws(CaptureKitError) -> File {
        guard let file, !failed else { throw .state("the zip writer for \(path) is finished, cancelled or failed") }
        return file
    }

    /// Adds the file at `sourcePath` as `name`.
    /// - Throws: `invalidArgument` (name), `notFound`/`io` for the source (the writer stays usable
    ///   if the source cannot be opened), `io` if the source changes size while it is read, `state`
    ///   after `finish`/`cancel`/a failure.
    public func addFile(_ name: String, from sourcePath: String, method: ZipMethod = .automatic) throws(CaptureKitError) {
        _ = try requireOpen()
        try validate(name)
        let source = try File.open(sourcePath, .readOnly)
        defer { source.closeQuietly() }
        let size = try source.size()
        try failing { () throws(CaptureKitError) in
            try add(name, size: size, method: method) { (buffer, at) throws(CaptureKitError) in try source.read(into: buffer, at: at) }
        }
    }

    /// Adds `bytes` as `name`. - Throws: as `addFile`.
    public func add(_ name: String, bytes: [UInt8], method: ZipMethod = .automatic) throws(CaptureKitError) {
        _ = try requireOpen()
        try validate(name)
        try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            let raw = UnsafeRawBufferPointer(b)
            try failing { () throws(CaptureKitError) in
                try add(name, size: UInt64(raw.count), method: method) { (buffer, at) in
                    let start = Int(min(at, UInt64(raw.count)))
                    let n = min(buffer.count, raw.count - start)
                    if n > 0, let dst = buffer.baseAddress, let src = raw.baseAddress { dst.copyMemory(from: src + start, byteCount: n) }
                    return n
                }
            }
        }
    }

    /// Runs `body`; an error ends the writer (the temporary file is removed).
    private func failing(_ body: () throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        do { try body() } catch { cancel(); failed = true; throw error }
    }

    private typealias Reader = (UnsafeMutableRawBufferPointer, UInt64) throws(CaptureKitError) -> Int

    private func add(_ name: String, size: UInt64, method: ZipMethod, read: Reader) throws(CaptureKitError) {
        let headerOffset = offset
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var entry = ZipEntry(name: name, method: 8, flags: 0x0808, crc32: 0, compressedSize: 0, uncompressedSize: size,
                             localHeaderOffset: headerOffset, dosTime: dosTime, dosDate: dosDate)
        if method != .store {
            // Deflated, streaming: local header with bit 3, data, then a data descriptor. ZIP64 sizes
            // when the data could reach the 32-bit limit (deflate expands incompressible data by
            // less than 0.1 %; the exact size was taken before reading).
            let zip64 = size >= sizeLimit - min(sizeLimit, size / 512 + 4096)
            try emit(localHeader(entry, zip64: zip64, sizesKnown: false))
            deflater.reset()
            var position: UInt64 = 0
            var crc: UInt32 = 0
            let dataStart = offset
            while true {
                let n = try read(buffer, position)
                let part = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                crc = Zlib.crc32(part, crc)
                position += UInt64(n)
                let last = n < buffer.count
                try deflater.deflate(part, flush: last ? Z_FINISH : Z_NO_FLUSH) { (bytes) throws(CaptureKitError) in try emit(bytes) }
                if last { break }
            }
            guard position == size else { throw .io("\(name): the source changed size while it was zipped (\(size) → \(position) bytes)") }
            entry.crc32 = crc
            entry.compressedSize = offset - dataStart
            if method == .deflate || entry.compressedSize < size {
                guard zip64 || entry.compressedSize < sizeLimit else { throw .io("\(name): deflated beyond the 32-bit size limit") }
                var d = ZipBytes()
                d.u32(0x0807_4B50); d.u32(crc)
                if zip64 { d.u64(entry.compressedSize); d.u64(size) } else { d.u32(UInt32(entry.compressedSize)); d.u32(UInt32(size)) }
                try emit(d.bytes)
                record(entry, zip64: zip64)
                return
            }
            // Not smaller: rewind and store it instead (the CRC is known now).
            try flush()
            guard let file else { throw .state("zip writer closed") }
            try file.truncate(to: headerOffset)
            try file.seek(to: headerOffset)
            offset = headerOffset
        } else {
            var position: UInt64 = 0
            var crc: UInt32 = 0
            while true {
                let n = try read(buffer, position)
                crc = Zlib.crc32(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), crc)
                position += UInt64(n)
                if n < buffer.count { break }
            }
            guard position == size else { throw .io("\(name): the source changed size while it was zipped (\(size) → \(position) bytes)") }
            entry.crc32 = crc
        }
        // Stored, with the CRC and sizes in the local header (no data descriptor: streaming readers
        // cannot find the end of stored data otherwise).
        entry.method = 0
        entry.flags = 0x0800
        entry.compressedSize = size
        let zip64 = size >= sizeLimit
        try emit(localHeader(entry, zip64: zip64, sizesKnown: true))
        var position: UInt64 = 0
        var crc: UInt32 = 0
        while position < size {
            let want = Int(min(UInt64(buffer.count), size - position))
            let n = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), position)
            guard n == want else { throw .io("\(name): the source changed size while it was zipped") }
            let part = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            crc = Zlib.crc32(part, crc)
            try emit(part)
            position += UInt64(n)
        }
        guard crc == entry.crc32 else { throw .io("\(name): the source changed while it was zipped (CRC-32 differs between reads)") }
        record(entry, zip64: zip64)
    }

    private func record(_ entry: ZipEntry, zip64: Bool) {
        if zip64 { zip64Entries.insert(entries.count) }
        entries.append(entry)
        names.insert(entry.name)
    }

    /// The local file header. With unknown sizes (bit 3) CRC and sizes are 0; ZIP64 puts 0xFFFFFFFF
    /// in the 32-bit size fields and the sizes (or zeros) in the ZIP64 extra field.
    private func localHeader(_ e: ZipEntry, zip64: Bool, sizesKnown: Bool) -> [UInt8] {
        let name = Array(e.name.utf8)
        var h = ZipBytes()
        h.u32(0x0403_4B50)
        h.u16(zip64 ? 45 : 20)
        h.u16(e.flags)
        h.u16(e.method)
        h.u16(e.dosTime); h.u16(e.dosDate)
        h.u32(sizesKnown ? e.crc32 : 0)
        if zip64 {
            h.u32(0xFFFF_FFFF); h.u32(0xFFFF_FFFF)
        } else {
            h.u32(sizesKnown ? UInt32(truncatingIfNeeded: e.compressedSize) : 0)
            h.u32(sizesKnown ? UInt32(truncatingIfNeeded: e.uncompressedSize) : 0)
        }
        h.u16(UInt16(name.count))
        h.u16(zip64 ? 20 : 0)
        h.append(name)
        if zip64 {
            h.u16(1); h.u16(16)
            h.u64(sizesKnown ? e.uncompressedSize : 0); h.u64(sizesKnown ? e.compressedSize : 0)
        }
        return h.bytes
    }

    // MARK: Output

    private func emit(_ bytes: [UInt8]) throws(CaptureKitError) {
        try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try emit(UnsafeRawBufferPointer(b)) }
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) {
        if out.count + bytes.count > chunk { try flush() }
        if bytes.count >= chunk {
            guard let file else { throw .state("zip writer closed") }
            try file.write(bytes)
        } else {
            out.append(contentsOf: bytes)
        }
        offset += UInt64(bytes.count)
    }

    private func flush() throws(CaptureKitError) {
        guard !out.isEmpty else { return }
        guard let file else { throw .state("zip writer closed") }
        try file.write(out)
        out.removeAll(keepingCapacity: true)
    }

    // MARK: Finishing

    /// Writes the central directory and the end records, fsyncs, and renames the archive into
    /// place (then fsyncs the directory). - Returns: the archive's size in bytes.
    /// - Throws: `state` if already finished or failed, or if `path` appeared meanwhile without
    ///   `overwrite`; `io`. On error the temporary file is removed and `path` is untouched —
    ///   except when only the final directory fsync fails: the complete archive is then already
    ///   under `path` (like `FileIO.writeAtomically`), its rename possibly not yet durable.
    @discardableResult
    public func finish() throws(CaptureKitError) -> UInt64 {
        let file = try requireOpen()
        var size: UInt64 = 0
        try failing { () throws(CaptureKitError) in
            let cdOffset = offset
            for (i, e) in entries.enumerated() { try emit(centralHeader(e, zip64Local: zip64Entries.contains(i))) }
            let cdSize = offset - cdOffset
            let count = UInt64(entries.count)
            var end = ZipBytes()
            let zip64 = entries.count >= countLimit || cdOffset >= sizeLimit || cdSize >= sizeLimit
            if zip64 {
                let recordOffset = offset
                end.u32(0x0606_4B50); end.u64(44)
                end.u16(0x032D); end.u16(45)
                end.u32(0); end.u32(0)
                end.u64(count); end.u64(count)
                end.u64(cdSize); end.u64(cdOffset)
                end.u32(0x0706_4B50); end.u32(0); end.u64(recordOffset); end.u32(1)
            }
            end.u32(0x0605_4B50)
            end.u16(0); end.u16(0)
            let count16 = entries.count >= countLimit ? 0xFFFF : UInt16(entries.count)
            end.u16(count16); end.u16(count16)
            end.u32(cdSize >= sizeLimit ? 0xFFFF_FFFF : UInt32(cdSize))
            end.u32(cdOffset >= sizeLimit ? 0xFFFF_FFFF : UInt32(cdOffset))
            end.u16(0)
            try emit(end.bytes)
            try flush()
            try file.sync()
            try file.close()
            self.file = nil
            if !overwrite && FileIO.exists(path) { throw .exists("\(path) appeared while the archive was written") }
            try FileIO.rename(tempPath, path)
            tempRemoved = true  // published: from here on the archive is complete under `path`
            try FileIO.syncDirectory(of: path)
            size = offset
        }
        failed = true  // finished: no more entries
        return size
    }

    private func centralHeader(_ e: ZipEntry, zip64Local: Bool) -> [UInt8] {
        let name = Array(e.name.utf8)
        var extra = ZipBytes()
        let bigU = e.uncompressedSize >= sizeLimit, bigC = e.compressedSize >= sizeLimit, bigO = e.localHeaderOffset >= sizeLimit
        if bigU || bigC || bigO {
            var fields = ZipBytes()
            if bigU { fields.u64(e.uncompressedSize) }
            if bigC { fields.u64(e.compressedSize) }
            if bigO { fields.u64(e.localHeaderOffset) }
            extra.u16(1); extra.u16(UInt16(fields.bytes.count)); extra.append(fields.bytes)
        }
        let version: UInt16 = (bigU || bigC || bigO || zip64Local) ? 45 : 20
        var h = ZipBytes()
        h.u32(0x0201_4B50)
        h.u16(0x0300 | version)         // made by: Unix
        h.u16(version)
        h.u16(e.flags); h.u16(e.method)
        h.u16(e.dosTime); h.u16(e.dosDate)
        h.u32(e.crc32)
        h.u32(bigC ? 0xFFFF_FFFF : UInt32(e.compressedSize))
        h.u32(bigU ? 0xFFFF_FFFF : UInt32(e.uncompressedSize))
        h.u16(UInt16(name.count)); h.u16(UInt16(extra.bytes.count)); h.u16(0)
        h.u16(0); h.u16(0)
        h.u32(0o100644 << 16)           // external attributes: regular file, rw-r--r--
        h.u32(bigO ? 0xFFFF_FFFF : UInt32(e.localHeaderOffset))
        h.append(name)
        h.append(extra.bytes)
        return h.bytes
    }

    /// Abandons the archive: closes and removes the temporary file. Safe to call more than once and
    /// after `finish` (then it does nothing).
    public func cancel() {
        failed = true
        guard !tempRemoved else { return }
        tempRemoved = true
        file?.closeQuietly()
        file = nil
        try? FileIO.remove(tempPath)
    }
}
