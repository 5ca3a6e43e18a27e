import Glibc

/// The only wrapper around the file system (open, read, write, fsync, rename, …).
///
/// Every call maps errno to a `CaptureKitError` naming the path: ENOENT → `notFound`, EEXIST →
/// `exists`, anything else → `io` with the system's message. In debug builds (the test builds) a
/// fault can be injected into the Nth call (`FileIO.failCall(after:)`), so tests can force every
/// failure path; release builds compile the hook away.
public enum FileIO {
    #if DEBUG
    /// Debug-only fault injection: the nth file operation from now *on the calling thread* fails
    /// with `errno` (see `FaultCountdown`: per thread, so that tests running in parallel never see
    /// each other's injected faults).
    static let faults = FaultCountdown()
    public static func failCall(after n: Int, errno code: Int32 = EIO) { faults.arm(n, code: code) }
    public static func stopFailing() { faults.disarm() }
    /// True while an armed fault has not fired yet on this thread.
    public static var faultPending: Bool { faults.remaining != nil }
    /// Calls left until the armed fault fires on this thread (nil: none armed).
    static var countdown: Int? { faults.remaining }
    #endif

    /// Returns true if an injected fault fires for this call (errno is then the injected code).
    @inline(__always)
    static func injected() -> Bool {
        #if DEBUG
        if let code = faults.fire() { errno = code == 0 ? EIO : code; return true }
        #endif
        return false
    }

    static func error(_ what: String, _ path: String, _ code: Int32) -> CaptureKitError {
        let text = String(cString: strerror(code))
        switch code {
        case ENOENT: return .notFound("\(what) \(path): \(text)")
        case EEXIST: return .exists("\(what) \(path): \(text)")
        case ENOMEM: return CaptureKitError(.noMemory, "\(what) \(path): \(text)")
        default: return CaptureKitError(.io, "\(what) \(path): \(text)")
        }
    }

    /// True if something exists at `path`.
    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Renames atomically (same file system). - Throws: `io`/`notFound`.
    public static func rename(_ from: String, _ to: String) throws(CaptureKitError) {
        if injected() || Glibc.rename(from, to) != 0 { throw error("cannot rename to", to, errno) }
    }

    /// Removes a file (no error if it does not exist).
    public static func remove(_ path: String) throws(CaptureKitError) {
        if injected() || (unlink(path) != 0 && errno != ENOENT) { throw error("cannot remove", path, errno) }
    }

    /// fsyncs the directory holding `path`, so a rename or a new file survives a power loss.
    public static func syncDirectory(of path: String) throws(CaptureKitError) {
        let dir = directory(of: path)
        let fd = Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw error("cannot open directory", dir, errno) }
        defer { _ = Glibc.close(fd) }
        if injected() || fsync(fd) != 0 { throw error("cannot fsync directory", dir, errno) }
    }

    /// The directory part of a path ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Bytes available to an unprivileged writer on the file system holding `path`'s directory.
    public static func freeBytes(near path: String) throws(CaptureKitError) -> UInt64 {
        var s = statvfs()
        let dir = directory(of: path)
        if injected() || statvfs(dir, &s) != 0 { throw error("cannot stat file system of", dir, errno) }
        return UInt64(s.f_bavail) &* UInt64(s.f_frsize)
    }

    /// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the
    /// directory. Readers see the old file or the new one, never a mix. Without `overwrite`, an
    /// existing file is an error (`state`) and nothing is written, and a failure leaves no file;
    /// with it, a failure leaves the old file, or the complete new one when only the final
    /// directory fsync failed.
    public static func writeAtomically(_ path: String, _ bytes: UnsafeRawBufferPointer, overwrite: Bool) throws(CaptureKitError) {
        if !overwrite && exists(path) { throw .exists("\(path) exists (pass the overwrite flag to replace it)") }
        let temp = "\(path).tmp-\(getpid())"
        do throws(CaptureKitError) {
            let f = try File.open(temp, .createNew)
            do throws(CaptureKitError) {
                try f.write(bytes)
                try f.sync()
                try f.close()
            } catch {
                f.closeQuietly()
                throw error
            }
            try rename(temp, path)
        } catch {
            try? remove(temp)
            throw error
        }
        do throws(CaptureKitError) {
            try syncDirectory(of: path)
        } catch {
            // The complete new file is in place but may not survive a power loss: report the
            // failure, and without `overwrite` leave nothing behind (nothing was there before).
            if !overwrite { try? remove(path) }
            throw error
        }
    }

    /// Reads a whole file (at most `limit` bytes; larger is `unsupported`).
    public static func readAll(_ path: String, limit: Int = 1 << 30) throws(CaptureKitError) -> [UInt8] {
        let f = try File.open(path, .readOnly)
        defer { f.closeQuietly() }
        let size = try f.size()
        guard size <= UInt64(limit) else { throw .unsupported("\(path) is \(size) bytes, more than the \(limit)-byte limit") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size), alignment: 16)
        defer { buffer.deallocate() }
        let n = try f.read(into: buffer, at: 0)
        return Array(buffer[0..<n])
    }
}

/// An open file descriptor. Not thread-safe; closed by `close()` (reports errors) or on deinit.
public final class File {
    public enum Mode {
        /// Read only; must exist.
        case readOnly
        /// Create; fails with `state` if it exists.
        case createNew
        /// Create or truncate.
        case createOrTruncate
        /// Read and write an existing file, or create it.
        case readWrite
    }

    public let path: String
    private var fd: Int32

    private init(path: String, fd: Int32) { self.path = path; self.fd = fd }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Opens `path`. - Throws: `notFound`, `state` (exists, for `.createNew`), `io`.
    public static func open(_ path: String, _ mode: Mode) throws(CaptureKitError) -> File {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .createOrTruncate: flags = O_RDWR | O_CREAT | O_TRUNC
        case .readWrite: flags = O_RDWR | O_CREAT
        }
        if FileIO.injected() { throw FileIO.error("cannot open", path, errno) }
        let fd = Glibc.open(path, flags | O_CLOEXEC, 0o644)
        if fd < 0 { throw FileIO.error("cannot open", path, errno) }
        return File(path: path, fd: fd)
    }

    /// Writes all of `bytes` at the current position (retrying partial writes and EINTR).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CaptureKitError) {
        guard var p = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            if FileIO.injected() { throw FileIO.error("cannot write", path, errno) }
            let n = Glibc.write(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIO.error("cannot write", path, errno)
            }
            p += n
            left -= n
        }
    }

    /// Writes all of `bytes` at the current position.
    public func write(_ bytes: [UInt8]) throws(CaptureKitError) {
        try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in try write(UnsafeRawBufferPointer(b)) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the count (fewer only at end of file).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(CaptureKitError) -> Int {
        guard var p = buffer.baseAddress else { return 0 }
        var total = 0
        var off = off_t(truncatingIfNeeded: offset)
        while total < buffer.count {
            if FileIO.injected() { throw FileIO.error("cannot read", path, errno) }
            let n = pread(fd, p, buffer.count - total, off)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIO.error("cannot read", path, errno)
            }
            if n == 0 { break }
            total += n; p += n; off += off_t(n)
        }
        return total
    }

    /// Reads up to `buffer.count` bytes at the current position.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(CaptureKitError) -> Int {
        guard let p = buffer.baseAddress else { return 0 }
        while true {
            if FileIO.injected() { throw FileIO.error("cannot read", path, errno) }
            let n = Glibc.read(fd, p, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw FileIO.error("cannot read", path, errno) }
        }
    }

    /// Current size in bytes.
    public func size() throws(CaptureKitError) -> UInt64 {
        var st = stat()
        if FileIO.injected() || fstat(fd, &st) != 0 { throw FileIO.error("cannot stat", path, errno) }
        return UInt64(st.st_size)
    }

    /// Throws `io` when the file is no longer linked in any folder (deleted, or its folder
    /// removed, while open): its writes still succeed, but nothing of them can ever be read back.
    public func requireLinked() throws(CaptureKitError) {
        var st = stat()
        if fstat(fd, &st) != 0 { throw FileIO.error("cannot stat", path, errno) }
        if st.st_nlink == 0 { throw .io("\(path) was deleted while open (was the folder removed?): nothing written to it can be read back") }
    }

    /// Moves the position (absolute).
    public func seek(to offset: UInt64) throws(CaptureKitError) {
        if FileIO.injected() || lseek(fd, off_t(truncatingIfNeeded: offset), SEEK_SET) < 0 {
            throw FileIO.error("cannot seek in", path, errno)
        }
    }

    /// Cuts the file to `size` bytes.
    public func truncate(to size: UInt64) throws(CaptureKitError) {
        if FileIO.injected() || ftruncate(fd, off_t(truncatingIfNeeded: size)) != 0 { throw FileIO.error("cannot truncate", path, errno) }
    }

    /// fsync: data and metadata durable.
    public func sync() throws(CaptureKitError) {
        if FileIO.injected() || fsync(fd) != 0 { throw FileIO.error("cannot fsync", path, errno) }
    }

    /// Closes, reporting errors (a failed close can mean lost data on some file systems).
    public func close() throws(CaptureKitError) {
        guard fd >= 0 else { return }
        let r = Glibc.close(fd)
        fd = -1
        if FileIO.injected() || r != 0 { throw FileIO.error("cannot close", path, errno) }
    }

    /// Closes, ignoring errors (cleanup paths).
    public func closeQuietly() {
        if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
    }
}
