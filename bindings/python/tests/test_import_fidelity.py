"""Imports that keep what they read (issue 19), and the scan reader's bounds on what files declare.

Independent expectations: the source arrays written here with Pillow and Python's zlib, the source
JSON parsed with Python's json, the exported files read back the same way."""

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit.importers import export_multiscan, import_scan

from test_scan import FIXTURES, raw_deflate, write_stray

# ---- a 74-byte 16-bit PNG declaring 32768 x 32768 ------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def bomb_png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 32768, 32768, 16, 0, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(bytes(1 << 20), 9)[:17]) + _chunk(b"IEND", b"")
    assert len(png) == 74
    return png


def test_bomb_png_as_first_stray_depth_is_refused_at_open(tmp_path):
    write_stray(tmp_path / "s", n=3)
    (tmp_path / "s" / "depth" / "000000.png").write_bytes(bomb_png())
    with pytest.raises(ck.CorruptError) as e:
        ck.Scan(tmp_path / "s")
    msg = str(e.value)
    assert "000000.png" in msg and "32768 x 32768" in msg and "1920 x 1440" in msg


def test_bomb_png_as_a_later_stray_depth_is_refused_before_allocating(tmp_path):
    depth, conf, _ = write_stray(tmp_path / "s", n=3)
    (tmp_path / "s" / "depth" / "000001.png").write_bytes(bomb_png())
    (tmp_path / "s" / "confidence" / "000002.png").write_bytes(bomb_png())
    with ck.Scan(tmp_path / "s") as s:
        assert s.depth_size == (16, 12)
        assert np.array_equal(s.depth(0, np.uint16), depth[0])
        with pytest.raises(ck.CorruptError, match=r"000001\.png: 32768 x 32768.*16 x 12"):
            s.depth(1, np.uint16)
        with pytest.raises(ck.CorruptError, match=r"000002\.png: 32768 x 32768.*16 x 12"):
            s.confidence(2)
        assert np.array_equal(s.confidence(0), conf[0])


def test_bomb_png_in_a_dataset_is_refused_before_allocating(tmp_path):
    k = ck.Intrinsics(20, 20, 8, 6, 16, 12)
    mm = np.full((12, 16), 1234, np.uint16)
    ds = ck.Dataset(tmp_path / "d", ck.DatasetOptions(start_time_unix=1.8e9, device_id="rig"))
    ds.add_frame(np.eye(4, dtype=np.float32), k, rgb=np.zeros((12, 16, 3), np.uint8), depth=mm, timestamp=0.0)
    ds.finalize()
    ds.close()
    (tmp_path / "d" / "depth" / "000000.png").write_bytes(bomb_png())
    with ck.Dataset.open_readonly(tmp_path / "d") as d:
        with pytest.raises(ck.CorruptError, match=r"000000\.png: declares 32768 x 32768 depth, larger than the frame's 16 x 12"):
            d.depth(0, np.uint16)


@pytest.mark.parametrize("where", ["stray", "dataset"])
def test_bomb_png_never_aborts_a_host_with_little_memory(tmp_path, where):
    """The host's address space is capped at 3 GiB: today's 2 GiB allocations (plus the caller's
    buffer sized from what the file declares) abort the process; the fix refuses the file first.
    (Under AddressSanitizer the cap is left off: its shadow memory needs the address space; the
    refusal is still checked.)"""
    write_stray(tmp_path / "s", n=2)
    (tmp_path / "s" / "depth" / "000000.png").write_bytes(bomb_png())
    if where == "dataset":
        ds = ck.Dataset(tmp_path / "d", ck.DatasetOptions(start_time_unix=1.8e9, device_id="rig"))
        ds.add_frame(np.eye(4, dtype=np.float32), ck.Intrinsics(20, 20, 8, 6, 16, 12), rgb=np.zeros((12, 16, 3), np.uint8),
                     depth=np.ones((12, 16), np.uint16), timestamp=0.0)
        ds.finalize()
        ds.close()
        (tmp_path / "d" / "depth" / "000000.png").write_bytes(bomb_png())
    under_asan = "yes" if "asan" in os.environ.get("LD_PRELOAD", "") else "no"
    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        import capturekit as ck
        if {under_asan!r} == "no":  # AddressSanitizer reserves terabytes of shadow address space
            resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        try:
            if {where!r} == "stray":
                with ck.Scan({str(tmp_path / "s")!r}) as s:
                    s.depth(0, np.uint16)
            else:
                with ck.Dataset.open_readonly({str(tmp_path / "d")!r}) as d:
                    d.depth(0, np.uint16)
        except ck.CorruptError as e:
            print("CORRUPT", e)
            sys.exit(0)
        print("no error")
        sys.exit(3)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "CORRUPT" in r.stdout and "32768 x 32768" in r.stdout


# ---- timestamps going back -----------------------------------------------------------------------


def test_duration_is_the_span_when_timestamps_go_back(tmp_path):
    write_stray(tmp_path / "s", n=4)
    p = tmp_path / "s" / "odometry.csv"
    lines = p.read_text().splitlines()
    # Frame 2's clock went back (a restarted clock): 100.5, 100.517, 90.0, 100.55
    f = lines[3].split(",")
    f[0] = "90.000000"
    lines[3] = ",".join(f)
    p.write_text("\n".join(lines) + "\n")
    with ck.Scan(tmp_path / "s") as s:
        ts = [s.frame(i).timestamp for i in range(4)]
        assert ts[2] == 90.0 and ts[3] < ts[1] + 1  # file order, not sorted
        assert s.duration == pytest.approx(max(ts) - min(ts))
        assert s.duration > 0


# ---- per-frame intrinsics in odometry.csv --------------------------------------------------------


def write_stray_per_frame_k(root, n=5):
    """A newer Stray Scanner capture: fx, fy, cx, cy on every odometry line, fx drifting."""
    depth, conf, poses = write_stray(root, n=n)
    lines = (root / "odometry.csv").read_text().splitlines()
    ks = [(1590.0 + 3.75 * i, 1591.0 + 3.75 * i, 959.1 - 0.5 * i, 721.3 + 0.25 * i) for i in range(n)]
    out = [lines[0] + ", fx, fy, cx, cy"]
    for i, line in enumerate(lines[1:]):
        out.append(line + ", " + ", ".join(f"{v:.4f}" for v in ks[i]))
    (root / "odometry.csv").write_text("\n".join(out) + "\n")
    return depth, conf, poses, ks


def test_stray_per_frame_intrinsics(tmp_path):
    _, _, _, ks = write_stray_per_frame_k(tmp_path / "s")
    with ck.Scan(tmp_path / "s") as s:
        for i, k in enumerate(ks):
            got = s.frame(i).intrinsics
            assert (got.fx, got.fy, got.cx, got.cy) == pytest.approx(k, abs=1e-3), i
            assert (got.width, got.height) == (1920, 1440)
    # Without the columns, camera_matrix.csv's for every frame.
    write_stray(tmp_path / "old", n=3)
    with ck.Scan(tmp_path / "old") as s:
        assert all(s.frame(i).intrinsics.fx == pytest.approx(1597.5) for i in range(3))
    # Some but not all four columns: refused, naming the file.
    p = tmp_path / "s" / "odometry.csv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0].replace(", cy", ", cz")] + lines[1:]) + "\n")
    with pytest.raises(ck.CorruptError, match="odometry.csv: the header names some of fx, fy, cx, cy"):
        ck.Scan(tmp_path / "s")


# ---- Stray import: captured depth is the source's millimetres ------------------------------------

def _cv2():
    return pytest.importorskip("cv2")


def _write_video(path, n, w, h):
    cv = _cv2()
    vw = cv.VideoWriter(str(path), cv.VideoWriter_fourcc(*"mp4v"), 60, (w, h))
    assert vw.isOpened()
    for i in range(n):
        vw.write(np.full((h, w, 3), 10 + 20 * i, np.uint8))
    vw.release()


def test_stray_import_keeps_depth_and_per_frame_intrinsics(tmp_path):
    from PIL import Image

    root = tmp_path / "s"
    _, _, _, ks = write_stray_per_frame_k(root, n=4)
    # 256 x 192 depth with values float16 cannot hold (4097 mm, 8001 mm: float16 metres round them).
    rng = np.random.default_rng(3)
    src = []
    for i in range(4):
        d = rng.integers(200, 9000, (192, 256)).astype(np.uint16)
        d[0, :4] = [4097, 8001, 65535, 0]
        assert round(float(np.float16(4.097)) * 1000) != 4097 and round(float(np.float16(8.001)) * 1000) != 8001
        src.append(d)
        Image.fromarray(d).save(root / "depth" / f"{i:06d}.png")
        Image.fromarray(np.full((192, 256), 2, np.uint8)).save(root / "confidence" / f"{i:06d}.png")
    _write_video(root / "rgb.mp4", 4, 192, 144)
    r = import_scan(root, tmp_path / "ds", every=2)
    assert r["captured"] == 2
    with ck.Dataset.open_readonly(tmp_path / "ds") as ds:
        frames = ds.frames()
        assert len(frames) == 2
        for j, f in enumerate(frames):
            i = 2 * j
            png = tmp_path / "ds" / f.depth_path  # the file the dataset names for this frame
            back = np.asarray(Image.open(png))  # Pillow, not the library
            assert back.shape == (192, 256) and back.dtype == np.uint16
            assert np.array_equal(back, src[i]), np.argwhere(back != src[i])[:5]
            # The frame's own intrinsics, scaled to the video's 192 x 144.
            assert f.intrinsics.fx == pytest.approx(ks[i][0] * 192 / 1920, rel=1e-5)
    tj = json.loads((tmp_path / "ds" / "transforms.json").read_text())
    for fr in tj["frames"]:
        assert Image.open(tmp_path / "ds" / fr["depth_file_path"]).size == (256, 192)
    # The streamed camera info has every frame's own intrinsics too.
    with ck.Scan(tmp_path / "ds") as s:
        for i, k in enumerate(ks):
            assert s.frame(i).intrinsics.fx == pytest.approx(k[0], abs=1e-3)


# ---- MultiScan: import then export gives back what MultiScan defines -----------------------------

REAL_ID = "20230615T103000-0700_2CE7F809-8FA9-42BB-BE73-23C5C30C7D07"


def write_real_multiscan(root):
    """The real MultiScan sample (metadata and camera info as recorded), with depth and confidence
    streams made here for its 354 frames at its 256 x 192."""
    root.mkdir()
    shutil.copyfile(FIXTURES / "multiscan-sample" / "metadata-example.json", root / f"{REAL_ID}.json")
    shutil.copyfile(FIXTURES / "multiscan-sample" / "camera-info-example.jsonl", root / f"{REAL_ID}.jsonl")
    n = sum(1 for line in open(root / f"{REAL_ID}.jsonl", "rb") if line.strip())
    y, x = np.mgrid[0:192, 0:256]
    depth = [(0.5 + 0.01 * x + 0.02 * y + 0.001 * i).astype(np.float16) for i in range(n)]
    conf = [((x + y + i) % 3).astype(np.uint8) for i in range(n)]
    (root / f"{REAL_ID}.depth.zlib").write_bytes(raw_deflate(depth))
    (root / f"{REAL_ID}.confidence.zlib").write_bytes(raw_deflate(conf))
    return n, depth, conf


def test_multiscan_import_export_keeps_every_field(tmp_path):
    n, depth, conf = write_real_multiscan(tmp_path / "scan")
    r = import_scan(tmp_path / "scan", tmp_path / "ds", images=False)
    assert r["frames"] == n == 354
    out = export_multiscan(tmp_path / "ds", tmp_path / "out")
    assert out["scan"] == REAL_ID
    src_meta = json.loads((tmp_path / "scan" / f"{REAL_ID}.json").read_bytes())
    got_meta = json.loads((tmp_path / "out" / f"{REAL_ID}.json").read_bytes())
    for key in ("device", "user", "scene", "number_of_files"):
        assert got_meta[key] == src_meta[key], key
    assert got_meta["scene"]["gps_location"] == [49.227630615234375, -123.01149848799666]
    assert got_meta["streams"] == src_meta["streams"]  # intrinsics as read, not frame 0's
    assert got_meta == src_meta
    src_lines = [json.loads(line) for line in open(tmp_path / "scan" / f"{REAL_ID}.jsonl", "rb")]
    got_lines = [json.loads(line) for line in open(tmp_path / "out" / f"{REAL_ID}.jsonl", "rb")]
    assert len(got_lines) == len(src_lines)
    for i, (a, b) in enumerate(zip(got_lines, src_lines)):
        assert a == b, i  # exact float64 numbers, exposure_duration, every key
        assert a["exposure_duration"] == b["exposure_duration"]
    # The streams, read back with Python's zlib, are the source's bit for bit.
    for ext, arrays, dt in ((".depth.zlib", depth, np.float16), (".confidence.zlib", conf, np.uint8)):
        raw = zlib.decompressobj(-15).decompress((tmp_path / "out" / (REAL_ID + ext)).read_bytes())
        frames = np.frombuffer(raw, dt).reshape(-1, 192, 256)
        assert frames.shape[0] == n
        assert np.array_equal(frames.view(np.uint8), np.stack(arrays).view(np.uint8))
    # The dataset's own scan metadata carries the device, user and scene strings too.
    ds_meta = next(json.loads((tmp_path / "ds" / f).read_bytes()) for f in os.listdir(tmp_path / "ds")
                   if f.endswith(".json") and f[:-5] + ".jsonl" in os.listdir(tmp_path / "ds"))
    assert ds_meta["device"]["type"] == "iPad8,10" and ds_meta["device"]["name"] == src_meta["device"]["name"]
    assert ds_meta["user"] == src_meta["user"]
    assert (ds_meta["scene"]["type"], ds_meta["scene"]["description"]) == ("Bookstore / Library", "Test")


def test_export_after_a_resumed_import_keeps_the_source_and_the_new_frames(tmp_path):
    n, depth, conf = write_real_multiscan(tmp_path / "scan")
    import_scan(tmp_path / "scan", tmp_path / "ds", images=False)
    ds = ck.Dataset.open(tmp_path / "ds")
    pose = np.eye(4, dtype=np.float32)
    k = ck.Intrinsics(1600, 1600, 960, 720, 1920, 1440)
    last = json.loads(open(tmp_path / "scan" / f"{REAL_ID}.jsonl", "rb").readlines()[-1])["timestamp"] / 1e9
    for j in range(2):
        ds.stream_frame(last + 1 + j, pose, k, depth=np.full((192, 256), 1.5, np.float16), confidence=np.full((192, 256), 2, np.uint8))
    ds.finalize()
    ds.close()
    out = export_multiscan(tmp_path / "ds", tmp_path / "out")
    src_meta = json.loads((tmp_path / "scan" / f"{REAL_ID}.json").read_bytes())
    got_meta = json.loads((tmp_path / "out" / f"{out['scan']}.json").read_bytes())
    for key in ("device", "user", "scene"):
        assert got_meta[key] == src_meta[key]
    counts = {s["id"]: s["number_of_frames"] for s in got_meta["streams"]}
    assert counts["depth_back_1"] == counts["confidence_map"] == counts["camera_info_color_back_1"] == n + 2
    src_lines = [json.loads(line) for line in open(tmp_path / "scan" / f"{REAL_ID}.jsonl", "rb")]
    got_lines = [json.loads(line) for line in open(tmp_path / "out" / f"{out['scan']}.jsonl", "rb")]
    assert got_lines[:n] == src_lines and len(got_lines) == n + 2
    assert got_lines[n]["timestamp"] == round((last + 1) * 1e9)
    with ck.Scan(tmp_path / "out") as s:
        assert len(s) == n + 2 and s.depth_frame_count == n + 2
        assert np.array_equal(s.depth(n + 1, np.float16), np.full((192, 256), 1.5, np.float16))
