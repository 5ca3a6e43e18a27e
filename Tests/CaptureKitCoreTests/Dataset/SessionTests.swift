import Foundation
import Testing
@testable import CaptureKitCore

@Suite(.serialized) struct DatasetSessionTests {
    static func tempDir(_ name: String) -> String {
        let d = NSTemporaryDirectory() + "ck-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return d
    }

    func input(_ i: Int, _ k: Intrinsics) throws -> Dataset.FrameInput {
        let pose = lookAt(eye: Vec3(Float(sin(Double(i))), 1, Float(cos(Double(i)))), target: .zero)
        return Dataset.FrameInput(timestamp: Double(i), pose: pose, intrinsics: k)
    }

    @Test func fullDiskDuringAddLeavesNoTornFrame() throws {
        #if DEBUG
        let k = try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
        let rgb = [UInt8](repeating: 90, count: 16 * 12 * 3)
        let depth = [Float](repeating: 1.5, count: 16 * 12)
        // For N = 1, 2, …: the Nth file operation of an add fails with ENOSPC.
        var failures = 0
        for n in 1...30 {
            let dir = Self.tempDir("enospc")
            var ds = try Dataset(create: dir, options: .withStartTime)
            try rgb.withUnsafeBytes { px in try depth.withUnsafeBufferPointer { d in
                var first = try input(0, k)
                first.pixels = (px, 48, .rgb8); first.depth = (d, 16, 12)
                _ = try ds.addFrame(first)
                var second = try input(1, k)
                second.pixels = (px, 48, .rgb8); second.depth = (d, 16, 12)
                FileIO.failCall(after: n, errno: ENOSPC)
                var failed = false
                do { _ = try ds.addFrame(second) } catch {
                    failures += 1
                    failed = true
                    let status = (error as? CaptureKitError)?.status
                    #expect(status == .io || status == .noMemory || status == .state, "n=\(n): \(error)")
                }
                FileIO.stopFailing()
                var third = try input(2, k)
                third.pixels = (px, 48, .rgb8); third.depth = (d, 16, 12)
                if failed {
                    // A failed write is sticky (never OK after a loss): the same dataset refuses
                    // every later write and its close, even with the disk fine again; a reopen
                    // goes on (the failed add's journal line was cut back, so its id is free and
                    // is not journaled twice).
                    #expect(throws: CaptureKitError.self, "n=\(n): add OK after a failed add") { _ = try ds.addFrame(third) }
                    #expect(throws: CaptureKitError.self, "n=\(n): flush OK after a failed add") { try ds.flush() }
                    #expect(ds.frames.count == 1, "n=\(n)")
                    #expect(throws: CaptureKitError.self, "n=\(n): close OK after a failed add") { try ds.close() }
                    ds = try Dataset(open: dir)
                    #expect(ds.frames.count == 1, "n=\(n)")
                }
                _ = try ds.addFrame(third)
                #expect(ds.frames.count == (failed ? 2 : 3), "n=\(n)")
            } }
            let live = ds.frames
            try ds.close()
            // Reopen: the same frames as live, every frame listed has its files, and the failed
            // add left no stray files.
            let re = try Dataset(open: dir)
            #expect(re.frames == live, "n=\(n)")
            #expect(Set(re.frames.map(\.id)).count == re.frames.count, "n=\(n)")
            for f in re.frames {
                #expect(FileIO.exists("\(dir)/\(f.imagePath)") && FileIO.exists("\(dir)/\(f.depthPath ?? "")"))
            }
            let images = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/images").filter { !$0.contains(".tmp") }
            #expect(images.count == re.frames.count, "n=\(n): \(images) vs \(re.frames.count) frames")
            try re.finalize(zipPath: nil)
            let t = try TransformsManifest.read(from: "\(dir)/transforms.json")
            #expect(t.frames.count == re.frames.count)
            try? FileManager.default.removeItem(atPath: dir)
        }
        #expect(failures > 5)
        #endif
    }

    @Test func pathsMayNotEscape() throws {
        for bad in ["/etc/passwd", "../x.png", "images/../../x", "a//b.png", "a\\b.png", "", "./a.png", "images/\u{1}.png"] {
            #expect(throws: CaptureKitError.self, "\(bad)") { try PathRules.checkRelative(bad) }
        }
        try PathRules.checkRelative("images/000001.jpg")
        let dir = Self.tempDir("paths")
        let ds = try Dataset(create: dir, options: .withStartTime)
        var f = try input(0, try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12))
        f.imagePath = "../outside.png"
        #expect { try ds.addFrame(f) } throws: { ($0 as? CaptureKitError)?.status == .invalidArgument }
        f.imagePath = "images/missing.png"
        #expect { try ds.addFrame(f) } throws: { ($0 as? CaptureKitError)?.status == .notFound }
        try ds.cancel()
        #expect(!FileIO.exists(dir))
    }

    /// Regression (issue 8, finding 1): a capture without pixels used to park a pointer into the
    /// caller's depth buffer and read it at the next call, so every depth PNG held the *next*
    /// frame's depth. The caller's buffer is overwritten right after each call here, as a camera
    /// loop does; each depth PNG must hold the depth of its own frame.
    @Test func depthOfACallerWrittenCaptureIsItsOwnFrame() throws {
        let dir = Self.tempDir("pending-depth")
        let box = try Box(center: .zero, size: Vec3(0.5, 0.4, 0.6), yaw: 0, floor: 0)
        var options = SessionOptions()
        options.dataset = .withStartTime
        options.scheduler.intervalSlow = 0.6; options.scheduler.intervalMedium = 0.6; options.scheduler.intervalFast = 0.6
        options.scheduler.firstCaptureDelay = 0.1
        let session = try Session(directory: dir, options: options, box: box)
        let k = try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
        let depth = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16 * 12)
        defer { depth.deallocate() }
        var expected: [String: UInt16] = [:]   // depth PNG path -> the mm value of its frame
        var pendingImage: (String, UInt16)?
        for i in 0..<180 {
            let metres = 0.5 + Float(i) * 0.005          // every frame has its own depth value
            depth.update(repeating: metres)
            let a = Double(i) / 30 * 0.3
            var f = SessionFrame(timestamp: Double(i) / 30, pose: lookAt(eye: Vec3(Float(1.3 * sin(a)), 0.8, Float(1.3 * cos(a))), target: Vec3(0, 0.2, 0)),
                                 intrinsics: k)
            f.depth = UnsafeBufferPointer(depth); f.depthIntrinsics = k
            let r = try session.process(f)
            depth.update(repeating: 9.999)               // the caller reuses its buffer at once
            if let (img, mm) = pendingImage { expected["depth/" + img.dropFirst("images/".count)] = mm; pendingImage = nil }
            if r.captured {
                #expect(!r.imagePath.isEmpty)
                let px = [UInt8](repeating: 7, count: 16 * 12 * 3)
                try px.withUnsafeBytes { b in try PNG.write("\(dir)/\(r.imagePath)", b, width: 16, height: 12, stride: 48, format: .rgb8, level: 1, overwrite: false) }
                pendingImage = (r.imagePath, UInt16((metres * 1000).rounded()))
            }
        }
        try session.finish(zipPath: nil)
        if let (img, mm) = pendingImage { expected["depth/" + img.dropFirst("images/".count)] = mm }
        #expect(expected.count >= 5)
        #expect(session.dataset.frames.count == expected.count)
        for (path, mm) in expected {
            let (px, info) = try PNG.read("\(dir)/\(path)")
            #expect(info.width == 16 && info.height == 12)
            let values = px.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }  // decoded native-endian
            #expect(values.allSatisfy { $0 == mm }, "\(path): expected \(mm) mm, got \(values.first ?? 0)")
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The session's event queue is bounded (a caller that never pops events keeps memory flat);
    /// events.jsonl still has every event, and `result.events` counts this frame's.
    @Test func eventQueueIsBoundedAndTheLogIsComplete() throws {
        let dir = Self.tempDir("events")
        var options = SessionOptions()
        options.dataset = .withStartTime
        options.scheduler.promptDelay = 0; options.scheduler.promptRepeat = 0.01
        let session = try Session(directory: dir, options: options, box: nil)
        let k = try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
        var counted = 0
        for i in 0..<1500 {   // tracking limited every frame: a prompt every frame
            var f = SessionFrame(timestamp: Double(i) / 30, pose: lookAt(eye: Vec3(0, 0.8, 1.3), target: Vec3(0, 0.2, 0)), intrinsics: k)
            f.tracking = .limited
            counted += Int(try session.process(f).events)
        }
        try session.finish(zipPath: nil)
        var popped = 0
        while session.nextEvent() != nil { popped += 1 }
        let logged = try EventRecord.read(from: "\(dir)/events.jsonl").records.count
        #expect(counted > Int(EventQueue.capacity) && logged == counted)
        #expect(popped == EventQueue.capacity)
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test func sessionRaisesStorageLowAndLogs() throws {
        var logged: [(LogLevel, String)] = []
        var options = SessionOptions()
        options.dataset = .withStartTime
        options.storageWarningMinutes = 1e12  // any real disk is "low" against this: the event must fire once
        options.logLevel = .debug
        options.log = { logged.append(($0, $1)) }
        let dir = Self.tempDir("session")
        let box = try Box(center: .zero, size: Vec3(0.5, 0.4, 0.6), yaw: 0, floor: 0)
        let session = try Session(directory: dir, options: options, box: box)
        let k = try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
        let dk = k
        let depth = [Float](repeating: 1.2, count: 16 * 12), conf = [UInt8](repeating: 2, count: 16 * 12)
        var codes: [EventCode] = []
        for i in 0..<120 {
            let a = Double(i) / 30 * 0.25
            var f = SessionFrame(timestamp: Double(i) / 30, pose: lookAt(eye: Vec3(Float(1.3 * sin(a)), 0.8, Float(1.3 * cos(a))), target: Vec3(0, 0.2, 0)),
                                 intrinsics: k)
            try depth.withUnsafeBufferPointer { d in try conf.withUnsafeBufferPointer { c in
                f.depth = d; f.confidence = c; f.depthIntrinsics = dk
                _ = try session.process(f)
            } }
            while let e = session.nextEvent() { codes.append(e.code) }
        }
        #expect(codes.filter { $0 == .storageLow }.count == 1)
        #expect(logged.contains { $0.0 == .info && $0.1.contains("session started") })
        try session.finish(zipPath: nil)
        let events = try EventRecord.read(from: "\(dir)/events.jsonl").records
        #expect(events.contains { $0.code == EventCode.storageLow.rawValue })
        #expect(throws: CaptureKitError.self) { try session.process(SessionFrame(timestamp: 99, pose: Pose(x: Vec3(1, 0, 0), y: Vec3(0, 1, 0), z: Vec3(0, 0, 1), t: .zero), intrinsics: k)) }
        try? FileManager.default.removeItem(atPath: dir)
    }
}

extension DatasetOptions {
    /// The defaults with a scan start time (streaming refuses an unset one).
    static var withStartTime: DatasetOptions {
        var o = DatasetOptions()
        o.startTimeUnix = 1_795_000_000
        return o
    }
}
