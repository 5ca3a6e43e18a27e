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
    do {
        return try body()
    } catch {
        setLastError("\(function): \(error.message)")
        return error.status.rawValue
    }
}
