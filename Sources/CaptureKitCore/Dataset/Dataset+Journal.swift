import Glibc

// The journal (capturekit.jsonl) and durable writing: every effect is journaled and fsynced before
// a call returns; the writer queue; the sticky failure after a lost write.

extension Dataset {
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

    func ensureOpen() throws(CaptureKitError) -> File {
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
    func recordFailure(_ e: CaptureKitError) -> CaptureKitError {
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
    func committing<T>(_ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
        do { return try body() } catch { throw recordFailure(error) }
    }

    /// A caller-thread write's first step: the dataset is open, and a failure of the background
    /// writer since the last call is reported now (once).
    func ensureWritable() throws(CaptureKitError) {
        _ = try ensureOpen()
        try reportingWriterFailure { (w) throws(CaptureKitError) in try w.check() }
    }

    /// Runs `body` on the writer (if any); when it reports a background failure, the writer is
    /// empty and idle, so the caller-side stream counts are set back to what was written.
    func reportingWriterFailure(_ body: (BackgroundQueue) throws(CaptureKitError) -> Void) throws(CaptureKitError) {
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
    /// `urgent` (stream frames) runs before the queued frames (see `BackgroundQueue`).
    func write(bytes: Int, ifRoom: Bool, urgent: Bool = false, _ job: @escaping BackgroundQueue.Job) throws(CaptureKitError) -> Bool {
        guard writer != nil else { try committing(job); return true }
        var queued = false
        try reportingWriterFailure { (w) throws(CaptureKitError) in queued = try w.submit(bytes: bytes, wait: !ifRoom, urgent: urgent, job) }
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
    func append(_ value: JSONValue) throws(CaptureKitError) {
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
}
