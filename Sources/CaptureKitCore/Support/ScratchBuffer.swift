/// A growable, uninitialised byte buffer owned by a codec or a stream (reused across frames so a
/// recording allocates once). Not thread-safe.
final class ScratchBuffer {
    private(set) var bytes: UnsafeMutableRawBufferPointer

    init() { bytes = UnsafeMutableRawBufferPointer(start: nil, count: 0) }
    deinit { bytes.deallocate() }

    /// At least `count` bytes (contents undefined after growth).
    func reserve(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if bytes.count < count {
            bytes.deallocate()
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 64), alignment: 64)
        }
        return UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])
    }
}
