"""The ``capturekit`` command: answers to what capture users ask most, one command each.

    capturekit inspect PATH [--json]         what a dataset or MultiScan scan holds
    capturekit decode-depth SCAN --out DIR   a scan's depth as PNG, .npy or .exr files
    capturekit validate DATASET [--json]     what nerfstudio, instant-ngp or MultiScan would reject
    capturekit finish DATASET                finish a dataset a crash left unfinished
    capturekit export colmap DATASET DST     a finished dataset's poses as a COLMAP text model
    capturekit export multiscan DATASET DST  a dataset as a MultiScan scan folder
    capturekit import multiscan|stray SRC DST  another app's capture as a CaptureKit dataset
    capturekit report DATASET -o FILE.html   one self-contained HTML page: path, box, coverage, speed, depth
    capturekit batch TASK ROOT [-o RESULTS]  one task on every scan under ROOT (local pool or Dask cluster)

Exit status: 0 done (validate: no errors), 1 an error or problems found (one line on stderr,
``capturekit: error: ...``, naming the file or option at fault), 2 a usage error (argparse),
130 interrupted (Ctrl-C: one line, partial output removed). Output cut by a closed pipe
(``capturekit inspect D | head``) is not an error: the command ends quietly with the status it
would have had (0 for a report already printed in part). Outputs are written to a temporary file
next to them and renamed when complete; ``--overwrite`` (every subcommand that writes files)
replaces existing output files, without it an existing one is refused before anything is written.
An unfinished dataset (a crash) is read through its journal, with a note that says so and how to
finish it. Long work shows a progress bar (tqdm) on a terminal.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
from typing import Dict, List

import numpy as np

from . import _ffi
from ._tools import (NOT_FINISHED, OUTPUTS, UnsafePathError, UsageError, contained, dataset_finished, is_dataset,
                     load_json, make_folder as _make_folder, multiscan_metadata as _multiscan_metadata, os_error, progress,
                     refuse_existing as _refuse_existing)
from . import tasks
from .tasks import journal_frames as _journal_frames, not_finished as _unfinished
from .box import Box
from .errors import CaptureKitError, ExistsError
from .geometry import Face, Intrinsics
from .coverage import Coverage
from .importers import ImportError_, import_scan
from .exr import write_exr
from .images import read_png, write_png
from .scan import Scan

__all__ = ["main", "UsageError"]

_progress = progress  # the name report.py and others used before _tools


def _note(text: str) -> None:
    print(f"capturekit: note: {text}", file=sys.stderr)


# -- finding what a folder is ---------------------------------------------------------------

# -- inspect --------------------------------------------------------------------------------

def _inspect_dataset(path: str) -> Dict:
    out: Dict = {"kind": "capturekit-dataset", "path": path}
    tf_path = os.path.join(path, "transforms.json")
    frames: List[dict] = []
    top: dict = {}
    if os.path.isfile(tf_path):
        top = load_json(tf_path)
        frames = top.get("frames", []) if isinstance(top, dict) else None
        if not isinstance(frames, list) or not all(isinstance(f, dict) for f in frames):
            raise UsageError(f"{tf_path}: its frames are not a list of objects")
        out["finished"] = True
    else:
        out["finished"] = False
        for f in _journal_frames(path):  # what a crash left: the journal's frames, as transforms.json has them
            k = f.intrinsics
            frames.append({"file_path": f.image_path, "transform_matrix": f.pose.tolist(), "timestamp": f.timestamp,
                           "fl_x": k.fx, "fl_y": k.fy, "cx": k.cx, "cy": k.cy, "w": k.width, "h": k.height,
                           **({"depth_file_path": f.depth_path} if f.depth_path else {})})
        out["note"] = NOT_FINISHED.format(path=path, frames=len(frames))
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
            try:
                d = read_png(contained(path, f["depth_file_path"]))
            except UnsafePathError as e:
                _note(f"{path}: frame {f.get('file_path')}: depth {e}: not read (capturekit validate lists every such path)")
                continue
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
                if not isinstance(e, dict):
                    continue
                name = str(e.get("name", e.get("code")))
                events[name] = events.get(name, 0) + 1
    out["events"] = events
    meta = _multiscan_metadata(path)
    if meta:
        out["multiscan"] = _inspect_multiscan(meta)
    return out


def _inspect_multiscan(meta_path: str) -> Dict:
    meta = load_json(meta_path)
    if not isinstance(meta, dict):
        raise UsageError(f"{meta_path}: not a JSON object")
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
    print(f"CaptureKit dataset {info['path']} ({'finished' if info['finished'] else 'not finished: frames read from its journal'})")
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
    if is_dataset(path):
        info = _inspect_dataset(path)
    elif os.path.isfile(os.path.join(path, "odometry.csv")):
        info = _inspect_stray(path)
    else:
        meta = _multiscan_metadata(path)
        if meta is None:
            raise UsageError(f"{args.path} is neither a CaptureKit dataset, a MultiScan scan nor a Stray Scanner capture")
        info = _inspect_multiscan(meta)
    if "note" in info:
        _note(info["note"])
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
    if is_dataset(args.scan) and not dataset_finished(args.scan):
        raise UsageError(_unfinished(args.scan) + " (its streams are described at finish)")
    try:
        scan = Scan(args.scan)
    except CaptureKitError as e:
        raise UsageError(f"{args.scan}: {e.message}") from None
    with scan:
        if scan.depth_frame_count == 0:
            raise UsageError(f"{args.scan}: the scan has no depth")
        if args.min_confidence is not None and not scan.has_confidence:
            raise UsageError(f"--min-confidence: {args.scan} has no confidence maps")
        width, height = scan.depth_size
        frames = [i for i in range(len(scan)) if scan.frame(i).has_depth]
        names = {i: os.path.join(args.out, f"{scan.frame(i).depth_index:06d}.{args.format}") for i in frames}
        _refuse_existing(list(names.values()), args.overwrite)
        _make_folder(args.out)
        for i in progress(frames, len(frames), "decoding depth"):
            metres = scan.depth(i, np.float32)
            if args.min_confidence is not None:
                metres = np.where(scan.confidence(i) >= args.min_confidence, metres, np.float32(0))
            name = names[i]
            new = not os.path.lexists(name)
            tmp = OUTPUTS.temp_for(name)
            if args.format == "npy":
                # Into memory, then one write: handed a real file, numpy writes it with
                # ndarray.tofile, and a Ctrl-C that lands in there came out as a TypeError
                # (exit status 1, a traceback) instead of KeyboardInterrupt.
                npy = io.BytesIO()
                np.save(npy, metres.astype(np.float32))
                with open(tmp, "wb") as f:
                    f.write(npy.getbuffer())
            elif args.format == "exr":
                write_exr(tmp, metres)
            else:
                mm = np.clip(np.nan_to_num(metres * 1000.0, nan=0.0, posinf=0.0), 0, 65535)
                write_png(tmp, np.rint(mm).astype(np.uint16), overwrite=True)
            OUTPUTS.commit(tmp, name)
            if new:
                OUTPUTS.created(name)
    print(f"decoded {len(frames)} depth frames ({width}x{height}) into {args.out} as {args.format}")
    return 0


# -- validate -------------------------------------------------------------------------------

def cmd_validate(args) -> int:
    from .validation import validate

    if not os.path.isdir(args.dataset):
        raise UsageError(f"{args.dataset} is not a folder")
    r = validate(args.dataset)
    args.status = 0 if r.ok else 1  # kept if stdout is cut by a closed pipe
    if args.json:
        json.dump(r.as_dict(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for p in r.problems:
            print(f"{p.level}: {p.tool}: {p.what}")
        counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r.counts.items())
        print(f"{args.dataset}: {len(r.errors)} error(s), {len(r.warnings)} warning(s)" + (f" ({counts})" if counts else ""))
    return args.status


# -- finish ---------------------------------------------------------------------------------

def cmd_finish(args) -> int:
    """Resumes a dataset a crash left unfinished and finishes it (what users did by hand with
    Dataset.open and finalize): the journaled frames are kept, stream bytes written after the last
    journaled stream frame are cut, transforms.json and the scan metadata are written."""
    path = args.dataset
    r = tasks.finish(path)
    print(f"finished {path}: {r['frames']} frame(s) recovered from its journal ({r['depth_frames']} with depth);"
          " wrote transforms.json" + (f" and {r['metadata']}" if r["metadata"] else ""))
    for n, b in sorted(r["cut"].items()):
        print(f"  {n}: cut {b} byte(s) written after the last journaled frame")
    return 0


# -- export ---------------------------------------------------------------------------------

def cmd_export(args) -> int:
    r = tasks.export(args.format, args.dataset, args.dst, overwrite=args.overwrite, note=_note)
    print(r["message"])
    return 0


# -- import ---------------------------------------------------------------------------------

def cmd_import(args) -> int:
    try:
        with Scan(args.src) as scan:
            kind, n = scan.kind.name.lower(), len(scan)
    except CaptureKitError as e:
        raise UsageError(f"{args.src}: {e.message}") from None
    if kind != args.format:
        raise UsageError(f"{args.src} is a {kind} capture, not {args.format}")
    if os.path.exists(args.dst) and (not os.path.isdir(args.dst) or os.listdir(args.dst)):
        raise UsageError(f"{args.dst} exists and is not an empty folder (import writes a new dataset)")
    if not os.path.exists(args.dst):
        OUTPUTS.created(args.dst)  # an interrupted import removes the dataset it began
    r = import_scan(args.src, args.dst, every=args.every, images=not args.no_images,
                    progress=lambda it: progress(it, n, "importing"))
    print(f"imported {r['frames']} frames ({r['captured']} captured with images) from {args.src} into {args.dst}")
    if r["video_frames"] is not None and r["video_frames"] < r["frames"]:
        _note(f"the video has {r['video_frames']} frames, the scan {r['frames']}: frames from {r['video_frames']} on have no image")
    return 0


# -- report ---------------------------------------------------------------------------------

def cmd_report(args) -> int:
    from .scheduler import Preset
    from .report import write_report

    if not 0 <= args.thumbnails <= 16:
        raise UsageError(f"--thumbnails must be 0 ... 16, not {args.thumbnails}")
    if os.path.isdir(args.output):
        raise UsageError(f"-o {args.output} is a folder; give the HTML file to write")
    parent = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(parent):
        raise UsageError(f"-o {args.output}: its folder {parent} does not exist")
    _refuse_existing([args.output], args.overwrite)
    if is_dataset(args.dataset) and not dataset_finished(args.dataset):
        _note(_unfinished(args.dataset))
    preset = Preset.ROOM_SCAN if args.preset == "room" else Preset.OBJECT_CAPTURE
    size = write_report(args.dataset, args.output, preset=preset, thumbnails=args.thumbnails)
    print(f"wrote {args.output} ({size / 1024:.0f} KiB): open it in a browser")
    return 0


_OVERWRITE = "replace existing output files (without it an existing one is refused before anything is written)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="capturekit", description="CaptureKit: inspect and convert captures.",
                                epilog="Exit status: 0 ok, 1 error or problems found, 2 usage, 130 interrupted.")
    p.add_argument("--version", action="version", version=f"capturekit {_ffi.lib.ck_version_string()}")
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("inspect", help="what a dataset or a MultiScan scan holds")
    i.add_argument("path", help="a CaptureKit dataset folder (finished or not), a MultiScan scan folder or its metadata .json")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    i.set_defaults(run=cmd_inspect)
    d = sub.add_parser("decode-depth", help="a MultiScan scan's (or Stray Scanner capture's) depth as PNG (millimetres), .npy or .exr (metres)")
    d.add_argument("scan", help="the scan folder or its metadata .json (sizes come from it)")
    d.add_argument("--out", required=True, help="output folder (created if missing)")
    d.add_argument("--format", choices=["png", "npy", "exr"], default="png",
                   help="png: 16-bit millimetres; npy: float32 metres; exr: float32 metres, channel Z")
    d.add_argument("--min-confidence", type=int, choices=[0, 1, 2], default=None,
                   help="zero the depth where the confidence is below this (0 low, 1 medium, 2 high)")
    d.add_argument("--overwrite", action="store_true", help=_OVERWRITE)
    d.set_defaults(run=cmd_decode_depth)
    v = sub.add_parser("validate", help="what nerfstudio, instant-ngp or MultiScan would reject in a dataset, and why",
                       description="Reads every file as those tools do: transforms.json and each frame's image and depth"
                       " headers, the scan metadata, every camera-info line, and the depth and confidence streams decoded"
                       " to their end as MultiScan's decoder does. Paths leaving the dataset are flagged, never read."
                       " Exit 1 when there is an error.")
    v.add_argument("dataset")
    v.add_argument("--json", action="store_true", help="machine-readable output: path, finished, ok, counts, problems")
    v.set_defaults(run=cmd_validate)
    f = sub.add_parser("finish", help="finish a dataset a crash left unfinished (resume it, then finalize)",
                       description="Reopens the dataset through its journal (frames whose add returned are kept; stream"
                       " bytes after the last journaled frame are cut) and finalizes it: transforms.json, boundingbox.json"
                       " and the MultiScan metadata. A finished dataset is refused.")
    f.add_argument("dataset")
    f.set_defaults(run=cmd_finish)
    e = sub.add_parser("export", help="convert a dataset")
    e.add_argument("format", choices=["colmap", "multiscan"],
                   help="colmap (a finished dataset): cameras.txt, images.txt, points3D.txt; multiscan: <id>.json, .jsonl, .depth.zlib, .confidence.zlib")
    e.add_argument("dataset")
    e.add_argument("dst", help="the output folder (created if missing)")
    e.add_argument("--overwrite", action="store_true", help=_OVERWRITE)
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
    r.add_argument("-o", "--output", required=True, help="the HTML file to write")
    r.add_argument("--overwrite", action="store_true", help=_OVERWRITE)
    r.add_argument("--preset", choices=["object", "room"], default="object",
                   help="the scheduler preset whose speed bands the timeline shows (default: object)")
    r.add_argument("--thumbnails", type=int, default=4, help="depth frames to show, 0 ... 16 (default 4)")
    r.set_defaults(run=cmd_report)
    b = sub.add_parser("batch", help="one task on every scan under a folder, locally or on a Dask cluster",
                       usage="capturekit batch TASK [ARG] ROOT [-o RESULTS] [options]",
                       description="Runs TASK on every scan under ROOT (CaptureKit datasets, MultiScan scans, Stray"
                       " Scanner captures, found by their layout): validate, finish, export colmap|multiscan,"
                       " transcode [ckdepth|zlib|archival], report, coverage. One row per scan (JSON Lines, or CSV): scan,"
                       " task, status, message, frames, bytes before and after, seconds, figures. A bad scan never"
                       " stops the batch; a worker that dies has its scan retried once. Exit 1 when a scan failed.")
    b.add_argument("words", nargs="+", metavar="TASK [ARG] ROOT",
                   help="the task (export takes colmap or multiscan; transcode ckdepth, the default, zlib, or archival: .ckdepth at the archival level) and the folder of scans")
    b.add_argument("-o", "--results", help="append the rows to this file as they complete (default: standard output)")
    b.add_argument("--csv", action="store_true", help="rows as CSV (figures as JSON) instead of JSON Lines")
    b.add_argument("--resume", action="store_true", help="skip the scans RESULTS already holds an ok or skipped row of this task for")
    b.add_argument("--out", help="where export, transcode and report write: one folder per scan, its path under ROOT")
    b.add_argument("--workers", type=int, default=None, help="local worker processes (default: the machine's CPUs)")
    b.add_argument("--scheduler", help="tcp://HOST:PORT of a Dask scheduler: run on that cluster (pip install capturekit[dask])")
    b.add_argument("--overwrite", action="store_true", help="replace RESULTS and existing output files")
    b.set_defaults(run=cmd_batch)
    return p


def cmd_batch(args) -> int:
    from .batch import main_batch

    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, not {args.workers}")
    return main_batch(args)


def _message(e: BaseException, args) -> str:
    """One line naming the file or option at fault."""
    if isinstance(e, OSError):
        return os_error(e, None if e.filename else getattr(args, "dataset", None) or getattr(args, "path", None))
    if isinstance(e, CaptureKitError):
        text = e.message or str(e)
        if isinstance(e, ExistsError) and hasattr(args, "overwrite"):
            text = text.replace("pass the overwrite flag", "pass --overwrite")
        return text
    return str(e)


def _stdout_gone() -> None:
    """The reader closed the pipe: send the rest of the output (and Python's final flush) nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = int(args.run(args))
        sys.stdout.flush()
        OUTPUTS.done()
        return status
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop the clean-up
        OUTPUTS.remove_partial()
        print("capturekit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        OUTPUTS.done()
        _stdout_gone()
        return int(getattr(args, "status", 0))
    except (UsageError, ImportError_, CaptureKitError, OSError, ValueError) as e:
        OUTPUTS.remove_partial()
        print(f"capturekit: error: {_message(e, args)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
