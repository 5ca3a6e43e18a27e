"""Guided capture: the capture scheduler, its quality gates and events, coverage, sharpness.

A rig calls :meth:`Scheduler.update` once per camera frame with the time, the pose and the
tracking state. The answer (:class:`Guidance`) says whether to capture the frame and which
conditions hold; prompts for the operator come as :class:`Event` objects from
:meth:`Scheduler.events`. For every captured frame the rig calls :meth:`Coverage.add_view`,
then reads per-face progress and colours, cells, the view-direction dial and a hint of where
to go next. Everything is deterministic: time (seconds, any clock) comes only from the caller.

:class:`Scheduler` and :class:`Coverage` own library handles. Use them as context managers, or
call ``close()`` (idempotent); a garbage-collected object is closed by a ``weakref.finalize``
safety net. Any call on a closed object raises ``ValueError``. One thread at a time per object.

Angles are radians, except option fields whose names end in ``_deg``. Example::

    import numpy as np, capturekit as ck
    box = ck.Box(center=(0, 0.4, 0), size=(0.6, 0.8, 0.6), floor=0)
    k = ck.Intrinsics(fx=1500, fy=1500, cx=960, cy=720, width=1920, height=1440)
    with ck.Scheduler() as scheduler, ck.Coverage(box) as coverage:
        for t, pose in frames:                      # (4, 4) camera-to-world poses
            g = scheduler.update(t, pose, box=box)
            if g.capture:
                coverage.add_view(pose, k, t)
            for event in scheduler.events():
                print(event.text)
"""

from __future__ import annotations

import enum
import weakref
from dataclasses import dataclass, fields
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import as_float, as_int, as_mat4
from .box import Box
from .geometry import Face, Intrinsics, _check_intrinsics

__all__ = [
    "Tracking",
    "TrackingReason",
    "SpeedBand",
    "Preset",
    "EventCode",
    "Guide",
    "Event",
    "Guidance",
    "SchedulerOptions",
    "Scheduler",
    "CoverageOptions",
    "FaceCoverage",
    "CoverageSummary",
    "CoverageHint",
    "Coverage",
    "event_string",
    "sharpness_score",
    "BLOCKING_OBJECT_CAPTURE",
    "BLOCKING_ROOM_SCAN",
    "EVENT_QUEUE_CAPACITY",
]

_lib = _ffi.lib

#: Largest number of events a queue holds (the oldest is dropped when full).
EVENT_QUEUE_CAPACITY = 256

#: ck_format of the depth dtypes a scheduler, a dataset or a session takes.
_DEPTH_FORMATS = {
    np.dtype(np.float32): _ffi.CK_FORMAT_DEPTH_F32,
    np.dtype(np.float16): _ffi.CK_FORMAT_DEPTH_F16,
    np.dtype(np.uint16): _ffi.CK_FORMAT_DEPTH_MM,
}


class Tracking(enum.IntEnum):
    """Tracking state as ARKit reports it (``ck_tracking``)."""

    NOT_AVAILABLE = 0
    LIMITED = 1
    NORMAL = 2


class TrackingReason(enum.IntEnum):
    """Why tracking is limited, as ARKit reports it (``ck_tracking_reason``; read with
    ``Tracking.LIMITED``). Each reason has its own :class:`EventCode` and prompt."""

    NONE = 0
    INITIALIZING = 1
    EXCESSIVE_MOTION = 2
    INSUFFICIENT_FEATURES = 3
    RELOCALIZING = 4


class SpeedBand(enum.IntEnum):
    """Speed bands (``ck_speed_band``, ``CK_SPEED_BAND_*``; ``Band`` in 0.1): SLOW captures every
    ``interval_slow`` and prompts "speed up"; TOO_FAST never captures and prompts "slow down"."""

    SLOW = 0
    MEDIUM = 1
    FAST = 2
    TOO_FAST = 3


class Preset(enum.IntEnum):
    """Scheduler option presets (``ck_preset``)."""

    OBJECT_CAPTURE = 0
    ROOM_SCAN = 1


class EventCode(enum.IntEnum):
    """Event codes (``ck_event_code``), stable numbers. 1..21 are scheduler conditions (each also
    a :class:`Guide` flag, bit ``code - 1``); 101.. come from coverage, 201.. from the session."""

    SLOW_DOWN = 1
    SPEED_UP = 2
    TURNING_TOO_FAST = 3
    TILT_DOWN = 4
    TILT_UP = 5
    DRIFT = 6
    POINT_AT_OBJECT = 7
    TRACKING_LIMITED = 8
    TRACKING_NOT_AVAILABLE = 9
    TOO_CLOSE = 10
    TOO_FAR = 11
    BLURRY = 12
    WALKING_SIDEWAYS_LEFT = 13
    WALKING_SIDEWAYS_RIGHT = 14
    MOVE_TO_NEW_VIEW = 15
    OBJECT_OUT_OF_FRAME = 16  #: less than min_box_in_frame of the box in the image (value: the fraction)
    LOW_LIGHT = 17  #: mean luma below min_luma (value: the luma)
    TRACKING_INITIALIZING = 18  #: tracking limited: starting ("Move the device slowly to start")
    TRACKING_EXCESSIVE_MOTION = 19  #: tracking limited: moving too fast
    TRACKING_INSUFFICIENT_FEATURES = 20  #: tracking limited: too little texture or light
    TRACKING_RELOCALIZING = 21  #: tracking limited: resuming ("Return to where you were")
    SIDE_COMPLETED = 101
    ALL_SIDES_COMPLETED = 102
    RING_COMPLETED = 103
    INSIDE_BOX = 104  #: a view from inside the box was not counted ("Step back")
    STORAGE_LOW = 201  #: (session) recording minutes left fell below the warning threshold
    CAPTURE_DROPPED = 202  #: (session) the write queue was full: a capture was dropped (value: MiB queued)
    STREAM_FRAME_DROPPED = 203  #: (session) the write queue was full: a stream frame was dropped
    CAPTURE_COMMITTED = 204  #: (session) a capture whose image the caller wrote was added: index = its frame id


class Guide(enum.IntFlag):
    """Guidance flags (``CK_GUIDE_*``): the conditions that hold in a frame."""

    NONE = 0
    SLOW_DOWN = 1 << 0
    SPEED_UP = 1 << 1
    TURNING_TOO_FAST = 1 << 2
    TILT_DOWN = 1 << 3
    TILT_UP = 1 << 4
    DRIFT = 1 << 5
    POINT_AT_OBJECT = 1 << 6
    TRACKING_LIMITED = 1 << 7
    TRACKING_NOT_AVAILABLE = 1 << 8
    TOO_CLOSE = 1 << 9
    TOO_FAR = 1 << 10
    BLURRY = 1 << 11
    WALKING_SIDEWAYS_LEFT = 1 << 12
    WALKING_SIDEWAYS_RIGHT = 1 << 13
    MOVE_TO_NEW_VIEW = 1 << 14
    OBJECT_OUT_OF_FRAME = 1 << 15
    LOW_LIGHT = 1 << 16
    TRACKING_INITIALIZING = 1 << 17
    TRACKING_EXCESSIVE_MOTION = 1 << 18
    TRACKING_INSUFFICIENT_FEATURES = 1 << 19
    TRACKING_RELOCALIZING = 1 << 20


#: Default ``blocking_flags`` of the object-capture preset (``CK_GUIDE_BLOCKING_OBJECT_CAPTURE``):
#: every condition but speed up, walking sideways, move to a new view and low light (advice only).
BLOCKING_OBJECT_CAPTURE = Guide(0x1E8FFD)
#: The room-scan preset's (``CK_GUIDE_BLOCKING_ROOM_SCAN``): also without tilt up / down.
BLOCKING_ROOM_SCAN = Guide(0x1E8FE5)


def event_string(code: int) -> str:
    """The library's static English text of an event code; ``"unknown event"`` for others."""
    return _lib.ck_event_string(as_int(code, "code"))


def guide_names(flags: int) -> List[str]:
    """The names of the ``CK_GUIDE_*`` conditions set in ``flags``, lowest bit first
    (``ck_guide_flag_name`` per bit: ``["SLOW_DOWN", "TILT_UP"]``); undefined bits are "unknown"."""
    value = as_int(flags, "flags", 0, 2**32 - 1)
    return [_lib.ck_guide_flag_name(1 << b) for b in range(32) if value >> b & 1]


@dataclass(frozen=True)
class Event:
    """A queued event (``ck_event``).

    Attributes:
        code: an :class:`EventCode` (a plain int for a code from a newer library).
        index: the face (``SIDE_COMPLETED``, a :class:`Face`) or ring (``RING_COMPLETED``); -1 otherwise.
        timestamp: time of the frame or view that raised it, seconds.
        value: the number documented for the code (speed, angle, depth ...), 0 if none.
        text: short English text for the operator.
    """

    code: int
    index: int
    timestamp: float
    value: float
    text: str

    @classmethod
    def _from_c(cls, e: "_ffi.ck_event") -> "Event":
        try:
            code = EventCode(e.code)
        except ValueError:
            code = int(e.code)
        index = Face(e.index) if code == EventCode.SIDE_COMPLETED else int(e.index)
        text = e.text.decode("utf-8", "replace") if e.text else ""
        return cls(code, index, float(e.timestamp), float(e.value), text)


@dataclass(frozen=True)
class Guidance:
    """The scheduler's answer for one frame (``ck_guidance``).

    Attributes:
        capture: take this frame (the scheduler counted it as captured).
        band: the :class:`SpeedBand` of the smoothed speed.
        flags: the :class:`Guide` conditions that hold.
        captures: captures so far, this one included.
        speed: smoothed speed, m/s. angular_speed: rad/s. pitch: of the view direction, rad.
        interval: the band's capture interval, s (0 when too fast).
        next_capture_in: seconds until the interval has elapsed (0 when a capture is due).
        median_depth: median valid centre depth, m (0 when not measured).
    """

    capture: bool
    band: SpeedBand
    flags: Guide
    captures: int
    speed: float
    angular_speed: float
    pitch: float
    interval: float
    next_capture_in: float
    median_depth: float

    @classmethod
    def _from_c(cls, g: "_ffi.ck_guidance") -> "Guidance":
        return cls(bool(g.capture), SpeedBand(g.band), Guide(g.flags), int(g.captures), float(g.speed),
                   float(g.angular_speed), float(g.pitch), float(g.interval), float(g.next_capture_in),
                   float(g.median_depth))


def _f32(x: float) -> float:
    """x rounded to float32, the C field type (so defaults equal what the library reports)."""
    return float(np.float32(x))


def _options_dataclass_to_c(options, c_struct):
    """Copies a dataclass of options into the matching C struct (already set to the defaults);
    only Python types are checked here, ranges are the library's job."""
    for f in fields(options):
        value = getattr(options, f.name)
        if isinstance(getattr(c_struct, f.name), float):
            setattr(c_struct, f.name, as_float(value, f.name))
        else:
            setattr(c_struct, f.name, as_int(value, f.name, 0, 2**32 - 1))
    return c_struct


@dataclass
class SchedulerOptions:
    """Scheduler options (``ck_scheduler_options``); the defaults are the object-capture preset
    (float fields hold float32 values, like the C struct).

    Units: seconds, metres, m/s; degrees only in fields ending in ``_deg``. The library checks
    every range when a :class:`Scheduler` is created (``InvalidArgumentError`` naming the field).
    See ``include/capturekit/ck_guidance.h`` for each field.
    """

    smoothing_window: float = _f32(0.5)
    speed_slow: float = _f32(0.254)
    speed_medium: float = _f32(0.406)
    speed_fast: float = _f32(0.508)
    interval_slow: float = _f32(3.0)
    interval_medium: float = _f32(2.0)
    interval_fast: float = _f32(1.0)
    first_capture_delay: float = _f32(3.0)
    max_angular_speed_deg: float = _f32(45.0)
    pitch_max_deg: float = _f32(30.0)
    pitch_min_deg: float = _f32(-65.0)
    pitch_delay: float = _f32(0.5)
    drift_distance: float = _f32(10.0)
    drift_time: float = _f32(2.0)
    box_view_angle_deg: float = _f32(25.0)
    redundant_distance: float = _f32(0.10)
    redundant_angle_deg: float = _f32(10.0)
    min_sharpness: float = _f32(0.0)
    depth_min: float = _f32(0.2)
    depth_max: float = _f32(3.0)
    depth_center_fraction: float = _f32(0.2)
    prompt_delay: float = _f32(0.3)
    prompt_repeat: float = _f32(2.0)
    sideways_ratio: float = _f32(0.0)
    sideways_min_speed: float = _f32(0.2)
    blocking_flags: int = int(BLOCKING_OBJECT_CAPTURE)
    prompt_window: float = _f32(0.75)
    min_box_in_frame: float = _f32(0.9)
    min_luma: float = _f32(0.15)

    @classmethod
    def preset(cls, preset: Preset) -> "SchedulerOptions":
        """The options of a :class:`Preset` (``ck_scheduler_options_preset``)."""
        c = _ffi.ck_scheduler_options()
        _lib.ck_scheduler_options_preset(c, as_int(preset, "preset"))
        return cls._from_c(c)

    @classmethod
    def _from_c(cls, c: "_ffi.ck_scheduler_options") -> "SchedulerOptions":
        return cls(**{f.name: (int if f.name == "blocking_flags" else float)(getattr(c, f.name)) for f in fields(cls)})

    def _to_c(self) -> "_ffi.ck_scheduler_options":
        c = _ffi.ck_scheduler_options()
        _lib.ck_scheduler_options_init(c)
        return _options_dataclass_to_c(self, c)


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
    elevation_min_deg: float = _f32(0.0)
    elevation_max_deg: float = _f32(60.0)
    #: Count views from a camera inside the box (default: they count nothing, and an
    #: ``EventCode.INSIDE_BOX`` event says "Step back").
    count_inside_views: int = 0

    def _to_c(self) -> "_ffi.ck_coverage_options":
        c = _ffi.ck_coverage_options()
        _lib.ck_coverage_options_init(c)
        return _options_dataclass_to_c(self, c)


def _check_box(box) -> "_ffi.ck_box":
    if not isinstance(box, Box):
        raise TypeError(f"box must be a capturekit.Box, not {type(box).__name__}")
    return box._c


def _free(free, handle) -> None:
    """Releases a handle once (the finalizer's callback; it must not reference the owner). A
    ``_close`` that reports an error (the handle is freed anyway) raises after the handle is
    marked closed."""
    if handle.value:
        try:
            free(handle)
        finally:
            handle.value = None


class _Handle:
    """A library handle owned by a Python object: context manager, idempotent close(), and a
    ``weakref.finalize`` safety net."""

    __slots__ = ("_handle", "_finalizer", "__weakref__")
    _kind = "handle"

    def _adopt(self, handle, free) -> None:
        self._handle = handle
        self._finalizer = weakref.finalize(self, _free, free, handle)

    def _h(self):
        handle = getattr(self, "_handle", None)
        if handle is None or not handle.value:
            raise ValueError(f"capturekit.{type(self).__name__} is closed")
        return handle

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or the object was never opened)."""
        handle = getattr(self, "_handle", None)
        return handle is None or not handle.value

    def close(self) -> None:
        """Releases the library object. Idempotent: later calls do nothing."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()

    def __enter__(self):
        self._h()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def _drain(next_event, handle) -> List[Event]:
        out = []
        e = _ffi.ck_event()
        while next_event(e, handle) == _ffi.CK_OK:
            out.append(Event._from_c(e))
        return out


class Scheduler(_Handle):
    """Paces automatic capture by the camera's motion and runs the quality gates (``ck_scheduler``).

    Args:
        options: a :class:`SchedulerOptions`, or a :class:`Preset`; None for the defaults.

    Raises:
        InvalidArgumentError: an option out of range (the message names the field).
    """

    __slots__ = ()

    def __init__(self, options=None):
        if options is None:
            c_options = None
        elif isinstance(options, SchedulerOptions):
            c_options = options._to_c()
        elif isinstance(options, Preset):
            c_options = SchedulerOptions.preset(options)._to_c()
        else:
            raise TypeError(f"options must be SchedulerOptions or Preset, not {type(options).__name__}")
        handle = _ffi.ck_scheduler_p()
        _lib.ck_scheduler_create(handle, c_options)
        self._adopt(handle, _lib.ck_scheduler_free)

    def update(self, timestamp: float, pose, tracking: Tracking = Tracking.NORMAL, *, box: Optional[Box] = None,
               sharpness: Optional[float] = None, depth=None, depth_intrinsics: Optional[Intrinsics] = None,
               intrinsics: Optional[Intrinsics] = None, tracking_reason: TrackingReason = TrackingReason.NONE,
               mean_luma: Optional[float] = None) -> Guidance:
        """Processes one frame (``ck_scheduler_update``).

        Args:
            timestamp: seconds on the caller's clock, strictly increasing.
            pose: camera-to-world (4, 4) pose.
            tracking: a :class:`Tracking` state.
            box: the box around the object (enables "point at the object").
            sharpness: the caller's score (e.g. :func:`sharpness_score`), None if not measured.
            depth: optional (H, W) depth map: float32 or float16 metres, or uint16 millimetres
                (0 / non-finite = no depth). Arrays with contiguous rows (C order, crops, padded
                rows) are passed without a copy.
            depth_intrinsics: the depth map's :class:`Intrinsics` (its width and height must
                match the array), or None: the centre window is centred on the map's centre.
            intrinsics: the camera image's :class:`Intrinsics` (enables "the object is partly out
                of frame" with ``box``).
            tracking_reason: a :class:`TrackingReason`, read with ``Tracking.LIMITED``.
            mean_luma: mean image brightness 0..1 (enables "more light needed"), None if not measured.

        Without depth, the distance for "too close" / "too far" is the camera's distance to the
        nearest point of ``box`` (0 inside it).

        Raises:
            InvalidArgumentError: a bad pose, a non-increasing timestamp, a NaN sharpness ...
            StateError: the session was aborted after drift (call :meth:`reset`).
        """
        handle = self._h()
        frame = _ffi.ck_scheduler_frame()
        _lib.ck_scheduler_frame_init(frame)
        frame.timestamp = as_float(timestamp, "timestamp")
        frame.pose = as_mat4(pose, "pose")
        frame.tracking = as_int(tracking, "tracking")
        frame.sharpness = -1.0 if sharpness is None else as_float(sharpness, "sharpness")
        frame.box = None if box is None else _ffi.pointer(_check_box(box))
        if intrinsics is not None:
            frame.intrinsics = _check_intrinsics(intrinsics)
        frame.tracking_reason = as_int(tracking_reason, "tracking_reason")
        frame.mean_luma = -1.0 if mean_luma is None else as_float(mean_luma, "mean_luma")
        if depth is not None:
            depth = np.asarray(depth)
            fmt = _DEPTH_FORMATS.get(depth.dtype)
            if fmt is None:
                raise TypeError(f"depth must be a float32 / float16 (metres) or uint16 (mm) array, got dtype {depth.dtype}")
            if depth.ndim != 2:
                raise ValueError(f"depth must be a 2-D (H, W) array, got shape {depth.shape}")
            if depth_intrinsics is not None:
                k = _check_intrinsics(depth_intrinsics)
                if depth.shape != (k.height, k.width):
                    raise ValueError(f"depth has shape {depth.shape}; depth_intrinsics say ({k.height}, {k.width})")
                frame.depth_intrinsics = k
            depth = _ffi.packed_rows(depth)
            frame.depth = _ffi.depth_map(depth, fmt)
        elif depth_intrinsics is not None:
            raise ValueError("depth_intrinsics given without depth")
        out = _ffi.ck_guidance()
        _lib.ck_scheduler_update(out, handle, frame)  # `depth` stays referenced until here
        return Guidance._from_c(out)

    def next_event(self) -> Optional[Event]:
        """The oldest queued event (removed from the queue), or None when it is empty."""
        e = _ffi.ck_event()
        return Event._from_c(e) if _lib.ck_scheduler_next_event(e, self._h()) == _ffi.CK_OK else None

    def events(self) -> List[Event]:
        """Every queued event, oldest first (the queue is emptied)."""
        return self._drain(_lib.ck_scheduler_next_event, self._h())

    def reset(self) -> None:
        """Forgets every frame, capture and event (and an abort after drift); keeps the options."""
        _lib.ck_scheduler_reset(self._h())


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


class Coverage(_Handle):
    """How much of a box has been seen, and from where (``ck_coverage``).

    Args:
        box: the :class:`Box` (copied; re-bind an edited box with :meth:`set_box`).
        options: a :class:`CoverageOptions` or None for the defaults.
    """

    __slots__ = ("_cells_shape", "_dial_shape", "_owner")

    def __init__(self, box: Box, options: Optional[CoverageOptions] = None):
        if options is None:
            options = CoverageOptions()
        elif not isinstance(options, CoverageOptions):
            raise TypeError(f"options must be CoverageOptions, not {type(options).__name__}")
        b = _check_box(box)
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
        self._owner = owner
        self._adopt(handle, lambda h: None)
        return self

    def _h(self):
        owner = self._owner
        if owner is not None and owner.closed:
            raise ValueError("capturekit.Coverage: the Session it belongs to is closed")
        return super()._h()

    def _mutable(self):
        if self._owner is not None:
            raise ValueError("capturekit.Coverage: a session's coverage is read-only (the session adds its views)")
        return self._h()

    def add_view(self, pose, intrinsics: Intrinsics, timestamp: float) -> Face:
        """Adds one captured view; returns the face its image-centre ray hit (``Face.NONE`` on a miss)."""
        handle = self._mutable()
        face = np.empty(1, dtype=np.int32)
        _lib.ck_coverage_add_view(face, handle, as_mat4(pose, "pose"), _check_intrinsics(intrinsics),
                                  as_float(timestamp, "timestamp"))
        return Face(int(face[0]))

    def set_box(self, box: Box) -> None:
        """Re-binds to an edited box; every count is kept."""
        _lib.ck_coverage_set_box(self._mutable(), _check_box(box))

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
        return self._drain(_lib.ck_coverage_next_event, self._mutable())


def sharpness_score(luma) -> float:
    """Sharpness of an 8-bit luma image: the variance of the 3x3 Laplacian over the interior
    pixels (``ck_sharpness_score``). Higher is sharper.

    Args:
        luma: (H, W) uint8 array, H and W >= 3. Arrays with contiguous rows (C order, crops,
            padded rows, e.g. the Y plane of a camera buffer) are used without a copy; other
            layouts are copied to C order first.

    Raises:
        TypeError: not a uint8 array. ValueError: not 2-D.
        InvalidArgumentError: a size outside 3..65536.
    """
    arr = np.asarray(luma)
    if arr.dtype != np.uint8:
        raise TypeError(f"luma must be a uint8 array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"luma must be 2-D (H, W), got shape {arr.shape}")
    h, w = arr.shape
    as_int(w, "width", 0, 2**32 - 1), as_int(h, "height", 0, 2**32 - 1)
    arr = _ffi.packed_rows(arr)
    score = np.empty(1, dtype=np.float32)
    _lib.ck_sharpness_score(score, _ffi.image(arr, _ffi.CK_IMAGE_FORMAT_GRAY8))
    return float(score[0])
