#!/usr/bin/env python3
"""bench_batch.py — `capturekit batch transcode` scans per second with 1 and 2 local workers
(run by `make bench`; the numbers go to BENCHMARKS.md).

The same set both times: SCANS MultiScan scans of FRAMES sensor-like 256x192 depth frames
(float16 metres, smooth surfaces with noise and holes) and confidence, written with Python's zlib
as the app writes them; the task transcodes each into .ckdepth (raw inflate + the native codec:
CPU-bound, in the library). Each configuration runs REPS times (fresh output folder, the pool
started inside the timing); reported: the median scans/s and the speedup of 2 workers over 1.
`python3 benchmarks/bench_batch.py [SCANS] [FRAMES]`.
"""
import os
import shutil
import statistics
import sys
import tempfile
import time
import zlib

import numpy as np

from capturekit import batch

SCANS = int(sys.argv[1]) if len(sys.argv) > 1 else 48
FRAMES = int(sys.argv[2]) if len(sys.argv) > 2 else 90
REPS = 3
W, H = 256, 192


def deflate(frames):
    c = zlib.compressobj(5, zlib.DEFLATED, -15)
    return b"".join(c.compress(f.tobytes()) + c.flush(zlib.Z_FULL_FLUSH) for f in frames) + c.flush()


def write_scan(folder, seed):
    import json
    rng = np.random.default_rng(seed)
    os.makedirs(folder)
    sid = f"20261125T1{seed:05d}+0000_bench"
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    depth, conf = [], []
    for i in range(FRAMES):
        d = 1.5 + 0.4 * np.sin(xx / 40 + i * 0.05) + 0.2 * np.cos(yy / 30) + rng.normal(0, 0.004, (H, W))
        d[rng.random((H, W)) < 0.03] = 0
        depth.append(d.astype(np.float16))
        conf.append(np.where(rng.random((H, W)) < 0.9, 2, 1).astype(np.uint8))
    k = [1613.7, 0, 0, 0, 1613.7, 0, 941.4, 727.0, 1]
    with open(os.path.join(folder, sid + ".jsonl"), "w") as f:
        for i in range(FRAMES):
            m = np.eye(4)
            m[0, 3] = i * 0.01
            f.write(json.dumps({"timestamp": 10**9 + i * 16_666_667, "intrinsics": k,
                                "transform": m.T.reshape(-1).tolist()}) + "\n")
    with open(os.path.join(folder, sid + ".depth.zlib"), "wb") as f:
        f.write(deflate(depth))
    with open(os.path.join(folder, sid + ".confidence.zlib"), "wb") as f:
        f.write(deflate(conf))
    streams = [
        {"id": "depth_back_1", "type": "lidar_sensor", "encoding": "float16_zlib", "frequency": 60,
         "number_of_frames": FRAMES, "file_extension": "depth.zlib", "resolution": [H, W]},
        {"id": "confidence_map", "type": "confidence_map", "encoding": "uint8_zlib", "frequency": 60,
         "number_of_frames": FRAMES, "file_extension": "confidence.zlib"},
        {"id": "camera_info_color_back_1", "type": "camera_info", "encoding": "jsonl", "frequency": 60,
         "number_of_frames": FRAMES, "file_extension": "jsonl"},
    ]
    with open(os.path.join(folder, sid + ".json"), "w") as f:
        json.dump({"device": {"id": "bench", "type": "", "name": ""}, "user": {"name": ""},
                   "scene": {"description": "", "type": "", "gps_location": []}, "streams": streams,
                   "number_of_files": 4}, f)


def main():
    work = tempfile.mkdtemp(prefix="bench-batch-")
    try:
        root = os.path.join(work, "scans")
        for i in range(SCANS):
            write_scan(os.path.join(root, f"scan{i:03d}"), i)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
        print(f"batch transcode ckdepth: {SCANS} MultiScan scans x {FRAMES} frames {W}x{H} "
              f"({size / 1e6:.1f} MB of streams), median of {REPS}; load average {os.getloadavg()[0]:.2f}")
        rates = {}
        for workers in (1, 2, 1, 2, 1, 2)[: 2 * REPS]:
            out = os.path.join(work, "out")
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.perf_counter()
            rows = batch.run(root, "transcode ckdepth", workers=workers, out=out)
            dt = time.perf_counter() - t0
            assert len(rows) == SCANS and all(r["status"] == "ok" for r in rows), rows[:2]
            rates.setdefault(workers, []).append(SCANS / dt)
        r1, r2 = statistics.median(rates[1]), statistics.median(rates[2])
        print(f"  1 worker : {r1:6.2f} scans/s  (runs: {', '.join(f'{r:.2f}' for r in rates[1])})")
        print(f"  2 workers: {r2:6.2f} scans/s  (runs: {', '.join(f'{r:.2f}' for r in rates[2])})")
        print(f"  speedup  : {r2 / r1:.2f}x on {len(os.sched_getaffinity(0))} CPUs "
              f"(load average after: {os.getloadavg()[0]:.2f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
