import CCaptureKitAPI
import Glibc
@testable import CaptureKitCore

/// The fuzz targets. Each body takes any bytes, must return normally for every input (a status
/// or a thrown `CaptureKitError` is fine: that is the library refusing hostile input), and throws
/// `FuzzFailure` only when an invariant of the library breaks (round trip differs, a destination
/// written on error, two read paths disagree). Traps and sanitizer reports are crashes of the
/// process, caught by libFuzzer (or by `swift test` dying).
///
/// Sizes that come from the caller (frame dimensions of a stream, decode buffer capacities) are
/// kept small here; sizes read from the data are the data's business, but an allocation the data
/// can demand (width × height from a header) is skipped above `maxPixels` so the fuzzer stays fast.
public enum FuzzTargets {
    static let maxPixels = 1 << 20

    public typealias Body = @Sendable ([UInt8]) throws(FuzzFailure) -> Void

    /// Every target by name (the corpus folder names under Tests/fuzz/corpus/).
    public static let all: [(name: String, body: Body)] = [
        ("png_decode", pngDecode),
        ("depth_frame_decode", depthFrameDecode),
        ("ckdepth_read", ckdepthRead),
        ("zstream_read", zstreamRead),
        ("zstream_read_idx", zstreamReadIndexed),
        ("json_bbox", jsonBoundingBox),
        ("json_transforms", jsonTransforms),
        ("json_camera_info", jsonCameraInfo),
        ("json_metadata", jsonMetadata),
        ("dataset_journal", datasetJournal),
        ("dataset_reopen", datasetReopen),
        ("scan_read", scanRead),
        ("capi_sequence", capiSequence),
        ("roundtrip_depth_frame", roundTripDepthFrame),
        ("roundtrip_png", roundTripPNG),
        ("roundtrip_zstream", roundTripZStream),
    ]

    public static func body(_ name: String) -> Body? { all.first { $0.name == name }?.body }

    // MARK: PNG

    static func pngDecode(_ data: [UInt8]) throws(FuzzFailure) {
        let info: PNGInfo
        do { info = try data.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try PNG.info(b) } }.get() } catch { return }
        guard info.byteCount <= 4 * maxPixels else { return }
        var dst = [UInt8](repeating: 0xA5, count: info.byteCount)
        let decoded = data.withUnsafeBytes { src in
            dst.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try PNG.decode(src, into: d) } }
        }
        if case .success(let i) = decoded { try require(i == info, "decode info \(i) != info \(info)") }
        // The C entry points on the same bytes agree with the core.
        var w: UInt32 = 0, h: UInt32 = 0, f: Int32 = 0
        let s = data.withUnsafeBytes { ck_png_info(&w, &h, &f, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count) }
        try require(s == CK_OK && Int(w) == info.width && Int(h) == info.height && f == info.format.rawValue, "ck_png_info disagrees")
        var again = [UInt8](repeating: 0, count: info.byteCount)
        let s2 = data.withUnsafeBytes { src in again.withUnsafeMutableBytes { ck_png_decode($0.baseAddress, $0.count, nil, src.baseAddress, src.count) } }
        switch decoded {
        case .success: try require(s2 == CK_OK && again == dst, "ck_png_decode disagrees with PNG.decode")
        case .failure(let e): try require(s2 == e.status.rawValue, "ck_png_decode status \(s2) != \(e.status.rawValue)")
        }
        if info.byteCount > 0 {  // one byte short is always refused
            var needed = 0
            let s3 = data.withUnsafeBytes { src in again.withUnsafeMutableBytes { ck_png_decode($0.baseAddress, $0.count - 1, &needed, src.baseAddress, src.count) } }
            try require(s3 == CK_E_BUFFER_TOO_SMALL, "a short dst gave \(s3)")
            try require(needed == info.byteCount, "a short dst reported \(needed) bytes needed, not \(info.byteCount)")
        }
    }

    static func roundTripPNG(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let format = ImageFormat.allCases[Int(input.u8()) % ImageFormat.allCases.count]
        let width = 1 + Int(input.u8() % 40), height = 1 + Int(input.u8() % 24)
        let pad = Int(input.u8() % 5)
        let level = Int32(input.u8() % 10)
        let rowBytes = width * format.bytesPerPixel, stride = rowBytes + pad
        var pixels = input.rest()
        let need = (height - 1) * stride + rowBytes
        if pixels.count < need { pixels += [UInt8](repeating: 0, count: need - pixels.count) }
        let png: [UInt8]
        do {
            png = try pixels.withUnsafeBytes { p in
                Result { () throws(CaptureKitError) in try PNG.encode(p, width: width, height: height, stride: stride, format: format, level: level) }
            }.get()
        } catch { throw FuzzFailure("encoding valid pixels failed: \(error)") }
        var back = [UInt8](repeating: 0, count: rowBytes * height)
        let r = png.withUnsafeBytes { src in back.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try PNG.decode(src, into: d) } } }
        guard case .success(let info) = r else { throw FuzzFailure("decoding our own PNG failed: \(r)") }
        try require(info == PNGInfo(width: width, height: height, format: format), "info differs")
        for y in 0..<height {
            try require(back[(y * rowBytes)..<((y + 1) * rowBytes)] == pixels[(y * stride)..<(y * stride + rowBytes)], "row \(y) differs")
        }
    }

    // MARK: Native depth frames and .ckdepth files

    static func depthFrameDecode(_ data: [UInt8]) throws(FuzzFailure) {
        let header: DepthFrameCodec.Header
        do { header = try data.withUnsafeBytes { b in Result { () throws(CaptureKitError) in try DepthFrameCodec.header(b) } }.get() } catch { return }
        guard header.pixels <= maxPixels, let codec = try? DepthFrameCodec() else { return }
        let n = header.pixels
        if header.kind == .bytes {
            var dst = [UInt8](repeating: 0xA5, count: n)
            let r = data.withUnsafeBytes { src in dst.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try codec.decode(bytes: src, into: d) } } }
            if case .failure = r { try require(dst.allSatisfy { $0 == 0xA5 }, "8-bit dst written on error") }
        } else {
            var dst = [UInt16](repeating: 0xA5A5, count: n)
            let r = data.withUnsafeBytes { src in dst.withUnsafeMutableBufferPointer { d in Result { () throws(CaptureKitError) in try codec.decode(src, into: d) } } }
            if case .failure = r { try require(dst.allSatisfy { $0 == 0xA5A5 }, "16-bit dst written on error") }
            // Through C, as float32 (the conversion path): same outcome, dst untouched on error.
            var c: OpaquePointer?
            guard ck_depth_codec_create(&c, 0) == CK_OK else { return }
            defer { ck_depth_codec_free(c) }
            var f = [Float](repeating: -1, count: n)
            let s = data.withUnsafeBytes { src in
                f.withUnsafeMutableBytes { ck_depth_decode($0.baseAddress, $0.count, nil, c, src.baseAddress, src.count, Int32(CK_FORMAT_DEPTH_F32.rawValue)) }
            }
            switch r {
            case .success: try require(s == CK_OK, "ck_depth_decode failed (\(s)) where the core succeeded")
            case .failure: try require(s != CK_OK && f.allSatisfy { $0 == -1 }, "ck_depth_decode: status \(s), dst written on error")
            }
        }
    }

    static func roundTripDepthFrame(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let kind = PixelKind.allCases[Int(input.u8()) % 3]
        let width = 1 + Int(input.u8() % 64), height = 1 + Int(input.u8() % 48)
        let level = Int32(1 + input.u8() % 5)
        let n = width * height
        var raw = input.rest()
        let need = n * kind.bytesPerPixel
        if raw.count < need { raw += [UInt8](repeating: 0, count: need - raw.count) }
        guard let codec = try? DepthFrameCodec(level: level) else { return }
        var out = [UInt8](repeating: 0, count: DepthFrameCodec.bound(pixels: n, kind: kind))
        if kind == .bytes {
            let src = Array(raw[0..<n])
            let size: Int
            do {
                size = try src.withUnsafeBytes { s in out.withUnsafeMutableBytes { o in
                    Result { () throws(CaptureKitError) in try codec.encode(bytes: s, width: width, height: height, into: o) } } }.get()
            } catch { throw FuzzFailure("encode failed: \(error)") }
            var back = [UInt8](repeating: 0, count: n)
            let r = out.withUnsafeBytes { e in back.withUnsafeMutableBytes { b in
                Result { () throws(CaptureKitError) in try codec.decode(bytes: UnsafeRawBufferPointer(rebasing: e[0..<size]), into: b) } } }
            guard case .success = r else { throw FuzzFailure("decode of our own frame failed: \(r)") }
            try require(back == src, "8-bit round trip differs")
        } else {
            let src = (0..<n).map { UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8 }
            let size: Int
            do {
                size = try src.withUnsafeBufferPointer { s in out.withUnsafeMutableBytes { o in
                    Result { () throws(CaptureKitError) in try codec.encode(s, width: width, height: height, kind: kind, into: o) } } }.get()
            } catch { throw FuzzFailure("encode failed: \(error)") }
            try require(size <= out.count, "size above the bound")
            var back = [UInt16](repeating: 0, count: n)
            let r = out.withUnsafeBytes { e in back.withUnsafeMutableBufferPointer { b in
                Result { () throws(CaptureKitError) in try codec.decode(UnsafeRawBufferPointer(rebasing: e[0..<size]), into: b) } } }
            guard case .success(let h) = r else { throw FuzzFailure("decode of our own frame failed: \(r)") }
            try require(h.width == width && h.height == height && h.kind == kind, "header differs")
            try require(back == src, "16-bit round trip differs")
            // One byte too small to encode into is an error, never an overflow.
            if size > DepthFrameCodec.headerSize {
                var tight = [UInt8](repeating: 0, count: size - 1)
                let t = src.withUnsafeBufferPointer { s in tight.withUnsafeMutableBytes { o in
                    Result { () throws(CaptureKitError) in try codec.encode(s, width: width, height: height, kind: kind, into: o) } } }
                if case .success = t { throw FuzzFailure("a frame fit in one byte less than its size") }
            }
        }
    }

    static func ckdepthRead(_ data: [UInt8]) throws(FuzzFailure) {
        let path = FuzzScratch.folder("ckdepth_read") + "/f.ckdepth"
        FuzzScratch.write(path, data)
        guard let r = try? DepthFileReader(path: path) else { return }
        let info = r.info
        let n = info.width * info.height
        guard n <= maxPixels else { return }
        let formats: [SampleFormat] = info.kind == .bytes ? [.u8] : [.depthF16, .depthF32, .depthMM]
        for i in 0..<min(info.frameCount, 8) {
            for format in formats {
                var dst = [UInt8](repeating: 0xA5, count: n * format.bytesPerSample)
                let t = dst.withUnsafeMutableBytes { d in
                    Result { () throws(CaptureKitError) -> Double? in
                        guard let base = d.baseAddress else { return nil }
                        return try r.read(i, into: base, format: format)
                    }
                }
                if case .failure = t { try require(dst.allSatisfy { $0 == 0xA5 }, "frame \(i): dst written on error") }
            }
        }
        // The C reader agrees.
        var c: OpaquePointer?
        guard ck_depth_reader_open(&c, path) == CK_OK else { throw FuzzFailure("ck_depth_reader_open refused what DepthFileReader opened") }
        defer { ck_depth_reader_close(c) }
        var ci = ck_depth_info()
        try require(ck_depth_reader_info(&ci, c) == CK_OK && ci.frame_count == UInt64(info.frameCount), "ck_depth_reader_info disagrees")
        var dst = [UInt8](repeating: 0, count: max(1, n * 4))
        var ts = 0.0
        let s = ck_depth_reader_read(&dst, dst.count, nil, &ts, c, UInt64.max, Int32(formats[0].rawValue))
        try require(s == CK_END, "read(UINT64_MAX) gave \(s)")
    }

    // MARK: MultiScan streams

    /// Stream parameters from the first 3 bytes: width 1...16, height 1...8, depth or confidence.
    static func streamShape(_ input: inout FuzzInput) -> (width: Int, height: Int, kind: ZStream.Kind) {
        let w = 1 + Int(input.u8() % 16), h = 1 + Int(input.u8() % 8)
        return (w, h, input.u8() & 1 == 0 ? .depth : .confidence)
    }

    /// What one reader delivers: frames by `next` until the end or an error (`complete` false when
    /// it stopped at `limit` frames instead).
    static func drain(_ r: ZStreamReader, limit: Int = 64) -> (frames: [[UInt8]], end: CaptureKitError?, complete: Bool) {
        let format: SampleFormat = r.kind == .depth ? .depthF16 : .u8
        var frames: [[UInt8]] = []
        while frames.count < limit {
            var out = [UInt8](repeating: 0xA5, count: r.frameBytes)
            let got = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try r.next(into: d, format: format) } }
            switch got {
            case .success(true): frames.append(out)
            case .success(false): return (frames, nil, true)
            case .failure(let e): return (frames, e, true)
            }
        }
        return (frames, nil, false)
    }

    static func zstreamRead(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let shape = streamShape(&input)
        let ops = input.take(4)
        let path = FuzzScratch.folder("zstream_read") + "/s.depth.zlib"
        FuzzScratch.write(path, input.rest())
        try checkStream(path: path, shape: shape, ops: ops)
    }

    static func zstreamReadIndexed(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let shape = streamShape(&input)
        let ops = input.take(4)
        let indexBytes = input.take(Int(input.u16() % 2048))
        let dir = FuzzScratch.folder("zstream_read_idx")
        let stream = input.rest()
        // Without the index first: the reference.
        let plain = dir + "/plain.zlib"
        FuzzScratch.write(plain, stream)
        guard let reference = try? ZStreamReader(path: plain, width: shape.width, height: shape.height, kind: shape.kind) else { return }
        let want = drain(reference)
        let path = dir + "/s.zlib"
        FuzzScratch.write(path, stream)
        FuzzScratch.write(ZStream.indexPath(path), indexBytes)
        guard let r = try? ZStreamReader(path: path, width: shape.width, height: shape.height, kind: shape.kind) else {
            throw FuzzFailure("the index made open fail")
        }
        // The index is genuine when its entries are frame starts the reference found by decoding.
        // A reader may accept an index that is not (its checks are structural: every entry a flush
        // marker, no marker left out; see RELIABILITY.md) only for a stream whose flush markers are
        // not all frame boundaries: undetectable damage inside a segment, or a foreign writer's
        // flushes. Frames read through such an index are then wrong data from a damaged stream, as
        // without an index, but not the same wrong data: compare only when the index is genuine.
        let entries = stride(from: 0, to: indexBytes.count - 7, by: 8).map { i in indexBytes.withUnsafeBytes { ZStream.uint64LE($0, at: i) } }
        let genuine = !r.usesIndex || (entries.count <= reference.restarts.count && entries == Array(reference.restarts.prefix(entries.count)))
        try checkStream(path: path, shape: shape, ops: ops, consistent: genuine)
        guard genuine else { return }
        for (i, frame) in want.frames.enumerated().reversed() {
            var out = [UInt8](repeating: 0, count: r.frameBytes)
            let got = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try r.read(UInt64(i), into: d, format: shape.kind == .depth ? .depthF16 : .u8) } }
            if case .success(let ok) = got { try require(ok && out == frame, "frame \(i) differs with the index (usesIndex \(r.usesIndex))") }
        }
        if want.end == nil, want.complete, let count = try? ZStreamReader(path: path, width: shape.width, height: shape.height, kind: shape.kind).frameCount() {
            try require(count == UInt64(want.frames.count), "frame count \(count) with the index, \(want.frames.count) without")
        }
    }

    /// Sequential reading, then random reads that must agree with it, sticky damage, an untouched
    /// destination on error, and hostile indices (UInt64.max).
    static func checkStream(path: String, shape: (width: Int, height: Int, kind: ZStream.Kind), ops: [UInt8],
                            consistent: Bool = true) throws(FuzzFailure) {
        guard let r = try? ZStreamReader(path: path, width: shape.width, height: shape.height, kind: shape.kind) else { return }
        let seq = drain(r)
        let damaged = seq.end.map { $0.status != .corrupt || !$0.message.contains("cut short") } ?? false
        if damaged {  // sticky: every later call fails too
            var out = [UInt8](repeating: 0xA5, count: r.frameBytes)
            let again = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try r.read(0, into: d, format: shape.kind == .depth ? .depthF16 : .u8) } }
            if case .success = again { throw FuzzFailure("a read succeeded after damage was reported: \(seq.end?.message ?? "")") }
            try require(out.allSatisfy { $0 == 0xA5 }, "dst written on error")
        }
        guard let r2 = try? ZStreamReader(path: path, width: shape.width, height: shape.height, kind: shape.kind) else { return }
        var indices: [UInt64] = ops.map { UInt64($0 % 70) }
        indices.append(UInt64.max)
        indices.append(UInt64.max - 1)
        let format: SampleFormat = shape.kind == .depth ? .depthF16 : .u8
        for i in indices {
            var out = [UInt8](repeating: 0xA5, count: r2.frameBytes)
            let got = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try r2.read(i, into: d, format: format) } }
            switch got {
            case .success(true):
                if i < UInt64(seq.frames.count) && consistent { try require(out == seq.frames[Int(i)], "read(\(i)) differs from next()") }
            case .success(false), .failure:
                try require(out.allSatisfy { $0 == 0xA5 }, "read(\(i)) wrote dst without a frame")
                // Unless damage lies somewhere (sticky once any read meets it), every frame next()
                // delivered reads back.
                if i < UInt64(seq.frames.count) && !damaged && seq.complete && consistent {
                    throw FuzzFailure("read(\(i)) failed (\(got)), next() delivered that frame")
                }
            }
        }
        _ = try? r2.frameCount()
        if shape.kind == .depth {  // the converting formats
            for format in [SampleFormat.depthF32, .depthMM] {
                var out = [UInt8](repeating: 0, count: shape.width * shape.height * 4 + 1)
                _ = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in
                    try r2.read(0, into: UnsafeMutableRawBufferPointer(rebasing: d[1...]), format: format) } }  // unaligned
            }
        }
    }

    static func roundTripZStream(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let shape = streamShape(&input)
        let level = Int32(input.u8() % 10)
        let frameBytes = shape.width * shape.height * shape.kind.sampleSize
        let count = min(12, input.remaining / frameBytes)
        let frames = (0..<count).map { _ in input.take(frameBytes) }
        let path = FuzzScratch.folder("roundtrip_zstream") + "/r.zlib"
        do {
            let w = try ZStreamWriter(path: path, width: shape.width, height: shape.height, kind: shape.kind, level: level, index: true)
            for f in frames {
                try f.withUnsafeBytes { b in
                    Result { () throws(CaptureKitError) in
                        if let p = b.baseAddress { try w.append(p, format: shape.kind == .depth ? .depthF16 : .u8) }
                    }
                }.get()
            }
            try w.close()
        } catch { throw FuzzFailure("writing failed: \(error)") }
        guard let r = try? ZStreamReader(path: path, width: shape.width, height: shape.height, kind: shape.kind) else {
            throw FuzzFailure("cannot reopen")
        }
        try require(count == 0 || r.usesIndex, "our own index was refused")
        let got = drain(r)
        try require(got.end == nil && got.complete && got.frames == frames, "sequential round trip differs (\(got.frames.count) of \(count), \(String(describing: got.end)))")
        try require((try? r.frameCount()) == UInt64(count), "frame count differs")
        for i in (0..<count).reversed() {
            var out = [UInt8](repeating: 0, count: frameBytes)
            let ok = out.withUnsafeMutableBytes { d in Result { () throws(CaptureKitError) in try r.read(UInt64(i), into: d, format: shape.kind == .depth ? .depthF16 : .u8) } }
            guard case .success(true) = ok, out == frames[i] else { throw FuzzFailure("random read \(i) differs") }
        }
    }

    // MARK: JSON readers

    static func jsonBoundingBox(_ data: [UInt8]) throws(FuzzFailure) {
        guard let m = try? BoundingBoxManifest.decode(data) else { return }
        guard let bytes = try? m.encode() else { throw FuzzFailure("cannot re-encode a decoded bounding box") }
        guard let again = try? BoundingBoxManifest.decode(bytes) else { throw FuzzFailure("our own boundingbox.json does not decode") }
        try require(again.passes.count == m.passes.count, "passes differ after a round trip")
    }

    static func jsonTransforms(_ data: [UInt8]) throws(FuzzFailure) {
        guard let m = try? TransformsManifest.decode(data) else { return }
        guard let bytes = try? m.encode() else { return }  // e.g. a NaN the writer refuses
        guard let again = try? TransformsManifest.decode(bytes) else { throw FuzzFailure("our own transforms.json does not decode") }
        try require(again.frames.count == m.frames.count, "frames differ after a round trip")
    }

    static func jsonCameraInfo(_ data: [UInt8]) throws(FuzzFailure) {
        _ = try? CameraInfoRecord.decodeLines(data, tolerateTornTail: false)
        guard let (records, _) = try? CameraInfoRecord.decodeLines(data, tolerateTornTail: true) else { return }
        for r in records.prefix(8) {
            guard let line = try? r.line() else { continue }
            guard let back = try? CameraInfoRecord.decodeLines(line) else { throw FuzzFailure("our own camera-info line does not decode") }
            try require(back.records.count == 1, "one line, \(back.records.count) records")
        }
    }

    static func jsonMetadata(_ data: [UInt8]) throws(FuzzFailure) {
        guard let m = try? ScanMetadata.decode(data) else { return }
        guard let bytes = try? m.encode() else { return }
        guard (try? ScanMetadata.decode(bytes)) != nil else { throw FuzzFailure("our own metadata does not decode") }
    }

    // MARK: Datasets (Dataset*.swift)

    static func datasetJournal(_ data: [UInt8]) throws(FuzzFailure) {
        let dir = FuzzScratch.folder("dataset_journal")
        FuzzScratch.write(dir + "/capturekit.jsonl", data)
        guard let d = try? Dataset(open: dir) else { return }
        _ = d.transforms()
        try? d.close()
    }

    /// Files a mutated dataset folder may hold (selector byte % count). The names after the first
    /// eight were added later (so older corpus inputs keep their meaning for selectors 0...7):
    /// the lock file, "@lockdir" (a folder in place of the lock file), and the scan's stream
    /// files, "@depth" etc., named after the scan id the journal's first line gives.
    static let datasetFiles = ["capturekit.jsonl", "images/000000.png", "images/000001.png", "depth/000000.png",
                               "boundingbox.json", "transforms.json", "events.jsonl", "images/000002.jpg",
                               ".capturekit.lock", "@lockdir", "@depth", "@confidence", "@info", "@meta"]

    /// Writes the input's records (selector byte % names.count, u16 length, bytes; until the input
    /// ends) as files of `dir`: a mutated folder for the folder readers.
    static func writeRecords(_ input: inout FuzzInput, into dir: String, names: [String]) {
        while !input.isAtEnd {
            let name = names[Int(input.u8()) % names.count]
            FuzzScratch.write("\(dir)/\(name)", input.take(Int(input.u16())))
        }
    }

    /// The scan id a journal's first line names (`"scan_id":"…"`), when it is a plain file name.
    static func journalScanID(_ journal: [UInt8]) -> String? {
        let key = Array("\"scan_id\":\"".utf8)
        guard journal.count > key.count else { return nil }
        for i in 0...(journal.count - key.count) where journal[i..<(i + key.count)].elementsEqual(key) {
            let rest = journal[(i + key.count)...].prefix { $0 != 0x22 && $0 != 0x0A }
            let id = String(decoding: rest, as: UTF8.self)
            return (try? PathRules.checkName(id, "scan_id")) != nil ? id : nil
        }
        return nil
    }

    /// Every entry under `dir`: relative path → bytes (a folder: [0xFF, 0xFE]; a link: its target).
    static func snapshot(_ dir: String, _ rel: String = "", into out: inout [String: [UInt8]]) {
        let path = rel.isEmpty ? dir : "\(dir)/\(rel)"
        guard let names = try? FileIO.listDirectory(path) else { return }
        for name in names {
            let r = rel.isEmpty ? name : "\(rel)/\(name)"
            let p = "\(dir)/\(r)"
            if FileIO.isSymbolicLink(p) {
                var buf = [UInt8](repeating: 0, count: 4096)
                let n = buf.withUnsafeMutableBufferPointer { b in b.baseAddress.map { readlink(p, $0, 4096) } ?? -1 }
                out[r] = Array(buf.prefix(max(n, 0))) + [0xFF, 0xFD]
            } else if FileIO.isRealDirectory(p) {
                out[r] = [0xFF, 0xFE]
                snapshot(dir, r, into: &out)
            } else {
                out[r] = (try? FileIO.readAll(p)) ?? [0xFF, 0xFC]
            }
        }
    }

    static func snapshot(_ dir: String) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        snapshot(dir, into: &out)
        return out
    }

    /// A refused writable open (`open`, or `resume`) must leave every byte and name as it was.
    static func requireRefusalChangesNothing<T>(_ dir: String, _ what: String, _ body: () throws(CaptureKitError) -> T) throws(FuzzFailure) -> T? {
        let before = snapshot(dir)
        do { return try body() } catch {
            let after = snapshot(dir)
            if after != before {
                let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
                throw FuzzFailure("a refused \(what) (\(error.status)) changed the folder: \(changed)")
            }
            return nil
        }
    }

    /// A mutated dataset folder (journal, frame files, manifests, the lock file or a folder in its
    /// place, the MultiScan streams): a refused open or resume changes nothing; an open one is the
    /// folder's only writer (a second writable open is `busy` and changes nothing); its edits,
    /// close and reopen work; and resume + finish (`capturekit finish`) either refuses cleanly or
    /// leaves a dataset that opens again.
    static func datasetReopen(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let dir = FuzzScratch.folder("dataset_reopen")
        mkdir(dir + "/images", 0o755)
        mkdir(dir + "/depth", 0o755)
        var records: [(String, [UInt8])] = []
        while !input.isAtEnd {
            let name = datasetFiles[Int(input.u8()) % datasetFiles.count]
            records.append((name, input.take(Int(input.u16()))))
        }
        let scan = records.last { $0.0 == "capturekit.jsonl" }.flatMap { journalScanID($0.1) } ?? "s"
        for (name, bytes) in records {
            switch name {
            case "@lockdir":
                FuzzScratch.removeTree("\(dir)/\(DatasetLock.fileName)")
                mkdir("\(dir)/\(DatasetLock.fileName)", 0o755)
            case "@depth": FuzzScratch.write("\(dir)/\(scan).depth.zlib", bytes)
            case "@confidence": FuzzScratch.write("\(dir)/\(scan).confidence.zlib", bytes)
            case "@info": FuzzScratch.write("\(dir)/\(scan).jsonl", bytes)
            case "@meta": FuzzScratch.write("\(dir)/\(scan).json", bytes)
            default: FuzzScratch.write("\(dir)/\(name)", bytes)
            }
        }
        // Half the inputs try resume first on the pristine folder, the others open it, edit it,
        // close it, reopen it, then resume it (a quarter with stream_depth 0).
        var options = SessionOptions()
        options.streamDepth = data.count % 4 < 2
        if data.count % 2 == 0, try resumeAndFinish(dir, options) { return }
        guard let d = try requireRefusalChangesNothing(dir, "open", { () throws(CaptureKitError) in try Dataset(open: dir) }) else { return }
        try requireSecondWriterBusy(dir)
        let ids = d.frames.map(\.id)
        if let first = ids.first { _ = try? d.removeFrame(first) }
        if let b = try? Box(center: Vec3(0, 0, -1), size: Vec3(0.5, 0.5, 0.5), yaw: 0) { _ = try? d.setBox(b) }
        _ = try? d.nextImagePath(extension: ".png")
        try? d.close()
        // Reopening what we just wrote works again (RELIABILITY.md #6).
        do { try Dataset(open: dir).close() } catch { throw FuzzFailure("a dataset opened once does not reopen after close: \(error)") }
        if data.count % 2 == 1 { _ = try resumeAndFinish(dir, options) }
    }

    /// With a writer live on `dir`: a second writable open is `busy` and changes nothing.
    static func requireSecondWriterBusy(_ dir: String) throws(FuzzFailure) {
        let before = snapshot(dir)
        let second = Result { () throws(CaptureKitError) in try Dataset(open: dir) }
        switch second {
        case .success(let d): try? d.close(); throw FuzzFailure("a second writable open of a live dataset was not refused")
        case .failure(let e): try require(e.status == .busy, "a second writable open gave \(e.status), not busy")
        }
        try require(snapshot(dir) == before, "a busy open changed the folder")
    }

    /// Resume (a refusal changes nothing), then finish, as `capturekit finish` does: a finish that
    /// returns OK leaves a dataset that opens again. False: resume was refused.
    static func resumeAndFinish(_ dir: String, _ options: SessionOptions) throws(FuzzFailure) -> Bool {
        guard let s = try requireRefusalChangesNothing(dir, "resume", { () throws(CaptureKitError) in try Session(resume: dir, options: options) }) else { return false }
        try requireSecondWriterBusy(dir)
        let finished = (try? s.finish(zipPath: nil)) != nil
        try? s.close()
        if finished {
            do { try Dataset(open: dir).close() } catch { throw FuzzFailure("a finished dataset does not reopen: \(error)") }
        }
        return true
    }

    // MARK: Scans of other apps (ScanReader)

    /// Files a mutated MultiScan or Stray Scanner folder may hold (selector byte % count).
    static let scanFiles = ["s.json", "s.jsonl", "s.depth.zlib", "s.confidence.zlib", "odometry.csv", "camera_matrix.csv",
                            "depth/000000.png", "depth/000001.png", "confidence/000000.png", "confidence/000001.png"]

    /// Records (selector, u16 length, bytes) make a folder; opening it and reading every frame's
    /// depth and confidence must end in a value or a thrown error, and a failed read leaves dst untouched.
    static func scanRead(_ data: [UInt8]) throws(FuzzFailure) {
        var input = FuzzInput(data)
        let dir = FuzzScratch.folder("scan_read")
        mkdir(dir + "/depth", 0o755)
        mkdir(dir + "/confidence", 0o755)
        writeRecords(&input, into: dir, names: scanFiles)
        guard let scan = try? ScanReader(path: dir) else { return }
        let n = scan.depthWidth * scan.depthHeight
        guard n <= maxPixels else { return }
        var dst = [UInt8](repeating: 0xA5, count: 4 * n)
        for i in 0..<UInt64(min(scan.frames.count, 8)) {
            for confidence in [false, true] {
                let before = dst
                let r = dst.withUnsafeMutableBytes { d in
                    Result { () throws(CaptureKitError) in
                        if confidence { try scan.readConfidence(i, into: d) } else { try scan.readDepth(i, into: d, format: .depthF32) }
                    }
                }
                if case .failure = r { try require(dst == before, "a failed scan read wrote dst") }
            }
        }
    }
}
