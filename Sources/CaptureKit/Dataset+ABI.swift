import CCaptureKitAPI
import CaptureKitCore

// Header section ck_dataset.h: the dataset folder and the per-frame session.

extension ck_dataset_options {
    func converted() throws(CaptureKitError) -> DatasetOptions {
        guard reserved == 0 else { throw .invalidArgument("options.reserved must be 0") }
        var o = DatasetOptions()
        o.depthWidth = Int(depth_png_width); o.depthHeight = Int(depth_png_height)
        o.zlibLevel = zlib_level; o.pngLevel = png_level
        o.startTimeUnix = start_time_unix
        o.deviceID = try readString(device_id, "options.device_id", fallback: "capturekit")
        o.deviceName = try readString(device_name, "options.device_name", fallback: "")
        o.deviceType = try readString(device_type, "options.device_type", fallback: "")
        o.userName = try readString(user_name, "options.user_name", fallback: "")
        o.sceneDescription = try readString(scene_description, "options.scene_description", fallback: "")
        o.sceneType = try readString(scene_type, "options.scene_type", fallback: "")
        return o
    }
}

extension ck_dataset_options: GrowableStruct {
    static let firstReleaseSize = 80  // 0.1
    static var defaults: ck_dataset_options {
        ck_dataset_options(struct_size: UInt32(MemoryLayout<ck_dataset_options>.size), depth_png_width: 0,
                           depth_png_height: 0, zlib_level: 0, png_level: 0, reserved: 0, start_time_unix: 0, device_id: nil,
                           device_name: nil, device_type: nil, user_name: nil, scene_description: nil, scene_type: nil)
    }
}
extension ck_frame_desc: GrowableStruct {
    static let firstReleaseSize = 152  // 0.1
    static var defaults: ck_frame_desc {
        ck_frame_desc(struct_size: UInt32(MemoryLayout<ck_frame_desc>.size), image_format: 0, timestamp: 0, pose: ck_mat4(Matrix4.identity),
                      intrinsics: ck_intrinsics(), image_path: nil, pixels: nil, pixels_stride: 0, depth: nil, depth_width: 0,
                      depth_height: 0, sharpness: -1, reserved: 0)
    }
}
extension ck_session_frame: GrowableStruct {
    static let firstReleaseSize = 176  // 0.1
    static var defaults: ck_session_frame {
        ck_session_frame(struct_size: UInt32(MemoryLayout<ck_session_frame>.size), tracking: TrackingState.normal.rawValue, timestamp: 0,
                         pose: ck_mat4(Matrix4.identity), intrinsics: ck_intrinsics(), pixels: nil, image_format: 0, reserved: 0, pixels_stride: 0,
                         depth: nil, confidence: nil, depth_intrinsics: ck_intrinsics(), sharpness: -1, reserved2: 0)
    }
}
extension ck_session_options: GrowableStruct {
    static let firstReleaseSize = 64  // 0.2 (0.1's 272-byte layout embedded the nested options)
    static var defaults: ck_session_options { sessionOptions(.objectCapture) }
}

/// The session options `ck_session_options_init` fills in for a preset.
private func sessionOptions(_ p: SchedulerPreset) -> ck_session_options {
    ck_session_options(struct_size: UInt32(MemoryLayout<ck_session_options>.size), preset: p.rawValue,
                       scheduler: nil, coverage: nil, dataset: nil, storage_warning_minutes: 10, stream_depth: 1,
                       log: nil, log_user: nil, log_level: LogLevel.info.rawValue, reserved: 0)
}

@c @implementation public func ck_dataset_options_init(_ options_out: UnsafeMutablePointer<ck_dataset_options>?) -> ck_status {
    boundary("ck_dataset_options_init") { () throws(CaptureKitError) in
        try required(options_out, "options_out").pointee = .defaults
        return CK_OK
    }
}

@c @implementation public func ck_dataset_create(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?,
                                                  _ options: UnsafePointer<ck_dataset_options>?) -> ck_status {
    boundary("ck_dataset_create") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        let d = try readPath(dir, "dir")
        let o = try readOptions(options, "options", defaults: DatasetOptions()) { (c: ck_dataset_options) throws(CaptureKitError) in try c.converted() }
        out.pointee = handOut(try Dataset(create: d, options: o))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_open(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_open") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        out.pointee = handOut(try Dataset(open: try readPath(dir, "dir")))
        return CK_OK
    }
}

@c @implementation public func ck_frame_desc_init(_ desc_out: UnsafeMutablePointer<ck_frame_desc>?) -> ck_status {
    boundary("ck_frame_desc_init") { () throws(CaptureKitError) in
        try required(desc_out, "desc_out").pointee = .defaults
        return CK_OK
    }
}

@c @implementation public func ck_dataset_next_image_path(_ buf: UnsafeMutablePointer<CChar>?, _ buf_size: Int, _ needed_out: UnsafeMutablePointer<Int>?,
                                                           _ dataset: OpaquePointer?, _ extension_: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_next_image_path") { () throws(CaptureKitError) in
        let needed = try required(needed_out, "needed_out")
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let ext = try readString(extension_, "extension", fallback: ".png")
        let p = try ds.nextImagePath(extension: ext)
        let cap = try checkedCount(buf_size, stride: 1, "buf_size")
        needed.pointee = p.utf8.count + 1
        guard cap >= p.utf8.count + 1 else { throw .bufferTooSmall("buf_size \(cap) < \(p.utf8.count + 1) (in *needed_out)") }
        let b = try required(buf, "buf")
        copyCString(p, into: b)
        return CK_OK
    }
}

func copyCString(_ s: String, into b: UnsafeMutablePointer<CChar>) {
    var i = 0
    for byte in s.utf8 { b[i] = CChar(bitPattern: byte); i += 1 }
    b[i] = 0
}

/// A caller's image pixels: (bytes, stride, format) for width × height.
func readPixels(_ pixels: UnsafePointer<UInt8>?, _ format: Int32, _ stride: Int, _ k: Intrinsics, _ name: String) throws(CaptureKitError)
    -> (bytes: UnsafeRawBufferPointer, stride: Int, format: PNGFormat)? {
    if format == 0 { return nil }
    guard let f = PNGFormat(rawValue: format), f != .gray16 else { throw .invalidArgument("\(name).image_format \(format) must be CK_IMAGE_NONE, CK_PNG_GRAY8, CK_PNG_RGB8 or CK_PNG_RGBA8") }
    let span = try imageSpan(pixels.map { UnsafeRawPointer($0) }, "\(name).pixels", width: Int(k.width), height: Int(k.height),
                             bytesPerPixel: f.bytesPerPixel, stride: stride, strideName: "\(name).pixels_stride")
    return (span.bytes, span.stride, f)
}

@c @implementation public func ck_dataset_add_frame(_ dataset: OpaquePointer?, _ frame_id_out: UnsafeMutablePointer<UInt64>?,
                                                     _ desc: UnsafePointer<ck_frame_desc>?) -> ck_status {
    boundary("ck_dataset_add_frame") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let d = try readOptions(desc, "desc", defaults: ck_frame_desc.defaults) { (c: ck_frame_desc) in c }
        guard desc != nil else { throw .invalidArgument("desc is NULL") }
        guard d.reserved == 0 else { throw .invalidArgument("desc.reserved must be 0") }
        let pose = try Pose(d.pose.matrix, name: "desc.pose")
        let k = try d.intrinsics.validated("desc.intrinsics")
        var input = Dataset.FrameInput(timestamp: d.timestamp, pose: pose, intrinsics: k)
        input.pixels = try readPixels(d.pixels, d.image_format, d.pixels_stride, k, "desc")
        if input.pixels == nil, let p = d.image_path { input.imagePath = try readString(p, "desc.image_path", fallback: "") }
        if let depth = d.depth {
            let n = try readDimensions(d.depth_width, d.depth_height)
            input.depth = (UnsafeBufferPointer(start: depth, count: n), Int(d.depth_width), Int(d.depth_height))
        }
        if d.sharpness >= 0 { input.sharpness = d.sharpness } else if !d.sharpness.isFinite { throw .invalidArgument("desc.sharpness is not finite") }
        let id = try ds.addFrame(input)
        frame_id_out?.pointee = UInt64(id)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_remove_frame(_ dataset: OpaquePointer?, _ frame_id: UInt64) -> ck_status {
    boundary("ck_dataset_remove_frame") { () throws(CaptureKitError) in
        guard frame_id <= UInt64(Int64.max) else { throw .notFound("no frame \(frame_id)") }
        try object(dataset, "dataset", as: Dataset.self).removeFrame(Int64(frame_id))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_frame_count") { () throws(CaptureKitError) in
        let out = try required(count_out, "count_out")
        out.pointee = UInt64(try object(dataset, "dataset", as: Dataset.self).frames.count)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_set_box(_ dataset: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_dataset_set_box") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        try ds.setBox(try required(box, "box").pointee.validated(seat: true))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_begin_pass(_ dataset: OpaquePointer?, _ pass_out: UnsafeMutablePointer<UInt32>?,
                                                      _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_dataset_begin_pass") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let p = try ds.beginPass(try required(box, "box").pointee.validated(seat: true))
        pass_out?.pointee = UInt32(p)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_stream_frame(_ dataset: OpaquePointer?, _ timestamp: Double, _ pose: UnsafePointer<ck_mat4>?,
                                                        _ intrinsics: UnsafePointer<ck_intrinsics>?, _ depth: UnsafePointer<Float>?,
                                                        _ confidence: UnsafePointer<UInt8>?, _ width: UInt32, _ height: UInt32) -> ck_status {
    boundary("ck_dataset_stream_frame") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let p = try readPose(pose, "pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        _ = try readDimensions(width, height)
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite") }
        try ds.streamFrame(timestamp: timestamp, pose: p, intrinsics: k, depth: depth.map { UnsafeRawPointer($0) },
                           confidence: confidence.map { UnsafeRawPointer($0) }, width: Int(width), height: Int(height))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_log_event(_ dataset: OpaquePointer?, _ event: UnsafePointer<ck_event>?) -> ck_status {
    boundary("ck_dataset_log_event") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let e = try required(event, "event").pointee
        guard e.timestamp.isFinite, e.value.isFinite else { throw .invalidArgument("event.timestamp and event.value must be finite") }
        try ds.logEvent(EventRecord(code: e.code, index: e.index, timestamp: e.timestamp, value: e.value))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_finalize(_ dataset: OpaquePointer?, _ flags: UInt32, _ zip_path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_finalize") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        guard flags & ~CK_FINALIZE_ZIP == 0 else { throw .invalidArgument("flags has unknown bits") }
        var zip: String? = nil
        if flags & CK_FINALIZE_ZIP != 0 { zip = zip_path == nil ? "\(ds.directory).zip" : try readPath(zip_path, "zip_path") }
        try ds.finalize(zipPath: zip)
        return CK_OK
    }
}

/// The dataset of a handle the caller owns: a dataset borrowed from a session
/// (`ck_session_dataset`) is closed by `ck_session_free`, never by the caller.
private func ownedDataset(_ dataset: OpaquePointer, _ verb: String) throws(CaptureKitError) -> Dataset {
    let ds = try object(dataset, "dataset", as: Dataset.self)
    guard !ds.isOwnedBySession else {
        throw .state("dataset is borrowed from a session (ck_session_dataset) and cannot be \(verb) by the caller; ck_session_free closes it")
    }
    return ds
}

@c @implementation public func ck_dataset_cancel(_ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_cancel") { () throws(CaptureKitError) in
        guard let dataset else { return CK_OK }  // as every _close/_free: NULL does nothing
        let ds = try ownedDataset(dataset, "cancelled")
        defer { release(dataset, as: Dataset.self) }
        try ds.cancel()
        return CK_OK
    }
}

@c @implementation public func ck_dataset_close(_ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_close") { () throws(CaptureKitError) in
        guard let dataset else { return CK_OK }
        let ds = try ownedDataset(dataset, "closed")
        defer { release(dataset, as: Dataset.self) }
        try ds.close()
        return CK_OK
    }
}

// MARK: session

/// The session handle: the core session plus the host's C log callback.
final class SessionHandle {
    let session: Session
    init(_ s: Session) { session = s }
}

@c @implementation public func ck_session_options_init(_ options_out: UnsafeMutablePointer<ck_session_options>?, _ preset: Int32) -> ck_status {
    boundary("ck_session_options_init") { () throws(CaptureKitError) in
        let out = try required(options_out, "options_out")
        guard let p = SchedulerPreset(rawValue: preset) else { throw .invalidArgument("preset \(preset) is not a ck_preset") }
        out.pointee = sessionOptions(p)
        return CK_OK
    }
}

@c @implementation public func ck_session_frame_init(_ frame_out: UnsafeMutablePointer<ck_session_frame>?) -> ck_status {
    boundary("ck_session_frame_init") { () throws(CaptureKitError) in
        try required(frame_out, "frame_out").pointee = .defaults
        return CK_OK
    }
}

@c @implementation public func ck_session_create(_ session_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?,
                                                  _ options: UnsafePointer<ck_session_options>?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_session_create") { () throws(CaptureKitError) in
        let out = try required(session_out, "session_out")
        let d = try readPath(dir, "dir")
        let c = try readOptions(options, "options", defaults: ck_session_options.defaults) { (c: ck_session_options) in c }
        var o = SessionOptions()
        guard c.reserved == 0 else { throw .invalidArgument("options.reserved must be 0") }
        guard let preset = SchedulerPreset(rawValue: c.preset) else { throw .invalidArgument("options.preset \(c.preset) is not a ck_preset") }
        guard c.storage_warning_minutes.isFinite, c.storage_warning_minutes >= 0 else { throw .invalidArgument("options.storage_warning_minutes must be finite and >= 0") }
        guard (0...3).contains(c.log_level), c.stream_depth == 0 || c.stream_depth == 1 else { throw .invalidArgument("options.log_level or stream_depth out of range") }
        o.scheduler = try readOptions(c.scheduler, "options.scheduler", defaults: SchedulerOptions(preset: preset)) { (x: ck_scheduler_options) in x.options }
        o.coverage = try readOptions(c.coverage, "options.coverage", defaults: CoverageOptions()) { (x: ck_coverage_options) in x.options }
        o.dataset = try readOptions(c.dataset, "options.dataset", defaults: DatasetOptions()) { (x: ck_dataset_options) throws(CaptureKitError) in try x.converted() }
        o.storageWarningMinutes = c.storage_warning_minutes
        o.streamDepth = c.stream_depth == 1
        o.logLevel = LogLevel(rawValue: c.log_level) ?? .info
        if let fn = c.log {
            let user = c.log_user
            o.log = { level, message in message.withCString { fn(user, level.rawValue, $0) } }
        }
        let b = try box.map { (p) throws(CaptureKitError) in try p.pointee.validated(seat: true) }
        out.pointee = handOut(SessionHandle(try Session(directory: d, options: o, box: b)))
        return CK_OK
    }
}

@c @implementation public func ck_session_set_box(_ session: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_session_set_box") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        try s.setBox(try required(box, "box").pointee.validated(seat: true))
        return CK_OK
    }
}

@c @implementation public func ck_session_process(_ session: OpaquePointer?, _ result_out: UnsafeMutablePointer<ck_session_result>?,
                                                   _ frame: UnsafePointer<ck_session_frame>?) -> ck_status {
    boundary("ck_session_process") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        let out = try required(result_out, "result_out")
        guard frame != nil else { throw .invalidArgument("frame is NULL") }
        let f = try readOptions(frame, "frame", defaults: ck_session_frame.defaults) { (c: ck_session_frame) in c }
        guard f.reserved == 0, f.reserved2 == 0 else { throw .invalidArgument("frame.reserved fields must be 0") }
        guard let tracking = TrackingState(rawValue: f.tracking) else { throw .invalidArgument("frame.tracking \(f.tracking) is not a ck_tracking_state") }
        let pose = try Pose(f.pose.matrix, name: "frame.pose")
        let k = try f.intrinsics.validated("frame.intrinsics")
        var input = SessionFrame(timestamp: f.timestamp, pose: pose, intrinsics: k)
        input.tracking = tracking
        input.pixels = try readPixels(f.pixels, f.image_format, f.pixels_stride, k, "frame")
        if f.depth != nil || f.confidence != nil {
            let dk = try f.depth_intrinsics.validated("frame.depth_intrinsics")
            let n = Int(dk.width) * Int(dk.height)
            input.depthIntrinsics = dk
            if let d = f.depth { input.depth = UnsafeBufferPointer(start: d, count: n) }
            if let c = f.confidence { input.confidence = UnsafeBufferPointer(start: c, count: n) }
        }
        if f.sharpness >= 0 { input.sharpness = f.sharpness } else if !f.sharpness.isFinite { throw .invalidArgument("frame.sharpness is not finite") }
        let r = try s.process(input)
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

@c @implementation public func ck_session_next_event(_ session: OpaquePointer?, _ event_out: UnsafeMutablePointer<ck_event>?) -> ck_status {
    boundary("ck_session_next_event") { () throws(CaptureKitError) in
        let s = try object(session, "session", as: SessionHandle.self).session
        let out = try required(event_out, "event_out")
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

@c @implementation public func ck_session_free(_ session: OpaquePointer?) {
    release(session, as: SessionHandle.self)
}

@c @implementation public func ck_bounding_box_read(_ box_out: UnsafeMutablePointer<ck_box>?, _ path: UnsafePointer<CChar>?, _ pass: UInt32) -> ck_status {
    boundary("ck_bounding_box_read") { () throws(CaptureKitError) in
        let out = try required(box_out, "box_out")
        let p = try readPath(path, "path")
        guard let b = try BoundingBoxManifest.read(from: p).box(forPass: pass) else { throw .notFound("\(p) has no pass \(pass)") }
        out.pointee = ck_box(b)
        return CK_OK
    }
}
