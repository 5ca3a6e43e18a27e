import Glibc

/// Whether views on the rings around the box could cover surface well (`SurfaceMap.judgeReach`,
/// `SurfaceMap.facingShare`): of the ring positions (`SurfaceMap.ringEyes`) that face the surface
/// within `maxIncidenceDeg`, at least `minViews` see it, with the spread `minSpreadDeg`. A ring
/// position sees the surface at `p` when a march from 2 voxels off the surface (along its normal)
/// towards it leaves the grid without meeting an occupied voxel, the first 3 voxels of the march
/// aside (the element's own band, thickened by sensor noise). The march samples every 0.7 voxel.
///
/// Built once for a pass over the elements: it holds the thresholds as cosines and, per block of
/// 4 x 4 x 4 voxels, how many blocks away the nearest occupied voxel's block is. A march steps
/// over the samples that fall in the cube of blocks around it that holds none (most of a ray's
/// length lies in free or unknown space), so it reads the same voxels' verdicts as a march over
/// every sample, for a fraction of the cost.
struct RingReach {
    let eyes: [Vec3]
    let incidenceCos: Float, spreadCos: Float, needed: Int, spreadFree: Bool
    let voxel: Float, origin: Vec3, dims: SIMD3<Int>
    /// Per block of `1 << blockShift` voxels a side, by block index (z · blockDims.y + y) ·
    /// blockDims.x + x: how far the nearest block holding an occupied voxel is, in blocks along
    /// the farthest axis (0: this one; d: the blocks less than d away hold none), capped at
    /// `farBlocks`.
    let clearance: [UInt8]
    /// Per block, its occupied voxels: bit (z · side + y) · side + x of the voxel at (x, y, z)
    /// within it (side = 4: 64 bits), where the march reads them (a cache line holds 8 blocks'
    /// worth; the grid's states, a byte a voxel, miss the cache along most rays).
    let occupancy: [UInt64]
    let blockDims: SIMD3<Int>
    static let blockShift = 2, farBlocks: UInt8 = 8  // 4³ = 64 voxels a block: `occupancy`'s UInt64
    static let step: Float = 0.7, skip: Float = 3

    init(eyes: [Vec3], options: SurfaceOptions, voxel: Float, origin: Vec3, dims: SIMD3<Int>, states st: UnsafeBufferPointer<UInt8>) {
        self.eyes = eyes
        incidenceCos = cos(options.maxIncidenceDeg * .pi / 180)
        spreadCos = cos(options.minSpreadDeg * .pi / 360)
        needed = max(1, Int(options.minViews))
        spreadFree = options.minSpreadDeg <= 0
        self.voxel = voxel; self.origin = origin; self.dims = dims
        let s = RingReach.blockShift, side = 1 << s
        let bd = SIMD3((dims.x + side - 1) >> s, (dims.y + side - 1) >> s, (dims.z + side - 1) >> s)
        blockDims = bd
        var b = [UInt8](repeating: RingReach.farBlocks, count: bd.x * bd.y * bd.z)
        var m = [UInt64](repeating: 0, count: bd.x * bd.y * bd.z)
        let nx = dims.x, ny = dims.y, nz = dims.z
        guard st.count >= nx * ny * nz else { clearance = b; occupancy = m; return }
        let occupied = VoxelState.occupied.rawValue
        guard let base = st.baseAddress else { clearance = b; occupancy = m; return }
        let raw = UnsafeRawPointer(base)
        m.withUnsafeMutableBufferPointer { mp in
            for z in 0..<nz {
                for y in 0..<ny {
                    let row = (z * ny + y) * nx
                    let blockRow = ((z >> s) * bd.y + (y >> s)) * bd.x
                    let bitRow = ((z & (side - 1)) << (2 * s)) | ((y & (side - 1)) << s)
                    @inline(__always) func mark(_ x: Int) { mp[blockRow + (x >> s)] |= 1 << UInt64(bitRow | (x & (side - 1))) }
                    // Eight voxels a word: bit 1 of a byte set and bit 0 clear is the state 2 (occupied).
                    var x = 0
                    while x + 8 <= nx {
                        let w = raw.loadUnaligned(fromByteOffset: row + x, as: UInt64.self)
                        var hits = w & ~(w << 1) & 0x0202_0202_0202_0202
                        while hits != 0 {
                            mark(x + hits.trailingZeroBitCount >> 3)
                            hits &= hits - 1
                        }
                        x += 8
                    }
                    while x < nx {
                        if st[row + x] & 3 == occupied { mark(x) }
                        x += 1
                    }
                }
            }
        }
        b.withUnsafeMutableBufferPointer { bp in
            for i in bp.indices where m[i] != 0 { bp[i] = 0 }
            // The Chebyshev distance to the nearest block holding an occupied voxel, capped at
            // `farBlocks`: separable (min over one axis of max(|offset|, distance so far)).
            var line = [UInt8](repeating: 0, count: max(bd.x, bd.y, bd.z))
            for axis in 0..<3 {
                let n = bd[axis], stride = axis == 0 ? 1 : (axis == 1 ? bd.x : bd.x * bd.y)
                let (ca, cb) = axis == 0 ? (bd.y, bd.z) : (axis == 1 ? (bd.x, bd.z) : (bd.x, bd.y))
                for a in 0..<ca {
                    for c in 0..<cb {
                        let base = axis == 0 ? (c * bd.y + a) * bd.x : (axis == 1 ? c * bd.x * bd.y + a : c * bd.x + a)
                        for i in 0..<n { line[i] = bp[base + i * stride] }
                        for i in 0..<n {
                            var best = line[i]
                            var k = 1
                            while k < Int(best) {
                                if i - k >= 0 { best = min(best, max(UInt8(k), line[i - k])) }
                                if i + k < n { best = min(best, max(UInt8(k), line[i + k])) }
                                k += 1
                            }
                            bp[base + i * stride] = best
                        }
                    }
                }
            }
        }
        clearance = b; occupancy = m
    }

    /// Whether the ring views could cover the surface at box-local `p` well: `n` is its normal
    /// (the march starts 2 voxels off the surface along it), `facing` the normal the incidence is
    /// taken to (the element's, or one of its facings).
    func covers(at p: Vec3, normal n: Vec3, facing: Vec3) -> Bool {
        let g0 = (p + n * (2 * voxel) - origin) / voxel
        var count = 0, sum = Vec3(0, 0, 0)
        for eye in eyes {
            let d = eye - p
            let dir = d / length(d)
            guard dot(dir, facing) >= incidenceCos, isClear(from: g0, direction: dir) else { continue }
            count += 1; sum += dir
            if count >= needed && (count < 2 ? spreadFree : length(sum) / Float(count) <= spreadCos) { return true }
        }
        return false
    }

    /// Whether the march from grid position `g0` (voxel units from the grid's origin) along the
    /// unit `dir` leaves the grid without meeting an occupied voxel: the samples g0 + dir · t,
    /// t = skip + step · k (k = 0, 1, ...; at most `limit`), each in voxel floor(g0 + dir · t).
    func isClear(from g0: Vec3, direction dir: Vec3) -> Bool {
        let fx = Float(dims.x), fy = Float(dims.y), fz = Float(dims.z)
        let s = RingReach.blockShift, side = Float(1 << s), mask = (1 << s) - 1
        let step = RingReach.step, skip = RingReach.skip
        let limit = RingReach.limit(dims)
        let bx = blockDims.x, bxy = blockDims.x * blockDims.y
        // Where the ray leaves the cube of blocks less than r away from block b, per axis:
        // t = ((b + r) · side − g0) / dir above, ((b − r + 1) · side − g0) / dir below. An axis the
        // ray does not move along counts as above with a tiny dir: its t is huge (g0 lies inside
        // the block there, below its upper bound).
        let up = dir .>= 0
        let inv = Vec3(1, 1, 1) / dir.replacing(with: 1e-30, where: dir .== 0)
        let below = SIMD3<Int32>(repeating: 1).replacing(with: 0, where: up)
        let sign = SIMD3<Int32>(repeating: -1).replacing(with: 1, where: up)
        return clearance.withUnsafeBufferPointer { cl in
            occupancy.withUnsafeBufferPointer { occ in
                var k = 0
                while k < limit {
                    let q = g0 + dir * (skip + step * Float(k))
                    // floor(q) inside the grid ⟺ q inside it; q ≥ 0, so truncation is floor.
                    guard q.x >= 0, q.y >= 0, q.z >= 0, q.x < fx, q.y < fy, q.z < fz else { return true }
                    let x = Int(q.x), y = Int(q.y), z = Int(q.z)
                    let b = (z >> s) &* bxy &+ (y >> s) &* bx &+ (x >> s)
                    let r = Int(cl[b])
                    if r > 0 {
                        // No occupied voxel in the blocks less than r away: on to the first sample
                        // past where the ray leaves them (one a hair before is taken again, harmless).
                        let b3 = SIMD3<Int32>(Int32(truncatingIfNeeded: x), Int32(truncatingIfNeeded: y), Int32(truncatingIfNeeded: z)) &>> Int32(s)
                        let bound = SIMD3<Float>(b3 &+ sign &* Int32(truncatingIfNeeded: r) &+ below) * side
                        let out = ((bound - g0) * inv).min()
                        let next = (out - skip) / step - 1e-3
                        guard next < Float(limit) else { return true }
                        var j = Int(max(next, 0))
                        if Float(j) < next { j += 1 }
                        k = max(k + 1, j)
                        continue
                    }
                    if occ[b] & (1 << UInt64(((z & mask) << (2 * s)) | ((y & mask) << s) | (x & mask))) != 0 { return false }
                    k += 1
                }
                return true
            }
        }
    }

    /// The most samples a march takes: enough to cross the grid along its three edges.
    static func limit(_ dims: SIMD3<Int>) -> Int { Int(Float(dims.x + dims.y + dims.z) / step) + 8 }
}
