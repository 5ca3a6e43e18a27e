"""Importers and exporters between CaptureKit datasets and other apps' captures.

    import_scan(src, dst)        a MultiScan scan or a Stray Scanner capture -> a CaptureKit dataset
    export_multiscan(dataset, dst)  a dataset -> a MultiScan scan folder

An imported dataset streams every frame of the scan (depth, confidence, camera info: its MultiScan
streams) and captures every ``every``-th frame with its colour image (decoded from the app's video
with OpenCV) and depth, so nerfstudio, instant-ngp, MultiScan's tools and every ``capturekit``
command work on it. Everything is written by the library (the same writer as a live capture).

Imports keep what they read:

- A captured frame's depth PNG is the app's depth at the app's depth resolution (256 x 192 on
  LiDAR devices), not resampled to the colour size: a Stray Scanner capture's uint16 millimetres
  bit for bit, a MultiScan scan's float16 metres rounded to millimetres. nerfstudio resizes depth
  itself; instant-ngp wants depth at the colour size, so resize (nearest) for it.
- Per-frame intrinsics (newer Stray Scanner builds write them on every odometry.csv line) are used
  for every frame, streamed and captured.
- A MultiScan scan's metadata and camera-info lines are kept as read in ``import/<scan id>.json``
  and ``import/<scan id>.jsonl`` inside the dataset, and :func:`export_multiscan` gives every field
  MultiScan defines back as read (device, user, scene with GPS, stream intrinsics, each line's
  exposure duration and exact numbers); the streams themselves are the dataset's (float16 depth
  and confidence re-encoded bit for bit).
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
        # Captured depth PNGs at the app's depth resolution (the source's samples, not resampled).
        dw, dh = scan.depth_size
        opts = DatasetOptions(start_time_unix=float(start[0]), device_id=re.sub(r"[^A-Za-z0-9._-]", "-", start[1])[:64] or "imported",
                              depth_png_width=dw, depth_png_height=dh)
        source_meta = None
        if scan.kind == ScanKind.MULTISCAN:
            source_meta = _read_json(os.path.join(folder, name + ".json"))
            _describe_from(source_meta, opts)
        # The app's video goes along as the new scan's colour stream (MultiScan's <id>.mp4), so the
        # dataset is a whole MultiScan scan; it needs the streams (the scan id names the video).
        carry = vpath is not None and scan.depth_frame_count > 0
        if carry:
            if scan.kind == ScanKind.STRAY:
                opts.color_encoding = "hevc"  # Stray Scanner records HEVC
            else:
                meta = source_meta if isinstance(source_meta, dict) else {}
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
                # The stream is float16 by MultiScan's format; captured depth is the app's
                # millimetres (uint16: Stray Scanner's exactly), never through float16.
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
                    mm = scan.depth(i, np.uint16) if f.has_depth else None
                    ds.add_frame(f.pose, k, rgb=image, depth=mm, timestamp=f.timestamp)
                    captured += 1
            if carry:
                ids = [n[:-6] for n in os.listdir(dst) if n.endswith(".jsonl") and n not in ("capturekit.jsonl", "events.jsonl")]
                if len(ids) == 1:
                    shutil.copyfile(vpath, os.path.join(dst, ids[0] + ".mp4"))
            ds.finalize()
            if scan.kind == ScanKind.MULTISCAN:
                _keep_source(folder, name, dst)
        except BaseException:
            shutil.rmtree(os.path.join(dst, _KEPT), ignore_errors=True)
            ds.cancel()
            raise
        finally:
            if video is not None:
                video.release()
        ds.close()
        return {"frames": len(scan), "captured": captured, "kind": scan.kind.name.lower(),
                "video_frames": video_frames if video is not None else None}


_SCAN_FILES = (".json", ".jsonl", ".depth.zlib", ".confidence.zlib")
#: The folder of an imported dataset holding the MultiScan source's metadata and camera info as read.
_KEPT = "import"
#: The most bytes of a scan's metadata read (the app writes ~2 KB).
_META_LIMIT = 16 << 20


def _read_json(path):
    """The JSON value of a (small) file, or None when it is missing, too large or not JSON (the
    scan reader has already validated what the import needs)."""
    try:
        with open(path, "rb") as f:
            data = f.read(_META_LIMIT + 1)
        return json.loads(data) if len(data) <= _META_LIMIT else None
    except (OSError, ValueError):
        return None


def _describe_from(meta, opts: DatasetOptions) -> None:
    """The MultiScan metadata's device, user and scene strings into the new dataset's options."""
    if not isinstance(meta, dict):
        return

    def text(section, key):
        v = meta.get(section)
        v = v.get(key) if isinstance(v, dict) else None
        return v if isinstance(v, str) and "\0" not in v else None

    opts.device_type = text("device", "type")
    opts.device_name = text("device", "name")
    opts.user_name = text("user", "name")
    opts.scene_description = text("scene", "description")
    opts.scene_type = text("scene", "type")


def _keep_source(folder: str, scan_id: str, dst: str) -> None:
    """Copies the MultiScan source's metadata and camera info, as read, into ``dst/import/``."""
    kept = os.path.join(dst, _KEPT)
    os.makedirs(kept)
    for ext in (".json", ".jsonl"):
        shutil.copyfile(os.path.join(folder, scan_id + ext), os.path.join(kept, scan_id + ext))


def _jsonl_lines(path):
    """(line bytes with their newline, timestamp or None) of a camera-info file."""
    out = []
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                t = json.loads(raw).get("timestamp")
            except (ValueError, AttributeError):
                t = None
            out.append((raw if raw.endswith(b"\n") else raw + b"\n", t if isinstance(t, int) else None))
    return out


def _kept_source(dataset: str, scan_id: str):
    """(source id, metadata, camera-info lines) kept by the import, or None."""
    kept = os.path.join(dataset, _KEPT)
    if not os.path.isdir(kept):
        return None
    ids = sorted(n[:-5] for n in os.listdir(kept) if n.endswith(".json") and os.path.isfile(os.path.join(kept, n[:-5] + ".jsonl")))
    if len(ids) != 1:
        return None
    meta = _read_json(os.path.join(kept, ids[0] + ".json"))
    if not isinstance(meta, dict) or not isinstance(meta.get("streams"), list):
        return None
    return ids[0], meta, _jsonl_lines(os.path.join(kept, ids[0] + ".jsonl"))


def _merge_source(dataset: str, scan_id: str, kept, dst: str) -> str:
    """Writes the exported metadata and camera info: the source's as read where the dataset's
    streams still hold the source's frames (same timestamps, in order), the dataset's for frames
    it added after (a resumed capture). Returns the exported scan id."""
    source_id, meta, source_lines = kept
    ours = _jsonl_lines(os.path.join(dataset, scan_id + ".jsonl"))
    same = 0
    while same < min(len(ours), len(source_lines)) and ours[same][1] is not None and ours[same][1] == source_lines[same][1]:
        same += 1
    if same == len(ours):
        # Every streamed frame is the source's: the source as read (its frames without depth too).
        lines = [raw for raw, _ in source_lines]
    else:
        lines = [raw for raw, _ in source_lines[:same]] + [raw for raw, _ in ours[same:]]
        # The dataset's counts for the streams it extended.
        counts = {}
        for st in (_read_json(os.path.join(dataset, scan_id + ".json")) or {}).get("streams", []):
            if isinstance(st, dict) and isinstance(st.get("id"), str):
                counts[st["id"]] = st.get("number_of_frames")
        for st in meta["streams"]:
            if isinstance(st, dict) and st.get("type") in ("lidar_sensor", "confidence_map", "camera_info") and \
                    isinstance(counts.get(st.get("id")), int):
                st["number_of_frames"] = len(lines) if st.get("type") == "camera_info" else counts[st["id"]]
    with open(os.path.join(dst, source_id + ".jsonl"), "wb") as f:
        f.writelines(lines)
    with open(os.path.join(dst, source_id + ".json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return source_id


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
        kept = _kept_source(dataset, scan_id)
        os.makedirs(dst)
        try:
            out_id = scan_id
            if kept is not None:
                # An imported MultiScan scan: every field MultiScan defines comes back as read.
                out_id = _merge_source(dataset, scan_id, kept, dst)
                copy = (".depth.zlib", ".confidence.zlib", ".mp4")
            else:
                copy = _SCAN_FILES + (".mp4",)
            for ext in copy:
                p = os.path.join(dataset, scan_id + ext)
                if os.path.isfile(p):
                    shutil.copyfile(p, os.path.join(dst, out_id + ext))
        except BaseException:
            shutil.rmtree(dst, ignore_errors=True)
            raise
        return {"scan": out_id, "frames": n}
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
