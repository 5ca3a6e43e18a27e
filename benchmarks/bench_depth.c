/* CaptureKit depth codec benchmark: one core, the same synthetic LiDAR-like frames for every method.
 * Prints ratio vs float16, bytes/frame, encode and decode frames/s (median of 7 runs of >= 50 ms),
 * and memcpy of the same frames as the speed-of-light reference. Built and run by `make bench`. */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>
#include <math.h>
#include <zlib.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../Tests/capi/support.h"  /* REQUIRE, look_at, remove_tree */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


typedef struct {
    int w, h, frames;
    float *f32;      /* frames * w * h */
    uint16_t *f16;
    uint8_t *conf;
    uint8_t **enc;   /* encoded float16 frames */
    size_t *enc_size;
    uint8_t **cenc;  /* encoded confidence */
    size_t *cenc_size;
} set;

static void make_set(set *s, ck_scene *scene, int w, int h, int frames) {
    size_t n = (size_t)w * h, written = 0;
    int i;
    ck_intrinsics k;
    s->w = w; s->h = h; s->frames = frames;
    s->f32 = malloc(n * frames * sizeof(float));
    s->f16 = malloc(n * frames * sizeof(uint16_t));
    s->conf = malloc(n * frames);
    k.fx = k.fy = 0.82f * (float)w; k.cx = 0.5f * (float)w; k.cy = 0.5f * (float)h;
    k.width = (uint32_t)w; k.height = (uint32_t)h;
    for (i = 0; i < frames; i++) {
        /* An orbit at two heights around the target, looking slightly past it into the room. */
        float a = 0.35f * (float)i, y = (i % 2) ? 1.5f : 0.9f;
        ck_mat4 pose = look_at((const float[3]){1.6f * sinf(a), y, 1.6f * cosf(a)}, (const float[3]){0.2f * cosf(a), 0.3f, -0.2f * sinf(a)});
        REQUIRE(ck_scene_render_depth(s->f32 + n * i, s->conf + n * i, n, &written, scene, &pose, &k, (uint64_t)i));
        if (written != n) exit(2);
    }
    REQUIRE(ck_depth_convert(s->f16, CK_FORMAT_DEPTH_F16, s->f32, CK_FORMAT_DEPTH_F32, n * frames));
}

/* Median seconds per frame of `body` over 7 runs of >= 50 ms, cycling through the frames. */
typedef void (*body_fn)(set *, int, void *);
static double measure(set *s, body_fn body, void *ctx) {
    double runs[7];
    int r, i = 0;
    for (r = 0; r < 7; r++) {
        int reps = 0;
        double t0 = now(), t;
        do { body(s, i++ % s->frames, ctx); reps++; t = now() - t0; } while (t < 0.05);
        runs[r] = t / reps;
    }
    qsort(runs, 7, sizeof runs[0], cmp_double);
    return runs[3];
}

typedef struct {
    ck_depth_codec *codec; uint8_t *out; size_t cap; void *tmp;
    ZSTD_CCtx *zc; ZSTD_DCtx *zd; z_stream zs; int zlevel;
    uint8_t **peer; size_t *peer_size;  /* a peer's encoded frames (for its decode timing) */
} ctx_t;

/* Peers, written here as a rig would with the same libraries. */
static void p_zstd(set *s, int i, void *c) {          /* float16 + zstd-1 per frame */
    ctx_t *x = c; size_t n = (size_t)s->w * s->h;
    size_t r = ZSTD_compressCCtx(x->zc, x->out, x->cap, s->f16 + n * i, n * 2, 1);
    if (ZSTD_isError(r)) exit(2);
}
static void p_left(set *s, int i, void *c) {          /* float16, left-neighbour difference, zstd-1 */
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, j;
    const uint16_t *f = s->f16 + n * i; uint16_t *d = x->tmp;
    d[0] = f[0];
    for (j = 1; j < n; j++) d[j] = (uint16_t)(f[j] - f[j - 1]);
    if (ZSTD_isError(ZSTD_compressCCtx(x->zc, x->out, x->cap, d, n * 2, 1))) exit(2);
}
static void p_left_dec(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, j;
    uint16_t *d = x->tmp;
    if (ZSTD_isError(ZSTD_decompressDCtx(x->zd, d, n * 2, x->peer[i], x->peer_size[i]))) exit(2);
    for (j = 1; j < n; j++) d[j] = (uint16_t)(d[j] + d[j - 1]);
}
static void p_zlib(set *s, int i, void *c) {          /* MultiScan: raw DEFLATE stream, full flush per frame */
    ctx_t *x = c; size_t n = (size_t)s->w * s->h;
    x->zs.next_in = (Bytef *)(s->f16 + n * i); x->zs.avail_in = (uInt)(n * 2);
    do { x->zs.next_out = x->out; x->zs.avail_out = (uInt)x->cap; deflate(&x->zs, Z_FULL_FLUSH); } while (x->zs.avail_out == 0);
}
static void p_zlib_dec(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h; z_stream d;
    memset(&d, 0, sizeof d); inflateInit2(&d, -15);
    d.next_in = x->peer[i]; d.avail_in = (uInt)x->peer_size[i]; d.next_out = x->tmp; d.avail_out = (uInt)(n * 2);
    inflate(&d, Z_SYNC_FLUSH); inflateEnd(&d);
}

/* Encodes every frame with a peer (for ratio and decode timing). */
static size_t peer_encode_all(set *s, ctx_t *x, body_fn enc, int zlib) {
    size_t total = 0, n = (size_t)s->w * s->h; int i;
    for (i = 0; i < s->frames; i++) {
        size_t size;
        if (zlib) {
            /* Each frame as its own full-flushed raw deflate block sequence (what a seek would decode). */
            z_stream z; memset(&z, 0, sizeof z);
            deflateInit2(&z, x->zlevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
            z.next_in = (Bytef *)(s->f16 + n * i); z.avail_in = (uInt)(n * 2); z.next_out = x->out; z.avail_out = (uInt)x->cap;
            deflate(&z, Z_FULL_FLUSH); size = x->cap - z.avail_out; deflateEnd(&z);
        } else if (enc == p_left) {
            size_t j; uint16_t *d = x->tmp; const uint16_t *f = s->f16 + n * i;
            d[0] = f[0]; for (j = 1; j < n; j++) d[j] = (uint16_t)(f[j] - f[j - 1]);
            size = ZSTD_compressCCtx(x->zc, x->out, x->cap, d, n * 2, 1);
        } else {
            size = ZSTD_compressCCtx(x->zc, x->out, x->cap, s->f16 + n * i, n * 2, 1);
        }
        x->peer[i] = realloc(x->peer[i], size); memcpy(x->peer[i], x->out, size); x->peer_size[i] = size; total += size;
    }
    return total;
}
static void p_zstd_dec(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h;
    if (ZSTD_isError(ZSTD_decompressDCtx(x->zd, x->tmp, n * 2, x->peer[i], x->peer_size[i]))) exit(2);
}

static void b_memcpy(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h;
    memcpy(x->tmp, s->f16 + n * i, n * 2);
}
static void b_enc16(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, wr;
    REQUIRE(ck_depth_encode(x->out, x->cap, &wr, x->codec, &(ck_depth_map){ s->f16 + n * i, (uint32_t)s->w, (uint32_t)s->h, 0, CK_FORMAT_DEPTH_F16, 0 }));
}
static void b_enc32(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, wr;
    REQUIRE(ck_depth_encode(x->out, x->cap, &wr, x->codec, &(ck_depth_map){ s->f32 + n * i, (uint32_t)s->w, (uint32_t)s->h, 0, CK_FORMAT_DEPTH_F32, 0 }));
}
static void b_dec16(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, written = 0;
    REQUIRE(ck_depth_decode(x->tmp, n * 4, &written, x->codec, s->enc[i], s->enc_size[i], CK_FORMAT_DEPTH_F16));
    if (written != n * 2) exit(2);
}
static void b_dec32(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, written = 0;
    REQUIRE(ck_depth_decode(x->tmp, n * 4, &written, x->codec, s->enc[i], s->enc_size[i], CK_FORMAT_DEPTH_F32));
    if (written != n * 4) exit(2);
}
static void b_cenc(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, wr;
    REQUIRE(ck_depth_encode(x->out, x->cap, &wr, x->codec, &(ck_depth_map){ s->conf + n * i, (uint32_t)s->w, (uint32_t)s->h, 0, CK_FORMAT_U8, 0 }));
}
static void b_cdec(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h, written = 0;
    REQUIRE(ck_depth_decode(x->tmp, n, &written, x->codec, s->cenc[i], s->cenc_size[i], CK_FORMAT_U8));
    if (written != n) exit(2);
}
static void b_f32to16(set *s, int i, void *c) {
    ctx_t *x = c; size_t n = (size_t)s->w * s->h;
    REQUIRE(ck_depth_convert(x->tmp, CK_FORMAT_DEPTH_F16, s->f32 + n * i, CK_FORMAT_DEPTH_F32, n));
}

static void run(ck_scene *scene, int w, int h, int frames) {
    set s;
    ctx_t x;
    size_t n = (size_t)w * h, total = 0, ctotal = 0, written = 0;
    int i, lossless = 1;
    double t;
    make_set(&s, scene, w, h, frames);
    REQUIRE(ck_depth_codec_create(&x.codec, 0));
    x.zc = ZSTD_createCCtx(); x.zd = ZSTD_createDCtx();
    x.cap = ck_depth_encode_bound((uint32_t)w, (uint32_t)h, CK_FORMAT_DEPTH_F16) + n;
    x.out = malloc(x.cap);
    x.tmp = malloc(n * 4);
    s.enc = malloc(sizeof(uint8_t *) * frames); s.enc_size = malloc(sizeof(size_t) * frames);
    s.cenc = malloc(sizeof(uint8_t *) * frames); s.cenc_size = malloc(sizeof(size_t) * frames);
    for (i = 0; i < frames; i++) {
        REQUIRE(ck_depth_encode(x.out, x.cap, &s.enc_size[i], x.codec, &(ck_depth_map){ s.f16 + n * i, (uint32_t)w, (uint32_t)h, 0, CK_FORMAT_DEPTH_F16, 0 }));
        s.enc[i] = malloc(s.enc_size[i]); memcpy(s.enc[i], x.out, s.enc_size[i]); total += s.enc_size[i];
        REQUIRE(ck_depth_encode(x.out, x.cap, &s.cenc_size[i], x.codec, &(ck_depth_map){ s.conf + n * i, (uint32_t)w, (uint32_t)h, 0, CK_FORMAT_U8, 0 }));
        s.cenc[i] = malloc(s.cenc_size[i]); memcpy(s.cenc[i], x.out, s.cenc_size[i]); ctotal += s.cenc_size[i];
        REQUIRE(ck_depth_decode(x.tmp, n * 4, &written, x.codec, s.enc[i], s.enc_size[i], CK_FORMAT_DEPTH_F16));
        if (written != n * 2 || memcmp(x.tmp, s.f16 + n * i, n * 2) != 0) lossless = 0;
    }
    {
        size_t zeros = 0, j;
        for (j = 0; j < n * frames; j++) zeros += s.f16[j] == 0;
        printf("\n%dx%d, %d frames (%.1f%% invalid pixels)\n", w, h, frames, 100.0 * (double)zeros / (double)(n * frames));
    }
    printf("  %-44s %8s %10s %12s %12s\n", "method", "ratio", "bytes/fr", "encode fps", "decode fps");
    t = measure(&s, b_memcpy, &x);
    printf("  %-44s %8.2f %10zu %12.0f %12s\n", "memcpy of the float16 frame (reference)", 1.0, n * 2, 1 / t, "-");
    {
        double e16 = measure(&s, b_enc16, &x), d16 = measure(&s, b_dec16, &x);
        double e32 = measure(&s, b_enc32, &x), d32 = measure(&s, b_dec32, &x);
        double ratio = (double)(n * 2 * frames) / (double)total;
        printf("  %-44s %8.2f %10zu %12.0f %12.0f%s\n", "native codec, float16 in/out", ratio, total / frames, 1 / e16, 1 / d16,
               lossless ? "" : "  NOT LOSSLESS");
        printf("  %-44s %8.2f %10zu %12.0f %12.0f\n", "native codec, float32 metres in/out (conv.)", ratio, total / frames, 1 / e32, 1 / d32);
    }
    {
        double ce = measure(&s, b_cenc, &x), cd = measure(&s, b_cdec, &x);
        printf("  %-44s %8.2f %10zu %12.0f %12.0f   (ratio vs uint8)\n", "native codec, confidence uint8", (double)(n * frames) / (double)ctotal,
               ctotal / frames, 1 / ce, 1 / cd);
    }
    {   /* peers on the same frames */
        struct { const char *name; body_fn enc, dec; int zlib, level; } peers[] = {
            {"peer: float16 + zlib-5 raw stream (MultiScan)", p_zlib, p_zlib_dec, 1, 5},
            {"peer: float16 + zlib-1 raw stream", p_zlib, p_zlib_dec, 1, 1},
            {"peer: float16 + zstd-1 per frame", p_zstd, p_zstd_dec, 0, 0},
            {"peer: float16, left diff, zstd-1 per frame", p_left, p_left_dec, 0, 0},
        };
        size_t p;
        x.peer = calloc((size_t)frames, sizeof(uint8_t *)); x.peer_size = calloc((size_t)frames, sizeof(size_t));
        for (p = 0; p < sizeof peers / sizeof peers[0]; p++) {
            size_t ptotal;
            double pe, pd;
            x.zlevel = peers[p].level;
            ptotal = peer_encode_all(&s, &x, peers[p].enc, peers[p].zlib);
            if (peers[p].zlib) {
                memset(&x.zs, 0, sizeof x.zs);
                deflateInit2(&x.zs, peers[p].level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
            }
            pe = measure(&s, peers[p].enc, &x);
            pd = measure(&s, peers[p].dec, &x);
            if (peers[p].zlib) deflateEnd(&x.zs);
            printf("  %-44s %8.2f %10zu %12.0f %12.0f\n", peers[p].name, (double)(n * 2 * frames) / (double)ptotal,
                   ptotal / frames, 1 / pe, 1 / pd);
        }
        for (i = 0; i < frames; i++) free(x.peer[i]);
        free(x.peer); free(x.peer_size);
    }
    t = measure(&s, b_f32to16, &x);
    printf("  float32 -> float16 conversion: %.1f us/frame\n", t * 1e6);
    for (i = 0; i < frames; i++) { free(s.enc[i]); free(s.cenc[i]); }
    free(s.enc); free(s.enc_size); free(s.cenc); free(s.cenc_size);
    free(s.f32); free(s.f16); free(s.conf); free(x.out); free(x.tmp);
    ck_depth_codec_free(x.codec);
    ZSTD_freeCCtx(x.zc); ZSTD_freeDCtx(x.zd);
}

int main(void) {
    ck_scene *scene;
    if (ck_version_number() != CK_VERSION_NUMBER) { fprintf(stderr, "version mismatch\n"); return 1; }
    REQUIRE(ck_scene_create(&scene, 7));
    printf("CaptureKit %s depth benchmark: one core, synthetic LiDAR-like frames (ck_scene), median of 7 runs >= 50 ms\n",
           ck_version_string());
    run(scene, 256, 192, 40);
    run(scene, 640, 480, 12);
    run(scene, 1280, 720, 6);
    ck_scene_free(scene);
    return 0;
}
