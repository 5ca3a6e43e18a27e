import Foundation
import Testing
@testable import CaptureKitCore

/// Prompts that reach the operator on real hand-held motion (issue 11): a prompt fires when its
/// condition held for prompt_delay s in total within the last prompt_window s, with hysteresis
/// and the repeat limit.
@Suite struct PromptWindowTests {
    /// Speed over the smoothing window (least squares, as `realTrajectorySpeeds` checks it) and
    /// the rotation angle between the window's oldest and newest orientation over their time span,
    /// computed here in Double from the file's matrices.
    static func motion(_ traj: [(t: Double, pose: Pose, m: [Double])], at i: Int, window: Double) -> (speed: Double, angular: Double) {
        guard i >= 1 else { return (0, 0) }
        var first = i - 1
        while first > 0 && traj[first - 1].t >= traj[i].t - window { first -= 1 }
        let pts = traj[first...i]
        let tm = pts.map(\.t).reduce(0, +) / Double(pts.count)
        var pm = SIMD3<Double>.zero
        for p in pts { pm += SIMD3(p.m[12], p.m[13], p.m[14]) }
        pm /= Double(pts.count)
        var num = SIMD3<Double>.zero, den = 0.0
        for p in pts { num += (SIMD3(p.m[12], p.m[13], p.m[14]) - pm) * (p.t - tm); den += (p.t - tm) * (p.t - tm) }
        let v = num / den
        // R_a^T R_b from the column-major 4x4s: trace = sum over the 3x3 of a[c][r] * b[c][r].
        let a = traj[first].m, b = traj[i].m
        var trace = 0.0
        for c in 0..<3 { for r in 0..<3 { trace += a[c * 4 + r] * b[c * 4 + r] } }
        let angle = acos(min(1, max(-1, (trace - 1) / 2)))
        return ((v * v).sum().squareRoot(), angle / (traj[i].t - traj[first].t))
    }

    @Test func slowDownAndTurningFireOnTheRealTrajectory() throws {
        let traj = try multiscanTrajectory()
        try #require(traj.count == 354)
        let o = SchedulerOptions()
        let s = try Scheduler(options: o)
        var fired: [EventCode: [Double]] = [:]
        for f in traj {
            _ = try s.update(SchedulerFrame(timestamp: f.t, pose: f.pose))
            while let e = s.nextEvent() { fired[e.code, default: []].append(e.timestamp) }
        }
        // When the motion first turned bad, measured independently.
        var firstFast: Double?, firstTurn: Double?
        for i in traj.indices {
            let m = Self.motion(traj, at: i, window: Double(o.smoothingWindow))
            if firstFast == nil && m.speed > Double(o.speedFast) { firstFast = traj[i].t }
            if firstTurn == nil && m.angular > Double(o.maxAngularSpeedDeg) * .pi / 180 { firstTurn = traj[i].t }
        }
        let fast = try #require(firstFast), turn = try #require(firstTurn)
        let slowDown = try #require(fired[.slowDown]?.first, "slow down never fired: \(fired)")
        let turning = try #require(fired[.turningTooFast]?.first, "turning too fast never fired: \(fired)")
        let t0 = traj[0].t
        print("real trajectory: too fast from \(fast - t0) s, slow down at \(slowDown - t0) s (\(fired[.slowDown]?.count ?? 0)x); "
              + "turning from \(turn - t0) s, prompt at \(turning - t0) s (\(fired[.turningTooFast]?.count ?? 0)x)")
        #expect(slowDown >= fast && slowDown - fast <= 1.0, "slow down \(slowDown - fast) s after the motion turned too fast")
        #expect(turning >= turn && turning - turn <= 1.0, "turning prompt \(turning - turn) s after the turning got too fast")
        // Never more often than prompt_repeat.
        for times in fired.values {
            for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= Double(o.promptRepeat) - 1e-9) }
        }
    }

    @Test func aSteadyJitteryOrbitFiresNoSpeedPrompt() throws {
        // 0.3 m/s on a 0.6 m orbit (28.6 deg/s) at 60 Hz for 20 s, with ±2 mm and ±0.3 deg of
        // hand-held jitter per frame (seeded).
        var rng = SplitMix64(seed: 11)
        let center = Vec3(0, 0.4, 0), radius: Float = 0.6, omega = 0.3 / 0.6
        var frames: [SchedulerFrame] = []
        for i in 0...(20 * 60) {
            let t = Double(i) / 60
            var p = orbitPose(center: center, radius: radius, height: 0.3, azimuth: Float(omega * t))
            let jitter = Vec3(Float(rng.gaussian() * 0.002), Float(rng.gaussian() * 0.002), Float(rng.gaussian() * 0.002))
            let q = Quaternion(angle: Float(rng.gaussian() * 0.3 * .pi / 180), axis: { let a = Vec3(Float(rng.gaussian()), Float(rng.gaussian()), Float(rng.gaussian())); return a / length(a) }())
            p = try Pose(rotation: q * p.rotation, translation: p.t + jitter)
            frames.append(SchedulerFrame(timestamp: 50 + t, pose: p))
        }
        let r = try run(try Scheduler(), frames)
        let speedPrompts = r.events.filter { [.slowDown, .speedUp, .turningTooFast].contains($0.code) }
        #expect(speedPrompts.isEmpty, "\(speedPrompts.map { ($0.code, $0.timestamp - 50) })")
        #expect(r.captureTimes.count >= 8)
    }

    @Test func aConditionHoveringAtTheThresholdDoesNotChatter() throws {
        // Tracking limited on a random 40 % of the frames for 30 s: the held share hovers around
        // prompt_delay / prompt_window. The prompt fires, never twice within prompt_repeat.
        var rng = SplitMix64(seed: 5)
        let still = lookAt(eye: Vec3(0, 1.2, -2), target: Vec3(0, 0.4, 0))
        var fs = frames(duration: 30) { _ in still }
        for i in fs.indices where rng.double(0...1) < 0.4 { fs[i].tracking = .limited }
        var o = SchedulerOptions()
        o.promptRepeat = 1
        let times = try run(try Scheduler(options: o), fs).events.filter { $0.code == .trackingLimited }.map(\.timestamp)
        #expect(times.count >= 3)
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= 1 - 1e-9, "\(a) \(b)") }
        // Held 90 % then 20 %: it fires while the share is high, stops once it fell below half
        // the delay, and does not fire again while it stays low.
        var phases = frames(duration: 10) { _ in still }
        for i in phases.indices {
            let t = phases[i].timestamp - 100
            let share = t < 4 ? 0.9 : 0.1
            if rng.double(0...1) < share { phases[i].tracking = .limited }
        }
        let p = try run(try Scheduler(options: o), phases).events.filter { $0.code == .trackingLimited }.map { $0.timestamp - 100 }
        #expect(!p.isEmpty && p.allSatisfy { $0 < 4.75 }, "\(p)")
    }

    @Test func theWindowCountsHeldTimeExactlyToABucket() {
        var w = Scheduler.HeldWindow()
        // 0.75 s window: hold for 0.3 s, pause 0.3 s, hold 0.3 s (60 Hz).
        var t = 10.0
        for i in 0..<54 {
            t += 1.0 / 60
            w.add(i < 18 || i >= 36 ? 1.0 / 60 : 0, at: t, window: 0.75)
        }
        // The last 0.75 s (45 frames) held 9 + 18 frames = 0.45 s.
        #expect(abs(w.total - 0.45) < 0.75 / 32 + 1e-9, "\(w.total)")
        // 1 s later with nothing held: all of it dropped out.
        w.add(0, at: t + 1, window: 0.75)
        #expect(w.total == 0)
    }
}
