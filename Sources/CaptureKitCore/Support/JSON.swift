import CJSONC
import Glibc

// The only wrapper around json-c.
//
// Files are built as a `JSONValue` tree in Swift, turned into a json-c tree only for the moment of
// serialising (every `json_object` is released before `JSON.serialize` returns, on every path), and
// parsed with `json_tokener` into a `JSONValue` tree the same way. Typed getters on `JSONNode`
// carry the key path, so a reader's error names the key (`frames[3].transform_matrix[2][1]: expected
// a number`).
//
// Numbers read back bit-exactly: a `Float` is written as the shortest decimal that reads back as the
// same `Float` (Swift's `description`), a `Double` likewise, through `json_object_new_double_s` so
// json-c emits exactly that text; parsed non-integers keep the literal text json-c read, and the
// getters convert that text once, with correct rounding, to the requested type (never through a
// `Double` first for a `Float`). Integers are written and read as integers.

/// A JSON value. Object keys keep their insertion order (the order they are written in).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// An integer (written without a fraction or exponent).
    case int(Int64)
    /// Written as the shortest decimal that reads back as this `Float`. Must be finite.
    case float(Float)
    /// Written as the shortest decimal that reads back as this `Double`. Must be finite.
    case double(Double)
    /// A number literal kept as text: what the parser read for non-integers (or integers beyond
    /// `Int64`). Written verbatim after checking the JSON number grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// An array of `Float`s.
    public static func floats(_ values: [Float]) -> JSONValue { .array(values.map { .float($0) }) }
    /// An array of `Double`s.
    public static func doubles(_ values: [Double]) -> JSONValue { .array(values.map { .double($0) }) }
    /// An array of integers.
    public static func ints(_ values: [Int64]) -> JSONValue { .array(values.map { .int($0) }) }
    /// `{"x": …, "y": …, "z": …}`.
    public static func xyz(_ v: SIMD3<Float>) -> JSONValue {
        .object(JSONObject(uniqueKeys: [("x", .float(v.x)), ("y", .float(v.y)), ("z", .float(v.z))]))
    }
    /// `.float(value)` or `.null`.
    public static func float(orNull value: Float?) -> JSONValue { value.map { .float($0) } ?? .null }

    /// Structural equality; numbers compare by value as a reader sees them: a `.float` equals any
    /// number that reads back as the same `Float` (bit for bit), `.int` equals an integral literal,
    /// other numbers compare as `Double`s. So a written `.float(0.1)` equals the parsed `.number("0.1")`.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        default:
            guard a.isNumber, b.isNumber else { return false }
            if case .float(let x) = a { return JSONNode(b).floatBits == x.bitPattern }
            if case .float(let y) = b { return JSONNode(a).floatBits == y.bitPattern }
            if case .int(let x) = a { return (try? JSONNode(b).int64()) == x }
            if case .int(let y) = b { return (try? JSONNode(a).int64()) == y }
            if case .number(let x) = a, case .number(let y) = b, x == y { return true }
            return (try? JSONNode(a).double())?.bitPattern == (try? JSONNode(b).double())?.bitPattern
        }
    }

    var isNumber: Bool {
        switch self {
        case .int, .float, .double, .number: return true
        default: return false
        }
    }
}

/// A JSON object: unique keys in insertion order.
public struct JSONObject: Equatable, Sendable {
    public private(set) var members: [(key: String, value: JSONValue)] = []

    public init() {}

    /// Members in order; a repeated key keeps its first position and its last value.
    public init(_ members: [(String, JSONValue)]) {
        for (k, v) in members { self[k] = v }
    }

    /// Members the caller guarantees unique (no check).
    init(uniqueKeys members: [(String, JSONValue)]) {
        self.members = members.map { (key: $0.0, value: $0.1) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    /// The value of `key`; setting appends a new key at the end, replaces an existing one in place,
    /// and `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            let i = members.firstIndex(where: { $0.key == key })
            switch (i, newValue) {
            case let (i?, v?): members[i].value = v
            case let (i?, nil): members.remove(at: i)
            case let (nil, v?): members.append((key: key, value: v))
            case (nil, nil): break
            }
        }
    }

    /// Appends without looking for an existing key: the caller knows `key` is new.
    mutating func appendNew(_ key: String, _ value: JSONValue) { members.append((key: key, value: value)) }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// Serialising and parsing through json-c.
public enum JSON {
    /// Nesting accepted by the parser (the tokener's depth limit); deeper input is `corrupt`.
    public static let maxDepth: Int32 = 64
    /// Largest text the parser accepts (json-c takes an `int` length).
    public static let maxTextSize = Int(Int32.max) - 1

    #if DEBUG
    /// Debug-only fault injection: the Nth json-c allocation from now on the calling thread fails
    /// (as if json-c had returned NULL), nil = off. Per thread, like `FileIO.failCall`.
    static let faults = FaultCountdown()
    public static func failCall(after n: Int) { faults.arm(n) }
    public static func stopFailing() { faults.disarm() }
    /// True while an armed fault has not fired yet on this thread.
    public static var faultPending: Bool { faults.remaining != nil }
    #endif

    /// True if an injected fault fires for this json-c call.
    @inline(__always)
    static func injected() -> Bool {
        #if DEBUG
        if faults.fire() != nil { return true }
        #endif
        return false
    }
}
