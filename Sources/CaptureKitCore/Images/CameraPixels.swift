/// Camera-native pixels (what ARKit's `capturedImage` and most camera APIs deliver) and their
/// conversion to the packed RGB the image encoders take.
///
/// - NV12: a full-resolution 8-bit Y plane and a half-resolution plane of interleaved Cb, Cr bytes
///   (bi-planar 4:2:0). Colour matrix BT.601, as ARKit's own Metal sample converts
///   `capturedImage`; full range (Y, Cb, Cr 0...255, JPEG's YCbCr) or video range (Y 16...235,
///   Cb/Cr 16...240). Odd widths and heights are allowed (the chroma plane then has ceil(w/2) pairs
///   and ceil(h/2) rows).
/// - BGRA: 4 bytes per pixel, B G R A (CoreVideo's 32BGRA); alpha is ignored.
public struct CameraPixels {
    public enum Layout: Int32, Sendable {
        case bgra8 = 5
        case nv12Full = 6
        case nv12Video = 7
    }

    public var layout: Layout
    public var width: Int, height: Int
    /// The Y plane (NV12) or the BGRA pixels, `stride` bytes per row.
    public var luma: UnsafeRawBufferPointer, stride: Int
    /// NV12's CbCr plane, `chromaStride` bytes per row; unused for BGRA.
    public var chroma: UnsafeRawBufferPointer?, chromaStride: Int

    public init(layout: Layout, width: Int, height: Int, luma: UnsafeRawBufferPointer, stride: Int,
                chroma: UnsafeRawBufferPointer? = nil, chromaStride: Int = 0) {
        self.layout = layout; self.width = width; self.height = height
        self.luma = luma; self.stride = stride; self.chroma = chroma; self.chromaStride = chromaStride
    }

    /// The chroma plane's size in pairs and rows.
    public var chromaSize: (width: Int, height: Int) { ((width + 1) / 2, (height + 1) / 2) }

    /// Bytes a packed copy of these planes holds.
    public var packedBytes: Int {
        layout == .bgra8 ? width * height * 4 : width * height + chromaSize.width * 2 * chromaSize.height
    }

    /// Checks sizes, strides and that the buffers hold every row (the caller's pointers are trusted
    /// for the counts given).
    public func validate() throws(CaptureKitError) {
        guard width >= 1, height >= 1, width <= JPEG.maxDimension, height <= JPEG.maxDimension else {
            throw .invalidArgument("image \(width)x\(height) must be 1...\(JPEG.maxDimension) a side")
        }
        func plane(_ b: UnsafeRawBufferPointer?, _ stride: Int, _ row: Int, _ rows: Int, _ name: String) throws(CaptureKitError) {
            guard let b, b.baseAddress != nil else { throw .invalidArgument("\(name) is NULL") }
            guard stride >= row else { throw .invalidArgument("\(name) stride \(stride) is below its row of \(row) bytes") }
            let span = (rows - 1).multipliedReportingOverflow(by: stride)
            guard !span.overflow, span.partialValue <= Int.max - row, b.count >= span.partialValue + row else {
                throw .invalidArgument("\(name) holds \(b.count) bytes; \(rows) rows of stride \(stride) need more")
            }
        }
        switch layout {
        case .bgra8:
            try plane(luma, stride, width * 4, height, "image")
        case .nv12Full, .nv12Video:
            try plane(luma, stride, width, height, "image (Y plane)")
            try plane(chroma, chromaStride, chromaSize.width * 2, chromaSize.height, "image_chroma (CbCr plane)")
        }
    }

    /// Packed copies of the planes (owned by the background writer), in `pool`'s buffers.
    public func copied(into pool: BufferPool) -> OwnedCameraPixels {
        var chromaCopy: [UInt8] = []
        let row = layout == .bgra8 ? width * 4 : width
        let lumaCopy = pool.packed(luma, stride: stride, row: row, rows: height)
        if layout != .bgra8, let c = chroma {
            chromaCopy = pool.packed(c, stride: chromaStride, row: chromaSize.width * 2, rows: chromaSize.height)
        }
        return OwnedCameraPixels(layout: layout, width: width, height: height, luma: lumaCopy, chroma: chromaCopy)
    }

    // MARK: conversion to RGB

    /// Converts to packed RGB8 (`width × 3` bytes a row) into `dst`.
    public func convertToRGB(into dst: UnsafeMutableBufferPointer<UInt8>) {
        guard dst.count >= width * height * 3, let out = dst.baseAddress, let src = luma.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        switch layout {
        case .bgra8:
            for y in 0..<height {
                let s = src + y * stride, d = out + y * width * 3
                for x in 0..<width { d[3 * x] = s[4 * x + 2]; d[3 * x + 1] = s[4 * x + 1]; d[3 * x + 2] = s[4 * x] }
            }
        case .nv12Full, .nv12Video:
            guard let c = chroma?.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            let m = YCbCrMatrix(fullRange: layout == .nv12Full)
            for y in 0..<height {
                m.row(y: src + y * stride, cbcr: c + (y / 2) * chromaStride, rgb: out + y * width * 3, width: width)
            }
        }
    }

    /// A new packed RGB8 buffer.
    public func rgb() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height * 3) { dst, n in
            convertToRGB(into: dst)
            n = width * height * 3
        }
    }
}

/// Camera pixels copied into arrays the dataset owns (for the background writer).
public struct OwnedCameraPixels: Sendable {
    public var layout: CameraPixels.Layout
    public var width: Int, height: Int
    public var luma: [UInt8], chroma: [UInt8]
    public var bytes: Int { luma.count + chroma.count }

    /// Runs `body` with a borrowed view of these planes.
    public func with<T>(_ body: (CameraPixels) throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
        try luma.withUnsafeBufferPointer { (l) throws(CaptureKitError) -> T in
            try chroma.withUnsafeBufferPointer { (c) throws(CaptureKitError) -> T in
                let row = layout == .bgra8 ? width * 4 : width
                return try body(CameraPixels(layout: layout, width: width, height: height, luma: UnsafeRawBufferPointer(l), stride: row,
                                             chroma: layout == .bgra8 ? nil : UnsafeRawBufferPointer(c), chromaStride: (width + 1) / 2 * 2))
            }
        }
    }
}

/// BT.601 Y'CbCr → R'G'B' in 16-bit fixed point, 8 pixels at a time.
struct YCbCrMatrix {
    // R = ys·(Y − y0) + rv·(Cr − 128); G = ys·(Y − y0) − gu·(Cb − 128) − gv·(Cr − 128); B = ys·(Y − y0) + bu·(Cb − 128)
    let y0: Int32, ys: Int32, rv: Int32, gu: Int32, gv: Int32, bu: Int32

    init(fullRange: Bool) {
        if fullRange {  // JPEG / JFIF: 1.402, 0.344136, 0.714136, 1.772
            y0 = 0; ys = 65536; rv = 91881; gu = 22554; gv = 46802; bu = 116130
        } else {        // studio swing: 255/219, 1.596027, 0.391762, 0.812968, 2.017232
            y0 = 16; ys = 76309; rv = 104597; gu = 25675; gv = 53279; bu = 132201
        }
    }

    @inline(__always)
    func row(y: UnsafePointer<UInt8>, cbcr: UnsafePointer<UInt8>, rgb: UnsafeMutablePointer<UInt8>, width: Int) {
        let half = SIMD8<Int32>(repeating: 32768), c128 = SIMD8<Int32>(repeating: 128)
        let zero = SIMD8<Int32>(repeating: 0), top = SIMD8<Int32>(repeating: 255)
        var x = 0
        while x + 8 <= width {
            let yv = (SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(y + x).loadUnaligned(as: SIMD8<UInt8>.self)) &- y0) &* ys &+ half
            let pairs = SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(cbcr + x).loadUnaligned(as: SIMD8<UInt8>.self)) &- c128
            let cb4 = pairs.evenHalf, cr4 = pairs.oddHalf
            let cb = SIMD8(cb4[0], cb4[0], cb4[1], cb4[1], cb4[2], cb4[2], cb4[3], cb4[3])
            let cr = SIMD8(cr4[0], cr4[0], cr4[1], cr4[1], cr4[2], cr4[2], cr4[3], cr4[3])
            var r = (yv &+ rv &* cr) &>> 16
            var g = (yv &- gu &* cb &- gv &* cr) &>> 16
            var b = (yv &+ bu &* cb) &>> 16
            r.replace(with: zero, where: r .< zero); r.replace(with: top, where: r .> top)
            g.replace(with: zero, where: g .< zero); g.replace(with: top, where: g .> top)
            b.replace(with: zero, where: b .< zero); b.replace(with: top, where: b .> top)
            let d = rgb + 3 * x
            for i in 0..<8 {
                d[3 * i] = UInt8(truncatingIfNeeded: r[i]); d[3 * i + 1] = UInt8(truncatingIfNeeded: g[i]); d[3 * i + 2] = UInt8(truncatingIfNeeded: b[i])
            }
            x += 8
        }
        while x < width {  // the tail, scalar (same arithmetic)
            let yy = (Int32(y[x]) - y0) * ys + 32768
            let cb = Int32(cbcr[x & ~1]) - 128, cr = Int32(cbcr[(x & ~1) + 1]) - 128
            rgb[3 * x] = YCbCrMatrix.clamp((yy + rv * cr) >> 16)
            rgb[3 * x + 1] = YCbCrMatrix.clamp((yy - gu * cb - gv * cr) >> 16)
            rgb[3 * x + 2] = YCbCrMatrix.clamp((yy + bu * cb) >> 16)
            x += 1
        }
    }

    @inline(__always)
    static func clamp(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(255, max(0, v))) }
}

/// Downscaled copies (`images_2`, `images_4`, `images_8`, as nerfstudio's processing writes them):
/// each halving averages 2×2 blocks (rounded), so a factor f averages f×f blocks in log2(f)
/// steps; sizes are floor(side / 2) each step (an odd last row or column is dropped).
public enum Downscale {
    /// Halves a packed 8-bit image of `channels` channels.
    public static func half(_ src: [UInt8], width: Int, height: Int, channels: Int) -> (pixels: [UInt8], width: Int, height: Int) {
        let w = width / 2, h = height / 2, rowIn = width * channels, rowOut = w * channels
        guard w >= 1, h >= 1 else { return ([], 0, 0) }
        let out = [UInt8](unsafeUninitializedCapacity: rowOut * h) { dst, n in
            src.withUnsafeBufferPointer { s in
                guard let sp = s.baseAddress, let dp = dst.baseAddress else { return }
                for y in 0..<h {
                    let a = sp + 2 * y * rowIn, b = a + rowIn, d = dp + y * rowOut
                    for x in 0..<w {
                        for c in 0..<channels {
                            let i = 2 * x * channels + c
                            let sum = UInt16(a[i]) + UInt16(a[i + channels]) + UInt16(b[i]) + UInt16(b[i + channels]) + 2
                            d[x * channels + c] = UInt8(truncatingIfNeeded: sum >> 2)
                        }
                    }
                }
            }
            n = rowOut * h
        }
        return (out, w, h)
    }
}

/// An image a caller handed over instead of lending it (`ck_session_frame.image_release`): the
/// library reads the caller's pixels in place (no copy) until `release()`, which runs the
/// caller's callback exactly once. Whoever holds the lease last releases it: the writer right
/// after encoding the image, or, on every other path (no capture, a dropped capture, an error, a
/// queued write discarded after an earlier failure), the thread dropping the last reference.
public final class ImageLease: @unchecked Sendable {
    private let lock = Lock()
    private var callback: (() -> Void)?

    public init(_ callback: @escaping () -> Void) { self.callback = callback }

    /// Runs the callback if it has not run yet (never twice).
    public func release() {
        let c = lock.withLock { () -> (() -> Void)? in
            let c = callback
            callback = nil
            return c
        }
        c?()
    }

    deinit { release() }
}
