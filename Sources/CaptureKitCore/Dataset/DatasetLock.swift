import Glibc

/// The one-writer lock of a dataset folder: an exclusive `flock` on `<folder>/.capturekit.lock`,
/// held by every writable `Dataset` for its whole life and dropped by the kernel when the
/// descriptor is closed or the process dies (a SIGKILL leaves no stale lock). `flock` locks belong
/// to the open file description, so a second open of the same file, in this process or another,
/// conflicts: a second writer in the same process is refused too. The file holds the holder's
/// process id as text, for the refusal's message only (never trusted for anything else).
final class DatasetLock {
    static let fileName = ".capturekit.lock"
    let path: String
    private var fd: Int32
    /// The lock file did not exist before this lock created it (a refused open removes it again).
    let createdFile: Bool

    private init(path: String, fd: Int32, createdFile: Bool) { self.path = path; self.fd = fd; self.createdFile = createdFile }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Takes the lock of `directory` (which must exist), without waiting.
    /// - Throws: `busy` naming the folder and the holder's pid (when the file names one); `io`,
    ///   `corrupt` (the lock file is a symbolic link or not a regular file).
    static func acquire(_ directory: String) throws(CaptureKitError) -> DatasetLock {
        let path = "\(directory)/\(fileName)"
        // A lock file that another opener removes between our open and our flock (a refused open
        // cleaning up) would lock a deleted inode: retry until the locked file is the one named.
        for _ in 0..<8 {
            let existed = FileIO.exists(path)
            if FileIO.injected() { throw FileIO.error("cannot open", path, errno) }
            let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if fd < 0 {
                if errno == ELOOP { throw .corrupt("\(path) is a symbolic link; a dataset's files are its own") }
                if errno == EISDIR { throw .corrupt("\(path) is a folder, not the dataset's lock file; remove it") }
                throw FileIO.error("cannot open", path, errno)
            }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                _ = Glibc.close(fd)
                throw .corrupt("\(path) is not a regular file")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                let holder = readHolder(fd)
                _ = Glibc.close(fd)
                if code == EWOULDBLOCK || code == EAGAIN {
                    let who = holder.map { "process \($0)" } ?? "another handle"
                    throw .busy("\(directory) is open for writing by \(who) (\(fileName)); one writer per dataset: close that handle first, or open it read-only")
                }
                throw FileIO.error("cannot lock", path, code)
            }
            var named = stat()
            guard lstat(path, &named) == 0, named.st_ino == st.st_ino, named.st_dev == st.st_dev else {
                _ = Glibc.close(fd)
                continue
            }
            return DatasetLock(path: path, fd: fd, createdFile: !existed)
        }
        throw .busy("\(directory): its lock file \(fileName) keeps being replaced")
    }

    /// Writes this process's id into the lock file, for a refused opener's message. Called once
    /// the open is decided (a refused open leaves the file's bytes as they were); the pid is a
    /// courtesy: failing to write it does not refuse the open.
    func recordHolder() {
        guard fd >= 0 else { return }
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
    }

    /// The pid written in the lock file (nil: none readable).
    private static func readHolder(_ fd: Int32) -> Int32? {
        var buf = [UInt8](repeating: 0, count: 24)
        let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let digits = buf[0..<n].prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        return Int32(String(decoding: digits, as: UTF8.self))
    }

    /// Releases the lock; with `removingFile`, the lock file is deleted first (a refused open that
    /// created it, or a cancel), while still held, so no other opener ever sees it half-gone.
    func release(removingFile: Bool = false) {
        guard fd >= 0 else { return }
        if removingFile { _ = unlink(path) }
        _ = Glibc.close(fd)
        fd = -1
    }
}
