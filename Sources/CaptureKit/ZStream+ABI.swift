import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: ZStream. STUBS until implemented: every call returns CK_E_UNSUPPORTED.

@c @implementation public func ck_zstream_writer_open(_ writer_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ stored_format: Int32, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_zstream_writer_open") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_writer_append(_ writer: OpaquePointer?, _ src: UnsafeRawPointer?, _ src_format: Int32) -> ck_status {
    boundary("ck_zstream_writer_append") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_writer_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ writer: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_writer_frame_count") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_writer_close(_ writer: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_writer_close") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_reader_open(_ reader_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ width: UInt32, _ height: UInt32, _ stored_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_open") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_reader_frame_count(_ count_out: UnsafeMutablePointer<UInt64>?, _ reader: OpaquePointer?) -> ck_status {
    boundary("ck_zstream_reader_frame_count") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_reader_next(_ reader: OpaquePointer?, _ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ dst_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_next") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_reader_read(_ reader: OpaquePointer?, _ index: UInt64, _ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ dst_format: Int32) -> ck_status {
    boundary("ck_zstream_reader_read") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_zstream_reader_free(_ reader: OpaquePointer?) -> Void {
    _ = reader
}
