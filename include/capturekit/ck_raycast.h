/* Raycast: pixels to rays, rays against planes, the floor and the box. Part of the CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_RAYCAST_H
#define CAPTUREKIT_CK_RAYCAST_H

#include "ck_box.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 *  outside the image (any finite values).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, non-finite u/v, or a direction that overflows). Since 0.1. */
CK_API ck_status ck_ray_from_pixel(ck_ray *ray_out, const ck_mat4 *camera_pose,
                                   const ck_intrinsics *intrinsics, float u, float v);

/** Ray vs the plane through `point` with normal `normal` (any non-zero length), both sides.
 *  @return CK_OK with *hit_out; CK_MISS when the plane is behind the origin or the ray is parallel
 *  to it (a ray lying in the plane also misses), hit_out->face = CK_FACE_NONE and distance +inf;
 *  CK_E_INVALID_ARGUMENT (NULL, non-finite, zero direction or normal). Since 0.1. */
CK_API ck_status ck_ray_plane(ck_hit *hit_out, const ck_ray *ray, ck_vec3 point, ck_vec3 normal);

/** Ray vs the horizontal plane y = floor_y; same outcomes as ck_ray_plane. @return CK_OK (*hit_out set); CK_MISS (parallel or behind: *hit_out untouched); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_ray_floor(ck_hit *hit_out, const ck_ray *ray, float floor_y);

/** Ray vs box. The box is closed: a ray touching an edge or a corner hits it. The reported face is
 *  the one entered first (ties at an edge or a corner go to the lower face index; a face the ray
 *  runs parallel to, e.g. one whose plane the ray lies in, is never the one entered); a ray
 *  starting inside reports the exit face with inside = 1.
 *  @return CK_OK with *hit_out; CK_MISS (box missed or entirely behind the origin; face
 *  CK_FACE_NONE, distance +inf); CK_E_INVALID_ARGUMENT (NULL, non-finite, zero direction). Since 0.1. */
CK_API ck_status ck_ray_box(ck_hit *hit_out, const ck_ray *ray, const ck_box *box);

/** Batched box raycast: for each pixel i at (pixels_uv[2i], pixels_uv[2i+1]) the face the ray hits
 *  first into faces_out[i] (CK_FACE_NONE on a miss) and the distance into distances_out[i] (+inf on
 *  a miss); the same answers as ck_ray_from_pixel + ck_ray_box, except that a ray within float
 *  rounding of an edge may report either neighbouring face. A non-finite pixel is a miss.
 *  count may be 0 (then the three buffers may be NULL; pose, intrinsics and box are still
 *  validated). count <= CK_MAX_BATCH. Where the CPU has AVX2 (checked once per process) an AVX2
 *  kernel runs, with answers bit-identical to the baseline kernel's; setting the environment
 *  variable CAPTUREKIT_NO_AVX2=1 before the first batched call forces the baseline kernel.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_ray_box_pixels(int32_t *faces_out, float *distances_out,
                                       const float *pixels_uv, size_t count,
                                       const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics,
                                       const ck_box *box);

/** Batched box raycast through the centre of every pixel of the intrinsics' width x height image,
 *  row-major (index = row * width + column); use ck_intrinsics_scale() for a coarser grid.
 *  Both buffers hold dst_capacity elements; *written_out (may be NULL) = width * height on CK_OK and
 *  on CK_E_BUFFER_TOO_SMALL (dst_capacity < width * height; nothing written). Same per-ray answers
 *  (and the same AVX2 dispatch) as ck_ray_box_pixels. @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_INVALID_ARGUMENT (NULL, pose not rigid, bad intrinsics or box). Since 0.1. */
CK_API ck_status ck_ray_box_grid(int32_t *faces_dst, float *distances_dst, size_t dst_capacity,
                                     size_t *written_out, const ck_mat4 *camera_pose,
                                     const ck_intrinsics *intrinsics, const ck_box *box);

/** Tap to place: casts the ray through pixel (u, v) onto the box's floor and stands the box there
 *  (centre above the hit point; size and yaw kept). *hit_out (may be NULL) gets the floor hit.
 *  @return CK_OK; CK_MISS when the ray does not reach the floor, or reaches it beyond
 *  CK_MAX_COORDINATE (a tap just below the horizon) — box unchanged; CK_E_STATE when the box has no
 *  floor; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_box_place_at_pixel(ck_hit *hit_out, ck_box *box, const ck_mat4 *camera_pose,
                                       const ck_intrinsics *intrinsics, float u, float v);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_RAYCAST_H */
