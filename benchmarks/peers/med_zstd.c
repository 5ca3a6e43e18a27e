/* The LOCO-I / JPEG-LS median edge detector (MED) predictor + zigzag + byte planes + zstd level 1.
 * With a = left, b = above, c = above-left: prediction = min(a, b) if c >= max(a, b), max(a, b)
 * if c <= min(a, b), else a + b - c (Weinberger, Seroussi, Sapiro 2000). The first row predicts
 * from the left, the first column from above; the first pixel from 0. Values are used as they are
 * (an invalid 0 is a value like any other), residuals mod 2^16, zigzagged, low bytes then high
 * bytes in one zstd frame. */
#include <zstd.h>
#include "peers.h"

static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;

static inline int med(int a, int b, int c) {
    int mx = a > b ? a : b, mn = a < b ? a : b;
    if (c >= mx) return mn;
    if (c <= mn) return mx;
    return a + b - c;
}

size_t med_zstd_bound(uint32_t w, uint32_t h) { return ZSTD_compressBound((size_t)w * h * 2); }

long med_zstd_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    uint8_t *planes = peer_scratch(0, 2 * n);
    if (!planes || (!cctx && !(cctx = ZSTD_createCCtx()))) return -1;
    for (uint32_t y = 0; y < h; y++) {
        const uint16_t *row = src + (size_t)y * w, *up = row - w;
        for (uint32_t x = 0; x < w; x++) {
            int p = y == 0 ? (x ? row[x - 1] : 0) : (x == 0 ? up[0] : med(row[x - 1], up[x], up[x - 1]));
            uint16_t z = zz16((uint16_t)(row[x] - p));
            size_t i = (size_t)y * w + x;
            planes[i] = (uint8_t)z;
            planes[n + i] = (uint8_t)(z >> 8);
        }
    }
    size_t r = ZSTD_compressCCtx(cctx, dst, cap, planes, 2 * n, 1);
    return ZSTD_isError(r) ? -1 : (long)r;
}

int med_zstd_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    uint8_t *planes = peer_scratch(0, 2 * n);
    if (!planes || (!dctx && !(dctx = ZSTD_createDCtx()))) return -1;
    size_t r = ZSTD_decompressDCtx(dctx, planes, 2 * n, src, size);
    if (ZSTD_isError(r) || r != 2 * n) return -1;
    for (uint32_t y = 0; y < h; y++) {
        uint16_t *row = dst + (size_t)y * w, *up = row - w;
        for (uint32_t x = 0; x < w; x++) {
            int p = y == 0 ? (x ? row[x - 1] : 0) : (x == 0 ? up[0] : med(row[x - 1], up[x], up[x - 1]));
            size_t i = (size_t)y * w + x;
            row[x] = (uint16_t)(p + unzz16((uint16_t)(planes[i] | planes[n + i] << 8)));
        }
    }
    return 0;
}
