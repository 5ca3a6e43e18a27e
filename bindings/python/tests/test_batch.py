"""capturekit batch: one task over 50 generated scans (MultiScan scans written with Python's zlib,
Stray Scanner captures written with Pillow, CaptureKit datasets written by the library), some
damaged. The local pool and a Dask cluster started here (a scheduler and two worker processes)
give the same rows; a worker SIGKILLed during a scan has it retried once, then reported failed;
--resume skips what a results file holds; transcoded depth reads back equal to what was written."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

import capturekit as ck
from capturekit import batch

from test_scan import orbit_pose, raw_deflate, write_stray

K = ck.Intrinsics(fx=20.0, fy=20.0, cx=8.0, cy=6.0, width=16, height=12)
BOX = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
W, H = 16, 12
# The damaged scans and what their rows must say.
TRUNCATED, NO_META, UNFINISHED, BAD_JOURNAL = "multiscan/ms03", "multiscan/ms07", "datasets/ds04", "datasets/ds17"


def ms_depth(seed, n):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0.3, 4.0, (H, W)) * (rng.random((H, W)) > 0.1)).astype(np.float16) for _ in range(n)]


def write_ms(root, seed, n):
    """A MultiScan scan as the app writes it (metadata, camera info, raw-DEFLATE streams, video)."""
    root.mkdir(parents=True)
    sid = f"20261125T10{seed:04d}+0000_dev"
    depth = ms_depth(seed, n)
    conf = [np.full((H, W), i % 3, np.uint8) for i in range(n)]
    k = [1613.7, 0, 0, 0, 1613.7, 0, 941.4, 727.0, 1]
    with open(root / f"{sid}.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"timestamp": 1_000_000_000 + i * 16_666_667, "intrinsics": k,
                                "transform": orbit_pose(i).T.reshape(-1).tolist()}) + "\n")
    (root / f"{sid}.depth.zlib").write_bytes(raw_deflate(depth))
    (root / f"{sid}.confidence.zlib").write_bytes(raw_deflate(conf))
    (root / f"{sid}.mp4").write_bytes(b"\0" * 64)
    streams = [
        {"id": "color_back_1", "type": "color_camera", "encoding": "h264", "frequency": 60, "number_of_frames": n,
         "file_extension": "mp4", "resolution": [1440, 1920], "intrinsics": k, "extrinsics": None},
        {"id": "depth_back_1", "type": "lidar_sensor", "encoding": "float16_zlib", "frequency": 60,
         "number_of_frames": n, "file_extension": "depth.zlib", "resolution": [H, W]},
        {"id": "confidence_map", "type": "confidence_map", "encoding": "uint8_zlib", "frequency": 60,
         "number_of_frames": n, "file_extension": "confidence.zlib"},
        {"id": "camera_info_color_back_1", "type": "camera_info", "encoding": "jsonl", "frequency": 60,
         "number_of_frames": n, "file_extension": "jsonl"},
    ]
    (root / f"{sid}.json").write_text(json.dumps({"device": {"id": "dev", "type": "iPad8,10", "name": "test"}, "user": {"name": ""},
                                                "scene": {"description": "", "type": "", "gps_location": []},
                                                "streams": streams, "number_of_files": 5}))
    return sid, depth


def box_pose(i):
    """Around BOX, looking at its centre."""
    a = 0.5 * i
    p = np.array([1.3 * np.sin(a), 0.8, 1.3 * np.cos(a)])
    z = p - np.array([0.0, 0.25, 0.0])
    z /= np.linalg.norm(z)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, p
    return m


def write_dataset(root, seed, n, finish=True):
    opts = ck.DatasetOptions(start_time_unix=1.7e9 + seed, write_mode=ck.dataset.WriteMode.SYNC)
    image = (np.arange(H * W * 3, dtype=np.uint32).reshape(H, W, 3) * (seed + 3) % 251).astype(np.uint8)
    root.parent.mkdir(parents=True, exist_ok=True)
    ds = ck.Dataset(root, opts)
    ds.set_box(BOX)
    for i in range(n):
        pose = box_pose(i)
        d = (0.5 + ((np.arange(H * W) + i) % 64) / 32.0).astype(np.float32).reshape(H, W)
        ds.stream_frame(i / 30.0, pose, K, depth=d, confidence=np.full((H, W), 2, np.uint8))
        ds.add_frame(pose, K, rgb=image, depth=d, timestamp=i / 30.0)
    if finish:
        ds.finalize()
    ds.close()


@pytest.fixture(scope="module")
def scans(tmp_path_factory):
    """50 scans: 15 MultiScan, 10 Stray, 25 datasets (3 unfinished); damaged: a truncated depth
    stream, a missing metadata file, a corrupt journal."""
    root = tmp_path_factory.mktemp("batch") / "scans"
    depth = {}
    for i in range(15):
        rel = f"multiscan/ms{i:02d}"
        depth[rel] = write_ms(root / rel, i, 6 + i % 4)
    for i in range(10):
        write_stray(root / f"stray/st{i:02d}", n=4 + i % 3)
    for i in range(25):
        write_dataset(root / f"datasets/ds{i:02d}", i, 3 + i % 3, finish=i not in (4, 9, 14, 17))
    sid = depth[TRUNCATED][0]
    stream = root / TRUNCATED / f"{sid}.depth.zlib"
    data = stream.read_bytes()
    stream.write_bytes(data[: len(data) // 2])
    os.remove(root / NO_META / f"{depth[NO_META][0]}.json")
    journal = root / BAD_JOURNAL / "capturekit.jsonl"
    lines = journal.read_bytes().split(b"\n")
    lines[2] = b'{"frame": garbage' + b"\xff" * 8
    journal.write_bytes(b"\n".join(lines))
    return root, depth


def strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def by_scan(rows):
    return {r["scan"]: r for r in rows}


def test_finds_every_scan_by_its_layout(scans):
    root, _ = scans
    found = batch.find_scans(root)
    assert len(found) == 50
    kinds = {rel: kind for rel, kind in found}
    assert kinds[NO_META] == "multiscan"  # found by its stream, reported below
    assert sum(k == "multiscan" for k in kinds.values()) == 15
    assert sum(k == "stray" for k in kinds.values()) == 10
    assert sum(k == "dataset" for k in kinds.values()) == 25


def test_validate_names_the_damage(scans):
    root, _ = scans
    rows = batch.run(root, "validate", workers=2)
    assert [r["scan"] for r in rows] == [rel for rel, _ in batch.find_scans(root)]
    got = by_scan(rows)
    failed = {rel for rel, r in got.items() if r["status"] == "failed"}
    assert failed == {TRUNCATED, NO_META, "datasets/ds04", "datasets/ds09", "datasets/ds14", BAD_JOURNAL}
    assert "does not decode" in got[TRUNCATED]["message"] or "cut" in got[TRUNCATED]["message"]
    assert "metadata" in got[NO_META]["message"] and ".json is missing" in got[NO_META]["message"]
    assert "is not finished" in got[UNFINISHED]["message"]
    assert "journal" in got[BAD_JOURNAL]["message"]
    assert f"{UNFINISHED} is not finished" in got[UNFINISHED]["message"]  # relative to ROOT, the same on every machine
    for rel, r in got.items():
        assert set(r) == set(batch.FIELDS)
        if rel not in failed:
            assert r["status"] == "ok", r
            assert r["frames"] > 0 and r["bytes_before"] > 0 and r["figures"]["errors"] == 0
    assert got["multiscan/ms05"]["frames"] == 6 + 5 % 4


def test_transcode_reads_back_what_was_written(scans, tmp_path):
    root, depth = scans
    rows = batch.run(root / "multiscan", "transcode", workers=2, out=tmp_path / "out")
    got = by_scan(rows)
    assert got["ms03"]["status"] == "failed" and "cut short" in got["ms03"]["message"]
    assert got["ms07"]["status"] == "failed" and "metadata" in got["ms07"]["message"]
    for i in (0, 5, 14):
        rel = f"ms{i:02d}"
        sid, frames = depth[f"multiscan/{rel}"]
        r = got[rel]
        assert r["status"] == "ok" and r["frames"] == len(frames) and r["task"] == "transcode ckdepth"
        out = tmp_path / "out" / rel / f"{sid}.depth.ckdepth"
        assert r["bytes_after"] == out.stat().st_size + (out.parent / f"{sid}.confidence.ckdepth").stat().st_size
        with ck.DepthReader(out) as reader:
            assert len(reader) == len(frames)
            for j, f in enumerate(frames):
                back = reader.read(j, np.float16)
                np.testing.assert_array_equal(back.data, f)
                assert back.timestamp == pytest.approx(1.0 + j * 0.016666667, abs=1e-6)


def test_transcode_archival_reads_back_and_is_the_archival_level(scans, tmp_path):
    """Issue 24: "transcode archival" writes the same .ckdepth files at CK_DEPTH_LEVEL_ARCHIVAL
    (version-4 frames that read back exactly, never larger than the default level's), for
    MultiScan streams and Stray captures."""
    root, depth = scans
    for kind, rel in (("multiscan", "ms05"), ("stray", None)):
        rows = by_scan(batch.run(root / kind, "transcode archival", workers=1, out=tmp_path / kind))
        if rel is None:
            rel = next(k for k, r in rows.items() if r["status"] == "ok")
        r = rows[rel]
        assert r["status"] == "ok" and r["task"] == "transcode archival", r
        out = next((tmp_path / kind / rel).glob("*.depth.ckdepth"))
        raw = out.read_bytes()
        assert raw[28] == 4 and raw[64 + 32 + 2] == 4
        if kind == "multiscan":
            sid, frames = depth[f"multiscan/{rel}"]
            with ck.DepthReader(out) as reader:
                assert [np.array_equal(reader.read(j, np.float16).data, f) for j, f in enumerate(frames)] == [True] * len(frames)
    # the same scan at the default level: the archival file is no larger
    batch.run(root / "multiscan", "transcode", workers=1, out=tmp_path / "fast")
    sid, _ = depth["multiscan/ms05"]
    fast = (tmp_path / "fast" / "ms05" / f"{sid}.depth.ckdepth").stat().st_size
    assert (tmp_path / "multiscan" / "ms05" / f"{sid}.depth.ckdepth").stat().st_size <= fast


def test_finish_export_coverage(scans, tmp_path):
    root, _ = scans
    work = tmp_path / "datasets"
    shutil.copytree(root / "datasets", work)
    rows = by_scan(batch.run(work, "finish", workers=2))
    assert rows["ds04"]["status"] == "ok" and rows["ds04"]["frames"] == 3 + 4 % 3
    assert rows["ds00"]["status"] == "skipped" and rows["ds00"]["message"] == "already finished"
    assert rows["ds17"]["status"] == "failed" and "capturekit.jsonl: line 3" in rows["ds17"]["message"]
    assert ck.validate(work / "ds04").ok  # finished for real: every tool reads it
    colmap = by_scan(batch.run(work, "export colmap", workers=2, out=tmp_path / "colmap"))
    assert colmap["ds04"]["status"] == "ok"
    assert (tmp_path / "colmap" / "ds04" / "images.txt").is_file()
    assert colmap["ds09"]["status"] == "skipped" or colmap["ds09"]["status"] == "ok"  # finished by the batch above
    assert colmap["ds17"]["status"] == "failed" and "journal cannot be read" in colmap["ds17"]["message"]
    cov = by_scan(batch.run(work, "coverage", workers=1))
    f = cov["ds01"]["figures"]
    assert cov["ds01"]["status"] == "ok" and f["passes"][0]["frames"] == 3 + 1 % 3
    expected = ck.Coverage(BOX)  # the library's coverage over the same poses, here
    for i in range(4):
        expected.add_view(box_pose(i), K, i / 30.0)
    assert f["completion"] == round(float(expected.summary().completion), 4) > 0
    assert list(f["passes"][0]["views"].values()) == [expected.face(i).count for i in range(6)]
    (rep,) = batch.run(work / "ds01", "report", workers=1, out=tmp_path / "reports")
    page = tmp_path / "reports" / "ds01" / "report.html"
    assert rep["status"] == "ok" and rep["scan"] == "." and rep["bytes_after"] == page.stat().st_size
    assert page.read_text().startswith("<!DOCTYPE html>")
    stray = by_scan(batch.run(root / "stray", "export multiscan", workers=1, out=tmp_path / "x"))
    assert all(r["status"] == "skipped" and "not a CaptureKit dataset" in r["message"] for r in stray.values())


def test_finish_of_a_dataset_another_writer_holds(tmp_path):
    busy = getattr(ck.errors, "BusyError", None)
    if busy is None:
        pytest.skip("the library has no CK_E_BUSY yet (datasets are not locked against a second writer)")
    write_dataset(tmp_path / "root" / "live", 1, 3, finish=False)
    holder = ck.Dataset.open(tmp_path / "root" / "live")
    try:
        (row,) = batch.run(tmp_path / "root", "finish", workers=1)
        assert row["status"] == "failed" and "live" in row["message"]
    finally:
        holder.close()


# -- resume and the command ---------------------------------------------------------------------

def test_resume_skips_what_the_results_hold(scans, tmp_path):
    root, _ = scans
    results = tmp_path / "rows.jsonl"
    full = batch.run(root / "stray", "validate", workers=2, results=results)
    lines = results.read_text().splitlines(keepends=True)
    assert len(lines) == 10
    results.write_text("".join(lines[:4]) + lines[4][:20])  # a batch killed while writing its fifth row
    with pytest.raises(ValueError, match="--resume"):
        batch.run(root / "stray", "validate", results=results)
    seen = []
    again = batch.run(root / "stray", "validate", workers=2, results=results, resume=True, on_row=seen.append)
    assert len(seen) == 6  # only the scans without a complete row ran
    done = {json.loads(l)["scan"] for l in lines[:4]}
    assert {r["scan"] for r in again if r["status"] == "skipped"} == done
    rows = batch.read_results(results)
    assert sorted(r["scan"] for r in rows) == sorted(r["scan"] for r in full)
    assert strip(sorted(rows, key=lambda r: r["scan"])) == strip(full)


def test_command_line(scans, tmp_path):
    root, _ = scans
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ck.__file__)))
    out = tmp_path / "rows.csv"
    p = subprocess.run([sys.executable, "-m", "capturekit", "batch", "validate", str(root / "multiscan"), "-o", str(out),
                        "--csv", "--workers", "2"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1, p.stderr  # two scans failed
    assert "15 scan(s): 13 ok, 2 failed, 0 skipped" in p.stderr
    assert "failed: ms03:" in p.stderr and "scans/s" in p.stderr
    rows = batch.read_results(out, csv=True)
    assert len(rows) == 15 and {r["status"] for r in rows} == {"ok", "failed"}
    p = subprocess.run([sys.executable, "-m", "capturekit", "batch", "export", str(root)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert p.returncode == 1 and "export needs a format" in p.stderr
    p = subprocess.run([sys.executable, "-m", "capturekit", "batch", "transcode", str(root / "stray")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1 and "--out" in p.stderr


# -- killed workers and the Dask cluster ----------------------------------------------------------

def kill_root(tmp_path):
    root = tmp_path / "kill"
    for i, name in enumerate(("alive", "killonce", "killalways", "zalive")):
        write_stray(root / name, n=3)
    return root


def check_killed(rows):
    got = by_scan(rows)
    assert got["killonce"]["status"] == "ok"  # retried once, in a new worker
    assert got["killalways"]["status"] == "failed" and got["killalways"]["message"] == batch.WORKER_DIED
    assert got["alive"]["status"] == "ok" and got["zalive"]["status"] == "ok"


def test_local_worker_killed(tmp_path, monkeypatch):
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("CAPTUREKIT_BATCH_TEST_KILL", "killonce=1,killalways=2")
    monkeypatch.setenv("CAPTUREKIT_BATCH_TEST_KILL_DIR", str(marks))
    check_killed(batch.run(kill_root(tmp_path), "validate", workers=2))
    assert sorted(os.listdir(marks)) == ["killalways.0", "killalways.1", "killonce.0"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Dask scheduler and two single-threaded worker processes on localhost (as the README
    starts them), with the kill hook armed for the scans named kill*."""
    pytest.importorskip("distributed", reason="pip install dask distributed (scripts/bootstrap does)")
    marks = tmp_path_factory.mktemp("marks")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ck.__file__)),
               DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1", DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION="1.0",
               CAPTUREKIT_BATCH_TEST_KILL="killonce=1,killalways=2", CAPTUREKIT_BATCH_TEST_KILL_DIR=str(marks))
    logs = tmp_path_factory.mktemp("dasklogs")
    procs = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                       "--port", str(port), "--dashboard-address", ":0"], env=env,
                                      stdout=open(logs / "scheduler.log", "w"), stderr=subprocess.STDOUT))
        for i in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                           "--nworkers", "1", "--dashboard-address", ":0", "--memory-limit", "0"],
                                          env=env, stdout=open(logs / f"worker{i}.log", "w"), stderr=subprocess.STDOUT))
        from distributed import Client
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, marks
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_dask_gives_the_local_rows(scans, cluster, tmp_path):
    root, _ = scans
    address, _ = cluster
    local = batch.run(root, "validate", workers=2)
    remote = batch.run(root, "validate", scheduler=address)
    assert strip(remote) == strip(local)
    local = batch.run(root / "stray", "transcode", workers=2, out=tmp_path / "a")
    remote = batch.run(root / "stray", "transcode", scheduler=address, out=tmp_path / "b")
    assert strip(remote) == strip(local)
    assert all(r["status"] == "ok" and r["bytes_after"] > 0 for r in remote)


def test_dask_worker_killed(cluster, tmp_path):
    address, marks = cluster
    notes = []
    check_killed(batch.run(kill_root(tmp_path), "validate", scheduler=address, note=notes.append))
    assert notes == []  # the scheduler retries once, as the local pool does
    assert sorted(os.listdir(marks)) == ["killalways.0", "killalways.1", "killonce.0"]
