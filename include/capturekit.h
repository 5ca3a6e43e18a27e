/*
 * capturekit.h — the public C API of CaptureKit, the portable core of a guided 3D-capture rig.
 *
 * This header is the reference documentation and the ABI contract. What is not declared here is
 * not API. Plain C99; also compiles as C++.
 *
 * CONVENTIONS (tested everywhere)
 *   World:   right-handed, metres, +y up (gravity), like ARKit. Angles are radians unless a function
 *            name says "degrees".
 *   Poses:   camera-to-world 4x4 matrices, ck_mat4, COLUMN-MAJOR (m[12..14] is the translation),
 *            OpenGL/ARKit camera axes: the camera looks down -z, +y is up, +x is right.
 *            ck_pose_opengl_to_opencv() converts to the OpenCV/COLMAP camera axes.
 *            Functions taking a pose require a rigid transform: finite, rotation orthonormal within
 *            1e-3, determinant +1, bottom row (0,0,0,1) within 1e-3, |translation| <= CK_MAX_COORDINATE.
 *   Pixels:  continuous coordinates (u, v) with (0, 0) at the top-left corner of the image, v down;
 *            the centre of pixel (i, j) is (i + 0.5, j + 0.5). The ray through (u, v) has the camera
 *            direction ((u - cx) / fx, -(v - cy) / fy, -1).
 *   Box:     centre, size (full edge lengths), yaw about +y, optional floor height. A local point p
 *            maps to world as centre + R_y(yaw) * p, R_y rows [cos,0,sin],[0,1,0],[-sin,0,cos].
 *            Front is local -z, left is -x, top is +y. Corner and face order: ck_corner, ck_face.
 *
 * ERRORS
 *   Fallible functions return a ck_status: CK_OK (0), a positive special outcome (CK_MISS), or a
 *   negative CK_E_* code. On a negative code, ck_last_error_message() gives a thread-local message
 *   that names the function and the argument. Outputs are written only on CK_OK (and on CK_MISS
 *   where a function says so); an in/out object (a ck_box being edited) is unchanged on error.
 *   Every pointer, size and float is validated: NULL, NaN, +-inf, zero or negative sizes and
 *   absurd values return CK_E_INVALID_ARGUMENT. No input can make the library abort the process.
 *
 * THREAD SAFETY
 *   Every function in this version works on values only and is safe to call from any thread.
 *   (Handles added later are used by one thread at a time; distinct handles are independent.)
 *   Error messages are per thread.
 *
 * MEMORY
 *   Callers own every buffer they pass in. Strings returned as `const char *` are library-owned
 *   and static unless documented otherwise. Memory the library allocates for the caller is freed
 *   with ck_free(), never free().
 */
#ifndef CAPTUREKIT_H
#define CAPTUREKIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define CK_API __attribute__((visibility("default")))
#else
#  define CK_API
#endif

/* ============================================================================================
 * Status and version
 * ============================================================================================ */

/** Version of this header. Same major = ABI compatible. CK_VERSION_NUMBER = MAJOR*10000+MINOR*100+PATCH. */
#define CK_VERSION_MAJOR 0
#define CK_VERSION_MINOR 1
#define CK_VERSION_PATCH 0
#define CK_VERSION_NUMBER (CK_VERSION_MAJOR * 10000 + CK_VERSION_MINOR * 100 + CK_VERSION_PATCH)
#define CK_VERSION_STRING "0.1.0"

/** Status codes. Explicit values, append only, never renumbered or reused. */
typedef int32_t ck_status;
#define CK_OK                     0  /**< success */
#define CK_MISS                   1  /**< normal outcome: the ray hits nothing (outputs say so) */
#define CK_E_INVALID_ARGUMENT   (-1) /**< NULL, NaN/inf, out of range or inconsistent argument */
#define CK_E_BUFFER_TOO_SMALL   (-2) /**< caller buffer too small; the needed size is reported */
#define CK_E_IO                 (-3) /**< file system error (depth and dataset sections) */
#define CK_E_CORRUPT            (-4) /**< malformed or truncated input data (depth and dataset sections) */
#define CK_E_STATE              (-5) /**< the call is not valid in the object's current state */
#define CK_E_UNSUPPORTED        (-6) /**< valid request this build or version does not support */
#define CK_E_NOT_FOUND          (-7) /**< nothing to work on (e.g. no usable points) */
#define CK_E_NO_MEMORY          (-8) /**< an allocation failed (depth and dataset sections) */

/** Static English name of a status ("CK_E_INVALID_ARGUMENT: invalid argument"); never NULL;
 *  "unknown status" for codes not listed above. Since 0.1. */
CK_API const char *ck_status_string(ck_status status);

/** Detail of the last failure on the calling thread; never NULL ("" if none yet). Library-owned,
 *  valid until the next failing call on this thread. Only failing calls set it. Since 0.1. */
CK_API const char *ck_last_error_message(void);

/** Runtime version number of the loaded library (compare with CK_VERSION_NUMBER). Since 0.1. */
CK_API uint32_t ck_version_number(void);

/** Runtime version string, static ("0.1.0"). Since 0.1. */
CK_API const char *ck_version_string(void);

/** Frees memory the library allocated for the caller. NULL is accepted. Since 0.1. */
CK_API void ck_free(void *ptr);

/* ============================================================================================
 * Geometry: value types, poses, intrinsics
 * ============================================================================================ */

/** Largest accepted absolute coordinate, in metres (positions, translations, box centres). */
#define CK_MAX_COORDINATE 1.0e6f

typedef struct ck_vec3 { float x, y, z; } ck_vec3;                 /* 12 bytes, frozen */
/** Unit quaternion, vector part first (the simd_quatf layout): q = w + xi + yj + zk. */
typedef struct ck_quat { float x, y, z, w; } ck_quat;              /* 16 bytes, frozen */
/** 4x4 matrix, COLUMN-MAJOR: element (row r, column c) is m[c * 4 + r]. */
typedef struct ck_mat4 { float m[16]; } ck_mat4;                   /* 64 bytes, frozen */
/** Pinhole intrinsics of a width x height image, in pixels. */
typedef struct ck_intrinsics {
    float fx, fy, cx, cy;
    uint32_t width, height;
} ck_intrinsics;                                                   /* 24 bytes, frozen */
/** A ray: origin and direction (world frame). The direction need not be unit length. */
typedef struct ck_ray { ck_vec3 origin; ck_vec3 direction; } ck_ray; /* 24 bytes, frozen */

/** Largest accepted image width or height, in pixels. */
#define CK_MAX_IMAGE_DIMENSION 65536u

/** Rigid pose from a rotation quaternion (normalised here; must not be zero) and a translation.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_pose_from_quat(ck_mat4 *pose_out, ck_quat rotation, ck_vec3 translation);

/** Splits a rigid pose into a unit quaternion (w >= 0) and its translation.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, non-finite or non-rigid pose). Since 0.1. */
CK_API ck_status ck_pose_to_quat(ck_quat *rotation_out, ck_vec3 *translation_out, const ck_mat4 *pose);

/** Inverse of a rigid pose (R^T, -R^T t): camera-to-world <-> world-to-camera.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, non-rigid). In-place (out == pose) is allowed. Since 0.1. */
CK_API ck_status ck_pose_inverse(ck_mat4 *out, const ck_mat4 *pose);

/** Product a * b of two finite matrices (in-place allowed). @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_mat4_multiply(ck_mat4 *out, const ck_mat4 *a, const ck_mat4 *b);

/** Transpose of a finite matrix: converts column-major <-> row-major storage (in-place allowed).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_mat4_transpose(ck_mat4 *out, const ck_mat4 *m);

/** Camera-to-world pose with OpenGL/ARKit camera axes -> OpenCV/COLMAP camera axes (x right,
 *  y down, z forward): pose * diag(1, -1, -1, 1). In-place allowed.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, non-rigid). Since 0.1. */
CK_API ck_status ck_pose_opengl_to_opencv(ck_mat4 *out, const ck_mat4 *pose);

/** The inverse conversion (the same flip): OpenCV/COLMAP camera axes -> OpenGL/ARKit. Since 0.1. */
CK_API ck_status ck_pose_opencv_to_opengl(ck_mat4 *out, const ck_mat4 *pose);

/** Yaw, pitch and roll of a camera pose, with R = R_y(yaw) * R_x(pitch) * R_z(roll) (ARKit's
 *  eulerAngles order). yaw: heading of the view direction about +y, 0 when looking down -z,
 *  positive turning left (counter-clockwise seen from above), in (-pi, pi]. pitch: elevation of
 *  the view direction, positive looking up, in [-pi/2, pi/2]. roll: rotation about the view
 *  direction, in (-pi, pi]. At |pitch| = pi/2 roll is reported as 0 and yaw carries the rest.
 *  Any output pointer must be non-NULL. @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_pose_yaw_pitch_roll(float *yaw_out, float *pitch_out, float *roll_out,
                                        const ck_mat4 *pose);

/** Intrinsics rescaled to another resolution of the same camera (e.g. RGB 1920x1440 -> depth
 *  256x192): fx, cx scale by width'/width and fy, cy by height'/height (corner-origin pixels).
 *  In-place allowed. @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_intrinsics_scale(ck_intrinsics *out, const ck_intrinsics *in,
                                     uint32_t width, uint32_t height);

/* ============================================================================================
 * Oriented bounding box
 * ============================================================================================ */

/** Smallest accepted box edge, metres (1 cm). Shrinking below it is an error; the box is unchanged. */
#define CK_BOX_MIN_SIZE 0.01f
/** Largest accepted box edge, metres. */
#define CK_BOX_MAX_SIZE 1000.0f

/** Corner order (matches the boundingbox.json of the reference object-capture app). Local signs
 *  (x, y, z) times size/2: (-,+,-) (+,+,-) (+,-,-) (-,-,-) (-,+,+) (+,+,+) (+,-,+) (-,-,+). */
typedef enum ck_corner {
    CK_CORNER_TOP_LEFT_FRONT = 0,
    CK_CORNER_TOP_RIGHT_FRONT = 1,
    CK_CORNER_BOT_RIGHT_FRONT = 2,
    CK_CORNER_BOT_LEFT_FRONT = 3,
    CK_CORNER_TOP_LEFT_BACK = 4,
    CK_CORNER_TOP_RIGHT_BACK = 5,
    CK_CORNER_BOT_RIGHT_BACK = 6,
    CK_CORNER_BOT_LEFT_BACK = 7
} ck_corner;

/** Face order. Outward normals in the box frame: front -z, left -x, right +x, bottom -y, top +y,
 *  back +z. CK_FACE_NONE (-1) means "no face" (a miss). Functions take faces as int32_t. */
typedef enum ck_face {
    CK_FACE_NONE = -1,
    CK_FACE_FRONT = 0,
    CK_FACE_LEFT = 1,
    CK_FACE_RIGHT = 2,
    CK_FACE_BOTTOM = 3,
    CK_FACE_TOP = 4,
    CK_FACE_BACK = 5
} ck_face;

/** An oriented box standing upright (rotated about +y only). Frozen layout, 36 bytes.
 *  Invariant kept by every function that edits a box: CK_BOX_MIN_SIZE <= size <= CK_BOX_MAX_SIZE,
 *  yaw in (-pi, pi], and when has_floor != 0 the bottom face lies on the floor:
 *  center.y == floor + size.y / 2. A box written by hand is validated (finite, sizes in range,
 *  has_floor 0 or 1) and re-seated on its floor by the next edit. */
typedef struct ck_box {
    ck_vec3 center;
    ck_vec3 size;       /**< full edge lengths along the box's local x, y, z */
    float yaw;          /**< rotation about +y, radians */
    float floor;        /**< floor height (world y); meaningful only when has_floor != 0 */
    int32_t has_floor;  /**< 0 or 1 */
} ck_box;

/** A box from its centre, size and yaw, with no floor.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (sizes outside [CK_BOX_MIN_SIZE, CK_BOX_MAX_SIZE]). Since 0.1. */
CK_API ck_status ck_box_init(ck_box *box_out, ck_vec3 center, ck_vec3 size, float yaw);

/** The 8 world-space corners in ck_corner order into corners_out[0..7]. Since 0.1. */
CK_API ck_status ck_box_corners(ck_vec3 *corners_out, const ck_box *box);

/** A face's centre, outward unit normal, and orientation: the rotation whose +z axis is the normal
 *  (side faces keep +y up; the top face's +y points to the box's front, the bottom face's to its
 *  back). @return CK_OK or CK_E_INVALID_ARGUMENT (face not in 0..5). Since 0.1. */
CK_API ck_status ck_box_face(ck_vec3 *center_out, ck_vec3 *normal_out, ck_quat *orientation_out,
                             const ck_box *box, int32_t face);

/** *inside_out = 1 if the point is inside the closed box (faces included), else 0. Since 0.1. */
CK_API ck_status ck_box_contains(int32_t *inside_out, const ck_box *box, ck_vec3 point);

/** Moves the centre to `center`. With a floor, center.y is ignored (the box stays on the floor). Since 0.1. */
CK_API ck_status ck_box_set_center(ck_box *box, ck_vec3 center);

/** Moves the box by a world-space offset. With a floor, delta.y is ignored. Since 0.1. */
CK_API ck_status ck_box_translate(ck_box *box, ck_vec3 delta);

/** Moves the box relative to the camera, as a phone UI does: `right` along the camera's horizontal
 *  right, `forward` along its horizontal heading (the view direction's yaw; when looking steeply
 *  down or up, the direction of the top of the image), `up` along world +y (ignored with a floor).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (bad pose or offsets). Since 0.1. */
CK_API ck_status ck_box_translate_camera(ck_box *box, const ck_mat4 *camera_pose,
                                         float right, float up, float forward);

/** Sets the yaw (any finite angle; stored wrapped to (-pi, pi]). Since 0.1. */
CK_API ck_status ck_box_set_yaw(ck_box *box, float yaw);

/** Rotates about the box's vertical axis through its centre by `delta` radians. Since 0.1. */
CK_API ck_status ck_box_rotate(ck_box *box, float delta);

/** Same as ck_box_rotate, in degrees. Since 0.1. */
CK_API ck_status ck_box_rotate_degrees(ck_box *box, float delta_degrees);

/** Sets the size about the centre (with a floor: the bottom stays on the floor, height grows up).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (a size outside the limits; box unchanged). Since 0.1. */
CK_API ck_status ck_box_set_size(ck_box *box, ck_vec3 size);

/** Scales the size by per-axis factors (> 0) about the centre (with a floor: about the bottom).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (factor <= 0 or non-finite, result outside the limits). Since 0.1. */
CK_API ck_status ck_box_scale(ck_box *box, ck_vec3 factors);

/** Moves one face outward by `distance` metres (negative moves it inward) while the opposite face
 *  stays put. @return CK_OK; CK_E_INVALID_ARGUMENT (bad face, or the size would leave the limits;
 *  box unchanged); CK_E_STATE for the bottom face while a floor is set (it is held on the floor). Since 0.1. */
CK_API ck_status ck_box_extend_face(ck_box *box, int32_t face, float distance);

/** Sets the floor height and stands the box on it (its x, z, size and yaw are kept). Since 0.1. */
CK_API ck_status ck_box_set_floor(ck_box *box, float floor_y);

/** Removes the floor; the box stays where it is. Since 0.1. */
CK_API ck_status ck_box_clear_floor(ck_box *box);

/** Places the box on its floor with its centre above (x, z).
 *  @return CK_OK; CK_E_STATE if no floor is set; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_box_place_on_floor(ck_box *box, float x, float z);

/** Options for ck_box_fit_points. Start from CK_FIT_OPTIONS_INIT or ck_fit_options_init(). */
typedef struct ck_fit_options {
    uint32_t struct_size;  /**< sizeof(ck_fit_options) of the caller's header */
    int32_t use_floor;     /**< 1: the box stands on `floor` and points below floor + floor_margin are ignored */
    float floor;           /**< floor height when use_floor = 1 */
    float floor_margin;    /**< metres above the floor still counted as floor (default 0.01) */
    float padding;         /**< metres added on every side, top included, but never below the floor (default 0) */
} ck_fit_options;
#define CK_FIT_OPTIONS_INIT { (uint32_t)sizeof(ck_fit_options), 0, 0.0f, 0.01f, 0.0f }

/** Fills *options_out with the defaults (same as CK_FIT_OPTIONS_INIT). Since 0.1. */
CK_API ck_status ck_fit_options_init(ck_fit_options *options_out);

/** Fits an upright box to points (e.g. depth points of an object): the yaw minimises the
 *  footprint area (minimum-area rectangle of the points' x-z convex hull), the height spans the
 *  points, and with use_floor the bottom is on the floor. Sizes below CK_BOX_MIN_SIZE are raised to
 *  it. options may be NULL (defaults). Points must be finite.
 *  @return CK_OK; CK_E_NOT_FOUND when no point is left (count 0 or all on/below the floor);
 *  CK_E_INVALID_ARGUMENT; CK_E_UNSUPPORTED for an options struct_size larger than this library
 *  knows whose extra fields are not zero. Since 0.1. */
CK_API ck_status ck_box_fit_points(ck_box *box_out, const ck_vec3 *points, size_t count,
                                   const ck_fit_options *options);

/* ============================================================================================
 * Raycast
 * ============================================================================================ */

/** A ray hit. distance is in metres along the ray from its origin (the direction's length does
 *  not matter). face is a ck_face for box hits and CK_FACE_NONE for planes. inside = 1 when the
 *  ray started inside the box (closed: on a face counts as inside): then face is the face it exits
 *  through and distance the distance to that exit. */
typedef struct ck_hit {
    ck_vec3 point;
    float distance;
    int32_t face;
    int32_t inside;
} ck_hit;                                                         /* 24 bytes, frozen */

/** Largest number of rays one batched call accepts (2^31 - 1). */
#define CK_MAX_BATCH 2147483647u

/** The world-space ray through pixel (u, v): origin at the camera, unit direction. u, v may lie
 *  outside the image. @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_ray_from_pixel(ck_ray *ray_out, const ck_mat4 *camera_pose,
                                   const ck_intrinsics *intrinsics, float u, float v);

/** Ray vs the plane through `point` with normal `normal` (any non-zero length), both sides.
 *  @return CK_OK with *hit_out; CK_MISS when the plane is behind the origin or the ray is parallel
 *  to it (a ray lying in the plane also misses), hit_out->face = CK_FACE_NONE and distance +inf;
 *  CK_E_INVALID_ARGUMENT (NULL, non-finite, zero direction or normal). Since 0.1. */
CK_API ck_status ck_ray_plane(ck_hit *hit_out, const ck_ray *ray, ck_vec3 point, ck_vec3 normal);

/** Ray vs the horizontal plane y = floor_y; same outcomes as ck_ray_plane. Since 0.1. */
CK_API ck_status ck_ray_floor(ck_hit *hit_out, const ck_ray *ray, float floor_y);

/** Ray vs box. The box is closed: a ray touching an edge or a corner hits it. The reported face is
 *  the one entered first (ties at an edge or a corner go to the lower face index); a ray starting
 *  inside reports the exit face with inside = 1.
 *  @return CK_OK with *hit_out; CK_MISS (box missed or entirely behind the origin; face
 *  CK_FACE_NONE, distance +inf); CK_E_INVALID_ARGUMENT (NULL, non-finite, zero direction). Since 0.1. */
CK_API ck_status ck_ray_box(ck_hit *hit_out, const ck_ray *ray, const ck_box *box);

/** Batched box raycast: for each pixel i at (pixels_uv[2i], pixels_uv[2i+1]) the face the ray hits
 *  first into faces_out[i] (CK_FACE_NONE on a miss) and the distance into distances_out[i] (+inf on
 *  a miss); the same answers as ck_ray_from_pixel + ck_ray_box, except that a ray within float
 *  rounding of an edge may report either neighbouring face. A non-finite pixel is a miss.
 *  count may be 0 (then the pointers may be NULL). count <= CK_MAX_BATCH.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_raycast_box_pixels(int32_t *faces_out, float *distances_out,
                                       const float *pixels_uv, size_t count,
                                       const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics,
                                       const ck_box *box);

/** Batched box raycast through the centre of every pixel of the intrinsics' width x height image,
 *  row-major (index = row * width + column); use ck_intrinsics_scale() for a coarser grid.
 *  *count_out = width * height on CK_OK and on CK_E_BUFFER_TOO_SMALL (capacity < width * height;
 *  nothing written). Same per-ray answers as ck_raycast_box_pixels. Since 0.1. */
CK_API ck_status ck_raycast_box_grid(int32_t *faces_out, float *distances_out, size_t capacity,
                                     size_t *count_out, const ck_mat4 *camera_pose,
                                     const ck_intrinsics *intrinsics, const ck_box *box);

/** Tap to place: casts the ray through pixel (u, v) onto the box's floor and stands the box there
 *  (centre above the hit point; size and yaw kept). *hit_out gets the floor hit.
 *  @return CK_OK; CK_MISS when the ray does not reach the floor (box unchanged); CK_E_STATE when the
 *  box has no floor; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_box_place_at_pixel(ck_box *box, ck_hit *hit_out, const ck_mat4 *camera_pose,
                                       const ck_intrinsics *intrinsics, float u, float v);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_H */
