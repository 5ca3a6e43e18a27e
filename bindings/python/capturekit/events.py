"""Guidance events: the codes a scheduler, a coverage tracker or a session queues, the
``CK_GUIDE_*`` condition flags, and :class:`Event`.

Events come from :meth:`capturekit.Scheduler.events`, :meth:`capturekit.Coverage.events` and
:meth:`capturekit.Session.events`; each queue holds at most :data:`EVENT_QUEUE_CAPACITY` events
(the oldest is dropped when full).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import List

from . import _ffi
from ._util import as_int
from .geometry import Face

__all__ = ["EventCode", "Guide", "Event", "event_string", "guide_names", "BLOCKING_OBJECT_CAPTURE",
           "BLOCKING_ROOM_SCAN", "EVENT_QUEUE_CAPACITY"]

_lib = _ffi.lib

#: Largest number of events a queue holds (the oldest is dropped when full).
EVENT_QUEUE_CAPACITY = 256


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
    SURFACE_SIDE_COMPLETED = 105  #: (surface) a side's surface reached goal_fraction well covered; index: the side
    SURFACE_COMPLETED = 106  #: (surface) the surface of the counted sides reached goal_fraction; value: views
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


def drain_events(next_event, handle) -> List[Event]:
    """Every queued event of a handle, oldest first (``ck_*_next_event`` until the queue is empty)."""
    out = []
    e = _ffi.ck_event()
    while next_event(e, handle) == _ffi.CK_OK:
        out.append(Event._from_c(e))
    return out
