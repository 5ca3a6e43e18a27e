import CCaptureKitAPI
import CZlib
import Foundation
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

/// MultiScan-compatible streams: writer, reader, side index, truncation, corruption, fault injection.
@Suite struct ZStreamTests {
    // MARK: Helpers

    /// A fresh temporary directory (removed at the end of the test by `defer`).
    final class TempDir {
        let path: String
        init() {
            path = NSTemporaryDirectory() + "ck-zstream-\(UUID().uuidString)"
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func file(_ name: String) -> String { "\(path)/\(name)" }
    }

    /// Deterministic float16 depth frames (LiDAR-like: smooth surfaces, noise, invalid pixels).
    static func depthFrames(_ count: Int, width: Int, height: Int, seed: UInt64 = 1) -> [[UInt16]] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { f in
            (0..<(width * height)).map { i in
                let x = Float(i % width), y = Float(i / width)
                let z = 1 + 0.01 * x + 0.02 * y + 0.05 * Float(f) + rng.float(-0.004...0.004)
                return rng.next() % 50 == 0 ? 0 : DepthConversion.float16Bits(z)
            }
        }
    }

    /// Deterministic confidence frames (0/1/2).
    static func confidenceFrames(_ count: Int, width: Int, height: Int, seed: UInt64 = 2) -> [[UInt8]] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in (0..<(width * height)).map { _ in rng.next() % 7 == 0 ? UInt8(rng.next() % 2) : 2 } }
    }

    static func write(_ path: String, _ frames: [[UInt16]], width: Int, height: Int, level: Int32 = 0,
                      index: Bool = false) throws -> ZStreamWriter {
        let w = try ZStreamWriter(path: path, width: width, height: height, kind: .depth, level: level, index: index)
        for f in frames { try f.withUnsafeBytes { try w.append($0.baseAddress!, format: .depthF16) } }
        try w.close()
        return w
    }

    /// Every frame `next` delivers as float16, then the status that ended the loop.
    static func readAll(_ r: ZStreamReader) -> (frames: [[UInt16]], end: CaptureKitError.Status?) {
        var frames = [[UInt16]]()
        while true {
            var out = [UInt16](repeating: 0, count: r.width * r.height)
            do {
                let ok = try out.withUnsafeMutableBytes { try r.next(into: $0, format: .depthF16) }
                if !ok { return (frames, nil) }
                frames.append(out)
            } catch let e as CaptureKitError {
                return (frames, e.status)
            } catch {
                return (frames, .io)
            }
        }
    }

    /// The CaptureKitError `body` throws (nil if none).
    static func caught(_ body: () throws -> Void) -> CaptureKitError? {
        do { try body(); return nil } catch let e as CaptureKitError { return e } catch { return CaptureKitError(.io, "\(error)") }
    }

    static func bytes(_ path: String) -> [UInt8] { (try? FileIO.readAll(path)) ?? [] }

    static func store(_ path: String, _ bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// Inflates a raw DEFLATE buffer in one call, as far as it is valid (the oracle for truncation).
    static func inflateAll(_ input: [UInt8]) -> (output: [UInt8], error: Bool) {
        guard let inf = try? Inflater(raw: true) else { return ([], true) }
        var out = [UInt8](repeating: 0, count: 1 << 20)
        var produced = 0, consumed = 0
        while true {
            do {
                let r = try input.withUnsafeBytes { i in
                    try out.withUnsafeMutableBytes { o in
                        try inf.inflate(UnsafeRawBufferPointer(rebasing: i[consumed...]), into: UnsafeMutableRawBufferPointer(rebasing: o[produced...]))
                    }
                }
                consumed += r.consumed
                produced += r.produced
                if inf.finished || (r.consumed == 0 && r.produced == 0) { return (Array(out[0..<produced]), false) }
                if produced == out.count { out += [UInt8](repeating: 0, count: out.count) }
            } catch {
                return (Array(out[0..<produced]), true)
            }
        }
    }

    static func le16(_ frames: [[UInt16]]) -> [UInt8] {
        frames.flatMap { f in f.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] } }
    }

    /// Offsets right after each sync marker (00 00 FF FF) — for streams we wrote, the frame starts.
    static func markerEnds(_ b: [UInt8]) -> [Int] {
        guard b.count >= 4 else { return [] }
        return (4...b.count).filter { b[$0 - 4] == 0 && b[$0 - 3] == 0 && b[$0 - 2] == 0xFF && b[$0 - 1] == 0xFF }
    }

    // MARK: Round trips

    @Test(arguments: [(1, 1), (3, 5), (7, 1), (1, 9), (257, 3), (256, 192)])
    func depthRoundTripsBitExactly(width: Int, height: Int) throws {
        let dir = TempDir()
        let path = dir.file("a.depth.zlib")
        let frames = Self.depthFrames(4, width: width, height: height)
        let w = try Self.write(path, frames, width: width, height: height)
        #expect(w.frameCount == 4)
        // MultiScan's way: inflate everything, cut by width*height*2, little-endian float16.
        let all = Self.inflateAll(Self.bytes(path))
        #expect(!all.error)
        #expect(all.output == Self.le16(frames))
        let r = try ZStreamReader(path: path, width: width, height: height, kind: .depth)
        #expect(try r.frameCount() == 4)
        let got = Self.readAll(r)
        #expect(got.frames == frames)
        #expect(got.end == nil)
        // Every output format follows the depth rules.
        let n = width * height
        for i in [3, 0, 2] {
            var f32 = [Float](repeating: -1, count: n), mm = [UInt16](repeating: 1, count: n)
            #expect(try f32.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF32) })
            #expect(try mm.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthMM) })
            #expect(f32.map(\.bitPattern) == frames[i].map { DepthConversion.float32(fromFloat16: $0).bitPattern })
            #expect(mm == frames[i].map { DepthConversion.millimetres(DepthConversion.float32(fromFloat16: $0)) })
        }
    }

    @Test func float32InputIsConvertedByTheDepthRules() throws {
        let dir = TempDir()
        let path = dir.file("f32.depth.zlib")
        let width = 5, height = 3
        let input: [Float] = [0, -0.0, .nan, -1, .infinity, 65504, 65519.99, 65520, 1e-8, 1.2345678, 0.5, 3, 2.00048828125, 7.7, 1e30]
        let w = try ZStreamWriter(path: path, width: width, height: height, kind: .depth)
        try input.withUnsafeBytes { try w.append($0.baseAddress!, format: .depthF32) }
        // An unaligned float32 source is accepted too.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: input.count * 4 + 1, alignment: 8)
        defer { raw.deallocate() }
        input.withUnsafeBytes { (raw + 1).copyMemory(from: $0.baseAddress!, byteCount: input.count * 4) }
        try w.append(UnsafeRawPointer(raw + 1), format: .depthF32)
        try w.close()
        let r = try ZStreamReader(path: path, width: width, height: height, kind: .depth)
        let got = Self.readAll(r)
        let want = input.map { DepthConversion.float16Bits($0) }
        #expect(got.frames == [want, want])
        #expect(want[0] == 0 && want[2] == 0 && want[3] == 0 && want[4] == 0 && want[7] == 0 && want[14] == 0)
        // An unaligned float32 destination works as well.
        let out = UnsafeMutableRawPointer.allocate(byteCount: input.count * 4 + 1, alignment: 8)
        defer { out.deallocate() }
        #expect(try r.read(1, into: UnsafeMutableRawBufferPointer(start: out + 1, count: input.count * 4), format: .depthF32))
        for i in 0..<input.count {
            let v = (out + 1 + 4 * i).loadUnaligned(as: Float.self)
            #expect(v.bitPattern == DepthConversion.float32(fromFloat16: want[i]).bitPattern)
        }
    }

    @Test func confidenceRoundTrips() throws {
        let dir = TempDir()
        let path = dir.file("a.confidence.zlib")
        let frames = Self.confidenceFrames(6, width: 13, height: 7)
        let w = try ZStreamWriter(path: path, width: 13, height: 7, kind: .confidence, level: 9, index: true)
        for f in frames { try f.withUnsafeBytes { try w.append($0.baseAddress!, format: .u8) } }
        try w.close()
        #expect(Self.inflateAll(Self.bytes(path)).output == frames.flatMap { $0 })
        let r = try ZStreamReader(path: path, width: 13, height: 7, kind: .confidence)
        #expect(r.usesIndex)
        for i in [5, 0, 3, 4, 1, 2] {
            var out = [UInt8](repeating: 9, count: 13 * 7)
            #expect(try out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .u8) })
            #expect(out == frames[i])
        }
        var out = [UInt8](repeating: 9, count: 13 * 7)
        #expect(try out.withUnsafeMutableBytes { try r.next(into: $0, format: .u8) })  // after frame 2 comes 3
        #expect(out == frames[3])
    }

    @Test func zeroFramesIsAValidEmptyStream() throws {
        let dir = TempDir()
        let path = dir.file("empty.depth.zlib")
        _ = try Self.write(path, [], width: 4, height: 4, index: true)
        let bytes = Self.bytes(path)
        #expect(bytes == [0x03, 0x00])  // the final empty block alone
        #expect(Self.inflateAll(bytes).output.isEmpty)
        let r = try ZStreamReader(path: path, width: 4, height: 4, kind: .depth)
        #expect(try r.frameCount() == 0)
        #expect(Self.readAll(r).frames.isEmpty)
        // An empty file (a writer killed right after open) reads as zero frames too.
        Self.store(path, [])
        let r2 = try ZStreamReader(path: path, width: 4, height: 4, kind: .depth)
        #expect(try r2.frameCount() == 0)
        #expect(Self.readAll(r2).end == nil)
    }

    @Test func manyFramesSequentialAndRandom() throws {
        let dir = TempDir()
        let path = dir.file("many.depth.zlib")
        let frames = Self.depthFrames(2000, width: 6, height: 2)
        _ = try Self.write(path, frames, width: 6, height: 2, index: true)
        let plain = dir.file("plain.depth.zlib")
        _ = try Self.write(plain, frames, width: 6, height: 2)
        for p in [path, plain] {
            let r = try ZStreamReader(path: p, width: 6, height: 2, kind: .depth)
            #expect(r.usesIndex == (p == path))
            #expect(try r.frameCount() == 2000)
            var rng = SplitMix64(seed: 9)
            for _ in 0..<300 {
                let i = Int(rng.next() % 2000)
                var out = [UInt16](repeating: 0, count: 12)
                #expect(try out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF16) })
                #expect(out == frames[i], "frame \(i)")
                if Bool.random(using: &rng), i + 1 < 2000 {  // next continues with i + 1
                    #expect(try out.withUnsafeMutableBytes { try r.next(into: $0, format: .depthF16) })
                    #expect(out == frames[i + 1])
                }
            }
            var out = [UInt16](repeating: 0, count: 12)
            #expect(try out.withUnsafeMutableBytes { try r.read(2000, into: $0, format: .depthF16) } == false)
            #expect(try out.withUnsafeMutableBytes { try r.read(UInt64.max, into: $0, format: .depthF16) } == false)
            #expect(r.position == UInt64.max)
        }
        // Sequential reading discovers exactly the offsets the index lists.
        let r = try ZStreamReader(path: plain, width: 6, height: 2, kind: .depth)
        #expect(Self.readAll(r).frames.count == 2000)
        let idx = Self.bytes(ZStream.indexPath(path))
        let entries = (0..<(idx.count / 8)).map { i in idx.withUnsafeBytes { ZStream.uint64LE($0, at: i * 8) } }
        #expect(entries.count == 2000)
        #expect(Array(r.restarts.prefix(2000)) == entries)
        #expect(r.restarts.count == 2001)  // and the start of the final block
    }

    @Test func readerFollowsAStreamThatIsStillBeingWritten() throws {
        let dir = TempDir()
        let path = dir.file("live.depth.zlib")
        let frames = Self.depthFrames(6, width: 30, height: 20, seed: 12)
        let w = try ZStreamWriter(path: path, width: 30, height: 20, kind: .depth)
        for f in frames.prefix(3) { try Self.append(w, f) }
        let r = try ZStreamReader(path: path, width: 30, height: 20, kind: .depth)
        #expect(try r.frameCount() == 3)
        var got = Self.readAll(r)
        #expect(got.frames == Array(frames.prefix(3)) && got.end == nil)  // a clean end for now
        for f in frames.dropFirst(3) { try Self.append(w, f) }
        got = Self.readAll(r)  // next() retries and continues
        #expect(got.frames == Array(frames.dropFirst(3)) && got.end == nil)
        #expect(try r.frameCount() == 6)
        try w.close()
        #expect(Self.readAll(r).frames.isEmpty)
        #expect(try r.frameCount() == 6)
    }

    // MARK: Truncation and corruption

    /// A small recording: 5 depth frames of 7×3 (the second all zero, the fourth constant).
    static func smallRecording(_ dir: TempDir, index: Bool = false) throws -> (path: String, frames: [[UInt16]], bytes: [UInt8]) {
        var frames = Self.depthFrames(5, width: 7, height: 3, seed: 77)
        frames[1] = [UInt16](repeating: 0, count: 21)
        frames[3] = [UInt16](repeating: DepthConversion.float16Bits(1.5), count: 21)
        let path = dir.file("small.depth.zlib")
        _ = try Self.write(path, frames, width: 7, height: 3, index: index)
        return (path, frames, Self.bytes(path))
    }

    @Test func truncationAtEveryByteYieldsTheCompleteFramesThenEndOrCorrupt() throws {
        let dir = TempDir()
        let rec = try Self.smallRecording(dir, index: true)
        let frameBytes = 21 * 2
        let starts = Self.markerEnds(rec.bytes)
        #expect(starts.count == 5)  // after frames 0...4 (the last one before the final block)
        let cutPath = dir.file("cut.depth.zlib")
        for cut in 0...rec.bytes.count {
            let prefix = Array(rec.bytes[0..<cut])
            Self.store(cutPath, prefix)
            // Also keep the full recording's index beside the cut file: it must be rejected or harmless.
            for withIndex in [false, true] {
                if withIndex {
                    try? FileManager.default.copyItem(atPath: ZStream.indexPath(rec.path), toPath: ZStream.indexPath(cutPath))
                } else {
                    try? FileManager.default.removeItem(atPath: ZStream.indexPath(cutPath))
                }
                let oracle = Self.inflateAll(prefix)
                #expect(!oracle.error, "cut \(cut)")
                let complete = oracle.output.count / frameBytes
                let r = try ZStreamReader(path: cutPath, width: 7, height: 3, kind: .depth)
                let got = Self.readAll(r)
                #expect(got.frames == Array(rec.frames.prefix(complete)), "cut \(cut) index \(withIndex)")
                // Ends at a frame boundary → CK_END; inside a frame → CK_E_CORRUPT.
                let want: CaptureKitError.Status? = oracle.output.count % frameBytes == 0 ? nil : .corrupt
                #expect(got.end == want, "cut \(cut) index \(withIndex): \(String(describing: got.end))")
                // Bounds that do not depend on zlib: frames whose flush marker is in are complete; frames
                // that have not started are not.
                #expect(complete >= starts.filter { $0 <= cut }.count, "cut \(cut)")
                #expect(complete <= ([0] + starts).filter { $0 < cut }.count, "cut \(cut)")
                let count = try ZStreamReader(path: cutPath, width: 7, height: 3, kind: .depth).frameCount()
                #expect(count == UInt64(complete), "cut \(cut)")
                // Random access agrees, and reports the cut frame by number.
                let r2 = try ZStreamReader(path: cutPath, width: 7, height: 3, kind: .depth)
                for i in (0..<5).reversed() {
                    var out = [UInt16](repeating: 0xABCD, count: 21)
                    do {
                        let ok = try out.withUnsafeMutableBytes { try r2.read(UInt64(i), into: $0, format: .depthF16) }
                        #expect(ok == (i < complete), "cut \(cut) frame \(i)")
                        if ok { #expect(out == rec.frames[i]) } else { #expect(want == nil) }
                    } catch let e as CaptureKitError {
                        #expect(e.status == .corrupt && i >= complete && want == .corrupt, "cut \(cut) frame \(i): \(e)")
                        #expect(e.message.contains("frame \(complete)"), "\(e.message)")
                        #expect(out == [UInt16](repeating: 0xABCD, count: 21))  // dst untouched on failure
                    }
                }
            }
        }
        // A cut exactly at a frame start is a clean, unterminated recording.
        for (k, s) in starts.enumerated() {
            Self.store(cutPath, Array(rec.bytes[0..<s]))
            let got = Self.readAll(try ZStreamReader(path: cutPath, width: 7, height: 3, kind: .depth))
            #expect(got.frames.count == k + 1 && got.end == nil)
        }
    }

    @Test func corruptedBytesNeverCrashAndKeepTheEarlierFrames() throws {
        let dir = TempDir()
        let rec = try Self.smallRecording(dir)
        let starts = Self.markerEnds(rec.bytes)
        let badPath = dir.file("bad.depth.zlib")
        var detected = 0, total = 0
        for pos in 0..<rec.bytes.count {
            for mask: UInt8 in [0xFF, 0x01, 0x80, 0x10] {
                var b = rec.bytes
                b[pos] ^= mask
                Self.store(badPath, b)
                total += 1
                let r = try ZStreamReader(path: badPath, width: 7, height: 3, kind: .depth)
                let got = Self.readAll(r)
                if got.end == .corrupt { detected += 1 }
                #expect(got.end == nil || got.end == .corrupt)
                // Frames that end (flush marker included) before the damaged byte are delivered intact.
                let intact = starts.filter { $0 <= pos }.count
                #expect(got.frames.count >= intact, "pos \(pos) mask \(mask)")
                #expect(Array(got.frames.prefix(intact)) == Array(rec.frames.prefix(intact)), "pos \(pos)")
                // frame_count and random reads behave too (no crash, a status).
                _ = try? ZStreamReader(path: badPath, width: 7, height: 3, kind: .depth).frameCount()
                var out = [UInt16](repeating: 0, count: 21)
                for i in [4, 0, 2] { _ = try? out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF16) } }
            }
        }
        // Raw DEFLATE has no checksum; still, most damage is caught by zlib.
        #expect(detected > total / 3, "\(detected) of \(total) detected")
    }

    @Test func wrongDimensionsAndZlibWrappedStreamsAreCorrupt() throws {
        let dir = TempDir()
        let rec = try Self.smallRecording(dir)
        // 5 frames of 42 bytes = 210 bytes: read as 8x2 depth (32 bytes) → the final block ends inside frame 6.
        let r = try ZStreamReader(path: rec.path, width: 8, height: 2, kind: .depth)
        let got = Self.readAll(r)
        #expect(got.frames.count == 6 && got.end == .corrupt)
        #expect(throws: CaptureKitError.self) { try ZStreamReader(path: rec.path, width: 8, height: 2, kind: .depth).frameCount() }
        // A zlib-wrapped (RFC 1950) stream is not a MultiScan stream, and the message says so.
        let wrapped = dir.file("wrapped.zlib")
        let d = try Deflater(level: 5, raw: false)
        var out = [UInt8]()
        let data = Self.le16(rec.frames)
        try data.withUnsafeBytes { (i: UnsafeRawBufferPointer) in
            try d.deflate(i, flush: Z_FINISH) { (c) throws(CaptureKitError) in out += c }
        }
        Self.store(wrapped, out)
        do {
            _ = try ZStreamReader(path: wrapped, width: 7, height: 3, kind: .depth).frameCount()
            Issue.record("a zlib-wrapped stream decoded")
        } catch {
            #expect(error.status == .corrupt)
            #expect(error.message.contains("frame 0") && error.message.contains("RFC 1950"), "\(error.message)")
        }
    }

    // MARK: Streams written by others

    /// Writes `frames` the ways Python's zlib can: one shot, sync flush or full flush per frame.
    static func foreignStream(_ frames: [[UInt16]], flush: Int32?, level: Int32 = 6) throws -> [UInt8] {
        let d = try Deflater(level: level, raw: true)
        var out = [UInt8]()
        for f in frames {
            let bytes = Self.le16([f])
            try bytes.withUnsafeBytes { (i: UnsafeRawBufferPointer) in
                try d.deflate(i, flush: flush ?? Z_NO_FLUSH) { (c) throws(CaptureKitError) in out += c }
            }
        }
        try d.deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH) { (c) throws(CaptureKitError) in out += c }
        return out
    }

    @Test(arguments: [nil, Z_SYNC_FLUSH, Z_FULL_FLUSH] as [Int32?])
    func readsStreamsWrittenWithOtherFlushes(flush: Int32?) throws {
        let dir = TempDir()
        // Frames of 64x64 float16 (8 KiB): back-references reach across frames unless fully flushed.
        let frames = Self.depthFrames(40, width: 64, height: 64, seed: 5)
        let path = dir.file("foreign.depth.zlib")
        Self.store(path, try Self.foreignStream(frames, flush: flush))
        let r = try ZStreamReader(path: path, width: 64, height: 64, kind: .depth)
        #expect(try r.frameCount() == 40)
        var rng = SplitMix64(seed: 3)
        for _ in 0..<40 {
            let i = Int(rng.next() % 40)
            var out = [UInt16](repeating: 0, count: 64 * 64)
            #expect(try out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF16) })
            #expect(out == frames[i], "frame \(i) flush \(String(describing: flush))")
        }
        // Only fully flushed streams keep their restart points; the others fall back to decoding
        // from the start (a sync-flushed restart point fails within the window, and is dropped).
        #expect(r.seekable == (flush != Z_SYNC_FLUSH))
        #expect(Self.readAll(try ZStreamReader(path: path, width: 64, height: 64, kind: .depth)).frames == frames)
    }

    // MARK: Side index

    @Test func sideIndexIsValidatedNotTrusted() throws {
        let dir = TempDir()
        let frames = Self.depthFrames(30, width: 40, height: 30, seed: 8)
        let path = dir.file("idx.depth.zlib")
        let w = try Self.write(path, frames, width: 40, height: 30, index: true)
        let bytes = Self.bytes(path)
        let idxPath = ZStream.indexPath(path)
        let idx = Self.bytes(idxPath)
        #expect(idx.count == 30 * 8)
        let entries = (0..<30).map { i in idx.withUnsafeBytes { ZStream.uint64LE($0, at: i * 8) } }
        #expect(entries[0] == 0)
        #expect(entries.dropFirst().map { Int($0) } == Array(Self.markerEnds(bytes).prefix(29)))
        #expect(w.compressedSize == UInt64(bytes.count))
        // Each entry is a restart point for a fresh raw inflater (what MultiScan-style tools can use).
        for (i, e) in entries.enumerated() {
            let out = Self.inflateAll(Array(bytes[Int(e)...])).output
            #expect(out == Self.le16(Array(frames[i...])), "entry \(i)")
        }
        func reader() throws -> ZStreamReader { try ZStreamReader(path: path, width: 40, height: 30, kind: .depth) }
        #expect(try reader().usesIndex)
        #expect(try reader().restarts == entries)
        func check(_ r: ZStreamReader, _ label: String) throws {
            #expect(try r.frameCount() == 30, "\(label)")
            for i in [29, 3, 17, 0, 28] {
                var out = [UInt16](repeating: 0, count: 1200)
                #expect(try out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF16) }, "\(label)")
                #expect(out == frames[i], "\(label) frame \(i)")
            }
        }
        // A torn last entry (crash while writing it) is ignored; the rest is used.
        Self.store(idxPath, Array(idx[0..<(29 * 8 + 3)]))
        #expect(try reader().usesIndex && reader().restarts.count == 29)
        try check(try reader(), "torn")
        // Garbage, non-increasing, out-of-file, not-at-a-marker and stale indexes are ignored.
        var bad: [(String, [UInt8])] = [("garbage", (0..<240).map { UInt8($0) })]
        var swapped = entries; swapped.swapAt(3, 4)
        var beyond = entries; beyond[29] = UInt64(bytes.count + 10)
        var shifted = entries; shifted[5] += 1
        var notZero = entries; notZero[0] = 1
        for (name, e) in [("swapped", swapped), ("beyond", beyond), ("shifted", shifted), ("notZero", notZero)] {
            bad.append((name, e.flatMap { v in (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }))
        }
        let other = dir.file("other.depth.zlib")
        _ = try Self.write(other, Self.depthFrames(30, width: 40, height: 30, seed: 99), width: 40, height: 30, index: true)
        bad.append(("stale", Self.bytes(ZStream.indexPath(other))))
        for (name, b) in bad {
            Self.store(idxPath, b)
            let r = try reader()
            #expect(!r.usesIndex, "\(name)")
            try check(r, name)
            #expect(Self.readAll(try reader()).frames == frames, "\(name)")
        }
        // No index at all: still fine.
        try FileManager.default.removeItem(atPath: idxPath)
        #expect(try !reader().usesIndex)
        try check(try reader(), "none")
    }

    // MARK: Issue 8: reader bugs found at the boundary

    @Test func readingAtUInt64MaxIsTheEndNotATrap() throws {
        let dir = TempDir()
        let frames = Self.depthFrames(3, width: 6, height: 4, seed: 5)
        let path = dir.file("max.depth.zlib")
        for index in [false, true] {
            _ = try Self.write(path, frames, width: 6, height: 4, index: index)
            let r = try ZStreamReader(path: path, width: 6, height: 4, kind: .depth)
            var out = [UInt16](repeating: 7, count: 24)
            // `target + 1` overflowed (a trap that killed the host) before the fix.
            #expect(try out.withUnsafeMutableBytes { try r.read(UInt64.max, into: $0, format: .depthF16) } == false)
            #expect(try out.withUnsafeMutableBytes { try r.read(UInt64.max - 1, into: $0, format: .depthF16) } == false)
            #expect(out == [UInt16](repeating: 7, count: 24))
            #expect(try out.withUnsafeMutableBytes { try r.read(2, into: $0, format: .depthF16) } && out == frames[2])
            var c: OpaquePointer?
            #expect(ck_zstream_reader_open(&c, path, 6, 4, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_OK)
            #expect(ck_zstream_reader_read(&out, 48, nil, c, UInt64.max, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_END)
            #expect(ck_zstream_reader_next(&out, 48, nil, c, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_END)
            #expect(ck_zstream_reader_read(&out, 48, nil, c, 0, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_OK && out == frames[0])
            #expect(ck_zstream_reader_close(c) == CK_OK)
            try? FileManager.default.removeItem(atPath: ZStream.indexPath(path))
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Index bytes of `entries`.
    static func indexBytes(_ entries: [UInt64]) -> [UInt8] {
        entries.flatMap { v in (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
    }

    @Test func sideIndexWithAMissingOrExtraEntryIsRefused() throws {
        let dir = TempDir()
        let frames = Self.depthFrames(4, width: 20, height: 10, seed: 21)
        let path = dir.file("del.depth.zlib")
        _ = try Self.write(path, frames, width: 20, height: 10, index: true)
        let idxPath = ZStream.indexPath(path)
        let entries = (0..<4).map { i in Self.bytes(idxPath).withUnsafeBytes { ZStream.uint64LE($0, at: i * 8) } }
        let bytes = Self.bytes(path)
        var cases: [(String, [UInt64])] = []
        for k in 1..<3 { var e = entries; e.remove(at: k); cases.append(("entry \(k) deleted", e)) }
        var doubled = entries; doubled.insert((entries[1] + entries[2]) / 2, at: 2); cases.append(("entry inserted", doubled))
        for (name, e) in cases {
            Self.store(idxPath, Self.indexBytes(e))
            let r = try ZStreamReader(path: path, width: 20, height: 10, kind: .depth)
            #expect(!r.usesIndex, "\(name)")
            // Before the fix: frame_count 3 and read(1) returned frame 2's bytes with no error.
            #expect(try r.frameCount() == 4, "\(name)")
            for i in [1, 2, 3, 0] {
                var out = [UInt16](repeating: 0, count: 200)
                #expect(try out.withUnsafeMutableBytes { try r.read(UInt64(i), into: $0, format: .depthF16) }, "\(name)")
                #expect(out == frames[i], "\(name) frame \(i)")
            }
            let fresh = try ZStreamReader(path: path, width: 20, height: 10, kind: .depth)
            var out = [UInt16](repeating: 0, count: 200)
            #expect(try out.withUnsafeMutableBytes { try fresh.read(1, into: $0, format: .depthF16) } && out == frames[1], "\(name)")
        }
        // The intact index is still used.
        Self.store(idxPath, Self.indexBytes(entries))
        #expect(try ZStreamReader(path: path, width: 20, height: 10, kind: .depth).usesIndex)
        #expect(bytes.count > 0)
    }

    @Test func sideIndexSurvivesChanceMarkersInsideCompressedData() throws {
        // Incompressible frames are stored verbatim (DEFLATE stored blocks), so a frame holding the
        // samples 0x0000 0xFFFF puts the bytes 00 00 FF FF inside the compressed data: a marker that
        // is not a frame boundary. The index must still be accepted, and a deletion still caught.
        let dir = TempDir()
        var rng = SplitMix64(seed: 3)
        var frames = (0..<5).map { _ in (0..<256).map { _ in UInt16(truncatingIfNeeded: rng.next()) } }
        for f in 0..<5 { frames[f][100] = 0x0000; frames[f][101] = 0xFFFF }
        let path = dir.file("chance.depth.zlib")
        _ = try Self.write(path, frames, width: 16, height: 16, index: true)
        let bytes = Self.bytes(path)
        #expect(Self.markerEnds(bytes).count >= 10, "the frames carry chance markers")
        let idxPath = ZStream.indexPath(path)
        let entries = (0..<5).map { i in Self.bytes(idxPath).withUnsafeBytes { ZStream.uint64LE($0, at: i * 8) } }
        let r = try ZStreamReader(path: path, width: 16, height: 16, kind: .depth)
        #expect(r.usesIndex)
        var out = [UInt16](repeating: 0, count: 256)
        #expect(try out.withUnsafeMutableBytes { try r.read(3, into: $0, format: .depthF16) } && out == frames[3])
        var fewer = entries; fewer.remove(at: 2)
        Self.store(idxPath, Self.indexBytes(fewer))
        let r2 = try ZStreamReader(path: path, width: 16, height: 16, kind: .depth)
        #expect(!r2.usesIndex)
        #expect(try out.withUnsafeMutableBytes { try r2.read(2, into: $0, format: .depthF16) } && out == frames[2])
        // An extra entry at a chance marker (a marker, but not a frame start) is refused too.
        let chance = Self.markerEnds(bytes).map { UInt64($0) }.first { $0 > entries[1] && $0 < entries[2] }
        #expect(chance != nil)
        if let chance {
            var extra = entries; extra.insert(chance, at: 2)
            Self.store(idxPath, Self.indexBytes(extra))
            let r3 = try ZStreamReader(path: path, width: 16, height: 16, kind: .depth)
            #expect(try r3.frameCount() == 5)
            #expect(try out.withUnsafeMutableBytes { try r3.read(2, into: $0, format: .depthF16) } && out == frames[2])
        }
    }

    @Test func damageIsSticky() throws {
        let dir = TempDir()
        let rec = try Self.smallRecording(dir)
        let starts = Self.markerEnds(rec.bytes)
        let badPath = dir.file("sticky.depth.zlib")
        var tried = 0
        // Every flip inside frame 2's data that zlib rejects: frames 0 and 1, then CK_E_CORRUPT for ever.
        for pos in starts[1]..<(starts[2] - 4) {
            var b = rec.bytes
            b[pos] ^= 0xFF
            Self.store(badPath, b)
            let r = try ZStreamReader(path: badPath, width: 7, height: 3, kind: .depth)
            let got = Self.readAll(r)
            guard got.end == .corrupt else { continue }
            tried += 1
            var out = [UInt16](repeating: 0, count: 21)
            for i: UInt64 in [0, 1, 2, 4] {
                let e = Self.caught { _ = try out.withUnsafeMutableBytes { try r.read(i, into: $0, format: .depthF16) } }
                #expect(e?.status == .corrupt, "pos \(pos) read(\(i)) after damage")
            }
            #expect(Self.caught { _ = try r.frameCount() }?.status == .corrupt, "pos \(pos)")
            #expect(Self.readAll(r).frames.isEmpty, "pos \(pos): next() after damage")
            // frame_count finds it first: next() at frame 0 is refused as well.
            let r2 = try ZStreamReader(path: badPath, width: 7, height: 3, kind: .depth)
            if Self.caught({ _ = try r2.frameCount() })?.status == .corrupt {
                #expect(Self.caught { _ = try out.withUnsafeMutableBytes { try r2.next(into: $0, format: .depthF16) } }?.status == .corrupt)
            }
        }
        #expect(tried > 0)
        // Cut short is not damage: a later call retries (the file may still be growing).
        Self.store(badPath, Array(rec.bytes[0..<(starts[1] + 3)]))
        let r = try ZStreamReader(path: badPath, width: 7, height: 3, kind: .depth)
        #expect(Self.readAll(r).end == .corrupt)
        var out = [UInt16](repeating: 0, count: 21)
        #expect(try out.withUnsafeMutableBytes { try r.read(0, into: $0, format: .depthF16) } && out == rec.frames[0])
    }

    // MARK: Writer behaviour

    @Test func writerRefusesExistingFilesAndBadArguments() throws {
        let dir = TempDir()
        let path = dir.file("x.depth.zlib")
        _ = try Self.write(path, Self.depthFrames(2, width: 3, height: 3), width: 3, height: 3)
        do {
            _ = try ZStreamWriter(path: path, width: 3, height: 3, kind: .depth)
            Issue.record("existing file overwritten")
        } catch { #expect(error.status == .exists && error.message.contains("exists")) }
        #expect(Self.readAll(try ZStreamReader(path: path, width: 3, height: 3, kind: .depth)).frames.count == 2)  // untouched
        // An existing index without the overwrite flag blocks an indexed writer, and nothing is created.
        let fresh = dir.file("fresh.depth.zlib")
        Self.store(ZStream.indexPath(fresh), [1, 2, 3])
        do {
            _ = try ZStreamWriter(path: fresh, width: 3, height: 3, kind: .depth, index: true)
            Issue.record("existing index overwritten")
        } catch { #expect(error.status == .exists) }
        #expect(!FileIO.exists(fresh))
        // Overwrite replaces the stream and removes its stale index when no new index is written.
        Self.store(ZStream.indexPath(path), [1, 2, 3])
        _ = try ZStreamWriter(path: path, width: 3, height: 3, kind: .depth, overwrite: true)
        #expect(!FileIO.exists(ZStream.indexPath(path)))
        for (wd, ht) in [(0, 3), (3, 0), (16385, 1), (1, 16385), (-1, 2)] {
            do {
                _ = try ZStreamWriter(path: dir.file("d"), width: wd, height: ht, kind: .depth)
                Issue.record("\(wd)x\(ht) accepted")
            } catch { #expect(error.status == .invalidArgument && error.message.contains(wd < 1 || wd > 16384 ? "width" : "height")) }
        }
        for level: Int32 in [-1, 10, 100] {
            do {
                _ = try ZStreamWriter(path: dir.file("l"), width: 2, height: 2, kind: .depth, level: level)
                Issue.record("level \(level) accepted")
            } catch { #expect(error.status == .invalidArgument && error.message.contains("level")) }
        }
        let w = try ZStreamWriter(path: dir.file("fmt"), width: 2, height: 2, kind: .confidence)
        let four: [Float] = [1, 2, 3, 4]
        for f in [SampleFormat.depthF32, .depthF16, .depthMM] {
            #expect(throws: CaptureKitError.self) { try four.withUnsafeBytes { try w.append($0.baseAddress!, format: f) } }
        }
        #expect(w.frameCount == 0)
        try four.withUnsafeBytes { try w.append($0.baseAddress!, format: .u8) }  // still usable: argument errors are not sticky
        #expect(w.frameCount == 1)
        try w.close()
        try w.close()  // idempotent
        #expect(throws: CaptureKitError.self) { try four.withUnsafeBytes { try w.append($0.baseAddress!, format: .u8) } }
        // Reader arguments.
        let r = try ZStreamReader(path: dir.file("fmt"), width: 2, height: 2, kind: .confidence)
        var small = [UInt8](repeating: 0, count: 3)
        let e1 = Self.caught { _ = try small.withUnsafeMutableBytes { try r.next(into: $0, format: .u8) } }
        #expect(e1?.status == .bufferTooSmall && e1?.message.contains("4 bytes") == true)
        var f32 = [Float](repeating: 0, count: 4)
        let e2 = Self.caught { _ = try f32.withUnsafeMutableBytes { try r.next(into: $0, format: .depthF32) } }
        #expect(e2?.status == .invalidArgument)
        #expect(r.position == 0)
        do {
            _ = try ZStreamReader(path: dir.file("missing"), width: 2, height: 2, kind: .depth)
            Issue.record("missing file opened")
        } catch { #expect(error.status == .notFound) }
    }

    // MARK: Fault injection (FileIO's countdown is per thread: parallel tests do not interfere)

    @Test func failedWritesLeaveTheWriterFailedAndTheFileClean() {
        for failure in Self.faultInjectionLoop() { Issue.record(Comment(rawValue: failure)) }
    }

    /// Appends a frame with typed errors (Array.withUnsafeBytes rethrows untyped).
    static func append(_ w: ZStreamWriter, _ f: [UInt16]) throws(CaptureKitError) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(f.count * 2, 1), alignment: 16)
        defer { p.deallocate() }
        f.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: f.count * 2) }
        try w.append(p, format: .depthF16)
    }

    /// For N = 1, 2, ...: the Nth file operation fails; every outcome must be clean.
    static func faultInjectionLoop() -> [String] {
        let frames = depthFrames(6, width: 100, height: 80, seed: 4)
        var appendFailures = 0, cleanRuns = 0
        var failures = [String]()
        func die(_ m: String) { failures.append(m) }
        for n in 1...40 {
            for index in [false, true] {
                let dir = TempDir()
                let path = dir.file("f.depth.zlib")
                var appended = 0
                FileIO.failCall(after: n)
                do throws(CaptureKitError) {
                    let w = try ZStreamWriter(path: path, width: 100, height: 80, kind: .depth, level: 1, index: index)
                    for f in frames {
                        do throws(CaptureKitError) {
                            try append(w, f)
                            appended += 1
                        } catch {
                            if error.status != .io { die("n \(n): append gave \(error)") }
                            appendFailures += 1
                            // Sticky: the next frame is refused with CK_E_STATE.
                            do throws(CaptureKitError) {
                                try append(w, f)
                                die("n \(n): append after a failure succeeded")
                            } catch {
                                if error.status != .state || !error.message.contains("failed earlier") { die("n \(n): \(error)") }
                            }
                            break
                        }
                    }
                    try w.close()
                } catch {
                    if error.status != .io { die("n \(n): \(error)") }
                }
                FileIO.stopFailing()
                guard FileIO.exists(path) else { continue }  // the open failed: nothing left behind
                // Readers see exactly the frames whose append succeeded, never a partial one.
                guard let r = try? ZStreamReader(path: path, width: 100, height: 80, kind: .depth) else { die("reopen"); continue }
                let got = readAll(r)
                if got.frames != Array(frames.prefix(appended)) || got.end != nil {
                    die("n \(n) index \(index): \(got.frames.count) frames, end \(String(describing: got.end)), appended \(appended)")
                }
                // And so does MultiScan's decoder (inflate all, cut by frame size).
                let all = inflateAll(bytes(path))
                if all.error || all.output != le16(Array(frames.prefix(appended))) { die("n \(n): inflate") }
                if index {
                    let idx = bytes(ZStream.indexPath(path))
                    if idx.count != 8 * appended { die("n \(n): index has \(idx.count) bytes for \(appended) frames") }
                }
                if appended == frames.count { cleanRuns += 1 }
            }
        }
        if appendFailures < 12 || cleanRuns == 0 { die("\(appendFailures) append failures, \(cleanRuns) clean runs") }
        return failures
    }

    // MARK: The C entry points

    @Test func cEntryPointsAndConstants() throws {
        #expect(ZStream.defaultLevel == CK_ZSTREAM_DEFAULT_LEVEL)
        #expect(SampleFormat.depthF32.rawValue == Int32(CK_FORMAT_DEPTH_F32.rawValue))
        #expect(SampleFormat.depthF16.rawValue == Int32(CK_FORMAT_DEPTH_F16.rawValue))
        #expect(SampleFormat.depthMM.rawValue == Int32(CK_FORMAT_DEPTH_MM.rawValue))
        #expect(SampleFormat.u8.rawValue == Int32(CK_FORMAT_U8.rawValue))
        #expect(ZStream.maxDimension == Int(CK_DEPTH_MAX_DIMENSION))
        let dir = TempDir()
        let path = dir.file("c.depth.zlib")
        var w: OpaquePointer? = nil
        #expect(ck_zstream_writer_open(&w, path, 3, 2, Int32(CK_FORMAT_DEPTH_F16.rawValue), 0, CK_ZSTREAM_INDEX) == CK_OK)
        let frame: [UInt16] = [1, 2, 3, 4, 5, 6]
        #expect(frame.withUnsafeBytes { b in
            var m = ck_depth_map(data: b.baseAddress, width: 3, height: 2, stride: 0,
                                 format: Int32(CK_FORMAT_DEPTH_F16.rawValue), reserved: 0)
            return ck_zstream_writer_append(w, &m)
        } == CK_OK)
        var count: UInt64 = 9
        #expect(ck_zstream_writer_frame_count(&count, w) == CK_OK && count == 1)
        #expect(ck_zstream_writer_close(w) == CK_OK)
        #expect(ck_zstream_writer_close(nil) == CK_OK)
        var r: OpaquePointer? = nil
        #expect(ck_zstream_reader_open(&r, path, 3, 2, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_OK)
        var out = [UInt16](repeating: 0, count: 6)
        var written = 0
        #expect(ck_zstream_reader_next(&out, 12, &written, r, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_OK && out == frame)
        #expect(written == 12)
        #expect(ck_zstream_reader_next(&out, 12, nil, r, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_END)
        #expect(ck_zstream_reader_read(&out, -1, nil, r, 0, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_E_INVALID_ARGUMENT)
        #expect(String(cString: ck_last_error_message()).hasPrefix("ck_zstream_reader_read: dst_capacity"))
        written = 0
        #expect(ck_zstream_reader_read(&out, 11, &written, r, 0, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_E_BUFFER_TOO_SMALL)
        #expect(written == 12)  // the bytes needed
        #expect(ck_zstream_reader_read(&out, 12, nil, r, 0, 0) == CK_E_INVALID_ARGUMENT)
        #expect(ck_zstream_reader_close(r) == CK_OK)
        #expect(ck_zstream_reader_close(nil) == CK_OK)
        // Invalid UTF-8 in a path.
        let badPath: [CChar] = [0x2F, CChar(bitPattern: 0xFF), 0x61, 0]
        #expect(ck_zstream_reader_open(&r, badPath, 3, 2, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_E_INVALID_ARGUMENT)
        #expect(String(cString: ck_last_error_message()) == "ck_zstream_reader_open: path is not valid UTF-8")
        #expect(r == nil)
    }
}
