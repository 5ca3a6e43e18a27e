/// The one set of rules for names and paths that come from callers or from disk (a dataset's
/// journal, its options, a scan id): the same check on creation and on reopen, so nothing read
/// back can name a file outside the folder it belongs to.
public enum PathRules {
    /// A single file-name component (a device id, a scan id): 1...200 bytes of printable ASCII
    /// without spaces, "/" or "\", and not "." or "..".
    /// - Throws: `invalidArgument` naming `what`.
    public static func checkName(_ name: String, _ what: String) throws(CaptureKitError) {
        guard !name.isEmpty, name.utf8.count <= 200, name != ".", name != "..",
              name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x5C }) else {
            throw .invalidArgument("\(what) \"\(name)\" must be 1...200 printable ASCII characters without spaces or slashes, not \".\" or \"..\" (it names files)")
        }
    }

    /// A relative path that stays inside its folder: not empty or absolute, no "..", "." or empty
    /// components, no backslash or control characters.
    /// - Throws: `invalidArgument`.
    public static func checkRelative(_ p: String) throws(CaptureKitError) {
        guard !p.isEmpty, !p.hasPrefix("/"), p.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x5C && $0 != 0x7F }) else {
            throw .invalidArgument("path \"\(p)\" must be relative, without backslashes or control characters")
        }
        for part in p.split(separator: "/", omittingEmptySubsequences: false) where part.isEmpty || part == "." || part == ".." {
            throw .invalidArgument("path \"\(p)\" must not contain empty, \".\" or \"..\" components")
        }
    }

    /// `base/relative` for a file the library is about to delete or replace: the relative path
    /// passes `checkRelative`, and no folder between `base` and the file is a symbolic link (a
    /// hostile folder cannot redirect a delete elsewhere).
    /// - Throws: `invalidArgument` for a bad path, `corrupt` for a symbolic link on the way.
    public static func contained(_ relative: String, in base: String) throws(CaptureKitError) -> String {
        try checkRelative(relative)
        var dir = base
        for part in relative.split(separator: "/").dropLast() {
            dir += "/" + part
            if FileIO.isSymbolicLink(dir) { throw .corrupt("\(dir) is a symbolic link; CaptureKit does not follow it") }
        }
        return "\(base)/\(relative)"
    }

    /// `base/relative` for a file the library is about to read on a caller's behalf: `contained`,
    /// and the file itself is not a symbolic link either (a per-file link could lead anywhere on
    /// the machine; every CaptureKit tool applies the same rule).
    /// - Throws: `invalidArgument` for a bad path, `corrupt` for a symbolic link.
    public static func readable(_ relative: String, in base: String) throws(CaptureKitError) -> String {
        let full = try contained(relative, in: base)
        if FileIO.isSymbolicLink(full) { throw .corrupt("\(full) is a symbolic link; CaptureKit does not follow it") }
        return full
    }
}
