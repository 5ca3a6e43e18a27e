import Foundation
import Testing
@testable import CaptureKitCore

#if DEBUG
/// Fault injection at every seam (docs/DESIGN.md#tests): for N = 1, 2, … the Nth file, zlib, zstd or json-c call
/// of an operation fails, until the operation succeeds with no fault firing. Each outcome must be
/// clean: the seam's status, a message, no file descriptor left open on the dataset's files, and a
/// dataset that reopens to its last consistent state (the frames acknowledged before the failing
/// call, each with its files; nothing of the failed frame left behind).
///
/// The hooks are per thread and every test body is synchronous, so the suites run in parallel with
/// the rest. Open descriptors are checked by path (every /proc/self/fd entry pointing into the
/// test's own folder) rather than by count, which parallel tests would disturb.
@Suite struct FaultInjectionTests {
    /// One seam of the core: the wrapper that owns every call of that library.
    enum Seam: String, CaseIterable, CustomStringConvertible, Sendable {
        case file, zlib, zstd, json
        var description: String { rawValue }

        func arm(_ n: Int) {
            switch self {
            case .file: FileIO.failCall(after: n)
            case .zlib: Zlib.failCall(after: n)
            case .zstd: Zstd.failCall(after: n)
            case .json: JSON.failCall(after: n)
            }
        }

        func disarm() {
            FileIO.stopFailing(); Zlib.stopFailing(); Zstd.stopFailing(); JSON.stopFailing()
        }

        /// The armed fault has not fired yet.
        var pending: Bool {
            switch self {
            case .file: FileIO.faultPending
            case .zlib: Zlib.faultPending
            case .zstd: Zstd.faultPending
            case .json: JSON.faultPending
            }
        }

        /// The statuses an operation may report when this seam fails: EIO → `io`; zlib, zstd and
        /// json-c fail as if out of memory → `noMemory` (a stream writer reports any failure of
        /// its write as `io`).
        var statuses: Set<CaptureKitError.Status> {
            switch self {
            case .file: [.io]
            case .zlib, .zstd, .json: [.noMemory, .io]  // a dataset reports its failed write as io (sticky)
            }
        }
    }

    /// A fresh folder for one run; removed on deinit.
    final class Root {
        let path: String
        init(_ name: String) {
            path = NSTemporaryDirectory() + "ck-fault-\(name)-\(UUID().uuidString)"
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var dataset: String { "\(path)/ds" }
        func file(_ name: String) -> String { "\(path)/\(name)" }
    }

    /// Every descriptor of this process open on a file under `folder` (by its /proc/self/fd link).
    static func openFiles(under folder: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                  target.hasPrefix(folder + "/") || target == folder else { return nil }
            return target
        }.sorted()
    }

    /// Files in a folder, sorted (empty if it does not exist).
    static func list(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    static let width = 32, height = 24, depthWidth = 16, depthHeight = 12
    static let rgb: [UInt8] = (0..<(width * height * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 5)) }
    static let depth: [Float] = (0..<(depthWidth * depthHeight)).map { 0.5 + Float($0 % 37) * 0.01 }
    static let confidence: [UInt8] = (0..<(depthWidth * depthHeight)).map { UInt8($0 % 3) }

    static func intrinsics() throws -> Intrinsics {
        try Intrinsics(fx: 30, fy: 30, cx: Float(width) / 2, cy: Float(height) / 2, width: UInt32(width), height: UInt32(height))
    }

    static func pose(_ i: Int) -> Pose {
        lookAt(eye: Vec3(Float(sin(Double(i))), 1, Float(cos(Double(i)))), target: .zero)
    }

    /// Adds frame `i` with pixels (the library writes images/NNNNNN.png) and depth (depth/NNNNNN.png).
    static func addFrame(_ ds: Dataset, _ i: Int) throws -> Int64 {
        var input = Dataset.FrameInput(timestamp: Double(i), pose: pose(i), intrinsics: try intrinsics())
        return try rgb.withUnsafeBytes { (px) throws -> Int64 in
            try depth.withUnsafeBufferPointer { (d) throws -> Int64 in
                input.pixels = (px, width * 3, .rgb8)
                input.depth = (d, depthWidth, depthHeight)
                return try ds.addFrame(input)
            }
        }
    }

    /// Streams frame `i` (depth and confidence) to the MultiScan files.
    static func streamFrame(_ ds: Dataset, _ i: Int) throws {
        let k = try Intrinsics(fx: 15, fy: 15, cx: 8, cy: 6, width: UInt32(depthWidth), height: UInt32(depthHeight))
        _ = try depth.withUnsafeBytes { (d) throws in
            try confidence.withUnsafeBytes { (c) throws in
                try ds.streamFrame(timestamp: Double(i) / 60, pose: pose(i), intrinsics: k, depth: d.baseAddress,
                                   confidence: c.baseAddress, width: depthWidth, height: depthHeight)
            }
        }
    }

    /// What one run of an operation gave.
    struct Outcome {
        var failure: CaptureKitError?
        /// The armed fault fired (an operation may survive a fault in a best-effort call).
        var fired: Bool
    }

    /// Runs `body` with the nth call of `seam` failing; every seam is disarmed afterwards.
    static func run(_ seam: Seam, _ n: Int, _ body: () throws -> Void) -> Outcome {
        seam.arm(n)
        var failure: CaptureKitError? = nil
        do { try body() } catch {
            failure = error as? CaptureKitError
            if failure == nil { Issue.record("not a CaptureKitError: \(error)"); failure = .io("\(error)") }
        }
        let fired = !seam.pending
        seam.disarm()
        return Outcome(failure: failure, fired: fired)
    }

    /// For n = 1, 2, …: `attempt(n)` runs the operation once with the nth call of the seam failing
    /// (and checks the outcome); stops at the first run that succeeds with no fault firing. Returns
    /// how many runs failed and the last n. A loop that never ends is a test failure at `limit`.
    static func loop(_ seam: Seam, _ what: String, limit: Int = 3000,
                     _ attempt: (Int) throws -> Outcome) throws -> (failures: Int, runs: Int) {
        var failures = 0
        for n in 1...limit {
            let outcome = try attempt(n)
            if let e = outcome.failure {
                failures += 1
                #expect(seam.statuses.contains(e.status), "\(what), \(seam) call \(n): \(e)")
                #expect(!e.message.isEmpty, "\(what), \(seam) call \(n): no message")
            } else if !outcome.fired {
                print("fault injection: \(what), \(seam): \(failures) of \(n - 1) injected faults failed the call; clean at N = \(n)")
                return (failures, n)
            }
        }
        Issue.record("\(what), \(seam): still failing after \(limit) injected faults")
        return (failures, limit)
    }

    /// The dataset at `dir` reopens with exactly frames 0..<count, each with its image and depth
    /// PNG, and its images/ and depth/ folders hold exactly those files (no temporary file, nothing
    /// of a failed frame).
    static func expectConsistent(_ dir: String, frames count: Int, _ context: String) throws {
        let re = try Dataset(open: dir)
        #expect(re.frames.map(\.id) == (0..<Int64(count)).map { $0 }, "\(context): reopened frames \(re.frames.map(\.id))")
        for f in re.frames {
            #expect(FileIO.exists("\(dir)/\(f.imagePath)"), "\(context): \(f.imagePath) missing")
            #expect(f.depthPath.map { FileIO.exists("\(dir)/\($0)") } == true, "\(context): depth of frame \(f.id) missing")
        }
        let names = (0..<count).map { "\(Dataset.number(Int64($0))).png" }
        #expect(list("\(dir)/images") == names, "\(context): images/ holds \(list("\(dir)/images"))")
        #expect(list("\(dir)/depth") == names, "\(context): depth/ holds \(list("\(dir)/depth"))")
        #expect(list(dir).allSatisfy { !$0.contains(".tmp") }, "\(context): temporary files \(list(dir))")
        try re.close()
    }

    // MARK: Dataset.addFrame (pixels and depth)

    @Test(arguments: Seam.allCases) func addFrame(_ seam: Seam) throws {
        let (failures, runs) = try Self.loop(seam, "addFrame") { n in
            let root = Root("add")
            let context = "addFrame, \(seam) call \(n)"
            let outcome: Outcome
            do {  // the dataset is released at the end of this block
                let d = try Dataset(create: root.dataset, options: .withStartTime)
                for i in 0..<2 { _ = try Self.addFrame(d, i) }
                let before = Self.openFiles(under: root.path)
                outcome = Self.run(seam, n) { () throws in _ = try Self.addFrame(d, 2) }
                #expect(Self.openFiles(under: root.path) == before, "\(context): descriptors \(Self.openFiles(under: root.path)) vs \(before)")
                #expect(d.frames.count == (outcome.failure == nil ? 3 : 2), "\(context): \(d.frames.count) frames in memory")
            }
            #expect(Self.openFiles(under: root.path).isEmpty, "\(context): descriptors left \(Self.openFiles(under: root.path))")
            try Self.expectConsistent(root.dataset, frames: outcome.failure == nil ? 3 : 2, "\(context)")
            return outcome
        }
        // A PNG pair and a journal line: every seam but zstd takes part.
        if seam == .zstd { #expect(failures == 0 && runs == 1) } else { #expect(failures > 0, "\(seam): no fault surfaced") }
    }

    /// A failed add whose journal line reached the file (the fsync after it failed) must not come
    /// back on reopen, not even once the next add succeeds with the same id.
    @Test func failedAddThenAddLeavesNoDuplicate() throws {
        let (_, _) = try Self.loop(.file, "add after a failed add") { n in
            let root = Root("readd")
            var ds = try Dataset(create: root.dataset, options: .withStartTime)
            _ = try Self.addFrame(ds, 0)
            let outcome = Self.run(.file, n) { () throws in _ = try Self.addFrame(ds, 1) }
            if outcome.failure != nil {
                // A failed write is sticky: the dataset is reopened to go on.
                #expect(throws: CaptureKitError.self) { try ds.close() }
                ds = try Dataset(open: root.dataset)
                _ = try Self.addFrame(ds, 2)
            }
            try ds.close()
            try Self.expectConsistent(root.dataset, frames: 2, "add after a failed add, file call \(n)")
            return outcome
        }
    }

    // MARK: Dataset.finalize (with zip)

    @Test(arguments: Seam.allCases) func finalizeWithZip(_ seam: Seam) throws {
        let (failures, runs) = try Self.loop(seam, "finalize") { n in
            let root = Root("finalize")
            let context = "finalize, \(seam) call \(n)"
            let zip = root.file("ds.zip")
            let outcome: Outcome
            do {  // the dataset is released at the end of this block
                let d = try Dataset(create: root.dataset, options: .withStartTime)
                try d.setBox(try Box(center: Vec3(0, 0, 0), size: Vec3(0.4, 0.3, 0.2), yaw: 0.3))
                for i in 0..<2 { _ = try Self.addFrame(d, i); try Self.streamFrame(d, i) }
                try d.logEvent(EventRecord(timestamp: 1, code: 1, name: "test", text: "an event"))
                let before = Self.openFiles(under: root.path)
                outcome = Self.run(seam, n) { () throws in try d.finalize(zipPath: zip) }
                // Files the dataset keeps open (journal, camera info, events, streams) may be closed
                // by finalize, never added to.
                #expect(Set(Self.openFiles(under: root.path)).isSubset(of: Set(before)), "\(context): descriptors \(Self.openFiles(under: root.path)) vs \(before)")
            }
            #expect(Self.openFiles(under: root.path).isEmpty, "\(context): descriptors left \(Self.openFiles(under: root.path))")
            #expect(Self.list(root.path).allSatisfy { !$0.contains(".tmp") }, "\(context): temporary files \(Self.list(root.path))")
            // The archive is absent, or complete (only the final directory fsync failed).
            if FileIO.exists(zip) {
                let entries = try ZipReader(path: zip).entries.map(\.name)
                #expect(entries.contains("transforms.json") && entries.contains("images/000001.png"), "\(context): zip holds \(entries)")
            } else {
                #expect(outcome.failure != nil, "\(context): finalize succeeded without a zip")
            }
            try Self.expectConsistent(root.dataset, frames: 2, "\(context)")
            // The reopened dataset finalises (the failure was not sticky on disk).
            let re = try Dataset(open: root.dataset)
            try re.finalize(zipPath: root.file("retry.zip"))
            #expect(try TransformsManifest.read(from: "\(root.dataset)/transforms.json").frames.count == 2, "\(context)")
            #expect(try ZipReader(path: root.file("retry.zip")).entries.count >= 8, "\(context)")
            try re.close()
            return outcome
        }
        if seam == .zstd { #expect(failures == 0 && runs == 1) } else { #expect(failures > 0, "\(seam): no fault surfaced") }
    }

    // MARK: Stream writes

    /// Dataset.streamFrame: the second frame fails. Each stream stays decodable (no torn frame), the
    /// camera-info lines hold exactly the acknowledged frames, nothing stays open.
    @Test(arguments: Seam.allCases) func streamFrame(_ seam: Seam) throws {
        let (failures, runs) = try Self.loop(seam, "streamFrame") { n in
            try Self.streamRun(seam, n, strict: false)
        }
        if seam == .zstd { #expect(failures == 0 && runs == 1) } else { #expect(failures > 0, "\(seam): no fault surfaced") }
    }

    /// All or nothing: after a failed streamFrame both streams hold exactly the acknowledged frames.
    @Test(arguments: [Seam.file, .zlib, .json])
    func streamFrameIsAllOrNothing(_ seam: Seam) throws {
        _ = try Self.loop(seam, "streamFrame (strict)") { n in try Self.streamRun(seam, n, strict: true) }
    }

    static func streamRun(_ seam: Seam, _ n: Int, strict: Bool) throws -> Outcome {
        let root = Root("stream")
        let context = "streamFrame, \(seam) call \(n)"
        let outcome: Outcome, scan: String
        do {  // the dataset is released at the end of this block
            let d = try Dataset(create: root.dataset, options: .withStartTime)
            try Self.streamFrame(d, 0)
            scan = d.scanID
            let before = Self.openFiles(under: root.path)
            outcome = Self.run(seam, n) { () throws in try Self.streamFrame(d, 1) }
            #expect(Self.openFiles(under: root.path) == before, "\(context): descriptors \(Self.openFiles(under: root.path)) vs \(before)")
            #expect(d.streamedFrames == (outcome.failure == nil ? 2 : 1), "\(context)")
        }
        let acknowledged = outcome.failure == nil ? 2 : 1
        #expect(Self.openFiles(under: root.path).isEmpty, "\(context): descriptors left \(Self.openFiles(under: root.path))")
        for (name, kind) in [("depth", ZStream.Kind.depth), ("confidence", ZStream.Kind.confidence)] {
            let r = try ZStreamReader(path: "\(root.dataset)/\(scan).\(name).zlib", width: Self.depthWidth, height: Self.depthHeight, kind: kind)
            let count = try r.frameCount()  // throws on a torn or damaged stream
            if strict {
                #expect(count == UInt64(acknowledged), "\(context): \(name) stream holds \(count) frames")
            } else {
                #expect(count == UInt64(acknowledged) || count == UInt64(acknowledged + 1), "\(context): \(name) stream holds \(count) frames")
            }
        }
        let info = try CameraInfoRecord.read(from: "\(root.dataset)/\(scan).jsonl", tolerateTornTail: true)
        #expect(info.records.count == acknowledged && !info.tornTail, "\(context): \(info.records.count) camera-info lines")
        try Self.expectConsistent(root.dataset, frames: 0, context)
        return outcome
    }

    /// ZStreamWriter.append directly: a failed append cuts the file back to the previous frame.
    @Test(arguments: [Seam.file, .zlib]) func zstreamAppend(_ seam: Seam) throws {
        let frame = [UInt16](repeating: 0x3C00, count: 64 * 48)  // float16 1.0
        let (failures, _) = try Self.loop(seam, "ZStreamWriter.append") { n in
            let root = Root("zappend")
            let path = root.file("s.depth.zlib")
            let writer = try ZStreamWriter(path: path, width: 64, height: 48, kind: .depth, level: 1, index: true)
            try frame.withUnsafeBytes { (b) throws in guard let p = b.baseAddress else { return }; try writer.append(p, format: .depthF16) }
            let before = Self.openFiles(under: root.path)
            let outcome = Self.run(seam, n) { () throws in
                try frame.withUnsafeBytes { (b) throws in
                    guard let p = b.baseAddress else { return }
                    try writer.append(p, format: .depthF16)
                }
            }
            let context = "ZStreamWriter.append, \(seam) call \(n)"
            #expect(Self.openFiles(under: root.path) == before, "\(context)")
            let acknowledged = outcome.failure == nil ? 2 : 1
            try writer.close()
            #expect(Self.openFiles(under: root.path).isEmpty, "\(context): descriptors left")
            let r = try ZStreamReader(path: path, width: 64, height: 48, kind: .depth)
            #expect(try r.frameCount() == UInt64(acknowledged), "\(context)")
            return outcome
        }
        #expect(failures > 0)
    }

    /// DepthFileWriter.append (.ckdepth, the zstd codec): a failed append leaves the file with
    /// exactly the acknowledged frames.
    @Test(arguments: [Seam.file, .zstd]) func depthFileAppend(_ seam: Seam) throws {
        let frame: [Float] = (0..<(64 * 48)).map { 0.5 + Float($0 % 41) * 0.01 }
        let (failures, _) = try Self.loop(seam, "DepthFileWriter.append") { n in
            let root = Root("ckdepth")
            let path = root.file("d.ckdepth")
            let writer = try DepthFileWriter(path: path, width: 64, height: 48, kind: .float16Metres, level: 1, mode: .create)
            try frame.withUnsafeBytes { (b) throws in guard let p = b.baseAddress else { return }; try writer.append(p, format: .depthF32, timestamp: 0) }
            let before = Self.openFiles(under: root.path)
            let outcome = Self.run(seam, n) { () throws in
                try frame.withUnsafeBytes { (b) throws in
                    guard let p = b.baseAddress else { return }
                    try writer.append(p, format: .depthF32, timestamp: 1)
                }
            }
            let context = "DepthFileWriter.append, \(seam) call \(n)"
            #expect(Self.openFiles(under: root.path) == before, "\(context)")
            try writer.close()
            #expect(Self.openFiles(under: root.path).isEmpty, "\(context): descriptors left")
            let r = try DepthFileReader(path: path)
            #expect(r.info.frameCount == (outcome.failure == nil ? 2 : 1) && r.info.tornBytes == 0, "\(context): \(r.info)")
            return outcome
        }
        #expect(failures > 0)
    }
}
#endif
