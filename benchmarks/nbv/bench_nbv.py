"""Next-best view on meshes of real objects (issue 23): the simulated operator following
ck_surface_next_view against the all-knowing greedy planner and a uniform 3 x 12 orbit
(benchmarks/nbv/nbv_sim.py), with depth rendered by Open3D's RaycastingScene (a benchmark tool,
not a dependency of the library or of `make test`).

Meshes (not committed; pass --mesh-dir with the files, `make bench-nbv` looks in .build-nbv/meshes),
all from github.com/alecjacobson/common-3d-test-models at commit 8a4f8642 (data/<name>):
  stanford-bunny.obj  Stanford 3D Scanning Repository (Turk & Levoy 1994), a range scan; free for
                      research use with credit to the Stanford Computer Graphics Laboratory
  nefertiti.obj       a scan of the Nefertiti bust (Berlin), released by Nora Al-Badri and Jan Nikolai
                      Nelles ("The Other Nefertiti", 2016) into the public domain
  spot.obj            Keenan Crane's "Spot" cow (CC0)
  rocker-arm.obj      the Rocker Arm, a scanned mechanical part (INRIA, AIM@SHAPE repository)
and, with --more (`make bench-nbv-more`), seven meshes of other kinds from the same commit, none of
them redistributed here (several state no licence; measured locally only):
  beetle.obj          Ivan Sutherland's 1972 Volkswagen Beetle: an open shell (no thickness) whose
                      inside shows through its windows
  cheburashka.obj     Cheburashka (Baran and Popovic 2007)
  cow.obj             the Viewpoint / Sun Microsystems cow
  fandisk.obj         Hoppe's fandisk, a CAD part with sharp edges
  homer.obj           Homer Simpson (source unclear per the repository)
  ogre.obj            Kiaran Ritchie's ogre (124,000 triangles)
  teapot.obj          Newell's Utah teapot: no bottom, a gap around the lid, a hollow spout
(alligator.obj and woody.obj are flat sheets with no thickness and suzanne.obj is a quad mesh
Open3D reads 32 triangles of: not objects one captures, left out.) The truth samples both sides of
the surface: an open shell's inside is surface too when the rings can cover it; a closed mesh's
inner side is never seen and never coverable.
Each mesh is scaled so its largest extent is 0.4 m and stood on the floor. To fetch them:
  git clone https://github.com/alecjacobson/common-3d-test-models /tmp/c3d && mkdir -p .build-nbv/meshes
  for m in stanford-bunny nefertiti spot rocker-arm beetle cheburashka cow fandisk homer ogre teapot; do
    git -C /tmp/c3d show 8a4f8642:data/$m.obj > .build-nbv/meshes/$m.obj; done

The operator's depth noise and dropouts are random: besides the timed run (seed 1), --seeds N
(default 5) repeats the hint run with seeds 1..N and reports the spread of its views and the largest
gap between the library's figure and the truth over all of them.

Usage: CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/nbv/bench_nbv.py [--mesh-dir DIR] [--seeds N] [--floor R] [-v]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbv_sim as S  # noqa: E402

MESHES = ["stanford-bunny.obj", "nefertiti.obj", "spot.obj", "rocker-arm.obj"]
MORE_MESHES = ["beetle.obj", "cheburashka.obj", "cow.obj", "fandisk.obj", "homer.obj", "ogre.obj", "teapot.obj"]


class MeshScene:
    """A triangle mesh: rays by Open3D's RaycastingScene, area-uniform surface samples."""

    def __init__(self, path, extent=0.4, samples=25000, seed=2):
        import open3d as o3d

        mesh = o3d.io.read_triangle_mesh(path)
        v = np.asarray(mesh.vertices, dtype=np.float64)
        lo, hi = v.min(0), v.max(0)
        v = (v - (lo + hi) / 2) * (extent / (hi - lo).max())
        v[:, 1] -= v[:, 1].min()
        mesh.vertices = o3d.utility.Vector3dVector(v)
        mesh.compute_triangle_normals()
        self.triangles = len(mesh.triangles)
        tm = o3d.t.geometry.TriangleMesh.from_legacy(mesh)
        self.rc = o3d.t.geometry.RaycastingScene()
        self.rc.add_triangles(tm)
        tri = np.asarray(mesh.triangles)
        a, b, c = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
        cr = np.cross(b - a, c - a)
        area = np.linalg.norm(cr, axis=1) / 2
        # Outward normals: flip the whole mesh if most face inwards.
        n = cr / np.maximum(2 * area[:, None], 1e-20)
        centroid = (a + b + c) / 3
        if (np.einsum("ij,ij->i", n, centroid - v.mean(0)) * area).sum() < 0:
            n = -n
        rng = np.random.default_rng(seed)
        pick = rng.choice(len(tri), size=samples, p=area / area.sum())
        r1, r2 = rng.random(samples), rng.random(samples)
        s1 = np.sqrt(r1)
        p = (1 - s1)[:, None] * a[pick] + (s1 * (1 - r2))[:, None] * b[pick] + (s1 * r2)[:, None] * c[pick]
        # Both sides of the surface, each sample just off its side so that its own ray reaches it:
        # an open shell (a car body, a teapot with gaps) shows its inner side through its openings,
        # and that side is surface to capture too; the inner side of a closed mesh faces into the
        # solid, no view sees it, and it is never coverable.
        self.points = np.concatenate([p + 1e-4 * n[pick], p - 1e-4 * n[pick]])
        self.normals = np.concatenate([n[pick], -n[pick]])
        self.area = np.full(2 * samples, area.sum() / samples)
        self.one_side_area = float(area.sum())
        self.face_normals = n

    def cast(self, o, d):
        import open3d as o3d

        o = np.broadcast_to(o, d.shape)
        rays = o3d.core.Tensor(np.concatenate([o, d], axis=1).astype(np.float32))
        ans = self.rc.cast_rays(rays)
        t = ans["t_hit"].numpy().astype(np.float64)
        ids = ans["primitive_ids"].numpy()
        ok = np.isfinite(t)
        normal = np.zeros(d.shape)
        normal[ok] = self.face_normals[ids[ok]]
        return t, normal


def seeds_views(seeded):
    views = [v for v, _ in seeded]
    if any(v is None for v in views):
        return f"{sum(v is None for v in views)} of {len(views)} never"
    return f"{min(views)}-{max(views)}, {np.mean(views):.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mesh-dir", default=".build-nbv/meshes")
    ap.add_argument("--meshes", nargs="*", default=None, help="mesh file names (default: the four above)")
    ap.add_argument("--more", action="store_true", help="the seven other meshes (MORE_MESHES) instead")
    ap.add_argument("--floor", type=float, default=0.0, help="radius of a floor disc rendered as background, m (0: none)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    S.FLOOR = args.floor
    rows = []
    for name in args.meshes or (MORE_MESHES if args.more else MESHES):
        path = os.path.join(args.mesh_dir, name)
        if not os.path.exists(path):
            print(f"{name}: missing in {args.mesh_dir} (skipped)")
            continue
        t0 = time.time()
        scene = MeshScene(path)
        setup = S.Setup(scene)
        g = S.run_greedy(setup)
        o = S.run_orbit(setup)
        tc, lc, steps, ms, fig_ms = S.run_hint(setup, log=print if args.v else None)
        diff = [abs(a - b) for a, b in zip(tc, lc)]
        seeded = [(S.views_to_goal(tc), max(diff))]
        for seed in range(2, args.seeds + 1):
            tc2, lc2, *_ = S.run_hint(setup, seed=seed)
            seeded.append((S.views_to_goal(tc2), max(abs(a - b) for a, b in zip(tc2, lc2))))
        row = dict(mesh=name, triangles=scene.triangles, coverable=float((scene.area * setup.coverable).sum() / scene.one_side_area),
                   greedy=S.views_to_goal(g), hint=S.views_to_goal(tc), orbit=S.views_to_goal(o), orbit_final=o[-1],
                   hint_final=tc[-1], maxdiff=max(diff), maxdiff_after3=max(diff[3:], default=0.0), lib_final=lc[-1],
                   ms_median=float(np.median(ms)), ms_max=float(np.max(ms)), fig_median=float(np.median(fig_ms)),
                   fig_max=float(np.max(fig_ms)), seeded=seeded, secs=time.time() - t0)
        rows.append(row)
        print(row, flush=True)
    print()
    print(f"| mesh | coverable (of one side's area) | greedy views | hint views (<= 1.5x greedy?) | orbit 3x12 views (coverage after 36) | max abs(library - true) | after view 3 | library / true at the end | next_view ms (median / max) | first figures read after a capture, ms (median / max) | hint views, seeds 1-{args.seeds} (min-max, mean) | max abs(library - true), seeds 1-{args.seeds} |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        g, h, o = r["greedy"], r["hint"], r["orbit"]
        ok = "yes" if (g and h and h <= 1.5 * g) else "no"
        print(f"| {r['mesh']} | {100 * r['coverable']:.0f} % | {g or '> 60'} | {h or '> 60'} ({ok}) | "
              f"{o or 'never'} ({100 * r['orbit_final']:.1f} %) | {100 * r['maxdiff']:.1f} pp | {100 * r['maxdiff_after3']:.1f} pp | "
              f"{100 * r['lib_final']:.1f} / {100 * r['hint_final']:.1f} % | {r['ms_median']:.1f} / {r['ms_max']:.1f} | "
              f"{r['fig_median']:.1f} / {r['fig_max']:.1f} | {seeds_views(r['seeded'])} | {100 * max(d for _, d in r['seeded']):.1f} pp |")


if __name__ == "__main__":
    main()
