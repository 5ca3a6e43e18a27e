"""The guidance on real object captures: the 7 captures of the HMC object-capture app (545 frames,
each taken by an operator and used to train a NeRF) replayed through the scheduler's default
preset and the coverage hint, against independent NumPy implementations of the documented gates
(silhouette in frame and image fill by convex hull and clipping, centre angle, box distance,
pitch) and of the cells the views saw (a grid of rays against the box by the slab method).

Targets (issue 23): the default preset refuses at most 15 % of the frames for geometry; the hint
points at the side the views saw least in >= 70 % of hints, at one of the two least in >= 90 %.

One capture (Clinic_Chair, 82 frames) is a committed fixture and runs everywhere. The other six
are third-party recordings the project does not redistribute: they run where
`scripts/import_real_captures.py` imported them (``.build-dist/real-captures/`` or
$CK_REAL_CAPTURES) and are skipped elsewhere, saying how to import them.
"""

import json
import math
import os
import pathlib

import numpy as np
import pytest

import capturekit as ck
from reference import box_corners, rot_y, to_local

ROOT = pathlib.Path(__file__).resolve().parents[3]
IMPORTED = pathlib.Path(os.environ.get("CK_REAL_CAPTURES", ROOT / ".build-dist" / "real-captures"))
#: Every capture's folder: the committed one, and the six imported ones (frames each).
ALL_CAPTURES = {
    "Clinic_Chair": (ROOT / "Tests/CaptureKitCoreTests/Fixtures/hmc-clinic-chair", 82),
    **{name: (IMPORTED / name, frames) for name, frames in [
        ("Chair_with_wipe", 79), ("Chair_with_wipe2", 52), ("Hand_sanitizer", 3), ("Purple_Chair", 112),
        ("Upload_240222111326", 50), ("Upload_data", 167)]},
}
#: The captures present here (the aggregate figures are over these; all 7 where imported).
CAPTURES = {name: folder for name, (folder, _) in ALL_CAPTURES.items() if (folder / "transforms.json").exists()}
MISSING = sorted(set(ALL_CAPTURES) - set(CAPTURES))
IMPORT_HINT = (f"{len(MISSING)} of 7 real captures not imported ({', '.join(MISSING)}): "
               "python3 scripts/import_real_captures.py <git dir of JoshuaG-K/wayfair23-serverV2>")
GEOMETRY = {
    "out of frame": ck.Guide.OBJECT_OUT_OF_FRAME,
    "too close or far": ck.Guide.TOO_CLOSE | ck.Guide.TOO_FAR,
    "point at object": ck.Guide.POINT_AT_OBJECT,
    "tilt": ck.Guide.TILT_UP | ck.Guide.TILT_DOWN,
}
GEOMETRY_ALL = ck.Guide(0)
for _flag in GEOMETRY.values():
    GEOMETRY_ALL |= _flag
# Sides as the dial sees them: (face, azimuth it is seen from), azimuth 0 in front of the front
# face (-z), pi/2 beside the left face (-x).
SIDES = [(ck.Face.FRONT, 0.0), (ck.Face.LEFT, math.pi / 2), (ck.Face.BACK, math.pi), (ck.Face.RIGHT, -math.pi / 2)]


def load(name):
    folder = CAPTURES[name]
    frames = json.loads((folder / "transforms.json").read_text())["frames"]
    bbox = json.loads((folder / "boundingbox.json").read_text())
    p = {k: np.array([v["x"], v["y"], v["z"]], dtype=np.float64) for k, v in bbox["positions"].items()}
    size = np.array([np.linalg.norm(p["top_right_front"] - p["top_left_front"]),
                     np.linalg.norm(p["top_left_front"] - p["bot_left_front"]),
                     np.linalg.norm(p["top_left_back"] - p["top_left_front"])])
    c = bbox["center"]
    return frames, np.array([c["x"], c["y"], c["z"]]), size, float(bbox["rad_rot_about_y"])


# -- independent gates -------------------------------------------------------------------------


def _hull(points):
    pts = sorted(set(map(tuple, points)))
    if len(pts) < 3:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for q in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], q) <= 0:
            lower.pop()
        lower.append(q)
    for q in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], q) <= 0:
            upper.pop()
        upper.append(q)
    return lower[:-1] + upper[:-1]


def _area(poly):
    return abs(sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(poly, poly[1:] + poly[:1]))) / 2 if len(poly) >= 3 else 0.0


def _clip(poly, w, h):
    out = list(poly)
    for axis, bound, below in ((0, 0.0, False), (0, w, True), (1, 0.0, False), (1, h, True)):
        if not out:
            break
        pts, out = out, []
        for a, b in zip(pts, pts[1:] + pts[:1]):
            ina = a[axis] <= bound if below else a[axis] >= bound
            inb = b[axis] <= bound if below else b[axis] >= bound
            if ina:
                out.append(a)
            if ina != inb:
                s = (bound - a[axis]) / (b[axis] - a[axis])
                q = [a[0] + (b[0] - a[0]) * s, a[1] + (b[1] - a[1]) * s]
                q[axis] = bound
                out.append(tuple(q))
    return out


EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]


def silhouette(M, f, corners):
    """(fraction of the box's silhouette in the image, fraction of the image it covers)."""
    cam = (corners - M[:3, 3]) @ M[:3, :3]
    zn = -1e-3

    def project(c):
        return (f["cx"] + f["fl_x"] * c[0] / -c[2], f["cy"] - f["fl_y"] * c[1] / -c[2])

    pts = [project(c) for c in cam if c[2] <= zn]
    for a, b in EDGES:
        pa, pb = cam[a], cam[b]
        if (pa[2] < zn) != (pb[2] < zn):
            q = pa + (pb - pa) * ((zn - pa[2]) / (pb[2] - pa[2]))
            q[2] = zn
            pts.append(project(q))
    if not pts:
        return 0.0, 0.0
    hull = _hull(pts)
    whole, inside = _area(hull), _area(_clip(hull, f["w"], f["h"]))
    return (inside / whole if whole > 0 else 0.0), inside / (f["w"] * f["h"])


def expected_geometry(M, f, center, size, yaw, corners):
    """The documented default-preset rule for one frame: (raised, blocking) geometry flags, and
    the margins of the measures from their thresholds (frames too near one are not compared)."""
    fraction, fill = silhouette(M, f, corners)
    forward = -M[:3, 2]
    to_centre = center - M[:3, 3]
    angle = math.degrees(math.acos(np.clip(forward @ to_centre / np.linalg.norm(to_centre), -1, 1)))
    pitch = math.degrees(math.asin(np.clip(forward[1], -1, 1)))
    local = to_local(M[None, :3, 3], center, yaw)[0]
    distance = float(np.linalg.norm(np.maximum(0, np.abs(local) - size / 2)))
    raised, blocking = ck.Guide(0), ck.Guide(0)
    fills = fill >= 0.5
    if angle > 25:
        raised |= ck.Guide.POINT_AT_OBJECT
        blocking |= ck.Guide.POINT_AT_OBJECT if not fills else ck.Guide(0)
    if fraction < 0.9:
        raised |= ck.Guide.OBJECT_OUT_OF_FRAME
        blocking |= ck.Guide.OBJECT_OUT_OF_FRAME if not (fills or fraction >= 0.5) else ck.Guide(0)
    if distance < 0.2:
        raised |= ck.Guide.TOO_CLOSE
        blocking |= ck.Guide.TOO_CLOSE if distance == 0 else ck.Guide(0)
    if distance > 3:
        raised |= ck.Guide.TOO_FAR
        blocking |= ck.Guide.TOO_FAR
    if pitch > 30:
        raised |= ck.Guide.TILT_DOWN
        blocking |= ck.Guide.TILT_DOWN
    if pitch < -65:
        raised |= ck.Guide.TILT_UP
        blocking |= ck.Guide.TILT_UP
    margin = min(abs(angle - 25), abs(fraction - 0.9) * 100, abs(fraction - 0.5) * 100, abs(fill - 0.5) * 100,
                 abs(distance - 0.2) * 100, abs(pitch - 30), abs(pitch + 65))
    return raised, blocking, margin


def replay_gates(name):
    frames, center, size, yaw = load(name)
    box = ck.Box(tuple(center), tuple(size), yaw)
    corners = box_corners(center, size, yaw)
    rows = []
    with ck.Scheduler() as s:
        for f in frames:
            M = np.array(f["transform_matrix"], dtype=np.float64)
            k = ck.Intrinsics(f["fl_x"], f["fl_y"], f["cx"], f["cy"], f["w"], f["h"])
            g = s.update(f["timestamp"], M, box=box, intrinsics=k)
            s.events()
            rows.append((g, *expected_geometry(M, f, center, size, yaw, corners)))
    return rows


@pytest.mark.parametrize("name", sorted(ALL_CAPTURES))
def test_gates_match_the_documented_rule_on_real_captures(name):
    """Every frame's geometry conditions and blocks equal the independent rule's (frames within
    0.5 degrees, 0.5 % or 5 mm of a threshold are not compared: float32 against float64)."""
    if name not in CAPTURES:
        pytest.skip(IMPORT_HINT)
    compared = 0
    for g, raised, blocking, margin in replay_gates(name):
        if margin < 0.5:
            continue
        compared += 1
        assert ck.Guide(g.flags) & GEOMETRY_ALL == raised
        assert ck.Guide(g.blocked) & GEOMETRY_ALL == blocking
        if g.blocked:
            assert not g.capture
    assert compared >= 0.9 * len(load(name)[0])


def test_default_preset_refuses_at_most_15_percent_of_real_frames():
    """Over the 545 frames (those of the captures present), and in each capture, at most 15 % are refused for geometry (raised is
    the 0.1 rule, where every raised condition blocked: 90 %)."""
    total = refused = raised_total = 0
    report = []
    for name in sorted(CAPTURES):
        rows = replay_gates(name)
        n = len(rows)
        blocked = [ck.Guide(g.blocked) & GEOMETRY_ALL for g, *_ in rows]
        raised = [ck.Guide(g.flags) & GEOMETRY_ALL for g, *_ in rows]
        per = {k: sum(bool(b & flag) for b in blocked) for k, flag in GEOMETRY.items()}
        count = sum(bool(b) for b in blocked)
        report.append(f"{name}: {count}/{n} refused {per}, raised {sum(bool(r) for r in raised)}")
        assert count <= 0.15 * n, report[-1]
        total += n
        refused += count
        raised_total += sum(bool(r) for r in raised)
    print("\n".join(report))
    assert total == sum(ALL_CAPTURES[name][1] for name in CAPTURES)
    assert refused <= 0.15 * total
    assert raised_total >= 0.85 * total  # the advice still reaches the operator


# -- the hint -----------------------------------------------------------------------------------


class CellCounter:
    """Per face, the sum over its n x n cells of min(views that saw the cell, goal): each view casts
    a grid of rays through the pixel centres of the image scaled to `grid` and counts each cell it
    hits once, by the slab method in float64. Views from inside the box count nothing."""

    def __init__(self, center, size, yaw, goal=10, n=4, grid=(64, 48)):
        self.center, self.size, self.yaw, self.goal, self.n, self.grid = center, size, yaw, goal, n, grid
        self.counts = np.zeros((6, n, n), dtype=np.int64)

    def add(self, M, f):
        h, n, size = self.size / 2, self.n, self.size
        origin = to_local(M[None, :3, 3], self.center, self.yaw)[0]
        if np.all(np.abs(origin) <= h):
            return
        gw, gh = self.grid
        sx, sy = gw / f["w"], gh / f["h"]
        u, v = np.meshgrid(np.arange(gw) + 0.5, np.arange(gh) + 0.5)
        d_cam = np.stack([(u - f["cx"] * sx) / (f["fl_x"] * sx), -(v - f["cy"] * sy) / (f["fl_y"] * sy), -np.ones_like(u)], -1)
        d = d_cam.reshape(-1, 3) @ M[:3, :3].T @ rot_y(self.yaw)
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (-h - origin) / d, (h - origin) / d
        inside_slab = np.abs(origin) <= h
        lo = np.where(d == 0, np.where(inside_slab, -np.inf, np.inf), np.minimum(t1, t2))
        hi = np.where(d == 0, np.where(inside_slab, np.inf, -np.inf), np.maximum(t1, t2))
        t_near, t_far, axis = lo.max(1), hi.min(1), lo.argmax(1)
        hit = (t_near <= t_far) & (t_near > 0)
        p = origin + d * t_near[:, None]
        seen = set()
        for i in np.nonzero(hit)[0]:
            a = axis[i]
            face = (1, 3, 0)[a] if d[i, a] > 0 else (2, 4, 5)[a]
            cell = tuple(min(n - 1, max(0, int((p[i, j] + h[j]) / size[j] * n))) for j in range(3) if j != a)
            seen.add((face, *cell))
        for c in seen:
            self.counts[c] += 1

    def seen(self):
        return np.minimum(self.counts, self.goal).sum(axis=(1, 2))


def side_of(azimuth):
    return min(SIDES, key=lambda s: abs(math.remainder(azimuth - s[1], 2 * math.pi)))[0]


def replay_hints(name):
    frames, center, size, yaw = load(name)
    box = ck.Box(tuple(center), tuple(size), yaw)
    hits = [0, 0]
    hints = 0
    counter = CellCounter(center, size, yaw)
    with ck.Coverage(box) as cov:
        for f in frames:
            M = np.array(f["transform_matrix"], dtype=np.float64)
            cov.add_view(M, ck.Intrinsics(f["fl_x"], f["fl_y"], f["cx"], f["cy"], f["w"], f["h"]), f["timestamp"])
            counter.add(M, f)
            seen = counter.seen()
            side_seen = sorted(seen[face] for face, _ in SIDES)
            got = seen[side_of(cov.hint(M).target_azimuth)]
            hints += 1
            hits[0] += got <= side_seen[0]
            hits[1] += got <= side_seen[1]
    return hints, hits


def test_hint_points_at_the_least_seen_side_on_real_captures():
    """>= 70 % of the hints point at the side the views so far saw least, >= 90 % at one of the
    two least (0.1's dial-bin hint: 33 % and 58 %)."""
    hints = least = two = 0
    report = []
    for name in sorted(CAPTURES):
        n, (a, b) = replay_hints(name)
        report.append(f"{name}: {n} hints, least {a}, one of two least {b}")
        hints, least, two = hints + n, least + a, two + b
    print("\n".join(report))
    assert hints == sum(ALL_CAPTURES[name][1] for name in CAPTURES)
    assert least >= 0.7 * hints, report
    assert two >= 0.9 * hints, report
