/*
 * test_scan.c — the C API test of the scan reader (ck_scan_*, include/capturekit/ck_scan.h) and of
 * the bound on what a depth PNG declares (ck_scan_depth, ck_dataset_frame_depth).
 *
 * Opens each kind: the real MultiScan sample (its metadata and camera-info lines as recorded, given
 * as argv[1]) with depth and confidence streams written here, and a Stray Scanner folder written
 * here (CSV by hand, PNGs with ck_png_write). Values are checked against what was written and
 * against the sample's text parsed here (strtod/strtoll), and every status code ck_scan.h documents
 * for each function is produced.
 *
 * Output: one line per failed check, then exactly one summary line "N passed, M failed".
 */
#define _XOPEN_SOURCE 700
#include "capturekit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

STATIC_ASSERT(CK_SCAN_KIND_MULTISCAN == 1 && CK_SCAN_KIND_STRAY == 2, scan_kinds);
STATIC_ASSERT(sizeof(void *) != 8 || (sizeof(ck_scan_info) == 40 && sizeof(ck_scan_frame_info) == 112), scan_layouts);

#define MS_ID "20230615T103000-0700_2CE7F809-8FA9-42BB-BE73-23C5C30C7D07"
#define DW 256
#define DH 192
#define SW 16 /* the Stray capture's depth size */
#define SH 12

static int write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = fwrite(bytes, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static int write_text(const char *path, const char *text) { return write_bytes(path, text, strlen(text)); }

static char *read_text(const char *path, size_t *size_out)
{
    FILE *f = fopen(path, "rb");
    char *text;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) { free(text); text = NULL; }
    if (text) text[n] = 0;
    fclose(f);
    if (size_out) *size_out = (size_t)n;
    return text;
}

static int copy_file(const char *from, const char *to)
{
    size_t n = 0;
    char *text = read_text(from, &n);
    int ok = text && write_bytes(to, text, n);
    free(text);
    return ok;
}

/* CRC-32 (IEEE, as PNG), bitwise: independent of the library's zlib. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static size_t put_chunk(unsigned char *out, const char *type, const unsigned char *data, uint32_t n)
{
    out[0] = (unsigned char)(n >> 24); out[1] = (unsigned char)(n >> 16); out[2] = (unsigned char)(n >> 8); out[3] = (unsigned char)n;
    memcpy(out + 4, type, 4);
    if (n) memcpy(out + 8, data, n);
    uint32_t c = crc32_of(out + 4, 4 + (size_t)n);
    out[8 + n] = (unsigned char)(c >> 24); out[9 + n] = (unsigned char)(c >> 16);
    out[10 + n] = (unsigned char)(c >> 8); out[11 + n] = (unsigned char)c;
    return 12 + (size_t)n;
}

/* The 74-byte 16-bit gray PNG declaring 32768 x 32768 (its zlib stream ends after 17 bytes). */
static size_t bomb_png(unsigned char out[74])
{
    static const unsigned char ihdr[13] = { 0, 0, 0x80, 0, 0, 0, 0x80, 0, 16, 0, 0, 0, 0 };
    static const unsigned char idat[17] = { 0x78, 0xDA, 0xED, 0xC1, 0x31, 0x01, 0, 0, 0, 0xC2, 0xA0, 0xF5, 0x4F, 0x6D, 0x08, 0x5F, 0xA0 };
    size_t n = 0;
    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    n = 8;
    n += put_chunk(out + n, "IHDR", ihdr, 13);
    n += put_chunk(out + n, "IDAT", idat, 17);
    n += put_chunk(out + n, "IEND", NULL, 0);
    return n;
}

static int write_png16(const char *path, const uint16_t *px, uint32_t w, uint32_t h)
{
    ck_image im = { px, w, h, 0, CK_IMAGE_FORMAT_GRAY16, 0 };
    return ck_png_write(path, &im, 0, CK_OPEN_OVERWRITE) == CK_OK;
}

static int write_png8(const char *path, const uint8_t *px, uint32_t w, uint32_t h)
{
    ck_image im = { px, w, h, 0, CK_IMAGE_FORMAT_GRAY8, 0 };
    return ck_png_write(path, &im, 0, CK_OPEN_OVERWRITE) == CK_OK;
}

/* ============================================================================================
 * MultiScan: the real sample's metadata and camera info, streams written here
 * ============================================================================================ */

#define MS_STREAMED 3 /* frames in the streams (the metadata says 354: later ones are CK_E_CORRUPT) */

static float ms_depth(int frame, int i) { return 0.25f * (float)(1 + (i + frame) % 40); } /* exact in float16 */
static uint8_t ms_conf(int frame, int i) { return (uint8_t)((i * 7 + frame) % 3); }

static int make_multiscan(const char *fixtures, const char *dir)
{
    char from[512], to[512];
    ck_zstream_writer *w = NULL;
    float *d = malloc(sizeof(float) * DW * DH);
    uint8_t *c = malloc(DW * DH);
    int ok = d && c && mkdir(dir, 0755) == 0;
    snprintf(from, sizeof from, "%s/metadata-example.json", fixtures);
    snprintf(to, sizeof to, "%s/" MS_ID ".json", dir);
    ok = ok && copy_file(from, to);
    snprintf(from, sizeof from, "%s/camera-info-example.jsonl", fixtures);
    snprintf(to, sizeof to, "%s/" MS_ID ".jsonl", dir);
    ok = ok && copy_file(from, to);
    snprintf(to, sizeof to, "%s/" MS_ID ".depth.zlib", dir);
    ok = ok && ck_zstream_writer_open(&w, to, DW, DH, CK_FORMAT_DEPTH_F16, 0, 0) == CK_OK;
    for (int f = 0; ok && f < MS_STREAMED; f++) {
        for (int i = 0; i < DW * DH; i++) d[i] = ms_depth(f, i);
        ck_depth_map m = { d, DW, DH, 0, CK_FORMAT_DEPTH_F32, 0 };
        ok = ck_zstream_writer_append(w, &m) == CK_OK;
    }
    ok = ck_zstream_writer_close(w) == CK_OK && ok;
    w = NULL;
    snprintf(to, sizeof to, "%s/" MS_ID ".confidence.zlib", dir);
    ok = ok && ck_zstream_writer_open(&w, to, DW, DH, CK_FORMAT_U8, 0, 0) == CK_OK;
    for (int f = 0; ok && f < MS_STREAMED; f++) {
        for (int i = 0; i < DW * DH; i++) c[i] = ms_conf(f, i);
        ck_depth_map m = { c, DW, DH, 0, CK_FORMAT_U8, 0 };
        ok = ck_zstream_writer_append(w, &m) == CK_OK;
    }
    if (w) ok = ck_zstream_writer_close(w) == CK_OK && ok;
    free(d);
    free(c);
    return ok;
}

/* The n-th line's numeric value after `"key":` (for arrays: the element `index`). */
static double line_value(const char *text, int line, const char *key, int index)
{
    const char *p = text;
    char pat[64];
    for (int i = 0; i < line && p; i++) { p = strchr(p, '\n'); if (p) p++; }
    if (!p) return NAN;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(p, pat);
    if (!p) return NAN;
    p += strlen(pat);
    if (*p == '[') {
        p++;
        for (int i = 0; i < index; i++) { p = strchr(p, ','); if (!p) return NAN; p++; }
    }
    return strtod(p, NULL);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

static void test_multiscan(const char *fixtures)
{
    const char *dir = tmp_path("ms");
    char jsonl[512];
    ck_scan *s = NULL;
    ck_scan_info info;
    ck_scan_frame_info fi;
    size_t written = 0;
    CHECK(make_multiscan(fixtures, dir));
    snprintf(jsonl, sizeof jsonl, "%s/camera-info-example.jsonl", fixtures);
    char *text = read_text(jsonl, NULL);
    CHECK(text != NULL);
    if (!text) return;
    int lines = count_lines(text);
    CHECK(lines == 354);

    CHECK_STATUS(ck_scan_open(&s, dir), CK_OK);
    if (!s) { free(text); return; }
    CHECK_STATUS(ck_scan_describe(&info, s), CK_OK);
    CHECK(info.kind == CK_SCAN_KIND_MULTISCAN);
    CHECK(info.has_confidence == 1);
    CHECK(info.depth_width == DW && info.depth_height == DH);
    CHECK(info.frame_count == (uint64_t)lines);
    CHECK(info.depth_frame_count == 354); /* the metadata's count */
    double t0 = line_value(text, 0, "timestamp", 0), tn = line_value(text, lines - 1, "timestamp", 0);
    CHECK_NEAR(info.duration, (tn - t0) / 1e9, 1e-9);
    CHECK(info.duration > 5.0);

    /* Frames: the line's own intrinsics at the colour stream's 1920 x 1440, its pose. */
    for (int f = 0; f < lines; f += 101) {
        CHECK_STATUS(ck_scan_frame(&fi, s, (uint64_t)f), CK_OK);
        CHECK_NEAR(fi.timestamp, line_value(text, f, "timestamp", 0) / 1e9, 1e-6);
        CHECK_NEAR(fi.intrinsics.fx, line_value(text, f, "intrinsics", 0), 1e-3);
        CHECK_NEAR(fi.intrinsics.fy, line_value(text, f, "intrinsics", 4), 1e-3);
        CHECK_NEAR(fi.intrinsics.cx, line_value(text, f, "intrinsics", 6), 1e-3);
        CHECK_NEAR(fi.intrinsics.cy, line_value(text, f, "intrinsics", 7), 1e-3);
        CHECK(fi.intrinsics.width == 1920 && fi.intrinsics.height == 1440);
        for (int k = 0; k < 16; k++) CHECK_NEAR(fi.pose.m[k], line_value(text, f, "transform", k), 2e-6);
        CHECK(fi.depth_index == f && fi.has_depth == 1 && fi.reserved == 0);
    }
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_frame, (&fi, s, (uint64_t)lines));
    ERR(CK_E_INVALID_ARGUMENT, "info_out", ck_scan_frame, (NULL, s, 0));
    ERR(CK_E_INVALID_ARGUMENT, "scan", ck_scan_frame, (&fi, NULL, 0));
    ERR(CK_E_INVALID_ARGUMENT, "info_out", ck_scan_describe, (NULL, s));
    ERR(CK_E_INVALID_ARGUMENT, "scan", ck_scan_describe, (&info, NULL));

    /* Depth and confidence of streamed frames, in every format. */
    size_t n = (size_t)DW * DH;
    float *f32 = malloc(n * 4);
    uint16_t *u16 = malloc(n * 2);
    uint8_t *u8 = malloc(n);
    for (int f = 0; f < MS_STREAMED; f++) {
        CHECK_STATUS(ck_scan_depth(f32, n * 4, &written, s, (uint64_t)f, CK_FORMAT_DEPTH_F32), CK_OK);
        CHECK(written == n * 4);
        unsigned long bad = 0;
        for (size_t i = 0; i < n; i++) bad += f32[i] != ms_depth(f, (int)i);
        CHECK_SAME("multiscan depth f32", bad, "");
        CHECK_STATUS(ck_scan_depth(u16, n * 2, &written, s, (uint64_t)f, CK_FORMAT_DEPTH_MM), CK_OK);
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += u16[i] != (uint16_t)lroundf(ms_depth(f, (int)i) * 1000.0f);
        CHECK_SAME("multiscan depth mm", bad, "");
        CHECK_STATUS(ck_scan_confidence(u8, n, &written, s, (uint64_t)f), CK_OK);
        CHECK(written == n);
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += u8[i] != ms_conf(f, (int)i);
        CHECK_SAME("multiscan confidence", bad, "");
    }
    /* The stream ends before frame 3 while the metadata counts 354: corrupt, dst untouched. */
    f32[0] = -7.0f;
    ERR(CK_E_CORRUPT, NULL, ck_scan_depth, (f32, n * 4, &written, s, MS_STREAMED, CK_FORMAT_DEPTH_F32));
    CHECK(f32[0] == -7.0f);
    ERR(CK_E_CORRUPT, NULL, ck_scan_confidence, (u8, n, &written, s, MS_STREAMED));
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_depth, (f32, n * 4, &written, s, (uint64_t)lines, CK_FORMAT_DEPTH_F32));
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_confidence, (u8, n, &written, s, (uint64_t)lines));
    written = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_scan_depth, (f32, n * 4 - 1, &written, s, 0, CK_FORMAT_DEPTH_F32));
    CHECK(written == n * 4);
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_scan_depth, (NULL, 0, &written, s, 0, CK_FORMAT_DEPTH_F16));
    CHECK(written == n * 2);
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_scan_confidence, (u8, n - 1, &written, s, 0));
    CHECK(written == n);
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_scan_depth, (f32, n * 4, &written, s, 0, CK_FORMAT_U8));
    ERR(CK_E_INVALID_ARGUMENT, "scan", ck_scan_depth, (f32, n * 4, &written, NULL, 0, CK_FORMAT_DEPTH_F32));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_scan_depth, (NULL, n * 4, &written, s, 0, CK_FORMAT_DEPTH_F32));
    ERR(CK_E_INVALID_ARGUMENT, "scan", ck_scan_confidence, (u8, n, &written, NULL, 0));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_scan_confidence, (NULL, n, &written, s, 0));
    CHECK_STATUS(ck_scan_close(s), CK_OK);

    /* The metadata file itself opens the same scan. */
    char meta[512];
    snprintf(meta, sizeof meta, "%s/" MS_ID ".json", dir);
    CHECK_STATUS(ck_scan_open(&s, meta), CK_OK);
    CHECK_STATUS(ck_scan_describe(&info, s), CK_OK);
    CHECK(info.frame_count == (uint64_t)lines);
    CHECK_STATUS(ck_scan_close(s), CK_OK);

    /* Stream files that cannot be read: a directory where the depth stream should be. */
    {
        const char *d2 = tmp_path("ms-io");
        CHECK(make_multiscan(fixtures, d2));
        char p[512];
        snprintf(p, sizeof p, "%s/" MS_ID ".depth.zlib", d2);
        CHECK(remove(p) == 0 && mkdir(p, 0755) == 0);
        snprintf(p, sizeof p, "%s/" MS_ID ".confidence.zlib", d2);
        CHECK(remove(p) == 0 && mkdir(p, 0755) == 0);
        CHECK_STATUS(ck_scan_open(&s, d2), CK_OK);
        ERR(CK_E_IO, NULL, ck_scan_depth, (f32, n * 4, &written, s, 0, CK_FORMAT_DEPTH_F32));
        ERR(CK_E_IO, NULL, ck_scan_confidence, (u8, n, &written, s, 0));
        CHECK_STATUS(ck_scan_close(s), CK_OK);
    }
    /* Without a confidence stream: no confidence. */
    {
        const char *d3 = tmp_path("ms-noconf");
        CHECK(make_multiscan(fixtures, d3));
        char p[512];
        snprintf(p, sizeof p, "%s/" MS_ID ".confidence.zlib", d3);
        CHECK(remove(p) == 0);
        CHECK_STATUS(ck_scan_open(&s, d3), CK_OK);
        CHECK_STATUS(ck_scan_describe(&info, s), CK_OK);
        CHECK(info.has_confidence == 0);
        ERR(CK_E_NOT_FOUND, NULL, ck_scan_confidence, (u8, n, &written, s, 0));
        CHECK_STATUS(ck_scan_close(s), CK_OK);
    }
    free(f32);
    free(u16);
    free(u8);
    free(text);
}

/* ============================================================================================
 * Stray Scanner: a folder written here
 * ============================================================================================ */

static uint16_t stray_mm(int frame, int i) { return (uint16_t)(i % 5 == 0 ? 0 : 300 + 37 * i + 1000 * frame + (i == 1 ? 3797 : 0)); }
static uint8_t stray_conf(int frame, int i) { return (uint8_t)((i + 2 * frame) % 3); }

/* Three frames; frame 2 has no depth files. Frame i: translation (i, 2, 3), identity rotation in
 * OpenCV axes; per-frame intrinsics when `per_frame` (fx 1500 + 10 i). */
static int make_stray(const char *dir, int per_frame)
{
    char p[512];
    uint16_t mm[SW * SH];
    uint8_t conf[SW * SH];
    int ok = mkdir(dir, 0755) == 0;
    snprintf(p, sizeof p, "%s/depth", dir);
    ok = ok && mkdir(p, 0755) == 0;
    snprintf(p, sizeof p, "%s/confidence", dir);
    ok = ok && mkdir(p, 0755) == 0;
    snprintf(p, sizeof p, "%s/camera_matrix.csv", dir);
    ok = ok && write_text(p, "1597.5, 0.0, 959.25\n0.0, 1596.0, 721.5\n0.0, 0.0, 1.0\n");
    snprintf(p, sizeof p, "%s/odometry.csv", dir);
    ok = ok && write_text(p, per_frame
        ? "timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy\n"
          "10.0, 000000, 0.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1500.0, 1501.0, 950.0, 720.0\n"
          "10.5, 000001, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1510.0, 1511.0, 951.0, 721.0\n"
          "11.25, 000002, 2.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1520.0, 1521.0, 952.0, 722.0\n"
        : "timestamp, frame, x, y, z, qx, qy, qz, qw\n"
          "10.0, 000000, 0.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n"
          "10.5, 000001, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n"
          "11.25, 000002, 2.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n");
    for (int f = 0; ok && f < 2; f++) {
        for (int i = 0; i < SW * SH; i++) { mm[i] = stray_mm(f, i); conf[i] = stray_conf(f, i); }
        snprintf(p, sizeof p, "%s/depth/%06d.png", dir, f);
        ok = write_png16(p, mm, SW, SH);
        snprintf(p, sizeof p, "%s/confidence/%06d.png", dir, f);
        ok = ok && write_png8(p, conf, SW, SH);
    }
    return ok;
}

static void test_stray(void)
{
    const char *dir = tmp_path("stray");
    ck_scan *s = NULL;
    ck_scan_info info;
    ck_scan_frame_info fi;
    size_t written = 0, n = SW * SH;
    CHECK(make_stray(dir, 0));
    CHECK_STATUS(ck_scan_open(&s, dir), CK_OK);
    if (!s) return;
    CHECK_STATUS(ck_scan_describe(&info, s), CK_OK);
    CHECK(info.kind == CK_SCAN_KIND_STRAY && info.has_confidence == 1);
    CHECK(info.depth_width == SW && info.depth_height == SH);
    CHECK(info.frame_count == 3 && info.depth_frame_count == 2);
    CHECK(info.duration == 1.25);
    for (int f = 0; f < 3; f++) {
        CHECK_STATUS(ck_scan_frame(&fi, s, (uint64_t)f), CK_OK);
        CHECK(fi.timestamp == (f == 0 ? 10.0 : f == 1 ? 10.5 : 11.25));
        /* OpenCV camera axes converted: c2w_gl = c2w_cv * diag(1, -1, -1, 1). */
        static const float want_r[9] = { 1, 0, 0, 0, -1, 0, 0, 0, -1 }; /* columns x, y, z */
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) CHECK(fi.pose.m[c * 4 + r] == want_r[c * 3 + r]);
        CHECK(fi.pose.m[12] == (float)f && fi.pose.m[13] == 2.0f && fi.pose.m[14] == 3.0f && fi.pose.m[15] == 1.0f);
        /* camera_matrix.csv's for every frame; the principal point near 1920 x 1440's centre. */
        CHECK(fi.intrinsics.fx == 1597.5f && fi.intrinsics.fy == 1596.0f && fi.intrinsics.cx == 959.25f && fi.intrinsics.cy == 721.5f);
        CHECK(fi.intrinsics.width == 1920 && fi.intrinsics.height == 1440);
        CHECK(fi.depth_index == f && fi.has_depth == (f < 2));
    }
    uint16_t mm[SW * SH];
    float f32[SW * SH];
    uint16_t f16[SW * SH];
    uint8_t conf[SW * SH];
    for (int f = 0; f < 2; f++) {
        unsigned long bad = 0;
        CHECK_STATUS(ck_scan_depth(mm, sizeof mm, &written, s, (uint64_t)f, CK_FORMAT_DEPTH_MM), CK_OK);
        CHECK(written == sizeof mm);
        for (size_t i = 0; i < n; i++) bad += mm[i] != stray_mm(f, (int)i);
        CHECK_SAME("stray depth mm", bad, "");
        CHECK_STATUS(ck_scan_depth(f32, sizeof f32, &written, s, (uint64_t)f, CK_FORMAT_DEPTH_F32), CK_OK);
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += fabs((double)f32[i] - stray_mm(f, (int)i) / 1000.0) > 1e-6;
        CHECK_SAME("stray depth f32", bad, "");
        CHECK_STATUS(ck_scan_depth(f16, sizeof f16, &written, s, (uint64_t)f, CK_FORMAT_DEPTH_F16), CK_OK);
        CHECK(written == sizeof f16);
        CHECK_STATUS(ck_scan_confidence(conf, sizeof conf, &written, s, (uint64_t)f), CK_OK);
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += conf[i] != stray_conf(f, (int)i);
        CHECK_SAME("stray confidence", bad, "");
    }
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_depth, (mm, sizeof mm, &written, s, 2, CK_FORMAT_DEPTH_MM)); /* no files */
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_confidence, (conf, sizeof conf, &written, s, 2));

    /* A later depth PNG declaring 32768 x 32768: refused before anything is allocated. */
    unsigned char bomb[74];
    char p[512];
    CHECK(bomb_png(bomb) == 74);
    snprintf(p, sizeof p, "%s/depth/000001.png", dir);
    CHECK(write_bytes(p, bomb, 74));
    snprintf(p, sizeof p, "%s/confidence/000001.png", dir);
    CHECK(write_bytes(p, bomb, 74));
    mm[0] = 4242;
    ERR(CK_E_CORRUPT, "32768 x 32768", ck_scan_depth, (mm, sizeof mm, &written, s, 1, CK_FORMAT_DEPTH_MM));
    CHECK(strstr(ck_last_error_message(), "000001.png") != NULL);
    CHECK(mm[0] == 4242); /* dst untouched */
    ERR(CK_E_CORRUPT, "32768 x 32768", ck_scan_confidence, (conf, sizeof conf, &written, s, 1));
    /* A depth PNG that cannot be read (a directory). */
    snprintf(p, sizeof p, "%s/depth/000000.png", dir);
    CHECK(remove(p) == 0 && mkdir(p, 0755) == 0);
    snprintf(p, sizeof p, "%s/confidence/000000.png", dir);
    CHECK(remove(p) == 0 && mkdir(p, 0755) == 0);
    ERR(CK_E_IO, NULL, ck_scan_depth, (mm, sizeof mm, &written, s, 0, CK_FORMAT_DEPTH_MM));
    ERR(CK_E_IO, NULL, ck_scan_confidence, (conf, sizeof conf, &written, s, 0));
    CHECK_STATUS(ck_scan_close(s), CK_OK);

    /* Per-frame intrinsics on the odometry lines. */
    const char *d2 = tmp_path("stray-k");
    CHECK(make_stray(d2, 1));
    CHECK_STATUS(ck_scan_open(&s, d2), CK_OK);
    for (int f = 0; s && f < 3; f++) {
        CHECK_STATUS(ck_scan_frame(&fi, s, (uint64_t)f), CK_OK);
        CHECK(fi.intrinsics.fx == 1500.0f + 10.0f * f && fi.intrinsics.fy == 1501.0f + 10.0f * f);
        CHECK(fi.intrinsics.cx == 950.0f + f && fi.intrinsics.cy == 720.0f + f);
        CHECK(fi.intrinsics.width == 1920 && fi.intrinsics.height == 1440);
    }
    CHECK_STATUS(ck_scan_close(s), CK_OK);

    /* Timestamps that go back: the duration is the span they cover, never negative. */
    const char *d3 = tmp_path("stray-back");
    CHECK(make_stray(d3, 0));
    snprintf(p, sizeof p, "%s/odometry.csv", d3);
    CHECK(write_text(p, "timestamp, frame, x, y, z, qx, qy, qz, qw\n"
                        "10.0, 000000, 0.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n"
                        "12.5, 000001, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n"
                        "3.0, 000002, 2.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0\n"));
    CHECK_STATUS(ck_scan_open(&s, d3), CK_OK);
    CHECK_STATUS(ck_scan_describe(&info, s), CK_OK);
    CHECK(info.duration == 9.5);
    CHECK_STATUS(ck_scan_close(s), CK_OK);
}

/* ============================================================================================
 * ck_scan_open's refusals, and the dataset reader's bound on a depth PNG
 * ============================================================================================ */

static void test_open_errors(const char *fixtures)
{
    ck_scan *s = (ck_scan *)&s;
    char p[512];
    unsigned char bomb[74];
    bomb_png(bomb);
    ERR(CK_E_INVALID_ARGUMENT, "scan_out", ck_scan_open, (NULL, g_dir));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_scan_open, (&s, NULL));
    CHECK(s == NULL);
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_open, (&s, tmp_path("no-such-folder")));
    CHECK(mkdir(tmp_path("empty"), 0755) == 0);
    ERR(CK_E_NOT_FOUND, NULL, ck_scan_open, (&s, tmp_path("empty")));

    /* Two MultiScan scans in one folder: open one by its metadata file. */
    const char *two = tmp_path("two");
    CHECK(make_multiscan(fixtures, two));
    snprintf(p, sizeof p, "%s/metadata-example.json", fixtures);
    char to[512];
    snprintf(to, sizeof to, "%s/other.json", two);
    CHECK(copy_file(p, to));
    snprintf(p, sizeof p, "%s/camera-info-example.jsonl", fixtures);
    snprintf(to, sizeof to, "%s/other.jsonl", two);
    CHECK(copy_file(p, to));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_scan_open, (&s, two));

    /* The first depth PNG declaring 32768 x 32768 against the 1920 x 1440 capture. */
    const char *bad = tmp_path("stray-bomb");
    CHECK(make_stray(bad, 0));
    snprintf(p, sizeof p, "%s/depth/000000.png", bad);
    CHECK(write_bytes(p, bomb, 74));
    ERR(CK_E_CORRUPT, "32768 x 32768", ck_scan_open, (&s, bad));
    CHECK(strstr(ck_last_error_message(), "1920 x 1440") != NULL && strstr(ck_last_error_message(), "000000.png") != NULL);
    CHECK(s == NULL);

    /* A damaged odometry line names the file and line. */
    const char *csv = tmp_path("stray-csv");
    CHECK(make_stray(csv, 0));
    snprintf(p, sizeof p, "%s/odometry.csv", csv);
    CHECK(write_text(p, "timestamp, frame, x, y, z, qx, qy, qz, qw\n10.0, 000000, 0.0, 2.0, nope, 0.0, 0.0, 0.0, 1.0\n"));
    ERR(CK_E_CORRUPT, "line 2", ck_scan_open, (&s, csv));

    /* odometry.csv that cannot be read (a directory). */
    const char *io = tmp_path("stray-io");
    CHECK(make_stray(io, 0));
    snprintf(p, sizeof p, "%s/odometry.csv", io);
    CHECK(remove(p) == 0 && mkdir(p, 0755) == 0);
    ERR(CK_E_IO, NULL, ck_scan_open, (&s, io));

    CHECK_STATUS(ck_scan_close(NULL), CK_OK);
}

static void test_dataset_depth_bound(void)
{
    ck_dataset_options o = CK_DATASET_OPTIONS_INIT;
    ck_dataset *ds = NULL;
    ck_frame_desc d = CK_FRAME_DESC_INIT;
    uint8_t rgb[SW * SH * 3];
    uint16_t mm[SW * SH];
    uint64_t id = 0;
    size_t written = 0;
    uint32_t w = 0, h = 0;
    memset(rgb, 0, sizeof rgb);
    for (int i = 0; i < SW * SH; i++) mm[i] = (uint16_t)(1000 + i);
    o.start_time_unix = 1.8e9;
    o.device_id = "rig";
    o.write_mode = CK_WRITE_MODE_SYNC;
    CHECK_STATUS(ck_dataset_create(&ds, tmp_path("ds"), &o), CK_OK);
    if (!ds) return;
    d.intrinsics = (ck_intrinsics){ 20, 20, 8, 6, SW, SH };
    d.image = (ck_image){ rgb, SW, SH, 0, CK_IMAGE_FORMAT_RGB8, 0 };
    d.depth = (ck_depth_map){ mm, SW, SH, 0, CK_FORMAT_DEPTH_MM, 0 };
    CHECK_STATUS(ck_dataset_add_frame(&id, ds, &d), CK_OK);
    CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    ds = NULL;

    CHECK_STATUS(ck_dataset_open_readonly(&ds, tmp_path("ds")), CK_OK);
    if (!ds) return;
    uint16_t back[SW * SH];
    CHECK_STATUS(ck_dataset_frame_depth(back, sizeof back, &written, &w, &h, ds, 0, CK_FORMAT_DEPTH_MM), CK_OK);
    CHECK(w == SW && h == SH && memcmp(back, mm, sizeof mm) == 0);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    unsigned char bomb[74];
    bomb_png(bomb);
    CHECK(write_bytes(tmp_path("ds/depth/000000.png"), bomb, 74));
    CHECK_STATUS(ck_dataset_open_readonly(&ds, tmp_path("ds")), CK_OK);
    if (!ds) return;
    /* Even the size query is refused: no caller sizes a buffer from what the file declares. */
    w = h = 0;
    ERR(CK_E_CORRUPT, "32768 x 32768", ck_dataset_frame_depth, (NULL, 0, &written, &w, &h, ds, 0, CK_FORMAT_DEPTH_MM));
    CHECK(strstr(ck_last_error_message(), "000000.png") != NULL && strstr(ck_last_error_message(), "16 x 12") != NULL);
    CHECK(w == 0 && h == 0);
    back[0] = 7;
    ERR(CK_E_CORRUPT, NULL, ck_dataset_frame_depth, (back, sizeof back, &written, &w, &h, ds, 0, CK_FORMAT_DEPTH_MM));
    CHECK(back[0] == 7);
    CHECK_STATUS(ck_dataset_close(ds), CK_OK);

    /* A depth PNG that is a symbolic link to a valid PNG outside the dataset is never read (the
     * same rule as the journal's paths and every tool's): CK_E_CORRUPT naming the link. */
    {
        ck_image outside = { mm, SW, SH, 0, CK_IMAGE_FORMAT_GRAY16, 0 };
        CHECK_STATUS(ck_png_write(tmp_path("outside.png"), &outside, 0, 0), CK_OK);
        CHECK(remove(tmp_path("ds/depth/000000.png")) == 0);
        CHECK(symlink(tmp_path("outside.png"), tmp_path("ds/depth/000000.png")) == 0);
        CHECK_STATUS(ck_dataset_open_readonly(&ds, tmp_path("ds")), CK_OK);
        if (!ds) return;
        back[0] = 7;
        ERR(CK_E_CORRUPT, "symbolic link", ck_dataset_frame_depth, (back, sizeof back, &written, &w, &h, ds, 0, CK_FORMAT_DEPTH_MM));
        CHECK(back[0] == 7 && strstr(ck_last_error_message(), "000000.png") != NULL);
        CHECK_STATUS(ck_dataset_close(ds), CK_OK);
    }
}

int main(int argc, char **argv)
{
    const char *fixtures = argc > 1 ? argv[1] : "Tests/CaptureKitCoreTests/Fixtures/multiscan-sample";
    if (tmp_dir_create("ck-test-scan") != 0) return 1;

    test_multiscan(fixtures);
    test_stray();
    test_open_errors(fixtures);
    test_dataset_depth_bound();

    if (g_failed == 0) remove_tree(g_dir);
    else fprintf(stderr, "note: files kept in %s\n", g_dir);
    return CHECK_SUMMARY();
}
