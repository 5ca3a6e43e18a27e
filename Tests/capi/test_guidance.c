/*
 * test_guidance.c — the C API test of CaptureKit's guidance section (ck_guidance.h): the
 * scheduler, events, coverage and sharpness (docs/DESIGN.md#tests).
 *
 * Uses only include/capturekit.h and the built libcapturekit.so. Covers every function of
 * ck_guidance.h: NULL for every pointer, NaN and +-inf for every float, bad option values field by
 * field, struct_size versioning, every status code each function can return, free(NULL), and
 * behaviour checked against independent computations written here (capture times of a
 * constant-speed orbit, the speed of a straight walk, the centre-ray face, the reference colours,
 * the Laplacian variance).
 *
 * Output: one line per failed check, then exactly one summary line "N passed, M failed".
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, lstat (support.h) */
#include "capturekit.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* ============================================================================================
 * ABI guard: sizes, offsets, enum values and flags are frozen
 * ============================================================================================ */

STATIC_ASSERT(sizeof(ck_scheduler_options) == 120, scheduler_options_size);
STATIC_ASSERT(sizeof(ck_guidance) == 48, guidance_size);
STATIC_ASSERT(sizeof(ck_coverage_options) == 44, coverage_options_size);
STATIC_ASSERT(sizeof(ck_face_coverage) == 40, face_coverage_size);
STATIC_ASSERT(sizeof(ck_coverage_summary) == 32, coverage_summary_size);
STATIC_ASSERT(sizeof(ck_coverage_hint) == 32, coverage_hint_size);
STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_event) == 32, event_size_lp64);
STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_scheduler_frame) == 184, frame_size_lp64);

STATIC_ASSERT(offsetof(ck_event, code) == 0 && offsetof(ck_event, index) == 4 && offsetof(ck_event, timestamp) == 8 &&
              offsetof(ck_event, value) == 16 && offsetof(ck_event, reserved) == 20 && offsetof(ck_event, text) == 24,
              event_offsets);
STATIC_ASSERT(offsetof(ck_scheduler_frame, struct_size) == 0 && offsetof(ck_scheduler_frame, tracking) == 4 &&
              offsetof(ck_scheduler_frame, timestamp) == 8 && offsetof(ck_scheduler_frame, pose) == 16 &&
              offsetof(ck_scheduler_frame, box) == 80, frame_offsets);
STATIC_ASSERT(sizeof(void *) != 8 || (offsetof(ck_scheduler_frame, sharpness) == 88 &&
              offsetof(ck_scheduler_frame, reserved) == 92 && offsetof(ck_scheduler_frame, depth) == 96 &&
              offsetof(ck_scheduler_frame, depth_intrinsics) == 128 && offsetof(ck_scheduler_frame, intrinsics) == 152 &&
              offsetof(ck_scheduler_frame, tracking_reason) == 176 && offsetof(ck_scheduler_frame, mean_luma) == 180),
              frame_offsets_lp64);
STATIC_ASSERT(offsetof(ck_scheduler_options, smoothing_window) == 4 && offsetof(ck_scheduler_options, speed_fast) == 16 &&
              offsetof(ck_scheduler_options, first_capture_delay) == 32 && offsetof(ck_scheduler_options, drift_distance) == 52 &&
              offsetof(ck_scheduler_options, min_sharpness) == 72 && offsetof(ck_scheduler_options, prompt_repeat) == 92 &&
              offsetof(ck_scheduler_options, sideways_min_speed) == 100 && offsetof(ck_scheduler_options, blocking_flags) == 104 &&
              offsetof(ck_scheduler_options, prompt_window) == 108 && offsetof(ck_scheduler_options, min_box_in_frame) == 112 &&
              offsetof(ck_scheduler_options, min_luma) == 116,
              scheduler_options_offsets);
STATIC_ASSERT(offsetof(ck_guidance, capture) == 0 && offsetof(ck_guidance, band) == 4 && offsetof(ck_guidance, flags) == 8 &&
              offsetof(ck_guidance, captures) == 12 && offsetof(ck_guidance, speed) == 16 &&
              offsetof(ck_guidance, angular_speed) == 20 && offsetof(ck_guidance, pitch) == 24 &&
              offsetof(ck_guidance, interval) == 28 && offsetof(ck_guidance, next_capture_in) == 32 &&
              offsetof(ck_guidance, median_depth) == 36 && offsetof(ck_guidance, blocked) == 40 &&
              offsetof(ck_guidance, reserved) == 44, guidance_offsets);
STATIC_ASSERT(offsetof(ck_coverage_options, goal) == 4 && offsetof(ck_coverage_options, face_mask) == 8 &&
              offsetof(ck_coverage_options, cells_per_side) == 12 && offsetof(ck_coverage_options, grid_width) == 16 &&
              offsetof(ck_coverage_options, grid_height) == 20 && offsetof(ck_coverage_options, azimuth_bins) == 24 &&
              offsetof(ck_coverage_options, elevation_rings) == 28 && offsetof(ck_coverage_options, elevation_min_deg) == 32 &&
              offsetof(ck_coverage_options, elevation_max_deg) == 36, coverage_options_offsets);
STATIC_ASSERT(offsetof(ck_face_coverage, count) == 0 && offsetof(ck_face_coverage, goal) == 4 &&
              offsetof(ck_face_coverage, progress) == 8 && offsetof(ck_face_coverage, color) == 12 &&
              offsetof(ck_face_coverage, opacity) == 24 && offsetof(ck_face_coverage, cell_fraction) == 28 &&
              offsetof(ck_face_coverage, completed) == 32 && offsetof(ck_face_coverage, reserved) == 36, face_coverage_offsets);
STATIC_ASSERT(offsetof(ck_coverage_summary, views) == 0 && offsetof(ck_coverage_summary, faces_completed) == 4 &&
              offsetof(ck_coverage_summary, all_completed) == 8 && offsetof(ck_coverage_summary, completion) == 12 &&
              offsetof(ck_coverage_summary, dial_fraction) == 16 && offsetof(ck_coverage_summary, cell_fraction) == 20 &&
              offsetof(ck_coverage_summary, reserved) == 24, coverage_summary_offsets);
STATIC_ASSERT(offsetof(ck_coverage_hint, move_angle) == 0 && offsetof(ck_coverage_hint, camera_azimuth) == 4 &&
              offsetof(ck_coverage_hint, target_azimuth) == 8 && offsetof(ck_coverage_hint, camera_elevation) == 12 &&
              offsetof(ck_coverage_hint, ring) == 16 && offsetof(ck_coverage_hint, bin) == 20 &&
              offsetof(ck_coverage_hint, target_count) == 24 && offsetof(ck_coverage_hint, ring_delta) == 28, hint_offsets);

STATIC_ASSERT(CK_TRACKING_NOT_AVAILABLE == 0 && CK_TRACKING_LIMITED == 1 && CK_TRACKING_NORMAL == 2, tracking_values);
STATIC_ASSERT(CK_TRACKING_REASON_NONE == 0 && CK_TRACKING_REASON_INITIALIZING == 1 && CK_TRACKING_REASON_EXCESSIVE_MOTION == 2 &&
              CK_TRACKING_REASON_INSUFFICIENT_FEATURES == 3 && CK_TRACKING_REASON_RELOCALIZING == 4, tracking_reason_values);
STATIC_ASSERT(CK_SPEED_BAND_SLOW == 0 && CK_SPEED_BAND_MEDIUM == 1 && CK_SPEED_BAND_FAST == 2 && CK_SPEED_BAND_TOO_FAST == 3, band_values);
STATIC_ASSERT(CK_PRESET_OBJECT_CAPTURE == 0 && CK_PRESET_ROOM_SCAN == 1, preset_values);
STATIC_ASSERT(CK_EVENT_SLOW_DOWN == 1 && CK_EVENT_SPEED_UP == 2 && CK_EVENT_TURNING_TOO_FAST == 3 && CK_EVENT_TILT_DOWN == 4 &&
              CK_EVENT_TILT_UP == 5 && CK_EVENT_DRIFT == 6 && CK_EVENT_POINT_AT_OBJECT == 7 &&
              CK_EVENT_TRACKING_LIMITED == 8 && CK_EVENT_TRACKING_NOT_AVAILABLE == 9 && CK_EVENT_TOO_CLOSE == 10 &&
              CK_EVENT_TOO_FAR == 11 && CK_EVENT_BLURRY == 12 && CK_EVENT_WALKING_SIDEWAYS_LEFT == 13 &&
              CK_EVENT_WALKING_SIDEWAYS_RIGHT == 14 && CK_EVENT_MOVE_TO_NEW_VIEW == 15 && CK_EVENT_SIDE_COMPLETED == 101 &&
              CK_EVENT_ALL_SIDES_COMPLETED == 102 && CK_EVENT_RING_COMPLETED == 103, event_values);
STATIC_ASSERT(CK_EVENT_OBJECT_OUT_OF_FRAME == 16 && CK_EVENT_LOW_LIGHT == 17 && CK_EVENT_TRACKING_INITIALIZING == 18 &&
              CK_EVENT_TRACKING_EXCESSIVE_MOTION == 19 && CK_EVENT_TRACKING_INSUFFICIENT_FEATURES == 20 &&
              CK_EVENT_TRACKING_RELOCALIZING == 21, event_values_02);
STATIC_ASSERT(CK_GUIDE_SLOW_DOWN == 1u << (CK_EVENT_SLOW_DOWN - 1) && CK_GUIDE_SPEED_UP == 1u << (CK_EVENT_SPEED_UP - 1) &&
              CK_GUIDE_TURNING_TOO_FAST == 1u << (CK_EVENT_TURNING_TOO_FAST - 1) &&
              CK_GUIDE_TILT_DOWN == 1u << (CK_EVENT_TILT_DOWN - 1) && CK_GUIDE_TILT_UP == 1u << (CK_EVENT_TILT_UP - 1) &&
              CK_GUIDE_DRIFT == 1u << (CK_EVENT_DRIFT - 1) && CK_GUIDE_POINT_AT_OBJECT == 1u << (CK_EVENT_POINT_AT_OBJECT - 1) &&
              CK_GUIDE_TRACKING_LIMITED == 1u << (CK_EVENT_TRACKING_LIMITED - 1) &&
              CK_GUIDE_TRACKING_NOT_AVAILABLE == 1u << (CK_EVENT_TRACKING_NOT_AVAILABLE - 1) &&
              CK_GUIDE_TOO_CLOSE == 1u << (CK_EVENT_TOO_CLOSE - 1) && CK_GUIDE_TOO_FAR == 1u << (CK_EVENT_TOO_FAR - 1) &&
              CK_GUIDE_BLURRY == 1u << (CK_EVENT_BLURRY - 1) &&
              CK_GUIDE_WALKING_SIDEWAYS_LEFT == 1u << (CK_EVENT_WALKING_SIDEWAYS_LEFT - 1) &&
              CK_GUIDE_WALKING_SIDEWAYS_RIGHT == 1u << (CK_EVENT_WALKING_SIDEWAYS_RIGHT - 1) &&
              CK_GUIDE_MOVE_TO_NEW_VIEW == 1u << (CK_EVENT_MOVE_TO_NEW_VIEW - 1), flag_values);
STATIC_ASSERT(CK_GUIDE_OBJECT_OUT_OF_FRAME == 1u << (CK_EVENT_OBJECT_OUT_OF_FRAME - 1) &&
              CK_GUIDE_LOW_LIGHT == 1u << (CK_EVENT_LOW_LIGHT - 1) &&
              CK_GUIDE_TRACKING_INITIALIZING == 1u << (CK_EVENT_TRACKING_INITIALIZING - 1) &&
              CK_GUIDE_TRACKING_EXCESSIVE_MOTION == 1u << (CK_EVENT_TRACKING_EXCESSIVE_MOTION - 1) &&
              CK_GUIDE_TRACKING_INSUFFICIENT_FEATURES == 1u << (CK_EVENT_TRACKING_INSUFFICIENT_FEATURES - 1) &&
              CK_GUIDE_TRACKING_RELOCALIZING == 1u << (CK_EVENT_TRACKING_RELOCALIZING - 1), flag_values_02);
STATIC_ASSERT(CK_GUIDE_ALL == 0x1FFFFFu && CK_GUIDE_ALL == (1u << CK_EVENT_TRACKING_RELOCALIZING) - 1u &&
              CK_EVENT_QUEUE_CAPACITY == 256u, limits);
STATIC_ASSERT(CK_GUIDE_BLOCKING_OBJECT_CAPTURE ==
              (CK_GUIDE_ALL & ~(CK_GUIDE_SPEED_UP | CK_GUIDE_WALKING_SIDEWAYS_LEFT | CK_GUIDE_WALKING_SIDEWAYS_RIGHT |
                                CK_GUIDE_MOVE_TO_NEW_VIEW | CK_GUIDE_LOW_LIGHT)) &&
              CK_GUIDE_BLOCKING_ROOM_SCAN == (CK_GUIDE_BLOCKING_OBJECT_CAPTURE & ~(CK_GUIDE_TILT_UP | CK_GUIDE_TILT_DOWN)),
              blocking_values);

/* ============================================================================================
 * Independent helpers (double)
 * ============================================================================================ */

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

typedef struct { double x, y, z; } dvec;

static dvec dv(double x, double y, double z) { dvec r; r.x = x; r.y = y; r.z = z; return r; }
static dvec dsub(dvec a, dvec b) { return dv(a.x - b.x, a.y - b.y, a.z - b.z); }
static dvec dmul(dvec a, double s) { return dv(a.x * s, a.y * s, a.z * s); }
static double ddot(dvec a, dvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static dvec dcross(dvec a, dvec b) { return dv(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static dvec dnorm(dvec a) { return dmul(a, 1.0 / sqrt(ddot(a, a))); }

/** Camera-to-world pose at `eye` looking at `target` (OpenGL axes), column-major. */
static ck_mat4 look_at_d(dvec eye, dvec target)
{
    dvec f = dnorm(dsub(target, eye)), right = dnorm(dcross(f, dv(0, 1, 0))), up = dcross(right, f);
    ck_mat4 m;
    memset(&m, 0, sizeof m);
    m.m[0] = (float)right.x; m.m[1] = (float)right.y; m.m[2] = (float)right.z;
    m.m[4] = (float)up.x; m.m[5] = (float)up.y; m.m[6] = (float)up.z;
    m.m[8] = (float)-f.x; m.m[9] = (float)-f.y; m.m[10] = (float)-f.z;
    m.m[12] = (float)eye.x; m.m[13] = (float)eye.y; m.m[14] = (float)eye.z; m.m[15] = 1.0f;
    return m;
}

/** A camera on a circle of `radius` around `c`, `height` above it, at dial azimuth `az` (0 at -z,
 *  pi/2 at -x), looking at `c`. */
static ck_mat4 orbit(dvec c, double radius, double height, double az)
{
    return look_at_d(dv(c.x - sin(az) * radius, c.y + height, c.z - cos(az) * radius), c);
}

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static uint32_t rnd32(void)
{
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}

static ck_box make_box(double cx, double cy, double cz, double sx, double sy, double sz, double yaw)
{
    ck_box b;
    ck_vec3 c, s;
    c.x = (float)cx; c.y = (float)cy; c.z = (float)cz;
    s.x = (float)sx; s.y = (float)sy; s.z = (float)sz;
    CHECK_STATUS(ck_box_init(&b, c, s, (float)yaw), CK_OK);
    return b;
}

static ck_intrinsics make_k(float f, uint32_t w, uint32_t h)
{
    ck_intrinsics k;
    k.fx = f; k.fy = f; k.cx = (float)w / 2; k.cy = (float)h / 2; k.width = w; k.height = h;
    return k;
}

static ck_scheduler_frame frame_at(double t, ck_mat4 pose, const ck_box *box)
{
    ck_scheduler_frame f = CK_SCHEDULER_FRAME_INIT;
    f.timestamp = t;
    f.pose = pose;
    f.box = box;
    return f;
}

/** Drains a scheduler's queue; returns how many events had `code` (and the last such in *last). */
static int drain_scheduler(ck_scheduler *s, int32_t code, ck_event *last)
{
    ck_event e;
    int n = 0;
    ck_status st;
    while ((st = ck_scheduler_next_event(&e, s)) == CK_OK) {
        CHECK(e.text != NULL && e.text == ck_event_string(e.code) && e.reserved == 0);
        if (e.code == code) { n++; if (last) *last = e; }
    }
    CHECK_STATUS(st, CK_END);
    return n;
}

static int drain_coverage(ck_coverage *c, int32_t code, ck_event *last)
{
    ck_event e;
    int n = 0;
    ck_status st;
    while ((st = ck_coverage_next_event(&e, c)) == CK_OK) {
        /* Static texts: the code's own, except side events, which name their side. */
        CHECK(e.text != NULL && (e.code == CK_EVENT_SIDE_COMPLETED ? strstr(e.text, " side completed") != NULL
                                                                  : e.text == ck_event_string(e.code)));
        if (e.code == code) { n++; if (last) *last = e; }
    }
    CHECK_STATUS(st, CK_END);
    return n;
}

/* ============================================================================================
 * Events
 * ============================================================================================ */

static void test_event_strings(void)
{
    static const int32_t codes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                     101, 102, 103, 104 };
    size_t i, j;
    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = ck_event_string(codes[i]);
        CHECK(s != NULL && strlen(s) > 3 && strcmp(s, "unknown event") != 0);
        for (j = 0; j < i; j++) CHECK(strcmp(s, ck_event_string(codes[j])) != 0);
    }
    CHECK(strcmp(ck_event_string(CK_EVENT_SLOW_DOWN), "Slow down") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_SIDE_COMPLETED), "Side completed") == 0);
    CHECK(strcmp(ck_event_string(0), "unknown event") == 0);
    CHECK(strcmp(ck_event_string(22), "unknown event") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_OBJECT_OUT_OF_FRAME), "Move back: the object is partly out of frame") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_LOW_LIGHT), "More light needed") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_TRACKING_INITIALIZING), "Move the device slowly to start") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_TRACKING_EXCESSIVE_MOTION), "Slow down: moving too fast for tracking") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_TRACKING_INSUFFICIENT_FEATURES), "Point at a more detailed surface, or add light") == 0);
    CHECK(strcmp(ck_event_string(CK_EVENT_TRACKING_RELOCALIZING), "Return to where you were") == 0);
    CHECK(strcmp(ck_event_string(-1), "unknown event") == 0);
    CHECK(strcmp(ck_event_string(INT32_MIN), "unknown event") == 0);
    CHECK(strcmp(ck_status_string(CK_END), "CK_END: no more items") == 0);
    /* Flag names: every defined bit has its constant's name; anything else is "unknown". */
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_SLOW_DOWN), "SLOW_DOWN") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_MOVE_TO_NEW_VIEW), "MOVE_TO_NEW_VIEW") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_WALKING_SIDEWAYS_LEFT), "WALKING_SIDEWAYS_LEFT") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_OBJECT_OUT_OF_FRAME), "OBJECT_OUT_OF_FRAME") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_LOW_LIGHT), "LOW_LIGHT") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_TRACKING_INITIALIZING), "TRACKING_INITIALIZING") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_TRACKING_EXCESSIVE_MOTION), "TRACKING_EXCESSIVE_MOTION") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_TRACKING_INSUFFICIENT_FEATURES), "TRACKING_INSUFFICIENT_FEATURES") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_TRACKING_RELOCALIZING), "TRACKING_RELOCALIZING") == 0);
    for (i = 0; i < 21; i++) {
        const char *n = ck_guide_flag_name(1u << i);
        CHECK(n != NULL && strcmp(n, "unknown") != 0);
        for (j = 0; j < i; j++) CHECK(strcmp(n, ck_guide_flag_name(1u << j)) != 0);
    }
    CHECK(strcmp(ck_guide_flag_name(0), "unknown") == 0);
    CHECK(strcmp(ck_guide_flag_name(CK_GUIDE_SLOW_DOWN | CK_GUIDE_TILT_UP), "unknown") == 0);
    CHECK(strcmp(ck_guide_flag_name(1u << 21), "unknown") == 0);
    CHECK(strcmp(ck_guide_flag_name(0x80000000u), "unknown") == 0);
}

/* ============================================================================================
 * Scheduler options
 * ============================================================================================ */

static void test_scheduler_options(void)
{
    ck_scheduler_options init = CK_SCHEDULER_OPTIONS_INIT, o, room;
    memset(&o, 0xAB, sizeof o);
    CHECK_STATUS(ck_scheduler_options_init(&o), CK_OK);
    CHECK(memcmp(&o, &init, sizeof o) == 0); /* the INIT macro equals the init function */
    CHECK(o.struct_size == sizeof o && o.speed_slow == 0.254f && o.speed_medium == 0.406f && o.speed_fast == 0.508f);
    CHECK(o.interval_slow == 3 && o.interval_medium == 2 && o.interval_fast == 1 && o.first_capture_delay == 3);
    CHECK(o.pitch_max_deg == 30 && o.pitch_min_deg == -65 && o.drift_distance == 10 && o.drift_time == 2);
    CHECK(o.blocking_flags == CK_GUIDE_BLOCKING_OBJECT_CAPTURE);
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_scheduler_options_init, (NULL));

    memset(&o, 0xAB, sizeof o);
    CHECK_STATUS(ck_scheduler_options_preset(&o, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    CHECK(memcmp(&o, &init, sizeof o) == 0);
    CHECK_STATUS(ck_scheduler_options_preset(&room, CK_PRESET_ROOM_SCAN), CK_OK);
    CHECK(room.struct_size == sizeof room && room.speed_slow == 0.2f && room.speed_fast == 0.8f && room.interval_fast == 0.25f);
    CHECK(room.box_view_angle_deg == 0 && room.sideways_ratio == 0.7f && room.pitch_delay == 3 &&
          room.blocking_flags == CK_GUIDE_BLOCKING_ROOM_SCAN && room.depth_max == 5);
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_scheduler_options_preset, (NULL, CK_PRESET_ROOM_SCAN));
    o = init;
    ERR(CK_E_INVALID_ARGUMENT, "preset", ck_scheduler_options_preset, (&o, 2));
    ERR(CK_E_INVALID_ARGUMENT, "preset", ck_scheduler_options_preset, (&o, -1));
    CHECK(memcmp(&o, &init, sizeof o) == 0); /* unchanged on error */
}

typedef struct { size_t offset; float value; const char *name; } bad_float;

static void test_scheduler_create(void)
{
    static const bad_float bad[] = {
        { offsetof(ck_scheduler_options, smoothing_window), 0.0f, "smoothing_window" },
        { offsetof(ck_scheduler_options, smoothing_window), 11.0f, "smoothing_window" },
        { offsetof(ck_scheduler_options, speed_slow), -0.1f, "speed_slow" },
        { offsetof(ck_scheduler_options, speed_slow), 0.45f, "speed_slow" },
        { offsetof(ck_scheduler_options, speed_medium), 0.6f, "speed_medium" },
        { offsetof(ck_scheduler_options, speed_fast), 200.0f, "speed_fast" },
        { offsetof(ck_scheduler_options, interval_slow), 0.0f, "interval_slow" },
        { offsetof(ck_scheduler_options, interval_medium), -1.0f, "interval_medium" },
        { offsetof(ck_scheduler_options, interval_fast), 4000.0f, "interval_fast" },
        { offsetof(ck_scheduler_options, first_capture_delay), -1.0f, "first_capture_delay" },
        { offsetof(ck_scheduler_options, max_angular_speed_deg), -1.0f, "max_angular_speed_deg" },
        { offsetof(ck_scheduler_options, pitch_max_deg), 95.0f, "pitch_max_deg" },
        { offsetof(ck_scheduler_options, pitch_min_deg), 40.0f, "pitch_min_deg" },
        { offsetof(ck_scheduler_options, pitch_delay), -1.0f, "pitch_delay" },
        { offsetof(ck_scheduler_options, drift_distance), -1.0f, "drift_distance" },
        { offsetof(ck_scheduler_options, drift_time), 0.0f, "drift_time" },
        { offsetof(ck_scheduler_options, box_view_angle_deg), 181.0f, "box_view_angle_deg" },
        { offsetof(ck_scheduler_options, redundant_distance), -0.5f, "redundant_distance" },
        { offsetof(ck_scheduler_options, redundant_angle_deg), 200.0f, "redundant_angle_deg" },
        { offsetof(ck_scheduler_options, min_sharpness), -1.0f, "min_sharpness" },
        { offsetof(ck_scheduler_options, depth_min), 5.0f, "depth_min" },
        { offsetof(ck_scheduler_options, depth_max), -1.0f, "depth_max" },
        { offsetof(ck_scheduler_options, depth_center_fraction), 0.0f, "depth_center_fraction" },
        { offsetof(ck_scheduler_options, depth_center_fraction), 1.5f, "depth_center_fraction" },
        { offsetof(ck_scheduler_options, prompt_delay), -1.0f, "prompt_delay" },
        { offsetof(ck_scheduler_options, prompt_repeat), 0.0f, "prompt_repeat" },
        { offsetof(ck_scheduler_options, prompt_window), 0.0f, "prompt_window" },
        { offsetof(ck_scheduler_options, prompt_window), 61.0f, "prompt_window" },
        { offsetof(ck_scheduler_options, sideways_ratio), 1.5f, "sideways_ratio" },
        { offsetof(ck_scheduler_options, sideways_min_speed), -1.0f, "sideways_min_speed" },
        { offsetof(ck_scheduler_options, min_box_in_frame), 1.5f, "min_box_in_frame" },
        { offsetof(ck_scheduler_options, min_box_in_frame), -0.1f, "min_box_in_frame" },
        { offsetof(ck_scheduler_options, min_luma), 1.01f, "min_luma" },
        { offsetof(ck_scheduler_options, min_luma), -0.5f, "min_luma" },
    };
    ck_scheduler_options o = CK_SCHEDULER_OPTIONS_INIT;
    ck_scheduler *s = NULL;
    unsigned char bigger[sizeof(ck_scheduler_options) + 16];
    size_t i, f;

    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    CHECK(s != NULL);
    ck_scheduler_free(s);
    s = NULL;
    CHECK_STATUS(ck_scheduler_create(&s, &o), CK_OK);
    ck_scheduler_free(s);
    ck_scheduler_free(NULL); /* accepted */
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_scheduler_create, (NULL, &o));

    /* Every float field: a bad value, NaN, +inf and -inf are rejected naming the field; *out = NULL. */
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const float specials[4] = { bad[i].value, NAN, INFINITY, -INFINITY };
        for (f = 0; f < 4; f++) {
            ck_scheduler_options b = CK_SCHEDULER_OPTIONS_INIT;
            memcpy((char *)&b + bad[i].offset, &specials[f], sizeof(float));
            s = (ck_scheduler *)&b; /* any non-NULL value: must be reset to NULL */
            ERR(CK_E_INVALID_ARGUMENT, bad[i].name, ck_scheduler_create, (&s, &b));
            CHECK(s == NULL);
        }
    }
    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    o.blocking_flags = 1u << 21;
    ERR(CK_E_INVALID_ARGUMENT, "blocking_flags", ck_scheduler_create, (&s, &o));
    o.blocking_flags = CK_GUIDE_ALL;  /* every defined flag, low light included, may block */
    CHECK_STATUS(ck_scheduler_create(&s, &o), CK_OK);
    ck_scheduler_free(s);
    /* Zero thresholds turn gates off and are accepted. */
    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    o.max_angular_speed_deg = 0; o.drift_distance = 0; o.box_view_angle_deg = 0; o.redundant_distance = 0;
    o.depth_min = 0; o.depth_max = 0; o.blocking_flags = 0; o.min_box_in_frame = 0; o.min_luma = 0;
    CHECK_STATUS(ck_scheduler_create(&s, &o), CK_OK);
    ck_scheduler_free(s);

    /* struct_size versioning. A 0.1 binary's 108 bytes (no prompt_window) and 0.2's first 112 (no
     * gate thresholds): the fields past struct_size are not read, whatever the memory holds. */
    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    o.min_box_in_frame = NAN; o.min_luma = NAN;
    o.struct_size = 112;
    CHECK_STATUS(ck_scheduler_create(&s, &o), CK_OK);
    ck_scheduler_free(s);
    o.prompt_window = NAN;
    o.struct_size = 108;
    CHECK_STATUS(ck_scheduler_create(&s, &o), CK_OK);
    ck_scheduler_free(s);
    o.struct_size = 116;
    ERR(CK_E_INVALID_ARGUMENT, "prompt_window", ck_scheduler_create, (&s, &o));
    o.prompt_window = 0.75f;
    ERR(CK_E_INVALID_ARGUMENT, "min_box_in_frame", ck_scheduler_create, (&s, &o));
    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    o.struct_size = 8;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_scheduler_create, (&s, &o));
    o.struct_size = 1u << 20;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_scheduler_create, (&s, &o));
    memset(bigger, 0, sizeof bigger);
    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    o.struct_size = sizeof bigger;
    memcpy(bigger, &o, sizeof o);
    CHECK_STATUS(ck_scheduler_create(&s, (const ck_scheduler_options *)(void *)bigger), CK_OK);
    ck_scheduler_free(s);
    bigger[sizeof o + 3] = 1;
    ERR(CK_E_UNSUPPORTED, "options", ck_scheduler_create, (&s, (const ck_scheduler_options *)(void *)bigger));
    CHECK(s == NULL);
}

/* ============================================================================================
 * Scheduler updates
 * ============================================================================================ */

static void test_scheduler_frame_init(void)
{
    ck_scheduler_frame init = CK_SCHEDULER_FRAME_INIT, f;
    memset(&f, 0xAB, sizeof f);
    CHECK_STATUS(ck_scheduler_frame_init(&f), CK_OK);
    CHECK(memcmp(&f, &init, sizeof f) == 0);
    CHECK(f.struct_size == sizeof f && f.tracking == CK_TRACKING_NORMAL && f.sharpness == -1.0f && f.box == NULL &&
          f.depth.data == NULL && f.depth_intrinsics.fx == 0 && f.pose.m[0] == 1 && f.pose.m[15] == 1 && f.pose.m[12] == 0);
    CHECK(f.intrinsics.fx == 0 && f.intrinsics.width == 0 && f.tracking_reason == CK_TRACKING_REASON_NONE && f.mean_luma == -1.0f);
    ERR(CK_E_INVALID_ARGUMENT, "frame_out", ck_scheduler_frame_init, (NULL));
}

static void test_scheduler_update_arguments(void)
{
    ck_scheduler *s = NULL;
    ck_guidance g, untouched;
    ck_box box = make_box(0, 0.4, 0, 0.6, 0.6, 0.6, 0.3), badbox = box;
    ck_scheduler_frame f = frame_at(1.0, look_at_d(dv(0, 1.2, -2), dv(0, 0.4, 0)), &box), b;
    ck_intrinsics dk = make_k(200, 16, 12);
    float depth[16 * 12];
    unsigned char bigger[sizeof(ck_scheduler_frame) + 8];
    int i;

    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    memset(&untouched, 0x5A, sizeof untouched);
    g = untouched;
    ERR(CK_E_INVALID_ARGUMENT, "scheduler", ck_scheduler_update, (&g, NULL, &f));
    ERR(CK_E_INVALID_ARGUMENT, "guidance_out", ck_scheduler_update, (NULL, s, &f));
    ERR(CK_E_INVALID_ARGUMENT, "frame", ck_scheduler_update, (&g, s, NULL));
    /* Non-finite timestamps. */
    b = f; b.timestamp = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    b.timestamp = INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    b.timestamp = -INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    b.timestamp = 2e12;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    /* Every pose element NaN / inf; a non-rigid pose. */
    for (i = 0; i < 16; i++) {
        b = f; b.pose.m[i] = NAN;
        ERR(CK_E_INVALID_ARGUMENT, "frame.pose", ck_scheduler_update, (&g, s, &b));
        b.pose.m[i] = -INFINITY;
        ERR(CK_E_INVALID_ARGUMENT, "frame.pose", ck_scheduler_update, (&g, s, &b));
    }
    b = f; b.pose.m[0] = 2.0f;
    ERR(CK_E_INVALID_ARGUMENT, "frame.pose", ck_scheduler_update, (&g, s, &b));
    /* Tracking, box, sharpness, reserved. */
    b = f; b.tracking = 3;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking", ck_scheduler_update, (&g, s, &b));
    b.tracking = -1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking", ck_scheduler_update, (&g, s, &b));
    b = f; badbox.center.x = NAN; b.box = &badbox;
    ERR(CK_E_INVALID_ARGUMENT, "frame.box", ck_scheduler_update, (&g, s, &b));
    badbox = box; badbox.has_floor = 2;
    ERR(CK_E_INVALID_ARGUMENT, "frame.box", ck_scheduler_update, (&g, s, &b));
    b = f; b.sharpness = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "frame.sharpness", ck_scheduler_update, (&g, s, &b));
    b.sharpness = INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "frame.sharpness", ck_scheduler_update, (&g, s, &b));
    b = f; b.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.reserved", ck_scheduler_update, (&g, s, &b));
    /* Since 0.2: intrinsics (every float NaN / inf, a zero size), tracking_reason, mean_luma. */
    for (i = 0; i < 4; i++) {
        const float specials[3] = { NAN, INFINITY, -INFINITY };
        int j;
        for (j = 0; j < 3; j++) {
            b = f; b.intrinsics = make_k(200, 16, 12);
            memcpy((char *)&b.intrinsics + (size_t)i * sizeof(float), &specials[j], sizeof(float));
            ERR(CK_E_INVALID_ARGUMENT, "frame.intrinsics", ck_scheduler_update, (&g, s, &b));
        }
    }
    b = f; b.intrinsics = make_k(200, 16, 12); b.intrinsics.width = 0;
    ERR(CK_E_INVALID_ARGUMENT, "frame.intrinsics", ck_scheduler_update, (&g, s, &b));
    b = f; b.tracking_reason = 5;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking_reason", ck_scheduler_update, (&g, s, &b));
    b.tracking_reason = -1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking_reason", ck_scheduler_update, (&g, s, &b));
    b = f; b.mean_luma = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_scheduler_update, (&g, s, &b));
    b.mean_luma = INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_scheduler_update, (&g, s, &b));
    b.mean_luma = -INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_scheduler_update, (&g, s, &b));
    b.mean_luma = 1.5f;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_scheduler_update, (&g, s, &b));
    /* Depth (0.2: a ck_depth_map): intrinsics of its size (or all zero); a stride holding a row;
     * a depth format. */
    for (i = 0; i < 16 * 12; i++) depth[i] = 1.0f;
    b = f; b.depth = (ck_depth_map){ depth, 16, 12, 0, CK_FORMAT_DEPTH_F32, 0u };
    b.depth_intrinsics = make_k(200, 15, 12);
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth_intrinsics", ck_scheduler_update, (&g, s, &b));
    b.depth_intrinsics = dk; b.depth.stride = 62;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.stride", ck_scheduler_update, (&g, s, &b));
    b.depth.stride = 60;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.stride", ck_scheduler_update, (&g, s, &b));
    b.depth.stride = SIZE_MAX;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.stride", ck_scheduler_update, (&g, s, &b));
    b.depth.stride = 0; b.depth.format = CK_FORMAT_U8;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.format", ck_scheduler_update, (&g, s, &b));
    b.depth.format = CK_FORMAT_DEPTH_F32; b.depth.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.reserved", ck_scheduler_update, (&g, s, &b));
    b.depth.reserved = 0; dk.fx = NAN; b.depth_intrinsics = dk;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth_intrinsics", ck_scheduler_update, (&g, s, &b));
    dk = make_k(200, 16, 12);
    /* struct_size versioning of the frame. */
    b = f; b.struct_size = 16;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_scheduler_update, (&g, s, &b));
    CHECK(memcmp(&g, &untouched, sizeof g) == 0); /* nothing written on errors */
    memset(bigger, 0, sizeof bigger);
    b = f; b.struct_size = sizeof bigger;
    memcpy(bigger, &b, sizeof b);
    bigger[sizeof b + 1] = 7;
    ERR(CK_E_UNSUPPORTED, "frame", ck_scheduler_update, (&g, s, (const ck_scheduler_frame *)(void *)bigger));
    bigger[sizeof b + 1] = 0;
    CHECK_STATUS(ck_scheduler_update(&g, s, (const ck_scheduler_frame *)(void *)bigger), CK_OK);
    CHECK(g.reserved == 0 && g.blocked == 0 && g.band == CK_SPEED_BAND_SLOW && g.capture == 0 && g.captures == 0);
    /* 0.2's first 152-byte frame: the appended fields are not read, whatever the memory holds. */
    b = f; b.timestamp = 1.25; b.struct_size = 152;
    b.intrinsics.fx = NAN; b.tracking_reason = 99; b.mean_luma = NAN;
    CHECK_STATUS(ck_scheduler_update(&g, s, &b), CK_OK);
    /* A valid depth frame after the first; then timestamps must increase. */
    b = f; b.timestamp = 1.5; b.depth = (ck_depth_map){ depth, 16, 12, 0, CK_FORMAT_DEPTH_F32, 0u }; b.depth_intrinsics = dk;
    CHECK_STATUS(ck_scheduler_update(&g, s, &b), CK_OK);
    CHECK(g.median_depth == 1.0f);
    g = untouched;
    b.timestamp = 1.5;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    b.timestamp = 1.0;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_scheduler_update, (&g, s, &b));
    CHECK(memcmp(&g, &untouched, sizeof g) == 0);

    ERR(CK_E_INVALID_ARGUMENT, "scheduler", ck_scheduler_next_event, (&(ck_event){ 0 }, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "event_out", ck_scheduler_next_event, (NULL, s));
    ERR(CK_E_INVALID_ARGUMENT, "scheduler", ck_scheduler_reset, (NULL));
    ck_scheduler_free(s);
}

/** Issue 11's gates against values worked out by hand: a 0.5 m cube 2 m straight ahead whose
 *  near-face square is centred on the image's left edge (cx = 0) is exactly half in the frame;
 *  without depth the distance is the one to the box's nearest point (0.1 m to the front face;
 *  sqrt(11) m to a corner); a dark frame prompts "more light" without blocking; each
 *  limited-tracking reason prompts its own event. */
static ck_event run_gate(const ck_scheduler_options *o, ck_scheduler_frame base, int32_t code, int *count, int *captures,
                         int holds)
{
    ck_scheduler *s = NULL;
    ck_guidance g;
    ck_event last;
    int i;
    memset(&last, 0, sizeof last);
    *count = 0; *captures = 0;
    CHECK_STATUS(ck_scheduler_create(&s, o), CK_OK);
    for (i = 0; i <= 150; i++) {  /* 5 s at 30 Hz */
        base.timestamp = 10.0 + i / 30.0;
        CHECK_STATUS(ck_scheduler_update(&g, s, &base), CK_OK);
        if (code > 0 && code <= 21 && ((g.flags & (1u << (code - 1))) != 0) != holds) { CHECK(!"the condition's flag is wrong"); break; }
        *captures += g.capture;
        *count += drain_scheduler(s, code, &last);
    }
    ck_scheduler_free(s);
    return last;
}

static void test_scheduler_gates(void)
{
    ck_scheduler_options o = CK_SCHEDULER_OPTIONS_INIT;
    ck_box cube = make_box(0, 0, -2, 0.5, 0.5, 0.5, 0), slab = make_box(0, 0.3, 0, 0.4, 0.6, 0.8, 0);
    ck_mat4 identity = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
    ck_scheduler_frame f = frame_at(0, identity, &cube);
    ck_event e;
    int n, caps;
    int32_t r;

    o.box_view_angle_deg = 0;
    /* A quarter of the cube's 28.6 px square in the image: mostly outside, and small: blocks. */
    f.intrinsics = (ck_intrinsics){ 100.0f, 100.0f, 0.0f, 0.0f, 100u, 100u };
    e = run_gate(&o, f, CK_EVENT_OBJECT_OUT_OF_FRAME, &n, &caps, 1);
    CHECK(n == 3 && caps == 0 && fabs(e.value - 0.25) < 1e-4);
    /* Two thirds in ((14.3 + 5) / 28.6): partly out of frame is advice (since 0.2): prompted, captured. */
    f.intrinsics.cx = 5.0f; f.intrinsics.cy = 50.0f;
    e = run_gate(&o, f, CK_EVENT_OBJECT_OUT_OF_FRAME, &n, &caps, 1);
    CHECK(n == 3 && caps == 1 && e.value > 0.6f && e.value < 0.7f);
    /* A close view: 12 % of a 286 px square in, filling the whole image: advice. */
    f.intrinsics = (ck_intrinsics){ 1000.0f, 1000.0f, 0.0f, 0.0f, 100u, 100u };
    e = run_gate(&o, f, CK_EVENT_OBJECT_OUT_OF_FRAME, &n, &caps, 1);
    CHECK(n == 3 && caps == 1 && e.value > 0.1f && e.value < 0.15f);
    f.intrinsics = (ck_intrinsics){ 100.0f, 100.0f, 50.0f, 50.0f, 100u, 100u };  /* centred: all of it in the frame */
    e = run_gate(&o, f, CK_EVENT_OBJECT_OUT_OF_FRAME, &n, &caps, 0);
    CHECK(n == 0 && caps == 1);
    f.intrinsics.cx = 0.0f; o.min_box_in_frame = 0.45f;  /* half is enough */
    e = run_gate(&o, f, CK_EVENT_OBJECT_OUT_OF_FRAME, &n, &caps, 0);
    CHECK(n == 0 && caps == 1);

    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    f = frame_at(0, look_at_d(dv(0.05, 0.3, -0.5), dv(0, 0.3, 0)), &slab);
    e = run_gate(&o, f, CK_EVENT_TOO_CLOSE, &n, &caps, 1);
    CHECK(n == 3 && caps == 1 && fabs(e.value - 0.1) < 1e-5);  /* from the box: advice (since 0.2) */
    f = frame_at(0, look_at_d(dv(0.05, 0.35, 0.1), dv(0, 0.3, 0)), &slab);
    e = run_gate(&o, f, CK_EVENT_TOO_CLOSE, &n, &caps, 1);
    CHECK(n == 3 && caps == 0 && e.value == 0.0f);  /* inside the box: blocks */
    f = frame_at(0, look_at_d(dv(1.2, 1.6, -3.4), dv(0, 0.3, 0)), &slab);
    o.box_view_angle_deg = 0;
    e = run_gate(&o, f, CK_EVENT_TOO_FAR, &n, &caps, 1);
    CHECK(n == 3 && caps == 0 && fabs(e.value - sqrt(11.0)) < 1e-5);

    o = (ck_scheduler_options)CK_SCHEDULER_OPTIONS_INIT;
    f = frame_at(0, look_at_d(dv(0, 1.2, -2), dv(0, 0.3, 0)), &slab);
    f.mean_luma = 0.1f;
    e = run_gate(&o, f, CK_EVENT_LOW_LIGHT, &n, &caps, 1);
    CHECK(n == 3 && caps == 1 && e.value == 0.1f && strcmp(e.text, "More light needed") == 0);
    f.mean_luma = 0.2f;
    e = run_gate(&o, f, CK_EVENT_LOW_LIGHT, &n, &caps, 0);
    CHECK(n == 0 && caps == 1);

    f.mean_luma = -1.0f;
    f.tracking = CK_TRACKING_LIMITED;
    for (r = CK_TRACKING_REASON_INITIALIZING; r <= CK_TRACKING_REASON_RELOCALIZING; r++) {
        int generic;
        f.tracking_reason = r;
        e = run_gate(&o, f, 17 + r, &n, &caps, 1);
        CHECK(n == 3 && caps == 0 && e.code == 17 + r && e.text == ck_event_string(17 + r));
        run_gate(&o, f, CK_EVENT_TRACKING_LIMITED, &generic, &caps, 1);
        CHECK(generic == 0);  /* the reason's prompt replaces the generic one; its flag still holds */
    }
    f.tracking_reason = CK_TRACKING_REASON_NONE;
    run_gate(&o, f, CK_EVENT_TRACKING_LIMITED, &n, &caps, 1);
    CHECK(n == 3 && caps == 0);
}

/** A constant-speed orbit captures first at first_capture_delay, then every band interval (each
 *  within one frame); the speed matches the orbit's. */
static void test_scheduler_orbit(void)
{
    static const double speeds[3] = { 0.18, 0.33, 0.45 }, intervals[3] = { 3, 2, 1 };
    static const int32_t bands[3] = { CK_SPEED_BAND_SLOW, CK_SPEED_BAND_MEDIUM, CK_SPEED_BAND_FAST };
    ck_box box = make_box(0, 0.4, 0, 0.6, 0.6, 0.6, 0.3);
    int k;
    for (k = 0; k < 3; k++) {
        ck_scheduler *s = NULL;
        ck_guidance g;
        double radius = 2.0, last = -1, lap = 2 * PI * radius / speeds[k], t;
        int i, n = (int)((lap - 1) * 60), captures = 0, good_gaps = 1, good_speed = 1;
        CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
        for (i = 0; i <= n; i++) {
            ck_scheduler_frame f;
            t = i / 60.0;
            f = frame_at(50 + t, orbit(dv(0, 0.4, 0), radius, 0.8, t * speeds[k] / radius), &box);
            if (ck_scheduler_update(&g, s, &f) != CK_OK) { CHECK(0); break; }
            if (t > 1 && (g.band != bands[k] || fabs(g.speed - speeds[k]) > 0.01 * speeds[k] || g.interval != (float)intervals[k]))
                good_speed = 0;
            if (g.capture) {
                double want = last < 0 ? 3.0 : intervals[k];
                double gap = last < 0 ? t : t - last;
                if (gap < want - 1e-6 || gap > want + 1.0 / 60 + 1e-6) {
                    good_gaps = 0;
                    fprintf(stderr, "speed %g: capture gap %g, want %g\n", speeds[k], gap, want);
                }
                last = t;
                captures++;
                CHECK(g.captures == (uint32_t)captures && g.next_capture_in == 0);
            }
        }
        CHECK(good_gaps && good_speed && captures >= 8);
        CHECK(g.flags == (k == 0 ? CK_GUIDE_SPEED_UP : 0u));
        drain_scheduler(s, 0, NULL);
        ck_scheduler_free(s);
    }
}

/** Prompts, events, drift (then CK_E_STATE until a reset), and a few gates through the C API. */
static void test_scheduler_events(void)
{
    ck_scheduler *s = NULL;
    ck_guidance g;
    ck_event e;
    ck_box box = make_box(0, 0.4, 0, 0.6, 0.6, 0.6, 0.3);
    ck_mat4 still = look_at_d(dv(0, 1.2, -2), dv(0, 0.4, 0));
    ck_scheduler_frame f;
    int i, n;

    /* Standing still: "speed up" once it held 0.3 s within 0.75 s, then every 2 s (each can land
     * one 60 Hz frame later than the exact time: the frame where the time has passed). */
    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    CHECK_STATUS(ck_scheduler_next_event(&e, s), CK_END);
    for (i = 0; i <= 300; i++) {
        f = frame_at(i / 60.0, still, &box);
        CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    }
    n = 0;
    while (ck_scheduler_next_event(&e, s) == CK_OK) {
        CHECK(e.code == CK_EVENT_SPEED_UP && e.index == -1 && e.value == 0.0f);
        CHECK(e.timestamp > 0.3 + 2.0 * n - 1e-9 && e.timestamp < 0.3 + 2.0 * n + (n + 1) * 1.01 / 60.0);
        CHECK(strcmp(e.text, "Move a little faster") == 0);
        n++;
    }
    CHECK(n == 3);
    CHECK(g.captures == 1 && (g.flags & CK_GUIDE_SPEED_UP) && g.band == CK_SPEED_BAND_SLOW);

    /* Tracking limited blocks capture; its prompt fires after the delay. */
    CHECK_STATUS(ck_scheduler_reset(s), CK_OK);
    for (i = 0; i <= 300; i++) {
        f = frame_at(i / 60.0, still, &box);
        f.tracking = CK_TRACKING_LIMITED;
        CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
        if (g.capture) CHECK(0);
    }
    CHECK(g.captures == 0 && (g.flags & CK_GUIDE_TRACKING_LIMITED));
    CHECK(drain_scheduler(s, CK_EVENT_TRACKING_LIMITED, &e) == 3);

    /* Drift: a 10.5 m jump aborts; later updates return CK_E_STATE until ck_scheduler_reset. */
    CHECK_STATUS(ck_scheduler_reset(s), CK_OK);
    for (i = 0; i < 60; i++) {
        f = frame_at(i / 60.0, still, &box);
        CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    }
    f = frame_at(1.0, look_at_d(dv(10.5, 1.2, -2), dv(10.5, 0.4, 0)), NULL);
    CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    CHECK(g.flags == CK_GUIDE_DRIFT && g.capture == 0);
    CHECK(drain_scheduler(s, CK_EVENT_DRIFT, &e) == 1);
    CHECK_NEAR(e.value, 10.5, 1e-3);
    CHECK_NEAR(e.timestamp, 1.0, 0);
    f.timestamp = 1.1;
    ERR(CK_E_STATE, "reset", ck_scheduler_update, (&g, s, &f));
    CHECK_STATUS(ck_scheduler_reset(s), CK_OK);
    CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    CHECK(g.flags != CK_GUIDE_DRIFT);

    /* Blurry: min_sharpness 100, score 40; then a sharp frame. */
    {
        ck_scheduler_options o = CK_SCHEDULER_OPTIONS_INIT;
        ck_scheduler *b = NULL;
        o.min_sharpness = 100;
        CHECK_STATUS(ck_scheduler_create(&b, &o), CK_OK);
        for (i = 0; i <= 60; i++) {
            f = frame_at(i / 60.0, still, &box);
            f.sharpness = 40;
            CHECK_STATUS(ck_scheduler_update(&g, b, &f), CK_OK);
        }
        CHECK(g.flags & CK_GUIDE_BLURRY);
        CHECK(drain_scheduler(b, CK_EVENT_BLURRY, &e) == 1 && e.value == 40);
        f.timestamp += 1.0 / 60; f.sharpness = 500;
        CHECK_STATUS(ck_scheduler_update(&g, b, &f), CK_OK);
        CHECK(!(g.flags & CK_GUIDE_BLURRY));
        ck_scheduler_free(b);
    }
    ck_scheduler_free(s);
}

/** Speed of a straight walk at 0.3 m/s, and the depth gate with a padded depth map. */
static void test_scheduler_speed_and_depth(void)
{
    ck_scheduler *s = NULL;
    ck_guidance g;
    ck_event e;
    ck_intrinsics dk = make_k(200, 32, 24);
    float depth[24][40]; /* 40-float rows: 32 used + padding */
    int i, r, c;
    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    for (i = 0; i <= 180; i++) {
        double t = i / 60.0;
        ck_scheduler_frame f = frame_at(t, look_at_d(dv(0.3 * t, 1.5, 0), dv(0.3 * t, 1.0, -2)), NULL);
        CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    }
    CHECK_NEAR(g.speed, 0.3, 1e-3);
    CHECK(g.band == CK_SPEED_BAND_MEDIUM && g.interval == 2.0f);
    CHECK_NEAR(g.pitch, -atan2(0.5, 2.0), 1e-4);
    CHECK_NEAR(g.angular_speed, 0, 1e-3);
    ck_scheduler_free(s);

    /* Too close: 0.1 m in the centre window, with zeros and NaNs (ignored) and far padding. */
    for (r = 0; r < 24; r++)
        for (c = 0; c < 40; c++) depth[r][c] = c >= 32 ? 100.0f : (c + r) % 5 == 0 ? 0.0f : (c + r) % 7 == 0 ? NAN : 0.1f;
    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    for (i = 0; i <= 60; i++) {
        ck_scheduler_frame f = frame_at(i / 60.0, look_at_d(dv(0, 1.5, 0), dv(0, 1.0, -2)), NULL);
        f.depth = (ck_depth_map){ &depth[0][0], 32, 24, sizeof depth[0], CK_FORMAT_DEPTH_F32, 0u };
        f.depth_intrinsics = i % 2 ? dk : (ck_intrinsics){ 0, 0, 0, 0, 0, 0 }; /* all zero: the map's centre */
        CHECK_STATUS(ck_scheduler_update(&g, s, &f), CK_OK);
    }
    CHECK(g.median_depth == 0.1f && (g.flags & CK_GUIDE_TOO_CLOSE) && !(g.flags & CK_GUIDE_TOO_FAR));
    CHECK(drain_scheduler(s, CK_EVENT_TOO_CLOSE, &e) == 1 && e.value == 0.1f);
    ck_scheduler_free(s);
}

/* ============================================================================================
 * Coverage
 * ============================================================================================ */

static void test_coverage_create(void)
{
    ck_coverage_options init = CK_COVERAGE_OPTIONS_INIT, o;
    ck_coverage *c = NULL;
    ck_box box = make_box(0, 0.5, 0, 0.6, 1.0, 0.6, 0.3), bad = box;
    unsigned char bigger[sizeof(ck_coverage_options) + 12];

    memset(&o, 0xAB, sizeof o);
    CHECK_STATUS(ck_coverage_options_init(&o), CK_OK);
    CHECK(memcmp(&o, &init, sizeof o) == 0);
    CHECK(o.goal == 10 && o.face_mask == 0x37 && o.cells_per_side == 4 && o.grid_width == 64 && o.grid_height == 48 &&
          o.azimuth_bins == 24 && o.elevation_rings == 2 && o.elevation_min_deg == 0 && o.elevation_max_deg == 60);
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_coverage_options_init, (NULL));

    CHECK_STATUS(ck_coverage_create(&c, &box, NULL), CK_OK);
    CHECK(c != NULL);
    ck_coverage_free(c);
    ck_coverage_free(NULL);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_coverage_create, (NULL, &box, NULL));
    c = (ck_coverage *)&box;
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_coverage_create, (&c, NULL, NULL));
    CHECK(c == NULL);
    bad.size.y = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_coverage_create, (&c, &bad, NULL));
    bad = box; bad.size.x = 0;
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_coverage_create, (&c, &bad, NULL));
#define BAD_COVERAGE(field, value)                                                  \
    do {                                                                            \
        o = init; o.field = value;                                                  \
        ERR(CK_E_INVALID_ARGUMENT, #field, ck_coverage_create, (&c, &box, &o));     \
        CHECK(c == NULL);                                                           \
    } while (0)
    BAD_COVERAGE(goal, 0);
    BAD_COVERAGE(goal, 1000001);
    BAD_COVERAGE(face_mask, 0);
    BAD_COVERAGE(face_mask, 0x40);
    BAD_COVERAGE(cells_per_side, 0);
    BAD_COVERAGE(cells_per_side, 65);
    BAD_COVERAGE(grid_width, 0);
    BAD_COVERAGE(grid_width, 1025);
    BAD_COVERAGE(grid_height, UINT32_MAX);
    BAD_COVERAGE(azimuth_bins, 0);
    BAD_COVERAGE(azimuth_bins, 361);
    BAD_COVERAGE(elevation_rings, 0);
    BAD_COVERAGE(elevation_rings, 91);
    BAD_COVERAGE(elevation_min_deg, NAN);
    BAD_COVERAGE(elevation_min_deg, -INFINITY);
    BAD_COVERAGE(elevation_min_deg, 90);
    BAD_COVERAGE(elevation_max_deg, INFINITY);
    BAD_COVERAGE(elevation_max_deg, NAN);
    BAD_COVERAGE(elevation_max_deg, -5);
#undef BAD_COVERAGE
    o = init; o.grid_width = 0; o.grid_height = 0; /* no cells: accepted */
    CHECK_STATUS(ck_coverage_create(&c, &box, &o), CK_OK);
    ck_coverage_free(c);
    o = init; o.struct_size = 4;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_coverage_create, (&c, &box, &o));
    memset(bigger, 0, sizeof bigger);
    o = init; o.struct_size = sizeof bigger;
    memcpy(bigger, &o, sizeof o);
    CHECK_STATUS(ck_coverage_create(&c, &box, (const ck_coverage_options *)(void *)bigger), CK_OK);
    ck_coverage_free(c);
    bigger[sizeof o + 11] = 1;
    ERR(CK_E_UNSUPPORTED, "options", ck_coverage_create, (&c, &box, (const ck_coverage_options *)(void *)bigger));
}

/** Reference mode: the centre ray's face (independent slab test here), the goal, the colours,
 *  "side completed" exactly once at the 10th hit, counts across box edits, reset. */
static void test_coverage_reference(void)
{
    ck_box box = make_box(0.2, 0.5, -0.1, 0.6, 1.0, 0.6, 0.3), edited;
    ck_intrinsics k = make_k(1500, 1920, 1440);
    ck_coverage *c = NULL;
    ck_face_coverage fc;
    ck_coverage_summary sum;
    ck_event e;
    dvec centre = dv(0.2, 0.5, -0.1);
    int32_t face;
    int i;

    CHECK_STATUS(ck_coverage_create(&c, &box, NULL), CK_OK);
    for (i = 1; i <= 12; i++) {
        ck_mat4 pose = orbit(centre, 2.0, 0.3, 0.3 + 0.02 * (i % 3)); /* azimuth 0.3 = the box's yaw: its front */
        double p = (i < 10 ? i : 10) / 10.0;
        CHECK_STATUS(ck_coverage_add_view(&face, c, &pose, &k, (double)i), CK_OK);
        CHECK(face == CK_FACE_FRONT);
        CHECK_STATUS(ck_coverage_face(&fc, c, CK_FACE_FRONT), CK_OK);
        CHECK(fc.count == (uint32_t)i && fc.goal == 10 && fc.completed == (i >= 10) && fc.reserved == 0);
        CHECK_NEAR(fc.progress, p, 1e-6);
        CHECK_NEAR(fc.color[0], 1 - p, 1e-6); CHECK_NEAR(fc.color[1], 1, 0); CHECK_NEAR(fc.color[2], p, 1e-6);
        CHECK_NEAR(fc.opacity, 0.25 + 0.5 * p, 1e-6);
        CHECK(drain_coverage(c, CK_EVENT_SIDE_COMPLETED, &e) == (i == 10));
        if (i == 10) CHECK(e.index == CK_FACE_FRONT && e.value == 10 && e.timestamp == 10.0 &&
                           strcmp(e.text, "Front side completed") == 0);
    }
    CHECK_STATUS(ck_coverage_face(&fc, c, CK_FACE_BACK), CK_OK);
    CHECK(fc.count == 0 && fc.color[0] == 1 && fc.color[1] == 1 && fc.color[2] == 0 && fc.opacity == 0.25f);

    /* A view looking away: CK_MISS, CK_FACE_NONE, nothing counted. */
    {
        ck_mat4 away = look_at_d(dv(0.2, 0.8, -3), dv(0.2, 0.8, -5));
        CHECK_STATUS(ck_coverage_add_view(&face, c, &away, &k, 13), CK_MISS);
        CHECK(face == CK_FACE_NONE);
    }
    CHECK_STATUS(ck_coverage_summarize(&sum, c), CK_OK);
    CHECK(sum.views == 13 && sum.faces_completed == 1 && sum.all_completed == 0 && sum.reserved[0] == 0);
    CHECK_NEAR(sum.completion, 0.2, 1e-6); /* the front's progress 1 over five counted faces */

    /* Edit the box (move, turn, resize): counts stay, the new front keeps counting. */
    edited = box;
    CHECK_STATUS(ck_box_translate(&edited, (ck_vec3){ 0.5f, 0.0f, 0.3f }), CK_OK);
    CHECK_STATUS(ck_box_rotate(&edited, 0.8f), CK_OK);
    CHECK_STATUS(ck_coverage_set_box(c, &edited), CK_OK);
    CHECK_STATUS(ck_coverage_face(&fc, c, CK_FACE_FRONT), CK_OK);
    CHECK(fc.count == 12);
    {
        ck_mat4 pose = orbit(dv(edited.center.x, edited.center.y, edited.center.z), 2.0, 0.3, edited.yaw);
        CHECK_STATUS(ck_coverage_add_view(&face, c, &pose, &k, 14), CK_OK);
        CHECK(face == CK_FACE_FRONT);
        pose = orbit(dv(edited.center.x, edited.center.y, edited.center.z), 2.0, 0.3, edited.yaw + PI / 2);
        CHECK_STATUS(ck_coverage_add_view(&face, c, &pose, &k, 15), CK_OK);
        CHECK(face == CK_FACE_LEFT);
    }
    CHECK(drain_coverage(c, CK_EVENT_SIDE_COMPLETED, NULL) == 0); /* no second "front completed" */
    CHECK_STATUS(ck_coverage_face(&fc, c, CK_FACE_FRONT), CK_OK);
    CHECK(fc.count == 13);

    /* Errors. */
    {
        ck_mat4 pose = orbit(centre, 2.0, 0.3, 0.3), bad = pose;
        ck_intrinsics badk = k;
        ck_box badbox = box;
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_add_view, (&face, NULL, &pose, &k, 1));
        ERR(CK_E_INVALID_ARGUMENT, "face_out", ck_coverage_add_view, (NULL, c, &pose, &k, 1));
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_coverage_add_view, (&face, c, NULL, &k, 1));
        ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_coverage_add_view, (&face, c, &pose, NULL, 1));
        bad.m[5] = NAN;
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_coverage_add_view, (&face, c, &bad, &k, 1));
        bad = pose; bad.m[13] = INFINITY;
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_coverage_add_view, (&face, c, &bad, &k, 1));
        badk.fy = -1;
        ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_coverage_add_view, (&face, c, &pose, &badk, 1));
        badk = k; badk.cx = NAN;
        ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_coverage_add_view, (&face, c, &pose, &badk, 1));
        ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_coverage_add_view, (&face, c, &pose, &k, NAN));
        ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_coverage_add_view, (&face, c, &pose, &k, -INFINITY));
        CHECK_STATUS(ck_coverage_summarize(&sum, c), CK_OK);
        CHECK(sum.views == 15); /* errors counted nothing */
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_set_box, (NULL, &box));
        ERR(CK_E_INVALID_ARGUMENT, "box", ck_coverage_set_box, (c, NULL));
        badbox.yaw = INFINITY;
        ERR(CK_E_INVALID_ARGUMENT, "box", ck_coverage_set_box, (c, &badbox));
        ERR(CK_E_INVALID_ARGUMENT, "out", ck_coverage_face, (NULL, c, 0));
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_face, (&fc, NULL, 0));
        ERR(CK_E_INVALID_ARGUMENT, "face", ck_coverage_face, (&fc, c, 6));
        ERR(CK_E_INVALID_ARGUMENT, "face", ck_coverage_face, (&fc, c, CK_FACE_NONE));
        ERR(CK_E_INVALID_ARGUMENT, "out", ck_coverage_summarize, (NULL, c));
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_summarize, (&sum, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_reset, (NULL));
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_next_event, (&e, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "event_out", ck_coverage_next_event, (NULL, c));
    }

    /* Reset: zero counts, empty queue, and the side completes again. */
    CHECK_STATUS(ck_coverage_reset(c), CK_OK);
    CHECK_STATUS(ck_coverage_summarize(&sum, c), CK_OK);
    CHECK(sum.views == 0 && sum.faces_completed == 0 && sum.completion == 0 && sum.dial_fraction == 0 && sum.cell_fraction == 0);
    CHECK_STATUS(ck_coverage_next_event(&e, c), CK_END);
    for (i = 0; i < 10; i++) {
        ck_mat4 pose = orbit(dv(edited.center.x, edited.center.y, edited.center.z), 2.0, 0.3, edited.yaw);
        CHECK_STATUS(ck_coverage_add_view(&face, c, &pose, &k, i), CK_OK);
    }
    CHECK(drain_coverage(c, CK_EVENT_SIDE_COMPLETED, NULL) == 1);
    ck_coverage_free(c);
}

/** A guided orbit at two elevations: every side face reaches its goal, the dial fills >= 90 %,
 *  both rings complete; cells, dial buffers and the hint through the C API. */
static void test_coverage_orbit(void)
{
    ck_box box = make_box(0, 0.5, 0, 0.6, 1.0, 0.6, 0.0);
    ck_intrinsics k = make_k(1500, 1920, 1440);
    ck_coverage *c = NULL;
    ck_scheduler *s = NULL;
    ck_guidance g;
    ck_coverage_summary sum;
    ck_coverage_hint h;
    ck_face_coverage fc;
    ck_event e;
    uint32_t cells[6 * 16], dial[48], small[3];
    size_t count = 0;
    double t = 0, radius = 2, speed = 0.45, lap = 2 * PI * radius / speed;
    int ring, i, f, sides = 0, rings = 0;
    int32_t face;

    CHECK_STATUS(ck_coverage_create(&c, &box, NULL), CK_OK);
    CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
    for (ring = 0; ring < 2; ring++) {
        double height = radius * tan((ring == 0 ? 15 : 40) * DEG);
        for (i = 0; i <= (int)((lap + 4) * 60); i++) {
            ck_mat4 pose = orbit(dv(0, 0.5, 0), radius, height, i / 60.0 * speed / radius + 0.1 * ring);
            ck_scheduler_frame fr = frame_at(t, pose, &box);
            CHECK_STATUS(ck_scheduler_update(&g, s, &fr), CK_OK);
            if (g.capture) CHECK(ck_coverage_add_view(&face, c, &pose, &k, t) == CK_OK);
            while (ck_coverage_next_event(&e, c) == CK_OK) {
                if (e.code == CK_EVENT_SIDE_COMPLETED) {
                    static const char *const names[6] = { "Front", "Left", "Right", "Bottom", "Top", "Back" };
                    char want[64];
                    CHECK(e.index >= 0 && e.index < 6);
                    snprintf(want, sizeof want, "%s side completed", names[e.index >= 0 && e.index < 6 ? e.index : 0]);
                    CHECK(strcmp(e.text, want) == 0);
                    sides++;
                }
                if (e.code == CK_EVENT_RING_COMPLETED) { CHECK(e.index == rings); rings++; }
            }
            t += 1.0 / 60;
        }
    }
    CHECK(sides == 4 && rings == 2);
    CHECK_STATUS(ck_coverage_summarize(&sum, c), CK_OK);
    CHECK(sum.dial_fraction >= 0.9f && sum.faces_completed == 4);
    for (f = 0; f < 6; f++) {
        CHECK_STATUS(ck_coverage_face(&fc, c, f), CK_OK);
        if (f == CK_FACE_TOP || f == CK_FACE_BOTTOM) CHECK(fc.count == 0);
        else CHECK(fc.completed && fc.count >= 10 && fc.cell_fraction == 1.0f);
    }

    /* Cells and dial: too small -> CK_E_BUFFER_TOO_SMALL with the count; then OK. */
    CHECK_STATUS(ck_coverage_cells(small, 3, &count, c), CK_E_BUFFER_TOO_SMALL);
    CHECK(count == 96);
    count = 0;
    CHECK_STATUS(ck_coverage_cells(NULL, 0, &count, c), CK_E_BUFFER_TOO_SMALL);
    CHECK(count == 96);
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_coverage_cells, (NULL, 96, &count, c));
    CHECK_STATUS(ck_coverage_cells(cells, 96, NULL, c), CK_OK); /* written_out may be NULL (0.2) */
    ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_cells, (cells, 96, &count, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "capacity", ck_coverage_cells, (cells, SIZE_MAX, &count, c));
    {   /* A capacity of more than SIZE_MAX/2 bytes describes no buffer: refused, nothing written (the
         * fuzzer's 1 << 62 uint32_t made the library write past a 4096-entry buffer). The largest
         * possible capacity is accepted (only the 96 counts are written). */
        size_t lie[] = {(size_t)1 << 62, (SIZE_MAX / 2) / sizeof(uint32_t) + 1};
        size_t j;
        for (j = 0; j < 2; j++) {
            memset(cells, 0xA5, sizeof cells);
            count = 7;
            ERR(CK_E_INVALID_ARGUMENT, "SIZE_MAX/2 bytes", ck_coverage_cells, (cells, lie[j], &count, c));
            ERR(CK_E_INVALID_ARGUMENT, "SIZE_MAX/2 bytes", ck_coverage_dial, (cells, lie[j], &count, c));
            CHECK(count == 7 && cells[0] == 0xA5A5A5A5u && cells[95] == 0xA5A5A5A5u);
        }
        CHECK_STATUS(ck_coverage_cells(cells, (SIZE_MAX / 2) / sizeof(uint32_t), &count, c), CK_OK);
        CHECK(count == 96);
    }
    CHECK_STATUS(ck_coverage_cells(cells, 96, &count, c), CK_OK);
    CHECK(count == 96);
    for (i = 0; i < 96; i++) {
        int fi = i / 16;
        if (fi == CK_FACE_BOTTOM) CHECK(cells[i] == 0);
        else if (fi != CK_FACE_TOP) CHECK(cells[i] > 0);
    }
    CHECK_STATUS(ck_coverage_dial(small, 3, &count, c), CK_E_BUFFER_TOO_SMALL);
    CHECK(count == 48);
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_coverage_dial, (NULL, 48, &count, c));
    CHECK_STATUS(ck_coverage_dial(dial, 48, NULL, c), CK_OK); /* written_out may be NULL (0.2) */
    ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_dial, (dial, 48, &count, NULL));
    CHECK_STATUS(ck_coverage_dial(dial, 48, &count, c), CK_OK);
    {
        int filled = 0;
        for (i = 0; i < 48; i++) filled += dial[i] > 0;
        CHECK(count == 48 && filled == 48);
    }

    /* Hint: it aims at the side the views saw least (the sum over its cells of min(views, goal 10),
     * from ck_coverage_cells), at the bin of that side's sector (bins within 45 degrees of it)
     * with the fewest views, with a consistent angle. */
    {
        ck_mat4 pose = orbit(dv(0, 0.5, 0), radius, 0.5, 0.0);
        static const int side_face[4] = { 0, 1, 5, 2 };  /* azimuth 0, 90, 180, -90 degrees */
        uint64_t seen[4] = { 0, 0, 0, 0 }, least = UINT64_MAX;
        uint32_t fewest = UINT32_MAX;
        int side, j, target_side;
        CHECK_STATUS(ck_coverage_cells(cells, 96, &count, c), CK_OK);
        for (side = 0; side < 4; side++) {
            for (j = 0; j < 16; j++) seen[side] += cells[side_face[side] * 16 + j] < 10 ? cells[side_face[side] * 16 + j] : 10;
            if (seen[side] < least) least = seen[side];
        }
        CHECK_STATUS(ck_coverage_suggest(&h, c, &pose), CK_OK);
        target_side = ((int)lround(h.target_azimuth / (PI / 2)) % 4 + 4) % 4;
        CHECK(seen[target_side] == least);
        for (j = -2; j <= 2; j++) {  /* the sector: bins at -30 .. 30 degrees of the side */
            uint32_t v = dial[h.ring * 24 + ((target_side * 6 + j) % 24 + 24) % 24];
            if (v < fewest) fewest = v;
        }
        CHECK(h.target_count == fewest && dial[h.ring * 24 + h.bin] == fewest);
        CHECK_NEAR(h.target_azimuth, remainder(h.bin * 2 * PI / 24, 2 * PI), 1e-5);
        CHECK_NEAR(h.move_angle, -remainder(h.target_azimuth - h.camera_azimuth, 2 * PI), 1e-5);
        CHECK_NEAR(h.camera_azimuth, 0, 1e-5);
        CHECK_NEAR(h.camera_elevation, atan2(0.5, radius), 1e-4);
        CHECK(h.ring_delta == h.ring - 0);
        ERR(CK_E_INVALID_ARGUMENT, "out", ck_coverage_suggest, (NULL, c, &pose));
        ERR(CK_E_INVALID_ARGUMENT, "coverage", ck_coverage_suggest, (&h, NULL, &pose));
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_coverage_suggest, (&h, c, NULL));
        pose.m[0] = NAN;
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_coverage_suggest, (&h, c, &pose));
    }
    /* After a reset nothing is seen: ties go to the side nearest the camera (the front), the
     * camera's ring (0) and the bin nearest the side's azimuth (0): stay. */
    CHECK_STATUS(ck_coverage_reset(c), CK_OK);
    {
        ck_mat4 pose = orbit(dv(0, 0.5, 0), radius, 0.3, 0.0);
        CHECK_STATUS(ck_coverage_suggest(&h, c, &pose), CK_OK);
        CHECK(h.ring == 0 && h.bin == 0 && h.ring_delta == 0 && h.target_count == 0);
        CHECK_NEAR(h.move_angle, 0, 1e-6);
    }
    ck_scheduler_free(s);
    ck_coverage_free(c);
}

/* ============================================================================================
 * Sharpness
 * ============================================================================================ */

static double ref_sharpness(const uint8_t *img, int w, int h, int stride)
{
    double sum = 0, sq = 0, n = (double)(w - 2) * (h - 2), mean;
    int r, c;
    for (r = 1; r < h - 1; r++)
        for (c = 1; c < w - 1; c++) {
            double l = (double)img[(r - 1) * stride + c] + img[(r + 1) * stride + c] + img[r * stride + c - 1] +
                       img[r * stride + c + 1] - 4.0 * img[r * stride + c];
            sum += l;
            sq += l * l;
        }
    mean = sum / n;
    return sq / n - mean * mean;
}

static void test_sharpness(void)
{
    static uint8_t img[97 * 61];
    float score = -1;
    int i, trial;
    for (trial = 0; trial < 20; trial++) {
        int w = 3 + (int)(rnd32() % 90), h = 3 + (int)(rnd32() % 55), stride = w + (int)(rnd32() % 5);
        for (i = 0; i < stride * h; i++) img[i] = (uint8_t)(trial % 2 ? rnd32() : (uint32_t)(i % stride) * 7u);
        CHECK_STATUS(ck_sharpness_score(&score, &(ck_image){ img, (uint32_t)w, (uint32_t)h, (size_t)stride, CK_IMAGE_FORMAT_GRAY8, 0 }), CK_OK);
        CHECK_NEAR(score, ref_sharpness(img, w, h, stride), 1e-5 * (1 + ref_sharpness(img, w, h, stride)));
    }
    memset(img, 200, sizeof img);
    CHECK_STATUS(ck_sharpness_score(&score, &(ck_image){ img, 97, 61, 97, CK_IMAGE_FORMAT_GRAY8, 0 }), CK_OK);
    CHECK(score == 0);
    ERR(CK_E_INVALID_ARGUMENT, "score_out", ck_sharpness_score, (NULL, &(ck_image){ img, 10, 10, 10, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "luma", ck_sharpness_score, (&score, &(ck_image){ NULL, 10, 10, 10, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_sharpness_score, (&score, &(ck_image){ img, 2, 10, 10, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_sharpness_score, (&score, &(ck_image){ img, 10, 2, 10, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_sharpness_score, (&score, &(ck_image){ img, 65537, 3, 65537, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_sharpness_score, (&score, &(ck_image){ img, 3, UINT32_MAX, 3, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_sharpness_score, (&score, &(ck_image){ img, 10, 10, 9, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_sharpness_score, (&score, &(ck_image){ img, 10, 10, SIZE_MAX, CK_IMAGE_FORMAT_GRAY8, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_sharpness_score, (&score, &(ck_image){ img, 10, 10, SIZE_MAX / 2, CK_IMAGE_FORMAT_GRAY8, 0 }));
    CHECK(score == 0); /* not written on errors */
}

int main(void)
{
    test_event_strings();
    test_scheduler_options();
    test_scheduler_create();
    test_scheduler_frame_init();
    test_scheduler_update_arguments();
    test_scheduler_orbit();
    test_scheduler_events();
    test_scheduler_speed_and_depth();
    test_scheduler_gates();
    test_coverage_create();
    test_coverage_reference();
    test_coverage_orbit();
    test_sharpness();

    return CHECK_SUMMARY();
}
