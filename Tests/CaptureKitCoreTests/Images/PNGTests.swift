import Foundation
import Testing
@testable import CaptureKitCore

/// Builds PNG byte streams chunk by chunk (valid CRCs), to craft well-formed and hostile files.
struct PNGBuilder {
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    mutating func chunk(_ type: String, _ data: [UInt8]) {
        let t = Array(type.utf8)
        bytes += PNGBuilder.be(UInt32(data.count))
        let body = t + data
        bytes += body
        bytes += PNGBuilder.be(body.withUnsafeBytes { Zlib.crc32($0) })
    }

    mutating func ihdr(width: UInt32, height: UInt32, depth: UInt8, colour: UInt8, compression: UInt8 = 0,
                       filter: UInt8 = 0, interlace: UInt8 = 0) {
        chunk("IHDR", PNGBuilder.be(width) + PNGBuilder.be(height) + [depth, colour, compression, filter, interlace])
    }

    /// A zlib (RFC 1950) stream of `raw` at `level`.
    static func zlib(_ raw: [UInt8], level: Int32 = 6) -> [UInt8] {
        var out = [UInt8]()
        // A test helper with valid arguments: a failure shows as an empty stream (and a failed test).
        if let d = try? Deflater(level: level, raw: false) {
            _ = raw.withUnsafeBytes { r in
                Result { () throws(CaptureKitError) in try d.deflate(r, flush: 4 /* Z_FINISH */) { out += $0 } }
            }
        }
        return out
    }
}

/// Deterministic pixel data: random, smooth (gradients + noise) or constant.
func pngPixels(width: Int, height: Int, format: ImageFormat, seed: UInt64, kind: Int = 0) -> [UInt8] {
    var rng = SplitMix64(seed: seed)
    let n = width * height * format.bytesPerPixel
    var out = [UInt8](repeating: 0, count: n)
    switch kind {
    case 0:
        for i in 0..<n { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
    case 1:
        if format == .gray16 {
            for y in 0..<height {
                for x in 0..<width {
                    let v = UInt16(truncatingIfNeeded: 1500 + 3 * x + 2 * y + Int(rng.next() % 5))
                    let i = (y * width + x) * 2
                    withUnsafeBytes(of: v) { out[i] = $0[0]; out[i + 1] = $0[1] }
                }
            }
        } else {
            for i in 0..<n { out[i] = UInt8(truncatingIfNeeded: i / format.bytesPerPixel % width + (i / (width * format.bytesPerPixel)) * 2 + Int(rng.next() % 3)) }
        }
    default:
        for i in 0..<n { out[i] = 0x5A }
    }
    return out
}

@Suite struct PNGTests {
    static let filterChoices: [PNGFilterChoice] = PNGFilter.allCases.map { .fixed($0) } + [.minimumSum, .automatic]

    /// Encodes packed pixels, checks the bound, decodes and returns the decoded bytes.
    func roundTrip(_ pixels: [UInt8], width: Int, height: Int, format: ImageFormat, level: Int32 = 0,
                   filter: PNGFilterChoice = .automatic, strategy: PNGStrategy? = nil) throws -> [UInt8] {
        let png = try pixels.withUnsafeBytes {
            try PNG.encode($0, width: width, height: height, stride: width * format.bytesPerPixel, format: format,
                           level: level, filter: filter, strategy: strategy)
        }
        #expect(png.count <= (try PNG.encodeBound(width: width, height: height, format: format)))
        let info = try png.withUnsafeBytes { try PNG.info($0) }
        #expect(info == PNGInfo(width: width, height: height, format: format))
        var back = [UInt8](repeating: 0xEE, count: pixels.count)
        let decoded = try png.withUnsafeBytes { s in try back.withUnsafeMutableBytes { d in try PNG.decode(s, into: d) } }
        #expect(decoded == info)
        return back
    }

    @Test func everyFormatEdgeSizesAndFilters() throws {
        let sizes = [(1, 1), (1, 9), (9, 1), (2, 2), (3, 5), (7, 3), (15, 4), (16, 4), (17, 5), (31, 3), (33, 7), (257, 2), (5, 300)]
        for format in ImageFormat.allCases {
            for (w, h) in sizes {
                for kind in 0...2 {
                    let px = pngPixels(width: w, height: h, format: format, seed: UInt64(w * 1000 + h), kind: kind)
                    for filter in PNGTests.filterChoices {
                        let back = try roundTrip(px, width: w, height: h, format: format, filter: filter)
                        #expect(back == px, "\(format) \(w)×\(h) kind \(kind) \(filter)")
                    }
                }
            }
        }
    }

    @Test func levelsAndStrategies() throws {
        let px = pngPixels(width: 40, height: 30, format: .gray16, seed: 3, kind: 1)
        for level: Int32 in [0, 1, 2, 6, 9] {
            for strategy: PNGStrategy in [.default, .filtered, .rle] {
                #expect(try roundTrip(px, width: 40, height: 30, format: .gray16, level: level, strategy: strategy) == px)
            }
        }
        #expect(throws: CaptureKitError.self) { try roundTrip(px, width: 40, height: 30, format: .gray16, level: 10) }
        #expect(throws: CaptureKitError.self) { try roundTrip(px, width: 40, height: 30, format: .gray16, level: -1) }
    }

    @Test func wideAndTallImages() throws {
        for (w, h, format) in [(4099, 3, ImageFormat.rgba8), (3, 4099, .gray16), (32768, 1, .gray8), (1, 32768, .rgb8)] {
            let px = pngPixels(width: w, height: h, format: format, seed: 9, kind: 1)
            #expect(try roundTrip(px, width: w, height: h, format: format) == px, "\(w)×\(h) \(format)")
        }
    }

    @Test func sixteenBitSamplesAreBigEndianInTheFile() throws {
        let values: [UInt16] = [0x0102, 0xA0B0]
        let png = try values.withUnsafeBytes { try PNG.encode($0, width: 2, height: 1, stride: 4, format: .gray16, filter: .fixed(.none)) }
        // The zlib stream of the one row: filter byte 0, then 01 02 A0 B0.
        let raw = try inflateIDAT(png)
        #expect(raw == [0, 0x01, 0x02, 0xA0, 0xB0])
        #expect(png[24] == 16 && png[25] == 0)  // IHDR bit depth, colour type
    }

    /// Concatenated IDAT data of a PNG, inflated.
    func inflateIDAT(_ png: [UInt8]) throws -> [UInt8] {
        var pos = 8
        var stream = [UInt8]()
        while pos + 12 <= png.count {
            let n = Int(png[pos]) << 24 | Int(png[pos + 1]) << 16 | Int(png[pos + 2]) << 8 | Int(png[pos + 3])
            if String(decoding: png[(pos + 4)..<(pos + 8)], as: UTF8.self) == "IDAT" { stream += png[(pos + 8)..<(pos + 8 + n)] }
            pos += 12 + n
        }
        let inflater = try Inflater(raw: false)
        var out = [UInt8](repeating: 0, count: 1 << 20)
        let r = try stream.withUnsafeBytes { s in try out.withUnsafeMutableBytes { o in try inflater.inflate(s, into: o) } }
        #expect(inflater.finished)
        return Array(out[0..<r.produced])
    }

    @Test func stridePaddingIsSkipped() throws {
        let (w, h) = (5, 4)
        let packed = pngPixels(width: w, height: h, format: .rgb8, seed: 4)
        var padded = [UInt8](repeating: 0xCC, count: 20 * (h - 1) + w * 3)
        for y in 0..<h { for i in 0..<(w * 3) { padded[y * 20 + i] = packed[y * w * 3 + i] } }
        let png = try padded.withUnsafeBytes { try PNG.encode($0, width: w, height: h, stride: 20, format: .rgb8) }
        var back = [UInt8](repeating: 0, count: packed.count)
        try png.withUnsafeBytes { s in try back.withUnsafeMutableBytes { d in _ = try PNG.decode(s, into: d) } }
        #expect(back == packed)
    }

    @Test func filtersMatchTheSpecificationByteByByte() {
        // Reference: the PNG specification's formulas, scalar, on random rows at every bpp.
        func ref(_ f: PNGFilter, _ cur: [UInt8], _ prev: [UInt8], _ bpp: Int) -> [UInt8] {
            cur.indices.map { i in
                let a = i >= bpp ? Int(cur[i - bpp]) : 0, b = Int(prev[i]), c = i >= bpp ? Int(prev[i - bpp]) : 0
                let p: Int
                switch f {
                case .none: p = 0
                case .sub: p = a
                case .up: p = b
                case .average: p = (a + b) / 2
                case .paeth:
                    let q = a + b - c, pa = abs(q - a), pb = abs(q - b), pc = abs(q - c)
                    p = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                }
                return UInt8(truncatingIfNeeded: Int(cur[i]) - p)
            }
        }
        var rng = SplitMix64(seed: 77)
        for bpp in [1, 2, 3, 4] {
            for n in [bpp, bpp + 1, 15, 16, 17, 33, 64, 100] where n % bpp == 0 {
                for trial in 0..<20 {
                    // Mix of random bytes and extremes (0, 255) to exercise the Paeth ties.
                    let gen = { () -> UInt8 in trial % 3 == 0 ? [0, 255, 128, 1][Int(rng.next() % 4)] : UInt8(truncatingIfNeeded: rng.next()) }
                    let cur = (0..<n).map { _ in gen() }, prev = (0..<n).map { _ in gen() }
                    var sums = [Int](repeating: 0, count: 5)
                    for f in PNGFilter.allCases {
                        let want = ref(f, cur, prev, bpp)
                        sums[Int(f.rawValue)] = want.reduce(0) { $0 + Int(min($1, 0 &- $1)) }
                        var got = [UInt8](repeating: 0, count: n)
                        var undone = [UInt8](repeating: 0, count: n)
                        cur.withUnsafeBufferPointer { c in prev.withUnsafeBufferPointer { p in got.withUnsafeMutableBufferPointer { o in
                            PNG.applyFilter(f, c.baseAddress!, p.baseAddress!, o.baseAddress!, n, bpp) } } }  // trap-ok: test
                        #expect(got == want, "filter \(f) bpp \(bpp) n \(n)")
                        got.withUnsafeBufferPointer { l in prev.withUnsafeBufferPointer { p in undone.withUnsafeMutableBufferPointer { o in
                            PNG.undoFilter(f, l.baseAddress!, p.baseAddress!, o.baseAddress!, n, bpp) } } }  // trap-ok: test
                        #expect(undone == cur, "undo \(f) bpp \(bpp) n \(n)")
                    }
                    let best = cur.withUnsafeBufferPointer { c in prev.withUnsafeBufferPointer { p in
                        PNG.bestFilter(c.baseAddress!, p.baseAddress!, n, bpp) } }  // trap-ok: test
                    let minimum = sums.min() ?? 0
                    #expect(sums[Int(best.rawValue)] == minimum && sums.firstIndex(of: minimum) == Int(best.rawValue),
                            "bestFilter bpp \(bpp) n \(n): \(best) for sums \(sums)")
                }
            }
        }
    }

    @Test func largeImagesSplitIntoBoundedIDATChunks() throws {
        let (w, h) = (700, 500)
        let px = pngPixels(width: w, height: h, format: .rgba8, seed: 5)  // incompressible: > 1 MB of zlib output
        let png = try px.withUnsafeBytes { try PNG.encode($0, width: w, height: h, stride: w * 4, format: .rgba8, level: 1) }
        var pos = 8, idats = 0
        while pos < png.count {
            let n = Int(png[pos]) << 24 | Int(png[pos + 1]) << 16 | Int(png[pos + 2]) << 8 | Int(png[pos + 3])
            if String(decoding: png[(pos + 4)..<(pos + 8)], as: UTF8.self) == "IDAT" {
                idats += 1
                #expect(n <= PNG.idatChunkSize && n > 0)
            }
            pos += 12 + n
        }
        #expect(pos == png.count && idats == (png.count - 57) / PNG.idatChunkSize + 1)
        #expect(try roundTrip(px, width: w, height: h, format: .rgba8, level: 1) == px)
    }

    @Test func boundIsEnoughAndSmallBuffersFailCleanly() throws {
        for format in ImageFormat.allCases {
            for (w, h) in [(1, 1), (13, 7), (300, 200)] {
                let px = pngPixels(width: w, height: h, format: format, seed: 8)  // random: the worst case
                let bound = try PNG.encodeBound(width: w, height: h, format: format)
                var dst = [UInt8](repeating: 0, count: bound)
                let n = try px.withUnsafeBytes { s in try dst.withUnsafeMutableBytes { d in
                    try PNG.encode(s, width: w, height: h, stride: w * format.bytesPerPixel, format: format, level: 9, filter: .fixed(.none), into: d) } }
                #expect(n <= bound)
                // Exactly n bytes suffice; n − 1 (and much less) is bufferTooSmall.
                for capacity in [n, n - 1, n / 2, 40, 8, 0] {
                    var small = [UInt8](repeating: 0, count: capacity)
                    do {
                        let m = try px.withUnsafeBytes { s in try small.withUnsafeMutableBytes { d in
                            try PNG.encode(s, width: w, height: h, stride: w * format.bytesPerPixel, format: format, level: 9, filter: .fixed(.none), into: d) } }
                        #expect(capacity >= n && m == n)
                    } catch {
                        #expect(capacity < n && (error as? CaptureKitError)?.status == .bufferTooSmall)
                    }
                }
            }
        }
    }

    @Test func encoderRejectsBadArguments() {
        let px = [UInt8](repeating: 0, count: 64)
        func status(_ w: Int, _ h: Int, _ stride: Int, _ count: Int = 64, _ format: ImageFormat = .gray8) -> CaptureKitError.Status? {
            do {
                _ = try px.withUnsafeBytes { try PNG.encode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), width: w, height: h, stride: stride, format: format) }
                return nil
            } catch { return (error as? CaptureKitError)?.status }
        }
        #expect(status(0, 1, 1) == .invalidArgument)
        #expect(status(1, 0, 1) == .invalidArgument)
        #expect(status(32769, 1, 32769) == .invalidArgument)
        #expect(status(4, 4, 3) == .invalidArgument)                // stride below the row
        #expect(status(4, 4, 4, 15) == .invalidArgument)            // too few bytes
        #expect(status(4, 4, Int.max) == .invalidArgument)          // stride × height overflows
        #expect(status(4, 4, 16, 64, .rgba8) == nil)                // 3 × 16 + 16 = 64 bytes: exactly enough
        #expect(status(4, 4, 17, 64, .rgba8) == .invalidArgument)   // 3 × 17 + 16 = 67
        #expect(status(4, 4, 4) == nil)
        #expect(throws: CaptureKitError.self) { try PNG.encodeBound(width: 0, height: 5, format: .gray8) }
        #expect((try? PNG.encodeBound(width: 32768, height: 32768, format: .rgba8)) ?? 0 > 32768 * 32768 * 4)
    }
}

@Suite struct PNGDecoderTests {
    /// Decodes, returning the error status (nil on success) and the pixels.
    func decode(_ png: [UInt8], capacity: Int? = nil) -> (status: CaptureKitError.Status?, pixels: [UInt8]) {
        var out = [UInt8](repeating: 0, count: capacity ?? 4096)
        do {
            let info = try png.withUnsafeBytes { s in try out.withUnsafeMutableBytes { d in try PNG.decode(s, into: d) } }
            return (nil, Array(out[0..<info.byteCount]))
        } catch {
            return ((error as? CaptureKitError)?.status, [])
        }
    }

    /// A 3×2 8-bit gray image as a hand-built PNG around `raw` (filtered scanlines).
    func gray(_ raw: [UInt8], width: UInt32 = 3, height: UInt32 = 2, splitAt: [Int] = [], extra: (inout PNGBuilder) -> Void = { _ in },
              end: Bool = true) -> [UInt8] {
        var b = PNGBuilder()
        b.ihdr(width: width, height: height, depth: 8, colour: 0)
        extra(&b)
        let z = PNGBuilder.zlib(raw)
        var start = 0
        for cut in splitAt + [z.count] where cut >= start && cut <= z.count {
            b.chunk("IDAT", Array(z[start..<cut]))
            start = cut
        }
        if end { b.chunk("IEND", []) }
        return b.bytes
    }

    let rows: [UInt8] = [0, 10, 20, 30, 2, 1, 1, 1]  // row 0 None, row 1 Up (+1)

    @Test func handBuiltFilesDecode() {
        #expect(decode(gray(rows)).pixels == [10, 20, 30, 11, 21, 31])
        // The stream split into IDATs at every position, and empty IDATs between.
        let z = PNGBuilder.zlib(rows)
        for cut in 0...z.count {
            #expect(decode(gray(rows, splitAt: [cut, cut])).pixels == [10, 20, 30, 11, 21, 31], "split at \(cut)")
        }
        #expect(decode(gray(rows, splitAt: Array(0...z.count))).pixels == [10, 20, 30, 11, 21, 31])
        // Ancillary chunks (known and unknown) are skipped, before and after the image data.
        let anc = gray(rows) { b in b.chunk("tEXt", Array("Comment\0hi".utf8)); b.chunk("gAMA", [0, 0, 0xB1, 0x8F]); b.chunk("zzZz", [1, 2, 3]) }
        #expect(decode(anc).pixels == [10, 20, 30, 11, 21, 31])
        var after = PNGBuilder()
        after.ihdr(width: 3, height: 2, depth: 8, colour: 0)
        after.chunk("IDAT", z)
        after.chunk("tIME", [7, 0xE9, 1, 1, 0, 0, 0])
        after.chunk("IEND", [])
        #expect(decode(after.bytes).pixels == [10, 20, 30, 11, 21, 31])
        // Bytes after IEND are ignored.
        #expect(decode(gray(rows) + [1, 2, 3]).pixels == [10, 20, 30, 11, 21, 31])
        // A suggested palette in an RGB image is allowed (and ignored).
        var rgb = PNGBuilder()
        rgb.ihdr(width: 1, height: 1, depth: 8, colour: 2)
        rgb.chunk("PLTE", [1, 2, 3])
        rgb.chunk("IDAT", PNGBuilder.zlib([0, 7, 8, 9]))
        rgb.chunk("IEND", [])
        #expect(decode(rgb.bytes).pixels == [7, 8, 9])
    }

    @Test func malformedFilesAreCorrupt() {
        let corrupt: CaptureKitError.Status = .corrupt
        #expect(decode(gray(rows + [0])).status == corrupt)                      // one byte too many
        #expect(decode(gray(rows + [0, 1, 2, 3])).status == corrupt)             // a whole row too many
        #expect(decode(gray(Array(rows.dropLast()))).status == corrupt)          // one byte short
        #expect(decode(gray([0, 10, 20, 30, 5, 1, 1, 1])).status == corrupt)     // filter type 5
        #expect(decode(gray(rows, end: false)).status == corrupt)                // no IEND
        var noData = PNGBuilder()
        noData.ihdr(width: 3, height: 2, depth: 8, colour: 0)
        noData.chunk("IEND", [])
        #expect(decode(noData.bytes).status == corrupt)
        // IDATs separated by another chunk.
        let z = PNGBuilder.zlib(rows)
        var split = PNGBuilder()
        split.ihdr(width: 3, height: 2, depth: 8, colour: 0)
        split.chunk("IDAT", Array(z[0..<4]))
        split.chunk("tEXt", Array("a\0b".utf8))
        split.chunk("IDAT", Array(z[4...]))
        split.chunk("IEND", [])
        #expect(decode(split.bytes).status == corrupt)
        // The zlib stream: bad Adler-32, bad header, cut before its end marker.
        var badAdler = z
        badAdler[badAdler.count - 1] ^= 1
        var b1 = PNGBuilder(); b1.ihdr(width: 3, height: 2, depth: 8, colour: 0); b1.chunk("IDAT", badAdler); b1.chunk("IEND", [])
        #expect(decode(b1.bytes).status == corrupt)
        var b2 = PNGBuilder(); b2.ihdr(width: 3, height: 2, depth: 8, colour: 0); b2.chunk("IDAT", [0x78, 0x9C ^ 1] + z.dropFirst(2)); b2.chunk("IEND", [])
        #expect(decode(b2.bytes).status == corrupt)
        var b3 = PNGBuilder(); b3.ihdr(width: 3, height: 2, depth: 8, colour: 0); b3.chunk("IDAT", Array(z.dropLast(4))); b3.chunk("IEND", [])
        #expect(decode(b3.bytes).status == corrupt)
        // IHDR problems.
        for (w, h, d, c, comp, f, i) in [(0, 2, 8, 0, 0, 0, 0), (3, 0, 8, 0, 0, 0, 0), (0x8000_0000, 1, 8, 0, 0, 0, 0), (3, 2, 8, 1, 0, 0, 0),
                                         (3, 2, 4, 2, 0, 0, 0), (3, 2, 16, 3, 0, 0, 0), (3, 2, 7, 0, 0, 0, 0), (3, 2, 8, 0, 1, 0, 0),
                                         (3, 2, 8, 0, 0, 1, 0), (3, 2, 8, 0, 0, 0, 2)] as [(UInt32, UInt32, UInt8, UInt8, UInt8, UInt8, UInt8)] {
            var b = PNGBuilder()
            b.ihdr(width: w, height: h, depth: d, colour: c, compression: comp, filter: f, interlace: i)
            b.chunk("IDAT", z)
            b.chunk("IEND", [])
            #expect(decode(b.bytes).status == corrupt, "IHDR \(w) \(h) \(d) \(c) \(comp) \(f) \(i)")
            #expect(throws: CaptureKitError.self) { try b.bytes.withUnsafeBytes { try PNG.info($0) } }
        }
        var short = PNGBuilder()
        short.chunk("IHDR", [0, 0, 0, 3, 0, 0, 0, 2, 8, 0, 0, 0])
        #expect(decode(short.bytes).status == corrupt)
        var notFirst = PNGBuilder()
        notFirst.chunk("tEXt", Array("a\0b".utf8))
        #expect(decode(notFirst.bytes).status == corrupt)
        // A second IHDR; PLTE in a gray image; chunk types that are not letters; a huge length.
        #expect(decode(gray(rows) { b in b.ihdr(width: 3, height: 2, depth: 8, colour: 0) }).status == corrupt)
        #expect(decode(gray(rows) { b in b.chunk("PLTE", [1, 2, 3]) }).status == corrupt)
        #expect(decode(gray(rows) { b in b.chunk("a1cD", []) }).status == corrupt)
        var huge = gray(rows)
        huge.replaceSubrange(33..<37, with: [0x80, 0, 0, 0])  // the first IDAT's length field
        #expect(decode(huge).status == corrupt)
        #expect(decode([]).status == corrupt)
        #expect(decode(Array(gray(rows)[0..<8])).status == corrupt)
    }

    @Test func unsupportedButValidFiles() {
        let unsupported: CaptureKitError.Status = .unsupported
        for (depth, colour) in [(1, 0), (2, 0), (4, 0), (8, 3), (1, 3), (8, 4), (16, 4), (16, 2), (16, 6)] as [(UInt8, UInt8)] {
            var b = PNGBuilder()
            b.ihdr(width: 3, height: 2, depth: depth, colour: colour)
            b.chunk("IDAT", PNGBuilder.zlib(rows))
            b.chunk("IEND", [])
            #expect(decode(b.bytes).status == unsupported, "depth \(depth) colour \(colour)")
        }
        var interlaced = PNGBuilder()
        interlaced.ihdr(width: 3, height: 2, depth: 8, colour: 0, interlace: 1)
        interlaced.chunk("IDAT", PNGBuilder.zlib(rows))
        interlaced.chunk("IEND", [])
        #expect(decode(interlaced.bytes).status == unsupported)
        var big = PNGBuilder()
        big.ihdr(width: 32769, height: 1, depth: 8, colour: 0)
        #expect(decode(big.bytes).status == unsupported)
        // An unknown critical chunk (first letter upper case).
        #expect(decode(gray(rows) { b in b.chunk("CUSt", [1]) }).status == unsupported)
    }

    @Test func smallDestinationIsBufferTooSmall() {
        let png = gray(rows)
        #expect(decode(png, capacity: 5).status == .bufferTooSmall)
        #expect(decode(png, capacity: 6).pixels == [10, 20, 30, 11, 21, 31])
        #expect(decode(png, capacity: 0).status == .bufferTooSmall)
    }

    /// Every truncation and every single-byte change of small encoded files fails cleanly
    /// (and a changed byte is always caught: every byte is under a CRC or the signature).
    @Test func everyTruncationAndByteFlipFails() throws {
        for format in ImageFormat.allCases {
            let px = pngPixels(width: 5, height: 4, format: format, seed: 12, kind: 1)
            var png = try px.withUnsafeBytes { try PNG.encode($0, width: 5, height: 4, stride: 5 * format.bytesPerPixel, format: format) }
            #expect(decode(png).pixels == px)
            for cut in 0..<png.count {
                let r = decode(Array(png[0..<cut]))
                #expect(r.status == .corrupt, "\(format) cut at \(cut) of \(png.count): \(String(describing: r.status))")
            }
            for i in 0..<png.count {
                for delta: UInt8 in [1, 0x80, 0xFF] {
                    png[i] ^= delta
                    let r = decode(png)
                    #expect(r.status == .corrupt, "\(format) byte \(i) ^ \(delta): \(String(describing: r.status))")
                    png[i] ^= delta
                }
            }
        }
    }

    /// Random garbage after a valid header, and random IHDR fields with valid CRCs, never crash.
    @Test func randomInputsNeverCrash() {
        var rng = SplitMix64(seed: 99)
        for trial in 0..<3000 {
            var b = PNGBuilder()
            b.ihdr(width: UInt32(rng.next() % 40), height: UInt32(rng.next() % 40), depth: [1, 8, 16, 3][Int(rng.next() % 4)],
                   colour: [0, 2, 6, 3, 4, 9][Int(rng.next() % 6)], interlace: UInt8(rng.next() % 3 == 0 ? 1 : 0))
            let n = Int(rng.next() % 200)
            var raw = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next() % 6) }
            if trial % 2 == 0 { raw = PNGBuilder.zlib(raw) }
            b.chunk("IDAT", raw)
            if trial % 3 != 0 { b.chunk("IEND", []) }
            _ = decode(b.bytes, capacity: Int(rng.next() % 8000))
        }
    }
}

@Suite(.serialized) struct PNGFileTests {
    let dir: String = {
        let d = NSTemporaryDirectory() + "ck-png-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }()

    func entries() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

    @Test func writeAndReadBack() throws {
        let path = dir + "/a.png"
        let px = pngPixels(width: 9, height: 7, format: .gray16, seed: 1, kind: 1)
        try px.withUnsafeBytes { try PNG.write(path, $0, width: 9, height: 7, stride: 18, format: .gray16, overwrite: false) }
        let (back, info) = try PNG.read(path)
        #expect(back == px && info == PNGInfo(width: 9, height: 7, format: .gray16))
        // Without overwrite an existing file is `exists` and stays as it was.
        let other = pngPixels(width: 2, height: 2, format: .gray8, seed: 2)
        #expect { try other.withUnsafeBytes { try PNG.write(path, $0, width: 2, height: 2, stride: 2, format: .gray8, overwrite: false) } } throws: {
            ($0 as? CaptureKitError)?.status == .exists
        }
        #expect(try PNG.read(path).pixels == px)
        try other.withUnsafeBytes { try PNG.write(path, $0, width: 2, height: 2, stride: 2, format: .gray8, overwrite: true) }
        #expect(try PNG.read(path).pixels == other)
        #expect(entries() == ["a.png"])
        #expect { try PNG.read(dir + "/missing.png") } throws: { ($0 as? CaptureKitError)?.status == .notFound }
        #expect { try other.withUnsafeBytes { try PNG.write(dir + "/no/such/dir.png", $0, width: 2, height: 2, stride: 2, format: .gray8, overwrite: false) } } throws: {
            ($0 as? CaptureKitError)?.status == .notFound
        }
    }

    /// Fails the Nth file operation of a write for every N: each failure is reported (io), and
    /// leaves no file (not even a temporary one) behind, or with overwrite the previous file
    /// (the complete new one when only the directory fsync failed).
    @Test func faultInjectionLeavesNoFileBehind() throws {
        #if DEBUG
        let px = pngPixels(width: 16, height: 16, format: .rgb8, seed: 3)
        for overwrite in [false, true] {
            let path = dir + "/f\(overwrite).png"
            let previous = pngPixels(width: 1, height: 1, format: .gray8, seed: 4)
            if overwrite { try previous.withUnsafeBytes { try PNG.write(path, $0, width: 1, height: 1, stride: 1, format: .gray8, overwrite: false) } }
            var n = 1
            while n < 50 {
                FileIO.failCall(after: n)
                var failure: CaptureKitError? = nil
                do {
                    try px.withUnsafeBytes { try PNG.write(path, $0, width: 16, height: 16, stride: 48, format: .rgb8, overwrite: overwrite) }
                } catch {
                    failure = error as? CaptureKitError
                }
                let fired = FileIO.countdown == nil
                FileIO.stopFailing()
                if let e = failure {
                    #expect(e.status == .io, "call \(n): \(e)")
                    #expect(entries() == (overwrite ? [path.split(separator: "/").last.map(String.init) ?? ""] : []), "call \(n) left \(entries())")
                    // With overwrite: the old file, or the complete new one if only the final
                    // directory fsync failed; never anything else.
                    if overwrite {
                        let now = try PNG.read(path).pixels
                        #expect(now == previous || now == px, "call \(n)")
                        try previous.withUnsafeBytes { try PNG.write(path, $0, width: 1, height: 1, stride: 1, format: .gray8, overwrite: true) }
                    }
                } else {
                    #expect(!fired, "call \(n) failed silently")
                    #expect(try PNG.read(path).pixels == px)
                    break
                }
                n += 1
            }
            #expect(n > 3 && n < 50)  // open, write, fsync, close, rename, directory fsync
            try FileIO.remove(path)
        }
        #endif
    }
}
