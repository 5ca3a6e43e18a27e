/*
 * AVX2-target twin of DepthFrameCodec.unpack4 (DepthFrameCodecV4.swift): the rows of a version-4
 * depth frame (+ escapes) -> values -> samples. Integer operations only, the same ones as the Swift
 * kernel in the same order, so the output is bit-identical by construction; Tests/CaptureKitCoreTests
 * compares the two on generated frames (dense escapes, palettes, both layouts, every predictor,
 * odd widths). What the wider instruction set buys (the baseline SSE2 build has no byte shuffle):
 * - escapes are placed with one byte shuffle per group of 8 pixels (pshufb over the next 8 low and
 *   8 high escape bytes, a 256-entry table of shuffles by lane mask) instead of one at a time;
 * - the nibble and byte unpacking, escape masks and clamps use SSSE3/SSE4.1 byte and word
 *   operations (pshufb, pmovzxbw, pminuw) the baseline lacks;
 * - two groups (16 pixels) go through one 256-bit pass, and every (predictor, layout, palette)
 *   has its own loop with its pointers in registers: about 20 -> 15 us per 256 x 192 phone-LiDAR
 *   frame (a profile of decode loops, BENCHMARKS.md issue 24).
 * Tried and dropped (slower, measured on the phone-LiDAR and structured-light sets): the palette
 * lookup fused into the 16-pixel pass (from the registers), or interleaved with the next row's
 * pass; an 8-lane gather for it.
 */
#include "ck_simd.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define CKS_AVX2 __attribute__((target("avx2")))

/* For each 8-bit lane mask m: the shuffle that takes escape r (the r-th set lane of m, rank r) to
 * lane j = that lane: byte 2j = r (low byte, from the low half), byte 2j + 1 = 8 + r (high byte,
 * from the high half); 0x80 (zero) for the lanes not in m. Built once, on first use (pthread_once:
 * threads decoding at once never write it concurrently). */
static uint8_t escape_shuffles[256][16] __attribute__((aligned(16)));
static uint8_t escape_counts[256]; /* popcount(m), without needing the POPCNT instruction */
static pthread_once_t escape_shuffles_once = PTHREAD_ONCE_INIT;

static void build_escape_shuffles(void)
{
    for (int m = 0; m < 256; m++) {
        int r = 0;
        for (int j = 0; j < 8; j++) {
            if (m & (1 << j)) {
                escape_shuffles[m][2 * j] = (uint8_t)r;
                escape_shuffles[m][2 * j + 1] = (uint8_t)(8 + r);
                r++;
            } else {
                escape_shuffles[m][2 * j] = 0x80;
                escape_shuffles[m][2 * j + 1] = 0x80;
            }
        }
        escape_counts[m] = (uint8_t)r;
    }
}

CKS_AVX2 static inline __m128i load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return _mm_cvtsi64_si128((long long)v);
}

/* One group of 8 pixels of a row under predictor `mode` (0 left, 1 left + north - north-west,
 * 2 left + (north-east - north-west) >> 1) and layout `nibble`: the residual bytes at `src` (4
 * nibble-pair bytes or 8 bytes) (+ escapes) -> prediction, prefix sum -> the filled group (stored
 * at `cur`) and the sample (returned: the rank clamped to K when `has_palette`, 0 where invalid).
 * Always inlined into one function per (mode, layout, palette) so that every choice is a constant
 * and the pointers stay in registers (measured: the earlier one-function kernel spilled five of
 * them and ran 55 instructions per group). */
static inline __attribute__((always_inline)) CKS_AVX2 __m128i decode_group(
    int mode, int nibble, int has_palette, const uint8_t *src, const uint8_t *low, const uint8_t *high,
    size_t *e, const uint8_t *prev, uint8_t *cur, __m128i *running, __m128i top)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i bytes, raw;
    if (nibble) {
        uint32_t p;
        memcpy(&p, src, 4);
        __m128i x = _mm_cvtsi32_si128((int)p);
        bytes = _mm_and_si128(_mm_unpacklo_epi32(x, _mm_srli_epi16(x, 4)), _mm_set1_epi8(0x0F));
    } else {
        bytes = load64(src);
    }
    raw = _mm_cvtepu8_epi16(bytes);
    /* escape lanes: bytes 8...15 are 0, never 15 or 255 */
    int m = _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(nibble ? 15 : -1)));
    __m128i invalid = _mm_cmpeq_epi16(raw, zero);
    /* Escapes: lanes in m hold T; add the next popcount(m) escapes (mod 2^16). Reads 8 bytes
     * from e in each half: 8 readable bytes follow each half (the caller's contract). */
    __m128i esc = _mm_castps_si128(_mm_loadh_pi(_mm_castsi128_ps(load64(low + *e)), (const __m64 *)(const void *)(high + *e)));
    __m128i z = _mm_add_epi16(_mm_sub_epi16(raw, _mm_set1_epi16(1)),
                              _mm_shuffle_epi8(esc, _mm_load_si128((const __m128i *)escape_shuffles[m])));
    *e += escape_counts[m];
    __m128i r = _mm_xor_si128(_mm_srli_epi16(z, 1), _mm_sub_epi16(zero, _mm_and_si128(z, _mm_set1_epi16(1))));
    if (mode == 1) {
        __m128i nw = _mm_loadu_si128((const __m128i *)(prev + 14));
        __m128i n = _mm_loadu_si128((const __m128i *)(prev + 16));
        r = _mm_add_epi16(r, _mm_sub_epi16(n, nw));
    } else if (mode == 2) {
        __m128i nw = _mm_loadu_si128((const __m128i *)(prev + 14));
        __m128i ne = _mm_loadu_si128((const __m128i *)(prev + 18));
        r = _mm_add_epi16(r, _mm_srai_epi16(_mm_sub_epi16(ne, nw), 1));
    }
    __m128i v = _mm_andnot_si128(invalid, r);
    v = _mm_add_epi16(v, _mm_slli_si128(v, 2));
    v = _mm_add_epi16(v, _mm_slli_si128(v, 4));
    v = _mm_add_epi16(v, _mm_slli_si128(v, 8));
    /* running: the previous pixel's filled value in every lane; one add on the carried chain */
    __m128i sum = _mm_shuffle_epi8(v, _mm_set1_epi16(0x0F0E));
    v = _mm_add_epi16(v, *running);
    *running = _mm_add_epi16(*running, sum);
    _mm_storeu_si128((__m128i *)(cur + 16), v);
    /* ranks clamped to K (mapped through the palette after the row), 0 for invalid pixels */
    return _mm_andnot_si128(invalid, has_palette ? _mm_min_epu16(v, top) : v);
}

/* Two groups (16 pixels) at once in 256-bit registers, the same operations as decode_group on
 * each 128-bit half (the prefix sum's byte shifts stay within a half), then the first group's
 * total carried into the second: about 40 % fewer instructions per pixel than two decode_group
 * calls (measured on 256 x 192 phone-LiDAR frames, BENCHMARKS.md issue 24). `out` receives the 16 samples. */
static inline __attribute__((always_inline)) CKS_AVX2 void decode_pair(
    int mode, int nibble, int has_palette, const uint8_t *src, const uint8_t *low, const uint8_t *high,
    size_t *e, const uint8_t *prev, uint8_t *cur, __m128i *running, __m256i top, uint16_t *out)
{
    const __m256i zero = _mm256_setzero_si256();
    __m128i bytes;
    if (nibble) {
        __m128i x = load64(src);
        bytes = _mm_and_si128(_mm_unpacklo_epi32(x, _mm_srli_epi16(x, 4)), _mm_set1_epi8(0x0F));
    } else {
        bytes = _mm_loadu_si128((const __m128i *)src);
    }
    __m256i raw = _mm256_cvtepu8_epi16(bytes);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(nibble ? 15 : -1)));
    unsigned m0 = m & 0xFF, m1 = m >> 8;
    __m256i invalid = _mm256_cmpeq_epi16(raw, zero);
    size_t e0 = *e, e1 = e0 + escape_counts[m0];
    *e = e1 + escape_counts[m1];
    __m128i esc0 = _mm_castps_si128(_mm_loadh_pi(_mm_castsi128_ps(load64(low + e0)), (const __m64 *)(const void *)(high + e0)));
    __m128i esc1 = _mm_castps_si128(_mm_loadh_pi(_mm_castsi128_ps(load64(low + e1)), (const __m64 *)(const void *)(high + e1)));
    __m256i esc = _mm256_inserti128_si256(_mm256_castsi128_si256(esc0), esc1, 1);
    __m256i shuf = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128((const __m128i *)escape_shuffles[m0])),
                                           _mm_load_si128((const __m128i *)escape_shuffles[m1]), 1);
    __m256i z = _mm256_add_epi16(_mm256_sub_epi16(raw, _mm256_set1_epi16(1)), _mm256_shuffle_epi8(esc, shuf));
    __m256i r = _mm256_xor_si256(_mm256_srli_epi16(z, 1), _mm256_sub_epi16(zero, _mm256_and_si256(z, _mm256_set1_epi16(1))));
    if (mode == 1) {
        __m256i nw = _mm256_loadu_si256((const __m256i *)(prev + 14));
        __m256i n = _mm256_loadu_si256((const __m256i *)(prev + 16));
        r = _mm256_add_epi16(r, _mm256_sub_epi16(n, nw));
    } else if (mode == 2) {
        __m256i nw = _mm256_loadu_si256((const __m256i *)(prev + 14));
        __m256i ne = _mm256_loadu_si256((const __m256i *)(prev + 18));
        r = _mm256_add_epi16(r, _mm256_srai_epi16(_mm256_sub_epi16(ne, nw), 1));
    }
    __m256i v = _mm256_andnot_si256(invalid, r);
    v = _mm256_add_epi16(v, _mm256_slli_si256(v, 2));
    v = _mm256_add_epi16(v, _mm256_slli_si256(v, 4));
    v = _mm256_add_epi16(v, _mm256_slli_si256(v, 8));
    /* each half's total in all its lanes; the first half's added to the second */
    __m256i sums = _mm256_shuffle_epi8(v, _mm256_set1_epi16(0x0F0E));
    v = _mm256_add_epi16(v, _mm256_permute2x128_si256(sums, sums, 0x08));
    __m256i run = _mm256_broadcastsi128_si256(*running);
    v = _mm256_add_epi16(v, run);
    *running = _mm_add_epi16(*running, _mm_add_epi16(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1)));
    _mm256_storeu_si256((__m256i *)(cur + 16), v);
    _mm256_storeu_si256((__m256i *)out, _mm256_andnot_si256(invalid, has_palette ? _mm256_min_epu16(v, top) : v));
}

/* One row (see decode_group): the full groups, then a last partial one (byte rows read it from
 * `tail`, zero-padded). */
static inline __attribute__((always_inline)) CKS_AVX2 void decode_row(
    int mode, int nibble, int has_palette, const uint8_t *row, const uint8_t *tail, const uint8_t *low,
    const uint8_t *high, size_t *ep, const uint8_t *prev, uint8_t *cur, __m128i *last, uint16_t *out,
    size_t gw, size_t full, size_t w, __m128i top)
{
    __m128i running = *last;
    size_t e = *ep;
    __m256i top2 = _mm256_broadcastsi128_si256(top);
    size_t gx = 0;
    for (; gx + 2 <= full; gx += 2)
        decode_pair(mode, nibble, has_palette, row + gx * (nibble ? 4 : 8), low, high, &e, prev + gx * 16,
                    cur + gx * 16, &running, top2, out + gx * 8);
    for (; gx < full; gx++) {
        __m128i s = decode_group(mode, nibble, has_palette, row + gx * (nibble ? 4 : 8), low, high, &e,
                                 prev + gx * 16, cur + gx * 16, &running, top);
        _mm_storeu_si128((__m128i *)(out + gx * 8), s);
    }
    if (full < gw) {
        __m128i s = decode_group(mode, nibble, has_palette, nibble ? row + full * 4 : tail, low, high, &e,
                                 prev + full * 16, cur + full * 16, &running, top);
        uint16_t lanes[8];
        _mm_storeu_si128((__m128i *)lanes, s);
        memcpy(out + full * 8, lanes, 2 * (w - full * 8));
    }
    *last = running;
    *ep = e;
}

typedef void (*row_decoder)(const uint8_t *row, const uint8_t *tail, const uint8_t *low, const uint8_t *high,
                            size_t *ep, const uint8_t *prev, uint8_t *cur, __m128i *last, uint16_t *out,
                            size_t gw, size_t full, size_t w, __m128i top);

#define ROW_DECODER(name, mode, nibble, has_palette)                                                          \
    CKS_AVX2 __attribute__((noinline)) static void name(const uint8_t *row, const uint8_t *tail,              \
        const uint8_t *low, const uint8_t *high, size_t *ep, const uint8_t *prev, uint8_t *cur,             \
        __m128i *last, uint16_t *out, size_t gw, size_t full, size_t w, __m128i top)                        \
    {                                                                                                         \
        decode_row(mode, nibble, has_palette, row, tail, low, high, ep, prev, cur, last, out, gw, full, w, top); \
    }
ROW_DECODER(row_b0, 0, 0, 0) ROW_DECODER(row_b1, 1, 0, 0) ROW_DECODER(row_b2, 2, 0, 0)
ROW_DECODER(row_n0, 0, 1, 0) ROW_DECODER(row_n1, 1, 1, 0) ROW_DECODER(row_n2, 2, 1, 0)
ROW_DECODER(row_b0p, 0, 0, 1) ROW_DECODER(row_b1p, 1, 0, 1) ROW_DECODER(row_b2p, 2, 0, 1)
ROW_DECODER(row_n0p, 0, 1, 1) ROW_DECODER(row_n1p, 1, 1, 1) ROW_DECODER(row_n2p, 2, 1, 1)

/* By row byte (0...2 bytes, 4...6 nibbles) + 8 with a palette; NULL for row bytes the caller rejects. */
static const row_decoder row_decoders[16] = {
    row_b0, row_b1, row_b2, NULL, row_n0, row_n1, row_n2, NULL,
    row_b0p, row_b1p, row_b2p, NULL, row_n0p, row_n1p, row_n2p, NULL,
};

/* p[x] = palette[p[x]], four at a time through 8-byte loads and stores, like the Swift kernel's
 * mapThroughPalette: measured on this machine's AMD EPYC, an 8-lane gather (vpgatherdd) is slower
 * than eight scalar loads. */
CKS_AVX2 static void map_through_palette(uint16_t *p, size_t count, const uint16_t *palette)
{
    size_t x = 0;
#pragma clang loop vectorize(disable)
    for (; x + 8 <= count; x += 8) { /* two independent words per step */
        uint64_t q, r;
        memcpy(&q, p + x, 8);
        memcpy(&r, p + x + 4, 8);
        uint64_t a = palette[q & 0xFFFF], b = palette[(q >> 16) & 0xFFFF];
        uint64_t c = palette[(q >> 32) & 0xFFFF], d = palette[q >> 48];
        uint64_t e = palette[r & 0xFFFF], f = palette[(r >> 16) & 0xFFFF];
        uint64_t g = palette[(r >> 32) & 0xFFFF], h = palette[r >> 48];
        q = a | b << 16 | c << 32 | d << 48;
        r = e | f << 16 | g << 32 | h << 48;
        memcpy(p + x, &q, 8);
        memcpy(p + x + 4, &r, 8);
    }
    for (; x + 4 <= count; x += 4) {
        uint64_t q;
        memcpy(&q, p + x, 8);
        uint64_t a = palette[q & 0xFFFF], b = palette[(q >> 16) & 0xFFFF];
        uint64_t c = palette[(q >> 32) & 0xFFFF], d = palette[q >> 48];
        q = a | b << 16 | c << 32 | d << 48;
        memcpy(p + x, &q, 8);
    }
    for (; x < count; x++) p[x] = palette[p[x]];
}

CKS_AVX2 void cks_depth_unpack4_avx2(const uint8_t *modes, const uint8_t *nibble_rows, const uint8_t *byte_rows,
                                     const uint8_t *escapes, size_t escape_count, const uint16_t *palette,
                                     size_t palette_count, size_t w, size_t h, uint8_t *rows, uint16_t *d)
{
    pthread_once(&escape_shuffles_once, build_escape_shuffles);
    size_t gw = (w + 7) / 8;
    size_t lanes = gw * 8 + 24;
    memset(rows, 0, 4 * lanes + gw * 8 + 16);
    uint8_t *prev = rows, *cur = rows + 2 * lanes;
    uint8_t tail[8];
    __m128i top = _mm_set1_epi16((short)(uint16_t)palette_count);
    __m128i last = _mm_setzero_si128();
    size_t e = 0, full = w / 8;
    uint16_t *out = d;
    const uint8_t *low = escapes, *high = escapes + escape_count;
    const uint8_t *nibble_row = nibble_rows, *byte_row = byte_rows;
    for (size_t y = 0; y < h; y++) {
        int b = modes[y];
        if (b < 4 && full < gw) {
            memset(tail, 0, 8);
            memcpy(tail, byte_row + full * 8, w - full * 8);
        }
        row_decoder decode = row_decoders[(b & 7) | (palette ? 8 : 0)];
        if (decode)
            decode(b >= 4 ? nibble_row : byte_row, tail, low, high, &e, prev, cur, &last, out, gw, full, w, top);
        out += w;
        if (b >= 4) nibble_row += 4 * gw; else byte_row += w;
        if (palette) map_through_palette(out - w, w, palette);
        /* Padding lanes hold the row's last filled value (P[w] = P[w - 1]); P[-1] = P[0]. */
        uint16_t *c16 = (uint16_t *)cur;
        uint16_t lv = (uint16_t)_mm_extract_epi16(last, 0);
        for (size_t x = 8 + gw * 8; x < lanes; x++) c16[x] = lv;
        c16[7] = c16[8];
        uint8_t *t = prev; prev = cur; cur = t;
    }
}
#else
void cks_depth_unpack4_avx2(const uint8_t *modes, const uint8_t *nibble_rows, const uint8_t *byte_rows,
                            const uint8_t *escapes, size_t escape_count, const uint16_t *palette,
                            size_t palette_count, size_t w, size_t h, uint8_t *rows, uint16_t *d)
{
    (void)modes; (void)nibble_rows; (void)byte_rows; (void)escapes; (void)escape_count; (void)palette;
    (void)palette_count; (void)w; (void)h; (void)rows; (void)d;
}
#endif
