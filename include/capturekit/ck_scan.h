/* Reading other apps' captures: MultiScan scans and Stray Scanner captures. Part of the
 * CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_SCAN_H
#define CAPTUREKIT_CK_SCAN_H

#include "ck_depth.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Scan reader (since 0.2)
 *
 * Opens, read-only, what another capture app recorded, and gives it frame by frame in CaptureKit's
 * conventions (seconds, camera-to-world poses with OpenGL camera axes, the colour camera's
 * intrinsics at the colour resolution, depth in any ck_format):
 *
 *   MultiScan scan        <id>.json (metadata: stream sizes, counts), <id>.jsonl (camera info,
 *                         one line per frame), <id>.depth.zlib, <id>.confidence.zlib (docs/FORMATS.md
 *                         §1-3). Sizes come from the metadata; frame i is camera-info line i and
 *                         stream frame i (a frame past the metadata's depth count has no depth).
 *                         A CaptureKit dataset folder with streams is a MultiScan scan too.
 *   Stray Scanner capture odometry.csv (timestamp, frame, x, y, z, qx, qy, qz, qw; OpenCV camera
 *                         axes, converted; newer app builds add fx, fy, cx, cy: that frame's
 *                         intrinsics, used when the header names them), camera_matrix.csv (3x3,
 *                         row-major; the intrinsics of every frame when odometry.csv has none),
 *                         depth/NNNNNN.png (16-bit mm), confidence/NNNNNN.png (0-2). The colour
 *                         size is the app's 1920 x 1440 when camera_matrix.csv's principal point
 *                         lies within 5 % of its centre, else twice that principal point; the depth
 *                         size is the first depth PNG's, which may not exceed the colour size.
 *
 * Colour frames stay in the app's video (rgb.mp4, <id>.mp4): decode them with the host's video
 * library (frame i of the video is frame i here).
 * Every file is hostile input: a damaged or inconsistent file is CK_E_CORRUPT naming the file and
 * line, never a crash; a declared size is checked before anything is allocated for it (a depth or
 * confidence PNG against the scan's depth size, which is checked against the colour size at open,
 * and against the caller's buffer), and a file is read only up to what its declared size can hold.
 * Frames come in file order; timestamps are not required to increase (a CaptureKit dataset resumed
 * after the device restarted its clock goes back), see ck_scan_info.duration.
 * ============================================================================================ */

typedef struct ck_scan ck_scan;

/** What ck_scan_open found. */
typedef enum ck_scan_kind {
    CK_SCAN_KIND_MULTISCAN = 1,  /**< a MultiScan scan (or a CaptureKit dataset's streams) */
    CK_SCAN_KIND_STRAY = 2       /**< a Stray Scanner capture */
} ck_scan_kind;

/** A scan as a whole (ck_scan_describe). */
typedef struct ck_scan_info {
    int32_t kind;                /**< a ck_scan_kind */
    int32_t has_confidence;      /**< 1: ck_scan_confidence reads maps */
    uint32_t depth_width;        /**< the depth (and confidence) maps' size; 0 x 0: no depth */
    uint32_t depth_height;
    uint64_t frame_count;        /**< frames with a pose */
    uint64_t depth_frame_count;  /**< of them, frames with depth */
    double duration;             /**< seconds the timestamps span: the latest frame's timestamp minus the
                                      earliest's, never negative, also when the clock goes back (0 for
                                      fewer than 2 frames) */
} ck_scan_info;                                                    /* 40 bytes on 64-bit, frozen */

/** One frame (ck_scan_frame). */
typedef struct ck_scan_frame_info {
    double timestamp;            /**< seconds, the app's clock */
    ck_mat4 pose;                /**< camera-to-world, OpenGL camera axes */
    ck_intrinsics intrinsics;    /**< the colour camera's, at the colour resolution (ck_intrinsics_scale
                                      to the depth size before back-projecting depth) */
    int64_t depth_index;         /**< its frame in the depth stream, or the number of its Stray files */
    int32_t has_depth;           /**< 1: ck_scan_depth reads this frame */
    uint32_t reserved;           /**< 0 */
} ck_scan_frame_info;                                              /* 112 bytes on 64-bit, frozen */

/** Opens a scan: a MultiScan scan folder (holding one <id>.json with its <id>.jsonl), the metadata
 *  file <id>.json itself (for a folder holding several scans), or a Stray Scanner folder. Reads
 *  the metadata and every pose now; depth is read frame by frame. *scan_out is NULL on failure.
 *  @return CK_OK; CK_E_NOT_FOUND (no such path, or neither kind of scan there); CK_E_CORRUPT (a
 *  file is damaged or inconsistent: the message names it); CK_E_IO; CK_E_INVALID_ARGUMENT (NULL,
 *  or a folder with several MultiScan scans: open one by its metadata file). Since 0.2. */
CK_API ck_status ck_scan_open(ck_scan **scan_out, const char *path);

/** Describes the scan. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_scan_describe(ck_scan_info *info_out, const ck_scan *scan);

/** Frame `index` (0 ... frame_count - 1). @return CK_OK; CK_E_NOT_FOUND (index past the last
 *  frame); CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_scan_frame(ck_scan_frame_info *info_out, const ck_scan *scan, uint64_t index);

/** Reads frame `index`'s depth into dst as `dst_format` (F32 or F16 metres, or MM), depth_width x
 *  depth_height samples tightly packed; *written_out (may be NULL) gets the bytes (the bytes needed
 *  on CK_E_BUFFER_TOO_SMALL). dst is written only on CK_OK.
 *  @return CK_OK; CK_E_NOT_FOUND (index past the last frame, or the frame has no depth);
 *  CK_E_CORRUPT (the stream or PNG is damaged, ends before this frame, or is not the scan's size);
 *  CK_E_BUFFER_TOO_SMALL; CK_E_IO; CK_E_INVALID_ARGUMENT (NULL, not a depth format). Since 0.2. */
CK_API ck_status ck_scan_depth(void *dst, size_t dst_capacity, size_t *written_out, ck_scan *scan, uint64_t index,
                               int32_t dst_format);

/** Reads frame `index`'s confidence (0 low, 1 medium, 2 high) into dst, depth_width x depth_height
 *  bytes; as ck_scan_depth otherwise. @return CK_OK; CK_E_NOT_FOUND (index past the last frame, no
 *  depth for it, or the scan has no confidence); CK_E_CORRUPT; CK_E_BUFFER_TOO_SMALL; CK_E_IO;
 *  CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_scan_confidence(uint8_t *dst, size_t dst_capacity, size_t *written_out, ck_scan *scan, uint64_t index);

/** Closes and frees a scan. @return CK_OK (also for NULL). Since 0.2. */
CK_API ck_status ck_scan_close(ck_scan *scan);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_SCAN_H */
