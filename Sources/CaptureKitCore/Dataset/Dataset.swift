import Glibc

/// One frame as the dataset records it (the journal line, and a transforms.json frame).
public struct DatasetFrame: Equatable, Sendable {
    public var id: Int64
    public var pass: Int32
    public var timestamp: Double
    public var pose: Matrix4
    public var intrinsics: Intrinsics
    public var imagePath: String
    public var depthPath: String?
    public var sharpness: Float?
    /// The library wrote the image (so removing the frame deletes it).
    public var ownsImage: Bool
    /// Its index in the MultiScan streams (depth/confidence frame, camera-info line), if streamed.
    public var streamIndex: Int64? = nil
}

/// A dataset folder (`ck_dataset`): see ck_dataset.h for the layout and the guarantees.
///
/// The journal `capturekit.jsonl` is the source of truth: one JSON line per operation (`begin`,
/// `frame`, `remove`, `box`, `pass`), each appended and fsynced only after the files it names are
/// durable (PNG files are written atomically). Reopening replays it; a torn last line is dropped,
/// and so are frames whose files are missing. transforms.json, boundingbox.json and the scan
/// metadata are derived from it at `finalize` (atomically). Not thread-safe.
public final class Dataset {
    public let directory: String
    public internal(set) var options: DatasetOptions
    /// The journaled frames (a frame queued for the background writer joins once it is durable).
    public var frames: [DatasetFrame] { state.withLock { storedFrames } }
    var storedFrames: [DatasetFrame] = []
    /// Frames queued for the background writer and not yet journaled (guarded by `state`).
    var queuedFrames = 0
    /// The journaled frame at `index` (in the order added), without copying `frames`: a reader
    /// walking a 10,000-frame dataset would otherwise copy the whole array per frame.
    public func frame(at index: UInt64) -> DatasetFrame? {
        state.withLock { index < UInt64(storedFrames.count) ? storedFrames[Int(index)] : nil }
    }
    /// The frames added so far: journaled ones plus those the background writer still holds.
    public var frameCount: Int { state.withLock { storedFrames.count + queuedFrames } }
    public internal(set) var boxes: [BoxPass] = []
    public internal(set) var pass: Int32 = 0
    public let scanID: String
    var nextID: Int64 = 0
    var journal: File?
    var events: File?
    var cameraInfo: File?
    var depthStream: ZStreamWriter?, confidenceStream: ZStreamWriter?
    var streamSize: (Int, Int)?
    /// Which streams the first stream frame began (a stream never begins later: each stream's
    /// frame i is camera-info line i, as MultiScan reads them).
    var streamKinds: (depth: Bool, confidence: Bool)?
    public internal(set) var streamedFrames: Int64 = 0
    /// The colour camera's intrinsics of the first streamed frame, and the first and last streamed
    /// timestamps (for the metadata's colour stream and frequency).
    var streamColor: Intrinsics?
    var streamSpan: (first: Double, last: Double)?
    /// Bytes written so far (for the storage estimate).
    public var bytesWritten: UInt64 { state.withLock { storedBytes } }
    var storedBytes: UInt64 = 0
    /// `state` guards what the background writer and the caller's thread share: the frames, the
    /// byte count and `created`. `journalLock` serialises journal appends (held across the fsync,
    /// so never taken by a caller-thread read).
    let state = Lock(), journalLock = Lock()
    /// The background writer (nil: writes happen on the caller's thread).
    var writer: BackgroundQueue?
    /// Image buffers the writer gives back, reused by the next capture's copy.
    let pool = BufferPool()
    /// The stream frames' copies (depth and confidence, ~0.25 MB a 256×192 frame), recycled the
    /// same way: a fresh malloc of that size is an mmap whose pages fault in on the caller's
    /// thread, and its munmap on the writer's contends with those faults. 64 buffers cover a
    /// second of frames queued behind an image.
    let streamPool = BufferPool(limit: 64)
    /// Caller-side counts of what was handed to the writer: the stream frames queued and the last
    /// one's timestamp (a capture's stream index), and whether the current pass has a queued frame.
    var streamQueued: Int64 = 0, streamQueuedLast: Double?
    var passHasQueuedFrame = false
    /// The streams take no more frames (finalised, read-only, or a reopened dataset whose streams
    /// cannot be continued: `streamsClosedReason` says why).
    var streamsClosed = false
    var streamsClosedReason = "the streams of a finalised dataset are not extended"
    /// Stream frames made durable and journaled (`stream` lines, `checkpointStreams`).
    var checkpointedFrames: Int64 = 0
    /// A `stream` journal line is written at least every this many stream frames (about a second
    /// at 60 Hz: what a crash can lose of the streams besides the frames still queued).
    public static let streamCheckpointInterval: Int64 = 60
    /// The journal version this library writes: 2 journals the streams (`stream` lines); a
    /// version-1 journal (0.1) has none, so its streams are not continued.
    static let journalVersion: Int64 = 2
    var cancelled = false
    /// Opened with `readOnly`: a reader of a finished or crashed dataset.
    public internal(set) var readOnly = false
    /// A read-only dataset's streams, opened once by the first depth or confidence read of a
    /// streamed frame (Dataset+Depth.swift).
    var streamReader: ScanReader?
    /// A journal write failed and could not be undone: nothing more is appended (reopen instead).
    var journalBroken = false
    /// The one-writer lock (`.capturekit.lock`), held by a writable dataset from create/open to
    /// close, cancel or deinit; nil when read-only.
    var writeLock: DatasetLock?
    /// The first failed write (guarded by `state`): the dataset is failed, and every later writing
    /// call (add, stream, box, pass, event, remove, flush, finalize, close) reports it as `io`
    /// until the dataset is reopened. Never "OK and lost": once a write failed, no later call
    /// says frames are durable.
    var failure: CaptureKitError?
    /// The dataset belongs to a session (`ck_session_dataset` hands it out borrowed).
    public internal(set) var isOwnedBySession = false
    /// Files and folders this dataset created (for cancel), relative to `directory`.
    var created: [String] = []
    /// The initial point cloud the next finalize writes as sparse_pc.ply (`setSurfacePoints`):
    /// nil = not set (an existing sparse_pc.ply stays named), empty = none.
    var surfacePoints: [SurfacePoint]?
    func noteCreated(_ rel: String) { state.withLock { if !created.contains(rel) { created.append(rel) } } }
    func add(bytes n: UInt64) { state.withLock { storedBytes &+= n } }

    static let journalName = "capturekit.jsonl"
    /// The largest frame id (2^40 − 1: 580 years of 60 Hz frames) and pass number. Values read
    /// from a journal outside these ranges are corrupt; an add or pass beyond them is refused.
    public static let maxFrameID: Int64 = (1 << 40) - 1
    public static let maxPass: Int32 = (1 << 20) - 1

    func path(_ relative: String) -> String { "\(directory)/\(relative)" }

    // MARK: create / open

    /// Creates a dataset in `directory` (created if missing; must be empty).
    public init(create directory: String, options: DatasetOptions) throws(CaptureKitError) {
        self.directory = Dataset.normalise(directory)
        self.options = options
        try Dataset.validate(options)
        scanID = try ScanID.make(unixSeconds: Int64(options.startTimeUnix.rounded(.down)), deviceID: options.deviceID)
        let dir = self.directory
        // A missing parent folder is CK_E_NOT_FOUND, as for every writer (0.1: CK_E_IO).
        if try FileIO.makeDirectory(dir) {
            created.append("")
        } else if !(try FileIO.listDirectory(dir)).filter({ !($0 == DatasetLock.fileName && FileIO.isRegularFile("\(dir)/\($0)")) }).isEmpty {
            // Only a lock file (left by a cancelled create, say) may be there; a folder or link
            // of that name is in the way like any other entry.
            throw .exists("\(dir) is not empty: to go on with a capture left there, resume it (ck_session_resume, Python Session.resume) or open it (ck_dataset_open); otherwise choose an empty or new folder")
        }
        let lock = try DatasetLock.acquire(dir)
        lock.recordHolder()
        writeLock = lock
        if lock.createdFile { created.append(DatasetLock.fileName) }
        for sub in ["images", "depth"] + options.downscales.map(Dataset.downscaleFolder) {
            _ = try FileIO.makeDirectory(path(sub))
            created.append(sub)
        }
        journal = try File.open(path(Dataset.journalName), .createNew)
        created.append(Dataset.journalName)
        var begin = JSONObject()
        begin.appendNew("op", .string("begin"))
        begin.appendNew("scan_id", .string(scanID))
        begin.appendNew("version", .int(Dataset.journalVersion))
        begin.appendNew("options", .object(Dataset.optionsJSON(options)))
        try append(.object(begin))
        try FileIO.syncDirectory(of: path(Dataset.journalName))
        if let q = options.writeQueueBytes { writer = try BackgroundQueue(capacityBytes: q) }
    }

    /// Reopens a dataset, replaying its journal. Validate, then repair: every check (journal
    /// lines and values, stream checkpoints, the streams' bytes, the camera-info lines, the folder
    /// layout, and `beforeRepair`, the caller's own checks of the planned state) runs before the
    /// first byte is changed, so a refusal leaves the folder exactly as it was (a lock file this
    /// call created aside, which it removes again).
    public init(open directory: String, writeQueueBytes: Int? = nil, readOnly: Bool = false,
                beforeRepair: ((Dataset) throws(CaptureKitError) -> Void)? = nil) throws(CaptureKitError) {
        self.directory = Dataset.normalise(directory)
        let jpath = "\(self.directory)/\(Dataset.journalName)"
        guard FileIO.exists(jpath) else { throw .notFound("\(self.directory) holds no CaptureKit dataset (\(Dataset.journalName) is missing)") }
        // A writer takes the folder's lock before reading anything (one writer per dataset); a
        // reader takes none. A refusal below releases it (and removes a lock file it created).
        let lock = readOnly ? nil : try DatasetLock.acquire(self.directory)
        let plan: StreamPlan?, bytes: [UInt8], torn: Bool
        do throws(CaptureKitError) {
            bytes = try FileIO.readAll(jpath)
            let (parsed, tornTail) = try JSON.parseLines(bytes, what: Dataset.journalName, tolerateTornTail: true)
            torn = tornTail
            let lines = parsed.map(\.value)
            guard let first = lines.first else { throw CaptureKitError.corrupt("\(jpath) is empty") }
            let head = JSONNode(first, path: "\(Dataset.journalName)[0]")
            guard try head.key("op").string() == "begin" else { throw head.error("the journal must start with a begin line") }
            let version = try head.optionalKey("version")?.int(in: 1...Dataset.journalVersion) ?? 1
            // Read back through the rules that made them: nothing from disk names a file elsewhere.
            let id = try head.key("scan_id").string()
            do throws(CaptureKitError) {
                try PathRules.checkName(id, "scan_id")
            } catch { throw head.error(error.message) }
            scanID = id
            options = try Dataset.decodeOptions(try head.key("options"))
            do throws(CaptureKitError) {
                try Dataset.validate(options)
                _ = try options.validated()
            } catch { throw head.error("options: \(error.message)") }
            var frames: [DatasetFrame] = []
            var boxes: [BoxPass] = []
            var pass: Int32 = 0
            var nextID: Int64 = 0
            var checkpoints = StreamCheckpoint.Replay()
            for (i, line) in lines.enumerated().dropFirst() {
                let node = JSONNode(line, path: "\(Dataset.journalName)[\(i)]")
                switch try node.key("op").string() {
                case "frame":
                    let f = try Dataset.decodeFrame(node)
                    nextID = max(nextID, f.id + 1)  // ids are at most maxFrameID: no overflow
                    // A repeated id (an add whose journal line 0.1 could leave behind after a failed
                    // fsync, retried under the same id): the later line is the frame, as it was live.
                    frames.removeAll { $0.id == f.id }
                    // A frame whose files are gone (deleted by hand) is dropped.
                    if FileIO.exists("\(self.directory)/\(f.imagePath)") && (f.depthPath.map { FileIO.exists("\(self.directory)/\($0)") } ?? true) {
                        frames.append(f)
                    }
                case "remove":
                    let id = try node.key("id").int(in: 0...Dataset.maxFrameID)
                    frames.removeAll { $0.id == id }
                case "box", "pass":
                    let p = Int32(try node.key("pass").int(in: 0...Int64(Dataset.maxPass)))
                    let b = try BoundingBoxManifest.decodeBox(try node.key("box"))
                    boxes.removeAll { $0.pass == p }
                    boxes.append(BoxPass(pass: p, box: b))
                    pass = max(pass, p)
                case "stream":
                    try checkpoints.add(try StreamCheckpoint(node), node)
                default: throw node.error("unknown journal operation")
                }
            }
            self.storedFrames = frames; self.boxes = boxes; self.pass = pass; self.nextID = nextID
            options.writeQueueBytes = writeQueueBytes
            for sub in Dataset.imageFolders where FileIO.isSymbolicLink(path(sub)) {
                throw CaptureKitError.corrupt("\(path(sub)) is a symbolic link; a dataset's folders are its own")
            }
            if readOnly {
                // A reader: the journal's complete lines as they are; nothing is repaired, written
                // or deleted (every writing call is `state`).
                self.readOnly = true
                streamsClosed = true
                streamsClosedReason = "the dataset was opened read-only"
                return
            }
            // 1. Validate everything a repair would touch or a writer would continue.
            try checkLayout()
            plan = try planStreams(checkpoints, journalVersion: version)
            if let plan { adopt(plan) }
            try beforeRepair?(self)
        } catch {
            lock?.release(removingFile: lock?.createdFile ?? false)
            throw error
        }
        writeLock = lock
        lock?.recordHolder()
        // 2. Repair: only now is anything cut, ended or deleted.
        let j = try File.open(jpath, .readWrite)
        if torn {
            // Cut the torn line off so later lines start cleanly.
            var end = bytes.count
            while end > 0 && bytes[end - 1] != 0x0A { end -= 1 }
            try j.truncate(to: UInt64(end))
            try j.seek(to: try j.size())
        } else if bytes.last != 0x0A {
            // A complete last line without its newline (a write cut after the JSON): keep the
            // line, and end it, so the next line does not glue onto it.
            try j.seek(to: try j.size())
            try j.write([0x0A])
            try j.sync()
        } else {
            try j.seek(to: try j.size())
        }
        journal = j
        try removeOrphans()
        try resumeStreams(plan)
        // A frame naming a stream frame the streams no longer hold (a hostile journal: the writer
        // journals the streams before such a frame) names none.
        for i in storedFrames.indices where (storedFrames[i].streamIndex ?? -1) >= streamedFrames { storedFrames[i].streamIndex = nil }
        // What this dataset created, for cancel: its own files (the frames' files are removed
        // through `frames`); the folder itself and the caller's files are kept.
        created = Dataset.imageFolders + [Dataset.journalName, "boundingbox.json", "transforms.json", "events.jsonl",
                   "\(scanID).json", "\(scanID).jsonl", "\(scanID).depth.zlib", "\(scanID).confidence.zlib", DatasetLock.fileName]
            .filter { FileIO.exists("\(self.directory)/\($0)") }
        if let q = writeQueueBytes { writer = try BackgroundQueue(capacityBytes: q) }
    }

    /// The folder layout a writer relies on: its folders are real folders (or absent) and its
    /// files regular files (or absent). Checked before any repair (a directory where the
    /// camera-info file should be would otherwise fail half-way through the repair).
    func checkLayout() throws(CaptureKitError) {
        for sub in Dataset.imageFolders where FileIO.exists(path(sub)) && !FileIO.isRealDirectory(path(sub)) {
            throw .corrupt("\(path(sub)) is not a folder")
        }
        let names = streamFileNames
        for name in [Dataset.journalName, "events.jsonl", "boundingbox.json", "transforms.json", "\(scanID).json",
                     names.depth, names.confidence, names.info] where FileIO.exists(path(name)) {
            guard !FileIO.isSymbolicLink(path(name)) else { throw .corrupt("\(path(name)) is a symbolic link; a dataset's files are its own") }
            guard FileIO.isRegularFile(path(name)) else { throw .corrupt("\(path(name)) is not a regular file") }
        }
    }

    deinit {
        try? writer?.stop()
        journal?.closeQuietly(); events?.closeQuietly(); cameraInfo?.closeQuietly()
    }

    static func normalise(_ dir: String) -> String {
        var d = dir
        while d.count > 1 && d.hasSuffix("/") { d.removeLast() }
        return d
    }

    /// Removes what an interrupted add left behind (reopen): files under images/ and depth/ with
    /// the library's frame names ("000012.png") for ids no journal line has reached, and the
    /// temporary files of interrupted atomic writes ("….tmp-<pid>") in the dataset's folders.
    /// Without this, the next add would find its own file names taken.
    func removeOrphans() throws(CaptureKitError) {
        for sub in Dataset.imageFolders + [""] {
            let dir = sub.isEmpty ? directory : path(sub)
            guard FileIO.isRealDirectory(dir) else { continue }
            for name in try FileIO.listDirectory(dir) {
                let rel = sub.isEmpty ? name : "\(sub)/\(name)"
                let orphan = name.contains(".tmp-") || (!sub.isEmpty && Dataset.frameNumber(name).map { $0 >= nextID } == true)
                guard orphan, !storedFrames.contains(where: { $0.imagePath == rel || $0.depthPath == rel }) else { continue }
                try FileIO.remove(try PathRules.contained(rel, in: directory))
            }
        }
    }

    /// The folders of frame files: images, depth and the downscaled copies.
    static let imageFolders = ["images", "depth", "images_2", "images_4", "images_8"]
    static func downscaleFolder(_ factor: Int) -> String { "images_\(factor)" }
    /// The downscaled copies' paths of a library-written image ("images/000012.jpg" →
    /// "images_2/000012.jpg", …), whichever exist.
    static func downscalePaths(_ imagePath: String) -> [String] {
        guard imagePath.hasPrefix("images/") else { return [] }
        let name = imagePath.dropFirst("images/".count)
        return [2, 4, 8].map { "\(downscaleFolder($0))/\(name)" }
    }

    /// An ASCII letter or digit (the characters of an image extension).
    static func isASCIIAlphanumeric(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) }

    /// The frame id in a library file name ("000012.png" → 12): six or more digits, a dot and
    /// 1...7 letters or digits; nil for any other name.
    static func frameNumber(_ name: String) -> Int64? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count >= 6, parts[0].utf8.count <= 13, parts[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              (1...7).contains(parts[1].utf8.count),
              parts[1].utf8.allSatisfy(isASCIIAlphanumeric) else { return nil }
        return Int64(parts[0])
    }

}
