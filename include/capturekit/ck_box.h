/* The oriented bounding box. Part of the CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_BOX_H
#define CAPTUREKIT_CK_BOX_H

#include "ck_geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    float yaw;          /**< rotation about +y, radians, in (-pi, pi] up to float rounding at +-pi */
    float floor;        /**< floor height (world y); meaningful only when has_floor != 0 */
    int32_t has_floor;  /**< 0 or 1 */
} ck_box;

/** A box from its centre, size and yaw, with no floor.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (sizes outside [CK_BOX_MIN_SIZE, CK_BOX_MAX_SIZE]). Since 0.1. */
CK_API ck_status ck_box_init(ck_box *box_out, ck_vec3 center, ck_vec3 size, float yaw);

/** The 8 world-space corners in ck_corner order into corners_out[0..7]. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box). Since 0.1. */
CK_API ck_status ck_box_corners(ck_vec3 *corners_out, const ck_box *box);

/** A face's centre, outward unit normal, and orientation: the rotation whose +z axis is the normal
 *  (side faces keep +y up; the top face's +y points to the box's front, the bottom face's to its
 *  back). @return CK_OK or CK_E_INVALID_ARGUMENT (face not in 0..5). Since 0.1. */
CK_API ck_status ck_box_face(ck_vec3 *center_out, ck_vec3 *normal_out, ck_quat *orientation_out,
                             const ck_box *box, int32_t face);

/** *inside_out = 1 if the point is inside the closed box (faces included), else 0. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite point). Since 0.1. */
CK_API ck_status ck_box_contains(int32_t *inside_out, const ck_box *box, ck_vec3 point);

/** Moves the centre to `center`. With a floor, center.y is ignored (the box stays on the floor). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite or out-of-range centre; the box is unchanged). Since 0.1. */
CK_API ck_status ck_box_set_center(ck_box *box, ck_vec3 center);

/** Moves the box by a world-space offset. With a floor, delta.y is ignored. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite or out-of-range result; the box is unchanged). Since 0.1. */
CK_API ck_status ck_box_translate(ck_box *box, ck_vec3 delta);

/** Moves the box relative to the camera, as a phone UI does: `forward` along the camera's heading
 *  (the yaw of its view direction, whatever its roll; within ~6 degrees of looking straight down,
 *  the direction of the top of the image, and looking straight up, of its bottom), `right` along
 *  the heading turned 90 degrees clockwise seen from above, `up` along world +y (ignored with a floor).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (bad pose or offsets). Since 0.1. */
CK_API ck_status ck_box_translate_camera(ck_box *box, const ck_mat4 *camera_pose,
                                         float right, float up, float forward);

/** Sets the yaw (any finite angle; stored wrapped to (-pi, pi]). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite yaw; the box is unchanged). Since 0.1. */
CK_API ck_status ck_box_set_yaw(ck_box *box, float yaw);

/** "Face the camera" (a tap in a capture UI): sets the yaw so that the front face (local -z)
 *  faces the camera horizontally, its normal pointing from the centre toward the camera's position
 *  (with the camera within 1 mm of the vertical through the centre: against the camera's heading,
 *  as ck_box_translate_camera defines it). Centre, size and floor are kept.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, invalid box, bad pose; the box is unchanged). Since 0.2. */
CK_API ck_status ck_box_face_camera(ck_box *box, const ck_mat4 *camera_pose);

/** Rotates about the box's vertical axis through its centre by `delta` radians. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite delta; the box is unchanged). Since 0.1. */
CK_API ck_status ck_box_rotate(ck_box *box, float delta);

/** Same as ck_box_rotate, in degrees. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite delta; the box is unchanged). Since 0.1. */
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

/** Sets the floor height and stands the box on it (its x, z, size and yaw are kept). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box, non-finite or out-of-range floor_y; the box is unchanged). Since 0.1. */
CK_API ck_status ck_box_set_floor(ck_box *box, float floor_y);

/** Removes the floor; the box stays where it is. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, invalid box). Since 0.1. */
CK_API ck_status ck_box_clear_floor(ck_box *box);

/** Places the box on its floor with its centre above (x, z).
 *  @return CK_OK; CK_E_STATE if no floor is set; CK_E_INVALID_ARGUMENT. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
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

/** Fills *options_out with the defaults (same as CK_FIT_OPTIONS_INIT). Writes the first struct_size
 *  bytes only, struct_size included: pass sizeof(ck_fit_options) (the ck_fit_options_init() macro below
 *  does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, struct_size below the first release's 20 bytes);
 *  CK_E_UNSUPPORTED (struct_size above this library's size: a header newer than the library). Since
 *  0.2. */
CK_API ck_status ck_fit_options_init_sized(ck_fit_options *options_out, size_t struct_size);
/** ck_fit_options_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (20 bytes on
 *  64-bit, struct_size 20), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_fit_options_init() to ck_fit_options_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL).
 *  Since 0.1. */
CK_API ck_status ck_fit_options_init(ck_fit_options *options_out);
#define ck_fit_options_init(options_out) ck_fit_options_init_sized((options_out), sizeof(ck_fit_options))

/** Fits an upright box to points (e.g. depth points of an object): the yaw minimises the
 *  footprint area (minimum-area rectangle of the points' x-z convex hull), the height spans the
 *  points, and with use_floor the bottom is on the floor. Sizes below CK_BOX_MIN_SIZE are raised to
 *  it. options may be NULL (defaults). Points must be finite.
 *  @return CK_OK; CK_E_NOT_FOUND when no point is left (count 0 or all on/below the floor);
 *  CK_E_INVALID_ARGUMENT; CK_E_UNSUPPORTED for an options struct_size larger than this library
 *  knows whose extra fields are not zero. Since 0.1. */
CK_API ck_status ck_box_fit_points(ck_box *box_out, const ck_vec3 *points, size_t count,
                                   const ck_fit_options *options);

/** The floor height under points of a gravity-aligned world (y up, as ARKit's), e.g. a depth
 *  map's world points (ck_depth_to_points): the lowest horizontal layer 2 x tolerance thick holding
 *  at least 30 % of the points of the densest such layer; its height is the median of its points,
 *  refined once over +-tolerance. Robust to the object standing on the floor (its top and sides lie
 *  above, and a table top may hold more points than the visible floor) and to a few stray points
 *  below. *inliers_out (may be NULL) gets the points within +-tolerance of the result. For
 *  ck_box_set_floor / ck_fit_options.floor. Points must be finite.
 *  @return CK_OK; CK_E_NOT_FOUND (fewer than 3 points support any layer); CK_E_INVALID_ARGUMENT
 *  (NULL, a non-finite point, tolerance not in (0, 1] m; outputs untouched). Since 0.2. */
CK_API ck_status ck_floor_from_points(float *floor_y_out, size_t *inliers_out, const ck_vec3 *points, size_t count,
                                      float tolerance);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_BOX_H */
