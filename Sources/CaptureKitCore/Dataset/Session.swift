/// Log levels (`ck_log_level`).
public enum LogLevel: Int32, Sendable { case debug = 0, info = 1, warning = 2, error = 3 }

/// Options of a capture session.
public struct SessionOptions {
    public var scheduler = SchedulerOptions()
    public var coverage = CoverageOptions()
    public var dataset = DatasetOptions()
    /// Raise `storageLow` below this many recording minutes left.
    public var storageWarningMinutes: Float = 10
    /// Stream every frame's depth/confidence to the MultiScan files.
    public var streamDepth = true
    /// The host's log sink and the minimum level passed to it.
    public var log: ((LogLevel, String) -> Void)?
    public var logLevel: LogLevel = .info
    /// With a background writer (`dataset.writeQueueBytes`), what a full write queue does to a
    /// capture or stream frame: drop it with an event (true; the camera never stalls), or wait.
    public var dropWhenQueueFull = true
    public init() {}
}

/// One camera frame for the session.
public struct SessionFrame {
    public var timestamp: Double
    public var pose: Pose
    public var intrinsics: Intrinsics
    public var tracking: TrackingState = .normal
    /// Image pixels (written as a PNG when captured).
    public var pixels: (bytes: UnsafeRawBufferPointer, stride: Int, format: ImageFormat)?
    /// Camera-native pixels (NV12, BGRA) instead of `pixels` (converted by the dataset's writer).
    public var camera: CameraPixels?
    /// Depth (metres) and confidence, `depthIntrinsics.width × height`.
    public var depth: UnsafeBufferPointer<Float>?
    public var confidence: UnsafeBufferPointer<UInt8>?
    public var depthIntrinsics: Intrinsics?
    /// The caller's sharpness; nil = measured from gray/RGB pixels when given.
    public var sharpness: Float?
    /// Why tracking is limited (passed to the scheduler).
    public var trackingReason: TrackingReason = .none
    /// The caller's mean luma (0...1); nil = measured from the pixels when given (`Luma.mean`).
    public var meanLuma: Float?
    /// Set when the caller handed the image over (`ImageLease`): a capture reads `pixels` /
    /// `camera` in place on the writer's thread instead of copying them now.
    public var imageLease: ImageLease?
    public init(timestamp: Double, pose: Pose, intrinsics: Intrinsics) {
        self.timestamp = timestamp; self.pose = pose; self.intrinsics = intrinsics
    }
}

/// What the session did with a frame.
public struct SessionResult {
    public var captured = false
    public var pass: Int32 = 0
    public var frameID: Int64 = -1
    public var guidance = Guidance()
    public var coverage: Float = 0
    public var minutesLeft: Float = .infinity
    public var events: UInt32 = 0
    /// Captured without pixels: the relative path the caller must write.
    public var imagePath = ""
}

/// The per-frame orchestrator (`ck_session`): scheduler → streams → dataset → coverage → events.
/// Not thread-safe.
public final class Session {
    public let scheduler: Scheduler
    public private(set) var coverage: Coverage?
    /// The surface coverage map (issue 23): fused from every frame with depth, views from captures.
    public private(set) var surface: SurfaceMap?
    public let dataset: Dataset
    public let options: SessionOptions
    public private(set) var box: Box?
    /// Events for the caller (bounded: the oldest are dropped when it never pops them; every
    /// event is also in events.jsonl).
    private var queue = EventQueue()
    private var eventsThisFrame: UInt32 = 0
    private var firstTimestamp: Double?
    private var storageWarned = false
    private var finished = false

    public init(directory: String, options: SessionOptions, box: Box?) throws(CaptureKitError) {
        if options.streamDepth { try Dataset.requireStartTime(options.dataset, "options.dataset->start_time_unix", stream: "stream_depth is 1") }
        self.options = options
        scheduler = try Scheduler(options: options.scheduler)
        if let box { coverage = try Coverage(box: box, options: options.coverage) }
        coverage?.isOwnedBySession = true
        if let box {
            let m = try SurfaceMap(box: box)
            m.isOwnedBySession = true
            surface = m
        }
        dataset = try Dataset(create: directory, options: options.dataset)
        dataset.isOwnedBySession = true
        self.box = box
        if let box { try dataset.setBox(box) }
        log(.info, "session started in \(directory), scan \(dataset.scanID)")
    }

    /// Resumes the session of the dataset in `directory` after a crash (or a close): the dataset
    /// is reopened (`Dataset(open:)`: the journal replayed, the MultiScan streams cut after their
    /// last journaled frame and continued; its own journaled options apply, `options.dataset`
    /// gives only the writer's queue), the box is the current pass's, coverage is rebuilt from
    /// that pass's captured frames (their poses and intrinsics, in order; the events they raised
    /// are not raised again) and the scheduler from those captures and the poses of the last
    /// streamed frames (`Scheduler.restore`). So the next `process` captures, gates and counts as
    /// if the frames before the crash had come without a break. A caller-written image still
    /// pending at the crash is lost (it never reached the journal).
    /// - Throws: as `Dataset(open:)`; `unsupported` when `options.streamDepth` and the dataset's
    ///   streams cannot be continued (written before the stream journal: resume with streamDepth
    ///   false).
    public init(resume directory: String, options: SessionOptions) throws(CaptureKitError) {
        self.options = options
        scheduler = try Scheduler(options: options.scheduler)
        // The session's own checks run on the planned state, before the reopen repairs anything:
        // a refused resume leaves the folder as it was.
        let streamDepth = options.streamDepth
        dataset = try Dataset(open: directory, writeQueueBytes: options.dataset.writeQueueBytes) { (ds) throws(CaptureKitError) in
            if streamDepth, let why = ds.streamsRefusal { throw .unsupported("\(why); resume with stream_depth 0") }
            if streamDepth { try Dataset.requireStartTime(ds.options, "the dataset's start_time_unix", stream: "stream_depth is 1") }
            for f in ds.frames where f.pass == ds.pass {
                do throws(CaptureKitError) { _ = try Pose(f.pose, name: "journaled frame \(f.id)'s pose") } catch { throw .corrupt(error.message) }
            }
        }
        dataset.isOwnedBySession = true
        let pass = dataset.pass
        box = dataset.boxes.first { $0.pass == pass }?.box
        if let box {
            let c = try Coverage(box: box, options: options.coverage)
            c.isOwnedBySession = true
            coverage = c
            try makeSurface(box)  // starts empty: the depth of the frames before the crash is not replayed
        }
        var captures: [(t: Double, pose: Pose)] = []
        for f in dataset.frames where f.pass == pass {
            let pose: Pose
            do { pose = try Pose(f.pose, name: "journaled frame \(f.id)'s pose") } catch { throw .corrupt(error.message) }
            captures.append((f.timestamp, pose))
            if let c = coverage {
                _ = try c.addView(pose: pose, intrinsics: f.intrinsics, timestamp: f.timestamp)
                while c.nextEvent() != nil {}  // raised (and logged) before the crash
            }
        }
        var recent: [(t: Double, pose: Pose)] = []
        for r in try dataset.recentStreamedPoses(within: Double(max(options.scheduler.smoothingWindow, options.scheduler.driftTime))) {
            if let pose = try? Pose(r.pose) { recent.append((r.t, pose)) }
        }
        scheduler.restore(captures: captures, recent: recent)
        log(.info, "session resumed in \(directory), scan \(dataset.scanID): pass \(pass), \(captures.count) captures, \(dataset.streamedFrames) streamed frames")
    }

    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard let sink = options.log, level.rawValue >= options.logLevel.rawValue else { return }
        sink(level, message())
    }

    private func makeSurface(_ box: Box) throws(CaptureKitError) {
        let m = try SurfaceMap(box: box)
        m.isOwnedBySession = true
        surface = m
    }

    /// Sets or edits the box (coverage counts are kept; the surface map is re-expressed in the new
    /// box; the dataset's pass box is updated).
    public func setBox(_ box: Box) throws(CaptureKitError) {
        guard !finished else { throw .state("the session is finished; its box can no longer change") }
        if let m = surface { m.setBox(box) } else { try makeSurface(box) }
        if let c = coverage { c.setBox(box) } else {
            let c = try Coverage(box: box, options: options.coverage)
            c.isOwnedBySession = true
            coverage = c
        }
        self.box = box
        try dataset.setBox(box)
        log(.debug, "box set: centre \(box.center), size \(box.size)")
    }

    /// Removes the oldest queued event.
    public func nextEvent() -> GuidanceEvent? { queue.pop() }

    private func enqueue(_ e: GuidanceEvent) throws(CaptureKitError) {
        queue.push(e)
        eventsThisFrame &+= 1
        let record = EventRecord(e)
        try dataset.logEvent(record)
        log(e.code == .drift ? .error : (e.code.rawValue >= 100 ? .info : .warning), "\(e.timestamp): \(record.text)")
    }

    /// Starts a new capture pass with its own box (the object turned over, as Apple's Object
    /// Capture "flip"): a captured image the caller has written by now is committed to the current
    /// pass first; the dataset starts the next pass with `box`; coverage starts again for it (the
    /// same object, so a borrowed pointer to it stays valid); the scheduler starts over. Returns
    /// the new pass.
    public func beginPass(_ box: Box) throws(CaptureKitError) -> Int32 {
        guard !finished else { throw .state("the session is finished; no new pass") }
        try commitPendingImage()
        if pendingImage != nil { log(.warning, "the captured image \(pendingImage?.path ?? "") was never written; it is left out"); pendingImage = nil }
        let pass = try dataset.beginPass(box)
        if let c = coverage { c.reset(); c.setBox(box) } else {
            let c = try Coverage(box: box, options: options.coverage)
            c.isOwnedBySession = true
            coverage = c
        }
        if let m = surface { m.reset(); m.setBox(box) } else { try makeSurface(box) }
        self.box = box
        scheduler.reset()
        log(.info, "pass \(pass) started: box centre \(box.center), size \(box.size)")
        return pass
    }

    /// Processes one frame.
    public func process(_ frame: SessionFrame) throws(CaptureKitError) -> SessionResult {
        guard !finished else { throw .state("the session is finished") }
        // A failed dataset (a write failed) takes nothing more: no result may say captured.
        try dataset.checkFailure()
        eventsThisFrame = 0
        // The previous frame's caller-written image first: a capture in this frame would otherwise
        // replace it (and get the same image path, since the frame id has not advanced).
        try commitPendingImage()
        if let p = pendingImage {
            log(.warning, "the captured image \(p.path) was never written; that frame is left out")
            pendingImage = nil
        }
        var result = SessionResult()
        var depthMap: SampleMap? = nil
        if let d = frame.depth, let dk = frame.depthIntrinsics, let base = d.baseAddress {
            guard d.count >= Int(dk.width) * Int(dk.height) else {
                throw .invalidArgument("frame.depth holds \(d.count) values, fewer than its \(dk.width) x \(dk.height) intrinsics")
            }
            depthMap = SampleMap(base: UnsafeRawPointer(base), width: Int(dk.width), height: Int(dk.height),
                                 stride: Int(dk.width) * 4, format: .depthF32)
        }
        var sharpness = frame.sharpness
        if sharpness == nil, let px = frame.pixels, px.format == .gray8 {
            sharpness = try Sharpness.scoreCentre(luma: px.bytes, width: Int(frame.intrinsics.width), height: Int(frame.intrinsics.height), stride: px.stride)
        } else if sharpness == nil, let cam = frame.camera, cam.layout != .bgra8 {
            // NV12's Y plane is the luma the score wants.
            sharpness = try Sharpness.scoreCentre(luma: cam.luma, width: cam.width, height: cam.height, stride: cam.stride)
        }
        var luma = frame.meanLuma
        if luma == nil, let px = frame.pixels, px.format != .gray16 {
            luma = try Luma.mean(pixels: px.bytes, width: Int(frame.intrinsics.width), height: Int(frame.intrinsics.height),
                                 stride: px.stride, format: px.format)
        }
        if luma == nil, let cam = frame.camera {
            switch cam.layout {
            case .bgra8:
                luma = try Luma.mean(pixels: cam.luma, width: cam.width, height: cam.height, stride: cam.stride, format: .rgba8, bgr: true)
            case .nv12Full:
                luma = try Luma.mean(pixels: cam.luma, width: cam.width, height: cam.height, stride: cam.stride, format: .gray8)
            case .nv12Video:  // Y 16...235 → 0...1
                let y = try Luma.mean(pixels: cam.luma, width: cam.width, height: cam.height, stride: cam.stride, format: .gray8)
                luma = min(1, max(0, (y * 255 - 16) / 219))
            }
        }
        let g = try scheduler.update(SchedulerFrame(timestamp: frame.timestamp, pose: frame.pose, tracking: frame.tracking,
                                                    box: box, sharpness: sharpness, depth: depthMap,
                                                    depthPrincipalPoint: frame.depthIntrinsics.map { SIMD2($0.cx, $0.cy) }, intrinsics: frame.intrinsics,
                                                    trackingReason: frame.trackingReason, meanLuma: luma))
        result.guidance = g
        while let e = scheduler.nextEvent() { try enqueue(e) }
        if firstTimestamp == nil { firstTimestamp = frame.timestamp }

        if options.streamDepth, frame.depth != nil || frame.confidence != nil, let dk = frame.depthIntrinsics {
            // The camera-info line carries the colour camera's intrinsics (MultiScan's scripts
            // normalise them by the colour resolution); the streams have the depth map's size.
            let queued = try dataset.streamFrame(timestamp: frame.timestamp, pose: frame.pose, intrinsics: frame.intrinsics,
                                                 depth: frame.depth.flatMap { UnsafeRawPointer($0.baseAddress) },
                                                 confidence: frame.confidence.flatMap { UnsafeRawPointer($0.baseAddress) },
                                                 width: Int(dk.width), height: Int(dk.height), ifRoom: options.dropWhenQueueFull)
            if !queued { try enqueue(GuidanceEvent(code: .streamFrameDropped, timestamp: frame.timestamp, value: queuedMiB)) }
        }
        if let m = surface, let d = frame.depth, let dk = frame.depthIntrinsics {
            let conf = frame.confidence.flatMap { $0.count >= d.count ? $0 : nil }
            m.fuse(metres: d, confidence: conf, intrinsics: dk, pose: frame.pose)
        }
        if g.capture {
            var input = Dataset.FrameInput(timestamp: frame.timestamp, pose: frame.pose, intrinsics: frame.intrinsics)
            input.pixels = frame.pixels
            input.camera = frame.camera
            // A handed-over image is read by this capture's write only (the pending-image path
            // below has no pixels: its lease, if any, is released when this call returns).
            if frame.pixels != nil || frame.camera != nil { input.imageLease = frame.imageLease }
            input.sharpness = sharpness
            // Fixed now: a capture the caller writes is committed after later frames streamed.
            input.streamIndex = dataset.lastStreamedIndex(at: frame.timestamp)
            if let d = frame.depth, let dk = frame.depthIntrinsics { input.depth = (d, Int(dk.width), Int(dk.height)) }
            if frame.pixels == nil && frame.camera == nil {
                result.imagePath = try dataset.nextImagePath(extension: ".png")
                input.imagePath = result.imagePath
                // The caller writes the file after this call; register it once it exists (see
                // ck_session_process). The caller's buffers are borrowed for this call only, so
                // the depth is copied now: the frame is committed from the copy.
                let owned = input.depth.map { PendingImage.Depth(metres: Array($0.metres), width: $0.width, height: $0.height) }
                input.depth = nil
                pendingImage = PendingImage(input: input, path: result.imagePath, depth: owned)
            } else if let id = try dataset.addFrame(input, ifRoom: options.dropWhenQueueFull) {
                result.frameID = id
            } else {
                try enqueue(GuidanceEvent(code: .captureDropped, timestamp: frame.timestamp, value: queuedMiB))
                log(.warning, "capture at \(frame.timestamp) dropped: the write queue is full")
            }
            result.captured = result.frameID >= 0 || (frame.pixels == nil && frame.camera == nil)
            if result.captured, let c = coverage {
                _ = try c.addView(pose: frame.pose, intrinsics: frame.intrinsics, timestamp: frame.timestamp)
                while let e = c.nextEvent() { try enqueue(e) }
            }
            if result.captured, let m = surface {
                if let cam = frame.camera, m.fromDepth, cam.width == Int(frame.intrinsics.width), cam.height == Int(frame.intrinsics.height) {
                    // Camera pixels (NV12, BGRA) colour the surface as RGB: the splat dataset's
                    // initial point cloud takes its colours from the captures.
                    let rgb = cam.rgb()
                    rgb.withUnsafeBytes { b in
                        _ = m.addView(pose: frame.pose, intrinsics: frame.intrinsics, image: (b, cam.width * 3, 3), timestamp: frame.timestamp)
                    }
                } else {
                    let px = frame.pixels.flatMap { p in p.format == .gray16 ? nil : (p.bytes, p.stride, p.format.bytesPerPixel) }
                    m.addView(pose: frame.pose, intrinsics: frame.intrinsics, image: px, timestamp: frame.timestamp)
                }
                while let e = m.nextEvent() { try enqueue(e) }
            }
            if result.captured { log(.debug, "captured frame at \(frame.timestamp)") }
        }
        result.pass = dataset.pass
        result.coverage = coverage?.summary.completion ?? 0
        // Storage: free bytes ÷ the measured write rate.
        if let t0 = firstTimestamp, frame.timestamp - t0 >= 1, dataset.bytesWritten > 0 {
            let rate = Double(dataset.bytesWritten) / (frame.timestamp - t0)
            if let free = try? FileIO.freeBytes(near: "\(dataset.directory)/\(Dataset.journalName)") {
                result.minutesLeft = Float(Double(free) / rate / 60)
                if result.minutesLeft < options.storageWarningMinutes && !storageWarned {
                    storageWarned = true
                    try enqueue(GuidanceEvent(code: .storageLow, timestamp: frame.timestamp, value: result.minutesLeft))
                }
            }
        }
        result.events = eventsThisFrame
        return result
    }

    /// A captured frame whose image the caller writes: added once its file exists (the next
    /// process call, or finish). It owns a copy of the frame's depth (never the caller's buffer).
    struct PendingImage {
        struct Depth { var metres: [Float]; var width: Int; var height: Int }
        var input: Dataset.FrameInput
        var path: String
        var depth: Depth?
    }
    private var pendingImage: PendingImage?

    private func commitPendingImage() throws(CaptureKitError) {
        guard let p = pendingImage, FileIO.exists("\(dataset.directory)/\(p.path)") else { return }
        pendingImage = nil
        var input = p.input
        let id: Int64
        if let d = p.depth {
            id = try d.metres.withUnsafeBufferPointer { (b) throws(CaptureKitError) -> Int64 in
                input.depth = (b, d.width, d.height)
                return try dataset.addFrame(input)
            }
        } else {
            id = try dataset.addFrame(input)
        }
        // The deferred capture's id, which its own result could not give (UINT64_MAX there):
        // index = the id (ids stay far below 2^31: 68 years of a capture a second), timestamp =
        // the captured frame's.
        try enqueue(GuidanceEvent(code: .captureCommitted, index: Int32(clamping: id), timestamp: input.timestamp))
    }

    /// MiB waiting in the dataset's write queue (a dropped frame's event value).
    private var queuedMiB: Float { Float(dataset.writeQueuePendingBytes) / 1_048_576 }

    /// Commits a captured image the caller has written by now, and waits until every queued frame
    /// is written and journaled (durable).
    public func flush() throws(CaptureKitError) {
        guard !finished else { throw .state("the session is finished") }
        try dataset.checkFailure()
        try commitPendingImage()
        try dataset.flush()
    }

    /// Flushes and closes the dataset without finalising it (resumable with `Dataset(open:)`); a
    /// captured image the caller has written by now is added first. Reports the first failure.
    public func close() throws(CaptureKitError) {
        var first: CaptureKitError? = nil
        do { try commitPendingImage() } catch { first = error }
        do { try dataset.close() } catch { if first == nil { first = error } }
        if let first { throw first }
    }

    /// Finalises the dataset.
    public func finish(zipPath: String?) throws(CaptureKitError) {
        try commitPendingImage()
        if pendingImage != nil { log(.warning, "the last captured image was never written; it is left out"); pendingImage = nil }
        // A splat-ready dataset: the measured surface, coloured by the captures, is its initial
        // point cloud (sparse_pc.ply). Without depth (face cells) there is none to give.
        if let m = surface, m.fromDepth {
            try dataset.setSurfacePoints(m.points(imageColors: true))
        }
        try dataset.finalize(zipPath: zipPath)
        finished = true
        log(.info, "finished: \(dataset.frames.count) frames, \(dataset.streamedFrames) streamed")
    }
}

extension String {
    /// Drops a trailing NUL (StaticString texts carry one for C).
    public func replacingZeroTerminator() -> String {
        var s = self
        while s.hasSuffix("\0") { s.removeLast() }
        return s
    }
}
