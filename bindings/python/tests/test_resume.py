"""Resuming a session after a crash (ck_session_resume): a session SIGKILLed mid-capture is resumed;
its MultiScan streams continue after their last journaled frame and read back with MultiScan's own
decoding (one raw inflate over the whole file, frames of w*h*bytes) frame for frame; coverage and
the scheduler are rebuilt so the run goes on as an uninterrupted one; hostile journal values are
refused and nothing is cut."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit import Dataset, Session

# The frames, shared by the child processes (exec'd there) and the checks here: frame i at
# i/30 s on an orbit around the box, with its own depth (multiples of 1/32 m: exact in float16)
# and confidence.
FRAMES = textwrap.dedent("""
    import numpy as np
    import capturekit as ck
    BOX = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    K = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)
    KD = ck.Intrinsics(fx=10.0, fy=10.0, cx=4.0, cy=3.0, width=8, height=6)
    IMAGE = (np.arange(12 * 16 * 3, dtype=np.uint32).reshape(12, 16, 3) * 7 % 251).astype(np.uint8)

    def pose(i):
        a = 0.012 * i
        p = np.array([1.3 * np.sin(a), 0.8, 1.3 * np.cos(a)])
        z = p - np.array([0.0, 0.25, 0.0]); z /= np.linalg.norm(z)
        x = np.cross([0.0, 1.0, 0.0], z); x /= np.linalg.norm(x)
        m = np.eye(4)
        m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, p
        return m

    def depth(i):
        return (0.5 + ((np.arange(48) + i) % 64) / 32.0).astype(np.float32).reshape(6, 8)

    def confidence(i):
        return ((np.arange(48) + i) % 3).astype(np.uint8).reshape(6, 8)

    def process(s, i):
        return s.process(i / 30.0, pose(i), K, rgb=IMAGE, depth=depth(i), confidence=confidence(i), depth_intrinsics=KD)
""")
exec(FRAMES)  # noqa: S102 - defines BOX, K, KD, pose, depth, confidence, process

CHILD = FRAMES + textwrap.dedent("""
    import sys, time
    from capturekit import Session
    d, start, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    stop = int(sys.argv[4]) if len(sys.argv) > 4 else -1
    s = Session(d, BOX, dataset=ck.DatasetOptions(start_time_unix=1.7e9)) if mode == "create" else Session.resume(d)
    print("ready", flush=True)
    i = start
    while True:
        process(s, i)
        i += 1
        if i == stop:
            s.flush()
            print("durable", i, flush=True)
            time.sleep(600)  # killed here
        if i % 20 == 0:
            s.flush()
            print("durable", i, flush=True)
""")


def child(d, start, mode, stop=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(ck.__file__))] + [env.get("PYTHONPATH", "")])
    args = [sys.executable, "-c", CHILD, str(d), str(start), mode] + ([str(stop)] if stop is not None else [])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, env=env, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def kill(p):
    p.send_signal(signal.SIGKILL)
    rest = p.stdout.read()
    p.wait()
    assert p.returncode == -signal.SIGKILL, "the child stopped by itself (a call failed)"
    return [int(line.split()[1]) for line in rest.splitlines() if line.startswith("durable")]


def scan_files(d):
    """The scan's depth and confidence streams, camera-info lines and metadata (written at finish)."""
    (info,) = [q for q in d.iterdir() if q.suffix == ".jsonl" and q.name not in ("capturekit.jsonl", "events.jsonl")]
    stem = info.name[:-len(".jsonl")]
    return d / f"{stem}.depth.zlib", d / f"{stem}.confidence.zlib", info, d / f"{stem}.json"


def multiscan_decode(path, frame_bytes):
    """MultiScan's decoder (server/scripts/depth_decode.py): one raw inflate over the whole file in
    16 KiB chunks, frames cut by size."""
    z = zlib.decompressobj(-zlib.MAX_WBITS)
    out = bytearray()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(16384)
            if not chunk:
                break
            out += z.decompress(chunk)
    out += z.flush()
    assert len(out) % frame_bytes == 0, "the stream ends inside a frame"
    return [bytes(out[i:i + frame_bytes]) for i in range(0, len(out), frame_bytes)]


def camera_info_indices(path):
    lines = path.read_text().splitlines()
    ts = [json.loads(line)["timestamp"] for line in lines]
    return [int(round(t * 30 / 1e9)) for t in ts]


def last_index(d):
    """The last frame index anything in the dataset holds (timestamps go on after it)."""
    with Dataset.open_readonly(d) as ds:
        frames = [int(round(f.timestamp * 30)) for f in ds.frames()]
    info = [q for q in d.iterdir() if q.suffix == ".jsonl" and q.name not in ("capturekit.jsonl", "events.jsonl")]
    streamed = camera_info_indices(info[0]) if info and info[0].stat().st_size else []
    return max(frames + streamed + [-1])


def coverage_state(cov):
    return (cov.summary(), [cov.face(f) for f in range(6)], cov.cells().tolist(), cov.dial().tolist())


def test_killed_session_resumes_its_streams_frame_for_frame(tmp_path):
    """A session is SIGKILLed mid-capture 5 times and resumed each time, then finished: the depth
    and confidence streams decode with MultiScan's reader to exactly one frame per camera-info
    line, each equal to what was streamed for that line's frame; every frame flushed before a kill
    is there; the metadata counts the same frames; a captured frame's stream index names its own
    line; and coverage after each resume equals coverage of the captured frames added in order."""
    d = tmp_path / "scan"
    rng = np.random.default_rng(11)
    durable = []
    start, mode = 0, "create"
    for _ in range(5):
        p = child(d, start, mode)
        deadline = time.monotonic() + rng.uniform(0.2, 0.6)
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if line.startswith("durable"):
                durable.append((start, int(line.split()[1])))
        durable += [(start, n) for n in kill(p)]
        start, mode = last_index(d) + 1, "resume"
        with Session.resume(d) as s:
            with Dataset.open_readonly(d) as ro:
                captured = [f for f in ro.frames()]
            expected = ck.Coverage(BOX)
            for f in captured:
                expected.add_view(pose(int(round(f.timestamp * 30))), K, f.timestamp)
            assert coverage_state(s.coverage) == coverage_state(expected)
            s.close()
    with Session.resume(d) as s:
        for i in range(start, start + 40):
            process(s, i)
        s.finish()
    depth_path, conf_path, info_path, meta_path = scan_files(d)
    indices = camera_info_indices(info_path)
    assert indices == sorted(indices) and len(set(indices)) == len(indices)
    depths = multiscan_decode(depth_path, 48 * 2)
    confs = multiscan_decode(conf_path, 48)
    assert len(depths) == len(confs) == len(indices) > 100
    for j, i in enumerate(indices):
        assert np.array_equal(np.frombuffer(depths[j], "<f2").reshape(6, 8), depth(i).astype(np.float16)), f"depth frame {j} (frame {i})"
        assert confs[j] == confidence(i).tobytes(), f"confidence frame {j} (frame {i})"
    present = set(indices)
    for round_start, n in durable:
        assert set(range(round_start, n)) <= present, f"frames flushed before a kill ({round_start}..{n}) are missing"
    meta = json.loads(meta_path.read_text())
    assert {s["id"]: s["number_of_frames"] for s in meta["streams"]}["depth_back_1"] == len(indices)
    with Dataset.open_readonly(d) as ro:
        frames = list(ro.frames())
    assert len(frames) > 5
    for f in frames:
        assert f.stream_index is not None and indices[f.stream_index] == int(round(f.timestamp * 30))


def test_resumed_session_goes_on_as_an_uninterrupted_one(tmp_path):
    """A child processes frames 0..239, flushes and is SIGKILLed while idle. The resumed session
    and one run without a crash over the same frames then process frames 260..699 alike: the
    same captures, speeds and coverage."""
    crashed, straight = tmp_path / "crashed", tmp_path / "straight"
    p = child(crashed, 0, "create", stop=240)
    while (line := p.stdout.readline()).split() != ["durable", "240"]:
        assert line.startswith("durable"), line
    kill(p)
    u = Session(straight, BOX, dataset=ck.DatasetOptions(start_time_unix=1.7e9))
    before = [process(u, i).captured for i in range(240)]
    with Session.resume(crashed) as s:
        assert s.dataset.frame_count == sum(before) > 2
        assert coverage_state(s.coverage) == coverage_state(u.coverage)
        for i in range(260, 700):
            a, b = process(s, i), process(u, i)
            assert (a.captured, a.guidance.captures, a.guidance.band) == (b.captured, b.guidance.captures, b.guidance.band), f"frame {i}"
            assert a.guidance.speed == pytest.approx(b.guidance.speed, rel=1e-5, abs=1e-6)
            assert a.coverage == b.coverage
        assert coverage_state(s.coverage) == coverage_state(u.coverage)
        assert s.dataset.frame_count == u.dataset.frame_count
        s.finish()
    u.finish()
    tc, ts = (json.loads((x / "transforms.json").read_text())["frames"] for x in (crashed, straight))
    assert [f["timestamp"] for f in tc] == [f["timestamp"] for f in ts]


def journal(d):
    return [json.loads(line) for line in (d / "capturekit.jsonl").read_text().splitlines()]


def write_journal(d, lines):
    (d / "capturekit.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def snapshot(root):
    return {str(q.relative_to(root)): hashlib.sha256(q.read_bytes()).hexdigest()
            for q in root.rglob("*") if q.is_file() and not q.is_symlink()}


@pytest.mark.parametrize("edit", [
    None,
    ("depth", lambda v, size: [v[0], 1 << 49]),          # huge
    ("depth", lambda v, size: [v[0], size + 10]),        # past the file
    ("depth", lambda v, size: [v[0], -5]),               # negative
    ("depth", lambda v, size: [v[0], v[1] - 1]),         # not a frame boundary
    ("depth", lambda v, size: [v[0] + 1, v[1]]),         # not that many frames
    ("confidence", lambda v, size: [v[0], size + 1]),
    ("info_bytes", lambda v, size: size + 3),
    ("info_bytes", lambda v, size: v - 1),               # inside a line
    ("frames", lambda v, size: -1),
    ("width", lambda v, size: 1 << 40),
])
def test_hostile_stream_checkpoints_are_refused_and_nothing_is_cut(tmp_path, edit):
    d = tmp_path / "ds"
    with Session(d, BOX, dataset=ck.DatasetOptions(start_time_unix=1.7e9)) as s:
        for i in range(130):
            process(s, i)
        s.close()  # the last checkpoint, then each stream's final block: a resume would cut that
    lines = journal(d)
    if edit is None:  # the control: an untouched journal resumes, cutting each final block off
        sizes = [q.stat().st_size for q in scan_files(d)[:2]]
        s = Session.resume(d)
        assert [q.stat().st_size for q in scan_files(d)[:2]] == [n - 2 for n in sizes]  # an empty final block
        s.close()
        assert [q.stat().st_size for q in scan_files(d)[:2]] == sizes  # close ended them again
        Dataset.open(d).close()
        return
    key, change = edit
    last = max(i for i, x in enumerate(lines) if x["op"] == "stream")
    files = dict(zip(("depth", "confidence", "info_bytes"), scan_files(d)[:3]))
    size = files.get(key, files["depth"]).stat().st_size
    lines[last][key] = change(lines[last][key], size)
    write_journal(d, lines)
    before = snapshot(tmp_path)
    with pytest.raises(ck.CorruptError):
        Dataset.open(d)
    with pytest.raises(ck.CorruptError):
        Session.resume(d)
    assert snapshot(tmp_path) == before


def test_a_stream_file_linked_outside_is_refused_and_left_alone(tmp_path):
    d = tmp_path / "ds"
    with Session(d, BOX, dataset=ck.DatasetOptions(start_time_unix=1.7e9)) as s:
        for i in range(70):
            process(s, i)
        s.close()
    depth_path = scan_files(d)[0]
    outside = tmp_path / "outside.bin"
    outside.write_bytes(depth_path.read_bytes() + b"tail that a resume would cut")
    depth_path.unlink()
    depth_path.symlink_to(outside)
    before = outside.read_bytes()
    with pytest.raises(ck.CorruptError):
        Session.resume(d)
    assert outside.read_bytes() == before


def test_streams_of_a_01_journal_are_not_continued(tmp_path):
    """A 0.1 journal (version 1, no stream checkpoints) with streams: resuming with streams is
    UnsupportedError, without them it works and the old streams stay as they were."""
    d = tmp_path / "old"
    with Session(d, BOX, dataset=ck.DatasetOptions(start_time_unix=1.7e9)) as s:
        for i in range(90):
            process(s, i)
        s.close()
    lines = [x for x in journal(d) if x["op"] != "stream"]
    lines[0]["version"] = 1
    write_journal(d, lines)
    streams = {q.name: q.read_bytes() for q in scan_files(d)[:3]}
    with pytest.raises(ck.UnsupportedError):
        Session.resume(d)
    with Session.resume(d, stream_depth=False) as s:
        assert s.dataset.frame_count == len([x for x in lines if x["op"] == "frame"])
        for i in range(100, 160):
            process(s, i)
        with pytest.raises(ck.StateError):
            s.dataset.stream_frame(200 / 30.0, pose(200), K, depth=depth(200), confidence=confidence(200))
        s.close()
    assert {q.name: q.read_bytes() for q in scan_files(d)[:3]} == streams


def test_resume_arguments(tmp_path):
    with pytest.raises(ck.NotFoundError):
        Session.resume(tmp_path / "nothing")
    with pytest.raises(TypeError):
        Session.resume(tmp_path, scheduler=3)
