/* Left-valid-neighbour predictor + zigzag + byte planes + zstd level 1: the simple peer the issue
 * measures against. Each pixel is predicted by the last non-zero pixel before it in raster order
 * (0 at the start); the residual (x - prediction) mod 2^16 is zigzagged; the low bytes of all
 * residuals, then the high bytes, form one buffer compressed as one zstd frame (level 1). An
 * invalid pixel (0) is coded like any other (residual -prediction) and does not move the
 * prediction, so decoding is x = prediction + residual; if x != 0 the prediction becomes x. */
#include <zstd.h>
#include "peers.h"

static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;

size_t left_zstd_bound(uint32_t w, uint32_t h) { return ZSTD_compressBound((size_t)w * h * 2); }

long left_zstd_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    uint8_t *planes = peer_scratch(0, 2 * n);
    if (!planes || (!cctx && !(cctx = ZSTD_createCCtx()))) return -1;
    uint16_t last = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t x = src[i];
        uint16_t z = zz16((uint16_t)(x - last));
        planes[i] = (uint8_t)z;
        planes[n + i] = (uint8_t)(z >> 8);
        if (x) last = x;
    }
    size_t r = ZSTD_compressCCtx(cctx, dst, cap, planes, 2 * n, 1);
    return ZSTD_isError(r) ? -1 : (long)r;
}

int left_zstd_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    uint8_t *planes = peer_scratch(0, 2 * n);
    if (!planes || (!dctx && !(dctx = ZSTD_createDCtx()))) return -1;
    size_t r = ZSTD_decompressDCtx(dctx, planes, 2 * n, src, size);
    if (ZSTD_isError(r) || r != 2 * n) return -1;
    uint16_t last = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t x = (uint16_t)(last + unzz16((uint16_t)(planes[i] | planes[n + i] << 8)));
        dst[i] = x;
        last = x ? x : last;
    }
    return 0;
}
