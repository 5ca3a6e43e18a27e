"""MultiScan-compatible streams (capturekit.zstream): files the library writes must decode with
MultiScan's own method, bit-exactly; streams Python's zlib writes must read back; truncation,
damage, the side index, a SIGKILLed writer, and the binding's object rules."""

from __future__ import annotations

import ctypes
import gc
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

import capturekit as ck
from capturekit import ZStreamKind, ZStreamReader, ZStreamWriter, zstream
from capturekit import _ffi

HEADER = Path(__file__).resolve().parents[3] / "include" / "capturekit" / "ck_depth.h"
W, H = 256, 192

# ------------------------------------------------------------------------------------------
# MultiScan's decoder, reimplemented as their scripts do it (server/scripts/depth_decode.py):
# raw-DEFLATE decompressobj fed 16 KiB chunks, then flush(); the frame count is the decompressed
# size // (width * height * bytes per pixel); frames are float16 (depth) or uint8 (confidence).
# ------------------------------------------------------------------------------------------


def multiscan_decode(path, width, height, dtype):
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    out = bytearray()
    with open(path, "rb") as f:
        buffer = f.read(4096 * 4)
        while buffer:
            out += d.decompress(buffer)
            buffer = f.read(4096 * 4)
        out += d.flush()
    frame_size = width * height * np.dtype(dtype).itemsize
    num_frames = len(out) // frame_size
    frames = [np.frombuffer(bytes(out), dtype=dtype, count=width * height, offset=frame_size * i).reshape(height, width)
              for i in range(num_frames)]
    return frames, d


def bits(a):
    """float16 arrays compared by bit pattern (NaN-safe, -0 != +0)."""
    return a.view(np.uint16) if a.dtype == np.float16 else a


def look_at(eye, target):
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    f = target - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, [0.0, 1.0, 0.0])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = r, u, -f, eye
    return m


@pytest.fixture(scope="module")
def scene_frames():
    """12 realistic 256x192 frames from the library's synthetic scene: float32 depth + confidence."""
    k = ck.Intrinsics(fx=210.0, fy=210.0, cx=128.0, cy=96.0, width=W, height=H)
    depth, conf = [], []
    with ck.Scene(7) as scene:
        for i in range(12):
            a = 0.35 * i
            pose = look_at((1.6 * np.sin(a), 1.5 if i % 2 else 0.9, 1.6 * np.cos(a)), (0.0, 0.3, 0.0))
            d, c = scene.render_depth(pose, k, i)
            depth.append(d)
            conf.append(c)
    return depth, conf


def f16_of(depth32):
    """float32 metres -> float16 by the depth rules (valid scene depths: NumPy's cast is the same)."""
    h = ck.depth.convert(depth32, np.float16)
    assert np.array_equal(bits(h), bits(depth32.astype(np.float16)))
    return h


# ------------------------------------------------------------------------------------------
# Compatibility: our files through MultiScan's decoder
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0, 1, 5, 9])
@pytest.mark.parametrize("index", [False, True])
def test_multiscan_decoder_reads_our_depth_and_confidence_bit_exactly(tmp_path, scene_frames, level, index):
    depth, conf = scene_frames
    dpath, cpath = tmp_path / "scan.depth.zlib", tmp_path / "scan.confidence.zlib"
    with ZStreamWriter(dpath, W, H, "depth", level=level, index=index) as w:
        for i, d in enumerate(depth):  # float32 and float16 input alternate
            w.append(d if i % 2 else f16_of(d))
        assert w.frame_count == len(depth) == len(w)
    with ZStreamWriter(cpath, W, H, "confidence", level=level, index=index) as w:
        for c in conf:
            w.append(c)
    frames, d = multiscan_decode(dpath, W, H, np.float16)
    assert d.eof and d.unused_data == b""  # a complete, terminated raw DEFLATE stream
    assert len(frames) == len(depth)
    for got, want in zip(frames, depth):
        assert np.array_equal(bits(got), bits(f16_of(want)))
    cframes, d = multiscan_decode(cpath, W, H, np.uint8)
    assert d.eof and len(cframes) == len(conf)
    for got, want in zip(cframes, conf):
        assert np.array_equal(got, want)
    assert (tmp_path / "scan.depth.zlib.idx").exists() == index
    # A zlib-wrapped decoder (RFC 1950) must NOT accept the file: it is raw DEFLATE.
    with pytest.raises(zlib.error):
        zlib.decompress(dpath.read_bytes())


def test_realistic_ratio_and_sizes(tmp_path, scene_frames):
    depth, _ = scene_frames
    path = tmp_path / "r.depth.zlib"
    with ZStreamWriter(path, W, H) as w:
        for d in depth:
            w.append(d)
    ratio = len(depth) * W * H * 2 / path.stat().st_size
    assert ratio > 1.5, ratio  # float16 + DEFLATE on LiDAR-like frames


def test_side_index_offsets_are_restart_points_for_pythons_zlib(tmp_path, scene_frames):
    depth, _ = scene_frames
    path = tmp_path / "i.depth.zlib"
    with ZStreamWriter(path, W, H, index=True) as w:
        for d in depth:
            w.append(d)
    data = path.read_bytes()
    raw = (tmp_path / "i.depth.zlib.idx").read_bytes()
    offsets = struct.unpack(f"<{len(raw) // 8}Q", raw)
    assert len(offsets) == len(depth) and offsets[0] == 0 and list(offsets) == sorted(set(offsets))
    for i, off in enumerate(offsets):
        assert off == 0 or data[off - 4:off] == b"\x00\x00\xff\xff"  # right after a full flush
        d = zlib.decompressobj(-zlib.MAX_WBITS)  # a fresh inflater, started at the offset
        out = d.decompress(data[off:]) + d.flush()
        assert out == b"".join(f16_of(x).tobytes() for x in depth[i:]), i


# ------------------------------------------------------------------------------------------
# Compatibility: Python zlib's streams through our reader
# ------------------------------------------------------------------------------------------


def python_stream(frames, level, flush):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    if flush == "one shot":
        return c.compress(b"".join(f.tobytes() for f in frames)) + c.flush()
    parts = []
    for f in frames:
        parts.append(c.compress(f.tobytes()))
        if flush is not None:
            parts.append(c.flush(flush))
    parts.append(c.flush())
    return b"".join(parts)


@pytest.mark.parametrize("flush", ["one shot", None, zlib.Z_SYNC_FLUSH, zlib.Z_FULL_FLUSH])
@pytest.mark.parametrize("level", [1, 5, 9])
def test_reader_reads_streams_from_pythons_zlib(tmp_path, scene_frames, flush, level):
    depth, conf = scene_frames
    f16 = [f16_of(d) for d in depth]
    path = tmp_path / "py.depth.zlib"
    path.write_bytes(python_stream(f16, level, flush))
    with ZStreamReader(path, W, H, "depth") as r:
        assert len(r) == len(f16)
        for i in [7, 2, 11, 0, 5]:  # random access first: seeks, restarts, fallbacks
            assert np.array_equal(bits(r.read(i)), bits(f16[i]))
            assert np.array_equal(r.read(i, np.float32), f16[i].astype(np.float32))
        got = list(r)
        assert len(got) == len(f16) and all(np.array_equal(bits(a), bits(b)) for a, b in zip(got, f16))
    cpath = tmp_path / "py.confidence.zlib"
    cpath.write_bytes(python_stream(conf, level, flush))
    with ZStreamReader(cpath, W, H, "confidence") as r:
        assert [np.array_equal(a, b) for a, b in zip(r, conf)] == [True] * len(conf)


def test_stream_without_final_block_and_zlib_wrapped_stream(tmp_path, scene_frames):
    depth, _ = scene_frames
    f16 = [f16_of(d) for d in depth[:3]]
    # A recorder killed after its last full flush: no final block, every frame there.
    c = zlib.compressobj(5, zlib.DEFLATED, -15)
    data = b"".join(c.compress(f.tobytes()) + c.flush(zlib.Z_FULL_FLUSH) for f in f16)
    path = tmp_path / "open.depth.zlib"
    path.write_bytes(data)
    with ZStreamReader(path, W, H) as r:
        assert len(r) == 3 and len(list(r)) == 3
        assert r.next() is None  # the end, cleanly
    # zlib.compress() output (RFC 1950) is not a MultiScan stream: CorruptError, with a hint.
    path.write_bytes(zlib.compress(b"".join(f.tobytes() for f in f16)))
    with ZStreamReader(path, W, H) as r:
        with pytest.raises(ck.CorruptError, match=r"frame 0.*RFC 1950"):
            len(r)


# ------------------------------------------------------------------------------------------
# Truncation and damage
# ------------------------------------------------------------------------------------------


def small_recording(tmp_path, n=4, w=9, h=5):
    rng = np.random.default_rng(3)
    frames = [(1 + rng.random((h, w)) * 0.01 + i).astype(np.float16) for i in range(n)]
    frames[1][:] = 0
    path = tmp_path / "small.depth.zlib"
    with ZStreamWriter(path, w, h, index=True) as wr:
        for f in frames:
            wr.append(f)
    return path, frames, path.read_bytes()


def test_every_truncation_yields_the_complete_frames_like_multiscans_decoder(tmp_path):
    path, frames, data = small_recording(tmp_path)
    h, w = frames[0].shape
    cut = tmp_path / "cut.depth.zlib"
    outcomes = set()
    for n in range(len(data) + 1):
        cut.write_bytes(data[:n])
        ms, _ = multiscan_decode(cut, w, h, np.float16)  # what MultiScan's tools recover
        got, error = [], None
        with ZStreamReader(cut, w, h) as r:
            try:
                for f in r:
                    got.append(f.copy())
            except ck.CorruptError as e:
                error = e
            assert len(r) == len(got)  # the count skips a cut tail
        assert len(got) == len(ms), n
        assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(got, frames)), n
        # Exactly at a frame boundary: a clean end; inside a frame: CorruptError naming it.
        whole = zlib.decompressobj(-15)
        size = len(whole.decompress(data[:n]))
        if size % (w * h * 2):
            assert error is not None and f"frame {len(got)}" in error.message, n
            outcomes.add("corrupt")
        else:
            assert error is None, (n, error)
            outcomes.add("end")
    assert outcomes == {"corrupt", "end"}


def test_damaged_bytes_never_crash(tmp_path):
    path, frames, data = small_recording(tmp_path)
    h, w = frames[0].shape
    bad = tmp_path / "bad.depth.zlib"
    rnd = random.Random(5)
    detected = 0
    for pos in range(len(data)):
        b = bytearray(data)
        b[pos] ^= rnd.choice([0x01, 0x10, 0x80, 0xFF])
        bad.write_bytes(bytes(b))
        with ZStreamReader(bad, w, h) as r:
            try:
                list(r)
            except ck.CorruptError as e:
                detected += 1
                assert re.search(r"frame \d+", e.message)
            for i in (3, 0):
                try:
                    r.read(i, np.float32)
                except (ck.CorruptError, IndexError):
                    pass
    assert detected > len(data) // 3


# ------------------------------------------------------------------------------------------
# A writer killed at random moments loses no frame whose append returned
# ------------------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from capturekit import ZStreamWriter

    path, index = sys.argv[1], sys.argv[2] == "1"
    def frame(i):
        rng = np.random.default_rng(i)
        return (0.5 + rng.random((48, 64), dtype=np.float32) * 4).astype(np.float32)

    with ZStreamWriter(path, 64, 48, "depth", level=1, index=index, overwrite=True) as w:
        print("open", flush=True)
        i = 0
        while True:
            w.append(frame(i))
            print("appended", i, flush=True)
            i += 1
    """
)


def crash_frame(i):
    rng = np.random.default_rng(i)
    return (0.5 + rng.random((48, 64), dtype=np.float32) * 4).astype(np.float32)


def test_sigkilled_writer_loses_no_appended_frame(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(ck.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    env["CAPTUREKIT_LIBRARY"] = _ffi.library_path
    script = tmp_path / "writer.py"
    script.write_text(CHILD)
    rnd = random.Random(20240611)
    checked = 0
    for attempt in range(8):
        path = tmp_path / f"crash{attempt}.depth.zlib"
        proc = subprocess.Popen([sys.executable, str(script), str(path), str(attempt % 2)], stdout=subprocess.PIPE, env=env)
        lines, buf = [], b""
        deadline = time.monotonic() + 30
        kill_at = None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.05)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                *done, buf = buf.split(b"\n")
                lines += [x.decode() for x in done]
                if kill_at is None and "open" in lines:
                    kill_at = time.monotonic() + rnd.uniform(0.0, 0.15)
            if kill_at is not None and time.monotonic() >= kill_at:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        rest = proc.stdout.read()
        proc.stdout.close()
        lines += [x.decode() for x in (buf + rest).split(b"\n") if x]
        assert "open" in lines, f"the writer did not start: {proc.returncode}"
        # (a kill can cut the last report short: only whole reports count)
        appended = [int(m.group(1)) for m in map(re.compile(r"appended (\d+)$").match, lines) if m]
        n_appended = appended[-1] + 1 if appended else 0
        want = [ck.depth.convert(crash_frame(i), np.float16) for i in range(n_appended + 1)]
        # Our reader: every reported frame (at most one more, whose report the kill beat).
        with ZStreamReader(path, 64, 48) as r:
            got = []
            try:
                for f in r:
                    got.append(f.copy())
            except ck.CorruptError:
                pass  # killed inside a write: the torn frame is reported, the earlier ones were delivered
            assert n_appended <= len(got) <= n_appended + 1, (attempt, len(got), n_appended)
            assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(got, want))
        # And MultiScan's decoder recovers the same frames from the unterminated file.
        ms, _ = multiscan_decode(path, 64, 48, np.float16)
        assert len(ms) == len(got) and all(np.array_equal(bits(a), bits(b)) for a, b in zip(ms, got))
        checked += n_appended
    assert checked > 0


# ------------------------------------------------------------------------------------------
# The binding: objects, errors, dtypes
# ------------------------------------------------------------------------------------------


def test_default_level_matches_the_header():
    assert zstream.ZSTREAM_DEFAULT_LEVEL == _ffi.CK_ZSTREAM_DEFAULT_LEVEL
    if HEADER.exists():
        text = HEADER.read_text()
        assert int(re.search(r"#define CK_ZSTREAM_DEFAULT_LEVEL (\d+)", text).group(1)) == _ffi.CK_ZSTREAM_DEFAULT_LEVEL
        assert int(re.search(r"#define CK_ZSTREAM_INDEX (\d+)u", text).group(1)) == _ffi.CK_ZSTREAM_INDEX


def test_objects_close_idempotently_and_refuse_use_after_close(tmp_path):
    path = tmp_path / "o.depth.zlib"
    frame = np.full((3, 4), 1.25, np.float32)
    w = ZStreamWriter(path, 4, 3)
    assert isinstance(w._handle, ctypes.c_void_p) and isinstance(w._handle, _ffi.ck_zstream_writer_p)
    w.append(frame)
    assert "1 frames" in repr(w)
    w.close()
    w.close()
    assert w.closed and "closed" in repr(w)
    with pytest.raises(ValueError, match="closed"):
        w.append(frame)
    with pytest.raises(ValueError, match="closed"):
        w.frame_count
    r = ZStreamReader(path, 4, 3)
    assert isinstance(r._handle, _ffi.ck_zstream_reader_p)
    assert len(r) == 1
    with r:
        assert np.array_equal(r[0], np.full((3, 4), 1.25, np.float16))
        assert r[-1].dtype == np.float16
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.read(0)
    with pytest.raises(ValueError, match="closed"):
        list(r)


def test_forgotten_writer_is_closed_by_the_finalizer(tmp_path):
    path = tmp_path / "f.depth.zlib"
    w = ZStreamWriter(path, 4, 3)
    w.append(np.ones((3, 4), np.float16))
    del w
    gc.collect()
    frames, d = multiscan_decode(path, 4, 3, np.float16)
    assert len(frames) == 1 and d.eof  # the final block was written


def test_argument_errors(tmp_path):
    path = tmp_path / "a.depth.zlib"
    with ZStreamWriter(path, 4, 3, index=True) as w:
        with pytest.raises(TypeError, match="float32 or float16"):
            w.append(np.ones((3, 4), np.float64))
        with pytest.raises(TypeError):
            w.append(np.ones((3, 4), np.uint16))
        with pytest.raises(ValueError, match=r"shape \(3, 4\)"):
            w.append(np.ones((4, 3), np.float32))
        w.append(np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))  # copied to C order
    with ZStreamReader(path, 4, 3) as r:
        assert np.array_equal(r.read(0, np.float32), np.arange(12, dtype=np.float32).reshape(3, 4))
        assert np.array_equal(r.read(0, "mm"), np.arange(12, dtype=np.uint16).reshape(3, 4) * 1000)
        with pytest.raises(IndexError):
            r.read(1)
        with pytest.raises(IndexError):
            r.read(-2)
        with pytest.raises(ck.InvalidArgumentError, match="dst_format"):
            r.read(0, np.uint8)
        with pytest.raises(TypeError):
            r.read(0, np.float64)
        out = np.zeros((3, 4), np.float32)
        assert r.read(0, np.float32, out=out) is out and out[2, 3] == 11
        with pytest.raises(ValueError, match="shape"):
            r.read(0, np.float32, out=np.zeros((4, 3), np.float32))
        assert r.next(np.float32) is None  # after read(0) the next frame would be 1: the end
        assert np.array_equal(r.read(0), r.read(-1))
    with ZStreamWriter(tmp_path / "c.confidence.zlib", 4, 3, ZStreamKind.CONFIDENCE) as w:
        with pytest.raises(TypeError, match="uint8"):
            w.append(np.ones((3, 4), np.float32))
        w.append(np.full((3, 4), 2, np.uint8))
    with ZStreamReader(tmp_path / "c.confidence.zlib", 4, 3, "confidence") as r:
        assert r.read(0).dtype == np.uint8 and int(r.read(0)[0, 0]) == 2
        with pytest.raises(ck.InvalidArgumentError):
            r.read(0, np.float32)
    with pytest.raises(ck.StateError, match="exists"):
        ZStreamWriter(path, 4, 3)
    (tmp_path / "new.depth.zlib.idx").write_bytes(b"x")
    with pytest.raises(ck.StateError, match=r"\.idx exists"):
        ZStreamWriter(tmp_path / "new.depth.zlib", 4, 3, index=True)
    assert not (tmp_path / "new.depth.zlib").exists()
    ZStreamWriter(path, 4, 3, overwrite=True).close()
    assert not (tmp_path / "a.depth.zlib.idx").exists()  # the replaced stream's index is gone
    with pytest.raises(ck.InvalidArgumentError, match="level"):
        ZStreamWriter(tmp_path / "l.depth.zlib", 4, 3, level=10)
    with pytest.raises(ck.InvalidArgumentError, match="width"):
        ZStreamWriter(tmp_path / "w.depth.zlib", 0, 3)
    with pytest.raises(ValueError):
        ZStreamWriter(tmp_path / "k.depth.zlib", 4, 3, kind="rgb")
    with pytest.raises(ValueError, match="NUL"):
        ZStreamWriter("a\0b", 4, 3)
    with pytest.raises(ck.NotFoundError):
        ZStreamReader(tmp_path / "missing.depth.zlib", 4, 3)
    with pytest.raises(ck.NotFoundError):
        ZStreamWriter(tmp_path / "no" / "dir.depth.zlib", 4, 3)
    with pytest.raises(ck.CaptureKitIOError):
        ZStreamReader(tmp_path / "a.depth.zlib" / "x", 4, 3)
    # A failing device: the append raises CaptureKitIOError, later appends StateError.
    if os.access("/dev/full", os.W_OK):
        w = ZStreamWriter("/dev/full", 4, 3, overwrite=True)
        with pytest.raises(ck.CaptureKitIOError):
            w.append(np.ones((3, 4), np.float32))
        with pytest.raises(ck.StateError, match="failed earlier"):
            w.append(np.ones((3, 4), np.float32))
        with pytest.raises(ck.CaptureKitIOError):
            w.close()
        w.close()  # idempotent even after a failing close
