import CaptureKitCore

// The one reader for each kind of string argument.

/// A path argument: non-NULL, valid UTF-8, not empty.
/// - Throws: `invalidArgument` naming `name`.
func readPath(_ p: UnsafePointer<CChar>?, _ name: String) throws(CaptureKitError) -> String {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    let s = try readString(p, name, fallback: "")
    guard !s.isEmpty else { throw .invalidArgument("\(name) is empty") }
    return s
}

/// An optional string argument (an option field): NULL gives `fallback`; otherwise valid UTF-8.
/// - Throws: `invalidArgument` naming `name`.
func readString(_ p: UnsafePointer<CChar>?, _ name: String, fallback: String) throws(CaptureKitError) -> String {
    guard let p else { return fallback }
    guard let s = String(validatingCString: p) else { throw .invalidArgument("\(name) is not valid UTF-8") }
    return s
}

/// A non-NULL pointer or `invalidArgument("<name> is NULL")`.
@inline(__always)
func required<T>(_ p: UnsafePointer<T>?, _ name: String) throws(CaptureKitError) -> UnsafePointer<T> {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    return p
}
@inline(__always)
func required<T>(_ p: UnsafeMutablePointer<T>?, _ name: String) throws(CaptureKitError) -> UnsafeMutablePointer<T> {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    return p
}

@inline(__always)
func requiredRaw(_ p: UnsafeRawPointer?, _ name: String) throws(CaptureKitError) -> UnsafeRawPointer {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    return p
}
@inline(__always)
func requiredRaw(_ p: UnsafeMutableRawPointer?, _ name: String) throws(CaptureKitError) -> UnsafeMutableRawPointer {
    guard let p else { throw .invalidArgument("\(name) is NULL") }
    return p
}
