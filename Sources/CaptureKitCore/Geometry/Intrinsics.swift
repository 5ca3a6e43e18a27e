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
        for (v, n) in [(fx, "fx"), (fy, "fy"), (cx, "cx"), (cy, "cy")] {
            guard v.isFinite else { throw .invalidArgument("\(name).\(n) is not finite (\(v))") }
            guard abs(v) <= 1e7 else { throw .invalidArgument("\(name).\(n) is absurdly large (\(v))") }
        }
        guard fx > 0, fy > 0 else { throw .invalidArgument("\(name): focal lengths must be > 0 (fx \(fx), fy \(fy))") }
        for (v, n) in [(width, "width"), (height, "height")] {
            guard v >= 1, v <= Geometry.maxImageDimension else {
                throw .invalidArgument("\(name).\(n) must be in 1...\(Geometry.maxImageDimension) (got \(v))")
            }
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

    /// Camera-frame direction (not normalised) through pixel (u, v).
    @inline(__always) public func cameraDirection(u: Float, v: Float) -> Vec3 {
        Vec3((u - cx) / fx, -(v - cy) / fy, -1)
    }
}
