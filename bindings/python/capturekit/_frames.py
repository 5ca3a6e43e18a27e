"""Frame inputs shared by :class:`capturekit.Dataset` and :class:`capturekit.Session`: images,
camera buffers, depth and confidence maps checked and wrapped as the C structs (the caller keeps
the returned array alive for the call)."""

from __future__ import annotations

import numpy as np

from . import _ffi
from ._util import DEPTH_FORMATS
from .geometry import Intrinsics
from .images import ImageFormat

_FORMAT_CHANNELS = {1: int(ImageFormat.GRAY8), 3: int(ImageFormat.RGB8), 4: int(ImageFormat.RGBA8)}


def image(pixels, intrinsics: Intrinsics, name: str):
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


def camera_image(nv12, bgra, video_range: bool, intrinsics: Intrinsics):
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
    return [y, cbcr], _ffi.image(y, int(fmt)), _ffi.address(cbcr), _ffi.row_stride(cbcr)


def depth_map(values, name: str, shape=None):
    """(array, its ``ck_depth_map``) for a 2-D depth map: float32 or float16 metres or uint16
    millimetres are passed as they are (no copy when the rows are contiguous); other floating
    dtypes (float64) are converted to float32."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f" and arr.dtype not in DEPTH_FORMATS:
        arr = arr.astype(np.float32)
    fmt = DEPTH_FORMATS.get(arr.dtype)
    if fmt is None:
        raise TypeError(f"{name} must be a floating-point (metres) or uint16 (millimetres) array, got dtype {arr.dtype}")
    if arr.ndim != 2 or (shape is not None and arr.shape != shape):
        raise ValueError(f"{name} must be a 2-D array{'' if shape is None else ' of shape ' + str(shape)}, got {arr.shape}")
    arr = _ffi.packed_rows(arr)
    return arr, _ffi.depth_map(arr, fmt)


def confidence_map(values, name: str, shape):
    """(array, its ``ck_depth_map``) for a uint8 confidence map of the given shape."""
    arr = np.asarray(values)
    if arr.dtype != np.uint8:
        raise TypeError(f"{name} must be a uint8 array, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    arr = _ffi.packed_rows(arr)
    return arr, _ffi.depth_map(arr, _ffi.CK_FORMAT_U8)
