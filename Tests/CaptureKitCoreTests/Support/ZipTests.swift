import Foundation
import Testing
@testable import CaptureKitCore

/// The streaming ZIP writer, read back by the Core reader (Python's zipfile checks the fixtures).
@Suite struct ZipTests {
    func write(_ path: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        var out = [UInt8](repeating: 0, count: n)
        var i = 0
        while i < n {
            var v = rng.next()
            for _ in 0..<8 where i < n { out[i] = UInt8(truncatingIfNeeded: v); v >>= 8; i += 1 }
        }
        return out
    }

    func text(_ n: Int) -> [UInt8] {
        var s = ""
        var i = 0
        while s.utf8.count < n { s += "frame \(i) pose 0.125 0.5 -1.25 ok\n"; i += 1 }
        return Array(s.utf8.prefix(n))
    }

    @Test func entriesReadBackWithTheirMethods() throws {
        let dir = try makeTempDirectory("zip")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files: [(String, [UInt8], ZipMethod, UInt16)] = [
            ("transforms.json", text(10_000), .automatic, 8),
            ("images/000000.png", randomBytes(5_000, seed: 1), .automatic, 0),   // incompressible → stored
            ("depth/000000.png", text(3_000), .store, 0),                         // forced
            ("empty.txt", [], .automatic, 0),
            ("big.bin", text(3 << 20), .deflate, 8),                              // several 1 MiB chunks
            ("noise.bin", randomBytes(2_500_000, seed: 2), .deflate, 8),          // deflate even if larger
            ("données/é 😀.txt", text(100), .automatic, 8),
        ]
        for (name, bytes, _, _) in files { try write(dir + "/" + name.replacingOccurrences(of: "/", with: "_"), bytes) }
        let path = dir + "/out.zip"
        let zip = try ZipWriter(path: path)
        for (name, _, method, _) in files.dropLast() {
            try zip.addFile(name, from: dir + "/" + name.replacingOccurrences(of: "/", with: "_"), method: method)
        }
        try zip.add(files.last!.0, bytes: files.last!.1)
        #expect(!FileManager.default.fileExists(atPath: path))  // only the temporary file until finish
        let size = try zip.finish()
        #expect(UInt64((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0) == size)
        #expect(!directoryListing(dir).contains { $0.contains(".tmp-") })

        let reader = try ZipReader(path: path)
        try reader.verify()
        #expect(reader.entries.map(\.name) == files.map(\.0))
        for (e, (name, bytes, _, method)) in Swift.zip(reader.entries, files) {
            #expect(e.method == method, "\(name)")
            #expect(e.flags & 0x800 != 0, "UTF-8 flag: \(name)")
            #expect((e.flags & 8 != 0) == (method == 8), "data descriptor only on deflated entries: \(name)")
            #expect(e.dosDate == 0x21 && e.dosTime == 0)
            #expect(try reader.read(name) == bytes, "\(name)")
        }
        #expect(reader.entries[0].compressedSize < 2_000)
        #expect(throws: CaptureKitError.self) { try reader.read("missing") }
    }

    @Test func namesAreCheckedAndTheWriterStaysUsable() throws {
        let dir = try makeTempDirectory("zip-names")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let zip = try ZipWriter(path: dir + "/a.zip")
        try zip.add("a.txt", bytes: [1, 2, 3])
        for bad in ["", "/abs", "../up", "a/../b", "a//b", "a/", "./a", "a\\b", "a\u{0}b", "a.txt", String(repeating: "x", count: 70_000)] {
            let e = try #require(throws: CaptureKitError.self, "\(bad.prefix(20))") { try zip.add(bad, bytes: [1]) }
            #expect(e.status == .invalidArgument)
        }
        let missing = try #require(throws: CaptureKitError.self) { try zip.addFile("b.txt", from: dir + "/nope") }
        #expect(missing.status == .notFound)
        try zip.add("b.txt", bytes: [4])
        try zip.finish()
        #expect(throws: CaptureKitError.self) { try zip.add("c.txt", bytes: [1]) }
        #expect(throws: CaptureKitError.self) { try zip.finish() }
        #expect(try ZipReader(path: dir + "/a.zip").entries.map(\.name) == ["a.txt", "b.txt"])
        // An existing archive is not replaced without the flag.
        let e = try #require(throws: CaptureKitError.self) { try ZipWriter(path: dir + "/a.zip") }
        #expect(e.status == .exists)
        let again = try ZipWriter(path: dir + "/a.zip", overwrite: true)
        try again.add("only.txt", bytes: [])
        try again.finish()
        #expect(try ZipReader(path: dir + "/a.zip").entries.map(\.name) == ["only.txt"])
        #expect(directoryListing(dir) == ["a.zip"])
    }

    @Test func cancelAndReleaseLeaveNothing() throws {
        let dir = try makeTempDirectory("zip-cancel")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let zip = try ZipWriter(path: dir + "/a.zip")
        try zip.add("a.txt", bytes: text(1000))
        #expect(directoryListing(dir).count == 1)
        zip.cancel()
        zip.cancel()
        #expect(directoryListing(dir).isEmpty)
        do {
            let other = try ZipWriter(path: dir + "/b.zip")
            try other.add("a.txt", bytes: [1])
        }
        #expect(directoryListing(dir).isEmpty)
    }

    @Test func dosTimestamps() throws {
        #expect(ZipWriter.dosDateTime(nil) == (0, 0x21))
        // 2023-06-15T10:30:43Z → time 10:30:42 (2-second resolution).
        let (t, d) = ZipWriter.dosDateTime(1_686_825_043)
        #expect(t == UInt16(10 << 11 | 30 << 5 | 21) && d == UInt16(43 << 9 | 6 << 5 | 15))
        #expect(ZipWriter.dosDateTime(0) == (0, 0x21))                     // before 1980: clamped
        #expect(ZipWriter.dosDateTime(Int64.max).1 == UInt16(127 << 9 | 12 << 5 | 31))
        let dir = try makeTempDirectory("zip-time")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let zip = try ZipWriter(path: dir + "/a.zip", unixTime: 1_686_825_043)
        try zip.add("a", bytes: [1])
        try zip.finish()
        let e = try ZipReader(path: dir + "/a.zip").entries[0]
        #expect(e.dosTime == t && e.dosDate == d)
    }

    /// The ZIP64 records, exercised with lowered limits (a real > 4 GiB archive is in the slow test).
    @Test func zip64RecordsWithLoweredLimits() throws {
        let dir = try makeTempDirectory("zip64")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (sizeLimit, countLimit) in [(UInt64(1000), 3), (UInt64(20_000), 100_000), (UInt64(0xFFFF_FFFF), 2)] {
            ZipWriter.debugLimits(size: sizeLimit, count: countLimit)
            defer { ZipWriter.debugLimits(size: nil, count: nil) }
            let path = dir + "/z\(sizeLimit)-\(countLimit).zip"
            let zip = try ZipWriter(path: path)
            var expected: [(String, [UInt8])] = []
            for i in 0..<6 {
                let bytes = i % 2 == 0 ? text(5_000 + i) : randomBytes(1_500 + i, seed: UInt64(i))
                expected.append(("f\(i).bin", bytes))
                try zip.add("f\(i).bin", bytes: bytes, method: i == 5 ? .store : .automatic)
            }
            try zip.finish()
            let reader = try ZipReader(path: path)
            try reader.verify()
            #expect(reader.entries.count == 6)
            for (name, bytes) in expected { #expect(try reader.read(name) == bytes) }
            let raw = try FileIO.readAll(path)
            let hasZip64End = raw.withUnsafeBytes { b in
                (0..<(b.count - 4)).contains { b[$0] == 0x50 && b[$0 + 1] == 0x4B && b[$0 + 2] == 0x06 && b[$0 + 3] == 0x06 }
            }
            #expect(hasZip64End == (countLimit <= 6 || sizeLimit < UInt64(raw.count)), "\(sizeLimit) \(countLimit)")
        }
    }

    /// Cut or damaged archives fail cleanly (never a crash, never a wrong entry accepted).
    @Test func damagedArchivesAreCorrupt() throws {
        let dir = try makeTempDirectory("zip-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/a.zip"
        let zip = try ZipWriter(path: path)
        try zip.add("a.txt", bytes: text(3000))
        try zip.add("b.bin", bytes: randomBytes(300, seed: 9))
        try zip.add("c.txt", bytes: text(10), method: .deflate)
        try zip.finish()
        let good = try FileIO.readAll(path)
        let bad = dir + "/bad.zip"
        func check(_ bytes: [UInt8], _ label: String) throws {
            try? FileManager.default.removeItem(atPath: bad)
            try write(bad, bytes)
            do {
                let r = try ZipReader(path: bad)
                try r.verify()
                Issue.record("\(label): accepted")
            } catch {
                let e = error
                #expect(e.status == .corrupt, "\(label): \(e)")
            }
        }
        for n in 0..<good.count { try check(Array(good[0..<n]), "truncated to \(n)") }
        var rng = SplitMix64(seed: 5)
        var flipped = 0
        for i in 0..<good.count {
            var bytes = good
            bytes[i] ^= UInt8(1 << (rng.next() % 8))
            // Some bytes are not covered by any check (times, attributes, "version made by"): skip
            // those whose flip still verifies, but every flip must be a clean result.
            try? FileManager.default.removeItem(atPath: bad)
            try write(bad, bytes)
            do {
                let r = try ZipReader(path: bad)
                try r.verify()
                for e in r.entries { _ = try r.read(e.name) }
            } catch {
                let e = error
                #expect(e.status == .corrupt || e.status == .notFound || e.status == .unsupported, "byte \(i): \(e)")
                flipped += 1
            }
        }
        #expect(flipped > good.count / 2, "most single-bit flips are detected: \(flipped) of \(good.count)")
    }

    /// A failure at any file operation leaves no archive and no temporary file.
    @Test func faultInjectionLeavesNoHalfWrittenArchive() throws {
        let dir = try makeTempDirectory("zip-fault")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try write(dir + "/src.txt", text(2_500_000))
        try write(dir + "/noise.bin", randomBytes(10_000, seed: 3))
        let path = dir + "/out.zip"
        var failures = 0
        for n in 1...500 {
            FileIO.failCall(after: n)
            defer { FileIO.stopFailing() }
            do {
                let zip = try ZipWriter(path: path)
                try zip.addFile("src.txt", from: dir + "/src.txt")
                try zip.addFile("noise.bin", from: dir + "/noise.bin")  // deflated, rewound, stored
                try zip.add("mem.txt", bytes: text(100))
                try zip.finish()
                FileIO.stopFailing()
                break
            } catch {
                failures += 1
                #expect(error.status == .io, "n=\(n): \(error)")
                // Nothing is left, except when only the directory fsync after the rename failed:
                // then the complete archive is in place.
                if directoryListing(dir).contains("out.zip") {
                    #expect(error.message.hasPrefix("cannot fsync directory"), "n=\(n): \(error)")
                    try ZipReader(path: path).verify()
                    try FileIO.remove(path)
                }
                #expect(directoryListing(dir) == ["noise.bin", "src.txt"], "n=\(n): \(error)")
            }
        }
        #expect(failures >= 10, "\(failures)")
        let r = try ZipReader(path: path)
        try r.verify()
        #expect(r.entries.map(\.method) == [8, 0, 8])
        #expect(directoryListing(dir) == ["noise.bin", "out.zip", "src.txt"])
    }

    @Test func suggestedMethods() {
        #expect(ZipMethod.suggested(forName: "images/0001.PNG") == .store)
        #expect(ZipMethod.suggested(forName: "scan.depth.zlib") == .store)
        #expect(ZipMethod.suggested(forName: "transforms.json") == .automatic)
        #expect(ZipMethod.suggested(forName: "README") == .automatic)
    }

    /// A real archive over 4 GiB (a sparse 4.1 GiB file deflated): set CK_SLOW_TESTS=1 to run it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CK_SLOW_TESTS"] == "1"))
    func realZip64Archive() throws {
        let dir = try makeTempDirectory("zip-huge")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let big = dir + "/zeros.bin"
        let size: UInt64 = (1 << 32) + 123_456
        let f = try File.open(big, .createNew)
        try f.truncate(to: size)
        try f.close()
        let path = dir + "/huge.zip"
        let zip = try ZipWriter(path: path, level: 1)
        try zip.add("first.txt", bytes: text(1000))
        try zip.addFile("zeros.bin", from: big)
        try zip.add("last.txt", bytes: text(2000))
        try zip.finish()
        let r = try ZipReader(path: path)
        #expect(r.entries[1].uncompressedSize == size)
        try r.verify()
        #expect(try r.read("last.txt") == text(2000))
        if let out = ProcessInfo.processInfo.environment["CK_ZIP64_OUT"] { try? FileManager.default.copyItem(atPath: path, toPath: out) }
    }
}
