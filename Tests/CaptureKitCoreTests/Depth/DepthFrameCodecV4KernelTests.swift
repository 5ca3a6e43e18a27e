import Testing
@testable import CaptureKitCore

/// Issue 24: the version-4 decoder's AVX2 twin (`cks_depth_unpack4_avx2`: escapes placed by a byte
/// shuffle) against the baseline Swift kernel, bit for bit — on random row
/// payloads no encoder would write (dense escapes, every predictor and layout mixed row by row,
/// palettes, widths 1...70) and on encoded generated frames through `decode`.
@Suite struct DepthFrameCodecV4KernelTests {
    /// Runs `unpack4` with `kernel` on a payload the caller's checks would accept.
    static func unpack(_ modes: [UInt8], nibbleRows: [UInt8], byteRows: [UInt8], escapes: [UInt8], palette: [UInt16],
                       width w: Int, height h: Int, kernel: SIMDKernel) -> [UInt16] {
        let gw = DepthFrameCodec.rowGroups(w), lanes = DepthFrameCodec.paddedRowLanes(w)
        var counts = [UInt32](repeating: 0, count: h)
        var nibbleAt = 0, byteAt = 0
        for y in 0..<h {
            if modes[y] >= 4 {
                counts[y] = UInt32((0..<(8 * gw)).filter { j in
                    let b = nibbleRows[nibbleAt + 4 * (j / 8) + (j % 8) % 4]
                    return (j % 8 < 4 ? b & 15 : b >> 4) == 15
                }.count)
                nibbleAt += 4 * gw
            } else {
                counts[y] = UInt32(byteRows[byteAt..<(byteAt + w)].filter { $0 == 255 }.count)
                byteAt += w
            }
        }
        let e = escapes.count / 2
        let table = palette.isEmpty ? [] : [0] + palette  // entry 0 (invalid), then K entries
        var out = [UInt16](repeating: 0xABCD, count: w * h)
        var rows = [UInt8](repeating: 0x77, count: 4 * lanes + gw * 8 + 16)
        let esc = escapes + [UInt8](repeating: 0xEE, count: 8)  // the 8 spare bytes the payload scratch has
        modes.withUnsafeBytes { mp in nibbleRows.withUnsafeBytes { np in byteRows.withUnsafeBytes { bp in
            esc.withUnsafeBytes { ep in counts.withUnsafeBufferPointer { cp in table.withUnsafeBufferPointer { tp in
                rows.withUnsafeMutableBytes { rp in out.withUnsafeMutableBufferPointer { op in
                    DepthFrameCodec.unpack4(modes: mp.baseAddress!, nibbleRows: np.baseAddress ?? mp.baseAddress!,
                                            byteRows: bp.baseAddress ?? mp.baseAddress!, escapes: ep.baseAddress!, escapeCount: e,
                                            rowEscapes: cp.baseAddress!, palette: palette.isEmpty ? nil : tp.baseAddress,
                                            paletteCount: palette.count, width: w, height: h, rows: rp.baseAddress!,
                                            into: op.baseAddress!, kernel: kernel)
                } }
            } } }
        } } }
        return out
    }

    @Test(.enabled(if: SIMDDispatch.avx2Supported, "the CPU has no AVX2"))
    func avx2UnpackMatchesTheBaselineOnRandomPayloads() {
        var rng = SplitMix64(seed: 2424)
        var nibbleRows = 0, byteRows = 0, escaped = 0, paletted = 0
        for i in 0..<3000 {
            let w = 1 + Int(rng.next() % 70), h = 1 + Int(rng.next() % 12)
            let gw = DepthFrameCodec.rowGroups(w)
            let density = [2, 4, 16, 1000][i % 4]  // one escape per `density` pixels (about)
            var modes = [UInt8](), nib = [UInt8](), bytes = [UInt8](), count = 0
            for _ in 0..<h {
                let nibble = rng.next() % 2 == 0
                modes.append(UInt8(rng.next() % 3) | (nibble ? 4 : 0))
                if nibble {
                    nibbleRows += 1
                    var row = [UInt8](repeating: 0, count: 4 * gw)
                    for j in 0..<w {
                        let v: UInt8 = rng.next() % UInt64(density) == 0 ? 15 : UInt8(rng.next() % 15)
                        if v == 15 { count += 1 }
                        let g = j / 8, k = j % 8
                        row[4 * g + k % 4] |= k < 4 ? v : v << 4
                    }
                    nib += row
                } else {
                    byteRows += 1
                    for _ in 0..<w {
                        let v: UInt8 = rng.next() % UInt64(density) == 0 ? 255 : UInt8(rng.next() % 255)
                        if v == 255 { count += 1 }
                        bytes.append(v)
                    }
                }
            }
            escaped += count
            let escapes = (0..<(2 * count)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let palette: [UInt16] = i % 3 == 0 ? [] : (0..<(1 + Int(rng.next() % 300))).map { _ in UInt16(truncatingIfNeeded: rng.next()) }
            if !palette.isEmpty { paletted += 1 }
            let base = Self.unpack(modes, nibbleRows: nib, byteRows: bytes, escapes: escapes, palette: palette, width: w, height: h, kernel: .baseline)
            let avx2 = Self.unpack(modes, nibbleRows: nib, byteRows: bytes, escapes: escapes, palette: palette, width: w, height: h, kernel: .avx2)
            #expect(base == avx2, "payload \(i): \(w)x\(h), density \(density), palette \(palette.count)")
            if base != avx2 { break }
        }
        #expect(nibbleRows > 5000 && byteRows > 5000 && escaped > 50_000 && paletted > 1500)
    }

    @Test(.enabled(if: SIMDDispatch.avx2Supported, "the CPU has no AVX2"))
    func avx2DecodeMatchesTheBaselineOnEncodedFrames() throws {
        var rng = SplitMix64(seed: 2425)
        let avx2 = try DepthFrameCodec(), baseline = try DepthFrameCodec()
        baseline.kernel = .baseline
        avx2.kernel = .avx2
        for i in 0..<600 {
            let w = 1 + Int(rng.next() % 90), h = 1 + Int(rng.next() % 30)
            let f = DepthFrameCodecV4Tests.generated(&rng, width: w, height: h, shape: i % 6)
            let kind: PixelKind = i % 2 == 0 ? .millimetres : .float16Metres
            let frame = try DepthFrameCodecV4Tests().encode(f, w, h, kind, level: i % 5 == 0 ? 3 : 1)
            var a = [UInt16](repeating: 1, count: f.count), b = [UInt16](repeating: 2, count: f.count)
            try frame.withUnsafeBytes { src in
                _ = try a.withUnsafeMutableBufferPointer { try avx2.decode(src, into: $0) }
                _ = try b.withUnsafeMutableBufferPointer { try baseline.decode(src, into: $0) }
            }
            #expect(a == f && b == f, "frame \(i): \(w)x\(h) shape \(i % 6)")
        }
    }
}
