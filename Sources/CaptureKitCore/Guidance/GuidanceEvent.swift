/// Guidance event codes (`CK_EVENT_*`): stable numbers, never renumbered or reused.
///
/// Codes 1...21 come from the scheduler (each one is also a guidance flag, bit `code − 1`;
/// 16...21 since 0.2); codes 101... come from coverage, 201... from the session.
public enum EventCode: Int32, CaseIterable, Sendable {
    case slowDown = 1
    case speedUp = 2
    case turningTooFast = 3
    case tiltDown = 4
    case tiltUp = 5
    case drift = 6
    case pointAtObject = 7
    case trackingLimited = 8
    case trackingNotAvailable = 9
    case tooClose = 10
    case tooFar = 11
    case blurry = 12
    case walkingSidewaysLeft = 13
    case walkingSidewaysRight = 14
    case moveToNewView = 15
    case objectOutOfFrame = 16
    case lowLight = 17
    case trackingInitializing = 18
    case trackingExcessiveMotion = 19
    case trackingInsufficientFeatures = 20
    case trackingRelocalizing = 21
    case sideCompleted = 101
    case allSidesCompleted = 102
    case ringCompleted = 103
    case insideBox = 104
    case surfaceSideCompleted = 105
    case surfaceCompleted = 106
    case storageLow = 201
    case captureDropped = 202
    case streamFrameDropped = 203
    case captureCommitted = 204

    /// The short English text shown to an operator (static, NUL-terminated for C).
    public var text: StaticString {
        switch self {
        case .slowDown: return "Slow down\0"
        case .speedUp: return "Move a little faster\0"
        case .turningTooFast: return "Turning too fast: turn more slowly\0"
        case .tiltDown: return "Tilt the camera down\0"
        case .tiltUp: return "Tilt the camera up\0"
        case .drift: return "Tracking jumped: the session must be restarted\0"
        case .pointAtObject: return "Point the camera at the object\0"
        case .trackingLimited: return "Tracking is limited: move slowly over a textured, well-lit area\0"
        case .trackingNotAvailable: return "Tracking is not available\0"
        case .tooClose: return "Too close: move back\0"
        case .tooFar: return "Too far: move closer\0"
        case .blurry: return "Image is blurry: hold the camera steady\0"
        case .walkingSidewaysLeft: return "Walking sideways to the left: face the way you walk\0"
        case .walkingSidewaysRight: return "Walking sideways to the right: face the way you walk\0"
        case .moveToNewView: return "Move to a new viewpoint\0"
        case .objectOutOfFrame: return "Move back: the object is partly out of frame\0"
        case .lowLight: return "More light needed\0"
        case .trackingInitializing: return "Move the device slowly to start\0"
        case .trackingExcessiveMotion: return "Slow down: moving too fast for tracking\0"
        case .trackingInsufficientFeatures: return "Point at a more detailed surface, or add light\0"
        case .trackingRelocalizing: return "Return to where you were\0"
        case .sideCompleted: return "Side completed\0"
        case .allSidesCompleted: return "All sides completed\0"
        case .ringCompleted: return "Ring completed\0"
        case .insideBox: return "Step back: the camera is inside the box\0"
        case .surfaceSideCompleted: return "Surface side covered\0"
        case .surfaceCompleted: return "Surface complete\0"
        case .storageLow: return "Storage is running low: less recording time left than the warning threshold\0"
        case .captureDropped: return "A capture was dropped: the storage cannot keep up\0"
        case .streamFrameDropped: return "A depth stream frame was dropped: the storage cannot keep up\0"
        case .captureCommitted: return "A captured image was added\0"
        }
    }

    /// The operator text of an event with this code and `index`: a side event names its side
    /// ("Front side completed", face order front, left, right, bottom, top, back); otherwise `text`.
    public func text(index: Int32) -> StaticString {
        if self == .surfaceSideCompleted {
            switch index {
            case 0: return "Front surface covered\0"
            case 1: return "Left side surface covered\0"
            case 2: return "Right side surface covered\0"
            case 3: return "Bottom surface covered\0"
            case 4: return "Top surface covered\0"
            case 5: return "Back surface covered\0"
            default: return text
            }
        }
        guard self == .sideCompleted else { return text }
        switch index {
        case 0: return "Front side completed\0"
        case 1: return "Left side completed\0"
        case 2: return "Right side completed\0"
        case 3: return "Bottom side completed\0"
        case 4: return "Top side completed\0"
        case 5: return "Back side completed\0"
        default: return text
        }
    }

    /// The name of the `CK_GUIDE_*` flag / `CK_EVENT_*` constant without its prefix ("SLOW_DOWN").
    public var name: StaticString {
        switch self {
        case .slowDown: return "SLOW_DOWN\0"
        case .speedUp: return "SPEED_UP\0"
        case .turningTooFast: return "TURNING_TOO_FAST\0"
        case .tiltDown: return "TILT_DOWN\0"
        case .tiltUp: return "TILT_UP\0"
        case .drift: return "DRIFT\0"
        case .pointAtObject: return "POINT_AT_OBJECT\0"
        case .trackingLimited: return "TRACKING_LIMITED\0"
        case .trackingNotAvailable: return "TRACKING_NOT_AVAILABLE\0"
        case .tooClose: return "TOO_CLOSE\0"
        case .tooFar: return "TOO_FAR\0"
        case .blurry: return "BLURRY\0"
        case .walkingSidewaysLeft: return "WALKING_SIDEWAYS_LEFT\0"
        case .walkingSidewaysRight: return "WALKING_SIDEWAYS_RIGHT\0"
        case .moveToNewView: return "MOVE_TO_NEW_VIEW\0"
        case .objectOutOfFrame: return "OBJECT_OUT_OF_FRAME\0"
        case .lowLight: return "LOW_LIGHT\0"
        case .trackingInitializing: return "TRACKING_INITIALIZING\0"
        case .trackingExcessiveMotion: return "TRACKING_EXCESSIVE_MOTION\0"
        case .trackingInsufficientFeatures: return "TRACKING_INSUFFICIENT_FEATURES\0"
        case .trackingRelocalizing: return "TRACKING_RELOCALIZING\0"
        case .sideCompleted: return "SIDE_COMPLETED\0"
        case .allSidesCompleted: return "ALL_SIDES_COMPLETED\0"
        case .ringCompleted: return "RING_COMPLETED\0"
        case .insideBox: return "INSIDE_BOX\0"
        case .surfaceSideCompleted: return "SURFACE_SIDE_COMPLETED\0"
        case .surfaceCompleted: return "SURFACE_COMPLETED\0"
        case .storageLow: return "STORAGE_LOW\0"
        case .captureDropped: return "CAPTURE_DROPPED\0"
        case .streamFrameDropped: return "STREAM_FRAME_DROPPED\0"
        case .captureCommitted: return "CAPTURE_COMMITTED\0"
        }
    }

    /// The condition of one guidance flag bit (`CK_GUIDE_*`), nil unless exactly one defined bit.
    public init?(flag: UInt32) {
        guard flag != 0, flag & (flag &- 1) == 0, flag & GuidanceFlags.all != 0 else { return nil }
        self.init(rawValue: Int32(flag.trailingZeroBitCount) + 1)
    }

    /// The scheduler's guidance flag of this condition (`CK_GUIDE_*`), 0 for coverage events.
    public var flag: UInt32 { rawValue >= 1 && rawValue <= GuidanceFlags.lastCode ? 1 << UInt32(rawValue - 1) : 0 }

    /// The condition a limited-tracking reason raises (besides `trackingLimited`), nil for none.
    public init?(trackingReason r: TrackingReason) {
        switch r {
        case .none: return nil
        case .initializing: self = .trackingInitializing
        case .excessiveMotion: self = .trackingExcessiveMotion
        case .insufficientFeatures: self = .trackingInsufficientFeatures
        case .relocalizing: self = .trackingRelocalizing
        }
    }
}

/// Guidance flags (`CK_GUIDE_*`): one bit per scheduler condition, bit `code − 1`.
public enum GuidanceFlags {
    /// The highest scheduler condition code (its flag is the highest defined bit).
    public static let lastCode: Int32 = 21
    /// Every defined flag (`CK_GUIDE_ALL`).
    public static let all: UInt32 = (1 << UInt32(lastCode)) - 1
    /// The flags of the limited-tracking reasons (`CK_GUIDE_TRACKING_INITIALIZING` ...).
    public static let trackingReasons: UInt32 = EventCode.trackingInitializing.flag | EventCode.trackingExcessiveMotion.flag
        | EventCode.trackingInsufficientFeatures.flag | EventCode.trackingRelocalizing.flag
}

/// One queued event (`ck_event`).
public struct GuidanceEvent: Equatable, Sendable {
    public var code: EventCode
    /// The face (side events) or ring (ring events), −1 otherwise.
    public var index: Int32
    /// Time of the frame or view that raised it (caller's clock, seconds).
    public var timestamp: Double
    /// An event-specific number (documented per code in the header), 0 if none.
    public var value: Float

    public init(code: EventCode, index: Int32 = -1, timestamp: Double, value: Float = 0) {
        self.code = code; self.index = index; self.timestamp = timestamp; self.value = value
    }
}

/// A bounded first-in first-out queue of events: when full, the oldest event is dropped.
struct EventQueue {
    /// Largest number of queued events (`CK_EVENT_QUEUE_CAPACITY`).
    static let capacity = 256
    private var items: [GuidanceEvent] = []
    private var head = 0
    private(set) var dropped = 0

    var count: Int { items.count - head }

    mutating func push(_ e: GuidanceEvent) {
        if count >= EventQueue.capacity {
            head += 1
            dropped += 1
        }
        items.append(e)
        if head >= 64 && head * 2 >= items.count {  // compact now and then
            items.removeFirst(head)
            head = 0
        }
    }

    mutating func pop() -> GuidanceEvent? {
        guard head < items.count else { return nil }
        let e = items[head]
        head += 1
        if head == items.count { items.removeAll(keepingCapacity: true); head = 0 }
        return e
    }

    mutating func removeAll() { items.removeAll(keepingCapacity: true); head = 0; dropped = 0 }
}
