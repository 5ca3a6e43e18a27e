#!/usr/bin/env python3
"""bench_python.py — CaptureKit through ctypes vs numpy (run by `make bench`).

Uses ctypes DIRECTLY on the library named by $CAPTUREKIT_LIBRARY (not the capturekit package), so
that it measures the raw FFI path. In one run it measures, on 256x192 and 1920x1440 pixel grids of
a camera outside a yawed box (the scene of bench_raycast.c):

  * ck_ray_box_pixels over an interleaved (u, v) pixel-centre array, pointers made once;
  * numpy: the same math vectorised in float32 (the peer, "numpy ~ 20 M rays/s");

as M rays/s (median of >= 7 repetitions of >= 50 ms, the two interleaved), the ratio ours/numpy
and their agreement; then the ctypes per-call overhead (ck_version_number, and
ck_ray_box_pixels with count 0) and the `ctypes.CDLL` load time in fresh subprocesses
(median of 21).
"""
import ctypes
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

REPS = 9
MIN_REP_SECONDS = 0.050
LOAD_RUNS = 21
GRIDS = [(256, 192), (1920, 1440)]


# ----------------------------------------------------------------------------------------------
# The C API, declared here with ctypes (layouts frozen by include/capturekit.h)
# ----------------------------------------------------------------------------------------------

class Vec3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("z", ctypes.c_float)]


class Mat4(ctypes.Structure):
    _fields_ = [("m", ctypes.c_float * 16)]


class Intrinsics(ctypes.Structure):
    _fields_ = [("fx", ctypes.c_float), ("fy", ctypes.c_float), ("cx", ctypes.c_float), ("cy", ctypes.c_float),
                ("width", ctypes.c_uint32), ("height", ctypes.c_uint32)]


class Box(ctypes.Structure):
    _fields_ = [("center", Vec3), ("size", Vec3), ("yaw", ctypes.c_float), ("floor", ctypes.c_float),
                ("has_floor", ctypes.c_int32)]


assert ctypes.sizeof(Vec3) == 12 and ctypes.sizeof(Mat4) == 64
assert ctypes.sizeof(Intrinsics) == 24 and ctypes.sizeof(Box) == 36


def load(path):
    lib = ctypes.CDLL(path)
    status = ctypes.c_int32
    lib.ck_version_number.argtypes = []
    lib.ck_version_number.restype = ctypes.c_uint32
    lib.ck_version_string.argtypes = []
    lib.ck_version_string.restype = ctypes.c_char_p
    lib.ck_status_string.argtypes = [status]
    lib.ck_status_string.restype = ctypes.c_char_p
    lib.ck_last_error_message.argtypes = []
    lib.ck_last_error_message.restype = ctypes.c_char_p
    lib.ck_box_init.argtypes = [ctypes.POINTER(Box), Vec3, Vec3, ctypes.c_float]
    lib.ck_box_init.restype = status
    lib.ck_intrinsics_scale.argtypes = [ctypes.POINTER(Intrinsics), ctypes.POINTER(Intrinsics), ctypes.c_uint32,
                                        ctypes.c_uint32]
    lib.ck_intrinsics_scale.restype = status
    lib.ck_ray_box_pixels.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.POINTER(Mat4), ctypes.POINTER(Intrinsics), ctypes.POINTER(Box)]
    lib.ck_ray_box_pixels.restype = status
    return lib


def check(lib, status, what):
    if status != 0:
        sys.exit(f"{what}: {lib.ck_status_string(status).decode()}: {lib.ck_last_error_message().decode()}")


def header_version():
    """CK_VERSION_NUMBER of the headers in include/ next to this script (None if not found)."""
    include = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include")
    paths = [os.path.join(include, "capturekit.h")]
    areas = os.path.join(include, "capturekit")  # the umbrella's area headers
    if os.path.isdir(areas):
        paths += [os.path.join(areas, f) for f in sorted(os.listdir(areas)) if f.endswith(".h")]
    text = ""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text += f.read()
        except OSError:
            pass
    found = [re.search(rf"#define CK_VERSION_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(found):
        return None
    return int(found[0].group(1)) * 10000 + int(found[1].group(1)) * 100 + int(found[2].group(1))


# ----------------------------------------------------------------------------------------------
# The scene (same as bench_raycast.c) and the numpy peer
# ----------------------------------------------------------------------------------------------

def look_at(eye, target):
    """Camera-to-world pose (OpenGL axes: looks down -z, +y up), column-major float32[16]."""
    eye, target = np.asarray(eye, np.float64), np.asarray(target, np.float64)
    f = target - eye
    f /= np.linalg.norm(f)
    r = np.array([-f[2], 0.0, f[0]])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = r, u, -f, eye
    return m.T.reshape(16).astype(np.float32)  # column-major


def prepare(pose16, k, box):
    """Per-call precompute (float64, then float32 like the library): direction = u*a + v*b + c."""
    p = pose16.astype(np.float64).reshape(4, 4).T  # row-major view of the column-major pose
    rot, t = p[:3, :3], p[:3, 3]
    cy, sy = np.cos(np.float64(box.yaw)), np.sin(np.float64(box.yaw))
    to_local = np.array([[cy, 0, -sy], [0, 1, 0], [sy, 0, cy]])  # R_y(yaw)^T
    fx, fy, cx, cyy = (np.float64(v) for v in (k.fx, k.fy, k.cx, k.cy))
    a = to_local @ rot @ np.array([1 / fx, 0, 0])
    b = to_local @ rot @ np.array([0, -1 / fy, 0])
    c = to_local @ rot @ np.array([-cx / fx, cyy / fy, -1])
    center = np.array([box.center.x, box.center.y, box.center.z], np.float64)
    h = np.array([box.size.x, box.size.y, box.size.z], np.float64) / 2
    o = to_local @ (t - center)
    assert np.any(np.abs(o) > h), "the camera must be outside the box"
    f32 = lambda v: [np.float32(x) for x in v]  # noqa: E731
    return f32(a), f32(b), f32(c), f32(-h - o), f32(h - o)


def numpy_cast(uv, setup):
    """Faces (int32) and distances (float32) of the rays through uv[:, 0], uv[:, 1], vectorised in
    float32 with the library's operation order (so the answers match bit for bit)."""
    a, b, c, lo, hi = setup
    u, v = np.ascontiguousarray(uv[:, 0]), np.ascontiguousarray(uv[:, 1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = np.empty((3, u.size), np.float32)  # box-frame direction, one row per axis
        for i in range(3):
            np.multiply(v, b[i], out=d[i])
            d[i] += c[i]
            d[i] += u * a[i]
        inv = np.float32(1) / d
        t1 = inv * np.array(lo, np.float32)[:, None]
        t2 = inv * np.array(hi, np.float32)[:, None]
        near = np.minimum(t1, t2)
        far = np.maximum(t1, t2, out=t2)
        positive = d > 0  # a positive direction enters through the negative face
        # entering face: x -> left 1 / right 2, y -> bottom 3 / top 4, z -> front 0 / back 5;
        # ties keep the earlier axis, as the library does
        face = np.where(positive[0], np.int32(1), np.int32(2))
        tnear = near[0]
        for axis, (neg, pos) in ((1, (3, 4)), (2, (0, 5))):
            later = near[axis] > tnear
            face = np.where(later, np.where(positive[axis], np.int32(neg), np.int32(pos)), face)
            tnear = np.maximum(tnear, near[axis])
        tfar = far.min(axis=0)
        miss = ~((tnear <= tfar) & (tnear >= 0))
        d *= d
        dist = tnear * np.sqrt(d.sum(axis=0))
        face[miss] = -1
        dist[miss] = np.inf
    return face, dist


# ----------------------------------------------------------------------------------------------
# Timing helpers
# ----------------------------------------------------------------------------------------------

def calibrate(fn):
    fn()  # warm up
    calls = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t = time.perf_counter() - t0
        if t >= MIN_REP_SECONDS / 4:
            return int(calls * MIN_REP_SECONDS * 1.1 / t) + 1
        calls *= 2


def timed(fn, calls):
    """Seconds per call over one repetition of >= MIN_REP_SECONDS."""
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t = time.perf_counter() - t0
        if t >= MIN_REP_SECONDS:
            return t / calls
        calls *= 2


def per_call_ns(fn, n=200_000):
    """ns per call of fn() in a tight loop, median of REPS repetitions."""
    samples = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e9)
    return statistics.median(samples)


def load_time_ms(path):
    code = "import ctypes, sys, time\nt = time.perf_counter()\nctypes.CDLL(sys.argv[1])\nprint(time.perf_counter() - t)"
    ms = []
    for _ in range(LOAD_RUNS):
        out = subprocess.run([sys.executable, "-c", code, path], check=True, capture_output=True, text=True)
        ms.append(float(out.stdout) * 1e3)
    return statistics.median(ms), min(ms), max(ms)


# ----------------------------------------------------------------------------------------------

def main():
    path = os.environ.get("CAPTUREKIT_LIBRARY")
    if not path:
        sys.exit("bench_python.py: set CAPTUREKIT_LIBRARY to the path of libcapturekit.so")
    lib = load(path)
    want = header_version()
    have = lib.ck_version_number()
    # CK_VERSION_COMPATIBLE: the same major and, while the major is 0, the same minor.
    if want is not None and (have // 10000 != want // 10000 or (want // 10000 == 0 and have // 100 % 100 != want // 100 % 100)):
        sys.exit(f"bench_python.py: library version {have} is not ABI compatible with the header's {want}")

    full = Intrinsics(1450.0, 1450.0, 959.5, 719.5, 1920, 1440)
    pose16 = look_at((0.55, 0.15, 0.95), (0.02, -0.5, -0.05))
    pose = Mat4((ctypes.c_float * 16)(*pose16.tolist()))
    box = Box()
    check(lib, lib.ck_box_init(ctypes.byref(box), Vec3(0.0, -0.5, 0.0), Vec3(0.6, 0.5, 0.8), 0.52), "ck_box_init")
    pose_p, box_p = ctypes.pointer(pose), ctypes.pointer(box)

    print(f"CaptureKit {lib.ck_version_string().decode()} through ctypes (Python {sys.version.split()[0]}, "
          f"numpy {np.__version__}); M rays/s = median of {REPS} runs of >= {MIN_REP_SECONDS * 1e3:.0f} ms")
    # numpy's temporaries of a 256x192 grid (196 KB each) start above glibc's initial mmap threshold,
    # so until a larger block has been freed every temporary is a fresh mmap with page faults (about
    # 7x slower). Warm the allocator the way any longer-running process has, so the peer is at its best.
    warm = np.ones((3, 1920 * 1440), np.float32)
    del warm

    print(f"\n{'grid':<10} {'method':<44} {'M rays/s':>9} {'ours/numpy':>11}  agreement")
    failed = False
    for w, h in GRIDS:
        k = Intrinsics()
        check(lib, lib.ck_intrinsics_scale(ctypes.byref(k), ctypes.byref(full), w, h), "ck_intrinsics_scale")
        k_p = ctypes.pointer(k)
        n = w * h
        cols, rows = np.meshgrid(np.arange(w, dtype=np.float32) + np.float32(0.5),
                                 np.arange(h, dtype=np.float32) + np.float32(0.5))
        uv = np.ascontiguousarray(np.stack([cols.ravel(), rows.ravel()], axis=1), dtype=np.float32)
        faces = np.empty(n, np.int32)
        dists = np.empty(n, np.float32)
        # Pointers made once: ndarray.ctypes.data costs microseconds per call.
        uv_p, faces_p, dists_p = uv.ctypes.data, faces.ctypes.data, dists.ctypes.data
        setup = prepare(pose16, k, box)
        fn = lib.ck_ray_box_pixels

        def ours():
            s = fn(faces_p, dists_p, uv_p, n, pose_p, k_p, box_p)
            if s != 0:
                check(lib, s, "ck_ray_box_pixels")

        def peer():
            return numpy_cast(uv, setup)

        calls = [calibrate(ours), calibrate(peer)]
        rates, ratios = ([], []), []
        for _ in range(REPS):
            t = [timed(ours, calls[0]), timed(peer, calls[1])]
            for i in range(2):
                rates[i].append(n / t[i] / 1e6)
            ratios.append(t[1] / t[0])

        ours()
        ref_faces, ref_dists = peer()
        same = faces == ref_faces
        face_pct = 100.0 * np.count_nonzero(same) / n
        hit = same & (ref_faces >= 0)
        rel = np.abs(dists[hit].astype(np.float64) - ref_dists[hit]) / ref_dists[hit]
        worst = float(rel.max()) if rel.size else 0.0
        misses_ok = bool(np.all(np.isinf(dists[same & (ref_faces < 0)])))
        ok = face_pct >= 99.9 and worst <= 1e-5 and misses_ok
        failed |= not ok
        agree = f"face {face_pct:.4f} %, distance max rel diff {worst:.1e}" + ("" if ok else "  << DISAGREES")
        grid = f"{w}x{h}"
        print(f"{grid:<10} {'ck_ray_box_pixels via ctypes':<44} {statistics.median(rates[0]):9.1f} "
              f"{statistics.median(ratios):11.1f}  {agree}")
        print(f"{'':<10} {'numpy float32, vectorised (the peer)':<44} {statistics.median(rates[1]):9.1f} {'1.0':>11}")
        print(f"{'':<10} ({100.0 * np.count_nonzero(ref_faces >= 0) / n:.1f} % of the rays hit the box)")

    # ctypes call overhead
    version = lib.ck_version_number
    k = Intrinsics()
    check(lib, lib.ck_intrinsics_scale(ctypes.byref(k), ctypes.byref(full), 256, 192), "ck_intrinsics_scale")
    k_p = ctypes.pointer(k)
    pixels = lib.ck_ray_box_pixels

    def empty():
        pass

    def zero_rays():
        pixels(None, None, None, 0, pose_p, k_p, box_p)

    assert pixels(None, None, None, 0, pose_p, k_p, box_p) == 0
    base = per_call_ns(empty)
    v_ns = per_call_ns(version)
    z_ns = per_call_ns(zero_rays)
    print(f"\n{'a call through ctypes':<58} {'ns/call':>9}")
    print(f"{'(a Python function call that does nothing, for scale)':<58} {base:9.0f}")
    print(f"{'ck_version_number()':<58} {v_ns:9.0f}")
    print(f"{'ck_ray_box_pixels(..., count 0, ...) (7 arguments)':<58} {z_ns:9.0f}")

    med, lo, hi = load_time_ms(os.path.abspath(path))
    print(f"\n{'loading the library':<58} {'ms':>9}")
    print(f"{'ctypes.CDLL(path) in a fresh Python process, median':<58} {med:9.3f}  "
          f"(min {lo:.3f}, max {hi:.3f}, {LOAD_RUNS} processes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
