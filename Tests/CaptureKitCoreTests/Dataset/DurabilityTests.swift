import Foundation
import Testing
@testable import CaptureKitCore

/// Issue 19 ("Trust II"): one writer per dataset, no "OK and lost" after a failed write, and
/// reopen/resume that check everything before they change a byte.
@Suite(.serialized) struct DurabilityTests {
    typealias R = ResumeTests

    /// Every file and folder under `dir` (relative path → bytes; folders map to nil).
    static func snapshot(_ dir: String) -> [String: Data?] {
        var out: [String: Data?] = [:]
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: dir) else { return out }
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: "\(dir)/\(rel)", isDirectory: &isDir)
            out[rel] = isDir.boolValue ? .some(nil) : fm.contents(atPath: "\(dir)/\(rel)")
        }
        return out
    }

    /// A session dataset with 150 frames streamed at 30 Hz (two full checkpoints and a flush one),
    /// closed cleanly. Returns its folder and scan id.
    static func streamedDataset(_ name: String) throws -> (String, String) {
        let dir = DatasetSessionTests.tempDir(name)
        let s = try Session(directory: dir, options: R.options(), box: R.box)
        for i in 0..<150 { _ = try R.process(s, i) }
        try s.flush()
        let scan = s.dataset.scanID
        try s.close()
        return (dir, scan)
    }

    /// `open` and `resume` both refuse the folder with `status` and leave every byte as it was.
    static func expectRefusedUnchanged(_ dir: String, _ status: CaptureKitError.Status, _ what: String) {
        let before = snapshot(dir)
        for attempt in ["open", "resume"] {
            var got: CaptureKitError?
            do {
                if attempt == "open" { _ = try Dataset(open: dir) } else { _ = try Session(resume: dir, options: R.options()) }
            } catch { got = error }
            #expect(got?.status == status, "\(what): \(attempt) gave \(String(describing: got))")
            #expect(snapshot(dir) == before, "\(what): \(attempt) changed the folder")
        }
    }

    static func journalLines(_ dir: String) throws -> [String] {
        try String(contentsOfFile: "\(dir)/\(Dataset.journalName)", encoding: .utf8).split(separator: "\n").map(String.init)
    }

    static func writeJournal(_ dir: String, _ lines: [String]) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: "\(dir)/\(Dataset.journalName)", atomically: false, encoding: .utf8)
    }

    // MARK: one writer per dataset

    @Test func aSecondWriterIsBusyInTheSameProcessAndReadersAreNot() throws {
        let (dir, _) = try Self.streamedDataset("busy")
        let ds = try Dataset(open: dir)
        let before = Self.snapshot(dir)
        for attempt in 0..<3 {
            var got: CaptureKitError?
            do {
                switch attempt {
                case 0: _ = try Dataset(open: dir)
                case 1: _ = try Session(resume: dir, options: R.options())
                default: _ = try Dataset(open: dir, writeQueueBytes: 1 << 20)
                }
            } catch { got = error }
            #expect(got?.status == .busy, "attempt \(attempt): \(String(describing: got))")
            #expect(got?.message.contains(dir) == true && got?.message.contains("process \(getpid())") == true, "\(String(describing: got))")
        }
        #expect(Self.snapshot(dir) == before, "a refused writer changed the folder")
        let reader = try Dataset(open: dir, readOnly: true)
        #expect(reader.frames.count == ds.frames.count)
        try ds.close()
        let again = try Dataset(open: dir)  // the lock went with the close
        try again.finalize(zipPath: dir + ".zip")
        let names = try ZipReader(path: dir + ".zip").entries.map(\.name)
        #expect(!names.contains(DatasetLock.fileName), "the lock file is in the zip: \(names)")
        try again.close()
    }

    @Test func aLockFileLeftByADeadProcessDoesNotBlock() throws {
        let (dir, _) = try Self.streamedDataset("stale")
        try "12345\n".write(toFile: "\(dir)/\(DatasetLock.fileName)", atomically: false, encoding: .utf8)
        let ds = try Dataset(open: dir)  // no flock is held: not busy
        try ds.cancel()
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/\(DatasetLock.fileName)") || !FileManager.default.fileExists(atPath: dir))
    }

    /// A folder in place of the lock file: a clean refusal (corrupt) that changes nothing; create
    /// finds the folder in the way (exists).
    @Test func aFolderInPlaceOfTheLockFileIsRefused() throws {
        let (dir, _) = try Self.streamedDataset("lockdir")
        try FileManager.default.removeItem(atPath: "\(dir)/\(DatasetLock.fileName)")
        try FileManager.default.createDirectory(atPath: "\(dir)/\(DatasetLock.fileName)", withIntermediateDirectories: false)
        Self.expectRefusedUnchanged(dir, .corrupt, "a folder in place of the lock file")
        let empty = DatasetSessionTests.tempDir("lockdircreate")
        try FileManager.default.createDirectory(atPath: "\(empty)/\(DatasetLock.fileName)", withIntermediateDirectories: true)
        var got: CaptureKitError?
        do { _ = try Dataset(create: empty, options: .withStartTime) } catch { got = error }
        #expect(got?.status == .exists, "\(String(describing: got))")
    }

    /// A refused open leaves the lock file's bytes too: the holder's pid is written only once the
    /// open is decided.
    @Test func aRefusedOpenKeepsTheLockFileBytes() throws {
        let (dir, _) = try Self.streamedDataset("lockbytes")
        try "not a pid \u{1}\n".write(toFile: "\(dir)/\(DatasetLock.fileName)", atomically: false, encoding: .utf8)
        var lines = try Self.journalLines(dir)
        let i = try #require(lines.lastIndex { $0.contains("\"op\":\"stream\"") })
        lines[i] = lines[i].replacingOccurrences(of: "\"op\":\"stream\"", with: "\"op\":\"strea\"")
        try Self.writeJournal(dir, lines)
        Self.expectRefusedUnchanged(dir, .corrupt, "an unknown journal operation, with a lock file of junk")
    }

    /// A create racing another: the other holds the lock of a folder that holds only the lock
    /// file so far (before its folders exist). Busy, and nothing is created.
    @Test func createIsBusyWhileAnotherCreateHoldsTheFolder() throws {
        let dir = DatasetSessionTests.tempDir("busycreate")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let held = try DatasetLock.acquire(dir)
        var got: CaptureKitError?
        do { _ = try Dataset(create: dir, options: .withStartTime) } catch { got = error }
        #expect(got?.status == .busy, "\(String(describing: got))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == [DatasetLock.fileName])
        held.release()
        let a = try Dataset(create: dir, options: .withStartTime)
        try a.close()
    }

    // MARK: validate, then repair

    /// A `stream` checkpoint without its `depth` field: open deleted the depth stream (issue 19).
    @Test func aCheckpointMissingAStreamIsCorruptAndNothingChanges() throws {
        let (dir, _) = try Self.streamedDataset("nodepth")
        // From every checkpoint (from the last one only, the frame counts would go back: refused
        // for that reason even before the fix).
        var lines = try Self.journalLines(dir)
        var cuts = 0
        for i in lines.indices where lines[i].contains("\"op\":\"stream\"") {
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(lines[i].utf8)) as? [String: Any])
            var cut = obj; cut["depth"] = nil
            lines[i] = String(decoding: try JSONSerialization.data(withJSONObject: cut), as: UTF8.self)
            cuts += 1
        }
        #expect(cuts >= 2)
        try Self.writeJournal(dir, lines)
        Self.expectRefusedUnchanged(dir, .corrupt, "checkpoint without depth")
    }

    /// A camera-info line that does not parse: resume refused it after open had cut the streams.
    @Test func anUnparseableCameraInfoLineIsCorruptForOpenAndResumeAlike() throws {
        let (dir, scan) = try Self.streamedDataset("badinfo")
        let path = "\(dir)/\(scan).jsonl"
        var info = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        info[info.count - 3] = String(repeating: "x", count: info[info.count - 3].utf8.count)  // same length, not JSON
        try info.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        // An unflushed tail the repair would cut, and a torn journal line it would drop.
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/\(Dataset.journalName)"))
        h.seekToEndOfFile(); h.write(Data("{\"op\":\"fra".utf8)); h.closeFile()
        Self.expectRefusedUnchanged(dir, .corrupt, "unparseable camera-info line")
    }

    /// Orphan frame files and a stream 10 bytes shorter than journaled: open deleted the orphans
    /// first, then refused.
    @Test func aShortStreamIsRefusedBeforeOrphansAreDeleted() throws {
        let (dir, scan) = try Self.streamedDataset("short")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: "\(dir)/images/000099.png"))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: "\(dir)/depth/000099.png"))
        let p = "\(dir)/\(scan).depth.zlib"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: p))
        // The clean close wrote a final block after the last checkpoint: cut to 10 bytes short of it.
        let lines = try Self.journalLines(dir)
        let last = try #require(lines.last { $0.contains("\"op\":\"stream\"") })
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        let end = try #require((obj["depth"] as? [Int])?[1])
        try bytes.prefix(end - 10).write(to: URL(fileURLWithPath: p))
        Self.expectRefusedUnchanged(dir, .corrupt, "short stream")
    }

    /// A folder where the camera-info file should be, with a torn journal and stream tails the
    /// repair would cut: refused before any cut.
    @Test func aFolderInPlaceOfAFileIsRefusedBeforeAnyCut() throws {
        let (dir, _) = try Self.streamedDataset("dirfile")
        try FileManager.default.createDirectory(atPath: "\(dir)/events.jsonl.d", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: "\(dir)/events.jsonl")
        try FileManager.default.createDirectory(atPath: "\(dir)/events.jsonl", withIntermediateDirectories: true)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/\(Dataset.journalName)"))
        h.seekToEndOfFile(); h.write(Data("{\"op\":".utf8)); h.closeFile()
        Self.expectRefusedUnchanged(dir, .corrupt, "folder in place of events.jsonl")
    }

    /// A damaged full-flush marker in the first segment (before the second-to-last checkpoint):
    /// open continued the stream, and MultiScan's one inflate over the file failed.
    @Test func damageBeforeTheSecondToLastCheckpointIsFound() throws {
        let (dir, scan) = try Self.streamedDataset("earlydamage")
        let p = "\(dir)/\(scan).confidence.zlib"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: p)))
        // The first full-flush marker 00 00 FF FF: break its length check.
        var marker: Int? = nil
        for j in 0..<(bytes.count - 4) where marker == nil {
            if bytes[j] == 0 && bytes[j + 1] == 0 && bytes[j + 2] == 0xFF && bytes[j + 3] == 0xFF { marker = j }
        }
        let m = try #require(marker)
        bytes[m + 2] = 0xFE
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        Self.expectRefusedUnchanged(dir, .corrupt, "damaged early flush marker")
    }

    // MARK: a failed write is sticky

    /// A 60 Hz session whose Nth file operation fails (every write of every kind: stream, image,
    /// depth PNG, journal, camera info, events, the lock), then the same calls again with the fault
    /// cleared: after a failure no process, flush, finish or close says OK, no result says captured,
    /// and a resume finds every frame of the last successful flush.
    @Test func noOKAfterALossAtAnyWriteOfA60HzSession() throws {
        var failures = 0
        for mode in [nil, 1 << 20] as [Int?] {
            for n in stride(from: 1, through: 400, by: 3) {
                let dir = DatasetSessionTests.tempDir("sticky")
                var o = R.options()
                o.dataset.writeQueueBytes = mode
                let s = try Session(directory: dir, options: o, box: R.box)
                for i in 0..<20 { _ = try R.process(s, i) }
                try s.flush()
                let flushed = s.dataset.frames.map(\.id), flushedStream = s.dataset.streamedFrames
                // The fault: on this thread (the caller's), or the writer's when there is one.
                var failed: CaptureKitError?
                FileIO.failCall(after: n)
                if mode != nil {
                    // The writer thread has its own countdown: fail it there, through a queued job.
                    FileIO.stopFailing()
                    try s.dataset.submitToWriter(bytes: 0) { FileIO.failCall(after: n) }
                }
                for i in 20..<60 where failed == nil {
                    do { _ = try R.process(s, i) } catch { failed = error as? CaptureKitError }
                }
                if failed == nil { do { try s.flush() } catch { failed = error } }
                FileIO.stopFailing()
                if mode != nil { try? s.dataset.submitToWriter(bytes: 0) { FileIO.stopFailing() } }
                guard let first = failed else { try s.close(); continue }
                failures += 1
                #expect(first.status == .io, "n \(n): \(first)")
                // The same calls again, the disk fine: never OK.
                for i in 60..<64 {
                    do { let r = try R.process(s, i); Issue.record("n \(n): process OK after a loss (captured \(r.captured))") } catch {
                        #expect((error as? CaptureKitError)?.status == .io)
                    }
                }
                #expect(throws: CaptureKitError.self, "n \(n): flush OK after a loss") { try s.flush() }
                #expect(throws: CaptureKitError.self, "n \(n): finish OK after a loss") { try s.finish(zipPath: nil) }
                #expect(throws: CaptureKitError.self, "n \(n): close OK after a loss") { try s.close() }
                // Resume recovers at least what the last successful flush made durable.
                let r = try Session(resume: dir, options: o)
                #expect(Set(flushed).isSubset(of: Set(r.dataset.frames.map(\.id))), "n \(n)")
                #expect(r.dataset.streamedFrames >= flushedStream, "n \(n)")
                for i in 64..<70 { _ = try R.process(r, i) }
                try r.finish(zipPath: nil)
                try r.close()
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        #expect(failures > 20, "only \(failures) runs hit a fault")
    }

    /// The dataset folder deleted during capture: CK_E_IO naming the file, then the same status
    /// on every later call (the header's "a failed background write is reported as CK_E_IO").
    @Test func aDeletedFolderIsIOAndSticky() throws {
        let dir = DatasetSessionTests.tempDir("deleted")
        let s = try Session(directory: dir, options: R.options(), box: R.box)
        for i in 0..<10 { _ = try R.process(s, i) }
        try s.flush()
        try FileManager.default.removeItem(atPath: dir)
        var statuses: [CaptureKitError.Status] = []
        var first: CaptureKitError?
        for i in 10..<80 {
            do { _ = try R.process(s, i) } catch {
                guard let e = error as? CaptureKitError else { Issue.record("not a CaptureKitError: \(error)"); continue }
                statuses.append(e.status); first = first ?? e
            }
        }
        // Whether or not a capture's image write hit the missing folder, flush must not say the
        // frames are durable: the journal and streams it would sync are unlinked.
        var flushed = false
        do { try s.flush(); flushed = true } catch { statuses.append(error.status); first = first ?? error }
        #expect(!flushed, "flush OK with the dataset folder deleted")
        var closed = false
        do { try s.close(); closed = true } catch { statuses.append(error.status) }
        #expect(!closed, "close OK with the dataset folder deleted")
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == .io }, "\(statuses)")
        #expect(first?.message.contains(dir) == true, "\(String(describing: first))")
    }
}
