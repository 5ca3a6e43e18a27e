import CZlib
import Glibc

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
