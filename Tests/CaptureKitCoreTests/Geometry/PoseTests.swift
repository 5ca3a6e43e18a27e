import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct PoseTests {
    /// R_y(yaw)·R_x(pitch)·R_z(roll) computed independently in Double, as columns.
    func rotation(yaw: Double, pitch: Double, roll: Double) -> (Vec3, Vec3, Vec3) {
        func mul(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
            (0..<3).map { r in (0..<3).map { c in (0..<3).reduce(0) { $0 + a[r][$1] * b[$1][c] } } }
        }
        let (cy, sy, cp, sp, cr, sr) = (cos(yaw), sin(yaw), cos(pitch), sin(pitch), cos(roll), sin(roll))
        let ry = [[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]
        let rx = [[1, 0, 0], [0, cp, -sp], [0, sp, cp]]
        let rz = [[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]]
        let m = mul(mul(ry, rx), rz)
        func col(_ c: Int) -> Vec3 { Vec3(Float(m[0][c]), Float(m[1][c]), Float(m[2][c])) }
        return (col(0), col(1), col(2))
    }

    @Test func yawPitchRollRecoversConstructedAngles() throws {
        var rng = SplitMix64(seed: 1)
        for i in 0..<2000 {
            let yaw = rng.double(-3.1...3.1), pitch = rng.double(-1.5...1.5), roll = rng.double(-3.1...3.1)
            let (x, y, z) = rotation(yaw: yaw, pitch: pitch, roll: roll)
            let angles = Pose(x: x, y: y, z: z, t: .zero).yawPitchRoll
            #expect(close(Double(angles.yaw), yaw, 2e-3) && close(Double(angles.pitch), pitch, 2e-3)
                    && close(Double(angles.roll), roll, 2e-3), "case \(i): \(yaw) \(pitch) \(roll) -> \(angles)")
        }
    }

    @Test func yawPitchRollAtGimbalLockIsFinite() {
        let (x, y, z) = rotation(yaw: 0.7, pitch: Double.pi / 2, roll: 0)
        let a = Pose(x: x, y: y, z: z, t: .zero).yawPitchRoll
        #expect(close(a.pitch, Float.pi / 2, 1e-3))
        #expect(a.roll == 0)
        #expect(close(a.yaw, 0.7, 1e-3))
    }

    /// ARKit's own eulerAngles ([pitch, yaw, roll]) of a real 60 Hz trajectory.
    @Test func yawPitchRollMatchesARKitOnRealTrajectory() throws {
        let text = try String(contentsOf: fixture("multiscan-sample/camera-info-example.jsonl"), encoding: .utf8)
        var count = 0
        for line in text.split(separator: "\n") {
            let obj = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let m = try #require(obj["transform"] as? [Double]).map { Float($0) }
            let e = try #require(obj["euler_angles"] as? [Double])
            let pose = try Pose(Matrix4(columnMajor: m))
            let a = pose.yawPitchRoll
            #expect(close(Double(a.pitch), e[0], 1e-4) && close(Double(a.yaw), e[1], 1e-4) && close(Double(a.roll), e[2], 1e-4),
                    "line \(count): ours \(a) ARKit \(e)")
            count += 1
        }
        #expect(count == 354)
    }

    @Test func quaternionRoundTripAndInverse() throws {
        var rng = SplitMix64(seed: 2)
        for i in 0..<2000 {
            let q = rng.quaternion(), t = rng.vec(-100...100)
            let pose = try Pose(rotation: q, translation: t)
            let back = pose.rotation
            // q and −q are the same rotation; ours has w ≥ 0.
            let s: Float = q.w < 0 ? -1 : 1
            #expect(close(back.x, s * q.x, 1e-5) && close(back.y, s * q.y, 1e-5) && close(back.z, s * q.z, 1e-5)
                    && close(back.w, s * q.w, 1e-5), "case \(i): \(q) -> \(back)")
            #expect(back.w >= 0)
            let product = pose.matrix * pose.inverse.matrix
            for c in 0..<4 { for r in 0..<4 {
                #expect(close(product[r, c], r == c ? 1 : 0, 1e-4), "case \(i) (\(r),\(c))")
            } }
        }
    }

    @Test func quaternionMatrixMatchesAxisAngleFormula() throws {
        // 90° about +y maps +x to −z (right-handed).
        let q = Quaternion(angle: Float.pi / 2, axis: Vec3(0, 1, 0))
        let a = q.axes
        #expect(close(a.x, Vec3(0, 0, -1), 1e-6))
        #expect(close(a.z, Vec3(1, 0, 0), 1e-6))
    }

    @Test func rigidValidationRejectsBadMatrices() {
        var m = Matrix4.identity
        m.columns.0.x = 2  // scaled
        #expect(throws: CaptureKitError.self) { try Pose(m) }
        var reflect = Matrix4.identity
        reflect.columns.2.z = -1  // determinant −1
        #expect(throws: CaptureKitError.self) { try Pose(reflect) }
        var bottom = Matrix4.identity
        bottom.columns.0.w = 0.5
        #expect(throws: CaptureKitError.self) { try Pose(bottom) }
        var nan = Matrix4.identity
        nan.columns.3.x = .nan
        #expect(throws: CaptureKitError.self) { try Pose(nan) }
        var far = Matrix4.identity
        far.columns.3.y = 2e6
        #expect(throws: CaptureKitError.self) { try Pose(far) }
        #expect(throws: CaptureKitError.self) { try Pose(rotation: Quaternion(x: 0, y: 0, z: 0, w: 0), translation: .zero) }
    }

    @Test func openCVFlipIsPoseTimesDiag() throws {
        var rng = SplitMix64(seed: 3)
        let pose = try Pose(rotation: rng.quaternion(), translation: rng.vec(-3...3))
        let diag = Matrix4(SIMD4(1, 0, 0, 0), SIMD4(0, -1, 0, 0), SIMD4(0, 0, -1, 0), SIMD4(0, 0, 0, 1))
        #expect(pose.flippedCameraAxes.matrix == pose.matrix * diag)
        #expect(pose.flippedCameraAxes.flippedCameraAxes == pose)
        // OpenCV camera looks down +z: the OpenGL forward (−z) equals the flipped pose's +z column.
        #expect(close(pose.flippedCameraAxes.z, pose.forward, 0))
    }

    @Test func transposeConvertsStorageOrder() {
        let m = Matrix4(columnMajor: (0..<16).map(Float.init))
        #expect(m[1, 0] == 1 && m[0, 1] == 4)
        #expect(m.transposed[0, 1] == 1 && m.transposed.transposed == m)
    }

    @Test func intrinsicsScaleToDepthResolution() throws {
        let rgb = try Intrinsics(fx: 1613.7, fy: 1613.7, cx: 941.38, cy: 727.04, width: 1920, height: 1440)
        let d = try rgb.scaled(width: 256, height: 192)
        #expect(close(d.fx, 1613.7 * 256 / 1920, 1e-3) && close(d.cx, 941.38 * 256 / 1920, 1e-4))
        #expect(close(d.fy, 1613.7 * 192 / 1440, 1e-3) && close(d.cy, 727.04 * 192 / 1440, 1e-4))
        #expect(d.width == 256 && d.height == 192)
        // The same scene point projects to proportionally the same pixel.
        let dirRGB = rgb.cameraDirection(u: 1000, v: 300), dirD = d.cameraDirection(u: 1000 * 256 / 1920, v: 300 * 192 / 1440)
        #expect(close(dirRGB, dirD, 1e-5))
        #expect(throws: CaptureKitError.self) { try rgb.scaled(width: 0, height: 10) }
        #expect(throws: CaptureKitError.self) { try Intrinsics(fx: -1, fy: 1, cx: 0, cy: 0, width: 1, height: 1) }
        #expect(throws: CaptureKitError.self) { try Intrinsics(fx: 1, fy: .nan, cx: 0, cy: 0, width: 1, height: 1) }
        #expect(throws: CaptureKitError.self) { try Intrinsics(fx: 1, fy: 1, cx: 0, cy: 0, width: 70000, height: 1) }
    }

    @Test func headingStaysDefinedLookingDown() throws {
        // Looking straight down with the top of the image towards −z: forward is −z.
        let down = Pose(x: Vec3(1, 0, 0), y: Vec3(0, 0, -1), z: Vec3(0, 1, 0), t: .zero)
        #expect(close(down.horizontalHeading, Vec3(0, 0, -1), 1e-6))
        // Level camera turned 90° left looks down −x.
        let left = lookAt(eye: .zero, target: Vec3(-1, 0, 0))
        #expect(close(left.horizontalHeading, Vec3(-1, 0, 0), 1e-6))
        // Continuous as the camera pitches down past 80°.
        var previous = Vec3(0, 0, -1)
        for deg in stride(from: 0.0, through: 90.0, by: 1.0) {
            let p = deg * Double.pi / 180
            let f = Vec3(0, Float(-sin(p)), Float(-cos(p)))
            let pose = lookAt(eye: .zero, target: f)
            let h = deg == 90 ? down.horizontalHeading : pose.horizontalHeading
            #expect(dot(h, previous) > 0.99, "pitch \(deg)")
            previous = h
        }
    }

    /// look-at over generated cases, checked against its definition in Double: the camera's −z is the
    /// unit direction to the target, +x is perpendicular to up (horizontal for a y-up world) and to
    /// the right (x · (f × up) > 0), +y completes a right-handed frame, and the result is a valid
    /// rigid pose (it passes `Pose.init`'s own check).
    @Test func lookAtPointsTheCameraAtTheTarget() throws {
        var rng = SplitMix64(seed: 7)
        for i in 0..<2000 {
            let eye = Vec3(Float(rng.double(-50...50)), Float(rng.double(-50...50)), Float(rng.double(-50...50)))
            let target = Vec3(Float(rng.double(-50...50)), Float(rng.double(-50...50)), Float(rng.double(-50...50)))
            let up = i % 2 == 0 ? Vec3(0, 1, 0) : Vec3(Float(rng.double(-1...1)), Float(rng.double(0.2...2)), Float(rng.double(-1...1)))
            let d = SIMD3<Double>(Double(target.x - eye.x), Double(target.y - eye.y), Double(target.z - eye.z))
            let f = d / (d * d).sum().squareRoot()
            let u = SIMD3<Double>(Double(up.x), Double(up.y), Double(up.z))
            let c = SIMD3<Double>(f.y * u.z - f.z * u.y, f.z * u.x - f.x * u.z, f.x * u.y - f.y * u.x)
            guard (c * c).sum().squareRoot() > 1e-3 * (u * u).sum().squareRoot() else { continue }
            let p = try Pose.lookAt(eye: eye, target: target, up: up)
            _ = try Pose(p.matrix)
            func dbl(_ v: Vec3) -> SIMD3<Double> { SIMD3(Double(v.x), Double(v.y), Double(v.z)) }
            let back = -dbl(p.z), x = dbl(p.x)
            #expect(((back - f) * (back - f)).sum().squareRoot() < 1e-5, "case \(i): -z \(back) vs \(f)")
            #expect(abs((x * u).sum()) < 1e-5 * (u * u).sum().squareRoot(), "case \(i): x not perpendicular to up")
            #expect((x * c).sum() > 0, "case \(i): x points left")
            #expect(p.t == eye)
        }
    }

    @Test func lookAtRefusesDegenerateViews() {
        #expect(throws: CaptureKitError.self) { try Pose.lookAt(eye: Vec3(1, 2, 3), target: Vec3(1, 2, 3), up: Vec3(0, 1, 0)) }
        #expect(throws: CaptureKitError.self) { try Pose.lookAt(eye: .zero, target: Vec3(0, 5, 0), up: Vec3(0, 1, 0)) }
        #expect(throws: CaptureKitError.self) { try Pose.lookAt(eye: .zero, target: Vec3(0, 0, -1), up: .zero) }
        #expect(throws: CaptureKitError.self) { try Pose.lookAt(eye: Vec3(.nan, 0, 0), target: Vec3(0, 0, -1), up: Vec3(0, 1, 0)) }
        #expect(throws: CaptureKitError.self) { try Pose.lookAt(eye: .zero, target: Vec3(0, 0, -1), up: Vec3(0, .infinity, 0)) }
    }
}
