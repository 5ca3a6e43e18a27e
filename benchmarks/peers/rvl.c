/* RVL (A. D. Wilson, "Fast Lossless Depth Image Compression", ISS 2017): run-length coding of
 * zeros plus variable-length coding of the deltas of valid pixels. The frame alternates runs:
 * a count of zeros, a count of non-zeros, then each non-zero pixel's delta from the previous
 * non-zero pixel, zigzagged. Every number is written as 3-bit groups, least significant first,
 * in 4-bit nibbles whose top bit says "more follows"; nibbles fill 32-bit words from the most
 * significant end (the last word is padded with zero nibbles). */
#include <string.h>
#include "peers.h"

typedef struct { uint32_t *out, *end, word; int nibbles; } vle_w;

static inline void put_vle(vle_w *s, uint32_t v) {
    do {
        uint32_t nib = v & 7;
        v >>= 3;
        if (v) nib |= 8;
        s->word = (s->word << 4) | nib;
        if (++s->nibbles == 8) {
            if (s->out < s->end) *s->out = s->word;
            s->out++;
            s->word = 0;
            s->nibbles = 0;
        }
    } while (v);
}

typedef struct { const uint32_t *in, *end; uint32_t word; int nibbles; int bad; } vle_r;

static inline uint32_t get_vle(vle_r *s) {
    uint32_t v = 0;
    int shift = 0;
    uint32_t nib;
    do {
        if (s->nibbles == 0) {
            if (s->in >= s->end) { s->bad = 1; return 0; }
            s->word = *s->in++;
            s->nibbles = 8;
        }
        nib = s->word >> 28;
        s->word <<= 4;
        s->nibbles--;
        if (shift < 32) v |= (nib & 7) << shift;
        shift += 3;
    } while ((nib & 8) && shift < 36);
    if (nib & 8) s->bad = 1;
    return v;
}

size_t rvl_bound(uint32_t w, uint32_t h) { return (size_t)w * h * 4 + 64; }

long rvl_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    if (cap % 4) cap -= cap % 4;
    vle_w s = {(uint32_t *)(void *)dst, (uint32_t *)(void *)(dst + cap), 0, 0};
    const uint16_t *p = src, *end = src + n;
    int prev = 0;
    while (p < end) {
        uint32_t zeros = 0, nonzeros = 0;
        for (; p < end && !*p; p++) zeros++;
        put_vle(&s, zeros);
        for (const uint16_t *q = p; q < end && *q; q++) nonzeros++;
        put_vle(&s, nonzeros);
        for (uint32_t i = 0; i < nonzeros; i++) {
            int cur = *p++;
            int delta = cur - prev;
            put_vle(&s, ((uint32_t)delta << 1) ^ (uint32_t)(delta >> 31));
            prev = cur;
        }
    }
    if (s.nibbles) {
        if (s.out < s.end) *s.out = s.word << (4 * (8 - s.nibbles));
        s.out++;
    }
    if (s.out > s.end) return -1;
    return (long)((uint8_t *)s.out - dst);
}

int rvl_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    vle_r s = {(const uint32_t *)(const void *)src, (const uint32_t *)(const void *)(src + size - size % 4), 0, 0, 0};
    uint16_t *p = dst, *end = dst + n;
    int prev = 0;
    while (p < end) {
        uint32_t zeros = get_vle(&s);
        if (s.bad || zeros > (size_t)(end - p)) return -1;
        memset(p, 0, zeros * sizeof *p);
        p += zeros;
        uint32_t nonzeros = get_vle(&s);
        if (s.bad || nonzeros > (size_t)(end - p)) return -1;
        for (uint32_t i = 0; i < nonzeros; i++) {
            uint32_t z = get_vle(&s);
            int cur = prev + (int)((z >> 1) ^ (0u - (z & 1)));
            *p++ = (uint16_t)cur;
            prev = cur;
        }
        if (s.bad) return -1;
    }
    return 0;
}
