/* CaptureKit capture demo: a guided object capture on the built-in synthetic scene.
 *
 * A simulated operator walks around the target box with realistic speed changes and hand-held
 * noise, 30 frames a second, and follows the coverage hint (ck_coverage_suggest): after each
 * capture it turns toward the side the views have seen least and climbs or crouches to the ring
 * the hint names, until every side is complete. Every frame goes to ck_session_process with its LiDAR-like 256x192 depth and
 * confidence (rendered by ray casting); the session paces capture by the camera's speed, prints
 * guidance, counts coverage, streams depth like MultiScan's app, and when it says "capture" this
 * program renders the 320x240 image and writes it where the session asked. At the end the dataset
 * folder holds transforms.json, boundingbox.json, images/, depth/, the MultiScan streams and the
 * events log, ready for nerfstudio, instant-ngp and MultiScan's tools.
 *
 * Usage: capture_demo [output-folder]   (default: ./capturekit-demo-dataset). The folder must be new,
 * empty, or an earlier output of this demo (marked by a .capturekit-demo file), which is replaced. */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(call) do { ck_status s_ = (call); if (s_ < 0) { \
    fprintf(stderr, "capture_demo: %s failed: %s (%s)\n", #call, ck_status_string(s_), ck_last_error_message()); \
    exit(1); } } while (0)

static ck_mat4 look_at(const float eye[3], const float target[3]) {
    float f[3], r[3], u[3], n;
    ck_mat4 m;
    int i;
    for (i = 0; i < 3; i++) f[i] = target[i] - eye[i];
    n = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (i = 0; i < 3; i++) f[i] /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0];
    n = sqrtf(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3; i++) { m.m[i] = r[i]; m.m[4 + i] = u[i]; m.m[8 + i] = -f[i]; m.m[12 + i] = eye[i]; }
    m.m[15] = 1;
    return m;
}

/* Small deterministic noise in [-1, 1]. */
static float noise(unsigned k) {
    k = (k ^ 61u) ^ (k >> 16); k *= 9u; k ^= k >> 4; k *= 0x27d4eb2du; k ^= k >> 15;
    return (float)(k % 20001u) / 10000.0f - 1.0f;
}

/* The demo replaces its output folder only if it made it (it leaves this marker file in it) or if
 * it is empty: `capture_demo ~` must never wipe a home folder. */
#define DEMO_MARKER ".capturekit-demo"

/* Removes a tree the demo made; symbolic links are removed, never followed. */
static void remove_tree(const char *path) {
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode) || !(d = opendir(path))) { unlink(path); return; }
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

/* 1 if `dir` is missing, empty, or a folder this demo made (removed then); 0 if it is anything
 * else, which the demo leaves alone. */
static int prepare_output(const char *dir) {
    struct stat st;
    char marker[4200];
    DIR *d;
    struct dirent *e;
    int empty = 1;
    if (lstat(dir, &st) != 0) return 1;
    if (!S_ISDIR(st.st_mode)) return 0;
    snprintf(marker, sizeof marker, "%s/%s", dir, DEMO_MARKER);
    if (lstat(marker, &st) == 0 && S_ISREG(st.st_mode)) { remove_tree(dir); return 1; }
    if (!(d = opendir(dir))) return 0;
    while ((e = readdir(d)) != NULL) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

static const char *guide_text(uint32_t flags) {
    if (flags & CK_GUIDE_DRIFT) return "tracking jumped";
    if (flags & CK_GUIDE_SLOW_DOWN) return "slow down";
    if (flags & CK_GUIDE_TURNING_TOO_FAST) return "turning too fast";
    if (flags & CK_GUIDE_POINT_AT_OBJECT) return "point at the object";
    if (flags & CK_GUIDE_TILT_UP) return "tilt up";
    if (flags & CK_GUIDE_TILT_DOWN) return "tilt down";
    if (flags & CK_GUIDE_SPEED_UP) return "speed up";
    if (flags & CK_GUIDE_MOVE_TO_NEW_VIEW) return "move to a new view";
    return "good";
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "capturekit-demo-dataset";
    const double fps = 30.0;
    const int frames = 30 * 75;               /* at most 75 s; the capture ends when every side is complete */
    ck_scene *scene;
    ck_session *session;
    ck_session_options opts;
    ck_scheduler_options sched;
    ck_dataset_options dataset_opts = CK_DATASET_OPTIONS_INIT;
    ck_box box;
    ck_intrinsics k_rgb = {260.0f, 260.0f, 160.0f, 120.0f, 320, 240}, k_depth;
    float *depth;
    uint8_t *conf, *rgb;
    double angle = 0.0, height = 0.55, target_height = 0.55;
    int i, captured = 0, last_second = -1, direction = 1, complete = 0;
    static const char *const side_names[4] = { "front", "left", "back", "right" };  /* azimuth 0, 90, 180, -90 deg */
    const char *next_side = "front";
    uint32_t last_flags = 0xFFFFFFFFu;
    ck_event ev;

    if (!CK_VERSION_COMPATIBLE(ck_version_number())) { fprintf(stderr, "library/header version mismatch\n"); return 1; }
    if (!prepare_output(dir)) {
        fprintf(stderr, "capture_demo: %s exists and is not an earlier demo output (no %s in it); "
                "name a new or empty folder\n", dir, DEMO_MARKER);
        return 2;
    }
    CHECK(ck_scene_create(&scene, 7));
    CHECK(ck_scene_target(&box, scene));
    /* The operator's box: a little larger than the object, on the floor. */
    CHECK(ck_box_scale(&box, (ck_vec3){1.15f, 1.1f, 1.15f}));
    CHECK(ck_intrinsics_scale(&k_depth, &k_rgb, 256, 192));
    CHECK(ck_session_options_init(&opts, CK_PRESET_OBJECT_CAPTURE));
    /* The reference intervals (3 / 2 / 1 s) need a few minutes of walking to see every side ten
     * times; the demo takes a quarter of them so that it finishes in well under a minute. */
    CHECK(ck_scheduler_options_preset(&sched, CK_PRESET_OBJECT_CAPTURE));
    sched.interval_slow = 0.75f;
    sched.interval_medium = 0.5f;
    sched.interval_fast = 0.25f;
    dataset_opts.start_time_unix = 1795000000.0;  /* the library never reads a clock */
    dataset_opts.device_id = "demo";
    dataset_opts.device_name = "CaptureKit synthetic rig";
    dataset_opts.scene_description = "synthetic box on a floor";
    opts.scheduler = &sched;
    opts.dataset = &dataset_opts;
    /* Frames come faster than a camera's here, so a full write queue waits rather than drops (a
     * live rig keeps the default CK_QUEUE_FULL_DROP: the camera thread never stalls). */
    opts.queue_full = CK_QUEUE_FULL_WAIT;
    CHECK(ck_session_create(&session, dir, &opts, &box));
    {   /* mark the folder as the demo's, so the next run may replace it */
        char marker[4200];
        FILE *m;
        snprintf(marker, sizeof marker, "%s/%s", dir, DEMO_MARKER);
        if ((m = fopen(marker, "w")) != NULL) { fputs("written by CaptureKit's capture_demo; it replaces this folder\n", m); fclose(m); }
    }

    depth = malloc(sizeof(float) * 256 * 192);
    conf = malloc(256 * 192);
    rgb = malloc(320 * 240 * 3);
    printf("CaptureKit %s capture demo: walking around the target, following the coverage hint, at %.0f Hz\n",
           ck_version_string(), fps);
    for (i = 0; i < frames && !complete; i++) {
        double t = i / fps;
        int ring = height > 0.85;
        /* Walking speed around the object changes slowly: 0.18 .. 0.40 m/s on a 1.3 m radius. */
        double speed = 0.29 + 0.11 * sin(t * 0.35);
        float eye[3], target[3] = {0.0f, 0.25f, 0.0f};
        ck_session_frame f;
        ck_session_result r;
        angle += direction * speed / 1.3 / fps;
        /* Climbing or crouching to the hinted ring at 0.3 m/s. */
        height += fmax(-0.3 / fps, fmin(0.3 / fps, target_height - height));
        eye[0] = (float)(1.3 * sin(angle)) + 0.004f * noise((unsigned)i * 3u);
        eye[1] = (float)height + 0.004f * noise((unsigned)i * 3u + 1u);
        eye[2] = (float)(1.3 * cos(angle)) + 0.004f * noise((unsigned)i * 3u + 2u);
        CHECK(ck_session_frame_init(&f));
        f.timestamp = t;
        f.pose = look_at(eye, target);
        f.intrinsics = k_rgb;
        CHECK(ck_scene_render_depth(depth, conf, (size_t)256 * 192, NULL, scene, &f.pose, &k_depth, (uint64_t)i));
        f.depth = (ck_depth_map){ depth, k_depth.width, k_depth.height, 0, CK_FORMAT_DEPTH_F32, 0u };
        f.confidence = (ck_depth_map){ conf, k_depth.width, k_depth.height, 0, CK_FORMAT_U8, 0u };
        f.depth_intrinsics = k_depth;
        CHECK(ck_session_process(&r, session, &f));
        if (r.captured) {
            char path[4200];
            /* The session asked for the image: render it and write it where it said. */
            CHECK(ck_scene_render_rgb(rgb, (size_t)320 * 240 * 3, NULL, scene, &f.pose, &k_rgb));
            snprintf(path, sizeof path, "%s/%s", dir, r.image_path);
            CHECK(ck_png_write(path, &(ck_image){ rgb, 320, 240, 0, CK_IMAGE_FORMAT_RGB8, 0u }, 0, 0));
            captured++;
            {   /* The operator reads the hint: walk toward the least-seen side (the camera's
                 * azimuth around the box grows with `angle`), keep walking once there (a view
                 * must move on to count), and go to the hinted ring's height. */
                const ck_coverage *cov;
                ck_coverage_hint hint;
                double turn;
                CHECK(ck_session_coverage(&cov, session));
                CHECK(ck_coverage_suggest(&hint, cov, &f.pose));
                turn = remainder((double)hint.target_azimuth - hint.camera_azimuth, 6.283185307179586);
                if (fabs(turn) > 0.35) direction = turn > 0 ? 1 : -1;
                target_height = hint.ring > 0 ? 1.15 : 0.55;
                next_side = side_names[((int)lround(hint.target_azimuth / 1.5707963267948966) % 4 + 4) % 4];
            }
        }
        while (ck_session_next_event(&ev, session) == CK_OK) {
            printf("  %6.2f s  event %3d: %s\n", ev.timestamp, ev.code, ev.text);
            if (ev.code == CK_EVENT_ALL_SIDES_COMPLETED) complete = 1;
        }
        if ((int)t != last_second || r.guidance.flags != last_flags) {
            if ((int)t != last_second && (int)t % 4 == 0)
                printf("  %6.2f s  ring %d  speed %.2f m/s  %-20s captures %3d  coverage %3.0f%%  hint: the %s side%s\n", t,
                       ring, r.guidance.speed, guide_text(r.guidance.flags), captured, 100.0 * r.coverage, next_side,
                       target_height > height + 0.05 ? ", higher" : target_height < height - 0.05 ? ", lower" : "");
            last_second = (int)t;
            last_flags = r.guidance.flags;
        }
    }
    {   /* Then the operator follows the surface hints (ck_surface_next_view: the next-best view from
         * the depth fused so far) until the measured surface is complete: walk to each target
         * around the box at the hinted distance, 1.5 s per move, the session capturing on its way. */
        const ck_surface *surf;
        ck_surface_figures sf;
        ck_surface_view v;
        ck_mat4 pose = look_at((float[3]){(float)(1.3 * sin(angle)), 1.15f, (float)(1.3 * cos(angle))},
                               (float[3]){0.0f, 0.25f, 0.0f});
        int hint, j, steps = 45;
        CHECK(ck_session_surface(&surf, session));
        for (hint = 0; hint < 12; hint++) {
            float c[3] = { box.center.x, box.center.y, box.center.z }, d[3], a0, e0, da, de, r;
            CHECK(ck_surface_summarize(&sf, surf));
            v = (ck_surface_view)CK_SURFACE_VIEW_INIT;
            CHECK(ck_surface_next_view(&v, surf, &pose, &k_rgb));
            printf("  %6.2f s  surface %3.0f%% well covered: %s (gain %.0f%%)\n", i / fps, 100.0 * sf.all.complete_fraction,
                   v.text, 100.0 * v.gain_fraction);
            if (v.complete || v.side < 0) break;
            for (j = 0; j < 3; j++) d[j] = pose.m[12 + j] - c[j];
            a0 = atan2f(-d[0], -d[2]);
            e0 = atan2f(d[1], sqrtf(d[0] * d[0] + d[2] * d[2]));
            r = v.distance;
            da = v.target_azimuth - a0;
            if (da > 3.14159265f) da -= 6.2831853f;
            if (da < -3.14159265f) da += 6.2831853f;
            de = v.target_elevation - e0;
            for (j = 1; j <= steps; j++, i++) {
                float f_ = (float)j / steps, a = a0 + da * f_, e = e0 + de * f_;
                float eye[3] = { c[0] - r * sinf(a) * cosf(e), c[1] + r * sinf(e), c[2] - r * cosf(a) * cosf(e) };
                ck_session_frame f;
                ck_session_result res;
                CHECK(ck_session_frame_init(&f));
                f.timestamp = i / fps;
                f.pose = pose = look_at(eye, c);
                f.intrinsics = k_rgb;
                CHECK(ck_scene_render_depth(depth, conf, (size_t)256 * 192, NULL, scene, &f.pose, &k_depth, (uint64_t)i));
                f.depth = (ck_depth_map){ depth, k_depth.width, k_depth.height, 0, CK_FORMAT_DEPTH_F32, 0u };
                f.confidence = (ck_depth_map){ conf, k_depth.width, k_depth.height, 0, CK_FORMAT_U8, 0u };
                f.depth_intrinsics = k_depth;
                CHECK(ck_session_process(&res, session, &f));
                if (res.captured) {
                    char path[4200];
                    CHECK(ck_scene_render_rgb(rgb, (size_t)320 * 240 * 3, NULL, scene, &f.pose, &k_rgb));
                    snprintf(path, sizeof path, "%s/%s", dir, res.image_path);
                    CHECK(ck_png_write(path, &(ck_image){ rgb, 320, 240, 0, CK_IMAGE_FORMAT_RGB8, 0u }, 0, 0));
                    captured++;
                }
                while (ck_session_next_event(&ev, session) == CK_OK)
                    printf("  %6.2f s  event %3d: %s\n", ev.timestamp, ev.code, ev.text);
            }
        }
        CHECK(ck_surface_summarize(&sf, surf));
        printf("surface from depth: %.0f%% well covered, %u of 5 sides complete%s\n", 100.0 * sf.all.complete_fraction,
               sf.sides_completed, sf.all.completed ? ": surface complete" : "");
    }
    CHECK(ck_session_finish(session, 0, NULL));
    {
        const ck_coverage *cov;
        ck_coverage_summary sum;
        CHECK(ck_session_coverage(&cov, session));
        CHECK(ck_coverage_summarize(&sum, cov));
        printf("\ncaptured %d frames; coverage %.0f%%, %u sides complete, view dial %.0f%% filled\n", captured,
               100.0 * sum.completion, sum.faces_completed, 100.0 * sum.dial_fraction);
    }
    ck_session_close(session);
    ck_scene_free(scene);
    free(depth); free(conf); free(rgb);
    {
        DIR *d = opendir(dir);
        struct dirent *e;
        printf("dataset written to %s/:\n", dir);
        while (d && (e = readdir(d)) != NULL) {
            char p[4200];
            struct stat st;
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (stat(p, &st) == 0) printf("  %-40s %s%ld bytes\n", e->d_name, S_ISDIR(st.st_mode) ? "(folder) " : "", (long)st.st_size);
        }
        if (d) closedir(d);
    }
    printf("open it with: ns-train nerfacto --data %s   (or instant-ngp's testbed, or MultiScan's decoders)\n", dir);
    return 0;
}
