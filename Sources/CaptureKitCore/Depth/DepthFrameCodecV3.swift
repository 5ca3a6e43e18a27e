/// Version 3 of the native frame codec's 16-bit layout (issue 24): a value-rank palette, a
/// predictor chosen per row on the filled image, one byte per residual, one zstd frame.
///
/// Why (measured on real sensor depth, BENCHMARKS.md issue 24): structured-light and active-stereo
/// depth is quantised in disparity (a few hundred distinct values per frame, with large steps
/// between plateaus), so residuals of the values themselves are wide where residuals of their
/// ranks are 0 or ±1; time-of-flight and LiDAR depth follow planes that the row above predicts;
/// version 2's 4-bit slots with 2-byte escapes and its three zstd frames cost more than a byte
/// per residual in one frame.
///
/// Samples → values: when the frame's valid samples take K distinct values (1 ≤ K ≤
/// `maxPalette`) spread over a range at least 2K wide, each sample is replaced by its rank
/// (1...K, in increasing order of value; 0 stays 0) and the sorted values are stored (the
/// palette); otherwise the values are the samples (K = 0).
///
/// Prediction on the filled image F (F = the value for a valid pixel, else the last valid value
/// before it in raster order, 0 at the start of the frame): the row above is P (all zeros for
/// row 0), read with P[−1] = P[0] and P[w] = P[w − 1]. Each row names one predictor:
/// 0 left: x̂ = L; 1 plane: x̂ = L + P[x] − P[x − 1]; 2 slope: x̂ = L + (P[x + 1] − P[x − 1]) >> 1
/// (arithmetic shift of the 16-bit wrapping difference), where L is the filled value just before
/// the pixel in raster order (F of the previous pixel; the previous row's last pixel at x = 0).
/// A valid pixel's residual is r = value − x̂ (mod 2^16), zigzagged to z. Decoding a row is then
/// d = (r + g) on valid lanes, 0 on invalid ones, a prefix sum plus L: no per-pixel chain.
///
/// Residual bytes, one per pixel in raster order: 0 invalid, z + 1 for z < 254, 255 for an escape
/// whose z (≥ 254) follows in the escape list. The payload, compressed as one zstd frame:
/// the palette (K × u16: the first value, then the differences to the previous, each ≥ 1), the
/// row predictors (h bytes, 0...2), the residual bytes (w × h), the escapes (E × u16), all
/// little-endian. Header words 3...6: K, E, the zstd frame's size, 0.
/// A valid pixel decodes to palette[min(F, K)] with palette[0] = 0 (so a rank the encoder never
/// writes cannot read past the palette), or to F without a palette; an invalid pixel to 0.
extension DepthFrameCodec {
    /// Largest palette version 3 writes (and reads).
    static let maxPalette = 32767
    /// Row predictors of version 3.
    static let predictors3 = 3
    /// The encoder compares the predictors on every this many rows (measured: 4 keeps the size
    /// within 0.5 % of choosing on every row, for a third of the prediction work).
    static let evaluateEvery = 4

    /// Uncompressed payload bytes of a version-3 frame.
    @inline(__always)
    static func payloadSize3(width w: Int, height h: Int, palette k: Int, escapes e: Int) -> Int {
        2 * k + h + w * h + 2 * e
    }

    /// Largest version-3 frame of `n` pixels in `h` rows.
    static func bound3(pixels n: Int) -> Int {
        headerSize + ZstdContext.bound(2 * min(n, maxPalette) + min(n, maxDimension) + 3 * n)
    }

    // MARK: encode

    /// `encode` for version 3.
    func encode3(_ src: UnsafeBufferPointer<UInt16>, width w: Int, height h: Int, kind: PixelKind,
                 into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let n = src.count
        guard n == w * h, n > 0, let s = src.baseAddress else { throw .invalidArgument("empty or mismatched frame") }
        guard dst.count >= DepthFrameCodec.headerSize else {
            throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the \(DepthFrameCodec.headerSize)-byte header")
        }
        let table = rankTable.reserve(65536 * 2).bindMemory(to: UInt16.self)
        let (paletteCount, lo, hi) = DepthFrameCodec.palette(s, count: n, ranks: table)
        let maxSize = DepthFrameCodec.payloadSize3(width: w, height: h, palette: paletteCount, escapes: n)
        let payload = nibbles.reserve(maxSize)
        let escapeList = escapes.reserve(2 * n)
        let gw = DepthFrameCodec.rowGroups(w)
        let lanes = DepthFrameCodec.paddedRowLanes(w)
        let row = rows.reserve((2 * lanes + 4 * gw * 8) * 2 + 64)
        guard let pp = payload.baseAddress, let ep = escapeList.baseAddress, let rp = row.baseAddress,
              let tp = table.baseAddress else { throw .noMemory("no scratch memory") }
        if paletteCount > 0 {  // the palette: sorted values as differences (ranks were assigned in order)
            var k = 0, previous = 0
            for v in lo...hi where tp[v] != 0 {
                pp.storeBytes(of: UInt16(truncatingIfNeeded: v - previous).littleEndian, toByteOffset: 2 * k, as: UInt16.self)
                previous = v
                k += 1
            }
        }
        let modes = pp + 2 * paletteCount
        let residuals = modes + h
        let (count, _, _, _) = DepthFrameCodec.pack3(s, width: w, height: h, ranks: paletteCount > 0 ? UnsafePointer(tp) : nil,
                                                  modes: modes, residuals: residuals, escapes: ep, rows: rp)
        (residuals + n).copyMemory(from: ep, byteCount: 2 * count)
        let size = DepthFrameCodec.payloadSize3(width: w, height: h, palette: paletteCount, escapes: count)
        let compressed = try compress(UnsafeRawBufferPointer(start: pp, count: size),
                                      into: UnsafeMutableRawBufferPointer(rebasing: dst[DepthFrameCodec.headerSize...]))
        DepthFrameCodec.writeHeader(dst, version: 3, kind: kind, width: w, height: h,
                                    sizes: [paletteCount, count, compressed, 0])
        return DepthFrameCodec.headerSize + compressed
    }

    /// Decides the palette: returns (K, lowest value, highest value); K = 0 means none. When K > 0,
    /// `ranks[v]` is the rank of value v (1...K) for every v in lowest...highest that the frame
    /// holds, 0 for the others in that range, and ranks[0] = 0 (other entries are not touched).
    /// - Parameter gaps: version 4's rule: a range at least 1.5K wide (not 2K) and fewer than
    ///   half of the values with their successor (v + 1) in the frame too (time-of-flight depth
    ///   fills most of its range with a few far outliers: ranks would not shrink its residuals;
    ///   phone-LiDAR millimetres from float16 metres have steps of 1-2 mm: ranks do, measured).
    static func palette(_ s: UnsafePointer<UInt16>, count n: Int,
                        ranks: UnsafeMutableBufferPointer<UInt16>, gaps: Bool = false) -> (Int, Int, Int) {
        guard let t = ranks.baseAddress, ranks.count >= 65536 else { return (0, 1, 0) }
        var low = SIMD8<UInt16>(repeating: 0xFFFF), high = SIMD8<UInt16>.zero
        let raw = UnsafeRawPointer(s)
        var i = 0
        while i &+ 8 <= n {
            let v = raw.loadUnaligned(fromByteOffset: i &* 2, as: SIMD8<UInt16>.self)
            low = pointwiseMin(low, v | ~nonzeroLanes(v))  // invalid lanes count as 0xFFFF
            high = pointwiseMax(high, v)
            i &+= 8
        }
        var lo = low.min(), hi = high.max()
        while i < n {
            let v = s[i]
            lo = min(lo, v == 0 ? 0xFFFF : v)
            hi = max(hi, v)
            i &+= 1
        }
        guard hi != 0 else { return (0, 1, 0) }  // no valid pixel
        let (a, b) = (Int(lo), Int(hi))
        (t + a).initialize(repeating: 0, count: b - a + 1)
        // Every 16th pixel first: when they alone hold more than half the range's values, the
        // frame is dense (no palette) and the full count is not needed.
        t[0] = 1  // invalid pixels never count
        var sampled = 0
        for i in stride(from: 0, to: n, by: 16) {
            let v = Int(s[i])
            sampled &+= Int(1 &- t[v])
            t[v] = 1
        }
        // K ≥ sampled: too many values for the range (2K, or with `gaps` 1.5K).
        guard (gaps ? 3 * sampled <= 2 * (b - a + 1) : 2 * sampled <= b - a + 1) else { return (0, a, b) }
        for i in 0..<n { t[Int(s[i])] = 1 }
        t[0] = 0
        var k = 0, adjacent = 0
        for v in a...b { k &+= Int(t[v]) }
        guard k <= maxPalette, b - a + 1 >= (gaps ? k + k / 2 : 2 * k) else { return (0, a, b) }
        if gaps {
            for v in a..<b { adjacent &+= Int(t[v] & t[v + 1]) }
            guard 2 * adjacent < k else { return (0, a, b) }
        }
        var rank: UInt16 = 0
        for v in a...b where t[v] != 0 {
            rank &+= 1
            t[v] = rank
        }
        return (k, a, b)
    }

    /// Values, filled rows, residuals under the three predictors, the cheaper predictor per row,
    /// residual bytes and escapes of a whole frame. Returns the escape count.
    /// - Parameters:
    ///   - ranks: the value of each sample (a 65536-entry table), or nil for the samples themselves.
    ///   - modes: h bytes; residuals: w × h bytes; escapes: 2 × w × h bytes.
    ///   - rows: scratch: 2 padded rows + 4 × ⌈w/8⌉ groups of 8 lanes (UInt16).
    ///   - high: version 4 (`emitRow4`): the escapes' high bytes (the low bytes go to `escapes`),
    ///     and each row's layout is chosen: nibble rows go to `residuals`, byte rows to
    ///     `byteRows` (w × h bytes); nil for version 3. `nibbles`: false for byte rows only.
    /// - Returns: (escapes, nibble rows, bytes at `residuals`, bytes at `byteRows`).
    static func pack3(_ s: UnsafePointer<UInt16>, width w: Int, height h: Int, ranks: UnsafePointer<UInt16>?,
                      modes: UnsafeMutableRawPointer, residuals: UnsafeMutableRawPointer,
                      escapes: UnsafeMutableRawPointer, rows: UnsafeMutableRawPointer,
                      high: UnsafeMutableRawPointer? = nil, byteRows: UnsafeMutableRawPointer? = nil,
                      nibbles: Bool = true) -> (Int, Int, Int, Int) {
        let gw = rowGroups(w)
        let lanes = paddedRowLanes(w)
        let p16 = rows.bindMemory(to: UInt16.self, capacity: 2 * lanes + 4 * gw * 8)
        p16.initialize(repeating: 0, count: 2 * lanes + 4 * gw * 8)
        var prev = UnsafeMutableRawPointer(p16), cur = UnsafeMutableRawPointer(p16 + lanes)
        let values = UnsafeMutableRawPointer(p16 + 2 * lanes)        // the row's values, 0 = invalid
        let z0 = values + 16 * gw, z1 = z0 + 16 * gw, z2 = z1 + 16 * gw
        let cap = SIMD8<UInt16>(repeating: 31)
        var last: UInt16 = 0
        var e = 0, mode = 0, nibbleRows = 0
        var out = residuals
        var byteOut = byteRows ?? residuals
        for y in 0..<h {
            let sr = s + y * w
            let v16 = values.assumingMemoryBound(to: UInt16.self)
            let c16 = cur.assumingMemoryBound(to: UInt16.self)
            // 1. Values and the filled row (cur[8 + x]); cur[7] = the filled value before the row.
            c16[7] = last
            var l = last
            // The row's values: the ranks (a gather, no dependency chain) or the samples.
            if let ranks {
                for x in 0..<w { v16[x] = ranks[Int(sr[x])] }
            } else {
                values.copyMemory(from: UnsafeRawPointer(sr), byteCount: 2 &* w)
            }
            // The filled row: a group whose pixels are all valid is its values (the common case).
            var x = 0
            while x &+ 8 <= w {
                let v = values.load(fromByteOffset: x &* 2, as: SIMD8<UInt16>.self)
                let nz = unsafeBitCast(nonzeroLanes(v), to: SIMD2<UInt64>.self)
                if nz.x & nz.y == ~0 {
                    cur.storeBytes(of: v, toByteOffset: (8 &+ x) &* 2, as: SIMD8<UInt16>.self)
                    l = v[7]
                } else {
                    for k in x..<(x &+ 8) {
                        let u = v16[k]
                        l = u != 0 ? u : l
                        c16[8 &+ k] = l
                    }
                }
                x &+= 8
            }
            while x < w {
                let u = v16[x]
                l = u != 0 ? u : l
                c16[8 &+ x] = l
                x &+= 1
            }
            for x in w..<(gw * 8 + 16) { c16[8 + x] = l }  // P[w] = P[w − 1] for the next row
            last = l
            // 2. On rows 1, 1 + `evaluateEvery`, ...: residuals under the three predictors and a
            // cost for each, Σ min(z, 31); the cheapest (ties: the lower number) serves the rows
            // up to the next evaluation (depth rows change slowly; this is a third of the work).
            if y == 0 {
                mode = 0  // the row above is all zeros: every predictor is the left one
                for gx in 0..<gw {
                    let o = gx &* 16
                    let v = values.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
                    let left = cur.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                    z0.storeBytes(of: zigzag(v &- left) & nonzeroLanes(v), toByteOffset: o, as: SIMD8<UInt16>.self)
                }
            } else if y % evaluateEvery == 1 {
                var cost0 = SIMD8<UInt16>.zero, cost1 = SIMD8<UInt16>.zero, cost2 = SIMD8<UInt16>.zero
                for gx in 0..<gw {
                    let o = gx &* 16
                    let v = values.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
                    let valid = nonzeroLanes(v)
                    let left = cur.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                    let nw = prev.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                    let n = prev.loadUnaligned(fromByteOffset: 16 &+ o, as: SIMD8<UInt16>.self)
                    let ne = prev.loadUnaligned(fromByteOffset: 18 &+ o, as: SIMD8<UInt16>.self)
                    let r0 = v &- left
                    let r1 = r0 &- (n &- nw)
                    let r2 = r0 &- unsafeBitCast(unsafeBitCast(ne &- nw, to: SIMD8<Int16>.self) &>> 1, to: SIMD8<UInt16>.self)
                    let a = zigzag(r0) & valid, b = zigzag(r1) & valid, c = zigzag(r2) & valid
                    z0.storeBytes(of: a, toByteOffset: o, as: SIMD8<UInt16>.self)
                    z1.storeBytes(of: b, toByteOffset: o, as: SIMD8<UInt16>.self)
                    z2.storeBytes(of: c, toByteOffset: o, as: SIMD8<UInt16>.self)
                    cost0 &+= capped(a, cap)
                    cost1 &+= capped(b, cap)
                    cost2 &+= capped(c, cap)
                }
                let c0 = cost0.wrappedSum32, c1 = cost1.wrappedSum32, c2 = cost2.wrappedSum32
                mode = 0
                var best = c0
                if c1 < best { mode = 1; best = c1 }
                if c2 < best { mode = 2 }
            } else {
                let plane = SIMD8<UInt16>(repeating: mode == 1 ? 0xFFFF : 0), slope = SIMD8<UInt16>(repeating: mode == 2 ? 0xFFFF : 0)
                let target = mode == 0 ? z0 : (mode == 1 ? z1 : z2)
                for gx in 0..<gw {
                    let o = gx &* 16
                    let v = values.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
                    let left = cur.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                    let nw = prev.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                    let n = prev.loadUnaligned(fromByteOffset: 16 &+ o, as: SIMD8<UInt16>.self)
                    let ne = prev.loadUnaligned(fromByteOffset: 18 &+ o, as: SIMD8<UInt16>.self)
                    let g = ((n &- nw) & plane)
                        | (unsafeBitCast(unsafeBitCast(ne &- nw, to: SIMD8<Int16>.self) &>> 1, to: SIMD8<UInt16>.self) & slope)
                    target.storeBytes(of: zigzag(v &- left &- g) & nonzeroLanes(v), toByteOffset: o, as: SIMD8<UInt16>.self)
                }
            }
            let zr = mode == 0 ? z0 : (mode == 1 ? z1 : z2)
            if let high {
                let layout = emitRow4(zr, values, width: w, nibbles: nibbles, nibbleOut: &out, bytes: &byteOut, escapes: escapes, high: high, &e)
                modes.storeBytes(of: UInt8(mode | layout), toByteOffset: y, as: UInt8.self)
                nibbleRows &+= layout >> 2
                c16[7] = c16[8]
                swap(&prev, &cur)
                continue
            }
            modes.storeBytes(of: UInt8(mode), toByteOffset: y, as: UInt8.self)
            for gx in 0..<gw {
                let o = gx &* 16
                let z = zr.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
                let valid = nonzeroLanes(values.load(fromByteOffset: o, as: SIMD8<UInt16>.self))
                // Lanes with z ≥ 254: the top bit of (z + 0x7F02) | z, spread by an arithmetic shift.
                let escaped = unsafeBitCast(unsafeBitCast((z &+ 0x7F02) | z, to: SIMD8<Int16>.self) &>> 15, to: SIMD8<UInt16>.self) & valid
                let b16 = (((z &+ 1) | escaped) & 0xFF) & valid
                let bytes = narrow(b16)
                let rest = w &- gx &* 8
                if rest >= 8 {
                    out.storeBytes(of: bytes.littleEndian, toByteOffset: gx &* 8, as: UInt64.self)
                } else {
                    for k in 0..<rest {
                        out.storeBytes(of: UInt8(truncatingIfNeeded: bytes &>> UInt64(8 * k)), toByteOffset: gx &* 8 &+ k, as: UInt8.self)
                    }
                }
                var m = laneBits(escaped)
                while m != 0 {
                    let k = m.trailingZeroBitCount
                    m &= m &- 1
                    escapes.storeBytes(of: z[k].littleEndian, toByteOffset: 2 &* e, as: UInt16.self)
                    e &+= 1
                }
            }
            out += w
            // This row becomes the next row's P: P[−1] = P[0].
            c16[7] = c16[8]
            swap(&prev, &cur)
        }
        return (e, nibbleRows, out - residuals, byteRows.map { byteOut - $0 } ?? 0)
    }

    /// 8 bytes (little-endian, byte k → lane k) as 16-bit lanes, with integer shifts (the generic
    /// SIMD conversion is a function call per group).
    @inline(__always)
    static func widen(_ word: UInt64) -> SIMD8<UInt16> {
        func spread(_ x: UInt64) -> UInt64 {
            var t = x & 0xFFFF_FFFF
            t = (t | (t &<< 16)) & 0x0000_FFFF_0000_FFFF
            return (t | (t &<< 8)) & 0x00FF_00FF_00FF_00FF
        }
        return unsafeBitCast(SIMD2<UInt64>(spread(word), spread(word &>> 32)), to: SIMD8<UInt16>.self)
    }

    /// The low bytes of 8 lanes (each < 256) as 8 bytes, lane k → byte k (`widen` reversed).
    @inline(__always)
    static func narrow(_ v: SIMD8<UInt16>) -> UInt64 {
        func gather(_ x: UInt64) -> UInt64 {
            let t = (x | (x &>> 8)) & 0x0000_FFFF_0000_FFFF
            return (t | (t &>> 16)) & 0xFFFF_FFFF
        }
        let w = unsafeBitCast(v, to: SIMD2<UInt64>.self)
        return gather(w.x) | (gather(w.y) &<< 32)
    }

    @inline(__always)
    static func zigzag(_ r: SIMD8<UInt16>) -> SIMD8<UInt16> {
        let s = unsafeBitCast(r, to: SIMD8<Int16>.self)
        return unsafeBitCast((s &<< 1) ^ (s &>> 15), to: SIMD8<UInt16>.self)
    }

    // MARK: decode

    /// `decode` for version 3: every check on the payload runs before `dst` is written.
    func decode3(_ src: UnsafeRawBufferPointer, header hd: Header, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) -> Header {
        let (w, h, n) = (hd.width, hd.height, hd.pixels)
        let k = hd.paletteCount, count = hd.escapeBytes
        let size = DepthFrameCodec.payloadSize3(width: w, height: h, palette: k, escapes: count)
        let payload = nibbles.reserve(size + 8)
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[DepthFrameCodec.headerSize...]),
                            into: UnsafeMutableRawBufferPointer(rebasing: payload[0..<size]))
        guard let pp = payload.baseAddress else { throw .noMemory("no scratch memory") }
        let tp = try readPalette(pp, count: k)
        let modes = pp + 2 * k, residuals = modes + h, escapeList = residuals + n
        for y in 0..<h where modes.load(fromByteOffset: y, as: UInt8.self) >= UInt8(DepthFrameCodec.predictors3) {
            throw .init(.corrupt, "row \(y) names predictor \(modes.load(fromByteOffset: y, as: UInt8.self)) (0...2)")
        }
        let needed = DepthFrameCodec.byteCount(0xFF, in: UnsafeRawBufferPointer(start: residuals, count: n))
        guard needed == count else {
            throw .init(.corrupt, "the frame has \(needed) escaped residuals but its escape list \(count) entries")
        }
        for i in 0..<count where UInt16(littleEndian: escapeList.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) < 254 {
            throw .init(.corrupt, "escape \(i) holds a residual that has a one-byte form")
        }
        let lanes = DepthFrameCodec.paddedRowLanes(w)
        let gw = DepthFrameCodec.rowGroups(w)
        let row = rows.reserve(2 * lanes * 2 + gw * 8 + 16)
        guard let rp = row.baseAddress, let d = dst.baseAddress else { throw .noMemory("no scratch memory") }
        DepthFrameCodec.unpack3(modes: modes, residuals: residuals, escapes: escapeList, palette: k > 0 ? UnsafePointer(tp) : nil,
                                paletteCount: k, width: w, height: h, rows: rp, into: d)
        return hd
    }

    /// The palette section (K differences ≥ 1 that stay within 16 bits) as a table of K + 1 values
    /// with entry 0 = 0 (in `rankTable`). - Throws: `corrupt`.
    func readPalette(_ pp: UnsafeRawPointer, count k: Int) throws(CaptureKitError) -> UnsafeMutablePointer<UInt16> {
        let table = rankTable.reserve((k + 1) * 2).bindMemory(to: UInt16.self)
        guard let tp = table.baseAddress else { throw .noMemory("no scratch memory") }
        tp[0] = 0
        var value = 0
        for i in 0..<k {
            let d = Int(UInt16(littleEndian: pp.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)))
            value += d
            guard d >= 1, value <= 0xFFFF else { throw .init(.corrupt, "palette entry \(i) is not above the one before it") }
            tp[i + 1] = UInt16(value)
        }
        return tp
    }

    /// One row of `unpack3` under predictor `mode`: residual bytes (+ escapes) → residuals →
    /// prediction, prefix sum → the filled row (`cur`) and the output (ranks clamped to K when
    /// `clamp`; 0 for invalid pixels).
    @inline(__always)
    static func decodeRow3(mode: Int, _ row: UnsafeRawPointer, _ tail: UnsafeRawPointer, _ escapes: UnsafeRawPointer,
                           _ e: inout Int, _ prev: UnsafeMutableRawPointer, _ cur: UnsafeMutableRawPointer,
                           _ last: inout SIMD8<UInt16>, _ out: inout UnsafeMutableRawPointer,
                           _ gw: Int, _ full: Int, _ w: Int, _ clamp: Bool, _ top: SIMD8<UInt16>) {
        let ff: UInt64 = 0xFFFF_FFFF_FFFF_FFFF, low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var running = last
        for gx in 0..<gw {
            let o = gx &* 16
            let word = gx < full ? row.loadUnaligned(fromByteOffset: gx &* 8, as: UInt64.self)
                                 : tail.loadUnaligned(as: UInt64.self)
            var z = widen(word)
            let valid = nonzeroLanes(z)
            z = z &- 1
            let t = word ^ ff  // zero bytes where the residual byte is 255
            if ~(((t & low7) &+ low7) | t | low7) != 0 {
                for j in 0..<8 where z[j] == 254 {
                    z[j] = UInt16(littleEndian: escapes.loadUnaligned(fromByteOffset: 2 &* e, as: UInt16.self))
                    e &+= 1
                }
            }
            var r = (z &>> 1) ^ (0 &- (z & 1))
            if mode == 1 {
                let nw = prev.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                let n = prev.loadUnaligned(fromByteOffset: 16 &+ o, as: SIMD8<UInt16>.self)
                r &+= n &- nw
            } else if mode == 2 {
                let nw = prev.loadUnaligned(fromByteOffset: 14 &+ o, as: SIMD8<UInt16>.self)
                let ne = prev.loadUnaligned(fromByteOffset: 18 &+ o, as: SIMD8<UInt16>.self)
                r &+= unsafeBitCast(unsafeBitCast(ne &- nw, to: SIMD8<Int16>.self) &>> 1, to: SIMD8<UInt16>.self)
            }
            let dlt = r & valid
            // Prefix sums of each 4-lane half, the first half's total into the second, + last.
            var v = dlt &+ unsafeBitCast(unsafeBitCast(dlt, to: SIMD2<UInt64>.self) &<< 16, to: SIMD8<UInt16>.self)
            v = v &+ unsafeBitCast(unsafeBitCast(v, to: SIMD2<UInt64>.self) &<< 32, to: SIMD8<UInt16>.self)
            v = v &+ SIMD8<UInt16>(lowHalf: .zero, highHalf: SIMD4(repeating: v[3]))
            v = v &+ running
            running = SIMD8(repeating: v[7])
            cur.storeBytes(of: v, toByteOffset: 16 &+ o, as: SIMD8<UInt16>.self)
            let sample = (clamp ? pointwiseMin(v, top) : v) & valid  // ranks go through the palette later
            if gx < full {
                out.storeBytes(of: sample, as: SIMD8<UInt16>.self)
                out += 16
            } else {
                let rest = w &- gx &* 8
                let dp = out.assumingMemoryBound(to: UInt16.self)
                for j in 0..<rest { dp[j] = sample[j] }
                out += 2 &* rest
            }
        }
        last = running
    }

    /// How many bytes of `bytes` equal `value`: 16 bytes at a time, a 0x01 per matching byte
    /// (the zero-byte test of `bytes ^ value`) added into byte counters folded every 255 steps.
    static func byteCount(_ value: UInt8, in bytes: UnsafeRawBufferPointer) -> Int {
        guard let p = bytes.baseAddress else { return 0 }
        let n = bytes.count
        let pattern = SIMD2<UInt64>(repeating: UInt64(value) &* 0x0101_0101_0101_0101)
        let low7 = SIMD2<UInt64>(repeating: 0x7F7F_7F7F_7F7F_7F7F)
        func fold(_ acc: SIMD2<UInt64>) -> Int {  // byte counters (≤ 255 each) → their sum
            let m: UInt64 = 0x00FF_00FF_00FF_00FF
            let pairs = (acc & m) &+ ((acc &>> 8) & m)  // 16-bit sums ≤ 510
            return Int(((pairs.x &* 0x0001_0001_0001_0001) &>> 48) + ((pairs.y &* 0x0001_0001_0001_0001) &>> 48))
        }
        var total = 0, i = 0
        while i &+ 16 <= n {
            var acc = SIMD2<UInt64>.zero  // byte counters, at most 255 steps each
            var steps = 0
            while steps < 255 && i &+ 16 <= n {
                let t = p.loadUnaligned(fromByteOffset: i, as: SIMD2<UInt64>.self) ^ pattern
                let y = ~(((t & low7) &+ low7) | t | low7)  // 0x80 in the bytes equal to value
                acc &+= y &>> 7
                i &+= 16
                steps &+= 1
            }
            total &+= fold(acc)
        }
        while i < n {
            if p.load(fromByteOffset: i, as: UInt8.self) == value { total &+= 1 }
            i &+= 1
        }
        return total
    }

    /// Residual bytes (+ escapes) → residuals → predictor, prefix sum → values → samples, row by
    /// row. The caller has checked the modes (0...2) and that the escape list holds one entry per
    /// byte 255; `rows` holds 2 padded rows + one row of bytes (+ 16). Cannot fail.
    static func unpack3(modes: UnsafeRawPointer, residuals: UnsafeRawPointer, escapes: UnsafeRawPointer,
                        palette: UnsafePointer<UInt16>?, paletteCount k: Int, width w: Int, height h: Int,
                        rows: UnsafeMutableRawPointer, into d: UnsafeMutablePointer<UInt16>) {
        let gw = rowGroups(w)
        let lanes = paddedRowLanes(w)
        rows.initializeMemory(as: UInt8.self, repeating: 0, count: 4 * lanes + gw * 8 + 16)
        var prev = rows, cur = rows + 2 * lanes
        let bytes = rows + 4 * lanes  // the row's residual bytes, zero-padded to whole groups
        let top = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: k))
        var last = SIMD8<UInt16>(repeating: 0)
        var e = 0
        var out = UnsafeMutableRawPointer(d)
        let full = w / 8
        let clamp = palette != nil
        for y in 0..<h {
            let row = residuals + y &* w
            if full < gw {  // the last, partial group reads from a zero-padded copy
                bytes.copyMemory(from: row + full &* 8, byteCount: w &- full &* 8)
            }
            // One loop per predictor (the mode is a constant in each, after inlining).
            switch modes.load(fromByteOffset: y, as: UInt8.self) {
            case 0: decodeRow3(mode: 0, row, bytes, escapes, &e, prev, cur, &last, &out, gw, full, w, clamp, top)
            case 1: decodeRow3(mode: 1, row, bytes, escapes, &e, prev, cur, &last, &out, gw, full, w, clamp, top)
            default: decodeRow3(mode: 2, row, bytes, escapes, &e, prev, cur, &last, &out, gw, full, w, clamp, top)
            }
            if let palette {  // ranks (≤ K; 0 for invalid pixels) → values
                let dp = d + y &* w
                for x in 0..<w { dp[x] = palette[Int(dp[x])] }
            }
            // Padding lanes hold the row's last filled value (P[w] = P[w − 1]); P[−1] = P[0].
            let c16 = cur.assumingMemoryBound(to: UInt16.self)
            for x in (8 + gw * 8)..<lanes { c16[x] = last[0] }
            c16[7] = c16[8]
            swap(&prev, &cur)
        }
    }
}
