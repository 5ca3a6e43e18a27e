"""One task on every scan under a folder: ``capturekit batch TASK ROOT`` and :func:`run`.

Scans are found by their layout (:func:`find_scans`): CaptureKit datasets, MultiScan scans and
Stray Scanner captures, at any depth under ROOT (a scan's own sub-folders are not searched).
Each scan is one job that calls the same function the single-scan command calls
(:mod:`capturekit.tasks`, :func:`capturekit.validate`, :func:`capturekit.report.write_report`)
and gives one row (:data:`FIELDS`):

* ``scan``: the scan's folder relative to ROOT ("." for ROOT itself);
* ``task``: "validate", "finish", "export colmap", "export multiscan", "transcode ckdepth",
  "transcode zlib", "report" or "coverage";
* ``status``: "ok", "failed" (``message`` names the problem) or "skipped" (the task does not
  apply: a finished dataset to finish, a Stray capture to export; or, with ``resume``, done in
  an earlier run);
* ``frames``: the frames the task saw (None when it did not get that far);
* ``bytes_before`` / ``bytes_after``: the bytes the task read and wrote: the scan folder before
  and after (finish), the depth read and written (transcode), the scan folder and the files
  written (export, report), the scan folder and None (validate, coverage: nothing written);
* ``seconds``: the task's wall time in its worker (None for a scan whose worker died);
* ``figures``: the task's numbers by name (validate: errors, warnings, counts; transcode: target,
  ratio; coverage: completion, passes, source ...). Tasks add names; a name keeps its meaning.

Engines: by default a local pool of worker processes sized to the machine (``workers``), each
running one scan at a time; with ``scheduler="tcp://HOST:PORT"`` the same jobs run on a Dask
distributed cluster (``pip install capturekit[dask]``; ROOT and the output folder must be at the
same path on every worker). The rows are the same either way. One bad scan never stops the batch
(its row says why); a worker process that dies during a scan (SIGKILL, out of memory) has that
scan retried once, then reported failed with :data:`WORKER_DIED`. On Dask the retry is the
scheduler's: it retries ``distributed.scheduler.allowed-failures`` times (set it to 1 for the
same semantics; :func:`run` notes a scheduler configured otherwise).

Memory per worker is bounded by one scan's frame, not its length: every task reads streams
frame by frame.

Example::

    from capturekit import batch
    rows = batch.run("uploads", "transcode ckdepth", out="archive")
    failed = [r for r in rows if r["status"] == "failed"]
"""

from __future__ import annotations

import csv as _csv
import io
import json
import multiprocessing
import os
import signal
import sys
import time
import uuid
from multiprocessing.connection import wait as _wait
from typing import Callable, Dict, Iterator, List, Optional, Tuple

__all__ = ["run", "find_scans", "parse_task", "run_one", "read_results", "FIELDS", "TASKS", "WORKER_DIED"]

#: The columns of a row, in order.
FIELDS = ("scan", "task", "status", "message", "frames", "bytes_before", "bytes_after", "seconds", "figures")
#: Task names and their argument's choices (None: no argument).
TASKS = {"validate": None, "finish": None, "export": ("colmap", "multiscan"), "transcode": ("ckdepth", "zlib", "archival"),
         "report": None, "coverage": None}
#: The message of a scan whose worker died on both tries.
WORKER_DIED = "the worker running this scan died twice (killed, out of memory or crashed): not retried again"
#: Test hook: "SCAN=N[,SCAN=N]" makes the job for SCAN kill its own worker process (SIGKILL) the
#: first N times it starts, counted by marker files in $CAPTUREKIT_BATCH_TEST_KILL_DIR.
_KILL_ENV, _KILL_DIR_ENV = "CAPTUREKIT_BATCH_TEST_KILL", "CAPTUREKIT_BATCH_TEST_KILL_DIR"


def parse_task(task: str) -> Tuple[str, Optional[str]]:
    """("export", "colmap") for "export colmap"; a task with choices takes the first by default
    ("transcode" is "transcode ckdepth"); export needs its format. ValueError otherwise."""
    parts = str(task).split()
    if not parts or parts[0] not in TASKS or len(parts) > 2:
        raise ValueError(f"unknown batch task {task!r}: one of {', '.join(TASKS)}")
    name, choices = parts[0], TASKS[parts[0]]
    if choices is None:
        if len(parts) > 1:
            raise ValueError(f"batch task {name} takes no argument (got {parts[1]!r})")
        return name, None
    if len(parts) == 1:
        if name == "export":
            raise ValueError("batch task export needs a format: export colmap or export multiscan")
        return name, choices[0]
    if parts[1] not in choices:
        raise ValueError(f"batch task {name}: {parts[1]!r} is not one of {', '.join(choices)}")
    return name, parts[1]


def _label(task: Tuple[str, Optional[str]]) -> str:
    return task[0] if task[1] is None else f"{task[0]} {task[1]}"


def find_scans(root) -> List[Tuple[str, str]]:
    """``(folder relative to root, kind)`` of every scan under ``root``, sorted: kind "dataset",
    "multiscan" or "stray" (:func:`capturekit._tools.scan_kind`). Hidden folders are not searched."""
    from ._tools import scan_kind

    root = os.path.abspath(os.fspath(root))
    out = []
    for folder, dirs, _ in os.walk(root):
        kind = scan_kind(folder)
        if kind is not None:
            out.append((os.path.relpath(folder, root), kind))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(out)


# -- one scan -----------------------------------------------------------------------------------

def _folder_bytes(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(folder, f)).st_size
            except OSError:
                pass
    return total


def _files_bytes(files) -> int:
    return sum(os.path.getsize(f) for f in files if os.path.isfile(f))


def _test_kill(rel: str) -> None:
    spec = os.environ.get(_KILL_ENV)
    folder = os.environ.get(_KILL_DIR_ENV)
    if not spec or not folder:
        return
    for item in spec.split(","):
        name, _, times = item.rpartition("=")
        if name != rel:
            continue
        base = os.path.join(folder, rel.replace(os.sep, "_"))
        for n in range(int(times)):
            try:
                os.close(os.open(f"{base}.{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            os.kill(os.getpid(), signal.SIGKILL)


def _validate(path, kind, arg, dst, overwrite):
    from .validation import validate

    r = validate(path)
    errors, warnings = r.errors, r.warnings
    frames = r.counts.get("frames", r.counts.get("depth_stream_frames"))
    figures = {"errors": len(errors), "warnings": len(warnings), "counts": dict(r.counts)}
    if errors:
        more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
        return "failed", f"{errors[0].tool}: {errors[0].what}{more}", frames, _folder_bytes(path), None, figures
    return "ok", f"{len(warnings)} warning(s)", frames, _folder_bytes(path), None, figures


def _finish(path, kind, arg, dst, overwrite):
    from ._tools import dataset_finished
    from . import tasks

    if kind != "dataset":
        return "skipped", f"a {kind} capture, not a CaptureKit dataset: nothing to finish", None, None, None, {}
    if dataset_finished(path):
        return "skipped", "already finished", None, None, None, {}
    before = _folder_bytes(path)
    r = tasks.finish(path)
    cut = sum(r["cut"].values())
    msg = f"recovered {r['frames']} frame(s) from its journal ({r['depth_frames']} with depth)"
    if cut:
        msg += f"; cut {cut} byte(s) written after the last journaled frame"
    return "ok", msg, r["frames"], before, _folder_bytes(path), {"depth_frames": r["depth_frames"], "cut_bytes": cut}


def _dataset_only(kind, what):
    return "skipped", f"a {kind} capture, not a CaptureKit dataset: {what} (import it first)", None, None, None, {}


def _export(path, kind, arg, dst, overwrite):
    from . import tasks

    if kind != "dataset":
        return _dataset_only(kind, f"export {arg} reads datasets")
    r = tasks.export(arg, path, dst, overwrite=overwrite)
    frames = r["frames"] if r["frames"] is not None else len(tasks.journal_frames(path))
    return "ok", r["message"], frames, _folder_bytes(path), _files_bytes(r["files"]), {"files": len(r["files"])}


def _transcode(path, kind, arg, dst, overwrite):
    from . import tasks

    r = tasks.transcode(path, dst, to=arg, overwrite=overwrite)
    ratio = round(r["bytes_in"] / r["bytes_out"], 3) if r["bytes_out"] else None
    figures = {"target": arg, "ratio": ratio, "files": len(r["files"])}
    if r["frames"] < r["expected"]:
        return ("failed", f"the depth holds {r['frames']} complete frame(s) of {r['expected']} (cut short): "
                f"wrote those", r["frames"], r["bytes_in"], r["bytes_out"], figures)
    return ("ok", f"wrote {r['frames']} depth frame(s) as {arg} ({ratio}x smaller)", r["frames"], r["bytes_in"],
            r["bytes_out"], figures)


def _report(path, kind, arg, dst, overwrite):
    from ._tools import make_folder, refuse_existing
    from .report import write_report
    from . import tasks

    if kind != "dataset":
        return _dataset_only(kind, "the report reads datasets")
    out = os.path.join(dst, "report.html")
    refuse_existing([out], overwrite)
    make_folder(dst)
    size = write_report(path, out)
    return "ok", f"wrote {out}", len(tasks.journal_frames(path)), _folder_bytes(path), size, {}


def _coverage(path, kind, arg, dst, overwrite):
    from . import tasks

    if kind != "dataset":
        return _dataset_only(kind, "coverage needs a dataset's box and captured frames")
    r = tasks.coverage(path)
    figures = {"source": "views per face (the report's replay)", "completion": r["completion"], "passes": r["passes"]}
    if r["completion"] is None:
        return "ok", r.get("note", "no coverage"), r["frames"], _folder_bytes(path), None, figures
    return "ok", f"completion {r['completion']:.0%}", r["frames"], _folder_bytes(path), None, figures


_RUN = {"validate": _validate, "finish": _finish, "export": _export, "transcode": _transcode, "report": _report,
        "coverage": _coverage}


def run_one(root: str, rel: str, kind: str, task: Tuple[str, Optional[str]], out: Optional[str],
            overwrite: bool = False) -> dict:
    """The row of one scan (runs in a worker: the local pool's or a Dask worker's). Never raises
    for a problem with the scan: its row is "failed" with the message."""
    from ._tools import OUTPUTS, UsageError
    from .errors import CaptureKitError

    _test_kill(rel)
    path = os.path.normpath(os.path.join(root, rel))
    dst = None if out is None else os.path.normpath(os.path.join(out, rel if rel != "." else os.path.basename(root)))
    start = time.perf_counter()
    try:
        if dst is not None:  # the folders above a scan's output are shared by its siblings: never removed
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        status, message, frames, before, after, figures = _RUN[task[0]](path, kind, task[1], dst, overwrite)
        OUTPUTS.done()
    except (UsageError, CaptureKitError, OSError, ValueError) as e:
        OUTPUTS.remove_partial()
        text = getattr(e, "message", None) or str(e)
        if isinstance(e, OSError) and e.filename:
            text = f"{e.filename}: {e.strerror or e}"
        status, message, frames, before, after, figures = "failed", text, None, None, None, {}
    except Exception as e:  # a bug must cost one row, not the batch
        OUTPUTS.remove_partial()
        status, message, frames, before, after, figures = "failed", f"{type(e).__name__}: {e}", None, None, None, {}
    seconds = round(time.perf_counter() - start, 4)
    message = message.replace(path + os.sep, rel + os.sep).replace(path, rel)  # the same on every machine
    return {"scan": rel, "task": _label(task), "status": status, "message": message, "frames": frames,
            "bytes_before": before, "bytes_after": after, "seconds": seconds, "figures": figures}


def _died(rel: str, task) -> dict:
    return {"scan": rel, "task": _label(task), "status": "failed", "message": WORKER_DIED, "frames": None,
            "bytes_before": None, "bytes_after": None, "seconds": None, "figures": {}}


# -- the local pool ---------------------------------------------------------------------------

def _worker_main(conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(run_one(*job))


def _local(jobs: List[tuple], workers: int) -> Iterator[dict]:
    """Rows as scans complete, from ``workers`` processes each running one scan at a time; a
    process that dies has its scan retried once (in a new process), then reported failed."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(reversed(jobs))
    attempts: Dict[str, int] = {}
    procs: Dict[object, list] = {}  # conn -> [process, job or None]

    def start():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_worker_main, args=(child,), daemon=True)
        p.start()
        child.close()
        procs[parent] = [p, None]

    try:
        for _ in range(min(workers, len(jobs))):
            start()
        while pending or any(v[1] is not None for v in procs.values()):
            for conn, slot in list(procs.items()):
                if slot[1] is None and pending and not slot[0].is_alive():  # died between scans
                    slot[0].join()
                    conn.close()
                    del procs[conn]
                    start()
            for conn, slot in list(procs.items()):
                if slot[1] is None and pending:
                    slot[1] = pending.pop()
                    try:
                        conn.send(slot[1])
                    except (BrokenPipeError, OSError):
                        pass  # its death is seen below
            busy = {conn: slot for conn, slot in procs.items() if slot[1] is not None}
            ready = _wait(list(busy) + [slot[0].sentinel for slot in busy.values()])
            for conn, slot in busy.items():
                row = None
                if conn in ready:
                    try:
                        row = conn.recv()
                    except (EOFError, OSError):
                        row = None
                if row is not None:
                    slot[1] = None
                    yield row
                elif conn in ready or slot[0].sentinel in ready:
                    job = slot[1]
                    slot[0].join()
                    conn.close()
                    del procs[conn]
                    rel = job[1]
                    attempts[rel] = attempts.get(rel, 0) + 1
                    if attempts[rel] < 2:
                        pending.append(job)
                    else:
                        yield _died(rel, job[3])
                    if pending:
                        start()
    finally:
        for conn, slot in procs.items():
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for conn, slot in procs.items():
            slot[0].join(timeout=5)
            if slot[0].is_alive():
                slot[0].kill()
                slot[0].join()
            conn.close()


# -- Dask -------------------------------------------------------------------------------------

def _dask(jobs: List[tuple], scheduler: str, note: Callable[[str], None]) -> Iterator[dict]:
    try:
        from distributed import Client, as_completed
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install 'capturekit[dask]' (dask and distributed)") from None
    try:
        client = Client(scheduler, timeout=30, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ValueError(f"--scheduler {scheduler}: cannot connect ({e})") from None
    try:
        try:
            allowed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
        except Exception:  # an older or locked-down scheduler: say nothing
            allowed = 1
        if allowed != 1:
            note(f"the scheduler retries a scan whose worker dies {allowed} time(s), not once; start it with "
                 "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 for capturekit's retry-once")
        run_id = uuid.uuid4().hex[:12]
        futures = {}
        for i, job in enumerate(jobs):
            f = client.submit(run_one, *job, key=f"capturekit-batch-{run_id}-{i}", pure=False, retries=0)
            futures[f] = job
        try:
            for f in as_completed(list(futures), loop=client.loop):
                job = futures[f]
                try:
                    yield f.result()
                except KilledWorker:
                    yield _died(job[1], job[3])
                except (FutureCancelledError, Exception) as e:  # the cluster's failure, not the scan's
                    row = _died(job[1], job[3])
                    row["message"] = f"the cluster could not run it: {type(e).__name__}: {e}"
                    yield row
        finally:
            client.cancel(list(futures))
    finally:
        client.close()


# -- results files ----------------------------------------------------------------------------

def _csv_line(row: dict) -> str:
    buf = io.StringIO()
    w = _csv.writer(buf, lineterminator="\n")
    w.writerow(["" if row[k] is None else (json.dumps(row[k]) if k == "figures" else row[k]) for k in FIELDS])
    return buf.getvalue()


def read_results(path: str, csv: bool = False) -> List[dict]:
    """The rows of a results file (JSON Lines, or CSV): a torn last line (a killed run) is ignored."""
    rows = []
    with open(path, newline="") as f:
        if csv:
            for r in _csv.DictReader(f):
                if set(FIELDS) <= set(r) and r["status"]:
                    rows.append(r)
            return rows
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and {"scan", "task", "status"} <= set(r):
                rows.append(r)
    return rows


# -- the batch ------------------------------------------------------------------------------------

def _cut_torn_line(path: str) -> None:
    """Removes a last line without its newline (a batch killed while writing a row) so that the
    rows appended next start on a line of their own."""
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def run(root, task: str, workers: Optional[int] = None, scheduler: Optional[str] = None, *, out=None,
        results=None, resume: bool = False, csv: bool = False, overwrite: bool = False,
        on_row: Optional[Callable[[dict], None]] = None, note: Optional[Callable[[str], None]] = None,
        progress: bool = False) -> List[dict]:
    """Runs ``task`` on every scan under ``root``; returns one row per scan, sorted by scan.

    Args:
        task: "validate", "finish", "export colmap", "export multiscan", "transcode" ("transcode
            ckdepth"), "transcode zlib", "report" or "coverage".
        workers: local worker processes (default: the machine's CPUs); ignored with ``scheduler``.
        scheduler: a Dask scheduler's address ("tcp://host:8786"): run the jobs on that cluster.
        out: the folder the tasks that write (export, transcode, report) write into, one
            sub-folder per scan (its path under ``root``).
        results: a file the rows are appended to as they complete (JSON Lines, or CSV with
            ``csv``), so that a killed batch keeps what it did. An existing one is refused unless
            ``overwrite`` (replaced) or ``resume``.
        resume: skip the scans ``results`` already holds a row of this task for with status "ok"
            or "skipped" (their returned rows are "skipped", "done in ..."; not written again).
        overwrite: also replace the tasks' existing output files.
        on_row: called with each row as it completes (in the parent process).

    Raises:
        ValueError: an unknown task, a missing ``out``, a root that is not a folder, an existing
            ``results`` without ``resume`` or ``overwrite``, Dask not installed or unreachable.
    """
    from ._tools import progress as _progress

    t = parse_task(task)
    root = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root):
        raise ValueError(f"{root} is not a folder")
    if t[0] in ("export", "transcode", "report") and out is None:
        raise ValueError(f"batch task {t[0]} writes files: give the folder to write them into (out, --out)")
    out = None if out is None else os.path.abspath(os.fspath(out))
    if out is not None:
        os.makedirs(out, exist_ok=True)
    note = note or (lambda text: None)
    scans = find_scans(root)
    done: Dict[str, dict] = {}
    if results is not None:
        results = os.fspath(results)
        if os.path.exists(results) and resume:
            for r in read_results(results, csv):
                if r["task"] == _label(t):
                    done[r["scan"]] = r
        elif os.path.exists(results) and not overwrite:
            raise ValueError(f"{results} exists: pass --resume to continue it or --overwrite to replace it")
    rows: List[dict] = []
    todo = []
    for rel, kind in scans:
        prev = done.get(rel)
        if prev is not None and prev["status"] in ("ok", "skipped"):
            rows.append({"scan": rel, "task": _label(t), "status": "skipped", "message": f"done in {results}",
                         "frames": None, "bytes_before": None, "bytes_after": None, "seconds": None, "figures": {},
                         "_resumed": True})
        else:
            todo.append((root, rel, kind, t, out, overwrite))
    sink = None
    if results is not None:
        fresh = not (resume and os.path.exists(results))
        if not fresh:
            _cut_torn_line(results)
        sink = open(results, "w" if fresh else "a", newline="")
        if fresh and csv:
            sink.write(",".join(FIELDS) + "\n")
            sink.flush()
    try:
        if scheduler:
            stream = _dask(todo, scheduler, note)
        else:
            stream = _local(todo, workers if workers else _default_workers()) if todo else iter(())
        if progress:
            stream = _progress(stream, len(todo), f"batch {_label(t)}", unit="scan")
        for row in stream:
            rows.append(row)
            if sink is not None:
                sink.write(_csv_line(row) if csv else json.dumps(row) + "\n")
                sink.flush()
            if on_row is not None:
                on_row(row)
    finally:
        if sink is not None:
            sink.close()
    rows.sort(key=lambda r: r["scan"])
    for r in rows:
        r.pop("_resumed", None)
    return rows


def main_batch(args) -> int:
    """``capturekit batch`` (called by :mod:`capturekit.cli`)."""
    if len(args.words) < 2:
        from ._tools import UsageError
        raise UsageError("batch: give the task and the folder of scans (capturekit batch TASK ROOT)")
    task, root = " ".join(args.words[:-1]), args.words[-1]
    try:
        parse_task(task)
    except ValueError as e:
        from ._tools import UsageError
        raise UsageError(str(e)) from None
    printed = []
    if args.results is None:  # rows to stdout as they complete
        header = [False]

        def on_row(row):
            if args.csv:
                if not header[0]:
                    sys.stdout.write(",".join(FIELDS) + "\n")
                    header[0] = True
                sys.stdout.write(_csv_line(row))
            else:
                sys.stdout.write(json.dumps(row) + "\n")
            sys.stdout.flush()
    else:
        on_row = printed.append
    start = time.perf_counter()
    rows = run(root, task, workers=args.workers, scheduler=args.scheduler, out=args.out, results=args.results,
               resume=args.resume, csv=args.csv, overwrite=args.overwrite, on_row=on_row,
               note=lambda text: print(f"capturekit: note: {text}", file=sys.stderr), progress=True)
    seconds = time.perf_counter() - start
    resumed = [r for r in rows if r["status"] == "skipped" and r["message"].startswith("done in ")]
    ran = [r for r in rows if r not in resumed]
    n = {s: sum(1 for r in rows if r["status"] == s) for s in ("ok", "failed", "skipped")}
    rate = len(ran) / seconds if seconds > 0 else 0.0
    print(f"batch {_label(parse_task(task))}: {len(rows)} scan(s): {n['ok']} ok, {n['failed']} failed, "
          f"{n['skipped']} skipped ({len(resumed)} done before) in {seconds:.1f} s, {rate:.2f} scans/s"
          + (f"; rows in {args.results}" if args.results else ""), file=sys.stderr)
    for r in rows:
        if r["status"] == "failed":
            print(f"  failed: {r['scan']}: {r['message']}", file=sys.stderr)
    return 1 if n["failed"] else 0
