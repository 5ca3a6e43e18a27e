"""Poses, intrinsics and the small value types (faces, corners, rays, hits).

Matrices
--------
Every 4x4 matrix crosses this API as a NumPy array ``M`` of shape (4, 4) in ordinary math
orientation: ``M[r, c]`` is row ``r``, column ``c``, the translation of a pose is ``M[:3, 3]``
and a point transforms as ``M @ [x, y, z, 1]``. (This is the layout of the ``transform_matrix``
rows in a nerfstudio ``transforms.json``.) The binding converts to and from the library's
column-major ``ck_mat4`` (``m[c * 4 + r] = M[r, c]``) itself; never transpose for it.

Inputs may be any real dtype (they are converted to float32, the library's precision); results
are new float32 arrays.

Poses are camera-to-world with OpenGL/ARKit camera axes (the camera looks down -z, +y up, +x
right) in a right-handed, +y-up world in metres. Functions taking a pose require a rigid
transform (orthonormal rotation within 1e-3, determinant +1, bottom row (0, 0, 0, 1)) and raise
:class:`~capturekit.InvalidArgumentError` otherwise.

Quaternions are arrays ``(x, y, z, w)`` -- vector part first, like ``simd_quatf``.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

import numpy as np

from . import _ffi
from ._util import as_float, as_mat4, as_uint32, as_vector, as_vec3
from .errors import InvalidArgumentError

__all__ = [
    "Face",
    "Corner",
    "Intrinsics",
    "Ray",
    "Hit",
    "pose_from_quat",
    "pose_to_quat",
    "pose_inverse",
    "mat4_multiply",
    "mat4_transpose",
    "opengl_to_opencv",
    "opencv_to_opengl",
    "yaw_pitch_roll",
]

_lib = _ffi.lib
_VALIDATE_SCRATCH = np.empty(9, np.float32)  # output of the validating call in Intrinsics
_F32 = np.dtype(np.float32)
_fail = _ffi.fail
_pose_inverse = _ffi.fast("ck_pose_inverse")
_mat4_multiply = _ffi.fast("ck_mat4_multiply")
_mat4_transpose = _ffi.fast("ck_mat4_transpose")
_gl_to_cv = _ffi.fast("ck_pose_opengl_to_opencv")
_cv_to_gl = _ffi.fast("ck_pose_opencv_to_opengl")
_yaw_pitch_roll = _ffi.fast("ck_pose_yaw_pitch_roll")
_pose_to_quat = _ffi.fast("ck_pose_to_quat")
_mat4 = _ffi.ck_mat4
_mat4_to_array = _ffi.mat4_to_array
_mat4_bytes = _ffi.ck_mat4.from_buffer_copy  # a ck_mat4 holding a C-contiguous array's 64 bytes
_SHAPE44 = (4, 4)


def _rows(m: "_ffi.ck_mat4") -> np.ndarray:
    """A (4, 4) float32 array over the bytes of `m` read row-major (a struct made for this call:
    the array owns it through its base, nothing else refers to it)."""
    return np.frombuffer(m, _F32).reshape(4, 4)


class _FaceMeta(enum.EnumMeta):
    """Iterating ``Face`` gives the six faces: ``NONE`` marks a miss and is not a face."""

    def __iter__(cls):
        return (f for f in super().__iter__() if f.value >= 0)

    def __len__(cls):
        return sum(1 for _ in cls.__iter__())


class Face(enum.IntEnum, metaclass=_FaceMeta):
    """Box faces (``ck_face``). Outward normals in the box frame: FRONT -z, LEFT -x, RIGHT +x,
    BOTTOM -y, TOP +y, BACK +z. ``NONE`` (-1) marks a miss in batched results; it is a member
    (``Face(-1) is Face.NONE``) but ``list(Face)`` and ``len(Face)`` count the six faces only, so
    ``for f in Face: coverage.face(f)`` visits every face."""

    NONE = -1
    FRONT = 0
    LEFT = 1
    RIGHT = 2
    BOTTOM = 3
    TOP = 4
    BACK = 5


class Corner(enum.IntEnum):
    """Box corners (``ck_corner``), the order of :meth:`Box.corners`. Local signs (x, y, z) times
    size/2: (-,+,-) (+,+,-) (+,-,-) (-,-,-) (-,+,+) (+,+,+) (+,-,+) (-,-,+). The lowercase member
    names are the keys of the reference app's ``boundingbox.json``."""

    TOP_LEFT_FRONT = 0
    TOP_RIGHT_FRONT = 1
    BOT_RIGHT_FRONT = 2
    BOT_LEFT_FRONT = 3
    TOP_LEFT_BACK = 4
    TOP_RIGHT_BACK = 5
    BOT_RIGHT_BACK = 6
    BOT_LEFT_BACK = 7


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


# ------------------------------------------------------------------------------------------
# Intrinsics
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics of a ``width`` x ``height`` image, in pixels (``ck_intrinsics``).

    Pixel coordinates are continuous with (0, 0) at the top-left corner of the image and v
    pointing down; the centre of pixel (i, j) is (i + 0.5, j + 0.5). The ray through (u, v) has
    the camera direction ``((u - cx) / fx, -(v - cy) / fy, -1)``.

    Immutable and hashable. fx, fy, cx, cy are stored rounded to float32, the precision of
    ``ck_intrinsics``, so an Intrinsics equals its round trip through the library. The values are
    checked on construction, by the library's own rule (finite, positive focal lengths, principal
    point finite, 1 <= width, height <= 65536): an ``Intrinsics`` that exists is valid.

    Raises:
        InvalidArgumentError: values the library refuses (e.g. ``fx=-1``).
    """

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    def __post_init__(self):
        for name in ("fx", "fy", "cx", "cy"):
            with np.errstate(over="ignore"):  # a huge value becomes inf; the library rejects it
                object.__setattr__(self, name, float(np.float32(as_float(getattr(self, name), name))))
        for name in ("width", "height"):
            object.__setattr__(self, name, as_uint32(getattr(self, name), name))
        c = _ffi.ck_intrinsics(self.fx, self.fy, self.cx, self.cy, self.width, self.height)
        try:  # the library's own rule, named after this class rather than the checking call
            _lib.ck_intrinsics_to_matrix(_VALIDATE_SCRATCH, c, 0)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(e.code, e.name, e.message.replace("ck_intrinsics_to_matrix: ", "Intrinsics: ", 1)) from None
        # The checked struct, built once: every call taking these intrinsics passes it as it is
        # (never modified; not a dataclass field, so equality, hash and repr ignore it).
        object.__setattr__(self, "_c", c)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_c", None)  # pickles hold the fields only; _to_c rebuilds the struct
        return state

    @classmethod
    def from_matrix(cls, K, width: int, height: int, column_major: bool = False) -> "Intrinsics":
        """From a camera matrix ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` (``ck_intrinsics_from_matrix``):
        a (3, 3) array as it reads, or 9 numbers row by row, or column by column with
        ``column_major`` (ARKit's simd_float3x3, MultiScan's camera-info ``intrinsics``).

        Raises:
            InvalidArgumentError: skew, a matrix in the other layout, or values ck_intrinsics
                cannot hold. ValueError: neither (3, 3) nor 9 numbers.
        """
        a = np.asarray(K, dtype=np.float64)
        if a.shape == (3, 3):
            flat, layout = a.reshape(9), _ffi.MATRIX_ROW_MAJOR
        elif a.shape == (9,):
            flat, layout = a, (_ffi.MATRIX_COLUMN_MAJOR if column_major else _ffi.MATRIX_ROW_MAJOR)
        else:
            raise ValueError(f"K must be a (3, 3) matrix or 9 numbers, got shape {a.shape}")
        out = _ffi.ck_intrinsics()
        with np.errstate(over="ignore"):
            m = np.ascontiguousarray(flat, dtype=np.float32)
        _lib.ck_intrinsics_from_matrix(out, m, layout, as_uint32(width, "width"), as_uint32(height, "height"))
        return cls._from_c(out)

    @property
    def matrix(self) -> np.ndarray:
        """The 3x3 camera matrix ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` (float64)."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def scale(self, width: int, height: int) -> "Intrinsics":
        """These intrinsics rescaled to another resolution of the same camera (e.g. RGB
        1920x1440 -> depth 256x192): fx, cx scale by width'/width and fy, cy by height'/height.

        Raises:
            InvalidArgumentError: invalid intrinsics or a size outside 1..65536.
        """
        out = _ffi.ck_intrinsics()
        _lib.ck_intrinsics_scale(out, self._to_c(), as_uint32(width, "width"), as_uint32(height, "height"))
        return Intrinsics._from_c(out)

    def _to_c(self) -> "_ffi.ck_intrinsics":
        """The ``ck_intrinsics`` (cached; callers pass it, never modify it)."""
        try:
            return self._c
        except AttributeError:  # an unpickled or copied instance
            c = _ffi.ck_intrinsics(self.fx, self.fy, self.cx, self.cy, self.width, self.height)
            object.__setattr__(self, "_c", c)
            return c

    @classmethod
    def _from_c(cls, k: "_ffi.ck_intrinsics") -> "Intrinsics":
        return cls(k.fx, k.fy, k.cx, k.cy, k.width, k.height)


def _check_intrinsics(intrinsics) -> "_ffi.ck_intrinsics":
    """The cached ``ck_intrinsics`` of an :class:`Intrinsics` (valid by construction: no check
    here beyond the type)."""
    if not isinstance(intrinsics, Intrinsics):
        raise TypeError(f"intrinsics must be a capturekit.Intrinsics, not {type(intrinsics).__name__}")
    return intrinsics._to_c()


# ------------------------------------------------------------------------------------------
# Ray and Hit
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Ray:
    """A world-space ray (``ck_ray``): ``origin`` and ``direction``, read-only float32 arrays (3,).

    The direction need not be unit length (:func:`~capturekit.ray_from_pixel` returns unit
    directions); hit distances are always metres along the ray.
    """

    origin: np.ndarray
    direction: np.ndarray

    def __post_init__(self):
        for name in ("origin", "direction"):
            arr = np.array(as_vector(getattr(self, name), 3, name), dtype=np.float32)
            object.__setattr__(self, name, _readonly(arr))

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_c", None)  # the cached struct is rebuilt on demand
        return state

    def point_at(self, distance: float) -> np.ndarray:
        """The point ``distance`` metres along the ray (float64 array (3,))."""
        d = self.direction.astype(np.float64)
        return self.origin + d / np.linalg.norm(d) * as_float(distance, "distance")

    def __eq__(self, other):
        if not isinstance(other, Ray):
            return NotImplemented
        return np.array_equal(self.origin, other.origin) and np.array_equal(self.direction, other.direction)

    __hash__ = None

    def _to_c(self) -> "_ffi.ck_ray":
        """The ``ck_ray`` (built once, cached: the fields are read-only; callers never modify it)."""
        try:
            return self._c
        except AttributeError:
            c = _ffi.ck_ray(_ffi.vec3(self.origin.tolist()), _ffi.vec3(self.direction.tolist()))
            object.__setattr__(self, "_c", c)
            return c

    @classmethod
    def _from_c(cls, r: "_ffi.ck_ray") -> "Ray":
        """A Ray owning `r` (a struct the caller made for this call and does not reuse): its
        fields are read-only float32 views of one copy of the struct's bytes."""
        values = np.frombuffer(bytes(r), _F32)  # read-only: backed by bytes
        ray = object.__new__(cls)
        d = ray.__dict__
        d["origin"], d["direction"], d["_c"] = values[:3], values[3:], r
        return ray


def _check_ray(ray) -> "_ffi.ck_ray":
    if type(ray) is Ray:
        try:
            return ray._c
        except AttributeError:
            pass
    if not isinstance(ray, Ray):
        raise TypeError(f"ray must be a capturekit.Ray, not {type(ray).__name__}")
    return ray._to_c()


@dataclass(frozen=True, eq=False)
class Hit:
    """Where a ray hit a plane or a box (``ck_hit``).

    Attributes:
        point: the hit point, read-only float32 array (3,).
        distance: metres from the ray origin.
        face: the box face hit (:class:`Face`), ``Face.NONE`` for planes.
        inside: True when the ray started inside the box (faces included); then ``face`` is the
            face it leaves through and ``distance`` the distance to that exit.

    Misses are not Hits: the ray functions return ``None``.
    """

    point: np.ndarray
    distance: float
    face: Face
    inside: bool

    def __eq__(self, other):
        if not isinstance(other, Hit):
            return NotImplemented
        return (np.array_equal(self.point, other.point) and self.distance == other.distance
                and self.face == other.face and self.inside == other.inside)

    __hash__ = None

    @classmethod
    def _from_c(cls, h: "_ffi.ck_hit") -> "Hit":
        raw = bytes(h)
        distance, face, inside = _HIT_TAIL.unpack_from(raw, _HIT_TAIL_AT)
        hit = object.__new__(cls)
        d = hit.__dict__
        d["point"] = np.frombuffer(raw, _F32, 3)  # read-only: backed by bytes
        d["distance"] = distance
        d["face"] = _FACE_OF[face] if face in _FACE_OF else Face(face)
        d["inside"] = inside != 0
        return hit


#: ck_hit after the point: float distance, int32 face, int32 inside.
_HIT_TAIL = struct.Struct("=fii")
_HIT_TAIL_AT = _ffi.ck_hit.distance.offset
#: Face members by value (Face(v) costs a few hundred ns per call).
_FACE_OF = {int(f): f for f in Face.__members__.values()}


# ------------------------------------------------------------------------------------------
# Pose helpers
# ------------------------------------------------------------------------------------------


def pose_from_quat(rotation, translation) -> np.ndarray:
    """The rigid pose (4, 4) rotating by quaternion ``rotation = (x, y, z, w)`` (normalised by
    the library; must not be zero) and then translating by ``translation = (x, y, z)``.

    Raises:
        InvalidArgumentError: a zero or non-finite quaternion, a non-finite translation.
    """
    out = _ffi.ck_mat4()
    _lib.ck_pose_from_quat(out, _ffi.quat(as_vector(rotation, 4, "rotation")), as_vec3(translation, "translation"))
    return _ffi.mat4_to_array(out)


def look_at(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """The camera-to-world pose (4, 4) float32 of a camera at ``eye`` looking at ``target``
    (world metres), with OpenGL/ARKit camera axes: the camera's -z points at the target, +x is
    horizontal (perpendicular to ``up``) to the right of the view, +y as close to ``up`` as the
    view allows; the translation is ``eye``. ``ck_pose_look_at``.

    Raises:
        InvalidArgumentError: a non-finite value, a zero ``up``, ``eye == target``, or a view
            direction parallel to ``up``.
    """
    out = _ffi.ck_mat4()
    _lib.ck_pose_look_at(out, as_vec3(eye, "eye"), as_vec3(target, "target"), as_vec3(up, "up"))
    return _ffi.mat4_to_array(out)


def pose_to_quat(pose) -> tuple:
    """Splits a rigid pose into ``(quaternion, translation)``: a unit quaternion float32 (4,)
    ``(x, y, z, w)`` with ``w >= 0`` and the translation float32 (3,).

    Raises:
        InvalidArgumentError: a non-finite or non-rigid pose.
    """
    q, t = _ffi.ck_quat(), _ffi.ck_vec3()
    status = _pose_to_quat(q, t, as_mat4(pose, "pose"))
    if status < 0:
        _fail(status)
    return _ffi.quat_to_array(q), _ffi.vec3_to_array(t)


def pose_inverse(pose) -> np.ndarray:
    """The inverse of a rigid pose, ``[R^T | -R^T t]`` (camera-to-world <-> world-to-camera).

    Raises:
        InvalidArgumentError: a non-finite or non-rigid pose.
    """
    out = _mat4()
    status = _pose_inverse(out, as_mat4(pose, "pose"))
    if status < 0:
        _fail(status)
    return _mat4_to_array(out)


def mat4_multiply(a, b) -> np.ndarray:
    """The product ``a @ b`` of two finite 4x4 matrices, computed by the library in float32.

    Raises:
        InvalidArgumentError: a non-finite input or product.
    """
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is _F32 and b.dtype is _F32 \
            and a.shape == _SHAPE44 and b.shape == _SHAPE44:
        try:
            ra, rb = _mat4_bytes(a), _mat4_bytes(b)  # C-contiguous: row-major bytes, no copy made
        except (TypeError, ValueError, BufferError):
            pass
        else:
            # Row-major bytes read as column-major are the transpose, and (a b)^T = b^T a^T: the
            # library multiplies b^T by a^T and stores the result column-major, i.e. a b row-major.
            # Each element is the same sum over k of the same products, in the same order, so the
            # result is bit-identical to the canonical call, without two transposing copies.
            out = _mat4()
            if _mat4_multiply(out, rb, ra) >= 0:
                return _rows(out)
            # an error: the canonical call below names the argument at fault
    out = _mat4()
    status = _mat4_multiply(out, as_mat4(a, "a"), as_mat4(b, "b"))
    if status < 0:
        _fail(status)
    return _mat4_to_array(out)


def mat4_transpose(m) -> np.ndarray:
    """The transpose ``m.T`` of a finite 4x4 matrix (in C this converts column-major storage to
    row-major; here, where matrices are plain [row, column] arrays, it is just the transpose).

    Raises:
        InvalidArgumentError: a non-finite matrix.
    """
    if type(m) is np.ndarray and m.dtype is _F32 and m.shape == _SHAPE44:
        try:
            rm = _mat4_bytes(m)  # row-major bytes = the column-major storage of m^T
        except (TypeError, ValueError, BufferError):
            pass
        else:  # the library transposes m^T and stores m column-major: m^T row-major
            out = _mat4()
            if (status := _mat4_transpose(out, rm)) < 0:
                _fail(status)  # the check (finite) is element-wise: the same message
            return _rows(out)
    out = _mat4()
    status = _mat4_transpose(out, as_mat4(m, "m"))
    if status < 0:
        _fail(status)
    return _mat4_to_array(out)


def opengl_to_opencv(pose) -> np.ndarray:
    """Camera-to-world pose with OpenGL/ARKit camera axes -> OpenCV/COLMAP camera axes
    (x right, y down, z forward): ``pose @ diag(1, -1, -1, 1)``.

    Raises:
        InvalidArgumentError: a non-finite or non-rigid pose.
    """
    out = _mat4()
    status = _gl_to_cv(out, as_mat4(pose, "pose"))
    if status < 0:
        _fail(status)
    return _mat4_to_array(out)


def opencv_to_opengl(pose) -> np.ndarray:
    """The inverse of :func:`opengl_to_opencv` (the same flip, ``pose @ diag(1, -1, -1, 1)``).

    Raises:
        InvalidArgumentError: a non-finite or non-rigid pose.
    """
    out = _mat4()
    status = _cv_to_gl(out, as_mat4(pose, "pose"))
    if status < 0:
        _fail(status)
    return _mat4_to_array(out)


def yaw_pitch_roll(pose) -> tuple:
    """``(yaw, pitch, roll)`` in radians of a camera pose, with
    ``R = R_y(yaw) @ R_x(pitch) @ R_z(roll)`` (ARKit's eulerAngles order).

    * yaw: heading of the view direction about +y, 0 looking down -z, positive turning left
      (counter-clockwise seen from above), in (-pi, pi];
    * pitch: elevation of the view direction, positive looking up, in [-pi/2, pi/2];
    * roll: rotation about the view direction, in (-pi, pi]. At |pitch| = pi/2 roll is 0 and
      yaw carries the rest.

    Raises:
        InvalidArgumentError: a non-finite or non-rigid pose.
    """
    yaw, pitch, roll = _ffi.out_f32(), _ffi.out_f32(), _ffi.out_f32()
    status = _yaw_pitch_roll(yaw, pitch, roll, as_mat4(pose, "pose"))
    if status < 0:
        _fail(status)
    return yaw.value, pitch.value, roll.value
