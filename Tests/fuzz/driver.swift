// The libFuzzer entry points. Built by Tests/fuzz/build.sh together with the target bodies in
// Tests/CaptureKitCoreTests/Fuzz/ (one binary for every target); CK_FUZZ_TARGET names the target.
import Glibc

nonisolated(unsafe) var selected: FuzzTargets.Body?
nonisolated(unsafe) var selectedName = ""

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    if let seeds = getenv("CK_FUZZ_SEEDS").map({ String(cString: $0) }) {
        Seeds.make(seeds, repo: getenv("CK_REPO").map { String(cString: $0) } ?? ".")
        exit(0)
    }
    guard let name = getenv("CK_FUZZ_TARGET").map({ String(cString: $0) }), let body = FuzzTargets.body(name) else {
        say("set CK_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: " "))\n")
        exit(2)
    }
    selected = body
    selectedName = name
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do throws(FuzzFailure) {
        try selected?(bytes)
    } catch {
        say("FUZZ INVARIANT BROKEN in \(selectedName): \(error.message)\n")
        abort()
    }
    return 0
}

/// Writes to standard error (fd 2).
func say(_ text: String) {
    var t = text
    t.withUTF8 { b in _ = b.baseAddress.map { write(2, $0, b.count) } }
}
