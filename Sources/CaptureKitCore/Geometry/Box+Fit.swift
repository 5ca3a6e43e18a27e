import Glibc

/// Options of `Box.fit(points:options:)` (`ck_fit_options`).
public struct FitOptions: Equatable, Sendable {
    /// When set, the box stands on this floor and points below `floor + floorMargin` are ignored.
    public var floor: Float?
    /// Metres above the floor still counted as floor.
    public var floorMargin: Float = 0.01
    /// Metres added on every side (never below the floor).
    public var padding: Float = 0

    public init(floor: Float? = nil, floorMargin: Float = 0.01, padding: Float = 0) {
        self.floor = floor; self.floorMargin = floorMargin; self.padding = padding
    }

    func validate() throws(CaptureKitError) {
        if let floor {
            try requireFinite(floor, "options.floor")
            guard abs(floor) <= Geometry.maxCoordinate else { throw .invalidArgument("options.floor is beyond ±\(Geometry.maxCoordinate) m") }
        }
        try requireFinite(floorMargin, "options.floor_margin")
        try requireFinite(padding, "options.padding")
        guard floorMargin >= 0, floorMargin <= Box.maxSize else { throw .invalidArgument("options.floor_margin must be in [0, \(Box.maxSize)] (got \(floorMargin))") }
        guard padding >= 0, padding <= Box.maxSize else { throw .invalidArgument("options.padding must be in [0, \(Box.maxSize)] (got \(padding))") }
    }
}

extension Box {
    /// Fits an upright box to points: yaw minimising the footprint area (minimum-area rectangle of
    /// the x-z convex hull, by rotating calipers), height spanning the points, bottom on the floor
    /// when one is given. The yaw is reported in (−π/4, π/4] (a rectangle's four equivalent
    /// headings are reduced to the smallest rotation). Sizes below `Box.minSize` are raised to it.
    /// - Throws: `invalidArgument` (non-finite point, bad options, box over the limits);
    ///   `notFound` when no point is left after the floor filter.
    public static func fit(points: UnsafeBufferPointer<Vec3>, options: FitOptions = FitOptions()) throws(CaptureKitError) -> Box {
        try options.validate()
        var xz: [SIMD2<Double>] = []
        xz.reserveCapacity(points.count)
        var minY = Double.infinity, maxY = -Double.infinity
        let cut = options.floor.map { Double($0) + Double(options.floorMargin) }
        for (i, p) in points.enumerated() {
            guard p.x.isFinite, p.y.isFinite, p.z.isFinite else { throw .invalidArgument("points[\(i)] is not finite (\(p.text))") }
            guard abs(p.x) <= Geometry.maxCoordinate, abs(p.y) <= Geometry.maxCoordinate, abs(p.z) <= Geometry.maxCoordinate else {
                throw .invalidArgument("points[\(i)] is beyond ±\(Geometry.maxCoordinate) m")
            }
            if let cut, Double(p.y) < cut { continue }
            xz.append(SIMD2(Double(p.x), Double(p.z)))
            minY = min(minY, Double(p.y)); maxY = max(maxY, Double(p.y))
        }
        guard !xz.isEmpty else {
            throw .notFound(points.isEmpty ? "no points (count is 0)" : "no point lies above the floor plus its margin")
        }
        let hull = convexHull(xz)
        // Candidate directions: each hull edge (the minimum-area rectangle has a side on one).
        var bestAngle = 0.0, bestArea = Double.infinity
        if hull.count >= 2 {
            for i in 0..<hull.count {
                let e = hull[(i + 1) % hull.count] - hull[i]
                let len = (e * e).sum().squareRoot()
                if len == 0 { continue }
                let u = e / len, w = SIMD2(-u.y, u.x)
                var lo = SIMD2(Double.infinity, Double.infinity), hi = -lo
                for p in hull {
                    let q = SIMD2((p * u).sum(), (p * w).sum())
                    lo = pointwiseMin(lo, q); hi = pointwiseMax(hi, q)
                }
                let area = (hi.x - lo.x) * (hi.y - lo.y)
                // Angle of the edge direction in the x-z plane, reduced mod 90°.
                var a = atan2(u.y, u.x).remainder(dividingBy: Double.pi / 2)
                if a <= -Double.pi / 4 { a += Double.pi / 2 }
                if area < bestArea * (1 - 1e-12) || (area <= bestArea * (1 + 1e-12) && abs(a) < abs(bestAngle)) {
                    bestArea = area; bestAngle = a
                }
            }
        }
        // Box local x in world is (cos yaw, 0, −sin yaw): an edge direction (ex, ez) at angle a
        // (ex = cos a, ez = sin a) means yaw = −a.
        var yaw = -bestAngle
        if yaw <= -Double.pi / 4 { yaw += Double.pi / 2 }
        let c = cos(yaw), s = sin(yaw)
        let ax = SIMD2(c, -s), az = SIMD2(s, c)  // local x and z axes in (x, z)
        var lo = SIMD2(Double.infinity, Double.infinity), hi = -lo
        for p in hull {
            let q = SIMD2((p * ax).sum(), (p * az).sum())
            lo = pointwiseMin(lo, q); hi = pointwiseMax(hi, q)
        }
        let pad = Double(options.padding)
        lo -= pad; hi += pad
        let mid = (lo + hi) / 2
        let centerXZ = ax * mid.x + az * mid.y
        var bottom = minY - pad, top = maxY + pad
        if let floor = options.floor { bottom = Double(floor) }
        if top < bottom { top = bottom }
        let minSize = Double(Box.minSize)
        let size = SIMD3<Double>(max(hi.x - lo.x, minSize), max(top - bottom, minSize), max(hi.y - lo.y, minSize))
        let center = SIMD3<Double>(centerXZ.x, (bottom + top) / 2, centerXZ.y)
        guard size.x <= Double(Box.maxSize), size.y <= Double(Box.maxSize), size.z <= Double(Box.maxSize) else {
            throw .invalidArgument("the points span more than \(Box.maxSize) m")
        }
        return try Box(center: Vec3(Float(center.x), Float(center.y), Float(center.z)),
                       size: Vec3(Float(size.x), Float(size.y), Float(size.z)),
                       yaw: Float(yaw), floor: options.floor)
    }

    /// Convex hull (counter-clockwise, no collinear points) by Andrew's monotone chain.
    static func convexHull(_ input: [SIMD2<Double>]) -> [SIMD2<Double>] {
        let pts = input.sorted { $0.x < $1.x || ($0.x == $1.x && $0.y < $1.y) }
        var unique: [SIMD2<Double>] = []
        unique.reserveCapacity(pts.count)
        for p in pts where unique.last != p { unique.append(p) }
        if unique.count < 3 { return unique }
        func turn(_ o: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        var hull: [SIMD2<Double>] = []
        for p in unique {
            while hull.count >= 2 && turn(hull[hull.count - 2], hull[hull.count - 1], p) <= 0 { hull.removeLast() }
            hull.append(p)
        }
        let lowerCount = hull.count + 1
        for p in unique.reversed().dropFirst() {
            while hull.count >= lowerCount && turn(hull[hull.count - 2], hull[hull.count - 1], p) <= 0 { hull.removeLast() }
            hull.append(p)
        }
        hull.removeLast()
        return hull
    }
}

extension Box {
    /// The share of the densest layer's points the floor layer must hold (`floorHeight`).
    public static let floorShare = 0.3

    /// The floor height under points of a gravity-aligned world (y up, as ARKit's), e.g. a depth
    /// map's world points (`DepthPoints`): the lowest horizontal layer 2 × `tolerance` thick
    /// holding at least `floorShare` of the points of the densest such layer; its height is the
    /// median of its points, refined once over ±`tolerance` around it. Robust to the object
    /// standing on the floor (its top and sides lie above; a table top may hold more points than
    /// the visible floor) and to stray points below (a sparse layer). Returns nil when fewer than
    /// 3 points support any layer. O(n log n).
    public static func floorHeight(ys input: [Float], tolerance: Float) -> (y: Float, inliers: Int)? {
        let ys = input.sorted()
        let n = ys.count
        guard n >= 3, tolerance > 0 else { return nil }
        // support[i] = points in [ys[i], ys[i] + 2 tolerance]
        var support = [Int](repeating: 0, count: n)
        var j = 0
        for i in 0..<n {
            if j < i { j = i }
            while j + 1 < n && ys[j + 1] <= ys[i] + 2 * tolerance { j += 1 }
            support[i] = j - i + 1
        }
        guard let best = support.max(), best >= 3 else { return nil }
        let need = max(3, Int((Double(best) * floorShare).rounded(.up)))
        guard let lowest = support.firstIndex(where: { $0 >= need }) else { return nil }
        func median(_ lo: Float, _ hi: Float) -> (Float, Int)? {
            guard let a = ys.firstIndex(where: { $0 >= lo }) else { return nil }
            var b = a
            while b + 1 < n && ys[b + 1] <= hi { b += 1 }
            guard ys[a] <= hi else { return nil }
            let m = (a + b) / 2
            let y = (b - a) % 2 == 0 ? ys[m] : (ys[m] + ys[m + 1]) / 2
            return (y, b - a + 1)
        }
        guard let first = median(ys[lowest], ys[lowest] + 2 * tolerance),
              let refined = median(first.0 - tolerance, first.0 + tolerance) else { return nil }
        return refined
    }
}
