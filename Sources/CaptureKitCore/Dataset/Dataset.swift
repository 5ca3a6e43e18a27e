import Glibc

/// Options of a new dataset (`ck_dataset_options`).
public struct DatasetOptions: Sendable {
    /// Depth PNG size; 0 = the image's size (instant-ngp needs equal sizes).
    public var depthWidth = 0, depthHeight = 0
    /// MultiScan stream zlib level (0 = default) and PNG level (0 = default).
    public var zlibLevel: Int32 = 0, pngLevel: Int32 = 0
    /// Scan start (Unix seconds, UTC) for the MultiScan scan id; the library never reads a clock.
    public var startTimeUnix: Double = 0
    public var deviceID = "capturekit", deviceName = "", deviceType = "", userName = ""
    public var sceneDescription = "", sceneType = ""
    /// The host's colour video of the scan (MultiScan's `<scan>.mp4`, recorded with the platform's
    /// encoder): its encoding ("h264") and file extension ("mp4"), or nil when the host writes
    /// none. The metadata then counts that file in `number_of_files`; without it the colour stream
    /// still describes the colour frames (count, resolution, intrinsics) with encoding "none".
    public var colorVideo: (encoding: String, fileExtension: String)? = nil
    /// Encode and write captured and streamed frames on a background thread, with at most this
    /// many bytes of frames queued (`ck_dataset_options.write_mode`/`write_queue_mb`); nil = on the
    /// caller's thread, every call durable when it returns (the core's default; the C API's default
    /// is the background writer).
    public var writeQueueBytes: Int? = nil
    /// How the library encodes the images it is given (`ck_dataset_options.image_encoding`): PNG
    /// (lossless, the default) or JPEG at `jpegQuality` (1...100).
    public var imageEncoding: ImageEncoding = .png
    public var jpegQuality: Int32 = JPEG.defaultQuality
    /// Downscaled copies of every library-written image (`images_2/`, `images_4/`, `images_8/`, as
    /// nerfstudio's processing writes them for `downscale_factor`): a subset of [2, 4, 8].
    public var downscales: [Int] = []
    public init() {}

    /// The image file formats a dataset writes (`ck_image_encoding`).
    public enum ImageEncoding: String, Sendable {
        case png, jpeg
        /// The file extension of a library-written image.
        public var fileExtension: String { self == .png ? ".png" : ".jpg" }
    }

    /// Checks what a caller can get wrong.
    public func validated() throws(CaptureKitError) -> DatasetOptions {
        if let v = colorVideo {
            guard (1...16).contains(v.encoding.utf8.count), v.encoding.utf8.allSatisfy({ Dataset.isASCIIAlphanumeric($0) || $0 == 0x5F }) else {
                throw .invalidArgument("color_encoding \"\(v.encoding)\" must be 1...16 letters, digits or '_'")
            }
            guard (1...7).contains(v.fileExtension.utf8.count), v.fileExtension.utf8.allSatisfy(Dataset.isASCIIAlphanumeric) else {
                throw .invalidArgument("color_file_extension \"\(v.fileExtension)\" must be 1...7 letters or digits, without the dot")
            }
        }
        return self
    }
}

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
    public private(set) var options: DatasetOptions
    /// The journaled frames (a frame queued for the background writer joins once it is durable).
    public var frames: [DatasetFrame] { state.withLock { storedFrames } }
    private var storedFrames: [DatasetFrame] = []
    /// Frames queued for the background writer and not yet journaled (guarded by `state`).
    private var queuedFrames = 0
    /// The journaled frame at `index` (in the order added), without copying `frames`: a reader
    /// walking a 10,000-frame dataset would otherwise copy the whole array per frame.
    public func frame(at index: UInt64) -> DatasetFrame? {
        state.withLock { index < UInt64(storedFrames.count) ? storedFrames[Int(index)] : nil }
    }
    /// The frames added so far: journaled ones plus those the background writer still holds.
    public var frameCount: Int { state.withLock { storedFrames.count + queuedFrames } }
    public private(set) var boxes: [BoxPass] = []
    public private(set) var pass: Int32 = 0
    public let scanID: String
    private var nextID: Int64 = 0
    private var journal: File?
    private var events: File?
    private var cameraInfo: File?
    private var depthStream: ZStreamWriter?, confidenceStream: ZStreamWriter?
    private var streamSize: (Int, Int)?
    /// Which streams the first stream frame began (a stream never begins later: each stream's
    /// frame i is camera-info line i, as MultiScan reads them).
    private var streamKinds: (depth: Bool, confidence: Bool)?
    public private(set) var streamedFrames: Int64 = 0
    /// The colour camera's intrinsics of the first streamed frame, and the first and last streamed
    /// timestamps (for the metadata's colour stream and frequency).
    private var streamColor: Intrinsics?
    private var streamSpan: (first: Double, last: Double)?
    /// Bytes written so far (for the storage estimate).
    public var bytesWritten: UInt64 { state.withLock { storedBytes } }
    private var storedBytes: UInt64 = 0
    /// `state` guards what the background writer and the caller's thread share: the frames, the
    /// byte count and `created`. `journalLock` serialises journal appends (held across the fsync,
    /// so never taken by a caller-thread read).
    private let state = Lock(), journalLock = Lock()
    /// The background writer (nil: writes happen on the caller's thread).
    private var writer: BackgroundQueue?
    /// Image buffers the writer gives back, reused by the next capture's copy.
    private let pool = BufferPool()
    /// Caller-side counts of what was handed to the writer: the stream frames queued and the last
    /// one's timestamp (a capture's stream index), and whether the current pass has a queued frame.
    private var streamQueued: Int64 = 0, streamQueuedLast: Double?
    private var passHasQueuedFrame = false
    /// The streams take no more frames (finalised, read-only, or a reopened dataset whose streams
    /// cannot be continued: `streamsClosedReason` says why).
    private var streamsClosed = false
    private var streamsClosedReason = "the streams of a finalised dataset are not extended"
    /// Stream frames made durable and journaled (`stream` lines, `checkpointStreams`).
    private var checkpointedFrames: Int64 = 0
    /// A `stream` journal line is written at least every this many stream frames (about a second
    /// at 60 Hz: what a crash can lose of the streams besides the frames still queued).
    public static let streamCheckpointInterval: Int64 = 60
    /// The journal version this library writes: 2 journals the streams (`stream` lines); a
    /// version-1 journal (0.1) has none, so its streams are not continued.
    static let journalVersion: Int64 = 2
    private var cancelled = false
    /// Opened with `readOnly`: a reader of a finished or crashed dataset.
    public private(set) var readOnly = false
    /// A read-only dataset's streams, opened once by the first depth or confidence read of a
    /// streamed frame (Dataset+Depth.swift).
    var streamReader: ScanReader?
    /// A journal write failed and could not be undone: nothing more is appended (reopen instead).
    private var journalBroken = false
    /// The one-writer lock (`.capturekit.lock`), held by a writable dataset from create/open to
    /// close, cancel or deinit; nil when read-only.
    private var writeLock: DatasetLock?
    /// The first failed write (guarded by `state`): the dataset is failed, and every later writing
    /// call (add, stream, box, pass, event, remove, flush, finalize, close) reports it as `io`
    /// until the dataset is reopened. Never "OK and lost": once a write failed, no later call
    /// says frames are durable.
    private var failure: CaptureKitError?
    /// The dataset belongs to a session (`ck_session_dataset` hands it out borrowed).
    public internal(set) var isOwnedBySession = false
    /// Files and folders this dataset created (for cancel), relative to `directory`.
    private var created: [String] = []
    private func noteCreated(_ rel: String) { state.withLock { if !created.contains(rel) { created.append(rel) } } }
    private func add(bytes n: UInt64) { state.withLock { storedBytes &+= n } }

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
    private func checkLayout() throws(CaptureKitError) {
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

    static func validate(_ o: DatasetOptions) throws(CaptureKitError) {
        guard o.depthWidth >= 0, o.depthHeight >= 0, o.depthWidth <= PNG.maxDimension, o.depthHeight <= PNG.maxDimension,
              (o.depthWidth == 0) == (o.depthHeight == 0) else {
            throw .invalidArgument("depth_png_width/height must both be 0 or both within 1...\(PNG.maxDimension)")
        }
        guard (0...9).contains(o.zlibLevel), (0...9).contains(o.pngLevel) else { throw .invalidArgument("zlib_level and png_level must be 0...9") }
        guard (1...100).contains(o.jpegQuality) else { throw .invalidArgument("jpeg_quality must be 1...100 (got \(o.jpegQuality))") }
        guard o.downscales.allSatisfy({ [2, 4, 8].contains($0) }), Set(o.downscales).count == o.downscales.count else {
            throw .invalidArgument("image_downscales must be a set of 2, 4 and 8 (got \(o.downscales))")
        }
        guard o.startTimeUnix.isFinite, abs(o.startTimeUnix) < 1e11 else { throw .invalidArgument("start_time_unix must be a finite Unix time") }
        try PathRules.checkName(o.deviceID, "device_id")
    }

    static func optionsJSON(_ o: DatasetOptions) -> JSONObject {
        var j = JSONObject()
        j.appendNew("depth_png_width", .int(Int64(o.depthWidth)))
        j.appendNew("depth_png_height", .int(Int64(o.depthHeight)))
        j.appendNew("zlib_level", .int(Int64(o.zlibLevel)))
        j.appendNew("png_level", .int(Int64(o.pngLevel)))
        j.appendNew("start_time_unix", .double(o.startTimeUnix))
        for (k, v) in [("device_id", o.deviceID), ("device_name", o.deviceName), ("device_type", o.deviceType),
                       ("user_name", o.userName), ("scene_description", o.sceneDescription), ("scene_type", o.sceneType)] {
            j.appendNew(k, .string(v))
        }
        if let v = o.colorVideo {
            j.appendNew("color_encoding", .string(v.encoding))
            j.appendNew("color_file_extension", .string(v.fileExtension))
        }
        if o.imageEncoding != .png {
            j.appendNew("image_encoding", .string(o.imageEncoding.rawValue))
            j.appendNew("jpeg_quality", .int(Int64(o.jpegQuality)))
        }
        if !o.downscales.isEmpty { j.appendNew("image_downscales", .array(o.downscales.map { .int(Int64($0)) })) }
        return j
    }

    static func decodeOptions(_ n: JSONNode) throws(CaptureKitError) -> DatasetOptions {
        var o = DatasetOptions()
        o.depthWidth = Int(try n.key("depth_png_width").int(in: 0...Int64(PNG.maxDimension)))
        o.depthHeight = Int(try n.key("depth_png_height").int(in: 0...Int64(PNG.maxDimension)))
        o.zlibLevel = Int32(try n.key("zlib_level").int(in: 0...9))
        o.pngLevel = Int32(try n.key("png_level").int(in: 0...9))
        o.startTimeUnix = try n.key("start_time_unix").double()
        o.deviceID = try n.key("device_id").string()
        o.deviceName = try n.key("device_name").string()
        o.deviceType = try n.key("device_type").string()
        o.userName = try n.key("user_name").string()
        o.sceneDescription = try n.key("scene_description").string()
        o.sceneType = try n.key("scene_type").string()
        if let e = try n.optionalKey("color_encoding")?.string() {
            o.colorVideo = (e, try n.key("color_file_extension").string())
        }
        if let node = try n.optionalKey("image_encoding") {
            guard let e = DatasetOptions.ImageEncoding(rawValue: try node.string()) else { throw node.error("unknown image_encoding") }
            o.imageEncoding = e
            o.jpegQuality = Int32(try n.key("jpeg_quality").int(in: 1...100))
        }
        if let node = try n.optionalKey("image_downscales") {
            let factors = try node.array()
            guard factors.count <= 3 else { throw node.error("image_downscales has more than 3 factors") }
            var list: [Int] = []
            for f in factors { list.append(Int(try f.int(in: 2...8))) }
            guard list.allSatisfy({ [2, 4, 8].contains($0) }), Set(list).count == list.count else { throw node.error("image_downscales must be a set of 2, 4 and 8") }
            o.downscales = list.sorted()
        }
        return o
    }

    static func frameJSON(_ f: DatasetFrame) -> JSONObject {
        var j = JSONObject()
        j.appendNew("op", .string("frame"))
        j.appendNew("id", .int(f.id))
        j.appendNew("pass", .int(Int64(f.pass)))
        j.appendNew("timestamp", .double(f.timestamp))
        j.appendNew("transform", .array(f.pose.columnMajor.map { .float($0) }))
        let k = f.intrinsics
        j.appendNew("intrinsics", .array([.float(k.fx), .float(k.fy), .float(k.cx), .float(k.cy), .int(Int64(k.width)), .int(Int64(k.height))]))
        j.appendNew("file_path", .string(f.imagePath))
        if let d = f.depthPath { j.appendNew("depth_path", .string(d)) }
        if let s = f.sharpness { j.appendNew("sharpness", .float(s)) }
        if let s = f.streamIndex { j.appendNew("stream_index", .int(s)) }
        j.appendNew("owns_image", .bool(f.ownsImage))
        return j
    }

    static func decodeFrame(_ n: JSONNode) throws(CaptureKitError) -> DatasetFrame {
        let k = try n.key("intrinsics").array(count: 6)
        let intr = try Intrinsics(fx: try k[0].float(), fy: try k[1].float(), cx: try k[2].float(), cy: try k[3].float(),
                                  width: UInt32(try k[4].int(in: 1...65536)), height: UInt32(try k[5].int(in: 1...65536)))
        let path = try n.key("file_path").string()
        let depth = try n.optionalKey("depth_path")?.string()
        do throws(CaptureKitError) {
            try PathRules.checkRelative(path)
            if let depth { try PathRules.checkRelative(depth) }
        } catch { throw n.error(error.message) }
        return DatasetFrame(id: try n.key("id").int(in: 0...Dataset.maxFrameID), pass: Int32(try n.key("pass").int(in: 0...Int64(Dataset.maxPass))),
                            timestamp: try n.key("timestamp").double(),
                            pose: Matrix4(columnMajor: try n.key("transform").floats(count: 16)), intrinsics: intr,
                            imagePath: path, depthPath: depth, sharpness: try n.optionalKey("sharpness")?.float(),
                            ownsImage: try n.key("owns_image").bool(),
                            streamIndex: try n.optionalKey("stream_index")?.int(in: 0...Int64.max))
    }

    /// Removes what an interrupted add left behind (reopen): files under images/ and depth/ with
    /// the library's frame names ("000012.png") for ids no journal line has reached, and the
    /// temporary files of interrupted atomic writes ("….tmp-<pid>") in the dataset's folders.
    /// Without this, the next add would find its own file names taken.
    private func removeOrphans() throws(CaptureKitError) {
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

    // MARK: writing

    private func ensureOpen() throws(CaptureKitError) -> File {
        guard !readOnly else { throw .state("the dataset was opened read-only") }
        guard !cancelled, let j = journal else { throw .state("the dataset is closed or cancelled") }
        try checkFailure()
        return j
    }

    /// Throws the sticky failure, if a write has failed (see `failure`).
    public func checkFailure() throws(CaptureKitError) {
        if let f = state.withLock({ failure }) { throw f }
    }

    /// True once a write has failed (the dataset takes no more writes until reopened).
    public var hasFailed: Bool { state.withLock { failure != nil } }

    /// Makes the dataset failed with `e` if it is a failed write (an I/O error, a folder gone, a
    /// compressor out of memory; not a refused argument or state), and returns what the caller
    /// reports: the first failure, as `io`, naming the file (the same text on every later call).
    @discardableResult
    private func recordFailure(_ e: CaptureKitError) -> CaptureKitError {
        switch e.status {
        case .invalidArgument, .exists, .busy, .state, .unsupported, .bufferTooSmall: return e
        case .io, .corrupt, .notFound, .noMemory: break
        }
        return state.withLock { () -> CaptureKitError in
            if let f = failure { return f }
            let f = CaptureKitError.io("\(e.message); the dataset takes no more writes (nothing written since the last successful flush is kept): close it and reopen it, or resume the session, to go on from the last flushed frame")
            failure = f
            return f
        }
    }

    /// Runs a writing step; a failed write makes the dataset failed (`recordFailure`).
    private func committing<T>(_ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
        do { return try body() } catch { throw recordFailure(error) }
    }

    /// A caller-thread write's first step: the dataset is open, and a failure of the background
    /// writer since the last call is reported now (once).
    private func ensureWritable() throws(CaptureKitError) {
        _ = try ensureOpen()
        try reportingWriterFailure { (w) throws(CaptureKitError) in try w.check() }
    }

    /// Runs `body` on the writer (if any); when it reports a background failure, the writer is
    /// empty and idle, so the caller-side stream counts are set back to what was written.
    private func reportingWriterFailure(_ body: (BackgroundQueue) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        guard let w = writer else { return }
        do { try body(w) } catch {
            state.withLock { queuedFrames = 0 }
            streamQueued = streamedFrames
            streamQueuedLast = streamSpan?.last
            throw recordFailure(error)
        }
    }

    /// Queues `job` on the background writer, or runs it now when there is none. Returns false
    /// (nothing queued) when `ifRoom` and the queue is full.
    private func write(bytes: Int, ifRoom: Bool, _ job: @escaping BackgroundQueue.Job) throws(CaptureKitError) -> Bool {
        guard writer != nil else { try committing(job); return true }
        var queued = false
        try reportingWriterFailure { (w) throws(CaptureKitError) in queued = try w.submit(bytes: bytes, wait: !ifRoom, job) }
        return queued
    }

    /// Waits until every queued frame is written and journaled (durable); reports a background
    /// write failure. Without a background writer every call is durable already.
    public func flush() throws(CaptureKitError) {
        _ = try ensureOpen()
        try reportingWriterFailure { (w) throws(CaptureKitError) in try w.drain() }
        try committing(checkpointStreams)  // the writer is idle now
        // Never OK and lost: a folder removed since the last write is a failed dataset.
        try committing { () throws(CaptureKitError) in try journal?.requireLinked() }
    }

    /// Queues `job` on the background writer as if it were a frame of `bytes` (tests: a job that
    /// blocks holds the writer, to fill the queue or to change the disk under queued frames).
    func submitToWriter(bytes: Int, _ job: @escaping BackgroundQueue.Job) throws(CaptureKitError) {
        guard let w = writer else { throw .state("the dataset has no background writer") }
        _ = try w.submit(bytes: bytes, wait: true, job)
    }

    /// The most bytes of frames the background writer ever held queued, and the bytes queued now
    /// (0 without one).
    public var writeQueuePeakBytes: Int { writer?.peakBytes ?? 0 }
    public var writeQueuePendingBytes: Int { writer?.pendingBytes ?? 0 }

    /// Appends one journal line and fsyncs it (from either thread; serialised). On failure the
    /// journal is cut back to where it was (so a failed add leaves no line, and the id it would
    /// have used stays free); if even that fails, the dataset refuses further writes until it is
    /// reopened (reopening drops a torn line).
    private func append(_ value: JSONValue) throws(CaptureKitError) {
        let j = try ensureOpen()
        let line = try JSON.line(value)
        try journalLock.withLock { () throws(CaptureKitError) in
            guard !journalBroken else {
                throw .io("an earlier journal write failed and could not be undone; close the dataset and reopen it")
            }
            let start = try j.size()
            do throws(CaptureKitError) {
                try j.write(line)
                try j.sync()
                // A journal deleted under us (the folder removed) takes writes that are lost.
                try j.requireLinked()
            } catch {
                do throws(CaptureKitError) {
                    try j.truncate(to: start)
                    try j.seek(to: start)
                } catch _ { journalBroken = true }
                throw error
            }
        }
        add(bytes: UInt64(line.count))
    }

    /// The relative image path of the next frame ("images/000012" + ext).
    public func nextImagePath(extension ext: String) throws(CaptureKitError) -> String {
        guard ext.count >= 2, ext.count <= 8, ext.hasPrefix("."), ext.utf8.dropFirst().allSatisfy(Dataset.isASCIIAlphanumeric) else {
            throw .invalidArgument("extension \"\(ext)\" must be a dot and 1...7 letters or digits")
        }
        return "images/\(Dataset.number(nextID))\(ext)"
    }

    /// The streams' frame rate, Hz, from their timestamps (rounded; 0 when fewer than two frames
    /// or no time passed: unknown, never a made-up 60).
    static func frequency(frames: Int64, span: (first: Double, last: Double)?) -> Int64 {
        guard frames >= 2, let span, span.last > span.first else { return 0 }
        let hz = Double(frames - 1) / (span.last - span.first)
        return hz.isFinite && hz < 1e6 ? Int64(hz.rounded()) : 0
    }

    static func number(_ id: Int64) -> String {
        let s = String(id)
        return s.count >= 6 ? s : String(repeating: "0", count: 6 - s.count) + s
    }

    /// What a caller hands to `addFrame`.
    public struct FrameInput {
        public var timestamp: Double
        public var pose: Pose
        public var intrinsics: Intrinsics
        /// Caller-written image (relative path); nil with `pixels` = the library writes a PNG.
        public var imagePath: String?
        public var pixels: (bytes: UnsafeRawBufferPointer, stride: Int, format: PNGFormat)?
        /// Camera-native pixels (NV12, BGRA) instead of `pixels`: converted to RGB by the writer.
        public var camera: CameraPixels?
        public var depth: (metres: UnsafeBufferPointer<Float>, width: Int, height: Int)?
        public var sharpness: Float?
        /// The frame's index in the MultiScan streams; nil = the last streamed frame when it has
        /// this frame's timestamp (a frame streamed, then captured), else none.
        public var streamIndex: Int64?
        public init(timestamp: Double, pose: Pose, intrinsics: Intrinsics) {
            self.timestamp = timestamp; self.pose = pose; self.intrinsics = intrinsics
        }
    }

    /// A frame's buffers owned by the dataset while it waits for the background writer (the
    /// caller's are borrowed for the call only).
    private struct OwnedFrame {
        var pixels: (bytes: [UInt8], stride: Int, format: PNGFormat)?
        var depth: (metres: [Float], width: Int, height: Int)?
        var camera: OwnedCameraPixels?

        init(_ input: FrameInput, pool: BufferPool) {
            camera = input.camera?.copied(into: pool)
            if let px = input.pixels {
                let row = Int(input.intrinsics.width) * px.format.bytesPerPixel, h = Int(input.intrinsics.height)
                pixels = (pool.packed(px.bytes, stride: px.stride, row: row, rows: h), row, px.format)
            }
            if let d = input.depth { depth = (Array(d.metres), d.width, d.height) }
        }

        var bytes: Int { (pixels?.bytes.count ?? 0) + (depth?.metres.count ?? 0) * 4 + (camera?.bytes ?? 0) }

        /// What `OwnedFrame(input).bytes` will be, before copying anything.
        static func bytes(of input: FrameInput) -> Int {
            let px = input.pixels.map { Int(input.intrinsics.width) * $0.format.bytesPerPixel * Int(input.intrinsics.height) } ?? 0
            return px + (input.depth?.metres.count ?? 0) * 4 + (input.camera?.packedBytes ?? 0)
        }

        /// Hands the image buffers back to `pool` (the writer is done with them).
        func recycle(into pool: BufferPool) {
            if let p = pixels { pool.recycle(p.bytes) }
            if let c = camera { pool.recycle(c.luma); pool.recycle(c.chroma) }
        }

        /// Runs `body` with `input` pointing at these buffers.
        func with<T>(_ input: FrameInput, _ body: (FrameInput) throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
            var i = input
            i.pixels = nil; i.depth = nil; i.camera = nil
            guard let cam = camera else { return try withPixels(&i, body) }
            return try cam.with { (c) throws(CaptureKitError) -> T in
                var j = i
                j.camera = c
                return try withPixels(&j, body)
            }
        }

        private func withPixels<T>(_ i: inout FrameInput, _ body: (FrameInput) throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
            guard let px = pixels else { return try withDepth(&i, body) }
            return try px.bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) -> T in
                var j = i
                j.pixels = (UnsafeRawBufferPointer(b), px.stride, px.format)
                return try withDepth(&j, body)
            }
        }

        private func withDepth<T>(_ i: inout FrameInput, _ body: (FrameInput) throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
            guard let d = depth else { return try body(i) }
            return try d.metres.withUnsafeBufferPointer { (b) throws(CaptureKitError) -> T in
                var j = i
                j.depth = (b, d.width, d.height)
                return try body(j)
            }
        }
    }

    /// Adds a frame; returns its id. With a background writer the frame is queued (its buffers
    /// copied) and joins `frames` once written and journaled.
    public func addFrame(_ input: FrameInput) throws(CaptureKitError) -> Int64 {
        guard let id = try addFrame(input, ifRoom: false) else { throw .state("the write queue refused a frame") }
        return id
    }

    /// As `addFrame`; with `ifRoom`, a full write queue drops the frame instead (nil).
    public func addFrame(_ input: FrameInput, ifRoom: Bool) throws(CaptureKitError) -> Int64? {
        try ensureWritable()
        guard nextID <= Dataset.maxFrameID else { throw .state("the dataset has reached its last frame id \(Dataset.maxFrameID)") }
        guard input.timestamp.isFinite else { throw .invalidArgument("timestamp is not finite") }
        if let s = input.sharpness, !s.isFinite { throw .invalidArgument("sharpness is not finite") }
        let id = nextID
        let k = input.intrinsics
        var frame = DatasetFrame(id: id, pass: pass, timestamp: input.timestamp, pose: input.pose.matrix, intrinsics: k,
                                 imagePath: "", depthPath: nil, sharpness: input.sharpness, ownsImage: input.pixels != nil || input.camera != nil)
        frame.streamIndex = input.streamIndex ?? lastStreamedIndex(at: input.timestamp)
        if let cam = input.camera {
            guard input.pixels == nil else { throw .invalidArgument("give pixels or camera pixels, not both") }
            try cam.validate()
            guard cam.width == Int(k.width), cam.height == Int(k.height) else {
                throw .invalidArgument("image \(cam.width)x\(cam.height) differs from the intrinsics' \(k.width)x\(k.height)")
            }
        }
        if input.pixels != nil || input.camera != nil {
            if let px = input.pixels, px.format == .gray16, options.imageEncoding == .jpeg || !options.downscales.isEmpty {
                throw .invalidArgument("a 16-bit gray image cannot be stored as JPEG (image_encoding) or downscaled (image_downscales); use PNG")
            }
            frame.imagePath = "images/\(Dataset.number(id))\(options.imageEncoding.fileExtension)"
            guard !FileIO.exists(path(frame.imagePath)) else { throw .exists("\(frame.imagePath) exists already; the library does not overwrite files") }
        } else {
            if let given = input.imagePath { frame.imagePath = given } else { frame.imagePath = try nextImagePath(extension: ".png") }
            try PathRules.checkRelative(frame.imagePath)
            guard FileIO.exists(path(frame.imagePath)) else { throw .notFound("the image \(frame.imagePath) does not exist in the dataset (write it first)") }
        }
        var depthSize: (Int, Int)? = nil
        if let d = input.depth {
            let w = options.depthWidth > 0 ? options.depthWidth : Int(k.width)
            let h = options.depthHeight > 0 ? options.depthHeight : Int(k.height)
            guard w <= PNG.maxDimension, h <= PNG.maxDimension, d.width >= 1, d.height >= 1 else {
                throw .invalidArgument("depth PNG \(w)x\(h) (the image's size) is above the PNG limit \(PNG.maxDimension); set depth_png_width/height")
            }
            frame.depthPath = "depth/\(Dataset.number(id)).png"
            guard !FileIO.exists(path(frame.depthPath ?? "")) else { throw .exists("\(frame.depthPath ?? "") exists already") }
            depthSize = (w, h)
        }
        let queued: Bool
        if writer == nil {
            queued = try write(bytes: 0, ifRoom: false) { () throws(CaptureKitError) in try self.writeFrame(frame, input, depthSize) }
        } else {
            // A frame that would be dropped is not copied (a 1920×1440 capture is 4–8 MB).
            if ifRoom, let w = writer, !w.hasRoom(for: OwnedFrame.bytes(of: input)) { return nil }
            let owned = OwnedFrame(input, pool: pool)
            assert(owned.bytes == OwnedFrame.bytes(of: input), "the estimate checked for room is what the copy holds")
            state.withLock { queuedFrames += 1 }
            queued = try write(bytes: owned.bytes, ifRoom: ifRoom) { () throws(CaptureKitError) in
                defer { owned.recycle(into: self.pool) }
                do throws(CaptureKitError) {
                    try owned.with(input) { (i) throws(CaptureKitError) in try self.writeFrame(frame, i, depthSize, fromQueue: true) }
                } catch {
                    self.state.withLock { self.queuedFrames -= 1 }
                    throw error
                }
            }
            if !queued { state.withLock { queuedFrames -= 1 } }
        }
        guard queued else { return nil }
        nextID += 1
        passHasQueuedFrame = true
        return id
    }

    /// Encodes and writes one library image (PNG or JPEG, as the options say) at `rel`.
    private func writeImage(_ rel: String, _ bytes: UnsafeRawBufferPointer, _ w: Int, _ h: Int, _ stride: Int,
                            _ format: PNGFormat) throws(CaptureKitError) {
        switch options.imageEncoding {
        case .png: try PNG.write(path(rel), bytes, width: w, height: h, stride: stride, format: format, level: options.pngLevel, overwrite: false)
        case .jpeg: try JPEG.write(path(rel), bytes, width: w, height: h, stride: stride, format: format, quality: options.jpegQuality, overwrite: false)
        }
    }

    /// Writes a frame's files, journals it and adds it to `frames` (on the writer's thread, or the
    /// caller's without one). On error nothing of it stays: its files are removed and the journal
    /// line cut back.
    private func writeFrame(_ f: DatasetFrame, _ input: FrameInput, _ depthSize: (Int, Int)?, fromQueue: Bool = false) throws(CaptureKitError) {
        var written: [String] = []
        do throws(CaptureKitError) {
            // The stream frame this frame names is journaled before the frame (so a reopen never
            // cuts the streams before a frame's stream index).
            if let s = f.streamIndex, s >= checkpointedFrames { try checkpointStreams() }
            let (w, h) = (Int(f.intrinsics.width), Int(f.intrinsics.height))
            // Camera-native pixels become packed RGB first (on this thread: the writer's).
            let rgb = input.camera.map { $0.rgb() }
            if let rgb {
                try rgb.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try writeImage(f.imagePath, UnsafeRawBufferPointer(b), w, h, w * 3, .rgb8) }
                written.append(f.imagePath)
            } else if let px = input.pixels {
                try writeImage(f.imagePath, px.bytes, w, h, px.stride, px.format)
                written.append(f.imagePath)
            }
            if !options.downscales.isEmpty, let (src, format) = rgb.map({ ($0, PNGFormat.rgb8) })
                ?? input.pixels.map({ (pool.packed($0.bytes, stride: $0.stride, row: w * $0.format.bytesPerPixel, rows: h), $0.format) }) {
                var level = (pixels: src, width: w, height: h), factor = 1
                for target in options.downscales.sorted() {
                    while factor < target {
                        level = Downscale.half(level.pixels, width: level.width, height: level.height, channels: format.bytesPerPixel)
                        factor *= 2
                    }
                    guard level.width >= 1, level.height >= 1 else { break }
                    let rel = "\(Dataset.downscaleFolder(target))/\(f.imagePath.dropFirst("images/".count))"
                    try level.pixels.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
                        try writeImage(rel, UnsafeRawBufferPointer(b), level.width, level.height, level.width * format.bytesPerPixel, format)
                    }
                    written.append(rel)
                }
            }
            if let d = input.depth, let (w, h) = depthSize, let dp = f.depthPath {
                var mm = [UInt16](repeating: 0, count: w * h)
                // Nearest-neighbour resample to the PNG size (instant-ngp wants the image's size).
                for y in 0..<h {
                    let sy = min(d.height - 1, (y * d.height + d.height / 2) / h)
                    for x in 0..<w {
                        let sx = min(d.width - 1, (x * d.width + d.width / 2) / w)
                        mm[y * w + x] = DepthConversion.millimetres(d.metres[sy * d.width + sx])
                    }
                }
                try mm.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
                    try PNG.write(path(dp), UnsafeRawBufferPointer(b), width: w, height: h, stride: w * 2, format: .gray16,
                                  level: options.pngLevel, overwrite: false)
                }
                written.append(dp)
            }
            try append(.object(Dataset.frameJSON(f)))
            var size: UInt64 = 0
            for w in written { size &+= (try? File.open(path(w), .readOnly).size()) ?? 0 }
            state.withLock {
                storedFrames.append(f)
                if fromQueue { queuedFrames -= 1 }  // in the same step: frameCount never counts it twice
                storedBytes &+= size
                created += written
            }
        } catch {
            for w in written { try? FileIO.remove(path(w)) }
            throw error
        }
    }

    /// Removes a frame and deletes its files inside the dataset (queued frames are written first).
    public func removeFrame(_ id: Int64) throws(CaptureKitError) {
        try flush()
        guard let f = frames.first(where: { $0.id == id }) else { throw .notFound("no frame \(id) in the dataset") }
        var line = JSONObject()
        line.appendNew("op", .string("remove"))
        line.appendNew("id", .int(id))
        try committing { () throws(CaptureKitError) in try append(.object(line)) }
        state.withLock { storedFrames.removeAll { $0.id == id } }
        if f.ownsImage, let p = try? PathRules.contained(f.imagePath, in: directory) { try? FileIO.remove(p) }
        if f.ownsImage {
            for s in Dataset.downscalePaths(f.imagePath) { if let p = try? PathRules.contained(s, in: directory), FileIO.exists(p) { try? FileIO.remove(p) } }
        }
        if let d = f.depthPath, let p = try? PathRules.contained(d, in: directory) { try? FileIO.remove(p) }
    }

    /// Journals `box` for pass `p` and makes `p` the current pass; the state changes only once
    /// the journal line is durable (boundingbox.json is derived and rewritten after it).
    private func recordBox(_ op: String, _ box: Box, pass p: Int32) throws(CaptureKitError) {
        try ensureWritable()
        var line = JSONObject()
        line.appendNew("op", .string(op))
        line.appendNew("pass", .int(Int64(p)))
        line.appendNew("box", BoundingBoxManifest(box: box).json())
        try committing { () throws(CaptureKitError) in try append(.object(line)) }
        if p != pass { passHasQueuedFrame = false }
        pass = p
        boxes.removeAll { $0.pass == p }
        boxes.append(BoxPass(pass: p, box: box))
        try committing(writeBoundingBox)
    }

    /// Sets the current pass's box (boundingbox.json is rewritten at once).
    public func setBox(_ box: Box) throws(CaptureKitError) { try recordBox("box", box, pass: pass) }

    /// Starts a new pass with its own box; returns its number.
    public func beginPass(_ box: Box) throws(CaptureKitError) -> Int32 {
        try ensureWritable()
        let hasFramesOrBox = passHasQueuedFrame || frames.contains { $0.pass == pass } || boxes.contains { $0.pass == pass }
        guard !hasFramesOrBox || pass < Dataset.maxPass else { throw .state("the dataset has reached its last pass \(Dataset.maxPass)") }
        try recordBox("pass", box, pass: hasFramesOrBox ? pass + 1 : pass)
        return pass
    }

    private func writeBoundingBox() throws(CaptureKitError) {
        let sorted = boxes.sorted { $0.pass < $1.pass }
        guard let first = sorted.first else { return }
        let m = BoundingBoxManifest(box: first.box, passes: sorted.count > 1 ? sorted : [])
        try m.write(to: path("boundingbox.json"), overwrite: true)
        noteCreated("boundingbox.json")
    }

    /// MultiScan streams need the scan's start time: it is the scan id, and MultiScan's server
    /// refuses a second scan with the same id; the library never reads a clock, so 0 (unset) is
    /// refused. - Throws: `invalidArgument` naming `option`.
    public static func requireStartTime(_ o: DatasetOptions, _ option: String, stream what: String) throws(CaptureKitError) {
        guard o.startTimeUnix != 0 else {
            throw .invalidArgument("\(option) is 0 (unset) while \(what): MultiScan streams need the scan's start time "
                                   + "(seconds since 1970 UTC) for their scan id, and the library never reads a clock")
        }
    }

    /// Appends a frame to the MultiScan streams and a camera-info line. `depth` is float32 metres
    /// and `confidence` bytes, `width × height` each, tightly packed. With a background writer the
    /// buffers are copied and the frame queued; with `ifRoom`, a full queue drops it (false).
    @discardableResult
    public func streamFrame(timestamp: Double, pose: Pose, intrinsics: Intrinsics, depth: UnsafeRawPointer?,
                            confidence: UnsafeRawPointer?, width: Int, height: Int, ifRoom: Bool = false) throws(CaptureKitError) -> Bool {
        try ensureWritable()
        guard !streamsClosed else { throw .state(streamsClosedReason) }
        try Self.requireStartTime(options, "options.start_time_unix", stream: "streaming a frame")
        guard depth != nil || confidence != nil else { throw .invalidArgument("depth and confidence are both NULL") }
        if let s = streamSize, s != (width, height) { throw .invalidArgument("stream frames are \(s.0)x\(s.1), not \(width)x\(height)") }
        if let k = streamKinds, (depth != nil && !k.depth) || (confidence != nil && !k.confidence) {
            throw .invalidArgument("the streams began without \(depth != nil && !k.depth ? "depth" : "confidence"); a stream cannot begin after the first stream frame")
        }
        let ns = try CameraInfoRecord.nanoseconds(fromSeconds: timestamp)
        let line = try CameraInfoRecord(timestamp: ns, intrinsics: intrinsics, pose: pose).line()
        let n = width * height
        let queued: Bool
        if writer == nil {
            queued = try write(bytes: 0, ifRoom: false) { () throws(CaptureKitError) in
                try self.writeStreamFrame(timestamp, intrinsics, line, depth, confidence, width, height)
            }
        } else {
            if ifRoom, let w = writer, !w.hasRoom(for: n * 5) { return false }  // dropped: not copied
            let d = depth.map { Array(UnsafeBufferPointer(start: $0.assumingMemoryBound(to: Float.self), count: n)) }
            let c = confidence.map { Array(UnsafeBufferPointer(start: $0.assumingMemoryBound(to: UInt8.self), count: n)) }
            queued = try write(bytes: n * 5, ifRoom: ifRoom) { () throws(CaptureKitError) in
                try Dataset.withOptionalBytes(d) { (dp) throws(CaptureKitError) in
                    try Dataset.withOptionalBytes(c) { (cp) throws(CaptureKitError) in
                        try self.writeStreamFrame(timestamp, intrinsics, line, dp, cp, width, height)
                    }
                }
            }
        }
        guard queued else { return false }
        streamSize = (width, height)
        if streamKinds == nil { streamKinds = (depth != nil, confidence != nil) }
        streamQueued += 1
        streamQueuedLast = timestamp
        return true
    }

    private static func withOptionalBytes<T>(_ a: [T]?, _ body: (UnsafeRawPointer?) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        guard let a else { return try body(nil) }
        try a.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try body(UnsafeRawPointer(b.baseAddress)) }
    }

    /// Writes one stream frame (the writer's thread, or the caller's without one): all or
    /// nothing, so the streams and the camera-info lines always hold the same frames.
    private func writeStreamFrame(_ timestamp: Double, _ intrinsics: Intrinsics, _ line: [UInt8], _ depth: UnsafeRawPointer?,
                                  _ confidence: UnsafeRawPointer?, _ width: Int, _ height: Int) throws(CaptureKitError) {
        // The frames so far are journaled first: a failure leaves nothing of this frame.
        if streamedFrames - checkpointedFrames >= Dataset.streamCheckpointInterval { try checkpointStreams() }
        if cameraInfo == nil {
            cameraInfo = try File.open(path("\(scanID).jsonl"), .createNew)
            noteCreated("\(scanID).jsonl")
        }
        if depth != nil && depthStream == nil {
            depthStream = try ZStreamWriter(path: path("\(scanID).depth.zlib"), width: width, height: height, kind: .depth, level: options.zlibLevel)
            noteCreated("\(scanID).depth.zlib")
        }
        if confidence != nil && confidenceStream == nil {
            confidenceStream = try ZStreamWriter(path: path("\(scanID).confidence.zlib"), width: width, height: height, kind: .confidence, level: options.zlibLevel)
            noteCreated("\(scanID).confidence.zlib")
        }
        var appended: [ZStreamWriter] = []
        let infoSize = try cameraInfo?.size() ?? 0
        do throws(CaptureKitError) {
            if let depth, let s = depthStream { try s.append(depth, format: .depthF32); appended.append(s) }
            if let confidence, let s = confidenceStream { try s.append(confidence, format: .u8); appended.append(s) }
            try cameraInfo?.write(line)
        } catch {
            for s in appended { try? s.discardLastFrame() }
            if let c = cameraInfo { try? c.truncate(to: infoSize); try? c.seek(to: infoSize) }
            throw error
        }
        add(bytes: UInt64(line.count) &+ UInt64(width * height * 3 / 4))  // ~ compressed depth + confidence
        streamedFrames += 1
        if streamColor == nil { streamColor = intrinsics }
        streamSpan = (streamSpan?.first ?? timestamp, timestamp)
    }

    // MARK: stream checkpoints (resuming the streams after a crash)

    /// Makes the streamed frames durable (fsyncs both streams and the camera-info lines) and then
    /// journals how far each file holds whole frames: a `stream` line. Runs on the writer's thread
    /// (before a stream frame, every `streamCheckpointInterval` frames, and before a frame naming a
    /// stream frame not yet journaled) or on the caller's with the writer idle (flush, close).
    private func checkpointStreams() throws(CaptureKitError) {
        guard streamedFrames > checkpointedFrames, let (w, h) = streamSize, let info = cameraInfo,
              let span = streamSpan, let color = streamColor else { return }
        try depthStream?.sync()
        try confidenceStream?.sync()
        try info.sync()
        if checkpointedFrames == 0 { try FileIO.syncDirectory(of: path(Dataset.journalName)) }  // the files' names
        let cp = StreamCheckpoint(frames: streamedFrames, width: w, height: h,
                                  depth: depthStream.map { (Int64($0.frameCount), $0.compressedSize) },
                                  confidence: confidenceStream.map { (Int64($0.frameCount), $0.compressedSize) },
                                  infoBytes: try info.size(), firstTimestamp: span.first, lastTimestamp: span.last, color: color)
        try append(cp.json())
        checkpointedFrames = cp.frames
    }

    /// The stream files of this dataset (MultiScan's names), relative to its folder.
    private var streamFileNames: (depth: String, confidence: String, info: String) {
        ("\(scanID).depth.zlib", "\(scanID).confidence.zlib", "\(scanID).jsonl")
    }

    /// What a reopen does to the streams, decided before anything is changed (`planStreams`).
    enum StreamPlan {
        /// No checkpoint: the stream files (never journaled, nothing of them durable) are removed.
        case remove([String])
        /// A version-1 journal's streams: kept as they are, not continued.
        case keepClosed
        /// Cut each stream after the last checkpoint's frames and continue it.
        case resume(StreamCheckpoint)
    }

    /// Reopen, step 1 (nothing changed): checks the streams against the journal's checkpoints.
    /// Every stream file the last checkpoint names must hold, from its first byte to the journaled
    /// end, exactly the journaled number of whole frames, ending at a full flush (the WHOLE stream
    /// is decoded with one raw inflater, as MultiScan's decoders read it: a damaged block anywhere
    /// before the end is found, not only in the last segment); a stream file it does not name is
    /// corrupt (a stream begins with the first stream frame, so the first checkpoint names every
    /// stream file). The camera-info file must hold exactly the journaled number of lines up to
    /// the journaled end, and its lines since the previous checkpoint and in the window a resumed
    /// session reads back (`recentInfoRecords`) must parse as camera-info records, by the same
    /// parser. Anything else is `corrupt`.
    private func planStreams(_ replay: StreamCheckpoint.Replay, journalVersion: Int64) throws(CaptureKitError) -> StreamPlan? {
        let names = streamFileNames
        let all = [names.depth, names.confidence, names.info]
        let present = all.filter { FileIO.exists(path($0)) }
        guard let last = replay.last else {
            if !present.isEmpty && journalVersion < 2 { return .keepClosed }
            return present.isEmpty ? nil : .remove(present)
        }
        let previous = replay.previous
        let streams: [(String, ZStream.Kind, (frames: Int64, bytes: UInt64)?)] = [
            (names.depth, .depth, last.depth), (names.confidence, .confidence, last.confidence)]
        for (name, kind, end) in streams {
            let p = path(name)
            guard let end else {
                if FileIO.exists(p) { throw .corrupt("\(p) exists, but the journal's last stream checkpoint does not name it") }
                continue
            }
            guard FileIO.exists(p) else { throw .corrupt("\(p) is missing, but the journal says it holds \(end.frames) frames") }
            let f = try File.open(p, .readOnly)
            defer { f.closeQuietly() }
            let size = try f.size()
            guard end.bytes <= size else {
                throw .corrupt("the journal says \(p) holds \(end.bytes) bytes of frames, but the file has \(size)")
            }
            let frameBytes = try ZStream.frameBytes(width: last.width, height: last.height, kind: kind)
            guard try ZStream.segmentHoldsFrames(f, from: 0, to: end.bytes, frames: UInt64(end.frames), frameBytes: frameBytes) else {
                throw .corrupt("\(p): bytes 0..<\(end.bytes) are not the \(end.frames) whole \(last.width)x\(last.height) frames the journal says")
            }
        }
        let infoPath = path(names.info)
        guard FileIO.exists(infoPath) else { throw .corrupt("\(infoPath) is missing, but the journal says it has \(last.frames) lines") }
        let f = try File.open(infoPath, .readOnly)
        defer { f.closeQuietly() }
        let size = try f.size()
        let from = previous?.infoBytes ?? 0
        guard last.infoBytes <= size else {
            throw .corrupt("the journal says \(infoPath) holds \(last.infoBytes) bytes of lines, but the file has \(size)")
        }
        guard try Dataset.countLines(f, from: 0, to: last.infoBytes) == last.frames else {
            throw .corrupt("\(infoPath): bytes 0..<\(last.infoBytes) are not the \(last.frames) whole lines the journal says")
        }
        _ = try Dataset.infoRecords(f, from: from, to: last.infoBytes, what: infoPath)
        _ = try Dataset.recentInfoRecords(f, end: last.infoBytes, what: infoPath)
        return .resume(last)
    }

    /// Reopen: the planned stream state becomes the dataset's (before any repair, so the caller's
    /// own checks see it).
    private func adopt(_ plan: StreamPlan) {
        switch plan {
        case .remove: break
        case .keepClosed:
            streamsClosed = true
            streamsClosedReason = "the streams of this dataset were written before CaptureKit 0.2 journaled them, so they cannot be continued (stream nothing, or start a new dataset)"
        case .resume(let last):
            streamSize = (last.width, last.height)
            streamKinds = (last.depth != nil, last.confidence != nil)
            streamedFrames = last.frames
            streamQueued = last.frames
            checkpointedFrames = last.frames
            streamColor = last.color
            streamSpan = (last.firstTimestamp, last.lastTimestamp)
        }
    }

    /// Reopen, step 2 (everything checked): cuts each stream after its last journaled frame and
    /// continues it with a fresh compressor, cuts the camera-info lines there, or removes streams
    /// never journaled.
    private func resumeStreams(_ plan: StreamPlan?) throws(CaptureKitError) {
        guard let plan else { return }
        let names = streamFileNames
        switch plan {
        case .keepClosed: return
        case .remove(let files):
            for n in files { try FileIO.remove(try PathRules.contained(n, in: directory)) }
        case .resume(let last):
            if let d = last.depth {
                depthStream = try ZStreamWriter(continuing: path(names.depth), width: last.width, height: last.height, kind: .depth,
                                                level: options.zlibLevel, frames: UInt64(d.frames), at: d.bytes)
            }
            if let c = last.confidence {
                confidenceStream = try ZStreamWriter(continuing: path(names.confidence), width: last.width, height: last.height, kind: .confidence,
                                                     level: options.zlibLevel, frames: UInt64(c.frames), at: c.bytes)
            }
            let info = try File.open(path(names.info), .readWrite)
            do throws(CaptureKitError) {
                try info.truncate(to: last.infoBytes)
                try info.seek(to: last.infoBytes)
            } catch {
                info.closeQuietly()
                throw error
            }
            cameraInfo = info
        }
    }

    /// The camera-info records in bytes `start..<end` of `f` (whole lines; `corrupt` otherwise).
    private static func infoRecords(_ f: File, from start: UInt64, to end: UInt64, what: String) throws(CaptureKitError) -> [CameraInfoRecord] {
        guard end > start else { return [] }
        guard end - start <= 1 << 30 else { throw .unsupported("\(what): \(end - start) bytes of camera-info lines to check at once") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(end - start), alignment: 16)
        defer { buffer.deallocate() }
        let n = try f.read(into: buffer, at: start)
        guard UInt64(n) == end - start else { throw .corrupt("\(what) ends before byte \(end)") }
        return try CameraInfoRecord.decodeLines(Array(buffer[0..<n]), what: what, tolerateTornTail: false).records
    }

    /// The camera-info records of the last MiB before `end` (from the first line starting in it):
    /// what a resumed session reads its recent poses from. One rule for open and resume.
    static func recentInfoRecords(_ f: File, end: UInt64, what: String) throws(CaptureKitError) -> [CameraInfoRecord] {
        let start = end > (1 << 20) ? end - (1 << 20) : 0
        guard end > start else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(end - start), alignment: 16)
        defer { buffer.deallocate() }
        let n = try f.read(into: buffer, at: start)
        var bytes = Array(buffer[0..<n])
        if start > 0, let nl = bytes.firstIndex(of: 0x0A) { bytes.removeFirst(nl + 1) }  // a line cut by the window
        return try CameraInfoRecord.decodeLines(bytes, what: what, tolerateTornTail: true).records
    }

    /// Newlines in bytes `start..<end` of `f`; -1 when the last byte is not one (a torn line).
    private static func countLines(_ f: File, from start: UInt64, to end: UInt64) throws(CaptureKitError) -> Int64 {
        guard end > start else { return 0 }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var pos = start, count: Int64 = 0, lastByte: UInt8 = 0
        while pos < end {
            let n = try f.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(UInt64(buffer.count), end - pos))]), at: pos)
            guard n > 0 else { return -1 }
            for i in 0..<n where buffer[i] == 0x0A { count += 1 }
            lastByte = buffer[n - 1]
            pos += UInt64(n)
        }
        return lastByte == 0x0A ? count : -1
    }

    /// The streamed frames' timestamps (seconds) and camera poses within `seconds` of the last
    /// one, oldest first, read back from the camera-info lines (their last MiB at most): what a
    /// resumed session's scheduler measures motion from.
    public func recentStreamedPoses(within seconds: Double) throws(CaptureKitError) -> [(t: Double, pose: Matrix4)] {
        guard let info = cameraInfo else { return [] }
        let records = try Dataset.recentInfoRecords(info, end: try info.size(), what: path(streamFileNames.info))
        guard let last = records.last else { return [] }
        let lastT = Double(last.timestamp) / 1e9
        return records.map { (Double($0.timestamp) / 1e9, $0.transform) }.filter { $0.t >= lastT - seconds }
    }

    /// Why `streamFrame` would refuse frames (nil: it takes them).
    public var streamsRefusal: String? { streamsClosed ? streamsClosedReason : nil }

    /// The index of the last stream frame handed over (written or queued) if it has timestamp `t`
    /// (this session's streams only).
    public func lastStreamedIndex(at t: Double) -> Int64? {
        guard let last = streamQueuedLast, last == t, streamQueued > 0 else { return nil }
        return streamQueued - 1
    }

    /// Appends an event to events.jsonl.
    public func logEvent(_ e: EventRecord) throws(CaptureKitError) {
        _ = try ensureOpen()
        let line = try e.line()
        try committing { () throws(CaptureKitError) in
            if events == nil {
                events = try File.open(path("events.jsonl"), .readWrite)
                if let ev = events { try ev.seek(to: try ev.size()) }
                noteCreated("events.jsonl")
            }
            try events?.write(line)
        }
        add(bytes: UInt64(line.count))
    }

    // MARK: finishing

    /// The transforms.json model of the current frames.
    public func transforms() -> TransformsManifest {
        TransformsManifest(frames: frames.map {
            TransformsFrame(filePath: $0.imagePath, transform: $0.pose, intrinsics: $0.intrinsics, depthPath: $0.depthPath,
                            sharpness: $0.sharpness, timestamp: $0.timestamp, pass: $0.pass, frameID: $0.id,
                            streamIndex: $0.streamIndex)
        }, integerDepthScale: frames.contains { $0.depthPath != nil } ? 0.001 : nil)
    }

    /// Writes transforms.json, boundingbox.json and the scan metadata; ends the streams; optionally zips.
    public func finalize(zipPath: String?) throws(CaptureKitError) {
        try flush()
        try committing { () throws(CaptureKitError) in try finalizeFlushed(zipPath: zipPath) }
    }

    private func finalizeFlushed(zipPath: String?) throws(CaptureKitError) {
        try events?.sync()
        try cameraInfo?.sync()
        if let s = depthStream { try s.close(); depthStream = nil }
        if let s = confidenceStream { try s.close(); confidenceStream = nil }
        streamsClosed = true
        try transforms().write(to: path("transforms.json"), overwrite: true)
        noteCreated("transforms.json")
        try writeBoundingBox()
        if streamedFrames > 0, let (w, h) = streamSize {
            let fps = Dataset.frequency(frames: streamedFrames, span: streamSpan)
            // The colour camera first, as the app writes it: MultiScan's scripts take its
            // resolution and intrinsics for the camera-info lines, and the minimum of its and the
            // depth stream's frame counts.
            var streams: [ScanStream] = []
            if let k = streamColor {
                let video = options.colorVideo
                streams.append(ScanStream.colorCamera(encoding: video?.encoding ?? "none", fileExtension: video?.fileExtension ?? "none",
                                                      frequency: fps, frames: streamedFrames, intrinsics: k))
            }
            let depthFile = FileIO.exists(path("\(scanID).depth.zlib")), confidenceFile = FileIO.exists(path("\(scanID).confidence.zlib"))
            if depthFile { streams.append(ScanStream.depth(frequency: fps, frames: streamedFrames, width: Int64(w), height: Int64(h))) }
            if confidenceFile {
                streams.append(ScanStream.confidence(frequency: fps, frames: streamedFrames, resolution: StreamResolution(height: Int64(h), width: Int64(w))))
            }
            streams.append(ScanStream.cameraInfo(frequency: fps, frames: streamedFrames))
            // Every file of the scan: the streams written here, the camera-info lines, this
            // metadata, and the host's video when it said it writes one.
            let files = (depthFile ? 1 : 0) + (confidenceFile ? 1 : 0) + 2 + (options.colorVideo == nil ? 0 : 1)
            let meta = ScanMetadata(deviceID: options.deviceID, deviceType: options.deviceType, deviceName: options.deviceName,
                                    userName: options.userName, sceneDescription: options.sceneDescription,
                                    sceneType: options.sceneType, streams: streams, numberOfFiles: Int64(files),
                                    depthConfidenceAvailable: confidenceFile)
            try meta.write(to: path("\(scanID).json"), overwrite: true)
            noteCreated("\(scanID).json")
        }
        if let zipPath {
            let zip = try ZipWriter(path: zipPath, overwrite: false)
            var names = ["transforms.json", Dataset.journalName]
            if !boxes.isEmpty { names.append("boundingbox.json") }
            for f in frames { names.append(f.imagePath); if let d = f.depthPath { names.append(d) } }
            for extra in ["events.jsonl", "\(scanID).json", "\(scanID).jsonl", "\(scanID).depth.zlib", "\(scanID).confidence.zlib"]
            where FileIO.exists(path(extra)) { names.append(extra) }
            for n in names { try zip.addFile(n, from: path(n)) }
            _ = try zip.finish()
        }
    }

    /// Deletes everything this dataset created inside its folder.
    public func cancel() throws(CaptureKitError) {
        guard !readOnly else { throw .state("the dataset was opened read-only: cancel would delete its files") }
        try? writer?.stop()  // what it was writing is deleted below
        writer = nil
        cancelled = true
        defer { writeLock?.release(removingFile: true); writeLock = nil }
        journal?.closeQuietly(); journal = nil
        events?.closeQuietly(); events = nil
        cameraInfo?.closeQuietly(); cameraInfo = nil
        depthStream = nil; confidenceStream = nil
        var failed: [String] = []
        // Every path deleted here goes through the path rules (relative, inside the folder, no
        // symbolic link on the way), whatever list it comes from.
        func remove(_ rel: String) {
            do throws(CaptureKitError) {
                let p = try PathRules.contained(rel, in: directory)
                try FileIO.remove(p)
                if FileIO.exists(p + ".idx") { try FileIO.remove(p + ".idx") }
            } catch _ { failed.append(rel) }
        }
        for f in frames {
            // The capture's images: the library's, and the caller's written under the names the
            // library gave (images/…). Other caller files are left alone.
            if f.ownsImage || f.imagePath.hasPrefix("images/") { remove(f.imagePath) }
            if f.ownsImage { for s in Dataset.downscalePaths(f.imagePath) where FileIO.exists(path(s)) { remove(s) } }
            if let d = f.depthPath { remove(d) }
        }
        for rel in created.reversed() {
            if rel.isEmpty || Dataset.imageFolders.contains(rel) {
                // A folder still holding files the dataset did not write stays (with them).
                let kept = (try? FileIO.removeDirectory(rel.isEmpty ? directory : path(rel))) == nil
                if kept && !rel.isEmpty { failed.append(rel) }
            } else {
                remove(rel)
            }
        }
        if !failed.isEmpty { throw .io("cancel could not remove \(failed.joined(separator: ", "))") }
    }

    /// Writes what is queued, stops the background writer and flushes (the dataset stays
    /// resumable). Reports a background write failure.
    public func close() throws(CaptureKitError) {
        var first: CaptureKitError? = nil
        defer { writeLock?.release(); writeLock = nil }  // even on error: the handle is done
        do { try writer?.stop() } catch { first = recordFailure(error) }
        writer = nil
        if let f = state.withLock({ failure }) { first = f }
        if let first {
            // A failed dataset writes nothing more (no final block after a torn frame): its files
            // are closed as they are, and a reopen cuts them back to the last checkpoint.
            depthStream = nil; confidenceStream = nil
            events?.closeQuietly(); cameraInfo?.closeQuietly(); journal?.closeQuietly(); journal = nil
            throw first
        }
        do throws(CaptureKitError) {
            if journal != nil { try checkpointStreams() }
            try journal?.requireLinked()
            try events?.sync()
            try cameraInfo?.sync()
            if let s = depthStream { try s.close(); depthStream = nil }
            if let s = confidenceStream { try s.close(); confidenceStream = nil }
            try journal?.close(); journal = nil
        } catch { if first == nil { first = recordFailure(error) } }
        journal?.closeQuietly(); journal = nil
        if let first { throw first }
    }
}

/// A `stream` line of the journal: the first `frames` stream frames are durable, each stream file
/// holding its frames whole up to its byte count (the end of its last frame's full flush, before
/// any final block), and the camera-info file `frames` whole lines in `infoBytes` bytes. Also what
/// the scan metadata needs (frame size, first and last timestamps, the first frame's colour
/// intrinsics).
struct StreamCheckpoint {
    var frames: Int64
    var width: Int, height: Int
    var depth: (frames: Int64, bytes: UInt64)?
    var confidence: (frames: Int64, bytes: UInt64)?
    var infoBytes: UInt64
    var firstTimestamp: Double, lastTimestamp: Double
    var color: Intrinsics

    /// Byte counts above this are corrupt (2^50: a petabyte).
    static let maxBytes: Int64 = 1 << 50

    init(frames: Int64, width: Int, height: Int, depth: (frames: Int64, bytes: UInt64)?, confidence: (frames: Int64, bytes: UInt64)?,
         infoBytes: UInt64, firstTimestamp: Double, lastTimestamp: Double, color: Intrinsics) {
        self.frames = frames; self.width = width; self.height = height; self.depth = depth; self.confidence = confidence
        self.infoBytes = infoBytes; self.firstTimestamp = firstTimestamp; self.lastTimestamp = lastTimestamp; self.color = color
    }

    func json() -> JSONValue {
        var j = JSONObject()
        j.appendNew("op", .string("stream"))
        j.appendNew("frames", .int(frames))
        j.appendNew("width", .int(Int64(width)))
        j.appendNew("height", .int(Int64(height)))
        if let d = depth { j.appendNew("depth", .ints([d.frames, Int64(d.bytes)])) }
        if let c = confidence { j.appendNew("confidence", .ints([c.frames, Int64(c.bytes)])) }
        j.appendNew("info_bytes", .int(Int64(infoBytes)))
        j.appendNew("first_timestamp", .double(firstTimestamp))
        j.appendNew("last_timestamp", .double(lastTimestamp))
        let k = color
        j.appendNew("color_intrinsics", .array([.float(k.fx), .float(k.fy), .float(k.cx), .float(k.cy), .int(Int64(k.width)), .int(Int64(k.height))]))
        return .object(j)
    }

    /// Reads a `stream` line; every number is range-checked (`corrupt` naming the key).
    init(_ n: JSONNode) throws(CaptureKitError) {
        let total = try n.key("frames").int(in: 1...Dataset.maxFrameID)
        frames = total
        width = Int(try n.key("width").int(in: 1...Int64(ZStream.maxDimension)))
        height = Int(try n.key("height").int(in: 1...Int64(ZStream.maxDimension)))
        func stream(_ key: String) throws(CaptureKitError) -> (frames: Int64, bytes: UInt64)? {
            guard let node = try n.optionalKey(key) else { return nil }
            let a = try node.array(count: 2)
            let f = try a[0].int(in: 1...Dataset.maxFrameID)
            let b = try a[1].int(in: 4...StreamCheckpoint.maxBytes)
            guard f <= total else { throw node.error("\(f) frames in a stream of \(total)") }
            return (f, UInt64(b))
        }
        depth = try stream("depth")
        confidence = try stream("confidence")
        guard depth != nil || confidence != nil else { throw n.error("a stream checkpoint names neither the depth nor the confidence stream") }
        infoBytes = UInt64(try n.key("info_bytes").int(in: 1...StreamCheckpoint.maxBytes))
        firstTimestamp = try n.key("first_timestamp").double()
        lastTimestamp = try n.key("last_timestamp").double()
        guard firstTimestamp.isFinite, lastTimestamp.isFinite, firstTimestamp <= lastTimestamp else {
            throw n.error("first_timestamp and last_timestamp must be finite and in order")
        }
        let k = try n.key("color_intrinsics").array(count: 6)
        color = try Intrinsics(fx: try k[0].float(), fy: try k[1].float(), cx: try k[2].float(), cy: try k[3].float(),
                               width: UInt32(try k[4].int(in: 1...65536)), height: UInt32(try k[5].int(in: 1...65536)))
    }

    /// The last two checkpoints of a journal being replayed (the bytes between them are checked
    /// on reopen). Each must continue the one before: the same frame size, no count going back.
    struct Replay {
        private(set) var last: StreamCheckpoint?
        private(set) var previous: StreamCheckpoint?

        mutating func add(_ cp: StreamCheckpoint, _ node: JSONNode) throws(CaptureKitError) {
            if let l = last {
                guard cp.width == l.width, cp.height == l.height else { throw node.error("the stream frame size changed from \(l.width)x\(l.height)") }
                func grows(_ a: (frames: Int64, bytes: UInt64)?, _ b: (frames: Int64, bytes: UInt64)?) -> Bool {
                    guard let a else { return true }  // a stream begun later
                    guard let b else { return false }
                    return b.frames >= a.frames && b.bytes >= a.bytes && (b.frames > a.frames) == (b.bytes > a.bytes)
                }
                guard cp.frames > l.frames, cp.infoBytes > l.infoBytes, grows(l.depth, cp.depth), grows(l.confidence, cp.confidence) else {
                    throw node.error("a stream checkpoint goes back from \(l.frames) frames")
                }
                previous = l
            }
            last = cp
        }
    }
}

extension EventRecord {
    /// The events.jsonl record of an event: its code, name and operator text, plus `index` (when
    /// >= 0) and `value` (when != 0). A code this library does not know (a caller's own) is
    /// logged with the name "unknown". The one place event records are built (session and
    /// ck_dataset_log_event).
    public init(code: Int32, index: Int32, timestamp: Double, value: Float) {
        let known = EventCode(rawValue: code)
        var fields = JSONObject()
        if index >= 0 { fields.appendNew("index", .int(Int64(index))) }
        if value != 0 { fields.appendNew("value", .float(value)) }
        self.init(timestamp: timestamp, code: code, name: known.map { String(describing: $0) } ?? "unknown",
                  text: known.map { String(describing: $0.text(index: index)).replacingZeroTerminator() } ?? "unknown event", fields: fields)
    }

    public init(_ e: GuidanceEvent) { self.init(code: e.code.rawValue, index: e.index, timestamp: e.timestamp, value: e.value) }
}
