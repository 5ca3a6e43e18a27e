"""Private helpers shared by the public modules: argument checks, output arrays, paths, and the
one handle base class every handle-owning object derives from.

The binding checks only what C cannot see or what ctypes would mangle silently: Python types,
array shapes and dtypes, and integers that must fit their C type. Values (NaN, infinities,
sizes out of range, non-rigid poses ...) are passed through so that the library judges them and
its message names the C function and the argument.
"""

from __future__ import annotations

import numbers
from typing import Optional
from dataclasses import fields
import os
import weakref

import numpy as np

from . import _ffi

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_UINT32_MAX = 2**32 - 1


def as_float(value, name: str) -> float:
    """A Python float from a real number (int, float, NumPy scalar); bool and str are rejected."""
    if type(value) is float:
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    return float(value)


def as_int(value, name: str, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
    """A Python int from an integer (IntEnum members included) within [lo, hi]."""
    if type(value) is int or (isinstance(value, int) and type(value) is not bool):
        value = int(value)  # int and its subclasses (IntEnum): no ABC check
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    else:
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


_F32 = np.dtype(np.float32)
_mat4_from_bytes = _ffi.ck_mat4.from_buffer_copy
_vec3_from_bytes = _ffi.ck_vec3.from_buffer_copy
_ck_vec3 = _ffi.ck_vec3


def as_vec3(value, name: str) -> "_ffi.ck_vec3":
    """A ``ck_vec3`` from three real numbers. A tuple or list of three Python floats and a float32
    array (3,) go straight into the struct; anything else through :func:`as_vector`."""
    t = type(value)
    if t is tuple or t is list:
        if len(value) == 3:
            x, y, z = value
            if type(x) is float and type(y) is float and type(z) is float:
                return _ck_vec3(x, y, z)
    elif t is np.ndarray and value.dtype is _F32 and value.shape == (3,):
        try:
            return _vec3_from_bytes(value)  # its 12 bytes are the struct's
        except (TypeError, ValueError, BufferError):  # not C-contiguous
            x, y, z = value.tolist()
            return _ffi.ck_vec3(x, y, z)
    return _ffi.vec3(as_vector(value, 3, name))


def as_mat4(value, name: str) -> "_ffi.ck_mat4":
    """A column-major ``ck_mat4`` from a (4, 4) real array indexed ``[row, column]``."""
    if type(value) is np.ndarray and value.shape == (4, 4):
        if value.dtype is _F32:  # the common case: one copy, transposed, into the struct
            return _mat4_from_bytes(value.T.copy())
        if value.dtype.kind in "fiu":
            return _ffi.mat4_from_array(value)
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


def path_arg(path, name: str = "path") -> bytes:
    """A file-system path as bytes for the C call (embedded NUL rejected: C would cut the name)."""
    try:
        raw = os.fsencode(os.fspath(path))
    except TypeError:
        raise TypeError(f"{name} must be a str, bytes or os.PathLike, not {type(path).__name__}") from None
    if b"\0" in raw:
        raise ValueError(f"{name} contains a NUL byte")
    return raw


_BOX_CLASS = None  # capturekit.Box, looked up on first use (box.py imports this module)


def check_box(box) -> "_ffi.ck_box":
    """The ``ck_box`` of a :class:`capturekit.Box` (anything else is a TypeError)."""
    if type(box) is _BOX_CLASS:
        return box._c
    return _check_box_slow(box)


def _check_box_slow(box) -> "_ffi.ck_box":
    global _BOX_CLASS
    if _BOX_CLASS is None:
        from .box import Box

        _BOX_CLASS = Box
    if not isinstance(box, _BOX_CLASS):
        raise TypeError(f"box must be a capturekit.Box, not {type(box).__name__}")
    return box._c


def box_pointer(box):
    """A ``ck_box *`` to the ``ck_box`` of a :class:`capturekit.Box`, for struct fields holding
    a box by pointer (made once per Box: its ``_c`` is edited in place, never replaced)."""
    c = check_box(box)
    p = getattr(box, "_ptr", None)
    if p is None:
        p = box._ptr = _ffi.pointer(c)
    return p


#: ck_format of the depth dtypes a scheduler, a dataset, a session or a scan reader takes.
DEPTH_FORMATS = {
    np.dtype(np.float32): _ffi.CK_FORMAT_DEPTH_F32,
    np.dtype(np.float16): _ffi.CK_FORMAT_DEPTH_F16,
    np.dtype(np.uint16): _ffi.CK_FORMAT_DEPTH_MM,
}


def out_array(out, dtype: np.dtype, shape: tuple, name: str = "out") -> np.ndarray:
    """A new array, or the caller's `out` if it is exactly right (never silently copied)."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must have dtype {dtype}, not {out.dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, not {out.shape}")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable")
    return out


def _release(release, handle) -> None:
    """Releases a handle once (the finalizer's callback; it must not reference the owner). A
    release that reports an error (the handle is freed anyway) raises after the handle is marked
    closed."""
    if handle.value:
        try:
            release(handle)
        finally:
            handle.value = None


class Handle:
    """A library handle owned by a Python object: context manager, idempotent ``close()``, and a
    ``weakref.finalize`` safety net (never ``__del__``). ``_handle`` is the ctypes handle;
    ``_h()`` returns it while open and raises ``ValueError`` once closed."""

    __slots__ = ("_handle", "_finalizer", "__weakref__")

    def _adopt(self, handle, release) -> None:
        """Takes ownership of `handle`; `release` (a ``ck_*_free`` / ``_close``) runs exactly once."""
        if not handle:
            raise RuntimeError(f"{type(self).__name__}: the library returned CK_OK but no handle")
        self._handle = handle
        self._finalizer = weakref.finalize(self, _release, release, handle)

    def _h(self):
        handle = getattr(self, "_handle", None)
        if handle is None or not handle.value:
            raise ValueError(f"capturekit.{type(self).__name__} is closed")
        return handle

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or the constructor failed)."""
        handle = getattr(self, "_handle", None)
        return handle is None or not handle.value

    def close(self) -> None:
        """Releases the library object. Idempotent: later calls do nothing; other methods then
        raise ``ValueError``. A close that reports an error (a writer's last write) raises once."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()

    def __enter__(self):
        self._h()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def f32(x: float) -> float:
    """x rounded to float32, the C field type (so defaults equal what the library reports)."""
    return float(np.float32(x))


def options_to_c(options, c_struct):
    """Copies a dataclass of options into the matching C struct (already set to the defaults);
    only Python types are checked here, ranges are the library's job."""
    for f in fields(options):
        value = getattr(options, f.name)
        if isinstance(getattr(c_struct, f.name), float):
            setattr(c_struct, f.name, as_float(value, f.name))
        else:
            setattr(c_struct, f.name, as_int(value, f.name, 0, 2**32 - 1))
    return c_struct


def opt_str(value, name: str) -> Optional[bytes]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    return value.encode("utf-8")


def bytes_arg(data, name: str = "data") -> np.ndarray:
    """A read-only 1-D uint8 view of bytes-like `data` (bytes, bytearray, memoryview, uint8 array)."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError(f"{name} must be bytes or a 1-D uint8 array, not a {data.dtype} array of shape {data.shape}")
        return np.ascontiguousarray(data)
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"{name} must be bytes-like, not {type(data).__name__}") from None
    return np.frombuffer(view.cast("B") if view.contiguous else view.tobytes(), dtype=np.uint8)


def _keep(handle) -> None:
    """The release of a borrowed handle: nothing (its owner frees it)."""


class SessionPart(Handle):
    """A handle that is the caller's own, or a read-only part of a session lent by
    ``ck_session_coverage`` / ``_surface`` / ``_dataset``: a lent part keeps its session alive, is
    never released by this object, and raises ``ValueError`` once the session is closed (the
    handle is freed with it)."""

    __slots__ = ("_owner",)
    #: What a lent part says when asked to change (the message of :meth:`_mutable`).
    _read_only = "a session's part is read-only"

    def _lend(self, handle, owner) -> None:
        """Makes this object a view of `owner`'s part `handle`."""
        self._owner = owner
        self._adopt(handle, _keep)

    def _h(self):
        owner = getattr(self, "_owner", None)
        if owner is not None and owner.closed:
            raise ValueError(f"capturekit.{type(self).__name__}: the Session it belongs to is closed")
        return Handle._h(self)

    def _mutable(self):
        """The handle, for a call that changes the object (refused for a session's part)."""
        if getattr(self, "_owner", None) is not None:
            raise ValueError(f"capturekit.{type(self).__name__}: {self._read_only}")
        return self._h()
