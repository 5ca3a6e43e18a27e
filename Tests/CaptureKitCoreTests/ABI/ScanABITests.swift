import CCaptureKitAPI
import Foundation
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

/// The scan reader through its C entry points (ck_scan_*): the real MultiScan sample (metadata and
/// camera info as recorded; its numbers parsed here with Foundation's JSONSerialization) with
/// streams written here, and Stray Scanner folders written here. Bounds on what files declare.
@Suite struct ScanABITests {
    static let scanID = "20230615T103000-0700_2CE7F809-8FA9-42BB-BE73-23C5C30C7D07"

    func lastError() -> String { String(cString: ck_last_error_message()) }

    func tempDir(_ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ck-scan-\(name)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The 74-byte 16-bit PNG declaring 32768 × 32768 (CRCs from zlib's crc32 via the PNG writer's
    /// helper would be circular: computed here bitwise).
    static func bombPNG() -> [UInt8] {
        func crc(_ bytes: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for b in bytes { c ^= UInt32(b); for _ in 0..<8 { c = (c >> 1) ^ (0xEDB8_8320 & (0 &- (c & 1))) } }
            return ~c
        }
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be(UInt32(data.count)) + body + be(crc(body))
        }
        let ihdr: [UInt8] = [0, 0, 0x80, 0, 0, 0, 0x80, 0, 16, 0, 0, 0, 0]
        let idat: [UInt8] = [0x78, 0xDA, 0xED, 0xC1, 0x31, 0x01, 0, 0, 0, 0xC2, 0xA0, 0xF5, 0x4F, 0x6D, 0x08, 0x5F, 0xA0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    // MARK: MultiScan

    static func depthValue(_ frame: Int, _ i: Int) -> Float { 0.25 * Float(1 + (i + frame) % 40) }

    func makeMultiScan(_ dir: String, streamed: Int) throws {
        let fm = FileManager.default
        try fm.copyItem(atPath: fixture("multiscan-sample/metadata-example.json").path, toPath: "\(dir)/\(Self.scanID).json")
        try fm.copyItem(atPath: fixture("multiscan-sample/camera-info-example.jsonl").path, toPath: "\(dir)/\(Self.scanID).jsonl")
        let (w, h) = (256, 192)
        let depth = try ZStreamWriter(path: "\(dir)/\(Self.scanID).depth.zlib", width: w, height: h, kind: .depth)
        let conf = try ZStreamWriter(path: "\(dir)/\(Self.scanID).confidence.zlib", width: w, height: h, kind: .confidence)
        for f in 0..<streamed {
            let d = (0..<(w * h)).map { Self.depthValue(f, $0) }
            let c = (0..<(w * h)).map { UInt8(($0 + f) % 3) }
            try d.withUnsafeBytes { b in try Result { () throws(CaptureKitError) in try depth.append(b.baseAddress!, format: .depthF32) }.get() }
            try c.withUnsafeBytes { b in try Result { () throws(CaptureKitError) in try conf.append(b.baseAddress!, format: .u8) }.get() }
        }
        try depth.close()
        try conf.close()
    }

    @Test func multiScanRealSample() throws {
        let dir = try tempDir("ms")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeMultiScan(dir, streamed: 2)
        let lines = try String(contentsOfFile: fixture("multiscan-sample/camera-info-example.jsonl").path, encoding: .utf8)
            .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(lines.count == 354)

        var scan: OpaquePointer? = nil
        #expect(ck_scan_open(&scan, dir) == CK_OK)
        defer { ck_scan_close(scan) }
        var info = ck_scan_info()
        #expect(ck_scan_describe(&info, scan) == CK_OK)
        #expect(info.kind == Int32(CK_SCAN_KIND_MULTISCAN.rawValue) && info.has_confidence == 1)
        #expect(info.depth_width == 256 && info.depth_height == 192)
        #expect(info.frame_count == 354 && info.depth_frame_count == 354)
        let t0 = (lines[0]["timestamp"] as! NSNumber).int64Value, tn = (lines[353]["timestamp"] as! NSNumber).int64Value
        #expect(abs(info.duration - Double(tn - t0) / 1e9) < 1e-9)

        for i in [0, 177, 353] {
            var f = ck_scan_frame_info()
            #expect(ck_scan_frame(&f, scan, UInt64(i)) == CK_OK)
            let k = (lines[i]["intrinsics"] as! [NSNumber]).map { $0.doubleValue }
            let t = (lines[i]["transform"] as! [NSNumber]).map { $0.doubleValue }
            #expect(f.timestamp == Double((lines[i]["timestamp"] as! NSNumber).int64Value) / 1e9)
            #expect(f.intrinsics.fx == Float(k[0]) && f.intrinsics.fy == Float(k[4]))
            #expect(f.intrinsics.cx == Float(k[6]) && f.intrinsics.cy == Float(k[7]))
            #expect(f.intrinsics.width == 1920 && f.intrinsics.height == 1440)
            let m = withUnsafeBytes(of: f.pose.m) { Array($0.bindMemory(to: Float.self)) }
            for j in 0..<16 { #expect(abs(Double(m[j]) - t[j]) < 2e-6) }
            #expect(f.has_depth == 1 && f.depth_index == Int64(i))
        }
        var f = ck_scan_frame_info()
        #expect(ck_scan_frame(&f, scan, 354) == CK_E_NOT_FOUND)

        let n = 256 * 192
        var out = [Float](repeating: -1, count: n)
        var written = 0
        for frame in 0..<2 {
            #expect(ck_scan_depth(&out, n * 4, &written, scan, UInt64(frame), Int32(CK_FORMAT_DEPTH_F32.rawValue)) == CK_OK)
            #expect(written == n * 4)
            let wantDepth: [Float] = (0..<n).map { (i: Int) -> Float in Self.depthValue(frame, i) }
            #expect(out == wantDepth)
            var c = [UInt8](repeating: 9, count: n)
            #expect(ck_scan_confidence(&c, n, &written, scan, UInt64(frame)) == CK_OK)
            let wantConfidence: [UInt8] = (0..<n).map { (i: Int) -> UInt8 in UInt8((i + frame) % 3) }
            #expect(c == wantConfidence)
        }
        // The stream ends before frame 2 while the metadata counts 354.
        out[0] = -7
        #expect(ck_scan_depth(&out, n * 4, &written, scan, 2, Int32(CK_FORMAT_DEPTH_F32.rawValue)) == CK_E_CORRUPT)
        #expect(lastError().contains("depth.zlib"))
        #expect(out[0] == -7)
        #expect(ck_scan_depth(&out, n * 4 - 1, &written, scan, 0, Int32(CK_FORMAT_DEPTH_F32.rawValue)) == CK_E_BUFFER_TOO_SMALL)
        #expect(written == n * 4)
        #expect(ck_scan_depth(&out, n * 4, &written, scan, 0, Int32(CK_FORMAT_U8.rawValue)) == CK_E_INVALID_ARGUMENT)
    }

    // MARK: Stray Scanner

    static func mm(_ frame: Int, _ i: Int) -> UInt16 { UInt16(i % 5 == 0 ? 0 : 300 + 37 * i + 1000 * frame) }

    func makeStray(_ dir: String, odometry: String) throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/depth", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/confidence", withIntermediateDirectories: true)
        try "1597.5, 0.0, 959.25\n0.0, 1596.0, 721.5\n0.0, 0.0, 1.0\n".write(toFile: "\(dir)/camera_matrix.csv", atomically: true, encoding: .utf8)
        try odometry.write(toFile: "\(dir)/odometry.csv", atomically: true, encoding: .utf8)
        for f in 0..<2 {
            let d = (0..<(16 * 12)).map { Self.mm(f, $0) }
            let c = (0..<(16 * 12)).map { UInt8(($0 + 2 * f) % 3) }
            let name = String(format: "%06d.png", f)
            try d.withUnsafeBytes { b in
                try Result { () throws(CaptureKitError) in
                    try PNG.write("\(dir)/depth/\(name)", b, width: 16, height: 12, stride: 32, format: .gray16, level: 0, overwrite: true)
                }.get()
            }
            try c.withUnsafeBytes { b in
                try Result { () throws(CaptureKitError) in
                    try PNG.write("\(dir)/confidence/\(name)", b, width: 16, height: 12, stride: 16, format: .gray8, level: 0, overwrite: true)
                }.get()
            }
        }
    }

    @Test func strayWithPerFrameIntrinsics() throws {
        let dir = try tempDir("stray")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStray(dir, odometry: """
            timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy
            10.0, 000000, 0.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1500.0, 1501.0, 950.0, 720.0
            10.5, 000001, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1515.0, 1516.0, 951.0, 721.0
            11.25, 000002, 2.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1530.0, 1531.0, 952.0, 722.0

            """)
        var scan: OpaquePointer? = nil
        #expect(ck_scan_open(&scan, dir) == CK_OK)
        defer { ck_scan_close(scan) }
        var info = ck_scan_info()
        #expect(ck_scan_describe(&info, scan) == CK_OK)
        #expect(info.kind == Int32(CK_SCAN_KIND_STRAY.rawValue) && info.depth_width == 16 && info.depth_height == 12)
        #expect(info.frame_count == 3 && info.depth_frame_count == 2 && info.duration == 1.25)
        for i in 0..<3 {
            var f = ck_scan_frame_info()
            #expect(ck_scan_frame(&f, scan, UInt64(i)) == CK_OK)
            #expect(f.intrinsics.fx == 1500 + 15 * Float(i) && f.intrinsics.fy == 1501 + 15 * Float(i))
            #expect(f.intrinsics.cx == 950 + Float(i) && f.intrinsics.cy == 720 + Float(i))
            #expect(f.intrinsics.width == 1920 && f.intrinsics.height == 1440)
            let m = withUnsafeBytes(of: f.pose.m) { Array($0.bindMemory(to: Float.self)) }
            var want: [Float] = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 2, 3, 1]  // OpenCV axes converted
            want[12] = Float(i)
            #expect(m == want)
            #expect(f.has_depth == (i < 2 ? 1 : 0))
        }
        var d = [UInt16](repeating: 0, count: 16 * 12)
        var written = 0
        #expect(ck_scan_depth(&d, d.count * 2, &written, scan, 1, Int32(CK_FORMAT_DEPTH_MM.rawValue)) == CK_OK)
        let wantDepth: [UInt16] = (0..<(16 * 12)).map { (i: Int) -> UInt16 in Self.mm(1, i) }
        #expect(d == wantDepth)
        #expect(ck_scan_depth(&d, d.count * 2, &written, scan, 2, Int32(CK_FORMAT_DEPTH_MM.rawValue)) == CK_E_NOT_FOUND)
        var c = [UInt8](repeating: 9, count: 16 * 12)
        #expect(ck_scan_confidence(&c, c.count, &written, scan, 0) == CK_OK)
        let wantConfidence: [UInt8] = (0..<(16 * 12)).map { (i: Int) -> UInt8 in UInt8(i % 3) }
        #expect(c == wantConfidence)

        // A later map declaring 32768 x 32768: refused before anything is allocated, dst untouched.
        try Data(Self.bombPNG()).write(to: URL(fileURLWithPath: "\(dir)/depth/000001.png"))
        d[0] = 4242
        #expect(ck_scan_depth(&d, d.count * 2, &written, scan, 1, Int32(CK_FORMAT_DEPTH_MM.rawValue)) == CK_E_CORRUPT)
        #expect(lastError().contains("000001.png: 32768 x 32768"))
        #expect(d[0] == 4242)
    }

    @Test func strayRefusesAFirstDepthMapLargerThanItsColour() throws {
        #expect(Self.bombPNG().count == 74)
        let dir = try tempDir("stray-bomb")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStray(dir, odometry: "timestamp, frame, x, y, z, qx, qy, qz, qw\n10.0, 000000, 0, 0, 0, 0, 0, 0, 1\n")
        try Data(Self.bombPNG()).write(to: URL(fileURLWithPath: "\(dir)/depth/000000.png"))
        var scan: OpaquePointer? = nil
        #expect(ck_scan_open(&scan, dir) == CK_E_CORRUPT)
        #expect(scan == nil)
        #expect(lastError().contains("000000.png: declares 32768 x 32768 depth, larger than the capture's 1920 x 1440 colour"))
    }

    @Test func durationIsTheSpanWhenTheClockGoesBack() throws {
        let dir = try tempDir("stray-back")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStray(dir, odometry: """
            timestamp, frame, x, y, z, qx, qy, qz, qw
            10.0, 000000, 0, 0, 0, 0, 0, 0, 1
            12.5, 000001, 0, 0, 0, 0, 0, 0, 1
            3.0, 000002, 0, 0, 0, 0, 0, 0, 1

            """)
        var scan: OpaquePointer? = nil
        #expect(ck_scan_open(&scan, dir) == CK_OK)
        defer { ck_scan_close(scan) }
        var info = ck_scan_info()
        #expect(ck_scan_describe(&info, scan) == CK_OK)
        #expect(info.duration == 9.5)
        var f = ck_scan_frame_info()
        #expect(ck_scan_frame(&f, scan, 2) == CK_OK && f.timestamp == 3.0)  // file order
    }

    @Test func csvLinesWithTooManyFieldsAreRefused() throws {
        let dir = try tempDir("stray-wide")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wide = String(repeating: "1,", count: 100) + "1"
        try makeStray(dir, odometry: "timestamp, frame, x, y, z, qx, qy, qz, qw\n\(wide)\n")
        var scan: OpaquePointer? = nil
        #expect(ck_scan_open(&scan, dir) == CK_E_CORRUPT)
        #expect(lastError().contains("odometry.csv: line 2 has more than 64 fields"))
    }
}
