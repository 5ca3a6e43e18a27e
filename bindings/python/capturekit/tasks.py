"""What the ``capturekit`` subcommands do to one scan, as functions that return what they did
instead of printing it: the single-scan commands (:mod:`capturekit.cli`) and ``capturekit
batch`` (:mod:`capturekit.batch`) both call these, so a scan finished, exported or transcoded
by either is the same.

Each raises :class:`capturekit._tools.UsageError` (or a :class:`CaptureKitError`) naming the file
at fault; files a failed call began are removed by the caller through ``OUTPUTS``.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from typing import Dict, List, Optional

import numpy as np

from ._tools import (NOT_FINISHED, OUTPUTS, UsageError, dataset_finished, is_dataset, make_folder,
                     multiscan_metadata, refuse_existing)
from .dataset import Dataset, export_colmap
from .depth import LEVEL_ARCHIVAL
from .errors import CaptureKitError

__all__ = ["finish", "export", "transcode", "coverage", "journal_frames", "not_finished", "TRANSCODE_TARGETS"]


def journal_frames(path: str) -> List:
    """The frames of an unfinished dataset, read through its journal (the library's reader)."""
    try:
        with Dataset.open_readonly(path) as ds:
            return ds.frames()
    except CaptureKitError as e:
        raise UsageError(f"{path}: its journal cannot be read: {e.message}") from None


def not_finished(path: str) -> str:
    """The note for an unfinished dataset, with its journaled frame count and the fix."""
    return NOT_FINISHED.format(path=path, frames=len(journal_frames(path)))


def _stream_sizes(path: str) -> Dict[str, int]:
    return {os.path.basename(p): os.path.getsize(p) for p in glob.glob(os.path.join(glob.escape(path), "*.zlib"))}


# -- finish -----------------------------------------------------------------------------------

def finish(path: str) -> dict:
    """Resumes a dataset a crash left unfinished and finalizes it. Returns ``frames`` (kept from
    the journal), ``depth_frames``, ``cut`` (stream file -> bytes cut after the last journaled
    frame) and ``metadata`` (the scan metadata file written, or None).

    Raises:
        UsageError: not a dataset, already finished, no journal, or the library refused to resume
            it (its message: a damaged journal, a dataset another writer holds).
    """
    if not is_dataset(path):
        raise UsageError(f"{path} is not a CaptureKit dataset (no capturekit.jsonl in it)")
    if dataset_finished(path):
        raise UsageError(f"{path} is already finished (transforms.json exists): nothing to do")
    if not os.path.isfile(os.path.join(path, "capturekit.jsonl")):
        raise UsageError(f"{path} has no journal (capturekit.jsonl): it cannot be resumed")
    before = _stream_sizes(path)
    try:
        ds = Dataset.open(path)
    except CaptureKitError as e:
        raise UsageError(f"{path}: cannot resume it: {e.message}") from None
    with ds:
        frames = ds.frame_count
        depth = sum(1 for i in range(frames) if ds.frame(i).depth_path is not None)
        ds.finalize()
    cut = {n: before[n] - s for n, s in _stream_sizes(path).items() if n in before and s < before[n]}
    meta = [os.path.basename(p) for p in glob.glob(os.path.join(glob.escape(path), "*.json"))
            if os.path.basename(p) not in ("transforms.json", "boundingbox.json")]
    return {"frames": frames, "depth_frames": depth, "cut": cut, "metadata": meta[0] if meta else None}


# -- export -----------------------------------------------------------------------------------

def export(fmt: str, dataset: str, dst: str, overwrite: bool = False, note=None) -> dict:
    """A dataset as a COLMAP text model (``fmt`` "colmap", a finished dataset) or a MultiScan
    scan folder ("multiscan"), written into ``dst`` (created if missing) through a scratch folder
    next to it: an interrupted run leaves nothing. Returns ``message`` (what was written),
    ``frames`` (None for colmap) and ``files`` (the paths written). ``note(text)`` is told when an
    unfinished dataset is exported from its journal."""
    if not is_dataset(dataset):
        raise UsageError(f"{dataset} is not a CaptureKit dataset (no capturekit.jsonl or transforms.json in it)")
    parent = os.path.dirname(os.path.abspath(dst))
    if not os.path.isdir(parent):
        raise UsageError(f"{dst}: its folder {parent} does not exist")
    if os.path.exists(dst) and not os.path.isdir(dst):
        raise UsageError(f"{dst} exists and is not a folder")
    if fmt == "colmap":
        if not dataset_finished(dataset):
            raise UsageError(not_finished(dataset))
        names: Optional[List[str]] = ["cameras.txt", "images.txt", "points3D.txt"]
    elif fmt == "multiscan":
        if not dataset_finished(dataset) and note is not None:
            note(not_finished(dataset).replace("; run", "; exporting them; run"))
        names = None
    else:
        raise UsageError(f"export: unknown format {fmt!r} (colmap or multiscan)")
    from .importers import export_multiscan

    if names is not None:
        refuse_existing([os.path.join(dst, n) for n in names], overwrite)
    scratch = tempfile.mkdtemp(prefix=".capturekit-export-", dir=parent)
    OUTPUTS.temp_dir(scratch)
    frames = None
    try:
        out = os.path.join(scratch, "out")
        if fmt == "colmap":
            os.makedirs(out)
            export_colmap(dataset, out)
            done = f"wrote cameras.txt, images.txt and points3D.txt into {dst}"
        else:
            r = export_multiscan(dataset, out)
            frames = r["frames"]
            done = f"wrote MultiScan scan {r['scan']} ({r['frames']} frames) into {dst}"
        made = sorted(os.listdir(out))
        refuse_existing([os.path.join(dst, n) for n in made], overwrite)
        make_folder(dst)
        for n in made:
            dest = os.path.join(dst, n)
            new = not os.path.lexists(dest)
            os.replace(os.path.join(out, n), dest)
            if new:
                OUTPUTS.created(dest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"message": done, "frames": frames, "files": [os.path.join(dst, n) for n in made]}


# -- transcode --------------------------------------------------------------------------------

#: ``transcode`` targets: the native codec's ``.ckdepth`` (lossless, the compact archive) and
#: MultiScan's raw-DEFLATE stream ``.depth.zlib`` (what MultiScan's tools read).
TRANSCODE_TARGETS = ("ckdepth", "zlib", "archival")


def _ckdepth_writer(path: str, w: int, h: int, kind: str, overwrite: bool, level: int = 0):
    from .depth import DepthKind, DepthWriter
    k = {"depth": DepthKind.FLOAT16, "mm": DepthKind.MM, "confidence": DepthKind.U8}[kind]
    return DepthWriter(path, w, h, k, level, overwrite=overwrite)


def transcode(path: str, dst: str, to: str = "ckdepth", overwrite: bool = False) -> dict:
    """A scan's depth (and confidence) in another format, written into the folder ``dst``,
    frame by frame (memory bounded by one frame, whatever the scan's length).

    ``to`` "ckdepth": ``<name>.depth.ckdepth`` (float16 metres; Stray Scanner's millimetres stay
    uint16 millimetres) and ``<name>.confidence.ckdepth``; a MultiScan stream goes through the
    library's transcoder (``zstream_to_ckdepth``). ``to`` "archival": the same ``.ckdepth`` files
    at the archival level (``depth.LEVEL_ARCHIVAL``: smaller, encoding much slower; for upload
    and long-term storage). ``to`` "zlib": ``<name>.depth.zlib`` and
    ``<name>.confidence.zlib`` as MultiScan writes them (a MultiScan scan already is: refused).

    Returns ``frames`` (depth frames written), ``expected`` (the depth frames the scan says it
    has), ``bytes_in`` (the depth and confidence read), ``bytes_out`` and ``files``. A stream cut
    short keeps its complete frames: ``frames < expected`` then, and the caller says so.
    """
    from .scan import Scan, ScanKind
    from .transcode import zstream_to_ckdepth
    from .zstream import ZStreamWriter

    if to not in TRANSCODE_TARGETS:
        raise UsageError(f"transcode: unknown target {to!r} ({' or '.join(TRANSCODE_TARGETS)})")
    if is_dataset(path) and not dataset_finished(path):
        raise UsageError(not_finished(path) + " (its streams are described at finish)")
    meta = multiscan_metadata(path) if not os.path.isfile(os.path.join(path, "odometry.csv")) else None
    if meta is None and not os.path.isfile(os.path.join(path, "odometry.csv")) and glob.glob(
            os.path.join(glob.escape(path), "*.depth.zlib")):
        raise UsageError(f"{path}: the scan metadata (<id>.json) is missing: its streams' size is unknown")
    try:
        scan = Scan(path)
    except CaptureKitError as e:
        raise UsageError(f"{path}: {e.message}") from None
    files: List[str] = []
    bytes_in = 0
    with scan:
        w, h = scan.depth_size
        expected = scan.depth_frame_count
        if expected == 0:
            raise UsageError(f"{path}: the scan has no depth")
        make_folder(dst)
        if scan.kind == ScanKind.MULTISCAN:
            if to == "zlib":
                raise UsageError(f"{path}: its depth already is a MultiScan stream")
            sid = os.path.basename(meta)[: -len(".json")]
            folder = os.path.dirname(meta)
            depth_frames = sorted((f.depth_index, f.timestamp) for f in scan if f.has_depth)
            times = [t for _, t in depth_frames]
            frames = 0
            for kind, ext in (("depth", ".depth.zlib"), ("confidence", ".confidence.zlib")):
                src = os.path.join(folder, sid + ext)
                if kind == "confidence" and (not scan.has_confidence or not os.path.isfile(src)):
                    continue
                out = os.path.join(dst, f"{sid}.{kind}.ckdepth")
                refuse_existing([out], overwrite)
                bytes_in += os.path.getsize(src)
                new = not os.path.lexists(out)
                n = zstream_to_ckdepth(src, out, w, h, kind, timestamps=times, overwrite=overwrite,
                                       archival=to == "archival")
                if new:
                    OUTPUTS.created(out)
                files.append(out)
                if kind == "depth":
                    frames = n
        else:  # Stray Scanner: one PNG per frame, read through the scan reader
            name = os.path.basename(os.path.normpath(path))
            ckdepth = to in ("ckdepth", "archival")
            level = LEVEL_ARCHIVAL if to == "archival" else 0
            ext = "ckdepth" if ckdepth else "zlib"
            outs = {k: os.path.join(dst, f"{name}.{k}.{ext}") for k in ("depth", "confidence")}
            if not scan.has_confidence:
                del outs["confidence"]
            refuse_existing(list(outs.values()), overwrite)
            writers = {}
            try:
                for k, out in outs.items():
                    OUTPUTS.created(out)
                    if ckdepth:
                        writers[k] = _ckdepth_writer(out, w, h, "mm" if k == "depth" else "confidence", overwrite, level)
                    else:
                        writers[k] = ZStreamWriter(out, w, h, kind=k, overwrite=overwrite)
                frames = 0
                for i in range(len(scan)):
                    f = scan.frame(i)
                    if not f.has_depth:
                        continue
                    d = scan.depth(i, np.uint16 if ckdepth else np.float16)
                    bytes_in += _stray_png_bytes(path, "depth", f.depth_index)
                    if ckdepth:
                        writers["depth"].append(d, f.timestamp)
                    else:
                        writers["depth"].append(d)
                    if "confidence" in writers:
                        c = scan.confidence(i)
                        bytes_in += _stray_png_bytes(path, "confidence", f.depth_index)
                        if ckdepth:
                            writers["confidence"].append(c, f.timestamp)
                        else:
                            writers["confidence"].append(c)
                    frames += 1
            finally:
                for wr in writers.values():
                    wr.close()
            files.extend(outs.values())
    return {"frames": frames, "expected": expected, "bytes_in": bytes_in,
            "bytes_out": sum(os.path.getsize(f) for f in files), "files": files}


def _stray_png_bytes(path: str, kind: str, index: int) -> int:
    try:
        return os.path.getsize(os.path.join(path, kind, f"{index:06d}.png"))
    except OSError:
        return 0


# -- coverage ---------------------------------------------------------------------------------

def coverage(path: str) -> dict:
    """A dataset's coverage as the report computes it (each pass's frames replayed into the
    library's :class:`Coverage` with its box): ``frames``, ``passes`` (each ``pass``, ``frames``,
    ``completion`` and the ``views`` per face) and ``completion`` (the last pass's), or
    ``completion`` None with a ``note`` when the dataset has no box."""
    from .geometry import Face
    from .report import _coverage

    if not is_dataset(path):
        raise UsageError(f"{path} is not a CaptureKit dataset (coverage needs its box and captured frames)")
    frames = journal_frames(path)
    passes, _, note = _coverage(path, frames)
    out = {"frames": len(frames), "passes": [], "completion": None}
    for pc in passes:
        out["passes"].append({"pass": pc.number, "frames": pc.frames, "completion": round(float(pc.summary.completion), 4),
                              "views": {Face(i).name.lower(): int(pc.faces[i].count) for i in range(6)}})
    if passes:
        out["completion"] = out["passes"][-1]["completion"]
    if note:
        out["note"] = note
    return out

