import CCaptureKitAPI
import Foundation
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

@Suite struct DepthFrameCodecTests {
    /// Renders a LiDAR-like float16 frame of the synthetic scene.
    static func frame(width: Int, height: Int, seed: UInt64 = 7, index: UInt64 = 0) throws -> [UInt16] {
        let scene = SyntheticScene(seed: seed)
        let k = try Intrinsics(fx: Float(width) * 0.82, fy: Float(width) * 0.82, cx: Float(width) / 2, cy: Float(height) / 2,
                               width: UInt32(width), height: UInt32(height))
        let a = Float(index) * 0.4
        let pose = lookAt(eye: Vec3(1.6 * sin(a), 1.2, 1.6 * cos(a)), target: Vec3(0, 0.2, 0))
        var d = [Float](repeating: 0, count: width * height), c = [UInt8](repeating: 0, count: width * height)
        d.withUnsafeMutableBufferPointer { db in c.withUnsafeMutableBufferPointer { cb in
            scene.renderDepth(pose: pose, intrinsics: k, frame: index, depth: db, confidence: cb) } }
        var h = [UInt16](repeating: 0, count: width * height)
        d.withUnsafeBufferPointer { s in h.withUnsafeMutableBufferPointer { o in DepthConversion.toFloat16(s, o) } }
        return h
    }

    func roundTrip(_ src: [UInt16], width: Int, height: Int, kind: PixelKind = .float16Metres,
                   version: UInt8 = DepthFrameCodec.version) throws -> (back: [UInt16], size: Int) {
        let codec = try DepthFrameCodec()
        var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: src.count, kind: kind))
        let size = try src.withUnsafeBufferPointer { (s) throws(CaptureKitError) in
            try out.withUnsafeMutableBufferPointer { (o) throws(CaptureKitError) in
                try codec.encode(s, width: width, height: height, kind: kind, into: UnsafeMutableRawBufferPointer(o), version: version)
            }
        }
        #expect(out[2] == version)
        var back = [UInt16](repeating: 0xBEEF, count: src.count)
        let header = try out.withUnsafeBufferPointer { (e) throws(CaptureKitError) in
            try back.withUnsafeMutableBufferPointer { (b) throws(CaptureKitError) in
                try codec.decode(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(e)[0..<size]), into: b)
            }
        }
        #expect(header.width == width && header.height == height && header.kind == kind)
        return (back, size)
    }

    @Test func realisticFramesAreLosslessAndSmall() throws {
        for i in 0..<6 {
            let f = try Self.frame(width: 256, height: 192, index: UInt64(i))
            let (back, size) = try roundTrip(f, width: 256, height: 192)
            #expect(back == f, "frame \(i)")
            #expect(Double(f.count * 2) / Double(size) > 3.0, "frame \(i): ratio \(Double(f.count * 2) / Double(size))")
        }
    }

    @Test(arguments: [UInt8(1), 2, 3])
    func edgeSizesAndAdversarialValues(version: UInt8) throws {
        func roundTrip(_ src: [UInt16], width: Int, height: Int, kind: PixelKind = .float16Metres) throws -> (back: [UInt16], size: Int) {
            try self.roundTrip(src, width: width, height: height, kind: kind, version: version)
        }
        var rng = SplitMix64(seed: 60)
        for (w, h) in [(1, 1), (1, 7), (7, 1), (3, 3), (8, 1), (9, 2), (17, 5), (255, 3), (1000, 1)] {
            // Random values (huge residuals, many escapes, both escape forms), zeros, runs.
            var f = (0..<(w * h)).map { _ in UInt16(truncatingIfNeeded: rng.next()) }
            for i in stride(from: 0, to: f.count, by: 3) { f[i] = 0 }
            #expect(try roundTrip(f, width: w, height: h).back == f, "\(w)x\(h) random")
            let zeros = [UInt16](repeating: 0, count: w * h)
            #expect(try roundTrip(zeros, width: w, height: h).back == zeros, "\(w)x\(h) zeros")
            let ramp = (0..<(w * h)).map { UInt16(truncatingIfNeeded: 15_000 + $0 * 14) }  // residual 28: escapes everywhere
            #expect(try roundTrip(ramp, width: w, height: h, kind: .millimetres).back == ramp, "\(w)x\(h) ramp")
            let extremes = (0..<(w * h)).map { $0 % 2 == 0 ? UInt16(1) : UInt16(0xFFFF) }  // wrap-around residuals
            #expect(try roundTrip(extremes, width: w, height: h).back == extremes, "\(w)x\(h) extremes")
        }
    }

    @Test(arguments: [UInt8(1), 2, 3])
    func everyResidualValueRoundTrips(version: UInt8) throws {
        // Pairs (1, 1 + d) for every d: every zigzag code, incl. the 15/269/270 escape boundaries.
        var f = [UInt16]()
        for d in 0..<65536 { f.append(1); f.append(UInt16(truncatingIfNeeded: 1 + d)) }
        let w = 512, h = f.count / w
        #expect(try roundTrip(f, width: w, height: h, version: version).back == f)
    }

    @Test func bytesFrames() throws {
        let codec = try DepthFrameCodec()
        var rng = SplitMix64(seed: 61)
        let src = (0..<(64 * 48)).map { _ in UInt8(rng.next() % 3) }
        var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: src.count, kind: .bytes))
        let size = try src.withUnsafeBufferPointer { (s) throws(CaptureKitError) in try out.withUnsafeMutableBufferPointer { (o) throws(CaptureKitError) in
            try codec.encode(bytes: UnsafeRawBufferPointer(s), width: 64, height: 48, into: UnsafeMutableRawBufferPointer(o)) } }
        var back = [UInt8](repeating: 9, count: src.count)
        _ = try out.withUnsafeBufferPointer { (e) throws(CaptureKitError) in try back.withUnsafeMutableBufferPointer { (b) throws(CaptureKitError) in
            try codec.decode(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(e)[0..<size]), into: UnsafeMutableRawBufferPointer(b)) } }
        #expect(back == src)
    }

    /// Version 1 (its variable-length escape list catches most flips; version 2's twin is in
    /// DepthFrameCodecV2Tests).
    @Test func everyTruncationAndEveryByteFlipFailsCleanly() throws {
        var f = try Self.frame(width: 24, height: 16)
        f[5] = 0; f[6] = 40_000  // an invalid pixel and a long escape
        let codec = try DepthFrameCodec()
        var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: f.count, kind: .float16Metres))
        let size = try f.withUnsafeBufferPointer { (s) throws(CaptureKitError) in try out.withUnsafeMutableBufferPointer { (o) throws(CaptureKitError) in
            try codec.encode(s, width: 24, height: 16, kind: .float16Metres, into: UnsafeMutableRawBufferPointer(o), version: 1) } }
        let encoded = Array(out[0..<size])
        var back = [UInt16](repeating: 0, count: f.count)
        func decode(_ bytes: [UInt8]) -> CaptureKitError.Status? {
            do {
                _ = try bytes.withUnsafeBufferPointer { (e) throws(CaptureKitError) in try back.withUnsafeMutableBufferPointer { (b) throws(CaptureKitError) in
                    try codec.decode(UnsafeRawBufferPointer(e), into: b) } }
                return nil
            } catch { return error.status }
        }
        for cut in 0..<size { #expect(decode(Array(encoded[0..<cut])) == .corrupt, "cut at \(cut)") }
        var silent = 0
        for i in 0..<size {
            for bit in [0, 3, 7] {
                var bad = encoded
                bad[i] ^= UInt8(1 << bit)
                if let status = decode(bad) {
                    #expect(status == .corrupt || status == .invalidArgument, "byte \(i) bit \(bit): \(status)")
                } else {
                    silent += 1  // a flip inside entropy-coded data can still decode (to other pixels)
                }
            }
        }
        #expect(decode(encoded) == nil && back == f)
        #expect(silent < size)  // most flips are detected
    }

    @Test func smallOutputIsAnError() throws {
        let f = try Self.frame(width: 32, height: 24)
        let codec = try DepthFrameCodec()
        var out = [UInt8](repeating: 0, count: 100)
        #expect { try f.withUnsafeBufferPointer { (s) throws(CaptureKitError) in try out.withUnsafeMutableBufferPointer { (o) throws(CaptureKitError) in
            try codec.encode(s, width: 32, height: 24, kind: .float16Metres, into: UnsafeMutableRawBufferPointer(o)) } } } throws: {
            ($0 as? CaptureKitError)?.status == .bufferTooSmall
        }
    }
}

@Suite struct DepthFileTests {
    let dir: String = {
        let d = NSTemporaryDirectory() + "ck-depthfile-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }()

    func write(_ path: String, frames: [[UInt16]], width: Int, height: Int, mode: DepthFileWriter.OpenMode = .create) throws {
        let w = try DepthFileWriter(path: path, width: width, height: height, kind: .float16Metres, level: 1, mode: mode)
        for (i, f) in frames.enumerated() {
            try f.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                try w.append(base, format: .depthF16, timestamp: Double(i) * 0.5)
            }
        }
        try w.close()
    }

    @Test func roundTripRandomAccessAndFormats() throws {
        let path = dir + "/a.ckdepth"
        let frames = try (0..<5).map { try DepthFrameCodecTests.frame(width: 64, height: 48, index: UInt64($0)) }
        try write(path, frames: frames, width: 64, height: 48)
        let r = try DepthFileReader(path: path)
        #expect(r.info.frameCount == 5 && r.info.width == 64 && r.info.height == 48 && r.info.tornBytes == 0)
        for i in [4, 0, 2, 3, 1] {
            var back = [UInt16](repeating: 0, count: 64 * 48)
            let t = try back.withUnsafeMutableBytes { raw in try r.read(i, into: raw.baseAddress!, format: .depthF16) }  // trap-ok: test
            #expect(back == frames[i] && t == Double(i) * 0.5)
            var metres = [Float](repeating: -1, count: 64 * 48)
            _ = try metres.withUnsafeMutableBytes { raw in try r.read(i, into: raw.baseAddress!, format: .depthF32) }  // trap-ok: test
            #expect(metres == frames[i].map { DepthConversion.float32(fromFloat16: $0) })
        }
        var sink = [UInt16](repeating: 0, count: 64 * 48)
        #expect(try sink.withUnsafeMutableBytes { raw in try r.read(5, into: raw.baseAddress!, format: .depthF16) } == nil)  // trap-ok: test
        // An existing file is refused without overwrite/append.
        #expect { try write(path, frames: [], width: 64, height: 48) } throws: { ($0 as? CaptureKitError)?.status == .exists }
        // Append keeps numbering; a mismatched size is refused.
        try write(path, frames: [frames[0]], width: 64, height: 48, mode: .append)
        #expect(try DepthFileReader(path: path).info.frameCount == 6)
        #expect { try write(path, frames: [], width: 32, height: 48, mode: .append) } throws: { ($0 as? CaptureKitError)?.status == .corrupt }
    }

    @Test func everyTruncationKeepsEveryCompleteFrame() throws {
        let path = dir + "/t.ckdepth"
        let frames = try (0..<3).map { try DepthFrameCodecTests.frame(width: 16, height: 12, index: UInt64($0)) }
        try write(path, frames: frames, width: 16, height: 12)
        let full = try FileIO.readAll(path)
        // Record boundaries.
        var ends: [Int] = []
        var offset = DepthFile.headerSize
        for _ in 0..<3 {
            let size = Int(full[offset + 4]) | Int(full[offset + 5]) << 8 | Int(full[offset + 6]) << 16
            offset += DepthFile.recordHeaderSize + size
            ends.append(offset)
        }
        #expect(ends.last == full.count)
        let cut = dir + "/cut.ckdepth"
        for length in 0..<full.count {
            try? FileIO.remove(cut)
            try full[0..<length].withUnsafeBytes { try FileIO.writeAtomically(cut, $0, overwrite: true) }
            if length < DepthFile.headerSize {
                #expect(throws: CaptureKitError.self) { try DepthFileReader(path: cut) }
                continue
            }
            let expected = ends.filter { $0 <= length }.count
            let r = try DepthFileReader(path: cut)
            #expect(r.info.frameCount == expected, "cut at \(length)")
            #expect(r.info.tornBytes == UInt64(length - (expected == 0 ? DepthFile.headerSize : ends[expected - 1])))
            // Reopen for append: the torn tail goes, and a new frame lands after the complete ones.
            if length % 7 == 0 {
                try write(cut, frames: [frames[0]], width: 16, height: 12, mode: .append)
                let again = try DepthFileReader(path: cut)
                #expect(again.info.frameCount == expected + 1 && again.info.tornBytes == 0, "append after cut at \(length)")
                var back = [UInt16](repeating: 0, count: 16 * 12)
                _ = try back.withUnsafeMutableBytes { raw in try again.read(expected, into: raw.baseAddress!, format: .depthF16) }  // trap-ok: test
                #expect(back == frames[0])
            }
        }
    }

    @Test func garbageTailOfTheRightLengthIsDropped() throws {
        let path = dir + "/g.ckdepth"
        let frames = try (0..<2).map { try DepthFrameCodecTests.frame(width: 16, height: 12, index: UInt64($0)) }
        try write(path, frames: frames, width: 16, height: 12)
        var bytes = try FileIO.readAll(path)
        // Zero the last 10 payload bytes (what a crash can leave after the size was written).
        for i in (bytes.count - 10)..<bytes.count { bytes[i] = 0 }
        try bytes.withUnsafeBytes { try FileIO.writeAtomically(path, $0, overwrite: true) }
        #expect(try DepthFileReader(path: path).info.frameCount == 1)
        #expect { try DepthFileReader(path: dir + "/missing.ckdepth") } throws: { ($0 as? CaptureKitError)?.status == .notFound }
    }

    @Test func failedWritesPoisonTheWriter() throws {
        #if DEBUG
        let path = dir + "/f.ckdepth"
        let f = try DepthFrameCodecTests.frame(width: 16, height: 12)
        let w = try DepthFileWriter(path: path, width: 16, height: 12, kind: .float16Metres, level: 1, mode: .create)
        try f.withUnsafeBytes { raw in try w.append(raw.baseAddress!, format: .depthF16, timestamp: 0) }  // trap-ok: test
        FileIO.failCall(after: 1, errno: ENOSPC)
        #expect { try f.withUnsafeBytes { raw in try w.append(raw.baseAddress!, format: .depthF16, timestamp: 1) } } throws: {  // trap-ok: test
            ($0 as? CaptureKitError)?.status == .io
        }
        FileIO.stopFailing()
        #expect { try f.withUnsafeBytes { raw in try w.append(raw.baseAddress!, format: .depthF16, timestamp: 2) } } throws: {  // trap-ok: test
            ($0 as? CaptureKitError)?.status == .state
        }
        try w.close()
        #expect(try DepthFileReader(path: path).info.frameCount == 1)
        #endif
    }
}

/// Issue 8: the destination is untouched when decoding fails.
@Suite struct DepthDecodeContractTests {
    /// A hand-made 16-bit frame of `pixels` pixels: the given nibble plane, escape list and mask,
    /// each as its own zstd frame, behind a valid header.
    static func craft(pixels n: Int, nibbles: [UInt8], escapes: [UInt8], mask: [UInt8]?) throws -> [UInt8] {
        let z = try ZstdContext(level: 1)
        func pack(_ b: [UInt8]) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: ZstdContext.bound(b.count))
            let size = try b.withUnsafeBytes { src in try out.withUnsafeMutableBytes { try z.compress(src, into: $0) } }
            return Array(out[0..<size])
        }
        let nib = try pack(nibbles), esc = escapes.isEmpty ? [] : try pack(escapes), msk = try mask.map(pack) ?? []
        var frame = [UInt8](repeating: 0, count: DepthFrameCodec.headerSize)
        frame.withUnsafeMutableBytes {
            DepthFrameCodec.writeHeader($0, version: 1, kind: .float16Metres, width: n, height: 1, sizes: [nib.count, escapes.count, esc.count, msk.count])
        }
        return frame + nib + esc + msk
    }

    @Test func failedDecodesLeaveTheDestinationUntouched() throws {
        let codec = try DepthFrameCodec()
        func decode(_ frame: [UInt8], pixels n: Int) -> (CaptureKitError?, [UInt16]) {
            var dst = [UInt16](repeating: 0xABCD, count: n)
            let error = ZStreamTests.caught {
                _ = try frame.withUnsafeBytes { src in try dst.withUnsafeMutableBufferPointer { try codec.decode(src, into: $0) } }
            }
            return (error, dst)
        }
        // Valid: lane 0 escaped (nibble 15) with one short escape entry.
        let good = try Self.craft(pixels: 8, nibbles: [0x0F, 0, 0, 0], escapes: [3], mask: nil)
        let (ok, values) = decode(good, pixels: 8)
        #expect(ok == nil && values.first == 9)  // residual 18 → zigzag +9
        // Each of these failed only after writing every pixel into dst (the checks ran last).
        let bad: [(String, [UInt8], Int)] = [
            ("unused escape bytes", try Self.craft(pixels: 8, nibbles: [0x0F, 0, 0, 0], escapes: [3, 4], mask: nil), 8),
            ("too few escapes", try Self.craft(pixels: 8, nibbles: [0xFF, 0, 0, 0], escapes: [3], mask: nil), 8),
            ("long escape with a short form", try Self.craft(pixels: 8, nibbles: [0x0F, 0, 0, 0], escapes: [255, 20, 0], mask: nil), 8),
            ("escape list ends inside an entry", try Self.craft(pixels: 8, nibbles: [0x0F, 0, 0, 0], escapes: [255, 20], mask: nil), 8),
            ("mask past the frame", try Self.craft(pixels: 5, nibbles: [0x11, 0, 0, 0], escapes: [], mask: [0x80]), 5),
            ("escape in a lane past the frame", try Self.craft(pixels: 5, nibbles: [0, 0, 0, 0xF0], escapes: [], mask: nil), 5),
        ]
        for (name, frame, n) in bad {
            let (error, dst) = decode(frame, pixels: n)
            #expect(error?.status == .corrupt, "\(name): \(String(describing: error))")
            #expect(dst == [UInt16](repeating: 0xABCD, count: n), "\(name): dst was written")
        }
        // Through the C entry point, in every destination format.
        var c: OpaquePointer?
        #expect(ck_depth_codec_create(&c, 0) == CK_OK)
        defer { ck_depth_codec_free(c) }
        for (name, frame, n) in bad {
            for format in [CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_F32, CK_FORMAT_DEPTH_MM] {
                var dst = [UInt8](repeating: 0xA5, count: n * 4)
                let s = frame.withUnsafeBytes { src in
                    dst.withUnsafeMutableBytes { ck_depth_decode($0.baseAddress, $0.count, nil, c, src.baseAddress, src.count, Int32(format.rawValue)) }
                }
                #expect(s == CK_E_CORRUPT, "\(name) format \(format)")
                #expect(dst.allSatisfy { $0 == 0xA5 }, "\(name) format \(format): dst was written")
            }
        }
        // Every byte flip of a real frame: either success or an untouched destination.
        let real = try DepthFrameCodecTests.frame(width: 16, height: 12)
        var encoded = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: real.count, kind: .float16Metres))
        let size = try real.withUnsafeBufferPointer { s in
            try encoded.withUnsafeMutableBytes { try codec.encode(s, width: 16, height: 12, kind: .float16Metres, into: $0) }
        }
        encoded = Array(encoded[0..<size])
        for i in DepthFrameCodec.headerSize..<size {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var f = encoded
                f[i] ^= flip
                let (error, dst) = decode(f, pixels: real.count)
                if error != nil { #expect(dst == [UInt16](repeating: 0xABCD, count: real.count), "byte \(i) flip \(flip)") }
            }
        }
    }
}
