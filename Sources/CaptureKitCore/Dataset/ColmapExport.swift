/// COLMAP's text model (`cameras.txt`, `images.txt`, `points3D.txt`) of a finished dataset, so
/// COLMAP (`point_triangulator`, `mapper` with known poses) and the tools built on its format
/// start from the capture's poses.
///
/// - Source: the dataset's `transforms.json` (finish or finalise the dataset first; a crashed one
///   is reopened and finalised).
/// - Cameras: one per distinct intrinsics (size and focal lengths / centre), `PINHOLE` (`fx fy cx
///   cy`), or `OPENCV` (`fx fy cx cy k1 k2 p1 p2`) when transforms.json has distortion.
/// - Images: in transforms.json's order, ids from 1, `QW QX QY QZ TX TY TZ` the world-to-camera
///   rotation (unit quaternion, QW ≥ 0) and translation in COLMAP's camera axes (OpenCV: +x right,
///   +y down, +z forward; transforms.json's are OpenGL), NAME the image's path relative to the
///   dataset (run COLMAP with the dataset folder as its image path), an empty POINTS2D line.
/// - `points3D.txt`: the dataset's initial point cloud, when transforms.json names one
///   (`ply_file_path`: the measured surface coloured by the captures, sparse_pc.ply): one line
///   `POINT3D_ID X Y Z R G B ERROR` per point, ids from 1, world coordinates, ERROR 0 and an
///   empty track (the points come from depth, not from triangulation); else its header only.
/// The three files are written atomically and never replace existing ones.
public enum ColmapExport {
    public static let fileNames = ["cameras.txt", "images.txt", "points3D.txt"]

    /// Writes the model into `outDir` (created if missing; its parent must exist); returns the
    /// number of cameras and images.
    /// - Throws: `notFound` (no transforms.json, no parent folder, or the point cloud that
    ///   transforms.json names is missing), `corrupt` (a damaged transforms.json or point cloud,
    ///   or a `ply_file_path` that leaves the dataset), `unsupported` (a PLY layout not read),
    ///   `exists` (one of the files exists), `io`.
    @discardableResult
    public static func write(dataset: String, to outDir: String) throws(CaptureKitError) -> (cameras: Int, images: Int) {
        let manifest = try TransformsManifest.read(from: "\(Dataset.normalise(dataset))/transforms.json")
        let out = Dataset.normalise(outDir)
        // The point cloud first: a damaged one refuses the export before anything is written.
        var points: [SurfacePoint] = []
        if let rel = manifest.plyFilePath {
            let full: String
            do { full = try PathRules.readable(rel, in: Dataset.normalise(dataset)) } catch {
                throw .corrupt("transforms.json's ply_file_path \"\(rel)\": \(error.message)")
            }
            points = try SurfacePLY.read(full)
        }
        for name in fileNames where FileIO.exists("\(out)/\(name)") {
            throw .exists("\(out)/\(name) exists already; the library does not overwrite files")
        }
        _ = try FileIO.makeDirectory(out)

        let d = manifest.distortion.flatMap { $0 == Distortion() ? nil : $0 }
        var cameras: [Intrinsics] = []
        var cameraLines = ""
        var imageLines = ""
        for (i, f) in manifest.frames.enumerated() {
            let k = f.intrinsics
            let camera: Int
            if let c = cameras.firstIndex(of: k) {
                camera = c + 1
            } else {
                cameras.append(k)
                camera = cameras.count
                let params = [k.fx, k.fy, k.cx, k.cy] + (d.map { [$0.k1, $0.k2, $0.p1, $0.p2] } ?? [])
                cameraLines += "\(camera) \(d == nil ? "PINHOLE" : "OPENCV") \(k.width) \(k.height) "
                    + params.map { "\(Double($0))" }.joined(separator: " ") + "\n"
            }
            let (q, t) = worldToCamera(f.transform)
            imageLines += "\(i + 1) \(q.w) \(q.x) \(q.y) \(q.z) \(t.x) \(t.y) \(t.z) \(camera) \(f.filePath)\n\n"
        }
        var pointLines = ""
        pointLines.reserveCapacity(points.count * 64)
        for (i, p) in points.enumerated() {
            pointLines += "\(i + 1) \(Double(p.position.x)) \(Double(p.position.y)) \(Double(p.position.z)) \(p.color.x) \(p.color.y) \(p.color.z) 0\n"
        }
        let files = [
            "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
                + "# Number of cameras: \(cameras.count)\n" + cameraLines,
            "# Image list with two lines of data per image:\n#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n"
                + "#   POINTS2D[] as (X, Y, POINT3D_ID)\n# Number of images: \(manifest.frames.count), mean observations per image: 0\n"
                + imageLines,
            "# 3D point list with one line of data per point:\n"
                + "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
                + "# Number of points: \(points.count), mean track length: 0\n" + pointLines,
        ]
        for (name, text) in zip(fileNames, files) {
            let bytes = Array(text.utf8)
            try bytes.withUnsafeBufferPointer { (b) throws(CaptureKitError) in
                try FileIO.writeAtomically("\(out)/\(name)", UnsafeRawBufferPointer(b), overwrite: false)
            }
        }
        return (cameras.count, manifest.frames.count)
    }

    /// COLMAP's world-to-camera of an OpenGL camera-to-world matrix, in Double: R = (R_gl ·
    /// diag(1, −1, −1))ᵀ, t = −R · c; the unit quaternion with w ≥ 0.
    static func worldToCamera(_ m: Matrix4) -> (q: (w: Double, x: Double, y: Double, z: Double), t: (x: Double, y: Double, z: Double)) {
        // Columns of the OpenCV camera-to-world rotation: x, −y, −z of the OpenGL one.
        func col(_ c: Int, _ s: Double) -> (Double, Double, Double) {
            (s * Double(m[0, c]), s * Double(m[1, c]), s * Double(m[2, c]))
        }
        let cx = col(0, 1), cy = col(1, -1), cz = col(2, -1)
        // R (world-to-camera) has these columns as its rows.
        let r = [[cx.0, cx.1, cx.2], [cy.0, cy.1, cy.2], [cz.0, cz.1, cz.2]]
        let c = (Double(m[0, 3]), Double(m[1, 3]), Double(m[2, 3]))
        let t = (x: -(r[0][0] * c.0 + r[0][1] * c.1 + r[0][2] * c.2),
                 y: -(r[1][0] * c.0 + r[1][1] * c.1 + r[1][2] * c.2),
                 z: -(r[2][0] * c.0 + r[2][1] * c.1 + r[2][2] * c.2))
        // Shepperd's method: the largest of w², x², y², z² first, for accuracy.
        let tr = r[0][0] + r[1][1] + r[2][2]
        var q: (w: Double, x: Double, y: Double, z: Double)
        if tr > 0 {
            let s = (tr + 1).squareRoot() * 2
            q = (0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s)
        } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
            let s = (1 + r[0][0] - r[1][1] - r[2][2]).squareRoot() * 2
            q = ((r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s)
        } else if r[1][1] > r[2][2] {
            let s = (1 + r[1][1] - r[0][0] - r[2][2]).squareRoot() * 2
            q = ((r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s)
        } else {
            let s = (1 + r[2][2] - r[0][0] - r[1][1]).squareRoot() * 2
            q = ((r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s)
        }
        let n = (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
        let sign: Double = q.w < 0 ? -1 : 1
        q = (sign * q.w / n, sign * q.x / n, sign * q.y / n, sign * q.z / n)
        return (q, t)
    }
}
