import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct CameraPixelsTests {
    /// BT.601 in float64, the textbook formulas (independent of the fixed-point code).
    static func reference(_ y: UInt8, _ cb: UInt8, _ cr: UInt8, full: Bool) -> (Double, Double, Double) {
        let yy = full ? Double(y) : (Double(y) - 16) * 255 / 219
        let u = (Double(cb) - 128) * (full ? 1 : 255 / 224.0), v = (Double(cr) - 128) * (full ? 1 : 255 / 224.0)
        func c(_ x: Double) -> Double { min(255, max(0, x)) }
        return (c(yy + 1.402 * v), c(yy - 0.344136 * u - 0.714136 * v), c(yy + 1.772 * u))
    }

    @Test(arguments: [(1, 1), (7, 5), (8, 2), (16, 9), (33, 17), (64, 48)])
    func nv12MatchesTheFloatReferenceAtEverySize(_ size: (Int, Int)) throws {
        let (w, h) = size
        var rng = SplitMix64(seed: UInt64(w * 100 + h))
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let ys = w + 3, cs = cw * 2 + 5  // padded rows
        let y = (0..<(ys * h)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let c = (0..<(cs * ch)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for full in [true, false] {
            let rgb = y.withUnsafeBytes { yb in c.withUnsafeBytes { cb in
                CameraPixels(layout: full ? .nv12Full : .nv12Video, width: w, height: h, luma: yb, stride: ys, chroma: cb, chromaStride: cs).rgb()
            } }
            var worst = 0.0
            for j in 0..<h {
                for i in 0..<w {
                    let ref = Self.reference(y[j * ys + i], c[(j / 2) * cs + (i / 2) * 2], c[(j / 2) * cs + (i / 2) * 2 + 1], full: full)
                    let o = (j * w + i) * 3
                    worst = max(worst, abs(Double(rgb[o]) - ref.0), abs(Double(rgb[o + 1]) - ref.1), abs(Double(rgb[o + 2]) - ref.2))
                }
            }
            #expect(worst <= 1.0, "\(w)x\(h) full=\(full): off by \(worst)")
        }
    }

    @Test func bgraSwapsToRGBExactly() throws {
        let w = 11, h = 3, stride = 48
        let px = (0..<(stride * h)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let rgb = px.withUnsafeBytes { CameraPixels(layout: .bgra8, width: w, height: h, luma: $0, stride: stride).rgb() }
        for j in 0..<h { for i in 0..<w { for k in 0..<3 { #expect(rgb[(j * w + i) * 3 + k] == px[j * stride + i * 4 + 2 - k]) } } }
    }

    @Test func validationRefusesShortPlanesAndStrides() {
        let y = [UInt8](repeating: 0, count: 16 * 8), c = [UInt8](repeating: 0, count: 16 * 4)
        y.withUnsafeBytes { yb in c.withUnsafeBytes { cb in
            #expect(throws: CaptureKitError.self) { try CameraPixels(layout: .nv12Full, width: 16, height: 8, luma: yb, stride: 16).validate() }
            #expect(throws: CaptureKitError.self) {
                try CameraPixels(layout: .nv12Full, width: 16, height: 9, luma: yb, stride: 16, chroma: cb, chromaStride: 16).validate()
            }
            #expect(throws: CaptureKitError.self) {
                try CameraPixels(layout: .nv12Full, width: 16, height: 8, luma: yb, stride: 16, chroma: cb, chromaStride: 14).validate()
            }
            #expect(throws: CaptureKitError.self) { try CameraPixels(layout: .bgra8, width: 16, height: 8, luma: yb, stride: 64).validate() }
            #expect((try? CameraPixels(layout: .nv12Full, width: 16, height: 8, luma: yb, stride: 16, chroma: cb, chromaStride: 16).validate()) != nil)
        } }
    }

    @Test func halvingAveragesBlocksRounded() {
        let src: [UInt8] = [0, 1, 2, 3, 10,
                            1, 2, 3, 4, 10,
                            255, 255, 0, 0, 10]
        let (out, w, h) = Downscale.half(src, width: 5, height: 3, channels: 1)
        #expect(w == 2 && h == 1 && out == [1, 3])  // (0+1+1+2+2)/4 = 1.5 → round half up: (4+2)>>2 = 1; (2+3+3+4+2)>>2 = 3
    }

    /// A dataset given NV12 writes the converted image (JPEG here) and its downscaled copies; a
    /// removed frame takes its copies along; a reopened dataset removes orphan copies.
    @Test func aDatasetWritesCameraPixelsAndDownscaledCopies() throws {
        let dir = DatasetSessionTests.tempDir("nv12")
        var o = DatasetOptions()
        o.downscales = [2, 8]
        o.writeQueueBytes = 1 << 20
        let w = 40, h = 30
        let k = try Intrinsics(fx: 40, fy: 40, cx: 20, cy: 15, width: UInt32(w), height: UInt32(h))
        let y = (0..<(w * h)).map { UInt8(truncatingIfNeeded: 16 + $0 % 200) }
        let c = [UInt8](repeating: 128, count: w * h / 2)
        let ds = try Dataset(create: dir, options: o)
        for i in 0..<2 {
            try y.withUnsafeBytes { yb in try c.withUnsafeBytes { cb in
                var f = Dataset.FrameInput(timestamp: Double(i), pose: lookAt(eye: Vec3(0, 1, 2), target: .zero), intrinsics: k)
                f.camera = CameraPixels(layout: .nv12Full, width: w, height: h, luma: yb, stride: w, chroma: cb, chromaStride: w)
                _ = try ds.addFrame(f)
            } }
        }
        try ds.flush()
        let (full, info) = try PNG.read("\(dir)/images/000000.png")
        #expect(info.width == 40 && info.height == 30 && info.format == .rgb8)
        #expect(full[0] == y[0] && full[1] == y[0] && full[2] == y[0])  // neutral chroma: gray = Y
        let (half, hi) = try PNG.read("\(dir)/images_2/000000.png")
        #expect(hi.width == 20 && hi.height == 15)
        let expected = Downscale.half(full, width: 40, height: 30, channels: 3).pixels
        #expect(half == expected)
        let (_, ei) = try PNG.read("\(dir)/images_8/000001.png")
        #expect(ei.width == 5 && ei.height == 3)
        #expect(!FileIO.exists("\(dir)/images_4"))
        try ds.removeFrame(1)
        #expect(!FileIO.exists("\(dir)/images_2/000001.png") && !FileIO.exists("\(dir)/images_8/000001.png"))
        try ds.close()
        // An orphan copy (an add killed before its journal line) goes on reopen.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: "\(dir)/images_2/000007.png"))
        let re = try Dataset(open: dir)
        #expect(re.options.downscales == [2, 8])
        #expect(!FileIO.exists("\(dir)/images_2/000007.png") && FileIO.exists("\(dir)/images_2/000000.png"))
        try re.cancel()  // a reopened dataset's cancel keeps the (now empty) folder itself
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        try? FileManager.default.removeItem(atPath: dir)
    }
}
