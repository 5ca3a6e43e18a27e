import Foundation
import Testing
import CZlib
@testable import CaptureKitCore

/// Resuming after a crash: a stream continued by a fresh compressor after its last frame
/// boundary, the journal's stream checkpoints, and a session rebuilt from its dataset.
@Suite(.serialized) struct ResumeTests {
    static let k = try! Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
    static let box = try! Box(center: Vec3(0, 0.25, 0), size: Vec3(0.5, 0.5, 0.5), yaw: 0)

    static func depth(_ i: Int) -> [Float] { (0..<48).map { 0.5 + Float(($0 + i) % 64) / 32 } }
    static func confidence(_ i: Int) -> [UInt8] { (0..<48).map { UInt8(($0 + i) % 3) } }

    /// Frame i of an orbit around the box, 30 frames a second.
    static func frame(_ i: Int) -> SessionFrame {
        let a = 0.012 * Double(i)
        let pose = lookAt(eye: Vec3(Float(1.3 * sin(a)), 0.8, Float(1.3 * cos(a))), target: Vec3(0, 0.25, 0))
        return SessionFrame(timestamp: Double(i) / 30, pose: pose, intrinsics: k)
    }

    static let rgb = (0..<(16 * 12 * 3)).map { UInt8(truncatingIfNeeded: $0 * 7) }

    static func process(_ s: Session, _ i: Int) throws -> SessionResult {
        let d = depth(i), c = confidence(i)
        return try d.withUnsafeBufferPointer { dp in
            try c.withUnsafeBufferPointer { cp in
                try rgb.withUnsafeBytes { px in
                var f = frame(i)
                f.pixels = (px, 48, .rgb8)
                f.depth = dp
                f.confidence = cp
                f.depthIntrinsics = try Intrinsics(fx: 10, fy: 10, cx: 4, cy: 3, width: 8, height: 6)
                return try s.process(f)
                }
            }
        }
    }

    static func options() -> SessionOptions {
        var o = SessionOptions()
        o.dataset.startTimeUnix = 1_700_000_000
        o.dataset.writeQueueBytes = 1 << 20
        return o
    }

    /// Python's `zlib.decompressobj(-15)` over the whole file, as MultiScan's decoder reads it.
    static func inflateWhole(_ path: String) throws -> [UInt8] {
        let data = try FileIO.readAll(path)
        let inflater = try Inflater(raw: true)
        var out = [UInt8](), used = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while used < data.count && !inflater.finished {
            let r = try data.withUnsafeBytes { try inflater.inflate(UnsafeRawBufferPointer(rebasing: $0[used...]), into: buffer) }
            used += r.consumed
            out += buffer[0..<r.produced]
            if r.consumed == 0 && r.produced == 0 { break }
        }
        return out
    }

    @Test func aContinuedStreamReadsAsOneStream() throws {
        let dir = DatasetSessionTests.tempDir("zcontinue")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = "\(dir)/s.depth.zlib"
        let w = try ZStreamWriter(path: path, width: 8, height: 6, kind: .confidence)
        var ends: [UInt64] = []
        for i in 0..<5 { try Self.confidence(i).withUnsafeBytes { try w.append($0.baseAddress!, format: .u8) }; ends.append(w.compressedSize) }
        // A crash: the process dies with a frame half written (its bytes cut) and no final block.
        try Self.confidence(5).withUnsafeBytes { try w.append($0.baseAddress!, format: .u8) }
        let f = try File.open(path, .readWrite)
        try f.truncate(to: (ends[4] + w.compressedSize) / 2)
        f.closeQuietly()
        // The boundary check: exact frames ending at a full flush, nothing else.
        let r = try File.open(path, .readOnly)
        #expect(try ZStream.segmentHoldsFrames(r, from: 0, to: ends[4], frames: 5, frameBytes: 48))
        #expect(try ZStream.segmentHoldsFrames(r, from: ends[1], to: ends[4], frames: 3, frameBytes: 48))
        #expect(try !ZStream.segmentHoldsFrames(r, from: 0, to: ends[4], frames: 4, frameBytes: 48))
        #expect(try !ZStream.segmentHoldsFrames(r, from: 0, to: ends[4] - 1, frames: 5, frameBytes: 48))
        #expect(try !ZStream.segmentHoldsFrames(r, from: 3, to: ends[4], frames: 5, frameBytes: 48))
        #expect(try !ZStream.segmentHoldsFrames(r, from: 0, to: ends[4] + 3, frames: 5, frameBytes: 48))
        r.closeQuietly()
        // Continue after frame 4 with a fresh compressor.
        let c = try ZStreamWriter(continuing: path, width: 8, height: 6, kind: .confidence, frames: 5, at: ends[4])
        #expect(c.frameCount == 5 && c.compressedSize == ends[4])
        for i in 10..<13 { try Self.confidence(i).withUnsafeBytes { try c.append($0.baseAddress!, format: .u8) } }
        try c.close()
        let all = try Self.inflateWhole(path)
        #expect(all == [0, 1, 2, 3, 4, 10, 11, 12].flatMap(Self.confidence))
        let reader = try ZStreamReader(path: path, width: 8, height: 6, kind: .confidence)
        #expect(try reader.frameCount() == 8)
        // Past the file: refused, nothing cut.
        let size = try File.open(path, .readOnly).size()
        #expect(throws: CaptureKitError.self) { _ = try ZStreamWriter(continuing: path, width: 8, height: 6, kind: .confidence, frames: 9, at: size + 1) }
        #expect(try File.open(path, .readOnly).size() == size)
    }

    @Test func aResumedSessionGoesOnAsAnUninterruptedOne() throws {
        let crashed = DatasetSessionTests.tempDir("resume"), straight = DatasetSessionTests.tempDir("straight")
        // The crashed session: 200 frames, flushed, then dropped without close (its writer is
        // stopped by deinit, but nothing more is journaled: as after a crash once flushed).
        do {
            let s = try Session(directory: crashed, options: Self.options(), box: Self.box)
            for i in 0..<200 { _ = try Self.process(s, i) }
            try s.flush()
        }
        let u = try Session(directory: straight, options: Self.options(), box: Self.box)
        for i in 0..<200 { _ = try Self.process(u, i) }
        let s = try Session(resume: crashed, options: Self.options())
        #expect(s.box == Self.box)
        #expect(s.dataset.frames.count == u.dataset.frameCount && s.dataset.frames.count > 1)
        #expect(s.scheduler.captureCount == u.scheduler.captureCount)
        #expect(s.coverage?.summary == u.coverage?.summary)
        for face in 0..<6 { #expect(try s.coverage?.face(face) == u.coverage?.face(face)) }
        #expect(s.dataset.streamedFrames == 200)
        for i in 230..<600 {
            let a = try Self.process(s, i), b = try Self.process(u, i)
            #expect(a.captured == b.captured && a.guidance.captures == b.guidance.captures && a.guidance.band == b.guidance.band, "frame \(i)")
            #expect(abs(a.guidance.speed - b.guidance.speed) <= 1e-5 * max(1, b.guidance.speed), "frame \(i)")
        }
        #expect(s.coverage?.summary == u.coverage?.summary)
        // A timestamp before the last journaled one is refused, as in the uninterrupted session.
        #expect(throws: CaptureKitError.self) { _ = try Self.process(s, 100) }
        try s.finish(zipPath: nil)
        try u.finish(zipPath: nil)
        let info = "\(crashed)/\(s.dataset.scanID)"
        let depth = try Self.inflateWhole("\(info).depth.zlib")
        let expected = (Array(0..<200) + Array(230..<600)).flatMap { Self.depth($0).map { Float16($0) } }
        #expect(depth.count == expected.count * 2)
        #expect(depth == expected.withUnsafeBytes { Array($0) })
        #expect(try CameraInfoRecord.read(from: "\(info).jsonl").records.count == 570)
    }

    @Test func hostileCheckpointsAreCorruptAndCutNothing() throws {
        let dir = DatasetSessionTests.tempDir("hostile")
        do {
            let s = try Session(directory: dir, options: Self.options(), box: Self.box)
            for i in 0..<70 { _ = try Self.process(s, i) }
            try s.close()
        }
        let journal = "\(dir)/\(Dataset.journalName)"
        let original = String(decoding: try FileIO.readAll(journal), as: UTF8.self)
        let scan = try Dataset(open: dir, readOnly: true).scanID
        let files = ["\(scan).depth.zlib", "\(scan).confidence.zlib", "\(scan).jsonl"].map { "\(dir)/\($0)" }
        let sizes = try files.map { try File.open($0, .readOnly).size() }
        let last = try #require(original.split(separator: "\n").last(where: { $0.contains("\"op\":\"stream\"") }))
        for (from, to) in [("\"info_bytes\":", "\"info_bytes\":-"), ("\"depth\":[70,", "\"depth\":[70,9999999"),
                           ("\"depth\":[70,", "\"depth\":[70,1"), ("\"depth\":[70,", "\"depth\":[69,"),
                           ("\"width\":8", "\"width\":80000"), ("\"frames\":70", "\"frames\":0")] {
            let edited = last.replacingOccurrences(of: from, with: to)
            #expect(edited != last, "\(from)")
            try FileIO.writeAtomically(journal, Array(original.replacingOccurrences(of: last, with: edited).utf8), overwrite: true)
            #expect(throws: CaptureKitError.self) { _ = try Session(resume: dir, options: Self.options()) }
            do { _ = try Dataset(open: dir) } catch { #expect(error.status == .corrupt, "\(to): \(error)") }
            #expect(try files.map { try File.open($0, .readOnly).size() } == sizes, "\(to)")
        }
    }
}

extension FileIO {
    static func writeAtomically(_ path: String, _ bytes: [UInt8], overwrite: Bool) throws {
        try bytes.withUnsafeBytes { b in try writeAtomically(path, b, overwrite: overwrite) }
    }
}
