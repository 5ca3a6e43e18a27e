import CCaptureKitAPI
import CaptureKitCore

// Header section ck_dataset.h: the dataset folder (the session: Session+ABI.swift).

extension ck_dataset_options {
    func converted() throws(CaptureKitError) -> DatasetOptions {
        guard reserved == 0 else { throw .invalidArgument("options.reserved must be 0") }
        var o = DatasetOptions()
        o.depthWidth = Int(depth_png_width); o.depthHeight = Int(depth_png_height)
        o.zlibLevel = zlib_level; o.pngLevel = png_level
        o.startTimeUnix = start_time_unix
        o.deviceID = try readString(device_id, "options.device_id", fallback: "capturekit")
        o.deviceName = try readString(device_name, "options.device_name", fallback: "")
        o.deviceType = try readString(device_type, "options.device_type", fallback: "")
        o.userName = try readString(user_name, "options.user_name", fallback: "")
        o.sceneDescription = try readString(scene_description, "options.scene_description", fallback: "")
        o.sceneType = try readString(scene_type, "options.scene_type", fallback: "")
        switch (color_encoding, color_file_extension) {
        case (nil, nil): o.colorVideo = nil
        case (.some, .some):
            o.colorVideo = (try readString(color_encoding, "options.color_encoding", fallback: ""),
                            try readString(color_file_extension, "options.color_file_extension", fallback: ""))
        default: throw .invalidArgument("options.color_encoding and options.color_file_extension go together (both or neither)")
        }
        guard write_queue_mb <= 65536 else { throw .invalidArgument("options.write_queue_mb \(write_queue_mb) is above 65536") }
        switch write_mode {
        case Int32(CK_WRITE_MODE_BACKGROUND.rawValue): o.writeQueueBytes = write_queue_mb == 0 ? DatasetOptions.cDefaultQueueBytes : Int(write_queue_mb) << 20
        case Int32(CK_WRITE_MODE_SYNC.rawValue): o.writeQueueBytes = nil
        default: throw .invalidArgument("options.write_mode \(write_mode) is not a ck_write_mode")
        }
        switch image_encoding {
        case Int32(CK_IMAGE_ENCODING_PNG.rawValue): o.imageEncoding = .png
        case Int32(CK_IMAGE_ENCODING_JPEG.rawValue): o.imageEncoding = .jpeg
        default: throw .invalidArgument("options.image_encoding \(image_encoding) is not a ck_image_encoding")
        }
        guard (0...100).contains(jpeg_quality) else { throw .invalidArgument("options.jpeg_quality \(jpeg_quality) is not 0 (default) or 1...100") }
        o.jpegQuality = jpeg_quality == 0 ? JPEG.defaultQuality : jpeg_quality
        guard image_downscales & ~UInt32(14) == 0 else {
            throw .invalidArgument("options.image_downscales 0x\(String(image_downscales, radix: 16)) has bits other than CK_DOWNSCALE_2 | _4 | _8")
        }
        o.downscales = [2, 4, 8].filter { image_downscales & UInt32($0) != 0 }
        guard reserved3 == 0 else { throw .invalidArgument("options.reserved3 must be 0") }
        return try o.validated()
    }
}

extension ck_dataset_options: GrowableStruct {
    static let firstReleaseSize = 80  // 0.1
    static var defaults: ck_dataset_options {
        ck_dataset_options(struct_size: UInt32(MemoryLayout<ck_dataset_options>.size), depth_png_width: 0,
                           depth_png_height: 0, zlib_level: 0, png_level: 0, reserved: 0, start_time_unix: 0, device_id: nil,
                           device_name: nil, device_type: nil, user_name: nil, scene_description: nil, scene_type: nil,
                           color_encoding: nil, color_file_extension: nil, write_mode: Int32(CK_WRITE_MODE_BACKGROUND.rawValue),
                           write_queue_mb: 0, image_encoding: Int32(CK_IMAGE_ENCODING_PNG.rawValue), jpeg_quality: 0,
                           image_downscales: 0, reserved3: 0)
    }
}

extension DatasetOptions {
    /// The background writer's queue when the options leave it at 0 (256 MiB: about 30
    /// captures of 1920×1440 RGB images, or 20 s of 256×192 stream frames).
    static let cDefaultQueueBytes = 256 << 20
    /// What a NULL ck_dataset_options means (CK_DATASET_OPTIONS_INIT's values).
    static var cDefaults: DatasetOptions {
        var o = DatasetOptions()
        o.writeQueueBytes = cDefaultQueueBytes
        return o
    }
}
extension ck_frame_desc: GrowableStruct {
    static let firstReleaseSize = 184  // 0.2 (0.1's 152-byte layout had image_format, pixels and a float depth)
    static var defaults: ck_frame_desc {
        ck_frame_desc(struct_size: UInt32(MemoryLayout<ck_frame_desc>.size), reserved: 0, timestamp: 0, pose: ck_mat4(Matrix4.identity),
                      intrinsics: ck_intrinsics(), image: ck_image(), image_path: nil, depth: ck_depth_map(), sharpness: -1, reserved2: 0,
                      image_chroma: nil, image_chroma_stride: 0)
    }
}
@c @implementation public func ck_dataset_options_init_sized(_ options_out: UnsafeMutablePointer<ck_dataset_options>?, _ struct_size: Int) -> ck_status {
    boundary("ck_dataset_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_dataset_options.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_dataset_options_init(_ options_out: UnsafeMutablePointer<ck_dataset_options>?) -> ck_status {
    boundary("ck_dataset_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_dataset_options.firstReleaseSize, ck_dataset_options.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_create(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?,
                                                  _ options: UnsafePointer<ck_dataset_options>?) -> ck_status {
    boundary("ck_dataset_create") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        let d = try readPath(dir, "dir")
        let o = try readOptions(options, "options", defaults: DatasetOptions.cDefaults) { (c: ck_dataset_options) throws(CaptureKitError) in try c.converted() }
        out.pointee = handOut(try Dataset(create: d, options: o))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_open(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_open") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        out.pointee = handOut(try Dataset(open: try readPath(dir, "dir"), writeQueueBytes: DatasetOptions.cDefaultQueueBytes))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_open_readonly(_ dataset_out: UnsafeMutablePointer<OpaquePointer?>?, _ dir: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_open_readonly") { () throws(CaptureKitError) in
        let out = try required(dataset_out, "dataset_out")
        out.pointee = handOut(try Dataset(open: try readPath(dir, "dir"), readOnly: true))
        return CK_OK
    }
}

/// The frame at `index` of the dataset's frames, or `notFound`.
private func frame(_ ds: Dataset, _ index: UInt64) throws(CaptureKitError) -> DatasetFrame {
    guard let f = ds.frame(at: index) else { throw .notFound("no frame at index \(index): the dataset has \(ds.frames.count)") }
    return f
}

@c @implementation public func ck_dataset_frame(_ info_out: UnsafeMutablePointer<ck_dataset_frame_info>?, _ dataset: OpaquePointer?,
                                                      _ index: UInt64) -> ck_status {
    boundary("ck_dataset_frame") { () throws(CaptureKitError) in
        let out = try required(info_out, "info_out")
        let f = try frame(try object(dataset, "dataset", as: Dataset.self), index)
        out.pointee = ck_dataset_frame_info(id: UInt64(f.id), pass: UInt32(f.pass), has_depth: f.depthPath == nil ? 0 : 1,
                                            timestamp: f.timestamp, pose: ck_mat4(f.pose), intrinsics: ck_intrinsics(f.intrinsics),
                                            sharpness: f.sharpness ?? -1, owns_image: f.ownsImage ? 1 : 0,
                                            stream_index: f.streamIndex ?? -1)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_frame_path(_ dst: UnsafeMutablePointer<CChar>?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                      _ dataset: OpaquePointer?, _ index: UInt64, _ which: Int32) -> ck_status {
    boundary("ck_dataset_frame_path") { () throws(CaptureKitError) in
        let f = try frame(try object(dataset, "dataset", as: Dataset.self), index)
        let p: String
        switch which {
        case Int32(CK_FRAME_PATH_IMAGE.rawValue): p = f.imagePath
        case Int32(CK_FRAME_PATH_DEPTH.rawValue):
            guard let d = f.depthPath else { throw .notFound("frame \(f.id) has no depth") }
            p = d
        default: throw .invalidArgument("which \(which) is not a ck_frame_path")
        }
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        try checkCapacity(cap, needed: p.utf8.count + 1, written_out)
        copyCString(p, into: try required(dst, "dst"))
        written_out?.pointee = p.utf8.count + 1
        return CK_OK
    }
}

@c @implementation public func ck_frame_desc_init_sized(_ desc_out: UnsafeMutablePointer<ck_frame_desc>?, _ struct_size: Int) -> ck_status {
    boundary("ck_frame_desc_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(desc_out, "desc_out", size: struct_size, ck_frame_desc.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_frame_desc_init(_ desc_out: UnsafeMutablePointer<ck_frame_desc>?) -> ck_status {
    boundary("ck_frame_desc_init") { () throws(CaptureKitError) in
        try fillGrowable(desc_out, "desc_out", size: ck_frame_desc.firstReleaseSize, ck_frame_desc.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_next_image_path(_ dst: UnsafeMutablePointer<CChar>?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                           _ dataset: OpaquePointer?, _ extension_: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_next_image_path") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let ext = try readString(extension_, "extension", fallback: ".png")
        let p = try ds.nextImagePath(extension: ext)
        let cap = try checkedCount(dst_capacity, stride: 1, "dst_capacity")
        try checkCapacity(cap, needed: p.utf8.count + 1, written_out)
        copyCString(p, into: try required(dst, "dst"))
        written_out?.pointee = p.utf8.count + 1
        return CK_OK
    }
}

func copyCString(_ s: String, into b: UnsafeMutablePointer<CChar>) {
    var i = 0
    for byte in s.utf8 { b[i] = CChar(bitPattern: byte); i += 1 }
    b[i] = 0
}

/// A frame's image: GRAY8, RGB8 or RGBA8 of the intrinsics' size; nil when absent.
func readFrameImage(_ i: ck_image, _ k: Intrinsics, _ name: String) throws(CaptureKitError)
    -> (bytes: UnsafeRawBufferPointer, stride: Int, format: ImageFormat)? {
    if let layout = CameraPixels.Layout(rawValue: i.format), i.data != nil {
        throw .invalidArgument("\(name).format \(layout) needs the frame's camera fields (read by readCameraImage)")
    }
    guard let img = try readImage(i, name, allowed: [.gray8, .rgb8, .rgba8]) else { return nil }
    guard img.width == Int(k.width), img.height == Int(k.height) else {
        throw .invalidArgument("\(name) is \(img.width)x\(img.height) but the intrinsics are \(k.width)x\(k.height)")
    }
    return (img.bytes, img.stride, img.format)
}

/// A frame's camera-native image (CK_IMAGE_FORMAT_BGRA8, NV12_FULL, NV12_VIDEO): nil for any other
/// format. NV12's CbCr plane comes from `chroma` / `chromaStride` (0 = the Y plane's stride).
func readCameraImage(_ i: ck_image, chroma: UnsafeRawPointer?, chromaStride: Int, _ k: Intrinsics, _ name: String,
                     chromaName: String) throws(CaptureKitError) -> CameraPixels? {
    guard let layout = CameraPixels.Layout(rawValue: i.format) else {
        guard chroma == nil else { throw .invalidArgument("\(chromaName) is set but \(name).format \(i.format) has no chroma plane") }
        return nil
    }
    guard i.reserved == 0 else { throw .invalidArgument("\(name).reserved is not 0") }
    guard i.width >= 1, i.height >= 1, i.width <= UInt32(JPEG.maxDimension), i.height <= UInt32(JPEG.maxDimension) else {
        throw .invalidArgument("\(name): width x height \(i.width)x\(i.height) must be within 1...\(JPEG.maxDimension)")
    }
    guard Int(i.width) == Int(k.width), Int(i.height) == Int(k.height) else {
        throw .invalidArgument("\(name) is \(i.width)x\(i.height) but the intrinsics are \(k.width)x\(k.height)")
    }
    let w = Int(i.width), h = Int(i.height)
    let y = try imageSpan(i.data, "\(name).data", width: w, height: h, bytesPerPixel: layout == .bgra8 ? 4 : 1,
                          stride: i.stride, strideName: "\(name).stride")
    guard layout != .bgra8 else {
        guard chroma == nil else { throw .invalidArgument("\(chromaName) is set but BGRA8 has no chroma plane") }
        return CameraPixels(layout: layout, width: w, height: h, luma: y.bytes, stride: y.stride)
    }
    guard chroma != nil else { throw .invalidArgument("\(chromaName) is NULL: an NV12 image needs its CbCr plane") }
    let c = try imageSpan(chroma, chromaName, width: (w + 1) / 2, height: (h + 1) / 2, bytesPerPixel: 2,
                          stride: chromaStride != 0 ? chromaStride : i.stride, strideName: "\(chromaName)_stride")
    let cam = CameraPixels(layout: layout, width: w, height: h, luma: y.bytes, stride: y.stride, chroma: c.bytes, chromaStride: c.stride)
    try cam.validate()
    return cam
}

/// The depth formats a caller's depth map may come in.
let depthFormats: [SampleFormat] = [.depthF32, .depthF16, .depthMM]

@c @implementation public func ck_dataset_add_frame(_ frame_id_out: UnsafeMutablePointer<UInt64>?, _ dataset: OpaquePointer?,
                                                     _ desc: UnsafePointer<ck_frame_desc>?) -> ck_status {
    boundary("ck_dataset_add_frame") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        guard desc != nil else { throw .invalidArgument("desc is NULL") }
        let d = try readOptions(desc, "desc", defaults: ck_frame_desc.defaults) { (c: ck_frame_desc) in c }
        guard d.reserved == 0, d.reserved2 == 0 else { throw .invalidArgument("desc.reserved fields must be 0") }
        let pose = try Pose(d.pose.matrix, name: "desc.pose")
        let k = try d.intrinsics.validated("desc.intrinsics")
        var input = Dataset.FrameInput(timestamp: d.timestamp, pose: pose, intrinsics: k)
        input.camera = try readCameraImage(d.image, chroma: d.image_chroma, chromaStride: d.image_chroma_stride, k, "desc.image",
                                           chromaName: "desc.image_chroma")
        if input.camera == nil { input.pixels = try readFrameImage(d.image, k, "desc.image") }
        if input.pixels == nil && input.camera == nil, let p = d.image_path { input.imagePath = try readString(p, "desc.image_path", fallback: "") }
        if d.sharpness >= 0 { input.sharpness = d.sharpness } else if !d.sharpness.isFinite { throw .invalidArgument("desc.sharpness is not finite") }
        let id: Int64
        if let map = try readDepthMap(d.depth, "desc.depth", allowed: depthFormats) {
            id = try map.withPacked(as: .depthF32) { (b: UnsafeRawBufferPointer) throws(CaptureKitError) -> Int64 in
                input.depth = (b.assumingMemoryBound(to: Float.self), map.width, map.height)
                return try ds.addFrame(input)
            }
        } else {
            id = try ds.addFrame(input)
        }
        frame_id_out?.pointee = UInt64(id)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_remove_frame(_ dataset: OpaquePointer?, _ frame_id: UInt64) -> ck_status {
    boundary("ck_dataset_remove_frame") { () throws(CaptureKitError) in
        guard frame_id <= UInt64(Int64.max) else { throw .notFound("no frame \(frame_id)") }
        try object(dataset, "dataset", as: Dataset.self).removeFrame(Int64(frame_id))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_frame_count") { () throws(CaptureKitError) in
        let out = try required(count_out, "count_out")
        out.pointee = UInt64(try object(dataset, "dataset", as: Dataset.self).frameCount)
        return CK_OK
    }
}

@c @implementation public func ck_dataset_flush(_ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_flush") { () throws(CaptureKitError) in
        try object(dataset, "dataset", as: Dataset.self).flush()
        return CK_OK
    }
}

@c @implementation public func ck_dataset_set_box(_ dataset: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_dataset_set_box") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        try ds.setBox(try required(box, "box").pointee.validated(seat: true))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_begin_pass(_ pass_out: UnsafeMutablePointer<UInt32>?, _ dataset: OpaquePointer?,
                                                      _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_dataset_begin_pass") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let p = try ds.beginPass(try required(box, "box").pointee.validated(seat: true))
        pass_out?.pointee = UInt32(p)
        return CK_OK
    }
}

/// Runs `body` with a depth map as packed float metres and a confidence map as packed bytes
/// (either nil when absent); both must have the same size when both are given.
func withStreamMaps<R>(_ depth: SampleMap?, _ confidence: SampleMap?,
                               _ body: (UnsafeRawPointer?, UnsafeRawPointer?) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
    if let d = depth, let c = confidence, d.width != c.width || d.height != c.height {
        throw .invalidArgument("depth is \(d.width)x\(d.height) but confidence is \(c.width)x\(c.height)")
    }
    func withConfidence(_ d: UnsafeRawPointer?) throws(CaptureKitError) -> R {
        guard let confidence else { return try body(d, nil) }
        return try confidence.withPacked { (c: UnsafeRawBufferPointer) throws(CaptureKitError) -> R in try body(d, c.baseAddress) }
    }
    guard let depth else { return try withConfidence(nil) }
    return try depth.withPacked(as: .depthF32) { (b: UnsafeRawBufferPointer) throws(CaptureKitError) -> R in try withConfidence(b.baseAddress) }
}

@c @implementation public func ck_dataset_stream_frame(_ dataset: OpaquePointer?, _ timestamp: Double, _ pose: UnsafePointer<ck_mat4>?,
                                                        _ intrinsics: UnsafePointer<ck_intrinsics>?, _ depth: UnsafePointer<ck_depth_map>?,
                                                        _ confidence: UnsafePointer<ck_depth_map>?) -> ck_status {
    boundary("ck_dataset_stream_frame") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let p = try readPose(pose, "pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite") }
        let d = try readDepthMap(depth, "depth", allowed: depthFormats)
        let c = try readDepthMap(confidence, "confidence", allowed: [.u8])
        guard let size = d ?? c else { throw .invalidArgument("depth and confidence are both NULL") }
        _ = try withStreamMaps(d, c) { (dp, cp) throws(CaptureKitError) in
            try ds.streamFrame(timestamp: timestamp, pose: p, intrinsics: k, depth: dp, confidence: cp,
                               width: size.width, height: size.height)
        }
        return CK_OK
    }
}

@c @implementation public func ck_dataset_log_event(_ dataset: OpaquePointer?, _ event: UnsafePointer<ck_event>?) -> ck_status {
    boundary("ck_dataset_log_event") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let e = try required(event, "event").pointee
        guard e.timestamp.isFinite, e.value.isFinite else { throw .invalidArgument("event.timestamp and event.value must be finite") }
        try ds.logEvent(EventRecord(code: e.code, index: e.index, timestamp: e.timestamp, value: e.value))
        return CK_OK
    }
}

@c @implementation public func ck_dataset_finalize(_ dataset: OpaquePointer?, _ flags: UInt32, _ zip_path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_finalize") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        guard flags & ~CK_FINALIZE_ZIP == 0 else { throw .invalidArgument("flags has unknown bits") }
        var zip: String? = nil
        if flags & CK_FINALIZE_ZIP != 0 { zip = zip_path == nil ? "\(ds.directory).zip" : try readPath(zip_path, "zip_path") }
        try ds.finalize(zipPath: zip)
        return CK_OK
    }
}

/// The dataset of a handle the caller owns: a dataset borrowed from a session
/// (`ck_session_dataset`) is closed by `ck_session_close`, never by the caller.
private func ownedDataset(_ dataset: OpaquePointer, _ verb: String) throws(CaptureKitError) -> Dataset {
    let ds = try object(dataset, "dataset", as: Dataset.self)
    guard !ds.isOwnedBySession else {
        throw .state("dataset is borrowed from a session (ck_session_dataset) and cannot be \(verb) by the caller; ck_session_close closes it")
    }
    return ds
}

@c @implementation public func ck_dataset_cancel(_ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_cancel") { () throws(CaptureKitError) in
        guard let dataset else { return CK_OK }  // as every _close/_free: NULL does nothing
        let ds = try ownedDataset(dataset, "cancelled")
        defer { release(dataset, as: Dataset.self) }
        try ds.cancel()
        return CK_OK
    }
}

@c @implementation public func ck_dataset_close(_ dataset: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_close") { () throws(CaptureKitError) in
        guard let dataset else { return CK_OK }
        let ds = try ownedDataset(dataset, "closed")
        defer { release(dataset, as: Dataset.self) }
        try ds.close()
        return CK_OK
    }
}

// MARK: a frame's depth and confidence (the scan reader's rules: Dataset+Depth.swift)

@c @implementation public func ck_dataset_frame_depth(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                       _ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?,
                                                       _ dataset: OpaquePointer?, _ index: UInt64, _ dst_format: Int32) -> ck_status {
    boundary("ck_dataset_frame_depth") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let f = try depthFormat(dst_format)
        let d = try mapDestination(dst, dst_capacity, written_out, f, try ds.depthSize(index), width_out, height_out)
        try ds.readDepth(index, into: d, format: f)
        written_out?.pointee = d.count
        return CK_OK
    }
}

@c @implementation public func ck_dataset_frame_confidence(_ dst: UnsafeMutablePointer<UInt8>?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                            _ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?,
                                                            _ dataset: OpaquePointer?, _ index: UInt64) -> ck_status {
    boundary("ck_dataset_frame_confidence") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        let d = try mapDestination(UnsafeMutableRawPointer(dst), dst_capacity, written_out, .u8, try ds.confidenceSize(index), width_out, height_out)
        try ds.readConfidence(index, into: d)
        written_out?.pointee = d.count
        return CK_OK
    }
}

@c @implementation public func ck_dataset_export_colmap(_ dataset_dir: UnsafePointer<CChar>?, _ out_dir: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_dataset_export_colmap") { () throws(CaptureKitError) in
        try ColmapExport.write(dataset: try readPath(dataset_dir, "dataset_dir"), to: try readPath(out_dir, "out_dir"))
        return CK_OK
    }
}

@c @implementation public func ck_box_read(_ box_out: UnsafeMutablePointer<ck_box>?, _ path: UnsafePointer<CChar>?, _ pass: UInt32) -> ck_status {
    boundary("ck_box_read") { () throws(CaptureKitError) in
        let out = try required(box_out, "box_out")
        let p = try readPath(path, "path")
        guard let b = try BoundingBoxManifest.read(from: p).box(forPass: pass) else { throw .notFound("\(p) has no pass \(pass)") }
        out.pointee = ck_box(b)
        return CK_OK
    }
}
