"""The capture scheduler: pacing by the camera's motion, the quality gates, sharpness.

Coverage (how well each side has been seen) is :mod:`capturekit.coverage`; the events both
queue are :mod:`capturekit.events`.

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

import enum
import struct
from dataclasses import dataclass, fields
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import DEPTH_FORMATS, Handle, as_float, as_int, as_mat4, box_pointer, f32, options_to_c
from .events import BLOCKING_OBJECT_CAPTURE, Event, Guide, drain_events
from .box import Box
from .geometry import Intrinsics, _check_intrinsics

__all__ = ["Tracking", "TrackingReason", "SpeedBand", "Preset", "Guidance", "SchedulerOptions", "Scheduler",
           "sharpness_score"]

_lib = _ffi.lib
_fail = _ffi.fail
_update = _ffi.fast("ck_scheduler_update")
_ck_guidance = _ffi.ck_guidance
#: A frame as ck_scheduler_frame_init leaves it; each update starts from a copy (one memcpy).
_FRAME_TEMPLATE = _ffi.defaults("ck_scheduler_frame_init", _ffi.ck_scheduler_frame)
_new_frame = _ffi.ck_scheduler_frame.from_buffer_copy
_NO_INTRINSICS, _NO_DEPTH = _FRAME_TEMPLATE.intrinsics, _FRAME_TEMPLATE.depth  # zeros: none given
_SHAPE44 = (4, 4)


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


_NORMAL, _NO_REASON = Tracking.NORMAL, TrackingReason.NONE  # update()'s defaults


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
        blocked: the :class:`Guide` conditions of ``flags`` that prevent a capture in this frame
            (``blocking_flags`` less the box gates' advice cases, plus too fast and drift).
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
    blocked: Guide = Guide(0)

    @classmethod
    def _from_c(cls, g, offset: int = 0) -> "Guidance":
        """From a ``ck_guidance``, or one at `offset` bytes into a struct holding it (read in one
        unpack; the enum members looked up, not constructed)."""
        capture, band, flags, captures, speed, angular_speed, pitch, interval, next_capture_in, median_depth, blocked = \
            _GUIDANCE.unpack_from(g, offset)
        out = _new(cls)
        _set(out, "__dict__", {
            "capture": capture != 0,
            "band": _BAND_OF[band] if band in _BAND_OF else SpeedBand(band),
            "flags": _GUIDE_OF[flags] if flags in _GUIDE_OF else _guide(flags),
            "captures": captures, "speed": speed, "angular_speed": angular_speed, "pitch": pitch,
            "interval": interval, "next_capture_in": next_capture_in, "median_depth": median_depth,
            "blocked": _GUIDE_OF[blocked] if blocked in _GUIDE_OF else _guide(blocked)})
        return out


#: ck_guidance's fields up to the reserved word: capture, band, flags, captures, six floats, blocked.
_GUIDANCE = struct.Struct("=iiII6fI")
_new, _set = object.__new__, object.__setattr__  # a frozen dataclass filled without __init__
_BAND_OF = {int(b): b for b in SpeedBand}
_GUIDE_OF = {0: Guide(0)}  # Guide values seen so far (Guide(v) costs about 0.5 us per call)


def _guide(flags: int) -> Guide:
    g = Guide(flags)
    if len(_GUIDE_OF) < 4096:  # bounded: combinations of the flags the library sets
        _GUIDE_OF[flags] = g
    return g


@dataclass
class SchedulerOptions:
    """Scheduler options (``ck_scheduler_options``); the defaults are the object-capture preset
    (float fields hold float32 values, like the C struct).

    Units: seconds, metres, m/s; degrees only in fields ending in ``_deg``. The library checks
    every range when a :class:`Scheduler` is created (``InvalidArgumentError`` naming the field).
    See ``include/capturekit/ck_guidance.h`` for each field.
    """

    smoothing_window: float = f32(0.5)
    speed_slow: float = f32(0.254)
    speed_medium: float = f32(0.406)
    speed_fast: float = f32(0.508)
    interval_slow: float = f32(3.0)
    interval_medium: float = f32(2.0)
    interval_fast: float = f32(1.0)
    first_capture_delay: float = f32(3.0)
    max_angular_speed_deg: float = f32(45.0)
    pitch_max_deg: float = f32(30.0)
    pitch_min_deg: float = f32(-65.0)
    pitch_delay: float = f32(0.5)
    drift_distance: float = f32(10.0)
    drift_time: float = f32(2.0)
    box_view_angle_deg: float = f32(25.0)
    redundant_distance: float = f32(0.10)
    redundant_angle_deg: float = f32(10.0)
    min_sharpness: float = f32(0.0)
    depth_min: float = f32(0.2)
    depth_max: float = f32(3.0)
    depth_center_fraction: float = f32(0.2)
    prompt_delay: float = f32(0.3)
    prompt_repeat: float = f32(2.0)
    sideways_ratio: float = f32(0.0)
    sideways_min_speed: float = f32(0.2)
    blocking_flags: int = int(BLOCKING_OBJECT_CAPTURE)
    prompt_window: float = f32(0.75)
    min_box_in_frame: float = f32(0.9)
    min_luma: float = f32(0.15)

    @classmethod
    def preset(cls, preset: Preset) -> "SchedulerOptions":
        """The options of a :class:`Preset` (``ck_scheduler_options_preset``)."""
        c = _ffi.defaults("ck_scheduler_options_preset", _ffi.ck_scheduler_options, as_int(preset, "preset"))
        return cls._from_c(c)

    @classmethod
    def _from_c(cls, c: "_ffi.ck_scheduler_options") -> "SchedulerOptions":
        return cls(**{f.name: (int if f.name == "blocking_flags" else float)(getattr(c, f.name)) for f in fields(cls)})

    def _to_c(self) -> "_ffi.ck_scheduler_options":
        c = _ffi.defaults("ck_scheduler_options_init", _ffi.ck_scheduler_options)
        return options_to_c(self, c)


class Scheduler(Handle):
    """Paces automatic capture by the camera's motion and runs the quality gates (``ck_scheduler``).

    Args:
        options: a :class:`SchedulerOptions`, or a :class:`Preset`; None for the defaults.

    Raises:
        InvalidArgumentError: an option out of range (the message names the field).
    """

    # One frame struct per scheduler (one thread at a time per object), a view of its pose through
    # which a (4, 4) array is stored in one assignment, the Box its box pointer was made from, and
    # whether it holds any optional field (else those are as ck_scheduler_frame_init left them).
    __slots__ = ("_frame", "_pose", "_box", "_optional")

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
        self._frame = _new_frame(_FRAME_TEMPLATE)
        self._pose = _ffi.mat4_field(self._frame, "pose")
        self._box = None
        self._optional = False

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
        frame = self._frame
        frame.timestamp = as_float(timestamp, "timestamp")
        if type(pose) is np.ndarray and pose.shape == _SHAPE44 and pose.dtype.kind in "fiu":
            self._pose[...] = pose  # float32, column-major, straight into the frame
        else:
            frame.pose = as_mat4(pose, "pose")  # the general path and its messages
        if (tracking is _NORMAL and sharpness is None and intrinsics is None and tracking_reason is _NO_REASON
                and mean_luma is None and depth is None and depth_intrinsics is None):
            if box is not self._box:  # the pointer stays valid: a Box is edited in place
                frame.box = None if box is None else box_pointer(box)
                self._box = box
            if self._optional:  # back to the defaults of ck_scheduler_frame_init
                frame.tracking, frame.sharpness, frame.tracking_reason, frame.mean_luma = 2, -1.0, 0, -1.0
                frame.intrinsics = frame.depth_intrinsics = _NO_INTRINSICS
                frame.depth = _NO_DEPTH
                self._optional = False
        else:
            self._optional = True
            frame.tracking = 2 if tracking is _NORMAL else as_int(tracking, "tracking")
            frame.sharpness = -1.0 if sharpness is None else as_float(sharpness, "sharpness")  # -1: not measured
            if box is not self._box:  # (checked in the order of the arguments, as always)
                frame.box = None if box is None else box_pointer(box)
                self._box = box
            frame.intrinsics = _NO_INTRINSICS if intrinsics is None else _check_intrinsics(intrinsics)
            frame.tracking_reason = 0 if tracking_reason is _NO_REASON else as_int(tracking_reason, "tracking_reason")
            frame.mean_luma = -1.0 if mean_luma is None else as_float(mean_luma, "mean_luma")
            frame.depth = _NO_DEPTH
            frame.depth_intrinsics = _NO_INTRINSICS
        if depth is not None:
            if type(depth) is not np.ndarray:
                depth = np.asarray(depth)
            fmt = DEPTH_FORMATS.get(depth.dtype)
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
        out = _ck_guidance()
        status = _update(out, handle, frame)  # `depth` stays referenced until here
        if status < 0:
            _fail(status)
        return Guidance._from_c(out)

    def next_event(self) -> Optional[Event]:
        """The oldest queued event (removed from the queue), or None when it is empty."""
        e = _ffi.ck_event()
        return Event._from_c(e) if _lib.ck_scheduler_next_event(e, self._h()) == _ffi.CK_OK else None

    def events(self) -> List[Event]:
        """Every queued event, oldest first (the queue is emptied)."""
        return drain_events(_lib.ck_scheduler_next_event, self._h())

    def reset(self) -> None:
        """Forgets every frame, capture and event (and an abort after drift); keeps the options."""
        _lib.ck_scheduler_reset(self._h())


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
