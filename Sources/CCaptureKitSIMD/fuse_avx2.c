/*
 * AVX2 twins of the lane-parallel parts of surface fusion (SurfaceMap.swift), eight pixels at a
 * time instead of four:
 * - cks_valid_copy_avx2 and cks_flying_row_avx2: the copies and the groups of
 *   SurfaceMap.dropFlyingPixels (the flying-pixel filter);
 * - cks_fuse_row_avx2: passes 1 and 2 of a row of SurfaceMap.fuseKernel (the points, their voxel
 *   and shell voxels; the neighbour pairs and their bridge midpoints).
 * Bit-identical by construction: every lane runs the same IEEE operations in the same order as
 * the Swift code (no contraction into FMA; ordered, non-signalling compares, false on NaN as
 * Swift's `.<`; compare-and-select where Swift selects). The results the Swift kernel reads are the
 * same; where a block of 8 holds a half that the 4-lane code would have skipped, that half gets its
 * values written too (rows nobody reads: lanes without a valid point, or -1 "no bridge" midpoints,
 * which mark nothing). Tests/CaptureKitCoreTests compares the maps fused by both, bit for bit.
 */
#include "ck_simd.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma STDC FP_CONTRACT OFF

#define CKS_AVX2 __attribute__((target("avx2")))

/* b where mask, else a: Swift's a.replacing(with: b, where: mask). */
#define SEL(a, b, mask) _mm256_blendv_ps((a), (b), (mask))
#define AND(a, b) _mm256_and_ps((a), (b))
#define OR(a, b) _mm256_or_ps((a), (b))
#define CMP(a, b, op) _mm256_cmp_ps((a), (b), (op))

/* Eight lanes, or four (the upper four zero on load, not stored). */
CKS_AVX2 static inline __m256 load_lanes(const float *p, int eight)
{
    return eight ? _mm256_loadu_ps(p) : _mm256_set_m128(_mm_setzero_ps(), _mm_loadu_ps(p));
}

CKS_AVX2 static inline void store_lanes(float *p, __m256 v, int eight)
{
    if (eight) {
        _mm256_storeu_ps(p, v);
    } else {
        _mm_storeu_ps(p, _mm256_castps256_ps128(v));
    }
}

CKS_AVX2 static inline __m256 load_ilanes(const int32_t *p, int eight) { return load_lanes((const float *)p, eight); }
CKS_AVX2 static inline void store_ilanes(int32_t *p, __m256 v, int eight) { store_lanes((float *)p, v, eight); }

CKS_AVX2 static inline int any_lane(__m256 m) { return _mm256_movemask_ps(m) != 0; }

/* ---- the flying-pixel filter ---- */

CKS_AVX2 void cks_valid_copy_avx2(const float *from, float *to, size_t n, float max_depth)
{
    const __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(max_depth), nan = _mm256_set1_ps(__builtin_nanf(""));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(from + i);
        _mm256_storeu_ps(to + i, SEL(nan, v, AND(CMP(v, zero, _CMP_GT_OQ), CMP(v, top, _CMP_LE_OQ))));
    }
    for (; i < n; i++) {
        float v = from[i];
        to[i] = v > 0 && v <= max_depth ? v : __builtin_nanf("");
    }
}

CKS_AVX2 size_t cks_flying_row_avx2(const float *up, const float *row, const float *down, const float *src, float *dst,
                                    size_t x_start, size_t x_end, float per_z, float base, float farthest)
{
    const __m256 far = _mm256_set1_ps(farthest), pz = _mm256_set1_ps(per_z), b0 = _mm256_set1_ps(base);
    const __m256 zero = _mm256_setzero_ps();
    size_t x = x_start;
    while (x + 4 <= x_end) {
        int eight = x + 8 <= x_end;
        size_t c = x - x_start + 1;
        __m256 d = load_lanes(row + c, eight);
        __m256 near = CMP(d, far, _CMP_LE_OQ);
        if (!eight) near = _mm256_blend_ps(near, zero, 0xF0);  /* the zero upper lanes are no pixels */
        if (any_lane(near)) {
            __m256 jump = _mm256_add_ps(_mm256_mul_ps(pz, d), b0);
            __m256 lo = _mm256_sub_ps(d, jump), hi = _mm256_add_ps(d, jump);
#define BETWEEN(a, b) OR(AND(CMP((a), lo, _CMP_LT_OQ), CMP((b), hi, _CMP_GT_OQ)), AND(CMP((b), lo, _CMP_LT_OQ), CMP((a), hi, _CMP_GT_OQ)))
            __m256 flying = AND(near, OR(OR(BETWEEN(load_lanes(row + c - 1, eight), load_lanes(row + c + 1, eight)),
                                            BETWEEN(load_lanes(up + c, eight), load_lanes(down + c, eight))),
                                         OR(BETWEEN(load_lanes(up + c - 1, eight), load_lanes(down + c + 1, eight)),
                                            BETWEEN(load_lanes(up + c + 1, eight), load_lanes(down + c - 1, eight)))));
#undef BETWEEN
            if (any_lane(flying)) store_lanes(dst + x, SEL(load_lanes(src + x, eight), zero, flying), eight);
        }
        x += eight ? 8 : 4;
    }
    return x;
}

/* ---- passes 1 and 2 of a fused row ---- */

typedef struct {
    __m256 magic, gbx, gby, gbz, axx, axy, axz, lox, loy, loz, hix, hiy, hiz;
    __m256 z_near, z_far, max_depth, w_x, fnx, fny, minus1;
    __m256i magic_bits, nx1, ny1, nz1;
} fuse_consts;

/* Per lane the truncated coordinate as an integer (Swift: `trunc` in fuseKernel). */
CKS_AVX2 static inline __m256i trunc8(const fuse_consts *q, __m256 p)
{
    __m256 r = _mm256_add_ps(p, q->magic);
    __m256 above = CMP(_mm256_sub_ps(r, q->magic), p, _CMP_GT_OQ);
    return _mm256_add_epi32(_mm256_sub_epi32(_mm256_castps_si256(r), q->magic_bits), _mm256_castps_si256(above));
}

/* q < n as unsigned lanes (n1 = n - 1, n >= 1). */
CKS_AVX2 static inline __m256 below(__m256i v, __m256i n1)
{
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_min_epu32(v, n1), v));
}

/* The voxel index of eight points by axis (Swift: `cells4`) where in the grid, else -1 there
 * and in the lanes outside `take`. */
CKS_AVX2 static inline __m256 cells8(const fuse_consts *q, __m256 px, __m256 py, __m256 pz, __m256 take)
{
    __m256i qx = trunc8(q, px), qy = trunc8(q, py), qz = trunc8(q, pz);
    __m256 inside = AND(AND(below(qx, q->nx1), below(qy, q->ny1)), below(qz, q->nz1));
    __m256 fi = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(qz), q->fny),
                                                                         _mm256_cvtepi32_ps(qy)), q->fnx),
                                            _mm256_cvtepi32_ps(qx)), q->magic);
    __m256 index = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(fi), q->magic_bits));
    return SEL(q->minus1, index, AND(take, inside));  /* q->minus1: the integer -1 in every lane */
}

CKS_AVX2 static inline __m256 magnitude(__m256 v) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }

/* Swift's larger(a, b): b where b >= a, else a. */
CKS_AVX2 static inline __m256 larger(__m256 a, __m256 b) { return SEL(a, b, CMP(b, a, _CMP_GE_OQ)); }

CKS_AVX2 void cks_fuse_row_avx2(const cks_fuse_frame *k, float dir_x, float dir_y, float dir_z, float w_row, const float *depth,
                                const float *us, size_t padded, float *cur, const float *prev, size_t row_stride,
                                int32_t *lanes)
{
    fuse_consts q;
    q.magic = _mm256_set1_ps(8388608.0f);
    q.magic_bits = _mm256_set1_epi32(0x4B000000);
    q.gbx = _mm256_set1_ps(k->gb[0]); q.gby = _mm256_set1_ps(k->gb[1]); q.gbz = _mm256_set1_ps(k->gb[2]);
    q.axx = _mm256_set1_ps(k->ax[0]); q.axy = _mm256_set1_ps(k->ax[1]); q.axz = _mm256_set1_ps(k->ax[2]);
    q.lox = _mm256_set1_ps(k->lo[0]); q.loy = _mm256_set1_ps(k->lo[1]); q.loz = _mm256_set1_ps(k->lo[2]);
    q.hix = _mm256_set1_ps(k->hi[0]); q.hiy = _mm256_set1_ps(k->hi[1]); q.hiz = _mm256_set1_ps(k->hi[2]);
    q.z_near = _mm256_set1_ps(k->z_near); q.z_far = _mm256_set1_ps(k->z_far);
    q.max_depth = _mm256_set1_ps(k->max_depth); q.w_x = _mm256_set1_ps(k->w_x);
    q.fnx = _mm256_set1_ps((float)k->nx); q.fny = _mm256_set1_ps((float)k->ny);
    q.nx1 = _mm256_set1_epi32((int32_t)k->nx - 1); q.ny1 = _mm256_set1_epi32((int32_t)k->ny - 1);
    q.nz1 = _mm256_set1_epi32((int32_t)k->nz - 1);
    q.minus1 = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    const __m256 zero = _mm256_setzero_ps(), minus1f = _mm256_set1_ps(-1.0f);
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f), half = _mm256_set1_ps(0.5f);
    const __m256 w_row8 = _mm256_set1_ps(w_row);
    const __m256 rdx = _mm256_set1_ps(dir_x), rdy = _mm256_set1_ps(dir_y), rdz = _mm256_set1_ps(dir_z);
    float *cur_x = cur, *cur_y = cur + row_stride, *cur_z = cur + 2 * row_stride;
    const float *prev_x = prev, *prev_y = prev + row_stride, *prev_z = prev + 2 * row_stride;
    int32_t *hit = lanes, *shell1 = lanes + padded, *shell2 = lanes + 2 * padded, *shell3 = lanes + 3 * padded;
    int32_t *mid_l = lanes + 4 * padded, *mid_u = lanes + 5 * padded, *mid_ul = lanes + 6 * padded, *ok_lanes = lanes + 7 * padded;

    /* Pass 1. */
    for (size_t x0 = 0; x0 < padded;) {
        int eight = x0 + 8 <= padded;
        __m256 d = load_lanes(depth + x0, eight), u = load_lanes(us + x0, eight);
        __m256 z = _mm256_mul_ps(d, _mm256_add_ps(w_row8, _mm256_mul_ps(q.w_x, u)));
        __m256 in_range = AND(AND(CMP(z, q.z_near, _CMP_GE_OQ), CMP(z, q.z_far, _CMP_LE_OQ)),
                              AND(CMP(d, zero, _CMP_GT_OQ), CMP(d, q.max_depth, _CMP_LE_OQ)));
        __m256 dx = _mm256_add_ps(rdx, _mm256_mul_ps(q.axx, u));
        __m256 dy = _mm256_add_ps(rdy, _mm256_mul_ps(q.axy, u));
        __m256 dz = _mm256_add_ps(rdz, _mm256_mul_ps(q.axz, u));
        __m256 step = _mm256_div_ps(one, larger(larger(magnitude(dx), magnitude(dy)), magnitude(dz)));
        __m256 gx = _mm256_add_ps(q.gbx, _mm256_mul_ps(dx, d));
        __m256 gy = _mm256_add_ps(q.gby, _mm256_mul_ps(dy, d));
        __m256 gz = _mm256_add_ps(q.gbz, _mm256_mul_ps(dz, d));
        __m256 ok = AND(in_range, AND(AND(AND(CMP(gx, q.lox, _CMP_GE_OQ), CMP(gx, q.hix, _CMP_LT_OQ)),
                                          AND(CMP(gy, q.loy, _CMP_GE_OQ), CMP(gy, q.hiy, _CMP_LT_OQ))),
                                      AND(CMP(gz, q.loz, _CMP_GE_OQ), CMP(gz, q.hiz, _CMP_LT_OQ))));
        store_ilanes(ok_lanes + x0, ok, eight);
        if (!any_lane(ok)) {
            store_lanes(cur_x + x0 + 1, minus1f, eight);
            store_lanes(cur_y + x0 + 1, minus1f, eight);
            store_lanes(cur_z + x0 + 1, minus1f, eight);
        } else {
            store_lanes(cur_x + x0 + 1, SEL(minus1f, gx, ok), eight);
            store_lanes(cur_y + x0 + 1, SEL(minus1f, gy, ok), eight);
            store_lanes(cur_z + x0 + 1, SEL(minus1f, gz, ok), eight);
            store_ilanes(hit + x0, cells8(&q, gx, gy, gz, ok), eight);
            __m256 ts1 = _mm256_sub_ps(d, step), ts2 = _mm256_sub_ps(ts1, step), ts3 = _mm256_sub_ps(ts2, step);
            store_ilanes(shell1 + x0, cells8(&q, _mm256_add_ps(q.gbx, _mm256_mul_ps(dx, ts1)), _mm256_add_ps(q.gby, _mm256_mul_ps(dy, ts1)),
                                             _mm256_add_ps(q.gbz, _mm256_mul_ps(dz, ts1)), ok), eight);
            store_ilanes(shell2 + x0, cells8(&q, _mm256_add_ps(q.gbx, _mm256_mul_ps(dx, ts2)), _mm256_add_ps(q.gby, _mm256_mul_ps(dy, ts2)),
                                             _mm256_add_ps(q.gbz, _mm256_mul_ps(dz, ts2)), ok), eight);
            store_ilanes(shell3 + x0, cells8(&q, _mm256_add_ps(q.gbx, _mm256_mul_ps(dx, ts3)), _mm256_add_ps(q.gby, _mm256_mul_ps(dy, ts3)),
                                             _mm256_add_ps(q.gbz, _mm256_mul_ps(dz, ts3)), ok), eight);
        }
        x0 += eight ? 8 : 4;
    }

    /* Pass 2: the pairs (neighbour - point), with the left, upper and upper-left neighbour. */
    for (size_t x0 = 0; x0 < padded;) {
        int eight = x0 + 8 <= padded;
        __m256 ok = load_ilanes(ok_lanes + x0, eight);
        if (any_lane(ok)) {
            __m256 gx = load_lanes(cur_x + x0 + 1, eight), gy = load_lanes(cur_y + x0 + 1, eight), gz = load_lanes(cur_z + x0 + 1, eight);
            __m256 far[3], bridges[3], ddx[3], ddy[3], ddz[3];
            const float *nbx[3] = {cur_x + x0, prev_x + x0 + 1, prev_x + x0};
            const float *nby[3] = {cur_y + x0, prev_y + x0 + 1, prev_y + x0};
            const float *nbz[3] = {cur_z + x0, prev_z + x0 + 1, prev_z + x0};
            for (int p = 0; p < 3; p++) {
                __m256 ex = load_lanes(nbx[p], eight);
                ddx[p] = _mm256_sub_ps(ex, gx);
                ddy[p] = _mm256_sub_ps(load_lanes(nby[p], eight), gy);
                ddz[p] = _mm256_sub_ps(load_lanes(nbz[p], eight), gz);
                __m256 adx = magnitude(ddx[p]), ady = magnitude(ddy[p]), adz = magnitude(ddz[p]);
                __m256 valid = AND(ok, CMP(ex, zero, _CMP_GE_OQ));
                far[p] = AND(valid, OR(OR(CMP(adx, two, _CMP_GE_OQ), CMP(ady, two, _CMP_GE_OQ)), CMP(adz, two, _CMP_GE_OQ)));
                bridges[p] = AND(valid, OR(OR(CMP(adx, one, _CMP_GT_OQ), CMP(ady, one, _CMP_GT_OQ)), CMP(adz, one, _CMP_GT_OQ)));
            }
            if (!any_lane(OR(OR(bridges[0], bridges[1]), bridges[2]))) {
                store_ilanes(mid_l + x0, _mm256_castsi256_ps(_mm256_set1_epi32(-3)), eight);  /* no bridge in the block */
            } else {
                __m256 mid[3];
                for (int p = 0; p < 3; p++) {
                    mid[p] = cells8(&q, _mm256_add_ps(gx, _mm256_mul_ps(ddx[p], half)), _mm256_add_ps(gy, _mm256_mul_ps(ddy[p], half)),
                                    _mm256_add_ps(gz, _mm256_mul_ps(ddz[p], half)), bridges[p]);
                }
                store_ilanes(mid_l + x0, SEL(mid[0], _mm256_castsi256_ps(_mm256_set1_epi32(-2)), OR(OR(far[0], far[1]), far[2])), eight);
                store_ilanes(mid_u + x0, mid[1], eight);
                store_ilanes(mid_ul + x0, mid[2], eight);
            }
        }
        x0 += eight ? 8 : 4;
    }
}

#else /* not x86-64: never called (cks_cpu_has_avx2() is 0) */
void cks_valid_copy_avx2(const float *from, float *to, size_t n, float max_depth)
{
    (void)from; (void)to; (void)n; (void)max_depth;
}
size_t cks_flying_row_avx2(const float *up, const float *row, const float *down, const float *src, float *dst,
                           size_t x_start, size_t x_end, float per_z, float base, float farthest)
{
    (void)up; (void)row; (void)down; (void)src; (void)dst; (void)x_end; (void)per_z; (void)base; (void)farthest;
    return x_start;
}
void cks_fuse_row_avx2(const cks_fuse_frame *k, float dir_x, float dir_y, float dir_z, float w_row, const float *depth,
                       const float *us, size_t padded, float *cur, const float *prev, size_t row_stride, int32_t *lanes)
{
    (void)k; (void)dir_x; (void)dir_y; (void)dir_z; (void)w_row; (void)depth; (void)us; (void)padded; (void)cur; (void)prev; (void)row_stride; (void)lanes;
}
#endif
