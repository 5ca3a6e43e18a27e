/// Depth pixels → world points (issue 12: for fitting the box, finding the floor and checks).
public enum DepthPoints {
    /// The world points of the valid pixels of a packed map of z-depth in metres (distance along
    /// the optical axis, as ARKit's sceneDepth), row by row: a pixel is valid when its depth is
    /// finite, > 0 and ≤ `maxDepth`. Pixel (x, y) is the ray through its centre (x + 0.5, y + 0.5);
    /// camera axes are OpenGL's (x right, y up, looking down −z), `pose` is camera-to-world.
    /// Writes at most `dst.count / 3` points as x, y, z floats (the C `ck_vec3` layout) and returns
    /// how many valid pixels there are (call with an empty `dst` to count). `intrinsics` must be
    /// the map's (same size).
    public static func backProject(metres: UnsafeBufferPointer<Float>, width: Int, height: Int, intrinsics k: Intrinsics,
                                   pose: Pose, maxDepth: Float, into dst: UnsafeMutableBufferPointer<Float>) -> Int {
        guard width > 0, height > 0, metres.count >= width * height else { return 0 }  // the caller checked
        let ifx = 1 / k.fx, ify = 1 / k.fy
        let room = dst.count / 3
        var n = 0
        for y in 0..<height {
            let cy = (Float(y) + 0.5 - k.cy) * ify
            for x in 0..<width {
                let d = metres[y * width + x]
                guard d.isFinite, d > 0, d <= maxDepth else { continue }
                if n < room {
                    let c = Vec3((Float(x) + 0.5 - k.cx) * ifx * d, -cy * d, -d)
                    let p = pose.t + pose.x * c.x + pose.y * c.y + pose.z * c.z
                    dst[3 * n] = p.x; dst[3 * n + 1] = p.y; dst[3 * n + 2] = p.z
                }
                n += 1
            }
        }
        return n
    }
}
