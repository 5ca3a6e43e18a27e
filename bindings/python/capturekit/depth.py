"""Depth maps: conversions, the native frame codec and ``.ckdepth`` recordings (``ck_depth.h``).

Sample formats are NumPy dtypes:

===================  ===========================================================
``np.float32``       depth in metres
``np.float16``       depth in metres (IEEE binary16, what LiDAR phones deliver)
``np.uint16``        depth in millimetres (RGB-D cameras, 16-bit depth PNGs)
``np.uint8``         8-bit maps (confidence: 0 low, 1 medium, 2 high)
===================  ===========================================================

Depth rules, identical in every function (they are the library's): 0 means invalid (no return).
NaN, negative values, +inf and values that do not fit the target become 0. float32 -> float16
rounds to nearest, ties to even (bit-exact with NumPy's ``astype(np.float16)``); a value that
would round above 65504 m is out of range, so 0. metres -> millimetres rounds to nearest, half
away from zero; above 65535 mm is out of range, so 0. float16 and millimetre values convert to
float32 exactly (mm: value / 1000, correctly rounded).

Frames are 2-D arrays ``(height, width)``, at most :data:`DEPTH_MAX_DIMENSION` each way. Inputs
whose rows are contiguous (C-order arrays, crops ``a[y0:y1, x0:x1]``, row-padded buffers) are
passed as they are, with their row stride (``ck_depth_map``); other layouts are copied to C order
first. Other dtypes (float64, int32, ...) raise
``TypeError`` before the library is called -- convert them yourself, e.g.
``depth.astype(np.float32)``, so that no rounding happens behind your back. ``out=`` arrays
must already be C-contiguous, writeable and of the right dtype and shape.

Objects holding library handles (:class:`DepthCodec`, :class:`DepthWriter`,
:class:`DepthReader`) are context managers; ``close()`` is idempotent, and using an object after
it raises ``ValueError``. A forgotten object is closed when garbage-collected.

Example::

    import numpy as np
    from capturekit import depth

    frame = np.full((192, 256), 1.5, dtype=np.float32)
    with depth.DepthCodec() as codec:
        data = codec.encode(frame)                 # stored as float16 metres, lossless
        back = codec.decode(data, np.float32)      # == depth.convert(depth.convert(frame, np.float16), np.float32)
    with depth.DepthWriter("scan.ckdepth", 256, 192, depth.DepthKind.FLOAT16, overwrite=True) as w:
        w.append(frame, timestamp=0.0)
    with depth.DepthReader("scan.ckdepth") as r:
        image, t = r.read(0, np.float32)
"""

from __future__ import annotations

import enum
import os
from typing import Iterator, NamedTuple, Optional

import numpy as np

from . import _ffi
from ._util import Handle, as_float, as_int, as_uint32, bytes_arg, out_array, path_arg

__all__ = [
    "DEPTH_MAX_DIMENSION",
    "LEVEL_ARCHIVAL",
    "DepthKind",
    "DepthFrameInfo",
    "DepthInfo",
    "DepthFrame",
    "DepthCodec",
    "DepthWriter",
    "DepthReader",
    "convert",
    "frame_info",
]

_lib = _ffi.lib

#: Largest accepted frame width or height, pixels (``CK_DEPTH_MAX_DIMENSION``).
DEPTH_MAX_DIMENSION = _ffi.CK_DEPTH_MAX_DIMENSION

#: The archival level (``CK_DEPTH_LEVEL_ARCHIVAL``) for :class:`DepthCodec` and
#: :class:`DepthWriter`: the same frames, compressed harder (1.5-2x smaller than left delta + byte
#: planes + zstd-1 on real sensor depth), decoding at full speed, encoding about a hundred times
#: slower. For transcoding and long-term storage, never the capture path.
LEVEL_ARCHIVAL = _ffi.CK_DEPTH_LEVEL_ARCHIVAL


class DepthKind(enum.IntEnum):
    """What an encoded frame or a ``.ckdepth`` file stores (``ck_depth_kind``)."""

    FLOAT16 = 1  #: float16 metres
    MM = 2  #: uint16 millimetres
    U8 = 3  #: uint8 (confidence)


# ck_format values by dtype, and back.
_F32, _F16, _MM, _U8 = 1, 2, 3, 4
_FORMAT_OF = {np.dtype(np.float32): _F32, np.dtype(np.float16): _F16, np.dtype(np.uint16): _MM, np.dtype(np.uint8): _U8}
#: The dtype each kind is stored as (and decoded to by default).
_STORAGE = {DepthKind.FLOAT16: np.dtype(np.float16), DepthKind.MM: np.dtype(np.uint16), DepthKind.U8: np.dtype(np.uint8)}
#: The kind a frame given as a dtype is stored as by default.
_DEFAULT_KIND = {_F32: DepthKind.FLOAT16, _F16: DepthKind.FLOAT16, _MM: DepthKind.MM, _U8: DepthKind.U8}
_KIND_NAMES = {"float16": DepthKind.FLOAT16, "mm": DepthKind.MM, "u8": DepthKind.U8, "uint8": DepthKind.U8}


class DepthFrameInfo(NamedTuple):
    """The header of an encoded frame (:func:`frame_info`)."""

    kind: DepthKind
    width: int
    height: int


class DepthInfo(NamedTuple):
    """The summary of a ``.ckdepth`` file (``ck_depth_info``)."""

    width: int
    height: int
    kind: DepthKind
    #: file format version (1)
    version: int
    #: complete, intact-looking frames
    frame_count: int
    #: bytes after the last complete frame (a crash's torn tail), ignored
    torn_bytes: int


class DepthFrame(NamedTuple):
    """A frame read from a ``.ckdepth`` file: the image ``(height, width)`` and its timestamp (s)."""

    data: np.ndarray
    timestamp: float


# ------------------------------------------------------------------------------------------
# Argument checks (binding side: dtypes, shapes, layouts; values are judged by the library)
# ------------------------------------------------------------------------------------------


def _format_of(dtype, name: str) -> int:
    fmt = _FORMAT_OF.get(np.dtype(dtype))
    if fmt is None:
        raise TypeError(f"{name} must be float32 or float16 (metres), uint16 (millimetres) or uint8, not {np.dtype(dtype)}")
    return fmt


def _dtype_arg(value, name: str) -> np.dtype:
    """A sample dtype from a dtype-like or ``"mm"`` (= uint16)."""
    if isinstance(value, str) and value.lower() == "mm":
        return np.dtype(np.uint16)
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"{name} must be a dtype (np.float32, np.float16, np.uint16 or 'mm', np.uint8), not {value!r}") from None
    _format_of(dtype, name)
    return dtype


def _kind_arg(value, name: str = "kind") -> int:
    """A kind from a DepthKind, an int (passed through: the library judges it) or a name."""
    if isinstance(value, str):
        try:
            return _KIND_NAMES[value.lower()]
        except KeyError:
            raise ValueError(f"{name} must be one of {sorted(_KIND_NAMES)} or a DepthKind, not {value!r}") from None
    return as_int(value, name)


def _frame_array(array, name: str) -> np.ndarray:
    """A 2-D array of a sample dtype whose rows a ``ck_depth_map`` can describe (the array itself
    when its rows are contiguous, whatever their stride; else a C-order copy)."""
    arr = np.asarray(array)
    _format_of(arr.dtype, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (height, width) array, got shape {arr.shape}")
    return _ffi.packed_rows(arr)


def _depth_map(arr: np.ndarray) -> "_ffi.ck_depth_map":
    """The ``ck_depth_map`` of an array from :func:`_frame_array` (the caller keeps `arr` alive)."""
    return _ffi.depth_map(arr, _FORMAT_OF[arr.dtype])


def _encoded_arg(data):
    """An encoded frame for the per-frame calls: bytes as they are (no copy, no view), anything else
    bytes-like as a uint8 array (see :func:`_bytes_arg`)."""
    return data if type(data) is bytes else bytes_arg(data)


def _dims(arr: np.ndarray):
    h, w = arr.shape
    return as_uint32(w, "width"), as_uint32(h, "height")


# ------------------------------------------------------------------------------------------
# Conversions
# ------------------------------------------------------------------------------------------


def convert(array, to, *, out: Optional[np.ndarray] = None) -> np.ndarray:
    """Converts depth samples between float32 metres, float16 metres and uint16 millimetres
    (``ck_depth_convert``), following the depth rules of this module.

    Args:
        array: any shape; dtype float32, float16 or uint16 (mm) -- or uint8, copied to uint8.
        to: the target dtype: ``np.float32``, ``np.float16``, ``np.uint16`` (or ``"mm"``), or
            ``np.uint8`` for uint8 input.
        out: optional C-contiguous array of the target dtype and the input's shape to fill.

    Returns:
        A new array (or ``out``) of the input's shape.

    Raises:
        TypeError: another dtype (float64, int32, ...).
        InvalidArgumentError: uint8 <-> depth, or ``out`` overlapping the input (different dtypes).
    """
    src = np.asarray(array)
    src_format = _format_of(src.dtype, "array")
    dst_dtype = _dtype_arg(to, "to")
    src = np.ascontiguousarray(src)
    dst = out_array(out, dst_dtype, src.shape)
    _lib.ck_depth_convert(dst.reshape(-1), _FORMAT_OF[dst_dtype], src.reshape(-1), src_format, src.size)
    return dst


def frame_info(data) -> DepthFrameInfo:
    """The kind and size of an encoded frame, from its header (``ck_depth_frame_info``).

    Raises:
        CorruptError: not a frame this library reads.
    """
    kind, width, height = _ffi.depth_frame_header(_encoded_arg(data))
    return DepthFrameInfo(DepthKind(kind), width, height)


# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# Native frame codec
# ------------------------------------------------------------------------------------------


class DepthCodec(Handle):
    """A reusable encoder/decoder of native frames (``ck_depth_codec``). One thread at a time.

    Frames are lossless: depth is stored as float16 metres (from float32 or float16 input) or as
    millimetres (from uint16 input); uint8 maps as bytes. Each encoded frame is self-describing.

    Args:
        level: zstd level 1..19, or 0 for the default (1); :data:`LEVEL_ARCHIVAL` for archives.

    Raises:
        InvalidArgumentError: a bad level.
    """

    __slots__ = ()

    def __init__(self, level: int = 0):
        handle = _ffi.ck_depth_codec_p()
        _lib.ck_depth_codec_create(handle, as_int(level, "level"))
        self._adopt(handle, _lib.ck_depth_codec_free)

    def encode(self, array, kind=None) -> bytes:
        """Encodes one frame (``ck_depth_encode``).

        Args:
            array: (height, width) float32 / float16 metres, uint16 millimetres or uint8 (rows
                may be padded: a crop is encoded without a copy).
            kind: the stored :class:`DepthKind` (or ``"float16"``, ``"mm"``, ``"u8"``). By default
                float32 and float16 are stored as FLOAT16, uint16 as MM, uint8 as U8. Another
                depth kind converts first by the depth rules (e.g. float32 metres stored as MM).

        Returns:
            The encoded frame.

        Raises:
            TypeError, ValueError: wrong dtype or not 2-D; depth asked to be stored as U8 or the reverse.
            InvalidArgumentError: zero or too large dimensions.
        """
        h = self._h()
        arr = _frame_array(array, "array")
        fmt = _FORMAT_OF[arr.dtype]
        if kind is not None:
            want = DepthKind(_kind_arg(kind))
            if (want == DepthKind.U8) != (fmt == _U8):
                raise ValueError(f"a {arr.dtype} frame cannot be stored as {want.name}")
            if want != _DEFAULT_KIND[fmt]:
                arr = convert(arr, _STORAGE[want])
                fmt = _FORMAT_OF[arr.dtype]
        width, height = _dims(arr)
        bound = _lib.ck_depth_encode_bound(width, height, fmt)
        dst = np.empty(max(bound, 1), np.uint8)  # bound 0: bad dimensions, the library says which
        written = np.zeros(1, np.uintp)
        _lib.ck_depth_encode(dst, dst.size, written, h, _depth_map(arr))
        return dst[: int(written[0])].tobytes()

    def frame_info(self, data) -> DepthFrameInfo:
        """The header of an encoded frame (see the module-level :func:`frame_info`)."""
        self._h()
        return frame_info(data)

    def decode(self, data, dtype=None, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Decodes one frame (``ck_depth_decode``).

        Args:
            data: the encoded frame (bytes-like).
            dtype: float32, float16 or uint16 (mm) for depth kinds, uint8 for U8 frames; by
                default the stored dtype (float16, uint16, uint8).
            out: optional (height, width) C-contiguous array of that dtype to decode into.

        Returns:
            A (height, width) array (or ``out``).

        Raises:
            CorruptError: a malformed frame (nothing outside ``out`` is touched).
            InvalidArgumentError: a dtype that does not fit the frame's kind.
        """
        h = self._h()
        src = _encoded_arg(data)
        kind, width, height = _ffi.depth_frame_header(src)
        dtype = _STORAGE[kind] if dtype is None else _dtype_arg(dtype, "dtype")
        dst = out_array(out, dtype, (height, width))
        _ffi.depth_decode_into(dst, h, src, _FORMAT_OF[dtype])
        return dst


# ------------------------------------------------------------------------------------------
# .ckdepth files
# ------------------------------------------------------------------------------------------


class DepthWriter(Handle):
    """Appends frames to a ``.ckdepth`` file (``ck_depth_writer``). One thread at a time.

    Every :meth:`append` goes straight to the file (a crash loses at most the frame being
    written; reopening with ``append=True`` drops a torn last frame and continues);
    :meth:`flush` makes them durable (fsync). :meth:`close` flushes.

    Args:
        path: the file.
        width, height: frame size in pixels.
        kind: the stored :class:`DepthKind` (or ``"float16"``, ``"mm"``, ``"u8"``).
        level: zstd level 1..19, or 0 for the default; :data:`LEVEL_ARCHIVAL` for archives.
        overwrite: replace an existing file.
        append: continue an existing file (its size and kind must match); a missing file is created.

    Raises:
        ExistsError: the file exists and neither ``overwrite`` nor ``append`` is set (a
            :class:`~capturekit.StateError` subclass).
        CorruptError: ``append`` to a file that is not a matching ``.ckdepth`` file.
        UnsupportedError: ``append`` to a file of a newer format version.
        CaptureKitIOError: the file cannot be created or written.
        InvalidArgumentError: bad sizes, kind, level, or both ``overwrite`` and ``append``.
    """

    __slots__ = ("path", "width", "height", "kind")

    def __init__(self, path, width: int, height: int, kind, level: int = 0, *, overwrite: bool = False,
                 append: bool = False):
        flags = (_ffi.CK_OPEN_OVERWRITE if overwrite else 0) | (_ffi.CK_OPEN_APPEND if append else 0)
        handle = _ffi.ck_depth_writer_p()
        k = _kind_arg(kind)
        _lib.ck_depth_writer_open(handle, path_arg(path), as_uint32(width, "width"), as_uint32(height, "height"),
                                  k, as_int(level, "level"), flags)
        self._adopt(handle, _lib.ck_depth_writer_close)
        self.path = os.fspath(path)
        self.width, self.height, self.kind = int(width), int(height), DepthKind(k)

    def append(self, array, timestamp: float) -> None:
        """Appends one frame with its timestamp in seconds (finite) (``ck_depth_writer_append``).

        Args:
            array: (height, width) float32 / float16 metres or uint16 mm for depth files (converted
                to the file's kind by the depth rules), uint8 for U8 files; rows may be padded.

        Raises:
            TypeError, ValueError: wrong dtype or shape.
            InvalidArgumentError: a dtype the file's kind cannot store, a non-finite timestamp.
            CaptureKitIOError: the write failed; StateError: a later append after such a failure.
        """
        h = self._h()
        arr = _frame_array(array, "array")
        if arr.shape != (self.height, self.width):
            raise ValueError(f"array must have shape ({self.height}, {self.width}) for this file, not {arr.shape}")
        _lib.ck_depth_writer_append(h, _depth_map(arr), as_float(timestamp, "timestamp"))

    def flush(self) -> None:
        """Makes every appended frame durable (fsync) (``ck_depth_writer_flush``)."""
        _lib.ck_depth_writer_flush(self._h())

    @property
    def frame_count(self) -> int:
        """Frames in the file, including those found when reopening with ``append=True``."""
        count = np.zeros(1, np.uint64)
        _lib.ck_depth_writer_frame_count(count, self._h())
        return int(count[0])

    def __len__(self) -> int:
        return self.frame_count

    def close(self) -> None:
        """Flushes and closes the file (``ck_depth_writer_close``). Idempotent. The handle is
        released even if closing fails (then CaptureKitIOError is raised, once)."""
        super().close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.frame_count} frames"
        return f"DepthWriter({self.path!r}, {self.width}x{self.height}, {self.kind.name}, {state})"


class DepthReader(Handle):
    """Random-access reader of a ``.ckdepth`` file (``ck_depth_reader``). One thread at a time.

    ``len(reader)`` is the number of complete frames; ``reader[i]`` and ``reader.read(i)`` give a
    :class:`DepthFrame` ``(data, timestamp)``; iterating yields every frame in order.

    Raises:
        NotFoundError: no such file.
        CorruptError: not a ``.ckdepth`` file, or a damaged header.
        UnsupportedError: a newer format version.
        CaptureKitIOError: the file cannot be read.
    """

    __slots__ = ("path", "info")

    def __init__(self, path):
        handle = _ffi.ck_depth_reader_p()
        _lib.ck_depth_reader_open(handle, path_arg(path))
        self._adopt(handle, _lib.ck_depth_reader_close)
        c = _ffi.ck_depth_info()
        _lib.ck_depth_reader_info(c, handle)
        self.path = os.fspath(path)
        #: The file's :class:`DepthInfo` (as found when opening).
        self.info = DepthInfo(int(c.width), int(c.height), DepthKind(c.kind), int(c.version), int(c.frame_count),
                              int(c.torn_bytes))

    def __len__(self) -> int:
        return self.info.frame_count

    def read(self, index: int, dtype=None, *, out: Optional[np.ndarray] = None) -> DepthFrame:
        """Decodes frame ``index`` (negative counts from the end) (``ck_depth_reader_read``).

        Args:
            dtype: float32, float16 or uint16 (mm) for depth files, uint8 for U8 files; by
                default the stored dtype.
            out: optional (height, width) C-contiguous array of that dtype to decode into.

        Raises:
            IndexError: past the end (``CK_END``).
            CorruptError: the frame fails its CRC or does not decode (the message names it).
            InvalidArgumentError: a dtype that does not fit the file's kind.
        """
        h = self._h()
        i = as_int(index, "index", -(2**63), 2**64 - 1)
        if i < 0:
            i += len(self)
            if i < 0:
                raise IndexError(f"frame index {index} out of range ({len(self)} frames)")
        dtype = _STORAGE[self.info.kind] if dtype is None else _dtype_arg(dtype, "dtype")
        dst = out_array(out, dtype, (self.info.height, self.info.width))
        timestamp = np.zeros(1, np.float64)
        written = np.zeros(1, np.uintp)
        status = _lib.ck_depth_reader_read(dst, dst.nbytes, written, timestamp, h, i, _FORMAT_OF[dtype])
        if status == _ffi.CK_END:
            raise IndexError(f"frame index {index} out of range ({len(self)} frames)")
        return DepthFrame(dst, float(timestamp[0]))

    def __getitem__(self, index: int) -> DepthFrame:
        return self.read(index)

    def __iter__(self) -> Iterator[DepthFrame]:
        self._h()
        for i in range(len(self)):
            yield self.read(i)

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self)} frames"
        return f"DepthReader({self.path!r}, {self.info.width}x{self.info.height}, {self.info.kind.name}, {state})"
