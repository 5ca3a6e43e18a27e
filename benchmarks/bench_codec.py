"""Issue 10: the native depth codec vs its C peers on sensor-like depth, in one run, same frames.

Frames come from benchmarks/sensor_depth.py (phone-LiDAR float16 256 x 192, RGB-D uint16 mm
640 x 480 and 1280 x 720, deterministic by seed) plus the library's synthetic demo scene (noise
free, reported apart). Peers are C (benchmarks/peers/*.c, built by `make bench` into
libckpeers.so, path in CK_PEERS_LIBRARY) called through ctypes; CaptureKit is called through its
Python binding's high-level API (``capturekit.depth.DepthCodec(level).encode(array, kind)`` /
``.decode(bytes)``). Both sides pay a comparable Python wrapper per frame (argument checks,
output array, ``bytes``); the fixed cost per call is measured on a 1 x 1 frame and printed.

Every codec is checked to be lossless on every frame before it is timed. Speeds: one core (the
process is pinned to one CPU), each codec encodes and decodes all frames of a profile once per
repetition, repetitions interleaved across codecs; the median repetition is reported.

    CAPTUREKIT_LIBRARY=.build-dist/release/libcapturekit.so CK_PEERS_LIBRARY=.build-dist/c/libckpeers.so \
        PYTHONPATH=bindings/python python3 benchmarks/bench_codec.py [--quick] [--reps N]
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sensor_depth  # noqa: E402

from capturekit import depth as ckdepth  # noqa: E402

PEERS = [
    ("left_zstd", "left-valid + zigzag + byte planes + zstd-1 (the peer)"),
    ("med_zstd", "MED (LOCO-I/JPEG-LS) + zigzag + byte planes + zstd-1"),
    ("rvl", "RVL (Wilson 2017)"),
    ("zlib5", "MultiScan: raw DEFLATE level 5"),
    ("png16", "PNG 16-bit (adaptive filters, zlib 6)"),
]


class Peer:
    """A C peer behind the same kind of Python wrapper as DepthCodec (ndpointer checks, a new
    output array, bytes out), so both sides pay comparable per-call overhead."""

    def __init__(self, lib, name, label):
        self.name, self.label = name, label
        u8 = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
        u16 = np.ctypeslib.ndpointer(np.uint16, flags="C_CONTIGUOUS")
        self._bound = getattr(lib, f"{name}_bound")
        self._bound.restype, self._bound.argtypes = ctypes.c_size_t, [ctypes.c_uint32, ctypes.c_uint32]
        self._enc = getattr(lib, f"{name}_encode")
        self._enc.restype = ctypes.c_long
        self._enc.argtypes = [u8, ctypes.c_size_t, u16, ctypes.c_uint32, ctypes.c_uint32]
        self._dec = getattr(lib, f"{name}_decode")
        self._dec.restype = ctypes.c_int
        self._dec.argtypes = [u16, u8, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint32]

    def encode(self, arr, kind=None):
        a = np.ascontiguousarray(arr).view(np.uint16)
        h, w = a.shape
        cap = self._bound(w, h)
        dst = np.empty(cap, np.uint8)
        n = self._enc(dst, cap, a, w, h)
        if n < 0:
            raise RuntimeError(f"{self.name}: encode failed")
        return dst[:n].tobytes()

    def decode(self, data, shape, dtype):
        buf = np.frombuffer(data, np.uint8)
        out = np.empty(shape, np.uint16)
        if self._dec(out, buf, buf.size, shape[1], shape[0]) != 0:
            raise RuntimeError(f"{self.name}: decode failed")
        return out.view(dtype)


class Ours:
    def __init__(self, level=0):
        self.name, self.label = "capturekit", "CaptureKit native codec (this library)"
        self.codec = ckdepth.DepthCodec(level)

    def encode(self, arr, kind):
        return self.codec.encode(arr, kind)

    def decode(self, data, shape, dtype):
        return self.codec.decode(data)


def cached_frames(profile, count, seed):
    cache = HERE.parent / ".build-dist" / "sensor-cache"
    path = cache / f"{profile}-{count}-{seed}-v1.npy"
    if path.exists():
        return list(np.load(path))
    depth, _ = sensor_depth.frames(profile, count, seed)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, np.stack(depth))
    return depth


def demo_frames(w, h, count):
    """The library's synthetic scene (noise free), float16 metres."""
    from capturekit import geometry, scene

    out = []
    with scene.Scene(7) as sc:
        k = geometry.Intrinsics(0.82 * w, 0.82 * w, 0.5 * w, 0.5 * h, w, h)
        for i in range(count):
            a = 0.35 * i
            eye = np.array([1.6 * math.sin(a), 1.5 if i % 2 else 0.9, 1.6 * math.cos(a)])
            target = np.array([0.2 * math.cos(a), 0.3, -0.2 * math.sin(a)])
            f = target - eye
            f /= np.linalg.norm(f)
            r = np.cross(f, [0, 1, 0])
            r /= np.linalg.norm(r)
            u = np.cross(r, f)
            m = np.eye(4, dtype=np.float32)
            m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = r, u, -f, eye
            d, _ = sc.render_depth(m, k, i)
            out.append(ckdepth.convert(d, np.float16))
    return out


def run(codecs, frames, kind, reps):
    raw = frames[0].nbytes * len(frames)
    shape, dtype = frames[0].shape, frames[0].dtype
    results = {}
    blobs = {}
    for c in codecs:  # lossless check on every frame, and the sizes
        bl = [c.encode(f, kind) for f in frames]
        for f, b in zip(frames, bl):
            back = c.decode(b, shape, dtype)
            if not np.array_equal(back.view(np.uint16), f.view(np.uint16)):
                raise SystemExit(f"{c.name} is not lossless on this data")
        blobs[c.name] = bl
    times = {c.name: ([], []) for c in codecs}
    for _ in range(reps):
        for c in codecs:
            bl = blobs[c.name]
            t0 = time.perf_counter()
            for f in frames:
                c.encode(f, kind)
            t1 = time.perf_counter()
            for b in bl:
                c.decode(b, shape, dtype)
            t2 = time.perf_counter()
            times[c.name][0].append(t1 - t0)
            times[c.name][1].append(t2 - t1)
    for c in codecs:
        size = sum(map(len, blobs[c.name]))
        e = statistics.median(times[c.name][0])
        d = statistics.median(times[c.name][1])
        results[c.name] = dict(label=c.label, ratio=raw / size, bytes=size / len(frames),
                               enc_mbs=raw / e / 1e6, enc_fps=len(frames) / e, dec_fps=len(frames) / d)
    return results


def report(title, res, frames, ov, extra=""):
    """One table; 'core' speeds subtract each wrapper's measured per-call cost (`ov`) from the
    per-frame time, so the Python binding's extra argument checks do not count against the codec."""
    peer = res["left_zstd"]
    h, w = frames[0].shape
    zero = np.mean(np.stack(frames).view(np.uint16) == 0)

    def core(r, name, which):
        fps = r["enc_fps" if which == 0 else "dec_fps"]
        return 1.0 / max(1.0 / fps - ov[name][which] * 1e-6, 1e-9)

    print(f"\n### {title}: {w}x{h} {frames[0].dtype}, {len(frames)} frames, {100 * zero:.1f}% invalid, "
          f"frames hash {sensor_depth.frames_hash(frames)}{extra}")
    print("| codec | ratio | bytes/frame | encode MB/s | encode fps | decode fps | ratio vs peer | encode vs peer | "
          "decode vs peer | encode vs peer, core | decode vs peer, core |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in res.items():
        print(f"| {r['label']} | {r['ratio']:.2f} | {r['bytes']:.0f} | {r['enc_mbs']:.0f} | {r['enc_fps']:.0f} | "
              f"{r['dec_fps']:.0f} | {r['ratio'] / peer['ratio']:.2f}x | {r['enc_fps'] / peer['enc_fps']:.2f}x | "
              f"{r['dec_fps'] / peer['dec_fps']:.2f}x | {core(r, name, 0) / core(peer, 'left_zstd', 0):.2f}x | "
              f"{core(r, name, 1) / core(peer, 'left_zstd', 1):.2f}x |")
    ours = res.get("capturekit")
    if ours:
        print(f"CaptureKit vs MultiScan zlib-5: {ours['ratio'] / res['zlib5']['ratio']:.2f}x smaller")
    sys.stdout.flush()


def overhead(codecs, reps=2000):
    """Per-call cost of each wrapper on a 1 x 1 frame (µs): the fixed part of every frame's time."""
    one = np.array([[0x3C00]], np.uint16).view(np.float16)
    out = {}
    for c in codecs:
        b = c.encode(one, "float16")
        t0 = time.perf_counter()
        for _ in range(reps):
            c.encode(one, "float16")
        t1 = time.perf_counter()
        for _ in range(reps):
            c.decode(b, (1, 1), np.float16)
        t2 = time.perf_counter()
        out[c.name] = ((t1 - t0) / reps * 1e6, (t2 - t1) / reps * 1e6)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer frames and repetitions")
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated profiles (lidar,rgbd,rgbd720,demo)")
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    except (AttributeError, OSError):
        pass
    lib = ctypes.CDLL(os.environ.get("CK_PEERS_LIBRARY", str(HERE.parent / ".build-dist/c/libckpeers.so")))
    codecs = [Peer(lib, n, label) for n, label in PEERS] + [Ours()]
    reps = args.reps or (5 if args.quick else 9)
    counts = {"lidar": 60 if args.quick else 240, "rgbd": 20 if args.quick else 60, "rgbd720": 8 if args.quick else 30}
    only = set(filter(None, args.only.split(","))) or {"lidar", "rgbd", "rgbd720", "demo"}
    load = os.getloadavg()[0]
    print(f"## depth codecs on sensor-like depth: numpy {np.__version__}, one core pinned, median of {reps} "
          f"interleaved repetitions, load average {load:.2f}")
    ov = overhead(codecs)
    print("per-call wrapper cost on a 1x1 frame (µs, encode / decode): "
          + ", ".join(f"{n} {e:.1f}/{d:.1f}" for n, (e, d) in ov.items()))
    titles = {"lidar": "LiDAR-like", "rgbd": "RGB-D-like", "rgbd720": "RGB-D-like"}
    for prof in ("lidar", "rgbd", "rgbd720"):
        if prof not in only:
            continue
        frames = cached_frames(prof, counts[prof], args.seed)
        kind = "float16" if frames[0].dtype == np.float16 else "mm"
        report(titles[prof], run(codecs, frames, kind, reps), frames, ov, f", seed {args.seed}")
    if "demo" in only:
        frames = demo_frames(256, 192, 40)
        report("Demo scene (the library's synthetic scene, not a headline)", run(codecs, frames, "float16", reps), frames, ov)


if __name__ == "__main__":
    main()
