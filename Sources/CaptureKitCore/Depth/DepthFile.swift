/// The `.ckdepth` container: a self-describing, seekable, crash-safe recording of native frames.
///
/// Layout (little-endian):
/// - File header, 64 bytes: `"CKDEPTH\0"`, `u32 version (1)`, `u32 header size (64)`, `u32 width`,
///   `u32 height`, `u32 kind`, `u32 frame codec (1 to 4)`, 28 reserved zero bytes, `u32 CRC-32` of
///   the first 60 bytes. The frame codec version names the version of every frame in the file:
///   new files get `DepthFrameCodec.version` (4); appending to a file keeps its version, so a
///   version-1 file stays readable by the libraries that wrote it.
/// - Records, each a 32-byte header — `"CKFR"`, `u32 payload size`, `u64 frame index`,
///   `f64 timestamp`, `u32 CRC-32 of the payload`, `u32 CRC-32 of the first 28 header bytes` —
///   followed by the payload: one encoded frame (`DepthFrameCodec`).
///
/// A record is written with one `write` call straight after the previous one; nothing is buffered
/// across frames. A crash can leave a torn last record (short, or with garbage where the file system
/// had not written data yet); opening finds the last record whose header is intact and whose payload
/// is complete (and, for the last one, whose payload CRC matches) and ignores anything after it —
/// reopening for append cuts it off.
public enum DepthFile {
    public static let magic: [UInt8] = Array("CKDEPTH\0".utf8)
    public static let recordMagic: [UInt8] = Array("CKFR".utf8)
    public static let version: UInt32 = 1
    public static let headerSize = 64
    public static let recordHeaderSize = 32

    /// The header fields of a file.
    public struct Info: Equatable, Sendable {
        public var width: Int, height: Int
        public var kind: PixelKind
        public var version: UInt32
        public var frameCount: Int
        public var tornBytes: UInt64
    }

    static func makeHeader(width: Int, height: Int, kind: PixelKind, codec: UInt8 = DepthFrameCodec.version) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: headerSize)
        for i in 0..<8 { h[i] = magic[i] }
        func put(_ v: UInt32, _ at: Int) { for b in 0..<4 { h[at + b] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(b))) } }
        put(version, 8); put(UInt32(headerSize), 12); put(UInt32(width), 16); put(UInt32(height), 20)
        put(UInt32(kind.rawValue), 24); put(UInt32(codec), 28)
        let crc = h.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[0..<60])) }
        put(crc, 60)
        return h
    }

    /// Parses and checks a file header. - Throws: `corrupt`, `unsupported` (newer version).
    static func parseHeader(_ h: UnsafeRawBufferPointer, path: String) throws(CaptureKitError) -> (width: Int, height: Int, kind: PixelKind, codec: UInt8) {
        guard h.count >= headerSize, (0..<8).allSatisfy({ h[$0] == magic[$0] }) else {
            throw .corrupt("\(path) is not a .ckdepth file (bad magic)")
        }
        func word(_ at: Int) -> UInt32 { UInt32(littleEndian: h.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        guard Zlib.crc32(UnsafeRawBufferPointer(rebasing: h[0..<60])) == word(60) else {
            throw .corrupt("\(path): the file header fails its CRC")
        }
        guard word(8) == version else {
            throw .unsupported("\(path) is .ckdepth version \(word(8)); this library reads version \(version)")
        }
        let w = Int(word(16)), ht = Int(word(20))
        guard word(12) == UInt32(headerSize), (1...DepthFrameCodec.maxDimension).contains(w),
              (1...DepthFrameCodec.maxDimension).contains(ht), word(28) < 256,
              DepthFrameCodec.versions.contains(UInt8(truncatingIfNeeded: word(28))),
              let kind = PixelKind(rawValue: UInt8(truncatingIfNeeded: word(24))), word(24) < 256 else {
            throw .corrupt("\(path): the file header holds invalid values")
        }
        return (w, ht, kind, UInt8(truncatingIfNeeded: word(28)))
    }

    /// A parsed record header.
    struct Record {
        var offset: UInt64
        var payloadSize: Int
        var timestamp: Double
        var payloadCRC: UInt32
        var end: UInt64 { offset + UInt64(DepthFile.recordHeaderSize + payloadSize) }
    }

    static func makeRecordHeader(index: Int, payloadSize: Int, timestamp: Double, payloadCRC: UInt32) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: recordHeaderSize)
        for i in 0..<4 { h[i] = recordMagic[i] }
        h.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(truncatingIfNeeded: payloadSize).littleEndian, toByteOffset: 4, as: UInt32.self)
            b.storeBytes(of: UInt64(truncatingIfNeeded: index).littleEndian, toByteOffset: 8, as: UInt64.self)
            b.storeBytes(of: timestamp.bitPattern.littleEndian, toByteOffset: 16, as: UInt64.self)
            b.storeBytes(of: payloadCRC.littleEndian, toByteOffset: 24, as: UInt32.self)
            b.storeBytes(of: Zlib.crc32(UnsafeRawBufferPointer(rebasing: b[0..<28])).littleEndian, toByteOffset: 28, as: UInt32.self)
        }
        return h
    }

    /// Parses a record header at `offset`; nil if it is not an intact header of frame `index` whose
    /// payload fits in `fileSize` (a torn tail).
    static func parseRecord(_ h: UnsafeRawBufferPointer, offset: UInt64, index: Int, fileSize: UInt64, maxPayload: Int) -> Record? {
        guard h.count >= recordHeaderSize, (0..<4).allSatisfy({ h[$0] == recordMagic[$0] }) else { return nil }
        let crc = UInt32(littleEndian: h.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
        guard Zlib.crc32(UnsafeRawBufferPointer(rebasing: h[0..<28])) == crc else { return nil }
        let size = Int(UInt32(littleEndian: h.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let idx = UInt64(littleEndian: h.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let ts = Double(bitPattern: UInt64(littleEndian: h.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        let payloadCRC = UInt32(littleEndian: h.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
        let record = Record(offset: offset, payloadSize: size, timestamp: ts, payloadCRC: payloadCRC)
        guard idx == UInt64(index), size >= DepthFrameCodec.headerSize, size <= maxPayload, record.end <= fileSize else { return nil }
        return record
    }

    /// Scans an open file: header + the intact records. The last record's payload CRC is verified
    /// too, so a torn write that left garbage of the right length is dropped.
    static func scan(_ file: File) throws(CaptureKitError) -> (width: Int, height: Int, kind: PixelKind, codec: UInt8, records: [Record], tail: UInt64) {
        let size = try file.size()
        let headerBuf = UnsafeMutableRawBufferPointer.allocate(byteCount: headerSize, alignment: 8)
        defer { headerBuf.deallocate() }
        guard try file.read(into: headerBuf, at: 0) == headerSize else {
            throw .corrupt("\(file.path) is too short to be a .ckdepth file (\(size) bytes)")
        }
        let (w, h, kind, codec) = try parseHeader(UnsafeRawBufferPointer(headerBuf), path: file.path)
        let maxPayload = DepthFrameCodec.bound(pixels: w * h, kind: kind)
        var records: [Record] = []
        var offset = UInt64(headerSize)
        let rec = UnsafeMutableRawBufferPointer.allocate(byteCount: recordHeaderSize, alignment: 8)
        defer { rec.deallocate() }
        while offset + UInt64(recordHeaderSize) <= size {
            guard try file.read(into: rec, at: offset) == recordHeaderSize,
                  let r = parseRecord(UnsafeRawBufferPointer(rec), offset: offset, index: records.count, fileSize: size, maxPayload: maxPayload)
            else { break }
            records.append(r)
            offset = r.end
        }
        if let last = records.last {
            let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: last.payloadSize, alignment: 16)
            defer { payload.deallocate() }
            let n = try file.read(into: payload, at: last.offset + UInt64(recordHeaderSize))
            if n != last.payloadSize || Zlib.crc32(UnsafeRawBufferPointer(payload)) != last.payloadCRC {
                records.removeLast()
            }
        }
        let end = records.last?.end ?? UInt64(headerSize)
        return (w, h, kind, codec, records, size - end)
    }
}

/// Appends frames to a `.ckdepth` file (`ck_depth_writer`). One thread at a time.
public final class DepthFileWriter {
    public let path: String
    public let width: Int, height: Int
    public let kind: PixelKind
    private var file: File?
    private let codec: DepthFrameCodec
    /// The frame version written: the file's (version 1 files stay version 1 when appended to).
    public private(set) var frameVersion = DepthFrameCodec.version
    private let encoded = ScratchBuffer(), converted = ScratchBuffer()
    public private(set) var frameCount: Int
    /// Set after a failed write: the file may end in a torn record, so no more frames are accepted.
    public private(set) var failed = false

    public enum OpenMode: Sendable { case create, overwrite, append }

    /// Opens `path` for writing frames of `width × height` of `kind`.
    /// - Throws: `state` (exists, mode `.create`), `corrupt` (append to a non-matching file), `io`,
    ///   `invalidArgument` (dimensions).
    public init(path: String, width: Int, height: Int, kind: PixelKind, level: Int32, mode: OpenMode) throws(CaptureKitError) {
        guard (1...DepthFrameCodec.maxDimension).contains(width), (1...DepthFrameCodec.maxDimension).contains(height) else {
            throw .invalidArgument("width x height \(width)x\(height) must be within 1...\(DepthFrameCodec.maxDimension)")
        }
        self.path = path; self.width = width; self.height = height; self.kind = kind
        codec = try DepthFrameCodec(level: level)
        let f: File
        switch mode {
        case .create: f = try File.open(path, .createNew)
        case .overwrite: f = try File.open(path, .createOrTruncate)
        case .append: f = try File.open(path, .readWrite)
        }
        do throws(CaptureKitError) {
            if mode == .append, try f.size() > 0 {
                let s = try DepthFile.scan(f)
                guard s.width == width, s.height == height, s.kind == kind else {
                    throw .corrupt("\(path) holds \(s.width)x\(s.height) frames of kind \(s.kind.rawValue), not \(width)x\(height) of kind \(kind.rawValue)")
                }
                let end = s.records.last?.end ?? UInt64(DepthFile.headerSize)
                frameVersion = s.codec
                if s.tail > 0 { try f.truncate(to: end) }
                try f.seek(to: end)
                frameCount = s.records.count
            } else {
                try f.truncate(to: 0)
                try f.seek(to: 0)
                let header = DepthFile.makeHeader(width: width, height: height, kind: kind)
                try f.write(header)
                try f.sync()
                try FileIO.syncDirectory(of: path)
                frameCount = 0
            }
        } catch {
            f.closeQuietly()
            throw error
        }
        file = f
    }

    deinit { file?.closeQuietly() }

    /// Encodes and appends one frame given as `format` (`src` holds width × height samples).
    /// - Throws: `invalidArgument` (format incompatible with the kind, non-finite timestamp),
    ///   `state` (closed, or after an I/O error), `io`.
    public func append(_ src: UnsafeRawPointer, format: SampleFormat, timestamp: Double) throws(CaptureKitError) {
        guard let file else { throw .state("the writer is closed") }
        guard !failed else { throw .state("an earlier write failed; reopen the file with CK_OPEN_APPEND to continue") }
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite (\(timestamp))") }
        guard format.converts(to: SampleFormat.storage(of: kind)) else {
            throw .invalidArgument("a \(format) frame cannot be stored in a file of kind \(kind)")
        }
        let n = width * height
        let out = encoded.reserve(DepthFile.recordHeaderSize + DepthFrameCodec.bound(pixels: n, kind: kind))
        let payload = UnsafeMutableRawBufferPointer(rebasing: out[DepthFile.recordHeaderSize...])
        let size: Int
        if kind == .bytes {
            size = try codec.encode(bytes: UnsafeRawBufferPointer(start: src, count: n), width: width, height: height, into: payload,
                                    version: frameVersion)
        } else {
            let storage = SampleFormat.storage(of: kind)
            var samples = src
            if format != storage {
                let buf = converted.reserve(2 * n)
                if let base = buf.baseAddress {
                    DepthConversion.convert(src, format, base, storage, count: n)
                    samples = UnsafeRawPointer(base)
                }
            }
            size = try codec.encode(UnsafeBufferPointer(start: samples.assumingMemoryBound(to: UInt16.self), count: n),
                                    width: width, height: height, kind: kind, into: payload, version: frameVersion)
        }
        let crc = Zlib.crc32(UnsafeRawBufferPointer(rebasing: payload[0..<size]))
        let header = DepthFile.makeRecordHeader(index: frameCount, payloadSize: size, timestamp: timestamp, payloadCRC: crc)
        for (i, b) in header.enumerated() { out[i] = b }
        do {
            try file.write(UnsafeRawBufferPointer(rebasing: out[0..<(DepthFile.recordHeaderSize + size)]))
        } catch {
            failed = true
            throw error
        }
        frameCount += 1
    }

    /// Makes every appended frame durable.
    public func flush() throws(CaptureKitError) {
        guard let file else { throw .state("the writer is closed") }
        try file.sync()
    }

    /// fsync and close; later calls throw `state`.
    public func close() throws(CaptureKitError) {
        guard let f = file else { return }
        file = nil
        do throws(CaptureKitError) {
            try f.sync()
            try f.close()
        } catch {
            f.closeQuietly()
            throw error
        }
    }
}

/// Random-access reader of a `.ckdepth` file (`ck_depth_reader`). One thread at a time.
public final class DepthFileReader {
    public let info: DepthFile.Info
    private let file: File
    private let records: [DepthFile.Record]
    private let codec: DepthFrameCodec
    /// The frame version the file header names (every frame must have it).
    public let frameVersion: UInt8
    private let payload = ScratchBuffer(), samples = ScratchBuffer()

    /// - Throws: `notFound`, `io`, `corrupt` (not a .ckdepth file), `unsupported` (newer version).
    public init(path: String) throws(CaptureKitError) {
        file = try File.open(path, .readOnly)
        let s = try DepthFile.scan(file)
        records = s.records
        frameVersion = s.codec
        info = DepthFile.Info(width: s.width, height: s.height, kind: s.kind, version: DepthFile.version,
                              frameCount: s.records.count, tornBytes: s.tail)
        codec = try DepthFrameCodec(level: 1)
    }

    /// Decodes frame `index` into `dst` as `format`; returns its timestamp, or nil past the end.
    /// - Throws: `corrupt` (CRC or decode failure; the message names the frame), `invalidArgument`
    ///   (format incompatible with the kind), `io`.
    public func read(_ index: Int, into dst: UnsafeMutableRawPointer, format: SampleFormat) throws(CaptureKitError) -> Double? {
        guard index >= 0, index < records.count else { return nil }
        let kind = info.kind
        guard format.converts(to: SampleFormat.storage(of: kind)) else {
            throw .invalidArgument("frames of kind \(kind) cannot be read as \(format)")
        }
        let r = records[index]
        let p = payload.reserve(r.payloadSize)
        guard try file.read(into: p, at: r.offset + UInt64(DepthFile.recordHeaderSize)) == r.payloadSize else {
            throw .corrupt("frame \(index): the file was cut short")
        }
        guard Zlib.crc32(UnsafeRawBufferPointer(p)) == r.payloadCRC else { throw .corrupt("frame \(index) fails its CRC") }
        let n = info.width * info.height
        do throws(CaptureKitError) {
            let h = try DepthFrameCodec.header(UnsafeRawBufferPointer(p))
            guard h.width == info.width, h.height == info.height, h.kind == kind, h.version == frameVersion else {
                throw .corrupt("its header (\(h.width)x\(h.height), kind \(h.kind), version \(h.version)) does not match the file")
            }
            if kind == .bytes {
                _ = try codec.decode(bytes: UnsafeRawBufferPointer(p), into: UnsafeMutableRawBufferPointer(start: dst, count: n))
            } else {
                let storage = SampleFormat.storage(of: kind)
                if format == storage {
                    _ = try codec.decode(UnsafeRawBufferPointer(p), into: UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: UInt16.self), count: n))
                } else {
                    let tmp = samples.reserve(2 * n)
                    _ = try codec.decode(UnsafeRawBufferPointer(p), into: tmp.bindMemory(to: UInt16.self))
                    if let base = tmp.baseAddress { DepthConversion.convert(UnsafeRawPointer(base), storage, dst, format, count: n) }
                }
            }
        } catch {
            throw CaptureKitError(error.status, "frame \(index): \(error.message)")
        }
        return r.timestamp
    }
}
