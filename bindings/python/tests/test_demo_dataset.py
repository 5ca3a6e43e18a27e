"""Acceptance: the capture demo's dataset opened with independent readers (issue 5).

The dataset comes from conftest's c_demo_dataset (make test's demo run, or the built demo run here). Nothing here
uses CaptureKit: Python's zlib + numpy decode the depth stream exactly as MultiScan's decoder does,
Pillow reads every PNG, a loader written to nerfstudio's rules checks transforms.json, and
back-projecting the depth PNGs with the written poses puts the object's points inside
boundingbox.json.
"""

import json
import math
import os
import pathlib
import zlib

import numpy as np
import pytest

_ROOT = None


@pytest.fixture(autouse=True)
def _dataset(c_demo_dataset):
    global _ROOT
    _ROOT = c_demo_dataset


def root():
    return _ROOT


def transforms():
    return json.loads((root() / "transforms.json").read_text())


def test_nerfstudio_rules():
    t = transforms()
    assert t["camera_model"] == "OPENCV"
    for key in ("fl_x", "fl_y", "cx", "cy", "w", "h"):
        assert isinstance(t[key], (int, float)) and t[key] > 0, key
    assert t["integer_depth_scale"] == pytest.approx(0.001)
    assert len(t["frames"]) >= 20
    for f in t["frames"]:
        path = root() / f["file_path"]
        assert path.suffix == ".png" and path.exists()
        m = np.array(f["transform_matrix"], dtype=np.float64)
        assert m.shape == (4, 4)
        assert np.allclose(m[3], [0, 0, 0, 1])
        r = m[:3, :3]
        assert np.allclose(r.T @ r, np.eye(3), atol=1e-4)
        assert f["depth_file_path"] == f["depth_path"]
        assert (root() / f["depth_file_path"]).exists()


def test_every_png_reads_with_pillow_and_depth_matches_image_size():
    from PIL import Image
    t = transforms()
    for f in t["frames"]:
        with Image.open(root() / f["file_path"]) as im:
            assert im.size == (t["w"], t["h"]) and im.mode == "RGB"
            rgb = np.asarray(im)
            assert rgb.std() > 3
        with Image.open(root() / f["depth_file_path"]) as im:
            depth = np.asarray(im)
            assert im.size == (t["w"], t["h"])            # instant-ngp needs equal sizes
            assert depth.dtype in (np.uint16, np.int32)    # 16-bit millimetres
            assert 300 < np.median(depth[depth > 0]) < 5000


def test_multiscan_decoder_reads_the_streams():
    meta_path = next(root().glob("*_demo.json"))
    meta = json.loads(meta_path.read_text())
    streams = {s["id"]: s for s in meta["streams"]}
    h, w = streams["depth_back_1"]["resolution"]
    scan = meta_path.name[: -len(".json")]
    # MultiScan's depth_decode.py: zlib.decompressobj(-MAX_WBITS) over 16 KiB chunks, numpy float16.
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    data = bytearray()
    with open(root() / f"{scan}.depth.zlib", "rb") as fh:
        while chunk := fh.read(16384):
            data += d.decompress(chunk)
    frame_bytes = w * h * 2
    count = len(data) // frame_bytes
    assert count == streams["depth_back_1"]["number_of_frames"] and len(data) % frame_bytes == 0
    depth = np.frombuffer(bytes(data), dtype=np.float16).reshape(count, h, w)
    assert np.isfinite(depth).all() and (depth >= 0).all()
    valid = depth[depth > 0].astype(np.float32)
    assert 0.3 < np.median(valid) < 5.0
    lines = (root() / f"{scan}.jsonl").read_text().splitlines()
    assert len(lines) == count
    info = json.loads(lines[0])
    transform = np.array(info["transform"], dtype=np.float64).reshape(4, 4).T  # their reader: reshape + transpose
    assert np.allclose(transform[3], [0, 0, 0, 1])
    c = zlib.decompressobj(-zlib.MAX_WBITS)
    conf = c.decompress((root() / f"{scan}.confidence.zlib").read_bytes())
    assert len(conf) == count * w * h and set(np.unique(np.frombuffer(conf, np.uint8))) <= {0, 1, 2}


def test_back_projected_depth_lies_in_the_box():
    from PIL import Image
    t = transforms()
    box = json.loads((root() / "boundingbox.json").read_text())
    center = np.array([box["center"][k] for k in "xyz"])
    size = np.array([box["size"][k] for k in "xyz"])
    yaw = box["rad_rot_about_y"]
    c, s = math.cos(yaw), math.sin(yaw)
    r_box = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    inside_fraction = []
    for f in t["frames"][::3]:
        depth = np.asarray(Image.open(root() / f["depth_file_path"])).astype(np.float64) * t["integer_depth_scale"]
        m = np.array(f["transform_matrix"])
        v, u = np.nonzero(depth > 0)
        z = depth[v, u]
        # Pixel centres, OpenGL camera axes (looks down -z, y up): the convention of the dataset.
        x_cam = (u + 0.5 - t["cx"]) / t["fl_x"] * z
        y_cam = -(v + 0.5 - t["cy"]) / t["fl_y"] * z
        pts = np.stack([x_cam, y_cam, -z, np.ones_like(z)], axis=1) @ m.T
        local = (pts[:, :3] - center) @ r_box
        inside = np.all(np.abs(local) <= size / 2 + 0.03, axis=1)
        # The centre of the image looks at the object: its pixels must fall in the box.
        centre = (np.abs(u + 0.5 - t["cx"]) < 6) & (np.abs(v + 0.5 - t["cy"]) < 6)
        if centre.any():
            inside_fraction.append(inside[centre].mean())
    assert len(inside_fraction) >= 5
    assert np.mean(inside_fraction) > 0.9


def test_events_log_and_journal_are_json_lines():
    for name in ("events.jsonl", "capturekit.jsonl"):
        for line in (root() / name).read_text().splitlines():
            json.loads(line)


def test_bounding_box_reads_back_exactly():
    import capturekit as ck
    box = ck.Box.read_json(root() / "boundingbox.json")
    data = json.loads((root() / "boundingbox.json").read_text())
    assert np.array_equal(box.center, np.array([data["center"][k] for k in "xyz"], np.float32))
    assert np.array_equal(box.size, np.array([data["size"][k] for k in "xyz"], np.float32))
    corners = box.corners()
    names = ["top_left_front", "top_right_front", "bot_right_front", "bot_left_front",
             "top_left_back", "top_right_back", "bot_right_back", "bot_left_back"]
    for i, n in enumerate(names):
        assert np.allclose(corners[i], [data["positions"][n][k] for k in "xyz"], atol=1e-6)


def test_reference_app_box_file():
    import capturekit as ck
    real = pathlib.Path(__file__).parent / "data" / "boundingbox.json"
    box = ck.Box.read_json(real)
    data = json.loads(real.read_text())
    assert np.allclose(box.center, [data["center"][k] for k in "xyz"], atol=1e-6)
    with pytest.raises(ck.NotFoundError):
        ck.Box.read_json(real, 3)
    with pytest.raises(ck.NotFoundError):
        ck.Box.read_json(real.parent / "missing.json")


def test_multiscan_scan_is_consistent_as_their_server_reads_it():
    """Issue 12: the metadata MultiScan's scripts trust. The colour stream comes first with the
    colour camera's resolution and intrinsics; every stream counts the frames actually streamed
    (their scripts take the minimum of the colour and depth counts); number_of_files is the number
    of the scan's files on disk (their upload server compares them); the frequency is the streams'
    real rate; each camera-info line carries the colour camera's intrinsics (normalised by the
    colour width, as their pose and texturing scripts do, they give the colour focal length)."""
    meta_path = next(root().glob("*_demo.json"))
    scan = meta_path.name[: -len(".json")]
    meta = json.loads(meta_path.read_text())
    streams = meta["streams"]
    assert [s["id"] for s in streams] == ["color_back_1", "depth_back_1", "confidence_map", "camera_info_color_back_1"]
    color = streams[0]
    t = transforms()
    assert color["resolution"] == [t["h"], t["w"]]
    k = color["intrinsics"]
    assert k == pytest.approx([t["fl_x"], 0, 0, 0, t["fl_y"], 0, t["cx"], t["cy"], 1], rel=1e-6)
    lines = [json.loads(x) for x in (root() / f"{scan}.jsonl").read_text().splitlines()]
    assert {s["number_of_frames"] for s in streams} == {len(lines)}
    # Files of the scan: every file named after the scan id (no host video here).
    files = sorted(p.name for p in root().iterdir() if p.name.startswith(scan + "."))
    assert files == sorted(f"{scan}.{e}" for e in ("json", "jsonl", "depth.zlib", "confidence.zlib"))
    assert meta["number_of_files"] == len(files)
    assert color["encoding"] == "none"
    ns = np.array([x["timestamp"] for x in lines], dtype=np.float64)
    rate = (len(ns) - 1) / ((ns[-1] - ns[0]) * 1e-9)
    assert {s["frequency"] for s in streams} == {round(rate)}
    for line in lines:
        fx, fy, cx, cy = line["intrinsics"][0], line["intrinsics"][4], line["intrinsics"][6], line["intrinsics"][7]
        assert (fx / color["resolution"][1], cx / color["resolution"][1]) == pytest.approx((k[0] / t["w"], k[6] / t["w"]), rel=1e-5)
        assert (fy, cy) == pytest.approx((k[4], k[7]), rel=1e-5)


def test_each_frame_names_its_multiscan_frame():
    """Issue 12: transforms.json frames carry the index of their frame in the MultiScan streams,
    and that camera-info line has the frame's timestamp and pose."""
    meta_path = next(root().glob("*_demo.json"))
    scan = meta_path.name[: -len(".json")]
    lines = [json.loads(x) for x in (root() / f"{scan}.jsonl").read_text().splitlines()]
    frames = transforms()["frames"]
    assert frames and all("multiscan_frame" in f for f in frames)
    for f in frames:
        line = lines[f["multiscan_frame"]]
        assert line["timestamp"] == round(f["timestamp"] * 1e9)
        pose = np.array(line["transform"], dtype=np.float64).reshape(4, 4).T
        np.testing.assert_allclose(pose, np.array(f["transform_matrix"]), atol=1e-6)
