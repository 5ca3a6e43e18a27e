/// Options of `SurfaceMap` (`ck_surface_options`).
public struct SurfaceOptions: Equatable, Sendable {
    /// Voxel edge, metres; 0 = the box's longest edge / 128. A size that would need more than
    /// `SurfaceMap.maxVoxels` voxels is coarsened to fit.
    public var voxelSize: Float = 0
    /// Depth beyond this is ignored, metres; 0 = no limit.
    public var maxDepth: Float = 5
    /// Pixels whose confidence (when a confidence map is given) is below this are ignored
    /// (ARKit: 0 low, 1 medium, 2 high).
    public var minConfidence: UInt32 = 1
    /// "Well covered": at least `minViews` captured views, their directions spread at least
    /// `minSpreadDeg`, the best incidence at most `maxIncidenceDeg` and the best resolution at
    /// least `minPixelsPerCm`.
    public var minViews: UInt32 = 3
    public var minSpreadDeg: Float = 15
    public var maxIncidenceDeg: Float = 65
    public var minPixelsPerCm: Float = 2
    /// A side (and the surface) is complete when this fraction of its estimated surface is well covered.
    public var goalFraction: Float = 0.9
    /// Sides counted for completion and the overall figures, bit f = face f (default: all but the bottom).
    public var sideMask: UInt32 = 0x37
    /// Without depth, each box face stands in for the surface as n × n cells.
    public var faceCells: UInt32 = 16

    public init() {}

    /// - Throws: `invalidArgument` naming the C field.
    public func validate() throws(CaptureKitError) {
        guard voxelSize.isFinite, voxelSize == 0 || (voxelSize >= 0.0005 && voxelSize <= 10) else {
            throw .invalidArgument("voxel_size = \(voxelSize) must be 0 (automatic) or within [0.0005, 10] m")
        }
        guard maxDepth.isFinite, maxDepth >= 0, maxDepth <= 1000 else {
            throw .invalidArgument("max_depth = \(maxDepth) must be within [0, 1000] m (0 = no limit)")
        }
        guard minConfidence <= 255 else { throw .invalidArgument("min_confidence = \(minConfidence) is out of range [0, 255]") }
        guard minViews >= 1, minViews <= 65535 else { throw .invalidArgument("min_views = \(minViews) is out of range [1, 65535]") }
        guard minSpreadDeg.isFinite, minSpreadDeg >= 0, minSpreadDeg <= 180 else {
            throw .invalidArgument("min_spread_deg = \(minSpreadDeg) is out of range [0, 180]")
        }
        guard maxIncidenceDeg.isFinite, maxIncidenceDeg > 0, maxIncidenceDeg <= 90 else {
            throw .invalidArgument("max_incidence_deg = \(maxIncidenceDeg) is out of range (0, 90]")
        }
        guard minPixelsPerCm.isFinite, minPixelsPerCm >= 0, minPixelsPerCm <= 10000 else {
            throw .invalidArgument("min_px_per_cm = \(minPixelsPerCm) is out of range [0, 10000]")
        }
        guard goalFraction.isFinite, goalFraction > 0, goalFraction <= 1 else {
            throw .invalidArgument("goal_fraction = \(goalFraction) is out of range (0, 1]")
        }
        guard sideMask != 0, sideMask & ~0x3F == 0 else {
            throw .invalidArgument("side_mask 0x\(String(sideMask, radix: 16)) must be non-zero with bits 0...5 only")
        }
        guard faceCells >= 1, faceCells <= 256 else { throw .invalidArgument("face_cells = \(faceCells) is out of range [1, 256]") }
    }
}

/// Figures of one side, or of all the sides of the side mask (`ck_surface_side`, `ck_surface_figures`).
public struct SurfaceSideFigures: Equatable, Sendable {
    /// Surface elements observed (depth mode: hit by depth; face mode: seen by a view).
    public var observed: UInt32 = 0
    /// Of those, well covered.
    public var wellCovered: UInt32 = 0
    /// Unseen surface estimated: frontier voxels (depth mode) or cells no view saw (face mode).
    public var frontier: UInt32 = 0
    /// The same as areas, in voxel faces (voxelSize²; face mode: cells): each element counts the
    /// surface it holds (`SurfaceMap.elementAreas`), the unseen surface the mean element's.
    public var observedArea: Float = 0
    public var wellArea: Float = 0
    public var frontierArea: Float = 0
    /// wellArea / observedArea (0 when nothing is observed): the well-covered share of the
    /// observed surface's area.
    public var wellFraction: Float = 0
    /// wellArea / (observedArea + frontierArea): the well-covered share of the estimated surface.
    public var completeFraction: Float = 0
    public var completed = false

    /// Adds another side's counts and areas (the fractions are `SurfaceMap.finish`'s).
    mutating func add(_ o: SurfaceSideFigures) {
        observed &+= o.observed; wellCovered &+= o.wellCovered; frontier &+= o.frontier
        observedArea += o.observedArea; wellArea += o.wellArea; frontierArea += o.frontierArea
    }
}

/// Overall figures (`ck_surface_figures`).
public struct SurfaceFigures: Equatable, Sendable {
    /// true once depth was fused (the measured surface); false: the box faces stand in.
    public var fromDepth = false
    public var all = SurfaceSideFigures()
    public var framesFused: UInt32 = 0
    public var views: UInt32 = 0
    public var sidesCompleted: UInt32 = 0
    /// Surface elements not stored because the element table was full.
    public var elementsDropped: UInt32 = 0
    public var voxelSize: Float = 0
    /// Bytes held by the map (voxels, elements, scratch).
    public var memoryBytes: UInt64 = 0
}

/// Where to go next (`ck_surface_hint`).
public struct SurfaceHint: Sendable {
    /// The side to capture next (0...5), or −1 when the surface is complete (or nothing is known).
    public var side: Int32
    /// Angle to walk around the object, radians in (−π, π]: positive = to the operator's left
    /// while facing the object (the `CoverageHint.moveAngle` convention).
    public var moveAngle: Float
    public var cameraAzimuth: Float
    public var targetAzimuth: Float
    public var cameraElevation: Float
    public var targetElevation: Float
    /// The target side's complete fraction.
    public var sideComplete: Float
    /// The prompt ("Move left to see the back").
    public var text: StaticString
}
