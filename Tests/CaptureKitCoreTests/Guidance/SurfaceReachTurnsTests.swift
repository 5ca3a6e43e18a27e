import Glibc
import Testing
@testable import CaptureKitCore

/// `SurfaceMap.judgeReach`: an element is judged when first seen, then again in turns, a quarter
/// of them a view (`reachTurns`), so a verdict that surface seen since changes shows within 4
/// captured views.
@Suite struct SurfaceReachTurnsTests {
    static let k = (try? Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192))
    /// The camera 3 m out on +z, looking down −z at the box centre.
    static let pose = Pose(x: Vec3(1, 0, 0), y: Vec3(0, 1, 0), z: Vec3(0, 0, 1), t: Vec3(0, 0, 3))

    /// z-depth of a square plate facing the camera at z = `plate` (|x|, |y| <= `half`): our own
    /// ray cast; 0 where a ray misses it.
    static func depth(plate z: Float, half: Float, _ k: Intrinsics) -> [Float] {
        var d = [Float](repeating: 0, count: Int(k.width) * Int(k.height))
        let dist = 3 - z
        for v in 0..<Int(k.height) {
            for u in 0..<Int(k.width) {
                let x = (Float(u) + 0.5 - k.cx) / k.fx * dist, y = -(Float(v) + 0.5 - k.cy) / k.fy * dist
                if abs(x) <= half && abs(y) <= half { d[v * Int(k.width) + u] = dist }
            }
        }
        return d
    }

    func capture(_ map: SurfaceMap, _ frame: [Float], _ k: Intrinsics, at t: Double) {
        frame.withUnsafeBufferPointer { map.fuse(metres: $0, confidence: nil, intrinsics: k, pose: SurfaceReachTurnsTests.pose) }
        map.addView(pose: SurfaceReachTurnsTests.pose, intrinsics: k, image: nil, timestamp: t)
        _ = map.figures  // the first read after a view judges, if the view's event check did not
    }

    /// A small plate (0.2 m) at z = −0.5, seen from the front: every ring view in front of it
    /// sees it, so it is in reach. Then a wall across the whole box at z = −0.3, 0.2 m in front
    /// of it: every ring view within the incidence limit (65 degrees) now looks at it through
    /// the wall. The plate's elements (not well covered: one view, no spread) are judged again a
    /// quarter at a time: about a quarter are out of reach after the first view of the wall, all
    /// after the fourth.
    @Test func aHiddenPlateLeavesReachWithinFourViews() throws {
        let k = try #require(SurfaceReachTurnsTests.k)
        let map = try SurfaceMap(box: try Box(center: Vec3(0, 0, 0), size: Vec3(2, 2, 2), yaw: 0))
        capture(map, SurfaceReachTurnsTests.depth(plate: -0.5, half: 0.1, k), k, at: 1)
        let plate = map.elements.indices.filter { map.elements[$0].normal.z > 0.9 }
        #expect(plate.count > 100, "the plate's elements: \(plate.count)")
        #expect(plate.allSatisfy { !map.isOutOfReach($0) }, "in front of nothing, the plate is in reach")
        let plateVoxels = Set(plate.map { map.elements[$0].voxel })
        let wall = SurfaceReachTurnsTests.depth(plate: -0.3, half: 5, k)
        var shares: [Double] = []
        for view in 1...4 {
            capture(map, wall, k, at: Double(1 + view))
            let now = map.elements.indices.filter { plateVoxels.contains(map.elements[$0].voxel) }
            #expect(now.count == plate.count, "the hidden plate stays")
            shares.append(Double(now.filter { map.isOutOfReach($0) }.count) / Double(max(1, now.count)))
        }
        #expect(shares[0] > 0.1 && shares[0] < 0.45, "a quarter at the first view: \(shares)")
        #expect(shares[1] > shares[0] && shares[2] > shares[1], "more at each view: \(shares)")
        #expect(shares[3] == 1, "all by the fourth view: \(shares)")
    }
}
