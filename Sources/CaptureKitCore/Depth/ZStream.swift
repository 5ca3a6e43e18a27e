import CZlib

/// MultiScan-compatible depth and confidence streams (`<scan>.depth.zlib`, `<scan>.confidence.zlib`,
/// docs/FORMATS.md §1): ONE raw DEFLATE stream (RFC 1951, windowBits −15) over the concatenation of all
/// frames, each frame `height × width` samples, row-major, tightly packed, no per-frame header:
/// float16 metres (little-endian) for depth, uint8 (0 low, 1 medium, 2 high) for confidence.
///
/// The writer ends every frame with a full flush (`Z_FULL_FLUSH`): the frame's last byte is in the
/// file, byte-aligned and followed by the 4-byte sync marker `00 00 FF FF`, and the next frame does
/// not refer back to it. So a file cut short by a crash still yields every complete frame, and the
/// offset after each marker is a restart point for a fresh raw inflater — what the optional side
/// index `<path>.idx` lists (little-endian `UInt64`, one per frame start, the first being 0).
///
/// Truncation rule (readers): frames are delivered while complete; when the data ends exactly at a
/// frame boundary — after a full flush, with or without the final block — the stream is a clean
/// (if unterminated) recording and the reader reports the end; when it ends inside a frame, that
/// frame is reported cut short (`corrupt`, naming it). A stream whose final block ends inside a
/// frame (wrong width, height or format) is `corrupt` too. Bytes after the final block are ignored,
/// as MultiScan's decoders (Python `zlib.decompressobj`) ignore them. Raw DEFLATE carries no
/// checksum: damage is detected when zlib rejects the bit stream (most damage), not always.
public enum ZStream {
    /// Largest accepted width or height (`CK_DEPTH_MAX_DIMENSION`).
    public static let maxDimension = 16384
    /// The writer's default zlib level (`CK_ZSTREAM_DEFAULT_LEVEL`), chosen by measurement: on
    /// 256×192 synthetic LiDAR frames level 1 encodes about twice as fast as MultiScan's level 5
    /// for a ratio a few percent lower, and decodes as fast (see BENCHMARKS.md).
    public static let defaultLevel: Int32 = 1
    /// The sync marker a full (or sync) flush ends with: an empty stored block's LEN and NLEN.
    static let syncMarker: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    /// DEFLATE's window: after this many output bytes since a restart, no back-reference can reach
    /// before the restart point.
    static let window: UInt64 = 32768
    /// Largest side index a reader loads (64 Mi frames, 18 days at 60 Hz; 512 MiB): a larger file
    /// is ignored rather than allocated.
    static let maxIndexEntries: UInt64 = 1 << 26
    /// Compressed bytes read from the file per call.
    static let inputChunk = 1 << 16

    /// The side index path of a stream.
    public static func indexPath(_ path: String) -> String { path + ".idx" }

    /// What a stream stores.
    public enum Kind: Sendable {
        /// float16 metres, 2 bytes a sample.
        case depth
        /// uint8 confidence, 1 byte a sample.
        case confidence

        public var sampleSize: Int { self == .depth ? 2 : 1 }
        var name: String { self == .depth ? "depth (float16)" : "confidence (uint8)" }
    }

    /// Validates frame dimensions and returns the bytes of one stored frame.
    static func frameBytes(width: Int, height: Int, kind: Kind) throws(CaptureKitError) -> Int {
        guard (1...maxDimension).contains(width) else {
            throw .invalidArgument("width \(width) is outside 1...\(maxDimension)")
        }
        guard (1...maxDimension).contains(height) else {
            throw .invalidArgument("height \(height) is outside 1...\(maxDimension)")
        }
        return width * height * kind.sampleSize  // ≤ 2^29: no overflow
    }

    /// True when the bytes `start..<end` of `file` are exactly `frames` frames of `frameBytes`
    /// bytes for a fresh raw inflater started at `start` (so `start` is a restart point), with no
    /// final block among them, and `end` follows a sync marker (the last frame's full flush): the
    /// check that a frame boundary read from a journal is one before a stream is cut there. Bounded
    /// memory (64 KiB in, 64 KiB out); damage is `false`, never an error.
    /// - Throws: `io`, `noMemory`.
    static func segmentHoldsFrames(_ file: File, from start: UInt64, to end: UInt64, frames: UInt64,
                                   frameBytes: Int) throws(CaptureKitError) -> Bool {
        guard end > start, frames > 0 else { return end == start && frames == 0 }
        let (expected, overflow) = frames.multipliedReportingOverflow(by: UInt64(frameBytes))
        guard !overflow, end - start >= 4 else { return false }
        let inflater = try Inflater(raw: true)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: inputChunk, alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { output.deallocate() }
        var pos = start, produced: UInt64 = 0
        var tail: [UInt8] = []  // the last 4 bytes read
        while pos < end {
            let want = Int(min(UInt64(inputChunk), end - pos))
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<want]), at: pos)
            guard n > 0 else { return false }  // the file ends before `end`
            var used = 0
            while used < n {
                let r: (consumed: Int, produced: Int)
                do throws(CaptureKitError) {
                    r = try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[used..<n]), into: output)
                } catch {
                    if error.status == .corrupt { return false }
                    throw error
                }
                used += r.consumed
                produced += UInt64(r.produced)
                if produced > expected || inflater.finished || (r.consumed == 0 && r.produced == 0) { return false }
            }
            tail = Array((tail + Array(input[max(0, n - 4)..<n])).suffix(4))
            pos += UInt64(n)
        }
        return produced == expected && tail == syncMarker
    }

    /// Reads 8-byte little-endian values.
    static func uint64LE(_ bytes: UnsafeRawBufferPointer, at i: Int) -> UInt64 {
        var v: UInt64 = 0
        for b in 0..<8 { v |= UInt64(bytes[i + b]) << (8 * UInt64(b)) }
        return v
    }
}

// MARK: - Writer

/// Writes a MultiScan-compatible stream frame by frame. Memory is bounded by one frame (no
/// whole-recording buffers); each `append` compresses the frame with a full flush and writes the
/// bytes to the file before returning, so a killed process loses no frame whose append returned.
/// `close` ends the stream (final block), fsyncs the file(s) and their directory.
///
/// Failures are sticky: after a failed write or a failed index write the writer rolls the file back
/// to the end of the last complete frame (best effort) and refuses further frames (`state`); readers
/// never see a partial frame as a frame. Not thread-safe.
public final class ZStreamWriter {
    public let path: String
    public let width: Int
    public let height: Int
    public let kind: ZStream.Kind
    public let level: Int32
    /// Bytes of one stored frame.
    public let frameBytes: Int
    /// Frames appended successfully.
    public private(set) var frameCount: UInt64 = 0
    /// Compressed bytes in the file: where the next frame starts.
    public private(set) var compressedSize: UInt64 = 0
    /// True when a side index is written.
    public var writesIndex: Bool { indexFile != nil }

    private var file: File?
    private var indexFile: File?
    private let deflater: Deflater
    private let scratch = ScratchBuffer()
    /// The first failure; later appends report it as `state`.
    private var failure: CaptureKitError?
    /// The file may end with part of a frame (a failed write whose rollback failed too).
    private var tornTail = false

    /// Creates the stream file (and `<path>.idx` with `index`).
    /// - Parameters:
    ///   - level: zlib level 1...9, or 0 for `ZStream.defaultLevel`.
    ///   - overwrite: replace existing files; otherwise an existing `path` (or, with `index`, an
    ///     existing `<path>.idx`) is `state`. Replacing a stream without `index` removes its stale
    ///     side index.
    /// - Throws: `invalidArgument` (dimensions, level), `state`, `io`, `notFound` (no such directory).
    public init(path: String, width: Int, height: Int, kind: ZStream.Kind, level: Int32 = 0,
                index: Bool = false, overwrite: Bool = false) throws(CaptureKitError) {
        frameBytes = try ZStream.frameBytes(width: width, height: height, kind: kind)
        let level = level == 0 ? ZStream.defaultLevel : level
        guard (1...9).contains(level) else { throw .invalidArgument("level \(level) is outside 0...9 (0 = default)") }
        self.path = path
        self.width = width
        self.height = height
        self.kind = kind
        self.level = level
        deflater = try Deflater(level: level, raw: true)
        let indexPath = ZStream.indexPath(path)
        if !overwrite {
            if FileIO.exists(path) { throw .exists("\(path) exists (pass CK_OPEN_OVERWRITE to replace it)") }
            if index && FileIO.exists(indexPath) {
                throw .exists("\(indexPath) exists (pass CK_OPEN_OVERWRITE to replace it)")
            }
        }
        let f = try File.open(path, overwrite ? .createOrTruncate : .createNew)
        if index {
            do throws(CaptureKitError) {
                indexFile = try File.open(indexPath, overwrite ? .createOrTruncate : .createNew)
            } catch {
                f.closeQuietly()
                try? FileIO.remove(path)  // we created it
                throw error
            }
        } else if overwrite {
            // A side index left from the replaced recording would describe the wrong file.
            do throws(CaptureKitError) { try FileIO.remove(indexPath) } catch {
                f.closeQuietly()
                throw error
            }
        }
        file = f
    }

    /// Continues a stream written earlier (a dataset reopened after a crash): the file is cut at
    /// `offset`, the end of its frame `frames - 1` (a full-flush point the caller has checked, e.g.
    /// with `ZStream.segmentHoldsFrames`), and a fresh raw compressor appends after it. A full flush
    /// leaves nothing for later data to refer back to, so one inflater over the whole file (as
    /// MultiScan's decoders read it) reads the old frames and the new ones. No side index (a stale
    /// `<path>.idx` is removed).
    /// - Throws: `invalidArgument` (dimensions, level), `notFound` (no such file), `corrupt` (the
    ///   file is shorter than `offset`, or a symbolic link), `io`.
    public init(continuing path: String, width: Int, height: Int, kind: ZStream.Kind, level: Int32 = 0,
                frames: UInt64, at offset: UInt64) throws(CaptureKitError) {
        frameBytes = try ZStream.frameBytes(width: width, height: height, kind: kind)
        let level = level == 0 ? ZStream.defaultLevel : level
        guard (1...9).contains(level) else { throw .invalidArgument("level \(level) is outside 0...9 (0 = default)") }
        self.path = path
        self.width = width
        self.height = height
        self.kind = kind
        self.level = level
        deflater = try Deflater(level: level, raw: true)
        guard FileIO.exists(path) else { throw .notFound("\(path) does not exist: there is no stream to continue") }
        guard !FileIO.isSymbolicLink(path) else { throw .corrupt("\(path) is a symbolic link; CaptureKit does not follow it") }
        let f = try File.open(path, .readWrite)
        do throws(CaptureKitError) {
            let size = try f.size()
            guard offset <= size else { throw .corrupt("\(path) holds \(size) bytes, fewer than the \(offset) of its \(frames) frames") }
            try f.truncate(to: offset)
            try f.seek(to: offset)
            if FileIO.exists(ZStream.indexPath(path)) { try FileIO.remove(ZStream.indexPath(path)) }
        } catch {
            f.closeQuietly()
            throw error
        }
        file = f
        frameCount = frames
        compressedSize = offset
    }

    deinit {
        file?.closeQuietly()
        indexFile?.closeQuietly()
    }

    /// Makes every appended frame durable (fsyncs the file and the side index).
    /// - Throws: `io`, `state` (closed).
    public func sync() throws(CaptureKitError) {
        guard let file else { throw .state("the writer is closed") }
        try file.sync()
        try indexFile?.sync()
    }

    /// Compresses one frame and writes it (and its index entry) to the file.
    /// - Parameters:
    ///   - src: `width × height` samples of `format`: `.depthF32` (metres; converted to float16 by the
    ///     depth rules) or `.depthF16` for depth streams, `.u8` for confidence. Any alignment.
    /// - Throws: `invalidArgument` (a format the stream does not take), `io` (the write failed;
    ///   the writer is then failed), `state` (the writer failed earlier or is closed).
    public func append(_ src: UnsafeRawPointer, format: SampleFormat) throws(CaptureKitError) {
        if let failure { throw .state("the writer failed earlier and accepts no more frames (\(failure.message))") }
        guard let file else { throw .state("the writer is closed") }
        let n = width * height
        let frame: UnsafeRawBufferPointer
        switch (kind, format) {
        case (.depth, .depthF16):
            #if _endian(big)
            let s = scratch.reserve(frameBytes)
            s.copyMemory(from: UnsafeRawBufferPointer(start: src, count: frameBytes))
            ZStream.swapBytes16(s)
            frame = UnsafeRawBufferPointer(s)
            #else
            frame = UnsafeRawBufferPointer(start: src, count: frameBytes)
            #endif
        case (.depth, .depthF32):
            let s = scratch.reserve(frameBytes + n * 4)
            let dst = UnsafeMutableRawBufferPointer(rebasing: s[0..<frameBytes]).bindMemory(to: UInt16.self)
            let input: UnsafeBufferPointer<Float>
            if Int(bitPattern: src) % MemoryLayout<Float>.alignment == 0 {
                input = UnsafeBufferPointer(start: src.assumingMemoryBound(to: Float.self), count: n)
            } else {  // an unaligned caller buffer: copy it first
                let aligned = UnsafeMutableRawBufferPointer(rebasing: s[frameBytes..<(frameBytes + n * 4)])
                aligned.copyMemory(from: UnsafeRawBufferPointer(start: src, count: n * 4))
                input = UnsafeBufferPointer(aligned.bindMemory(to: Float.self))
            }
            DepthConversion.toFloat16(input, dst)
            #if _endian(big)
            ZStream.swapBytes16(UnsafeMutableRawBufferPointer(rebasing: s[0..<frameBytes]))
            #endif
            frame = UnsafeRawBufferPointer(rebasing: s[0..<frameBytes])
        case (.confidence, .u8):
            frame = UnsafeRawBufferPointer(start: src, count: frameBytes)
        default:
            let accepted = kind == .depth ? "CK_FORMAT_DEPTH_F32 or CK_FORMAT_DEPTH_F16" : "CK_FORMAT_U8"
            throw .invalidArgument("src_format \(format.cName) does not fit a \(kind.name) stream (use \(accepted))")
        }
        let start = compressedSize
        var written: UInt64 = 0
        do throws(CaptureKitError) {
            try deflater.deflate(frame, flush: Z_FULL_FLUSH) { (chunk) throws(CaptureKitError) in
                try file.write(chunk)
                written += UInt64(chunk.count)
            }
            if let indexFile {
                var entry = start.littleEndian
                try withUnsafeBytes(of: &entry) { (b) throws(CaptureKitError) in try indexFile.write(b) }
            }
        } catch {
            fail(error, rollbackTo: start)
            throw error.status == .io || error.status == .noMemory ? error : CaptureKitError(.io, error.message)
        }
        compressedSize = start + written
        frameCount += 1
        lastFrameStart = start
    }

    /// Where the last appended frame starts in the file (nil: none to discard).
    private var lastFrameStart: UInt64?

    /// Takes back the last appended frame: the file (and the side index) are cut back to where it
    /// started. Valid because every frame ends with a full flush, so the next frame's compressed
    /// data refers to nothing before it. One frame only (for a caller whose multi-stream frame
    /// failed half-way, e.g. the dataset's depth + confidence + camera-info).
    /// - Throws: `state` (nothing to discard, or the writer failed or is closed); `io` (the cut
    ///   failed: the writer is then failed).
    public func discardLastFrame() throws(CaptureKitError) {
        guard failure == nil, let file, let start = lastFrameStart else { throw .state("no frame to discard") }
        lastFrameStart = nil
        do throws(CaptureKitError) {
            try file.truncate(to: start)
            try file.seek(to: start)
            if let indexFile {
                let size = (frameCount - 1) * 8
                try indexFile.truncate(to: size)
                try indexFile.seek(to: size)
            }
        } catch {
            failure = error
            tornTail = true
            throw error
        }
        frameCount -= 1
        compressedSize = start
    }

    /// Enters the failed state and cuts the file(s) back to the last complete frame.
    private func fail(_ error: CaptureKitError, rollbackTo start: UInt64) {
        failure = error
        do throws(CaptureKitError) {
            if let file {  // a failed write may have left part of a chunk: always cut back
                try file.truncate(to: start)
                try file.seek(to: start)
            }
            if let indexFile {
                let size = frameCount * 8
                try indexFile.truncate(to: size)
                try indexFile.seek(to: size)
            }
        } catch {
            tornTail = true
        }
    }

    /// Ends the stream with its final block, fsyncs and closes the file(s), fsyncs the directory.
    /// After an earlier failure the stream is still terminated cleanly after the last complete
    /// frame when the rollback succeeded. Closing twice is a no-op.
    /// - Throws: `io` (the file may then miss its final block; every frame appended is still readable,
    ///   unless a frame's rollback failed earlier: then the message says so).
    public func close() throws(CaptureKitError) {
        guard let file else { return }
        self.file = nil
        let index = indexFile
        indexFile = nil
        do throws(CaptureKitError) {
            if failure == nil {
                try deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH) { (chunk) throws(CaptureKitError) in
                    try file.write(chunk)
                    compressedSize += UInt64(chunk.count)
                }
            } else if !tornTail {
                // The file ends at a full-flush point: an empty final fixed-Huffman block (the same two
                // bytes Z_FINISH writes there) terminates it without the deflater.
                var final: (UInt8, UInt8) = (0x03, 0x00)
                try withUnsafeBytes(of: &final) { (b) throws(CaptureKitError) in try file.write(b) }
                compressedSize += 2
            }
            try file.sync()
            try index?.sync()
            try file.close()
            try index?.close()
            try FileIO.syncDirectory(of: path)
        } catch {
            file.closeQuietly()
            index?.closeQuietly()
            throw CaptureKitError(error.status == .noMemory ? .noMemory : .io, error.message)
        }
        if tornTail, let failure {
            throw CaptureKitError(.io, "\(path) may end with part of frame \(frameCount): a write failed and cutting it away failed too (\(failure.message))")
        }
    }
}

// MARK: - Reader

/// Reads a MultiScan-compatible stream: frame count, next frame, frame by index, into caller
/// buffers as float32/float16/millimetres (depth) or uint8 (confidence).
///
/// Random access uses restart points — offsets right after a sync marker at a frame boundary —
/// from a validated side index or discovered while decoding; otherwise it decodes forward from the
/// nearest earlier known position. A restart point is never trusted blindly: a fresh inflater
/// cannot resolve a reference to data before it, so a wrong point fails loudly within the 32 KiB
/// window, and the reader then drops every restart point and decodes from the start. Memory: two
/// frames of scratch, a 64 KiB input buffer, 8 bytes per known frame offset. Not thread-safe.
///
/// Damage is sticky, as in zlib: once zlib rejected the data or the final block ended inside a
/// frame, every later call throws `corrupt` (naming the first damage). A stream that merely ends
/// inside a frame (cut short, or still being written) is not damage: a later call retries.
public final class ZStreamReader {
    public let path: String
    public let width: Int
    public let height: Int
    public let kind: ZStream.Kind
    /// Bytes of one stored frame.
    public let frameBytes: Int
    /// The frame `next` delivers.
    public private(set) var position: UInt64 = 0
    /// True while restart points from a validated side index are in use.
    public private(set) var usesIndex = false
    /// Frame start offsets known so far: `restarts[i]` is where frame `i` starts (`restarts[0]` = 0).
    public private(set) var restarts: [UInt64] = [0]
    /// False once a restart point failed (a stream flushed without resetting the window): from then
    /// on every seek decodes from the start.
    public private(set) var seekable = true

    private let file: File
    private var cursor: Cursor?
    /// The total once the stream's final block has been reached.
    private var finalCount: UInt64?
    private let frame = ScratchBuffer()
    private let convert = ScratchBuffer()
    /// The first damage found (zlib rejected the data, or the final block ends inside a frame):
    /// from then on every call fails with it, as zlib's inflate does after `Z_DATA_ERROR`.
    private var damage: CaptureKitError?

    /// Opens a stream; loads and validates `<path>.idx` when present (an unusable index is ignored).
    /// - Throws: `invalidArgument` (dimensions), `notFound`, `io`.
    public init(path: String, width: Int, height: Int, kind: ZStream.Kind) throws(CaptureKitError) {
        frameBytes = try ZStream.frameBytes(width: width, height: height, kind: kind)
        self.path = path
        self.width = width
        self.height = height
        self.kind = kind
        file = try File.open(path, .readOnly)
        _ = frame.reserve(frameBytes)
        loadIndex()
    }

    // MARK: Side index

    /// Reads `<path>.idx` and adopts it when it is consistent with the stream: entries start at 0,
    /// strictly increase and lie inside the file; every entry is the end of a sync marker and no
    /// frame boundary is missing between two entries (the compressed file is scanned once for
    /// markers, without decompressing; an unlisted marker between two entries is either a deleted
    /// entry or the 4 bytes occurring by chance inside compressed data, so that interval's frame is
    /// decoded to check that it ends at the next entry); a fresh inflater starts decoding at every
    /// entry (catches an entry added at such a chance marker, heuristically: the bytes there are
    /// read as block headers and nearly always fail); and a fresh inflater decodes the last indexed
    /// frame from its offset. Any failure leaves the reader without an index: it then finds
    /// the frames by decoding (slower, same results). The checks are structural (every flush
    /// marker ends a frame, as our writer makes them): an index listing exactly the markers of a
    /// stream whose markers are not all frame boundaries (undetectable damage, another writer's
    /// flushes inside frames) passes, and reads through it are as wrong as that stream's frames.
    private func loadIndex() {
        let indexPath = ZStream.indexPath(path)
        guard FileIO.exists(indexPath) else { return }
        guard let entries = try? readIndex(indexPath), !entries.isEmpty else { return }
        guard (try? validate(entries)) == true else { return }
        restarts = entries
        usesIndex = true
    }

    private func readIndex(_ indexPath: String) throws(CaptureKitError) -> [UInt64]? {
        let dataSize = try file.size()
        let f = try File.open(indexPath, .readOnly)
        defer { f.closeQuietly() }
        let size = try f.size()
        // A valid index has fewer entries than the stream has bytes (a frame takes ≥ 5 bytes); a torn
        // last entry (a crash while writing it) is ignored.
        let count = size / 8
        guard count <= dataSize / 4 + 1, count <= ZStream.maxIndexEntries else { return nil }
        let n = Int(count)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(n * 8, 1), alignment: 8)
        defer { buffer.deallocate() }
        guard try f.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(n * 8)]), at: 0) == n * 8 else { return nil }
        var entries = [UInt64]()
        entries.reserveCapacity(n)
        for i in 0..<n { entries.append(ZStream.uint64LE(UnsafeRawBufferPointer(buffer), at: i * 8)) }
        return entries
    }

    /// Most index intervals whose frame is decoded to check it (chance markers); beyond, the index
    /// is refused.
    static let maxCheckedIntervals = 16

    private func validate(_ entries: [UInt64]) throws(CaptureKitError) -> Bool {
        let dataSize = try file.size()
        guard entries[0] == 0, let last = entries.last, last < dataSize else { return false }
        for i in 1..<entries.count where entries[i] <= entries[i - 1] { return false }
        // Every entry must be a marker end, and every marker end up to the last entry an entry
        // (a deleted entry would shift every later frame number: wrong frames with no error).
        var suspicious: [Int] = []  // i: an unlisted marker lies between entries[i] and entries[i + 1]
        var next = 1                // the entry the next marker end should be
        var extra = false
        var consistent = true
        try scanMarkerEnds(upTo: last) { end in
            if next < entries.count && entries[next] < end {  // entries[next] is not a marker end
                consistent = false
                return false
            }
            if next < entries.count && entries[next] == end {
                if extra { suspicious.append(next - 1) }
                extra = false
                next += 1
            } else {
                extra = true
            }
            return suspicious.count <= ZStreamReader.maxCheckedIntervals
        }
        guard consistent, next == entries.count, suspicious.count <= ZStreamReader.maxCheckedIntervals else { return false }
        // The last interval too: its frame must end at the last entry with the stream going on (an
        // entry after the final block would count bytes past the end, which readers ignore, as frames).
        if entries.count >= 2 && !suspicious.contains(entries.count - 2) { suspicious.append(entries.count - 2) }
        for i in suspicious {
            guard try frameEnd(from: entries[i], frame: UInt64(i)) == entries[i + 1] else { return false }
        }
        // An entry added at a chance marker passes the scan; a fresh inflater started there reads
        // compressed data as block headers and fails at once (no window for back-references).
        guard try restartsDecode(entries) else { return false }
        // Decode the last indexed frame from its offset with a fresh inflater.
        let c = try Cursor(offset: last, frame: UInt64(entries.count - 1))
        switch try c.decodeFrame(into: frame.reserve(frameBytes), frameBytes: frameBytes, file: file, discovered: { _, _, _ in }) {
        case .damaged: return false
        case .frame, .end, .truncated, .endedInside: return true
        }
    }

    /// Calls `body` with the end offset of every sync marker (`00 00 FF FF`) that ends at or before
    /// `limit`, in order, until it returns false. Reads the file in 1 MiB chunks.
    private func scanMarkerEnds(upTo limit: UInt64, _ body: (UInt64) -> Bool) throws(CaptureKitError) {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + 3, alignment: 16)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0  // file offset of buffer[0]
        var kept = 0            // bytes carried over from the previous chunk (at most 3)
        while offset + UInt64(kept) < limit {
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[kept..<(kept + chunk)]),
                                  at: offset + UInt64(kept))
            let count = kept + n
            var j = 3  // buffer[j] is a marker's last byte; j < 3 was checked with the previous chunk
            while j < count {
                if buffer[j] == 0xFF && buffer[j - 1] == 0xFF && buffer[j - 2] == 0x00 && buffer[j - 3] == 0x00 {
                    let end = offset + UInt64(j + 1)
                    if end > limit { return }
                    if !body(end) { return }
                }
                j += 1
            }
            if n == 0 { return }
            let carry = min(3, count)
            for k in 0..<carry { buffer[k] = buffer[count - carry + k] }
            offset += UInt64(count - carry)
            kept = carry
        }
    }

    /// True when a fresh raw inflater started at each entry decodes the start of a frame (up to
    /// 256 bytes) without an error. One inflater, reset per entry, and 1 KiB of input each.
    private func restartsDecode(_ entries: [UInt64]) throws(CaptureKitError) -> Bool {
        let inflater = try Inflater(raw: true)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 16)
        defer { output.deallocate() }
        let want = min(frameBytes, 256)
        for e in entries {
            inflater.reset()
            let n = try file.read(into: input, at: e)
            var consumed = 0, produced = 0
            while produced < want && consumed < n && !inflater.finished {
                let r: (consumed: Int, produced: Int)
                do throws(CaptureKitError) {
                    r = try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[consumed..<n]),
                                             into: UnsafeMutableRawBufferPointer(rebasing: output[produced..<want]))
                } catch {
                    if error.status == .corrupt { return false }
                    throw error
                }
                if r.consumed == 0 && r.produced == 0 { break }
                consumed += r.consumed
                produced += r.produced
            }
        }
        return true
    }

    /// Where frame `index + 1` starts when a fresh inflater decodes frame `index` from `start`:
    /// the first marker end after the frame's data; nil when the frame does not decode whole.
    private func frameEnd(from start: UInt64, frame index: UInt64) throws(CaptureKitError) -> UInt64? {
        let out = frame.reserve(frameBytes)
        let c = try Cursor(offset: start, frame: index)
        guard case .frame = try c.decodeFrame(into: out, frameBytes: frameBytes, file: file, discovered: { _, _, _ in }) else {
            return nil
        }
        var end: UInt64?
        _ = try c.decodeFrame(into: out, frameBytes: frameBytes, file: file) { _, offset, marker in
            guard end == nil else { return }
            if marker ?? ((try? markerPrecedes(offset)) ?? false) { end = offset }
        }
        return end
    }

    /// True when the 4 bytes before `offset` are the sync marker.
    private func markerPrecedes(_ offset: UInt64) throws(CaptureKitError) -> Bool {
        guard offset >= 4 else { return false }
        var bytes: (UInt8, UInt8, UInt8, UInt8) = (1, 1, 1, 1)
        let n = try withUnsafeMutableBytes(of: &bytes) { (b) throws(CaptureKitError) in try file.read(into: b, at: offset - 4) }
        return n == 4 && bytes == (0x00, 0x00, 0xFF, 0xFF)
    }

    /// Records the start offset of `frame` found while decoding (only right after a sync marker, only
    /// for the first unknown frame, so `restarts` stays contiguous).
    private func discovered(_ frame: UInt64, _ offset: UInt64, markerBefore: Bool?) {
        guard seekable, frame == UInt64(restarts.count), offset > restarts[restarts.count - 1] else { return }
        let marker = markerBefore ?? ((try? markerPrecedes(offset)) ?? false)
        if marker { restarts.append(offset) }
    }

    /// Forgets every restart point (one failed) and the index.
    private func dropRestarts() {
        seekable = false
        usesIndex = false
        restarts = [0]
    }

    // MARK: Decoding

    /// Decodes frame `target` into the frame scratch buffer, continuing the current cursor when it
    /// is at or before `target` and not behind the nearest restart point, else restarting there.
    /// - Returns: false at the end of the stream (no frame `target`).
    /// - Throws: `corrupt` naming the damaged or cut-short frame, `io`.
    private func decode(_ target: UInt64, into out: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Bool {
        let nearest = min(target, UInt64(restarts.count - 1))
        var c: Cursor
        if let current = cursor, current.frame <= target, current.frame >= nearest {
            c = current
        } else {
            c = try Cursor(offset: restarts[Int(nearest)], frame: nearest)
            cursor = c
        }
        while true {
            let step = try step(c, into: out)
            switch step {
            case .frame:
                if c.frame > target { return true }  // frame `target` was the one just decoded
            case .end:
                if c.ended { finalCount = c.frame }
                return false
            case .truncated(let produced):
                cursor = nil
                throw ZStreamReader.cutShort(c.frame, produced, frameBytes, target)
            case .endedInside(let produced):
                cursor = nil
                throw damaged(CaptureKitError(.corrupt, "the stream's final block ends inside frame \(c.frame) after \(produced) of its \(frameBytes) bytes (wrong width, height or format?)" + ZStreamReader.unreachable(c.frame, target)))
            case .damaged(let message):
                cursor = nil
                if c.restartOffset > 0 && c.producedSinceRestart < ZStream.window {
                    // The restart point was not one (e.g. a sync flush kept the window): decode from the start.
                    dropRestarts()
                    c = try Cursor(offset: 0, frame: 0)
                    cursor = c
                    continue
                }
                throw damaged(CaptureKitError(.corrupt, "frame \(c.frame) is damaged (\(message))" + hint(c.frame) + ZStreamReader.unreachable(c.frame, target)))
            }
        }
    }

    private func step(_ c: Cursor, into out: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Cursor.Step {
        try c.decodeFrame(into: out, frameBytes: frameBytes, file: file) { [unowned self] (f, off, marker) in
            self.discovered(f, off, markerBefore: marker)
        }
    }

    /// Records the first damage (sticky) and returns the error to throw.
    private func damaged(_ error: CaptureKitError) -> CaptureKitError {
        if damage == nil { damage = error }
        return error
    }

    /// The error every call reports once the stream was found damaged.
    private func checkUndamaged() throws(CaptureKitError) {
        if let damage {
            throw CaptureKitError(.corrupt, "the stream was found damaged earlier, so the reader stops (\(damage.message))")
        }
    }

    static func cutShort(_ frame: UInt64, _ produced: Int, _ frameBytes: Int, _ target: UInt64) -> CaptureKitError {
        CaptureKitError(.corrupt, "frame \(frame) is cut short: the stream ends after \(produced) of its \(frameBytes) bytes" + unreachable(frame, target))
    }

    static func unreachable(_ frame: UInt64, _ target: UInt64) -> String {
        frame == target ? "" : " (frame \(target) cannot be reached)"
    }

    /// A hint when the very first frame fails on a zlib-wrapped (RFC 1950) stream.
    private func hint(_ frame: UInt64) -> String {
        guard frame == 0 else { return "" }
        var head: (UInt8, UInt8) = (0, 0)
        let n = (try? withUnsafeMutableBytes(of: &head) { (b) throws(CaptureKitError) in try file.read(into: b, at: 0) }) ?? 0
        guard n == 2, head.0 & 0x0F == 8, (UInt16(head.0) << 8 | UInt16(head.1)) % 31 == 0 else { return "" }
        return "; the file starts with a zlib (RFC 1950) header, but MultiScan streams are raw DEFLATE"
    }

    /// Number of complete frames. Decodes from the furthest known frame start to the end (the whole
    /// stream unless a side index or an earlier call found the later frames); a tail cut short inside
    /// a frame is not counted.
    /// - Throws: `corrupt` (damage, or a final block inside a frame: the message names the frame;
    ///   sticky: every later call fails too), `io`.
    public func frameCount() throws(CaptureKitError) -> UInt64 {
        try checkUndamaged()
        if let finalCount { return finalCount }
        let out = frame.reserve(frameBytes)
        let start = UInt64(restarts.count - 1)
        var c = try Cursor(offset: restarts[Int(start)], frame: start)
        while true {
            switch try step(c, into: out) {
            case .frame:
                continue
            case .end:
                if c.ended { finalCount = c.frame }
                return c.frame
            case .truncated:
                return c.frame
            case .endedInside(let produced):
                throw damaged(CaptureKitError(.corrupt, "the stream's final block ends inside frame \(c.frame) after \(produced) of its \(frameBytes) bytes (wrong width, height or format?)"))
            case .damaged(let message):
                if c.restartOffset > 0 && c.producedSinceRestart < ZStream.window {
                    dropRestarts()
                    c = try Cursor(offset: 0, frame: 0)
                    continue
                }
                throw damaged(CaptureKitError(.corrupt, "frame \(c.frame) is damaged (\(message))" + hint(c.frame)))
            }
        }
    }

    /// Decodes the next frame into `dst` as `format`. See `read(_:into:format:)`.
    public func next(into dst: UnsafeMutableRawBufferPointer, format: SampleFormat) throws(CaptureKitError) -> Bool {
        try read(position, into: dst, format: format)
    }

    /// Decodes frame `index` into `dst` as `format`; `next` then continues with `index + 1`.
    /// `dst` is written only on success.
    /// - Parameters:
    ///   - dst: at least `width × height × format.bytesPerSample` bytes, any alignment.
    ///   - format: `.depthF32`, `.depthF16` or `.depthMM` for depth (depth rules), `.u8` for confidence.
    /// - Returns: false when there is no frame `index` (the stream ended cleanly before it).
    /// - Throws: `invalidArgument` (format), `bufferTooSmall`, `corrupt` (damaged or cut short: the
    ///   message names the frame; every earlier frame decodes, unless the stream was found damaged:
    ///   damage is sticky, every later call fails; a stream cut short is retried), `io`.
    public func read(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer, format: SampleFormat) throws(CaptureKitError) -> Bool {
        let n = width * height
        switch (kind, format) {
        case (.depth, .depthF32), (.depth, .depthF16), (.depth, .depthMM), (.confidence, .u8): break
        default:
            let accepted = kind == .depth ? "CK_FORMAT_DEPTH_F32, CK_FORMAT_DEPTH_F16 or CK_FORMAT_DEPTH_MM" : "CK_FORMAT_U8"
            throw .invalidArgument("dst_format \(format.cName) does not fit a \(kind.name) stream (use \(accepted))")
        }
        let needed = n * format.bytesPerSample
        guard dst.count >= needed, let base = dst.baseAddress else {
            throw .bufferTooSmall("dst_capacity \(dst.count) is below the \(needed) bytes of a \(width)x\(height) frame as \(format.cName)")
        }
        try checkUndamaged()
        let out = frame.reserve(frameBytes)
        let found: Bool
        do throws(CaptureKitError) {
            found = try decode(index, into: out)
        } catch {
            position = index
            throw error
        }
        guard found else {
            position = index
            return false
        }
        #if _endian(big)
        if kind == .depth { ZStream.swapBytes16(out) }
        #endif
        deliver(UnsafeRawBufferPointer(out), to: base, format: format, count: n)
        position = index &+ 1  // a frame `index` exists, so index < UInt64.max
        return true
    }

    /// Converts a decoded frame into the caller's buffer.
    private func deliver(_ src: UnsafeRawBufferPointer, to dst: UnsafeMutableRawPointer, format: SampleFormat, count n: Int) {
        switch format {
        case .depthF16, .u8:
            if let s = src.baseAddress { dst.copyMemory(from: s, byteCount: frameBytes) }
        case .depthF32, .depthMM:
            let h = UnsafeBufferPointer(start: src.baseAddress?.assumingMemoryBound(to: UInt16.self), count: n)
            let bytes = n * format.bytesPerSample
            let aligned = Int(bitPattern: dst) % format.bytesPerSample == 0
            let target = aligned ? UnsafeMutableRawBufferPointer(start: dst, count: bytes) : convert.reserve(bytes)
            if format == .depthF32 {
                DepthConversion.toFloat32(h, target.bindMemory(to: Float.self))
            } else {
                DepthConversion.toMillimetres(float16: h, target.bindMemory(to: UInt16.self))
            }
            if !aligned, let t = target.baseAddress { dst.copyMemory(from: t, byteCount: bytes) }
        }
    }

    // MARK: Cursor

    /// A raw inflater positioned in the file: the next frame it produces, its input buffer, and
    /// where it (re)started.
    final class Cursor {
        enum Step {
            /// A whole frame was produced.
            case frame
            /// No more data at a frame boundary (`ended`: the final block was reached).
            case end
            /// The data ends inside the frame after this many bytes.
            case truncated(Int)
            /// The final block ends inside the frame after this many bytes.
            case endedInside(Int)
            /// zlib rejected the data.
            case damaged(String)
        }

        let inflater: Inflater
        let input: UnsafeMutableRawBufferPointer
        /// File offset of `input[0]`.
        var inputOffset: UInt64
        var inPos = 0
        var inLen = 0
        /// The frame the next `decodeFrame` produces.
        private(set) var frame: UInt64
        let restartOffset: UInt64
        private(set) var producedSinceRestart: UInt64 = 0
        /// The final block has been decoded.
        private(set) var ended = false

        init(offset: UInt64, frame: UInt64) throws(CaptureKitError) {
            inflater = try Inflater(raw: true)
            input = .allocate(byteCount: ZStream.inputChunk, alignment: 16)
            inputOffset = offset
            restartOffset = offset
            self.frame = frame
        }

        deinit { input.deallocate() }

        /// Decodes one frame into `out[0..<frameBytes]`, reporting byte-aligned block boundaries
        /// met before the frame's first byte to `discovered(frame, offset, markerBefore)`
        /// (`markerBefore` nil when the 4 bytes before are no longer in the buffer).
        func decodeFrame(into out: UnsafeMutableRawBufferPointer, frameBytes: Int, file: File,
                         discovered: (UInt64, UInt64, Bool?) -> Void) throws(CaptureKitError) -> Step {
            if ended { return .end }
            var produced = 0
            while true {
                if inPos == inLen {
                    inputOffset += UInt64(inLen)
                    inPos = 0
                    inLen = 0
                    inLen = try file.read(into: input, at: inputOffset)
                    if inLen == 0 { return try finishAtEndOfData(out, produced: produced, frameBytes: frameBytes) }
                }
                let r: (consumed: Int, produced: Int)
                do throws(CaptureKitError) {
                    r = try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[inPos..<inLen]),
                                             into: UnsafeMutableRawBufferPointer(rebasing: out[produced..<frameBytes]),
                                             flush: Z_BLOCK)
                } catch {
                    if error.status == .corrupt { return .damaged(error.message) }
                    throw error
                }
                inPos += r.consumed
                produced += r.produced
                producedSinceRestart += UInt64(r.produced)
                // (Not after the final block, zlib's data_type +64: nothing starts there.)
                if produced == 0 && inflater.atByteAlignedBlockBoundary && inflater.dataType & 64 == 0 && !inflater.finished {
                    var marker: Bool? = nil
                    if inPos >= 4 {
                        marker = input[inPos - 4] == 0x00 && input[inPos - 3] == 0x00 && input[inPos - 2] == 0xFF && input[inPos - 1] == 0xFF
                    }
                    discovered(frame, inputOffset + UInt64(inPos), marker)
                }
                if inflater.finished {
                    ended = true
                    if produced == frameBytes { frame += 1; return .frame }
                    return produced == 0 ? .end : .endedInside(produced)
                }
                if produced == frameBytes {
                    frame += 1
                    return .frame
                }
                if r.consumed == 0 && r.produced == 0 && inPos < inLen {
                    return .damaged("zlib made no progress")  // cannot happen with zlib; never loop forever
                }
            }
        }

        /// At the end of the file's data: lets zlib finish what its bit buffer holds (a `Z_BLOCK`
        /// stop can leave the end of the final block unprocessed), then classifies the position.
        private func finishAtEndOfData(_ out: UnsafeMutableRawBufferPointer, produced start: Int, frameBytes: Int) throws(CaptureKitError) -> Step {
            var produced = start
            do throws(CaptureKitError) {
                let r = try inflater.inflate(UnsafeRawBufferPointer(start: nil, count: 0),
                                             into: UnsafeMutableRawBufferPointer(rebasing: out[produced..<frameBytes]))
                produced += r.produced
                producedSinceRestart += UInt64(r.produced)
            } catch {
                if error.status == .corrupt { return .damaged(error.message) }
                throw error
            }
            if produced == frameBytes {
                frame += 1
                if inflater.finished { ended = true }
                return .frame
            }
            if inflater.finished {
                ended = true
                return produced == 0 ? .end : .endedInside(produced)
            }
            return produced == 0 ? .end : .truncated(produced)
        }
    }
}

extension SampleFormat {
    /// The header's name of the format (messages).
    fileprivate var cName: String {
        switch self {
        case .depthF32: return "CK_FORMAT_DEPTH_F32"
        case .depthF16: return "CK_FORMAT_DEPTH_F16"
        case .depthMM: return "CK_FORMAT_DEPTH_MM"
        case .u8: return "CK_FORMAT_U8"
        }
    }
}

extension ZStream {
    /// Swaps the bytes of every 16-bit value (big-endian hosts only: the format is little-endian).
    static func swapBytes16(_ b: UnsafeMutableRawBufferPointer) {
        var i = 0
        while i + 1 < b.count {
            let t = b[i]
            b[i] = b[i + 1]
            b[i + 1] = t
            i += 2
        }
    }
}
