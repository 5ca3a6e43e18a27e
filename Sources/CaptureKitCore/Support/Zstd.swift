import CZstd

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
        guard let c = ZSTD_createCCtx() else { throw CaptureKitError(.noMemory, "zstd: cannot create a compression context") }
        guard let d = ZSTD_createDCtx() else {
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
    /// - Throws: `bufferTooSmall` when `dst` cannot hold the result.
    func compress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let r = ZSTD_compressCCtx(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count, level)
        if ZSTD_isError(r) != 0 {
            throw CaptureKitError(.bufferTooSmall, "zstd: \(String(cString: ZSTD_getErrorName(r)))")
        }
        return r
    }

    /// Decompresses one zstd frame `src` into exactly `dst.count` bytes.
    /// - Throws: `corrupt` when the frame is malformed or does not decode to exactly that size.
    func decompress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
        let r = ZSTD_decompressDCtx(dctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        if ZSTD_isError(r) != 0 {
            throw CaptureKitError(.corrupt, "zstd: \(String(cString: ZSTD_getErrorName(r)))")
        }
        guard r == dst.count else { throw CaptureKitError(.corrupt, "zstd frame decodes to \(r) bytes, expected \(dst.count)") }
    }
}
