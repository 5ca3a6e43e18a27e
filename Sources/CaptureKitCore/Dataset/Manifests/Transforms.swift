// transforms.json (docs/FORMATS.md §4): nerfstudio's and instant-ngp's camera manifest.

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
    /// CaptureKit extension (readers ignore it): the frame's index in the MultiScan streams
    /// (`multiscan_frame`: its depth/confidence frame and camera-info line), when it was streamed.
    public var streamIndex: Int64?

    public init(filePath: String, transform: Matrix4, intrinsics: Intrinsics, depthPath: String? = nil,
                sharpness: Float? = nil, timestamp: Double? = nil, pass: Int32? = nil, frameID: Int64? = nil,
                streamIndex: Int64? = nil) {
        self.filePath = filePath; self.transform = transform; self.intrinsics = intrinsics
        self.depthPath = depthPath; self.sharpness = sharpness; self.timestamp = timestamp
        self.pass = pass; self.frameID = frameID; self.streamIndex = streamIndex
    }
}

/// transforms.json as nerfstudio and instant-ngp load it (docs/FORMATS.md §4).
///
/// Writing: `camera_model`, then `fl_x fl_y cx cy w h` when every frame has the same intrinsics
/// (none when there are no frames, never placeholders), optional `k1 k2 p1 p2`,
/// `integer_depth_scale`, `ply_file_path` (when the dataset has an initial point cloud), then
/// `frames`. Each frame: `file_path`, `transform_matrix` (row-major
/// 4×4), `depth_file_path` and `depth_path` when it has depth, its own `fl_x fl_y cx cy w h` (all
/// six) when the frames' intrinsics differ (then there are no top-level ones: nerfstudio would
/// apply those to every frame), `sharpness`, `timestamp`, and the CaptureKit extensions `pass` and
/// `frame_id`, and `multiscan_frame` (the frame's index in the MultiScan streams) when streamed.
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
    /// nerfstudio's `ply_file_path`: the initial point cloud (world coordinates, the frames'
    /// frame), relative to the dataset; splatfacto initialises its Gaussians from it.
    public var plyFilePath: String?

    public init(frames: [TransformsFrame] = [], integerDepthScale: Double? = nil, distortion: Distortion? = nil,
                cameraModel: String = "OPENCV", plyFilePath: String? = nil) {
        self.frames = frames; self.integerDepthScale = integerDepthScale
        self.distortion = distortion; self.cameraModel = cameraModel; self.plyFilePath = plyFilePath
    }

    /// The document. - Throws: `invalidArgument` for a file path without an extension or an empty
    /// depth path (naming the frame), or a non-finite number (naming its key).
    public func json() throws(CaptureKitError) -> JSONValue {
        var top = JSONObject()
        top.appendNew("camera_model", .string(cameraModel))
        // Top-level intrinsics only when every frame shares them: nerfstudio (1.1.5) applies the
        // top-level keys to every frame whenever they exist, ignoring a frame's own.
        let first = frames.first?.intrinsics
        let shared = first.flatMap { k in frames.allSatisfy { Self.sameBits($0.intrinsics, k) } ? k : nil }
        if let k = shared { Self.appendIntrinsics(k, to: &top) }
        if let d = distortion {
            top.appendNew("k1", .float(d.k1)); top.appendNew("k2", .float(d.k2))
            top.appendNew("p1", .float(d.p1)); top.appendNew("p2", .float(d.p2))
        }
        if let s = integerDepthScale { top.appendNew("integer_depth_scale", .double(s)) }
        if let p = plyFilePath { top.appendNew("ply_file_path", .string(p)) }
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
            if shared == nil { Self.appendIntrinsics(f.intrinsics, to: &o) }
            if let s = f.sharpness { o.appendNew("sharpness", .float(s)) }
            if let t = f.timestamp { o.appendNew("timestamp", .double(t)) }
            if let p = f.pass { o.appendNew("pass", .int(Int64(p))) }
            if let id = f.frameID { o.appendNew("frame_id", .int(id)) }
            if let s = f.streamIndex { o.appendNew("multiscan_frame", .int(s)) }
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
        m.plyFilePath = try root.optionalKey("ply_file_path")?.string()

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
            frame.streamIndex = try f.optionalKey("multiscan_frame")?.int64()
            m.frames.append(frame)
        }
        return m
    }
}

