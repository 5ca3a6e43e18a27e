"""Exceptions raised by the CaptureKit binding.

Every negative ``ck_status`` returned by the C library becomes a :class:`CaptureKitError`
subclass chosen by the status code. The exception carries

* ``code``    -- the numeric status (e.g. ``-1``),
* ``name``    -- the ``CK_E_*`` name (e.g. ``"CK_E_INVALID_ARGUMENT"``),
* ``message`` -- the library's thread-local detail text, read right after the failing call; it
  names the C function and the argument (``"ck_box_init: size ... must be within ..."``).

``CK_MISS`` (1) is not an error: the ray functions return ``None`` for it.

Problems the binding detects itself before calling the library (a NumPy array of the wrong
dtype or shape, a value that is not a number) raise the built-in ``TypeError`` / ``ValueError``.
:class:`InvalidArgumentError` also derives from ``ValueError``, so ``except ValueError`` catches
bad arguments whichever side noticed them.

This module does not touch ctypes.
"""

from __future__ import annotations

__all__ = [
    "CaptureKitError",
    "InvalidArgumentError",
    "BufferTooSmallError",
    "CaptureKitIOError",
    "CorruptError",
    "StateError",
    "UnsupportedError",
    "NotFoundError",
    "NoMemoryError",
    "ExistsError",
    "BusyError",
    "LibraryNotFoundError",
    "VersionMismatchError",
    "STATUS_NAMES",
    "error_for_status",
]

#: ``ck_status`` values and their header names (``CK_OK`` and ``CK_MISS`` are not errors).
STATUS_NAMES = {
    0: "CK_OK",
    1: "CK_MISS",
    -1: "CK_E_INVALID_ARGUMENT",
    -2: "CK_E_BUFFER_TOO_SMALL",
    -3: "CK_E_IO",
    -4: "CK_E_CORRUPT",
    -5: "CK_E_STATE",
    -6: "CK_E_UNSUPPORTED",
    -7: "CK_E_NOT_FOUND",
    -8: "CK_E_NO_MEMORY",
    -9: "CK_E_EXISTS",
    -10: "CK_E_BUSY",
}


class CaptureKitError(Exception):
    """A CaptureKit call failed with a negative status.

    Attributes:
        code: the ``ck_status`` value (negative).
        name: its ``CK_E_*`` name, or ``"CK_E_UNKNOWN"`` for a code this binding does not know.
        message: the library's detail message (names the C function and the argument).
    """

    #: The status code a subclass stands for (``None`` on the base class).
    status: int | None = None

    def __init__(self, code: int, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.code = int(code)
        self.name = name
        self.message = message

    def __reduce__(self):
        return (type(self), (self.code, self.name, self.message))


class InvalidArgumentError(CaptureKitError, ValueError):
    """``CK_E_INVALID_ARGUMENT`` (-1): NULL, NaN/inf, out-of-range or inconsistent argument."""

    status = -1


class BufferTooSmallError(CaptureKitError):
    """``CK_E_BUFFER_TOO_SMALL`` (-2): a caller buffer is too small (the binding sizes its own
    buffers, so this is seen only through the raw ``_ffi`` functions)."""

    status = -2


class CaptureKitIOError(CaptureKitError):
    """``CK_E_IO`` (-3): a file-system error."""

    status = -3


class CorruptError(CaptureKitError):
    """``CK_E_CORRUPT`` (-4): malformed or truncated input data."""

    status = -4


class StateError(CaptureKitError):
    """``CK_E_STATE`` (-5): the call is not valid in the object's current state (e.g. placing a
    box on its floor when it has none)."""

    status = -5


class UnsupportedError(CaptureKitError):
    """``CK_E_UNSUPPORTED`` (-6): a valid request this library version does not support."""

    status = -6


class NotFoundError(CaptureKitError):
    """``CK_E_NOT_FOUND`` (-7): nothing to work on (e.g. no usable points to fit a box to)."""

    status = -7


class NoMemoryError(CaptureKitError):  # noqa: A001 - the CK_E_NO_MEMORY name, not a builtin
    """``CK_E_NO_MEMORY`` (-8): an allocation inside the library failed."""

    status = -8


class ExistsError(StateError):
    """``CK_E_EXISTS`` (-9): a file or folder is in the way that the call does not replace (pass
    the overwrite flag, or another path). A subclass of :class:`StateError`, which 0.1 raised."""

    status = -9


class BusyError(CaptureKitError):
    """``CK_E_BUSY`` (-10): the dataset folder is open for writing by another handle, in this
    process or another (one writer per dataset); the message names the folder and the holder's
    process id. Nothing was changed: close the other handle, or open the dataset read-only."""

    status = -10


_BY_CODE = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        BufferTooSmallError,
        CaptureKitIOError,
        CorruptError,
        StateError,
        UnsupportedError,
        NotFoundError,
        NoMemoryError,
        ExistsError,
        BusyError,
    )
}


def error_for_status(code: int, message: str) -> CaptureKitError:
    """The exception object for a negative status ``code`` with detail ``message``.

    Unknown negative codes (from a newer library) give a plain :class:`CaptureKitError`.
    """
    cls = _BY_CODE.get(code, CaptureKitError)
    name = STATUS_NAMES.get(code, "CK_E_UNKNOWN")
    return cls(code, name, message)


class LibraryNotFoundError(ImportError):
    """``libcapturekit`` could not be loaded from any of the places the binding looks.

    The message lists every attempt (the ``CAPTUREKIT_LIBRARY`` environment variable, the copy
    inside the package, the SONAME on the system library path) and why each failed; or, when a
    library was found but one it needs is missing, it is one line naming that library and what
    to do (reinstall the wheel, or install the Debian package).
    """


class VersionMismatchError(ImportError):
    """The loaded library's major version differs from the one this binding was written for."""
