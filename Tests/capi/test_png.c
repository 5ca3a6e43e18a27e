/*
 * test_png.c — C API test of CaptureKit's PNG functions (ck_depth.h, section "PNG").
 *
 * Uses only include/capturekit.h and the built libcapturekit.so. Covers every PNG function: round
 * trips of every format at edge sizes with padded strides, NULL for every pointer, bad formats,
 * sizes, strides, levels and flags, CK_E_BUFFER_TOO_SMALL with the bound, files (atomic write,
 * CK_E_STATE without overwrite, CK_E_NOT_FOUND, CK_E_IO), every truncation and byte flip of a
 * small PNG (CK_E_CORRUPT), and valid PNGs of unsupported kinds (palette, interlaced, 16-bit RGB;
 * CK_E_UNSUPPORTED), embedded below as written by pypng.
 *
 * Output: one line per failed check, then exactly one summary line "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, unlink, rmdir */
#include "capturekit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

/* ============================================================================================
 * ABI guard: enum values and the dimension limit are frozen
 * ============================================================================================ */

STATIC_ASSERT(CK_IMAGE_FORMAT_GRAY8 == 1, png_gray8);
STATIC_ASSERT(CK_IMAGE_FORMAT_RGB8 == 2, png_rgb8);
STATIC_ASSERT(CK_IMAGE_FORMAT_RGBA8 == 3, png_rgba8);
STATIC_ASSERT(CK_IMAGE_FORMAT_GRAY16 == 4, png_gray16);
STATIC_ASSERT(CK_PNG_MAX_DIMENSION == 32768u, png_max_dimension);

/* ============================================================================================
 * PNGs written by another encoder (pypng), embedded
 * ============================================================================================ */

/* A 2x2 palette PNG (written by pypng). */
static const unsigned char k_palette_png[87] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x03, 0x00, 0x00, 0x00, 0x45, 0x68, 0xfd,
    0x16, 0x00, 0x00, 0x00, 0x06, 0x50, 0x4c, 0x54, 0x45, 0xff, 0x00, 0x00, 0x00, 0xff, 0x00, 0xd2,
    0x87, 0xef, 0x71, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x60,
    0x04, 0x42, 0x00, 0x00, 0x0c, 0x00, 0x03, 0x2b, 0x63, 0xcb, 0x50, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};
/* A 3x3 8-bit gray interlaced (Adam7) PNG (written by pypng). */
static const unsigned char k_interlaced_png[80] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03, 0x08, 0x00, 0x00, 0x00, 0x01, 0x04, 0x44, 0xda,
    0xf5, 0x00, 0x00, 0x00, 0x17, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x64, 0x60, 0x66,
    0x60, 0xe7, 0x64, 0x60, 0x62, 0xe0, 0x60, 0x60, 0x61, 0x65, 0x03, 0x00, 0x01, 0x2a, 0x00, 0x2e,
    0x1e, 0x17, 0x3f, 0xbb, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};
/* A 2x1 16-bit RGB PNG (written by pypng). */
static const unsigned char k_rgb16_png[78] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x10, 0x02, 0x00, 0x00, 0x00, 0x2b, 0xd0, 0x34,
    0x9e, 0x00, 0x00, 0x00, 0x15, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x60, 0x64, 0x60,
    0x62, 0x60, 0x66, 0x60, 0x61, 0x60, 0x65, 0x60, 0x03, 0x00, 0x00, 0x68, 0x00, 0x16, 0x22, 0x19,
    0xc6, 0x83, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};
/* A 3x2 8-bit gray PNG, pixels 10 20 30 / 40 50 60, its zlib stream in IDATs of 3 bytes (pypng). */
static const unsigned char k_split_png[85] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x1f, 0x39,
    0xc6, 0x00, 0x00, 0x00, 0x02, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x62, 0xa4, 0x91, 0x2b, 0x00,
    0x00, 0x00, 0x0e, 0x49, 0x44, 0x41, 0x54, 0x63, 0xe0, 0x12, 0x91, 0x63, 0xd0, 0x30, 0xb2, 0x01,
    0x00, 0x02, 0x74, 0x00, 0xd3, 0x18, 0x30, 0xa0, 0xff, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82
};

/* ============================================================================================
 * Helpers
 * ============================================================================================ */

static const int k_formats[4] = {CK_IMAGE_FORMAT_GRAY8, CK_IMAGE_FORMAT_RGB8, CK_IMAGE_FORMAT_RGBA8, CK_IMAGE_FORMAT_GRAY16};

static size_t bytes_per_pixel(int format)
{
    switch (format) {
    case CK_IMAGE_FORMAT_GRAY8: return 1;
    case CK_IMAGE_FORMAT_RGB8: return 3;
    case CK_IMAGE_FORMAT_RGBA8: return 4;
    case CK_IMAGE_FORMAT_GRAY16: return 2;
    default: return 0;
    }
}

/** Deterministic pixel bytes (xorshift), smooth when `smooth` (compressible). */
static void fill(unsigned char *p, size_t n, unsigned seed, int smooth)
{
    uint32_t x = seed * 2654435761u + 1u;
    size_t i;
    for (i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        p[i] = smooth ? (unsigned char)(i / 7 + (x & 3)) : (unsigned char)x;
    }
}

/** Encodes a w x h image of `format` (rows `stride` bytes apart) into a new buffer; *size_out. */
static unsigned char *encode(const unsigned char *pixels, uint32_t w, uint32_t h, size_t stride, int format, int level,
                             size_t *size_out)
{
    size_t bound = ck_png_encode_bound(w, h, format), written = 0;
    unsigned char *dst = malloc(bound);
    *size_out = 0;
    if (dst == NULL) return NULL;
    if (ck_png_encode(dst, bound, &written, &(ck_image){ pixels, w, h, stride, format, 0 }, level) != CK_OK) { free(dst); return NULL; }
    *size_out = written;
    return dst;
}


static void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* ============================================================================================
 * Tests
 * ============================================================================================ */

static void test_bound(void)
{
    int f;
    for (f = 0; f < 4; f++) {
        size_t raw = 7 * (1 + 5 * bytes_per_pixel(k_formats[f]));
        size_t b = ck_png_encode_bound(5, 7, k_formats[f]);
        CHECK(b > raw + 8 + 25 + 12 + 12 + 6);
        CHECK(ck_png_encode_bound(CK_PNG_MAX_DIMENSION, CK_PNG_MAX_DIMENSION, k_formats[f]) >
              (size_t)CK_PNG_MAX_DIMENSION * CK_PNG_MAX_DIMENSION * bytes_per_pixel(k_formats[f]));
        CHECK(ck_png_encode_bound(0, 7, k_formats[f]) == 0);
        CHECK(ck_png_encode_bound(5, 0, k_formats[f]) == 0);
        CHECK(ck_png_encode_bound(CK_PNG_MAX_DIMENSION + 1, 7, k_formats[f]) == 0);
        CHECK(ck_png_encode_bound(5, UINT32_MAX, k_formats[f]) == 0);
    }
    CHECK(ck_png_encode_bound(5, 7, 0) == 0);
    CHECK(ck_png_encode_bound(5, 7, 5) == 0);
    CHECK(ck_png_encode_bound(5, 7, -1) == 0);
}

/** Every format at edge sizes, tight and padded strides, levels 0/1/9: encode, info, decode. */
static void test_round_trips(void)
{
    static const uint32_t sizes[][2] = {{1, 1}, {1, 5}, {5, 1}, {3, 3}, {17, 4}, {33, 2}, {300, 2}, {2, 300}};
    static const int levels[3] = {0, 1, 9};
    size_t s, f, l, pad;
    for (f = 0; f < 4; f++) {
        int format = k_formats[f];
        size_t bpp = bytes_per_pixel(format);
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint32_t w = sizes[s][0], h = sizes[s][1];
            size_t row = w * bpp;
            for (pad = 0; pad <= 5; pad += 5) {
                size_t stride = row + pad;
                unsigned char *src = malloc(stride * h), *packed = malloc(row * h), *back = malloc(row * h + 1);
                size_t y;
                if (src == NULL || packed == NULL || back == NULL) { CHECK(!"out of memory"); free(src); free(packed); free(back); return; }
                fill(src, stride * h, (unsigned)(w * 31 + h + pad), (int)(s & 1));
                for (y = 0; y < h; y++) memcpy(packed + y * row, src + y * stride, row);
                for (l = 0; l < 3; l++) {
                    size_t size = 0, written = 0;
                    uint32_t iw = 0, ih = 0;
                    int32_t iformat = 0;
                    unsigned char *png = encode(src, w, h, stride, format, levels[l], &size);
                    CHECK(png != NULL && size > 8 + 25 + 12);
                    if (png == NULL) continue;
                    CHECK(size <= ck_png_encode_bound(w, h, format));
                    CHECK(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
                    CHECK_STATUS(ck_png_info(&iw, &ih, &iformat, png, size), CK_OK);
                    CHECK(iw == w && ih == h && iformat == format);
                    memset(back, 0xEE, row * h + 1);
                    CHECK_STATUS(ck_png_decode(back, row * h, &written, png, size), CK_OK);
                    CHECK(written == row * h);
                    CHECK(memcmp(back, packed, row * h) == 0);
                    CHECK(back[row * h] == 0xEE); /* nothing written past the image */
                    free(png);
                }
                free(src); free(packed); free(back);
            }
        }
    }
}

static void test_sixteen_bit_native_endian(void)
{
    uint16_t px[3] = {0x0102, 0xA0B0, 65535}, back[3] = {0, 0, 0};
    size_t size = 0, written = 0;
    unsigned char *png = encode((const unsigned char *)px, 3, 1, sizeof px, CK_IMAGE_FORMAT_GRAY16, 0, &size);
    CHECK(png != NULL);
    if (png == NULL) return;
    CHECK(png[24] == 16 && png[25] == 0); /* IHDR: bit depth 16, colour type 0 */
    CHECK_STATUS(ck_png_decode(back, sizeof back, &written, png, size), CK_OK);
    CHECK(written == 3 * 2);
    CHECK(back[0] == 0x0102 && back[1] == 0xA0B0 && back[2] == 65535);
    free(png);
}

static void test_encode_errors(void)
{
    unsigned char px[64], dst[4096];
    size_t written = 12345, bound = ck_png_encode_bound(4, 4, CK_IMAGE_FORMAT_GRAY8);
    memset(px, 7, sizeof px);
    CHECK_STATUS(ck_png_encode(dst, sizeof dst, NULL, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0), CK_OK); /* written_out may be NULL (0.2) */
    ERR(CK_E_INVALID_ARGUMENT, "image.data", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ NULL, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "format", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 4, 0, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "format", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 4, 5, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 0, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 0, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, CK_PNG_MAX_DIMENSION + 1, 1, 40000, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 1, UINT32_MAX, 1, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 3, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 2, 2, 7, CK_IMAGE_FORMAT_RGBA8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, SIZE_MAX, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, SIZE_MAX / 2, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 10));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_png_encode, (dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, -1));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_png_encode, (dst, SIZE_MAX, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_png_encode, (NULL, 100, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    CHECK(written == 12345); /* untouched by argument errors */
    /* Too small: the bound comes back in *written_out; a NULL dst with capacity 0 asks for it. */
    ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_png_encode, (NULL, 0, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    CHECK(written == bound);
    written = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_png_encode, (dst, 20, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
    CHECK(written == bound);
    CHECK_STATUS(ck_png_encode(dst, sizeof dst, &written, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0), CK_OK);
    {
        size_t exact = written, again = 0;
        unsigned char copy[4096];
        CHECK(exact < bound);
        CHECK_STATUS(ck_png_encode(copy, exact, &again, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0), CK_OK); /* exactly enough */
        CHECK(again == exact && memcmp(copy, dst, exact) == 0);
        ERR(CK_E_BUFFER_TOO_SMALL, NULL, ck_png_encode, (copy, exact - 1, &again, &(ck_image){ px, 4, 4, 4, CK_IMAGE_FORMAT_GRAY8, 0 }, 0));
        CHECK(again == bound);
    }
}

static void test_info_and_decode_errors(void)
{
    unsigned char px[12] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}, out[64];
    size_t size = 0, i, written = 0;
    uint32_t w = 0, h = 0;
    int32_t f = 0;
    unsigned char *png = encode(px, 4, 3, 4, CK_IMAGE_FORMAT_GRAY8, 0, &size);
    CHECK(png != NULL);
    if (png == NULL) return;
    ERR(CK_E_INVALID_ARGUMENT, "width_out", ck_png_info, (NULL, &h, &f, png, size));
    ERR(CK_E_INVALID_ARGUMENT, "height_out", ck_png_info, (&w, NULL, &f, png, size));
    ERR(CK_E_INVALID_ARGUMENT, "format_out", ck_png_info, (&w, &h, NULL, png, size));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_png_info, (&w, &h, &f, NULL, size));
    ERR(CK_E_INVALID_ARGUMENT, "src_size", ck_png_info, (&w, &h, &f, png, SIZE_MAX));
    ERR(CK_E_CORRUPT, NULL, ck_png_info, (&w, &h, &f, png, 0));
    ERR(CK_E_CORRUPT, "signature", ck_png_info, (&w, &h, &f, "GIF89a..........................", 32));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_png_decode, (NULL, sizeof out, &written, png, size));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_png_decode, (out, sizeof out, &written, NULL, size));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_png_decode, (out, SIZE_MAX, &written, png, size));
    ERR(CK_E_INVALID_ARGUMENT, "src_size", ck_png_decode, (out, sizeof out, &written, png, (size_t)-5));
    ERR(CK_E_BUFFER_TOO_SMALL, "dst", ck_png_decode, (out, 11, &written, png, size));
    CHECK(written == 4 * 3); /* the bytes needed */
    written = 0;
    CHECK_STATUS(ck_png_decode(out, 12, &written, png, size), CK_OK);
    CHECK(written == 4 * 3);
    CHECK(memcmp(out, px, 12) == 0);
    /* Every truncation, and every byte changed, is CK_E_CORRUPT. */
    for (i = 0; i < size; i++) {
        CHECK_STATUS(ck_png_decode(out, sizeof out, &written, png, i), CK_E_CORRUPT);
    }
    for (i = 0; i < size; i++) {
        png[i] ^= 0x21;
        CHECK_STATUS(ck_png_decode(out, sizeof out, &written, png, size), CK_E_CORRUPT);
        png[i] ^= 0x21;
    }
    written = 0;
    CHECK_STATUS(ck_png_decode(out, sizeof out, &written, png, size), CK_OK);
    CHECK(written == 4 * 3); /* a larger dst: the image's bytes, not dst_capacity */
    free(png);
}

static void test_foreign_files(void)
{
    unsigned char out[64];
    uint32_t w = 0, h = 0;
    int32_t f = 0;
    size_t written = 0;
    /* Several IDAT chunks of 3 bytes, written by pypng. */
    CHECK_STATUS(ck_png_info(&w, &h, &f, k_split_png, sizeof k_split_png), CK_OK);
    CHECK(w == 3 && h == 2 && f == CK_IMAGE_FORMAT_GRAY8);
    CHECK_STATUS(ck_png_decode(out, sizeof out, &written, k_split_png, sizeof k_split_png), CK_OK);
    CHECK(written == 3 * 2);
    CHECK(out[0] == 10 && out[1] == 20 && out[2] == 30 && out[3] == 40 && out[4] == 50 && out[5] == 60);
    /* Valid PNGs of kinds this library does not read. */
    ERR(CK_E_UNSUPPORTED, "palette", ck_png_info, (&w, &h, &f, k_palette_png, sizeof k_palette_png));
    ERR(CK_E_UNSUPPORTED, "palette", ck_png_decode, (out, sizeof out, &written, k_palette_png, sizeof k_palette_png));
    ERR(CK_E_UNSUPPORTED, "interlaced", ck_png_info, (&w, &h, &f, k_interlaced_png, sizeof k_interlaced_png));
    ERR(CK_E_UNSUPPORTED, "interlaced", ck_png_decode, (out, sizeof out, &written, k_interlaced_png, sizeof k_interlaced_png));
    ERR(CK_E_UNSUPPORTED, "16-bit", ck_png_decode, (out, sizeof out, &written, k_rgb16_png, sizeof k_rgb16_png));
}

static void test_files(void)
{
    char path[256], missing[256], nodir[256], notdir[256];
    unsigned char a[6 * 5 * 3], b[4] = {1, 2, 3, 4}, out[6 * 5 * 3];
    uint32_t w = 0, h = 0;
    int32_t f = 0;
    size_t written = 0;
    struct stat st;
    path_in_dir(path, sizeof path, "a.png");
    path_in_dir(missing, sizeof missing, "missing.png");
    path_in_dir(nodir, sizeof nodir, "no/such/dir.png");
    path_in_dir(notdir, sizeof notdir, "a.png/inside.png");
    fill(a, sizeof a, 5, 1);

    ERR(CK_E_INVALID_ARGUMENT, "path", ck_png_write, (NULL, &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_png_write, ("", &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "UTF-8", ck_png_write, ("\xff\xfe.png", &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "image.data", ck_png_write, (path, &(ck_image){ NULL, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "format", ck_png_write, (path, &(ck_image){ a, 6, 5, 18, 9, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_png_write, (path, &(ck_image){ a, 6, 5, 17, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_png_write, (path, &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 11, 0));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_png_write, (path, &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 2));
    CHECK(stat(path, &st) != 0); /* nothing written by the failed calls */

    CHECK_STATUS(ck_png_write(path, &(ck_image){ a, 6, 5, 18, CK_IMAGE_FORMAT_RGB8, 0 }, 0, 0), CK_OK);
    ERR(CK_E_EXISTS, "exists", ck_png_write, (path, &(ck_image){ b, 2, 2, 2, CK_IMAGE_FORMAT_GRAY8, 0 }, 0, 0));
    CHECK_STATUS(ck_png_read_info(&w, &h, &f, path), CK_OK);
    CHECK(w == 6 && h == 5 && f == CK_IMAGE_FORMAT_RGB8);
    CHECK_STATUS(ck_png_read(out, sizeof out, &written, path), CK_OK);
    CHECK(written == 6 * 5 * 3);
    CHECK(memcmp(out, a, sizeof a) == 0);
    CHECK_STATUS(ck_png_write(path, &(ck_image){ b, 2, 2, 2, CK_IMAGE_FORMAT_GRAY8, 0 }, 9, CK_OPEN_OVERWRITE), CK_OK);
    CHECK_STATUS(ck_png_read_info(&w, &h, &f, path), CK_OK);
    CHECK(w == 2 && h == 2 && f == CK_IMAGE_FORMAT_GRAY8);
    CHECK_STATUS(ck_png_read(out, sizeof out, &written, path), CK_OK);
    CHECK(written == 2 * 2);
    CHECK(memcmp(out, b, 4) == 0);

    ERR(CK_E_NOT_FOUND, "missing.png", ck_png_read, (out, sizeof out, &written, missing));
    ERR(CK_E_NOT_FOUND, "missing.png", ck_png_read_info, (&w, &h, &f, missing));
    ERR(CK_E_NOT_FOUND, NULL, ck_png_write, (nodir, &(ck_image){ b, 2, 2, 2, CK_IMAGE_FORMAT_GRAY8, 0 }, 0, 0));
    ERR(CK_E_IO, NULL, ck_png_write, (notdir, &(ck_image){ b, 2, 2, 2, CK_IMAGE_FORMAT_GRAY8, 0 }, 0, 0)); /* a file as directory */
    ERR(CK_E_IO, NULL, ck_png_read, (out, sizeof out, &written, g_dir));                  /* a directory as file */
    written = 0;
    ERR(CK_E_BUFFER_TOO_SMALL, "dst", ck_png_read, (out, 3, &written, path));
    CHECK(written == 2 * 2); /* the bytes needed */
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_png_read, (NULL, sizeof out, &written, path));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_png_read, (out, SIZE_MAX, &written, path));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_png_read, (out, sizeof out, &written, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "UTF-8", ck_png_read, (out, sizeof out, &written, "\xc3\x28.png"));
    ERR(CK_E_INVALID_ARGUMENT, "width_out", ck_png_read_info, (NULL, &h, &f, path));
    ERR(CK_E_INVALID_ARGUMENT, "height_out", ck_png_read_info, (&w, NULL, &f, path));
    ERR(CK_E_INVALID_ARGUMENT, "format_out", ck_png_read_info, (&w, &h, NULL, path));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_png_read_info, (&w, &h, &f, NULL));

    /* A damaged file on disk. */
    {
        FILE *fp = fopen(path, "wb");
        CHECK(fp != NULL);
        if (fp != NULL) {
            fwrite(k_split_png, 1, sizeof k_split_png - 5, fp);
            fclose(fp);
        }
        ERR(CK_E_CORRUPT, NULL, ck_png_read, (out, sizeof out, &written, path));
        fp = fopen(path, "wb");
        if (fp != NULL) {
            fwrite(k_palette_png, 1, sizeof k_palette_png, fp);
            fclose(fp);
        }
        ERR(CK_E_UNSUPPORTED, NULL, ck_png_read_info, (&w, &h, &f, path));
        ERR(CK_E_UNSUPPORTED, NULL, ck_png_read, (out, sizeof out, &written, path));
    }
    unlink(path);
}

/* JPEG (ck_jpeg_encode, 0.2 call shape): a valid baseline JPEG whose header says the image's size
 * and component count; every status it documents. Pillow checks the pixels
 * (bindings/python/tests/test_png.py). */
static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

static void test_jpeg(void)
{
    static unsigned char px[48 * 32 * 4], dst[64 * 1024];
    size_t written = 0, i, bound = ck_jpeg_encode_bound(48, 32, CK_IMAGE_FORMAT_RGB8);
    ck_image img = { px, 48, 32, 0, CK_IMAGE_FORMAT_RGB8, 0u };
    const int formats[3] = { CK_IMAGE_FORMAT_GRAY8, CK_IMAGE_FORMAT_RGB8, CK_IMAGE_FORMAT_RGBA8 };
    int f;
    for (i = 0; i < sizeof px; i++) px[i] = (unsigned char)((i * 13u) ^ (i >> 5));
    CHECK(bound > 48 * 32 * 3 / 4 && bound <= sizeof dst);
    CHECK(ck_jpeg_encode_bound(0, 32, CK_IMAGE_FORMAT_RGB8) == 0 && ck_jpeg_encode_bound(65536, 1, CK_IMAGE_FORMAT_RGB8) == 0);
    CHECK(ck_jpeg_encode_bound(4, 4, CK_IMAGE_FORMAT_GRAY16) == 0 && ck_jpeg_encode_bound(4, 4, 9) == 0);
    for (f = 0; f < 3; f++) {
        const unsigned char *p, *end;
        int sof = 0;
        img.format = formats[f];
        CHECK_STATUS(ck_jpeg_encode(dst, sizeof dst, &written, &img, 0), CK_OK);
        CHECK(written > 100 && written <= bound);
        CHECK(dst[0] == 0xFF && dst[1] == 0xD8 && dst[written - 2] == 0xFF && dst[written - 1] == 0xD9);
        /* Walk the markers to the baseline frame header (SOF0): height, width, components. */
        for (p = dst + 2, end = dst + written; p + 4 <= end && p[0] == 0xFF && !sof; p += 2 + be16(p + 2)) {
            if (p[1] == 0xC0) {
                sof = 1;
                CHECK(p[4] == 8 && be16(p + 5) == 32 && be16(p + 7) == 48);
                CHECK(p[9] == (formats[f] == CK_IMAGE_FORMAT_GRAY8 ? 1 : 3));
            }
        }
        CHECK(sof);
    }
    img.format = CK_IMAGE_FORMAT_RGB8;
    {   /* Higher quality, more bytes; a stride gives the same JPEG as packed rows. */
        size_t q20 = 0, q95 = 0;
        static unsigned char padded[32][48 * 3 + 5], again[64 * 1024];
        ck_image strided = { padded, 48, 32, 48 * 3 + 5, CK_IMAGE_FORMAT_RGB8, 0u };
        CHECK_STATUS(ck_jpeg_encode(dst, sizeof dst, &q20, &img, 20), CK_OK);
        CHECK_STATUS(ck_jpeg_encode(dst, sizeof dst, &q95, &img, 95), CK_OK);
        CHECK(q20 < q95);
        for (i = 0; i < 32; i++) memcpy(padded[i], px + i * 48 * 3, 48 * 3);
        CHECK_STATUS(ck_jpeg_encode(dst, sizeof dst, &written, &img, 90), CK_OK);
        CHECK_STATUS(ck_jpeg_encode(again, sizeof again, &q20, &strided, 0), CK_OK);
        CHECK(q20 == written && memcmp(again, dst, written) == 0);
    }
    written = 7;
    ERR(CK_E_BUFFER_TOO_SMALL, "ck_jpeg_encode_bound", ck_jpeg_encode, (NULL, 0, &written, &img, 0));
    CHECK(written == bound);
    written = 7;
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_jpeg_encode, (dst, bound - 1, &written, &img, 0));
    CHECK(written == bound);
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_jpeg_encode, (NULL, 100, &written, &img, 0));
    ERR(CK_E_INVALID_ARGUMENT, "image", ck_jpeg_encode, (dst, sizeof dst, &written, NULL, 0));
    ERR(CK_E_INVALID_ARGUMENT, "quality", ck_jpeg_encode, (dst, sizeof dst, &written, &img, 101));
    ERR(CK_E_INVALID_ARGUMENT, "quality", ck_jpeg_encode, (dst, sizeof dst, &written, &img, -1));
    img.stride = 10;
    ERR(CK_E_INVALID_ARGUMENT, "stride", ck_jpeg_encode, (dst, sizeof dst, &written, &img, 0));
    img.stride = 0; img.format = CK_IMAGE_FORMAT_GRAY16;
    ERR(CK_E_UNSUPPORTED, "gray16", ck_jpeg_encode, (dst, sizeof dst, &written, &img, 0));
    img.format = CK_IMAGE_FORMAT_GRAY8; img.width = 70000;
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_jpeg_encode, (dst, sizeof dst, &written, &img, 0));
}

int main(void)
{
    if (tmp_dir_create("ck-png-test") != 0) return 1;
    test_bound();
    test_round_trips();
    test_sixteen_bit_native_endian();
    test_encode_errors();
    test_info_and_decode_errors();
    test_foreign_files();
    test_files();
    test_jpeg();
    rmdir(g_dir);

    return CHECK_SUMMARY();
}
