// MultiScan camera info (<scan>.jsonl, docs/FORMATS.md §2): one line per streamed frame.

/// One line of MultiScan's camera-info JSON lines (docs/FORMATS.md §2): `timestamp` (ns), `intrinsics`
/// (9 numbers, column-major 3×3: fx,0,0, 0,fy,0, cx,cy,1), `transform` (16 numbers, column-major
/// camera-to-world), `euler_angles` ([pitch, yaw, roll], ARKit's x, y, z), `exposure_duration` (ns)
/// and `quaternion` ([w, x, y, z]) — in that key order, as the MultiScan app writes them.
///
/// `quaternion` is the pose's rotation (w ≥ 0). (The MultiScan app derived its quaternion from the
/// Euler angles with another convention; its tools read `transform`.)
public struct CameraInfoRecord: Equatable, Sendable {
    /// Nanoseconds (the caller's clock).
    public var timestamp: Int64
    public var fx: Float, fy: Float, cx: Float, cy: Float
    /// Camera-to-world, OpenGL camera axes, column-major.
    public var transform: Matrix4
    /// [pitch, yaw, roll] radians (ARKit `eulerAngles` x, y, z).
    public var eulerAngles: SIMD3<Float>?
    /// Nanoseconds.
    public var exposureDuration: Int64?
    public var quaternion: Quaternion?

    public init(timestamp: Int64, fx: Float, fy: Float, cx: Float, cy: Float, transform: Matrix4,
                eulerAngles: SIMD3<Float>? = nil, exposureDuration: Int64? = nil, quaternion: Quaternion? = nil) {
        self.timestamp = timestamp; self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy
        self.transform = transform; self.eulerAngles = eulerAngles
        self.exposureDuration = exposureDuration; self.quaternion = quaternion
    }

    /// A record for a frame: Euler angles from `Pose.yawPitchRoll`, quaternion from `Pose.rotation`.
    public init(timestamp: Int64, intrinsics k: Intrinsics, pose: Pose, exposureDuration: Int64? = nil) {
        let e = pose.yawPitchRoll
        self.init(timestamp: timestamp, fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, transform: pose.matrix,
                  eulerAngles: SIMD3(e.pitch, e.yaw, e.roll), exposureDuration: exposureDuration, quaternion: pose.rotation)
    }

    /// Seconds → integer nanoseconds, rounded to nearest. - Throws: `invalidArgument` if not finite
    /// or beyond ±9.2e9 s.
    public static func nanoseconds(fromSeconds s: Double) throws(CaptureKitError) -> Int64 {
        let ns = (s * 1e9).rounded()
        guard ns.isFinite, let i = Int64(exactly: ns), abs(ns) < 9.2e18 else {
            throw .invalidArgument("timestamp \(s) s does not fit int64 nanoseconds")
        }
        return i
    }

    public func json() -> JSONValue {
        var o = JSONObject()
        o.appendNew("timestamp", .int(timestamp))
        // Structural zeros and the one as integers, as the MultiScan app writes them.
        o.appendNew("intrinsics", .array([.float(fx), .int(0), .int(0), .int(0), .float(fy), .int(0), .float(cx), .float(cy), .int(1)]))
        o.appendNew("transform", .floats(transform.columnMajor))
        if let e = eulerAngles { o.appendNew("euler_angles", .floats([e.x, e.y, e.z])) }
        if let x = exposureDuration { o.appendNew("exposure_duration", .int(x)) }
        if let q = quaternion { o.appendNew("quaternion", .floats([q.w, q.x, q.y, q.z])) }
        return .object(o)
    }

    /// The line's bytes, compact, ending with "\n". - Throws: `invalidArgument` for a non-finite number.
    public func line() throws(CaptureKitError) -> [UInt8] { try JSON.line(json()) }

    /// Reads one record (`timestamp`, `intrinsics`, `transform` required).
    public static func decode(_ node: JSONNode) throws(CaptureKitError) -> CameraInfoRecord {
        let k = try node.key("intrinsics").floats(count: 9)
        var r = CameraInfoRecord(timestamp: try node.key("timestamp").int64(), fx: k[0], fy: k[4], cx: k[6], cy: k[7],
                                 transform: try Matrix4(columnMajor: node.key("transform")))
        if let e = try node.optionalKey("euler_angles")?.floats(count: 3) { r.eulerAngles = SIMD3(e[0], e[1], e[2]) }
        r.exposureDuration = try node.optionalKey("exposure_duration")?.int64()
        if let q = try node.optionalKey("quaternion")?.floats(count: 4) { r.quaternion = Quaternion(x: q[1], y: q[2], z: q[3], w: q[0]) }
        return r
    }

    /// Reads a whole .jsonl. With `tolerateTornTail`, an unterminated last line that does not parse
    /// (a crash mid-append) is dropped and reported. - Throws: `corrupt` naming the line and key.
    public static func decodeLines(_ bytes: [UInt8], what: String = "camera info", tolerateTornTail: Bool = false)
        throws(CaptureKitError) -> (records: [CameraInfoRecord], tornTail: Bool) {
        let parsed = try JSON.parseLines(bytes, what: what, tolerateTornTail: tolerateTornTail)
        var records: [CameraInfoRecord] = []
        records.reserveCapacity(parsed.values.count)
        for (line, value) in parsed.values {
            records.append(try reading("\(what): line \(line)") { () throws(CaptureKitError) in try decode(JSONNode(value)) })
        }
        return (records, parsed.tornTail)
    }

    public static func read(from path: String, tolerateTornTail: Bool = false) throws(CaptureKitError) -> (records: [CameraInfoRecord], tornTail: Bool) {
        try decodeLines(FileIO.readAll(path), what: path, tolerateTornTail: tolerateTornTail)
    }
}

