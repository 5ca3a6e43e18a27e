"""What nerfstudio, instant-ngp or MultiScan's tools would reject in a dataset
(``capturekit.validate(path)``, the ``capturekit validate`` command).

Every file is read as those tools read it, to its end: transforms.json and each frame's image and
depth PNG headers (nerfstudio, instant-ngp); the scan metadata ``<id>.json``, the camera-info
lines ``<id>.jsonl`` and the raw-DEFLATE depth and confidence streams decoded the way MultiScan's
own decoder does (``zlib.decompressobj(-15)`` in 16 KiB chunks, frames cut by
width x height x bytes per pixel), so that the frame counts of the streams, of the metadata and
of the camera-info lines must agree. Paths a dataset names are held to the library's rule (see
:func:`capturekit._tools.contained`): one that leaves the folder is flagged and never read.

Example::

    r = capturekit.validate("scan")
    if not r.ok:
        for p in r.problems:
            print(p.level, p.tool, p.what)
"""

from __future__ import annotations

import glob
import json
import os
import re
import zlib
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

import numpy as np

from ._tools import NOT_FINISHED, UnsafePathError, UsageError, contained, progress, read_jsonl, scan_kind

__all__ = ["Problem", "ValidationResult", "validate"]

_CAMERA_MODELS = ("OPENCV", "OPENCV_FISHEYE", "PINHOLE", "SIMPLE_PINHOLE", "EQUIRECTANGULAR")
_CHUNK = 16 * 1024  # MultiScan's decoder reads 16 KiB at a time
_OUT_CHUNK = 1 << 20  # decompressed bytes held at once
_NAME = re.compile(r"^[\x21-\x2e\x30-\x5b\x5d-\x7e]{1,200}$")  # the library's rule for a scan id


@dataclass(frozen=True)
class Problem:
    """One thing a tool would refuse or read wrong."""

    tool: str  #: "nerfstudio", "instant-ngp", "multiscan" or "capturekit" (the dataset itself)
    level: str  #: "error" (the tool refuses or loads wrong data) or "warning"
    what: str  #: one sentence naming the file, frame or line
    file: Optional[str] = None  #: the file at fault, relative to the dataset
    frame: Optional[int] = None  #: the frame at fault (transforms.json's, or the stream's)


@dataclass
class ValidationResult:
    """What :func:`validate` found."""

    path: str
    finished: bool
    problems: List[Problem] = field(default_factory=list)
    #: frames (transforms.json or, unfinished, the journal), depth_frames, and for a scan
    #: depth_stream_frames, confidence_stream_frames, camera_info_lines, metadata_frames.
    counts: Dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> List[Problem]:
        return [p for p in self.problems if p.level == "error"]

    @property
    def warnings(self) -> List[Problem]:
        return [p for p in self.problems if p.level != "error"]

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def as_dict(self) -> dict:
        return {"path": self.path, "finished": self.finished, "ok": self.ok, "counts": dict(self.counts),
                "problems": [asdict(p) for p in self.problems]}


def _image_size(path: str):
    """(width, height) of a PNG or JPEG file, read from its header (Pillow for non-PNG)."""
    from .images import read_png_info
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"\x89PNG"):
        info = read_png_info(path)
        return info.width, info.height
    from PIL import Image  # JPEG and the rest: Pillow reads the header only
    with Image.open(path) as im:
        return im.size


def decode_stream(path: str, frame_bytes: int, max_value: Optional[int] = None) -> dict:
    """A raw-DEFLATE stream decoded to its end as MultiScan's decoder does. Returns ``frames``
    (complete frames), ``extra`` (bytes of a cut last frame), ``ended`` (the final block seen),
    ``trailing`` (bytes after it), ``error`` (zlib's complaint, with the frame it hit) and
    ``bad_frame`` (the first frame holding a value above ``max_value``)."""
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    total = 0
    out = {"frames": 0, "extra": 0, "ended": False, "trailing": 0, "error": None, "bad_frame": None}
    with open(path, "rb") as f:
        while not d.eof:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            buf = chunk
            while buf and not d.eof:
                try:
                    data = d.decompress(buf, _OUT_CHUNK)
                except zlib.error as e:
                    out["error"] = f"{e} in frame {total // frame_bytes} (after {total} decoded bytes)"
                    out["frames"], out["extra"] = total // frame_bytes, total % frame_bytes
                    return out
                if max_value is not None and data and out["bad_frame"] is None:
                    v = np.frombuffer(data, np.uint8)
                    over = np.flatnonzero(v > max_value)
                    if over.size:
                        out["bad_frame"] = (total + int(over[0])) // frame_bytes
                total += len(data)
                buf = d.unconsumed_tail
        out["ended"] = d.eof
        out["trailing"] = len(d.unused_data) + len(f.read())
    out["frames"], out["extra"] = total // frame_bytes, total % frame_bytes
    return out


def _scan_id(path: str) -> Optional[str]:
    """The dataset's scan id: its journal's begin line (held to the library's name rule), else the
    name of a stream file in the folder."""
    try:
        with open(os.path.join(path, "capturekit.jsonl"), "rb") as f:
            head = json.loads(f.readline())
        sid = head.get("scan_id") if isinstance(head, dict) else None
        if isinstance(sid, str) and _NAME.match(sid) and sid not in (".", ".."):
            return sid
    except (OSError, ValueError, RecursionError):
        pass
    for ext in (".json", ".depth.zlib", ".confidence.zlib"):
        if ext == ".json":
            from ._tools import multiscan_metadata
            meta = multiscan_metadata(path)
            names = [meta] if meta is not None and os.path.dirname(meta) == path else []
        else:
            names = sorted(glob.glob(os.path.join(glob.escape(path), "*" + ext)))
        if names:
            return os.path.basename(names[0])[: -len(ext)]
    return None


class _Checker:
    def __init__(self, path: str):
        self.path = path
        self.result = ValidationResult(path=path, finished=os.path.isfile(os.path.join(path, "transforms.json")))

    def problem(self, tool: str, level: str, what: str, file: Optional[str] = None, frame: Optional[int] = None):
        self.result.problems.append(Problem(tool, level, what, file, frame))

    def file(self, rel: str, frame: int, what: str, name: str) -> Optional[str]:
        """The path of a file a frame names, or None (flagged: outside the dataset, or missing)."""
        try:
            full = contained(self.path, rel)
        except UnsafePathError as e:
            self.problem("capturekit", "error", f"{name}: {what} {e} (not read)", rel if isinstance(rel, str) else None, frame)
            return None
        if not os.path.isfile(full):
            self.problem("nerfstudio", "error", f"{name}: {what} {rel} is missing", rel, frame)
            return None
        return full

    # -- transforms.json ------------------------------------------------------------------------

    def transforms(self) -> None:
        try:
            with open(os.path.join(self.path, "transforms.json"), "rb") as f:
                tf = json.load(f)
        except OSError as e:
            self.problem("nerfstudio", "error", f"transforms.json cannot be read: {e.strerror}", "transforms.json")
            return
        except (ValueError, RecursionError) as e:
            where = f"line {e.lineno} column {e.colno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            self.problem("nerfstudio", "error", f"transforms.json is not valid JSON ({where})", "transforms.json")
            return
        frames = tf.get("frames") if isinstance(tf, dict) else None
        if not isinstance(frames, list) or not frames:
            self.problem("nerfstudio", "error", "transforms.json has no frames", "transforms.json")
            return
        self.result.counts["frames"] = len(frames)
        if tf.get("camera_model", "OPENCV") not in _CAMERA_MODELS:
            self.problem("nerfstudio", "error", f"transforms.json: unknown camera_model {tf.get('camera_model')!r}",
                         "transforms.json")
        keys = ("fl_x", "fl_y", "cx", "cy", "w", "h")
        depth_frames = 0
        for i, f in enumerate(progress(frames, len(frames), "validating frames")):
            if not isinstance(f, dict):
                self.problem("nerfstudio", "error", f"frame {i}: not a JSON object", "transforms.json", i)
                continue
            fp = f.get("file_path")
            name = f"frame {i} ({fp if isinstance(fp, str) else '?'})"
            if not isinstance(fp, str):
                self.problem("nerfstudio", "error", f"{name}: no file_path", "transforms.json", i)
                continue
            try:
                m = np.asarray(f.get("transform_matrix", []), dtype=np.float64)
            except (TypeError, ValueError):
                m = np.zeros(0)
            if m.shape != (4, 4) or not np.all(np.isfinite(m)):
                self.problem("nerfstudio", "error", f"{name}: transform_matrix is not a finite 4x4 matrix", "transforms.json", i)
            elif abs(np.linalg.det(m[:3, :3]) - 1) > 1e-3:
                self.problem("nerfstudio", "warning", f"{name}: transform_matrix's rotation is not orthonormal",
                             "transforms.json", i)
            k = {key: f.get(key, tf.get(key)) for key in keys}
            if any(v is None for v in k.values()):
                self.problem("nerfstudio", "error", f"{name}: intrinsics incomplete "
                             f"({', '.join(key for key, v in k.items() if v is None)})", "transforms.json", i)
                continue
            img = self.file(fp, i, "image", name)
            if img is None:
                continue
            try:
                w, h = _image_size(img)
            except Exception as e:  # a damaged file: every loader fails on it
                self.problem("nerfstudio", "error", f"{name}: image {fp} cannot be read ({e})", fp, i)
                continue
            if (w, h) != (k["w"], k["h"]):
                self.problem("nerfstudio", "error", f"{name}: image {fp} is {w}x{h} but its intrinsics say "
                             f"{k['w']}x{k['h']}", fp, i)
            seen = set()
            depth_frames += any(f.get(key) is not None for key in ("depth_file_path", "depth_path"))
            for key in ("depth_file_path", "depth_path"):  # nerfstudio's and instant-ngp's names
                dp = f.get(key)
                if dp is None or dp in seen:
                    continue
                seen.add(dp)
                dfile = self.file(dp, i, f"depth ({key})", name)
                if dfile is None:
                    continue
                try:
                    size = _image_size(dfile)
                except Exception as e:
                    self.problem("nerfstudio", "error", f"{name}: depth {dp} cannot be read ({e})", dp, i)
                    continue
                if size != (w, h):
                    self.problem("instant-ngp", "error", f"{name}: depth {dp} is {size[0]}x{size[1]} but the image is "
                                 f"{w}x{h} (instant-ngp needs equal sizes)", dp, i)
        self.result.counts["depth_frames"] = depth_frames
        if depth_frames and "integer_depth_scale" not in tf:
            self.problem("instant-ngp", "error", "transforms.json: depth without integer_depth_scale", "transforms.json")

    # -- the MultiScan scan ---------------------------------------------------------------------

    def scan(self) -> None:
        sid = _scan_id(self.path)
        if sid is None:
            return
        rel = lambda ext: sid + ext  # noqa: E731
        have = {ext: os.path.isfile(os.path.join(self.path, rel(ext)))
                for ext in (".json", ".jsonl", ".depth.zlib", ".confidence.zlib")}
        if not any(have.values()):
            return  # a dataset that never streamed
        if not have[".json"]:
            streams = ", ".join(rel(e) for e in (".jsonl", ".depth.zlib", ".confidence.zlib") if have[e])
            self.problem("multiscan", "error", f"the scan metadata {rel('.json')} is missing: MultiScan's tools cannot"
                         f" read {streams} without it", rel(".json"))
            return
        meta_rel = rel(".json")
        try:
            with open(os.path.join(self.path, meta_rel), "rb") as f:
                meta = json.load(f)
        except (ValueError, RecursionError) as e:
            where = f"line {e.lineno} column {e.colno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            self.problem("multiscan", "error", f"{meta_rel} is not valid JSON ({where})", meta_rel)
            return
        except OSError as e:
            self.problem("multiscan", "error", f"{meta_rel} cannot be read: {e.strerror}", meta_rel)
            return
        streams = meta.get("streams") if isinstance(meta, dict) else None
        if not isinstance(streams, list) or not all(isinstance(s, dict) for s in streams):
            self.problem("multiscan", "error", f"{meta_rel} has no list of streams", meta_rel)
            return
        names = [os.path.basename(p) for p in glob.glob(os.path.join(glob.escape(self.path), glob.escape(sid) + ".*"))
                 if not p.endswith(".idx")]
        if meta.get("number_of_files") != len(names):
            self.problem("multiscan", "error", f"{meta_rel}: number_of_files {meta.get('number_of_files')} but "
                         f"{len(names)} scan files (their upload server compares them)", meta_rel)
        if sid.startswith("19700101T000000"):
            self.problem("multiscan", "error", "the scan id has no start time (set start_time_unix): their server "
                         "refuses a second scan with the same id", meta_rel)
        by_type = {s.get("type"): s for s in streams}
        counts = self.result.counts
        lines = self.camera_info(rel(".jsonl"))
        counts["camera_info_lines"] = lines
        depth = by_type.get("lidar_sensor")
        res = depth.get("resolution") if depth else None
        size = None
        if isinstance(res, list) and len(res) == 2 and all(isinstance(v, int) and 0 < v <= 65535 for v in res):
            size = res  # [height, width]
        elif depth is not None:
            self.problem("multiscan", "error", f"{meta_rel}: stream {depth.get('id')} has no valid resolution [h, w]",
                         meta_rel)
        for kind, ext, bpp, top in (("lidar_sensor", ".depth.zlib", 2, None), ("confidence_map", ".confidence.zlib", 1, 2)):
            s = by_type.get(kind)
            if s is None:
                if have[ext]:
                    self.problem("multiscan", "warning", f"{rel(ext)} is not described in {meta_rel}", rel(ext))
                continue
            if not have[ext]:
                self.problem("multiscan", "error", f"{rel(ext)} is missing ({meta_rel} lists stream {s.get('id')})", rel(ext))
                continue
            r = s.get("resolution", size) if kind == "confidence_map" else size
            if not (isinstance(r, list) and len(r) == 2 and all(isinstance(v, int) and v > 0 for v in r)):
                continue
            self.stream(rel(ext), r[0] * r[1] * bpp, top, s, lines, kind)
        for s in streams:
            n = s.get("number_of_frames")
            if s.get("type") in ("lidar_sensor", "confidence_map") or n is None:
                continue
            if n != lines:
                self.problem("multiscan", "error", f"{meta_rel}: stream {s.get('id')} has {n} frames but "
                             f"{rel('.jsonl')} has {lines} camera-info lines", meta_rel)
            counts.setdefault("metadata_frames", n)
            if s.get("type") == "color_camera" and s.get("encoding") not in (None, "none"):
                video = rel("." + str(s.get("file_extension")))
                if not os.path.isfile(os.path.join(self.path, video)):
                    self.problem("multiscan", "error", f"the colour video {video} is missing ({meta_rel} lists it)", video)

    def stream(self, rel: str, frame_bytes: int, top, s: dict, lines: int, kind: str) -> None:
        r = decode_stream(os.path.join(self.path, rel), frame_bytes, top)
        key = "depth_stream_frames" if kind == "lidar_sensor" else "confidence_stream_frames"
        self.result.counts[key] = r["frames"]
        if r["error"]:
            self.problem("multiscan", "error", f"{rel} does not decode: {r['error']}: MultiScan's decoder stops there",
                         rel, r["frames"])
            return
        if r["extra"]:
            self.problem("multiscan", "error", f"{rel}: frame {r['frames']} is cut ({r['extra']} of {frame_bytes} bytes)",
                         rel, r["frames"])
        n = s.get("number_of_frames")
        if n != r["frames"]:
            self.problem("multiscan", "error", f"{rel} holds {r['frames']} frames but the metadata says {n}", rel)
        if r["frames"] != lines:
            self.problem("multiscan", "error", f"{rel} holds {r['frames']} frames but there are {lines} camera-info lines",
                         rel)
        if r["bad_frame"] is not None:
            self.problem("multiscan", "error", f"{rel}: frame {r['bad_frame']} holds a confidence above {top}", rel,
                         r["bad_frame"])
        if not r["ended"] and not r["extra"]:
            self.problem("multiscan", "warning", f"{rel} has no end-of-stream block (cut after frame {r['frames'] - 1}?)",
                         rel)
        if r["trailing"]:
            self.problem("multiscan", "warning", f"{rel}: {r['trailing']} bytes after the end of the stream", rel)

    # -- a Stray Scanner capture -------------------------------------------------------------------

    def stray(self) -> None:
        """Every frame's depth and confidence read through the library's scan reader."""
        from .errors import CaptureKitError
        from .scan import Scan

        try:
            scan = Scan(self.path)
        except CaptureKitError as e:
            self.problem("capturekit", "error", f"the Stray Scanner capture cannot be read: {e.message}")
            return
        with scan:
            self.result.counts["frames"] = len(scan)
            depth = 0
            for i in progress(range(len(scan)), len(scan), "validating frames"):
                try:
                    f = scan.frame(i)
                    if not f.has_depth:
                        continue
                    scan.depth(i)
                    if scan.has_confidence:
                        scan.confidence(i)
                    depth += 1
                except CaptureKitError as e:
                    self.problem("capturekit", "error", f"frame {i}: {e.message}", None, i)
            self.result.counts["depth_frames"] = depth

    def camera_info(self, rel: str) -> int:
        """Camera-info lines, each checked as MultiScan's scripts read it; returns the count."""
        full = os.path.join(self.path, rel)
        if not os.path.isfile(full):
            self.problem("multiscan", "error", f"the camera-info file {rel} is missing", rel)
            return 0
        n = 0
        last_t = None
        for line, value, error in read_jsonl(full):
            n = line
            if error is None:
                error = self._camera_line(value)
            if error is None and last_t is not None and value["timestamp"] <= last_t:
                error = "timestamp does not increase"
            if error is not None:
                self.problem("multiscan", "error", f"{rel} line {line}: {error}", rel, line - 1)
                if "cut" in error:
                    n -= 1
                continue
            last_t = value["timestamp"]
        return n

    @staticmethod
    def _camera_line(v) -> Optional[str]:
        if not isinstance(v, dict):
            return "not a JSON object"
        if not isinstance(v.get("timestamp"), int) or isinstance(v.get("timestamp"), bool):
            return "timestamp is not an integer (nanoseconds)"
        for key, n in (("transform", 16), ("intrinsics", 9)):
            m = v.get(key)
            if not (isinstance(m, list) and len(m) == n and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                                  for x in m) and np.all(np.isfinite(m))):
                return f"{key} is not {n} finite numbers"
        return None


def validate(path) -> ValidationResult:
    """What nerfstudio, instant-ngp or MultiScan's tools would reject in the dataset at ``path``.

    Returns a :class:`ValidationResult`: ``problems`` (each naming its file and frame), ``counts``
    (frames, depth frames, each stream's decoded frames, camera-info lines), ``ok``. An unfinished
    dataset (no transforms.json) is one error that says so, with its journaled frame count. A
    MultiScan scan folder (not a dataset) has its metadata, camera-info lines and streams checked
    as a dataset's are; a Stray Scanner folder has every depth and confidence frame read through
    the library's scan reader (``counts``: frames, depth_frames).

    Raises:
        capturekit._tools.UsageError: ``path`` is not a folder.
    """
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path):
        raise UsageError(f"{path} is not a folder")
    c = _Checker(path)
    kind = scan_kind(path)
    if kind in ("multiscan", "stray"):  # another app's capture: nothing to finish, its files checked
        c.result.finished = True
        c.scan() if kind == "multiscan" else c.stray()
        return c.result
    if not c.result.finished:
        frames = _journal_frames(path)
        if frames is None:
            c.problem("nerfstudio", "error", f"{path} holds no CaptureKit dataset (no transforms.json, no capturekit.jsonl)")
        else:
            c.result.counts["frames"] = frames
            c.problem("capturekit", "error", NOT_FINISHED.format(path=path, frames=frames), "transforms.json")
        return c.result
    c.transforms()
    c.scan()
    return c.result


def _journal_frames(path: str) -> Optional[int]:
    """The frames a reader of the journal finds (the library's read-only open), or None."""
    from .dataset import Dataset
    from .errors import CaptureKitError

    if not os.path.isfile(os.path.join(path, "capturekit.jsonl")):
        return None
    try:
        with Dataset.open_readonly(path) as ds:
            return ds.frame_count
    except CaptureKitError as e:
        raise UsageError(f"{path}: its journal cannot be read: {e.message}") from None
