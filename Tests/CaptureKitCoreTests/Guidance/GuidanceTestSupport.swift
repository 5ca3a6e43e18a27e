import Foundation
@testable import CaptureKitCore

/// A camera orbiting `center` at `radius` (horizontal) and `height` above it, looking at the
/// centre, at azimuth `azimuth` (radians, the dial convention: 0 in front of the box's front face
/// at −z, π/2 at −x).
func orbitPose(center: Vec3, radius: Float, height: Float, azimuth: Float) -> Pose {
    let eye = center + Vec3(-sin(azimuth) * radius, height, -cos(azimuth) * radius)
    return lookAt(eye: eye, target: center)
}

/// Standard normal samples (Box–Muller) from the deterministic generator.
extension SplitMix64 {
    mutating func gaussian() -> Double {
        let u1 = max(double(0...1), 1e-300), u2 = double(0...1)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

/// The scheduler's answers for a list of (time, pose) frames, with every event in order.
struct Run {
    var guidance: [Guidance] = []
    var times: [Double] = []
    var events: [GuidanceEvent] = []
    var captureTimes: [Double] { zip(times, guidance).filter { $0.1.capture }.map { $0.0 } }
    var codes: Set<EventCode> { Set(events.map { $0.code }) }
}

func run(_ s: Scheduler, _ frames: [SchedulerFrame]) throws -> Run {
    var r = Run()
    for f in frames {
        r.guidance.append(try s.update(f))
        r.times.append(f.timestamp)
        while let e = s.nextEvent() { r.events.append(e) }
    }
    return r
}

/// Frames at `rate` Hz for `duration` s of a camera whose pose at time t is `pose(t)`.
func frames(rate: Double = 60, duration: Double, start: Double = 100, box: Box? = nil,
            tracking: TrackingState = .normal, _ pose: (Double) -> Pose) -> [SchedulerFrame] {
    let n = Int((duration * rate).rounded())
    return (0...n).map { i in
        let t = Double(i) / rate
        return SchedulerFrame(timestamp: start + t, pose: pose(t), tracking: tracking, box: box)
    }
}

/// One line of the MultiScan camera-info sample: time (s) and the camera-to-world pose.
func multiscanTrajectory() throws -> [(t: Double, pose: Pose, m: [Double])] {
    let text = try String(contentsOf: fixture("multiscan-sample/camera-info-example.jsonl"), encoding: .utf8)
    var out: [(Double, Pose, [Double])] = []
    for line in text.split(separator: "\n") {
        guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let ns = obj["timestamp"] as? Int64 ?? (obj["timestamp"] as? NSNumber)?.int64Value,
              let m = obj["transform"] as? [Double] else { continue }
        out.append((Double(ns) / 1e9, try Pose(Matrix4(columnMajor: m.map { Float($0) })), m))
    }
    return out
}
