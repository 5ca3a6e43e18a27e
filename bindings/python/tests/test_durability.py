"""One writer per dataset and honest durability after an I/O error, from outside the library.

* A second writer, in another process or this one, gets BusyError naming the folder and the
  holder's pid and changes nothing; read-only opens work; after SIGKILL of the holder the kernel
  has dropped its lock and the dataset opens.
* A session filling a real (small) tmpfs: the first failure is CK_E_IO naming a file in the
  dataset; every later process / flush / finish / close raises (never OK and lost); once space is
  back, Session.resume recovers every frame flushed before the failure, byte for byte, read with
  MultiScan's decoding (one raw inflate over the whole stream)."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import capturekit as ck
from capturekit import Dataset, QueueFull, Session

BOX = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
K = ck.Intrinsics(fx=40.0, fy=40.0, cx=16.0, cy=12.0, width=32, height=24)
KD = ck.Intrinsics(fx=320.0, fy=320.0, cx=128.0, cy=96.0, width=256, height=192)
IMAGE = (np.arange(24 * 32 * 3, dtype=np.uint32).reshape(24, 32, 3) * 7 % 251).astype(np.uint8)
START = ck.DatasetOptions(start_time_unix=1.7e9)


def pose(i):
    a = 0.012 * i
    p = np.array([1.3 * np.sin(a), 0.8, 1.3 * np.cos(a)])
    z = p - np.array([0.0, 0.25, 0.0])
    z /= np.linalg.norm(z)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, p
    return m


def snapshot(d):
    """Every name under d with its bytes' hash (folders: None)."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(root, n), d)] = None
        for n in files:
            with open(os.path.join(root, n), "rb") as f:
                out[os.path.relpath(os.path.join(root, n), d)] = hashlib.sha256(f.read()).hexdigest()
    return out


def small_dataset(d):
    ds = Dataset(d, START)
    for i in range(3):
        ds.add_frame(pose(i * 10), K, rgb=IMAGE)
    ds.close()


HOLDER = textwrap.dedent("""
    import sys, time
    from capturekit import Dataset, Session
    d, how = sys.argv[1], sys.argv[2]
    h = Session.resume(d, stream_depth=False) if how == "session" else Dataset.open(d)
    print("ready", flush=True)
    time.sleep(600)  # killed here, holding the dataset open for writing
""")


def holder(d, how):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(ck.__file__)), env.get("PYTHONPATH", "")])
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(d), how], stdout=subprocess.PIPE, env=env, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


@pytest.mark.parametrize("how", ["session", "dataset"])
def test_a_second_writer_in_another_process_is_busy_until_the_holder_dies(tmp_path, how):
    d = tmp_path / "scan"
    small_dataset(d)
    p = holder(d, how)
    try:
        before = snapshot(d)
        with pytest.raises(ck.BusyError) as e:
            Session.resume(d, stream_depth=False)
        assert e.value.code == -10 and f"process {p.pid}" in e.value.message and str(d) in e.value.message
        with pytest.raises(ck.BusyError) as e:
            Dataset.open(d)
        assert f"process {p.pid}" in e.value.message
        assert snapshot(d) == before, "a refused writer changed the folder"
        with Dataset.open_readonly(d) as ro:
            assert len(ro.frames()) == 3
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert p.returncode == -signal.SIGKILL
    # SIGKILL: the holder never unlocked; the kernel dropped its flock with the process.
    with Session.resume(d, stream_depth=False) as s:
        s.process(40 / 30, pose(40), K, rgb=IMAGE)
        s.close()
    Dataset.open(d).close()


def test_a_second_writer_in_the_same_process_is_busy(tmp_path):
    d = tmp_path / "scan"
    small_dataset(d)
    first = Dataset.open(d)
    try:
        before = snapshot(d)
        for attempt in (lambda: Dataset.open(d), lambda: Session.resume(d, stream_depth=False)):
            with pytest.raises(ck.BusyError) as e:
                attempt()
            assert f"process {os.getpid()}" in e.value.message
        assert snapshot(d) == before
        Dataset.open_readonly(d).close()
    finally:
        first.close()
    Dataset.open(d).close()  # the lock went with the close


def multiscan_decode(path, frame_bytes):
    """MultiScan's decoder: one raw inflate over the whole file, frames cut by size."""
    z = zlib.decompressobj(-15)
    with open(path, "rb") as f:
        out = z.decompress(f.read()) + z.flush()
    assert len(out) % frame_bytes == 0, "the stream ends inside a frame"
    return [out[i:i + frame_bytes] for i in range(0, len(out), frame_bytes)]


def test_a_full_tmpfs_fails_every_later_call_and_resume_keeps_every_flushed_frame(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (CI runs as root)")
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
    try:
        filler = mnt / "filler"
        filler.write_bytes(b"\0" * (1 << 20))  # freed after the failure: space comes back
        d = mnt / "scan"
        rng = np.random.default_rng(19)
        s = Session(d, BOX, dataset=START, queue_full=QueueFull.WAIT)  # no frame dropped: stream frame i = frame i
        sent, flushed, first, captured = [], 0, None, 0
        for i in range(2000):
            depth = rng.uniform(0.3, 3.0, (192, 256)).astype(np.float32)  # noise: ~100 KB a frame
            conf = rng.integers(0, 3, (192, 256), dtype=np.uint8)
            try:
                res = s.process(i / 60, pose(i), K, rgb=IMAGE, depth=depth, confidence=conf, depth_intrinsics=KD)
                sent.append(depth.astype(np.float16).tobytes())
                captured += bool(res.captured)
                if i % 5 == 4:
                    s.flush()
                    flushed = len(sent)
            except ck.CaptureKitError as e:
                first = e
                break
        assert first is not None, "3 MB never filled up"
        assert isinstance(first, ck.CaptureKitIOError), repr(first)
        assert str(d) in first.message, f"the failure names no file of the dataset: {first.message}"
        assert flushed >= 5, "no flush succeeded before the disk filled"
        # Never OK and lost: every later call fails, even with space back.
        filler.unlink()
        for j in range(i + 1, i + 6):
            with pytest.raises(ck.CaptureKitIOError):
                s.process(j / 60, pose(j), K, rgb=IMAGE, depth=np.ones((192, 256), np.float32),
                          confidence=np.zeros((192, 256), np.uint8), depth_intrinsics=KD)
        with pytest.raises(ck.CaptureKitIOError):
            s.flush()
        with pytest.raises(ck.CaptureKitIOError):
            s.finish()
        with pytest.raises(ck.CaptureKitIOError):
            s.close()
        # Resume: every frame flushed before the failure is there, as it was sent.
        Session.resume(d).close()
        (stream,) = [p for p in d.iterdir() if p.name.endswith(".depth.zlib")]
        frames = multiscan_decode(stream, 256 * 192 * 2)
        assert len(frames) >= flushed, f"{len(frames)} stream frames, {flushed} were flushed"
        assert len(frames) <= len(sent)
        for k in range(flushed):
            assert frames[k] == sent[k], f"stream frame {k} differs from what was sent"
        for k in range(flushed, len(frames)):
            assert frames[k] == sent[k], f"stream frame {k} (after the last flush) differs"
        with Dataset.open_readonly(d) as ro:
            assert all((d / f.image_path).is_file() for f in ro.frames())
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
