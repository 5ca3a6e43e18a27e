import Foundation
import Testing
@testable import CaptureKitCore

/// Replays every committed fuzz input through the same target bodies the libFuzzer binary runs
/// (Tests/fuzz/corpus/<target>/ and Tests/fuzz/crashers/<target>/), without the fuzzer build: a
/// regression of any bug the fuzzers found fails here (a trap kills the test process, a broken
/// invariant is a failed expectation). See RELIABILITY.md.
@Suite struct CorpusReplayTests {
    static let fuzzDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz")

    static func files(_ dir: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func replay(target: String) throws {
        let body = try #require(FuzzTargets.body(target))
        let corpus = Self.fuzzDir.appendingPathComponent("corpus").appendingPathComponent(target)
        var isDir: ObjCBool = false
        // A missing corpus is a failure, never a silent skip.
        #expect(FileManager.default.fileExists(atPath: corpus.path, isDirectory: &isDir) && isDir.boolValue,
                "missing corpus folder \(corpus.path)")
        let inputs = Self.files(corpus)
        #expect(!inputs.isEmpty, "empty corpus folder \(corpus.path)")
        let crashers = Self.files(Self.fuzzDir.appendingPathComponent("crashers").appendingPathComponent(target))
        for file in inputs + crashers {
            let data = try [UInt8](Data(contentsOf: file))
            do throws(FuzzFailure) {
                try body(data)
            } catch {
                Issue.record("\(target): \(file.lastPathComponent): \(error.message)")
            }
        }
    }

    @Test func everyCorpusFolderIsATarget() {
        let names = Set(FuzzTargets.all.map(\.name))
        for dir in ["corpus", "crashers"] {
            for f in Self.files(Self.fuzzDir.appendingPathComponent(dir)) {
                #expect(names.contains(f.lastPathComponent), "Tests/fuzz/\(dir)/\(f.lastPathComponent) names no fuzz target")
            }
        }
    }
}
