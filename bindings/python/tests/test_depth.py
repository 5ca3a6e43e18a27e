"""Depth: conversions vs NumPy, the native codec, .ckdepth files, errors, handles, golden files,
and a writer killed mid-recording that loses no complete frame."""

import ctypes
import ctypes.util
import gc
import math
import os
import pathlib
import random
import resource
import signal
import struct
import sys
import time
import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi, depth
from capturekit.depth import DepthCodec, DepthKind, DepthReader, DepthWriter

GOLDEN = pathlib.Path(__file__).resolve().parents[3] / "Tests" / "golden"
NAN, INF = math.nan, math.inf


def raises(cls, code, function):
    """pytest.raises(cls), then checks the code, the CK_E_* name and that the message names `function`."""

    class Checker:
        def __enter__(self):
            self.ctx = pytest.raises(cls)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            suppressed = self.ctx.__exit__(*exc)
            err = self.info.value
            assert err.code == code and err.name == ck.errors.STATUS_NAMES[code]
            assert err.message.startswith(function + ":"), err.message
            return suppressed

    return Checker()


def bits(a):
    """The raw bits of a float array (so that NaN, -0 and +0 compare exactly)."""
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


# -- reference conversions (NumPy's own arithmetic + the documented invalid rules) ---------------


def ref_f32_to_f16(x):
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16)  # IEEE round to nearest even
    h[~(x > 0) | ~np.isfinite(h)] = 0  # NaN, <= 0, +inf and overflow to inf are invalid
    return h


def ref_f16_to_f32(h):
    h = np.asarray(h, np.float16)
    f = h.astype(np.float32)
    f[~(f > 0) | ~np.isfinite(f)] = 0
    return f


def ref_to_mm(x):
    with np.errstate(invalid="ignore"):
        x = np.asarray(x, np.float32).astype(np.float64)
        mm = np.floor(x * 1000 + 0.5)  # half away from zero for positive values; x * 1000 is exact
        ok = (x > 0) & (mm <= 65535)
    return np.where(ok, mm, 0).astype(np.uint16)


def ref_mm_to_f32(mm):
    return (np.asarray(mm, np.uint16).astype(np.float64) / 1000).astype(np.float32)


def ref_mm_to_f16(mm):
    # float64 -> float16 rounds once more, but 53 >= 2 * 11 + 2 makes that exact (innocuous double rounding)
    return (np.asarray(mm, np.uint16).astype(np.float64) / 1000).astype(np.float16)


SPECIAL_F32 = np.array(
    [0.0, -0.0, INF, -INF, NAN, -NAN, -1.0, 1e-45, 1.17549435e-38, 2.0**-25, 2.0**-24, 1.5 * 2.0**-24, 2.0**-14,
     1.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65504.0, 65519.99, 65520.0, 65536.0, 3.4e38, 0.0005, 0.0015, 65.535,
     65.5355, 65.536, 0.001, 1.2345],
    dtype=np.float32,
)


def lidar_like(rng, shape=(48, 64)):
    """A tilted plane in metres with noise, holes and far outliers."""
    h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    d = (1.2 + 0.004 * x + 0.007 * y + rng.normal(0, 0.002, shape)).astype(np.float32)
    d[rng.random(shape) < 0.05] = 0
    outliers = rng.random(shape) < 0.01
    d[outliers] = rng.uniform(0, 60, size=int(outliers.sum()))
    return d


# == conversions ===============================================================================


def test_f32_to_f16_matches_numpy_bit_exactly(rng):
    x = np.concatenate([
        SPECIAL_F32,
        rng.integers(0, 2**32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32),  # every kind of value
        rng.uniform(0, 70, size=1 << 18).astype(np.float32),
        np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float32),  # every float16 value
    ])
    # every midpoint between neighbouring float16 values (ties) and the floats either side of it
    v = np.arange(0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = ((v[:-1] + v[1:]) / 2).astype(np.float32)
    x = np.concatenate([x, mid, np.nextafter(mid, np.float32(0)), np.nextafter(mid, np.float32(INF))])
    got = depth.convert(x, np.float16)
    assert got.dtype == np.float16 and got.shape == x.shape
    want = ref_f32_to_f16(x)
    bad = np.flatnonzero(bits(got) != bits(want))
    assert bad.size == 0, [(float(x[i]), hex(bits(got)[i]), hex(bits(want)[i])) for i in bad[:5]]


def test_f16_to_f32_and_mm_every_pattern():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    f = depth.convert(h, np.float32)
    assert np.array_equal(bits(f), bits(ref_f16_to_f32(h)))  # -0, NaN, inf, negatives -> +0
    assert np.array_equal(depth.convert(h, "mm"), ref_to_mm(ref_f16_to_f32(h)))
    assert np.array_equal(depth.convert(h, np.uint16), depth.convert(h, "MM"))


def test_mm_every_value():
    mm = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    assert np.array_equal(bits(depth.convert(mm, np.float32)), bits(ref_mm_to_f32(mm)))
    assert np.array_equal(bits(depth.convert(mm, np.float16)), bits(ref_mm_to_f16(mm)))
    assert depth.convert(mm, np.float32)[1000] == 1.0 and depth.convert(mm, np.float32)[0] == 0


def test_f32_to_mm(rng):
    x = np.concatenate([
        SPECIAL_F32,
        rng.integers(0, 2**32, size=1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32),
        rng.uniform(0, 70, size=1 << 18).astype(np.float32),
        ((np.arange(65537) + 0.5) / 1000).astype(np.float32),  # around the ties
    ])
    assert np.array_equal(depth.convert(x, "mm"), ref_to_mm(x))
    # exact ties (0.0625 m = 62.5 mm) round away from zero, not to even
    assert depth.convert(np.float32([0.0625, 0.0015, 65.535, 65.536, 0.0004, 0.5]), "mm").tolist() == [63, 2, 65535, 0, 0, 500]


def test_convert_shapes_out_and_identity(rng):
    x = rng.uniform(0, 5, size=(2, 3, 4)).astype(np.float32)
    h = depth.convert(x, np.float16)
    assert h.shape == (2, 3, 4)
    out = np.empty((2, 3, 4), np.float16)
    assert depth.convert(x, np.float16, out=out) is out and np.array_equal(bits(out), bits(h))
    assert np.array_equal(depth.convert(x[:, ::2], np.float16), ref_f32_to_f16(x[:, ::2]))  # strided input is copied
    assert np.array_equal(depth.convert(x, np.float32), x)
    u8 = np.arange(10, dtype=np.uint8)
    assert np.array_equal(depth.convert(u8, np.uint8), u8)
    assert depth.convert(np.empty(0, np.float32), np.float16).shape == (0,)
    # same format in place is a no-op copy; an overlapping different format is refused by the library
    assert depth.convert(h, np.float16, out=h) is h
    buf = np.zeros(16, np.uint8)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_convert") as info:
        _ffi.lib.ck_depth_convert(buf[2:10], 2, buf[:16], 1, 4)
    assert "overlap" in info.value.message


def test_convert_rejects_before_the_call():
    with pytest.raises(TypeError):
        depth.convert(np.zeros(3, np.float64), np.float16)  # no silent double rounding
    with pytest.raises(TypeError):
        depth.convert(np.zeros(3, np.int32), np.float32)
    with pytest.raises(TypeError):
        depth.convert(np.zeros(3, np.float32), np.float64)
    with pytest.raises(TypeError):
        depth.convert(np.zeros(3, np.float32), "metres")
    with pytest.raises(TypeError):
        depth.convert(np.zeros(3, np.float32), np.float16, out=np.zeros(3, np.uint16))
    with pytest.raises(ValueError):
        depth.convert(np.zeros(3, np.float32), np.float16, out=np.zeros(4, np.float16))
    with pytest.raises(ValueError):
        depth.convert(np.zeros(3, np.float32), np.float16, out=np.zeros(6, np.float16)[::2])
    ro = np.zeros(3, np.float16)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        depth.convert(np.zeros(3, np.float32), np.float16, out=ro)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_convert"):
        depth.convert(np.zeros(3, np.uint8), np.float32)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_convert"):
        depth.convert(np.zeros(3, np.float32), np.uint8)
    # the raw declarations refuse non-contiguous and read-only buffers themselves (ndpointer)
    with pytest.raises(ctypes.ArgumentError):
        _ffi.lib.ck_depth_convert(np.zeros(4, np.uint16), 2, np.zeros(8, np.float32)[::2], 1, 4)
    with pytest.raises(ctypes.ArgumentError):
        _ffi.lib.ck_depth_convert(ro, 2, np.zeros(3, np.float32), 1, 3)


def test_format_size():
    assert [_ffi.lib.ck_format_size(f) for f in (0, 1, 2, 3, 4, 5)] == [0, 4, 2, 2, 1, 0]


# == native codec ==============================================================================


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (5, 7), (6, 8), (11, 13), (48, 64), (1, 16384), (16384, 1), (192, 256)])
def test_codec_round_trips(rng, shape):
    f32 = lidar_like(rng, shape)
    specials = np.float32([NAN, -1, INF, 70000, 0, 1e-9, 2.0**-24, 65519])
    k = min(len(specials), f32.size)
    f32.reshape(-1)[rng.choice(f32.size, k, replace=False)] = specials[:k]
    f16 = ref_f32_to_f16(f32)
    mm = ref_to_mm(f32)
    u8 = rng.integers(0, 3, size=shape, dtype=np.uint8)
    with DepthCodec() as codec:
        data = codec.encode(f32)
        assert depth.frame_info(data) == (DepthKind.FLOAT16, shape[1], shape[0])
        assert np.array_equal(bits(codec.decode(data)), bits(f16))  # default dtype: the stored float16
        assert np.array_equal(bits(codec.decode(data, np.float32)), bits(ref_f16_to_f32(f16)))
        assert np.array_equal(codec.decode(data, "mm"), ref_to_mm(ref_f16_to_f32(f16)))
        assert codec.encode(f16) == data  # float32 input is stored exactly as its float16 conversion
        # raw float16 patterns (even ones the rules call invalid) are stored losslessly
        raw = rng.integers(0, 65536, size=shape, dtype=np.uint32).astype(np.uint16).view(np.float16)
        assert np.array_equal(bits(codec.decode(codec.encode(raw))), bits(raw))

        data = codec.encode(mm)
        assert codec.frame_info(data).kind == DepthKind.MM
        assert np.array_equal(codec.decode(data), mm)
        assert np.array_equal(bits(codec.decode(data, np.float32)), bits(ref_mm_to_f32(mm)))
        assert np.array_equal(bits(codec.decode(data, np.float16)), bits(ref_mm_to_f16(mm)))

        data = codec.encode(u8)
        assert depth.frame_info(data).kind == DepthKind.U8
        assert np.array_equal(codec.decode(data), u8) and codec.decode(data).dtype == np.uint8


def test_codec_kind_argument(rng):
    f32 = lidar_like(rng)
    with DepthCodec(level=3) as codec:
        as_mm = codec.encode(f32, kind=DepthKind.MM)  # metres stored as millimetres
        assert depth.frame_info(as_mm).kind == DepthKind.MM
        assert np.array_equal(codec.decode(as_mm), ref_to_mm(f32))
        mm = ref_to_mm(f32)
        as_f16 = codec.encode(mm, kind="float16")  # millimetres stored as float16 metres
        assert np.array_equal(bits(codec.decode(as_f16)), bits(ref_mm_to_f16(mm)))
        assert codec.encode(f32, kind=1) == codec.encode(f32)
        with pytest.raises(ValueError):
            codec.encode(f32, kind=DepthKind.U8)
        with pytest.raises(ValueError):
            codec.encode(np.zeros((2, 2), np.uint8), kind="mm")
        with pytest.raises(ValueError):
            codec.encode(f32, kind="metres")


def test_codec_inputs(rng):
    f32 = lidar_like(rng)
    with DepthCodec() as codec:
        data = codec.encode(f32)
        assert codec.encode(np.asfortranarray(f32)) == data  # other layouts are copied to C order
        assert np.array_equal(codec.decode(bytearray(data)), codec.decode(data))
        assert np.array_equal(codec.decode(memoryview(data)), codec.decode(data))
        assert np.array_equal(codec.decode(np.frombuffer(data, np.uint8)), codec.decode(data))
        out = np.empty(f32.shape, np.float32)
        assert codec.decode(data, np.float32, out=out) is out
        with pytest.raises(TypeError):
            codec.encode(f32.astype(np.float64))
        with pytest.raises(TypeError):
            codec.encode(f32.astype(np.int16))
        with pytest.raises(ValueError):
            codec.encode(f32.reshape(-1))
        with pytest.raises(ValueError):
            codec.encode(f32[None])
        with pytest.raises(TypeError):
            codec.decode("not bytes")
        with pytest.raises(TypeError):
            codec.decode(np.zeros(4, np.float32))
        with pytest.raises(ValueError):
            codec.decode(data, np.float32, out=np.empty((3, 3), np.float32))
        with pytest.raises(TypeError):
            codec.decode(data, np.float32, out=np.empty(f32.shape, np.float16))
        with pytest.raises(ValueError):
            codec.decode(data, np.float32, out=np.empty((f32.shape[0], 2 * f32.shape[1]), np.float32)[:, ::2])
        with raises(ck.InvalidArgumentError, -1, "ck_depth_decode"):
            codec.decode(data, np.uint8)  # a depth frame as bytes
        with raises(ck.InvalidArgumentError, -1, "ck_depth_decode"):
            codec.decode(codec.encode(np.zeros((2, 2), np.uint8)), np.float32)


def test_codec_errors():
    with raises(ck.InvalidArgumentError, -1, "ck_depth_codec_create") as info:
        DepthCodec(level=20)
    assert "level" in info.value.message
    with raises(ck.InvalidArgumentError, -1, "ck_depth_codec_create"):
        DepthCodec(level=-1)
    with pytest.raises(TypeError):
        DepthCodec(level=1.5)
    with DepthCodec() as codec:
        with raises(ck.InvalidArgumentError, -1, "ck_depth_encode") as info:
            codec.encode(np.zeros((0, 4), np.float32))
        assert "height" in info.value.message
        with raises(ck.InvalidArgumentError, -1, "ck_depth_encode"):
            codec.encode(np.zeros((1, 16385), np.uint8))
        data = codec.encode(np.ones((6, 8), np.float32))
        for cut in range(len(data)):  # decode() reads the header first
            with raises(ck.CorruptError, -4, "ck_depth_frame_info"):
                codec.decode(data[:cut])
        with raises(ck.CorruptError, -4, "ck_depth_frame_info"):
            codec.decode(data + b"\0")
        with raises(ck.CorruptError, -4, "ck_depth_frame_info"):
            depth.frame_info(b"CF" + bytes(62))
        damaged = bytearray(data)
        damaged[33] ^= 0xFF  # inside the first zstd frame (its magic number)
        with raises(ck.CorruptError, -4, "ck_depth_decode"):
            codec.decode(bytes(damaged))


def test_buffer_too_small_through_raw_ffi(rng):
    f16 = ref_f32_to_f16(lidar_like(rng))
    h, w = f16.shape
    with DepthCodec() as codec:
        data = codec.encode(f16)
        bound = _ffi.lib.ck_depth_encode_bound(w, h, 2)
        assert len(data) <= bound
        written = np.zeros(1, np.uintp)
        src_map = _ffi.depth_map(f16, 2)
        for cap in (0, 31, len(data) - 1):
            dst = np.full(len(data), 0xEE, np.uint8)
            with raises(ck.BufferTooSmallError, -2, "ck_depth_encode"):
                _ffi.lib.ck_depth_encode(dst, cap, written, codec._h(), src_map)
            assert written[0] == bound  # the needed size is reported
            assert np.all(dst[cap:] == 0xEE)
        dst = np.empty(len(data), np.uint8)  # exactly the encoded size is enough
        assert _ffi.lib.ck_depth_encode(dst, dst.size, written, codec._h(), src_map) == 0
        assert written[0] == len(data) and dst.tobytes() == data
        out = np.full(f16.shape, 7, np.float16)
        src = np.frombuffer(data, np.uint8)
        written[0] = 12345
        with raises(ck.BufferTooSmallError, -2, "ck_depth_decode"):
            _ffi.lib.ck_depth_decode(out, out.nbytes - 1, written, codec._h(), src, src.size, 2)
        assert written[0] == out.nbytes  # the bytes needed
        assert np.all(out == 7)  # dst untouched on error
        assert _ffi.lib.ck_depth_decode(out, out.nbytes, written, codec._h(), src, src.size, 2) == 0
        assert written[0] == out.nbytes and np.array_equal(out.view(np.uint16), f16.view(np.uint16))


def test_codec_close_and_use_after_close():
    codec = DepthCodec()
    assert not codec.closed
    data = codec.encode(np.ones((2, 2), np.float32))
    codec.close()
    codec.close()  # idempotent
    assert codec.closed
    for call in (lambda: codec.encode(np.ones((2, 2), np.float32)), lambda: codec.decode(data),
                 lambda: codec.frame_info(data), lambda: codec.__enter__()):
        with pytest.raises(ValueError, match="closed"):
            call()
    with DepthCodec() as c2:
        pass
    assert c2.closed
    c2.close()
    # the safety net: an object dropped without close() is released by its finalizer
    c3 = DepthCodec()
    finalizer = c3._finalizer
    del c3
    gc.collect()
    assert not finalizer.alive


# == .ckdepth files ============================================================================


def recording(n, shape=(6, 8), offset=0):
    """n deterministic float16 frames with holes."""
    h, w = shape
    frames = []
    for i in range(offset, offset + n):
        y, x = np.mgrid[0:h, 0:w]
        f = (1.0 + 0.01 * x + 0.02 * y + 0.001 * ((7 * x + 13 * y + 31 * i) % 17)).astype(np.float16)
        f[(x * 5 + y * 3 + i) % 11 == 0] = 0
        frames.append(f)
    return frames


def write_file(path, frames, **kw):
    h, w = frames[0].shape
    with DepthWriter(path, w, h, DepthKind.FLOAT16, **kw) as wr:
        for i, f in enumerate(frames):
            wr.append(f, 10.0 + i / 30)
    return path


def test_file_round_trip_and_random_access(tmp_path, rng):
    frames = recording(20)
    path = write_file(tmp_path / "a.ckdepth", frames)
    with DepthReader(path) as r:
        assert r.info == (8, 6, DepthKind.FLOAT16, 1, 20, 0)
        assert len(r) == 20
        for i in rng.permutation(20):
            data, t = r.read(int(i))
            assert np.array_equal(bits(data), bits(frames[i])) and t == 10.0 + i / 30
        assert np.array_equal(bits(r.read(-1).data), bits(frames[-1]))
        assert np.array_equal(bits(r[3].data), bits(frames[3]))
        assert np.array_equal(bits(r.read(2, np.float32).data), bits(ref_f16_to_f32(frames[2])))
        assert np.array_equal(r.read(2, "mm").data, ref_to_mm(ref_f16_to_f32(frames[2])))
        out = np.empty((6, 8), np.float32)
        assert r.read(5, np.float32, out=out).data is out
        got = list(r)
        assert len(got) == 20 and all(np.array_equal(bits(g.data), bits(f)) for g, f in zip(got, frames))
        for index in (20, 2**40, 2**64 - 1, -21):
            with pytest.raises(IndexError):
                r.read(index)
        with pytest.raises(ValueError):
            r.read(2**64)
        with raises(ck.InvalidArgumentError, -1, "ck_depth_reader_read"):
            r.read(0, np.uint8)
        with pytest.raises(TypeError):
            r.read(0, np.float64)
        assert "20 frames" in repr(r)


def test_file_kinds_and_formats(tmp_path, rng):
    f32 = lidar_like(rng, (6, 8))
    mm = ref_to_mm(f32)
    with DepthWriter(tmp_path / "mm.ckdepth", 8, 6, "mm") as w:
        w.append(f32, 0.0)  # metres into a millimetre file: converted by the rules
        w.append(mm, 1.0)
        w.append(ref_f32_to_f16(f32), 2.0)
        with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_append"):
            w.append(np.zeros((6, 8), np.uint8), 3.0)
        assert w.frame_count == 3 and len(w) == 3
    with DepthReader(tmp_path / "mm.ckdepth") as r:
        assert r.info.kind == DepthKind.MM
        assert np.array_equal(r.read(0).data, mm) and np.array_equal(r.read(1).data, mm)
        assert np.array_equal(r.read(2).data, ref_to_mm(ref_f16_to_f32(ref_f32_to_f16(f32))))
    u8 = rng.integers(0, 3, size=(6, 8), dtype=np.uint8)
    with DepthWriter(tmp_path / "u8.ckdepth", 8, 6, DepthKind.U8) as w:
        w.append(u8, 0.5)
        with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_append"):
            w.append(f32, 1.0)
    with DepthReader(str(tmp_path / "u8.ckdepth")) as r:
        assert np.array_equal(r.read(0).data, u8) and r.read(0).timestamp == 0.5
        with raises(ck.InvalidArgumentError, -1, "ck_depth_reader_read"):
            r.read(0, np.float32)


def test_writer_modes_and_errors(tmp_path):
    frames = recording(4)
    path = write_file(tmp_path / "m.ckdepth", frames[:3])
    with raises(ck.ExistsError, -9, "ck_depth_writer_open"):
        DepthWriter(path, 8, 6, DepthKind.FLOAT16)
    with DepthWriter(path, 8, 6, DepthKind.FLOAT16, append=True) as w:
        assert w.frame_count == 3
        w.append(frames[3], 10.0 + 3 / 30)
    with DepthReader(path) as r:
        assert len(r) == 4 and np.array_equal(bits(r[3].data), bits(frames[3]))
    for kw in (dict(width=9), dict(height=5), dict(kind=DepthKind.MM)):
        args = dict(width=8, height=6, kind=DepthKind.FLOAT16)
        args.update(kw)
        with raises(ck.CorruptError, -4, "ck_depth_writer_open"):
            DepthWriter(path, args["width"], args["height"], args["kind"], append=True)
    text = tmp_path / "t.txt"
    text.write_text("not a depth recording, but long enough to hold a header of sixty-four bytes....")
    with raises(ck.CorruptError, -4, "ck_depth_writer_open"):
        DepthWriter(text, 8, 6, DepthKind.FLOAT16, append=True)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_open"):
        DepthWriter(tmp_path / "x.ckdepth", 8, 6, DepthKind.FLOAT16, overwrite=True, append=True)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_open"):
        DepthWriter(tmp_path / "x.ckdepth", 8, 6, 7)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_open"):
        DepthWriter(tmp_path / "x.ckdepth", 0, 6, DepthKind.FLOAT16)
    with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_open"):
        DepthWriter(tmp_path / "x.ckdepth", 8, 6, DepthKind.FLOAT16, level=99)
    with raises(ck.CaptureKitIOError, -3, "ck_depth_writer_open"):
        DepthWriter(tmp_path, 8, 6, DepthKind.FLOAT16, overwrite=True)  # a directory
    for kw in (dict(), dict(overwrite=True), dict(append=True)):
        with raises(ck.NotFoundError, -7, "ck_depth_writer_open"):
            DepthWriter(tmp_path / "no" / "such" / "dir.ckdepth", 8, 6, DepthKind.FLOAT16, **kw)
    with pytest.raises(ValueError):
        DepthWriter(str(tmp_path / "a\0b"), 8, 6, DepthKind.FLOAT16)
    with pytest.raises(TypeError):
        DepthWriter(42, 8, 6, DepthKind.FLOAT16)
    with pytest.raises(ValueError):
        DepthWriter(tmp_path / "x.ckdepth", 8, -6, DepthKind.FLOAT16)
    with pytest.raises(ValueError):
        DepthWriter(tmp_path / "x.ckdepth", 8, 6, "metres")
    assert not (tmp_path / "x.ckdepth").exists()
    # overwrite replaces; bytes paths work
    write_file(os.fsencode(path), frames[:1], overwrite=True)
    with DepthReader(path) as r:
        assert len(r) == 1
    with DepthWriter(tmp_path / "y.ckdepth", 8, 6, DepthKind.FLOAT16) as w:
        with pytest.raises(ValueError):
            w.append(np.zeros((8, 6), np.float16), 0.0)  # transposed
        with pytest.raises(TypeError):
            w.append(np.zeros((6, 8), np.float64), 0.0)
        with pytest.raises(TypeError):
            w.append(np.zeros((6, 8), np.float16), "now")
        for t in (NAN, INF, -INF):
            with raises(ck.InvalidArgumentError, -1, "ck_depth_writer_append") as info:
                w.append(np.zeros((6, 8), np.float16), t)
            assert "timestamp" in info.value.message
        w.append(np.asfortranarray(frames[0]), 0.0)
        w.flush()
        assert "1 frames" in repr(w)


def test_reader_errors(tmp_path):
    with raises(ck.NotFoundError, -7, "ck_depth_reader_open"):
        DepthReader(tmp_path / "missing.ckdepth")
    with raises(ck.CaptureKitIOError, -3, "ck_depth_reader_open"):
        DepthReader(tmp_path)
    (tmp_path / "t.txt").write_bytes(b"hello" * 40)
    with raises(ck.CorruptError, -4, "ck_depth_reader_open"):
        DepthReader(tmp_path / "t.txt")
    (tmp_path / "e").write_bytes(b"")
    with raises(ck.CorruptError, -4, "ck_depth_reader_open"):
        DepthReader(tmp_path / "e")
    # a newer version with a valid header CRC: unsupported (for append too)
    header = bytearray((GOLDEN / "recording_float16_8x6x3.ckdepth").read_bytes()[:64])
    assert header[:8] == b"CKDEPTH\0" and struct.unpack_from("<I", header, 60)[0] == zlib.crc32(header[:60])
    struct.pack_into("<I", header, 8, 2)
    struct.pack_into("<I", header, 60, zlib.crc32(header[:60]))
    (tmp_path / "v2.ckdepth").write_bytes(bytes(header))
    with raises(ck.UnsupportedError, -6, "ck_depth_reader_open"):
        DepthReader(tmp_path / "v2.ckdepth")
    with raises(ck.UnsupportedError, -6, "ck_depth_writer_open"):
        DepthWriter(tmp_path / "v2.ckdepth", 8, 6, DepthKind.FLOAT16, append=True)
    header[60] ^= 1
    (tmp_path / "v2.ckdepth").write_bytes(bytes(header))
    with raises(ck.CorruptError, -4, "ck_depth_reader_open"):
        DepthReader(tmp_path / "v2.ckdepth")
    # a damaged frame in the middle: the file opens, that frame raises naming it
    path = write_file(tmp_path / "d.ckdepth", recording(3))
    data = bytearray(path.read_bytes())
    first = 64 + 32 + struct.unpack_from("<I", data, 68)[0]
    data[first + 32 + 3] ^= 0x40
    path.write_bytes(bytes(data))
    with DepthReader(path) as r:
        assert len(r) == 3
        r.read(0)
        with raises(ck.CorruptError, -4, "ck_depth_reader_read") as info:
            r.read(1)
        assert "frame 1" in info.value.message
        r.read(2)


def test_torn_tail_and_every_cut(tmp_path):
    frames = recording(3, shape=(3, 5))
    path = write_file(tmp_path / "c.ckdepth", frames)
    data = path.read_bytes()
    ends, off = [64], 64
    while off < len(data):
        off += 32 + struct.unpack_from("<I", data, off + 4)[0]
        ends.append(off)
    assert ends[-1] == len(data) and len(ends) == 4
    cut = tmp_path / "cut.ckdepth"
    for n in range(len(data) + 1):
        cut.write_bytes(data[:n])
        if n < 64:
            with raises(ck.CorruptError, -4, "ck_depth_reader_open"):
                DepthReader(cut)
            continue
        complete = max(k for k, e in enumerate(ends) if e <= n)
        with DepthReader(cut) as r:
            assert r.info.frame_count == complete and r.info.torn_bytes == n - ends[complete], n
            assert all(np.array_equal(bits(r.read(i).data), bits(frames[i])) for i in range(complete))
    # appending continues a cut file where its last complete frame ends
    cut.write_bytes(data[: ends[2] - 7])
    with DepthWriter(cut, 5, 3, DepthKind.FLOAT16, append=True) as w:
        assert w.frame_count == 1
        for i in (1, 2):
            w.append(frames[i], 10.0 + i / 30)
    assert cut.read_bytes() == data


def test_write_failure_then_state(tmp_path):
    """The file size limit makes write() fail (EFBIG): CK_E_IO, then CK_E_STATE for later frames."""
    path = tmp_path / "f.ckdepth"
    frames = recording(200, shape=(48, 64))
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    w = DepthWriter(path, 64, 48, DepthKind.FLOAT16)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, old[1]))
        with raises(ck.CaptureKitIOError, -3, "ck_depth_writer_append"):
            for i, f in enumerate(frames):
                w.append(f, float(i))
        failed_at = w.frame_count
        with raises(ck.StateError, -5, "ck_depth_writer_append"):
            w.append(frames[0], 0.0)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, old_handler)
    with raises(ck.StateError, -5, "ck_depth_writer_append"):
        w.append(frames[0], 0.0)
    w.close()
    with DepthReader(path) as r:
        assert len(r) == failed_at > 0
        assert all(np.array_equal(bits(r.read(i).data), bits(frames[i])) for i in range(failed_at))


def test_writer_close_and_use_after_close(tmp_path):
    w = DepthWriter(tmp_path / "w.ckdepth", 8, 6, DepthKind.FLOAT16)
    w.append(recording(1)[0], 0.0)
    w.close()
    w.close()
    assert w.closed and "closed" in repr(w)
    for call in (lambda: w.append(recording(1)[0], 1.0), w.flush, lambda: w.frame_count, lambda: len(w)):
        with pytest.raises(ValueError, match="closed"):
            call()
    r = DepthReader(tmp_path / "w.ckdepth")
    r.close()
    r.close()
    assert "closed" in repr(r)
    for call in (lambda: r.read(0), lambda: r[0], lambda: list(r)):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert len(r) == 1 and r.info.frame_count == 1  # the summary taken when opening stays
    # a writer dropped without close() is flushed and closed by its finalizer
    w2 = DepthWriter(tmp_path / "w2.ckdepth", 8, 6, DepthKind.FLOAT16)
    w2.append(recording(1)[0], 0.0)
    finalizer = w2._finalizer
    del w2
    gc.collect()
    assert not finalizer.alive
    with DepthReader(tmp_path / "w2.ckdepth") as r2:
        assert len(r2) == 1


def test_error_classes_are_exported():
    assert ck.DepthCodec is DepthCodec and ck.DepthKind.MM == 2 and ck.depth.convert is depth.convert
    assert depth.DEPTH_MAX_DIMENSION == 16384
    assert ctypes.sizeof(_ffi.ck_depth_info) == 32
    assert [f[0] for f in _ffi.ck_depth_info._fields_] == ["width", "height", "kind", "version", "frame_count",
                                                           "torn_bytes"]


# == golden files (Tests/golden, see its README) ================================================

needs_golden = pytest.mark.skipif(not GOLDEN.exists(), reason="needs the source tree's Tests/golden")

GOLDEN_FRAMES = [
    ("frame_float16_8x6.ckframe", "frame_float16_8x6.f16", DepthKind.FLOAT16, "<f2"),
    ("frame_mm_8x6.ckframe", "frame_mm_8x6.u16", DepthKind.MM, "<u2"),
    ("frame_u8_8x6.ckframe", "frame_u8_8x6.u8", DepthKind.U8, "u1"),
]


def v2_name(name, version=2):
    """The version-2 (or 3) golden file of a version-1 one (frame_x.ckframe -> frame_x.v2.ckframe)."""
    stem, ext = name.rsplit(".", 1)
    return f"{stem}.v{version}.{ext}"


def _zstd():
    name = ctypes.util.find_library("zstd") or "libzstd.so.1"
    lib = ctypes.CDLL(name)
    lib.ZSTD_versionNumber.restype = ctypes.c_uint
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    return lib


def zstd_decompress(data, size):
    lib = _zstd()
    out = ctypes.create_string_buffer(size)
    r = lib.ZSTD_decompress(out, size, data, len(data))
    assert not lib.ZSTD_isError(r) and r == size
    return out.raw


def reference_decode(frame: bytes) -> np.ndarray:
    """An independent decoder of the native frame format, written from Tests/golden/README.md
    (NumPy + libzstd), so the committed description is checked against the committed bytes."""
    magic, version, kind = frame[:2], frame[2], frame[3]
    w, h, flags, nib_size, esc_bytes, esc_size, mask_size = struct.unpack_from("<7I", frame, 4)
    if version == 2:
        return reference_decode_v2(frame)
    if version == 3:
        return reference_decode_v3(frame)
    if version == 4:
        return reference_decode_v4(frame)
    assert magic == b"CF" and version == 1 and flags == 0
    assert 32 + nib_size + esc_size + mask_size == len(frame)
    n = w * h
    body = frame[32:]
    if kind == 3:
        return np.frombuffer(zstd_decompress(body, n), np.uint8).reshape(h, w)
    groups = (n + 7) // 8
    nib = np.frombuffer(zstd_decompress(body[:nib_size], groups * 4), np.uint8).reshape(groups, 4)
    esc = zstd_decompress(body[nib_size:nib_size + esc_size], esc_bytes) if esc_bytes else b""
    mask = (np.frombuffer(zstd_decompress(body[nib_size + esc_size:], groups), np.uint8)
            if mask_size else np.zeros(groups, np.uint8))
    # byte j of a group holds pixel j (low nibble) and pixel j + 4 (high nibble)
    z = np.concatenate([nib & 15, nib >> 4], axis=1).reshape(-1)[:n].astype(np.int64)
    e = 0
    for i in np.flatnonzero(z == 15):  # escapes in pixel order
        if esc[e] < 255:
            z[i] = esc[e] + 15
            e += 1
        else:
            z[i] = esc[e + 1] | esc[e + 2] << 8
            e += 3
    assert e == len(esc)
    residual = (z >> 1) ^ -(z & 1)  # zigzag
    values = np.cumsum(residual) & 0xFFFF  # running sum; invalid pixels have residual 0
    invalid = np.unpackbits(mask, bitorder="little")[:n].astype(bool)
    values[invalid] = 0
    return values.astype(np.uint16).reshape(h, w)


def reference_decode_v2(frame: bytes) -> np.ndarray:
    """Version 2, from Tests/golden/README.md: per row, pixel-by-pixel (slow and plain)."""
    magic, version, kind = frame[:2], frame[2], frame[3]
    w, h, check, nib_size, count, esc_size, side_size = struct.unpack_from("<7I", frame, 4)
    assert magic == b"CF" and version == 2 and check == zlib.crc32(frame[:12] + bytes(4) + frame[16:32])
    assert 32 + nib_size + esc_size + side_size == len(frame)
    body = frame[32:]
    if kind == 3:
        return np.frombuffer(zstd_decompress(body, w * h), np.uint8).reshape(h, w)
    gw = (w + 7) // 8
    groups = h * gw
    nib = np.frombuffer(zstd_decompress(body[:nib_size], groups * 4), np.uint8).reshape(groups, 4)
    esc = np.frombuffer(zstd_decompress(body[nib_size:nib_size + esc_size], 2 * count), np.uint8) if count else np.zeros(0, np.uint8)
    side = np.frombuffer(zstd_decompress(body[nib_size + esc_size:], h + groups), np.uint8)
    predictors, mask = side[:h], side[h:]
    assert set(predictors.tolist()) <= {0, 1}
    # lanes in pixel order (byte j: lane j low nibble, lane j + 4 high nibble), rows padded to 8
    z = np.concatenate([nib & 15, nib >> 4], axis=1).reshape(h, gw * 8).astype(np.int64)
    where = np.argwhere(z == 15)  # row-major = pixel order
    assert len(where) == count
    values = esc[:count].astype(np.int64) | esc[count:].astype(np.int64) << 8
    for (y, x), v in zip(where, values):
        z[y, x] = 15 + v
    invalid = np.unpackbits(mask, bitorder="little").reshape(h, gw * 8).astype(bool)
    out = np.zeros((h, w), np.int64)
    above = np.zeros(w + 2, np.int64)  # row y - 1, zero-padded at both ends
    last = 0
    for y in range(h):
        if above[1] != 0:
            last = above[1]
        for x in range(w):
            if invalid[y, x]:
                continue
            nw, ne = above[x], above[x + 2]
            g = 0
            if predictors[y] == 1 and nw and ne:
                d = (ne - nw) & 0xFFFF
                g = ((d - 0x10000 if d >= 0x8000 else d) >> 1) & 0xFFFF
            r = (z[y, x] >> 1) ^ -(z[y, x] & 1)
            last = (last + g + r) & 0xFFFF
            out[y, x] = last
        above[1:w + 1] = out[y]
    return out.astype(np.uint16)


def reference_decode_v3(frame: bytes) -> np.ndarray:
    """Version 3, from Tests/golden/README.md: palette, per-row predictor on the filled image, one
    byte per residual, escapes; pixel by pixel (slow and plain)."""
    magic, version, kind = frame[:2], frame[2], frame[3]
    w, h, check, k, count, size, zero = struct.unpack_from("<7I", frame, 4)
    assert magic == b"CF" and version == 3 and check == zlib.crc32(frame[:12] + bytes(4) + frame[16:32])
    body = frame[32:]
    if kind == 3:
        assert count == 0 and zero == 0 and 32 + k == len(frame)
        return np.frombuffer(zstd_decompress(body, w * h), np.uint8).reshape(h, w)
    assert zero == 0 and 32 + size == len(frame)
    n = w * h
    payload = zstd_decompress(body, 2 * k + h + n + 2 * count)
    palette = np.cumsum(np.frombuffer(payload[:2 * k], "<u2").astype(np.int64))
    assert k == 0 or (np.all(np.diff(np.concatenate([[0], palette])) >= 1) and palette[-1] <= 0xFFFF)
    table = np.concatenate([[0], palette])
    modes = payload[2 * k:2 * k + h]
    res = np.frombuffer(payload[2 * k + h:2 * k + h + n], np.uint8).reshape(h, w)
    esc = np.frombuffer(payload[2 * k + h + n:], "<u2")
    assert set(modes) <= {0, 1, 2} and (res == 255).sum() == count and np.all(esc >= 254)
    out = np.zeros((h, w), np.int64)
    above = np.zeros(w, np.int64)  # P: row y - 1 of the filled image (zeros for row 0)
    row = np.zeros(w, np.int64)
    last, e = 0, 0
    for y in range(h):
        for x in range(w):
            b = int(res[y, x])
            if b == 0:  # invalid: the filled value stays
                row[x] = last
                continue
            z = b - 1
            if b == 255:
                z = int(esc[e])
                e += 1
            r = (z >> 1) ^ -(z & 1)
            nw, n_, ne = above[max(x - 1, 0)], above[x], above[min(x + 1, w - 1)]
            if modes[y] == 1:
                g = n_ - nw
            elif modes[y] == 2:
                d = (ne - nw) & 0xFFFF
                g = (d - 0x10000 if d >= 0x8000 else d) >> 1
            else:
                g = 0
            last = (last + g + r) & 0xFFFF
            row[x] = last
            out[y, x] = table[min(last, k)] if k else last
        above = row.copy()
    return out.astype(np.uint16)


def reference_decode_v4(frame: bytes, layout=None) -> np.ndarray:
    """Version 4, from docs/FORMATS.md: version 3's values and predictors, each row in nibbles or
    bytes (nibble rows first, then byte rows), escapes as low then high bytes (the low bytes after
    the zstd frame, uncompressed, when word 6 has bit 16); pixel by pixel.
    `layout`, a list, receives each row's (predictor, nibbles) when given."""
    magic, version, kind = frame[:2], frame[2], frame[3]
    w, h, check, k, count, size, word6 = struct.unpack_from("<7I", frame, 4)
    assert magic == b"CF" and version == 4 and check == zlib.crc32(frame[:12] + bytes(4) + frame[16:32])
    body = frame[32:]
    if kind == 3:
        assert count == 0 and word6 == 0 and 32 + k == len(frame)
        return np.frombuffer(zstd_decompress(body, w * h), np.uint8).reshape(h, w)
    nibble_rows, stored = word6 & 0xFFFF, word6 >> 16
    assert 32 + size == len(frame) and nibble_rows <= h and stored in (0, 1)
    gw = (w + 7) // 8
    nibble_bytes = nibble_rows * 4 * gw
    rest = 2 * k + h + nibble_bytes + (h - nibble_rows) * w
    if stored:  # zstd frame: everything but the low bytes, which follow it
        assert size >= count
        payload = zstd_decompress(body[:size - count], rest + count)
        payload = payload[:rest] + body[size - count:] + payload[rest:]
    else:
        payload = zstd_decompress(body, rest + 2 * count)
    palette = np.cumsum(np.frombuffer(payload[:2 * k], "<u2").astype(np.int64))
    assert k == 0 or (np.all(np.diff(np.concatenate([[0], palette])) >= 1) and palette[-1] <= 0xFFFF)
    table = np.concatenate([[0], palette])
    rows = payload[2 * k:2 * k + h]
    at = 2 * k + h
    nibbles = np.frombuffer(payload[at:at + nibble_bytes], np.uint8).reshape(nibble_rows, gw, 4)
    at += nibble_bytes
    byte_rows = np.frombuffer(payload[at:at + (h - nibble_rows) * w], np.uint8).reshape(h - nibble_rows, w)
    at += (h - nibble_rows) * w
    low = np.frombuffer(payload[at:at + count], np.uint8).astype(np.int64)
    high = np.frombuffer(payload[at + count:], np.uint8).astype(np.int64)
    escapes = low | high << 8
    assert all(r < 8 and r & 3 <= 2 for r in rows) and sum(r >> 2 for r in rows) == nibble_rows
    out = np.zeros((h, w), np.int64)
    above = np.zeros(w, np.int64)  # P: row y - 1 of the filled image (zeros for row 0)
    row = np.zeros(w, np.int64)
    last, e, ni, bi = 0, 0, 0, 0
    for y in range(h):
        mode, nib = rows[y] & 3, rows[y] >> 2
        if layout is not None:
            layout.append((mode, nib))
        if nib:  # byte j of a group: pixel j in the low nibble, pixel j + 4 in the high one
            g = nibbles[ni]
            codes = np.concatenate([g & 15, g >> 4], axis=1).reshape(-1)
            assert not codes[w:].any()  # lanes past the row are 0
            codes, top, ni = codes[:w], 15, ni + 1
        else:
            codes, top, bi = byte_rows[bi], 255, bi + 1
        for x in range(w):
            c = int(codes[x])
            if c == 0:  # invalid: the filled value stays
                row[x] = last
                continue
            z = c - 1
            if c == top:
                z = (top - 1 + int(escapes[e])) & 0xFFFF
                e += 1
            r = (z >> 1) ^ -(z & 1)
            nw, n_, ne = above[max(x - 1, 0)], above[x], above[min(x + 1, w - 1)]
            if mode == 1:
                g = n_ - nw
            elif mode == 2:
                d = (ne - nw) & 0xFFFF
                g = (d - 0x10000 if d >= 0x8000 else d) >> 1
            else:
                g = 0
            last = (last + g + r) & 0xFFFF
            row[x] = last
            out[y, x] = table[min(last, k)] if k else last
        above = row.copy()
    assert e == count
    return out.astype(np.uint16)


def golden_zstd_matches():
    return int((GOLDEN / "zstd_version.txt").read_text()) == int(_zstd().ZSTD_versionNumber())


@needs_golden
@pytest.mark.parametrize("frame_name, expected_name, kind, dtype", GOLDEN_FRAMES)
def test_golden_frames(frame_name, expected_name, kind, dtype):
    """Every frozen version decodes; the encoder (version 4) reproduces the version-4 file."""
    v1 = (GOLDEN / frame_name).read_bytes()
    v2 = (GOLDEN / v2_name(frame_name)).read_bytes()
    v3 = (GOLDEN / v2_name(frame_name, 3)).read_bytes()
    v4 = (GOLDEN / v2_name(frame_name, 4)).read_bytes()
    assert v1[2] == 1 and v2[2] == 2 and v3[2] == 3 and v4[2] == 4
    expected = np.frombuffer((GOLDEN / expected_name).read_bytes(), dtype).reshape(6, 8)
    with DepthCodec() as codec:
        for frame in (v1, v2, v3, v4):
            assert depth.frame_info(frame) == (kind, 8, 6)
            got = codec.decode(frame)
            assert got.dtype == np.dtype(dtype).newbyteorder("=") and np.array_equal(bits(got), bits(expected.astype(got.dtype)))
            assert np.array_equal(reference_decode(frame).view(got.dtype), got)
        again = codec.encode(expected.astype(expected.dtype.newbyteorder("=")))
    assert again[2] == 4
    if golden_zstd_matches():
        assert again == v4, "the encoder no longer reproduces the golden frame byte for byte"
    else:  # another zstd may pick other matches: the pre-entropy payload must still be identical
        assert np.array_equal(reference_decode(again), reference_decode(v4))


@needs_golden
@pytest.mark.parametrize("stem", ["frame_mm_16x12", "frame_mm_20x12"])
def test_golden_dense_frames(stem):
    """The dense golden frames decode (version 3: 16 x 12; version 4: both) to their formula's
    samples, the independent decoder agrees, and the encoder reproduces the version-4 file."""
    expected = np.frombuffer((GOLDEN / f"{stem}.u16").read_bytes(), "<u2").reshape(12, -1)
    versions = [3, 4] if stem == "frame_mm_16x12" else [4]
    with DepthCodec() as codec:
        for v in versions:
            frame = (GOLDEN / f"{stem}.v{v}.ckframe").read_bytes()
            assert frame[2] == v
            assert np.array_equal(codec.decode(frame), expected) and np.array_equal(reference_decode(frame), expected)
        again = codec.encode(expected.astype(np.uint16))
    if golden_zstd_matches():
        assert again == (GOLDEN / f"{stem}.v4.ckframe").read_bytes()
    assert np.array_equal(reference_decode(again), expected)


@needs_golden
def test_golden_v4_frame_with_stored_low_bytes():
    """The 32 x 24 golden frame stores its escapes' low bytes after the zstd frame (word 6, bit
    16): the zstd frame alone decodes to everything but them, the library and the independent
    decoder read the frame to the formula's samples, and the encoder reproduces the file."""
    frame = (GOLDEN / "frame_mm_32x24.v4.ckframe").read_bytes()
    expected = np.frombuffer((GOLDEN / "frame_mm_32x24.u16").read_bytes(), "<u2").reshape(24, 32)
    w, h, _, k, count, size, word6 = struct.unpack_from("<7I", frame, 4)
    assert word6 >> 16 == 1 and count >= 256 and 32 + size == len(frame)
    # the zstd frame ends where the stored low bytes begin: it decodes alone to all but them
    rest = 2 * k + h + (word6 & 0xFFFF) * 4 * ((w + 7) // 8) + (h - (word6 & 0xFFFF)) * w
    inner = zstd_decompress(frame[32:len(frame) - count], rest + count)
    assert len(inner) == rest + count
    with DepthCodec() as codec:
        assert np.array_equal(codec.decode(frame), expected)
        assert np.array_equal(reference_decode(frame), expected)
        again = codec.encode(expected.astype(np.uint16))
    if golden_zstd_matches():
        assert again == frame
    assert np.array_equal(reference_decode(again), expected)


@needs_golden
def test_golden_v4_frames_hold_every_feature():
    """The version-4 frames exercise: nibble and byte rows, escapes in both (with a high byte in a
    nibble row), every predictor, a half-empty last group, and a palette."""
    layout = []
    frame = (GOLDEN / "frame_mm_20x12.v4.ckframe").read_bytes()
    reference_decode_v4(frame, layout)
    assert {m for m, _ in layout} == {0, 1, 2} and {n for _, n in layout} == {0, 1}
    w, h, _, k, count, _, nibble_rows = struct.unpack_from("<7I", frame, 4)
    assert w % 8 == 4 and k == 0 and nibble_rows == sum(n for _, n in layout)
    gw = (w + 7) // 8
    payload = zstd_decompress(frame[32:], h + nibble_rows * 4 * gw + (h - nibble_rows) * w + 2 * count)
    nib = np.frombuffer(payload[h:h + nibble_rows * 4 * gw], np.uint8)
    byte_rows = np.frombuffer(payload[h + nibble_rows * 4 * gw:len(payload) - 2 * count], np.uint8)
    high = np.frombuffer(payload[len(payload) - count:], np.uint8)
    nibble_escapes = int(((nib & 15) == 15).sum() + ((nib >> 4) == 15).sum())
    assert nibble_escapes > 0 and (byte_rows == 255).sum() > 0 and nibble_escapes + (byte_rows == 255).sum() == count
    assert high[:nibble_escapes].any()  # the escapes are in pixel order; some nibble-row escape has a high byte
    mm = (GOLDEN / "frame_mm_8x6.v4.ckframe").read_bytes()
    assert struct.unpack_from("<I", mm, 16)[0] > 0  # a palette


@needs_golden
def test_golden_frames_hold_every_feature():
    """The float16 golden frame exercises holes, nibbles, short and long escapes."""
    frame = (GOLDEN / "frame_float16_8x6.ckframe").read_bytes()
    _, _, _, nib_size, esc_bytes, esc_size, mask_size = struct.unpack_from("<7I", frame, 4)
    assert esc_bytes > 0 and mask_size > 0
    esc = zstd_decompress(frame[32 + nib_size:32 + nib_size + esc_size], esc_bytes)
    assert 0 in esc and 254 in esc and 255 in esc  # short escapes at both ends, and long ones
    expected = np.frombuffer((GOLDEN / "frame_float16_8x6.f16").read_bytes(), "<u2")
    assert (expected == 0).sum() >= 5 and 0x7BFF in expected and 0x0001 in expected


@needs_golden
def test_golden_v2_frames_hold_every_feature():
    """The version-2 frames exercise: escapes of value 0 and with a high byte, both row
    predictors, and the mask."""
    for name in ("frame_float16_8x6.v2.ckframe", "frame_mm_8x6.v2.ckframe"):
        frame = (GOLDEN / name).read_bytes()
        w, h, _, nib_size, count, esc_size, side_size = struct.unpack_from("<7I", frame, 4)
        esc = zstd_decompress(frame[32 + nib_size:32 + nib_size + esc_size], 2 * count)
        side = zstd_decompress(frame[32 + nib_size + esc_size:], h + h * ((w + 7) // 8))
        assert 0 in esc[:count] and any(esc[count:]), name
        assert set(side[:h]) == {0, 1} and any(side[h:]), name


def zstd_literal_types(data):
    """The literals block types (0 raw, 1 RLE, 2 Huffman, 3 Huffman with the previous table) of
    every compressed block of one zstd frame, parsed from RFC 8878; a raw or RLE block counts as
    raw literals (0)."""
    assert struct.unpack_from("<I", data)[0] == 0xFD2FB528
    fhd = data[4]
    single = (fhd >> 5) & 1
    pos = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fhd >> 6]
    types = []
    while True:
        header = int.from_bytes(data[pos:pos + 3], "little")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        pos += 3
        types.append(data[pos] & 3 if kind == 2 else 0)
        pos += 1 if kind == 1 else size
        if last:
            break
    assert pos + 4 * ((fhd >> 2) & 1) == len(data)
    return types


def zstd_compress(data, huffman=True):
    """One zstd level-1 frame of `data`, with Huffman literals or (ZSTD_c_literalCompressionMode =
    ZSTD_ps_disable, experimental parameter 1002 = 2) raw ones."""
    lib = _zstd()
    lib.ZSTD_createCCtx.restype = ctypes.c_void_p
    lib.ZSTD_freeCCtx.argtypes = [ctypes.c_void_p]
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_CCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.ZSTD_compress2.restype = ctypes.c_size_t
    lib.ZSTD_compress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    cctx = lib.ZSTD_createCCtx()
    try:
        assert lib.ZSTD_isError(lib.ZSTD_CCtx_setParameter(cctx, 100, 1)) == 0  # ZSTD_c_compressionLevel
        if not huffman:
            assert lib.ZSTD_isError(lib.ZSTD_CCtx_setParameter(cctx, 1002, 2)) == 0
        cap = lib.ZSTD_compressBound(len(data))
        out = ctypes.create_string_buffer(cap)
        r = lib.ZSTD_compress2(cctx, out, cap, data, len(data))
        assert not lib.ZSTD_isError(r)
        return out.raw[:r]
    finally:
        lib.ZSTD_freeCCtx(cctx)


#: Real Azure Kinect depth imported by `benchmarks/real_depth.py --import` (not committed: third-party
#: recordings are not redistributed here); the test skips where it was not imported.
REAL = pathlib.Path(os.environ.get("CK_DEPTH_SETS", GOLDEN.parents[1] / ".build-dist" / "depth-sets")) / "azure-kinect-tof.npy"


def left_peer_size(a):
    """Left-valid delta + zigzag + byte planes + zstd-1 (benchmarks/peers/left_zstd.c)."""
    flat = a.view(np.uint16).ravel().astype(np.int64)
    valid = flat != 0
    pos = np.maximum.accumulate(np.where(valid, np.arange(flat.size), -1))
    before = np.concatenate([[-1], pos[:-1]])
    r = (flat - np.where(before >= 0, flat[np.maximum(before, 0)], 0)) & 0xFFFF
    z = ((r << 1) ^ np.where(r & 0x8000, 0xFFFF, 0)) & 0xFFFF
    return len(zstd_compress(np.concatenate([z & 0xFF, z >> 8]).astype(np.uint8).tobytes()))


@pytest.mark.skipif(not REAL.exists(), reason="real depth not imported: python3 benchmarks/real_depth.py --import <Zdepth git dir> --set azure-kinect-tof")
@pytest.mark.parametrize("level", [0, depth.LEVEL_ARCHIVAL])
def test_version4_on_real_depth_matches_the_reference_and_beats_the_peer(level):
    """Issue 24: real Azure Kinect (time of flight) frames, encoded at the default and at the
    archival level, are one zstd frame each that the independent decoder (written from
    docs/FORMATS.md) reads back bit-exactly, and are at least 1.15x (archival: 1.4x) smaller
    than the simple peer; the archival frame is never larger than the default one."""
    frames = np.load(REAL)
    assert depth.LEVEL_ARCHIVAL == 19
    total, peer = 0, 0
    with DepthCodec(level) as codec:
        for f in frames[:3]:
            frame = codec.encode(f)
            nibble_rows = struct.unpack_from("<I", frame, 28)[0] & 0xFFFF  # bit 16: stored low bytes
            assert frame[2] == 4 and nibble_rows <= f.shape[0] and (level or nibble_rows > 0)
            if level:
                with DepthCodec() as fast:
                    assert len(frame) <= len(fast.encode(f))
            assert np.array_equal(reference_decode(frame), f) and np.array_equal(codec.decode(frame), f)
            total += len(frame)
            peer += left_peer_size(f)
    assert peer / total >= (1.4 if level else 1.15), peer / total


def test_version4_sensor_like_frames_match_the_reference(rng):
    """Palettes (quantised millimetres, noisy float16 bit patterns spread over their range), no
    palette (dense millimetres), holes: the library and the independent decoder agree."""
    h, w = 24, 40
    z = 1.0 + np.linspace(0, 2, w)[None, :] + np.linspace(0, 1, h)[:, None]
    noisy = (z * (1 + 0.004 * rng.standard_normal((h, w)))).astype(np.float16)
    noisy[rng.random((h, w)) < 0.05] = 0
    quantised = (400000 // (400000 // (z * 1000))).astype(np.uint16)
    quantised[rng.random((h, w)) < 0.1] = 0
    dense = (1500 + (np.arange(h * w) * 7) % 200 + rng.integers(0, 3, h * w)).astype(np.uint16).reshape(h, w)
    dense[rng.random((h, w)) < 0.05] = 0
    palettes = []
    for a in (noisy, quantised, dense):
        frame = DepthCodec().encode(a)
        assert frame[2] == 4
        assert np.array_equal(reference_decode(frame), a.view(np.uint16))
        palettes.append(struct.unpack_from("<I", frame, 16)[0])
    assert palettes[0] > 0 and palettes[1] > 0 and palettes[2] == 0


@needs_golden
def test_golden_recording(tmp_path):
    path = GOLDEN / "recording_float16_8x6x3.ckdepth"
    expected = np.frombuffer((GOLDEN / "recording_float16_8x6x3.f16").read_bytes(), "<f2").reshape(3, 6, 8)
    stamps = np.frombuffer((GOLDEN / "recording_float16_8x6x3.timestamps.f64").read_bytes(), "<f8")
    with DepthReader(path) as r:
        assert r.info == (8, 6, DepthKind.FLOAT16, 1, 3, 0)
        for i, (data, t) in enumerate(r):
            assert np.array_equal(bits(data), bits(expected[i].astype(np.float16))) and t == stamps[i]
    # the container, parsed independently: header, CRCs, record indices, timestamps, frames
    raw = path.read_bytes()
    assert raw[:8] == b"CKDEPTH\0"
    assert struct.unpack_from("<6I", raw, 8) == (1, 64, 8, 6, 1, 1) and raw[32:60] == bytes(28)
    assert struct.unpack_from("<I", raw, 60)[0] == zlib.crc32(raw[:60])
    off = 64
    for i in range(3):
        tag, size, index, ts, pcrc, hcrc = struct.unpack_from("<4sIQdII", raw, off)
        assert (tag, index, ts) == (b"CKFR", i, stamps[i]) and hcrc == zlib.crc32(raw[off:off + 28])
        payload = raw[off + 32:off + 32 + size]
        assert pcrc == zlib.crc32(payload)
        assert np.array_equal(reference_decode(payload).view(np.float16), expected[i].astype(np.float16))
        off += 32 + size
    assert off == len(raw)
    # the version-2, -3 and -4 recordings: same container (the frame codec in the header), frames
    # of that version
    with DepthReader(GOLDEN / "recording_float16_8x6x3.v2.ckdepth") as r:
        assert r.info == (8, 6, DepthKind.FLOAT16, 1, 3, 0)
        for i, (data, t) in enumerate(r):
            assert np.array_equal(bits(data), bits(expected[i].astype(np.float16))) and t == stamps[i]
    recordings = {v: (GOLDEN / f"recording_float16_8x6x3.v{v}.ckdepth").read_bytes() for v in (2, 3, 4)}
    for version, rec in recordings.items():
        assert struct.unpack_from("<6I", rec, 8) == (1, 64, 8, 6, 1, version) and rec[32:60] == bytes(28)
        off = 64
        for i in range(3):
            tag, size, index, ts, pcrc, hcrc = struct.unpack_from("<4sIQdII", rec, off)
            payload = rec[off + 32:off + 32 + size]
            assert (tag, index, ts, pcrc) == (b"CKFR", i, stamps[i], zlib.crc32(payload)) and payload[2] == version
            assert np.array_equal(reference_decode(payload).view(np.float16), expected[i].astype(np.float16))
            off += 32 + size
        assert off == len(rec)
    v3, v4 = recordings[3], recordings[4]
    for name in ("recording_float16_8x6x3.v3.ckdepth", "recording_float16_8x6x3.v4.ckdepth"):
        with DepthReader(GOLDEN / name) as r:
            assert all(np.array_equal(bits(d), bits(e.astype(np.float16))) for (d, _), e in zip(r, expected))
    # appending to a copy of the version-3 file keeps it version 3 (the version-3 encoder)
    old3 = tmp_path / "old3.ckdepth"
    old3.write_bytes(v3)
    with DepthWriter(old3, 8, 6, DepthKind.FLOAT16, append=True) as w:
        w.append(expected[1].astype(np.float16), 9.0)
    grown3 = old3.read_bytes()
    assert grown3[:len(v3)] == v3 and grown3[len(v3) + 32 + 2] == 3
    assert np.array_equal(reference_decode(grown3[len(v3) + 32:]).view(np.float16), expected[1].astype(np.float16))
    # writing the same frames again reproduces the version-4 file
    copy = tmp_path / "again.ckdepth"
    with DepthWriter(copy, 8, 6, DepthKind.FLOAT16) as w:
        for f, t in zip(expected, stamps):
            w.append(f.astype(np.float16), float(t))
    if golden_zstd_matches():
        assert copy.read_bytes() == v4
    with DepthReader(copy) as r:
        assert all(np.array_equal(bits(d), bits(e.astype(np.float16))) for (d, _), e in zip(r, expected))
    # appending to a copy of the version-1 file keeps it version 1, readable by version-1 readers
    old = tmp_path / "old.ckdepth"
    old.write_bytes(raw)
    with DepthWriter(old, 8, 6, DepthKind.FLOAT16, append=True) as w:
        w.append(expected[0].astype(np.float16), 9.0)
    grown = old.read_bytes()
    assert grown[:len(raw)] == raw and grown[len(raw) + 32 + 2] == 1
    assert np.array_equal(reference_decode(grown[len(raw) + 32:]).view(np.float16), expected[0].astype(np.float16))


# == crash safety: a writer killed mid-recording loses no complete frame =========================


def crash_frame(i, shape=(48, 64)):
    """Frame i of the crash test: derived from its index only, so the parent knows what was written."""
    h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    f = (1.0 + 0.01 * x + 0.02 * y + 0.001 * ((7 * x + 13 * y + 31 * i) % 17) + 0.0001 * (i % 1000)).astype(np.float16)
    f[(x * 5 + y * 3 + i) % 11 == 0] = 0
    return f


def crash_child(path, report_fd):
    """The forked child: append=True, then append frames forever, reporting each one after
    append() returned (one write() per line, atomic on a pipe). Never returns."""
    try:
        with DepthWriter(path, 64, 48, DepthKind.FLOAT16, append=True) as w:
            n = w.frame_count
            os.write(report_fd, f"start {n}\n".encode())
            while True:
                w.append(crash_frame(n), n * 0.01)
                os.write(report_fd, f"appended {n}\n".encode())
                n += 1
    finally:
        os._exit(1)  # never fall back into pytest


def _drain(fd, chunks):
    import select

    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, 65536)
        if not data:
            return False
        chunks.append(data)
    return True


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_killed_writer_loses_no_complete_frame(tmp_path):
    """A child process appends frames and reports each one; it is SIGKILLed at 15 random
    moments (some before or while it opens the file). After each kill the file must open and
    hold at least every reported frame, each bit-exact with its timestamp, and the next child,
    reopening with append=True, must continue right after the last complete frame.

    The child is forked (not a fresh interpreter) so that each round costs milliseconds, not an
    interpreter start-up; it only runs the writer loop and leaves with os._exit."""
    path = str(tmp_path / "crash.ckdepth")
    rnd = random.Random(20240611)
    verified = started = 0
    for attempt in range(15):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            crash_child(path, write_fd)
        os.close(write_fd)
        chunks = []
        if attempt % 5 == 4:
            time.sleep(rnd.uniform(0.0, 0.002))  # early: before or while the child opens the file
        else:
            deadline = time.monotonic() + 60  # the child's first line; generous for loaded sanitizer runs
            while not chunks and time.monotonic() < deadline:
                _drain(read_fd, chunks)
                time.sleep(0.0005)
            end = time.monotonic() + rnd.uniform(0.0, 0.05)
            while time.monotonic() < end:
                _drain(read_fd, chunks)
                time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        while _drain(read_fd, chunks):
            pass
        os.close(read_fd)
        lines = b"".join(chunks).decode().splitlines()
        appended = [int(s.split()[1]) for s in lines if s.startswith("appended ")]
        starts = [int(s.split()[1]) for s in lines if s.startswith("start ")]
        if starts:
            started += 1
            assert starts[0] == verified, "reopening with append=True did not continue after the last frame"
        if not os.path.exists(path):
            assert not appended
            continue
        with DepthReader(path) as r:  # the 64-byte header is one write(): a kill cannot tear it
            n = len(r)
            assert n >= (appended[-1] + 1 if appended else verified), (attempt, n, appended[-1:])
            for i in range(verified, n):  # the new frames, bit-exact, with their timestamps
                data, t = r.read(i)
                assert np.array_equal(bits(data), bits(crash_frame(i))) and t == i * 0.01, i
            verified = n
    assert started >= 10 and verified > 0
    # a final reopen in this process continues the recording
    with DepthWriter(path, 64, 48, DepthKind.FLOAT16, append=True) as w:
        assert w.frame_count == verified
        w.append(crash_frame(verified), verified * 0.01)
    with DepthReader(path) as r:
        assert len(r) == verified + 1 and r.info.torn_bytes == 0
        for i in range(0, verified + 1, max(1, verified // 50)):
            assert np.array_equal(bits(r.read(i).data), bits(crash_frame(i)))
