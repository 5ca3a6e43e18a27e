import Glibc

// Finishing a dataset: transforms.json, the manifests and the zip (finalize), cancel and close.

extension Dataset {
    /// The transforms.json model of the current frames.
    public func transforms() -> TransformsManifest {
        TransformsManifest(frames: frames.map {
            TransformsFrame(filePath: $0.imagePath, transform: $0.pose, intrinsics: $0.intrinsics, depthPath: $0.depthPath,
                            sharpness: $0.sharpness, timestamp: $0.timestamp, pass: $0.pass, frameID: $0.id,
                            streamIndex: $0.streamIndex)
        }, integerDepthScale: frames.contains { $0.depthPath != nil } ? 0.001 : nil,
           plyFilePath: namesPointCloud ? SurfacePLY.splatFileName : nil)
    }

    /// transforms.json names sparse_pc.ply: points were set, or (not set) the file exists from an
    /// earlier finalize of this dataset.
    var namesPointCloud: Bool {
        if let p = surfacePoints { return !p.isEmpty }
        return FileIO.exists(path(SurfacePLY.splatFileName))
    }

    /// Sets the initial point cloud of a splat dataset (world coordinates, the frames' frame):
    /// the next finalize writes it as sparse_pc.ply and names it in transforms.json's
    /// `ply_file_path` (what nerfstudio's splatfacto initialises from). Empty: no point cloud (the
    /// next finalize removes an earlier sparse_pc.ply). The points are copied.
    /// - Throws: `state` (read-only, closed or cancelled). A failed dataset takes the points (it
    ///   writes nothing; its finalize reports the failure).
    public func setSurfacePoints(_ points: [SurfacePoint]) throws(CaptureKitError) {
        guard !readOnly else { throw .state("the dataset was opened read-only") }
        guard !cancelled, journal != nil else { throw .state("the dataset is closed or cancelled") }
        surfacePoints = points
    }

    /// Writes transforms.json, boundingbox.json and the scan metadata; ends the streams; optionally zips.
    public func finalize(zipPath: String?) throws(CaptureKitError) {
        try flush()
        try committing { () throws(CaptureKitError) in try finalizeFlushed(zipPath: zipPath) }
    }

    func finalizeFlushed(zipPath: String?) throws(CaptureKitError) {
        try events?.sync()
        try cameraInfo?.sync()
        if let s = depthStream { try s.close(); depthStream = nil }
        if let s = confidenceStream { try s.close(); confidenceStream = nil }
        streamsClosed = true
        if let points = surfacePoints {
            let ply = path(SurfacePLY.splatFileName)
            if points.isEmpty {
                if FileIO.exists(ply) { try FileIO.remove(ply) }
            } else {
                try SurfacePLY.write(points, to: ply, overwrite: true)
                noteCreated(SurfacePLY.splatFileName)
            }
        }
        try transforms().write(to: path("transforms.json"), overwrite: true)
        noteCreated("transforms.json")
        try writeBoundingBox()
        if streamedFrames > 0, let (w, h) = streamSize {
            let fps = Dataset.frequency(frames: streamedFrames, span: streamSpan)
            // The colour camera first, as the app writes it: MultiScan's scripts take its
            // resolution and intrinsics for the camera-info lines, and the minimum of its and the
            // depth stream's frame counts.
            var streams: [ScanStream] = []
            if let k = streamColor {
                let video = options.colorVideo
                streams.append(ScanStream.colorCamera(encoding: video?.encoding ?? "none", fileExtension: video?.fileExtension ?? "none",
                                                      frequency: fps, frames: streamedFrames, intrinsics: k))
            }
            let depthFile = FileIO.exists(path("\(scanID).depth.zlib")), confidenceFile = FileIO.exists(path("\(scanID).confidence.zlib"))
            if depthFile { streams.append(ScanStream.depth(frequency: fps, frames: streamedFrames, width: Int64(w), height: Int64(h))) }
            if confidenceFile {
                streams.append(ScanStream.confidence(frequency: fps, frames: streamedFrames, resolution: StreamResolution(height: Int64(h), width: Int64(w))))
            }
            streams.append(ScanStream.cameraInfo(frequency: fps, frames: streamedFrames))
            // Every file of the scan: the streams written here, the camera-info lines, this
            // metadata, and the host's video when it said it writes one.
            let files = (depthFile ? 1 : 0) + (confidenceFile ? 1 : 0) + 2 + (options.colorVideo == nil ? 0 : 1)
            let meta = ScanMetadata(deviceID: options.deviceID, deviceType: options.deviceType, deviceName: options.deviceName,
                                    userName: options.userName, sceneDescription: options.sceneDescription,
                                    sceneType: options.sceneType, streams: streams, numberOfFiles: Int64(files),
                                    depthConfidenceAvailable: confidenceFile)
            try meta.write(to: path("\(scanID).json"), overwrite: true)
            noteCreated("\(scanID).json")
        }
        if let zipPath {
            let zip = try ZipWriter(path: zipPath, overwrite: false)
            var names = ["transforms.json", Dataset.journalName]
            if !boxes.isEmpty { names.append("boundingbox.json") }
            for f in frames { names.append(f.imagePath); if let d = f.depthPath { names.append(d) } }
            for extra in ["events.jsonl", SurfacePLY.splatFileName, "\(scanID).json", "\(scanID).jsonl", "\(scanID).depth.zlib", "\(scanID).confidence.zlib"]
            where FileIO.exists(path(extra)) { names.append(extra) }
            for n in names { try zip.addFile(n, from: path(n)) }
            _ = try zip.finish()
        }
    }

    /// Deletes everything this dataset created inside its folder.
    public func cancel() throws(CaptureKitError) {
        guard !readOnly else { throw .state("the dataset was opened read-only: cancel would delete its files") }
        try? writer?.stop()  // what it was writing is deleted below
        writer = nil
        cancelled = true
        defer { writeLock?.release(removingFile: true); writeLock = nil }
        journal?.closeQuietly(); journal = nil
        events?.closeQuietly(); events = nil
        cameraInfo?.closeQuietly(); cameraInfo = nil
        depthStream = nil; confidenceStream = nil
        var failed: [String] = []
        // Every path deleted here goes through the path rules (relative, inside the folder, no
        // symbolic link on the way), whatever list it comes from.
        func remove(_ rel: String) {
            do throws(CaptureKitError) {
                let p = try PathRules.contained(rel, in: directory)
                try FileIO.remove(p)
                if FileIO.exists(p + ".idx") { try FileIO.remove(p + ".idx") }
            } catch _ { failed.append(rel) }
        }
        for f in frames {
            // The capture's images: the library's, and the caller's written under the names the
            // library gave (images/…). Other caller files are left alone.
            if f.ownsImage || f.imagePath.hasPrefix("images/") { remove(f.imagePath) }
            if f.ownsImage { for s in Dataset.downscalePaths(f.imagePath) where FileIO.exists(path(s)) { remove(s) } }
            if let d = f.depthPath { remove(d) }
        }
        for rel in created.reversed() {
            if rel.isEmpty || Dataset.imageFolders.contains(rel) {
                // A folder still holding files the dataset did not write stays (with them).
                let kept = (try? FileIO.removeDirectory(rel.isEmpty ? directory : path(rel))) == nil
                if kept && !rel.isEmpty { failed.append(rel) }
            } else {
                remove(rel)
            }
        }
        if !failed.isEmpty { throw .io("cancel could not remove \(failed.joined(separator: ", "))") }
    }

    /// Writes what is queued, stops the background writer and flushes (the dataset stays
    /// resumable). Reports a background write failure.
    public func close() throws(CaptureKitError) {
        var first: CaptureKitError? = nil
        defer { writeLock?.release(); writeLock = nil }  // even on error: the handle is done
        do { try writer?.stop() } catch { first = recordFailure(error) }
        writer = nil
        if let f = state.withLock({ failure }) { first = f }
        if let first {
            // A failed dataset writes nothing more (no final block after a torn frame): its files
            // are closed as they are, and a reopen cuts them back to the last checkpoint.
            depthStream = nil; confidenceStream = nil
            events?.closeQuietly(); cameraInfo?.closeQuietly(); journal?.closeQuietly(); journal = nil
            throw first
        }
        do throws(CaptureKitError) {
            if journal != nil { try checkpointStreams() }
            try journal?.requireLinked()
            try events?.sync()
            try cameraInfo?.sync()
            if let s = depthStream { try s.close(); depthStream = nil }
            if let s = confidenceStream { try s.close(); confidenceStream = nil }
            try journal?.close(); journal = nil
        } catch { if first == nil { first = recordFailure(error) } }
        journal?.closeQuietly(); journal = nil
        if let first { throw first }
    }
}
