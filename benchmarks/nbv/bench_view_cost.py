"""Cost of ck_surface_fuse and ck_surface_add_view on a mesh's 48 candidate frames (issue 23): each
frame's LiDAR-like depth fused, then (unless --fuse-only) added as a view at the same pose, so the
view decides on its own depth frame. Prints the medians and the map's memory at the end. Run the
old and new library alternately to compare (the machine is shared: same-run ratios only).

Usage: CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python taskset -c 0 python3 \\
           benchmarks/nbv/bench_view_cost.py [--mesh-dir DIR] [--fuse-only | --read-figures] MESH
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402
from bench_nbv import MeshScene  # noqa: E402

import capturekit as ck  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mesh")
    ap.add_argument("--mesh-dir", default=".build-nbv/meshes")
    ap.add_argument("--fuse-only", action="store_true")
    ap.add_argument("--read-figures", action="store_true",
                    help="read the figures after every view (timed apart: the unseen estimate runs there)")
    args = ap.parse_args()
    scene = MeshScene(os.path.join(args.mesh_dir, args.mesh))
    setup = S.Setup(scene)
    rng = np.random.default_rng(1)
    s = ck.Surface(setup.box, setup.options)
    fuse_ms, view_ms, read_ms = [], [], []
    for i, (az, el) in enumerate(setup.candidates):
        p = S.ring_pose(setup.centre, setup.radius, az, el)
        d = S.lidar_depth(scene, p, rng)
        t0 = time.perf_counter()
        s.fuse(d, S.K_D, p, timestamp=i)
        fuse_ms.append(1000 * (time.perf_counter() - t0))
        if not args.fuse_only:
            t0 = time.perf_counter()
            s.add_view(p, S.K_IMG, timestamp=i)
            view_ms.append(1000 * (time.perf_counter() - t0))
            if args.read_figures:
                t0 = time.perf_counter()
                s.figures()
                read_ms.append(1000 * (time.perf_counter() - t0))
    f = s.figures()
    views = f"add_view median {np.median(view_ms):.1f} ms (max {np.max(view_ms):.1f}); " if view_ms else ""
    if read_ms:
        views += f"figures median {np.median(read_ms):.1f} ms (max {np.max(read_ms):.1f}); "
    print(f"{args.mesh}: fuse median {np.median(fuse_ms):.2f} ms; {views}{len(s.elements())} elements; "
          f"memory {f.memory_bytes / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
