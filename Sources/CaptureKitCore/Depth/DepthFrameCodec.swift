/// What a depth-like map's values are.
public enum PixelKind: UInt32, Sendable, CaseIterable {
    /// IEEE binary16 metres, 0 = invalid (phone LiDAR, MultiScan).
    case float16Metres = 1
    /// Unsigned 16-bit millimetres, 0 = invalid (RGB-D cameras, depth PNGs).
    case millimetres = 2
    /// Unsigned 8-bit confidence (0/1/2 for ARKit; any byte values are kept).
    case confidence = 3

    /// Bytes per pixel.
    public var bytesPerPixel: Int { self == .confidence ? 1 : 2 }
}

/// The native frame codec: lossless, for 16-bit depth (float16 bits or millimetres) and 8-bit maps.
///
/// 16-bit frames: pixels in raster order are predicted by the last valid (non-zero) pixel before
/// them; residuals are zigzag-coded, split into a low-byte and a high-byte plane, and each plane is
/// compressed with zstd; invalid pixels (0) are stored as a bit mask (also zstd), and their
/// residual is 0, so decoding is a running sum. 8-bit frames are one zstd frame.
///
/// Payload layout (little-endian): `u8 codec (1)`, `u8 kind`, `u16 flags (bit 0: mask present)`,
/// `u32 low-plane size`, `u32 high-plane size`, `u32 mask size`, then the zstd frames in that order.
/// Decoding treats the payload as hostile and fails with `corrupt`, never reading outside it.
public final class DepthFrameCodec {
    public static let headerSize = 16
    public static let codecID: UInt8 = 1
    let zstd: ZstdContext
    private let loBuf = ScratchBuffer(), hiBuf = ScratchBuffer(), maskBuf = ScratchBuffer()

    /// - Parameter level: zstd level (1 is the measured sweet spot; see BENCHMARKS.md).
    public init(level: Int32 = 1) throws(CaptureKitError) {
        zstd = try ZstdContext(level: level)
    }

    /// Largest payload for a `width × height` frame of `kind`.
    public static func bound(pixels n: Int, kind: PixelKind) -> Int {
        if kind == .confidence { return headerSize + ZstdContext.bound(n) }
        return headerSize + 2 * ZstdContext.bound(n) + ZstdContext.bound((n + 7) / 8)
    }


    /// Encodes a 16-bit frame (`kind` float16Metres or millimetres) into `dst`; returns the size.
    /// - Throws: `bufferTooSmall` if `dst` is smaller than needed (use `bound`).
    public func encode(_ src: UnsafeBufferPointer<UInt16>, kind: PixelKind,
                       into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let n = src.count
        let lo = loBuf.reserve(n), hi = hiBuf.reserve(n), mask = maskBuf.reserve((n + 7) / 8)
        let invalid = DepthFrameCodec.predict(src, lo.bindMemory(to: UInt8.self), hi.bindMemory(to: UInt8.self),
                                              mask.bindMemory(to: UInt8.self))
        guard dst.count >= DepthFrameCodec.headerSize else { throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the 16-byte header") }
        var offset = DepthFrameCodec.headerSize
        func put(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) -> Int {
            let out = UnsafeMutableRawBufferPointer(rebasing: dst[offset...])
            let size = try zstd.compress(bytes, into: out)
            offset += size
            return size
        }
        let loSize = try put(UnsafeRawBufferPointer(lo))
        let hiSize = try put(UnsafeRawBufferPointer(hi))
        let maskSize = invalid > 0 ? try put(UnsafeRawBufferPointer(mask)) : 0
        DepthFrameCodec.writeHeader(dst, kind: kind, flags: invalid > 0 ? 1 : 0, loSize, hiSize, maskSize)
        return offset
    }

    /// Encodes an 8-bit frame (confidence).
    public func encode(bytes src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        guard dst.count >= DepthFrameCodec.headerSize else { throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the 16-byte header") }
        let size = try zstd.compress(src, into: UnsafeMutableRawBufferPointer(rebasing: dst[DepthFrameCodec.headerSize...]))
        DepthFrameCodec.writeHeader(dst, kind: .confidence, flags: 0, size, 0, 0)
        return DepthFrameCodec.headerSize + size
    }

    static func writeHeader(_ dst: UnsafeMutableRawBufferPointer, kind: PixelKind, flags: UInt16, _ a: Int, _ b: Int, _ c: Int) {
        dst[0] = codecID
        dst[1] = UInt8(kind.rawValue)
        dst.storeBytes(of: flags.littleEndian, toByteOffset: 2, as: UInt16.self)
        dst.storeBytes(of: UInt32(truncatingIfNeeded: a).littleEndian, toByteOffset: 4, as: UInt32.self)
        dst.storeBytes(of: UInt32(truncatingIfNeeded: b).littleEndian, toByteOffset: 8, as: UInt32.self)
        dst.storeBytes(of: UInt32(truncatingIfNeeded: c).littleEndian, toByteOffset: 12, as: UInt32.self)
    }

    /// Residual planes and the invalid mask; returns the number of invalid pixels.
    ///
    /// Fast path: eight pixels at a time when neither they nor their left neighbours are invalid
    /// (then "last valid" is simply the left neighbour); groups touching an invalid pixel take the
    /// scalar path, which carries the last valid value across the gap.
    public static func predict(_ src: UnsafeBufferPointer<UInt16>, _ lo: UnsafeMutableBufferPointer<UInt8>,
                               _ hi: UnsafeMutableBufferPointer<UInt8>, _ mask: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let n = src.count
        guard n > 0, let s = src.baseAddress, let lp = lo.baseAddress, let hp = hi.baseAddress, let mp = mask.baseAddress else { return 0 }
        let sr = UnsafeRawPointer(s)
        var last: UInt16 = 0   // last valid value before pixel i
        var invalid = 0
        var i = 0
        while i < n {
            if i + 8 <= n && i > 0 {
                let x = sr.loadUnaligned(fromByteOffset: i * 2, as: SIMD8<UInt16>.self)
                let prev = sr.loadUnaligned(fromByteOffset: i * 2 - 2, as: SIMD8<UInt16>.self)
                // Any zero lane in x or prev (SWAR: SIMD .== on UInt16 lanes compiles to a lane loop).
                let xw = unsafeBitCast(x, to: SIMD2<UInt64>.self), pw = unsafeBitCast(prev, to: SIMD2<UInt64>.self)
                if !(hasZeroLane(xw.x) || hasZeroLane(xw.y) || hasZeroLane(pw.x) || hasZeroLane(pw.y)) {
                    let r = unsafeBitCast(x &- prev, to: SIMD8<Int16>.self)
                    let z = unsafeBitCast((r &<< 1) ^ (r &>> 15), to: SIMD8<UInt16>.self)
                    let bytes = unsafeBitCast(z, to: SIMD16<UInt8>.self)  // little-endian: low byte first
                    UnsafeMutableRawPointer(lp + i).storeBytes(of: bytes.evenHalf, as: SIMD8<UInt8>.self)
                    UnsafeMutableRawPointer(hp + i).storeBytes(of: bytes.oddHalf, as: SIMD8<UInt8>.self)
                    mp[i >> 3] = 0
                    last = x[7]
                    i += 8
                    continue
                }
            }
            // Scalar group of up to 8 pixels (mask byte i >> 3 is complete after it: i is a multiple of 8).
            var bits: UInt8 = 0
            let end = min(i + 8, n)
            var k: UInt8 = 0
            while i < end {
                let x = s[i]
                if x == 0 {
                    lp[i] = 0; hp[i] = 0
                    bits |= 1 << k
                    invalid += 1
                } else {
                    let r = Int16(bitPattern: x &- last)
                    let z = UInt16(bitPattern: (r &<< 1) ^ (r >> 15))
                    lp[i] = UInt8(truncatingIfNeeded: z); hp[i] = UInt8(truncatingIfNeeded: z >> 8)
                    last = x
                }
                i += 1; k += 1
            }
            mp[(i - 1) >> 3] = bits
        }
        return invalid
    }

    /// True if any 16-bit lane of `w` is zero.
    @inline(__always)
    static func hasZeroLane(_ w: UInt64) -> Bool {
        (w &- 0x0001_0001_0001_0001) & ~w & 0x8000_8000_8000_8000 != 0
    }

    /// Reads and checks a payload header against the expected kind and pixel count.
    static func readHeader(_ src: UnsafeRawBufferPointer, kind: PixelKind) throws(CaptureKitError) -> (flags: UInt16, sizes: (Int, Int, Int)) {
        guard src.count >= headerSize else { throw .init(.corrupt, "frame payload of \(src.count) bytes is shorter than its 16-byte header") }
        guard src[0] == codecID else { throw .init(.corrupt, "unknown frame codec \(src[0])") }
        guard src[1] == UInt8(kind.rawValue) else { throw .init(.corrupt, "frame holds pixel kind \(src[1]), expected \(kind.rawValue)") }
        let flags = UInt16(littleEndian: src.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let a = Int(UInt32(littleEndian: src.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let b = Int(UInt32(littleEndian: src.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let c = Int(UInt32(littleEndian: src.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        guard flags & ~1 == 0, headerSize + a + b + c == src.count, (c > 0) == (flags & 1 == 1) else {
            throw .init(.corrupt, "frame header sizes (\(a), \(b), \(c)) or flags (\(flags)) do not match the \(src.count)-byte payload")
        }
        return (flags, (a, b, c))
    }

    /// Decodes a 16-bit payload into `dst` (its count is the frame's pixel count).
    /// - Throws: `corrupt` for any malformed payload.
    public func decode(_ src: UnsafeRawBufferPointer, kind: PixelKind, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) {
        let n = dst.count
        let (flags, (a, b, c)) = try DepthFrameCodec.readHeader(src, kind: kind)
        let lo = loBuf.reserve(n), hi = hiBuf.reserve(n), mask = maskBuf.reserve((n + 7) / 8)
        let h = DepthFrameCodec.headerSize
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[h..<(h + a)]), into: lo)
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[(h + a)..<(h + a + b)]), into: hi)
        let hasMask = flags & 1 == 1
        if hasMask {
            try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[(h + a + b)..<(h + a + b + c)]), into: mask)
        }
        DepthFrameCodec.unpredict(UnsafeBufferPointer(lo.bindMemory(to: UInt8.self)), UnsafeBufferPointer(hi.bindMemory(to: UInt8.self)),
                                  hasMask ? UnsafeBufferPointer(mask.bindMemory(to: UInt8.self)) : nil, dst)
    }

    /// Running sum of the unzigzagged residuals, eight pixels at a time: the two 64-bit halves of
    /// a `SIMD8<UInt16>` are prefix-summed as 4-lane SWAR words (wrapping 16-bit lanes), then the
    /// carry is added; invalid pixels (mask bits) are zeroed afterwards.
    static func unpredict(_ lo: UnsafeBufferPointer<UInt8>, _ hi: UnsafeBufferPointer<UInt8>,
                          _ mask: UnsafeBufferPointer<UInt8>?, _ dst: UnsafeMutableBufferPointer<UInt16>) {
        let n = dst.count
        guard n > 0, let lp = lo.baseAddress, let hp = hi.baseAddress, let d = dst.baseAddress else { return }
        let dr = UnsafeMutableRawPointer(d)
        var last: UInt16 = 0
        let ones: UInt64 = 0x0001_0001_0001_0001
        var i = 0
        while i + 8 <= n {
            let l = UnsafeRawPointer(lp + i).loadUnaligned(as: SIMD8<UInt8>.self)
            let h = UnsafeRawPointer(hp + i).loadUnaligned(as: SIMD8<UInt8>.self)
            let z = unsafeBitCast(SIMD16<UInt8>(l[0], h[0], l[1], h[1], l[2], h[2], l[3], h[3],
                                                l[4], h[4], l[5], h[5], l[6], h[6], l[7], h[7]), to: SIMD8<UInt16>.self)
            let r = (z &>> 1) ^ (0 &- (z & 1))
            // In-lane prefix sums of each 4-lane half (the 64-bit shifts move whole lanes; the
            // adds are 16-bit, so each lane wraps on its own).
            var v = r &+ unsafeBitCast(unsafeBitCast(r, to: SIMD2<UInt64>.self) &<< 16, to: SIMD8<UInt16>.self)
            v = v &+ unsafeBitCast(unsafeBitCast(v, to: SIMD2<UInt64>.self) &<< 32, to: SIMD8<UInt16>.self)
            // Carry the first half's total into the second half, then the previous group's last value.
            let w = unsafeBitCast(v, to: SIMD2<UInt64>.self)
            v = v &+ unsafeBitCast(SIMD2<UInt64>(0, (w.x &>> 48) &* ones), to: SIMD8<UInt16>.self)
            v = v &+ SIMD8<UInt16>(repeating: last)
            last = v[7]
            dr.storeBytes(of: v, toByteOffset: i * 2, as: SIMD8<UInt16>.self)
            i += 8
        }
        while i < n {
            let z = UInt16(lp[i]) | UInt16(hp[i]) << 8
            last = last &+ ((z >> 1) ^ (0 &- (z & 1)))
            d[i] = last
            i += 1
        }
        if let mask, let mp = mask.baseAddress {
            for byte in 0..<((n + 7) >> 3) where mp[byte] != 0 {
                let bits = mp[byte]
                for k in 0..<8 where bits & (1 << UInt8(k)) != 0 && byte * 8 + k < n { d[byte * 8 + k] = 0 }
            }
        }
    }

    /// Decodes an 8-bit payload into `dst`.
    public func decode(bytes src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
        let (_, (a, b, c)) = try DepthFrameCodec.readHeader(src, kind: .confidence)
        guard b == 0, c == 0 else { throw .init(.corrupt, "an 8-bit frame has one plane") }
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[DepthFrameCodec.headerSize...]), into: dst)
        _ = a
    }
}
