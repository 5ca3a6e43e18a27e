import CCaptureKitAPI
import CaptureKitCore

// Header section "Guidance" (include/capturekit/ck_guidance.h): scheduler, coverage, events, sharpness.

// MARK: Handles and conversions

/// Prefixes a core validation message with the C argument's name.
private func named<T>(_ name: String, _ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
    do { return try body() } catch { throw CaptureKitError(error.status, "\(name).\(error.message)") }
}

extension ck_event {
    init(_ e: GuidanceEvent) {
        self.init(code: e.code.rawValue, index: e.index, timestamp: e.timestamp, value: e.value, reserved: 0,
                  text: staticCString(e.code.text(index: e.index)))
    }
}

extension ck_scheduler_options {
    init(_ o: SchedulerOptions) {
        self.init(struct_size: UInt32(MemoryLayout<ck_scheduler_options>.size), smoothing_window: o.smoothingWindow,
                  speed_slow: o.speedSlow, speed_medium: o.speedMedium, speed_fast: o.speedFast,
                  interval_slow: o.intervalSlow, interval_medium: o.intervalMedium, interval_fast: o.intervalFast,
                  first_capture_delay: o.firstCaptureDelay, max_angular_speed_deg: o.maxAngularSpeedDeg,
                  pitch_max_deg: o.pitchMaxDeg, pitch_min_deg: o.pitchMinDeg, pitch_delay: o.pitchDelay,
                  drift_distance: o.driftDistance, drift_time: o.driftTime, box_view_angle_deg: o.boxViewAngleDeg,
                  redundant_distance: o.redundantDistance, redundant_angle_deg: o.redundantAngleDeg,
                  min_sharpness: o.minSharpness, depth_min: o.depthMin, depth_max: o.depthMax,
                  depth_center_fraction: o.depthCenterFraction, prompt_delay: o.promptDelay, prompt_repeat: o.promptRepeat,
                  sideways_ratio: o.sidewaysRatio, sideways_min_speed: o.sidewaysMinSpeed, blocking_flags: o.blockingFlags,
                  prompt_window: o.promptWindow, min_box_in_frame: o.minBoxInFrame, min_luma: o.minLuma)
    }

    var options: SchedulerOptions {
        var o = SchedulerOptions()
        o.smoothingWindow = smoothing_window
        o.speedSlow = speed_slow; o.speedMedium = speed_medium; o.speedFast = speed_fast
        o.intervalSlow = interval_slow; o.intervalMedium = interval_medium; o.intervalFast = interval_fast
        o.firstCaptureDelay = first_capture_delay
        o.maxAngularSpeedDeg = max_angular_speed_deg
        o.pitchMaxDeg = pitch_max_deg; o.pitchMinDeg = pitch_min_deg; o.pitchDelay = pitch_delay
        o.driftDistance = drift_distance; o.driftTime = drift_time
        o.boxViewAngleDeg = box_view_angle_deg
        o.redundantDistance = redundant_distance; o.redundantAngleDeg = redundant_angle_deg
        o.minSharpness = min_sharpness
        o.depthMin = depth_min; o.depthMax = depth_max; o.depthCenterFraction = depth_center_fraction
        o.promptDelay = prompt_delay; o.promptRepeat = prompt_repeat
        o.sidewaysRatio = sideways_ratio; o.sidewaysMinSpeed = sideways_min_speed
        o.blockingFlags = blocking_flags
        o.promptWindow = prompt_window
        o.minBoxInFrame = min_box_in_frame
        o.minLuma = min_luma
        return o
    }
}

extension ck_coverage_options {
    init(_ o: CoverageOptions) {
        self.init(struct_size: UInt32(MemoryLayout<ck_coverage_options>.size), goal: o.goal, face_mask: o.faceMask,
                  cells_per_side: o.cellsPerSide, grid_width: o.gridWidth, grid_height: o.gridHeight,
                  azimuth_bins: o.azimuthBins, elevation_rings: o.elevationRings,
                  elevation_min_deg: o.elevationMinDeg, elevation_max_deg: o.elevationMaxDeg,
                  count_inside_views: o.countInsideViews ? 1 : 0)
    }

    var options: CoverageOptions {
        var o = CoverageOptions()
        o.goal = goal; o.faceMask = face_mask; o.cellsPerSide = cells_per_side
        o.gridWidth = grid_width; o.gridHeight = grid_height
        o.azimuthBins = azimuth_bins; o.elevationRings = elevation_rings
        o.elevationMinDeg = elevation_min_deg; o.elevationMaxDeg = elevation_max_deg
        o.countInsideViews = count_inside_views != 0
        return o
    }
}

/// The default ck_scheduler_frame (CK_SCHEDULER_FRAME_INIT).
extension ck_scheduler_frame: GrowableStruct {
    static let firstReleaseSize = 152  // 0.2 (0.1's 120-byte frame had a depth pointer and stride)
    static var defaults: ck_scheduler_frame {
        ck_scheduler_frame(struct_size: UInt32(MemoryLayout<ck_scheduler_frame>.size), tracking: TrackingState.normal.rawValue,
                           timestamp: 0, pose: ck_mat4(Matrix4.identity), box: nil, sharpness: -1, reserved: 0,
                           depth: ck_depth_map(), depth_intrinsics: ck_intrinsics(),
                           intrinsics: ck_intrinsics(), tracking_reason: TrackingReason.none.rawValue, mean_luma: -1)
    }
}
extension ck_scheduler_options: GrowableStruct {
    static let firstReleaseSize = 108  // 0.1
    static var defaults: ck_scheduler_options { ck_scheduler_options(SchedulerOptions()) }
}
extension ck_coverage_options: GrowableStruct {
    static let firstReleaseSize = 40  // 0.1
    static var defaults: ck_coverage_options { ck_coverage_options(CoverageOptions()) }
}

/// The principal point of a depth map from its intrinsics: all zero means the map's centre;
/// otherwise the intrinsics must be valid and of the map's size.
func depthPrincipalPoint(_ k: ck_intrinsics, of map: SampleMap, _ name: String) throws(CaptureKitError) -> (cx: Float, cy: Float) {
    if k.isZero {
        return (Float(map.width) / 2, Float(map.height) / 2)
    }
    let v = try k.validated(name)
    guard v.width == map.width, v.height == map.height else {
        throw .invalidArgument("\(name) is \(v.width)x\(v.height) but the depth map is \(map.width)x\(map.height)")
    }
    return (v.cx, v.cy)
}

/// A caller's ck_tracking_reason. - Throws: `invalidArgument` naming `name` for other values.
func trackingReason(_ value: Int32, _ name: String) throws(CaptureKitError) -> TrackingReason {
    guard let r = TrackingReason(rawValue: value) else {
        throw .invalidArgument("\(name) \(value) is not a ck_tracking_reason (0 ... 4)")
    }
    return r
}

/// A caller's mean_luma: nil when < 0 (not measured), else within [0, 1].
/// - Throws: `invalidArgument` naming `name` for NaN, ±inf or a value above 1.
func meanLuma(_ value: Float, _ name: String) throws(CaptureKitError) -> Float? {
    guard value.isFinite else { throw .invalidArgument("\(name) is not finite (\(value)); pass -1 when not measured") }
    guard value <= 1 else { throw .invalidArgument("\(name) \(value) is above 1 (mean luma is 0 ... 1)") }
    return value < 0 ? nil : value
}

/// Validates a caller's frame into the core's and runs `body` with it (its depth map is borrowed,
/// or converted to float metres, for the duration of the call only).
private func withFrame<R>(_ f: ck_scheduler_frame, _ body: (SchedulerFrame) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
    guard let tracking = TrackingState(rawValue: f.tracking) else {
        throw .invalidArgument("frame.tracking \(f.tracking) is not a ck_tracking (0, 1 or 2)")
    }
    guard f.timestamp.isFinite, abs(f.timestamp) <= 1e12 else {
        throw .invalidArgument("frame.timestamp is not finite or beyond ±1e12 s (\(f.timestamp))")
    }
    let p = try Pose(f.pose.matrix, name: "frame.pose")
    let box = try f.box.map { (b) throws(CaptureKitError) in try b.pointee.validated("frame.box", seat: false) }
    guard f.sharpness.isFinite else { throw .invalidArgument("frame.sharpness is not finite (\(f.sharpness)); pass -1 when not measured") }
    guard f.reserved == 0 else { throw .invalidArgument("frame.reserved must be 0 (got \(f.reserved))") }
    let reason = try trackingReason(f.tracking_reason, "frame.tracking_reason")
    let luma = try meanLuma(f.mean_luma, "frame.mean_luma")
    let k: Intrinsics? = f.intrinsics.isZero ? nil : try f.intrinsics.validated("frame.intrinsics")
    let frame = SchedulerFrame(timestamp: f.timestamp, pose: p, tracking: tracking, box: box,
                               sharpness: f.sharpness < 0 ? nil : f.sharpness, depth: nil, intrinsics: k,
                               trackingReason: reason, meanLuma: luma)
    guard let map = try readDepthMap(f.depth, "frame.depth", allowed: depthFormats,
                                     maxDimension: Int(Geometry.maxImageDimension)) else {
        return try body(frame)
    }
    let (cx, cy) = try depthPrincipalPoint(f.depth_intrinsics, of: map, "frame.depth_intrinsics")
    var withDepth = frame
    withDepth.depth = map
    withDepth.depthPrincipalPoint = SIMD2(cx, cy)
    return try body(withDepth)
}

extension ck_guidance {
    init(_ g: Guidance) {
        self.init(capture: g.capture ? 1 : 0, band: g.band.rawValue, flags: g.flags, captures: g.captures, speed: g.speed,
                  angular_speed: g.angularSpeed, pitch: g.pitch, interval: g.interval, next_capture_in: g.nextCaptureIn,
                  median_depth: g.medianDepth, blocked: g.blocked, reserved: 0)
    }
}

// MARK: Events

@c @implementation public func ck_event_string(_ code: Int32) -> UnsafePointer<CChar>? {
    guard let c = EventCode(rawValue: code) else { return staticCString("unknown event\0") }
    return staticCString(c.text)
}

@c @implementation public func ck_guide_flag_name(_ flag: UInt32) -> UnsafePointer<CChar>? {
    guard let c = EventCode(flag: flag) else { return staticCString("unknown\0") }
    return staticCString(c.name)
}

// MARK: Scheduler

/// A caller's `preset` argument as a SchedulerPreset.
/// - Throws: `invalidArgument` naming the valid values.
func presetArgument(_ preset: Int32) throws(CaptureKitError) -> SchedulerPreset {
    guard let p = SchedulerPreset(rawValue: preset) else {
        throw .invalidArgument("preset \(preset) is not a ck_preset (CK_PRESET_OBJECT_CAPTURE 0, CK_PRESET_ROOM_SCAN 1)")
    }
    return p
}

@c @implementation public func ck_scheduler_options_init_sized(_ options_out: UnsafeMutablePointer<ck_scheduler_options>?, _ struct_size: Int) -> ck_status {
    boundary("ck_scheduler_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_scheduler_options.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_scheduler_options_init(_ options_out: UnsafeMutablePointer<ck_scheduler_options>?) -> ck_status {
    boundary("ck_scheduler_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_scheduler_options.firstReleaseSize, ck_scheduler_options.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_options_preset_sized(_ options_out: UnsafeMutablePointer<ck_scheduler_options>?, _ struct_size: Int, _ preset: Int32) -> ck_status {
    boundary("ck_scheduler_options_preset_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_scheduler_options(SchedulerOptions(preset: try presetArgument(preset))))
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_scheduler_options_preset(_ options_out: UnsafeMutablePointer<ck_scheduler_options>?, _ preset: Int32) -> ck_status {
    boundary("ck_scheduler_options_preset") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_scheduler_options.firstReleaseSize, ck_scheduler_options(SchedulerOptions(preset: try presetArgument(preset))))
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_create(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ options: UnsafePointer<ck_scheduler_options>?) -> ck_status {
    boundary("ck_scheduler_create") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        o.pointee = nil
        let opts = try readOptions(options, "options", defaults: SchedulerOptions()) { (c: ck_scheduler_options) in c.options }
        let s = try named("options") { () throws(CaptureKitError) in try Scheduler(options: opts) }
        o.pointee = handOut(s)
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_free(_ scheduler: OpaquePointer?) {
    guard let scheduler else { return }
    release(scheduler, as: Scheduler.self)
}

@c @implementation public func ck_scheduler_frame_init_sized(_ frame_out: UnsafeMutablePointer<ck_scheduler_frame>?, _ struct_size: Int) -> ck_status {
    boundary("ck_scheduler_frame_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(frame_out, "frame_out", size: struct_size, ck_scheduler_frame.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_scheduler_frame_init(_ frame_out: UnsafeMutablePointer<ck_scheduler_frame>?) -> ck_status {
    boundary("ck_scheduler_frame_init") { () throws(CaptureKitError) in
        try fillGrowable(frame_out, "frame_out", size: ck_scheduler_frame.firstReleaseSize, ck_scheduler_frame.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_update(_ guidance_out: UnsafeMutablePointer<ck_guidance>?, _ scheduler: OpaquePointer?,
                                                    _ frame: UnsafePointer<ck_scheduler_frame>?) -> ck_status {
    boundary("ck_scheduler_update") { () throws(CaptureKitError) in
        let out = try required(guidance_out, "guidance_out")
        let s = try object(scheduler, "scheduler", as: Scheduler.self)
        let fp = try required(frame, "frame")
        let raw = try readOptions(fp, "frame", defaults: ck_scheduler_frame.defaults) { (f: ck_scheduler_frame) in f }
        let g = try withFrame(raw) { (f) throws(CaptureKitError) in try s.update(f) }
        out.pointee = ck_guidance(g)
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_next_event(_ event_out: UnsafeMutablePointer<ck_event>?, _ scheduler: OpaquePointer?) -> ck_status {
    boundary("ck_scheduler_next_event") { () throws(CaptureKitError) in
        let out = try required(event_out, "event_out")
        let s = try object(scheduler, "scheduler", as: Scheduler.self)
        guard let e = s.nextEvent() else { return CK_END }
        out.pointee = ck_event(e)
        return CK_OK
    }
}

@c @implementation public func ck_scheduler_reset(_ scheduler: OpaquePointer?) -> ck_status {
    boundary("ck_scheduler_reset") { () throws(CaptureKitError) in
        try object(scheduler, "scheduler", as: Scheduler.self).reset()
        return CK_OK
    }
}

// MARK: Coverage

@c @implementation public func ck_coverage_options_init_sized(_ options_out: UnsafeMutablePointer<ck_coverage_options>?, _ struct_size: Int) -> ck_status {
    boundary("ck_coverage_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_coverage_options.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_coverage_options_init(_ options_out: UnsafeMutablePointer<ck_coverage_options>?) -> ck_status {
    boundary("ck_coverage_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_coverage_options.firstReleaseSize, ck_coverage_options.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_coverage_create(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ box: UnsafePointer<ck_box>?,
                                                   _ options: UnsafePointer<ck_coverage_options>?) -> ck_status {
    boundary("ck_coverage_create") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        o.pointee = nil
        let b = try required(box, "box").pointee.validated(seat: false)
        let opts = try readOptions(options, "options", defaults: CoverageOptions()) { (c: ck_coverage_options) in c.options }
        let c = try named("options") { () throws(CaptureKitError) in try Coverage(box: b, options: opts) }
        o.pointee = handOut(c)
        return CK_OK
    }
}

@c @implementation public func ck_coverage_free(_ coverage: OpaquePointer?) {
    guard let coverage else { return }
    let c = Unmanaged<Coverage>.fromOpaque(UnsafeRawPointer(coverage))
    // A session's counter (ck_session_coverage) is the session's to free: ignored, with a message.
    guard !c.takeUnretainedValue().isOwnedBySession else {
        setLastError("ck_coverage_free: coverage is borrowed from a session (ck_session_coverage); ck_session_close frees it, so this call did nothing")
        return
    }
    c.release()
}

@c @implementation public func ck_coverage_add_view(_ face_out: UnsafeMutablePointer<Int32>?, _ coverage: OpaquePointer?,
                                                     _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                     _ timestamp: Double) -> ck_status {
    boundary("ck_coverage_add_view") { () throws(CaptureKitError) in
        let c = try object(coverage, "coverage", as: Coverage.self)
        let out = try required(face_out, "face_out")
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite (\(timestamp))") }
        let face = try c.addView(pose: pose, intrinsics: k, timestamp: timestamp)
        out.pointee = face
        return face >= 0 ? CK_OK : CK_MISS
    }
}

@c @implementation public func ck_coverage_set_box(_ coverage: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_coverage_set_box") { () throws(CaptureKitError) in
        let c = try object(coverage, "coverage", as: Coverage.self)
        c.setBox(try required(box, "box").pointee.validated(seat: false))
        return CK_OK
    }
}

@c @implementation public func ck_coverage_reset(_ coverage: OpaquePointer?) -> ck_status {
    boundary("ck_coverage_reset") { () throws(CaptureKitError) in
        try object(coverage, "coverage", as: Coverage.self).reset()
        return CK_OK
    }
}

@c @implementation public func ck_coverage_face(_ out: UnsafeMutablePointer<ck_face_coverage>?, _ coverage: OpaquePointer?, _ face: Int32) -> ck_status {
    boundary("ck_coverage_face") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let f = try object(coverage, "coverage", as: Coverage.self).face(Int(face))
        o.pointee = ck_face_coverage(count: f.count, goal: f.goal, progress: f.progress, color: (f.color.x, f.color.y, f.color.z),
                                     opacity: f.opacity, cell_fraction: f.cellFraction, completed: f.completed ? 1 : 0, reserved: 0)
        return CK_OK
    }
}

@c @implementation public func ck_coverage_summarize(_ out: UnsafeMutablePointer<ck_coverage_summary>?, _ coverage: OpaquePointer?) -> ck_status {
    boundary("ck_coverage_summarize") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let s = try object(coverage, "coverage", as: Coverage.self).summary
        o.pointee = ck_coverage_summary(views: s.views, faces_completed: s.facesCompleted, all_completed: s.allCompleted ? 1 : 0,
                                        completion: s.completion, dial_fraction: s.dialFraction, cell_fraction: s.cellFraction,
                                        reserved: (0, 0))
        return CK_OK
    }
}

/// Copies `values` into a caller buffer under the buffer rule (capturekit.h).
private func copyCounts(_ values: [UInt32], _ dst: UnsafeMutablePointer<UInt32>?, _ capacity: Int,
                        _ written_out: UnsafeMutablePointer<Int>?) throws(CaptureKitError) -> ck_status {
    try checkCapacity(capacity, needed: values.count, written_out, unit: "counts", elementSize: MemoryLayout<UInt32>.stride)
    let out = try required(dst, "dst")
    for (i, v) in values.enumerated() { out[i] = v }
    written_out?.pointee = values.count
    return CK_OK
}

@c @implementation public func ck_coverage_cells(_ dst: UnsafeMutablePointer<UInt32>?, _ dst_capacity: Int,
                                                  _ written_out: UnsafeMutablePointer<Int>?, _ coverage: OpaquePointer?) -> ck_status {
    boundary("ck_coverage_cells") { () throws(CaptureKitError) in
        let c = try object(coverage, "coverage", as: Coverage.self)
        return try copyCounts(c.cellCounts, dst, dst_capacity, written_out)
    }
}

@c @implementation public func ck_coverage_dial(_ dst: UnsafeMutablePointer<UInt32>?, _ dst_capacity: Int,
                                                 _ written_out: UnsafeMutablePointer<Int>?, _ coverage: OpaquePointer?) -> ck_status {
    boundary("ck_coverage_dial") { () throws(CaptureKitError) in
        let c = try object(coverage, "coverage", as: Coverage.self)
        return try copyCounts(c.dialCounts, dst, dst_capacity, written_out)
    }
}

@c @implementation public func ck_coverage_suggest(_ out: UnsafeMutablePointer<ck_coverage_hint>?, _ coverage: OpaquePointer?,
                                                    _ camera_pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_coverage_suggest") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let c = try object(coverage, "coverage", as: Coverage.self)
        let h = c.hint(pose: try readPose(camera_pose, "camera_pose"))
        o.pointee = ck_coverage_hint(move_angle: h.moveAngle, camera_azimuth: h.cameraAzimuth, target_azimuth: h.targetAzimuth,
                                     camera_elevation: h.cameraElevation, ring: h.ring, bin: h.bin,
                                     target_count: h.targetCount, ring_delta: h.ringDelta)
        return CK_OK
    }
}

@c @implementation public func ck_coverage_next_event(_ event_out: UnsafeMutablePointer<ck_event>?, _ coverage: OpaquePointer?) -> ck_status {
    boundary("ck_coverage_next_event") { () throws(CaptureKitError) in
        let out = try required(event_out, "event_out")
        let c = try object(coverage, "coverage", as: Coverage.self)
        guard let e = c.nextEvent() else { return CK_END }
        out.pointee = ck_event(e)
        return CK_OK
    }
}

// MARK: Sharpness

@c @implementation public func ck_sharpness_score(_ score_out: UnsafeMutablePointer<Float>?, _ luma: UnsafePointer<ck_image>?) -> ck_status {
    boundary("ck_sharpness_score") { () throws(CaptureKitError) in
        let out = try required(score_out, "score_out")
        let img = try requiredImage(luma, "luma", allowed: [.gray8], maxDimension: Int(Geometry.maxImageDimension))
        guard img.width >= 3, img.height >= 3 else {
            throw .invalidArgument("luma: width x height \(img.width) x \(img.height) must be at least 3 x 3")
        }
        out.pointee = try Sharpness.score(luma: img.bytes, width: img.width, height: img.height, stride: img.stride)
        return CK_OK
    }
}
