import CCaptureKitAPI
import CaptureKitCore

// Growable option structs (docs/DESIGN.md#api-shape, "Options structs").

/// A C struct that starts with `uint32_t struct_size` and may grow in a minor release (options,
/// frame descriptors). `firstReleaseSize` is its size in the release that introduced it, frozen
/// forever; `defaults` is what its `_init()` function fills in.
protocol GrowableStruct {
    static var firstReleaseSize: Int { get }
    static var defaults: Self { get }
}

/// Reads a caller's growable struct (docs/DESIGN.md#api-shape, "Options structs"): NULL gives `defaults`. Otherwise
/// struct_size must be at least the first release's size; the first min(struct_size, known size)
/// bytes are copied over the library's defaults (so a binary built against an older, smaller
/// layout gets the defaults for the fields it does not know); a larger struct_size (a newer
/// header) is accepted only if the bytes this library does not know are all zero.
/// - Throws: `invalidArgument` (struct_size below the first release's or absurd), `unsupported`.
func readOptions<T: GrowableStruct, R>(_ p: UnsafePointer<T>?, _ name: String, defaults: R,
                                       _ convert: (T) throws(CaptureKitError) -> R) throws(CaptureKitError) -> R {
    guard let p else { return defaults }
    let declared = Int(UnsafeRawPointer(p).load(as: UInt32.self))
    let known = MemoryLayout<T>.size
    guard declared >= T.firstReleaseSize else {
        throw .invalidArgument("\(name).struct_size \(declared) is smaller than the first release's \(T.firstReleaseSize) bytes; initialise it with the _INIT macro or _options_init()")
    }
    guard declared <= 4096 else { throw .invalidArgument("\(name).struct_size \(declared) is absurd") }
    if declared > known {
        let raw = UnsafeRawBufferPointer(start: UnsafeRawPointer(p), count: declared)
        if raw[known...].contains(where: { $0 != 0 }) {
            throw .unsupported("\(name) sets fields of a newer CaptureKit (struct_size \(declared) > \(known)) that this library does not support")
        }
    }
    var value = T.defaults
    withUnsafeMutableBytes(of: &value) { dst in
        dst.copyMemory(from: UnsafeRawBufferPointer(start: UnsafeRawPointer(p), count: min(declared, known)))
    }
    return try convert(value)
}

/// Fills a caller's growable struct of `size` bytes with `value` (an `_init` / `_init_sized`
/// function, docs/DESIGN.md#api-shape, "Options structs"): exactly the first `size` bytes, its
/// struct_size set to `size`, never a byte more (a binary built against an older, smaller layout
/// owns only those). The unsized `_init` symbols pass `T.firstReleaseSize`.
/// - Throws: `invalidArgument` (NULL, size below the first release's), `unsupported` (a size above
///   this library's layout: the caller's header is newer than the library); nothing is written then.
func fillGrowable<T: GrowableStruct>(_ out: UnsafeMutablePointer<T>?, _ name: String, size: Int, _ value: T) throws(CaptureKitError) {
    let p = try required(out, name)
    let known = MemoryLayout<T>.size
    guard size >= T.firstReleaseSize else {
        throw .invalidArgument("struct_size \(size) is smaller than the first release's \(T.firstReleaseSize) bytes of \(name)'s struct; pass sizeof() of it")
    }
    guard size <= known else {
        throw .unsupported("struct_size \(size) of \(name) is larger than this library's \(known) bytes: the caller's header is newer than the library")
    }
    var v = value
    withUnsafeMutableBytes(of: &v) { bytes in
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: size), toByteOffset: 0, as: UInt32.self)
        UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(p), count: size)
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<size]))
    }
}
