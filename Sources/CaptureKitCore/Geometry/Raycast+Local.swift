import CCaptureKitSIMD

/// Variants of the grid kernel for coverage: where each ray hits the box, in the box's frame.
///
/// They share the slab test `slab4` with `cast4` but skip the distance (no square root) and turn
/// the ray parameter of the hit into a hit point `d · t` relative to the camera.
extension BoxRaycaster {
    /// Faces and hit points (relative to the camera, in the box's frame) of four rays; points of
    /// misses (face −1) are undefined.
    @inline(__always)
    func cast4Points(_ u: SIMD4<Float>, _ vx: SIMD4<Float>, _ vy: SIMD4<Float>, _ vz: SIMD4<Float>,
                     inside: Bool) -> (SIMD4<Int32>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        let s = slab4(u, vx, vy, vz, inside: inside)
        return (SIMD4<Int32>(repeating: -1).replacing(with: s.face, where: s.hit), s.dx * s.t, s.dy * s.t, s.dz * s.t)
    }

    /// Casts through the centre of every pixel of the `width × height` image, row-major, like
    /// `castGrid`, writing each ray's face (−1 on a miss) and its hit point relative to the
    /// camera in the box's frame (add the camera's box-frame offset for box-local coordinates).
    /// Points of misses are undefined. Every buffer must hold width × height elements (nothing
    /// is written otherwise).
    func castGridPoints(faces: UnsafeMutableBufferPointer<Int32>, x: UnsafeMutableBufferPointer<Float>,
                        y: UnsafeMutableBufferPointer<Float>, z: UnsafeMutableBufferPointer<Float>) {
        let count = width * height
        guard faces.count >= count, x.count >= count, y.count >= count, z.count >= count,
              let f = faces.baseAddress, let px = x.baseAddress, let py = y.baseAddress, let pz = z.baseAddress else { return }
        let step = SIMD4<Float>(0.5, 1.5, 2.5, 3.5)
        for row in 0..<height {
            let v = Float(row) + 0.5
            let vx = SIMD4<Float>(repeating: v * b.x + c.x), vy = SIMD4<Float>(repeating: v * b.y + c.y)
            let vz = SIMD4<Float>(repeating: v * b.z + c.z)
            var col = 0
            var u = step
            while col < width {
                let (face, qx, qy, qz) = cast4Points(u, vx, vy, vz, inside: cameraInside)
                for k in 0..<min(4, width - col) {
                    let i = row * width + col + k
                    f[i] = face[k]; px[i] = qx[k]; py[i] = qy[k]; pz[i] = qz[k]
                }
                u += 4
                col += 4
            }
        }
    }

    /// The sub-face cells the grid rays hit first, compacted: for every ray of the `width ×
    /// height` grid that hits the box, in row-major order, its cell index `(face · n + row) · n +
    /// column` (faces split into n × n cells, the column along the face frame's +x and row 0 at
    /// its +y edge: the frames of `Box.face`), written one after another from `cells[0]`; misses
    /// write nothing. `cells` must hold width × height elements (nothing is written otherwise).
    /// - Parameters:
    ///   - camera: the camera's position relative to the box centre, in the box's frame.
    ///   - halfSize: the box's half edge lengths.
    ///   - kernel: the process's choice by default (`SIMDDispatch`); both give identical cells.
    /// - Returns: how many rays hit (the number of cells written).
    func castGridCells(cellsPerSide n: Int, camera: SIMD3<Float>, halfSize h: SIMD3<Float>,
                       cells: UnsafeMutableBufferPointer<Int32>, kernel: SIMDKernel = SIMDDispatch.kernel) -> Int {
        guard cells.count >= width * height, n >= 1, n <= 1 << 10, let out = cells.baseAddress else { return 0 }  // 6n² < 2^22
        let m = CellMapper(n: n, camera: camera, halfSize: h)
        if SIMDDispatch.resolve(kernel) == .avx2 {
            var k = simdCaster
            var c = cks_cell_mapper(n: m.nf[0], camera: (camera.x, camera.y, camera.z), half: (m.hx[0], m.hy[0], m.hz[0]),
                                    scale: (m.sx[0], m.sy[0], m.sz[0]), top: m.top[0])
            return cks_box_cast_grid_cells_avx2(&k, &c, width, height, out)
        } else if cameraInside {
            return castRowCells(m, UnsafeMutableRawPointer(out), CameraInside.self)
        } else {
            return castRowCells(m, UnsafeMutableRawPointer(out), CameraOutside.self)
        }
    }

    /// Appends the cells of the first `lanes` rays of a group that hit (branch-free: every lane is
    /// stored at the end, which advances past it only for a hit); returns the new count. `count`
    /// never passes the index of the ray being written, so the output stays within the grid.
    @inline(__always)
    private func appendHits(_ cell: SIMD4<Int32>, lanes: Int, to out: UnsafeMutableRawPointer, at count: Int) -> Int {
        var n = count
        for k in 0..<lanes {
            out.storeBytes(of: cell[k], toByteOffset: n &* 4, as: Int32.self)
            n &+= cell[k] >= 0 ? 1 : 0
        }
        return n
    }

    private func castRowCells<Mode: CastMode>(_ m: CellMapper, _ out: UnsafeMutableRawPointer, _: Mode.Type) -> Int {
        let inside = Mode.inside
        let step = SIMD4<Float>(0.5, 1.5, 2.5, 3.5)
        var count = 0
        for row in 0..<height {
            let v = Float(row) + 0.5
            let vx = SIMD4<Float>(repeating: v * b.x + c.x), vy = SIMD4<Float>(repeating: v * b.y + c.y)
            let vz = SIMD4<Float>(repeating: v * b.z + c.z)
            var col = 0
            var u = step
            while col < width {
                let (face, qx, qy, qz) = cast4Points(u, vx, vy, vz, inside: inside)
                // Most groups miss the box entirely (rows above and below it, columns beside it):
                // they skip the cell mapping and write nothing.
                if anyLane(face .>= 0) {
                    count = appendHits(m.cells(face, qx, qy, qz), lanes: min(4, width - col), to: out, at: count)
                }
                u += 4
                col += 4
            }
        }
        return count
    }
}

/// Maps box-frame hit points (relative to the camera) on known faces to sub-face cells.
struct CellMapper {
    let nf: SIMD4<Float>
    let camera: SIMD3<Float>
    let sx: SIMD4<Float>, sy: SIMD4<Float>, sz: SIMD4<Float>
    let hx: SIMD4<Float>, hy: SIMD4<Float>, hz: SIMD4<Float>
    let top: SIMD4<Float>

    init(n: Int, camera: SIMD3<Float>, halfSize h: SIMD3<Float>) {
        let nf = Float(n)
        self.nf = SIMD4(repeating: nf)
        self.camera = camera
        sx = SIMD4(repeating: nf / (2 * h.x)); sy = SIMD4(repeating: nf / (2 * h.y)); sz = SIMD4(repeating: nf / (2 * h.z))
        hx = SIMD4(repeating: h.x); hy = SIMD4(repeating: h.y); hz = SIMD4(repeating: h.z)
        top = SIMD4(repeating: nf - 0.5)
    }

    @inline(__always)
    func cells(_ face: SIMD4<Int32>, _ qx: SIMD4<Float>, _ qy: SIMD4<Float>, _ qz: SIMD4<Float>) -> SIMD4<Int32> {
        // Box-local coordinates scaled to [0, n] along each axis, and their mirrors n − value.
        let x = (qx + camera.x + hx) * sx, y = (qy + camera.y + hy) * sy, z = (qz + camera.z + hz) * sz
        let mx = nf - x, my = nf - y, mz = nf - z
        // Column along the face's +x: front −x, left +z, right −z, the others +x. Row down from
        // the face's +y edge: −y on the side faces, −z on the bottom, +z on the top.
        var cu = x.replacing(with: mx, where: face .== 0).replacing(with: z, where: face .== 1).replacing(with: mz, where: face .== 2)
        var cv = my.replacing(with: mz, where: face .== 3).replacing(with: z, where: face .== 4)
        // Clamp into [0, n − 0.5] (a miss's NaN becomes 0), floor, and combine in float (exact
        // small integers; SSE2 has no 32-bit integer multiply), then one conversion.
        let zero = SIMD4<Float>(repeating: 0)
        cu = zero.replacing(with: cu, where: cu .>= zero)
        cu = cu.replacing(with: top, where: cu .> top)
        cv = zero.replacing(with: cv, where: cv .>= zero)
        cv = cv.replacing(with: top, where: cv .> top)
        // The face as a float from its bits: (face + 2^23 as integer bits) − 2^23 (misses masked below).
        let faceF = unsafeBitCast(face &+ 0x4B00_0000, to: SIMD4<Float>.self) - 8_388_608
        let cell = floorToInt32((faceF * nf + floorFloat(cv)) * nf + floorFloat(cu))
        return SIMD4<Int32>(repeating: -1).replacing(with: cell, where: face .>= 0)
    }
}

/// floor(v) for 0 ≤ v < 2^22 with SSE2-friendly operations (see `floorToInt32`).
@inline(__always)
func floorFloat(_ v: SIMD4<Float>) -> SIMD4<Float> {
    let magic = SIMD4<Float>(repeating: 12_582_912)
    let r = (v + magic) - magic
    return r.replacing(with: r - 1, where: r .> v)
}

/// floor(v) as integers for 0 ≤ v < 2^22, with plain SIMD float operations (the generic
/// `SIMD4<Int32>(_:rounding:)` converts lane by lane through a slow generic path): adding and
/// subtracting 1.5 · 2^23 rounds to the nearest integer, a compare corrects it to the floor, and
/// the integer is read from the bits of floor + 1.5 · 2^23.
@inline(__always)
func floorToInt32(_ v: SIMD4<Float>) -> SIMD4<Int32> {
    let magic = SIMD4<Float>(repeating: 12_582_912)
    var r = (v + magic) - magic
    r = r.replacing(with: r - 1, where: r .> v)
    return unsafeBitCast(r + magic, to: SIMD4<Int32>.self) &- unsafeBitCast(magic, to: SIMD4<Int32>.self)
}
