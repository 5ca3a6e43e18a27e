import CCaptureKitAPI
import CaptureKitCore

// Header include/capturekit/ck_surface.h: surface coverage from depth.

extension ck_surface_options {
    init(_ o: SurfaceOptions) {
        self.init(struct_size: UInt32(MemoryLayout<ck_surface_options>.size), voxel_size: o.voxelSize, max_depth: o.maxDepth,
                  min_confidence: o.minConfidence, min_views: o.minViews, min_spread_deg: o.minSpreadDeg,
                  max_incidence_deg: o.maxIncidenceDeg, min_px_per_cm: o.minPixelsPerCm, goal_fraction: o.goalFraction,
                  side_mask: o.sideMask, face_cells: o.faceCells)
    }

    var options: SurfaceOptions {
        var o = SurfaceOptions()
        o.voxelSize = voxel_size; o.maxDepth = max_depth; o.minConfidence = min_confidence
        o.minViews = min_views; o.minSpreadDeg = min_spread_deg; o.maxIncidenceDeg = max_incidence_deg
        o.minPixelsPerCm = min_px_per_cm; o.goalFraction = goal_fraction; o.sideMask = side_mask; o.faceCells = face_cells
        return o
    }
}

extension ck_surface_options: GrowableStruct {
    static let firstReleaseSize = 44  // 0.2
    static var defaults: ck_surface_options { ck_surface_options(SurfaceOptions()) }
}

extension ck_surface_side {
    init(_ s: SurfaceSideFigures) {
        self.init(observed: s.observed, well_covered: s.wellCovered, frontier: s.frontier, well_fraction: s.wellFraction,
                  complete_fraction: s.completeFraction, completed: s.completed ? 1 : 0)
    }
}

/// Prefixes a core validation message with the C argument's name.
private func namedOptions<T>(_ body: () throws(CaptureKitError) -> T) throws(CaptureKitError) -> T {
    do { return try body() } catch { throw CaptureKitError(error.status, "options.\(error.message)") }
}

@c @implementation public func ck_surface_options_init_sized(_ options_out: UnsafeMutablePointer<ck_surface_options>?, _ struct_size: Int) -> ck_status {
    boundary("ck_surface_options_init_sized") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: struct_size, ck_surface_options.defaults)
        return CK_OK
    }
}

/// The unsized symbol (binaries built before the sized calls, FFIs): the first release's layout only.
@c @implementation public func ck_surface_options_init(_ options_out: UnsafeMutablePointer<ck_surface_options>?) -> ck_status {
    boundary("ck_surface_options_init") { () throws(CaptureKitError) in
        try fillGrowable(options_out, "options_out", size: ck_surface_options.firstReleaseSize, ck_surface_options.defaults)
        return CK_OK
    }
}

@c @implementation public func ck_surface_create(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ box: UnsafePointer<ck_box>?,
                                                  _ options: UnsafePointer<ck_surface_options>?) -> ck_status {
    boundary("ck_surface_create") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        o.pointee = nil
        let b = try required(box, "box").pointee.validated(seat: false)
        let opts = try readOptions(options, "options", defaults: SurfaceOptions()) { (c: ck_surface_options) in c.options }
        let s = try namedOptions { () throws(CaptureKitError) in try SurfaceMap(box: b, options: opts) }
        o.pointee = handOut(s)
        return CK_OK
    }
}

@c @implementation public func ck_surface_free(_ surface: OpaquePointer?) {
    guard let surface else { return }
    let s = Unmanaged<SurfaceMap>.fromOpaque(UnsafeRawPointer(surface))
    guard !s.takeUnretainedValue().isOwnedBySession else {
        setLastError("ck_surface_free: surface is borrowed from a session (ck_session_surface); ck_session_close frees it, so this call did nothing")
        return
    }
    s.release()
}

@c @implementation public func ck_surface_fuse(_ surface: OpaquePointer?, _ depth: UnsafePointer<ck_depth_map>?,
                                                _ confidence: UnsafePointer<ck_depth_map>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                _ camera_pose: UnsafePointer<ck_mat4>?, _ timestamp: Double) -> ck_status {
    boundary("ck_surface_fuse") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let map = try requiredDepthMap(depth, "depth", allowed: depthFormats)
        let conf = try readDepthMap(confidence, "confidence", allowed: [.u8])
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        let pose = try readPose(camera_pose, "camera_pose")
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite (\(timestamp))") }
        guard Int(k.width) == map.width, Int(k.height) == map.height else {
            throw .invalidArgument("intrinsics are \(k.width)x\(k.height) but the depth map is \(map.width)x\(map.height)")
        }
        if let c = conf, c.width != map.width || c.height != map.height {
            throw .invalidArgument("confidence is \(c.width)x\(c.height) but the depth map is \(map.width)x\(map.height)")
        }
        try map.withPacked(as: .depthF32) { (raw: UnsafeRawBufferPointer) throws(CaptureKitError) in
            let metres = raw.bindMemory(to: Float.self)
            if let c = conf {
                try c.withPacked { (cb: UnsafeRawBufferPointer) throws(CaptureKitError) in
                    s.fuse(metres: metres, confidence: cb.bindMemory(to: UInt8.self), intrinsics: k, pose: pose)
                }
            } else {
                s.fuse(metres: metres, confidence: nil, intrinsics: k, pose: pose)
            }
        }
        return CK_OK
    }
}

@c @implementation public func ck_surface_add_view(_ seen_out: UnsafeMutablePointer<UInt32>?, _ surface: OpaquePointer?,
                                                    _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?,
                                                    _ image: UnsafePointer<ck_image>?, _ timestamp: Double) -> ck_status {
    boundary("ck_surface_add_view") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try required(intrinsics, "intrinsics").pointee.validated()
        guard timestamp.isFinite else { throw .invalidArgument("timestamp is not finite (\(timestamp))") }
        var pixels: (bytes: UnsafeRawBufferPointer, stride: Int, channels: Int)? = nil
        if let ip = image, let img = try readImage(ip.pointee, "image", allowed: [.rgb8, .rgba8, .gray8],
                                                   maxDimension: Int(Geometry.maxImageDimension)) {
            guard img.width == Int(k.width), img.height == Int(k.height) else {
                throw .invalidArgument("image is \(img.width)x\(img.height) but the intrinsics are \(k.width)x\(k.height)")
            }
            pixels = (img.bytes, img.stride, img.format.bytesPerPixel)
        }
        let seen = s.addView(pose: pose, intrinsics: k, image: pixels, timestamp: timestamp)
        seen_out?.pointee = UInt32(clamping: seen)
        return seen > 0 ? CK_OK : CK_MISS
    }
}

@c @implementation public func ck_surface_set_box(_ surface: OpaquePointer?, _ box: UnsafePointer<ck_box>?) -> ck_status {
    boundary("ck_surface_set_box") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        s.setBox(try required(box, "box").pointee.validated(seat: false))
        return CK_OK
    }
}

@c @implementation public func ck_surface_reset(_ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_reset") { () throws(CaptureKitError) in
        try object(surface, "surface", as: SurfaceMap.self).reset()
        return CK_OK
    }
}

@c @implementation public func ck_surface_summarize(_ out: UnsafeMutablePointer<ck_surface_figures>?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_summarize") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let f = try object(surface, "surface", as: SurfaceMap.self).figures
        o.pointee = ck_surface_figures(all: ck_surface_side(f.all), from_depth: f.fromDepth ? 1 : 0, frames_fused: f.framesFused,
                                       views: f.views, sides_completed: f.sidesCompleted, elements_dropped: f.elementsDropped,
                                       voxel_size: f.voxelSize, memory_bytes: f.memoryBytes)
        return CK_OK
    }
}

@c @implementation public func ck_surface_side_figures(_ out: UnsafeMutablePointer<ck_surface_side>?, _ surface: OpaquePointer?,
                                                        _ face: Int32) -> ck_status {
    boundary("ck_surface_side_figures") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let f = try object(surface, "surface", as: SurfaceMap.self).side(Int(face))
        o.pointee = ck_surface_side(f)
        return CK_OK
    }
}

@c @implementation public func ck_surface_suggest(_ out: UnsafeMutablePointer<ck_surface_hint>?, _ surface: OpaquePointer?,
                                                   _ camera_pose: UnsafePointer<ck_mat4>?) -> ck_status {
    boundary("ck_surface_suggest") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let h = s.hint(pose: try readPose(camera_pose, "camera_pose"))
        o.pointee = ck_surface_hint(side: h.side, move_angle: h.moveAngle, camera_azimuth: h.cameraAzimuth,
                                    target_azimuth: h.targetAzimuth, camera_elevation: h.cameraElevation,
                                    target_elevation: h.targetElevation, side_complete: h.sideComplete, reserved: 0,
                                    text: staticCString(h.text))
        return CK_OK
    }
}

@c @implementation public func ck_surface_next_event(_ event_out: UnsafeMutablePointer<ck_event>?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_next_event") { () throws(CaptureKitError) in
        let out = try required(event_out, "event_out")
        let s = try object(surface, "surface", as: SurfaceMap.self)
        guard let e = s.nextEvent() else { return CK_END }
        out.pointee = ck_event(e)
        return CK_OK
    }
}

@c @implementation public func ck_surface_grid_info(_ out: UnsafeMutablePointer<ck_surface_grid>?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_grid_info") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        let s = try object(surface, "surface", as: SurfaceMap.self)
        o.pointee = ck_surface_grid(dims: (UInt32(s.dims.x), UInt32(s.dims.y), UInt32(s.dims.z)), voxel_size: s.voxelSize,
                                    origin: (s.origin.x, s.origin.y, s.origin.z), elements: UInt32(s.elements.count))
        return CK_OK
    }
}

@c @implementation public func ck_surface_voxels(_ dst: UnsafeMutablePointer<UInt8>?, _ dst_capacity: Int,
                                                  _ written_out: UnsafeMutablePointer<Int>?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_voxels") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        try checkCapacity(dst_capacity, needed: s.voxelCount, written_out)
        let out = try required(dst, "dst")
        let states = s.voxelStates
        for i in 0..<states.count { out[i] = states[i] }
        written_out?.pointee = states.count
        return CK_OK
    }
}

@c @implementation public func ck_surface_elements(_ dst: UnsafeMutablePointer<ck_surface_element>?, _ dst_capacity: Int,
                                                    _ written_out: UnsafeMutablePointer<Int>?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_surface_elements") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let f = s.figures  // refreshes the normals
        _ = f
        let es = s.elements
        try checkCapacity(dst_capacity, needed: es.count, written_out, unit: "elements", elementSize: MemoryLayout<ck_surface_element>.stride)
        let out = try required(dst, "dst")
        for (i, e) in es.enumerated() {
            let p = s.position(of: e)
            let c = s.imageColor(e)
            var flags: UInt8 = e.views > 0 ? 1 : 0
            if s.isWellCovered(e) { flags |= 2 }
            if c != nil { flags |= 4 }
            if s.isOutOfReach(i) && flags & 2 == 0 { flags |= 8 }
            let col = c ?? SIMD3<UInt8>(0, 0, 0)
            out[i] = ck_surface_element(position: (p.x, p.y, p.z), normal: (e.nx, e.ny, e.nz), views: UInt32(e.views),
                                        spread_deg: e.spreadDeg, best_incidence_deg: e.bestIncidenceDeg,
                                        best_px_per_cm: e.bestPixelsPerCm, color: (col.x, col.y, col.z), flags: flags,
                                        side: Int32(s.side(normal: e.normal, at: p)))
        }
        written_out?.pointee = es.count
        return CK_OK
    }
}

@c @implementation public func ck_surface_export_ply(_ surface: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ colors: Int32,
                                                      _ flags: UInt32) -> ck_status {
    boundary("ck_surface_export_ply") { () throws(CaptureKitError) in
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let p = try readPath(path, "path")
        guard colors == Int32(CK_SURFACE_PLY_COVERAGE.rawValue) || colors == Int32(CK_SURFACE_PLY_IMAGE.rawValue) else {
            throw .invalidArgument("colors \(colors) is not a ck_surface_ply (CK_SURFACE_PLY_COVERAGE 0, CK_SURFACE_PLY_IMAGE 1)")
        }
        guard flags & ~CK_OPEN_OVERWRITE == 0 else {
            throw .invalidArgument("flags 0x\(String(flags, radix: 16)) has bits other than CK_OPEN_OVERWRITE")
        }
        try s.writePLY(p, imageColors: colors == Int32(CK_SURFACE_PLY_IMAGE.rawValue), overwrite: flags & CK_OPEN_OVERWRITE != 0)
        return CK_OK
    }
}

@c @implementation public func ck_session_surface(_ surface_out: UnsafeMutablePointer<OpaquePointer?>?, _ session: OpaquePointer?) -> ck_status {
    boundary("ck_session_surface") { () throws(CaptureKitError) in
        let out = try required(surface_out, "surface_out")
        let s = try object(session, "session", as: SessionHandle.self).session
        guard let m = s.surface else { throw .state("the session has no box yet, so no surface map") }
        out.pointee = OpaquePointer(Unmanaged.passUnretained(m).toOpaque())
        return CK_OK
    }
}

@c @implementation public func ck_dataset_set_surface(_ dataset: OpaquePointer?, _ surface: OpaquePointer?) -> ck_status {
    boundary("ck_dataset_set_surface") { () throws(CaptureKitError) in
        let ds = try object(dataset, "dataset", as: Dataset.self)
        var points: [SurfacePoint] = []
        if let p = surface {
            let m = try object(p, "surface", as: SurfaceMap.self)
            if m.fromDepth { points = m.points(imageColors: true) }
        }
        try ds.setSurfacePoints(points)
        return CK_OK
    }
}

@c @implementation public func ck_surface_next_view(_ out: UnsafeMutablePointer<ck_surface_view>?, _ surface: OpaquePointer?,
                                                     _ camera_pose: UnsafePointer<ck_mat4>?, _ intrinsics: UnsafePointer<ck_intrinsics>?) -> ck_status {
    boundary("ck_surface_next_view") { () throws(CaptureKitError) in
        let o = try required(out, "out")
        // A growable output: write the fields that fit in the caller's struct_size.
        let declared = Int(UnsafeRawPointer(o).load(as: UInt32.self))
        let known = MemoryLayout<ck_surface_view>.size
        guard declared >= known else {
            throw .invalidArgument("out->struct_size \(declared) is smaller than the first release's \(known) bytes; initialise it with CK_SURFACE_VIEW_INIT")
        }
        guard declared <= 4096 else { throw .invalidArgument("out->struct_size \(declared) is absurd") }
        let s = try object(surface, "surface", as: SurfaceMap.self)
        let pose = try readPose(camera_pose, "camera_pose")
        let k = try intrinsics.map { p throws(CaptureKitError) in try p.pointee.validated() }
        let v = s.nextBestView(from: pose, intrinsics: k)
        var r = ck_surface_view()
        r.struct_size = UInt32(known)
        r.side = v.side; r.complete = v.complete ? 1 : 0; r.candidates = v.candidates
        r.target_pose = ck_mat4(v.pose.matrix)
        r.move_angle = v.moveAngle; r.raise_angle = v.raiseAngle
        r.camera_azimuth = v.cameraAzimuth; r.camera_elevation = v.cameraElevation
        r.target_azimuth = v.targetAzimuth; r.target_elevation = v.targetElevation
        r.distance = v.distance; r.gain = v.gain; r.gain_fraction = v.gainFraction; r.reserved = 0
        r.text = staticCString(v.text)
        o.pointee = r
        return CK_OK
    }
}
