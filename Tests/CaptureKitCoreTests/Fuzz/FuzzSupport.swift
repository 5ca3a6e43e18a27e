import Glibc
@testable import CaptureKitCore

// Shared by the libFuzzer driver (Tests/fuzz/driver.swift, built by Tests/fuzz/build.sh with
// -sanitize=fuzzer,address) and by CorpusReplayTests (swift test replays every committed corpus
// file and crasher through the same target bodies, without the fuzzer build).

/// An invariant a fuzz target found broken (the driver turns it into a crash, the replay test into
/// a failed expectation).
public struct FuzzFailure: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Fails the current input when `condition` is false.
@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Reads typed values from the fuzzer's bytes; past the end every read gives zeros.
struct FuzzInput {
    let bytes: [UInt8]
    var pos = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { pos >= bytes.count }
    var remaining: Int { max(0, bytes.count - pos) }

    mutating func u8() -> UInt8 {
        guard pos < bytes.count else { return 0 }
        defer { pos += 1 }
        return bytes[pos]
    }

    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }
    mutating func bool() -> Bool { u8() & 1 == 1 }

    /// A float that is hostile one time in two: NaN, ±inf, huge, tiny, ±0, or raw bits.
    mutating func float() -> Float {
        let tag = u8()
        switch tag % 16 {
        case 0: return .nan
        case 1: return .infinity
        case 2: return -.infinity
        case 3: return .greatestFiniteMagnitude
        case 4: return -.greatestFiniteMagnitude
        case 5: return .leastNonzeroMagnitude
        case 6: return -0.0
        case 7: return Float(bitPattern: u32())
        default: return Float(Int8(bitPattern: u8())) / 16  // ordinary values, −8 ... 8
        }
    }

    mutating func double() -> Double {
        let tag = u8()
        switch tag % 12 {
        case 0: return .nan
        case 1: return .infinity
        case 2: return -.greatestFiniteMagnitude
        case 3: return Double(bitPattern: u64())
        default: return Double(u16()) / 8
        }
    }

    /// A size argument: mostly `fit` (a size the caller's buffer really has), sometimes hostile:
    /// 0, fit − 1, or values no buffer can have (negative as `Int`, 1 << 62, `Int.max`).
    mutating func size(fit: Int) -> Int {
        switch u8() % 10 {
        case 0: return 0
        case 1: return max(0, fit - 1)
        case 2: return -1                    // SIZE_MAX
        case 3: return 1 << 62
        case 4: return Int.max
        case 5: return Int.min               // SIZE_MAX / 2 + 1
        default: return fit
        }
    }

    /// The next `n` bytes (fewer at the end).
    mutating func take(_ n: Int) -> [UInt8] {
        let n = max(0, min(n, remaining))
        defer { pos += n }
        return Array(bytes[pos..<(pos + n)])
    }

    /// Everything left.
    mutating func rest() -> [UInt8] { take(remaining) }
}

/// Per-process scratch folders for targets that read files: in /dev/shm when present (tmpfs:
/// fsync costs nothing there), else /tmp.
enum FuzzScratch {
    static let root: String = {
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        let dir = "\(base)/ckfuzz-\(getpid())"
        mkdir(dir, 0o755)
        return dir
    }()

    /// A fresh, empty folder for `target` (its old contents removed).
    static func folder(_ target: String) -> String {
        let dir = "\(root)/\(target)"
        removeTree(dir)
        mkdir(dir, 0o755)
        return dir
    }

    /// Writes `bytes` to `path` (replacing it); false on failure.
    @discardableResult
    static func write(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { b in b.baseAddress.map { Glibc.write(fd, $0 + off, bytes.count - off) } ?? -1 }
            if n <= 0 { return false }
            off += n
        }
        return true
    }

    /// Removes a file or a folder tree (best effort).
    static func removeTree(_ path: String) {
        guard let d = opendir(path) else { unlink(path); return }
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            removeTree("\(path)/\(name)")
        }
        closedir(d)
        rmdir(path)
    }
}
