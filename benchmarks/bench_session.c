/* CaptureKit capture session benchmark: ck_session_process frames per second on the demo scene
 * (examples/c/capture_demo.c: scene 7, 320x240 images, 256x192 depth + confidence, 30 Hz orbit),
 * streaming on (every frame's depth and confidence to the MultiScan files) and coverage on (the box
 * given). Rendering is excluded: the depth/confidence frames and the RGB images are rendered before
 * the clock starts (one RGB image per second of orbit, reused; PNG encoding of captured frames is
 * inside the session call and counted). Wall-clock time, fsyncs included (the journal fsyncs every
 * captured frame), on the file system of the output folder. Then: ck_dataset_finalize time for a
 * dataset of 10,000 frames (transforms.json + boundingbox.json), frames added with caller images.
 *
 * Usage: bench_session [work-folder]   (default: a new folder under /tmp). Built and run by
 * `make bench`; numbers go to BENCHMARKS.md, "Capture session". */
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


static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define FRAMES 300      /* 10 s of orbit at 30 Hz */
#define DW 256
#define DH 192

int main(int argc, char **argv) {
    char root[256], dir[300], path[400];
    ck_scene *scene;
    ck_box box;
    ck_intrinsics k_rgb = {260.0f, 260.0f, 160.0f, 120.0f, 320, 240}, k_depth;
    ck_mat4 *poses = malloc(sizeof(ck_mat4) * FRAMES);
    float *depth = malloc(sizeof(float) * DW * DH * FRAMES);
    uint8_t *conf = malloc((size_t)DW * DH * FRAMES);
    uint8_t *rgb = malloc((size_t)320 * 240 * 3 * (FRAMES / 30 + 1));
    double angle = 0.0, t0, t1, best = 1e30;
    size_t written = 0;
    int i, run, captured = 0;

    if (argc > 1) snprintf(root, sizeof root, "%s", argv[1]);
    else { strcpy(root, "/tmp/ck-bench-session-XXXXXX"); if (!mkdtemp(root)) { perror("mkdtemp"); return 1; } }
    mkdir(root, 0755);
    REQUIRE(ck_scene_create(&scene, 7));
    REQUIRE(ck_scene_target(&box, scene));
    REQUIRE(ck_box_scale(&box, (ck_vec3){1.15f, 1.1f, 1.15f}));
    REQUIRE(ck_intrinsics_scale(&k_depth, &k_rgb, DW, DH));
    for (i = 0; i < FRAMES; i++) {
        double t = i / 30.0, speed = 0.29 + 0.11 * sin(t * 0.35);
        float eye[3], target[3] = {0.0f, 0.25f, 0.0f};
        angle += speed / 1.3 / 30.0;
        eye[0] = (float)(1.3 * sin(angle)); eye[1] = 0.55f; eye[2] = (float)(1.3 * cos(angle));
        poses[i] = look_at(eye, target);
        REQUIRE(ck_scene_render_depth(depth + (size_t)i * DW * DH, conf + (size_t)i * DW * DH, (size_t)DW * DH, &written, scene,
                                    &poses[i], &k_depth, (uint64_t)i));
        if (written != (size_t)DW * DH) { fprintf(stderr, "render_depth wrote %zu samples\n", written); return 1; }
        if (i % 30 == 0) {
            REQUIRE(ck_scene_render_rgb(rgb + (size_t)(i / 30) * 320 * 240 * 3, (size_t)320 * 240 * 3, &written, scene, &poses[i],
                                      &k_rgb));
            if (written != (size_t)320 * 240 * 3) { fprintf(stderr, "render_rgb wrote %zu bytes\n", written); return 1; }
        }
    }

    printf("Capture session: ck_session_process on the demo scene, %d frames (320x240 RGB given, 256x192 depth +\n"
           "confidence streamed, coverage on), rendering excluded; wall clock incl. fsyncs; best of 3 runs\n", FRAMES);
    for (run = 0; run < 3; run++) {
        ck_session *s;
        ck_session_options o;
        ck_scheduler_options so;
        ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
        snprintf(dir, sizeof dir, "%s/session-%d", root, run);
        remove_tree(dir);
        REQUIRE(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE));
        REQUIRE(ck_scheduler_options_preset(&so, CK_PRESET_OBJECT_CAPTURE));
        so.interval_slow = 1.2f; so.interval_medium = 0.8f; so.interval_fast = 0.5f;
        dso.device_id = "bench";
        dso.start_time_unix = 1795000000.0;  /* streaming needs the scan's start time */
        o.scheduler = &so; o.dataset = &dso;
        REQUIRE(ck_session_create(&s, dir, &o, &box));
        captured = 0;
        t0 = wall();
        for (i = 0; i < FRAMES; i++) {
            ck_session_frame f;
            ck_session_result r;
            ck_event ev;
            REQUIRE(ck_session_frame_init(&f));
            f.timestamp = i / 30.0;
            f.pose = poses[i];
            f.intrinsics = k_rgb;
            f.image = (ck_image){ rgb + (size_t)(i / 30) * 320 * 240 * 3, 320, 240, 0, CK_IMAGE_FORMAT_RGB8, 0u };
            
            f.sharpness = 100.0f;  /* given (the library would measure it only on gray pixels) */
            f.depth = (ck_depth_map){ depth + (size_t)i * DW * DH, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0u };
            f.confidence = (ck_depth_map){ conf + (size_t)i * DW * DH, DW, DH, 0, CK_FORMAT_U8, 0u };
            f.depth_intrinsics = k_depth;
            REQUIRE(ck_session_process(&r, s, &f));
            captured += r.captured;
            while (ck_session_next_event(&ev, s) == CK_OK) {}
        }
        t1 = wall();
        REQUIRE(ck_session_finish(s, 0, NULL));
        ck_session_close(s);
        if (t1 - t0 < best) best = t1 - t0;
        remove_tree(dir);
    }
    printf("  %d frames, %d captured: %.1f ms total, %.0f frames/s (%.2f ms a frame)\n", FRAMES, captured, best * 1e3,
           FRAMES / best, best * 1e3 / FRAMES);

    {
        /* finalize of a 10,000-frame dataset (frames added with a caller image each) */
        ck_dataset *ds;
        ck_box b;
        uint8_t px[4 * 4 * 3] = {0};
        const int n = 10000;
        double add_t0, add_t1;
        snprintf(dir, sizeof dir, "%s/big", root);
        remove_tree(dir);
        REQUIRE(ck_dataset_create(&ds, dir, NULL));
        REQUIRE(ck_box_init(&b, (ck_vec3){0.0f, 0.25f, 0.0f}, (ck_vec3){0.5f, 0.5f, 0.5f}, 0.0f));
        REQUIRE(ck_dataset_set_box(ds, &b));
        add_t0 = wall();
        for (i = 0; i < n; i++) {
            ck_frame_desc d = CK_FRAME_DESC_INIT;
            char rel[64];
            size_t needed;
            REQUIRE(ck_dataset_next_image_path(rel, sizeof rel, &needed, ds, ".png"));
            snprintf(path, sizeof path, "%s/%s", dir, rel);
            REQUIRE(ck_png_write(path, &(ck_image){ px, 4, 4, 12, CK_IMAGE_FORMAT_RGB8, 0 }, 1, 0));
            d.timestamp = i / 30.0;
            d.pose = poses[i % FRAMES];
            d.intrinsics = k_rgb;
            d.sharpness = 50.0f;
            REQUIRE(ck_dataset_add_frame(NULL, ds, &d));
        }
        add_t1 = wall();
        t0 = wall();
        REQUIRE(ck_dataset_finalize(ds, 0, NULL));
        t1 = wall();
        snprintf(path, sizeof path, "%s/transforms.json", dir);
        {
            struct stat st;
            stat(path, &st);
            printf("  finalize of %d frames: %.1f ms (transforms.json %.1f MB); adding them took %.2f s (%.0f frames/s incl. the caller's PNG writes)\n",
                   n, (t1 - t0) * 1e3, st.st_size / 1e6, add_t1 - add_t0, n / (add_t1 - add_t0));
        }
        REQUIRE(ck_dataset_close(ds));
        t0 = wall();
        REQUIRE(ck_dataset_open(&ds, dir));
        t1 = wall();
        printf("  reopen (journal replay) of %d frames: %.1f ms\n", n, (t1 - t0) * 1e3);
        REQUIRE(ck_dataset_close(ds));
        remove_tree(dir);
    }
    ck_scene_free(scene);
    free(poses); free(depth); free(conf); free(rgb);
    if (argc <= 1) rmdir(root);
    return 0;
}
