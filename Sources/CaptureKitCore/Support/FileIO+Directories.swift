import Glibc

/// Directory operations, through the same fault hook as every other file operation (so tests can
/// fail the Nth mkdir, listing or rmdir of a dataset).
extension FileIO {
    /// Creates a directory. - Returns: false if something already exists at `path`.
    /// - Throws: `notFound` (missing parent), `io`.
    public static func makeDirectory(_ path: String) throws(CaptureKitError) -> Bool {
        if injected() { throw error("cannot create directory", path, errno) }
        if mkdir(path, 0o755) == 0 { return true }
        let e = errno
        if e == EEXIST { return false }
        throw error("cannot create directory", path, e)
    }

    /// The names in a directory, without "." and "..". - Throws: `notFound`, `io`.
    public static func listDirectory(_ path: String) throws(CaptureKitError) -> [String] {
        guard !injected(), let d = opendir(path) else { throw error("cannot open directory", path, errno) }
        defer { closedir(d) }
        var names: [String] = []
        errno = 0
        while let e = readdir(d) {
            // Read the name in place, up to its NUL: a dirent is only as long as its name (d_reclen),
            // so copying the 256-byte d_name array would read past the record.
            let name = withUnsafeMutablePointer(to: &e.pointee.d_name) { p in
                p.withMemoryRebound(to: UInt8.self, capacity: 1) { c in String(decoding: UnsafeBufferPointer(start: c, count: strlen(UnsafeRawPointer(c).assumingMemoryBound(to: CChar.self))), as: UTF8.self) }
            }
            if name != "." && name != ".." { names.append(name) }
            errno = 0
        }
        if errno != 0 || injected() { throw error("cannot read directory", path, errno == 0 ? EIO : errno) }
        return names
    }

    /// Removes an empty directory. - Returns: false if it is missing or not empty (kept).
    /// - Throws: `io` for any other failure.
    public static func removeDirectory(_ path: String) throws(CaptureKitError) -> Bool {
        if injected() { throw error("cannot remove directory", path, errno) }
        if rmdir(path) == 0 { return true }
        let e = errno
        if e == ENOENT || e == ENOTEMPTY || e == EEXIST { return false }
        throw error("cannot remove directory", path, e)
    }

    /// True if `path` is a directory itself (not a symbolic link to one).
    public static func isRealDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// True if `path` is a regular file itself (not a symbolic link to one).
    public static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// True if `path` is a symbolic link.
    public static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }
}
