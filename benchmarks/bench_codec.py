"""Issue 24: prepares the frames for the C codec benchmark (benchmarks/bench_codec.c), prints the
residual statistics of each set, and runs the harness.

Sets: the real sensor depth of benchmarks/real_depth.py (skipped with a message when a set is not
on this machine) and the synthetic profiles of benchmarks/sensor_depth.py (phone-LiDAR float16
256 x 192, RGB-D uint16 mm 640 x 480 and 1280 x 720, deterministic by seed), reported apart.

    python3 benchmarks/bench_codec.py --harness .build-dist/c/bench_codec [--quick] [--reps N] [--only a,b]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import real_depth  # noqa: E402
import sensor_depth  # noqa: E402

OUT = HERE.parent / ".build-dist" / "depth-sets" / "frames"
KIND = {"mm": 2, "float16": 1}


def synthetic(profile, count, seed):
    path = HERE.parent / ".build-dist" / "sensor-cache" / f"{profile}-{count}-{seed}-v1.npy"
    if path.exists():
        return list(np.load(path))
    depth, _ = sensor_depth.frames(profile, count, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.stack(depth))
    return depth


def write_frames(name, frames, kind):
    OUT.mkdir(parents=True, exist_ok=True)
    h, w = frames[0].shape
    p = OUT / f"{name}.frames"
    with open(p, "wb") as f:
        f.write(b"CKFR" + struct.pack("<4I", w, h, len(frames), KIND[kind]))
        for fr in frames:
            f.write(np.ascontiguousarray(fr).view(np.uint16).astype("<u2").tobytes())
    return p


def left_residuals(a):
    """x - (last valid value before it in raster order), for the valid pixels."""
    flat = a.ravel().astype(np.int64)
    valid = flat != 0
    pos = np.maximum.accumulate(np.where(valid, np.arange(flat.size), -1))
    before = np.concatenate([[-1], pos[:-1]])
    pred = np.where(before >= 0, flat[np.maximum(before, 0)], 0)
    return (flat - pred)[valid]


def med_residuals(a):
    A = np.pad(a.astype(np.int64), ((1, 0), (1, 0)))
    W, N, NW = A[1:, :-1], A[:-1, 1:], A[:-1, :-1]
    mx, mn = np.maximum(W, N), np.minimum(W, N)
    med = np.where(NW >= mx, mn, np.where(NW <= mn, mx, W + N - NW))
    return (a.astype(np.int64) - med)[a != 0]


def stats(name, frames):
    rows = []
    for f in frames:
        a = f.view(np.uint16)
        r, m = left_residuals(a), med_residuals(a)
        inv = (a == 0).ravel().astype(np.int8)
        d = np.diff(np.concatenate([[0], inv, [0]]))
        runs = np.flatnonzero(d == -1) - np.flatnonzero(d == 1)
        rows.append((len(np.unique(a[a != 0])), inv.mean(), runs.mean() if runs.size else 0,
                     (r == 0).mean(), np.median(np.abs(r)), np.percentile(np.abs(r), 90), (np.abs(r) >= 128).mean(),
                     (m == 0).mean(), np.percentile(np.abs(m), 90)))
    s = np.mean(rows, axis=0)
    print(f"| {name} | {s[0]:.0f} | {100 * s[1]:.1f} % | {s[2]:.1f} | {100 * s[3]:.0f} % | {s[4]:.0f} | {s[5]:.0f} | "
          f"{100 * s[6]:.1f} % | {100 * s[7]:.0f} % | {s[8]:.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    sets = []
    for name in real_depth.SETS:
        if only and name not in only:
            continue
        frames = real_depth.load(name)
        if frames is None:
            print(f"(set {name} is not on this machine: python3 benchmarks/real_depth.py --import "
                  f"{real_depth.SETS[name]['source'][0]}; skipped)")
            continue
        sets.append((name, frames, real_depth.kind(name)))
    counts = {"lidar": 60 if args.quick else 120, "rgbd": 10 if args.quick else 30, "rgbd720": 4 if args.quick else 12}
    for prof in ("lidar", "rgbd", "rgbd720"):
        if only and f"synthetic-{prof}" not in only:
            continue
        frames = synthetic(prof, counts[prof], args.seed)
        sets.append((f"synthetic-{prof}", frames, "float16" if frames[0].dtype == np.float16 else "mm"))
    print(f"## residual statistics (per frame, averaged; load average {os.getloadavg()[0]:.2f})")
    print("| set | distinct values | invalid | invalid run | left r = 0 | left median abs(r) | left p90 abs(r) | "
          "left abs(r) >= 128 | MED r = 0 | MED p90 abs(r) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    paths = []
    for name, frames, kind in sets:
        stats(name, frames)
        paths.append(str(write_frames(name, frames, kind)))
    sys.stdout.flush()
    cmd = [args.harness, "--reps", str(args.reps or (5 if args.quick else 9))] + paths
    print("\n" + " ".join(cmd))
    sys.stdout.flush()
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
