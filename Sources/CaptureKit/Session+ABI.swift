import CCaptureKitAPI
import CaptureKitCore

// Header section ck_dataset.h: the per-frame capture session (ck_session_*).

extension ck_session_frame: GrowableStruct {
    static let firstReleaseSize = 232  // 0.2 (0.1's 176-byte layout had pixels and float depth pointers)
    static var defaults: ck_session_frame {
        ck_session_frame(struct_size: UInt32(MemoryLayout<ck_session_frame>.size), tracking: TrackingState.normal.rawValue, timestamp: 0,
                         pose: ck_mat4(Matrix4.identity), intrinsics: ck_intrinsics(), image: ck_image(), depth: ck_depth_map(),
                         confidence: ck_depth_map(), depth_intrinsics: ck_intrinsics(), sharpness: -1, reserved: 0,
                         tracking_reason: TrackingReason.none.rawValue, mean_luma: -1,
                         image_chroma: nil, image_chroma_stride: 0, image_release: nil, image_release_user: nil)
    }
}

/// The image lease of a ck_session_frame that hands its image over (`image_release` set and
/// covered by struct_size), read before anything else so that every later path, errors included,
/// releases it exactly once (the lease's last reference). Nil: the image is lent.
private func imageLease(_ frame: UnsafePointer<ck_session_frame>?) -> ImageLease? {
    guard let frame else { return nil }
    let declared = Int(UnsafeRawPointer(frame).load(as: UInt32.self))
    let end = MemoryLayout<ck_session_frame>.offset(of: \.image_release_user).map { $0 + MemoryLayout<UnsafeMutableRawPointer?>.size } ?? Int.max
    guard declared >= end, declared <= 4096, let release = frame.pointee.image_release else { return nil }
    let user = frame.pointee.image_release_user
    return ImageLease { release(user) }
}
extension ck_session_options: GrowableStruct {
    static let firstReleaseSize = 64  // 0.2 (0.1's 272-byte layout embedded the nested options)
    static var defaults: ck_session_options { sessionOptions(.objectCapture) }
}

/// The session options `ck_session_options_init` fills in for a preset.
private func sessionOptions(_ p: SchedulerPreset) -> ck_session_options {
    ck_session_options(struct_size: UInt32(MemoryLayout<ck_session_options>.size), preset: p.rawValue,
                       scheduler: nil, coverage: nil, dataset: nil, storage_warning_minutes: 10, stream_depth: 1,
                       log: nil, log_user: nil, log_level: LogLevel.info.rawValue, reserved: 0,
                       queue_full: Int32(CK_QUEUE_FULL_DROP.rawValue), reserved2: 0)
}

// MARK: session

/// The session handle: the core session plus the host's C log callback.
final class SessionHandle {
    let session: Session
    init(_ s: Session) { session = s }
}

@c @implementation public func ck_session_options_init_sized(_ options_out: UnsafeMutablePointer<ck_session_options>?, _ struct_size: Int, _ preset: Int32) -> ck_status {
    boundary("ck_session_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, sessionOptions(try presetArgument(preset)))
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_session_options_init(_ options_out: UnsafeMutablePointer<ck_session_options>?, _ preset: Int32) -> ck_status {
    boundary("ck_session_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_session_options.firstReleaseSize, sessionOptions(try presetArgument(preset)))
        return CK_OK
    }
}

@c @implementation public func ck_session_frame_init_sized(_ frame_out: UnsafeMutablePointer<ck_session_frame>?, _ struct_size: Int) -> ck_status {
    boundary("ck_session_frame_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(frame_out, "frame_out", size: struct_size, ck_session_frame.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_session_frame_init(_ frame_out: UnsafeMutablePointer<ck_session_frame>?) -> ck_status {
    boundary("ck_session_frame_init") { () throws(CaptureKitError) in
        try fillGrowable(frame_out, "frame_out", size: ck_session_frame.firstReleaseSize, ck_session_frame.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_session_create(_ session_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?,
                                                  _ options: UnsafePointer<ck_session_options>?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_session_create") { () throws(CaptureKitError) in
        let out = try required(session_out, "session_out")
        let d = try readPath(dir, "dir")
        let o = try readSessionOptions(options)
        let b = try box.map { (p) throws(CaptureKitError) in try p.pointee.validated(seat: true) }
        out.pointee = handOut(SessionHandle(try Session(directory: d, options: o, box: b)))
        return CK_OK
    }
}

@c @implementation public func ck_session_resume(_ session_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?,
                                                  _ options: UnsafePointer<ck_session_options>?) -> ck_status {
    boundary("ck_session_resume") { () throws(CaptureKitError) in
        let out = try required(session_out, "session_out")
        let d = try readPath(dir, "dir")
        let o = try readSessionOptions(options)
        out.pointee = handOut(SessionHandle(try Session(resume: d, options: o)))
        return CK_OK
    }
}

/// The core options of a `ck_session_options` (NULL = the defaults), every field checked.
private func readSessionOptions(_ options: UnsafePointer<ck_session_options>?) throws(CaptureKitError) -> SessionOptions {
    let c = try readOptions(options, "options", defaults: ck_session_options.defaults) { (c: ck_session_options) in c }
    var o = SessionOptions()
    guard c.reserved == 0, c.reserved2 == 0 else { throw .invalidArgument("options.reserved and reserved2 must be 0") }
    switch c.queue_full {
    case Int32(CK_QUEUE_FULL_DROP.rawValue): o.dropWhenQueueFull = true
    case Int32(CK_QUEUE_FULL_WAIT.rawValue): o.dropWhenQueueFull = false
    default: throw .invalidArgument("options.queue_full \(c.queue_full) is not a ck_queue_full")
    }
    guard let preset = SchedulerPreset(rawValue: c.preset) else { throw .invalidArgument("options.preset \(c.preset) is not a ck_preset") }
    guard c.storage_warning_minutes.isFinite, c.storage_warning_minutes >= 0 else { throw .invalidArgument("options.storage_warning_minutes must be finite and >= 0") }
    guard (0...3).contains(c.log_level), c.stream_depth == 0 || c.stream_depth == 1 else { throw .invalidArgument("options.log_level or stream_depth out of range") }
    o.scheduler = try readOptions(c.scheduler, "options.scheduler", defaults: SchedulerOptions(preset: preset)) { (x: ck_scheduler_options) in x.options }
    o.coverage = try readOptions(c.coverage, "options.coverage", defaults: CoverageOptions()) { (x: ck_coverage_options) in x.options }
    o.dataset = try readOptions(c.dataset, "options.dataset", defaults: DatasetOptions.cDefaults) { (x: ck_dataset_options) throws(CaptureKitError) in try x.converted() }
    o.storageWarningMinutes = c.storage_warning_minutes
    o.streamDepth = c.stream_depth == 1
    o.logLevel = LogLevel(rawValue: c.log_level) ?? .info
    if let fn = c.log {
        let user = c.log_user
        o.log = { level, message in message.withCString { fn(user, level.rawValue, $0) } }
    }
    return o
}

@c @implementation public func ck_session_set_box(_ session: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_session_set_box") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        try s.setBox(try required(box, "box").pointee.validated(seat: true))
        return CK_OK
    }
}

@c @implementation public func ck_session_begin_pass(_ pass_out: UnsafeMutablePointer<UInt32>?, _ session: OpaquePointer?,
                                                      _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_session_begin_pass") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        let pass = try s.beginPass(try required(box, "box").pointee.validated(seat: true))
        pass_out?.pointee = UInt32(clamping: pass)
        return CK_OK
    }
}

@c @implementation public func ck_session_process(_ result_out: UnsafeMutablePointer<ck_session_result>?, _ session: OpaquePointer?,
                                                   _ frame: UnsafePointer<ck_session_frame>?) -> ck_status {
    let lease = imageLease(frame)  // released when the last reference goes (see the header)
    return boundary("ck_session_process") { () throws(CaptureKitError) in
        let out = try required(result_out, "result_out")
        let s = try object(session, "session", as: SessionHandle.self).session
        guard frame != nil else { throw .invalidArgument("frame is NULL") }
        let f = try readOptions(frame, "frame", defaults: ck_session_frame.defaults) { (c: ck_session_frame) in c }
        guard f.reserved == 0 else { throw .invalidArgument("frame.reserved must be 0") }
        guard let tracking = TrackingState(rawValue: f.tracking) else { throw .invalidArgument("frame.tracking \(f.tracking) is not a ck_tracking") }
        let pose = try Pose(f.pose.matrix, name: "frame.pose")
        let k = try f.intrinsics.validated("frame.intrinsics")
        var input = SessionFrame(timestamp: f.timestamp, pose: pose, intrinsics: k)
        input.tracking = tracking
        input.imageLease = lease
        input.camera = try readCameraImage(f.image, chroma: f.image_chroma, chromaStride: f.image_chroma_stride, k, "frame.image",
                                           chromaName: "frame.image_chroma")
        if input.camera == nil { input.pixels = try readFrameImage(f.image, k, "frame.image") }
        if f.sharpness >= 0 { input.sharpness = f.sharpness } else if !f.sharpness.isFinite { throw .invalidArgument("frame.sharpness is not finite") }
        input.trackingReason = try trackingReason(f.tracking_reason, "frame.tracking_reason")
        input.meanLuma = try meanLuma(f.mean_luma, "frame.mean_luma")
        let depth = try readDepthMap(f.depth, "frame.depth", allowed: depthFormats)
        let confidence = try readDepthMap(f.confidence, "frame.confidence", allowed: [.u8])
        let r: SessionResult
        if let size = depth ?? confidence {
            let dk = f.depth_intrinsics
            if dk.isZero {
                input.depthIntrinsics = try k.scaled(width: UInt32(size.width), height: UInt32(size.height))
            } else {
                let v = try dk.validated("frame.depth_intrinsics")
                guard Int(v.width) == size.width, Int(v.height) == size.height else {
                    throw .invalidArgument("frame.depth_intrinsics is \(v.width)x\(v.height) but the depth map is \(size.width)x\(size.height)")
                }
                input.depthIntrinsics = v
            }
            r = try withStreamMaps(depth, confidence) { (dp, cp) throws(CaptureKitError) -> SessionResult in
                let n = size.width * size.height
                if let dp { input.depth = UnsafeBufferPointer(start: dp.assumingMemoryBound(to: Float.self), count: n) }
                if let cp { input.confidence = UnsafeBufferPointer(start: cp.assumingMemoryBound(to: UInt8.self), count: n) }
                return try s.process(input)
            }
        } else {
            r = try s.process(input)
        }
        var c = ck_session_result()
        c.captured = r.captured ? 1 : 0
        c.pass = UInt32(r.pass)
        c.frame_id = r.frameID >= 0 ? UInt64(r.frameID) : UInt64.max
        c.guidance = ck_guidance(r.guidance)
        c.coverage = r.coverage
        c.minutes_left = r.minutesLeft
        c.events = r.events
        withUnsafeMutableBytes(of: &c.image_path) { raw in
            if let b = raw.baseAddress?.assumingMemoryBound(to: CChar.self), r.imagePath.utf8.count < raw.count {
                copyCString(r.imagePath, into: b)
            }
        }
        out.pointee = c
        return CK_OK
    }
}

@c @implementation public func ck_session_flush(_ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_flush") { () throws(CaptureKitError) in
        try object(session, "session", as: SessionHandle.self).session.flush()
        return CK_OK
    }
}

@c @implementation public func ck_session_next_event(_ event_out: UnsafeMutablePointer<ck_event>?, _ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_next_event") { () throws(CaptureKitError) in
        let out = try required(event_out, "event_out")
        let s = try object(session, "session", as: SessionHandle.self).session
        guard let e = s.nextEvent() else { return CK_END }
        out.pointee = ck_event(e)
        return CK_OK
    }
}

@c @implementation public func ck_session_coverage(_ coverage_out: UnsafeMutablePointer<OpaquePointer?>?, _ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_coverage") { () throws(CaptureKitError) in
        let out = try required(coverage_out, "coverage_out")
        let s = try object(session, "session", as: SessionHandle.self).session
        guard let c = s.coverage else { throw .state("the session has no box yet, so no coverage") }
        out.pointee = OpaquePointer(Unmanaged.passUnretained(c).toOpaque())
        return CK_OK
    }
}

@c @implementation public func ck_session_dataset(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_dataset") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        let s = try object(session, "session", as: SessionHandle.self).session
        out.pointee = OpaquePointer(Unmanaged.passUnretained(s.dataset).toOpaque())
        return CK_OK
    }
}

@c @implementation public func ck_session_finish(_ session: OpaquePointer?, _ flags: UInt32, _ zip_path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_session_finish") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        guard flags & ~CK_FINALIZE_ZIP == 0 else { throw .invalidArgument("flags has unknown bits") }
        var zip: String? = nil
        if flags & CK_FINALIZE_ZIP != 0 { zip = zip_path == nil ? "\(s.dataset.directory).zip" : try readPath(zip_path, "zip_path") }
        try s.finish(zipPath: zip)
        return CK_OK
    }
}

@c @implementation public func ck_session_close(_ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_close") { () throws(CaptureKitError) in
        guard let session else { return CK_OK }
        defer { release(session, as: SessionHandle.self) }  // freed even on error
        try object(session, "session", as: SessionHandle.self).session.close()
        return CK_OK
    }
}
