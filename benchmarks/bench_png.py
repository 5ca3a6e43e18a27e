"""PNG: CaptureKit's writer/reader vs OpenCV and Pillow (libpng / zlib), on the same synthetic frames.

Frames come from the library's synthetic scene (ck_scene): depth converted to uint16 millimetres
(ck_depth_convert) and RGB renders. Every method runs in this process on the same frames; the time
is the minimum of 7 runs of >= 50 ms (robust on a loaded machine), one core. Ours is called through
ctypes directly (ck_png_encode / ck_png_decode). Optional peers are skipped with a note when their
package is missing. Every file is checked to decode to the original pixels. Run by `make bench`.
"""

import ctypes
import io
import math
import os
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


class Image(ctypes.Structure):
    """ck_image: data, width, height, stride (0 = packed), format (ck_image_format), reserved."""
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
render_rgb = _sig("ck_scene_render_rgb", i32, c_p, size, ctypes.POINTER(size), c_p, ctypes.POINTER(Mat4),
                  ctypes.POINTER(Intrinsics))
convert = _sig("ck_depth_convert", i32, c_p, i32, c_p, i32, size)
png_bound = _sig("ck_png_encode_bound", size, u32, u32, i32)
png_encode = _sig("ck_png_encode", i32, c_p, size, ctypes.POINTER(size), ctypes.POINTER(Image), i32)
png_decode = _sig("ck_png_decode", i32, c_p, size, ctypes.POINTER(size), c_p, size)
F32, MM = 1, 3
GRAY16, RGB8 = 4, 2


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
    """(depth in mm uint16 frames, RGB uint8 frames) from the synthetic scene."""
    scene = c_p()
    assert scene_create(ctypes.byref(scene), 7) == 0
    k = Intrinsics(0.82 * w, 0.82 * w, 0.5 * w, 0.5 * h, w, h)
    depth, rgb = [], []
    for i in range(count):
        a = 0.35 * i
        eye = np.array([1.6 * math.sin(a), 1.5 if i % 2 else 0.9, 1.6 * math.cos(a)])
        pose = look_at(eye, [0.2 * math.cos(a), 0.3, -0.2 * math.sin(a)])
        d = np.zeros((h, w), np.float32)
        mm = np.zeros((h, w), np.uint16)
        c = np.zeros((h, w, 3), np.uint8)
        assert render_depth(d.ctypes.data, None, d.size, None, scene, ctypes.byref(pose), ctypes.byref(k), i) == 0
        assert convert(mm.ctypes.data, MM, d.ctypes.data, F32, d.size) == 0
        assert render_rgb(c.ctypes.data, c.size, None, scene, ctypes.byref(pose), ctypes.byref(k)) == 0
        depth.append(mm)
        rgb.append(c)
    return depth, rgb


def measure(fn, items):
    """Minimum seconds per item over 7 runs of >= 50 ms."""
    best = math.inf
    for _ in range(7):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(items[n % len(items)])
            n += 1
            t = time.perf_counter() - t0
            if t >= 0.05:
                break
        best = min(best, t / n)
    return best


def ours(images, fmt, level):
    h, w = images[0].shape[:2]
    cap = png_bound(w, h, fmt)
    out = np.zeros(cap, np.uint8)
    written = size()

    def enc(a):
        image = Image(a.ctypes.data, w, h, a.strides[0], fmt, 0)
        assert png_encode(out.ctypes.data, cap, ctypes.byref(written), ctypes.byref(image), level) == 0
        return out[: written.value].tobytes()

    files = [enc(a) for a in images]
    back = np.empty_like(images[0])

    def dec(data):
        assert png_decode(back.ctypes.data, back.nbytes, None, data, len(data)) == 0
        return back

    for a, data in zip(images, files):
        assert np.array_equal(dec(data), a)
    return files, measure(enc, images), measure(dec, files)


def opencv(images, level=None):
    import cv2
    params = [] if level is None else [cv2.IMWRITE_PNG_COMPRESSION, level]
    bgr = [cv2.cvtColor(a, cv2.COLOR_RGB2BGR) if a.ndim == 3 else a for a in images]
    files = [cv2.imencode(".png", a, params)[1] for a in bgr]
    for a, f in zip(bgr, files):
        assert np.array_equal(cv2.imdecode(f, cv2.IMREAD_UNCHANGED), a)
    return [f.tobytes() for f in files], measure(lambda a: cv2.imencode(".png", a, params), bgr), \
        measure(lambda f: cv2.imdecode(f, cv2.IMREAD_UNCHANGED), files)


def pillow(images):
    from PIL import Image

    def enc(a):
        im = Image.frombytes("I;16", (a.shape[1], a.shape[0]), a.astype("<u2").tobytes()) if a.dtype == np.uint16 else Image.fromarray(a)
        buf = io.BytesIO()
        im.save(buf, format="PNG")
        return buf.getvalue()

    files = [enc(a) for a in images]
    return files, measure(enc, images), measure(lambda f: np.asarray(Image.open(io.BytesIO(f))), files)


def bench(name, images, fmt):
    raw = images[0].nbytes
    h, w = images[0].shape[:2]
    rows = [(f"CaptureKit level {lv}" + (" (default: Z_RLE)" if lv == 0 else " (Z_FILTERED)"), lambda lv=lv: ours(images, fmt, lv))
            for lv in (0, 1, 6, 9)]
    rows += [("OpenCV imencode, defaults", lambda: opencv(images)),
             ("OpenCV imencode, level 6", lambda: opencv(images, 6)),
             ("Pillow save, defaults (level 6)", lambda: pillow(images))]
    print(f"\n{name} {w}x{h}, {len(images)} frames, {raw} bytes raw")
    print(f"  {'method':<36} {'ratio':>6} {'bytes/fr':>9} {'enc fps':>8} {'enc MB/s':>9} {'dec fps':>8}")
    for label, run in rows:
        try:
            files, e, d = run()
        except ImportError as exc:
            print(f"  {label:<36} skipped ({exc.name} not installed)")
            continue
        total = sum(map(len, files))
        print(f"  {label:<36} {raw * len(files) / total:6.2f} {total // len(files):9d} {1 / e:8.0f} {raw / e / 1e6:9.1f} {1 / d:8.0f}")


if __name__ == "__main__":
    print(f"PNG (zlib {zlib.ZLIB_RUNTIME_VERSION}), one core, minimum of 7 runs >= 50 ms")
    for w, h, count in ((256, 192, 16), (640, 480, 6)):
        depth, rgb = frames(w, h, count)
        bench("depth, uint16 mm (GRAY16)", depth, GRAY16)
        bench("colour render (RGB8)", rgb, RGB8)
