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

    // MARK: Serialising

    /// The JSON text of `value`, UTF-8, without a trailing newline.
    ///
    /// `pretty`: 2-space indent, `"key": value` (manifests); otherwise compact on one line (JSON
    /// lines). Keys in insertion order; "/" is not escaped; control characters, quotes and
    /// backslashes are; other non-ASCII characters are written as UTF-8.
    /// - Throws: `invalidArgument` naming the key path for a non-finite number, a `.number` text that
    ///   is not a JSON number, a key containing NUL or a string over 2 GiB; `noMemory` when json-c
    ///   cannot allocate.
    public static func serialize(_ value: JSONValue, pretty: Bool) throws(CaptureKitError) -> [UInt8] {
        var path = KeyPath()
        let root = try build(value, &path)
        defer { json_object_put(root) }
        var flags = JSON_C_TO_STRING_NOSLASHESCAPE
        flags |= pretty ? (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) : JSON_C_TO_STRING_PLAIN
        var length = 0
        guard !injected(), let text = json_object_to_json_string_length(root, Int32(flags), &length) else {
            throw .noMemory("json-c: cannot serialise (out of memory)")
        }
        return Array(UnsafeRawBufferPointer(start: text, count: length))
    }

    /// `serialize(value, pretty: false)` followed by "\n": one JSON-lines record.
    public static func line(_ value: JSONValue) throws(CaptureKitError) -> [UInt8] {
        var bytes = try serialize(value, pretty: false)
        bytes.append(0x0A)
        return bytes
    }

    /// Builds the json-c tree (nil = JSON null). The caller owns the result.
    private static func build(_ value: JSONValue, _ path: inout KeyPath) throws(CaptureKitError) -> OpaquePointer? {
        switch value {
        case .null:
            return nil
        case .bool(let b):
            return try made(json_object_new_boolean(b ? 1 : 0))
        case .int(let i):
            return try made(json_object_new_int64(i))
        case .float(let f):
            guard f.isFinite else { throw .invalidArgument("\(path.text): \(f) is not a finite number (JSON has no inf or nan)") }
            return try double(Double(f), f.description)
        case .double(let d):
            guard d.isFinite else { throw .invalidArgument("\(path.text): \(d) is not a finite number (JSON has no inf or nan)") }
            return try double(d, d.description)
        case .number(let text):
            guard isNumberLiteral(text) else { throw .invalidArgument("\(path.text): \"\(text)\" is not a JSON number") }
            return try double(Double(text) ?? 0, text)
        case .string(let s):
            return try string(s, path)
        case .array(let items):
            let array = try made(json_object_new_array_ext(Int32(clamping: items.count)))
            do throws(CaptureKitError) {
                for (i, item) in items.enumerated() {
                    path.push(index: i)
                    let child = try build(item, &path)
                    path.pop()
                    if injected() || json_object_array_add(array, child) != 0 {
                        json_object_put(child)
                        throw .noMemory("json-c: out of memory")
                    }
                }
            } catch {
                json_object_put(array)
                throw error
            }
            return array
        case .object(let object):
            let obj = try made(json_object_new_object())
            do throws(CaptureKitError) {
                for (key, item) in object.members {
                    path.push(key: key)
                    guard !key.utf8.contains(0) else { throw .invalidArgument("\(path.text): a key must not contain NUL") }
                    let child = try build(item, &path)
                    path.pop()
                    // Keys of a JSONObject are unique, so json-c need not look for an existing one.
                    if injected() || json_object_object_add_ex(obj, key, child, UInt32(JSON_C_OBJECT_ADD_KEY_IS_NEW)) != 0 {
                        json_object_put(child)
                        throw .noMemory("json-c: out of memory")
                    }
                }
            } catch {
                json_object_put(obj)
                throw error
            }
            return obj
        }
    }

    @inline(__always)
    private static func made(_ object: OpaquePointer?) throws(CaptureKitError) -> OpaquePointer {
        // An injected fault still releases what json-c allocated, so the fault path leaks nothing.
        if injected() { json_object_put(object); throw .noMemory("json-c: out of memory") }
        guard let object else { throw .noMemory("json-c: out of memory") }
        return object
    }

    private static func double(_ value: Double, _ text: String) throws(CaptureKitError) -> OpaquePointer {
        try made(json_object_new_double_s(value, text))
    }

    private static func string(_ s: String, _ path: KeyPath) throws(CaptureKitError) -> OpaquePointer {
        guard let len = Int32(exactly: s.utf8.count) else { throw .invalidArgument("\(path.text): string longer than 2 GiB") }
        if len == 0 { return try made(json_object_new_string("")) }
        var s = s
        // json_object_new_string_len copies (and keeps embedded NULs, escaped as \u0000).
        return try made(s.withUTF8 { u in
            UnsafeRawPointer(u.baseAddress).flatMap { json_object_new_string_len($0.assumingMemoryBound(to: CChar.self), len) }
        })
    }

    /// True if `text` matches the JSON number grammar (RFC 8259 §6).
    static func isNumberLiteral(_ text: String) -> Bool {
        var it = Array(text.utf8)[...]
        func digits() -> Int { var n = 0; while let c = it.first, c >= 0x30, c <= 0x39 { it.removeFirst(); n += 1 }; return n }
        if it.first == 0x2D { it.removeFirst() }
        guard let first = it.first, first >= 0x30, first <= 0x39 else { return false }
        if first == 0x30 { it.removeFirst() } else { _ = digits() }
        if it.first == 0x2E { it.removeFirst(); guard digits() > 0 else { return false } }
        if it.first == 0x65 || it.first == 0x45 {
            it.removeFirst()
            if it.first == 0x2B || it.first == 0x2D { it.removeFirst() }
            guard digits() > 0 else { return false }
        }
        return it.isEmpty
    }

    // MARK: Parsing

    /// Parses one JSON text (an object, array or scalar, surrounded by optional whitespace).
    ///
    /// json-c runs in strict mode with UTF-8 validation; it still accepts a few extensions
    /// (`NaN`/`Infinity` literals, single-quoted strings, raw control characters in strings).
    /// Non-finite numbers are rejected by the typed getters, so no reader lets them through.
    /// - Parameter what: names the input in messages (a file name).
    /// - Throws: `corrupt` with the line, column and byte offset of the error; `unsupported` beyond
    ///   `maxTextSize`; `noMemory`.
    public static func parse(_ bytes: UnsafeRawBufferPointer, what: String) throws(CaptureKitError) -> JSONValue {
        let tokener = try Tokener()
        return try tokener.parse(bytes, what: what, lineOffset: nil)
    }

    /// `parse` over an array.
    public static func parse(_ bytes: [UInt8], what: String) throws(CaptureKitError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try parse(UnsafeRawBufferPointer(b), what: what) }
    }

    /// Parses JSON lines: one value per "\n"-terminated line; blank lines are skipped.
    ///
    /// - Parameter tolerateTornTail: a last line without "\n" that does not parse is what a crash
    ///   mid-append leaves; with this flag it is dropped (`tornTail` true) instead of an error.
    /// - Returns: the values with their 1-based line numbers, and whether a torn last line was dropped.
    /// - Throws: `corrupt` naming the line (and column) of the first bad line.
    public static func parseLines(_ bytes: UnsafeRawBufferPointer, what: String, tolerateTornTail: Bool = false)
        throws(CaptureKitError) -> (values: [(line: Int, value: JSONValue)], tornTail: Bool) {
        let tokener = try Tokener()
        var values: [(line: Int, value: JSONValue)] = []
        var start = 0, line = 1
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let terminated = end < bytes.count
            let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if !slice.allSatisfy(isWhitespace) {
                do throws(CaptureKitError) {
                    values.append((line, try tokener.parse(slice, what: what, lineOffset: line)))
                } catch where !terminated && tolerateTornTail && error.status == .corrupt {
                    return (values, true)
                }
            }
            start = end + 1
            line += 1
        }
        return (values, false)
    }

    /// `parseLines` over an array.
    public static func parseLines(_ bytes: [UInt8], what: String, tolerateTornTail: Bool = false)
        throws(CaptureKitError) -> (values: [(line: Int, value: JSONValue)], tornTail: Bool) {
        try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try parseLines(UnsafeRawBufferPointer(b), what: what, tolerateTornTail: tolerateTornTail)
        }
    }

    @inline(__always) static func isWhitespace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    /// A json_tokener, freed on deinit.
    private final class Tokener {
        let tok: UnsafeMutablePointer<json_tokener>

        init() throws(CaptureKitError) {
            guard !JSON.injected(), let t = json_tokener_new_ex(JSON.maxDepth) else {
                throw .noMemory("json-c: cannot create a tokener (out of memory)")
            }
            json_tokener_set_flags(t, Int32(JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8))
            tok = t
        }

        deinit { json_tokener_free(tok) }

        func parse(_ bytes: UnsafeRawBufferPointer, what: String, lineOffset: Int?) throws(CaptureKitError) -> JSONValue {
            guard bytes.count <= JSON.maxTextSize else {
                throw .unsupported("\(what): \(bytes.count) bytes is more than the \(JSON.maxTextSize)-byte JSON limit")
            }
            json_tokener_reset(tok)
            func fail(_ offset: Int, _ description: String) -> CaptureKitError {
                let prefix = bytes.prefix(max(0, min(offset, bytes.count)))
                let lineInText = prefix.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
                let column = offset - (prefix.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
                let line = lineOffset ?? lineInText
                return .corrupt("\(what): line \(line), column \(column) (byte \(offset)): \(description)")
            }
            if JSON.injected() { throw .noMemory("\(what): json-c: out of memory while parsing") }
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count > 0 else {
                throw fail(0, "unexpected end of data (empty)")
            }
            var root = json_tokener_parse_ex(tok, base, Int32(bytes.count))
            var end = json_tokener_get_parse_end(tok)
            var err = json_tokener_get_error(tok)
            if root == nil && err == json_tokener_continue {
                // A top-level scalar (or truncated text) needs the end of input: feed a NUL.
                root = json_tokener_parse_ex(tok, "", 1)
                err = json_tokener_get_error(tok)
                end = bytes.count
                if root == nil && err != json_tokener_success {
                    json_object_put(root)
                    throw fail(bytes.count, "unexpected end of data")
                }
            }
            guard let root, err == json_tokener_success else {
                if err == json_tokener_success {
                    // A bare `null` at the top: json-c returns NULL for it.
                    return try checkTrailing(bytes, end, .null, fail)
                }
                let description = json_tokener_error_desc(err).map { String(cString: $0) } ?? "error \(err.rawValue)"
                throw fail(end, description)
            }
            defer { json_object_put(root) }
            return try checkTrailing(bytes, end, JSON.value(of: root), fail)
        }

        private func checkTrailing(_ bytes: UnsafeRawBufferPointer, _ end: Int, _ value: JSONValue,
                                   _ fail: (Int, String) -> CaptureKitError) throws(CaptureKitError) -> JSONValue {
            var i = end
            while i < bytes.count {
                guard JSON.isWhitespace(bytes[i]) else { throw fail(i, "unexpected data after the end of the JSON text") }
                i += 1
            }
            return value
        }
    }

    /// Converts a json-c tree (borrowed) to a `JSONValue`. Depth is bounded by the tokener's.
    private static func value(of object: OpaquePointer?) -> JSONValue {
        guard let object else { return .null }
        switch json_object_get_type(object) {
        case json_type_null:
            return .null
        case json_type_boolean:
            return .bool(json_object_get_boolean(object) != 0)
        case json_type_int:
            let i = json_object_get_int64(object)
            if i == Int64.max || i == Int64.min, let s = json_object_get_string(object) {
                return .number(String(cString: s))  // beyond Int64 (json-c clamps): keep the text
            }
            return .int(i)
        case json_type_double:
            // A parsed double keeps its literal text as the userdata of json-c's text serializer
            // (json_object_new_double_s); reading it directly avoids serialising each number.
            if let text = json_object_get_userdata(object) {
                return .number(String(cString: text.assumingMemoryBound(to: CChar.self)))
            }
            return .number(json_object_get_string(object).map { String(cString: $0) } ?? "0")
        case json_type_string:
            let n = Int(json_object_get_string_len(object))
            guard let p = json_object_get_string(object), n > 0 else { return .string("") }
            return .string(String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self))
        case json_type_array:
            let n = json_object_array_length(object)
            var items: [JSONValue] = []
            items.reserveCapacity(n)
            for i in 0..<n { items.append(value(of: json_object_array_get_idx(object, i))) }
            return .array(items)
        case json_type_object:
            var members: [(String, JSONValue)] = []
            var it = json_object_iter_begin(object)
            var end = json_object_iter_end(object)
            while json_object_iter_equal(&it, &end) == 0 {
                let name = json_object_iter_peek_name(&it).map { String(cString: $0) } ?? ""
                members.append((name, value(of: json_object_iter_peek_value(&it))))
                json_object_iter_next(&it)
            }
            // json-c keeps one entry per key (the last value of a repeated key).
            return .object(JSONObject(uniqueKeys: members))
        default:
            return .null
        }
    }
}

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
