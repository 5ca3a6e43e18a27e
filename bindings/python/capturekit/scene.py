"""The library's synthetic test scene (``ck_scene.h``): LiDAR-like depth, confidence and RGB
rendered by ray casting, deterministic for a seed, a frame number, a pose and intrinsics."""

from __future__ import annotations

import weakref

import numpy as np

from . import _ffi
from ._util import as_mat4
from .box import Box
from .geometry import Intrinsics, _check_intrinsics


class Scene:
    """A synthetic room with a target box on the floor at the origin. Use as a context manager or
    call :meth:`close` (idempotent)."""

    def __init__(self, seed: int = 1):
        handle = _ffi.ck_scene_p()
        _ffi.lib.ck_scene_create(handle, int(seed))
        self._handle = handle
        self._finalizer = weakref.finalize(self, _ffi.lib.ck_scene_free, handle)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _h(self):
        if not self._finalizer.alive:
            raise ValueError("the scene is closed")
        return self._handle

    def target(self) -> Box:
        """The capture target's box (standing on the floor, y = 0)."""
        raw = _ffi.ck_box()
        _ffi.lib.ck_scene_target(raw, self._h())
        return Box._from_c(raw)

    def render_depth(self, pose, intrinsics: Intrinsics, frame: int = 0):
        """(depth float32 (h, w) metres with 0 = invalid, confidence uint8 (h, w))."""
        k = _check_intrinsics(intrinsics)
        depth = np.zeros((k.height, k.width), np.float32)
        conf = np.zeros((k.height, k.width), np.uint8)
        written = np.zeros(1, np.uintp)
        _ffi.lib.ck_scene_render_depth(depth.ctypes.data, conf.ctypes.data, depth.size, written, self._h(),
                                       as_mat4(pose, "pose"), k, int(frame))
        return depth, conf

    def render_rgb(self, pose, intrinsics: Intrinsics):
        """An RGB image, uint8 (h, w, 3)."""
        k = _check_intrinsics(intrinsics)
        rgb = np.zeros((k.height, k.width, 3), np.uint8)
        written = np.zeros(1, np.uintp)
        _ffi.lib.ck_scene_render_rgb(rgb.ctypes.data, rgb.size, written, self._h(), as_mat4(pose, "pose"), k)
        return rgb
