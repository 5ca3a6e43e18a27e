/*
 * bench_guidance.c — the per-frame cost of guided capture (`make bench`).
 *
 * Measures, on a simulated 60 Hz orbit around a box (poses precomputed, so only library time
 * is counted):
 *   (a) ck_scheduler_update with a box (the object-capture defaults), events drained;
 *   (b) the same with a 256x192 float32 depth map (median of the centre window);
 *   (c) ck_coverage_add_view with the default 64x48 ray grid (cells), centre ray and dial;
 *   (d) a full per-frame update: (a) + (c) + ck_coverage_suggest, as if every frame were captured;
 *   (e) ck_sharpness_score on 256x192 and 1920x1440 luma;
 *   (r) the reference for (c): ck_ray_box_grid alone on the same 64x48 grid (faces and
 *       distances only), so the cost of coverage beyond the raycast shows as a ratio.
 * Each figure is the median of 9 repetitions of >= 50 ms; printed as microseconds per call and
 * calls per second. The target for (d) is <= 50 us (a 60 Hz frame has 16,667 us).
 * `bench_guidance --add-view-calls N` makes only N calls of (c), for callgrind (BENCHMARKS.md).
 */
#define _POSIX_C_SOURCE 199309L
#include "capturekit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 9
#define MIN_REP_SECONDS 0.050
#define FRAMES 3600
#define PI 3.14159265358979323846

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check(ck_status s, const char *what)
{
    if (s < 0) {
        fprintf(stderr, "%s: %s\n  %s\n", what, ck_status_string(s), ck_last_error_message());
        exit(1);
    }
}

static ck_mat4 look_at(double ex, double ey, double ez, double tx, double ty, double tz)
{
    double f[3] = { tx - ex, ty - ey, tz - ez }, r[3], u[3], n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    ck_mat4 m;
    int i;
    for (i = 0; i < 3; i++) f[i] /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0];
    n = sqrt(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3; i++) { m.m[i] = (float)r[i]; m.m[4 + i] = (float)u[i]; m.m[8 + i] = (float)-f[i]; }
    m.m[12] = (float)ex; m.m[13] = (float)ey; m.m[14] = (float)ez; m.m[15] = 1;
    return m;
}

static ck_mat4 g_poses[FRAMES];
static ck_box g_box;
static ck_intrinsics g_k = { 1500, 1500, 960, 720, 1920, 1440 }, g_depth_k = { 200, 200, 128, 96, 256, 192 };
static float g_depth[192 * 256];
static uint8_t g_luma_small[192 * 256], g_luma_big[1440 * 1920];
static ck_scheduler *g_scheduler;
static ck_coverage *g_coverage;
static double g_time;

typedef void (*work_fn)(int i);

static void drain(void)
{
    ck_event e;
    while (ck_scheduler_next_event(&e, g_scheduler) == CK_OK) {}
    while (ck_coverage_next_event(&e, g_coverage) == CK_OK) {}
}

static void scheduler_only(int i)
{
    ck_scheduler_frame f = CK_SCHEDULER_FRAME_INIT;
    ck_guidance g;
    f.timestamp = g_time; g_time += 1.0 / 60;
    f.pose = g_poses[i % FRAMES];
    f.box = &g_box;
    check(ck_scheduler_update(&g, g_scheduler, &f), "ck_scheduler_update");
    drain();
}

static void scheduler_depth(int i)
{
    ck_scheduler_frame f = CK_SCHEDULER_FRAME_INIT;
    ck_guidance g;
    f.timestamp = g_time; g_time += 1.0 / 60;
    f.pose = g_poses[i % FRAMES];
    f.box = &g_box;
    f.depth = (ck_depth_map){ g_depth, g_depth_k.width, g_depth_k.height, 0, CK_FORMAT_DEPTH_F32, 0u }; f.depth_intrinsics = g_depth_k;
    check(ck_scheduler_update(&g, g_scheduler, &f), "ck_scheduler_update");
    drain();
}

static void coverage_only(int i)
{
    int32_t face;
    check(ck_coverage_add_view(&face, g_coverage, &g_poses[i % FRAMES], &g_k, g_time), "ck_coverage_add_view");
    g_time += 1.0 / 60;
}

static void full_frame(int i)
{
    ck_coverage_hint h;
    scheduler_only(i);
    coverage_only(i);
    check(ck_coverage_suggest(&h, g_coverage, &g_poses[i % FRAMES]), "ck_coverage_suggest");
}

static ck_intrinsics g_grid_k;
static int32_t g_faces[64 * 48];
static float g_dist[64 * 48];

static void grid_only(int i)
{
    size_t n;
    check(ck_ray_box_grid(g_faces, g_dist, 64 * 48, &n, &g_poses[i % FRAMES], &g_grid_k, &g_box), "ck_ray_box_grid");
}

static void sharp_small(int i)
{
    float s;
    (void)i;
    check(ck_sharpness_score(&s, &(ck_image){ g_luma_small, 256, 192, 256, CK_IMAGE_FORMAT_GRAY8, 0 }), "ck_sharpness_score");
}

static void sharp_big(int i)
{
    float s;
    (void)i;
    check(ck_sharpness_score(&s, &(ck_image){ g_luma_big, 1920, 1440, 1920, CK_IMAGE_FORMAT_GRAY8, 0 }), "ck_sharpness_score");
}

/** Median seconds per call over REPS repetitions of at least MIN_REP_SECONDS each. */
static double measure(work_fn fn)
{
    double per[REPS];
    int r, n = 1, i, total = 0;
    /* Calibrate the batch size. */
    for (;;) {
        double t0 = now();
        for (i = 0; i < n; i++) fn(total++);
        if (now() - t0 >= MIN_REP_SECONDS / 4) break;
        n *= 2;
    }
    n *= 4;
    for (r = 0; r < REPS; r++) {
        double t0 = now();
        for (i = 0; i < n; i++) fn(total++);
        per[r] = (now() - t0) / n;
    }
    qsort(per, REPS, sizeof per[0], cmp_double);
    return per[REPS / 2];
}

static void report(const char *what, double seconds)
{
    printf("  %-58s %9.2f us  %12.0f /s\n", what, seconds * 1e6, 1.0 / seconds);
}

int main(int argc, char **argv)
{
    ck_vec3 c = { 0.0f, 0.5f, 0.0f }, s = { 0.6f, 1.0f, 0.6f };
    int i;
    unsigned x = 12345;
    double full, cov, grid;
    check(ck_box_init(&g_box, c, s, 0.3f), "ck_box_init");
    for (i = 0; i < FRAMES; i++) {
        double az = i / 60.0 * 0.45 / 2.0, h = (i / 1800) ? 1.6 : 0.9;
        g_poses[i] = look_at(-sin(az) * 2, h, -cos(az) * 2, 0, 0.5, 0);
    }
    for (i = 0; i < 192 * 256; i++) {
        x = x * 1103515245u + 12345u;
        g_depth[i] = (x >> 16) % 10 == 0 ? 0.0f : 1.5f + (float)((x >> 8) % 1000) / 1000.0f;
        g_luma_small[i] = (uint8_t)(x >> 24);
    }
    for (i = 0; i < 1440 * 1920; i++) { x = x * 1103515245u + 12345u; g_luma_big[i] = (uint8_t)(x >> 24); }
    check(ck_scheduler_create(&g_scheduler, NULL), "ck_scheduler_create");
    check(ck_coverage_create(&g_coverage, &g_box, NULL), "ck_coverage_create");
    if (argc == 3 && strcmp(argv[1], "--add-view-calls") == 0) {
        /* For an instruction profile: N calls of (c) and nothing else. Run it under
         * `valgrind --tool=callgrind` with two N and divide the difference (loading excluded). */
        int calls = atoi(argv[2]);
        for (i = 0; i < calls; i++) coverage_only(i);
        drain();
        ck_coverage_free(g_coverage);
        ck_scheduler_free(g_scheduler);
        return 0;
    }

    printf("bench_guidance: median of %d repetitions (>= %.0f ms each), one core\n", REPS, MIN_REP_SECONDS * 1e3);
    report("(a) ck_scheduler_update (box, events drained)", measure(scheduler_only));
    report("(b) ck_scheduler_update + 256x192 depth map", measure(scheduler_depth));
    check(ck_intrinsics_scale(&g_grid_k, &g_k, 64, 48), "ck_intrinsics_scale");
    cov = measure(coverage_only);
    report("(c) ck_coverage_add_view (64x48 ray grid, 4x4 cells)", cov);
    grid = measure(grid_only);
    report("(r) ck_ray_box_grid 64x48 alone (reference for c)", grid);
    full = measure(full_frame);
    report("(d) full per-frame update: (a) + (c) + ck_coverage_suggest", full);
    report("(e) ck_sharpness_score 256x192", measure(sharp_small));
    report("    ck_sharpness_score 1920x1440", measure(sharp_big));
    printf("  (c) / (r) = %.2f\n", cov / grid);
    printf("  full per-frame update: %.1f us = %.2f %% of a 60 Hz frame (target <= 50 us: %s)\n", full * 1e6,
           100 * full * 60, full <= 50e-6 ? "met" : "MISSED");
    ck_coverage_free(g_coverage);
    ck_scheduler_free(g_scheduler);
    return 0;
}
