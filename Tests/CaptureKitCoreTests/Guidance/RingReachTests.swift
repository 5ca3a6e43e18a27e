import Glibc
import Testing
@testable import CaptureKitCore

/// `RingReach`: its march steps over empty blocks, so it must reach the verdict a march over every
/// sample reaches, on every ray.
@Suite struct RingReachTests {
    /// A random grid: a few planes and sphere shells of occupied voxels (surface), scattered
    /// occupied voxels (noise), the rest unknown or free; some bytes carry the flag bits above
    /// the state (bit 2, as `frontier` marks), which the state reads must mask off.
    static func grid(_ rng: inout SplitMix64) -> (dims: SIMD3<Int>, states: [UInt8]) {
        let dims = SIMD3(Int(rng.next() % 33) + 5, Int(rng.next() % 33) + 5, Int(rng.next() % 33) + 5)
        var states = [UInt8](repeating: 0, count: dims.x * dims.y * dims.z)
        let ext = Vec3(Float(dims.x), Float(dims.y), Float(dims.z))
        var planes: [(Vec3, Float)] = [], spheres: [(Vec3, Float)] = []
        for _ in 0..<Int(rng.next() % 3) {
            let n = rng.unitVector()
            planes.append((n, dot(n, Vec3(rng.float(0...ext.x), rng.float(0...ext.y), rng.float(0...ext.z)))))
        }
        for _ in 0..<Int(rng.next() % 3) {
            spheres.append((Vec3(rng.float(0...ext.x), rng.float(0...ext.y), rng.float(0...ext.z)), rng.float(2...12)))
        }
        let noise = rng.float(0...0.01)
        for z in 0..<dims.z {
            for y in 0..<dims.y {
                for x in 0..<dims.x {
                    let c = Vec3(Float(x) + 0.5, Float(y) + 0.5, Float(z) + 0.5)
                    var occupied = rng.float(0...1) < noise
                    for (n, d) in planes where abs(dot(n, c) - d) < 0.6 { occupied = true }
                    for (o, r) in spheres where abs(length(c - o) - r) < 0.6 { occupied = true }
                    let flag: UInt8 = rng.next() % 5 == 0 ? 4 : 0
                    states[(z * dims.y + y) * dims.x + x] = (occupied ? VoxelState.occupied.rawValue : UInt8(rng.next() % 2)) | flag
                }
            }
        }
        return (dims, states)
    }

    /// The march over every sample, written out: g0 + dir · (3 + 0.7 k), floored, until the grid
    /// is left (clear) or an occupied voxel is met (not), at most `RingReach.limit` samples.
    static func referenceClear(_ states: [UInt8], _ dims: SIMD3<Int>, _ g0: Vec3, _ dir: Vec3) -> Bool {
        for k in 0..<RingReach.limit(dims) {
            let q = g0 + dir * (RingReach.skip + RingReach.step * Float(k))
            let x = q.x.rounded(.down), y = q.y.rounded(.down), z = q.z.rounded(.down)
            guard x >= 0, y >= 0, z >= 0, x < Float(dims.x), y < Float(dims.y), z < Float(dims.z) else { return true }
            if states[(Int(z) * dims.y + Int(y)) * dims.x + Int(x)] & 3 == VoxelState.occupied.rawValue { return false }
        }
        return true
    }

    static func reach(_ states: [UInt8], _ dims: SIMD3<Int>, eyes: [Vec3] = [], options: SurfaceOptions = SurfaceOptions()) -> RingReach {
        states.withUnsafeBufferPointer { RingReach(eyes: eyes, options: options, voxel: 1, origin: Vec3(0, 0, 0), dims: dims, states: $0) }
    }

    /// Each block's clearance is the Chebyshev distance, in blocks, to the nearest block that
    /// holds an occupied voxel (capped), counted here over every pair of blocks.
    @Test func clearanceIsTheBlockDistance() {
        var rng = SplitMix64(seed: 5)
        var near = 0, capped = 0
        for _ in 0..<12 {
            let (dims, states) = RingReachTests.grid(&rng)
            let r = RingReachTests.reach(states, dims)
            let bd = r.blockDims
            #expect(bd == SIMD3((dims.x + 3) / 4, (dims.y + 3) / 4, (dims.z + 3) / 4))
            var full: [SIMD3<Int>] = []
            for z in 0..<dims.z {
                for y in 0..<dims.y {
                    for x in 0..<dims.x where states[(z * dims.y + y) * dims.x + x] & 3 == VoxelState.occupied.rawValue {
                        full.append(SIMD3(x / 4, y / 4, z / 4))
                    }
                }
            }
            for bz in 0..<bd.z {
                for by in 0..<bd.y {
                    for bx in 0..<bd.x {
                        var d = Int(RingReach.farBlocks)
                        for f in full { d = min(d, max(abs(f.x - bx), abs(f.y - by), abs(f.z - bz))) }
                        let got = Int(r.clearance[(bz * bd.y + by) * bd.x + bx])
                        #expect(got == d, "block (\(bx), \(by), \(bz)) of \(bd): \(got), expected \(d)")
                        if d > 0 && d < Int(RingReach.farBlocks) { near += 1 }
                        if d == Int(RingReach.farBlocks) { capped += 1 }
                    }
                }
            }
        }
        #expect(near > 100, "distances between 0 and the cap were checked: \(near)")
        _ = capped
    }

    /// On 40 random grids, 600 rays each (from inside the grid and up to 2 voxels outside it, in
    /// every direction, the axes and diagonals among them), and 400 that start 2 voxels off an
    /// occupied voxel, as `judgeReach`'s marches start off an element (the first samples then fall
    /// in blocks that hold surface, and the ray steps out of them into empty ones): the same
    /// verdict as the march over every sample, ray for ray.
    @Test func marchAgreesWithEverySample() {
        var rng = SplitMix64(seed: 11)
        var clear = 0, blocked = 0, mismatches: [String] = []
        let special = [Vec3(1, 0, 0), Vec3(-1, 0, 0), Vec3(0, 1, 0), Vec3(0, -1, 0), Vec3(0, 0, 1), Vec3(0, 0, -1),
                       Vec3(1, 1, 1) / Float(3).squareRoot(), Vec3(-1, 1, -1) / Float(3).squareRoot(), Vec3(1, -1, 0) / Float(2).squareRoot()]
        for _ in 0..<40 {
            let (dims, states) = RingReachTests.grid(&rng)
            let r = RingReachTests.reach(states, dims)
            let surface = states.indices.filter { states[$0] & 3 == VoxelState.occupied.rawValue }
            for i in 0..<1_000 {
                var g0 = Vec3(rng.float(-2...Float(dims.x) + 2), rng.float(-2...Float(dims.y) + 2), rng.float(-2...Float(dims.z) + 2))
                let dir = i < special.count ? special[i] : rng.unitVector()
                if i >= 600 && !surface.isEmpty {
                    let v = surface[Int(rng.next() % UInt64(surface.count))]
                    let c = Vec3(Float(v % dims.x), Float(v / dims.x % dims.y), Float(v / (dims.x * dims.y))) + 0.5
                    g0 = c + dir * 2
                }
                let want = RingReachTests.referenceClear(states, dims, g0, dir)
                let got = r.isClear(from: g0, direction: dir)
                if want { clear += 1 } else { blocked += 1 }
                if got != want && mismatches.count < 5 { mismatches.append("dims \(dims) g0 \(g0) dir \(dir): \(got), expected \(want)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(clear > 2_000 && blocked > 2_000, "both verdicts are common: \(clear) clear, \(blocked) blocked")
    }

    /// `covers` counts the eyes that face the surface within the incidence limit and whose march
    /// is clear, and asks for `minViews` of them with the spread (written out here).
    @Test func coversCountsClearFacingEyes() {
        var rng = SplitMix64(seed: 23)
        var yes = 0, no = 0
        for g in 0..<20 {
            let (dims, states) = RingReachTests.grid(&rng)
            let centre = Vec3(Float(dims.x), Float(dims.y), Float(dims.z)) / 2
            let radius = 2.3 * length(centre)
            var eyes: [Vec3] = []
            for e in 0..<3 {
                for a in 0..<16 {
                    eyes.append(centre + SurfaceMap.candidatePosition(azimuth: Float(a) * 2 * .pi / 16, elevation: Float(5 + 27 * e) * .pi / 180, distance: radius))
                }
            }
            var options = SurfaceOptions()
            options.minViews = UInt32(1 + g % 4)
            options.minSpreadDeg = Float(g % 3) * 15
            options.maxIncidenceDeg = 50 + Float(g % 2) * 20
            let r = RingReachTests.reach(states, dims, eyes: eyes, options: options)
            for _ in 0..<100 {
                let p = Vec3(rng.float(0...Float(dims.x)), rng.float(0...Float(dims.y)), rng.float(0...Float(dims.z)))
                let n = rng.unitVector()
                var count = 0, sum = Vec3(0, 0, 0), want = false
                for eye in eyes {
                    let d = eye - p
                    let dir = d / length(d)  // as `covers` computes it: the march is the same ray
                    guard Double(dot(dir, n)) >= cos(Double(options.maxIncidenceDeg) * .pi / 180) - 1e-6,
                          RingReachTests.referenceClear(states, dims, p + n * 2, dir) else { continue }
                    count += 1; sum += dir
                    let spreadDeg = 2 * acos(min(1, Double(length(sum)) / Double(count))) * 180 / .pi
                    if count >= Int(options.minViews) && (count == 1 ? options.minSpreadDeg == 0 : spreadDeg >= Double(options.minSpreadDeg) - 1e-3) {
                        want = true
                        break
                    }
                }
                #expect(r.covers(at: p, normal: n, facing: n) == want, "grid \(g) p \(p) n \(n)")
                if want { yes += 1 } else { no += 1 }
            }
        }
        #expect(yes > 200 && no > 200, "both verdicts are common: \(yes) yes, \(no) no")
    }
}
