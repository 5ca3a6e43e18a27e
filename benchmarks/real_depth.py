"""Real sensor depth for the codec benchmark (issue 24): public frames nobody here generated.

Each set names its origin (repository, commit, paths) and licence; BENCHMARKS.md repeats them.
Frames are uint16 (millimetres, or the sensor's raw units), 0 = invalid. Sets whose licence
allows it are committed under Tests/CaptureKitCoreTests/Fixtures/depth-real/ (see the README
there); the others live in a cache folder that is not committed (``.build-dist/depth-sets/``,
or CK_DEPTH_SETS) and is filled by

    python3 benchmarks/real_depth.py --import <git dir or URL of the repository> [--set NAME]

which reads the files straight out of the named commit with ``git show`` (a bare mirror works;
a URL is cloned into the cache first). ``make bench-codec`` skips an absent set with a message.
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "Tests" / "CaptureKitCoreTests" / "Fixtures" / "depth-real"
CACHE = pathlib.Path(os.environ.get("CK_DEPTH_SETS", ROOT / ".build-dist" / "depth-sets"))

OPEN3D = ("https://github.com/Surfndez/Open3D", "59c0645a169c589345a1b04753d5afdb5800b349")
ZDEPTH = ("https://github.com/catid/Zdepth", "ac7c6d8e944d07be2404e5a1eaa04562595f3756")

# name: sensor, (repo, commit), [paths], decoder, licence, committed?
SETS = {
    "redwood-kinect": dict(
        sensor="structured light (PrimeSense / Kinect v1 class), 640x480 mm",
        source=OPEN3D, paths=[f"examples/TestData/RGBD/depth/0000{i}.png" for i in range(5)],
        decode="png", licence="Open3D repository, MIT (test data from the Redwood indoor dataset)",
        committed=False),
    "tum-sun-nyu-kinect": dict(
        sensor="structured light, one frame each from TUM RGB-D (Kinect v1, depth x5), SUN RGB-D, "
               "NYU v2 (raw Kinect disparity units) and Open3D's own depth.png, 640x480",
        source=OPEN3D, paths=["examples/TestData/RGBD/other_formats/TUM_depth.png",
                              "examples/TestData/RGBD/other_formats/SUN_depth.png",
                              "examples/TestData/RGBD/other_formats/NYU_depth.pgm",
                              "examples/TestData/depth.png"],
        decode="png", licence="Open3D repository, MIT (frames from TUM RGB-D CC BY 3.0, SUN RGB-D, NYU v2)",
        committed=False),
    "azure-kinect-tof": dict(
        sensor="time of flight (Azure Kinect DK, NFOV 2x2 binned), 320x288 mm",
        source=ZDEPTH, paths=["tests/test_vectors.inl"], decode="inl",
        licence="BSD 3-Clause, Copyright (c) 2019 Chris Taylor (catid/Zdepth)", committed=True),
}


def _decode(kind, blob):
    if kind == "inl":  # C arrays: static uint16_t Name[Width * Height] = { ... };
        text = blob.decode()
        w = int(text.split("Width = ")[1].split(";")[0])
        h = int(text.split("Height = ")[1].split(";")[0])
        out = []
        for part in text.split("] = {")[1:]:
            body = part.split("}")[0]
            a = np.array([int(v) for v in body.replace("\n", "").split(",") if v.strip()], np.uint16)
            out.append(a.reshape(h, w))
        return out
    from PIL import Image
    if blob[:2] == b"P5":  # NYU's raw Kinect frame: a 16-bit PGM whose samples are little-endian
        w, h = map(int, blob[2:40].split()[:2])
        return [np.frombuffer(blob[-2 * w * h:], "<u2").reshape(h, w).astype(np.uint16)]
    return [np.array(Image.open(io.BytesIO(blob))).astype(np.uint16)]


def _path(name):
    return (FIXTURES if SETS[name]["committed"] else CACHE) / f"{name}.npy"


def load(name):
    """The set's frames (list of 2-D uint16 arrays), or None when it is not on this machine."""
    p = _path(name)
    if not p.exists():
        return None
    a = np.load(p)
    return [f for f in a]


def import_set(name, gitdir):
    s = SETS[name]
    frames = []
    for path in s["paths"]:
        blob = subprocess.run(["git", "--git-dir", gitdir, "show", f"{s['source'][1]}:{path}"],
                              check=True, capture_output=True).stdout
        frames += _decode(s["decode"], blob)
    if len({f.shape for f in frames}) != 1:
        raise SystemExit(f"{name}: frames differ in size")
    p = _path(name)
    p.parent.mkdir(parents=True, exist_ok=True)
    np.save(p, np.stack(frames))
    print(f"{name}: {len(frames)} frames {frames[0].shape[1]}x{frames[0].shape[0]} -> {p}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--import", dest="src", required=True, help="git dir (bare mirror) or URL")
    ap.add_argument("--set", default="")
    args = ap.parse_args()
    names = [args.set] if args.set else list(SETS)
    for name in names:
        repo = SETS[name]["source"][0]
        gitdir = args.src
        if "://" in gitdir:
            if gitdir.rstrip("/") != repo:
                continue
            gitdir = str(CACHE / "git" / repo.rsplit("/", 1)[1])
            if not pathlib.Path(gitdir).exists():
                subprocess.run(["git", "clone", "--bare", repo, gitdir], check=True)
        ok = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "-e", SETS[name]["source"][1]],
                            capture_output=True).returncode == 0
        if ok:
            import_set(name, gitdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
