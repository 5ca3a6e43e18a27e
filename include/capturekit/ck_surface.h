/* Surface coverage from depth: a voxel map of the box fused from depth, per-surface-element view
 * statistics, figures per side, events, a side-named hint and PLY export. Part of the CaptureKit
 * C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_SURFACE_H
#define CAPTUREKIT_CK_SURFACE_H

#include "ck_guidance.h"
#include "ck_dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Surface coverage (since 0.2)
 *
 * A ck_surface is a voxel map of the space inside the box, in the box's frame (x right, y up,
 * z back; the box's centre at the origin), fused from the depth, pose and confidence of every
 * frame the caller passes (ck_surface_fuse: streamed frames, not only captures). A voxel is
 * unknown, free or occupied; each occupied voxel is a surface element. For each captured view
 * (ck_surface_add_view) every element it sees (in the image, facing the camera, not hidden
 * behind other surface: decided on the depth frame fused at that pose when there is one)
 * records: how many views saw it, the spread of their directions, the best incidence angle and
 * the best resolution (pixels per cm), and, given the image, its colour. A view keeps its depth
 * frame, so surface that depth reaches only later still counts the earlier views that saw it.
 * Unseen surface is estimated once per view (when the figures are next read) by rays from rings
 * of views around the box: rays that
 * reach seen surface from behind through space no view has looked through, or cross such space
 * without reaching surface, stand for surface not yet measured (at least the frontier: unknown
 * voxels next to both a surface voxel and a free voxel, beside or in front of the surface voxel,
 * not behind it, and not next to surface out of reach (below): the unknown inside of a thin wall
 * or of a pot seen through its spout is not surface still to capture). Space counts as looked
 * through in blocks of 2 x 2 x 2 voxels: a streamed frame carves free space along a sparse grid
 * of its pixels, and the holes of that net are not a part no view has reached.
 *
 * The figures are shares of surface area, not of voxels: an element with normal n holds
 * 1 / (|n_d| x run) voxel faces (voxel_size^2), where d is the dominant axis of n and run the
 * elements in its column along d (up to 3 on either side, contiguous, their normals on the same
 * side as n); the unseen surface counts the mean element's area per element. Counting voxels
 * instead would overstate surface that lies aslant the grid (a 45-degree slope crosses two voxels
 * per column) and surface seen often (the noise of many frames leaves it thicker). On meshes of
 * real objects rendered to sensor-like depth the figures stay within a few points of the true
 * well-covered share (BENCHMARKS.md, which also says where they do not). A voxel holds one
 * element with one normal: the two sides of a wall thinner than about two voxels (a sheet, a
 * shell with no thickness, a thin tail) share elements, each with the normal of one side, so the
 * map cannot tell the sides' coverage apart; make the voxel finer (voxel_size) for such objects.
 * Surface that turns within a voxel or two (creases, rims, ears, the limbs of a figurine) shares
 * elements too. One element then stands for several facings, with their blended normal, and views
 * of one facing count for all of it. So each element also keeps up to two facings: the normals the
 * captured views' depth frames measure at it (a plane fitted one voxel around it), grouped within
 * 45 degrees. A well-covered element counts the share of its facings (each measured by at least 2
 * views, or the only one) that the views which counted it cover well under the same thresholds,
 * taken to the facing's normal; a facing that is not, and that no ring view could cover (below),
 * leaves its share of the area out. The views are tracked for the first 64 captured views; an
 * element a later view counted counts whole. On the figurine meshes of BENCHMARKS.md (one noise
 * seed) this took the worst error over a capture from 4.2-11.8 to 2.7-8.9 points; a voxel 1.5 x
 * finer lowers it by a third to a half, but costs ck_surface_add_view about 2.5 x more. ck_surface_element's counts and
 * flags stay those of the whole element.
 *
 * The figures also leave out surface out of reach: observed, not well covered, and not coverable
 * from the rings of views the next-best view offers (16 azimuths x 5, 30 and 60 degrees at the
 * last captured view's distance, at least 2.3 x the box's half diagonal; with -30 and -60 degrees
 * too when side_mask counts the bottom, as for the unseen estimate): fewer than min_views
 * of them face it within max_incidence_deg with min_spread_deg between them and see it past the
 * surface observed so far. A belly or the inside of a leg is not what is left to capture, and
 * counting it kept the figure up to 5.5 points under the truth at the end of a capture. Judged
 * by ck_surface_add_view (its event check needs it) for every element not well covered: at the
 * first captured view after the element has a normal, then again in turns, a quarter of them a
 * view (a change shows at most 3 views late): surface seen since may hide it, surface removed may
 * free it (ck_surface_element.flags bit 3); the counts (observed, well_covered) still count them.
 *
 * Without depth (RGB-only rigs) the box's faces stand in for the surface: each face is split
 * into face_cells x face_cells cells, and views count for the cells they see, through the same
 * calls and figures (the frontier is then the cells no view saw). The first fused depth frame
 * switches the map to the measured surface (the face cells and their views are dropped).
 *
 * This is its own header, not a section of ck_guidance.h: it is a separate handle with its own
 * options, figures and export, and it needs the session type (ck_session_surface).
 *
 * Voxels: voxel_size (default the box's longest edge / 128), at most 3,000,000 voxels (a finer
 * voxel_size is coarsened to fit) and 139,264 surface elements (more are counted in
 * elements_dropped): the default map holds at most 128^3 voxels and stays under 32 MiB with
 * 256 x 192 depth frames (ck_surface_figures.memory_bytes, which counts the kept depth frames:
 * the latest 16 views', each sampled to at most 256 columns, and the next-best view's buffers;
 * 31.1 MiB filled to the element limit; a larger frame adds its own copy, 1.5 MB at 640 x 480). Fusing costs one pass over the depth pixels; a view with
 * its depth frame one pass over the elements; the first read of the figures after a view costs
 * more (one ray per kept depth pixel of the views since the last read through the box, and the
 * unseen estimate's rays; a view also judges the reach of the elements not judged yet, below;
 * benchmarks: BENCHMARKS.md). A handle is used by one thread at a time.
 * ============================================================================================ */

/** An opaque surface coverage map bound to a box. */
typedef struct ck_surface ck_surface;

/** Voxel states of ck_surface_voxels(). */
typedef enum ck_surface_voxel {
    CK_SURFACE_VOXEL_UNKNOWN = 0,   /**< no frame has seen it */
    CK_SURFACE_VOXEL_FREE = 1,      /**< seen empty (in front of a depth hit) */
    CK_SURFACE_VOXEL_OCCUPIED = 2   /**< a depth hit: a surface element */
} ck_surface_voxel;

/** Colours of ck_surface_export_ply(). */
typedef enum ck_surface_ply {
    CK_SURFACE_PLY_COVERAGE = 0,    /**< every observed element, coloured by coverage: red = no view saw it, then
                                         yellow (1, 1, 0) to cyan (0, 1, 1) by the share of the four "well covered"
                                         thresholds it meets: (1 - p, 1, p) x 255 */
    CK_SURFACE_PLY_IMAGE = 1        /**< only the elements a captured image coloured, in that colour (the mean of
                                         their samples): the initial point cloud of a splat dataset */
} ck_surface_ply;

/** Surface options. Start from CK_SURFACE_OPTIONS_INIT or ck_surface_options_init(). An element is
 *  "well covered" when it meets all four thresholds min_views, min_spread_deg, max_incidence_deg
 *  and min_px_per_cm. */
typedef struct ck_surface_options {
    uint32_t struct_size;     /**< sizeof(ck_surface_options) of the caller's header */
    float voxel_size;         /**< voxel edge, m: 0 (default) = the box's longest edge / 128, else [0.0005, 10] */
    float max_depth;          /**< depth beyond this is ignored, m, [0, 1000], 0 = no limit; default 5 */
    uint32_t min_confidence;  /**< with a confidence map, pixels below this are ignored, [0, 255]; default 1
                                   (ARKit: 0 low, 1 medium, 2 high) */
    uint32_t min_views;       /**< well covered: captured views that saw it, [1, 65535]; default 3 */
    float min_spread_deg;     /**< ... the spread of their directions, 2 acos(|sum of unit directions| / views),
                                   degrees (two views: the angle between them), [0, 180]; default 15 */
    float max_incidence_deg;  /**< ... the best angle between the surface normal and a view's direction, (0, 90]; default 65 */
    float min_px_per_cm;      /**< ... the best resolution, mean focal length / (z-depth x 100), pixels per cm, [0, 10000]; default 2 */
    float goal_fraction;      /**< a side (and the surface) is complete when this fraction of its estimated surface
                                   (observed + frontier) is well covered, (0, 1]; default 0.9 */
    uint32_t side_mask;       /**< sides counted for completion and the overall figures, bit f = face f (ck_face),
                                   non-zero, bits 0..5; default 0x37 (all but the bottom) */
    uint32_t face_cells;      /**< without depth, each face stands in as face_cells x face_cells cells, [1, 256]; default 16 */
} ck_surface_options;                                              /* 44 bytes */

#define CK_SURFACE_OPTIONS_INIT { (uint32_t)sizeof(ck_surface_options), 0.0f, 5.0f, 1u, 3u, 15.0f, 65.0f, 2.0f, 0.9f, 0x37u, 16u }

/** Fills *options_out with the defaults (same as CK_SURFACE_OPTIONS_INIT). Writes the first struct_size
 *  bytes only, struct_size included: pass sizeof(ck_surface_options) (the ck_surface_options_init()
 *  macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, struct_size below the first release's
 *  44 bytes); CK_E_UNSUPPORTED (struct_size above this library's size: a header newer than the
 *  library). Since 0.2. */
CK_API ck_status ck_surface_options_init_sized(ck_surface_options *options_out, size_t struct_size);
/** ck_surface_options_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (44 bytes on
 *  64-bit, struct_size 44), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_surface_options_init() to ck_surface_options_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL). Since 0.2. */
CK_API ck_status ck_surface_options_init(ck_surface_options *options_out);
#define ck_surface_options_init(options_out) ck_surface_options_init_sized((options_out), sizeof(ck_surface_options))

/** Creates a surface map for `box` (copied). options may be NULL (defaults). On success *out owns
 *  it (release with ck_surface_free()); on failure *out is set to NULL.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (out or box NULL, bad box, option out of range: the message
 *  names the field); CK_E_UNSUPPORTED (newer struct_size with non-zero extra bytes). Since 0.2. */
CK_API ck_status ck_surface_create(ck_surface **out, const ck_box *box, const ck_surface_options *options);

/** Releases a surface map. NULL is accepted. A map borrowed from a session (ck_session_surface) is
 *  not released (the session frees it; the thread's last error message says so). Since 0.2. */
CK_API void ck_surface_free(ck_surface *surface);

/** Fuses one depth frame. depth: z-depth (distance along the optical axis, as ARKit's sceneDepth)
 *  in any depth format; a pixel counts when its depth is finite, > 0 and <= max_depth and (with
 *  a confidence map, CK_FORMAT_U8 of the depth map's size; NULL = none) its confidence is at
 *  least min_confidence. intrinsics must be the depth map's (its size: ck_intrinsics_scale the
 *  image's); camera_pose is camera-to-world, OpenGL camera axes. A flying pixel does not count:
 *  a depth between the two neighbours on a line through its pixel (left-right, up-down or a
 *  diagonal), further than 8 pixel footprints + 2 voxels from both (a sensor's blend of the two
 *  sides of a depth jump, surface in mid-air; a surface's own pixels step less up to 83 degrees
 *  from facing the camera; the image's border pixels are kept). Each counted pixel marks the
 *  voxel it hits occupied and the 3 voxels in front of it free; a sparse grid of about 32 x 24
 *  of the pixels (its phase moving frame by frame) also carves free space from where the ray
 *  enters the box up to that shell. Occupied voxels stay occupied. Pixels that hit outside the
 *  box add no surface. With a floor (ck_box.floor set), the 2 voxels above it are floor, not
 *  surface: the grid starts 2 voxels above the floor (at most half the box's height), so depth on
 *  the floor or table around the object adds no surface (within its noise), and its rays carve
 *  the free space beside the object. Without a floor the grid is centred on the box and a table
 *  inside the box is surface.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, a map, confidence, intrinsics or pose that fails its
 *  checks, intrinsics or confidence of another size than the map, non-finite timestamp; nothing
 *  changes). Since 0.2. */
CK_API ck_status ck_surface_fuse(ck_surface *surface, const ck_depth_map *depth, const ck_depth_map *confidence,
                                 const ck_intrinsics *intrinsics, const ck_mat4 *camera_pose, double timestamp);

/** Adds one captured view (camera_pose camera-to-world, intrinsics of the image). Every surface
 *  element that projects into the image, faces the camera (normal within 87 degrees of the
 *  direction to it) and, with depth, is not hidden behind other surface counts the view once:
 *  views, direction, incidence, resolution. Hidden, with depth: when the last fused depth frame
 *  was taken at this pose (fuse a capture's depth, then add it as a view; camera centres within
 *  a quarter voxel, axes within about half a degree) that frame decides: an element with a
 *  normal is hidden when the valid sample of its own pixel lies nearer than it by more than the
 *  tolerance, (0.87 / cos(incidence) + 0.35) voxels + 0.5 % of its depth, and more than 2 voxels
 *  + 0.5 % of its depth in front of its tangent plane (another surface covers it; a neighbouring
 *  pixel that reaches past that surface's edge does not count); else seen when a valid depth
 *  sample among the 3 x 3 around its pixel lies within the tolerance of it, seen through when at
 *  least two valid samples there all lie further, hidden otherwise; elements with no valid
 *  sample around them, and views
 *  without their depth frame, fall back to a z-buffer of the elements (tolerance 2 voxels + 2 %
 *  of the depth). The view keeps its depth frame (sampled to at most 256 columns; the latest 16
 *  views): elements first marked later are checked against the kept frames at the next view and
 *  count the views that saw them. Elements seen through more often than seen are removed (their
 *  voxels become free; depth that hits them again brings them back): flying pixels, surface
 *  bridged across a depth jump. Where the frame measures it, the element's normal is the mean of
 *  the depth frames' normals (from the depth gradient), this view's (or the kept frame's, for
 *  elements first marked later) included before its facing test (else the direction to its free
 *  neighbours, which on noisy surface seen at a slant is tens of degrees off: a frame would not
 *  count elements it made itself). image (may be NULL;
 *  CK_IMAGE_FORMAT_RGB8, RGBA8 or GRAY8 of the intrinsics' size) gives each seen element a
 *  colour sample (the pixel it projects to). The unseen surface is then estimated anew (see
 *  ck_surface_side.frontier) when the figures are next read (ck_surface_summarize,
 *  ck_surface_side_figures, ck_surface_suggest; ck_surface_next_view only when every side could
 *  be complete without it), on the map as it stands
 *  then (depth fused after the view counts too), or here when an event may fire or every side
 *  of side_mask could be complete:
 *  CK_EVENT_SURFACE_SIDE_COMPLETED (once per side) and CK_EVENT_SURFACE_COMPLETED (once) are
 *  queued when reached. Once a next view has been planned (ck_surface_next_view, or
 *  ck_surface_suggest with depth, which plans one; since the last reset), each view also finds
 *  the surface elements beside the frontier, which the next plan reads unless a frame is fused in
 *  between: the view pays for what planning from it needs (about 1-2.5 ms on a map of 126,000
 *  elements), not the call that plans. *seen_out (may be NULL) = the
 *  elements this view saw.
 *  @return CK_OK (it saw at least one element); CK_MISS (it saw none; the view is still counted);
 *  CK_E_INVALID_ARGUMENT (NULL surface, pose or intrinsics, a bad pose, intrinsics or image, an
 *  image of another size, non-finite timestamp; nothing changes). Since 0.2. */
CK_API ck_status ck_surface_add_view(uint32_t *seen_out, ck_surface *surface, const ck_mat4 *camera_pose,
                                     const ck_intrinsics *intrinsics, const ck_image *image, double timestamp);

/** Re-binds to an edited box (copied). The measured surface stays where it is in the world: the
 *  map is re-expressed in the new box's frame and grid (each new voxel takes the state and
 *  element of the old voxel under its centre; space the old box did not cover is unknown; the
 *  voxel size follows the new box when voxel_size is 0). Without depth (face cells) the counts
 *  are kept: they belong to the faces, which move and turn with the box (as ck_coverage_set_box).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, bad box; nothing changes). Since 0.2. */
CK_API ck_status ck_surface_set_box(ck_surface *surface, const ck_box *box);

/** Forgets every frame, view and queued event (back to the box's face cells); keeps the box and
 *  the options. @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_surface_reset(ck_surface *surface);

/** Figures of one side, or (ck_surface_figures.all) of the sides of side_mask together. */
typedef struct ck_surface_side {
    uint32_t observed;        /**< surface elements observed (with depth: hit by depth; without: cells a view saw) */
    uint32_t well_covered;    /**< of those, well covered */
    uint32_t frontier;        /**< unseen surface estimated, in elements: with depth the larger of the frontier voxels
                                   and the ray estimate of the last view with its depth frame (see ck_surface_add_view
                                   and the section comment); without depth the cells no view saw */
    float well_fraction;      /**< the well-covered share of the observed surface's area (0 when nothing is observed;
                                   the section comment says how an element's area is counted; without depth each cell
                                   counts 1: well_covered / observed) */
    float complete_fraction;  /**< the well-covered share of the estimated surface's area, observed + frontier (without
                                   depth well_covered / (observed + frontier)) */
    int32_t completed;        /**< 1 when observed + frontier > 0 and complete_fraction >= goal_fraction */
} ck_surface_side;                                                 /* 24 bytes, frozen */

/** Overall figures. */
typedef struct ck_surface_figures {
    ck_surface_side all;      /**< the sides of side_mask together */
    int32_t from_depth;       /**< 1 once depth was fused (the measured surface), 0: the box's faces stand in */
    uint32_t frames_fused;
    uint32_t views;           /**< captured views added */
    uint32_t sides_completed; /**< sides of side_mask complete */
    uint32_t elements_dropped;/**< surface elements not stored: the element table was full */
    float voxel_size;         /**< m */
    uint64_t memory_bytes;    /**< bytes the map holds */
} ck_surface_figures;                                              /* 56 bytes, frozen */

/** *out = the overall figures. @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_surface_summarize(ck_surface_figures *out, const ck_surface *surface);

/** *out = the figures of side `face` (a ck_face, 0..5). An element belongs to the side of the
 *  dominant axis of its normal (box frame; normals come from the captured views' depth frames,
 *  else from the free voxels around it); a frontier voxel to the side of the element it borders;
 *  unseen surface the ray estimate finds to the side facing the ray that found it.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, face out of range). Since 0.2. */
CK_API ck_status ck_surface_side_figures(ck_surface_side *out, const ck_surface *surface, int32_t face);

/** Where to go next. */
typedef struct ck_surface_hint {
    int32_t side;             /**< the side to capture next (a ck_face), or -1: complete, or nothing seen yet */
    float move_angle;         /**< angle to walk around the object, rad in (-pi, pi]: positive = to your left while
                                   facing the object (ck_coverage_hint's convention) */
    float camera_azimuth;     /**< the camera's azimuth around the box (ck_coverage_dial convention), rad */
    float target_azimuth;     /**< the side's azimuth (front 0, left pi/2, back pi, right -pi/2; top and bottom: the camera's) */
    float camera_elevation;   /**< the camera's elevation seen from the box centre, rad */
    float target_elevation;   /**< top: pi/3, bottom: -pi/6, else the camera's clamped to [0, pi/4], rad */
    float side_complete;      /**< the side's complete_fraction (1 when complete) */
    uint32_t reserved;        /**< 0 */
    const char *text;         /**< static English prompt: "Move left to see the back", "Stay here: capture the
                                   front" (|move_angle| <= 30 degrees), "Move higher to see the top", "Surface
                                   complete", "Point the camera at the object" */
} ck_surface_hint;                                                 /* 40 bytes on 64-bit, frozen */

/** *out = where to go next from the camera at camera_pose. With depth: the next-best view of
 *  ck_surface_next_view() for the default camera (its side, azimuths, elevations and prompt;
 *  side_complete is that side's complete_fraction; side -1 with "Surface complete" once the
 *  surface is complete). Without depth (face cells), by the best-side rule: among the sides of
 *  side_mask not yet complete, the one with the most surface left to cover ((observed -
 *  well_covered) + frontier); ties: the one nearest the camera's azimuth.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, bad pose). Since 0.2. */
CK_API ck_status ck_surface_suggest(ck_surface_hint *out, const ck_surface *surface, const ck_mat4 *camera_pose);

/** The next-best view (ck_surface_next_view). A growable output: the caller sets struct_size
 *  (CK_SURFACE_VIEW_INIT) and the library writes the fields that fit in it. */
typedef struct ck_surface_view {
    uint32_t struct_size;     /**< sizeof(ck_surface_view) of the caller's header, set by the caller */
    int32_t side;             /**< the side (a ck_face) most of the expected gain lies on; -1: nothing to gain or nothing seen */
    int32_t complete;         /**< 1 when every side of side_mask is complete (ck_surface_suggest then says "Surface
                                   complete"); the view is then the best one to refine it further. Exact: the
                                   pending unseen estimate runs here only when the figures without it (an upper
                                   bound) complete every side */
    uint32_t candidates;      /**< candidate views scored (0 without depth) */
    ck_mat4 target_pose;      /**< camera-to-world at the target, looking at the box centre (OpenGL camera axes) */
    float move_angle;         /**< angle to walk around the object, rad in (-pi, pi]: positive = to your left while
                                   facing the object (ck_surface_hint's convention) */
    float raise_angle;        /**< elevation change, rad: positive = higher */
    float camera_azimuth;     /**< the camera's azimuth around the box (ck_coverage_dial convention), rad */
    float camera_elevation;   /**< the camera's elevation seen from the box centre, rad */
    float target_azimuth;     /**< the target's azimuth, rad */
    float target_elevation;   /**< the target's elevation, rad (one of the candidate rings) */
    float distance;           /**< the target's distance from the box centre, m (the working distance) */
    float gain;               /**< expected gain in surface elements: those it would make well covered (1 each), the
                                   progress on the others (1/4 per threshold newly met, views and spread partially)
                                   and the unseen surface it would reveal (0.9 per element) */
    float gain_fraction;      /**< gain / (observed + frontier) of the side_mask figures; straight after a capture
                                   (the unseen estimate pending, see `complete`), the frontier is the unseen share
                                   as last estimated times the observed surface */
    uint32_t reserved;        /**< 0 */
    const char *text;         /**< static English prompt: "Move left to see the back", "Move higher to see the top",
                                   "Stay here: capture the front", "Surface complete", "Point the camera at the object" */
} ck_surface_view;                                                 /* 128 bytes on 64-bit; grows at the end */

#define CK_SURFACE_VIEW_INIT { (uint32_t)sizeof(ck_surface_view), -1, 0, 0u, { { 0.0f } }, 0.0f, 0.0f, 0.0f, 0.0f, \
    0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0u, NULL }

/** *out = the next-best view from the camera at camera_pose (camera-to-world, OpenGL camera axes),
 *  for a camera with `intrinsics` (NULL: a phone's wide camera, 1920 x 1440, focal 1450 px).
 *
 *  Candidates: 16 azimuths x 3 elevations (5, 30 and 60 degrees) around the box at the working
 *  distance (the camera's distance from the box centre, at least 1.05 x the box's half diagonal),
 *  each looking at the box centre. They are scored on a subsample of the map: the surface elements
 *  grouped in cells of about 1/32 of the grid's longest side (4 voxels by default; a voxel larger
 *  each time there would be more than 4,096 samples, which holds for the rest of the capture: an
 *  object that fills its box, or elements strewn through it by noise), one sample per
 *  cell standing for its elements, and one per cell for its frontier (here: unknown voxels beside
 *  or behind the seen surface and next to free space, where the surface continues unseen past its
 *  edge). Each candidate projects the samples into a coarse depth buffer of its image (80 pixels
 *  across; occlusion: what lies behind the nearest surface is hidden). A visible element facing
 *  the candidate scores what the view would add to it under the "well covered" thresholds (see
 *  gain), counted only where the 48 candidates together (with the views taken) would make it well
 *  covered; a visible frontier sample facing it, or the nearest surface seen from behind (unseen
 *  surface lies in front of it; not when surface facing the candidate is nearer in its pixel, as
 *  the top of a thin part is to its underside), scores the unseen surface it would reveal. The surface remembers
 *  its captured views (ck_surface_add_view; ck_surface_reset forgets them): a candidate within 10
 *  degrees of one is not proposed again, and unseen surface that a captured view faced without
 *  revealing it (a hole the sensor never returns, the inside behind it) is worth nothing after
 *  that (learnt at the next call, from at most the 16 latest views). The best candidate wins (a
 *  slight preference for a shorter walk breaks near-ties).
 *  Without depth (face cells) the target is the side of ck_surface_suggest at the working
 *  distance (candidates 0, gain 0). Cost: a few milliseconds (BENCHMARKS.md), straight after a
 *  capture too (it leaves the unseen estimate the capture left pending to the next read of the
 *  figures unless every side could be complete, and the capture found the frontier's elements
 *  for it: ck_surface_add_view); call it on captures, not every frame.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL out, surface or camera_pose, out->struct_size below the
 *  first release's 128 bytes (64-bit) or absurd, a bad pose or intrinsics; nothing written). Since 0.2. */
CK_API ck_status ck_surface_next_view(ck_surface_view *out, const ck_surface *surface, const ck_mat4 *camera_pose,
                                      const ck_intrinsics *intrinsics);

/** Removes the oldest queued surface event (CK_EVENT_SURFACE_SIDE_COMPLETED, CK_EVENT_SURFACE_COMPLETED)
 *  into *event_out. @return CK_OK; CK_END when the queue is empty (nothing written);
 *  CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_surface_next_event(ck_event *event_out, ck_surface *surface);

/** The voxel grid: voxel (i, j, k) spans origin + (i, j, k) x voxel_size to + voxel_size, box frame. */
typedef struct ck_surface_grid {
    uint32_t dims[3];         /**< voxels along x, y, z */
    float voxel_size;         /**< m */
    float origin[3];          /**< the grid's corner, box frame, m (centred on the box; with a floor, y starts
                                   2 voxels above it: ck_surface_fuse) */
    uint32_t elements;        /**< surface elements (with depth) or face cells (without) */
} ck_surface_grid;                                                 /* 32 bytes, frozen */

/** *out = the grid. @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_surface_grid_info(ck_surface_grid *out, const ck_surface *surface);

/** Voxel states (ck_surface_voxel), dst[(k * dims[1] + j) * dims[0] + i]. dst_capacity and
 *  *written_out (may be NULL) count bytes: *written_out = the voxel count on CK_OK and on
 *  CK_E_BUFFER_TOO_SMALL (nothing written).
 *  @return CK_OK, CK_E_BUFFER_TOO_SMALL or CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_surface_voxels(uint8_t *dst, size_t dst_capacity, size_t *written_out, const ck_surface *surface);

/** One surface element. */
typedef struct ck_surface_element {
    float position[3];        /**< box frame, m: the voxel's (or face cell's) centre */
    float normal[3];          /**< box frame, unit; 0 while unknown */
    uint32_t views;           /**< captured views that saw it */
    float spread_deg;         /**< spread of their directions (see min_spread_deg) */
    float best_incidence_deg; /**< 90 when no view saw its front; with no normal (no depth-frame normal, no free voxel around it), the angle to the mean direction of its views */
    float best_px_per_cm;
    uint8_t color[3];         /**< mean image colour; 0 when none (flags bit 2 clear) */
    uint8_t flags;            /**< bit 0: seen by a view; bit 1: well covered; bit 2: has an image colour; bit 3: out
                                   of reach (not well covered, and no view on the rings around the box could cover it
                                   well: the figures leave its area out; see the section comment). Since 0.2 */
    int32_t side;             /**< the side it belongs to (a ck_face) */
} ck_surface_element;                                              /* 48 bytes, frozen */

/** The surface elements, in the order they were first seen (face cells: face by face, row by row).
 *  dst_capacity and *written_out (may be NULL) count elements: *written_out = the element count
 *  on CK_OK and on CK_E_BUFFER_TOO_SMALL (nothing written).
 *  @return CK_OK, CK_E_BUFFER_TOO_SMALL or CK_E_INVALID_ARGUMENT (NULL, or a dst_capacity of more
 *  than SIZE_MAX/2 bytes). Since 0.2. */
CK_API ck_status ck_surface_elements(ck_surface_element *dst, size_t dst_capacity, size_t *written_out,
                                     const ck_surface *surface);

/** Writes the observed surface as a binary little-endian PLY point cloud in world coordinates
 *  (properties: float x y z, float nx ny nz, uchar red green blue, uchar views; the format is in
 *  docs/FORMATS.md), coloured as `colors` says (a ck_surface_ply). The file is written under a
 *  temporary name and renamed (a failed call leaves no file). flags: 0 or CK_OPEN_OVERWRITE.
 *  @return CK_OK; CK_E_EXISTS (the file exists and flags lacks CK_OPEN_OVERWRITE); CK_E_NOT_FOUND
 *  (the folder does not exist); CK_E_IO; CK_E_INVALID_ARGUMENT (NULL or empty path, unknown
 *  colors or flags). Since 0.2. */
CK_API ck_status ck_surface_export_ply(const ck_surface *surface, const char *path, int32_t colors, uint32_t flags);

/** Gives a dataset its initial point cloud for splat trainers: a copy of the surface's points that
 *  captured images coloured (the elements of CK_SURFACE_PLY_IMAGE, world coordinates, the
 *  dataset's frame). The next ck_dataset_finalize writes them as "sparse_pc.ply" (the PLY layout
 *  of ck_surface_export_ply) and names it in transforms.json's "ply_file_path", which nerfstudio's
 *  splatfacto initialises from; ck_dataset_export_colmap then writes them to points3D.txt. Call it
 *  again after more views to refresh the copy. surface NULL, or a map with no coloured points (no
 *  depth fused, or no view with an image): no point cloud (the next finalize removes an earlier
 *  sparse_pc.ply). Without this call a finalize keeps naming the sparse_pc.ply an earlier one
 *  wrote. A session does this itself on ck_session_finish (its map, coloured by its captures,
 *  camera pixels included).
 *  @return CK_OK; CK_E_STATE (the dataset was opened read-only, or is closed or cancelled; nothing
 *  changes); CK_E_INVALID_ARGUMENT (NULL dataset). Since 0.2. */
CK_API ck_status ck_dataset_set_surface(ck_dataset *dataset, const ck_surface *surface);

/** The session's surface map (borrowed, valid until ck_session_close). The session creates it with
 *  its box (default options), fuses every processed frame that carries depth (and confidence),
 *  adds each capture as a view (with its RGB8/RGBA8/GRAY8 pixels as colour), re-expresses it on
 *  ck_session_set_box, resets it on ck_session_begin_pass (the object moved), and queues its
 *  events with the others. A resumed session starts an empty map. ck_surface_free on it does
 *  nothing. @return CK_OK; CK_E_STATE (no box yet, so no map); CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_session_surface(const ck_surface **surface_out, const ck_session *session);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_SURFACE_H */
