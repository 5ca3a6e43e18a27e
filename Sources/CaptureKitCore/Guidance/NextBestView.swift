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
/// camera looking at the box centre. The planner scores them on a subsample of the map: the
/// surface elements grouped into planner cells (`PlannerMemory.cellVoxels` voxels a side, more
/// when there would be more than `PlannerMemory.maxSamples` samples), one
/// sample per cell standing for the elements in it, and one sample per cell for the frontier
/// voxels in it (unknown voxels beside or behind the surface and next to free space: unseen
/// surface continuing the seen one past its edge; unknown voxels in front of the surface are air
/// the carving missed). Each
/// candidate projects every sample into a coarse depth buffer of its image (occlusion: a sample
/// behind the nearest surface in its pixel is hidden). A visible element facing the camera scores
/// what the view would add to it under the "well covered" thresholds (a quarter per threshold
/// newly met, views and spread partially, one more when it becomes well covered), counted only
/// for elements the candidates together could make well covered (surface no candidate can finish,
/// such as a pocket one candidate sees, is not worth a view); a visible frontier sample facing the
/// camera, or the nearest surface in its pixel seen from behind (unseen surface must lie in front
/// of it; not when surface facing the camera is nearer in that pixel: the top of a thin part
/// hides its underside), scores `revealValue` per element. The captured views are remembered (`addView` notes
/// them, the next call learns from them): a candidate within 10° of one is not proposed again,
/// and unseen surface a captured view looked straight at without revealing it (the interior behind
/// a hole, a patch the sensor never returns) is worth nothing after that (`PlannerMemory.misses`),
/// nor is what the candidates within 10° of it would look at.
/// The best candidate wins; a slight preference for a shorter walk breaks near-ties.
extension SurfaceMap {
    /// Elevations of the candidate rings, radians (5°, 30°, 60°).
    public static let ringElevations: [Float] = [5 * .pi / 180, 30 * .pi / 180, 60 * .pi / 180]
    /// Azimuths per ring.
    public static let ringAzimuths = 16
    /// Value of one element of unseen surface a view would reveal. An element seen once at a good
    /// angle meets about 2.3 of the 4 thresholds (0.58); the frontier and the seen surface standing
    /// for the unseen surface behind them undercount it, and unseen surface opens more views: 0.9
    /// (set on meshes of real objects, BENCHMARKS.md; 0.6 needed up to 1.2x the views on the
    /// elongated one).
    static let revealValue: Float = 0.9
    /// Cosine of the angle (10°) within which a candidate repeats a captured view.
    static let repeatCos: Float = cos(10 * .pi / 180)

    /// The camera the planner assumes when the caller gives none: a phone's wide camera,
    /// 1920 × 1440, focal 1450 px (67° × 53°).
    public static let defaultPlannerIntrinsics = Intrinsics(uncheckedFx: 1450, fy: 1450, cx: 960, cy: 720, width: 1920, height: 1440)

    /// The candidate camera position (box-local) at azimuth `az` (`ck_coverage_dial`'s convention:
    /// 0 in front, π/2 on the left) and elevation `el`, `r` metres from the box centre.
    public static func candidatePosition(azimuth az: Float, elevation el: Float, distance r: Float) -> Vec3 {
        Vec3(-sin(az) * cos(el), sin(el), -cos(az) * cos(el)) * r
    }

    /// The next-best view from the camera at `pose` (camera-to-world), for a camera with
    /// `intrinsics` (nil: `defaultPlannerIntrinsics`). Learns from the views captured since the
    /// last call (what they failed to reveal).
    public func nextBestView(from pose: Pose, intrinsics: Intrinsics? = nil) -> NextView {
        let k = intrinsics ?? SurfaceMap.defaultPlannerIntrinsics
        let figs = plannerFigures()
        let cam = box.toLocal(direction: pose.t - box.center)
        let camAz = atan2(-cam.x, -cam.z)
        let camEl = atan2(cam.y, (cam.x * cam.x + cam.z * cam.z).squareRoot())
        let r = max(length(cam), length(box.halfSize) * 1.05)
        var out = NextView(pose: pose)
        out.cameraAzimuth = camAz; out.cameraElevation = camEl; out.distance = r
        out.targetAzimuth = camAz; out.targetElevation = camEl
        out.complete = figs.complete
        guard fromDepth, !elements.isEmpty else {
            let h = sideRuleHint(pose: pose)
            out.side = h.side; out.text = h.text
            out.targetAzimuth = h.targetAzimuth; out.targetElevation = h.targetElevation
            out.moveAngle = h.moveAngle; out.raiseAngle = h.targetElevation - camEl
            out.pose = targetPose(azimuth: h.targetAzimuth, elevation: h.targetElevation, distance: r) ?? pose
            return out
        }
        let elevations = SurfaceMap.ringElevations, nAz = SurfaceMap.ringAzimuths
        var eyes: [Vec3] = []
        eyes.reserveCapacity(elevations.count * nAz + 1)
        for e in elevations {
            for a in 0..<nAz {
                eyes.append(SurfaceMap.candidatePosition(azimuth: wrapAngle(Float(a) * 2 * .pi / Float(nAz)), elevation: e, distance: r))
            }
        }
        let candidates = eyes.count
        var memory = planner
        planner = PlannerMemory()
        memory.prepare(for: self)
        // The captured views since the last call: what they saw (or failed to reveal) is learnt,
        // all of them (an orbit of 36 views before the first call included), `learnBatch` at a
        // time: a sample's camera bits hold the candidates and that many views.
        let captured = memory.takePending()
        var scores = [Float](repeating: 0, count: candidates)
        let steps = frontierSteps()
        withVoxels { _, _ in  // (the normals refreshed)
            elements.withUnsafeBufferPointer { es in
                memory.sample(map: self, elements: es, steps: steps)
                // More samples than the budget: coarser cells (for the rest of the capture).
                while memory.count > PlannerMemory.maxSamples && memory.coarsen(map: self) {
                    memory.sample(map: self, elements: es, steps: steps)
                }
                let cell = Float(memory.cellVoxels) * voxelSize
                memory.project(eyes: eyes, intrinsics: k, cellSize: cell)
                var start = 0
                while start < captured.count {
                    let batch = captured[start..<min(captured.count, start + PlannerMemory.learnBatch)]
                    memory.project(eyes: eyes + batch, from: candidates, intrinsics: k, cellSize: cell)
                    for (i, eye) in batch.enumerated() { memory.learn(camera: candidates + i, eye: eye, candidates: eyes) }
                    start += batch.count
                }
                let scorer = GainScorer(map: self, eyes: eyes, intrinsics: k)
                memory.prepareGains(scorer, candidates: candidates, elements: es)
                memory.score(scorer, candidates: candidates, into: &scores)
                // A candidate where a view was already captured (within 10 degrees) would repeat it:
                // the same directions again add a view count and nothing else a reconstruction can use.
                // (Unless every candidate with a gain would.)
                var fresh = scores
                for c in 0..<candidates {
                    let dir = eyes[c] / length(eyes[c])
                    if memory.taken.contains(where: { dot($0, dir) > SurfaceMap.repeatCos }) { fresh[c] = 0 }
                }
                if fresh.contains(where: { $0 > 0 }) { scores = fresh }
                var best = -1, bestRank: Float = 0
                for c in 0..<candidates where scores[c] > 0 {
                    let az = wrapAngle(Float(c % nAz) * 2 * .pi / Float(nAz)), el = elevations[c / nAz]
                    let travel = abs(wrapAngle(az - camAz)) + abs(el - camEl)
                    let rank = scores[c] * (1 - 0.05 * travel / .pi)
                    if best < 0 || rank > bestRank { best = c; bestRank = rank }
                }
                out.candidates = UInt32(candidates)
                guard best >= 0 else { return }
                let sides = memory.sides(scorer, camera: best)
                out.targetAzimuth = wrapAngle(Float(best % nAz) * 2 * .pi / Float(nAz)); out.targetElevation = elevations[best / nAz]
                out.gain = scores[best]
                var side = 0
                for s in 1..<6 where sides[s] > sides[side] { side = s }
                out.side = Int32(side)
            }
        }
        planner = memory
        out.gainFraction = figs.surface > 0 ? out.gain / figs.surface : 0
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

/// A planner sample's data beyond its position and facing: the elements (or frontier voxels) of
/// one planner cell, and the state of the element standing for them.
struct PlannerSample {
    /// Unit normal (0 while unknown); a frontier sample's is where its unseen surface is seen from
    /// (the normal of the surface next to it, leaning towards the unknown voxels).
    var n: Vec3
    /// The element standing for the cell's elements, or −1 for a frontier sample.
    var element: Int32
    var cell: Int32
    /// Elements (or frontier voxels) it stands for.
    var weight: Float
    /// The element's views, sum of view directions, best incidence cosine and resolution; its
    /// share of the thresholds met and whether it is well covered; whether the candidates together
    /// (with the views already taken) would make it well covered.
    var views: Float = 0
    var sum = Vec3(0, 0, 0)
    var bestCos: Float = -1
    var res: Float = 0
    var p0: Float = 0
    var well = false
    var coverable = false
}

/// What the planner keeps between calls (`SurfaceMap.planner`): per planner cell how often a
/// captured view looked straight at its unseen surface without revealing it, the captured views
/// (those not yet learnt from, and the directions of those learnt from), the planner cell of each
/// element; and its scratch buffers. A reset, a new box or
/// grid starts it afresh.
struct PlannerMemory {
    /// Voxels per planner cell edge.
    private(set) var cellVoxels = 3
    private var cellDims = SIMD3<Int>(0, 0, 0)
    private var box: Box?
    private var voxelSize: Float = 0
    private var framesFused: UInt32 = 0
    /// Box-local camera positions of the captured views not yet learnt from (the latest
    /// `maxPending`).
    private var pending: [Vec3] = []
    /// Captured views learnt from per projection (48 candidates + 16 = the 64 camera bits).
    static let learnBatch = 16
    /// Views kept for learning between two calls (a bound on memory; 256 views are hours of captures).
    static let maxPending = 256
    /// Directions from the box centre of the captured views (unit; one per 10° cone).
    private(set) var taken: [Vec3] = []
    /// Per planner cell: captured views that looked at its unseen surface and did not reveal it.
    private var misses: [UInt8] = []
    private var elementSlot: [Int32] = []
    private var frontierSlot: [Int32] = []
    /// Per element: its voxel coordinates and planner cell, and the voxel index it was cached for
    /// (`sample` keeps the entries up to the first element that moved).
    private var elementCells: [SIMD2<Int32>] = []
    /// Samples: position (w = 1 for surface, 0 for frontier), facing direction (the normal, or
    /// without one the mean direction of the element's views), candidates seeing it facing them
    /// (bit c) and seeing it from behind as the nearest surface, the rest.
    private(set) var count = 0
    private var pos: [SIMD4<Float>] = []
    private var facing: [Vec3] = []
    private var seen: [UInt64] = []
    private var back: [UInt64] = []
    private var info: [PlannerSample] = []
    private var zbuffer: [Float] = []
    /// Scratch of `project`: the samples' lanes (`laneArrays` per 4 samples) and per sample its
    /// buffer pixel.
    private var lanes: [SIMD4<Float>] = []
    private var pixels: [Int32] = []
    static let laneArrays = 13

    /// Bytes its buffers hold (`SurfaceMap.memoryBytes`).
    var bytes: Int {
        func size<T>(_ a: [T]) -> Int { MemoryLayout<T>.stride * a.capacity }
        return size(pending) + size(taken) + size(misses) + size(elementSlot) + size(frontierSlot) + size(elementCells)
            + size(pos) + size(facing) + size(seen) + size(back) + size(info) + size(zbuffer) + size(lanes) + size(pixels)
    }
    /// Planes of `project`'s buffer: the two buffers (0, 1), the splats' own pixels by size and
    /// buffer (3 + 2 · size + buffer), a plane that takes what a buffer leaves out (`sinkPlane`)
    /// and the filters' scratch (2 and 10).
    static let planes = 11
    static let sinkPlane = 9

    /// Buffer `buffer` of `project` (plane `buffer` of `plane` floats, rows of `width` pixels, a
    /// border of 2): at each pixel of the image (rows and columns 2..<2 + rows, 2..<width − 2),
    /// the minimum of its own value in plane 3 + buffer (splats of size 1), of its 3 x 3
    /// neighbourhood in plane 5 + buffer and of its 5 x 5 in plane 7 + buffer, each plane only
    /// when `used` has bit plane − 3 (infinity where none is); the minimum over rows first (into
    /// the scratch planes 10 and 2), then over columns. The planes read are left at infinity.
    /// `width` − 4 must be a multiple of 4.
    static func gather(_ base: UnsafeMutablePointer<Float>, plane: Int, width bw: Int, rows zh: Int, buffer: Int, used: Int) {
        @inline(__always) func load(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> { UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self) }
        @inline(__always) func store(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self) }
        /// Lane-wise min as the scalar `min` takes it (b where b < a): a compare and a select
        /// (`pointwiseMin` is not one instruction here).
        @inline(__always) func lesser(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .< a) }
        let out = base + buffer * plane
        let one = base + (3 + buffer) * plane, three = base + (5 + buffer) * plane, five = base + (7 + buffer) * plane
        let rows3 = base + 10 * plane, rows5 = base + 2 * plane
        let has1 = used & (1 << buffer) != 0, has3 = used & (4 << buffer) != 0, has5 = used & (16 << buffer) != 0
        let first = 2, last = bw - 2
        if has3 {
            for r in 1..<(zh + 3) {
                var c = first
                while c < last {
                    let p = three + r * bw + c
                    store(lesser(lesser(load(p - 1), load(p)), load(p + 1)), rows3 + r * bw + c)
                    c += 4
                }
            }
        }
        if has5 {
            for r in 0..<(zh + 4) {
                var c = first
                while c < last {
                    let p = five + r * bw + c
                    store(lesser(lesser(lesser(load(p - 2), load(p - 1)), lesser(load(p), load(p + 1))), load(p + 2)), rows5 + r * bw + c)
                    c += 4
                }
            }
        }
        for r in 2..<(zh + 2) {
            var c = first
            while c < last {
                let at = r * bw + c
                var m = SIMD4<Float>(repeating: .infinity)
                if has1 { m = lesser(m, load(one + at)) }
                if has3 {
                    let p = rows3 + at
                    m = lesser(m, lesser(lesser(load(p - bw), load(p)), load(p + bw)))
                }
                if has5 {
                    let p = rows5 + at
                    m = lesser(m, lesser(lesser(lesser(load(p - 2 * bw), load(p - bw)), lesser(load(p), load(p + bw))), load(p + 2 * bw)))
                }
                store(m, out + at)
                c += 4
            }
        }
        if has1 { (one + 2 * bw).update(repeating: .infinity, count: zh * bw) }
        if has3 { (three + 2 * bw).update(repeating: .infinity, count: zh * bw) }
        if has5 { (five + 2 * bw).update(repeating: .infinity, count: zh * bw) }
    }

    /// Whether a next view was planned with this memory (since the map's last reset).
    var planned: Bool { box != nil }

    /// Starts afresh when the map was reset, re-bound to another box or laid out anew.
    mutating func prepare(for map: SurfaceMap) {
        let sameGrid = box == map.box && voxelSize == map.voxelSize && framesFused <= map.framesFused
        framesFused = map.framesFused
        guard !sameGrid else { return }
        // The captured views stay unless the box moved (they are in its frame).
        let keep = box == nil || box == map.box
        let (views, directions) = (pending, taken)
        self = PlannerMemory()
        if keep { pending = views; taken = directions }
        framesFused = map.framesFused
        box = map.box; voxelSize = map.voxelSize
        let d = map.dims
        // About 32 cells along the longest edge (4 voxels at the default 128), at least 2 voxels.
        cellVoxels = max(2, (max(d.x, d.y, d.z) + 31) / 32)
        cellDims = (d &+ (cellVoxels - 1)) / cellVoxels
        let cells = cellDims.x * cellDims.y * cellDims.z
        misses = [UInt8](repeating: 0, count: cells)
        elementSlot = [Int32](repeating: -1, count: cells)
        frontierSlot = [Int32](repeating: -1, count: cells)
    }

    /// The most samples the planner scores: past it the cells grow (`coarsen`). A sample costs
    /// each of the 48 candidates a projection and a test; the simulated object captures of
    /// BENCHMARKS.md take up to 3,000, an object that fills its box 4,000-6,500, and a map whose
    /// elements are strewn through the box (noise) up to two per cell (65,536).
    static let maxSamples = 4096

    /// One voxel more per cell edge, the misses learnt kept per cell (the most of the old cells
    /// whose centres the new cell holds); false when a cell already spans the grid.
    mutating func coarsen(map: SurfaceMap) -> Bool {
        let d = map.dims
        guard cellVoxels < max(d.x, d.y, d.z) else { return false }
        let old = (voxels: cellVoxels, dims: cellDims, misses: misses)
        cellVoxels += 1
        cellDims = (d &+ (cellVoxels - 1)) / cellVoxels
        let cells = cellDims.x * cellDims.y * cellDims.z
        misses = [UInt8](repeating: 0, count: cells)
        for c in old.misses.indices where old.misses[c] > 0 {
            let x = c % old.dims.x, y = (c / old.dims.x) % old.dims.y, z = c / (old.dims.x * old.dims.y)
            let v = SIMD3(min(x * old.voxels + old.voxels / 2, d.x - 1), min(y * old.voxels + old.voxels / 2, d.y - 1),
                          min(z * old.voxels + old.voxels / 2, d.z - 1))
            let n = ((v.z / cellVoxels) * cellDims.y + v.y / cellVoxels) * cellDims.x + v.x / cellVoxels
            misses[n] = max(misses[n], old.misses[c])
        }
        elementSlot = [Int32](repeating: -1, count: cells)
        frontierSlot = [Int32](repeating: -1, count: cells)
        // The cache holds each element's cell: taken anew. The samples' buffers give back what
        // the samples past the budget took.
        elementCells = []
        pos = []; facing = []; info = []; seen = []; back = []
        return true
    }

    /// A captured view from box-local camera position `eye` (`SurfaceMap.addView`).
    mutating func noteView(_ eye: Vec3) {
        let l = length(eye)
        guard eye.x.isFinite, eye.y.isFinite, eye.z.isFinite, l > 0 else { return }
        if pending.count >= PlannerMemory.maxPending { pending.removeFirst() }
        pending.append(eye)
        if !taken.contains(where: { dot($0, eye / l) > SurfaceMap.repeatCos }) { taken.append(eye / l) }
    }

    /// The captured views not yet learnt from, cleared.
    mutating func takePending() -> [Vec3] {
        defer { pending.removeAll() }
        return pending
    }

    /// One sample per planner cell for its elements (the first with a normal stands for them) and
    /// one for its frontier voxels (the unknown 6-neighbours of an element that touch free space:
    /// `steps`, the map's `frontierSteps`, for `es`).
    mutating func sample(map: SurfaceMap, elements es: UnsafeBufferPointer<SurfaceElement>, steps: [UInt8]) {
        let d = map.dims, cv = cellVoxels, cd = cellDims
        // The cache holds per element index its voxel and its cell. Elements removed as seen
        // through (the later ones move down) or resampled by `setBox` (voxel order) change
        // places, so an entry serves only while its voxel is the element's, and is taken anew
        // otherwise (voxel −1, never a voxel, marks an entry not taken yet).
        if elementCells.count > es.count {
            elementCells.removeSubrange(es.count...)
        } else if elementCells.count < es.count {
            elementCells.append(contentsOf: repeatElement(SIMD2<Int32>(-1, 0), count: es.count - elementCells.count))
        }
        // The buffers move into locals for the loop (no uniqueness check of a stored property per
        // element) and back after it.
        var pos: [SIMD4<Float>] = [], facing: [Vec3] = [], info: [PlannerSample] = []
        var elementSlot: [Int32] = [], frontierSlot: [Int32] = [], elementCells: [SIMD2<Int32>] = []
        swap(&pos, &self.pos); swap(&facing, &self.facing); swap(&info, &self.info)
        swap(&elementSlot, &self.elementSlot); swap(&frontierSlot, &self.frontierSlot); swap(&elementCells, &self.elementCells)
        defer {
            swap(&pos, &self.pos); swap(&facing, &self.facing); swap(&info, &self.info)
            swap(&elementSlot, &self.elementSlot); swap(&frontierSlot, &self.frontierSlot); swap(&elementCells, &self.elementCells)
        }
        pos.removeAll(keepingCapacity: true); facing.removeAll(keepingCapacity: true); info.removeAll(keepingCapacity: true)
        let voxelCount = d.x * d.y * d.z
        let origin = map.origin, v = map.voxelSize
        @inline(__always) func centre(_ x: Int, _ y: Int, _ z: Int) -> Vec3 { origin + (Vec3(Float(x), Float(y), Float(z)) + 0.5) * v }
        /// The frontier voxel (coordinates qx, qy, qz) beside an element with normal `n`, `o` the
        /// unit step to it. The buffers are parameters, not captured (a captured variable is
        /// checked for exclusive access at run time on every use: a quarter of the sampling's time).
        @inline(__always) func frontier(_ qx: Int, _ qy: Int, _ qz: Int, _ n: Vec3, _ o: Vec3,
                                        _ pos: inout [SIMD4<Float>], _ facing: inout [Vec3], _ info: inout [PlannerSample],
                                        _ frontierSlot: inout [Int32]) {
            // The unseen surface continues the seen one past its edge: it is seen from where
            // the element's normal points, leaning towards the unknown voxel.
            let out = n + 0.5 * o
            let l = length(out)
            guard l > 0 else { return }
            let qcell = ((qz / cv) * cd.y + qy / cv) * cd.x + qx / cv
            let fs = Int(frontierSlot[qcell])
            if fs < 0 {
                frontierSlot[qcell] = Int32(info.count)
                let p = centre(qx, qy, qz)
                pos.append(SIMD4(p.x, p.y, p.z, 0)); facing.append(out / l)
                info.append(PlannerSample(n: out / l, element: -1, cell: Int32(qcell), weight: 1))
            } else {
                info[fs].weight += 1
                let m = facing[fs] * (info[fs].weight - 1) + out / l
                let lm = length(m)
                if lm > 0 { facing[fs] = m / lm; info[fs].n = m / lm }
            }
        }
        elementCells.withUnsafeMutableBufferPointer { cells in
        elementSlot.withUnsafeMutableBufferPointer { slots in
        for e in 0..<min(es.count, cells.count) {
            let voxel = es[e].voxel
            guard voxel >= 0, Int(voxel) < voxelCount else { continue }
            if cells[e].x != voxel {
                let c = map.coordinates(ofIndex: Int(voxel))
                cells[e] = SIMD2(voxel, Int32(((c.z / cv) * cd.y + c.y / cv) * cd.x + c.x / cv))
            }
            let cell = Int(cells[e].y)
            guard cell >= 0, cell < slots.count else { continue }
            /// The element's voxel coordinates (for the paths that need them: a cell's first
            /// element, and the frontier beside it).
            @inline(__always) func coordinates() -> SIMD3<Int> { map.coordinates(ofIndex: Int(voxel)) }
            let n = Vec3(es[e].nx, es[e].ny, es[e].nz)
            let hasNormal = n.x != 0 || n.y != 0 || n.z != 0
            let slot = Int(slots[cell])
            if slot < 0 {
                slots[cell] = Int32(info.count)
                var f = n
                if !hasNormal {
                    let m = Vec3(es[e].dx, es[e].dy, es[e].dz), l = length(m)
                    f = l > 0 ? m / l : m
                }
                let c = coordinates(), p = centre(c.x, c.y, c.z)
                pos.append(SIMD4(p.x, p.y, p.z, 1)); facing.append(f)
                info.append(PlannerSample(n: n, element: Int32(e), cell: Int32(cell), weight: 1))
            } else {
                info[slot].weight += 1
                if hasNormal && info[slot].n == Vec3(0, 0, 0) {
                    let c = coordinates(), p = centre(c.x, c.y, c.z)
                    pos[slot] = SIMD4(p.x, p.y, p.z, 1); facing[slot] = n; info[slot].n = n; info[slot].element = Int32(e)
                }
            }
            let m = e < steps.count ? steps[e] : 0
            guard hasNormal, m != 0 else { continue }
            let c = coordinates(), cx = c.x, cy = c.y, cz = c.z
            // The frontier neighbours (in the order +x, -x, +y, -y, +z, -z). An unknown voxel in
            // front of the surface (along its normal) is air the carving missed, not unseen
            // surface: only voxels beside or behind the surface count.
            if m & 1 != 0 && n.x < 0.5 { frontier(cx + 1, cy, cz, n, Vec3(1, 0, 0), &pos, &facing, &info, &frontierSlot) }
            if m & 2 != 0 && -n.x < 0.5 { frontier(cx - 1, cy, cz, n, Vec3(-1, 0, 0), &pos, &facing, &info, &frontierSlot) }
            if m & 4 != 0 && n.y < 0.5 { frontier(cx, cy + 1, cz, n, Vec3(0, 1, 0), &pos, &facing, &info, &frontierSlot) }
            if m & 8 != 0 && -n.y < 0.5 { frontier(cx, cy - 1, cz, n, Vec3(0, -1, 0), &pos, &facing, &info, &frontierSlot) }
            if m & 16 != 0 && n.z < 0.5 { frontier(cx, cy, cz + 1, n, Vec3(0, 0, 1), &pos, &facing, &info, &frontierSlot) }
            if m & 32 != 0 && -n.z < 0.5 { frontier(cx, cy, cz - 1, n, Vec3(0, 0, -1), &pos, &facing, &info, &frontierSlot) }
        }
        }
        }
        // Clear the slots for the next call (only the cells used).
        for s in info {
            if s.element >= 0 { elementSlot[Int(s.cell)] = -1 } else { frontierSlot[Int(s.cell)] = -1 }
        }
        count = info.count
        // Whole groups of 4 (`project` writes the bits four samples at a time).
        if seen.count < (count + 3) / 4 * 4 {
            seen = [UInt64](repeating: 0, count: (count + 3) / 4 * 4); back = seen
        }
        for s in 0..<count { seen[s] = 0; back[s] = 0 }
    }

    /// For each camera `eyes[c]` (box-local, looking at the box centre; at most 64): which samples
    /// it sees. Surface samples are splatted into a coarse depth buffer (80 pixels across the
    /// image; each sample covers the pixels of its cell); a sample within 1.5 planner cells of the
    /// nearest surface in its pixel is visible: a surface sample facing the camera (cos > 0.05) or a
    /// frontier sample facing it (cos > 0.3) sets `seen`; a surface sample facing away within one
    /// cell of it (plus one pixel's width at its depth, for slopes) sets `back`, unless a sample
    /// facing the camera is nearer in its pixel (a second buffer holds the nearest of those).
    mutating func project(eyes: [Vec3], from first: Int = 0, intrinsics k: Intrinsics, cellSize cell: Float) {
        // Cameras first..<eyes.count start afresh (a batch of captured views reuses bits).
        let cams = min(eyes.count, 64)
        if first < cams {
            let fresh = (cams == 64 ? UInt64.max : (UInt64(1) << UInt64(cams)) - 1) & ~((UInt64(1) << UInt64(first)) - 1)
            for s in 0..<count { seen[s] &= ~fresh; back[s] &= ~fresh }
        }
        let zw = 80, zh = max(1, min(120, Int((Float(k.height) * 80 / Float(k.width)).rounded())))
        // The buffer has a border of 2 pixels (the largest splat radius): splats need no clipping.
        let bw = zw + 4, bh = zh + 4
        let sxz = Float(zw) / Float(k.width), syz = Float(zh) / Float(k.height)
        // Two buffers: the nearest surface sample, and the nearest one facing the camera.
        // The planes of `gather`, bw × bh each.
        let plane = bw * bh
        if zbuffer.count < PlannerMemory.planes * plane { zbuffer = [Float](repeating: .infinity, count: PlannerMemory.planes * plane) }
        let tol = 1.5 * cell, tolBack = cell
        // Image → buffer pixels: u·sxz, v·syz; the projection in buffer pixels directly.
        let fxz = k.fx * sxz, fyz = k.fy * syz, cxz = k.cx * sxz, cyz = k.cy * syz
        let fzw = Float(zw), fzh = Float(zh)
        let splatScale = 0.5 * cell * fxz
        let pixelAngle = 1 / fxz
        let n = count
        // The samples four at a time (structure of arrays; the lanes past `n` are masked off):
        // position, facing, and per camera the depth, splat scale and buffer pixel (−1: outside
        // the image or behind the camera).
        let chunks = (n + 3) / 4
        if lanes.count < chunks * PlannerMemory.laneArrays { lanes = [SIMD4<Float>](repeating: .zero, count: chunks * PlannerMemory.laneArrays) }
        if pixels.count < chunks * 4 { pixels = [Int32](repeating: 0, count: chunks * 4) }
        pos.withUnsafeBufferPointer { ps in
        facing.withUnsafeBufferPointer { fs in
        seen.withUnsafeMutableBufferPointer { sn in
        back.withUnsafeMutableBufferPointer { bk in
        zbuffer.withUnsafeMutableBufferPointer { zb in
        lanes.withUnsafeMutableBufferPointer { ln in
        pixels.withUnsafeMutableBufferPointer { px in
            // ln[8k ..< 8k + 8]: x, y, z, surface (1/0), facing x, y, z, facing non-zero (1/0); then
            // per camera the depths, whether it faces away from the camera and whether it would
            // count as seen (1/0), and where its splat writes (two pixel indices, as Int32 lanes).
            let depthAt = chunks * 8, awayAt = chunks * 9, facesAt = chunks * 10
            let splatAt = chunks * 11, splat2At = chunks * 12
            let facingAt = plane
            zb.update(repeating: .infinity)  // the planes of the splats start (and are left) at infinity
            guard let snBase = sn.baseAddress, let bkBase = bk.baseAddress, sn.count >= 4 * chunks, bk.count >= 4 * chunks,
                  let pxBase = px.baseAddress, px.count >= 4 * chunks, let zbBase = zb.baseAddress else { return }
            for k in 0..<chunks {
                for i in 0..<4 {
                    let s = min(4 * k + i, n - 1)
                    let p = ps[s], f = fs[s]
                    ln[8 * k][i] = p.x; ln[8 * k + 1][i] = p.y; ln[8 * k + 2][i] = p.z; ln[8 * k + 3][i] = p.w
                    ln[8 * k + 4][i] = f.x; ln[8 * k + 5][i] = f.y; ln[8 * k + 6][i] = f.z
                    ln[8 * k + 7][i] = f != Vec3(0, 0, 0) ? 1 : 0
                }
            }
            let laneIndex = SIMD4<Int32>(0, 1, 2, 3)
            // Int32(x) lane by lane for 0 <= x < 2^22 (the lanes in the image), without the checked
            // conversion: x + 2^23 rounds x to the nearest integer in the low mantissa bits, one
            // less where that rounded up. Other lanes give some value and no trap (masked after).
            let magic = SIMD4<Float>(repeating: 8_388_608), magicBits = SIMD4<Int32>(repeating: 0x4B00_0000)
            @inline(__always) func whole(_ x: SIMD4<Float>) -> SIMD4<Int32> {
                let r = x + magic
                return unsafeBitCast(r, to: SIMD4<Int32>.self) &- magicBits &+ unsafeBitCast((r - magic) .> x, to: SIMD4<Int32>.self)
            }
            let bw4 = SIMD4<Int32>(repeating: Int32(bw))
            let plane4 = SIMD4<Int32>(repeating: Int32(plane)), sink4 = SIMD4<Int32>(repeating: Int32(PlannerMemory.sinkPlane * plane))
            let one4 = SIMD4<Int32>(repeating: 1), two4 = SIMD4<Int32>(repeating: 2), three4 = SIMD4<Int32>(repeating: 3)
            let half4 = SIMD4<Float>(repeating: 0.5), oneHalf4 = SIMD4<Float>(repeating: 1.5)
            for c in first..<max(first, cams) {
                let eye = eyes[c]
                let le = length(eye)
                guard le > 0 else { continue }
                let f = -eye / le
                var right = cross(f, Vec3(0, 1, 0))
                if length(right) < 1e-4 { right = Vec3(1, 0, 0) }
                right = right / length(right)
                let up = cross(right, f)
                // Rows of the box-local → camera transform on (x, y, z, 1); the arithmetic (and its
                // order) is the scalar `(q * row).sum()`'s, lane by lane.
                let rowX = SIMD4(right.x, right.y, right.z, -dot(right, eye))
                let rowY = SIMD4(up.x, up.y, up.z, -dot(up, eye))
                let rowZ = SIMD4(f.x, f.y, f.z, -dot(f, eye))
                // Project: pixel (−1 outside the image or behind the camera), depth, splat radius.
                var usedLanes = SIMD4<Int32>(repeating: 0)  // bit 2 · size + buffer: the planes written
                for k in 0..<chunks {
                    let x = ln[8 * k], y = ln[8 * k + 1], z0 = ln[8 * k + 2]
                    let z = ((x * rowZ.x + y * rowZ.y) + z0 * rowZ.z) + rowZ.w
                    let iz = 1 / z
                    let u = cxz + ((x * rowX.x + y * rowX.y) + z0 * rowX.z + rowX.w) * fxz * iz
                    let v = cyz - ((x * rowY.x + y * rowY.y) + z0 * rowY.z + rowY.w) * fyz * iz
                    let ok = (z .> 1e-3) .& (u .>= 0) .& (v .>= 0) .& (u .< fzw) .& (v .< fzh) .& (laneIndex &+ Int32(4 * k) .< Int32(n))
                    ln[depthAt + k] = z
                    let scaledNow = splatScale * iz
                    let tx = eye.x - x, ty = eye.y - y, tz = eye.z - z0
                    let fc = (ln[8 * k + 4] * tx + ln[8 * k + 5] * ty) + ln[8 * k + 6] * tz
                    let l = ((tx * tx + ty * ty) + tz * tz).squareRoot()
                    let away = (fc .<= 0.05 * l) .& (ln[8 * k + 7] .> 0)
                    ln[awayAt + k] = SIMD4<Float>(repeating: 0).replacing(with: 1, where: away)
                    // Whether it counts as seen when visible: a surface sample not facing away, a
                    // frontier sample facing the camera (cos > 0.3).
                    let surface = ln[8 * k + 3] .> 0
                    let faces = (surface .& .!away) .| (.!surface .& (fc .> 0.3 * l))
                    ln[facesAt + k] = SIMD4<Float>(repeating: 0).replacing(with: 1, where: faces)
                    let p = (whole(v) &+ 2) &* bw4 &+ whole(u) &+ 2
                    UnsafeMutableRawPointer(pxBase + 4 * k).storeBytes(of: p.replacing(with: -1, where: .!ok), as: SIMD4<Int32>.self)
                    // Where the splat writes (`gather`'s planes): the sample's pixel in the plane of
                    // its size (5 x 5 from 1.5 buffer pixels either side of its centre, 3 x 3 from
                    // 0.5, else 1) in the first buffer, and in the second buffer when it faces the
                    // camera, else in the sink plane; a lane that does not splat (not a surface
                    // sample, or outside the image) writes into the sink plane twice (at pixels
                    // spread by lane: writes to one pixel would wait on each other).
                    let splats = ok .& surface
                    let sinkLane = sink4 &+ ((laneIndex &+ Int32(4 * k)) & 255)
                    let size = SIMD4<Int32>(repeating: 0).replacing(with: 1, where: scaledNow .>= half4).replacing(with: 2, where: scaledNow .>= oneHalf4)
                    let first = (three4 &+ 2 &* size) &* plane4 &+ p
                    let second = first.replacing(with: sink4 &+ p, where: away) &+ plane4.replacing(with: 0, where: away)
                    ln[splatAt + k] = unsafeBitCast(first.replacing(with: sinkLane, where: .!splats), to: SIMD4<Float>.self)
                    ln[splat2At + k] = unsafeBitCast(second.replacing(with: sinkLane, where: .!splats), to: SIMD4<Float>.self)
                    let bits = (one4 | (two4.replacing(with: 0, where: away))) &<< (2 &* size)
                    usedLanes |= bits.replacing(with: 0, where: .!splats)
                }
                // Splat the surface samples, in two steps with the same result: each sample's depth
                // goes to its own pixel in the plane of its splat's size (and buffer), then each
                // buffer takes at every pixel the minimum over those planes' neighbourhoods of that
                // size (`gather`). A splat covers the pixels of the sample's cell: 5 x 5 when the
                // cell spans 1.5 pixels or more either side of its centre, 3 x 3 from 0.5, else 1.
                let used = Int(usedLanes[0] | usedLanes[1] | usedLanes[2] | usedLanes[3])
                for k in 0..<chunks {
                    let first = unsafeBitCast(ln[splatAt + k], to: SIMD4<Int32>.self), second = unsafeBitCast(ln[splat2At + k], to: SIMD4<Int32>.self)
                    let z = ln[depthAt + k]
                    for i in 0..<4 {
                        let a = Int(first[i]), b = Int(second[i])
                        zb[a] = min(zb[a], z[i])
                        zb[b] = min(zb[b], z[i])
                    }
                }
                PlannerMemory.gather(zbBase, plane: plane, width: bw, rows: zh, buffer: 0, used: used)
                PlannerMemory.gather(zbBase, plane: plane, width: bw, rows: zh, buffer: 1, used: used)
                let bit = UInt64(1) << UInt64(c)
                for k in 0..<chunks {
                    let centres = SIMD4<Int32>(px[4 * k], px[4 * k + 1], px[4 * k + 2], px[4 * k + 3])
                    let inImage = centres .>= 0
                    guard anyLane(inImage) else { continue }
                    let zmin = SIMD4<Float>(zb[Int(max(0, centres[0]))], zb[Int(max(0, centres[1]))], zb[Int(max(0, centres[2]))], zb[Int(max(0, centres[3]))])
                    let z = ln[depthAt + k]
                    // Surface seen from behind: within one cell of the nearest surface in the pixel,
                    // plus the depth a surface at 45 degrees spans across one pixel (looking into a
                    // bowl, a neighbour's splat on its slope is not an occluder).
                    let backMax = zmin + tolBack + z * pixelAngle
                    let near = z .<= zmin + tol
                    let surface = ln[8 * k + 3] .> 0
                    let away = ln[awayAt + k] .> 0
                    let seenNow = inImage .& near .& (ln[facesAt + k] .> 0)
                    // ... and no surface facing the camera nearer in its pixel (the underside of a
                    // thin part, within a cell of its top, is not seen from behind).
                    let zface = SIMD4<Float>(zb[facingAt + Int(max(0, centres[0]))], zb[facingAt + Int(max(0, centres[1]))],
                                             zb[facingAt + Int(max(0, centres[2]))], zb[facingAt + Int(max(0, centres[3]))])
                    let backNow = inImage .& surface .& away .& (z .<= backMax) .& (zface .>= z)
                    // The bit into the four samples' words, lane-wise (no branch per lane).
                    let bits = SIMD4<UInt64>(repeating: bit)
                    let seenBits = SIMD4<UInt64>(truncatingIfNeeded: unsafeBitCast(seenNow, to: SIMD4<Int32>.self)) & bits
                    let backBits = SIMD4<UInt64>(truncatingIfNeeded: unsafeBitCast(backNow, to: SIMD4<Int32>.self)) & bits
                    let sp = UnsafeMutableRawPointer(snBase + 4 * k), bp = UnsafeMutableRawPointer(bkBase + 4 * k)
                    sp.storeBytes(of: sp.loadUnaligned(as: SIMD4<UInt64>.self) | seenBits, as: SIMD4<UInt64>.self)
                    bp.storeBytes(of: bp.loadUnaligned(as: SIMD4<UInt64>.self) | backBits, as: SIMD4<UInt64>.self)
                }
            }
        }
        }
        }
        }
        }
        }
        }
    }

    /// The camera `c` (a captured view at box-local `eye`) looked at the unseen surface it sees
    /// (frontier samples facing it within 60°, surface it sees from behind) and did not reveal it.
    /// So did every candidate of `candidates` (cameras 0..<count) within 10° of it: the planner
    /// does not propose those again as new views (`repeatCos`), and a view 7.5° off looks through
    /// the same hole at other cells behind it; without this, once no fresh candidate had a gain
    /// left, a candidate beside a captured view came back with the unseen surface it would reveal,
    /// which the captured view had just failed to reveal.
    mutating func learn(camera c: Int, eye: Vec3, candidates: [Vec3] = []) {
        let le = length(eye)
        guard le > 0 else { return }
        var cams: [(bit: UInt64, eye: Vec3)] = [(UInt64(1) << UInt64(c), eye)]
        for (j, e) in candidates.prefix(min(c, 64)).enumerated() {
            let l = length(e)
            if l > 0 && dot(e / l, eye / le) > SurfaceMap.repeatCos { cams.append((UInt64(1) << UInt64(j), e)) }
        }
        for s in 0..<count {
            var missed = false
            for cam in cams {
                if back[s] & cam.bit != 0 { missed = true; break }
                if pos[s].w == 0 && seen[s] & cam.bit != 0 {
                    let toCam = cam.eye - Vec3(pos[s].x, pos[s].y, pos[s].z)
                    if dot(facing[s], toCam) > 0.5 * length(toCam) { missed = true; break }
                }
            }
            let cell = Int(info[s].cell)
            if missed && misses[cell] < .max { misses[cell] += 1 }
        }
    }

    /// The state of each surface sample's element, and whether the first `candidates` cameras
    /// together (with the views already taken) would make it well covered.
    mutating func prepareGains(_ g: GainScorer, candidates: Int, elements es: UnsafeBufferPointer<SurfaceElement>) {
        let all = candidates >= 64 ? UInt64.max : (UInt64(1) << UInt64(candidates)) - 1
        for s in 0..<count where info[s].element >= 0 {
            let e = es[Int(info[s].element)]
            var st = GainScorer.State(views: Float(e.views), sum: Vec3(e.dx, e.dy, e.dz), bestCos: e.bestCos, res: e.bestPixelsPerCm)
            let (p0, w0) = g.measure(st)
            info[s].views = st.views; info[s].sum = st.sum; info[s].bestCos = st.bestCos; info[s].res = st.res
            info[s].p0 = p0; info[s].well = w0
            // Well covered with every threshold's share full: no view adds to it (`GainScorer.gain`
            // is 0), so it is left out of the scores.
            if w0 && p0 >= 1 {
                info[s].coverable = false
                continue
            }
            let p = Vec3(pos[s].x, pos[s].y, pos[s].z)
            var bits = seen[s] & all
            while bits != 0 {
                let c = bits.trailingZeroBitCount
                bits &= bits - 1
                st = g.adding(camera: c, to: st, at: p, normal: info[s].n)
            }
            info[s].coverable = g.measure(st).well
        }
    }

    /// The value of revealing one element of the unseen surface in planner cell `cell`.
    /// (Nothing once a captured view faced it without revealing it.)
    @inline(__always) private func revealWorth(_ cell: Int32) -> Float {
        let m = misses[Int(cell)]
        return m == 0 ? SurfaceMap.revealValue : 0
    }

    /// The gain of each of the first `candidates` cameras.
    func score(_ g: GainScorer, candidates: Int, into scores: inout [Float]) {
        let all = candidates >= 64 ? UInt64.max : (UInt64(1) << UInt64(candidates)) - 1
        scores.withUnsafeMutableBufferPointer { sc in
            for s in 0..<count {
                let reveal = (pos[s].w == 0 ? seen[s] : back[s]) & all
                if reveal != 0 {
                    let value = revealWorth(info[s].cell) * info[s].weight
                    var bits = reveal
                    while bits != 0 {
                        sc[bits.trailingZeroBitCount] += value
                        bits &= bits - 1
                    }
                }
                guard pos[s].w > 0, info[s].coverable else { continue }
                var bits = seen[s] & all
                let smp = info[s]
                let p = Vec3(pos[s].x, pos[s].y, pos[s].z)
                while bits != 0 {
                    let c = bits.trailingZeroBitCount
                    bits &= bits - 1
                    sc[c] += g.gain(camera: c, sample: smp, at: p)
                }
            }
        }
    }

    /// Camera `c`'s gain per side (0...5): surface by its normal, frontier by its facing, surface
    /// seen from behind by the direction to the camera.
    func sides(_ g: GainScorer, camera c: Int) -> SIMD8<Float> {
        let bit = UInt64(1) << UInt64(c)
        var out = SIMD8<Float>(repeating: 0)
        for s in 0..<count {
            let p = Vec3(pos[s].x, pos[s].y, pos[s].z)
            if pos[s].w == 0 {
                if seen[s] & bit != 0 { out[g.map.side(normal: facing[s], at: p)] += revealWorth(info[s].cell) * info[s].weight }
                continue
            }
            if back[s] & bit != 0 { out[g.map.side(normal: g.eyes[c] - p, at: p)] += revealWorth(info[s].cell) * info[s].weight }
            if seen[s] & bit != 0 && info[s].coverable { out[g.map.side(normal: info[s].n, at: p)] += g.gain(camera: c, sample: info[s], at: p) }
        }
        return out
    }
}

/// The "well covered" arithmetic of the planner for the cameras `eyes` (box-local, each looking
/// at the box centre): what adding one view does to an element.
struct GainScorer {
    struct State {
        var views: Float, sum: Vec3, bestCos: Float, res: Float
    }
    let map: SurfaceMap
    let eyes: [Vec3]
    let forward: [Vec3]
    let minViews: Float, minSpread: Float, maxIncidence: Float, cosMax: Float, minRes: Float, focal: Float
    let spreadCosMet: Float, incidenceCosMet: Float, incidenceCosMissed: Float

    init(map: SurfaceMap, eyes: [Vec3], intrinsics k: Intrinsics) {
        self.map = map
        self.eyes = eyes
        forward = eyes.map { e in length(e) > 0 ? -e / length(e) : Vec3(0, 0, 1) }
        let o = map.options
        minViews = Float(o.minViews); minSpread = o.minSpreadDeg; maxIncidence = o.maxIncidenceDeg
        cosMax = cos(o.maxIncidenceDeg * .pi / 180); minRes = o.minPixelsPerCm
        let margin: Float = 0.01
        spreadCosMet = cos((o.minSpreadDeg + margin) * .pi / 360)
        incidenceCosMet = cos((o.maxIncidenceDeg - margin) * .pi / 180)
        incidenceCosMissed = cos((o.maxIncidenceDeg + margin) * .pi / 180)
        focal = (k.fx + k.fy) / 2
    }

    /// The share of the four thresholds met, in quarters (views and spread count partially), and
    /// whether all are met (`SurfaceMap.isWellCovered`'s rule).
    /// Without an `acos` where the threshold is clearly met or missed (0.01° away): the spread is
    /// at least `minSpread` when the mean direction's length is at most `spreadCosMet`; the best
    /// incidence is within `maxIncidence` when its cosine is at least `incidenceCosMet` and not
    /// when at most `incidenceCosMissed`. Between them, the exact arithmetic decides as before.
    @inline(__always) func measure(_ s: State) -> (share: Float, well: Bool) {
        var p = min(1, s.views / minViews)
        var spreadMet = minSpread <= 0
        if s.views > 1 {
            let x = min(1, length(s.sum) / s.views)
            if minSpread > 0 && x <= spreadCosMet {
                p += 1
                spreadMet = true
            } else {
                let spread = 2 * acos(x) * 180 / .pi
                p += minSpread > 0 ? min(1, spread / minSpread) : 1
                spreadMet = spread >= minSpread
            }
        } else if minSpread <= 0 {
            p += 1
        }
        let incidenceOK: Bool
        if s.bestCos > 0 && s.bestCos >= incidenceCosMet {
            incidenceOK = true
        } else if s.bestCos > 0 && s.bestCos <= incidenceCosMissed {
            incidenceOK = false
        } else {
            let incidence: Float = s.bestCos <= 0 ? 90 : acos(min(1, s.bestCos)) * 180 / .pi
            incidenceOK = incidence <= maxIncidence
        }
        let incidenceMet = s.bestCos >= cosMax
        if incidenceMet { p += 1 }
        if s.res >= minRes { p += 1 }
        return (p / 4, s.views >= minViews && spreadMet && incidenceOK && s.res >= minRes)
    }

    /// The state after camera `c` sees the element at `p` (`SurfaceElement.addDirection`'s rule
    /// for the incidence: without a normal, the mean direction of the views stands in).
    @inline(__always) func adding(camera c: Int, to s: State, at p: Vec3, normal n: Vec3) -> State {
        let toCam = eyes[c] - p
        let l = length(toCam)
        guard l > 0 else { return s }
        let d = toCam / l
        var out = s
        out.views += 1
        out.sum += d
        if n.x != 0 || n.y != 0 || n.z != 0 {
            out.bestCos = max(s.bestCos, dot(n, d))
        } else {
            let lm = length(out.sum)
            if lm > 0 { out.bestCos = max(s.bestCos, dot(out.sum / lm, d)) }
        }
        let z = dot(-toCam, forward[c])
        if z > 0 { out.res = max(s.res, focal / (z * 100)) }
        return out
    }

    /// What camera `c` adds to a surface sample: the share of thresholds newly met, one more
    /// when it becomes well covered, times the elements it stands for.
    @inline(__always) func gain(camera c: Int, sample smp: PlannerSample, at p: Vec3) -> Float {
        let after = measure(adding(camera: c, to: State(views: smp.views, sum: smp.sum, bestCos: smp.bestCos, res: smp.res), at: p, normal: smp.n))
        var g = after.share - smp.p0
        if after.well && !smp.well { g += 1 }
        return max(0, g) * smp.weight
    }
}

extension Intrinsics {
    /// Intrinsics from constants the caller guarantees valid; not checked.
    init(uncheckedFx fx: Float, fy: Float, cx: Float, cy: Float, width: UInt32, height: UInt32) {
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy; self.width = width; self.height = height
    }
}
