import CCaptureKitSIMD
import Glibc

/// Casts many pixel rays of one camera against one box, four rays at a time with `SIMD4<Float>`.
///
/// Everything that depends only on the pose, the intrinsics and the box is computed once here (in
/// Double): the ray direction in the box frame is `u·a + v·b + c`, and the slab bounds relative to
/// the camera are constants. Comparisons use masks and `replacing(with:where:)` (compiled to
/// plain min/max/blend instructions) rather than `pointwiseMin` (IEEE minNum, slower). Answers
/// equal `Ray.intersect(box:)` except for rays within float rounding of an edge, which may report
/// either neighbouring face. A non-finite pixel is a miss.
public struct BoxRaycaster: Sendable {
    let a: SIMD3<Float>, b: SIMD3<Float>, c: SIMD3<Float>
    /// Slab bounds along each local axis, relative to the camera: −h − o and h − o.
    let lo: SIMD3<Float>, hi: SIMD3<Float>
    /// The camera is inside the (closed) box: every ray reports its exit face.
    public let cameraInside: Bool
    public let width: Int, height: Int

    public init(pose: Pose, intrinsics k: Intrinsics, box: Box) {
        let cy = cos(Double(box.yaw)), sy = sin(Double(box.yaw))
        func local(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(cy * v.x - sy * v.z, v.y, sy * v.x + cy * v.z) }
        func rot(_ v: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3<Double>(pose.x) * v.x + SIMD3<Double>(pose.y) * v.y + SIMD3<Double>(pose.z) * v.z
        }
        func f(_ v: SIMD3<Double>) -> SIMD3<Float> { SIMD3<Float>(Float(v.x), Float(v.y), Float(v.z)) }
        let fx = Double(k.fx), fy = Double(k.fy)
        a = f(local(rot(SIMD3(1 / fx, 0, 0))))
        b = f(local(rot(SIMD3(0, -1 / fy, 0))))
        c = f(local(rot(SIMD3(-Double(k.cx) / fx, Double(k.cy) / fy, -1))))
        let o = local(SIMD3<Double>(pose.t) - SIMD3<Double>(box.center))
        let h = SIMD3<Double>(box.halfSize)
        // A camera exactly on a slab's boundary plane gives a zero bound; 0 · ∞ (a ray lying in
        // that plane) would be NaN. Nudging the bound to ∓tiny keeps the closed-box answer: the ray
        // stays inside that slab, and any other ray moves by 1e-30 m.
        let tiny = Float.leastNormalMagnitude
        var l = f(-h - o), u = f(h - o)
        for i in 0..<3 {
            if l[i] == 0 { l[i] = -tiny }
            if u[i] == 0 { u[i] = tiny }
        }
        lo = l
        hi = u
        cameraInside = abs(o.x) <= h.x && abs(o.y) <= h.y && abs(o.z) <= h.z
        width = Int(k.width); height = Int(k.height)
    }

    /// Faces and distances of four rays with pixel coordinates (u, v).
    @inline(__always)
    func cast4(_ u: SIMD4<Float>, _ v: SIMD4<Float>, inside: Bool) -> (SIMD4<Int32>, SIMD4<Float>) {
        cast4(u, v * b.x + c.x, v * b.y + c.y, v * b.z + c.z, inside: inside)
    }

    /// The same with the v terms (v·b + c per axis) given, so a grid row computes them once.
    @inline(__always)
    func cast4(_ u: SIMD4<Float>, _ vx: SIMD4<Float>, _ vy: SIMD4<Float>, _ vz: SIMD4<Float>,
               inside: Bool) -> (SIMD4<Int32>, SIMD4<Float>) {
        let s = slab4(u, vx, vy, vz, inside: inside)
        let len = (s.dx * s.dx + s.dy * s.dy + s.dz * s.dz).squareRoot()
        let inf = SIMD4<Float>(repeating: .infinity)
        let hit = s.hit .& (len .< inf)  // len: non-finite pixels miss
        return (SIMD4<Int32>(repeating: -1).replacing(with: s.face, where: hit), inf.replacing(with: s.t * len, where: hit))
    }

    /// The slab test of four rays (direction u·a + v·b + c in the box frame, not normalised): the
    /// face each enters (camera outside) or exits (camera inside), the ray parameter t of that hit
    /// (distance = t · |d|), whether it hits, and the directions. The one kernel behind `cast4`
    /// and the coverage variant `cast4Points`.
    @inline(__always)
    func slab4(_ u: SIMD4<Float>, _ vx: SIMD4<Float>, _ vy: SIMD4<Float>, _ vz: SIMD4<Float>, inside: Bool)
        -> (face: SIMD4<Int32>, t: SIMD4<Float>, hit: SIMDMask<SIMD4<Int32>>, dx: SIMD4<Float>, dy: SIMD4<Float>, dz: SIMD4<Float>) {
        let dx = u * a.x + vx
        let dy = u * a.y + vy
        let dz = u * a.z + vz
        let one = SIMD4<Float>(repeating: 1)
        let ix = one / dx, iy = one / dy, iz = one / dz
        let t1x = ix * lo.x, t2x = ix * hi.x
        let t1y = iy * lo.y, t2y = iy * hi.y
        let t1z = iz * lo.z, t2z = iz * hi.z
        // Direction positive on an axis ⇔ t1 < t2 ⇔ the ray enters through the negative face.
        let px = t1x .< t2x, py = t1y .< t2y, pz = t1z .< t2z
        let nearX = t2x.replacing(with: t1x, where: px), farX = t1x.replacing(with: t2x, where: px)
        let nearY = t2y.replacing(with: t1y, where: py), farY = t1y.replacing(with: t2y, where: py)
        let nearZ = t2z.replacing(with: t1z, where: pz), farZ = t1z.replacing(with: t2z, where: pz)
        if !inside {
            // Entering face: x → left(1)/right(2), y → bottom(3)/top(4), z → front(0)/back(5).
            var tNear = nearX
            var face = SIMD4<Int32>(repeating: 2).replacing(with: 1, where: px)
            let gy = nearY .> tNear
            tNear = tNear.replacing(with: nearY, where: gy)
            face = face.replacing(with: SIMD4<Int32>(repeating: 4).replacing(with: 3, where: py), where: gy)
            let gz = nearZ .> tNear
            tNear = tNear.replacing(with: nearZ, where: gz)
            face = face.replacing(with: SIMD4<Int32>(repeating: 5).replacing(with: 0, where: pz), where: gz)
            var tFar = farX
            tFar = tFar.replacing(with: farY, where: farY .< tFar)
            tFar = tFar.replacing(with: farZ, where: farZ .< tFar)
            return (face, tNear, (tNear .<= tFar) .& (tNear .>= 0), dx, dy, dz)
        } else {
            // Exit face: x → right(2)/left(1), y → top(4)/bottom(3), z → back(5)/front(0).
            var tFar = farX
            var face = SIMD4<Int32>(repeating: 1).replacing(with: 2, where: px)
            let ly = farY .< tFar
            tFar = tFar.replacing(with: farY, where: ly)
            face = face.replacing(with: SIMD4<Int32>(repeating: 3).replacing(with: 4, where: py), where: ly)
            let lz = farZ .< tFar
            tFar = tFar.replacing(with: farZ, where: lz)
            face = face.replacing(with: SIMD4<Int32>(repeating: 0).replacing(with: 5, where: pz), where: lz)
            return (face, tFar, (tFar .>= 0) .& (tFar .< SIMD4<Float>(repeating: .infinity)), dx, dy, dz)
        }
    }

    /// The per-call constants for the C twins of these kernels (CCaptureKitSIMD).
    var simdCaster: cks_box_caster {
        cks_box_caster(a: (a.x, a.y, a.z), b: (b.x, b.y, b.z), c: (c.x, c.y, c.z), lo: (lo.x, lo.y, lo.z),
                       hi: (hi.x, hi.y, hi.z), inside: cameraInside ? 1 : 0, reserved: 0)
    }

    /// Casts `faces.count` rays through the pixels `pixelsUV` (interleaved u, v; at least
    /// 2 × faces.count values). `distances` must have as many elements as `faces`. `kernel`: the
    /// process's choice by default (`SIMDDispatch`); both give bit-identical results.
    public func cast(pixelsUV: UnsafeBufferPointer<Float>, faces: UnsafeMutableBufferPointer<Int32>,
                     distances: UnsafeMutableBufferPointer<Float>, kernel: SIMDKernel = SIMDDispatch.kernel) {
        let n = min(faces.count, distances.count, pixelsUV.count / 2)
        guard n > 0, let src = pixelsUV.baseAddress, let fOut = faces.baseAddress, let dOut = distances.baseAddress else { return }
        if SIMDDispatch.resolve(kernel) == .avx2 {
            var k = simdCaster
            cks_box_cast_pixels_avx2(&k, src, n, fOut, dOut)
        } else if cameraInside {
            castPixels(n, UnsafeRawPointer(src), UnsafeMutableRawPointer(fOut), UnsafeMutableRawPointer(dOut), CameraInside.self)
        } else {
            castPixels(n, UnsafeRawPointer(src), UnsafeMutableRawPointer(fOut), UnsafeMutableRawPointer(dOut), CameraOutside.self)
        }
    }

    /// Specialised per mode (a generic parameter, so each copy has the branch folded away).
    private func castPixels<Mode: CastMode>(_ n: Int, _ src: UnsafeRawPointer, _ fOut: UnsafeMutableRawPointer,
                                            _ dOut: UnsafeMutableRawPointer, _: Mode.Type) {
        let inside = Mode.inside
        var i = 0
        while i + 4 <= n {
            let uv = src.loadUnaligned(fromByteOffset: i * 8, as: SIMD8<Float>.self)
            let (f, d) = cast4(uv.evenHalf, uv.oddHalf, inside: inside)
            fOut.storeBytes(of: f, toByteOffset: i * 4, as: SIMD4<Int32>.self)
            dOut.storeBytes(of: d, toByteOffset: i * 4, as: SIMD4<Float>.self)
            i += 4
        }
        if i < n {
            var u = SIMD4<Float>(repeating: 0), v = SIMD4<Float>(repeating: 0)
            for k in 0..<(n - i) {
                u[k] = src.load(fromByteOffset: (i + k) * 8, as: Float.self)
                v[k] = src.load(fromByteOffset: (i + k) * 8 + 4, as: Float.self)
            }
            let (f, d) = cast4(u, v, inside: inside)
            for k in 0..<(n - i) {
                fOut.storeBytes(of: f[k], toByteOffset: (i + k) * 4, as: Int32.self)
                dOut.storeBytes(of: d[k], toByteOffset: (i + k) * 4, as: Float.self)
            }
        }
    }

    /// Casts through the centre of every pixel of the `width × height` image, row-major, into
    /// `faces` and `distances` (each at least width × height elements; nothing written otherwise).
    /// `kernel`: as for `cast(pixelsUV:faces:distances:kernel:)`.
    public func castGrid(faces: UnsafeMutableBufferPointer<Int32>, distances: UnsafeMutableBufferPointer<Float>,
                         kernel: SIMDKernel = SIMDDispatch.kernel) {
        let count = width * height
        guard faces.count >= count, distances.count >= count,
              let fOut = faces.baseAddress, let dOut = distances.baseAddress else { return }
        if SIMDDispatch.resolve(kernel) == .avx2 {
            var k = simdCaster
            cks_box_cast_grid_avx2(&k, width, height, fOut, dOut)
        } else if cameraInside {
            castRows(UnsafeMutableRawPointer(fOut), UnsafeMutableRawPointer(dOut), CameraInside.self)
        } else {
            castRows(UnsafeMutableRawPointer(fOut), UnsafeMutableRawPointer(dOut), CameraOutside.self)
        }
    }

    private func castRows<Mode: CastMode>(_ fOut: UnsafeMutableRawPointer, _ dOut: UnsafeMutableRawPointer, _: Mode.Type) {
        let inside = Mode.inside
        let step = SIMD4<Float>(0.5, 1.5, 2.5, 3.5)
        for row in 0..<height {
            let v = Float(row) + 0.5
            let vx = SIMD4<Float>(repeating: v * b.x + c.x), vy = SIMD4<Float>(repeating: v * b.y + c.y)
            let vz = SIMD4<Float>(repeating: v * b.z + c.z)
            let base = row * width
            var col = 0
            var u = step
            while col + 4 <= width {
                let (f, d) = cast4(u, vx, vy, vz, inside: inside)
                u += 4
                fOut.storeBytes(of: f, toByteOffset: (base + col) * 4, as: SIMD4<Int32>.self)
                dOut.storeBytes(of: d, toByteOffset: (base + col) * 4, as: SIMD4<Float>.self)
                col += 4
            }
            if col < width {
                let (f, d) = cast4(u, vx, vy, vz, inside: inside)
                for k in 0..<(width - col) {
                    fOut.storeBytes(of: f[k], toByteOffset: (base + col + k) * 4, as: Int32.self)
                    dOut.storeBytes(of: d[k], toByteOffset: (base + col + k) * 4, as: Float.self)
                }
            }
        }
    }
}

/// Compile-time choice between the two kernels (camera outside: entering face; inside: exit face).
protocol CastMode { static var inside: Bool { get } }
enum CameraInside: CastMode { static var inside: Bool { true } }
enum CameraOutside: CastMode { static var inside: Bool { false } }
