"""JPEG at 1920x1440 (a phone's capture size): CaptureKit's encoder (libjpeg-turbo's TurboJPEG, as a
JPEG dataset writes its images) vs Pillow and OpenCV, all at quality 90 with 4:2:0 chroma, on the
same frames, in one run. Also CaptureKit's PNG on the same frames (the lossless default).

Frames: the synthetic scene's RGB render at 1920x1440 plus camera-like noise (Gaussian, sigma 2.5
levels, and 1-pixel grain), since a noise-free render compresses unrealistically well. Time: the
minimum of 7 runs of >= 0.3 s each (robust on a shared machine), one core, encoding to memory.
Every JPEG is decoded by Pillow and its PSNR against the source reported (equal settings give
equal quality). Run by `make bench`; ratios are against Pillow measured in the same run.
"""

import io
import math
import time

import numpy as np

import capturekit as ck


def frames(n=3, w=1920, h=1440):
    rng = np.random.default_rng(11)
    k = ck.Intrinsics(fx=1450.0, fy=1450.0, cx=w / 2, cy=h / 2, width=w, height=h)
    out = []
    with ck.Scene(7) as scene:
        for i in range(n):
            a = 0.6 * i
            eye = np.array([1.2 * math.sin(a), 0.7, 1.2 * math.cos(a)])
            f = -eye / np.linalg.norm(eye)
            r = np.cross(f, [0, 1, 0]); r /= np.linalg.norm(r)
            u = np.cross(r, f)
            pose = np.eye(4); pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = r, u, -f, eye
            img = scene.render_rgb(pose, k).astype(np.float32)
            img += rng.normal(0, 2.5, img.shape) + rng.normal(0, 1.5, img.shape[:2])[..., None]
            out.append(np.clip(img, 0, 255).astype(np.uint8))
    return out


def best(fn, runs=7, min_time=0.3):
    times = []
    for _ in range(runs):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            t = time.perf_counter() - t0
            if t >= min_time:
                break
        times.append(t / n)
    return min(times)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * math.log10(255.0 ** 2 / mse)


def main():
    from PIL import Image
    imgs = frames()
    methods = {}

    def pillow(img):
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, "JPEG", quality=90, subsampling=2)
        return buf.getvalue()
    methods["Pillow " + Image.__version__ if hasattr(Image, "__version__") else "Pillow"] = pillow
    methods["CaptureKit ck_jpeg_encode"] = lambda img: ck.encode_jpeg(img, 90)
    try:
        import cv2

        def opencv(img):
            ok, buf = cv2.imencode(".jpg", img[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90,
                                                            cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                                                            cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420])
            assert ok
            return buf.tobytes()
        methods["OpenCV " + cv2.__version__ + " (RGB->BGR view)"] = opencv
    except ImportError:
        print("OpenCV not installed: skipped (pip install opencv-python-headless)")
    methods["CaptureKit ck_png_encode (lossless, default level)"] = lambda img: ck.encode_png(img)

    print(f"JPEG q90 4:2:0 vs PNG at 1920x1440 RGB, {len(imgs)} noisy scene renders, best of 7")
    print(f"{'method':<52} {'ms/frame':>9} {'MB/frame':>9} {'PSNR dB':>8} {'speed vs Pillow':>16}")
    base = None
    for name, fn in methods.items():
        t = sum(best(lambda: fn(img)) for img in imgs) / len(imgs)
        sizes, q = [], []
        for img in imgs:
            data = fn(img)
            sizes.append(len(data))
            dec = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
            q.append(psnr(dec, img) if "png" not in name else float("inf"))
        base = base or t
        print(f"{name:<52} {t * 1e3:9.2f} {np.mean(sizes) / 1e6:9.2f} {np.mean(q):8.2f} {base / t:15.2f}x")


if __name__ == "__main__":
    main()
