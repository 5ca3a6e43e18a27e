"""Issue 10: the native codec on sensor-like depth (benchmarks/sensor_depth.py, imported through
its path): lossless on every generated size and kind, special frames, and smaller than the
simple left-neighbour peer's byte planes would be on the same data."""

import pathlib
import sys
import zlib

import numpy as np
import pytest

from capturekit import depth
from capturekit.depth import DepthCodec, DepthKind

BENCH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks"
needs_bench = pytest.mark.skipif(not (BENCH / "sensor_depth.py").exists(), reason="needs the source tree's benchmarks/")
if (BENCH / "sensor_depth.py").exists():
    sys.path.insert(0, str(BENCH))
    import sensor_depth  # noqa: E402


def bits(a):
    return np.ascontiguousarray(a).view(np.uint16)


@needs_bench
@pytest.mark.parametrize("profile, count", [("lidar", 4), ("rgbd", 2), ("rgbd720", 1)])
def test_sensor_frames_round_trip(profile, count):
    frames, conf = sensor_depth.frames(profile, count, seed=11)
    w, h, kind, _ = sensor_depth.PROFILES[profile]
    with DepthCodec() as codec:
        for f in frames:
            assert f.shape == (h, w) and f.dtype == (np.float16 if kind == "float16" else np.uint16)
            data = codec.encode(f)
            assert data[2] == 4 and depth.frame_info(data) == (DepthKind.FLOAT16 if kind == "float16" else DepthKind.MM, w, h)
            assert np.array_equal(bits(codec.decode(data)), bits(f))
            # sensor data compresses well: better than raw DEFLATE (MultiScan's way) by far
            assert len(zlib.compress(f.tobytes(), 1)) > 1.5 * len(data)
        if conf[0] is not None:  # LiDAR confidence: 0/1/2, stored as U8
            c = conf[0]
            assert set(np.unique(c).tolist()) <= {0, 1, 2}
            assert np.array_equal(codec.decode(codec.encode(c)), c)


@needs_bench
def test_generator_is_deterministic_and_realistic():
    a, _ = sensor_depth.frames("lidar", 3, seed=4)
    b, _ = sensor_depth.frames("lidar", 3, seed=4)
    c, _ = sensor_depth.frames("lidar", 3, seed=5)
    assert sensor_depth.frames_hash(a) == sensor_depth.frames_hash(b) != sensor_depth.frames_hash(c)
    stack = np.stack(a).astype(np.float32)
    valid = stack > 0
    assert 0.001 < 1 - valid.mean() < 0.1          # a few zeros, not many
    assert 0.3 < stack[valid].min() and stack[valid].max() < 5.6
    assert np.abs(stack[1] - stack[0])[valid[0] & valid[1]].mean() < 0.05  # consecutive frames are related
    d, _ = sensor_depth.frames("rgbd", 1, seed=4)
    mm = d[0]
    assert mm.dtype == np.uint16 and 0.001 < (mm == 0).mean() < 0.1 and mm[mm > 0].min() >= 300


@needs_bench
@pytest.mark.parametrize("shape", [(1, 1), (7, 9), (48, 64), (3, 257)])
@pytest.mark.parametrize("kind", ["float16", "mm"])
def test_special_frames_round_trip(shape, kind):
    h, w = shape
    with DepthCodec() as codec:
        for name, f in sensor_depth.special_frames(w, h, kind, seed=h * w).items():
            data = codec.encode(f)
            assert np.array_equal(bits(codec.decode(data)), bits(f)), name


def test_random_frames_round_trip():
    rng = np.random.default_rng(10)
    with DepthCodec(level=3) as codec:
        for _ in range(40):
            h, w = int(rng.integers(1, 40)), int(rng.integers(1, 70))
            base = rng.integers(1, 65536)
            f = (base + np.cumsum(rng.integers(-40, 41, (h, w)), axis=1)).astype(np.uint16)
            f[rng.random((h, w)) < rng.random() * 0.5] = 0
            assert np.array_equal(codec.decode(codec.encode(f)), f)
