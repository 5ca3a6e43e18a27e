"""Transcoding between MultiScan streams and .ckdepth, checked with independent readers."""

import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi

W, H = 32, 24


def frames(n):
    rng = np.random.default_rng(5)
    out = []
    for i in range(n):
        d = (1.0 + 0.01 * i + 0.002 * rng.standard_normal((H, W))).astype(np.float16)
        d[rng.random((H, W)) < 0.03] = 0
        out.append(d)
    return out


def multiscan_decode(path, dtype, frame_bytes):
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    data = bytearray()
    with open(path, "rb") as f:
        while chunk := f.read(16384):
            data += d.decompress(chunk)
    return [np.frombuffer(bytes(data[i:i + frame_bytes]), dtype) for i in range(0, len(data) - frame_bytes + 1, frame_bytes)]


def test_zstream_to_ckdepth_and_back(tmp_path):
    src = frames(7)
    # A MultiScan stream written by Python's zlib the way the app does (level 5, full flushes).
    enc = zlib.compressobj(5, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = b"".join(enc.compress(f.tobytes()) + enc.flush(zlib.Z_FULL_FLUSH) for f in src) + enc.flush()
    (tmp_path / "a.depth.zlib").write_bytes(raw)
    count = np.zeros(1, np.uint64)
    times = np.arange(7, dtype=np.float64) * 0.25
    _ffi.lib.ck_transcode_zstream_to_ckdepth(count, str(tmp_path / "a.ckdepth").encode(), str(tmp_path / "a.depth.zlib").encode(),
                                             W, H, 2, times.ctypes.data, 7, 0)
    assert count[0] == 7
    with ck.DepthReader(tmp_path / "a.ckdepth") as r:
        assert len(r) == 7
        for i, f in enumerate(src):
            data, t = r.read(i, np.float16)
            assert np.array_equal(data.view(np.uint16), f.view(np.uint16)) and t == times[i]
    # Existing destination without the overwrite flag: CK_E_STATE.
    with pytest.raises(ck.StateError):
        _ffi.lib.ck_transcode_zstream_to_ckdepth(count, str(tmp_path / "a.ckdepth").encode(),
                                                 str(tmp_path / "a.depth.zlib").encode(), W, H, 2, None, 0, 0)
    # Back to a MultiScan stream: MultiScan's decoder reads it bit-exactly.
    _ffi.lib.ck_transcode_ckdepth_to_zstream(count, str(tmp_path / "b.depth.zlib").encode(), str(tmp_path / "a.ckdepth").encode(), 0, 0)
    back = multiscan_decode(tmp_path / "b.depth.zlib", np.float16, W * H * 2)
    assert count[0] == 7 and len(back) == 7
    for b, f in zip(back, src):
        assert np.array_equal(b.view(np.uint16), f.ravel().view(np.uint16))


def test_truncated_stream_keeps_complete_frames(tmp_path):
    src = frames(5)
    enc = zlib.compressobj(1, zlib.DEFLATED, -zlib.MAX_WBITS)
    parts = [enc.compress(f.tobytes()) + enc.flush(zlib.Z_FULL_FLUSH) for f in src]
    cut = b"".join(parts[:3]) + parts[3][: len(parts[3]) // 2]   # a crash inside frame 3
    (tmp_path / "c.depth.zlib").write_bytes(cut)
    count = np.zeros(1, np.uint64)
    _ffi.lib.ck_transcode_zstream_to_ckdepth(count, str(tmp_path / "c.ckdepth").encode(), str(tmp_path / "c.depth.zlib").encode(),
                                             W, H, 2, None, 0, 0)
    assert count[0] == 3


def test_millimetre_files_cannot_become_multiscan_streams(tmp_path):
    with ck.DepthWriter(tmp_path / "mm.ckdepth", W, H, "mm") as w:
        w.append(np.full((H, W), 1000, np.uint16), 0.0)
    count = np.zeros(1, np.uint64)
    with pytest.raises(ck.InvalidArgumentError):
        _ffi.lib.ck_transcode_ckdepth_to_zstream(count, str(tmp_path / "x.zlib").encode(), str(tmp_path / "mm.ckdepth").encode(), 0, 0)
    with pytest.raises(ck.NotFoundError):
        _ffi.lib.ck_transcode_ckdepth_to_zstream(count, str(tmp_path / "y.zlib").encode(), str(tmp_path / "missing.ckdepth").encode(), 0, 0)


def test_python_wrappers(tmp_path):
    src = frames(3)
    with ck.DepthWriter(tmp_path / "p.ckdepth", W, H, "float16") as w:
        for i, f in enumerate(src):
            w.append(f, float(i))
    assert ck.ckdepth_to_zstream(tmp_path / "p.ckdepth", tmp_path / "p.depth.zlib", index=True) == 3
    assert (tmp_path / "p.depth.zlib.idx").exists()
    assert ck.zstream_to_ckdepth(tmp_path / "p.depth.zlib", tmp_path / "q.ckdepth", W, H, timestamps=[5, 6, 7]) == 3
    with ck.DepthReader(tmp_path / "q.ckdepth") as r:
        assert r.read(2, np.float16)[1] == 7


def test_archival_transcode_writes_the_same_frames_smaller(tmp_path):
    """Issue 24: CK_TRANSCODE_ARCHIVAL / archival=True writes the .ckdepth at the archival level:
    the same version-4 frames, no larger, read back exactly; unknown flag bits are refused."""
    w_, h_ = 128, 96  # large enough for zstd 19 to find what zstd 1 does not
    rng = np.random.default_rng(24)
    y, x = np.mgrid[0:h_, 0:w_]
    src = []
    for i in range(6):
        z = np.round((1.2 + 0.004 * x + 0.006 * y + 0.01 * i) / 0.02) * 0.02  # quantised, as stereo depth
        z[rng.random((h_, w_)) < 0.02] += 0.5                                  # speckle
        d = z.astype(np.float16)
        d[rng.random((h_, w_)) < 0.03] = 0
        src.append(d)
    with ck.DepthWriter(tmp_path / "p.ckdepth", w_, h_, "float16") as w:
        for i, f in enumerate(src):
            w.append(f, float(i))
    assert ck.ckdepth_to_zstream(tmp_path / "p.ckdepth", tmp_path / "p.depth.zlib") == 6
    assert ck.zstream_to_ckdepth(tmp_path / "p.depth.zlib", tmp_path / "fast.ckdepth", w_, h_) == 6
    assert ck.zstream_to_ckdepth(tmp_path / "p.depth.zlib", tmp_path / "arch.ckdepth", w_, h_, archival=True) == 6
    assert (tmp_path / "arch.ckdepth").stat().st_size < 0.97 * (tmp_path / "fast.ckdepth").stat().st_size
    with ck.DepthReader(tmp_path / "arch.ckdepth") as r:
        for i, f in enumerate(src):
            assert np.array_equal(r.read(i, np.float16)[0].view(np.uint16), f.astype(np.float16).view(np.uint16))
    raw = (tmp_path / "arch.ckdepth").read_bytes()
    assert raw[28] == 4 and raw[64 + 32 + 2] == 4
    count = np.zeros(1, np.uint64)
    with pytest.raises(ck.InvalidArgumentError):
        _ffi.lib.ck_transcode_zstream_to_ckdepth(count, str(tmp_path / "x.ckdepth").encode(),
                                                 str(tmp_path / "p.depth.zlib").encode(), w_, h_, 2, None, 0, 16)
