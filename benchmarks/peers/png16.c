/* A 16-bit grayscale PNG (ISO/IEC 15948): signature, IHDR, one IDAT, IEND, CRC-32 per chunk.
 * Samples are big-endian; each row gets the filter (None, Sub, Up, Average, Paeth) with the
 * smallest sum of absolute signed bytes -- libpng's default heuristic -- and the filtered rows go
 * through zlib (RFC 1950) at level 6 with the Z_FILTERED strategy, libpng's defaults. The decoder
 * reads what this encoder writes (one IDAT) and undoes any of the five filters. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "peers.h"

static z_stream def, inf;
static int def_ready, inf_ready;

static void put32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static inline int paeth(int a, int b, int c) {
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

size_t png16_bound(uint32_t w, uint32_t h) {
    size_t raw = (size_t)h * (1 + (size_t)w * 2);
    return raw + raw / 1000 + 128 + 57;
}

long png16_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    size_t stride = (size_t)w * 2, raw = (size_t)h * (1 + stride);
    uint8_t *be = peer_scratch(0, 2 * stride), *filt = peer_scratch(1, raw), *cand = peer_scratch(2, 5 * stride);
    if (!be || !filt || !cand || cap < 57) return -1;
    uint8_t *prev = be, *cur = be + stride;
    memset(prev, 0, stride);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) { cur[2 * x] = src[(size_t)y * w + x] >> 8; cur[2 * x + 1] = (uint8_t)src[(size_t)y * w + x]; }
        unsigned long best = ~0ul;
        int bf = 0;
        for (int f = 0; f < 5; f++) {
            uint8_t *o = cand + f * stride;
            unsigned long sum = 0;
            for (size_t i = 0; i < stride; i++) {
                int a = i >= 2 ? cur[i - 2] : 0, b = y ? prev[i] : 0, c = (i >= 2 && y) ? prev[i - 2] : 0;
                int p = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
                o[i] = (uint8_t)(cur[i] - p);
                sum += o[i] < 128 ? o[i] : 256 - o[i];
            }
            if (sum < best) { best = sum; bf = f; }
        }
        uint8_t *row = filt + (size_t)y * (1 + stride);
        row[0] = (uint8_t)bf;
        memcpy(row + 1, cand + bf * stride, stride);
        uint8_t *t = prev; prev = cur; cur = t;
    }
    static const uint8_t sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    memcpy(dst, sig, 8);
    put32(dst + 8, 13);
    memcpy(dst + 12, "IHDR", 4);
    put32(dst + 16, w); put32(dst + 20, h);
    dst[24] = 16; dst[25] = 0; dst[26] = 0; dst[27] = 0; dst[28] = 0;
    put32(dst + 29, (uint32_t)crc32(0, dst + 12, 17));
    memcpy(dst + 37, "IDAT", 4);
    if (!def_ready) {
        if (deflateInit2(&def, 6, Z_DEFLATED, 15, 8, Z_FILTERED) != Z_OK) return -1;
        def_ready = 1;
    } else if (deflateReset(&def) != Z_OK) return -1;
    def.next_in = filt;
    def.avail_in = (uInt)raw;
    def.next_out = dst + 41;
    def.avail_out = (uInt)(cap - 41 - 16);
    if (deflate(&def, Z_FINISH) != Z_STREAM_END) return -1;
    size_t z = def.total_out;
    put32(dst + 33, (uint32_t)z);
    put32(dst + 41 + z, (uint32_t)crc32(0, dst + 37, (uInt)(4 + z)));
    uint8_t *e = dst + 45 + z;
    put32(e, 0);
    memcpy(e + 4, "IEND", 4);
    put32(e + 8, (uint32_t)crc32(0, e + 4, 4));
    return (long)(57 + z);
}

int png16_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    size_t stride = (size_t)w * 2, raw = (size_t)h * (1 + stride);
    uint8_t *filt = peer_scratch(1, raw);
    if (!filt || size < 57 || get32(src + 16) != w || get32(src + 20) != h || src[24] != 16 || src[25] != 0) return -1;
    size_t z = get32(src + 33);
    if (memcmp(src + 37, "IDAT", 4) || z > size - 57) return -1;
    if (!inf_ready) {
        if (inflateInit(&inf) != Z_OK) return -1;
        inf_ready = 1;
    } else if (inflateReset(&inf) != Z_OK) return -1;
    inf.next_in = (Bytef *)(uintptr_t)(src + 41);
    inf.avail_in = (uInt)z;
    inf.next_out = filt;
    inf.avail_out = (uInt)raw;
    if (inflate(&inf, Z_FINISH) != Z_STREAM_END || inf.avail_out) return -1;
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = filt + (size_t)y * (1 + stride), *cur = row + 1;
        const uint8_t *prev = y ? row - stride : NULL;
        int f = row[0];
        if (f > 4) return -1;
        for (size_t i = 0; i < stride; i++) {
            int a = i >= 2 ? cur[i - 2] : 0, b = prev ? prev[i] : 0, c = (i >= 2 && prev) ? prev[i - 2] : 0;
            int p = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
            cur[i] = (uint8_t)(cur[i] + p);
        }
        for (uint32_t x = 0; x < w; x++) dst[(size_t)y * w + x] = (uint16_t)(cur[2 * x] << 8 | cur[2 * x + 1]);
    }
    return 0;
}
