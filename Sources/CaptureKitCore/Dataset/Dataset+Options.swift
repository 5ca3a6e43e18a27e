import Glibc

/// Options of a new dataset (`ck_dataset_options`).
public struct DatasetOptions: Sendable {
    /// Depth PNG size; 0 = the image's size (instant-ngp needs equal sizes).
    public var depthWidth = 0, depthHeight = 0
    /// MultiScan stream zlib level (0 = default) and PNG level (0 = default).
    public var zlibLevel: Int32 = 0, pngLevel: Int32 = 0
    /// Scan start (Unix seconds, UTC) for the MultiScan scan id; the library never reads a clock.
    public var startTimeUnix: Double = 0
    public var deviceID = "capturekit", deviceName = "", deviceType = "", userName = ""
    public var sceneDescription = "", sceneType = ""
    /// The host's colour video of the scan (MultiScan's `<scan>.mp4`, recorded with the platform's
    /// encoder): its encoding ("h264") and file extension ("mp4"), or nil when the host writes
    /// none. The metadata then counts that file in `number_of_files`; without it the colour stream
    /// still describes the colour frames (count, resolution, intrinsics) with encoding "none".
    public var colorVideo: (encoding: String, fileExtension: String)? = nil
    /// Encode and write captured and streamed frames on a background thread, with at most this
    /// many bytes of frames queued (`ck_dataset_options.write_mode`/`write_queue_mb`); nil = on the
    /// caller's thread, every call durable when it returns (the core's default; the C API's default
    /// is the background writer).
    public var writeQueueBytes: Int? = nil
    /// How the library encodes the images it is given (`ck_dataset_options.image_encoding`): PNG
    /// (lossless, the default) or JPEG at `jpegQuality` (1...100).
    public var imageEncoding: ImageEncoding = .png
    public var jpegQuality: Int32 = JPEG.defaultQuality
    /// Downscaled copies of every library-written image (`images_2/`, `images_4/`, `images_8/`, as
    /// nerfstudio's processing writes them for `downscale_factor`): a subset of [2, 4, 8].
    public var downscales: [Int] = []
    public init() {}

    /// The image file formats a dataset writes (`ck_image_encoding`).
    public enum ImageEncoding: String, Sendable {
        case png, jpeg
        /// The file extension of a library-written image.
        public var fileExtension: String { self == .png ? ".png" : ".jpg" }
    }

    /// Checks what a caller can get wrong.
    public func validated() throws(CaptureKitError) -> DatasetOptions {
        if let v = colorVideo {
            guard (1...16).contains(v.encoding.utf8.count), v.encoding.utf8.allSatisfy({ Dataset.isASCIIAlphanumeric($0) || $0 == 0x5F }) else {
                throw .invalidArgument("color_encoding \"\(v.encoding)\" must be 1...16 letters, digits or '_'")
            }
            guard (1...7).contains(v.fileExtension.utf8.count), v.fileExtension.utf8.allSatisfy(Dataset.isASCIIAlphanumeric) else {
                throw .invalidArgument("color_file_extension \"\(v.fileExtension)\" must be 1...7 letters or digits, without the dot")
            }
        }
        return self
    }
}

extension Dataset {
    static func validate(_ o: DatasetOptions) throws(CaptureKitError) {
        guard o.depthWidth >= 0, o.depthHeight >= 0, o.depthWidth <= PNG.maxDimension, o.depthHeight <= PNG.maxDimension,
              (o.depthWidth == 0) == (o.depthHeight == 0) else {
            throw .invalidArgument("depth_png_width/height must both be 0 or both within 1...\(PNG.maxDimension)")
        }
        guard (0...9).contains(o.zlibLevel), (0...9).contains(o.pngLevel) else { throw .invalidArgument("zlib_level and png_level must be 0...9") }
        guard (1...100).contains(o.jpegQuality) else { throw .invalidArgument("jpeg_quality must be 1...100 (got \(o.jpegQuality))") }
        guard o.downscales.allSatisfy({ [2, 4, 8].contains($0) }), Set(o.downscales).count == o.downscales.count else {
            throw .invalidArgument("image_downscales must be a set of 2, 4 and 8 (got \(o.downscales))")
        }
        guard o.startTimeUnix.isFinite, abs(o.startTimeUnix) < 1e11 else { throw .invalidArgument("start_time_unix must be a finite Unix time") }
        try PathRules.checkName(o.deviceID, "device_id")
    }

    static func optionsJSON(_ o: DatasetOptions) -> JSONObject {
        var j = JSONObject()
        j.appendNew("depth_png_width", .int(Int64(o.depthWidth)))
        j.appendNew("depth_png_height", .int(Int64(o.depthHeight)))
        j.appendNew("zlib_level", .int(Int64(o.zlibLevel)))
        j.appendNew("png_level", .int(Int64(o.pngLevel)))
        j.appendNew("start_time_unix", .double(o.startTimeUnix))
        for (k, v) in [("device_id", o.deviceID), ("device_name", o.deviceName), ("device_type", o.deviceType),
                       ("user_name", o.userName), ("scene_description", o.sceneDescription), ("scene_type", o.sceneType)] {
            j.appendNew(k, .string(v))
        }
        if let v = o.colorVideo {
            j.appendNew("color_encoding", .string(v.encoding))
            j.appendNew("color_file_extension", .string(v.fileExtension))
        }
        if o.imageEncoding != .png {
            j.appendNew("image_encoding", .string(o.imageEncoding.rawValue))
            j.appendNew("jpeg_quality", .int(Int64(o.jpegQuality)))
        }
        if !o.downscales.isEmpty { j.appendNew("image_downscales", .array(o.downscales.map { .int(Int64($0)) })) }
        return j
    }

    static func decodeOptions(_ n: JSONNode) throws(CaptureKitError) -> DatasetOptions {
        var o = DatasetOptions()
        o.depthWidth = Int(try n.key("depth_png_width").int(in: 0...Int64(PNG.maxDimension)))
        o.depthHeight = Int(try n.key("depth_png_height").int(in: 0...Int64(PNG.maxDimension)))
        o.zlibLevel = Int32(try n.key("zlib_level").int(in: 0...9))
        o.pngLevel = Int32(try n.key("png_level").int(in: 0...9))
        o.startTimeUnix = try n.key("start_time_unix").double()
        o.deviceID = try n.key("device_id").string()
        o.deviceName = try n.key("device_name").string()
        o.deviceType = try n.key("device_type").string()
        o.userName = try n.key("user_name").string()
        o.sceneDescription = try n.key("scene_description").string()
        o.sceneType = try n.key("scene_type").string()
        if let e = try n.optionalKey("color_encoding")?.string() {
            o.colorVideo = (e, try n.key("color_file_extension").string())
        }
        if let node = try n.optionalKey("image_encoding") {
            guard let e = DatasetOptions.ImageEncoding(rawValue: try node.string()) else { throw node.error("unknown image_encoding") }
            o.imageEncoding = e
            o.jpegQuality = Int32(try n.key("jpeg_quality").int(in: 1...100))
        }
        if let node = try n.optionalKey("image_downscales") {
            let factors = try node.array()
            guard factors.count <= 3 else { throw node.error("image_downscales has more than 3 factors") }
            var list: [Int] = []
            for f in factors { list.append(Int(try f.int(in: 2...8))) }
            guard list.allSatisfy({ [2, 4, 8].contains($0) }), Set(list).count == list.count else { throw node.error("image_downscales must be a set of 2, 4 and 8") }
            o.downscales = list.sorted()
        }
        return o
    }
}
