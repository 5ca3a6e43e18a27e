/* CaptureKit memory over a long recording: drives ck_session_process like a phone at 60 Hz
 * (256x192 depth + confidence every frame, streamed to the MultiScan files; a 640x480 RGB image
 * with every frame, captured about once a second) for `minutes` of simulated time, and reports the
 * process's resident memory (VmRSS) and peak (VmHWM, /proc/self/status) after the setup, after the
 * first second, after 1 minute and at the end. Memory must stay flat: the only thing allowed to grow
 * with the recording is the dataset's in-memory frame list (one small record per captured frame).
 *
 * Depth, confidence and RGB are rendered before the clock starts (60 depth frames and 4 RGB images,
 * reused in a cycle); the camera orbits the demo scene's box at ~0.3 m/s; redundant-view skipping is
 * off so that captures keep coming once the orbit repeats. Everything goes to a dataset folder
 * (removed at the end), fsyncs included.
 *
 * Usage: bench_memory [minutes (default 10)] [work-folder (default: a new folder under /tmp)].
 * Built and run by `make bench` (and alone by `make bench-memory`); numbers go to BENCHMARKS.md,
 * "Memory over a long recording". Exit status 1 if the peak grows by more than 8 MiB plus 2 KiB a
 * captured frame between the 1-minute mark and the end. */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../Tests/capi/support.h"  /* REQUIRE, look_at, remove_tree */


#define HZ 60
#define DW 256
#define DH 192
#define IW 640
#define IH 480
#define DEPTH_CYCLE 60
#define RGB_CYCLE 4

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* VmRSS and VmHWM of this process, KiB. */
static void memory(long *rss_kib, long *hwm_kib)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *rss_kib = *hwm_kib = -1;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6)) *rss_kib = atol(line + 6);
        if (!strncmp(line, "VmHWM:", 6)) *hwm_kib = atol(line + 6);
    }
    fclose(f);
}

static ck_mat4 orbit(long frame)
{
    double angle = 0.3 / 1.3 * (double)frame / HZ;  /* 0.3 m/s on a 1.3 m circle */
    float eye[3], target[3] = {0.0f, 0.25f, 0.0f};
    eye[0] = (float)(1.3 * sin(angle)); eye[1] = 0.55f + 0.1f * (float)sin(angle * 0.37); eye[2] = (float)(1.3 * cos(angle));
    return look_at(eye, target);
}

static unsigned long long tree_bytes(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    struct stat st;
    unsigned long long total = 0;
    if (!d) return stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        total += tree_bytes(sub);
    }
    closedir(d);
    return total;
}

static void report(const char *when, double sim_s, long captured, double t0)
{
    long rss, hwm;
    memory(&rss, &hwm);
    printf("  %-22s %7.0f s simulated  %6ld captured  VmRSS %7.1f MiB  VmHWM %7.1f MiB  (%.0f s wall)\n", when, sim_s,
           captured, rss / 1024.0, hwm / 1024.0, wall() - t0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double minutes = argc > 1 ? atof(argv[1]) : 10.0;
    long frames = (long)(minutes * 60.0 * HZ), i, captured = 0, one_minute = 60L * HZ;
    char root[256], dir[300];
    ck_scene *scene;
    ck_box box;
    ck_intrinsics k_rgb = {520.0f, 520.0f, IW / 2.0f, IH / 2.0f, IW, IH}, k_depth;
    float *depth = malloc(sizeof(float) * DW * DH * DEPTH_CYCLE);
    uint8_t *conf = malloc((size_t)DW * DH * DEPTH_CYCLE);
    uint8_t *rgb = malloc((size_t)IW * IH * 3 * RGB_CYCLE);
    ck_session *s;
    ck_session_options o;
    ck_scheduler_options so;
    ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
    long rss_setup, hwm_setup, rss_min, hwm_min, rss_end, hwm_end, allowed;
    size_t written = 0;
    double t0;

    if (!depth || !conf || !rgb || frames < 1) { fprintf(stderr, "usage: bench_memory [minutes > 0] [folder]\n"); return 1; }
    if (argc > 2) snprintf(root, sizeof root, "%s", argv[2]);
    else { strcpy(root, "/tmp/ck-bench-memory-XXXXXX"); if (!mkdtemp(root)) { perror("mkdtemp"); return 1; } }
    mkdir(root, 0755);
    snprintf(dir, sizeof dir, "%s/recording", root);
    remove_tree(dir);

    REQUIRE(ck_scene_create(&scene, 7));
    REQUIRE(ck_scene_target(&box, scene));
    REQUIRE(ck_box_scale(&box, (ck_vec3){1.15f, 1.1f, 1.15f}));
    REQUIRE(ck_intrinsics_scale(&k_depth, &k_rgb, DW, DH));
    for (i = 0; i < DEPTH_CYCLE; i++) {
        ck_mat4 pose = orbit(i);
        REQUIRE(ck_scene_render_depth(depth + (size_t)i * DW * DH, conf + (size_t)i * DW * DH, (size_t)DW * DH, &written, scene,
                                    &pose, &k_depth, (uint64_t)i));
        if (written != (size_t)DW * DH) { fprintf(stderr, "render_depth wrote %zu samples\n", written); return 1; }
    }
    for (i = 0; i < RGB_CYCLE; i++) {
        ck_mat4 pose = orbit(i * HZ);
        REQUIRE(ck_scene_render_rgb(rgb + (size_t)i * IW * IH * 3, (size_t)IW * IH * 3, &written, scene, &pose, &k_rgb));
        if (written != (size_t)IW * IH * 3) { fprintf(stderr, "render_rgb wrote %zu bytes\n", written); return 1; }
    }

    REQUIRE(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE));
    REQUIRE(ck_scheduler_options_preset(&so, CK_PRESET_OBJECT_CAPTURE));
    so.interval_slow = so.interval_medium = so.interval_fast = 1.0f;
    so.redundant_distance = 0.0f;   /* the orbit repeats: keep capturing */
    so.depth_max = 0.0f;            /* the depth frames are reused, not the pose's own */
    o.storage_warning_minutes = 0.0f;
    dso.device_id = "bench";
    dso.start_time_unix = 1795000000.0;  /* streaming needs the scan's start time */
    o.scheduler = &so;
    o.dataset = &dso;
    REQUIRE(ck_session_create(&s, dir, &o, &box));

    printf("Memory over a long recording: ck_session_process at %d Hz, %dx%d depth + confidence streamed every frame,\n"
           "%dx%d RGB with every frame (captured ~1/s as PNG + depth PNG), %.1f min simulated\n", HZ, DW, DH, IW, IH, minutes);
    t0 = wall();
    memory(&rss_setup, &hwm_setup);
    report("after setup", 0.0, 0, t0);
    rss_min = hwm_min = -1;
    for (i = 0; i < frames; i++) {
        ck_session_frame f;
        ck_session_result r;
        ck_event ev;
        REQUIRE(ck_session_frame_init(&f));
        f.timestamp = (double)i / HZ;
        f.pose = orbit(i);
        f.intrinsics = k_rgb;
        f.image = (ck_image){ rgb + (size_t)((i / HZ) % RGB_CYCLE) * IW * IH * 3, IW, IH, 0, CK_IMAGE_FORMAT_RGB8, 0u };
        
        f.sharpness = 100.0f;
        f.depth = (ck_depth_map){ depth + (size_t)(i % DEPTH_CYCLE) * DW * DH, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0u };
        f.confidence = (ck_depth_map){ conf + (size_t)(i % DEPTH_CYCLE) * DW * DH, DW, DH, 0, CK_FORMAT_U8, 0u };
        f.depth_intrinsics = k_depth;
        REQUIRE(ck_session_process(&r, s, &f));
        captured += r.captured;
        while (ck_session_next_event(&ev, s) == CK_OK) {}
        if (i + 1 == HZ) report("after 1 s", 1.0, captured, t0);
        if (i + 1 == one_minute) { report("after 1 min", 60.0, captured, t0); memory(&rss_min, &hwm_min); }
        if (i + 1 < frames && (i + 1) % (one_minute * 2) == 0 && i + 1 > one_minute) report("", (i + 1.0) / HZ, captured, t0);
    }
    report("end", (double)frames / HZ, captured, t0);
    memory(&rss_end, &hwm_end);
    REQUIRE(ck_session_finish(s, 0, NULL));
    ck_session_close(s);
    printf("  dataset on disk: %.1f MiB (%ld captured frames)\n", tree_bytes(dir) / 1048576.0, captured);
    remove_tree(dir);
    if (argc <= 2) rmdir(root);
    ck_scene_free(scene);
    free(depth); free(conf); free(rgb);

    if (hwm_min < 0) { printf("  (shorter than a minute: no verdict)\n"); return 0; }
    allowed = 8 * 1024 + 2 * captured;
    printf("  peak growth from 1 min to the end: %+.1f MiB (VmRSS %+.1f MiB); allowed %.1f MiB: %s\n",
           (hwm_end - hwm_min) / 1024.0, (rss_end - rss_min) / 1024.0, allowed / 1024.0,
           hwm_end - hwm_min <= allowed ? "flat" : "GROWS");
    return hwm_end - hwm_min <= allowed ? 0 : 1;
}
