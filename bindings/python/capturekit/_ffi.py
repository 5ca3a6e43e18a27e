"""The one place that talks to ``libcapturekit.so`` through ctypes.

This module

1. finds and loads the library (see :func:`_open` for the lookup order),
2. mirrors the header's value types as ctypes Structures with the frozen C layouts,
3. declares every function of the C API (``include/capturekit.h`` and the area headers it
   includes) exactly once (``argtypes``, ``restype``, ``errcheck``), so that a negative status
   raises the matching :class:`~capturekit.errors.CaptureKitError` right after the call, with
   the thread-local message of ``ck_last_error_message()``,
4. checks on load that the library's major version is the one this binding expects.

The raw functions are attributes of :data:`lib` (``_ffi.lib.ck_box_init`` ...). They return the
status (``CK_OK`` = 0 or ``CK_MISS`` = 1) and raise on negative codes; the string functions
return ``str``. Array arguments are NumPy arrays checked by ``np.ctypeslib.ndpointer`` (dtype,
C-contiguity, writeability for outputs); scalar outputs of the C API (``float *``, ``int32_t *``,
``size_t *``) are passed as one-element NumPy arrays so that no other module needs ctypes.
Images and depth maps are ``ck_image`` / ``ck_depth_map`` structs made by :func:`image` and
:func:`depth_map` from arrays whose rows :func:`packed_rows` made describable by one stride.
Calls made per frame or per UI event use :func:`fast` instead: a second function object declared
from the same prototype entry, returning the status for an inline check (see "Per-call fast path").

Everything here is private API; use the ``capturekit`` package.
"""

from __future__ import annotations

import ctypes
import os
import re
import warnings

import numpy as np

from ._version import __version__ as _BINDING_VERSION
from .errors import LibraryNotFoundError, VersionMismatchError, error_for_status

#: ctypes.sizeof, for modules that size a growable struct (nothing else imports ctypes).
sizeof = ctypes.sizeof

#: Environment variable naming the library file to load first.
ENV_VAR = "CAPTUREKIT_LIBRARY"
#: Link-time name of the library (the development build's file, .build-dist/release/libcapturekit.so).
LIBRARY_NAME = "libcapturekit.so"
#: The library major version this binding is written for (CK_VERSION_MAJOR of the header).
EXPECTED_MAJOR = int(_BINDING_VERSION.split(".")[0])
#: While the major version is 0 the minor must match too (0.x minor releases may break the ABI).
EXPECTED_MINOR = int(_BINDING_VERSION.split(".")[1])
#: The SONAME of a library this binding can use (the ABI: libcapturekit.so.0.MINOR while the
#: major is 0, libcapturekit.so.MAJOR after): the file inside a wheel, and the name looked up
#: on the system library path.
LIBRARY_SONAME = (f"libcapturekit.so.{EXPECTED_MAJOR}.{EXPECTED_MINOR}" if EXPECTED_MAJOR == 0
                  else f"libcapturekit.so.{EXPECTED_MAJOR}")
#: Debian packages of the library's own dependencies, for the advice when one is missing.
_DEPENDENCY_PACKAGES = {"libzstd.so.1": "libzstd1", "libturbojpeg.so.0": "libturbojpeg0",
                        "libjson-c.so.5": "libjson-c5", "libz.so.1": "zlib1g"}
#: Header constants the binding needs.
CK_OK = 0
CK_MISS = 1
CK_END = 2
CK_MAX_BATCH = 2147483647
CK_MAX_IMAGE_DIMENSION = 65536
CK_BOX_MIN_SIZE = 0.01
CK_BOX_MAX_SIZE = 1000.0
CK_MAX_COORDINATE = 1.0e6
CK_DEPTH_MAX_DIMENSION = 16384
CK_DEPTH_LEVEL_ARCHIVAL = 19
CK_TRANSCODE_ARCHIVAL = 8
CK_OPEN_OVERWRITE = 1
CK_OPEN_APPEND = 2
CK_ZSTREAM_INDEX = 4
CK_ZSTREAM_DEFAULT_LEVEL = 1
#: ck_format (sample formats of depth and confidence maps).
CK_FORMAT_DEPTH_F32 = 1
CK_FORMAT_DEPTH_F16 = 2
CK_FORMAT_DEPTH_MM = 3
CK_FORMAT_U8 = 4
#: ck_image_format (pixel layouts of images).
CK_IMAGE_FORMAT_NONE = 0
CK_IMAGE_FORMAT_GRAY8 = 1
CK_IMAGE_FORMAT_RGB8 = 2
CK_IMAGE_FORMAT_RGBA8 = 3
CK_IMAGE_FORMAT_GRAY16 = 4

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------------------------------
# Value types (frozen layouts; sizes from the header comments)
# ------------------------------------------------------------------------------------------


class ck_vec3(ctypes.Structure):
    """``ck_vec3 { float x, y, z; }`` (12 bytes)."""

    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("z", ctypes.c_float)]

    def __repr__(self):
        return f"ck_vec3({self.x!r}, {self.y!r}, {self.z!r})"


class ck_quat(ctypes.Structure):
    """``ck_quat { float x, y, z, w; }`` (16 bytes), vector part first."""

    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("z", ctypes.c_float), ("w", ctypes.c_float)]


class ck_mat4(ctypes.Structure):
    """``ck_mat4 { float m[16]; }`` (64 bytes), column-major: element (r, c) is ``m[c * 4 + r]``."""

    _fields_ = [("m", ctypes.c_float * 16)]


class ck_intrinsics(ctypes.Structure):
    """``ck_intrinsics { float fx, fy, cx, cy; uint32_t width, height; }`` (24 bytes)."""

    _fields_ = [
        ("fx", ctypes.c_float),
        ("fy", ctypes.c_float),
        ("cx", ctypes.c_float),
        ("cy", ctypes.c_float),
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
    ]


class ck_ray(ctypes.Structure):
    """``ck_ray { ck_vec3 origin; ck_vec3 direction; }`` (24 bytes)."""

    _fields_ = [("origin", ck_vec3), ("direction", ck_vec3)]


class ck_box(ctypes.Structure):
    """``ck_box { ck_vec3 center; ck_vec3 size; float yaw; float floor; int32_t has_floor; }`` (36 bytes)."""

    _fields_ = [
        ("center", ck_vec3),
        ("size", ck_vec3),
        ("yaw", ctypes.c_float),
        ("floor", ctypes.c_float),
        ("has_floor", ctypes.c_int32),
    ]


class ck_hit(ctypes.Structure):
    """``ck_hit { ck_vec3 point; float distance; int32_t face; int32_t inside; }`` (24 bytes)."""

    _fields_ = [
        ("point", ck_vec3),
        ("distance", ctypes.c_float),
        ("face", ctypes.c_int32),
        ("inside", ctypes.c_int32),
    ]


class ck_fit_options(ctypes.Structure):
    """``ck_fit_options`` (20 bytes); start from ``ck_fit_options_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("use_floor", ctypes.c_int32),
        ("floor", ctypes.c_float),
        ("floor_margin", ctypes.c_float),
        ("padding", ctypes.c_float),
    ]



# Pixel buffers (ck_image.h)


class ck_image(ctypes.Structure):
    """``ck_image { const void *data; uint32_t width, height; size_t stride; int32_t format; uint32_t reserved; }``
    (32 bytes on 64-bit): a caller's image, ``format`` a ``ck_image_format``; stride 0 = tightly packed."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
        ("stride", ctypes.c_size_t),
        ("format", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
    ]


class ck_depth_map(ctypes.Structure):
    """``ck_depth_map`` (32 bytes on 64-bit): a caller's depth or confidence map, the layout of
    ``ck_image`` with ``format`` a ``ck_format``."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
        ("stride", ctypes.c_size_t),
        ("format", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
    ]


# Guidance (ck_guidance.h)


class ck_scheduler_p(ctypes.c_void_p):
    """An opaque ``ck_scheduler *`` handle."""


class ck_coverage_p(ctypes.c_void_p):
    """An opaque ``ck_coverage *`` handle."""


class ck_event(ctypes.Structure):
    """``ck_event`` (32 bytes on 64-bit): code, index, timestamp, value, reserved, static text."""

    _fields_ = [
        ("code", ctypes.c_int32),
        ("index", ctypes.c_int32),
        ("timestamp", ctypes.c_double),
        ("value", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
        ("text", ctypes.c_char_p),
    ]


class ck_scheduler_options(ctypes.Structure):
    """``ck_scheduler_options`` (120 bytes); start from ``ck_scheduler_options_init`` or ``_preset``."""

    _fields_ = [("struct_size", ctypes.c_uint32)] + [
        (name, ctypes.c_float)
        for name in (
            "smoothing_window", "speed_slow", "speed_medium", "speed_fast", "interval_slow", "interval_medium",
            "interval_fast", "first_capture_delay", "max_angular_speed_deg", "pitch_max_deg", "pitch_min_deg",
            "pitch_delay", "drift_distance", "drift_time", "box_view_angle_deg", "redundant_distance",
            "redundant_angle_deg", "min_sharpness", "depth_min", "depth_max", "depth_center_fraction",
            "prompt_delay", "prompt_repeat", "sideways_ratio", "sideways_min_speed",
        )
    ] + [("blocking_flags", ctypes.c_uint32), ("prompt_window", ctypes.c_float),
         ("min_box_in_frame", ctypes.c_float), ("min_luma", ctypes.c_float)]


class ck_scheduler_frame(ctypes.Structure):
    """``ck_scheduler_frame`` (184 bytes on 64-bit); start from ``ck_scheduler_frame_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("tracking", ctypes.c_int32),
        ("timestamp", ctypes.c_double),
        ("pose", ck_mat4),
        ("box", ctypes.POINTER(ck_box)),
        ("sharpness", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
        ("depth", ck_depth_map),
        ("depth_intrinsics", ck_intrinsics),
        ("intrinsics", ck_intrinsics),
        ("tracking_reason", ctypes.c_int32),
        ("mean_luma", ctypes.c_float),
    ]


class ck_guidance(ctypes.Structure):
    """``ck_guidance`` (48 bytes): the scheduler's answer for one frame."""

    _fields_ = [
        ("capture", ctypes.c_int32),
        ("band", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("captures", ctypes.c_uint32),
        ("speed", ctypes.c_float),
        ("angular_speed", ctypes.c_float),
        ("pitch", ctypes.c_float),
        ("interval", ctypes.c_float),
        ("next_capture_in", ctypes.c_float),
        ("median_depth", ctypes.c_float),
        ("blocked", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


class ck_coverage_options(ctypes.Structure):
    """``ck_coverage_options`` (44 bytes); start from ``ck_coverage_options_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("goal", ctypes.c_uint32),
        ("face_mask", ctypes.c_uint32),
        ("cells_per_side", ctypes.c_uint32),
        ("grid_width", ctypes.c_uint32),
        ("grid_height", ctypes.c_uint32),
        ("azimuth_bins", ctypes.c_uint32),
        ("elevation_rings", ctypes.c_uint32),
        ("elevation_min_deg", ctypes.c_float),
        ("elevation_max_deg", ctypes.c_float),
        ("count_inside_views", ctypes.c_uint32),
    ]


class ck_face_coverage(ctypes.Structure):
    """``ck_face_coverage`` (40 bytes)."""

    _fields_ = [
        ("count", ctypes.c_uint32),
        ("goal", ctypes.c_uint32),
        ("progress", ctypes.c_float),
        ("color", ctypes.c_float * 3),
        ("opacity", ctypes.c_float),
        ("cell_fraction", ctypes.c_float),
        ("completed", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
    ]


class ck_coverage_summary(ctypes.Structure):
    """``ck_coverage_summary`` (32 bytes)."""

    _fields_ = [
        ("views", ctypes.c_uint32),
        ("faces_completed", ctypes.c_uint32),
        ("all_completed", ctypes.c_int32),
        ("completion", ctypes.c_float),
        ("dial_fraction", ctypes.c_float),
        ("cell_fraction", ctypes.c_float),
        ("reserved", ctypes.c_uint32 * 2),
    ]


class ck_coverage_hint(ctypes.Structure):
    """``ck_coverage_hint`` (32 bytes)."""

    _fields_ = [
        ("move_angle", ctypes.c_float),
        ("camera_azimuth", ctypes.c_float),
        ("target_azimuth", ctypes.c_float),
        ("camera_elevation", ctypes.c_float),
        ("ring", ctypes.c_int32),
        ("bin", ctypes.c_int32),
        ("target_count", ctypes.c_uint32),
        ("ring_delta", ctypes.c_int32),
    ]

# Depth: native codec and .ckdepth files (ck_depth.h)


class ck_depth_codec_p(ctypes.c_void_p):
    """An opaque ``ck_depth_codec *`` handle."""


class ck_depth_writer_p(ctypes.c_void_p):
    """An opaque ``ck_depth_writer *`` handle."""


class ck_depth_reader_p(ctypes.c_void_p):
    """An opaque ``ck_depth_reader *`` handle."""


class ck_zstream_writer_p(ctypes.c_void_p):
    """An opaque ``ck_zstream_writer *`` handle."""


class ck_zstream_reader_p(ctypes.c_void_p):
    """An opaque ``ck_zstream_reader *`` handle."""


class ck_scene_p(ctypes.c_void_p):
    """An opaque ``ck_scene *`` handle (the synthetic test scene)."""


class ck_depth_info(ctypes.Structure):
    """``ck_depth_info`` (32 bytes): width, height, kind, version, frame_count, torn_bytes."""

    _fields_ = [
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
        ("kind", ctypes.c_int32),
        ("version", ctypes.c_uint32),
        ("frame_count", ctypes.c_uint64),
        ("torn_bytes", ctypes.c_uint64),
    ]


class ck_dataset_p(ctypes.c_void_p):
    """An opaque ``ck_dataset *`` handle."""


class ck_session_p(ctypes.c_void_p):
    """An opaque ``ck_session *`` handle."""


class ck_scan_p(ctypes.c_void_p):
    """An opaque ``ck_scan *`` handle (a MultiScan scan or a Stray Scanner capture)."""


#: ``ck_log_fn``: void (*)(void *user, int32_t level, const char *message).
ck_log_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


class ck_dataset_options(ctypes.Structure):
    """``ck_dataset_options`` (120 bytes on 64-bit); start from ``ck_dataset_options_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("depth_png_width", ctypes.c_uint32),
        ("depth_png_height", ctypes.c_uint32),
        ("zlib_level", ctypes.c_int32),
        ("png_level", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
        ("start_time_unix", ctypes.c_double),
        ("device_id", ctypes.c_char_p),
        ("device_name", ctypes.c_char_p),
        ("device_type", ctypes.c_char_p),
        ("user_name", ctypes.c_char_p),
        ("scene_description", ctypes.c_char_p),
        ("scene_type", ctypes.c_char_p),
        ("color_encoding", ctypes.c_char_p),
        ("color_file_extension", ctypes.c_char_p),
        ("write_mode", ctypes.c_int32),
        ("write_queue_mb", ctypes.c_uint32),
        ("image_encoding", ctypes.c_int32),
        ("jpeg_quality", ctypes.c_int32),
        ("image_downscales", ctypes.c_uint32),
        ("reserved3", ctypes.c_uint32),
    ]


class ck_frame_desc(ctypes.Structure):
    """``ck_frame_desc`` (200 bytes on 64-bit); start from ``ck_frame_desc_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("timestamp", ctypes.c_double),
        ("pose", ck_mat4),
        ("intrinsics", ck_intrinsics),
        ("image", ck_image),
        ("image_path", ctypes.c_char_p),
        ("depth", ck_depth_map),
        ("sharpness", ctypes.c_float),
        ("reserved2", ctypes.c_uint32),
        ("image_chroma", ctypes.c_void_p),
        ("image_chroma_stride", ctypes.c_size_t),
    ]


class ck_dataset_frame_info(ctypes.Structure):
    """``ck_dataset_frame_info`` (128 bytes on 64-bit): one frame of a dataset."""

    _fields_ = [
        ("id", ctypes.c_uint64),
        ("pass_", ctypes.c_uint32),
        ("has_depth", ctypes.c_int32),
        ("timestamp", ctypes.c_double),
        ("pose", ck_mat4),
        ("intrinsics", ck_intrinsics),
        ("sharpness", ctypes.c_float),
        ("owns_image", ctypes.c_int32),
        ("stream_index", ctypes.c_int64),
    ]


class ck_scan_info(ctypes.Structure):
    """``ck_scan_info`` (40 bytes on 64-bit): a scan as a whole."""

    _fields_ = [
        ("kind", ctypes.c_int32),
        ("has_confidence", ctypes.c_int32),
        ("depth_width", ctypes.c_uint32),
        ("depth_height", ctypes.c_uint32),
        ("frame_count", ctypes.c_uint64),
        ("depth_frame_count", ctypes.c_uint64),
        ("duration", ctypes.c_double),
    ]


class ck_scan_frame_info(ctypes.Structure):
    """``ck_scan_frame_info`` (112 bytes on 64-bit): one frame of a scan."""

    _fields_ = [
        ("timestamp", ctypes.c_double),
        ("pose", ck_mat4),
        ("intrinsics", ck_intrinsics),
        ("depth_index", ctypes.c_int64),
        ("has_depth", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
    ]


def pointer(struct):
    """A pointer to a ctypes structure, for struct fields that hold nested options by pointer
    (the caller keeps `struct` alive while the pointer is used)."""
    return ctypes.pointer(struct)


class ck_session_options(ctypes.Structure):
    """``ck_session_options`` (72 bytes on 64-bit); start from ``ck_session_options_init``. The nested
    option sets are pointers (NULL = defaults) the caller keeps alive during ``ck_session_create``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("preset", ctypes.c_int32),
        ("scheduler", ctypes.POINTER(ck_scheduler_options)),
        ("coverage", ctypes.POINTER(ck_coverage_options)),
        ("dataset", ctypes.POINTER(ck_dataset_options)),
        ("storage_warning_minutes", ctypes.c_float),
        ("stream_depth", ctypes.c_int32),
        ("log", ck_log_fn),
        ("log_user", ctypes.c_void_p),
        ("log_level", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
        ("queue_full", ctypes.c_int32),
        ("reserved2", ctypes.c_uint32),
    ]


class ck_session_frame(ctypes.Structure):
    """``ck_session_frame`` (272 bytes on 64-bit); start from ``ck_session_frame_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("tracking", ctypes.c_int32),
        ("timestamp", ctypes.c_double),
        ("pose", ck_mat4),
        ("intrinsics", ck_intrinsics),
        ("image", ck_image),
        ("depth", ck_depth_map),
        ("confidence", ck_depth_map),
        ("depth_intrinsics", ck_intrinsics),
        ("sharpness", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
        ("tracking_reason", ctypes.c_int32),
        ("mean_luma", ctypes.c_float),
        ("image_chroma", ctypes.c_void_p),
        ("image_chroma_stride", ctypes.c_size_t),
        # Handing an image over (ck_image_release_fn): never set from Python. The library would
        # read a NumPy array's buffer on its writer thread after process() returned, while Python
        # may still change or free the array, and the callback would have to take the GIL on
        # that thread (a deadlock at interpreter exit). Left NULL: images are lent and copied.
        ("image_release", ctypes.c_void_p),
        ("image_release_user", ctypes.c_void_p),
    ]


class ck_session_result(ctypes.Structure):
    """``ck_session_result`` (144 bytes): what the session did with a frame."""

    _fields_ = [
        ("captured", ctypes.c_int32),
        ("pass_", ctypes.c_uint32),
        ("frame_id", ctypes.c_uint64),
        ("guidance", ck_guidance),
        ("coverage", ctypes.c_float),
        ("minutes_left", ctypes.c_float),
        ("events", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("image_path", ctypes.c_char * 64),
    ]


# Surface coverage (ck_surface.h)


class ck_surface_p(ctypes.c_void_p):
    """An opaque ``ck_surface *`` handle."""


class ck_surface_options(ctypes.Structure):
    """``ck_surface_options`` (44 bytes); start from ``ck_surface_options_init``."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("voxel_size", ctypes.c_float),
        ("max_depth", ctypes.c_float),
        ("min_confidence", ctypes.c_uint32),
        ("min_views", ctypes.c_uint32),
        ("min_spread_deg", ctypes.c_float),
        ("max_incidence_deg", ctypes.c_float),
        ("min_px_per_cm", ctypes.c_float),
        ("goal_fraction", ctypes.c_float),
        ("side_mask", ctypes.c_uint32),
        ("face_cells", ctypes.c_uint32),
    ]


class ck_surface_side(ctypes.Structure):
    """``ck_surface_side`` (24 bytes)."""

    _fields_ = [
        ("observed", ctypes.c_uint32),
        ("well_covered", ctypes.c_uint32),
        ("frontier", ctypes.c_uint32),
        ("well_fraction", ctypes.c_float),
        ("complete_fraction", ctypes.c_float),
        ("completed", ctypes.c_int32),
    ]


class ck_surface_figures(ctypes.Structure):
    """``ck_surface_figures`` (56 bytes)."""

    _fields_ = [
        ("all", ck_surface_side),
        ("from_depth", ctypes.c_int32),
        ("frames_fused", ctypes.c_uint32),
        ("views", ctypes.c_uint32),
        ("sides_completed", ctypes.c_uint32),
        ("elements_dropped", ctypes.c_uint32),
        ("voxel_size", ctypes.c_float),
        ("memory_bytes", ctypes.c_uint64),
    ]


class ck_surface_hint(ctypes.Structure):
    """``ck_surface_hint`` (40 bytes on 64-bit)."""

    _fields_ = [
        ("side", ctypes.c_int32),
        ("move_angle", ctypes.c_float),
        ("camera_azimuth", ctypes.c_float),
        ("target_azimuth", ctypes.c_float),
        ("camera_elevation", ctypes.c_float),
        ("target_elevation", ctypes.c_float),
        ("side_complete", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
        ("text", ctypes.c_char_p),
    ]


class ck_surface_view(ctypes.Structure):
    """``ck_surface_view`` (128 bytes on 64-bit; growable: struct_size first)."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("side", ctypes.c_int32),
        ("complete", ctypes.c_int32),
        ("candidates", ctypes.c_uint32),
        ("target_pose", ck_mat4),
        ("move_angle", ctypes.c_float),
        ("raise_angle", ctypes.c_float),
        ("camera_azimuth", ctypes.c_float),
        ("camera_elevation", ctypes.c_float),
        ("target_azimuth", ctypes.c_float),
        ("target_elevation", ctypes.c_float),
        ("distance", ctypes.c_float),
        ("gain", ctypes.c_float),
        ("gain_fraction", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
        ("text", ctypes.c_char_p),
    ]


class ck_surface_grid(ctypes.Structure):
    """``ck_surface_grid`` (32 bytes)."""

    _fields_ = [
        ("dims", ctypes.c_uint32 * 3),
        ("voxel_size", ctypes.c_float),
        ("origin", ctypes.c_float * 3),
        ("elements", ctypes.c_uint32),
    ]


#: ``ck_surface_element`` (48 bytes) as a NumPy structured dtype.
SURFACE_ELEMENT_DTYPE = np.dtype([
    ("position", np.float32, (3,)), ("normal", np.float32, (3,)), ("views", np.uint32),
    ("spread_deg", np.float32), ("best_incidence_deg", np.float32), ("best_px_per_cm", np.float32),
    ("color", np.uint8, (3,)), ("flags", np.uint8), ("side", np.int32),
])
if SURFACE_ELEMENT_DTYPE.itemsize != 48:
    raise ImportError("capturekit: the ck_surface_element dtype is not 48 bytes")


#: Sizes stated in the header comments; checked at import.
STRUCT_SIZES = {
    ck_vec3: 12,
    ck_quat: 16,
    ck_mat4: 64,
    ck_intrinsics: 24,
    ck_ray: 24,
    ck_box: 36,
    ck_hit: 24,
    ck_fit_options: 20,
    ck_depth_info: 32,
    ck_scheduler_options: 120,
    ck_guidance: 48,
    ck_coverage_options: 44,
    ck_face_coverage: 40,
    ck_coverage_summary: 32,
    ck_coverage_hint: 32,
    ck_surface_options: 44,
    ck_surface_side: 24,
    ck_surface_figures: 56,
    ck_surface_grid: 32,
}
for _cls, _size in STRUCT_SIZES.items():
    if ctypes.sizeof(_cls) != _size:  # not `assert`: must hold under python -O too
        raise ImportError(f"capturekit: sizeof({_cls.__name__}) is {ctypes.sizeof(_cls)}, the header says {_size}")
#: Sizes of the structs holding pointers, on 64-bit platforms (header comments and LP64 layout).
STRUCT_SIZES_64 = {
    ck_event: 32,
    ck_image: 32,
    ck_depth_map: 32,
    ck_scheduler_frame: 184,
    ck_dataset_options: 120,
    ck_frame_desc: 200,
    ck_session_options: 72,
    ck_session_frame: 272,
    ck_session_result: 144,
    ck_dataset_frame_info: 128,
    ck_scan_info: 40,
    ck_scan_frame_info: 112,
    ck_surface_hint: 40,
    ck_surface_view: 128,
}
if ctypes.sizeof(ctypes.c_void_p) == 8:
    for _cls, _size in STRUCT_SIZES_64.items():
        if ctypes.sizeof(_cls) != _size:
            raise ImportError(f"capturekit: sizeof({_cls.__name__}) is {ctypes.sizeof(_cls)}, the header says {_size}")
if ctypes.sizeof(ctypes.c_size_t) != np.dtype(np.uintp).itemsize:
    raise ImportError("capturekit: size_t and numpy.uintp differ in size on this platform")

# ------------------------------------------------------------------------------------------
# Conversions between NumPy / Python values and the structures
# ------------------------------------------------------------------------------------------


def vec3(v) -> ck_vec3:
    """A ``ck_vec3`` from three numbers (already validated as floats by the caller)."""
    x, y, z = v
    return ck_vec3(x, y, z)


def vec3_to_array(v: ck_vec3) -> np.ndarray:
    """A float32 array (3,) from a ``ck_vec3``."""
    return np.array((v.x, v.y, v.z), dtype=np.float32)


def quat(q) -> ck_quat:
    """A ``ck_quat`` from (x, y, z, w)."""
    x, y, z, w = q
    return ck_quat(x, y, z, w)


def quat_to_array(q: ck_quat) -> np.ndarray:
    """A float32 array (4,) ``(x, y, z, w)`` from a ``ck_quat``."""
    return np.array((q.x, q.y, q.z, q.w), dtype=np.float32)


_F32 = np.dtype(np.float32)


def mat4_from_array(matrix: np.ndarray) -> ck_mat4:
    """A column-major ``ck_mat4`` from a (4, 4) real array indexed ``[row, column]``.

    ``m[c * 4 + r] = matrix[r, c]``: the transpose's C-order bytes are the column-major storage
    (a float32 array is copied once, straight into the struct's bytes).
    """
    if matrix.dtype is _F32:
        return ck_mat4.from_buffer_copy(matrix.T.copy())
    return ck_mat4.from_buffer_copy(np.ascontiguousarray(matrix.T, dtype=np.float32))


def mat4_to_array(m: ck_mat4) -> np.ndarray:
    """A new (4, 4) float32 array indexed ``[row, column]`` from a column-major ``ck_mat4`` (a
    transposed view of the struct's bytes, copied to C order: the result does not alias `m`)."""
    return np.ndarray((4, 4), _F32, m, 0, (4, 16)).copy()


def mat4_field(struct, name: str) -> np.ndarray:
    """A writeable (4, 4) float32 view, indexed ``[row, column]``, of the column-major ``ck_mat4``
    field `name` of `struct`: ``view[...] = matrix`` stores a (4, 4) real array in the field in
    one NumPy assignment (converted to float32). The view keeps `struct` alive."""
    offset = getattr(type(struct), name).offset
    return np.ndarray((4, 4), _F32, (ctypes.c_char * 64).from_buffer(struct, offset), 0, (4, 16))


def packed_rows(arr: np.ndarray) -> np.ndarray:
    """`arr` itself when its rows can be described by one (data, stride) pair -- every row's
    elements are contiguous and rows lie a positive multiple of the element size apart, at least
    a row's bytes (a C-contiguous array, a crop, a row-padded buffer) -- else a C-contiguous copy.
    The first axis is the rows; the other axes must be C-contiguous within a row."""
    flags = arr.flags
    if flags.c_contiguous and flags.aligned and arr.ndim >= 1:
        return arr  # the common case: one stride describes every row
    if arr.ndim < 1 or arr.size == 0 or not flags.aligned:
        return np.ascontiguousarray(arr)
    item = arr.dtype.itemsize
    expected = item
    for n, st in zip(reversed(arr.shape[1:]), reversed(arr.strides[1:])):
        if n > 1 and st != expected:
            return np.ascontiguousarray(arr)
        expected *= n
    row_bytes = expected
    stride = arr.strides[0]
    if arr.shape[0] > 1 and (stride < row_bytes or stride % item):
        return np.ascontiguousarray(arr)
    return arr


def row_stride(arr: np.ndarray) -> int:
    """The row stride in bytes of an array returned by :func:`packed_rows`; 0 (= tightly packed)
    when the rows are adjacent, or when there is at most one row (NumPy's stride of a length-1
    axis is arbitrary)."""
    if arr.ndim < 1 or arr.shape[0] <= 1 or arr.flags.c_contiguous:
        return 0
    return int(arr.strides[0])


def address(arr: np.ndarray) -> int:
    """The address of `arr`'s first element. A writeable C-contiguous array exports its buffer to
    ctypes directly (about ten times cheaper than ``arr.ctypes.data``, which builds a helper
    object per call); read-only, strided and empty arrays take ``arr.ctypes.data``."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))
    except (TypeError, ValueError, BufferError):
        return arr.ctypes.data


def image(arr: np.ndarray, image_format: int) -> ck_image:
    """A ``ck_image`` describing `arr` (an array from :func:`packed_rows`, shape (H, W) or
    (H, W, C)). The caller keeps `arr` alive while the struct is used."""
    return ck_image(address(arr), arr.shape[1], arr.shape[0], row_stride(arr), image_format, 0)


def depth_map(arr: np.ndarray, fmt: int) -> ck_depth_map:
    """A ``ck_depth_map`` describing the (H, W) array `arr` (from :func:`packed_rows`) of the
    ``ck_format`` `fmt`. The caller keeps `arr` alive while the struct is used."""
    return ck_depth_map(address(arr), arr.shape[1], arr.shape[0], row_stride(arr), fmt, 0)


# ------------------------------------------------------------------------------------------
# Argument types
# ------------------------------------------------------------------------------------------

_P = ctypes.POINTER
_f = ctypes.c_float
_i32 = ctypes.c_int32
_u32 = ctypes.c_uint32
_size = ctypes.c_size_t
_status = ctypes.c_int32

_OUT = "C_CONTIGUOUS,ALIGNED,WRITEABLE"
_IN = "C_CONTIGUOUS,ALIGNED"
#: float32 / int32 output arrays of any shape (the wrappers check the shapes).
F32_OUT = np.ctypeslib.ndpointer(np.float32, flags=_OUT)
I32_OUT = np.ctypeslib.ndpointer(np.int32, flags=_OUT)
#: One-element outputs standing for `float *`, `int32_t *`, `size_t *`.
F32_SCALAR_OUT = np.ctypeslib.ndpointer(np.float32, shape=(1,), flags=_OUT)
I32_SCALAR_OUT = np.ctypeslib.ndpointer(np.int32, shape=(1,), flags=_OUT)
SIZE_SCALAR_OUT = np.ctypeslib.ndpointer(np.uintp, shape=(1,), flags=_OUT)
#: `ck_vec3 corners_out[8]` as a (8, 3) float32 array.
CORNERS_OUT = np.ctypeslib.ndpointer(np.float32, shape=(8, 3), flags=_OUT)
#: `const ck_vec3 *points` as (N, 3) and `const float *pixels_uv` as (N, 2) float32 arrays.
F32_IN_2D = np.ctypeslib.ndpointer(np.float32, ndim=2, flags=_IN)
#: A 3x3 camera matrix as 9 float32 (``ck_intrinsics_from_matrix`` / ``_to_matrix``), and its layouts.
MATRIX9_IN = np.ctypeslib.ndpointer(np.float32, shape=(9,), flags=_IN)
MATRIX9_OUT = np.ctypeslib.ndpointer(np.float32, shape=(9,), flags=_OUT)
MATRIX_ROW_MAJOR, MATRIX_COLUMN_MAJOR = 0, 1
#: `uint32_t *dst` of any shape.
U32_OUT = np.ctypeslib.ndpointer(np.uint32, flags=_OUT)
#: `void *` sample buffers of any dtype and shape (the depth wrappers check dtype and size), byte
#: buffers, and the `uint32_t *`, `uint64_t *`, `double *` scalar outputs of the depth calls.
ANY_IN = np.ctypeslib.ndpointer(flags=_IN)
ANY_OUT = np.ctypeslib.ndpointer(flags=_OUT)
BYTES_IN = np.ctypeslib.ndpointer(np.uint8, ndim=1, flags=_IN)
BYTES_OUT = np.ctypeslib.ndpointer(np.uint8, ndim=1, flags=_OUT)
U32_SCALAR_OUT = np.ctypeslib.ndpointer(np.uint32, shape=(1,), flags=_OUT)
U64_SCALAR_OUT = np.ctypeslib.ndpointer(np.uint64, shape=(1,), flags=_OUT)
F64_SCALAR_OUT = np.ctypeslib.ndpointer(np.float64, shape=(1,), flags=_OUT)


def _decode(result, func, args):
    """errcheck for `const char *` results: library-owned static/thread-local text -> str."""
    return "" if result is None else result.decode("utf-8", "replace")


# (name, restype, argtypes); restype `_status` gets the status errcheck.
_PROTOTYPES = [
    # Status and version
    ("ck_status_string", ctypes.c_char_p, [_status]),
    ("ck_last_error_message", ctypes.c_char_p, []),
    ("ck_version_number", _u32, []),
    ("ck_version_string", ctypes.c_char_p, []),
    ("ck_free", None, [ctypes.c_void_p]),
    # Geometry: poses, intrinsics
    ("ck_pose_from_quat", _status, [_P(ck_mat4), ck_quat, ck_vec3]),
    ("ck_pose_to_quat", _status, [_P(ck_quat), _P(ck_vec3), _P(ck_mat4)]),
    ("ck_pose_inverse", _status, [_P(ck_mat4), _P(ck_mat4)]),
    ("ck_mat4_multiply", _status, [_P(ck_mat4), _P(ck_mat4), _P(ck_mat4)]),
    ("ck_mat4_transpose", _status, [_P(ck_mat4), _P(ck_mat4)]),
    ("ck_pose_opengl_to_opencv", _status, [_P(ck_mat4), _P(ck_mat4)]),
    ("ck_pose_opencv_to_opengl", _status, [_P(ck_mat4), _P(ck_mat4)]),
    ("ck_pose_look_at", _status, [_P(ck_mat4), ck_vec3, ck_vec3, ck_vec3]),
    ("ck_pose_yaw_pitch_roll", _status, [F32_SCALAR_OUT, F32_SCALAR_OUT, F32_SCALAR_OUT, _P(ck_mat4)]),
    ("ck_intrinsics_scale", _status, [_P(ck_intrinsics), _P(ck_intrinsics), _u32, _u32]),
    ("ck_intrinsics_from_matrix", _status, [_P(ck_intrinsics), MATRIX9_IN, _i32, _u32, _u32]),
    ("ck_intrinsics_to_matrix", _status, [MATRIX9_OUT, _P(ck_intrinsics), _i32]),
    ("ck_floor_from_points", _status, [F32_SCALAR_OUT, SIZE_SCALAR_OUT, F32_IN_2D, _size, _f]),
    ("ck_depth_to_points", _status, [F32_OUT, _size, SIZE_SCALAR_OUT, _P(ck_depth_map), _P(ck_intrinsics), _P(ck_mat4), _f]),
    # Oriented bounding box
    ("ck_box_init", _status, [_P(ck_box), ck_vec3, ck_vec3, _f]),
    ("ck_box_corners", _status, [CORNERS_OUT, _P(ck_box)]),
    ("ck_box_face", _status, [_P(ck_vec3), _P(ck_vec3), _P(ck_quat), _P(ck_box), _i32]),
    ("ck_box_contains", _status, [I32_SCALAR_OUT, _P(ck_box), ck_vec3]),
    ("ck_box_set_center", _status, [_P(ck_box), ck_vec3]),
    ("ck_box_translate", _status, [_P(ck_box), ck_vec3]),
    ("ck_box_translate_camera", _status, [_P(ck_box), _P(ck_mat4), _f, _f, _f]),
    ("ck_box_set_yaw", _status, [_P(ck_box), _f]),
    ("ck_box_face_camera", _status, [_P(ck_box), _P(ck_mat4)]),
    ("ck_box_rotate", _status, [_P(ck_box), _f]),
    ("ck_box_rotate_degrees", _status, [_P(ck_box), _f]),
    ("ck_box_set_size", _status, [_P(ck_box), ck_vec3]),
    ("ck_box_scale", _status, [_P(ck_box), ck_vec3]),
    ("ck_box_extend_face", _status, [_P(ck_box), _i32, _f]),
    ("ck_box_set_floor", _status, [_P(ck_box), _f]),
    ("ck_box_clear_floor", _status, [_P(ck_box)]),
    ("ck_box_place_on_floor", _status, [_P(ck_box), _f, _f]),
    ("ck_fit_options_init", _status, [_P(ck_fit_options)]),
    ("ck_fit_options_init_sized", _status, [_P(ck_fit_options), _size]),
    ("ck_box_fit_points", _status, [_P(ck_box), F32_IN_2D, _size, _P(ck_fit_options)]),
    # Raycast
    ("ck_ray_from_pixel", _status, [_P(ck_ray), _P(ck_mat4), _P(ck_intrinsics), _f, _f]),
    ("ck_ray_plane", _status, [_P(ck_hit), _P(ck_ray), ck_vec3, ck_vec3]),
    ("ck_ray_floor", _status, [_P(ck_hit), _P(ck_ray), _f]),
    ("ck_ray_box", _status, [_P(ck_hit), _P(ck_ray), _P(ck_box)]),
    ("ck_ray_box_pixels", _status,
     [I32_OUT, F32_OUT, F32_IN_2D, _size, _P(ck_mat4), _P(ck_intrinsics), _P(ck_box)]),
    ("ck_ray_box_grid", _status,
     [I32_OUT, F32_OUT, _size, SIZE_SCALAR_OUT, _P(ck_mat4), _P(ck_intrinsics), _P(ck_box)]),
    ("ck_box_place_at_pixel", _status, [_P(ck_hit), _P(ck_box), _P(ck_mat4), _P(ck_intrinsics), _f, _f]),
    # Pixel buffers
    ("ck_format_size", _size, [_i32]),
    # Depth: conversions, native frame codec, .ckdepth files
    ("ck_depth_convert", _status, [ANY_OUT, _i32, ANY_IN, _i32, _size]),
    ("ck_depth_codec_create", _status, [_P(ck_depth_codec_p), _i32]),
    ("ck_depth_codec_free", None, [ck_depth_codec_p]),
    ("ck_depth_encode_bound", _size, [_u32, _u32, _i32]),
    ("ck_depth_encode", _status, [BYTES_OUT, _size, SIZE_SCALAR_OUT, ck_depth_codec_p, _P(ck_depth_map)]),
    ("ck_depth_frame_info", _status, [I32_SCALAR_OUT, U32_SCALAR_OUT, U32_SCALAR_OUT, BYTES_IN, _size]),
    ("ck_depth_decode", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, ck_depth_codec_p, BYTES_IN, _size, _i32]),
    ("ck_depth_writer_open", _status, [_P(ck_depth_writer_p), ctypes.c_char_p, _u32, _u32, _i32, _i32, _u32]),
    ("ck_depth_writer_append", _status, [ck_depth_writer_p, _P(ck_depth_map), ctypes.c_double]),
    ("ck_depth_writer_flush", _status, [ck_depth_writer_p]),
    ("ck_depth_writer_frame_count", _status, [U64_SCALAR_OUT, ck_depth_writer_p]),
    ("ck_depth_writer_close", _status, [ck_depth_writer_p]),
    ("ck_depth_reader_open", _status, [_P(ck_depth_reader_p), ctypes.c_char_p]),
    ("ck_depth_reader_info", _status, [_P(ck_depth_info), ck_depth_reader_p]),
    ("ck_depth_reader_read", _status,
     [ANY_OUT, _size, SIZE_SCALAR_OUT, F64_SCALAR_OUT, ck_depth_reader_p, ctypes.c_uint64, _i32]),
    ("ck_depth_reader_close", _status, [ck_depth_reader_p]),
    # MultiScan-compatible zlib streams
    ("ck_zstream_writer_open", _status, [_P(ck_zstream_writer_p), ctypes.c_char_p, _u32, _u32, _i32, _i32, _u32]),
    ("ck_zstream_writer_append", _status, [ck_zstream_writer_p, _P(ck_depth_map)]),
    ("ck_zstream_writer_frame_count", _status, [U64_SCALAR_OUT, ck_zstream_writer_p]),
    ("ck_zstream_writer_close", _status, [ck_zstream_writer_p]),
    ("ck_zstream_reader_open", _status, [_P(ck_zstream_reader_p), ctypes.c_char_p, _u32, _u32, _i32]),
    ("ck_zstream_reader_frame_count", _status, [U64_SCALAR_OUT, ck_zstream_reader_p]),
    ("ck_zstream_reader_next", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, ck_zstream_reader_p, _i32]),
    ("ck_zstream_reader_read", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, ck_zstream_reader_p, ctypes.c_uint64, _i32]),
    ("ck_zstream_reader_close", _status, [ck_zstream_reader_p]),
    # Transcoding
    ("ck_transcode_zstream_to_ckdepth", _status,
     [U64_SCALAR_OUT, ctypes.c_char_p, ctypes.c_char_p, _u32, _u32, _i32, ctypes.c_void_p, _size, _u32]),
    ("ck_transcode_ckdepth_to_zstream", _status, [U64_SCALAR_OUT, ctypes.c_char_p, ctypes.c_char_p, _i32, _u32]),
    # Synthetic scene
    ("ck_scene_create", _status, [_P(ck_scene_p), ctypes.c_uint64]),
    ("ck_scene_free", None, [ck_scene_p]),
    ("ck_scene_target", _status, [_P(ck_box), ck_scene_p]),
    ("ck_scene_render_depth", _status,
     [ctypes.c_void_p, ctypes.c_void_p, _size, SIZE_SCALAR_OUT, ck_scene_p, _P(ck_mat4), _P(ck_intrinsics),
      ctypes.c_uint64]),
    ("ck_scene_render_rgb", _status, [ctypes.c_void_p, _size, SIZE_SCALAR_OUT, ck_scene_p, _P(ck_mat4), _P(ck_intrinsics)]),
    # PNG (8-bit gray/RGB/RGBA, 16-bit gray)
    ("ck_png_encode_bound", _size, [_u32, _u32, _i32]),
    ("ck_png_encode", _status, [BYTES_OUT, _size, SIZE_SCALAR_OUT, _P(ck_image), _i32]),
    ("ck_jpeg_encode_bound", _size, [_u32, _u32, _i32]),
    ("ck_jpeg_encode", _status, [BYTES_OUT, _size, SIZE_SCALAR_OUT, _P(ck_image), _i32]),
    ("ck_png_write", _status, [ctypes.c_char_p, _P(ck_image), _i32, _u32]),
    ("ck_png_info", _status, [U32_SCALAR_OUT, U32_SCALAR_OUT, I32_SCALAR_OUT, BYTES_IN, _size]),
    ("ck_png_decode", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, BYTES_IN, _size]),
    ("ck_png_read_info", _status, [U32_SCALAR_OUT, U32_SCALAR_OUT, I32_SCALAR_OUT, ctypes.c_char_p]),
    ("ck_png_read", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, ctypes.c_char_p]),
    # Dataset and session
    ("ck_dataset_options_init", _status, [_P(ck_dataset_options)]),
    ("ck_dataset_options_init_sized", _status, [_P(ck_dataset_options), _size]),
    ("ck_dataset_create", _status, [_P(ck_dataset_p), ctypes.c_char_p, _P(ck_dataset_options)]),
    ("ck_dataset_open", _status, [_P(ck_dataset_p), ctypes.c_char_p]),
    ("ck_dataset_open_readonly", _status, [_P(ck_dataset_p), ctypes.c_char_p]),
    ("ck_dataset_frame", _status, [_P(ck_dataset_frame_info), ck_dataset_p, ctypes.c_uint64]),
    # dst is a plain pointer: NULL with capacity 0 asks the map's size (CK_E_BUFFER_TOO_SMALL).
    ("ck_dataset_frame_depth", _status, [ctypes.c_void_p, _size, SIZE_SCALAR_OUT, U32_SCALAR_OUT, U32_SCALAR_OUT,
                                         ck_dataset_p, ctypes.c_uint64, _i32]),
    ("ck_dataset_frame_confidence", _status, [ctypes.c_void_p, _size, SIZE_SCALAR_OUT, U32_SCALAR_OUT, U32_SCALAR_OUT,
                                              ck_dataset_p, ctypes.c_uint64]),
    # Scan reader (ck_scan.h)
    ("ck_scan_open", _status, [_P(ck_scan_p), ctypes.c_char_p]),
    ("ck_scan_describe", _status, [_P(ck_scan_info), ck_scan_p]),
    ("ck_scan_frame", _status, [_P(ck_scan_frame_info), ck_scan_p, ctypes.c_uint64]),
    ("ck_scan_depth", _status, [ANY_OUT, _size, SIZE_SCALAR_OUT, ck_scan_p, ctypes.c_uint64, _i32]),
    ("ck_scan_confidence", _status, [BYTES_OUT, _size, SIZE_SCALAR_OUT, ck_scan_p, ctypes.c_uint64]),
    ("ck_scan_close", _status, [ck_scan_p]),
    ("ck_dataset_frame_path", _status, [np.ctypeslib.ndpointer(np.uint8, ndim=1, flags=_OUT), _size, SIZE_SCALAR_OUT,
                                        ck_dataset_p, ctypes.c_uint64, _i32]),
    ("ck_frame_desc_init", _status, [_P(ck_frame_desc)]),
    ("ck_frame_desc_init_sized", _status, [_P(ck_frame_desc), _size]),
    ("ck_dataset_next_image_path", _status, [np.ctypeslib.ndpointer(np.uint8, ndim=1, flags=_OUT), _size, SIZE_SCALAR_OUT, ck_dataset_p, ctypes.c_char_p]),
    ("ck_dataset_add_frame", _status, [U64_SCALAR_OUT, ck_dataset_p, _P(ck_frame_desc)]),
    ("ck_dataset_flush", _status, [ck_dataset_p]),
    ("ck_dataset_remove_frame", _status, [ck_dataset_p, ctypes.c_uint64]),
    ("ck_dataset_frame_count", _status, [U64_SCALAR_OUT, ck_dataset_p]),
    ("ck_dataset_set_box", _status, [ck_dataset_p, _P(ck_box)]),
    ("ck_dataset_begin_pass", _status, [U32_SCALAR_OUT, ck_dataset_p, _P(ck_box)]),
    ("ck_dataset_stream_frame", _status,
     [ck_dataset_p, ctypes.c_double, _P(ck_mat4), _P(ck_intrinsics), _P(ck_depth_map), _P(ck_depth_map)]),
    ("ck_dataset_log_event", _status, [ck_dataset_p, _P(ck_event)]),
    ("ck_dataset_finalize", _status, [ck_dataset_p, _u32, ctypes.c_char_p]),
    ("ck_dataset_cancel", _status, [ck_dataset_p]),
    ("ck_dataset_close", _status, [ck_dataset_p]),
    ("ck_box_read", _status, [_P(ck_box), ctypes.c_char_p, _u32]),
    ("ck_dataset_export_colmap", _status, [ctypes.c_char_p, ctypes.c_char_p]),
    ("ck_session_options_init", _status, [_P(ck_session_options), _i32]),
    ("ck_session_options_init_sized", _status, [_P(ck_session_options), _size, _i32]),
    ("ck_session_frame_init", _status, [_P(ck_session_frame)]),
    ("ck_session_frame_init_sized", _status, [_P(ck_session_frame), _size]),
    ("ck_session_create", _status, [_P(ck_session_p), ctypes.c_char_p, _P(ck_session_options), _P(ck_box)]),
    ("ck_session_resume", _status, [_P(ck_session_p), ctypes.c_char_p, _P(ck_session_options)]),
    ("ck_session_set_box", _status, [ck_session_p, _P(ck_box)]),
    ("ck_session_process", _status, [_P(ck_session_result), ck_session_p, _P(ck_session_frame)]),
    ("ck_session_flush", _status, [ck_session_p]),
    ("ck_session_next_event", _status, [_P(ck_event), ck_session_p]),
    ("ck_session_coverage", _status, [_P(ck_coverage_p), ck_session_p]),
    ("ck_session_begin_pass", _status, [U32_SCALAR_OUT, ck_session_p, _P(ck_box)]),
    ("ck_session_dataset", _status, [_P(ck_dataset_p), ck_session_p]),
    ("ck_session_finish", _status, [ck_session_p, _u32, ctypes.c_char_p]),
    ("ck_session_close", _status, [ck_session_p]),
    # Guidance: scheduler, coverage, events, sharpness
    ("ck_event_string", ctypes.c_char_p, [_i32]),
    ("ck_guide_flag_name", ctypes.c_char_p, [_u32]),
    ("ck_scheduler_options_init", _status, [_P(ck_scheduler_options)]),
    ("ck_scheduler_options_init_sized", _status, [_P(ck_scheduler_options), _size]),
    ("ck_scheduler_options_preset", _status, [_P(ck_scheduler_options), _i32]),
    ("ck_scheduler_options_preset_sized", _status, [_P(ck_scheduler_options), _size, _i32]),
    ("ck_scheduler_create", _status, [_P(ck_scheduler_p), _P(ck_scheduler_options)]),
    ("ck_scheduler_free", None, [ck_scheduler_p]),
    ("ck_scheduler_frame_init", _status, [_P(ck_scheduler_frame)]),
    ("ck_scheduler_frame_init_sized", _status, [_P(ck_scheduler_frame), _size]),
    ("ck_scheduler_update", _status, [_P(ck_guidance), ck_scheduler_p, _P(ck_scheduler_frame)]),
    ("ck_scheduler_next_event", _status, [_P(ck_event), ck_scheduler_p]),
    ("ck_scheduler_reset", _status, [ck_scheduler_p]),
    ("ck_coverage_options_init", _status, [_P(ck_coverage_options)]),
    ("ck_coverage_options_init_sized", _status, [_P(ck_coverage_options), _size]),
    ("ck_coverage_create", _status, [_P(ck_coverage_p), _P(ck_box), _P(ck_coverage_options)]),
    ("ck_coverage_free", None, [ck_coverage_p]),
    ("ck_coverage_add_view", _status, [I32_SCALAR_OUT, ck_coverage_p, _P(ck_mat4), _P(ck_intrinsics), ctypes.c_double]),
    ("ck_coverage_set_box", _status, [ck_coverage_p, _P(ck_box)]),
    ("ck_coverage_reset", _status, [ck_coverage_p]),
    ("ck_coverage_face", _status, [_P(ck_face_coverage), ck_coverage_p, _i32]),
    ("ck_coverage_summarize", _status, [_P(ck_coverage_summary), ck_coverage_p]),
    ("ck_coverage_cells", _status, [U32_OUT, _size, SIZE_SCALAR_OUT, ck_coverage_p]),
    ("ck_coverage_dial", _status, [U32_OUT, _size, SIZE_SCALAR_OUT, ck_coverage_p]),
    ("ck_coverage_suggest", _status, [_P(ck_coverage_hint), ck_coverage_p, _P(ck_mat4)]),
    ("ck_coverage_next_event", _status, [_P(ck_event), ck_coverage_p]),
    ("ck_sharpness_score", _status, [F32_SCALAR_OUT, _P(ck_image)]),
    # Surface coverage (ck_surface.h)
    ("ck_surface_options_init", _status, [_P(ck_surface_options)]),
    ("ck_surface_options_init_sized", _status, [_P(ck_surface_options), _size]),
    ("ck_surface_create", _status, [_P(ck_surface_p), _P(ck_box), _P(ck_surface_options)]),
    ("ck_surface_free", None, [ck_surface_p]),
    ("ck_surface_fuse", _status, [ck_surface_p, _P(ck_depth_map), _P(ck_depth_map), _P(ck_intrinsics), _P(ck_mat4),
                                  ctypes.c_double]),
    ("ck_surface_add_view", _status, [U32_SCALAR_OUT, ck_surface_p, _P(ck_mat4), _P(ck_intrinsics), _P(ck_image),
                                      ctypes.c_double]),
    ("ck_surface_set_box", _status, [ck_surface_p, _P(ck_box)]),
    ("ck_surface_reset", _status, [ck_surface_p]),
    ("ck_surface_summarize", _status, [_P(ck_surface_figures), ck_surface_p]),
    ("ck_surface_side_figures", _status, [_P(ck_surface_side), ck_surface_p, _i32]),
    ("ck_surface_suggest", _status, [_P(ck_surface_hint), ck_surface_p, _P(ck_mat4)]),
    ("ck_surface_next_view", _status, [_P(ck_surface_view), ck_surface_p, _P(ck_mat4), _P(ck_intrinsics)]),
    ("ck_surface_next_event", _status, [_P(ck_event), ck_surface_p]),
    ("ck_surface_grid_info", _status, [_P(ck_surface_grid), ck_surface_p]),
    ("ck_surface_voxels", _status, [BYTES_OUT, _size, SIZE_SCALAR_OUT, ck_surface_p]),
    ("ck_surface_elements", _status, [ctypes.c_void_p, _size, SIZE_SCALAR_OUT, ck_surface_p]),
    ("ck_surface_export_ply", _status, [ck_surface_p, ctypes.c_char_p, _i32, _u32]),
    ("ck_session_surface", _status, [_P(ck_surface_p), ck_session_p]),
    ("ck_dataset_set_surface", _status, [ck_dataset_p, ck_surface_p]),
]

#: Names of every declared C function (the whole header).
FUNCTION_NAMES = tuple(name for name, _, _ in _PROTOTYPES)


def _declare(cdll: ctypes.CDLL) -> None:
    """Sets argtypes, restype and errcheck of every header function on `cdll`."""
    def check_status(result, func, args):
        # Runs on the calling thread right after the call: the thread-local message is this call's.
        # (ck_last_error_message is declared below with the str-decoding errcheck.)
        if result < 0:
            raise error_for_status(result, cdll.ck_last_error_message())
        return result

    for name, restype, argtypes in _PROTOTYPES:
        try:
            func = getattr(cdll, name)
        except AttributeError:
            raise ImportError(f"capturekit: {cdll._name} does not export {name}") from None
        func.argtypes = argtypes
        func.restype = restype
        if restype is _status:
            func.errcheck = check_status
        elif restype is ctypes.c_char_p:
            func.errcheck = _decode
        if any(isinstance(a, type) and issubclass(a, np.ctypeslib._ndptr) for a in argtypes):
            setattr(cdll, name, _interruptible(func))


def _interruptible(func):
    """`func` with Ctrl-C kept as KeyboardInterrupt. ndpointer converts its argument in Python
    code, where the interpreter runs signal handlers; ctypes turns any exception raised while
    converting into ``ArgumentError("argument N: KeyboardInterrupt: ")``, so a Ctrl-C landing
    there would reach the caller as an argument error (and a CLI would report a failure instead
    of an interruption). The C function has not been called when that happens."""
    def call(*args):
        try:
            return func(*args)
        except ctypes.ArgumentError as e:
            if str(e).partition(": ")[2].startswith("KeyboardInterrupt"):
                raise KeyboardInterrupt from None
            raise
    call.__name__ = call.__qualname__ = func.__name__
    call.__wrapped__ = func
    return call


# ------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------


def _package_library_path() -> str:
    """The library copy shipped inside the package (wheels built by `make python-wheel`)."""
    return os.path.join(_PACKAGE_DIR, LIBRARY_SONAME)


def _system_library():
    """The name the dynamic loader looks up on the system library path (ldconfig's cache,
    LD_LIBRARY_PATH): the SONAME, so an installed library of another ABI is never picked up."""
    return LIBRARY_SONAME


def _missing_dependency(path: str, exc: OSError):
    """The library `path` needs that the loader could not find (from dlopen's message), or None
    when `path` itself is what is missing or the failure is something else."""
    m = re.match(r"^(.*?): cannot open shared object file", str(exc))
    if m is None or "/" in m.group(1) or m.group(1) == os.path.basename(path):
        return None
    return m.group(1)


def _dependency_error(label: str, path: str, dependency: str, packaged: bool) -> LibraryNotFoundError:
    """One line: what is missing, and the advice for where the library came from."""
    if packaged:
        advice = ("the wheel carries it in capturekit.libs/, so this install is incomplete: "
                  "reinstall it (pip install --force-reinstall capturekit-<version>-<manylinux>.whl)")
    else:
        pkg = _DEPENDENCY_PACKAGES.get(dependency)
        advice = (f"install it: apt-get install {pkg}" if pkg else "install the package that provides it") + \
            " (or use the manylinux wheel, which carries it)"
    return LibraryNotFoundError(f"capturekit: {dependency} is missing, and {os.path.basename(path)} "
                                f"({label}) needs it; {advice}", name="capturekit")


def _open(environ=None) -> ctypes.CDLL:
    """Loads the library, trying in order:

    1. the file named by the ``CAPTUREKIT_LIBRARY`` environment variable,
    2. ``libcapturekit.so.<soversion>`` inside the package directory (a wheel's copy),
    3. the SONAME on the system library path (an installed library; see :func:`_system_library`).

    Raises :class:`LibraryNotFoundError` naming all three attempts when none loads, or, when a
    library is found but a library it needs is missing, one line naming that library and the
    advice (reinstall the wheel, or the Debian package to install). When the environment
    variable is set but its file does not load and a later place does, a ``RuntimeWarning`` says
    so (a mistyped path should not pass silently).
    """
    env = os.environ if environ is None else environ
    attempts = []

    def try_load(label, path, packaged=False):
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            dependency = _missing_dependency(path, exc)
            if dependency is not None:
                raise _dependency_error(label, path, dependency, packaged) from None
            attempts.append(f"{label}: {exc}")
            return None

    cdll = None
    env_path = env.get(ENV_VAR)
    if env_path:
        cdll = try_load(f"${ENV_VAR}={env_path!r}", env_path)
    else:
        attempts.append(f"${ENV_VAR}: not set")
    if cdll is None:
        package_path = _package_library_path()
        label = f"package copy {package_path!r}"
        if os.path.exists(package_path):
            cdll = try_load("the copy inside the package", package_path, packaged=True)
        else:
            attempts.append(f"{label}: no such file")
    if cdll is None:
        found = _system_library()
        label = "system library path"
        if found:
            cdll = try_load(f"{label} ({found})", found)
        else:
            attempts.append(f"{label}: not searched")
    if cdll is None:
        lines = "\n".join(f"  {i}. {a}" for i, a in enumerate(attempts, 1))
        raise LibraryNotFoundError(
            f"capturekit: could not load {LIBRARY_SONAME}; tried, in order:\n{lines}\n"
            f"Build it with `make lib` and set {ENV_VAR} to .build-dist/release/{LIBRARY_NAME}, "
            f"or install the library (make install) or the capturekit wheel.",
            name="capturekit",
        )
    if env_path and cdll._name != env_path:
        warnings.warn(f"capturekit: ${ENV_VAR} could not be loaded ({attempts[0]}); using {cdll._name}",
                      RuntimeWarning, stacklevel=3)
    return cdll


def _check_version(cdll: ctypes.CDLL) -> None:
    """Raises :class:`VersionMismatchError` unless the library's major version is EXPECTED_MAJOR (and,
    for major 0, its minor version is EXPECTED_MINOR)."""
    number = int(cdll.ck_version_number())
    minor = number // 100 % 100
    if number // 10000 == 0 == EXPECTED_MAJOR and minor != EXPECTED_MINOR:
        raise VersionMismatchError(
            f"capturekit: {cdll._name} is version {cdll.ck_version_string()} (ck_version_number() = {number}); "
            f"this binding needs 0.{EXPECTED_MINOR}.x (0.x minor releases may break the ABI)",
            name="capturekit",
        )
    if number // 10000 != EXPECTED_MAJOR:
        raise VersionMismatchError(
            f"capturekit: {cdll._name} is version {cdll.ck_version_string()} (ck_version_number() = {number}, "
            f"major {number // 10000}); this binding needs major version {EXPECTED_MAJOR}",
            name="capturekit",
        )


def _load(environ=None) -> ctypes.CDLL:
    """Opens the library, declares every function and checks the major version."""
    cdll = _open(environ)
    _declare(cdll)
    _check_version(cdll)
    return cdll


#: The loaded library with every header function declared. A library that does not load is one
#: ImportError whose message says why and what to do (the loader's frames and chain dropped).
try:
    lib = _load()
except ImportError as _exc:
    raise _exc.with_traceback(None) from None
#: Path (or name) the library was loaded from.
library_path = lib._name


# ------------------------------------------------------------------------------------------
# Per-call fast path
# ------------------------------------------------------------------------------------------
# The functions of `lib` raise through an errcheck callback and convert NumPy arguments through
# ndpointer: about 0.1 us and 1-3 us per call on top of a call that costs 0.2-0.5 us. Calls a rig
# makes per frame or per UI event use a second function object per C function instead, declared
# by fast() from the same prototype entry: the status is returned as an int for the caller to
# check inline (``if status < 0: fail(status)``), one-element NumPy outputs become the matching
# ctypes scalar (``ctypes.c_float()`` ... passed directly), other array arguments an address
# (:func:`address`), and struct pointers stay typed (a struct is passed as itself).

_FAST_SCALARS = {
    F32_SCALAR_OUT: _P(_f),
    I32_SCALAR_OUT: _P(_i32),
    U32_SCALAR_OUT: _P(_u32),
    U64_SCALAR_OUT: _P(ctypes.c_uint64),
    SIZE_SCALAR_OUT: _P(_size),
    F64_SCALAR_OUT: _P(ctypes.c_double),
}
_PROTOTYPE_OF = {name: (restype, argtypes) for name, restype, argtypes in _PROTOTYPES}
#: The ctypes scalars fast() functions take for `float *`, `int32_t *`, `uint32_t *`, `uint64_t *`
#: and `size_t *` outputs (read with ``.value``), so that other modules need no ctypes.
out_f32, out_i32, out_u32, out_u64, out_size = ctypes.c_float, ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint64, _size


def fast(name: str):
    """A separate function object for the status-returning C function `name`, declared from its
    prototype entry as described above (no errcheck: check ``status < 0`` and call :func:`fail`)."""
    restype, argtypes = _PROTOTYPE_OF[name]
    if restype is not _status:
        raise ValueError(f"{name} does not return a status")
    func = lib[name]
    func.argtypes = [_FAST_SCALARS.get(a, ctypes.c_void_p) if isinstance(a, type) and issubclass(a, np.ctypeslib._ndptr)
                     else a for a in argtypes]
    func.restype = _status
    return func


def defaults(init: str, struct_type, *args):
    """A new `struct_type` filled by the C function `init` + ``_sized`` (``ck_frame_desc_init``,
    ``ck_scheduler_options_preset`` ...) with this binding's layout size: the defaults of every
    field this binding knows (the unsized symbols fill only the struct's first-release layout)."""
    c = struct_type()
    getattr(lib, init + "_sized")(c, ctypes.sizeof(struct_type), *args)
    return c


def fail(status: int):
    """Raises the error of a negative status from a :func:`fast` function (call it right after
    the call, on the same thread: the message is thread-local)."""
    raise error_for_status(status, lib.ck_last_error_message())


# ------------------------------------------------------------------------------------------
# Per-frame hot path
# ------------------------------------------------------------------------------------------
# Decoding a depth frame is a per-frame call where converting arguments through ndpointer (about
# 3 µs per array, measured in benchmarks/bench_codec.py's per-call line) cost more than the
# library's own header parse. The two calls are declared a second time here, as separate function
# objects with raw pointer argument types; the wrappers below check what ndpointer checked (dtype,
# contiguity, writeability) before passing addresses, and raise like every other call.
_hot_frame_info = lib["ck_depth_frame_info"]
_hot_frame_info.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, _size]
_hot_decode = lib["ck_depth_decode"]
_hot_decode.argtypes = [ctypes.c_void_p, _size, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, _size, _i32]
for _hot in (_hot_frame_info, _hot_decode):
    _hot.restype = ctypes.c_int32
del _hot


def _hot_status(status: int) -> None:
    if status < 0:
        fail(status)


def _hot_bytes(src):
    """(pointer argument, size) of `src`: bytes as is (ctypes passes its buffer), else a 1-D
    C-contiguous uint8 array."""
    if type(src) is bytes:
        return src, len(src)
    if type(src) is not np.ndarray or src.dtype != np.uint8 or src.ndim != 1 or not src.flags.c_contiguous:
        raise TypeError("encoded frame must be bytes or a 1-D C-contiguous uint8 array")
    return src.ctypes.data, src.size


def depth_frame_header(src) -> tuple:
    """(kind, width, height) of an encoded frame (``ck_depth_frame_info``); `src` as in
    :func:`depth_decode_into`."""
    ptr, size = _hot_bytes(src)
    kind, width, height = ctypes.c_int32(), ctypes.c_uint32(), ctypes.c_uint32()
    _hot_status(_hot_frame_info(ctypes.byref(kind), ctypes.byref(width), ctypes.byref(height), ptr, size))
    return kind.value, width.value, height.value


def depth_decode_into(dst: np.ndarray, codec, src, sample_format: int) -> None:
    """``ck_depth_decode`` into `dst` (a writeable C-contiguous array; the caller checked its dtype
    and shape); `src` is bytes or a 1-D C-contiguous uint8 array."""
    if type(dst) is not np.ndarray or not dst.flags.c_contiguous or not dst.flags.writeable:
        raise TypeError("dst must be a writeable C-contiguous numpy array")
    ptr, size = _hot_bytes(src)
    out = ctypes.byref(ctypes.c_char.from_buffer(dst)) if dst.nbytes else dst.ctypes.data
    _hot_status(_hot_decode(out, dst.nbytes, None, codec, ptr, size, int(sample_format)))
