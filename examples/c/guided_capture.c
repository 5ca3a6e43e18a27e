/*
 * guided_capture.c — a simulated guided capture with CaptureKit's scheduler and coverage.
 *
 * An operator walks around a chair-sized box on the floor with a phone at 60 Hz: first too fast,
 * then at a good pace with the phone held high, then lower, turning the camera away for a moment. Each
 * frame goes to ck_scheduler_update(); captured frames go to ck_coverage_add_view(). The program
 * prints every prompt as it fires, each face's progress and colour, the view-direction dial,
 * and where to go next. Every status is checked.
 */
#include "capturekit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

static ck_status check(ck_status status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "%s: %s\n  %s\n", what, ck_status_string(status), ck_last_error_message());
        exit(1);
    }
    return status;
}

/** Camera-to-world pose at `eye` looking at `target` (OpenGL axes, column-major). */
static ck_mat4 look_at(const double eye[3], const double target[3])
{
    double f[3], r[3], u[3], n;
    int i;
    ck_mat4 m;
    for (i = 0; i < 3; i++) f[i] = target[i] - eye[i];
    n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (i = 0; i < 3; i++) f[i] /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0]; /* f x (0, 1, 0) */
    n = sqrt(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3; i++) {
        m.m[i] = (float)r[i];
        m.m[4 + i] = (float)u[i];
        m.m[8 + i] = (float)-f[i];
        m.m[12 + i] = (float)eye[i];
    }
    m.m[15] = 1.0f;
    return m;
}

static const char *const face_names[6] = { "front", "left", "right", "bottom", "top", "back" };

static void print_events(const char *source, ck_status (*next)(void *, ck_event *), void *handle)
{
    ck_event e;
    while (check(next(handle, &e), "next_event") == CK_OK) {
        printf("  t=%6.2f s  %-8s %3d  %s", e.timestamp, source, (int)e.code, e.text);
        if (e.code == CK_EVENT_SIDE_COMPLETED) printf(" (%s)", face_names[e.index]);
        else if (e.code == CK_EVENT_RING_COMPLETED) printf(" (ring %d)", (int)e.index);
        else if (e.code == CK_EVENT_SLOW_DOWN || e.code == CK_EVENT_SPEED_UP) printf(" (%.2f m/s)", e.value);
        else if (e.code == CK_EVENT_POINT_AT_OBJECT) printf(" (%.0f deg off)", e.value / DEG);
        printf("\n");
    }
}

static ck_status next_scheduler_event(void *s, ck_event *e) { return ck_scheduler_next_event(e, (ck_scheduler *)s); }
static ck_status next_coverage_event(void *c, ck_event *e) { return ck_coverage_next_event(e, (ck_coverage *)c); }

int main(void)
{
    ck_box box;
    ck_vec3 center = { 0.0f, 0.5f, 0.0f }, size = { 0.6f, 1.0f, 0.6f };
    ck_intrinsics k = { 1500.0f, 1500.0f, 960.0f, 720.0f, 1920, 1440 };
    ck_scheduler *scheduler = NULL;
    ck_coverage *coverage = NULL;
    ck_guidance g;
    ck_coverage_summary sum;
    ck_coverage_hint hint;
    ck_face_coverage fc;
    uint32_t dial[2 * 24];
    size_t count;
    double t = 0, azimuth = 0, radius = 1.8, target[3] = { 0, 0.5, 0 };
    int i, f, r, captures = 0;

    if (!CK_VERSION_COMPATIBLE(ck_version_number())) {
        fprintf(stderr, "libcapturekit %s does not match the header %s\n", ck_version_string(), CK_VERSION_STRING);
        return 1;
    }
    check(ck_box_init(&box, center, size, (float)(20 * DEG)), "ck_box_init");
    check(ck_box_set_floor(&box, 0.0f), "ck_box_set_floor");
    check(ck_scheduler_create(&scheduler, NULL), "ck_scheduler_create"); /* object-capture defaults */
    check(ck_coverage_create(&coverage, &box, NULL), "ck_coverage_create");

    printf("Guided capture around a %.1f x %.1f x %.1f m box (60 Hz, prompts as they fire):\n", size.x, size.y, size.z);
    for (i = 0; i < 60 * 75; i++) {
        /* The operator's plan: 0-6 s too fast (0.7 m/s); then 0.45 m/s held high; from 33 s
         * lower; 20-23 s the camera wanders off the object. */
        double speed = t < 6 ? 0.7 : 0.45, height = t < 33 ? 1.75 : 0.8, eye[3];
        ck_scheduler_frame frame = CK_SCHEDULER_FRAME_INIT;
        azimuth += speed / radius / 60;
        eye[0] = box.center.x - sin(azimuth + box.yaw) * radius;
        eye[1] = height;
        eye[2] = box.center.z - cos(azimuth + box.yaw) * radius;
        target[1] = (t > 20 && t < 23) ? 1.6 : 0.5;
        target[0] = (t > 20 && t < 23) ? eye[0] * 3 : 0;
        frame.timestamp = t;
        frame.pose = look_at(eye, target);
        frame.box = &box;
        check(ck_scheduler_update(&g, scheduler, &frame), "ck_scheduler_update");
        if (g.capture) {
            int32_t face;
            captures++;
            check(ck_coverage_add_view(&face, coverage, &frame.pose, &k, t), "ck_coverage_add_view");
        }
        print_events("guide", next_scheduler_event, scheduler);
        print_events("coverage", next_coverage_event, coverage);
        t += 1.0 / 60;
    }

    check(ck_coverage_summarize(&sum, coverage), "ck_coverage_summarize");
    printf("\n%d captures in %.0f s; completion %.0f %%, %u of 5 faces done, dial %.0f %% filled, cells %.0f %% seen\n",
           captures, t, 100 * sum.completion, sum.faces_completed, 100 * sum.dial_fraction, 100 * sum.cell_fraction);
    printf("face     count  progress  colour (r, g, b)  opacity  cells\n");
    for (f = 0; f < 6; f++) {
        check(ck_coverage_face(&fc, coverage, f), "ck_coverage_face");
        printf("%-7s %5u  %7.0f%%  (%.2f, %.2f, %.2f)  %7.2f  %4.0f%%%s\n", face_names[f], fc.count, 100 * fc.progress,
               fc.color[0], fc.color[1], fc.color[2], fc.opacity, 100 * fc.cell_fraction, fc.completed ? "  done" : "");
    }
    check(ck_coverage_dial(dial, sizeof dial / sizeof dial[0], &count, coverage), "ck_coverage_dial");
    printf("dial (views per 15 deg bin, azimuth 0 = in front):\n");
    for (r = 1; r >= 0; r--) {
        printf("  ring %d ", r);
        for (i = 0; i < 24; i++) printf("%c", dial[r * 24 + i] == 0 ? '.' : dial[r * 24 + i] < 10 ? (char)('0' + dial[r * 24 + i]) : '+');
        printf("\n");
    }
    {
        double eye[3];
        ck_mat4 pose;
        eye[0] = box.center.x - sin(azimuth + box.yaw) * radius; eye[1] = 0.8; eye[2] = box.center.z - cos(azimuth + box.yaw) * radius;
        target[0] = 0; target[1] = 0.5;
        pose = look_at(eye, target);
        check(ck_coverage_suggest(&hint, coverage, &pose), "ck_coverage_suggest");
        printf("next: walk %s ~%.0f deg (to azimuth %.0f deg)%s; that bin has %u views\n",
               hint.move_angle >= 0 ? "left" : "right", fabs(hint.move_angle) / DEG, hint.target_azimuth / DEG,
               hint.ring_delta > 0 ? ", higher" : hint.ring_delta < 0 ? ", lower" : "", hint.target_count);
    }

    ck_coverage_free(coverage);
    ck_scheduler_free(scheduler);
    return 0;
}
