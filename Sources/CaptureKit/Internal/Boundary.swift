import CCaptureKitAPI
import CaptureKitCore
import Glibc

// The boundary every @c function runs in: thrown errors become a status and a thread-local
// message ("function: message"); nothing traps or throws across C.

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
    let status: ck_status
    do {
        status = try body()
    } catch {
        setLastError("\(function): \(error.message)")
        status = error.status.rawValue
    }
    if statusTrace.enabled { statusTrace.record(function, status) }
    return status
}

/// The status trace (tests only): with CK_TRACE_STATUS=<file> in the environment, each distinct
/// "function status" pair a call returns is appended to the file, once per process. The test
/// suites run with it, and scripts/check_status_coverage.py checks that every status a header's
/// @return list promises has been produced by some test.
final class StatusTrace: @unchecked Sendable {
    let enabled: Bool
    private let fd: Int32
    private var seen = Set<String>()
    private var lock = pthread_mutex_t()

    init() {
        guard let path = getenv("CK_TRACE_STATUS"), path.pointee != 0 else { enabled = false; fd = -1; return }
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        enabled = fd >= 0
        pthread_mutex_init(&lock, nil)
    }

    func record(_ function: StaticString, _ status: ck_status) {
        let line = "\(function) \(status)\n"
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        guard seen.insert(line).inserted else { return }
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
let statusTrace = StatusTrace()
