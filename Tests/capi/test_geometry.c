/*
 * test_geometry.c — C API test of the base and geometry areas (ck_base.h, ck_geometry.h).
 *
 * The ABI guard (frozen struct sizes, offsets, enum values), status strings and versions, the
 * thread-local error message, poses, matrices, Euler angles, look-at and intrinsics.
 * Uses only include/capturekit.h and the built libcapturekit.so: NULL for every pointer, NaN and
 * +-inf for every float, bad sizes and face indices, every status code each function can return,
 * and real values checked against the independent formulas of geometry_reference.h.
 *
 * Output: one line per failed check (file:line, expression, status names and the library's last
 * error message), then exactly one summary line "N passed, M failed". Exit status 1 on a failure.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, lstat (support.h) */
#include "capturekit.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "geometry_reference.h"

/* ============================================================================================
 * ABI guard: struct sizes, offsets and enum values are frozen (C99: negative-array typedef)
 * ============================================================================================ */

STATIC_ASSERT(sizeof(ck_status) == 4, status_size);
STATIC_ASSERT(sizeof(ck_vec3) == 12, vec3_size);
STATIC_ASSERT(sizeof(ck_quat) == 16, quat_size);
STATIC_ASSERT(sizeof(ck_mat4) == 64, mat4_size);
STATIC_ASSERT(sizeof(ck_intrinsics) == 24, intrinsics_size);
STATIC_ASSERT(sizeof(ck_ray) == 24, ray_size);
STATIC_ASSERT(sizeof(ck_box) == 36, box_size);
STATIC_ASSERT(sizeof(ck_hit) == 24, hit_size);
STATIC_ASSERT(sizeof(ck_fit_options) == 20, fit_options_size);

STATIC_ASSERT(offsetof(ck_vec3, x) == 0 && offsetof(ck_vec3, y) == 4 && offsetof(ck_vec3, z) == 8, vec3_offsets);
STATIC_ASSERT(offsetof(ck_quat, x) == 0 && offsetof(ck_quat, y) == 4 && offsetof(ck_quat, z) == 8 &&
              offsetof(ck_quat, w) == 12, quat_offsets);
STATIC_ASSERT(offsetof(ck_mat4, m) == 0, mat4_offsets);
STATIC_ASSERT(offsetof(ck_intrinsics, fx) == 0 && offsetof(ck_intrinsics, fy) == 4 && offsetof(ck_intrinsics, cx) == 8 &&
              offsetof(ck_intrinsics, cy) == 12 && offsetof(ck_intrinsics, width) == 16 &&
              offsetof(ck_intrinsics, height) == 20, intrinsics_offsets);
STATIC_ASSERT(offsetof(ck_ray, origin) == 0 && offsetof(ck_ray, direction) == 12, ray_offsets);
STATIC_ASSERT(offsetof(ck_box, center) == 0 && offsetof(ck_box, size) == 12 && offsetof(ck_box, yaw) == 24 &&
              offsetof(ck_box, floor) == 28 && offsetof(ck_box, has_floor) == 32, box_offsets);
STATIC_ASSERT(offsetof(ck_hit, point) == 0 && offsetof(ck_hit, distance) == 12 && offsetof(ck_hit, face) == 16 &&
              offsetof(ck_hit, inside) == 20, hit_offsets);
STATIC_ASSERT(offsetof(ck_fit_options, struct_size) == 0 && offsetof(ck_fit_options, use_floor) == 4 &&
              offsetof(ck_fit_options, floor) == 8 && offsetof(ck_fit_options, floor_margin) == 12 &&
              offsetof(ck_fit_options, padding) == 16, fit_options_offsets);

STATIC_ASSERT(CK_OK == 0 && CK_MISS == 1 && CK_E_INVALID_ARGUMENT == -1 && CK_E_BUFFER_TOO_SMALL == -2 &&
              CK_E_IO == -3 && CK_E_CORRUPT == -4 && CK_E_STATE == -5 && CK_E_UNSUPPORTED == -6 &&
              CK_E_NOT_FOUND == -7 && CK_E_NO_MEMORY == -8 && CK_E_EXISTS == -9 && CK_E_BUSY == -10, status_values);
STATIC_ASSERT(CK_FACE_NONE == -1 && CK_FACE_FRONT == 0 && CK_FACE_LEFT == 1 && CK_FACE_RIGHT == 2 &&
              CK_FACE_BOTTOM == 3 && CK_FACE_TOP == 4 && CK_FACE_BACK == 5, face_values);
STATIC_ASSERT(CK_CORNER_TOP_LEFT_FRONT == 0 && CK_CORNER_TOP_RIGHT_FRONT == 1 && CK_CORNER_BOT_RIGHT_FRONT == 2 &&
              CK_CORNER_BOT_LEFT_FRONT == 3 && CK_CORNER_TOP_LEFT_BACK == 4 && CK_CORNER_TOP_RIGHT_BACK == 5 &&
              CK_CORNER_BOT_RIGHT_BACK == 6 && CK_CORNER_BOT_LEFT_BACK == 7, corner_values);
STATIC_ASSERT(CK_VERSION_NUMBER == CK_VERSION_MAJOR * 10000 + CK_VERSION_MINOR * 100 + CK_VERSION_PATCH, version_formula);
STATIC_ASSERT(CK_MAX_BATCH == 2147483647u && CK_MAX_IMAGE_DIMENSION == 65536u, limits);


/* ============================================================================================
 * Status and version
 * ============================================================================================ */

static void test_status_and_version(void)
{
    static const struct { ck_status code; const char *name; } codes[] = {
        { CK_OK, "CK_OK" }, { CK_MISS, "CK_MISS" }, { CK_END, "CK_END" }, { CK_E_INVALID_ARGUMENT, "CK_E_INVALID_ARGUMENT" },
        { CK_E_BUFFER_TOO_SMALL, "CK_E_BUFFER_TOO_SMALL" }, { CK_E_IO, "CK_E_IO" }, { CK_E_CORRUPT, "CK_E_CORRUPT" },
        { CK_E_STATE, "CK_E_STATE" }, { CK_E_UNSUPPORTED, "CK_E_UNSUPPORTED" }, { CK_E_NOT_FOUND, "CK_E_NOT_FOUND" },
        { CK_E_NO_MEMORY, "CK_E_NO_MEMORY" },
        { CK_E_EXISTS, "CK_E_EXISTS" }, { CK_E_BUSY, "CK_E_BUSY" },
    };
    static const ck_status unknown[] = { 3, -11, 100, -100, INT32_MIN, INT32_MAX };
    size_t i, j;
    char buf[32];

    /* Before any failing call on this thread the message is "". This runs first in main(). */
    CHECK(ck_last_error_message() != NULL);
    CHECK(strcmp(ck_last_error_message(), "") == 0);

    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = ck_status_string(codes[i].code);
        size_t n = strlen(codes[i].name);
        CHECK(s != NULL);
        /* "CK_E_INVALID_ARGUMENT: invalid argument": the name, then ':' and a description. */
        check_report(s && strncmp(s, codes[i].name, n) == 0 && s[n] == ':' && strlen(s) > n + 2, __FILE__, __LINE__,
                     "ck_status_string(%d) = \"%s\" starts with \"%s: \"", (int)codes[i].code, s ? s : "(NULL)",
                     codes[i].name);
        CHECK(s == ck_status_string(codes[i].code)); /* static */
        for (j = 0; j < i; j++) CHECK(strcmp(s, ck_status_string(codes[j].code)) != 0);
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = ck_status_string(unknown[i]);
        check_report(s != NULL && strcmp(s, "unknown status") == 0, __FILE__, __LINE__,
                     "ck_status_string(%ld) = \"%s\", want \"unknown status\"", (long)unknown[i], s ? s : "(NULL)");
    }

    CHECK(CK_VERSION_NUMBER == 200);
    CHECK(CK_VERSION_COMPATIBLE(ck_version_number()) && CK_VERSION_COMPATIBLE(201));
    CHECK(!CK_VERSION_COMPATIBLE(100) && !CK_VERSION_COMPATIBLE(300) && !CK_VERSION_COMPATIBLE(10200));
    CHECK(ck_version_number() == CK_VERSION_NUMBER);
    CHECK(ck_version_string() != NULL);
    CHECK(strcmp(ck_version_string(), CK_VERSION_STRING) == 0);
    CHECK(ck_version_string() == ck_version_string());
    sprintf(buf, "%d.%d.%d", CK_VERSION_MAJOR, CK_VERSION_MINOR, CK_VERSION_PATCH);
    CHECK(strcmp(buf, CK_VERSION_STRING) == 0);

    ck_free(NULL);
    CHECK(1); /* ck_free(NULL) returned */
}

static void test_last_error_message(void)
{
    ck_box b;
    ck_hit hit;
    ck_ray r;
    char saved[512];
    const char *msg;

    ERR(CK_E_INVALID_ARGUMENT, "box_out", ck_box_init, (NULL, k_center, k_size, 0.0f));
    msg = ck_last_error_message();
    CHECK(msg != NULL);
    CHECK(strncmp(msg, "ck_box_init", 11) == 0);
    strncpy(saved, msg, sizeof saved - 1);
    saved[sizeof saved - 1] = '\0';

    /* Only failing calls set it: a success and a CK_MISS leave it alone. */
    CHECK_STATUS(ck_box_init(&b, k_center, k_size, 0.0f), CK_OK);
    CHECK(strcmp(ck_last_error_message(), saved) == 0);
    r.origin = fv(0, 5, 0); r.direction = fv(0, 1, 0);
    CHECK_STATUS(ck_ray_floor(&hit, &r, 0.0f), CK_MISS);
    CHECK(strcmp(ck_last_error_message(), saved) == 0);

    /* A different failing call replaces it and names its own function and argument. */
    ERR(CK_E_INVALID_ARGUMENT, "yaw", ck_box_set_yaw, (&b, f_nan()));
    CHECK(strstr(ck_last_error_message(), "ck_box_init") == NULL);
    ERR(CK_E_STATE, NULL, ck_box_place_on_floor, (&b, 0.0f, 0.0f));
    CHECK(strstr(ck_last_error_message(), "ck_box_place_on_floor") != NULL);
}

/* ============================================================================================
 * Geometry: poses, matrices, intrinsics
 * ============================================================================================ */

static ck_status w_pose_to_quat(const ck_mat4 *p) { ck_quat q; ck_vec3 t; return ck_pose_to_quat(&q, &t, p); }
static ck_status w_pose_inverse(const ck_mat4 *p) { ck_mat4 o; return ck_pose_inverse(&o, p); }
static ck_status w_gl_to_cv(const ck_mat4 *p) { ck_mat4 o; return ck_pose_opengl_to_opencv(&o, p); }
static ck_status w_cv_to_gl(const ck_mat4 *p) { ck_mat4 o; return ck_pose_opencv_to_opengl(&o, p); }
static ck_status w_ypr(const ck_mat4 *p) { float y, q, r; return ck_pose_yaw_pitch_roll(&y, &q, &r, p); }

static void test_pose_from_to_quat(void)
{
    ck_mat4 m, sentinel;
    ck_quat q, q2;
    ck_vec3 t;
    int i, axis, j, ok;
    double a = 0.7;
    dvec axis_v = dnorm(dv(0.3, -0.5, 0.8));

    /* Identity. */
    q.x = q.y = q.z = 0.0f; q.w = 1.0f;
    CHECK_STATUS(ck_pose_from_quat(&m, q, fv(1, 2, 3)), CK_OK);
    for (i = 0; i < 12; i++) CHECK_NEAR(m.m[i], (i % 5 == 0) ? 1.0 : 0.0, 1e-7);
    CHECK(m.m[12] == 1.0f && m.m[13] == 2.0f && m.m[14] == 3.0f && m.m[15] == 1.0f);
    CHECK(m.m[3] == 0.0f && m.m[7] == 0.0f && m.m[11] == 0.0f);

    /* A rotation of angle a about axis_v, given un-normalised (x 3): columns are R e_i (Rodrigues). */
    q.x = (float)(3 * axis_v.x * sin(a / 2)); q.y = (float)(3 * axis_v.y * sin(a / 2));
    q.z = (float)(3 * axis_v.z * sin(a / 2)); q.w = (float)(3 * cos(a / 2));
    CHECK_STATUS(ck_pose_from_quat(&m, q, fv(-0.5, 0.25, 4)), CK_OK);
    for (i = 0; i < 3; i++) {
        dvec e = dv(i == 0, i == 1, i == 2);
        dvec r = dadd(dadd(dmul(e, cos(a)), dmul(dcross(axis_v, e), sin(a))), dmul(axis_v, ddot(axis_v, e) * (1 - cos(a))));
        CHECK_NEAR(m.m[i * 4 + 0], r.x, 1e-6);
        CHECK_NEAR(m.m[i * 4 + 1], r.y, 1e-6);
        CHECK_NEAR(m.m[i * 4 + 2], r.z, 1e-6);
    }
    /* Round trip through ck_pose_to_quat (unit, w >= 0). */
    CHECK_STATUS(ck_pose_to_quat(&q2, &t, &m), CK_OK);
    CHECK_NEAR(q2.x, q.x / 3, 1e-6); CHECK_NEAR(q2.y, q.y / 3, 1e-6);
    CHECK_NEAR(q2.z, q.z / 3, 1e-6); CHECK_NEAR(q2.w, q.w / 3, 1e-6);
    CHECK(t.x == -0.5f && t.y == 0.25f && t.z == 4.0f);
    /* A quaternion with w < 0 comes back with w >= 0 (the same rotation). */
    q.x = -q.x; q.y = -q.y; q.z = -q.z; q.w = -q.w;
    CHECK_STATUS(ck_pose_from_quat(&m, q, fv(0, 0, 0)), CK_OK);
    CHECK_STATUS(ck_pose_to_quat(&q2, &t, &m), CK_OK);
    CHECK(q2.w >= 0.0f);
    CHECK_NEAR(q2.x, -q.x / 3, 1e-6);
    CHECK_NEAR(sqrt((double)q2.x * q2.x + (double)q2.y * q2.y + (double)q2.z * q2.z + (double)q2.w * q2.w), 1.0, 1e-6);
    /* 180-degree rotation (trace -1): still a unit quaternion giving the same matrix. */
    m = pose_ypr(PI, 0, 0, dv(0, 0, 0));
    CHECK_STATUS(ck_pose_to_quat(&q2, &t, &m), CK_OK);
    CHECK_NEAR(fabs(q2.y), 1.0, 1e-6);

    /* Errors: NULL, zero quaternion, NaN/inf in every component, absurd translation. */
    memset(&sentinel, 0xAB, sizeof sentinel);
    q.x = 0; q.y = 0; q.z = 0; q.w = 1;
    ERR(CK_E_INVALID_ARGUMENT, "pose_out", ck_pose_from_quat, (NULL, q, fv(0, 0, 0)));
    q.w = 0;
    m = sentinel;
    ERR(CK_E_INVALID_ARGUMENT, "rotation", ck_pose_from_quat, (&m, q, fv(0, 0, 0)));
    CHECK(memcmp(&m, &sentinel, sizeof m) == 0);
    q.w = 1e-30f;
    ERR(CK_E_INVALID_ARGUMENT, "rotation", ck_pose_from_quat, (&m, q, fv(0, 0, 0)));
    ok = 1;
    for (i = 0; i < 4; i++) {
        for (j = 0; j < N_BAD; j++) {
            ck_quat bq; bq.x = 0; bq.y = 0; bq.z = 0; bq.w = 1;
            if (i == 0) bq.x = bad_float(j); else if (i == 1) bq.y = bad_float(j); else if (i == 2) bq.z = bad_float(j); else bq.w = bad_float(j);
            m = sentinel;
            if (ck_pose_from_quat(&m, bq, fv(0, 0, 0)) != CK_E_INVALID_ARGUMENT || memcmp(&m, &sentinel, sizeof m) != 0) ok = 0;
        }
    }
    CHECK(ok); /* NaN/+inf/-inf in each quaternion component */
    q.x = 0; q.y = 0; q.z = 0; q.w = 1;
    ok = 1;
    for (axis = 0; axis < 3; axis++) {
        for (j = 0; j < N_BAD; j++) {
            if (ck_pose_from_quat(&m, q, vec_with(fv(0, 0, 0), axis, bad_float(j))) != CK_E_INVALID_ARGUMENT) ok = 0;
        }
    }
    CHECK(ok); /* NaN/+inf/-inf in each translation component */
    ERR(CK_E_INVALID_ARGUMENT, "translation", ck_pose_from_quat, (&m, q, fv(0, -2.0e6, 0)));
    CHECK_STATUS(ck_pose_from_quat(&m, q, fv(0, -CK_MAX_COORDINATE, 0)), CK_OK); /* the limit itself is fine */

    m = make_camera();
    ERR(CK_E_INVALID_ARGUMENT, "rotation_out", ck_pose_to_quat, (NULL, &t, &m));
    ERR(CK_E_INVALID_ARGUMENT, "translation_out", ck_pose_to_quat, (&q2, NULL, &m));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_pose_to_quat, (&q2, &t, NULL));
    CHECK_BAD_POSES("ck_pose_to_quat", w_pose_to_quat);
}

static void mat_mul_ref(ck_mat4 *out, const ck_mat4 *a, const ck_mat4 *b)
{
    int r, c, k;
    for (c = 0; c < 4; c++) {
        for (r = 0; r < 4; r++) {
            double s = 0;
            for (k = 0; k < 4; k++) s += (double)m4(a, r, k) * m4(b, k, c);
            out->m[c * 4 + r] = (float)s;
        }
    }
}

static int mat_near(const ck_mat4 *a, const ck_mat4 *b, double tol)
{
    int i;
    for (i = 0; i < 16; i++) if (!(fabs((double)a->m[i] - b->m[i]) <= tol)) return 0;
    return 1;
}

static void test_matrices(void)
{
    ck_mat4 a, b, out, ref, inv, prod, id = mat_identity(), sentinel;
    int i, j, ok;

    for (i = 0; i < 16; i++) { a.m[i] = (float)rnd(-2, 2); b.m[i] = (float)rnd(-2, 2); }
    /* multiply */
    CHECK_STATUS(ck_mat4_multiply(&out, &a, &b), CK_OK);
    mat_mul_ref(&ref, &a, &b);
    CHECK(mat_near(&out, &ref, 1e-5));
    out = a;
    CHECK_STATUS(ck_mat4_multiply(&out, &out, &b), CK_OK); /* out == a */
    CHECK(mat_near(&out, &ref, 1e-5));
    out = b;
    CHECK_STATUS(ck_mat4_multiply(&out, &a, &out), CK_OK); /* out == b */
    CHECK(mat_near(&out, &ref, 1e-5));
    out = a;
    CHECK_STATUS(ck_mat4_multiply(&out, &out, &out), CK_OK); /* out == a == b */
    mat_mul_ref(&ref, &a, &a);
    CHECK(mat_near(&out, &ref, 1e-5));
    /* Column-major: a translation times a point-like column moves it. */
    {
        ck_mat4 t = mat_identity(), p;
        memset(&p, 0, sizeof p);
        t.m[12] = 1; t.m[13] = 2; t.m[14] = 3;
        p.m[0] = 10; p.m[1] = 20; p.m[2] = 30; p.m[3] = 1; /* column 0 = point (10,20,30,1) */
        CHECK_STATUS(ck_mat4_multiply(&out, &t, &p), CK_OK);
        CHECK(out.m[0] == 11 && out.m[1] == 22 && out.m[2] == 33 && out.m[3] == 1);
    }
    memset(&sentinel, 0xCD, sizeof sentinel);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_mat4_multiply, (NULL, &a, &b));
    ERR(CK_E_INVALID_ARGUMENT, "a", ck_mat4_multiply, (&out, NULL, &b));
    ERR(CK_E_INVALID_ARGUMENT, "b", ck_mat4_multiply, (&out, &a, NULL));
    ok = 1;
    for (i = 0; i < 16; i++) {
        for (j = 0; j < N_BAD; j++) {
            ck_mat4 bad = a;
            bad.m[i] = bad_float(j);
            out = sentinel;
            if (ck_mat4_multiply(&out, &bad, &b) != CK_E_INVALID_ARGUMENT || memcmp(&out, &sentinel, sizeof out) != 0) ok = 0;
            if (ck_mat4_multiply(&out, &a, &bad) != CK_E_INVALID_ARGUMENT) ok = 0;
        }
    }
    CHECK(ok); /* NaN/+inf/-inf anywhere in a or b; out untouched */
    {
        ck_mat4 big = mat_identity();
        big.m[0] = 1e30f;
        out = sentinel;
        ERR(CK_E_INVALID_ARGUMENT, NULL, ck_mat4_multiply, (&out, &big, &big)); /* 1e60 overflows float */
        CHECK(memcmp(&out, &sentinel, sizeof out) == 0);
    }

    /* transpose */
    CHECK_STATUS(ck_mat4_transpose(&out, &a), CK_OK);
    ok = 1;
    for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) if (m4(&out, i, j) != m4(&a, j, i)) ok = 0;
    CHECK(ok);
    out = a;
    CHECK_STATUS(ck_mat4_transpose(&out, &out), CK_OK);
    CHECK_STATUS(ck_mat4_transpose(&out, &out), CK_OK);
    CHECK(memcmp(&out, &a, sizeof a) == 0);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_mat4_transpose, (NULL, &a));
    ERR(CK_E_INVALID_ARGUMENT, "m", ck_mat4_transpose, (&out, NULL));
    ok = 1;
    for (i = 0; i < 16; i++) {
        for (j = 0; j < N_BAD; j++) {
            ck_mat4 bad = a;
            bad.m[i] = bad_float(j);
            out = sentinel;
            if (ck_mat4_transpose(&out, &bad) != CK_E_INVALID_ARGUMENT || memcmp(&out, &sentinel, sizeof out) != 0) ok = 0;
        }
    }
    CHECK(ok);
    CHECK(strstr(ck_last_error_message(), "ck_mat4_transpose") != NULL);

    /* inverse: P * P^-1 = I, and the independent (R^T, -R^T t). */
    a = pose_ypr(0.9, -0.4, 0.3, dv(1.5, -2.0, 0.75));
    CHECK_STATUS(ck_pose_inverse(&inv, &a), CK_OK);
    CHECK_STATUS(ck_mat4_multiply(&prod, &a, &inv), CK_OK);
    CHECK(mat_near(&prod, &id, 1e-6));
    ok = 1;
    for (i = 0; i < 3; i++) {
        double tt = 0;
        for (j = 0; j < 3; j++) {
            if (fabs((double)m4(&inv, i, j) - m4(&a, j, i)) > 1e-7) ok = 0;
            tt -= (double)m4(&a, j, i) * m4(&a, j, 3);
        }
        if (fabs(m4(&inv, i, 3) - tt) > 1e-6) ok = 0;
    }
    CHECK(ok);
    CHECK(inv.m[3] == 0 && inv.m[7] == 0 && inv.m[11] == 0 && inv.m[15] == 1);
    out = a;
    CHECK_STATUS(ck_pose_inverse(&out, &out), CK_OK); /* in place */
    CHECK(mat_near(&out, &inv, 1e-7));
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_pose_inverse, (NULL, &a));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_pose_inverse, (&out, NULL));
    CHECK_BAD_POSES("ck_pose_inverse", w_pose_inverse);
    /* Within the documented 1e-3 tolerance the pose is accepted. */
    b = a; b.m[0] += 2e-4f;
    CHECK_STATUS(ck_pose_inverse(&out, &b), CK_OK);

    /* OpenGL <-> OpenCV: pose * diag(1, -1, -1, 1); its own inverse. */
    CHECK_STATUS(ck_pose_opengl_to_opencv(&out, &a), CK_OK);
    ok = 1;
    for (i = 0; i < 4; i++) {
        if (out.m[i] != a.m[i] || out.m[4 + i] != -a.m[4 + i] || out.m[8 + i] != -a.m[8 + i] || out.m[12 + i] != a.m[12 + i]) ok = 0;
    }
    CHECK(ok);
    CHECK_STATUS(ck_pose_opencv_to_opengl(&out, &out), CK_OK); /* in place, back again */
    CHECK(mat_near(&out, &a, 0));
    out = a;
    CHECK_STATUS(ck_pose_opengl_to_opencv(&out, &out), CK_OK);
    CHECK(out.m[5] == -a.m[5] && out.m[10] == -a.m[10]);
    {   /* The camera's view direction: OpenGL -z column == OpenCV +z column. */
        ck_mat4 cv;
        CHECK_STATUS(ck_pose_opengl_to_opencv(&cv, &a), CK_OK);
        CHECK(cv.m[8] == -a.m[8] && cv.m[9] == -a.m[9] && cv.m[10] == -a.m[10]);
    }
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_pose_opengl_to_opencv, (NULL, &a));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_pose_opengl_to_opencv, (&out, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_pose_opencv_to_opengl, (NULL, &a));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_pose_opencv_to_opengl, (&out, NULL));
    CHECK_BAD_POSES("ck_pose_opengl_to_opencv", w_gl_to_cv);
    CHECK_BAD_POSES("ck_pose_opencv_to_opengl", w_cv_to_gl);
}

static void test_yaw_pitch_roll(void)
{
    static const double cases[][3] = {
        { 0, 0, 0 }, { 0.5, 0, 0 }, { -2.5, 0, 0 }, { 0, 0.4, 0 }, { 0, -1.2, 0 }, { 0, 0, 0.7 },
        { 0.3, -0.2, 0.1 }, { -1.9, 0.8, -2.4 }, { 3.0, -1.4, 1.1 }, { PI, 0.2, 0 },
    };
    size_t i;
    float y, p, r;
    ck_mat4 m;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m = pose_ypr(cases[i][0], cases[i][1], cases[i][2], dv(0.1, 0.2, 0.3));
        CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
        CHECK_NEAR(remainder(y - cases[i][0], 2 * PI), 0.0, 2e-5); /* yaw pi may come back as -pi + float rounding */
        CHECK_NEAR(p, cases[i][1], 2e-5);
        CHECK_NEAR(r, cases[i][2], 2e-5);
        CHECK(y > -PI - 1e-6 && y <= PI + 1e-6 && p >= -PI / 2 && p <= PI / 2 && r > -PI - 1e-6 && r <= PI + 1e-6);
    }
    /* Looking down -z: all zero. Looking left (towards -x): yaw +pi/2 ("positive turning left"). */
    m = mat_identity();
    CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
    CHECK(y == 0 && p == 0 && r == 0);
    m = look_at_d(dv(0, 0, 0), dv(-1, 0, 0));
    CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
    CHECK_NEAR(y, PI / 2, 1e-6);
    /* Looking up: pitch positive. */
    m = look_at_d(dv(0, 0, 0), dv(0, 1, -1));
    CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
    CHECK_NEAR(p, PI / 4, 1e-6);
    /* Gimbal lock: pitch +-pi/2 -> roll 0, yaw carries the rest. */
    m = pose_ypr(0.6, PI / 2, 0.0, dv(0, 0, 0));
    CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
    CHECK_NEAR(p, PI / 2, 1e-3);
    CHECK(r == 0.0f);
    CHECK_NEAR(y, 0.6, 1e-3);
    m = pose_ypr(0.6, -PI / 2, 0.25, dv(0, 0, 0));
    CHECK_STATUS(ck_pose_yaw_pitch_roll(&y, &p, &r, &m), CK_OK);
    CHECK_NEAR(p, -PI / 2, 1e-3);
    CHECK(r == 0.0f);
    {   /* yaw carries the rest: R_y(y) R_x(p) reproduces the pose's rotation. */
        ck_mat4 back = pose_ypr(y, p, 0, dv(0, 0, 0));
        int k, ok = 1;
        for (k = 0; k < 12; k++) if (fabs((double)back.m[k] - m.m[k]) > 2e-3) ok = 0;
        CHECK(ok);
    }
    m = make_camera();
    ERR(CK_E_INVALID_ARGUMENT, "yaw_out", ck_pose_yaw_pitch_roll, (NULL, &p, &r, &m));
    ERR(CK_E_INVALID_ARGUMENT, "pitch_out", ck_pose_yaw_pitch_roll, (&y, NULL, &r, &m));
    ERR(CK_E_INVALID_ARGUMENT, "roll_out", ck_pose_yaw_pitch_roll, (&y, &p, NULL, &m));
    ERR(CK_E_INVALID_ARGUMENT, "pose", ck_pose_yaw_pitch_roll, (&y, &p, &r, NULL));
    CHECK_BAD_POSES("ck_pose_yaw_pitch_roll", w_ypr);
}

static ck_status w_intr_scale(const ck_intrinsics *k) { ck_intrinsics o; return ck_intrinsics_scale(&o, k, 256, 192); }

static void test_intrinsics_scale(void)
{
    ck_intrinsics k = make_intrinsics(), out, sentinel;

    CHECK_STATUS(ck_intrinsics_scale(&out, &k, 256, 192), CK_OK);
    CHECK_NEAR(out.fx, k.fx * 256.0 / 1920.0, 1e-4);
    CHECK_NEAR(out.cx, k.cx * 256.0 / 1920.0, 1e-4);
    CHECK_NEAR(out.fy, k.fy * 192.0 / 1440.0, 1e-4);
    CHECK_NEAR(out.cy, k.cy * 192.0 / 1440.0, 1e-4);
    CHECK(out.width == 256 && out.height == 192);
    /* Anisotropic target and in place. */
    out = k;
    CHECK_STATUS(ck_intrinsics_scale(&out, &out, 640, 1440), CK_OK);
    CHECK_NEAR(out.fx, k.fx / 3.0, 1e-4);
    CHECK_NEAR(out.fy, k.fy, 1e-6);
    CHECK(out.width == 640 && out.height == 1440);
    CHECK_STATUS(ck_intrinsics_scale(&out, &k, 1, 1), CK_OK);
    CHECK_STATUS(ck_intrinsics_scale(&out, &k, CK_MAX_IMAGE_DIMENSION, CK_MAX_IMAGE_DIMENSION), CK_OK);

    memset(&sentinel, 0xEE, sizeof sentinel);
    out = sentinel;
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_intrinsics_scale, (&out, &k, 0, 192));
    ERR(CK_E_INVALID_ARGUMENT, "height", ck_intrinsics_scale, (&out, &k, 256, 0));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_intrinsics_scale, (&out, &k, CK_MAX_IMAGE_DIMENSION + 1, 192));
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_intrinsics_scale, (&out, &k, 256, UINT32_MAX));
    CHECK(memcmp(&out, &sentinel, sizeof out) == 0);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_intrinsics_scale, (NULL, &k, 256, 192));
    ERR(CK_E_INVALID_ARGUMENT, "in", ck_intrinsics_scale, (&out, NULL, 256, 192));
    CHECK_BAD_INTRINSICS("ck_intrinsics_scale", w_intr_scale);
    /* In place with a bad target leaves *out (== *in) unchanged. */
    out = k;
    ERR(CK_E_INVALID_ARGUMENT, NULL, ck_intrinsics_scale, (&out, &out, 0, 0));
    CHECK(memcmp(&out, &k, sizeof k) == 0);
}

static ck_status w_intr_matrix(const ck_intrinsics *k) { float m[9]; return ck_intrinsics_to_matrix(m, k, CK_MATRIX_LAYOUT_ROW_MAJOR); }

/* 3x3 camera matrices in both layouts: the MultiScan sample's first camera-info line (column-major). */
static void test_intrinsics_matrix(void)
{
    static const float multiscan[9] = { 1613.7047119140625f, 0, 0, 0, 1613.7047119140625f, 0,
                                        941.38348388671875f, 727.04339599609375f, 1 };
    ck_intrinsics k, sentinel;
    float m[9], back[9];
    int i;

    CHECK_STATUS(ck_intrinsics_from_matrix(&k, multiscan, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 1920, 1440), CK_OK);
    CHECK(k.fx == multiscan[0] && k.fy == multiscan[4] && k.cx == multiscan[6] && k.cy == multiscan[7] &&
          k.width == 1920 && k.height == 1440);
    CHECK_STATUS(ck_intrinsics_to_matrix(m, &k, CK_MATRIX_LAYOUT_COLUMN_MAJOR), CK_OK);
    CHECK(memcmp(m, multiscan, sizeof m) == 0);
    CHECK_STATUS(ck_intrinsics_to_matrix(m, &k, CK_MATRIX_LAYOUT_ROW_MAJOR), CK_OK);
    CHECK(m[0] == k.fx && m[1] == 0 && m[2] == k.cx && m[3] == 0 && m[4] == k.fy && m[5] == k.cy &&
          m[6] == 0 && m[7] == 0 && m[8] == 1);
    CHECK_STATUS(ck_intrinsics_from_matrix(&k, m, CK_MATRIX_LAYOUT_ROW_MAJOR, 1920, 1440), CK_OK);
    CHECK_STATUS(ck_intrinsics_to_matrix(back, &k, CK_MATRIX_LAYOUT_ROW_MAJOR), CK_OK);
    CHECK(memcmp(m, back, sizeof m) == 0);

    /* Refused, *intrinsics_out untouched: the other layout, skew, a bad corner, NaN, sizes, layout, NULL. */
    memset(&sentinel, 0xEE, sizeof sentinel);
    k = sentinel;
    ERR(CK_E_INVALID_ARGUMENT, "row 3", ck_intrinsics_from_matrix, (&k, multiscan, CK_MATRIX_LAYOUT_ROW_MAJOR, 1920, 1440));
    memcpy(m, multiscan, sizeof m);
    m[3] = 0.5f; /* column-major K[0][1]: skew */
    ERR(CK_E_INVALID_ARGUMENT, "skew", ck_intrinsics_from_matrix, (&k, m, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 1920, 1440));
    memcpy(m, multiscan, sizeof m);
    m[8] = 2;
    ERR(CK_E_INVALID_ARGUMENT, "row 3", ck_intrinsics_from_matrix, (&k, m, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 1920, 1440));
    for (i = 0; i < 9; i += 4) {
        memcpy(m, multiscan, sizeof m);
        m[i] = NAN;
        CHECK_STATUS(ck_intrinsics_from_matrix(&k, m, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 1920, 1440), CK_E_INVALID_ARGUMENT);
    }
    memcpy(m, multiscan, sizeof m);
    m[0] = -5;
    ERR(CK_E_INVALID_ARGUMENT, "focal", ck_intrinsics_from_matrix, (&k, m, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 1920, 1440));
    ERR(CK_E_INVALID_ARGUMENT, "width", ck_intrinsics_from_matrix, (&k, multiscan, CK_MATRIX_LAYOUT_COLUMN_MAJOR, 0, 1440));
    ERR(CK_E_INVALID_ARGUMENT, "layout", ck_intrinsics_from_matrix, (&k, multiscan, 2, 1920, 1440));
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics_out", ck_intrinsics_from_matrix, (NULL, multiscan, 1, 1920, 1440));
    ERR(CK_E_INVALID_ARGUMENT, "matrix", ck_intrinsics_from_matrix, (&k, NULL, 1, 1920, 1440));
    CHECK(memcmp(&k, &sentinel, sizeof k) == 0);
    k = make_intrinsics();
    ERR(CK_E_INVALID_ARGUMENT, "layout", ck_intrinsics_to_matrix, (m, &k, -1));
    ERR(CK_E_INVALID_ARGUMENT, "matrix_out", ck_intrinsics_to_matrix, (NULL, &k, 0));
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_intrinsics_to_matrix, (m, NULL, 0));
    CHECK_BAD_INTRINSICS("ck_intrinsics_to_matrix", w_intr_matrix);
}


/* ============================================================================================ */

/* ck_pose_look_at against the test's own look_at (double) over generated views, and its refusals. */
static void test_pose_look_at(void)
{
    unsigned seed = 12345u;
    double worst = 0;
    for (int i = 0; i < 1000; i++) {
        double r[6];
        for (int j = 0; j < 6; j++) { seed = seed * 1664525u + 1013904223u; r[j] = (seed >> 8) / 16777216.0 * 20.0 - 10.0; }
        dvec eye = dv((float)r[0], (float)r[1], (float)r[2]), target = dv((float)r[3], (float)r[4], (float)r[5]);
        dvec d = dsub(target, eye);
        if (fabs(d.y) > 0.99 * sqrt(d.x * d.x + d.y * d.y + d.z * d.z)) continue;  /* near vertical */
        ck_mat4 want = look_at_d(eye, target), got;
        CHECK_STATUS(ck_pose_look_at(&got, (ck_vec3){(float)eye.x, (float)eye.y, (float)eye.z},
                                     (ck_vec3){(float)target.x, (float)target.y, (float)target.z},
                                     (ck_vec3){0, 1, 0}), CK_OK);
        for (int k = 0; k < 16; k++) {
            double e = fabs((double)got.m[k] - (double)want.m[k]);
            if (e > worst) worst = e;
        }
    }
    CHECK(worst <= 1e-5);
    ck_mat4 m;
    ck_vec3 o = {0, 0, 0}, ahead = {0, 0, -2}, up = {0, 1, 0};
    CHECK_STATUS(ck_pose_look_at(&m, o, ahead, up), CK_OK);   /* looking down -z: identity */
    for (int k = 0; k < 16; k++) CHECK_NEAR(m.m[k], (k % 5 == 0) ? 1.0 : 0.0, 1e-7);
    CHECK_STATUS(ck_pose_look_at(NULL, o, ahead, up), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pose_look_at(&m, o, o, up), CK_E_INVALID_ARGUMENT);                  /* eye == target */
    CHECK_STATUS(ck_pose_look_at(&m, o, (ck_vec3){0, 3, 0}, up), CK_E_INVALID_ARGUMENT); /* parallel to up */
    CHECK_STATUS(ck_pose_look_at(&m, o, ahead, (ck_vec3){0, 0, 0}), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pose_look_at(&m, (ck_vec3){NAN, 0, 0}, ahead, up), CK_E_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pose_look_at(&m, o, ahead, (ck_vec3){0, INFINITY, 0}), CK_E_INVALID_ARGUMENT);
}

int main(void)
{
    test_status_and_version(); /* first: checks the message is "" before any failure */
    test_last_error_message();
    test_pose_from_to_quat();
    test_matrices();
    test_yaw_pitch_roll();
    test_pose_look_at();
    test_intrinsics_scale();
    test_intrinsics_matrix();

    return CHECK_SUMMARY();
}
