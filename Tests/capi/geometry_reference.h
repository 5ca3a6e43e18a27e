/*
 * geometry_reference.h — independent double-precision reference math for the C tests of the
 * geometry, box and raycast areas (test_geometry.c, test_box.c, test_raycast.c), written from the
 * conventions stated in the header and docs/DESIGN.md#conventions, plus the families of bad
 * arguments every function taking a pose, intrinsics or a box is checked with. Test-only.
 */
#ifndef CK_TESTS_CAPI_GEOMETRY_REFERENCE_H
#define CK_TESTS_CAPI_GEOMETRY_REFERENCE_H

#include "capturekit.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "support.h"

#if defined(__GNUC__)
#define REF_UNUSED __attribute__((unused))
#else
#define REF_UNUSED
#endif

/* ============================================================================================
 * Independent reference math (double), from the header's conventions
 * ============================================================================================ */

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

typedef struct { double x, y, z; } dvec;

static inline dvec dv(double x, double y, double z) { dvec r; r.x = x; r.y = y; r.z = z; return r; }
static inline dvec dv3(ck_vec3 v) { return dv(v.x, v.y, v.z); }
static inline dvec dadd(dvec a, dvec b) { return dv(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline dvec dsub(dvec a, dvec b) { return dv(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline dvec dmul(dvec a, double s) { return dv(a.x * s, a.y * s, a.z * s); }
static inline double ddot(dvec a, dvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline dvec dcross(dvec a, dvec b) { return dv(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static inline double dlen(dvec a) { return sqrt(ddot(a, a)); }
static inline dvec dnorm(dvec a) { return dmul(a, 1.0 / dlen(a)); }
static inline double dget(dvec a, int i) { return i == 0 ? a.x : i == 1 ? a.y : a.z; }
static inline ck_vec3 fv(double x, double y, double z) { ck_vec3 r; r.x = (float)x; r.y = (float)y; r.z = (float)z; return r; }
static inline ck_vec3 fvd(dvec a) { return fv(a.x, a.y, a.z); }

/** R_y(yaw) * p with rows [cos,0,sin],[0,1,0],[-sin,0,cos] (local -> world). */
static inline dvec ry(double yaw, dvec p) { return dv(cos(yaw) * p.x + sin(yaw) * p.z, p.y, -sin(yaw) * p.x + cos(yaw) * p.z); }
/** R_y(yaw)^T * p (world -> local). */
static inline dvec ry_t(double yaw, dvec p) { return dv(cos(yaw) * p.x - sin(yaw) * p.z, p.y, sin(yaw) * p.x + cos(yaw) * p.z); }

static inline double dist3(ck_vec3 a, dvec b) { return dlen(dsub(dv3(a), b)); }

/** Rotates v by the unit quaternion q (vector part first). */
static inline dvec qrot(ck_quat q, dvec v)
{
    dvec u = dv(q.x, q.y, q.z);
    double w = q.w;
    dvec t = dmul(dcross(u, v), 2.0);
    return dadd(dadd(v, dmul(t, w)), dcross(u, t));
}

/** Column-major 4x4 element (row r, column c). */
static inline float m4(const ck_mat4 *m, int r, int c) { return m->m[c * 4 + r]; }

static inline ck_mat4 mat_identity(void)
{
    ck_mat4 m;
    int i;
    memset(&m, 0, sizeof m);
    for (i = 0; i < 4; i++) m.m[i * 5] = 1.0f;
    return m;
}

/** A pose from three rotation columns and a translation. */
static inline ck_mat4 mat_pose(dvec x, dvec y, dvec z, dvec t)
{
    ck_mat4 m = mat_identity();
    m.m[0] = (float)x.x; m.m[1] = (float)x.y; m.m[2] = (float)x.z;
    m.m[4] = (float)y.x; m.m[5] = (float)y.y; m.m[6] = (float)y.z;
    m.m[8] = (float)z.x; m.m[9] = (float)z.y; m.m[10] = (float)z.z;
    m.m[12] = (float)t.x; m.m[13] = (float)t.y; m.m[14] = (float)t.z;
    return m;
}

/** Camera-to-world pose at `eye` looking at `target` (OpenGL axes: looks down -z, +y up). */
static inline ck_mat4 look_at_d(dvec eye, dvec target)
{
    dvec f = dnorm(dsub(target, eye));
    dvec right = dnorm(dcross(f, dv(0, 1, 0)));
    dvec up = dcross(right, f);
    return mat_pose(right, up, dmul(f, -1.0), eye);
}

/** R = R_y(yaw) R_x(pitch) R_z(roll) as a pose at `t`. */
static inline ck_mat4 pose_ypr(double yaw, double pitch, double roll, dvec t)
{
    /* Columns of R_y R_x R_z applied to the unit axes. */
    double cy = cos(yaw), sy = sin(yaw), cp = cos(pitch), sp = sin(pitch), cr = cos(roll), sr = sin(roll);
    /* R_x R_z columns */
    dvec a = dv(cr, cp * sr, sp * sr), b = dv(-sr, cp * cr, sp * cr), c = dv(0, -sp, cp);
    dvec x = dv(cy * a.x + sy * a.z, a.y, -sy * a.x + cy * a.z);
    dvec y = dv(cy * b.x + sy * b.z, b.y, -sy * b.x + cy * b.z);
    dvec z = dv(cy * c.x + sy * c.z, c.y, -sy * c.x + cy * c.z);
    return mat_pose(x, y, z, t);
}

static inline dvec pose_rot(const ck_mat4 *p, dvec v)
{
    return dv(m4(p, 0, 0) * v.x + m4(p, 0, 1) * v.y + m4(p, 0, 2) * v.z,
              m4(p, 1, 0) * v.x + m4(p, 1, 1) * v.y + m4(p, 1, 2) * v.z,
              m4(p, 2, 0) * v.x + m4(p, 2, 1) * v.y + m4(p, 2, 2) * v.z);
}
static inline dvec pose_t(const ck_mat4 *p) { return dv(m4(p, 0, 3), m4(p, 1, 3), m4(p, 2, 3)); }

/** Camera-frame direction through pixel (u, v), world frame, not normalised. */
static inline dvec pixel_dir(const ck_mat4 *pose, const ck_intrinsics *k, double u, double v)
{
    return pose_rot(pose, dv((u - k->cx) / k->fx, -(v - k->cy) / k->fy, -1.0));
}

typedef struct { int face; double t; int inside; } ref_hit;

/** Reference closed-box slab test: t in units of |d| (pass a unit d for metres). face -1 on a miss. */
static inline ref_hit ref_ray_box(dvec origin, dvec d, dvec center, dvec size, double yaw)
{
    static const int neg_face[3] = { CK_FACE_LEFT, CK_FACE_BOTTOM, CK_FACE_FRONT };
    static const int pos_face[3] = { CK_FACE_RIGHT, CK_FACE_TOP, CK_FACE_BACK };
    ref_hit r;
    dvec o = ry_t(yaw, dsub(origin, center)), dl = ry_t(yaw, d);
    double tn = -HUGE_VAL, tf = HUGE_VAL;
    int fn = -1, ff = -1, i;
    r.face = -1; r.t = HUGE_VAL; r.inside = 0;
    for (i = 0; i < 3; i++) {
        double oi = dget(o, i), di = dget(dl, i), h = dget(size, i) / 2;
        double t1, t2, near, far;
        int enter, leave;
        if (di == 0) {
            if (fabs(oi) > h) return r;
            continue;
        }
        t1 = (-h - oi) / di; t2 = (h - oi) / di;
        near = t1 < t2 ? t1 : t2; far = t1 < t2 ? t2 : t1;
        enter = di > 0 ? neg_face[i] : pos_face[i];
        leave = di > 0 ? pos_face[i] : neg_face[i];
        if (near > tn || (near == tn && enter < fn)) { tn = near; fn = enter; }
        if (far < tf || (far == tf && leave < ff)) { tf = far; ff = leave; }
    }
    if (tn > tf || tf < 0) return r;
    r.inside = fabs(o.x) <= size.x / 2 && fabs(o.y) <= size.y / 2 && fabs(o.z) <= size.z / 2;
    r.face = r.inside ? ff : fn;
    r.t = r.inside ? tf : tn;
    return r;
}

static const dvec REF_UNUSED k_corner_signs[8] = {
    { -1, 1, -1 }, { 1, 1, -1 }, { 1, -1, -1 }, { -1, -1, -1 }, { -1, 1, 1 }, { 1, 1, 1 }, { 1, -1, 1 }, { -1, -1, 1 },
};
static const dvec REF_UNUSED k_face_normals[6] = {
    { 0, 0, -1 }, { -1, 0, 0 }, { 1, 0, 0 }, { 0, -1, 0 }, { 0, 1, 0 }, { 0, 0, 1 },
};
static inline int face_axis(int f) { return f == CK_FACE_LEFT || f == CK_FACE_RIGHT ? 0 : f == CK_FACE_BOTTOM || f == CK_FACE_TOP ? 1 : 2; }

/** Deterministic xorshift generator; uniform in [lo, hi). */
static uint64_t REF_UNUSED g_rng = 0x9E3779B97F4A7C15ull;
static inline double rnd(double lo, double hi)
{
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) / 9007199254740992.0;
}

static inline int box_equal(const ck_box *a, const ck_box *b) { return memcmp(a, b, sizeof *a) == 0; }

/* Values used throughout */
static inline float f_nan(void) { return NAN; }
static inline float f_inf(void) { return INFINITY; }
#define N_BAD 3
static inline float bad_float(int i) { return i == 0 ? f_nan() : i == 1 ? f_inf() : -f_inf(); }
static inline ck_vec3 vec_with(ck_vec3 v, int axis, float value)
{
    if (axis == 0) v.x = value; else if (axis == 1) v.y = value; else v.z = value;
    return v;
}

static const ck_vec3 REF_UNUSED k_center = { 0.3f, -0.6f, -0.2f };
static const ck_vec3 REF_UNUSED k_size = { 0.9f, 0.7f, 1.3f };
#define K_YAW ((float)(25.0 * DEG))
#define K_FLOOR (-0.95f)

static inline ck_box make_box(void)
{
    ck_box b;
    ck_status s = ck_box_init(&b, k_center, k_size, K_YAW);
    if (s != CK_OK) { fprintf(stderr, "ck_box_init failed: %s\n", ck_last_error_message()); exit(2); }
    return b;
}
static inline ck_box make_floor_box(void)
{
    ck_box b = make_box();
    if (ck_box_set_floor(&b, K_FLOOR) != CK_OK) { fprintf(stderr, "ck_box_set_floor failed\n"); exit(2); }
    return b;
}
static inline ck_intrinsics make_intrinsics(void)
{
    ck_intrinsics k;
    k.fx = 1450.0f; k.fy = 1452.5f; k.cx = 958.25f; k.cy = 721.5f; k.width = 1920; k.height = 1440;
    return k;
}
/** Camera outside the box, looking at it from the front-right, above. */
static inline ck_mat4 make_camera(void) { return look_at_d(dv(1.1, 0.55, -2.4), dv(0.25, -0.65, -0.15)); }

/* ============================================================================================
 * Families of bad arguments, applied to every function taking a pose, intrinsics or a box
 * ============================================================================================ */

typedef ck_status (*pose_fn)(const ck_mat4 *pose);
typedef ck_status (*intr_fn)(const ck_intrinsics *k);
typedef ck_status (*box_fn)(ck_box *box);

/** Non-rigid or non-finite poses: each must give CK_E_INVALID_ARGUMENT naming `fn`. */
static inline void check_bad_poses(const char *fn, pose_fn call, const char *file, int line)
{
    ck_mat4 good = pose_ypr(0.4, -0.3, 0.2, dv(0.5, 1.0, 2.0));
    ck_mat4 p;
    int i, j, all_ok = 1;
    char expr[160];
    for (i = 0; i < 16; i++) {
        for (j = 0; j < N_BAD; j++) {
            p = good;
            p.m[i] = bad_float(j);
            if (call(&p) != CK_E_INVALID_ARGUMENT || !strstr(ck_last_error_message(), fn)) all_ok = 0;
        }
    }
    sprintf(expr, "%s rejects a NaN/+inf/-inf in each of the 16 pose elements", fn);
    check_report(all_ok, file, line, "%s", expr);

    p = good; for (i = 0; i < 3; i++) p.m[i] *= 2.0f;                      /* scaled x axis */
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "scaled rotation", file, line);
    p = good; for (i = 0; i < 3; i++) p.m[8 + i] = -p.m[8 + i];            /* reflection, det -1 */
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "reflection", file, line);
    p = good; p.m[4] += 0.1f;                                              /* shear */
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "shear", file, line);
    p = good; p.m[3] = 0.5f;                                               /* bottom row */
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "bottom row (0.5,0,0,1)", file, line);
    p = good; p.m[15] = 2.0f;
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "m[15] = 2", file, line);
    p = good; p.m[12] = 2.0e6f;                                            /* |t| > CK_MAX_COORDINATE */
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "translation 2e6", file, line);
    memset(&p, 0, sizeof p);
    check_err(call(&p), CK_E_INVALID_ARGUMENT, fn, NULL, "zero matrix", file, line);
    check_err(call(NULL), CK_E_INVALID_ARGUMENT, fn, NULL, "NULL pose", file, line);
}
#define CHECK_BAD_POSES(fn, call) check_bad_poses(fn, call, __FILE__, __LINE__)

static inline void check_bad_intrinsics(const char *fn, intr_fn call, const char *file, int line)
{
    ck_intrinsics k;
    int j, all_ok = 1;
    for (j = 0; j < N_BAD; j++) {
        k = make_intrinsics(); k.fx = bad_float(j); if (call(&k) != CK_E_INVALID_ARGUMENT) all_ok = 0;
        k = make_intrinsics(); k.fy = bad_float(j); if (call(&k) != CK_E_INVALID_ARGUMENT) all_ok = 0;
        k = make_intrinsics(); k.cx = bad_float(j); if (call(&k) != CK_E_INVALID_ARGUMENT) all_ok = 0;
        k = make_intrinsics(); k.cy = bad_float(j); if (call(&k) != CK_E_INVALID_ARGUMENT) all_ok = 0;
    }
    check_report(all_ok && strstr(ck_last_error_message(), fn) != NULL, file, line,
                 "%s rejects NaN/+inf/-inf in fx, fy, cx, cy", fn);
    k = make_intrinsics(); k.fx = 0.0f;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "fx = 0", file, line);
    k = make_intrinsics(); k.fy = -1450.0f;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "fy < 0", file, line);
    k = make_intrinsics(); k.fx = 1e30f;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "fx = 1e30", file, line);
    k = make_intrinsics(); k.width = 0;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "width = 0", file, line);
    k = make_intrinsics(); k.height = 0;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "height = 0", file, line);
    k = make_intrinsics(); k.width = CK_MAX_IMAGE_DIMENSION + 1;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "width = 65537", file, line);
    k = make_intrinsics(); k.height = UINT32_MAX;
    check_err(call(&k), CK_E_INVALID_ARGUMENT, fn, NULL, "height = UINT32_MAX", file, line);
    check_err(call(NULL), CK_E_INVALID_ARGUMENT, fn, NULL, "NULL intrinsics", file, line);
}
#define CHECK_BAD_INTRINSICS(fn, call) check_bad_intrinsics(fn, call, __FILE__, __LINE__)

/** Hand-written invalid boxes: each gives CK_E_INVALID_ARGUMENT and (in/out boxes) stays unchanged. */
static inline void check_bad_boxes(const char *fn, box_fn call, const char *file, int line)
{
    ck_box b, copy;
    int axis, j, all_ok = 1;
    for (axis = 0; axis < 3; axis++) {
        for (j = 0; j < N_BAD; j++) {
            b = make_box(); b.center = vec_with(b.center, axis, bad_float(j)); copy = b;
            if (call(&b) != CK_E_INVALID_ARGUMENT || !box_equal(&b, &copy)) all_ok = 0;
            b = make_box(); b.size = vec_with(b.size, axis, bad_float(j)); copy = b;
            if (call(&b) != CK_E_INVALID_ARGUMENT || !box_equal(&b, &copy)) all_ok = 0;
        }
    }
    for (j = 0; j < N_BAD; j++) {
        b = make_box(); b.yaw = bad_float(j); copy = b;
        if (call(&b) != CK_E_INVALID_ARGUMENT || !box_equal(&b, &copy)) all_ok = 0;
        b = make_floor_box(); b.floor = bad_float(j); copy = b;
        if (call(&b) != CK_E_INVALID_ARGUMENT || !box_equal(&b, &copy)) all_ok = 0;
    }
    check_report(all_ok && strstr(ck_last_error_message(), fn) != NULL, file, line,
                 "%s rejects NaN/+inf/-inf in box centre, size, yaw, floor (box unchanged)", fn);
    {
        static const float bad_sizes[] = { 0.0f, -0.5f, 0.005f, 1000.5f, 1e30f };
        size_t i;
        all_ok = 1;
        for (i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
            for (axis = 0; axis < 3; axis++) {
                b = make_box(); b.size = vec_with(b.size, axis, bad_sizes[i]); copy = b;
                if (call(&b) != CK_E_INVALID_ARGUMENT || !box_equal(&b, &copy)) all_ok = 0;
            }
        }
        check_report(all_ok, file, line, "%s rejects box sizes 0, -0.5, 0.005, 1000.5, 1e30 (box unchanged)", fn);
    }
    b = make_box(); b.has_floor = 2; copy = b;
    check_err(call(&b), CK_E_INVALID_ARGUMENT, fn, "has_floor", "has_floor = 2", file, line);
    check_report(box_equal(&b, &copy), file, line, "%s: box unchanged after has_floor = 2", fn);
    b = make_box(); b.has_floor = -1; copy = b;
    check_err(call(&b), CK_E_INVALID_ARGUMENT, fn, "has_floor", "has_floor = -1", file, line);
    b = make_box(); b.center.x = 2.0e6f; copy = b;
    check_err(call(&b), CK_E_INVALID_ARGUMENT, fn, NULL, "centre 2e6", file, line);
    check_report(box_equal(&b, &copy), file, line, "%s: box unchanged after centre 2e6", fn);
    b = make_floor_box(); b.floor = -2.0e6f; copy = b;
    check_err(call(&b), CK_E_INVALID_ARGUMENT, fn, NULL, "floor -2e6", file, line);
    check_report(box_equal(&b, &copy), file, line, "%s: box unchanged after floor -2e6", fn);
    check_err(call(NULL), CK_E_INVALID_ARGUMENT, fn, "box", "NULL box", file, line);
}
#define CHECK_BAD_BOXES(fn, call) check_bad_boxes(fn, call, __FILE__, __LINE__)


/** ERR_BOX: like ERR, and the in/out box is byte-for-byte unchanged. */
#define ERR_BOX(want, argname, boxp, fn, args)                                                          \
    do {                                                                                               \
        ck_box copy_ = *(boxp);                                                                        \
        ERR(want, argname, fn, args);                                                                  \
        check_report(box_equal((boxp), &copy_), __FILE__, __LINE__, "%s%s left the box unchanged", #fn, #args); \
    } while (0)

/** The floor invariant: center.y == floor + size.y / 2. */
#define CHECK_SEATED(b) CHECK((b).has_floor == 1 && fabs((double)(b).center.y - ((double)(b).floor + (b).size.y / 2.0)) <= 1e-6)

#endif /* CK_TESTS_CAPI_GEOMETRY_REFERENCE_H */
