// The surface point cloud as PLY (docs/FORMATS.md, "Surface point cloud"): the one writer (the
// coverage export and a splat dataset's sparse_pc.ply) and the strict reader the COLMAP export
// uses for transforms.json's ply_file_path.

/// One point of the surface cloud: world position and unit normal (0 while unknown), colour, the
/// captured views that saw it (saturating at 255).
public struct SurfacePoint: Equatable, Sendable {
    public var position: Vec3
    public var normal: Vec3
    public var color: SIMD3<UInt8>
    public var views: UInt8

    public init(position: Vec3, normal: Vec3 = Vec3(0, 0, 0), color: SIMD3<UInt8>, views: UInt8 = 0) {
        self.position = position; self.normal = normal; self.color = color; self.views = views
    }
}

public enum SurfacePLY {
    /// The name of a splat dataset's initial point cloud (nerfstudio's, as `ns-process-data` names it).
    public static let splatFileName = "sparse_pc.ply"
    /// Largest file the reader takes, and largest vertex count.
    static let maxFileBytes = 1 << 30
    static let maxVertices = 50_000_000

    /// A binary little-endian PLY 1.0 point cloud: x y z float, nx ny nz float, red green blue
    /// uchar, views uchar (28 bytes a vertex).
    public static func bytes(_ points: [SurfacePoint]) -> [UInt8] {
        var out = Array(("ply\nformat binary_little_endian 1.0\ncomment CaptureKit surface coverage\n"
            + "element vertex \(points.count)\nproperty float x\nproperty float y\nproperty float z\n"
            + "property float nx\nproperty float ny\nproperty float nz\n"
            + "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar views\nend_header\n").utf8)
        out.reserveCapacity(out.count + points.count * 28)
        func put(_ f: Float) {
            let b = f.bitPattern.littleEndian
            out.append(UInt8(truncatingIfNeeded: b)); out.append(UInt8(truncatingIfNeeded: b >> 8))
            out.append(UInt8(truncatingIfNeeded: b >> 16)); out.append(UInt8(truncatingIfNeeded: b >> 24))
        }
        for p in points {
            put(p.position.x); put(p.position.y); put(p.position.z); put(p.normal.x); put(p.normal.y); put(p.normal.z)
            out.append(p.color.x); out.append(p.color.y); out.append(p.color.z); out.append(p.views)
        }
        return out
    }

    /// Writes `bytes(points)` to `path` atomically. - Throws: as `FileIO.writeAtomically`.
    public static func write(_ points: [SurfacePoint], to path: String, overwrite: Bool) throws(CaptureKitError) {
        let b = bytes(points)
        try b.withUnsafeBytes { r in
            Result { () throws(CaptureKitError) in try FileIO.writeAtomically(path, r, overwrite: overwrite) }
        }.get()
    }

    /// Reads the vertices of a PLY point cloud: `format binary_little_endian 1.0` or `ascii 1.0`,
    /// the `vertex` element first, scalar properties only, `x y z` float or double (finite),
    /// optional `red green blue` uchar/uint8 (128 when absent); other properties are skipped,
    /// elements after the vertices ignored. Normals and views are not read (0).
    /// - Throws: `corrupt` naming what is wrong (a damaged header, a short file, a non-finite
    ///   coordinate), `unsupported` (another format, list properties in the vertex element), as
    ///   `FileIO.readAll`.
    public static func read(_ path: String) throws(CaptureKitError) -> [SurfacePoint] {
        let data = try FileIO.readAll(path, limit: maxFileBytes)
        // The header: lines up to "end_header\n", within the first 64 KiB.
        let marker = Array("end_header\n".utf8)
        var headerEnd = -1
        var i = 0
        let scan = min(data.count, 1 << 16)
        while i + marker.count <= scan {
            if (i == 0 || data[i - 1] == 0x0A) && data[i] == 0x65 && Array(data[i..<(i + marker.count)]) == marker {
                headerEnd = i + marker.count
                break
            }
            i += 1
        }
        guard data.starts(with: Array("ply\n".utf8)), headerEnd > 0 else {
            throw .corrupt("\(path) is not a PLY file (no \"ply\" line or no \"end_header\" within 64 KiB)")
        }
        guard let header = String(validating: data[0..<headerEnd], as: UTF8.self) else {
            throw .corrupt("\(path): the PLY header is not text")
        }
        enum Kind { case binary, ascii }
        var kind: Kind?
        var count = -1
        var inVertex = false, vertexDone = false
        // Properties of the vertex element: name, byte size, type.
        var props: [(name: String, size: Int, type: String)] = []
        let sizes: [String: Int] = ["char": 1, "uchar": 1, "int8": 1, "uint8": 1, "short": 2, "ushort": 2, "int16": 2, "uint16": 2,
                                    "int": 4, "uint": 4, "float": 4, "int32": 4, "uint32": 4, "float32": 4, "double": 8, "float64": 8]
        for line in header.split(separator: "\n").dropFirst() {
            let w = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let first = w.first else { continue }
            switch first {
            case "format":
                guard w.count == 3, w[2] == "1.0" else { throw .corrupt("\(path): bad PLY format line \"\(line)\"") }
                switch w[1] {
                case "binary_little_endian": kind = .binary
                case "ascii": kind = .ascii
                default: throw .unsupported("\(path): PLY format \(w[1]) is not read (binary_little_endian or ascii)")
                }
            case "comment", "obj_info", "end_header": continue
            case "element":
                guard w.count == 3, let n = Int(w[2]), n >= 0 else { throw .corrupt("\(path): bad PLY element line \"\(line)\"") }
                if inVertex { inVertex = false; vertexDone = true }
                if !vertexDone && count < 0 {
                    guard w[1] == "vertex" else { throw .unsupported("\(path): the first PLY element is \(w[1]), not vertex") }
                    guard n <= maxVertices else { throw .unsupported("\(path): \(n) vertices, more than \(maxVertices)") }
                    count = n
                    inVertex = true
                }
            case "property":
                guard inVertex else { continue }
                guard w.count == 3 else {
                    throw .unsupported("\(path): vertex property \"\(line)\" is not a scalar (list properties are not read)")
                }
                guard let size = sizes[w[1]] else { throw .corrupt("\(path): unknown PLY type \(w[1])") }
                props.append((w[2], size, w[1]))
            default:
                throw .corrupt("\(path): unknown PLY header line \"\(line)\"")
            }
        }
        guard let format = kind, count >= 0 else { throw .corrupt("\(path): the PLY header has no format or no vertex element") }
        func index(_ name: String) -> Int? { props.firstIndex { $0.name == name } }
        guard let ix = index("x"), let iy = index("y"), let iz = index("z"),
              [ix, iy, iz].allSatisfy({ ["float", "float32", "double", "float64"].contains(props[$0].type) }) else {
            throw .corrupt("\(path): the vertices need float or double x, y, z")
        }
        var colour: [Int]? = nil
        if let r = index("red"), let g = index("green"), let b = index("blue") {
            guard [r, g, b].allSatisfy({ ["uchar", "uint8"].contains(props[$0].type) }) else {
                throw .unsupported("\(path): red, green, blue must be uchar")
            }
            colour = [r, g, b]
        }
        var out: [SurfacePoint] = []
        out.reserveCapacity(count)
        func check(_ p: SIMD3<Double>, _ n: Int) throws(CaptureKitError) -> Vec3 {
            let f = Vec3(Float(p.x), Float(p.y), Float(p.z))
            guard f.x.isFinite, f.y.isFinite, f.z.isFinite else { throw .corrupt("\(path): vertex \(n) has a non-finite coordinate") }
            return f
        }
        switch format {
        case .binary:
            var offsets: [Int] = []
            var stride = 0
            for p in props { offsets.append(stride); stride += p.size }
            guard (data.count - headerEnd) / max(stride, 1) >= count else {
                throw .corrupt("\(path): \(count) vertices of \(stride) bytes do not fit in the \(data.count - headerEnd) bytes after the header")
            }
            func scalar(_ at: Int, _ type: String) -> Double {
                var bits: UInt64 = 0
                let size = sizes[type] ?? 4
                for k in 0..<size { bits |= UInt64(data[at + k]) << (8 * UInt64(k)) }
                return size == 8 ? Double(bitPattern: bits) : Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
            }
            for n in 0..<count {
                let base = headerEnd + n * stride
                let p = try check(SIMD3(scalar(base + offsets[ix], props[ix].type), scalar(base + offsets[iy], props[iy].type),
                                        scalar(base + offsets[iz], props[iz].type)), n)
                let c = colour.map { SIMD3(data[base + offsets[$0[0]]], data[base + offsets[$0[1]]], data[base + offsets[$0[2]]]) }
                out.append(SurfacePoint(position: p, color: c ?? SIMD3(128, 128, 128)))
            }
        case .ascii:
            var lines = data[headerEnd...].split(separator: 0x0A, maxSplits: count, omittingEmptySubsequences: false).makeIterator()
            for n in 0..<count {
                guard let line = lines.next(), let text = String(validating: line, as: UTF8.self) else {
                    throw .corrupt("\(path): vertex \(n) is missing or not text")
                }
                let v = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map { Double($0) }
                guard v.count >= props.count, v.allSatisfy({ $0 != nil }) else { throw .corrupt("\(path): vertex \(n) is not \(props.count) numbers") }
                let p = try check(SIMD3(v[ix] ?? 0, v[iy] ?? 0, v[iz] ?? 0), n)
                var c = SIMD3<UInt8>(128, 128, 128)
                if let rgb = colour {
                    for k in 0..<3 {
                        guard let x = v[rgb[k]], x >= 0, x <= 255, x == x.rounded() else { throw .corrupt("\(path): vertex \(n) has a colour outside 0...255") }
                        c[k] = UInt8(x)
                    }
                }
                out.append(SurfacePoint(position: p, color: c))
            }
        }
        return out
    }
}
