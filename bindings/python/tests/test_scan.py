"""The scan reader (ck_scan) and the dataset reader's depth, against files written here by
independent writers: Python's zlib (raw DEFLATE, full flush per frame, as the MultiScan app),
json, csv and Pillow (16-bit PNGs, as the Stray Scanner app). Every value read back is compared
with what was written; hostile files must give a CaptureKitError, never a crash."""

import json
import os
import pathlib
import random
import zlib

import numpy as np
import pytest

import capturekit as ck

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "Tests/CaptureKitCoreTests/Fixtures"
FLIP = np.diag([1.0, -1.0, -1.0, 1.0])


def raw_deflate(frames, level=5):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    out = b"".join(c.compress(np.ascontiguousarray(f).tobytes()) + c.flush(zlib.Z_FULL_FLUSH) for f in frames)
    return out + c.flush()


def orbit_pose(i):
    """A camera-to-world pose (OpenGL axes) looking at the origin from a circle."""
    a = 0.3 * i
    eye = np.array([2 * np.sin(a), 0.4 + 0.01 * i, 2 * np.cos(a)])
    z = eye / np.linalg.norm(eye)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, eye
    return m


def write_multiscan(root, n=6, w=16, h=12, stream_frames=None, confidence=True, scan_id="20261125T101500+0000_dev"):
    rng = np.random.default_rng(7)
    root.mkdir(parents=True, exist_ok=True)
    depth = [(rng.uniform(0.3, 4.0, (h, w)) * (rng.random((h, w)) > 0.1)).astype(np.float16) for _ in range(n)]
    conf = [rng.integers(0, 3, (h, w), dtype=np.uint8) for _ in range(n)]
    k = (1613.7, 1613.7, 941.4, 727.0)
    poses = [orbit_pose(i) for i in range(n)]
    with open(root / f"{scan_id}.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"timestamp": 1_000_000_000 + i * 16_666_667,
                                "intrinsics": [k[0], 0, 0, 0, k[1], 0, k[2], k[3], 1],
                                "transform": poses[i].T.reshape(-1).tolist()}) + "\n")
    (root / f"{scan_id}.depth.zlib").write_bytes(raw_deflate(depth[: stream_frames or n]))
    streams = [
        {"id": "color_back_1", "type": "color_camera", "encoding": "h264", "frequency": 60, "number_of_frames": n,
         "file_extension": "mp4", "resolution": [1440, 1920], "intrinsics": [k[0], 0, 0, 0, k[1], 0, k[2], k[3], 1],
         "extrinsics": None},
        {"id": "depth_back_1", "type": "lidar_sensor", "encoding": "float16_zlib", "frequency": 60,
         "number_of_frames": n, "file_extension": "depth.zlib", "resolution": [h, w], "intrinsics": None,
         "extrinsics": None},
        {"id": "camera_info_color_back_1", "type": "camera_info", "encoding": "jsonl", "frequency": 60,
         "number_of_frames": n, "file_extension": "jsonl"},
    ]
    if confidence:
        (root / f"{scan_id}.confidence.zlib").write_bytes(raw_deflate(conf[: stream_frames or n]))
        streams.insert(2, {"id": "confidence_map", "type": "confidence_map", "encoding": "uint8_zlib", "frequency": 60,
                           "number_of_frames": n, "file_extension": "confidence.zlib"})
    meta = {"device": {"id": "dev", "type": "iPad8,10", "name": "test"}, "user": {"name": ""},
            "scene": {"description": "", "type": "", "gps_location": []}, "streams": streams, "number_of_files": 5}
    (root / f"{scan_id}.json").write_text(json.dumps(meta))
    return depth, conf, poses, k


def quat_xyzw(m):
    """Quaternion (x, y, z, w) of a rotation matrix (independent of the library)."""
    r = m[:3, :3]
    w = np.sqrt(max(0.0, 1 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    x = np.copysign(np.sqrt(max(0.0, 1 + r[0, 0] - r[1, 1] - r[2, 2])) / 2, r[2, 1] - r[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1 - r[0, 0] + r[1, 1] - r[2, 2])) / 2, r[0, 2] - r[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1 - r[0, 0] - r[1, 1] + r[2, 2])) / 2, r[1, 0] - r[0, 1])
    return x, y, z, w


def write_stray(root, n=5, w=16, h=12, skip_depth=()):
    from PIL import Image

    rng = np.random.default_rng(11)
    (root / "depth").mkdir(parents=True)
    (root / "confidence").mkdir()
    (root / "camera_matrix.csv").write_text("1597.5,0.0,959.1\n0.0,1597.5,721.3\n0.0,0.0,1.0\n")
    poses_gl = [orbit_pose(i) for i in range(n)]
    depth, conf = [], []
    lines = ["timestamp, frame, x, y, z, qx, qy, qz, qw"]
    for i in range(n):
        cv = poses_gl[i] @ FLIP  # the app writes OpenCV camera axes
        qx, qy, qz, qw = quat_xyzw(cv)
        t = cv[:3, 3]
        lines.append(f"{100.5 + i / 60:.6f}, {i:06d}, {t[0]:.9f}, {t[1]:.9f}, {t[2]:.9f}, {qx:.9f}, {qy:.9f}, {qz:.9f}, {qw:.9f}")
        d = (rng.integers(300, 5000, (h, w)) * (rng.random((h, w)) > 0.1)).astype(np.uint16)
        c = rng.integers(0, 3, (h, w), dtype=np.uint8)
        depth.append(d)
        conf.append(c)
        if i not in skip_depth:
            Image.fromarray(d.astype(np.uint16)).save(root / "depth" / f"{i:06d}.png")
            Image.fromarray(c).save(root / "confidence" / f"{i:06d}.png")
    (root / "odometry.csv").write_text("\n".join(lines) + "\n")
    return depth, conf, poses_gl


def test_multiscan_round_trip(tmp_path):
    depth, conf, poses, k = write_multiscan(tmp_path / "scan")
    with ck.Scan(tmp_path / "scan") as s:
        assert s.kind == ck.ScanKind.MULTISCAN and len(s) == 6 and s.depth_size == (16, 12) and s.has_confidence
        assert s.depth_frame_count == 6
        assert s.duration == pytest.approx(5 * 0.016666667, abs=1e-9)
        for i, f in enumerate(s.frames()):
            assert f.timestamp == pytest.approx(1.0 + i * 0.016666667, abs=1e-9)
            assert np.allclose(f.pose, poses[i], atol=1e-6)
            assert (f.intrinsics.width, f.intrinsics.height) == (1920, 1440)
            assert f.intrinsics.fx == pytest.approx(k[0]) and f.intrinsics.cy == pytest.approx(k[3])
            assert f.has_depth and f.depth_index == i
        for i in (0, 5, 2, 3):  # random access
            assert np.array_equal(s.depth(i, np.float16).view(np.uint16), depth[i].view(np.uint16))
            assert np.array_equal(s.depth(i), depth[i].astype(np.float32))
            mm = s.depth(i, np.uint16)
            assert np.array_equal(mm, np.floor(depth[i].astype(np.float64) * 1000 + 0.5).astype(np.uint16))  # half away from zero
            assert np.array_equal(s.confidence(i), conf[i])
        with pytest.raises(ck.NotFoundError):
            s.frame(6)
        with pytest.raises(ck.NotFoundError):
            s.depth(6)
        with pytest.raises(TypeError):
            s.depth(0, np.int32)
    # The metadata file opens the same scan.
    with ck.Scan(tmp_path / "scan" / "20261125T101500+0000_dev.json") as s:
        assert len(s) == 6


def test_multiscan_real_sample(tmp_path):
    """The MultiScan app's own sample: 354 frames of a real iPad capture (no streams shipped)."""
    src = FIXTURES / "multiscan-sample"
    d = tmp_path / "real"
    d.mkdir()
    (d / "scan.json").write_bytes((src / "metadata-example.json").read_bytes())
    (d / "scan.jsonl").write_bytes((src / "camera-info-example.jsonl").read_bytes())
    lines = [json.loads(l) for l in (src / "camera-info-example.jsonl").read_text().splitlines()]
    with ck.Scan(d) as s:
        assert len(s) == 354 == len(lines) and s.depth_frame_count == 0 and s.depth_size == (0, 0)
        assert s.duration == pytest.approx((lines[-1]["timestamp"] - lines[0]["timestamp"]) / 1e9)
        for i in (0, 100, 353):
            f = s.frame(i)
            assert np.allclose(f.pose, np.asarray(lines[i]["transform"]).reshape(4, 4).T, atol=1e-6)
            assert f.intrinsics.fx == pytest.approx(lines[i]["intrinsics"][0])
            assert (f.intrinsics.width, f.intrinsics.height) == (1920, 1440)
            assert not f.has_depth
        with pytest.raises(ck.NotFoundError):
            s.depth(0)


def test_multiscan_short_stream_and_no_confidence(tmp_path):
    write_multiscan(tmp_path / "a", stream_frames=4, confidence=False)
    with ck.Scan(tmp_path / "a") as s:
        assert not s.has_confidence
        s.depth(3)
        with pytest.raises(ck.CorruptError, match="ends before frame 4"):
            s.depth(4)
        with pytest.raises(ck.NotFoundError):
            s.confidence(0)


def test_stray_round_trip(tmp_path):
    depth, conf, poses = write_stray(tmp_path / "stray", skip_depth=(3,))
    with ck.Scan(tmp_path / "stray") as s:
        assert s.kind == ck.ScanKind.STRAY and len(s) == 5 and s.depth_size == (16, 12) and s.has_confidence
        assert s.depth_frame_count == 4
        for i, f in enumerate(s.frames()):
            assert f.timestamp == pytest.approx(100.5 + i / 60, abs=1e-6)
            assert np.allclose(f.pose, poses[i], atol=2e-6), i  # OpenCV axes converted to OpenGL
            assert (f.intrinsics.width, f.intrinsics.height) == (1920, 1440)
            assert (f.intrinsics.fx, f.intrinsics.cx, f.intrinsics.cy) == pytest.approx((1597.5, 959.1, 721.3))
            assert f.depth_index == i and f.has_depth == (i != 3)
            if f.has_depth:
                assert np.array_equal(s.depth(i, np.uint16), depth[i])
                assert np.array_equal(s.depth(i), (depth[i] / 1000.0).astype(np.float32))
                assert np.array_equal(s.confidence(i), conf[i])
        with pytest.raises(ck.NotFoundError, match="no depth"):
            s.depth(3)


def test_stray_other_principal_point(tmp_path):
    write_stray(tmp_path / "s", n=2)
    (tmp_path / "s" / "camera_matrix.csv").write_text("500,0,320\n0,500,240\n0,0,1\n")
    with ck.Scan(tmp_path / "s") as s:
        k = s.frame(0).intrinsics
        assert (k.width, k.height) == (640, 480)


def test_open_errors(tmp_path):
    with pytest.raises(ck.NotFoundError):
        ck.Scan(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ck.NotFoundError, match="no MultiScan scan"):
        ck.Scan(tmp_path / "empty")
    write_multiscan(tmp_path / "two", scan_id="a")
    write_multiscan(tmp_path / "two", scan_id="b")
    with pytest.raises(ck.InvalidArgumentError, match="2 MultiScan scans"):
        ck.Scan(tmp_path / "two")
    assert len(ck.Scan(tmp_path / "two" / "b.json")) == 6
    with pytest.raises(ck.InvalidArgumentError):
        ck.Scan("")
    # A camera-info file that cannot be read (a folder in its place): CK_E_IO.
    write_multiscan(tmp_path / "io", scan_id="x")
    os.remove(tmp_path / "io" / "x.jsonl")
    (tmp_path / "io" / "x.jsonl").mkdir()
    with pytest.raises(ck.CaptureKitIOError):
        ck.Scan(tmp_path / "io")


def test_read_errors(tmp_path):
    write_multiscan(tmp_path / "m", scan_id="m")
    with ck.Scan(tmp_path / "m") as s:
        with pytest.raises(ck.BufferTooSmallError):
            ck._ffi.lib.ck_scan_depth(np.zeros(8, np.uint8), 8, np.zeros(1, np.uintp), s._h(), 0, 1)
        with pytest.raises(ck.BufferTooSmallError):
            ck._ffi.lib.ck_scan_confidence(np.zeros(8, np.uint8), 8, np.zeros(1, np.uintp), s._h(), 0)
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_scan_depth(np.zeros(8, np.uint8), 8, np.zeros(1, np.uintp), s._h(), 0, 4)
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_scan_describe(None, s._h())
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_scan_frame(ck._ffi.ck_scan_frame_info(), None, 0)
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_scan_confidence(np.zeros(200, np.uint8), 200, np.zeros(1, np.uintp), None, 0)
        with pytest.raises(ck.NotFoundError):
            s.confidence(99)
    # Streams replaced by damage / by a folder after opening.
    write_multiscan(tmp_path / "d", scan_id="d")
    with ck.Scan(tmp_path / "d") as s:
        data = bytearray((tmp_path / "d" / "d.depth.zlib").read_bytes())
        data[10:40] = b"\xff" * 30
        (tmp_path / "d" / "d.depth.zlib").write_bytes(bytes(data))
        with pytest.raises(ck.CorruptError):
            s.depth(0)
        os.remove(tmp_path / "d" / "d.confidence.zlib")
        (tmp_path / "d" / "d.confidence.zlib").mkdir()
        with pytest.raises(ck.CaptureKitIOError):
            s.confidence(0)
    write_stray(tmp_path / "s", n=3)
    with ck.Scan(tmp_path / "s") as s:
        os.remove(tmp_path / "s" / "depth" / "000001.png")
        (tmp_path / "s" / "depth" / "000001.png").mkdir()
        with pytest.raises(ck.CaptureKitIOError):
            s.depth(1)
        # A PNG of another size, and one declaring a huge size: refused before decoding.
        from PIL import Image

        Image.fromarray(np.zeros((5, 5), np.uint16)).save(tmp_path / "s" / "depth" / "000002.png")
        with pytest.raises(ck.CorruptError, match="5 x 5"):
            s.depth(2)
        png = bytearray((tmp_path / "s" / "confidence" / "000002.png").read_bytes())
        png[16:24] = (30000).to_bytes(4, "big") * 2
        (tmp_path / "s" / "confidence" / "000002.png").write_bytes(bytes(png))
        with pytest.raises(ck.CorruptError):
            s.confidence(2)


def _mutations(data: bytes, rng, n):
    for _ in range(n):
        b = bytearray(data)
        op = rng.randrange(4)
        if op == 0 and b:
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1:
            b = b[: rng.randrange(len(b) + 1)]
        elif op == 2:
            pos = rng.randrange(len(b) + 1)
            b[pos:pos] = rng.choice([b"-1", b"1e400", b"nan", b",", b"\n", b"999999999999", b'"', b"0"])
        else:
            b = b.replace(rng.choice([b"1", b"0", b","]), rng.choice([b"", b"9", b"-"]), 1)
        yield bytes(b)


@pytest.mark.parametrize("which", ["json", "jsonl", "odometry", "matrix"])
def test_hostile_files(tmp_path, which):
    """Mutated metadata, camera info and CSV files: a clean CaptureKitError or a scan whose every
    frame reads back (never a crash, never an exception of another kind)."""
    rng = random.Random(which)
    if which in ("json", "jsonl"):
        write_multiscan(tmp_path / "m", scan_id="m")
        target = tmp_path / "m" / f"m.{which}"
        root = tmp_path / "m"
    else:
        write_stray(tmp_path / "s", n=3)
        target = tmp_path / "s" / ("odometry.csv" if which == "odometry" else "camera_matrix.csv")
        root = tmp_path / "s"
    original = target.read_bytes()
    outcomes = {"ok": 0, "error": 0}
    for data in _mutations(original, rng, 150):
        target.write_bytes(data)
        try:
            with ck.Scan(root) as s:
                for i in range(len(s)):
                    s.frame(i)
                    if s.frame(i).has_depth:
                        try:
                            s.depth(i)
                        except ck.CaptureKitError:
                            pass
            outcomes["ok"] += 1
        except ck.CaptureKitError:
            outcomes["error"] += 1
    assert outcomes["error"] > 0


def test_dataset_reader_depth_equals_what_the_demo_wrote(c_demo_dataset):
    """Acceptance: the demo dataset read by the dataset reader equals its files, frame by frame —
    depth PNGs (read by Pillow) and the streamed confidence (decoded with zlib as MultiScan does)."""
    from PIL import Image

    root = pathlib.Path(c_demo_dataset)
    meta_path = next(p for p in root.glob("*.json") if p.name not in ("transforms.json", "boundingbox.json"))
    meta = json.loads(meta_path.read_text())
    depth_stream = next(s for s in meta["streams"] if s["id"] == "depth_back_1")
    h, w = depth_stream["resolution"]
    conf_all = np.frombuffer(zlib.decompressobj(-15).decompress((root / (meta_path.stem + ".confidence.zlib")).read_bytes()), np.uint8)
    conf_frames = conf_all[: conf_all.size // (w * h) * w * h].reshape(-1, h, w)
    transforms = json.loads((root / "transforms.json").read_text())
    with ck.Dataset.open_readonly(root) as ds:
        assert ds.frame_count == len(transforms["frames"]) > 0
        for i in range(ds.frame_count):
            f = ds.frame(i)
            tf = transforms["frames"][i]
            # Registration: the reader's frame i is transforms.json's frame i, its depth file and
            # its stream frame are the ones the writer recorded for it (not the reader's own word).
            assert f.image_path == tf["file_path"] and f.depth_path == tf["depth_file_path"]
            assert f.stream_index == tf["multiscan_frame"]
            mm = np.asarray(Image.open(root / tf["depth_file_path"]))
            assert np.array_equal(ds.depth(i, np.uint16), mm)
            assert np.array_equal(ds.depth(i), (mm / 1000.0).astype(np.float32))
            assert np.array_equal(ds.confidence(i), conf_frames[tf["multiscan_frame"]])
        with pytest.raises(ck.NotFoundError):
            ds.depth(ds.frame_count)
    # The dataset is a MultiScan scan too: its stream frames, by the scan reader.
    d_all = np.frombuffer(zlib.decompressobj(-15).decompress((root / (meta_path.stem + ".depth.zlib")).read_bytes()), np.uint16)
    with ck.Scan(root) as s:
        assert s.depth_size == (w, h) and len(s) == depth_stream["number_of_frames"]
        for i in (0, len(s) // 2, len(s) - 1):
            assert np.array_equal(s.depth(i, np.float16).view(np.uint16).reshape(-1), d_all[i * w * h:(i + 1) * w * h])


def test_dataset_reader_depth_errors(tmp_path):
    """A dataset never finalised: streamed-only frames have no readable depth (NotFound → None);
    a damaged depth PNG is CorruptError; the size query reports BufferTooSmall."""
    ds = ck.Dataset(tmp_path / "d")
    img = np.zeros((12, 16, 3), np.uint8)
    k = ck.Intrinsics(20, 20, 8, 6, 16, 12)
    depth = np.full((12, 16), 1.5, np.float32)
    ds.add_frame(np.eye(4, dtype=np.float32), k, rgb=img, depth=depth, timestamp=0.0)
    ds.add_frame(np.eye(4, dtype=np.float32), k, rgb=img, timestamp=1.0)
    ds.close()
    with ck.Dataset.open_readonly(tmp_path / "d") as r:
        assert np.array_equal(r.depth(0, np.uint16), np.full((12, 16), 1500, np.uint16))
        assert r.depth(1) is None and r.confidence(0) is None
        with pytest.raises(ck.BufferTooSmallError):
            ck._ffi.lib.ck_dataset_frame_depth(None, 0, np.zeros(1, np.uintp), np.zeros(1, np.uint32),
                                               np.zeros(1, np.uint32), r._h(), 0, 3)
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_dataset_frame_depth(None, 0, np.zeros(1, np.uintp), np.zeros(1, np.uint32),
                                               np.zeros(1, np.uint32), r._h(), 0, 4)
        with pytest.raises(ck.InvalidArgumentError):
            ck._ffi.lib.ck_dataset_frame_confidence(None, 0, np.zeros(1, np.uintp), np.zeros(1, np.uint32),
                                                    np.zeros(1, np.uint32), None, 0)
        p = tmp_path / "d" / r.frame(0).depth_path
        data = bytearray(p.read_bytes())
        data[-20:-12] = b"\x00" * 8
        p.write_bytes(bytes(data))
        with pytest.raises(ck.CorruptError):
            r.depth(0)
        os.remove(p)
        p.mkdir()
        with pytest.raises(ck.CaptureKitIOError):
            r.depth(0)


def test_dataset_reader_streamed_frames(tmp_path):
    """Frames streamed and captured: confidence from the stream, equal to what was streamed;
    damaged or unreadable streams are CorruptError / CaptureKitIOError."""
    rng = np.random.default_rng(3)
    k = ck.Intrinsics(20, 20, 8, 6, 16, 12)
    ds = ck.Dataset(tmp_path / "d", ck.DatasetOptions(start_time_unix=1_700_000_000))
    conf = [rng.integers(0, 3, (12, 16), dtype=np.uint8) for _ in range(4)]
    depth = [rng.uniform(0.5, 3, (12, 16)).astype(np.float16) for _ in range(4)]
    for i in range(4):
        pose = orbit_pose(i).astype(np.float32)
        ds.stream_frame(i / 60, pose, k, depth=depth[i], confidence=conf[i])
        if i % 2 == 1:
            ds.add_frame(pose, k, rgb=np.zeros((12, 16, 3), np.uint8), timestamp=i / 60)
    ds.finalize()
    ds.close()
    with ck.Dataset.open_readonly(tmp_path / "d") as r:
        assert r.frame_count == 2
        for j in range(2):
            si = r.frame(j).stream_index
            assert si == 2 * j + 1
            assert np.array_equal(r.confidence(j), conf[si])
            # No depth PNG: the depth comes from the stream, bit-exact float16.
            assert np.array_equal(r.depth(j, np.float16).view(np.uint16), depth[si].view(np.uint16))
    # A read-only dataset opens its streams once; damage found by a fresh reader.
    stream = next((tmp_path / "d").glob("*.confidence.zlib"))
    data = bytearray(stream.read_bytes())
    data[4:30] = b"\xff" * 26
    stream.write_bytes(bytes(data))
    with ck.Dataset.open_readonly(tmp_path / "d") as r:
        with pytest.raises(ck.CorruptError):
            r.confidence(0)
    os.remove(stream)
    stream.mkdir()
    with ck.Dataset.open_readonly(tmp_path / "d") as r:
        with pytest.raises(ck.CaptureKitIOError):
            r.confidence(0)
