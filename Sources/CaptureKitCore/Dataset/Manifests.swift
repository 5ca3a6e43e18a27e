// The JSON files of a dataset (FORMATS.md §2–5): model types with writers and readers, all through
// `JSON` (json-c). Writers produce the bytes (and write them atomically on request); readers take
// bytes or a path and throw `corrupt` with the file name and the key path of the first problem.
// Every reader restores exactly what the matching writer wrote (numbers bit for bit).

// MARK: - Helpers

/// Runs a reader body, turning any error into `corrupt` prefixed with `what` (out of memory stays).
@inline(__always)
func reading<T>(_ what: String, _ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
    do {
        return try body()
    } catch {
        if error.status == .noMemory { throw error }
        throw .corrupt("\(what): \(error.message)")
    }
}

/// Pretty JSON text with a final newline (the manifests' layout).
func prettyFile(_ value: JSONValue) throws(CaptureKitError) -> [UInt8] {
    var bytes = try JSON.serialize(value, pretty: true)
    bytes.append(0x0A)
    return bytes
}

/// Writes bytes atomically (temp + fsync + rename + directory fsync).
func writeFile(_ bytes: [UInt8], to path: String, overwrite: Bool) throws(CaptureKitError) {
    try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
        try FileIO.writeAtomically(path, UnsafeRawBufferPointer(b), overwrite: overwrite)
    }
}

/// Manifests are small; a larger file is refused before reading it.
let manifestSizeLimit = 1 << 30

/// True if the last path component has a non-empty name and a non-empty extension ("a/b.png").
func hasExtension(_ path: String) -> Bool {
    let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    guard let dot = last.lastIndex(of: ".") else { return false }
    return dot != last.startIndex && last.index(after: dot) != last.endIndex
}

extension Matrix4 {
    /// Row-major nested lists `[[m00, m01, m02, m03], …]` (transforms.json, boundingbox.json).
    var rowMajorJSON: JSONValue {
        .array((0..<4).map { r in .floats((0..<4).map { c in self[r, c] }) })
    }

    /// Reads row-major nested lists (4 rows of 4 numbers).
    init(rowMajor node: JSONNode) throws(CaptureKitError) {
        var cols = [SIMD4<Float>](repeating: .zero, count: 4)
        for (r, row) in try node.array(count: 4).enumerated() {
            for (c, x) in try row.floats(count: 4).enumerated() { cols[c][r] = x }
        }
        self.init(cols[0], cols[1], cols[2], cols[3])
    }

    /// Reads 16 column-major numbers (MultiScan `transform`).
    init(columnMajor node: JSONNode) throws(CaptureKitError) {
        self.init(columnMajor: try node.floats(count: 16))
    }
}

// MARK: - transforms.json (nerfstudio, instant-ngp)

/// Lens distortion of the OPENCV camera model (top level of transforms.json).
public struct Distortion: Equatable, Sendable {
    public var k1: Float, k2: Float, p1: Float, p2: Float
    public init(k1: Float = 0, k2: Float = 0, p1: Float = 0, p2: Float = 0) {
        self.k1 = k1; self.k2 = k2; self.p1 = p1; self.p2 = p2
    }
}

/// One frame of transforms.json.
public struct TransformsFrame: Equatable, Sendable {
    /// Image path relative to the dataset, with its extension (nerfstudio opens it as given).
    /// Files read from other apps may lack the extension (the HMC app writes "images/0"); the
    /// reader keeps the text as it is.
    public var filePath: String
    /// Camera-to-world pose, OpenGL camera axes (looks down −z), column-major in memory; written
    /// as the row-major `transform_matrix`. Kept as a matrix (not a `Pose`) so that every element
    /// reads back bit-exactly, including a bottom row such as 0.99999994 from another app.
    public var transform: Matrix4
    public var intrinsics: Intrinsics
    /// The 16-bit millimetre depth PNG, written as both `depth_file_path` and `depth_path`.
    public var depthPath: String?
    /// instant-ngp's optional `sharpness`.
    public var sharpness: Float?
    /// Seconds (the caller's clock).
    public var timestamp: Double?
    /// CaptureKit extension (readers ignore it): the capture pass of the frame.
    public var pass: Int32?
    /// CaptureKit extension (readers ignore it): the dataset's frame id.
    public var frameID: Int64?

    public init(filePath: String, transform: Matrix4, intrinsics: Intrinsics, depthPath: String? = nil,
                sharpness: Float? = nil, timestamp: Double? = nil, pass: Int32? = nil, frameID: Int64? = nil) {
        self.filePath = filePath; self.transform = transform; self.intrinsics = intrinsics
        self.depthPath = depthPath; self.sharpness = sharpness; self.timestamp = timestamp
        self.pass = pass; self.frameID = frameID
    }
}

/// transforms.json as nerfstudio and instant-ngp load it (FORMATS.md §4).
///
/// Writing: `camera_model`, then `fl_x fl_y cx cy w h` taken from the **first** frame (none are
/// written when there are no frames, never placeholders), optional `k1 k2 p1 p2`,
/// `integer_depth_scale`, then `frames`. Each frame: `file_path`, `transform_matrix` (row-major
/// 4×4), `depth_file_path` and `depth_path` when it has depth, its own `fl_x fl_y cx cy w h` (all
/// six) only when any of them differs from the top level, `sharpness`, `timestamp`, and the
/// CaptureKit extensions `pass` and `frame_id`.
///
/// Reading: the top-level intrinsics are defaults for frames that lack a key, but only when all
/// six are present and form valid intrinsics (focal lengths > 0, sizes ≥ 1). Otherwise they are
/// *placeholders* (the HMC object-capture app writes `w 0, h 0, fl_x 1, …`) and are ignored: each
/// frame must then carry its own six values. `depth_file_path` is preferred over `depth_path`; the
/// HMC app's `depth_integer_scale` is read when `integer_depth_scale` is absent.
public struct TransformsManifest: Equatable, Sendable {
    /// "OPENCV" unless read otherwise.
    public var cameraModel: String
    public var distortion: Distortion?
    /// Metres per depth-PNG unit: 0.001 for millimetre PNGs.
    public var integerDepthScale: Double?
    public var frames: [TransformsFrame]

    public init(frames: [TransformsFrame] = [], integerDepthScale: Double? = nil, distortion: Distortion? = nil,
                cameraModel: String = "OPENCV") {
        self.frames = frames; self.integerDepthScale = integerDepthScale
        self.distortion = distortion; self.cameraModel = cameraModel
    }

    /// The document. - Throws: `invalidArgument` for a file path without an extension or an empty
    /// depth path (naming the frame), or a non-finite number (naming its key).
    public func json() throws(CaptureKitError) -> JSONValue {
        var top = JSONObject()
        top.appendNew("camera_model", .string(cameraModel))
        let first = frames.first?.intrinsics
        if let k = first { Self.appendIntrinsics(k, to: &top) }
        if let d = distortion {
            top.appendNew("k1", .float(d.k1)); top.appendNew("k2", .float(d.k2))
            top.appendNew("p1", .float(d.p1)); top.appendNew("p2", .float(d.p2))
        }
        if let s = integerDepthScale { top.appendNew("integer_depth_scale", .double(s)) }
        var list: [JSONValue] = []
        list.reserveCapacity(frames.count)
        for (i, f) in frames.enumerated() {
            guard hasExtension(f.filePath) else {
                throw .invalidArgument("frames[\(i)].file_path \"\(f.filePath)\" needs an extension (nerfstudio opens it as given)")
            }
            var o = JSONObject()
            o.appendNew("file_path", .string(f.filePath))
            o.appendNew("transform_matrix", f.transform.rowMajorJSON)
            if let d = f.depthPath {
                guard !d.isEmpty else { throw .invalidArgument("frames[\(i)].depth_path is empty") }
                o.appendNew("depth_file_path", .string(d))
                o.appendNew("depth_path", .string(d))
            }
            if let first, !Self.sameBits(f.intrinsics, first) { Self.appendIntrinsics(f.intrinsics, to: &o) }
            if let s = f.sharpness { o.appendNew("sharpness", .float(s)) }
            if let t = f.timestamp { o.appendNew("timestamp", .double(t)) }
            if let p = f.pass { o.appendNew("pass", .int(Int64(p))) }
            if let id = f.frameID { o.appendNew("frame_id", .int(id)) }
            list.append(.object(o))
        }
        top.appendNew("frames", .array(list))
        return .object(top)
    }

    /// Bitwise equality (so that −0.0 and 0.0 differ and each frame reads back exactly).
    static func sameBits(_ a: Intrinsics, _ b: Intrinsics) -> Bool {
        a.fx.bitPattern == b.fx.bitPattern && a.fy.bitPattern == b.fy.bitPattern && a.cx.bitPattern == b.cx.bitPattern
            && a.cy.bitPattern == b.cy.bitPattern && a.width == b.width && a.height == b.height
    }

    private static func appendIntrinsics(_ k: Intrinsics, to o: inout JSONObject) {
        o.appendNew("fl_x", .float(k.fx)); o.appendNew("fl_y", .float(k.fy))
        o.appendNew("cx", .float(k.cx)); o.appendNew("cy", .float(k.cy))
        o.appendNew("w", .int(Int64(k.width))); o.appendNew("h", .int(Int64(k.height)))
    }

    /// The file's bytes (pretty, 2-space indent, final newline).
    public func encode() throws(CaptureKitError) -> [UInt8] { try prettyFile(json()) }

    /// Writes the file atomically. - Throws: as `encode`, and `state` if it exists without `overwrite`, `io`.
    public func write(to path: String, overwrite: Bool) throws(CaptureKitError) {
        try writeFile(encode(), to: path, overwrite: overwrite)
    }

    /// Reads a transforms.json. - Throws: `corrupt` naming the key, `notFound`, `io`.
    public static func read(from path: String) throws(CaptureKitError) -> TransformsManifest {
        try decode(FileIO.readAll(path, limit: manifestSizeLimit), what: path)
    }

    /// Parses transforms.json bytes; `what` names the input in messages.
    public static func decode(_ bytes: [UInt8], what: String = "transforms.json") throws(CaptureKitError) -> TransformsManifest {
        let root = JSONNode(try JSON.parse(bytes, what: what))
        return try reading(what) { () throws(CaptureKitError) in try decode(root) }
    }

    static let intrinsicKeys = ["fl_x", "fl_y", "cx", "cy", "w", "h"]

    /// Reads the six intrinsics keys of `node` that are present (nil for absent ones).
    private static func intrinsicValues(_ node: JSONNode) throws(CaptureKitError) -> [Double?] {
        var values: [Double?] = []
        for (i, key) in intrinsicKeys.enumerated() {
            guard let v = try node.optionalKey(key) else { values.append(nil); continue }
            values.append(i < 4 ? Double(try v.float()) : Double(try v.int(in: 0...Int64(UInt32.max))))
        }
        return values
    }

    private static func intrinsics(_ v: [Double], _ name: String) throws(CaptureKitError) -> Intrinsics {
        try Intrinsics(fx: Float(v[0]), fy: Float(v[1]), cx: Float(v[2]), cy: Float(v[3]),
                       width: UInt32(v[4]), height: UInt32(v[5]), name: name)
    }

    static func decode(_ root: JSONNode) throws(CaptureKitError) -> TransformsManifest {
        _ = try root.object()
        var m = TransformsManifest(cameraModel: try root.optionalKey("camera_model")?.string() ?? "OPENCV")
        // Top-level intrinsics: defaults only when complete and valid, else placeholders (ignored).
        let top = try intrinsicValues(root)
        var defaults: [Double]? = nil
        if top.allSatisfy({ $0 != nil }) {
            let v = top.map { $0 ?? 0 }
            if (try? intrinsics(v, "top-level intrinsics")) != nil { defaults = v }
        }
        let distortionKeys = ["k1", "k2", "p1", "p2"]
        var d: [Float] = [0, 0, 0, 0]
        var hasDistortion = false
        for (i, k) in distortionKeys.enumerated() {
            if let v = try root.optionalKey(k) { d[i] = try v.float(); hasDistortion = true }
        }
        if hasDistortion { m.distortion = Distortion(k1: d[0], k2: d[1], p1: d[2], p2: d[3]) }
        m.integerDepthScale = try root.optionalKey("integer_depth_scale", or: "depth_integer_scale")?.double()

        let frames = try root.key("frames").array()
        m.frames.reserveCapacity(frames.count)
        for f in frames {
            _ = try f.object()
            let own = try intrinsicValues(f)
            var values: [Double] = []
            for (i, v) in own.enumerated() {
                guard let x = v ?? defaults?[i] else {
                    throw f.error("missing \(intrinsicKeys[i]) (the top-level intrinsics are placeholders or absent)")
                }
                values.append(x)
            }
            let k: Intrinsics
            do { k = try intrinsics(values, "intrinsics") } catch { throw f.error(error.message) }
            var frame = TransformsFrame(filePath: try f.key("file_path").string(),
                                        transform: try Matrix4(rowMajor: f.key("transform_matrix")), intrinsics: k)
            frame.depthPath = try f.optionalKey("depth_file_path", or: "depth_path")?.string()
            frame.sharpness = try f.optionalKey("sharpness")?.float()
            frame.timestamp = try f.optionalKey("timestamp")?.double()
            frame.pass = try f.optionalKey("pass").map { (n) throws(CaptureKitError) in Int32(try n.int(in: Int64(Int32.min)...Int64(Int32.max))) }
            frame.frameID = try f.optionalKey("frame_id")?.int64()
            m.frames.append(frame)
        }
        return m
    }
}

// MARK: - boundingbox.json (the NeRFCapture-based object-capture app)

/// The box of one capture pass (multi-pass datasets).
public struct BoxPass: Equatable, Sendable {
    public var pass: Int32
    public var box: Box
    public init(pass: Int32, box: Box) { self.pass = pass; self.box = box }
}

/// boundingbox.json (FORMATS.md §5): the reference app's keys (`center`, `rad_rot_about_y`, the 8
/// named corner `positions` in DESIGN.md order, an identity `entity_anchor_4x4`), plus `size` and
/// `floor` (number or null) so the box reads back exactly, and optionally `passes`: one object of
/// the same shape per capture pass, each with its `pass` number.
///
/// Reading a file without `size` (the reference app's) derives the size from the corners
/// (top_left_front → top_right_front, → bot_left_front, → top_left_back) and checks that all 8
/// corners match the box within 1 mm.
public struct BoundingBoxManifest: Equatable, Sendable {
    public var box: Box
    public var passes: [BoxPass]

    public init(box: Box, passes: [BoxPass] = []) { self.box = box; self.passes = passes }

    /// The box of capture pass `pass`: the listed pass, or for pass 0 the top-level box (a file
    /// without passes, e.g. the reference app's). nil if there is no such pass.
    public func box(forPass pass: UInt32) -> Box? {
        if let b = passes.first(where: { Int64($0.pass) == Int64(pass) }) { return b.box }
        return pass == 0 ? box : nil
    }

    /// Corner key names in corner order (DESIGN.md).
    public static let cornerNames = ["top_left_front", "top_right_front", "bot_right_front", "bot_left_front",
                                     "top_left_back", "top_right_back", "bot_right_back", "bot_left_back"]

    static func boxObject(_ box: Box, pass: Int32? = nil) -> JSONObject {
        var o = JSONObject()
        if let pass { o.appendNew("pass", .int(Int64(pass))) }
        o.appendNew("center", .xyz(box.center))
        o.appendNew("rad_rot_about_y", .float(box.yaw))
        let corners = box.corners
        o.appendNew("positions", .object(JSONObject(uniqueKeys: (0..<8).map { (cornerNames[$0], .xyz(corners[$0])) })))
        o.appendNew("entity_anchor_4x4", Matrix4.identity.rowMajorJSON)
        o.appendNew("size", .xyz(box.size))
        o.appendNew("floor", .float(orNull: box.floor))
        return o
    }

    public func json() -> JSONValue {
        var o = Self.boxObject(box)
        if !passes.isEmpty { o.appendNew("passes", .array(passes.map { .object(Self.boxObject($0.box, pass: $0.pass)) })) }
        return .object(o)
    }

    public func encode() throws(CaptureKitError) -> [UInt8] { try prettyFile(json()) }

    public func write(to path: String, overwrite: Bool) throws(CaptureKitError) {
        try writeFile(encode(), to: path, overwrite: overwrite)
    }

    public static func read(from path: String) throws(CaptureKitError) -> BoundingBoxManifest {
        try decode(FileIO.readAll(path, limit: manifestSizeLimit), what: path)
    }

    public static func decode(_ bytes: [UInt8], what: String = "boundingbox.json") throws(CaptureKitError) -> BoundingBoxManifest {
        let root = JSONNode(try JSON.parse(bytes, what: what))
        return try reading(what) { () throws(CaptureKitError) in
            var m = BoundingBoxManifest(box: try decodeBox(root))
            if let list = try root.optionalKey("passes") {
                for p in try list.array() {
                    m.passes.append(BoxPass(pass: Int32(try p.key("pass").int(in: Int64(Int32.min)...Int64(Int32.max))),
                                            box: try decodeBox(p)))
                }
            }
            return m
        }
    }

    /// One box object (top level or a pass).
    static func decodeBox(_ node: JSONNode) throws(CaptureKitError) -> Box {
        let center = try node.key("center").xyz()
        let yaw = try node.key("rad_rot_about_y").float()
        let positions = try node.key("positions")
        var corners: [Vec3] = []
        for name in cornerNames { corners.append(try positions.key(name).xyz()) }
        let floor = try node.optionalKey("floor")?.float()
        let size: Vec3
        if let s = try node.optionalKey("size") {
            size = try s.xyz()
        } else {
            func distance(_ a: Int, _ b: Int) -> Float {
                let d = SIMD3<Double>(corners[a]) - SIMD3<Double>(corners[b])
                return Float(dot(d, d).squareRoot())
            }
            size = Vec3(distance(1, 0), distance(0, 3), distance(4, 0))
        }
        let box: Box
        do {
            box = try Box(center: center, size: size, yaw: yaw, floor: floor, seat: false)
        } catch {
            throw node.error(error.message)
        }
        // The corners must describe this box (1 mm, plus float rounding of large coordinates).
        for (i, c) in box.corners.enumerated() {
            let tol = 1e-3 + 1e-6 * Double(max(abs(c.x), abs(c.y), abs(c.z)))
            guard maxAbs(SIMD3<Double>(c) - SIMD3<Double>(corners[i])) <= tol else {
                throw .corrupt("\(node.child(key: "positions")).\(cornerNames[i]): \(corners[i].text) is not a corner of the box with this center, size and rad_rot_about_y (expected \(c.text))")
            }
        }
        return box
    }
}

@inline(__always) private func maxAbs(_ v: SIMD3<Double>) -> Double { max(abs(v.x), abs(v.y), abs(v.z)) }

// MARK: - MultiScan camera info (<scan>.jsonl)

/// One line of MultiScan's camera-info JSON lines (FORMATS.md §2): `timestamp` (ns), `intrinsics`
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

// MARK: - MultiScan scan metadata (<scan>.json)

/// A stream's image size, written `[height, width]` as MultiScan does.
public struct StreamResolution: Equatable, Sendable {
    public var height: Int64, width: Int64
    public init(height: Int64, width: Int64) { self.height = height; self.width = width }
}

/// One entry of the metadata's `streams`.
public struct ScanStream: Equatable, Sendable {
    public var id: String
    public var type: String
    public var encoding: String
    public var frequency: Int64
    public var numberOfFrames: Int64
    public var fileExtension: String
    public var resolution: StreamResolution?
    /// Camera streams write `intrinsics` (9 numbers column-major, or null) and `extrinsics` (null).
    public var hasCameraFields: Bool
    public var intrinsics: [Float]?

    public init(id: String, type: String, encoding: String, frequency: Int64, numberOfFrames: Int64, fileExtension: String,
                resolution: StreamResolution? = nil, hasCameraFields: Bool = false, intrinsics: [Float]? = nil) {
        self.id = id; self.type = type; self.encoding = encoding; self.frequency = frequency
        self.numberOfFrames = numberOfFrames; self.fileExtension = fileExtension; self.resolution = resolution
        self.hasCameraFields = hasCameraFields; self.intrinsics = intrinsics
    }

    /// The colour camera (`color_back_1`), e.g. encoding "h264" / extension "mp4" as the app, or
    /// the dataset's own image encoding.
    public static func colorCamera(encoding: String, fileExtension: String, frequency: Int64, frames: Int64,
                                   intrinsics k: Intrinsics) -> ScanStream {
        ScanStream(id: "color_back_1", type: "color_camera", encoding: encoding, frequency: frequency, numberOfFrames: frames,
                   fileExtension: fileExtension, resolution: StreamResolution(height: Int64(k.height), width: Int64(k.width)),
                   hasCameraFields: true, intrinsics: [k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1])
    }

    /// The LiDAR depth stream (`depth_back_1`, float16 metres, raw DEFLATE).
    public static func depth(frequency: Int64, frames: Int64, width: Int64, height: Int64) -> ScanStream {
        ScanStream(id: "depth_back_1", type: "lidar_sensor", encoding: "float16_zlib", frequency: frequency, numberOfFrames: frames,
                   fileExtension: "depth.zlib", resolution: StreamResolution(height: height, width: width), hasCameraFields: true)
    }

    /// The confidence stream (`confidence_map`, uint8 0–2, raw DEFLATE). The app writes no
    /// resolution (readers use the depth stream's); pass one to add it.
    public static func confidence(frequency: Int64, frames: Int64, resolution: StreamResolution? = nil) -> ScanStream {
        ScanStream(id: "confidence_map", type: "confidence_map", encoding: "uint8_zlib", frequency: frequency,
                   numberOfFrames: frames, fileExtension: "confidence.zlib", resolution: resolution)
    }

    /// The camera-info JSON lines (`camera_info_color_back_1`).
    public static func cameraInfo(frequency: Int64, frames: Int64) -> ScanStream {
        ScanStream(id: "camera_info_color_back_1", type: "camera_info", encoding: "jsonl", frequency: frequency,
                   numberOfFrames: frames, fileExtension: "jsonl")
    }
}

/// MultiScan's scan metadata `<scan>.json` (FORMATS.md §3).
///
/// Written in the app's key order: `device {id, type, name}`, `user {name}`, `scene {description,
/// type, gps_location}`, `streams`, `number_of_files`, then `depth_unit`,
/// `depth_confidence_value_range`, `camera_orientation_quaternion_format`,
/// `camera_orientation_euler_angles_format` and the confidence flag under both spellings
/// (`depth_confidence_avaliable`, the app's, and `depth_confidence_available`, the docs'). The keys
/// after `number_of_files` are optional on reading (the sample file lacks them) and nil then.
public struct ScanMetadata: Equatable, Sendable {
    public var deviceID: String, deviceType: String, deviceName: String
    public var userName: String
    public var sceneDescription: String, sceneType: String
    /// [latitude, longitude], or nil (written as an empty list, as the app does without a fix).
    public var gpsLocation: [Double]?
    public var streams: [ScanStream]
    public var numberOfFiles: Int64
    public var depthUnit: String?
    public var depthConfidenceValueRange: [Int64]?
    public var quaternionFormat: String?
    public var eulerAnglesFormat: String?
    public var depthConfidenceAvailable: Bool?

    /// Metadata with the standard values (`"m"`, `[0, 2]`, `"wxyz"`, `"xyz"`).
    public init(deviceID: String, deviceType: String, deviceName: String, userName: String = "",
                sceneDescription: String = "", sceneType: String = "", gpsLocation: [Double]? = nil,
                streams: [ScanStream], numberOfFiles: Int64, depthConfidenceAvailable: Bool = true) {
        self.deviceID = deviceID; self.deviceType = deviceType; self.deviceName = deviceName
        self.userName = userName; self.sceneDescription = sceneDescription; self.sceneType = sceneType
        self.gpsLocation = gpsLocation; self.streams = streams; self.numberOfFiles = numberOfFiles
        self.depthUnit = "m"; self.depthConfidenceValueRange = [0, 2]
        self.quaternionFormat = "wxyz"; self.eulerAnglesFormat = "xyz"
        self.depthConfidenceAvailable = depthConfidenceAvailable
    }

    public func json() -> JSONValue {
        var o = JSONObject()
        o.appendNew("device", .object(JSONObject(uniqueKeys: [("id", .string(deviceID)), ("type", .string(deviceType)), ("name", .string(deviceName))])))
        o.appendNew("user", .object(JSONObject(uniqueKeys: [("name", .string(userName))])))
        o.appendNew("scene", .object(JSONObject(uniqueKeys: [("description", .string(sceneDescription)), ("type", .string(sceneType)),
                                                               ("gps_location", .doubles(gpsLocation ?? []))])))
        o.appendNew("streams", .array(streams.map { s in
            var so = JSONObject()
            so.appendNew("id", .string(s.id)); so.appendNew("type", .string(s.type)); so.appendNew("encoding", .string(s.encoding))
            so.appendNew("frequency", .int(s.frequency)); so.appendNew("number_of_frames", .int(s.numberOfFrames))
            so.appendNew("file_extension", .string(s.fileExtension))
            if let r = s.resolution { so.appendNew("resolution", .ints([r.height, r.width])) }
            if s.hasCameraFields {
                so.appendNew("intrinsics", s.intrinsics.map { .floats($0) } ?? .null)
                so.appendNew("extrinsics", .null)
            }
            return .object(so)
        }))
        o.appendNew("number_of_files", .int(numberOfFiles))
        if let u = depthUnit { o.appendNew("depth_unit", .string(u)) }
        if let r = depthConfidenceValueRange { o.appendNew("depth_confidence_value_range", .ints(r)) }
        if let q = quaternionFormat { o.appendNew("camera_orientation_quaternion_format", .string(q)) }
        if let e = eulerAnglesFormat { o.appendNew("camera_orientation_euler_angles_format", .string(e)) }
        if let a = depthConfidenceAvailable {
            o.appendNew("depth_confidence_avaliable", .bool(a))
            o.appendNew("depth_confidence_available", .bool(a))
        }
        return .object(o)
    }

    public func encode() throws(CaptureKitError) -> [UInt8] { try prettyFile(json()) }

    public func write(to path: String, overwrite: Bool) throws(CaptureKitError) {
        try writeFile(encode(), to: path, overwrite: overwrite)
    }

    public static func read(from path: String) throws(CaptureKitError) -> ScanMetadata {
        try decode(FileIO.readAll(path, limit: manifestSizeLimit), what: path)
    }

    public static func decode(_ bytes: [UInt8], what: String = "metadata") throws(CaptureKitError) -> ScanMetadata {
        let root = JSONNode(try JSON.parse(bytes, what: what))
        return try reading(what) { () throws(CaptureKitError) in
            let device = try root.key("device"), scene = try root.key("scene")
            var streams: [ScanStream] = []
            for s in try root.key("streams").array() {
                var stream = ScanStream(id: try s.key("id").string(), type: try s.key("type").string(),
                                        encoding: try s.key("encoding").string(), frequency: try s.key("frequency").int64(),
                                        numberOfFrames: try s.key("number_of_frames").int64(),
                                        fileExtension: try s.key("file_extension").string())
                if let r = try s.optionalKey("resolution")?.array(count: 2) {
                    stream.resolution = StreamResolution(height: try r[0].int64(), width: try r[1].int64())
                }
                let hasIntrinsics = try s.has("intrinsics"), hasExtrinsics = try s.has("extrinsics")
                stream.hasCameraFields = hasIntrinsics || hasExtrinsics
                stream.intrinsics = try s.optionalKey("intrinsics")?.floats(count: 9)
                streams.append(stream)
            }
            var m = ScanMetadata(deviceID: try device.key("id").string(), deviceType: try device.key("type").string(),
                                 deviceName: try device.key("name").string(), userName: try root.key("user").key("name").string(),
                                 sceneDescription: try scene.key("description").string(), sceneType: try scene.key("type").string(),
                                 streams: streams, numberOfFiles: try root.key("number_of_files").int64())
            if let g = try scene.optionalKey("gps_location") {
                var values: [Double] = []
                for v in try g.array() { values.append(try v.double()) }
                m.gpsLocation = values.isEmpty ? nil : values
            }
            m.depthUnit = try root.optionalKey("depth_unit")?.string()
            if let r = try root.optionalKey("depth_confidence_value_range") {
                var values: [Int64] = []
                for v in try r.array() { values.append(try v.int64()) }
                m.depthConfidenceValueRange = values
            } else {
                m.depthConfidenceValueRange = nil
            }
            m.quaternionFormat = try root.optionalKey("camera_orientation_quaternion_format")?.string()
            m.eulerAnglesFormat = try root.optionalKey("camera_orientation_euler_angles_format")?.string()
            m.depthConfidenceAvailable = try root.optionalKey("depth_confidence_available", or: "depth_confidence_avaliable")?.bool()
            return m
        }
    }
}

/// MultiScan scan ids.
public enum ScanID {
    /// The iOS app's id: `yyyyMMdd'T'HHmmssZ` + `_` + device id, e.g.
    /// `20230615T103000+0000_2CE7F809-…`. `Z` in that Unicode date pattern is the RFC 822 offset
    /// (`+0000` for UTC, `-0700` …); the date and time are local to that offset, as on the phone.
    /// - Parameters:
    ///   - unixSeconds: the scan's start, seconds since 1970-01-01T00:00:00Z (the caller's clock).
    ///   - utcOffsetMinutes: the local time zone's offset (0 = UTC), within ±18 h.
    /// - Throws: `invalidArgument` for a device id that is not a file name (`PathRules.checkName`), an offset
    ///   beyond ±18 h, or a date outside the years 0...9999.
    public static func make(unixSeconds: Int64, deviceID: String, utcOffsetMinutes: Int = 0) throws(CaptureKitError) -> String {
        try PathRules.checkName(deviceID, "device id")
        guard utcOffsetMinutes >= -18 * 60, utcOffsetMinutes <= 18 * 60 else { throw .invalidArgument("utc offset \(utcOffsetMinutes) min is beyond ±18 h") }
        // Years 0...9999: −62167219200 (0000-01-01) to 253402300799 (9999-12-31T23:59:59).
        let (local, overflow) = unixSeconds.addingReportingOverflow(Int64(utcOffsetMinutes) * 60)
        guard !overflow, local >= -62_167_219_200, local <= 253_402_300_799 else {
            throw .invalidArgument("unix time \(unixSeconds) is outside the years 0...9999")
        }
        let sign = utcOffsetMinutes < 0 ? "-" : "+"
        let off = abs(utcOffsetMinutes)
        let hh = off / 60, mm = off % 60
        let zone = sign + (hh < 10 ? "0" : "") + String(hh) + (mm < 10 ? "0" : "") + String(mm)
        return CivilTime(unixSeconds: local).compactText + zone + "_" + deviceID
    }
}

// MARK: - events.jsonl

/// One line of the dataset's events log: `timestamp` (seconds), `code` (the stable `CK_EVENT_*`
/// number), `name`, `text` (the operator message), then any extra fields in the given order.
public struct EventRecord: Equatable, Sendable {
    public var timestamp: Double
    public var code: Int32
    public var name: String
    public var text: String
    /// Extra fields (e.g. `face`, `value`, `frame_id`); must not reuse the four keys above.
    public var fields: JSONObject

    public static let reservedKeys: Set<String> = ["timestamp", "code", "name", "text"]

    public init(timestamp: Double, code: Int32, name: String, text: String, fields: JSONObject = JSONObject()) {
        self.timestamp = timestamp; self.code = code; self.name = name; self.text = text; self.fields = fields
    }

    /// - Throws: `invalidArgument` if an extra field reuses a reserved key.
    public func json() throws(CaptureKitError) -> JSONValue {
        var o = JSONObject()
        o.appendNew("timestamp", .double(timestamp))
        o.appendNew("code", .int(Int64(code)))
        o.appendNew("name", .string(name))
        o.appendNew("text", .string(text))
        for (k, v) in fields.members {
            guard !Self.reservedKeys.contains(k) else { throw .invalidArgument("event field \"\(k)\" is reserved") }
            o.appendNew(k, v)
        }
        return .object(o)
    }

    /// The line's bytes, compact, ending with "\n". - Throws: `invalidArgument` (reserved key, non-finite number).
    public func line() throws(CaptureKitError) -> [UInt8] { try JSON.line(json()) }

    public static func decode(_ node: JSONNode) throws(CaptureKitError) -> EventRecord {
        var extra = try node.object()
        for k in reservedKeys { extra[k] = nil }
        return EventRecord(timestamp: try node.key("timestamp").double(),
                           code: Int32(try node.key("code").int(in: Int64(Int32.min)...Int64(Int32.max))),
                           name: try node.key("name").string(), text: try node.key("text").string(), fields: extra)
    }

    /// Reads a whole events.jsonl (see `CameraInfoRecord.decodeLines` for `tolerateTornTail`).
    public static func decodeLines(_ bytes: [UInt8], what: String = "events.jsonl", tolerateTornTail: Bool = false)
        throws(CaptureKitError) -> (records: [EventRecord], tornTail: Bool) {
        let parsed = try JSON.parseLines(bytes, what: what, tolerateTornTail: tolerateTornTail)
        var records: [EventRecord] = []
        for (line, value) in parsed.values {
            records.append(try reading("\(what): line \(line)") { () throws(CaptureKitError) in try decode(JSONNode(value)) })
        }
        return (records, parsed.tornTail)
    }

    public static func read(from path: String, tolerateTornTail: Bool = false) throws(CaptureKitError) -> (records: [EventRecord], tornTail: Bool) {
        try decodeLines(FileIO.readAll(path), what: path, tolerateTornTail: tolerateTornTail)
    }
}
