import Foundation
import Testing
@testable import CaptureKitCore

/// Issue 24: frame version 4 (version 3's values and row predictors; each row in nibble pairs or
/// bytes, nibble rows first; escapes as low then high bytes) — real sensor excerpts at both levels,
/// many generated frames (hostile ones included), hand-made frames against the layout, corrupt
/// frames that must leave the destination untouched.
@Suite struct DepthFrameCodecV4Tests {
    func encode(_ src: [UInt16], _ w: Int, _ h: Int, _ kind: PixelKind = .millimetres, level: Int32 = 1) throws -> [UInt8] {
        let codec = try DepthFrameCodec(level: level)
        var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: src.count, kind: kind))
        let size = try src.withUnsafeBufferPointer { s in
            try out.withUnsafeMutableBytes { try codec.encode(s, width: w, height: h, kind: kind, into: $0) }
        }
        #expect(out[2] == 4 && size <= out.count)
        return Array(out[0..<size])
    }

    func decode(_ frame: [UInt8], pixels n: Int) -> (CaptureKitError?, [UInt16]) { decodeDepthFrame(frame, pixels: n) }

    static func word(_ frame: [UInt8], _ i: Int) -> Int {
        Int(frame[4 * i + 4]) | Int(frame[4 * i + 5]) << 8 | Int(frame[4 * i + 6]) << 16 | Int(frame[4 * i + 7]) << 24
    }

    @Test(.enabled(if: DepthFrameCodecV3Tests.hasRealSet("azure-kinect-tof"),
                   "import it: python3 benchmarks/real_depth.py --import ... --set azure-kinect-tof"))
    func realExcerptsRoundTripAtBothLevelsAndBeatThePeer() throws {
        let (frames, w, h) = try DepthFrameCodecV3Tests.realFrames("azure-kinect-tof")
        for (i, f) in frames.enumerated() {
            let peer = Double(try DepthFrameCodecV3Tests().leftPeerSize(f))
            var captureSize = 0
            for level in [Int32(1), 19] {
                let frame = try encode(f, w, h, level: level)
                let (error, back) = decode(frame, pixels: f.count)
                #expect(error == nil && back == f, "frame \(i), level \(level)")
                // Nibble rows at the capture level; the archival frame is never larger.
                let nibbleRows = Self.word(frame, 6) & 0xFFFF  // bit 16: stored low bytes
                #expect(nibbleRows <= h && (level == 19 || nibbleRows > 0), "frame \(i): \(nibbleRows)")
                if level == 1 { captureSize = frame.count } else { #expect(frame.count <= captureSize) }
                // Smaller than left delta + zigzag + byte planes + zstd-1 by the margins.
                #expect(peer / Double(frame.count) >= (level == 1 ? 1.15 : 1.4), "frame \(i) level \(level): \(frame.count) bytes")
            }
        }
    }

    /// A generated frame of one of the shapes depth takes, and some it should never take.
    static func generated(_ rng: inout SplitMix64, width w: Int, height h: Int, shape: Int) -> [UInt16] {
        let n = w * h
        func unit() -> Double { Double(rng.next() % 1_000_000) / 1_000_000 }
        var f = [UInt16](repeating: 0, count: n)
        let base = 300 + Double(rng.next() % 20000), sx = unit() * 8 - 4, sy = unit() * 8 - 4
        let noise = [0.0, 0.5, 3, 20, 400][Int(rng.next() % 5)]
        for y in 0..<h {
            for x in 0..<w {
                var v = base + sx * Double(x) + sy * Double(y) + (unit() - 0.5) * 2 * noise
                switch shape {
                case 0: break                                                  // a plane with noise
                case 1: v = Double(Int(400_000 / (400_000 / max(v, 300))))      // disparity-quantised (a palette)
                case 2: v = Double(rng.next() & 0xFFFF)                        // random: escapes everywhere
                case 3: v = (x + y) % 2 == 0 ? 1 : 65535                       // extremes
                case 4: v = y % 3 == 0 ? v + Double((x * 37) % 97) * 9 : v     // rows of wide residuals among smooth ones
                default: v = Double(Int(v) & ~15)                              // coarse steps
                }
                f[y * w + x] = UInt16(clamping: Int(max(0, min(65535, v.rounded()))))
            }
        }
        // Holes: none, speckle, runs, whole rows, or all.
        switch rng.next() % 5 {
        case 1: for i in 0..<n where rng.next() % 9 == 0 { f[i] = 0 }
        case 2:
            var i = Int(rng.next() % UInt64(n))
            while i < n { let run = Int(rng.next() % 40); for j in i..<min(n, i + run) { f[j] = 0 }; i += run + Int(rng.next() % 60) + 1 }
        case 3: for y in 0..<h where y % 4 == 1 { for x in 0..<w { f[y * w + x] = 0 } }
        case 4: if rng.next() % 4 == 0 { f = [UInt16](repeating: 0, count: n) }
        default: break
        }
        return f
    }

    @Test func manyGeneratedFramesRoundTripBitExact() throws {
        var rng = SplitMix64(seed: 2404)
        var nibbleFrames = 0, mixedFrames = 0, storedFrames = 0
        for i in 0..<600 {
            let w = 1 + Int(rng.next() % 70), h = 1 + Int(rng.next() % 40)
            let f = Self.generated(&rng, width: w, height: h, shape: i % 6)
            let kind: PixelKind = i % 2 == 0 ? .millimetres : .float16Metres
            let level: Int32 = i % 7 == 0 ? 3 : 1
            let frame = try encode(f, w, h, kind, level: level)
            let (error, back) = decode(frame, pixels: f.count)
            #expect(error == nil && back == f, "frame \(i): \(w)x\(h) shape \(i % 6) level \(level)")
            let m = Self.word(frame, 6) & 0xFFFF  // bit 16: stored low bytes
            if Self.word(frame, 6) & 0x10000 != 0 { storedFrames += 1 }
            if m > 0 { nibbleFrames += 1 }
            if m > 0 && m < h { mixedFrames += 1 }
            #expect(m <= h)
            if level == 3 {  // never larger than the capture level's frame
                #expect(frame.count <= (try encode(f, w, h, kind, level: 1)).count, "frame \(i)")
            }
        }
        #expect(nibbleFrames > 100 && mixedFrames > 20, "\(nibbleFrames) frames with nibble rows, \(mixedFrames) mixed")
        #expect(storedFrames > 10, "\(storedFrames) frames with stored low bytes")
    }

    /// A hand-made version-4 frame: header + one zstd frame of the payload; `storedLow`: the
    /// escapes' low bytes after the zstd frame instead of in it (header flag 2^16 in word 6).
    static func craft(width w: Int, height h: Int, palette: [UInt16] = [], rows: [UInt8], nibbles: [UInt8], bytes: [UInt8],
                      escapes: [UInt16], nibbleRowsWord: Int? = nil, escapeWord: Int? = nil, storedLow: Bool = false,
                      storedLowBytes: [UInt8]? = nil) throws -> [UInt8] {
        var plain: [UInt8] = []
        for v in palette { plain += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        plain += rows + nibbles + bytes
        let low = escapes.map { UInt8($0 & 0xFF) }
        plain += (storedLow ? [] : low) + escapes.map { UInt8($0 >> 8) }
        let zstd = try ZstdContext(level: 1)
        var z = [UInt8](repeating: 0, count: ZstdContext.bound(plain.count))
        let size = try plain.withUnsafeBytes { p in try z.withUnsafeMutableBytes { try zstd.compress(p, into: $0) } }
        let tail = storedLow ? (storedLowBytes ?? low) : []
        var frame = [UInt8](repeating: 0, count: 32) + z[0..<size] + tail
        let nibbleRows = rows.filter { $0 & 4 != 0 }.count
        frame.withUnsafeMutableBytes {
            DepthFrameCodec.writeHeader($0, version: 4, kind: .millimetres, width: w, height: h,
                                        sizes: [palette.count, escapeWord ?? escapes.count, size + tail.count,
                                                (nibbleRowsWord ?? nibbleRows) | (storedLow ? 0x10000 : 0)])
        }
        return frame
    }

    /// 6 x 2, no palette. Row 0 (nibbles, left): 0 invalid; 100 (r 100, z 200: escape 200 − 14 =
    /// 186); 100 (z 0 → nibble 1); 103 (z 6 → 7); 0; 102 (r −1, z 1 → 2). Lanes 0...7 = 0, 15, 1,
    /// 7, 0, 2, 0, 0 → bytes lane j | lane (j + 4) << 4 = 0x00, 0x2F, 0x01, 0x07.
    /// Row 1 (bytes, plane x̂ = L + P[x] − P[x−1], P = the filled row 0 = 0, 100, 100, 103, 103, 102,
    /// P[−1] = P[0]): 110 (L 102, g 0, r 8 → z 16 → byte 17); 500 (L 110, g 100, r 290, z 580:
    /// escape 580 − 254 = 326 → low 70, high 1); 0; 503 (L 500, g 3, r 0 → 1); 499 (L 503, g 0,
    /// r −4 → z 7 → 8); 498 (L 499, g −1, r 0 → 1).
    static let sixByTwo: [UInt16] = [0, 100, 100, 103, 0, 102, 110, 500, 0, 503, 499, 498]
    static func sixByTwoFrame(rows: [UInt8] = [4, 1], nibbles: [UInt8] = [0x00, 0x2F, 0x01, 0x07],
                              bytes: [UInt8] = [17, 255, 0, 1, 8, 1], escapes: [UInt16] = [186, 326],
                              nibbleRowsWord: Int? = nil, escapeWord: Int? = nil, storedLow: Bool = false,
                              storedLowBytes: [UInt8]? = nil) throws -> [UInt8] {
        try craft(width: 6, height: 2, rows: rows, nibbles: nibbles, bytes: bytes, escapes: escapes,
                  nibbleRowsWord: nibbleRowsWord, escapeWord: escapeWord, storedLow: storedLow, storedLowBytes: storedLowBytes)
    }

    @Test func handMadeFramesFollowTheLayout() throws {
        let (error, back) = decode(try Self.sixByTwoFrame(), pixels: 12)
        #expect(error == nil && back == Self.sixByTwo)
        // The encoder writes the same rows (its zstd frame may differ): decode both the same.
        let ours = try encode(Self.sixByTwo, 6, 2)
        #expect(decode(ours, pixels: 12).1 == Self.sixByTwo)
        // A palette [5, 7, 9, 1000] (ranks 1...4) in one nibble row (slope predictor on row 0 is
        // the left one): ranks 1, 2, 4, 3 → r 1, 1, 2, −1 → z 2, 2, 4, 1 → nibbles 3, 3, 5, 2 in
        // lanes 0...3 (lanes 4...7, past the row, 0).
        let p = try Self.craft(width: 4, height: 1, palette: [5, 2, 2, 991], rows: [4 | 2],
                               nibbles: [3, 3, 5, 2], bytes: [], escapes: [])
        let (e2, b2) = decode(p, pixels: 4)
        #expect(e2 == nil && b2 == [5, 7, 1000, 9])
        // The escapes' low bytes (186, 70) after the zstd frame, flagged in word 6: the same samples.
        let stored = try Self.sixByTwoFrame(storedLow: true)
        #expect(Array(stored.suffix(2)) == [186, 70] && Self.word(stored, 6) == 0x10000 | 1)
        let (e3, b3) = decode(stored, pixels: 12)
        #expect(e3 == nil && b3 == Self.sixByTwo)
    }

    @Test func inconsistentFramesFailAndLeaveTheDestinationUntouched() throws {
        let untouched = [UInt16](repeating: 0xABCD, count: 12)
        let bad: [(String, [UInt8])] = [
            ("escape count short", try Self.sixByTwoFrame(escapes: [186], escapeWord: 1)),
            ("escape count long", try Self.sixByTwoFrame(escapes: [186, 326, 7], escapeWord: 3)),
            ("predictor 3", try Self.sixByTwoFrame(rows: [4 | 3, 1])),
            ("layout bit 3", try Self.sixByTwoFrame(rows: [4, 8 | 1])),
            ("header names no nibble row", try Self.sixByTwoFrame(nibbleRowsWord: 0)),
            ("header names two nibble rows", try Self.sixByTwoFrame(nibbleRowsWord: 2)),
            ("rows name two nibble rows", try Self.sixByTwoFrame(rows: [4, 5], nibbleRowsWord: 1)),
            ("a residual past the row's end", try Self.sixByTwoFrame(nibbles: [0x00, 0x2F, 0x11, 0x07])),
            ("payload one byte short", try Self.sixByTwoFrame(bytes: [17, 255, 0, 1, 8])),
            ("stored low bytes, one missing", try Self.sixByTwoFrame(storedLow: true, storedLowBytes: [186])),
            ("stored low bytes, one too many", try Self.sixByTwoFrame(storedLow: true, storedLowBytes: [186, 70, 1])),
            ("stored low bytes, also in the zstd frame", try Self.craft(
                width: 6, height: 2, rows: [4, 1], nibbles: [0x00, 0x2F, 0x01, 0x07], bytes: [17, 255, 0, 1, 8, 1, 186, 70],
                escapes: [186, 326], storedLow: true)),
            ("word 6 bit 17", try Self.sixByTwoFrame(nibbleRowsWord: 0x20001)),
            ("palette not increasing", try Self.craft(width: 6, height: 2, palette: [5, 0], rows: [4, 1],
                                                      nibbles: [0x00, 0x2F, 0x01, 0x07], bytes: [17, 255, 0, 1, 8, 1], escapes: [186, 326])),
        ]
        for (name, frame) in bad {
            let (error, dst) = decode(frame, pixels: 12)
            #expect(error?.status == .corrupt && dst == untouched, "\(name): \(String(describing: error))")
        }
        // More nibble rows than rows in the header: refused by the header check.
        var many = try Self.sixByTwoFrame()
        let zstdSize = many.count - 32
        many.withUnsafeMutableBytes { DepthFrameCodec.writeHeader($0, version: 4, kind: .millimetres, width: 6, height: 2,
                                                                  sizes: [0, 2, zstdSize, 3]) }
        #expect(decode(many, pixels: 12).0?.status == .corrupt)
        // Stored low bytes: more escapes than bytes after the header.
        var short = [UInt8](repeating: 0, count: 33)
        short.withUnsafeMutableBytes { DepthFrameCodec.writeHeader($0, version: 4, kind: .millimetres, width: 6, height: 2,
                                                                   sizes: [0, 2, 1, 1 | 0x10000]) }
        #expect(decode(short, pixels: 12).0?.status == .corrupt)
    }

    /// Stored low bytes: the capture level stores them when a frame has at least 256 escapes whose
    /// low bytes look random, and not otherwise; such frames round-trip, and every truncation or
    /// flipped bit leaves the destination untouched.
    @Test func escapeLowBytesAreStoredWhereTheyLookRandom() throws {
        var rng = SplitMix64(seed: 77)
        let (w, h) = (40, 24)
        let noisy: [UInt16] = (0..<(w * h)).map { (i: Int) -> UInt16 in i % 53 == 0 ? 0 : UInt16(3000 + rng.next() % 4000) }
        let frame = try encode(noisy, w, h)
        let e = Self.word(frame, 4)
        #expect(e >= DepthFrameCodec.storedLowBytesMinimum && Self.word(frame, 6) & 0x10000 != 0, "\(e) escapes")
        #expect(Self.word(frame, 5) == frame.count - 32)
        #expect(decode(frame, pixels: noisy.count).1 == noisy)
        // The archival level keeps its smallest candidate, stored or not: it round-trips too.
        let archival = try encode(noisy, w, h, level: 19)
        #expect(archival.count <= frame.count && decode(archival, pixels: noisy.count).1 == noisy)
        // Few escapes, or many with low bytes in a narrow range (random steps of 130 ± 7 mm: zigzag
        // about 246...274, escapes 0...20): the plain layout.
        let smooth: [UInt16] = (0..<(w * h)).map { (i: Int) -> UInt16 in UInt16(2000 + i % w) }
        #expect(Self.word(try encode(smooth, w, h), 6) & 0x10000 == 0)
        var steps = [UInt16](repeating: 0, count: w * h)
        for i in 0..<steps.count {
            let step: UInt64 = 130 * (rng.next() % 2)
            steps[i] = UInt16(1000 + step + rng.next() % 8)
        }
        let stepped = try encode(steps, w, h)
        #expect(Self.word(stepped, 4) >= 256 && Self.word(stepped, 6) & 0x10000 == 0)
        #expect(decode(stepped, pixels: steps.count).1 == steps)
        let untouched = [UInt16](repeating: 0xABCD, count: noisy.count)
        for cut in 0..<frame.count {
            let (error, dst) = decode(Array(frame[0..<cut]), pixels: noisy.count)
            #expect(error?.status == .corrupt && dst == untouched, "cut at \(cut)")
        }
        for _ in 0..<300 {
            var f = frame
            f[Int(rng.next() % UInt64(f.count))] ^= UInt8(1 << (rng.next() % 8))
            let (error, dst) = decode(f, pixels: noisy.count)
            if error != nil { #expect(dst == untouched) }
        }
    }

    @Test func everyTruncationFailsAndFlipsStaySafe() throws {
        // 60 x 48 (w % 8 = 4) of real ToF depth where that set is imported, else plateaus with
        // steps, noise, wide residuals on some rows and invalid runs.
        let crop: [UInt16]
        if DepthFrameCodecV3Tests.hasRealSet("azure-kinect-tof") {
            let (frames, w, _) = try DepthFrameCodecV3Tests.realFrames("azure-kinect-tof")
            crop = Array((0..<48).flatMap { y in frames[1][(y * w + 120)..<(y * w + 180)] })
        } else {
            var g = SplitMix64(seed: 12)
            crop = (0..<(60 * 48)).map { i in
                let (x, y) = (i % 60, i / 60)
                if (x + 3 * y) % 37 < 6 { return 0 }
                return UInt16(900 + 40 * (x / 9) + 25 * (y / 7) + Int(g.next() % (y % 5 == 0 ? 300 : 3)))
            }
        }
        let frame = try encode(crop, 60, 48)
        let m = Self.word(frame, 6) & 0xFFFF
        #expect(m > 0 && m < 48, "\(m) nibble rows: both layouts")
        #expect(decode(frame, pixels: crop.count).1 == crop)
        let untouched = [UInt16](repeating: 0xABCD, count: crop.count)
        for cut in 0..<frame.count {
            let (error, dst) = decode(Array(frame[0..<cut]), pixels: crop.count)
            #expect(error?.status == .corrupt && dst == untouched, "cut at \(cut)")
        }
        var rng = SplitMix64(seed: 4)
        for _ in 0..<600 {  // a flipped bit: corrupt with dst untouched, or some frame (no crash)
            var f = frame
            f[Int(rng.next() % UInt64(f.count))] ^= UInt8(1 << (rng.next() % 8))
            let (error, dst) = decode(f, pixels: crop.count)
            if error != nil { #expect(dst == untouched) }
        }
        // Hostile payloads behind a valid header: random row bytes, nibbles, bytes and escapes.
        for i in 0..<300 {
            let rows = (0..<2).map { _ in UInt8(rng.next() % 9) }
            let nib = (0..<4).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let byt = (0..<(rng.next() % 3 == 0 ? 12 : 6)).map { _ in UInt8(truncatingIfNeeded: rng.next() | (rng.next() % 2 == 0 ? 0xF0 : 0)) }
            let esc = (0..<Int(rng.next() % 5)).map { _ in UInt16(truncatingIfNeeded: rng.next()) }
            let f = try Self.craft(width: 6, height: 2, rows: rows, nibbles: rows.contains { $0 & 4 != 0 } ? nib : [],
                                   bytes: byt, escapes: esc)
            let (error, dst) = decode(f, pixels: 12)
            if error != nil { #expect(dst == [UInt16](repeating: 0xABCD, count: 12), "payload \(i)") }
        }
    }

    @Test func versionThreeStillEncodesAndDecodes() throws {
        // Appending to a version-3 file writes version-3 frames: the old encoder stays, and both
        // read back through the one decoder.
        var rng = SplitMix64(seed: 33)
        for i in 0..<60 {
            let w = 1 + Int(rng.next() % 50), h = 1 + Int(rng.next() % 30)
            let f = Self.generated(&rng, width: w, height: h, shape: i % 6)
            let codec = try DepthFrameCodec()
            var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: f.count, kind: .millimetres))
            let size = try f.withUnsafeBufferPointer { s in
                try out.withUnsafeMutableBytes { try codec.encode(s, width: w, height: h, kind: .millimetres, into: $0, version: 3) }
            }
            #expect(out[2] == 3 && Self.word(out, 6) == 0)
            #expect(decode(Array(out[0..<size]), pixels: f.count).1 == f, "frame \(i)")
        }
    }
}
