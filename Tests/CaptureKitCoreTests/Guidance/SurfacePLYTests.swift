import Foundation
import Testing
@testable import CaptureKitCore

/// The surface PLY (SurfacePLY.swift): the one writer, and the strict reader of a dataset's
/// ply_file_path (the COLMAP export's points3D.txt), against files written here by hand.
struct SurfacePLYTests {
    let dir: String

    init() throws { dir = try makeTempDirectory("surface-ply") }

    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = "\(dir)/\(name)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func le(_ f: Float) -> [UInt8] { withUnsafeBytes(of: f.bitPattern.littleEndian) { Array($0) } }

    @Test func roundTripKeepsPositionsAndColours() throws {
        let points = [SurfacePoint(position: Vec3(1, -2, 3.5), normal: Vec3(0, 1, 0), color: SIMD3(10, 20, 30), views: 4),
                      SurfacePoint(position: Vec3(-0.25, 0, 1e-3), color: SIMD3(255, 0, 128))]
        let path = "\(dir)/a.ply"
        try SurfacePLY.write(points, to: path, overwrite: false)
        let bytes = try FileIO.readAll(path)
        let header = Array("end_header\n".utf8)
        let end = (0...(bytes.count - header.count)).first { Array(bytes[$0..<($0 + header.count)]) == header }.map { $0 + header.count }
        #expect(end.map { bytes.count - $0 } == 2 * 28)
        let back = try SurfacePLY.read(path)
        #expect(back.map(\.position) == points.map(\.position))
        #expect(back.map(\.color) == points.map(\.color))
    }

    @Test func readsAsciiAndOtherPropertiesOfOtherTools() throws {
        // As nerfstudio's create_ply_from_colmap writes it (ASCII, uint8 colours), with a face element after.
        let text = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
            + "property uint8 red\nproperty uint8 green\nproperty uint8 blue\nelement face 0\nproperty list uchar int vertex_indices\n"
            + "end_header\n0.5 1 -2 1 2 3\n-1 0 0 255 255 0\n"
        let p = try SurfacePLY.read(write("ascii.ply", Array(text.utf8)))
        #expect(p.map(\.position) == [Vec3(0.5, 1, -2), Vec3(-1, 0, 0)])
        #expect(p.map(\.color) == [SIMD3(1, 2, 3), SIMD3(255, 255, 0)])
        // Binary with a double x, a skipped short, and no colour (grey).
        var b = Array("ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty double x\nproperty short s\nproperty float y\nproperty float z\nend_header\n".utf8)
        b += withUnsafeBytes(of: (2.5).bitPattern.littleEndian) { Array($0) } + [7, 0] + le(3) + le(4)
        let q = try SurfacePLY.read(write("mixed.ply", b))
        #expect(q.map(\.position) == [Vec3(2.5, 3, 4)] && q.map(\.color) == [SIMD3(128, 128, 128)])
    }

    @Test(arguments: [
        ("truncated", "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0123", CaptureKitError.Status.corrupt),
        ("no end", "ply\nformat binary_little_endian 1.0\nelement vertex 0\n", .corrupt),
        ("not ply", "plx\nformat ascii 1.0\nend_header\n", .corrupt),
        ("big endian", "ply\nformat binary_big_endian 1.0\nelement vertex 0\nproperty float x\nend_header\n", .unsupported),
        ("list in vertex", "ply\nformat ascii 1.0\nelement vertex 1\nproperty list uchar float x\nend_header\n1 0\n", .unsupported),
        ("face first", "ply\nformat ascii 1.0\nelement face 0\nend_header\n", .unsupported),
        ("no z", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n", .corrupt),
        ("int x", "ply\nformat ascii 1.0\nelement vertex 1\nproperty int x\nproperty float y\nproperty float z\nend_header\n1 2 3\n", .corrupt),
        ("nan", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\nnan 0 0\n", .corrupt),
        ("huge", "ply\nformat ascii 1.0\nelement vertex 1e400\nproperty float x\nend_header\n", .corrupt),
        ("too many", "ply\nformat binary_little_endian 1.0\nelement vertex 99999999999\nproperty float x\nproperty float y\nproperty float z\nend_header\n", .unsupported),
        ("short ascii", "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nend_header\n1 2 3\n", .corrupt),
        ("colour 300", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n1 2 3 300 0 0\n", .corrupt),
    ])
    func hostileFilesAreRefused(name: String, text: String, want: CaptureKitError.Status) throws {
        let path = write("h.ply", Array(text.utf8))
        do {
            _ = try SurfacePLY.read(path)
            Issue.record("\(name): read a hostile file")
        } catch {
            #expect(error.status == want, "\(name): \(error.message)")
        }
    }

    @Test func colmapExportRefusesAPointCloudOutsideTheDatasetAndWritesNothing() throws {
        let k = try Intrinsics(fx: 100, fy: 100, cx: 32, cy: 24, width: 64, height: 48, name: "k")
        for (rel, want) in [("../outside.ply", CaptureKitError.Status.corrupt), ("/etc/passwd", .corrupt), ("missing.ply", .notFound)] {
            let ds = "\(dir)/ds-\(want)-\(rel.count)"
            try FileManager.default.createDirectory(atPath: ds, withIntermediateDirectories: true)
            let m = TransformsManifest(frames: [TransformsFrame(filePath: "images/0.png", transform: Matrix4.identity, intrinsics: k)],
                                       plyFilePath: rel)
            try m.write(to: "\(ds)/transforms.json", overwrite: false)
            _ = write("outside.ply", Array("ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n".utf8))
            do {
                try ColmapExport.write(dataset: ds, to: "\(ds)/colmap")
                Issue.record("\(rel): exported")
            } catch {
                #expect(error.status == want, "\(rel): \(error.message)")
            }
            #expect(directoryListing("\(ds)/colmap").isEmpty)
        }
    }
}
