"""Argument checks shared by the public modules (no ctypes here).

The binding checks only what C cannot see or what ctypes would mangle silently: Python types,
array shapes and dtypes, and integers that must fit their C type. Values (NaN, infinities,
sizes out of range, non-rigid poses ...) are passed through so that the library judges them and
its message names the C function and the argument.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _ffi

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_UINT32_MAX = 2**32 - 1


def as_float(value, name: str) -> float:
    """A Python float from a real number (int, float, NumPy scalar); bool and str are rejected."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    return float(value)


def as_int(value, name: str, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
    """A Python int from an integer (IntEnum members included) within [lo, hi]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name} = {value} does not fit the C type (range {lo}..{hi})")
    return value


def as_uint32(value, name: str) -> int:
    return as_int(value, name, 0, _UINT32_MAX)


def _real_array(value, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers (got dtype {arr.dtype})")
    return arr


def as_vector(value, n: int, name: str) -> tuple:
    """n Python floats from a length-n sequence or array of real numbers."""
    arr = _real_array(value, name)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    return tuple(float(x) for x in arr)


def as_vec3(value, name: str) -> "_ffi.ck_vec3":
    """A ``ck_vec3`` from three real numbers."""
    return _ffi.vec3(as_vector(value, 3, name))


def as_mat4(value, name: str) -> "_ffi.ck_mat4":
    """A column-major ``ck_mat4`` from a (4, 4) real array indexed ``[row, column]``."""
    arr = _real_array(value, name)
    if arr.shape != (4, 4):
        raise ValueError(f"{name} must be a (4, 4) matrix, got shape {arr.shape}")
    return _ffi.mat4_from_array(arr)


def float_rows(value, columns: int, name: str) -> np.ndarray:
    """A C-contiguous float32 (N, columns) array for a batched call.

    Any floating dtype (float16/32/64, any memory layout) is converted with
    ``np.ascontiguousarray(..., dtype=np.float32)`` (no copy when it already is one). Integer,
    bool, complex and object arrays are rejected with TypeError and other shapes with ValueError,
    so that a mistaken argument fails here instead of being reinterpreted by C.
    """
    value = np.asarray(value)
    if value.dtype.kind != "f":
        raise TypeError(f"{name} must be a floating-point array (float32 preferred), got dtype {value.dtype}")
    if value.ndim != 2 or value.shape[1] != columns:
        raise ValueError(f"{name} must have shape (N, {columns}), got {value.shape}")
    if value.shape[0] > _ffi.CK_MAX_BATCH:
        raise ValueError(f"{name} has {value.shape[0]} rows; at most {_ffi.CK_MAX_BATCH} per call")
    return np.ascontiguousarray(value, dtype=np.float32)
