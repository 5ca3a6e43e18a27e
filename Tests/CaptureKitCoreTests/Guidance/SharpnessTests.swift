import Testing
@testable import CaptureKitCore

@Suite struct SharpnessTests {
    /// Independent scalar reference in Double.
    func reference(_ img: [UInt8], _ w: Int, _ h: Int, _ stride: Int) -> Double {
        var values: [Double] = []
        for r in 1..<(h - 1) {
            for c in 1..<(w - 1) {
                let p = { (rr: Int, cc: Int) in Double(img[rr * stride + cc]) }
                values.append(p(r - 1, c) + p(r + 1, c) + p(r, c - 1) + p(r, c + 1) - 4 * p(r, c))
            }
        }
        let mean = values.reduce(0, +) / Double(values.count)
        return values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
    }

    func score(_ img: [UInt8], _ w: Int, _ h: Int, _ stride: Int) throws -> Float {
        try img.withUnsafeBytes { try Sharpness.score(luma: $0, width: w, height: h, stride: stride) }
    }

    @Test func matchesAnIndependentComputation() throws {
        var rng = SplitMix64(seed: 77)
        for trial in 0..<300 {
            let w = Int(rng.float(3...70)), h = Int(rng.float(3...40)), stride = w + Int(rng.float(0...9))
            let smooth = trial % 3 == 0
            let img = (0..<(stride * h)).map { i in smooth ? UInt8((i % stride) * 3 % 256) : UInt8(truncatingIfNeeded: rng.next()) }
            let want = reference(img, w, h, stride)
            let got = try score(img, w, h, stride)
            #expect(abs(Double(got) - want) <= 1e-5 * max(1, want), "trial \(trial): \(w)x\(h) stride \(stride): \(got) vs \(want)")
        }
    }

    @Test func knownValuesAndOrdering() throws {
        // Constant: 0. Checkerboard 0/255: the Laplacian is ±1020 with mean 0 on an even count.
        #expect(try score([UInt8](repeating: 77, count: 64 * 48), 64, 48, 64) == 0)
        for (w, h) in [(6, 6), (1920, 1440)] {
            let board = (0..<(w * h)).map { i in UInt8((i % w + i / w) % 2 == 0 ? 0 : 255) }
            #expect(try score(board, w, h, w) == 1_040_400, "\(w)x\(h)")
        }
        // A sharp edge scores above its blurred copy.
        let w = 80, h = 60
        let sharp = (0..<(w * h)).map { i in UInt8(i % w < 40 ? 20 : 220) }
        var blurred = sharp
        for r in 0..<h { for c in 2..<(w - 2) { blurred[r * w + c] = UInt8((2...2).reduce(0) { _, _ in (-2...2).reduce(0) { $0 + Int(sharp[r * w + c + $1]) } / 5 }) } }
        #expect(try score(sharp, w, h, w) > 2 * score(blurred, w, h, w))
    }

    @Test func rejectsBadSizes() {
        let img = [UInt8](repeating: 0, count: 100)
        for (w, h, s) in [(2, 10, 10), (10, 2, 10), (10, 10, 9), (10, 11, 10), (70000, 3, 70000), (3, 3, Int.max)] {
            #expect(throws: CaptureKitError.self, "\(w)x\(h) stride \(s)") { try score(img, w, h, s) }
        }
        #expect((try? score(img, 10, 10, 10)) == 0)
    }
}
