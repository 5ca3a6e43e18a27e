import Glibc

/// A key path for messages: `frames[3].transform_matrix[2][1]`, built only when a message needs it.
struct KeyPath {
    private enum Component { case key(String), index(Int) }
    private var components: [Component] = []

    mutating func push(key: String) { components.append(.key(key)) }
    mutating func push(index: Int) { components.append(.index(index)) }
    mutating func pop() { components.removeLast() }

    var text: String {
        if components.isEmpty { return "(top level)" }
        var s = ""
        for c in components {
            switch c {
            case .key(let k): s += s.isEmpty ? k : ".\(k)"
            case .index(let i): s += "[\(i)]"
            }
        }
        return s
    }
}

/// A value inside a parsed document, with its key path, for typed reading.
///
/// Every getter throws `corrupt` with a message starting with the key path, e.g.
/// `frames[3].transform_matrix[2][1]: expected a number`.
public struct JSONNode {
    public let value: JSONValue
    /// The key path (`frames[3].fl_x`); empty for the top level.
    public let path: String

    public init(_ value: JSONValue, path: String = "") {
        self.value = value
        self.path = path
    }

    /// The path for messages.
    public var name: String { path.isEmpty ? "(top level)" : path }

    func child(key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// A `corrupt` error about this value.
    public func error(_ message: String) -> CaptureKitError { .corrupt("\(name): \(message)") }

    public var isNull: Bool { if case .null = value { return true } else { return false } }

    /// The object's members. - Throws: `corrupt` if this is not an object.
    public func object() throws(CaptureKitError) -> JSONObject {
        guard case .object(let o) = value else { throw error("expected an object") }
        return o
    }

    /// The value of `key` (which may be null). - Throws: `corrupt` if missing or not an object.
    public func key(_ key: String) throws(CaptureKitError) -> JSONNode {
        guard let v = try object()[key] else { throw .corrupt("\(child(key: key)): missing") }
        return JSONNode(v, path: child(key: key))
    }

    /// The value of `key`, nil if the key is absent or null. - Throws: `corrupt` if not an object.
    public func optionalKey(_ key: String) throws(CaptureKitError) -> JSONNode? {
        guard let v = try object()[key] else { return nil }
        if case .null = v { return nil }
        return JSONNode(v, path: child(key: key))
    }

    /// The value of `key`, else of `fallback` (a second spelling), nil if both are absent or null.
    public func optionalKey(_ key: String, or fallback: String) throws(CaptureKitError) -> JSONNode? {
        if let v = try optionalKey(key) { return v }
        return try optionalKey(fallback)
    }

    /// True if the object has `key` (possibly null). - Throws: `corrupt` if not an object.
    public func has(_ key: String) throws(CaptureKitError) -> Bool { try object()[key] != nil }

    /// The array's elements. - Throws: `corrupt` if this is not an array (of `count` elements).
    public func array(count: Int? = nil) throws(CaptureKitError) -> [JSONNode] {
        guard case .array(let items) = value else { throw error(count.map { "expected an array of \($0)" } ?? "expected an array") }
        if let count, items.count != count { throw error("expected an array of \(count) (got \(items.count))") }
        var nodes: [JSONNode] = []
        nodes.reserveCapacity(items.count)
        for (i, v) in items.enumerated() { nodes.append(JSONNode(v, path: "\(path)[\(i)]")) }
        return nodes
    }

    /// A finite `Float`, read with one correctly rounded conversion from the literal.
    /// - Throws: `corrupt` if not a number, not finite or beyond the `Float` range.
    public func float() throws(CaptureKitError) -> Float {
        if let f = JSONNode.finiteFloat(value) { return f }
        throw error(value.isNumber ? "expected a finite number within the Float range" : "expected a number")
    }

    /// The finite `Float` of a number value, else nil.
    @inline(__always)
    static func finiteFloat(_ value: JSONValue) -> Float? {
        let f: Float?
        switch value {
        case .int(let i): f = Float(i)
        case .float(let x): f = x
        case .double(let d): f = Float(d)
        case .number(let text): f = Float(text)
        default: return nil
        }
        guard let f, f.isFinite else { return nil }
        return f
    }

    /// The bit pattern of `float()`, nil if it throws (for equality).
    var floatBits: UInt32? { (try? float())?.bitPattern }

    /// A finite `Double`. - Throws: `corrupt` if not a number or not finite.
    public func double() throws(CaptureKitError) -> Double {
        let d: Double?
        switch value {
        case .int(let i): d = Double(i)
        case .float(let x): d = Double(x)
        case .double(let x): d = x
        case .number(let text): d = Double(text)
        default: throw error("expected a number")
        }
        guard let d, d.isFinite else { throw error("expected a finite number") }
        return d
    }

    /// An integer (a number with an integral value such as `3.0` is accepted).
    /// - Throws: `corrupt` if not a number, not integral or beyond `Int64`.
    public func int64() throws(CaptureKitError) -> Int64 {
        switch value {
        case .int(let i): return i
        case .number(let text) where Int64(text) != nil: return Int64(text) ?? 0
        case .float, .double, .number:
            guard let i = Int64(exactly: try double()) else { throw error("expected an integer within the Int64 range") }
            return i
        default: throw error("expected an integer")
        }
    }

    /// An integer within `range`. - Throws: `corrupt` otherwise.
    public func int(in range: ClosedRange<Int64>) throws(CaptureKitError) -> Int64 {
        let i = try int64()
        guard range.contains(i) else { throw error("\(i) is outside \(range.lowerBound)...\(range.upperBound)") }
        return i
    }

    public func string() throws(CaptureKitError) -> String {
        guard case .string(let s) = value else { throw error("expected a string") }
        return s
    }

    public func bool() throws(CaptureKitError) -> Bool {
        guard case .bool(let b) = value else { throw error("expected true or false") }
        return b
    }

    /// `n` floats from an array of exactly `n` numbers.
    public func floats(count n: Int) throws(CaptureKitError) -> [Float] {
        guard case .array(let items) = value, items.count == n else { _ = try array(count: n); return [] }
        var out: [Float] = []
        out.reserveCapacity(n)
        // Child nodes (and their paths) are made only for a message.
        for (i, v) in items.enumerated() {
            if let f = JSONNode.finiteFloat(v) { out.append(f); continue }
            out.append(try JSONNode(v, path: "\(path)[\(i)]").float())
        }
        return out
    }

    /// `{"x", "y", "z"}` as a vector.
    public func xyz() throws(CaptureKitError) -> SIMD3<Float> {
        SIMD3(try key("x").float(), try key("y").float(), try key("z").float())
    }
}
