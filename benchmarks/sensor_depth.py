"""Realistic sensor depth for benchmarks and tests (issue 10): deterministic by seed, NumPy only.

Two profiles, built from the published noise models of the two sensor families:

``lidar`` -- phone LiDAR depth (ARKit sceneDepth, 256 x 192, float16 metres) and its confidence:
    * white noise, sigma = 0.8 mm per metre of depth, independent per pixel and frame;
    * low-frequency noise, sigma = 1.5 mm per metre: a smooth random field (a coarse 9 x 7 grid,
      bicubic-like upsampling) that drifts from frame to frame -- the phone's depth is upsampled
      from a sparse dot pattern, so its errors are spatially correlated;
    * mixed depth at edges ("flying pixels"): at a depth discontinuity the pixel takes a blend of
      the foreground and background depths (random weight);
    * a few zeros: ~0.2 % isolated dropouts, small dropout clusters on one dark object, and
      nothing beyond 5.5 m;
    * confidence 0/1/2: 2 on clean surfaces, 1 near edges and beyond 3 m, 0 on mixed pixels,
      beyond 4.5 m and at zeros.
``rgbd`` -- structured-light / active-stereo RGB-D depth (640 x 480, 1280 x 720, uint16 mm):
    * the error lives in disparity: depth noise sigma = 1.5 mm * z^2 (z in metres; Khoshelham &
      Elberink 2012 report 1.4 mm * z^2 for the Kinect), half of it spatially correlated over the
      matching window (a 5 x 5 box filter of white noise), half white;
    * 1 mm quantisation (the uint16 mm output);
    * edge dropouts: pixels next to a depth discontinuity are invalid with probability 0.6;
    * stereo shadows: background pixels that the projector (75 mm baseline) cannot see are 0;
    * speckle: small 1-3 px blobs with a wrong disparity (0.05 %) or no depth (0.1 %);
    * valid range 0.3 .. 6 m.

The scene is a room (floor, three walls, ceiling) with a table, boxes, a sphere and a cylinder;
the camera walks a smooth handheld trajectory (about 1 cm and 0.4 degrees per frame at 30 Hz)
so consecutive frames are related. Depth is the camera-space z (what depth maps store), not the
ray length. Everything comes from ``numpy.random.default_rng(seed)`` (PCG64); :func:`frames_hash`
names a set of frames so runs can be compared.

Used by ``benchmarks/bench_codec.py`` and by the pytest suite (imported through its path).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

PROFILES = {
    # name: (width, height, kind, hfov degrees)
    "lidar": (256, 192, "float16", 63.0),
    "rgbd": (640, 480, "mm", 69.0),
    "rgbd720": (1280, 720, "mm", 69.0),
}


# -- the room -----------------------------------------------------------------------------------

# Axis-aligned boxes (min, max) in metres, y up; the room is 6 m x 2.6 m x 7 m.
_BOXES = [
    ((-0.7, 0.70, -3.1), (0.7, 0.75, -2.3)),     # table top
    ((-0.65, 0.0, -3.05), (-0.6, 0.70, -3.0)),   # table legs
    ((0.6, 0.0, -3.05), (0.65, 0.70, -3.0)),
    ((-0.65, 0.0, -2.4), (-0.6, 0.70, -2.35)),
    ((0.6, 0.0, -2.4), (0.65, 0.70, -2.35)),
    ((1.2, 0.0, -2.2), (1.7, 0.45, -1.7)),       # a box on the floor
    ((-1.9, 0.0, -4.5), (-1.2, 1.9, -4.0)),      # a cabinet against the back-left
    ((-0.3, 0.75, -2.9), (0.05, 0.95, -2.6)),    # a box on the table (dark: dropouts)
]
_SPHERES = [((0.3, 0.87, -2.55), 0.12), ((-1.0, 0.3, -1.6), 0.3)]
_CYLINDERS = [((1.6, -3.6), 0.25, 0.0, 0.8)]     # (x, z), radius, y0, y1
_ROOM = (-2.6, 2.6, 0.0, 2.6, -4.6, 2.0)          # x0 x1 y0 y1 z0 z1


def _trajectory(i: int, phase: float):
    """Camera-to-world rotation (3x3, columns right, up, back) and position for frame i."""
    t = i / 30.0 + phase
    eye = np.array([0.9 * math.sin(0.25 * t), 1.35 + 0.05 * math.sin(1.3 * t), 0.6 + 0.4 * math.cos(0.2 * t)])
    target = np.array([0.3 * math.sin(0.4 * t + 1.0), 0.7, -2.8])
    f = target - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, [0.0, 1.0, 0.0])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    roll = 0.03 * math.sin(0.7 * t)  # handheld wobble
    r, u = math.cos(roll) * r + math.sin(roll) * u, -math.sin(roll) * r + math.cos(roll) * u
    return np.stack([r, u, -f], axis=1), eye


def _raycast(w: int, h: int, hfov: float, rot, eye):
    """Camera-space depth z (> 0, inf where nothing is hit) and an object id per pixel."""
    fx = 0.5 * w / math.tan(math.radians(hfov) / 2)
    u = (np.arange(w) + 0.5 - 0.5 * w) / fx
    v = -(np.arange(h) + 0.5 - 0.5 * h) / fx
    dc = np.stack(np.broadcast_arrays(u[None, :], v[:, None], -np.ones((h, w))), axis=-1)  # camera ray, z = -1
    d = dc @ rot.T                                                                          # world direction
    best = np.full((h, w), np.inf)
    ident = np.zeros((h, w), np.int16)
    with np.errstate(divide="ignore", invalid="ignore"):
        # room: the far side of each axis-aligned slab
        x0, x1, y0, y1, z0, z1 = _ROOM
        for axis, lo, hi, oid in ((0, x0, x1, 1), (1, y0, y1, 2), (2, z0, z1, 3)):
            t = np.where(d[..., axis] > 0, (hi - eye[axis]) / d[..., axis], (lo - eye[axis]) / d[..., axis])
            hit = (t > 0) & (t < best)
            best = np.where(hit, t, best)
            ident = np.where(hit, oid, ident)
        ident = np.where(ident == 2, np.where(d[..., 1] > 0, 4, 2), ident)  # floor 2, ceiling 4
        for k, (lo, hi) in enumerate(_BOXES):
            lo, hi = np.array(lo), np.array(hi)
            ta, tb = (lo - eye) / d, (hi - eye) / d
            tn = np.nanmax(np.minimum(ta, tb), axis=-1)
            tf = np.nanmin(np.maximum(ta, tb), axis=-1)
            hit = (tn <= tf) & (tn > 0) & (tn < best)
            best = np.where(hit, tn, best)
            ident = np.where(hit, 10 + k, ident)
        for k, (c, r) in enumerate(_SPHERES):
            oc = eye - np.array(c)
            b = d @ oc
            a = np.einsum("...i,...i", d, d)
            disc = b * b - a * (oc @ oc - r * r)
            t = (-b - np.sqrt(np.maximum(disc, 0))) / a
            hit = (disc > 0) & (t > 0) & (t < best)
            best = np.where(hit, t, best)
            ident = np.where(hit, 30 + k, ident)
        for k, ((cx, cz), r, ya, yb) in enumerate(_CYLINDERS):
            ox, oz = eye[0] - cx, eye[2] - cz
            a = d[..., 0] ** 2 + d[..., 2] ** 2
            b = d[..., 0] * ox + d[..., 2] * oz
            disc = b * b - a * (ox * ox + oz * oz - r * r)
            t = (-b - np.sqrt(np.maximum(disc, 0))) / a
            y = eye[1] + t * d[..., 1]
            hit = (disc > 0) & (t > 0) & (t < best) & (y >= ya) & (y <= yb)
            best = np.where(hit, t, best)
            ident = np.where(hit, 40 + k, ident)
    return best, ident  # the camera ray has z = -1, so t is the camera-space depth


def _smooth_field(rng, h: int, w: int, gh: int = 7, gw: int = 9):
    """A smooth unit-variance random field: a coarse grid upsampled with a separable cubic."""
    g = rng.standard_normal((gh + 3, gw + 3))
    ys = np.linspace(1, gh + 1, h)
    xs = np.linspace(1, gw + 1, w)

    def cubic(p, t):  # Catmull-Rom along the last axis
        i = np.floor(t).astype(int)
        f = t - i
        p0, p1, p2, p3 = p[..., i - 1], p[..., i], p[..., i + 1], p[..., np.minimum(i + 2, p.shape[-1] - 1)]
        return p1 + 0.5 * f * (p2 - p0 + f * (2 * p0 - 5 * p1 + 4 * p2 - p3 + f * (3 * (p1 - p2) + p3 - p0)))

    rows = cubic(g, xs)               # (gh+3, w)
    field = cubic(rows.T, ys).T       # (h, w)
    return field / max(field.std(), 1e-9)


def _edges(z, rel: float):
    """Pixels next to a relative depth jump above `rel` (4-neighbourhood), and the nearer side."""
    zz = np.where(np.isfinite(z), z, 1e3)
    e = np.zeros(z.shape, bool)
    dx = np.abs(np.diff(zz, axis=1)) > rel * np.minimum(zz[:, 1:], zz[:, :-1])
    dy = np.abs(np.diff(zz, axis=0)) > rel * np.minimum(zz[1:, :], zz[:-1, :])
    e[:, 1:] |= dx
    e[:, :-1] |= dx
    e[1:, :] |= dy
    e[:-1, :] |= dy
    return e


def _box5(a):
    """5 x 5 box filter (edge-replicated), normalised to keep unit variance for white noise."""
    p = np.pad(a, 2, mode="edge")
    c = np.cumsum(np.cumsum(p, 0), 1)
    c = np.pad(c, ((1, 0), (1, 0)))
    s = c[5:, 5:] - c[:-5, 5:] - c[5:, :-5] + c[:-5, :-5]
    return s / 5.0  # sum of 25 unit variances has std 5


class _Frames:
    def __init__(self, profile: str, seed: int):
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {sorted(PROFILES)}")
        self.profile = profile
        self.w, self.h, self.kind, self.hfov = PROFILES[profile]
        self.rng = np.random.default_rng(seed)
        self.phase = float(self.rng.uniform(0, 20))
        self.lf = [_smooth_field(self.rng, self.h, self.w) for _ in range(2)]


def _lidar(st: _Frames, i: int):
    rng, h, w = st.rng, st.h, st.w
    rot, eye = _trajectory(i, st.phase)
    z, ident = _raycast(w, h, st.hfov, rot, eye)
    edges = _edges(z, 0.04)
    # low-frequency noise: a drifting blend of two smooth fields, renewed every 30 frames
    if i % 30 == 0 and i > 0:
        st.lf = [st.lf[1], _smooth_field(rng, h, w)]
    a = (i % 30) / 30.0
    lf = math.cos(a * math.pi / 2) * st.lf[0] + math.sin(a * math.pi / 2) * st.lf[1]
    zn = z * (1 + 0.0015 * lf + 0.0008 * rng.standard_normal((h, w)))
    # flying pixels: blend with a random 4-neighbour at discontinuities
    mixed = edges & (rng.random((h, w)) < 0.5)
    shift = rng.integers(0, 4, (h, w))
    nb = np.stack([np.roll(zn, 1, 1), np.roll(zn, -1, 1), np.roll(zn, 1, 0), np.roll(zn, -1, 0)])
    other = np.take_along_axis(nb, shift[None], 0)[0]
    wgt = rng.random((h, w))
    zn = np.where(mixed & np.isfinite(other), wgt * zn + (1 - wgt) * other, zn)
    zero = (rng.random((h, w)) < 0.002) | ~np.isfinite(zn) | (zn > 5.5)
    zero |= (ident == 17) & (rng.random((h, w)) < 0.3)  # the dark box
    zn = np.where(zero, 0.0, zn)
    conf = np.full((h, w), 2, np.uint8)
    conf[(edges & ~mixed) | (zn > 3.0)] = 1
    conf[mixed | (zn > 4.5) | zero] = 0
    return zn.astype(np.float16), conf


def _rgbd(st: _Frames, i: int):
    rng, h, w = st.rng, st.h, st.w
    rot, eye = _trajectory(i, st.phase)
    z, ident = _raycast(w, h, st.hfov, rot, eye)
    fx = 0.5 * w / math.tan(math.radians(st.hfov) / 2)
    base = 0.075
    # disparity-domain noise: sigma_z = 1.5 mm * z^2, half correlated (matching window), half white
    k = 0.0015 / (fx * base)  # disparity sigma in px giving 1.5 mm at 1 m
    nd = k * (0.7071 * _box5(rng.standard_normal((h, w))) + 0.7071 * rng.standard_normal((h, w)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        disp = fx * base / z                               # px, 0 where nothing is hit
        disp = np.where(np.isfinite(disp), disp, 0.0)
        # speckle: small blobs with a wrong disparity
        bad = rng.random((h, w)) < 0.0005
        bad = bad | np.roll(bad, 1, 1) & (rng.random((h, w)) < 0.6) | np.roll(bad, 1, 0) & (rng.random((h, w)) < 0.6)
        dn = disp + fx * base * nd + np.where(bad, rng.normal(0, 3.0, (h, w)), 0.0)
        zn = np.where(dn > 0, fx * base / dn, 0.0)
    # stereo shadow: the projector sits `base` to the left; a pixel is lit only if its projector
    # column u + d is beyond every column to its left
    up = np.arange(w)[None, :] + disp
    seen = np.maximum.accumulate(up, axis=1)
    shadow = np.zeros((h, w), bool)
    shadow[:, 1:] = up[:, 1:] < seen[:, :-1] - 0.5
    drop = _edges(z, 0.03) & (rng.random((h, w)) < 0.6)
    holes = rng.random((h, w)) < 0.001
    holes = holes | np.roll(holes, 1, 1) | np.roll(holes, 1, 0) & (rng.random((h, w)) < 0.5)
    invalid = shadow | drop | holes | (zn < 0.3) | (zn > 6.0) | ~np.isfinite(zn)
    mm = np.where(invalid, 0, np.rint(zn * 1000.0)).astype(np.uint16)
    return mm, None


def frames(profile: str, count: int, seed: int = 1):
    """`count` consecutive frames of a profile: (depth, confidence) lists.

    depth: ``(h, w)`` float16 metres (``lidar``) or uint16 millimetres (``rgbd``, ``rgbd720``);
    confidence: ``(h, w)`` uint8 0/1/2 for ``lidar``, None for RGB-D.
    """
    st = _Frames(profile, seed)
    gen = _lidar if st.kind == "float16" else _rgbd
    depth, conf = [], []
    for i in range(count):
        d, c = gen(st, i)
        depth.append(d)
        conf.append(c)
    return depth, conf


def special_frames(w: int, h: int, kind: str, seed: int = 0):
    """Edge cases for round-trip tests: all zero, constant, extremes, random noise, sparse."""
    rng = np.random.default_rng(seed)
    dt = np.float16 if kind == "float16" else np.uint16
    top = 0x7BFF if kind == "float16" else 0xFFFF  # largest finite float16 / largest mm

    def bits(a):
        return np.asarray(a, np.uint16).view(dt)

    out = {
        "zero": bits(np.zeros((h, w))),
        "constant": bits(np.full((h, w), 0x3E00 if kind == "float16" else 1234)),
        "max": bits(np.full((h, w), top)),
        "alternating": bits(np.where((np.indices((h, w)).sum(0) % 2) == 0, top, 1)),
        "noise": bits(rng.integers(0, top + 1, (h, w))),
        "sparse": bits(np.where(rng.random((h, w)) < 0.1, rng.integers(1, top + 1, (h, w)), 0)),
        "ramp": bits(np.arange(w * h).reshape(h, w) % (top + 1)),
    }
    if kind == "mm":
        out["extremes"] = bits(rng.choice(np.array([0, 1, 0xFFFE, 0xFFFF]), (h, w)))
    return out


def frames_hash(depth) -> str:
    """First 16 hex digits of SHA-256 over the frames' bytes (little-endian), with their shapes."""
    hsh = hashlib.sha256()
    for d in depth:
        hsh.update(f"{d.dtype.str}{d.shape}".encode())
        hsh.update(np.ascontiguousarray(d).astype(d.dtype.newbyteorder("<")).tobytes())
    return hsh.hexdigest()[:16]


if __name__ == "__main__":
    import sys
    import time

    for prof in ("lidar", "rgbd", "rgbd720"):
        t0 = time.perf_counter()
        n = 4
        d, c = frames(prof, n)
        dt = time.perf_counter() - t0
        a = np.stack(d)
        zero = np.mean(a.view(np.uint16) == 0)
        print(f"{prof}: {a.shape} {a.dtype} {dt / n * 1000:.0f} ms/frame, {100 * zero:.1f}% zero, hash {frames_hash(d)}",
              file=sys.stderr)
