/* CaptureKit MultiScan stream benchmark: ck_zstream_writer / ck_zstream_reader at zlib levels 1-9 on
 * the same synthetic LiDAR-like frames as bench_depth.c (ck_scene, 256x192 and the confidence maps),
 * through the shipped library and a real file. One core; median of 7 runs of >= 50 ms of thread CPU time.
 * Encode = ck_zstream_writer_append (compress + full flush + write(2)); decode = ck_zstream_reader_next
 * over the file (read + inflate + copy out). The ratio is against the float16 (uint8) frames.
 * Built and run by `make bench`; the table chose CK_ZSTREAM_DEFAULT_LEVEL (BENCHMARKS.md). */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../Tests/capi/support.h"  /* REQUIRE, look_at, remove_tree */

/* Thread CPU time (user + system, write(2) included): robust to other processes sharing the cores. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


enum { W = 256, H = 192, FRAMES = 40 };
static float g_f32[FRAMES][W * H];
static uint16_t g_f16[FRAMES][W * H];
static uint8_t g_conf[FRAMES][W * H];
static float g_out[W * H];
static char g_path[512];

/* The frames of bench_depth.c: an orbit at two heights around the target. */
static void make_frames(void) {
    ck_scene *scene;
    ck_intrinsics k;
    size_t written = 0;
    int i;
    REQUIRE(ck_scene_create(&scene, 7));
    k.fx = k.fy = 0.82f * W; k.cx = 0.5f * W; k.cy = 0.5f * H; k.width = W; k.height = H;
    for (i = 0; i < FRAMES; i++) {
        float a = 0.35f * (float)i, y = (i % 2) ? 1.5f : 0.9f;
        ck_mat4 pose = look_at((const float[3]){1.6f * sinf(a), y, 1.6f * cosf(a)}, (const float[3]){0.2f * cosf(a), 0.3f, -0.2f * sinf(a)});
        REQUIRE(ck_scene_render_depth(g_f32[i], g_conf[i], (size_t)W * H, &written, scene, &pose, &k, (uint64_t)i));
        if (written != (size_t)W * H) exit(2);
    }
    REQUIRE(ck_depth_convert(g_f16, CK_FORMAT_DEPTH_F16, g_f32, CK_FORMAT_DEPTH_F32, (size_t)W * H * FRAMES));
    ck_scene_free(scene);
}

/* Median seconds per frame of appending frames (cycling) with `format` at `level`. */
static double encode(int32_t stored, int32_t format, int level) {
    double runs[7];
    int r, i = 0;
    for (r = 0; r < 7; r++) {
        ck_zstream_writer *w;
        int reps = 0;
        double t0, t;
        REQUIRE(ck_zstream_writer_open(&w, g_path, W, H, stored, level, CK_OPEN_OVERWRITE));
        t0 = now();
        do {
            const void *src = format == CK_FORMAT_DEPTH_F32 ? (const void *)g_f32[i % FRAMES]
                            : format == CK_FORMAT_DEPTH_F16 ? (const void *)g_f16[i % FRAMES] : (const void *)g_conf[i % FRAMES];
            REQUIRE(ck_zstream_writer_append(w, &(ck_depth_map){ src, W, H, 0, format, 0 }));
            i++; reps++;
            t = now() - t0;
        } while (t < 0.05);
        runs[r] = t / reps;
        REQUIRE(ck_zstream_writer_close(w));
    }
    qsort(runs, 7, sizeof runs[0], cmp_double);
    return runs[3];
}

/* Writes the FRAMES frames once; returns the file size. */
static long write_file(int32_t stored, int level) {
    ck_zstream_writer *w;
    struct stat st;
    int i;
    REQUIRE(ck_zstream_writer_open(&w, g_path, W, H, stored, level, CK_OPEN_OVERWRITE));
    for (i = 0; i < FRAMES; i++)
        REQUIRE(ck_zstream_writer_append(w, &(ck_depth_map){ stored == CK_FORMAT_U8 ? (const void *)g_conf[i] : (const void *)g_f16[i], W, H, 0, stored, 0 }));
    REQUIRE(ck_zstream_writer_close(w));
    if (stat(g_path, &st) != 0) { perror(g_path); exit(1); }
    return (long)st.st_size;
}

/* Median seconds per frame of reading the file front to back with next(), as `format`. */
static double decode(int32_t stored, int32_t format) {
    double runs[7];
    int r;
    size_t cap = sizeof g_out, written = 0;
    size_t frame_bytes = (size_t)W * H * (format == CK_FORMAT_DEPTH_F32 ? 4 : format == CK_FORMAT_U8 ? 1 : 2);
    for (r = 0; r < 7; r++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            ck_zstream_reader *rd;
            ck_status s;
            REQUIRE(ck_zstream_reader_open(&rd, g_path, W, H, stored));
            while ((s = ck_zstream_reader_next(g_out, cap, &written, rd, format)) == CK_OK) {
                if (written != frame_bytes) exit(2);
                reps++;
            }
            REQUIRE(s);
            ck_zstream_reader_close(rd);
            t = now() - t0;
        } while (t < 0.05);
        runs[r] = t / reps;
    }
    qsort(runs, 7, sizeof runs[0], cmp_double);
    return runs[3];
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    int level;
    if (ck_version_number() != CK_VERSION_NUMBER) { fprintf(stderr, "version mismatch\n"); return 1; }
    snprintf(g_path, sizeof g_path, "%s/ck-bench-%ld.depth.zlib", dir, (long)getpid());
    make_frames();
    printf("CaptureKit %s MultiScan streams (ck_zstream_*): %dx%d, %d synthetic LiDAR-like frames, file in %s,\n"
           "one core, median of 7 runs >= 50 ms of thread CPU time; default level CK_ZSTREAM_DEFAULT_LEVEL = %d\n",
           ck_version_string(), W, H, FRAMES, dir, CK_ZSTREAM_DEFAULT_LEVEL);
    printf("  %-5s %7s %9s %12s %12s %12s %12s | %10s %12s %12s\n", "level", "ratio", "bytes/fr", "enc fps f16",
           "enc fps f32", "dec fps f16", "dec fps f32", "conf ratio", "conf enc fps", "conf dec fps");
    for (level = 1; level <= 9; level++) {
        long size = write_file(CK_FORMAT_DEPTH_F16, level);
        double e16 = encode(CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_F16, level);
        double e32 = encode(CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_F32, level);
        double d16, d32, ce, cd;
        long csize;
        write_file(CK_FORMAT_DEPTH_F16, level);
        d16 = decode(CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_F16);
        d32 = decode(CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_F32);
        csize = write_file(CK_FORMAT_U8, level);
        ce = encode(CK_FORMAT_U8, CK_FORMAT_U8, level);
        write_file(CK_FORMAT_U8, level);
        cd = decode(CK_FORMAT_U8, CK_FORMAT_U8);
        printf("  %-5d %7.2f %9ld %12.0f %12.0f %12.0f %12.0f | %10.1f %12.0f %12.0f\n", level,
               (double)W * H * 2 * FRAMES / (double)size, size / FRAMES, 1 / e16, 1 / e32, 1 / d16, 1 / d32,
               (double)W * H * FRAMES / (double)csize, 1 / ce, 1 / cd);
        fflush(stdout);
    }
    unlink(g_path);
    return 0;
}
