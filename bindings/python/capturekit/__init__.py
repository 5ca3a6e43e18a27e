"""CaptureKit for Python: a ctypes binding of ``libcapturekit.so``.

CaptureKit is the portable core of a guided 3D-capture rig. This package covers its whole C API
(``include/capturekit.h``): poses, intrinsics, the oriented box around the object and raycasts
(single and batched); guidance (capture scheduler, events, coverage, sharpness: modules
``scheduler``, ``events``, ``coverage``); depth (the
native codec and ``.ckdepth`` files, MultiScan streams, PNG and JPEG); datasets and capture
sessions; readers of MultiScan and Stray Scanner captures; the synthetic scene. The command line
is ``python -m capturekit`` (:mod:`capturekit.cli`). File formats: ``docs/FORMATS.md``.

Conventions (the library's, unchanged):

* World: right-handed, metres, +y up. Angles in radians unless a name says degrees.
* Poses: camera-to-world 4x4 NumPy arrays in ordinary ``M[row, column]`` orientation
  (translation in ``M[:3, 3]``), OpenGL/ARKit camera axes (looking down -z, +y up).
  :func:`opengl_to_opencv` converts to OpenCV/COLMAP axes. See :mod:`capturekit.geometry`.
* Pixels: (u, v) with (0, 0) at the image's top-left corner, v down; pixel (i, j) has its
  centre at (i + 0.5, j + 0.5).
* Quaternions: ``(x, y, z, w)``.

Errors: a failing call raises a :class:`CaptureKitError` subclass (``InvalidArgumentError``,
``StateError``, ``NotFoundError`` ...) whose message names the C function; a ray that misses
returns ``None``. The library is found through ``$CAPTUREKIT_LIBRARY``, then the copy inside
this package, then the system library path (see :mod:`capturekit._ffi`).

Example::

    import numpy as np, capturekit as ck
    box = ck.Box(center=(0, 0, -2), size=(0.5, 0.4, 0.6), floor=-0.2)
    k = ck.Intrinsics(fx=200, fy=200, cx=128, cy=96, width=256, height=192)
    hit = ck.ray_box(ck.ray_from_pixel(np.eye(4), k, 128, 96), box)
    faces, distances = ck.raycast_box_grid(np.eye(4), k, box)
"""

from . import _ffi
from .box import BOX_MAX_SIZE, BOX_MIN_SIZE, Box, FaceFrame, floor_from_points
from .errors import (
    BufferTooSmallError,
    CaptureKitError,
    CaptureKitIOError,
    CorruptError,
    InvalidArgumentError,
    LibraryNotFoundError,
    NoMemoryError,
    ExistsError,
    BusyError,
    NotFoundError,
    StateError,
    UnsupportedError,
    VersionMismatchError,
)
from .geometry import (
    Corner,
    Face,
    Hit,
    Intrinsics,
    Ray,
    mat4_multiply,
    mat4_transpose,
    opencv_to_opengl,
    opengl_to_opencv,
    look_at,
    pose_from_quat,
    pose_inverse,
    pose_to_quat,
    yaw_pitch_roll,
)
from .scene import Scene
from .raycast import ray_box, ray_floor, ray_from_pixel, ray_plane, raycast_box_grid, raycast_box_pixels
from . import images

#: Deprecated name of :mod:`capturekit.images` (0.2.0); removed at the next minor version.
png = images
from .images import PNG_MAX_DIMENSION, ImageFormat, PNGInfo, decode_png, encode_jpeg, encode_png, png_info, read_png, read_png_info, write_png
from . import depth
from .depth import DepthCodec, DepthFrame, DepthFrameInfo, DepthInfo, DepthKind, DepthReader, DepthWriter
from . import zstream
from .transcode import ckdepth_to_zstream, zstream_to_ckdepth
from .zstream import ZSTREAM_DEFAULT_LEVEL, ZStreamKind, ZStreamReader, ZStreamWriter
from . import events, scheduler, coverage
from .events import BLOCKING_OBJECT_CAPTURE, BLOCKING_ROOM_SCAN, Event, EventCode, Guide, event_string, guide_names
from .scheduler import Guidance, Preset, Scheduler, SchedulerOptions, SpeedBand, Tracking, TrackingReason, sharpness_score
from .coverage import Coverage, CoverageHint, CoverageOptions, CoverageSummary, FaceCoverage
from . import scan
from .scan import Scan, ScanFrame, ScanKind
from . import dataset
from .dataset import Dataset, DatasetFrame, DatasetOptions, ImageEncoding, export_colmap, LogLevel, QueueFull, WriteMode, depth_to_points
from . import session
from .session import Session, SessionResult
from . import surface
from .surface import Surface, SurfaceFigures, SurfaceGrid, SurfaceHint, SurfaceOptions, SurfaceSide, SurfaceView

#: Deprecated name of :class:`DatasetFrame` (0.2.0); removed at the next minor version.
DatasetFrameInfo = DatasetFrame
from .validation import Problem, ValidationResult, validate

#: Version of this binding (the C header's CK_VERSION_STRING it was written for).
from ._version import __version__
#: Library major version this binding requires (checked when the package is imported).
VERSION_MAJOR = _ffi.EXPECTED_MAJOR
#: Largest accepted absolute coordinate, metres (``CK_MAX_COORDINATE``).
MAX_COORDINATE = _ffi.CK_MAX_COORDINATE
#: Largest accepted image width or height, pixels (``CK_MAX_IMAGE_DIMENSION``).
MAX_IMAGE_DIMENSION = _ffi.CK_MAX_IMAGE_DIMENSION
#: Path (or name) the shared library was loaded from.
library_path = _ffi.library_path


def version() -> str:
    """The loaded library's version string, e.g. ``"0.2.0"`` (``ck_version_string``)."""
    return _ffi.lib.ck_version_string()


def version_number() -> int:
    """The loaded library's version as MAJOR*10000 + MINOR*100 + PATCH (``ck_version_number``)."""
    return int(_ffi.lib.ck_version_number())


def version_info() -> tuple:
    """The loaded library's version as a tuple ``(major, minor, patch)``."""
    n = version_number()
    return (n // 10000, n // 100 % 100, n % 100)


def status_string(status: int) -> str:
    """The library's static English name of a status code, e.g.
    ``"CK_E_INVALID_ARGUMENT: invalid argument"``; ``"unknown status"`` for unknown codes."""
    from ._util import as_int

    return _ffi.lib.ck_status_string(as_int(status, "status"))


def last_error_message() -> str:
    """The detail of the last failing library call on the calling thread (``""`` if none yet).

    Exceptions already carry this text in ``.message``; this is for diagnostics."""
    return _ffi.lib.ck_last_error_message()


__all__ = [
    "Scan",
    "ScanFrame",
    "ScanKind",
    "__version__",
    "VERSION_MAJOR",
    "MAX_COORDINATE",
    "MAX_IMAGE_DIMENSION",
    "BOX_MIN_SIZE",
    "BOX_MAX_SIZE",
    "library_path",
    "version",
    "version_number",
    "version_info",
    "status_string",
    "last_error_message",
    # errors
    "CaptureKitError",
    "InvalidArgumentError",
    "BufferTooSmallError",
    "CaptureKitIOError",
    "CorruptError",
    "StateError",
    "UnsupportedError",
    "NotFoundError",
    "NoMemoryError",
    "ExistsError",
    "BusyError",
    "LibraryNotFoundError",
    "VersionMismatchError",
    # geometry
    "Face",
    "Corner",
    "Intrinsics",
    "Ray",
    "Hit",
    "FaceFrame",
    "Box",
    "look_at",
    "pose_from_quat",
    "pose_to_quat",
    "pose_inverse",
    "mat4_multiply",
    "mat4_transpose",
    "opengl_to_opencv",
    "opencv_to_opengl",
    "yaw_pitch_roll",
    # raycast
    "ray_from_pixel",
    "ray_plane",
    "ray_floor",
    "ray_box",
    "raycast_box_pixels",
    "raycast_box_grid",
    # PNG (8-bit gray/RGB/RGBA, 16-bit gray depth in mm)
    "png",
    "PNG_MAX_DIMENSION",
    "ImageFormat",
    "PNGInfo",
    "encode_png",
    "encode_jpeg",
    "decode_png",
    "png_info",
    "write_png",
    "read_png",
    "read_png_info",
    # depth: native codec and .ckdepth files (capturekit.depth has convert() and frame_info())
    "depth",
    "DepthKind",
    "DepthFrameInfo",
    "DepthInfo",
    "DepthFrame",
    "DepthCodec",
    "DepthWriter",
    "DepthReader",
    # MultiScan-compatible raw-DEFLATE streams (<scan>.depth.zlib, <scan>.confidence.zlib)
    "zstream",
    "ZSTREAM_DEFAULT_LEVEL",
    "ZStreamKind",
    "ZStreamWriter",
    "ZStreamReader",
    # guided capture
    "Tracking",
    "TrackingReason",
    "SpeedBand",
    "Preset",
    "EventCode",
    "Guide",
    "Event",
    "Guidance",
    "SchedulerOptions",
    "Scheduler",
    "CoverageOptions",
    "FaceCoverage",
    "CoverageSummary",
    "CoverageHint",
    "Coverage",
    # surface coverage from depth
    "SurfaceOptions",
    "SurfaceSide",
    "SurfaceFigures",
    "SurfaceHint",
    "SurfaceGrid",
    "Surface",
    "SurfaceView",
    "event_string",
    "guide_names",
    "sharpness_score",
    # capture sessions and datasets, transcoding, the synthetic scene
    "Session",
    "SessionResult",
    "Dataset",
    "DatasetOptions",
    "DatasetFrame",
    "DatasetFrameInfo",
    "export_colmap",
    "WriteMode",
    "QueueFull",
    "ImageEncoding",
    "zstream_to_ckdepth",
    "ckdepth_to_zstream",
    "Scene",
    "depth_to_points",
    "floor_from_points",
    "LogLevel",
    "BLOCKING_OBJECT_CAPTURE",
    "BLOCKING_ROOM_SCAN",
    # what nerfstudio, instant-ngp or MultiScan would reject in a dataset (capturekit validate)
    "validate",
    "ValidationResult",
    "Problem",
]
