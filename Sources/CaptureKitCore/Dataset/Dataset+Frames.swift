import Glibc

// Frames, boxes and events: adding, writing and removing frames, passes and boxes, events.jsonl.

extension Dataset {
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
        public var pixels: (bytes: UnsafeRawBufferPointer, stride: Int, format: ImageFormat)?
        /// Camera-native pixels (NV12, BGRA) instead of `pixels`: converted to RGB by the writer.
        public var camera: CameraPixels?
        public var depth: (metres: UnsafeBufferPointer<Float>, width: Int, height: Int)?
        public var sharpness: Float?
        /// The frame's index in the MultiScan streams; nil = the last streamed frame when it has
        /// this frame's timestamp (a frame streamed, then captured), else none.
        public var streamIndex: Int64?
        /// Set when the caller handed `pixels` / `camera` over: they are read in place (not
        /// copied) until the writer has encoded them, then the lease is released.
        public var imageLease: ImageLease?
        public init(timestamp: Double, pose: Pose, intrinsics: Intrinsics) {
            self.timestamp = timestamp; self.pose = pose; self.intrinsics = intrinsics
        }
    }

    /// A frame's buffers owned by the dataset while it waits for the background writer (the
    /// caller's are borrowed for the call only), or, for an image handed over with a lease, the
    /// caller's image itself (read in place; the lease keeps it until the writer releases it).
    struct OwnedFrame {
        var pixels: (bytes: [UInt8], stride: Int, format: ImageFormat)?
        var depth: (metres: [Float], width: Int, height: Int)?
        var camera: OwnedCameraPixels?
        /// The handed-over image (`input.imageLease` set): the caller's pixels, not copied.
        var leased: (pixels: (bytes: UnsafeRawBufferPointer, stride: Int, format: ImageFormat)?, camera: CameraPixels?, lease: ImageLease)?

        init(_ input: FrameInput, pool: BufferPool) {
            if let lease = input.imageLease {
                leased = (input.pixels, input.camera, lease)
                leasedBytes = OwnedFrame.bytes(of: input) - (input.depth?.metres.count ?? 0) * 4
            } else {
                camera = input.camera?.copied(into: pool)
                if let px = input.pixels {
                    let row = Int(input.intrinsics.width) * px.format.bytesPerPixel, h = Int(input.intrinsics.height)
                    pixels = (pool.packed(px.bytes, stride: px.stride, row: row, rows: h), row, px.format)
                }
            }
            if let d = input.depth { depth = (Array(d.metres), d.width, d.height) }
        }

        /// Bytes the queue counts for this frame (a handed-over image counts as if copied: the
        /// caller's buffer stays pinned just as long).
        var bytes: Int { (pixels?.bytes.count ?? 0) + (depth?.metres.count ?? 0) * 4 + (camera?.bytes ?? 0) + leasedBytes }
        private var leasedBytes = 0

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
            i.pixels = nil; i.depth = nil; i.camera = nil; i.imageLease = nil
            if let l = leased {
                i.pixels = l.pixels; i.camera = l.camera; i.imageLease = l.lease
                return try withDepth(&i, body)
            }
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
                    // Released here, on the writer's thread (the caller may still hold the job
                    // for a moment: its last reference must not decide the thread).
                    owned.leased?.lease.release()
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
    func writeImage(_ rel: String, _ bytes: UnsafeRawBufferPointer, _ w: Int, _ h: Int, _ stride: Int,
                            _ format: ImageFormat) throws(CaptureKitError) {
        switch options.imageEncoding {
        case .png: try PNG.write(path(rel), bytes, width: w, height: h, stride: stride, format: format, level: options.pngLevel, overwrite: false)
        case .jpeg: try JPEG.write(path(rel), bytes, width: w, height: h, stride: stride, format: format, quality: options.jpegQuality, overwrite: false)
        }
    }

    /// Writes a frame's files, journals it and adds it to `frames` (on the writer's thread, or the
    /// caller's without one). On error nothing of it stays: its files are removed and the journal
    /// line cut back.
    func writeFrame(_ f: DatasetFrame, _ input: FrameInput, _ depthSize: (Int, Int)?, fromQueue: Bool = false) throws(CaptureKitError) {
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
            if !options.downscales.isEmpty, let (src, format) = rgb.map({ ($0, ImageFormat.rgb8) })
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
            // The caller's handed-over image is read for the last time above: give it back now.
            input.imageLease?.release()
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
    func recordBox(_ op: String, _ box: Box, pass p: Int32) throws(CaptureKitError) {
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

    func writeBoundingBox() throws(CaptureKitError) {
        let sorted = boxes.sorted { $0.pass < $1.pass }
        guard let first = sorted.first else { return }
        let m = BoundingBoxManifest(box: first.box, passes: sorted.count > 1 ? sorted : [])
        try m.write(to: path("boundingbox.json"), overwrite: true)
        noteCreated("boundingbox.json")
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
