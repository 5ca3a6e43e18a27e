/// How a box appears from a camera: its distance and how much of its silhouette the image shows
/// (the scheduler's distance and box-in-frame gates).
extension Box {
    /// The corner pairs joined by the 12 edges (corner order of `cornerSigns`): the front face's
    /// ring, the back face's ring, then front-to-back.
    static let edges: [(Int, Int)] = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                                      (0, 4), (1, 5), (2, 6), (3, 7)]

    /// Points closer to the camera plane than this are clipped away (metres in front of the
    /// camera centre) before projecting: a box reaching behind the camera projects as its part in
    /// front of this plane, which is huge, so only a small fraction of it lies in the image.
    static let nearPlane: Float = 1e-3

    /// Distance from `point` to the nearest point of the closed box, metres; 0 inside (or on a face).
    public func distance(to point: Vec3) -> Float {
        let local = SIMD3<Double>(toLocal(direction: point - center)), h = SIMD3<Double>(halfSize)
        var sum = 0.0
        for i in 0..<3 {
            let excess = max(0, abs(local[i]) - h[i])
            sum += excess * excess
        }
        return Float(sum.squareRoot())
    }

    /// The fraction (0...1) of the box's silhouette in the image of a camera
    /// (`silhouetteInFrame(pose:intrinsics:).fraction`).
    public func fractionInFrame(pose: Pose, intrinsics k: Intrinsics) -> Float {
        silhouetteInFrame(pose: pose, intrinsics: k).fraction
    }

    /// How the box's silhouette meets the image of a camera: `fraction` (0...1), the part of the
    /// silhouette inside the image — the convex hull of the projected corners (`Intrinsics.project`,
    /// camera pose → `Pose.toCamera`), clipped to the image rectangle [0, width] × [0, height],
    /// over the hull's whole area — and `fill` (0...1), the image area that part covers over the
    /// image's area. Corners behind the camera are handled by clipping the box's edges at a near
    /// plane 1 mm in front of the camera (the hull of the projected kept corners and edge
    /// crossings is the clipped box's silhouette). Both 0 when no part of the box is in front of
    /// the camera; a camera inside the box sees a silhouette far larger than the image, so a
    /// fraction near 0 and a fill of 1.
    public func silhouetteInFrame(pose: Pose, intrinsics k: Intrinsics) -> (fraction: Float, fill: Float) {
        let cam = corners.map { pose.toCamera($0) }
        let zNear = -Box.nearPlane
        var points: [SIMD2<Double>] = []
        points.reserveCapacity(20)
        for c in cam where c.z <= zNear {
            if let px = k.project(camera: c) { points.append(SIMD2(Double(px.x), Double(px.y))) }
        }
        for (a, b) in Box.edges {
            let pa = cam[a], pb = cam[b]
            guard (pa.z < zNear) != (pb.z < zNear), pa.z != pb.z else { continue }
            let s = (zNear - pa.z) / (pb.z - pa.z)
            var q = pa + (pb - pa) * s
            q.z = zNear
            if let px = k.project(camera: q) { points.append(SIMD2(Double(px.x), Double(px.y))) }
        }
        guard !points.isEmpty else { return (0, 0) }
        let hull = hull2D(points)
        let whole = area2D(hull)
        let w = Double(k.width), h = Double(k.height)
        guard whole > 1e-12 else {  // degenerate (never for a real box in front): all in or not, no area
            return (points.allSatisfy { $0.x >= 0 && $0.x <= w && $0.y >= 0 && $0.y <= h } ? 1 : 0, 0)
        }
        let inside = area2D(clipToRect(hull, width: w, height: h))
        let image = w * h
        return (Float(min(1, max(0, inside / whole))), image > 0 ? Float(min(1, max(0, inside / image))) : 0)
    }
}

/// The convex hull of points, counter-clockwise in (x, y) (Andrew's monotone chain); collinear
/// points are dropped.
func hull2D(_ points: [SIMD2<Double>]) -> [SIMD2<Double>] {
    let p = points.sorted { $0.x < $1.x || ($0.x == $1.x && $0.y < $1.y) }
    guard p.count > 2 else { return p }
    func turn(_ o: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    }
    var lower: [SIMD2<Double>] = [], upper: [SIMD2<Double>] = []
    for q in p {
        while lower.count >= 2 && turn(lower[lower.count - 2], lower[lower.count - 1], q) <= 0 { lower.removeLast() }
        lower.append(q)
    }
    for q in p.reversed() {
        while upper.count >= 2 && turn(upper[upper.count - 2], upper[upper.count - 1], q) <= 0 { upper.removeLast() }
        upper.append(q)
    }
    return Array(lower.dropLast()) + Array(upper.dropLast())
}

/// The absolute area of a simple polygon (shoelace formula).
func area2D(_ poly: [SIMD2<Double>]) -> Double {
    guard poly.count >= 3 else { return 0 }
    var twice = 0.0
    for i in poly.indices {
        let a = poly[i], b = poly[(i + 1) % poly.count]
        twice += a.x * b.y - b.x * a.y
    }
    return abs(twice) / 2
}

/// A convex polygon clipped to the rectangle [0, width] × [0, height] (Sutherland–Hodgman).
func clipToRect(_ poly: [SIMD2<Double>], width: Double, height: Double) -> [SIMD2<Double>] {
    // Each edge of the rectangle as (axis, bound, keep ≤ bound?).
    let planes: [(axis: Int, bound: Double, below: Bool)] = [(0, 0, false), (0, width, true), (1, 0, false), (1, height, true)]
    var out = poly
    for plane in planes {
        guard !out.isEmpty else { break }
        let input = out
        out = []
        func inside(_ q: SIMD2<Double>) -> Bool { plane.below ? q[plane.axis] <= plane.bound : q[plane.axis] >= plane.bound }
        for i in input.indices {
            let a = input[i], b = input[(i + 1) % input.count]
            let ina = inside(a), inb = inside(b)
            if ina { out.append(a) }
            if ina != inb {
                let s = (plane.bound - a[plane.axis]) / (b[plane.axis] - a[plane.axis])
                var q = a + (b - a) * s
                q[plane.axis] = plane.bound
                out.append(q)
            }
        }
    }
    return out
}
