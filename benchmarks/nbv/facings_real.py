"""The coverage figure on real depth with real poses: the five Redwood Kinect frames of Open3D's
test data (``examples/TestData/RGBD``, commit in ``real_depth.OPEN3D``, MIT; frames from the
Redwood indoor dataset) and their camera trajectory (``trajectory.log``, camera to world, OpenCV
axes), fused and each added as a view (issue 23). The five views lie within a few millimetres and
a degree of each other, so the options ask for no spread (min_spread_deg 0): an element is well
covered when the five views see it within max_incidence_deg of its normal, which tests the
normals the library measures on real depth.

Printed: the library's well_fraction, and for frame 0 alone an estimate from the depth itself of
the share of the box's surface seen within 65 degrees of incidence (normals from a plane over
w x w pixels, by pixels and by surface area; no view of it is beyond the frame).

Usage: CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/nbv/facings_real.py GIT_DIR
  GIT_DIR: a clone or bare mirror of the repository named in real_depth.OPEN3D.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import real_depth  # noqa: E402

import capturekit as ck  # noqa: E402

FX, CX, CY = 525.0, 319.5, 239.5  # the PrimeSense defaults Open3D's RGBD examples use


def show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", f"{real_depth.OPEN3D[1]}:{path}"],
                          capture_output=True, check=True).stdout


def main():
    from PIL import Image
    from scipy.ndimage import uniform_filter

    gitdir = sys.argv[1]
    log = show(gitdir, "examples/TestData/RGBD/trajectory.log").decode().split("\n")
    poses = []
    for i in range(0, len(log) - 4, 5):
        if not log[i].strip():
            break
        poses.append(np.array([[float(x) for x in log[i + r].split()] for r in range(1, 5)]))
    flip = np.diag([1.0, -1.0, -1.0, 1.0])  # OpenCV camera axes -> the library's (y up, looking along -z)
    depths = [np.asarray(Image.open(io.BytesIO(show(gitdir, f"examples/TestData/RGBD/depth/{i:05d}.png")))).astype(np.float32) / 1000
              for i in range(len(poses))]
    h, w = depths[0].shape
    k = ck.Intrinsics(fx=FX, fy=FX, cx=CX, cy=CY, width=w, height=h)
    mid = depths[0][h // 3: 2 * h // 3, w // 3: 2 * w // 3]
    zc = float(np.median(mid[mid > 0]))
    edge = 0.6 * zc
    centre = (poses[0] @ flip @ np.array([0, 0, -zc, 1.0]))[:3]
    s = ck.Surface(ck.Box(tuple(centre), (edge, edge, edge), 0.0), ck.SurfaceOptions(min_spread_deg=0.0))
    for t, (d, p) in enumerate(zip(depths, poses)):
        s.fuse(d, k, p @ flip, timestamp=t)
        s.add_view(p @ flip, k, timestamp=t)
    f = s.figures().all
    print(f"{len(poses)} views, box {edge:.2f} m at {zc:.2f} m, voxel {1000 * s.grid().voxel_size:.1f} mm: "
          f"well_fraction {100 * f.well_fraction:.1f} % ({f.well_covered} of {f.observed} elements well covered)")

    d = depths[0].astype(np.float64)
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    p = np.stack([(u + 0.5 - CX) / FX * d, -(v + 0.5 - CY) / FX * d, -d], -1)
    valid = d > 0
    for win in (5, 9, 15):
        m = uniform_filter(valid.astype(float), win)
        ps = np.stack([uniform_filter(p[..., i] * valid, win) for i in range(3)], -1) / np.maximum(m, 1e-9)[..., None]
        r = win // 2
        du, dv = np.zeros_like(ps), np.zeros_like(ps)
        du[:, r:-r] = ps[:, 2 * r:] - ps[:, :-2 * r]
        dv[r:-r] = ps[2 * r:] - ps[:-2 * r]
        n = np.cross(du, dv)
        n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-12)
        cos = np.abs((n * -p / np.maximum(np.linalg.norm(p, axis=-1, keepdims=True), 1e-12)).sum(-1))
        inbox = valid & (m > 0.99) & (np.abs(p[..., 0]) < edge / 2) & (np.abs(p[..., 1]) < edge / 2) & (np.abs(p[..., 2] + zc) < edge / 2)
        area = d ** 2 / np.maximum(cos, 0.05)
        ok = cos >= np.cos(np.radians(65))
        print(f"frame 0, normals over {win} x {win} pixels: within 65 degrees {100 * ok[inbox].mean():.1f} % of the box's pixels, "
              f"{100 * (area * ok)[inbox].sum() / area[inbox].sum():.1f} % of their area")


if __name__ == "__main__":
    main()
