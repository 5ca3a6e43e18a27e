"""Coverage: how well each side of the box has been seen, where to go next.

For every captured frame a rig calls :meth:`Coverage.add_view`, then reads per-face progress and
colours, cells, the view-direction dial and a hint of where to go next. :class:`Coverage` owns a
library handle: use it as a context manager or call ``close()`` (idempotent); a garbage-collected
object is closed by a ``weakref.finalize`` safety net. One thread at a time per object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import SessionPart, as_float, as_int, as_mat4, check_box, f32, options_to_c
from .events import Event, drain_events
from .box import Box
from .geometry import Face, Intrinsics, _check_intrinsics

__all__ = ["CoverageOptions", "FaceCoverage", "CoverageSummary", "CoverageHint", "Coverage"]

_lib = _ffi.lib
_fail = _ffi.fail
_add_view = _ffi.fast("ck_coverage_add_view")
_FACE_OF = {int(f): f for f in Face.__members__.values()}


@dataclass
class CoverageOptions:
    """Coverage options (``ck_coverage_options``); see ``ck_guidance.h`` for each field."""

    goal: int = 10
    face_mask: int = 0x37
    cells_per_side: int = 4
    grid_width: int = 64
    grid_height: int = 48
    azimuth_bins: int = 24
    elevation_rings: int = 2
    elevation_min_deg: float = f32(0.0)
    elevation_max_deg: float = f32(60.0)
    #: Count views from a camera inside the box (default: they count nothing, and an
    #: ``EventCode.INSIDE_BOX`` event says "Step back").
    count_inside_views: int = 0

    def _to_c(self) -> "_ffi.ck_coverage_options":
        c = _ffi.defaults("ck_coverage_options_init", _ffi.ck_coverage_options)
        return options_to_c(self, c)


@dataclass(frozen=True)
class FaceCoverage:
    """Coverage of one face (``ck_face_coverage``): ``count`` centre-ray hits of ``goal``,
    ``progress`` = min(count, goal) / goal, ``color`` RGB yellow -> cyan, ``opacity``
    0.25 + 0.5 * progress, ``cell_fraction`` of its cells seen, ``completed``."""

    count: int
    goal: int
    progress: float
    color: tuple
    opacity: float
    cell_fraction: float
    completed: bool


@dataclass(frozen=True)
class CoverageSummary:
    """Overall coverage (``ck_coverage_summary``)."""

    views: int
    faces_completed: int
    all_completed: bool
    completion: float
    dial_fraction: float
    cell_fraction: float


@dataclass(frozen=True)
class CoverageHint:
    """Where to go next (``ck_coverage_hint``).

    ``move_angle`` (rad): walk this far around the object, positive to your left while facing it
    (clockwise seen from above). ``ring``: the elevation ring needing another pass;
    ``ring_delta`` > 0 go higher, < 0 lower. Azimuths follow the dial: 0 in front of the front
    face, pi/2 beside the left face.
    """

    move_angle: float
    camera_azimuth: float
    target_azimuth: float
    camera_elevation: float
    ring: int
    bin: int
    target_count: int
    ring_delta: int


class Coverage(SessionPart):
    """How much of a box has been seen, and from where (``ck_coverage``).

    Args:
        box: the :class:`Box` (copied; re-bind an edited box with :meth:`set_box`).
        options: a :class:`CoverageOptions` or None for the defaults.
    """

    __slots__ = ("_cells_shape", "_dial_shape")
    _read_only = "a session's coverage is read-only (the session adds its views)"

    def __init__(self, box: Box, options: Optional[CoverageOptions] = None):
        if options is None:
            options = CoverageOptions()
        elif not isinstance(options, CoverageOptions):
            raise TypeError(f"options must be CoverageOptions, not {type(options).__name__}")
        b = check_box(box)
        c_options = options._to_c()
        handle = _ffi.ck_coverage_p()
        _lib.ck_coverage_create(handle, b, c_options)
        n = int(c_options.cells_per_side)
        self._cells_shape = (6, n, n)
        self._dial_shape = (int(c_options.elevation_rings), int(c_options.azimuth_bins))
        self._owner = None
        self._adopt(handle, _lib.ck_coverage_free)

    @classmethod
    def _borrow(cls, handle, owner, options: CoverageOptions) -> "Coverage":
        """A read-only view of a session's coverage (``ck_session_coverage``): faces, summary,
        cells, dial and hints; it keeps the session alive, is never freed by this object, and
        raises ValueError once the session is closed or when asked to change anything."""
        self = cls.__new__(cls)
        n = int(options.cells_per_side)
        self._cells_shape = (6, n, n)
        self._dial_shape = (int(options.elevation_rings), int(options.azimuth_bins))
        self._lend(handle, owner)
        return self

    def add_view(self, pose, intrinsics: Intrinsics, timestamp: float) -> Face:
        """Adds one captured view; returns the face its image-centre ray hit (``Face.NONE`` on a miss)."""
        handle = self._mutable()
        face = _ffi.out_i32()
        status = _add_view(face, handle, as_mat4(pose, "pose"), _check_intrinsics(intrinsics),
                           as_float(timestamp, "timestamp"))
        if status < 0:
            _fail(status)
        v = face.value
        return _FACE_OF[v] if v in _FACE_OF else Face(v)

    def set_box(self, box: Box) -> None:
        """Re-binds to an edited box; every count is kept."""
        _lib.ck_coverage_set_box(self._mutable(), check_box(box))

    def reset(self) -> None:
        """Forgets every view, count and event; keeps the box and the options."""
        _lib.ck_coverage_reset(self._mutable())

    def face(self, face: int) -> FaceCoverage:
        """The coverage of one :class:`Face` (0..5)."""
        out = _ffi.ck_face_coverage()
        _lib.ck_coverage_face(out, self._h(), as_int(face, "face"))
        return FaceCoverage(int(out.count), int(out.goal), float(out.progress), tuple(float(c) for c in out.color),
                            float(out.opacity), float(out.cell_fraction), bool(out.completed))

    def summary(self) -> CoverageSummary:
        """Overall coverage: views, completed faces, completion, dial and cell fractions."""
        out = _ffi.ck_coverage_summary()
        _lib.ck_coverage_summarize(out, self._h())
        return CoverageSummary(int(out.views), int(out.faces_completed), bool(out.all_completed),
                               float(out.completion), float(out.dial_fraction), float(out.cell_fraction))

    def cells(self) -> np.ndarray:
        """Per-cell view counts, uint32 array (6, n, n) indexed ``[face, row, column]``: columns
        run along the face frame's +x, row 0 is at its +y edge (see ``ck_coverage_cells``)."""
        out = np.empty(self._cells_shape, dtype=np.uint32)
        count = np.zeros(1, dtype=np.uintp)
        _lib.ck_coverage_cells(out, out.size, count, self._h())
        return out

    def dial(self) -> np.ndarray:
        """Dial view counts, uint32 array (rings, azimuth_bins): ring 0 is the lowest, bin b is
        centred on azimuth b * 2 pi / azimuth_bins (0 in front of the front face, counter-clockwise
        seen from above)."""
        out = np.empty(self._dial_shape, dtype=np.uint32)
        count = np.zeros(1, dtype=np.uintp)
        _lib.ck_coverage_dial(out, out.size, count, self._h())
        return out

    def hint(self, pose) -> CoverageHint:
        """Where to go next from the camera at ``pose`` (``ck_coverage_suggest``)."""
        out = _ffi.ck_coverage_hint()
        _lib.ck_coverage_suggest(out, self._h(), as_mat4(pose, "pose"))
        return CoverageHint(float(out.move_angle), float(out.camera_azimuth), float(out.target_azimuth),
                            float(out.camera_elevation), int(out.ring), int(out.bin), int(out.target_count),
                            int(out.ring_delta))

    def next_event(self) -> Optional[Event]:
        """The oldest queued coverage event, or None when the queue is empty."""
        e = _ffi.ck_event()
        return Event._from_c(e) if _lib.ck_coverage_next_event(e, self._mutable()) == _ffi.CK_OK else None

    def events(self) -> List[Event]:
        """Every queued coverage event, oldest first (the queue is emptied)."""
        return drain_events(_lib.ck_coverage_next_event, self._mutable())
