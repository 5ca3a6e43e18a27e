"""Reading other apps' captures: MultiScan scans and Stray Scanner captures (``ck_scan``).

Example::

    import capturekit as ck
    with ck.Scan("path/to/scan") as scan:          # a MultiScan folder, its <id>.json, or a Stray folder
        print(scan.kind, len(scan), scan.depth_size)
        f = scan.frame(0)                          # timestamp, pose (OpenGL c2w), colour intrinsics
        depth = scan.depth(0)                      # (h, w) float32 metres, 0 = invalid
        conf = scan.confidence(0)                  # (h, w) uint8 0..2

Poses are camera-to-world with OpenGL camera axes whatever the app wrote (Stray Scanner's OpenCV
poses are converted); intrinsics are the colour camera's at the colour resolution. Colour frames
stay in the app's video: decode frame i of it with your video library (OpenCV, PyAV).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterator, List, Tuple

import numpy as np

from . import _ffi
from ._util import DEPTH_FORMATS, Handle, as_int
from .geometry import Intrinsics

__all__ = ["Scan", "ScanFrame", "ScanKind"]

_lib = _ffi.lib


class ScanKind(enum.IntEnum):
    """What :class:`Scan` opened (``ck_scan_kind``)."""

    MULTISCAN = 1  #: a MultiScan scan (or a CaptureKit dataset's streams)
    STRAY = 2  #: a Stray Scanner capture


@dataclass(frozen=True)
class ScanFrame:
    """One frame of a scan (``ck_scan_frame_info``)."""

    timestamp: float  #: seconds, the app's clock
    pose: np.ndarray  #: camera-to-world (4, 4) float32, OpenGL camera axes
    intrinsics: Intrinsics  #: the colour camera's, at the colour resolution
    depth_index: int  #: its frame in the depth stream, or the number of its Stray files
    has_depth: bool


class Scan(Handle):
    """A MultiScan scan or a Stray Scanner capture opened read-only (``ck_scan_open``).

    Args:
        path: a MultiScan scan folder (one ``<id>.json`` with its ``<id>.jsonl``), that metadata
            file itself, or a Stray Scanner folder (``odometry.csv``).

    Raises:
        NotFoundError: nothing of either kind there.
        CorruptError: a file is damaged or inconsistent (the message names it and the line).
        InvalidArgumentError: a folder with several MultiScan scans (open one by its ``.json``).
    """

    __slots__ = ("_info",)

    def __init__(self, path):
        import os

        handle = _ffi.ck_scan_p()
        _lib.ck_scan_open(handle, os.fsencode(path))
        self._adopt(handle, _lib.ck_scan_close)
        info = _ffi.ck_scan_info()
        _lib.ck_scan_describe(info, self._h())
        self._info = info

    @property
    def kind(self) -> ScanKind:
        return ScanKind(self._info.kind)

    @property
    def depth_size(self) -> Tuple[int, int]:
        """(width, height) of the depth and confidence maps; (0, 0) without depth."""
        return int(self._info.depth_width), int(self._info.depth_height)

    @property
    def has_confidence(self) -> bool:
        return bool(self._info.has_confidence)

    @property
    def depth_frame_count(self) -> int:
        """Frames with depth."""
        return int(self._info.depth_frame_count)

    @property
    def duration(self) -> float:
        """Seconds the timestamps span: the latest minus the earliest (never negative, also
        when the clock goes back, e.g. a dataset resumed after the device restarted its clock)."""
        return float(self._info.duration)

    def __len__(self) -> int:
        return int(self._info.frame_count)

    def frame(self, index: int) -> ScanFrame:
        """Frame ``index`` (NotFoundError past the last)."""
        i = as_int(index, "index", 0, 2**64 - 1)
        c = _ffi.ck_scan_frame_info()
        _lib.ck_scan_frame(c, self._h(), i)
        return ScanFrame(timestamp=float(c.timestamp), pose=_ffi.mat4_to_array(c.pose),
                         intrinsics=Intrinsics._from_c(c.intrinsics), depth_index=int(c.depth_index),
                         has_depth=bool(c.has_depth))

    def frames(self) -> List[ScanFrame]:
        """Every frame, in order."""
        return [self.frame(i) for i in range(len(self))]

    def __iter__(self) -> Iterator[ScanFrame]:
        return (self.frame(i) for i in range(len(self)))

    def depth(self, index: int, dtype=np.float32) -> np.ndarray:
        """Frame ``index``'s depth, (h, w) of ``dtype``: float32 / float16 metres or uint16
        millimetres; 0 = invalid. NotFoundError when the frame has no depth."""
        fmt = DEPTH_FORMATS.get(np.dtype(dtype))
        if fmt is None:
            raise TypeError(f"dtype must be float32, float16 or uint16 (got {np.dtype(dtype)})")
        w, h = self.depth_size
        out = np.empty((max(h, 1), max(w, 1)), np.dtype(dtype))[:h, :w]
        written = np.zeros(1, np.uintp)
        _lib.ck_scan_depth(out.reshape(-1) if out.size else np.empty(0, np.dtype(dtype)), out.nbytes, written,
                           self._h(), as_int(index, "index", 0, 2**64 - 1), fmt)
        return out

    def confidence(self, index: int) -> np.ndarray:
        """Frame ``index``'s confidence, (h, w) uint8: 0 low, 1 medium, 2 high."""
        w, h = self.depth_size
        out = np.empty(w * h, np.uint8)
        written = np.zeros(1, np.uintp)
        _lib.ck_scan_confidence(out, out.size, written, self._h(), as_int(index, "index", 0, 2**64 - 1))
        return out.reshape(h, w)

    def __repr__(self) -> str:
        if self.closed:
            return "Scan(closed)"
        w, h = self.depth_size
        return f"Scan({self.kind.name.lower()}, {len(self)} frames, depth {w}x{h}, {self.duration:.1f} s)"
