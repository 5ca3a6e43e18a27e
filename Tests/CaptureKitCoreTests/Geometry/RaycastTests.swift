import Foundation
import Testing
@testable import CaptureKitCore

/// Independent brute force: intersect the ray with each face rectangle; the nearest t ≥ 0 wins.
func bruteForce(_ ray: Ray, _ box: Box) -> (face: Int, t: Double)? {
    let o = SIMD3<Double>(ray.origin), d = SIMD3<Double>(ray.direction)
    let c = SIMD3<Double>(box.center), h = SIMD3<Double>(box.halfSize)
    let cy = cos(Double(box.yaw)), sy = sin(Double(box.yaw))
    func local(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(cy * v.x - sy * v.z, v.y, sy * v.x + cy * v.z) }
    let lo = local(o - c), ld = local(d)
    var best: (Int, Double)? = nil
    for f in 0..<6 {
        let n = SIMD3<Double>(Box.faceNormals[f])
        let axis = n.x != 0 ? 0 : (n.y != 0 ? 1 : 2)
        let denom = ld[axis]
        if denom == 0 { continue }
        let t = (n[axis] * h[axis] - lo[axis]) / denom
        if t < 0 { continue }
        let p = lo + ld * t
        var inRect = true
        for j in 0..<3 where j != axis { if abs(p[j]) > h[j] * (1 + 1e-9) { inRect = false } }
        if inRect, best == nil || t < best!.1 { best = (f, t) }  // trap-ok: test code
    }
    return best
}

@Suite struct RaycastTests {
    @Test func hitsLieOnTheReportedFaceAndNoFaceIsNearer() throws {
        var rng = SplitMix64(seed: 30)
        var hits = 0, inside = 0
        for i in 0..<20000 {
            let box = rng.box(floor: false)
            let startInside = i % 5 == 0
            let origin = startInside ? box.center + box.toWorld(direction: rng.vec(-0.9...0.9) * box.halfSize) : rng.vec(-8...8)
            let target = box.center + box.toWorld(direction: rng.vec(-1.3...1.3) * box.halfSize)
            guard length(target - origin) > 1e-3 else { continue }
            let ray = try Ray(origin: origin, direction: target - origin)
            let hit = ray.intersect(box: box)
            let brute = bruteForce(ray, box)
            #expect((hit == nil) == (brute == nil) || isGrazing(ray, box), "case \(i): \(String(describing: hit)) vs \(String(describing: brute))")
            guard let hit, let brute else { continue }
            hits += 1
            if hit.inside { inside += 1 }
            #expect(hit.inside == box.contains(origin) || isGrazing(ray, box), "case \(i)")
            // On the reported face's plane within 1e-5 m, inside its rectangle.
            let l = box.toLocal(direction: hit.point - box.center)
            let n = Box.faceNormals[Int(hit.face)]
            let axis = n.x != 0 ? 0 : (n.y != 0 ? 1 : 2)
            #expect(abs(l[axis] - n[axis] * box.halfSize[axis]) < 1e-5, "case \(i): point off face \(hit.face)")
            for j in 0..<3 where j != axis { #expect(abs(l[j]) <= box.halfSize[j] + 1e-5, "case \(i)") }
            // No face nearer.
            #expect(abs(Double(hit.distance) - brute.t) <= 1e-5 * max(1, brute.t), "case \(i): \(hit.distance) vs \(brute.t)")
            #expect(Int(hit.face) == brute.face || isGrazing(ray, box), "case \(i): face \(hit.face) vs \(brute.face)")
        }
        #expect(hits > 10000 && inside > 3000)
    }

    /// True if nudging the ray's direction by ~1e-5 changes the brute-force face: the ray passes
    /// within rounding of an edge or a corner.
    func isGrazing(_ ray: Ray, _ box: Box) -> Bool {
        let base = bruteForce(ray, box)?.face
        for dv in [Vec3(1e-5, 0, 0), Vec3(-1e-5, 0, 0), Vec3(0, 1e-5, 0), Vec3(0, -1e-5, 0), Vec3(0, 0, 1e-5), Vec3(0, 0, -1e-5)] {
            guard let r = try? Ray(origin: ray.origin, direction: ray.direction + dv) else { continue }
            if bruteForce(r, box)?.face != base { return true }
        }
        return false
    }

    @Test func degenerateCasesHaveDefinedAnswers() throws {
        let box = try Box(center: .zero, size: Vec3(2, 2, 2), yaw: 0)
        // Ray lying in the top face's plane: the closed box is hit, entering through the left face.
        let inPlane = try #require(try Ray(origin: Vec3(-5, 1, 0), direction: Vec3(1, 0, 0)).intersect(box: box))
        #expect(inPlane.face == 1 && close(inPlane.distance, 4, 1e-6) && !inPlane.inside)
        // Touching only an edge (x = −1, y = 1): a hit, face left (the tie goes to the lower index).
        let edge = try #require(try Ray(origin: Vec3(-2, 0, 0), direction: Vec3(1, 1, 0)).intersect(box: box))
        #expect(edge.face == 1 && close(edge.distance, Float(2).squareRoot(), 1e-6))
        // Touching only a corner (−1, 1, −1): front (0) beats left (1).
        let corner = try #require(try Ray(origin: Vec3(-2, 0, -2), direction: Vec3(1, 1, 1)).intersect(box: box))
        #expect(corner.face == 0 && close(corner.distance, Float(3).squareRoot(), 1e-6))
        #expect(close(corner.point, Vec3(-1, 1, -1), 1e-6))
        // Passing just outside the edge: a miss.
        #expect(try Ray(origin: Vec3(-2, 0.001, 0), direction: Vec3(1, 1, 0)).intersect(box: box) == nil)
        // Camera inside: the exit face, flagged.
        let exit = try #require(try Ray(origin: Vec3(0.5, 0, 0), direction: Vec3(0, 0, 1)).intersect(box: box))
        #expect(exit.inside && exit.face == 5 && close(exit.distance, 1, 1e-6))
        // On a face, looking out: inside, distance 0.
        let onFace = try #require(try Ray(origin: Vec3(1, 0, 0), direction: Vec3(1, 0, 0)).intersect(box: box))
        #expect(onFace.inside && onFace.face == 2 && onFace.distance == 0)
        // Box behind the camera: a miss.
        #expect(try Ray(origin: Vec3(0, 0, 5), direction: Vec3(0, 0, 1)).intersect(box: box) == nil)
        // Zero direction: invalid.
        #expect(throws: CaptureKitError.self) { try Ray(origin: .zero, direction: .zero) }
        #expect(throws: CaptureKitError.self) { try Ray(origin: .zero, direction: Vec3(.nan, 0, 1)) }
        // Parallel to a plane: a miss; the plane behind: a miss.
        let r = try Ray(origin: Vec3(0, 1, 0), direction: Vec3(1, 0, 0))
        #expect(try r.intersect(floorY: 0) == nil)
        #expect(try r.intersect(floorY: 1) == nil)  // lying in the plane
        #expect(try Ray(origin: Vec3(0, 1, 0), direction: Vec3(0, 1, 0)).intersect(floorY: 0) == nil)
        let down = try #require(try Ray(origin: Vec3(0, 1, 0), direction: Vec3(1, -1, 0)).intersect(floorY: -1))
        #expect(close(down.point, Vec3(2, -1, 0), 1e-6) && close(down.distance, Float(8).squareRoot(), 1e-6) && down.face == -1)
        #expect(throws: CaptureKitError.self) { try r.intersect(planePoint: .zero, normal: .zero) }
        // A tilted plane, either side.
        let tilted = try #require(try Ray(origin: Vec3(0, 0, 0), direction: Vec3(0, 0, -1)).intersect(planePoint: Vec3(0, 0, -3), normal: Vec3(0, 1, 1)))
        #expect(close(tilted.distance, 3, 1e-6))
    }

    @Test func pixelRayFollowsTheConvention() throws {
        let k = try Intrinsics(fx: 200, fy: 100, cx: 128, cy: 96, width: 256, height: 192)
        let pose = try Pose(rotation: Quaternion(angle: Float.pi / 2, axis: Vec3(0, 1, 0)), translation: Vec3(1, 2, 3))
        let centre = try Ray(pixelU: 128, v: 96, pose: pose, intrinsics: k)
        #expect(centre.origin == Vec3(1, 2, 3))
        #expect(close(centre.direction, Vec3(-1, 0, 0), 1e-6))  // camera turned left looks down −x
        // 100 px below the centre with fy 100: 45° down.
        let below = try Ray(pixelU: 128, v: 196, pose: .init(x: Vec3(1, 0, 0), y: Vec3(0, 1, 0), z: Vec3(0, 0, 1), t: .zero), intrinsics: k)
        #expect(close(below.direction, Vec3(0, -1, -1) / Float(2).squareRoot(), 1e-6))
    }
}

@Suite struct RaycastBatchTests {
    struct Scene { var pose: Pose; var k: Intrinsics; var box: Box }

    func scenes(_ count: Int, seed: UInt64, inside: Bool = false) throws -> [Scene] {
        var rng = SplitMix64(seed: seed)
        var out: [Scene] = []
        for _ in 0..<count {
            let box = rng.box(floor: rng.next() % 2 == 0)
            let eye: Vec3 = inside ? box.center + box.toWorld(direction: rng.vec(-0.8...0.8) * box.halfSize)
                                   : box.center + rng.unitVector() * rng.float(1.5...6) * box.size.max()
            let aim = box.center + rng.vec(-0.5...0.5) * box.size.min()
            var pose = lookAt(eye: eye, target: aim)
            if inside { pose = try Pose(rotation: rng.quaternion(), translation: eye) }
            let w = UInt32(8 + rng.next() % 60), h = UInt32(6 + rng.next() % 45)
            let k = try Intrinsics(fx: rng.float(20...80), fy: rng.float(20...80), cx: Float(w) / 2 + rng.float(-2...2),
                                   cy: Float(h) / 2 + rng.float(-2...2), width: w, height: h)
            out.append(Scene(pose: pose, k: k, box: box))
        }
        return out
    }

    func check(_ scenes: [Scene]) throws -> (rays: Int, mismatches: Int) {
        var rays = 0, mismatches = 0
        for (s, scene) in scenes.enumerated() {
            let caster = BoxRaycaster(pose: scene.pose, intrinsics: scene.k, box: scene.box)
            let n = Int(scene.k.width * scene.k.height)
            var faces = [Int32](repeating: 99, count: n), dist = [Float](repeating: -1, count: n)
            var gridFaces = [Int32](repeating: 99, count: n), gridDist = [Float](repeating: -1, count: n)
            var uv = [Float](); uv.reserveCapacity(2 * n)
            for j in 0..<Int(scene.k.height) { for i in 0..<Int(scene.k.width) { uv += [Float(i) + 0.5, Float(j) + 0.5] } }
            uv.withUnsafeBufferPointer { p in
                faces.withUnsafeMutableBufferPointer { f in dist.withUnsafeMutableBufferPointer { d in caster.cast(pixelsUV: p, faces: f, distances: d) } }
            }
            gridFaces.withUnsafeMutableBufferPointer { f in gridDist.withUnsafeMutableBufferPointer { d in caster.castGrid(faces: f, distances: d) } }
            #expect(faces == gridFaces, "scene \(s): grid and pixel list differ")
            #expect(zip(dist, gridDist).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }, "scene \(s)")
            for p in 0..<n {
                rays += 1
                let ray = try Ray(pixelU: uv[2 * p], v: uv[2 * p + 1], pose: scene.pose, intrinsics: scene.k)
                let single = ray.intersect(box: scene.box)
                let face = single?.face ?? -1
                if face != faces[p] {
                    mismatches += 1
                    // Only a ray within float rounding of an edge may differ.
                    let nudged = [(0.01, 0.0), (-0.01, 0.0), (0.0, 0.01), (0.0, -0.01)].compactMap { (du, dv) -> Int32? in
                        guard let r = try? Ray(pixelU: uv[2 * p] + Float(du), v: uv[2 * p + 1] + Float(dv), pose: scene.pose, intrinsics: scene.k) else { return nil }
                        return r.intersect(box: scene.box)?.face ?? -1
                    }
                    #expect(nudged.contains(faces[p]) || nudged.contains { $0 != face },
                            "scene \(s) pixel \(p): batch \(faces[p]) single \(face), not a grazing ray")
                } else if let single {
                    #expect(abs(dist[p] - single.distance) <= 1e-5 * max(1, single.distance), "scene \(s) pixel \(p): \(dist[p]) vs \(single.distance)")
                } else {
                    #expect(dist[p] == .infinity)
                }
            }
        }
        return (rays, mismatches)
    }

    @Test func batchEqualsSingleRayOutside() throws {
        let r = try check(try scenes(150, seed: 40))
        #expect(r.rays > 100_000)
        #expect(Double(r.mismatches) <= 1e-3 * Double(r.rays), "\(r.mismatches) of \(r.rays)")
    }

    @Test func batchEqualsSingleRayCameraInside() throws {
        let r = try check(try scenes(60, seed: 41, inside: true))
        #expect(Double(r.mismatches) <= 1e-3 * Double(r.rays), "\(r.mismatches) of \(r.rays)")
    }

    @Test func nonFinitePixelsMissAndTailsAreExact() throws {
        let box = try Box(center: Vec3(0, 0, -3), size: Vec3(1, 1, 1), yaw: 0.3)
        let k = try Intrinsics(fx: 100, fy: 100, cx: 50, cy: 50, width: 100, height: 100)
        let pose = lookAt(eye: .zero, target: Vec3(0, 0, -1))
        let caster = BoxRaycaster(pose: pose, intrinsics: k, box: box)
        // 7 rays: one SIMD group plus a tail of 3; NaN and inf pixels miss.
        let uv: [Float] = [50, 50, .nan, 50, 50, .infinity, 50, 50, -.infinity, .nan, 50, 50, 50, 50]
        var faces = [Int32](repeating: 99, count: 7), dist = [Float](repeating: 0, count: 7)
        uv.withUnsafeBufferPointer { p in faces.withUnsafeMutableBufferPointer { f in dist.withUnsafeMutableBufferPointer { d in caster.cast(pixelsUV: p, faces: f, distances: d) } } }
        #expect(faces == [5, -1, -1, 5, -1, 5, 5])  // the camera at the origin sees the box's back (+z) face
        #expect(dist[1] == .infinity && dist[2] == .infinity && dist[4] == .infinity, "\(dist)")
        let expected = try #require(try Ray(pixelU: 50, v: 50, pose: pose, intrinsics: k).intersect(box: box))
        for i in [0, 3, 5, 6] { #expect(close(dist[i], expected.distance, 1e-5)) }
    }
}
