import Glibc

/// Camera tracking state as ARKit reports it (`CK_TRACKING_*`).
public enum TrackingState: Int32, CaseIterable, Sendable {
    case notAvailable = 0
    case limited = 1
    case normal = 2
}

/// Why tracking is limited, as ARKit reports it (`ck_tracking_reason`,
/// ARCamera.TrackingState.Reason). Only meaningful with `TrackingState.limited`.
public enum TrackingReason: Int32, CaseIterable, Sendable {
    case none = 0
    case initializing = 1
    case excessiveMotion = 2
    case insufficientFeatures = 3
    case relocalizing = 4
}

/// Speed bands (`CK_SPEED_BAND_*`), by the smoothed speed against the band edges of `SchedulerOptions`.
public enum SpeedBand: Int32, CaseIterable, Sendable {
    case slow = 0, medium = 1, fast = 2, tooFast = 3
}

/// One frame given to `Scheduler.update` (`ck_scheduler_frame`).
public struct SchedulerFrame {
    /// Caller's clock, seconds; strictly increasing from frame to frame.
    public var timestamp: Double
    public var pose: Pose
    public var tracking: TrackingState
    /// The box around the object, if any (for "point at the object").
    public var box: Box?
    /// The caller's image sharpness score (e.g. `Sharpness.score`), nil if not measured.
    public var sharpness: Float?
    /// The depth map (any depth `SampleFormat`), borrowed for the update; values that are not
    /// finite and > 0 are invalid.
    public var depth: SampleMap?
    /// Principal point of the depth map, pixels (the centre window is placed around it); nil =
    /// the map's centre.
    public var depthPrincipalPoint: SIMD2<Float>?
    /// The image's intrinsics, if known (for "the object is partly out of frame").
    public var intrinsics: Intrinsics?
    /// Why tracking is limited (used only with `tracking == .limited`).
    public var trackingReason: TrackingReason
    /// Mean image brightness in 0...1 (e.g. `Luma.mean`), nil if not measured.
    public var meanLuma: Float?

    public init(timestamp: Double, pose: Pose, tracking: TrackingState = .normal, box: Box? = nil,
                sharpness: Float? = nil, depth: SampleMap? = nil, depthPrincipalPoint: SIMD2<Float>? = nil,
                intrinsics: Intrinsics? = nil, trackingReason: TrackingReason = .none, meanLuma: Float? = nil) {
        self.timestamp = timestamp; self.pose = pose; self.tracking = tracking; self.box = box
        self.sharpness = sharpness; self.depth = depth; self.depthPrincipalPoint = depthPrincipalPoint
        self.intrinsics = intrinsics
        self.trackingReason = trackingReason; self.meanLuma = meanLuma
    }
}

/// The scheduler's answer for one frame (`ck_guidance`).
public struct Guidance: Equatable, Sendable {
    /// Take this frame (the scheduler counted it as captured).
    public var capture = false
    public var band: SpeedBand = .slow
    /// `CK_GUIDE_*` conditions that hold in this frame.
    public var flags: UInt32 = 0
    /// Captures so far, this one included.
    public var captures: UInt32 = 0
    /// Smoothed speed, m/s; angular speed, rad/s; pitch of the view direction, rad.
    public var speed: Float = 0
    public var angularSpeed: Float = 0
    public var pitch: Float = 0
    /// The capture interval of the current band, s (0 when too fast).
    public var interval: Float = 0
    /// Seconds until the interval has elapsed (0 when a capture is due).
    public var nextCaptureIn: Float = 0
    /// Median valid depth of the centre window, m (0 when not measured).
    public var medianDepth: Float = 0
    /// The conditions of `flags` that prevent a capture in this frame (whether or not one was
    /// due): those in `blockingFlags` except the box gates' advice cases (`Scheduler.update`),
    /// plus too fast and drift. 0 = nothing blocks.
    public var blocked: UInt32 = 0
}

/// Paces automatic capture by the camera's motion and watches the quality gates.
///
/// Deterministic: time comes only from the frames. Not thread-safe (one thread at a time).
/// The corresponding C object is `ck_scheduler`.
public final class Scheduler {
    public let options: SchedulerOptions

    private struct Sample { var t: Double; var p: SIMD3<Double>; var x: Vec3, y: Vec3, z: Vec3 }
    /// Largest number of frames kept for the smoothing and drift windows (older ones drop out).
    static let historyCapacity = 1024

    private var history: [Sample] = []
    private var historyHead = 0
    private var firstTime: Double?
    private var lastTime: Double?
    private var lastCapture: Double?
    private var views: [(p: Vec3, f: Vec3)] = []
    /// Per scheduler code (index = code, 0 unused).
    private static let slots = Int(GuidanceFlags.lastCode) + 1
    private var held = [HeldWindow](repeating: HeldWindow(), count: Scheduler.slots)
    private var active = [Bool](repeating: false, count: Scheduler.slots)
    private var lastFired = [Double?](repeating: nil, count: Scheduler.slots)
    private var lastPromptTime: Double?
    private var events = EventQueue()
    private var depthScratch: [Float] = []
    /// Event value per scheduler code in the current update.
    private var eventValues = [Float](repeating: 0, count: Scheduler.slots)
    /// Conditions with prompts (every scheduler code but drift, which fires at once).
    private static let promptCodes = EventCode.allCases.filter { $0.flag != 0 && $0 != .drift }
    /// Set when drift was detected: the session must be restarted (`reset`).
    public private(set) var abortedAt: Double?

    /// - Throws: `invalidArgument` for options out of range.
    public init(options: SchedulerOptions = SchedulerOptions()) throws(CaptureKitError) {
        try options.validate()
        self.options = options
        history.reserveCapacity(64)
    }

    /// Captures so far.
    public var captureCount: Int { views.count }
    /// Events waiting in the queue.
    public var pendingEvents: Int { events.count }

    /// The oldest queued event, removed from the queue; nil when empty.
    public func nextEvent() -> GuidanceEvent? { events.pop() }

    /// Forgets every frame, capture and event; keeps the options.
    public func reset() {
        history.removeAll(keepingCapacity: true); historyHead = 0
        firstTime = nil; lastTime = nil; lastCapture = nil; abortedAt = nil
        views.removeAll()
        for i in 0..<held.count { held[i] = HeldWindow(); active[i] = false; lastFired[i] = nil }
        lastPromptTime = nil
        events.removeAll()
    }

    /// Rebuilds what a crash lost from what a dataset kept (a resumed session): `captures`, the
    /// current pass's captured frames (time and pose, in order), become the views the redundancy
    /// gate compares against and the last capture the interval counts from; `recent`, the camera
    /// poses of the last frames before the break (the streamed frames'), become the motion history
    /// speed, turning and drift are measured over. So the next update paces and gates as if the
    /// frames had come without a break; only the prompts' held time starts empty. Timestamps must
    /// go on after the latest of them. Resets everything else.
    public func restore(captures: [(t: Double, pose: Pose)], recent: [(t: Double, pose: Pose)]) {
        reset()
        // One sample per instant: a captured frame is also a streamed one (whose camera-info time
        // is rounded to nanoseconds), and its own time is the exact one.
        var samples = captures.suffix(Scheduler.historyCapacity) + recent
        samples.sort { $0.t < $1.t }
        var kept: [(t: Double, pose: Pose)] = []
        for s in samples where s.t.isFinite {
            if let l = kept.last, s.t - l.t < 1e-6 { continue }
            kept.append(s)
        }
        let keep = Double(max(options.smoothingWindow, options.driftTime))
        for s in kept {
            appendSample(Sample(t: s.t, p: SIMD3<Double>(s.pose.t), x: s.pose.x, y: s.pose.y, z: s.pose.z), keep: keep)
        }
        views = captures.map { ($0.pose.t, $0.pose.forward) }
        lastCapture = captures.last?.t
        firstTime = kept.first?.t
        lastTime = kept.last?.t
        lastPromptTime = lastTime
    }

    /// Processes one frame.
    /// - Throws: `state` after drift (until `reset`); `invalidArgument` for a timestamp not after
    ///   the previous frame's or not finite. Nothing changes when it throws.
    public func update(_ frame: SchedulerFrame) throws(CaptureKitError) -> Guidance {
        let t = frame.timestamp
        guard t.isFinite, abs(t) <= 1e12 else { throw .invalidArgument("timestamp is not finite or beyond ±1e12 s (\(t))") }
        if let abortedAt {
            throw .state("the session was aborted after drift at t = \(abortedAt) s; call reset (ck_scheduler_reset) to start again")
        }
        if let lastTime, !(t > lastTime) {
            throw .invalidArgument("timestamp \(t) is not after the previous frame's \(lastTime)")
        }
        let o = options
        let pose = frame.pose
        var g = Guidance()
        if firstTime == nil { firstTime = t }
        lastTime = t
        appendSample(Sample(t: t, p: SIMD3<Double>(pose.t), x: pose.x, y: pose.y, z: pose.z),
                     keep: Double(max(o.smoothingWindow, o.driftTime)))

        // Motion over the smoothing window.
        let (velocity, angular) = kinematics(now: t, window: Double(o.smoothingWindow))
        let speed = Float((velocity * velocity).sum().squareRoot())
        g.speed = speed
        g.angularSpeed = angular
        g.pitch = pose.yawPitchRoll.pitch
        g.captures = UInt32(clamping: views.count)

        // Drift: a jump of more than driftDistance within driftTime aborts the session.
        if o.driftDistance > 0 {
            let jump = maxDisplacement(from: SIMD3<Double>(pose.t), since: t - Double(o.driftTime))
            if jump > Double(o.driftDistance) {
                abortedAt = t
                events.push(GuidanceEvent(code: .drift, timestamp: t, value: Float(jump)))
                g.flags = EventCode.drift.flag
                g.blocked = g.flags
                g.band = band(speed)
                return g
            }
        }

        g.band = band(speed)
        var flags: UInt32 = 0
        func raise(_ c: EventCode, _ v: Float) { flags |= c.flag; eventValues[Int(c.rawValue)] = v }
        switch g.band {
        case .slow: g.interval = o.intervalSlow; raise(.speedUp, speed)
        case .medium: g.interval = o.intervalMedium
        case .fast: g.interval = o.intervalFast
        case .tooFast: g.interval = 0; raise(.slowDown, speed)
        }
        if o.maxAngularSpeedDeg > 0 && angular > o.maxAngularSpeedDeg * .pi / 180 { raise(.turningTooFast, angular) }
        if g.pitch > o.pitchMaxDeg * .pi / 180 { raise(.tiltDown, g.pitch) }
        if g.pitch < o.pitchMinDeg * .pi / 180 { raise(.tiltUp, g.pitch) }
        // The box gates. The box is the operator's loose bound on the object, and real operators
        // take close views of large objects (SchedulerOptions.minBoxInFrame): where the box says
        // the view still shows the object, its condition is advice (prompted, flagged, not
        // blocking).
        var advice: UInt32 = 0
        let silhouette = frame.box.flatMap { box in frame.intrinsics.map { box.silhouetteInFrame(pose: pose, intrinsics: $0) } }
        let fillsImage = (silhouette?.fill ?? 0) >= SchedulerOptions.adviceFill
        if let box = frame.box, o.boxViewAngleDeg > 0 {
            let angle = angleBetween(pose.forward, box.center - pose.t)
            if angle > o.boxViewAngleDeg * .pi / 180 {
                raise(.pointAtObject, angle)
                if fillsImage { advice |= EventCode.pointAtObject.flag }
            }
        }
        if let s = silhouette, o.minBoxInFrame > 0, s.fraction < o.minBoxInFrame {
            raise(.objectOutOfFrame, s.fraction)
            if fillsImage || s.fraction >= SchedulerOptions.adviceFraction { advice |= EventCode.objectOutOfFrame.flag }
        }
        switch frame.tracking {
        case .normal: break
        case .limited:
            raise(.trackingLimited, 0)
            if let reason = EventCode(trackingReason: frame.trackingReason) { raise(reason, 0) }
        case .notAvailable: raise(.trackingNotAvailable, 0)
        }
        // Distance: the median centre depth when the frame has depth there, else the distance
        // from the camera to the nearest point of the box (0 inside it).
        // Without depth the box distance is a lower bound on the object's: "too close" is advice
        // there unless the camera is inside the box.
        var distance: Float? = nil, boxDistance = false
        if let depth = frame.depth, let median = medianCenterDepth(depth, frame.depthPrincipalPoint) {
            g.medianDepth = median
            distance = median
        } else if let box = frame.box {
            distance = box.distance(to: pose.t)
            boxDistance = true
        }
        if let d = distance {
            if o.depthMin > 0 && d < o.depthMin {
                raise(.tooClose, d)
                if boxDistance && d > 0 { advice |= EventCode.tooClose.flag }
            }
            if o.depthMax > 0 && d > o.depthMax { raise(.tooFar, d) }
        }
        if let s = frame.sharpness, o.minSharpness > 0, s < o.minSharpness { raise(.blurry, s) }
        if let luma = frame.meanLuma, o.minLuma > 0, luma < o.minLuma { raise(.lowLight, luma) }
        if o.sidewaysRatio > 0 {
            let vh = Vec3(Float(velocity.x), 0, Float(velocity.z))
            let hs = length(vh)
            let heading = pose.horizontalHeading
            let lateral = dot(vh, Vec3(-heading.z, 0, heading.x))
            if hs >= o.sidewaysMinSpeed && hs > 0 && abs(lateral) > o.sidewaysRatio * hs {
                raise(lateral < 0 ? .walkingSidewaysLeft : .walkingSidewaysRight, abs(lateral))
            }
        }

        // Capture when the interval has elapsed and no blocking condition holds.
        g.blocked = (flags & o.blockingFlags & ~advice) | (flags & (EventCode.slowDown.flag | EventCode.drift.flag))
        let since = lastCapture ?? firstTime ?? t
        let required = lastCapture == nil ? Double(o.firstCaptureDelay) : Double(g.interval)
        let elapsed = t - since
        if g.band != .tooFast {
            g.nextCaptureIn = Float(max(0, required - elapsed))
            let due = elapsed >= required
            if due && g.blocked == 0 {
                if let nearest = redundantView(pose) {
                    raise(.moveToNewView, nearest)
                } else {
                    g.capture = true
                    lastCapture = t
                    views.append((pose.t, pose.forward))
                    g.captures = UInt32(clamping: views.count)
                }
            }
        }
        g.flags = flags
        // A known reason prompts instead of the generic "tracking is limited" (the flag stays).
        prompt(flags & GuidanceFlags.trackingReasons != 0 ? flags & ~EventCode.trackingLimited.flag : flags, at: t)
        return g
    }

    // MARK: Internals

    private func band(_ speed: Float) -> SpeedBand {
        speed < options.speedSlow ? .slow : speed < options.speedMedium ? .medium : speed < options.speedFast ? .fast : .tooFast
    }

    /// Fires a held condition's prompt once it held for its delay in total within its window
    /// (max(promptWindow, delay)); it then stays active until its held time falls below half the
    /// delay (hysteresis), and fires again while active, holding, and at least promptRepeat after
    /// its last prompt (never more often, active or not). The time since the previous frame
    /// counts for the conditions of this frame.
    private func prompt(_ flags: UInt32, at t: Double) {
        let dt = lastPromptTime.map { t - $0 } ?? 0
        lastPromptTime = t
        for code in Scheduler.promptCodes {
            let i = Int(code.rawValue)
            let holds = flags & code.flag != 0
            let delay = Double(code == .tiltUp || code == .tiltDown ? options.pitchDelay : options.promptDelay)
            let window = max(Double(options.promptWindow), delay)
            held[i].add(holds ? dt : 0, at: t, window: window)
            let total = held[i].total
            if total >= delay { active[i] = true } else if total < delay / 2 { active[i] = false }
            guard holds, active[i] else { continue }
            if let last = lastFired[i], t - last < Double(options.promptRepeat) { continue }
            lastFired[i] = t
            events.push(GuidanceEvent(code: code, timestamp: t, value: eventValues[i]))
        }
    }

    /// Held time of one condition within a sliding window, in 32 buckets of window/32 s: O(1) per
    /// frame, fixed memory, the window's oldest bucket dropped whole (the total is exact to one
    /// bucket, 23 ms for the default 0.75 s).
    struct HeldWindow {
        static let buckets = 32
        private var slots = [Double](repeating: 0, count: HeldWindow.buckets)
        private var current: Int64? = nil  // absolute bucket number of the newest slot
        private(set) var total = 0.0

        /// Adds `amount` s of held time (at most the window) at time `t` to a window of `window` s.
        mutating func add(_ amount: Double, at t: Double, window: Double) {
            let n = Int64(HeldWindow.buckets)
            let q = (t / (window / Double(n))).rounded(.down)
            let k = q.isFinite && abs(q) < 1e15 ? Int64(q) : 0
            if let c = current {
                if k &- c >= n || k < c {
                    for j in slots.indices { slots[j] = 0 }
                    total = 0
                } else {
                    var j = c + 1
                    while j <= k {
                        let s = Int(j & (n - 1))
                        total -= slots[s]
                        slots[s] = 0
                        j += 1
                    }
                }
            }
            current = k
            let a = min(max(amount, 0), window)
            slots[Int(k & (n - 1))] += a
            total = max(0, total + a)
        }
    }

    private func appendSample(_ s: Sample, keep: Double) {
        if history.count - historyHead >= Scheduler.historyCapacity { historyHead += 1 }
        history.append(s)
        // Drop samples older than the longest window, keeping the previous frame.
        while history.count - historyHead > 2 && history[historyHead].t < s.t - keep { historyHead += 1 }
        if historyHead >= 256 {
            history.removeFirst(historyHead)
            historyHead = 0
        }
    }

    /// Least-squares velocity of the positions in the window (at least the previous frame) and
    /// the rotation angle from the window's oldest orientation to the newest over their time span.
    private func kinematics(now t: Double, window: Double) -> (SIMD3<Double>, Float) {
        let n = history.count
        guard n - historyHead >= 2 else { return (.zero, 0) }
        var first = n - 2
        while first > historyHead && history[first - 1].t >= t - window { first -= 1 }
        let count = Double(n - first)
        var tm = 0.0, pm = SIMD3<Double>.zero
        for i in first..<n { tm += history[i].t - t; pm += history[i].p }
        tm /= count; pm /= count
        var stt = 0.0, stp = SIMD3<Double>.zero
        for i in first..<n {
            let dt = history[i].t - t - tm
            stt += dt * dt
            stp += (history[i].p - pm) * dt
        }
        let v = stt > 0 ? stp / stt : .zero
        let a = history[first], b = history[n - 1]
        let dx = SIMD3<Double>(a.x - b.x), dy = SIMD3<Double>(a.y - b.y), dz = SIMD3<Double>(a.z - b.z)
        let frob = ((dx * dx).sum() + (dy * dy).sum() + (dz * dz).sum()).squareRoot()
        let angle = 2 * asin(min(1, frob / (2 * 2.0.squareRoot())))
        let span = b.t - a.t
        return (v, span > 0 ? Float(angle / span) : 0)
    }

    private func maxDisplacement(from p: SIMD3<Double>, since t0: Double) -> Double {
        var best = 0.0
        for i in historyHead..<history.count where history[i].t >= t0 {
            let d = history[i].p - p
            best = max(best, (d * d).sum())
        }
        return best.squareRoot()
    }

    /// Distance to the nearest captured view within both redundancy limits, or nil.
    private func redundantView(_ pose: Pose) -> Float? {
        let o = options
        guard o.redundantDistance > 0, o.redundantAngleDeg > 0 else { return nil }
        let cosLimit = cos(o.redundantAngleDeg * .pi / 180)
        let f = pose.forward
        var nearest: Float?
        for v in views {
            let d = length(v.p - pose.t)
            if d < o.redundantDistance && dot(v.f, f) > cosLimit { nearest = min(nearest ?? d, d) }
        }
        return nearest
    }

    /// Median of the valid depths (metres) in the centre window around the principal point (the
    /// map's centre when nil), nil if none.
    private func medianCenterDepth(_ m: SampleMap, _ principal: SIMD2<Float>?) -> Float? {
        let f = options.depthCenterFraction
        let cx = principal?.x ?? Float(m.width) / 2, cy = principal?.y ?? Float(m.height) / 2
        let hw = f * Float(m.width) / 2, hh = f * Float(m.height) / 2
        // Pixels whose centres (i + 0.5) lie within [c − h, c + h], clamped to the image.
        let c0 = max(0, Int((cx - hw - 0.5).rounded(.up))), c1 = min(m.width - 1, Int((cx + hw - 0.5).rounded(.down)))
        let r0 = max(0, Int((cy - hh - 0.5).rounded(.up))), r1 = min(m.height - 1, Int((cy + hh - 0.5).rounded(.down)))
        guard c0 <= c1, r0 <= r1, m.format.isDepth else { return nil }
        let capacity = (c1 - c0 + 1) * (r1 - r0 + 1)
        if depthScratch.count < capacity { depthScratch = [Float](repeating: 0, count: capacity) }
        let format = m.format
        return depthScratch.withUnsafeMutableBufferPointer { buf -> Float? in
            var n = 0
            for r in r0...r1 {
                let row = m.base + r * m.stride
                for c in c0...c1 {
                    let v: Float
                    switch format {
                    case .depthF32: v = row.loadUnaligned(fromByteOffset: c * 4, as: Float.self)
                    case .depthF16: v = DepthConversion.float32(fromFloat16: row.loadUnaligned(fromByteOffset: c * 2, as: UInt16.self))
                    case .depthMM, .u8: v = DepthConversion.metres(millimetres: row.loadUnaligned(fromByteOffset: c * 2, as: UInt16.self))
                    }
                    buf[n] = v  // branch-free: kept only when valid (finite and > 0)
                    n &+= v > 0 && v < .infinity ? 1 : 0
                }
            }
            return median(UnsafeMutableBufferPointer(rebasing: buf[0..<n]))
        }
    }
}

/// Angle between two vectors, radians (π for a zero vector).
func angleBetween(_ a: Vec3, _ b: Vec3) -> Float {
    let la = length(a), lb = length(b)
    guard la > 0, lb > 0 else { return .pi }
    return acos(max(-1, min(1, dot(a, b) / (la * lb))))
}

/// Median (the mean of the two middle values for an even count) by selection; nil when empty.
/// Reorders `values`.
func median(_ values: inout [Float]) -> Float? {
    values.withUnsafeMutableBufferPointer { median($0) }
}

/// The same on a buffer (reordered in place).
func median(_ a: UnsafeMutableBufferPointer<Float>) -> Float? {
    let n = a.count
    guard n > 0 else { return nil }
    let hi = select(a, n / 2)
    if n % 2 == 1 { return hi }
    var lo = a[0]
    for i in 1..<(n / 2) where a[i] > lo { lo = a[i] }  // the largest of the lower part
    return (lo + hi) / 2
}

/// Hoare-style quickselect: the k-th smallest value; afterwards a[..<k] ≤ it ≤ a[k...]. The
/// values must not be NaN.
private func select(_ a: UnsafeMutableBufferPointer<Float>, _ k: Int) -> Float {
    var lo = 0, hi = a.count - 1
    while lo < hi {
        let pivot = a[lo + (hi - lo) / 2]
        var i = lo, j = hi
        while i <= j {
            while a[i] < pivot { i += 1 }
            while a[j] > pivot { j -= 1 }
            if i <= j { a.swapAt(i, j); i += 1; j -= 1 }
        }
        if k <= j { hi = j } else if k >= i { lo = i } else { break }
    }
    return a[k]
}
