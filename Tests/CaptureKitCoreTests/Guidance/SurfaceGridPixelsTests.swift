import Testing
@testable import CaptureKitCore

/// `SurfaceMap.gridPixels`: the pixels outside its rectangle are skipped by the flying-pixel
/// filter, so none of them may have a ray that meets the grid grown by the kernel's reach.
@Suite struct SurfaceGridPixelsTests {
    /// Whether the ray from `o` along `d` (s > 0) meets the axis-aligned box lo...hi (slabs, in
    /// doubles).
    func meets(_ o: SIMD3<Double>, _ d: SIMD3<Double>, _ lo: SIMD3<Double>, _ hi: SIMD3<Double>) -> Bool {
        var t0 = 0.0, t1 = Double.infinity
        for a in 0..<3 {
            if abs(d[a]) < 1e-15 {
                if o[a] < lo[a] || o[a] > hi[a] { return false }
                continue
            }
            var ta = (lo[a] - o[a]) / d[a], tb = (hi[a] - o[a]) / d[a]
            if ta > tb { swap(&ta, &tb) }
            t0 = max(t0, ta); t1 = min(t1, tb)
        }
        return t0 <= t1
    }

    @Test func noRayOutsideTheRectangleMeetsTheGrownGrid() throws {
        var rng = SplitMix64(seed: 2311)
        var cropped = 0, checked = 0, inside = 0
        for trial in 0..<300 {
            let box = rng.box(floor: false)
            let map = try SurfaceMap(box: box)
            let w = UInt32(rng.float(16...400)), h = UInt32(rng.float(16...300))
            let f = rng.float(0.4...2.5) * Float(w)
            let k = try Intrinsics(fx: f, fy: f * rng.float(0.9...1.1), cx: Float(w) * rng.float(0.3...0.7),
                                   cy: Float(h) * rng.float(0.3...0.7), width: w, height: h)
            // From outside the box, at 1-6 half diagonals, looking at a point near its centre (the
            // box may lie partly or wholly outside the image); every tenth from inside it.
            let r = length(box.halfSize)
            let eye = box.center + rng.unitVector() * (trial % 10 == 0 ? rng.float(0...0.9) * r : rng.float(1...6) * r)
            let target = box.center + rng.unitVector() * rng.float(0...1.5) * r
            guard length(target - eye) > 1e-3 else { continue }
            let pose = lookAt(eye: eye, target: target)
            let rect = map.gridPixels(pose: pose, intrinsics: k)
            #expect(rect.x0 >= 0 && rect.x0 <= rect.x1 && rect.x1 <= Int(w) && rect.y0 >= 0 && rect.y0 <= rect.y1 && rect.y1 <= Int(h))
            if rect != .whole(k) { cropped += 1 }
            // The grown grid in box-local coordinates, and the camera there.
            let grow = Double((SurfaceMap.bridge + 1) * map.voxelSize)
            let lo = SIMD3<Double>(map.origin) - grow
            let hi = SIMD3<Double>(map.origin + Vec3(Float(map.dims.x), Float(map.dims.y), Float(map.dims.z)) * map.voxelSize) + grow
            let o = SIMD3<Double>(box.toLocal(direction: pose.t - box.center))
            let rx = SIMD3<Double>(box.toLocal(direction: pose.x)), ry = SIMD3<Double>(box.toLocal(direction: pose.y))
            let rz = SIMD3<Double>(box.toLocal(direction: pose.z))
            for _ in 0..<400 {
                let x = Int(rng.float(0...Float(w) - 0.01)), y = Int(rng.float(0...Float(h) - 0.01))
                let u = (Double(x) + 0.5 - Double(k.cx)) / Double(k.fx), v = (Double(y) + 0.5 - Double(k.cy)) / Double(k.fy)
                let hits = meets(o, rx * u - ry * v - rz, lo, hi)
                let inRect = x >= rect.x0 && x < rect.x1 && y >= rect.y0 && y < rect.y1
                if !inRect {
                    checked += 1
                    #expect(!hits, "trial \(trial): pixel (\(x), \(y)) outside \(rect) meets the grid")
                } else if hits {
                    inside += 1
                }
            }
        }
        // Not vacuous: many rectangles crop the image, many pixels outside them were cast, and
        // pixels inside them do reach the grid.
        #expect(cropped > 100 && checked > 10_000 && inside > 10_000, "\(cropped) \(checked) \(inside)")
    }
}
