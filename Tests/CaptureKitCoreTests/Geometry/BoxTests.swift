import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct BoxTests {
    /// The corner formula of docs/DESIGN.md#the-box, evaluated independently in Double.
    func expectedCorners(center: SIMD3<Double>, size: SIMD3<Double>, yaw: Double) -> [SIMD3<Double>] {
        let signs: [(Double, Double, Double)] = [(-1, 1, -1), (1, 1, -1), (1, -1, -1), (-1, -1, -1),
                                                 (-1, 1, 1), (1, 1, 1), (1, -1, 1), (-1, -1, 1)]
        return signs.map { s in
            let l = SIMD3(s.0 * size.x / 2, s.1 * size.y / 2, s.2 * size.z / 2)
            return center + SIMD3(cos(yaw) * l.x + sin(yaw) * l.z, l.y, -sin(yaw) * l.x + cos(yaw) * l.z)
        }
    }

    @Test func workedExampleCornersAndFloor() throws {
        let yaw = 25 * Double.pi / 180
        var box = try Box(center: Vec3(0.3, 0, -1.2), size: Vec3(0.9, 0.7, 1.3), yaw: Float(yaw))
        try box.setFloor(-0.95)
        let want = expectedCorners(center: SIMD3(0.3, -0.95 + 0.35, -1.2), size: SIMD3(0.9, 0.7, 1.3), yaw: yaw)
        for (i, c) in box.corners.enumerated() {
            #expect(maxAbs(SIMD3<Double>(c) - want[i]) < 1e-6, "corner \(i): \(c) vs \(want[i])")
        }
        // Bottom corners (2, 3, 6, 7) exactly on the floor.
        for i in [2, 3, 6, 7] { #expect(abs(box.corners[i].y - (-0.95)) < 1e-6) }
        for i in [0, 1, 4, 5] { #expect(abs(box.corners[i].y - (-0.25)) < 1e-6) }
    }

    @Test func faceCentresNormalsAndOrientations() throws {
        var rng = SplitMix64(seed: 10)
        // Corner indices of each face (front, left, right, bottom, top, back).
        let faceCorners = [[0, 1, 2, 3], [0, 3, 7, 4], [1, 2, 6, 5], [2, 3, 7, 6], [0, 1, 5, 4], [4, 5, 6, 7]]
        for i in 0..<500 {
            let box = rng.box(floor: i % 2 == 0)
            let corners = box.corners
            for f in 0..<6 {
                let face = try box.face(f)
                let mean = faceCorners[f].reduce(Vec3.zero) { $0 + corners[$1] } / 4
                #expect(close(face.center, mean, 2e-5), "case \(i) face \(f)")
                // The normal points from the box centre to the face centre.
                let out = face.center - box.center
                #expect(close(face.normal, out / length(out), 1e-5), "case \(i) face \(f)")
                // Orientation: +z on the normal; side faces keep +y up.
                let axes = face.orientation.axes
                #expect(close(axes.z, face.normal, 1e-5), "case \(i) face \(f)")
                if f != 3 && f != 4 { #expect(close(axes.y, Vec3(0, 1, 0), 1e-5)) }
            }
        }
        #expect(throws: CaptureKitError.self) { try Box.unit.face(6) }
        #expect(throws: CaptureKitError.self) { try Box.unit.face(-1) }
    }

    @Test func containsIsClosedAndRespectsYaw() throws {
        let box = try Box(center: Vec3(1, 0, 0), size: Vec3(2, 2, 0.2), yaw: Float.pi / 2)
        // Yawed 90°: the thin local z axis now runs along world x.
        #expect(box.contains(Vec3(1.1, 0, 0.9)))
        #expect(!box.contains(Vec3(1.2, 0, 0)))
        #expect(box.contains(box.corners[5]))  // corners count as inside
    }

    @Test func editsKeepInvariantsOverGeneratedBoxes() throws {
        var rng = SplitMix64(seed: 11)
        let camera = lookAt(eye: Vec3(0, 1.5, 2), target: Vec3(0, 0, 0))
        for i in 0..<3000 {
            var box = rng.box(floor: i % 3 != 0)
            for step in 0..<8 {
                let before = box
                let op = Int(rng.next() % 10)
                var threw = false
                do {
                    switch op {
                    case 0: try box.setCenter(rng.vec(-5...5))
                    case 1: try box.translate(by: rng.vec(-1...1))
                    case 2: try box.translate(relativeTo: camera, right: rng.float(-1...1), up: rng.float(-1...1), forward: rng.float(-1...1))
                    case 3: try box.rotate(by: rng.float(-7...7))
                    case 4: try box.setSize(rng.vec(-0.5...3))
                    case 5: try box.scale(by: rng.vec(0.001...3))
                    case 6:
                        let face = Int(rng.next() % 6)
                        let d = rng.float(-2...2)
                        let opposite = [5, 2, 1, 4, 3, 0][face]
                        let keep = try before.face(opposite).center
                        try box.extendFace(face, by: d)
                        #expect(close(try box.face(opposite).center, keep, 1e-4), "case \(i) step \(step): opposite face moved")
                        #expect(close(try box.face(face).center, try before.face(face).center + (try before.face(face).normal) * d, 1e-4))
                    case 7: try box.setFloor(rng.float(-2...2))
                    case 8: try box.placeOnFloor(x: rng.float(-3...3), z: rng.float(-3...3))
                    default: try box.setYaw(rng.float(-10...10))
                    }
                } catch {
                    threw = true
                    #expect(box == before, "case \(i) step \(step) op \(op): box changed on error \(error)")
                }
                for a in 0..<3 { #expect(box.size[a] >= Box.minSize && box.size[a] <= Box.maxSize) }
                #expect(box.yaw > -Float.pi && box.yaw <= Float.pi)
                if let floor = box.floor {
                    for c in [2, 3, 6, 7] { #expect(abs(box.corners[c].y - floor) < 1e-4, "case \(i) step \(step) op \(op)") }
                }
                _ = threw
            }
        }
    }

    @Test func sizeLimitsAreErrors() throws {
        var box = try Box(center: .zero, size: Vec3(0.1, 0.1, 0.1), yaw: 0)
        #expect(throws: CaptureKitError.self) { try box.extendFace(2, by: -0.095) }  // 5 mm < 1 cm
        #expect(box.size == Vec3(0.1, 0.1, 0.1))
        try box.extendFace(2, by: -0.09)  // exactly 1 cm is allowed
        #expect(close(box.size.x, 0.01, 1e-6))
        #expect(throws: CaptureKitError.self) { try box.scale(by: Vec3(0.5, 1, 1)) }
        #expect(throws: CaptureKitError.self) { try box.setSize(Vec3(1, 2000, 1)) }
        #expect(throws: CaptureKitError.self) { try box.scale(by: Vec3(0, 1, 1)) }
        #expect(throws: CaptureKitError.self) { try Box(center: .zero, size: Vec3(.nan, 1, 1), yaw: 0) }
        #expect(throws: CaptureKitError.self) { try Box(center: Vec3(.infinity, 0, 0), size: Vec3(1, 1, 1), yaw: 0) }
    }

    @Test func floorRules() throws {
        var box = try Box(center: Vec3(0, 3, 0), size: Vec3(1, 2, 1), yaw: 0)
        #expect(throws: CaptureKitError.self) { try box.placeOnFloor(x: 1, z: 1) }
        try box.setFloor(-1)
        #expect(box.center.y == 0)
        try box.translate(by: Vec3(1, 5, 0))  // y ignored
        #expect(box.center == Vec3(1, 0, 0))
        try box.extendFace(4, by: 1)  // top grows, bottom stays
        #expect(box.center.y == 0.5 && box.size.y == 3)
        #expect { try box.extendFace(3, by: 1) } throws: { ($0 as? CaptureKitError)?.status == .state }
        try box.scale(by: Vec3(1, 0.5, 1))
        #expect(box.center.y == -0.25)
        try box.placeOnFloor(x: 2, z: -3)
        #expect(box.center == Vec3(2, -0.25, -3))
        box.clearFloor()
        try box.translate(by: Vec3(0, 1, 0))
        #expect(box.center.y == 0.75)
    }

    @Test func cameraRelativeTranslationFollowsCameraYaw() throws {
        var box = try Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0)
        // Camera looking down −x (turned 90° left), pitched down 30°.
        let cam = lookAt(eye: Vec3(2, 1, 0), target: Vec3(2 - 0.866, 0.5, 0))
        try box.translate(relativeTo: cam, right: 0, up: 0, forward: 1)
        #expect(close(box.center, Vec3(-1, 0, 0), 1e-5))
        try box.translate(relativeTo: cam, right: 1, up: 0.5, forward: 0)
        // Right of a camera looking down −x is −z.
        #expect(close(box.center, Vec3(-1, 0.5, -1), 1e-5))
    }

    @Test func rotateAccumulatesWithoutDrift() throws {
        var box = try Box(center: .zero, size: Vec3(1, 1, 1), yaw: 0)
        for _ in 0..<3600 { try box.rotate(by: Float.pi / 180) }
        #expect(abs(box.yaw) < 1e-3)  // ten full turns
        try box.setYaw(3 * Float.pi)
        #expect(abs(abs(box.yaw) - Float.pi) < 1e-6)  // 3π ≡ π; float rounding may give −π + ε
    }
}
