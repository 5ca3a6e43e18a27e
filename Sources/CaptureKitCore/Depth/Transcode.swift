/// Conversions between MultiScan streams and `.ckdepth` files, frame by frame (bounded memory).
public enum Transcode {
    /// MultiScan stream → new `.ckdepth`. A stream cut short (or damaged) stops at its last complete
    /// frame; one whose first frame is already damaged is `corrupt` (a damaged stream is not an
    /// empty recording), and then no destination is written. An empty stream gives an empty file.
    /// `timestamps[i]` is frame i's time (missing entries: i). `level`: the writer's zstd level
    /// (1, or 19 for archives). Returns the frames written.
    public static func zstreamToDepthFile(source: String, destination: String, width: Int, height: Int,
                                          kind: ZStream.Kind, timestamps: [Double], overwrite: Bool,
                                          level: Int32 = 1) throws(CaptureKitError) -> Int {
        for t in timestamps where !t.isFinite { throw .invalidArgument("timestamps must be finite") }
        let reader = try ZStreamReader(path: source, width: width, height: height, kind: kind)
        let storage: SampleFormat = kind == .depth ? .depthF16 : .u8
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: width * height * storage.bytesPerSample, alignment: 16)
        defer { frame.deallocate() }
        // The destination is created once the first frame (if any) has decoded.
        var writer: DepthFileWriter? = nil
        func output() throws(CaptureKitError) -> DepthFileWriter {
            if let writer { return writer }
            let w = try DepthFileWriter(path: destination, width: width, height: height,
                                        kind: kind == .depth ? .float16Metres : .bytes, level: level,
                                        mode: overwrite ? .overwrite : .create)
            writer = w
            return w
        }
        var count = 0
        while true {
            let more: Bool
            do throws(CaptureKitError) {
                more = try reader.next(into: frame, format: storage)
            } catch {
                guard error.status == .corrupt, count > 0 else { throw error }
                more = false  // a truncated or damaged tail: keep every complete frame
            }
            guard more, let base = frame.baseAddress else { break }
            try output().append(UnsafeRawPointer(base), format: storage, timestamp: count < timestamps.count ? timestamps[count] : Double(count))
            count += 1
        }
        try output().close()
        return count
    }

    /// `.ckdepth` (kind float16 or bytes) → new MultiScan stream. Returns the frames written.
    public static func depthFileToZstream(source: String, destination: String, level: Int32, index: Bool,
                                          overwrite: Bool) throws(CaptureKitError) -> Int {
        let reader = try DepthFileReader(path: source)
        let info = reader.info
        let kind: ZStream.Kind
        switch info.kind {
        case .float16Metres: kind = .depth
        case .bytes: kind = .confidence
        case .millimetres: throw .invalidArgument("MultiScan streams hold float16 metres or uint8 confidence, not millimetres")
        }
        let storage: SampleFormat = kind == .depth ? .depthF16 : .u8
        let writer = try ZStreamWriter(path: destination, width: info.width, height: info.height, kind: kind, level: level,
                                       index: index, overwrite: overwrite)
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: info.width * info.height * storage.bytesPerSample, alignment: 16)
        defer { frame.deallocate() }
        for i in 0..<info.frameCount {
            guard let base = frame.baseAddress, try reader.read(i, into: base, format: storage) != nil else { break }
            try writer.append(UnsafeRawPointer(base), format: storage)
        }
        try writer.close()
        return info.frameCount
    }
}
