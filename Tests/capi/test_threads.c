/*
 * test_threads.c — the header's thread-safety claim, exercised: "one thread per handle at a time,
 * distinct handles are independent, value-only functions are always safe", and the last-error
 * message is per thread.
 *
 * 8 threads run at once. Each owns one of every handle type (scene, scheduler, coverage, depth
 * codec, .ckdepth writer and reader, MultiScan stream writer and reader, dataset, session) and
 * drives them for `iterations` rounds, checking every result against its own expectations. Every
 * round it also makes failing calls whose messages name something only that thread uses (a path
 * with its thread number and round), keeps working (successful calls must not touch the message),
 * and checks it still reads exactly its own message.
 *
 * Usage: test_threads [iterations] [work-folder]   (defaults: 12, a new folder under /tmp).
 * `make test` runs it with the default; `make tsan` builds it with -fsanitize=thread against a
 * --sanitize=thread library and runs it with more rounds. Exit status 1 on any failed check.
 */
#define _POSIX_C_SOURCE 200809L
#include "capturekit.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

#define THREADS 8
#define DW 64
#define DH 48
#define IW 80
#define IH 60

typedef struct worker {
    int id;
    int iterations;
    char dir[300];
    int failed;       /* failed checks (only this thread writes it) */
    int passed;
    int captured;
} worker;

#define WCHECK(w, cond) do { if (cond) (w)->passed++; else { (w)->failed++; \
    fprintf(stderr, "thread %d: %s:%d: FAILED: %s (last error: \"%s\")\n", (w)->id, __FILE__, __LINE__, #cond, \
            ck_last_error_message()); } } while (0)
#define WOK(w, call) do { ck_status s_ = (call); if (s_ == CK_OK) (w)->passed++; else { (w)->failed++; \
    fprintf(stderr, "thread %d: %s:%d: %s -> %s: %s\n", (w)->id, __FILE__, __LINE__, #call, ck_status_string(s_), \
            ck_last_error_message()); } } while (0)

/* Camera-to-world pose on a circle around the origin, looking just above it (OpenGL axes). */
static ck_mat4 orbit_pose(double angle, float radius, float height)
{
    const float target[3] = {0.0f, 0.25f, 0.0f};
    float eye[3];
    eye[0] = radius * (float)sin(angle); eye[1] = height; eye[2] = radius * (float)cos(angle);
    return look_at(eye, target);
}

/* A failing call whose message names `tag` (a path only this thread uses): NOT_FOUND. */
static void fail_with(worker *w, const char *tag)
{
    uint32_t width, height;
    int32_t format;
    ck_status s = ck_png_read_info(&width, &height, &format, tag);
    WCHECK(w, s == CK_E_NOT_FOUND);
    WCHECK(w, strstr(ck_last_error_message(), tag) != NULL);
}

static void *run(void *arg)
{
    worker *w = (worker *)arg;
    ck_scene *scene = NULL;
    ck_scheduler *scheduler = NULL;
    ck_coverage *coverage = NULL;
    ck_depth_codec *codec = NULL;
    ck_depth_writer *dwriter = NULL;
    ck_zstream_writer *zwriter = NULL;
    ck_dataset *dataset = NULL;
    ck_session *session = NULL;
    ck_box box;
    ck_intrinsics k_rgb = {70.0f, 70.0f, IW / 2.0f, IH / 2.0f, IW, IH}, k_depth;
    float *depth = malloc(sizeof(float) * DW * DH);
    float *back = malloc(sizeof(float) * DW * DH);
    uint16_t *f16 = malloc(sizeof(uint16_t) * DW * DH);
    uint16_t *f16_back = malloc(sizeof(uint16_t) * DW * DH);
    uint8_t *conf = malloc((size_t)DW * DH);
    uint8_t *rgb = malloc((size_t)IW * IH * 3);
    size_t bound = ck_depth_encode_bound(DW, DH, CK_FORMAT_DEPTH_F16);
    uint8_t *encoded = malloc(bound);
    char path[512], tag[512], ckdepth[400], zpath[400], dsdir[400], sdir[400];
    ck_session_options so;
    ck_scheduler_options sso;
    ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
    int i, frames = 0;

    WCHECK(w, depth && back && f16 && f16_back && conf && rgb && encoded && bound > 0);
    if (w->failed) goto done;
    snprintf(ckdepth, sizeof ckdepth, "%s/d.ckdepth", w->dir);
    snprintf(zpath, sizeof zpath, "%s/d.depth.zlib", w->dir);
    snprintf(dsdir, sizeof dsdir, "%s/dataset", w->dir);
    snprintf(sdir, sizeof sdir, "%s/session", w->dir);

    WOK(w, ck_scene_create(&scene, (uint64_t)(7 + w->id)));
    WOK(w, ck_scene_target(&box, scene));
    WOK(w, ck_intrinsics_scale(&k_depth, &k_rgb, DW, DH));
    WOK(w, ck_scheduler_create(&scheduler, NULL));
    WOK(w, ck_coverage_create(&coverage, &box, NULL));
    WOK(w, ck_depth_codec_create(&codec, 0));
    WOK(w, ck_depth_writer_open(&dwriter, ckdepth, DW, DH, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE));
    WOK(w, ck_zstream_writer_open(&zwriter, zpath, DW, DH, CK_FORMAT_DEPTH_F16, 0, CK_OPEN_OVERWRITE | CK_ZSTREAM_INDEX));
    WOK(w, ck_dataset_create(&dataset, dsdir, NULL));
    WOK(w, ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE));
    WOK(w, ck_scheduler_options_preset(&sso, CK_PRESET_OBJECT_CAPTURE));
    sso.first_capture_delay = 0.0f;
    sso.interval_slow = sso.interval_medium = sso.interval_fast = 0.1f;
    sso.redundant_distance = 0.0f;
    dso.device_id = "threads";
    dso.start_time_unix = 1795000000.0 + w->id;  /* streaming needs the scan's start time */
    so.scheduler = &sso;
    so.dataset = &dso;
    WOK(w, ck_session_create(&session, sdir, &so, &box));
    if (w->failed) goto done;

    for (i = 0; i < w->iterations; i++) {
        double t = i / 30.0;
        ck_mat4 pose = orbit_pose(0.005 * i + w->id, 1.3f, 0.55f);  /* ~0.2 m/s: captures happen */
        ck_scheduler_frame sf = CK_SCHEDULER_FRAME_INIT;
        ck_guidance g;
        ck_event ev;
        ck_session_frame f;
        ck_session_result r;
        ck_frame_desc d = CK_FRAME_DESC_INIT;
        int32_t face, kind;
        uint32_t width, height;
        size_t written = 0, j;
        uint64_t id;
        const ck_depth_map f16_map = { f16, DW, DH, 0, CK_FORMAT_DEPTH_F16, 0u };
        const ck_image rgb_image = { rgb, IW, IH, 0, CK_IMAGE_FORMAT_RGB8, 0u };

        /* A failing call naming this thread's path, then plenty of successful work. */
        snprintf(tag, sizeof tag, "%s/missing-thread-%d-round-%d.png", w->dir, w->id, i);
        fail_with(w, tag);

        WOK(w, ck_scene_render_depth(depth, conf, (size_t)DW * DH, NULL, scene, &pose, &k_depth, (uint64_t)i));
        WOK(w, ck_scene_render_rgb(rgb, (size_t)IW * IH * 3, NULL, scene, &pose, &k_rgb));

        sf.timestamp = t; sf.pose = pose; sf.box = &box;
        WOK(w, ck_scheduler_update(&g, scheduler, &sf));
        while (ck_scheduler_next_event(&ev, scheduler) == CK_OK) WCHECK(w, ev.text != NULL);
        {
            ck_status s = ck_coverage_add_view(&face, coverage, &pose, &k_rgb, t);
            WCHECK(w, s == CK_OK || s == CK_MISS);
        }
        while (ck_coverage_next_event(&ev, coverage) == CK_OK) WCHECK(w, ev.text != NULL);

        /* Codec round trip (float16 is exact both ways). */
        WOK(w, ck_depth_convert(f16, CK_FORMAT_DEPTH_F16, depth, CK_FORMAT_DEPTH_F32, (size_t)DW * DH));
        WOK(w, ck_depth_encode(encoded, bound, &written, codec, &f16_map));
        WOK(w, ck_depth_frame_info(&kind, &width, &height, encoded, written));
        WCHECK(w, kind == CK_DEPTH_KIND_FLOAT16 && width == DW && height == DH);
        WOK(w, ck_depth_decode(f16_back, sizeof(uint16_t) * DW * DH, NULL, codec, encoded, written, CK_FORMAT_DEPTH_F16));
        WCHECK(w, memcmp(f16, f16_back, sizeof(uint16_t) * DW * DH) == 0);

        /* Recordings. */
        WOK(w, ck_depth_writer_append(dwriter, &f16_map, t));
        WOK(w, ck_zstream_writer_append(zwriter, &f16_map));

        /* Dataset: a caller-written image, then the frame. */
        {
            char rel[64];
            size_t needed;
            WOK(w, ck_dataset_next_image_path(rel, sizeof rel, &needed, dataset, ".png"));
            snprintf(path, sizeof path, "%s/%s", dsdir, rel);
            WOK(w, ck_png_write(path, &rgb_image, 1, 0));
            d.timestamp = t; d.pose = pose; d.intrinsics = k_rgb;
            d.depth = (ck_depth_map){ depth, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0u };
            WOK(w, ck_dataset_add_frame(&id, dataset, &d));
            WCHECK(w, id == (uint64_t)i);
        }

        /* Session: one call per frame with everything. */
        WOK(w, ck_session_frame_init(&f));
        f.timestamp = t; f.pose = pose; f.intrinsics = k_rgb;
        f.image = (ck_image){ rgb, IW, IH, 0, CK_IMAGE_FORMAT_RGB8, 0u }; f.sharpness = 100.0f;
        f.depth = (ck_depth_map){ depth, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0u };
        f.confidence = (ck_depth_map){ conf, DW, DH, 0, CK_FORMAT_U8, 0u }; f.depth_intrinsics = k_depth;
        WOK(w, ck_session_process(&r, session, &f));
        w->captured += r.captured;
        while (ck_session_next_event(&ev, session) == CK_OK) WCHECK(w, ev.text != NULL);
        frames++;

        /* Successful calls left the message alone: still exactly this thread's. */
        WCHECK(w, strstr(ck_last_error_message(), tag) != NULL);

        /* A second kind of failure (a value function), then the message is replaced by it. */
        WCHECK(w, ck_intrinsics_scale(&k_depth, &k_rgb, 0, DH) == CK_E_INVALID_ARGUMENT);
        WCHECK(w, strstr(ck_last_error_message(), tag) == NULL);
        WCHECK(w, ck_last_error_message()[0] != '\0');
        WOK(w, ck_intrinsics_scale(&k_depth, &k_rgb, DW, DH));
        for (j = 0; j < 3; j++) {
            snprintf(tag, sizeof tag, "%s/missing-thread-%d-round-%d-%d.png", w->dir, w->id, i, (int)j);
            fail_with(w, tag);
        }
    }

    /* Close everything and read the recordings back. */
    WOK(w, ck_depth_writer_close(dwriter)); dwriter = NULL;
    WOK(w, ck_zstream_writer_close(zwriter)); zwriter = NULL;
    {
        ck_depth_reader *rd = NULL;
        ck_depth_info info;
        double ts;
        WOK(w, ck_depth_reader_open(&rd, ckdepth));
        WOK(w, ck_depth_reader_info(&info, rd));
        WCHECK(w, info.frame_count == (uint64_t)frames && info.torn_bytes == 0);
        WOK(w, ck_depth_reader_read(f16_back, sizeof(uint16_t) * DW * DH, NULL, &ts, rd, info.frame_count - 1, CK_FORMAT_DEPTH_F16));
        WCHECK(w, memcmp(f16, f16_back, sizeof(uint16_t) * DW * DH) == 0);
        WCHECK(w, ts == (frames - 1) / 30.0);
        ck_depth_reader_close(rd);
    }
    {
        ck_zstream_reader *zr = NULL;
        uint64_t count = 0;
        WOK(w, ck_zstream_reader_open(&zr, zpath, DW, DH, CK_FORMAT_DEPTH_F16));
        WOK(w, ck_zstream_reader_frame_count(&count, zr));
        WCHECK(w, count == (uint64_t)frames);
        WOK(w, ck_zstream_reader_read(back, sizeof(float) * DW * DH, NULL, zr, count - 1, CK_FORMAT_DEPTH_F32));
        WOK(w, ck_depth_convert(f16_back, CK_FORMAT_DEPTH_F16, back, CK_FORMAT_DEPTH_F32, (size_t)DW * DH));
        WCHECK(w, memcmp(f16, f16_back, sizeof(uint16_t) * DW * DH) == 0);
        ck_zstream_reader_close(zr);
    }
    {
        uint64_t count = 0;
        WOK(w, ck_dataset_finalize(dataset, 0, NULL));
        WOK(w, ck_dataset_frame_count(&count, dataset));
        WCHECK(w, count == (uint64_t)frames);
    }
    WOK(w, ck_session_finish(session, 0, NULL));
    WCHECK(w, w->captured > 0);

done:
    ck_depth_writer_close(dwriter);
    ck_zstream_writer_close(zwriter);
    ck_dataset_close(dataset);
    ck_session_close(session);
    ck_depth_codec_free(codec);
    ck_coverage_free(coverage);
    ck_scheduler_free(scheduler);
    ck_scene_free(scene);
    free(depth); free(back); free(f16); free(f16_back); free(conf); free(rgb); free(encoded);
    return NULL;
}

int main(int argc, char **argv)
{
    worker workers[THREADS];
    pthread_t threads[THREADS];
    char root[256];
    int i, iterations = argc > 1 ? atoi(argv[1]) : 12, passed = 0, failed = 0, captured = 0;

    if (iterations < 1) iterations = 1;
    if (argc > 2) {
        snprintf(root, sizeof root, "%s", argv[2]);
        mkdir(root, 0755);
    } else {
        strcpy(root, "/tmp/ck-test-threads-XXXXXX");
        if (!mkdtemp(root)) { perror("mkdtemp"); return 1; }
    }
    for (i = 0; i < THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].id = i;
        workers[i].iterations = iterations;
        snprintf(workers[i].dir, sizeof workers[i].dir, "%s/thread-%d", root, i);
        remove_tree(workers[i].dir);
        if (mkdir(workers[i].dir, 0755) != 0) { perror(workers[i].dir); return 1; }
    }
    for (i = 0; i < THREADS; i++) {
        if (pthread_create(&threads[i], NULL, run, &workers[i]) != 0) { fprintf(stderr, "pthread_create failed\n"); return 1; }
    }
    for (i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    for (i = 0; i < THREADS; i++) {
        passed += workers[i].passed;
        failed += workers[i].failed;
        captured += workers[i].captured;
        remove_tree(workers[i].dir);
    }
    if (argc <= 2) rmdir(root);
    printf("test_threads: %d threads x %d rounds (%d session captures): %d passed, %d failed\n", THREADS, iterations,
           captured, passed, failed);
    return failed ? 1 : 0;
}
