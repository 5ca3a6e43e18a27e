"""MultiScan-compatible depth and confidence streams (``ck_depth.h``, "MultiScan-compatible streams").

``<scan>.depth.zlib`` and ``<scan>.confidence.zlib`` are ONE raw DEFLATE stream (no zlib header)
over all frames: ``height x width`` float16 metres (little-endian) or uint8 confidence (0 low,
1 medium, 2 high), row-major, no per-frame header -- what the MultiScan scanner app writes and
what its Python tools read with ``zlib.decompressobj(-zlib.MAX_WBITS)`` + ``np.frombuffer``.

The writer ends every frame with a full flush and writes it to the file before :meth:`append`
returns, so a killed recorder loses no appended frame; an optional side index ``<path>.idx``
(little-endian uint64 offsets of the frame starts) makes random access fast, and readers never
require it. A file cut short yields every complete frame; then the reader reports the end (cut at
a frame boundary) or raises :class:`~capturekit.CorruptError` naming the cut frame.

Frames are 2-D arrays ``(height, width)``: float32 or float16 metres for depth streams (float32
is converted by the depth rules of :mod:`capturekit.depth`), uint8 for confidence. Reading gives
float16 (depth) or uint8 (confidence) by default, or float32 metres / ``"mm"`` (uint16).

Objects are context managers; ``close()`` is idempotent and using an object afterwards raises
``ValueError``. A forgotten object is closed when garbage-collected.

Example::

    import numpy as np
    from capturekit import ZStreamWriter, ZStreamReader

    with ZStreamWriter("scan.depth.zlib", 256, 192, "depth", index=True, overwrite=True) as w:
        w.append(np.full((192, 256), 1.5, np.float32))
    with ZStreamReader("scan.depth.zlib", 256, 192, "depth") as r:
        first = r.read(0, np.float32)
        for frame in r:          # float16 (192, 256) arrays
            ...
"""

from __future__ import annotations

import enum
import os
from typing import Iterator, Optional

import numpy as np

from . import _ffi
from ._util import Handle, as_int, as_uint32, out_array, path_arg
from .depth import _depth_map, _dtype_arg

__all__ = ["ZStreamKind", "ZStreamWriter", "ZStreamReader", "ZSTREAM_DEFAULT_LEVEL"]

_lib = _ffi.lib

#: The writer's default zlib level (``CK_ZSTREAM_DEFAULT_LEVEL``), chosen by measurement.
ZSTREAM_DEFAULT_LEVEL = _ffi.CK_ZSTREAM_DEFAULT_LEVEL

_F32, _F16, _MM, _U8 = 1, 2, 3, 4
_FORMAT_OF = {np.dtype(np.float32): _F32, np.dtype(np.float16): _F16, np.dtype(np.uint16): _MM, np.dtype(np.uint8): _U8}


class ZStreamKind(enum.IntEnum):
    """What a stream stores; the values are the ``stored_format`` (``ck_format``) of the C API."""

    DEPTH = 2  #: float16 metres (``CK_FORMAT_DEPTH_F16``)
    CONFIDENCE = 4  #: uint8 (``CK_FORMAT_U8``)


_KIND_NAMES = {"depth": ZStreamKind.DEPTH, "confidence": ZStreamKind.CONFIDENCE}
_STORED_DTYPE = {ZStreamKind.DEPTH: np.dtype(np.float16), ZStreamKind.CONFIDENCE: np.dtype(np.uint8)}


def _kind(value) -> ZStreamKind:
    if isinstance(value, str):
        try:
            return _KIND_NAMES[value.lower()]
        except KeyError:
            raise ValueError(f"kind must be 'depth' or 'confidence' (or a ZStreamKind), not {value!r}") from None
    if isinstance(value, ZStreamKind):
        return value
    raise TypeError(f"kind must be 'depth' or 'confidence' (or a ZStreamKind), not {type(value).__name__}")


class ZStreamWriter(Handle):
    """Writes a MultiScan-compatible stream frame by frame (``ck_zstream_writer``). One thread at a time.

    Args:
        path: the stream file (conventionally ``<scan>.depth.zlib`` or ``<scan>.confidence.zlib``).
        width, height: frame size in pixels (1..16384).
        kind: ``"depth"`` (float16 metres) or ``"confidence"`` (uint8), or a :class:`ZStreamKind`.
        level: zlib level 1..9, or 0 for :data:`ZSTREAM_DEFAULT_LEVEL`.
        index: also write the side index ``<path>.idx``.
        overwrite: replace existing files (a stale ``<path>.idx`` is removed when ``index`` is off).

    Raises:
        ExistsError: the file (or, with ``index``, ``<path>.idx``) exists and ``overwrite`` is off
            (a :class:`~capturekit.StateError` subclass).
        NotFoundError: the directory does not exist. CaptureKitIOError: the file cannot be created.
        InvalidArgumentError: bad sizes or level.
    """

    __slots__ = ("path", "width", "height", "kind")

    def __init__(self, path, width: int, height: int, kind="depth", level: int = 0, index: bool = False,
                 overwrite: bool = False):
        k = _kind(kind)
        flags = (_ffi.CK_OPEN_OVERWRITE if overwrite else 0) | (_ffi.CK_ZSTREAM_INDEX if index else 0)
        handle = _ffi.ck_zstream_writer_p()
        _lib.ck_zstream_writer_open(handle, path_arg(path), as_uint32(width, "width"), as_uint32(height, "height"),
                                    int(k), as_int(level, "level"), flags)
        self._adopt(handle, _lib.ck_zstream_writer_close)
        self.path = os.fspath(path)
        self.width, self.height, self.kind = int(width), int(height), k

    def append(self, array) -> None:
        """Compresses one frame with a full flush and writes it to the file (``ck_zstream_writer_append``).

        Args:
            array: (height, width); float32 or float16 metres for depth streams, uint8 for
                confidence. Arrays with contiguous rows (C order, crops, padded rows) are passed
                with their row stride; other layouts are copied to C order first.

        Raises:
            TypeError, ValueError: a dtype the stream does not take, or the wrong shape (checked
                before the call).
            CaptureKitIOError: the write failed (the file is cut back to the previous frame);
                StateError: any later append.
        """
        h = self._h()
        arr = np.asarray(array)
        accepted = (np.float32, np.float16) if self.kind == ZStreamKind.DEPTH else (np.uint8,)
        if arr.dtype not in [np.dtype(t) for t in accepted]:
            names = " or ".join(np.dtype(t).name for t in accepted)
            raise TypeError(f"a {self.kind.name.lower()} stream takes {names} frames, not {arr.dtype}")
        if arr.shape != (self.height, self.width):
            raise ValueError(f"array must have shape ({self.height}, {self.width}) for this stream, not {arr.shape}")
        arr = _ffi.packed_rows(arr)
        _lib.ck_zstream_writer_append(h, _depth_map(arr))

    @property
    def frame_count(self) -> int:
        """Frames appended so far (``ck_zstream_writer_frame_count``)."""
        count = np.zeros(1, np.uint64)
        _lib.ck_zstream_writer_frame_count(count, self._h())
        return int(count[0])

    def __len__(self) -> int:
        return self.frame_count

    def close(self) -> None:
        """Ends the stream (final block), fsyncs and closes the file(s) (``ck_zstream_writer_close``).
        Idempotent. The handle is released even if closing fails (then CaptureKitIOError is raised, once)."""
        super().close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.frame_count} frames"
        return f"ZStreamWriter({self.path!r}, {self.width}x{self.height}, {self.kind.name.lower()}, {state})"


class ZStreamReader(Handle):
    """Reads a MultiScan-compatible stream (``ck_zstream_reader``). One thread at a time.

    ``len(reader)`` (or :attr:`frame_count`) is the number of complete frames (it decodes the
    stream once unless a valid side index exists); ``reader.read(i)`` / ``reader[i]`` decode frame
    ``i`` (seeking with the side index or offsets found while reading); iterating yields every
    frame from the first, then stops at the end of a clean stream -- or raises CorruptError naming
    the frame a truncated or damaged stream breaks in, after every complete frame.

    Args:
        path: the stream file.
        width, height: frame size in pixels (the stream has no header: take them from the
            scan's metadata, ``resolution`` = [height, width]).
        kind: ``"depth"`` or ``"confidence"`` (or a :class:`ZStreamKind`).

    Raises:
        NotFoundError: no such file. CaptureKitIOError: it cannot be read.
        InvalidArgumentError: bad sizes.
    """

    __slots__ = ("path", "width", "height", "kind")

    def __init__(self, path, width: int, height: int, kind="depth"):
        k = _kind(kind)
        handle = _ffi.ck_zstream_reader_p()
        _lib.ck_zstream_reader_open(handle, path_arg(path), as_uint32(width, "width"), as_uint32(height, "height"), int(k))
        self._adopt(handle, _lib.ck_zstream_reader_close)
        self.path = os.fspath(path)
        self.width, self.height, self.kind = int(width), int(height), k

    @property
    def frame_count(self) -> int:
        """Complete frames (``ck_zstream_reader_frame_count``); a tail cut short is not counted.

        Raises:
            CorruptError: damage before the end (the message names the frame).
        """
        count = np.zeros(1, np.uint64)
        _lib.ck_zstream_reader_frame_count(count, self._h())
        return int(count[0])

    def __len__(self) -> int:
        return self.frame_count

    def _dtype(self, dtype) -> np.dtype:
        return _STORED_DTYPE[self.kind] if dtype is None else _dtype_arg(dtype, "dtype")

    def read(self, index: int, dtype=None, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Decodes frame ``index`` (negative counts from the end) (``ck_zstream_reader_read``).
        Afterwards :meth:`next` continues with ``index + 1``.

        Args:
            dtype: ``np.float16`` (default for depth), ``np.float32`` metres or ``"mm"``
                (``np.uint16``) for depth streams; ``np.uint8`` for confidence.
            out: optional (height, width) C-contiguous array of that dtype to decode into
                (written only on success).

        Raises:
            IndexError: no such frame (the stream ended cleanly before it).
            CorruptError: the stream is damaged or cut short at or before ``index`` (the message
                names the frame).
            InvalidArgumentError: a dtype that does not fit the stream's kind.
        """
        h = self._h()
        i = as_int(index, "index", -(2**63), 2**64 - 1)
        if i < 0:
            n = self.frame_count
            if i + n < 0:
                raise IndexError(f"frame index {index} out of range ({n} frames)")
            i += n
        dtype = self._dtype(dtype)
        dst = out_array(out, dtype, (self.height, self.width))
        written = np.zeros(1, np.uintp)
        if _lib.ck_zstream_reader_read(dst, dst.nbytes, written, h, i, _FORMAT_OF[dtype]) == _ffi.CK_END:
            raise IndexError(f"frame index {index} out of range (the stream ends before it)")
        return dst

    def next(self, dtype=None, *, out: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
        """Decodes the next frame (``ck_zstream_reader_next``); None at the end of the stream.
        After None (or CorruptError) the position stays, so a later call retries: a stream that
        is still being written may have grown.

        Raises:
            CorruptError: the stream is damaged or cut short inside this frame (named).
        """
        h = self._h()
        dtype = self._dtype(dtype)
        dst = out_array(out, dtype, (self.height, self.width))
        written = np.zeros(1, np.uintp)
        if _lib.ck_zstream_reader_next(dst, dst.nbytes, written, h, _FORMAT_OF[dtype]) == _ffi.CK_END:
            return None
        return dst

    def __getitem__(self, index: int) -> np.ndarray:
        return self.read(index)

    def __iter__(self) -> Iterator[np.ndarray]:
        """Every frame from the first, in the stored dtype."""
        self._h()
        try:
            frame = self.read(0)
        except IndexError:
            return
        while frame is not None:
            yield frame
            frame = self.next()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"ZStreamReader({self.path!r}, {self.width}x{self.height}, {self.kind.name.lower()}, {state})"
