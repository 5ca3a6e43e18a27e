/// Mean brightness of an image, for the scheduler's low-light gate.
public enum Luma {
    /// Every `step`-th pixel of every `step`-th row is sampled (pixels (i, j) with i and j
    /// multiples of the step, starting at the top-left one): 4 up to 640 × 480 pixels (1/16 of
    /// the image), 8 up to 1280 × 960, 16 above (a 1920 × 1440 frame: 10,800 samples on 90 rows).
    /// The cost is the memory the sampled rows bring in: step 4 on a 1920 × 1440 RGB frame cost
    /// ~0.5 ms of the camera thread at 60 Hz, step 16 ~0.05 ms.
    public static func step(width: Int, height: Int) -> Int {
        let n = width * height
        return n <= 640 * 480 ? 4 : n <= 1280 * 960 ? 8 : 16
    }

    /// Mean luma in 0...1 of an 8-bit image, sampled on the `step` grid: gray values / 255, or
    /// for RGB(A) the BT.601 luma (0.299 R + 0.587 G + 0.114 B) / 255 (alpha ignored).
    /// - Parameters:
    ///   - pixels: `height` rows, row r at byte r · `stride`, each `width` pixels.
    /// - Throws: `invalidArgument` for gray16, an empty image or rows that do not fit.
    public static func mean(pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
                            format: ImageFormat, bgr: Bool = false) throws(CaptureKitError) -> Float {
        let bpp: Int
        switch format {
        case .gray8: bpp = 1
        case .rgb8: bpp = 3
        case .rgba8: bpp = 4
        case .gray16: throw .invalidArgument("mean luma needs an 8-bit image (gray8, rgb8 or rgba8)")
        }
        guard width >= 1, height >= 1 else { throw .invalidArgument("image \(width) x \(height) is empty") }
        let (rowBytes, o1) = width.multipliedReportingOverflow(by: bpp)
        let (last, o2) = (height - 1).multipliedReportingOverflow(by: stride)
        let (need, o3) = last.addingReportingOverflow(rowBytes)
        guard !o1, !o2, !o3, stride >= rowBytes, need <= pixels.count, let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .invalidArgument("image rows (\(height) x stride \(stride)) do not fit in \(pixels.count) bytes")
        }
        // BT.601 weights exactly, in thousandths (299 + 587 + 114 = 1000); integer sums, so a
        // 1920 x 1440 frame costs well under 0.1 ms.
        let (wr, wg, wb): (UInt64, UInt64, UInt64) = bgr ? (114, 587, 299) : (299, 587, 114)
        let step = Luma.step(width: width, height: height)
        var sum: UInt64 = 0, n = 0
        var r = 0
        while r < height {
            let row = base + r * stride
            var c = 0
            if bpp == 1 {
                while c < width { sum &+= UInt64(row[c]) * 1000; n += 1; c += step }
            } else {
                while c < width {
                    let p = row + c * bpp
                    sum &+= wr * UInt64(p[0]) + wg * UInt64(p[1]) + wb * UInt64(p[2])
                    n += 1
                    c += step
                }
            }
            r += step
        }
        return Float(Double(sum) / 1000 / Double(n) / 255)
    }
}
