import CZlib

/// MultiScan-compatible depth and confidence streams (`<scan>.depth.zlib`, `<scan>.confidence.zlib`,
/// docs/FORMATS.md §1): ONE raw DEFLATE stream (RFC 1951, windowBits −15) over the concatenation of all
/// frames, each frame `height × width` samples, row-major, tightly packed, no per-frame header:
/// float16 metres (little-endian) for depth, uint8 (0 low, 1 medium, 2 high) for confidence.
///
/// The writer ends every frame with a full flush (`Z_FULL_FLUSH`): the frame's last byte is in the
/// file, byte-aligned and followed by the 4-byte sync marker `00 00 FF FF`, and the next frame does
/// not refer back to it. So a file cut short by a crash still yields every complete frame, and the
/// offset after each marker is a restart point for a fresh raw inflater — what the optional side
/// index `<path>.idx` lists (little-endian `UInt64`, one per frame start, the first being 0).
///
/// Truncation rule (readers): frames are delivered while complete; when the data ends exactly at a
/// frame boundary — after a full flush, with or without the final block — the stream is a clean
/// (if unterminated) recording and the reader reports the end; when it ends inside a frame, that
/// frame is reported cut short (`corrupt`, naming it). A stream whose final block ends inside a
/// frame (wrong width, height or format) is `corrupt` too. Bytes after the final block are ignored,
/// as MultiScan's decoders (Python `zlib.decompressobj`) ignore them. Raw DEFLATE carries no
/// checksum: damage is detected when zlib rejects the bit stream (most damage), not always.
public enum ZStream {
    /// Largest accepted width or height (`CK_DEPTH_MAX_DIMENSION`).
    public static let maxDimension = 16384
    /// The writer's default zlib level (`CK_ZSTREAM_DEFAULT_LEVEL`), chosen by measurement: on
    /// 256×192 synthetic LiDAR frames level 1 encodes about twice as fast as MultiScan's level 5
    /// for a ratio a few percent lower, and decodes as fast (see BENCHMARKS.md).
    public static let defaultLevel: Int32 = 1
    /// The sync marker a full (or sync) flush ends with: an empty stored block's LEN and NLEN.
    static let syncMarker: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    /// DEFLATE's window: after this many output bytes since a restart, no back-reference can reach
    /// before the restart point.
    static let window: UInt64 = 32768
    /// Largest side index a reader loads (64 Mi frames, 18 days at 60 Hz; 512 MiB): a larger file
    /// is ignored rather than allocated.
    static let maxIndexEntries: UInt64 = 1 << 26
    /// Compressed bytes read from the file per call.
    static let inputChunk = 1 << 16

    /// The side index path of a stream.
    public static func indexPath(_ path: String) -> String { path + ".idx" }

    /// What a stream stores.
    public enum Kind: Sendable {
        /// float16 metres, 2 bytes a sample.
        case depth
        /// uint8 confidence, 1 byte a sample.
        case confidence

        public var sampleSize: Int { self == .depth ? 2 : 1 }
        var name: String { self == .depth ? "depth (float16)" : "confidence (uint8)" }
    }

    /// Validates frame dimensions and returns the bytes of one stored frame.
    static func frameBytes(width: Int, height: Int, kind: Kind) throws(CaptureKitError) -> Int {
        guard (1...maxDimension).contains(width) else {
            throw .invalidArgument("width \(width) is outside 1...\(maxDimension)")
        }
        guard (1...maxDimension).contains(height) else {
            throw .invalidArgument("height \(height) is outside 1...\(maxDimension)")
        }
        return width * height * kind.sampleSize  // ≤ 2^29: no overflow
    }

    /// True when the bytes `start..<end` of `file` are exactly `frames` frames of `frameBytes`
    /// bytes for a fresh raw inflater started at `start` (so `start` is a restart point), with no
    /// final block among them, and `end` follows a sync marker (the last frame's full flush): the
    /// check that a frame boundary read from a journal is one before a stream is cut there. Bounded
    /// memory (64 KiB in, 64 KiB out); damage is `false`, never an error.
    /// - Throws: `io`, `noMemory`.
    static func segmentHoldsFrames(_ file: File, from start: UInt64, to end: UInt64, frames: UInt64,
                                   frameBytes: Int) throws(CaptureKitError) -> Bool {
        guard end > start, frames > 0 else { return end == start && frames == 0 }
        let (expected, overflow) = frames.multipliedReportingOverflow(by: UInt64(frameBytes))
        guard !overflow, end - start >= 4 else { return false }
        let inflater = try Inflater(raw: true)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: inputChunk, alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { output.deallocate() }
        var pos = start, produced: UInt64 = 0
        var tail: [UInt8] = []  // the last 4 bytes read
        while pos < end {
            let want = Int(min(UInt64(inputChunk), end - pos))
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<want]), at: pos)
            guard n > 0 else { return false }  // the file ends before `end`
            var used = 0
            while used < n {
                let r: (consumed: Int, produced: Int)
                do throws(CaptureKitError) {
                    r = try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[used..<n]), into: output)
                } catch {
                    if error.status == .corrupt { return false }
                    throw error
                }
                used += r.consumed
                produced += UInt64(r.produced)
                if produced > expected || inflater.finished || (r.consumed == 0 && r.produced == 0) { return false }
            }
            tail = Array((tail + Array(input[max(0, n - 4)..<n])).suffix(4))
            pos += UInt64(n)
        }
        return produced == expected && tail == syncMarker
    }

    /// Reads 8-byte little-endian values.
    static func uint64LE(_ bytes: UnsafeRawBufferPointer, at i: Int) -> UInt64 {
        var v: UInt64 = 0
        for b in 0..<8 { v |= UInt64(bytes[i + b]) << (8 * UInt64(b)) }
        return v
    }
}

extension SampleFormat {
    /// The header's name of the format (messages).
    var cName: String {
        switch self {
        case .depthF32: return "CK_FORMAT_DEPTH_F32"
        case .depthF16: return "CK_FORMAT_DEPTH_F16"
        case .depthMM: return "CK_FORMAT_DEPTH_MM"
        case .u8: return "CK_FORMAT_U8"
        }
    }
}

extension ZStream {
    /// Swaps the bytes of every 16-bit value (big-endian hosts only: the format is little-endian).
    static func swapBytes16(_ b: UnsafeMutableRawBufferPointer) {
        var i = 0
        while i + 1 < b.count {
            let t = b[i]
            b[i] = b[i + 1]
            b[i + 1] = t
            i += 2
        }
    }
}
