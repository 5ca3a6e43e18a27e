"""Dataset folders and the per-frame capture session (``ck_dataset.h``).

A :class:`Dataset` is a folder that nerfstudio, instant-ngp and MultiScan's tools open unchanged
(transforms.json, boundingbox.json, images/, depth/, MultiScan streams, events.jsonl), backed by a
crash-safe journal: every call that returns has made its effect durable, and
:meth:`Dataset.open` after a crash finds every frame whose :meth:`Dataset.add_frame` returned.

A :class:`Session` does everything per camera frame in one call (:meth:`Session.process`):
guidance, the capture decision, depth streams, the dataset, coverage and storage events.

Both own library handles: use them as context managers or call ``close()`` (idempotent); a
garbage-collected object is closed by a ``weakref.finalize`` safety net (a dataset or session
closed without finalising stays on disk, resumable). Example::

    import capturekit as ck
    with ck.Session("scan", box=box) as session:
        for t, pose, rgb, depth, conf in camera:
            r = session.process(t, pose, k_rgb, rgb=rgb, depth=depth, confidence=conf)
            for event in session.events():
                print(event.text)
        session.finish(zip=True)
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import as_float, as_int, as_mat4
from .box import Box
from .errors import BufferTooSmallError, NotFoundError
from .geometry import Intrinsics, _check_intrinsics
from .guidance import (
    _DEPTH_FORMATS,
    Coverage,
    CoverageOptions,
    Event,
    Guidance,
    Preset,
    SchedulerOptions,
    Tracking,
    _check_box,
    _Handle,
)
from .png import ImageFormat, read_png

__all__ = ["DatasetOptions", "Dataset", "SessionResult", "Session", "LogLevel", "FINALIZE_ZIP"]

_lib = _ffi.lib

#: ``CK_FINALIZE_ZIP``: also pack the folder into a zip.
FINALIZE_ZIP = 1


class LogLevel:
    """``ck_log_level`` values (``CK_LOG_LEVEL_*``)."""

    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


def _path(value, name: str) -> bytes:
    if isinstance(value, (str, os.PathLike)):
        return os.fsencode(value)
    if isinstance(value, bytes):
        return value
    raise TypeError(f"{name} must be a str or path, not {type(value).__name__}")


def _opt_str(value, name: str) -> Optional[bytes]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    return value.encode("utf-8")


@dataclass(frozen=True)
class DatasetFrameInfo:
    """One frame of a dataset (``ck_dataset_frame_info`` plus its paths)."""

    id: int
    pass_number: int
    timestamp: float
    pose: np.ndarray  #: camera-to-world (4, 4), OpenGL camera axes
    intrinsics: Intrinsics
    sharpness: Optional[float]
    owns_image: bool  #: the library wrote the image
    stream_index: Optional[int]  #: its frame in the MultiScan streams
    image_path: str  #: relative to the dataset
    depth_path: Optional[str]  #: the millimetre depth PNG, relative to the dataset


class WriteMode(enum.IntEnum):
    """Where a dataset encodes and writes frames (``ck_write_mode``)."""

    BACKGROUND = 0  #: a bounded queue and one background thread (default)
    SYNC = 1  #: on the caller's thread: every add is durable when it returns


class ImageEncoding(enum.IntEnum):
    """How a dataset stores images given as pixels (``ck_image_encoding``)."""

    PNG = 0  #: images/NNNNNN.png, lossless (default)
    JPEG = 1  #: images/NNNNNN.jpg through libjpeg-turbo at ``jpeg_quality``


class QueueFull(enum.IntEnum):
    """What a session does with a frame when the write queue is full (``ck_queue_full``)."""

    DROP = 0  #: drop it with an event (CAPTURE_DROPPED / STREAM_FRAME_DROPPED); default
    WAIT = 1  #: wait for room


@dataclass
class DatasetOptions:
    """Dataset options (``ck_dataset_options``); None strings = "not given" (see ck_dataset.h)."""

    depth_png_width: int = 0
    depth_png_height: int = 0
    zlib_level: int = 0
    png_level: int = 0
    #: The scan's start (seconds since 1970 UTC), its MultiScan scan id. None (default): the
    #: current time, read by this binding when the dataset or session is created (the C library
    #: never reads a clock and refuses to stream without a start time; pass 0.0 to leave it unset).
    start_time_unix: Optional[float] = None
    device_id: Optional[str] = None
    device_name: Optional[str] = None
    device_type: Optional[str] = None
    user_name: Optional[str] = None
    scene_description: Optional[str] = None
    scene_type: Optional[str] = None
    #: The host's colour video of the scan (MultiScan's ``<scan>.mp4``): encoding ("h264") and
    #: file extension ("mp4"), both or neither (see ck_dataset.h).
    color_encoding: Optional[str] = None
    color_file_extension: Optional[str] = None
    #: Where frames are encoded and written: :attr:`WriteMode.BACKGROUND` (default: a bounded
    #: queue and one background thread, adds return at once, durable after ``flush``) or
    #: :attr:`WriteMode.SYNC` (every add durable when it returns).
    write_mode: int = 0
    #: The background writer's queue bound in MiB (0 = 256).
    write_queue_mb: int = 0
    #: :attr:`ImageEncoding.PNG` (default) or :attr:`ImageEncoding.JPEG`; JPEG quality 1...100 (0 = 90).
    image_encoding: int = 0
    jpeg_quality: int = 0
    #: Downscaled copies of library images: a collection of 2, 4, 8 (images_2/, images_4/, images_8/).
    image_downscales: tuple = ()

    def _fill(self, c: "_ffi.ck_dataset_options", keep: list) -> None:
        c.depth_png_width = as_int(self.depth_png_width, "depth_png_width", 0, 2**32 - 1)
        c.depth_png_height = as_int(self.depth_png_height, "depth_png_height", 0, 2**32 - 1)
        c.zlib_level = as_int(self.zlib_level, "zlib_level")
        c.png_level = as_int(self.png_level, "png_level")
        start = self.start_time_unix
        if start is None:
            import time

            start = time.time()
        c.start_time_unix = as_float(start, "start_time_unix")
        c.write_mode = as_int(self.write_mode, "write_mode")
        c.write_queue_mb = as_int(self.write_queue_mb, "write_queue_mb", 0, 2**32 - 1)
        c.image_encoding = as_int(self.image_encoding, "image_encoding")
        c.jpeg_quality = as_int(self.jpeg_quality, "jpeg_quality")
        flags = 0
        for f in self.image_downscales:
            if f not in (2, 4, 8):
                raise ValueError(f"image_downscales holds 2, 4 and 8 only, not {f!r}")
            flags |= int(f)
        c.image_downscales = flags
        for name in ("device_id", "device_name", "device_type", "user_name", "scene_description", "scene_type",
                     "color_encoding", "color_file_extension"):
            b = _opt_str(getattr(self, name), name)
            keep.append(b)
            setattr(c, name, b)

    def _to_c(self, keep: list) -> "_ffi.ck_dataset_options":
        c = _ffi.ck_dataset_options()
        _lib.ck_dataset_options_init(c)
        self._fill(c, keep)
        return c


_FORMAT_CHANNELS = {1: int(ImageFormat.GRAY8), 3: int(ImageFormat.RGB8), 4: int(ImageFormat.RGBA8)}


def _image(pixels, intrinsics: Intrinsics, name: str):
    """(uint8 array with contiguous rows, its ``ck_image``) for an (H, W), (H, W, 1|3|4) uint8
    image; no copy when its rows are contiguous (C order, a crop, padded rows). The caller keeps
    the array alive while the struct is used."""
    arr = np.asarray(pixels)
    if arr.dtype != np.uint8:
        raise TypeError(f"{name} must be a uint8 array, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in _FORMAT_CHANNELS:
        raise ValueError(f"{name} must have shape (H, W), (H, W, 3) or (H, W, 4), got {np.asarray(pixels).shape}")
    if arr.shape[:2] != (intrinsics.height, intrinsics.width):
        raise ValueError(f"{name} is {arr.shape[1]}x{arr.shape[0]}, the intrinsics say {intrinsics.width}x{intrinsics.height}")
    arr = _ffi.packed_rows(arr)
    return arr, _ffi.image(arr, _FORMAT_CHANNELS[arr.shape[2]])


def _camera_image(nv12, bgra, video_range: bool, intrinsics: Intrinsics):
    """(arrays to keep alive, ``ck_image``, chroma pointer, chroma stride) for camera-native pixels:
    ``nv12 = (y, cbcr)`` with y (H, W) uint8 and cbcr (ceil(H/2), ceil(W/2), 2) or
    (ceil(H/2), 2*ceil(W/2)) uint8, or ``bgra`` (H, W, 4) uint8."""
    h, w = intrinsics.height, intrinsics.width
    if bgra is not None:
        arr = np.asarray(bgra)
        if arr.dtype != np.uint8 or arr.shape != (h, w, 4):
            raise ValueError(f"bgra must be a ({h}, {w}, 4) uint8 array, got {arr.dtype} {arr.shape}")
        arr = _ffi.packed_rows(arr)
        return [arr], _ffi.image(arr, int(ImageFormat.BGRA8)), None, 0
    try:
        y, cbcr = nv12
    except (TypeError, ValueError):
        raise TypeError("nv12 must be a (y, cbcr) pair of uint8 arrays") from None
    y, cbcr = np.asarray(y), np.asarray(cbcr)
    ch, cw = (h + 1) // 2, (w + 1) // 2
    if y.dtype != np.uint8 or y.shape != (h, w):
        raise ValueError(f"nv12 Y plane must be a ({h}, {w}) uint8 array, got {y.dtype} {y.shape}")
    if cbcr.dtype != np.uint8 or cbcr.shape not in ((ch, cw, 2), (ch, 2 * cw)):
        raise ValueError(f"nv12 CbCr plane must be ({ch}, {cw}, 2) or ({ch}, {2 * cw}) uint8, got {cbcr.dtype} {cbcr.shape}")
    y = _ffi.packed_rows(y)
    cbcr = _ffi.packed_rows(cbcr.reshape(ch, 2 * cw))
    fmt = ImageFormat.NV12_VIDEO if video_range else ImageFormat.NV12_FULL
    return [y, cbcr], _ffi.image(y, int(fmt)), cbcr.ctypes.data, _ffi.row_stride(cbcr)


def _depth(values, name: str, shape=None):
    """(array, its ``ck_depth_map``) for a 2-D depth map: float32 or float16 metres or uint16
    millimetres are passed as they are (no copy when the rows are contiguous); other floating
    dtypes (float64) are converted to float32."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f" and arr.dtype not in _DEPTH_FORMATS:
        arr = arr.astype(np.float32)
    fmt = _DEPTH_FORMATS.get(arr.dtype)
    if fmt is None:
        raise TypeError(f"{name} must be a floating-point (metres) or uint16 (millimetres) array, got dtype {arr.dtype}")
    if arr.ndim != 2 or (shape is not None and arr.shape != shape):
        raise ValueError(f"{name} must be a 2-D array{'' if shape is None else ' of shape ' + str(shape)}, got {arr.shape}")
    arr = _ffi.packed_rows(arr)
    return arr, _ffi.depth_map(arr, fmt)


def export_colmap(dataset_dir, out_dir) -> None:
    """Writes a finished dataset's poses and intrinsics as a COLMAP text model in ``out_dir``
    (``cameras.txt``, ``images.txt``, empty ``points3D.txt``; ``ck_dataset_export_colmap``): world-
    to-camera quaternions in OpenCV camera axes, image names relative to the dataset folder.

    Raises:
        NotFoundError: no transforms.json (finish the dataset first). ExistsError: a model file exists.
    """
    _lib.ck_dataset_export_colmap(_path(dataset_dir, "dataset_dir"), _path(out_dir, "out_dir"))


def depth_to_points(depth, intrinsics: Intrinsics, pose, max_depth: float = float("inf")) -> np.ndarray:
    """World points of a depth map's valid pixels, row by row (``ck_depth_to_points``): an (N, 3)
    float32 array.

    Args:
        depth: (h, w) z-depth (along the optical axis, as ARKit's sceneDepth): float32 / float16
            metres or uint16 millimetres; a pixel is valid when finite, > 0 and <= ``max_depth``.
        intrinsics: the depth map's :class:`Intrinsics` (its size; ``scale`` the image's).
        pose: camera-to-world (4, 4), OpenGL camera axes.
        max_depth: metres; inf = no limit.

    Raises:
        InvalidArgumentError: sizes that differ, invalid intrinsics or pose, max_depth <= 0 or NaN.
    """
    arr, dmap = _depth(depth, "depth")
    k = _check_intrinsics(intrinsics)
    m = as_mat4(pose, "pose")
    limit = as_float(max_depth, "max_depth")
    count = np.zeros(1, np.uintp)
    try:  # first the count (an empty buffer), then the points
        _lib.ck_depth_to_points(np.empty((0, 3), np.float32), 0, count, dmap, k, m, limit)
    except BufferTooSmallError:
        pass
    out = np.empty((int(count[0]), 3), np.float32)
    _lib.ck_depth_to_points(out, out.shape[0], count, dmap, k, m, limit)
    del arr
    return out


def _confidence(values, name: str, shape):
    """(array, its ``ck_depth_map``) for a uint8 confidence map of the given shape."""
    arr = np.asarray(values)
    if arr.dtype != np.uint8:
        raise TypeError(f"{name} must be a uint8 array, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    arr = _ffi.packed_rows(arr)
    return arr, _ffi.depth_map(arr, _ffi.CK_FORMAT_U8)


class Dataset(_Handle):
    """A dataset folder (``ck_dataset``). Create with ``Dataset(path)`` (the folder must be empty
    or missing) or :meth:`Dataset.open` to resume one.

    Raises:
        ExistsError: the folder is not empty (create; a :class:`~capturekit.StateError` subclass).
        NotFoundError: no dataset in the folder (open).
    """

    __slots__ = ("_directory", "_borrowed", "_owner")

    def __init__(self, directory, options: Optional[DatasetOptions] = None):
        keep: list = []
        if options is None:
            options = DatasetOptions()  # the C defaults, and the start time: now
        if not isinstance(options, DatasetOptions):
            raise TypeError(f"options must be DatasetOptions, not {type(options).__name__}")
        c_options = options._to_c(keep)
        handle = _ffi.ck_dataset_p()
        _lib.ck_dataset_create(handle, _path(directory, "directory"), c_options)
        self._directory = os.fsdecode(_path(directory, "directory"))
        self._borrowed = False
        self._owner = None
        self._adopt(handle, _lib.ck_dataset_close)

    @classmethod
    def open(cls, directory) -> "Dataset":
        """Reopens a dataset (after a crash, or to add more), replaying its journal."""
        return cls._opened(_lib.ck_dataset_open, directory)

    @classmethod
    def open_readonly(cls, directory) -> "Dataset":
        """Opens a finished or crashed dataset to read it (``ck_dataset_open_readonly``): nothing is
        repaired, written or deleted; writing methods raise StateError. Read it with
        :meth:`frame`, :meth:`frames`, :meth:`depth`."""
        return cls._opened(_lib.ck_dataset_open_readonly, directory)

    @classmethod
    def _opened(cls, open_fn, directory) -> "Dataset":
        """A dataset handle from ck_dataset_open or ck_dataset_open_readonly."""
        self = cls.__new__(cls)
        handle = _ffi.ck_dataset_p()
        open_fn(handle, _path(directory, "directory"))
        self._directory = os.fsdecode(_path(directory, "directory"))
        self._borrowed = False
        self._owner = None
        self._adopt(handle, _lib.ck_dataset_close)
        return self

    def frame_path(self, index: int, depth: bool = False) -> str:
        """The image (or depth PNG) path of the frame at ``index``, relative to the dataset."""
        i = as_int(index, "index", 0, 2**64 - 1)
        written = np.zeros(1, np.uintp)
        buf = np.zeros(4096, np.uint8)
        _lib.ck_dataset_frame_path(buf, buf.size, written, self._h(), i, 1 if depth else 0)
        return bytes(buf[: int(written[0]) - 1]).decode("utf-8")

    def frame(self, index: int) -> "DatasetFrameInfo":
        """The frame at ``index`` (0 ... frame_count - 1), in the order frames were added."""
        i = as_int(index, "index", 0, 2**64 - 1)
        c = _ffi.ck_dataset_frame_info()
        _lib.ck_dataset_frame(c, self._h(), i)
        return DatasetFrameInfo(
            id=int(c.id), pass_number=int(c.pass_), timestamp=float(c.timestamp), pose=_ffi.mat4_to_array(c.pose),
            intrinsics=Intrinsics._from_c(c.intrinsics), sharpness=None if c.sharpness < 0 else float(c.sharpness),
            owns_image=bool(c.owns_image), stream_index=None if c.stream_index < 0 else int(c.stream_index),
            image_path=self.frame_path(i), depth_path=self.frame_path(i, depth=True) if c.has_depth else None)

    def frames(self) -> List["DatasetFrameInfo"]:
        """Every frame, in the order they were added."""
        return [self.frame(i) for i in range(self.frame_count)]

    def _map(self, fn, index: int, dtype, *extra) -> Optional[np.ndarray]:
        """A frame's depth or confidence map through ``fn`` (size asked first), or None."""
        i = as_int(index, "index", 0, 2**64 - 1)
        _lib.ck_dataset_frame(_ffi.ck_dataset_frame_info(), self._h(), i)  # NotFoundError past the last frame
        written = np.zeros(1, np.uintp)
        w = np.zeros(1, np.uint32)
        h = np.zeros(1, np.uint32)
        try:
            fn(None, 0, written, w, h, self._h(), i, *extra)
        except BufferTooSmallError:
            pass
        except NotFoundError:
            return None
        out = np.empty((int(h[0]), int(w[0])), dtype)
        fn(out.ctypes.data, out.nbytes, written, w, h, self._h(), i, *extra)
        return out

    def depth(self, index: int, dtype=np.float32) -> Optional[np.ndarray]:
        """The frame's depth (``ck_dataset_frame_depth``), (h, w) of ``dtype`` (float32 / float16
        metres or uint16 millimetres; 0 = unknown): from its depth PNG, else from the MultiScan
        depth stream (a finalised dataset); None when it has none."""
        fmt = _DEPTH_FORMATS.get(np.dtype(dtype))
        if fmt is None:
            raise TypeError(f"dtype must be float32, float16 or uint16 (got {np.dtype(dtype)})")
        return self._map(_lib.ck_dataset_frame_depth, index, np.dtype(dtype), fmt)

    def confidence(self, index: int) -> Optional[np.ndarray]:
        """The frame's streamed confidence (``ck_dataset_frame_confidence``), (h, w) uint8 0..2, or
        None (not streamed, no confidence stream, or the dataset was never finalised)."""
        return self._map(_lib.ck_dataset_frame_confidence, index, np.uint8)

    @classmethod
    def _borrow(cls, handle: "_ffi.ck_dataset_p", owner: "Session") -> "Dataset":
        """A view of a session's dataset: it keeps the session alive, is never closed by this
        object, and raises ValueError once the session is closed (the handle is freed with it)."""
        self = cls.__new__(cls)
        self._directory = owner.directory
        self._borrowed = True
        self._owner = owner
        self._adopt(handle, lambda h: None)
        return self

    def _h(self):
        owner = self._owner
        if owner is not None and owner.closed:
            raise ValueError("capturekit.Dataset: the Session it belongs to is closed")
        return super()._h()

    @property
    def directory(self) -> str:
        """The dataset folder."""
        return self._directory

    def __len__(self) -> int:
        return self.frame_count

    @property
    def frame_count(self) -> int:
        """Number of frames currently in the dataset."""
        out = np.zeros(1, np.uint64)
        _lib.ck_dataset_frame_count(out, self._h())
        return int(out[0])

    def next_image_path(self, extension: str = ".png") -> str:
        """The relative path the next added frame's image gets (e.g. ``images/000012.png``)."""
        written = np.zeros(1, np.uintp)
        buf = np.zeros(64, np.uint8)
        _lib.ck_dataset_next_image_path(buf, buf.size, written, self._h(), _opt_str(extension, "extension"))
        return bytes(buf[: int(written[0]) - 1]).decode("utf-8")

    def add_frame(self, pose, intrinsics: Intrinsics, rgb=None, image_path: Optional[str] = None, depth=None,
                  sharpness: Optional[float] = None, timestamp: float = 0.0, *, nv12=None, bgra=None,
                  video_range: bool = False) -> int:
        """Adds a captured frame to the current pass; returns its id.

        Args:
            pose: camera-to-world (4, 4), OpenGL camera axes.
            intrinsics: the image's :class:`Intrinsics`.
            rgb: (H, W), (H, W, 3) or (H, W, 4) uint8 pixels: the library writes images/NNNNNN.png
                (rows may be padded: a crop is written without a copy).
            image_path: without ``rgb``: the caller's file, relative to the dataset (None = the
                name :meth:`next_image_path` gave for ".png"); it must exist.
            depth: optional (h, w) depth (0 = unknown): float32 / float16 metres or uint16
                millimetres as they are, float64 metres converted to float32.
            sharpness: optional score (instant-ngp's key).
            timestamp: seconds, caller's clock.
            nv12: camera-native pixels instead of ``rgb``: ``(y, cbcr)``, the (H, W) Y plane and the
                (ceil(H/2), ceil(W/2), 2) interleaved CbCr plane (ARKit's capturedImage), BT.601,
                full range (``video_range=True``: 16...235); converted to RGB off the caller's thread.
            bgra: camera-native (H, W, 4) B, G, R, A pixels instead of ``rgb``.

        Raises:
            NotFoundError: the caller's image is missing. InvalidArgumentError: a path escaping the
            folder. ExistsError: the file the library was to write exists.
        """
        k = _check_intrinsics(intrinsics)
        d = _ffi.ck_frame_desc()
        _lib.ck_frame_desc_init(d)
        d.timestamp = as_float(timestamp, "timestamp")
        d.pose = as_mat4(pose, "pose")
        d.intrinsics = k
        keep = []
        if sum(x is not None for x in (rgb, nv12, bgra, image_path)) > 1:
            raise ValueError("give one of rgb, nv12, bgra and image_path")
        if nv12 is not None or bgra is not None:
            arrays, d.image, chroma, chroma_stride = _camera_image(nv12, bgra, video_range, intrinsics)
            keep.extend(arrays)
            d.image_chroma = chroma
            d.image_chroma_stride = chroma_stride
        elif rgb is not None:
            px, d.image = _image(rgb, intrinsics, "rgb")
            keep.append(px)
        elif image_path is not None:
            d.image_path = _opt_str(image_path, "image_path")
        if depth is not None:
            dm, d.depth = _depth(depth, "depth")
            keep.append(dm)
        if sharpness is not None:
            d.sharpness = as_float(sharpness, "sharpness")
        out = np.zeros(1, np.uint64)
        _lib.ck_dataset_add_frame(out, self._h(), d)
        return int(out[0])

    def flush(self) -> None:
        """Waits until every queued frame is written and journaled (``ck_dataset_flush``): every
        frame added before survives a crash. Raises IOError for a failed background write (once)."""
        _lib.ck_dataset_flush(self._h())

    def remove_frame(self, frame_id: int) -> None:
        """Removes a frame (its files inside the dataset are deleted). NotFoundError if unknown."""
        _lib.ck_dataset_remove_frame(self._h(), as_int(frame_id, "frame_id", 0, 2**64 - 1))

    def set_box(self, box: Box) -> None:
        """Sets the box of the current pass (boundingbox.json is written at once)."""
        _lib.ck_dataset_set_box(self._h(), _check_box(box))

    def begin_pass(self, box: Box) -> int:
        """Starts a new capture pass with its own box; returns its number (the first is 0)."""
        out = np.zeros(1, np.uint32)
        _lib.ck_dataset_begin_pass(out, self._h(), _check_box(box))
        return int(out[0])

    def stream_frame(self, timestamp: float, pose, intrinsics: Intrinsics, depth=None, confidence=None) -> None:
        """Appends one frame to the MultiScan streams: an (h, w) depth map (float32 / float16
        metres or uint16 millimetres; float64 is converted to float32) and/or an (h, w) uint8
        confidence map (the first call fixes the size), and a camera-info line."""
        if depth is None and confidence is None:
            raise ValueError("depth and confidence are both None")
        dm, dmap = (None, None) if depth is None else _depth(depth, "depth")
        shape = dm.shape if dm is not None else np.asarray(confidence).shape
        cm, cmap = (None, None) if confidence is None else _confidence(confidence, "confidence", shape)
        _lib.ck_dataset_stream_frame(self._h(), as_float(timestamp, "timestamp"), as_mat4(pose, "pose"),
                                     _check_intrinsics(intrinsics), dmap, cmap)
        del dm, cm  # the arrays the maps point into lived until the call returned

    def log_event(self, code: int, timestamp: float, index: int = -1, value: float = 0.0) -> None:
        """Appends an event to events.jsonl."""
        e = _ffi.ck_event()
        e.code = as_int(code, "code")
        e.index = as_int(index, "index")
        e.timestamp = as_float(timestamp, "timestamp")
        e.value = as_float(value, "value")
        _lib.ck_dataset_log_event(self._h(), e)

    def finalize(self, zip: bool = False, zip_path=None) -> None:
        """Writes transforms.json, boundingbox.json and the scan metadata, ends the streams, and
        with ``zip`` packs the folder into ``zip_path`` (None = "<dir>.zip"; never overwrites)."""
        if zip_path is not None and not zip:
            raise ValueError("zip_path needs zip=True")
        _lib.ck_dataset_finalize(self._h(), FINALIZE_ZIP if zip else 0,
                                 None if zip_path is None else _path(zip_path, "zip_path"))

    def cancel(self) -> None:
        """Deletes every file and folder this dataset created and closes it."""
        if self._borrowed:
            raise ValueError("a session's dataset cannot be cancelled through the session")
        handle = self._h()
        self._finalizer.detach()
        try:
            _lib.ck_dataset_cancel(handle)
        finally:
            handle.value = None


@dataclass(frozen=True)
class SessionResult:
    """What the session did with a frame (``ck_session_result``).

    Attributes:
        captured: the frame was captured.
        pass_number: the current capture pass.
        frame_id: the captured frame's id (None when not captured, or captured without pixels:
            the frame is added once its image exists).
        guidance: the scheduler's :class:`Guidance`.
        coverage: overall coverage completion, 0..1.
        minutes_left: recording minutes left on the file system (inf: unknown yet).
        events: events queued by this frame.
        image_path: captured without pixels: the relative path the caller must write now ("" otherwise).
    """

    captured: bool
    pass_number: int
    frame_id: Optional[int]
    guidance: Guidance
    coverage: float
    minutes_left: float
    events: int
    image_path: str

    @classmethod
    def _from_c(cls, r: "_ffi.ck_session_result") -> "SessionResult":
        fid = None if (not r.captured or r.frame_id == 2**64 - 1) else int(r.frame_id)
        return cls(bool(r.captured), int(r.pass_), fid, Guidance._from_c(r.guidance), float(r.coverage),
                   float(r.minutes_left), int(r.events), r.image_path.decode("utf-8"))


class Session(_Handle):
    """A capture session writing a new dataset in ``directory`` (``ck_session``).

    Args:
        directory: the dataset folder (must be empty or missing).
        box: the :class:`Box` around the object (None: none until :meth:`set_box`).
        preset: a :class:`Preset` (scheduler and coverage defaults).
        scheduler: :class:`SchedulerOptions` (None = the preset's).
        coverage: :class:`CoverageOptions` (None = defaults).
        dataset: :class:`DatasetOptions` (None = defaults).
        storage_warning_minutes: STORAGE_LOW below this many minutes left.
        stream_depth: stream every frame's depth/confidence to the MultiScan files.
        queue_full: a :class:`QueueFull`: what a full write queue does to a capture or stream
            frame (DROP with an event, the default; or WAIT).
        log: optional ``log(level, message)`` callable; log_level: the minimum :class:`LogLevel`.
    """

    __slots__ = ("_directory", "_log_cb", "_keep", "_coverage_options", "_finished")

    def __init__(self, directory, box: Optional[Box] = None, *, preset: Preset = Preset.OBJECT_CAPTURE,
                 scheduler: Optional[SchedulerOptions] = None, coverage: Optional[CoverageOptions] = None,
                 dataset: Optional[DatasetOptions] = None, storage_warning_minutes: float = 10.0,
                 stream_depth: bool = True, log=None, log_level: int = LogLevel.INFO,
                 queue_full: int = QueueFull.DROP):
        o = self._options(preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                          queue_full)
        handle = _ffi.ck_session_p()
        _lib.ck_session_create(handle, _path(directory, "directory"), o, None if box is None else _check_box(box))
        self._directory = os.fsdecode(_path(directory, "directory"))
        self._adopt(handle, _lib.ck_session_close)

    @classmethod
    def resume(cls, directory, *, preset: Preset = Preset.OBJECT_CAPTURE, scheduler: Optional[SchedulerOptions] = None,
               coverage: Optional[CoverageOptions] = None, dataset: Optional[DatasetOptions] = None,
               storage_warning_minutes: float = 10.0, stream_depth: bool = True, log=None,
               log_level: int = LogLevel.INFO, queue_full: int = QueueFull.DROP) -> "Session":
        """Resumes the session of the dataset in ``directory`` after a crash or :meth:`close`
        (``ck_session_resume``): the dataset is reopened (the MultiScan streams cut after their
        last journaled frame and continued), the current pass's box taken, coverage rebuilt from
        that pass's captured frames and the scheduler from them and the last streamed poses, so
        the next :meth:`process` behaves as if there had been no crash. The options are those of
        the constructor; the dataset keeps its own journaled options (``dataset`` gives only
        ``write_mode`` and ``write_queue_mb``).

        Raises:
            NotFoundError: no dataset there.
            CorruptError: a damaged journal, or a journaled stream end that is not a frame boundary.
            UnsupportedError: ``stream_depth`` but the streams were written by 0.1.
        """
        self = cls.__new__(cls)
        o = self._options(preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                          queue_full)
        handle = _ffi.ck_session_p()
        _lib.ck_session_resume(handle, _path(directory, "directory"), o)
        self._directory = os.fsdecode(_path(directory, "directory"))
        self._adopt(handle, _lib.ck_session_close)
        return self

    def _options(self, preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                 queue_full):
        """The C options (the callback and nested structs kept alive on self)."""
        o = _ffi.ck_session_options()
        _lib.ck_session_options_init(o, as_int(preset, "preset"))
        keep: list = []
        if scheduler is not None:
            if not isinstance(scheduler, SchedulerOptions):
                raise TypeError("scheduler must be SchedulerOptions")
            c_sched = scheduler._to_c()
            keep.append(c_sched)
            o.scheduler = _ffi.pointer(c_sched)
        if coverage is not None:
            if not isinstance(coverage, CoverageOptions):
                raise TypeError("coverage must be CoverageOptions")
            c_cov = coverage._to_c()
            keep.append(c_cov)
            o.coverage = _ffi.pointer(c_cov)
        if dataset is None:
            dataset = DatasetOptions()  # its start time: now (see DatasetOptions.start_time_unix)
        if dataset is not None:
            if not isinstance(dataset, DatasetOptions):
                raise TypeError("dataset must be DatasetOptions")
            c_ds = dataset._to_c(keep)
            keep.append(c_ds)
            o.dataset = _ffi.pointer(c_ds)
        o.storage_warning_minutes = as_float(storage_warning_minutes, "storage_warning_minutes")
        o.stream_depth = 1 if stream_depth else 0
        o.log_level = as_int(log_level, "log_level")
        o.queue_full = as_int(queue_full, "queue_full")
        cb = None
        if log is not None:
            if not callable(log):
                raise TypeError("log must be callable")

            def _log(user, level, message, _log=log):
                try:
                    _log(int(level), message.decode("utf-8", "replace") if message else "")
                except Exception:  # an exception must not cross the C boundary
                    pass

            cb = _ffi.ck_log_fn(_log)
            o.log = cb
        self._log_cb = cb
        self._keep = keep
        self._coverage_options = coverage if coverage is not None else CoverageOptions()
        self._finished = False
        return o

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def dataset(self) -> Dataset:
        """The session's dataset (borrowed: valid while the session is open)."""
        out = _ffi.ck_dataset_p()
        _lib.ck_session_dataset(out, self._h())
        return Dataset._borrow(out, self)

    @property
    def coverage(self) -> Coverage:
        """The session's coverage, a read-only :class:`Coverage` view (faces, summary, cells,
        dial, hint; ``ck_session_coverage``): valid while the session is open.

        Raises:
            StateError: no box yet (:meth:`set_box`).
        """
        out = _ffi.ck_coverage_p()
        _lib.ck_session_coverage(out, self._h())
        return Coverage._borrow(out, self, self._coverage_options)

    def set_box(self, box: Box) -> None:
        """Sets or edits the box (coverage re-bound, counts kept; the pass box updated)."""
        _lib.ck_session_set_box(self._h(), _check_box(box))

    def begin_pass(self, box: Box) -> int:
        """Starts a new capture pass with its own box (the object turned over): coverage starts
        again for it and the scheduler starts over (``ck_session_begin_pass``); returns the pass."""
        out = np.zeros(1, np.uint32)
        _lib.ck_session_begin_pass(out, self._h(), _check_box(box))
        return int(out[0])

    def process(self, timestamp: float, pose, intrinsics: Intrinsics, *, tracking: Tracking = Tracking.NORMAL,
                rgb=None, depth=None, confidence=None, depth_intrinsics: Optional[Intrinsics] = None,
                sharpness: Optional[float] = None, tracking_reason: int = 0,
                mean_luma: Optional[float] = None, nv12=None, bgra=None, video_range: bool = False) -> SessionResult:
        """Processes one camera frame (``ck_session_process``).

        Args:
            timestamp: seconds, strictly increasing. pose: camera-to-world (4, 4).
            intrinsics: the image's :class:`Intrinsics`.
            rgb: optional uint8 image (written as PNG when captured); without it, a captured
                result's ``image_path`` names the file the caller must write now.
            depth: optional (h, w) depth map: float32 / float16 metres or uint16 millimetres
                (float64 is converted to float32); confidence: optional (h, w) uint8.
            depth_intrinsics: their :class:`Intrinsics`; None: ``intrinsics`` scaled to the
                depth map's size (ARKit's depth is aligned with its image).
            sharpness: the caller's score (None: measured from gray pixels or NV12's Y plane).
            tracking_reason: a :class:`TrackingReason`, read with ``Tracking.LIMITED``.
            mean_luma: mean image brightness 0..1 for "more light needed" (None: measured from
                the image when given, BT.601 luma of every 4th pixel of every 4th row; every 8th above 640 x 480,
                every 16th above 1280 x 960).
            nv12, bgra, video_range: camera-native pixels instead of ``rgb``, as
                :meth:`Dataset.add_frame` takes them (converted off the caller's thread).
        """
        if sum(x is not None for x in (rgb, nv12, bgra)) > 1:
            raise ValueError("give one of rgb, nv12 and bgra")
        f = _ffi.ck_session_frame()
        _lib.ck_session_frame_init(f)
        f.tracking = as_int(tracking, "tracking")
        f.timestamp = as_float(timestamp, "timestamp")
        f.pose = as_mat4(pose, "pose")
        f.intrinsics = _check_intrinsics(intrinsics)
        keep = []
        if rgb is not None:
            px, f.image = _image(rgb, intrinsics, "rgb")
            keep.append(px)
        elif nv12 is not None or bgra is not None:
            arrays, f.image, f.image_chroma, f.image_chroma_stride = _camera_image(nv12, bgra, video_range, intrinsics)
            keep.extend(arrays)
        shape = None
        if depth_intrinsics is not None and (depth is not None or confidence is not None):
            f.depth_intrinsics = _check_intrinsics(depth_intrinsics)
            shape = (depth_intrinsics.height, depth_intrinsics.width)
        if depth is not None:
            dm, f.depth = _depth(depth, "depth", shape)
            keep.append(dm)
            shape = dm.shape
        if confidence is not None:
            if shape is None:
                shape = np.shape(confidence)
            cm, f.confidence = _confidence(confidence, "confidence", shape)
            keep.append(cm)
        if sharpness is not None:
            f.sharpness = as_float(sharpness, "sharpness")
        f.tracking_reason = as_int(tracking_reason, "tracking_reason")
        if mean_luma is not None:
            f.mean_luma = as_float(mean_luma, "mean_luma")
        r = _ffi.ck_session_result()
        _lib.ck_session_process(r, self._h(), f)
        return SessionResult._from_c(r)

    def flush(self) -> None:
        """Commits a captured image written by now and waits until every queued frame is written
        and journaled (``ck_session_flush``): every frame processed before survives a crash."""
        _lib.ck_session_flush(self._h())

    def events(self) -> List[Event]:
        """Removes and returns the queued events, oldest first."""
        return self._drain(_lib.ck_session_next_event, self._h())

    def finish(self, zip: bool = False, zip_path=None) -> None:
        """Finalises the dataset (as :meth:`Dataset.finalize`)."""
        if zip_path is not None and not zip:
            raise ValueError("zip_path needs zip=True")
        _lib.ck_session_finish(self._h(), FINALIZE_ZIP if zip else 0,
                               None if zip_path is None else _path(zip_path, "zip_path"))
        self._finished = True

    def __exit__(self, exc_type, exc, tb) -> None:
        """``with Session(...) as s:`` finishes the session on a clean exit (unless :meth:`finish`
        ran already or it was closed), then closes it; after an exception it only closes, so the
        dataset stays as the crash left it (resumable with :meth:`Dataset.open`)."""
        try:
            if exc_type is None and not self.closed and not self._finished:
                self.finish()
        finally:
            self.close()
