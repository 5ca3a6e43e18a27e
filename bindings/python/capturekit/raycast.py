"""Rays from pixels, and rays against planes, the floor and the box (single and batched).

Misses are normal outcomes, not errors: the single-ray functions return ``None``, the batched
ones report ``Face.NONE`` (-1) and an infinite distance for that ray.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from . import _ffi
from ._util import as_float, as_mat4, as_vec3, check_box, float_rows
from .box import Box
from .geometry import Hit, Ray, _check_intrinsics, _check_ray

__all__ = ["ray_from_pixel", "ray_plane", "ray_floor", "ray_box", "raycast_box_pixels", "raycast_box_grid"]

_lib = _ffi.lib
_fail = _ffi.fail
_CK_MISS = _ffi.CK_MISS
_ck_ray, _ck_hit = _ffi.ck_ray, _ffi.ck_hit
_ray_from_pixel = _ffi.fast("ck_ray_from_pixel")
_ray_plane = _ffi.fast("ck_ray_plane")
_ray_floor = _ffi.fast("ck_ray_floor")
_ray_box = _ffi.fast("ck_ray_box")
_ray_from_c, _hit_from_c = Ray._from_c, Hit._from_c


def _hit_or_none(status: int, hit: "_ffi.ck_hit") -> Optional[Hit]:
    if status < 0:
        _fail(status)
    return None if status == _CK_MISS else _hit_from_c(hit)


def ray_from_pixel(camera_pose, intrinsics, u: float, v: float) -> Ray:
    """The world-space ray through pixel (u, v): origin at the camera, unit direction.

    (u, v) are continuous pixel coordinates, (0, 0) at the top-left corner, v down; the centre of
    pixel (i, j) is (i + 0.5, j + 0.5). They may lie outside the image.

    Args:
        camera_pose: camera-to-world pose (4, 4), OpenGL camera axes.
        intrinsics: an :class:`Intrinsics`.

    Raises:
        InvalidArgumentError: a bad pose, intrinsics or pixel.
    """
    out = _ck_ray()
    status = _ray_from_pixel(out, as_mat4(camera_pose, "camera_pose"), _check_intrinsics(intrinsics),
                             as_float(u, "u"), as_float(v, "v"))
    if status < 0:
        _fail(status)
    return _ray_from_c(out)


def ray_plane(ray: Ray, point, normal) -> Optional[Hit]:
    """The ray against the plane through ``point`` with ``normal`` (any non-zero length), both
    sides.

    Returns:
        The :class:`Hit` (``face`` is ``Face.NONE``), or None when the plane is behind the origin
        or the ray is parallel to it (a ray lying in the plane misses too).

    Raises:
        InvalidArgumentError: non-finite values, a zero direction or normal.
    """
    hit = _ck_hit()
    status = _ray_plane(hit, _check_ray(ray), as_vec3(point, "point"), as_vec3(normal, "normal"))
    if status == 0:
        return _hit_from_c(hit)
    return _hit_or_none(status, hit)  # a miss, or an error to raise


def ray_floor(ray: Ray, floor_y: float) -> Optional[Hit]:
    """The ray against the horizontal plane ``y = floor_y``; same outcomes as :func:`ray_plane`."""
    hit = _ck_hit()
    status = _ray_floor(hit, _check_ray(ray), as_float(floor_y, "floor_y"))
    return _hit_or_none(status, hit)


def ray_box(ray: Ray, box: Box) -> Optional[Hit]:
    """The ray against the closed box: touching an edge or a corner hits.

    Returns:
        The :class:`Hit` with the face entered first (ties at an edge or corner go to the lower
        face index); for a ray starting inside, the exit face with ``inside=True``. None when the
        box is missed or lies entirely behind the origin.

    Raises:
        InvalidArgumentError: a non-finite ray or a zero direction.
    """
    hit = _ck_hit()
    status = _ray_box(hit, _check_ray(ray), check_box(box))
    if status == 0:
        return _hit_from_c(hit)
    return _hit_or_none(status, hit)  # a miss, or an error to raise


def raycast_box_pixels(pixels, camera_pose, intrinsics, box: Box) -> Tuple[np.ndarray, np.ndarray]:
    """Casts one ray per pixel against the box, in one library call.

    Args:
        pixels: (N, 2) array of (u, v) pixel coordinates. float32 C-contiguous arrays are used
            as they are; any other floating dtype or layout is converted with
            ``np.ascontiguousarray(pixels, dtype=np.float32)``. Integer, bool, object or complex
            arrays raise TypeError and other shapes ValueError (before the library is called).
            A non-finite pixel is a miss. N may be 0.
        camera_pose: camera-to-world pose (4, 4).
        intrinsics: an :class:`Intrinsics`.
        box: the :class:`Box`.

    Returns:
        ``(faces, distances)``: int32 array (N,) of :class:`Face` values (``Face.NONE`` = -1 on a
        miss) and float32 array (N,) of metres (``inf`` on a miss). Same answers as
        :func:`ray_from_pixel` + :func:`ray_box`, except that a ray within float rounding of an
        edge may report either neighbouring face.

    Raises:
        InvalidArgumentError: a bad pose, intrinsics or box.
    """
    uv = float_rows(pixels, 2, "pixels")
    pose, k, b = as_mat4(camera_pose, "camera_pose"), _check_intrinsics(intrinsics), check_box(box)
    n = uv.shape[0]
    faces = np.empty(n, dtype=np.int32)
    distances = np.empty(n, dtype=np.float32)
    _lib.ck_ray_box_pixels(faces, distances, uv, n, pose, k, b)
    return faces, distances


def raycast_box_grid(camera_pose, intrinsics, box: Box) -> Tuple[np.ndarray, np.ndarray]:
    """Casts a ray through the centre of every pixel of the ``intrinsics.width`` x
    ``intrinsics.height`` image (use :meth:`Intrinsics.scale` for a coarser grid).

    Returns:
        ``(faces, distances)``: int32 array (height, width) of :class:`Face` values and float32
        array (height, width) of metres; element ``[row, column]`` is the ray through pixel
        centre ``(column + 0.5, row + 0.5)``. Misses are ``Face.NONE`` and ``inf``.

    Raises:
        InvalidArgumentError: a bad pose, intrinsics or box.
    """
    k = _check_intrinsics(intrinsics)
    pose, b = as_mat4(camera_pose, "camera_pose"), check_box(box)
    w, h = int(k.width), int(k.height)
    # Sizes beyond the library's limit are left for it to reject; do not allocate for them.
    cap = w * h if 1 <= w <= _ffi.CK_MAX_IMAGE_DIMENSION and 1 <= h <= _ffi.CK_MAX_IMAGE_DIMENSION else 0
    faces = np.empty(cap, dtype=np.int32)
    distances = np.empty(cap, dtype=np.float32)
    count = np.zeros(1, dtype=np.uintp)
    _lib.ck_ray_box_grid(faces, distances, cap, count, pose, k, b)
    return faces.reshape(h, w), distances.reshape(h, w)
