import Glibc

// The optional side index of a MultiScan stream (`<path>.idx`, docs/FORMATS.md §1): how a reader
// loads it and checks every entry before it trusts one as a restart point.

extension ZStreamReader {
    /// Reads `<path>.idx` and adopts it when it is consistent with the stream: entries start at 0,
    /// strictly increase and lie inside the file; every entry is the end of a sync marker and no
    /// frame boundary is missing between two entries (the compressed file is scanned once for
    /// markers, without decompressing; an unlisted marker between two entries is either a deleted
    /// entry or the 4 bytes occurring by chance inside compressed data, so that interval's frame is
    /// decoded to check that it ends at the next entry); a fresh inflater starts decoding at every
    /// entry (catches an entry added at such a chance marker, heuristically: the bytes there are
    /// read as block headers and nearly always fail); and a fresh inflater decodes the last indexed
    /// frame from its offset. Any failure leaves the reader without an index: it then finds
    /// the frames by decoding (slower, same results). The checks are structural (every flush
    /// marker ends a frame, as our writer makes them): an index listing exactly the markers of a
    /// stream whose markers are not all frame boundaries (undetectable damage, another writer's
    /// flushes inside frames) passes, and reads through it are as wrong as that stream's frames.
    func loadIndex() {
        let indexPath = ZStream.indexPath(path)
        guard FileIO.exists(indexPath) else { return }
        guard let entries = try? readIndex(indexPath), !entries.isEmpty else { return }
        guard (try? validate(entries)) == true else { return }
        restarts = entries
        usesIndex = true
    }

    func readIndex(_ indexPath: String) throws(CaptureKitError) -> [UInt64]? {
        let dataSize = try file.size()
        let f = try File.open(indexPath, .readOnly)
        defer { f.closeQuietly() }
        let size = try f.size()
        // A valid index has fewer entries than the stream has bytes (a frame takes ≥ 5 bytes); a torn
        // last entry (a crash while writing it) is ignored.
        let count = size / 8
        guard count <= dataSize / 4 + 1, count <= ZStream.maxIndexEntries else { return nil }
        let n = Int(count)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(n * 8, 1), alignment: 8)
        defer { buffer.deallocate() }
        guard try f.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(n * 8)]), at: 0) == n * 8 else { return nil }
        var entries = [UInt64]()
        entries.reserveCapacity(n)
        for i in 0..<n { entries.append(ZStream.uint64LE(UnsafeRawBufferPointer(buffer), at: i * 8)) }
        return entries
    }

    /// Most index intervals whose frame is decoded to check it (chance markers); beyond, the index
    /// is refused.
    static let maxCheckedIntervals = 16

    func validate(_ entries: [UInt64]) throws(CaptureKitError) -> Bool {
        let dataSize = try file.size()
        guard entries[0] == 0, let last = entries.last, last < dataSize else { return false }
        for i in 1..<entries.count where entries[i] <= entries[i - 1] { return false }
        // Every entry must be a marker end, and every marker end up to the last entry an entry
        // (a deleted entry would shift every later frame number: wrong frames with no error).
        var suspicious: [Int] = []  // i: an unlisted marker lies between entries[i] and entries[i + 1]
        var next = 1                // the entry the next marker end should be
        var extra = false
        var consistent = true
        try scanMarkerEnds(upTo: last) { end in
            if next < entries.count && entries[next] < end {  // entries[next] is not a marker end
                consistent = false
                return false
            }
            if next < entries.count && entries[next] == end {
                if extra { suspicious.append(next - 1) }
                extra = false
                next += 1
            } else {
                extra = true
            }
            return suspicious.count <= ZStreamReader.maxCheckedIntervals
        }
        guard consistent, next == entries.count, suspicious.count <= ZStreamReader.maxCheckedIntervals else { return false }
        // The last interval too: its frame must end at the last entry with the stream going on (an
        // entry after the final block would count bytes past the end, which readers ignore, as frames).
        if entries.count >= 2 && !suspicious.contains(entries.count - 2) { suspicious.append(entries.count - 2) }
        for i in suspicious {
            guard try frameEnd(from: entries[i], frame: UInt64(i)) == entries[i + 1] else { return false }
        }
        // An entry added at a chance marker passes the scan; a fresh inflater started there reads
        // compressed data as block headers and fails at once (no window for back-references).
        guard try restartsDecode(entries) else { return false }
        // Decode the last indexed frame from its offset with a fresh inflater.
        let c = try Cursor(offset: last, frame: UInt64(entries.count - 1))
        switch try c.decodeFrame(into: frame.reserve(frameBytes), frameBytes: frameBytes, file: file, discovered: { _, _, _ in }) {
        case .damaged: return false
        case .frame, .end, .truncated, .endedInside: return true
        }
    }

    /// Calls `body` with the end offset of every sync marker (`00 00 FF FF`) that ends at or before
    /// `limit`, in order, until it returns false. Reads the file in 1 MiB chunks.
    func scanMarkerEnds(upTo limit: UInt64, _ body: (UInt64) -> Bool) throws(CaptureKitError) {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + 3, alignment: 16)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0  // file offset of buffer[0]
        var kept = 0            // bytes carried over from the previous chunk (at most 3)
        while offset + UInt64(kept) < limit {
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[kept..<(kept + chunk)]),
                                  at: offset + UInt64(kept))
            let count = kept + n
            var j = 3  // buffer[j] is a marker's last byte; j < 3 was checked with the previous chunk
            while j < count {
                if buffer[j] == 0xFF && buffer[j - 1] == 0xFF && buffer[j - 2] == 0x00 && buffer[j - 3] == 0x00 {
                    let end = offset + UInt64(j + 1)
                    if end > limit { return }
                    if !body(end) { return }
                }
                j += 1
            }
            if n == 0 { return }
            let carry = min(3, count)
            for k in 0..<carry { buffer[k] = buffer[count - carry + k] }
            offset += UInt64(count - carry)
            kept = carry
        }
    }

    /// True when a fresh raw inflater started at each entry decodes the start of a frame (up to
    /// 256 bytes) without an error. One inflater, reset per entry, and 1 KiB of input each.
    func restartsDecode(_ entries: [UInt64]) throws(CaptureKitError) -> Bool {
        let inflater = try Inflater(raw: true)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 16)
        defer { output.deallocate() }
        let want = min(frameBytes, 256)
        for e in entries {
            inflater.reset()
            let n = try file.read(into: input, at: e)
            var consumed = 0, produced = 0
            while produced < want && consumed < n && !inflater.finished {
                let r: (consumed: Int, produced: Int)
                do throws(CaptureKitError) {
                    r = try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[consumed..<n]),
                                             into: UnsafeMutableRawBufferPointer(rebasing: output[produced..<want]))
                } catch {
                    if error.status == .corrupt { return false }
                    throw error
                }
                if r.consumed == 0 && r.produced == 0 { break }
                consumed += r.consumed
                produced += r.produced
            }
        }
        return true
    }

    /// Where frame `index + 1` starts when a fresh inflater decodes frame `index` from `start`:
    /// the first marker end after the frame's data; nil when the frame does not decode whole.
    func frameEnd(from start: UInt64, frame index: UInt64) throws(CaptureKitError) -> UInt64? {
        let out = frame.reserve(frameBytes)
        let c = try Cursor(offset: start, frame: index)
        guard case .frame = try c.decodeFrame(into: out, frameBytes: frameBytes, file: file, discovered: { _, _, _ in }) else {
            return nil
        }
        var end: UInt64?
        _ = try c.decodeFrame(into: out, frameBytes: frameBytes, file: file) { _, offset, marker in
            guard end == nil else { return }
            if marker ?? ((try? markerPrecedes(offset)) ?? false) { end = offset }
        }
        return end
    }

    /// True when the 4 bytes before `offset` are the sync marker.
    func markerPrecedes(_ offset: UInt64) throws(CaptureKitError) -> Bool {
        guard offset >= 4 else { return false }
        var bytes: (UInt8, UInt8, UInt8, UInt8) = (1, 1, 1, 1)
        let n = try withUnsafeMutableBytes(of: &bytes) { (b) throws(CaptureKitError) in try file.read(into: b, at: offset - 4) }
        return n == 4 && bytes == (0x00, 0x00, 0xFF, 0xFF)
    }

    /// Records the start offset of `frame` found while decoding (only right after a sync marker, only
    /// for the first unknown frame, so `restarts` stays contiguous).
    func discovered(_ frame: UInt64, _ offset: UInt64, markerBefore: Bool?) {
        guard seekable, frame == UInt64(restarts.count), offset > restarts[restarts.count - 1] else { return }
        let marker = markerBefore ?? ((try? markerPrecedes(offset)) ?? false)
        if marker { restarts.append(offset) }
    }

    /// Forgets every restart point (one failed) and the index.
    func dropRestarts() {
        seekable = false
        usesIndex = false
        restarts = [0]
    }
}
