/// Version 2 of the native frame codec's 16-bit layout: a gradient-adjusted predictor whose
/// decoding is a SIMD prefix sum, nibble pairs for zstd's Huffman stage, fixed-size escapes.
///
/// Why (issue 10, measured on sensor-like depth in BENCHMARKS.md): on noisy depth the left
/// neighbour alone leaves the surface's slope in every residual (a floor seen at 256 x 192 climbs
/// several float16 ulps or millimetres per pixel), and version 1's decoder spent its time in a
/// scalar walk over a variable-length escape list, once to check it and once to apply it.
///
/// Prediction, per row y (P = row y − 1, zero-padded at both ends; all zeros for y = 0):
/// - g(x) = (P[x+1] − P[x−1]) >> 1 (16-bit wrapping difference, arithmetic shift) when both are
///   valid (non-zero), else 0: the row above's horizontal slope, so x̂ = W + g follows planes and
///   edges that run across rows.
/// - At the start of each row the running value becomes P[0] when that is valid (otherwise it
///   keeps the last valid value before it in raster order, 0 at the start of the frame).
/// - A valid pixel's residual is r = x − last − g(x) (mod 2^16), zigzagged to z; `last` becomes x.
///   An invalid pixel (0) has z = 0 and its bit in the mask; `last` stays.
/// Decoding a group of 8 is then d = r + (g masked to valid lanes), a prefix sum, plus the
/// running value, and the invalid lanes zeroed: no per-pixel dependency chain.
///
/// Layout: each row is split into ⌈w/8⌉ groups of 8 lanes (the last one padded with z = 0, mask
/// bit 0). Nibble plane: 4 bytes per group, byte j = lane j's nibble | lane (j + 4)'s << 4, the
/// nibble being z when z < 15, else 15 with z − 15 in the escape section. Escape section: the
/// low bytes of all escapes (in pixel order), then their high bytes (2 × E bytes). Mask: one
/// byte per group, bit k = lane k invalid. Each section is one zstd frame.
extension DepthFrameCodec {
    /// Groups of 8 lanes in a row of `width` pixels.
    @inline(__always)
    static func rowGroups(_ width: Int) -> Int { (width + 7) / 8 }

    /// Lanes (UInt16) of one zero-padded row buffer: 8 before, the row's groups, 16 after.
    @inline(__always)
    static func paddedRowLanes(_ width: Int) -> Int { rowGroups(width) * 8 + 24 }

    /// The top bits (15, 31, 47, 63) of each half of a lane vector as an 8-bit lane mask.
    @inline(__always)
    static func laneBits(_ v: SIMD8<UInt16>) -> Int {
        let w = unsafeBitCast(v & 0x8000, to: SIMD2<UInt64>.self)
        return Int(truncatingIfNeeded: gatherTopBits(w.x) | (gatherTopBits(w.y) << 4))
    }

    /// All-ones lanes where `v` is not zero (the top bit of v | −v, spread by an arithmetic shift).
    @inline(__always)
    static func nonzeroLanes(_ v: SIMD8<UInt16>) -> SIMD8<UInt16> {
        unsafeBitCast(unsafeBitCast(v | (0 &- v), to: SIMD8<Int16>.self) &>> 15, to: SIMD8<UInt16>.self)
    }

    /// The row-above slope g for the 8 lanes at `x` of a padded row `p` (lane x at p[8 + x]).
    @inline(__always)
    static func slope(_ p: UnsafeRawPointer, _ x: Int) -> SIMD8<UInt16> {
        let nw = p.loadUnaligned(fromByteOffset: (7 + x) * 2, as: SIMD8<UInt16>.self)
        let ne = p.loadUnaligned(fromByteOffset: (9 + x) * 2, as: SIMD8<UInt16>.self)
        let half = unsafeBitCast(unsafeBitCast(ne &- nw, to: SIMD8<Int16>.self) &>> 1, to: SIMD8<UInt16>.self)
        return half & nonzeroLanes(nw) & nonzeroLanes(ne)
    }

    /// Lane masks per bit of a mask byte: all ones where the pixel is valid (bit clear).
    @inline(__always)
    static func validLanes(_ bits: UInt8) -> SIMD8<UInt16> {
        let spread = SIMD8<UInt16>(repeating: UInt16(bits)) &* SIMD8<UInt16>(0x8000, 0x4000, 0x2000, 0x1000, 0x800, 0x400, 0x200, 0x100)
        return ~unsafeBitCast(unsafeBitCast(spread, to: SIMD8<Int16>.self) &>> 15, to: SIMD8<UInt16>.self)
    }

    /// `validLanes` of every mask byte (256 × 16 bytes), for the decoder's inner loop.
    nonisolated(unsafe) static let validTable: UnsafeRawPointer = {
        let t = UnsafeMutableRawPointer.allocate(byteCount: 256 * 16, alignment: 16)
        for b in 0..<256 { t.storeBytes(of: validLanes(UInt8(b)), toByteOffset: b * 16, as: SIMD8<UInt16>.self) }
        return UnsafeRawPointer(t)
    }()

    // MARK: encode

    /// Prediction, zigzag, nibbles, escapes, row predictors and mask of a whole frame (version 2).
    /// - Parameters:
    ///   - nibbles: 4 bytes per group (h × ⌈w/8⌉ groups).
    ///   - escapes: at least 2 × src.count bytes; receives the low bytes at 0..<E and the high
    ///     bytes at E..<2E.
    ///   - side: h + groups bytes: one predictor byte per row (0 left, 1 left + slope), then
    ///     the mask (one byte per group).
    ///   - rows: at least `rowScratchBytes(width)` bytes of scratch.
    /// - Returns: (escape count E, invalid pixel count).
    static func pack2(_ src: UnsafeBufferPointer<UInt16>, width w: Int, height h: Int,
                      nibbles: UnsafeMutableRawBufferPointer, escapes: UnsafeMutableRawBufferPointer,
                      side: UnsafeMutableRawBufferPointer, rows: UnsafeMutableRawBufferPointer) -> (Int, Int) {
        let n = src.count
        guard n > 0, n == w * h, let s = src.baseAddress, let np = nibbles.baseAddress, let ep = escapes.baseAddress,
              let sp = side.baseAddress, let rp = rows.baseAddress else { return (0, 0) }
        let hiBase = n  // high bytes are written at n + e, moved after the low bytes at the end
        let gw = rowGroups(w)
        let sr = UnsafeRawPointer(s)
        let lanes = paddedRowLanes(w)
        let prev = rp.bindMemory(to: UInt16.self, capacity: lanes + 2 * gw * 8)
        prev.initialize(repeating: 0, count: lanes)
        let zLeft = UnsafeMutableRawPointer(prev + lanes), zSlope = zLeft + 2 * gw * 8
        let mp = sp + h
        let cap = SIMD8<UInt16>(repeating: 31)
        var last: UInt16 = 0
        var e = 0, invalid = 0
        for y in 0..<h {
            let row = y * w
            if prev[8] != 0 { last = prev[8] }
            // 1. Residuals under both predictors, and a cost for each: Σ min(z, 31).
            var costLeft = SIMD8<UInt16>.zero, costSlope = SIMD8<UInt16>.zero
            for gx in 0..<gw {
                let x = gx * 8
                let count = min(8, w - x)
                let g = slope(UnsafeRawPointer(rp), x)
                var r = SIMD8<UInt16>.zero   // x − last, 0 for invalid lanes
                var valid = SIMD8<UInt16>(repeating: 0xFFFF)
                var bits: UInt8 = 0
                var fast = false
                if x > 0 && count == 8 {
                    let cur = sr.loadUnaligned(fromByteOffset: (row + x) * 2, as: SIMD8<UInt16>.self)
                    let left = sr.loadUnaligned(fromByteOffset: (row + x - 1) * 2, as: SIMD8<UInt16>.self)
                    let bw = unsafeBitCast(nonzeroLanes(cur) & nonzeroLanes(left), to: SIMD2<UInt64>.self)
                    if bw.x & bw.y == ~0 {
                        // Every pixel and its left neighbour valid: the left neighbour is `last`.
                        r = cur &- left
                        last = cur[7]
                        fast = true
                    }
                }
                if !fast {
                    for k in 0..<count {
                        let v = s[row + x + k]
                        if v == 0 {
                            bits |= 1 << UInt8(k)
                            valid[k] = 0
                        } else {
                            r[k] = v &- last
                            last = v
                        }
                    }
                    for k in count..<8 { valid[k] = 0 }  // padding lanes: z = 0 under both predictors
                    invalid &+= bits.nonzeroBitCount
                }
                mp.storeBytes(of: bits, toByteOffset: y * gw + gx, as: UInt8.self)
                let rl = unsafeBitCast(r, to: SIMD8<Int16>.self)
                let rs = unsafeBitCast(r &- (g & valid), to: SIMD8<Int16>.self)
                let zl = unsafeBitCast((rl &<< 1) ^ (rl &>> 15), to: SIMD8<UInt16>.self)
                let zs = unsafeBitCast((rs &<< 1) ^ (rs &>> 15), to: SIMD8<UInt16>.self)
                zLeft.storeBytes(of: zl, toByteOffset: x * 2, as: SIMD8<UInt16>.self)
                zSlope.storeBytes(of: zs, toByteOffset: x * 2, as: SIMD8<UInt16>.self)
                costLeft &+= capped(zl, cap)
                costSlope &+= capped(zs, cap)
            }
            // 2. The cheaper predictor for this row (ties: the slope), then nibbles and escapes.
            let useSlope = costSlope.wrappedSum32 <= costLeft.wrappedSum32
            sp.storeBytes(of: useSlope ? 1 : 0, toByteOffset: y, as: UInt8.self)
            let zr = UnsafeRawPointer(useSlope ? zSlope : zLeft)
            for gx in 0..<gw {
                var z = zr.load(fromByteOffset: gx * 16, as: SIMD8<UInt16>.self)
                // Lanes ≥ 15 escape: top bit of (z + 0x7FF1) | z (16-bit wrapping lanes).
                let escBits = laneBits((z &+ 0x7FF1) | z)
                if escBits != 0 {
                    var lanes = escBits
                    while lanes != 0 {
                        let k = lanes.trailingZeroBitCount
                        lanes &= lanes - 1
                        let v = z[k] &- 15
                        ep.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: e, as: UInt8.self)
                        ep.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: hiBase + e, as: UInt8.self)
                        e += 1
                        z[k] = 15
                    }
                }
                np.storeBytes(of: packNibbles(z).littleEndian, toByteOffset: (y * gw + gx) * 4, as: UInt32.self)
            }
            // This row becomes the next row's P (the padding stays zero).
            (prev + 8).update(from: s + row, count: w)
        }
        if e > 0 { (ep + e).copyMemory(from: ep + hiBase, byteCount: e) }
        return (e, invalid)
    }

    /// Scratch bytes `pack2` needs for rows of `width` pixels.
    static func rowScratchBytes(_ width: Int) -> Int { (paddedRowLanes(width) + 2 * rowGroups(width) * 8) * 2 }

    /// min(z, cap) per lane, for z < 0x8000 + cap (larger lanes count as themselves: a heuristic).
    @inline(__always)
    static func capped(_ z: SIMD8<UInt16>, _ cap: SIMD8<UInt16>) -> SIMD8<UInt16> {
        let below = unsafeBitCast(unsafeBitCast(z &- cap, to: SIMD8<Int16>.self) &>> 15, to: SIMD8<UInt16>.self)
        return (z & below) | (cap & ~below)
    }

    // MARK: decode

    /// Number of nibbles equal to 15 in a nibble plane (= the escapes it needs).
    static func escapeCount(_ nibbles: UnsafeRawBufferPointer) -> Int {
        guard let p = nibbles.baseAddress else { return 0 }
        let count = nibbles.count
        var total = 0, i = 0
        while i + 8 <= count {
            let v = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let t = v & (v >> 1)
            total &+= (t & (t >> 2) & 0x1111_1111_1111_1111).nonzeroBitCount
            i += 8
        }
        while i < count {
            let v = p.load(fromByteOffset: i, as: UInt8.self)
            total &+= (v & (v >> 1) & (v >> 2) & (v >> 3) & 0x11).nonzeroBitCount
            i += 1
        }
        return total
    }

    /// Nibbles + escapes → residuals → slope, prefix sum → masked zeros, row by row (version 2).
    /// The caller guarantees: nibbles hold 4 bytes per group, side h predictor bytes (0 or 1)
    /// then 1 mask byte per group, escapes 2 × E bytes where E = `escapeCount(nibbles)`; `rows`
    /// holds 2 padded rows. Cannot fail.
    static func unpack2(nibbles: UnsafeRawBufferPointer, escapes: UnsafeRawBufferPointer, escapeCount count: Int,
                        side: UnsafeRawBufferPointer, width w: Int, height h: Int, rows: UnsafeMutableRawBufferPointer,
                        into dst: UnsafeMutableBufferPointer<UInt16>) {
        guard w > 0, h > 0, dst.count == w * h, let np = nibbles.baseAddress, let d = dst.baseAddress,
              let rp = rows.baseAddress, let sp = side.baseAddress else { return }
        let ep = escapes.baseAddress
        let gw = rowGroups(w)
        let lanes = paddedRowLanes(w)
        rp.initializeMemory(as: UInt16.self, repeating: 0, count: 2 * lanes)
        var prev = UnsafeMutableRawPointer(rp), cur = rp + 2 * lanes
        let validTable = DepthFrameCodec.validTable
        var last = SIMD8<UInt16>(repeating: 0)  // the running value, in every lane
        var e = 0
        var nibble = np, maskByte = sp + h
        var out = UnsafeMutableRawPointer(d)
        let full = w / 8  // groups stored whole
        for y in 0..<h {
            let p0 = prev.load(fromByteOffset: 16, as: UInt16.self)
            if p0 != 0 { last = SIMD8(repeating: p0) }
            let useSlope = SIMD8<UInt16>(repeating: sp.load(fromByteOffset: y, as: UInt8.self) == 0 ? 0 : 0xFFFF)
            for gx in 0..<gw {
                let p = UInt32(littleEndian: nibble.loadUnaligned(as: UInt32.self))
                nibble += 4
                // Byte j → lane j (low nibble) and lane j + 4 (high nibble).
                let bytes = SIMD4<UInt16>(truncatingIfNeeded: unsafeBitCast(p, to: SIMD4<UInt8>.self))
                var z = SIMD8<UInt16>(lowHalf: bytes & 15, highHalf: bytes &>> 4)
                let flags = p & (p >> 1) & (p >> 2) & (p >> 3) & 0x1111_1111
                if flags != 0, let ep {
                    // Escape lanes in pixel order: bit 8j → lane j (low nibbles), bit 32 + 8j →
                    // lane 4 + j (high nibbles); so lane = bit >> 3.
                    var f = UInt64(flags & 0x0101_0101) | UInt64((flags >> 4) & 0x0101_0101) << 32
                    var lo: UInt64 = 0, hi: UInt64 = 0
                    // Up to two escapes without branches (the common case), then any others.
                    // (The escape section has 16 bytes of slack, so reading one entry past the
                    // last is harmless; its value is masked out.)
                    @inline(__always) func place(_ f: UInt64, _ e: Int, _ take: UInt64) {
                        let lane = UInt64(truncatingIfNeeded: f.trailingZeroBitCount >> 3)
                        let v = (UInt64(ep.load(fromByteOffset: e, as: UInt8.self))
                            | UInt64(ep.load(fromByteOffset: count &+ e, as: UInt8.self)) << 8) & take
                        let shifted = v &<< ((lane & 3) &* 16)
                        let high = 0 &- (lane >> 2)  // all ones for lanes 4...7
                        lo |= shifted & ~high
                        hi |= shifted & high
                    }
                    place(f, e, ~0)
                    f &= f &- 1
                    e &+= 1
                    let second = 0 &- UInt64(truncatingIfNeeded: (f | (0 &- f)) >> 63)  // all ones if f != 0
                    place(f | (1 << 63), e, second)  // f == 0: a harmless lane 7 with value 0
                    e &+= Int(truncatingIfNeeded: second & 1)
                    f &= f &- 1
                    while f != 0 {
                        place(f, e, ~0)
                        f &= f &- 1
                        e &+= 1
                    }
                    z &+= unsafeBitCast(SIMD2<UInt64>(lo, hi), to: SIMD8<UInt16>.self)
                }
                let r = (z &>> 1) ^ (0 &- (z & 1))
                let valid = validTable.load(fromByteOffset: Int(maskByte.load(as: UInt8.self)) &* 16, as: SIMD8<UInt16>.self)
                maskByte += 1
                let dlt = r &+ (slope(UnsafeRawPointer(prev), gx &* 8) & valid & useSlope)
                // Prefix sums of each 4-lane half, the first half's total into the second, + last.
                var v = dlt &+ unsafeBitCast(unsafeBitCast(dlt, to: SIMD2<UInt64>.self) &<< 16, to: SIMD8<UInt16>.self)
                v = v &+ unsafeBitCast(unsafeBitCast(v, to: SIMD2<UInt64>.self) &<< 32, to: SIMD8<UInt16>.self)
                v = v &+ SIMD8<UInt16>(lowHalf: .zero, highHalf: SIMD4(repeating: v[3]))
                v = v &+ last
                let o = v & valid
                cur.storeBytes(of: o, toByteOffset: (8 &+ gx &* 8) &* 2, as: SIMD8<UInt16>.self)
                if gx < full {
                    out.storeBytes(of: o, as: SIMD8<UInt16>.self)
                    out += 16
                    last = SIMD8(repeating: v[7])
                } else {
                    let rest = w &- gx &* 8
                    let dp = out.assumingMemoryBound(to: UInt16.self)
                    for k in 0..<rest { dp[k] = o[k] }
                    out += 2 &* rest
                    last = SIMD8(repeating: v[rest &- 1])
                }
            }
            // Padding lanes past the row must read as invalid (0) for the next row's slope.
            for k in w..<(gw * 8) { cur.storeBytes(of: 0, toByteOffset: (8 + k) * 2, as: UInt16.self) }
            swap(&prev, &cur)
        }
    }
}

extension SIMD8 where Scalar == UInt16 {
    /// The sum of the lanes, without overflow.
    var wrappedSum32: Int {
        let w = unsafeBitCast(self, to: SIMD2<UInt64>.self)
        func sum(_ half: UInt64) -> Int {
            Int(half & 0xFFFF) + Int((half >> 16) & 0xFFFF) + Int((half >> 32) & 0xFFFF) + Int(half >> 48)
        }
        return sum(w.x) + sum(w.y)
    }
}
