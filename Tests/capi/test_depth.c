/*
 * test_depth.c — the C API test of CaptureKit's depth sections (docs/DESIGN.md#tests):
 * "Sample formats and conversions", "Native frame codec" and ".ckdepth files" of ck_depth.h.
 *
 * Uses only include/capturekit.h and the built libcapturekit.so. Covers every function of the three
 * sections: NULL for every pointer, bad formats, kinds, levels and flags, zero and too large
 * dimensions, SIZE_MAX sizes, every status code each function documents that a test can force,
 * and values checked against reference conversions written here from the header's depth rules
 * (float16 rounding to nearest even, millimetres rounding half away from zero, invalid -> 0).
 *
 * Status codes not forced here (and why): CK_E_NO_MEMORY (ck_depth_codec_create: needs a failing
 * allocator); CK_E_IO from ck_depth_writer_flush/close and ck_depth_reader_read (needs a failing
 * fsync/close/pread on a file that opened fine; the Swift tests inject those faults). CK_E_IO from
 * ck_depth_writer_append is forced with RLIMIT_FSIZE (the write fails with EFBIG), and then
 * CK_E_STATE for the next append.
 *
 * Usage: test_depth [golden-dir]. With a directory (make test-c passes Tests/golden) the committed
 * golden frames and file are decoded and compared with the committed expected values; without
 * one, Tests/golden is tried and skipped with a note if missing.
 *
 * Output: one line per failed check (file:line, expression, status names and the library's last
 * error message), then exactly one summary line "N passed, M failed". Exit status 1 on a failure.
 */
#define _XOPEN_SOURCE 700

#include "capturekit.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "support.h"

/* ============================================================================================
 * ABI guard: struct size, offsets and enum/flag values are frozen (C99: negative-array typedef)
 * ============================================================================================ */

STATIC_ASSERT(sizeof(ck_depth_info) == 32, depth_info_size);
STATIC_ASSERT(offsetof(ck_depth_info, width) == 0 && offsetof(ck_depth_info, height) == 4 &&
              offsetof(ck_depth_info, kind) == 8 && offsetof(ck_depth_info, version) == 12 &&
              offsetof(ck_depth_info, frame_count) == 16 && offsetof(ck_depth_info, torn_bytes) == 24,
              depth_info_offsets);
STATIC_ASSERT(CK_FORMAT_DEPTH_F32 == 1 && CK_FORMAT_DEPTH_F16 == 2 && CK_FORMAT_DEPTH_MM == 3 && CK_FORMAT_U8 == 4,
              format_values);
STATIC_ASSERT(CK_DEPTH_KIND_FLOAT16 == 1 && CK_DEPTH_KIND_MM == 2 && CK_DEPTH_KIND_U8 == 3, kind_values);
STATIC_ASSERT(CK_OPEN_OVERWRITE == 1u && CK_OPEN_APPEND == 2u, open_flag_values);
STATIC_ASSERT(CK_END == 2 && CK_OK == 0, end_value);
STATIC_ASSERT(CK_DEPTH_MAX_DIMENSION == 16384u, max_dimension);
STATIC_ASSERT(sizeof(float) == 4 && sizeof(uint16_t) == 2, sample_sizes);

/* ============================================================================================
 * Small helpers: bits, little-endian fields, CRC-32, a deterministic generator, files
 * ============================================================================================ */

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static uint32_t get_u32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32le(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

static uint64_t get_u64le(const unsigned char *p) { return (uint64_t)get_u32le(p) | (uint64_t)get_u32le(p + 4) << 32; }

/** CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320; zlib's crc32), table-driven. */
static uint32_t crc32_of(const void *data, size_t n)
{
    static uint32_t table[256];
    static int ready;
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    if (!ready) {
        uint32_t k, j;
        for (k = 0; k < 256; k++) {
            uint32_t v = k;
            for (j = 0; j < 8; j++) v = (v & 1) ? 0xEDB88320u ^ (v >> 1) : v >> 1;
            table[k] = v;
        }
        ready = 1;
    }
    for (i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/** xorshift64*: deterministic pseudo-random numbers. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12; g_rng ^= g_rng << 25; g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }


static unsigned char *read_file(const char *path, size_t *size_out)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data;
    long n;
    *size_out = 0;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return NULL; }
    data = (unsigned char *)malloc((size_t)n + 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) { free(data); data = NULL; }
    fclose(f);
    if (data) *size_out = (size_t)n;
    return data;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static int file_exists(const char *path) { struct stat st; return stat(path, &st) == 0; }

/* ============================================================================================
 * Reference conversions, written from the header's depth rules (not from the library's code)
 * ============================================================================================ */

/** float32 metres -> float16 bits: round to nearest even; NaN, <= 0, +inf and values rounding
 *  above 65504 -> 0. Exact double arithmetic: a float scaled by a power of two is exact. */
static uint16_t ref_f16_from_f32(float x)
{
    double v, m;
    int e;
    if (!(x > 0.0f) || isinf(x)) return 0;
    v = (double)x;
    if (v < ldexp(1.0, -14)) {                  /* float16 subnormal range: units of 2^-24 */
        m = nearbyint(ldexp(v, 24));            /* default rounding mode: to nearest, ties to even */
        return (uint16_t)m;                     /* 1024 is the smallest normal's bit pattern, too */
    }
    (void)frexp(v, &e);
    e -= 1;                                     /* 2^e <= v < 2^(e+1) */
    m = nearbyint(ldexp(v, 10 - e));            /* 1024 ... 2048 */
    if (m == 2048.0) { m = 1024.0; e += 1; }
    if (e + 15 >= 31) return 0;                 /* rounds to infinity: out of range */
    return (uint16_t)(((e + 15) << 10) | ((int)m - 1024));
}

/** float16 bits -> float32 metres: exact; negative, inf and NaN patterns -> 0 (-0 is 0 too). */
static float ref_f32_from_f16(uint16_t h)
{
    int exp = (h >> 10) & 31, man = h & 1023;
    if ((h & 0x8000) || exp == 31) return 0.0f;
    if (exp == 0) return (float)ldexp((double)man, -24);
    return (float)ldexp((double)(1024 + man), exp - 25);
}

/** float32 metres -> millimetres: round half away from zero (x * 1000 is exact in double);
 *  NaN, <= 0 and results above 65535 -> 0. */
static uint16_t ref_mm_from_f32(float x)
{
    double r;
    if (!(x > 0.0f)) return 0;
    r = round((double)x * 1000.0);
    return r > 65535.0 ? 0 : (uint16_t)r;
}

/** millimetres -> float32 metres: mm / 1000 correctly rounded (checked separately below). */
static float ref_f32_from_mm(uint16_t mm) { return (float)((double)mm / 1000.0); }

/** millimetres -> float16 bits, correctly rounded (ties to even) from the exact rational mm/1000
 *  with integer arithmetic only. */
static uint16_t ref_f16_from_mm(uint16_t mm)
{
    int e = 6;                                  /* 65.535 < 128 = 2^7 */
    uint64_t num, q, r;
    if (mm == 0) return 0;
    while ((double)mm < 1000.0 * ldexp(1.0, e)) e--;   /* exact comparisons; ends at e >= -10 */
    /* now 2^e <= mm/1000 < 2^(e+1): the 11-bit significand is mm * 2^(10-e) / 1000 */
    num = (uint64_t)mm << (10 - e);
    q = num / 1000u;
    r = num % 1000u;
    if (2 * r > 1000u || (2 * r == 1000u && (q & 1))) q++;
    if (q == 2048) { q = 1024; e++; }
    return (uint16_t)(((e + 15) << 10) | (int)(q - 1024));
}

/* ============================================================================================
 * Sample formats and conversions
 * ============================================================================================ */

static void test_format_size(void)
{
    CHECK(ck_format_size(CK_FORMAT_DEPTH_F32) == 4);
    CHECK(ck_format_size(CK_FORMAT_DEPTH_F16) == 2);
    CHECK(ck_format_size(CK_FORMAT_DEPTH_MM) == 2);
    CHECK(ck_format_size(CK_FORMAT_U8) == 1);
    CHECK(ck_format_size(0) == 0);
    CHECK(ck_format_size(5) == 0);
    CHECK(ck_format_size(-1) == 0);
    CHECK(ck_format_size(INT32_MAX) == 0);
    CHECK(ck_format_size(INT32_MIN) == 0);
}

static void test_convert_arguments(void)
{
    float f[4] = {1, 2, 3, 4};
    uint16_t h[4];
    unsigned char b[8] = {0, 1, 2, 3, 4, 5, 6, 7}, c[8];

    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_depth_convert, (NULL, CK_FORMAT_DEPTH_F16, f, CK_FORMAT_DEPTH_F32, 4));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_depth_convert, (h, CK_FORMAT_DEPTH_F16, NULL, CK_FORMAT_DEPTH_F32, 4));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_convert, (h, 0, f, CK_FORMAT_DEPTH_F32, 4));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_convert, (h, 5, f, CK_FORMAT_DEPTH_F32, 4));
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_depth_convert, (h, CK_FORMAT_DEPTH_F16, f, -1, 4));
    ERR(CK_E_INVALID_ARGUMENT, "src_format", ck_depth_convert, (h, CK_FORMAT_DEPTH_F16, f, INT32_MAX, 4));
    /* U8 <-> depth */
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_convert, (b, CK_FORMAT_U8, h, CK_FORMAT_DEPTH_F16, 4));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_convert, (h, CK_FORMAT_DEPTH_MM, b, CK_FORMAT_U8, 4));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_convert, (f, CK_FORMAT_DEPTH_F32, b, CK_FORMAT_U8, 2));
    /* counts whose byte size overflows, and SIZE_MAX */
    ERR(CK_E_INVALID_ARGUMENT, "count", ck_depth_convert, (h, CK_FORMAT_DEPTH_F16, f, CK_FORMAT_DEPTH_F32, SIZE_MAX));
    ERR(CK_E_INVALID_ARGUMENT, "count", ck_depth_convert, (h, CK_FORMAT_DEPTH_F16, f, CK_FORMAT_DEPTH_F32, SIZE_MAX / 4 + 1));
    ERR(CK_E_INVALID_ARGUMENT, "count", ck_depth_convert, (c, CK_FORMAT_U8, b, CK_FORMAT_U8, SIZE_MAX / 2 + 1));
    /* overlapping buffers of different formats */
    ERR(CK_E_INVALID_ARGUMENT, "overlap", ck_depth_convert, (f, CK_FORMAT_DEPTH_F16, f, CK_FORMAT_DEPTH_F32, 4));
    ERR(CK_E_INVALID_ARGUMENT, "overlap", ck_depth_convert, ((unsigned char *)f + 2, CK_FORMAT_DEPTH_F16, f,
                                                             CK_FORMAT_DEPTH_F32, 2));

    /* count 0: pointers may be NULL */
    CHECK_STATUS(ck_depth_convert(NULL, CK_FORMAT_DEPTH_F16, NULL, CK_FORMAT_DEPTH_F32, 0), CK_OK);
    CHECK_STATUS(ck_depth_convert(NULL, CK_FORMAT_U8, NULL, CK_FORMAT_U8, 0), CK_OK);
    /* identical formats: a copy, in place allowed */
    CHECK_STATUS(ck_depth_convert(c, CK_FORMAT_U8, b, CK_FORMAT_U8, 8), CK_OK);
    CHECK(memcmp(b, c, 8) == 0);
    CHECK_STATUS(ck_depth_convert(b, CK_FORMAT_U8, b, CK_FORMAT_U8, 8), CK_OK);
    CHECK(memcmp(b, c, 8) == 0);
    CHECK_STATUS(ck_depth_convert(f, CK_FORMAT_DEPTH_F32, f, CK_FORMAT_DEPTH_F32, 4), CK_OK);
    CHECK(f[0] == 1 && f[3] == 4);
    h[0] = 0x3C00; h[1] = 0; h[2] = 7; h[3] = 0x7BFF;
    CHECK_STATUS(ck_depth_convert(h, CK_FORMAT_DEPTH_MM, h, CK_FORMAT_DEPTH_MM, 4), CK_OK);
    CHECK(h[0] == 0x3C00 && h[1] == 0 && h[2] == 7 && h[3] == 0x7BFF);
    /* adjacent (not overlapping) buffers of different formats */
    {
        unsigned char buf[24];
        float two[2] = {1.0f, 2.0f};
        memcpy(buf, two, 8);
        CHECK_STATUS(ck_depth_convert(buf + 8, CK_FORMAT_DEPTH_F16, buf, CK_FORMAT_DEPTH_F32, 2), CK_OK);
        CHECK(buf[8] == 0x00 && buf[9] == 0x3C && buf[10] == 0x00 && buf[11] == 0x40); /* little-endian host */
    }
}

/** Converts n samples with ck_depth_convert from an unaligned copy (byte offset `shift`) of src. */
static ck_status convert_shifted(void *dst, int32_t dst_format, const void *src, int32_t src_format, size_t n, size_t shift)
{
    size_t bytes = n * ck_format_size(src_format);
    unsigned char *tmp = (unsigned char *)malloc(bytes + 16);
    ck_status st;
    memcpy(tmp + shift, src, bytes);
    st = ck_depth_convert(dst, dst_format, tmp + shift, src_format, n);
    free(tmp);
    return st;
}

/** Checks float32 inputs x[0..n) against the references for F16 and MM targets. */
static void check_f32_inputs(const float *x, size_t n, const char *what)
{
    uint16_t *h = (uint16_t *)malloc(n * 2 + 2), *mm = (uint16_t *)malloc(n * 2 + 2);
    size_t i, bad_h = 0, bad_mm = 0;
    char first_h[160] = "", first_mm[160] = "";
    CHECK_STATUS(ck_depth_convert(h, CK_FORMAT_DEPTH_F16, x, CK_FORMAT_DEPTH_F32, n), CK_OK);
    CHECK_STATUS(ck_depth_convert(mm, CK_FORMAT_DEPTH_MM, x, CK_FORMAT_DEPTH_F32, n), CK_OK);
    for (i = 0; i < n; i++) {
        uint16_t want = ref_f16_from_f32(x[i]), want_mm = ref_mm_from_f32(x[i]);
        if (h[i] != want && bad_h++ == 0)
            sprintf(first_h, "x = %.9g (0x%08lx) -> 0x%04x, want 0x%04x", (double)x[i], (unsigned long)f32_bits(x[i]),
                    h[i], want);
        if (mm[i] != want_mm && bad_mm++ == 0)
            sprintf(first_mm, "x = %.9g (0x%08lx) -> %u mm, want %u", (double)x[i], (unsigned long)f32_bits(x[i]),
                    mm[i], want_mm);
    }
    {
        char label[128];
        sprintf(label, "%s: F32 -> F16", what);
        CHECK_SAME(label, bad_h, first_h);
        sprintf(label, "%s: F32 -> MM", what);
        CHECK_SAME(label, bad_mm, first_mm);
    }
    free(h);
    free(mm);
}

static void test_convert_f32(void)
{
    static const uint32_t special_bits[] = {
        0x00000000u, 0x80000000u,               /* +0, -0 */
        0x7F800000u, 0xFF800000u,               /* +inf, -inf */
        0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FBFFFFFu, 0xFFFFFFFFu, /* NaNs (quiet, signalling, negative) */
        0x00000001u, 0x007FFFFFu, 0x00800000u,  /* float32 subnormals, FLT_MIN */
        0x33000000u,                            /* 2^-25: tie between 0 and the smallest subnormal -> 0 (even) */
        0x33000001u,                            /* just above -> 2^-24 */
        0x33800000u,                            /* 2^-24: smallest float16 subnormal */
        0x33C00000u,                            /* 1.5 * 2^-24: tie -> 2 * 2^-24 (even) */
        0x38800000u, 0x387FC000u, 0x387FE000u,  /* 2^-14 (smallest normal), largest subnormal, tie to normal */
        0x3F800000u, 0x3F801000u, 0x3F803000u, 0x3F800FFFu, 0x3F801001u, /* 1.0 and ties around it */
        0x477FE000u,                            /* 65504 */
        0x477FEFFFu,                            /* just below 65520: -> 65504 */
        0x477FF000u,                            /* 65520: would round to inf -> out of range */
        0x47800000u, 0x7F7FFFFFu,               /* 65536, FLT_MAX */
        0xBF800000u, 0xC77FE000u,               /* -1, -65504 */
        0x3A83126Fu,                            /* 0.001 */
        0x3F000000u, 0x3F001000u,               /* 0.5 and a tie above it */
        0x3F7FF7CFu,                            /* 0.99987..: mm tie region */
        0x42831EB8u                             /* 65.56: mm out of range */
    };
    static const float special_values[] = {
        0.0005f, 0.0015f, 0.0025f, 65.535f, 65.5355f, 65.5349f, 65.536f, 1.2345f, 3.0f, 0.9995f, 2.5e-4f
    };
    size_t n_special = sizeof special_bits / sizeof special_bits[0] + sizeof special_values / sizeof special_values[0];
    float *x;
    size_t i, n;

    /* Reference self-checks against known float16 encodings. */
    CHECK(ref_f16_from_f32(1.0f) == 0x3C00);
    CHECK(ref_f16_from_f32(65504.0f) == 0x7BFF);
    CHECK(ref_f16_from_f32(0.5f) == 0x3800);
    CHECK(ref_f16_from_f32(f32_from_bits(0x33800000u)) == 0x0001);
    CHECK(ref_f16_from_f32(f32_from_bits(0x33000000u)) == 0x0000);
    CHECK(ref_f16_from_f32(f32_from_bits(0x477FF000u)) == 0x0000);
    CHECK(ref_f32_from_f16(0x3555) == f32_from_bits(0x3EAAA000u));
    CHECK(ref_mm_from_f32(0.0015f) == 2 && ref_mm_from_f32(65.535f) == 65535 && ref_mm_from_f32(65.536f) == 0);
    CHECK(ref_f16_from_mm(1000) == 0x3C00 && ref_f16_from_mm(1) == ref_f16_from_f32(0.001f));

    x = (float *)malloc(sizeof(float) * (1u << 21));

    /* Special values. */
    n = 0;
    for (i = 0; i < sizeof special_bits / sizeof special_bits[0]; i++) x[n++] = f32_from_bits(special_bits[i]);
    for (i = 0; i < sizeof special_values / sizeof special_values[0]; i++) x[n++] = special_values[i];
    CHECK(n == n_special);
    check_f32_inputs(x, n, "special values");
    /* Each special value alone, at every position of a 9-sample buffer (SIMD body and scalar tail). */
    {
        size_t pos, bad = 0;
        char first[128] = "";
        for (i = 0; i < n_special; i++) {
            for (pos = 0; pos < 9; pos++) {
                float buf[9];
                uint16_t out[9];
                size_t k;
                for (k = 0; k < 9; k++) buf[k] = 1.0f;
                buf[pos] = x[i];
                CHECK_STATUS(convert_shifted(out, CK_FORMAT_DEPTH_F16, buf, CK_FORMAT_DEPTH_F32, 9, pos & 3), CK_OK);
                for (k = 0; k < 9; k++) {
                    uint16_t want = k == pos ? ref_f16_from_f32(x[i]) : 0x3C00;
                    if (out[k] != want && bad++ == 0) sprintf(first, "value %lu at %lu", (unsigned long)i, (unsigned long)k);
                }
            }
        }
        CHECK_SAME("special values at every lane, unaligned", bad, first);
    }

    /* Every float16 value as float32 (exact), every midpoint between neighbours (ties), and the
     * floats one ulp either side of each midpoint. */
    n = 0;
    for (i = 0; i < 0x7C00; i++) {
        float v = ref_f32_from_f16((uint16_t)i), next = ref_f32_from_f16((uint16_t)(i + 1));
        float mid = (float)(((double)v + (double)next) / 2);  /* exact: float16 midpoints fit float32 */
        x[n++] = v;
        x[n++] = -v;
        if (i + 1 < 0x7C00) {
            x[n++] = mid;
            x[n++] = nextafterf(mid, 0.0f);
            x[n++] = nextafterf(mid, INFINITY);
        }
    }
    /* the midpoint above 65504 and its neighbours */
    x[n++] = 65520.0f; x[n++] = nextafterf(65520.0f, 0.0f); x[n++] = nextafterf(65520.0f, INFINITY);
    check_f32_inputs(x, n, "every float16 value, midpoints and neighbours");

    /* 2M random float32 bit patterns (NaN, inf, subnormals, negatives included) ... */
    n = 1u << 21;
    for (i = 0; i < n; i++) x[i] = f32_from_bits((uint32_t)(rnd() >> 32));
    check_f32_inputs(x, n, "random float32 bit patterns");
    /* ... and 2M random positive floats in the depth range 0 .. 70 m. */
    for (i = 0; i < n; i++) x[i] = (float)(rnd_unit() * 70.0);
    check_f32_inputs(x, n, "random depths 0..70 m");
    /* millimetre ties: (k + 0.5) / 1000 for k = 0 .. 65535 (nearest float, ties only where exact) */
    n = 0;
    for (i = 0; i < 65536; i++) x[n++] = (float)(((double)i + 0.5) / 1000.0);
    check_f32_inputs(x, n, "millimetre midpoints");
    /* odd counts and unaligned sources: the SIMD body and the scalar tail agree with the reference */
    {
        size_t count, shift, bad = 0;
        char first[128] = "";
        for (i = 0; i < 64; i++) x[i] = (float)(rnd_unit() * 20.0 - 2.0);
        x[5] = NAN; x[17] = INFINITY; x[30] = -0.0f; x[41] = 1e-9f;
        for (count = 1; count <= 64; count++) {
            for (shift = 0; shift < 4; shift++) {
                uint16_t out[65];
                size_t k;
                out[count] = 0xABCD;
                CHECK_STATUS(convert_shifted(out, CK_FORMAT_DEPTH_F16, x, CK_FORMAT_DEPTH_F32, count, shift), CK_OK);
                for (k = 0; k < count; k++)
                    if (out[k] != ref_f16_from_f32(x[k]) && bad++ == 0) sprintf(first, "count %lu shift %lu index %lu",
                                                                        (unsigned long)count, (unsigned long)shift, (unsigned long)k);
                if (out[count] != 0xABCD && bad++ == 0) sprintf(first, "count %lu wrote past the end", (unsigned long)count);
            }
        }
        CHECK_SAME("F32 -> F16 at counts 1..64, unaligned", bad, first);
    }
    free(x);
}

static void test_convert_f16_and_mm(void)
{
    uint16_t *src = (uint16_t *)malloc(65536 * 2), *u = (uint16_t *)malloc(65536 * 2);
    float *f = (float *)malloc(65536 * 4);
    size_t i, bad = 0, bad_mm = 0, bad_round = 0;
    char first[160] = "", first_mm[160] = "", first_round[160] = "";

    for (i = 0; i < 65536; i++) src[i] = (uint16_t)i;

    /* Every float16 bit pattern -> F32 and -> MM. */
    CHECK_STATUS(ck_depth_convert(f, CK_FORMAT_DEPTH_F32, src, CK_FORMAT_DEPTH_F16, 65536), CK_OK);
    CHECK_STATUS(ck_depth_convert(u, CK_FORMAT_DEPTH_MM, src, CK_FORMAT_DEPTH_F16, 65536), CK_OK);
    for (i = 0; i < 65536; i++) {
        float want = ref_f32_from_f16((uint16_t)i);
        uint16_t want_mm = ref_mm_from_f32(want);
        if (f32_bits(f[i]) != f32_bits(want) && bad++ == 0)
            sprintf(first, "0x%04lx -> %.9g, want %.9g", (unsigned long)i, (double)f[i], (double)want);
        if (u[i] != want_mm && bad_mm++ == 0) sprintf(first_mm, "0x%04lx -> %u mm, want %u", (unsigned long)i, u[i], want_mm);
    }
    CHECK_SAME("every float16 pattern -> F32", bad, first);
    CHECK_SAME("every float16 pattern -> MM", bad_mm, first_mm);
    CHECK(f[0x3C00] == 1.0f && f[0xBC00] == 0.0f && f[0x7C00] == 0.0f && f[0x7E00] == 0.0f && f[0x8000] == 0.0f);
    CHECK(f32_bits(f[0x8000]) == 0 && f32_bits(f[0xFE00]) == 0); /* +0, not -0 */

    /* Every millimetre value -> F32 (correctly rounded) and -> F16 (correctly rounded from mm/1000). */
    bad = bad_mm = 0;
    CHECK_STATUS(ck_depth_convert(f, CK_FORMAT_DEPTH_F32, src, CK_FORMAT_DEPTH_MM, 65536), CK_OK);
    CHECK_STATUS(ck_depth_convert(u, CK_FORMAT_DEPTH_F16, src, CK_FORMAT_DEPTH_MM, 65536), CK_OK);
    for (i = 0; i < 65536; i++) {
        float want = ref_f32_from_mm((uint16_t)i);
        uint16_t want_h = ref_f16_from_mm((uint16_t)i);
        if (f32_bits(f[i]) != f32_bits(want) && bad++ == 0)
            sprintf(first, "%lu mm -> %.9g, want %.9g", (unsigned long)i, (double)f[i], (double)want);
        if (u[i] != want_h && bad_mm++ == 0) sprintf(first_mm, "%lu mm -> 0x%04x, want 0x%04x", (unsigned long)i, u[i], want_h);
        if (i > 0) {
            /* correct rounding: no neighbouring float is closer to mm/1000 (products exact in double) */
            double e0 = fabs((double)f[i] * 1000.0 - (double)i);
            double e1 = fabs((double)nextafterf(f[i], 0.0f) * 1000.0 - (double)i);
            double e2 = fabs((double)nextafterf(f[i], INFINITY) * 1000.0 - (double)i);
            if ((e0 > e1 || e0 > e2) && bad_round++ == 0) sprintf(first_round, "%lu mm -> %.9g", (unsigned long)i, (double)f[i]);
        }
    }
    CHECK_SAME("every millimetre value -> F32", bad, first);
    CHECK_SAME("every millimetre value -> F32 is correctly rounded", bad_round, first_round);
    CHECK_SAME("every millimetre value -> F16", bad_mm, first_mm);
    CHECK(f[0] == 0.0f && f[1000] == 1.0f && u[1000] == 0x3C00 && u[0] == 0);

    /* MM -> F16 -> MM: float16 keeps 11 bits, so a round trip is within half a float16 step. */
    free(src);
    free(u);
    free(f);
}

/* ============================================================================================
 * Native frame codec
 * ============================================================================================ */

static void test_codec_create_free(void)
{
    ck_depth_codec *c = NULL;
    int32_t level;
    ERR(CK_E_INVALID_ARGUMENT, "codec_out", ck_depth_codec_create, (NULL, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_codec_create, (&c, -1));
    CHECK(c == NULL);
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_codec_create, (&c, 20));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_codec_create, (&c, INT32_MIN));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_codec_create, (&c, INT32_MAX));
    CHECK(c == NULL);
    for (level = 0; level <= 19; level++) {
        c = NULL;
        CHECK_STATUS(ck_depth_codec_create(&c, level), CK_OK);
        CHECK(c != NULL);
        ck_depth_codec_free(c);
    }
    ck_depth_codec_free(NULL);
}

static unsigned char *encode_frame(ck_depth_codec *c, const void *src, uint32_t w, uint32_t h, int32_t format, size_t *size_out);

/** CK_DEPTH_LEVEL_ARCHIVAL (issue 24): the same frame version, smaller, through the codec and
 *  the writer; every level decodes with a default codec. */
static void test_archival_level(void)
{
    enum { W = 160, H = 120 };
    static uint16_t mm[W * H], back[W * H];
    ck_depth_codec *fast = NULL, *archival = NULL;
    ck_depth_map m = {mm, W, H, 0, CK_FORMAT_DEPTH_MM, 0};
    size_t i, a = 0, b = 0, written = 0;
    unsigned char *fa, *fb;
    CHECK(CK_DEPTH_LEVEL_ARCHIVAL == 19);
    for (i = 0; i < (size_t)W * H; i++) { /* disparity-quantised planes with speckle and holes */
        size_t x = i % W, y = i / W;
        double z = 900.0 + 3.1 * x + 1.7 * y + (rnd() % 7 == 0 ? (double)(rnd() % 40) : 0.0);
        mm[i] = rnd() % 23 == 0 ? 0 : (uint16_t)(4e5 / (int)(4e5 / z));
    }
    CHECK_STATUS(ck_depth_codec_create(&fast, 0), CK_OK);
    CHECK_STATUS(ck_depth_codec_create(&archival, CK_DEPTH_LEVEL_ARCHIVAL), CK_OK);
    fa = encode_frame(fast, mm, W, H, CK_FORMAT_DEPTH_MM, &a);
    fb = encode_frame(archival, mm, W, H, CK_FORMAT_DEPTH_MM, &b);
    if (fa && fb) {
        CHECK(fa[2] == 4 && fb[2] == 4 && b < a); /* one format, compressed harder */
        CHECK_STATUS(ck_depth_decode(back, sizeof back, &written, fast, fb, b, CK_FORMAT_DEPTH_MM), CK_OK);
        CHECK(written == sizeof back && memcmp(back, mm, sizeof mm) == 0);
    }
    free(fa);
    free(fb);
    { /* the writer at the archival level: a file any reader reads back */
        const char *path = tmp_path("archival.ckdepth");
        ck_depth_writer *w = NULL;
        ck_depth_reader *r = NULL;
        double t = -1;
        remove(path);
        CHECK_STATUS(ck_depth_writer_open(&w, path, W, H, CK_DEPTH_KIND_MM, CK_DEPTH_LEVEL_ARCHIVAL, 0), CK_OK);
        CHECK_STATUS(ck_depth_writer_append(w, &m, 0.5), CK_OK);
        CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
        CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
        memset(back, 0, sizeof back);
        CHECK_STATUS(ck_depth_reader_read(back, sizeof back, &written, &t, r, 0, CK_FORMAT_DEPTH_MM), CK_OK);
        CHECK(memcmp(back, mm, sizeof mm) == 0 && t == 0.5);
        ck_depth_reader_close(r);
        remove(path);
    }
    ck_depth_codec_free(fast);
    ck_depth_codec_free(archival);
}

static void test_encode_bound(void)
{
    size_t b16 = ck_depth_encode_bound(256, 192, CK_FORMAT_DEPTH_F16);
    CHECK(b16 > 32);
    CHECK(ck_depth_encode_bound(256, 192, CK_FORMAT_DEPTH_F32) == b16); /* stored as float16 too */
    CHECK(ck_depth_encode_bound(256, 192, CK_FORMAT_DEPTH_MM) == b16);
    CHECK(ck_depth_encode_bound(256, 192, CK_FORMAT_U8) > 256 * 192);
    CHECK(ck_depth_encode_bound(1, 1, CK_FORMAT_DEPTH_F16) > 32);
    CHECK(ck_depth_encode_bound(1, 1, CK_FORMAT_U8) > 32);
    CHECK(ck_depth_encode_bound(16384, 16384, CK_FORMAT_DEPTH_F32) > (size_t)16384 * 16384);
    CHECK(ck_depth_encode_bound(16384, 1, CK_FORMAT_U8) > 16384);
    CHECK(ck_depth_encode_bound(0, 192, CK_FORMAT_DEPTH_F16) == 0);
    CHECK(ck_depth_encode_bound(256, 0, CK_FORMAT_DEPTH_F16) == 0);
    CHECK(ck_depth_encode_bound(16385, 1, CK_FORMAT_DEPTH_F16) == 0);
    CHECK(ck_depth_encode_bound(1, 16385, CK_FORMAT_U8) == 0);
    CHECK(ck_depth_encode_bound(UINT32_MAX, UINT32_MAX, CK_FORMAT_DEPTH_F16) == 0);
    CHECK(ck_depth_encode_bound(256, 192, 0) == 0);
    CHECK(ck_depth_encode_bound(256, 192, 5) == 0);
    CHECK(ck_depth_encode_bound(256, 192, -1) == 0);
    /* monotonic in the pixel count */
    CHECK(ck_depth_encode_bound(257, 192, CK_FORMAT_DEPTH_F16) >= b16);
}

/** A LiDAR-like test frame of width x height float metres: a tilted plane with noise, holes,
 *  a far step (escapes), and (if `specials`) NaN, negative and +inf pixels. */
static void make_depth_f32(float *d, uint32_t width, uint32_t height, int specials)
{
    uint32_t x, y;
    for (y = 0; y < height; y++) {
        for (x = 0; x < width; x++) {
            double v = 1.2 + 0.004 * x + 0.007 * y + 0.002 * (rnd_unit() - 0.5);
            uint64_t r = rnd() % 100;
            if (x > width / 2 && y > height / 3) v += 3.5;        /* a step: large residuals */
            if (r < 6) v = 0.0;                                   /* holes */
            else if (r < 8) v = rnd_unit() * 60.0;                /* outliers: long escapes */
            d[(size_t)y * width + x] = (float)v;
            if (specials && r == 8) d[(size_t)y * width + x] = NAN;
            if (specials && r == 9) d[(size_t)y * width + x] = -0.5f;
            if (specials && r == 10) d[(size_t)y * width + x] = INFINITY;
            if (specials && r == 11) d[(size_t)y * width + x] = 70000.0f;
        }
    }
}

/** Encodes `src` into a malloc'd buffer; returns it (NULL on failure) with the size. */
static unsigned char *encode_frame(ck_depth_codec *c, const void *src, uint32_t w, uint32_t h, int32_t format, size_t *size_out)
{
    size_t bound = ck_depth_encode_bound(w, h, format), written = 0;
    unsigned char *dst = (unsigned char *)malloc(bound);
    ck_status st = ck_depth_encode(dst, bound, &written, c, &(ck_depth_map){ src, w, h, 0, format, 0 });
    CHECK_STATUS(st, CK_OK);
    CHECK(written <= bound && written >= 32);
    if (st != CK_OK) { free(dst); *size_out = 0; return NULL; }
    *size_out = written;
    return dst;
}

static void test_encode_arguments(void)
{
    ck_depth_codec *c = NULL;
    uint16_t px[6 * 4];
    unsigned char out[4096];
    size_t written = 12345, i;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (i = 0; i < 24; i++) px[i] = (uint16_t)(0x3C00 + i);

    ERR(CK_E_INVALID_ARGUMENT, "codec", ck_depth_encode, (out, sizeof out, &written, NULL, &(ck_depth_map){ px, 6, 4, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_depth_encode, (NULL, sizeof out, &written, c, &(ck_depth_map){ px, 6, 4, 0, CK_FORMAT_DEPTH_F16, 0 }));
    CHECK_STATUS(ck_depth_encode(out, sizeof out, NULL, c, &(ck_depth_map){ px, 6, 4, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK); /* written_out may be NULL (0.2) */
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_depth_encode, (out, sizeof out, &written, c, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 0, 4, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 6, 0, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 16385, 1, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 1, 16385, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, UINT32_MAX, UINT32_MAX, 0, CK_FORMAT_DEPTH_F16, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 6, 4, 0, 0, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_depth_encode, (out, sizeof out, &written, c, &(ck_depth_map){ px, 6, 4, 0, 5, 0 }));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_depth_encode, (out, SIZE_MAX, &written, c, &(ck_depth_map){ px, 6, 4, 0, CK_FORMAT_DEPTH_F16, 0 }));
    CHECK(written == 12345); /* untouched on errors other than CK_E_BUFFER_TOO_SMALL */

    CHECK_STATUS(ck_depth_encode(out, sizeof out, &written, c, &(ck_depth_map){ px, 6, 4, 0, CK_FORMAT_DEPTH_F16, 0 }), CK_OK);
    CHECK(written >= 32 && written <= ck_depth_encode_bound(6, 4, CK_FORMAT_DEPTH_F16));
    ck_depth_codec_free(c);
}

static void test_buffer_too_small(void)
{
    ck_depth_codec *c = NULL;
    static const int32_t formats[] = {CK_FORMAT_DEPTH_F32, CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_MM, CK_FORMAT_U8};
    float *f = (float *)malloc(64 * 48 * 4);
    uint16_t *h = (uint16_t *)malloc(64 * 48 * 2);
    unsigned char *b = (unsigned char *)malloc(64 * 48), *out;
    size_t i, k;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    make_depth_f32(f, 64, 48, 1);
    CHECK_STATUS(ck_depth_convert(h, CK_FORMAT_DEPTH_F16, f, CK_FORMAT_DEPTH_F32, 64 * 48), CK_OK);
    for (i = 0; i < 64 * 48; i++) b[i] = (unsigned char)(rnd() % 3);
    for (k = 0; k < 4; k++) {
        const void *src = formats[k] == CK_FORMAT_DEPTH_F32 ? (const void *)f : formats[k] == CK_FORMAT_U8 ? (const void *)b : (const void *)h;
        size_t size = 0, bound = ck_depth_encode_bound(64, 48, formats[k]), written;
        unsigned char *frame = encode_frame(c, src, 64, 48, formats[k], &size);
        size_t caps[5];
        caps[0] = 0; caps[1] = 1; caps[2] = 31; caps[3] = 32; caps[4] = size - 1;
        out = (unsigned char *)malloc(bound + 1);
        for (i = 0; i < 5; i++) {
            written = 0;
            memset(out, 0xEE, bound + 1);
            ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_encode, (out, caps[i], &written, c, &(ck_depth_map){ src, 64, 48, 0, formats[k], 0 }));
            CHECK(written == bound);
            /* nothing written beyond the capacity given */
            CHECK(caps[i] > bound || out[caps[i]] == 0xEE);
        }
        /* exactly the encoded size is enough, and gives the same bytes */
        written = 0;
        CHECK_STATUS(ck_depth_encode(out, size, &written, c, &(ck_depth_map){ src, 64, 48, 0, formats[k], 0 }), CK_OK);
        CHECK(written == size && frame && memcmp(out, frame, size) == 0);
        free(out);
        free(frame);
    }
    ck_depth_codec_free(c);
    free(f); free(h); free(b);
}

static void test_frame_info(void)
{
    ck_depth_codec *c = NULL;
    uint16_t mm[15 * 7];
    unsigned char *frame, bad[64];
    size_t size = 0, i;
    int32_t kind = -9;
    uint32_t w = 9, h = 9;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (i = 0; i < 15 * 7; i++) mm[i] = (uint16_t)(1000 + 13 * i);
    frame = encode_frame(c, mm, 15, 7, CK_FORMAT_DEPTH_MM, &size);
    if (!frame) { ck_depth_codec_free(c); return; }

    ERR(CK_E_INVALID_ARGUMENT, "kind_out", ck_depth_frame_info, (NULL, &w, &h, frame, size));
    ERR(CK_E_INVALID_ARGUMENT, "width_out", ck_depth_frame_info, (&kind, NULL, &h, frame, size));
    ERR(CK_E_INVALID_ARGUMENT, "height_out", ck_depth_frame_info, (&kind, &w, NULL, frame, size));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_depth_frame_info, (&kind, &w, &h, NULL, size));
    ERR(CK_E_INVALID_ARGUMENT, "src_size", ck_depth_frame_info, (&kind, &w, &h, frame, SIZE_MAX));
    CHECK(kind == -9 && w == 9 && h == 9);
    ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, frame, 0));
    ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, frame, 31));
    ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, frame, size - 1));
    memset(bad, 0, sizeof bad);
    ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, bad, sizeof bad));
    CHECK(kind == -9 && w == 9 && h == 9);

    CHECK_STATUS(ck_depth_frame_info(&kind, &w, &h, frame, size), CK_OK);
    CHECK(kind == CK_DEPTH_KIND_MM && w == 15 && h == 7);
    /* The frozen header layout: "CF", version (4 is written; 1 to 3 are read too), kind, u32 width,
     * u32 height, u32 flags (0 in version 1; from version 2 a CRC-32 of the header with it zeroed). */
    CHECK(frame[0] == 'C' && frame[1] == 'F' && frame[2] == 4 && frame[3] == CK_DEPTH_KIND_MM);
    {
        unsigned char h32[32];
        memcpy(h32, frame, 32);
        put_u32le(h32 + 12, 0);
        CHECK(get_u32le(frame + 4) == 15 && get_u32le(frame + 8) == 7 && get_u32le(frame + 12) == crc32_of(h32, 32));
    }
    /* version 4: palette size, escape count, the size after the header, nibble rows (<= height;
     * + 2^16 when the escapes' low bytes follow the zstd frame, never for this frame's few escapes) */
    CHECK(32 + get_u32le(frame + 24) == size && get_u32le(frame + 28) <= 7);

    /* Header fields out of range -> corrupt */
    memcpy(bad, frame, 32);
    bad[0] = 'X';
    ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, bad, 32));
    {
        static const size_t offsets[] = {2, 3, 4, 8, 12};
        static const uint32_t values[] = {5, 0, 0, 0, 1};
        size_t k;
        unsigned char *copy = (unsigned char *)malloc(size);
        for (k = 0; k < 5; k++) {
            memcpy(copy, frame, size);
            if (offsets[k] < 4) copy[offsets[k]] = (unsigned char)values[k];
            else put_u32le(copy + offsets[k], values[k]);
            ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, copy, size));
        }
        memcpy(copy, frame, size);
        copy[3] = 4; /* unknown kind */
        ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, copy, size));
        memcpy(copy, frame, size);
        put_u32le(copy + 4, 16385);
        ERR(CK_E_CORRUPT, NULL, ck_depth_frame_info, (&kind, &w, &h, copy, size));
        free(copy);
    }
    free(frame);
    ck_depth_codec_free(c);
}

static void test_decode_arguments(void)
{
    ck_depth_codec *c = NULL;
    uint16_t src[10 * 3], out16[10 * 3 + 1];
    unsigned char b[10 * 3], out8[40], *frame, *frame8;
    float outf[10 * 3];
    size_t size = 0, size8 = 0, i, written = 12345;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (i = 0; i < 30; i++) { src[i] = (uint16_t)(0x3C00 + 3 * i); b[i] = (unsigned char)i; }
    frame = encode_frame(c, src, 10, 3, CK_FORMAT_DEPTH_F16, &size);
    frame8 = encode_frame(c, b, 10, 3, CK_FORMAT_U8, &size8);
    if (!frame || !frame8) { free(frame); free(frame8); ck_depth_codec_free(c); return; }

    ERR(CK_E_INVALID_ARGUMENT, "codec", ck_depth_decode, (out16, sizeof out16, &written, NULL, frame, size, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_depth_decode, (NULL, sizeof out16, &written, c, frame, size, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_depth_decode, (out16, sizeof out16, &written, c, NULL, size, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_decode, (out16, sizeof out16, &written, c, frame, size, 0));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_decode, (out16, sizeof out16, &written, c, frame, size, 5));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_depth_decode, (out16, SIZE_MAX, &written, c, frame, size, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "src_size", ck_depth_decode, (out16, sizeof out16, &written, c, frame, SIZE_MAX, CK_FORMAT_DEPTH_F16));
    /* a format that does not fit the frame's kind */
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_decode, (out8, sizeof out8, &written, c, frame, size, CK_FORMAT_U8));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_decode, (out16, sizeof out16, &written, c, frame8, size8, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_decode, (outf, sizeof outf, &written, c, frame8, size8, CK_FORMAT_DEPTH_F32));
    CHECK(written == 12345); /* untouched on errors other than CK_E_BUFFER_TOO_SMALL */
    /* too small: one byte short of width x height x sample size */
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_decode, (out16, 59, &written, c, frame, size, CK_FORMAT_DEPTH_F16));
    CHECK(written == 10 * 3 * 2); /* the bytes needed */
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_decode, (outf, 119, &written, c, frame, size, CK_FORMAT_DEPTH_F32));
    CHECK(written == 10 * 3 * 4);
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_decode, (out8, 29, &written, c, frame8, size8, CK_FORMAT_U8));
    CHECK(written == 10 * 3);
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_decode, (out16, 0, &written, c, frame, size, CK_FORMAT_DEPTH_MM));
    CHECK(written == 10 * 3 * 2);
    /* corrupt input */
    written = 12345;
    ERR(CK_E_CORRUPT, NULL, ck_depth_decode, (out16, sizeof out16, &written, c, frame, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_CORRUPT, NULL, ck_depth_decode, (out16, sizeof out16, &written, c, frame, size - 1, CK_FORMAT_DEPTH_F16));
    CHECK(written == 12345);

    /* exact capacity works; a larger one leaves the rest untouched */
    out16[30] = 0xBEEF;
    CHECK_STATUS(ck_depth_decode(out16, 60, &written, c, frame, size, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == 10 * 3 * 2);
    written = 0;
    CHECK(memcmp(out16, src, 60) == 0);
    CHECK_STATUS(ck_depth_decode(out16, sizeof out16, &written, c, frame, size, CK_FORMAT_DEPTH_F16), CK_OK);
    CHECK(written == 10 * 3 * 2); /* the frame's bytes, not dst_capacity */
    CHECK(memcmp(out16, src, 60) == 0 && out16[30] == 0xBEEF);
    memset(out8, 0x77, sizeof out8);
    CHECK_STATUS(ck_depth_decode(out8, sizeof out8, &written, c, frame8, size8, CK_FORMAT_U8), CK_OK);
    CHECK(written == 10 * 3);
    CHECK(memcmp(out8, b, 30) == 0 && out8[30] == 0x77 && out8[39] == 0x77);
    free(frame);
    free(frame8);
    ck_depth_codec_free(c);
}

/** The decoded value of stored sample `s` (kind) when read as `format`: the reference chain. */
static void expect_from_stored(void *dst, int32_t format, const uint16_t *stored16, const unsigned char *stored8,
                               int32_t kind, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (kind == CK_DEPTH_KIND_U8) { ((unsigned char *)dst)[i] = stored8[i]; continue; }
        if (kind == CK_DEPTH_KIND_FLOAT16) {
            uint16_t s = stored16[i];
            if (format == CK_FORMAT_DEPTH_F16) ((uint16_t *)dst)[i] = s;
            else if (format == CK_FORMAT_DEPTH_F32) ((float *)dst)[i] = ref_f32_from_f16(s);
            else ((uint16_t *)dst)[i] = ref_mm_from_f32(ref_f32_from_f16(s));
        } else {
            uint16_t s = stored16[i];
            if (format == CK_FORMAT_DEPTH_MM) ((uint16_t *)dst)[i] = s;
            else if (format == CK_FORMAT_DEPTH_F32) ((float *)dst)[i] = ref_f32_from_mm(s);
            else ((uint16_t *)dst)[i] = ref_f16_from_mm(s);
        }
    }
}

/** The stored kind and samples for `src` given as `format` in a frame/file of kind `kind`:
 *  the reference conversion from the input format to the kind's storage. */
static void stored_from_input(uint16_t *stored16, unsigned char *stored8, const void *src, int32_t format, int32_t kind, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (kind == CK_DEPTH_KIND_U8) { stored8[i] = ((const unsigned char *)src)[i]; continue; }
        if (kind == CK_DEPTH_KIND_FLOAT16) {
            if (format == CK_FORMAT_DEPTH_F16) stored16[i] = ((const uint16_t *)src)[i];
            else if (format == CK_FORMAT_DEPTH_F32) stored16[i] = ref_f16_from_f32(((const float *)src)[i]);
            else stored16[i] = ref_f16_from_mm(((const uint16_t *)src)[i]);
        } else {
            if (format == CK_FORMAT_DEPTH_MM) stored16[i] = ((const uint16_t *)src)[i];
            else if (format == CK_FORMAT_DEPTH_F32) stored16[i] = ref_mm_from_f32(((const float *)src)[i]);
            else stored16[i] = ref_mm_from_f32(ref_f32_from_f16(((const uint16_t *)src)[i]));
        }
    }
}

/** Input samples of `format` for an n-pixel test frame (depth formats share one scene). */
static void *make_input(int32_t format, uint32_t w, uint32_t h, int pattern)
{
    size_t n = (size_t)w * h, i;
    float *f = (float *)malloc(n * 4 + 4);
    void *out;
    if (pattern == 0) make_depth_f32(f, w, h, 1);
    for (i = 0; pattern != 0 && i < n; i++) {
        /* pattern 1: all invalid; 2: alternating extremes (every residual escapes); 3: constant */
        f[i] = pattern == 1 ? 0.0f : pattern == 2 ? ((i & 1) ? 65000.0f : 0.000061f) : 2.0f;
    }
    if (format == CK_FORMAT_DEPTH_F32) return f;
    out = malloc(n * 2 + 2);
    if (format == CK_FORMAT_U8) {
        for (i = 0; i < n; i++) ((unsigned char *)out)[i] = pattern == 1 ? 0 : pattern == 2 ? (unsigned char)(i & 1 ? 255 : 0)
                                                          : pattern == 3 ? 2 : (unsigned char)(rnd() % 3);
    } else if (format == CK_FORMAT_DEPTH_F16) {
        ck_depth_convert(out, format, f, CK_FORMAT_DEPTH_F32, n);
        /* plus raw float16 patterns the converter never produces: they are stored losslessly */
        if (pattern == 0) for (i = 0; i < n; i += 37) ((uint16_t *)out)[i] = (uint16_t)rnd();
    } else {
        for (i = 0; i < n; i++) ((uint16_t *)out)[i] = pattern == 2 ? (uint16_t)(i & 1 ? 65535 : 1) : ref_mm_from_f32(f[i]);
    }
    free(f);
    return out;
}

static void test_codec_round_trips(void)
{
    static const uint32_t sizes[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {7, 5}, {8, 1}, {8, 6}, {9, 7}, {13, 11},
                                        {64, 48}, {255, 3}, {256, 192}, {16384, 1}, {1, 16384}, {640, 480}};
    static const int32_t formats[] = {CK_FORMAT_DEPTH_F32, CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_MM, CK_FORMAT_U8};
    ck_depth_codec *c = NULL;
    size_t s, fi, di, bad = 0;
    int pattern;
    char first[200] = "";
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t w = sizes[s][0], h = sizes[s][1];
        size_t n = (size_t)w * h;
        for (pattern = 0; pattern < 4; pattern++) {
            if (pattern > 0 && n > 100000) continue;
            for (fi = 0; fi < 4; fi++) {
                int32_t format = formats[fi];
                int32_t kind = format == CK_FORMAT_U8 ? CK_DEPTH_KIND_U8 : format == CK_FORMAT_DEPTH_MM ? CK_DEPTH_KIND_MM : CK_DEPTH_KIND_FLOAT16;
                void *src = make_input(format, w, h, pattern);
                uint16_t *stored16 = (uint16_t *)malloc(n * 2);
                unsigned char *stored8 = (unsigned char *)malloc(n), *frame;
                size_t size = 0;
                int32_t k = 0;
                uint32_t fw = 0, fh = 0;
                stored_from_input(stored16, stored8, src, format, kind, n);
                frame = encode_frame(c, src, w, h, format, &size);
                if (frame) {
                    CHECK_STATUS(ck_depth_frame_info(&k, &fw, &fh, frame, size), CK_OK);
                    CHECK(k == kind && fw == w && fh == h);
                    for (di = 0; di < 4; di++) {
                        int32_t dformat = formats[di];
                        size_t bytes = n * (dformat == CK_FORMAT_DEPTH_F32 ? 4 : dformat == CK_FORMAT_U8 ? 1 : 2), written = 0;
                        unsigned char *out, *want;
                        if ((dformat == CK_FORMAT_U8) != (kind == CK_DEPTH_KIND_U8)) continue;
                        out = (unsigned char *)malloc(bytes + 8);
                        want = (unsigned char *)malloc(bytes + 8);
                        memset(out + bytes, 0x5A, 8);
                        expect_from_stored(want, dformat, stored16, stored8, kind, n);
                        CHECK_STATUS(ck_depth_decode(out, bytes, &written, c, frame, size, dformat), CK_OK);
                        if ((written != bytes || memcmp(out, want, bytes) != 0 || out[bytes] != 0x5A || out[bytes + 7] != 0x5A) &&
                            bad++ == 0)
                            sprintf(first, "%lux%lu pattern %d, format %d -> %d", (unsigned long)w, (unsigned long)h,
                                    pattern, (int)format, (int)dformat);
                        free(out);
                        free(want);
                    }
                    free(frame);
                }
                free(src);
                free(stored16);
                free(stored8);
            }
        }
    }
    CHECK_SAME("codec round trips (every size, pattern, src and dst format)", bad, first);

    /* A constant frame compresses far; an all-invalid frame is tiny. */
    {
        float *f = (float *)make_input(CK_FORMAT_DEPTH_F32, 256, 192, 3);
        size_t size = 0;
        unsigned char *frame = encode_frame(c, f, 256, 192, CK_FORMAT_DEPTH_F32, &size);
        CHECK(frame && size < 256 * 192 * 2 / 20);
        free(frame);
        free(f);
        f = (float *)make_input(CK_FORMAT_DEPTH_F32, 256, 192, 1);
        frame = encode_frame(c, f, 256, 192, CK_FORMAT_DEPTH_F32, &size);
        CHECK(frame && size < 200);
        free(frame);
        free(f);
    }
    ck_depth_codec_free(c);
}

/** Hostile frames: every truncation and extension is CK_E_CORRUPT; every single-bit flip gives
 *  CK_OK or CK_E_CORRUPT (or, for a flipped kind, CK_E_INVALID_ARGUMENT: the format no longer fits;
 *  for a larger flipped width or height, CK_E_BUFFER_TOO_SMALL) and never writes outside the
 *  destination. */
static void test_corrupt_frames(void)
{
    static const int32_t formats[] = {CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_MM, CK_FORMAT_U8};
    ck_depth_codec *c = NULL;
    size_t fi;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (fi = 0; fi < 3; fi++) {
        void *src = make_input(formats[fi], 13, 11, 0);
        size_t size = 0, i, bad_trunc = 0, bad_flip = 0, bad_guard = 0, bad_dst = 0, bad_written = 0, ok_flips = 0, written;
        size_t bytes = 13 * 11 * (formats[fi] == CK_FORMAT_U8 ? 1 : 2);
        unsigned char *frame = encode_frame(c, src, 13, 11, formats[fi], &size), *copy, *out;
        char first[100] = "";
        if (!frame) { free(src); continue; }
        copy = (unsigned char *)malloc(size + 1);
        out = (unsigned char *)malloc(bytes + 16);
        for (i = 0; i < size; i++) {
            ck_status st;
            memcpy(copy, frame, i);
            st = ck_depth_decode(out, bytes, &written, c, copy, i, formats[fi]);
            if (st != CK_E_CORRUPT && bad_trunc++ == 0) sprintf(first, "truncated to %lu: %d", (unsigned long)i, (int)st);
        }
        memcpy(copy, frame, size);
        copy[size] = 0;
        if (ck_depth_decode(out, bytes, &written, c, copy, size + 1, formats[fi]) != CK_E_CORRUPT) bad_trunc++;
        CHECK_SAME("every truncation and a one-byte extension are CK_E_CORRUPT", bad_trunc, first);
        for (i = 0; i < size * 8; i++) {
            ck_status st;
            size_t k;
            memcpy(copy, frame, size);
            copy[i / 8] ^= (unsigned char)(1u << (i % 8));
            memset(out, 0x5A, bytes);
            memset(out + bytes, 0xA5, 16);
            written = 12345;
            st = ck_depth_decode(out, bytes, &written, c, copy, size, formats[fi]);
            /* *written_out: the frame's bytes on CK_OK, untouched on errors other than CK_E_BUFFER_TOO_SMALL */
            if (st == CK_OK ? written != bytes : st != CK_E_BUFFER_TOO_SMALL && written != 12345) bad_written++;
            /* dst is written only on CK_OK (issue 8: it used to be filled, then CK_E_CORRUPT) */
            for (k = 0; st != CK_OK && k < bytes; k++) {
                if (out[k] != 0x5A) { bad_dst++; break; }
            }
            if (st == CK_OK) ok_flips++;
            else if (st != CK_E_CORRUPT && !(i / 8 == 3 && st == CK_E_INVALID_ARGUMENT) &&
                     !(i / 8 >= 4 && i / 8 < 12 && st == CK_E_BUFFER_TOO_SMALL) && bad_flip++ == 0)
                sprintf(first, "bit %lu flipped: %d", (unsigned long)i, (int)st);
            if (out[bytes] != 0xA5 || out[bytes + 15] != 0xA5) bad_guard++;
            /* header bytes 0..31 except the kind (3), which may become another valid kind */
            if (i / 8 < 32 && i / 8 != 3 && st == CK_OK && bad_flip++ == 0)
                sprintf(first, "header bit %lu flipped but decoded", (unsigned long)i);
        }
        CHECK_SAME("every bit flip is CK_OK or CK_E_CORRUPT (header flips CK_E_CORRUPT)", bad_flip, first);
        CHECK_SAME("no bit flip writes past the destination", bad_guard, "");
        CHECK_SAME("a failed decode leaves dst untouched", bad_dst, "");
        CHECK_SAME("*written_out is the frame's bytes on CK_OK, untouched on other errors", bad_written, "");
        CHECK(ok_flips < size * 8);
        free(copy);
        free(out);
        free(frame);
        free(src);
    }
    ck_depth_codec_free(c);
}

/* ============================================================================================
 * .ckdepth files
 * ============================================================================================ */

/** Frame `index` of a deterministic recording, as F16 samples (float16 metres). */
static void recording_frame(uint16_t *h, uint32_t w, uint32_t ht, uint64_t index)
{
    size_t i, n = (size_t)w * ht;
    for (i = 0; i < n; i++) {
        uint64_t v = (index * 2654435761u + i * 40503u) % 997;
        h[i] = v < 60 ? 0 : (uint16_t)(0x3C00 + (index * 7 + i) % 300 + (v > 990 ? 4000 : 0));
    }
}

/** Writes `frames` frames of w x h float16 (timestamps 10 + i / 30) to path; returns the status of close. */
static ck_status write_recording(const char *path, uint32_t w, uint32_t h, uint64_t frames, uint32_t flags)
{
    ck_depth_writer *wr = NULL;
    uint16_t *px = (uint16_t *)malloc((size_t)w * h * 2);
    uint64_t i;
    CHECK_STATUS(ck_depth_writer_open(&wr, path, w, h, CK_DEPTH_KIND_FLOAT16, 0, flags), CK_OK);
    for (i = 0; wr && i < frames; i++) {
        recording_frame(px, w, h, i);
        CHECK_STATUS(ck_depth_writer_append(wr, &(ck_depth_map){ px, w, h, 0, CK_FORMAT_DEPTH_F16, 0 }, 10.0 + (double)i / 30.0), CK_OK);
    }
    free(px);
    return ck_depth_writer_close(wr);
}

/** Opens path and checks frames [0, frames) decode to recording_frame(i) with their timestamps. */
static void check_recording(const char *path, uint32_t w, uint32_t h, uint64_t frames, const char *what)
{
    ck_depth_reader *r = NULL;
    ck_depth_info info;
    uint16_t *px = (uint16_t *)malloc((size_t)w * h * 2), *want = (uint16_t *)malloc((size_t)w * h * 2);
    uint64_t i;
    size_t bad = 0, written = 0;
    char first[160] = "";
    ck_status st = ck_depth_reader_open(&r, path);
    check_report(st == CK_OK, __FILE__, __LINE__, "%s: ck_depth_reader_open returned %d (%s)", what, (int)st,
                 ck_last_error_message());
    if (st == CK_OK) {
        CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
        check_report(info.frame_count == frames && info.width == w && info.height == h && info.kind == CK_DEPTH_KIND_FLOAT16 &&
                     info.version == 1, __FILE__, __LINE__, "%s: info %ux%u kind %d v%u, %lu frames (want %lu)", what,
                     info.width, info.height, (int)info.kind, info.version, (unsigned long)info.frame_count,
                     (unsigned long)frames);
        for (i = 0; i < frames && i < info.frame_count; i++) {
            double t = -1;
            recording_frame(want, w, h, i);
            st = ck_depth_reader_read(px, (size_t)w * h * 2, &written, &t, r, i, CK_FORMAT_DEPTH_F16);
            if ((st != CK_OK || written != (size_t)w * h * 2 || memcmp(px, want, (size_t)w * h * 2) != 0 ||
                 t != 10.0 + (double)i / 30.0) && bad++ == 0)
                sprintf(first, "frame %lu: status %d", (unsigned long)i, (int)st);
        }
        CHECK_SAME(what, bad, first);
        ck_depth_reader_close(r);
    }
    free(px);
    free(want);
}

static void test_writer_arguments(void)
{
    ck_depth_writer *w = NULL;
    const char *path = tmp_path("args.ckdepth");
    uint16_t px[4 * 3] = {0};
    unsigned char b[12] = {0};
    uint64_t count = 99;

    ERR(CK_E_INVALID_ARGUMENT, "writer_out", ck_depth_writer_open, (NULL, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_depth_writer_open, (&w, NULL, 4, 3, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_depth_writer_open, (&w, "", 4, 3, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_depth_writer_open, (&w, path, 0, 3, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_depth_writer_open, (&w, path, 4, 0, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_depth_writer_open, (&w, path, 16385, 3, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_depth_writer_open, (&w, path, 4, UINT32_MAX, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "kind", ck_depth_writer_open, (&w, path, 4, 3, 0, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "kind", ck_depth_writer_open, (&w, path, 4, 3, 4, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "kind", ck_depth_writer_open, (&w, path, 4, 3, -1, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "kind", ck_depth_writer_open, (&w, path, 4, 3, 257, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_writer_open, (&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 20, 0));
    ERR(CK_E_INVALID_ARGUMENT, "level", ck_depth_writer_open, (&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, -1, 0));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_depth_writer_open, (&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 0, 4));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_depth_writer_open, (&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 0, 0x80000000u));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_depth_writer_open, (&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 0,
                                                              CK_OPEN_OVERWRITE | CK_OPEN_APPEND));
    CHECK(w == NULL);
    CHECK(!file_exists(path)); /* nothing created by a rejected call */

    CHECK_STATUS(ck_depth_writer_open(&w, path, 4, 3, CK_DEPTH_KIND_FLOAT16, 19, 0), CK_OK);
    CHECK(w != NULL);
    ERR(CK_E_INVALID_ARGUMENT, "writer", ck_depth_writer_append, (NULL, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "src", ck_depth_writer_append, (w, NULL, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, 0, 0 }, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "src.format", ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, 5, 0 }, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_writer_append, (w, &(ck_depth_map){ b, 4, 3, 0, CK_FORMAT_U8, 0 }, 0.0)); /* U8 into a depth file */
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, NAN));
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, INFINITY));
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, -INFINITY));
    ERR(CK_E_INVALID_ARGUMENT, "writer", ck_depth_writer_flush, (NULL));
    ERR(CK_E_INVALID_ARGUMENT, "count_out", ck_depth_writer_frame_count, (NULL, w));
    ERR(CK_E_INVALID_ARGUMENT, "writer", ck_depth_writer_frame_count, (&count, NULL));
    CHECK(count == 99);
    CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 0);
    /* negative and huge finite timestamps are accepted */
    CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, -1e300), CK_OK);
    CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, DBL_MAX), CK_OK);
    CHECK_STATUS(ck_depth_writer_flush(w), CK_OK);
    CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 2);
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
    CHECK_STATUS(ck_depth_writer_close(NULL), CK_OK);

    /* A U8 file refuses depth samples. */
    w = NULL;
    CHECK_STATUS(ck_depth_writer_open(&w, tmp_path("args8.ckdepth"), 4, 3, CK_DEPTH_KIND_U8, 0, 0), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_writer_append, (w, &(ck_depth_map){ px, 4, 3, 0, CK_FORMAT_DEPTH_F32, 0 }, 0.0));
    CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ b, 4, 3, 0, CK_FORMAT_U8, 0 }, 0.5), CK_OK);
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
}

static void test_writer_open_modes(void)
{
    ck_depth_writer *w = NULL;
    const char *path = tmp_path("modes.ckdepth"), *text = tmp_path("modes.txt");
    uint64_t count = 0;
    uint16_t px[6 * 5];

    CHECK_STATUS(write_recording(path, 6, 5, 3, 0), CK_OK);
    check_recording(path, 6, 5, 3, "3 frames written");
    /* exists, no flag: CK_E_STATE, file untouched */
    ERR(CK_E_EXISTS, NULL, ck_depth_writer_open, (&w, path, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, 0));
    CHECK(w == NULL);
    check_recording(path, 6, 5, 3, "untouched after CK_E_STATE");
    /* APPEND continues: indices and content continue */
    CHECK_STATUS(ck_depth_writer_open(&w, path, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND), CK_OK);
    CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 3);
    recording_frame(px, 6, 5, 3);
    CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 6, 5, 0, CK_FORMAT_DEPTH_F16, 0 }, 10.0 + 3.0 / 30.0), CK_OK);
    CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
    CHECK(count == 4);
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
    check_recording(path, 6, 5, 4, "after APPEND");
    /* APPEND to a file that does not match: CK_E_CORRUPT (width, height, kind), file untouched */
    w = NULL;
    ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, path, 7, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
    ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, path, 6, 4, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
    ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, path, 6, 5, CK_DEPTH_KIND_MM, 0, CK_OPEN_APPEND));
    ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, path, 6, 5, CK_DEPTH_KIND_U8, 0, CK_OPEN_APPEND));
    CHECK(w == NULL);
    check_recording(path, 6, 5, 4, "untouched after a mismatching APPEND");
    /* APPEND to something that is not a .ckdepth file: CK_E_CORRUPT, file untouched */
    {
        const char *t = "hello, this is not a depth recording at all, but it is longer than a header is...";
        size_t n = 0;
        unsigned char *d;
        CHECK(write_file(text, t, strlen(t)));
        ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, text, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
        d = read_file(text, &n);
        CHECK(n == strlen(t) && d && memcmp(d, t, n) == 0);
        free(d);
    }
    CHECK(write_file(text, "short", 5));
    ERR(CK_E_CORRUPT, NULL, ck_depth_writer_open, (&w, text, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
    /* APPEND to an empty file starts a recording; APPEND to a missing file creates it */
    CHECK(write_file(text, "", 0));
    CHECK_STATUS(ck_depth_writer_open(&w, text, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND), CK_OK);
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
    check_recording(text, 6, 5, 0, "APPEND to an empty file");
    w = NULL;
    CHECK(!file_exists(tmp_path("appended-new.ckdepth")));
    CHECK_STATUS(ck_depth_writer_open(&w, tmp_path("appended-new.ckdepth"), 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND), CK_OK);
    recording_frame(px, 6, 5, 0);
    CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 6, 5, 0, CK_FORMAT_DEPTH_F16, 0 }, 10.0), CK_OK);
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
    check_recording(tmp_path("appended-new.ckdepth"), 6, 5, 1, "APPEND to a missing file");
    /* OVERWRITE replaces, whatever was there */
    CHECK_STATUS(write_recording(path, 6, 5, 2, CK_OPEN_OVERWRITE), CK_OK);
    check_recording(path, 6, 5, 2, "after OVERWRITE");
    CHECK_STATUS(write_recording(text, 6, 5, 1, CK_OPEN_OVERWRITE), CK_OK);
    check_recording(text, 6, 5, 1, "OVERWRITE of a text file");
    /* A directory cannot be written: CK_E_IO (with either flag) */
    w = NULL;
    ERR(CK_E_IO, NULL, ck_depth_writer_open, (&w, g_dir, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE));
    ERR(CK_E_IO, NULL, ck_depth_writer_open, (&w, g_dir, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
    ERR(CK_E_EXISTS, NULL, ck_depth_writer_open, (&w, g_dir, 6, 5, CK_DEPTH_KIND_FLOAT16, 0, 0));
    /* /dev/full opens for writing, but is not a regular file: the header cannot be written */
    if (file_exists("/dev/full")) {
        ck_status st = ck_depth_writer_open(&w, "/dev/full", 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE);
        CHECK_STATUS(st, CK_E_IO);
        if (st == CK_OK) ck_depth_writer_close(w);
    }
    CHECK(w == NULL);
    /* A missing directory: the file cannot be created (CK_E_NOT_FOUND, as for every writer since 0.2, with each flag) */
    ERR(CK_E_NOT_FOUND, "no/such/dir.ckdepth", ck_depth_writer_open, (&w, tmp_path("no/such/dir.ckdepth"), 6, 5, CK_DEPTH_KIND_FLOAT16, 0, 0));
    ERR(CK_E_NOT_FOUND, NULL, ck_depth_writer_open, (&w, tmp_path("no/such/dir.ckdepth"), 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE));
    ERR(CK_E_NOT_FOUND, NULL, ck_depth_writer_open, (&w, tmp_path("no/such/dir.ckdepth"), 6, 5, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND));
    CHECK(w == NULL);
}

/** Every (kind, src format, dst format) through a file: values follow the reference chain. */
static void test_file_formats(void)
{
    static const int32_t kinds[] = {CK_DEPTH_KIND_FLOAT16, CK_DEPTH_KIND_MM, CK_DEPTH_KIND_U8};
    static const int32_t formats[] = {CK_FORMAT_DEPTH_F32, CK_FORMAT_DEPTH_F16, CK_FORMAT_DEPTH_MM, CK_FORMAT_U8};
    const uint32_t w = 33, h = 17;
    const size_t n = (size_t)w * h;
    size_t ki, fi, di, bad = 0;
    char first[160] = "";
    for (ki = 0; ki < 3; ki++) {
        int32_t kind = kinds[ki];
        const char *path = tmp_path("formats.ckdepth");
        ck_depth_writer *wr = NULL;
        ck_depth_reader *r = NULL;
        ck_depth_info info;
        void *inputs[4] = {NULL, NULL, NULL, NULL};
        uint64_t frames = 0;
        CHECK_STATUS(ck_depth_writer_open(&wr, path, w, h, kind, 0, CK_OPEN_OVERWRITE), CK_OK);
        for (fi = 0; fi < 4; fi++) {
            if ((formats[fi] == CK_FORMAT_U8) != (kind == CK_DEPTH_KIND_U8)) continue;
            inputs[fi] = make_input(formats[fi], w, h, 0);
            CHECK_STATUS(ck_depth_writer_append(wr, &(ck_depth_map){ inputs[fi], w, h, 0, formats[fi], 0 }, (double)fi), CK_OK);
            frames++;
        }
        CHECK_STATUS(ck_depth_writer_close(wr), CK_OK);
        CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
        if (!r) continue;
        CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
        CHECK(info.kind == kind && info.frame_count == frames && info.torn_bytes == 0);
        frames = 0;
        for (fi = 0; fi < 4; fi++) {
            uint16_t *stored16;
            unsigned char *stored8;
            if (!inputs[fi]) continue;
            stored16 = (uint16_t *)malloc(n * 2);
            stored8 = (unsigned char *)malloc(n);
            stored_from_input(stored16, stored8, inputs[fi], formats[fi], kind, n);
            for (di = 0; di < 4; di++) {
                size_t bytes = n * (formats[di] == CK_FORMAT_DEPTH_F32 ? 4 : formats[di] == CK_FORMAT_U8 ? 1 : 2), written = 0;
                unsigned char *out, *want;
                double t = -1;
                if ((formats[di] == CK_FORMAT_U8) != (kind == CK_DEPTH_KIND_U8)) {
                    unsigned char tmp[33 * 17 * 4];
                    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_reader_read, (tmp, sizeof tmp, &written, NULL, r, frames, formats[di]));
                    continue;
                }
                out = (unsigned char *)malloc(bytes);
                want = (unsigned char *)malloc(bytes);
                expect_from_stored(want, formats[di], stored16, stored8, kind, n);
                CHECK_STATUS(ck_depth_reader_read(out, bytes, &written, &t, r, frames, formats[di]), CK_OK);
                if ((written != bytes || memcmp(out, want, bytes) != 0 || t != (double)fi) && bad++ == 0)
                    sprintf(first, "kind %d, written as %d, read as %d", (int)kind, (int)formats[fi], (int)formats[di]);
                free(out);
                free(want);
            }
            frames++;
            free(stored16);
            free(stored8);
            free(inputs[fi]);
        }
        ck_depth_reader_close(r);
    }
    CHECK_SAME("every kind x src format x dst format through a file", bad, first);
}

static void test_reader(void)
{
    ck_depth_reader *r = NULL;
    ck_depth_info info;
    const char *path = tmp_path("reader.ckdepth"), *other = tmp_path("reader-damaged.ckdepth");
    uint16_t px[8 * 6];
    float pf[8 * 6];
    double t = -1;
    unsigned char *file;
    size_t size = 0, written = 12345;

    CHECK_STATUS(write_recording(path, 8, 6, 5, CK_OPEN_OVERWRITE), CK_OK);
    ERR(CK_E_INVALID_ARGUMENT, "reader_out", ck_depth_reader_open, (NULL, path));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_depth_reader_open, (&r, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_depth_reader_open, (&r, ""));
    ERR(CK_E_NOT_FOUND, NULL, ck_depth_reader_open, (&r, tmp_path("missing.ckdepth")));
    ERR(CK_E_NOT_FOUND, NULL, ck_depth_reader_open, (&r, tmp_path("no/such/dir.ckdepth")));
    ERR(CK_E_IO, NULL, ck_depth_reader_open, (&r, g_dir)); /* a directory */
    CHECK(r == NULL);

    CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
    if (!r) return;
    ERR(CK_E_INVALID_ARGUMENT, "info_out", ck_depth_reader_info, (NULL, r));
    ERR(CK_E_INVALID_ARGUMENT, "reader", ck_depth_reader_info, (&info, NULL));
    CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
    CHECK(info.width == 8 && info.height == 6 && info.kind == CK_DEPTH_KIND_FLOAT16 && info.version == 1 &&
          info.frame_count == 5 && info.torn_bytes == 0);

    ERR(CK_E_INVALID_ARGUMENT, "reader", ck_depth_reader_read, (px, sizeof px, &written, &t, NULL, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst", ck_depth_reader_read, (NULL, sizeof px, &written, &t, r, 0, CK_FORMAT_DEPTH_F16));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_reader_read, (px, sizeof px, &written, &t, r, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "dst_format", ck_depth_reader_read, (px, sizeof px, &written, &t, r, 0, 5));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_depth_reader_read, (px, sizeof px, &written, &t, r, 0, CK_FORMAT_U8));
    ERR(CK_E_INVALID_ARGUMENT, "dst_capacity", ck_depth_reader_read, (px, SIZE_MAX, &written, &t, r, 0, CK_FORMAT_DEPTH_F16));
    CHECK(written == 12345); /* untouched on errors other than CK_E_BUFFER_TOO_SMALL */
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_reader_read, (px, sizeof px - 1, &written, &t, r, 0, CK_FORMAT_DEPTH_F16));
    CHECK(written == 8 * 6 * 2); /* the bytes needed */
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_reader_read, (pf, sizeof pf - 1, &written, &t, r, 0, CK_FORMAT_DEPTH_F32));
    CHECK(written == 8 * 6 * 4);
    ERR(CK_E_BUFFER_TOO_SMALL, "dst_capacity", ck_depth_reader_read, (px, 0, &written, &t, r, 4, CK_FORMAT_DEPTH_MM));
    CHECK(written == 8 * 6 * 2);
    CHECK(t == -1);
    /* past the end: CK_END (a normal outcome), outputs untouched */
    px[0] = 0xAAAA;
    written = 12345;
    CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, 5, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, UINT64_MAX, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, NULL, r, (uint64_t)1 << 63, CK_FORMAT_DEPTH_F16), CK_END);
    CHECK(px[0] == 0xAAAA && t == -1 && written == 12345);
    /* random access, backwards; timestamp_out may be NULL */
    {
        int i;
        uint16_t want[8 * 6];
        for (i = 4; i >= 0; i--) {
            recording_frame(want, 8, 6, (uint64_t)i);
            written = 0;
            CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, (uint64_t)i, CK_FORMAT_DEPTH_F16), CK_OK);
            CHECK(written == 8 * 6 * 2 && memcmp(px, want, sizeof px) == 0 && t == 10.0 + i / 30.0);
        }
        CHECK_STATUS(ck_depth_reader_read(pf, sizeof pf, &written, NULL, r, 2, CK_FORMAT_DEPTH_F32), CK_OK);
        CHECK(written == 8 * 6 * 4);
        recording_frame(want, 8, 6, 2);
        CHECK(pf[1] == ref_f32_from_f16(want[1]) && pf[47] == ref_f32_from_f16(want[47]));
    }
    ck_depth_reader_close(r);
    ck_depth_reader_close(NULL);

    /* The frozen file layout: 64-byte header, then 32-byte record headers. */
    file = read_file(path, &size);
    CHECK(file != NULL && size > 64 + 5 * 32);
    if (!file) return;
    CHECK(memcmp(file, "CKDEPTH\0", 8) == 0 && get_u32le(file + 8) == 1 && get_u32le(file + 12) == 64 &&
          get_u32le(file + 16) == 8 && get_u32le(file + 20) == 6 && get_u32le(file + 24) == CK_DEPTH_KIND_FLOAT16 &&
          get_u32le(file + 28) == 4 && get_u32le(file + 60) == crc32_of(file, 60));
    {
        size_t k, zero = 1, off = 64;
        uint64_t i;
        for (k = 32; k < 60; k++) zero &= file[k] == 0;
        CHECK(zero);
        for (i = 0; i < 5 && off + 32 <= size; i++) {
            uint32_t payload = get_u32le(file + off + 4);
            double ts;
            uint64_t tbits = get_u64le(file + off + 16);
            memcpy(&ts, &tbits, 8);
            CHECK(memcmp(file + off, "CKFR", 4) == 0 && get_u64le(file + off + 8) == i && ts == 10.0 + (double)i / 30.0);
            CHECK(get_u32le(file + off + 28) == crc32_of(file + off, 28));
            CHECK(off + 32 + payload <= size && get_u32le(file + off + 24) == crc32_of(file + off + 32, payload));
            CHECK(file[off + 32] == 'C' && file[off + 33] == 'F');
            off += 32 + payload;
        }
        CHECK(off == size);
    }

    /* Not a .ckdepth file, too short, empty: CK_E_CORRUPT */
    {
        const char *t = "This is a text file, certainly not a CaptureKit depth recording file. It is long enough.";
        CHECK(write_file(other, t, strlen(t)));
    }
    ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
    CHECK(write_file(other, file, 63));
    ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
    CHECK(write_file(other, "", 0));
    ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
    /* Header CRC mismatch: CK_E_CORRUPT */
    {
        unsigned char h[64];
        memcpy(h, file, 64);
        h[16] = 9; /* width 9, CRC not updated */
        CHECK(write_file(other, h, 64));
        ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
        /* version 2 with a valid CRC: CK_E_UNSUPPORTED (for APPEND too: the writer must not touch it) */
        memcpy(h, file, 64);
        put_u32le(h + 8, 2);
        put_u32le(h + 60, crc32_of(h, 60));
        CHECK(write_file(other, h, 64));
        ERR(CK_E_UNSUPPORTED, NULL, ck_depth_reader_open, (&r, other));
        {
            ck_depth_writer *w = NULL;
            ck_status st = ck_depth_writer_open(&w, other, 8, 6, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND);
            check_report(st == CK_E_UNSUPPORTED || st == CK_E_CORRUPT, __FILE__, __LINE__,
                         "APPEND to a version-2 file returned %d (%s)", (int)st, ck_last_error_message());
            CHECK(w == NULL);
        }
        /* version 2 with a bad CRC: corrupt (the CRC is checked first) */
        h[60] ^= 1;
        CHECK(write_file(other, h, 64));
        ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
        /* valid CRC but invalid values: width 0, height 16385, kind 0 and 4, header size, codec version */
        {
            static const size_t offsets[] = {16, 20, 24, 24, 12, 28};
            static const uint32_t values[] = {0, 16385, 0, 4, 65, 5};
            size_t k;
            for (k = 0; k < 6; k++) {
                memcpy(h, file, 64);
                put_u32le(h + offsets[k], values[k]);
                put_u32le(h + 60, crc32_of(h, 60));
                CHECK(write_file(other, h, 64));
                ERR(CK_E_CORRUPT, NULL, ck_depth_reader_open, (&r, other));
            }
        }
        /* a header alone is a valid empty recording */
        CHECK(write_file(other, file, 64));
        CHECK_STATUS(ck_depth_reader_open(&r, other), CK_OK);
        CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
        CHECK(info.frame_count == 0 && info.torn_bytes == 0);
        written = 12345;
        CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, 0, CK_FORMAT_DEPTH_F16), CK_END);
        CHECK(written == 12345);
        ck_depth_reader_close(r);
        r = NULL;
    }
    /* A damaged payload in the middle: the file opens, that frame is CK_E_CORRUPT naming it, the
     * others read fine. */
    {
        size_t off1 = 64 + 32 + get_u32le(file + 64 + 4);
        unsigned char *copy = (unsigned char *)malloc(size);
        memcpy(copy, file, size);
        copy[off1 + 32 + 5] ^= 0x10; /* inside frame 1's payload: its CRC fails */
        CHECK(write_file(other, copy, size));
        CHECK_STATUS(ck_depth_reader_open(&r, other), CK_OK);
        if (r) {
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.frame_count == 5);
            written = 12345;
            ERR(CK_E_CORRUPT, "frame 1", ck_depth_reader_read, (px, sizeof px, &written, &t, r, 1, CK_FORMAT_DEPTH_F16));
            CHECK(written == 12345);
            CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, 0, CK_FORMAT_DEPTH_F16), CK_OK);
            CHECK(written == 8 * 6 * 2);
            written = 0;
            CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, 2, CK_FORMAT_DEPTH_F16), CK_OK);
            CHECK(written == 8 * 6 * 2);
            ck_depth_reader_close(r);
            r = NULL;
        }
        /* A file cut short after the reader opened it: CK_E_CORRUPT for the lost frames. */
        CHECK(write_file(other, file, size));
        CHECK_STATUS(ck_depth_reader_open(&r, other), CK_OK);
        if (r) {
            CHECK(truncate(other, (off_t)off1 + 40) == 0);
            written = 12345;
            ERR(CK_E_CORRUPT, "frame 4", ck_depth_reader_read, (px, sizeof px, &written, &t, r, 4, CK_FORMAT_DEPTH_F16));
            CHECK(written == 12345);
            CHECK_STATUS(ck_depth_reader_read(px, sizeof px, &written, &t, r, 0, CK_FORMAT_DEPTH_F16), CK_OK);
            CHECK(written == 8 * 6 * 2);
            ck_depth_reader_close(r);
            r = NULL;
        }
        free(copy);
    }
    free(file);
}

/** A file cut at every byte position keeps every complete frame; a torn tail is reported and
 *  dropped; APPEND cuts it off and continues. Garbage appended is a torn tail too. */
static void test_truncation_and_torn_tails(void)
{
    const char *path = tmp_path("torn.ckdepth"), *cut = tmp_path("torn-cut.ckdepth");
    unsigned char *file;
    size_t size = 0, i, bad = 0, ends[4], n_ends = 0, written = 0;
    char first[160] = "";
    CHECK_STATUS(write_recording(path, 5, 3, 3, CK_OPEN_OVERWRITE), CK_OK);
    file = read_file(path, &size);
    if (!file) { CHECK(file != NULL); return; }
    /* record ends */
    {
        size_t off = 64;
        ends[n_ends++] = off;
        while (off + 32 <= size && n_ends < 4) { off += 32 + get_u32le(file + off + 4); ends[n_ends++] = off; }
        CHECK(n_ends == 4 && ends[3] == size);
    }
    for (i = 0; i <= size; i++) {
        ck_depth_reader *r = NULL;
        ck_depth_info info;
        ck_status st;
        uint64_t complete = 0;
        size_t k;
        for (k = 1; k < n_ends; k++) if (ends[k] <= i) complete = k;
        CHECK(write_file(cut, file, i));
        st = ck_depth_reader_open(&r, cut);
        if (i < 64) {
            if (st != CK_E_CORRUPT && bad++ == 0) sprintf(first, "cut at %lu: open %d", (unsigned long)i, (int)st);
            if (st == CK_OK) ck_depth_reader_close(r);
            continue;
        }
        if (st != CK_OK) { if (bad++ == 0) sprintf(first, "cut at %lu: open %d", (unsigned long)i, (int)st); continue; }
        ck_depth_reader_info(&info, r);
        if ((info.frame_count != complete || info.torn_bytes != i - ends[complete]) && bad++ == 0)
            sprintf(first, "cut at %lu: %lu frames, %lu torn bytes (want %lu, %lu)", (unsigned long)i,
                    (unsigned long)info.frame_count, (unsigned long)info.torn_bytes, (unsigned long)complete,
                    (unsigned long)(i - ends[complete]));
        for (k = 0; k < complete; k++) {
            uint16_t px[15], want[15];
            recording_frame(want, 5, 3, k);
            written = 0;
            if ((ck_depth_reader_read(px, sizeof px, &written, NULL, r, k, CK_FORMAT_DEPTH_F16) != CK_OK ||
                 written != 5 * 3 * 2 || memcmp(px, want, sizeof px) != 0) && bad++ == 0)
                sprintf(first, "cut at %lu: frame %lu", (unsigned long)i, (unsigned long)k);
        }
        if (ck_depth_reader_read((uint16_t[15]){0}, 30, &written, NULL, r, complete, CK_FORMAT_DEPTH_F16) != CK_END && bad++ == 0)
            sprintf(first, "cut at %lu: no CK_END after %lu", (unsigned long)i, (unsigned long)complete);
        ck_depth_reader_close(r);
        /* APPEND after a cut: the torn tail goes, indices continue */
        if (i == ends[1] + 50 || i == ends[2] - 1 || i == ends[1] + 3 || i == 64 + 10) {
            ck_depth_writer *w = NULL;
            uint16_t px[15];
            uint64_t count = 0;
            CHECK_STATUS(ck_depth_writer_open(&w, cut, 5, 3, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND), CK_OK);
            CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
            CHECK(count == complete);
            for (k = complete; k < 3; k++) {
                recording_frame(px, 5, 3, k);
                CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 5, 3, 0, CK_FORMAT_DEPTH_F16, 0 }, 10.0 + (double)k / 30.0), CK_OK);
            }
            CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
            check_recording(cut, 5, 3, 3, "APPEND after a torn tail");
            {
                size_t n2 = 0;
                unsigned char *again = read_file(cut, &n2);
                CHECK(n2 == size && again && memcmp(again, file, size) == 0); /* byte-identical to the original */
                free(again);
            }
        }
    }
    CHECK_SAME("every cut keeps every complete frame", bad, first);

    /* Garbage of the right length after the last frame (a torn write): dropped. */
    {
        unsigned char *longer = (unsigned char *)malloc(size + 100);
        ck_depth_reader *r = NULL;
        ck_depth_info info;
        memcpy(longer, file, size);
        memset(longer + size, 0x5C, 100);
        CHECK(write_file(cut, longer, size + 100));
        CHECK_STATUS(ck_depth_reader_open(&r, cut), CK_OK);
        if (r) {
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.frame_count == 3 && info.torn_bytes == 100);
            ck_depth_reader_close(r);
        }
        /* the last record's payload damaged: that record is torn (dropped), the others stay */
        memcpy(longer, file, size);
        longer[size - 3] ^= 0xFF;
        CHECK(write_file(cut, longer, size));
        r = NULL;
        CHECK_STATUS(ck_depth_reader_open(&r, cut), CK_OK);
        if (r) {
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.frame_count == 2 && info.torn_bytes == size - ends[2]);
            ck_depth_reader_close(r);
        }
        free(longer);
    }
    free(file);
}

/** Many frames, many opens: frame counts and random access over a longer recording; 0 frames. */
static void test_many_frames(void)
{
    const char *path = tmp_path("many.ckdepth");
    ck_depth_reader *r = NULL;
    ck_depth_info info;
    uint64_t i;
    size_t bad = 0, written = 0;
    CHECK_STATUS(write_recording(path, 3, 2, 5000, CK_OPEN_OVERWRITE), CK_OK);
    CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
    if (!r) return;
    CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
    CHECK(info.frame_count == 5000);
    for (i = 0; i < 2000; i++) {
        uint64_t k = rnd() % 5000;
        uint16_t px[6], want[6];
        double t = 0;
        recording_frame(want, 3, 2, k);
        written = 0;
        if ((ck_depth_reader_read(px, sizeof px, &written, &t, r, k, CK_FORMAT_DEPTH_F16) != CK_OK || written != 3 * 2 * 2 ||
             memcmp(px, want, sizeof px) || t != 10.0 + (double)k / 30.0))
            bad++;
    }
    CHECK_SAME("random access over 5000 frames", bad, "");
    ck_depth_reader_close(r);
    CHECK_STATUS(write_recording(path, 3, 2, 0, CK_OPEN_OVERWRITE), CK_OK);
    check_recording(path, 3, 2, 0, "0 frames");
}

/** CK_E_IO from append (the file size limit makes write() fail with EFBIG), then CK_E_STATE. */
static void test_write_failure(void)
{
    const char *path = tmp_path("fsize.ckdepth");
    struct rlimit old, small;
    ck_depth_writer *w = NULL;
    uint16_t px[64 * 48];
    int i, failed_at = -1;
    ck_status st = CK_OK;
    if (getrlimit(RLIMIT_FSIZE, &old) != 0) { CHECK(0); return; }
    CHECK_STATUS(ck_depth_writer_open(&w, path, 64, 48, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE), CK_OK);
    if (!w) return;
    signal(SIGXFSZ, SIG_IGN);
    small = old;
    small.rlim_cur = 4096;
    if (setrlimit(RLIMIT_FSIZE, &small) != 0) { CHECK(0); ck_depth_writer_close(w); return; }
    for (i = 0; i < 100; i++) {
        recording_frame(px, 64, 48, (uint64_t)i);
        st = ck_depth_writer_append(w, &(ck_depth_map){ px, 64, 48, 0, CK_FORMAT_DEPTH_F16, 0 }, (double)i);
        if (st != CK_OK) { failed_at = i; break; }
    }
    CHECK_STATUS(st, CK_E_IO);
    CHECK(failed_at > 0);
    ERR(CK_E_STATE, NULL, ck_depth_writer_append, (w, &(ck_depth_map){ px, 64, 48, 0, CK_FORMAT_DEPTH_F16, 0 }, 1000.0));
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, SIG_DFL);
    ERR(CK_E_STATE, NULL, ck_depth_writer_append, (w, &(ck_depth_map){ px, 64, 48, 0, CK_FORMAT_DEPTH_F16, 0 }, 1000.0)); /* stays refused */
    {
        uint64_t count = 0;
        CHECK_STATUS(ck_depth_writer_frame_count(&count, w), CK_OK);
        CHECK(count == (uint64_t)failed_at);
    }
    CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
    /* the file keeps every frame appended before the failure; its torn tail goes on APPEND */
    {
        ck_depth_reader *r = NULL;
        ck_depth_info info;
        CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
        if (r) {
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.frame_count == (uint64_t)failed_at && info.torn_bytes > 0);
            ck_depth_reader_close(r);
        }
        w = NULL;
        CHECK_STATUS(ck_depth_writer_open(&w, path, 64, 48, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_APPEND), CK_OK);
        recording_frame(px, 64, 48, (uint64_t)failed_at);
        CHECK_STATUS(ck_depth_writer_append(w, &(ck_depth_map){ px, 64, 48, 0, CK_FORMAT_DEPTH_F16, 0 }, (double)failed_at), CK_OK);
        CHECK_STATUS(ck_depth_writer_close(w), CK_OK);
        r = NULL;
        CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
        if (r) {
            uint16_t out[64 * 48];
            size_t written = 0;
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.frame_count == (uint64_t)failed_at + 1 && info.torn_bytes == 0);
            for (i = 0; i <= failed_at; i++) {
                recording_frame(px, 64, 48, (uint64_t)i);
                written = 0;
                CHECK_STATUS(ck_depth_reader_read(out, sizeof out, &written, NULL, r, (uint64_t)i, CK_FORMAT_DEPTH_F16), CK_OK);
                CHECK(written == 64 * 48 * 2);
                CHECK(memcmp(out, px, sizeof px) == 0);
            }
            ck_depth_reader_close(r);
        }
    }
}

/* ============================================================================================
 * Golden files (Tests/golden): committed encodings decode to the committed expected values
 * ============================================================================================ */

static unsigned char *golden(const char *dir, const char *name, size_t *size)
{
    char path[512];
    unsigned char *d;
    sprintf(path, "%s/%s", dir, name);
    d = read_file(path, size);
    check_report(d != NULL, __FILE__, __LINE__, "golden file %s is missing", path);
    return d;
}

static void test_golden(const char *dir)
{
    /* Frame version 1 (frozen by the first library), version 2 (issue 10), versions 3 and 4
     * (issue 24): all decode. */
    static const struct { const char *frame, *expected; int32_t kind, format; uint32_t w, h; } frames[] = {
        {"frame_float16_8x6.ckframe", "frame_float16_8x6.f16", CK_DEPTH_KIND_FLOAT16, CK_FORMAT_DEPTH_F16, 8, 6},
        {"frame_mm_8x6.ckframe", "frame_mm_8x6.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 8, 6},
        {"frame_u8_8x6.ckframe", "frame_u8_8x6.u8", CK_DEPTH_KIND_U8, CK_FORMAT_U8, 8, 6},
        {"frame_float16_8x6.v2.ckframe", "frame_float16_8x6.f16", CK_DEPTH_KIND_FLOAT16, CK_FORMAT_DEPTH_F16, 8, 6},
        {"frame_mm_8x6.v2.ckframe", "frame_mm_8x6.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 8, 6},
        {"frame_u8_8x6.v2.ckframe", "frame_u8_8x6.u8", CK_DEPTH_KIND_U8, CK_FORMAT_U8, 8, 6},
        {"frame_float16_8x6.v3.ckframe", "frame_float16_8x6.f16", CK_DEPTH_KIND_FLOAT16, CK_FORMAT_DEPTH_F16, 8, 6},
        {"frame_mm_8x6.v3.ckframe", "frame_mm_8x6.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 8, 6},
        {"frame_u8_8x6.v3.ckframe", "frame_u8_8x6.u8", CK_DEPTH_KIND_U8, CK_FORMAT_U8, 8, 6},
        {"frame_mm_16x12.v3.ckframe", "frame_mm_16x12.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 16, 12},
        {"frame_float16_8x6.v4.ckframe", "frame_float16_8x6.f16", CK_DEPTH_KIND_FLOAT16, CK_FORMAT_DEPTH_F16, 8, 6},
        {"frame_mm_8x6.v4.ckframe", "frame_mm_8x6.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 8, 6},
        {"frame_u8_8x6.v4.ckframe", "frame_u8_8x6.u8", CK_DEPTH_KIND_U8, CK_FORMAT_U8, 8, 6},
        {"frame_mm_16x12.v4.ckframe", "frame_mm_16x12.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 16, 12},
        {"frame_mm_20x12.v4.ckframe", "frame_mm_20x12.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 20, 12},
        /* version 4 with the escapes' low bytes stored after the zstd frame (word 6, bit 16) */
        {"frame_mm_32x24.v4.ckframe", "frame_mm_32x24.u16", CK_DEPTH_KIND_MM, CK_FORMAT_DEPTH_MM, 32, 24},
    };
    static const char *recordings[] = {"recording_float16_8x6x3.ckdepth", "recording_float16_8x6x3.v2.ckdepth",
                                       "recording_float16_8x6x3.v3.ckdepth", "recording_float16_8x6x3.v4.ckdepth"};
    ck_depth_codec *c = NULL;
    size_t i, ri;
    CHECK_STATUS(ck_depth_codec_create(&c, 0), CK_OK);
    for (i = 0; i < sizeof frames / sizeof frames[0]; i++) {
        size_t pixels = (size_t)frames[i].w * frames[i].h;
        size_t fsize = 0, esize = 0, bytes = pixels * ck_format_size(frames[i].format), written = 0;
        unsigned char *frame = golden(dir, frames[i].frame, &fsize), *want = golden(dir, frames[i].expected, &esize);
        unsigned char out[32 * 24 * 4];
        int32_t kind = 0;
        uint32_t w = 0, h = 0;
        if (frame && want) {
            CHECK(esize == bytes);
            CHECK_STATUS(ck_depth_frame_info(&kind, &w, &h, frame, fsize), CK_OK);
            CHECK(kind == frames[i].kind && w == frames[i].w && h == frames[i].h);
            CHECK_STATUS(ck_depth_decode(out, bytes, &written, c, frame, fsize, frames[i].format), CK_OK);
            CHECK(written == esize); /* the golden raw file's size */
            check_report(memcmp(out, want, bytes) == 0, __FILE__, __LINE__, "%s decodes to %s", frames[i].frame,
                         frames[i].expected); /* raw files are little-endian, as this host */
            /* re-encoding the expected samples gives a frame that decodes to them too (byte-exact
             * re-encoding is checked by the Python tests, which know the zstd version) */
            {
                size_t size = 0;
                unsigned char *again = encode_frame(c, want, frames[i].w, frames[i].h, frames[i].format, &size);
                if (again) {
                    written = 0;
                    CHECK_STATUS(ck_depth_decode(out, bytes, &written, c, again, size, frames[i].format), CK_OK);
                    CHECK(written == esize);
                    CHECK(memcmp(out, want, bytes) == 0);
                    /* the encoder writes version 4: same magic, kind and size */
                    CHECK(memcmp(again, frame, 2) == 0 && again[2] == 4 && again[3] == frame[3] &&
                          memcmp(again + 4, frame + 4, 8) == 0);
                    CHECK(frame[2] == (i < 3 ? 1 : i < 6 ? 2 : i < 10 ? 3 : 4));
                    free(again);
                }
            }
        }
        free(frame);
        free(want);
    }
    ck_depth_codec_free(c);

    /* The recordings: 3 frames of 8 x 6 float16, timestamps in recording_8x6x3.timestamps.f64. */
    for (ri = 0; ri < 4; ri++) {
        char path[512];
        size_t esize = 0, tsize = 0, fi, written = 0;
        unsigned char *want = golden(dir, "recording_float16_8x6x3.f16", &esize);
        unsigned char *ts = golden(dir, "recording_float16_8x6x3.timestamps.f64", &tsize);
        ck_depth_reader *r = NULL;
        ck_depth_info info;
        sprintf(path, "%s/%s", dir, recordings[ri]);
        CHECK_STATUS(ck_depth_reader_open(&r, path), CK_OK);
        if (r && want && ts && esize == 3 * 48 * 2 && tsize == 3 * 8) {
            CHECK_STATUS(ck_depth_reader_info(&info, r), CK_OK);
            CHECK(info.width == 8 && info.height == 6 && info.kind == CK_DEPTH_KIND_FLOAT16 && info.version == 1 &&
                  info.frame_count == 3 && info.torn_bytes == 0);
            for (fi = 0; fi < 3; fi++) {
                uint16_t out[48];
                float outf[48];
                double t = 0, want_t;
                size_t k, bad = 0;
                memcpy(&want_t, ts + fi * 8, 8);
                CHECK_STATUS(ck_depth_reader_read(out, sizeof out, &written, &t, r, fi, CK_FORMAT_DEPTH_F16), CK_OK);
                CHECK(written == 8 * 6 * 2 && memcmp(out, want + fi * 96, 96) == 0 && t == want_t);
                CHECK_STATUS(ck_depth_reader_read(outf, sizeof outf, &written, NULL, r, fi, CK_FORMAT_DEPTH_F32), CK_OK);
                CHECK(written == 8 * 6 * 4);
                for (k = 0; k < 48; k++) {
                    uint16_t hv;
                    memcpy(&hv, want + fi * 96 + k * 2, 2);
                    if (f32_bits(outf[k]) != f32_bits(ref_f32_from_f16(hv))) bad++;
                }
                CHECK_SAME("golden recording as float32", bad, "");
            }
            CHECK_STATUS(ck_depth_reader_read((uint16_t[48]){0}, 96, &written, NULL, r, 3, CK_FORMAT_DEPTH_F16), CK_END);
            CHECK(written == 8 * 6 * 4); /* untouched by CK_END */
        }
        ck_depth_reader_close(r);
        free(want);
        free(ts);
    }
}

/* ck_depth_to_points: the points of a 2 x 2 map against the pinhole model, and a capacity of more
 * than SIZE_MAX/2 bytes refused with nothing written (it describes no buffer). */
static void test_depth_to_points(void)
{
    const float metres[4] = {1.0f, 2.0f, 0.0f, 4.0f};  /* pixel (0, 1) has no depth */
    ck_depth_map m = {metres, 2, 2, 0, CK_FORMAT_DEPTH_F32, 0};
    ck_intrinsics k = {2.0f, 2.0f, 1.0f, 1.0f, 2, 2};
    ck_mat4 pose = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
    ck_vec3 pts[4];
    size_t written = 9;
    memset(pts, 0xA5, sizeof pts);
    ERR(CK_E_INVALID_ARGUMENT, "SIZE_MAX/2 bytes", ck_depth_to_points,
        (pts, (SIZE_MAX / 2) / sizeof(ck_vec3) + 1, &written, &m, &k, &pose, INFINITY));
    CHECK(written == 9 && ((const unsigned char *)pts)[0] == 0xA5);
    CHECK_STATUS(ck_depth_to_points(pts, 4, &written, &m, &k, &pose, INFINITY), CK_OK);
    CHECK(written == 3);
    /* pixel (1, 0) at 2 m: x = (1.5 - 1) / 2 * 2 = 0.5, y = -(0.5 - 1) / 2 * 2 = 0.5, z = -2 (OpenGL axes) */
    CHECK(written == 3 && pts[1].x == 0.5f && pts[1].y == 0.5f && pts[1].z == -2.0f);
}

int main(int argc, char **argv)
{
    const char *golden_dir = argc > 1 ? argv[1] : "Tests/golden";
    if (tmp_dir_create("ck-test-depth") != 0) return 1;

    test_format_size();
    test_depth_to_points();
    test_convert_arguments();
    test_convert_f32();
    test_convert_f16_and_mm();
    test_codec_create_free();
    test_archival_level();
    test_encode_bound();
    test_encode_arguments();
    test_buffer_too_small();
    test_frame_info();
    test_decode_arguments();
    test_codec_round_trips();
    test_corrupt_frames();
    test_writer_arguments();
    test_writer_open_modes();
    test_file_formats();
    test_reader();
    test_truncation_and_torn_tails();
    test_many_frames();
    test_write_failure();
    if (argc > 1 || file_exists(golden_dir)) test_golden(golden_dir);
    else fprintf(stderr, "note: %s not found, golden files not checked\n", golden_dir);

    remove_tree(g_dir);
    return CHECK_SUMMARY();
}
