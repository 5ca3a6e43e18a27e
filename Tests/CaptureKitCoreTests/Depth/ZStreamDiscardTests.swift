import Foundation
import Testing
@testable import CaptureKitCore

/// ZStreamWriter.discardLastFrame (the dataset takes back a half-written multi-stream frame): the
/// stream goes on after a discard and decodes to exactly the frames kept, with and without the
/// side index.
@Suite struct ZStreamDiscardTests {
    static let (w, h) = (16, 12)

    static func frame(_ k: Int) -> [UInt8] { (0..<(w * h)).map { UInt8(truncatingIfNeeded: $0 * (k + 3) + k) } }

    static func append(_ writer: ZStreamWriter, _ bytes: [UInt8]) throws {
        let p = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { p.deallocate() }
        p.copyMemory(from: bytes, byteCount: bytes.count)
        try writer.append(UnsafeRawPointer(p), format: .u8)
    }

    static func read(_ reader: ZStreamReader, _ index: UInt64) throws -> [UInt8]? {
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: w * h, alignment: 8)
        defer { b.deallocate() }
        guard try reader.read(index, into: b, format: .u8) else { return nil }
        return Array(b)
    }

    @Test(arguments: [false, true]) func framesAfterADiscardDecode(index: Bool) throws {
        let path = NSTemporaryDirectory() + "ck-discard-\(getpid())-\(index).zlib"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: path + ".idx") }
        let writer = try ZStreamWriter(path: path, width: Self.w, height: Self.h, kind: .confidence, level: 1, index: index, overwrite: true)
        for k in 0..<3 { try Self.append(writer, Self.frame(k)) }
        try writer.discardLastFrame()                                  // frame 2 goes
        #expect(writer.frameCount == 2)
        var again = false
        do { try writer.discardLastFrame() } catch { again = true }    // one level only
        #expect(again)
        for k in 3..<5 { try Self.append(writer, Self.frame(k)) }
        try writer.close()
        let reader = try ZStreamReader(path: path, width: Self.w, height: Self.h, kind: .confidence)
        #expect(try reader.frameCount() == 4)
        for (i, k) in [0, 1, 3, 4].enumerated() {
            #expect(try Self.read(reader, UInt64(i)) == Self.frame(k), "frame \(i) should be the written frame \(k)")
        }
    }
}
