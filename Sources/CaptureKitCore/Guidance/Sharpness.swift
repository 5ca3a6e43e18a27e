/// Image sharpness for gating blurry frames: the variance of the 3×3 Laplacian.
public enum Sharpness {
    /// The window a session measures (centred, at most this size): the object is centred when
    /// the operator points at it, and a full 1920×1440 frame would cost ~2 ms of the camera
    /// thread at 60 Hz; the window costs ~0.2 ms and keeps full-resolution pixels (focus blur
    /// scores the same way).
    public static let sessionWindow = (width: 640, height: 480)

    /// `score` over the centred window of at most `sessionWindow` (the whole image when smaller).
    public static func scoreCentre(luma: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) throws(CaptureKitError) -> Float {
        let w = min(width, sessionWindow.width), h = min(height, sessionWindow.height)
        let x0 = (width - w) / 2, y0 = (height - h) / 2
        let offset = y0 * stride + x0, count = (h - 1) * stride + w
        guard w >= 1, h >= 1, let base = luma.baseAddress, luma.count >= offset + count else {
            return try score(luma: luma, width: width, height: height, stride: stride)
        }
        return try score(luma: UnsafeRawBufferPointer(start: base + offset, count: count), width: w, height: h, stride: stride)
    }

    /// Variance (population, 1/N) of the Laplacian `up + down + left + right − 4·centre` over
    /// the interior pixels (every pixel with four neighbours: (width − 2) × (height − 2) values)
    /// of an 8-bit luma image whose rows start `stride` bytes apart. Higher is sharper; it
    /// depends on the scene and the resolution, so thresholds are per rig.
    /// - Throws: `invalidArgument` for a size below 3 × 3 or above `Geometry.maxImageDimension`,
    ///   a stride below the width, or a buffer too small for the rows.
    /// The corresponding C function is `ck_sharpness_score`.
    public static func score(luma: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) throws(CaptureKitError) -> Float {
        let maxDim = Int(Geometry.maxImageDimension)
        guard width >= 3, height >= 3, width <= maxDim, height <= maxDim else {
            throw .invalidArgument("width x height \(width) x \(height) must be within 3...\(maxDim)")
        }
        guard stride >= width, stride <= Int.max / maxDim else { throw .invalidArgument("stride \(stride) must be at least width \(width)") }
        let needed = (height - 1) * stride + width  // no overflow: stride ≤ Int.max / 65536
        guard luma.count >= needed, let base = luma.baseAddress else {
            throw .invalidArgument("luma buffer of \(luma.count) bytes is smaller than the \(needed) its size needs")
        }
        // Plain loops the compiler vectorises; chunks of at most 2048 pixels keep the per-chunk
        // sums in 32 bits (|lap| <= 1020, lap² <= 1,040,400: 2048 · 1,040,400 < 2^32).
        let p = base.assumingMemoryBound(to: UInt8.self)
        var sum: Int64 = 0, squares: Int64 = 0
        for r in 1..<(height - 1) {
            let up = p + (r - 1) * stride, mid = p + r * stride, down = p + (r + 1) * stride
            var c = 1
            while c < width - 1 {
                let end = min(width - 1, c + 2048)
                var s: Int32 = 0
                var q: UInt32 = 0
                for i in c..<end {
                    // 16-bit lanes (|lap| <= 1020), squares widened to 32 bits (pmaddwd-friendly).
                    let lap = (Int16(up[i]) &+ Int16(down[i]) &+ Int16(mid[i - 1]) &+ Int16(mid[i + 1])) &- (Int16(mid[i]) &<< 2)
                    let wide = Int32(lap)
                    s &+= wide
                    q &+= UInt32(bitPattern: wide &* wide)
                }
                sum += Int64(s)
                squares += Int64(q)
                c = end
            }
        }
        let n = Double((width - 2) * (height - 2))
        let mean = Double(sum) / n
        return Float(max(0, Double(squares) / n - mean * mean))
    }
}
