"""Real sensor depth for the codec benchmark (issue 24): public frames nobody here generated.

Each set names its origin (repository, commit, paths) and licence; BENCHMARKS.md repeats them.
Frames are uint16 (millimetres, or the sensor's raw units), 0 = invalid, or float16 metres for
a set whose ``kind`` is ``"float16"`` (ARKit's sceneDepth: its float32 values are float16 values,
checked on import). No set is committed (the project does not redistribute third-party
recordings): they live in a cache folder (``.build-dist/depth-sets/``, or CK_DEPTH_SETS), where
the codec's real-depth tests also look, filled by

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
CACHE = pathlib.Path(os.environ.get("CK_DEPTH_SETS", ROOT / ".build-dist" / "depth-sets"))

OPEN3D = ("https://github.com/Surfndez/Open3D", "59c0645a169c589345a1b04753d5afdb5800b349")
ZDEPTH = ("https://github.com/catid/Zdepth", "ac7c6d8e944d07be2404e5a1eaa04562595f3756")
AIMS_SLAM = ("https://github.com/CMU-AI-Maker-Space/aims-slam", "988ed2edc0b551e418d6e4aecdd7e13001d8ece0")
PLANES = ("https://github.com/felixchenfy/ros_detect_planes_from_depth_img",
          "4d0037cdc67ab919545d4b8c2f14394a1e5eb405")
ANYGRASP = ("https://github.com/graspnet/anygrasp_sdk", "a86214ab59facc55dd9526947be6a0fe8d21db3c")
PROMPTDA = ("https://github.com/DepthAnything/PromptDA", "b05523cf9c27e2dbce578b9003a8906bf8ed2eb3")
DEPTHCAM = ("https://github.com/ioridev/LiDAR-Depth-Map-Capture-for-iOS", "882a9e7638abbc35992257cc002d5de7d670496e")

# name: sensor, (repo, commit), [paths], decoder, licence, kind ("mm" unless named)
SETS = {
    "redwood-kinect": dict(
        sensor="structured light (PrimeSense / Kinect v1 class), 640x480 mm",
        source=OPEN3D, paths=[f"examples/TestData/RGBD/depth/0000{i}.png" for i in range(5)],
        decode="png", licence="Open3D repository, MIT (test data from the Redwood indoor dataset)"),
    "tum-sun-nyu-kinect": dict(
        sensor="structured light, one frame each from TUM RGB-D (Kinect v1, depth x5), SUN RGB-D, "
               "NYU v2 (raw Kinect disparity units) and Open3D's own depth.png, 640x480",
        source=OPEN3D, paths=["examples/TestData/RGBD/other_formats/TUM_depth.png",
                              "examples/TestData/RGBD/other_formats/SUN_depth.png",
                              "examples/TestData/RGBD/other_formats/NYU_depth.pgm",
                              "examples/TestData/depth.png"],
        decode="png", licence="Open3D repository, MIT (frames from TUM RGB-D CC BY 3.0, SUN RGB-D, NYU v2)"),
    "azure-kinect-tof": dict(
        sensor="time of flight (Azure Kinect DK, NFOV 2x2 binned), 320x288 mm",
        source=ZDEPTH, paths=["tests/test_vectors.inl"], decode="inl",
        licence="BSD 3-Clause, Copyright (c) 2019 Chris Taylor (catid/Zdepth)"),
    # Active stereo (RealSense D400 class: two IR cameras and a dot projector), z16 millimetres.
    "realsense-d400-raw": dict(
        sensor="active stereo (Intel RealSense D400 series, raw z16 depth stream, no alignment "
               "or filters), 640x480 mm, 8 consecutive frames of a hand-held sweep (~10 Hz)",
        source=AIMS_SLAM, paths=[f"data/depth/{i}.png" for i in range(100, 108)], decode="png",
        licence="MIT, Copyright (c) 2025 CMU-AI-Maker-Space (aims-slam)"),
    "realsense-d400-aligned": dict(
        sensor="active stereo (Intel RealSense D400 series, colour intrinsics fx 617 at 640x480: "
               "depth aligned to colour), 640x480 mm, 10 views of indoor scenes",
        source=PLANES, paths=[f"data/depth/{i:06d}.png" for i in range(10)], decode="png",
        licence="MIT, Copyright (c) 2019 Feiyu Chen (ros_detect_planes_from_depth_img)"),
    "realsense-anygrasp-720p": dict(
        sensor="active stereo (RealSense D400 class by its intrinsics, fx 927 at 1280x720; depth "
               "aligned to colour), 1280x720 mm, 8 consecutive frames of a grasp-tracking demo",
        source=ANYGRASP, paths=[f"grasp_tracking/example_data/depth_{i:03d}.npy" for i in range(8)],
        decode="npy", licence="no licence granted (graspnet/anygrasp_sdk has no LICENSE): used "
        "locally for measurement only, never redistributed"),
    # Phone LiDAR (ARKit sceneDepth, 256x192). Only single frames were found in repositories.
    "arkit-lidar-mm": dict(
        sensor="phone LiDAR (ARKit sceneDepth from the Stray Scanner app, iPhone/iPad Pro), "
               "256x192, uint16 mm PNG, 1 frame",
        source=PROMPTDA, paths=["assets/example_images/arkit_depth.png"], decode="png",
        licence="Apache-2.0 (DepthAnything/PromptDA)"),
    "arkit-lidar-f16": dict(
        sensor="phone LiDAR (ARKit sceneDepth.depthMap saved unchanged as a float32 TIFF in metres; "
               "every value is a float16 value), 256x192, float16, 1 frame",
        source=DEPTHCAM, paths=["samples/1721362630.651355_depth.tiff"], decode="tiff-f16",
        licence="MIT per the repository's README (its LICENSE file is referenced but absent)", kind="float16"),
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
    if kind == "npy":  # a uint16 array (height x width) saved by numpy
        a = np.load(io.BytesIO(blob), allow_pickle=False)
        if a.dtype != np.uint16 or a.ndim != 2:
            raise SystemExit(f"expected a 2-D uint16 array, got {a.dtype} {a.shape}")
        return [a]
    from PIL import Image
    if kind == "tiff-f16":  # float32 metres whose values are float16 values (ARKit's depth)
        a = np.array(Image.open(io.BytesIO(blob)), dtype=np.float32)
        h = a.astype(np.float16)
        if not np.isfinite(a).all() or not np.array_equal(h.astype(np.float32), a):
            raise SystemExit("the float32 depth is not exactly float16: refusing a lossy import")
        return [h]
    if blob[:2] == b"P5":  # NYU's raw Kinect frame: a 16-bit PGM whose samples are little-endian
        w, h = map(int, blob[2:40].split()[:2])
        return [np.frombuffer(blob[-2 * w * h:], "<u2").reshape(h, w).astype(np.uint16)]
    im = Image.open(io.BytesIO(blob))
    a = np.array(im)
    if not im.mode.startswith("I") or a.ndim != 2 or a.min() < 0 or a.max() > 0xFFFF:
        raise SystemExit(f"expected 16-bit grey samples, got mode {im.mode} {a.shape}")
    return [a.astype(np.uint16)]


def _path(name):
    return CACHE / f"{name}.npy"


def kind(name):
    """How the set's samples are stored: "mm" (uint16) or "float16" (metres)."""
    return SETS[name].get("kind", "mm")


def load(name):
    """The set's frames (list of 2-D uint16, or float16 for kind "float16", arrays), or None when
    it is not on this machine."""
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
    want = np.float16 if kind(name) == "float16" else np.uint16
    if any(f.dtype != want for f in frames):
        raise SystemExit(f"{name}: expected {np.dtype(want).name} frames")
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
