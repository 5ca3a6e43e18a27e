@testable import CaptureKitCore

/// Decodes one depth frame of any version into `n` samples that start as 0xABCD, so a refused
/// frame shows whether the destination was left untouched. Shared by the frame-version suites.
func decodeDepthFrame(_ frame: [UInt8], pixels n: Int) -> (CaptureKitError?, [UInt16]) {
    var dst = [UInt16](repeating: 0xABCD, count: n)
    let error = ZStreamTests.caught {
        let codec = try DepthFrameCodec()
        _ = try frame.withUnsafeBytes { src in try dst.withUnsafeMutableBufferPointer { try codec.decode(src, into: $0) } }
    }
    return (error, dst)
}
