import CCaptureKitAPI
import CaptureKitCore
import Glibc

// The ABI layer's plumbing: the thread-local error message, the boundary that turns thrown errors
// into status codes, and conversions between the header's value types and the core's.

private let lastErrorKey: pthread_key_t? = {
    var key = pthread_key_t()
    guard pthread_key_create(&key, { free($0) }) == 0 else { return nil }
    return key
}()
private let emptyCString: StaticString = "\0"

/// Stores `message` as this thread's last error (a malloc'd copy freed at thread exit).
func setLastError(_ message: String) {
    guard let key = lastErrorKey else { return }
    let copy = strdup(message)
    free(pthread_getspecific(key))
    _ = pthread_setspecific(key, copy)
}

func staticCString(_ s: StaticString) -> UnsafePointer<CChar>? {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@c @implementation public func ck_last_error_message() -> UnsafePointer<CChar>? {
    if let key = lastErrorKey, let p = pthread_getspecific(key) {
        return UnsafePointer(p.assumingMemoryBound(to: CChar.self))
    }
    return staticCString(emptyCString)
}

/// Runs `body`, mapping a thrown error to its status and "function: message" in the thread-local slot.
@inline(__always)
func boundary(_ function: StaticString, _ body: () throws(CaptureKitError) -> ck_status) -> ck_status {
    do {
        return try body()
    } catch {
        setLastError("\(function): \(error.message)")
        return error.status.rawValue
    }
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

/// A caller count checked against the element size so that `count * stride` cannot overflow, and
/// against an optional upper limit.
func checkedCount(_ count: Int, stride: Int, limit: Int = Int.max, _ name: String) throws(CaptureKitError) -> Int {
    guard count >= 0 else { throw .invalidArgument("\(name) is negative or above SIZE_MAX/2 (\(UInt(bitPattern: count)))") }
    guard count <= limit, !count.multipliedReportingOverflow(by: max(stride, 1)).overflow else {
        throw .invalidArgument("\(name) \(count) is too large (limit \(limit))")
    }
    return count
}

/// The bytes of a caller's image: `height` rows of `width × bytesPerPixel` bytes, `stride` bytes
/// apart (0 = tightly packed), that is `(height − 1) × stride + width × bytesPerPixel` bytes from
/// `base`. The one place caller image sizes are computed: every product and sum is
/// overflow-checked, so no stride or size a C caller passes (1 << 62, SIZE_MAX) can trap.
/// - Throws: `invalidArgument` naming `name` (the pointer) or `strideName`.
func imageSpan(_ base: UnsafeRawPointer?, _ name: String, width: Int, height: Int, bytesPerPixel: Int,
               stride: Int, strideName: String) throws(CaptureKitError) -> (bytes: UnsafeRawBufferPointer, stride: Int) {
    guard width >= 1, height >= 1, bytesPerPixel >= 1 else {
        throw .invalidArgument("\(name): width x height \(width) x \(height) must be at least 1 x 1")
    }
    let row = width.multipliedReportingOverflow(by: bytesPerPixel)
    guard !row.overflow else { throw .invalidArgument("\(name): width \(width) x \(bytesPerPixel) bytes overflows") }
    guard stride >= 0 else { throw .invalidArgument("\(strideName) \(UInt(bitPattern: stride)) is above SIZE_MAX/2") }
    let s = stride == 0 ? row.partialValue : stride
    guard s >= row.partialValue else {
        throw .invalidArgument("\(strideName) \(s) is below width x bytes per pixel = \(row.partialValue)")
    }
    let rows = (height - 1).multipliedReportingOverflow(by: s)
    let total = rows.partialValue.addingReportingOverflow(row.partialValue)
    guard !rows.overflow, !total.overflow else {
        throw .invalidArgument("\(strideName) \(s) x (height - 1 = \(height - 1)) overflows the address space")
    }
    guard let base else { throw .invalidArgument("\(name) is NULL") }
    return (UnsafeRawBufferPointer(start: base, count: total.partialValue), s)
}

/// A C struct that starts with `uint32_t struct_size` and may grow in a minor release (options,
/// frame descriptors). `firstReleaseSize` is its size in the release that introduced it, frozen
/// forever; `defaults` is what its `_init()` function fills in.
protocol GrowableStruct {
    static var firstReleaseSize: Int { get }
    static var defaults: Self { get }
}

/// Reads a caller's growable struct (STYLE.md rule 14): NULL gives `defaults`. Otherwise
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

// MARK: Value conversions

extension ck_vec3 {
    var vec: Vec3 { Vec3(x, y, z) }
    init(_ v: Vec3) { self.init(x: v.x, y: v.y, z: v.z) }
}

extension ck_quat {
    var quaternion: Quaternion { Quaternion(x: x, y: y, z: z, w: w) }
    init(_ q: Quaternion) { self.init(x: q.x, y: q.y, z: q.z, w: q.w) }
}

extension ck_mat4 {
    var matrix: Matrix4 {
        withUnsafeBytes(of: m) { raw in
            let f = raw.bindMemory(to: Float.self)
            return Matrix4(SIMD4(f[0], f[1], f[2], f[3]), SIMD4(f[4], f[5], f[6], f[7]),
                           SIMD4(f[8], f[9], f[10], f[11]), SIMD4(f[12], f[13], f[14], f[15]))
        }
    }
    init(_ matrix: Matrix4) {
        self.init()
        let (a, b, c, d) = matrix.columns
        m = (a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w)
    }
}

extension ck_intrinsics {
    func validated(_ name: String = "intrinsics") throws(CaptureKitError) -> Intrinsics {
        try Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: width, height: height, name: name)
    }
    init(_ k: Intrinsics) {
        self.init(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height)
    }
}

extension ck_box {
    /// The validated core box. `seat` stands it on its floor (edits); read-only queries use the
    /// box exactly as given.
    func validated(_ name: String = "box", seat: Bool) throws(CaptureKitError) -> Box {
        guard has_floor == 0 || has_floor == 1 else {
            throw .invalidArgument("\(name).has_floor must be 0 or 1 (got \(has_floor))")
        }
        do {
            return try Box(center: center.vec, size: size.vec, yaw: yaw, floor: has_floor == 1 ? floor : nil, seat: seat)
        } catch {
            throw .invalidArgument("\(name).\(error.message)")
        }
    }
    init(_ b: Box) {
        self.init(center: ck_vec3(b.center), size: ck_vec3(b.size), yaw: b.yaw,
                  floor: b.floor ?? 0, has_floor: b.floor == nil ? 0 : 1)
    }
}

extension ck_hit {
    init(_ h: Hit) {
        self.init(point: ck_vec3(h.point), distance: h.distance, face: h.face, inside: h.inside ? 1 : 0)
    }
}

/// Reads a pose argument as a validated rigid transform.
func readPose(_ p: UnsafePointer<ck_mat4>?, _ name: String) throws(CaptureKitError) -> Pose {
    try Pose(try required(p, name).pointee.matrix, name: name)
}

/// Edits a caller's box in place: validates it (seated on its floor), applies `edit`, and writes
/// it back only on success.
func editBox(_ box: UnsafeMutablePointer<ck_box>?, _ edit: (inout Box) throws(CaptureKitError) -> Void) throws(CaptureKitError) -> ck_status {
    let p = try required(box, "box")
    var b = try p.pointee.validated(seat: true)
    try edit(&b)
    p.pointee = ck_box(b)
    return CK_OK
}
