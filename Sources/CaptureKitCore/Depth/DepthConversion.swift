/// Conversions between float32 metres, float16 metres and uint16 millimetres for depth maps.
///
/// Depth rules (the same for every conversion, tested bit-exactly):
/// - 0 means invalid (no return). NaN, negative values (and −0), +inf and values that do not fit
///   the target type become 0.
/// - float32 → float16 rounds to nearest, ties to even, exactly like `Float16(x)`; a value whose
///   rounding would overflow (≥ 65520 m) is out of range, so 0. Positive values below the smallest
///   float16 subnormal round as IEEE does (to 0 or to the smallest subnormal).
/// - float32/float16 → uint16 mm rounds to nearest (ties away from zero) after ×1000; a result
///   above 65535 mm (≈ 65.5 m) is out of range, so 0.
/// - uint16 mm → float32 is value / 1000 (correctly rounded); → float16 goes through float32.
///
/// The float32 → float16 conversion is branchless `SIMD4<UInt32>` bit arithmetic (subnormals via
/// the float-add "magic number" trick), bit-exact against `Float16(x)` for every input after the
/// invalid rule; it runs at baseline x86-64 (SSE2) speed without F16C.
public enum DepthConversion {
    /// Largest float16 depth, metres.
    public static let maxFloat16: Float = 65504
    /// Largest millimetre depth.
    public static let maxMillimetres: UInt16 = 65535

    // MARK: float32 → float16

    /// Scalar float32 → float16 bits under the depth rules (reference semantics).
    @inline(__always)
    public static func float16Bits(_ x: Float) -> UInt16 {
        // x > 0 is false for NaN, −0, negatives; x < 65520 excludes +inf and overflow.
        guard x > 0, x < 65520 else { return 0 }
        return f32ToF16Positive(SIMD4<UInt32>(repeating: x.bitPattern))[0].lowHalf
    }

    /// Four positive finite floats below 65520 (as bits) → float16 bits in the low halves.
    @inline(__always)
    static func f32ToF16Positive(_ bits: SIMD4<UInt32>) -> SIMD4<UInt32> {
        // Normal results: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
        let mantOdd = (bits &>> 13) & 1
        let normal = (bits &+ 0xC800_0FFF &+ mantOdd) &>> 13  // (bits − (112 << 23) + 0xFFF + odd) >> 13
        // Subnormal results (x < 2^−14): adding 0.5 (as float) aligns the bits so that the FPU's
        // round-to-nearest-even does the rounding; the result's low bits are the float16 bits.
        let magic = Float(0.5)
        let sub = unsafeBitCast(bits, to: SIMD4<Float>.self) + magic
        let subBits = unsafeBitCast(sub, to: SIMD4<UInt32>.self) &- magic.bitPattern
        let isSub = bits .< 0x3880_0000  // 2^−14
        return normal.replacing(with: subBits, where: isSub)
    }

    /// Converts float32 metres to float16 bits under the depth rules. `dst.count` must equal `src.count`.
    public static func toFloat16(_ src: UnsafeBufferPointer<Float>, _ dst: UnsafeMutableBufferPointer<UInt16>) {
        let n = min(src.count, dst.count)
        guard n > 0, let s = src.baseAddress, let d = dst.baseAddress else { return }
        let sr = UnsafeRawPointer(s), dr = UnsafeMutableRawPointer(d)
        var i = 0
        while i + 8 <= n {
            let a = sr.loadUnaligned(fromByteOffset: i * 4, as: SIMD4<UInt32>.self)
            let b = sr.loadUnaligned(fromByteOffset: i * 4 + 16, as: SIMD4<UInt32>.self)
            let ha = convert4(a), hb = convert4(b)
            let packed = SIMD8<UInt16>(truncatingIfNeeded: SIMD8<UInt32>(lowHalf: ha, highHalf: hb))
            dr.storeBytes(of: packed, toByteOffset: i * 2, as: SIMD8<UInt16>.self)
            i += 8
        }
        while i < n {
            d[i] = float16Bits(s[i])
            i += 1
        }
    }

    /// Four float32 bit patterns → float16 bits (low halves), invalid rule applied.
    @inline(__always)
    static func convert4(_ bits: SIMD4<UInt32>) -> SIMD4<UInt32> {
        // Valid ⇔ sign clear and 0 < x < 65520 (as integers: positive floats order like their bits).
        let valid = (bits .> 0) .& (bits .< 0x477F_F000)
        return SIMD4<UInt32>(repeating: 0).replacing(with: f32ToF16Positive(bits), where: valid)
    }

    // MARK: float16 → float32

    /// Scalar float16 bits → float32 metres (exact; NaN/inf/negative float16 values decode to 0).
    @inline(__always)
    public static func float32(fromFloat16 h: UInt16) -> Float {
        Float(bitPattern: f16ToF32(SIMD4<UInt32>(repeating: UInt32(h)))[0])
    }

    /// Four float16 bit patterns → float32 bits; anything but a positive finite value (or +0) → 0.
    @inline(__always)
    static func f16ToF32(_ h: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let exp = h & 0x7C00
        let normal = (h &<< 13) &+ 0x3800_0000  // rebias 15 → 127
        // Subnormal: mantissa × 2^−24, via the magic float 2^−14 (bits 0x38800000) trick.
        let subF = unsafeBitCast((h &<< 13) &+ 0x3880_0000, to: SIMD4<Float>.self) - Float(bitPattern: 0x3880_0000)
        let sub = unsafeBitCast(subF, to: SIMD4<UInt32>.self)
        var out = normal.replacing(with: sub, where: exp .== 0)
        let valid = (h .< 0x7C00)  // sign clear, not inf/NaN
        out = SIMD4<UInt32>(repeating: 0).replacing(with: out, where: valid)
        return out
    }

    /// Converts float16 bits to float32 metres. `dst.count` must equal `src.count`.
    public static func toFloat32(_ src: UnsafeBufferPointer<UInt16>, _ dst: UnsafeMutableBufferPointer<Float>) {
        let n = min(src.count, dst.count)
        guard n > 0, let s = src.baseAddress, let d = dst.baseAddress else { return }
        let sr = UnsafeRawPointer(s), dr = UnsafeMutableRawPointer(d)
        var i = 0
        while i + 8 <= n {
            let h = SIMD8<UInt32>(truncatingIfNeeded: sr.loadUnaligned(fromByteOffset: i * 2, as: SIMD8<UInt16>.self))
            dr.storeBytes(of: f16ToF32(h.lowHalf), toByteOffset: i * 4, as: SIMD4<UInt32>.self)
            dr.storeBytes(of: f16ToF32(h.highHalf), toByteOffset: i * 4 + 16, as: SIMD4<UInt32>.self)
            i += 8
        }
        while i < n {
            d[i] = float32(fromFloat16: s[i])
            i += 1
        }
    }

    // MARK: millimetres

    /// float32 metres → uint16 mm (round half away from zero; invalid or > 65535 mm → 0).
    @inline(__always)
    public static func millimetres(_ x: Float) -> UInt16 {
        let mm = (Double(x) * 1000).rounded(.toNearestOrAwayFromZero)
        guard x > 0, mm <= 65535 else { return 0 }  // false for NaN
        return UInt16(mm)
    }

    /// Converts float32 metres to uint16 millimetres.
    public static func toMillimetres(_ src: UnsafeBufferPointer<Float>, _ dst: UnsafeMutableBufferPointer<UInt16>) {
        let n = min(src.count, dst.count)
        for i in 0..<n { dst[i] = millimetres(src[i]) }
    }

    /// Converts float16 bits to uint16 millimetres.
    public static func toMillimetres(float16 src: UnsafeBufferPointer<UInt16>, _ dst: UnsafeMutableBufferPointer<UInt16>) {
        let n = min(src.count, dst.count)
        for i in 0..<n { dst[i] = millimetres(float32(fromFloat16: src[i])) }
    }

    /// uint16 millimetres → float32 metres.
    public static func fromMillimetres(_ src: UnsafeBufferPointer<UInt16>, _ dst: UnsafeMutableBufferPointer<Float>) {
        let n = min(src.count, dst.count)
        for i in 0..<n { dst[i] = metres(millimetres: src[i]) }
    }

    /// One millimetre sample in metres (the nearest float32 to mm / 1000).
    @inline(__always) public static func metres(millimetres mm: UInt16) -> Float { Float(Double(mm) / 1000) }
}

extension UInt32 {
    @inline(__always) var lowHalf: UInt16 { UInt16(truncatingIfNeeded: self) }
}
