/*
 * test_zstream.c — the C API test of CaptureKit's MultiScan-compatible streams (ck_zstream_*,
 * include/capturekit/ck_depth.h), docs/DESIGN.md#tests.
 *
 * Uses only include/capturekit.h and the built libcapturekit.so (no zlib here: foreign streams are
 * written by hand as DEFLATE stored blocks). Covers every ck_zstream_* function: round trips in every
 * format, the side index, NULL for every pointer, bad sizes, formats, levels and flags, and every
 * status code they return (CK_END, CK_E_CORRUPT, CK_E_STATE, CK_E_NOT_FOUND, CK_E_BUFFER_TOO_SMALL,
 * CK_E_INVALID_ARGUMENT, CK_E_IO), plus ck_zstream_writer_close(NULL) / ck_zstream_reader_close(NULL).
 *
 * Output: one line per failed check, then exactly one summary line "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "capturekit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

STATIC_ASSERT(CK_END == 2 && CK_ZSTREAM_INDEX == 4u && CK_OPEN_OVERWRITE == 1u && CK_OPEN_APPEND == 2u, zstream_flags);
STATIC_ASSERT(CK_FORMAT_DEPTH_F32 == 1 && CK_FORMAT_DEPTH_F16 == 2 && CK_FORMAT_DEPTH_MM == 3 && CK_FORMAT_U8 == 4,
              format_values);
STATIC_ASSERT(CK_ZSTREAM_DEFAULT_LEVEL >= 1 && CK_ZSTREAM_DEFAULT_LEVEL <= 9, default_level);

/* ============================================================================================
 * Helpers: temporary files, frames, independent float16 reference
 * ============================================================================================ */


static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int write_bytes(const char *path, const unsigned char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = fwrite(bytes, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static size_t read_bytes(const char *path, unsigned char *bytes, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return 0;
    n = fread(bytes, 1, cap, f);
    fclose(f);
    return n;
}

/* IEEE binary16 -> double (exact), written here independently of the library. */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp((double)m, -24) : ldexp((double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

enum { W = 5, H = 3, N = W * H, FRAMES = 7 };

/* Deterministic depth in metres (one invalid pixel per frame) and confidence. */
static void make_frame(int f, float *depth, uint8_t *conf)
{
    int i;
    for (i = 0; i < N; i++) {
        depth[i] = (i == (f * 3) % N) ? 0.0f : 0.5f + 0.25f * (float)f + 0.01f * (float)i;
        conf[i] = (uint8_t)((i + f) % 3);
    }
}

/* ============================================================================================
 * Tests
 * ============================================================================================ */

static void test_round_trip(void)
{
    const char *path = tmp_path("rt.depth.zlib");
    const char *cpath = tmp_path("rt.confidence.zlib");
    ck_zstream_writer *w = NULL, *cw = NULL;
    ck_zstream_reader *r = NULL, *cr = NULL;
    float depth[FRAMES][N], f32[N];
    uint16_t f16[FRAMES][N], h[N], mm[N];
    uint8_t conf[FRAMES][N], c[N + 1];
    uint64_t count = 99;
    size_t written = 0;
    int f, i, ok;

    for (f = 0; f < FRAMES; f++) make_frame(f, depth[f], conf[f]);
    CHECK_STATUS(ck_depth_convert(f16, CK_FORMAT_DEPTH_F16, depth, CK_FORMAT_DEPTH_F32, (size_t)N * FRAMES), CK_OK);

    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, CK_ZSTREAM_INDEX), CK_OK);
    CHECK(w != NULL);
    CHECK_STATUS(ck_zstream_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 0);
    for (f = 0; f < FRAMES; f++) {  /* alternate float32 and float16 input */
        if (f % 2) CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ depth[f], W, H, 0, CK_FORMAT_DEPTH_F32, 0 }), CK_OK);
        else CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ f16[f], W, H, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    }
    CHECK_STATUS(ck_zstream_writer_frame_count(&count, w), CK_OK);
    CHECK(count == FRAMES);
    /* Every frame is in the file before close (full flush + write per append). */
    CHECK(file_size(path) > 0);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK(file_size(tmp_path("rt.depth.zlib.idx")) == 8 * FRAMES);

    CHECK_STATUS(ck_zstream_writer_open(&cw, cpath, W, H, CK_FORMAT_U8, 9, 0), CK_OK);
    for (f = 0; f < FRAMES; f++) CHECK_STATUS(ck_zstream_writer_append(cw, &(ck_depth_map){ conf[f], W, H, 0, CK_FORMAT_U8, 0 }), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(cw), CK_OK);
    CHECK(file_size(tmp_path("rt.confidence.zlib.idx")) == -1);

    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(r != NULL);
    count = 0;
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == FRAMES);
    for (f = 0; f < FRAMES; f++) {
        CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[f], sizeof h) == 0);
    }
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_END); /* stays at the end */
    /* Random access, every output format, checked against an independent float16 decoder. */
    for (f = FRAMES - 1; f >= 0; f -= 2) {
        CHECK_STATUS(ck_zstream_reader_read(f32, sizeof f32, &written, r, (uint64_t)f, CK_FORMAT_DEPTH_F32), CK_OK);
        CHECK(written == (size_t)N * 4);
        CHECK_STATUS(ck_zstream_reader_read(mm, sizeof mm, &written, r, (uint64_t)f, CK_FORMAT_DEPTH_MM), CK_OK);
        CHECK(written == (size_t)N * 2);
        for (ok = 1, i = 0; i < N; i++) {
            double m = half_to_double(f16[f][i]);
            ok &= (double)f32[i] == m;
            ok &= mm[i] == (uint16_t)floor(m * 1000.0 + 0.5);
            ok &= (depth[f][i] == 0.0f) == (f16[f][i] == 0);
            ok &= fabs(m - depth[f][i]) <= 0.001 * depth[f][i];
        }
        check_report(ok, __FILE__, __LINE__, "frame %d as float32 / mm", f);
    }
    /* After read(i), next() continues with i + 1. */
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 2, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == (size_t)N * 2);
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == (size_t)N * 2);
    CHECK(memcmp(h, f16[3], sizeof h) == 0);
    /* Beyond the end: CK_END, for any index. */
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, FRAMES, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, UINT64_MAX, CK_FORMAT_DEPTH_F16), CK_END);
    ck_zstream_reader_close(r);

    CHECK_STATUS(ck_zstream_reader_open(&cr, cpath, W, H, CK_FORMAT_U8), CK_OK);
    for (f = 0; f < FRAMES; f++) {
        c[N] = 0xEE;
        CHECK_STATUS(ck_zstream_reader_next(c, sizeof c, &written, cr, CK_FORMAT_U8), CK_OK); /* a larger buffer is fine */
        CHECK(written == (size_t)N);
        CHECK(memcmp(c, conf[f], N) == 0 && c[N] == 0xEE);
    }
    CHECK_STATUS(ck_zstream_reader_next(c, sizeof c, &written, cr, CK_FORMAT_U8), CK_END);
    CHECK_STATUS(ck_zstream_reader_read(c, N, &written, cr, 4, CK_FORMAT_U8), CK_OK);
    CHECK(written == (size_t)N);
    CHECK(memcmp(c, conf[4], N) == 0);
    ck_zstream_reader_close(cr);

    /* Zero frames, 1x1 and the largest dimension. */
    CHECK_STATUS(ck_zstream_writer_open(&w, tmp_path("zero.depth.zlib"), 1, 1, CK_FORMAT_DEPTH_F16, 1, 0), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK_STATUS(ck_zstream_reader_open(&r, tmp_path("zero.depth.zlib"), 1, 1, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == 0);
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_END);
    ck_zstream_reader_close(r);
    CHECK_STATUS(ck_zstream_writer_open(&w, tmp_path("wide.confidence.zlib"), CK_DEPTH_MAX_DIMENSION, 1, CK_FORMAT_U8, 0, 0),
                 CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
}

static void test_writer_arguments(void)
{
    const char *path = tmp_path("args.depth.zlib");
    const char bad_utf8[] = { '/', 't', 'm', 'p', '/', (char)0xFF, 'x', 0 };
    ck_zstream_writer *w = (ck_zstream_writer *)&w; /* a non-NULL value that must be cleared */
    uint16_t h[N] = { 0 };
    uint64_t count;

    ERR(CK_E_INVALID_ARGUMENT, "writer_out", ck_zstream_writer_open, (NULL, path, W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_zstream_writer_open, (&w, NULL, W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    CHECK(w == NULL);
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_zstream_writer_open, (&w, "", W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "UTF-8", ck_zstream_writer_open, (&w, bad_utf8, W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_zstream_writer_open, (&w, path, 0, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_zstream_writer_open, (&w, path, W, 0, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_zstream_writer_open,
        (&w, path, CK_DEPTH_MAX_DIMENSION + 1, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_zstream_writer_open, (&w, path, W, UINT32_MAX, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F32, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_MM, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_writer_open, (&w, path, W, H, 0, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_writer_open, (&w, path, W, H, INT32_MIN, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, -1, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, 10, 0));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, CK_OPEN_APPEND));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, 0x80000000u));
    CHECK(w == NULL);
    CHECK(file_size(path) == -1); /* nothing was created by a refused open */

    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, 0), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "writer", ck_zstream_writer_append, (NULL, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_zstream_writer_append, (w, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_U8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_MM, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, 0, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, 77, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "count_out", ck_zstream_writer_frame_count, (NULL, w));
    ERR(CK_E_INVALID_ARGUMENT, "writer", ck_zstream_writer_frame_count, (&count, NULL));
    /* Argument errors do not poison the writer. */
    CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    CHECK_STATUS(ck_zstream_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 1);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(NULL), CK_OK);

    /* A confidence stream takes uint8 only. */
    CHECK_STATUS(ck_zstream_writer_open(&w, tmp_path("args.confidence.zlib"), W, H, CK_FORMAT_U8, 0, 0), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F32, 0 }));
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
}

static void test_writer_states_and_io(void)
{
    const char *path = tmp_path("state.depth.zlib");
    ck_zstream_writer *w = NULL;
    ck_zstream_reader *r = NULL;
    uint16_t h[N] = { 1, 2, 3 };
    uint64_t count = 0;

    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 3, 0), CK_OK);
    CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    /* An existing file is refused without CK_OPEN_OVERWRITE, and left alone. */
    ERR(CK_E_EXISTS, "exists", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_EXISTS, "exists", ck_zstream_writer_open, (&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, CK_ZSTREAM_INDEX));
    CHECK(w == NULL);
    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == 1);
    ck_zstream_reader_close(r);
    /* An existing side index blocks an indexed writer too. */
    CHECK(write_bytes(tmp_path("new.depth.zlib.idx"), (const unsigned char *)"x", 1));
    ERR(CK_E_EXISTS, ".idx", ck_zstream_writer_open, (&w, tmp_path("new.depth.zlib"), W, H, CK_FORMAT_DEPTH_F16, 0, CK_ZSTREAM_INDEX));
    CHECK(file_size(tmp_path("new.depth.zlib")) == -1);
    /* With CK_OPEN_OVERWRITE both are replaced. */
    CHECK_STATUS(ck_zstream_writer_open(&w, tmp_path("new.depth.zlib"), W, H, CK_FORMAT_DEPTH_F16, 0,
                                        CK_ZSTREAM_INDEX | CK_OPEN_OVERWRITE), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK(file_size(tmp_path("new.depth.zlib.idx")) == 0);
    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, CK_OPEN_OVERWRITE), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == 0);
    ck_zstream_reader_close(r);

    /* No such directory: CK_E_NOT_FOUND; a path inside a regular file: CK_E_IO. */
    ERR(CK_E_NOT_FOUND, "no-such-dir", ck_zstream_writer_open, (&w, tmp_path("no-such-dir/a.depth.zlib"), W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    ERR(CK_E_IO, "state.depth.zlib/x", ck_zstream_writer_open, (&w, tmp_path("state.depth.zlib/x"), W, H, CK_FORMAT_DEPTH_F16, 0, 0));
    CHECK(w == NULL);

    /* A device that is always full: the append fails (CK_E_IO), the writer refuses more frames
     * (CK_E_STATE), and close reports that the stream could not be cut back (CK_E_IO). */
    if (access("/dev/full", W_OK) == 0) {
        CHECK_STATUS(ck_zstream_writer_open(&w, "/dev/full", W, H, CK_FORMAT_DEPTH_F16, 0, CK_OPEN_OVERWRITE), CK_OK);
        ERR(CK_E_IO, "/dev/full", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }));
        ERR(CK_E_STATE, "failed earlier", ck_zstream_writer_append, (w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }));
        CHECK_STATUS(ck_zstream_writer_frame_count(&count, w), CK_OK);
        CHECK(count == 0);
        ERR(CK_E_IO, "ck_zstream_writer_close", ck_zstream_writer_close, (w)); /* and frees it */
    }
}

static void test_reader_arguments(void)
{
    const char *path = tmp_path("rargs.depth.zlib");
    const char bad_utf8[] = { (char)0xC3, (char)0x28, 0 };
    ck_zstream_writer *w = NULL;
    ck_zstream_reader *r = (ck_zstream_reader *)&r;
    uint16_t h[N] = { 0 };
    float f32[N];
    uint8_t c[N];
    uint64_t count;
    size_t written = 0;

    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, 0), CK_OK);
    CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ h, W, H, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);

    ERR(CK_E_INVALID_ARGUMENT, "reader_out", ck_zstream_reader_open, (NULL, path, W, H, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_zstream_reader_open, (&r, NULL, W, H, CK_FORMAT_DEPTH_F16));
    CHECK(r == NULL);
    ERR(CK_E_INVALID_ARGUMENT, "UTF-8", ck_zstream_reader_open, (&r, bad_utf8, W, H, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_zstream_reader_open, (&r, path, 0, H, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_zstream_reader_open, (&r, path, W, CK_DEPTH_MAX_DIMENSION + 1, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_reader_open, (&r, path, W, H, CK_FORMAT_DEPTH_F32));
    ERR(CK_E_INVALID_ARGUMENT, "stored_format", ck_zstream_reader_open, (&r, path, W, H, 5));
    ERR(CK_E_NOT_FOUND, "missing.depth.zlib", ck_zstream_reader_open, (&r, tmp_path("missing.depth.zlib"), W, H, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_IO, "rargs.depth.zlib/x", ck_zstream_reader_open, (&r, tmp_path("rargs.depth.zlib/x"), W, H, CK_FORMAT_DEPTH_F16));
    CHECK(r == NULL);

    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "count_out", ck_zstream_reader_frame_count, (NULL, r));
    ERR(CK_E_INVALID_ARGUMENT, "reader", ck_zstream_reader_frame_count, (&count, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "reader", ck_zstream_reader_next, (h, sizeof h, &written, NULL, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_zstream_reader_next, (NULL, sizeof h, &written, r, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_zstream_reader_next, (h, SIZE_MAX, &written, r, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_next, (h, sizeof h, &written, r, CK_FORMAT_U8));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_next, (h, sizeof h, &written, r, 0));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_next, (h, sizeof h, &written, r, -3));
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_zstream_reader_next, (h, sizeof h - 1, &written, r, CK_FORMAT_DEPTH_F16));
    CHECK(written == (size_t)N * 2); /* the bytes needed */
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_zstream_reader_next, (f32, sizeof h, &written, r, CK_FORMAT_DEPTH_F32));
    CHECK(written == (size_t)N * 4);
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_zstream_reader_next, (h, 0, &written, r, CK_FORMAT_DEPTH_MM));
    CHECK(written == (size_t)N * 2);
    ERR(CK_E_INVALID_ARGUMENT, "reader", ck_zstream_reader_read, (h, sizeof h, &written, NULL, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_zstream_reader_read, (NULL, sizeof h, &written, r, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_zstream_reader_read, (h, (size_t)-5, &written, r, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_read, (h, sizeof h, &written, r, 0, 99));
    written = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_zstream_reader_read, (h, 1, &written, r, 0, CK_FORMAT_DEPTH_F16));
    CHECK(written == (size_t)N * 2);
    written = 0;
    /* None of that moved the position. */
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == (size_t)N * 2);
    CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_END);
    ck_zstream_reader_close(r);
    ck_zstream_reader_close(NULL);

    /* A confidence reader gives uint8 only. */
    CHECK_STATUS(ck_zstream_writer_open(&w, tmp_path("rargs.confidence.zlib"), W, H, CK_FORMAT_U8, 0, 0), CK_OK);
    memset(c, 2, sizeof c);
    CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ c, W, H, 0, CK_FORMAT_U8, 0 }), CK_OK);
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    CHECK_STATUS(ck_zstream_reader_open(&r, tmp_path("rargs.confidence.zlib"), W, H, CK_FORMAT_U8), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_next, (f32, sizeof f32, &written, r, CK_FORMAT_DEPTH_F32));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_zstream_reader_read, (h, sizeof h, &written, r, 0, CK_FORMAT_DEPTH_F16));
    CHECK_STATUS(ck_zstream_reader_next(c, sizeof c, &written, r, CK_FORMAT_U8), CK_OK);
    CHECK(written == (size_t)N);
    ck_zstream_reader_close(r);
}

/* Writes FRAMES frames with an index; returns the file's bytes in `bytes` (size in *n). */
static void write_recording(const char *path, uint16_t f16[FRAMES][N], unsigned char *bytes, size_t cap, size_t *n)
{
    ck_zstream_writer *w = NULL;
    float depth[N];
    uint8_t conf[N];
    int f;
    CHECK_STATUS(ck_zstream_writer_open(&w, path, W, H, CK_FORMAT_DEPTH_F16, 0, CK_ZSTREAM_INDEX | CK_OPEN_OVERWRITE), CK_OK);
    for (f = 0; f < FRAMES; f++) {
        make_frame(f, depth, conf);
        CHECK_STATUS(ck_depth_convert(f16[f], CK_FORMAT_DEPTH_F16, depth, CK_FORMAT_DEPTH_F32, N), CK_OK);
        CHECK_STATUS(ck_zstream_writer_append(w, &(ck_depth_map){ f16[f], W, H, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    }
    CHECK_STATUS(ck_zstream_writer_close(w), CK_OK);
    *n = read_bytes(path, bytes, cap);
}

static void test_truncated_and_corrupt(void)
{
    const char *path = tmp_path("full.depth.zlib");
    const char *cut = tmp_path("cut.depth.zlib");
    static unsigned char bytes[1 << 16];
    uint16_t f16[FRAMES][N], h[N];
    size_t n = 0, at, ends = 0, corrupts = 0, written = 0;
    ck_zstream_reader *r = NULL;
    uint64_t count;
    char want[64];
    int f, delivered;
    ck_status s;

    write_recording(path, f16, bytes, sizeof bytes, &n);
    CHECK(n > 10 && n < sizeof bytes);
    /* Every cut: the frames before it, then CK_END (cut at a frame boundary) or CK_E_CORRUPT naming
     * the cut frame; frame_count is the number of complete frames. */
    for (at = 0; at <= n; at++) {
        int bad = 0;
        CHECK(write_bytes(cut, bytes, at));
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        delivered = 0;
        while ((s = ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16)) == CK_OK) {
            bad |= delivered >= FRAMES || memcmp(h, f16[delivered], sizeof h) != 0 || written != (size_t)N * 2;
            delivered++;
        }
        check_report(!bad, __FILE__, __LINE__, "cut at %zu: a delivered frame differs", at);
        check_report(s == CK_END || s == CK_E_CORRUPT, __FILE__, __LINE__, "cut at %zu: %s", at, ck_status_string(s));
        if (s == CK_E_CORRUPT) {
            corrupts++;
            snprintf(want, sizeof want, "frame %d", delivered);
            check_report(strstr(ck_last_error_message(), want) != NULL && strstr(ck_last_error_message(), "ck_zstream_reader_next"),
                         __FILE__, __LINE__, "cut at %zu: \"%s\" names %s", at, ck_last_error_message(), want);
        } else {
            ends++;
        }
        ck_zstream_reader_close(r);
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
        check_report(count == (uint64_t)delivered, __FILE__, __LINE__, "cut at %zu: count %llu, delivered %d", at,
                     (unsigned long long)count, delivered);
        ck_zstream_reader_close(r);
    }
    CHECK(ends >= FRAMES + 1 && corrupts > n / 2);

    /* A damaged byte anywhere: every call returns a status (zlib rejects most damage; raw DEFLATE has
     * no checksum, so some flips decode to other values). Never a crash or a read outside a buffer. */
    for (at = 0; at < n; at++) {
        unsigned char saved = bytes[at];
        bytes[at] ^= 0x5A;
        CHECK(write_bytes(cut, bytes, n));
        bytes[at] = saved;
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        for (f = 0; f < FRAMES + 1; f++) {
            s = ck_zstream_reader_read(h, sizeof h, &written, r, (uint64_t)(FRAMES - f), CK_FORMAT_DEPTH_F16);
            check_report(s == CK_OK || s == CK_END || s == CK_E_CORRUPT, __FILE__, __LINE__, "flip at %zu: %d", at, (int)s);
            check_report(s != CK_OK || written == (size_t)N * 2, __FILE__, __LINE__, "flip at %zu: written %zu", at, written);
        }
        s = ck_zstream_reader_frame_count(&count, r);
        CHECK(s == CK_OK || s == CK_E_CORRUPT);
        ck_zstream_reader_close(r);
    }

    /* A hand-made stream of DEFLATE stored blocks (any DEFLATE writer may emit them), one per frame,
     * then a final empty block: readable. With a damaged NLEN in frame 1's block: CK_E_CORRUPT there. */
    {
        static unsigned char s2[FRAMES * (5 + 2 * N) + 5];
        size_t k = 0;
        for (f = 0; f < FRAMES; f++) {
            int i;
            s2[k++] = 0x00;  /* BFINAL 0, BTYPE 00 (stored), padding */
            s2[k++] = (unsigned char)(2 * N); s2[k++] = 0;
            s2[k++] = (unsigned char)~(2 * N); s2[k++] = 0xFF;
            for (i = 0; i < N; i++) { s2[k++] = (unsigned char)(f16[f][i] & 0xFF); s2[k++] = (unsigned char)(f16[f][i] >> 8); }
        }
        s2[k++] = 0x01; s2[k++] = 0; s2[k++] = 0; s2[k++] = 0xFF; s2[k++] = 0xFF;  /* final empty stored block */
        CHECK(write_bytes(cut, s2, k));
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
        CHECK(count == FRAMES);
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 5, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[5], sizeof h) == 0);
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 0, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[0], sizeof h) == 0);
        ck_zstream_reader_close(r);
        s2[(5 + 2 * N) + 3] ^= 1;  /* frame 1's NLEN */
        CHECK(write_bytes(cut, s2, k));
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_next(h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_next, (h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16));
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_next, (h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16)); /* stays there */
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_read, (h, sizeof h, &written, r, 4, CK_FORMAT_DEPTH_F16));
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_frame_count, (&count, r));
        /* Damage is sticky (as zlib's Z_DATA_ERROR): even frame 0 is refused by this reader now... */
        ERR(CK_E_CORRUPT, "damaged earlier", ck_zstream_reader_read, (h, sizeof h, &written, r, 0, CK_FORMAT_DEPTH_F16));
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_next, (h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16));
        ck_zstream_reader_close(r);
        /* ...while a fresh reader still delivers the frames before the damage. */
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 0, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[0], sizeof h) == 0);
        ck_zstream_reader_close(r);
        /* Sticky from frame_count too: it found the damage first, next() at frame 0 is refused. */
        CHECK_STATUS(ck_zstream_reader_open(&r, cut, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        ERR(CK_E_CORRUPT, "frame 1", ck_zstream_reader_frame_count, (&count, r));
        ERR(CK_E_CORRUPT, "damaged earlier", ck_zstream_reader_next, (h, sizeof h, &written, r, CK_FORMAT_DEPTH_F16));
        ck_zstream_reader_close(r);
    }

    /* Opened with the wrong dimensions: the final block ends inside a frame, named by the message. */
    CHECK_STATUS(ck_zstream_reader_open(&r, path, 4, 4, CK_FORMAT_DEPTH_F16), CK_OK);
    ERR(CK_E_CORRUPT, "frame 6", ck_zstream_reader_frame_count, (&count, r));
    ck_zstream_reader_close(r);
}

static void test_side_index(void)
{
    const char *path = tmp_path("idx.depth.zlib");
    const char *idx = tmp_path("idx.depth.zlib.idx");
    static unsigned char bytes[1 << 16];
    unsigned char entries[8 * FRAMES];
    uint16_t f16[FRAMES][N], h[N];
    size_t n = 0, written = 0;
    ck_zstream_reader *r = NULL;
    uint64_t count;
    int f, i, ok = 1;

    write_recording(path, f16, bytes, sizeof bytes, &n);
    CHECK(read_bytes(idx, entries, sizeof entries) == sizeof entries);
    /* Little-endian uint64 offsets: 0 first, then each right after a 00 00 FF FF flush marker. */
    for (f = 0; f < FRAMES; f++) {
        uint64_t off = 0;
        for (i = 7; i >= 0; i--) off = (off << 8) | entries[8 * f + i];
        if (f == 0) ok &= off == 0;
        else ok &= off >= 4 && off < n && bytes[off - 4] == 0 && bytes[off - 3] == 0 && bytes[off - 2] == 0xFF && bytes[off - 1] == 0xFF;
    }
    check_report(ok, __FILE__, __LINE__, "index entries are flush points");
    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == FRAMES);
    for (f = FRAMES - 1; f >= 0; f--) {
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, (uint64_t)f, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[f], sizeof h) == 0);
    }
    /* Any index past the end, UINT64_MAX included, is CK_END (was a trap: index + 1 overflowed). */
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, UINT64_MAX, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, UINT64_MAX - 1, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 1, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == (size_t)N * 2);
    CHECK(memcmp(h, f16[1], sizeof h) == 0);
    ck_zstream_reader_close(r);
    /* An index with a middle entry deleted is refused, not trusted: frame 1 is frame 1 (it was frame
     * 2's bytes with CK_OK), and the count is right (it was one short). */
    {
        unsigned char fewer[8 * FRAMES];
        memcpy(fewer, entries, 8);
        memcpy(fewer + 8, entries + 16, 8 * (FRAMES - 2));
        CHECK(write_bytes(idx, fewer, 8 * (FRAMES - 1)));
        CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 1, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[1], sizeof h) == 0);
        CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, FRAMES - 1, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == (size_t)N * 2);
        CHECK(memcmp(h, f16[FRAMES - 1], sizeof h) == 0);
        CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
        CHECK(count == FRAMES);
        ck_zstream_reader_close(r);
        CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
        CHECK(count == FRAMES);
        ck_zstream_reader_close(r);
    }
    /* A garbage index is ignored (never required, never trusted blindly). */
    memset(entries, 0x11, sizeof entries);
    CHECK(write_bytes(idx, entries, sizeof entries));
    CHECK_STATUS(ck_zstream_reader_open(&r, path, W, H, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK_STATUS(ck_zstream_reader_frame_count(&count, r), CK_OK);
    CHECK(count == FRAMES);
    CHECK_STATUS(ck_zstream_reader_read(h, sizeof h, &written, r, 4, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == (size_t)N * 2);
    CHECK(memcmp(h, f16[4], sizeof h) == 0);
    ck_zstream_reader_close(r);
}

static int remove_entry(const char *name)
{
    return unlink(tmp_path(name));
}

int main(void)
{
    static const char *files[] = {
        "rt.depth.zlib", "rt.depth.zlib.idx", "rt.confidence.zlib", "zero.depth.zlib", "wide.confidence.zlib",
        "args.depth.zlib", "args.confidence.zlib", "state.depth.zlib", "new.depth.zlib", "new.depth.zlib.idx",
        "rargs.depth.zlib", "rargs.confidence.zlib", "full.depth.zlib", "full.depth.zlib.idx", "cut.depth.zlib",
        "idx.depth.zlib", "idx.depth.zlib.idx",
    };
    size_t i;
    if (tmp_dir_create("ck-test-zstream") != 0) return 1;

    test_round_trip();
    test_writer_arguments();
    test_writer_states_and_io();
    test_reader_arguments();
    test_truncated_and_corrupt();
    test_side_index();

    for (i = 0; i < sizeof files / sizeof files[0]; i++) (void)remove_entry(files[i]);
    if (rmdir(g_dir) != 0) fprintf(stderr, "note: %s not empty\n", g_dir);
    return CHECK_SUMMARY();
}
