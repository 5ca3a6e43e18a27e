"""What the command-line tools share (``capturekit.cli``, ``capturekit.report``,
``capturekit.validation``): the usage error, the progress bar, the path rule for files a dataset
names, JSON reading that names the file, and output written through a temporary file that an
interrupted run removes.

No ctypes here, and nothing imports :mod:`capturekit.cli` (which imports the tools).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from typing import Iterator, List, Optional, Tuple

__all__ = ["UsageError", "UnsafePathError", "progress", "contained", "check_relative", "load_json",
           "read_jsonl", "os_error", "Outputs", "OUTPUTS", "is_dataset", "dataset_finished", "NOT_FINISHED",
           "multiscan_metadata", "scan_kind", "refuse_existing", "make_folder"]


class UsageError(Exception):
    """A problem with what the user asked or with the files given (exit 1, one line naming the
    file or option at fault)."""


class UnsafePathError(ValueError):
    """A path read from a dataset that names a file outside it (never read)."""


def progress(iterable, total: int, desc: str, unit: str = "frame"):
    """A tqdm bar on a terminal, the plain iterable otherwise."""
    if not sys.stderr.isatty():
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # a declared dependency; tolerate its absence
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit=unit)


# -- the path rule --------------------------------------------------------------------------

def check_relative(rel) -> str:
    """The library's rule for a path a dataset names (its journal, transforms.json): a non-empty
    relative path without backslashes or control characters and without empty, "." or ".."
    components. Returns it; raises :class:`UnsafePathError` naming it."""
    if not isinstance(rel, str):
        raise UnsafePathError(f"path {rel!r} is not a string")
    if not rel or rel.startswith("/") or any(ord(c) < 0x20 or c in "\\\x7f" for c in rel):
        raise UnsafePathError(f"path {rel!r} must be relative, without backslashes or control characters")
    if any(part in ("", ".", "..") for part in rel.split("/")):
        raise UnsafePathError(f"path {rel!r} must not contain empty, '.' or '..' components")
    return rel


def contained(base: str, rel) -> str:
    """``base/rel`` for a file a dataset names, to be read: ``rel`` passes :func:`check_relative`
    and the file, with every symbolic link on the way resolved, is inside ``base`` (a per-file
    link to a file elsewhere is refused as well as ``..`` and absolute paths).

    Raises:
        UnsafePathError: naming ``rel`` and why.
    """
    check_relative(rel)
    root = os.path.realpath(base)
    real = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([root, real]) != root:
        raise UnsafePathError(f"path {rel!r} is a symbolic link (or passes through one) to {real}, outside the dataset")
    return os.path.join(base, rel)


# -- reading JSON that names the file ---------------------------------------------------------

def os_error(e: OSError, name: Optional[str] = None) -> str:
    """An OSError as one line naming its file: ``name`` (the path the user gave) or its own."""
    what = name or e.filename
    text = e.strerror or str(e)
    return f"{what}: {text}" if what else text


def load_json(path: str, name: Optional[str] = None):
    """The JSON value in ``path``. Raises :class:`UsageError` naming the file (``name`` or
    ``path``), the line and the column."""
    shown = name or path
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(os_error(e, shown)) from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{shown}: not valid JSON ({_json_reason(e)})") from None


def _json_reason(e: Exception) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"line {e.lineno} column {e.colno}: {e.msg}"
    return str(e) or type(e).__name__


def read_jsonl(path: str) -> Iterator[Tuple[int, object, Optional[str]]]:
    """``(line number from 1, value or None, error or None)`` for each line of a JSON-lines file;
    a last line without its newline is reported as cut."""
    with open(path, "rb") as f:
        n = 0
        for raw in f:
            n += 1
            if not raw.endswith(b"\n"):
                yield n, None, "the line is cut (no newline at the end of the file)"
                return
            try:
                yield n, json.loads(raw), None
            except (ValueError, RecursionError) as e:
                yield n, None, f"not valid JSON ({_json_reason(e)})"


# -- datasets ---------------------------------------------------------------------------------

#: What every tool says about an unfinished dataset, and the fix (format with ``path``).
NOT_FINISHED = ("{path} is not finished (no transforms.json: the capture crashed or is still running); "
                "read {frames} frame(s) from its journal; run `capturekit finish {path}` to finish it")


def is_dataset(path: str) -> bool:
    return os.path.isdir(path) and (os.path.isfile(os.path.join(path, "capturekit.jsonl"))
                                    or os.path.isfile(os.path.join(path, "transforms.json")))


def dataset_finished(path: str) -> bool:
    """A dataset is finished when finalize wrote its transforms.json."""
    return os.path.isfile(os.path.join(path, "transforms.json"))


def multiscan_metadata(path: str) -> Optional[str]:
    """The MultiScan metadata file of a scan folder (or the file itself), or None."""
    if os.path.isfile(path) and path.endswith(".json"):
        return path
    if not os.path.isdir(path):
        return None
    for candidate in sorted(glob.glob(os.path.join(glob.escape(path), "*.json"))):
        name = os.path.basename(candidate)
        if name in ("transforms.json", "boundingbox.json"):
            continue
        try:
            with open(candidate, "rb") as f:
                meta = json.load(f)
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(meta, dict) and isinstance(meta.get("streams"), list):
            return candidate
    return None


def scan_kind(path: str) -> Optional[str]:
    """What a folder holds, by its layout: "dataset" (a CaptureKit dataset: capturekit.jsonl or
    transforms.json), "stray" (a Stray Scanner capture: odometry.csv), "multiscan" (a MultiScan
    scan: its metadata ``<id>.json``, or a ``<id>.depth.zlib`` stream whose metadata is missing),
    or None."""
    if not os.path.isdir(path):
        return None
    if is_dataset(path):
        return "dataset"
    if os.path.isfile(os.path.join(path, "odometry.csv")):
        return "stray"
    if multiscan_metadata(path) is not None or glob.glob(os.path.join(glob.escape(path), "*.depth.zlib")):
        return "multiscan"
    return None


def refuse_existing(paths: List[str], overwrite: bool) -> None:
    """Without --overwrite, an existing output file is refused before anything is written."""
    if overwrite:
        return
    there = [p for p in paths if os.path.lexists(p)]
    if there:
        more = f" (and {len(there) - 1} more)" if len(there) > 1 else ""
        raise UsageError(f"{there[0]} exists{more}: pass --overwrite to replace it")


def make_folder(path: str) -> None:
    """Creates an output folder (and its missing parents); an interrupted run removes what it made."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.exists(p):
        missing.append(p)
        p = os.path.dirname(p)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{path} exists and is not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UsageError(os_error(e, path)) from None
    if missing:
        OUTPUTS.created(missing[-1])


# -- outputs an interrupted run removes ---------------------------------------------------------

class Outputs:
    """The files a command is writing: temporary files (renamed into place when complete) and
    files or folders it created. :meth:`remove_partial` (Ctrl-C, an error) deletes them; what
    existed before the run is never touched."""

    def __init__(self):
        self._temps: List[str] = []
        self._created: List[str] = []

    def temp_for(self, path: str) -> str:
        """A temporary name next to ``path`` (same folder, so the rename is atomic), registered."""
        folder, base = os.path.split(os.path.abspath(path))
        tmp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
        self._temps.append(tmp)
        return tmp

    def commit(self, tmp: str, path: str) -> None:
        """Renames a complete temporary file onto ``path`` (replacing it)."""
        os.replace(tmp, path)
        if tmp in self._temps:
            self._temps.remove(tmp)

    def discard(self, tmp: str) -> None:
        """Removes a temporary file now (a failed or interrupted write)."""
        try:
            if os.path.lexists(tmp):
                os.remove(tmp)
        except OSError:
            pass
        if tmp in self._temps:
            self._temps.remove(tmp)

    def created(self, path: str) -> None:
        """Notes a file or folder this run created (removed if the run is interrupted)."""
        self._created.append(os.path.abspath(path))

    def temp_dir(self, path: str) -> None:
        """Notes a scratch folder (removed if the run is interrupted)."""
        self._temps.append(os.path.abspath(path))

    def done(self) -> None:
        """The run completed: keep what it made."""
        self._temps.clear()
        self._created.clear()

    def remove_partial(self) -> None:
        for p in reversed(self._temps + self._created):
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                elif os.path.lexists(p):
                    os.remove(p)
            except OSError:
                pass
        self.done()


#: The running command's outputs (one command per process).
OUTPUTS = Outputs()
