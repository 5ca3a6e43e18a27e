"""``capturekit report``: the HTML report of the C demo's dataset, run as a user runs it, its
figures checked number by number against the dataset's own files read here independently
(camera-info lines, transforms.json, boundingbox.json, events.jsonl, depth PNGs through Pillow),
a centre-ray/box intersection in numpy for the per-side counts, and a least-squares velocity in
numpy for the speed line. The browser check is scripts/check_report_browser.py (make test)."""

import base64
import glob
import io
import json
import math
import os
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest
from PIL import Image

import capturekit as ck
from capturekit.report import OUT_OF_REACH_GREY


def run(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(ck.__file__)), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "capturekit", *map(str, args)], capture_output=True, text=True, env=env)


class _Doc(HTMLParser):
    """Every element as (tag, attrs, the ids of its open ancestors), and the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.stack, self.by_id = [], [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, [x.get("id") for _, x in self.stack if x.get("id")]))
        if "id" in a:
            assert a["id"] not in self.by_id, f"duplicate id {a['id']}"
            self.by_id[a["id"]] = a
        if tag not in ("meta", "img", "br", "link", "input"):  # HTML's void elements
            self.stack.append((tag, a))

    def handle_startendtag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, [x.get("id") for _, x in self.stack if x.get("id")]))
        if "id" in a:
            self.by_id[a["id"]] = a

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def inside(self, ancestor, tag):
        return [a for t, a, anc in self.elements if t == tag and ancestor in anc]


def points(attr):
    return np.array([[float(v) for v in p.split(",")] for p in attr.split()], np.float64)


def hull(p):
    """Convex hull vertices of 2-D points (numpy only; a few points)."""
    p = np.unique(np.round(p, 6), axis=0)
    out = []
    for i, a in enumerate(p):  # a vertex: some direction makes it the unique extreme
        others = np.delete(p, i, axis=0)
        for ang in np.linspace(0, 2 * math.pi, 720, endpoint=False):
            d = np.array([math.cos(ang), math.sin(ang)])
            if a @ d > (others @ d).max() + 1e-9:
                out.append(a)
                break
    return np.array(out)


def same_point_sets(a, b, tol):
    assert len(a) == len(b), (a, b)
    for q in a:
        assert np.min(np.linalg.norm(b - q, axis=1)) < tol, (q, b)


@pytest.fixture(scope="module")
def report(c_demo_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    r = run("report", c_demo_dataset, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    text = out.read_text(encoding="utf-8")
    doc = _Doc()
    doc.feed(text)
    return c_demo_dataset, text, doc


def camera_info(dataset):
    (info,) = [p for p in glob.glob(os.path.join(dataset, "*.jsonl")) if not p.endswith(("capturekit.jsonl", "events.jsonl"))]
    lines = [json.loads(line) for line in open(info, "rb")]
    t = np.array([e["timestamp"] for e in lines], np.float64) / 1e9
    pos = np.array([e["transform"][12:15] for e in lines], np.float64)  # column-major 4x4
    return t, pos


def test_report_is_self_contained_with_the_stable_elements(report):
    _, text, doc = report
    assert text.startswith("<!DOCTYPE html>")
    assert "http://" not in text and "https://" not in text
    for tag, a, _ in doc.elements:
        assert tag not in ("link", "iframe", "object", "embed"), tag
        if tag == "script":
            assert "src" not in a
        if "src" in a:
            assert a["src"].startswith("data:image/png;base64,"), a["src"][:40]
    for eid in ("ck-path", "ck-path-side", "ck-box", "ck-box-side", "ck-dial", "ck-faces", "ck-timeline", "ck-speed",
                "ck-events", "ck-depth", "ck-captures"):
        assert eid in doc.by_id, eid


def test_path_points_are_the_camera_positions_projected(report):
    dataset, _, doc = report
    t, pos = camera_info(dataset)
    for view, path, (a, b, sign) in (("ck-view-top", "ck-path", (0, 2, 1.0)), ("ck-view-side", "ck-path-side", (0, 1, -1.0))):
        s, ox, oy = map(float, doc.by_id[view]["data-transform"].split())
        assert s > 0
        got = points(doc.by_id[path]["points"])
        want = np.stack([ox + s * pos[:, a], oy + sign * s * pos[:, b]], axis=1)
        assert got.shape == want.shape == (len(t), 2)
        np.testing.assert_allclose(got, want, atol=0.006)  # 2-decimal pixels
        # the whole path lies inside the drawing
        w, h = float(doc.by_id[view]["width"]), float(doc.by_id[view]["height"])
        assert got.min() >= 0 and got[:, 0].max() <= w and got[:, 1].max() <= h


def test_captures_and_box_are_the_datasets(report):
    dataset, _, doc = report
    tf = json.load(open(os.path.join(dataset, "transforms.json")))
    cams = np.array([np.asarray(f["transform_matrix"])[:3, 3] for f in tf["frames"]])
    bj = json.load(open(os.path.join(dataset, "boundingbox.json")))
    corners = np.array([[c["x"], c["y"], c["z"]] for c in bj["positions"].values()])
    size = [bj["size"][k] for k in "xyz"]
    for view, suffix, (a, b, sign) in (("ck-view-top", "", (0, 2, 1.0)), ("ck-view-side", "-side", (0, 1, -1.0))):
        s, ox, oy = map(float, doc.by_id[view]["data-transform"].split())
        circles = doc.inside("ck-captures" + suffix, "circle")
        got = np.array([[float(c["cx"]), float(c["cy"])] for c in circles])
        np.testing.assert_allclose(got, np.stack([ox + s * cams[:, a], oy + sign * s * cams[:, b]], axis=1), atol=0.006)
        assert [int(c["data-frame"]) for c in circles] == [f["frame_id"] for f in tf["frames"]]
        poly = points(doc.by_id["ck-box" + suffix]["points"])
        proj = np.stack([ox + s * corners[:, a], oy + sign * s * corners[:, b]], axis=1)
        same_point_sets(poly, hull(proj), tol=0.02)
        assert len(poly) == 4
        area = 0.5 * abs(np.dot(poly[:, 0], np.roll(poly[:, 1], 1)) - np.dot(poly[:, 1], np.roll(poly[:, 0], 1)))
        if not suffix:  # seen from above: the footprint, size x by size z
            assert area == pytest.approx(size[0] * size[2] * s * s, rel=1e-3)


def test_per_side_counts_are_the_centre_rays_hitting_the_box(report):
    """Coverage counts a view on the side its image-centre ray enters first: recomputed here with
    a slab intersection against the box of boundingbox.json."""
    dataset, _, doc = report
    bj = json.load(open(os.path.join(dataset, "boundingbox.json")))
    c = np.array([bj["center"][k] for k in "xyz"])
    half = np.array([bj["size"][k] for k in "xyz"]) / 2
    yaw = bj["rad_rot_about_y"]
    rot = np.array([[math.cos(yaw), 0, math.sin(yaw)], [0, 1, 0], [-math.sin(yaw), 0, math.cos(yaw)]])
    face_of = {(2, -1): "front", (0, -1): "left", (0, 1): "right", (1, -1): "bottom", (1, 1): "top", (2, 1): "back"}
    want = dict.fromkeys(("front", "left", "right", "bottom", "top", "back"), 0)
    for f in json.load(open(os.path.join(dataset, "transforms.json")))["frames"]:
        m = np.asarray(f["transform_matrix"])
        o, d = rot.T @ (m[:3, 3] - c), rot.T @ (-m[:3, 2])  # OpenGL camera: looks along -z
        t_near, t_far, entered = -np.inf, np.inf, None
        for ax in range(3):
            t1, t2 = (-half[ax] - o[ax]) / d[ax], (half[ax] - o[ax]) / d[ax]
            if min(t1, t2) > t_near:
                t_near, entered = min(t1, t2), (ax, -1 if d[ax] > 0 else 1)
            t_far = min(t_far, max(t1, t2))
        if 0 < t_near <= t_far:
            want[face_of[entered]] += 1
    faces = {a["data-face"]: a for a in doc.inside("ck-faces", "div")}
    assert {k: int(v["data-count"]) for k, v in faces.items()} == want
    assert sum(want.values()) > 0
    for a in faces.values():
        n, goal = int(a["data-count"]), int(a["data-goal"])
        assert float(a["data-progress"]) == pytest.approx(min(n, goal) / goal)
    cells = doc.inside("ck-dial", "path")
    rings, bins = int(doc.by_id["ck-dial"]["data-rings"]), int(doc.by_id["ck-dial"]["data-bins"])
    assert len(cells) == rings * bins == 48
    filled = sum(int(x["data-count"]) > 0 for x in cells)
    assert float(doc.by_id["ck-dial"]["data-fraction"]) == pytest.approx(filled / len(cells))
    # a view counts in one dial cell at most (views from inside the box or out of the rings: none)
    n_frames = len(json.load(open(os.path.join(dataset, "transforms.json")))["frames"])
    assert 0 < sum(int(x["data-count"]) for x in cells) <= n_frames


def test_speed_line_is_the_least_squares_speed_and_events_are_marked(report):
    dataset, _, doc = report
    t, pos = camera_info(dataset)
    sx, ox, sy, oy = map(float, doc.by_id["ck-timeline"]["data-transform"].split())
    xy = points(doc.by_id["ck-speed"]["points"])
    ts, speed = (xy[:, 0] - ox) / sx, (oy - xy[:, 1]) / sy
    np.testing.assert_allclose(ts, t, atol=0.01 / sx)  # the demo's clock starts with the stream
    window = float(ck.SchedulerOptions.preset(ck.Preset.OBJECT_CAPTURE).smoothing_window)
    ymax = float(doc.by_id["ck-band-too-fast"]["data-high"])
    checked = 0
    def lsq_speed(w):
        tt = t[w] - t[w].mean()
        v = (tt[:, None] * (pos[w] - pos[w].mean(axis=0))).sum(axis=0) / (tt ** 2).sum()
        return min(float(np.linalg.norm(v)), ymax)  # the plot clips at its top

    for i in range(len(t)):
        # the poses of the last `window` seconds, this one included; a pose on the window's edge
        # (within float rounding of the nanosecond clock) may count or not
        inner = (t > t[i] - window + 1e-6) & (t <= t[i])
        outer = (t >= t[i] - window - 1e-6) & (t <= t[i])
        if inner.sum() < 3:
            continue
        assert min(abs(speed[i] - lsq_speed(inner)), abs(speed[i] - lsq_speed(outer))) < 1e-3, (i, t[i])
        checked += 1
    assert checked > len(t) * 0.95
    # bands: edges are the preset's
    o = ck.SchedulerOptions.preset(ck.Preset.OBJECT_CAPTURE)
    assert float(doc.by_id["ck-band-slow"]["data-high"]) == pytest.approx(o.speed_slow)
    assert float(doc.by_id["ck-band-fast"]["data-high"]) == pytest.approx(o.speed_fast)
    events = [json.loads(line) for line in open(os.path.join(dataset, "events.jsonl"), "rb")]
    guidance = [e for e in events if e["code"] != 204]
    marks = [a for a in doc.inside("ck-events", "g") if "data-code" in a]
    assert [(int(a["data-code"]), float(a["data-t"])) for a in marks] == [(e["code"], e["timestamp"]) for e in guidance]
    assert len(doc.inside("ck-capture-ticks", "line")) == len(json.load(open(os.path.join(dataset, "transforms.json")))["frames"])


def test_depth_thumbnails_show_the_depth_pngs(report):
    dataset, _, doc = report
    figs = [a for t, a, anc in doc.elements if t == "figure" and "ck-depth" in anc]
    assert len(figs) == 4
    imgs = doc.inside("ck-depth", "img")
    assert len(imgs) == 8  # depth and confidence of each
    tf = json.load(open(os.path.join(dataset, "transforms.json")))
    by_id = {f["frame_id"]: f for f in tf["frames"]}
    for fig in figs:
        frame = by_id[int(fig["data-frame"])]
        mm = np.asarray(Image.open(os.path.join(dataset, frame["depth_file_path"])))
        (depth_img,) = [a for a in imgs if a["alt"] == f"depth of frame {fig['data-frame']}"]
        thumb = np.asarray(Image.open(io.BytesIO(base64.b64decode(depth_img["src"].split(",", 1)[1]))).convert("RGB"))
        step = -(-mm.shape[1] // 160)
        small = mm[::step, ::step]
        assert thumb.shape[:2] == small.shape
        grey = np.all(thumb == (40, 40, 40), axis=2)
        np.testing.assert_array_equal(grey, small == 0)
        # nearer is bluer, farther redder (turbo): the nearest valid pixel vs the farthest
        near = np.unravel_index(np.argmin(np.where(small > 0, small, 65535)), small.shape)
        far = np.unravel_index(np.argmax(small), small.shape)
        assert int(thumb[near][2]) - int(thumb[near][0]) > int(thumb[far][2]) - int(thumb[far][0])


def test_report_of_a_dataset_without_streams_or_box_and_hostile_text(tmp_path):
    """Only captured frames: the path is theirs; no box: no coverage, said so; event text that
    looks like markup stays text."""
    d = tmp_path / "plain"
    k = ck.Intrinsics(fx=40.0, fy=40.0, cx=16.0, cy=12.0, width=32, height=24)
    rng = np.random.default_rng(3)
    poses = []
    with ck.Dataset(d) as ds:
        for i in range(5):
            pose = np.eye(4)
            pose[:3, 3] = (0.2 * i, 1.0, 2.0 - 0.1 * i)
            poses.append(pose)
            ds.add_frame(pose, k, rgb=rng.integers(0, 256, (24, 32, 3), dtype=np.uint8), timestamp=0.5 * i)
        ds.finalize()
    with open(d / "events.jsonl", "a") as f:
        f.write(json.dumps({"timestamp": 1.0, "code": 1, "name": "<script>x</script>", "text": "<img src=x onerror=alert(1)>"}) + "\n")
        f.write("{torn")
    out = tmp_path / "r.html"
    r = run("report", d, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    doc = _Doc()
    doc.feed(text)
    assert "<script>x" not in text and "<img src=x" not in text and "&lt;script&gt;" in text
    assert "ck-box" not in doc.by_id and "ck-dial" not in doc.by_id and "no boundingbox.json" in text
    s, ox, oy = map(float, doc.by_id["ck-view-top"]["data-transform"].split())
    want = np.array([[ox + s * p[0, 3], oy + s * p[2, 3]] for p in poses])
    np.testing.assert_allclose(points(doc.by_id["ck-path"]["points"]), want, atol=0.006)
    assert doc.by_id["ck-path"]["data-source"] == "captured frames"


@pytest.mark.parametrize("case", ["missing", "file", "empty", "garbage-journal", "garbage-box", "output-dir-missing",
                                  "output-is-a-folder"])
def test_bad_datasets_give_one_clean_line(tmp_path, case, c_demo_dataset):
    d = tmp_path / "ds"
    out = tmp_path / "r.html"
    if case == "file":
        d.write_text("not a folder")
    elif case == "empty":
        d.mkdir()
    elif case == "garbage-journal":
        d.mkdir()
        (d / "capturekit.jsonl").write_bytes(b"\x00\xff{not json" * 50)
    elif case == "garbage-box":
        with ck.Dataset(d) as ds:
            ds.add_frame(np.eye(4), ck.Intrinsics(fx=40.0, fy=40.0, cx=16.0, cy=12.0, width=32, height=24),
                         rgb=np.zeros((24, 32, 3), np.uint8))
            ds.finalize()
        (d / "boundingbox.json").write_text('{"center": "nowhere"')
    elif case == "output-dir-missing":
        d = c_demo_dataset
        out = tmp_path / "no" / "such" / "r.html"
    elif case == "output-is-a-folder":
        d = c_demo_dataset
        out = tmp_path / "folder.html"
        (out / "inside").mkdir(parents=True)
    r = run("report", d, "-o", out)
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("capturekit: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert not out.is_file() and not os.path.exists(str(out) + ".tmp")


def test_report_help_and_usage():
    r = run("report", "--help")
    assert r.returncode == 0 and "-o" in r.stdout and "self-contained" in r.stdout
    r = run("report")
    assert r.returncode == 2 and "required" in r.stderr
    r = run("report", ".", "-o", "x.html", "--thumbnails", "99")
    assert r.returncode == 1 and "--thumbnails" in r.stderr


def _inside_hull(q, poly):
    """Points q (N, 2) inside the convex polygon poly (counter-clockwise or clockwise)."""
    sign = None
    inside = np.ones(len(q), bool)
    for p0, p1 in zip(poly, np.roll(poly, -1, axis=0)):
        c = (p1[0] - p0[0]) * (q[:, 1] - p0[1]) - (p1[1] - p0[1]) * (q[:, 0] - p0[0])
        if sign is None:
            sign = np.sign(np.median(c)) or 1.0
        inside &= c * sign >= -1e-9
    return inside


def test_surface_map_shows_the_depth_inside_the_box_from_top_and_side(report):
    """The surface map's images against the dataset's own depth: every 2nd pixel of each depth PNG
    (Pillow, millimetres) back-projected here with the frame's pose and intrinsics (scaled to the
    PNG), kept inside the box (boundingbox.json's corners), projected by each image's stated
    transform: they land on drawn pixels, and the drawn pixels lie on them. Colours are the
    coverage palette; one "capture next" line names a side."""
    dataset, text, doc = report
    tf = json.load(open(os.path.join(dataset, "transforms.json")))
    bj = json.load(open(os.path.join(dataset, "boundingbox.json")))
    corners = np.array([[c["x"], c["y"], c["z"]] for c in bj["positions"].values()])
    pts = []
    for f in tf["frames"]:
        if "depth_file_path" not in f:
            continue
        mm = np.asarray(Image.open(os.path.join(dataset, f["depth_file_path"])), np.float64)[::2, ::2]
        h, w = np.asarray(Image.open(os.path.join(dataset, f["depth_file_path"]))).shape
        fx, fy, cx, cy, iw, ih = (f.get(k, tf.get(k)) for k in ("fl_x", "fl_y", "cx", "cy", "w", "h"))
        sx, sy = w / iw, h / ih
        yy, xx = np.mgrid[0:h:2, 0:w:2]
        z = mm / 1000.0
        ok = z > 0
        cam = np.stack([(xx + 0.5 - cx * sx) / (fx * sx) * z, -(yy + 0.5 - cy * sy) / (fy * sy) * z, -z], -1)[ok]
        m = np.asarray(f["transform_matrix"], np.float64)
        pts.append(cam @ m[:3, :3].T + m[:3, 3])
    pts = np.concatenate(pts)
    top_hull = hull(corners[:, [0, 2]])
    mid = top_hull.mean(axis=0)
    top_hull = top_hull[np.argsort(np.arctan2(top_hull[:, 1] - mid[1], top_hull[:, 0] - mid[0]))]
    bottom = corners[:, 1].min()
    if bj.get("floor") is not None:
        # The floor rule (ck_surface_fuse): with a floor, the 2 voxels above it (voxel = the box's
        # longest edge / 128) are floor, not surface. The demo's depth sees that floor.
        assert abs(bj["floor"] - bottom) < 1e-4
        edges = np.linalg.norm(corners[[1, 3, 4]] - corners[0], axis=1)  # right, bottom, back of corner 0
        floor_top = bottom + 2 * edges.max() / 128
        assert ((pts[:, 1] >= bottom) & (pts[:, 1] < floor_top)).sum() > 1000
        bottom = floor_top + 1e-4
    inside = _inside_hull(pts[:, [0, 2]], top_hull) & (pts[:, 1] >= bottom) & (pts[:, 1] <= corners[:, 1].max())
    pts = pts[inside]
    assert len(pts) > 1000
    for view, (a, b, sign) in (("ck-surface-top", (0, 2, 1.0)), ("ck-surface-side", (0, 1, -1.0))):
        img_attrs = doc.by_id[view]
        s, ox, oy = map(float, img_attrs["data-transform"].split())
        img = np.asarray(Image.open(io.BytesIO(base64.b64decode(img_attrs["src"].split(",", 1)[1]))).convert("RGB")).astype(int)
        drawn = ~(np.all(img == 250, axis=2) | np.all(img == 160, axis=2))
        # Coverage palette only: red (unseen), (255 - 255 p, 255, 255 p), or dark grey (out of reach).
        c = img[drawn]
        red = np.all(c == (255, 0, 0), axis=1)
        grey = np.all(c == OUT_OF_REACH_GREY, axis=1)
        assert np.all(red | grey | ((c[:, 1] == 255) & (np.abs(c[:, 0] + c[:, 2] - 255) <= 1)))
        q = np.stack([ox + s * pts[:, a], oy + sign * s * pts[:, b]], 1)
        qi = np.floor(q).astype(int)
        hh, ww = drawn.shape
        ok = (qi[:, 0] >= 2) & (qi[:, 0] < ww - 2) & (qi[:, 1] >= 2) & (qi[:, 1] < hh - 2)
        near = np.zeros_like(drawn)
        for dy in (-2, -1, 0, 1, 2):
            for dx in (-2, -1, 0, 1, 2):
                near[qi[ok, 1] + dy, qi[ok, 0] + dx] = True
        on = np.mean([drawn[y - 1:y + 2, x - 1:x + 2].any() for x, y in qi[ok]])
        assert on > 0.97, (view, on)
        covered = np.mean(near[drawn])
        assert covered > 0.9, (view, covered)
    line = doc.by_id["ck-capture-next"]
    assert line is not None
    m = __import__("re").search(r'id="ck-capture-next"><strong>capture next: ([^<]*)</strong>', text)
    assert m and (any(side in m.group(1) for side in ("front", "left", "right", "back", "top", "bottom"))
                  or "complete" in m.group(1))
