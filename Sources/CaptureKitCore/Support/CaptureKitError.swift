/// The error every core function throws: a status that mirrors a `CK_E_*` code plus a message.
///
/// Messages name the argument at fault (the C parameter name) so that the ABI layer only has to
/// prefix the function name.
public struct CaptureKitError: Error, Equatable, CustomStringConvertible {
    /// Status codes, values identical to the `CK_E_*` macros of `capturekit.h`.
    public enum Status: Int32, Sendable {
        case invalidArgument = -1
        case bufferTooSmall = -2
        case io = -3
        case corrupt = -4
        case state = -5
        case unsupported = -6
        case notFound = -7
        case noMemory = -8
        case exists = -9
        case busy = -10
    }

    public var status: Status
    public var message: String

    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status): \(message)" }

    public static func invalidArgument(_ message: String) -> CaptureKitError { .init(.invalidArgument, message) }
    public static func state(_ message: String) -> CaptureKitError { .init(.state, message) }
    public static func notFound(_ message: String) -> CaptureKitError { .init(.notFound, message) }
    public static func unsupported(_ message: String) -> CaptureKitError { .init(.unsupported, message) }
    public static func bufferTooSmall(_ message: String) -> CaptureKitError { .init(.bufferTooSmall, message) }
    public static func corrupt(_ message: String) -> CaptureKitError { .init(.corrupt, message) }
    public static func io(_ message: String) -> CaptureKitError { .init(.io, message) }
    public static func noMemory(_ message: String) -> CaptureKitError { .init(.noMemory, message) }
    public static func exists(_ message: String) -> CaptureKitError { .init(.exists, message) }
    public static func busy(_ message: String) -> CaptureKitError { .init(.busy, message) }
}

/// Checks that a float argument is finite.
/// - Throws: `invalidArgument` naming `name`.
@inline(__always)
func requireFinite(_ value: Float, _ name: @autoclosure () -> String) throws(CaptureKitError) {
    guard value.isFinite else { throw .invalidArgument("\(name()) is not finite (\(value))") }
}

/// Checks that a vector is finite and every coordinate is within ±`Geometry.maxCoordinate`.
func requireCoordinate(_ value: SIMD3<Float>, _ name: @autoclosure () -> String) throws(CaptureKitError) {
    for i in 0..<3 {
        guard value[i].isFinite else { throw .invalidArgument("\(name()) is not finite (\(value.text))") }
        guard abs(value[i]) <= Geometry.maxCoordinate else {
            throw .invalidArgument("\(name()) is beyond ±\(Geometry.maxCoordinate) m (\(value.text))")
        }
    }
}

/// Checks that a vector is finite (any magnitude).
func requireFinite(_ value: SIMD3<Float>, _ name: @autoclosure () -> String) throws(CaptureKitError) {
    guard value.x.isFinite, value.y.isFinite, value.z.isFinite else {
        throw .invalidArgument("\(name()) is not finite (\(value.text))")
    }
}
