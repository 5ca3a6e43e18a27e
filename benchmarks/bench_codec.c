/* Issue 24: the native depth codec vs its C peers on real sensor depth and on the synthetic
 * profiles, all in C, one core, interleaved repetitions (benchmarks/bench_codec.py prepares the
 * frames and prints the residual statistics; `make bench-codec` runs both).
 *
 *   bench_codec [--reps N] [--codecs name,name] SET.frames...   (left_zstd always runs: the baseline)
 *
 * A .frames file: "CKFR", u32 width, u32 height, u32 count, u32 kind (CK_DEPTH_KIND_*), then count
 * frames of width x height uint16 samples (little-endian). Every codec is checked lossless on
 * every frame before it is timed; each repetition encodes then decodes every frame once per codec,
 * codecs in turn; the median repetition is reported, as frames per second and as a ratio to the
 * simple peer (left-valid + zigzag + byte planes + zstd-1) measured in the same run. */
#define _GNU_SOURCE
#include <capturekit.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "peers/peers.h"

#ifdef CK_HAVE_JXL
size_t jxl_bound(uint32_t w, uint32_t h);
long jxl_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h);
int jxl_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h);
void jxl_set_effort(int e);
#endif

typedef struct codec {
    const char *name;
    size_t (*bound)(uint32_t, uint32_t);
    long (*enc)(uint8_t *, size_t, const uint16_t *, uint32_t, uint32_t);
    int (*dec)(uint16_t *, const uint8_t *, size_t, uint32_t, uint32_t);
    int setting;  /* jxl effort, or CaptureKit's level */
} codec;

/* CaptureKit through its C API, in the peers' shape. One codec per level for the whole run, as
 * the peers keep their zstd contexts: recreating it whenever the default and archival entries
 * alternate (every repetition) timed a fresh codec's first decode (new zstd context and scratch
 * memory, page faults) on single-frame sets. */
static ck_depth_codec *ck, *ck_codecs[2];
static int32_t ck_kind = CK_DEPTH_KIND_MM;
static int ck_levels[2] = {-1, -1};
static void ck_use(int level) {
    for (int i = 0; i < 2; i++) {
        if (ck_codecs[i] && ck_levels[i] == level) { ck = ck_codecs[i]; return; }
        if (!ck_codecs[i]) {
            if (ck_depth_codec_create(&ck_codecs[i], level) != CK_OK) {
                fprintf(stderr, "ck_depth_codec_create(%d): %s\n", level, ck_last_error_message());
                exit(1);
            }
            ck_levels[i] = level;
            ck = ck_codecs[i];
            return;
        }
    }
    fprintf(stderr, "more than two CaptureKit levels\n");
    exit(1);
}
static int32_t ck_fmt(void) { return ck_kind == CK_DEPTH_KIND_FLOAT16 ? CK_FORMAT_DEPTH_F16 : CK_FORMAT_DEPTH_MM; }
static size_t ck_bound(uint32_t w, uint32_t h) { return ck_depth_encode_bound(w, h, ck_fmt()); }
static long ck_enc(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    ck_depth_map m = {src, w, h, 0, ck_fmt(), 0};
    size_t n = 0;
    return ck_depth_encode(dst, cap, &n, ck, &m) == CK_OK ? (long)n : -1;
}
static int ck_dec(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    return ck_depth_decode(dst, (size_t)w * h * 2, NULL, ck, src, size, ck_fmt()) == CK_OK ? 0 : -1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static void select_codec(const codec *c) {
#ifdef CK_HAVE_JXL
    if (c->enc == jxl_encode) jxl_set_effort(c->setting);
#endif
    if (c->enc == ck_enc) ck_use(c->setting);
}

int main(int argc, char **argv) {
    int reps = 9;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_getaffinity(0, sizeof one, &one) == 0) {  /* pin to the last allowed CPU */
        int last = -1;
        for (int i = 0; i < CPU_SETSIZE; i++) if (CPU_ISSET(i, &one)) last = i;
        CPU_ZERO(&one);
        CPU_SET(last, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    codec all[] = {
        {"left_zstd", left_zstd_bound, left_zstd_encode, left_zstd_decode, 0},
        {"med_zstd", med_zstd_bound, med_zstd_encode, med_zstd_decode, 0},
        {"zlib5", zlib5_bound, zlib5_encode, zlib5_decode, 0},
#ifdef CK_HAVE_JXL
        {"jxl_e1", jxl_bound, jxl_encode, jxl_decode, 1},
        {"jxl_e3", jxl_bound, jxl_encode, jxl_decode, 3},
#endif
        {"capturekit", ck_bound, ck_enc, ck_dec, 0},
        {"capturekit_archival", ck_bound, ck_enc, ck_dec, CK_DEPTH_LEVEL_ARCHIVAL},
    };
    int nc = (int)(sizeof all / sizeof all[0]);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--reps") && a + 1 < argc) { reps = atoi(argv[++a]); continue; }
        if (!strcmp(argv[a], "--codecs") && a + 1 < argc) {  /* keep the named ones (and the baseline) */
            const char *list = argv[++a];
            int kept = 1;
            for (int c = 1; c < nc; c++) {
                const char *p = strstr(list, all[c].name);
                size_t len = strlen(all[c].name);
                if (p && (p[len] == ',' || p[len] == 0) && (p == list || p[-1] == ',')) all[kept++] = all[c];
            }
            nc = kept;
            continue;
        }
        FILE *f = fopen(argv[a], "rb");
        uint32_t hd[5];
        char magic[4];
        if (!f || fread(magic, 1, 4, f) != 4 || memcmp(magic, "CKFR", 4) || fread(hd, 4, 4, f) != 4) {
            fprintf(stderr, "%s: not a .frames file\n", argv[a]);
            return 1;
        }
        uint32_t w = hd[0], h = hd[1], count = hd[2];
        ck_kind = (int32_t)hd[3];
        size_t n = (size_t)w * h;
        uint16_t *frames = malloc(n * 2 * count), *out = malloc(n * 2);
        if (!frames || !out || fread(frames, 2, n * count, f) != n * count) { fprintf(stderr, "%s: short\n", argv[a]); return 1; }
        fclose(f);
        uint8_t **blobs = calloc((size_t)nc * count, sizeof *blobs);
        size_t *sizes = calloc((size_t)nc * count, sizeof *sizes);
        double *te = calloc((size_t)nc * reps, sizeof *te), *td = calloc((size_t)nc * reps, sizeof *td);
        for (int c = 0; c < nc; c++) {
            select_codec(&all[c]);
            size_t cap = all[c].bound(w, h);
            for (uint32_t i = 0; i < count; i++) {
                uint8_t *b = malloc(cap);
                long s = all[c].enc(b, cap, frames + n * i, w, h);
                if (s < 0 || all[c].dec(out, b, (size_t)s, w, h) != 0 || memcmp(out, frames + n * i, n * 2)) {
                    fprintf(stderr, "%s: %s is not lossless on frame %u\n", argv[a], all[c].name, i);
                    return 1;
                }
                blobs[c * count + i] = b;
                sizes[c * count + i] = (size_t)s;
            }
        }
        uint8_t *scratch = malloc(all[0].bound(w, h) * 4 + (1 << 20));
        /* Each timing covers at least 2 Mpixel: a small set is cycled (a single 256 x 192 frame 41
         * times), so it is timed like the multi-frame sets, after its first frame, instead of as
         * one call of about 50 us that follows the other codecs' runs (cold caches). */
        int cycles = (int)(2000000 / (n * count)) + 1;
        for (int r = 0; r < reps; r++) {
            for (int c = 0; c < nc; c++) {
                select_codec(&all[c]);
                size_t cap = all[c].bound(w, h);
                double t0 = now();
                for (int k = 0; k < cycles; k++)
                    for (uint32_t i = 0; i < count; i++) all[c].enc(scratch, cap, frames + n * i, w, h);
                double t1 = now();
                for (int k = 0; k < cycles; k++)
                    for (uint32_t i = 0; i < count; i++) all[c].dec(out, blobs[c * count + i], sizes[c * count + i], w, h);
                double t2 = now();
                te[c * reps + r] = (t1 - t0) / ((double)count * cycles);
                td[c * reps + r] = (t2 - t1) / ((double)count * cycles);
            }
        }
        double pe = 0, pd = 0, ps = 0;
        printf("\n#### %s: %ux%u, %u frames (cycled %d times), median of %d interleaved repetitions\n", argv[a], w, h, count,
               cycles, reps);
        printf("| codec | ratio | bytes/frame | encode fps | decode fps | size vs peer | encode vs peer | decode vs peer |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int c = 0; c < nc; c++) {
            double bytes = 0;
            for (uint32_t i = 0; i < count; i++) bytes += sizes[c * count + i];
            bytes /= count;
            double e = median(te + c * reps, reps), d = median(td + c * reps, reps);
            if (c == 0) { pe = e; pd = d; ps = bytes; }
            printf("| %s | %.2f | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.2fx |\n", all[c].name, n * 2.0 / bytes, bytes,
                   1 / e, 1 / d, ps / bytes, pe / e, pd / d);
        }
        fflush(stdout);
        for (size_t i = 0; i < (size_t)nc * count; i++) free(blobs[i]);
        free(blobs); free(sizes); free(te); free(td); free(frames); free(out); free(scratch);
    }
    ck_depth_codec_free(ck_codecs[0]);
    ck_depth_codec_free(ck_codecs[1]);
    return 0;
}
