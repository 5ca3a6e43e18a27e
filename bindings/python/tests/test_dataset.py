"""capturekit.dataset: Dataset and Session through the binding — struct layouts against the header,
a round trip, the path rules, the zip, and crash safety (a SIGKILLed writer process)."""

import ctypes
import json
import math
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest
from PIL import Image

import capturekit as ck
from capturekit import _ffi
from capturekit import Dataset, DatasetOptions, Session

K = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)
KD = ck.Intrinsics(fx=10.0, fy=10.0, cx=4.0, cy=3.0, width=8, height=6)


def pose_at(x, y=0.5, z=2.0):
    p = np.eye(4)
    p[:3, 3] = (x, y, z)
    return p


def rgb(seed=0):
    return (np.arange(12 * 16 * 3, dtype=np.uint32).reshape(12, 16, 3) * 7 + seed).astype(np.uint8)


def depth():
    return np.linspace(0.4, 1.2, 48, dtype=np.float32).reshape(6, 8)


# -- layouts: offsets computed by hand from ck_dataset.h's field types (LP64) ------------------

@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="offsets written for 64-bit")
@pytest.mark.parametrize("struct, size, offsets", [
    (_ffi.ck_dataset_options, 120, {"start_time_unix": 24, "device_id": 32, "scene_type": 72, "color_encoding": 80,
                                    "color_file_extension": 88, "write_mode": 96, "write_queue_mb": 100,
                                    "image_encoding": 104, "jpeg_quality": 108, "image_downscales": 112, "reserved3": 116}),
    (_ffi.ck_image, 32, {"data": 0, "width": 8, "height": 12, "stride": 16, "format": 24, "reserved": 28}),
    (_ffi.ck_depth_map, 32, {"data": 0, "width": 8, "height": 12, "stride": 16, "format": 24, "reserved": 28}),
    (_ffi.ck_frame_desc, 200, {"timestamp": 8, "pose": 16, "intrinsics": 80, "image": 104, "image_path": 136,
                               "depth": 144, "sharpness": 176, "reserved2": 180, "image_chroma": 184,
                               "image_chroma_stride": 192}),
    (_ffi.ck_session_options, 72, {"scheduler": 8, "coverage": 16, "dataset": 24, "storage_warning_minutes": 32,
                                   "stream_depth": 36, "log": 40, "log_user": 48, "log_level": 56,
                                   "queue_full": 64, "reserved2": 68}),
    (_ffi.ck_session_frame, 272, {"pose": 16, "intrinsics": 80, "image": 104, "depth": 136, "confidence": 168,
                                  "depth_intrinsics": 200, "sharpness": 224, "reserved": 228,
                                  "tracking_reason": 232, "mean_luma": 236, "image_chroma": 240,
                                  "image_chroma_stride": 248, "image_release": 256, "image_release_user": 264}),
    (_ffi.ck_scheduler_frame, 184, {"pose": 16, "box": 80, "sharpness": 88, "reserved": 92, "depth": 96,
                                    "depth_intrinsics": 128, "intrinsics": 152, "tracking_reason": 176,
                                    "mean_luma": 180}),
    (_ffi.ck_scheduler_options, 120, {"blocking_flags": 104, "prompt_window": 108, "min_box_in_frame": 112,
                                      "min_luma": 116}),
    (_ffi.ck_session_result, 144, {"pass_": 4, "frame_id": 8, "guidance": 16, "coverage": 64, "minutes_left": 68,
                                   "events": 72, "image_path": 80}),
])
def test_struct_layout(struct, size, offsets):
    assert ctypes.sizeof(struct) == size
    for name, off in offsets.items():
        assert getattr(struct, name).offset == off, name


def test_init_functions_fill_struct_size():
    o = _ffi.defaults("ck_session_options_init", _ffi.ck_session_options, 0)
    assert o.struct_size == 72 and not o.dataset and not o.scheduler and not o.coverage
    assert o.stream_depth == 1
    d = _ffi.defaults("ck_frame_desc_init", _ffi.ck_frame_desc)
    assert d.struct_size == ctypes.sizeof(d) and d.sharpness < 0


@pytest.mark.parametrize("init, struct, first", [
    ("ck_session_frame_init", "ck_session_frame", 232), ("ck_frame_desc_init", "ck_frame_desc", 184),
    ("ck_session_options_init", "ck_session_options", 64), ("ck_scheduler_frame_init", "ck_scheduler_frame", 152),
    ("ck_scheduler_options_init", "ck_scheduler_options", 108), ("ck_dataset_options_init", "ck_dataset_options", 80)])
def test_unsized_init_writes_only_the_first_release_layout(init, struct, first):
    """A program built against an older, smaller layout calls the unsized symbol: not one byte past
    the first release's layout may change; the sized one writes exactly the size it is given."""
    size = ctypes.sizeof(getattr(_ffi, struct))
    buf = (ctypes.c_ubyte * (size + 32))(*([0xAB] * (size + 32)))
    args = (0,) if init == "ck_session_options_init" else ()
    getattr(_ffi.lib, init)(ctypes.cast(buf, ctypes.POINTER(getattr(_ffi, struct))), *args)
    got = bytes(buf)
    assert int.from_bytes(got[:4], "little") == first
    assert got[first:] == b"\xab" * (size + 32 - first)
    buf = (ctypes.c_ubyte * (size + 32))(*([0xAB] * (size + 32)))
    getattr(_ffi.lib, init + "_sized")(ctypes.cast(buf, ctypes.POINTER(getattr(_ffi, struct))), size, *args)
    got = bytes(buf)
    assert int.from_bytes(got[:4], "little") == size and got[size:] == b"\xab" * 32
    with pytest.raises(ck.UnsupportedError):
        getattr(_ffi.lib, init + "_sized")(ctypes.cast(buf, ctypes.POINTER(getattr(_ffi, struct))), size + 8, *args)


# -- round trip ----------------------------------------------------------------------------

def count_frames(path):
    with open(path) as f:
        return len(json.load(f)["frames"])


def test_round_trip(tmp_path):
    d = tmp_path / "ds"
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    opts = DatasetOptions(start_time_unix=1795000000.0, device_id="py", device_name="pytest")
    with Dataset(d, opts) as ds:
        assert ds.next_image_path() == "images/000000.png"
        assert ds.next_image_path(".jpg") == "images/000000.jpg"
        ds.set_box(box)
        ids = []
        for i in range(4):
            ds.stream_frame(0.1 * i, pose_at(0.1 * i), KD, depth=depth(),
                            confidence=np.full((6, 8), 2, np.uint8))
            ids.append(ds.add_frame(pose_at(0.1 * i), K, rgb=rgb(i), depth=depth(), sharpness=3.0, timestamp=0.1 * i))
        assert ids == [0, 1, 2, 3]
        ds.remove_frame(1)
        assert not (d / "images/000001.png").exists() and not (d / "depth/000001.png").exists()
        with pytest.raises(ck.NotFoundError):
            ds.remove_frame(1)
        assert ds.begin_pass(box) == 1
        # a caller-written image, gray pixels, RGBA pixels
        path = ds.next_image_path()
        (d / path).write_bytes(ck.encode_png(rgb(9)))
        assert ds.add_frame(pose_at(0.5), K, image_path=path) == 4
        assert ds.add_frame(pose_at(0.6), K, rgb=rgb(1)[:, :, 0]) == 5
        assert ds.add_frame(pose_at(0.7), K, rgb=np.dstack([rgb(2), np.full((12, 16), 255, np.uint8)])) == 6
        assert len(ds) == 6
        ds.log_event(ck.EventCode.SLOW_DOWN, 0.3, value=0.7)
        ds.finalize(zip=True)
    tf = json.loads((d / "transforms.json").read_text())
    assert len(tf["frames"]) == 6
    paths = [f["file_path"] for f in tf["frames"]]
    assert "images/000001.png" not in paths and path in paths
    for f in tf["frames"]:
        assert (d / f["file_path"]).is_file()
        if "depth_file_path" in f:
            assert (d / f["depth_file_path"]).is_file()
    assert sum("depth_file_path" in f for f in tf["frames"]) == 3
    img = ck.read_png(str(d / "images/000000.png"))
    assert np.array_equal(np.asarray(img).reshape(12, 16, 3), rgb(0))
    with zipfile.ZipFile(str(d) + ".zip") as z:
        assert z.testzip() is None
        names = set(z.namelist())
        assert {"transforms.json", "boundingbox.json", "images/000000.png", path, "depth/000003.png"} <= names
        assert json.loads(z.read("transforms.json")) == tf
    with Dataset.open(d) as ds:
        assert ds.frame_count == 6
        assert ds.next_image_path() == "images/000007.png"
        with pytest.raises(ck.StateError):
            ds.finalize(zip=True)  # never overwrites the zip


def test_create_rules(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ck.StateError):
        Dataset(tmp_path / "full")
    with pytest.raises(ck.NotFoundError):
        Dataset.open(tmp_path / "full")
    with pytest.raises(ck.InvalidArgumentError):
        Dataset(tmp_path / "bad", DatasetOptions(zlib_level=11))
    ds = Dataset(tmp_path / "ok")
    ds.close()
    ds.close()
    with pytest.raises(ValueError):
        ds.frame_count


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x.png", "images/../../x.png", "a//b.png", "images\\x.png",
                                 "./x.png", "images/", ""])
def test_path_rules(tmp_path, bad):
    (tmp_path / "x.png").write_bytes(b"x")
    with Dataset(tmp_path / "ds") as ds:
        with pytest.raises(ck.InvalidArgumentError):
            ds.add_frame(pose_at(0), K, image_path=bad)
        with pytest.raises(ck.NotFoundError):
            ds.add_frame(pose_at(0), K, image_path="images/missing.png")
        with pytest.raises(ck.NotFoundError):
            ds.add_frame(pose_at(0), K)  # the next image path, not written
        assert ds.frame_count == 0


def test_cancel(tmp_path):
    ds = Dataset(tmp_path / "c")
    ds.set_box(ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5)))
    ds.stream_frame(0.0, pose_at(0), KD, depth=depth())
    ds.add_frame(pose_at(0), K, rgb=rgb(), depth=depth())
    ds.finalize()
    ds.cancel()
    assert not (tmp_path / "c").exists()
    assert ds.closed


# -- session ---------------------------------------------------------------------------------

def look_at(eye, target=(0.0, 0.25, 0.0)):
    eye = np.asarray(eye, float)
    f = np.asarray(target, float) - eye
    f /= np.linalg.norm(f)
    r = np.array([-f[2], 0.0, f[0]])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = r, u, -f, eye
    return m


def test_session(tmp_path):
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    logs = []
    with Session(tmp_path / "s", box, log=lambda level, msg: logs.append((level, msg)),
                 dataset=DatasetOptions(device_id="sess")) as s:
        assert logs
        captured = 0
        written = 0
        events = 0
        for i in range(400):
            a = 0.008 * i
            pose = look_at((1.3 * np.sin(a), 0.8, 1.3 * np.cos(a)))
            use_rgb = i >= 200
            r = s.process(i / 30.0, pose, K, rgb=rgb(i % 5) if use_rgb else None, depth=depth(),
                          confidence=np.ones((6, 8), np.uint8), depth_intrinsics=KD)
            assert 0.0 <= r.coverage <= 1.0
            ev = s.events()
            assert len(ev) == r.events
            events += len(ev)
            if r.captured:
                captured += 1
                if use_rgb:
                    assert r.frame_id is not None and r.image_path == ""
                else:
                    assert r.image_path.startswith("images/")
                    (tmp_path / "s" / r.image_path).write_bytes(ck.encode_png(rgb()))
                    written += 1
        assert captured > 2 and written > 0
        assert s.events() == []
        s.finish(zip=True)
        assert s.dataset.frame_count == captured
        with pytest.raises(ck.StateError):
            s.process(1000.0, np.eye(4), K)
    assert count_frames(tmp_path / "s" / "transforms.json") == captured
    with zipfile.ZipFile(str(tmp_path / "s") + ".zip") as z:
        assert z.testzip() is None


# -- crash safety ----------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys, numpy as np
    import capturekit as ck
    from capturekit.dataset import Dataset
    k = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)
    d, mode = sys.argv[1], sys.argv[2]
    reopened = False
    try:
        ds = Dataset(d, ck.DatasetOptions(write_mode=ck.WriteMode.SYNC if mode == "sync" else ck.WriteMode.BACKGROUND))
    except ck.StateError:
        ds = Dataset.open(d)  # a reopened dataset writes in the background
        reopened = True
    n = ds.frame_count
    base = (np.arange(12 * 16 * 3).reshape(12, 16, 3) % 251).astype(np.uint8)
    dep = np.full((6, 8), 0.8, np.float32)
    print("ready", flush=True)
    i = int(sys.argv[3])
    while True:
        p = np.eye(4); p[0, 3] = 0.01 * i
        img = ((base.astype(np.int64) + i) % 251).astype(np.uint8)  # each frame its own image
        if i % 3 == 2:
            path = ds.next_image_path()
            with open(d + "/" + path, "wb") as f:
                f.write(ck.encode_png(img))
            ds.add_frame(p, k, image_path=path, depth=dep, timestamp=i)
        else:
            ds.add_frame(p, k, rgb=img, depth=dep if i % 2 else None, timestamp=i)
        img[:] = 0  # the caller reuses its buffer at once
        n += 1
        i += 1
        if mode == "sync":
            if reopened:
                ds.flush()  # as durable as a SYNC add
            print("durable", n, flush=True)
        elif i % 4 == 0:
            ds.flush()
            print("durable", n, flush=True)
""")


@pytest.mark.parametrize("mode", ["sync", "background"])
def test_sigkill_crash_safety(tmp_path, mode):
    """A child adds frames (each with its own image) and says which are durable: every add in
    SYNC mode, every flush in BACKGROUND mode. It is SIGKILLed at random moments, 10 times;
    after each kill the reopened dataset has every durable frame, whole and registered (each
    frame's image is the one added with its timestamp), and no file of a frame it lost."""
    d = tmp_path / "crash"
    rnd = random.Random(5)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(ck.__file__))] + [env.get("PYTHONPATH", "")])
    reported = 0
    next_i = 0
    base = (np.arange(12 * 16 * 3).reshape(12, 16, 3) % 251).astype(np.int64)
    for _ in range(10):
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(d), mode, str(next_i)], stdout=subprocess.PIPE,
                             env=env, text=True)
        assert p.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + rnd.uniform(0.02, 0.25)
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if line.startswith("durable"):
                reported = max(reported, int(line.split()[1]))
        p.send_signal(signal.SIGKILL)
        rest = p.stdout.read()
        p.wait()
        # The writer was still adding when killed: an add never failed after a reopen (files of
        # an add killed before its journal line used to block every later add with "exists").
        assert p.returncode == -signal.SIGKILL, "the writer stopped by itself (an add failed after reopen)"
        for line in rest.splitlines():
            if line.startswith("durable"):
                reported = max(reported, int(line.split()[1]))
        with Dataset.open(d) as ds:
            assert ds.frame_count >= reported
            # Reopening left no orphan: every image and depth file belongs to a journaled frame.
            ds.finalize()
            reported = ds.frame_count  # what survived is the next child's starting count
        tf = json.loads((d / "transforms.json").read_text())
        listed = set()
        for f in tf["frames"]:
            listed.add(f["file_path"])
            listed.update([f["depth_file_path"]] if "depth_file_path" in f else [])
            i = int(round(f["timestamp"]))
            got = np.asarray(Image.open(d / f["file_path"]).convert("RGB"))
            assert np.array_equal(got, ((base + i) % 251).astype(np.uint8)), f"{f['file_path']} is not frame {i}'s image"
            next_i = max(next_i, i + 1)
        on_disk = {f"{sub}/{q.name}" for sub in ("images", "depth") for q in (d / sub).iterdir()}
        assert on_disk == listed
    assert reported > 10
    with Dataset.open(d) as ds:
        n = ds.frame_count
        ds.finalize()
    tf = json.loads((d / "transforms.json").read_text())
    assert len(tf["frames"]) == n
    for f in tf["frames"]:
        assert (d / f["file_path"]).is_file()
        if "depth_file_path" in f:
            assert (d / f["depth_file_path"]).is_file()


def test_session_consecutive_captures_without_pixels(tmp_path):
    """Every frame captured (1 s apart, 11 degrees each): each caller-written image keeps its own
    path and frame (regression: the second capture replaced the first, pending one)."""
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    sched = ck.SchedulerOptions(interval_slow=0.5, interval_medium=0.5, interval_fast=0.5, first_capture_delay=0.0)
    paths, times, committed = [], [], []
    with Session(tmp_path / "s", box, scheduler=sched) as s:
        for i in range(20):
            a = 0.2 * i
            r = s.process(float(i), look_at((1.3 * np.sin(a), 0.8, 1.3 * np.cos(a))), K)
            committed += [(e.index, e.timestamp) for e in s.events() if e.code == ck.EventCode.CAPTURE_COMMITTED]
            if r.captured:
                assert r.frame_id is None  # deferred: the id comes with CAPTURE_COMMITTED
                paths.append(r.image_path)
                times.append(float(i))
                (tmp_path / "s" / r.image_path).write_bytes(ck.encode_png(rgb(i)))
        s.flush()  # commits the last one
        committed += [(e.index, e.timestamp) for e in s.events() if e.code == ck.EventCode.CAPTURE_COMMITTED]
        s.finish()
        assert len(paths) >= 10
        assert len(set(paths)) == len(paths)
        assert s.dataset.frame_count == len(paths)
    # Each deferred capture's id arrives once, in order, with its frame's timestamp.
    assert committed == list(zip(range(len(paths)), times))
    tf = json.loads((tmp_path / "s" / "transforms.json").read_text())
    assert [f["file_path"] for f in tf["frames"]] == paths
    assert [f["timestamp"] for f in tf["frames"]] == times


def test_borrowed_dataset_keeps_its_session_alive_and_raises_once_it_is_closed(tmp_path):
    """Issue 8, finding 4: a Dataset borrowed from a Session used to outlive it and read freed
    memory (a segfault in 6 of 9 runs)."""
    import gc
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5), floor=0.0)
    ds = Session(tmp_path / "a", box).dataset   # the Session object itself is dropped at once
    gc.collect()
    for _ in range(3):
        assert ds.frame_count == 0                # the view keeps its session alive
    s = Session(tmp_path / "b", box)
    view = s.dataset
    s.close()
    with pytest.raises(ValueError, match="Session"):
        view.frame_count
    with pytest.raises(ValueError):
        view.cancel()
    # Through the C API the borrowed handle refuses close and cancel with CK_E_STATE.
    with Session(tmp_path / "c", box) as s2:
        raw = _ffi.ck_dataset_p()
        _ffi.lib.ck_session_dataset(raw, s2._h())
        with pytest.raises(ck.StateError, match="borrowed"):
            _ffi.lib.ck_dataset_close(raw)
        with pytest.raises(ck.StateError, match="borrowed"):
            _ffi.lib.ck_dataset_cancel(raw)
        assert s2.dataset.frame_count == 0


def test_stream_only_scan_metadata_with_the_hosts_video(tmp_path):
    """A dataset that only streams (no captured images) still describes the colour camera first,
    with the intrinsics the host gave per frame; the host's video is counted when named."""
    import json
    k = ck.Intrinsics(1613.7, 1613.7, 941.4, 727.0, 1920, 1440)
    opts = ck.DatasetOptions(start_time_unix=1.7e9, color_encoding="h264", color_file_extension="mp4")
    ds = ck.Dataset(tmp_path / "s", opts)
    depth = np.full((192, 256), 1.5, np.float32)
    conf = np.full((192, 256), 2, np.uint8)
    for i in range(31):
        ds.stream_frame(10.0 + i / 30.0, np.eye(4), k, depth=depth, confidence=conf)
    ds.finalize()
    ds.close()
    meta_path = next((tmp_path / "s").glob("*.json"))
    meta = json.loads(meta_path.read_text())
    color = meta["streams"][0]
    assert (color["id"], color["encoding"], color["file_extension"]) == ("color_back_1", "h264", "mp4")
    assert color["resolution"] == [1440, 1920] and color["number_of_frames"] == 31
    assert color["intrinsics"] == pytest.approx([1613.7, 0, 0, 0, 1613.7, 0, 941.4, 727.0, 1], rel=1e-6)
    assert [s["frequency"] for s in meta["streams"]] == [30] * 4
    assert meta["number_of_files"] == 5  # json, jsonl, depth, confidence + the host's mp4


@pytest.mark.parametrize("enc, ext", [("h264", None), (None, "mp4"), ("h.264", "mp4"), ("h264", ".mp4"), ("", "mp4")])
def test_host_video_options_are_checked(tmp_path, enc, ext):
    with pytest.raises(ck.InvalidArgumentError, match="color_"):
        ck.Dataset(tmp_path / "s", ck.DatasetOptions(color_encoding=enc, color_file_extension=ext))
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def test_frames_name_their_streamed_frame(tmp_path):
    """A frame added with the timestamp of the frame just streamed records that frame's index in
    the MultiScan streams (transforms.json "multiscan_frame"); others record none. It survives a
    reopen (the journal keeps it)."""
    import json
    k = ck.Intrinsics(100, 100, 32, 24, 64, 48)
    rgb = np.full((48, 64, 3), 90, np.uint8)
    conf = np.full((12, 16), 2, np.uint8)
    ds = ck.Dataset(tmp_path / "d", ck.DatasetOptions(start_time_unix=1.7e9))
    for i in range(5):
        ds.stream_frame(i * 0.1, np.eye(4), k, confidence=conf)
        if i in (1, 3):
            ds.add_frame(np.eye(4), k, rgb=rgb, timestamp=i * 0.1)
    ds.add_frame(np.eye(4), k, rgb=rgb, timestamp=7.0)  # not a streamed frame
    ds.close()
    ds = ck.Dataset.open(tmp_path / "d")
    ds.finalize()
    ds.close()
    frames = json.loads((tmp_path / "d" / "transforms.json").read_text())["frames"]
    assert [f.get("multiscan_frame") for f in frames] == [1, 3, None]


def test_host_video_survives_a_reopen(tmp_path):
    """The host's colour video is kept in the journal's options (a reopened dataset has them as
    created), and a hostile value there is damage."""
    import json
    k = ck.Intrinsics(100, 100, 32, 24, 64, 48)
    opts = ck.DatasetOptions(start_time_unix=1.7e9, color_encoding="hevc", color_file_extension="mov")
    ds = ck.Dataset(tmp_path / "d", opts)
    ds.stream_frame(0.0, np.eye(4), k, confidence=np.full((12, 16), 2, np.uint8))
    ds.close()
    journal = (tmp_path / "d" / "capturekit.jsonl").read_text().splitlines()
    begin = json.loads(journal[0])
    assert (begin["options"]["color_encoding"], begin["options"]["color_file_extension"]) == ("hevc", "mov")
    # A hostile journal value is refused on reopen as damage, naming the key.
    begin["options"]["color_file_extension"] = "../x"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "capturekit.jsonl").write_text(json.dumps(begin) + "\n")
    with pytest.raises(ck.CorruptError, match="color_file_extension"):
        ck.Dataset.open(bad)


def test_session_conveniences(tmp_path):
    """Issue 11: the session's coverage from Python (read-only view), a clean `with` exit
    finishes the dataset and an exception only closes it; LogLevel and the blocking presets at the
    top level."""
    import json
    assert ck.LogLevel.INFO == 1 or isinstance(ck.LogLevel.INFO, int)
    assert int(ck.BLOCKING_OBJECT_CAPTURE) == 0x1E8FFD and int(ck.BLOCKING_ROOM_SCAN) == 0x1E8FE5
    box = ck.Box((0, 0.3, 0), (0.4, 0.6, 0.4))
    k = ck.Intrinsics(200, 200, 64, 48, 128, 96)
    rgb = np.full((96, 128, 3), 120, np.uint8)
    # The 0.6 m box fills more than this 96-pixel-high image from 1.2 m (out of frame since 0.2):
    # these tests are about coverage and passes, not framing, so that gate is off.
    sched = ck.SchedulerOptions(first_capture_delay=0, interval_slow=0.1, interval_medium=0.1, interval_fast=0.1,
                                redundant_distance=0, min_box_in_frame=0)
    with ck.Session(tmp_path / "ok", None, scheduler=sched) as s:
        with pytest.raises(ck.StateError):
            s.coverage  # no box yet
        s.set_box(box)
        captured = 0
        for i in range(40):
            a = i * 0.05
            eye = np.array([1.2 * math.sin(a), 0.6, 1.2 * math.cos(a)])
            r = s.process(i / 10, look_at(eye, (0, 0.3, 0)), k, rgb=rgb)
            captured += r.captured
        cov = s.coverage
        assert captured > 0 and cov.summary().views == captured
        assert cov.face(ck.Face.BACK).count + cov.face(ck.Face.RIGHT).count + cov.face(ck.Face.LEFT).count > 0
        assert cov.cells().shape == (6, 4, 4) and cov.dial().shape == (2, 24)
        with pytest.raises(ValueError, match="read-only"):
            cov.add_view(np.eye(4), k, 100.0)
        with pytest.raises(ValueError, match="read-only"):
            cov.reset()
    assert s.closed
    with pytest.raises(ValueError, match="Session"):
        cov.summary()
    frames = json.loads((tmp_path / "ok" / "transforms.json").read_text())["frames"]  # finished
    assert len(frames) == captured
    # An exception inside the block: closed, not finished (resumable as the crash left it).
    with pytest.raises(RuntimeError):
        with ck.Session(tmp_path / "err", box, scheduler=sched) as s:
            s.process(0.0, look_at(np.array([0, 0.6, 1.2]), (0, 0.3, 0)), k, rgb=rgb)
            raise RuntimeError("caller failure")
    assert s.closed and not (tmp_path / "err" / "transforms.json").exists()
    assert ck.Dataset.open(tmp_path / "err").frame_count >= 0


def test_session_begin_pass(tmp_path):
    """A second pass (the object turned over): its own box in boundingbox.json, its frames tagged
    with it in transforms.json, coverage and scheduler starting again."""
    import json
    box0 = ck.Box((0, 0.3, 0), (0.4, 0.6, 0.4))
    box1 = ck.Box((0, 0.2, 0), (0.4, 0.4, 0.6), 0.5)
    k = ck.Intrinsics(200, 200, 64, 48, 128, 96)
    rgb = np.full((96, 128, 3), 120, np.uint8)
    # The 0.6 m box fills more than this 96-pixel-high image from 1.2 m (out of frame since 0.2):
    # these tests are about coverage and passes, not framing, so that gate is off.
    sched = ck.SchedulerOptions(first_capture_delay=0, interval_slow=0.1, interval_medium=0.1, interval_fast=0.1,
                                redundant_distance=0, min_box_in_frame=0)
    t = 0.0
    with ck.Session(tmp_path / "s", box0, scheduler=sched) as s:
        def orbit(n, target):
            nonlocal t
            got = 0
            for i in range(n):
                a = i * 0.05
                eye = np.array([1.2 * math.sin(a), 0.6, 1.2 * math.cos(a)])
                got += s.process(t, look_at(eye, target), k, rgb=rgb).captured
                t += 0.1
            return got
        first = orbit(20, (0, 0.3, 0))
        assert first > 0 and s.coverage.summary().views == first
        assert s.begin_pass(box1) == 1
        assert s.coverage.summary().views == 0  # starts again for the new box
        second = orbit(20, (0, 0.2, 0))
        assert second > 0 and s.coverage.summary().views == second
    root = tmp_path / "s"
    frames = json.loads((root / "transforms.json").read_text())["frames"]
    assert [f["pass"] for f in frames] == [0] * first + [1] * second
    bb = json.loads((root / "boundingbox.json").read_text())
    assert [p["pass"] for p in bb["passes"]] == [0, 1]
    assert bb["passes"][1]["rad_rot_about_y"] == pytest.approx(0.5)


def test_background_writer_options_and_flush(tmp_path):
    """Frames are written off the caller's thread by default: flush makes them durable; a
    reopened dataset sees them; SYNC writes each add before it returns; bad modes are refused."""
    with pytest.raises(ck.InvalidArgumentError, match="write_mode"):
        Dataset(tmp_path / "bad", DatasetOptions(write_mode=5))
    with pytest.raises(ck.InvalidArgumentError, match="write_queue_mb"):
        Dataset(tmp_path / "bad", DatasetOptions(write_queue_mb=1 << 20))
    with pytest.raises(ck.InvalidArgumentError, match="queue_full"):
        Session(tmp_path / "bad", queue_full=3)
    for mode in (ck.WriteMode.BACKGROUND, ck.WriteMode.SYNC):
        d = tmp_path / mode.name
        with Dataset(d, DatasetOptions(write_mode=mode, write_queue_mb=4)) as ds:
            for i in range(6):
                img = rgb(i)
                assert ds.add_frame(look_at((np.sin(i), 0.8, np.cos(i))), K, rgb=img, timestamp=float(i)) == i
                img[:] = 0  # the binding's buffers are borrowed for the call only
            assert ds.frame_count == 6
            ds.flush()
            with Dataset.open_readonly(d) as again:  # one writer per dataset: ds is live
                assert again.frame_count == 6
            for i in range(6):
                got = np.asarray(Image.open(d / "images" / f"{i:06d}.png").convert("RGB"))
                assert np.array_equal(got, rgb(i))
            ds.finalize()
    with Session(tmp_path / "s", ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))) as s:
        s.flush()
        s.finish()
        with pytest.raises(ck.StateError, match="finished"):
            s.flush()


def _nv12_frame(h, w, seed):
    """A camera-like NV12 frame: a smooth Y gradient with texture and slowly varying chroma."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    y = np.clip(40 + 150 * xx / w + 20 * np.sin(yy / 3.0) + rng.normal(0, 3, (h, w)), 0, 255).astype(np.uint8)
    ch, cw = (h + 1) // 2, (w + 1) // 2
    cy, cx = np.mgrid[0:ch, 0:cw]
    cb = np.clip(128 + 60 * np.sin(cx / 5.0), 0, 255)
    cr = np.clip(128 + 60 * np.cos(cy / 4.0), 0, 255)
    return y, np.dstack([cb, cr]).astype(np.uint8)


def test_camera_native_frames_convert_like_pillow_and_opencv(tmp_path):
    """NV12 full range converts as JPEG's YCbCr (Pillow's converter), video range as OpenCV's
    NV12 converter (BT.601 studio swing), BGRA exactly; every image PNG decoded by Pillow."""
    cv2 = pytest.importorskip("cv2")
    h, w = 36, 50
    k = ck.Intrinsics(fx=50.0, fy=50.0, cx=25.0, cy=18.0, width=w, height=h)
    y, cbcr = _nv12_frame(h, w, 1)
    bgra = np.dstack([cbcr.repeat(2, 0).repeat(2, 1)[:h, :w], y, np.full((h, w), 9, np.uint8)])
    with Dataset(tmp_path / "d") as ds:
        ds.add_frame(np.eye(4), k, nv12=(y, cbcr), timestamp=0.0)
        ds.add_frame(np.eye(4), k, nv12=(y, cbcr[:, :, ::-1].copy()), video_range=True, timestamp=1.0)
        ds.add_frame(np.eye(4), k, bgra=bgra, timestamp=2.0)
        with pytest.raises(ValueError):
            ds.add_frame(np.eye(4), k, nv12=(y, cbcr[:-1]), timestamp=3.0)
        with pytest.raises(ValueError):
            ds.add_frame(np.eye(4), k, rgb=bgra[:, :, :3], bgra=bgra, timestamp=3.0)
        ds.finalize()
    got = [np.asarray(Image.open(tmp_path / "d" / "images" / f"{i:06d}.png")) for i in range(3)]
    # Full range: Pillow's JPEG YCbCr -> RGB on the upsampled planes.
    up = cbcr.repeat(2, 0).repeat(2, 1)[:h, :w]
    ref = np.asarray(Image.merge("YCbCr", [Image.fromarray(y), Image.fromarray(up[:, :, 0].copy()),
                                           Image.fromarray(up[:, :, 1].copy())]).convert("RGB"))
    assert np.abs(got[0].astype(int) - ref).max() <= 1
    # Video range: OpenCV's NV12 converter (its chroma order is U V = Cb Cr; our second frame
    # swapped them, so the CbCr plane given to OpenCV is the swapped one too).
    nv = np.vstack([y, cbcr[:, :, ::-1].reshape(h // 2, w)])
    ref_v = cv2.cvtColor(nv, cv2.COLOR_YUV2RGB_NV12)
    assert np.abs(got[1].astype(int) - ref_v).max() <= 2
    assert np.array_equal(got[2], bgra[:, :, 2::-1])


def test_downscaled_copies_are_block_means_nerfstudio_can_load(tmp_path):
    """images_2/ and images_4/ hold the same names as images/, each the rounded mean of 2x2 / 4x4
    blocks (two halvings), with the full-size intrinsics in transforms.json (nerfstudio scales them
    by downscale_factor itself)."""
    h, w = 40, 64
    k = ck.Intrinsics(fx=60.0, fy=60.0, cx=32.0, cy=20.0, width=w, height=h)
    rng = np.random.default_rng(4)
    imgs = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(3)]  # each frame its own
    with Dataset(tmp_path / "d", DatasetOptions(image_downscales=(2, 4))) as ds:
        for i, img in enumerate(imgs):
            ds.add_frame(np.eye(4), k, rgb=img, timestamp=float(i))
        ds.finalize()
    for i, img in enumerate(imgs):  # registration: each copy is its own frame's image
        half = np.asarray(Image.open(tmp_path / "d" / "images_2" / f"{i:06d}.png")).astype(int)
        quarter = np.asarray(Image.open(tmp_path / "d" / "images_4" / f"{i:06d}.png")).astype(int)
        blocks = img.astype(int).reshape(h // 2, 2, w // 2, 2, 3).sum(axis=(1, 3))
        assert np.array_equal(half, (blocks + 2) // 4)
        blocks2 = half.reshape(h // 4, 2, w // 4, 2, 3).sum(axis=(1, 3))
        assert np.array_equal(quarter, (blocks2 + 2) // 4)
    assert not (tmp_path / "d" / "images_8").exists()
    tf = json.loads((tmp_path / "d" / "transforms.json").read_text())
    assert tf["w"] == w and tf["fl_x"] == 60.0
    with pytest.raises(ValueError):
        DatasetOptions(image_downscales=(3,))._to_c([])


def test_session_takes_nv12_and_measures_sharpness_from_its_luma(tmp_path):
    """A session given NV12 frames captures them as RGB images (the same as the dataset path), and
    measures sharpness from the Y plane (a blurred Y plane scores lower)."""
    h, w = 48, 64
    k = ck.Intrinsics(fx=60.0, fy=60.0, cx=32.0, cy=24.0, width=w, height=h)
    y, cbcr = _nv12_frame(h, w, 2)
    box = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    sched = ck.SchedulerOptions(interval_slow=0.5, interval_medium=0.5, interval_fast=0.5, first_capture_delay=0.0)
    with Session(tmp_path / "s", box, scheduler=sched) as s:
        r = None
        for i in range(20):
            a = 0.2 * i
            r = s.process(float(i), look_at((1.3 * np.sin(a), 0.8, 1.3 * np.cos(a))), k, nv12=(y, cbcr))
            if r.captured:
                break
        assert r is not None and r.captured and r.frame_id == 0
        s.flush()
    got = np.asarray(Image.open(tmp_path / "s" / "images" / "000000.png"))
    with Dataset(tmp_path / "d", DatasetOptions(write_mode=ck.WriteMode.SYNC)) as ds:
        ds.add_frame(np.eye(4), k, nv12=(y, cbcr))
    assert np.array_equal(got, np.asarray(Image.open(tmp_path / "d" / "images" / "000000.png")))
    tf = json.loads((tmp_path / "s" / "transforms.json").read_text())
    sharp = tf["frames"][0]["sharpness"]
    blurred = ((y[:-1:2].astype(int).repeat(2, 0)[:h] + y[1::2].astype(int).repeat(2, 0)[:h]) // 2).astype(np.uint8)
    assert ck.sharpness_score(blurred) < sharp == pytest.approx(ck.sharpness_score(y), rel=1e-5)


def test_colmap_export_is_read_by_pycolmap_with_the_same_poses(tmp_path):
    """The COLMAP text model of a finished dataset, read by COLMAP's own Python bindings: one
    camera per distinct intrinsics, every frame's cam_from_world the inverse of its
    transforms.json pose with OpenGL axes turned to OpenCV's; errors for unfinished, existing."""
    pycolmap = pytest.importorskip("pycolmap")
    rng = np.random.default_rng(3)
    k2 = ck.Intrinsics(fx=30.0, fy=31.0, cx=9.0, cy=5.5, width=18, height=12)
    with Dataset(tmp_path / "d") as ds:
        for i in range(12):
            eye = rng.uniform(-2, 2, 3)
            ds.add_frame(look_at(eye), K if i % 3 else k2, rgb=rgb(i) if i % 3 else np.zeros((12, 18, 3), np.uint8),
                         timestamp=float(i))
        with pytest.raises(ck.NotFoundError, match="transforms.json"):
            ck.export_colmap(tmp_path / "d", tmp_path / "colmap")  # not finished yet
        ds.finalize()
    ck.export_colmap(tmp_path / "d", tmp_path / "colmap")
    rec = pycolmap.Reconstruction(str(tmp_path / "colmap"))
    assert len(rec.cameras) == 2 and len(rec.images) == 12 and len(rec.points3D) == 0
    tf = json.loads((tmp_path / "d" / "transforms.json").read_text())
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    for image_id, im in rec.images.items():
        f = tf["frames"][image_id - 1]
        assert im.name == f["file_path"]
        cw = im.cam_from_world() if callable(im.cam_from_world) else im.cam_from_world
        w2c = np.vstack([cw.matrix(), [0, 0, 0, 1]])
        c2w_cv = np.asarray(f["transform_matrix"]) @ flip
        assert np.allclose(np.linalg.inv(w2c), c2w_cv, atol=1e-5)
        cam = rec.cameras[im.camera_id]
        fw = f.get("w", tf.get("w"))
        assert cam.width == fw
        assert np.allclose(cam.params, [f.get("fl_x", tf.get("fl_x")), f.get("fl_y", tf.get("fl_y")),
                                        f.get("cx", tf.get("cx")), f.get("cy", tf.get("cy"))])
    with pytest.raises(ck.ExistsError):
        ck.export_colmap(tmp_path / "d", tmp_path / "colmap")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ck.CaptureKitIOError):
        ck.export_colmap(tmp_path / "d", tmp_path / "file")  # out_dir is a file
    (tmp_path / "d" / "transforms.json").write_text("{ not json")
    with pytest.raises(ck.CorruptError):
        ck.export_colmap(tmp_path / "d", tmp_path / "colmap2")
    with pytest.raises(ck.InvalidArgumentError):
        _ffi.lib.ck_dataset_export_colmap(None, b"x")


def test_reader_gives_back_what_the_demo_wrote_frame_by_frame(c_demo_dataset):
    """Issue 12's acceptance: the demo's dataset read by the dataset reader equals what the demo
    wrote (transforms.json, read with json; depth PNGs read with Pillow), and reading changes
    nothing on disk."""
    import hashlib
    root = c_demo_dataset
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    tf = json.loads((root / "transforms.json").read_text())
    with Dataset.open_readonly(root) as ds:
        frames = ds.frames()
        assert len(frames) == len(tf["frames"]) > 0
        for got, want in zip(frames, tf["frames"]):
            assert got.image_path == want["file_path"] and got.depth_path == want.get("depth_file_path")
            assert np.allclose(got.pose, np.asarray(want["transform_matrix"]), atol=1e-6)
            assert got.timestamp == want["timestamp"] and got.id == want["frame_id"] and got.pass_number == want["pass"]
            assert got.stream_index == want.get("multiscan_frame")
            k = got.intrinsics
            assert (k.fx, k.fy, k.cx, k.cy, k.width, k.height) == tuple(want.get(key, tf.get(key)) for key in
                                                                        ("fl_x", "fl_y", "cx", "cy", "w", "h"))
        for i in (0, len(frames) // 2, len(frames) - 1):
            mm = np.asarray(Image.open(root / frames[i].depth_path)).astype(np.float32)
            assert np.array_equal(ds.depth(i), mm / np.float32(1000))
        with pytest.raises(ck.StateError, match="read-only"):
            ds.add_frame(np.eye(4), K, rgb=rgb(0))
        with pytest.raises(ck.NotFoundError):
            ds.frame(len(frames))
        with pytest.raises(ck.StateError, match="read-only"):
            ds.cancel()  # deletes nothing (and frees the handle)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    assert after == before


def test_streams_need_a_start_time(tmp_path):
    """Issue 12: the MultiScan scan id is the start time, and the library never reads a clock: 0
    (unset) is refused for streaming, naming the option; the binding's default is the current time."""
    import time

    k = ck.Intrinsics(20, 20, 8, 6, 16, 12)
    with pytest.raises(ck.InvalidArgumentError, match="start_time_unix"):
        Session(tmp_path / "s", dataset=DatasetOptions(start_time_unix=0.0))
    assert not (tmp_path / "s").exists()
    Session(tmp_path / "s2", dataset=DatasetOptions(start_time_unix=0.0), stream_depth=False).close()
    with Dataset(tmp_path / "d", DatasetOptions(start_time_unix=0.0)) as ds:
        with pytest.raises(ck.InvalidArgumentError, match="start_time_unix"):
            ds.stream_frame(0.0, np.eye(4, dtype=np.float32), k, depth=np.ones((12, 16), np.float32))
    before = time.gmtime(time.time() - 1)
    with Dataset(tmp_path / "now") as ds:
        ds.stream_frame(0.0, np.eye(4, dtype=np.float32), k, depth=np.ones((12, 16), np.float32))
        ds.finalize()
    ids = [p.name[:-6] for p in (tmp_path / "now").glob("*.jsonl") if p.name != "capturekit.jsonl" and p.name != "events.jsonl"]
    assert len(ids) == 1 and ids[0] >= time.strftime("%Y%m%dT%H%M%S", before), ids
