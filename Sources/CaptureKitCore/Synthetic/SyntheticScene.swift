import Glibc

/// A deterministic synthetic indoor scene rendered by ray casting: a room (floor at y = 0, four
/// walls, a ceiling), a table, a shelf and the capture target — a box standing on the floor near the
/// origin. It renders LiDAR-like depth (z-depth in metres with depth-dependent noise, dropouts,
/// flying-pixel suppression at edges and a 5 m range limit) with a matching 0/1/2 confidence map,
/// and an RGB image with procedural textures. Every output is a pure function of the seed, the
/// frame index, the pose and the intrinsics, so tests, benchmarks and demos in any language see the
/// same frames.
public struct SyntheticScene: Sendable {
    /// The object a capture orbits: standing on the floor (y = 0) near the origin.
    public let target: Box
    let boxes: [Box]
    let seed: UInt64
    /// Room half extents (x, z) and height.
    let roomHalf = SIMD2<Float>(2.6, 3.1), roomHeight: Float = 2.7
    /// Depth noise standard deviation: `noiseBase + noisePerMetre · z` metres.
    public var noiseBase: Float = 0.0005, noisePerMetre: Float = 0.0006
    /// LiDAR range limit, metres.
    public static let maxRange: Float = 5

    public init(seed: UInt64 = 1) {
        self.seed = seed
        func box(_ c: Vec3, _ s: Vec3, _ yaw: Float) -> Box {
            (try? Box(center: c, size: s, yaw: yaw, floor: 0)) ?? Box.fallback
        }
        target = box(Vec3(0, 0, 0), Vec3(0.5, 0.4, 0.6), 0.3)
        boxes = [
            target,
            box(Vec3(-1.7, 0, -2.2), Vec3(1.2, 0.75, 0.7), 0.1),   // table
            box(Vec3(2.2, 0, 0.8), Vec3(0.4, 1.8, 1.0), 0),        // shelf
            box(Vec3(-2.1, 0, 1.9), Vec3(0.6, 0.45, 0.6), -0.4),   // stool
        ]
    }

    // MARK: ray casting

    /// Nearest hit along a ray (unit direction): distance, object id (0 = target, 1… other boxes,
    /// 10 floor, 11 walls, 12 ceiling) and the hit point.
    @inline(__always)
    func cast(_ o: Vec3, _ d: Vec3) -> (t: Float, id: Int, p: Vec3) {
        var best = Float.infinity, id = -1
        // Room: the ray starts inside, so each plane it moves towards is ahead.
        if d.y < 0 { let t = -o.y / d.y; if t < best { best = t; id = 10 } }
        if d.y > 0 { let t = (roomHeight - o.y) / d.y; if t < best { best = t; id = 12 } }
        if d.x != 0 { let t = ((d.x > 0 ? roomHalf.x : -roomHalf.x) - o.x) / d.x; if t < best { best = t; id = 11 } }
        if d.z != 0 { let t = ((d.z > 0 ? roomHalf.y : -roomHalf.y) - o.z) / d.z; if t < best { best = t; id = 11 } }
        // An index loop, not `enumerated()`: unspecialized in debug builds, that iterator looks up
        // its tuple's type metadata on every step, under a runtime lock that threads contend for.
        var i = 0
        while i < boxes.count {
            if let t = SyntheticScene.slab(o, d, boxes[i]), t < best { best = t; id = i }
            i += 1
        }
        return (best, id, o + d * best)
    }

    /// Entering distance of a ray into a box (nil when missed or behind).
    @inline(__always)
    static func slab(_ o: Vec3, _ d: Vec3, _ b: Box) -> Float? {
        let lo = b.toLocal(direction: o - b.center), ld = b.toLocal(direction: d), h = b.halfSize
        var tn = -Float.infinity, tf = Float.infinity
        for i in 0..<3 {
            if ld[i] == 0 { if abs(lo[i]) > h[i] { return nil }; continue }
            let t1 = (-h[i] - lo[i]) / ld[i], t2 = (h[i] - lo[i]) / ld[i]
            tn = max(tn, min(t1, t2)); tf = min(tf, max(t1, t2))
        }
        return tn <= tf && tn > 0 ? tn : nil
    }

    // MARK: depth

    /// Renders depth (metres, 0 = invalid) and confidence (0 low, 1 medium, 2 high) for a camera,
    /// `intrinsics.width × intrinsics.height`, row-major. Buffers must hold width × height values.
    public func renderDepth(pose: Pose, intrinsics k: Intrinsics, frame: UInt64,
                            depth: UnsafeMutableBufferPointer<Float>, confidence: UnsafeMutableBufferPointer<UInt8>) {
        let w = Int(k.width), h = Int(k.height)
        guard depth.count >= w * h, confidence.count >= w * h else { return }
        // Clean z-depth first (needed for edge detection), then noise and dropouts.
        var clean = [Float](repeating: 0, count: w * h)
        for j in 0..<h {
            for i in 0..<w {
                let dc = k.cameraDirection(u: Float(i) + 0.5, v: Float(j) + 0.5)
                let dw = pose.rotate(dc)
                let n = length(dw)
                let hit = cast(pose.t, dw / n)
                clean[j * w + i] = hit.t.isFinite ? hit.t / n : 0  // along-ray distance → z-depth (dc.z = −1)
            }
        }
        for j in 0..<h {
            for i in 0..<w {
                let idx = j * w + i
                let z = clean[idx]
                var edge = false
                for (di, dj) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let ii = i + di, jj = j + dj
                    if ii >= 0, ii < w, jj >= 0, jj < h, abs(clean[jj * w + ii] - z) > 0.08 * z { edge = true }
                }
                let r = SyntheticScene.hash(seed, frame, UInt64(idx))
                let u1 = Float(r & 0xFFFFFF) / Float(0x1000000), u2 = Float((r >> 24) & 0xFFFFFF) / Float(0x1000000)
                let u3 = Float((r >> 48) & 0xFFFF) / 65536
                let gauss = (-2 * log(max(u1, 1e-7))).squareRoot() * cos(2 * Float.pi * u2)
                var d = z + gauss * (noiseBase + noisePerMetre * z)
                var c: UInt8 = z < 3 ? 2 : 1
                if edge { c = 1; if u3 < 0.35 { d = 0 } }
                if z <= 0 || z > SyntheticScene.maxRange || u3 > 0.995 { d = 0 }
                if d <= 0 { d = 0; c = 0 }
                depth[idx] = d
                confidence[idx] = c
            }
        }
    }

    // MARK: colour

    /// Renders an 8-bit RGB image (row-major, 3 bytes a pixel): a checkered wooden floor, plain
    /// walls, and a high-contrast procedural texture on the target, with simple shading.
    public func renderColor(pose: Pose, intrinsics k: Intrinsics, rgb: UnsafeMutableBufferPointer<UInt8>) {
        let w = Int(k.width), h = Int(k.height)
        guard rgb.count >= w * h * 3 else { return }
        let light = Vec3(0.3, 0.9, 0.2) / length(Vec3(0.3, 0.9, 0.2))
        for j in 0..<h {
            for i in 0..<w {
                let dw = pose.rotate(k.cameraDirection(u: Float(i) + 0.5, v: Float(j) + 0.5))
                let hit = cast(pose.t, dw / length(dw))
                var c = Vec3(0.8, 0.8, 0.78)
                var normal = Vec3(0, 1, 0)
                let p = hit.p
                switch hit.id {
                case 10:
                    let checker = (Int((p.x + 100) / 0.5) + Int((p.z + 100) / 0.5)) % 2 == 0
                    let grain = 0.1 * sin(p.x * 40 + sin(p.z * 7) * 3)
                    c = checker ? Vec3(0.55, 0.38, 0.22) : Vec3(0.75, 0.58, 0.38)
                    c += Vec3(grain, grain, grain)
                case 11: c = Vec3(0.85, 0.85, 0.8); normal = abs(p.x) > roomHalf.x - 1e-3 ? Vec3(-p.x.sign1, 0, 0) : Vec3(0, 0, -p.z.sign1)
                case 12: c = Vec3(0.95, 0.95, 0.95); normal = Vec3(0, -1, 0)
                case 0...9:
                    let b = boxes[hit.id]
                    let l = b.toLocal(direction: p - b.center) / b.halfSize
                    let a = Vec3(abs(l.x), abs(l.y), abs(l.z))
                    let ln = a.x >= a.y && a.x >= a.z ? Vec3(l.x.sign1, 0, 0) : (a.y >= a.z ? Vec3(0, l.y.sign1, 0) : Vec3(0, 0, l.z.sign1))
                    normal = b.toWorld(direction: ln)
                    if hit.id == 0 {
                        // Target: coloured per face with a fine pattern so features are everywhere.
                        let s = sin(l.x * 23 + l.y * 17) * sin(l.z * 19 - l.y * 29)
                        let base = Vec3(abs(ln.x) * 0.9 + 0.1, abs(ln.y) * 0.8 + 0.1, abs(ln.z) * 0.9 + 0.1)
                        c = base * (0.6 + 0.4 * s)
                    } else {
                        c = Vec3(0.35, 0.4, 0.5)
                    }
                default: c = Vec3(0, 0, 0)
                }
                let shade = 0.55 + 0.45 * max(0, dot(normal, light))
                let o = (j * w + i) * 3
                rgb[o] = UInt8(clamping: Int(min(max(c.x * shade, 0), 1) * 255))
                rgb[o + 1] = UInt8(clamping: Int(min(max(c.y * shade, 0), 1) * 255))
                rgb[o + 2] = UInt8(clamping: Int(min(max(c.z * shade, 0), 1) * 255))
            }
        }
    }

    /// SplitMix64-style hash of three words.
    @inline(__always)
    static func hash(_ a: UInt64, _ b: UInt64, _ c: UInt64) -> UInt64 {
        var z = a &* 0x9E37_79B9_7F4A_7C15 ^ b &* 0xC2B2_AE3D_27D4_EB4F ^ c &* 0x1656_67B1_9E37_79F9
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Float {
    /// +1 or −1 (for 0: +1).
    var sign1: Float { self < 0 ? -1 : 1 }
}

extension Box {
    /// A valid unit box for initialisers that cannot fail with constant inputs.
    static let fallback = Box(uncheckedCenter: .zero, size: Vec3(1, 1, 1))
}
