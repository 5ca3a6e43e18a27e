"""Where on the surface the library's coverage figure departs from the truth (issue 23), after one
capture of the hint-following operator of ``bench_nbv.py``: the over-credited area (element well
covered, the truth's sample not) by the surface's own curvature, the normals of the elements it
lies on, and the stray elements that stand for no surface.

Printed, for capture N (the truth's samples matched to elements as ``figure_error.py`` matches them):
  curvature  the coverable area in three bands of R, the length of the mean unit normal of the
             truth's samples within one voxel on the sample's side (1: flat at the voxel's scale),
             each with its share of the coverable area and the over-credited share of that band
  normals    the angle between a sample's element normal and its own (median, 90th percentile),
             over-credited samples against correctly credited well-covered ones; the share of the
             over-credited area on elements without a normal
  views      how many captured views the truth counts for the over-credited samples (histogram)
  stray      elements with no truth sample within 1.5 voxels (either side): their share of the
             elements and, among the elements neither well covered nor out of reach on the sides
             the figure counts (what it still asks for), their share of the library's area
             weights (mirrored by element_areas for whole elements; the library's own
             well_fraction, which also weighs facings, printed beside it); how far from the mesh those lie, on which side, facing which way

Needs Open3D and SciPy (benchmark tools only). Usage, with the meshes of bench_nbv.py:
  CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/nbv/error_anatomy.py MESH.obj CAPTURE [--mesh-dir DIR] [--floor R] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402
from figure_error import WELL, match_samples, mesh_setup, scene_arguments  # noqa: E402

OUT_OF_REACH = 8  # ck_surface_element.flags bit 3


def element_areas(el, grid):
    """The library's area weights (SurfaceMap.elementAreas), m^2: 1 / (|n_d| run) voxel faces, d the
    normal's dominant axis, run the contiguous elements along d (up to 3 a side) whose normals lie
    on the same side; 1 voxel face without a normal."""
    vs, origin = grid.voxel_size, np.array(grid.origin)
    ijk = np.floor((el["position"] - origin) / vs + 1e-3).astype(int)
    at = {tuple(v): i for i, v in enumerate(ijk)}
    n = el["normal"]
    a = np.abs(n)
    d = np.argmax(a, axis=1)
    out = np.ones(len(el))
    for i in range(len(el)):
        if a[i, d[i]] == 0:
            continue
        run = 1
        for step in (-1, 1):
            q = ijk[i].copy()
            for _ in range(3):
                q[d[i]] += step
                j = at.get(tuple(q))
                if j is None or np.dot(n[j], n[i]) <= 0:
                    break
                run += 1
        out[i] = 1 / (max(a[i, d[i]], 0.577) * run)
    return out * vs * vs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mesh")
    ap.add_argument("capture", type=int)
    scene_arguments(ap)
    args = ap.parse_args()
    from scipy.spatial import cKDTree

    scene, setup, samples = mesh_setup(args, args.mesh)
    cov, area = setup.coverable, scene.area
    tree = cKDTree(samples)
    for k, (s, t) in enumerate(S.hint_captures(setup, seed=args.seed), start=1):
        if k < args.capture:
            continue
        el, grid = s.elements(), s.grid()
        vs = grid.voxel_size
        well = (el["flags"] & WELL) != 0
        matched, nearest = match_samples(el, vs, samples, scene.normals)
        truth_well = t.well()
        over = matched & well[nearest] & ~truth_well & cov
        right = matched & well[nearest] & truth_well & cov
        total = float((area * cov).sum())
        print(f"{args.mesh}, capture {k}: true {100 * t.coverage():.1f} %, library {100 * s.figures().all.complete_fraction:.1f} %, "
              f"over-credited {100 * (area * over).sum() / total:.1f} % of the coverable area")

        r = np.ones(len(samples))
        for i, near in zip(np.nonzero(cov)[0], tree.query_ball_point(samples[cov], r=vs)):
            n = scene.normals[near]
            same = n[n @ scene.normals[i] > 0]
            r[i] = np.linalg.norm(same.mean(axis=0))
        for lo, hi in ((0.98, 1.01), (0.9, 0.98), (-1, 0.9)):
            band = cov & (r > lo) & (r <= hi)
            a_band = (area * band).sum()
            print(f"  curvature R in ({max(lo, 0):.2f}, {min(hi, 1):.2f}]: {100 * a_band / total:4.1f} % of the area, "
                  f"{100 * (area * (over & band)).sum() / max(a_band, 1e-12):4.1f} % of it over-credited")

        angle = np.degrees(np.arccos(np.clip(np.einsum("ij,ij->i", el["normal"][nearest], scene.normals), -1, 1)))
        for name, m in (("over-credited", over), ("rightly well covered", right)):
            if m.any():
                print(f"  {name}: element normal off the sample's by {np.median(angle[m]):.0f} degrees (median), "
                      f"{np.percentile(angle[m], 90):.0f} (90th percentile)")
        bare = np.linalg.norm(el["normal"], axis=1) == 0
        if over.any():
            print(f"  over-credited area on elements without a normal: {100 * (area * (over & bare[nearest])).sum() / (area * over).sum():.1f} % "
                  f"({100 * bare.mean():.1f} % of the elements)")
            print(f"  views the truth counts for the over-credited samples: {np.bincount(t.views[over].astype(int)).tolist()}")

        dist, near = tree.query(el["position"])
        stray = dist > 1.5 * vs
        # The figure counts the sides of the side mask (not the bottom by default), and leaves out
        # surface out of reach.
        in_mask = ((setup.options.side_mask >> el["side"].astype(int)) & 1) == 1
        counted = in_mask & ((el["flags"] & OUT_OF_REACH) == 0)
        asks = ~well & counted
        weights = np.where(in_mask, element_areas(el, grid), 0.0)
        # The mirror of the library's area weights, with whole elements: the library's own
        # well_fraction also weighs a well-covered element by the share of its facings covered
        # well (SurfaceMap.facingShare), which ck_surface_element does not carry.
        mirror = weights[well & in_mask].sum() / max(weights[counted].sum(), 1e-30)
        library = s.figures().all.well_fraction
        print(f"  well_fraction: {100 * library:.1f} % (the library), {100 * mirror:.1f} % (whole elements, element_areas)")
        print(f"  stray elements: {100 * stray.mean():.1f} % of the elements; of the area still asked for "
              f"({100 * weights[asks].sum() / weights.sum():.1f} % of the library's area), {100 * weights[asks & stray].sum() / max(weights[asks].sum(), 1e-12):.0f} % is stray")
        m = asks & stray
        if m.any():
            j = near[m]
            outside = np.einsum("ij,ij->i", el["position"][m] - samples[j], scene.normals[j]) > 0
            facing = np.einsum("ij,ij->i", el["normal"][m], scene.normals[j])
            print(f"  those stray elements: {np.percentile(dist[m] / vs, 50):.1f} / {np.percentile(dist[m] / vs, 90):.1f} voxels from the mesh "
                  f"(median / 90th percentile), {100 * outside.mean():.0f} % outside it (along the nearest sample's normal), "
                  f"their normal's cosine with that sample's {np.median(facing):+.2f} (median)")
        break


if __name__ == "__main__":
    main()
