import CCaptureKitAPI
import CaptureKitCore

// Header section ck_scan.h: reading MultiScan scans and Stray Scanner captures; and the dataset
// reader's depth (ck_dataset.h), which shares the buffer rules.

@c @implementation public func ck_scan_open(_ scan_out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?) -> ck_status {
    boundary("ck_scan_open") { () throws(CaptureKitError) in
        let out = try required(scan_out, "scan_out")
        out.pointee = nil
        out.pointee = handOut(try ScanReader(path: try readPath(path, "path")))
        return CK_OK
    }
}

@c @implementation public func ck_scan_describe(_ info_out: UnsafeMutablePointer<ck_scan_info>?, _ scan: OpaquePointer?) -> ck_status {
    boundary("ck_scan_describe") { () throws(CaptureKitError) in
        let out = try required(info_out, "info_out")
        let s = try object(scan, "scan", as: ScanReader.self)
        // The span the timestamps cover, latest minus earliest: never negative, also for a scan
        // whose clock goes back (a dataset resumed after the device restarted its clock).
        let times = s.frames.lazy.map { $0.timestamp }
        let duration = s.frames.count < 2 ? 0 : ((times.max() ?? 0) - (times.min() ?? 0))
        out.pointee = ck_scan_info(kind: s.kind.rawValue, has_confidence: s.hasConfidence ? 1 : 0,
                                   depth_width: UInt32(s.depthWidth), depth_height: UInt32(s.depthHeight),
                                   frame_count: UInt64(s.frames.count),
                                   depth_frame_count: UInt64(s.frames.lazy.filter { $0.hasDepth }.count),
                                   duration: duration.isFinite ? duration : 0)
        return CK_OK
    }
}

@c @implementation public func ck_scan_frame(_ info_out: UnsafeMutablePointer<ck_scan_frame_info>?, _ scan: OpaquePointer?,
                                              _ index: UInt64) -> ck_status {
    boundary("ck_scan_frame") { () throws(CaptureKitError) in
        let out = try required(info_out, "info_out")
        let s = try object(scan, "scan", as: ScanReader.self)
        guard index < UInt64(s.frames.count) else { throw .notFound("no frame at index \(index): the scan has \(s.frames.count)") }
        let f = s.frames[Int(index)]
        out.pointee = ck_scan_frame_info(timestamp: f.timestamp, pose: ck_mat4(f.pose), intrinsics: ck_intrinsics(f.intrinsics),
                                         depth_index: f.depthIndex, has_depth: f.hasDepth ? 1 : 0, reserved: 0)
        return CK_OK
    }
}

@c @implementation public func ck_scan_depth(_ dst: UnsafeMutableRawPointer?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                              _ scan: OpaquePointer?, _ index: UInt64, _ dst_format: Int32) -> ck_status {
    boundary("ck_scan_depth") { () throws(CaptureKitError) in
        let s = try object(scan, "scan", as: ScanReader.self)
        let f = try depthFormat(dst_format)
        guard index < UInt64(s.frames.count) else { throw .notFound("no frame at index \(index): the scan has \(s.frames.count)") }
        guard s.frames[Int(index)].hasDepth else { throw .notFound("frame \(index) has no depth") }
        let d = try mapDestination(dst, dst_capacity, written_out, f, (s.depthWidth, s.depthHeight))
        try s.readDepth(index, into: d, format: f)
        written_out?.pointee = d.count
        return CK_OK
    }
}

@c @implementation public func ck_scan_confidence(_ dst: UnsafeMutablePointer<UInt8>?, _ dst_capacity: Int, _ written_out: UnsafeMutablePointer<Int>?,
                                                   _ scan: OpaquePointer?, _ index: UInt64) -> ck_status {
    boundary("ck_scan_confidence") { () throws(CaptureKitError) in
        let s = try object(scan, "scan", as: ScanReader.self)
        guard index < UInt64(s.frames.count) else { throw .notFound("no frame at index \(index): the scan has \(s.frames.count)") }
        guard s.frames[Int(index)].hasDepth else { throw .notFound("frame \(index) has no depth") }
        guard s.hasConfidence else { throw .notFound("the scan has no confidence maps") }
        let d = try mapDestination(UnsafeMutableRawPointer(dst), dst_capacity, written_out, .u8, (s.depthWidth, s.depthHeight))
        try s.readConfidence(index, into: d)
        written_out?.pointee = d.count
        return CK_OK
    }
}

@c @implementation public func ck_scan_close(_ scan: OpaquePointer?) -> ck_status {
    boundary("ck_scan_close") { () throws(CaptureKitError) in
        release(scan, as: ScanReader.self)
        return CK_OK
    }
}
