// The JSON files of a dataset (docs/FORMATS.md §2–5, §8): model types with writers and readers, all through
// `JSON` (json-c). Writers produce the bytes (and write them atomically on request); readers take
// bytes or a path and throw `corrupt` with the file name and the key path of the first problem.
// Every reader restores exactly what the matching writer wrote (numbers bit for bit).

// MARK: - Helpers shared by the manifest files

/// Runs a reader body, turning any error into `corrupt` prefixed with `what` (out of memory stays).
@inline(__always)
func reading<T>(_ what: String, _ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
    do {
        return try body()
    } catch {
        if error.status == .noMemory { throw error }
        throw .corrupt("\(what): \(error.message)")
    }
}

/// Pretty JSON text with a final newline (the manifests' layout).
func prettyFile(_ value: JSONValue) throws(CaptureKitError) -> [UInt8] {
    var bytes = try JSON.serialize(value, pretty: true)
    bytes.append(0x0A)
    return bytes
}

/// Writes bytes atomically (temp + fsync + rename + directory fsync).
func writeFile(_ bytes: [UInt8], to path: String, overwrite: Bool) throws(CaptureKitError) {
    try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
        try FileIO.writeAtomically(path, UnsafeRawBufferPointer(b), overwrite: overwrite)
    }
}

/// Manifests are small; a larger file is refused before reading it.
let manifestSizeLimit = 1 << 30

/// True if the last path component has a non-empty name and a non-empty extension ("a/b.png").
func hasExtension(_ path: String) -> Bool {
    let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    guard let dot = last.lastIndex(of: ".") else { return false }
    return dot != last.startIndex && last.index(after: dot) != last.endIndex
}

extension Matrix4 {
    /// Row-major nested lists `[[m00, m01, m02, m03], …]` (transforms.json, boundingbox.json).
    var rowMajorJSON: JSONValue {
        .array((0..<4).map { r in .floats((0..<4).map { c in self[r, c] }) })
    }

    /// Reads row-major nested lists (4 rows of 4 numbers).
    init(rowMajor node: JSONNode) throws(CaptureKitError) {
        var cols = [SIMD4<Float>](repeating: .zero, count: 4)
        for (r, row) in try node.array(count: 4).enumerated() {
            for (c, x) in try row.floats(count: 4).enumerated() { cols[c][r] = x }
        }
        self.init(cols[0], cols[1], cols[2], cols[3])
    }

    /// Reads 16 column-major numbers (MultiScan `transform`).
    init(columnMajor node: JSONNode) throws(CaptureKitError) {
        self.init(columnMajor: try node.floats(count: 16))
    }
}

