/*
 * test_handover.c — images handed over to ck_session_process (issue 22): with
 * ck_session_frame.image_release set, the library reads the caller's pixels in place and calls
 * image_release(image_release_user) exactly once per call, on every path: a frame not captured,
 * a capture written by the background writer (on the writer's thread, once the image is written:
 * its bytes, read back with zlib by this file's own PNG reader, equal the input), a capture
 * dropped because the writer is busy, a call refused for a bad argument (and a NULL session), a
 * capture whose background write fails (the images folder replaced by a file), a capture still
 * queued when the session is closed, and a synchronous dataset (on the caller's thread, before
 * the call returns). A frame with the older struct_size (256) is lent, never released.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <zlib.h>

#include "support.h"

#define W 640
#define H 480

typedef struct lease {
    int calls;            /* image_release calls for this frame */
    pthread_t thread;     /* the thread of the last call */
    const void *self;     /* the user pointer received (must be this lease) */
} lease;

static void on_release(void *user)
{
    lease *l = (lease *)user;
    l->calls++;
    l->thread = pthread_self();
    l->self = user;
}

static uint8_t g_rgb[W * H * 3];

static void make_image(unsigned seed)
{
    size_t i;
    uint32_t x = seed * 2654435761u + 1u;
    for (i = 0; i < sizeof g_rgb; i++) {  /* noise: slow to deflate, so a level-9 PNG keeps the writer busy */
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        g_rgb[i] = (uint8_t)(x >> 24);
    }
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* An independent PNG reader for 8-bit RGB (colour type 2): the IDAT data inflated with zlib, the
 * five filters undone. Returns 1 when the file's pixels equal `want` (w x h x 3 bytes). */
static int png_equals(const char *path, const uint8_t *want, int w, int h)
{
    FILE *f = fopen(path, "rb");
    uint8_t *file, *idat, *raw, *out;
    long n;
    size_t pos = 8, nidat = 0, row = (size_t)w * 3;
    uLongf rawn = (uLongf)((row + 1) * (size_t)h);
    int ok = 0, y;
    size_t x;
    if (!f) return 0;
    fseek(f, 0, SEEK_END); n = ftell(f); fseek(f, 0, SEEK_SET);
    file = malloc((size_t)n); idat = malloc((size_t)n); raw = malloc(rawn); out = malloc(row * (size_t)h);
    if (!file || !idat || !raw || !out || fread(file, 1, (size_t)n, f) != (size_t)n) goto done;
    if (n < 33 || memcmp(file, "\x89PNG\r\n\x1a\n", 8) != 0 || (int)be32(file + 16) != w || (int)be32(file + 20) != h ||
        file[24] != 8 || file[25] != 2) goto done;
    while (pos + 12 <= (size_t)n) {
        uint32_t len = be32(file + pos);
        if (pos + 12 + len > (size_t)n) goto done;
        if (memcmp(file + pos + 4, "IDAT", 4) == 0) { memcpy(idat + nidat, file + pos + 8, len); nidat += len; }
        pos += 12 + len;
    }
    if (uncompress(raw, &rawn, idat, (uLong)nidat) != Z_OK || rawn != (row + 1) * (size_t)h) goto done;
    for (y = 0; y < h; y++) {
        const uint8_t *s = raw + (size_t)y * (row + 1) + 1;
        uint8_t *d = out + (size_t)y * row;
        const uint8_t *up = y > 0 ? d - row : NULL;
        for (x = 0; x < row; x++) {
            int a = x >= 3 ? d[x - 3] : 0, b = up ? up[x] : 0, c = (up && x >= 3) ? up[x - 3] : 0, p, pa, pb, pc, pred;
            switch (s[-1]) {
            case 0: pred = 0; break;
            case 1: pred = a; break;
            case 2: pred = b; break;
            case 3: pred = (a + b) / 2; break;
            case 4: p = a + b - c; pa = abs(p - a); pb = abs(p - b); pc = abs(p - c);
                    pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c); break;
            default: goto done;
            }
            d[x] = (uint8_t)(s[x] + pred);
        }
    }
    ok = memcmp(out, want, row * (size_t)h) == 0;
done:
    fclose(f); free(file); free(idat); free(raw); free(out);
    return ok;
}

/* A session capturing every frame (interval 0, nothing blocking), RGB given as pixels. */
static ck_session *open_session(const char *dir, int sync, int png_level)
{
    ck_session *s = NULL;
    ck_session_options o;
    ck_scheduler_options so;
    ck_dataset_options dso = CK_DATASET_OPTIONS_INIT;
    REQUIRE(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE));
    REQUIRE(ck_scheduler_options_preset(&so, CK_PRESET_OBJECT_CAPTURE));
    so.interval_slow = so.interval_medium = so.interval_fast = 0.01f;
    so.first_capture_delay = 0.0f;
    so.blocking_flags = 0;
    dso.start_time_unix = 1795000000.0;
    dso.png_level = png_level;
    dso.write_queue_mb = 1;  /* one 0.9 MB image at a time: a capture while the writer is busy is dropped */
    if (sync) dso.write_mode = CK_WRITE_MODE_SYNC;
    o.scheduler = &so; o.dataset = &dso;
    o.stream_depth = 0;
    remove_tree(dir);
    REQUIRE(ck_session_create(&s, dir, &o, NULL));
    return s;
}

static ck_session_frame frame_at(int i, lease *l)
{
    ck_session_frame f;
    float a = 0.2f * (float)i;  /* an orbit at 0.3 m/s, a new view every second */
    float eye[3] = {1.5f * sinf(a), 0.5f, 1.5f * cosf(a)}, target[3] = {0.0f, 0.0f, 0.0f};
    REQUIRE(ck_session_frame_init(&f));
    f.timestamp = 1.0 + i;  /* a second apart: each frame is a new view */
    f.pose = look_at(eye, target);
    f.intrinsics = (ck_intrinsics){500.0f, 500.0f, W / 2.0f, H / 2.0f, W, H};
    f.image = (ck_image){ g_rgb, W, H, 0, CK_IMAGE_FORMAT_RGB8, 0u };
    f.sharpness = 100.0f;
    f.mean_luma = 0.5f;
    f.image_release = on_release;
    f.image_release_user = l;
    return f;
}

static void test_written_and_dropped(void)
{
    char dir[300], path[400];
    lease l[6];
    ck_session_result r;
    ck_session_frame f;
    ck_session *s;
    int i, dropped = 0, queued = 0;
    pthread_t me = pthread_self();
    snprintf(dir, sizeof dir, "%s/bg", g_dir);
    memset(l, 0, sizeof l);
    make_image(1);
    s = open_session(dir, 0, 9);
    for (i = 0; i < 6; i++) {
        f = frame_at(i, &l[i]);
        CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
        CHECK(r.guidance.capture == 1);
        if (r.captured) queued++;
        else {
            /* dropped (the level-9 PNG of the first capture still encoding): released before the return, here */
            dropped++;
            CHECK(l[i].calls == 1 && pthread_equal(l[i].thread, me) && l[i].self == &l[i]);
        }
    }
    CHECK(queued >= 1);
    CHECK(dropped >= 1);
    CHECK_STATUS(ck_session_flush(s), CK_OK);
    for (i = 0; i < 6; i++) {
        CHECK(l[i].calls == 1);
        CHECK(l[i].self == &l[i]);
    }
    /* the first capture was queued and written on the writer's thread, from the caller's buffer */
    CHECK(!pthread_equal(l[0].thread, me));
    snprintf(path, sizeof path, "%s/images/000000.png", dir);
    CHECK(png_equals(path, g_rgb, W, H));
    CHECK_STATUS(ck_session_close(s), CK_OK);
    for (i = 0; i < 6; i++) CHECK(l[i].calls == 1);
    remove_tree(dir);
}

static void test_not_captured_errors_and_old_size(void)
{
    char dir[300];
    lease a, b, c, d, e;
    ck_session_result r;
    ck_session_frame f;
    ck_session *s;
    pthread_t me = pthread_self();
    snprintf(dir, sizeof dir, "%s/err", g_dir);
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b); memset(&c, 0, sizeof c); memset(&d, 0, sizeof d); memset(&e, 0, sizeof e);
    make_image(2);
    s = open_session(dir, 0, 0);
    /* a refused frame (reserved != 0): released before the return */
    f = frame_at(0, &a);
    f.reserved = 1;
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_E_INVALID_ARGUMENT);
    CHECK(a.calls == 1 && pthread_equal(a.thread, me) && a.self == &a);
    /* a NULL session, a NULL result_out: released too */
    f = frame_at(0, &b);
    CHECK_STATUS(ck_session_process(&r, NULL, &f), CK_E_INVALID_ARGUMENT);
    CHECK(b.calls == 1);
    f = frame_at(0, &e);
    CHECK_STATUS(ck_session_process(NULL, s, &f), CK_E_INVALID_ARGUMENT);
    CHECK(e.calls == 1);
    /* a frame that is not captured (too fast: 3 m away 10 ms after the last frame) */
    f = frame_at(0, NULL);
    f.image_release = NULL;
    REQUIRE(ck_session_process(&r, s, &f));  /* the first frame (captured, a lent image) */
    f = frame_at(0, &c);
    f.timestamp += 0.01;
    f.pose.m[12] += 3.0f;
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
    CHECK(r.captured == 0 && r.guidance.capture == 0);
    CHECK(c.calls == 1 && pthread_equal(c.thread, me));
    /* the older struct size (before image_release): lent, never released */
    f = frame_at(2, &d);
    f.struct_size = 256;
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
    CHECK_STATUS(ck_session_flush(s), CK_OK);
    CHECK(d.calls == 0);
    CHECK_STATUS(ck_session_close(s), CK_OK);
    CHECK(a.calls == 1 && b.calls == 1 && c.calls == 1 && d.calls == 0 && e.calls == 1);
    remove_tree(dir);
}

static void test_sync(void)
{
    char dir[300], path[400];
    lease a;
    ck_session_result r;
    ck_session_frame f;
    ck_session *s;
    snprintf(dir, sizeof dir, "%s/sync", g_dir);
    memset(&a, 0, sizeof a);
    make_image(3);
    s = open_session(dir, 1, 0);
    f = frame_at(0, &a);
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
    CHECK(r.captured == 1);
    CHECK(a.calls == 1 && pthread_equal(a.thread, pthread_self()));  /* written before the return */
    snprintf(path, sizeof path, "%s/images/000000.png", dir);
    CHECK(png_equals(path, g_rgb, W, H));
    CHECK_STATUS(ck_session_close(s), CK_OK);
    CHECK(a.calls == 1);
    remove_tree(dir);
}

static void test_failed_write_and_close(void)
{
    char dir[300], images[400];
    lease a, b, c;
    ck_session_result r;
    ck_session_frame f;
    ck_session *s;
    FILE *blocker;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b); memset(&c, 0, sizeof c);
    make_image(4);
    /* the background write fails: images/ is a file, so images/000000.png cannot be created */
    snprintf(dir, sizeof dir, "%s/fail", g_dir);
    s = open_session(dir, 0, 0);
    snprintf(images, sizeof images, "%s/images", dir);
    remove_tree(images);
    blocker = fopen(images, "w");
    CHECK(blocker != NULL);
    if (blocker) fclose(blocker);
    f = frame_at(0, &a);
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
    CHECK(r.captured == 1);  /* queued; the failure is reported by the flush, never OK */
    CHECK_STATUS(ck_session_flush(s), CK_E_IO);
    CHECK(a.calls == 1 && !pthread_equal(a.thread, pthread_self()) && a.self == &a);
    /* a failed dataset refuses the next frame: released before the return */
    f = frame_at(1, &b);
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_E_IO);
    CHECK(b.calls == 1);
    CHECK_STATUS(ck_session_close(s), CK_E_IO);
    remove_tree(dir);

    /* a capture still queued (a slow level-9 PNG) when the session is closed: released by then */
    snprintf(dir, sizeof dir, "%s/close", g_dir);
    s = open_session(dir, 0, 9);
    f = frame_at(0, &c);
    CHECK_STATUS(ck_session_process(&r, s, &f), CK_OK);
    CHECK(r.captured == 1);
    CHECK_STATUS(ck_session_close(s), CK_OK);
    CHECK(c.calls == 1 && c.self == &c);
    remove_tree(dir);
}

int main(void)
{
    if (tmp_dir_create("ck-handover") != 0) return 1;
    test_written_and_dropped();
    test_not_captured_errors_and_old_size();
    test_sync();
    test_failed_write_and_close();
    if (g_failed == 0) remove_tree(g_dir);
    return CHECK_SUMMARY();
}
