/*
 * capturekit.h — the public C API of CaptureKit, the portable core of a guided 3D-capture rig.
 *
 * This umbrella header and the area headers it includes (include/capturekit/ck_*.h) are the
 * reference documentation and the ABI contract. What is not declared there is not API. Plain C99;
 * also compiles as C++. Include only <capturekit.h>. The architecture and the reasons behind the
 * conventions below: docs/DESIGN.md; every file format read or written: docs/FORMATS.md.
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
 * SHAPE OF EVERY CALL (checked by scripts/check_docs.py, run by make check-abi)
 *   Names:   ck_<object>_<verb> (ck_box_translate, ck_depth_reader_read); enum constants are CK_ +
 *            the type name without ck_ (and without a trailing _code) + the value: ck_speed_band ->
 *            CK_SPEED_BAND_FAST, ck_image_format -> CK_IMAGE_FORMAT_RGB8, ck_event_code -> CK_EVENT_*.
 *   Order:   outputs first, then the handle (or the value being edited), then inputs:
 *            ck_session_process(&result, session, &frame), ck_box_translate(&box, delta).
 *   Buffers: a caller buffer the library fills is the triple (dst, dst_capacity, written_out):
 *            dst_capacity and *written_out count dst's elements (bytes for void * and char *);
 *            written_out may be NULL; when dst_capacity is too small the call returns
 *            CK_E_BUFFER_TOO_SMALL, writes nothing to dst and sets *written_out to the count needed.
 *            A dst_capacity of more than SIZE_MAX/2 bytes (elements x element size) describes no
 *            buffer and is refused with CK_E_INVALID_ARGUMENT.
 *            A caller's image or depth map is a ck_image / ck_depth_map (pointer, width, height,
 *            stride, format), stride 0 meaning tightly packed.
 *   Handles: created by _create and released by _free (memory only, returns void), or opened by
 *            _open / _create on a file or folder and released by _close (returns a ck_status: the
 *            final flush can fail; the handle is freed anyway). Every _free, _close and _cancel
 *            accepts NULL and then does nothing (CK_OK).
 *
 * ERRORS
 *   Fallible functions return a ck_status: CK_OK (0), a positive special outcome (CK_MISS), or a
 *   negative CK_E_* code. On a negative code, ck_last_error_message() gives a thread-local message
 *   that names the function and the argument. Outputs are written only on CK_OK (and on CK_MISS
 *   where a function says so); an in/out object (a ck_box being edited) is unchanged on error.
 *   The few exceptions say so in their doc ("on error, dst may hold partial output"), and a
 *   CK_E_BUFFER_TOO_SMALL still sets the documented "needed" output.
 *   Every pointer, size and float is validated: NULL, NaN, +-inf, zero or negative sizes and
 *   absurd values return CK_E_INVALID_ARGUMENT. No input can make the library abort the process.
 *
 * VERSIONS AND EVOLUTION
 *   Same major version = ABI compatible: a binary built against an older header of the same major
 *   runs against a newer library. A minor release may add functions, status codes, enum values,
 *   flags and fields at the END of a struct that starts with `uint32_t struct_size` (options,
 *   frame descriptors; the library reads any struct_size from the first release's layout up to its
 *   own and gives the defaults for fields the caller's header did not have; a larger struct_size
 *   from a newer header is accepted while its unknown bytes are zero). A minor release never
 *   changes a function's signature or meaning, renumbers a code, or changes the layout of a value
 *   type (ck_vec3, ck_box, ck_hit ...). While the major version is 0, a minor release may still
 *   break the API; the README's "Changes" section lists every such break.
 *
 * THREAD SAFETY
 *   Functions on values only (geometry, box, raycast, conversions, ck_sharpness_score) are safe
 *   to call from any thread. A handle (ck_scheduler, ck_coverage, readers, writers ...) is used
 *   by one thread at a time; distinct handles are independent.
 *   Error messages are per thread.
 *
 * MEMORY
 *   Callers own every buffer they pass in, and each is used during the call only: what the library
 *   keeps (a frame's depth, a path, an option string) it copies before returning, so the caller
 *   may reuse or free a buffer as soon as the call returns. Files and folders read back from disk
 *   (journals, streams, images, JSON) are treated as hostile input: a damaged file gives
 *   CK_E_CORRUPT, never a crash or a write outside its folder. Strings returned as `const char *` are library-owned
 *   and static unless documented otherwise. Memory the library allocates for the caller is freed
 *   with ck_free(), never free().
 */
#ifndef CAPTUREKIT_H
#define CAPTUREKIT_H

/* One header per area; this umbrella is what callers include. */
#include "capturekit/ck_base.h"      /* status codes, errors, version, ck_free */
#include "capturekit/ck_geometry.h"  /* ck_vec3, ck_quat, ck_mat4, ck_intrinsics, ck_ray; pose helpers */
#include "capturekit/ck_image.h"     /* ck_format, ck_image_format, ck_image, ck_depth_map; PNG and JPEG files */
#include "capturekit/ck_box.h"       /* ck_box: init, corners, faces, edits, floor, fit */
#include "capturekit/ck_raycast.h"   /* rays from pixels; ray vs plane, floor, box; batched */
#include "capturekit/ck_guidance.h"  /* capture scheduler, quality gates, events, coverage, sharpness */
#include "capturekit/ck_depth.h"     /* depth conversions, native codec + .ckdepth, MultiScan streams */
#include "capturekit/ck_scene.h"     /* a synthetic scene (depth, confidence, RGB) for demos and tests */
#include "capturekit/ck_dataset.h"   /* dataset folders and the per-frame capture session */
#include "capturekit/ck_scan.h"      /* reading MultiScan scans and Stray Scanner captures */
#include "capturekit/ck_surface.h"   /* surface coverage from depth: voxel map, figures, hint, PLY */

#endif /* CAPTUREKIT_H */
