/*
 * test_dataset.c — the C API test of ck_dataset.h (docs/DESIGN.md#tests): the dataset folder
 * (ck_dataset_*) and the per-frame capture session (ck_session_*).
 *
 * Uses only include/capturekit.h and the built libcapturekit.so. Covers every function of the
 * header: NULL for every pointer, bad struct_size, reserved fields and flags, the status codes each
 * function documents that a test can force (CK_E_STATE: non-empty folder, an existing image file,
 * an existing zip, use after cancel/finish; CK_E_NOT_FOUND: open of a folder without a dataset,
 * remove of an unknown id, a missing caller image; CK_E_INVALID_ARGUMENT: paths escaping the
 * folder; CK_E_BUFFER_TOO_SMALL with the needed size; CK_END from an empty event queue), and a
 * round trip: create, frames with RGB pixels and depth, caller-written images, remove, a second
 * pass, streams, events, finalize with CK_FINALIZE_ZIP, files and transforms.json checked
 * (frames counted by their "file_path" keys), reopen, cancel.
 *
 * Status codes not forced here (and why): CK_E_IO (needs a failing file system; the Swift tests
 * inject faults), CK_E_CORRUPT from ck_dataset_open only via a hand-damaged journal (forced below),
 * CK_E_NO_MEMORY (needs a failing allocator).
 *
 * Output: one line per failed check, then exactly one summary line "N passed, M failed".
 * Exit status 1 on a failure.
 */
#define _XOPEN_SOURCE 700

#include "capturekit.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

/* Streaming needs the scan's start time (since 0.2): options for datasets and sessions that stream. */
static const ck_dataset_options *streaming_dataset(void)
{
    static ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    o.start_time_unix = 1795000000.0;
    return &o;
}

static const ck_session_options *streaming_session(void)
{
    static ck_session_options o = CK_SESSION_OPTIONS_INIT;
    o.dataset = streaming_dataset();
    return &o;
}

#include "support.h"

/* ============================================================================================
 * ABI guard: struct sizes and offsets are frozen (C99: negative-array typedef); the Python
 * binding's structures are checked against the same numbers.
 * ============================================================================================ */

STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_dataset_options) == 120, dataset_options_size);
STATIC_ASSERT(sizeof(void *) != 8 || (offsetof(ck_dataset_options, start_time_unix) == 24 &&
              offsetof(ck_dataset_options, device_id) == 32 && offsetof(ck_dataset_options, scene_type) == 72 &&
              offsetof(ck_dataset_options, write_mode) == 96 && offsetof(ck_dataset_options, write_queue_mb) == 100 &&
              offsetof(ck_dataset_options, image_encoding) == 104 && offsetof(ck_dataset_options, jpeg_quality) == 108 &&
              offsetof(ck_dataset_options, image_downscales) == 112),
              dataset_options_offsets);
STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_frame_desc) == 200, frame_desc_size);
STATIC_ASSERT(sizeof(void *) != 8 || (offsetof(ck_frame_desc, timestamp) == 8 && offsetof(ck_frame_desc, pose) == 16 &&
              offsetof(ck_frame_desc, intrinsics) == 80 && offsetof(ck_frame_desc, image) == 104 &&
              offsetof(ck_frame_desc, image_path) == 136 && offsetof(ck_frame_desc, depth) == 144 &&
              offsetof(ck_frame_desc, sharpness) == 176 && offsetof(ck_frame_desc, image_chroma) == 184 &&
              offsetof(ck_frame_desc, image_chroma_stride) == 192),
              frame_desc_offsets);
STATIC_ASSERT(sizeof(void *) != 8 || (sizeof(ck_session_frame) == 272 && offsetof(ck_session_frame, image) == 104 &&
              offsetof(ck_session_frame, tracking_reason) == 232 && offsetof(ck_session_frame, mean_luma) == 236 &&
              offsetof(ck_session_frame, depth) == 136 && offsetof(ck_session_frame, confidence) == 168 &&
              offsetof(ck_session_frame, depth_intrinsics) == 200 && offsetof(ck_session_frame, sharpness) == 224 &&
              offsetof(ck_session_frame, image_chroma) == 240 && offsetof(ck_session_frame, image_chroma_stride) == 248 &&
              offsetof(ck_session_frame, image_release) == 256 && offsetof(ck_session_frame, image_release_user) == 264),
              session_frame_layout);
STATIC_ASSERT(sizeof(void *) != 8 || (sizeof(ck_session_options) == 72 && offsetof(ck_session_options, scheduler) == 8 &&
              offsetof(ck_session_options, storage_warning_minutes) == 32 && offsetof(ck_session_options, log_level) == 56 &&
              offsetof(ck_session_options, queue_full) == 64),
              session_options_layout);
STATIC_ASSERT(CK_FINALIZE_ZIP == 1u && CK_IMAGE_FORMAT_NONE == 0 && CK_LOG_LEVEL_DEBUG == 0 && CK_LOG_LEVEL_ERROR == 3, dataset_values);

/* ============================================================================================
 * Helpers: temporary folder, files, trees
 * ============================================================================================ */


static int file_exists(const char *path) { struct stat st; return stat(path, &st) == 0; }

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return NULL; }
    data = (char *)malloc((size_t)n + 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) { free(data); data = NULL; }
    if (data) data[n] = 0;
    fclose(f);
    return data;
}

static int count_substr(const char *text, const char *needle)
{
    int n = 0;
    const char *p = text;
    if (!text) return -1;
    while ((p = strstr(p, needle)) != NULL) { n++; p += strlen(needle); }
    return n;
}

/** Number of entries in a folder (without . and ..); -1 if it does not exist. */
static int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static ck_mat4 translation(float x, float y, float z)
{
    ck_mat4 m;
    memset(&m, 0, sizeof m);
    m.m[0] = m.m[5] = m.m[10] = m.m[15] = 1.0f;
    m.m[12] = x; m.m[13] = y; m.m[14] = z;
    return m;
}

static const ck_intrinsics K = {20.0f, 20.0f, 8.0f, 6.0f, 16, 12};
static uint8_t g_rgb[16 * 12 * 3];
static float g_depth[8 * 6];
static uint8_t g_conf[8 * 6];

static void fill_buffers(void)
{
    size_t i;
    for (i = 0; i < sizeof g_rgb; i++) g_rgb[i] = (uint8_t)(i * 7u);
    for (i = 0; i < 8 * 6; i++) { g_depth[i] = 0.5f + 0.01f * (float)i; g_conf[i] = (uint8_t)(i % 3); }
    g_depth[0] = 0.0f;  /* unknown */
}

/* The fixtures as 0.2 image and depth-map values. */
#define RGB_IMAGE(p) ((ck_image){ (p), 16, 12, 0, CK_IMAGE_FORMAT_RGB8, 0u })
#define DEPTH_MAP(p) ((ck_depth_map){ (p), 8, 6, 0, CK_FORMAT_DEPTH_F32, 0u })
#define CONF_MAP(p) ((ck_depth_map){ (p), 8, 6, 0, CK_FORMAT_U8, 0u })
#define NO_IMAGE ((ck_image){ NULL, 0u, 0u, 0, CK_IMAGE_FORMAT_NONE, 0u })
#define NO_MAP ((ck_depth_map){ NULL, 0u, 0u, 0, 0, 0u })

/** A frame with RGB pixels and depth, at x metres. */
static ck_frame_desc rgb_frame(float x, double t)
{
    ck_frame_desc d = CK_FRAME_DESC_INIT;
    d.timestamp = t;
    d.pose = translation(x, 0.5f, 2.0f);
    d.intrinsics = K;
    d.image = RGB_IMAGE(g_rgb);
    d.depth = DEPTH_MAP(g_depth);
    d.sharpness = 12.5f;
    return d;
}

static ck_box unit_box(float y)
{
    ck_box b;
    ck_vec3 c = {0.0f, 0.0f, 0.0f}, s = {0.5f, 0.5f, 0.5f};
    c.y = y;
    (void)ck_box_init(&b, c, s, 0.0f);
    return b;
}


/** Replaces the first `from` in a text file by `to`; 1 on success. */
static int replace_in_file(const char *path, const char *from, const char *to)
{
    char *text = read_text(path), *hit, *out;
    size_t n;
    int ok;
    if (!text || !(hit = strstr(text, from))) { free(text); return 0; }
    n = strlen(text) - strlen(from) + strlen(to);
    out = (char *)malloc(n + 1);
    if (!out) { free(text); return 0; }
    memcpy(out, text, (size_t)(hit - text));
    strcpy(out + (hit - text), to);
    strcat(out, hit + strlen(from));
    ok = write_file(path, out, n);
    free(text); free(out);
    return ok;
}

/** A dataset at `name` with one frame (id 0), closed again. */
static void one_frame_dataset(const char *name)
{
    ck_dataset *ds = NULL;
    ck_frame_desc d = rgb_frame(0.0f, 1.0);
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path(name), NULL), CK_OK);
    CHECK_STATUS(ck_dataset_add_frame(NULL, ds, &d), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
}

/* ============================================================================================
 * Options and descriptor initialisers
 * ============================================================================================ */

static void test_initialisers(void)
{
    ck_dataset_options o, oi = CK_DATASET_OPTIONS_INIT;
    ck_frame_desc d, di = CK_FRAME_DESC_INIT;
    ck_session_options so;
    ck_session_frame sf;

    memset(&o, 0xAB, sizeof o);
    CHECK_STATUS(ck_dataset_options_init(&o), CK_OK);
    CHECK(o.struct_size == sizeof o && o.depth_png_width == 0 && o.zlib_level == 0 && o.device_id == NULL &&
          o.start_time_unix == 0.0 && o.scene_type == NULL);
    CHECK(oi.struct_size == o.struct_size && oi.reserved == 0);
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_dataset_options_init, (NULL));

    memset(&d, 0xAB, sizeof d);
    CHECK_STATUS(ck_frame_desc_init(&d), CK_OK);
    CHECK(d.struct_size == sizeof d && d.image.data == NULL && d.image.format == CK_IMAGE_FORMAT_NONE && d.pose.m[0] == 1.0f && d.pose.m[15] == 1.0f &&
          d.pose.m[12] == 0.0f && d.image_path == NULL && d.depth.data == NULL && d.reserved2 == 0 && d.sharpness < 0.0f);
    CHECK(di.struct_size == d.struct_size && di.sharpness == d.sharpness && di.pose.m[5] == 1.0f);
    ERR(CK_E_INVALID_ARGUMENT, "desc_out", ck_frame_desc_init, (NULL));

    memset(&so, 0xAB, sizeof so);
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    CHECK(so.struct_size == sizeof so && so.preset == CK_PRESET_OBJECT_CAPTURE && so.stream_depth == 1 &&
          so.storage_warning_minutes == 10.0f && so.log == NULL && so.log_level == CK_LOG_LEVEL_INFO && so.reserved == 0 &&
          so.dataset == NULL && so.scheduler == NULL && so.coverage == NULL);
    {   /* the INIT macro equals the init function */
        ck_session_options m = CK_SESSION_OPTIONS_INIT;
        CHECK(m.struct_size == so.struct_size && m.preset == so.preset && m.scheduler == NULL && m.coverage == NULL &&
              m.dataset == NULL && m.storage_warning_minutes == so.storage_warning_minutes && m.stream_depth == so.stream_depth &&
              m.log == NULL && m.log_user == NULL && m.log_level == so.log_level && m.reserved == 0);
    }
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_ROOM_SCAN), CK_OK);
    CHECK(so.preset == CK_PRESET_ROOM_SCAN);
    ERR(CK_E_INVALID_ARGUMENT, "preset", ck_session_options_init, (&so, 99));
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_session_options_init, (NULL, CK_PRESET_OBJECT_CAPTURE));

    memset(&sf, 0xAB, sizeof sf);
    CHECK_STATUS(ck_session_frame_init(&sf), CK_OK);
    CHECK(sf.struct_size == sizeof sf && sf.tracking == CK_TRACKING_NORMAL && sf.pose.m[10] == 1.0f && sf.image.data == NULL &&
          sf.depth.data == NULL && sf.confidence.data == NULL && sf.image.format == CK_IMAGE_FORMAT_NONE &&
          sf.depth_intrinsics.width == 0 && sf.sharpness < 0.0f && sf.reserved == 0 &&
          sf.tracking_reason == CK_TRACKING_REASON_NONE && sf.mean_luma == -1.0f);
    ERR(CK_E_INVALID_ARGUMENT, "frame_out", ck_session_frame_init, (NULL));
}

/* ============================================================================================
 * Create / open arguments and states
 * ============================================================================================ */

static void test_create_open(void)
{
    ck_dataset *ds = NULL, *ds2 = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    unsigned char big[sizeof(ck_dataset_options) + 16];
    uint64_t n = 99;

    ERR(CK_E_INVALID_ARGUMENT, "dataset_out", ck_dataset_create, (NULL, tmp_path("c1"), NULL));
    ERR(CK_E_INVALID_ARGUMENT, "dir", ck_dataset_create, (&ds, NULL, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "dir", ck_dataset_create, (&ds, "", NULL));
    o.struct_size = 8;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.struct_size = (uint32_t)sizeof o; o.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "reserved", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.reserved = 0; o.zlib_level = 10;
    ERR(CK_E_INVALID_ARGUMENT, "zlib_level", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.zlib_level = 0; o.png_level = -1;
    ERR(CK_E_INVALID_ARGUMENT, "png_level", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.png_level = 0; o.depth_png_width = 10;
    ERR(CK_E_INVALID_ARGUMENT, "depth_png", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.depth_png_width = 0; o.start_time_unix = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "start_time_unix", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.start_time_unix = 0.0; o.device_id = "a/b";
    ERR(CK_E_INVALID_ARGUMENT, "device_id", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.device_id = "";
    ERR(CK_E_INVALID_ARGUMENT, "device_id", ck_dataset_create, (&ds, tmp_path("c1"), &o));
    o.device_id = NULL;
    /* A newer header's options: zero tail accepted, non-zero tail unsupported. */
    memset(big, 0, sizeof big);
    memcpy(big, &o, sizeof o);
    ((ck_dataset_options *)(void *)big)->struct_size = (uint32_t)sizeof big;
    big[sizeof o + 3] = 1;
    ERR(CK_E_UNSUPPORTED, "options", ck_dataset_create, (&ds, tmp_path("c1"), (const ck_dataset_options *)(void *)big));
    CHECK(ds == NULL);
    CHECK(!file_exists(tmp_path("c1/capturekit.jsonl")));
    big[sizeof o + 3] = 0;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("c1"), (const ck_dataset_options *)(void *)big), CK_OK);
    CHECK(ds != NULL && file_exists(tmp_path("c1/capturekit.jsonl")) && file_exists(tmp_path("c1/images")));
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* A non-empty folder: CK_E_STATE (also one holding only a stray file). */
    ds = NULL;
    ERR(CK_E_EXISTS, NULL, ck_dataset_create, (&ds, tmp_path("c1"), NULL));
    CHECK(ds == NULL);
    CHECK(mkdir(tmp_path("c2"), 0755) == 0 && write_file(tmp_path("c2/stray.txt"), "x", 1));
    ERR(CK_E_EXISTS, NULL, ck_dataset_create, (&ds, tmp_path("c2"), NULL));
    CHECK(file_exists(tmp_path("c2/stray.txt")));
    /* An existing empty folder is fine. */
    CHECK(mkdir(tmp_path("c3"), 0755) == 0);
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("c3/"), NULL), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    /* The parent is missing: CK_E_NOT_FOUND (0.1: CK_E_IO). */
    ds = NULL;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("missing/parent/x"), NULL), CK_E_NOT_FOUND);
    CHECK(ds == NULL);

    /* open */
    ERR(CK_E_INVALID_ARGUMENT, "dataset_out", ck_dataset_open, (NULL, tmp_path("c1")));
    ERR(CK_E_INVALID_ARGUMENT, "dir", ck_dataset_open, (&ds, NULL));
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_open, (&ds, tmp_path("c2")));
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_open, (&ds, tmp_path("nothing-here")));
    CHECK_STATUS(ck_dataset_open(&ds2, tmp_path("c1")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds2), CK_OK);
    CHECK(n == 0);
    CHECK_STATUS(ck_dataset_close(ds2), CK_OK);
    CHECK_STATUS(ck_dataset_close(NULL), CK_OK);
    /* A journal damaged before its last line: CK_E_CORRUPT; an empty one too. */
    CHECK(mkdir(tmp_path("c4"), 0755) == 0 &&
          write_file(tmp_path("c4/capturekit.jsonl"), "{\"op\":\"be\n{\"op\":\"remove\",\"id\":0}\n", 33));
    ERR(CK_E_CORRUPT, NULL, ck_dataset_open, (&ds, tmp_path("c4")));
    CHECK(write_file(tmp_path("c4/capturekit.jsonl"), "", 0));
    ERR(CK_E_CORRUPT, NULL, ck_dataset_open, (&ds, tmp_path("c4")));

    ERR(CK_E_INVALID_ARGUMENT, "count_out", ck_dataset_frame_count, (NULL, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_frame_count, (&n, NULL));
}

/* ============================================================================================
 * Frame arguments, path rules, image paths
 * ============================================================================================ */

static void test_frames_and_paths(void)
{
    ck_dataset *ds = NULL;
    ck_frame_desc d;
    uint64_t id = 77, n = 0;
    char buf[64];
    size_t needed = 0;
    static const char *bad_paths[] = {
        "/etc/passwd", "../outside.png", "images/../../x.png", "a//b.png", "images\\x.png", "./images/x.png", "images/",
        "", "a/./b.png", "..",
    };
    size_t i;

    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("f1"), NULL), CK_OK);

    /* next_image_path */
    CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, &needed, ds, ".png"), CK_OK);
    CHECK(strcmp(buf, "images/000000.png") == 0 && needed == strlen(buf) + 1);
    CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, &needed, ds, NULL), CK_OK);
    CHECK(strcmp(buf, "images/000000.png") == 0);
    CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, &needed, ds, ".jpg"), CK_OK);
    CHECK(strcmp(buf, "images/000000.jpg") == 0);
    needed = 0;
    memset(buf, 'Z', sizeof buf);
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_dataset_next_image_path, (buf, 5, &needed, ds, ".png"));
    CHECK(needed == 18 && buf[0] == 'Z');
    needed = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_dataset_next_image_path, (NULL, 0, &needed, ds, ".png"));
    CHECK(needed == 18);
    CHECK_STATUS(ck_dataset_next_image_path(buf, 18, &needed, ds, ".png"), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_dataset_next_image_path, (NULL, 64, &needed, ds, ".png"));
    CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, NULL, ds, ".png"), CK_OK); /* written_out may be NULL (0.2) */
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_next_image_path, (buf, sizeof buf, &needed, NULL, ".png"));
    ERR(CK_E_INVALID_ARGUMENT, "extension", ck_dataset_next_image_path, (buf, sizeof buf, &needed, ds, "png"));
    ERR(CK_E_INVALID_ARGUMENT, "extension", ck_dataset_next_image_path, (buf, sizeof buf, &needed, ds, "."));
    ERR(CK_E_INVALID_ARGUMENT, "extension", ck_dataset_next_image_path, (buf, sizeof buf, &needed, ds, "./png"));
    ERR(CK_E_INVALID_ARGUMENT, "extension", ck_dataset_next_image_path, (buf, sizeof buf, &needed, ds, ".p g"));

    /* add_frame arguments */
    d = rgb_frame(0.0f, 1.0);
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_add_frame, (&id, NULL, &d));
    ERR(CK_E_INVALID_ARGUMENT, "desc", ck_dataset_add_frame, (&id, ds, NULL));
    d.struct_size = 4;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "reserved", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.timestamp = INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.pose.m[0] = 2.0f;
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.intrinsics.width = 0;
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.image.data = NULL;
    ERR(CK_E_INVALID_ARGUMENT, "image.data", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.image.format = 42;
    ERR(CK_E_INVALID_ARGUMENT, "image.format", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.image.format = CK_IMAGE_FORMAT_GRAY16;
    ERR(CK_E_INVALID_ARGUMENT, "image.format", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.image.stride = 10;
    ERR(CK_E_INVALID_ARGUMENT, "image.stride", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.image.width = 15;  /* not the intrinsics' size */
    ERR(CK_E_INVALID_ARGUMENT, "desc.image", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.depth.width = 0;
    ERR(CK_E_INVALID_ARGUMENT, "desc.depth", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.depth.format = CK_FORMAT_U8;
    ERR(CK_E_INVALID_ARGUMENT, "desc.depth.format", ck_dataset_add_frame, (&id, ds, &d));
    d = rgb_frame(0.0f, 1.0); d.sharpness = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "sharpness", ck_dataset_add_frame, (&id, ds, &d));
    CHECK(!file_exists(tmp_path("f1/images/000000.png")) && !file_exists(tmp_path("f1/depth/000000.png")));
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 0);

    /* Caller images: every escaping path is rejected; a missing file is CK_E_NOT_FOUND. */
    CHECK(write_file(tmp_path("outside.png"), "png", 3));
    for (i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        d = rgb_frame(0.0f, 1.0);
        d.image = NO_IMAGE;
        d.image_path = bad_paths[i];
        CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_E_INVALID_ARGUMENT);
        if (strstr(ck_last_error_message(), "ck_dataset_add_frame") == NULL)
            CHECK(!"the message names ck_dataset_add_frame");
    }
    d = rgb_frame(0.0f, 1.0);
    d.image = NO_IMAGE;
    d.image_path = "images/caller.png";
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_add_frame, (&id, ds, &d));
    d.image_path = NULL;  /* = the next image path, also missing */
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_add_frame, (&id, ds, &d));
    CHECK(write_file(tmp_path("f1/images/caller.png"), "not really a png", 16));
    d.image_path = "images/caller.png";
    id = 77;
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 0);
    CHECK_STATUS(ck_dataset_flush(ds), CK_OK);  /* written in the background */
    CHECK(file_exists(tmp_path("f1/depth/000000.png")));
    /* NULL image_path = the name next_image_path gave. */
    CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, &needed, ds, ".png"), CK_OK);
    CHECK(strcmp(buf, "images/000001.png") == 0);
    CHECK(write_file(tmp_path("f1/images/000001.png"), "x", 1));
    d.image_path = NULL;
    CHECK_STATUS(ck_dataset_add_frame(NULL, ds, &d), CK_OK);
    /* The library is to write images/000002.png but it exists: CK_E_STATE, nothing overwritten. */
    CHECK(write_file(tmp_path("f1/images/000002.png"), "keep", 4));
    d = rgb_frame(0.1f, 2.0);
    ERR(CK_E_EXISTS, NULL, ck_dataset_add_frame, (&id, ds, &d));
    {
        char *t = read_text(tmp_path("f1/images/000002.png"));
        CHECK(t != NULL && strcmp(t, "keep") == 0);
        free(t);
    }
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 2);

    /* remove_frame */
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_remove_frame, (NULL, 0));
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_remove_frame, (ds, 12345));
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_remove_frame, (ds, UINT64_MAX));
    CHECK_STATUS(ck_dataset_remove_frame(ds, 0), CK_OK);
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_remove_frame, (ds, 0));
    /* The caller's image stays (the library did not write it); the library's depth PNG goes. */
    CHECK(file_exists(tmp_path("f1/images/caller.png")) && !file_exists(tmp_path("f1/depth/000000.png")));
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 1);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
}

/* ============================================================================================
 * Boxes, passes, streams, events, finalize arguments
 * ============================================================================================ */

static void test_box_stream_event_finalize_args(void)
{
    ck_dataset *ds = NULL;
    ck_box b = unit_box(0.25f), bad = b;
    uint32_t pass = 99;
    ck_mat4 pose = translation(0.0f, 0.5f, 2.0f);
    ck_intrinsics kd = {10.0f, 10.0f, 4.0f, 3.0f, 8, 6};
    ck_event ev;
    ck_session *s0 = NULL;

    /* Streaming without the scan's start time: refused, naming the option (nothing written). */
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("b0"), NULL), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "start_time_unix", ck_dataset_stream_frame, (ds, 0.0, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)));
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "start_time_unix", ck_session_create, (&s0, tmp_path("b0s"), NULL, NULL));
    CHECK(s0 == NULL && !file_exists(tmp_path("b0s")));
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("b1"), streaming_dataset()), CK_OK);
    bad.size.x = -1.0f;
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_set_box, (NULL, &b));
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_dataset_set_box, (ds, NULL));
    CHECK_STATUS(ck_dataset_set_box(ds, &bad), CK_E_INVALID_ARGUMENT);
    CHECK(!file_exists(tmp_path("b1/boundingbox.json")));
    CHECK_STATUS(ck_dataset_set_box(ds, &b), CK_OK);
    CHECK(file_exists(tmp_path("b1/boundingbox.json")));
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_begin_pass, (&pass, NULL, &b));
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_dataset_begin_pass, (&pass, ds, NULL));
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &bad), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &b), CK_OK);
    CHECK(pass == 1);
    CHECK_STATUS(ck_dataset_begin_pass(NULL, ds, &b), CK_OK);  /* pass 1 has a box: pass 2 */
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &b), CK_OK);
    CHECK(pass == 3);

    /* stream_frame */
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_stream_frame, (NULL, 0.0, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_dataset_stream_frame, (ds, 0.0, NULL, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)));
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_dataset_stream_frame, (ds, 0.0, &pose, NULL, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)));
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.0, &pose, &kd, NULL, NULL), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.0, &pose, &kd, &(ck_depth_map){ g_depth, 0, 6, 0, CK_FORMAT_DEPTH_F32, 0 }, &(ck_depth_map){ g_conf, 0, 6, 0, CK_FORMAT_U8, 0 }), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dataset_stream_frame(ds, NAN, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.5, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)), CK_OK);
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.6, &pose, &kd, &DEPTH_MAP(g_depth), NULL), CK_OK);
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.7, &pose, &kd, &(ck_depth_map){ g_depth, 4, 3, 0, CK_FORMAT_DEPTH_F32, 0 }, &(ck_depth_map){ g_conf, 4, 3, 0, CK_FORMAT_U8, 0 }), CK_E_INVALID_ARGUMENT);

    /* log_event */
    memset(&ev, 0, sizeof ev);
    ev.code = CK_EVENT_SLOW_DOWN; ev.index = -1; ev.timestamp = 0.5;
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_log_event, (NULL, &ev));
    ERR(CK_E_INVALID_ARGUMENT, "event", ck_dataset_log_event, (ds, NULL));
    ev.timestamp = NAN;
    CHECK_STATUS(ck_dataset_log_event(ds, &ev), CK_E_INVALID_ARGUMENT);
    ev.timestamp = 0.5;
    CHECK_STATUS(ck_dataset_log_event(ds, &ev), CK_OK);
    CHECK(file_exists(tmp_path("b1/events.jsonl")));

    /* finalize arguments; the zip never overwrites */
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_finalize, (NULL, 0, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_dataset_finalize, (ds, 2u, NULL));
    CHECK_STATUS(ck_dataset_finalize(ds, CK_FINALIZE_ZIP, ""), CK_E_INVALID_ARGUMENT);
    CHECK(write_file(tmp_path("taken.zip"), "zip", 3));
    ERR(CK_E_EXISTS, NULL, ck_dataset_finalize, (ds, CK_FINALIZE_ZIP, tmp_path("taken.zip")));
    CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
    CHECK(file_exists(tmp_path("b1/transforms.json")));
    /* After finalize the streams are not extended. */
    CHECK_STATUS(ck_dataset_stream_frame(ds, 0.8, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)), CK_E_STATE);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    CHECK_STATUS(ck_dataset_cancel(NULL), CK_OK);     /* as every _close/_free */
}

/* ============================================================================================
 * Round trip
 * ============================================================================================ */

static void test_round_trip(void)
{
    ck_dataset *ds = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_box b0 = unit_box(0.25f), b1 = unit_box(0.3f);
    ck_mat4 pose = translation(0.0f, 0.5f, 2.0f);
    ck_intrinsics kd = {10.0f, 10.0f, 4.0f, 3.0f, 8, 6};
    uint64_t ids[6], n = 0;
    uint32_t pass = 99;
    int i;
    char *t;
    char name[128];

    o.start_time_unix = 1795000000.0;
    o.device_id = "tester";
    o.device_name = "C test";
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("rt"), &o), CK_OK);
    CHECK_STATUS(ck_dataset_set_box(ds, &b0), CK_OK);
    for (i = 0; i < 3; i++) {
        ck_frame_desc d = rgb_frame(0.1f * (float)i, 0.1 * i);
        CHECK_STATUS(ck_dataset_stream_frame(ds, 0.1 * i, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)), CK_OK);
        CHECK_STATUS(ck_dataset_add_frame(&ids[i], ds, &d), CK_OK);
        CHECK(ids[i] == (uint64_t)i);
    }
    CHECK_STATUS(ck_dataset_flush(ds), CK_OK);
    CHECK(file_exists(tmp_path("rt/images/000000.png")) && file_exists(tmp_path("rt/depth/000002.png")));
    CHECK_STATUS(ck_dataset_remove_frame(ds, ids[1]), CK_OK);
    CHECK(!file_exists(tmp_path("rt/images/000001.png")) && !file_exists(tmp_path("rt/depth/000001.png")));
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &b1), CK_OK);
    CHECK(pass == 1);
    for (i = 3; i < 6; i++) {
        ck_frame_desc d = rgb_frame(0.1f * (float)i, 0.1 * i);
        d.depth = NO_MAP;  /* frames without depth too */
        if (i == 5) {
            static uint8_t rgba[(16 * 4 + 3) * 12];
            d.image = (ck_image){ rgba, 16, 12, 16 * 4 + 3, CK_IMAGE_FORMAT_RGBA8, 0u };
        }
        CHECK_STATUS(ck_dataset_add_frame(&ids[i], ds, &d), CK_OK);
        CHECK(ids[i] == (uint64_t)i);
    }
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 5);
    CHECK_STATUS(ck_dataset_finalize(ds, CK_FINALIZE_ZIP, NULL), CK_OK);
    CHECK(file_exists(tmp_path("rt.zip")));
    CHECK(file_exists(tmp_path("rt/transforms.json")) && file_exists(tmp_path("rt/boundingbox.json")));
    sprintf(name, "rt/%s", "images/000005.png");
    CHECK(file_exists(tmp_path(name)));
    t = read_text(tmp_path("rt/transforms.json"));
    CHECK(count_substr(t, "\"file_path\"") == 5);
    CHECK(count_substr(t, "\"depth_file_path\"") == 2);
    CHECK(t != NULL && strstr(t, "images/000001.png") == NULL && strstr(t, "images/000004.png") != NULL);
    free(t);
    t = read_text(tmp_path("rt/boundingbox.json"));
    CHECK(t != NULL && strstr(t, "pass") != NULL);
    free(t);
    {
        /* The MultiScan files carry the scan id: <unix>_<device>. */
        int found = 0;
        DIR *d = opendir(tmp_path("rt"));
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (strstr(e->d_name, "_tester") && len > 11 && !strcmp(e->d_name + len - 11, ".depth.zlib")) found |= 1;
            if (strstr(e->d_name, "_tester") && len > 16 && !strcmp(e->d_name + len - 16, ".confidence.zlib")) found |= 2;
            if (strstr(e->d_name, "_tester") && len > 6 && !strcmp(e->d_name + len - 6, ".jsonl")) found |= 4;
            if (strstr(e->d_name, "_tester") && len > 5 && !strcmp(e->d_name + len - 5, ".json")) found |= 8;
        }
        if (d) closedir(d);
        CHECK(found == 15);
    }
    /* Finalizing again with the same zip: CK_E_STATE (never overwrites). */
    ERR(CK_E_EXISTS, NULL, ck_dataset_finalize, (ds, CK_FINALIZE_ZIP, NULL));
    /* Adding after finalize is allowed. */
    {
        ck_frame_desc d = rgb_frame(0.7f, 0.7);
        CHECK_STATUS(ck_dataset_add_frame(&ids[0], ds, &d), CK_OK);
        CHECK(ids[0] == 6);
    }
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* Reopen: the journal gives the frames back; the finalized transforms.json is rewritten. */
    ds = NULL;
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("rt")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 6);
    {
        char buf[64];
        size_t needed;
        CHECK_STATUS(ck_dataset_next_image_path(buf, sizeof buf, &needed, ds, ".png"), CK_OK);
        CHECK(strcmp(buf, "images/000007.png") == 0);
    }
    CHECK_STATUS(ck_dataset_remove_frame(ds, 6), CK_OK);
    CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
    t = read_text(tmp_path("rt/transforms.json"));
    CHECK(count_substr(t, "\"file_path\"") == 5);
    free(t);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    /* A frame whose image was deleted by hand is dropped on reopen. */
    CHECK(unlink(tmp_path("rt/images/000003.png")) == 0);
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("rt")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 4);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    /* A torn last journal line is dropped. */
    {
        FILE *f = fopen(tmp_path("rt/capturekit.jsonl"), "ab");
        CHECK(f != NULL);
        if (f) { fputs("{\"op\":\"frame\",\"id\":9", f); fclose(f); }
        CHECK_STATUS(ck_dataset_open(&ds, tmp_path("rt")), CK_OK);
        CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
        CHECK(n == 4);
        CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    }
}

/* ============================================================================================
 * Cancel
 * ============================================================================================ */

static void test_cancel(void)
{
    ck_dataset *ds = NULL;
    ck_box b = unit_box(0.25f);
    ck_mat4 pose = translation(0.0f, 0.5f, 2.0f);
    ck_intrinsics kd = {10.0f, 10.0f, 4.0f, 3.0f, 8, 6};
    ck_event ev;
    int i;

    /* A folder the dataset created: gone afterwards. */
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("cx"), streaming_dataset()), CK_OK);
    CHECK_STATUS(ck_dataset_set_box(ds, &b), CK_OK);
    memset(&ev, 0, sizeof ev);
    ev.code = CK_EVENT_SLOW_DOWN; ev.index = -1;
    CHECK_STATUS(ck_dataset_log_event(ds, &ev), CK_OK);
    for (i = 0; i < 3; i++) {
        ck_frame_desc d = rgb_frame(0.1f * (float)i, 0.1 * i);
        CHECK_STATUS(ck_dataset_stream_frame(ds, 0.1 * i, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)), CK_OK);
        CHECK_STATUS(ck_dataset_add_frame(NULL, ds, &d), CK_OK);
    }
    CHECK_STATUS(ck_dataset_remove_frame(ds, 1), CK_OK);
    CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
    CHECK(dir_entries(tmp_path("cx")) == -1);

    /* A folder that existed before: left empty. */
    CHECK(mkdir(tmp_path("cy"), 0755) == 0);
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("cy"), streaming_dataset()), CK_OK);
    {
        ck_frame_desc d = rgb_frame(0.0f, 0.0);
        CHECK_STATUS(ck_dataset_add_frame(NULL, ds, &d), CK_OK);
        CHECK_STATUS(ck_dataset_stream_frame(ds, 0.0, &pose, &kd, &DEPTH_MAP(g_depth), NULL), CK_OK);
    }
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
    CHECK(dir_entries(tmp_path("cy")) == 0);

    /* A reopened dataset: cancel deletes what the dataset wrote, nothing of the caller's. */
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("cz"), NULL), CK_OK);
    {
        ck_frame_desc d = rgb_frame(0.0f, 0.0);
        CHECK_STATUS(ck_dataset_add_frame(NULL, ds, &d), CK_OK);
    }
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK(write_file(tmp_path("cz/notes.txt"), "mine", 4));
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("cz")), CK_OK);
    CHECK_STATUS(ck_dataset_cancel(ds), CK_OK);
    CHECK(file_exists(tmp_path("cz/notes.txt")));
    CHECK(!file_exists(tmp_path("cz/images/000000.png")) && !file_exists(tmp_path("cz/capturekit.jsonl")));
    remove_tree(tmp_path("cz"));
}

/* ============================================================================================
 * Session
 * ============================================================================================ */

static int g_log_calls;
static void log_fn(void *user, int32_t level, const char *message)
{
    (void)level;
    if (user == (void *)&g_log_calls && message != NULL) g_log_calls++;
}

/** Frame i of an orbit around the test box at ~0.3 m/s, 30 frames a second. */
static void session_frame(ck_session_frame *f, int i)
{
    double a = 0.008 * i;
    float eye[3], target[3] = {0.0f, 0.25f, 0.0f};
    eye[0] = (float)(1.3 * sin(a)); eye[1] = 0.8f; eye[2] = (float)(1.3 * cos(a));
    (void)ck_session_frame_init(f);
    f->timestamp = i / 30.0;
    f->pose = look_at(eye, target);
    f->intrinsics = K;
}

static void test_session(void)
{
    ck_session *s = NULL;
    ck_session_options o;
    ck_session_frame f;
    ck_session_result r;
    ck_event ev;
    ck_box b = unit_box(0.25f), bad = b;
    const ck_coverage *cov = NULL;
    ck_dataset *ds = NULL;
    uint64_t n = 0;
    int i, captured = 0, events = 0, popped = 0;
    ck_intrinsics kd = {10.0f, 10.0f, 4.0f, 3.0f, 8, 6};
    unsigned char big[sizeof(ck_session_options) + 8];
    ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
    ck_scheduler_options sso;
    ck_coverage_options cso;

    bad.size.y = 0.0f;
    CHECK_STATUS(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "session_out", ck_session_create, (NULL, tmp_path("s1"), &o, &b));
    ERR(CK_E_INVALID_ARGUMENT, "dir", ck_session_create, (&s, NULL, &o, &b));
    o.struct_size = 3;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    CHECK_STATUS(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    o.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "reserved", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    o.reserved = 0; o.storage_warning_minutes = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "storage_warning_minutes", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    o.storage_warning_minutes = 10.0f; o.log_level = 7;
    ERR(CK_E_INVALID_ARGUMENT, "log_level", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    o.log_level = CK_LOG_LEVEL_INFO; o.stream_depth = 2;
    ERR(CK_E_INVALID_ARGUMENT, "stream_depth", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    o.stream_depth = 1; o.preset = 7;
    ERR(CK_E_INVALID_ARGUMENT, "options.preset", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    o.preset = CK_PRESET_OBJECT_CAPTURE;
    CHECK_STATUS(ck_scheduler_options_preset(&sso, CK_PRESET_ROOM_SCAN), CK_OK);
    CHECK_STATUS(ck_coverage_options_init(&cso), CK_OK);
    dso.start_time_unix = 1795000000.0;
    o.dataset = &dso; o.scheduler = &sso; o.coverage = &cso;
    dso.struct_size = 0;
    ERR(CK_E_INVALID_ARGUMENT, "options.dataset", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    dso.struct_size = (uint32_t)sizeof dso; sso.struct_size = 0;
    ERR(CK_E_INVALID_ARGUMENT, "options.scheduler", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    sso.struct_size = (uint32_t)sizeof sso; cso.struct_size = 0;
    ERR(CK_E_INVALID_ARGUMENT, "options.coverage", ck_session_create, (&s, tmp_path("s1"), &o, &b));
    cso.struct_size = (uint32_t)sizeof cso;
    {   /* a 0.1 binary's 272-byte layout (options embedded by value) is refused, not misread */
        unsigned char old01[272];
        memset(old01, 0x11, sizeof old01);
        ((ck_session_options *)(void *)old01)->struct_size = 272;
        ERR(CK_E_UNSUPPORTED, "options", ck_session_create, (&s, tmp_path("s1"), (const ck_session_options *)(void *)old01, &b));
        CHECK(s == NULL);
    }
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_session_create, (&s, tmp_path("s1"), &o, &bad));
    memset(big, 0, sizeof big);
    memcpy(big, &o, sizeof o);
    ((ck_session_options *)(void *)big)->struct_size = (uint32_t)sizeof big;
    big[sizeof o + 1] = 1;
    ERR(CK_E_UNSUPPORTED, "options", ck_session_create, (&s, tmp_path("s1"), (const ck_session_options *)(void *)big, &b));
    CHECK(s == NULL && !file_exists(tmp_path("s1/capturekit.jsonl")));
    /* A non-empty folder: CK_E_STATE as ck_dataset_create. */
    ERR(CK_E_EXISTS, NULL, ck_session_create, (&s, tmp_path("rt"), &o, &b));

    /* Default options (with the start time streaming needs) and no box: coverage is CK_E_STATE until a box is set. */
    CHECK_STATUS(ck_session_create(&s, tmp_path("s0"), streaming_session(), NULL), CK_OK);
    ERR(CK_E_STATE, NULL, ck_session_coverage, (&cov, s));
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_set_box, (NULL, &b));
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_session_set_box, (s, NULL));
    CHECK_STATUS(ck_session_set_box(s, &bad), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_session_set_box(s, &b), CK_OK);
    CHECK_STATUS(ck_session_coverage(&cov, s), CK_OK);
    CHECK(cov != NULL);
    CHECK(file_exists(tmp_path("s0/boundingbox.json")));
    ck_session_close(s);
    ck_session_close(NULL);
    /* The unfinished dataset stays, resumable. */
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("s0")), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* A full session with the log callback: caller-written images (no pixels) and depth. */
    o.log = log_fn;
    o.log_user = &g_log_calls;
    o.log_level = CK_LOG_LEVEL_DEBUG;
    dso.device_id = "sess";
    CHECK_STATUS(ck_session_create(&s, tmp_path("s1"), &o, &b), CK_OK);
    CHECK(g_log_calls > 0);

    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_coverage, (&cov, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "coverage_out", ck_session_coverage, (NULL, s));
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_dataset, (&ds, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "dataset_out", ck_session_dataset, (NULL, s));
    CHECK_STATUS(ck_session_dataset(&ds, s), CK_OK);
    CHECK(ds != NULL);
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_next_event, (&ev, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "event_out", ck_session_next_event, (NULL, s));
    CHECK_STATUS(ck_session_next_event(&ev, s), CK_END);

    session_frame(&f, 0);
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_process, (&r, NULL, &f));
    ERR(CK_E_INVALID_ARGUMENT, "result_out", ck_session_process, (NULL, s, &f));
    ERR(CK_E_INVALID_ARGUMENT, "frame", ck_session_process, (&r, s, NULL));
    f.struct_size = 4;
    ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "reserved", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.depth = DEPTH_MAP(g_depth); f.depth.reserved = 1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.depth.reserved", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.tracking = 77;
    ERR(CK_E_INVALID_ARGUMENT, "tracking", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.pose.m[1] = 3.0f;
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.intrinsics.fx = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.depth = DEPTH_MAP(g_depth); f.depth_intrinsics = K;  /* intrinsics of another size */
    ERR(CK_E_INVALID_ARGUMENT, "depth_intrinsics", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.depth = DEPTH_MAP(g_depth); f.confidence = CONF_MAP(g_conf); f.confidence.width = 7;
    ERR(CK_E_INVALID_ARGUMENT, "confidence", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.image.format = CK_IMAGE_FORMAT_RGB8;  /* format without pixels */
    ERR(CK_E_INVALID_ARGUMENT, "frame.image", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.image = RGB_IMAGE(NULL);
    ERR(CK_E_INVALID_ARGUMENT, "image.data", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.sharpness = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "sharpness", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.tracking_reason = 5;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking_reason", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.tracking_reason = -1;
    ERR(CK_E_INVALID_ARGUMENT, "frame.tracking_reason", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.mean_luma = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.mean_luma = INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.mean_luma = -INFINITY;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_session_process, (&r, s, &f));
    session_frame(&f, 0); f.mean_luma = 2.0f;
    ERR(CK_E_INVALID_ARGUMENT, "frame.mean_luma", ck_session_process, (&r, s, &f));

    for (i = 0; i < 240; i++) {
        session_frame(&f, i);
        f.depth = DEPTH_MAP(g_depth);
        f.confidence = CONF_MAP(g_conf);
        f.depth_intrinsics = i % 2 ? kd : (ck_intrinsics){ 0, 0, 0, 0, 0, 0 }; /* all zero: derived */
        memset(&r, 0xAB, sizeof r);
        CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
        CHECK(r.coverage >= 0.0f && r.coverage <= 1.0f && r.reserved == 0);
        events += (int)r.events;
        if (r.captured) {
            char path[600];
            CHECK(strncmp(r.image_path, "images/", 7) == 0);
            snprintf(path, sizeof path, "s1/%s", r.image_path);
            CHECK(ck_png_write(tmp_path(path), &(ck_image){ g_rgb, 16, 12, 16 * 3, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0) == CK_OK);
            captured++;
        } else {
            CHECK(r.image_path[0] == 0);
        }
        while (ck_session_next_event(&ev, s) == CK_OK) { popped++; CHECK(ev.text != NULL); }
    }
    CHECK(captured > 0);
    CHECK(popped == events);
    CHECK_STATUS(ck_session_next_event(&ev, s), CK_END);
    /* Session frames with pixels: the library writes the PNG and reports the id. */
    {
        int got = 0;
        for (i = 240; i < 480 && !got; i++) {
            session_frame(&f, i);
            f.image = RGB_IMAGE(g_rgb);
            CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
            if (r.captured) {
                got = 1;
                captured++;
                CHECK(r.image_path[0] == 0 && r.frame_id != UINT64_MAX);
            }
            while (ck_session_next_event(&ev, s) == CK_OK) {}
        }
        CHECK(got);
    }
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_session_finish, (s, 4u, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_finish, (NULL, 0, NULL));
    CHECK_STATUS(ck_session_finish(s, CK_FINALIZE_ZIP, tmp_path("s1-out.zip")), CK_OK);
    CHECK(file_exists(tmp_path("s1-out.zip")) && file_exists(tmp_path("s1/transforms.json")));
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == (uint64_t)captured);
    {
        char *t = read_text(tmp_path("s1/transforms.json"));
        CHECK(count_substr(t, "\"file_path\"") == captured);
        free(t);
    }
    /* Finished: process is CK_E_STATE. */
    session_frame(&f, 1000);
    ERR(CK_E_STATE, NULL, ck_session_process, (&r, s, &f));
    ERR(CK_E_STATE, "finished", ck_session_flush, (s));
    ck_session_close(s);
}

/* ============================================================================================
 * The background writer: options, flush, a failed background write reported once
 * ============================================================================================ */

/** Replaces the folder `sub` of dataset `name` by a plain file (so the next write under it fails
 *  with ENOTDIR), or puts the folder back. */
static void break_folder(const char *name, const char *sub, int broken)
{
    char dir[400], saved[512];
    snprintf(dir, sizeof dir, "%s/%s/%s", g_dir, name, sub);
    sprintf(saved, "%s.saved", dir);
    if (broken) {
        CHECK(rename(dir, saved) == 0);
        CHECK(write_file(dir, "x", 1));
    } else {
        CHECK(unlink(dir) == 0);
        CHECK(rename(saved, dir) == 0);
    }
}

/** The session passes the new gates' inputs through: a dark gray image (value 20: mean luma
 *  20/255 measured by the library on every 4th pixel) prompts CK_EVENT_LOW_LIGHT with that value;
 *  the caller's mean_luma wins over the image; a limited-tracking reason prompts its own event. */
static void test_session_gates(void)
{
    static uint8_t gray[16 * 12];
    ck_session *s = NULL;
    ck_session_frame f;
    ck_session_result r;
    ck_event ev;
    ck_box b = unit_box(0.25f);
    int i, low = 0, dark_caller = 0, relocalizing = 0;
    float luma = 0.0f;

    memset(gray, 20, sizeof gray);
    CHECK_STATUS(ck_session_create(&s, tmp_path("s-gates"), streaming_session(), &b), CK_OK);
    for (i = 0; i < 90; i++) {
        session_frame(&f, i);
        f.image = (ck_image){ gray, 16, 12, 0, CK_IMAGE_FORMAT_GRAY8, 0u };
        if (i >= 30) f.mean_luma = 0.5f;     /* the caller's value: bright enough */
        if (i >= 60) { f.tracking = CK_TRACKING_LIMITED; f.tracking_reason = CK_TRACKING_REASON_RELOCALIZING; }
        CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
        CHECK(((r.guidance.flags & CK_GUIDE_LOW_LIGHT) != 0) == (i < 30));
        CHECK(((r.guidance.flags & CK_GUIDE_TRACKING_RELOCALIZING) != 0) == (i >= 60));
        while (ck_session_next_event(&ev, s) == CK_OK) {
            if (ev.code == CK_EVENT_LOW_LIGHT) { low++; luma = ev.value; if (i >= 30) dark_caller++; }
            if (ev.code == CK_EVENT_TRACKING_RELOCALIZING) relocalizing++;
        }
    }
    CHECK(low == 1 && dark_caller == 0 && fabsf(luma - 20.0f / 255.0f) < 1e-6f && relocalizing == 1);
    CHECK_STATUS(ck_session_close(s), CK_OK);
}

static void test_background_writer(void)
{
    ck_dataset *ds = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_session_options so;
    ck_session *s = NULL;
    ck_session_frame f;
    ck_session_result r;
    ck_frame_desc d = rgb_frame(0.0f, 1.0);
    ck_box b = unit_box(0.25f);
    uint64_t n = 0, id = 0;
    int i, captured = 0;

    /* Options. */
    CHECK(o.write_mode == CK_WRITE_MODE_BACKGROUND && o.write_queue_mb == 0u);
    o.write_mode = 2;
    ERR(CK_E_INVALID_ARGUMENT, "write_mode", ck_dataset_create, (&ds, tmp_path("bg0"), &o));
    o.write_mode = CK_WRITE_MODE_BACKGROUND; o.write_queue_mb = 65537u;
    ERR(CK_E_INVALID_ARGUMENT, "write_queue_mb", ck_dataset_create, (&ds, tmp_path("bg0"), &o));
    CHECK(!file_exists(tmp_path("bg0")));
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    CHECK(so.queue_full == CK_QUEUE_FULL_DROP);
    so.queue_full = 2;
    ERR(CK_E_INVALID_ARGUMENT, "queue_full", ck_session_create, (&s, tmp_path("bg0"), &so, &b));
    so.queue_full = CK_QUEUE_FULL_WAIT; so.reserved2 = 1u;
    ERR(CK_E_INVALID_ARGUMENT, "reserved2", ck_session_create, (&s, tmp_path("bg0"), &so, &b));
    ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_flush, (NULL));
    ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_flush, (NULL));

    /* A background write that fails: the add returned CK_OK (queued); the next call reports
     * CK_E_IO, the frame is not counted, nothing of it is on disk; every later call reports the
     * same CK_E_IO (sticky, even once the disk is fine) until the dataset is reopened. */
    o.write_queue_mb = 1u;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("bg1"), &o), CK_OK);
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK_STATUS(ck_dataset_flush(ds), CK_OK);
    CHECK(id == 0u && file_exists(tmp_path("bg1/images/000000.png")));
    break_folder("bg1", "images", 1);
    d = rgb_frame(0.1f, 2.0);
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 1u);
    ERR(CK_E_IO, "a background write failed", ck_dataset_flush, (ds));
    ERR(CK_E_IO, "a background write failed", ck_dataset_flush, (ds));  /* sticky */
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 1u);
    CHECK(!file_exists(tmp_path("bg1/depth/000001.png")));
    break_folder("bg1", "images", 0);
    d = rgb_frame(0.2f, 3.0);
    id = 99u;
    ERR(CK_E_IO, "a background write failed", ck_dataset_add_frame, (&id, ds, &d));  /* disk fine: still failed */
    CHECK(id == 99u);
    ERR(CK_E_IO, "a background write failed", ck_dataset_close, (ds));  /* freed anyway */
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("bg1")), CK_OK);  /* reopened: frames go on */
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);  /* close writes what is queued */
    /* The lost frame was never journaled: its id is free again, as after a crash. */
    CHECK(id == 1u && file_exists(tmp_path("bg1/images/000001.png")) && !file_exists(tmp_path("bg1/images/000002.png")));
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("bg1")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 2u);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* The same through a session: the capture is queued, its write fails, ck_session_flush says so,
     * and so does every later call; a resume goes on. */
    CHECK_STATUS(ck_session_options_init(&so, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    so.stream_depth = 0;
    CHECK_STATUS(ck_session_create(&s, tmp_path("bg2"), &so, &b), CK_OK);
    CHECK_STATUS(ck_session_flush(s), CK_OK);
    break_folder("bg2", "images", 1);
    for (i = 0; i < 600 && !captured; i++) {
        session_frame(&f, i);
        f.image = RGB_IMAGE(g_rgb);
        CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
        captured = r.captured;
    }
    CHECK(captured);
    ERR(CK_E_IO, "a background write failed", ck_session_flush, (s));
    break_folder("bg2", "images", 0);
    ERR(CK_E_IO, "a background write failed", ck_session_flush, (s));
    session_frame(&f, i);
    ERR(CK_E_IO, "a background write failed", ck_session_process, (&r, s, &f));
    ERR(CK_E_IO, "a background write failed", ck_session_close, (s));
    CHECK_STATUS(ck_session_resume(&s, tmp_path("bg2"), &so), CK_OK);
    CHECK_STATUS(ck_session_close(s), CK_OK);
}

/* ck_box_read: the boundingbox.json of a dataset with two passes, bit-exact. */
static void test_bounding_box_read(void)
{
    ck_dataset *ds = NULL;
    ck_box b0, b1, back;
    uint32_t pass = 99;
    char path[600];
    (void)ck_box_init(&b0, (ck_vec3){0.1f, 0.2f, -0.3f}, (ck_vec3){0.4f, 0.5f, 0.6f}, 0.7f);
    (void)ck_box_set_floor(&b0, -0.05f);
    (void)ck_box_init(&b1, (ck_vec3){1.0f, 1.0f, 1.0f}, (ck_vec3){0.3f, 0.3f, 0.3f}, -1.1f);
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("bbox"), NULL), CK_OK);
    CHECK_STATUS(ck_dataset_set_box(ds, &b0), CK_OK);
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &b1), CK_OK);
    CHECK(pass == 1);
    snprintf(path, sizeof path, "%s/boundingbox.json", tmp_path("bbox"));
    CHECK_STATUS(ck_box_read(&back, path, 0), CK_OK);
    CHECK(memcmp(&back, &b0, sizeof back) == 0);
    CHECK_STATUS(ck_box_read(&back, path, 1), CK_OK);
    CHECK(memcmp(&back, &b1, sizeof back) == 0);
    CHECK_STATUS(ck_box_read(&back, path, 2), CK_E_NOT_FOUND);
    ERR(CK_E_INVALID_ARGUMENT, "box_out", ck_box_read, (NULL, path, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_box_read, (&back, NULL, 0));
    snprintf(path, sizeof path, "%s/transforms.json", tmp_path("bbox"));
    CHECK_STATUS(ck_box_read(&back, path, 0), CK_E_NOT_FOUND);
    snprintf(path, sizeof path, "%s/capturekit.jsonl", tmp_path("bbox"));
    CHECK_STATUS(ck_box_read(&back, path, 0), CK_E_CORRUPT);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
}


/* ============================================================================================
 * Issue 8 regressions: each of these crashed the host, read freed memory or corrupted a dataset
 * before its fix.
 * ============================================================================================ */

/** Finding 2: a caller's stride whose image span overflows is an argument error, not a trap. */
static void test_overflowing_strides(void)
{
    ck_dataset *ds = NULL;
    ck_session *s = NULL;
    ck_session_frame f;
    ck_session_result r;
    ck_frame_desc d;
    uint64_t id = 5;
    float score = -1.0f;
    const size_t huge[] = {(size_t)1 << 62, SIZE_MAX, SIZE_MAX / 2, ((size_t)1 << 63) + 48};
    size_t i;

    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("ovf"), NULL), CK_OK);
    CHECK_STATUS(ck_session_create(&s, tmp_path("ovf-s"), streaming_session(), NULL), CK_OK);
    for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        d = rgb_frame(0.0f, 1.0);
        d.image.stride = huge[i];
        ERR(CK_E_INVALID_ARGUMENT, "image.stride", ck_dataset_add_frame, (&id, ds, &d));
        CHECK(id == 5);
        CHECK_STATUS(ck_session_frame_init(&f), CK_OK);
        f.intrinsics = K;
        f.image = RGB_IMAGE(g_rgb);
        f.image.stride = huge[i];
        ERR(CK_E_INVALID_ARGUMENT, "image.stride", ck_session_process, (&r, s, &f));
        ERR(CK_E_INVALID_ARGUMENT, "stride", ck_sharpness_score, (&score, &(ck_image){ g_rgb, 16, 12, huge[i], CK_IMAGE_FORMAT_GRAY8, 0 }));
        ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_write, (tmp_path("ovf.png"), &(ck_image){ g_rgb, 16, 12, huge[i], CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    }
    CHECK(score == -1.0f && !file_exists(tmp_path("ovf.png")));
    /* Two rows 2^60 bytes apart: no overflow, but no caller can own such a buffer (a fuzz find:
     * ck_png_encode read the second row from an unmapped address). */
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_write, (tmp_path("ovf.png"), &(ck_image){ g_rgb, 4, 2, (size_t)1 << 60, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_sharpness_score, (&score, &(ck_image){ g_rgb, 4, 3, (size_t)1 << 59, CK_IMAGE_FORMAT_GRAY8, 0 }));
    /* A depth PNG at a huge image size is refused before anything is allocated. */
    CHECK(write_file(tmp_path("ovf/images/big.png"), "x", 1));
    d = rgb_frame(0.0f, 1.0);
    d.image = NO_IMAGE;
    d.image_path = "images/big.png";
    d.intrinsics.width = 40000; d.intrinsics.height = 40000;
    d.intrinsics.cx = 20000.0f; d.intrinsics.cy = 20000.0f;
    ERR(CK_E_INVALID_ARGUMENT, "depth PNG", ck_dataset_add_frame, (&id, ds, &d));
    CHECK(dir_entries(tmp_path("ovf/images")) == 1);   /* only the caller's big.png */
    ck_session_close(s);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
}

/** Findings 3 and 5: a hostile journal gives CK_E_CORRUPT (never a trap, never a file deleted
 *  outside the dataset); the states a crash leaves are repaired on open. */
static void test_hostile_journal(void)
{
    static const struct { const char *from, *to; } bad[] = {
        {"\"op\":\"frame\",\"id\":0,", "\"op\":\"frame\",\"id\":9223372036854775807,"},
        {"\"op\":\"frame\",\"id\":0,", "\"op\":\"frame\",\"id\":9223372036854775806,"},
        {"\"op\":\"frame\",\"id\":0,", "\"op\":\"frame\",\"id\":-1,"},
        {"\"op\":\"frame\",\"id\":0,", "\"op\":\"frame\",\"id\":1099511627776,"},
        {"\"pass\":0", "\"pass\":2147483647"},
        {"\"pass\":0", "\"pass\":1048576"},
        {"\"file_path\":\"images/000000.png\"", "\"file_path\":\"../victim.json\""},
        {"\"device_id\":\"capturekit\"", "\"device_id\":\"../../victim\""},
        {"\"scan_id\":\"", "\"scan_id\":\"../../victim"},
        {"\"scan_id\":\"", "\"scan_id\":\"a/"},
        {"\"zlib_level\":0", "\"zlib_level\":99"},
    };
    ck_dataset *ds = NULL;
    ck_box b = unit_box(0.25f);
    ck_frame_desc d;
    uint64_t id = 0, n = 0;
    uint32_t pass = 0;
    char name[32], journal[256];
    size_t i;

    /* A file outside every dataset that a hostile journal once got deleted. */
    CHECK(write_file(tmp_path("victim.json"), "{}", 2));
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sprintf(name, "hj%u", (unsigned)i);
        one_frame_dataset(name);
        snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path(name));
        CHECK(replace_in_file(journal, bad[i].from, bad[i].to));
        ds = NULL;
        CHECK_STATUS(ck_dataset_open(&ds, tmp_path(name)), CK_E_CORRUPT);
        CHECK(ds == NULL);
        CHECK(file_exists(tmp_path("victim.json")));
    }

    /* A complete last line without its newline: kept, ended, and the next line starts cleanly. */
    one_frame_dataset("nl");
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("nl"));
    {
        char *text = read_text(journal);
        size_t len = text ? strlen(text) : 0;
        CHECK(len > 0 && text[len - 1] == '\n');
        if (len > 0) CHECK(write_file(journal, text, len - 1));
        free(text);
    }
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("nl")), CK_OK);
    d = rgb_frame(0.1f, 2.0);
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 1);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("nl")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 2);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* SIGKILL after an add wrote its files but before its journal line (and temporary files of
     * interrupted atomic writes): reopening removes the orphans and adding goes on. */
    one_frame_dataset("orph");
    CHECK(write_file(tmp_path("orph/images/000001.png"), "half", 4));
    CHECK(write_file(tmp_path("orph/depth/000001.png"), "half", 4));
    CHECK(write_file(tmp_path("orph/depth/000002.png.tmp-4242"), "half", 4));
    CHECK(write_file(tmp_path("orph/transforms.json.tmp-4242"), "{", 1));
    CHECK(write_file(tmp_path("orph/images/mine.jpg"), "keep", 4));     /* not a library name: kept */
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("orph")), CK_OK);
    CHECK(!file_exists(tmp_path("orph/images/000001.png")) && !file_exists(tmp_path("orph/depth/000001.png")));
    CHECK(!file_exists(tmp_path("orph/depth/000002.png.tmp-4242")) && !file_exists(tmp_path("orph/transforms.json.tmp-4242")));
    CHECK(file_exists(tmp_path("orph/images/000000.png")) && file_exists(tmp_path("orph/images/mine.jpg")));
    d = rgb_frame(0.1f, 2.0);
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 1);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* The same frame id journaled twice (a retried add): the later line is the frame. */
    one_frame_dataset("dup");
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("dup"));
    {
        char *text = read_text(journal), *line = text ? strstr(text, "{\"op\":\"frame\"") : NULL;
        FILE *f = fopen(journal, "ab");
        CHECK(line != NULL && f != NULL);
        if (line && f) fputs(line, f);
        if (f) fclose(f);
        free(text);
    }
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("dup")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 1);
    d = rgb_frame(0.1f, 2.0);
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 1);
    CHECK_STATUS(ck_dataset_begin_pass(&pass, ds, &b), CK_OK);
    CHECK(pass == 1);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* The last frame id and the last pass are reachable (from a journal) and then refused. */
    one_frame_dataset("lastid");
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("lastid"));
    CHECK(replace_in_file(journal, "\"op\":\"frame\",\"id\":0,", "\"op\":\"frame\",\"id\":1099511627775,"));
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("lastid")), CK_OK);
    d = rgb_frame(0.1f, 2.0);
    ERR(CK_E_STATE, "last frame id", ck_dataset_add_frame, (&id, ds, &d));
    CHECK(dir_entries(tmp_path("lastid/images")) == 1);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("lastpass"), NULL), CK_OK);
    CHECK_STATUS(ck_dataset_set_box(ds, &b), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("lastpass"));
    CHECK(replace_in_file(journal, "\"op\":\"box\",\"pass\":0", "\"op\":\"box\",\"pass\":1048575"));
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("lastpass")), CK_OK);
    pass = 7;
    ERR(CK_E_STATE, "last pass", ck_dataset_begin_pass, (&pass, ds, &b));
    CHECK(pass == 7);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* images/ replaced by a symbolic link to a folder outside: refused, nothing deleted there. */
    one_frame_dataset("sym");
    CHECK(mkdir(tmp_path("outside"), 0755) == 0);
    CHECK(write_file(tmp_path("outside/000000.png"), "x", 1));
    CHECK(rename(tmp_path("sym/images"), tmp_path("sym/images-real")) == 0);
    CHECK(symlink(tmp_path("outside"), tmp_path("sym/images")) == 0);
    CHECK_STATUS(ck_dataset_open(&ds, tmp_path("sym")), CK_E_CORRUPT);
    CHECK(file_exists(tmp_path("outside/000000.png")));
}

/** Finding 4: handles borrowed from a session refuse close and cancel and stay valid. */
static void test_borrowed_handles(void)
{
    ck_session *s = NULL;
    ck_dataset *ds = NULL;
    const ck_coverage *cov = NULL;
    ck_coverage_summary sum;
    ck_box b = unit_box(0.25f);
    uint64_t n = 9;

    CHECK_STATUS(ck_session_create(&s, tmp_path("borrow"), streaming_session(), &b), CK_OK);
    CHECK_STATUS(ck_session_dataset(&ds, s), CK_OK);
    ERR(CK_E_STATE, "borrowed", ck_dataset_close, (ds));
    ERR(CK_E_STATE, "borrowed", ck_dataset_cancel, (ds));
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n == 0);
    CHECK_STATUS(ck_session_coverage(&cov, s), CK_OK);
    ck_coverage_free((ck_coverage *)(uintptr_t)cov);
    CHECK(strstr(ck_last_error_message(), "borrowed") != NULL);
    CHECK_STATUS(ck_coverage_summarize(&sum, cov), CK_OK);
    CHECK_STATUS(ck_session_finish(s, 0, NULL), CK_OK);
    CHECK(file_exists(tmp_path("borrow/transforms.json")));
    ck_session_close(s);
}

/* Camera-native images (NV12 with its chroma plane, BGRA) and downscaled copies. */
static void test_camera_images(void)
{
    static uint8_t y[16 * 12], cbcr[8 * 6 * 2], bgra[16 * 12 * 4];
    ck_dataset *ds = NULL;
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_frame_desc d = CK_FRAME_DESC_INIT;
    uint64_t id = 9;
    size_t i;
    for (i = 0; i < sizeof y; i++) y[i] = (uint8_t)(30 + i);
    for (i = 0; i < sizeof cbcr; i++) cbcr[i] = 128;
    for (i = 0; i < sizeof bgra; i++) bgra[i] = (uint8_t)i;
    o.image_downscales = 3u;
    ERR(CK_E_INVALID_ARGUMENT, "image_downscales", ck_dataset_create, (&ds, tmp_path("cam"), &o));
    o.image_downscales = CK_DOWNSCALE_2; o.reserved3 = 1u;
    ERR(CK_E_INVALID_ARGUMENT, "reserved3", ck_dataset_create, (&ds, tmp_path("cam"), &o));
    o.reserved3 = 0u; o.write_mode = CK_WRITE_MODE_SYNC;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("cam"), &o), CK_OK);
    d.pose = translation(0.0f, 0.5f, 2.0f);
    d.intrinsics = K;
    d.image = (ck_image){ y, 16, 12, 0, CK_IMAGE_FORMAT_NV12_FULL, 0u };
    ERR(CK_E_INVALID_ARGUMENT, "image_chroma", ck_dataset_add_frame, (&id, ds, &d));
    d.image_chroma = cbcr; d.image_chroma_stride = 15;
    ERR(CK_E_INVALID_ARGUMENT, "image_chroma_stride", ck_dataset_add_frame, (&id, ds, &d));
    d.image_chroma_stride = 0;
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 0u && file_exists(tmp_path("cam/images/000000.png")) && file_exists(tmp_path("cam/images_2/000000.png")));
    d.image = RGB_IMAGE(g_rgb);
    ERR(CK_E_INVALID_ARGUMENT, "image_chroma", ck_dataset_add_frame, (&id, ds, &d));
    d.image_chroma = NULL;
    d.image = (ck_image){ bgra, 16, 12, 0, CK_IMAGE_FORMAT_BGRA8, 0u };
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK(id == 1u && file_exists(tmp_path("cam/images_2/000001.png")));
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
}

/* Reading a dataset back: read-only open, frames in order, paths, nothing written. */
static void test_readonly(void)
{
    ck_dataset *ds = NULL, *ro = NULL;
    ck_dataset_frame_info info;
    ck_frame_desc d;
    char path[64];
    size_t written = 0;
    uint64_t id = 0, n = 0;
    int i;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("ro"), NULL), CK_OK);
    for (i = 0; i < 3; i++) {
        d = rgb_frame(0.1f * (float)i, 1.0 + i);
        if (i == 1) d.depth = NO_MAP;
        CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    }
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);  /* not finalised: as a crash leaves it */
    ERR(CK_E_INVALID_ARGUMENT, "dataset_out", ck_dataset_open_readonly, (NULL, tmp_path("ro")));
    ERR(CK_E_NOT_FOUND, NULL, ck_dataset_open_readonly, (&ro, tmp_path("nothing-here")));
    CHECK_STATUS(ck_dataset_open_readonly(&ro, tmp_path("ro")), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ro), CK_OK);
    CHECK(n == 3u);
    for (i = 0; i < 3; i++) {
        CHECK_STATUS(ck_dataset_frame(&info, ro, (uint64_t)i), CK_OK);
        CHECK(info.id == (uint64_t)i && info.pass == 0u && info.timestamp == 1.0 + i && info.owns_image == 1);
        CHECK(info.has_depth == (i != 1) && info.stream_index == -1);
        CHECK_NEAR(info.pose.m[12], 0.1 * i, 1e-6);
        CHECK(info.intrinsics.width == 16u && info.sharpness == 12.5f);
        CHECK_STATUS(ck_dataset_frame_path(path, sizeof path, &written, ro, (uint64_t)i, CK_FRAME_PATH_IMAGE), CK_OK);
        CHECK(written == 18u && strncmp(path, "images/00000", 12) == 0);
    }
    ERR(CK_E_NOT_FOUND, "index", ck_dataset_frame, (&info, ro, 3u));
    ERR(CK_E_INVALID_ARGUMENT, "info_out", ck_dataset_frame, (NULL, ro, 0u));
    ERR(CK_E_NOT_FOUND, "no depth", ck_dataset_frame_path, (path, sizeof path, &written, ro, 1u, CK_FRAME_PATH_DEPTH));
    ERR(CK_E_INVALID_ARGUMENT, "which", ck_dataset_frame_path, (path, sizeof path, &written, ro, 0u, 2));
    written = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_dataset_frame_path, (path, 5, &written, ro, 0u, CK_FRAME_PATH_DEPTH));
    CHECK(written == 17u);
    /* Writing calls are refused; cancel deletes nothing. */
    d = rgb_frame(0.5f, 9.0);
    ERR(CK_E_STATE, "read-only", ck_dataset_add_frame, (&id, ro, &d));
    ERR(CK_E_STATE, "read-only", ck_dataset_finalize, (ro, 0u, NULL));
    ERR(CK_E_STATE, "read-only", ck_dataset_flush, (ro));
    ERR(CK_E_STATE, "read-only", ck_dataset_remove_frame, (ro, 0u));
    {
        ck_box b = unit_box(0.25f);
        uint32_t pass = 0;
        ck_event e = { CK_EVENT_SLOW_DOWN, -1, 1.0, 0.5f, 0u, NULL };
        ck_mat4 pose = translation(0.0f, 0.5f, 2.0f);
        ck_intrinsics kd = {10.0f, 10.0f, 4.0f, 3.0f, 8, 6};
        ERR(CK_E_STATE, "read-only", ck_dataset_set_box, (ro, &b));
        ERR(CK_E_STATE, "read-only", ck_dataset_begin_pass, (&pass, ro, &b));
        ERR(CK_E_STATE, "read-only", ck_dataset_log_event, (ro, &e));
        ERR(CK_E_STATE, "read-only", ck_dataset_stream_frame, (ro, 0.0, &pose, &kd, &DEPTH_MAP(g_depth), &CONF_MAP(g_conf)));
    }
    CHECK_STATUS(ck_dataset_close(ro), CK_OK);
    CHECK_STATUS(ck_dataset_open_readonly(&ro, tmp_path("ro")), CK_OK);
    ERR(CK_E_STATE, "read-only", ck_dataset_cancel, (ro));  /* refused, and the handle is freed */
    CHECK(file_exists(tmp_path("ro/images/000000.png")) && !file_exists(tmp_path("ro/transforms.json")));
    /* A damaged journal: CK_E_CORRUPT. */
    CHECK(replace_in_file(tmp_path("ro/capturekit.jsonl"), "\"op\":\"frame\"", "\"op\":\"frme\""));
    ERR(CK_E_CORRUPT, NULL, ck_dataset_open_readonly, (&ro, tmp_path("ro")));
}


/* ============================================================================================
 * Resuming a session after a crash (ck_session_resume)
 * ============================================================================================ */

static float g_rdepth[8 * 6];
static uint8_t g_rconf[8 * 6];

/** Frame i of the orbit with an image and depth/confidence of its own (depth in 1/32 m steps:
 *  exact in float16). */
static void resume_frame(ck_session_frame *f, int i)
{
    int k;
    session_frame(f, i);
    for (k = 0; k < 8 * 6; k++) {
        g_rdepth[k] = 0.5f + (float)((k + i) % 64) / 32.0f;
        g_rconf[k] = (uint8_t)((k + i) % 3);
    }
    f->image = RGB_IMAGE(g_rgb);
    f->depth = DEPTH_MAP(g_rdepth);
    f->confidence = CONF_MAP(g_rconf);
}

/** The stream frame `index` of `dir`'s scan decodes to frame i's depth and confidence. */
static int stream_frame_is(const char *depth_path, const char *conf_path, uint64_t index, int i)
{
    ck_zstream_reader *rd = NULL, *rc = NULL;
    float d[8 * 6];
    uint8_t c[8 * 6];
    ck_session_frame f;
    size_t depth_written = 0, conf_written = 0;
    int ok;
    resume_frame(&f, i);
    ok = ck_zstream_reader_open(&rd, depth_path, 8, 6, CK_FORMAT_DEPTH_F16) == CK_OK &&
         ck_zstream_reader_open(&rc, conf_path, 8, 6, CK_FORMAT_U8) == CK_OK &&
         ck_zstream_reader_read(d, sizeof d, &depth_written, rd, index, CK_FORMAT_DEPTH_F32) == CK_OK &&
         ck_zstream_reader_read(c, sizeof c, &conf_written, rc, index, CK_FORMAT_U8) == CK_OK &&
         depth_written == 8 * 6 * 4 && conf_written == 8 * 6 &&
         memcmp(d, g_rdepth, sizeof d) == 0 && memcmp(c, g_rconf, sizeof c) == 0;
    (void)ck_zstream_reader_close(rd);
    (void)ck_zstream_reader_close(rc);
    return ok;
}

/** As stream_frame_is, for the scan of dataset `dir` (start time 1700000000, device "capturekit"). */
static int stream_frame_is_path(const char *dir, uint64_t index, int i)
{
    char d[512], c[512];
    snprintf(d, sizeof d, "%s/20231114T221320+0000_capturekit.depth.zlib", dir);
    snprintf(c, sizeof c, "%s/20231114T221320+0000_capturekit.confidence.zlib", dir);
    return stream_frame_is(d, c, index, i);
}

static void test_session_resume(void)
{
    ck_session *s = NULL, *u = NULL;
    ck_session_options o;
    ck_session_frame f;
    ck_session_result r, ru;
    ck_box b = unit_box(0.25f);
    ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
    const ck_coverage *cs = NULL, *cu = NULL;
    ck_coverage_summary ss, su;
    ck_dataset *ds = NULL;
    ck_dataset_frame_info info;
    char depth_path[512], conf_path[512], journal[512];
    uint64_t n = 0, nu = 0, i;
    int k, fds[2], status = 0;
    pid_t pid;

    dso.start_time_unix = 1700000000.0;
    CHECK_STATUS(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE), CK_OK);
    o.dataset = &dso;

    /* Arguments. */
    ERR(CK_E_INVALID_ARGUMENT, "session_out", ck_session_resume, (NULL, tmp_path("rs"), &o));
    ERR(CK_E_INVALID_ARGUMENT, "dir", ck_session_resume, (&s, NULL, &o));
    ERR(CK_E_NOT_FOUND, NULL, ck_session_resume, (&s, tmp_path("rs-none"), &o));
    CHECK(s == NULL);

    /* A child captures and streams frames 0..149, flushes, says so and is SIGKILLed (the Python
     * test kills its children mid-capture; this one pins what survives so the twin can match). */
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        ck_session *c = NULL;
        char byte = 1;
        close(fds[0]);
        if (ck_session_create(&c, tmp_path("rs"), &o, &b) != CK_OK) _exit(2);
        for (k = 0;; k++) {
            resume_frame(&f, k);
            if (ck_session_process(&r, c, &f) != CK_OK) _exit(3);
            if (k == 149) {
                if (ck_session_flush(c) != CK_OK) _exit(4);
                if (write(fds[1], &byte, 1) != 1) _exit(5);
                for (;;) pause();  /* SIGKILLed here */
            }
        }
    }
    close(fds[1]);
    {
        char byte = 0;
        CHECK(read(fds[0], &byte, 1) == 1 && byte == 1);
    }
    kill(pid, SIGKILL);
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    close(fds[0]);

    /* Resume; the uninterrupted twin processes the same 150 frames. */
    CHECK_STATUS(ck_session_resume(&s, tmp_path("rs"), &o), CK_OK);
    CHECK_STATUS(ck_session_create(&u, tmp_path("rs-twin"), &o, &b), CK_OK);
    for (k = 0; k < 150; k++) { resume_frame(&f, k); CHECK_STATUS(ck_session_process(&ru, u, &f), CK_OK); }
    CHECK_STATUS(ck_session_dataset(&ds, s), CK_OK);
    CHECK_STATUS(ck_dataset_frame_count(&n, ds), CK_OK);
    CHECK(n >= 1);
    /* Coverage rebuilt from the journaled captures: as the twin's over the same frames. */
    CHECK_STATUS(ck_session_coverage(&cs, s), CK_OK);
    CHECK_STATUS(ck_session_coverage(&cu, u), CK_OK);
    CHECK_STATUS(ck_coverage_summarize(&ss, cs), CK_OK);
    CHECK_STATUS(ck_coverage_summarize(&su, cu), CK_OK);
    CHECK(ss.views == n);
    {
        ck_dataset *du = NULL;
        CHECK_STATUS(ck_session_dataset(&du, u), CK_OK);
        CHECK_STATUS(ck_dataset_frame_count(&nu, du), CK_OK);
        CHECK(nu == n);
        CHECK(memcmp(&ss, &su, sizeof ss) == 0);
        CHECK_STATUS(ck_dataset_frame(&info, ds, n - 1), CK_OK);
        CHECK(info.stream_index >= 0 && stream_frame_is_path(tmp_path("rs"), (uint64_t)info.stream_index,
                                                             (int)(info.timestamp * 30.0 + 0.5)));
    }
    /* Both go on with the same frames (after a gap) and decide alike. */
    for (k = 2000; k < 2300; k++) {
        resume_frame(&f, k);
        CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
        CHECK_STATUS(ck_session_process(&ru, u, &f), CK_OK);
        CHECK(r.captured == ru.captured && r.guidance.captures == ru.guidance.captures);
    }
    CHECK_STATUS(ck_session_finish(s, 0, NULL), CK_OK);
    CHECK_STATUS(ck_session_close(s), CK_OK);
    CHECK_STATUS(ck_session_close(u), CK_OK);

    /* Every stream frame is its own frame's, old (0..149 at least) and new (2000..2299). */
    snprintf(depth_path, sizeof depth_path, "%s/20231114T221320+0000_capturekit.depth.zlib", tmp_path("rs"));
    snprintf(conf_path, sizeof conf_path, "%s/20231114T221320+0000_capturekit.confidence.zlib", tmp_path("rs"));
    CHECK(file_exists(depth_path) && file_exists(conf_path));
    {
        ck_zstream_reader *rd = NULL;
        uint64_t count = 0;
        CHECK_STATUS(ck_zstream_reader_open(&rd, depth_path, 8, 6, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK_STATUS(ck_zstream_reader_frame_count(&count, rd), CK_OK);
        CHECK(count >= 450);
        CHECK_STATUS(ck_zstream_reader_close(rd), CK_OK);
        for (i = 0; i < 150; i++) CHECK(stream_frame_is(depth_path, conf_path, i, (int)i));
        for (i = 0; i < 300; i++) CHECK(stream_frame_is(depth_path, conf_path, count - 300 + i, 2000 + (int)i));
    }

    /* A journaled stream end past its file (and going back): CK_E_CORRUPT. */
    CHECK_STATUS(ck_session_create(&s, tmp_path("rs-bad"), &o, &b), CK_OK);
    for (k = 0; k < 70; k++) { resume_frame(&f, k); CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK); }
    CHECK_STATUS(ck_session_close(s), CK_OK);
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("rs-bad"));
    CHECK(replace_in_file(journal, "\"info_bytes\":", "\"info_bytes\":9"));
    s = NULL;
    ERR(CK_E_CORRUPT, NULL, ck_session_resume, (&s, tmp_path("rs-bad"), &o));
    CHECK(s == NULL);

    /* A 0.1 journal (no stream checkpoints) with streams: not continued. */
    CHECK_STATUS(ck_session_create(&s, tmp_path("rs-old"), &o, &b), CK_OK);
    for (k = 0; k < 30; k++) { resume_frame(&f, k); CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK); }
    CHECK_STATUS(ck_session_close(s), CK_OK);
    snprintf(journal, sizeof journal, "%s/capturekit.jsonl", tmp_path("rs-old"));
    CHECK(replace_in_file(journal, "\"version\":2", "\"version\":1"));
    {
        /* Drop the stream checkpoints: a 0.1 journal has none. */
        char *text = read_text(journal), *line;
        CHECK(text != NULL && strstr(text, "{\"op\":\"stream\"") != NULL);
        while (text && (line = strstr(text, "{\"op\":\"stream\"")) != NULL) {
            char *end = strchr(line, '\n');
            if (!end) break;
            memmove(line, end + 1, strlen(end + 1) + 1);
        }
        if (text) CHECK(write_file(journal, text, strlen(text)));
        free(text);
    }
    ERR(CK_E_UNSUPPORTED, "stream_depth", ck_session_resume, (&s, tmp_path("rs-old"), &o));
    o.stream_depth = 0;
    CHECK_STATUS(ck_session_resume(&s, tmp_path("rs-old"), &o), CK_OK);
    CHECK_STATUS(ck_session_close(s), CK_OK);
    o.stream_depth = 1;
}

int main(void)
{
    if (tmp_dir_create("ck-test-dataset") != 0) return 1;
    fill_buffers();

    test_initialisers();
    test_create_open();
    test_frames_and_paths();
    test_box_stream_event_finalize_args();
    test_round_trip();
    test_cancel();
    test_session();
    test_session_gates();
    test_bounding_box_read();
    test_overflowing_strides();
    test_hostile_journal();
    test_borrowed_handles();
    test_background_writer();
    test_camera_images();
    test_readonly();
    test_session_resume();

    if (g_failed == 0) remove_tree(g_dir);
    else fprintf(stderr, "note: files kept in %s\n", g_dir);
    return CHECK_SUMMARY();
}
