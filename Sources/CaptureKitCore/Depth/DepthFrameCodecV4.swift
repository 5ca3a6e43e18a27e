import CCaptureKitSIMD
import Glibc

/// Version 4 of the native frame codec's 16-bit layout (issue 24): version 3's values and row
/// predictors, with a residual layout chosen per row (nibble pairs or bytes) and escapes as two
/// byte planes.
///
/// Why (measured on real sensor depth and the synthetic profiles, BENCHMARKS.md issue 24): half
/// of version 3's decode time was zstd's Huffman stage over one literal per pixel, and rows of
/// small residuals (palette ranks of structured-light depth: 0 or ±1; smooth time-of-flight and
/// LiDAR rows) paid at least one Huffman bit per pixel. A row whose residuals nearly all fit a
/// nibble now sends two per byte: half the literals, and zstd sees pairs.
///
/// Values, the filled image, the three row predictors and the zigzagged residual z of a valid
/// pixel are version 3's (`DepthFrameCodecV3.swift`). Per row, one byte: bits 0-1 the predictor
/// (0...2), bit 2 the layout (0 bytes, 1 nibbles), bits 3-7 zero.
/// - Byte row: w bytes, one per pixel: 0 invalid, z + 1 for z < 254, 255 for an escape of
///   z − 254.
/// - Nibble row: ⌈w/8⌉ groups of 8 pixels (the last one padded with invalid lanes), 4 bytes per
///   group, byte j = nibble of pixel j | nibble of pixel j + 4 << 4; a nibble is 0 invalid,
///   z + 1 for z < 14, 15 for an escape of z − 14. The encoder takes nibbles when 4⌈w/8⌉ < w and
///   at most 1/`nibbleEscapeShare` of the row escapes.
/// Escapes, in pixel order, are stored as E low bytes then E high bytes: z = T + escape (mod
/// 2^16), T = 254 in byte rows, 14 in nibble rows.
/// Payload, one zstd frame: palette (K × u16), row bytes (h), rows (in order), escape low bytes
/// (E), escape high bytes (E). Header words 3...6: K, E, the size after the header, the number of
/// nibble rows (+ 2^16 with stored low bytes).
/// Stored low bytes (`storedLowBytes`): the zstd frame holds everything but the escape low bytes,
/// which follow it uncompressed. The capture level stores them when there are at least
/// `storedLowBytesMinimum` and they look random to an order-0 model (`lowBytesLookRandom`): in
/// one zstd block with the rows they cost Huffman decoding time and widen the rows' code, so on
/// most frames stored raw they make the frame smaller as well as faster to decode (measured on
/// the issue-24 sets, BENCHMARKS.md).
extension DepthFrameCodec {
    /// A row takes nibbles when at most 1/this of its pixels escape from them (measured on the
    /// issue-24 sets: 4 gives the smallest frames; rows that mix layouts at 1/16 cost up to 10 %
    /// on LiDAR-like depth).
    static let nibbleEscapeShare = 4

    /// Fewest escapes whose low bytes the capture level stores after the zstd frame (below, the
    /// decode time saved is negligible and the frame stays the plain layout; from 256 the stored
    /// frame always fits `bound`, see `encode4`).
    static let storedLowBytesMinimum = 256

    /// True when the order-0 entropy of the `count` bytes at `p` is at least 0.78 × 8 bits a byte.
    /// Measured per frame on the issue-24 sets: above that, storing the escape low bytes outside
    /// the zstd frame made the frame at most 0.7 % larger (mostly smaller); below it, up to 8 %
    /// larger (disparity-quantised RealSense frames with small escapes).
    static func lowBytesLookRandom(_ p: UnsafeRawPointer, count: Int) -> Bool {
        guard count > 0 else { return false }
        // On the stack: this runs for every frame the capture level encodes.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { histogram in
            histogram.initialize(repeating: 0)
            for i in 0..<count { histogram[Int(p.load(fromByteOffset: i, as: UInt8.self))] &+= 1 }
            let n = Double(count)
            var bits = 0.0
            for c in histogram where c > 0 { bits += Double(c) * log2(n / Double(c)) }
            return bits >= 0.78 * 8 * n
        }
    }

    /// Uncompressed payload bytes of a version-4 frame with `m` nibble rows.
    @inline(__always)
    static func payloadSize4(width w: Int, height h: Int, palette k: Int, escapes e: Int, nibbleRows m: Int) -> Int {
        2 * k + h + (h - m) * w + m * 4 * rowGroups(w) + 2 * e
    }

    // MARK: encode

    /// `encode` for version 4 (the largest frame is version 3's: nibble rows are only ever shorter).
    /// Below zstd level 3, rows take nibbles where they fit (`nibbleEscapeShare`). From level 3
    /// (the archival level) three frames are made and the smallest kept: byte rows only (which
    /// zstd's high levels model better on most depth, measured), that nibble choice at the level,
    /// and the capture level's own frame, so an archival frame is never larger than the capture
    /// one (on tiny frames zstd 19 can be a few bytes larger). The same bytes every time.
    func encode4(_ src: UnsafeBufferPointer<UInt16>, width w: Int, height h: Int, kind: PixelKind,
                 into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        if zstd.level < 3 { return try encode4(src, width: w, height: h, kind: kind, nibbles: true, storeLowBytes: true, into: dst) }
        let worst = DepthFrameCodec.headerSize + ZstdContext.bound(DepthFrameCodec.payloadSize3(width: w, height: h,
                                                                    palette: min(src.count, DepthFrameCodec.maxPalette), escapes: src.count))
        let all = alternative.reserve(3 * worst)
        var best = UnsafeRawBufferPointer(start: nil, count: 0)
        for (i, (nibbles, capture)) in [(false, false), (true, false), (true, true)].enumerated() {
            let out = UnsafeMutableRawBufferPointer(rebasing: all[(i * worst)..<((i + 1) * worst)])
            let size = try encode4(src, width: w, height: h, kind: kind, nibbles: nibbles, captureLevel: capture,
                                   storeLowBytes: capture, into: out)
            if i == 0 || size < best.count { best = UnsafeRawBufferPointer(rebasing: out[0..<size]) }
        }
        return try place(best, into: dst)
    }

    /// One version-4 encoding: `nibbles` false for byte rows only; `captureLevel`: zstd level 1
    /// as the capture level compresses, whatever the codec's level; `storeLowBytes`: the escape
    /// low bytes go after the zstd frame where the rule (`storedLowBytesMinimum`,
    /// `lowBytesLookRandom`) says so.
    func encode4(_ src: UnsafeBufferPointer<UInt16>, width w: Int, height h: Int, kind: PixelKind, nibbles useNibbles: Bool,
                 captureLevel: Bool = false, storeLowBytes: Bool = false,
                 into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let n = src.count
        guard n == w * h, n > 0, let s = src.baseAddress else { throw .invalidArgument("empty or mismatched frame") }
        guard dst.count >= DepthFrameCodec.headerSize else {
            throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the \(DepthFrameCodec.headerSize)-byte header")
        }
        let table = rankTable.reserve(65536 * 2).bindMemory(to: UInt16.self)
        let (paletteCount, lo, hi) = DepthFrameCodec.palette(s, count: n, ranks: table, gaps: true)
        let maxSize = DepthFrameCodec.payloadSize3(width: w, height: h, palette: paletteCount, escapes: n)
        let payload = nibbles.reserve(maxSize)
        let escapeList = escapes.reserve(2 * n)
        let byteRows = bytes.reserve(n)
        let gw = DepthFrameCodec.rowGroups(w)
        let lanes = DepthFrameCodec.paddedRowLanes(w)
        let row = rows.reserve((2 * lanes + 4 * gw * 8) * 2 + 64)
        guard let pp = payload.baseAddress, let ep = escapeList.baseAddress, let rp = row.baseAddress,
              let tp = table.baseAddress, let bp = byteRows.baseAddress else { throw .noMemory("no scratch memory") }
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
        let (count, nibbleRows, nibbleBytes, byteBytes) = DepthFrameCodec.pack3(
            s, width: w, height: h, ranks: paletteCount > 0 ? UnsafePointer(tp) : nil,
            modes: modes, residuals: residuals, escapes: ep, rows: rp, high: ep + n, byteRows: bp,
            nibbles: useNibbles)
        (residuals + nibbleBytes).copyMemory(from: bp, byteCount: byteBytes)
        let residualBytes = nibbleBytes + byteBytes
        let stored = storeLowBytes && count >= DepthFrameCodec.storedLowBytesMinimum
            && DepthFrameCodec.lowBytesLookRandom(ep, count: count) ? count : 0
        if stored == 0 {
            (residuals + residualBytes).copyMemory(from: ep, byteCount: count)
            (residuals + residualBytes + count).copyMemory(from: ep + n, byteCount: count)
        } else {  // the zstd frame ends with the high bytes; the low ones follow it
            (residuals + residualBytes).copyMemory(from: ep + n, byteCount: count)
        }
        let size = DepthFrameCodec.payloadSize4(width: w, height: h, palette: paletteCount, escapes: count, nibbleRows: nibbleRows)
        let compressed = try compress(UnsafeRawBufferPointer(start: pp, count: size - stored),
                                      into: UnsafeMutableRawBufferPointer(rebasing: dst[DepthFrameCodec.headerSize...]),
                                      longMatches: true, levelOverride: captureLevel ? 1 : nil)
        if stored > 0 {
            // Within `bound` (2K + h + 3n bytes through zstd's bound): the zstd content is at most
            // 2K + h + 2n bytes and, for E ≥ 256, ZSTD_compressBound(x) + E ≤ ZSTD_compressBound(x + E).
            // A smaller destination fails as `compress` does: the bytes never depend on its size.
            guard DepthFrameCodec.headerSize + compressed + stored <= dst.count, let d = dst.baseAddress else {
                throw .bufferTooSmall("the \(stored) stored escape bytes do not fit the \(dst.count - DepthFrameCodec.headerSize - compressed) bytes left")
            }
            (d + DepthFrameCodec.headerSize + compressed).copyMemory(from: ep, byteCount: stored)
        }
        DepthFrameCodec.writeHeader(dst, version: 4, kind: kind, width: w, height: h,
                                    sizes: [paletteCount, count, compressed + stored, nibbleRows | (stored > 0 ? 0x10000 : 0)])
        return DepthFrameCodec.headerSize + compressed + stored
    }

    /// All-ones lanes where z ≥ `t` (1 ≤ t ≤ 0x8000): the top bit of (z + 0x8000 − t) | z.
    @inline(__always)
    static func atLeast(_ z: SIMD8<UInt16>, _ t: UInt16) -> SIMD8<UInt16> {
        unsafeBitCast(unsafeBitCast((z &+ (0x8000 &- t)) | z, to: SIMD8<Int16>.self) &>> 15, to: SIMD8<UInt16>.self)
    }

    /// Writes one version-4 row from its residuals `zr` (0 on invalid lanes and past the row) and
    /// values (0 = invalid): the layout, the residuals (at and past `nibbleOut` or `bytes`) and
    /// escapes (low bytes at `escapes + e`, high bytes at `high + e`). Returns the layout bit (0
    /// bytes, 4 nibbles). `nibbles`: false for byte rows only.
    @inline(__always)
    static func emitRow4(_ zr: UnsafeMutableRawPointer, _ values: UnsafeMutableRawPointer, width w: Int, nibbles: Bool,
                         nibbleOut: inout UnsafeMutableRawPointer, bytes: inout UnsafeMutableRawPointer,
                         escapes: UnsafeMutableRawPointer, high: UnsafeMutableRawPointer, _ e: inout Int) -> Int {
        let gw = rowGroups(w)
        var useNibbles = nibbles && 4 &* gw < w
        if useNibbles {
            var count = SIMD8<UInt16>.zero  // per lane ≤ ⌈w/8⌉ ≤ 2048: no overflow
            for gx in 0..<gw {
                count &+= atLeast(zr.load(fromByteOffset: gx &* 16, as: SIMD8<UInt16>.self), 14) & 1
            }
            useNibbles = count.wrappedSum32 &* nibbleEscapeShare <= w
        }
        func escape(_ z: SIMD8<UInt16>, _ lanes: Int, _ t: UInt16) {
            var m = lanes
            while m != 0 {
                let k = m.trailingZeroBitCount
                m &= m &- 1
                let v = z[k] &- t
                escapes.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: e, as: UInt8.self)
                high.storeBytes(of: UInt8(truncatingIfNeeded: v &>> 8), toByteOffset: e, as: UInt8.self)
                e &+= 1
            }
        }
        if useNibbles {
            let out = nibbleOut
            for gx in 0..<gw {
                let o = gx &* 16
                let z = zr.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
                let valid = nonzeroLanes(values.load(fromByteOffset: o, as: SIMD8<UInt16>.self))
                let escaped = atLeast(z, 14)  // z ≥ 14 only on valid lanes
                let nib = (((z &+ 1) | escaped) & 0xF) & valid
                out.storeBytes(of: packNibbles(nib).littleEndian, toByteOffset: 4 &* gx, as: UInt32.self)
                let bits = laneBits(escaped)
                if bits != 0 { escape(z, bits, 14) }
            }
            nibbleOut += 4 &* gw
            return 4
        }
        let out = bytes
        for gx in 0..<gw {
            let o = gx &* 16
            let z = zr.load(fromByteOffset: o, as: SIMD8<UInt16>.self)
            let valid = nonzeroLanes(values.load(fromByteOffset: o, as: SIMD8<UInt16>.self))
            let escaped = atLeast(z, 254)
            let bytes = narrow((((z &+ 1) | escaped) & 0xFF) & valid)
            let rest = w &- gx &* 8
            if rest >= 8 {
                out.storeBytes(of: bytes.littleEndian, toByteOffset: gx &* 8, as: UInt64.self)
            } else {
                for k in 0..<rest {
                    out.storeBytes(of: UInt8(truncatingIfNeeded: bytes &>> UInt64(8 * k)), toByteOffset: gx &* 8 &+ k, as: UInt8.self)
                }
            }
            let bits = laneBits(escaped)
            if bits != 0 { escape(z, bits, 254) }
        }
        bytes += w
        return 0
    }

    // MARK: decode

    /// Escapes in a nibble row of `groups` groups (nibbles equal to 15).
    @inline(__always)
    static func nibbleEscapes(_ row: UnsafeRawPointer, groups: Int) -> Int {
        var total = 0, g = 0
        while g &+ 2 <= groups {
            let p = row.loadUnaligned(fromByteOffset: 4 &* g, as: UInt64.self)
            total &+= (p & (p &>> 1) & (p &>> 2) & (p &>> 3) & 0x1111_1111_1111_1111).nonzeroBitCount
            g &+= 2
        }
        if g < groups {
            let p = row.loadUnaligned(fromByteOffset: 4 &* g, as: UInt32.self)
            total &+= (p & (p &>> 1) & (p &>> 2) & (p &>> 3) & 0x1111_1111).nonzeroBitCount
        }
        return total
    }

    /// `decode` for version 4: every check on the payload runs before `dst` is written.
    func decode4(_ src: UnsafeRawBufferPointer, header hd: Header, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) -> Header {
        let (w, h) = (hd.width, hd.height)
        let k = hd.paletteCount, count = hd.escapeBytes, m = hd.nibbleRows
        let gw = DepthFrameCodec.rowGroups(w)
        let size = DepthFrameCodec.payloadSize4(width: w, height: h, palette: k, escapes: count, nibbleRows: m)
        let payload = nibbles.reserve(size + 8)
        let stored = hd.storedLowBytes ? count : 0  // the header checked that the frame holds them
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[DepthFrameCodec.headerSize..<(src.count - stored)]),
                            into: UnsafeMutableRawBufferPointer(rebasing: payload[0..<(size - stored)]))
        guard let pp = payload.baseAddress else { throw .noMemory("no scratch memory") }
        if stored > 0, let s = src.baseAddress {  // low bytes before high bytes, as in the plain layout
            (pp + size - count).copyMemory(from: pp + size - 2 * count, byteCount: count)
            (pp + size - 2 * count).copyMemory(from: s + src.count - count, byteCount: count)
        }
        let tp = try readPalette(pp, count: k)
        let modes = pp + 2 * k, residuals = modes + h
        let residualBytes = size - 2 * k - h - 2 * count
        // Row bytes, row sizes, padding nibbles and the escape count.
        var padding: UInt32 = 0  // the nibbles of the last group's lanes past the row
        if w % 8 != 0 { for j in (w % 8)..<8 { padding |= 0xF << UInt32(j < 4 ? 8 * j : 8 * (j - 4) + 4) } }
        // Nibble rows first (m × 4⌈w/8⌉ bytes), then byte rows (w bytes each), both contiguous.
        let byteSection = m * 4 * gw
        var nibbleRows = 0
        for y in 0..<h {
            let b = modes.load(fromByteOffset: y, as: UInt8.self)
            guard b < 8, b & 3 < UInt8(DepthFrameCodec.predictors3) else {
                throw .init(.corrupt, "row \(y) names layout \(b >> 2) and predictor \(b & 3) (0...1, 0...2)")
            }
            nibbleRows += Int(b >> 2)
        }
        guard nibbleRows == m else { throw .init(.corrupt, "the frame has \(nibbleRows) nibble rows, its header \(m)") }
        if padding != 0 {
            for r in 0..<m {
                let last = UInt32(littleEndian: residuals.loadUnaligned(fromByteOffset: 4 * (r * gw + gw - 1), as: UInt32.self))
                guard last & padding == 0 else { throw .init(.corrupt, "nibble row \(r) has residuals past its end") }
            }
        }
        // The escape count, row by row (each row's count tells `unpack4` how dense they are).
        let counts = mask.reserve(4 * h).bindMemory(to: UInt32.self)
        guard let cp = counts.baseAddress else { throw .noMemory("no scratch memory") }
        var needed = 0, nibbleAt = 0, byteAt = byteSection
        for y in 0..<h {
            let c: Int
            if modes.load(fromByteOffset: y, as: UInt8.self) >= 4 {
                c = DepthFrameCodec.nibbleEscapes(residuals + nibbleAt, groups: gw)
                nibbleAt += 4 * gw
            } else {
                c = DepthFrameCodec.byteCount(0xFF, in: UnsafeRawBufferPointer(start: residuals + byteAt, count: w))
                byteAt += w
            }
            cp[y] = UInt32(truncatingIfNeeded: c)
            needed += c
        }
        guard needed == count else {
            throw .init(.corrupt, "the frame has \(needed) escaped residuals but its escape list \(count) entries")
        }
        let lanes = DepthFrameCodec.paddedRowLanes(w)
        let row = rows.reserve(2 * lanes * 2 + gw * 8 + 16)
        guard let rp = row.baseAddress, let d = dst.baseAddress else { throw .noMemory("no scratch memory") }
        DepthFrameCodec.unpack4(modes: modes, nibbleRows: residuals, byteRows: residuals + byteSection, escapes: residuals + residualBytes, escapeCount: count,
                                rowEscapes: UnsafePointer(cp), palette: k > 0 ? UnsafePointer(tp) : nil, paletteCount: k,
                                width: w, height: h, rows: rp, into: d, kernel: kernel)
        return hd
    }

    /// The lanes of `z` in `mask` (escapes, in lane order, each holding its layout's T) become
    /// T + the next escapes (mod 2^16).
    /// Two escapes per group without a branch (a group has at most two in nearly every frame; in
    /// rows where escapes are dense a branch per group mispredicts: measured, it cost a third of
    /// the decode time on time-of-flight depth), a loop for the rest. Reads one entry past the escapes
    /// at most: the payload scratch has 8 spare bytes.
    @inline(__always)
    static func patchEscapes(_ z: inout SIMD8<UInt16>, _ mask: Int, _ low: UnsafeRawPointer,
                             _ high: UnsafeRawPointer, _ e: inout Int) {
        var m = mask
        for _ in 0..<2 {
            let j = (m | 0x100).trailingZeroBitCount  // 8: no escape, the zero mask
            let v = UInt16(low.load(fromByteOffset: e, as: UInt8.self)) | UInt16(high.load(fromByteOffset: e, as: UInt8.self)) &<< 8
            z &+= SIMD8(repeating: v) & oneHotLanes.load(fromByteOffset: 16 &* j, as: SIMD8<UInt16>.self)
            e &+= m != 0 ? 1 : 0
            m &= m &- 1
        }
        while m != 0 {
            let j = m.trailingZeroBitCount
            m &= m &- 1
            let v = UInt16(low.load(fromByteOffset: e, as: UInt8.self)) | UInt16(high.load(fromByteOffset: e, as: UInt8.self)) &<< 8
            z &+= SIMD8(repeating: v) & oneHotLanes.load(fromByteOffset: 16 &* j, as: SIMD8<UInt16>.self)
            e &+= 1
        }
    }

    /// Lane j all ones, the others 0 (9 × 16 bytes: entry 8 is all zeros).
    nonisolated(unsafe) static let oneHotLanes: UnsafeRawPointer = {
        let t = UnsafeMutableRawPointer.allocate(byteCount: 9 * 16, alignment: 16)
        for j in 0..<9 {
            var v = SIMD8<UInt16>.zero
            if j < 8 { v[j] = 0xFFFF }
            t.storeBytes(of: v, toByteOffset: 16 * j, as: SIMD8<UInt16>.self)
        }
        return UnsafeRawPointer(t)
    }()

    /// One row of `unpack4` under predictor `mode` and a layout: residuals (+ escapes) → prediction,
    /// prefix sum → the filled row (`cur`) and the output (ranks clamped to K when there is a
    /// palette; 0 for invalid pixels).
    @inline(__always)
    static func decodeRow4(mode: Int, nibble: Bool, dense: Bool, _ row: UnsafeRawPointer, _ tail: UnsafeRawPointer,
                           _ low: UnsafeRawPointer, _ high: UnsafeRawPointer,
                           _ e: inout Int, _ prev: UnsafeMutableRawPointer, _ cur: UnsafeMutableRawPointer,
                           _ last: inout SIMD8<UInt16>, _ out: inout UnsafeMutableRawPointer,
                           _ gw: Int, _ full: Int, _ w: Int, _ palette: UnsafePointer<UInt16>?, _ top: SIMD8<UInt16>) {
        let ff: UInt64 = 0xFFFF_FFFF_FFFF_FFFF, low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var running = last
        for gx in 0..<gw {
            let o = gx &* 16
            var z: SIMD8<UInt16>
            let valid: SIMD8<UInt16>
            if nibble {
                let p = UInt32(littleEndian: row.loadUnaligned(fromByteOffset: gx &* 4, as: UInt32.self))
                var t = UInt64(p)
                t = (t | (t &<< 16)) & 0x0000_FFFF_0000_FFFF
                t = (t | (t &<< 8)) & 0x00FF_00FF_00FF_00FF
                z = unsafeBitCast(SIMD2<UInt64>(t & 0x000F_000F_000F_000F, (t &>> 4) & 0x000F_000F_000F_000F), to: SIMD8<UInt16>.self)
                valid = nonzeroLanes(z)
                z = z &- 1
                // Lane mask of the 15-nibbles: bit 4i of q for nibble i (byte i/2, low or high
                // half = lane i/2 or i/2 + 4), gathered by multiplications (no carries).
                let q = UInt64(p & (p &>> 1) & (p &>> 2) & (p &>> 3) & 0x1111_1111)
                if dense || q != 0 {
                    let lowLanes = (((q & 0x0101_0101) &* 0x0020_4081) &>> 21) & 0xF
                    let highLanes = ((((q &>> 4) & 0x0101_0101) &* 0x0020_4081) &>> 21) & 0xF
                    patchEscapes(&z, Int(truncatingIfNeeded: lowLanes | highLanes &<< 4), low, high, &e)
                }
            } else {
                let word = gx < full ? row.loadUnaligned(fromByteOffset: gx &* 8, as: UInt64.self)
                                     : tail.loadUnaligned(as: UInt64.self)
                z = widen(word)
                valid = nonzeroLanes(z)
                z = z &- 1
                let t = word ^ ff  // zero bytes where the residual byte is 255
                let y = ~(((t & low7) &+ low7) | t | low7)  // 0x80 in those bytes
                if dense || y != 0 {  // bits 7, 15 ... 63 → bits 56 ... 63 (one multiplication, no carries)
                    patchEscapes(&z, Int(truncatingIfNeeded: ((y &>> 7) &* 0x0102_0408_1020_4080) &>> 56), low, high, &e)
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
            var v = dlt &+ unsafeBitCast(unsafeBitCast(dlt, to: SIMD2<UInt64>.self) &<< 16, to: SIMD8<UInt16>.self)
            v = v &+ unsafeBitCast(unsafeBitCast(v, to: SIMD2<UInt64>.self) &<< 32, to: SIMD8<UInt16>.self)
            v = v &+ SIMD8<UInt16>(lowHalf: .zero, highHalf: SIMD4(repeating: v[3]))
            v = v &+ running
            running = SIMD8(repeating: v[7])
            cur.storeBytes(of: v, toByteOffset: 16 &+ o, as: SIMD8<UInt16>.self)
            let sample = (palette != nil ? pointwiseMin(v, top) : v) & valid  // ranks go through the palette later
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

    /// `p[x] = palette[p[x]]` for x < count, four at a time: one 8-byte load and store (each
    /// 16-bit field maps to the same field, whatever the byte order).
    @inline(__always)
    static func mapThroughPalette(_ p: UnsafeMutablePointer<UInt16>, count: Int, _ palette: UnsafePointer<UInt16>) {
        let raw = UnsafeMutableRawPointer(p)
        var x = 0
        while x &+ 8 <= count {  // two independent words per step
            let q = raw.loadUnaligned(fromByteOffset: x &* 2, as: UInt64.self)
            let r = raw.loadUnaligned(fromByteOffset: x &* 2 &+ 8, as: UInt64.self)
            let a = UInt64(palette[Int(q & 0xFFFF)]), b = UInt64(palette[Int((q &>> 16) & 0xFFFF)])
            let c = UInt64(palette[Int((q &>> 32) & 0xFFFF)]), d = UInt64(palette[Int(q &>> 48)])
            let e = UInt64(palette[Int(r & 0xFFFF)]), f = UInt64(palette[Int((r &>> 16) & 0xFFFF)])
            let g = UInt64(palette[Int((r &>> 32) & 0xFFFF)]), h = UInt64(palette[Int(r &>> 48)])
            raw.storeBytes(of: a | b &<< 16 | c &<< 32 | d &<< 48, toByteOffset: x &* 2, as: UInt64.self)
            raw.storeBytes(of: e | f &<< 16 | g &<< 32 | h &<< 48, toByteOffset: x &* 2 &+ 8, as: UInt64.self)
            x &+= 8
        }
        while x &+ 4 <= count {
            let q = raw.loadUnaligned(fromByteOffset: x &* 2, as: UInt64.self)
            let a = UInt64(palette[Int(q & 0xFFFF)]), b = UInt64(palette[Int((q &>> 16) & 0xFFFF)])
            let c = UInt64(palette[Int((q &>> 32) & 0xFFFF)]), d = UInt64(palette[Int(q &>> 48)])
            raw.storeBytes(of: a | b &<< 16 | c &<< 32 | d &<< 48, toByteOffset: x &* 2, as: UInt64.self)
            x &+= 4
        }
        while x < count {
            p[x] = palette[Int(p[x])]
            x &+= 1
        }
    }

    /// Rows (+ escapes) → values → samples. The caller has checked the row bytes, the row sizes,
    /// the padding nibbles and that the escapes (E low bytes, then E high bytes at `escapes`)
    /// hold one entry per escape, with 8 readable bytes after them; `rowEscapes[y]` is row y's
    /// count. Cannot fail.
    /// `kernel`: `.avx2` runs the C twin (`cks_depth_unpack4_avx2`: escapes placed by a byte
    /// shuffle per group, no branch), bit-identical to this Swift kernel.
    static func unpack4(modes: UnsafeRawPointer, nibbleRows: UnsafeRawPointer, byteRows: UnsafeRawPointer, escapes: UnsafeRawPointer, escapeCount: Int,
                        rowEscapes: UnsafePointer<UInt32>, palette: UnsafePointer<UInt16>?, paletteCount k: Int, width w: Int, height h: Int,
                        rows: UnsafeMutableRawPointer, into d: UnsafeMutablePointer<UInt16>, kernel: SIMDKernel = SIMDDispatch.kernel) {
        if SIMDDispatch.resolve(kernel) == .avx2 {
            cks_depth_unpack4_avx2(modes.assumingMemoryBound(to: UInt8.self), nibbleRows.assumingMemoryBound(to: UInt8.self),
                                   byteRows.assumingMemoryBound(to: UInt8.self), escapes.assumingMemoryBound(to: UInt8.self),
                                   escapeCount, palette, k, w, h, rows.assumingMemoryBound(to: UInt8.self), d)
            return
        }
        let gw = rowGroups(w)
        let lanes = paddedRowLanes(w)
        rows.initializeMemory(as: UInt8.self, repeating: 0, count: 4 * lanes + gw * 8 + 16)
        var prev = rows, cur = rows + 2 * lanes
        let bytes = rows + 4 * lanes  // a byte row's last partial group, zero-padded
        let top = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: k))
        var last = SIMD8<UInt16>(repeating: 0)
        var e = 0
        var out = UnsafeMutableRawPointer(d)
        let full = w / 8
        let low = escapes, high = escapes + escapeCount
        var nibbleRow = nibbleRows, byteRow = byteRows
        for y in 0..<h {
            let b = Int(modes.load(fromByteOffset: y, as: UInt8.self))
            // Rows where escapes are dense (more than one per 4 groups) patch them without a
            // branch per group; sparse rows branch (well predicted there).
            let escaped = Int(rowEscapes[y])
            if b < 4 && full < gw { bytes.copyMemory(from: byteRow + full &* 8, byteCount: w &- full &* 8) }
            // One loop per predictor, layout and escape density (constants in each, after inlining).
            switch b | (4 &* escaped > gw ? 8 : 0) {
            case 0: decodeRow4(mode: 0, nibble: false, dense: false, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 1: decodeRow4(mode: 1, nibble: false, dense: false, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 2: decodeRow4(mode: 2, nibble: false, dense: false, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 4: decodeRow4(mode: 0, nibble: true, dense: false, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 5: decodeRow4(mode: 1, nibble: true, dense: false, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 6: decodeRow4(mode: 2, nibble: true, dense: false, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 8: decodeRow4(mode: 0, nibble: false, dense: true, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 9: decodeRow4(mode: 1, nibble: false, dense: true, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 10: decodeRow4(mode: 2, nibble: false, dense: true, byteRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 12: decodeRow4(mode: 0, nibble: true, dense: true, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 13: decodeRow4(mode: 1, nibble: true, dense: true, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            case 14: decodeRow4(mode: 2, nibble: true, dense: true, nibbleRow, bytes, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top)
            default: break  // the caller checked the row bytes
            }
            if b >= 4 { nibbleRow += 4 &* gw } else { byteRow += w }
            if let palette { mapThroughPalette(d + y &* w, count: w, palette) }
            // Padding lanes hold the row's last filled value (P[w] = P[w − 1]); P[−1] = P[0].
            let c16 = cur.assumingMemoryBound(to: UInt16.self)
            for x in (8 + gw * 8)..<lanes { c16[x] = last[0] }
            c16[7] = c16[8]
            swap(&prev, &cur)
        }
    }
}
