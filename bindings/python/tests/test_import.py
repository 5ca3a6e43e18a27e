"""Importers and exporters (capturekit.importers and `capturekit import|export`): a MultiScan
scan with a real H.264/MPEG-4 video (written by OpenCV) and a Stray Scanner capture go into
datasets; every captured image must be its own frame of the video (registration, not
plausibility), every streamed depth frame bit-exact; exports read back with Python's zlib."""

import json
import os
import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit.cli import main as cli
from capturekit.importers import export_multiscan, import_scan, scan_start

from test_scan import write_multiscan, write_stray

cv2 = pytest.importorskip("cv2")  # bootstrap installs opencv-python-headless


def write_video(path, n, w=64, h=48):
    """Frame i is a flat grey of level 10 + 20 i (survives lossy coding within a few levels)."""
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 60, (w, h))
    assert vw.isOpened()
    for i in range(n):
        vw.write(np.full((h, w, 3), 10 + 20 * i, np.uint8))
    vw.release()


def test_scan_start():
    import datetime

    t = int(datetime.datetime(2026, 11, 25, 10, 15, tzinfo=datetime.timezone.utc).timestamp())
    assert scan_start("20261125T101500+0000_dev") == (t, "dev")
    assert scan_start("20261125T111500+0100_a_b") == (t, "a_b")
    assert scan_start("20261125T031500-0700_x") == (t, "x")
    assert scan_start("not an id") is None


def test_import_multiscan_with_video(tmp_path):
    depth, conf, poses, _ = write_multiscan(tmp_path / "scan", n=12)
    write_video(tmp_path / "scan" / "20261125T101500+0000_dev.mp4", 12)
    r = import_scan(tmp_path / "scan", tmp_path / "ds", every=5)
    assert r == {"frames": 12, "captured": 3, "kind": "multiscan", "video_frames": 12}
    with ck.Dataset.open_readonly(tmp_path / "ds") as ds:
        assert ds.frame_count == 3
        for j, f in enumerate(ds.frames()):
            i = 5 * j
            assert f.stream_index == i
            img = np.asarray(__import__("PIL.Image", fromlist=["Image"]).open(tmp_path / "ds" / f.image_path))
            assert abs(float(img.mean()) - (10 + 20 * i)) < 4, (i, img.mean())  # this frame's image
            assert np.allclose(f.pose, poses[i], atol=1e-6)
            assert (f.intrinsics.width, f.intrinsics.height) == (64, 48)  # scaled to the video
            assert f.intrinsics.fx == pytest.approx(1613.7 * 64 / 1920, rel=1e-5)
            assert np.array_equal(ds.confidence(j), conf[i])
    # Its streams are the scan's, bit for bit, with the scan's start time and device in the id.
    with ck.Scan(tmp_path / "ds") as s:
        assert len(s) == 12
        for i in range(12):
            assert np.array_equal(s.depth(i, np.float16).view(np.uint16), depth[i].view(np.uint16))
    assert any(n.startswith("20261125T101500+0000_dev") for n in os.listdir(tmp_path / "ds"))
    # The app's video came along as the new scan's colour stream, counted in number_of_files.
    scan_id = "20261125T101500+0000_dev"
    assert (tmp_path / "ds" / (scan_id + ".mp4")).read_bytes() == (tmp_path / "scan" / (scan_id + ".mp4")).read_bytes()
    meta = json.loads((tmp_path / "ds" / (scan_id + ".json")).read_text())
    assert meta["streams"][0]["encoding"] == "h264" and meta["streams"][0]["file_extension"] == "mp4"
    on_disk = [n for n in os.listdir(tmp_path / "ds") if n.startswith(scan_id)]
    assert meta["number_of_files"] == len(on_disk) == 5, on_disk


def test_import_notes_a_short_video(tmp_path, capsys):
    write_multiscan(tmp_path / "scan", n=8)
    write_video(tmp_path / "scan" / "20261125T101500+0000_dev.mp4", 5)
    assert cli(["import", "multiscan", str(tmp_path / "scan"), str(tmp_path / "ds"), "--every", "2"]) == 0
    captured = capsys.readouterr()
    assert "the video has 5 frames, the scan 8" in captured.err
    with ck.Dataset.open_readonly(tmp_path / "ds") as ds:
        assert [f.stream_index for f in ds.frames()] == [0, 2, 4]


def test_import_stray_without_images_and_cli(tmp_path, capsys):
    depth, conf, poses = write_stray(tmp_path / "stray", n=4)
    assert cli(["import", "stray", str(tmp_path / "stray"), str(tmp_path / "ds"), "--no-images"]) == 0
    with ck.Scan(tmp_path / "ds") as s:
        assert len(s) == 4
        for i in range(4):
            assert np.allclose(s.frame(i).pose, poses[i], atol=2e-6)
            # The stream holds float16 metres (MultiScan's format): the millimetres, rounded once.
            f16 = (depth[i] / 1000.0).astype(np.float32).astype(np.float16)
            assert np.array_equal(s.depth(i, np.float16).view(np.uint16), f16.view(np.uint16))
            assert np.array_equal(s.confidence(i), conf[i])
    capsys.readouterr()
    # Without --no-images and without rgb.mp4: one clear line, exit 1; the wrong kind too.
    assert cli(["import", "stray", str(tmp_path / "stray"), str(tmp_path / "ds2")]) == 1
    assert "no colour video" in capsys.readouterr().err
    assert not (tmp_path / "ds2").exists() or not os.listdir(tmp_path / "ds2")
    assert cli(["import", "multiscan", str(tmp_path / "stray"), str(tmp_path / "ds3")]) == 1
    assert "is a stray capture" in capsys.readouterr().err
    assert cli(["inspect", str(tmp_path / "stray"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kind"] == "stray-scanner" and info["frames"] == 4 and info["depth_size"] == [16, 12]


def _inflate_frames(path, w, h, dtype):
    raw = zlib.decompressobj(-15).decompress(path.read_bytes())  # as MultiScan's depth_decode.py
    return np.frombuffer(raw, dtype).reshape(-1, h, w)


def test_export_multiscan(tmp_path, c_demo_dataset):
    # A dataset with streams: its scan files, unchanged.
    assert cli(["export", "multiscan", str(c_demo_dataset), str(tmp_path / "ms")]) == 0
    with ck.Scan(tmp_path / "ms") as a, ck.Scan(c_demo_dataset) as b:
        assert len(a) == len(b) and a.depth_size == b.depth_size
        assert np.array_equal(a.depth(len(a) - 1), b.depth(len(b) - 1))
    # A dataset of captured frames only: streams built from their depth PNGs.
    k = ck.Intrinsics(20, 20, 8, 6, 16, 12)
    rng = np.random.default_rng(5)
    mm = [rng.integers(300, 4000, (12, 16)).astype(np.uint16) for _ in range(3)]
    import datetime

    t = datetime.datetime(2026, 11, 25, 10, 15, tzinfo=datetime.timezone.utc).timestamp()
    ds = ck.Dataset(tmp_path / "d", ck.DatasetOptions(start_time_unix=t, device_id="rig"))
    for i in range(3):
        ds.add_frame(np.eye(4, dtype=np.float32), k, rgb=np.zeros((12, 16, 3), np.uint8), depth=mm[i], timestamp=i * 0.5)
    ds.finalize()
    ds.close()
    r = export_multiscan(tmp_path / "d", tmp_path / "ms2")
    assert r == {"scan": "20261125T101500+0000_rig", "frames": 3}
    frames = _inflate_frames(tmp_path / "ms2" / (r["scan"] + ".depth.zlib"), 16, 12, np.float16)
    assert frames.shape[0] == 3
    for i in range(3):
        assert np.array_equal(frames[i], (mm[i] / 1000.0).astype(np.float32).astype(np.float16))
    meta = json.loads((tmp_path / "ms2" / (r["scan"] + ".json")).read_text())
    assert [s["number_of_frames"] for s in meta["streams"] if s["type"] == "lidar_sensor"] == [3]
    lines = (tmp_path / "ms2" / (r["scan"] + ".jsonl")).read_text().splitlines()
    assert [json.loads(l)["timestamp"] for l in lines] == [0, 500_000_000, 1_000_000_000]
    assert sorted(os.listdir(tmp_path / "ms2")) == sorted(r["scan"] + e for e in (".json", ".jsonl", ".depth.zlib"))
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".capturekit-export-")]
    with pytest.raises(ck.ExistsError):
        export_multiscan(tmp_path / "d", tmp_path / "ms2")
