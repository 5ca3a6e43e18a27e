import Foundation
import Testing
@testable import CaptureKitCore

@Suite struct BoxFitTests {
    func fit(_ points: [Vec3], _ options: FitOptions = FitOptions()) throws -> Box {
        try points.withUnsafeBufferPointer { (buf) throws(CaptureKitError) in try Box.fit(points: buf, options: options) }
    }

    @Test func recoversGeneratedBoxes() throws {
        var rng = SplitMix64(seed: 20)
        for i in 0..<300 {
            let truth = try Box(center: rng.vec(-3...3), size: Vec3(rng.float(0.2...2), rng.float(0.2...2), rng.float(0.2...2)),
                                yaw: rng.float(-3...3))
            // The 8 corners plus random interior points: the minimal box is the truth.
            var points = truth.corners
            for _ in 0..<200 { points.append(truth.center + truth.toWorld(direction: rng.vec(-1...1) * truth.halfSize)) }
            let box = try fit(points)
            let areaTruth = truth.size.x * truth.size.z, area = box.size.x * box.size.z
            #expect(area <= areaTruth * 1.0001, "case \(i): area \(area) > \(areaTruth)")
            #expect(close(box.size.y, truth.size.y, 1e-4))
            // Same yaw modulo 90°.
            let dYaw = Double(box.yaw - truth.yaw).remainder(dividingBy: Double.pi / 2)
            #expect(abs(dYaw) < 1e-3, "case \(i): yaw \(box.yaw) vs \(truth.yaw)")
            #expect(box.yaw > -Float.pi / 4 - 1e-6 && box.yaw <= Float.pi / 4 + 1e-6)
            for p in points { #expect(isNear(box, p), "case \(i): \(p) outside the fitted box") }
        }
    }

    func isNear(_ box: Box, _ p: Vec3) -> Bool {
        let l = box.toLocal(direction: p - box.center)
        return abs(l.x) <= box.halfSize.x + 1e-4 && abs(l.y) <= box.halfSize.y + 1e-4 && abs(l.z) <= box.halfSize.z + 1e-4
    }

    @Test func floorFilterAndBottom() throws {
        var points: [Vec3] = []
        var rng = SplitMix64(seed: 21)
        for _ in 0..<500 { points.append(Vec3(rng.float(-2...2), -1, rng.float(-2...2))) }  // floor points
        for _ in 0..<500 { points.append(Vec3(rng.float(0...0.4), rng.float(-0.8...(-0.2)), rng.float(0...0.6))) }
        let box = try fit(points, FitOptions(floor: -1))
        #expect(box.floor == -1)
        #expect(close(box.corners[3].y, -1, 1e-6))
        #expect(box.size.x < 0.61 && box.size.z < 0.61)  // the floor points are gone
        #expect(box.center.y + box.size.y / 2 <= -0.2 + 1e-5)
        #expect { try fit(points.filter { $0.y < -0.995 }, FitOptions(floor: -1)) } throws: { ($0 as? CaptureKitError)?.status == .notFound }
        #expect { try fit([]) } throws: { ($0 as? CaptureKitError)?.status == .notFound }
    }

    @Test func degenerateInputsGiveMinimumSizes() throws {
        let one = try fit([Vec3(1, 2, 3)])
        #expect(one.size == Vec3(Box.minSize, Box.minSize, Box.minSize) && close(one.center, Vec3(1, 2, 3), 1e-6))
        let line = try fit([Vec3(0, 0, 0), Vec3(1, 0, 1), Vec3(0.5, 0, 0.5)])
        #expect(close(max(line.size.x, line.size.z), Float(2).squareRoot(), 1e-5))
        let padded = try fit([Vec3(0, 0, 0), Vec3(1, 1, 1)], FitOptions(padding: 0.1))
        #expect(close(padded.size.y, 1.2, 1e-5))
        #expect(throws: CaptureKitError.self) { try fit([Vec3(.nan, 0, 0)]) }
        #expect(throws: CaptureKitError.self) { try fit([Vec3(0, 0, 0)], FitOptions(padding: -1)) }
        #expect(throws: CaptureKitError.self) { try fit([Vec3(0, 0, 0), Vec3(5000, 0, 0)]) }
    }
}
