import Glibc
import Testing
@testable import CaptureKitCore

/// The facings of a surface element (`Facing`, `SurfaceElement.addFacing`, `SurfaceMap.facingShare`).
@Suite struct SurfaceFacingTests {
    /// Every direction survives its 32-bit code within 0.05 degrees (checked in doubles), the
    /// axes and the octahedron's fold (z < 0, u or v = 0) included.
    @Test func codesKeepTheDirection() {
        var rng = SplitMix64(seed: 77)
        var worst = 0.0
        var cases = (0..<20_000).map { _ in rng.unitVector() }
        cases += [Vec3(1, 0, 0), Vec3(-1, 0, 0), Vec3(0, 1, 0), Vec3(0, -1, 0), Vec3(0, 0, 1), Vec3(0, 0, -1),
                  Vec3(0.6, 0, -0.8), Vec3(0, -0.6, -0.8), Vec3(-0.6, 0.8, 0)]
        for n in cases {
            let d = Facing.decode(Facing.encode(n))
            let c = Double(n.x) * Double(d.x) + Double(n.y) * Double(d.y) + Double(n.z) * Double(d.z)
            worst = max(worst, acos(min(1, c)) * 180 / Double.pi)
        }
        #expect(worst < 0.05, "worst \(worst) degrees")
    }

    /// Normals within 45 degrees of the first facing join it (its mean follows them); one further
    /// off makes the second facing; with two, a normal joins the nearer.
    @Test func normalsGroupIntoTwoFacings() {
        var e = SurfaceElement(voxel: 0)
        let a = Vec3(0, 0, 1), b = Vec3(1, 0, 0)
        e.addFacing(a)
        e.addFacing(normalize3(Vec3(0.3, 0, 1)))  // 16.7 degrees off: joins
        #expect(e.facingCountA == 2 && e.facingCountB == 0)
        let meanA = Facing.decode(e.facingA)
        #expect(abs(dot(meanA, normalize3(Vec3(0.15, 0, 1))) - 1) < 1e-3, "the mean of the two: \(meanA)")
        e.addFacing(b)  // 81 degrees off the first facing's mean: the second facing
        #expect(e.facingCountA == 2 && e.facingCountB == 1)
        e.addFacing(normalize3(Vec3(1, 0, 0.5)))  // 27 degrees from b, 55 from a's mean: joins b
        e.addFacing(normalize3(Vec3(0.1, 1, 0.2)))  // over 45 degrees from both: joins the nearer, a (cosines 0.21 and 0.14)
        #expect(e.facingCountB == 2)
        #expect(e.facingCountA == 3)
        for _ in 0..<300 { e.addFacing(a) }
        #expect(e.facingCountA == 255, "the count stops at 255")
    }

    func normalize3(_ v: Vec3) -> Vec3 { v / length(v) }

    /// The default map's worst case stays under 32 MiB with the facings: 128^3 voxels (a state
    /// byte and an element index each), `maxElements` elements with their projection and reach
    /// bits, the 16 kept depth frames and the last one (256 x 192 LiDAR, with confidence).
    @Test func theDefaultMapsWorstCaseStaysUnder32MiB() {
        #expect(MemoryLayout<SurfaceElement>.stride == 96)
        let voxels = 128 * 128 * 128
        let elements = SurfaceMap.maxElements * (MemoryLayout<SurfaceElement>.stride + MemoryLayout<SIMD3<Float>>.stride + 1)
        let frames = 16 * 256 * 192 * 4 + 256 * 192 * 5
        // A pass that judges reach holds `RingReach`'s blocks too: a byte and 64 bits per 4³ voxels.
        let blocks = (voxels / 64) * (1 + MemoryLayout<UInt64>.stride)
        let bytes = 5 * voxels + elements + frames + Int(SurfaceMap.trackedViews) * MemoryLayout<Vec3>.stride + blocks
        #expect(bytes < 32 << 20, "\(bytes) bytes")
    }

    /// The views that counted an element are kept by stamp for the first 64 views, no further.
    @Test func countedViewsAreTrackedForTheFirst64() {
        var e = SurfaceElement(voxel: 0)
        for s: UInt32 in [1, 2, 32, 33, 64, 65, 1000, 0] { e.noteCounted(stamp: s) }
        #expect(e.countedLow == (1 | 2 | 1 << 31))
        #expect(e.countedHigh == (1 | 1 << 31))
    }
}

/// `SurfaceMap.facingShare`: the share of an element's facings its counting views cover well
/// (default thresholds: 3 views, 15 degrees of spread, 65 degrees of incidence, 2 px/cm).
@Suite struct SurfaceFacingShareTests {
    /// Cameras 1 m from the element at the origin, at these azimuths (degrees from +z towards +x)
    /// and 10 degrees up.
    func eyes(_ azimuths: [Float]) -> [Vec3] {
        azimuths.map { a in
            let r = a * .pi / 180, e: Float = 10 * .pi / 180
            return Vec3(sin(r) * cos(e), sin(e), cos(r) * cos(e))
        }
    }

    /// An element counted by the views 1...n, with facings `a` (measured 3 times) and, unless nil,
    /// `b` (measured `bCount` times).
    func element(views n: Int, a: Vec3, b: Vec3?, bCount: UInt8 = 2) -> SurfaceElement {
        var e = SurfaceElement(voxel: 0)
        e.views = UInt16(n)
        e.bestPixelsPerCm = 10
        for s in 1...n { e.noteCounted(stamp: UInt32(s)) }
        e.facingA = Facing.encode(a); e.facingCountA = 3
        if let b { e.facingB = Facing.encode(b); e.facingCountB = bCount }
        return e
    }

    func share(_ e: SurfaceElement, _ eyes: [Vec3]) throws -> (well: Float, kept: Float) {
        let map = try SurfaceMap(box: try Box(center: Vec3(0, 0, 0), size: Vec3(1, 1, 1), yaw: 0))
        let judge = SurfaceMap.FacingJudge(eyes: eyes, rings: nil, options: map.options)
        return map.facingShare(e, at: Vec3(0, 0, 0), judge: judge)
    }

    @Test func aFacingTheViewsDoNotCoverCountsNothing() throws {
        // Facing a (+z) faces all four views; facing b (+x) only the two at +20 and +40 degrees
        // (cosines 0.33 and 0.63): two views, fewer than 3.
        let four = eyes([-40, -20, 20, 40])
        let turn = element(views: 4, a: Vec3(0, 0, 1), b: Vec3(1, 0, 0))
        let r = try share(turn, four)
        #expect(r.well == 0.5 && r.kept == 0.5, "\(r)")  // no ring views: b is out of reach too
        // A fifth view at +70 degrees gives b three views, 50 degrees apart: both facings covered.
        let five = eyes([-40, -20, 20, 40, 70])
        #expect(try share(element(views: 5, a: Vec3(0, 0, 1), b: Vec3(1, 0, 0)), five) == (1, 1))
        // Measured by one view only, b is not a facing (noise, most often): a alone decides.
        #expect(try share(element(views: 4, a: Vec3(0, 0, 1), b: Vec3(1, 0, 0), bCount: 1), four) == (1, 1))
    }

    @Test func oneFacingIsJudgedToItsOwnNormal() throws {
        let four = eyes([-40, -20, 20, 40])
        #expect(try share(element(views: 4, a: Vec3(0, 0, 1), b: nil), four) == (1, 1))
        // A facing turned 80 degrees towards -x: only the views at -40 and -20 degrees face it
        // (cosines 0.76 and 0.49); two views, fewer than 3.
        let away = Vec3(-sin(Float(80) * .pi / 180), 0, cos(Float(80) * .pi / 180))
        #expect(try share(element(views: 4, a: away, b: nil), four) == (0, 0))
    }

    @Test func viewsBeyondTheTrackedOnesLeaveTheElementWhole() throws {
        // Counted by a 65th view, not tracked: the element's own test stands.
        var e = element(views: 4, a: Vec3(0, 0, 1), b: Vec3(1, 0, 0))
        e.views = 5
        #expect(try share(e, eyes([-40, -20, 20, 40])) == (1, 1))
    }
}
