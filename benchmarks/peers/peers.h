/* Peer depth codecs for benchmarks/bench_codec.c (issues 10, 24), written from the published
 * algorithms. Every peer encodes one width x height frame of uint16 samples (float16 bit patterns
 * or millimetres; 0 = invalid) into one self-contained buffer and decodes it back bit-exactly.
 *
 *   size_t <peer>_bound(uint32_t w, uint32_t h);
 *   long   <peer>_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h);
 *          -> encoded size, or -1 on failure (dst too small, library error)
 *   int    <peer>_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h);
 *          -> 0, or -1 for a malformed buffer
 *
 * Scratch memory and zstd/zlib contexts are static: one thread at a time (a benchmark). */
#ifndef CK_PEERS_H
#define CK_PEERS_H
#include <stddef.h>
#include <stdint.h>

/* A static scratch buffer that grows (never shrinks). */
void *peer_scratch(int slot, size_t size);

static inline uint16_t zz16(uint16_t r) { return (uint16_t)((r << 1) ^ (uint16_t)(0 - (r >> 15))); }
static inline uint16_t unzz16(uint16_t z) { return (uint16_t)((z >> 1) ^ (uint16_t)(0 - (z & 1))); }

#define PEER_DECL(p)                                                                       \
    size_t p##_bound(uint32_t w, uint32_t h);                                              \
    long p##_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h); \
    int p##_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h);

PEER_DECL(left_zstd)
PEER_DECL(med_zstd)
PEER_DECL(rvl)
PEER_DECL(zlib5)
PEER_DECL(png16)
#endif
