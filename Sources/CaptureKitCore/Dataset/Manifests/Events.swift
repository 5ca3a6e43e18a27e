// events.jsonl (docs/FORMATS.md §8): the guidance events of a capture, one per line.

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
