"""Depth compression as a Python rig does it today vs CaptureKit, on the same synthetic frames.

Peers (all in this process, same frames): MultiScan's way (float16 + zlib level 5, one raw
DEFLATE stream, numpy), the same at level 1, OpenCV 16-bit PNG in millimetres (cv2.imencode), and
a numpy memcpy. Ours: the native codec (ck_depth_encode/decode) called through ctypes. Frames come
from the library's synthetic scene (ck_scene), so the C benchmark sees the very same data.
Run by `make bench` with CAPTUREKIT_LIBRARY set. Optional peers are skipped with a note when their
package is missing (`pip install opencv-python-headless`).
"""

import ctypes
import math
import os
import statistics
import sys
import time
import zlib

import numpy as np

lib = ctypes.CDLL(os.environ.get("CAPTUREKIT_LIBRARY", "libcapturekit.so"))
c_p = ctypes.c_void_p


class Mat4(ctypes.Structure):
    _fields_ = [("m", ctypes.c_float * 16)]


class Intrinsics(ctypes.Structure):
    _fields_ = [("fx", ctypes.c_float), ("fy", ctypes.c_float), ("cx", ctypes.c_float), ("cy", ctypes.c_float),
                ("width", ctypes.c_uint32), ("height", ctypes.c_uint32)]


class DepthMap(ctypes.Structure):
    """ck_depth_map: data, width, height, stride (0 = packed), format (ck_format), reserved."""
    _fields_ = [("data", ctypes.c_void_p), ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("stride", ctypes.c_size_t), ("format", ctypes.c_int32), ("reserved", ctypes.c_uint32)]


def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


i32, u32, u64, size = ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
scene_create = _sig("ck_scene_create", i32, ctypes.POINTER(c_p), u64)
render_depth = _sig("ck_scene_render_depth", i32, c_p, c_p, size, ctypes.POINTER(size), c_p, ctypes.POINTER(Mat4),
                    ctypes.POINTER(Intrinsics), u64)
convert = _sig("ck_depth_convert", i32, c_p, i32, c_p, i32, size)
codec_create = _sig("ck_depth_codec_create", i32, ctypes.POINTER(c_p), i32)
encode = _sig("ck_depth_encode", i32, c_p, size, ctypes.POINTER(size), c_p, ctypes.POINTER(DepthMap))
decode = _sig("ck_depth_decode", i32, c_p, size, ctypes.POINTER(size), c_p, c_p, size, i32)
bound = _sig("ck_depth_encode_bound", size, u32, u32, i32)
F32, F16, MM = 1, 2, 3


def look_at(eye, target):
    f = np.asarray(target, float) - eye
    f /= np.linalg.norm(f)
    r = np.array([-f[2], 0.0, f[0]])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    m = Mat4()
    cols = [r, u, -f, eye]
    for c in range(4):
        for k in range(3):
            m.m[c * 4 + k] = cols[c][k]
    m.m[15] = 1.0
    return m


def frames(w, h, count):
    scene = c_p()
    assert scene_create(ctypes.byref(scene), 7) == 0
    k = Intrinsics(0.82 * w, 0.82 * w, 0.5 * w, 0.5 * h, w, h)
    out = np.zeros((count, h, w), np.float32)
    for i in range(count):
        a = 0.35 * i
        eye = np.array([1.6 * math.sin(a), 1.5 if i % 2 else 0.9, 1.6 * math.cos(a)])
        pose = look_at(eye, [0.2 * math.cos(a), 0.3, -0.2 * math.sin(a)])
        assert render_depth(out[i].ctypes.data, None, w * h, None, scene, ctypes.byref(pose), ctypes.byref(k), i) == 0
    return out


def measure(fn, items):
    """Median seconds per item over 7 runs of >= 50 ms."""
    runs = []
    for _ in range(7):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(items[n % len(items)])
            n += 1
            t = time.perf_counter() - t0
            if t >= 0.05:
                break
        runs.append(t / n)
    return statistics.median(runs)


def bench(w, h, count):
    depth = frames(w, h, count)
    f16 = depth.astype(np.float16)          # numpy's IEEE conversion; our codec gets the same bits
    raw = f16[0].nbytes
    rows = []

    rows.append(("numpy copy of the float16 frame (reference)", 1.0, raw, 1 / measure(np.copy, list(f16)), None))

    for level in (5, 1):                     # MultiScan: one raw DEFLATE stream, a full flush per frame
        enc = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        chunks = [enc.compress(f.tobytes()) + enc.flush(zlib.Z_FULL_FLUSH) for f in f16]
        ratio = raw * count / sum(map(len, chunks))
        enc2 = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        e = measure(lambda f: enc2.compress(f.tobytes()) + enc2.flush(zlib.Z_FULL_FLUSH), list(f16))

        def dec(c):
            d = zlib.decompressobj(-zlib.MAX_WBITS)
            return np.frombuffer(d.decompress(c), np.float16)
        d = measure(dec, chunks)
        rows.append((f"zlib-{level} raw stream + numpy float16 (MultiScan)", ratio, sum(map(len, chunks)) // count, 1 / e, 1 / d))

    try:
        import cv2
        mm = [np.where((d > 0) & (d < 65.535), np.round(d * 1000), 0).astype(np.uint16) for d in depth]
        pngs = [cv2.imencode(".png", m)[1] for m in mm]
        e = measure(lambda m: cv2.imencode(".png", m), mm)
        d = measure(lambda p: cv2.imdecode(p, cv2.IMREAD_UNCHANGED), pngs)
        rows.append(("OpenCV 16-bit PNG, millimetres (default)", raw * count / sum(p.nbytes for p in pngs),
                     sum(p.nbytes for p in pngs) // count, 1 / e, 1 / d))
    except ImportError:
        print("  (OpenCV not installed: pip install opencv-python-headless)")

    codec = c_p()
    assert codec_create(ctypes.byref(codec), 0) == 0
    cap = bound(w, h, F16)
    out = np.zeros(cap, np.uint8)
    written = size()
    blobs = []
    bits = f16.view(np.uint16)
    # The ck_depth_map of every frame, made once (like the pointers of the other calls).
    maps16 = [ctypes.byref(DepthMap(f.ctypes.data, w, h, 0, F16, 0)) for f in bits]
    maps32 = [ctypes.byref(DepthMap(f.ctypes.data, w, h, 0, F32, 0)) for f in depth]
    for m in maps16:
        assert encode(out.ctypes.data, cap, ctypes.byref(written), codec, m) == 0
        blobs.append(out[: written.value].copy())
    back = np.zeros((h, w), np.uint16)
    for f, b in zip(bits, blobs):
        assert decode(back.ctypes.data, back.nbytes, None, codec, b.ctypes.data, b.size, F16) == 0
        assert np.array_equal(back, f)
    e = measure(lambda m: encode(out.ctypes.data, cap, ctypes.byref(written), codec, m), maps16)
    d = measure(lambda b: decode(back.ctypes.data, back.nbytes, None, codec, b.ctypes.data, b.size, F16), blobs)
    total = sum(b.size for b in blobs)
    rows.append(("CaptureKit native codec via ctypes (lossless)", raw * count / total, total // count, 1 / e, 1 / d))
    e32 = measure(lambda m: encode(out.ctypes.data, cap, ctypes.byref(written), codec, m), maps32)
    back32 = np.zeros((h, w), np.float32)
    d32 = measure(lambda b: decode(back32.ctypes.data, back32.nbytes, None, codec, b.ctypes.data, b.size, F32), blobs)
    rows.append(("CaptureKit native codec, float32 metres in/out", raw * count / total, total // count, 1 / e32, 1 / d32))

    print(f"\n{w}x{h}, {count} frames, {100 * np.mean(depth == 0):.1f}% invalid pixels")
    print(f"  {'method':<48} {'ratio':>6} {'bytes/fr':>9} {'encode fps':>11} {'decode fps':>11}")
    ours = rows[-2]
    for name, ratio, per, efps, dfps in rows:
        dtext = f"{dfps:11.0f}" if dfps else f"{'-':>11}"
        print(f"  {name:<48} {ratio:6.2f} {per:9d} {efps:11.0f} {dtext}")
    for name, ratio, per, efps, dfps in rows[1:-2]:
        print(f"  ours vs {name}: {ours[1] / ratio:.2f}x smaller, encode {ours[3] / efps:.1f}x, decode {ours[4] / dfps:.1f}x")


if __name__ == "__main__":
    print(f"Depth compression in Python (numpy {np.__version__}, zlib {zlib.ZLIB_RUNTIME_VERSION}), one core, median of 7 runs >= 50 ms")
    bench(256, 192, 40)
    bench(640, 480, 12)
