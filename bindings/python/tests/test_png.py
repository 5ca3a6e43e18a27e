"""PNG: our files read bit-exactly by independent readers (Pillow, pypng, OpenCV), and theirs by us."""

import io
import zlib
import json

import numpy as np
import pytest

import capturekit as ck
from capturekit import png as ckpng

PIL = pytest.importorskip("PIL.Image")
pypng = pytest.importorskip("png")
try:
    import cv2
except ImportError:  # optional: OpenCV is a third independent reader where installed
    cv2 = None

SIZES = [(1, 1), (1, 7), (7, 1), (3, 5), (17, 3), (33, 2), (640, 2), (2, 480)]


def image(shape, dtype, seed, smooth=False):
    rng = np.random.default_rng(seed)
    if smooth:  # depth-like: a slanted plane in mm with noise and invalid (0) pixels
        h, w = shape[:2]
        base = 1200 + 3 * np.arange(w)[None, :] + 2 * np.arange(h)[:, None] + rng.integers(0, 6, size=(h, w))
        if len(shape) == 3:
            base = np.stack([base + 7 * c for c in range(shape[2])], axis=2)
        base[rng.random(base.shape) < 0.02] = 0
        return (base % (256 if dtype == np.uint8 else 65536)).astype(dtype)
    return rng.integers(0, np.iinfo(dtype).max + 1, size=shape, dtype=dtype)


def all_images():
    for w, h in SIZES:
        for shape, dtype in [((h, w), np.uint8), ((h, w, 3), np.uint8), ((h, w, 4), np.uint8), ((h, w), np.uint16)]:
            for smooth in (False, True):
                yield image(shape, dtype, w * 100 + h, smooth)


def read_pillow(data):
    im = PIL.open(io.BytesIO(data))
    arr = np.array(im)
    if im.mode in ("I;16", "I;16B", "I"):
        arr = arr.astype(np.uint16)
    return arr


def read_pypng(data):
    width, height, rows, meta = pypng.Reader(bytes=data).read()
    planes = meta["planes"]
    dtype = np.uint16 if meta["bitdepth"] == 16 else np.uint8
    arr = np.vstack([np.asarray(r, dtype=dtype) for r in rows]).reshape(height, width, planes)
    return arr[:, :, 0] if planes == 1 else arr


def read_cv2(data):
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if arr.ndim == 3:
        arr = cv2.cvtColor(arr, cv2.COLOR_BGR2RGB if arr.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)
    return arr


# -- our files, independent readers ---------------------------------------------------------------


@pytest.mark.parametrize("level", [0, 1, 9])
def test_pillow_and_pypng_read_our_files_bit_exactly(level):
    for arr in all_images():
        data = ck.encode_png(arr, level=level)
        for reader in (read_pillow, read_pypng):
            back = reader(data)
            assert back.dtype == arr.dtype and back.shape == arr.shape, (reader.__name__, arr.shape, arr.dtype)
            assert np.array_equal(back, arr), (reader.__name__, arr.shape, arr.dtype)
        assert np.array_equal(ck.decode_png(data), arr)


@pytest.mark.skipif(cv2 is None, reason="opencv-python-headless not installed")
def test_opencv_reads_our_files_bit_exactly():
    for arr in all_images():
        back = read_cv2(ck.encode_png(arr))
        assert back.dtype == arr.dtype and np.array_equal(back, arr), (arr.shape, arr.dtype)


def test_depth_file_round_trip_through_every_reader(tmp_path):
    depth = image((192, 256), np.uint16, 1, smooth=True)
    path = tmp_path / "000000.png"
    ck.write_png(path, depth)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(read_pillow(data), depth)
    assert np.array_equal(read_pypng(data), depth)
    if cv2 is not None:
        assert np.array_equal(cv2.imread(str(path), cv2.IMREAD_UNCHANGED), depth)
    assert np.array_equal(ck.read_png(path), depth)
    assert ck.read_png_info(path) == ck.PNGInfo(256, 192, ck.ImageFormat.GRAY16)
    assert ck.png_info(data) == (256, 192, ck.ImageFormat.GRAY16)


def test_big_images_split_into_several_idat_chunks():
    arr = image((600, 500, 4), np.uint8, 2)  # random: ~1.2 MB of zlib output
    data = ck.encode_png(arr, level=1)
    chunks, pos = [], 8
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        assert zlib.crc32(data[pos + 4:pos + 8 + n]) == int.from_bytes(data[pos + 8 + n:pos + 12 + n], "big")
        chunks.append((kind, n))
        pos += 12 + n
    assert [k for k, _ in chunks][0] == b"IHDR" and chunks[-1] == (b"IEND", 0)
    assert sum(1 for k, _ in chunks if k == b"IDAT") >= 4
    assert np.array_equal(read_pillow(data), arr) and np.array_equal(read_pypng(data), arr)


# -- their files, our reader ----------------------------------------------------------------------


def pillow_bytes(arr, **kw):
    if arr.dtype == np.uint16:
        im = PIL.frombytes("I;16", (arr.shape[1], arr.shape[0]), arr.astype("<u2").tobytes())
    else:
        im = PIL.fromarray(arr)
    buf = io.BytesIO()
    im.save(buf, format="PNG", **kw)
    return buf.getvalue()


def pypng_bytes(arr, **kw):
    planes = 1 if arr.ndim == 2 else arr.shape[2]
    w = pypng.Writer(arr.shape[1], arr.shape[0], greyscale=planes == 1, alpha=planes == 4,
                     bitdepth=16 if arr.dtype == np.uint16 else 8, **kw)
    buf = io.BytesIO()
    w.write(buf, arr.reshape(arr.shape[0], -1).tolist())
    return buf.getvalue()


def test_we_read_pillow_files():
    from PIL import PngImagePlugin

    meta = PngImagePlugin.PngInfo()
    meta.add_text("Software", "pillow")
    meta.add_text("Comment", "x" * 3000, zip=True)
    for arr in all_images():
        for kw in ({}, {"compress_level": 1}, {"optimize": True}, {"pnginfo": meta}):
            data = pillow_bytes(arr, **kw)
            assert read_pillow(data).dtype == arr.dtype
            back = ck.decode_png(data)
            assert back.dtype == arr.dtype and np.array_equal(back, arr), (arr.shape, arr.dtype, kw)


def test_we_read_pypng_files_with_many_idat_chunks():
    for arr in all_images():
        for kw in ({}, {"chunk_limit": 7}, {"compression": 9, "chunk_limit": 64}):
            data = pypng_bytes(arr, **kw)
            back = ck.decode_png(data)
            assert back.dtype == arr.dtype and np.array_equal(back, arr), (arr.shape, arr.dtype, kw)


@pytest.mark.skipif(cv2 is None, reason="opencv-python-headless not installed")
def test_we_read_opencv_files():
    for arr in all_images():
        if arr.ndim == 3:
            bgr = cv2.cvtColor(arr, cv2.COLOR_RGB2BGR if arr.shape[2] == 3 else cv2.COLOR_RGBA2BGRA)
        else:
            bgr = arr
        for params in ([], [cv2.IMWRITE_PNG_COMPRESSION, 9], [cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_FILTERED]):
            ok, enc = cv2.imencode(".png", bgr, params)
            assert ok
            assert np.array_equal(ck.decode_png(enc.tobytes()), arr), (arr.shape, arr.dtype, params)
            assert np.array_equal(ck.decode_png(enc.reshape(-1)), arr)  # a uint8 array works too


# -- files and arguments --------------------------------------------------------------------------


def test_write_read_overwrite_and_missing(tmp_path):
    path = tmp_path / "a.png"
    a = image((5, 6, 3), np.uint8, 3)
    b = image((2, 2), np.uint8, 4)
    ck.write_png(str(path), a)
    with pytest.raises(ck.StateError) as e:
        ck.write_png(path, b)
    assert "ck_png_write" in e.value.message
    assert np.array_equal(ck.read_png(path), a)
    ck.write_png(path, b, overwrite=True, level=9)
    assert np.array_equal(ck.read_png(path), b)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png"]  # no temporary files left
    with pytest.raises(ck.NotFoundError):
        ck.read_png(tmp_path / "missing.png")
    with pytest.raises(ck.NotFoundError):
        ck.read_png_info(tmp_path / "missing.png")
    with pytest.raises(ck.NotFoundError):
        ck.write_png(tmp_path / "no" / "dir.png", b)
    with pytest.raises(ValueError):
        ck.write_png("a\0b.png", b)
    with pytest.raises(TypeError):
        ck.read_png(3.5)


def test_layouts_and_byte_orders_are_converted():
    a = image((9, 12), np.uint16, 5)
    assert np.array_equal(ck.decode_png(ck.encode_png(a[:, ::2])), a[:, ::2])     # strided view
    assert np.array_equal(ck.decode_png(ck.encode_png(np.asfortranarray(a))), a)  # Fortran order
    assert np.array_equal(ck.decode_png(ck.encode_png(a.astype(">u2"))), a)     # big-endian dtype
    rgb = image((4, 5, 3), np.uint8, 6)
    assert np.array_equal(ck.decode_png(ck.encode_png(rgb[::-1])), rgb[::-1])
    assert np.array_equal(ck.decode_png(bytearray(ck.encode_png(rgb))), rgb)
    assert np.array_equal(ck.decode_png(memoryview(ck.encode_png(rgb))), rgb)


def test_bad_arrays_are_rejected_before_the_call():
    for bad in (np.zeros((4, 4), np.float32), np.zeros((4, 4), np.int16), np.zeros((4, 4), bool),
                [[1, 2], [3, 4]]):
        with pytest.raises(TypeError):
            ck.encode_png(bad)
    for bad in (np.zeros(4, np.uint8), np.zeros((4, 4, 2), np.uint8), np.zeros((4, 4, 5), np.uint8),
                np.zeros((1, 4, 4, 3), np.uint8), np.zeros((4, 4, 1), np.uint16), np.zeros((4, 4, 3), np.uint16)):
        with pytest.raises(ValueError):
            ck.encode_png(bad)
    with pytest.raises(TypeError):
        ck.decode_png(np.zeros(10, np.uint16))
    with pytest.raises(TypeError):
        ck.decode_png("not bytes")


def test_library_checks():
    with pytest.raises(ck.InvalidArgumentError) as e:
        ck.encode_png(np.zeros((0, 4), np.uint8))
    assert "ck_png_encode" in e.value.message and "height" in e.value.message
    with pytest.raises(ck.InvalidArgumentError):
        ck.encode_png(np.zeros((1, ck.PNG_MAX_DIMENSION + 1), np.uint8))
    with pytest.raises(ck.InvalidArgumentError) as e:
        ck.encode_png(np.zeros((2, 2), np.uint8), level=10)
    assert "level" in e.value.message
    with pytest.raises(ValueError):
        ck.encode_png(np.zeros((2, 2), np.uint8), level=2**40)
    big = ck.encode_png(np.zeros((1, ck.PNG_MAX_DIMENSION), np.uint8))
    assert ck.png_info(big) == (ck.PNG_MAX_DIMENSION, 1, ck.ImageFormat.GRAY8)


def test_corrupt_and_unsupported_inputs():
    data = ck.encode_png(image((6, 7, 3), np.uint8, 7, smooth=True))
    with pytest.raises(ck.CorruptError):
        ck.decode_png(b"")
    with pytest.raises(ck.CorruptError):
        ck.decode_png(b"GIF89a" + data)
    for cut in range(len(data)):
        with pytest.raises(ck.CorruptError):
            ck.decode_png(data[:cut])
    for i in range(len(data)):
        damaged = bytearray(data)
        damaged[i] ^= 0x10
        with pytest.raises(ck.CorruptError):
            ck.decode_png(bytes(damaged))
    # Valid PNGs of kinds we do not read: palette, interlaced, gray+alpha, 16-bit RGB, 1-bit.
    palette = io.BytesIO()
    PIL.fromarray(image((4, 4, 3), np.uint8, 8)).convert("P").save(palette, format="PNG")
    interlaced = pypng_bytes(image((5, 5), np.uint8, 9), interlace=True)
    gray_alpha = io.BytesIO()
    PIL.fromarray(image((4, 4, 2), np.uint8, 10), mode="LA").save(gray_alpha, format="PNG")
    rgb16 = io.BytesIO()
    pypng.Writer(3, 2, greyscale=False, bitdepth=16).write(rgb16, [[1, 2, 3] * 3, [4, 5, 6] * 3])
    bilevel = io.BytesIO()
    pypng.Writer(8, 2, greyscale=True, bitdepth=1).write(bilevel, [[0, 1] * 4, [1, 0] * 4])
    for data in [palette.getvalue(), interlaced, gray_alpha.getvalue(), rgb16.getvalue(), bilevel.getvalue()]:
        with pytest.raises(ck.UnsupportedError):
            ck.decode_png(data)
        with pytest.raises(ck.UnsupportedError):
            ck.png_info(data)


def test_read_errors_are_typed(tmp_path):
    path = tmp_path / "bad.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 10)
    with pytest.raises(ck.CorruptError):
        ck.read_png(path)
    with pytest.raises(ck.CorruptError):
        ck.read_png_info(path)


# -- JPEG (ck_jpeg_encode), read back by Pillow ------------------------------------------------

def _smooth_rgb(h=96, w=128, seed=3):
    """A camera-like image: smooth gradients and a few soft shapes plus mild noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 90 * np.sin(x / 17.0) * np.cos(y / 23.0)
    g = 100 + 0.8 * x - 0.3 * y
    b = 60 + 120 * np.exp(-((x - w / 2) ** 2 + (y - h / 3) ** 2) / (2 * 20.0 ** 2))
    img = np.stack([r, g, b], axis=-1) + rng.normal(0, 2.0, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def _psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse)


def test_jpeg_is_read_by_pillow_at_the_expected_quality():
    from PIL import Image, JpegImagePlugin
    img = _smooth_rgb()
    data = ck.encode_jpeg(img)  # quality 0 = 90
    im = Image.open(io.BytesIO(data))
    assert im.format == "JPEG" and im.mode == "RGB" and im.size == (128, 96)
    assert JpegImagePlugin.get_sampling(im) == 2  # 4:2:0
    ours = np.asarray(im.convert("RGB"))
    assert _psnr(ours, img) > 33
    # Pillow's own encoder at the same settings: the same quality within a fraction of a dB.
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", quality=90, subsampling=2)
    pillows = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
    assert abs(_psnr(ours, img) - _psnr(pillows, img)) < 0.5
    assert data == ck.encode_jpeg(img, quality=90)
    # Quality orders size and error.
    lo, hi = ck.encode_jpeg(img, quality=30), ck.encode_jpeg(img, quality=98)
    assert len(lo) < len(data) < len(hi)
    dec = lambda d: np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))
    assert _psnr(dec(lo), img) < _psnr(ours, img) < _psnr(dec(hi), img)
    # Strided views, RGBA (alpha dropped) and gray.
    assert ck.encode_jpeg(np.ascontiguousarray(img[:, ::-1])[:, ::-1]) == data
    rgba = np.dstack([img, np.full(img.shape[:2], 7, np.uint8)])
    assert ck.encode_jpeg(rgba) == data
    gray = img[:, :, 1].copy()
    g = Image.open(io.BytesIO(ck.encode_jpeg(gray)))
    assert g.mode == "L" and _psnr(np.asarray(g), gray) > 33
    with pytest.raises(ck.UnsupportedError):
        ck.encode_jpeg(np.zeros((4, 4), np.uint16))
    with pytest.raises(ck.InvalidArgumentError, match="quality"):
        ck.encode_jpeg(img, quality=101)


def test_jpeg_dataset_images_open_in_pillow(tmp_path):
    from PIL import Image
    k = ck.Intrinsics(fx=100.0, fy=100.0, cx=64.0, cy=48.0, width=128, height=96)
    opts = ck.DatasetOptions(image_encoding=ck.ImageEncoding.JPEG, jpeg_quality=85)
    with ck.Dataset(tmp_path / "d", opts) as ds:
        for i in range(3):
            p = np.eye(4)
            p[0, 3] = 0.1 * i
            ds.add_frame(p, k, rgb=_smooth_rgb(seed=i), timestamp=float(i))
        ds.finalize()
    tf = json.loads((tmp_path / "d" / "transforms.json").read_text())
    assert [f["file_path"] for f in tf["frames"]] == [f"images/{i:06d}.jpg" for i in range(3)]
    for i, f in enumerate(tf["frames"]):
        im = Image.open(tmp_path / "d" / f["file_path"])
        assert im.format == "JPEG"
        assert _psnr(np.asarray(im.convert("RGB")), _smooth_rgb(seed=i)) > 30
    with pytest.raises(ck.InvalidArgumentError, match="image_encoding"):
        ck.Dataset(tmp_path / "bad", ck.DatasetOptions(image_encoding=2))
    with pytest.raises(ck.InvalidArgumentError, match="jpeg_quality"):
        ck.Dataset(tmp_path / "bad", ck.DatasetOptions(jpeg_quality=101))
