/// Pinhole intrinsics of a `width × height` image, in pixels (`ck_intrinsics`).
///
/// Pixel coordinates are continuous with (0, 0) at the top-left image corner and v pointing down;
/// the centre of pixel (i, j) is (i + 0.5, j + 0.5). The camera-frame direction through (u, v) is
/// ((u − cx)/fx, −(v − cy)/fy, −1) (OpenGL camera axes).
public struct Intrinsics: Equatable, Sendable {
    public var fx: Float, fy: Float, cx: Float, cy: Float
    public var width: UInt32, height: UInt32

    /// Validated intrinsics: focal lengths finite and > 0, principal point finite, image size in
    /// 1...`Geometry.maxImageDimension`. - Throws: `invalidArgument` naming `name`.
    public init(fx: Float, fy: Float, cx: Float, cy: Float, width: UInt32, height: UInt32,
                name: String = "intrinsics") throws(CaptureKitError) {
        let values = SIMD4<Float>(fx, fy, cx, cy)
        if !(values.x.isFinite && values.y.isFinite && values.z.isFinite && values.w.isFinite)
            || max(abs(fx), abs(fy), abs(cx), abs(cy)) > 1e7 {
            throw .invalidArgument("\(name) (fx \(fx), fy \(fy), cx \(cx), cy \(cy)) must be finite and within ±1e7")
        }
        guard fx > 0, fy > 0 else { throw .invalidArgument("\(name): focal lengths must be > 0 (fx \(fx), fy \(fy))") }
        guard width >= 1, width <= Geometry.maxImageDimension, height >= 1, height <= Geometry.maxImageDimension else {
            throw .invalidArgument("\(name).width x height must be in 1...\(Geometry.maxImageDimension) (got \(width) x \(height))")
        }
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy; self.width = width; self.height = height
    }

    /// The same camera at another resolution: fx, cx scale by width′/width, fy, cy by height′/height.
    /// - Throws: `invalidArgument` for a size outside 1...`Geometry.maxImageDimension`.
    public func scaled(width w: UInt32, height h: UInt32) throws(CaptureKitError) -> Intrinsics {
        let sx = Float(Double(w) / Double(width)), sy = Float(Double(h) / Double(height))
        return try Intrinsics(fx: fx * sx, fy: fy * sy, cx: cx * sx, cy: cy * sy, width: w, height: h,
                              name: "scaled intrinsics")
    }

    /// The 3×3 camera matrix K = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] as 9 numbers, row by row
    /// or (`columnMajor`, as ARKit's simd_float3x3 and MultiScan's camera-info lines) column by column.
    public func matrix(columnMajor: Bool) -> [Float] {
        columnMajor ? [fx, 0, 0, 0, fy, 0, cx, cy, 1] : [fx, 0, cx, 0, fy, cy, 0, 0, 1]
    }

    /// Intrinsics from a 3×3 camera matrix (`matrix(columnMajor:)`'s layout) and the image size.
    /// - Throws: `invalidArgument` when it is not a pinhole matrix without skew (every other entry
    ///   exactly 0, the corner 1: a matrix in the other layout fails here), or as `init`.
    public init(matrix m: [Float], columnMajor: Bool, width: UInt32, height: UInt32) throws(CaptureKitError) {
        guard m.count == 9 else { throw .invalidArgument("matrix has \(m.count) numbers, not 9") }
        // (row, column) → index.
        func at(_ r: Int, _ c: Int) -> Float { columnMajor ? m[c * 3 + r] : m[r * 3 + c] }
        let layout = columnMajor ? "column-major" : "row-major"
        guard at(0, 1) == 0 else {
            throw .invalidArgument("matrix (\(layout)) has skew \(at(0, 1)); ck_intrinsics has none")
        }
        guard at(1, 0) == 0, at(2, 0) == 0, at(2, 1) == 0, at(2, 2) == 1 else {
            throw .invalidArgument("matrix (\(layout)) is not [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]: row 3 is (\(at(2, 0)), \(at(2, 1)), \(at(2, 2))), K[1][0] = \(at(1, 0)) (the other layout?)")
        }
        try self.init(fx: at(0, 0), fy: at(1, 1), cx: at(0, 2), cy: at(1, 2), width: width, height: height, name: "matrix")
    }

    /// The pixel (u, v) a camera-frame point projects to: (cx + fx·x/−z, cy − fy·y/−z), the
    /// inverse of `cameraDirection`; nil for a point not in front of the camera (z ≥ 0). The one
    /// projection of the library (coverage's dial and the scheduler's box-in-frame gate use it).
    @inline(__always) public func project(camera p: Vec3) -> SIMD2<Float>? {
        guard p.z < 0 else { return nil }
        return SIMD2(cx + fx * p.x / -p.z, cy - fy * p.y / -p.z)
    }

    /// Camera-frame direction (not normalised) through pixel (u, v).
    @inline(__always) public func cameraDirection(u: Float, v: Float) -> Vec3 {
        Vec3((u - cx) / fx, -(v - cy) / fy, -1)
    }
}
