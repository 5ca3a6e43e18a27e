/// Sample formats of caller buffers (`ck_format`), and conversions between them.
public enum SampleFormat: Int32, Sendable, CaseIterable {
    /// float metres
    case depthF32 = 1
    /// uint16 IEEE binary16 bit patterns, metres
    case depthF16 = 2
    /// uint16 millimetres
    case depthMM = 3
    /// uint8 (confidence)
    case u8 = 4

    public var bytesPerSample: Int {
        switch self {
        case .depthF32: return 4
        case .depthF16, .depthMM: return 2
        case .u8: return 1
        }
    }

    public var isDepth: Bool { self != .u8 }

    /// The stored kind a frame given in this format is encoded as by default (F32 → float16).
    public var defaultKind: PixelKind {
        switch self {
        case .depthF32, .depthF16: return .float16Metres
        case .depthMM: return .millimetres
        case .u8: return .bytes
        }
    }

    /// The 16-bit format a stored kind holds (nil for bytes).
    public static func storage(of kind: PixelKind) -> SampleFormat {
        switch kind {
        case .float16Metres: return .depthF16
        case .millimetres: return .depthMM
        case .bytes: return .u8
        }
    }

    /// True if samples of `self` can be converted to `other` (depth ↔ depth, u8 → u8).
    public func converts(to other: SampleFormat) -> Bool { isDepth == other.isDepth }
}

extension DepthConversion {
    /// Converts `count` samples between formats with the depth rules (see `DepthConversion`).
    /// `src` and `dst` must hold `count` samples of their formats and must not overlap unless the
    /// formats are equal. Callers check `converts(to:)` first; an incompatible pair copies nothing.
    public static func convert(_ src: UnsafeRawPointer, _ from: SampleFormat, _ dst: UnsafeMutableRawPointer,
                               _ to: SampleFormat, count n: Int) {
        guard n > 0, from.converts(to: to) else { return }
        if from == to {
            if src != UnsafeRawPointer(dst) { dst.copyMemory(from: src, byteCount: n * from.bytesPerSample) }
            return
        }
        let f32In = UnsafeBufferPointer(start: src.assumingMemoryBound(to: Float.self), count: n)
        let u16In = UnsafeBufferPointer(start: src.assumingMemoryBound(to: UInt16.self), count: n)
        let f32Out = UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: Float.self), count: n)
        let u16Out = UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: UInt16.self), count: n)
        switch (from, to) {
        case (.depthF32, .depthF16): toFloat16(f32In, u16Out)
        case (.depthF32, .depthMM): toMillimetres(f32In, u16Out)
        case (.depthF16, .depthF32): toFloat32(u16In, f32Out)
        case (.depthF16, .depthMM): toMillimetres(float16: u16In, u16Out)
        case (.depthMM, .depthF32): fromMillimetres(u16In, f32Out)
        case (.depthMM, .depthF16):
            // mm → metres (exact in float32) → float16, in blocks through a small stack buffer.
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 1024) { tmp in
                var i = 0
                while i < n {
                    let m = min(1024, n - i)
                    let part = UnsafeMutableBufferPointer(rebasing: tmp[0..<m])
                    fromMillimetres(UnsafeBufferPointer(rebasing: u16In[i..<(i + m)]), part)
                    toFloat16(UnsafeBufferPointer(part), UnsafeMutableBufferPointer(rebasing: u16Out[i..<(i + m)]))
                    i += m
                }
            }
        default: break
        }
    }
}
