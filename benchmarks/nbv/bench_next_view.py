"""Cost of ck_surface_next_view straight after each capture (issue 23: the next-best view within
5 ms on one core), on the objects whose maps are largest: a cube and a sphere that fill their box
(generated here with Open3D: the most surface an object gives a map of the default grid, 76-126 k
elements), then the meshes of bench_nbv.py that are present in --mesh-dir.

The simulated operator of bench_nbv.py follows the hints (seed 1, no background); after each
capture the next_view call is timed as a capture loop makes it. The first call of a run (a map of
one view) is left out of the median. Also printed: what a capture costs whole (its add_view and
that next_view: the view computes, once next views are asked for, the frontier steps the call
reads), and the same call made again on the final map
(--repeat times: the planner's work without the figures and without views to learn from).

Compare libraries by running the script with each in turn, alternately (the machine is shared:
same-run comparisons only).

Usage: CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python taskset -c 0 python3 \\
           benchmarks/nbv/bench_next_view.py [--mesh-dir DIR] [--repeat N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402
from bench_nbv import MESHES, MORE_MESHES, MeshScene  # noqa: E402

TARGET_MS = 5.0


def generated(directory: str) -> list[str]:
    """A cube (subdivided, so that its triangles are small) and a sphere, as OBJ files."""
    import open3d as o3d

    cube = o3d.geometry.TriangleMesh.create_box(1, 1, 1).subdivide_midpoint(4)
    sphere = o3d.geometry.TriangleMesh.create_sphere(0.5, 60)
    paths = []
    for name, mesh in (("cube.obj", cube), ("sphere.obj", sphere)):
        path = os.path.join(directory, name)
        o3d.io.write_triangle_mesh(path, mesh)
        paths.append(path)
    return paths


def measure(path: str, repeat: int) -> dict:
    setup = S.Setup(MeshScene(path))
    ms: list[float] = []
    adds: list[float] = []
    final = None
    for s, _ in S.hint_captures(setup, seed=1, on_next_view=lambda nv, m: ms.append(m), on_add_view=adds.append):
        final = s
    pose = S.ring_pose(setup.centre, setup.radius, *setup.first)
    again = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        final.next_view(pose, S.K_IMG)
        again.append(1000 * (time.perf_counter() - t0))
    after = ms[1:] or ms
    # A capture's whole cost: its add_view and the next_view straight after it (the last capture
    # asks for none), from the second capture on.
    both = [a + m for a, m in zip(adds[1:], ms[1:])] or [a + m for a, m in zip(adds, ms)]
    return dict(elements=len(final.elements()), calls=len(ms), median=float(np.median(after)), max=float(np.max(ms)),
                over=sum(m > TARGET_MS for m in ms), again=float(np.median(again)) if again else float("nan"),
                capture=float(np.median(both)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mesh-dir", default=".build-nbv/meshes")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=None, help="object file names to run (default: all)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = generated(tmp) + [os.path.join(args.mesh_dir, m) for m in MESHES + MORE_MESHES]
        print(f"| object | elements at the end | next_view after a capture, ms: median (from the 2nd) / max | calls over {TARGET_MS:g} ms "
              "| add_view + next_view per capture, median ms | the same call again on the final map, median ms |")
        print("|---|---|---|---|---|---|")
        for path in paths:
            name = os.path.basename(path)
            if args.only and name not in args.only:
                continue
            if not os.path.exists(path):
                print(f"| {name} | missing in {args.mesh_dir} (skipped) | | | | |")
                continue
            r = measure(path, args.repeat)
            print(f"| {name} | {r['elements']} | {r['median']:.2f} / {r['max']:.2f} | {r['over']} of {r['calls']} | {r['capture']:.1f} "
                  f"| {r['again']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
