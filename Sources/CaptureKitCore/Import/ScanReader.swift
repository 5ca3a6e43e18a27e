import Glibc

// Reading the captures of other apps (ck_scan): a MultiScan scan (docs/FORMATS.md §1–3) or a Stray
// Scanner capture (docs/FORMATS.md §12). Everything read is hostile: sizes, counts and numbers are
// checked before use, and no path is taken from a file.

/// One frame of a scan: what the app recorded for one camera frame.
public struct ScanFrame: Equatable, Sendable {
    /// Seconds, the app's clock.
    public var timestamp: Double
    /// Camera-to-world, OpenGL camera axes.
    public var pose: Matrix4
    /// The colour camera's, at the colour resolution.
    public var intrinsics: Intrinsics
    /// Its frame in the depth stream (MultiScan) or the number of its files (Stray Scanner).
    public var depthIndex: Int64
    /// Depth (and confidence, when the scan has it) can be read for this frame.
    public var hasDepth: Bool
}

/// A MultiScan scan or a Stray Scanner capture opened for reading.
public final class ScanReader {
    public enum Kind: Int32, Sendable { case multiScan = 1, stray = 2 }

    public let kind: Kind
    /// The folder.
    public let directory: String
    /// MultiScan: the scan id (the files' common name); Stray Scanner: the folder's name.
    public let name: String
    public let frames: [ScanFrame]
    /// The depth maps' size (0 × 0 when the scan has no depth).
    public let depthWidth: Int, depthHeight: Int
    public let hasConfidence: Bool
    /// MultiScan: the metadata.
    public let metadata: ScanMetadata?

    private var depthStream: ZStreamReader?, confidenceStream: ZStreamReader?

    /// The Stray Scanner app records 1920 × 1440 colour on every LiDAR device; its camera matrix
    /// has no size.
    public static let strayColorSize = (width: UInt32(1920), height: UInt32(1440))
    /// Files read whole (metadata, camera info, CSV) larger than this are refused.
    static let textLimit = 256 << 20

    /// Opens `path`: a MultiScan scan folder (one `<id>.json` with its `<id>.jsonl`), the metadata
    /// file `<id>.json` itself, or a Stray Scanner folder (`odometry.csv`).
    /// - Throws: `notFound` (nothing readable there), `invalidArgument` (several scans in the
    ///   folder: pass the metadata file), `corrupt` (a file is damaged: the message names it and
    ///   the line), `io`.
    public init(path: String) throws(CaptureKitError) {
        guard !path.isEmpty else { throw .invalidArgument("path is empty") }
        if path.hasSuffix(".json"), !FileIO.isRealDirectory(path), FileIO.exists(path) {
            let dir = FileIO.directory(of: path)
            let file = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
            let r = try Self.multiScan(directory: dir, id: String(file.dropLast(5)))
            (kind, directory, name, frames, depthWidth, depthHeight, hasConfidence, metadata) = r
            return
        }
        guard FileIO.exists(path) else { throw .notFound("\(path): no such folder") }
        let names = try FileIO.listDirectory(path)
        let set = Set(names)
        let ids = names.filter { $0.hasSuffix(".json") && set.contains(String($0.dropLast(5)) + ".jsonl") }.map { String($0.dropLast(5)) }.sorted()
        if ids.count > 1 {
            throw .invalidArgument("\(path) holds \(ids.count) MultiScan scans (\(ids.prefix(3).joined(separator: ", "))): open one by its <id>.json")
        }
        if let id = ids.first {
            let r = try Self.multiScan(directory: path, id: id)
            (kind, directory, name, frames, depthWidth, depthHeight, hasConfidence, metadata) = r
        } else if set.contains("odometry.csv") {
            let r = try Self.stray(directory: path)
            (kind, directory, name, frames, depthWidth, depthHeight, hasConfidence, metadata) = r
        } else {
            throw .notFound("\(path) holds no MultiScan scan (<id>.json with <id>.jsonl) and no Stray Scanner capture (odometry.csv)")
        }
    }

    private typealias Opened = (Kind, String, String, [ScanFrame], Int, Int, Bool, ScanMetadata?)

    private func file(_ name: String) -> String { directory.hasSuffix("/") ? directory + name : directory + "/" + name }

    // MARK: MultiScan

    private static func join(_ dir: String, _ name: String) -> String { dir.hasSuffix("/") ? dir + name : dir + "/" + name }

    /// A stream resolution from the metadata, checked.
    private static func size(_ r: StreamResolution?, _ what: String) throws(CaptureKitError) -> (Int, Int)? {
        guard let r else { return nil }
        let limit = Int64(ZStream.maxDimension)
        guard (1...limit).contains(r.width), (1...limit).contains(r.height) else {
            throw .corrupt("\(what): resolution [\(r.height), \(r.width)] is outside 1...\(limit)")
        }
        return (Int(r.width), Int(r.height))
    }

    private static func multiScan(directory dir: String, id: String) throws(CaptureKitError) -> Opened {
        let metaPath = join(dir, id + ".json")
        let meta = try ScanMetadata.decode(FileIO.readAll(metaPath, limit: textLimit), what: metaPath)
        let color = meta.streams.first { $0.type == "color_camera" }
        let depth = meta.streams.first { $0.type == "lidar_sensor" || $0.encoding == "float16_zlib" }
        let confidence = meta.streams.first { $0.type == "confidence_map" || $0.encoding == "uint8_zlib" }
        let colorSize = try size(color?.resolution, "\(metaPath): color stream")
        var depthSize = try size(depth?.resolution, "\(metaPath): depth stream")
        if depth != nil && depthSize == nil { throw .corrupt("\(metaPath): the depth stream has no resolution") }
        let depthFile = join(dir, id + ".depth.zlib"), confidenceFile = join(dir, id + ".confidence.zlib")
        if !FileIO.exists(depthFile) { depthSize = nil }
        let depthFrames = depthSize == nil ? 0 : max(0, depth?.numberOfFrames ?? 0)
        var hasConfidence = false
        if let depthSize, confidence != nil, FileIO.exists(confidenceFile) {
            // The app writes no confidence resolution: it is the depth stream's.
            if let c = try size(confidence?.resolution, "\(metaPath): confidence stream"), c != depthSize {
                throw .corrupt("\(metaPath): the confidence stream's resolution differs from the depth stream's")
            }
            hasConfidence = true
        }
        let infoPath = join(dir, id + ".jsonl")
        let records = try CameraInfoRecord.decodeLines(FileIO.readAll(infoPath, limit: textLimit), what: infoPath,
                                                       tolerateTornTail: true).records
        var frames: [ScanFrame] = []
        frames.reserveCapacity(records.count)
        for (i, r) in records.enumerated() {
            let line = "\(infoPath): line \(i + 1)"
            let (w, h): (UInt32, UInt32)
            if let colorSize {
                (w, h) = (UInt32(colorSize.0), UInt32(colorSize.1))
            } else {
                // No colour stream described: the principal point is the image's centre.
                guard r.cx.isFinite, r.cy.isFinite, r.cx >= 0.5, r.cy >= 0.5, r.cx < 32768, r.cy < 32768 else {
                    throw .corrupt("\(line): principal point (\(r.cx), \(r.cy)) gives no image size")
                }
                (w, h) = (UInt32((2 * r.cx).rounded()), UInt32((2 * r.cy).rounded()))
            }
            let k = try reading(line) { () throws(CaptureKitError) in
                try Intrinsics(fx: r.fx, fy: r.fy, cx: r.cx, cy: r.cy, width: w, height: h)
            }
            let pose = try reading(line) { () throws(CaptureKitError) in try Pose(r.transform, name: "transform") }
            frames.append(ScanFrame(timestamp: Double(r.timestamp) / 1e9, pose: pose.matrix, intrinsics: k,
                                    depthIndex: Int64(i), hasDepth: Int64(i) < depthFrames))
        }
        let (dw, dh) = depthSize ?? (0, 0)
        return (.multiScan, dir, id, frames, dw, dh, hasConfidence, meta)
    }

    // MARK: Stray Scanner

    /// Most fields on a CSV line (the app writes 9 to 13): a longer line is refused before it is
    /// split, so a hostile file cannot make us hold many times its size in fields.
    static let maxCSVFields = 64

    /// Splits CSV text into rows of trimmed fields (no quoting: the app writes none).
    /// - Throws: `corrupt` naming `what` and the line when a line has more than `maxCSVFields` fields.
    static func csvRows(_ bytes: [UInt8], what: String) throws(CaptureKitError) -> [[String]] {
        var rows: [[String]] = []
        var lineNumber = 0
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.isEmpty { continue }
            guard line.lazy.filter({ $0 == 0x2C }).count < maxCSVFields else {
                throw .corrupt("\(what): line \(lineNumber) has more than \(maxCSVFields) fields")
            }
            let text = String(decoding: line, as: UTF8.self)
            let fields = text.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
            }
            if fields.allSatisfy({ $0.isEmpty }) { continue }
            rows.append(fields)
        }
        return rows
    }

    /// A finite decimal number, the whole field. - Throws: `corrupt` naming `what`.
    static func number(_ field: String, _ what: String) throws(CaptureKitError) -> Double {
        guard !field.isEmpty, field.utf8.count < 64 else { throw .corrupt("\(what): \"\(field.prefix(64))\" is not a number") }
        let value: Double? = field.withCString { p in
            var end: UnsafeMutablePointer<CChar>? = nil
            let v = strtod(p, &end)
            guard let end, end.pointee == 0, end != UnsafeMutablePointer(mutating: p) else { return nil }
            return v
        }
        guard let v = value, v.isFinite else { throw .corrupt("\(what): \"\(field)\" is not a finite number") }
        return v
    }

    private static func stray(directory dir: String) throws(CaptureKitError) -> Opened {
        let matrixPath = join(dir, "camera_matrix.csv")
        let m = try csvRows(try FileIO.readAll(matrixPath, limit: textLimit), what: matrixPath)
        guard m.count == 3, m.allSatisfy({ $0.count == 3 }) else {
            throw .corrupt("\(matrixPath): expected 3 rows of 3 numbers (the 3x3 camera matrix)")
        }
        var k: [Double] = []
        for (r, row) in m.enumerated() { for (c, f) in row.enumerated() { k.append(try number(f, "\(matrixPath): row \(r + 1), column \(c + 1)")) } }
        guard k[1] == 0, k[3] == 0, k[6] == 0, k[7] == 0, k[8] == 1 else {
            throw .corrupt("\(matrixPath): not a camera matrix [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]")
        }
        let (fx, cx, fy, cy) = (Float(k[0]), Float(k[2]), Float(k[4]), Float(k[5]))
        // The colour size: the app's 1920 x 1440 when the principal point is near its centre, else
        // twice the principal point.
        let standard = ScanReader.strayColorSize
        var (w, h) = standard
        if !(abs(cx - Float(w) / 2) <= Float(w) * 0.05 && abs(cy - Float(h) / 2) <= Float(h) * 0.05) {
            guard cx >= 0.5, cy >= 0.5, cx < 32768, cy < 32768 else {
                throw .corrupt("\(matrixPath): principal point (\(cx), \(cy)) gives no image size")
            }
            (w, h) = (UInt32((2 * cx).rounded()), UInt32((2 * cy).rounded()))
        }
        let intrinsics = try reading(matrixPath) { () throws(CaptureKitError) in
            try Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: w, height: h, name: "camera matrix")
        }

        let odometryPath = join(dir, "odometry.csv")
        let rows = try csvRows(try FileIO.readAll(odometryPath, limit: textLimit), what: odometryPath)
        guard let header = rows.first else { throw .corrupt("\(odometryPath): empty (no header line)") }
        var column: [String: Int] = [:]
        for (i, name) in header.enumerated() where column[name] == nil { column[name] = i }
        let needed = ["timestamp", "frame", "x", "y", "z", "qx", "qy", "qz", "qw"]
        var at: [Int] = []
        for n in needed {
            guard let i = column[n] else { throw .corrupt("\(odometryPath): the header has no \"\(n)\" column (expected \(needed.joined(separator: ", ")))") }
            at.append(i)
        }
        // Newer builds of the app write each frame's camera matrix on its odometry line (fx, fy,
        // cx, cy; camera_matrix.csv then holds one frame's): those are the frame's intrinsics.
        let perFrame = ["fx", "fy", "cx", "cy"]
        let kAt = perFrame.compactMap { column[$0] }
        guard kAt.isEmpty || kAt.count == 4 else {
            throw .corrupt("\(odometryPath): the header names some of fx, fy, cx, cy but not all four")
        }
        // Depth and confidence maps: their size from the first depth PNG.
        let depthDir = join(dir, "depth"), confidenceDir = join(dir, "confidence")
        var frames: [ScanFrame] = []
        frames.reserveCapacity(rows.count)
        var seen = Set<Int64>()
        for (r, row) in rows.dropFirst().enumerated() {
            let line = "\(odometryPath): line \(r + 2)"
            guard row.count == header.count else { throw .corrupt("\(line): \(row.count) fields, the header has \(header.count)") }
            var v: [Double] = []
            for (j, i) in at.enumerated() { v.append(try number(row[i], "\(line), \(needed[j])")) }
            guard v[1] >= 0, v[1] <= 99_999_999, v[1].rounded() == v[1] else { throw .corrupt("\(line): frame \(row[at[1]]) is not a frame number") }
            let number = Int64(v[1])
            guard seen.insert(number).inserted else { throw .corrupt("\(line): frame \(number) is listed twice") }
            let poseCV = try reading(line) { () throws(CaptureKitError) in
                try Pose(rotation: Quaternion(x: Float(v[5]), y: Float(v[6]), z: Float(v[7]), w: Float(v[8])),
                         translation: Vec3(Float(v[2]), Float(v[3]), Float(v[4])))
            }
            var k = intrinsics
            if kAt.count == 4 {
                var q: [Float] = []
                for (j, i) in kAt.enumerated() { q.append(Float(try Self.number(row[i], "\(line), \(perFrame[j])"))) }
                k = try reading(line) { () throws(CaptureKitError) in
                    try Intrinsics(fx: q[0], fy: q[1], cx: q[2], cy: q[3], width: w, height: h, name: "camera matrix")
                }
            }
            // Stray Scanner's poses have OpenCV camera axes (docs/FORMATS.md §12).
            frames.append(ScanFrame(timestamp: v[0], pose: poseCV.flippedCameraAxes.matrix, intrinsics: k,
                                    depthIndex: number, hasDepth: FileIO.exists(join(depthDir, strayName(number)))))
        }
        var dw = 0, dh = 0, hasConfidence = false
        if let first = frames.first(where: { $0.hasDepth }) {
            let firstPath = join(depthDir, strayName(first.depthIndex))
            let info = try pngHeader(firstPath)
            guard info.format == .gray16 else { throw .corrupt("\(firstPath): not a 16-bit grayscale PNG") }
            // A depth map is never larger than the colour image it is aligned with: a file declaring
            // more is refused before anything is allocated for its size.
            guard info.width <= Int(w), info.height <= Int(h) else {
                throw .corrupt("\(firstPath): declares \(info.width) x \(info.height) depth, larger than the capture's \(w) x \(h) colour")
            }
            (dw, dh) = (info.width, info.height)
            hasConfidence = FileIO.exists(join(confidenceDir, strayName(first.depthIndex)))
        }
        let name = dir.split(separator: "/").last.map(String.init) ?? dir
        return (.stray, dir, name, frames, dw, dh, hasConfidence, nil)
    }

    /// `000012.png`
    static func strayName(_ n: Int64) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s + ".png"
    }

    /// The header of a PNG file (reads its first 64 bytes).
    static func pngHeader(_ path: String) throws(CaptureKitError) -> PNGInfo {
        let f = try File.open(path, .readOnly)
        defer { f.closeQuietly() }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { head.deallocate() }
        let n = try f.read(into: head)
        return try reading(path) { () throws(CaptureKitError) in try PNG.info(UnsafeRawBufferPointer(rebasing: head[0..<n])) }
    }

    // MARK: Depth and confidence

    private func checkedFrame(_ index: UInt64) throws(CaptureKitError) -> ScanFrame {
        guard index < UInt64(frames.count) else { throw .notFound("no frame at index \(index): the scan has \(frames.count)") }
        let f = frames[Int(index)]
        guard f.hasDepth else { throw .notFound("frame \(index) has no depth") }
        return f
    }

    /// Reads frame `index`'s depth into `dst` (depthWidth × depthHeight samples of `format`,
    /// tightly packed). dst is written only on success.
    /// - Throws: `notFound` (no such frame, or no depth for it), `corrupt` (the stream or file is
    ///   damaged, cut short before this frame, or not the size the scan says), `io`.
    public func readDepth(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer, format: SampleFormat) throws(CaptureKitError) {
        let f = try checkedFrame(index)
        guard format.isDepth, dst.count >= depthWidth * depthHeight * format.bytesPerSample else {
            throw .invalidArgument("dst must hold \(depthWidth) x \(depthHeight) depth samples")
        }
        switch kind {
        case .multiScan:
            if depthStream == nil {
                depthStream = try ZStreamReader(path: file(name + ".depth.zlib"), width: depthWidth, height: depthHeight, kind: .depth)
            }
            try readStream(depthStream, f.depthIndex, into: dst, format: format)
        case .stray:
            try readPNG(file("depth/" + Self.strayName(f.depthIndex)), .gray16, .depthMM, into: dst, format: format)
        }
    }

    /// Reads frame `index`'s confidence (0–2) into `dst` (depthWidth × depthHeight bytes).
    /// - Throws: `notFound` (no such frame, or the scan has no confidence), otherwise as `readDepth`.
    public func readConfidence(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
        let f = try checkedFrame(index)
        guard hasConfidence else { throw .notFound("the scan has no confidence maps") }
        guard dst.count >= depthWidth * depthHeight else { throw .invalidArgument("dst must hold \(depthWidth) x \(depthHeight) bytes") }
        switch kind {
        case .multiScan:
            if confidenceStream == nil {
                confidenceStream = try ZStreamReader(path: file(name + ".confidence.zlib"), width: depthWidth, height: depthHeight, kind: .confidence)
            }
            try readStream(confidenceStream, f.depthIndex, into: dst, format: .u8)
        case .stray:
            try readPNG(file("confidence/" + Self.strayName(f.depthIndex)), .gray8, .u8, into: dst, format: .u8)
        }
    }

    private func readStream(_ stream: ZStreamReader?, _ index: Int64, into dst: UnsafeMutableRawBufferPointer,
                            format: SampleFormat) throws(CaptureKitError) {
        guard let stream, index >= 0 else { throw .notFound("no stream") }
        guard try stream.read(UInt64(index), into: dst, format: format) else {
            throw .corrupt("\(stream.path): the stream ends before frame \(index) (the metadata counts more frames)")
        }
    }

    private func readPNG(_ path: String, _ png: ImageFormat, _ stored: SampleFormat, into dst: UnsafeMutableRawBufferPointer,
                         format: SampleFormat) throws(CaptureKitError) {
        // The header first: a hostile file must not make us allocate what it declares.
        let head = try Self.pngHeader(path)
        guard head.format == png, head.width == depthWidth, head.height == depthHeight else {
            throw .corrupt("\(path): \(head.width) x \(head.height) \(head.format), the scan's maps are \(depthWidth) x \(depthHeight) \(png)")
        }
        try Self.readMap(path, head, stored, into: dst, format: format)
    }

    /// Reads a map PNG whose header (`head`) the caller has checked against the scan's size and
    /// its buffer, into dst as `format`. The file is read only up to what a PNG of that size can
    /// hold, and the decoded samples are staged in memory that may fail to be allocated
    /// (`noMemory`), never in memory sized by anything else the file says.
    /// - Throws: `corrupt` (the file is larger than its size allows, changed, or is damaged),
    ///   `noMemory`, `io`, `notFound`.
    static func readMap(_ path: String, _ head: PNGInfo, _ stored: SampleFormat, into dst: UnsafeMutableRawBufferPointer,
                        format: SampleFormat) throws(CaptureKitError) {
        let n = head.width * head.height
        guard dst.count >= n * format.bytesPerSample else { throw .invalidArgument("dst must hold \(head.width) x \(head.height) samples") }
        // Stored (zlib level 0) data with one filter byte a row and chunk framing, plus room for
        // ancillary chunks: far above what any encoder writes for this size.
        let limit = head.byteCount + head.byteCount / 4 + head.height + (1 << 20)
        let bytes: [UInt8]
        do throws(CaptureKitError) { bytes = try FileIO.readAll(path, limit: limit) } catch where error.status == .unsupported {
            throw .corrupt("\(path): larger than a \(head.width) x \(head.height) PNG can be (\(limit) bytes)")
        }
        try bytes.withUnsafeBytes { src in
            Result { () throws(CaptureKitError) in
                try withBytes(head.byteCount) { (stage) throws(CaptureKitError) in
                    let got = try reading(path) { () throws(CaptureKitError) in try PNG.decode(src, into: stage) }
                    guard got == head else { throw .corrupt("\(path) changed while it was read") }
                    // PNG.decode gives 16-bit samples native-endian.
                    guard let s = stage.baseAddress, let d = dst.baseAddress else { return }
                    DepthConversion.convert(UnsafeRawPointer(s), stored, d, format, count: n)
                }
            }
        }.get()
    }
}
