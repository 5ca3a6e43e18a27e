import CZlib

/// The only wrapper around zlib: streaming deflate/inflate (raw DEFLATE or zlib-wrapped) and CRC-32.
///
/// Not thread-safe; one stream per object. z_stream is heap-allocated so its address is stable
/// (zlib keeps a back pointer to it). In debug builds a fault can be injected into the Nth fallible
/// zlib call (`Zlib.failCall(after:)`: deflateInit2, deflate, inflateInit2, inflate), which then
/// reports `Z_MEM_ERROR` (or the code given) as if zlib had; release builds compile the hook away.
public enum Zlib {
    #if DEBUG
    /// Debug-only fault injection, per thread (see `FaultCountdown`).
    static let faults = FaultCountdown()
    /// The nth fallible zlib call from now on the calling thread returns `code` instead of running.
    public static func failCall(after n: Int, code: Int32 = Z_MEM_ERROR) { faults.arm(n, code: code) }
    public static func stopFailing() { faults.disarm() }
    /// True while an armed fault has not fired yet on this thread.
    public static var faultPending: Bool { faults.remaining != nil }
    #endif

    /// The zlib code an injected fault makes this call return, or nil (run the call).
    @inline(__always)
    static func injected() -> Int32? {
        #if DEBUG
        if let code = faults.fire() { return code == 0 ? Z_MEM_ERROR : code }
        #endif
        return nil
    }

    /// CRC-32 (the PNG/zip polynomial) of `bytes`, continuing from `crc`.
    public static func crc32(_ bytes: UnsafeRawBufferPointer, _ crc: UInt32 = 0) -> UInt32 {
        guard let p = bytes.baseAddress else { return crc }
        var c = UInt(crc)
        var offset = 0
        while offset < bytes.count {  // uInt lengths: feed ≤ 1 GiB at a time
            let n = min(bytes.count - offset, 1 << 30)
            c = CZlib.crc32(c, p.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(n))
            offset += n
        }
        return UInt32(truncatingIfNeeded: c)
    }

    /// Adler-32 of `bytes` (zlib streams' trailer), continuing from `adler` (1 to start).
    public static func adler32(_ bytes: UnsafeRawBufferPointer, _ adler: UInt32 = 1) -> UInt32 {
        guard let p = bytes.baseAddress else { return adler }
        return UInt32(truncatingIfNeeded: CZlib.adler32(UInt(adler), p.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    /// Worst-case deflate output for `n` input bytes (one call, zlib wrapper included).
    public static func deflateBound(_ n: Int) -> Int {
        // compressBound: n + n/4096 + n/16384 + n/33554432 + 13; plus slack for flush markers.
        n + n / 4096 + n / 16384 + 64
    }
}

/// A deflate stream. `raw` = RFC 1951 (windowBits −15), else RFC 1950 zlib format.
public final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var ended = false

    /// - Throws: `invalidArgument` for a bad level, `noMemory`.
    public init(level: Int32, raw: Bool, memLevel: Int32 = 8, strategy: Int32 = Z_DEFAULT_STRATEGY) throws(CaptureKitError) {
        guard (1...9).contains(level) else { throw .invalidArgument("zlib level must be 1...9 (got \(level))") }
        // Set up in a local first: a throwing class initializer may still run deinit, which must
        // never see a stream that was freed or not initialised.
        let s = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        s.initialize(to: z_stream())
        let r = Zlib.injected() ?? deflateInit2_(s, level, Z_DEFLATED, raw ? -15 : 15, memLevel, strategy, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard r == Z_OK else {
            s.deallocate()
            throw r == Z_MEM_ERROR ? CaptureKitError(.noMemory, "zlib: deflateInit2 out of memory") : .invalidArgument("zlib: deflateInit2 failed (\(r))")
        }
        stream = s
    }

    deinit {
        if !ended { deflateEnd(stream) }
        stream.deallocate()
    }

    /// Total bytes consumed / produced so far.
    public var totalIn: UInt64 { UInt64(stream.pointee.total_in) }
    public var totalOut: UInt64 { UInt64(stream.pointee.total_out) }

    /// Compresses `input` with `flush` (Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_FINISH), handing
    /// every produced chunk to `sink` (through a scratch buffer of `chunk` bytes).
    public func deflate(_ input: UnsafeRawBufferPointer, flush: Int32, chunk: Int = 1 << 16,
                        _ sink: (UnsafeRawBufferPointer) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { out.deallocate() }
        var offset = 0
        repeat {
            // avail_in is a 32-bit uInt: feed ≤ 1 GiB per step.
            let n = min(input.count - offset, 1 << 30)
            let last = offset + n == input.count
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(n)
            repeat {
                stream.pointee.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(chunk)
                let r = Zlib.injected() ?? CZlib.deflate(stream, last ? flush : Z_NO_FLUSH)
                guard r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR else {
                    throw CaptureKitError(r == Z_MEM_ERROR ? .noMemory : .io, "zlib: deflate failed (\(r))")
                }
                let produced = chunk - Int(stream.pointee.avail_out)
                if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: out[0..<produced])) }
            } while stream.pointee.avail_out == 0
            offset += n
        } while offset < input.count
    }

    /// Resets for a new stream with the same parameters.
    public func reset() { deflateReset(stream) }
}

/// An inflate stream. `raw` = RFC 1951, else RFC 1950.
public final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// The stream reached its end marker.
    public private(set) var finished = false

    public init(raw: Bool) throws(CaptureKitError) {
        // Set up in a local first (see `Deflater.init`).
        let s = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        s.initialize(to: z_stream())
        let r = Zlib.injected() ?? inflateInit2_(s, raw ? -15 : 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard r == Z_OK else {
            s.deallocate()
            throw CaptureKitError(.noMemory, "zlib: inflateInit2 failed (\(r))")
        }
        stream = s
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    public var totalIn: UInt64 { UInt64(stream.pointee.total_in) }
    public var totalOut: UInt64 { UInt64(stream.pointee.total_out) }

    /// zlib's `data_type` after the last `inflate`: unused bits in the last input byte (low bits),
    /// +64 while in the final block, +128 when stopped at a block boundary (see `Z_BLOCK`).
    public var dataType: Int32 { stream.pointee.data_type }

    /// True when the last `inflate` stopped at a byte-aligned block boundary (`flush: Z_BLOCK`):
    /// with raw streams written with full flushes, such a position is a restart point.
    public var atByteAlignedBlockBoundary: Bool { dataType & 128 != 0 && dataType & 63 == 0 }

    /// Inflates from `input` into `output`; returns (bytes consumed, bytes produced). Stops when the
    /// output is full, the input is used up, or the stream ends (`finished`); with `flush: Z_BLOCK`
    /// also at each deflate block boundary (calling again continues).
    /// - Throws: `corrupt` for a malformed stream.
    public func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                        flush: Int32 = Z_NO_FLUSH) throws(CaptureKitError) -> (consumed: Int, produced: Int) {
        if finished || output.count == 0 { return (0, 0) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(min(input.count, 1 << 30))
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(output.count, 1 << 30))
        let inBefore = Int(stream.pointee.avail_in), outBefore = Int(stream.pointee.avail_out)
        let r = Zlib.injected() ?? CZlib.inflate(stream, flush)
        switch r {
        case Z_OK, Z_BUF_ERROR: break
        case Z_STREAM_END: finished = true
        case Z_MEM_ERROR: throw CaptureKitError(.noMemory, "zlib: out of memory")
        default:
            let msg = stream.pointee.msg.map { String(cString: $0) } ?? "error \(r)"
            throw CaptureKitError(.corrupt, "zlib: \(msg)")
        }
        return (inBefore - Int(stream.pointee.avail_in), outBefore - Int(stream.pointee.avail_out))
    }

    /// Resets for a new stream; with `raw` streams a reader can restart at a full-flush point.
    public func reset() {
        inflateReset(stream)
        finished = false
    }
}
