"""``capturekit report``: one self-contained HTML file that shows what a capture holds.

Everything is inline (SVG, base64 PNG, CSS, a few lines of script that record errors); the page
loads nothing (its Content-Security-Policy forbids any fetch). Sections:

- the camera path, top-down (x right, z down: seen from above) and from the side (x right, y up),
  with the captured frames marked and each pass's box drawn (``boundingbox.json``);
- coverage per pass: the view-direction dial and per-face progress, computed by the library's
  own :class:`~capturekit.Coverage` over the dataset's poses and box;
- a timeline of the camera's speed (the library's :class:`~capturekit.Scheduler` replayed over
  the camera-info poses, so the speed and bands are those guidance uses), the speed bands, the
  captures and the guidance events of ``events.jsonl``;
- the surface coverage map (the library's :class:`~capturekit.Surface` fused from the captured
  frames' depth, the box's faces standing in without depth): the surface elements seen from the
  top and from the side, coloured by coverage (dark grey: out of reach, see ``_surface``), and
  one line "capture next: ..." (the map's hint from the last captured pose);
- false-colour thumbnails of a few depth frames and their confidence.

Stable element ids: ``ck-path``/``ck-path-side`` (polylines), ``ck-captures``/``ck-captures-side``,
``ck-box``/``ck-box-side`` (polygons), ``ck-dial``, ``ck-faces``, ``ck-timeline``, ``ck-speed``,
``ck-events``, ``ck-surface-top``/``ck-surface-side`` (images of the surface map; their
``data-transform`` is that of the camera views), ``ck-capture-next``, ``ck-depth``. A later pass p > 0 has ``-p<p>`` appended to its box, dial and
faces ids. Each view SVG states its world-to-pixel map in ``data-transform="s ox oy"``:
top view ``(ox + s x, oy + s z)``, side view ``(ox + s x, oy - s y)``; the timeline states
``data-transform="sx ox sy oy"`` for ``(ox + sx t, oy - sy speed)``.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from .box import Box
from ._tools import NOT_FINISHED, OUTPUTS, UnsafePathError, UsageError, contained, is_dataset
from ._tools import progress as _progress
from .dataset import Dataset
from .errors import CaptureKitError, InvalidArgumentError, StateError
from .geometry import Face
from .coverage import Coverage, CoverageOptions
from .events import EventCode
from .scheduler import Preset, Scheduler, SchedulerOptions, SpeedBand
from .images import encode_png
from .surface import ELEMENT_OUT_OF_REACH, Surface
from .scan import Scan

__all__ = ["build_report", "write_report"]

#: At most this many events are drawn and listed (a hostile events.jsonl can hold millions).
MAX_EVENTS = 500
#: Thumbnails are downscaled (by an integer step) to at most this width, pixels.
THUMB_WIDTH = 160
_BAND_COLOURS = {SpeedBand.SLOW: "#dbeafe", SpeedBand.MEDIUM: "#dcfce7", SpeedBand.FAST: "#fef9c3",
                 SpeedBand.TOO_FAST: "#fee2e2"}
_CONFIDENCE_RGB = np.array([[220, 38, 38], [245, 158, 11], [22, 163, 74]], np.uint8)  # low, medium, high


def _fmt(v: float) -> str:
    """A coordinate in pixels, 2 decimals, no trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _points(xy: np.ndarray) -> str:
    return " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in xy)


def _hull(p: np.ndarray) -> np.ndarray:
    """Convex hull of 2-D points, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted({(float(x), float(y)) for x, y in p})
    if len(pts) < 3:
        return np.array(pts, np.float64).reshape(-1, 2)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list = []
    upper: list = []
    for q in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], q) <= 0:
            lower.pop()
        lower.append(q)
    for q in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], q) <= 0:
            upper.pop()
        upper.append(q)
    return np.array(lower[:-1] + upper[:-1], np.float64)


# -- reading the dataset ----------------------------------------------------------------------

@dataclass
class _Path:
    """The camera path: times (caller's clock, s), (N, 4, 4) poses, and where it came from."""

    times: np.ndarray
    poses: np.ndarray
    source: str


@dataclass
class _PassCoverage:
    number: int
    box: Box
    frames: int
    faces: list
    summary: object
    dial: np.ndarray
    face_mask: int


@dataclass
class _Data:
    name: str
    frames: list
    path: _Path
    passes: List[_PassCoverage] = field(default_factory=list)
    boxes: Dict[int, Box] = field(default_factory=dict)
    box_note: str = ""
    events: List[dict] = field(default_factory=list)
    event_total: int = 0
    speed: Optional[np.ndarray] = None
    bands: Optional[np.ndarray] = None
    options: Optional[SchedulerOptions] = None
    thumbs: List[dict] = field(default_factory=list)
    depth_range: Tuple[float, float] = (0.0, 0.0)
    note: str = ""  #: the dataset is not finished: read through its journal
    surface: Optional["_SurfaceMap"] = None


@dataclass
class _SurfaceMap:
    """The surface coverage map of the last pass: world positions, coverage colours, the hint."""
    world: np.ndarray        #: (N, 3) element positions, world
    colour: np.ndarray       #: (N, 3) uint8 coverage colours (the coverage PLY's)
    from_depth: bool
    frames_fused: int
    views: int
    well_fraction: float     #: of the observed surface, well covered
    complete_fraction: float
    frontier: int
    next_text: str           #: "capture next: ..."
    voxel: float


def _scan(path: str) -> Optional[Scan]:
    """The dataset's MultiScan streams through the library's scan reader (its <id>.json is written
    at finalize), or None (never finalised, or damaged: the report then draws the captured frames)."""
    try:
        return Scan(path)
    except CaptureKitError:
        return None


def _camera_path(frames: list, scan: Optional[Scan]) -> _Path:
    """Every tracked pose from the camera-info stream when there is one (its clock shifted onto the
    caller's, which the frames' timestamps use), else the captured frames' poses."""
    if scan is not None and len(scan) >= 2:
        tracked = scan.frames()
        times = np.array([f.timestamp for f in tracked], np.float64)
        poses = np.array([f.pose for f in tracked], np.float64).reshape(-1, 4, 4)
        shifts = [f.timestamp - times[f.stream_index] for f in frames
                  if f.stream_index is not None and f.stream_index < len(times)]
        shift = float(np.median(shifts)) if shifts else 0.0
        return _Path(times + shift, poses, f"the camera-info stream ({len(times)} lines)")
    times = np.array([f.timestamp for f in frames], np.float64)
    poses = np.array([f.pose for f in frames], np.float64).reshape(-1, 4, 4)
    return _Path(times, poses, "captured frames")


def _replay_speed(p: _Path, options: SchedulerOptions) -> Tuple[np.ndarray, np.ndarray]:
    """The smoothed speed and band guidance gave each pose (the library's scheduler replayed);
    NaN / -1 for a pose it refused (a repeated time, a non-rigid matrix)."""
    speed = np.full(len(p.times), np.nan)
    band = np.full(len(p.times), -1, np.int32)
    with Scheduler(options) as sched:
        last = -math.inf
        for i in _progress(range(len(p.times)), len(p.times), "replaying guidance"):
            t = float(p.times[i])
            if not t > last:
                continue
            try:
                g = sched.update(t, p.poses[i])
            except InvalidArgumentError:
                continue
            except StateError:  # aborted after drift: start over, as the rig would
                sched.reset()
                continue
            last = t
            speed[i], band[i] = g.speed, int(g.band)
    return speed, band


def _read_events(path: str) -> Tuple[List[dict], int]:
    """(the first MAX_EVENTS events of events.jsonl but captureCommitted, their total count)."""
    ev_path = os.path.join(path, "events.jsonl")
    out: List[dict] = []
    total = 0
    if not os.path.isfile(ev_path):
        return out, 0
    with open(ev_path, "rb") as f:
        for line in f:
            try:
                e = json.loads(line)
                t, code = float(e["timestamp"]), int(e["code"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line after a crash, or a stranger's line
            if not math.isfinite(t) or code == EventCode.CAPTURE_COMMITTED:
                continue
            total += 1
            if len(out) < MAX_EVENTS:
                value = e.get("value", 0.0)
                out.append({"t": t, "code": code, "name": str(e.get("name", code))[:64],
                            "text": str(e.get("text", ""))[:200],
                            "value": float(value) if isinstance(value, (int, float)) else 0.0})
    return out, total


def _coverage(path: str, frames: list) -> Tuple[List[_PassCoverage], Dict[int, Box], str]:
    """Each pass's coverage: its box from boundingbox.json and its frames added to a
    :class:`Coverage` with the default options (what a session uses)."""
    box_path = os.path.join(path, "boundingbox.json")
    if not os.path.isfile(box_path):
        return [], {}, "no boundingbox.json: the capture had no box, so there is no coverage"
    numbers = sorted({f.pass_number for f in frames}) or [0]
    boxes = {p: Box.read_json(box_path, p) for p in numbers}
    options = CoverageOptions()
    out = []
    for p in numbers:
        mine = [f for f in frames if f.pass_number == p]
        with Coverage(boxes[p], options) as cov:
            for f in _progress(mine, len(mine), f"coverage of pass {p}"):
                cov.add_view(f.pose, f.intrinsics, f.timestamp)
            out.append(_PassCoverage(p, boxes[p], len(mine), [cov.face(i) for i in range(6)], cov.summary(),
                                     cov.dial(), options.face_mask))
    return out, boxes, ""


#: At most this many frames' depth is fused for the surface map (spread over the capture).
MAX_SURFACE_FRAMES = 400
#: The surface map's colour for elements out of reach (``ck_surface_element.flags`` bit 3).
OUT_OF_REACH_GREY = (96, 96, 96)
_SIDE_NAMES = ["front", "left side", "right side", "bottom", "top", "back"]


def _surface(ds: Dataset, frames: list, boxes: Dict[int, Box]) -> Optional[_SurfaceMap]:
    """The last pass's surface map, as a session builds it: its captured frames' depth fused (at
    most MAX_SURFACE_FRAMES of them), each frame added as a view; without depth the box's faces
    stand in. Colours as the coverage PLY: red unseen, yellow to cyan by the share of the four
    "well covered" thresholds met; and dark grey for surface out of reach (no view on the rings
    around the box can cover it well: the figures leave it out, so it is not what to capture)."""
    if not boxes or not frames:
        return None
    last = max(boxes)
    box = boxes[last]
    mine = [(i, f) for i, f in enumerate(frames) if f.pass_number == last]
    if not mine:
        return None
    with Surface(box) as surf:
        with_depth = [(i, f) for i, f in mine if f.depth_path is not None]
        step = max(1, math.ceil(len(with_depth) / MAX_SURFACE_FRAMES))
        for i, f in _progress(with_depth[::step], len(with_depth[::step]), "surface map"):
            try:
                d = ds.depth(i)
            except CaptureKitError:
                continue
            if d is None or d.ndim != 2:
                continue
            h, w = d.shape
            k = f.intrinsics
            dk = type(k)(fx=k.fx * w / k.width, fy=k.fy * h / k.height, cx=k.cx * w / k.width, cy=k.cy * h / k.height,
                         width=w, height=h)
            surf.fuse(d, dk, f.pose, timestamp=f.timestamp)
        for _, f in mine:
            surf.add_view(f.pose, f.intrinsics, timestamp=f.timestamp)
        e = surf.elements()
        fig = surf.figures()
        hint = surf.hint(mine[-1][1].pose)
    # Box frame -> world: the box's axes are the outward normals of its right, top and back faces.
    rot = np.stack([np.asarray(box.face(Face.RIGHT).normal, np.float64), np.asarray(box.face(Face.TOP).normal, np.float64),
                    np.asarray(box.face(Face.BACK).normal, np.float64)], axis=1)
    world = np.asarray(e["position"], np.float64) @ rot.T + np.asarray(box.center, np.float64)
    seen = (e["flags"] & 1) != 0
    views_ok = e["views"] >= 3
    met = (views_ok.astype(float) + (e["spread_deg"] >= 15) + (e["best_incidence_deg"] <= 65)
           + (e["best_px_per_cm"] >= 2)) / 4
    colour = np.stack([(1 - met) * 255, np.full(len(e), 255.0), met * 255], 1).astype(np.uint8)
    colour[~seen] = (255, 0, 0)
    colour[(e["flags"] & ELEMENT_OUT_OF_REACH) != 0] = OUT_OF_REACH_GREY
    if hint.side < 0:
        nxt = "capture next: nothing, the surface is complete" if hint.side_complete > 0 else \
            "capture next: point the camera at the object"
    else:
        if hint.side in (Face.TOP, Face.BOTTOM):
            how = f"{'raise' if hint.side == Face.TOP else 'lower'} the camera to {math.degrees(hint.target_elevation):.0f}° elevation"
        elif abs(hint.move_angle) <= math.pi / 6:
            how = "from about here"
        else:
            how = f"walk {abs(math.degrees(hint.move_angle)):.0f}° {'left' if hint.move_angle > 0 else 'right'} around the object"
        nxt = f"capture next: {hint.text} ({_SIDE_NAMES[hint.side]} {hint.side_complete:.0%} complete; {how})"
    return _SurfaceMap(world=world, colour=colour, from_depth=bool(fig.from_depth), frames_fused=fig.frames_fused,
                       views=fig.views, well_fraction=fig.all.well_fraction, complete_fraction=fig.all.complete_fraction,
                       frontier=fig.all.frontier, next_text=nxt, voxel=float(fig.voxel_size))


def _turbo(x: np.ndarray) -> np.ndarray:
    """Google's Turbo colour map (polynomial fit) of x in [0, 1] as uint8 RGB."""
    x = np.clip(x, 0.0, 1.0)[..., None]
    c = np.array([[0.13572138, 0.09140261, 0.10667330], [4.61539260, 2.19418839, 12.64194608],
                  [-42.66032258, 4.84296658, -60.58204836], [132.13108234, -14.18503333, 110.36276771],
                  [-152.94239396, 4.27729857, -89.90310912], [59.28637943, 2.82956604, 27.34824973]])
    rgb = c[0] + x * (c[1] + x * (c[2] + x * (c[3] + x * (c[4] + x * c[5]))))
    return np.rint(np.clip(rgb, 0, 1) * 255).astype(np.uint8)


def _png_uri(rgb: np.ndarray) -> str:
    return "data:image/png;base64," + base64.b64encode(encode_png(np.ascontiguousarray(rgb), level=9)).decode("ascii")


def _thumbnails(ds: Dataset, frames: list, count: int):
    """False-colour depth and confidence thumbnails of ``count`` frames spread over the capture."""
    with_depth = [i for i, f in enumerate(frames) if f.depth_path is not None]
    if not with_depth or count <= 0:
        return [], (0.0, 0.0)
    picks = sorted({with_depth[int(round(j))] for j in np.linspace(0, len(with_depth) - 1, min(count, len(with_depth)))})
    depths = {}
    thumbs = []
    for i in _progress(picks, len(picks), "depth thumbnails"):
        f = frames[i]
        item = {"index": i, "id": f.id, "t": f.timestamp, "file": f.depth_path, "error": None}
        try:
            contained(ds.directory, f.depth_path)  # the library's path rule, with links resolved: never read outside
        except UnsafePathError as e:
            item["error"] = f"not read: {e}"
            thumbs.append(item)
            continue
        try:
            d = ds.depth(i)
        except (CaptureKitError, OSError) as e:
            item["error"] = f"depth unreadable: {e}"
            thumbs.append(item)
            continue
        step = max(1, -(-d.shape[1] // THUMB_WIDTH))
        depths[i] = d[::step, ::step]
        valid = np.isfinite(d) & (d > 0)
        item["valid"] = float(np.count_nonzero(valid)) / d.size
        item["median"] = float(np.median(d[valid])) if valid.any() else None
        item["size"] = f"{d.shape[1]}x{d.shape[0]}"
        if f.stream_index is not None:
            try:
                c = ds.confidence(i)  # the streamed confidence of this frame (None: not streamed)
            except CaptureKitError as e:
                item["conf_error"] = f"confidence unreadable: {e}"
                c = None
            if c is not None:
                cstep = max(1, -(-c.shape[1] // THUMB_WIDTH))
                small = c[::cstep, ::cstep]
                rgb = np.full(small.shape + (3,), 128, np.uint8)
                for level in range(3):
                    rgb[small == level] = _CONFIDENCE_RGB[level]
                item["conf_uri"] = _png_uri(rgb)
                item["conf_fractions"] = [float(np.count_nonzero(c == level)) / c.size for level in range(3)]
        thumbs.append(item)
    valid_all = np.concatenate([d[np.isfinite(d) & (d > 0)] for d in depths.values()]) if depths else np.zeros(0)
    lo, hi = (float(np.percentile(valid_all, 1)), float(np.percentile(valid_all, 99))) if valid_all.size else (0.0, 1.0)
    if not hi > lo:
        hi = lo + 1.0
    for item in thumbs:
        d = depths.get(item["index"])
        if d is None:
            continue
        rgb = _turbo((d - lo) / (hi - lo))
        rgb[~(np.isfinite(d) & (d > 0))] = (40, 40, 40)
        item["depth_uri"] = _png_uri(rgb)
    return thumbs, (lo, hi)


def _gather(path: str, preset: Preset, thumbnails: int) -> _Data:
    if not is_dataset(path):
        raise UsageError(f"{path} is not a CaptureKit dataset (no capturekit.jsonl or transforms.json in it)")
    try:
        ds = Dataset.open_readonly(path)
    except CaptureKitError as e:
        raise UsageError(f"{path}: {e.message}") from None
    with ds:
        n = ds.frame_count
        frames = [ds.frame(i) for i in _progress(range(n), n, "reading frames")]
        scan = _scan(path)
        try:
            data = _Data(name=os.path.basename(os.path.normpath(path)), frames=frames,
                         path=_camera_path(frames, scan))
        finally:
            if scan is not None:
                scan.close()
        data.passes, data.boxes, data.box_note = _coverage(path, frames)
        data.surface = _surface(ds, frames, data.boxes)
        data.events, data.event_total = _read_events(path)
        data.options = SchedulerOptions.preset(preset)
        data.speed, data.bands = _replay_speed(data.path, data.options)
        data.thumbs, data.depth_range = _thumbnails(ds, frames, thumbnails)
    if not os.path.isfile(os.path.join(path, "transforms.json")):
        data.note = NOT_FINISHED.format(path=data.name, frames=len(frames))
    if not frames and len(data.path.times) == 0:
        raise UsageError(f"{path} holds no frames and no camera path: nothing to report")
    return data


# -- drawing ----------------------------------------------------------------------------------

def _view_svg(data: _Data, side: bool) -> str:
    """The top-down (x, z) or side (x, -y) view: path, captures, boxes."""
    w, h, pad = 460, 360, 24
    suffix = "-side" if side else ""
    pos = data.path.poses[:, :3, 3] if len(data.path.poses) else np.zeros((0, 3))
    cams = np.array([f.pose[:3, 3] for f in data.frames], np.float64).reshape(-1, 3)
    corners = [b.corners().astype(np.float64) for b in data.boxes.values()]
    allp = np.concatenate([pos, cams] + corners) if (len(pos) or len(cams) or corners) else np.zeros((1, 3))
    a, b = (0, 1) if side else (0, 2)
    sign = -1.0 if side else 1.0
    lo, hi = allp[:, [a, b]].min(axis=0), allp[:, [a, b]].max(axis=0)
    span = np.maximum(hi - lo, 1e-6)
    s = float(min((w - 2 * pad) / span[0], (h - 2 * pad) / span[1]))
    ox = (w - s * (lo[0] + hi[0])) / 2
    oy = (h + s * (lo[1] + hi[1])) / 2 if side else (h - s * (lo[1] + hi[1])) / 2

    def proj(p):
        p = np.asarray(p, np.float64).reshape(-1, 3)
        return np.stack([ox + s * p[:, a], oy + sign * s * p[:, b]], axis=1)

    parts = [f'<svg id="ck-view{suffix or "-top"}" class="ck-view" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
             f'role="img" data-transform="{float(s)!r} {float(ox)!r} {float(oy)!r}" data-axes="{"x,-y" if side else "x,z"}">',
             f'<rect width="{w}" height="{h}" fill="#fafafa"/>']
    if side and any(bx.floor is not None for bx in data.boxes.values()):
        fy = oy - s * min(bx.floor for bx in data.boxes.values() if bx.floor is not None)
        parts.append(f'<line class="ck-floor" x1="0" x2="{w}" y1="{_fmt(fy)}" y2="{_fmt(fy)}" stroke="#a8a29e" '
                     'stroke-dasharray="4 3"/>')
    for p, bx in data.boxes.items():
        hull = _hull(proj(bx.corners()))
        bid = f"ck-box{suffix}" + (f"-p{p}" if p else "")
        parts.append(f'<polygon id="{bid}" class="ck-box" points="{_points(hull)}" fill="#f97316" fill-opacity="0.18" '
                     f'stroke="#ea580c" stroke-width="1.5"><title>box of pass {p}: size '
                     f'{", ".join(f"{v:.2f}" for v in bx.size)} m, yaw {bx.yaw:.2f} rad</title></polygon>')
        if not side:  # the front face: the edge between the two front corners, seen from above
            front = bx.face(Face.FRONT)
            c = proj(front.center)[0]
            n = np.asarray(front.normal, np.float64)
            tip = c + 14 * np.array([n[0], n[2]]) / max(1e-9, math.hypot(n[0], n[2]))
            parts.append(f'<line class="ck-front" x1="{_fmt(c[0])}" y1="{_fmt(c[1])}" x2="{_fmt(tip[0])}" '
                         f'y2="{_fmt(tip[1])}" stroke="#ea580c" stroke-width="2"><title>front face</title></line>')
    if len(pos):
        parts.append(f'<polyline id="ck-path{suffix}" class="ck-path" points="{_points(proj(pos))}" fill="none" '
                     f'stroke="#2563eb" stroke-width="1.2" stroke-linejoin="round" data-source="{html.escape(data.path.source)}"/>')
    parts.append(f'<g id="ck-captures{suffix}" class="ck-captures">')
    for f, q in zip(data.frames, proj(cams)):
        parts.append(f'<circle cx="{_fmt(q[0])}" cy="{_fmt(q[1])}" r="3" data-frame="{f.id}"><title>frame {f.id} '
                     f'(pass {f.pass_number}) at {f.timestamp:.2f} s</title></circle>')
    parts.append("</g>")
    scale_m = 10 ** math.floor(math.log10(max(1e-3, 80 / s)))
    parts.append(f'<g class="ck-scale"><line x1="{pad}" x2="{_fmt(pad + s * scale_m)}" y1="{h - 8}" y2="{h - 8}" '
                 f'stroke="#444" stroke-width="2"/><text x="{pad}" y="{h - 12}">{scale_m:g} m</text></g>')
    parts.append(f'<text x="{w - 8}" y="16" text-anchor="end" class="ck-axis">{"side: x →, y ↑" if side else "top: x →, z ↓"}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _surface_img(sm: _SurfaceMap, box: Box, side: bool) -> str:
    """The surface map seen from the top (x, z) or the side (x, -y), the box filling the image:
    one square per element (a voxel's size), the element nearest the viewer on top (from above:
    the highest; from the side, looking down -z: the largest z)."""
    w = h = 320
    pad = 12
    a, b = (0, 1) if side else (0, 2)
    sign = -1.0 if side else 1.0
    corners = np.asarray(box.corners(), np.float64)
    lo, hi = corners[:, [a, b]].min(axis=0), corners[:, [a, b]].max(axis=0)
    span = np.maximum(hi - lo, 1e-6)
    sc = float(min((w - 2 * pad) / span[0], (h - 2 * pad) / span[1]))
    ox = (w - sc * (lo[0] + hi[0])) / 2
    oy = (h + sc * (lo[1] + hi[1])) / 2 if side else (h - sc * (lo[1] + hi[1])) / 2
    img = np.full((h, w, 3), 250, np.uint8)
    # The box outline (its hull), grey.
    hull = _hull(np.stack([ox + sc * corners[:, a], oy + sign * sc * corners[:, b]], 1))
    for p0, p1 in zip(hull, np.roll(hull, -1, axis=0)):
        n = int(max(abs(p1 - p0).max(), 1))
        t = np.linspace(0, 1, n + 1)[:, None]
        q = np.rint(p0 + t * (p1 - p0)).astype(int)
        ok = (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
        img[q[ok, 1], q[ok, 0]] = (160, 160, 160)
    if len(sm.world):
        depth_key = sm.world[:, 2] if side else sm.world[:, 1]
        order = np.argsort(depth_key, kind="stable")
        px = ox + sc * sm.world[order, a]
        py = oy + sign * sc * sm.world[order, b]
        size = int(min(8, max(1, math.ceil(sc * sm.voxel)))) if sm.from_depth else 4
        top = np.full((h, w), -1, np.int64)    # per pixel: the latest (nearest) element drawn there
        rank = np.arange(len(order))
        for dy in range(size):
            for dx in range(size):
                xi = np.floor(px - size / 2 + dx + 0.5).astype(int)
                yi = np.floor(py - size / 2 + dy + 0.5).astype(int)
                ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
                np.maximum.at(top, (yi[ok], xi[ok]), rank[ok])
        hit = top >= 0
        img[hit] = sm.colour[order][top[hit]]
    view = "side" if side else "top"
    return (f'<img id="ck-surface-{view}" class="ck-surface" width="{w}" height="{h}" '
            f'data-transform="{float(sc)!r} {float(ox)!r} {float(oy)!r}" data-axes="{"x,-y" if side else "x,z"}" '
            f'alt="surface coverage seen from the {view}" title="surface coverage, {view} view ('
            f'{"x →, y ↑" if side else "x →, z ↓"})" src="{_png_uri(img)}">')


def _dial_svg(pc: _PassCoverage, suffix: str) -> str:
    rings, bins = pc.dial.shape
    size, r0, r1 = 264, 36, 96
    cx = cy = size / 2
    dr = (r1 - r0) / max(1, rings)
    top = max(1, int(pc.dial.max()))
    parts = [f'<svg id="ck-dial{suffix}" class="ck-dial" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
             f'role="img" data-rings="{rings}" data-bins="{bins}" data-fraction="{float(pc.summary.dial_fraction)!r}">']
    for r in range(rings):
        for b in range(bins):
            a0, a1 = (b - 0.5) * 2 * math.pi / bins, (b + 0.5) * 2 * math.pi / bins
            ri, ro = r0 + r * dr + 1, r0 + (r + 1) * dr - 1

            def pt(rad, ang):  # azimuth 0 up (in front of the front face), counter-clockwise
                return f"{_fmt(cx - rad * math.sin(ang))},{_fmt(cy - rad * math.cos(ang))}"
            n = int(pc.dial[r, b])
            fill = "#e5e7eb" if n == 0 else f"rgba(37,99,235,{0.25 + 0.75 * min(n, top) / top:.3f})"
            d = (f"M{pt(ri, a0)} L{pt(ro, a0)} A{_fmt(ro)},{_fmt(ro)} 0 0 0 {pt(ro, a1)} "
                 f"L{pt(ri, a1)} A{_fmt(ri)},{_fmt(ri)} 0 0 1 {pt(ri, a0)} Z")
            parts.append(f'<path class="ck-dial-cell" d="{d}" fill="{fill}" data-ring="{r}" data-bin="{b}" '
                         f'data-count="{n}"><title>ring {r}, azimuth {360 * b / bins:.0f}°: {n} views</title></path>')
    parts.append(f'<text x="{cx}" y="{cy + 6}" text-anchor="middle" class="ck-dial-value">'
                 f'{pc.summary.dial_fraction:.0%}</text>')
    for label, ang in (("front", 0.0), ("left", math.pi / 2), ("back", math.pi), ("right", 1.5 * math.pi)):
        x, y = cx - (r1 + 11) * math.sin(ang), cy - (r1 + 11) * math.cos(ang) + 4
        parts.append(f'<text x="{_fmt(x)}" y="{_fmt(y)}" text-anchor="middle" class="ck-axis">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _faces_html(pc: _PassCoverage, suffix: str) -> str:
    rows = []
    for i, fc in enumerate(pc.faces):
        counted = bool(pc.face_mask >> i & 1)
        colour = "rgb({},{},{})".format(*(int(round(255 * min(1.0, max(0.0, c)))) for c in fc.color))
        state = "done" if fc.completed else ("not counted" if not counted else f"{fc.progress:.0%}")
        rows.append(f'<div class="ck-face" data-face="{Face(i).name.lower()}" data-count="{fc.count}" data-goal="{fc.goal}" '
                    f'data-progress="{float(fc.progress)!r}" data-counted="{int(counted)}"><span class="ck-face-name">'
                    f'{Face(i).name.lower()}</span><span class="ck-bar"><span style="width:{100 * fc.progress:.1f}%;'
                    f'background:{colour}"></span></span><span class="ck-face-n">{fc.count}/{fc.goal} {state}</span></div>')
    return f'<div id="ck-faces{suffix}" class="ck-faces">' + "".join(rows) + "</div>"


def _timeline_svg(data: _Data) -> str:
    w, h, left, right, top, bottom = 940, 240, 44, 12, 12, 36
    t = data.path.times
    ok = np.isfinite(data.speed) if data.speed is not None else np.zeros(0, bool)
    o = data.options
    edges = [float(o.speed_slow), float(o.speed_medium), float(o.speed_fast)]
    spd = data.speed[ok] if ok.any() else np.zeros(1)
    ymax = max(1.6 * edges[2], min(4 * edges[2], 1.1 * float(np.percentile(spd, 99))))
    all_t = [x for x in (list(t) + [f.timestamp for f in data.frames] + [e["t"] for e in data.events]) if math.isfinite(x)]
    t0, t1 = (min(all_t), max(all_t)) if all_t else (0.0, 1.0)
    if not t1 > t0:
        t1 = t0 + 1.0
    sx = (w - left - right) / (t1 - t0)
    ox = left - sx * t0
    sy = (h - top - bottom) / ymax
    oy = h - bottom
    parts = [f'<svg id="ck-timeline" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
             f'data-transform="{float(sx)!r} {float(ox)!r} {float(sy)!r} {float(oy)!r}">']
    lows = [0.0] + edges
    highs = edges + [ymax]
    for band, lo, hi in zip(SpeedBand, lows, highs):
        y0, y1 = oy - sy * min(hi, ymax), oy - sy * min(lo, ymax)
        parts.append(f'<rect id="ck-band-{band.name.lower().replace("_", "-")}" class="ck-band" x="{left}" '
                     f'y="{_fmt(y0)}" width="{w - left - right}" height="{_fmt(y1 - y0)}" fill="{_BAND_COLOURS[band]}" '
                     f'data-low="{float(lo)!r}" data-high="{float(hi)!r}"><title>{band.name.lower().replace("_", " ")}: '
                     f'{lo:.3f}–{hi:.3f} m/s</title></rect>')
        parts.append(f'<text x="{left + 4}" y="{_fmt(y0 + 12)}" class="ck-axis">{band.name.lower().replace("_", " ")}</text>')
    for e in edges:
        parts.append(f'<text x="{left - 4}" y="{_fmt(oy - sy * e + 4)}" text-anchor="end" class="ck-axis">{e:.2f}</text>')
    parts.append(f'<text x="4" y="{top + 8}" class="ck-axis">m/s</text>')
    step = 10 ** math.floor(math.log10(max(1e-3, (t1 - t0) / 4)))
    for mult in (1, 2, 5):
        if (t1 - t0) / (step * mult) <= 10:
            step *= mult
            break
    for k in range(int(math.ceil(t0 / step)), int(math.floor(t1 / step)) + 1):
        x = ox + sx * k * step
        parts.append(f'<text x="{_fmt(x)}" y="{h - 20}" text-anchor="middle" class="ck-axis">{k * step:g} s</text>')
    if ok.any():
        pts = np.stack([ox + sx * t[ok], oy - sy * np.minimum(data.speed[ok], ymax)], axis=1)
        parts.append(f'<polyline id="ck-speed" points="{_points(pts)}" fill="none" stroke="#1e3a8a" stroke-width="1.3"/>')
    parts.append('<g id="ck-capture-ticks">')
    for f in data.frames:
        x = ox + sx * f.timestamp
        parts.append(f'<line x1="{_fmt(x)}" x2="{_fmt(x)}" y1="{oy}" y2="{oy + 8}" stroke="#16a34a" stroke-width="1.5" '
                     f'data-frame="{f.id}"><title>frame {f.id} captured at {f.timestamp:.2f} s</title></line>')
    parts.append('</g><g id="ck-events">')
    for e in data.events:
        x = ox + sx * e["t"]
        parts.append(f'<g class="ck-event" data-code="{e["code"]}" data-t="{float(e["t"])!r}"><line x1="{_fmt(x)}" x2="{_fmt(x)}" '
                     f'y1="{top}" y2="{oy}" stroke="#dc2626" stroke-width="1" stroke-dasharray="2 2"/>'
                     f'<circle cx="{_fmt(x)}" cy="{top + 4}" r="4" fill="#dc2626"/><title>{e["t"]:.2f} s: '
                     f'{html.escape(e["name"])}: {html.escape(e["text"])} ({e["value"]:.3g})</title></g>')
    parts.append("</g></svg>")
    return "\n".join(parts)


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:20px;color:#1f2937;background:#fff;max-width:980px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #e5e7eb}
.ck-row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
svg{border:1px solid #e5e7eb;background:#fff}svg text{font-size:11px;fill:#374151}
.ck-captures circle{fill:#16a34a;stroke:#fff;stroke-width:.8}
.ck-dial-value{font-size:22px!important;font-weight:600}
.ck-faces{min-width:320px}.ck-face{display:flex;align-items:center;gap:8px;margin:4px 0}
.ck-face-name{width:56px}.ck-bar{display:inline-block;width:160px;height:12px;background:#f3f4f6;border:1px solid #d1d5db}
.ck-bar span{display:block;height:100%}.ck-face-n{font-variant-numeric:tabular-nums;color:#4b5563}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
.ck-muted{color:#6b7280}figure{margin:0;font-size:12px;max-width:300px}figure img{image-rendering:pixelated;margin:0 4px 2px 0;vertical-align:top}
.ck-legend{height:12px;width:200px;display:inline-block;vertical-align:middle}
"""

# Records any script error into the page (the browser check reads data-ck-errors) and, once
# loaded, the rendered size of the main figures (data-ck-rendered="W x H").
_SCRIPT = """
window.addEventListener('error',function(e){var d=document.documentElement;
d.setAttribute('data-ck-errors',(d.getAttribute('data-ck-errors')||'')+(e.message||'error')+';');},true);
window.addEventListener('load',function(){['ck-path','ck-box','ck-dial','ck-timeline','ck-surface-top','ck-surface-side'].forEach(function(id){
var e=document.getElementById(id);if(e){var r=e.getBoundingClientRect();
e.setAttribute('data-ck-rendered',Math.round(r.width)+'x'+Math.round(r.height));}});
document.documentElement.setAttribute('data-ck-loaded','1');});
"""


def _render(data: _Data) -> str:
    esc = html.escape
    frames = data.frames
    times = [f.timestamp for f in frames]
    duration = (max(times) - min(times)) if len(times) > 1 else 0.0
    sizes = sorted({f"{f.intrinsics.width}x{f.intrinsics.height}" for f in frames})
    band_time = ""
    if data.bands is not None and (data.bands >= 0).any():
        b = data.bands[data.bands >= 0]
        band_time = ", ".join(f"{band.name.lower().replace('_', ' ')} {np.mean(b == int(band)):.0%}" for band in SpeedBand)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
           'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'">',
           f"<title>CaptureKit report: {esc(data.name)}</title><style>{_CSS}</style><script>{_SCRIPT}</script></head><body>",
           f"<h1>CaptureKit report: {esc(data.name)}</h1>",
           *([f'<p id="ck-note"><strong>{esc(data.note)}</strong></p>'] if data.note else []),
           '<table id="ck-summary">',
           f"<tr><th>frames</th><td>{len(frames)} captured over {duration:.1f} s in "
           f"{len({f.pass_number for f in frames}) or 0} pass(es); {sum(f.depth_path is not None for f in frames)} with depth;"
           f" images {esc(', '.join(sizes) or '-')}</td></tr>",
           f"<tr><th>camera path</th><td>{len(data.path.times)} poses from {esc(data.path.source)}</td></tr>"]
    for pc in data.passes:
        s = pc.summary
        out.append(f"<tr><th>coverage{'' if not pc.number else f' (pass {pc.number})'}</th><td>{s.completion:.0%} complete,"
                   f" {s.faces_completed} side(s) done, view dial {s.dial_fraction:.0%} filled, {s.views} views</td></tr>")
    if band_time:
        out.append(f"<tr><th>speed</th><td>time per band: {esc(band_time)}</td></tr>")
    out.append(f"<tr><th>events</th><td>{data.event_total} guidance event(s)</td></tr></table>")

    out.append("<h2>Camera path</h2>")
    out.append('<p class="ck-muted">Blue: every tracked pose; green dots: captured frames; orange: the box '
               "(its front marked by a tick in the top view).</p>")
    out.append('<div class="ck-row">' + _view_svg(data, side=False) + _view_svg(data, side=True) + "</div>")

    out.append("<h2>Coverage</h2>")
    if data.box_note:
        out.append(f'<p class="ck-muted" id="ck-coverage-note">{esc(data.box_note)}</p>')
    for pc in data.passes:
        suffix = f"-p{pc.number}" if pc.number else ""
        if len(data.passes) > 1:
            out.append(f"<h3>Pass {pc.number} ({pc.frames} frames)</h3>")
        out.append('<div class="ck-row">' + _dial_svg(pc, suffix) + _faces_html(pc, suffix) + "</div>")
        out.append('<p class="ck-muted">The dial: views per direction around the box (inner ring low, outer high; '
                   "front at the top, counter-clockwise as seen from above). Bars: centre-ray views per side against"
                   " the goal.</p>")

    out.append("<h2>Surface coverage</h2>")
    sm = data.surface
    if sm is None:
        out.append('<p class="ck-muted" id="ck-surface-note">No box or no frames: no surface map.</p>')
    else:
        src = (f"fused from the depth of {sm.frames_fused} frame(s)" if sm.from_depth
               else "no depth: the box's faces stand in for the surface")
        out.append(f'<p class="ck-muted">The surface of the last pass ({esc(src)}; {sm.views} views), seen from the '
                   "top and from the side: red unseen, yellow to cyan by the share of the four thresholds of "
                   '"well covered" met (views, spread of directions, incidence, resolution).</p>')
        out.append('<div class="ck-row">' + _surface_img(sm, data.boxes[max(data.boxes)], side=False)
                   + _surface_img(sm, data.boxes[max(data.boxes)], side=True) + "</div>")
        out.append(f'<p id="ck-surface-figures">{sm.well_fraction:.0%} of the observed surface well covered, '
                   f"{sm.complete_fraction:.0%} of the estimated surface (frontier {sm.frontier}"
                   f"{' voxels' if sm.from_depth else ' cells'})</p>")
        out.append(f'<p id="ck-capture-next"><strong>{esc(sm.next_text)}</strong></p>')

    out.append("<h2>Speed and guidance</h2>")
    o = data.options
    out.append(f'<p class="ck-muted">Smoothed speed as guidance measures it (window {o.smoothing_window:.2f} s) against '
               f"its bands (edges {o.speed_slow:.3f} / {o.speed_medium:.3f} / {o.speed_fast:.3f} m/s); green ticks:"
               " captures; red: guidance events (hover for the text).</p>")
    out.append(_timeline_svg(data))
    if data.events:
        counts: Dict[str, int] = {}
        for e in data.events:
            counts[e["name"]] = counts.get(e["name"], 0) + 1
        more = f" (first {len(data.events)} of {data.event_total} shown)" if data.event_total > len(data.events) else ""
        out.append(f'<p id="ck-event-counts">{esc(", ".join(f"{k} ×{v}" for k, v in sorted(counts.items())))}{esc(more)}</p>')

    out.append("<h2>Depth</h2>")
    if data.thumbs:
        lo, hi = data.depth_range
        legend = _png_uri(_turbo(np.tile(np.linspace(0, 1, 200), (12, 1))))
        out.append(f'<p class="ck-muted">{lo:.2f} m <img class="ck-legend" alt="colour scale" src="{legend}"> {hi:.2f} m'
                   " (dark grey: no depth). Confidence: red low, amber medium, green high.</p>")
    else:
        out.append('<p class="ck-muted">No depth frames.</p>')
    out.append('<div id="ck-depth" class="ck-row">')
    for th in data.thumbs:
        cap = f"frame {th['id']} at {th['t']:.2f} s"
        if th.get("error"):
            out.append(f'<figure class="ck-thumb"><figcaption>{esc(cap)}: {esc(th["error"])}</figcaption></figure>')
            continue
        med = "-" if th["median"] is None else f"{th['median']:.2f} m"
        body = f'<img alt="depth of frame {th["id"]}" src="{th["depth_uri"]}">'
        if "conf_uri" in th:
            fr = th["conf_fractions"]
            body += (f'<img alt="confidence of frame {th["id"]}" src="{th["conf_uri"]}">'
                     f"confidence low/med/high {fr[0]:.0%}/{fr[1]:.0%}/{fr[2]:.0%}<br>")
        elif "conf_error" in th:
            body += esc(th["conf_error"]) + "<br>"
        out.append(f'<figure class="ck-thumb" data-frame="{th["id"]}">{body}<figcaption>{esc(cap)}: {th["size"]}, '
                   f"{th['valid']:.0%} valid, median {med}</figcaption></figure>")
    out.append("</div></body></html>")
    return "\n".join(out) + "\n"


def build_report(dataset_dir, preset: Preset = Preset.OBJECT_CAPTURE, thumbnails: int = 4) -> str:
    """The HTML report of a dataset (finished or not) as a string.

    Raises:
        capturekit._tools.UsageError: not a dataset (or its journal unreadable). CaptureKitError: the library refused a file.
    """
    return _render(_gather(os.path.abspath(os.fspath(dataset_dir)), Preset(preset), int(thumbnails)))


def write_report(dataset_dir, out_path, preset: Preset = Preset.OBJECT_CAPTURE, thumbnails: int = 4) -> int:
    """Writes the report to ``out_path`` (through a temporary file next to it, renamed when
    complete: replaced atomically; an interrupted or failed write leaves nothing); returns its
    size in bytes. An OSError names ``out_path``, never the temporary file."""
    text = build_report(dataset_dir, preset, thumbnails).encode("utf-8")
    out_path = os.fspath(out_path)
    tmp = OUTPUTS.temp_for(out_path)
    try:
        with open(tmp, "wb") as f:
            f.write(text)
        OUTPUTS.commit(tmp, out_path)
    except OSError as e:
        OUTPUTS.discard(tmp)
        raise OSError(e.errno, e.strerror, out_path) from None
    except BaseException:
        OUTPUTS.discard(tmp)
        raise
    return len(text)
