import Glibc

/// The next-best view of a surface map (`ck_surface_view`): where the operator should stand for
/// the next capture, and what it is expected to add.
public struct NextView: Sendable {
    /// The side most of the expected gain lies on (0...5), or −1 when nothing is to be gained
    /// (or nothing is seen yet).
    public var side: Int32 = -1
    /// Every side of the side mask is complete; the view is then the best one to refine further.
    public var complete = false
    /// Candidate views scored.
    public var candidates: UInt32 = 0
    /// Camera-to-world pose at the target, looking at the box centre (OpenGL camera axes).
    public var pose: Pose
    /// Angle to walk around the object, radians in (−π, π]: positive = to the operator's left
    /// while facing the object (`CoverageHint.moveAngle`'s convention).
    public var moveAngle: Float = 0
    /// Elevation change, radians: positive = higher.
    public var raiseAngle: Float = 0
    public var cameraAzimuth: Float = 0, cameraElevation: Float = 0
    public var targetAzimuth: Float = 0, targetElevation: Float = 0
    /// Distance from the box centre of the candidate ring (the working distance), metres.
    public var distance: Float = 0
    /// Expected gain, in surface elements: elements the view would make well covered plus partial
    /// progress (a quarter per threshold it would newly meet) and the unseen surface it would reveal.
    public var gain: Float = 0
    /// `gain` over the estimated surface (observed + frontier).
    public var gainFraction: Float = 0
    public var text: StaticString = "Point the camera at the object\0"
}

/// Next-best-view planner over a `SurfaceMap` (issue 23).
///
/// Candidates: `ringAzimuths` azimuths × `ringElevations` around the box at the working distance
/// (the camera's distance from the box centre, at least the box's half diagonal + 5 %), each
/// camera looking at the box centre. Each candidate casts a coarse grid of rays through the map
/// (within its field of view; occlusion included: a ray stops at the first surface voxel). A ray
/// that reaches a surface element facing it scores what the view would add to that element (the
/// "well covered" thresholds: views, spread, incidence, resolution — a quarter per threshold
/// newly met, one more when the element becomes well covered); a ray that reaches the frontier
/// (from free space into unknown space next to the surface) or reaches seen surface from behind
/// through unknown space (unseen surface must lie in between) scores `revealValue` per element of
/// unseen surface it would reveal. Each ray stands for the elements in its footprint ((distance ·
/// ray spacing / voxel)², more on oblique surface). All candidates are scored with
/// `coarseGrid` rays, the `refined` best again with `fineGrid` rays; the best of those wins.
extension SurfaceMap {
    /// Elevations of the candidate rings, radians (5°, 30°, 60°).
    public static let ringElevations: [Float] = [5 * .pi / 180, 30 * .pi / 180, 60 * .pi / 180]
    /// Azimuths per ring.
    public static let ringAzimuths = 16
    static let coarseGrid = SIMD2<Int>(10, 8)
    static let fineGrid = SIMD2<Int>(24, 18)
    static let refined = 4
    /// Value of one element of unseen surface a view would reveal (an element seen once at a good
    /// angle meets about 2.3 of the 4 thresholds: 0.58).
    static let revealValue: Float = 0.6

    /// The camera the planner assumes when the caller gives none: a phone's wide camera,
    /// 1920 × 1440, focal 1450 px (67° × 53°).
    public static let defaultPlannerIntrinsics = Intrinsics(uncheckedFx: 1450, fy: 1450, cx: 960, cy: 720, width: 1920, height: 1440)

    /// The candidate camera position (box-local) at azimuth `az` (`ck_coverage_dial`'s convention:
    /// 0 in front, π/2 on the left) and elevation `el`, `r` metres from the box centre.
    public static func candidatePosition(azimuth az: Float, elevation el: Float, distance r: Float) -> Vec3 {
        Vec3(-sin(az) * cos(el), sin(el), -cos(az) * cos(el)) * r
    }

    /// The next-best view from the camera at `pose` (camera-to-world), for a camera with
    /// `intrinsics` (nil: `defaultPlannerIntrinsics`).
    public func nextBestView(from pose: Pose, intrinsics: Intrinsics? = nil) -> NextView {
        let k = intrinsics ?? SurfaceMap.defaultPlannerIntrinsics
        let figs = figures
        let cam = box.toLocal(direction: pose.t - box.center)
        let camAz = atan2(-cam.x, -cam.z)
        let camEl = atan2(cam.y, (cam.x * cam.x + cam.z * cam.z).squareRoot())
        let r = max(length(cam), length(box.halfSize) * 1.05)
        var out = NextView(pose: pose)
        out.cameraAzimuth = camAz; out.cameraElevation = camEl; out.distance = r
        out.targetAzimuth = camAz; out.targetElevation = camEl
        out.complete = figs.sidesCompleted == UInt32((options.sideMask & 0x3F).nonzeroBitCount)
        guard fromDepth, !elements.isEmpty else {
            let h = sideRuleHint(pose: pose)
            out.side = h.side; out.text = h.text
            out.targetAzimuth = h.targetAzimuth; out.targetElevation = h.targetElevation
            out.moveAngle = h.moveAngle; out.raiseAngle = h.targetElevation - camEl
            out.pose = targetPose(azimuth: h.targetAzimuth, elevation: h.targetElevation, distance: r) ?? pose
            return out
        }
        let elevations = SurfaceMap.ringElevations, nAz = SurfaceMap.ringAzimuths
        var coarse = [Float](repeating: 0, count: elevations.count * nAz)
        withVoxels { st, ix in
            elements.withUnsafeBufferPointer { es in
                let scorer = ViewScorer(map: self, states: st, elementOfVoxel: ix, elements: es, intrinsics: k)
                for e in elevations.indices {
                    for a in 0..<nAz {
                        let az = wrapAngle(Float(a) * 2 * .pi / Float(nAz))
                        coarse[e * nAz + a] = scorer.score(SurfaceMap.candidatePosition(azimuth: az, elevation: elevations[e], distance: r),
                                                           grid: SurfaceMap.coarseGrid).gain
                    }
                }
                // Refine the best few with a finer grid; ties go to the smaller walk.
                let order = coarse.indices.sorted { coarse[$0] > coarse[$1] }
                var best = -1
                var bestScore: (gain: Float, sides: SIMD8<Float>) = (0, .zero), bestRank: Float = 0
                for c in order.prefix(SurfaceMap.refined) where coarse[c] > 0 {
                    let az = wrapAngle(Float(c % nAz) * 2 * .pi / Float(nAz)), el = elevations[c / nAz]
                    let s = scorer.score(SurfaceMap.candidatePosition(azimuth: az, elevation: el, distance: r), grid: SurfaceMap.fineGrid)
                    let travel = abs(wrapAngle(az - camAz)) + abs(el - camEl)
                    let rank = s.gain * (1 - 0.05 * travel / .pi)
                    if best < 0 || rank > bestRank { best = c; bestScore = s; bestRank = rank }
                }
                out.candidates = UInt32(coarse.count + min(SurfaceMap.refined, coarse.count))
                guard best >= 0 else { return }
                let az = wrapAngle(Float(best % nAz) * 2 * .pi / Float(nAz)), el = elevations[best / nAz]
                out.targetAzimuth = az; out.targetElevation = el
                out.gain = bestScore.gain
                var side = 0
                for s in 1..<6 where bestScore.sides[s] > bestScore.sides[side] { side = s }
                out.side = Int32(side)
            }
        }
        let total = Float(figs.all.observed + figs.all.frontier)
        out.gainFraction = total > 0 ? out.gain / total : 0
        out.moveAngle = wrapAngle(-(out.targetAzimuth - camAz))
        out.raiseAngle = out.targetElevation - camEl
        out.pose = targetPose(azimuth: out.targetAzimuth, elevation: out.targetElevation, distance: r) ?? pose
        if out.complete {
            out.text = "Surface complete\0"
        } else if out.side < 0 {
            out.text = "Point the camera at the object\0"
        } else {
            out.text = SurfaceMap.viewPrompt(side: Int(out.side), moveAngle: out.moveAngle, raiseAngle: out.raiseAngle)
        }
        return out
    }

    /// The world camera-to-world pose at a candidate position, looking at the box centre.
    func targetPose(azimuth: Float, elevation: Float, distance: Float) -> Pose? {
        let local = SurfaceMap.candidatePosition(azimuth: azimuth, elevation: elevation, distance: distance)
        let eye = box.center + box.toWorld(direction: local)
        return try? Pose.lookAt(eye: eye, target: box.center, up: Vec3(0, 1, 0))
    }

    /// "Move left to see the back"; "Move higher to see the top" when the walk is short and the
    /// climb is not; "Stay here: capture the front" when both are small.
    static func viewPrompt(side: Int, moveAngle: Float, raiseAngle: Float) -> StaticString {
        if abs(moveAngle) <= .pi / 6 {
            if raiseAngle > .pi / 9 { return side == 4 ? "Move higher to see the top\0" : "Move higher\0" }
            if raiseAngle < -.pi / 9 { return "Move lower\0" }
        }
        if side == 4 || side == 3 {
            let here = abs(moveAngle) <= .pi / 6
            if here { return side == 4 ? "Stay here: capture the top\0" : "Stay here: capture the bottom\0" }
            if side == 4 { return moveAngle > 0 ? "Move left to see the top\0" : "Move right to see the top\0" }
            return moveAngle > 0 ? "Move left to see the bottom\0" : "Move right to see the bottom\0"
        }
        return prompt(side: side, moveAngle: moveAngle)
    }
}

/// Scores one candidate view by casting a grid of rays through the voxel map. Its buffers are the
/// map's own, borrowed for one `SurfaceMap.withVoxels` call: a scorer never outlives that closure
/// (it is built and used inside it, and never stored).
struct ViewScorer {
    let states: UnsafeBufferPointer<UInt8>
    let elementOfVoxel: UnsafeBufferPointer<Int32>
    let elements: UnsafeBufferPointer<SurfaceElement>
    let dims: SIMD3<Int>
    let origin: Vec3
    let voxel: Float
    let k: Intrinsics
    let options: SurfaceOptions
    let cosMax: Float
    let map: SurfaceMap

    init(map: SurfaceMap, states: UnsafeBufferPointer<UInt8>, elementOfVoxel: UnsafeBufferPointer<Int32>,
         elements: UnsafeBufferPointer<SurfaceElement>, intrinsics: Intrinsics) {
        self.map = map
        self.states = states; self.elementOfVoxel = elementOfVoxel; self.elements = elements
        dims = map.dims; origin = map.origin; voxel = map.voxelSize; k = intrinsics
        options = map.options
        cosMax = cos(map.options.maxIncidenceDeg * .pi / 180)
    }

    /// The share of the four thresholds met, in quarters (views and spread count partially).
    @inline(__always) func potential(views: Float, sum: Vec3, bestCos: Float, res: Float) -> Float {
        var p = min(1, views / Float(options.minViews))
        if views > 1 {
            let spread = 2 * acos(min(1, length(sum) / views)) * 180 / .pi
            p += options.minSpreadDeg > 0 ? min(1, spread / options.minSpreadDeg) : 1
        } else if options.minSpreadDeg <= 0 {
            p += 1
        }
        if bestCos >= cosMax { p += 1 }
        if res >= options.minPixelsPerCm { p += 1 }
        return p / 4
    }

    /// Gain and per-side gain (indices 0...5) of a camera at box-local `eye` looking at the box centre.
    func score(_ eye: Vec3, grid: SIMD2<Int>) -> (gain: Float, sides: SIMD8<Float>) {
        let f = -eye / length(eye)
        var right = cross(f, Vec3(0, 1, 0))
        if length(right) < 1e-4 { right = Vec3(1, 0, 0) }
        right = right / length(right)
        let up = cross(right, f)
        let w = Float(k.width), h = Float(k.height)
        // Ray spacing (radians at the image centre): the footprint of a ray at distance t is (t·Δ)².
        let du = w / Float(grid.x), dv = h / Float(grid.y)
        let footprint = (du / k.fx) * (dv / k.fy) / (voxel * voxel)
        let focal = (k.fx + k.fy) / 2
        var total: Float = 0
        var sides = SIMD8<Float>(repeating: 0)
        for gy in 0..<grid.y {
            let b = ((Float(gy) + 0.5) * dv - k.cy) / k.fy
            for gx in 0..<grid.x {
                let a = ((Float(gx) + 0.5) * du - k.cx) / k.fx
                let ray = right * a - up * b + f
                let zPerT = 1 / length(ray)  // z-depth per unit distance along the ray
                let d = ray * zPerT
                let (g, s) = cast(eye, d, zPerT: zPerT, footprint: footprint, focal: focal)
                total += g
                if s >= 0 { sides[s] += g }
            }
        }
        return (total, sides)
    }

    /// One ray: (gain, side of the gain or −1).
    @inline(__always) func cast(_ o: Vec3, _ d: Vec3, zPerT: Float, footprint: Float, focal: Float) -> (Float, Int) {
        let g = (o - origin) / voxel
        let n = SIMD3<Float>(Float(dims.x), Float(dims.y), Float(dims.z))
        var t0: Float = 0, t1 = Float.greatestFiniteMagnitude
        for a in 0..<3 {
            if abs(d[a]) < 1e-9 {
                if g[a] < 0 || g[a] >= n[a] { return (0, -1) }
                continue
            }
            var ta = (0 - g[a]) / d[a], tb = (n[a] - g[a]) / d[a]
            if ta > tb { swap(&ta, &tb) }
            t0 = max(t0, ta); t1 = min(t1, tb)
        }
        guard t1 > t0 else { return (0, -1) }
        let p = g + d * (t0 + 1e-4)
        var c = SIMD3<Int>(min(dims.x - 1, max(0, Int(p.x))), min(dims.y - 1, max(0, Int(p.y))), min(dims.z - 1, max(0, Int(p.z))))
        var step = SIMD3<Int>(0, 0, 0), tMax = Vec3(repeating: .infinity), tDelta = Vec3(repeating: .infinity)
        for a in 0..<3 where abs(d[a]) >= 1e-9 {
            step[a] = d[a] > 0 ? 1 : -1
            tMax[a] = t0 + (Float(c[a] + (d[a] > 0 ? 1 : 0)) - p[a]) / d[a]
            tDelta[a] = 1 / abs(d[a])
        }
        let sx = 1, sy = dims.x, sz = dims.x * dims.y
        var i = (c.z * dims.y + c.y) * dims.x + c.x
        var t = t0
        var prevFree = false
        var unknownRun = 0
        var guardSteps = dims.x + dims.y + dims.z + 3
        while guardSteps > 0 {
            guardSteps -= 1
            let s = states[i] & 3
            if s == VoxelState.occupied.rawValue {
                let e = Int(elementOfVoxel[i])
                let dist = t * voxel
                guard e >= 0, e < elements.count else { return (0, -1) }
                let el = elements[e]
                let toCam = -d
                let nrm = el.normal
                let cosI = dot(nrm, toCam)
                let area = footprint * dist * dist  // (t·Δ)² in voxels
                if length(nrm) > 0 && cosI <= 0.05 {
                    // Seen surface from behind: through unknown space, unseen surface lies in between.
                    guard unknownRun >= 2 else { return (0, -1) }
                    return (SurfaceMap.revealValue * area, map.side(normal: toCam, at: map.centre(of: c)))
                }
                let views = Float(el.views)
                let before = map.isWellCovered(el)
                let p0 = potential(views: views, sum: Vec3(el.dx, el.dy, el.dz), bestCos: el.bestCos, res: el.bestPixelsPerCm)
                let res = focal / (dist * zPerT * 100)
                var after = el
                after.views = el.views == .max ? .max : el.views + 1
                after.addDirection(toCam)
                after.bestPixelsPerCm = max(el.bestPixelsPerCm, res)
                let p1 = potential(views: views + 1, sum: Vec3(after.dx, after.dy, after.dz), bestCos: after.bestCos, res: after.bestPixelsPerCm)
                var gain = p1 - p0
                if !before && map.isWellCovered(after) { gain += 1 }
                guard gain > 0 else { return (0, -1) }
                let oblique = 1 / max(cosI, 0.3)
                return (gain * area * oblique, map.side(normal: nrm, at: map.centre(of: c)))
            }
            if s == 0 {
                unknownRun += 1
                if prevFree {
                    // From free space into unknown space next to the surface: the frontier.
                    var nearSurface = false
                    if c.x > 0 && states[i - sx] & 3 == 2 { nearSurface = true }
                    if c.x < dims.x - 1 && states[i + sx] & 3 == 2 { nearSurface = true }
                    if c.y > 0 && states[i - sy] & 3 == 2 { nearSurface = true }
                    if c.y < dims.y - 1 && states[i + sy] & 3 == 2 { nearSurface = true }
                    if c.z > 0 && states[i - sz] & 3 == 2 { nearSurface = true }
                    if c.z < dims.z - 1 && states[i + sz] & 3 == 2 { nearSurface = true }
                    if nearSurface {
                        let dist = t * voxel
                        let area = footprint * dist * dist
                        return (SurfaceMap.revealValue * area, map.side(normal: -d, at: map.centre(of: c)))
                    }
                }
                prevFree = false
            } else {
                prevFree = true
                unknownRun = 0
            }
            let a = tMax.x < tMax.y ? (tMax.x < tMax.z ? 0 : 2) : (tMax.y < tMax.z ? 1 : 2)
            t = tMax[a]
            tMax[a] += tDelta[a]
            c[a] += step[a]
            if c[a] < 0 || c[a] >= dims[a] || t > t1 { break }
            i += step[a] * (a == 0 ? sx : (a == 1 ? sy : sz))
        }
        return (0, -1)
    }
}

extension Intrinsics {
    /// Intrinsics from constants the caller guarantees valid; not checked.
    init(uncheckedFx fx: Float, fy: Float, cx: Float, cy: Float, width: UInt32, height: UInt32) {
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy; self.width = width; self.height = height
    }
}
