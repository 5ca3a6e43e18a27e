/// Presets of `SchedulerOptions` (`CK_PRESET_*`).
public enum SchedulerPreset: Int32, CaseIterable, Sendable {
    /// Orbiting an object (the reference object-capture app's behaviour, in true units).
    case objectCapture = 0
    /// Walking through a room (CubiCasa / MultiScan style).
    case roomScan = 1
}

/// Everything the scheduler can be tuned with (`ck_scheduler_options`). Units: seconds, metres,
/// metres per second; angles in degrees only where the name says `Deg`. A threshold of 0 turns
/// its gate off where the field's documentation says so.
public struct SchedulerOptions: Equatable, Sendable {
    /// Length of the window the speed and angular speed are measured over, s (0, 10].
    public var smoothingWindow: Float = 0.5
    /// Upper edges of the speed bands slow / medium / fast, m/s; at or above `speedFast` the
    /// camera is too fast (no capture, "slow down"); below `speedSlow`, "speed up".
    public var speedSlow: Float = 0.254
    public var speedMedium: Float = 0.406
    public var speedFast: Float = 0.508
    /// Capture intervals of the slow / medium / fast bands, s.
    public var intervalSlow: Float = 3
    public var intervalMedium: Float = 2
    public var intervalFast: Float = 1
    /// Time from the first frame to the first capture, s.
    public var firstCaptureDelay: Float = 3
    /// Turning faster than this is "turning too fast", degrees per second; 0 = off.
    public var maxAngularSpeedDeg: Float = 45
    /// Pitch above `pitchMaxDeg` → "tilt down"; below `pitchMinDeg` → "tilt up".
    public var pitchMaxDeg: Float = 30
    public var pitchMinDeg: Float = -65
    /// How long a pitch must stay out of its limits before its prompt, s (as `promptDelay`, in a
    /// window of max(`promptWindow`, `pitchDelay`)).
    public var pitchDelay: Float = 0.5
    /// A move of more than `driftDistance` m within `driftTime` s is drift; 0 = off.
    public var driftDistance: Float = 10
    public var driftTime: Float = 2
    /// The box centre more than this off the optical axis (or behind) → "point at the object";
    /// 0 = off.
    public var boxViewAngleDeg: Float = 25
    /// A capture candidate closer than both this distance (m) and this angle (degrees) to an
    /// already captured view is skipped as redundant; either 0 = off.
    public var redundantDistance: Float = 0.10
    public var redundantAngleDeg: Float = 10
    /// A sharpness score below this is "blurry"; 0 = off.
    public var minSharpness: Float = 0
    /// A distance below `depthMin` → "too close", above `depthMax` → "too far"; 0 = off. The
    /// distance is the median centre depth when the frame has valid depth there, otherwise the
    /// distance from the camera to the nearest point of the frame's box (0 inside it).
    public var depthMin: Float = 0.2
    public var depthMax: Float = 3
    /// Side of the centre window the median depth is taken over, as a fraction of the image (0, 1].
    public var depthCenterFraction: Float = 0.2
    /// A prompt fires when its condition held for `promptDelay` s in total within the last
    /// `promptWindow` s (a window at least as long as the delay: 40 % of 0.75 s by default, so
    /// hand-held motion that flickers across a limit still reaches the operator: on the real
    /// MultiScan trajectory "too fast" holds in spells of 0.12, 0.32 and 0.37 s), then again at
    /// most every `promptRepeat` s while it stays active; it becomes inactive once the held time
    /// in the window falls below half the delay (hysteresis: no chatter at the threshold).
    public var promptDelay: Float = 0.3
    public var promptRepeat: Float = 2
    public var promptWindow: Float = 0.75
    /// Walking sideways: the horizontal velocity's sideways share above this ratio, at a speed
    /// of at least `sidewaysMinSpeed`; ratio 0 = off.
    public var sidewaysRatio: Float = 0
    public var sidewaysMinSpeed: Float = 0.2
    /// Conditions (`CK_GUIDE_*` bits) that prevent a capture while they hold. Too fast and
    /// drift always do.
    public var blockingFlags: UInt32 = SchedulerOptions.objectCaptureBlocking
    /// Less than this fraction of the box's silhouette inside the image → "the object is partly
    /// out of frame" (needs the box and the image intrinsics), [0, 1]; 0 = off. It blocks only
    /// when the object is mostly outside the image: less than `adviceFraction` of the silhouette
    /// in it and that part filling less than `adviceFill` of the image; otherwise it is advice.
    /// On the 7 real HMC object captures (545 frames taken by operators for NeRF training), 492
    /// frames have less than 0.9 of the box in the image — close views of chairs, the box
    /// filling the image (median fill 0.89) — and 11 are mostly outside.
    public var minBoxInFrame: Float = 0.9
    /// Mean image luma (0...1) below this → "more light needed", [0, 1]; 0 = off.
    public var minLuma: Float = 0.15

    /// Every condition but speed up, walking sideways, move to a new view (the outcome of a
    /// block) and low light (advice: a dark object on a dark table is legitimately dim, and
    /// waiting does not make it brighter).
    public static let objectCaptureBlocking: UInt32 = GuidanceFlags.all
        & ~EventCode.speedUp.flag & ~EventCode.walkingSidewaysLeft.flag
        & ~EventCode.walkingSidewaysRight.flag & ~EventCode.moveToNewView.flag & ~EventCode.lowLight.flag
    public static let roomScanBlocking: UInt32 = objectCaptureBlocking
        & ~EventCode.tiltUp.flag & ~EventCode.tiltDown.flag

    /// The box gates' advice rule (not options): "point at the object" and "out of frame" are
    /// advice, not blocks, when the box's silhouette fills at least `adviceFill` of the image (a
    /// close view of a large object); "out of frame" also while at least `adviceFraction` of the
    /// silhouette is in the image.
    public static let adviceFill: Float = 0.5
    public static let adviceFraction: Float = 0.5

    public init() {}

    /// The options of a preset.
    public init(preset: SchedulerPreset) {
        self.init()
        switch preset {
        case .objectCapture:
            break
        case .roomScan:
            speedSlow = 0.2; speedMedium = 0.5; speedFast = 0.8
            intervalSlow = 1; intervalMedium = 0.5; intervalFast = 0.25
            firstCaptureDelay = 1
            maxAngularSpeedDeg = 60
            pitchMaxDeg = 45; pitchMinDeg = -45; pitchDelay = 3
            boxViewAngleDeg = 0
            minBoxInFrame = 0
            redundantDistance = 0.2; redundantAngleDeg = 15
            depthMin = 0.4; depthMax = 5
            sidewaysRatio = 0.7; sidewaysMinSpeed = 0.2
            blockingFlags = SchedulerOptions.roomScanBlocking
        }
    }

    /// Checks every field's range. - Throws: `invalidArgument` naming the C field.
    public func validate() throws(CaptureKitError) {
        func range(_ v: Float, _ name: String, _ lo: Float, _ hi: Float, openLow: Bool = false) throws(CaptureKitError) {
            guard v.isFinite, openLow ? v > lo : v >= lo, v <= hi else {
                throw .invalidArgument("\(name) = \(v) is out of range (\(openLow ? "(" : "[")\(lo), \(hi)])")
            }
        }
        try range(smoothingWindow, "smoothing_window", 0, 10, openLow: true)
        try range(speedSlow, "speed_slow", 0, 100, openLow: true)
        try range(speedMedium, "speed_medium", 0, 100, openLow: true)
        try range(speedFast, "speed_fast", 0, 100, openLow: true)
        guard speedSlow < speedMedium, speedMedium < speedFast else {
            throw .invalidArgument("speed_slow < speed_medium < speed_fast is required (got \(speedSlow), \(speedMedium), \(speedFast))")
        }
        try range(intervalSlow, "interval_slow", 0, 3600, openLow: true)
        try range(intervalMedium, "interval_medium", 0, 3600, openLow: true)
        try range(intervalFast, "interval_fast", 0, 3600, openLow: true)
        try range(firstCaptureDelay, "first_capture_delay", 0, 3600)
        try range(maxAngularSpeedDeg, "max_angular_speed_deg", 0, 36000)
        try range(pitchMaxDeg, "pitch_max_deg", -90, 90)
        try range(pitchMinDeg, "pitch_min_deg", -90, 90)
        guard pitchMinDeg < pitchMaxDeg else {
            throw .invalidArgument("pitch_min_deg \(pitchMinDeg) must be below pitch_max_deg \(pitchMaxDeg)")
        }
        try range(pitchDelay, "pitch_delay", 0, 3600)
        try range(driftDistance, "drift_distance", 0, Geometry.maxCoordinate)
        try range(driftTime, "drift_time", 0, 3600, openLow: true)
        try range(boxViewAngleDeg, "box_view_angle_deg", 0, 180)
        try range(redundantDistance, "redundant_distance", 0, Geometry.maxCoordinate)
        try range(redundantAngleDeg, "redundant_angle_deg", 0, 180)
        try range(minSharpness, "min_sharpness", 0, Float.greatestFiniteMagnitude)
        try range(depthMin, "depth_min", 0, Geometry.maxCoordinate)
        try range(depthMax, "depth_max", 0, Geometry.maxCoordinate)
        if depthMin > 0 && depthMax > 0 && !(depthMin < depthMax) {
            throw .invalidArgument("depth_min \(depthMin) must be below depth_max \(depthMax)")
        }
        try range(depthCenterFraction, "depth_center_fraction", 0, 1, openLow: true)
        try range(promptDelay, "prompt_delay", 0, 3600)
        try range(promptRepeat, "prompt_repeat", 0, 3600, openLow: true)
        try range(promptWindow, "prompt_window", 0, 60, openLow: true)
        try range(sidewaysRatio, "sideways_ratio", 0, 1)
        try range(sidewaysMinSpeed, "sideways_min_speed", 0, 100)
        try range(minBoxInFrame, "min_box_in_frame", 0, 1)
        try range(minLuma, "min_luma", 0, 1)
        guard blockingFlags & ~GuidanceFlags.all == 0 else {
            throw .invalidArgument("blocking_flags 0x\(String(blockingFlags, radix: 16)) has unknown bits (known: 0x\(String(GuidanceFlags.all, radix: 16)))")
        }
    }
}
