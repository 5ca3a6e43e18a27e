"""API 0.2: images and depth maps go to the library as ck_image / ck_depth_map (data, width,
height, stride, format). Arrays with contiguous rows -- C order, crops, row-padded buffers -- are
passed without a copy; depth maps may be float32 / float16 metres or uint16 millimetres wherever a
depth map is taken; the session and the scheduler no longer need depth intrinsics; _close returns
a status."""

import glob
import os

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi
from capturekit import Dataset, DatasetOptions, Session
from capturekit.depth import DepthCodec, DepthKind, DepthReader, DepthWriter

K = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)


def rgb(seed=0):
    return (np.arange(12 * 16 * 3, dtype=np.uint32).reshape(12, 16, 3) * 7 + seed).astype(np.uint8)


def padded(a, pad=5):
    """A view of `a` whose rows are `pad` elements longer than a row apart (same values)."""
    big = np.zeros((a.shape[0] + 2, a.shape[1] + pad) + a.shape[2:], a.dtype)
    big[1:-1, 2:2 + a.shape[1]] = a
    view = big[1:-1, 2:2 + a.shape[1]]
    assert not view.flags.c_contiguous and np.array_equal(view, a)
    return view


# -- the layout helper -----------------------------------------------------------------------

def test_packed_rows_copies_only_what_a_stride_cannot_describe():
    a = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    assert _ffi.packed_rows(a) is a
    crop = padded(a)
    assert _ffi.packed_rows(crop) is crop and _ffi.row_stride(crop) == crop.strides[0] == 13 * 4
    assert _ffi.row_stride(a) == 0  # tightly packed
    img = padded(rgb())
    assert _ffi.packed_rows(img) is img and _ffi.row_stride(img) == img.strides[0]
    for bad in (a[::-1], a[:, ::2], np.asfortranarray(a), a.T, rgb()[:, :, ::-1], rgb()[:, ::2]):
        out = _ffi.packed_rows(bad)
        assert out is not bad and out.flags.c_contiguous and np.array_equal(out, bad)
    row = a[2:3]
    assert _ffi.packed_rows(row) is row and _ffi.row_stride(row) == 0
    m = _ffi.depth_map(crop, _ffi.CK_FORMAT_DEPTH_F32)
    assert (m.data, m.width, m.height, m.stride, m.format, m.reserved) == (crop.ctypes.data, 8, 6, 52, 1, 0)
    i = _ffi.image(img, _ffi.CK_IMAGE_FORMAT_RGB8)
    assert (i.width, i.height, i.stride, i.format) == (16, 12, img.strides[0], 2)


# -- PNG -------------------------------------------------------------------------------------

def test_png_of_a_crop_equals_the_png_of_its_copy(tmp_path):
    for a in (rgb(), rgb()[:, :, 0], np.dstack([rgb(), rgb(1)[:, :, :1]]),
              (np.arange(12 * 16, dtype=np.uint16).reshape(12, 16) * 300)):
        view = padded(a, 3)
        assert ck.encode_png(view) == ck.encode_png(np.ascontiguousarray(a))
        assert np.array_equal(ck.decode_png(ck.encode_png(view)), a)
        ck.write_png(tmp_path / "v.png", view, overwrite=True)
        assert np.array_equal(ck.read_png(tmp_path / "v.png"), a)
    assert ck.ImageFormat.NONE == 0 and ck.ImageFormat.GRAY16 == 4
    assert ck.png_info(ck.encode_png(rgb())).format is ck.ImageFormat.RGB8


def test_png_exists_error(tmp_path):
    ck.write_png(tmp_path / "a.png", rgb())
    with pytest.raises(ck.ExistsError):
        ck.write_png(tmp_path / "a.png", rgb())


# -- depth codec, .ckdepth, streams ----------------------------------------------------------

def test_codec_and_writers_take_crops(tmp_path):
    f32 = np.linspace(0.3, 4.0, 6 * 8, dtype=np.float32).reshape(6, 8)
    view = padded(f32)
    with DepthCodec() as codec:
        assert codec.encode(view) == codec.encode(f32)
        mm = np.round(f32 * 1000).astype(np.uint16)
        assert codec.encode(padded(mm)) == codec.encode(mm)
        assert np.array_equal(codec.decode(codec.encode(padded(mm))), mm)
    with DepthWriter(tmp_path / "d.ckdepth", 8, 6, DepthKind.FLOAT16) as w:
        w.append(view, 0.0)
        w.append(f32, 1.0)
    with DepthReader(tmp_path / "d.ckdepth") as r:
        assert np.array_equal(r[0].data.view(np.uint16), r[1].data.view(np.uint16))
    with ck.ZStreamWriter(tmp_path / "z.zlib", 8, 6, "depth") as w:
        w.append(view)
        w.append(f32.astype(np.float16))
    with ck.ZStreamWriter(tmp_path / "c.zlib", 8, 6, "confidence") as w:
        w.append(padded(np.full((6, 8), 2, np.uint8)))
    with ck.ZStreamReader(tmp_path / "z.zlib", 8, 6, "depth") as r:
        frames = list(r)
        assert len(frames) == 2 and np.array_equal(frames[0].view(np.uint16), frames[1].view(np.uint16))
    with ck.ZStreamReader(tmp_path / "c.zlib", 8, 6, "confidence") as r:
        assert np.all(r.read(0) == 2)


def test_close_returns_a_status_and_accepts_null():
    assert _ffi.lib.ck_depth_reader_close(None) == 0
    assert _ffi.lib.ck_zstream_reader_close(None) == 0
    assert _ffi.lib.ck_session_close(None) == 0


# -- dataset and session ---------------------------------------------------------------------

MM = (400 + np.arange(12 * 16, dtype=np.uint16).reshape(12, 16) * 7)


def test_dataset_depth_in_every_format_writes_the_same_millimetres(tmp_path):
    d = tmp_path / "ds"
    variants = [MM, padded(MM), (MM / np.float32(1000)).astype(np.float32), MM / 1000.0]  # mm, mm crop, m, float64 m
    with Dataset(d) as ds:
        for i, dep in enumerate(variants):
            assert ds.add_frame(np.eye(4), K, rgb=padded(rgb(i)), depth=dep, timestamp=i) == i
        half = np.full((12, 16), 1.5, np.float16)
        ds.add_frame(np.eye(4), K, rgb=rgb(), depth=half, timestamp=9)
        with pytest.raises(TypeError):
            ds.add_frame(np.eye(4), K, rgb=rgb(), depth=MM.astype(np.int32))
        ds.finalize()
    for i in range(len(variants)):
        assert np.array_equal(ck.read_png(d / f"images/{i:06d}.png"), rgb(i))
        assert np.array_equal(ck.read_png(d / f"depth/{i:06d}.png"), MM), i
    assert np.all(ck.read_png(d / f"depth/{len(variants):06d}.png") == 1500)


def test_dataset_streams_take_float16_depth_and_crops(tmp_path):
    d = tmp_path / "ds"
    f16 = np.linspace(0.5, 2.0, 6 * 8).astype(np.float16).reshape(6, 8)
    conf = np.arange(48, dtype=np.uint8).reshape(6, 8) % 3
    kd = ck.Intrinsics(fx=10.0, fy=10.0, cx=4.0, cy=3.0, width=8, height=6)
    with Dataset(d, DatasetOptions(start_time_unix=1795000000.0, device_id="strides")) as ds:
        ds.stream_frame(0.0, np.eye(4), kd, depth=f16, confidence=conf)
        ds.stream_frame(0.1, np.eye(4), kd, depth=padded(f16), confidence=padded(conf))
        ds.stream_frame(0.2, np.eye(4), kd, depth=f16.astype(np.float32))
        ds.stream_frame(0.3, np.eye(4), kd, confidence=conf)
        ds.finalize()
    (depth_path,) = glob.glob(os.path.join(d, "*.depth.zlib"))
    (conf_path,) = glob.glob(os.path.join(d, "*.confidence.zlib"))
    with ck.ZStreamReader(depth_path, 8, 6, "depth") as r:
        frames = list(r)
    assert len(frames) >= 3
    for f in frames[:3]:
        assert np.array_equal(f.view(np.uint16), f16.view(np.uint16))
    with ck.ZStreamReader(conf_path, 8, 6, "confidence") as r:
        confs = list(r)
    assert all(np.array_equal(c, conf) for c in confs[:2])


def look_at(eye, target=(0.0, 0.25, 0.0)):
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    f = target - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, (0, 1, 0))
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    p = np.eye(4)
    p[:3, 0], p[:3, 1], p[:3, 2], p[:3, 3] = r, u, -f, eye
    return p


def test_session_without_depth_intrinsics_and_with_any_depth_format(tmp_path):
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    depth_m = np.full((6, 8), 1.3, np.float32)
    forms = [depth_m, depth_m.astype(np.float16), np.full((6, 8), 1300, np.uint16), padded(depth_m)]
    with Session(tmp_path / "s", box) as s:
        captured = 0
        for i in range(240):
            a = 0.01 * i
            r = s.process(i / 30.0, look_at((1.3 * np.sin(a), 0.8, 1.3 * np.cos(a))), K, rgb=padded(rgb(i % 3)),
                          depth=forms[i % len(forms)], confidence=np.ones((6, 8), np.uint8))
            captured += r.captured
            if r.captured:
                assert r.frame_id is not None and r.image_path == ""
        assert captured >= 2
        with pytest.raises(ValueError):  # confidence of another size than the depth map
            s.process(100.0, np.eye(4), K, depth=depth_m, confidence=np.ones((5, 8), np.uint8))
        with pytest.raises(ValueError):  # depth_intrinsics that do not match the map
            s.process(100.0, np.eye(4), K, depth=depth_m, depth_intrinsics=K)
        s.finish()
    assert s.closed
