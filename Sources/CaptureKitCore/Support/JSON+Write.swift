import CJSONC
import Glibc

// Serialising a `JSONValue` through json-c (see JSON.swift for the number rules).

extension JSON {
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
}
