"""Dataset folders (``ck_dataset.h``); the per-frame capture session is :mod:`capturekit.session`.

A :class:`Dataset` is a folder that nerfstudio, instant-ngp and MultiScan's tools open unchanged
(transforms.json, boundingbox.json, images/, depth/, MultiScan streams, events.jsonl), backed by a
crash-safe journal: every call that returns has made its effect durable, and
:meth:`Dataset.open` after a crash finds every frame whose :meth:`Dataset.add_frame` returned.
One writer at a time: a second writable open of a live dataset, in any process, raises
:class:`~capturekit.BusyError`; :meth:`Dataset.open_readonly` is always allowed.

A dataset owns a library handle: use it as a context manager or call ``close()`` (idempotent);
a garbage-collected dataset is closed by a ``weakref.finalize`` safety net (a dataset closed
without finalising stays on disk, resumable).
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import DEPTH_FORMATS, SessionPart, as_float, as_int, as_mat4, check_box, opt_str, path_arg
from ._frames import camera_image, confidence_map, depth_map, image
from .box import Box
from .errors import BufferTooSmallError, NotFoundError
from .geometry import Intrinsics, _check_intrinsics

__all__ = ["DatasetOptions", "Dataset", "DatasetFrame", "LogLevel", "FINALIZE_ZIP", "WriteMode", "ImageEncoding",
           "QueueFull", "export_colmap", "depth_to_points"]

_lib = _ffi.lib
_fail = _ffi.fail
_add_frame = _ffi.fast("ck_dataset_add_frame")
_stream_frame = _ffi.fast("ck_dataset_stream_frame")
#: A descriptor as ck_frame_desc_init leaves it; each add_frame starts from a copy (one memcpy).
_DESC_TEMPLATE = _ffi.defaults("ck_frame_desc_init", _ffi.ck_frame_desc)
_new_desc = _ffi.ck_frame_desc.from_buffer_copy

#: ``CK_FINALIZE_ZIP``: also pack the folder into a zip.
FINALIZE_ZIP = 1


class LogLevel:
    """``ck_log_level`` values (``CK_LOG_LEVEL_*``)."""

    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3




@dataclass(frozen=True)
class DatasetFrame:
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
            b = opt_str(getattr(self, name), name)
            keep.append(b)
            setattr(c, name, b)

    def _to_c(self, keep: list) -> "_ffi.ck_dataset_options":
        c = _ffi.defaults("ck_dataset_options_init", _ffi.ck_dataset_options)
        self._fill(c, keep)
        return c


def export_colmap(dataset_dir, out_dir) -> None:
    """Writes a finished dataset's poses and intrinsics as a COLMAP text model in ``out_dir``
    (``cameras.txt``, ``images.txt``, ``points3D.txt``; ``ck_dataset_export_colmap``): world-
    to-camera quaternions in OpenCV camera axes, image names relative to the dataset folder;
    points3D.txt holds the dataset's initial point cloud (transforms.json's ``ply_file_path``,
    sparse_pc.ply) when it has one, else its header only.

    Raises:
        NotFoundError: no transforms.json (finish the dataset first), or its point cloud is missing.
        ExistsError: a model file exists. CorruptError / UnsupportedError: a damaged point cloud or
        one in a PLY layout that is not read.
    """
    _lib.ck_dataset_export_colmap(path_arg(dataset_dir, "dataset_dir"), path_arg(out_dir, "out_dir"))


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
    arr, dmap = depth_map(depth, "depth")
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


class Dataset(SessionPart):
    """A dataset folder (``ck_dataset``). Create with ``Dataset(path)`` (the folder must be empty
    or missing) or :meth:`Dataset.open` to resume one.

    Raises:
        ExistsError: the folder is not empty (create; a :class:`~capturekit.StateError` subclass).
        NotFoundError: no dataset in the folder (open).
    """

    __slots__ = ("_directory", "_borrowed")

    def __init__(self, directory, options: Optional[DatasetOptions] = None):
        keep: list = []
        if options is None:
            options = DatasetOptions()  # the C defaults, and the start time: now
        if not isinstance(options, DatasetOptions):
            raise TypeError(f"options must be DatasetOptions, not {type(options).__name__}")
        c_options = options._to_c(keep)
        handle = _ffi.ck_dataset_p()
        _lib.ck_dataset_create(handle, path_arg(directory, "directory"), c_options)
        self._directory = os.fsdecode(path_arg(directory, "directory"))
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
        open_fn(handle, path_arg(directory, "directory"))
        self._directory = os.fsdecode(path_arg(directory, "directory"))
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

    def frame(self, index: int) -> "DatasetFrame":
        """The frame at ``index`` (0 ... frame_count - 1), in the order frames were added."""
        i = as_int(index, "index", 0, 2**64 - 1)
        c = _ffi.ck_dataset_frame_info()
        _lib.ck_dataset_frame(c, self._h(), i)
        return DatasetFrame(
            id=int(c.id), pass_number=int(c.pass_), timestamp=float(c.timestamp), pose=_ffi.mat4_to_array(c.pose),
            intrinsics=Intrinsics._from_c(c.intrinsics), sharpness=None if c.sharpness < 0 else float(c.sharpness),
            owns_image=bool(c.owns_image), stream_index=None if c.stream_index < 0 else int(c.stream_index),
            image_path=self.frame_path(i), depth_path=self.frame_path(i, depth=True) if c.has_depth else None)

    def frames(self) -> List["DatasetFrame"]:
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
        fmt = DEPTH_FORMATS.get(np.dtype(dtype))
        if fmt is None:
            raise TypeError(f"dtype must be float32, float16 or uint16 (got {np.dtype(dtype)})")
        return self._map(_lib.ck_dataset_frame_depth, index, np.dtype(dtype), fmt)

    def confidence(self, index: int) -> Optional[np.ndarray]:
        """The frame's streamed confidence (``ck_dataset_frame_confidence``), (h, w) uint8 0..2, or
        None (not streamed, no confidence stream, or the dataset was never finalised)."""
        return self._map(_lib.ck_dataset_frame_confidence, index, np.uint8)

    @classmethod
    def _borrow(cls, handle: "_ffi.ck_dataset_p", owner) -> "Dataset":
        """A view of a session's dataset: it keeps the session alive, is never closed by this
        object, and raises ValueError once the session is closed (the handle is freed with it)."""
        self = cls.__new__(cls)
        self._directory = owner.directory
        self._borrowed = True
        self._lend(handle, owner)
        return self

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
        _lib.ck_dataset_next_image_path(buf, buf.size, written, self._h(), opt_str(extension, "extension"))
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
        d = _new_desc(_DESC_TEMPLATE)
        d.timestamp = as_float(timestamp, "timestamp")
        d.pose = as_mat4(pose, "pose")
        d.intrinsics = k
        keep = []
        if (rgb is not None) + (nv12 is not None) + (bgra is not None) + (image_path is not None) > 1:
            raise ValueError("give one of rgb, nv12, bgra and image_path")
        if nv12 is not None or bgra is not None:
            arrays, d.image, chroma, chroma_stride = camera_image(nv12, bgra, video_range, intrinsics)
            keep.extend(arrays)
            d.image_chroma = chroma
            d.image_chroma_stride = chroma_stride
        elif rgb is not None:
            px, d.image = image(rgb, intrinsics, "rgb")
            keep.append(px)
        elif image_path is not None:
            d.image_path = opt_str(image_path, "image_path")
        if depth is not None:
            dm, d.depth = depth_map(depth, "depth")
            keep.append(dm)
        if sharpness is not None:
            d.sharpness = as_float(sharpness, "sharpness")
        out = _ffi.out_u64()
        status = _add_frame(out, self._h(), d)  # the arrays in `keep` stay referenced until here
        if status < 0:
            _fail(status)
        return out.value

    def flush(self) -> None:
        """Waits until every queued frame is written and journaled (``ck_dataset_flush``): every
        frame added before survives a crash. Raises IOError for a failed background write (once)."""
        _lib.ck_dataset_flush(self._h())

    def remove_frame(self, frame_id: int) -> None:
        """Removes a frame (its files inside the dataset are deleted). NotFoundError if unknown."""
        _lib.ck_dataset_remove_frame(self._h(), as_int(frame_id, "frame_id", 0, 2**64 - 1))

    def set_box(self, box: Box) -> None:
        """Sets the box of the current pass (boundingbox.json is written at once)."""
        _lib.ck_dataset_set_box(self._h(), check_box(box))

    def set_surface(self, surface) -> None:
        """Gives the dataset its initial point cloud (``ck_dataset_set_surface``): a copy of the
        points of ``surface`` (a :class:`capturekit.Surface`) that captured images coloured. The
        next :meth:`finalize` writes them as ``sparse_pc.ply``, named by transforms.json's
        ``ply_file_path`` (nerfstudio's splatfacto initialises from it); ``None`` or a map without
        coloured points: no point cloud. A Session does this itself when it finishes."""
        _lib.ck_dataset_set_surface(self._h(), None if surface is None else surface._h())

    def begin_pass(self, box: Box) -> int:
        """Starts a new capture pass with its own box; returns its number (the first is 0)."""
        out = np.zeros(1, np.uint32)
        _lib.ck_dataset_begin_pass(out, self._h(), check_box(box))
        return int(out[0])

    def stream_frame(self, timestamp: float, pose, intrinsics: Intrinsics, depth=None, confidence=None) -> None:
        """Appends one frame to the MultiScan streams: an (h, w) depth map (float32 / float16
        metres or uint16 millimetres; float64 is converted to float32) and/or an (h, w) uint8
        confidence map (the first call fixes the size), and a camera-info line."""
        if depth is None and confidence is None:
            raise ValueError("depth and confidence are both None")
        dm, dmap = (None, None) if depth is None else depth_map(depth, "depth")
        shape = dm.shape if dm is not None else np.asarray(confidence).shape
        cm, cmap = (None, None) if confidence is None else confidence_map(confidence, "confidence", shape)
        status = _stream_frame(self._h(), as_float(timestamp, "timestamp"), as_mat4(pose, "pose"),
                               _check_intrinsics(intrinsics), dmap, cmap)
        if status < 0:
            _fail(status)
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
                                 None if zip_path is None else path_arg(zip_path, "zip_path"))

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
