import CCaptureKitSIMD
import Glibc

/// One surface element: an occupied voxel of the measured surface (depth mode) or a cell of a
/// box face (face mode), with what the captured views made of it (`ck_surface_element`).
public struct SurfaceElement: Sendable {
    /// Linear voxel index (depth mode) or face cell index f·n² + row·n + column (face mode).
    public var voxel: Int32
    /// Captured views that saw it, and views that gave it a colour.
    public var views: UInt16 = 0
    public var colorCount: UInt16 = 0
    /// Box-frame unit normal (0 while unknown).
    public var nx: Float = 0, ny: Float = 0, nz: Float = 0
    /// Sum of the unit directions from the element to the cameras that saw it (box frame).
    public var dx: Float = 0, dy: Float = 0, dz: Float = 0
    /// Sum of the sampled colours (0...255 each).
    public var r: Float = 0, g: Float = 0, b: Float = 0
    /// Best (largest) cosine of the incidence angle, and best resolution, pixels per cm.
    public var bestCos: Float = -1
    public var bestPixelsPerCm: Float = 0
    /// The view stamp that last counted it (one count per view).
    var lastView: UInt32 = 0
    /// Captured views whose own depth frame put surface at it (`hits`), and views whose depth
    /// frame saw through it (every depth sample around it lies well behind it: `misses`). An
    /// element seen through more often than confirmed is not surface (a flying pixel, a bridge
    /// across a depth jump, noise in free space) and is removed.
    var hits: UInt16 = 0
    var misses: UInt16 = 0
    /// The number of captured views when it was first marked: the views before it are replayed
    /// on it from the kept depth frames (`SurfaceMap.history`) at the next view.
    var born: UInt32 = 0
    /// Sum of the unit normals measured on the depth frames of the captured views that saw it
    /// (box frame; 0 while none): the normal when present, the free neighbours' otherwise.
    var sx: Float = 0, sy: Float = 0, sz: Float = 0
    /// Its facings: up to two unit normals (octahedral codes, `Facing`) that the captured views'
    /// depth frames measured at it (a plane fitted one voxel around it), with how many views
    /// measured each (at most 255). A normal within 45 degrees of a facing joins it; another makes
    /// the second facing, or with two joins the nearer. Where the surface turns within the voxel,
    /// views on either side of the turn measure different facings (`SurfaceMap.facingShare`).
    var facingA: UInt32 = 0, facingB: UInt32 = 0
    var facingCountA: UInt8 = 0, facingCountB: UInt8 = 0
    /// The captured views that counted it, by stamp: bit `stamp - 1` for stamps 1...64 (low word
    /// 1...32, high word 33...64); later views are not tracked.
    var countedLow: UInt32 = 0, countedHigh: UInt32 = 0

    init(voxel: Int32) { self.voxel = voxel }

    /// Notes that the captured view `stamp` counted it (`countedLow` / `countedHigh`).
    mutating func noteCounted(stamp: UInt32) {
        if stamp >= 1 && stamp <= 32 {
            countedLow |= 1 << (stamp - 1)
        } else if stamp >= 33 && stamp <= 64 {
            countedHigh |= 1 << (stamp - 33)
        }
    }

    /// Adds a measured unit normal `m` (box frame) to its facings.
    mutating func addFacing(_ m: Vec3) {
        guard facingCountA > 0 else { facingA = Facing.encode(m); facingCountA = 1; return }
        let a = Facing.decode(facingA)
        let da = dot(a, m)
        if facingCountB == 0 {
            if da > Facing.joinCos { Facing.join(&facingA, &facingCountA, a, m) } else { facingB = Facing.encode(m); facingCountB = 1 }
            return
        }
        let b = Facing.decode(facingB)
        if da >= dot(b, m) { Facing.join(&facingA, &facingCountA, a, m) } else { Facing.join(&facingB, &facingCountB, b, m) }
    }

    public var normal: Vec3 { Vec3(nx, ny, nz) }

    /// Counts the direction `d` (unit, element → camera) of a view that saw it into the spread
    /// and the best incidence. Without a normal (no free neighbour: a voxel of a thick or noisy
    /// shell) the viewing rays stand in for it: the incidence is taken to their mean direction.
    mutating func addDirection(_ d: Vec3) {
        dx += d.x; dy += d.y; dz += d.z
        let n = normal
        if length(n) > 0 {
            bestCos = max(bestCos, dot(n, d))
        } else {
            let m = Vec3(dx, dy, dz)
            let lm = length(m)
            if lm > 0 { bestCos = max(bestCos, dot(m / lm, d)) }
        }
    }
    /// Adds `nb`, a unit normal measured at it on a captured view's depth frame (box frame), unless
    /// it opposes the element's normal (the far side of a thin part, within the tolerance behind
    /// the near side: a normal measured from this side does not belong to it). The measured
    /// normals win (`SurfaceMap.refreshNormals`) at once: the view's facing test then takes its own
    /// measurement into account. The free neighbours' normal is tens of degrees off on noisy
    /// surface seen at a slant (a table top), and with it a frame failed to count up to a third of
    /// the elements it had just made. Returns whether it was added.
    mutating func addMeasuredNormal(_ nb: Vec3) -> Bool {
        let current = normal
        guard length(current) == 0 || dot(current, nb) > 0 else { return false }
        sx += nb.x; sy += nb.y; sz += nb.z
        let m = Vec3(sx, sy, sz), lm = length(m)
        if lm > 0 { nx = m.x / lm; ny = m.y / lm; nz = m.z / lm }
        return true
    }

    /// Angle spread of the viewing directions, degrees: 2·acos(|Σd| / views) (two views: the
    /// angle between them; 0 for one view or none).
    public var spreadDeg: Float {
        guard views > 1 else { return 0 }
        let r = min(1, (dx * dx + dy * dy + dz * dz).squareRoot() / Float(views))
        return 2 * acos(r) * 180 / .pi
    }
    /// Best incidence angle (between the normal and the direction to the camera), degrees; 90
    /// when no view has seen it from the front.
    public var bestIncidenceDeg: Float { bestCos <= 0 ? 90 : acos(min(1, bestCos)) * 180 / .pi }
}

/// A facing's unit normal in 32 bits: the octahedral map, two signed 16-bit coordinates (the
/// decoded normal is within 0.05 degrees of the encoded one).
enum Facing {
    /// Normals within 45 degrees join one facing.
    static let joinCos: Float = 0.7071
    /// A facing counts once this many views measured it (or when it is the only one): a single
    /// measurement off the first facing is most often noise (BENCHMARKS.md).
    static let minMeasured: UInt8 = 2

    static func encode(_ n: Vec3) -> UInt32 {
        let s = Swift.abs(n.x) + Swift.abs(n.y) + Swift.abs(n.z)
        guard s > 0, s.isFinite else { return 0 }
        var u = n.x / s, v = n.y / s
        if n.z < 0 {
            let pu = (1 - Swift.abs(v)) * (u >= 0 ? 1 : -1), pv = (1 - Swift.abs(u)) * (v >= 0 ? 1 : -1)
            u = pu; v = pv
        }
        let qu = Int16(clamping: Int((u * 32767).rounded())), qv = Int16(clamping: Int((v * 32767).rounded()))
        return UInt32(UInt16(bitPattern: qu)) | UInt32(UInt16(bitPattern: qv)) << 16
    }

    static func decode(_ c: UInt32) -> Vec3 {
        let u = Float(Int16(bitPattern: UInt16(truncatingIfNeeded: c))) / 32767
        let v = Float(Int16(bitPattern: UInt16(truncatingIfNeeded: c >> 16))) / 32767
        var n = Vec3(u, v, 1 - Swift.abs(u) - Swift.abs(v))
        if n.z < 0 {
            let x = (1 - Swift.abs(n.y)) * (n.x >= 0 ? 1 : -1), y = (1 - Swift.abs(n.x)) * (n.y >= 0 ? 1 : -1)
            n.x = x; n.y = y
        }
        let l = length(n)
        return l > 0 ? n / l : Vec3(0, 0, 1)
    }

    /// Joins `m` to the facing (`code`, `count`) whose normal is `current`: the running mean.
    static func join(_ code: inout UInt32, _ count: inout UInt8, _ current: Vec3, _ m: Vec3) {
        let sum = current * Float(count) + m
        let l = length(sum)
        if l > 0 { code = encode(sum / l) }
        if count < .max { count += 1 }
    }
}

/// Per element, whether views on the rings around the box could cover it well
/// (`SurfaceMap.judgeReach`): 0 not judged yet, 1 yes, 2 no (out of reach). Two bits an element,
/// beside the elements (whose layout stays 96 bytes: the map's 32 MiB bound counts on it).
struct ReachBits {
    private var bytes: [UInt8] = []

    subscript(i: Int) -> UInt8 {
        get { i >= 0 && i >> 2 < bytes.count ? (bytes[i >> 2] >> UInt8((i & 3) * 2)) & 3 : 0 }
        set {
            guard i >= 0 else { return }
            if i >> 2 >= bytes.count { bytes.append(contentsOf: repeatElement(0, count: (i >> 2) + 1 - bytes.count)) }
            let shift = UInt8((i & 3) * 2)
            bytes[i >> 2] = (bytes[i >> 2] & ~(3 << shift)) | ((newValue & 3) << shift)
        }
    }

    mutating func removeAll() { bytes.removeAll() }
    var capacity: Int { bytes.capacity }
}

/// Voxel states of the map (`CK_SURFACE_VOXEL_*`).
public enum VoxelState: UInt8, Sendable {
    case unknown = 0, free = 1, occupied = 2
}

/// The surface coverage map of the space inside a box (issue 23): a voxel grid in the box's
/// frame fused from depth + pose (+ confidence), and per surface element what the captured views
/// made of it. Without depth the box's faces stand in for the surface (face mode).
///
/// Internal API for planners (next-best view) — everything in box-local coordinates (x right,
/// y up, z back; `Box.toLocal`), metres:
/// - `dims`, `voxelSize`, `origin`: voxel (i, j, k) spans origin + (i, j, k)·voxelSize … +1;
///   linear index (k·dims.y + j)·dims.x + i (`index(_:_:_:)`, `voxel(containing:)`, `centre(of:)`).
/// - `state(_:)`: unknown / free / occupied per voxel; `isFrontier(_:)`: an unknown voxel
///   6-adjacent to a surface voxel and to a free voxel (where seen surface meets unknown space).
/// - `march(origin:direction:maxDistance:)`: an exact voxel walk (Amanatides–Woo) through the
///   grid, returning the first occupied voxel (occlusion), the unknown and frontier voxels crossed.
/// - `elements`, `elementIndex(ofVoxel:)`: per surface element its normal, views, spread,
///   best incidence and resolution; `isWellCovered(_:)` applies the options' thresholds.
/// - `figures`, `side(of:)` group the elements by the dominant axis of their normals.
/// Not thread-safe (one thread at a time). The C object is `ck_surface`.
public final class SurfaceMap {
    public let options: SurfaceOptions
    /// Largest voxel count; a finer voxel size is coarsened to fit.
    public static let maxVoxels = 3_000_000
    /// Largest number of stored surface elements.
    public static let maxElements = 139_264
    /// Free voxels marked in front of each depth hit (the shell that bounds the seen surface;
    /// `fuseKernel` writes its three steps out, and a carve ray ends one step beyond them).
    static let shell = 3
    /// Neighbouring depth points further apart than this many voxels are a depth jump, not surface.
    static let bridge: Float = 8
    /// With a floor, the voxels this close to it (voxels) are floor, not surface: the grid starts
    /// above them (at most half the box's height).
    public static let floorBand = 2

    public internal(set) var isOwnedBySession = false
    public private(set) var box: Box
    public private(set) var voxelSize: Float = 0
    public private(set) var dims = SIMD3<Int>(1, 1, 1)
    public private(set) var origin = Vec3(0, 0, 0)
    public private(set) var fromDepth = false
    public private(set) var framesFused: UInt32 = 0
    public private(set) var views: UInt32 = 0
    public private(set) var elementsDropped: UInt32 = 0
    public private(set) var elements: [SurfaceElement] = []
    private var states: [UInt8] = []
    private var index: [Int32] = []
    private var sideCompleted = [Bool](repeating: false, count: 6)
    private var surfaceCompleted = false
    private var events = EventQueue()
    private var normalsDirty = false
    private var frontierCache: [UInt32]?
    /// `frontierSteps` as last computed, until the voxel states or the elements change.
    private var stepsCache: [UInt8]?
    /// Whether `frontierSteps` would be read from `stepsCache` (for tests).
    var frontierStepsCached: Bool { stepsCache?.count == elements.count }
    /// The figures as last read, until the map changes (`fuse`, `addView`, `reset`, `setBox`):
    /// a caller showing them and then asking for the next view computes them once.
    private var figuresMemo: SurfaceFigures?
    /// The per-side figures (with the unseen estimate) as last computed, until the map changes:
    /// the six `side` reads, the overall figures, the events and the hint share one pass.
    private var sidesMemo: [SurfaceSideFigures]?
    /// The two bounds without the estimate (`coveredSides`, `sideFigures(estimate: false)`) as
    /// last computed, until the map changes: a captured view's `raiseEvents` and the planner's
    /// `plannerFigures` after it share them.
    private var coveredMemo: [SurfaceSideFigures]?
    private var boundMemo: [SurfaceSideFigures]?
    /// The elements' part of both (`elementSides`), as last computed, until the map changes.
    private var elementSidesMemo: (sides: [SurfaceSideFigures], meanArea: Float)?
    /// Unseen surface per side as a share of the observed surface (`estimateUnseen`), measured for
    /// the last captured view (when the figures were first read after it); nil before the first view kept with its depth frame (the frontier
    /// voxels alone stand for the unseen surface then).
    private var unseenShare: [Float]?
    /// A view was captured since `unseenShare` was estimated: the next read of the figures (the
    /// figures, a side, the hint, an event that may fire) estimates it again, once per view.
    private var unseenStale = false
    /// A view was captured since the elements' reach was judged (`judgeReach`), or the box changed.
    private var reachStale = false
    /// The elements' reach (`judgeReach`), by element index.
    private var reach = ReachBits()
    /// Passes of `judgeReach` so far: which turn of the elements judged before it judges again.
    private var reachPasses = 0
    /// The elements' areas (`elementAreas`) while one call computes figures: its bounds and its
    /// figures share them. Dropped when that call returns (`releasingAreas`) and when the map
    /// changes; not kept between calls (the map's memory bound).
    private var areasScratch: [Float]?
    /// The ring views' judge (`ringReach`: the grid's occupied blocks) while one call computes
    /// figures: the reach judgement and the figures' facing pass share it. Dropped with
    /// `areasScratch` (`releaseScratch`) and when occupied voxels turn free (`removeContradicted`;
    /// a carve never clears an occupied voxel, and fusion drops the figures first).
    private var ringsScratch: RingReach?
    /// Distance of the last captured view from the box centre, metres (0: none yet).
    private var viewDistance: Float = 0
    /// The world positions of the first `trackedViews` captured views' cameras, by stamp - 1
    /// (`SurfaceElement.countedLow`, `facingShare`).
    private var viewEyes: [Vec3] = []
    static let trackedViews: UInt32 = 64
    private var newVoxels: [Int32] = []
    private var projected: [SIMD3<Float>] = []
    private var zbuffer: [Float] = []
    private var rowPoints: [SIMD4<Float>] = []
    /// The last fused depth frame, kept for a view captured at its pose (`addView`): the caller's
    /// metres and confidence as given (checked against the options where read), its intrinsics
    /// and pose; nil after `reset`.
    private var lastDepth: [Float] = []
    private var lastConfidence: [UInt8] = []
    private var lastFrame: (k: Intrinsics, pose: Pose, hasConfidence: Bool)?
    /// The kernels fusion runs: the AVX2 twins of the flying-pixel filter and of the row passes
    /// (CCaptureKitSIMD, fuse_avx2.c) where the CPU has them. Tests set `.baseline` on one map
    /// and `.avx2` on another to compare the two bit for bit.
    var kernel: SIMDKernel = SIMDDispatch.kernel
    /// The captured views that had their depth frame (the latest `maxHistory`): the view's pose,
    /// intrinsics and stamp, its depth frame sampled to at most 256 columns (0 = no valid depth)
    /// and that sampling's intrinsics. Surface first marked after a view is checked against it.
    struct KeptView {
        var pose: Pose, k: Intrinsics, stamp: UInt32
        var depth: [Float], depthK: Intrinsics
    }
    private(set) var history: [KeptView] = []
    /// The latest kept views not carved yet (`carvePending`).
    private var uncarved = 0
    static let maxHistory = 16
    /// The next-best-view planner's memory and scratch (NextBestView.swift; not part of the figures).
    var planner = PlannerMemory()

    /// - Throws: `invalidArgument` for options out of range.
    public init(box: Box, options: SurfaceOptions = SurfaceOptions()) throws(CaptureKitError) {
        try options.validate()
        self.options = options
        self.box = box
        layoutGrid()
        makeFaceCells()
    }

    public var voxelCount: Int { dims.x * dims.y * dims.z }
    public var pendingEvents: Int { events.count }
    public func nextEvent() -> GuidanceEvent? { events.pop() }

    // MARK: Grid

    private func layoutGrid() {
        let longest = max(box.size.x, box.size.y, box.size.z)
        var v = options.voxelSize > 0 ? options.voxelSize : longest / 128
        func count(_ v: Float) -> SIMD3<Int> {
            SIMD3(max(1, Int((box.size.x / v).rounded(.up))), max(1, Int((box.size.y / v).rounded(.up))),
                  max(1, Int((box.size.z / v).rounded(.up))))
        }
        // Box edges are within [0.01, 1000] m and v >= 0.0005 m, so a count is at most 2e6.
        var n = count(v)
        let total = Double(n.x) * Double(n.y) * Double(n.z)
        if total > Double(SurfaceMap.maxVoxels) {
            v *= Float((total / Double(SurfaceMap.maxVoxels)).squareRoot().squareRoot() * 0.9)  // close, then the loop
            n = count(v)
        }
        while Double(n.x) * Double(n.y) * Double(n.z) > Double(SurfaceMap.maxVoxels) {
            v *= 1.05
            n = count(v)
        }
        voxelSize = v
        dims = n
        origin = -Vec3(Float(n.x), Float(n.y), Float(n.z)) * v / 2
        if box.floor != nil {
            // The floor rule: the grid starts `floorBand` voxels above the floor, so that depth on
            // the floor (within the depth noise) adds no surface; rays to it still carve the free
            // space above it (the shell and the carve rays reach into the grid).
            let band = min(Float(SurfaceMap.floorBand) * v, box.size.y / 2)
            origin.y = -box.halfSize.y + band
            dims.y = max(1, Int(((box.size.y - band) / v).rounded(.up)))
        }
        states = [UInt8](repeating: 0, count: dims.x * dims.y * dims.z)
        index = [Int32](repeating: -1, count: dims.x * dims.y * dims.z)
        frontierCache = nil
        stepsCache = nil
        unseenShare = nil
        unseenStale = false
        uncarved = 0  // a new grid has no `passedBit`s: the kept views are not carved into it
    }

    @inline(__always) public func index(_ i: Int, _ j: Int, _ k: Int) -> Int { (k * dims.y + j) * dims.x + i }

    /// The voxel holding a box-local point, nil outside the grid.
    public func voxel(containing p: Vec3) -> SIMD3<Int>? {
        let g = (p - origin) / voxelSize
        guard g.x >= 0, g.y >= 0, g.z >= 0, g.x < Float(dims.x), g.y < Float(dims.y), g.z < Float(dims.z) else { return nil }
        return SIMD3(Int(g.x), Int(g.y), Int(g.z))
    }

    @inline(__always) public func centre(of v: SIMD3<Int>) -> Vec3 {
        origin + (Vec3(Float(v.x), Float(v.y), Float(v.z)) + 0.5) * voxelSize
    }

    public func coordinates(ofIndex i: Int) -> SIMD3<Int> {
        SIMD3(i % dims.x, (i / dims.x) % dims.y, i / (dims.x * dims.y))
    }

    public func state(_ v: SIMD3<Int>) -> VoxelState {
        guard v.x >= 0, v.y >= 0, v.z >= 0, v.x < dims.x, v.y < dims.y, v.z < dims.z else { return .unknown }
        return VoxelState(rawValue: states[index(v.x, v.y, v.z)] & 3) ?? .unknown
    }

    /// Voxel states, x fastest (`ck_surface_voxels`).
    public var voxelStates: [UInt8] { states.map { $0 & 3 } }

    public func elementIndex(ofVoxel i: Int) -> Int? {
        guard fromDepth, i >= 0, i < index.count, index[i] >= 0 else { return nil }
        return Int(index[i])
    }

    /// True for an unknown voxel 6-adjacent to a surface voxel and to a free voxel.
    public func isFrontier(_ v: SIMD3<Int>) -> Bool {
        guard state(v) == .unknown else { return false }
        var nearSurface = false, nearFree = false
        for o in SurfaceMap.six {
            switch state(v &+ o) {
            case .occupied: nearSurface = true
            case .free: nearFree = true
            case .unknown: break
            }
        }
        return nearSurface && nearFree
    }

    static let six: [SIMD3<Int>] = [SIMD3(1, 0, 0), SIMD3(-1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, -1, 0), SIMD3(0, 0, 1), SIMD3(0, 0, -1)]

    /// A box-local element position: the voxel centre, or the face cell's centre.
    @inline(__always) public func position(of e: SurfaceElement) -> Vec3 {
        if fromDepth, e.voxel >= 0 {  // 32-bit division: the voxel index is an Int32
            let i = UInt32(truncatingIfNeeded: e.voxel)
            let nx = UInt32(truncatingIfNeeded: dims.x), ny = UInt32(truncatingIfNeeded: dims.y)
            let q = i / nx
            return centre(of: SIMD3(Int(i - q * nx), Int(q % ny), Int(q / ny)))
        }
        if fromDepth { return centre(of: coordinates(ofIndex: Int(e.voxel))) }
        let n = Int(options.faceCells)
        let f = Int(e.voxel) / (n * n), rc = Int(e.voxel) % (n * n)
        let row = rc / n, col = rc % n
        let u = (Float(col) + 0.5) / Float(n) * 2 - 1, w = 1 - (Float(row) + 0.5) / Float(n) * 2
        let h = box.halfSize
        switch f {
        case 0: return Vec3(-u * h.x, w * h.y, -h.z)   // front, seen from outside: +x of the face is box −x
        case 1: return Vec3(-h.x, w * h.y, u * h.z)    // left
        case 2: return Vec3(h.x, w * h.y, -u * h.z)    // right
        case 3: return Vec3(u * h.x, -h.y, w * h.z)    // bottom
        case 4: return Vec3(u * h.x, h.y, -w * h.z)    // top
        default: return Vec3(u * h.x, w * h.y, h.z)    // back
        }
    }

    private func makeFaceCells() {
        guard !fromDepth else { return }
        let n = Int(options.faceCells)
        var cells: [SurfaceElement] = []
        cells.reserveCapacity(6 * n * n)
        for f in 0..<6 {
            let normal = Box.faceNormals[f]
            for c in 0..<(n * n) {
                var e = SurfaceElement(voxel: Int32(f * n * n + c))
                e.nx = normal.x; e.ny = normal.y; e.nz = normal.z
                cells.append(e)
            }
        }
        elements = cells
        reach.removeAll()
    }

    // MARK: Box and reset

    /// Forgets every frame, view and event; keeps the box and the options (back to face mode).
    public func reset() {
        forgetFigures()
        fromDepth = false
        framesFused = 0; views = 0; elementsDropped = 0
        sideCompleted = [Bool](repeating: false, count: 6)
        surfaceCompleted = false
        events.removeAll()
        lastFrame = nil
        history = []
        viewEyes = []
        viewDistance = 0
        planner = PlannerMemory()
        layoutGrid()
        makeFaceCells()
    }

    /// Re-binds to an edited box. The measured surface stays where it is in the world: the map is
    /// resampled into the new box's grid (each new voxel takes the state and element of the old
    /// voxel under its centre; space outside the old box is unknown). In face mode the cells'
    /// counts are kept (they belong to the faces of the box's own frame, as `Coverage`'s).
    public func setBox(_ newBox: Box) {
        forgetFigures()
        guard fromDepth else {
            box = newBox
            let kept = elements
            layoutGrid()
            elements = kept
            return
        }
        let oldBox = box, oldDims = dims, oldOrigin = origin, oldV = voxelSize
        let oldStates = states, oldIndex = index, oldElements = elements
        box = newBox
        layoutGrid()
        var newElements: [SurfaceElement] = []
        func rotate(_ x: Float, _ y: Float, _ z: Float) -> Vec3 {
            newBox.toLocal(direction: oldBox.toWorld(direction: Vec3(x, y, z)))
        }
        for k in 0..<dims.z {
            for j in 0..<dims.y {
                for i in 0..<dims.x {
                    let local = centre(of: SIMD3(i, j, k))
                    let world = newBox.center + newBox.toWorld(direction: local)
                    let g = (oldBox.toLocal(direction: world - oldBox.center) - oldOrigin) / oldV
                    guard g.x >= 0, g.y >= 0, g.z >= 0, g.x < Float(oldDims.x), g.y < Float(oldDims.y), g.z < Float(oldDims.z) else { continue }
                    let o = (Int(g.z) * oldDims.y + Int(g.y)) * oldDims.x + Int(g.x)
                    let n = index(i, j, k)
                    states[n] = oldStates[o] & 3
                    let oe = oldIndex[o]
                    guard oe >= 0, Int(oe) < oldElements.count, newElements.count < SurfaceMap.maxElements else {
                        if states[n] == VoxelState.occupied.rawValue && oe >= 0 { elementsDropped &+= 1 }
                        continue
                    }
                    var e = oldElements[Int(oe)]
                    e.voxel = Int32(n)
                    let nn = rotate(e.nx, e.ny, e.nz), d = rotate(e.dx, e.dy, e.dz)
                    e.nx = nn.x; e.ny = nn.y; e.nz = nn.z; e.dx = d.x; e.dy = d.y; e.dz = d.z
                    let sn = rotate(e.sx, e.sy, e.sz)
                    e.sx = sn.x; e.sy = sn.y; e.sz = sn.z
                    index[n] = Int32(newElements.count)
                    newElements.append(e)
                }
            }
        }
        elements = newElements
        reach.removeAll()  // judged again for the new box at the next read
        reachStale = true
        normalsDirty = true
    }

    // MARK: Fusion

    /// Fuses one depth frame: z-depth metres (packed, `k.width × k.height`), optional confidence
    /// (same size), the depth map's intrinsics and the camera-to-world pose (OpenGL camera axes).
    /// Each valid pixel (finite, > 0, ≤ maxDepth, confidence ≥ minConfidence, not a flying pixel:
    /// `dropFlyingPixels`) marks the voxel it
    /// hits occupied (a surface element) and the `shell` voxels in front of it free; a sparse grid
    /// of rays (about 32 × 24, its phase turning frame by frame) carves free space from the box
    /// entry to just before the hit. Occupied voxels are never carved. The first fused frame
    /// switches the map from face mode to the measured surface.
    public func fuse(metres: UnsafeBufferPointer<Float>, confidence: UnsafeBufferPointer<UInt8>?, intrinsics k: Intrinsics, pose: Pose) {
        let width = Int(k.width), height = Int(k.height)
        guard metres.count >= width * height else { return }  // the caller checked
        forgetFigures()
        if !fromDepth {
            fromDepth = true
            elements = []
            reach.removeAll()
            views = 0
            sideCompleted = [Bool](repeating: false, count: 6)
            surfaceCompleted = false
        }
        framesFused &+= 1
        let v = voxelSize
        // Camera → grid coordinates: g = gb + d · (ga_x·u′ − ga_y·v′ − ga_z).
        var f = FuseFrame(
            ax: box.toLocal(direction: pose.x) / v, ay: box.toLocal(direction: pose.y) / v, az: box.toLocal(direction: pose.z) / v,
            gb: (box.toLocal(direction: pose.t - box.center) - origin) / v,
            nx: dims.x, ny: dims.y, nz: dims.z, width: width, height: height,
            cx: k.cx, cy: k.cy, ifx: 1 / k.fx, ify: 1 / k.fy,
            maxDepth: options.maxDepth > 0 ? options.maxDepth : Float.greatestFiniteMagnitude,
            minConfidence: UInt8(clamping: options.minConfidence),
            strideX: max(1, width / 32), strideY: max(1, height / 24), phaseX: 0, phaseY: 0)
        let phase = Int(framesFused)
        f.phaseX = phase % f.strideX
        f.phaseY = (phase / f.strideX) % f.strideY
        // The scratch arrays and the voxel states leave `self` for the frame, so that the per-pixel
        // loop touches only locals and raw buffers (no exclusivity checks, no retains).
        var fresh = newVoxels, rows = rowPoints, st = states
        newVoxels = []; rowPoints = []; states = []
        fresh.removeAll(keepingCapacity: true)
        // The kernel's two rows of points by axis (`fuseKernel`), as floats.
        let rowFloats = 6 * (4 * ((width + 3) / 4) + 4)
        if 4 * rows.count < rowFloats { rows = [SIMD4<Float>](repeating: FuseFrame.invalid, count: (rowFloats + 3) / 4) }
        // The frame is kept first (`keepFrame`: the depth without its flying pixels), and the
        // kernel fuses the kept copy.
        keepFrame(metres: metres, confidence: confidence, intrinsics: k, pose: pose)
        let kept = lastDepth
        st.withUnsafeMutableBufferPointer { stp in
            rows.withUnsafeMutableBufferPointer { rp in
                rp.withMemoryRebound(to: Float.self) { floats in
                    kept.withUnsafeBufferPointer { depth in
                        SurfaceMap.fuseKernel(f, metres: depth, confidence: confidence, states: stp, rows: floats, fresh: &fresh,
                                              kernel: kernel)
                    }
                }
            }
        }
        states = st; rowPoints = rows
        for n in fresh {
            guard elements.count < SurfaceMap.maxElements else { elementsDropped &+= 1; continue }
            index[Int(n)] = Int32(elements.count)
            var e = SurfaceElement(voxel: n)
            e.born = views
            elements.append(e)
        }
        newVoxels = fresh
        normalsDirty = true
        frontierCache = nil
        stepsCache = nil
    }

    /// Copies the frame for `addView` and `fuse` (two block copies), then drops its flying pixels
    /// in the copy (`dropFlyingPixels`).
    private func keepFrame(metres: UnsafeBufferPointer<Float>, confidence: UnsafeBufferPointer<UInt8>?, intrinsics k: Intrinsics, pose: Pose) {
        let n = Int(k.width) * Int(k.height)
        if lastDepth.count != n { lastDepth = [Float](repeating: 0, count: n) }
        let maxDepth = options.maxDepth > 0 ? options.maxDepth : Float.greatestFiniteMagnitude
        lastDepth.withUnsafeMutableBufferPointer { dst in
            guard let d = dst.baseAddress, let src = metres.baseAddress else { return }
            d.update(from: src, count: n)
            // A pixel further than the box's far side (+ a jump) is no point of the box, and one
            // outside `gridPixels` has no ray that reaches the grid: neither is read again.
            let farthest = length(pose.t - box.center) + length(box.halfSize) + (SurfaceMap.bridge + 1) * voxelSize
            SurfaceMap.dropFlyingPixels(src: src, dst: d, width: Int(k.width), height: Int(k.height), fx: k.fx,
                                        voxel: voxelSize, maxDepth: maxDepth, farthest: farthest,
                                        within: gridPixels(pose: pose, intrinsics: k), kernel: kernel)
        }
        var hasConfidence = false
        if let c = confidence, c.count >= n {
            if lastConfidence.count != n { lastConfidence = [UInt8](repeating: 0, count: n) }
            lastConfidence.withUnsafeMutableBufferPointer { dst in
                guard let d = dst.baseAddress, let src = c.baseAddress else { return }
                d.update(from: src, count: n)
            }
            hasConfidence = true
        }
        lastFrame = (k, pose, hasConfidence)
    }

    /// A rectangle of pixels, columns x0..<x1 and rows y0..<y1.
    struct PixelRect: Equatable {
        var x0: Int, x1: Int, y0: Int, y1: Int
        static func whole(_ k: Intrinsics) -> PixelRect { PixelRect(x0: 0, x1: Int(k.width), y0: 0, y1: Int(k.height)) }
    }

    /// The pixels of a frame taken at `pose` (camera-to-world) whose rays can come near the grid:
    /// the bounding rectangle of the projected corners of the grid grown by `bridge` + 1 voxels
    /// (the kernel's reach around a point: its bridges and its shell), grown by 2 pixels (a
    /// pixel's neighbours: `depthNormal`, the 3 × 3 of `verdict`) and clipped to the image. The
    /// projection of a box in front of the camera lies within that of its corners, so no other
    /// pixel's ray meets the grown grid; when a corner lies less than `Box.nearPlane` in front of
    /// the camera (or behind it), the whole image. The projection is the library's one
    /// (`Pose.toCamera`, `Intrinsics.project`).
    func gridPixels(pose: Pose, intrinsics k: Intrinsics) -> PixelRect {
        let grow = (SurfaceMap.bridge + 1) * voxelSize
        let lo = origin - grow, hi = origin + Vec3(Float(dims.x), Float(dims.y), Float(dims.z)) * voxelSize + grow
        var uMin = Float.infinity, uMax = -Float.infinity, vMin = Float.infinity, vMax = -Float.infinity
        for c in 0..<8 {
            let local = Vec3(c & 1 == 0 ? lo.x : hi.x, c & 2 == 0 ? lo.y : hi.y, c & 4 == 0 ? lo.z : hi.z)
            let q = pose.toCamera(box.center + box.toWorld(direction: local))
            guard q.z <= -Box.nearPlane, let px = k.project(camera: q) else { return .whole(k) }
            uMin = min(uMin, px.x); uMax = max(uMax, px.x); vMin = min(vMin, px.y); vMax = max(vMax, px.y)
        }
        let w = Float(k.width), h = Float(k.height)
        guard uMin.isFinite, uMax.isFinite, vMin.isFinite, vMax.isFinite else { return .whole(k) }
        // Clamped as floats first: a corner far off the image stays within Int's range.
        @inline(__always) func pixel(_ u: Float, _ limit: Float) -> Int { Int(min(max(u.rounded(.down), -4), limit + 4)) }
        let x0 = max(0, pixel(uMin, w) - 2), x1 = min(Int(k.width), pixel(uMax, w) + 3)
        let y0 = max(0, pixel(vMin, h) - 2), y1 = min(Int(k.height), pixel(vMax, h) + 3)
        return PixelRect(x0: x0, x1: max(x0, x1), y0: y0, y1: max(y0, y1))
    }

    /// The largest depth step between neighbouring pixels of one surface at depth `z` (metres):
    /// 8 pixel footprints (a surface up to 83 degrees from facing the camera) + 2 voxels. Larger
    /// steps are a jump between surfaces.
    @inline(__always) static func jumpLimit(z: Float, fx: Float, voxel: Float) -> Float {
        8 * z / fx + 2 * voxel
    }

    /// Zeroes in `dst` the flying pixels of `src` (width × height, row-major): valid samples that
    /// lie between the two valid neighbours on one line through them (left-right, up-down or a
    /// diagonal), further than `jumpLimit` from both, nearer than one and further than the other.
    /// A sensor blends the two sides of a depth jump into such pixels (time of flight, structured
    /// light, a LiDAR's edges), and they float between the surfaces: fused, they were surface in
    /// mid-air that no view covers well (the teapot of BENCHMARKS.md ended 11 points under the
    /// truth with the benchmark's blended pixels). A surface's own pixels step by less than the
    /// limit up to 83 degrees from facing the camera; the border rows and columns are kept.
    /// Pixels further than `farthest` (the box's far side) and outside `within` (`gridPixels`)
    /// are left as they are: nothing of the box lies there.
    static func dropFlyingPixels(src: UnsafePointer<Float>, dst: UnsafeMutablePointer<Float>, width w: Int, height h: Int,
                                 fx: Float, voxel: Float, maxDepth: Float, farthest: Float = .infinity,
                                 within rect: PixelRect? = nil, kernel: SIMDKernel = SIMDDispatch.kernel) {
        guard w >= 3, h >= 3 else { return }
        let avx2 = SIMDDispatch.resolve(kernel) == .avx2
        let r = rect ?? PixelRect(x0: 0, x1: w, y0: 0, y1: h)
        let xStart = max(1, r.x0), xEnd = min(w - 1, r.x1), yStart = max(1, r.y0), yEnd = min(h - 1, r.y1)
        guard xStart < xEnd, yStart < yEnd else { return }
        let far = SIMD4<Float>(repeating: farthest)
        // Four pixels at a time (SIMD4 lanes, masks combined with .& and .|: the same comparisons
        // as one pixel at a time), the rest of a row one by one. The groups read their rows from
        // copies whose invalid samples (<= 0, beyond `maxDepth`, NaN) are NaN: NaN fails every
        // comparison, so a pair with an invalid end never straddles and an invalid pixel is never
        // dropped, without a validity test per read. Valid samples are copied as they are.
        let zero = SIMD4<Float>(repeating: 0), top = SIMD4<Float>(repeating: maxDepth)
        let nan = SIMD4<Float>(repeating: .nan)
        let perZ = SIMD4<Float>(repeating: 8 / fx), base = SIMD4<Float>(repeating: 2 * voxel)
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
        }
        @inline(__always) func load(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> { load(UnsafePointer(p)) }
        // Columns xStart - 1 ... xEnd of rows y - 1, y, y + 1, in three rows used in turn.
        let span = xEnd - xStart + 2
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * span) { rows in
            guard let rowBase = rows.baseAddress else { return }
            @inline(__always) func copyValid(row y: Int) {
                let from = src + y * w + xStart - 1, to = rowBase + (y % 3) * span
                if avx2 { cks_valid_copy_avx2(from, to, span, maxDepth); return }
                var i = 0
                while i + 4 <= span {
                    let v = load(from + i)
                    UnsafeMutableRawPointer(to + i).storeBytes(of: nan.replacing(with: v, where: (v .> zero) .& (v .<= top)),
                                                               as: SIMD4<Float>.self)
                    i += 4
                }
                while i < span {
                    let v = from[i]
                    to[i] = v > 0 && v <= maxDepth ? v : .nan
                    i += 1
                }
            }
            copyValid(row: yStart - 1)
            copyValid(row: yStart)
            for y in yStart..<yEnd {
                copyValid(row: y + 1)
                // Rows y - 1, y, y + 1 in the copies; column x is at x - (xStart - 1).
                let up = rowBase + ((y - 1) % 3) * span, row = rowBase + (y % 3) * span, down = rowBase + ((y + 1) % 3) * span
                var x = xStart
                if avx2 {
                    x = cks_flying_row_avx2(up, row, down, src + y * w, dst + y * w, xStart, xEnd, 8 / fx, 2 * voxel, farthest)
                }
                while x + 4 <= xEnd {
                    let c = x - xStart + 1
                    let d = load(row + c)
                    // Nothing to drop where all four are invalid or beyond the box (the kernel fuses
                    // none of them); a lane beyond it is kept in a mixed group too, as the scalar tail
                    // keeps it.
                    let near = d .<= far
                    if !anyLane(near) { x += 4; continue }
                    let jump = perZ * d + base  // jumpLimit, lane by lane
                    let lo = d - jump, hi = d + jump
                    @inline(__always) func between(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMDMask<SIMD4<Int32>> {
                        ((a .< lo) .& (b .> hi)) .| ((b .< lo) .& (a .> hi))
                    }
                    let flying = near .& (between(load(row + c - 1), load(row + c + 1)) .| between(load(up + c), load(down + c))
                        .| between(load(up + c - 1), load(down + c + 1)) .| between(load(up + c + 1), load(down + c - 1)))
                    if anyLane(flying) {
                        let at = y * w + x
                        UnsafeMutableRawPointer(dst + at).storeBytes(of: load(src + at).replacing(with: 0, where: flying),
                                                                     as: SIMD4<Float>.self)
                    }
                    x += 4
                }
                // The rest of the row from the frame itself, one pixel at a time.
                let up0 = src + (y - 1) * w, row0 = src + y * w, down0 = src + (y + 1) * w
                while x < xEnd {
                    let d = row0[x]
                    guard d <= farthest else { x += 1; continue }
                    let jump = jumpLimit(z: d, fx: fx, voxel: voxel)
                    @inline(__always) func ok(_ a: Float) -> Bool { a > 0 && a <= maxDepth }
                    @inline(__always) func between(_ a: Float, _ b: Float) -> Bool {
                        (ok(a) && ok(b)) && ((a < d - jump && b > d + jump) || (b < d - jump && a > d + jump))
                    }
                    if ok(d) && (between(row0[x - 1], row0[x + 1]) || between(up0[x], down0[x])
                        || between(up0[x - 1], down0[x + 1]) || between(up0[x + 1], down0[x - 1])) {
                        dst[y * w + x] = 0
                    }
                    x += 1
                }
            }
        }
    }

    /// What the last fused depth frame says about a box-local point, when a view is captured at
    /// that frame's pose (camera centres within a quarter voxel, axes within about half a degree).
    enum DepthVerdict { case surface, seenThrough, hidden, unknown }

    /// The last fused frame when it was taken at `pose`, nil otherwise.
    private func frame(matching pose: Pose) -> (k: Intrinsics, pose: Pose, hasConfidence: Bool)? {
        guard let f = lastFrame else { return nil }
        let cosTol: Float = 0.99996  // ~0.5 degree
        guard length(f.pose.t - pose.t) <= 0.25 * voxelSize, dot(f.pose.x, pose.x) >= cosTol,
              dot(f.pose.y, pose.y) >= cosTol, dot(f.pose.z, pose.z) >= cosTol else { return nil }
        return f
    }

    /// The constants of one fused frame, in grid units (voxels).
    struct FuseFrame {
        var ax: Vec3, ay: Vec3, az: Vec3, gb: Vec3
        var nx: Int, ny: Int, nz: Int, width: Int, height: Int
        var cx: Float, cy: Float, ifx: Float, ify: Float, maxDepth: Float
        var minConfidence: UInt8
        var strideX: Int, strideY: Int, phaseX: Int, phaseY: Int
        /// A row point with no valid depth (x = −1; the kernel's points are padded to 4 lanes).
        static let invalid = SIMD4<Float>(-1, -1, -1, 0)
    }

    /// The per-pixel loop of `fuse` over raw buffers only. Points further than `bridge` + 1 voxels
    /// outside the grid (the background behind the box, most pixels of a handheld view) skip the
    /// mark, the bridges and the shell: every voxel those would touch lies outside the grid (a
    /// bridge spans < `bridge` voxels, the shell 3), so the result is the same as walking them.
    static func fuseKernel(_ f: FuseFrame, metres: UnsafeBufferPointer<Float>, confidence: UnsafeBufferPointer<UInt8>?,
                           states st: UnsafeMutableBufferPointer<UInt8>, rows: UnsafeMutableBufferPointer<Float>,
                           fresh: inout [Int32], kernel: SIMDKernel = SIMDDispatch.kernel) {
        let width = f.width
        let fnx = Float(f.nx), fny = Float(f.ny), fnz = Float(f.nz)
        let maxBridge = SurfaceMap.bridge
        let margin = maxBridge + 1
        let nearLo = Vec3(-margin, -margin, -margin), nearHi = Vec3(fnx + margin, fny + margin, fnz + margin)
        let gridHi = Vec3(fnx, fny, fnz)
        let occupied = VoxelState.occupied.rawValue, free = VoxelState.free.rawValue
        let gb = f.gb, maxDepth = f.maxDepth, minConf = f.minConfidence
        let (nx, ny) = (f.nx, f.ny)
        // The depths along the optical axis at which a pixel's point can be near the grid: the range
        // of z(p) = −az·(p − gb) / |az|² over the corners of the grid grown by the margin (z is
        // linear, the grown grid convex), with slack for rounding. A pixel's point is gb + d·dir,
        // so z = d·w with w = −az·dir / |az|² (1 for an exactly orthonormal pose; computed, so a
        // pose within the rigid tolerance is handled exactly too). Outside that range the point,
        // its bridges and its shell all lie outside the grid: its row point stays `invalid` and it
        // marks nothing, as walking it would.
        let azz = dot(f.az, f.az)
        var zNear = Float.infinity, zFar = -Float.infinity
        for c in 0..<8 {
            let corner = Vec3(c & 1 == 0 ? nearLo.x : nearHi.x, c & 2 == 0 ? nearLo.y : nearHi.y, c & 4 == 0 ? nearLo.z : nearHi.z)
            let z = -dot(f.az, corner - gb) / azz
            zNear = min(zNear, z); zFar = max(zFar, z)
        }
        let wX = -dot(f.az, f.ax) / azz
        zNear = zNear - abs(zNear) * 1e-4 - 1e-6
        zFar = zFar + abs(zFar) * 1e-4 + 1e-6
        // Passes 1 and 2 of each row (below) run in the AVX2 twin where the CPU has it.
        let avx2 = SIMDDispatch.resolve(kernel) == .avx2
        var twin = cks_fuse_frame(gb: (gb.x, gb.y, gb.z), ax: (f.ax.x, f.ax.y, f.ax.z), lo: (nearLo.x, nearLo.y, nearLo.z),
                                  hi: (nearHi.x, nearHi.y, nearHi.z), z_near: zNear, z_far: zFar, max_depth: maxDepth, w_x: wX,
                                  nx: UInt32(truncatingIfNeeded: f.nx), ny: UInt32(truncatingIfNeeded: f.ny),
                                  nz: UInt32(truncatingIfNeeded: f.nz), reserved: 0)
        // The rows run on lanes of four pixels (below); a bridge of more than one sample and the
        // carve rays run on 4-lane points (x, y, z, 0): what an SSE register holds, so the
        // compiler needs no shuffles to keep a fourth lane out, and a lane-wise test reduces with
        // one mask move. Either way each axis sees the same float operations as 3-lane vectors
        // would (same results, bit for bit); the padding lane stays 0 (0 + 0·t for finite t).
        @inline(__always) func pad(_ v: Vec3) -> SIMD4<Float> { SIMD4(v.x, v.y, v.z, 0) }
        let ax = pad(f.ax), gb4 = pad(gb)
        let gbx = SIMD4<Float>(repeating: gb.x), gby = SIMD4<Float>(repeating: gb.y), gbz = SIMD4<Float>(repeating: gb.z)
        // The linear index of the voxel holding p, or −1 outside the grid: the in-grid test and
        // the index on the same integer lanes. Truncation without Int(Float)'s per-lane checks:
        // for 0 ≤ p < 2²³, p + 2²³ rounds p to the nearest integer n in the low mantissa bits,
        // exactly; n − 1 when n > p, so q = Int(p) lane by lane. For −2²² ≤ p < 0 the same steps
        // give q < 0 (and q = 0 for −0, which `p >= 0` takes too). Every point asked for lies
        // within a few voxels of the grid grown by `margin`, so q < n as unsigned lanes is exactly
        // 0 ≤ p < n, the float test it replaces (the padding lane: 0 < 1).
        let magic = SIMD4<Float>(repeating: 8_388_608)
        let dims = SIMD4<UInt32>(UInt32(truncatingIfNeeded: f.nx), UInt32(truncatingIfNeeded: f.ny), UInt32(truncatingIfNeeded: f.nz), 1)
        @inline(__always) func cell(_ p: SIMD4<Float>) -> Int {
            let r = p + magic
            let above = (r - magic) .> p
            let q = unsafeBitCast(r, to: SIMD4<Int32>.self) &- 0x4B00_0000 &+ unsafeBitCast(above, to: SIMD4<Int32>.self)
            guard allLanes(unsafeBitCast(q, to: SIMD4<UInt32>.self) .< dims) else { return -1 }
            return (Int(q.z) &* ny &+ Int(q.y)) &* nx &+ Int(q.x)
        }
        @inline(__always) func mark(_ g: SIMD4<Float>) {
            let n = cell(g)
            guard n >= 0 else { return }
            if st[n] != occupied {
                st[n] = occupied
                fresh.append(Int32(truncatingIfNeeded: n))
            }
        }
        let one = SIMD4<Float>(repeating: 1)
        /// Lane-wise |v| (the sign bit cleared).
        @inline(__always) func magnitude(_ v: SIMD4<Float>) -> SIMD4<Float> {
            unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7FFF_FFFF, to: SIMD4<Float>.self)
        }
        /// Lane-wise max(a, b) as the scalar `max` takes it (b where b ≥ a).
        @inline(__always) func larger(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .>= a) }
        let zero4 = SIMD4<Float>(repeating: 0), two4 = SIMD4<Float>(repeating: 2), half4 = SIMD4<Float>(repeating: 0.5)
        // 1 / Float(k + 1) for the k = Int(m) samples of a bridge (1 ≤ k ≤ 7), computed as the
        // loop computed it per bridge.
        assert(SurfaceMap.bridge <= 8 && SurfaceMap.maxVoxels < 1 << 23)
        var inverses = SIMD8<Float>(repeating: 0)
        for k in 1..<8 { inverses[k] = 1 / Float(k + 1) }
        @inline(__always) func span(_ g: SIMD4<Float>, _ nb: SIMD4<Float>) {
            guard nb.x >= 0 else { return }
            let diff = nb - g
            // Most neighbours are less than a voxel away on every axis (m ≤ 1: no bridge): one
            // lane-wise test decides that before the exact distance is taken (finite lanes, so
            // m > 1 exactly when a lane's magnitude is > 1).
            guard anyLane((diff .> one) .| (diff .< -one)) else { return }
            let m = max(abs(diff.x), abs(diff.y), abs(diff.z))
            guard m > 1, m < maxBridge else { return }
            // k = Int(m) for 1 < m < 8 from the bits (exponent 0...2: the mantissa with its
            // leading 1, shifted), and 1 / Float(k + 1) from the frame's table: the same values
            // without the checked conversion and the division.
            let bits = m.bitPattern
            let k = Int(truncatingIfNeeded: (bits & 0x7F_FFFF) | 0x80_0000) &>> (150 &- Int(truncatingIfNeeded: bits &>> 23))
            let inv = inverses[k & 7]
            if k == 1 { mark(g + diff * inv); return }  // Float(1) · inv = inv
            for i in 1...k { mark(g + diff * (Float(i) * inv)) }
        }
        @inline(__always) func clearCell(_ n: Int) {
            if st[n] & 3 == 0 { st[n] = free }
        }
        @inline(__always) func clear(_ p: SIMD4<Float>) {
            let n = cell(p)
            guard n >= 0 else { return }
            clearCell(n)
        }
        // The voxels of four points given by axis (lane j: point j): per lane the truncation and
        // in-grid test of `cell`, and the linear index computed in floats (for an in-grid lane
        // the coordinates are integers and every product and partial sum is below `maxVoxels`
        // < 2²³: exact). `inGrid` is true for a lane inside the grid; the index of a lane outside
        // is meaningless (the callers mask it).
        let magicBits = SIMD4<Int32>(repeating: 0x4B00_0000)
        let nx4 = SIMD4<UInt32>(repeating: dims.x), ny4 = SIMD4<UInt32>(repeating: dims.y), nz4 = SIMD4<UInt32>(repeating: dims.z)
        let fnx4 = SIMD4<Float>(repeating: fnx), fny4 = SIMD4<Float>(repeating: fny)
        // Per lane: the truncated coordinate as an integer, as `cell` takes it.
        @inline(__always) func trunc(_ p: SIMD4<Float>) -> SIMD4<Int32> {
            let r = p + magic
            let above = unsafeBitCast((r - magic) .> p, to: SIMD4<Int32>.self)
            return unsafeBitCast(r, to: SIMD4<Int32>.self) &- magicBits &+ above
        }
        @inline(__always) func cells4(_ px: SIMD4<Float>, _ py: SIMD4<Float>, _ pz: SIMD4<Float>) -> (index: SIMD4<Int32>, inGrid: SIMDMask<SIMD4<Int32>>) {
            let qx = trunc(px), qy = trunc(py), qz = trunc(pz)
            let inside = (unsafeBitCast(qx, to: SIMD4<UInt32>.self) .< nx4) .& (unsafeBitCast(qy, to: SIMD4<UInt32>.self) .< ny4)
                .& (unsafeBitCast(qz, to: SIMD4<UInt32>.self) .< nz4)
            // The index (< 2²³: at most `maxVoxels`) back to an integer by the same magic number.
            let fi = (SIMD4<Float>(qz) * fny4 + SIMD4<Float>(qy)) * fnx4 + SIMD4<Float>(qx) + magic
            return (unsafeBitCast(fi, to: SIMD4<Int32>.self) &- magicBits, inside)
        }
        // A sparse long carve ray through pixel (x, row): box entry to the shell's far end.
        @inline(__always) func carve(_ x: Int, _ rowBase: Int, _ rowDir: SIMD4<Float>, _ u: Float) {
            let d = metres[rowBase + x]
            guard d > 0, d <= maxDepth else { return }
            if let c = confidence, c[rowBase + x] < minConf { return }
            let dir = rowDir + ax * u
            let step = 1 / max(abs(dir.x), abs(dir.y), abs(dir.z))
            var t0: Float = 0, t1 = d - step - step - step - step  // where the shell ends, as it walks
            for a in 0..<3 {
                let o = gb[a], dd = dir[a], hi = gridHi[a]
                if abs(dd) < 1e-12 {
                    if o < 0 || o >= hi { t1 = -1 }
                    continue
                }
                var ta = (0 - o) / dd, tb = (hi - o) / dd
                if ta > tb { swap(&ta, &tb) }
                t0 = max(t0, ta); t1 = min(t1, tb)
            }
            guard t1 > t0, t1.isFinite else { return }
            var s = t0 + step * 0.5
            var guardSteps = 4 * (f.nx + f.ny + f.nz)
            while s < t1 && guardSteps > 0 {
                clear(gb4 + dir * s)
                s += step
                guardSteps -= 1
            }
        }
        // The rows run in three passes over 4-pixel blocks (lane j: pixel x0 + j): (1) the points,
        // their voxel and those of their shell, with the same float operations per lane as the
        // per-pixel form (`gb4 + dir * t`, `dir = rowDir + ax · u`, the step); (2) per pair with
        // the left, upper and upper-left neighbour whether it bridges and the bridge's voxel;
        // (3) pixel by pixel in order, the marks (the hit, then the left, upper, upper-left
        // bridges: the order of the new elements) and the clears (their order against the marks
        // does not matter: a clear never frees an occupied voxel and a mark takes any voxel).
        // Most bridges are one sample (1 < m < 2: the midpoint, `span`'s k = 1), and whether a
        // pair bridges is as good as random on quantized depth (structured light: about half the
        // pixels), so pass 3 marks them without a branch on that test; a pixel with a pair
        // further apart (2 ≤ m) takes `span` for its three pairs, in the same order.
        let blocks = (width + 3) / 4, padded = 4 * blocks
        // Row points by axis, two rows (this one and the one above) of `rowStride` floats each:
        // slot 0 is `invalid` (the left neighbour of column 0), column x at slot x + 1.
        let rowStride = padded + 4
        guard let stBase = st.baseAddress, let rowBase0 = rows.baseAddress, rows.count >= 6 * rowStride else { return }
        @inline(__always) func load4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
        }
        @inline(__always) func store4(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
            UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self)
        }
        @inline(__always) func store4(_ v: SIMD4<Int32>, _ p: UnsafeMutablePointer<Int32>) {
            UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Int32>.self)
        }
        for i in 0..<(6 * rowStride) { rowBase0[i] = -1 }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { sentinelBuffer in
        guard let sentinel = sentinelBuffer.baseAddress else { return }
        sentinel.initialize(to: occupied)
        // Marks voxel n, or nothing for n < 0 (no branch on it: a negative n reads the sentinel
        // byte, always occupied).
        @inline(__always) func markIndex(_ n: Int32) {
            let m = UInt(bitPattern: Int(n &>> 31))
            let at = UInt(bitPattern: stBase) &+ UInt(bitPattern: Int(n)), away = UInt(bitPattern: sentinel)
            let p = UnsafeMutablePointer<UInt8>(bitPattern: at &+ ((away &- at) & m)) ?? sentinel
            if p.pointee != occupied {
                p.pointee = occupied
                fresh.append(n)
            }
        }
        // Per column: u (the horizontal image coordinate), the row's depth (0 where rejected by
        // confidence or past the width), and per row the voxel indices found by passes 1 and 2
        // (−1: none): the hit, the three shell steps, the three bridge midpoints (in the left
        // one −2: the pixel takes `span`; −3: its block has no bridge, the others are not set).
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * padded) { fs in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 8 * padded) { ix in
            guard let us = fs.baseAddress, let ixBase = ix.baseAddress else { return }
            let depth = us + padded
            let hit = ixBase, shell1 = ixBase + padded, shell2 = ixBase + 2 * padded, shell3 = ixBase + 3 * padded
            let midL = ixBase + 4 * padded, midU = ixBase + 5 * padded, midUL = ixBase + 6 * padded, okLanes = ixBase + 7 * padded
            // The horizontal image coordinate of each column, (x + 0.5 − cx) / fx.
            for x in 0..<padded { us[x] = x < width ? (Float(x) + 0.5 - f.cx) * f.ifx : 0 }
            for x in width..<padded { depth[x] = 0 }
            let zNear4 = SIMD4<Float>(repeating: zNear), zFar4 = SIMD4<Float>(repeating: zFar)
            let maxDepth4 = SIMD4<Float>(repeating: maxDepth), wX4 = SIMD4<Float>(repeating: wX)
            let axX = SIMD4<Float>(repeating: ax.x), axY = SIMD4<Float>(repeating: ax.y), axZ = SIMD4<Float>(repeating: ax.z)
            let loX = SIMD4<Float>(repeating: nearLo.x), loY = SIMD4<Float>(repeating: nearLo.y), loZ = SIMD4<Float>(repeating: nearLo.z)
            let hiX = SIMD4<Float>(repeating: nearHi.x), hiY = SIMD4<Float>(repeating: nearHi.y), hiZ = SIMD4<Float>(repeating: nearHi.z)
            let minus1 = SIMD4<Float>(repeating: -1), none = SIMD4<Int32>(repeating: -1)
            for y in 0..<f.height {
                let parity = y & 1
                let curX = rowBase0 + parity * 3 * rowStride, prevX = rowBase0 + (1 - parity) * 3 * rowStride
                let curY = curX + rowStride, curZ = curY + rowStride
                let prevY = prevX + rowStride, prevZ = prevY + rowStride
                let vy = (Float(y) + 0.5 - f.cy) * f.ify
                let rowDir3 = -f.ay * vy - f.az
                let wRow = -dot(f.az, rowDir3) / azz
                let rowDir = pad(rowDir3)
                let rowBase = y * width
                // The row's depth: the caller's, read in place when the row is whole blocks;
                // else a copy, where a pixel below the confidence threshold is rejected as a
                // depth of 0 is (its row point `invalid`, nothing marked).
                var rowDepth = UnsafePointer(depth)
                if let c = confidence {
                    for x in 0..<width { let d = metres[rowBase &+ x]; depth[x] = c[rowBase &+ x] < minConf ? 0 : d }
                } else if width == padded, let m = metres.baseAddress {
                    rowDepth = m + rowBase
                } else {
                    for x in 0..<width { depth[x] = metres[rowBase &+ x] }
                }
                let wRow4 = SIMD4<Float>(repeating: wRow)
                let rdX = SIMD4<Float>(repeating: rowDir.x), rdY = SIMD4<Float>(repeating: rowDir.y), rdZ = SIMD4<Float>(repeating: rowDir.z)
                if avx2 {
                    cks_fuse_row_avx2(&twin, rowDir.x, rowDir.y, rowDir.z, wRow, rowDepth, us, padded, curX, prevX, rowStride, ixBase)
                } else {
                    // Pass 1.
                    for b in 0..<blocks {
                        let x0 = 4 &* b
                        let d = load4(rowDepth + x0), u = load4(us + x0)
                        let z = d * (wRow4 + wX4 * u)
                        // NaN fails every comparison; ±inf fails the depth range (finite bounds).
                        let inRange = (z .>= zNear4) .& (z .<= zFar4) .& (d .> 0) .& (d .<= maxDepth4)
                        let dx = rdX + axX * u, dy = rdY + axY * u, dz = rdZ + axZ * u
                        let step = 1 / larger(larger(magnitude(dx), magnitude(dy)), magnitude(dz))  // depth per voxel step
                        let gx = gbx + dx * d, gy = gby + dy * d, gz = gbz + dz * d
                        let ok = inRange .& (gx .>= loX) .& (gx .< hiX) .& (gy .>= loY) .& (gy .< hiY) .& (gz .>= loZ) .& (gz .< hiZ)
                        store4(unsafeBitCast(ok, to: SIMD4<Int32>.self), okLanes + x0)
                        guard anyLane(ok) else {  // the background: nothing to mark (pass 2 and 3 skip it too)
                            store4(minus1, curX + x0 + 1); store4(minus1, curY + x0 + 1); store4(minus1, curZ + x0 + 1)
                            continue
                        }
                        store4(gx.replacing(with: minus1, where: .!ok), curX + x0 + 1)
                        store4(gy.replacing(with: minus1, where: .!ok), curY + x0 + 1)
                        store4(gz.replacing(with: minus1, where: .!ok), curZ + x0 + 1)
                        let h = cells4(gx, gy, gz)
                        store4(h.index.replacing(with: none, where: .!(ok .& h.inGrid)), hit + x0)
                        let ts1 = d - step, ts2 = ts1 - step, ts3 = ts2 - step
                        let s1 = cells4(gbx + dx * ts1, gby + dy * ts1, gbz + dz * ts1)
                        store4(s1.index.replacing(with: none, where: .!(ok .& s1.inGrid)), shell1 + x0)
                        let s2 = cells4(gbx + dx * ts2, gby + dy * ts2, gbz + dz * ts2)
                        store4(s2.index.replacing(with: none, where: .!(ok .& s2.inGrid)), shell2 + x0)
                        let s3 = cells4(gbx + dx * ts3, gby + dy * ts3, gbz + dz * ts3)
                        store4(s3.index.replacing(with: none, where: .!(ok .& s3.inGrid)), shell3 + x0)
                    }
                    // Pass 2: the pairs (neighbour − point, as `span` takes them).
                    for b in 0..<blocks {
                        let x0 = 4 &* b
                        let ok = unsafeBitCast(UnsafeRawPointer(okLanes + x0).loadUnaligned(as: SIMD4<Int32>.self), to: SIMDMask<SIMD4<Int32>>.self)
                        guard anyLane(ok) else { continue }
                        let gx = load4(curX + x0 + 1), gy = load4(curY + x0 + 1), gz = load4(curZ + x0 + 1)
                        @inline(__always) func pair(_ nbX: UnsafeMutablePointer<Float>, _ nbY: UnsafeMutablePointer<Float>, _ nbZ: UnsafeMutablePointer<Float>)
                            -> (far: SIMDMask<SIMD4<Int32>>, bridges: SIMDMask<SIMD4<Int32>>, dx: SIMD4<Float>, dy: SIMD4<Float>, dz: SIMD4<Float>) {
                            let ex = load4(nbX)
                            let ddx = ex - gx, ddy = load4(nbY) - gy, ddz = load4(nbZ) - gz
                            let adx = magnitude(ddx), ady = magnitude(ddy), adz = magnitude(ddz)
                            let valid = ok .& (ex .>= zero4)
                            let far = valid .& ((adx .>= two4) .| (ady .>= two4) .| (adz .>= two4))
                            let bridges = valid .& ((adx .> one) .| (ady .> one) .| (adz .> one))
                            return (far, bridges, ddx, ddy, ddz)
                        }
                        @inline(__always) func midpoint(_ p: (far: SIMDMask<SIMD4<Int32>>, bridges: SIMDMask<SIMD4<Int32>>, dx: SIMD4<Float>, dy: SIMD4<Float>, dz: SIMD4<Float>)) -> SIMD4<Int32> {
                            let m = cells4(gx + p.dx * half4, gy + p.dy * half4, gz + p.dz * half4)
                            return m.index.replacing(with: none, where: .!(p.bridges .& m.inGrid))
                        }
                        let l = pair(curX + x0, curY + x0, curZ + x0)
                        let u = pair(prevX + x0 + 1, prevY + x0 + 1, prevZ + x0 + 1)
                        let ul = pair(prevX + x0, prevY + x0, prevZ + x0)
                        // (A block with no bridge at all, most of a smooth surface, skips the midpoints.)
                        guard anyLane(l.bridges .| u.bridges .| ul.bridges) else {
                            store4(SIMD4(repeating: -3), midL + x0)  // no bridge in the block
                            continue
                        }
                        store4(midpoint(l).replacing(with: SIMD4(repeating: -2), where: l.far .| u.far .| ul.far), midL + x0)
                        store4(midpoint(u), midU + x0)
                        store4(midpoint(ul), midUL + x0)
                    }
                }
                // Pass 3.
                for x in 0..<width where okLanes[x] != 0 {
                    markIndex(hit[x])
                    let l = midL[x]
                    if l >= -1 {
                        markIndex(l)
                        markIndex(midU[x])
                        markIndex(midUL[x])
                    } else if l == -2 {
                        let g = SIMD4<Float>(curX[x + 1], curY[x + 1], curZ[x + 1], 0)
                        span(g, SIMD4(curX[x], curY[x], curZ[x], 0))
                        span(g, SIMD4(prevX[x + 1], prevY[x + 1], prevZ[x + 1], 0))
                        span(g, SIMD4(prevX[x], prevY[x], prevZ[x], 0))
                    }
                    let c1 = shell1[x], c2 = shell2[x], c3 = shell3[x]
                    if c1 >= 0 { clearCell(Int(c1)) }
                    if c2 >= 0 { clearCell(Int(c2)) }
                    if c3 >= 0 { clearCell(Int(c3)) }
                }
                // The carve rays of this row (their order against the marks does not matter,
                // as for the shell).
                if y % f.strideY == f.phaseY {
                    var x = f.phaseX
                    while x < width {
                        carve(x, rowBase, rowDir, us[x])
                        x += f.strideX
                    }
                }
            }
        }
        }
        }
    }

    /// Normals: measured on the captured views' depth frames (`addView`) where any was, else from
    /// the free neighbours (the mean offset to the free voxels among the 26).
    private func refreshNormals() {
        guard fromDepth, normalsDirty else { return }
        normalsDirty = false
        let nx = dims.x, ny = dims.y, nz = dims.z
        states.withUnsafeBufferPointer { st in
            elements.withUnsafeMutableBufferPointer { es in
                for e in es.indices {
                    // A measured normal wins: the free neighbours are only counted without one.
                    let measured = Vec3(es[e].sx, es[e].sy, es[e].sz)
                    if length(measured) > 0 {
                        let n = measured / length(measured)
                        es[e].nx = n.x; es[e].ny = n.y; es[e].nz = n.z
                        continue
                    }
                    let c = coordinates(ofIndex: Int(es[e].voxel))
                    var sum = Vec3(0, 0, 0)
                    for dk in -1...1 {
                        let kk = c.z + dk
                        guard kk >= 0, kk < nz else { continue }
                        for dj in -1...1 {
                            let jj = c.y + dj
                            guard jj >= 0, jj < ny else { continue }
                            for di in -1...1 {
                                let ii = c.x + di
                                guard ii >= 0, ii < nx else { continue }
                                if st[(kk * ny + jj) * nx + ii] & 3 == VoxelState.free.rawValue {
                                    sum += Vec3(Float(di), Float(dj), Float(dk))
                                }
                            }
                        }
                    }
                    let l = length(sum)
                    let n = l > 0 ? sum / l : Vec3(0, 0, 0)
                    es[e].nx = n.x; es[e].ny = n.y; es[e].nz = n.z
                }
            }
        }
    }

    // MARK: Views

    /// Adds one captured view: every element visible from it (in the image, facing the camera by
    /// its normal, and in depth mode not hidden behind other surface) counts the view once, with its
    /// direction, incidence and resolution (mean focal length / (z · 100) pixels per cm at z-depth
    /// z). Visibility in depth mode: when the last fused depth frame was taken at this pose (a
    /// capture fused, then added as a view), that frame decides — an element is hidden when the
    /// valid sample of its own pixel lies nearer than it by more than the tolerance
    /// (`depthTolerance`) and off its tangent plane (`occluderHeight`); else it counts when a
    /// valid depth sample among the 3 × 3 around its pixel lies within the tolerance; it is seen
    /// through when at least two valid samples there all lie further (its `misses`), and hidden
    /// otherwise; elements with no valid sample around them, and every element of a view
    /// without its depth frame, fall back to a z-buffer of the elements. Elements seen through
    /// more often than their own views' depth confirmed them are removed (their voxels become
    /// free; depth that hits them again brings them back). With `image` (RGB8 / RGBA8 / GRAY8 of
    /// the intrinsics' size) each visible element samples its colour. Returns the number of
    /// elements seen.
    @discardableResult
    public func addView(pose: Pose, intrinsics k: Intrinsics, image: (bytes: UnsafeRawBufferPointer, stride: Int, channels: Int)?,
                        timestamp: Double) -> Int {
        forgetFigures()
        refreshNormals()
        replayHistory()
        views &+= 1
        let stamp = views
        if stamp <= SurfaceMap.trackedViews { viewEyes.append(pose.t) }
        let cam = box.toLocal(direction: pose.t - box.center)
        planner.noteView(cam)
        // Box-local → camera: p_cam = Rᵀ(toWorld(p) + centre − t).
        let rx = box.toLocal(direction: pose.x), ry = box.toLocal(direction: pose.y), rz = box.toLocal(direction: pose.z)
        let w = Int(k.width), h = Int(k.height)
        let zw = min(w, 192), zh = max(1, Int((Float(h) * Float(zw) / Float(w)).rounded()))
        let sx = Float(zw) / Float(w), sy = Float(zh) / Float(h)
        let useDepthTest = fromDepth
        let depthFrame = useDepthTest ? frame(matching: pose) : nil
        if zbuffer.count < zw * zh { zbuffer = [Float](repeating: .infinity, count: zw * zh) }
        zbuffer.withUnsafeMutableBufferPointer { $0.update(repeating: .infinity) }
        if projected.count < elements.count { projected = [SIMD3<Float>](repeating: .zero, count: elements.count) }
        let v = voxelSize
        let focal = (k.fx + k.fy) / 2
        let maxDepth = options.maxDepth > 0 ? options.maxDepth : Float.greatestFiniteMagnitude
        let minConf = UInt8(clamping: options.minConfidence)
        let count = elements.count
        var seen = 0
        lastDepth.withUnsafeBufferPointer { depth in
          lastConfidence.withUnsafeBufferPointer { confidence in
            elements.withUnsafeMutableBufferPointer { es in
             projected.withUnsafeMutableBufferPointer { pj in
              zbuffer.withUnsafeMutableBufferPointer { zb in
                for e in 0..<count {
                    let p = position(of: es[e]) - cam
                    let pc = Vec3(dot(rx, p), dot(ry, p), dot(rz, p))
                    pj[e] = Vec3(-1, -1, -1)
                    guard pc.z < -1e-4 else { continue }
                    let z = -pc.z
                    let u = k.cx + k.fx * pc.x / z, vv = k.cy - k.fy * pc.y / z
                    guard u >= 0, vv >= 0, u < Float(w), vv < Float(h) else { continue }
                    let zu = min(zw - 1, Int(u * sx)), zv = min(zh - 1, Int(vv * sy))
                    var verdict = DepthVerdict.unknown
                    if let f = depthFrame {
                        let toCam = -p / max(length(p), 1e-9)
                        let cosI = SurfaceMap.facing(es[e].normal, toCam)
                        let n = es[e].normal
                        verdict = SurfaceMap.verdict(pc: pc, normal: Vec3(dot(rx, n), dot(ry, n), dot(rz, n)),
                                                     tolerance: depthTolerance(z: z, cosI: cosI), depth: depth,
                                                     confidence: f.hasConfidence ? confidence : nil, k: f.k,
                                                     maxDepth: maxDepth, minConfidence: minConf, voxel: v)
                        if verdict == .surface,
                           let nc = SurfaceMap.depthNormal(pc: pc, depth: depth, k: f.k, maxDepth: maxDepth, voxel: v),
                           es[e].addMeasuredNormal(rx * nc.x + ry * nc.y + rz * nc.z) {
                            normalsDirty = true
                        }
                        if verdict == .surface,
                           let fc = SurfaceMap.facingNormal(pc: pc, depth: depth, k: f.k, maxDepth: maxDepth, voxel: v) {
                            let fb = rx * fc.x + ry * fc.y + rz * fc.z
                            if length(es[e].normal) == 0 || dot(fb, es[e].normal) > 0 { es[e].addFacing(fb) }
                        }
                        switch verdict {
                        case .surface: es[e].hits = es[e].hits &+ (es[e].hits == .max ? 0 : 1)
                        case .seenThrough: es[e].misses = es[e].misses &+ (es[e].misses == .max ? 0 : 1)
                        default: break
                        }
                    }
                    pj[e] = Vec3(Float(zv * zw + zu), z, Float(SurfaceMap.verdictCode(verdict)))
                    guard useDepthTest, verdict != .seenThrough else { continue }
                    let r = min(3, Int(0.5 * v * k.fx * sx / z))
                    for yy in max(0, zv - r)...min(zh - 1, zv + r) {
                        for xx in max(0, zu - r)...min(zw - 1, zu + r) where z < zb[yy * zw + xx] {
                            zb[yy * zw + xx] = z
                        }
                    }
                }
                for e in 0..<count {
                    let pr = pj[e]
                    guard pr.y > 0 else { continue }
                    let z = pr.y
                    switch pr.z {
                    case 1: break                                  // its depth frame: surface here
                    case 2, 3: continue                            // seen through, or hidden
                    default:
                        if useDepthTest && z > zb[Int(pr.x)] + 2 * v + 0.02 * z { continue }
                    }
                    let toCam = cam - position(of: es[e])
                    let dist = length(toCam)
                    guard dist > 0 else { continue }
                    let d = toCam / dist
                    let n = es[e].normal
                    let cosI = dot(n, d)
                    if length(n) > 0 && cosI <= 0.05 { continue }  // seen edge-on or from behind
                    guard es[e].lastView != stamp else { continue }
                    es[e].lastView = stamp
                    es[e].views = es[e].views == .max ? .max : es[e].views + 1
                    es[e].addDirection(d)
                    es[e].noteCounted(stamp: stamp)
                    es[e].bestPixelsPerCm = max(es[e].bestPixelsPerCm, focal / (z * 100))
                    if let img = image {
                        let p = position(of: es[e]) - cam
                        let pc = Vec3(dot(rx, p), dot(ry, p), dot(rz, p))
                        let u = Int(k.cx + k.fx * pc.x / -pc.z), vv = Int(k.cy - k.fy * pc.y / -pc.z)
                        if u >= 0, vv >= 0, u < w, vv < h, es[e].colorCount < .max {
                            let o = vv * img.stride + u * img.channels
                            if o + img.channels <= img.bytes.count {
                                let c0 = Float(img.bytes[o])
                                let c1 = img.channels >= 3 ? Float(img.bytes[o + 1]) : c0, c2 = img.channels >= 3 ? Float(img.bytes[o + 2]) : c0
                                es[e].r += c0; es[e].g += c1; es[e].b += c2
                                es[e].colorCount += 1
                            }
                        }
                    }
                    seen += 1
                }
              }
             }
            }
          }
        }
        if let f = depthFrame {
            keepView(pose: pose, intrinsics: k, frame: f, maxDepth: maxDepth, minConfidence: minConf)
            removeContradicted()
        }
        // The unseen estimate (and the carve of the kept frame it needs) is the costly part of a
        // view; it runs when the figures are next read, or below when an event may fire.
        if fromDepth && !history.isEmpty {
            viewDistance = length(cam)
            unseenStale = true  // estimated when the figures are next read (`currentUnseenShare`)
            reachStale = true   // judged when the figures or their bounds are next computed
        }
        raiseEvents(at: timestamp)
        // Once a next view has been planned (`nextBestView`, which `hint` also runs), each view
        // also takes the frontier steps that the next plan reads (`frontierSteps`; often the
        // events above took them): the view pays for what planning from it needs, as for the
        // unseen estimate, and the call that plans straight after it does not.
        if fromDepth && planner.planned { _ = frontierSteps() }
        return seen
    }

    /// The depth agreement of `verdict` for an element at z-depth `z` whose normal makes cosine
    /// `cosI` with the ray (0.5 without a normal): a voxel centre lies within 0.87 voxel of the
    /// surface it stands for, 0.87 / cos along the ray (capped at cos 0.3), plus a third of a
    /// voxel and 0.5 % of the depth for sensor noise.
    @inline(__always) func depthTolerance(z: Float, cosI: Float) -> Float {
        (0.87 / max(cosI, 0.3) + 0.35) * voxelSize + 0.005 * z
    }
    /// The cosine between an element's normal and the unit direction to a camera, 0.5 without one.
    @inline(__always) static func facing(_ n: Vec3, _ toCam: Vec3) -> Float {
        length(n) > 0 ? dot(n, toCam) : 0.5
    }
    /// Keeps the view and its depth frame (sampled to at most 256 columns; 0 where nothing
    /// returned within range, −1 where a sample does not count).
    private func keepView(pose: Pose, intrinsics k: Intrinsics, frame f: (k: Intrinsics, pose: Pose, hasConfidence: Bool),
                          maxDepth: Float, minConfidence: UInt8) {
        let w = Int(f.k.width), h = Int(f.k.height)
        guard lastDepth.count >= w * h else { return }
        let step = max(1, (w + 255) / 256)
        let dw = max(1, w / step), dh = max(1, h / step)
        let conf = f.hasConfidence && lastConfidence.count >= w * h
        let sampled = [Float](unsafeUninitializedCapacity: dw * dh) { out, initialized in
            lastDepth.withUnsafeBufferPointer { depth in
                lastConfidence.withUnsafeBufferPointer { confidence in
                    for y in 0..<dh {
                        let sy = min(h - 1, y * step + step / 2)
                        for x in 0..<dw {
                            let i = sy * w + min(w - 1, x * step + step / 2)
                            let d = depth[i]
                            // 0: nothing returned within range (0 given, or beyond max_depth); −1: a sample that
                            // does not count (non-finite, negative, low confidence): no verdict, no carve.
                            var value: Float = d
                            if d == 0 || (d.isFinite && d > maxDepth) {
                                value = 0
                            } else if !(d > 0) || !d.isFinite || (conf && confidence[i] < minConfidence) {
                                value = -1
                            }
                            out.initializeElement(at: y * dw + x, to: value)
                        }
                    }
                }
            }
            initialized = dw * dh
        }
        let s = Float(step)
        let dk = Intrinsics(uncheckedFx: f.k.fx / s, fy: f.k.fy / s, cx: f.k.cx / s, cy: f.k.cy / s, width: UInt32(dw), height: UInt32(dh))
        if history.count >= SurfaceMap.maxHistory {
            if uncarved >= history.count, let first = history.first { carve(first); uncarved = history.count - 1 }
            history.removeFirst()
        }
        history.append(KeptView(pose: pose, k: k, stamp: views, depth: sampled, depthK: dk))
        uncarved += 1  // carved when the unseen estimate next runs (`carvePending`), or as it leaves
    }

    /// Carves the kept views not carved yet (`passedBit` only matters to the unseen estimate, and
    /// marks the same voxels later: what turned free or occupied meanwhile needs no mark).
    private func carvePending() {
        let n = min(uncarved, history.count)
        uncarved = 0
        for h in history.suffix(n) { carve(h) }
    }

    /// Bit 3 of a voxel state: unknown space that a kept view's pixel ray crossed, short of its
    /// depth or with no depth at all (nothing returned). The voxel stays unknown for the map, its
    /// users and the planner; the unseen estimate does not look for surface there.
    static let passedBit: UInt8 = 8

    /// Every pixel ray of a kept view's depth frame through the box marks the unknown voxels it
    /// crosses up to two voxels before its depth (through the box when nothing returned) with
    /// `passedBit`; a sample that does not count marks nothing.
    private func carve(_ h: KeptView) {
        let v = voxelSize
        let ax = box.toLocal(direction: h.pose.x) / v, ay = box.toLocal(direction: h.pose.y) / v, az = box.toLocal(direction: h.pose.z) / v
        let gb = (box.toLocal(direction: h.pose.t - box.center) - origin) / v
        let k = h.depthK
        let w = Int(k.width), hh = Int(k.height)
        let hi = Vec3(Float(dims.x), Float(dims.y), Float(dims.z))
        let nx = dims.x, ny = dims.y, nz = dims.z
        let guardLimit = 4 * (nx + ny + nz)
        let passed = SurfaceMap.passedBit
        states.withUnsafeMutableBufferPointer { st in
            h.depth.withUnsafeBufferPointer { depth in
                for y in 0..<hh {
                    let vy = (Float(y) + 0.5 - k.cy) / k.fy
                    let rowDir = -ay * vy - az
                    for x in 0..<w {
                        let dir = rowDir + ax * ((Float(x) + 0.5 - k.cx) / k.fx)
                        let d = depth[y * w + x]
                        guard d >= 0 else { continue }
                        let step = 1 / max(abs(dir.x), abs(dir.y), abs(dir.z))
                        var t0: Float = 0, t1: Float = d > 0 ? d - 2 * step : .greatestFiniteMagnitude
                        @inline(__always) func clip(_ o: Float, _ dd: Float, _ hiA: Float) {
                            if abs(dd) < 1e-12 {
                                if o < 0 || o >= hiA { t1 = -1 }
                                return
                            }
                            var ta = (0 - o) / dd, tb = (hiA - o) / dd
                            if ta > tb { swap(&ta, &tb) }
                            t0 = max(t0, ta); t1 = min(t1, tb)
                        }
                        clip(gb.x, dir.x, hi.x); clip(gb.y, dir.y, hi.y); clip(gb.z, dir.z, hi.z)
                        guard t1 > t0, t1.isFinite else { continue }
                        var t = t0 + step * 0.5
                        var guardSteps = guardLimit
                        let ox = gb.x, oy = gb.y, oz = gb.z, dx = dir.x, dy = dir.y, dz = dir.z
                        while t < t1 && guardSteps > 0 {
                            let i = Int(ox + dx * t), j = Int(oy + dy * t), kk = Int(oz + dz * t)
                            // In the grid (one unsigned comparison per axis; the index then fits).
                            if UInt(bitPattern: i) < UInt(bitPattern: nx), UInt(bitPattern: j) < UInt(bitPattern: ny),
                               UInt(bitPattern: kk) < UInt(bitPattern: nz) {
                                let n = (kk &* ny &+ j) &* nx &+ i
                                let v = st[n]  // unchanged unless unknown (0, or 8 already): no branch
                                st[n] = v | (v & 3 == 0 ? passed : 0)
                            }
                            t += step
                            guardSteps -= 1
                        }
                    }
                }
            }
        }
        // Neither the normals nor the frontier change: `passedBit` leaves free and occupied alone.
    }

    /// Replays the kept views on the elements first marked since the last view: a kept view
    /// counts for such an element when its depth frame says surface there (`verdict`), it lies
    /// in that view's image and faces it (by its normal, the normal the kept frame measures there
    /// included: `addMeasuredNormal`); seen through counts as a miss. Without this, surface
    /// that depth reached only after the views that saw it would lack those views.
    private func replayHistory() {
        guard fromDepth, !history.isEmpty else { return }
        let current = views
        let born = elements.withUnsafeBufferPointer { es in es.indices.filter { es[$0].born == current } }
        guard !born.isEmpty else { return }
        let maxDepth = Float.greatestFiniteMagnitude  // the kept samples are already checked
        let kept = history.map { h -> (cam: Vec3, rx: Vec3, ry: Vec3, rz: Vec3) in
            (box.toLocal(direction: h.pose.t - box.center), box.toLocal(direction: h.pose.x),
             box.toLocal(direction: h.pose.y), box.toLocal(direction: h.pose.z))
        }
        for e in born {
            let pos = position(of: elements[e])
            for (hi, h) in history.enumerated() {
                let n = elements[e].normal
                let c = kept[hi]
                let p = pos - c.cam
                let pc = Vec3(dot(c.rx, p), dot(c.ry, p), dot(c.rz, p))
                guard pc.z < -1e-4 else { continue }
                let z = -pc.z
                let u = h.k.cx + h.k.fx * pc.x / z, vv = h.k.cy - h.k.fy * pc.y / z
                guard u >= 0, vv >= 0, u < Float(h.k.width), vv < Float(h.k.height) else { continue }
                let (verdict, measured, facing) = h.depth.withUnsafeBufferPointer { d -> (DepthVerdict, Vec3?, Vec3?) in
                    let verdict = SurfaceMap.verdict(pc: pc, normal: Vec3(dot(c.rx, n), dot(c.ry, n), dot(c.rz, n)),
                                                     tolerance: depthTolerance(z: z, cosI: SurfaceMap.facing(n, -p / max(length(p), 1e-9))),
                                                     depth: d, confidence: nil, k: h.depthK,
                                                     maxDepth: maxDepth, minConfidence: 0, voxel: voxelSize)
                    guard verdict == .surface else { return (verdict, nil, nil) }
                    return (verdict, SurfaceMap.depthNormal(pc: pc, depth: d, k: h.depthK, maxDepth: maxDepth, voxel: voxelSize),
                            SurfaceMap.facingNormal(pc: pc, depth: d, k: h.depthK, maxDepth: maxDepth, voxel: voxelSize))
                }
                if verdict == .seenThrough {
                    elements[e].misses = elements[e].misses &+ (elements[e].misses == .max ? 0 : 1)
                    continue
                }
                guard verdict == .surface else { continue }
                elements[e].hits = elements[e].hits &+ (elements[e].hits == .max ? 0 : 1)
                // As in `addView`: the kept frame's own measurement joins the normal before the
                // facing test.
                if let nc = measured, elements[e].addMeasuredNormal(c.rx * nc.x + c.ry * nc.y + c.rz * nc.z) {
                    normalsDirty = true
                }
                if let fc = facing {
                    let fb = c.rx * fc.x + c.ry * fc.y + c.rz * fc.z
                    if length(elements[e].normal) == 0 || dot(fb, elements[e].normal) > 0 { elements[e].addFacing(fb) }
                }
                let toCam = -p / length(p)
                let nn = elements[e].normal
                if length(nn) > 0 && dot(nn, toCam) <= 0.05 { continue }
                elements[e].views = elements[e].views == .max ? .max : elements[e].views + 1
                elements[e].addDirection(toCam)
                elements[e].noteCounted(stamp: h.stamp)
                elements[e].bestPixelsPerCm = max(elements[e].bestPixelsPerCm, (h.k.fx + h.k.fy) / 2 / (z * 100))
            }
            elements[e].born = .max  // replayed once
        }
    }

    /// The unit surface normal (camera frame, facing the camera) of the depth frame at the pixel
    /// of camera point `pc`, from central differences of the back-projected neighbours left/right
    /// and above/below; nil at the image border, next to a missing sample or across a depth jump
    /// (neighbours further apart in depth than 8 pixel footprints + 2 voxels).
    static func depthNormal(pc: Vec3, depth: UnsafeBufferPointer<Float>, k: Intrinsics, maxDepth: Float, voxel: Float) -> Vec3? {
        let z = -pc.z
        let u = k.cx + k.fx * pc.x / z, vv = k.cy - k.fy * pc.y / z
        let w = Int(k.width), h = Int(k.height)
        guard u.isFinite, vv.isFinite, u >= 1, vv >= 1, u < Float(w - 1), vv < Float(h - 1) else { return nil }
        let ui = Int(u), vi = Int(vv)
        guard depth.count >= w * h else { return nil }
        @inline(__always) func point(_ x: Int, _ y: Int) -> Vec3? {
            let d = depth[y * w + x]
            guard d > 0, d <= maxDepth else { return nil }
            return Vec3((Float(x) + 0.5 - k.cx) / k.fx * d, -(Float(y) + 0.5 - k.cy) / k.fy * d, -d)
        }
        guard let l = point(ui - 1, vi), let r = point(ui + 1, vi), let up = point(ui, vi - 1), let dn = point(ui, vi + 1) else { return nil }
        let jump = jumpLimit(z: z, fx: k.fx, voxel: voxel)
        guard abs(r.z - l.z) <= jump, abs(up.z - dn.z) <= jump else { return nil }
        var n = cross(r - l, up - dn)
        let len = length(n)
        guard len > 0, len.isFinite else { return nil }
        n = n / len
        let centre = (l + r + up + dn) / 4
        if dot(n, centre) > 0 { n = -n }  // facing the camera (at the origin)
        return n
    }

    /// The unit surface normal (camera frame, facing the camera) of the depth frame around the
    /// pixel of camera point `pc`, for its facings: a plane fitted by least squares (depth as a
    /// linear function of the pixel offset) to the samples within one voxel's footprint either
    /// side (at most 7 x 7 of them), leaving out samples across a depth jump from the centre's.
    /// `depthNormal`'s central differences of single pixels scatter on real sensors: on 5 views
    /// of a real Kinect scene a degree apart, facings made from them (grouped within 26 degrees)
    /// split 77 % of the elements, from this fit (as `addFacing` groups them) 1.8 %
    /// (BENCHMARKS.md). nil without the centre sample or with fewer than 6 samples.
    static func facingNormal(pc: Vec3, depth: UnsafeBufferPointer<Float>, k: Intrinsics, maxDepth: Float, voxel: Float) -> Vec3? {
        let z = -pc.z
        let u = k.cx + k.fx * pc.x / z, vv = k.cy - k.fy * pc.y / z
        let w = Int(k.width), h = Int(k.height)
        guard z > 0, u.isFinite, vv.isFinite, u >= 0, vv >= 0, u < Float(w), vv < Float(h), depth.count >= w * h else { return nil }
        let ui = Int(u), vi = Int(vv)
        let dc = depth[vi * w + ui]
        guard dc > 0, dc <= maxDepth else { return nil }
        let footprint = voxel * k.fx / z  // pixels
        guard footprint.isFinite else { return nil }
        let reach = Int(min(64, max(1, footprint.rounded())))
        let step = max(1, (2 * reach + 7) / 7)
        let jump = jumpLimit(z: z, fx: k.fx, voxel: voxel)
        // Sums for r = a + b·du + c·dv, r the depth less the centre's.
        var n: Float = 0, su: Float = 0, sv: Float = 0, suu: Float = 0, svv: Float = 0, suv: Float = 0
        var sr: Float = 0, sur: Float = 0, svr: Float = 0
        // While loops, not stride(from:through:by:): unspecialized (a debug build) its iterator
        // looks up tuple metadata on every step, a runtime lock that 8 threads contend for.
        var dy = -reach
        while dy <= reach {
            let y = vi + dy
            var dx = -reach
            while y >= 0 && y < h && dx <= reach {
                let x = ui + dx
                let d = x >= 0 && x < w ? depth[y * w + x] : 0
                if d > 0, d <= maxDepth, Swift.abs(d - dc) <= jump * Float(max(Swift.abs(dx), Swift.abs(dy))) {
                    let fu = Float(dx), fv = Float(dy), r = d - dc
                    n += 1; su += fu; sv += fv; suu += fu * fu; svv += fv * fv; suv += fu * fv
                    sr += r; sur += fu * r; svr += fv * r
                }
                dx += step
            }
            dy += step
        }
        guard n >= 6 else { return nil }
        @inline(__always) func det(_ a: Float, _ b: Float, _ c: Float, _ d: Float, _ e: Float, _ f: Float,
                                   _ g: Float, _ hh: Float, _ i: Float) -> Float {
            a * (e * i - f * hh) - b * (d * i - f * g) + c * (d * hh - e * g)
        }
        let dm = det(n, su, sv, su, suu, suv, sv, suv, svv)
        guard Swift.abs(dm) > 1e-6 else { return nil }
        let a = dc + det(sr, su, sv, sur, suu, suv, svr, suv, svv) / dm
        let b = det(n, sr, sv, su, sur, suv, sv, svr, svv) / dm
        let c = det(n, su, sr, su, suu, sur, sv, suv, svr) / dm
        // The surface point at pixel (u, v) is depth · ray(u, v): its derivatives along u and v.
        let ray = Vec3((Float(ui) + 0.5 - k.cx) / k.fx, -(Float(vi) + 0.5 - k.cy) / k.fy, -1)
        var nn = cross(ray * b + Vec3(a / k.fx, 0, 0), ray * c + Vec3(0, -a / k.fy, 0))
        let len = length(nn)
        guard len > 0, len.isFinite else { return nil }
        nn = nn / len
        return dot(nn, ray) > 0 ? -nn : nn
    }

    static func verdictCode(_ v: DepthVerdict) -> Int {
        switch v {
        case .unknown: return 0
        case .surface: return 1
        case .seenThrough: return 2
        case .hidden: return 3
        }
    }

    /// How far (voxels, + 0.5 % of the depth) in front of an element's tangent plane the sample
    /// of its own pixel must lie to hide it (`verdict`): a voxel centre lies within 0.87 voxel of
    /// the surface, and the surface's normal is measured within a few degrees.
    static let occluderHeight: Float = 2

    /// The depth frame's verdict on a point at camera coordinates `pc` (z < 0) whose unit normal
    /// in camera coordinates is `nc` (0: none): see `addView`.
    static func verdict(pc: Vec3, normal nc: Vec3, tolerance tol: Float, depth: UnsafeBufferPointer<Float>,
                        confidence: UnsafeBufferPointer<UInt8>?, k: Intrinsics, maxDepth: Float, minConfidence: UInt8,
                        voxel: Float) -> DepthVerdict {
        let z = -pc.z
        let u = k.cx + k.fx * pc.x / z, vv = k.cy - k.fy * pc.y / z
        let w = Int(k.width), h = Int(k.height)
        guard u.isFinite, vv.isFinite, u >= -1, vv >= -1, u < Float(w + 1), vv < Float(h + 1) else { return .unknown }
        let ui = Int(u.rounded(.down)), vi = Int(vv.rounded(.down))
        // Its own pixel first: another surface in front of it there hides it, even where a
        // neighbouring pixel reaches past the edge of what covers it. In front: nearer than the
        // tolerance and more than `occluderHeight` voxels off its tangent plane on the camera's
        // side (its own surface seen at a grazing angle is nearer along the ray too, but in that
        // plane). Without a normal (nc = 0) this test is left out.
        if length(nc) > 0, ui >= 0, vi >= 0, ui < w, vi < h, vi * w + ui < depth.count {
            let i = vi * w + ui
            let d = depth[i]
            let counts = d > 0 && d <= maxDepth && !(confidence.map { i < $0.count && $0[i] < minConfidence } ?? false)
            if counts && d < z - tol && dot(pc * (d / z) - pc, nc) > SurfaceMap.occluderHeight * voxel + 0.005 * z {
                return .hidden
            }
        }
        var valid = 0, behind = 0
        for y in max(0, vi - 1)...min(h - 1, vi + 1) where vi - 1 <= h - 1 && vi + 1 >= 0 {
            for x in max(0, ui - 1)...min(w - 1, ui + 1) where ui - 1 <= w - 1 && ui + 1 >= 0 {
                let i = y * w + x
                guard i < depth.count else { continue }
                let d = depth[i]
                guard d > 0, d <= maxDepth else { continue }
                if let c = confidence, i < c.count, c[i] < minConfidence { continue }
                valid += 1
                if abs(d - z) <= tol { return .surface }
                if d > z + tol { behind += 1 }
            }
        }
        if valid == 0 { return .unknown }
        return valid >= 2 && behind == valid ? .seenThrough : .hidden
    }

    /// Removes the elements seen through more often than confirmed (`misses > hits`): their voxels
    /// become free, the rest keep their order.
    private func removeContradicted() {
        guard elements.withUnsafeBufferPointer({ $0.contains { $0.misses > $0.hits } }) else { return }
        ringsScratch = nil  // voxels of removed elements turn free
        var kept: [SurfaceElement] = []
        kept.reserveCapacity(elements.count)
        var keptReach = ReachBits()
        states.withUnsafeMutableBufferPointer { st in
            index.withUnsafeMutableBufferPointer { ix in
                elements.withUnsafeBufferPointer { es in
                    for (i, e) in es.enumerated() {
                        let vi = Int(e.voxel)
                        if e.misses > e.hits {
                            st[vi] = VoxelState.free.rawValue
                            ix[vi] = -1
                        } else {
                            ix[vi] = Int32(kept.count)
                            if reach[i] != 0 { keptReach[kept.count] = reach[i] }
                            kept.append(e)
                        }
                    }
                }
            }
        }
        elements = kept
        reach = keptReach
        reachStale = true
        normalsDirty = true
        frontierCache = nil
        stepsCache = nil
        forgetFigures()
    }

    // MARK: Figures

    /// The shares of element `e`'s area (at box-local `p`) that its captured views cover well
    /// (`well`) and that the figures keep (`kept`), by facing. Its facings: both where the surface
    /// turns within the voxel (each measured by at least `Facing.minMeasured` views), else the
    /// one. A facing counts the views that counted the element and that it faces (cosine above
    /// 0.05, as the element's own test), and is covered well under the same thresholds, its
    /// incidence taken to its own normal (`FacingJudge.coversWell`); one that is not, and that no
    /// ring view could cover (`RingReach`), is not kept. (1, 1) without a facing, or when a
    /// view beyond the first `trackedViews` (not tracked) counted it: the element's own test
    /// stands. A view that sees one side of a rim counts for the whole element, but covers only
    /// the facing it sees. Only for an element `isWellCovered` passes.
    func facingShare(_ e: SurfaceElement, at p: Vec3, judge: FacingJudge) -> (well: Float, kept: Float) {
        guard e.facingCountA > 0 else { return (1, 1) }
        guard Int(e.views) <= e.countedLow.nonzeroBitCount + e.countedHigh.nonzeroBitCount else { return (1, 1) }
        let useA = e.facingCountB == 0 || e.facingCountA >= Facing.minMeasured
        let useB = e.facingCountB >= Facing.minMeasured
        let total: Float = (useA ? 1 : 0) + (useB ? 1 : 0)
        guard total > 0 else { return (1, 1) }
        var good: Float = 0, kept: Float = 0
        for k in 0..<2 where k == 0 ? useA : useB {
            let m = Facing.decode(k == 0 ? e.facingA : e.facingB)
            if judge.coversWell(e, facing: m, at: p) {
                good += 1; kept += 1
            } else if judge.rings?.covers(at: p, normal: e.normal, facing: m) ?? false {
                kept += 1
            }
        }
        return (good / total, kept / total)
    }

    /// What `facingShare` judges facings with: the tracked cameras (box frame), the ring views
    /// (nil: none could cover a facing), and the options' thresholds as cosines.
    struct FacingJudge {
        let eyes: [Vec3], rings: RingReach?
        let minViews: Int, minPixelsPerCm: Float
        /// The spread test as a cosine: |Σd| / count at most this (2·acos of it at least
        /// min_spread_deg); nil when min_spread_deg is 0.
        let spreadCos: Float?
        let incidenceCos: Float

        init(eyes: [Vec3], rings: RingReach?, options: SurfaceOptions) {
            self.eyes = eyes; self.rings = rings
            minViews = Int(options.minViews); minPixelsPerCm = options.minPixelsPerCm
            spreadCos = options.minSpreadDeg > 0 ? cos(options.minSpreadDeg * .pi / 360) : nil
            incidenceCos = cos(options.maxIncidenceDeg * .pi / 180)
        }

        /// Whether the views that counted `e` (at `p`) and that `facing` faces (cosine above
        /// 0.05, as the element's own test) cover it well.
        func coversWell(_ e: SurfaceElement, facing m: Vec3, at p: Vec3) -> Bool {
            guard e.bestPixelsPerCm >= minPixelsPerCm else { return false }
            var count = 0, sum = Vec3(0, 0, 0), best: Float = -1
            for word in 0..<2 {
                var bits = word == 0 ? e.countedLow : e.countedHigh
                while bits != 0 {
                    let j = word * 32 + bits.trailingZeroBitCount
                    bits &= bits - 1
                    guard j < eyes.count else { continue }
                    let to = eyes[j] - p
                    let l = length(to)
                    guard l > 0 else { continue }
                    let d = to / l
                    let c = dot(m, d)
                    guard c > 0.05 else { continue }
                    count += 1; sum += d; best = max(best, c)
                }
            }
            guard count >= minViews, best >= incidenceCos else { return false }
            guard let sc = spreadCos else { return true }
            return count > 1 && length(sum) / Float(count) <= sc
        }
    }

    /// The tracked cameras (`viewEyes`) in the box frame.
    func trackedEyes() -> [Vec3] { viewEyes.map { box.toLocal(direction: $0 - box.center) } }

    /// Well covered under the options' thresholds.
    public func isWellCovered(_ e: SurfaceElement) -> Bool {
        Int(e.views) >= Int(options.minViews) && e.spreadDeg >= options.minSpreadDeg
            && e.bestIncidenceDeg <= options.maxIncidenceDeg && e.bestPixelsPerCm >= options.minPixelsPerCm
    }

    /// The side (0...5, face order) of a box-frame normal at a box-local position: the dominant
    /// axis of the normal, or of the position (scaled by the half size) when the normal is unknown.
    public func side(normal n: Vec3, at p: Vec3) -> Int {
        var a = n
        if length(n) == 0 { a = p / box.halfSize }
        let ax = abs(a.x), ay = abs(a.y), az = abs(a.z)
        if ax >= ay && ax >= az { return a.x < 0 ? 1 : 2 }
        if ay >= az { return a.y < 0 ? 3 : 4 }
        return a.z < 0 ? 0 : 5
    }

    /// Each element's share of the surface, in voxel faces (voxelSize²), by its projected area: an
    /// element with normal n holds 1 / (|n_d| · run) voxel faces, where d is the dominant axis of
    /// n and run the elements in its column along d (up to 3 on either side, contiguous, their
    /// normals on the same side as n). Each column along d through a surface then sums to the
    /// surface's area over that column's footprint (voxelSize² / |n_d|) however thick the band
    /// of elements depth left there: views that see a surface often, and well, leave it thicker
    /// (their noise spreads it over more voxels), so counting elements overstates how much of
    /// the surface is well covered by up to 18 points (on the meshes of BENCHMARKS.md). Elements
    /// without a normal and face cells count 1. Computed once for a call that computes figures
    /// (`areasScratch`).
    func elementAreas() -> [Float] {
        if let a = areasScratch { return a }
        refreshNormals()
        var areas: [Float] = []
        areas.reserveCapacity(elements.count)
        if !fromDepth {
            areasScratch = [Float](repeating: 1, count: elements.count)
            return areasScratch ?? []
        }
        let nx = dims.x, ny = dims.y, nz = dims.z
        let stride = SIMD3(1, nx, nx * ny), extent = SIMD3(nx, ny, nz)
        states.withUnsafeBufferPointer { st in
            index.withUnsafeBufferPointer { ix in
                elements.withUnsafeBufferPointer { es in
                    for e in es {
                        let n = e.normal
                        let a = Vec3(Swift.abs(n.x), Swift.abs(n.y), Swift.abs(n.z))
                        let d = a.x >= a.y && a.x >= a.z ? 0 : (a.y >= a.z ? 1 : 2)
                        guard a[d] > 0 else { areas.append(1); continue }
                        let v = Int(e.voxel)
                        let along = d == 0 ? v % nx : (d == 1 ? (v / nx) % ny : v / (nx * ny))  // the coordinate along d
                        var run = 1
                        for side in 0..<2 {
                            let step = side == 0 ? -1 : 1
                            var q = along, j = v
                            for _ in 0..<3 {
                                q += step; j += step * stride[d]
                                guard q >= 0, q < extent[d], st[j] & 3 == VoxelState.occupied.rawValue else { break }
                                let o = Int(ix[j])
                                guard o >= 0, o < es.count, dot(es[o].normal, n) > 0 else { break }
                                run += 1
                            }
                        }
                        areas.append(1 / (max(a[d], 0.577) * Float(run)))
                    }
                }
            }
        }
        areasScratch = areas
        return areas
    }

    /// Runs `body` (a call that computes figures), then drops the areas it computed.
    private func releasingAreas<T>(_ body: () -> T) -> T {
        defer { releaseScratch() }
        return body()
    }

    /// Whether element `i` was out of reach when last judged (`judgeReach`; the figures judge
    /// when a view was captured since).
    public func isOutOfReach(_ i: Int) -> Bool { reach[i] == 2 }

    /// Judges, once per captured view, which elements views on the rings around the box could
    /// cover well (`reach`): the `ringElevations` × `ringAzimuths` candidate positions, and the
    /// unseen estimate's rings below (`estimateElevationsBelow`) when the side mask counts the
    /// bottom (the caller means to capture it), at the last view's distance (at least 2.3 × the
    /// box's half diagonal), that face the element within `maxIncidenceDeg` and see it: at least
    /// `minViews` of them with the spread `minSpreadDeg` (`RingReach`, its march).
    /// Occlusion only by surface seen so far; the resolution is not judged (the rings are at the
    /// operator's working distance). Every element neither well covered nor without a normal is
    /// judged at the first pass after it got its normal, and then again in turns (surface seen
    /// since may hide it, surface removed may free it): the elements whose voxel index is p modulo
    /// `reachTurns` at pass p. Judged once, as surface was first seen, an element stayed in reach
    /// that later views showed no ring view could cover well, and the figure of open shells ended
    /// up to 5 points below the truth (the teapot; BENCHMARKS.md). Judged again after every view,
    /// the march cost most of a view on real depth (a still camera: no element becomes well
    /// covered) for verdicts that rarely change (0.7-1.5 % of them a view on a real Kinect
    /// recording, none on the simulated captures). The first pass over the
    /// figures or their bounds after a view judges (in depth mode the view's own event check,
    /// `raiseEvents`). The figures leave out the area of elements out of reach and not well covered:
    /// surface no view on the rings can cover well (a belly, the inside of a leg) is not what
    /// is left to capture. On the meshes of BENCHMARKS.md that moved the figure at the end of a
    /// capture from up to 5.5 points below the truth (spot) to within 2.
    private func judgeReach() {
        guard reachStale else { return }
        reachStale = false
        guard fromDepth, !elements.isEmpty else { return }
        refreshNormals()
        var changed = false
        defer { if changed { frontierCache = nil } }  // the frontier leaves out what out-of-reach elements border
        let rings = ringReach()
        let turn = Int32(truncatingIfNeeded: reachPasses % SurfaceMap.reachTurns)
        reachPasses &+= 1
        elements.withUnsafeBufferPointer { es in
            for i in es.indices {
                let e = es[i]
                // Not its turn: skipped before the well-covered test (two acos) too.
                guard reach[i] == 0 || e.voxel % Int32(SurfaceMap.reachTurns) == turn else { continue }
                let n = e.normal
                guard length(n) > 0, !isWellCovered(e) else { continue }
                let verdict: UInt8 = rings.covers(at: position(of: e), normal: n, facing: n) ? 1 : 2
                if reach[i] != verdict { reach[i] = verdict; changed = true }
            }
        }
    }

    /// An element judged before is judged again at every `reachTurns`-th pass of `judgeReach`
    /// (by its voxel index, which removals elsewhere do not shift), at most 3 views late.
    static let reachTurns = 4

    /// The ring positions `judgeReach` tries (box frame).
    func ringEyes() -> [Vec3] {
        let r = max(viewDistance, length(box.halfSize) * 2.3)
        var eyes: [Vec3] = []
        let below = options.sideMask & (1 << 3) != 0 ? SurfaceMap.estimateElevationsBelow : []
        for el in SurfaceMap.ringElevations + below {
            for a in 0..<SurfaceMap.ringAzimuths {
                eyes.append(SurfaceMap.candidatePosition(azimuth: Float(a) * 2 * .pi / Float(SurfaceMap.ringAzimuths), elevation: el, distance: r))
            }
        }
        return eyes
    }

    /// What judges whether ring views could cover surface well (`RingReach`), built once for a
    /// call that computes figures (`ringsScratch`).
    func ringReach() -> RingReach {
        if let r = ringsScratch { return r }
        let r = states.withUnsafeBufferPointer {
            RingReach(eyes: ringEyes(), options: options, voxel: voxelSize, origin: origin, dims: dims, states: $0)
        }
        ringsScratch = r
        return r
    }

    /// An unknown voxel counts as frontier only when the element that borders it does not face
    /// away from it by more than this cosine: behind the element lies the inside of what it
    /// bounds (the unknown inside of a thin wall or an open shell), not the surface's continuation.
    static let behindCos: Float = 0.5

    /// Frontier voxels per side (the side of the surface element that borders them): unknown
    /// voxels next to a surface voxel, beside it or in front of it (`behindCos`), and next to a
    /// free voxel; not those found by an element out of reach (`judgeReach`: the surface it
    /// continues is no more in reach, as the inside of a pot seen through its spout). The figures'
    /// lower bound on unseen surface (`sideFigures`).
    private func frontier() -> [UInt32] {
        if let f = frontierCache { return f }
        var counts = [UInt32](repeating: 0, count: 6)
        guard fromDepth else { return counts }
        refreshNormals()
        let steps = frontierSteps()
        // Each unknown voxel counted once (bit 2 marks it), by the first element that finds it.
        let nx = dims.x, sz = dims.x * dims.y
        let offsets = [1, -1, nx, -nx, sz, -sz]
        var marked: [Int] = []
        var finders: [Int32] = []  // per marked voxel, the element that found it
        states.withUnsafeMutableBufferPointer { st in
            elements.withUnsafeBufferPointer { es in
                for ei in es.indices where steps[ei] != 0 {
                    let vi = Int(es[ei].voxel)
                    let n = es[ei].normal
                    let toward = SIMD8<Float>(n.x, -n.x, n.y, -n.y, n.z, -n.z, 0, 0)  // the normal's component towards each neighbour
                    for o in 0..<6 where steps[ei] & (1 << o) != 0 && toward[o] > -SurfaceMap.behindCos {
                        let qi = vi + offsets[o]
                        guard st[qi] & 4 == 0 else { continue }
                        st[qi] |= 4  // marked (still unknown: & 3 == 0)
                        marked.append(qi)
                        finders.append(Int32(truncatingIfNeeded: ei))
                    }
                }
            }
        }
        for f in finders where reach[Int(f)] != 2 {
            let e = elements[Int(f)]
            counts[side(normal: e.normal, at: centre(of: coordinates(ofIndex: Int(e.voxel))))] += 1
        }
        for m in marked { states[m] &= ~4 }
        frontierCache = counts
        return counts
    }

    /// Per element (by index), bit o set when its neighbour o (0...5: +x, −x, +y, −y, +z, −z)
    /// lies in the grid, is unknown and borders a free voxel: unseen space beside the measured
    /// surface and the seen free space. Both frontiers read it, each with its own rule on the
    /// direction (`frontier`: beside or in front of the surface; the planner's
    /// `PlannerMemory.sample`: beside or behind it). Computed when first asked after the voxel
    /// states or the elements changed (`stepsCache`): a view's figures compute it, and the next
    /// view asked for straight after reads it for free.
    func frontierSteps() -> [UInt8] {
        if let s = stepsCache, s.count == elements.count { return s }
        var steps = [UInt8](repeating: 0, count: elements.count)
        let nx = dims.x, ny = dims.y, nz = dims.z, sz = nx * ny
        let free = VoxelState.free.rawValue, unknown = VoxelState.unknown.rawValue
        states.withUnsafeBufferPointer { stb in
            elements.withUnsafeBufferPointer { es in
                steps.withUnsafeMutableBufferPointer { out in
                    guard let st = stb.baseAddress, stb.count >= nx * ny * nz, nx > 0, ny > 0 else { return }
                    /// The state of voxel `i` when `inside`, else of `own` (the caller's voxel: never free
                    /// for an unknown voxel, never unknown for an element): the loads of one voxel's
                    /// neighbours do not wait on a branch between them.
                    @inline(__always) func state(_ inside: Bool, _ i: Int, _ own: Int) -> UInt8 { st[inside ? i : own] & 3 }
                    @inline(__always) func bordersFree(_ q: Int, _ x: Int, _ y: Int, _ z: Int) -> Bool {
                        let a = state(x > 0, q &- 1, q) == free, b = state(x + 1 < nx, q &+ 1, q) == free
                        let c = state(y > 0, q &- nx, q) == free, d = state(y + 1 < ny, q &+ nx, q) == free
                        let e = state(z > 0, q &- sz, q) == free, f = state(z + 1 < nz, q &+ sz, q) == free
                        return a || b || c || d || e || f
                    }
                    let unx = UInt32(truncatingIfNeeded: nx), uny = UInt32(truncatingIfNeeded: ny)
                    for ei in 0..<es.count {
                        let vi = Int(es[ei].voxel)
                        guard vi >= 0, vi < stb.count else { continue }
                        let row = UInt32(truncatingIfNeeded: vi) / unx
                        let x = vi &- Int(row &* unx), y = Int(row % uny), z = Int(row / uny)
                        let px = x + 1 < nx, mx = x > 0, py = y + 1 < ny, my = y > 0, pz = z + 1 < nz, mz = z > 0
                        let uPX = state(px, vi &+ 1, vi) == unknown, uMX = state(mx, vi &- 1, vi) == unknown
                        let uPY = state(py, vi &+ nx, vi) == unknown, uMY = state(my, vi &- nx, vi) == unknown
                        let uPZ = state(pz, vi &+ sz, vi) == unknown, uMZ = state(mz, vi &- sz, vi) == unknown
                        var m: UInt8 = 0
                        if uPX && bordersFree(vi + 1, x + 1, y, z) { m |= 1 }
                        if uMX && bordersFree(vi - 1, x - 1, y, z) { m |= 2 }
                        if uPY && bordersFree(vi + nx, x, y + 1, z) { m |= 4 }
                        if uMY && bordersFree(vi - nx, x, y - 1, z) { m |= 8 }
                        if uPZ && bordersFree(vi + sz, x, y, z + 1) { m |= 16 }
                        if uMZ && bordersFree(vi - sz, x, y, z - 1) { m |= 32 }
                        out[ei] = m
                    }
                }
            }
        }
        stepsCache = steps
        return steps
    }

    /// The unseen share as of the last captured view, estimated now when a view was captured
    /// since (the map as it stands: a depth frame fused after that view counts too).
    private func currentUnseenShare() -> [Float]? {
        if unseenStale {
            unseenStale = false
            unseenShare = estimateUnseen()
        }
        return unseenShare
    }

    /// The figures per side; `estimate: false` leaves out the unseen estimate (the frontier voxels
    /// alone), a bound from above on every side's complete fraction.
    private func sideFigures(estimate: Bool = true) -> [SurfaceSideFigures] {
        if estimate, let m = sidesMemo { return m }
        if !estimate, let m = boundMemo { return m }
        var (sides, mean) = elementSides()
        if fromDepth {
            // Unseen surface is estimated in elements; each stands for the mean element's area.
            let f = frontier()
            let share = (estimate ? currentUnseenShare() : nil) ?? [Float](repeating: 0, count: 6)
            let observed = Float(elements.count)
            for s in 0..<6 {
                sides[s].frontier = max(f[s], UInt32(min(Float(UInt32.max / 8), (share[s] * observed).rounded())))
                sides[s].frontierArea = Float(sides[s].frontier) * mean
            }
        }
        for s in 0..<6 { finish(&sides[s]) }
        if estimate { sidesMemo = sides } else { boundMemo = sides }
        return sides
    }

    /// The elements' part of the figures per side (observed and well covered; in face mode the
    /// cells no view saw as frontier), and the mean element's area: what `sideFigures` adds
    /// the frontier and the unseen estimate to, with or without the estimate.
    private func elementSides() -> (sides: [SurfaceSideFigures], meanArea: Float) {
        if let m = elementSidesMemo { return m }
        judgeReach()
        let area = elementAreas()
        var sides = [SurfaceSideFigures](repeating: SurfaceSideFigures(), count: 6)
        let judge = FacingJudge(eyes: fromDepth ? trackedEyes() : [], rings: fromDepth ? ringReach() : nil, options: options)
        for (i, e) in elements.enumerated() {
            let p = position(of: e)
            let s = side(normal: e.normal, at: p)
            let well = isWellCovered(e)
            // Out of reach: not what is left to capture. Well covered, by the share of its facings
            // covered well, less the facings out of reach (`facingShare`).
            let share = well && fromDepth ? facingShare(e, at: p, judge: judge) : (well: 1, kept: 1)
            let a = reach[i] == 2 && !well ? 0 : area[i] * share.kept
            if fromDepth || e.views > 0 {
                sides[s].observed += 1; sides[s].observedArea += a
            } else {
                sides[s].frontier += 1; sides[s].frontierArea += a
            }
            if well { sides[s].wellCovered += 1; sides[s].wellArea += area[i] * share.well }
        }
        let memo = (sides, elements.isEmpty ? Float(1) : area.reduce(0, +) / Float(elements.count))
        elementSidesMemo = memo
        return memo
    }

    private func finish(_ s: inout SurfaceSideFigures) {
        s.wellFraction = s.observedArea > 0 ? min(1, s.wellArea / s.observedArea) : 0
        let total = s.observedArea + s.frontierArea
        s.completeFraction = total > 0 ? min(1, s.wellArea / total) : 0
        s.completed = total > 0 && s.completeFraction >= options.goalFraction
    }

    /// Drops the remembered figures: the map changed.
    private func forgetFigures() {
        figuresMemo = nil
        sidesMemo = nil
        coveredMemo = nil
        boundMemo = nil
        elementSidesMemo = nil
        releaseScratch()
    }

    /// Drops what one call computing figures shares between its passes (`areasScratch`,
    /// `ringsScratch`).
    private func releaseScratch() {
        areasScratch = nil
        ringsScratch = nil
    }

    /// Figures of side `face` (0...5). - Throws: `invalidArgument` outside 0...5.
    public func side(_ face: Int) throws(CaptureKitError) -> SurfaceSideFigures {
        guard (0..<6).contains(face) else { throw .invalidArgument("face must be 0...5 (got \(face))") }
        return releasingAreas { sideFigures()[face] }
    }

    public var figures: SurfaceFigures {
        if var f = figuresMemo {
            f.memoryBytes = memoryBytes
            return f
        }
        let sides = releasingAreas { sideFigures() }
        var all = SurfaceSideFigures()
        var done: UInt32 = 0
        for s in 0..<6 where options.sideMask & (1 << UInt32(s)) != 0 {
            all.add(sides[s])
            if sides[s].completed { done += 1 }
        }
        finish(&all)
        var f = SurfaceFigures()
        f.fromDepth = fromDepth; f.all = all; f.framesFused = framesFused; f.views = views
        f.sidesCompleted = done; f.elementsDropped = elementsDropped; f.voxelSize = voxelSize
        f.memoryBytes = memoryBytes
        figuresMemo = f
        return f
    }

    public var memoryBytes: UInt64 {
        UInt64(states.capacity + 4 * index.capacity + MemoryLayout<SurfaceElement>.stride * elements.capacity
               + 4 * newVoxels.capacity + MemoryLayout<SIMD3<Float>>.stride * (projected.capacity + rowPoints.capacity) + 4 * zbuffer.capacity
               + 4 * lastDepth.capacity + lastConfidence.capacity + reach.capacity + MemoryLayout<Vec3>.stride * viewEyes.capacity + history.reduce(0) { $0 + 4 * $1.depth.capacity + MemoryLayout<KeptView>.stride }
               + (stepsCache?.capacity ?? 0) + planner.bytes)
    }

    private func raiseEvents(at t: Double) {
        defer { releaseScratch() }  // the areas and rings of this pass (`releasingAreas`)
        // The frontier and the unseen estimate only add to the surface still to cover: while no side
        // (and not the whole) could complete without them, no event can fire, and the estimate
        // waits for the figures. It runs here too while every side of the mask could be complete
        // (after the events fired), where next_view needs it to say whether the surface is
        // complete: the view pays for the estimate, not the call that plans the next one.
        if options.goalFraction > 0 {
            if fromDepth && !anyCompletes(coveredSides()) { return }
            if unseenStale && !anyCompletes(sideFigures(estimate: false)) { return }
        }
        let sides = sideFigures()
        var all = SurfaceSideFigures()
        for s in 0..<6 where options.sideMask & (1 << UInt32(s)) != 0 {
            all.add(sides[s])
            if sides[s].completed && !sideCompleted[s] {
                sideCompleted[s] = true
                events.push(GuidanceEvent(code: .surfaceSideCompleted, index: Int32(s), timestamp: t, value: sides[s].completeFraction))
            }
        }
        finish(&all)
        if all.completed && !surfaceCompleted {
            surfaceCompleted = true
            events.push(GuidanceEvent(code: .surfaceCompleted, timestamp: t, value: Float(views)))
        }
    }

    /// Depth mode: observed and (at most) well-covered elements per side, with no frontier and no
    /// unseen surface (a bound from above on every complete fraction).
    private func coveredSides() -> [SurfaceSideFigures] {
        if let m = coveredMemo { return m }
        var sides = [SurfaceSideFigures](repeating: SurfaceSideFigures(), count: 6)
        refreshNormals()
        judgeReach()
        let area = elementAreas()
        var observed = SIMD8<UInt32>(repeating: 0), well = SIMD8<UInt32>(repeating: 0)
        var observedArea = SIMD8<Float>(repeating: 0), wellArea = SIMD8<Float>(repeating: 0)
        // `isWellCovered` without its two acos: the angles compared as cosines, loosened by 1e-4
        // so that no well-covered element is missed (the bound stays a bound).
        let minViews = Int(options.minViews), minPixels = options.minPixelsPerCm
        let spreadCos = options.minSpreadDeg > 0 ? cos(options.minSpreadDeg * .pi / 360) + 1e-4 : Float.infinity
        let incidenceCos = options.maxIncidenceDeg < 90 ? cos(options.maxIncidenceDeg * .pi / 180) - 1e-4 : -Float.infinity
        elements.withUnsafeBufferPointer { es in
            for (i, e) in es.enumerated() {  // depth mode: every element is observed
                let n = e.normal
                let s = side(normal: n, at: length(n) > 0 ? n : position(of: e))  // the position only without a normal
                observed[s] &+= 1
                // Out of reach and not well covered: no area (as in `sideFigures`; one the loose
                // test takes for well covered counts, which only raises the bound).
                let rest = reach[i] == 2 ? 0 : area[i]
                guard Int(e.views) >= minViews, e.bestPixelsPerCm >= minPixels else { observedArea[s] += rest; continue }
                if spreadCos.isFinite {
                    guard e.views > 1, min(1, (e.dx * e.dx + e.dy * e.dy + e.dz * e.dz).squareRoot() / Float(e.views)) <= spreadCos else {
                        observedArea[s] += rest; continue
                    }
                }
                if incidenceCos.isFinite {
                    guard e.bestCos > 0, e.bestCos >= incidenceCos else { observedArea[s] += rest; continue }
                }
                well[s] &+= 1; wellArea[s] += area[i]; observedArea[s] += area[i]
            }
        }
        for s in 0..<6 {
            sides[s].observed = observed[s]; sides[s].wellCovered = well[s]
            sides[s].observedArea = observedArea[s]; sides[s].wellArea = wellArea[s]
            finish(&sides[s])
        }
        coveredMemo = sides
        return sides
    }

    /// What the planner reads of the figures, without the unseen estimate's cost when it can do
    /// without it: whether every side of the side mask is complete, and the surface (observed +
    /// frontier) of the side mask. While the estimate is stale (a view was captured since) and
    /// the bounds without it (`coveredSides`, then with the frontier voxels, as `raiseEvents`
    /// takes them) leave a side of the mask short of its goal, the surface takes the unseen share
    /// as last estimated and nothing is estimated; else it reads `figures` (which estimates when
    /// stale).
    func plannerFigures() -> (complete: Bool, surface: Float) {
        defer { releaseScratch() }  // the areas and rings of this pass (`releasingAreas`)
        let mask = options.sideMask & 0x3F
        if fromDepth && unseenStale && options.goalFraction > 0 {
            func short(_ sides: [SurfaceSideFigures]) -> Bool {
                (0..<6).contains(where: { mask & (1 << UInt32($0)) != 0 && !sides[$0].completed })
            }
            let bound = coveredSides()
            if short(bound) || short(sideFigures(estimate: false)) {
                let share = unseenShare ?? [Float](repeating: 0, count: 6)
                let observed = Float(elements.count)
                var surface: Float = 0
                for s in 0..<6 where mask & (1 << UInt32(s)) != 0 { surface += Float(bound[s].observed) + (share[s] * observed).rounded() }
                return (false, surface)
            }
        }
        let f = figures
        return (f.sidesCompleted == UInt32(mask.nonzeroBitCount), Float(f.all.observed + f.all.frontier))
    }

    /// Whether `sides` complete a side (of the side mask) or the whole not completed yet, or
    /// every side of the mask (what next_view's `complete` asks).
    private func anyCompletes(_ sides: [SurfaceSideFigures]) -> Bool {
        var all = SurfaceSideFigures()
        var every = true
        for s in 0..<6 where options.sideMask & (1 << UInt32(s)) != 0 {
            all.add(sides[s])
            if sides[s].completed && !sideCompleted[s] { return true }
            every = every && sides[s].completed
        }
        if every && options.sideMask & 0x3F != 0 { return true }
        finish(&all)
        return all.completed && !surfaceCompleted
    }

    // MARK: Unseen surface

    /// Elevations and azimuths of the views the unseen estimate looks from (the operator's rings),
    /// and the rings below the object it adds when the side mask counts the bottom.
    static let estimateElevations: [Float] = [5, 30, 60].map { $0 * .pi / 180 }
    static let estimateElevationsBelow: [Float] = [-30, -60].map { $0 * .pi / 180 }
    static let estimateAzimuths = 16
    /// Unknown voxels (no view looked through them) a ray must cross for unseen surface.
    static let missRun = 8
    /// A surface reached after unknown space counts as seen when its normal faces the ray by
    /// more than this cosine (it was measured, from another side).
    static let frontCos: Float = 0.3
    /// Rays per estimate view (columns, rows) over the box's bounding sphere.
    static let estimateGrid = (16, 16)

    /// The unseen surface per side, as a share of the observed surface: rays cast from views
    /// around the box (`estimateElevations` × `estimateAzimuths`, at the last captured view's
    /// distance or 2.3 × the box's half diagonal, looking at the box centre) through the voxel
    /// grid, each standing for the surface area of its footprint (∝ distance²) and weighted by the
    /// cosine of its view's elevation (a ring of views stands for that much of the sphere of
    /// directions, so that the views sample directions evenly). "Looked through"
    /// voxels are free or carry `passedBit` (a captured view's pixel ray crossed them); the rest
    /// of the unknown space may hold surface. A ray that first reaches observed surface counts as
    /// seen, unless it got there through at least two unknown voxels not looked through and the
    /// surface does not face it (cosine ≤ `frontCos`, or no normal): then unseen surface lies in
    /// between (the far side of a half-seen object). A ray that crosses the box without reaching
    /// surface counts as unseen when it crossed at least `missRun` such voxels in blocks nothing
    /// has looked through (`lookedBlocks`: a part no view has reached), else for neither (empty
    /// space). Unseen per side (the side faces the ray) / seen overall.
    func estimateUnseen() -> [Float] {
        var unseen = [Float](repeating: 0, count: 6)
        guard fromDepth, !elements.isEmpty else { return unseen }
        carvePending()
        markLookedBlocks()
        refreshNormals()
        let r = max(viewDistance, length(box.halfSize) * 2.3)
        // The rays cover the box's bounding sphere as seen from the view.
        let rho = length(box.halfSize)
        let tx = rho / max(1e-6, (r * r - rho * rho).squareRoot()), ty = tx
        let (gx, gy) = SurfaceMap.estimateGrid
        var seen: Float = 0
        let below = options.sideMask & (1 << 3) != 0 ? SurfaceMap.estimateElevationsBelow : []
        for el in SurfaceMap.estimateElevations + below {
            for a in 0..<SurfaceMap.estimateAzimuths {
                let az = Float(a) * 2 * .pi / Float(SurfaceMap.estimateAzimuths)
                let eye = Vec3(-sin(az) * cos(el), sin(el), -cos(az) * cos(el)) * r
                let f = -eye / r
                var right = cross(f, Vec3(0, 1, 0))
                right = right / max(length(right), 1e-6)
                let up = cross(right, f)
                for j in 0..<gy {
                    let sy = ((Float(j) + 0.5) / Float(gy) * 2 - 1) * ty
                    for i in 0..<gx {
                        let sx = ((Float(i) + 0.5) / Float(gx) * 2 - 1) * tx
                        let d = f + right * sx + up * sy
                        let hit = firstSurface(from: eye, direction: d / length(d))
                        guard hit.element >= 0 || hit.unseen else { continue }
                        let w = hit.distance * hit.distance * cos(el)
                        if hit.unseen { unseen[hit.side] += w } else { seen += w }
                    }
                }
            }
        }
        lookedBlocks = []  // not kept: the map's memory bound
        guard seen > 0 else { return [Float](repeating: 0, count: 6) }
        return unseen.map { $0 / seen }
    }

    /// Blocks of 2 × 2 × 2 voxels (x fastest, `blockDims`): non-zero where any voxel is free,
    /// occupied or carries `passedBit`, 0 where all are unknown and not looked through. A streamed frame
    /// carves free space along a sparse grid of its pixels (`fuseKernel`'s strides), so the free
    /// space of many frames is a net with holes about a voxel wide: counted voxel by voxel, a ray
    /// through seen, empty space crossed enough of them to count as unseen surface (on the bunny
    /// of BENCHMARKS.md, twice the unseen share the truth has after the second capture, even
    /// over a floor). A block closes those holes; a part no view has reached is unknown block
    /// after block. Marked by `estimateUnseen`, read by its miss rule (`firstSurface`), released
    /// after it (not kept: the map's memory bound).
    private var lookedBlocks: [UInt8] = []
    private var blockDims = SIMD3<Int>(0, 0, 0)

    private func markLookedBlocks() {
        let bx = (dims.x + 1) / 2, by = (dims.y + 1) / 2, bz = (dims.z + 1) / 2
        blockDims = SIMD3(bx, by, bz)
        if lookedBlocks.count != bx * by * bz { lookedBlocks = [UInt8](repeating: 0, count: bx * by * bz) }
        let nx = dims.x, ny = dims.y, nz = dims.z
        states.withUnsafeBufferPointer { st in
            lookedBlocks.withUnsafeMutableBufferPointer { bl in
                bl.update(repeating: 0)
                // Each block ORs its voxels' states: non-zero where any is free, occupied or passed.
                for k in 0..<nz {
                    for j in 0..<ny {
                        let row = (k * ny + j) * nx, blockRow = ((k >> 1) * by + (j >> 1)) * bx
                        var i = 0
                        while i + 1 < nx {
                            bl[blockRow + (i >> 1)] |= st[row + i] | st[row + i + 1]
                            i += 2
                        }
                        if i < nx { bl[blockRow + (i >> 1)] |= st[row + i] }
                    }
                }
            }
        }
    }

    /// The first occupied voxel along a box-local ray (unit direction): its element, distance
    /// (voxels), whether it is reached from behind after unknown space, and the side facing the ray.
    private func firstSurface(from o: Vec3, direction d: Vec3) -> (element: Int, distance: Float, unseen: Bool, side: Int) {
        let none = (element: -1, distance: Float(0), unseen: false, side: 0)
        let g = (o - origin) / voxelSize
        let n = Vec3(Float(dims.x), Float(dims.y), Float(dims.z))
        var t0: Float = 0, t1 = Float.greatestFiniteMagnitude
        for a in 0..<3 {
            if abs(d[a]) < 1e-9 {
                if g[a] < 0 || g[a] >= n[a] { return none }
                continue
            }
            var ta = (0 - g[a]) / d[a], tb = (n[a] - g[a]) / d[a]
            if ta > tb { swap(&ta, &tb) }
            t0 = max(t0, ta); t1 = min(t1, tb)
        }
        guard t1 > t0 else { return none }
        let p = g + d * (t0 + 1e-4)
        var c = SIMD3<Int>(min(dims.x - 1, max(0, Int(p.x))), min(dims.y - 1, max(0, Int(p.y))), min(dims.z - 1, max(0, Int(p.z))))
        var step = SIMD3<Int>(0, 0, 0), tMax = Vec3(repeating: .infinity), tDelta = Vec3(repeating: .infinity)
        for a in 0..<3 where abs(d[a]) >= 1e-9 {
            step[a] = d[a] > 0 ? 1 : -1
            tMax[a] = t0 + (Float(c[a] + (d[a] > 0 ? 1 : 0)) - p[a]) / d[a]
            tDelta[a] = 1 / abs(d[a])
        }
        var t = t0
        var unknownRun = 0, crossed = 0
        var firstUnknown: Float = -1
        var guardSteps = dims.x + dims.y + dims.z + 3
        // The walk in scalars over the buffers (the same steps and comparisons as SIMD3 would take).
        let nx = dims.x, ny = dims.y, nz = dims.z
        var cx = c.x, cy = c.y, cz = c.z
        var mx = tMax.x, my = tMax.y, mz = tMax.z
        let ex = tDelta.x, ey = tDelta.y, ez = tDelta.z
        let stx = step.x, sty = step.y, stz = step.z
        var hitOccupied = false, hitElement = -1
        let bx = blockDims.x, by = blockDims.y
        let blocks = lookedBlocks.count == bx * by * blockDims.z ? lookedBlocks : []
        states.withUnsafeBufferPointer { st in
            index.withUnsafeBufferPointer { ix in
                while guardSteps > 0 {
                    guardSteps -= 1
                    let i = (cz &* ny &+ cy) &* nx &+ cx  // in the grid: checked at each step below
                    let raw = st[i]
                    if raw & 3 == VoxelState.occupied.rawValue { hitOccupied = true; hitElement = Int(ix[i]); return }
                    if raw == 0 {
                        unknownRun += 1
                        let b = ((cz >> 1) &* by &+ (cy >> 1)) &* bx &+ (cx >> 1)
                        if b >= blocks.count || blocks[b] == 0 { crossed += 1 }
                        if firstUnknown < 0 { firstUnknown = t }
                    } else {
                        unknownRun = 0
                    }
                    if mx < my {
                        if mx < mz {
                            t = mx; mx += ex; cx &+= stx
                            if UInt(bitPattern: cx) >= UInt(bitPattern: nx) { return }
                        } else {
                            t = mz; mz += ez; cz &+= stz
                            if UInt(bitPattern: cz) >= UInt(bitPattern: nz) { return }
                        }
                    } else if my < mz {
                        t = my; my += ey; cy &+= sty
                        if UInt(bitPattern: cy) >= UInt(bitPattern: ny) { return }
                    } else {
                        t = mz; mz += ez; cz &+= stz
                        if UInt(bitPattern: cz) >= UInt(bitPattern: nz) { return }
                    }
                }
            }
        }
        c = SIMD3(cx, cy, cz)
        if hitOccupied {
            let e = hitElement
            guard e >= 0, e < elements.count else { return none }
            let nrm = elements[e].normal
            let behind = unknownRun >= 2 && !(length(nrm) > 0 && dot(nrm, -d) > SurfaceMap.frontCos)
            return (e, t, behind, side(normal: -d, at: centre(of: c)))
        }
        // Through the box without reaching surface: unseen surface when it crossed unknown space
        // that no view has looked through (blocks of it).
        if crossed >= SurfaceMap.missRun { return (0, firstUnknown, true, side(normal: -d, at: centre(of: c))) }
        return none
    }

    // MARK: Hint

    /// Where to go next from the camera at `pose`. With depth: the next-best view
    /// (`nextBestView(from:)`, the default camera): its side, azimuth, elevation and prompt; the
    /// side's complete fraction. Without depth (face cells): `sideRuleHint(pose:)`.
    public func hint(pose: Pose) -> SurfaceHint {
        guard fromDepth, !elements.isEmpty else { return sideRuleHint(pose: pose) }
        let v = nextBestView(from: pose)
        let sides = releasingAreas { sideFigures() }
        let side = v.complete ? -1 : Int(v.side)
        return SurfaceHint(side: Int32(side), moveAngle: v.moveAngle, cameraAzimuth: v.cameraAzimuth, targetAzimuth: v.targetAzimuth,
                           cameraElevation: v.cameraElevation, targetElevation: v.targetElevation,
                           sideComplete: side >= 0 ? sides[side].completeFraction : (v.complete ? 1 : 0), text: v.text)
    }

    /// The side to capture next by the best-side rule: among the sides of the side mask that are
    /// not complete, the one with the most surface still to cover ((observed − well covered) +
    /// frontier); ties: the one nearest the camera's azimuth. The bottom is reached by going
    /// lower, the top by going higher; the other sides by walking around the object.
    public func sideRuleHint(pose: Pose) -> SurfaceHint {
        let sides = releasingAreas { sideFigures() }
        let d = box.toLocal(direction: pose.t - box.center)
        let camAz = atan2(-d.x, -d.z)
        let camEl = atan2(d.y, (d.x * d.x + d.z * d.z).squareRoot())
        let azimuths: [Float] = [0, .pi / 2, -.pi / 2, camAz, camAz, .pi]
        var best = -1, bestDeficit: Int64 = 0, bestTurn = Float.infinity
        for s in 0..<6 where options.sideMask & (1 << UInt32(s)) != 0 && !sides[s].completed {
            let deficit = Int64(sides[s].observed) - Int64(sides[s].wellCovered) + Int64(sides[s].frontier)
            let turn = abs(wrapAngle(azimuths[s] - camAz))
            if deficit > bestDeficit || (deficit == bestDeficit && deficit > 0 && turn < bestTurn) {
                best = s; bestDeficit = deficit; bestTurn = turn
            }
        }
        guard best >= 0 else {
            let anything = sides.contains { $0.observed + $0.frontier > 0 }
            return SurfaceHint(side: -1, moveAngle: 0, cameraAzimuth: camAz, targetAzimuth: camAz, cameraElevation: camEl,
                               targetElevation: camEl, sideComplete: anything ? 1 : 0,
                               text: anything ? "Surface complete\0" : "Point the camera at the object\0")
        }
        let targetAz = wrapAngle(azimuths[best])
        let targetEl: Float = best == 4 ? .pi / 3 : (best == 3 ? -.pi / 6 : min(max(camEl, 0), .pi / 4))
        let move = wrapAngle(-(targetAz - camAz))
        return SurfaceHint(side: Int32(best), moveAngle: move, cameraAzimuth: camAz, targetAzimuth: targetAz,
                           cameraElevation: camEl, targetElevation: targetEl, sideComplete: sides[best].completeFraction,
                           text: SurfaceMap.prompt(side: best, moveAngle: move))
    }

    /// "Move left to see the back" (|move| > 30°), else "Stay here: capture the front".
    static func prompt(side: Int, moveAngle: Float) -> StaticString {
        let here = abs(moveAngle) <= .pi / 6
        switch side {
        case 4: return "Move higher to see the top\0"
        case 3: return "Move lower to see the bottom\0"
        case 0: return here ? "Stay here: capture the front\0" : (moveAngle > 0 ? "Move left to see the front\0" : "Move right to see the front\0")
        case 1: return here ? "Stay here: capture the left side\0" : (moveAngle > 0 ? "Move left to see the left side\0" : "Move right to see the left side\0")
        case 2: return here ? "Stay here: capture the right side\0" : (moveAngle > 0 ? "Move left to see the right side\0" : "Move right to see the right side\0")
        default: return here ? "Stay here: capture the back\0" : (moveAngle > 0 ? "Move left to see the back\0" : "Move right to see the back\0")
        }
    }

    // MARK: Ray march (planner API)

    /// The voxel states (low 2 bits: `VoxelState`; x fastest) and the voxel → element table
    /// (−1: none) for a planner's inner loops, with the element normals brought up to date first.
    public func withVoxels<R>(_ body: (_ states: UnsafeBufferPointer<UInt8>, _ elementOfVoxel: UnsafeBufferPointer<Int32>) -> R) -> R {
        refreshNormals()
        return states.withUnsafeBufferPointer { st in index.withUnsafeBufferPointer { ix in body(st, ix) } }
    }

    /// What `march` found.
    public struct MarchResult: Sendable {
        /// The first occupied voxel on the ray (linear index), or nil.
        public var hitVoxel: Int?
        /// Distance along the ray to the hit voxel's entry (or to where the walk ended), metres.
        public var distance: Float
        /// Unknown voxels and frontier voxels crossed before the hit.
        public var unknown: Int
        public var frontier: Int
    }

    /// Walks the voxels a box-local ray crosses (Amanatides–Woo), from `origin` up to
    /// `maxDistance` metres or the first occupied voxel. `direction` need not be unit (it is
    /// normalised); a zero or non-finite ray gives an empty result.
    public func march(origin o: Vec3, direction dir: Vec3, maxDistance: Float) -> MarchResult {
        var result = MarchResult(hitVoxel: nil, distance: 0, unknown: 0, frontier: 0)
        let l = length(dir)
        guard l > 0, l.isFinite, o.x.isFinite, o.y.isFinite, o.z.isFinite, maxDistance.isFinite, maxDistance > 0 else { return result }
        let d = dir / l
        let g = (o - origin) / voxelSize
        let n = Vec3(Float(dims.x), Float(dims.y), Float(dims.z))
        var t0: Float = 0, t1 = maxDistance / voxelSize
        for a in 0..<3 {
            if abs(d[a]) < 1e-12 {
                if g[a] < 0 || g[a] >= n[a] { return result }
                continue
            }
            var ta = (0 - g[a]) / d[a], tb = (n[a] - g[a]) / d[a]
            if ta > tb { swap(&ta, &tb) }
            t0 = max(t0, ta); t1 = min(t1, tb)
        }
        guard t1 > t0 else { result.distance = maxDistance; return result }
        let p = g + d * (t0 + 1e-4)
        var c = SIMD3<Int>(min(dims.x - 1, max(0, Int(p.x))), min(dims.y - 1, max(0, Int(p.y))), min(dims.z - 1, max(0, Int(p.z))))
        var stepI = SIMD3<Int>(0, 0, 0), tMax = Vec3(.infinity, .infinity, .infinity), tDelta = Vec3(.infinity, .infinity, .infinity)
        for a in 0..<3 where abs(d[a]) >= 1e-12 {
            stepI[a] = d[a] > 0 ? 1 : -1
            let boundary = Float(c[a] + (d[a] > 0 ? 1 : 0))
            tMax[a] = t0 + (boundary - p[a]) / d[a]
            tDelta[a] = 1 / abs(d[a])
        }
        var t = t0
        var guardSteps = dims.x + dims.y + dims.z + 3
        while t <= t1 && guardSteps > 0 {
            guardSteps -= 1
            let i = index(c.x, c.y, c.z)
            switch states[i] & 3 {
            case VoxelState.occupied.rawValue:
                result.hitVoxel = i
                result.distance = t * voxelSize
                return result
            case 0:
                result.unknown += 1
                if isFrontier(c) { result.frontier += 1 }
            default: break
            }
            let a = tMax.x < tMax.y ? (tMax.x < tMax.z ? 0 : 2) : (tMax.y < tMax.z ? 1 : 2)
            t = tMax[a]
            tMax[a] += tDelta[a]
            c[a] += stepI[a]
            if c[a] < 0 || c[a] >= dims[a] { break }
        }
        result.distance = min(t, t1) * voxelSize
        return result
    }

    // MARK: Export

    /// The colour of an element by coverage: (1 − p, 1, p) · 255 with p the share of the four
    /// thresholds it meets (yellow: none, cyan: well covered), red (255, 0, 0) when no view saw it.
    public func coverageColor(_ e: SurfaceElement) -> SIMD3<UInt8> {
        guard e.views > 0 else { return SIMD3(255, 0, 0) }
        var met: Float = 0
        if Int(e.views) >= Int(options.minViews) { met += 1 }
        if e.spreadDeg >= options.minSpreadDeg { met += 1 }
        if e.bestIncidenceDeg <= options.maxIncidenceDeg { met += 1 }
        if e.bestPixelsPerCm >= options.minPixelsPerCm { met += 1 }
        let p = met / 4
        return SIMD3(UInt8((1 - p) * 255), 255, UInt8(p * 255))
    }

    /// The image colour of an element (the mean of its samples), nil when it has none.
    public func imageColor(_ e: SurfaceElement) -> SIMD3<UInt8>? {
        guard e.colorCount > 0 else { return nil }
        let c = Float(e.colorCount)
        return SIMD3(UInt8(min(255, max(0, (e.r / c).rounded()))), UInt8(min(255, max(0, (e.g / c).rounded()))),
                     UInt8(min(255, max(0, (e.b / c).rounded()))))
    }

    /// The observed surface as world points (`SurfacePoint`s, in element order). `imageColors`:
    /// only the elements with an image colour, coloured by it (the initial point cloud of a splat
    /// dataset); else every observed element, coloured by coverage.
    public func points(imageColors: Bool) -> [SurfacePoint] {
        refreshNormals()
        var rows: [SurfacePoint] = []
        for e in elements where fromDepth || e.views > 0 {
            let color: SIMD3<UInt8>
            if imageColors {
                guard let c = imageColor(e) else { continue }
                color = c
            } else {
                color = coverageColor(e)
            }
            rows.append(SurfacePoint(position: box.center + box.toWorld(direction: position(of: e)),
                                     normal: box.toWorld(direction: e.normal), color: color, views: UInt8(min(255, Int(e.views)))))
        }
        return rows
    }

    /// `points(imageColors:)` as a PLY file (`SurfacePLY.bytes`).
    public func plyBytes(imageColors: Bool) -> [UInt8] { SurfacePLY.bytes(points(imageColors: imageColors)) }

    /// Writes `plyBytes` to `path` atomically. - Throws: as `FileIO.writeAtomically`.
    public func writePLY(_ path: String, imageColors: Bool, overwrite: Bool) throws(CaptureKitError) {
        try SurfacePLY.write(points(imageColors: imageColors), to: path, overwrite: overwrite)
    }

    /// World positions and image colours of the measured surface's elements that have one (the
    /// points of a splat dataset's `sparse_pc.ply` and COLMAP `points3D.txt`); none in face mode.
    public func coloredPoints() -> [(position: Vec3, color: SIMD3<UInt8>)] {
        guard fromDepth else { return [] }
        return points(imageColors: true).map { ($0.position, $0.color) }
    }
}
