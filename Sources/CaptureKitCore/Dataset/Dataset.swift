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
    public init() {}

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
    public private(set) var frames: [DatasetFrame] = []
    public private(set) var boxes: [BoxPass] = []
    public private(set) var pass: Int32 = 0
    public let scanID: String
    private var nextID: Int64 = 0
    private var journal: File?
    private var events: File?
    private var cameraInfo: File?
    private var depthStream: ZStreamWriter?, confidenceStream: ZStreamWriter?
    private var streamSize: (Int, Int)?
    public private(set) var streamedFrames: Int64 = 0
    /// The colour camera's intrinsics of the first streamed frame, and the first and last streamed
    /// timestamps (for the metadata's colour stream and frequency).
    private var streamColor: Intrinsics?
    private var streamSpan: (first: Double, last: Double)?
    /// Bytes written so far (for the storage estimate).
    public private(set) var bytesWritten: UInt64 = 0
    /// The streams of a reopened dataset are kept as they are (not extended).
    private var streamsClosed = false
    private var cancelled = false
    /// A journal write failed and could not be undone: nothing more is appended (reopen instead).
    private var journalBroken = false
    /// The dataset belongs to a session (`ck_session_dataset` hands it out borrowed).
    public internal(set) var isOwnedBySession = false
    /// Files and folders this dataset created (for cancel), relative to `directory`.
    private var created: [String] = []

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
        } else if !(try FileIO.listDirectory(dir)).isEmpty {
            throw .exists("\(dir) is not empty; open it with ck_dataset_open to resume it")
        }
        for sub in ["images", "depth"] {
            _ = try FileIO.makeDirectory(path(sub))
            created.append(sub)
        }
        journal = try File.open(path(Dataset.journalName), .createNew)
        created.append(Dataset.journalName)
        var begin = JSONObject()
        begin.appendNew("op", .string("begin"))
        begin.appendNew("scan_id", .string(scanID))
        begin.appendNew("version", .int(1))
        begin.appendNew("options", .object(Dataset.optionsJSON(options)))
        try append(.object(begin))
        try FileIO.syncDirectory(of: path(Dataset.journalName))
    }

    /// Reopens a dataset, replaying its journal.
    public init(open directory: String) throws(CaptureKitError) {
        self.directory = Dataset.normalise(directory)
        let jpath = "\(self.directory)/\(Dataset.journalName)"
        guard FileIO.exists(jpath) else { throw .notFound("\(self.directory) holds no CaptureKit dataset (\(Dataset.journalName) is missing)") }
        let bytes = try FileIO.readAll(jpath)
        let (parsed, torn) = try JSON.parseLines(bytes, what: Dataset.journalName, tolerateTornTail: true)
        let lines = parsed.map(\.value)
        guard let first = lines.first else { throw .corrupt("\(jpath) is empty") }
        let head = JSONNode(first, path: "\(Dataset.journalName)[0]")
        guard try head.key("op").string() == "begin" else { throw head.error("the journal must start with a begin line") }
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
            default: throw node.error("unknown journal operation")
            }
        }
        self.frames = frames; self.boxes = boxes; self.pass = pass; self.nextID = nextID
        for sub in ["images", "depth"] where FileIO.isSymbolicLink(path(sub)) {
            throw .corrupt("\(path(sub)) is a symbolic link; a dataset's folders are its own")
        }
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
        streamsClosed = true
        try removeOrphans()
        // What this dataset created, for cancel: its own files (the frames' files are removed
        // through `frames`); the folder itself and the caller's files are kept.
        created = ["images", "depth", Dataset.journalName, "boundingbox.json", "transforms.json", "events.jsonl",
                   "\(scanID).json", "\(scanID).jsonl", "\(scanID).depth.zlib", "\(scanID).confidence.zlib"]
            .filter { FileIO.exists("\(self.directory)/\($0)") }
    }

    deinit {
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
        for sub in ["images", "depth", ""] {
            let dir = sub.isEmpty ? directory : path(sub)
            guard FileIO.isRealDirectory(dir) else { continue }
            for name in try FileIO.listDirectory(dir) {
                let rel = sub.isEmpty ? name : "\(sub)/\(name)"
                let orphan = name.contains(".tmp-") || (!sub.isEmpty && Dataset.frameNumber(name).map { $0 >= nextID } == true)
                guard orphan, !frames.contains(where: { $0.imagePath == rel || $0.depthPath == rel }) else { continue }
                try FileIO.remove(try PathRules.contained(rel, in: directory))
            }
        }
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
        guard !cancelled, let j = journal else { throw .state("the dataset is closed or cancelled") }
        guard !journalBroken else {
            throw .io("an earlier journal write failed and could not be undone; close the dataset and reopen it")
        }
        return j
    }

    /// Appends one journal line and fsyncs it. On failure the journal is cut back to where it was
    /// (so a failed add leaves no line, and the id it would have used stays free); if even that
    /// fails, the dataset refuses further writes until it is reopened (reopening drops a torn line).
    private func append(_ value: JSONValue) throws(CaptureKitError) {
        let j = try ensureOpen()
        let line = try JSON.line(value)
        let start = try j.size()
        do throws(CaptureKitError) {
            try j.write(line)
            try j.sync()
        } catch {
            do throws(CaptureKitError) {
                try j.truncate(to: start)
                try j.seek(to: start)
            } catch _ { journalBroken = true }
            throw error
        }
        bytesWritten &+= UInt64(line.count)
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
        public var depth: (metres: UnsafeBufferPointer<Float>, width: Int, height: Int)?
        public var sharpness: Float?
        /// The frame's index in the MultiScan streams; nil = the last streamed frame when it has
        /// this frame's timestamp (a frame streamed, then captured), else none.
        public var streamIndex: Int64?
        public init(timestamp: Double, pose: Pose, intrinsics: Intrinsics) {
            self.timestamp = timestamp; self.pose = pose; self.intrinsics = intrinsics
        }
    }

    /// Adds a frame; returns its id.
    public func addFrame(_ input: FrameInput) throws(CaptureKitError) -> Int64 {
        _ = try ensureOpen()
        guard nextID <= Dataset.maxFrameID else { throw .state("the dataset has reached its last frame id \(Dataset.maxFrameID)") }
        guard input.timestamp.isFinite else { throw .invalidArgument("timestamp is not finite") }
        if let s = input.sharpness, !s.isFinite { throw .invalidArgument("sharpness is not finite") }
        let id = nextID
        let k = input.intrinsics
        var written: [String] = []
        do throws(CaptureKitError) {
            let image: String
            var owns = false
            if let px = input.pixels {
                image = "images/\(Dataset.number(id)).png"
                guard !FileIO.exists(path(image)) else { throw .exists("\(image) exists already; the library does not overwrite files") }
                try PNG.write(path(image), px.bytes, width: Int(k.width), height: Int(k.height), stride: px.stride, format: px.format,
                              level: options.pngLevel, overwrite: false)
                written.append(image); owns = true
            } else {
                if let given = input.imagePath { image = given } else { image = try nextImagePath(extension: ".png") }
                try PathRules.checkRelative(image)
                guard FileIO.exists(path(image)) else { throw .notFound("the image \(image) does not exist in the dataset (write it first)") }
            }
            var depthPath: String? = nil
            if let d = input.depth {
                let w = options.depthWidth > 0 ? options.depthWidth : Int(k.width)
                let h = options.depthHeight > 0 ? options.depthHeight : Int(k.height)
                guard w <= PNG.maxDimension, h <= PNG.maxDimension, d.width >= 1, d.height >= 1 else {
                    throw .invalidArgument("depth PNG \(w)x\(h) (the image's size) is above the PNG limit \(PNG.maxDimension); set depth_png_width/height")
                }
                var mm = [UInt16](repeating: 0, count: w * h)
                // Nearest-neighbour resample to the PNG size (instant-ngp wants the image's size).
                for y in 0..<h {
                    let sy = min(d.height - 1, (y * d.height + d.height / 2) / h)
                    for x in 0..<w {
                        let sx = min(d.width - 1, (x * d.width + d.width / 2) / w)
                        mm[y * w + x] = DepthConversion.millimetres(d.metres[sy * d.width + sx])
                    }
                }
                let dp = "depth/\(Dataset.number(id)).png"
                guard !FileIO.exists(path(dp)) else { throw .exists("\(dp) exists already") }
                try mm.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
                    try PNG.write(path(dp), UnsafeRawBufferPointer(b), width: w, height: h, stride: w * 2, format: .gray16,
                                  level: options.pngLevel, overwrite: false)
                }
                written.append(dp)
                depthPath = dp
            }
            var f = DatasetFrame(id: id, pass: pass, timestamp: input.timestamp, pose: input.pose.matrix, intrinsics: k,
                                 imagePath: image, depthPath: depthPath, sharpness: input.sharpness, ownsImage: owns)
            f.streamIndex = input.streamIndex ?? lastStreamedIndex(at: input.timestamp)
            try append(.object(Dataset.frameJSON(f)))
            for w in written { bytesWritten &+= (try? File.open(path(w), .readOnly).size()) ?? 0 }
            frames.append(f)
            nextID += 1
            created += written
            return id
        } catch {
            for w in written { try? FileIO.remove(path(w)) }
            throw error
        }
    }

    /// Removes a frame and deletes its files inside the dataset.
    public func removeFrame(_ id: Int64) throws(CaptureKitError) {
        guard let i = frames.firstIndex(where: { $0.id == id }) else { throw .notFound("no frame \(id) in the dataset") }
        var line = JSONObject()
        line.appendNew("op", .string("remove"))
        line.appendNew("id", .int(id))
        try append(.object(line))
        let f = frames.remove(at: i)
        if f.ownsImage, let p = try? PathRules.contained(f.imagePath, in: directory) { try? FileIO.remove(p) }
        if let d = f.depthPath, let p = try? PathRules.contained(d, in: directory) { try? FileIO.remove(p) }
    }

    /// Journals `box` for pass `p` and makes `p` the current pass; the state changes only once
    /// the journal line is durable (boundingbox.json is derived and rewritten after it).
    private func recordBox(_ op: String, _ box: Box, pass p: Int32) throws(CaptureKitError) {
        var line = JSONObject()
        line.appendNew("op", .string(op))
        line.appendNew("pass", .int(Int64(p)))
        line.appendNew("box", BoundingBoxManifest(box: box).json())
        try append(.object(line))
        pass = p
        boxes.removeAll { $0.pass == p }
        boxes.append(BoxPass(pass: p, box: box))
        try writeBoundingBox()
    }

    /// Sets the current pass's box (boundingbox.json is rewritten at once).
    public func setBox(_ box: Box) throws(CaptureKitError) { try recordBox("box", box, pass: pass) }

    /// Starts a new pass with its own box; returns its number.
    public func beginPass(_ box: Box) throws(CaptureKitError) -> Int32 {
        _ = try ensureOpen()
        let hasFramesOrBox = frames.contains { $0.pass == pass } || boxes.contains { $0.pass == pass }
        guard !hasFramesOrBox || pass < Dataset.maxPass else { throw .state("the dataset has reached its last pass \(Dataset.maxPass)") }
        try recordBox("pass", box, pass: hasFramesOrBox ? pass + 1 : pass)
        return pass
    }

    private func writeBoundingBox() throws(CaptureKitError) {
        let sorted = boxes.sorted { $0.pass < $1.pass }
        guard let first = sorted.first else { return }
        let m = BoundingBoxManifest(box: first.box, passes: sorted.count > 1 ? sorted : [])
        try m.write(to: path("boundingbox.json"), overwrite: true)
        if !created.contains("boundingbox.json") { created.append("boundingbox.json") }
    }

    /// Appends a frame to the MultiScan streams and a camera-info line.
    public func streamFrame(timestamp: Double, pose: Pose, intrinsics: Intrinsics, depth: UnsafeRawPointer?,
                            confidence: UnsafeRawPointer?, width: Int, height: Int) throws(CaptureKitError) {
        _ = try ensureOpen()
        guard !streamsClosed else { throw .state("the streams of a reopened or finalised dataset are not extended") }
        guard depth != nil || confidence != nil else { throw .invalidArgument("depth and confidence are both NULL") }
        if let s = streamSize, s != (width, height) { throw .invalidArgument("stream frames are \(s.0)x\(s.1), not \(width)x\(height)") }
        let ns = try CameraInfoRecord.nanoseconds(fromSeconds: timestamp)
        let line = try CameraInfoRecord(timestamp: ns, intrinsics: intrinsics, pose: pose).line()
        if streamSize == nil {
            cameraInfo = try File.open(path("\(scanID).jsonl"), .createNew)
            streamSize = (width, height)
            created.append("\(scanID).jsonl")
        }
        if depth != nil && depthStream == nil {
            depthStream = try ZStreamWriter(path: path("\(scanID).depth.zlib"), width: width, height: height, kind: .depth, level: options.zlibLevel)
            created.append("\(scanID).depth.zlib")
        }
        if confidence != nil && confidenceStream == nil {
            confidenceStream = try ZStreamWriter(path: path("\(scanID).confidence.zlib"), width: width, height: height, kind: .confidence, level: options.zlibLevel)
            created.append("\(scanID).confidence.zlib")
        }
        // All or nothing: a failure part-way takes back what this frame appended, so the streams
        // and the camera-info lines always hold the same acknowledged frames.
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
        bytesWritten &+= UInt64(line.count) &+ UInt64(width * height * 3 / 4)  // ~ compressed depth + confidence
        streamedFrames += 1
        if streamColor == nil { streamColor = intrinsics }
        streamSpan = (streamSpan?.first ?? timestamp, timestamp)
    }

    /// The index of the last streamed frame if it has timestamp `t` (this session's streams only).
    public func lastStreamedIndex(at t: Double) -> Int64? {
        guard let span = streamSpan, span.last == t, streamedFrames > 0 else { return nil }
        return streamedFrames - 1
    }

    /// Appends an event to events.jsonl.
    public func logEvent(_ e: EventRecord) throws(CaptureKitError) {
        _ = try ensureOpen()
        if events == nil {
            events = try File.open(path("events.jsonl"), .readWrite)
            if let ev = events { try ev.seek(to: try ev.size()) }
            if !created.contains("events.jsonl") { created.append("events.jsonl") }
        }
        let line = try e.line()
        try events?.write(line)
        bytesWritten &+= UInt64(line.count)
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
        _ = try ensureOpen()
        try events?.sync()
        try cameraInfo?.sync()
        if let s = depthStream { try s.close(); depthStream = nil }
        if let s = confidenceStream { try s.close(); confidenceStream = nil }
        streamsClosed = true
        try transforms().write(to: path("transforms.json"), overwrite: true)
        if !created.contains("transforms.json") { created.append("transforms.json") }
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
            if !created.contains("\(scanID).json") { created.append("\(scanID).json") }
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
        cancelled = true
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
            if let d = f.depthPath { remove(d) }
        }
        for rel in created.reversed() {
            if rel.isEmpty || rel == "images" || rel == "depth" {
                // A folder still holding files the dataset did not write stays (with them).
                let kept = (try? FileIO.removeDirectory(rel.isEmpty ? directory : path(rel))) == nil
                if kept && !rel.isEmpty { failed.append(rel) }
            } else {
                remove(rel)
            }
        }
        if !failed.isEmpty { throw .io("cancel could not remove \(failed.joined(separator: ", "))") }
    }

    /// Flushes (the dataset stays resumable).
    public func close() throws(CaptureKitError) {
        try events?.sync()
        try cameraInfo?.sync()
        if let s = depthStream { try s.close(); depthStream = nil }
        if let s = confidenceStream { try s.close(); confidenceStream = nil }
        try journal?.close(); journal = nil
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
