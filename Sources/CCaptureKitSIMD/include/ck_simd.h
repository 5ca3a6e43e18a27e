/*
 * ck_simd.h — kernels compiled for instruction sets beyond the baseline x86-64 build, chosen at
 * run time. Internal to the package (not installed, not exported from libcapturekit.so: the
 * linker version script exports only ck_*; these names start with cks_).
 *
 * Swift cannot compile one function for another target, so each kernel that has a faster
 * variant for a wider instruction set lives here, in C, with the target attribute on that
 * function alone (`CKS_AVX2` below): the rest of the library stays baseline x86-64, and nothing
 * here runs unless `cks_cpu_has_avx2()` said so. The Swift side decides once per process
 * (`SIMDDispatch` in CaptureKitCore/Support/SIMDDispatch.swift, which also honours the
 * CAPTUREKIT_NO_AVX2 environment variable) and passes the choice down.
 *
 * Every kernel here must give results bit-identical to its baseline (Swift) twin: the same
 * operations in the same order, no fused multiply-add (the file turns contraction off and the
 * AVX2 target has no FMA), the same NaN/infinity handling (ordered, non-signalling compares).
 */
#ifndef CK_SIMD_H
#define CK_SIMD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when the CPU has AVX2 and the OS saves the YMM registers (CPUID + XGETBV), else 0. */
int cks_cpu_has_avx2(void);

/**
 * One camera against one box, precomputed per call (BoxRaycaster in Raycast+Batch.swift): the ray
 * direction through pixel (u, v) in the box frame is u·a + v·b + c (not normalised); lo and hi are
 * the slab bounds along each box axis relative to the camera; inside = 1 when the camera is inside
 * the closed box (every ray reports its exit face), else 0.
 */
typedef struct cks_box_caster {
    float a[3], b[3], c[3];
    float lo[3], hi[3];
    int32_t inside;
    int32_t reserved;
} cks_box_caster;

/**
 * AVX2 twin of BoxRaycaster.cast(pixelsUV:...): n rays through the interleaved (u, v) pixels
 * uv[2i], uv[2i + 1]; face (0...5, −1 on a miss) and distance (+inf on a miss) per ray.
 * Call only when cks_cpu_has_avx2() returned 1.
 */
void cks_box_cast_pixels_avx2(const cks_box_caster *k, const float *uv, size_t n, int32_t *faces, float *distances);

/**
 * AVX2 twin of BoxRaycaster.castGrid: every pixel centre (col + 0.5, row + 0.5) of a
 * width × height image, row-major. Call only when cks_cpu_has_avx2() returned 1.
 */
void cks_box_cast_grid_avx2(const cks_box_caster *k, size_t width, size_t height, int32_t *faces, float *distances);

/**
 * Maps hit points to sub-face cells (CellMapper in Raycast+Local.swift): faces split into n × n
 * cells; camera = the camera's position relative to the box centre in the box frame; half = the
 * box's half sizes; scale = n / (2 · half) per axis; top = n − 0.5.
 */
typedef struct cks_cell_mapper {
    float n;
    float camera[3], half[3], scale[3];
    float top;
} cks_cell_mapper;

/**
 * AVX2 twin of BoxRaycaster.castGridCells: for every ray of the width × height grid that hits the
 * box, in row-major order, its cell index, written one after another from cells[0] (which holds
 * width × height elements); returns how many. Call only when cks_cpu_has_avx2() returned 1.
 */
size_t cks_box_cast_grid_cells_avx2(const cks_box_caster *k, const cks_cell_mapper *m, size_t width, size_t height,
                                    int32_t *cells);

/**
 * AVX2-target twin of DepthFrameCodec.unpack4 (DepthFrameCodecV4.swift), with the same contract:
 * the caller has checked the row bytes (modes[y] in 0...2 or 4...6), the row sizes, the padding
 * nibbles and that the escapes (escape_count low bytes, then as many high bytes) hold one entry per
 * escape, and that 8 readable bytes follow the high bytes; palette (NULL for none) holds entries
 * 0...palette_count; rows is scratch of 4 (⌈w/8⌉·8 + 24) + ⌈w/8⌉·8 + 16 bytes;
 * d receives w × h samples. Call only when cks_cpu_has_avx2() returned 1.
 */
void cks_depth_unpack4_avx2(const uint8_t *modes, const uint8_t *nibble_rows, const uint8_t *byte_rows,
                            const uint8_t *escapes, size_t escape_count, const uint16_t *palette,
                            size_t palette_count, size_t w, size_t h, uint8_t *rows, uint16_t *d);

/**
 * AVX2 twins of the flying-pixel filter (SurfaceMap.dropFlyingPixels, SurfaceMap.swift).
 * cks_valid_copy_avx2: to[i] = from[i] where 0 < from[i] <= max_depth, else NaN (n values).
 * cks_flying_row_avx2: the groups of one row y, columns x_start... in groups of 8 then 4, while a
 * whole group fits before x_end; up, row and down are such copies of rows y - 1, y, y + 1 with
 * column x at [x - x_start + 1]; src and dst are row y of the frame and of its kept copy (a
 * dropped pixel becomes 0 in dst); per_z = 8 / fx, base = 2 · voxel. Returns the first column it
 * did not take (the caller's scalar tail runs from there). Call only when cks_cpu_has_avx2()
 * returned 1.
 */
void cks_valid_copy_avx2(const float *from, float *to, size_t n, float max_depth);
size_t cks_flying_row_avx2(const float *up, const float *row, const float *down, const float *src, float *dst,
                           size_t x_start, size_t x_end, float per_z, float base, float farthest);

/**
 * One fused frame in grid units (SurfaceMap.fuseKernel): the camera centre gb and its x axis ax
 * per voxel, the grid grown by the kernel's margin (lo, hi), the depth range along the optical
 * axis that can reach it (z_near, z_far), max_depth, w_x (z per unit of u), the grid's dims.
 */
typedef struct cks_fuse_frame {
    float gb[3], ax[3];
    float lo[3], hi[3];
    float z_near, z_far, max_depth, w_x;
    uint32_t nx, ny, nz, reserved;
} cks_fuse_frame;

/**
 * AVX2 twin of passes 1 and 2 of one row of SurfaceMap.fuseKernel: the row's direction (dir_x,
 * dir_y, dir_z) and w_row, its depth and u per column (padded = a multiple of 4 columns each),
 * the row points by axis (cur: x, y, z rows row_stride floats apart, column x at slot x + 1;
 * prev: the row above), and the eight index rows of `padded` entries from lanes (hit, three shell
 * steps, the left, upper and upper-left midpoints, the valid lanes). Call only when
 * cks_cpu_has_avx2() returned 1.
 */
void cks_fuse_row_avx2(const cks_fuse_frame *k, float dir_x, float dir_y, float dir_z, float w_row, const float *depth,
                       const float *us, size_t padded, float *cur, const float *prev, size_t row_stride, int32_t *lanes);

#ifdef __cplusplus
}
#endif
#endif
