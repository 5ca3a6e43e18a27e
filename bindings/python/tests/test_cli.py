"""The ``capturekit`` command, run as users run it (``python -m capturekit``), its outputs checked
against independent readers: MultiScan's own way of decoding a depth stream (zlib + numpy),
Pillow, transforms.json."""

import json
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

import capturekit as ck

K = ck.Intrinsics(fx=40.0, fy=40.0, cx=16.0, cy=12.0, width=32, height=24)
KD = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)


def run(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(ck.__file__)), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "capturekit", *map(str, args)], capture_output=True, text=True, env=env)


@pytest.fixture()
def dataset(tmp_path):
    """A finished dataset with 6 frames (images, depth), a box and 10 streamed depth frames."""
    rng = np.random.default_rng(7)
    d = tmp_path / "scan"
    depths = []
    with ck.Dataset(d, ck.DatasetOptions(start_time_unix=1795000000.0, device_id="cli")) as ds:
        ds.set_box(ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5), floor=0.0))
        for i in range(10):
            a = 0.3 * i
            pose = np.eye(4)
            pose[:3, 3] = (1.5 * np.sin(a), 0.6, 1.5 * np.cos(a))
            f = -pose[:3, 3] / np.linalg.norm(pose[:3, 3])
            r = np.cross(f, (0, 1, 0)); r /= np.linalg.norm(r)
            pose[:3, 0], pose[:3, 1], pose[:3, 2] = r, np.cross(r, f), -f
            depth = rng.uniform(0.3, 3.0, (12, 16)).astype(np.float32)
            depth[0, :3] = 0
            conf = rng.integers(0, 3, (12, 16), dtype=np.uint8)
            depths.append((depth, conf))
            ds.stream_frame(0.1 * i, pose, K, depth=depth, confidence=conf)
            if i % 2 == 0:
                ds.add_frame(pose, K, rgb=rng.integers(0, 256, (24, 32, 3), dtype=np.uint8), depth=depth,
                             timestamp=0.1 * i)
        ds.finalize()
    return d, depths


def test_inspect_reports_what_the_dataset_holds(dataset):
    d, _ = dataset
    r = run("inspect", d, "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    tf = json.loads((d / "transforms.json").read_text())
    assert info["frames"] == len(tf["frames"]) == 5 and info["finished"]
    assert info["resolutions"] == ["32x24"] and info["depth_frames"] == 5
    assert info["duration_s"] == pytest.approx(0.8)
    assert info["box"]["center"] == pytest.approx([0, 0.25, 0]) and info["box"]["floor"] == 0.0
    assert sum(info["coverage"].values()) <= 5 and set(info["coverage"]) == {"front", "left", "right", "bottom", "top", "back"}
    assert 0 < info["depth_valid_fraction"] <= 1
    assert info["multiscan"]["camera_info_lines"] == 10
    text = run("inspect", d)
    assert text.returncode == 0 and "frames: 5" in text.stdout and "MultiScan scan" in text.stdout


def test_decode_depth_matches_multiscans_own_decoding(dataset, tmp_path):
    d, depths = dataset
    meta = next(p for p in d.glob("*.json") if p.name not in ("transforms.json", "boundingbox.json"))
    # MultiScan's decoder: one raw DEFLATE stream of float16 frames, sizes from the metadata.
    raw = zlib.decompressobj(-15).decompress((d / (meta.stem + ".depth.zlib")).read_bytes())
    h, w = json.loads(meta.read_text())["streams"][1]["resolution"]
    ref = np.frombuffer(raw, np.float16).reshape(-1, h, w)
    craw = zlib.decompressobj(-15).decompress((d / (meta.stem + ".confidence.zlib")).read_bytes())
    cref = np.frombuffer(craw, np.uint8).reshape(-1, h, w)
    assert len(ref) == 10
    r = run("decode-depth", d, "--out", tmp_path / "npy", "--format", "npy")
    assert r.returncode == 0, r.stderr
    for i in range(10):
        assert np.array_equal(np.load(tmp_path / "npy" / f"{i:06d}.npy"), ref[i].astype(np.float32))
    r = run("decode-depth", meta, "--out", tmp_path / "png", "--min-confidence", "2")
    assert r.returncode == 0, r.stderr
    for i in range(10):
        mm = np.asarray(Image.open(tmp_path / "png" / f"{i:06d}.png"))
        want = np.where(cref[i] >= 2, np.rint(ref[i].astype(np.float64) * 1000), 0).astype(np.uint16)
        assert np.array_equal(mm, want)
    # OpenEXR (float32 metres, channel Z), read back by the OpenEXR project's own Python reader.
    OpenEXR = pytest.importorskip("OpenEXR")  # bootstrap installs it
    r = run("decode-depth", d, "--out", tmp_path / "exr", "--format", "exr")
    assert r.returncode == 0, r.stderr
    for i in range(10):
        z = OpenEXR.File(str(tmp_path / "exr" / f"{i:06d}.exr")).channels()["Z"].pixels
        assert z.dtype == np.float32 and np.array_equal(z, ref[i].astype(np.float32))
    again = run("decode-depth", d, "--out", tmp_path / "exr", "--format", "exr")
    assert again.returncode == 1 and "exists" in again.stderr


def test_decode_depth_of_a_stray_capture(tmp_path):
    from test_scan import write_stray

    depth, _, _ = write_stray(tmp_path / "stray", n=3)
    r = run("decode-depth", tmp_path / "stray", "--out", tmp_path / "npy", "--format", "npy")
    assert r.returncode == 0, r.stderr
    for i in range(3):
        assert np.array_equal(np.load(tmp_path / "npy" / f"{i:06d}.npy"), (depth[i] / 1000.0).astype(np.float32))


def test_export_colmap_and_one_line_errors(dataset, tmp_path):
    d, _ = dataset
    r = run("export", "colmap", d, tmp_path / "colmap")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "colmap").iterdir()) == ["cameras.txt", "images.txt", "points3D.txt"]
    again = run("export", "colmap", d, tmp_path / "colmap")
    assert again.returncode == 1 and again.stderr.startswith("capturekit: error:") and len(again.stderr.splitlines()) == 1
    missing = run("inspect", tmp_path / "nothing")
    assert missing.returncode == 1 and "neither a CaptureKit dataset, a MultiScan scan nor a Stray Scanner capture" in missing.stderr
    assert run().returncode == 2  # usage
    for sub in ("inspect", "decode-depth", "export"):
        h = run(sub, "--help")
        assert h.returncode == 0 and "usage: capturekit" in h.stdout


def test_validate_names_what_each_tool_would_reject(dataset):
    d, _ = dataset
    ok = run("validate", d)
    assert ok.returncode == 0 and "0 error(s)" in ok.stdout, ok.stdout + ok.stderr
    tf = json.loads((d / "transforms.json").read_text())
    # Break it the ways users do: a missing image, an image of the wrong size, depth without its
    # scale, a metadata file count that does not match.
    (d / tf["frames"][0]["file_path"]).unlink()
    Image.fromarray(np.zeros((10, 10, 3), np.uint8)).save(d / tf["frames"][1]["file_path"], "PNG")
    del tf["integer_depth_scale"]
    (d / "transforms.json").write_text(json.dumps(tf))
    meta = next(p for p in d.glob("*.json") if p.name not in ("transforms.json", "boundingbox.json"))
    m = json.loads(meta.read_text())
    m["number_of_files"] += 1
    meta.write_text(json.dumps(m))
    bad = run("validate", d, "--json")
    assert bad.returncode == 1
    result = json.loads(bad.stdout)
    assert result["ok"] is False and result["finished"] is True and result["counts"]["frames"] == 5
    problems = result["problems"]
    said = {(p["tool"], p["what"].split(":")[0] if p["what"].startswith("frame") else p["what"][:20]) for p in problems}
    assert ("nerfstudio", "frame 0 (" + tf["frames"][0]["file_path"] + ")") in said
    assert any(p["tool"] == "nerfstudio" and "10x10" in p["what"] for p in problems)
    assert any(p["tool"] == "instant-ngp" and "integer_depth_scale" in p["what"] for p in problems)
    assert any(p["file"] == tf["frames"][0]["file_path"] and p["frame"] == 0 for p in problems)
    assert any(p["tool"] == "multiscan" and "number_of_files" in p["what"] for p in problems)
    assert all(p["level"] == "error" for p in problems)
