// The pixel layouts of the images the library reads and writes (PNG, JPEG, camera buffers).

/// Pixel layouts (raw values = the C header's `CK_IMAGE_FORMAT_*`).
public enum ImageFormat: Int32, Sendable, CaseIterable {
    case gray8 = 1
    case rgb8 = 2
    case rgba8 = 3
    /// 16-bit gray, native-endian in memory (big-endian in the file). Depth in millimetres.
    case gray16 = 4

    /// Bytes per pixel in memory and in the file.
    public var bytesPerPixel: Int {
        switch self {
        case .gray8: 1
        case .rgb8: 3
        case .rgba8: 4
        case .gray16: 2
        }
    }
}
