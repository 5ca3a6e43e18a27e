import CJSONC
import Glibc

// Parsing JSON text and JSON lines through json-c's tokener into a `JSONValue` tree.

extension JSON {
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
