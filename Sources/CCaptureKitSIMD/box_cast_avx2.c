/*
 * AVX2 twins of the batched ray-vs-box kernels of Raycast+Batch.swift (BoxRaycaster.cast4 over
 * slab4), eight rays at a time instead of four. Bit-identical by construction: every lane runs the
 * same IEEE operations in the same order as the Swift kernel (u·a + v·b + c, 1/d, slab bounds,
 * compare-and-select instead of min/max, (dx² + dy²) + dz², t · |d|), with ordered non-signalling
 * compares (false on NaN, as Swift's `.<`) and no contraction into FMA. Keep the two in step:
 * Tests/CaptureKitCoreTests compares them bit for bit on millions of rays.
 */
#include "ck_simd.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#pragma STDC FP_CONTRACT OFF

#define CKS_AVX2 __attribute__((target("avx2")))

typedef struct {
    __m256 ax, ay, az, bx, by, bz, cx, cy, cz, lox, loy, loz, hix, hiy, hiz;
} consts8;

CKS_AVX2 static inline consts8 load_consts(const cks_box_caster *k)
{
    consts8 q;
    q.ax = _mm256_set1_ps(k->a[0]); q.ay = _mm256_set1_ps(k->a[1]); q.az = _mm256_set1_ps(k->a[2]);
    q.bx = _mm256_set1_ps(k->b[0]); q.by = _mm256_set1_ps(k->b[1]); q.bz = _mm256_set1_ps(k->b[2]);
    q.cx = _mm256_set1_ps(k->c[0]); q.cy = _mm256_set1_ps(k->c[1]); q.cz = _mm256_set1_ps(k->c[2]);
    q.lox = _mm256_set1_ps(k->lo[0]); q.loy = _mm256_set1_ps(k->lo[1]); q.loz = _mm256_set1_ps(k->lo[2]);
    q.hix = _mm256_set1_ps(k->hi[0]); q.hiy = _mm256_set1_ps(k->hi[1]); q.hiz = _mm256_set1_ps(k->hi[2]);
    return q;
}

/* Integer lanes held in float registers (selects are bitwise, so the bits pass unchanged). */
CKS_AVX2 static inline __m256 ilanes(int v) { return _mm256_castsi256_ps(_mm256_set1_epi32(v)); }

/* b where mask, else a: Swift's a.replacing(with: b, where: mask). */
#define SEL(a, b, mask) _mm256_blendv_ps((a), (b), (mask))

/* The slab test of eight rays (Swift: slab4): the face entered (camera outside) or left (inside),
 * the ray parameter t of that hit, the hit mask, and the (unnormalised) directions. */
typedef struct { __m256 face, t, hit, dx, dy, dz; } slab8_result;

CKS_AVX2 static inline slab8_result slab8(const consts8 *q, __m256 u, __m256 vx, __m256 vy, __m256 vz, int inside)
{
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(__builtin_inff());
    slab8_result r;
    __m256 dx = _mm256_add_ps(_mm256_mul_ps(u, q->ax), vx);
    __m256 dy = _mm256_add_ps(_mm256_mul_ps(u, q->ay), vy);
    __m256 dz = _mm256_add_ps(_mm256_mul_ps(u, q->az), vz);
    __m256 ix = _mm256_div_ps(one, dx), iy = _mm256_div_ps(one, dy), iz = _mm256_div_ps(one, dz);
    __m256 t1x = _mm256_mul_ps(ix, q->lox), t2x = _mm256_mul_ps(ix, q->hix);
    __m256 t1y = _mm256_mul_ps(iy, q->loy), t2y = _mm256_mul_ps(iy, q->hiy);
    __m256 t1z = _mm256_mul_ps(iz, q->loz), t2z = _mm256_mul_ps(iz, q->hiz);
    __m256 px = _mm256_cmp_ps(t1x, t2x, _CMP_LT_OQ);
    __m256 py = _mm256_cmp_ps(t1y, t2y, _CMP_LT_OQ);
    __m256 pz = _mm256_cmp_ps(t1z, t2z, _CMP_LT_OQ);
    __m256 nearX = SEL(t2x, t1x, px), farX = SEL(t1x, t2x, px);
    __m256 nearY = SEL(t2y, t1y, py), farY = SEL(t1y, t2y, py);
    __m256 nearZ = SEL(t2z, t1z, pz), farZ = SEL(t1z, t2z, pz);
    __m256 face, t, hit;
    if (!inside) {
        /* Entering face: x → left(1)/right(2), y → bottom(3)/top(4), z → front(0)/back(5). */
        __m256 tNear = nearX, tFar = farX, g;
        face = SEL(ilanes(2), ilanes(1), px);
        g = _mm256_cmp_ps(nearY, tNear, _CMP_GT_OQ);
        tNear = SEL(tNear, nearY, g);
        face = SEL(face, SEL(ilanes(4), ilanes(3), py), g);
        g = _mm256_cmp_ps(nearZ, tNear, _CMP_GT_OQ);
        tNear = SEL(tNear, nearZ, g);
        face = SEL(face, SEL(ilanes(5), ilanes(0), pz), g);
        tFar = SEL(tFar, farY, _mm256_cmp_ps(farY, tFar, _CMP_LT_OQ));
        tFar = SEL(tFar, farZ, _mm256_cmp_ps(farZ, tFar, _CMP_LT_OQ));
        hit = _mm256_and_ps(_mm256_cmp_ps(tNear, tFar, _CMP_LE_OQ), _mm256_cmp_ps(tNear, zero, _CMP_GE_OQ));
        t = tNear;
    } else {
        /* Exit face: x → right(2)/left(1), y → top(4)/bottom(3), z → back(5)/front(0). */
        __m256 tFar = farX, l;
        face = SEL(ilanes(1), ilanes(2), px);
        l = _mm256_cmp_ps(farY, tFar, _CMP_LT_OQ);
        tFar = SEL(tFar, farY, l);
        face = SEL(face, SEL(ilanes(3), ilanes(4), py), l);
        l = _mm256_cmp_ps(farZ, tFar, _CMP_LT_OQ);
        tFar = SEL(tFar, farZ, l);
        face = SEL(face, SEL(ilanes(0), ilanes(5), pz), l);
        hit = _mm256_and_ps(_mm256_cmp_ps(tFar, zero, _CMP_GE_OQ), _mm256_cmp_ps(tFar, inf, _CMP_LT_OQ));
        t = tFar;
    }
    r.face = face; r.t = t; r.hit = hit; r.dx = dx; r.dy = dy; r.dz = dz;
    return r;
}

/* Faces and distances of eight rays (Swift: cast4). */
CKS_AVX2 static inline void cast8(const consts8 *q, __m256 u, __m256 vx, __m256 vy, __m256 vz, int inside,
                                  __m256 *face_out, __m256 *dist_out)
{
    const __m256 inf = _mm256_set1_ps(__builtin_inff());
    slab8_result s = slab8(q, u, vx, vy, vz, inside);
    /* (dx·dx + dy·dy) + dz·dz, as Swift evaluates it; non-finite directions miss. */
    __m256 len = _mm256_sqrt_ps(_mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(s.dx, s.dx), _mm256_mul_ps(s.dy, s.dy)),
                                              _mm256_mul_ps(s.dz, s.dz)));
    __m256 hit = _mm256_and_ps(s.hit, _mm256_cmp_ps(len, inf, _CMP_LT_OQ));
    *face_out = SEL(ilanes(-1), s.face, hit);
    *dist_out = SEL(inf, _mm256_mul_ps(s.t, len), hit);
}

/* Interleaved (u, v) pixels; the two modes as separate loops so the branch folds away. */
CKS_AVX2 static inline void pixels_mode(const consts8 *q, const float *uv, size_t n, int32_t *faces, float *dist,
                                        int inside)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 p0 = _mm256_loadu_ps(uv + 2 * i), p1 = _mm256_loadu_ps(uv + 2 * i + 8);
        /* (u0 u1 u4 u5 | u2 u3 u6 u7) → u0...u7 by swapping the middle 64-bit pairs. */
        __m256 ue = _mm256_shuffle_ps(p0, p1, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 vo = _mm256_shuffle_ps(p0, p1, _MM_SHUFFLE(3, 1, 3, 1));
        __m256 u = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ue), _MM_SHUFFLE(3, 1, 2, 0)));
        __m256 v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(vo), _MM_SHUFFLE(3, 1, 2, 0)));
        __m256 f, d;
        cast8(q, u, _mm256_add_ps(_mm256_mul_ps(v, q->bx), q->cx), _mm256_add_ps(_mm256_mul_ps(v, q->by), q->cy),
              _mm256_add_ps(_mm256_mul_ps(v, q->bz), q->cz), inside, &f, &d);
        _mm256_storeu_ps((float *)(faces + i), f);
        _mm256_storeu_ps(dist + i, d);
    }
    if (i < n) {
        float ub[8] = { 0 }, vb[8] = { 0 }, fb[8], db[8];
        size_t k, rest = n - i;
        __m256 u, v, f, d;
        for (k = 0; k < rest; k++) { ub[k] = uv[2 * (i + k)]; vb[k] = uv[2 * (i + k) + 1]; }
        u = _mm256_loadu_ps(ub); v = _mm256_loadu_ps(vb);
        cast8(q, u, _mm256_add_ps(_mm256_mul_ps(v, q->bx), q->cx), _mm256_add_ps(_mm256_mul_ps(v, q->by), q->cy),
              _mm256_add_ps(_mm256_mul_ps(v, q->bz), q->cz), inside, &f, &d);
        _mm256_storeu_ps(fb, f); _mm256_storeu_ps(db, d);
        for (k = 0; k < rest; k++) { memcpy(faces + i + k, fb + k, 4); dist[i + k] = db[k]; }
    }
}

CKS_AVX2 void cks_box_cast_pixels_avx2(const cks_box_caster *k, const float *uv, size_t n, int32_t *faces, float *distances)
{
    consts8 q = load_consts(k);
    if (k->inside) pixels_mode(&q, uv, n, faces, distances, 1);
    else pixels_mode(&q, uv, n, faces, distances, 0);
}

CKS_AVX2 static inline void grid_mode(const consts8 *q, const cks_box_caster *k, size_t width, size_t height,
                                      int32_t *faces, float *dist, int inside)
{
    const __m256 step = _mm256_setr_ps(0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f), eight = _mm256_set1_ps(8.0f);
    size_t row, col;
    for (row = 0; row < height; row++) {
        /* The per-row terms in scalar float, as the Swift grid computes them. */
        float v = (float)row + 0.5f;
        __m256 vx = _mm256_set1_ps(v * k->b[0] + k->c[0]), vy = _mm256_set1_ps(v * k->b[1] + k->c[1]);
        __m256 vz = _mm256_set1_ps(v * k->b[2] + k->c[2]);
        __m256 u = step, f, d;
        int32_t *fr = faces + row * width;
        float *dr = dist + row * width;
        for (col = 0; col + 8 <= width; col += 8) {
            cast8(q, u, vx, vy, vz, inside, &f, &d);
            _mm256_storeu_ps((float *)(fr + col), f);
            _mm256_storeu_ps(dr + col, d);
            u = _mm256_add_ps(u, eight); /* col + 0.5 exactly (integers + 0.5 below 2^23) */
        }
        if (col < width) {
            float fb[8], db[8];
            size_t j;
            cast8(q, u, vx, vy, vz, inside, &f, &d);
            _mm256_storeu_ps(fb, f); _mm256_storeu_ps(db, d);
            for (j = 0; col + j < width; j++) { memcpy(fr + col + j, fb + j, 4); dr[col + j] = db[j]; }
        }
    }
}

CKS_AVX2 void cks_box_cast_grid_avx2(const cks_box_caster *k, size_t width, size_t height, int32_t *faces, float *distances)
{
    consts8 q = load_consts(k);
    if (k->inside) grid_mode(&q, k, width, height, faces, distances, 1);
    else grid_mode(&q, k, width, height, faces, distances, 0);
}

/* Swift's floorFloat / floorToInt32 (Raycast+Local.swift) for 0 <= v < 2^22. */
CKS_AVX2 static inline __m256 floor_float(__m256 v)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 r = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
    return SEL(r, _mm256_sub_ps(r, _mm256_set1_ps(1.0f)), _mm256_cmp_ps(r, v, _CMP_GT_OQ));
}

CKS_AVX2 static inline __m256i floor_to_int32(__m256 v)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 r = floor_float(v);
    return _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(r, magic)), _mm256_castps_si256(magic));
}

/* Swift's CellMapper.cells over eight rays: face (−1 on a miss) and hit point relative to the camera. */
CKS_AVX2 static inline __m256i cells8(const cks_cell_mapper *m, __m256i face, __m256 qx, __m256 qy, __m256 qz)
{
    const __m256 nf = _mm256_set1_ps(m->n), zero = _mm256_setzero_ps(), top = _mm256_set1_ps(m->top);
    __m256 x = _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(qx, _mm256_set1_ps(m->camera[0])), _mm256_set1_ps(m->half[0])), _mm256_set1_ps(m->scale[0]));
    __m256 y = _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(qy, _mm256_set1_ps(m->camera[1])), _mm256_set1_ps(m->half[1])), _mm256_set1_ps(m->scale[1]));
    __m256 z = _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(qz, _mm256_set1_ps(m->camera[2])), _mm256_set1_ps(m->half[2])), _mm256_set1_ps(m->scale[2]));
    __m256 mx = _mm256_sub_ps(nf, x), my = _mm256_sub_ps(nf, y), mz = _mm256_sub_ps(nf, z);
    __m256 is0 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(face, _mm256_set1_epi32(0)));
    __m256 is1 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(face, _mm256_set1_epi32(1)));
    __m256 is2 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(face, _mm256_set1_epi32(2)));
    __m256 is3 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(face, _mm256_set1_epi32(3)));
    __m256 is4 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(face, _mm256_set1_epi32(4)));
    __m256 cu = SEL(SEL(SEL(x, mx, is0), z, is1), mz, is2);
    __m256 cv = SEL(SEL(my, mz, is3), z, is4);
    __m256 faceF, cell;
    cu = SEL(zero, cu, _mm256_cmp_ps(cu, zero, _CMP_GE_OQ));
    cu = SEL(cu, top, _mm256_cmp_ps(cu, top, _CMP_GT_OQ));
    cv = SEL(zero, cv, _mm256_cmp_ps(cv, zero, _CMP_GE_OQ));
    cv = SEL(cv, top, _mm256_cmp_ps(cv, top, _CMP_GT_OQ));
    faceF = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_add_epi32(face, _mm256_set1_epi32(0x4B000000))), _mm256_set1_ps(8388608.0f));
    cell = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(faceF, nf), floor_float(cv)), nf), floor_float(cu));
    return _mm256_castps_si256(SEL(ilanes(-1), _mm256_castsi256_ps(floor_to_int32(cell)),
                                   _mm256_castsi256_ps(_mm256_cmpgt_epi32(face, _mm256_set1_epi32(-1)))));
}

CKS_AVX2 static inline size_t grid_cells_mode(const consts8 *q, const cks_box_caster *k, const cks_cell_mapper *m,
                                              size_t width, size_t height, int32_t *out, int inside)
{
    const __m256 step = _mm256_setr_ps(0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f), eight = _mm256_set1_ps(8.0f);
    size_t row, col, count = 0;
    for (row = 0; row < height; row++) {
        float v = (float)row + 0.5f;
        __m256 vx = _mm256_set1_ps(v * k->b[0] + k->c[0]), vy = _mm256_set1_ps(v * k->b[1] + k->c[1]);
        __m256 vz = _mm256_set1_ps(v * k->b[2] + k->c[2]);
        __m256 u = step;
        for (col = 0; col < width; col += 8) {
            slab8_result s = slab8(q, u, vx, vy, vz, inside);
            /* Swift's cast4Points: face where the slab test hit, −1 elsewhere; points d · t. */
            __m256i face = _mm256_castps_si256(SEL(ilanes(-1), s.face, s.hit));
            u = _mm256_add_ps(u, eight);
            if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(face, _mm256_set1_epi32(-1)))) != 0) {
                int32_t c[8];
                size_t j, lanes = width - col < 8 ? width - col : 8;
                _mm256_storeu_si256((__m256i *)c, cells8(m, face, _mm256_mul_ps(s.dx, s.t), _mm256_mul_ps(s.dy, s.t),
                                                         _mm256_mul_ps(s.dz, s.t)));
                for (j = 0; j < lanes; j++) { out[count] = c[j]; count += c[j] >= 0; }
            }
        }
    }
    return count;
}

CKS_AVX2 size_t cks_box_cast_grid_cells_avx2(const cks_box_caster *k, const cks_cell_mapper *m, size_t width, size_t height,
                                             int32_t *cells)
{
    consts8 q = load_consts(k);
    return k->inside ? grid_cells_mode(&q, k, m, width, height, cells, 1) : grid_cells_mode(&q, k, m, width, height, cells, 0);
}

#else /* not x86-64: never called (cks_cpu_has_avx2() is 0) */
void cks_box_cast_pixels_avx2(const cks_box_caster *k, const float *uv, size_t n, int32_t *faces, float *distances)
{
    (void)k; (void)uv; (void)n; (void)faces; (void)distances;
}
void cks_box_cast_grid_avx2(const cks_box_caster *k, size_t width, size_t height, int32_t *faces, float *distances)
{
    (void)k; (void)width; (void)height; (void)faces; (void)distances;
}
size_t cks_box_cast_grid_cells_avx2(const cks_box_caster *k, const cks_cell_mapper *m, size_t width, size_t height,
                                    int32_t *cells)
{
    (void)k; (void)m; (void)width; (void)height; (void)cells;
    return 0;
}
#endif
