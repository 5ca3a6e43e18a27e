// Reading a dataset frame's depth back (ck_dataset_frame_depth): from its depth PNG, or from the
// MultiScan streams the dataset writes (through the scan reader, one concept in one place).

extension Dataset {
    /// Where frame `index`'s depth is: its PNG (millimetres), else its streamed frame.
    private enum DepthSource { case png(String, PNGInfo), stream(ScanReader, UInt64) }

    private func depthSource(_ index: UInt64, confidence: Bool) throws(CaptureKitError) -> DepthSource {
        guard let f = frame(at: index) else { throw .notFound("no frame at index \(index): the dataset has \(frames.count)") }
        if !confidence, let p = f.depthPath {
            let full = try PathRules.readable(p, in: directory)
            let info = try ScanReader.pngHeader(full)
            guard info.format == .gray16 else { throw .corrupt("\(full): not a 16-bit grayscale PNG") }
            // The library writes depth PNGs at the frame's image size or the options' depth size:
            // a file declaring more is refused before anyone allocates for it.
            let w = max(Int(f.intrinsics.width), options.depthWidth), h = max(Int(f.intrinsics.height), options.depthHeight)
            guard info.width <= w, info.height <= h else {
                throw .corrupt("\(full): declares \(info.width) x \(info.height) depth, larger than the frame's \(w) x \(h)")
            }
            return .png(full, info)
        }
        guard let s = f.streamIndex, s >= 0 else {
            throw .notFound("frame \(f.id) has no \(confidence ? "confidence (it was not streamed)" : "depth")")
        }
        guard FileIO.exists(path("\(scanID).json")) else {
            throw .notFound("frame \(f.id)'s \(confidence ? "confidence" : "depth") is in the streams, described by \(scanID).json, which finalize writes")
        }
        // A read-only dataset's streams do not change: open them once (the camera-info lines
        // are parsed whole), not per frame.
        let scan: ScanReader
        if let cached = streamReader { scan = cached } else { scan = try ScanReader(path: path("\(scanID).json")) }
        if readOnly { streamReader = scan }
        guard UInt64(s) < UInt64(scan.frames.count), scan.frames[Int(s)].hasDepth else {
            throw .notFound("frame \(f.id): stream frame \(s) is not in the streams")
        }
        if confidence && !scan.hasConfidence { throw .notFound("the dataset streamed no confidence") }
        return .stream(scan, UInt64(s))
    }

    /// The size of frame `index`'s depth map. - Throws: as `readDepth`.
    public func depthSize(_ index: UInt64) throws(CaptureKitError) -> (width: Int, height: Int) {
        switch try depthSource(index, confidence: false) {
        case .png(_, let info): return (info.width, info.height)
        case .stream(let scan, _): return (scan.depthWidth, scan.depthHeight)
        }
    }

    /// Reads frame `index`'s depth (its size: `depthSize`) into dst as `format`; dst is written
    /// only on success. - Throws: `notFound` (no frame, or no depth), `corrupt`, `io`.
    public func readDepth(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer, format: SampleFormat) throws(CaptureKitError) {
        try readDepth(index, into: dst, format: format, source: depthSource(index, confidence: false))
    }

    /// The size of frame `index`'s streamed confidence. - Throws: as `readConfidence`.
    public func confidenceSize(_ index: UInt64) throws(CaptureKitError) -> (width: Int, height: Int) {
        guard case .stream(let scan, _) = try depthSource(index, confidence: true) else { throw .notFound("no confidence") }
        return (scan.depthWidth, scan.depthHeight)
    }

    private func readDepth(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer, format: SampleFormat,
                           source: DepthSource) throws(CaptureKitError) {
        switch source {
        case .png(let full, let info):
            guard format.isDepth, dst.count >= info.width * info.height * format.bytesPerSample else {
                throw .invalidArgument("dst must hold \(info.width) x \(info.height) depth samples")
            }
            try ScanReader.readMap(full, info, .depthMM, into: dst, format: format)
        case .stream(let scan, let i):
            try scan.readDepth(UInt64(i), into: dst, format: format)
        }
    }

    /// Reads frame `index`'s streamed confidence (its size: the stream's, `depthSize` of a
    /// streamed frame) into dst. - Throws: `notFound` (no frame, not streamed, or no confidence stream), `corrupt`, `io`.
    public func readConfidence(_ index: UInt64, into dst: UnsafeMutableRawBufferPointer) throws(CaptureKitError) {
        guard case .stream(let scan, let i) = try depthSource(index, confidence: true) else { throw .notFound("no confidence") }
        try scan.readConfidence(i, into: dst)
    }
}
