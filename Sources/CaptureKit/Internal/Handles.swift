import CaptureKitCore

// The one way the ABI layer turns handles into objects and back (every ck_* handle is a Swift
// object passed out with one retain).

/// The object behind a handle, borrowed for the call (the caller keeps its reference).
/// - Throws: `invalidArgument("<name> is NULL")`.
@inline(__always)
func object<T: AnyObject>(_ p: OpaquePointer?, _ name: String, as: T.Type) throws(CaptureKitError) -> T {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(p)).takeUnretainedValue()
}

/// Hands a new object to the caller (one retain, released by the matching free/close).
@inline(__always)
func handOut<T: AnyObject>(_ obj: T) -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(obj).toOpaque()) }

/// Releases the caller's reference (NULL does nothing).
@inline(__always)
func release<T: AnyObject>(_ p: OpaquePointer?, as: T.Type) {
    if let p { Unmanaged<T>.fromOpaque(UnsafeRawPointer(p)).release() }
}
