/* A real rig at 60 Hz (issues 11 and 22): how long ck_session_process holds the camera thread.
 *
 * Frames arrive at a real 60 Hz (the loop sleeps until each frame's due time), as a phone camera
 * delivers them: 1920x1440 images, 256x192 depth + confidence streamed to the MultiScan files every
 * frame, coverage on, a capture due every second. Per call we record the caller-thread time and
 * report it split by frame kind (capture frames: the scheduler said capture; other frames), with
 * p50 / p99 / max, the captures made and dropped (CK_EVENT_CAPTURE_DROPPED), the stream frames
 * dropped (CK_EVENT_STREAM_FRAME_DROPPED), and how long the final flush waited.
 *
 * Every configuration runs twice in one run: quiet (nothing else started by the bench; the machine
 * may still be busy with other work: the load average is printed) and loaded (next to two
 * CPU-bound processes the bench forks, busy loops killed at the end of the configuration; they
 * die with the bench too). Configurations, each `seconds` long:
 *   RGB8 pixels, PNG (default level)
 *   RGB8 pixels, JPEG q90
 *   NV12 (ARKit's capturedImage) converted off-thread, JPEG q90
 *   RGB8 pixels, PNG, handed over (ck_session_frame.image_release: no copy on the caller's thread)
 * Rendering is excluded (60 depth frames and one image are rendered before the clock starts and
 * reused; the poses keep moving). Usage: bench_rig [seconds-per-config] [work-folder]. Built and run
 * by `make bench`; numbers go to BENCHMARKS.md, "A real rig at 60 Hz". */
#define _GNU_SOURCE
#include <capturekit.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../Tests/capi/support.h"  /* REQUIRE, look_at, remove_tree */


#define W 1920
#define H 1440
#define DW 256
#define DH 192
#define FPS 60

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
    double d = t - now();
    if (d > 0) {
        struct timespec s = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&s, NULL);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static ck_mat4 pose_at(double t) {
    /* a hand-held orbit at ~0.3 m/s with a little vertical bob */
    double a = 0.3 * t / 1.3;
    float eye[3], target[3] = {0.0f, 0.25f, 0.0f};
    eye[0] = (float)(1.3 * sin(a)); eye[1] = (float)(0.55 + 0.03 * sin(2.1 * t)); eye[2] = (float)(1.3 * cos(a));
    return look_at(eye, target);
}

/* Two CPU-bound processes next to the rig: busy loops that die with the bench (parent death
 * signal on Linux; everywhere a 10-minute alarm and a check that the parent is still there). */
static pid_t burners[2];

static void start_load(void) {
    int i;
    for (i = 0; i < 2; i++) {
        pid_t p = fork();
        if (p == 0) {
            volatile unsigned long x = 0;
            pid_t parent = getppid();
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
            alarm(600);
            for (;;) {
                unsigned long k;
                for (k = 0; k < 50000000ul; k++) x += k;
                if (getppid() != parent) _exit(0);
            }
        }
        burners[i] = p;
    }
}

static void stop_load(void) {
    int i;
    for (i = 0; i < 2; i++)
        if (burners[i] > 0) { kill(burners[i], SIGKILL); waitpid(burners[i], NULL, 0); burners[i] = 0; }
}

static double load_average(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) { if (fscanf(f, "%lf", &l) != 1) l = -1; fclose(f); }
    return l;
}

enum { RGB_PNG, RGB_JPEG, NV12_JPEG, RGB_PNG_HANDOVER, CONFIGS };
static const char *names[CONFIGS] = { "RGB8, PNG", "RGB8, JPEG q90", "NV12, JPEG q90", "RGB8, PNG, handed" };

/* image_release of the handed-over configuration: counts the releases (every frame's, once). */
static void count_release(void *user) { __atomic_fetch_add((int *)user, 1, __ATOMIC_RELAXED); }

/* p50 / p99 / max of n sorted values, printed. */
static void print_stats(const char *kind, double *v, int n) {
    if (n == 0) { printf("  %-8s %5d %8s %8s %8s", kind, 0, "-", "-", "-"); return; }
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    printf("  %-8s %5d %8.3f %8.3f %8.2f", kind, n, v[n / 2], v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], v[n - 1]);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    char root[256], dir[300];
    ck_scene *scene;
    ck_box box;
    ck_intrinsics k = {1450.0f, 1450.0f, W / 2.0f, H / 2.0f, W, H}, kd;
    int frames = (int)(seconds * FPS), c, i, loaded;
    float *depth = malloc(sizeof(float) * DW * DH * FPS);
    uint8_t *conf = malloc((size_t)DW * DH * FPS);
    uint8_t *rgb = malloc((size_t)W * H * 3), *y = malloc((size_t)W * H), *cbcr = malloc((size_t)W * H / 2);
    double *capt = malloc(sizeof(double) * (size_t)frames), *other = malloc(sizeof(double) * (size_t)frames);
    if (!depth || !conf || !rgb || !y || !cbcr || !capt || !other || frames < 10) { fprintf(stderr, "bad arguments or no memory\n"); return 1; }

    if (argc > 2) snprintf(root, sizeof root, "%s", argv[2]);
    else { strcpy(root, "/tmp/ck-bench-rig-XXXXXX"); if (!mkdtemp(root)) { perror("mkdtemp"); return 1; } }
    mkdir(root, 0755);
    REQUIRE(ck_scene_create(&scene, 7));
    REQUIRE(ck_scene_target(&box, scene));
    REQUIRE(ck_box_scale(&box, (ck_vec3){1.15f, 1.1f, 1.15f}));
    REQUIRE(ck_intrinsics_scale(&kd, &k, DW, DH));
    for (i = 0; i < FPS; i++) {
        ck_mat4 p = pose_at(i / (double)FPS);
        REQUIRE(ck_scene_render_depth(depth + (size_t)i * DW * DH, conf + (size_t)i * DW * DH, (size_t)DW * DH, NULL,
                                    scene, &p, &kd, (uint64_t)i));
    }
    {   /* one 1920x1440 render, and its NV12 (BT.601 full range) */
        ck_mat4 p = pose_at(0.0);
        int x, yy;
        REQUIRE(ck_scene_render_rgb(rgb, (size_t)W * H * 3, NULL, scene, &p, &k));
        for (yy = 0; yy < H; yy++)
            for (x = 0; x < W; x++) {
                const uint8_t *s = rgb + ((size_t)yy * W + x) * 3;
                double Y = 0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2];
                y[(size_t)yy * W + x] = (uint8_t)lround(Y);
                if (yy % 2 == 0 && x % 2 == 0) {
                    double cb = 128 + (s[2] - Y) / 1.772, cr = 128 + (s[0] - Y) / 1.402;
                    cbcr[(size_t)(yy / 2) * W + x] = (uint8_t)lround(fmin(255, fmax(0, cb)));
                    cbcr[(size_t)(yy / 2) * W + x + 1] = (uint8_t)lround(fmin(255, fmax(0, cr)));
                }
            }
    }

    printf("A real rig at 60 Hz: ck_session_process with %dx%d images, %dx%d depth + confidence streamed,\n"
           "a capture due every second, frames paced at 60 Hz for %.0f s per configuration; caller-thread ms per call\n"
           "by frame kind (capture: the scheduler said capture; other: every other frame)\n",
           W, H, DW, DH, seconds);
    printf("%-16s %-7s %5s  %-8s %5s %8s %8s %8s  %-8s %5s %8s %8s %8s %6s %6s %7s %8s\n", "configuration", "machine", "load",
           "kind", "n", "p50", "p99", "max", "kind", "n", "p50", "p99", "max", "capt.", "c.drop", "s.drop", "flush ms");
    for (loaded = 0; loaded < 2; loaded++)
    for (c = 0; c < CONFIGS; c++) {
        ck_session *s;
        ck_session_options o;
        ck_scheduler_options so;
        ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
        double t0, f0, f1, load;
        int captured = 0, cdrops = 0, sdrops = 0, nc = 0, no = 0, released = 0;
        snprintf(dir, sizeof dir, "%s/rig-%d-%d", root, loaded, c);
        remove_tree(dir);
        REQUIRE(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE));
        REQUIRE(ck_scheduler_options_preset(&so, CK_PRESET_OBJECT_CAPTURE));
        so.interval_slow = so.interval_medium = so.interval_fast = 1.0f;
        so.first_capture_delay = 0.5f;
        so.blocking_flags = 0;  /* capture every second whatever the guidance says */
        dso.device_id = "bench";
        dso.start_time_unix = 1795000000.0;
        if (c == RGB_JPEG || c == NV12_JPEG) dso.image_encoding = CK_IMAGE_ENCODING_JPEG;
        o.scheduler = &so; o.dataset = &dso;
        REQUIRE(ck_session_create(&s, dir, &o, &box));
        if (loaded) { start_load(); sleep_until(now() + 0.3); }
        load = load_average();
        t0 = now() + 0.05;
        for (i = 0; i < frames; i++) {
            ck_session_frame f;
            ck_session_result r;
            ck_event ev;
            double a, b;
            sleep_until(t0 + i / (double)FPS);
            REQUIRE(ck_session_frame_init(&f));
            f.timestamp = i / (double)FPS;
            f.pose = pose_at(f.timestamp);
            f.intrinsics = k;
            if (c == NV12_JPEG) {
                f.image = (ck_image){ y, W, H, 0, CK_IMAGE_FORMAT_NV12_FULL, 0u };
                f.image_chroma = cbcr;
                f.image_chroma_stride = W;
            } else {
                f.image = (ck_image){ rgb, W, H, 0, CK_IMAGE_FORMAT_RGB8, 0u };
                f.sharpness = 100.0f;
            }
            if (c == RGB_PNG_HANDOVER) {  /* the bench never writes rgb: it may hand it over every frame */
                f.image_release = count_release;
                f.image_release_user = &released;
            }
            f.depth = (ck_depth_map){ depth + (size_t)(i % FPS) * DW * DH, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0u };
            f.confidence = (ck_depth_map){ conf + (size_t)(i % FPS) * DW * DH, DW, DH, 0, CK_FORMAT_U8, 0u };
            f.depth_intrinsics = kd;
            a = now();
            REQUIRE(ck_session_process(&r, s, &f));
            b = now();
            if (r.guidance.capture) capt[nc++] = (b - a) * 1e3; else other[no++] = (b - a) * 1e3;
            captured += r.captured;
            while (ck_session_next_event(&ev, s) == CK_OK) {
                cdrops += ev.code == CK_EVENT_CAPTURE_DROPPED;
                sdrops += ev.code == CK_EVENT_STREAM_FRAME_DROPPED;
            }
        }
        f0 = now();
        REQUIRE(ck_session_flush(s));
        f1 = now();
        if (loaded) stop_load();
        if (c == RGB_PNG_HANDOVER && __atomic_load_n(&released, __ATOMIC_RELAXED) != frames) {
            fprintf(stderr, "image_release ran %d times for %d frames\n", released, frames);
            return 1;
        }
        REQUIRE(ck_session_finish(s, 0, NULL));
        ck_session_close(s);
        printf("%-16s %-7s %5.1f", names[c], loaded ? "loaded" : "quiet", load);
        print_stats("capture", capt, nc);
        print_stats("other", other, no);
        printf(" %6d %6d %7d %8.1f\n", captured, cdrops, sdrops, (f1 - f0) * 1e3);
        fflush(stdout);
        remove_tree(dir);
    }
    ck_scene_free(scene);
    free(depth); free(conf); free(rgb); free(y); free(cbcr); free(capt); free(other);
    if (argc <= 2) rmdir(root);
    return 0;
}
