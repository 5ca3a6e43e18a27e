"""Registration of the demos' datasets (issue 8, finding 1): each depth PNG is the depth of its
own frame, not of a neighbour.

Two demos write datasets: examples/c/capture_demo (run by `make test` into
CAPTUREKIT_DEMO_DATASET) and examples/python/capture_demo.py (run here into a temporary folder).
For every captured frame, its depth PNG is compared with (a) the depth streamed for the frame with
the same timestamp, decoded the way MultiScan's decoder does (zlib + numpy float16), and (b) the
scene's true depth, rendered again for that frame's pose and frame number. A one-frame offset
(the bug this guards against) moves the camera ~1 cm between frames, so a neighbour matches far
worse than the frame itself.
"""

import json
import os
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
FPS = 30.0  # both demos stream 30 frames a second; frame number = timestamp * 30


def _python_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("pydemo") / "dataset"
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"))
    subprocess.run([sys.executable, str(REPO / "examples" / "python" / "capture_demo.py"), str(out)],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="module", params=["c-demo", "python-demo"])
def dataset(request, tmp_path_factory):
    if request.param == "c-demo":
        return request.getfixturevalue("c_demo_dataset")
    return _python_demo(tmp_path_factory)


def _streams(root):
    meta_path = next(p for p in root.glob("*.json") if p.name not in ("transforms.json", "boundingbox.json"))
    meta = json.loads(meta_path.read_text())
    streams = {s["id"]: s for s in meta["streams"]}
    h, w = streams["depth_back_1"]["resolution"]
    scan = meta_path.name[: -len(".json")]
    raw = zlib.decompressobj(-zlib.MAX_WBITS).decompress((root / f"{scan}.depth.zlib").read_bytes())
    depth = np.frombuffer(raw, dtype=np.float16).reshape(-1, h, w).astype(np.float32)
    info = [json.loads(line) for line in (root / f"{scan}.jsonl").read_text().splitlines()]
    by_ns = {rec["timestamp"]: i for i, rec in enumerate(info)}
    return depth, info, by_ns


def _nearest(src, height, width):
    """Pixel-centre nearest-neighbour resample of src (h, w) to (height, width)."""
    h, w = src.shape
    ys = np.minimum(((np.arange(height) + 0.5) * h / height).astype(int), h - 1)
    xs = np.minimum(((np.arange(width) + 0.5) * w / width).astype(int), w - 1)
    return src[ys][:, xs]


def _agreement(png_mm, metres):
    """Fraction of pixels valid in both whose depth agrees within float16 rounding (+ 1 mm)."""
    ref = _nearest(metres, *png_mm.shape) * 1000.0
    both = (png_mm > 0) & (ref > 0)
    if not both.any():
        return 0.0
    tol = np.maximum(1.5, ref[both] * 2.0 ** -10 + 1.0)  # half a float16 step at this depth, + 1 mm
    return float(np.mean(np.abs(png_mm[both].astype(np.float32) - ref[both]) <= tol))


def test_each_depth_png_is_its_own_frame(dataset):
    t = json.loads((dataset / "transforms.json").read_text())
    depth, info, by_ns = _streams(dataset)
    assert len(t["frames"]) >= 10
    for f in t["frames"]:
        png = np.asarray(Image.open(dataset / f["depth_file_path"])).astype(np.float32)
        assert png.shape == (t["h"], t["w"])
        i = by_ns[round(f["timestamp"] * 1e9)]  # the streamed frame with the same timestamp
        own = _agreement(png, depth[i])
        assert own > 0.97, f"{f['depth_file_path']}: only {own:.1%} of pixels match its own streamed frame {i}"
        for j in (i - 1, i + 1):
            if 0 <= j < len(depth):
                other = _agreement(png, depth[j])
                assert other < own - 0.2, f"{f['depth_file_path']} matches streamed frame {j} ({other:.1%}) like its own ({own:.1%})"


def test_each_depth_png_matches_the_rendered_truth(dataset):
    import capturekit as ck
    t = json.loads((dataset / "transforms.json").read_text())
    _, info, by_ns = _streams(dataset)
    # Camera-info lines carry the colour camera's intrinsics at the colour resolution (as
    # MultiScan's app records them); the depth map's are those scaled to the map (the demo's
    # depth_intrinsics are ck_intrinsics_scale of the colour ones).
    k = info[0]["intrinsics"]  # column-major 3x3
    kd = ck.Intrinsics(fx=k[0], fy=k[4], cx=k[6], cy=k[7], width=t["w"], height=t["h"]).scale(256, 192)
    with ck.Scene(7) as scene:
        for f in t["frames"][::2]:
            frame_number = round(f["timestamp"] * FPS)
            truth, _ = scene.render_depth(np.array(f["transform_matrix"], np.float64), kd, frame_number)
            png = np.asarray(Image.open(dataset / f["depth_file_path"])).astype(np.float32)
            ok = _agreement(png, truth)
            assert ok > 0.97, f"{f['depth_file_path']}: {ok:.1%} of pixels match the rendered depth of frame {frame_number}"
