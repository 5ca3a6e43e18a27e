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
/// byte per group, bit k = lane k invalid. Each section is one zstd frame; the encoder gives the
/// escape and side sections raw literals unless Huffman saves 1/64 of the frame
/// (`compressPreferringRaw`), which any zstd decoder reads the same.
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

    /// Scratch bytes `unpack2` needs for rows of `width` pixels: two padded rows, the row's
    /// residuals (8 lanes per group), its escape lane masks (whole 64-bit words) and the escape
    /// positions (one UInt16 per lane, + 8 written past the last).
    static func unpackScratchBytes(_ width: Int) -> Int {
        let gw = rowGroups(width)
        return 2 * paddedRowLanes(width) * 2 + gw * 16 + escapeMaskBytes(width) + (gw * 8 + 8) * 2
    }

    /// Bytes of one row's escape lane masks: one per group, padded to whole 64-bit words.
    @inline(__always)
    static func escapeMaskBytes(_ width: Int) -> Int { (rowGroups(width) + 7) / 8 * 8 }

    /// The escape flags of a group's nibble word (bit 8j + 4i set when lane j + 4i holds nibble
    /// 15, as `p & p >> 1 & p >> 2 & p >> 3 & 0x1111_1111` gives them) as a lane mask, bit k =
    /// lane k: one multiply moves bit 8j to bit 24 + j and bit 8j + 4 to bit 28 + j (shifts
    /// 24 − 7j; no other product lands in bits 24...31 and no two collide, so nothing carries).
    @inline(__always)
    static func escapeLanes(_ flags: UInt32) -> UInt8 {
        UInt8(truncatingIfNeeded: (UInt64(flags) &* 0x0102_0408) &>> 24)
    }

    /// Nibbles + escapes → residuals → slope, prefix sum → masked zeros, row by row (version 2).
    /// The caller guarantees: nibbles hold 4 bytes per group, side h predictor bytes (0 or 1)
    /// then 1 mask byte per group, escapes 2 × E bytes where E = `escapeCount(nibbles)`; `rows`
    /// holds `unpackScratchBytes(w)` bytes. Cannot fail.
    ///
    /// Each row runs in three branch-free passes (the escapes' places are data: a branch per
    /// group on "has an escape" mispredicted on a quarter of the groups): the nibbles become
    /// residual lanes in a row buffer, with one escape lane mask per group; the masks, read as
    /// 64-bit words, become a list of escape positions in pixel order (8 written per word
    /// whatever its count, the next word's overwriting the extra ones); each escape is stored at
    /// its position. Then the prefix sums, as before, read the residuals from the row buffer.
    static func unpack2(nibbles: UnsafeRawBufferPointer, escapes: UnsafeRawBufferPointer, escapeCount count: Int,
                        side: UnsafeRawBufferPointer, width w: Int, height h: Int, rows: UnsafeMutableRawBufferPointer,
                        into dst: UnsafeMutableBufferPointer<UInt16>) {
        let gw = rowGroups(w)
        let lanes = paddedRowLanes(w)
        let maskBytes = escapeMaskBytes(w)
        guard w > 0, h > 0, dst.count == w * h, nibbles.count == h * gw * 4, rows.count >= unpackScratchBytes(w),
              let np = nibbles.baseAddress, let d = dst.baseAddress, let rp = rows.baseAddress, let sp = side.baseAddress
        else { return }
        let ep = escapes.baseAddress
        rp.initializeMemory(as: UInt16.self, repeating: 0, count: 2 * lanes)
        var prev = UnsafeMutableRawPointer(rp), cur = rp + 2 * lanes
        let zRow = rp + 4 * lanes                       // gw × 16 bytes, 16-byte aligned
        let maskRow = zRow + gw * 16                    // maskBytes
        let positions = (maskRow + maskBytes).bindMemory(to: UInt16.self, capacity: gw * 8 + 8)
        maskRow.initializeMemory(as: UInt8.self, repeating: 0, count: maskBytes)  // padding stays 0
        let validTable = DepthFrameCodec.validTable
        var last = SIMD8<UInt16>(repeating: 0)  // the running value, in every lane
        var e = 0
        var nibble = np, maskByte = sp + h
        var out = UnsafeMutableRawPointer(d)
        let full = w / 8  // groups stored whole
        for y in 0..<h {
            // 1. Nibbles → residual lanes (zigzagged; 15 where escaped) and escape lane masks,
            // two groups (8 bytes) at a time: byte j → lane j (low nibble) and lane j + 4 (high).
            var gx = 0
            while gx &+ 2 <= gw {
                let p = UInt64(littleEndian: nibble.loadUnaligned(fromByteOffset: gx &* 4, as: UInt64.self))
                let lo = p & 0x0F0F_0F0F_0F0F_0F0F, hi = (p &>> 4) & 0x0F0F_0F0F_0F0F_0F0F
                let g0 = (lo & 0xFFFF_FFFF) | (hi &<< 32), g1 = (lo &>> 32) | (hi & 0xFFFF_FFFF_0000_0000)
                zRow.storeBytes(of: SIMD8<UInt16>(truncatingIfNeeded: unsafeBitCast(g0, to: SIMD8<UInt8>.self)),
                                toByteOffset: gx &* 16, as: SIMD8<UInt16>.self)
                zRow.storeBytes(of: SIMD8<UInt16>(truncatingIfNeeded: unsafeBitCast(g1, to: SIMD8<UInt8>.self)),
                                toByteOffset: gx &* 16 &+ 16, as: SIMD8<UInt16>.self)
                let f = p & (p &>> 1) & (p &>> 2) & (p &>> 3) & 0x1111_1111_1111_1111
                let m = UInt16(escapeLanes(UInt32(truncatingIfNeeded: f))) | UInt16(escapeLanes(UInt32(truncatingIfNeeded: f &>> 32))) &<< 8
                maskRow.storeBytes(of: m.littleEndian, toByteOffset: gx, as: UInt16.self)
                gx &+= 2
            }
            if gx < gw {  // an odd group count: the last group alone
                let p = UInt32(littleEndian: nibble.loadUnaligned(fromByteOffset: gx &* 4, as: UInt32.self))
                let bytes = SIMD4<UInt16>(truncatingIfNeeded: unsafeBitCast(p, to: SIMD4<UInt8>.self))
                zRow.storeBytes(of: SIMD8<UInt16>(lowHalf: bytes & 15, highHalf: bytes &>> 4), toByteOffset: gx &* 16, as: SIMD8<UInt16>.self)
                maskRow.storeBytes(of: escapeLanes(p & (p >> 1) & (p >> 2) & (p >> 3) & 0x1111_1111), toByteOffset: gx, as: UInt8.self)
            }
            nibble += gw &* 4
            // 2. The row's escapes: positions from the masks, then each value in its place.
            if let ep {
                var k = 0
                var word = 0
                while word < maskBytes {
                    var m = UInt64(littleEndian: maskRow.load(fromByteOffset: word, as: UInt64.self))
                    let c = m.nonzeroBitCount
                    let base = UInt16(truncatingIfNeeded: word &* 8)  // bit b of this word is lane base + b
                    let at = positions + k
                    for j in 0..<8 {  // unrolled; past the last set bit these are overwritten later
                        at[j] = base &+ UInt16(truncatingIfNeeded: m.trailingZeroBitCount)
                        m &= m &- 1
                    }
                    var j = 8
                    while m != 0 {  // more than 8 escapes in 64 lanes: rare on sensor depth
                        at[j] = base &+ UInt16(truncatingIfNeeded: m.trailingZeroBitCount)
                        m &= m &- 1
                        j &+= 1
                    }
                    k &+= c
                    word &+= 8
                }
                // (E was checked against the whole plane's 15-nibbles, so the row's fit.)
                guard k <= count &- e else { return }
                let lo = ep + e, hi = ep + (count &+ e)
                let z16 = zRow.assumingMemoryBound(to: UInt16.self)
                for i in 0..<k {
                    let v = UInt16(lo.load(fromByteOffset: i, as: UInt8.self)) | UInt16(hi.load(fromByteOffset: i, as: UInt8.self)) &<< 8
                    z16[Int(positions[i])] = v &+ 15
                }
                e &+= k
            }
            // 3. Residuals → values: slope, prefix sum, running value, invalid lanes zeroed.
            let p0 = prev.load(fromByteOffset: 16, as: UInt16.self)
            if p0 != 0 { last = SIMD8(repeating: p0) }
            let useSlope = SIMD8<UInt16>(repeating: sp.load(fromByteOffset: y, as: UInt8.self) == 0 ? 0 : 0xFFFF)
            for gx in 0..<gw {
                let z = zRow.load(fromByteOffset: gx &* 16, as: SIMD8<UInt16>.self)
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
