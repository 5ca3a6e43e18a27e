/*
 * bench_raycast.c — batched ray vs oriented box, CaptureKit against a plain C loop (`make bench`).
 *
 * Built with -O3 -fno-math-errno -fno-trapping-math (no -march: baseline x86-64, SSE2) and linked
 * against libcapturekit.so. In one run it measures, on 256x192 and 1920x1440 pixel grids of a
 * camera outside a yawed box (some rays miss):
 *   (a) the speed-of-light reference: a scalar C loop over interleaved (u, v) pixels with the same
 *       math as the library (per-call precompute of the box-frame ray direction u*a + v*b + c, slab
 *       test, entering face, distance = t * |d|), compiled here at -O3 (GCC auto-vectorises it);
 *   (b) ck_ray_box_pixels over the same interleaved pixel-centre array;
 *   (c) ck_ray_box_grid;
 * as M rays/s (median of 9 repetitions of >= 50 ms each, the three methods interleaved), the ratios
 * (b)/(a) and (c)/(a) (median of the per-repetition ratios), and the
 * agreement of (b) and (c) with (a). Then the cost of a call through the .so (trivial and error
 * path) and the time to dlopen the .so in a fresh process (median of 21).
 *
 * The dlopen child: this binary re-executes itself with `--dlopen-child PATH`. Since the binary is
 * linked against libcapturekit.so, the child already has it mapped; so it dlopens a private copy
 * of the file (another inode, so the loader maps, relocates and initialises it from scratch).
 */
#define _GNU_SOURCE
#include "capturekit.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 9
#define MIN_REP_SECONDS 0.050
#define DLOPEN_RUNS 21

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
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, ck_status s)
{
    fprintf(stderr, "%s: %s\n  %s\n", what, ck_status_string(s), ck_last_error_message());
    exit(1);
}

/* ---------------------------------------------------------------------------------------------
 * (a) the reference: the library's math as a plain C loop
 * --------------------------------------------------------------------------------------------- */

typedef struct {
    float a[3], b[3], c[3]; /* box-frame ray direction = u * a + v * b + c */
    float lo[3], hi[3];     /* slab bounds relative to the camera: -h - o and h - o */
    int camera_inside;
} ref_setup;

/** Per-call precompute, in double, from the pose, intrinsics and box. */
static ref_setup ref_prepare(const ck_mat4 *pose, const ck_intrinsics *k, const ck_box *box)
{
    ref_setup s;
    double cy = cos((double)box->yaw), sy = sin((double)box->yaw), o[3], h[3];
    double cam[3][3] = { { 1.0 / k->fx, 0, 0 }, { 0, -1.0 / k->fy, 0 }, { -(double)k->cx / k->fx, (double)k->cy / k->fy, -1 } };
    float *dst[3] = { s.a, s.b, s.c };
    int i, r;
    for (i = 0; i < 3; i++) {
        double w[3];
        for (r = 0; r < 3; r++) w[r] = pose->m[0 * 4 + r] * cam[i][0] + pose->m[1 * 4 + r] * cam[i][1] + pose->m[2 * 4 + r] * cam[i][2];
        dst[i][0] = (float)(cy * w[0] - sy * w[2]); /* world -> box frame: R_y(yaw)^T */
        dst[i][1] = (float)w[1];
        dst[i][2] = (float)(sy * w[0] + cy * w[2]);
    }
    {
        double d[3] = { (double)pose->m[12] - box->center.x, (double)pose->m[13] - box->center.y, (double)pose->m[14] - box->center.z };
        o[0] = cy * d[0] - sy * d[2]; o[1] = d[1]; o[2] = sy * d[0] + cy * d[2];
    }
    h[0] = box->size.x / 2.0; h[1] = box->size.y / 2.0; h[2] = box->size.z / 2.0;
    s.camera_inside = 1;
    for (i = 0; i < 3; i++) {
        s.lo[i] = (float)(-h[i] - o[i]);
        s.hi[i] = (float)(h[i] - o[i]);
        if (fabs(o[i]) > h[i]) s.camera_inside = 0;
    }
    return s;
}

/** Face and distance of n rays through interleaved pixels; camera outside the box. */
static void ref_cast(int32_t *restrict faces, float *restrict dists, const float *restrict uv, size_t n,
                     const ck_mat4 *pose, const ck_intrinsics *k, const ck_box *box)
{
    const ref_setup s = ref_prepare(pose, k, box);
    const float ax = s.a[0], ay = s.a[1], az = s.a[2], bx = s.b[0], by = s.b[1], bz = s.b[2];
    const float cx = s.c[0], cy = s.c[1], cz = s.c[2];
    const float lox = s.lo[0], loy = s.lo[1], loz = s.lo[2], hix = s.hi[0], hiy = s.hi[1], hiz = s.hi[2];
    size_t i;
    /* Written so that GCC if-converts and vectorises it: the entering face is carried as a float
     * (selected by the direction's sign, which is what t1 < t2 means) and converted at the store;
     * that is ~15 % faster than carrying an int32 face through the selects. */
    for (i = 0; i < n; i++) {
        float u = uv[2 * i], v = uv[2 * i + 1];
        float dx = u * ax + (v * bx + cx), dy = u * ay + (v * by + cy), dz = u * az + (v * bz + cz);
        float ix = 1.0f / dx, iy = 1.0f / dy, iz = 1.0f / dz;
        float t1x = ix * lox, t2x = ix * hix, t1y = iy * loy, t2y = iy * hiy, t1z = iz * loz, t2z = iz * hiz;
        float nearx = t1x < t2x ? t1x : t2x, farx = t1x < t2x ? t2x : t1x;
        float neary = t1y < t2y ? t1y : t2y, fary = t1y < t2y ? t2y : t1y;
        float nearz = t1z < t2z ? t1z : t2z, farz = t1z < t2z ? t2z : t1z;
        /* a positive direction enters through the negative face: x left/right, y bottom/top, z front/back */
        float facex = dx > 0 ? 1.0f : 2.0f, facey = dy > 0 ? 3.0f : 4.0f, facez = dz > 0 ? 0.0f : 5.0f;
        float tnear = nearx, face = facex, tfar;
        int hit;
        face = neary > tnear ? facey : face;  /* ties keep the earlier axis, as the library does */
        tnear = neary > tnear ? neary : tnear;
        face = nearz > tnear ? facez : face;
        tnear = nearz > tnear ? nearz : tnear;
        tfar = fary < farx ? fary : farx;
        tfar = farz < tfar ? farz : tfar;
        hit = (tnear <= tfar) & (tnear >= 0.0f);
        faces[i] = (int32_t)(hit ? face : -1.0f);
        dists[i] = hit ? tnear * sqrtf(dx * dx + dy * dy + dz * dz) : INFINITY;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Timing
 * --------------------------------------------------------------------------------------------- */

typedef struct {
    const ck_mat4 *pose;
    const ck_intrinsics *k;
    const ck_box *box;
    const float *uv;
    size_t n;
    int32_t *faces;
    float *dists;
} workload;

enum method { REF_C, PIXELS, GRID };

static void run_once(enum method m, const workload *w)
{
    ck_status s = CK_OK;
    size_t count;
    switch (m) {
    case REF_C: ref_cast(w->faces, w->dists, w->uv, w->n, w->pose, w->k, w->box); break;
    case PIXELS: s = ck_ray_box_pixels(w->faces, w->dists, w->uv, w->n, w->pose, w->k, w->box); break;
    case GRID: s = ck_ray_box_grid(w->faces, w->dists, w->n, &count, w->pose, w->k, w->box); break;
    }
    if (s != CK_OK) die(m == PIXELS ? "ck_ray_box_pixels" : "ck_ray_box_grid", s);
}

/** Calls of `m` needed for one repetition of >= MIN_REP_SECONDS (after a warm-up call). */
static long calibrate(enum method m, const workload *w)
{
    double t0, t;
    long calls = 1, i;
    run_once(m, w); /* warm up: page in the buffers */
    for (;;) {
        t0 = now();
        for (i = 0; i < calls; i++) run_once(m, w);
        t = now() - t0;
        if (t >= MIN_REP_SECONDS / 4) return (long)((double)calls * MIN_REP_SECONDS * 1.1 / t) + 1;
        calls *= 2;
    }
}

/**
 * M rays/s of the three methods, measured interleaved (a, b, c, a, b, c, ...) so that a change of
 * machine load affects them alike: rates[m] = median over REPS repetitions of >= MIN_REP_SECONDS;
 * ratio[m] = median over the repetitions of rate(m) / rate(a) in the same repetition.
 */
static void measure(const workload *w, double rates[3], double ratio[3])
{
    double r[3][REPS], q[3][REPS];
    long calls[3];
    int m, rep;
    for (m = 0; m < 3; m++) calls[m] = calibrate((enum method)m, w);
    for (rep = 0; rep < REPS; rep++) {
        for (m = 0; m < 3; m++) {
            long i, n = calls[m];
            double t0, t;
            do {
                t0 = now();
                for (i = 0; i < n; i++) run_once((enum method)m, w);
                t = now() - t0;
                if (t < MIN_REP_SECONDS) n *= 2;
            } while (t < MIN_REP_SECONDS);
            r[m][rep] = (double)n * (double)w->n / t / 1e6;
        }
        for (m = 0; m < 3; m++) q[m][rep] = r[m][rep] / r[REF_C][rep];
    }
    for (m = 0; m < 3; m++) {
        rates[m] = median(r[m], REPS);
        ratio[m] = median(q[m], REPS);
    }
}

/** Agreement of (faces, dists) with the reference: face fraction and largest relative distance gap. */
static void agreement(const int32_t *rf, const float *rd, const int32_t *f, const float *d, size_t n, double *face_pct,
                      double *max_rel, size_t *dist_bad)
{
    size_t i, same = 0, bad = 0;
    double worst = 0;
    for (i = 0; i < n; i++) {
        if (f[i] != rf[i]) continue;
        same++;
        if (f[i] == CK_FACE_NONE) {
            if (!(isinf(d[i]) && isinf(rd[i]))) bad++;
        } else {
            double rel = fabs((double)d[i] - rd[i]) / rd[i];
            if (rel > worst) worst = rel;
            if (!(rel <= 1e-5)) bad++;
        }
    }
    *face_pct = 100.0 * (double)same / (double)n;
    *max_rel = worst;
    *dist_bad = bad;
}

/* ---------------------------------------------------------------------------------------------
 * The scene
 * --------------------------------------------------------------------------------------------- */

static ck_mat4 look_at(double ex, double ey, double ez, double tx, double ty, double tz)
{
    double f[3] = { tx - ex, ty - ey, tz - ez }, r[3], u[3], n;
    ck_mat4 m;
    int i;
    n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (i = 0; i < 3; i++) f[i] /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0]; /* f x (0, 1, 0) */
    n = sqrt(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3; i++) { m.m[i] = (float)r[i]; m.m[4 + i] = (float)u[i]; m.m[8 + i] = (float)-f[i]; }
    m.m[12] = (float)ex; m.m[13] = (float)ey; m.m[14] = (float)ez; m.m[15] = 1;
    return m;
}

/* ---------------------------------------------------------------------------------------------
 * dlopen in a fresh process
 * --------------------------------------------------------------------------------------------- */

static int dlopen_child(const char *path)
{
    double t0 = now(), t;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    t = now() - t0;
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
    if (!dlsym(h, "ck_version_number")) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 1; }
    printf("%.9f\n", t);
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    char buf[1 << 16];
    ssize_t n;
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755), ok = in >= 0 && out >= 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0) ok = 0;
    return ok;
}

/** Median dlopen time in ms over DLOPEN_RUNS fresh processes; min/max through the pointers. */
static double measure_dlopen(double *min_ms, double *max_ms)
{
    Dl_info info;
    char dir[] = "/tmp/ck-bench-XXXXXX", copy[256];
    double ms[DLOPEN_RUNS];
    int r;
    void *sym = dlsym(RTLD_DEFAULT, "ck_version_number"); /* the copy this process is linked with */
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) { fprintf(stderr, "cannot find the loaded libcapturekit\n"); exit(1); }
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    snprintf(copy, sizeof copy, "%s/libcapturekit-copy.so", dir);
    if (!copy_file(info.dli_fname, copy)) { fprintf(stderr, "cannot copy %s\n", info.dli_fname); exit(1); }
    for (r = 0; r < DLOPEN_RUNS; r++) {
        int fd[2], status;
        char out[64] = { 0 };
        pid_t pid;
        if (pipe(fd) != 0) { perror("pipe"); exit(1); }
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            dup2(fd[1], 1);
            close(fd[0]); close(fd[1]);
            execl("/proc/self/exe", "bench_raycast", "--dlopen-child", copy, (char *)NULL);
            _exit(127);
        }
        close(fd[1]);
        if (read(fd[0], out, sizeof out - 1) <= 0) out[0] = '\0';
        close(fd[0]);
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out[0] == '\0') { fprintf(stderr, "dlopen child failed\n"); exit(1); }
        ms[r] = 1e3 * atof(out);
    }
    unlink(copy);
    rmdir(dir);
    qsort(ms, DLOPEN_RUNS, sizeof ms[0], cmp_double);
    *min_ms = ms[0];
    *max_ms = ms[DLOPEN_RUNS - 1];
    return ms[DLOPEN_RUNS / 2];
}

/* ---------------------------------------------------------------------------------------------
 * Call overhead through the .so
 * --------------------------------------------------------------------------------------------- */

enum call_kind { CALL_VERSION, CALL_ERROR, CALL_RAY_BOX, CALL_PIXELS_0 };

/** ns per call: median over REPS repetitions of >= MIN_REP_SECONDS. */
static double measure_call(enum call_kind kind, const ck_ray *ray, const ck_box *box, const ck_mat4 *pose,
                           const ck_intrinsics *k)
{
    double ns[REPS];
    volatile uint32_t sink = 0;
    long calls = 1 << 16, i;
    int r;
    ck_hit hit;
    for (r = 0; r < REPS; r++) {
        double t0, t;
        do {
            uint32_t acc = 0;
            t0 = now();
            switch (kind) {
            case CALL_VERSION: for (i = 0; i < calls; i++) acc += ck_version_number(); break;
            case CALL_ERROR: for (i = 0; i < calls; i++) acc += (uint32_t)ck_ray_box(NULL, ray, box); break;
            case CALL_RAY_BOX: for (i = 0; i < calls; i++) acc += (uint32_t)ck_ray_box(&hit, ray, box); break;
            case CALL_PIXELS_0:
                for (i = 0; i < calls; i++) acc += (uint32_t)ck_ray_box_pixels(NULL, NULL, NULL, 0, pose, k, box);
                break;
            }
            t = now() - t0;
            sink += acc;
            if (t < MIN_REP_SECONDS) calls *= 2;
        } while (t < MIN_REP_SECONDS);
        ns[r] = t / (double)calls * 1e9;
    }
    (void)sink;
    return median(ns, REPS);
}

/* --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static const uint32_t grids[2][2] = { { 256, 192 }, { 1920, 1440 } };
    ck_intrinsics full = { 1450.0f, 1450.0f, 959.5f, 719.5f, 1920, 1440 };
    ck_mat4 pose = look_at(0.55, 0.15, 0.95, 0.02, -0.5, -0.05);
    ck_vec3 center = { 0.0f, -0.5f, 0.0f }, size = { 0.6f, 0.5f, 0.8f };
    ck_box box;
    ck_status s;
    double rate[2][3], ratio[3];
    int g, m, disagree = 0;

    if (argc == 3 && strcmp(argv[1], "--dlopen-child") == 0) return dlopen_child(argv[2]);

    if (ck_version_number() != CK_VERSION_NUMBER) {
        fprintf(stderr, "library %s != header %s\n", ck_version_string(), CK_VERSION_STRING);
        return 1;
    }
    if ((s = ck_box_init(&box, center, size, 0.52f)) != CK_OK) die("ck_box_init", s);

    printf("CaptureKit %s raycast benchmark: one core, M rays/s = median of %d runs of >= %.0f ms\n", ck_version_string(),
           REPS, MIN_REP_SECONDS * 1e3);
    printf("scene: camera outside a box yawed 30 deg, looking at it; every pixel centre cast; face + distance per ray\n\n");
    printf("%-10s %-44s %10s %8s  %s\n", "grid", "method", "M rays/s", "vs (a)", "agreement with (a)");

    for (g = 0; g < 2; g++) {
        uint32_t w = grids[g][0], h = grids[g][1];
        size_t n = (size_t)w * h, i;
        ck_intrinsics k;
        float *uv = malloc(2 * n * sizeof *uv), *rd = malloc(n * sizeof *rd), *d = malloc(n * sizeof *d);
        int32_t *rf = malloc(n * sizeof *rf), *f = malloc(n * sizeof *f);
        workload wl;
        size_t hits = 0;
        if (!uv || !rd || !d || !rf || !f) { fprintf(stderr, "out of memory\n"); return 1; }
        if ((s = ck_intrinsics_scale(&k, &full, w, h)) != CK_OK) die("ck_intrinsics_scale", s);
        if (ref_prepare(&pose, &k, &box).camera_inside) { fprintf(stderr, "camera must be outside the box\n"); return 1; }
        for (i = 0; i < n; i++) { uv[2 * i] = (float)(i % w) + 0.5f; uv[2 * i + 1] = (float)(i / w) + 0.5f; }
        wl.pose = &pose; wl.k = &k; wl.box = &box; wl.uv = uv; wl.n = n;

        /* Answers first: (a) into rf/rd; (b) and (c) are compared with it after the timing. */
        ref_cast(rf, rd, uv, n, &pose, &k, &box);
        for (i = 0; i < n; i++) hits += rf[i] != CK_FACE_NONE;
        wl.faces = f;
        wl.dists = d;
        measure(&wl, rate[g], ratio);

        for (m = 0; m < 3; m++) {
            static const char *const names[3] = { "(a) C scalar loop, -O3 (reference)", "(b) ck_ray_box_pixels (interleaved u,v)",
                                                  "(c) ck_ray_box_grid" };
            char grid_name[32], agree[128] = "-";
            if (m != REF_C) {
                double pct, worst;
                size_t bad;
                run_once((enum method)m, &wl);
                agreement(rf, rd, f, d, n, &pct, &worst, &bad);
                snprintf(agree, sizeof agree, "face %.4f %%, distance max rel diff %.1e (%lu beyond 1e-5)%s", pct, worst,
                         (unsigned long)bad, pct >= 99.9 && bad == 0 ? "" : "  << DISAGREES");
                if (!(pct >= 99.9 && bad == 0)) disagree = 1;
            }
            snprintf(grid_name, sizeof grid_name, "%ux%u", (unsigned)w, (unsigned)h);
            printf("%-10s %-44s %10.1f %8.2f  %s\n", m == 0 ? grid_name : "", names[m], rate[g][m], ratio[m], agree);
        }
        printf("%-10s (%.1f %% of the rays hit the box)\n", "", 100.0 * (double)hits / (double)n);
        free(uv); free(rd); free(d); free(rf); free(f);
    }

    {
        ck_ray ray;
        double v, e, rb, p0, dl, dl_min, dl_max;
        ray.origin.x = 0.9f; ray.origin.y = 0.35f; ray.origin.z = 1.6f;
        ray.direction.x = -0.85f; ray.direction.y = -0.9f; ray.direction.z = -1.7f;
        v = measure_call(CALL_VERSION, &ray, &box, &pose, &full);
        e = measure_call(CALL_ERROR, &ray, &box, &pose, &full);
        rb = measure_call(CALL_RAY_BOX, &ray, &box, &pose, &full);
        p0 = measure_call(CALL_PIXELS_0, &ray, &box, &pose, &full);
        dl = measure_dlopen(&dl_min, &dl_max);
        printf("\n%-58s %10s\n", "a call through the .so", "ns/call");
        printf("%-58s %10.1f\n", "ck_version_number()", v);
        printf("%-58s %10.1f\n", "ck_ray_box(NULL, ...) -> CK_E_INVALID_ARGUMENT (message set)", e);
        printf("%-58s %10.1f\n", "ck_ray_box(&hit, ...), one ray", rb);
        printf("%-58s %10.1f\n", "ck_ray_box_pixels(..., count 0, ...): fixed cost per batch", p0);
        printf("\n%-58s %10s\n", "loading the .so", "ms");
        printf("%-58s %10.3f  (min %.3f, max %.3f, %d processes)\n", "dlopen(RTLD_NOW) in a fresh process, median", dl, dl_min,
               dl_max, DLOPEN_RUNS);
    }
    if (disagree) fprintf(stderr, "bench_raycast: the library disagrees with the reference (see the table)\n");
    return disagree;
}
