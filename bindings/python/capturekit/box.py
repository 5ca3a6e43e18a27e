"""The oriented bounding box around the captured object."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import _ffi
from ._util import as_uint32, as_float, as_int, as_mat4, as_vec3, float_rows
from .geometry import Hit, _check_intrinsics

__all__ = ["Box", "FaceFrame", "BOX_MIN_SIZE", "BOX_MAX_SIZE"]

_lib = _ffi.lib
_fail = _ffi.fail
# Edits and queries a UI makes per event: fast function objects, the status checked inline.
_box_set_center = _ffi.fast("ck_box_set_center")
_box_translate = _ffi.fast("ck_box_translate")
_box_translate_camera = _ffi.fast("ck_box_translate_camera")
_box_set_yaw = _ffi.fast("ck_box_set_yaw")
_box_face_camera = _ffi.fast("ck_box_face_camera")
_box_rotate = _ffi.fast("ck_box_rotate")
_box_rotate_degrees = _ffi.fast("ck_box_rotate_degrees")
_box_set_size = _ffi.fast("ck_box_set_size")
_box_scale = _ffi.fast("ck_box_scale")
_box_extend_face = _ffi.fast("ck_box_extend_face")
_box_set_floor = _ffi.fast("ck_box_set_floor")
_box_clear_floor = _ffi.fast("ck_box_clear_floor")
_box_place_on_floor = _ffi.fast("ck_box_place_on_floor")
_box_contains = _ffi.fast("ck_box_contains")
_box_place_at_pixel = _ffi.fast("ck_box_place_at_pixel")

#: Smallest accepted box edge, metres (``CK_BOX_MIN_SIZE``).
BOX_MIN_SIZE = _ffi.CK_BOX_MIN_SIZE
#: Largest accepted box edge, metres (``CK_BOX_MAX_SIZE``).
BOX_MAX_SIZE = _ffi.CK_BOX_MAX_SIZE


class FaceFrame(NamedTuple):
    """A box face's frame, from :meth:`Box.face`.

    Attributes:
        center: centre of the face, float32 (3,).
        normal: outward unit normal, float32 (3,).
        orientation: unit quaternion ``(x, y, z, w)`` float32 (4,) of the rotation whose +z axis
            is the normal (side faces keep +y up; the top face's +y points to the box's front,
            the bottom face's to its back).
    """

    center: np.ndarray
    normal: np.ndarray
    orientation: np.ndarray


class Box:
    """An upright oriented box (``ck_box``): centre, size, yaw about +y and an optional floor.

    A local point ``p`` maps to the world as ``center + R_y(yaw) @ p`` with
    ``R_y = [[cos, 0, sin], [0, 1, 0], [-sin, 0, cos]]``. Front is local -z, left -x, top +y;
    ``size`` holds the full edge lengths along local x, y, z. Corners and faces are numbered as in
    :class:`Corner` and :class:`Face`.

    **A Box is a mutable object**, like the ``ck_box`` a C caller edits in place: the editing
    methods (``set_center``, ``translate``, ``rotate``, ``set_floor``, ...) change the box and
    return ``None``. A failing edit raises and leaves the box unchanged. Use :meth:`copy` to keep
    a version. Boxes compare equal when all their fields are equal; they are not hashable.

    Invariants kept by every edit: each edge within [``BOX_MIN_SIZE``, ``BOX_MAX_SIZE``] metres,
    yaw in (-pi, pi], and with a floor the bottom face lies on it
    (``center[1] == floor + size[1] / 2``).

    Args:
        center: (x, y, z) in metres.
        size: full edge lengths (x, y, z) in metres.
        yaw: rotation about +y in radians (stored wrapped to (-pi, pi]).
        floor: if given, the floor height; the box is then stood on it (its ``center[1]`` becomes
            ``floor + size[1] / 2``), exactly as :meth:`set_floor` does.

    Raises:
        InvalidArgumentError: non-finite values or sizes outside the limits.
    """

    __slots__ = ("_c", "_ptr")  # the ck_box, and a pointer to it made on first use (box_pointer)
    __hash__ = None

    def __init__(self, center, size, yaw: float = 0.0, *, floor: Optional[float] = None):
        c = _ffi.ck_box()
        _lib.ck_box_init(c, as_vec3(center, "center"), as_vec3(size, "size"), as_float(yaw, "yaw"))
        if floor is not None:
            _lib.ck_box_set_floor(c, as_float(floor, "floor"))
        self._c = c
        self._ptr = None

    @classmethod
    def read_json(cls, path, pass_: int = 0) -> "Box":
        """The box of capture pass ``pass_`` from a boundingbox.json (ours or the reference app's),
        restored exactly (``ck_box_read``)."""
        import os
        c = _ffi.ck_box()
        _lib.ck_box_read(c, os.fsencode(os.fspath(path)), as_uint32(pass_, "pass_"))
        return cls._from_c(c)

    @classmethod
    def _from_c(cls, c: "_ffi.ck_box") -> "Box":
        box = cls.__new__(cls)
        box._c = _ffi.ck_box.from_buffer_copy(c)
        box._ptr = None
        return box

    # -- fields ----------------------------------------------------------------------------

    @property
    def center(self) -> np.ndarray:
        """Centre (x, y, z), a new float32 array (3,)."""
        return _ffi.vec3_to_array(self._c.center)

    @property
    def size(self) -> np.ndarray:
        """Full edge lengths along local x, y, z, a new float32 array (3,)."""
        return _ffi.vec3_to_array(self._c.size)

    @property
    def yaw(self) -> float:
        """Rotation about +y, radians, in (-pi, pi]."""
        return float(self._c.yaw)

    @property
    def floor(self) -> Optional[float]:
        """The floor height (world y), or None when the box has no floor."""
        return float(self._c.floor) if self._c.has_floor else None

    @property
    def has_floor(self) -> bool:
        """True when a floor is set."""
        return bool(self._c.has_floor)

    def copy(self) -> "Box":
        """An independent copy."""
        return Box._from_c(self._c)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        c = self._c
        fields = (self.center.tolist(), self.size.tolist(), float(c.yaw), float(c.floor), int(c.has_floor))
        return (_box_from_fields, fields)

    def __eq__(self, other):
        if not isinstance(other, Box):
            return NotImplemented
        a, b = self._c, other._c
        return (np.array_equal(self.center, other.center) and np.array_equal(self.size, other.size)
                and a.yaw == b.yaw and a.has_floor == b.has_floor and (not a.has_floor or a.floor == b.floor))

    def __repr__(self):
        def fmt(v):
            return "(" + ", ".join(f"{x:.6g}" for x in v) + ")"

        floor = f", floor={self._c.floor:.6g}" if self._c.has_floor else ""
        return f"Box(center={fmt(self.center)}, size={fmt(self.size)}, yaw={self._c.yaw:.6g}{floor})"

    # -- queries ---------------------------------------------------------------------------

    def corners(self) -> np.ndarray:
        """The 8 world-space corners as a float32 array (8, 3), rows in :class:`Corner` order."""
        out = np.empty((8, 3), dtype=np.float32)
        _lib.ck_box_corners(out, self._c)
        return out

    def face(self, face: int) -> FaceFrame:
        """Centre, outward unit normal and orientation of a face (a :class:`Face`, 0..5).

        Raises:
            InvalidArgumentError: ``face`` not in 0..5 (``Face.NONE`` included).
        """
        center, normal, q = _ffi.ck_vec3(), _ffi.ck_vec3(), _ffi.ck_quat()
        _lib.ck_box_face(center, normal, q, self._c, as_int(face, "face"))
        return FaceFrame(_ffi.vec3_to_array(center), _ffi.vec3_to_array(normal), _ffi.quat_to_array(q))

    def contains(self, point) -> bool:
        """True if ``point`` (x, y, z) is inside the closed box (points on a face count).

        Raises:
            InvalidArgumentError: a non-finite point.
        """
        out = _ffi.out_i32()
        if (status := _box_contains(out, self._c, as_vec3(point, "point"))) < 0:
            _fail(status)
        return out.value != 0

    # -- edits (in place; unchanged on error) ----------------------------------------------

    def set_center(self, center) -> None:
        """Moves the centre to ``center``. With a floor, ``center[1]`` is ignored (the box stays
        on the floor)."""
        if (status := _box_set_center(self._c, as_vec3(center, "center"))) < 0:
            _fail(status)

    def translate(self, delta) -> None:
        """Moves the box by a world-space offset (x, y, z). With a floor, the y offset is ignored."""
        if (status := _box_translate(self._c, as_vec3(delta, "delta"))) < 0:
            _fail(status)

    def translate_camera(self, camera_pose, right: float = 0.0, up: float = 0.0, forward: float = 0.0) -> None:
        """Moves the box relative to the camera, as a phone UI does: ``right`` along the camera's
        horizontal right, ``forward`` along its horizontal heading (when looking steeply down or
        up, the direction of the top of the image), ``up`` along world +y (ignored with a floor).

        Args:
            camera_pose: camera-to-world pose (4, 4), see :mod:`capturekit.geometry`.

        Raises:
            InvalidArgumentError: a bad pose or non-finite offsets.
        """
        if (status := _box_translate_camera(self._c, as_mat4(camera_pose, "camera_pose"), as_float(right, "right"),
                                            as_float(up, "up"), as_float(forward, "forward"))) < 0:
            _fail(status)

    def set_yaw(self, yaw: float) -> None:
        """Sets the yaw in radians (any finite angle; stored wrapped to (-pi, pi])."""
        if (status := _box_set_yaw(self._c, as_float(yaw, "yaw"))) < 0:
            _fail(status)

    def face_camera(self, camera_pose) -> None:
        """Turns the box about its vertical axis so that its front face faces the camera (its
        normal points horizontally toward the camera's position): a UI's "face me" tap."""
        if (status := _box_face_camera(self._c, as_mat4(camera_pose, "camera_pose"))) < 0:
            _fail(status)

    def rotate(self, delta: float) -> None:
        """Rotates about the box's vertical axis through its centre by ``delta`` radians."""
        if (status := _box_rotate(self._c, as_float(delta, "delta"))) < 0:
            _fail(status)

    def rotate_degrees(self, delta_degrees: float) -> None:
        """Rotates about the box's vertical axis through its centre by ``delta_degrees`` degrees."""
        if (status := _box_rotate_degrees(self._c, as_float(delta_degrees, "delta_degrees"))) < 0:
            _fail(status)

    def set_size(self, size) -> None:
        """Sets the full edge lengths about the centre (with a floor the bottom stays on the
        floor and the height grows up).

        Raises:
            InvalidArgumentError: a size outside [BOX_MIN_SIZE, BOX_MAX_SIZE].
        """
        if (status := _box_set_size(self._c, as_vec3(size, "size"))) < 0:
            _fail(status)

    def scale(self, factors) -> None:
        """Scales the size by per-axis factors (x, y, z) > 0, or one number for all three,
        about the centre (with a floor: about the bottom).

        Raises:
            InvalidArgumentError: a factor <= 0 or non-finite, or a result outside the limits.
        """
        if np.ndim(factors) == 0:
            f = as_float(factors, "factors")
            factors = (f, f, f)
        if (status := _box_scale(self._c, as_vec3(factors, "factors"))) < 0:
            _fail(status)

    def extend_face(self, face: int, distance: float) -> None:
        """Moves one face outward by ``distance`` metres (negative: inward) while the opposite
        face stays put.

        Raises:
            InvalidArgumentError: a bad face or a resulting size outside the limits.
            StateError: the bottom face while a floor is set (it is held on the floor).
        """
        if (status := _box_extend_face(self._c, as_int(face, "face"), as_float(distance, "distance"))) < 0:
            _fail(status)

    def set_floor(self, floor_y: float) -> None:
        """Sets the floor height and stands the box on it (x, z, size and yaw are kept)."""
        if (status := _box_set_floor(self._c, as_float(floor_y, "floor_y"))) < 0:
            _fail(status)

    def clear_floor(self) -> None:
        """Removes the floor; the box stays where it is."""
        if (status := _box_clear_floor(self._c)) < 0:
            _fail(status)

    def place_on_floor(self, x: float, z: float) -> None:
        """Places the box on its floor with its centre above (x, z).

        Raises:
            StateError: the box has no floor.
        """
        if (status := _box_place_on_floor(self._c, as_float(x, "x"), as_float(z, "z"))) < 0:
            _fail(status)

    def place_at_pixel(self, camera_pose, intrinsics, u: float, v: float) -> Optional[Hit]:
        """Tap to place: casts the ray through pixel (u, v) onto the box's floor and stands the
        box there (centre above the hit point; size and yaw kept).

        Returns:
            The floor :class:`Hit`, or None when the ray does not reach the floor (the box is
            then unchanged).

        Raises:
            StateError: the box has no floor.
            InvalidArgumentError: a bad pose, intrinsics or pixel.
        """
        hit = _ffi.ck_hit()
        status = _box_place_at_pixel(hit, self._c, as_mat4(camera_pose, "camera_pose"),
                                     _check_intrinsics(intrinsics), as_float(u, "u"), as_float(v, "v"))
        if status < 0:
            _fail(status)
        return None if status == _ffi.CK_MISS else Hit._from_c(hit)

    # -- fitting ---------------------------------------------------------------------------

    @classmethod
    def fit_points(cls, points, *, floor: Optional[float] = None, floor_margin: Optional[float] = None,
                   padding: Optional[float] = None) -> "Box":
        """Fits an upright box to points (e.g. depth points of an object).

        The yaw minimises the footprint (the minimum-area rectangle of the points' x-z convex
        hull), the height spans the points, and with ``floor`` the bottom stands on the floor.
        Sizes below ``BOX_MIN_SIZE`` are raised to it.

        Args:
            points: float array (N, 3) of world points. Any floating dtype and layout is accepted
                and converted to a C-contiguous float32 copy when needed; integer, object and
                other non-float arrays raise TypeError, other shapes ValueError.
            floor: floor height; when given the box stands on it and points below
                ``floor + floor_margin`` are ignored.
            floor_margin: metres above the floor still counted as floor (library default 0.01).
            padding: metres added on every side, top included, never below the floor
                (library default 0).

        Raises:
            NotFoundError: no point is left (no points, or all on or below the floor).
            InvalidArgumentError: non-finite points or options.
        """
        pts = float_rows(points, 3, "points")
        options = _ffi.defaults("ck_fit_options_init", _ffi.ck_fit_options)
        if floor is not None:
            options.use_floor = 1
            options.floor = as_float(floor, "floor")
        if floor_margin is not None:
            options.floor_margin = as_float(floor_margin, "floor_margin")
        if padding is not None:
            options.padding = as_float(padding, "padding")
        out = _ffi.ck_box()
        _lib.ck_box_fit_points(out, pts, pts.shape[0], options)
        return cls._from_c(out)


def floor_from_points(points, tolerance: float = 0.015) -> "tuple[float, int]":
    """The floor height under world points (y up), e.g. :func:`capturekit.depth_to_points` of a
    few depth frames (``ck_floor_from_points``): the lowest horizontal layer 2 x tolerance thick
    holding at least 30 % of the densest layer's points, robust to the object on the floor.
    Returns ``(floor_y, inliers)``.

    Raises:
        NotFoundError: fewer than 3 points support any layer.
        InvalidArgumentError: non-finite points, tolerance not in (0, 1] m.
    """
    pts = float_rows(points, 3, "points")
    y = np.zeros(1, np.float32)
    n = np.zeros(1, np.uintp)
    _lib.ck_floor_from_points(y, n, pts, pts.shape[0], as_float(tolerance, "tolerance"))
    return float(y[0]), int(n[0])


def _box_from_fields(center, size, yaw, floor, has_floor) -> Box:
    """Unpickles a Box exactly (fields as stored; the next edit re-validates)."""
    c = _ffi.ck_box(_ffi.vec3(center), _ffi.vec3(size), yaw, floor, has_floor)
    return Box._from_c(c)
