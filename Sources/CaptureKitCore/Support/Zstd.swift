import CZstd

/// Debug-only fault injection for the zstd wrapper (`ZstdContext`), per thread (see
/// `FaultCountdown`): the Nth fallible zstd call (context creation, compress, decompress) from now
/// fails as if zstd had run out of memory. Release builds compile the hook away.
public enum Zstd {
    /// zstd's error codes used here (values frozen in zstd_errors.h, which zstd.h does not include).
    static let errorMemoryAllocation = 64, errorDstSizeTooSmall = 70

    #if DEBUG
    static let faults = FaultCountdown()
    public static func failCall(after n: Int) { faults.arm(n, code: Int32(errorMemoryAllocation)) }
    public static func stopFailing() { faults.disarm() }
    /// True while an armed fault has not fired yet on this thread.
    public static var faultPending: Bool { faults.remaining != nil }
    #endif

    /// The zstd error code (e.g. `errorMemoryAllocation`) an injected fault makes this call fail with, or nil.
    @inline(__always)
    static func injected() -> Int? {
        #if DEBUG
        if let code = faults.fire() { return code == 0 ? errorMemoryAllocation : Int(code) }
        #endif
        return nil
    }

    /// The function result zstd returns for error `code` (`(size_t)-code`).
    static func result(ofError code: Int) -> Int { 0 &- code }

    /// zstd's error code of a function result that `ZSTD_isError` flags.
    static func errorCode(_ r: Int) -> Int { 0 &- r }

    /// The status of a zstd error: out of memory, a destination too small, else `otherwise`.
    static func error(_ r: Int, _ otherwise: CaptureKitError.Status) -> CaptureKitError {
        let status: CaptureKitError.Status
        switch errorCode(r) {
        case errorMemoryAllocation: status = .noMemory
        case errorDstSizeTooSmall: status = .bufferTooSmall
        default: status = otherwise
        }
        return CaptureKitError(status, "zstd: \(String(cString: ZSTD_getErrorName(r)))")
    }
}

/// The only wrapper around libzstd: one reusable compression and decompression context.
///
/// Contexts are created once per codec (creating one per frame would cost more than compressing a
/// LiDAR frame). Not thread-safe: a `ZstdContext` is used by one thread at a time.
final class ZstdContext {
    private let cctx: OpaquePointer
    private let dctx: OpaquePointer
    let level: Int32

    /// - Throws: `noMemory` if zstd cannot allocate its contexts.
    init(level: Int32) throws(CaptureKitError) {
        guard Zstd.injected() == nil, let c = ZSTD_createCCtx() else {
            throw CaptureKitError(.noMemory, "zstd: cannot create a compression context")
        }
        guard Zstd.injected() == nil, let d = ZSTD_createDCtx() else {
            ZSTD_freeCCtx(c)
            throw CaptureKitError(.noMemory, "zstd: cannot create a decompression context")
        }
        cctx = c; dctx = d; self.level = level
    }

    deinit {
        ZSTD_freeCCtx(cctx)
        ZSTD_freeDCtx(dctx)
    }

    /// Worst-case compressed size of `n` bytes.
    static func bound(_ n: Int) -> Int { Int(ZSTD_compressBound(n)) }

    /// Compresses `src` into `dst`; returns the compressed size.
    /// - Parameter huffman: false stores the literals raw, without a Huffman table. The frame is
    ///   an ordinary zstd frame either way; raw literals make a small section a few microseconds
    ///   quicker to decode (no table to read and build) for a few percent more bytes (measured
    ///   on the depth codec's escape and side sections, BENCHMARKS.md issue 10). zstd calls this
    ///   parameter experimental: a libzstd that refuses it compresses with Huffman as usual.
    /// - Throws: `bufferTooSmall` when `dst` cannot hold the result; `noMemory`.
    /// - Parameter longMatches: at levels below 3, matches of at least 7 bytes and a 2^11-entry
    ///   hash table (zstd's level-1 defaults are 6 and 2^13...2^14): on depth frame version 4's
    ///   payload (nibble pairs and bytes) a third faster, within 0.1 % of the size, decoding no
    ///   slower (measured, BENCHMARKS.md issue 24). Any zstd decoder reads the result.
    /// - Parameter levelOverride: compress at this level instead of the context's (the depth
    ///   codec's archival level also tries the capture level's frame).
    func compress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer,
                  huffman: Bool = true, longMatches: Bool = false, levelOverride: Int32? = nil) throws(CaptureKitError) -> Int {
        let r: Int
        let level = levelOverride ?? self.level
        if let code = Zstd.injected() {
            r = Zstd.result(ofError: code)
        } else if huffman && (longMatches && level < 3 || levelOverride != nil) {
            _ = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
            if longMatches && level < 3 {
                _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, 7)
                _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, 11)
            }
            r = ZSTD_compress2(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        } else if huffman {
            r = ZSTD_compressCCtx(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count, level)
        } else {
            // ZSTD_compressCCtx ignores parameters; ZSTD_compress2 uses them (and ends its session).
            _ = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
            // ZSTD_c_literalCompressionMode = ZSTD_ps_disable (2); both behind ZSTD_STATIC_LINKING_ONLY.
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_experimentalParam5, 2)
            r = ZSTD_compress2(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        }
        // Any other failure of a one-shot compression into a buffer is reported as too small, as before.
        if ZSTD_isError(r) != 0 { throw Zstd.error(r, .bufferTooSmall) }
        return r
    }

    /// Decompresses one zstd frame `src` into exactly `dst.count` bytes.
    /// - Throws: `corrupt` when the frame is malformed or does not decode to exactly that size;
    ///   `noMemory`.
    func decompress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
        let r = Zstd.injected().map(Zstd.result(ofError:))
            ?? ZSTD_decompressDCtx(dctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        if ZSTD_isError(r) != 0 {
            // A too-small destination means the frame decodes to more than expected: corrupt.
            let e = Zstd.error(r, .corrupt)
            throw e.status == .bufferTooSmall ? CaptureKitError(.corrupt, e.message) : e
        }
        guard r == dst.count else { throw CaptureKitError(.corrupt, "zstd frame decodes to \(r) bytes, expected \(dst.count)") }
    }
}
