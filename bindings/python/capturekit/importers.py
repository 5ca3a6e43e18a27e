"""Importers and exporters between CaptureKit datasets and other apps' captures.

    import_scan(src, dst)        a MultiScan scan or a Stray Scanner capture -> a CaptureKit dataset
    export_multiscan(dataset, dst)  a dataset -> a MultiScan scan folder

An imported dataset streams every frame of the scan (depth, confidence, camera info: its MultiScan
streams) and captures every ``every``-th frame with its colour image (decoded from the app's video
with OpenCV) and depth, so nerfstudio, instant-ngp, MultiScan's tools and every ``capturekit``
command work on it. Everything is written by the library (the same writer as a live capture).
"""

from __future__ import annotations

import calendar
import json
import os
import re
import shutil
import tempfile
from typing import Callable, Optional

import numpy as np

from .dataset import Dataset, DatasetOptions
from .errors import CaptureKitError
from .scan import Scan, ScanKind

__all__ = ["import_scan", "export_multiscan", "ImportError_"]


class ImportError_(ValueError):
    """A scan that cannot be imported as asked (missing video, no frames)."""


_SCAN_ID = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})([+-])(\d{2})(\d{2})_(.+)$")


def scan_start(scan_id: str):
    """(unix seconds, device id) from a MultiScan iOS scan id, or None."""
    m = _SCAN_ID.match(scan_id)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    offset = (int(m.group(8)) * 60 + int(m.group(9))) * (1 if m.group(7) == "+" else -1)
    try:
        return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - offset * 60, m.group(10)
    except (ValueError, OverflowError):
        return None


def _video_path(scan: Scan, src: str) -> Optional[str]:
    folder = src if os.path.isdir(src) else os.path.dirname(src)
    if scan.kind == ScanKind.STRAY:
        p = os.path.join(folder, "rgb.mp4")
    else:
        base = src[: -len(".json")] if src.endswith(".json") else None
        if base is None:
            metas = [f for f in os.listdir(folder) if f.endswith(".json") and os.path.exists(os.path.join(folder, f[:-5] + ".jsonl"))]
            base = os.path.join(folder, metas[0][:-5]) if metas else ""
        p = base + ".mp4"
    return p if os.path.isfile(p) else None


def import_scan(src, dst, every: int = 10, images: bool = True,
                progress: Optional[Callable] = None) -> dict:
    """Imports a MultiScan scan or a Stray Scanner capture into a new dataset at ``dst``.

    Args:
        every: capture every N-th frame (with its image and depth); all frames are streamed.
        images: decode the captured frames' images from the app's video (needs OpenCV,
            ``pip install opencv-python-headless``). False: a stream-only dataset (poses, depth,
            confidence; no images).
        progress: wraps the frame iterable (e.g. tqdm), or None.

    Returns: {"frames": streamed frames, "captured": captured frames, "kind": "multiscan"|"stray"}.
    Raises: ImportError_ (no video, OpenCV missing, no frames), CaptureKitError (the scan or the
    destination), ExistsError (dst is not empty).
    """
    src = os.fspath(src)
    if every < 1:
        raise ImportError_("every must be >= 1")
    with Scan(src) as scan:
        if len(scan) == 0:
            raise ImportError_(f"{src}: the scan has no frames")
        video = None
        vpath = _video_path(scan, src)
        if images:
            if vpath is None:
                raise ImportError_(f"{src}: no colour video (rgb.mp4 / <id>.mp4) next to the scan; "
                                   "import without images (--no-images) for a depth-and-pose dataset")
            try:
                import cv2
            except ImportError:
                raise ImportError_("decoding the colour video needs OpenCV: pip install opencv-python-headless") from None
            video = cv2.VideoCapture(vpath)
            if not video.isOpened():
                raise ImportError_(f"{vpath}: OpenCV cannot open this video")
        folder = src if os.path.isdir(src) else os.path.dirname(src)
        if scan.kind == ScanKind.MULTISCAN:
            name = os.path.basename(src)[:-5] if src.endswith(".json") else \
                next(f[:-5] for f in sorted(os.listdir(folder)) if f.endswith(".json") and os.path.exists(os.path.join(folder, f[:-5] + ".jsonl")))
            start = scan_start(name) or (int(os.path.getmtime(os.path.join(folder, name + ".jsonl"))), "imported")
        else:
            start = (int(os.path.getmtime(os.path.join(folder, "odometry.csv"))), "stray")
        opts = DatasetOptions(start_time_unix=float(start[0]), device_id=re.sub(r"[^A-Za-z0-9._-]", "-", start[1])[:64] or "imported")
        # The app's video goes along as the new scan's colour stream (MultiScan's <id>.mp4), so the
        # dataset is a whole MultiScan scan; it needs the streams (the scan id names the video).
        carry = vpath is not None and scan.depth_frame_count > 0
        if carry:
            if scan.kind == ScanKind.STRAY:
                opts.color_encoding = "hevc"  # Stray Scanner records HEVC
            else:
                meta = json.loads(open(os.path.join(folder, name + ".json"), "rb").read())
                color = next((st for st in meta.get("streams", []) if isinstance(st, dict) and st.get("type") == "color_camera"), {})
                enc = str(color.get("encoding", "h264"))
                opts.color_encoding = enc if re.fullmatch(r"[A-Za-z0-9_]{1,16}", enc) else "h264"
            opts.color_file_extension = "mp4"
        ds = Dataset(dst, opts)
        captured = 0
        video_frames = 0
        try:
            frames = range(len(scan))
            for i in (progress(frames) if progress else frames):
                f = scan.frame(i)
                depth = scan.depth(i, np.float16) if f.has_depth else None
                conf = scan.confidence(i) if f.has_depth and scan.has_confidence else None
                if depth is not None or conf is not None:
                    ds.stream_frame(f.timestamp, f.pose, f.intrinsics, depth=depth, confidence=conf)
                image = None
                if video is not None:
                    ok, bgr = video.read()  # frame i of the video is frame i of the scan
                    video_frames += 1 if ok else 0
                    if ok and i % every == 0:
                        image = np.ascontiguousarray(bgr[:, :, ::-1])
                if image is not None:
                    k = f.intrinsics
                    if (image.shape[1], image.shape[0]) != (k.width, k.height):
                        k = k.scale(image.shape[1], image.shape[0])
                    ds.add_frame(f.pose, k, rgb=image, depth=depth, timestamp=f.timestamp)
                    captured += 1
            if carry:
                ids = [n[:-6] for n in os.listdir(dst) if n.endswith(".jsonl") and n not in ("capturekit.jsonl", "events.jsonl")]
                if len(ids) == 1:
                    shutil.copyfile(vpath, os.path.join(dst, ids[0] + ".mp4"))
            ds.finalize()
        except BaseException:
            ds.cancel()
            raise
        finally:
            if video is not None:
                video.release()
        ds.close()
        return {"frames": len(scan), "captured": captured, "kind": scan.kind.name.lower(),
                "video_frames": video_frames if video is not None else None}


_SCAN_FILES = (".json", ".jsonl", ".depth.zlib", ".confidence.zlib")


def export_multiscan(dataset, dst) -> dict:
    """Writes a dataset as a MultiScan scan folder ``dst`` (created; must not exist): the
    dataset's own streams when it streamed frames, else streams and camera info built from its
    captured frames (their depth). Returns {"scan": id, "frames": n}."""
    dataset, dst = os.fspath(dataset), os.fspath(dst)
    if os.path.exists(dst):
        from .errors import ExistsError

        raise ExistsError(-9, "export_multiscan", f"{dst} exists")
    names = sorted(os.listdir(dataset))
    metas = [n[:-5] for n in names if n.endswith(".json") and n[:-5] + ".jsonl" in names]
    if metas:
        scan_id = metas[0]
        with Scan(os.path.join(dataset, scan_id + ".json")) as s:
            n = len(s)
        os.makedirs(dst)
        for ext in _SCAN_FILES + (".mp4",):
            p = os.path.join(dataset, scan_id + ext)
            if os.path.isfile(p):
                shutil.copyfile(p, os.path.join(dst, scan_id + ext))
        return {"scan": scan_id, "frames": n}
    with Dataset.open_readonly(dataset) as src:
        frames = src.frames()
        if not frames:
            raise ImportError_(f"{dataset}: no frames to export")
        parent = os.path.dirname(os.path.abspath(dst))
        scratch = tempfile.mkdtemp(prefix=".capturekit-export-", dir=parent)
        try:
            # The scan id keeps the dataset's start time and device (its journal's first line).
            start = None
            try:
                import json

                with open(os.path.join(dataset, "capturekit.jsonl"), "rb") as j:
                    start = scan_start(str(json.loads(j.readline()).get("scan_id", "")))
            except (OSError, ValueError, AttributeError):
                start = None
            t0, device = start if start else (0, "capturekit")
            out = Dataset(os.path.join(scratch, "d"), DatasetOptions(start_time_unix=float(t0), device_id=device))
            depths = [src.depth(i, np.float16) for i in range(len(frames))]
            shapes = {d.shape for d in depths if d is not None}
            if len(shapes) != 1:
                raise ImportError_(f"{dataset}: " + ("no frame has depth" if not shapes else
                                   f"depth maps of {len(shapes)} sizes") + ": a MultiScan depth stream needs one size")
            shape = shapes.pop()
            for f, depth in zip(frames, depths):
                out.stream_frame(f.timestamp, f.pose, f.intrinsics,
                                 depth=depth if depth is not None else np.zeros(shape, np.float16))
            out.finalize()
            out.close()
            made = os.listdir(os.path.join(scratch, "d"))
            scan_id = next(n[:-5] for n in made if n.endswith(".json") and n[:-5] + ".jsonl" in made)
            os.makedirs(dst)
            for ext in _SCAN_FILES:
                p = os.path.join(scratch, "d", scan_id + ext)
                if os.path.isfile(p):
                    os.replace(p, os.path.join(dst, scan_id + ext))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return {"scan": scan_id, "frames": len(frames)}
