/* MultiScan's depth stream (docs/FORMATS.md §1), one frame: the frame's little-endian 16-bit
 * samples through raw DEFLATE (no zlib header, windowBits -15) at level 5, the app's setting. The
 * app writes one stream per recording with a full flush per frame, which resets the matcher at
 * every frame: the same as compressing each frame on its own (minus the flush marker). */
#include <zlib.h>
#include "peers.h"

static z_stream def, inf;
static int def_ready, inf_ready;

size_t zlib5_bound(uint32_t w, uint32_t h) { return (size_t)w * h * 2 + ((size_t)w * h * 2) / 1000 + 64; }

long zlib5_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    if (!def_ready) {
        if (deflateInit2(&def, 5, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
        def_ready = 1;
    } else if (deflateReset(&def) != Z_OK) return -1;
    def.next_in = (Bytef *)(uintptr_t)src;
    def.avail_in = (uInt)((size_t)w * h * 2);
    def.next_out = dst;
    def.avail_out = (uInt)cap;
    if (deflate(&def, Z_FINISH) != Z_STREAM_END) return -1;
    return (long)(cap - def.avail_out);
}

int zlib5_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    if (!inf_ready) {
        if (inflateInit2(&inf, -15) != Z_OK) return -1;
        inf_ready = 1;
    } else if (inflateReset(&inf) != Z_OK) return -1;
    inf.next_in = (Bytef *)(uintptr_t)src;
    inf.avail_in = (uInt)size;
    inf.next_out = (Bytef *)dst;
    inf.avail_out = (uInt)((size_t)w * h * 2);
    return inflate(&inf, Z_FINISH) == Z_STREAM_END && inf.avail_out == 0 ? 0 : -1;
}
