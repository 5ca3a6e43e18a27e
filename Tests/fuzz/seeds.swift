// Seed inputs for every target, written by the library itself (`CK_FUZZ_SEEDS=<dir> ckfuzz`,
// used by `make fuzz-seeds`): real PNGs, frames, .ckdepth files, streams with and without a side
// index, the JSON files of a real dataset, the real captures committed under
// Tests/CaptureKitCoreTests/Fixtures/ (or, with CK_SEED_CAPTURES=<dir>, the same files from a
// folder of fuller captures laid out like it), and short C-API programs. The fuzzer then
// minimises them into Tests/fuzz/corpus/.
import Glibc
@testable import CaptureKitCore

enum Seeds {
    static func write(_ dir: String, _ target: String, _ name: String, _ bytes: [UInt8]) {
        mkdir("\(dir)/\(target)", 0o755)
        FuzzScratch.write("\(dir)/\(target)/\(name)", bytes)
    }

    static func read(_ path: String) -> [UInt8]? { try? FileIO.readAll(path) }

    static func depth(_ w: Int, _ h: Int, frame: UInt64) -> [UInt16] {
        let scene = SyntheticScene(seed: 3)
        guard let k = try? Intrinsics(fx: Float(w) * 0.8, fy: Float(w) * 0.8, cx: Float(w) / 2, cy: Float(h) / 2,
                                      width: UInt32(w), height: UInt32(h)),
              let pose = try? Pose(Matrix4(columnMajor: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.1 * Float(frame), 1.1, 1.8, 1])) else { return [] }
        var d = [Float](repeating: 0, count: w * h), c = [UInt8](repeating: 0, count: w * h)
        d.withUnsafeMutableBufferPointer { db in c.withUnsafeMutableBufferPointer { cb in
            scene.renderDepth(pose: pose, intrinsics: k, frame: frame, depth: db, confidence: cb) } }
        var out = [UInt16](repeating: 0, count: w * h)
        d.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { DepthConversion.toFloat16(s, $0) } }
        return out
    }

    static func le(_ v: [UInt16]) -> [UInt8] { v.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }

    static func make(_ dir: String, repo: String) {
        mkdir(dir, 0o755)
        let work = FuzzScratch.folder("seeds")
        // PNG: every format, small sizes, both default and filtered levels.
        for (fi, format) in ImageFormat.allCases.enumerated() {
            for (w, h, level) in [(1, 1, Int32(0)), (7, 5, 0), (16, 3, 6), (33, 2, 9)] {
                let pixels = (0..<(w * h * format.bytesPerPixel)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ fi) }
                if let png = try? pixels.withUnsafeBytes({ b in
                    try Result { () throws(CaptureKitError) in try PNG.encode(b, width: w, height: h, stride: w * format.bytesPerPixel, format: format, level: level) }.get()
                }) {
                    write(dir, "png_decode", "f\(fi)_\(w)x\(h)_l\(level).png", png)
                }
                write(dir, "roundtrip_png", "f\(fi)_\(w)x\(h)", [UInt8(fi), UInt8(w - 1), UInt8(h - 1), 1, UInt8(level)] + pixels)
            }
        }
        // Native frames: the golden files and synthetic LiDAR frames of each kind.
        for g in ["frame_float16_8x6.ckframe", "frame_mm_8x6.ckframe", "frame_u8_8x6.ckframe",
                  "frame_float16_8x6.v2.ckframe", "frame_mm_8x6.v2.ckframe", "frame_u8_8x6.v2.ckframe",
                  "frame_float16_8x6.v3.ckframe", "frame_mm_8x6.v3.ckframe", "frame_mm_16x12.v3.ckframe",
                  "frame_float16_8x6.v4.ckframe", "frame_mm_8x6.v4.ckframe", "frame_mm_16x12.v4.ckframe",
                  "frame_mm_20x12.v4.ckframe", "frame_mm_32x24.v4.ckframe"] {
            if let b = read("\(repo)/Tests/golden/\(g)") { write(dir, "depth_frame_decode", g, b) }
        }
        // Version 4's reader paths on real time-of-flight depth (a 40 x 24 crop of the imported
        // set, where it was imported; uint16 little-endian): nibble and byte rows (level 1), byte rows only (level 19).
        if let npy = read("\(repo)/.build-dist/depth-sets/azure-kinect-tof.npy"), npy.count > 10 {  // benchmarks/real_depth.py --import
            let start = 10 + (Int(npy[8]) | Int(npy[9]) << 8)
            var crop: [UInt16] = []
            for y in 100..<124 {
                for x in 140..<180 {
                    let i = start + 2 * (y * 320 + x)
                    if i + 1 < npy.count { crop.append(UInt16(npy[i]) | UInt16(npy[i + 1]) << 8) }
                }
            }
            for level in [Int32(1), 19] where crop.count == 40 * 24 {
                guard let codec = try? DepthFrameCodec(level: level) else { continue }
                var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: crop.count, kind: .millimetres))
                if let n = try? crop.withUnsafeBufferPointer({ s in try out.withUnsafeMutableBytes { o in
                    try Result { () throws(CaptureKitError) in try codec.encode(s, width: 40, height: 24, kind: .millimetres, into: o) }.get() } }) {
                    write(dir, "depth_frame_decode", "tof_40x24_l\(level).v4", Array(out[0..<n]))
                }
            }
            if crop.count == 40 * 24 { write(dir, "roundtrip_depth_frame", "tof_40x24", [1, 39, 23, 0] + le(crop)) }
        }
        if let codec = try? DepthFrameCodec() {
            for (w, h) in [(16, 12), (9, 7), (1, 1)] {
                let src = depth(w, h, frame: 1)
                var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: w * h, kind: .float16Metres))
                if let n = try? src.withUnsafeBufferPointer({ s in try out.withUnsafeMutableBytes { o in
                    try Result { () throws(CaptureKitError) in try codec.encode(s, width: w, height: h, kind: .float16Metres, into: o) }.get() } }) {
                    write(dir, "depth_frame_decode", "f16_\(w)x\(h)", Array(out[0..<n]))
                }
                write(dir, "roundtrip_depth_frame", "f16_\(w)x\(h)", [0, UInt8(w - 1), UInt8(h - 1), 0] + le(src))
                write(dir, "roundtrip_depth_frame", "u8_\(w)x\(h)", [2, UInt8(w - 1), UInt8(h - 1), 0] + le(src).prefix(w * h))
            }
        }
        // .ckdepth: the golden recording and one of each kind.
        if let b = read("\(repo)/Tests/golden/recording_float16_8x6x3.ckdepth") { write(dir, "ckdepth_read", "golden.ckdepth", b) }
        if let b = read("\(repo)/Tests/golden/recording_float16_8x6x3.v2.ckdepth") { write(dir, "ckdepth_read", "golden_v2.ckdepth", b) }
        if let b = read("\(repo)/Tests/golden/recording_float16_8x6x3.v3.ckdepth") { write(dir, "ckdepth_read", "golden_v3.ckdepth", b) }
        if let b = read("\(repo)/Tests/golden/recording_float16_8x6x3.v4.ckdepth") { write(dir, "ckdepth_read", "golden_v4.ckdepth", b) }
        for kind in PixelKind.allCases {
            let path = "\(work)/k\(kind.rawValue).ckdepth"
            if let w = try? DepthFileWriter(path: path, width: 6, height: 4, kind: kind, level: 1, mode: .overwrite) {
                for f in 0..<3 {
                    let src = depth(6, 4, frame: UInt64(f))
                    let bytes: [UInt8] = kind == .bytes ? src.map { UInt8($0 & 3) } : le(src)
                    let format: SampleFormat = kind == .bytes ? .u8 : (kind == .millimetres ? .depthMM : .depthF16)
                    _ = try? bytes.withUnsafeBytes { b in try Result { () throws(CaptureKitError) in
                        if let p = b.baseAddress { try w.append(p, format: format, timestamp: Double(f) / 30) } }.get() }
                }
                try? w.close()
                if let b = read(path) { write(dir, "ckdepth_read", "kind\(kind.rawValue).ckdepth", b) }
            }
        }
        // Streams: depth and confidence, with their side index.
        for (kindByte, kind) in [(UInt8(0), ZStream.Kind.depth), (1, .confidence)] {
            let (w, h) = (8, 6)
            let path = "\(work)/s.zlib"
            FuzzScratch.removeTree(ZStream.indexPath(path))
            guard let writer = try? ZStreamWriter(path: path, width: w, height: h, kind: kind, index: true, overwrite: true) else { continue }
            var frames: [[UInt8]] = []
            for f in 0..<4 {
                let src = depth(w, h, frame: UInt64(f))
                frames.append(kind == .depth ? le(src) : src.map { UInt8($0 % 3) })
                _ = try? frames[f].withUnsafeBytes { b in try Result { () throws(CaptureKitError) in
                    if let p = b.baseAddress { try writer.append(p, format: kind == .depth ? .depthF16 : .u8) } }.get() }
            }
            try? writer.close()
            guard let stream = read(path), let index = read(ZStream.indexPath(path)) else { continue }
            let shape: [UInt8] = [UInt8(w - 1), UInt8(h - 1), kindByte]
            let ops: [UInt8] = [3, 0, 2, 69]
            write(dir, "zstream_read", "k\(kindByte)", shape + ops + stream)
            write(dir, "zstream_read", "k\(kindByte)_cut", shape + ops + stream.prefix(stream.count / 2))
            let len = UInt16(index.count)
            write(dir, "zstream_read_idx", "k\(kindByte)", shape + ops + [UInt8(len & 0xFF), UInt8(len >> 8)] + index + stream)
            write(dir, "roundtrip_zstream", "k\(kindByte)", shape + [1] + frames.flatMap { $0 })
        }
        // JSON: the real captures (CK_SEED_CAPTURES when set, else the test fixtures) and our own encodings.
        let fixtures = "\(repo)/Tests/CaptureKitCoreTests/Fixtures"
        let captures = getenv("CK_SEED_CAPTURES").map { String(cString: $0) }
        for (target, files) in [("json_bbox", ["hmc-clinic-chair/boundingbox.json"]),
                                ("json_transforms", ["hmc-clinic-chair/transforms.json"]),
                                ("json_camera_info", ["multiscan-sample/camera-info-example.jsonl"]),
                                ("json_metadata", ["multiscan-sample/metadata-example.json"])] {
            for f in files {
                guard let b = captures.flatMap({ read("\($0)/\(f)") }) ?? read("\(fixtures)/\(f)") else { continue }
                // The camera info is 354 lines: the first 20 keep the fuzzer fast.
                var bytes = b
                if target == "json_camera_info", let cut = b.indices.filter({ b[$0] == 0x0A }).dropFirst(19).first { bytes = Array(b[...cut]) }
                write(dir, target, "real", bytes)
            }
        }
        if let box = try? Box(center: Vec3(0.1, 0.4, -1.5), size: Vec3(0.5, 0.8, 0.4), yaw: 0.3, floor: 0) {
            let m = BoundingBoxManifest(box: box, passes: [BoxPass(pass: 0, box: box), BoxPass(pass: 1, box: box)])
            if let b = try? m.encode() { write(dir, "json_bbox", "ours", b) }
        }
        // A dataset written by the library: its journal, and the folder as dataset_reopen records.
        let ds = "\(work)/dataset"
        FuzzScratch.removeTree(ds)
        var options = DatasetOptions()
        options.startTimeUnix = 1_700_000_000
        if let d = try? Dataset(create: ds, options: options), let k = try? Intrinsics(fx: 10, fy: 10, cx: 4, cy: 3, width: 8, height: 6) {
            let rgb = [UInt8](repeating: 128, count: 8 * 6 * 3)
            if let box = try? Box(center: Vec3(0, 0, -1), size: Vec3(0.5, 0.5, 0.5), yaw: 0) { try? d.setBox(box) }
            for f in 0..<2 {
                guard let pose = try? Pose(Matrix4.identity) else { break }
                var input = Dataset.FrameInput(timestamp: Double(f), pose: pose, intrinsics: k)
                _ = rgb.withUnsafeBytes { b in
                    input.pixels = (b, 24, .rgb8)
                    return try? d.addFrame(input)
                }
            }
            if let first = d.frames.first?.id { try? d.removeFrame(first) }
            // Stream frames: the journal's stream checkpoints ("stream" lines, one per flush).
            let depth = [Float](repeating: 0.75, count: 4 * 3), confidence = [UInt8](repeating: 2, count: 4 * 3)
            for f in 0..<3 {
                guard let pose = try? Pose(Matrix4.identity) else { break }
                depth.withUnsafeBytes { dp in confidence.withUnsafeBytes { cp in
                    _ = try? d.streamFrame(timestamp: 2 + Double(f), pose: pose, intrinsics: k, depth: dp.baseAddress,
                                           confidence: cp.baseAddress, width: 4, height: 3)
                } }
                try? d.flush()
            }
            let scan = d.scanID
            try? d.close()
            if let j = read("\(ds)/capturekit.jsonl") {
                write(dir, "dataset_journal", "ours", j)
                var records: [UInt8] = []
                for (sel, name) in FuzzTargets.datasetFiles.enumerated() {
                    let file = ["@depth": "\(scan).depth.zlib", "@confidence": "\(scan).confidence.zlib",
                                "@info": "\(scan).jsonl", "@meta": "\(scan).json"][name] ?? name
                    guard let b = read("\(ds)/\(file)"), b.count < 65536 else { continue }
                    records += [UInt8(sel), UInt8(b.count & 0xFF), UInt8(b.count >> 8)] + b
                }
                write(dir, "dataset_reopen", "ours", records)
                // A folder in place of the lock file, and a lock file holding garbage.
                if let lockdir = FuzzTargets.datasetFiles.firstIndex(of: "@lockdir"),
                   let lock = FuzzTargets.datasetFiles.firstIndex(of: ".capturekit.lock") {
                    write(dir, "dataset_reopen", "lockdir", records + [UInt8(lockdir), 0, 0])
                    write(dir, "dataset_reopen", "lockjunk", records + [UInt8(lock), 4, 0, 0xFF, 0x00, 0x39, 0x0A])
                }
            }
        }
        // C-API programs: one step per handle type, then a writer → reader round.
        write(dir, "capi_sequence", "each", Array(0..<40).flatMap { [UInt8($0), 1, 2, 3, 4, 5, 6, 7, 8] })
        write(dir, "capi_sequence", "depth_files", [24, 5, 3, 1, 0, 0, 25, 1, 2, 1, 9, 33, 0, 27, 1, 1, 28, 0, 1, 6, 2, 1])
        // The surface map (opcode 39): create with defaults, fuse a wall through the default box
        // (z-depth 2 m, high confidence, F32), add an RGB view, then every query, set_box, reset.
        let fuse: [UInt8] = [39, 1, 2, 1, 0] + [UInt8](repeating: 9, count: 192) + [UInt8](repeating: 2, count: 192) + [1, 4, 1, 1, 1, 1, 1]
        let queries: [[UInt8]] = [[2, 1, 1, 1, 4, 8, 0], [1, 1, 1], [2, 1, 6, 0, 0, 0], [3, 1], [5, 9, 1, 1], [6, 9, 1, 1], [7, 0, 1], [4, 1], [7, 1, 1]]
        write(dir, "capi_sequence", "surface",
              [39, 0, 0, 0, 1, 0] + fuse + [39, 2, 2, 1, 0] + queries[0] + queries.dropFirst().flatMap { [39, 2, 2, 1] + $0 })
        write(dir, "capi_sequence", "streams", [29, 5, 3, 2, 1, 4, 30, 1, 1, 2, 1, 33, 1, 31, 5, 3, 2, 1, 32, 6, 2, 0, 1, 32, 6, 2, 1, 0, 3])
    }
}
