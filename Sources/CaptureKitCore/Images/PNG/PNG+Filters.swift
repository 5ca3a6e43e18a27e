// PNG row filters (docs/FORMATS.md §6): the five filters, SIMD encode and decode, and the per-row choice.

import CZlib
import Glibc

extension PNG {
    static var isLittleEndian: Bool {
        #if _endian(little)
        true
        #else
        false
        #endif
    }

    /// Copies `count` bytes swapping each byte pair (native ↔ big-endian 16-bit samples); `src`
    /// may equal `dst` (not otherwise overlap).
    @inline(__always)
    static func swapPairs(from src: UnsafePointer<UInt8>, to dst: UnsafeMutablePointer<UInt8>, count: Int) {
        var i = 0
        while i + 16 <= count {
            let w = UnsafeRawPointer(src + i).loadUnaligned(as: SIMD8<UInt16>.self)
            UnsafeMutableRawPointer(dst + i).storeBytes(of: (w &<< 8) | (w &>> 8), as: SIMD8<UInt16>.self)
            i += 16
        }
        while i + 1 < count {
            let first = src[i]  // read both before writing: src may equal dst
            dst[i] = src[i + 1]
            dst[i + 1] = first
            i += 2
        }
    }

    /// Swaps each byte pair in place.
    @inline(__always)
    static func swapPairs(in p: UnsafeMutablePointer<UInt8>, count: Int) {
        swapPairs(from: p, to: p, count: count)
    }

    typealias Bytes16 = SIMD16<UInt8>

    @inline(__always)
    static func load16(_ p: UnsafePointer<UInt8>) -> Bytes16 { UnsafeRawPointer(p).loadUnaligned(as: Bytes16.self) }

    @inline(__always)
    static func store16(_ v: Bytes16, _ p: UnsafeMutablePointer<UInt8>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: Bytes16.self) }

    /// ⌊(a + b) / 2⌋ without overflow.
    @inline(__always)
    static func average(_ a: Bytes16, _ b: Bytes16) -> Bytes16 { (a & b) &+ ((a ^ b) &>> 1) }

    // Codegen note: compare SIMD values with vectors (`x .< y`), not scalar literals (`x .< 0`
    // compiles to a per-lane loop through memory).

    /// |x − y| per byte.
    @inline(__always)
    static func absoluteDifference(_ x: Bytes16, _ y: Bytes16) -> Bytes16 { (x &- y).replacing(with: y &- x, where: x .< y) }

    /// The Paeth predictor of the PNG specification, 16 lanes, in bytes (a left, b up, c up-left).
    /// With p = a + b − c: |p − a| = |b − c|, |p − b| = |a − c|, and |p − c| = |(b − c) + (a − c)|,
    /// which is ||b − c| − |a − c|| when the two differences have opposite signs, and otherwise at
    /// least both of them (then only "≥ both" matters to the choice, so 255 stands for it).
    @inline(__always)
    static func paeth(_ a: Bytes16, _ b: Bytes16, _ c: Bytes16) -> Bytes16 {
        let pa = absoluteDifference(b, c), pb = absoluteDifference(a, c)
        let opposite = (b .>= c) .^ (a .>= c)
        let pc = Bytes16(repeating: 255).replacing(with: absoluteDifference(pa, pb), where: opposite)
        return c.replacing(with: b, where: pb .<= pc).replacing(with: a, where: (pa .<= pb) .& (pa .<= pc))
    }

    /// The Paeth predictor, one byte (branch-free selects).
    @inline(__always)
    static func paethPredictor(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let ia = Int(a), ib = Int(b), ic = Int(c)
        let pa = abs(ib - ic), pb = abs(ia - ic), pc = abs(ia + ib - 2 * ic)
        let bc = pb <= pc ? b : c
        return pa <= pb && pa <= pc ? a : bc
    }

    /// The predictor of filter `f` from the left (a), up (b) and up-left (c) bytes.
    @inline(__always)
    static func predictor(_ f: PNGFilter, _ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        switch f {
        case .none: 0
        case .sub: a
        case .up: b
        case .average: UInt8(truncatingIfNeeded: (UInt16(a) &+ UInt16(b)) >> 1)
        case .paeth: paethPredictor(a, b, c)
        }
    }

    /// `out[i] = cur[i] − predictor(i)` over a row, 16 bytes at a time.
    @inline(__always)
    static func filterLoop(_ f: PNGFilter, _ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                           _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int,
                           _ predict: (Bytes16, Bytes16, Bytes16) -> Bytes16) {
        var i = min(bpp, n)
        for k in 0..<i { out[k] = cur[k] &- predictor(f, 0, prev[k], 0) }
        while i + 16 <= n {
            let p = predict(load16(cur + i - bpp), load16(prev + i), load16(prev + i - bpp))
            store16(load16(cur + i) &- p, out + i)
            i += 16
        }
        while i < n {
            out[i] = cur[i] &- predictor(f, cur[i - bpp], prev[i], prev[i - bpp])
            i += 1
        }
    }

    /// Filters one row of `n` bytes (`prev`: the row above, all zeros for the first row).
    static func applyFilter(_ f: PNGFilter, _ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                            _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int) {
        switch f {
        case .none: out.update(from: cur, count: n)
        case .sub: filterLoop(f, cur, prev, out, n, bpp) { a, _, _ in a }
        case .up: filterLoop(f, cur, prev, out, n, bpp) { _, b, _ in b }
        case .average: filterLoop(f, cur, prev, out, n, bpp) { a, b, _ in average(a, b) }
        case .paeth: filterLoop(f, cur, prev, out, n, bpp) { a, b, c in paeth(a, b, c) }
        }
    }

    /// Undoes a filter: `out[i] = line[i] + predictor(out)`. `prev` and `out` are rows of the
    /// output image (`prev` all zeros for the first row); `line` is the filtered row. Sub, Average
    /// and Paeth depend on the byte just produced, so only Up runs 16 bytes at a time.
    static func undoFilter(_ f: PNGFilter, _ line: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                           _ out: UnsafeMutablePointer<UInt8>, _ n: Int, _ bpp: Int) {
        let first = min(bpp, n)
        switch f {
        case .none:
            out.update(from: line, count: n)
        case .up:
            var i = 0
            while i + 16 <= n { store16(load16(line + i) &+ load16(prev + i), out + i); i += 16 }
            while i < n { out[i] = line[i] &+ prev[i]; i += 1 }
        case .sub:
            for i in 0..<first { out[i] = line[i] }
            for i in first..<n { out[i] = line[i] &+ out[i - bpp] }
        case .average:
            for i in 0..<first { out[i] = line[i] &+ (prev[i] >> 1) }
            for i in first..<n { out[i] = line[i] &+ UInt8(truncatingIfNeeded: (UInt16(out[i - bpp]) &+ UInt16(prev[i])) >> 1) }
        case .paeth:
            for i in 0..<first { out[i] = line[i] &+ prev[i] }
            for i in first..<n { out[i] = line[i] &+ paethPredictor(out[i - bpp], prev[i], prev[i - bpp]) }
        }
    }

    /// |r| of residual bytes read as signed (0...128), 16 lanes.
    @inline(__always)
    static func magnitude(_ r: Bytes16) -> Bytes16 {
        let n = 0 &- r
        return r.replacing(with: n, where: n .< r)
    }

    /// |r| of one residual byte read as signed.
    @inline(__always)
    static func magnitude(_ r: UInt8) -> Int { Int(min(r, 0 &- r)) }

    /// The filter whose residuals have the smallest sum of |signed byte| for this row (ties: the
    /// lower filter type). One pass computes all five sums, 16 bytes at a time.
    static func bestFilter(_ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>, _ n: Int, _ bpp: Int) -> PNGFilter {
        var sums = SIMD8<Int>()  // lanes 0...4: None, Sub, Up, Average, Paeth
        var i = min(bpp, n)
        for k in 0..<i {
            for f in PNGFilter.allCases { sums[Int(f.rawValue)] &+= magnitude(cur[k] &- predictor(f, 0, prev[k], 0)) }
        }
        // Magnitudes (≤ 128) are summed in pairs into 8 × UInt16 lanes (≤ 256 a block), which stay
        // below 65536 for 255 blocks; then they go to the totals.
        var sNone = SIMD8<UInt16>(), sSub = SIMD8<UInt16>(), sUp = SIMD8<UInt16>(), sAvg = SIMD8<UInt16>(), sPaeth = SIMD8<UInt16>()
        var blocks = 0
        @inline(__always) func pairs(_ m: Bytes16) -> SIMD8<UInt16> {
            let w = unsafeBitCast(m, to: SIMD8<UInt16>.self)
            return (w & SIMD8(repeating: 0xFF)) &+ (w &>> 8)
        }
        func total(_ v: SIMD8<UInt16>) -> Int {  // once per 255 blocks: scalar is fine
            var t = 0
            for k in 0..<8 { t &+= Int(v[k]) }
            return t
        }
        func drain() {
            sums[0] &+= total(sNone)
            sums[1] &+= total(sSub)
            sums[2] &+= total(sUp)
            sums[3] &+= total(sAvg)
            sums[4] &+= total(sPaeth)
            sNone = .zero; sSub = .zero; sUp = .zero; sAvg = .zero; sPaeth = .zero
            blocks = 0
        }
        while i + 16 <= n {
            let x = load16(cur + i), a = load16(cur + i - bpp), b = load16(prev + i), c = load16(prev + i - bpp)
            sNone &+= pairs(magnitude(x))
            sSub &+= pairs(magnitude(x &- a))
            sUp &+= pairs(magnitude(x &- b))
            sAvg &+= pairs(magnitude(x &- average(a, b)))
            sPaeth &+= pairs(magnitude(x &- paeth(a, b, c)))
            i += 16
            blocks += 1
            if blocks == 255 { drain() }
        }
        drain()
        while i < n {
            let a = cur[i - bpp], b = prev[i], c = prev[i - bpp]
            for f in PNGFilter.allCases { sums[Int(f.rawValue)] &+= magnitude(cur[i] &- predictor(f, a, b, c)) }
            i += 1
        }
        var best = PNGFilter.none, cost = sums[0]
        for f in PNGFilter.allCases where sums[Int(f.rawValue)] < cost {
            best = f
            cost = sums[Int(f.rawValue)]
        }
        return best
    }
}
