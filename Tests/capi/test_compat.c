/* A program built against the 0.1 option layouts, run against this library (issue 9): the option
 * structs that did not change since 0.1 must work exactly as a 0.1 caller filled them (struct_size
 * = the 0.1 sizeof), the one whose layout changed must be refused with CK_E_UNSUPPORTED, and a
 * "future" caller's larger struct is accepted while its extra bytes are zero. The frozen value
 * types' layouts are pinned at compile time. */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support.h"

/* Frozen value types: a layout change fails to compile. */
#define PIN(name, cond) typedef char pin_##name[(cond) ? 1 : -1]
PIN(vec3, sizeof(ck_vec3) == 12);
PIN(mat4, sizeof(ck_mat4) == 64);
PIN(box, sizeof(ck_box) == 36);
PIN(hit, sizeof(ck_hit) == 24);
PIN(guidance, sizeof(ck_guidance) == 48);
PIN(face_coverage, sizeof(ck_face_coverage) == 40);
PIN(coverage_summary, sizeof(ck_coverage_summary) == 32);
PIN(coverage_hint, sizeof(ck_coverage_hint) == 32);
PIN(depth_info, sizeof(ck_depth_info) == 32);
PIN(image, sizeof(void *) != 8 || sizeof(ck_image) == 32);
PIN(depth_map, sizeof(void *) != 8 || sizeof(ck_depth_map) == 32);
PIN(image_stride, offsetof(ck_image, stride) == offsetof(ck_depth_map, stride));

/* The 0.1 layouts, copied from the 0.1 headers (git show 822d08e~1:include/capturekit/...). */
typedef struct {
    uint32_t struct_size;
    float smoothing_window, speed_slow, speed_medium, speed_fast, interval_slow, interval_medium, interval_fast,
        first_capture_delay, max_angular_speed_deg, pitch_max_deg, pitch_min_deg, pitch_delay, drift_distance,
        drift_time, box_view_angle_deg, redundant_distance, redundant_angle_deg, min_sharpness, depth_min,
        depth_max, depth_center_fraction, prompt_delay, prompt_repeat, sideways_ratio, sideways_min_speed;
    uint32_t blocking_flags;
} ck01_scheduler_options; /* 108 bytes */

typedef struct {
    uint32_t struct_size, goal, face_mask, cells_per_side, grid_width, grid_height, azimuth_bins, elevation_rings;
    float elevation_min_deg, elevation_max_deg;
} ck01_coverage_options; /* 40 bytes */

typedef struct {
    uint32_t struct_size;
    int32_t use_floor;
    float floor, floor_margin, padding;
} ck01_fit_options; /* 20 bytes */

typedef struct {
    uint32_t struct_size, depth_png_width, depth_png_height;
    int32_t zlib_level, png_level;
    uint32_t reserved;
    double start_time_unix;
    const char *device_id, *device_name, *device_type, *user_name, *scene_description, *scene_type;
} ck01_dataset_options; /* 80 bytes */

typedef struct {
    uint32_t struct_size;
    int32_t preset;
    ck01_scheduler_options scheduler;
    ck01_coverage_options coverage;
    ck01_dataset_options dataset;
    float storage_warning_minutes;
    int32_t stream_depth;
    ck_log_fn log;
    void *log_user;
    int32_t log_level;
    uint32_t reserved;
} ck01_session_options; /* 272 bytes: the nested options by value */

/* The 0.1 defaults, as CK_*_OPTIONS_INIT of 0.1 spelled them. */
static ck01_scheduler_options scheduler01(void) {
    ck01_scheduler_options o = { (uint32_t)sizeof(ck01_scheduler_options), 0.5f, 0.254f, 0.406f, 0.508f, 3.0f, 2.0f,
                                 1.0f, 3.0f, 45.0f, 30.0f, -65.0f, 0.5f, 10.0f, 2.0f, 25.0f, 0.10f, 10.0f, 0.0f,
                                 0.2f, 3.0f, 0.2f, 0.5f, 2.0f, 0.0f, 0.2f, 0x0FFDu };
    return o;
}

static ck_mat4 camera_at(float x, float y, float z) {
    ck_mat4 m = { { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 } };
    m.m[12] = x; m.m[13] = y; m.m[14] = z;
    return m;
}

/* Frames until the first capture: the option a 0.1 caller set must take effect. */
static int first_capture_frame(const void *options) {
    ck_scheduler *s = NULL;
    ck_guidance g;
    int i, at = -1;
    if (ck_scheduler_create(&s, (const ck_scheduler_options *)options) != CK_OK) return -2;
    for (i = 0; i < 120 && at < 0; i++) {
        ck_scheduler_frame f = CK_SCHEDULER_FRAME_INIT;
        f.timestamp = i / 30.0;
        f.pose = camera_at(0.002f * (float)i, 0, 0); /* 0.06 m/s: the slow band */
        if (ck_scheduler_update(&g, s, &f) != CK_OK) { at = -3; break; }
        if (g.capture) at = i;
    }
    ck_scheduler_free(s);
    return at;
}

static void scheduler_options(void) {
    ck01_scheduler_options o = scheduler01();
    int defaults = first_capture_frame(&o);
    CHECK(defaults == 90); /* first_capture_delay 3 s at 30 fps */
    o.first_capture_delay = 1.0f;
    CHECK(first_capture_frame(&o) == 30);
    /* A newer caller's larger struct: accepted while the extra bytes are zero. */
    {
        struct { ck_scheduler_options o; uint32_t future[4]; } big;
        ck_scheduler *s = NULL;
        memset(&big, 0, sizeof big);
        CHECK_STATUS(ck_scheduler_options_init(&big.o), CK_OK);
        big.o.struct_size = (uint32_t)sizeof big;
        CHECK_STATUS(ck_scheduler_create(&s, &big.o), CK_OK);
        ck_scheduler_free(s);
        big.future[3] = 7;
        ERR(CK_E_UNSUPPORTED, NULL, ck_scheduler_create, (&s, &big.o));
        CHECK(s == NULL);
    }
}

static void coverage_options(void) {
    ck01_coverage_options o = { (uint32_t)sizeof(ck01_coverage_options), 1u, 0x37u, 4u, 64u, 48u, 24u, 2u, 0.0f, 60.0f };
    ck_box box;
    ck_coverage *c = NULL;
    ck_face_coverage fc;
    ck_intrinsics k = { 500, 500, 320, 240, 640, 480 };
    ck_mat4 cam = camera_at(0, 0, 3); /* looking down -z at the box: its +z (back) face */
    int32_t face = CK_FACE_NONE;
    CHECK_STATUS(ck_box_init(&box, (ck_vec3){ 0, 0, 0 }, (ck_vec3){ 1, 1, 1 }, 0), CK_OK);
    CHECK_STATUS(ck_coverage_create(&c, &box, (const ck_coverage_options *)(const void *)&o), CK_OK);
    CHECK_STATUS(ck_coverage_add_view(&face, c, &cam, &k, 0.0), CK_OK);
    CHECK(face == CK_FACE_BACK);
    CHECK_STATUS(ck_coverage_face(&fc, c, face), CK_OK);
    CHECK(fc.goal == 1 && fc.count == 1 && fc.completed == 1); /* the 0.1 caller's goal took effect */
    ck_coverage_free(c);
}

static void fit_options(void) {
    ck01_fit_options o = { (uint32_t)sizeof(ck01_fit_options), 0, 0.0f, 0.01f, 0.5f };
    ck_vec3 pts[8];
    ck_box b;
    int i;
    for (i = 0; i < 8; i++) pts[i] = (ck_vec3){ (i & 1) ? 1.0f : -1.0f, (i & 2) ? 1.0f : -1.0f, (i & 4) ? 1.0f : -1.0f };
    CHECK_STATUS(ck_box_fit_points(&b, pts, 8, (const ck_fit_options *)(const void *)&o), CK_OK);
    CHECK_NEAR(b.size.x, 3.0, 1e-4); /* 2 m of points + 0.5 m padding on each side */
    CHECK_NEAR(b.size.y, 3.0, 1e-4);
}

static void dataset_and_session_options(void) {
    char dir[] = "/tmp/ck-compat-XXXXXX", path[64];
    ck01_dataset_options d;
    ck01_session_options s;
    ck_dataset *ds = NULL;
    ck_session *session = NULL;
    CHECK(mkdtemp(dir) != NULL);
    memset(&d, 0, sizeof d);
    d.struct_size = (uint32_t)sizeof d;
    d.start_time_unix = 1700000000.0;
    d.device_id = "compat01";
    snprintf(path, sizeof path, "%s/ds", dir);
    CHECK_STATUS(ck_dataset_create(&ds, path, (const ck_dataset_options *)(const void *)&d), CK_OK);
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
    /* The 0.1 session options embedded the nested options by value: refused, nothing created. */
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    s.scheduler = scheduler01();
    s.dataset = d;
    s.storage_warning_minutes = 10.0f;
    s.stream_depth = 1;
    s.log_level = CK_LOG_LEVEL_INFO;
    snprintf(path, sizeof path, "%s/session", dir);
    ERR(CK_E_UNSUPPORTED, NULL, ck_session_create, (&session, path, (const ck_session_options *)(const void *)&s, NULL));
    CHECK(session == NULL && access(path, F_OK) != 0);
    CHECK(rmdir(dir) == 0);
}

/* The _init fillers (a binary built against an older, smaller layout of a struct that grew must
 * never be overrun): the unsized symbols write the first release's layout only, the _sized ones
 * exactly struct_size bytes, and a refused size writes nothing. Each struct's first-release size
 * is spelled here from the headers of the release that introduced it. The names in parentheses
 * reach the unsized symbols past the header's macros. */
#define FILLERS(X) \
    X(fit_options_init, ck_fit_options, 20) \
    X(dataset_options_init, ck_dataset_options, 80) \
    X(frame_desc_init, ck_frame_desc, 184) \
    X(session_frame_init, ck_session_frame, 232) \
    X(scheduler_options_init, ck_scheduler_options, 108) \
    X(scheduler_frame_init, ck_scheduler_frame, 152) \
    X(coverage_options_init, ck_coverage_options, 40) \
    X(surface_options_init, ck_surface_options, 44)
#define FILLER_FNS(name, type, first) \
    static ck_status u_##name(void *p) { return (ck_##name)((type *)p); } \
    static ck_status s_##name(void *p, size_t n) { return ck_##name##_sized((type *)p, n); }
FILLERS(FILLER_FNS)
static ck_status u_session_options_init(void *p) { return (ck_session_options_init)((ck_session_options *)p, CK_PRESET_ROOM_SCAN); }
static ck_status s_session_options_init(void *p, size_t n) { return ck_session_options_init_sized((ck_session_options *)p, n, CK_PRESET_ROOM_SCAN); }
static ck_status u_scheduler_options_preset(void *p) { return (ck_scheduler_options_preset)((ck_scheduler_options *)p, CK_PRESET_ROOM_SCAN); }
static ck_status s_scheduler_options_preset(void *p, size_t n) { return ck_scheduler_options_preset_sized((ck_scheduler_options *)p, n, CK_PRESET_ROOM_SCAN); }

typedef struct {
    const char *name;
    ck_status (*unsized)(void *);
    ck_status (*sized)(void *, size_t);
    size_t size, first;
} filler;

#define FILLER_ROW(name, type, first) { #name, u_##name, s_##name, sizeof(type), first },
static const filler fillers[] = {
    FILLERS(FILLER_ROW)
    { "session_options_init", u_session_options_init, s_session_options_init, sizeof(ck_session_options), 64 },
    { "scheduler_options_preset", u_scheduler_options_preset, s_scheduler_options_preset, sizeof(ck_scheduler_options), 108 },
};

enum { GUARD = 64, POISON = 0xAB };

/* The bytes of buf from `from` to `to` are all POISON. */
static int untouched(const unsigned char *buf, size_t from, size_t to) {
    size_t i;
    for (i = from; i < to; i++)
        if (buf[i] != POISON) return 0;
    return 1;
}

static uint32_t struct_size_of(const unsigned char *buf) {
    uint32_t v;
    memcpy(&v, buf, sizeof v);
    return v;
}

static void init_functions(void) {
    size_t i;
    for (i = 0; i < sizeof fillers / sizeof fillers[0]; i++) {
        const filler *f = &fillers[i];
        size_t cap = f->size + GUARD;
        unsigned char *buf = malloc(cap), *exact = malloc(f->first);
        int ok = 1;
        CHECK(buf != NULL && exact != NULL);
        if (buf == NULL || exact == NULL) { free(buf); free(exact); return; }
        /* A buffer of exactly the first release's size (ASan reports any byte past it). */
        memset(exact, POISON, f->first);
        ok &= f->unsized(exact) == CK_OK && struct_size_of(exact) == f->first;
        /* The unsized symbol: the first release's bytes, not one more. */
        memset(buf, POISON, cap);
        ok &= f->unsized(buf) == CK_OK && struct_size_of(buf) == f->first && untouched(buf, f->first, cap);
        /* Sized: exactly struct_size bytes, for this header's size and for the first release's. */
        memset(buf, POISON, cap);
        ok &= f->sized(buf, f->size) == CK_OK && struct_size_of(buf) == f->size && untouched(buf, f->size, cap);
        memset(buf, POISON, cap);
        ok &= f->sized(buf, f->first) == CK_OK && struct_size_of(buf) == f->first && untouched(buf, f->first, cap);
        /* Refused sizes write nothing. */
        memset(buf, POISON, cap);
        ok &= f->sized(buf, f->first - 1) == CK_E_INVALID_ARGUMENT && strstr(ck_last_error_message(), "struct_size") != NULL;
        ok &= f->sized(buf, 0) == CK_E_INVALID_ARGUMENT;
        ok &= f->sized(buf, (size_t)-1) == CK_E_INVALID_ARGUMENT;
        ok &= f->sized(buf, f->size + 8) == CK_E_UNSUPPORTED && strstr(ck_last_error_message(), "newer") != NULL;
        ok &= untouched(buf, 0, cap);
        ok &= f->sized(NULL, f->size) == CK_E_INVALID_ARGUMENT && f->unsized(NULL) == CK_E_INVALID_ARGUMENT;
        check_report(ok, __FILE__, __LINE__, "ck_%s: unsized / sized fill", f->name);
        free(buf);
        free(exact);
    }
    /* An unknown preset writes nothing through either symbol. */
    {
        unsigned char buf[sizeof(ck_session_options) + GUARD];
        memset(buf, POISON, sizeof buf);
        ERR(CK_E_INVALID_ARGUMENT, "preset", ck_session_options_init_sized, ((ck_session_options *)(void *)buf, sizeof(ck_session_options), 99));
        CHECK_STATUS((ck_session_options_init)((ck_session_options *)(void *)buf, 99), CK_E_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error_message(), "ck_session_options_init: preset 99") != NULL);
        ERR(CK_E_INVALID_ARGUMENT, "preset", ck_scheduler_options_preset_sized, ((ck_scheduler_options *)(void *)buf, sizeof(ck_scheduler_options), -1));
        CHECK_STATUS((ck_scheduler_options_preset)((ck_scheduler_options *)(void *)buf, -1), CK_E_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error_message(), "ck_scheduler_options_preset: preset -1") != NULL);
        CHECK(untouched(buf, 0, sizeof buf));
    }
    /* What the unsized symbols fill is a complete first-release struct: the library reads it with
     * the defaults for the later fields (the scheduler's first capture after its 3 s delay). */
    {
        ck_scheduler_options o;
        ck_scheduler_frame fr;
        ck_scheduler *s = NULL;
        ck_guidance g;
        CHECK_STATUS((ck_scheduler_options_init)(&o), CK_OK);
        CHECK(o.struct_size == 108);
        CHECK(first_capture_frame(&o) == 90);
        CHECK_STATUS((ck_scheduler_frame_init)(&fr), CK_OK);
        CHECK(fr.struct_size == 152);
        CHECK_STATUS(ck_scheduler_create(&s, NULL), CK_OK);
        fr.timestamp = 0.5;
        CHECK_STATUS(ck_scheduler_update(&g, s, &fr), CK_OK);
        ck_scheduler_free(s);
        /* Through the header's macro: this header's layout. */
        CHECK_STATUS(ck_scheduler_frame_init(&fr), CK_OK);
        CHECK(fr.struct_size == sizeof(ck_scheduler_frame) && fr.mean_luma == -1.0f);
    }
}

int main(void) {
    CHECK(CK_VERSION_COMPATIBLE(ck_version_number()));
    scheduler_options();
    coverage_options();
    fit_options();
    dataset_and_session_options();
    init_functions();
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
