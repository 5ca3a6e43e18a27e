// MultiScan scan metadata (<scan>.json, docs/FORMATS.md §3) and scan ids.

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

/// MultiScan's scan metadata `<scan>.json` (docs/FORMATS.md §3).
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

