import CCaptureKitAPI
import CaptureKitCore
import Glibc

// Header section "Status and version".

@c @implementation public func ck_status_string(_ status: ck_status) -> UnsafePointer<CChar>? {
    switch status {
    case CK_OK: return staticCString("CK_OK: success\0")
    case CK_MISS: return staticCString("CK_MISS: no hit\0")
    case CK_END: return staticCString("CK_END: no more items\0")
    case CK_E_INVALID_ARGUMENT: return staticCString("CK_E_INVALID_ARGUMENT: invalid argument\0")
    case CK_E_BUFFER_TOO_SMALL: return staticCString("CK_E_BUFFER_TOO_SMALL: buffer too small\0")
    case CK_E_IO: return staticCString("CK_E_IO: input/output error\0")
    case CK_E_CORRUPT: return staticCString("CK_E_CORRUPT: corrupt or truncated data\0")
    case CK_E_STATE: return staticCString("CK_E_STATE: invalid in the current state\0")
    case CK_E_UNSUPPORTED: return staticCString("CK_E_UNSUPPORTED: unsupported\0")
    case CK_E_NOT_FOUND: return staticCString("CK_E_NOT_FOUND: not found\0")
    case CK_E_NO_MEMORY: return staticCString("CK_E_NO_MEMORY: out of memory\0")
    case CK_E_EXISTS: return staticCString("CK_E_EXISTS: a file or folder is in the way\0")
    case CK_E_BUSY: return staticCString("CK_E_BUSY: in use by another writer\0")
    default: return staticCString("unknown status\0")
    }
}

@c @implementation public func ck_version_number() -> UInt32 {
    UInt32(CK_VERSION_MAJOR * 10000 + CK_VERSION_MINOR * 100 + CK_VERSION_PATCH)
}

@c @implementation public func ck_version_string() -> UnsafePointer<CChar>? {
    staticCString("0.2.0\0")
}

@c @implementation public func ck_free(_ ptr: UnsafeMutableRawPointer?) {
    free(ptr)
}
