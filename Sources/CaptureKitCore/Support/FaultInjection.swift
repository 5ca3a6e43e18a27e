import Glibc

#if DEBUG
/// Debug-only fault injection at one seam (file operations, json-c, zlib, zstd): "the Nth call
/// from now on the calling thread fails", with a seam-specific code to fail with (errno, zlib or
/// zstd error).
///
/// Shared by the wrappers `FileIO`, `JSON`, `Zlib` and `ZstdContext` so that the per-thread storage
/// is written once. Per thread (pthread keys, no Foundation), so that tests running in parallel
/// (Swift Testing runs suites concurrently) never see each other's faults. Release builds compile
/// every use away. Not for code reachable from C in release builds.
struct FaultCountdown: Sendable {
    private let countKey: pthread_key_t?
    private let codeKey: pthread_key_t?

    init() {
        countKey = FaultCountdown.makeKey()
        codeKey = FaultCountdown.makeKey()
    }

    private static func makeKey() -> pthread_key_t? {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }

    /// Calls left on this thread until the fault fires, the firing call included (nil: off). The
    /// count is stored as the slot's pointer value (never 0: nil clears the slot).
    var remaining: Int? {
        get { countKey.flatMap { pthread_getspecific($0) }.map { Int(bitPattern: $0) } }
        nonmutating set {
            if let k = countKey { _ = pthread_setspecific(k, newValue.flatMap { UnsafeRawPointer(bitPattern: $0) }) }
        }
    }

    /// The code the failing call reports (0 until `arm` sets one).
    var code: Int32 {
        get { codeKey.flatMap { pthread_getspecific($0) }.map { Int32(truncatingIfNeeded: Int(bitPattern: $0)) } ?? 0 }
        nonmutating set { if let k = codeKey { _ = pthread_setspecific(k, UnsafeRawPointer(bitPattern: Int(newValue))) } }
    }

    /// The `n`th call from now on this thread fails (`n` < 1 counts as 1) with `code`.
    func arm(_ n: Int, code: Int32 = 0) {
        remaining = max(n, 1)
        self.code = code
    }

    /// No more faults on this thread.
    func disarm() { remaining = nil }

    /// Counts one call; returns the code to fail with when this call is the one (the seam is then
    /// disarmed), else nil.
    @inline(__always)
    func fire() -> Int32? {
        guard let c = remaining else { return nil }
        if c <= 1 {
            remaining = nil
            return code
        }
        remaining = c - 1
        return nil
    }
}
#endif
