import Glibc

// The MultiScan streams a dataset records, their checkpoints in the journal, and resuming them
// after a crash.

extension Dataset {
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
            let pool = streamPool
            let d = depth.map { pool.packed(UnsafeRawBufferPointer(start: $0, count: n * 4), stride: n * 4, row: n * 4, rows: 1) }
            let c = confidence.map { pool.packed(UnsafeRawBufferPointer(start: $0, count: n), stride: n, row: n, rows: 1) }
            // Not urgent (yet): running stream frames ahead of queued frames is safe (a frame is
            // queued after the stream frame it names), but it changes where the journal's stream
            // checkpoints fall, and the background journal must stay byte-identical to the
            // synchronous one (BackgroundWriterTests).
            queued = try write(bytes: n * 5, ifRoom: ifRoom) { () throws(CaptureKitError) in
                defer { if let d { pool.recycle(d) }; if let c { pool.recycle(c) } }
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

    static func withOptionalBytes<T>(_ a: [T]?, _ body: (UnsafeRawPointer?) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
        guard let a else { return try body(nil) }
        try a.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try body(UnsafeRawPointer(b.baseAddress)) }
    }

    /// Writes one stream frame (the writer's thread, or the caller's without one): all or
    /// nothing, so the streams and the camera-info lines always hold the same frames.
    func writeStreamFrame(_ timestamp: Double, _ intrinsics: Intrinsics, _ line: [UInt8], _ depth: UnsafeRawPointer?,
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

    /// Makes the streamed frames durable (fsyncs both streams and the camera-info lines) and then
    /// journals how far each file holds whole frames: a `stream` line. Runs on the writer's thread
    /// (before a stream frame, every `streamCheckpointInterval` frames, and before a frame naming a
    /// stream frame not yet journaled) or on the caller's with the writer idle (flush, close).
    func checkpointStreams() throws(CaptureKitError) {
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
    var streamFileNames: (depth: String, confidence: String, info: String) {
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
    func planStreams(_ replay: StreamCheckpoint.Replay, journalVersion: Int64) throws(CaptureKitError) -> StreamPlan? {
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
    func adopt(_ plan: StreamPlan) {
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
    func resumeStreams(_ plan: StreamPlan?) throws(CaptureKitError) {
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
    static func infoRecords(_ f: File, from start: UInt64, to end: UInt64, what: String) throws(CaptureKitError) -> [CameraInfoRecord] {
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
    static func countLines(_ f: File, from start: UInt64, to end: UInt64) throws(CaptureKitError) -> Int64 {
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
