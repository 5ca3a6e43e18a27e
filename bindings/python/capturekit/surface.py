"""Surface coverage from depth (``ck_surface.h``): a voxel map of the box fused from depth, what
the captured views made of each surface element, figures per side, a side-named hint, PLY export.

:class:`Surface` owns a library handle: use it as a context manager or call ``close()``
(idempotent). The map's arrays come out as NumPy arrays: :meth:`Surface.voxels` (states, indexed
``[k, j, i]`` = z, y, x) and :meth:`Surface.elements` (a structured array). One thread at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from . import _ffi
from ._frames import confidence_map, depth_map, image
from ._util import SessionPart, as_float, as_int, as_mat4, check_box, f32, options_to_c, path_arg
from .box import Box
from .errors import BufferTooSmallError
from .events import Event, drain_events
from .geometry import Intrinsics, _check_intrinsics

__all__ = ["SurfaceOptions", "SurfaceSide", "SurfaceFigures", "SurfaceHint", "SurfaceGrid", "Surface",
           "VOXEL_UNKNOWN", "VOXEL_FREE", "VOXEL_OCCUPIED", "PLY_COVERAGE", "PLY_IMAGE", "ELEMENT_DTYPE"]

_lib = _ffi.lib
_SURFACE_VIEW_SIZE = _ffi.sizeof(_ffi.ck_surface_view)  # ck_surface_view.struct_size

VOXEL_UNKNOWN, VOXEL_FREE, VOXEL_OCCUPIED = 0, 1, 2
PLY_COVERAGE, PLY_IMAGE = 0, 1
#: Bits of the elements' ``flags`` (``ck_surface_element.flags``): seen by a view, well covered,
#: has an image colour, out of reach (no view on the rings could cover it well; the figures leave
#: its area out).
ELEMENT_SEEN, ELEMENT_WELL_COVERED, ELEMENT_COLORED, ELEMENT_OUT_OF_REACH = 1, 2, 4, 8
#: dtype of :meth:`Surface.elements` (``ck_surface_element``).
ELEMENT_DTYPE = _ffi.SURFACE_ELEMENT_DTYPE


@dataclass
class SurfaceOptions:
    """Surface options (``ck_surface_options``); see ``ck_surface.h`` for each field."""

    voxel_size: float = 0.0
    max_depth: float = f32(5.0)
    min_confidence: int = 1
    min_views: int = 3
    min_spread_deg: float = f32(15.0)
    max_incidence_deg: float = f32(65.0)
    min_px_per_cm: float = f32(2.0)
    goal_fraction: float = f32(0.9)
    side_mask: int = 0x37
    face_cells: int = 16

    def _to_c(self) -> "_ffi.ck_surface_options":
        c = _ffi.defaults("ck_surface_options_init", _ffi.ck_surface_options)
        return options_to_c(self, c)


@dataclass(frozen=True)
class SurfaceSide:
    """Figures of one side or of all the counted sides (``ck_surface_side``): element counts, and
    the well-covered shares of the observed and of the estimated surface's *area* (with depth each
    element weighs the surface it holds, and surface out of reach (flags ELEMENT_OUT_OF_REACH) is
    left out, so the fractions are not ratios of the counts)."""

    observed: int
    well_covered: int
    frontier: int
    well_fraction: float
    complete_fraction: float
    completed: bool

    @classmethod
    def _from_c(cls, c) -> "SurfaceSide":
        return cls(int(c.observed), int(c.well_covered), int(c.frontier), float(c.well_fraction),
                   float(c.complete_fraction), bool(c.completed))


@dataclass(frozen=True)
class SurfaceFigures:
    """Overall figures (``ck_surface_figures``)."""

    all: SurfaceSide
    from_depth: bool
    frames_fused: int
    views: int
    sides_completed: int
    elements_dropped: int
    voxel_size: float
    memory_bytes: int


@dataclass(frozen=True)
class SurfaceHint:
    """Where to go next (``ck_surface_hint``): ``side`` (-1 when complete), ``move_angle`` (rad,
    positive to your left while facing the object), azimuths and elevations, the prompt ``text``."""

    side: int
    move_angle: float
    camera_azimuth: float
    target_azimuth: float
    camera_elevation: float
    target_elevation: float
    side_complete: float
    text: str


@dataclass(frozen=True)
class SurfaceView:
    """The next-best view (``ck_surface_view``): ``target_pose`` (4 x 4 camera-to-world, looking at
    the box centre), ``move_angle`` (rad, positive to your left while facing the object) and
    ``raise_angle`` (rad, positive higher), azimuths and elevations, the working ``distance``, the
    expected ``gain`` (surface elements) and ``gain_fraction`` (straight after a capture: over the
    unseen surface as last estimated), the ``side`` (-1: nothing to gain), ``complete`` (exact), the
    prompt ``text``."""

    side: int
    complete: bool
    candidates: int
    target_pose: np.ndarray
    move_angle: float
    raise_angle: float
    camera_azimuth: float
    camera_elevation: float
    target_azimuth: float
    target_elevation: float
    distance: float
    gain: float
    gain_fraction: float
    text: str


@dataclass(frozen=True)
class SurfaceGrid:
    """The voxel grid (``ck_surface_grid``): voxel (i, j, k) spans origin + (i, j, k) * voxel_size,
    box frame."""

    dims: tuple
    voxel_size: float
    origin: tuple
    elements: int


class Surface(SessionPart):
    """A surface coverage map of a box (``ck_surface``).

    Args:
        box: the :class:`Box` (copied; re-bind an edited box with :meth:`set_box`).
        options: a :class:`SurfaceOptions` or None for the defaults.
    """

    __slots__ = ()
    _read_only = "a session's surface map is read-only (the session fuses its frames)"

    def __init__(self, box: Box, options: Optional[SurfaceOptions] = None):
        if options is None:
            options = SurfaceOptions()
        elif not isinstance(options, SurfaceOptions):
            raise TypeError(f"options must be SurfaceOptions, not {type(options).__name__}")
        handle = _ffi.ck_surface_p()
        _lib.ck_surface_create(handle, check_box(box), options._to_c())
        self._owner = None
        self._adopt(handle, _lib.ck_surface_free)

    @classmethod
    def _borrow(cls, handle, owner) -> "Surface":
        """A read-only view of a session's map (``ck_session_surface``)."""
        self = cls.__new__(cls)
        self._lend(handle, owner)
        return self

    def fuse(self, depth, intrinsics: Intrinsics, pose, timestamp: float = 0.0, confidence=None) -> None:
        """Fuses one depth frame: a 2-D z-depth map (float metres or uint16 millimetres) with its
        own intrinsics, the camera-to-world pose, optional uint8 confidence of the same shape.
        When the box has a floor, depth within 2 voxels of it is floor, not surface
        (``ck_surface_fuse``: the grid starts there)."""
        handle = self._mutable()
        d, dm = depth_map(depth, "depth")
        c = cm = None
        if confidence is not None:
            c, cm = confidence_map(confidence, "confidence", d.shape)
        _lib.ck_surface_fuse(handle, dm, cm, _check_intrinsics(intrinsics), as_mat4(pose, "pose"),
                             as_float(timestamp, "timestamp"))
        del d, c

    def add_view(self, pose, intrinsics: Intrinsics, timestamp: float = 0.0, pixels=None) -> int:
        """Adds one captured view (optional uint8 (H, W), (H, W, 3|4) pixels give colours);
        returns the number of elements it saw."""
        handle = self._mutable()
        k = _check_intrinsics(intrinsics)
        keep = img = None
        if pixels is not None:
            keep, img = image(pixels, intrinsics, "pixels")
        seen = np.zeros(1, dtype=np.uint32)
        _lib.ck_surface_add_view(seen, handle, as_mat4(pose, "pose"), k, img, as_float(timestamp, "timestamp"))
        del keep
        return int(seen[0])

    def set_box(self, box: Box) -> None:
        """Re-binds to an edited box: the measured surface stays where it is in the world."""
        _lib.ck_surface_set_box(self._mutable(), check_box(box))

    def reset(self) -> None:
        """Forgets every frame, view and event; keeps the box and the options."""
        _lib.ck_surface_reset(self._mutable())

    def figures(self) -> SurfaceFigures:
        out = _ffi.ck_surface_figures()
        _lib.ck_surface_summarize(out, self._h())
        return SurfaceFigures(SurfaceSide._from_c(out.all), bool(out.from_depth), int(out.frames_fused), int(out.views),
                              int(out.sides_completed), int(out.elements_dropped), float(out.voxel_size),
                              int(out.memory_bytes))

    def side(self, face: int) -> SurfaceSide:
        """Figures of one side (a :class:`Face`, 0..5)."""
        out = _ffi.ck_surface_side()
        _lib.ck_surface_side_figures(out, self._h(), as_int(face, "face"))
        return SurfaceSide._from_c(out)

    def hint(self, pose) -> SurfaceHint:
        """The side to capture next from the camera at ``pose`` (``ck_surface_suggest``)."""
        out = _ffi.ck_surface_hint()
        _lib.ck_surface_suggest(out, self._h(), as_mat4(pose, "pose"))
        return SurfaceHint(int(out.side), float(out.move_angle), float(out.camera_azimuth), float(out.target_azimuth),
                           float(out.camera_elevation), float(out.target_elevation), float(out.side_complete),
                           out.text.decode("utf-8"))

    def next_view(self, pose, intrinsics: Optional[Intrinsics] = None) -> SurfaceView:
        """The next-best view from the camera at ``pose`` for a camera with ``intrinsics`` (None:
        the library's default phone camera) (``ck_surface_next_view``)."""
        out = _ffi.ck_surface_view()
        out.struct_size = _SURFACE_VIEW_SIZE
        k = None if intrinsics is None else _check_intrinsics(intrinsics)
        _lib.ck_surface_next_view(out, self._h(), as_mat4(pose, "pose"), k)
        return SurfaceView(int(out.side), bool(out.complete), int(out.candidates), _ffi.mat4_to_array(out.target_pose),
                           float(out.move_angle), float(out.raise_angle), float(out.camera_azimuth),
                           float(out.camera_elevation), float(out.target_azimuth), float(out.target_elevation),
                           float(out.distance), float(out.gain), float(out.gain_fraction), out.text.decode("utf-8"))

    def grid(self) -> SurfaceGrid:
        out = _ffi.ck_surface_grid()
        _lib.ck_surface_grid_info(out, self._h())
        return SurfaceGrid(tuple(int(d) for d in out.dims), float(out.voxel_size), tuple(float(o) for o in out.origin),
                           int(out.elements))

    def voxels(self) -> np.ndarray:
        """Voxel states (VOXEL_UNKNOWN / FREE / OCCUPIED), uint8 array (nz, ny, nx): ``[k, j, i]``."""
        g = self.grid()
        out = np.empty((g.dims[2], g.dims[1], g.dims[0]), dtype=np.uint8)
        count = np.zeros(1, dtype=np.uintp)
        _lib.ck_surface_voxels(out.reshape(-1), out.size, count, self._h())
        return out

    def elements(self) -> np.ndarray:
        """The surface elements, a structured array of :data:`ELEMENT_DTYPE` (position and normal
        in the box frame, views, spread_deg, best_incidence_deg, best_px_per_cm, color, flags, side)."""
        handle = self._h()
        count = np.zeros(1, dtype=np.uintp)
        one = np.empty(1, dtype=ELEMENT_DTYPE)  # the size query (NULL dst is refused, even for none)
        try:
            _lib.ck_surface_elements(one.ctypes.data, 1, count, handle)
            return one[: int(count[0])].copy()
        except BufferTooSmallError:
            pass
        out = np.empty(int(count[0]), dtype=ELEMENT_DTYPE)
        _lib.ck_surface_elements(out.ctypes.data, out.size, count, handle)
        return out[: int(count[0])]

    def export_ply(self, path, colors: int = PLY_COVERAGE, overwrite: bool = False) -> None:
        """Writes the observed surface as a binary PLY point cloud (world coordinates)."""
        _lib.ck_surface_export_ply(self._h(), path_arg(path), as_int(colors, "colors"),
                                   _ffi.CK_OPEN_OVERWRITE if overwrite else 0)

    def next_event(self) -> Optional[Event]:
        e = _ffi.ck_event()
        return Event._from_c(e) if _lib.ck_surface_next_event(e, self._mutable()) == _ffi.CK_OK else None

    def events(self) -> List[Event]:
        """Every queued surface event, oldest first (the queue is emptied)."""
        return drain_events(_lib.ck_surface_next_event, self._mutable())
