/// What a stored depth-like frame holds (`ck_depth_kind`).
public enum PixelKind: UInt8, Sendable, CaseIterable {
    /// IEEE binary16 metres, 0 = invalid (phone LiDAR, MultiScan).
    case float16Metres = 1
    /// Unsigned 16-bit millimetres, 0 = invalid (RGB-D cameras, depth PNGs).
    case millimetres = 2
    /// Unsigned 8-bit values (confidence).
    case bytes = 3

    /// Bytes per pixel.
    public var bytesPerPixel: Int { self == .bytes ? 1 : 2 }
}

/// The native frame codec: lossless, for 16-bit depth (float16 bits or millimetres) and 8-bit maps.
///
/// Four frame versions exist. The encoder writes version 4 (see `DepthFrameCodecV4.swift`:
/// version 3's value-rank palette and per-row predictor on the filled image, each row's residuals
/// as nibble pairs or bytes, one zstd frame) unless asked for version 1, 2 or 3 (appending to a
/// `.ckdepth` file of that version; `DepthFrameCodecV2.swift`, `DepthFrameCodecV3.swift`); the
/// decoder reads all four. Every version has the
/// same 32-byte header; only the meaning of the 16-bit sections changes. 8-bit frames are the same
/// in every version.
///
/// Version-1 16-bit frames, in raster order:
/// 1. Prediction: each valid pixel is predicted by the last valid pixel before it; the residual is
///    zigzag-coded (small ± → small unsigned). Invalid pixels (0) have residual 0 and a bit in an
///    invalid mask, so decoding is a running sum followed by zeroing the masked pixels.
/// 2. Packing: residuals below 15 become 4-bit nibbles, two per byte (byte j of each group of 8
///    pixels holds pixel j in its low nibble and pixel j + 4 in its high nibble, so both sides are
///    plain SWAR shifts); a residual of 15 or more writes nibble 15 and goes to an escape list in
///    pixel order, as one byte (residual − 15, when below 255) or as 255 and the residual's two
///    bytes (little-endian).
/// 3. Entropy coding: the nibble plane, the escape list and the mask are each one zstd frame. Half
///    as many bytes reach zstd as with byte planes, for a better ratio (measured; BENCHMARKS.md).
/// 8-bit frames are one zstd frame of the raw bytes.
///
/// Encoded frame (little-endian), 32-byte header then the zstd frames in this order:
/// `"CF"`, `u8 version (1 to 4)`, `u8 kind`, `u32 width`, `u32 height`, `u32 flags (0; versions 2 to 4:
/// the header check, see `headerCheck`)`,
/// `u32 nibble-plane size`, `u32 escape-list bytes (uncompressed; version 2: escape count)`,
/// `u32 escape size`, `u32 mask size` (versions 3 and 4, 16-bit kinds: palette size, escape
/// count, the size of what follows the header (the zstd frame; version 4 with stored low bytes:
/// and then those), 0 (version 4: the number of nibble rows, + 2^16 when the escapes' low bytes
/// are stored after the zstd frame)).
/// Decoding treats the frame as hostile and fails with `corrupt`, never touching memory outside
/// the given buffers; the destination is written only when the whole frame is valid (every check
/// runs on scratch memory first), so it is untouched after any error.
public final class DepthFrameCodec {
    public static let headerSize = 32
    /// The version the encoder writes by default.
    public static let version: UInt8 = 4
    /// The versions the decoder reads.
    public static let versions: ClosedRange<UInt8> = 1...4
    /// Largest accepted width or height (`CK_DEPTH_MAX_DIMENSION`).
    public static let maxDimension = 16384
    let zstd: ZstdContext
    let nibbles = ScratchBuffer(), escapes = ScratchBuffer(), mask = ScratchBuffer(), spill = ScratchBuffer()
    let bytes = ScratchBuffer(), rows = ScratchBuffer(), alternative = ScratchBuffer(), rankTable = ScratchBuffer()
    /// The kernel version-4 frames decode with (tests set `.baseline` to compare it with the AVX2 twin).
    var kernel: SIMDKernel = SIMDDispatch.kernel

    /// - Parameter level: zstd level (1 is the measured sweet spot).
    public init(level: Int32 = 1) throws(CaptureKitError) {
        zstd = try ZstdContext(level: level)
    }

    /// Largest encoded size of a frame of `pixels` pixels of `kind`, in either version (a reader
    /// uses it to bound the records of old files too).
    public static func bound(pixels n: Int, kind: PixelKind) -> Int {
        if kind == .bytes { return headerSize + ZstdContext.bound(n) }
        let groups = (n + 7) / 8
        let v1 = headerSize + ZstdContext.bound(groups * 4) + ZstdContext.bound(3 * n) + ZstdContext.bound(groups)
        // Version 2 pads every row to whole groups: at most n/8 + one extra group per row, and a
        // frame has at most min(n, maxDimension) rows.
        let rowGroups = groups + min(n, maxDimension)
        let v2 = headerSize + ZstdContext.bound(rowGroups * 4) + ZstdContext.bound(2 * n) + ZstdContext.bound(rowGroups)
        return max(v1, v2, bound3(pixels: n))
    }

    // MARK: encode

    /// Encodes a 16-bit frame (`kind` float16Metres or millimetres) of `width × height` pixels
    /// (`src.count` must equal width × height); returns the encoded size.
    /// - Parameter version: the frame version to write (2, or 1 for a version-1 file).
    /// - Throws: `bufferTooSmall` if `dst` is too small (use `bound`).
    public func encode(_ src: UnsafeBufferPointer<UInt16>, width: Int, height: Int, kind: PixelKind,
                       into dst: UnsafeMutableRawBufferPointer, version: UInt8 = DepthFrameCodec.version) throws(CaptureKitError) -> Int {
        if version >= 4 { return try encode4(src, width: width, height: height, kind: kind, into: dst) }
        if version == 3 { return try encode3(src, width: width, height: height, kind: kind, into: dst) }
        if version == 2 { return try encode2(src, width: width, height: height, kind: kind, into: dst) }
        let n = src.count
        let groups = (n + 7) / 8
        let nib = nibbles.reserve(groups * 4), esc = escapes.reserve(3 * groups * 8 + 16), msk = mask.reserve(groups)
        let (escapeBytes, invalid) = DepthFrameCodec.pack(src, nibbles: nib, escapes: esc, mask: msk)
        guard dst.count >= DepthFrameCodec.headerSize else {
            throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the \(DepthFrameCodec.headerSize)-byte header")
        }
        var offset = DepthFrameCodec.headerSize
        func put(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) -> Int {
            let size = try compress(bytes, into: UnsafeMutableRawBufferPointer(rebasing: dst[offset...]))
            offset += size
            return size
        }
        let nibbleSize = try put(UnsafeRawBufferPointer(nib))
        let escapeSize = escapeBytes > 0 ? try put(UnsafeRawBufferPointer(rebasing: esc[0..<escapeBytes])) : 0
        let maskSize = invalid > 0 ? try put(UnsafeRawBufferPointer(msk)) : 0
        DepthFrameCodec.writeHeader(dst, version: 1, kind: kind, width: width, height: height,
                                    sizes: [nibbleSize, escapeBytes, escapeSize, maskSize])
        return offset
    }

    /// `encode` for version 2.
    func encode2(_ src: UnsafeBufferPointer<UInt16>, width: Int, height: Int, kind: PixelKind,
                 into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        let n = src.count
        let groups = height * DepthFrameCodec.rowGroups(width)
        let nib = nibbles.reserve(groups * 4), esc = escapes.reserve(2 * n + 16), side = mask.reserve(height + groups)
        let row = rows.reserve(DepthFrameCodec.rowScratchBytes(width))
        let (count, _) = DepthFrameCodec.pack2(src, width: width, height: height, nibbles: nib, escapes: esc,
                                               side: side, rows: row)
        guard dst.count >= DepthFrameCodec.headerSize else {
            throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the \(DepthFrameCodec.headerSize)-byte header")
        }
        var offset = DepthFrameCodec.headerSize
        func put(_ bytes: UnsafeRawBufferPointer, huffmanAlways: Bool) throws(CaptureKitError) -> Int {
            let out = UnsafeMutableRawBufferPointer(rebasing: dst[offset...])
            let size = huffmanAlways ? try compress(bytes, into: out) : try compressPreferringRaw(bytes, into: out, frame: offset)
            offset += size
            return size
        }
        let nibbleSize = try put(UnsafeRawBufferPointer(nib), huffmanAlways: true)
        let escapeSize = count > 0 ? try put(UnsafeRawBufferPointer(rebasing: esc[0..<(2 * count)]), huffmanAlways: false) : 0
        let sideSize = try put(UnsafeRawBufferPointer(side), huffmanAlways: false)
        DepthFrameCodec.writeHeader(dst, version: 2, kind: kind, width: width, height: height,
                                    sizes: [nibbleSize, count, escapeSize, sideSize])
        return offset
    }

    /// Encodes an 8-bit frame of `width × height` bytes.
    public func encode(bytes src: UnsafeRawBufferPointer, width: Int, height: Int,
                       into dst: UnsafeMutableRawBufferPointer, version: UInt8 = DepthFrameCodec.version) throws(CaptureKitError) -> Int {
        guard dst.count >= DepthFrameCodec.headerSize else {
            throw .bufferTooSmall("output holds \(dst.count) bytes, fewer than the \(DepthFrameCodec.headerSize)-byte header")
        }
        let size = try compress(src, into: UnsafeMutableRawBufferPointer(rebasing: dst[DepthFrameCodec.headerSize...]))
        DepthFrameCodec.writeHeader(dst, version: version, kind: .bytes, width: width, height: height, sizes: [size, 0, 0, 0])
        return DepthFrameCodec.headerSize + size
    }

    /// One zstd frame of `src` into `dst`. zstd may refuse a destination smaller than its worst
    /// case even when the result would fit, so a tight `dst` is served through scratch memory:
    /// any destination at least as large as the result works (same bytes either way).
    /// - Throws: `bufferTooSmall` when the result does not fit.
    /// - Parameter huffman: false for raw literals (`ZstdContext.compress`).
    /// - Parameters: longMatches, levelOverride: `ZstdContext.compress`'s (version 4).
    func compress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer,
                  huffman: Bool = true, longMatches: Bool = false, levelOverride: Int32? = nil) throws(CaptureKitError) -> Int {
        let worst = ZstdContext.bound(src.count)
        if dst.count >= worst {
            return try zstd.compress(src, into: dst, huffman: huffman, longMatches: longMatches, levelOverride: levelOverride)
        }
        let tmp = spill.reserve(worst)
        let size = try zstd.compress(src, into: tmp, huffman: huffman, longMatches: longMatches, levelOverride: levelOverride)
        return try place(UnsafeRawBufferPointer(rebasing: tmp[0..<size]), into: dst)
    }

    /// `compress` for version 2's escape and side sections: raw literals unless Huffman saves at
    /// least 1/64 of the frame (`frame` bytes before this section, plus the section). That is
    /// zstd's own minimum gain for Huffman literals within a block, taken over the whole frame:
    /// a Huffman table costs the decoder a few microseconds whatever the section's size (about
    /// 8 of 90 µs for both sections of a LiDAR frame, where they save 1.5 % of its bytes);
    /// on noisier frames with many escapes Huffman saves 10 % and is kept.
    func compressPreferringRaw(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer,
                               frame: Int) throws(CaptureKitError) -> Int {
        let worst = ZstdContext.bound(src.count)
        let both = alternative.reserve(2 * worst)
        let rawOut = UnsafeMutableRawBufferPointer(rebasing: both[0..<worst])
        let huffmanOut = UnsafeMutableRawBufferPointer(rebasing: both[worst...])
        var chosen = UnsafeRawBufferPointer(rebasing: rawOut[0..<(try zstd.compress(src, into: rawOut, huffman: false))])
        let raw = chosen.count
        // Huffman cannot save more than the whole section: no second compression when that is short of 1/64.
        if raw * 64 >= frame + raw {
            let huffman = try zstd.compress(src, into: huffmanOut, huffman: true)
            if huffman < raw && (raw - huffman) * 64 >= frame + raw {
                chosen = UnsafeRawBufferPointer(rebasing: huffmanOut[0..<huffman])
            }
        }
        return try place(chosen, into: dst)
    }

    /// Copies a compressed section to the start of `dst`; returns its size.
    /// - Throws: `bufferTooSmall` when it does not fit.
    func place(_ section: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        guard section.count <= dst.count, let d = dst.baseAddress, let t = section.baseAddress else {
            throw .bufferTooSmall("a \(section.count)-byte section does not fit the \(dst.count) bytes left")
        }
        d.copyMemory(from: t, byteCount: section.count)
        return section.count
    }

    static func writeHeader(_ dst: UnsafeMutableRawBufferPointer, version: UInt8, kind: PixelKind, width: Int, height: Int, sizes: [Int]) {
        dst[0] = 0x43  // "C"
        dst[1] = 0x46  // "F"
        dst[2] = version
        dst[3] = kind.rawValue
        let words = [width, height, 0] + sizes
        for (i, w) in words.enumerated() {
            dst.storeBytes(of: UInt32(truncatingIfNeeded: w).littleEndian, toByteOffset: 4 + 4 * i, as: UInt32.self)
        }
        if version >= 2 {
            dst.storeBytes(of: headerCheck(UnsafeRawBufferPointer(dst)).littleEndian, toByteOffset: 12, as: UInt32.self)
        }
    }

    /// Version 2's header check (the word at offset 12, 0 in version 1): CRC-32 of the 32 header
    /// bytes with that word taken as 0. Every damaged header is then corrupt, not a frame of
    /// another width that happens to have the same number of groups.
    static func headerCheck(_ h: UnsafeRawBufferPointer) -> UInt32 {
        let zero: UInt32 = 0
        var crc = Zlib.crc32(UnsafeRawBufferPointer(rebasing: h[0..<12]))
        crc = withUnsafeBytes(of: zero) { Zlib.crc32($0, crc) }
        return Zlib.crc32(UnsafeRawBufferPointer(rebasing: h[16..<32]), crc)
    }

    /// The top bits (15, 31, 47, 63) of `w` as bits 0...3.
    @inline(__always)
    static func gatherTopBits(_ w: UInt64) -> UInt64 {
        let f = w &>> 15  // bits 0, 16, 32, 48
        return (f | (f &>> 15) | (f &>> 30) | (f &>> 45)) & 0xF
    }

    /// Packs eight nibble-sized lanes (< 16) into 4 bytes: byte j = lane j | lane (j + 4) << 4.
    @inline(__always)
    static func packNibbles(_ z: SIMD8<UInt16>) -> UInt32 {
        let w = unsafeBitCast(z, to: SIMD2<UInt64>.self)
        var t = w.x | (w.y &<< 4)
        t = (t | (t &>> 8)) & 0x0000_FFFF_0000_FFFF
        t = (t | (t &>> 16)) & 0xFFFF_FFFF
        return UInt32(truncatingIfNeeded: t)
    }

    /// Prediction, zigzag, nibble packing, escapes and the invalid mask for a whole frame.
    /// Returns (escape-list bytes, invalid count). `escapes` must hold 3 bytes per pixel.
    public static func pack(_ src: UnsafeBufferPointer<UInt16>, nibbles: UnsafeMutableRawBufferPointer,
                     escapes: UnsafeMutableRawBufferPointer, mask: UnsafeMutableRawBufferPointer) -> (Int, Int) {
        let n = src.count
        guard n > 0, let s = src.baseAddress, let np = nibbles.baseAddress, let ep = escapes.baseAddress,
              let mp = mask.baseAddress else { return (0, 0) }
        let sr = UnsafeRawPointer(s)
        var last: UInt16 = 0       // last valid value before the current pixel
        var escapeBytes = 0, invalid = 0
        var g = 0                  // group index; pixels 8g ..< 8g + 8
        let groups = (n + 7) / 8
        while g < groups {
            let i = g * 8
            var z: SIMD8<UInt16>
            var bits: UInt8 = 0
            if i > 0 && i + 8 <= n {
                let x = sr.loadUnaligned(fromByteOffset: i * 2, as: SIMD8<UInt16>.self)
                let prev = sr.loadUnaligned(fromByteOffset: i * 2 - 2, as: SIMD8<UInt16>.self)
                // A lane v is zero ⇔ the top bit of v | −v is clear (plain SIMD arithmetic; SIMD
                // comparisons on UInt16 lanes compile to per-lane loops here).
                let nonzero = (x | (0 &- x)) & (prev | (0 &- prev))
                let zw = unsafeBitCast(~nonzero & 0x8000, to: SIMD2<UInt64>.self)
                if zw.x | zw.y == 0 {
                    // Every pixel and its left neighbour valid: the prediction is the left neighbour.
                    let r = unsafeBitCast(x &- prev, to: SIMD8<Int16>.self)
                    z = unsafeBitCast((r &<< 1) ^ (r &>> 15), to: SIMD8<UInt16>.self)
                    last = x[7]
                } else {
                    (z, bits, last) = scalarGroup(s, i, min(8, n - i), last)
                }
            } else {
                (z, bits, last) = scalarGroup(s, i, min(8, n - i), last)
            }
            if bits != 0 { invalid += bits.nonzeroBitCount }
            mp.storeBytes(of: bits, toByteOffset: g, as: UInt8.self)
            // Lanes ≥ 15 need an escape: top bit of (z + 0x7FF1) | z (16-bit wrapping lanes).
            let esc = unsafeBitCast(((z &+ 0x7FF1) | z) & 0x8000, to: SIMD2<UInt64>.self)
            if esc.x | esc.y != 0 {
                var zw = unsafeBitCast(z, to: SIMD2<UInt64>.self)
                var lanes = gatherTopBits(esc.x) | (gatherTopBits(esc.y) << 4)
                // Escaped lanes in pixel order: their values to the list, nibble 15 in the plane.
                while lanes != 0 {
                    let k = lanes.trailingZeroBitCount
                    lanes &= lanes - 1
                    let shift = UInt64((k & 3) * 16)
                    let v = Int(((k < 4 ? zw.x : zw.y) &>> shift) & 0xFFFF)
                    if v - 15 < 255 {
                        ep.storeBytes(of: UInt8(truncatingIfNeeded: v - 15), toByteOffset: escapeBytes, as: UInt8.self)
                        escapeBytes += 1
                    } else {
                        ep.storeBytes(of: UInt8(255), toByteOffset: escapeBytes, as: UInt8.self)
                        ep.storeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian, toByteOffset: escapeBytes + 1, as: UInt16.self)
                        escapeBytes += 3
                    }
                    if k < 4 { zw.x = (zw.x & ~(0xFFFF &<< shift)) | (15 &<< shift) } else { zw.y = (zw.y & ~(0xFFFF &<< shift)) | (15 &<< shift) }
                }
                z = unsafeBitCast(zw, to: SIMD8<UInt16>.self)
            }
            np.storeBytes(of: packNibbles(z).littleEndian, toByteOffset: g * 4, as: UInt32.self)
            g += 1
        }
        return (escapeBytes, invalid)
    }

    /// Residuals of up to 8 pixels from `i` with the last-valid rule; lanes past `count` are 0.
    @inline(__always)
    static func scalarGroup(_ s: UnsafePointer<UInt16>, _ i: Int, _ count: Int, _ lastIn: UInt16) -> (SIMD8<UInt16>, UInt8, UInt16) {
        var z = SIMD8<UInt16>(repeating: 0)
        var bits: UInt8 = 0
        var last = lastIn
        for k in 0..<count {
            let x = s[i + k]
            if x == 0 {
                bits |= 1 << UInt8(k)
            } else {
                let r = Int16(bitPattern: x &- last)
                z[k] = UInt16(bitPattern: (r &<< 1) ^ (r >> 15))
                last = x
            }
        }
        return (z, bits, last)
    }

    // MARK: decode

    /// A parsed, checked frame header.
    public struct Header: Equatable, Sendable {
        /// The frame version (1 to 4).
        public var version: UInt8
        public var kind: PixelKind
        public var width: Int, height: Int
        var nibbleSize: Int, escapeBytes: Int, escapeSize: Int, maskSize: Int
        /// Versions 3, 4: the palette's size K (0 = none).
        var paletteCount = 0
        /// Version 4: the number of rows in the nibble layout.
        var nibbleRows = 0
        /// Version 4: the escapes' low bytes follow the zstd frame, uncompressed (not in it).
        var storedLowBytes = false
        public var pixels: Int { width * height }
    }

    /// Reads and checks a frame header against the frame's size.
    /// - Throws: `corrupt` for anything inconsistent.
    public static func header(_ src: UnsafeRawBufferPointer) throws(CaptureKitError) -> Header {
        guard src.count >= headerSize else { throw .init(.corrupt, "frame of \(src.count) bytes is shorter than its \(headerSize)-byte header") }
        guard src[0] == 0x43, src[1] == 0x46 else { throw .init(.corrupt, "not a CaptureKit frame (bad magic)") }
        let version = src[2]
        guard versions.contains(version) else {
            throw .init(.corrupt, "frame codec version \(version) is not supported (this library reads \(versions.lowerBound)...\(versions.upperBound))")
        }
        guard let kind = PixelKind(rawValue: src[3]) else { throw .init(.corrupt, "unknown pixel kind \(src[3])") }
        func word(_ i: Int) -> Int { Int(UInt32(littleEndian: src.loadUnaligned(fromByteOffset: 4 + 4 * i, as: UInt32.self))) }
        let (w, h, flags) = (word(0), word(1), word(2))
        let (a, count, b, c) = (word(3), word(4), word(5), word(6))
        guard (1...maxDimension).contains(w), (1...maxDimension).contains(h) else {
            throw .init(.corrupt, "frame dimensions \(w)x\(h) are out of range")
        }
        if version == 1 {
            guard flags == 0 else { throw .init(.corrupt, "unknown frame flags \(flags)") }
        } else {
            guard UInt32(flags) == headerCheck(UnsafeRawBufferPointer(rebasing: src[0..<headerSize])) else {
                throw .init(.corrupt, "the frame header fails its check (damaged header)")
            }
        }
        if version >= 3 && kind != .bytes {
            // Words 3...6: palette size K, escape count E, the size after the header, 0 (version 4:
            // the number of nibble rows and a flag).
            // Version 4, word 6: bits 0-15 the nibble rows, bit 16 the escape low bytes stored after
            // the zstd frame (`storedLowBytes`), the other bits 0.
            let m = version == 4 ? c & 0xFFFF : c, stored = version == 4 && c >> 16 == 1
            guard version == 4 ? c >> 17 == 0 && m <= h : c == 0, a <= maxPalette, a <= w * h, count <= w * h,
                  headerSize + b == src.count, !stored || b >= count else {
                throw .init(.corrupt, "frame section sizes (palette \(a), escapes \(count), \(b) bytes, \(c)) do not match its \(src.count)-byte size")
            }
            return Header(version: version, kind: kind, width: w, height: h, nibbleSize: b, escapeBytes: count,
                          escapeSize: 0, maskSize: 0, paletteCount: a, nibbleRows: version == 4 ? m : 0, storedLowBytes: stored)
        }
        guard headerSize + a + b + c == src.count else {
            throw .init(.corrupt, "frame section sizes (\(a) + \(b) + \(c)) do not match its \(src.count)-byte size")
        }
        if kind == .bytes {
            guard count == 0, b == 0, c == 0 else { throw .init(.corrupt, "an 8-bit frame has a single section") }
        } else if version == 1 {
            guard count <= 3 * w * h, (count == 0) == (b == 0) else { throw .init(.corrupt, "escape-list size \(count) is inconsistent") }
        } else {
            guard count <= 8 * h * rowGroups(w), (count == 0) == (b == 0) else { throw .init(.corrupt, "escape count \(count) is inconsistent") }
            guard c > 0 else { throw .init(.corrupt, "a version-2 depth frame has a side section") }
        }
        return Header(version: version, kind: kind, width: w, height: h, nibbleSize: a, escapeBytes: count, escapeSize: b, maskSize: c)
    }

    /// Decodes a 16-bit frame into `dst` (`dst.count` must equal the frame's pixel count). `dst` is
    /// written only on success.
    /// - Throws: `corrupt` for any malformed frame; `invalidArgument` for a wrong `dst` size or an 8-bit frame.
    public func decode(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) -> Header {
        let h = try DepthFrameCodec.header(src)
        guard h.kind != .bytes else { throw .invalidArgument("an 8-bit frame cannot be decoded as 16-bit depth") }
        let n = h.pixels
        guard dst.count == n else { throw .invalidArgument("destination holds \(dst.count) pixels, the frame \(n)") }
        if h.version >= 4 { return try decode4(src, header: h, into: dst) }
        if h.version == 3 { return try decode3(src, header: h, into: dst) }
        if h.version == 2 { return try decode2(src, header: h, into: dst) }
        let groups = (n + 7) / 8
        let nib = nibbles.reserve(groups * 4), esc = escapes.reserve(h.escapeBytes + 16), msk = mask.reserve(groups)
        var offset = DepthFrameCodec.headerSize
        func take(_ size: Int, into out: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
            try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[offset..<(offset + size)]), into: out)
            offset += size
        }
        try take(h.nibbleSize, into: nib)
        if h.escapeBytes > 0 { try take(h.escapeSize, into: UnsafeMutableRawBufferPointer(rebasing: esc[0..<h.escapeBytes])) }
        if h.maskSize > 0 { try take(h.maskSize, into: msk) }
        try DepthFrameCodec.check(nibbles: UnsafeRawBufferPointer(nib), escapes: UnsafeRawBufferPointer(esc), escapeBytes: h.escapeBytes,
                                  mask: h.maskSize > 0 ? UnsafeRawBufferPointer(msk) : nil, pixels: n)
        try DepthFrameCodec.unpack(nibbles: UnsafeRawBufferPointer(nib), escapes: UnsafeRawBufferPointer(esc), escapeBytes: h.escapeBytes,
                                   mask: h.maskSize > 0 ? UnsafeRawBufferPointer(msk) : nil, into: dst)
        return h
    }

    /// `decode` for version 2: every check runs before `dst` is written.
    func decode2(_ src: UnsafeRawBufferPointer, header h: Header, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) -> Header {
        let groups = h.height * DepthFrameCodec.rowGroups(h.width)
        let count = h.escapeBytes
        let nib = nibbles.reserve(groups * 4), esc = escapes.reserve(2 * count + 16), side = mask.reserve(h.height + groups)
        let row = rows.reserve(DepthFrameCodec.unpackScratchBytes(h.width))
        var offset = DepthFrameCodec.headerSize
        func take(_ size: Int, into out: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
            try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[offset..<(offset + size)]), into: out)
            offset += size
        }
        try take(h.nibbleSize, into: nib)
        if count > 0 { try take(h.escapeSize, into: UnsafeMutableRawBufferPointer(rebasing: esc[0..<(2 * count)])) }
        try take(h.maskSize, into: side)
        let needed = DepthFrameCodec.escapeCount(UnsafeRawBufferPointer(nib))
        guard needed == count else {
            throw .init(.corrupt, "the frame has \(needed) escaped residuals but its escape section \(count) entries")
        }
        for y in 0..<h.height where side[y] > 1 { throw .init(.corrupt, "row \(y) names predictor \(side[y]) (0 or 1)") }
        DepthFrameCodec.unpack2(nibbles: UnsafeRawBufferPointer(nib), escapes: UnsafeRawBufferPointer(esc), escapeCount: count,
                                side: UnsafeRawBufferPointer(side), width: h.width, height: h.height, rows: row, into: dst)
        return h
    }

    /// Decodes an 8-bit frame into `dst` (`dst.count` must equal the frame's pixel count). `dst` is
    /// written only on success (zstd decodes into scratch memory first: it may fail half way).
    public func decode(bytes src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Header {
        let h = try DepthFrameCodec.header(src)
        guard h.kind == .bytes else { throw .invalidArgument("a 16-bit depth frame cannot be decoded as 8-bit values") }
        guard dst.count == h.pixels else { throw .invalidArgument("destination holds \(dst.count) pixels, the frame \(h.pixels)") }
        let tmp = bytes.reserve(h.pixels)
        try zstd.decompress(UnsafeRawBufferPointer(rebasing: src[DepthFrameCodec.headerSize...]), into: tmp)
        dst.copyMemory(from: UnsafeRawBufferPointer(tmp))
        return h
    }

    /// Checks what `unpack` would reject, without writing anything: the escape list holds exactly
    /// one well-formed entry per nibble 15 (all 8 lanes of every group, as `unpack` reads them) and
    /// the mask marks no pixel past the frame. After it passes, `unpack` cannot fail.
    /// - Throws: `corrupt`.
    static func check(nibbles: UnsafeRawBufferPointer, escapes: UnsafeRawBufferPointer, escapeBytes: Int,
                      mask: UnsafeRawBufferPointer?, pixels n: Int) throws(CaptureKitError) {
        guard n > 0, let np = nibbles.baseAddress, let ep = escapes.baseAddress else { return }
        let groups = (n + 7) / 8
        var escaped = 0
        for g in 0..<groups {
            let p = UInt32(littleEndian: np.loadUnaligned(fromByteOffset: g * 4, as: UInt32.self))
            escaped += (p & (p >> 1) & (p >> 2) & (p >> 3) & 0x1111_1111).nonzeroBitCount
        }
        var e = 0, entries = 0
        while e < escapeBytes {
            if ep.load(fromByteOffset: e, as: UInt8.self) < 255 {
                e += 1
            } else {
                guard e + 3 <= escapeBytes else { throw .init(.corrupt, "the escape list ends inside an entry") }
                let v = UInt16(littleEndian: ep.loadUnaligned(fromByteOffset: e + 1, as: UInt16.self))
                guard v >= 270 else { throw .init(.corrupt, "a long escape holds \(v), which has a short form") }
                e += 3
            }
            entries += 1
        }
        guard entries == escaped else {
            throw .init(.corrupt, "the frame has \(escaped) escaped residuals but its escape list \(entries) entries")
        }
        if let mask, let mp = mask.baseAddress, n % 8 != 0 {
            let bits = mp.load(fromByteOffset: groups - 1, as: UInt8.self)
            guard bits >> UInt8(n % 8) == 0 else { throw .init(.corrupt, "the invalid mask marks pixels past the frame") }
        }
    }

    /// Nibbles (+ escapes) → residuals → running sum → masked zeros.
    static func unpack(nibbles: UnsafeRawBufferPointer, escapes: UnsafeRawBufferPointer, escapeBytes: Int,
                       mask: UnsafeRawBufferPointer?, into dst: UnsafeMutableBufferPointer<UInt16>) throws(CaptureKitError) {
        let n = dst.count
        guard n > 0, let np = nibbles.baseAddress, let ep = escapes.baseAddress, let d = dst.baseAddress else { return }
        let dr = UnsafeMutableRawPointer(d)
        let ones: UInt64 = 0x0001_0001_0001_0001
        var last: UInt16 = 0
        var e = 0  // next escape byte
        let groups = (n + 7) / 8
        for g in 0..<groups {
            let p = UInt32(littleEndian: np.loadUnaligned(fromByteOffset: g * 4, as: UInt32.self))
            var t = UInt64(p)
            t = (t | (t &<< 16)) & 0x0000_FFFF_0000_FFFF
            t = (t | (t &<< 8)) & 0x00FF_00FF_00FF_00FF
            var z = unsafeBitCast(SIMD2<UInt64>(t & 0x000F_000F_000F_000F, (t &>> 4) & 0x000F_000F_000F_000F), to: SIMD8<UInt16>.self)
            if p & (p >> 1) & (p >> 2) & (p >> 3) & 0x1111_1111 != 0 {
                for k in 0..<8 where z[k] == 15 {
                    guard e < escapeBytes else { throw .init(.corrupt, "the frame has more escaped residuals than its escape list") }
                    let b = ep.load(fromByteOffset: e, as: UInt8.self)
                    if b < 255 {
                        z[k] = UInt16(b) + 15
                        e += 1
                    } else {
                        guard e + 3 <= escapeBytes else { throw .init(.corrupt, "the escape list ends inside an entry") }
                        let v = UInt16(littleEndian: ep.loadUnaligned(fromByteOffset: e + 1, as: UInt16.self))
                        guard v >= 270 else { throw .init(.corrupt, "a long escape holds \(v), which has a short form") }
                        z[k] = v
                        e += 3
                    }
                }
            }
            let r = (z &>> 1) ^ (0 &- (z & 1))
            // Prefix sums of each 4-lane half (64-bit shifts move whole lanes; 16-bit adds wrap per lane),
            // then the first half's total into the second half, then the previous group's last value.
            var v = r &+ unsafeBitCast(unsafeBitCast(r, to: SIMD2<UInt64>.self) &<< 16, to: SIMD8<UInt16>.self)
            v = v &+ unsafeBitCast(unsafeBitCast(v, to: SIMD2<UInt64>.self) &<< 32, to: SIMD8<UInt16>.self)
            let w = unsafeBitCast(v, to: SIMD2<UInt64>.self)
            v = v &+ unsafeBitCast(SIMD2<UInt64>(0, (w.x &>> 48) &* ones), to: SIMD8<UInt16>.self)
            v = v &+ SIMD8<UInt16>(repeating: last)
            last = v[7]
            if g * 8 + 8 <= n {
                dr.storeBytes(of: v, toByteOffset: g * 16, as: SIMD8<UInt16>.self)
            } else {
                for k in 0..<(n - g * 8) { d[g * 8 + k] = v[k] }
            }
        }
        guard e == escapeBytes else { throw .init(.corrupt, "the frame's escape list has \(escapeBytes - e) unused bytes") }
        if let mask, let mp = mask.baseAddress {
            for g in 0..<groups {
                let bits = mp.load(fromByteOffset: g, as: UInt8.self)
                if bits == 0 { continue }
                for k in 0..<8 where bits & (1 << UInt8(k)) != 0 {
                    let i = g * 8 + k
                    guard i < n else { throw .init(.corrupt, "the invalid mask marks pixels past the frame") }
                    d[i] = 0
                }
            }
        }
    }
}
