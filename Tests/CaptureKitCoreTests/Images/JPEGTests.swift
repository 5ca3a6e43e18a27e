import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct JPEGTests {
    func image(_ w: Int, _ h: Int, _ bpp: Int) -> [UInt8] {
        (0..<(w * h * bpp)).map { i in UInt8(truncatingIfNeeded: (i / bpp % w) * 3 + (i / (w * bpp)) * 2 + i % bpp * 40) }
    }

    @Test func encodesEveryEightBitFormatAndRefusesTheRest() throws {
        for (format, bpp) in [(ImageFormat.gray8, 1), (.rgb8, 3), (.rgba8, 4)] {
            let px = image(40, 30, bpp)
            let jpg = try px.withUnsafeBytes { b in try JPEG.encode(b, width: 40, height: 30, stride: 40 * bpp, format: format) }
            #expect(jpg.prefix(2) == [0xFF, 0xD8] && jpg.suffix(2) == [0xFF, 0xD9])
            #expect(jpg.count <= (try JPEG.encodeBound(width: 40, height: 30, format: format)))
        }
        let px = image(4, 4, 2)
        var status: CaptureKitError.Status?
        do { _ = try px.withUnsafeBytes { b in try JPEG.encode(b, width: 4, height: 4, stride: 8, format: .gray16) } } catch {
            status = (error as? CaptureKitError)?.status
        }
        #expect(status == .unsupported)
        for q: Int32 in [0, 101, -5] {
            #expect(throws: CaptureKitError.self) {
                _ = try px.withUnsafeBytes { b in try JPEG.encode(b, width: 4, height: 4, stride: 4, format: .gray8, quality: q) }
            }
        }
        // Too few pixel bytes for the rows the stride implies.
        #expect(throws: CaptureKitError.self) {
            _ = try px.withUnsafeBytes { b in try JPEG.encode(b, width: 4, height: 4, stride: 16, format: .gray8) }
        }
    }

    /// A JPEG dataset writes images/NNNNNN.jpg, lists them in transforms.json, and a reopened dataset
    /// keeps writing JPEG at the same quality (the option is journaled).
    @Test func aJPEGDatasetWritesJPGFilesAndKeepsTheOptionWhenReopened() throws {
        let dir = DatasetSessionTests.tempDir("jpeg")
        var o = DatasetOptions()
        o.imageEncoding = .jpeg
        o.jpegQuality = 75
        let k = try Intrinsics(fx: 20, fy: 20, cx: 8, cy: 6, width: 16, height: 12)
        let px = image(16, 12, 3)
        func add(_ ds: Dataset, _ i: Int, _ format: ImageFormat = .rgb8) throws -> Int64 {
            try px.withUnsafeBytes { b in
                var f = Dataset.FrameInput(timestamp: Double(i), pose: lookAt(eye: Vec3(0, 1, 2), target: .zero), intrinsics: k)
                f.pixels = (b, format == .gray16 ? 32 : 48, format)
                return try ds.addFrame(f)
            }
        }
        let ds = try Dataset(create: dir, options: o)
        #expect(try add(ds, 0) == 0)
        #expect(throws: CaptureKitError.self) { _ = try add(ds, 1, .gray16) }
        try ds.close()
        let re = try Dataset(open: dir)
        #expect(re.options.imageEncoding == .jpeg && re.options.jpegQuality == 75)
        #expect(try add(re, 2) == 1)
        try re.finalize(zipPath: nil)
        #expect(re.frames.map(\.imagePath) == ["images/000000.jpg", "images/000001.jpg"])
        let expected = try px.withUnsafeBytes { b in try JPEG.encode(b, width: 16, height: 12, stride: 48, format: .rgb8, quality: 75) }
        for f in re.frames { #expect(try FileIO.readAll("\(dir)/\(f.imagePath)") == expected) }
        let t = try TransformsManifest.read(from: "\(dir)/transforms.json")
        #expect(t.frames.map(\.filePath) == ["images/000000.jpg", "images/000001.jpg"])
        try re.close()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
