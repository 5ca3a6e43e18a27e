/* The 0.1 call shapes, mapped onto the 0.2 API, for the C test files written before 0.2
 * (test_depth.c, test_zstream.c, test_png.c, test_guidance.c ...). Each macro below calls the real
 * 0.2 function with the same arguments in the 0.2 order (outputs first; ck_depth_map / ck_image
 * built from the old pointer, size, stride and format arguments), so those tests keep every
 * assertion they had while the library is called through the 0.2 ABI. New tests (test_capi.c,
 * test_compat.c) use the 0.2 shapes directly; the older files move over file by file. */
#ifndef CK_TESTS_CAPI_SHAPES01_H
#define CK_TESTS_CAPI_SHAPES01_H

#include <capturekit.h>

/* Writers remember their frame size: 0.1 appends gave only a pointer and a format. */
#define SHAPES01_WRITERS 64
static struct { const void *writer; uint32_t width, height; } shapes01_writers[SHAPES01_WRITERS];

static inline void shapes01_remember(const void *writer, uint32_t width, uint32_t height) {
    int i;
    for (i = 0; i < SHAPES01_WRITERS; i++) {
        if (shapes01_writers[i].writer == NULL || shapes01_writers[i].writer == writer) {
            shapes01_writers[i].writer = writer; shapes01_writers[i].width = width; shapes01_writers[i].height = height;
            return;
        }
    }
    shapes01_writers[0].writer = writer; shapes01_writers[0].width = width; shapes01_writers[0].height = height;
}

static inline ck_depth_map shapes01_map(const void *writer, const void *src, int32_t format) {
    ck_depth_map m = { NULL, 0u, 0u, 0, 0, 0u };
    int i;
    for (i = 0; i < SHAPES01_WRITERS; i++) {
        if (shapes01_writers[i].writer == writer && writer != NULL) {
            m.width = shapes01_writers[i].width; m.height = shapes01_writers[i].height;
        }
    }
    m.data = src; m.format = format;
    if (m.width == 0) { m.width = 1; m.height = 1; }  /* an unknown (e.g. NULL) writer: validated by the library */
    return m;
}

static inline ck_status shapes01_depth_writer_open(ck_depth_writer **out, const char *path, uint32_t w, uint32_t h,
                                                   int32_t kind, int32_t level, uint32_t flags) {
    ck_status s = ck_depth_writer_open(out, path, w, h, kind, level, flags);
    if (s == CK_OK && out) shapes01_remember(*out, w, h);
    return s;
}
static inline ck_status shapes01_depth_writer_append(ck_depth_writer *w, const void *src, int32_t format, double t) {
    ck_depth_map m = shapes01_map(w, src, format);
    return ck_depth_writer_append(w, src ? &m : NULL, t);
}
static inline ck_status shapes01_zstream_writer_open(ck_zstream_writer **out, const char *path, uint32_t w, uint32_t h,
                                                     int32_t stored, int32_t level, uint32_t flags) {
    ck_status s = ck_zstream_writer_open(out, path, w, h, stored, level, flags);
    if (s == CK_OK && out) shapes01_remember(*out, w, h);
    return s;
}
static inline ck_status shapes01_zstream_writer_append(ck_zstream_writer *w, const void *src, int32_t format) {
    ck_depth_map m = shapes01_map(w, src, format);
    return ck_zstream_writer_append(w, src ? &m : NULL);
}
static inline ck_status shapes01_depth_encode(ck_depth_codec *codec, void *dst, size_t cap, size_t *written,
                                              const void *src, uint32_t w, uint32_t h, int32_t format) {
    ck_depth_map m = { src, w, h, 0, format, 0u };
    return ck_depth_encode(dst, cap, written, codec, src ? &m : NULL);
}
static inline ck_status shapes01_png_encode(void *dst, size_t cap, size_t *written, const void *pixels, uint32_t w,
                                            uint32_t h, size_t stride, int32_t format, int32_t level) {
    ck_image img = { pixels, w, h, stride, format, 0u };
    return ck_png_encode(dst, cap, written, &img, level);
}
static inline ck_status shapes01_png_write(const char *path, const void *pixels, uint32_t w, uint32_t h, size_t stride,
                                           int32_t format, int32_t level, uint32_t flags) {
    ck_image img = { pixels, w, h, stride, format, 0u };
    return ck_png_write(path, &img, level, flags);
}
static inline ck_status shapes01_sharpness_score(float *out, const uint8_t *luma, uint32_t w, uint32_t h, size_t stride) {
    ck_image img = { luma, w, h, stride, CK_IMAGE_FORMAT_GRAY8, 0u };
    return ck_sharpness_score(out, &img);
}
static inline ck_status shapes01_scene_render_depth(float *d, uint8_t *c, const ck_scene *scene, const ck_mat4 *pose,
                                                    const ck_intrinsics *k, uint64_t frame) {
    size_t n = k ? (size_t)k->width * k->height : 0;
    return ck_scene_render_depth(d, c, n, NULL, scene, pose, k, frame);
}
static inline ck_status shapes01_scene_render_rgb(uint8_t *rgb, const ck_scene *scene, const ck_mat4 *pose,
                                                  const ck_intrinsics *k) {
    size_t n = k ? (size_t)k->width * k->height * 3 : 0;
    return ck_scene_render_rgb(rgb, n, NULL, scene, pose, k);
}
static inline ck_status shapes01_stream_frame(ck_dataset *ds, double t, const ck_mat4 *pose, const ck_intrinsics *k,
                                              const float *depth, const uint8_t *conf, uint32_t w, uint32_t h) {
    ck_depth_map d = { depth, w, h, 0, CK_FORMAT_DEPTH_F32, 0u }, c = { conf, w, h, 0, CK_FORMAT_U8, 0u };
    return ck_dataset_stream_frame(ds, t, pose, k, depth ? &d : NULL, conf ? &c : NULL);
}

#define ck_depth_writer_open(...) shapes01_depth_writer_open(__VA_ARGS__)
#define ck_depth_writer_append(w, src, f, t) shapes01_depth_writer_append((w), (src), (f), (t))
#define ck_zstream_writer_open(...) shapes01_zstream_writer_open(__VA_ARGS__)
#define ck_zstream_writer_append(w, src, f) shapes01_zstream_writer_append((w), (src), (f))
#define ck_depth_encode(c, d, cap, wr, s, w, h, f) shapes01_depth_encode((c), (d), (cap), (wr), (s), (w), (h), (f))
#define ck_depth_decode(c, d, cap, f, s, n) ck_depth_decode((d), (cap), NULL, (c), (s), (n), (f))
#define ck_depth_reader_read(r, i, d, cap, f, t) ck_depth_reader_read((d), (cap), NULL, (t), (r), (i), (f))
#define ck_zstream_reader_next(r, d, cap, f) ck_zstream_reader_next((d), (cap), NULL, (r), (f))
#define ck_zstream_reader_read(r, i, d, cap, f) ck_zstream_reader_read((d), (cap), NULL, (r), (i), (f))
#define ck_png_encode(d, cap, wr, p, w, h, st, f, l) shapes01_png_encode((d), (cap), (wr), (p), (w), (h), (st), (f), (l))
#define ck_png_write(path, p, w, h, st, f, l, fl) shapes01_png_write((path), (p), (w), (h), (st), (f), (l), (fl))
#define ck_png_decode(d, cap, s, n) ck_png_decode((d), (cap), NULL, (s), (n))
#define ck_png_read(d, cap, path) ck_png_read((d), (cap), NULL, (path))
#define ck_sharpness_score(o, l, w, h, st) shapes01_sharpness_score((o), (l), (w), (h), (st))
#define ck_scene_render_depth(d, c, s, p, k, f) shapes01_scene_render_depth((d), (c), (s), (p), (k), (f))
#define ck_scene_render_rgb(o, s, p, k) shapes01_scene_render_rgb((o), (s), (p), (k))
#define ck_dataset_stream_frame(ds, t, p, k, d, c, w, h) shapes01_stream_frame((ds), (t), (p), (k), (d), (c), (w), (h))
#define ck_coverage_add_view(cov, face, p, k, t) ck_coverage_add_view((face), (cov), (p), (k), (t))
#define ck_coverage_next_event(cov, e) ck_coverage_next_event((e), (cov))
#define ck_scheduler_next_event(s, e) ck_scheduler_next_event((e), (s))
#define ck_scheduler_update(s, g, f) ck_scheduler_update((g), (s), (f))
#define ck_session_process(s, r, f) ck_session_process((r), (s), (f))
#define ck_session_next_event(s, e) ck_session_next_event((e), (s))
#define ck_dataset_add_frame(ds, id, d) ck_dataset_add_frame((id), (ds), (d))
#define ck_dataset_begin_pass(ds, p, b) ck_dataset_begin_pass((p), (ds), (b))

#endif /* CK_TESTS_CAPI_SHAPES01_H */
