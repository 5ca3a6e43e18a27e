"""Next-best-view evaluation (issue 23): a simulated operator capturing an object by following
``Surface.next_view``, against an all-knowing greedy planner and a uniform orbit, with the truth of
"well covered" computed independently on the object's geometry.

NumPy only: the geometry is a ``Scene`` that casts rays (``SphereUnion``: an analytic, non-convex
union of spheres; ``benchmarks/nbv/bench_nbv.py`` adds meshes through Open3D's RaycastingScene).

* The object stands on the floor (y = 0) at the origin; the box is its bounding box plus 4 %
  and 1 cm (the box bottom on the floor).
* Candidate views (for every planner): 16 azimuths x 3 elevations (5, 30, 60 degrees) at the
  working distance (2.3 x the box's bounding-sphere radius: the object fills the frame), looking
  at the box centre, azimuth 0 in front (-z), 90 degrees on the left (-x): the library's rings.
* Depth: 256 x 192 z-depth (an ARKit-sized map), the same camera as the 1920 x 1440 image
  (focal 1450 px), with LiDAR-like noise (0.8 mm/m white and 1.5 mm/m smooth relative noise,
  flying pixels at depth jumps, 0.5 % dropouts, 50 % dropouts on surface seen within 15 degrees
  of grazing, nothing beyond 5 m). No background by default: pixels that miss the object have no
  depth. With FLOOR > 0 (the benches' --floor) the floor (y = 0, a disc of that radius) is the
  background, as the table behind an object is for a real sensor, and the box has that floor
  (`ck_box.floor` = 0: the library's floor rule applies).
* Truth, per surface sample (area-weighted samples of the geometry): a captured view counts when
  the sample projects into the image, faces the camera (cos > 0.05, the library's rule),
  and is not occluded (our own ray from the camera reaches it, on its side of the surface: a mesh
  is sampled on both sides, see bench_nbv.py); then views, the spread
  2 acos(|sum of unit directions| / views), the best incidence and the best resolution
  focal / (z x 100) px/cm are compared with the library's default thresholds.
* Coverage = the well-covered share of the coverable surface: the samples that all 48
  candidate views together would make well covered (the bottom on the floor and deep pockets
  no candidate sees are excluded, for every planner alike).
"""

from __future__ import annotations

import math
import time

import numpy as np

import capturekit as ck

W_IMG, H_IMG, F_IMG = 1920, 1440, 1450.0
W_D, H_D = 256, 192
K_IMG = ck.Intrinsics(fx=F_IMG, fy=F_IMG, cx=W_IMG / 2, cy=H_IMG / 2, width=W_IMG, height=H_IMG)
K_D = ck.Intrinsics(fx=F_IMG * W_D / W_IMG, fy=F_IMG * H_D / H_IMG, cx=W_D / 2, cy=H_D / 2, width=W_D, height=H_D)
ELEVATIONS = [5.0, 30.0, 60.0]
AZIMUTHS = 16
GOAL = 0.95
FLOOR = 0.0  # radius of the floor disc around the object, metres (0: no floor, no background)


class Thresholds:
    """The library's "well covered" thresholds (SurfaceOptions defaults)."""

    def __init__(self, o: ck.SurfaceOptions):
        self.min_views = o.min_views
        self.min_spread = o.min_spread_deg
        self.cos_max = math.cos(math.radians(o.max_incidence_deg))
        self.min_res = o.min_px_per_cm


# ------------------------------------------------------------------------------------------
# Geometry


class SphereUnion:
    """A union of spheres: rays cast analytically. Non-convex where the spheres meet."""

    def __init__(self, spheres, samples_per_m2=60000, seed=3):
        self.spheres = [(np.asarray(c, float), float(r)) for c, r in spheres]
        rng = np.random.default_rng(seed)
        pts, nrm, area = [], [], []
        for c, r in self.spheres:
            n = max(200, int(4 * math.pi * r * r * samples_per_m2))
            u = rng.normal(size=(n, 3))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            p = c + r * u
            inside = np.zeros(n, bool)
            for c2, r2 in self.spheres:
                if c2 is c:
                    continue
                inside |= np.linalg.norm(p - c2, axis=1) < r2 - 1e-6
            keep = ~inside & (p[:, 1] > 1e-4)
            pts.append(p[keep]); nrm.append(u[keep]); area.append(np.full(keep.sum(), 4 * math.pi * r * r / n))
        self.points, self.normals, self.area = np.concatenate(pts), np.concatenate(nrm), np.concatenate(area)

    def cast(self, o, d):
        """Distance along d (in units of |d|) to the first hit (inf: none) and the unit normal there."""
        o = np.broadcast_to(o, d.shape)
        best = np.full(d.shape[0], np.inf)
        normal = np.zeros(d.shape)
        a = np.einsum("ij,ij->i", d, d)
        for c, r in self.spheres:
            oc = o - c
            b = np.einsum("ij,ij->i", d, oc)
            disc = b * b - a * (np.einsum("ij,ij->i", oc, oc) - r * r)
            t = (-b - np.sqrt(np.maximum(disc, 0))) / a
            hit = (disc > 0) & (t > 1e-6) & (t < best)
            best = np.where(hit, t, best)
            normal = np.where(hit[:, None], (oc + t[:, None] * d) / r, normal)
        return best, normal


def bounds(scene):
    lo, hi = scene.points.min(0), scene.points.max(0)
    pad = 0.04 * (hi - lo) + 0.01
    lo, hi = lo - pad, hi + pad
    lo[1] = 0.0
    return lo, hi


# ------------------------------------------------------------------------------------------
# Cameras


def look_at(eye, target):
    z = eye - target
    z = z / np.linalg.norm(z)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, eye
    return m


def ring_pose(centre, r, az_deg, el_deg):
    a, e = math.radians(az_deg), math.radians(el_deg)
    eye = centre + r * np.array([-math.sin(a) * math.cos(e), math.sin(e), -math.cos(a) * math.cos(e)])
    return look_at(eye, centre)


def angles(pose, centre):
    d = pose[:3, 3] - centre
    return math.degrees(math.atan2(-d[0], -d[2])), math.degrees(math.atan2(d[1], math.hypot(d[0], d[2]))), float(np.linalg.norm(d))


def pixel_rays(pose, k):
    u = (np.arange(k.width) + 0.5 - k.cx) / k.fx
    v = -(np.arange(k.height) + 0.5 - k.cy) / k.fy
    uu, vv = np.meshgrid(u, v)
    dc = np.stack([uu, vv, -np.ones_like(uu)], axis=-1).reshape(-1, 3)
    return dc @ pose[:3, :3].T  # z-depth t gives the point o + t d


def lidar_depth(scene, pose, rng):
    """Sensor-like z-depth (float32 metres, 0 = no depth) of the scene from pose."""
    d = pixel_rays(pose, K_D)
    t, n = scene.cast(pose[:3, 3], d)
    if FLOOR:
        o = pose[:3, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            tf = np.where(d[:, 1] < 0, -o[1] / d[:, 1], np.inf)
        hx, hz = o[0] + tf * d[:, 0], o[2] + tf * d[:, 2]
        tf = np.where(hx * hx + hz * hz < FLOOR * FLOOR, tf, np.inf)
        fl = tf < t
        t = np.where(fl, tf, t)
        n = np.where(fl[:, None], np.array([0.0, 1.0, 0.0]), n)
    z = t.reshape(H_D, W_D)
    cosg = np.abs(np.einsum("ij,ij->i", n, d / np.linalg.norm(d, axis=1, keepdims=True))).reshape(H_D, W_D)
    zn = z * (1 + 0.0015 * _smooth(rng) + 0.0008 * rng.standard_normal((H_D, W_D)))
    zz = np.where(np.isfinite(zn), zn, 1e3)
    jump = np.zeros(z.shape, bool)
    dx = np.abs(np.diff(zz, axis=1)) > 0.04 * np.minimum(zz[:, 1:], zz[:, :-1])
    dy = np.abs(np.diff(zz, axis=0)) > 0.04 * np.minimum(zz[1:, :], zz[:-1, :])
    jump[:, 1:] |= dx; jump[:, :-1] |= dx; jump[1:, :] |= dy; jump[:-1, :] |= dy
    # flying pixels: a blend with the neighbour across the jump (when both are on the object)
    nb = np.roll(zn, 1, 1)
    wgt = rng.random((H_D, W_D))
    mixed = jump & np.isfinite(nb) & np.isfinite(zn) & (rng.random((H_D, W_D)) < 0.3)
    zn = np.where(mixed, wgt * zn + (1 - wgt) * nb, zn)
    drop = (rng.random((H_D, W_D)) < 0.005) | ((cosg < 0.26) & (rng.random((H_D, W_D)) < 0.5))
    drop |= ~np.isfinite(zn) | (zn > 5.0) | (zn <= 0)
    return np.where(drop, 0.0, zn).astype(np.float32)


def _smooth(rng, gh=7, gw=9):
    """A smooth unit-variance random field (bilinear upsampling of a coarse grid)."""
    g = rng.standard_normal((gh, gw))
    ys, xs = np.linspace(0, gh - 1, H_D), np.linspace(0, gw - 1, W_D)
    rows = np.array([np.interp(xs, np.arange(gw), g[i]) for i in range(gh)])
    f = np.array([np.interp(ys, np.arange(gh), rows[:, j]) for j in range(W_D)]).T
    return f / max(f.std(), 1e-9)


# ------------------------------------------------------------------------------------------
# Truth


class View:
    """What one camera pose sees of the samples (independent of the library)."""

    def __init__(self, scene, pose):
        eye = pose[:3, 3]
        p, n = scene.points, scene.normals
        to_cam = eye - p
        dist = np.linalg.norm(to_cam, axis=1)
        d = to_cam / dist[:, None]
        cos = np.einsum("ij,ij->i", n, d)
        cam = (p - eye) @ pose[:3, :3]
        z = -cam[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = K_IMG.cx + K_IMG.fx * cam[:, 0] / z
            v = K_IMG.cy - K_IMG.fy * cam[:, 1] / z
        cand = (cos > 0.05) & (z > 1e-3) & (z <= 5.0) & (u >= 0) & (u < W_IMG) & (v >= 0) & (v < H_IMG)
        idx = np.nonzero(cand)[0]
        t, hit_normal = scene.cast(eye, -d[idx])
        vis = np.zeros(len(p), bool)
        # Reached, and on the sample's side of the surface (a sample on the inner side of a
        # surface, as a mesh's two-sided samples have, is not seen through it from outside).
        vis[idx] = (t >= dist[idx] - 2e-3) & (np.einsum("ij,ij->i", hit_normal, n[idx]) > 0)
        self.mask, self.dir, self.cos = vis, d, cos
        self.res = np.where(vis, F_IMG / (np.maximum(z, 1e-6) * 100), 0.0)


class Truth:
    def __init__(self, scene, th: Thresholds):
        self.scene, self.th = scene, th
        m = len(scene.points)
        self.views = np.zeros(m)
        self.dsum = np.zeros((m, 3))
        self.best_cos = np.full(m, -1.0)
        self.best_res = np.zeros(m)
        self.coverable = None

    def copy(self):
        t = Truth.__new__(Truth)
        t.scene, t.th, t.coverable = self.scene, self.th, self.coverable
        t.views, t.dsum, t.best_cos, t.best_res = self.views.copy(), self.dsum.copy(), self.best_cos.copy(), self.best_res.copy()
        return t

    def add(self, v: View):
        m = v.mask
        self.views[m] += 1
        self.dsum[m] += v.dir[m]
        self.best_cos[m] = np.maximum(self.best_cos[m], v.cos[m])
        self.best_res[m] = np.maximum(self.best_res[m], v.res[m])

    def potential(self, views, dsum, best_cos, best_res):
        """The library planner's quarters (a different code path): views and spread partially."""
        th = self.th
        p = np.minimum(1, views / th.min_views)
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = np.degrees(2 * np.arccos(np.clip(np.linalg.norm(dsum, axis=1) / np.maximum(views, 1), 0, 1)))
        spread = np.where(views > 1, spread, 0.0)
        p = p + (np.minimum(1, spread / th.min_spread) if th.min_spread > 0 else 1)
        p = p + (best_cos >= th.cos_max) + (best_res >= th.min_res)
        return p / 4

    def well(self, views=None, dsum=None, best_cos=None, best_res=None):
        views = self.views if views is None else views
        dsum = self.dsum if dsum is None else dsum
        best_cos = self.best_cos if best_cos is None else best_cos
        best_res = self.best_res if best_res is None else best_res
        th = self.th
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = np.degrees(2 * np.arccos(np.clip(np.linalg.norm(dsum, axis=1) / np.maximum(views, 1), 0, 1)))
        spread = np.where(views > 1, spread, 0.0)
        return (views >= th.min_views) & (spread >= th.min_spread) & (best_cos >= th.cos_max) & (best_res >= th.min_res)

    def coverage(self):
        a = self.scene.area
        return float((a * (self.well() & self.coverable)).sum() / (a * self.coverable).sum())

    def gain(self, v: View):
        """The greedy objective of adding v: progress in quarters + 1 per sample made well covered."""
        m = v.mask & self.coverable
        if not m.any():
            return 0.0
        views, dsum, bc, br = self.views[m], self.dsum[m], self.best_cos[m], self.best_res[m]
        p0 = self.potential(views, dsum, bc, br)
        w0 = self.well(views, dsum, bc, br)
        v1, d1, c1, r1 = views + 1, dsum + v.dir[m], np.maximum(bc, v.cos[m]), np.maximum(br, v.res[m])
        p1 = self.potential(v1, d1, c1, r1)
        w1 = self.well(v1, d1, c1, r1)
        return float((self.scene.area[m] * (p1 - p0 + (w1 & ~w0))).sum())


# ------------------------------------------------------------------------------------------
# Runs


class Setup:
    def __init__(self, scene, options=None):
        self.scene = scene
        self.options = options or ck.SurfaceOptions()
        self.th = Thresholds(self.options)
        lo, hi = bounds(scene)
        self.centre = (lo + hi) / 2
        self.size = hi - lo
        self.box = ck.Box(tuple(self.centre), tuple(self.size), 0.0, floor=0.0 if FLOOR else None)
        self.radius = 2.3 * float(np.linalg.norm(self.size)) / 2
        self.candidates = [(az, el) for el in ELEVATIONS for az in np.arange(AZIMUTHS) * 360.0 / AZIMUTHS]
        self.views = [View(scene, ring_pose(self.centre, self.radius, az, el)) for az, el in self.candidates]
        t = Truth(scene, self.th)
        for v in self.views:
            t.add(v)
        self.coverable = t.well()
        self.first = (0.0, 30.0)

    def truth(self):
        t = Truth(self.scene, self.th)
        t.coverable = self.coverable
        return t


def run_greedy(setup: Setup, max_views=60):
    """The all-knowing greedy planner: every candidate's true visibility, the best gain each time."""
    t = setup.truth()
    first = setup.candidates.index(setup.first)
    t.add(setup.views[first])
    curve = [t.coverage()]
    while curve[-1] < GOAL and len(curve) < max_views:
        gains = [t.gain(v) for v in setup.views]
        c = int(np.argmax(gains))
        if gains[c] <= 0:
            break
        t.add(setup.views[c])
        curve.append(t.coverage())
    return curve


def run_orbit(setup: Setup, max_views=36):
    """A uniform 3 x 12 orbit, ring by ring (low, middle, high), 30 degrees apart."""
    t = setup.truth()
    curve = []
    for el in ELEVATIONS:
        for i in range(12):
            t.add(View(setup.scene, ring_pose(setup.centre, setup.radius, i * 30.0, el)))
            curve.append(t.coverage())
            if curve[-1] >= GOAL or len(curve) >= max_views:
                return curve
    return curve


def hint_captures(setup: Setup, seed=1, max_views=60, walk_step_deg=15.0, on_next_view=None, on_add_view=None):
    """The simulated operator: capture, ask ck_surface_next_view, walk there (depth streamed and
    fused every walk_step_deg of the way), capture, until the truth reaches GOAL or max_views
    captures. Yields (surface, truth) after each capture and its next_view call (the call leaves
    the figures as they are: read them there; the first read runs the unseen estimate the
    capture left pending unless next_view ran it); on_next_view(answer, milliseconds) sees each
    next_view call, made straight after the capture, as a capture loop makes it; on_add_view(milliseconds)
    sees each capture's add_view call."""
    rng = np.random.default_rng(seed)
    s = ck.Surface(setup.box, setup.options)
    t = setup.truth()
    ts = 0.0
    pose = ring_pose(setup.centre, setup.radius, *setup.first)
    for k in range(max_views):
        ts += 1.0
        s.fuse(lidar_depth(setup.scene, pose, rng), K_D, pose, timestamp=ts)
        t0 = time.perf_counter()
        s.add_view(pose, K_IMG, timestamp=ts)
        if on_add_view:
            on_add_view(1000 * (time.perf_counter() - t0))
        t.add(View(setup.scene, pose))
        last = t.coverage() >= GOAL or k + 1 >= max_views
        if not last:
            t0 = time.perf_counter()
            nv = s.next_view(pose, K_IMG)
            if on_next_view:
                on_next_view(nv, 1000 * (time.perf_counter() - t0))
        yield s, t
        if last:
            return
        a0, e0, r0 = angles(pose, setup.centre)
        a1, e1, _ = angles(nv.target_pose, setup.centre)
        da = (a1 - a0 + 180) % 360 - 180
        n = int(max(abs(da), abs(e1 - e0)) // walk_step_deg)
        for i in range(1, n + 1):
            f = i / (n + 1)
            ts += 0.1
            p = ring_pose(setup.centre, r0, a0 + da * f, e0 + (e1 - e0) * f)
            s.fuse(lidar_depth(setup.scene, p, rng), K_D, p, timestamp=ts)
        pose = nv.target_pose


def run_hint(setup: Setup, seed=1, max_views=60, walk_step_deg=15.0, log=None):
    """`hint_captures` recorded: the coverage curves (truth, library complete_fraction) per
    capture, the steps taken, the milliseconds of each next_view call (straight after the
    capture) and of each capture's first figures read after it (where the unseen estimate the
    capture left pending runs, unless next_view ran it)."""
    truth_curve, lib_curve, steps, ms, fig_ms = [], [], [], [], []

    def asked(nv, milliseconds):
        ms.append(milliseconds)
        steps.append((round(nv.target_azimuth * 180 / math.pi), round(nv.target_elevation * 180 / math.pi), nv.gain, nv.text))

    for s, t in hint_captures(setup, seed, max_views, walk_step_deg, asked):
        truth_curve.append(t.coverage())
        t0 = time.perf_counter()
        lib_curve.append(s.figures().all.complete_fraction)
        fig_ms.append(1000 * (time.perf_counter() - t0))
        if log and len(steps) == len(truth_curve):
            log(f"  view {len(truth_curve)}: true {truth_curve[-1]:.3f} lib {lib_curve[-1]:.3f} -> {steps[-1]}")
    return truth_curve, lib_curve, steps, ms, fig_ms


def views_to_goal(curve):
    for i, c in enumerate(curve):
        if c >= GOAL:
            return i + 1
    return None
