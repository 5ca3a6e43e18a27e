import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: Depth. STUBS until implemented: every call returns CK_E_UNSUPPORTED.

@c @implementation public func ck_format_size(_ format: Int32) -> Int {
    0
}

@c @implementation public func ck_depth_convert(_ dst: UnsafeMutableRawPointer?, _ dst_format: Int32, _ src: UnsafeRawPointer?, _ src_format: Int32, _ count: Int) -> ck_status {
    boundary("ck_depth_convert") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_codec_create(_ codec_out: UnsafeMutablePointer<OpaquePointer?>?, _ level: Int32) -> ck_status {
    boundary("ck_depth_codec_create") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_codec_free(_ codec: OpaquePointer?) -> Void {
    _ = codec
}

@c @implementation public func ck_depth_encode_bound(_ width: UInt32, _ height: UInt32, _ src_format: Int32) -> Int {
    0
}

@c @implementation public func ck_depth_encode(_ codec: OpaquePointer?, _ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?, _ src: UnsafeRawPointer?, _ width: UInt32, _ height: UInt32, _ src_format: Int32) -> ck_status {
    boundary("ck_depth_encode") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_frame_info(_ kind_out: UnsafeMutablePointer<Int32>?, _ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_depth_frame_info") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_decode(_ codec: OpaquePointer?, _ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ dst_format: Int32, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_depth_decode") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_writer_open(_ writer_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ kind: Int32, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_depth_writer_open") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_writer_append(_ writer: OpaquePointer?, _ src: UnsafeRawPointer?, _ src_format: Int32, _ timestamp: Double) -> ck_status {
    boundary("ck_depth_writer_append") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_writer_flush(_ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_flush") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_writer_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_frame_count") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_writer_close(_ writer: OpaquePointer?) -> ck_status {
    boundary("ck_depth_writer_close") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_reader_open(_ reader_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_depth_reader_open") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_reader_info(_ info_out: UnsafeMutablePointer<ck_depth_info>?, _ reader: OpaquePointer?) -> ck_status {
    boundary("ck_depth_reader_info") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_reader_read(_ reader: OpaquePointer?, _ index: UInt64, _ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ dst_format: Int32, _ timestamp_out: UnsafeMutablePointer<Double>?) -> ck_status {
    boundary("ck_depth_reader_read") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_depth_reader_free(_ reader: OpaquePointer?) -> Void {
    _ = reader
}

@c @implementation public func ck_transcode_zstream_to_ckdepth(_ frames_out: UnsafeMutablePointer<UInt64>?, _ dst_path: UnsafePointer<CChar>?, _ src_path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ stored_format: Int32, _ timestamps: UnsafePointer<Double>?, _ timestamp_count: Int, _ flags: UInt32) -> ck_status {
    boundary("ck_transcode_zstream_to_ckdepth") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_transcode_ckdepth_to_zstream(_ frames_out: UnsafeMutablePointer<UInt64>?, _ dst_path: UnsafePointer<CChar>?, _ src_path: UnsafePointer<CChar>?, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_transcode_ckdepth_to_zstream") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}
