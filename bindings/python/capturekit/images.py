"""Image files (``ck_image.h``): PNG images and depth maps, written and read by the library's
zlib-only codec, and JPEG encoding (libjpeg-turbo); :class:`ImageFormat`, the pixel layouts.

The array's dtype and shape decide the PNG format:

======================  ==============  =========================================
array                   format          typical use
======================  ==============  =========================================
``uint8 (H, W)``        8-bit gray      confidence maps, masks
``uint8 (H, W, 3)``     8-bit RGB       colour frames
``uint8 (H, W, 4)``     8-bit RGBA
``uint16 (H, W)``       16-bit gray     depth in millimetres (Stray Scanner, OpenCV)
======================  ==============  =========================================

Arrays whose rows are contiguous (C order, crops ``a[y0:y1, x0:x1]``, row-padded buffers) are
encoded without a copy: their row stride goes to the library (``ck_image``). Other layouts, and
big-endian uint16, are copied first.

Anything else (float depth, int32, 2 or 5 channels, 16-bit colour ...) raises ``TypeError`` /
``ValueError`` before the library is called: convert depth in metres with
``capturekit.depth.convert(depth, np.uint16)`` first. Width and height are 1 ...
:data:`PNG_MAX_DIMENSION`. Files are non-interlaced; the writer picks a filter for every row
and compresses with zlib (``level`` 1 ... 9, 0 for the library default); 16-bit samples are
big-endian in the file, as PNG requires, and native in the arrays.

The reader accepts every PNG of those four formats (any filters, any IDAT split, ancillary
chunks are skipped) and raises :class:`~capturekit.UnsupportedError` for palette, gray+alpha,
16-bit colour, bit depths below 8 and interlaced files, and :class:`~capturekit.CorruptError`
for damaged ones (bad CRC, truncated, wrong amount of image data).

Example::

    import numpy as np
    from capturekit import images

    depth_mm = np.full((192, 256), 1500, dtype=np.uint16)
    images.write_png("depth/000000.png", depth_mm, overwrite=True)  # atomic: temp file, fsync, rename
    assert (images.read_png("depth/000000.png") == depth_mm).all()
    data = images.encode_png(np.zeros((4, 4, 3), np.uint8))       # bytes
    image = images.decode_png(data)                               # (4, 4, 3) uint8
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from . import _ffi
from ._util import as_int, bytes_arg, path_arg

__all__ = ["PNG_MAX_DIMENSION", "ImageFormat", "PNGInfo", "encode_png", "decode_png", "png_info", "write_png",
           "read_png", "read_png_info"]

_lib = _ffi.lib

#: Largest accepted width or height (``CK_PNG_MAX_DIMENSION``).
PNG_MAX_DIMENSION = 32768
_OPEN_OVERWRITE = 1  # CK_OPEN_OVERWRITE


class ImageFormat(enum.IntEnum):
    """``ck_image_format``: the pixel layouts of images (``CK_IMAGE_FORMAT_*``). Was ``PNGFormat``
    in 0.1 (``ck_png_format``); the values are unchanged."""

    NONE = 0  #: no pixels (a dataset frame whose image file the caller writes)
    GRAY8 = 1
    RGB8 = 2
    RGBA8 = 3
    GRAY16 = 4  #: uint16, native endian in arrays (depth PNGs in millimetres)
    BGRA8 = 5  #: camera-native B, G, R, A (dataset and session frames only)
    NV12_FULL = 6  #: camera-native bi-planar 4:2:0 Y'CbCr, full range (dataset and session frames only)
    NV12_VIDEO = 7  #: the same, video range


class PNGInfo(NamedTuple):
    """Dimensions and format of a PNG."""

    width: int
    height: int
    format: ImageFormat

    @property
    def dtype(self) -> np.dtype:
        """The array dtype of the decoded pixels."""
        return np.dtype(np.uint16 if self.format == ImageFormat.GRAY16 else np.uint8)

    @property
    def shape(self) -> tuple:
        """The array shape of the decoded pixels."""
        channels = {ImageFormat.RGB8: 3, ImageFormat.RGBA8: 4}.get(self.format)
        return (self.height, self.width) if channels is None else (self.height, self.width, channels)


def _pixels(array):
    """(native-endian array with contiguous rows, format) from an image array (no copy when its
    rows already are contiguous), or TypeError/ValueError."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"image must be a NumPy array, not {type(array).__name__}")
    kind, size = array.dtype.kind, array.dtype.itemsize
    if kind == "u" and size == 2:
        if array.ndim != 2:
            raise ValueError(f"a uint16 image must have shape (height, width), got {array.shape}")
        if array.dtype != np.dtype(np.uint16):
            array = array.astype(np.uint16)  # native byte order
        return _ffi.packed_rows(array), ImageFormat.GRAY16
    if kind == "u" and size == 1:
        if array.ndim == 2:
            fmt = ImageFormat.GRAY8
        elif array.ndim == 3 and array.shape[2] in (3, 4):
            fmt = ImageFormat.RGB8 if array.shape[2] == 3 else ImageFormat.RGBA8
        else:
            raise ValueError(f"a uint8 image must have shape (H, W), (H, W, 3) or (H, W, 4), got {array.shape}")
        return _ffi.packed_rows(array.view(np.uint8)), fmt
    raise TypeError(f"image must be uint8 (gray, RGB, RGBA) or uint16 (gray, e.g. depth in mm), not {array.dtype}")


def _dims(arr: np.ndarray):
    return int(arr.shape[1]), int(arr.shape[0])


def encode_png(image, level: int = 0) -> bytes:
    """Encodes an image (see the module table) as PNG bytes.

    Args:
        image: uint8 (H, W), (H, W, 3), (H, W, 4) or uint16 (H, W); any memory layout.
        level: zlib level 1 ... 9, or 0 for the library default.

    Raises:
        TypeError / ValueError: an unsupported dtype or shape (before calling the library).
        InvalidArgumentError: a size outside 1 ... PNG_MAX_DIMENSION, a bad level.
    """
    arr, fmt = _pixels(image)
    width, height = _dims(arr)
    level = as_int(level, "level")
    bound = _lib.ck_png_encode_bound(width, height, fmt) if 0 < width <= PNG_MAX_DIMENSION and 0 < height <= PNG_MAX_DIMENSION else 0
    dst = np.empty(max(bound, 1), dtype=np.uint8)
    written = np.zeros(1, dtype=np.uintp)
    _lib.ck_png_encode(dst, bound, written, _ffi.image(arr, fmt), level)
    return dst[: int(written[0])].tobytes()


def encode_jpeg(image, quality: int = 0) -> bytes:
    """Encodes an 8-bit image as baseline JPEG bytes through libjpeg-turbo (``ck_jpeg_encode``):
    4:2:0 chroma for colour (gray: one channel), alpha dropped; what a dataset with
    ``DatasetOptions(image_encoding=ImageEncoding.JPEG)`` writes.

    Args:
        image: uint8 (H, W), (H, W, 3) or (H, W, 4); any memory layout.
        quality: 1 ... 100, or 0 for the default (90).

    Raises:
        TypeError / ValueError: an unsupported dtype or shape. UnsupportedError: uint16 (H, W).
        InvalidArgumentError: a side outside 1 ... 65535, a bad quality.
    """
    arr, fmt = _pixels(image)
    width, height = _dims(arr)
    quality = as_int(quality, "quality")
    bound = _lib.ck_jpeg_encode_bound(width, height, fmt) if 0 < width <= 65535 and 0 < height <= 65535 else 0
    dst = np.empty(max(bound, 1), dtype=np.uint8)
    written = np.zeros(1, dtype=np.uintp)
    _lib.ck_jpeg_encode(dst, bound, written, _ffi.image(arr, fmt), quality)
    return dst[: int(written[0])].tobytes()


def png_info(data) -> PNGInfo:
    """Dimensions and format of PNG bytes (reads only the header).

    Raises:
        CorruptError: not a PNG, or a damaged header. UnsupportedError: a PNG of another kind.
    """
    src = bytes_arg(data)
    w = np.zeros(1, dtype=np.uint32)
    h = np.zeros(1, dtype=np.uint32)
    f = np.zeros(1, dtype=np.int32)
    _lib.ck_png_info(w, h, f, src, src.size)
    return PNGInfo(int(w[0]), int(h[0]), ImageFormat(int(f[0])))


def decode_png(data) -> np.ndarray:
    """Decodes PNG bytes into a new array (uint8 (H, W) / (H, W, 3) / (H, W, 4) or uint16 (H, W)).

    Raises:
        CorruptError: damaged data (signature, CRC, zlib stream, image size, missing IEND).
        UnsupportedError: palette, gray+alpha, 16-bit colour, low bit depths, interlaced.
    """
    src = bytes_arg(data)
    info = png_info(src)
    out = np.empty(info.shape, dtype=info.dtype)
    written = np.zeros(1, dtype=np.uintp)
    _lib.ck_png_decode(out, out.nbytes, written, src, src.size)
    return out


def write_png(path, image, overwrite: bool = False, level: int = 0) -> None:
    """Writes an image as a PNG file atomically (temporary file, fsync, rename): a reader never
    sees half a file.

    Args:
        path: str, bytes or os.PathLike (UTF-8).
        image: as :func:`encode_png`.
        overwrite: replace an existing file (otherwise it is a :class:`~capturekit.ExistsError`,
            a :class:`~capturekit.StateError` subclass).
        level: zlib level 1 ... 9, or 0 for the library default.

    Raises:
        ExistsError: the file exists and ``overwrite`` is false. NotFoundError: the directory
        does not exist. CaptureKitIOError: the write failed (nothing is left behind).
    """
    arr, fmt = _pixels(image)
    flags = _OPEN_OVERWRITE if overwrite else 0
    _lib.ck_png_write(path_arg(path), _ffi.image(arr, fmt), as_int(level, "level"), flags)


def read_png_info(path) -> PNGInfo:
    """Dimensions and format of a PNG file. Raises NotFoundError for a missing file."""
    w = np.zeros(1, dtype=np.uint32)
    h = np.zeros(1, dtype=np.uint32)
    f = np.zeros(1, dtype=np.int32)
    _lib.ck_png_read_info(w, h, f, path_arg(path))
    return PNGInfo(int(w[0]), int(h[0]), ImageFormat(int(f[0])))


def read_png(path) -> np.ndarray:
    """Reads a PNG file into a new array (as :func:`decode_png`).

    Raises:
        NotFoundError: no such file. CorruptError / UnsupportedError: as :func:`decode_png`.
    """
    raw = path_arg(path)
    info = read_png_info(raw)
    out = np.empty(info.shape, dtype=info.dtype)
    written = np.zeros(1, dtype=np.uintp)
    _lib.ck_png_read(out, out.nbytes, written, raw)
    return out
