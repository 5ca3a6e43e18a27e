import Foundation
import Testing
@testable import CaptureKitCore

/// A fresh empty directory under the system temp dir.
func makeTempDirectory(_ tag: String) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ck-\(tag)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.path
}

func directoryListing(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

func bitsEqual(_ a: Matrix4, _ b: Matrix4) -> Bool {
    a.columnMajor.map(\.bitPattern) == b.columnMajor.map(\.bitPattern)
}

func bitsEqual(_ a: Box, _ b: Box) -> Bool {
    a.center.x.bitPattern == b.center.x.bitPattern && a.center.y.bitPattern == b.center.y.bitPattern
        && a.center.z.bitPattern == b.center.z.bitPattern && a.size.x.bitPattern == b.size.x.bitPattern
        && a.size.y.bitPattern == b.size.y.bitPattern && a.size.z.bitPattern == b.size.z.bitPattern
        && a.yaw.bitPattern == b.yaw.bitPattern && a.floor?.bitPattern == b.floor?.bitPattern
}

extension SplitMix64 {
    mutating func pose() -> Pose {
        (try? Pose(rotation: quaternion(), translation: vec(-20...20))) ?? Pose(x: Vec3(1, 0, 0), y: Vec3(0, 1, 0), z: Vec3(0, 0, 1), t: .zero)
    }
    mutating func intrinsics() -> Intrinsics {
        let w = UInt32.random(in: 64...4096, using: &self), h = UInt32.random(in: 64...4096, using: &self)
        return (try? Intrinsics(fx: float(100...3000), fy: float(100...3000), cx: float(0...Float(w)), cy: float(0...Float(h)),
                                width: w, height: h))!
    }
    /// A frame list where intrinsics sometimes repeat the first frame's and sometimes change.
    mutating func frames(_ n: Int) -> [TransformsFrame] {
        let first = intrinsics()
        return (0..<n).map { i in
            var f = TransformsFrame(filePath: String(format: "images/%06d.png", i), transform: pose().matrix,
                                    intrinsics: next() % 3 == 0 ? intrinsics() : first)
            if next() % 2 == 0 { f.depthPath = String(format: "depth/%06d.png", i) }
            if next() % 2 == 0 { f.sharpness = float(0...1000) }
            if next() % 4 != 0 { f.timestamp = double(0...100_000) }
            if next() % 2 == 0 { f.pass = Int32(next() % 3) }
            if next() % 2 == 0 { f.frameID = Int64(i) }
            return f
        }
    }
}

@Suite struct TransformsManifestTests {
    func assertSame(_ a: TransformsManifest, _ b: TransformsManifest) {
        #expect(a.frames.count == b.frames.count)
        #expect(a.integerDepthScale?.bitPattern == b.integerDepthScale?.bitPattern && a.distortion == b.distortion && a.cameraModel == b.cameraModel)
        for (i, (x, y)) in zip(a.frames, b.frames).enumerated() {
            let same = bitsEqual(x.transform, y.transform) && TransformsManifest.sameBits(x.intrinsics, y.intrinsics)
                && x.filePath == y.filePath && x.depthPath == y.depthPath && x.sharpness?.bitPattern == y.sharpness?.bitPattern
                && x.timestamp?.bitPattern == y.timestamp?.bitPattern && x.pass == y.pass && x.frameID == y.frameID
            #expect(same, "frame \(i): \(x) vs \(y)")
            if !same { return }
        }
    }

    @Test func roundTripIsBitExact() throws {
        var rng = SplitMix64(seed: 10)
        for round in 0..<20 {
            var m = TransformsManifest(frames: rng.frames(Int(rng.next() % 200)), integerDepthScale: round % 2 == 0 ? 0.001 : nil)
            if round % 3 == 0 { m.distortion = Distortion(k1: rng.float(-1...1), k2: rng.float(-1...1), p1: 1e-7, p2: -0.0) }
            let back = try TransformsManifest.decode(try m.encode())
            assertSame(m, back)
            #expect(back == m)
        }
    }

    @Test func layoutFollowsFormats() throws {
        // 90° about +y, translation (1, 2, 3): R = [[0,0,1],[0,1,0],[-1,0,0]] (rows).
        let pose = try Pose(rotation: Quaternion(angle: .pi / 2, axis: Vec3(0, 1, 0)), translation: Vec3(1, 2, 3))
        let k0 = try Intrinsics(fx: 1000, fy: 1001, cx: 640, cy: 360, width: 1280, height: 720)
        let k1 = try Intrinsics(fx: 1000, fy: 1001, cx: 640.5, cy: 360, width: 1280, height: 720)
        let m = TransformsManifest(frames: [
            TransformsFrame(filePath: "images/000000.png", transform: pose.matrix, intrinsics: k0, depthPath: "depth/000000.png",
                            sharpness: 12.5, timestamp: 0.25, pass: 0, frameID: 7),
            TransformsFrame(filePath: "images/000001.jpg", transform: Matrix4.identity, intrinsics: k1),
            TransformsFrame(filePath: "images/000002.jpg", transform: Matrix4.identity, intrinsics: k0),
        ], integerDepthScale: 0.001)
        let root = JSONNode(try JSON.parse(try m.encode(), what: "t"))
        // Frames with different intrinsics: no top-level ones (nerfstudio would apply them to every frame).
        #expect(try root.object().keys == ["camera_model", "integer_depth_scale", "frames"])
        #expect(try root.key("camera_model").string() == "OPENCV")
        // Frames that share them: top level only.
        var same = m
        same.frames[1].intrinsics = k0
        let sameRoot = JSONNode(try JSON.parse(try same.encode(), what: "t"))
        #expect(try sameRoot.object().keys == ["camera_model", "fl_x", "fl_y", "cx", "cy", "w", "h", "integer_depth_scale", "frames"])
        #expect(try sameRoot.key("w").value == .int(1280) && sameRoot.key("h").value == .int(720) && sameRoot.key("fl_y").float() == 1001)
        for f in try sameRoot.key("frames").array(count: 3) { #expect(try !f.object().keys.contains("fl_x")) }
        #expect(try TransformsManifest.decode(try same.encode()).frames.map(\.intrinsics) == [k0, k0, k0])
        #expect(try TransformsManifest.decode(try m.encode()).frames.map(\.intrinsics) == [k0, k1, k0])
        #expect(try root.key("integer_depth_scale").double() == 0.001)
        let frames = try root.key("frames").array(count: 3)
        #expect(try frames[0].object().keys == ["file_path", "transform_matrix", "depth_file_path", "depth_path",
                                                "fl_x", "fl_y", "cx", "cy", "w", "h", "sharpness", "timestamp", "pass", "frame_id"])
        #expect(try frames[0].key("depth_file_path").string() == "depth/000000.png" && frames[0].key("depth_path").string() == "depth/000000.png")
        // Row-major: translation in the last column, rows of R in the rows.
        let rows = try frames[0].key("transform_matrix").array(count: 4).map { try $0.floats(count: 4) }
        let expected: [[Float]] = [[0, 0, 1, 1], [0, 1, 0, 2], [-1, 0, 0, 3], [0, 0, 0, 1]]
        for r in 0..<4 { for c in 0..<4 { #expect(close(rows[r][c], expected[r][c], 1e-6), "[\(r)][\(c)] \(rows[r][c])") } }
        for r in 0..<4 { for c in 0..<4 { #expect(rows[r][c] == pose.matrix[r, c]) } }
        // Per-frame intrinsics on every frame (all six) when they differ.
        #expect(try frames[1].object().keys == ["file_path", "transform_matrix", "fl_x", "fl_y", "cx", "cy", "w", "h"])
        #expect(try frames[1].key("cx").float() == 640.5)
        #expect(try frames[2].object().keys == ["file_path", "transform_matrix", "fl_x", "fl_y", "cx", "cy", "w", "h"])
        #expect(try frames[2].key("cx").float() == 640)
        // An empty manifest has no intrinsics at all (never placeholders).
        let empty = JSONNode(try JSON.parse(try TransformsManifest().encode(), what: "t"))
        #expect(try empty.object().keys == ["camera_model", "frames"])
    }

    @Test func writerRejectsBadFrames() throws {
        let k = try Intrinsics(fx: 1, fy: 1, cx: 1, cy: 1, width: 2, height: 2)
        for path in ["images/0", "images/.png", "images/0.", "a.png/b", ""] {
            let m = TransformsManifest(frames: [TransformsFrame(filePath: path, transform: .identity, intrinsics: k)])
            let e = try #require(throws: CaptureKitError.self, "\(path)") { try m.encode() }
            #expect(e.status == .invalidArgument && e.message.hasPrefix("frames[0].file_path"))
        }
        var f = TransformsFrame(filePath: "a.png", transform: .identity, intrinsics: k, timestamp: .nan)
        var e = try #require(throws: CaptureKitError.self) { try TransformsManifest(frames: [f, f]).encode() }
        #expect(e.status == .invalidArgument && e.message.hasPrefix("frames[0].timestamp: "), "\(e)")
        f.timestamp = nil
        f.transform = Matrix4(SIMD4(1, 0, 0, 0), SIMD4(0, .infinity, 0, 0), SIMD4(0, 0, 1, 0), SIMD4(0, 0, 0, 1))
        e = try #require(throws: CaptureKitError.self) { try TransformsManifest(frames: [f]).encode() }
        #expect(e.message.hasPrefix("frames[0].transform_matrix[1][1]: "), "\(e)")
        f.transform = .identity
        f.depthPath = ""
        #expect(throws: CaptureKitError.self) { try TransformsManifest(frames: [f]).encode() }
    }

    /// The real HMC capture: placeholder top-level intrinsics, per-frame intrinsics, no extension.
    @Test func readsTheRealHMCFile() throws {
        let path = fixture("hmc-clinic-chair/transforms.json").path
        let m = try TransformsManifest.read(from: path)
        #expect(m.frames.count == 82)
        #expect(m.integerDepthScale == 1)  // the app's "depth_integer_scale"
        let f0 = m.frames[0]
        #expect(f0.filePath == "images/0" && f0.depthPath == "images/0.depth.png" && f0.timestamp == 16219.261195416)
        #expect(f0.intrinsics.fx == 1594.7247 && f0.intrinsics.cx == 950.26636 && f0.intrinsics.width == 1920 && f0.intrinsics.height == 1440)
        #expect(f0.transform[0, 3] == 0.63916034 && f0.transform[2, 3] == -1.3055753 && f0.transform[3, 3] == 0.99999994)
        #expect(f0.transform[0, 1] == -0.39594424 && f0.transform[1, 0] == -0.09947193)
        #expect(m.frames[6].intrinsics.fx == 1611.8971)
        // Every value equals an independent reader's (Foundation) value.
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let frames = try #require(obj["frames"] as? [[String: Any]])
        for (i, f) in frames.enumerated() {
            let rows = try #require(f["transform_matrix"] as? [[Double]])
            for r in 0..<4 { for c in 0..<4 { #expect(m.frames[i].transform[r, c] == Float(rows[r][c]), "frame \(i) [\(r)][\(c)]") } }
            #expect(m.frames[i].intrinsics.cy == Float(try #require(f["cy"] as? Double)))
            #expect(m.frames[i].filePath == f["file_path"] as? String)
        }
        // Each frame's pose is rigid (our Pose accepts it).
        for f in m.frames { _ = try Pose(f.transform) }
        // Rewritten with extensions, it reads back identically; its frames' intrinsics differ, so
        // each frame carries its own and there are no top-level ones (nerfstudio would apply them
        // to every frame).
        var fixed = m
        for i in fixed.frames.indices { fixed.frames[i].filePath += ".png" }
        let back = try TransformsManifest.decode(try fixed.encode())
        #expect(back == fixed)
        let root = JSONNode(try JSON.parse(try fixed.encode(), what: "t"))
        #expect(try !root.object().keys.contains("fl_x") && !root.object().keys.contains("w"))
        let written = try root.key("frames").array(count: 82)
        #expect(try written[0].key("w").int64() == 1920 && written[0].key("fl_x").float() == 1594.7247)
        #expect(try written[6].key("fl_x").float() == 1611.8971)
    }

    @Test func placeholderTopLevelIntrinsics() throws {
        let frameOwn = #"{"file_path":"a.png","transform_matrix":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"fl_x":500,"fl_y":500,"cx":320,"cy":240,"w":640,"h":480}"#
        let frameBare = #"{"file_path":"b.png","transform_matrix":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}"#
        let placeholder = #""w":0,"h":0,"fl_x":1,"fl_y":1,"cx":320,"cy":240"#
        // Placeholders are ignored: frames with their own intrinsics read fine …
        let ok = try TransformsManifest.decode(Array("{\(placeholder),\"frames\":[\(frameOwn)]}".utf8))
        #expect(ok.frames[0].intrinsics.fx == 500 && ok.frames[0].intrinsics.width == 640)
        // … a frame without them is an error naming the frame.
        let e = try #require(throws: CaptureKitError.self) {
            try TransformsManifest.decode(Array("{\(placeholder),\"frames\":[\(frameOwn),\(frameBare)]}".utf8))
        }
        #expect(e.status == .corrupt && e.message.hasPrefix("transforms.json: frames[1]: missing fl_x"), "\(e)")
        // Valid top-level intrinsics are defaults, per key.
        let valid = #""w":100,"h":50,"fl_x":90,"fl_y":91,"cx":50,"cy":25"#
        let partial = #"{"file_path":"c.png","transform_matrix":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"cx":49}"#
        let d = try TransformsManifest.decode(Array("{\(valid),\"frames\":[\(frameBare),\(partial)]}".utf8))
        #expect(d.frames[0].intrinsics == (try Intrinsics(fx: 90, fy: 91, cx: 50, cy: 25, width: 100, height: 50)))
        #expect(d.frames[1].intrinsics.cx == 49 && d.frames[1].intrinsics.fx == 90)
        // Invalid per-frame intrinsics are corrupt.
        let bad = #"{"file_path":"c.png","transform_matrix":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"fl_x":-1}"#
        let e2 = try #require(throws: CaptureKitError.self) { try TransformsManifest.decode(Array("{\(valid),\"frames\":[\(bad)]}".utf8)) }
        #expect(e2.message.hasPrefix("transforms.json: frames[0]: "), "\(e2)")
    }

    @Test func malformedFilesNameTheKey() throws {
        var rng = SplitMix64(seed: 11)
        let m = TransformsManifest(frames: rng.frames(5), integerDepthScale: 0.001)
        let text = String(decoding: try m.encode(), as: UTF8.self)
        // Swap one number of frames[3]'s matrix for a string.
        var doc = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var frames = try #require(doc["frames"] as? [[String: Any]])
        var rows = try #require(frames[3]["transform_matrix"] as? [[Any]])
        rows[2][1] = "x"
        frames[3]["transform_matrix"] = rows
        doc["frames"] = frames
        let bad = try JSONSerialization.data(withJSONObject: doc)
        let e = try #require(throws: CaptureKitError.self) { try TransformsManifest.decode(Array(bad)) }
        #expect(e.status == .corrupt && e.message == "transforms.json: frames[3].transform_matrix[2][1]: expected a number", "\(e)")
        for (key, value, message) in [("frames", "{}" as Any, "frames: expected an array"), ("integer_depth_scale", "1" as Any, "integer_depth_scale: expected a number")] {
            var d = doc
            d[key] = value is String && (value as? String) == "{}" ? [String: Any]() : value
            let data = try JSONSerialization.data(withJSONObject: d)
            let err = try #require(throws: CaptureKitError.self) { try TransformsManifest.decode(Array(data)) }
            #expect(err.message == "transforms.json: \(message)", "\(err)")
        }
        // Every truncation point is corrupt, never a crash.
        let bytes = Array(text.utf8)
        #expect(bytes.last == 0x0A)
        for n in 0..<(bytes.count - 1) {  // all but the final newline
            let err = try #require(throws: CaptureKitError.self) { try TransformsManifest.decode(Array(bytes[0..<n])) }
            #expect(err.status == .corrupt)
        }
    }

    /// A failure at any file operation leaves either the old file or the new one, never a torn or temp file.
    @Test func faultInjectionLeavesNoHalfWrittenFile() throws {
        let dir = try makeTempDirectory("manifest-fault")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var rng = SplitMix64(seed: 12)
        let old = TransformsManifest(frames: rng.frames(3))
        let new = TransformsManifest(frames: rng.frames(4))
        let path = dir + "/transforms.json"
        try old.write(to: path, overwrite: false)
        #expect(throws: CaptureKitError.self) { try new.write(to: path, overwrite: false) }
        var failures = 0
        for n in 1...50 {
            FileIO.failCall(after: n)
            defer { FileIO.stopFailing() }
            do {
                try new.write(to: path, overwrite: true)
                break
            } catch {
                failures += 1
                #expect(directoryListing(dir) == ["transforms.json"], "n=\(n)")
                let current = try TransformsManifest.read(from: path)
                #expect(current == old || current == new, "n=\(n)")
            }
        }
        #expect(failures >= 4)
        #expect(try TransformsManifest.read(from: path) == new)
        #expect(directoryListing(dir) == ["transforms.json"])
        // A json-c allocation failure is noMemory and writes nothing.
        JSON.failCall(after: 3)
        defer { JSON.stopFailing() }
        let e = try #require(throws: CaptureKitError.self) { try old.write(to: dir + "/other.json", overwrite: false) }
        #expect(e.status == .noMemory)
        #expect(directoryListing(dir) == ["transforms.json"])
    }

    /// A long capture's manifest round-trips exactly. (Its speed is a benchmark's business, not a
    /// timed unit test's: this one failed CI under ASan on a loaded machine.)
    @Test func tenThousandFramesRoundTrip() throws {
        var rng = SplitMix64(seed: 13)
        let m = TransformsManifest(frames: rng.frames(10_000), integerDepthScale: 0.001)
        let bytes = try m.encode()
        #expect(try TransformsManifest.decode(bytes) == m)
    }
}

@Suite struct BoundingBoxManifestTests {
    @Test func roundTripIsBitExact() throws {
        var rng = SplitMix64(seed: 20)
        for i in 0..<2000 {
            let box = rng.box(floor: i % 2 == 0)
            var m = BoundingBoxManifest(box: box)
            if i % 5 == 0 { m.passes = (0..<3).map { BoxPass(pass: Int32($0), box: rng.box(floor: $0 == 1)) } }
            let back = try BoundingBoxManifest.decode(try m.encode())
            #expect(bitsEqual(back.box, box) && back.passes.count == m.passes.count, "case \(i): \(box) -> \(back.box)")
            for (a, b) in zip(m.passes, back.passes) { #expect(a.pass == b.pass && bitsEqual(a.box, b.box)) }
        }
    }

    @Test func layoutMatchesTheReferenceApp() throws {
        let box = try Box(center: Vec3(1, 0.5, -2), size: Vec3(0.9, 0.7, 1.3), yaw: 25 * .pi / 180, floor: 0.15)
        let root = JSONNode(try JSON.parse(try BoundingBoxManifest(box: box).encode(), what: "t"))
        #expect(try root.object().keys == ["center", "rad_rot_about_y", "positions", "entity_anchor_4x4", "size", "floor"])
        #expect(try root.key("positions").object().keys == BoundingBoxManifest.cornerNames)
        for (i, name) in BoundingBoxManifest.cornerNames.enumerated() {
            #expect(try root.key("positions").key(name).xyz() == box.corners[i])
        }
        let anchor = try root.key("entity_anchor_4x4").array(count: 4).map { try $0.floats(count: 4) }
        #expect(anchor == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
        #expect(try root.key("floor").float() == 0.15 && root.key("rad_rot_about_y").float() == box.yaw)
        // top_left_front is at local (−x, +y, −z).
        let tlf = try root.key("positions").key("top_left_front").xyz()
        let local = box.toLocal(direction: tlf - box.center)
        #expect(local.x < 0 && local.y > 0 && local.z < 0)
        // Without a floor: null.
        let noFloor = JSONNode(try JSON.parse(try BoundingBoxManifest(box: try Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0)).encode(), what: "t"))
        #expect(try noFloor.key("floor").isNull)
    }

    /// The real HMC file has no size or floor: both come from the corners.
    @Test func readsTheRealHMCFile() throws {
        let m = try BoundingBoxManifest.read(from: fixture("hmc-clinic-chair/boundingbox.json").path)
        #expect(m.box.center == Vec3(0.41303763, -0.6075048, -0.858597) && m.box.yaw == 0 && m.box.floor == nil && m.passes.isEmpty)
        #expect(close(m.box.size, Vec3(0.9, 1.1, 0.9), 1e-6), "\(m.box.size)")
        let back = try BoundingBoxManifest.decode(try m.encode())
        #expect(bitsEqual(back.box, m.box))
    }

    @Test func inconsistentOrMissingCornersAreCorrupt() throws {
        var doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture("hmc-clinic-chair/boundingbox.json"))) as? [String: Any])
        var positions = try #require(doc["positions"] as? [String: Any])
        positions["bot_right_back"] = ["x": 5, "y": 5, "z": 5]
        doc["positions"] = positions
        let e = try #require(throws: CaptureKitError.self) { try BoundingBoxManifest.decode(Array(try JSONSerialization.data(withJSONObject: doc))) }
        #expect(e.status == .corrupt && e.message.hasPrefix("boundingbox.json: positions.bot_right_back: "), "\(e)")
        positions["bot_right_back"] = nil
        doc["positions"] = positions
        let e2 = try #require(throws: CaptureKitError.self) { try BoundingBoxManifest.decode(Array(try JSONSerialization.data(withJSONObject: doc))) }
        #expect(e2.message == "boundingbox.json: positions.bot_right_back: missing", "\(e2)")
        // A size below the limits is corrupt, naming the box.
        let tiny = #"{"center":{"x":0,"y":0,"z":0},"rad_rot_about_y":0,"positions":{},"size":{"x":0,"y":1,"z":1}}"#
        #expect(throws: CaptureKitError.self) { try BoundingBoxManifest.decode(Array(tiny.utf8)) }
        let bytes = try BoundingBoxManifest(box: try Box(center: .zero, size: Vec3(1, 2, 3), yaw: 1, floor: -1),
                                            passes: [BoxPass(pass: 1, box: try Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0))]).encode()
        for n in 0..<(bytes.count - 1) {  // all but the final newline
            #expect(throws: CaptureKitError.self) { try BoundingBoxManifest.decode(Array(bytes[0..<n])) }
        }
    }
}

@Suite struct MultiScanManifestTests {
    /// The real MultiScan sample: every line reads, and our Euler angles from its transform match ARKit's.
    @Test func readsTheRealCameraInfoFile() throws {
        let (records, torn) = try CameraInfoRecord.read(from: fixture("multiscan-sample/camera-info-example.jsonl").path)
        #expect(records.count == 354 && !torn)
        #expect(records[0].timestamp == 280670466266040 && records[0].exposureDuration == 16666666 && records[0].quaternion == nil)
        #expect(records[0].fx == 1613.7047119140625 && records[0].cx == 941.38348388671875 && records[0].cy == 727.04339599609375)
        #expect(records[0].transform[0, 0] == 0.018272051587700844 && records[0].transform[0, 3] == 0.017051920294761658)
        for (i, r) in records.enumerated() {
            let e = try #require(r.eulerAngles)
            let a = try Pose(r.transform).yawPitchRoll
            #expect(close(a.pitch, e.x, 1e-4) && close(a.yaw, e.y, 1e-4) && close(a.roll, e.z, 1e-4), "line \(i + 1): \(a) vs \(e)")
        }
        // Rewritten and read back: identical.
        var bytes: [UInt8] = []
        for r in records { bytes += try r.line() }
        let back = try CameraInfoRecord.decodeLines(bytes).records
        #expect(back == records)
        for (a, b) in zip(records, back) { #expect(bitsEqual(a.transform, b.transform)) }
    }

    @Test func writerFromPoses() throws {
        var rng = SplitMix64(seed: 30)
        var bytes: [UInt8] = []
        var written: [CameraInfoRecord] = []
        for i in 0..<500 {
            let pose = rng.pose()
            let r = CameraInfoRecord(timestamp: try CameraInfoRecord.nanoseconds(fromSeconds: Double(i) / 60),
                                     intrinsics: rng.intrinsics(), pose: pose, exposureDuration: i % 2 == 0 ? 16_666_666 : nil)
            #expect(r.quaternion == pose.rotation && r.eulerAngles?.y == pose.yawPitchRoll.yaw)
            written.append(r)
            bytes += try r.line()
        }
        let back = try CameraInfoRecord.decodeLines(bytes).records
        #expect(back == written)
        // The MultiScan reader convention: reshape(4, 4) then transpose gives the row-major pose.
        let first = JSONNode(try JSON.parse(Array(bytes.prefix(while: { $0 != 0x0A })), what: "t"))
        #expect(try first.object().keys == ["timestamp", "intrinsics", "transform", "euler_angles", "exposure_duration", "quaternion"])
        let t = try first.key("transform").floats(count: 16)
        for r in 0..<4 { for c in 0..<4 { #expect(t[c * 4 + r] == written[0].transform[r, c]) } }
        #expect(t[12] == written[0].transform.translation.x)
        let k = try first.key("intrinsics").floats(count: 9)
        #expect(k[0] == written[0].fx && k[4] == written[0].fy && k[6] == written[0].cx && k[7] == written[0].cy && k[8] == 1 && k[1] == 0)
        let q = try first.key("quaternion").floats(count: 4)
        #expect(q[0] == written[0].quaternion?.w && q[1] == written[0].quaternion?.x)
        #expect(try CameraInfoRecord.nanoseconds(fromSeconds: 1.5) == 1_500_000_000)
        #expect(throws: CaptureKitError.self) { try CameraInfoRecord.nanoseconds(fromSeconds: .nan) }
        #expect(throws: CaptureKitError.self) { try CameraInfoRecord.nanoseconds(fromSeconds: 1e10) }
        // A torn last line (a crash mid-append) is dropped on request.
        let torn = bytes + Array(bytes.prefix(40))
        #expect(throws: CaptureKitError.self) { try CameraInfoRecord.decodeLines(torn) }
        let t2 = try CameraInfoRecord.decodeLines(torn, tolerateTornTail: true)
        #expect(t2.records.count == 500 && t2.tornTail)
        let e = try #require(throws: CaptureKitError.self) { try CameraInfoRecord.decodeLines(Array(#"{"timestamp":1,"intrinsics":[1,2],"transform":[]}"#.utf8) + [0x0A]) }
        #expect(e.message == "camera info: line 1: intrinsics: expected an array of 9 (got 2)", "\(e)")
    }

    @Test func readsTheRealMetadataFile() throws {
        let path = fixture("multiscan-sample/metadata-example.json").path
        let m = try ScanMetadata.read(from: path)
        #expect(m.deviceID == "2CE7F809-8FA9-42BB-BE73-23C5C30C7D07" && m.deviceType == "iPad8,10" && m.deviceName == "multiscan’s iPad Pro")
        #expect(m.userName == "J X" && m.sceneType == "Bookstore / Library" && m.sceneDescription == "Test")
        #expect(m.gpsLocation == [49.227630615234375, -123.01149848799666] && m.numberOfFiles == 5)
        #expect(m.streams.map(\.id) == ["color_back_1", "depth_back_1", "confidence_map", "camera_info_color_back_1"])
        #expect(m.streams[0].resolution == StreamResolution(height: 1440, width: 1920) && m.streams[0].intrinsics?[0] == 1613.7047119140625)
        #expect(m.streams[1].resolution == StreamResolution(height: 192, width: 256) && m.streams[1].hasCameraFields && m.streams[1].intrinsics == nil)
        #expect(m.streams[2].resolution == nil && !m.streams[2].hasCameraFields && m.streams[3].encoding == "jsonl")
        #expect(m.depthUnit == nil && m.depthConfidenceAvailable == nil && m.depthConfidenceValueRange == nil)
        #expect(try ScanMetadata.decode(try m.encode()) == m)
    }

    @Test func writesEveryKeyInOrder() throws {
        let k = try Intrinsics(fx: 1613.7047, fy: 1613.7047, cx: 941.4, cy: 727, width: 1920, height: 1440)
        let m = ScanMetadata(deviceID: "dev-1", deviceType: "rig", deviceName: "Rig \"A\"", userName: "u", sceneDescription: "d",
                             sceneType: "object", gpsLocation: [1.5, -2.25],
                             streams: [.colorCamera(encoding: "png", fileExtension: "png", frequency: 60, frames: 10, intrinsics: k),
                                       .depth(frequency: 60, frames: 10, width: 256, height: 192),
                                       .confidence(frequency: 60, frames: 10),
                                       .cameraInfo(frequency: 60, frames: 10)],
                             numberOfFiles: 5)
        let root = JSONNode(try JSON.parse(try m.encode(), what: "t"))
        #expect(try root.object().keys == ["device", "user", "scene", "streams", "number_of_files", "depth_unit", "depth_confidence_value_range",
                                           "camera_orientation_quaternion_format", "camera_orientation_euler_angles_format",
                                           "depth_confidence_avaliable", "depth_confidence_available"])
        #expect(try root.key("depth_unit").string() == "m" && root.key("depth_confidence_avaliable").bool() && root.key("depth_confidence_available").bool())
        #expect(try root.key("depth_confidence_value_range").array().map { try $0.int64() } == [0, 2])
        let streams = try root.key("streams").array(count: 4)
        #expect(try streams[0].key("resolution").array().map { try $0.int64() } == [1440, 1920])
        #expect(try streams[0].key("extrinsics").isNull && streams[0].key("intrinsics").floats(count: 9)[6] == 941.4)
        #expect(try streams[1].key("resolution").array().map { try $0.int64() } == [192, 256] && streams[1].key("intrinsics").isNull)
        #expect(try streams[1].key("encoding").string() == "float16_zlib" && streams[1].key("file_extension").string() == "depth.zlib")
        #expect(try streams[2].object().keys == ["id", "type", "encoding", "frequency", "number_of_frames", "file_extension"])
        #expect(try ScanMetadata.decode(try m.encode()) == m)
    }

    @Test func scanIDsForKnownDates() throws {
        let cases: [(Int64, Int, String)] = [
            (0, 0, "19700101T000000+0000"),
            (951_782_400, 0, "20000229T000000+0000"),       // leap day of a century leap year
            (1_686_825_000, 0, "20230615T103000+0000"),
            (1_686_825_000, -420, "20230615T033000-0700"),  // local time in UTC−7, as the phone writes it
            (1_686_825_000, 330, "20230615T160000+0530"),
            (-1, 0, "19691231T235959+0000"),
            (4_107_542_400, 0, "21000301T000000+0000"),     // 2100 is not a leap year
            (253_402_300_799, 0, "99991231T235959+0000"),
            (-62_167_219_200, 0, "00000101T000000+0000"),
        ]
        for (t, offset, text) in cases {
            #expect(try ScanID.make(unixSeconds: t, deviceID: "2CE7F809", utcOffsetMinutes: offset) == text + "_2CE7F809")
        }
        for (t, id, offset) in [(253_402_300_800 as Int64, "d", 0), (0, "", 0), (0, "a/b", 0), (0, "a\u{0}", 0), (0, "d", 19 * 60), (0, "d", Int.min), (Int64.max, "d", 60), (Int64.min, "d", -60)] {
            #expect(throws: CaptureKitError.self, "\(t) \(id) \(offset)") { try ScanID.make(unixSeconds: t, deviceID: id, utcOffsetMinutes: offset) }
        }
    }

    /// Our calendar against Foundation's, and its inverse, over random times.
    @Test func civilTimeMatchesFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var rng = SplitMix64(seed: 31)
        for _ in 0..<20_000 {
            let t = Int64.random(in: -5_000_000_000...10_000_000_000, using: &rng)
            let c = CivilTime(unixSeconds: t)
            let d = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(t)))
            #expect(Int(c.year) == d.year && c.month == d.month && c.day == d.day && c.hour == d.hour && c.minute == d.minute && c.second == d.second,
                    "\(t): \(c) vs \(d)")
            #expect(c.unixSeconds == t)
        }
        for t in [Int64.min, Int64.max, Int64.min + 86_399, -86_400, 86_399] {
            let c = CivilTime(unixSeconds: t)
            #expect((1...12).contains(c.month) && (1...31).contains(c.day) && (0...23).contains(c.hour))
        }
    }
}

@Suite struct EventRecordTests {
    @Test func roundTripAndLayout() throws {
        let e = EventRecord(timestamp: 12.25, code: 101, name: "side_completed", text: "Side completed",
                            fields: JSONObject([("face", .int(2)), ("value", .float(0.75)), ("note", .string("é/\"x\""))]))
        let line = try e.line()
        #expect(String(decoding: line, as: UTF8.self) == #"{"timestamp":12.25,"code":101,"name":"side_completed","text":"Side completed","face":2,"value":0.75,"note":"é/\"x\""}"# + "\n")
        let back = try EventRecord.decodeLines(line + line).records
        #expect(back == [e, e])
        let bad = EventRecord(timestamp: 1, code: 1, name: "n", text: "t", fields: JSONObject([("code", .int(2))]))
        #expect(throws: CaptureKitError.self) { try bad.line() }
        #expect(throws: CaptureKitError.self) { try EventRecord(timestamp: .infinity, code: 1, name: "n", text: "t").line() }
        let torn = line + Array(line.dropLast(5))
        #expect(try EventRecord.decodeLines(torn, tolerateTornTail: true).records == [e])
        let err = try #require(throws: CaptureKitError.self) { try EventRecord.decodeLines(Array(#"{"timestamp":1,"code":"x","name":"n","text":"t"}"#.utf8)) }
        #expect(err.message == "events.jsonl: line 1: code: expected an integer", "\(err)")
    }
}
