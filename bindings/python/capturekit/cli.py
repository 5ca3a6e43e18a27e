"""The ``capturekit`` command: answers to what capture users ask most, one command each.

    capturekit inspect PATH [--json]         what a dataset or MultiScan scan holds
    capturekit decode-depth SCAN --out DIR   a scan's depth as PNG, .npy or .exr files
    capturekit validate DATASET [--json]     what nerfstudio, instant-ngp or MultiScan would reject
    capturekit export colmap DATASET DST     a finished dataset's poses as a COLMAP text model
    capturekit export multiscan DATASET DST  a dataset as a MultiScan scan folder
    capturekit import multiscan|stray SRC DST  another app's capture as a CaptureKit dataset
    capturekit report DATASET -o FILE.html   one self-contained HTML page: path, box, coverage, speed, depth

Errors are one line on stderr (``capturekit: error: ...``) with exit status 1 (2 for usage).
Long work shows a progress bar (tqdm) on a terminal.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import Dict, List, Optional

import numpy as np

from . import _ffi
from .box import Box
from .dataset import export_colmap
from .errors import CaptureKitError
from .geometry import Face, Intrinsics
from .guidance import Coverage
from .importers import ImportError_, export_multiscan, import_scan
from .exr import write_exr
from .png import read_png, write_png
from .scan import Scan

__all__ = ["main"]


class UsageError(Exception):
    """A problem with what the user asked (exit 1, one line)."""


def _progress(iterable, total: int, desc: str):
    """A tqdm bar on a terminal, the plain iterable otherwise."""
    if not sys.stderr.isatty():
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # a declared dependency; tolerate its absence
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="frame")


# -- finding what a folder is ---------------------------------------------------------------

def _multiscan_metadata(path: str) -> Optional[str]:
    """The MultiScan metadata file of a scan folder (or the file itself), or None."""
    if os.path.isfile(path) and path.endswith(".json"):
        return path
    if not os.path.isdir(path):
        return None
    for candidate in sorted(glob.glob(os.path.join(path, "*.json"))):
        name = os.path.basename(candidate)
        if name in ("transforms.json", "boundingbox.json"):
            continue
        try:
            with open(candidate, "rb") as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and isinstance(meta.get("streams"), list):
            return candidate
    return None


# -- inspect --------------------------------------------------------------------------------

def _inspect_dataset(path: str) -> Dict:
    out: Dict = {"kind": "capturekit-dataset", "path": path}
    tf_path = os.path.join(path, "transforms.json")
    frames: List[dict] = []
    top: dict = {}
    if os.path.isfile(tf_path):
        with open(tf_path, "rb") as f:
            top = json.load(f)
        frames = top.get("frames", [])
        out["finished"] = True
    else:
        out["finished"] = False
    out["frames"] = len(frames)
    times = [float(f["timestamp"]) for f in frames if "timestamp" in f]
    out["duration_s"] = (max(times) - min(times)) if len(times) > 1 else 0.0
    intr = []
    for f in frames:
        k = {key: f.get(key, top.get(key)) for key in ("fl_x", "fl_y", "cx", "cy", "w", "h")}
        if k not in intr:
            intr.append(k)
    out["intrinsics"] = intr
    out["resolutions"] = sorted({f"{k['w']}x{k['h']}" for k in intr if k["w"] and k["h"]})
    out["depth_frames"] = sum(1 for f in frames if "depth_file_path" in f)
    box_path = os.path.join(path, "boundingbox.json")
    box = None
    if os.path.isfile(box_path):
        box = Box.read_json(box_path)
        out["box"] = {"center": [float(v) for v in box.center], "size": [float(v) for v in box.size],
                      "yaw": float(box.yaw), "floor": None if box.floor is None else float(box.floor)}
    if box is not None and frames:
        cov = Coverage(box)
        for i, f in enumerate(frames):
            k = {key: f.get(key, top.get(key)) for key in ("fl_x", "fl_y", "cx", "cy", "w", "h")}
            ki = Intrinsics(fx=float(k["fl_x"]), fy=float(k["fl_y"]), cx=float(k["cx"]), cy=float(k["cy"]),
                            width=int(k["w"]), height=int(k["h"]))
            cov.add_view(np.asarray(f["transform_matrix"], dtype=np.float64), ki, float(f.get("timestamp", i)))
        out["coverage"] = {Face(i).name.lower(): cov.face(i).count for i in range(6)}
        out["coverage_completion"] = round(float(cov.summary().completion), 4)
    valid = []
    for f in frames[:: max(1, len(frames) // 8)][:8]:  # a sample of depth frames
        if "depth_file_path" in f:
            d = read_png(os.path.join(path, f["depth_file_path"]))
            valid.append(float(np.count_nonzero(d)) / d.size)
    out["depth_valid_fraction"] = round(float(np.mean(valid)), 4) if valid else None
    events: Dict[str, int] = {}
    ev_path = os.path.join(path, "events.jsonl")
    if os.path.isfile(ev_path):
        with open(ev_path, "rb") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a torn last line after a crash
                name = str(e.get("name", e.get("code")))
                events[name] = events.get(name, 0) + 1
    out["events"] = events
    meta = _multiscan_metadata(path)
    if meta:
        out["multiscan"] = _inspect_multiscan(meta)
    return out


def _inspect_multiscan(meta_path: str) -> Dict:
    with open(meta_path, "rb") as f:
        meta = json.load(f)
    scan = os.path.basename(meta_path)[: -len(".json")]
    folder = os.path.dirname(meta_path) or "."
    streams = []
    for s in meta.get("streams", []):
        if isinstance(s, dict):
            streams.append({k: s.get(k) for k in ("id", "type", "encoding", "frequency", "number_of_frames", "resolution")})
    out: Dict = {"kind": "multiscan-scan", "scan": scan, "streams": streams,
                 "number_of_files": meta.get("number_of_files")}
    info = os.path.join(folder, scan + ".jsonl")
    if os.path.isfile(info):
        times = []
        with open(info, "rb") as f:
            for line in f:
                try:
                    times.append(int(json.loads(line)["timestamp"]))
                except (ValueError, KeyError, TypeError):
                    break
        out["camera_info_lines"] = len(times)
        out["duration_s"] = (times[-1] - times[0]) / 1e9 if len(times) > 1 else 0.0
    return out


def _inspect_stray(path: str) -> Dict:
    with Scan(path) as scan:
        k = scan.frame(0).intrinsics if len(scan) else None
        return {"kind": "stray-scanner", "path": path, "frames": len(scan), "depth_frames": scan.depth_frame_count,
                "duration_s": scan.duration, "depth_size": list(scan.depth_size), "confidence": scan.has_confidence,
                "intrinsics": None if k is None else {"fl_x": k.fx, "fl_y": k.fy, "cx": k.cx, "cy": k.cy, "w": k.width, "h": k.height}}


def _print_report(info: Dict) -> None:
    if info["kind"] == "stray-scanner":
        print(f"Stray Scanner capture {info['path']}")
        print(f"  frames: {info['frames']} over {info['duration_s']:.2f} s, {info['depth_frames']} with depth "
              f"({info['depth_size'][0]}x{info['depth_size'][1]}{', confidence' if info['confidence'] else ''})")
        if info["intrinsics"]:
            k = info["intrinsics"]
            print(f"  intrinsics: fx {k['fl_x']} fy {k['fl_y']} cx {k['cx']} cy {k['cy']} ({k['w']}x{k['h']})")
        return
    if info["kind"] == "multiscan-scan":
        print(f"MultiScan scan {info['scan']}")
        for s in info["streams"]:
            print(f"  {s['id']}: {s['type']}, {s['number_of_frames']} frames, {s['encoding']}, {s.get('resolution')}")
        if "camera_info_lines" in info:
            print(f"  camera info: {info['camera_info_lines']} lines over {info['duration_s']:.2f} s")
        return
    print(f"CaptureKit dataset {info['path']} ({'finished' if info['finished'] else 'not finished: no transforms.json'})")
    print(f"  frames: {info['frames']} over {info['duration_s']:.2f} s; resolutions {', '.join(info['resolutions']) or '-'};"
          f" {info['depth_frames']} with depth")
    for k in info["intrinsics"]:
        print(f"  intrinsics: fx {k['fl_x']} fy {k['fl_y']} cx {k['cx']} cy {k['cy']} ({k['w']}x{k['h']})")
    if "box" in info:
        b = info["box"]
        print(f"  box: centre {b['center']}, size {b['size']}, yaw {b['yaw']:.3f} rad, floor {b['floor']}")
    if "coverage" in info:
        faces = ", ".join(f"{name} {n}" for name, n in info["coverage"].items())
        print(f"  views per side: {faces} (completion {info['coverage_completion']:.0%})")
    if info["depth_valid_fraction"] is not None:
        print(f"  depth: {info['depth_valid_fraction']:.1%} of pixels valid (sampled frames)")
    if info["events"]:
        print("  events: " + ", ".join(f"{k} x{v}" for k, v in sorted(info["events"].items())))
    if "multiscan" in info:
        _print_report(info["multiscan"])


def cmd_inspect(args) -> int:
    path = os.path.abspath(args.path)
    if os.path.isdir(path) and (os.path.isfile(os.path.join(path, "capturekit.jsonl"))
                                or os.path.isfile(os.path.join(path, "transforms.json"))):
        info = _inspect_dataset(path)
    elif os.path.isfile(os.path.join(path, "odometry.csv")):
        info = _inspect_stray(path)
    else:
        meta = _multiscan_metadata(path)
        if meta is None:
            raise UsageError(f"{args.path} is neither a CaptureKit dataset, a MultiScan scan nor a Stray Scanner capture")
        info = _inspect_multiscan(meta)
    if args.json:
        json.dump(info, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        _print_report(info)
    return 0


# -- decode-depth ---------------------------------------------------------------------------

def cmd_decode_depth(args) -> int:
    """Every depth frame of a MultiScan scan (or a Stray Scanner capture, or a dataset's streams),
    read by the library's scan reader: sizes come from the scan, never from the user."""
    try:
        scan = Scan(args.scan)
    except CaptureKitError as e:
        raise UsageError(f"{args.scan}: {e.message if hasattr(e, 'message') else e}") from None
    with scan:
        if scan.depth_frame_count == 0:
            raise UsageError(f"{args.scan}: the scan has no depth")
        if args.min_confidence is not None and not scan.has_confidence:
            raise UsageError("--min-confidence needs the scan's confidence maps")
        width, height = scan.depth_size
        os.makedirs(args.out, exist_ok=True)
        frames = [i for i in range(len(scan)) if scan.frame(i).has_depth]
        for i in _progress(frames, len(frames), "decoding depth"):
            metres = scan.depth(i, np.float32)
            if args.min_confidence is not None:
                metres = np.where(scan.confidence(i) >= args.min_confidence, metres, np.float32(0))
            name = os.path.join(args.out, f"{scan.frame(i).depth_index:06d}")
            if args.format == "npy":
                np.save(name + ".npy", metres.astype(np.float32))
            elif args.format == "exr":
                if not args.overwrite and os.path.exists(name + ".exr"):
                    raise UsageError(f"{name}.exr exists (pass --overwrite)")
                write_exr(name + ".exr", metres)
            else:
                mm = np.clip(np.nan_to_num(metres * 1000.0, nan=0.0, posinf=0.0), 0, 65535)
                write_png(name + ".png", np.rint(mm).astype(np.uint16), overwrite=args.overwrite)
    print(f"decoded {len(frames)} depth frames ({width}x{height}) into {args.out} as {args.format}")
    return 0


# -- validate -------------------------------------------------------------------------------

_CAMERA_MODELS = ("OPENCV", "OPENCV_FISHEYE", "PINHOLE", "SIMPLE_PINHOLE", "EQUIRECTANGULAR")


def _image_size(path: str):
    """(width, height) of a PNG or JPEG file, read from its header (Pillow for non-PNG)."""
    from .png import read_png_info
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"\x89PNG"):
        info = read_png_info(path)
        return info.width, info.height
    from PIL import Image  # JPEG and the rest: Pillow reads the header only
    with Image.open(path) as im:
        return im.size


def _validate(path: str) -> List[dict]:
    """Problems nerfstudio, instant-ngp or MultiScan's tools would have with a dataset: dicts
    with ``tool``, ``level`` ("error": the tool refuses or loads wrong data; "warning") and ``what``."""
    problems: List[dict] = []

    def problem(tool, level, what):
        problems.append({"tool": tool, "level": level, "what": what})

    tf_path = os.path.join(path, "transforms.json")
    if not os.path.isfile(tf_path):
        problem("nerfstudio", "error", "no transforms.json (finish or finalise the dataset)")
        return problems
    try:
        with open(tf_path, "rb") as f:
            tf = json.load(f)
    except ValueError as e:
        problem("nerfstudio", "error", f"transforms.json is not JSON: {e}")
        return problems
    frames = tf.get("frames")
    if not isinstance(frames, list) or not frames:
        problem("nerfstudio", "error", "transforms.json has no frames")
        return problems
    if tf.get("camera_model", "OPENCV") not in _CAMERA_MODELS:
        problem("nerfstudio", "error", f"unknown camera_model {tf.get('camera_model')!r}")
    keys = ("fl_x", "fl_y", "cx", "cy", "w", "h")
    has_depth = False
    for i, f in enumerate(frames):
        name = f"frame {i} ({f.get('file_path', '?')})"
        fp = f.get("file_path")
        if not isinstance(fp, str):
            problem("nerfstudio", "error", f"{name}: no file_path")
            continue
        m = np.asarray(f.get("transform_matrix", []), dtype=np.float64)
        if m.shape != (4, 4) or not np.all(np.isfinite(m)):
            problem("nerfstudio", "error", f"{name}: transform_matrix is not a finite 4x4 matrix")
        elif abs(np.linalg.det(m[:3, :3]) - 1) > 1e-3:
            problem("nerfstudio", "warning", f"{name}: transform_matrix's rotation is not orthonormal")
        k = {key: f.get(key, tf.get(key)) for key in keys}
        if any(v is None for v in k.values()):
            problem("nerfstudio", "error", f"{name}: intrinsics incomplete ({', '.join(key for key, v in k.items() if v is None)})")
            continue
        img = os.path.join(path, fp)
        if not os.path.isfile(img):
            problem("nerfstudio", "error", f"{name}: image {fp} is missing")
            continue
        try:
            w, h = _image_size(img)
        except Exception as e:  # a damaged file: every loader fails on it
            problem("nerfstudio", "error", f"{name}: image {fp} cannot be read ({e})")
            continue
        if (w, h) != (k["w"], k["h"]):
            problem("nerfstudio", "error", f"{name}: image is {w}x{h} but its intrinsics say {k['w']}x{k['h']}")
        dp = f.get("depth_file_path")
        if dp is not None:
            has_depth = True
            dfile = os.path.join(path, dp)
            if not os.path.isfile(dfile):
                problem("nerfstudio", "error", f"{name}: depth {dp} is missing")
            elif _image_size(dfile) != (w, h):
                problem("instant-ngp", "error", f"{name}: depth {dp} is {_image_size(dfile)} but the image is {w}x{h}"
                        " (instant-ngp needs equal sizes)")
    if has_depth and "integer_depth_scale" not in tf:
        problem("instant-ngp", "error", "depth without integer_depth_scale")
    meta_path = _multiscan_metadata(path)
    if meta_path:
        with open(meta_path, "rb") as f:
            meta = json.load(f)
        scan = os.path.basename(meta_path)[: -len(".json")]
        names = [os.path.basename(p) for p in glob.glob(os.path.join(path, scan + ".*")) if not p.endswith(".idx")]
        if meta.get("number_of_files") != len(names):
            problem("multiscan", "error", f"number_of_files {meta.get('number_of_files')} but {len(names)} scan files"
                    " (their upload server compares them)")
        if scan.startswith("19700101T000000"):
            problem("multiscan", "error", "the scan id has no start time (set start_time_unix): their server refuses a"
                    " second scan with the same id")
        info = os.path.join(path, scan + ".jsonl")
        lines = 0
        if os.path.isfile(info):
            with open(info, "rb") as f:
                lines = sum(1 for _ in f)
        for s in meta.get("streams", []):
            if isinstance(s, dict) and s.get("number_of_frames") not in (None, lines):
                problem("multiscan", "error", f"stream {s.get('id')}: {s.get('number_of_frames')} frames but {lines}"
                        " camera-info lines")
    return problems


def cmd_validate(args) -> int:
    path = os.path.abspath(args.dataset)
    if not os.path.isdir(path):
        raise UsageError(f"{args.dataset} is not a folder")
    problems = _validate(path)
    if args.json:
        json.dump(problems, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for p in problems:
            print(f"{p['level']}: {p['tool']}: {p['what']}")
        errors = sum(p["level"] == "error" for p in problems)
        print(f"{args.dataset}: {errors} error(s), {len(problems) - errors} warning(s)")
    return 1 if any(p["level"] == "error" for p in problems) else 0


# -- export ---------------------------------------------------------------------------------

def cmd_export(args) -> int:
    if args.format == "colmap":
        export_colmap(args.dataset, args.dst)
        print(f"wrote cameras.txt, images.txt and points3D.txt into {args.dst}")
    else:
        r = export_multiscan(args.dataset, args.dst)
        print(f"wrote MultiScan scan {r['scan']} ({r['frames']} frames) into {args.dst}")
    return 0


# -- import ---------------------------------------------------------------------------------

def cmd_import(args) -> int:
    with Scan(args.src) as scan:
        kind, n = scan.kind.name.lower(), len(scan)
    if kind != args.format:
        raise UsageError(f"{args.src} is a {kind} capture, not {args.format}")
    r = import_scan(args.src, args.dst, every=args.every, images=not args.no_images,
                    progress=lambda it: _progress(it, n, "importing"))
    print(f"imported {r['frames']} frames ({r['captured']} captured with images) from {args.src} into {args.dst}")
    if r["video_frames"] is not None and r["video_frames"] < r["frames"]:
        print(f"capturekit: note: the video has {r['video_frames']} frames, the scan {r['frames']}: "
              f"frames from {r['video_frames']} on have no image", file=sys.stderr)
    return 0


# -- report ---------------------------------------------------------------------------------

def cmd_report(args) -> int:
    from .guidance import Preset
    from .report import write_report  # imports this module: loaded on use
    if not 0 <= args.thumbnails <= 16:
        raise UsageError("--thumbnails must be 0 ... 16")
    preset = Preset.ROOM_SCAN if args.preset == "room" else Preset.OBJECT_CAPTURE
    size = write_report(args.dataset, args.output, preset=preset, thumbnails=args.thumbnails)
    print(f"wrote {args.output} ({size / 1024:.0f} KiB): open it in a browser")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="capturekit", description="CaptureKit: inspect and convert captures.")
    p.add_argument("--version", action="version", version=f"capturekit {_ffi.lib.ck_version_string()}")
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("inspect", help="what a dataset or a MultiScan scan holds")
    i.add_argument("path", help="a CaptureKit dataset folder, a MultiScan scan folder or its metadata .json")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    i.set_defaults(run=cmd_inspect)
    d = sub.add_parser("decode-depth", help="a MultiScan scan's (or Stray Scanner capture's) depth as PNG (millimetres), .npy or .exr (metres)")
    d.add_argument("scan", help="the scan folder or its metadata .json (sizes come from it)")
    d.add_argument("--out", required=True, help="output folder (created if missing)")
    d.add_argument("--format", choices=["png", "npy", "exr"], default="png",
                   help="png: 16-bit millimetres; npy: float32 metres; exr: float32 metres, channel Z")
    d.add_argument("--min-confidence", type=int, choices=[0, 1, 2], default=None,
                   help="zero the depth where the confidence is below this (0 low, 1 medium, 2 high)")
    d.add_argument("--overwrite", action="store_true", help="replace existing PNG files")
    d.set_defaults(run=cmd_decode_depth)
    v = sub.add_parser("validate", help="what nerfstudio, instant-ngp or MultiScan would reject in a dataset, and why")
    v.add_argument("dataset")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.set_defaults(run=cmd_validate)
    e = sub.add_parser("export", help="convert a finished dataset")
    e.add_argument("format", choices=["colmap", "multiscan"],
                   help="colmap: cameras.txt, images.txt, points3D.txt; multiscan: <id>.json, .jsonl, .depth.zlib, .confidence.zlib")
    e.add_argument("dataset")
    e.add_argument("dst")
    e.set_defaults(run=cmd_export)
    m = sub.add_parser("import", help="a MultiScan scan or Stray Scanner capture as a CaptureKit dataset")
    m.add_argument("format", choices=["multiscan", "stray"])
    m.add_argument("src", help="the scan folder (MultiScan: or its metadata .json)")
    m.add_argument("dst", help="the new dataset folder (must be empty or missing)")
    m.add_argument("--every", type=int, default=10, help="capture every N-th frame with its image (default 10)")
    m.add_argument("--no-images", action="store_true",
                   help="do not decode the app's video: a dataset of poses, depth and confidence only")
    m.set_defaults(run=cmd_import)
    r = sub.add_parser("report", help="one self-contained HTML page: camera path and box, coverage, speed and events, depth",
                       description="Writes one self-contained HTML file (inline SVG and images, loads nothing): top and"
                       " side views of the camera path with the captures and the box, the coverage dial and per-side"
                       " progress (the library's coverage over the dataset's poses and box), a timeline of the speed"
                       " with guidance's bands and the recorded events, and false-colour depth and confidence"
                       " thumbnails.")
    r.add_argument("dataset", help="a CaptureKit dataset folder (finished or not)")
    r.add_argument("-o", "--output", required=True, help="the HTML file to write (replaced if it exists)")
    r.add_argument("--preset", choices=["object", "room"], default="object",
                   help="the scheduler preset whose speed bands the timeline shows (default: object)")
    r.add_argument("--thumbnails", type=int, default=4, help="depth frames to show, 0 ... 16 (default 4)")
    r.set_defaults(run=cmd_report)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (UsageError, ImportError_, CaptureKitError, OSError, ValueError) as e:
        print(f"capturekit: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
