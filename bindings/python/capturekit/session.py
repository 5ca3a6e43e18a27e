"""The per-frame capture session (``ck_session``, in ``ck_dataset.h``).

A :class:`Session` does everything per camera frame in one call (:meth:`Session.process`):
guidance, the capture decision, depth streams, the dataset, coverage and storage events. It owns
a library handle: use it as a context manager or call ``close()`` (idempotent); a
garbage-collected session is closed by a ``weakref.finalize`` safety net (a session closed
without finishing stays on disk, resumable with :meth:`Session.resume`). Example::

    import capturekit as ck
    with ck.Session("scan", box=box) as session:
        for t, pose, rgb, depth, conf in camera:
            r = session.process(t, pose, k_rgb, rgb=rgb, depth=depth, confidence=conf)
            for event in session.events():
                print(event.text)
        session.finish(zip=True)
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, fields
from typing import List, Optional

import numpy as np

from . import _ffi
from ._util import Handle, as_float, as_int, as_mat4, check_box, path_arg
from ._frames import camera_image, confidence_map, depth_map, image
from .box import Box
from .coverage import Coverage, CoverageOptions
from .dataset import FINALIZE_ZIP, Dataset, DatasetOptions, LogLevel, QueueFull
from .events import Event, drain_events
from .geometry import Intrinsics, _check_intrinsics
from .scheduler import Guidance, Preset, SchedulerOptions, Tracking

__all__ = ["SessionResult", "Session"]

_lib = _ffi.lib
_fail = _ffi.fail
_process = _ffi.fast("ck_session_process")
_ck_result = _ffi.ck_session_result
#: A frame as ck_session_frame_init leaves it; each process() starts from a copy (one memcpy).
_FRAME_TEMPLATE = _ffi.defaults("ck_session_frame_init", _ffi.ck_session_frame)
_new_frame = _ffi.ck_session_frame.from_buffer_copy
#: ck_session_result before the guidance: captured, pass, frame_id; after it: coverage,
#: minutes_left, events (offsets from the ctypes layout).
_RESULT_HEAD = struct.Struct("=iIQ")
_RESULT_TAIL = struct.Struct("=ffI")
_GUIDANCE_AT, _TAIL_AT = _ffi.ck_session_result.guidance.offset, _ffi.ck_session_result.coverage.offset
_NO_FRAME = 2**64 - 1


@dataclass(frozen=True)
class SessionResult:
    """What the session did with a frame (``ck_session_result``).

    Attributes:
        captured: the frame was captured.
        pass_number: the current capture pass.
        frame_id: the captured frame's id (None when not captured, or captured without pixels:
            the frame is added once its image exists).
        guidance: the scheduler's :class:`Guidance`.
        coverage: overall coverage completion, 0..1.
        minutes_left: recording minutes left on the file system (inf: unknown yet).
        events: events queued by this frame.
        image_path: captured without pixels: the relative path the caller must write now ("" otherwise).
    """

    captured: bool
    pass_number: int
    frame_id: Optional[int]
    guidance: Guidance
    coverage: float
    minutes_left: float
    events: int
    image_path: str

    @classmethod
    def _from_c(cls, r: "_ffi.ck_session_result") -> "SessionResult":
        captured, pass_, frame_id = _RESULT_HEAD.unpack_from(r)
        coverage, minutes_left, events = _RESULT_TAIL.unpack_from(r, _TAIL_AT)
        out = object.__new__(cls)
        out.__dict__.update(zip(_RESULT_FIELDS, (
            captured != 0, pass_, None if (not captured or frame_id == _NO_FRAME) else frame_id,
            Guidance._from_c(r, _GUIDANCE_AT), coverage, minutes_left, events, r.image_path.decode("utf-8"))))
        return out


_RESULT_FIELDS = tuple(f.name for f in fields(SessionResult))


class Session(Handle):
    """A capture session writing a new dataset in ``directory`` (``ck_session``).

    Args:
        directory: the dataset folder (must be empty or missing).
        box: the :class:`Box` around the object (None: none until :meth:`set_box`).
        preset: a :class:`Preset` (scheduler and coverage defaults).
        scheduler: :class:`SchedulerOptions` (None = the preset's).
        coverage: :class:`CoverageOptions` (None = defaults).
        dataset: :class:`DatasetOptions` (None = defaults).
        storage_warning_minutes: STORAGE_LOW below this many minutes left.
        stream_depth: stream every frame's depth/confidence to the MultiScan files.
        queue_full: a :class:`QueueFull`: what a full write queue does to a capture or stream
            frame (DROP with an event, the default; or WAIT).
        log: optional ``log(level, message)`` callable; log_level: the minimum :class:`LogLevel`.
    """

    __slots__ = ("_directory", "_log_cb", "_keep", "_coverage_options", "_finished")

    def __init__(self, directory, box: Optional[Box] = None, *, preset: Preset = Preset.OBJECT_CAPTURE,
                 scheduler: Optional[SchedulerOptions] = None, coverage: Optional[CoverageOptions] = None,
                 dataset: Optional[DatasetOptions] = None, storage_warning_minutes: float = 10.0,
                 stream_depth: bool = True, log=None, log_level: int = LogLevel.INFO,
                 queue_full: int = QueueFull.DROP):
        o = self._options(preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                          queue_full)
        handle = _ffi.ck_session_p()
        _lib.ck_session_create(handle, path_arg(directory, "directory"), o, None if box is None else check_box(box))
        self._directory = os.fsdecode(path_arg(directory, "directory"))
        self._adopt(handle, _lib.ck_session_close)

    @classmethod
    def resume(cls, directory, *, preset: Preset = Preset.OBJECT_CAPTURE, scheduler: Optional[SchedulerOptions] = None,
               coverage: Optional[CoverageOptions] = None, dataset: Optional[DatasetOptions] = None,
               storage_warning_minutes: float = 10.0, stream_depth: bool = True, log=None,
               log_level: int = LogLevel.INFO, queue_full: int = QueueFull.DROP) -> "Session":
        """Resumes the session of the dataset in ``directory`` after a crash or :meth:`close`
        (``ck_session_resume``): the dataset is reopened (the MultiScan streams cut after their
        last journaled frame and continued), the current pass's box taken, coverage rebuilt from
        that pass's captured frames and the scheduler from them and the last streamed poses, so
        the next :meth:`process` behaves as if there had been no crash. The options are those of
        the constructor; the dataset keeps its own journaled options (``dataset`` gives only
        ``write_mode`` and ``write_queue_mb``).

        Raises:
            NotFoundError: no dataset there.
            CorruptError: a damaged journal, or a journaled stream end that is not a frame boundary.
            UnsupportedError: ``stream_depth`` but the streams were written by 0.1.
        """
        self = cls.__new__(cls)
        o = self._options(preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                          queue_full)
        handle = _ffi.ck_session_p()
        _lib.ck_session_resume(handle, path_arg(directory, "directory"), o)
        self._directory = os.fsdecode(path_arg(directory, "directory"))
        self._adopt(handle, _lib.ck_session_close)
        return self

    def _options(self, preset, scheduler, coverage, dataset, storage_warning_minutes, stream_depth, log, log_level,
                 queue_full):
        """The C options (the callback and nested structs kept alive on self)."""
        o = _ffi.defaults("ck_session_options_init", _ffi.ck_session_options, as_int(preset, "preset"))
        keep: list = []
        if scheduler is not None:
            if not isinstance(scheduler, SchedulerOptions):
                raise TypeError("scheduler must be SchedulerOptions")
            c_sched = scheduler._to_c()
            keep.append(c_sched)
            o.scheduler = _ffi.pointer(c_sched)
        if coverage is not None:
            if not isinstance(coverage, CoverageOptions):
                raise TypeError("coverage must be CoverageOptions")
            c_cov = coverage._to_c()
            keep.append(c_cov)
            o.coverage = _ffi.pointer(c_cov)
        if dataset is None:
            dataset = DatasetOptions()  # its start time: now (see DatasetOptions.start_time_unix)
        if dataset is not None:
            if not isinstance(dataset, DatasetOptions):
                raise TypeError("dataset must be DatasetOptions")
            c_ds = dataset._to_c(keep)
            keep.append(c_ds)
            o.dataset = _ffi.pointer(c_ds)
        o.storage_warning_minutes = as_float(storage_warning_minutes, "storage_warning_minutes")
        o.stream_depth = 1 if stream_depth else 0
        o.log_level = as_int(log_level, "log_level")
        o.queue_full = as_int(queue_full, "queue_full")
        cb = None
        if log is not None:
            if not callable(log):
                raise TypeError("log must be callable")

            def _log(user, level, message, _log=log):
                try:
                    _log(int(level), message.decode("utf-8", "replace") if message else "")
                except Exception:  # an exception must not cross the C boundary
                    pass

            cb = _ffi.ck_log_fn(_log)
            o.log = cb
        self._log_cb = cb
        self._keep = keep
        self._coverage_options = coverage if coverage is not None else CoverageOptions()
        self._finished = False
        return o

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def dataset(self) -> Dataset:
        """The session's dataset (borrowed: valid while the session is open)."""
        out = _ffi.ck_dataset_p()
        _lib.ck_session_dataset(out, self._h())
        return Dataset._borrow(out, self)

    @property
    def coverage(self) -> Coverage:
        """The session's coverage, a read-only :class:`Coverage` view (faces, summary, cells,
        dial, hint; ``ck_session_coverage``): valid while the session is open.

        Raises:
            StateError: no box yet (:meth:`set_box`).
        """
        out = _ffi.ck_coverage_p()
        _lib.ck_session_coverage(out, self._h())
        return Coverage._borrow(out, self, self._coverage_options)

    def surface(self) -> "Surface":
        """The session's surface map, a read-only :class:`Surface` view (``ck_session_surface``):
        valid while the session is open.

        Raises:
            StateError: no box yet (:meth:`set_box`).
        """
        from .surface import Surface

        out = _ffi.ck_surface_p()
        _lib.ck_session_surface(out, self._h())
        return Surface._borrow(out, self)

    def set_box(self, box: Box) -> None:
        """Sets or edits the box (coverage re-bound, counts kept; the pass box updated)."""
        _lib.ck_session_set_box(self._h(), check_box(box))

    def begin_pass(self, box: Box) -> int:
        """Starts a new capture pass with its own box (the object turned over): coverage starts
        again for it and the scheduler starts over (``ck_session_begin_pass``); returns the pass."""
        out = np.zeros(1, np.uint32)
        _lib.ck_session_begin_pass(out, self._h(), check_box(box))
        return int(out[0])

    def process(self, timestamp: float, pose, intrinsics: Intrinsics, *, tracking: Tracking = Tracking.NORMAL,
                rgb=None, depth=None, confidence=None, depth_intrinsics: Optional[Intrinsics] = None,
                sharpness: Optional[float] = None, tracking_reason: int = 0,
                mean_luma: Optional[float] = None, nv12=None, bgra=None, video_range: bool = False) -> SessionResult:
        """Processes one camera frame (``ck_session_process``).

        Args:
            timestamp: seconds, strictly increasing. pose: camera-to-world (4, 4).
            intrinsics: the image's :class:`Intrinsics`.
            rgb: optional uint8 image (written as PNG when captured); without it, a captured
                result's ``image_path`` names the file the caller must write now.
            depth: optional (h, w) depth map: float32 / float16 metres or uint16 millimetres
                (float64 is converted to float32); confidence: optional (h, w) uint8.
            depth_intrinsics: their :class:`Intrinsics`; None: ``intrinsics`` scaled to the
                depth map's size (ARKit's depth is aligned with its image).
            sharpness: the caller's score (None: measured from gray pixels or NV12's Y plane).
            tracking_reason: a :class:`TrackingReason`, read with ``Tracking.LIMITED``.
            mean_luma: mean image brightness 0..1 for "more light needed" (None: measured from
                the image when given, BT.601 luma of every 4th pixel of every 4th row; every 8th above 640 x 480,
                every 16th above 1280 x 960).
            nv12, bgra, video_range: camera-native pixels instead of ``rgb``, as
                :meth:`Dataset.add_frame` takes them (converted off the caller's thread).
        """
        if (rgb is not None) + (nv12 is not None) + (bgra is not None) > 1:
            raise ValueError("give one of rgb, nv12 and bgra")
        f = _new_frame(_FRAME_TEMPLATE)
        f.tracking = as_int(tracking, "tracking")
        f.timestamp = as_float(timestamp, "timestamp")
        f.pose = as_mat4(pose, "pose")
        f.intrinsics = _check_intrinsics(intrinsics)
        keep = []
        if rgb is not None:
            px, f.image = image(rgb, intrinsics, "rgb")
            keep.append(px)
        elif nv12 is not None or bgra is not None:
            arrays, f.image, f.image_chroma, f.image_chroma_stride = camera_image(nv12, bgra, video_range, intrinsics)
            keep.extend(arrays)
        shape = None
        if depth_intrinsics is not None and (depth is not None or confidence is not None):
            f.depth_intrinsics = _check_intrinsics(depth_intrinsics)
            shape = (depth_intrinsics.height, depth_intrinsics.width)
        if depth is not None:
            dm, f.depth = depth_map(depth, "depth", shape)
            keep.append(dm)
            shape = dm.shape
        if confidence is not None:
            if shape is None:
                shape = np.shape(confidence)
            cm, f.confidence = confidence_map(confidence, "confidence", shape)
            keep.append(cm)
        if sharpness is not None:
            f.sharpness = as_float(sharpness, "sharpness")
        f.tracking_reason = as_int(tracking_reason, "tracking_reason")
        if mean_luma is not None:
            f.mean_luma = as_float(mean_luma, "mean_luma")
        r = _ck_result()
        status = _process(r, self._h(), f)  # the arrays in `keep` stay referenced until here
        if status < 0:
            _fail(status)
        return SessionResult._from_c(r)

    def flush(self) -> None:
        """Commits a captured image written by now and waits until every queued frame is written
        and journaled (``ck_session_flush``): every frame processed before survives a crash."""
        _lib.ck_session_flush(self._h())

    def events(self) -> List[Event]:
        """Removes and returns the queued events, oldest first."""
        return drain_events(_lib.ck_session_next_event, self._h())

    def finish(self, zip: bool = False, zip_path=None) -> None:
        """Finalises the dataset (as :meth:`Dataset.finalize`)."""
        if zip_path is not None and not zip:
            raise ValueError("zip_path needs zip=True")
        _lib.ck_session_finish(self._h(), FINALIZE_ZIP if zip else 0,
                               None if zip_path is None else path_arg(zip_path, "zip_path"))
        self._finished = True

    def __exit__(self, exc_type, exc, tb) -> None:
        """``with Session(...) as s:`` finishes the session on a clean exit (unless :meth:`finish`
        ran already or it was closed), then closes it; after an exception it only closes, so the
        dataset stays as the crash left it (resumable with :meth:`Dataset.open`)."""
        try:
            if exc_type is None and not self.closed and not self._finished:
                self.finish()
        finally:
            self.close()
