import CZlib
import Glibc

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
    public internal(set) var position: UInt64 = 0
    /// True while restart points from a validated side index are in use.
    public internal(set) var usesIndex = false
    /// Frame start offsets known so far: `restarts[i]` is where frame `i` starts (`restarts[0]` = 0).
    public internal(set) var restarts: [UInt64] = [0]
    /// False once a restart point failed (a stream flushed without resetting the window): from then
    /// on every seek decodes from the start.
    public internal(set) var seekable = true

    let file: File
    var cursor: Cursor?
    /// The total once the stream's final block has been reached.
    var finalCount: UInt64?
    let frame = ScratchBuffer()
    private let convert = ScratchBuffer()
    /// The first damage found (zlib rejected the data, or the final block ends inside a frame):
    /// from then on every call fails with it, as zlib's inflate does after `Z_DATA_ERROR`.
    var damage: CaptureKitError?

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
