/* Geometry: value types, poses, intrinsics. Part of the CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_GEOMETRY_H
#define CAPTUREKIT_CK_GEOMETRY_H

#include "ck_base.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/** Camera-to-world pose of a camera at `eye` looking at `target` (world metres), with the
 *  OpenGL/ARKit camera axes of the conventions: the camera's -z points from eye to target, +x is
 *  horizontal (perpendicular to `up`) to the right of the view, +y as close to `up` as the view
 *  allows; the translation is `eye`. `up` need not be unit length ((0, 1, 0) for gravity-up worlds).
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, a non-finite value, a point beyond the coordinate
 *  limit, a zero `up`, eye and target closer than 1 um, or a view direction parallel to `up`).
 *  Since 0.2. */
CK_API ck_status ck_pose_look_at(ck_mat4 *pose_out, ck_vec3 eye, ck_vec3 target, ck_vec3 up);

/** The inverse conversion (the same flip): OpenCV/COLMAP camera axes -> OpenGL/ARKit. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, pose not rigid). Since 0.1. */
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

/** Storage order of a 3x3 camera matrix K = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]. Functions take int32_t. */
typedef enum ck_matrix_layout {
    CK_MATRIX_LAYOUT_ROW_MAJOR = 0,    /**< fx, 0, cx, 0, fy, cy, 0, 0, 1 (C arrays, NumPy, OpenCV) */
    CK_MATRIX_LAYOUT_COLUMN_MAJOR = 1  /**< fx, 0, 0, 0, fy, 0, cx, cy, 1 (ARKit simd_float3x3, MultiScan camera info) */
} ck_matrix_layout;

/** Intrinsics from a 3x3 camera matrix in `layout` and the image size it belongs to. The matrix
 *  must be a pinhole matrix without skew: every other entry exactly 0 and the corner 1 (a matrix
 *  in the other layout is refused, the message says which entry is off), focal lengths > 0.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, layout, a matrix or size ck_intrinsics cannot
 *  hold; *intrinsics_out untouched). Since 0.2. */
CK_API ck_status ck_intrinsics_from_matrix(ck_intrinsics *intrinsics_out, const float matrix[9], int32_t layout,
                                           uint32_t width, uint32_t height);

/** The 3x3 camera matrix of `intrinsics` in `layout` (9 floats).
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, layout, invalid intrinsics). Since 0.2. */
CK_API ck_status ck_intrinsics_to_matrix(float matrix_out[9], const ck_intrinsics *intrinsics, int32_t layout);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_GEOMETRY_H */
