/* A synthetic test scene for demos, tests and benchmarks. Part of the CaptureKit C API; include
 * <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_SCENE_H
#define CAPTUREKIT_CK_SCENE_H

#include "ck_box.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Synthetic scene
 *
 * A deterministic indoor scene rendered by ray casting, so a rig, a test or a benchmark can run
 * the whole pipeline without a device: a room (floor at y = 0, walls 2.6 m and 3.1 m from the
 * origin, a 2.7 m ceiling), a table, a shelf, a stool, and the capture target — a 0.5 x 0.4 x 0.6 m
 * box standing on the floor at the origin. Depth is LiDAR-like: z-depth in metres with
 * depth-dependent noise, random dropouts, flying-pixel suppression at edges and a 5 m range
 * (0 = invalid), with a matching confidence map (0 low, 1 medium, 2 high). Colour images have
 * procedural textures (a checkered wooden floor, a patterned target). Every output is a pure
 * function of the seed, the frame number, the pose and the intrinsics.
 * ============================================================================================ */

typedef struct ck_scene ck_scene;

/** Creates the scene. @return CK_OK; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_scene_create(ck_scene **scene_out, uint64_t seed);

/** Frees a scene; NULL accepted. Since 0.1. */
CK_API void ck_scene_free(ck_scene *scene);

/** The capture target's box (with its floor, y = 0). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_scene_target(ck_box *box_out, const ck_scene *scene);

/** Renders depth (float metres, 0 = invalid) into depth_dst and confidence into confidence_dst
 *  (either may be NULL, not both), intrinsics.width x intrinsics.height, row-major; both hold
 *  dst_capacity samples. `frame` selects the noise. *written_out (may be NULL) = width x height
 *  on CK_OK and CK_E_BUFFER_TOO_SMALL (nothing written).
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_scene_render_depth(float *depth_dst, uint8_t *confidence_dst, size_t dst_capacity,
                                       size_t *written_out, const ck_scene *scene, const ck_mat4 *camera_pose,
                                       const ck_intrinsics *intrinsics, uint64_t frame);

/** Renders an 8-bit RGB image (3 bytes a pixel, row-major, tightly packed) into dst of dst_capacity
 *  bytes; *written_out (may be NULL) = width x height x 3 on CK_OK and CK_E_BUFFER_TOO_SMALL.
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_scene_render_rgb(uint8_t *dst, size_t dst_capacity, size_t *written_out, const ck_scene *scene,
                                     const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_SCENE_H */
