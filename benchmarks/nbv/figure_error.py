"""Where the library's coverage figure departs from the truth (issue 23): the simulated operator of
``bench_nbv.py`` follows the hints on each mesh, and after every capture the error of
``figures().all.complete_fraction`` against the true coverage is split into its parts by matching
the truth's area samples to the library's surface elements (the nearest element within 1.5 voxels
whose normal lies on the sample's side of the surface).

Columns per capture (percentage points against the true coverage T unless said otherwise):
  lib      the library's figure: the well-covered share of the estimated surface's area (observed
           elements weighed by their area, those out of reach left out, + the unseen estimate)
  verdict  the library's verdicts on the true area: the coverable samples whose element is well
           covered / all coverable samples (what the figure would read with exact area weights, the
           truth's coverable surface and its unseen part known)
  unseen   ... the same with the library's unseen share in place of the true one
  all      ... the same over every observed sample, not only the coverable ones (what the figure
           would read if it kept the surface out of reach)
  el-area  well-covered share of the element count minus that of the matched area (observed
           surface): what counting voxels instead of area would add (the library weighs area)
  u lib/true  the library's unseen share F / (O + F) and the coverable share no element matches

Needs Open3D and SciPy (benchmark tools only). Usage, with the meshes of bench_nbv.py:
  CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/nbv/figure_error.py [--mesh-dir DIR] [--floor R] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402
from bench_nbv import MESHES, MeshScene  # noqa: E402


WELL = 2  # ck_surface_element.flags bit 1


def match_samples(el, voxel_size, samples, normals):
    """Each truth sample's element: the nearest of the 4 nearest elements within 1.5 voxels on
    the sample's side of the surface (its normal within 90 degrees of the sample's, or no normal):
    the truth samples both sides (bench_nbv.py), and a closed mesh's inner side must match
    nothing. Returns (matched: bool per sample, nearest: element index per sample)."""
    from scipy.spatial import cKDTree

    dists, idx = cKDTree(el["position"]).query(samples, k=4)
    en = el["normal"][idx]
    side = (np.einsum("ikj,ij->ik", en, normals) > 0) | (np.linalg.norm(en, axis=2) == 0)
    ok = side & (dists < 1.5 * voxel_size)
    return ok.any(axis=1), idx[np.arange(len(samples)), np.argmax(ok, axis=1)]


def scene_arguments(ap):
    """The options every script here shares: the mesh directory, the floor and the operator's seed."""
    ap.add_argument("--mesh-dir", default=".build-nbv/meshes")
    ap.add_argument("--floor", type=float, default=0.0, help="radius of a floor disc rendered as background, m (0: none)")
    ap.add_argument("--seed", type=int, default=1, help="the operator's noise seed (bench_nbv.py uses 1..5)")


def mesh_setup(args, name):
    """The scene of mesh `name` under the options of `scene_arguments`: (scene, setup, the truth's
    area samples in the box frame)."""
    S.FLOOR = args.floor
    scene = MeshScene(os.path.join(args.mesh_dir, name))
    setup = S.Setup(scene)
    return scene, setup, scene.points - setup.centre  # the box frame (the box is not turned)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshes", nargs="*", default=MESHES)
    scene_arguments(ap)
    args = ap.parse_args()
    worst: dict[str, float] = {}
    for name in args.meshes:
        if not os.path.exists(os.path.join(args.mesh_dir, name)):
            print(f"{name}: missing in {args.mesh_dir} (skipped)")
            continue
        scene, setup, samples = mesh_setup(args, name)
        cov = setup.coverable
        print(f"{name}: capture, T, then pp against T: lib verdict unseen all | el-area | u lib/true")
        for k, (s, t) in enumerate(S.hint_captures(setup, seed=args.seed), start=1):
            true = t.coverage()
            f = s.figures().all
            el = s.elements()
            vs = s.grid().voxel_size
            well = (el["flags"] & WELL) != 0
            matched, nearest = match_samples(el, vs, samples, scene.normals)
            sample_well = matched & well[nearest]
            u_lib = f.frontier / max(1, f.observed + f.frontier)
            u_true = float((~matched & cov).sum() / cov.sum())
            parts = {
                "lib": f.complete_fraction - true,
                "verdict": (sample_well & cov).sum() / cov.sum() - true,
                "unseen": (sample_well & cov).sum() / ((matched & cov).sum() / (1 - u_lib)) - true,
                "all": sample_well.sum() / (matched.sum() / (1 - u_lib)) - true,
            }
            el_area = f.well_covered / max(1, f.observed) - sample_well.sum() / max(1, matched.sum())
            row = " ".join(f"{100 * v:+5.1f}" for v in parts.values())
            print(f"  {k:2d} {100 * true:5.1f} % {row} | {100 * el_area:+5.1f} | {100 * u_lib:4.1f} / {100 * u_true:4.1f} %")
            for key, v in parts.items():
                worst[key] = max(worst.get(key, 0.0), abs(v))
    print("largest |error| over every capture (pp): " + ", ".join(f"{k} {100 * v:.1f}" for k, v in worst.items()))


if __name__ == "__main__":
    main()
