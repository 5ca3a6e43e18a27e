import CCaptureKitAPI
import CaptureKitCore

// Header section ck_depth.h: PNG. STUBS until implemented: every call returns CK_E_UNSUPPORTED.

@c @implementation public func ck_png_encode_bound(_ width: UInt32, _ height: UInt32, _ format: Int32) -> Int {
    0
}

@c @implementation public func ck_png_encode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?, _ pixels: UnsafeRawPointer?, _ width: UInt32, _ height: UInt32, _ stride: Int, _ format: Int32, _ level: Int32) -> ck_status {
    boundary("ck_png_encode") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_png_write(_ path: UnsafePointer<CChar>?, _ pixels: UnsafeRawPointer?, _ width: UInt32, _ height: UInt32, _ stride: Int, _ format: Int32, _ level: Int32, _ flags: UInt32) -> ck_status {
    boundary("ck_png_write") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_png_info(_ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?, _ format_out: UnsafeMutablePointer<Int32>?, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_png_info") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_png_decode(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ src: UnsafeRawPointer?, _ src_size: Int) -> ck_status {
    boundary("ck_png_decode") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_png_read_info(_ width_out: UnsafeMutablePointer<UInt32>?, _ height_out: UnsafeMutablePointer<UInt32>?, _ format_out: UnsafeMutablePointer<Int32>?, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_png_read_info") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}

@c @implementation public func ck_png_read(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_png_read") { () throws(CaptureKitError) in throw .unsupported("not implemented yet") }
}
