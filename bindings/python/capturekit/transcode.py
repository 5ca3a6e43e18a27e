"""Transcoding between MultiScan streams (``<scan>.depth.zlib`` / ``.confidence.zlib``) and
``.ckdepth`` files (``ck_transcode_*``)."""

from __future__ import annotations

import os
from typing import Optional, Sequence

import numpy as np

from . import _ffi
from ._util import as_int, as_uint32

__all__ = ["zstream_to_ckdepth", "ckdepth_to_zstream"]


def _path(p) -> bytes:
    return os.fsencode(os.fspath(p))


def zstream_to_ckdepth(src, dst, width: int, height: int, kind: str = "depth",
                       timestamps: Optional[Sequence[float]] = None, overwrite: bool = False,
                       archival: bool = False) -> int:
    """Converts a MultiScan stream (``kind`` "depth" = float16 metres, "confidence" = uint8) into a
    new ``.ckdepth`` file; returns the frames written. A stream cut short stops at its last
    complete frame. ``timestamps[i]`` is frame i's time (default: i). ``archival`` writes at
    ``CK_DEPTH_LEVEL_ARCHIVAL`` (smaller; encoding much slower)."""
    if kind not in ("depth", "confidence"):
        raise ValueError('kind must be "depth" or "confidence"')
    times = np.ascontiguousarray(np.asarray(timestamps if timestamps is not None else [], dtype=np.float64))
    if times.ndim != 1:
        raise ValueError("timestamps must be one-dimensional")
    count = np.zeros(1, np.uint64)
    _ffi.lib.ck_transcode_zstream_to_ckdepth(
        count, _path(dst), _path(src), as_uint32(width, "width"), as_uint32(height, "height"),
        2 if kind == "depth" else 4, times.ctypes.data if times.size else None, times.size,
        (_ffi.CK_OPEN_OVERWRITE if overwrite else 0) | (_ffi.CK_TRANSCODE_ARCHIVAL if archival else 0))
    return int(count[0])


def ckdepth_to_zstream(src, dst, level: int = 0, index: bool = False, overwrite: bool = False) -> int:
    """Converts a ``.ckdepth`` file of kind float16 or uint8 into a MultiScan stream; returns the
    frames written. ``index`` also writes the ``<dst>.idx`` side index."""
    flags = (_ffi.CK_OPEN_OVERWRITE if overwrite else 0) | (4 if index else 0)
    count = np.zeros(1, np.uint64)
    _ffi.lib.ck_transcode_ckdepth_to_zstream(count, _path(dst), _path(src), as_int(level, "level"), flags)
    return int(count[0])
