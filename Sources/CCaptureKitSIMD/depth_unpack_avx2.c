/*
 * AVX2-target twin of DepthFrameCodec.unpack4 (DepthFrameCodecV4.swift): the rows of a version-4
 * depth frame (+ escapes) -> values -> samples. Integer operations only, the same ones as the Swift
 * kernel in the same order, so the output is bit-identical by construction; Tests/CaptureKitCoreTests
 * compares the two on generated frames (dense escapes, palettes, both layouts, every predictor,
 * odd widths). What the wider instruction set buys (the baseline SSE2 build has no byte shuffle):
 * - escapes are placed with one byte shuffle per group of 8 pixels (pshufb over the next 8 low and
 *   8 high escape bytes, a 256-entry table of shuffles by lane mask) instead of one at a time;
 * - the nibble and byte unpacking, escape masks and clamps use SSSE3/SSE4.1 byte and word
 *   operations (pshufb, pmovzxbw, pminuw) the baseline lacks.
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

/* One row: mode 0 (left), 1 (left + north - north-west), 2 (left + (north-east - north-west) >> 1);
 * nibble: the row's layout. */
CKS_AVX2 static inline void decode_row(int mode, int nibble, const uint8_t *row, const uint8_t *tail,
                                       const uint8_t *low, const uint8_t *high, size_t *ep,
                                       const uint8_t *prev, uint8_t *cur, __m128i *last, uint16_t **outp,
                                       size_t gw, size_t full, size_t w, const uint16_t *palette, __m128i top)
{
    const __m128i one = _mm_set1_epi16(1), zero = _mm_setzero_si128();
    const __m128i broadcast7 = _mm_set1_epi16(0x0F0E);
    __m128i running = *last;
    size_t e = *ep;
    uint16_t *out = *outp;
    for (size_t gx = 0; gx < gw; gx++) {
        size_t o = gx * 16;
        __m128i raw;
        int m;
        if (nibble) {
            uint32_t p;
            memcpy(&p, row + gx * 4, 4);
            __m128i x = _mm_cvtsi32_si128((int)p);
            __m128i nib = _mm_and_si128(_mm_unpacklo_epi32(x, _mm_srli_epi16(x, 4)), _mm_set1_epi8(0x0F));
            raw = _mm_cvtepu8_epi16(nib);
            m = _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(raw, _mm_set1_epi16(15)), zero));
        } else {
            raw = _mm_cvtepu8_epi16(load64(gx < full ? row + gx * 8 : tail));
            m = _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(raw, _mm_set1_epi16(255)), zero));
        }
        __m128i valid = _mm_xor_si128(_mm_cmpeq_epi16(raw, zero), _mm_set1_epi32(-1));
        __m128i z = _mm_sub_epi16(raw, one);
        /* Escapes: lanes in m hold T; add the next popcount(m) escapes (mod 2^16). Reads 8 bytes
         * from e in each half: the payload scratch has 8 spare bytes past the high bytes. */
        __m128i esc = _mm_unpacklo_epi64(load64(low + e), load64(high + e));
        z = _mm_add_epi16(z, _mm_shuffle_epi8(esc, _mm_load_si128((const __m128i *)escape_shuffles[m])));
        e += escape_counts[m];
        __m128i r = _mm_xor_si128(_mm_srli_epi16(z, 1), _mm_sub_epi16(zero, _mm_and_si128(z, one)));
        if (mode == 1) {
            __m128i nw = _mm_loadu_si128((const __m128i *)(prev + 14 + o));
            __m128i n = _mm_loadu_si128((const __m128i *)(prev + 16 + o));
            r = _mm_add_epi16(r, _mm_sub_epi16(n, nw));
        } else if (mode == 2) {
            __m128i nw = _mm_loadu_si128((const __m128i *)(prev + 14 + o));
            __m128i ne = _mm_loadu_si128((const __m128i *)(prev + 18 + o));
            r = _mm_add_epi16(r, _mm_srai_epi16(_mm_sub_epi16(ne, nw), 1));
        }
        __m128i v = _mm_and_si128(r, valid);
        v = _mm_add_epi16(v, _mm_slli_si128(v, 2));
        v = _mm_add_epi16(v, _mm_slli_si128(v, 4));
        v = _mm_add_epi16(v, _mm_slli_si128(v, 8));
        v = _mm_add_epi16(v, running);
        running = _mm_shuffle_epi8(v, broadcast7);
        _mm_storeu_si128((__m128i *)(cur + 16 + o), v);
        /* ranks clamped to K (mapped through the palette after the row), 0 for invalid pixels */
        __m128i sample = _mm_and_si128(palette ? _mm_min_epu16(v, top) : v, valid);
        if (gx < full) {
            _mm_storeu_si128((__m128i *)out, sample);
            out += 8;
        } else {
            size_t rest = w - gx * 8;
            uint16_t lanes[8];
            _mm_storeu_si128((__m128i *)lanes, sample);
            memcpy(out, lanes, 2 * rest);
            out += rest;
        }
    }
    *last = running;
    *ep = e;
    *outp = out;
}

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
        switch (b) {
        case 0: decode_row(0, 0, byte_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        case 1: decode_row(1, 0, byte_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        case 2: decode_row(2, 0, byte_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        case 4: decode_row(0, 1, nibble_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        case 5: decode_row(1, 1, nibble_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        case 6: decode_row(2, 1, nibble_row, tail, low, high, &e, prev, cur, &last, &out, gw, full, w, palette, top); break;
        default: break; /* the caller checked the row bytes */
        }
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
