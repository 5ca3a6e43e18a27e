import Foundation
import Testing
@testable import CaptureKitCore

/// Writes sample outputs of every manifest writer and the ZIP writer into `.build-fixtures/manifests/`
/// (gitignored) so that `bindings/python/tests/test_manifests_zip.py` can check them with
/// independent readers (json, numpy, zipfile). `make test` runs the Swift tests before pytest.
@Suite struct SampleOutputTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build-fixtures/manifests").path

    @Test func writeSampleOutputs() throws {
        let dir = Self.folder
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var rng = SplitMix64(seed: 99)
        let k = try Intrinsics(fx: 1613.7047, fy: 1613.7047, cx: 941.38348, cy: 727.0434, width: 1920, height: 1440)
        let k2 = try Intrinsics(fx: 1600.25, fy: 1600.25, cx: 940.5, cy: 726.5, width: 1920, height: 1440)
        var poses = [try Pose(rotation: Quaternion(angle: .pi / 2, axis: Vec3(0, 1, 0)), translation: Vec3(1, 2, 3))]
        for _ in 0..<5 { poses.append(rng.pose()) }
        var frames: [TransformsFrame] = []
        var camera: [UInt8] = []
        for (i, pose) in poses.enumerated() {
            let ki = i == 3 ? k2 : k
            frames.append(TransformsFrame(filePath: String(format: "images/%06d.png", i), transform: pose.matrix, intrinsics: ki,
                                          depthPath: i % 2 == 0 ? String(format: "depth/%06d.png", i) : nil,
                                          sharpness: Float(i) * 10.5, timestamp: Double(i) / 60, pass: i < 4 ? 0 : 1, frameID: Int64(i)))
            camera += try CameraInfoRecord(timestamp: try CameraInfoRecord.nanoseconds(fromSeconds: Double(i) / 60), intrinsics: ki,
                                           pose: pose, exposureDuration: 16_666_666).line()
        }
        try TransformsManifest(frames: frames, integerDepthScale: 0.001).write(to: dir + "/transforms.json", overwrite: true)
        try camera.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try FileIO.writeAtomically(dir + "/camera_info.jsonl", UnsafeRawBufferPointer(b), overwrite: true)
        }
        let box = try Box(center: Vec3(0.2, 0, -2.5), size: Vec3(0.9, 0.7, 1.3), yaw: 25 * .pi / 180, floor: -0.95)
        let box2 = try Box(center: Vec3(0.2, 0, -2.5), size: Vec3(0.9, 1.3, 0.7), yaw: -0.5)
        try BoundingBoxManifest(box: box, passes: [BoxPass(pass: 0, box: box), BoxPass(pass: 1, box: box2)])
            .write(to: dir + "/boundingbox.json", overwrite: true)
        let scanID = try ScanID.make(unixSeconds: 1_686_825_000, deviceID: "CK-TEST-1")
        try ScanMetadata(deviceID: "CK-TEST-1", deviceType: "synthetic", deviceName: "CaptureKit’s rig", userName: "tester",
                         sceneDescription: "a box \"on\" a floor / test", sceneType: "object", gpsLocation: [49.2276, -123.0115],
                         streams: [.colorCamera(encoding: "png", fileExtension: "png", frequency: 60, frames: 6, intrinsics: k),
                                   .depth(frequency: 60, frames: 6, width: 256, height: 192),
                                   .confidence(frequency: 60, frames: 6),
                                   .cameraInfo(frequency: 60, frames: 6)],
                         numberOfFiles: 5).write(to: dir + "/\(scanID).json", overwrite: true)
        var events: [UInt8] = []
        events += try EventRecord(timestamp: 1.5, code: 1, name: "slow_down", text: "Slow down").line()
        events += try EventRecord(timestamp: 2.25, code: 101, name: "side_completed", text: "Side completed",
                                  fields: JSONObject([("face", .int(2)), ("value", .float(0.75))])).line()
        try events.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try FileIO.writeAtomically(dir + "/events.jsonl", UnsafeRawBufferPointer(b), overwrite: true)
        }
        // Expected values for the Python checks, from Swift's side.
        let expected = JSONValue.object(JSONObject([
            ("scan_id", .string(scanID)),
            ("poses_column_major", .array(poses.map { .floats($0.matrix.columnMajor) })),
            ("box_corners", .array(box.corners.map { .floats([$0.x, $0.y, $0.z]) })),
            ("box_size", .floats([box.size.x, box.size.y, box.size.z])),
            ("zip_entries", .array(["transforms.json", "boundingbox.json", "camera_info.jsonl", "events.jsonl", "\(scanID).json",
                                    "images/000000.png", "données/é 😀.txt", "empty.txt", "big.txt"].map { .string($0) })),
        ]))
        try prettyFile(expected).withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try FileIO.writeAtomically(dir + "/expected.json", UnsafeRawBufferPointer(b), overwrite: true)
        }
        // The archives: the files above, an incompressible "PNG", UTF-8 names, an empty and a big entry.
        var noise = [UInt8](repeating: 0, count: 40_000)
        for i in noise.indices { noise[i] = UInt8(truncatingIfNeeded: rng.next()) }
        var big: [UInt8] = []
        for i in 0..<200_000 { big += Array("line \(i)\n".utf8) }
        for (name, limits) in [("dataset.zip", nil), ("dataset-zip64.zip", (UInt64(1000), 3))] as [(String, (UInt64, Int)?)] {
            if let limits { ZipWriter.debugLimits(size: limits.0, count: limits.1) }
            defer { ZipWriter.debugLimits(size: nil, count: nil) }
            let zip = try ZipWriter(path: dir + "/" + name, overwrite: true, unixTime: 1_686_825_000)
            for file in ["transforms.json", "boundingbox.json", "camera_info.jsonl", "events.jsonl", "\(scanID).json"] {
                try zip.addFile(file, from: dir + "/" + file, method: ZipMethod.suggested(forName: file))
            }
            try zip.add("images/000000.png", bytes: noise, method: .automatic)
            try zip.add("données/é 😀.txt", bytes: Array("é😀\n".utf8))
            try zip.add("empty.txt", bytes: [])
            try zip.add("big.txt", bytes: big, method: .deflate)
            try zip.finish()
            try ZipReader(path: dir + "/" + name).verify()
        }
        // The raw payloads the archive entries must equal.
        try noise.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try FileIO.writeAtomically(dir + "/noise.bin", UnsafeRawBufferPointer(b), overwrite: true)
        }
        try big.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
            try FileIO.writeAtomically(dir + "/big.txt", UnsafeRawBufferPointer(b), overwrite: true)
        }
        #expect(FileManager.default.fileExists(atPath: dir + "/dataset-zip64.zip"))
    }
}
