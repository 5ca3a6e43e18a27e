import Testing
@testable import CaptureKitCore

@Suite struct DepthConversionTests {
    /// The reference: Swift's own IEEE conversion, plus the documented invalid rule.
    func reference(_ x: Float) -> UInt16 {
        guard x > 0 else { return 0 }  // NaN, −0, negative
        let h = Float16(x)
        guard h.isFinite else { return 0 }  // +inf and overflow
        return h.bitPattern
    }

    func convert(_ xs: [Float]) -> [UInt16] {
        var out = [UInt16](repeating: 0xDEAD, count: xs.count)
        xs.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { d in DepthConversion.toFloat16(s, d) } }
        return out
    }

    @Test func everyFloat16RoundTripsThroughFloat32() {
        var all = [UInt16](0...UInt16.max)
        var f32 = [Float](repeating: -1, count: all.count)
        all.withUnsafeBufferPointer { s in f32.withUnsafeMutableBufferPointer { d in DepthConversion.toFloat32(s, d) } }
        for h in 0...Int(UInt16.max) {
            let value = Float16(bitPattern: UInt16(h))
            let want: Float = (value.sign == .plus && value.isFinite) ? Float(value) : 0
            #expect(f32[h].bitPattern == want.bitPattern, "float16 \(String(h, radix: 16)) -> \(f32[h]) want \(want)")
            #expect(DepthConversion.float32(fromFloat16: UInt16(h)).bitPattern == want.bitPattern)
        }
        // And back: every valid float16 survives float32 → float16 unchanged.
        let back = convert(f32)
        for h in 0..<0x7C00 { #expect(back[h] == UInt16(h), "float16 \(String(h, radix: 16))") }
        all.removeAll()
    }

    @Test func randomBitPatternsMatchTheReference() {
        var rng = SplitMix64(seed: 50)
        var xs = [Float]()
        xs.reserveCapacity(4_000_000)
        for _ in 0..<1_000_000 { xs.append(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))) }       // anything: NaN, inf, subnormal
        for _ in 0..<1_000_000 { xs.append(Float(bitPattern: 0x3300_0000 &+ UInt32(rng.next() % 0x1500_0000))) } // the float16 range
        for _ in 0..<1_000_000 { xs.append(rng.float(0...10)) }                                               // depths
        // Exact ties: the midpoint between two adjacent float16 values, both even and odd below.
        for _ in 0..<1_000_000 {
            let h = UInt16(rng.next() % 0x7BFF)
            let lo = Float(Float16(bitPattern: h)), hi = Float(Float16(bitPattern: h + 1))
            xs.append((lo + hi) / 2)
        }
        xs += [0, -0.0, .nan, -.nan, .infinity, -.infinity, 65504, 65519.99, 65520, 1e-8, 2.98e-8, 2.99e-8, 5.96e-8,
               Float.leastNonzeroMagnitude, Float.leastNormalMagnitude, 6.1035156e-05, 6.1e-05, -1]
        let got = convert(xs)
        var bad = 0
        for (i, x) in xs.enumerated() where got[i] != reference(x) {
            bad += 1
            if bad < 10 { Issue.record("x = \(x) (bits \(String(x.bitPattern, radix: 16))): got \(String(got[i], radix: 16)) want \(String(reference(x), radix: 16))") }
        }
        #expect(bad == 0)
        // The scalar path (used for tails) agrees too.
        for x in xs.prefix(100_000) { #expect(DepthConversion.float16Bits(x) == reference(x)) }
    }

    @Test func tailsAndOddLengths() {
        for n in 0..<20 {
            let xs = (0..<n).map { Float($0) * 0.37 + 0.1 }
            #expect(convert(xs) == xs.map(reference), "n = \(n)")
        }
    }

    @Test func millimetresRoundNotTruncate() {
        #expect(DepthConversion.millimetres(1.2344) == 1234)
        #expect(DepthConversion.millimetres(1.2346) == 1235)
        #expect(DepthConversion.millimetres(0.0005) == 1)      // half a millimetre rounds up
        #expect(DepthConversion.millimetres(65.535) == 65535)
        #expect(DepthConversion.millimetres(65.5356) == 0)     // out of range → invalid
        #expect(DepthConversion.millimetres(.nan) == 0 && DepthConversion.millimetres(-1) == 0 && DepthConversion.millimetres(.infinity) == 0)
        var rng = SplitMix64(seed: 51)
        for _ in 0..<100_000 {
            let x = rng.float(0...65)
            let mm = DepthConversion.millimetres(x)
            #expect(abs(Double(mm) - Double(x) * 1000) <= 0.5 + 1e-9)
        }
        let mm: [UInt16] = [0, 1, 999, 1000, 65535]
        var m = [Float](repeating: -1, count: mm.count)
        mm.withUnsafeBufferPointer { s in m.withUnsafeMutableBufferPointer { d in DepthConversion.fromMillimetres(s, d) } }
        #expect(m == [0, 0.001, 0.999, 1, 65.535])
    }
}
