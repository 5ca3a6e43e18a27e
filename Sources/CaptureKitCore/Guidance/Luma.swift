/// Mean brightness of an image, for the scheduler's low-light gate.
public enum Luma {
    /// Every `step`-th pixel of every `step`-th row is sampled (pixels (i, j) with i and j
    /// multiples of 4, starting at the top-left one): 1/16 of the image, cheap enough per frame.
    public static let step = 4

    /// Mean luma in 0...1 of an 8-bit image, sampled on the `step` grid: gray values / 255, or
    /// for RGB(A) the BT.601 luma (0.299 R + 0.587 G + 0.114 B) / 255 (alpha ignored).
    /// - Parameters:
    ///   - pixels: `height` rows, row r at byte r · `stride`, each `width` pixels.
    /// - Throws: `invalidArgument` for gray16, an empty image or rows that do not fit.
    public static func mean(pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
                            format: PNGFormat) throws(CaptureKitError) -> Float {
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
        guard !o1, !o2, !o3, stride >= rowBytes, need <= pixels.count else {
            throw .invalidArgument("image rows (\(height) x stride \(stride)) do not fit in \(pixels.count) bytes")
        }
        var sum = 0.0, n = 0
        var r = 0
        while r < height {
            let row = r * stride
            var c = 0
            while c < width {
                let o = row + c * bpp
                if bpp == 1 {
                    sum += Double(pixels[o])
                } else {
                    sum += 0.299 * Double(pixels[o]) + 0.587 * Double(pixels[o + 1]) + 0.114 * Double(pixels[o + 2])
                }
                n += 1
                c += step
            }
            r += step
        }
        return Float(sum / Double(n) / 255)
    }
}
