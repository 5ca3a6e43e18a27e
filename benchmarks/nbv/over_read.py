"""Why the library's coverage figure reads above the truth (issue 23): which captured views count
for the surface that the library calls well covered and the truth does not.

The simulated operator of ``bench_nbv.py`` follows the hints on one mesh. After each capture the
truth's area samples are matched to the library's elements as ``figure_error.py`` matches them
(the nearest element within 1.5 voxels on the sample's side). A sample is over-credited when its
element is well covered and the sample, by the truth, is not (coverable samples only). For every
captured view that added to that element's view count (the count rose at that capture), the
truth's own verdict on the sample in that view is one of:
  seen     the truth counts the view too
  away     the sample faces away from the camera (cos <= 0.05 to the sample's normal)
  out      the sample projects outside the image
  hidden   it faces the camera and is in the image, but other surface hides it
  replayed a count the element got when the earlier views' kept depth frames were replayed on it
           (it appeared between captures), not at a capture
Each column is the number of such views per unit of over-credited area; ``turn`` is the median
angle between the element's normal and the sample's, degrees.

Needs Open3D and SciPy (benchmark tools only). Usage, with the meshes of bench_nbv.py:
  CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/nbv/over_read.py MESH.obj [--mesh-dir DIR] [--floor R] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402
from figure_error import WELL, match_samples, mesh_setup, scene_arguments  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mesh")
    scene_arguments(ap)
    args = ap.parse_args()
    scene, setup, samples = mesh_setup(args, args.mesh)
    cov, area = setup.coverable, scene.area
    captured = []  # the truth's View of each capture, in order

    class RecordingView(S.View):
        def __init__(self, sc, pose):
            super().__init__(sc, pose)
            self.pose = pose
            captured.append(self)

    S.View = RecordingView  # hint_captures makes one View per capture
    credits: dict[tuple, list[int]] = {}
    before: dict[tuple, int] = {}
    print(f"{args.mesh}: capture, true %, library %, over / under-credited % of the coverable area | "
          "views per over-credited area: seen away out hidden replayed | turn")
    for k, (s, t) in enumerate(S.hint_captures(setup, seed=args.seed), start=1):
        el = s.elements()
        vs = s.grid().voxel_size
        keys = [tuple(x) for x in np.round(el["position"] / vs * 2).astype(int)]
        for key, v in zip(keys, el["views"]):
            if v > before.get(key, 0):
                credits.setdefault(key, []).append(k)
        before = dict(zip(keys, el["views"]))
        well = (el["flags"] & WELL) != 0
        matched, nearest = match_samples(el, vs, samples, scene.normals)
        truth_well = t.well()
        over = matched & well[nearest] & ~truth_well & cov
        under = matched & ~well[nearest] & truth_well & cov
        kinds = dict.fromkeys(("seen", "away", "out", "hidden", "replayed"), 0.0)
        turns = []
        for i in np.nonzero(over)[0]:
            e = nearest[i]
            at = credits.get(keys[e], [])
            kinds["replayed"] += area[i] * max(0, int(el["views"][e]) - len(at))
            for c in at:
                v = captured[c - 1]
                if v.mask[i]:
                    kinds["seen"] += area[i]
                elif v.cos[i] <= 0.05:
                    kinds["away"] += area[i]
                else:
                    cam = (scene.points[i] - v.pose[:3, 3]) @ v.pose[:3, :3]
                    u = S.K_IMG.cx + S.K_IMG.fx * cam[0] / -cam[2]
                    w = S.K_IMG.cy - S.K_IMG.fy * cam[1] / -cam[2]
                    inside = 0 <= u < S.W_IMG and 0 <= w < S.H_IMG
                    kinds["hidden" if inside else "out"] += area[i]
            turns.append(np.degrees(np.arccos(np.clip(np.dot(el["normal"][e], scene.normals[i]), -1, 1))))
        o = float((area * over).sum())
        a = float((area * cov).sum())
        row = " ".join(f"{v / max(o, 1e-12):4.2f}" for v in kinds.values())
        print(f"  {k:2d} {100 * t.coverage():5.1f} {100 * s.figures().all.complete_fraction:5.1f} "
              f"{100 * o / a:4.1f} / {100 * float((area * under).sum()) / a:4.1f} | {row} | "
              f"{np.median(turns) if turns else 0.0:4.1f}", flush=True)


if __name__ == "__main__":
    main()
