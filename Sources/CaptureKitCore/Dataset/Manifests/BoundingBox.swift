// boundingbox.json (docs/FORMATS.md §5): the NeRFCapture-based object-capture app's box per pass.

/// The box of one capture pass (multi-pass datasets).
public struct BoxPass: Equatable, Sendable {
    public var pass: Int32
    public var box: Box
    public init(pass: Int32, box: Box) { self.pass = pass; self.box = box }
}

/// boundingbox.json (docs/FORMATS.md §5): the reference app's keys (`center`, `rad_rot_about_y`, the 8
/// named corner `positions` in the order of docs/DESIGN.md#the-box, an identity `entity_anchor_4x4`), plus `size` and
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

    /// Corner key names in corner order (docs/DESIGN.md#the-box).
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

