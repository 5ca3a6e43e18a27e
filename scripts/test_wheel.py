#!/usr/bin/env python3
"""The wheel of `make python-wheel`, installed the way a user installs it (`make test-wheel`).

1. The wheel: exactly one `capturekit-<version>-py3-none-<platform>.whl`, carrying
   `capturekit/libcapturekit.so` stripped (no .symtab, no DWARF) that still exports the C API.
2. A fresh venv (`python3 -m venv --system-site-packages`); pip installs the wheel with
   `--no-index`: its declared dependencies (numpy, tqdm) must be satisfied by what bootstrap
   installed, so `make test` needs no network and always tests the same thing; `pip check`
   then confirms the dependency metadata is consistent.
3. With the Swift toolchain hidden (scripts/run_without_toolchain.sh: an empty folder mounted over
   it, environment emptied, so neither CAPTUREKIT_LIBRARY nor PYTHONPATH is set), the venv's
   Python must load the .so bundled in the installed package, and the venv's `capturekit inspect
   --json` entry point must describe the demo dataset as its files do: frame and depth counts from
   the folder's images/ and depth/ listings, resolution from the first image's PNG header.

Usage: test_wheel.py --wheel-dir DIR --dataset DIR --version X.Y.Z
Where the toolchain cannot be hidden (not root, no unshare) step 3 still runs with an empty
environment and says the toolchain was visible.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import struct
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDE = ROOT / "scripts" / "run_without_toolchain.sh"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}


def fail(msg: str) -> None:
    print(f"test_wheel: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def toolchain_can_be_hidden() -> bool:
    p = subprocess.run([str(HIDE), "true"], capture_output=True, text=True)
    return p.returncode == 0 and "skipped" not in p.stdout


def run_hidden(cmd) -> str:
    """Runs cmd with the toolchain hidden and an empty environment; returns its stdout."""
    if HIDE_OK:
        return run([str(HIDE)] + [str(c) for c in cmd]).stdout
    return run([str(c) for c in cmd], env=CLEAN_ENV).stdout


def check_wheel(wheel_dir: pathlib.Path, version: str, scratch: pathlib.Path) -> pathlib.Path:
    wheels = sorted(wheel_dir.glob("*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel in {wheel_dir}, found {[w.name for w in wheels]}")
    wheel = wheels[0]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    expected = f"capturekit-{version}-py3-none-{platform}.whl"
    if wheel.name != expected:
        fail(f"wheel is named {wheel.name}, expected {expected}")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        if "capturekit/libcapturekit.so" not in names:
            fail(f"{wheel.name} does not carry capturekit/libcapturekit.so")
        if "capturekit/cli.py" not in names or not any(n.endswith("entry_points.txt") for n in names):
            fail(f"{wheel.name} lacks the CLI or its entry point")
        so = scratch / "libcapturekit.so"
        so.write_bytes(z.read("capturekit/libcapturekit.so"))
    sections = run(["readelf", "-S", "--wide", so]).stdout
    for s in (".symtab", ".debug_info", ".debug_line"):
        if f" {s} " in sections:
            fail(f"the bundled .so is not stripped: it has {s}")
    exported = run(["nm", "-D", "--defined-only", so]).stdout
    if " T ck_version_number" not in exported:
        fail("the bundled .so does not export ck_version_number")
    print(f"test_wheel: {wheel.name} carries a stripped libcapturekit.so ({so.stat().st_size / 1e6:.1f} MB)")
    return wheel


def png_size(path: pathlib.Path):
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        fail(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel-dir", required=True, type=pathlib.Path)
    ap.add_argument("--dataset", required=True, type=pathlib.Path)
    ap.add_argument("--version", required=True)
    args = ap.parse_args()
    dataset = args.dataset.resolve()

    with tempfile.TemporaryDirectory(prefix="ck-wheel-") as tmp:
        tmp = pathlib.Path(tmp)
        wheel = check_wheel(args.wheel_dir, args.version, tmp)
        venv = tmp / "venv"
        run([sys.executable, "-m", "venv", "--system-site-packages", venv])
        py = venv / "bin" / "python"
        run([py, "-m", "pip", "install", "-q", "--no-index", "--no-cache-dir", wheel])
        run([py, "-m", "pip", "check"])
        requires = run([py, "-m", "pip", "show", "capturekit"]).stdout
        if not any(l.startswith("Requires:") and "numpy" in l and "tqdm" in l for l in requires.splitlines()):
            fail(f"the wheel does not declare numpy and tqdm:\n{requires}")

        # Where the installed package and its library are, as the venv's Python sees them.
        site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        where = run_hidden([py, "-c", "import capturekit, capturekit._ffi as f; "
                                      "print(capturekit.__file__); print(f.library_path); print(capturekit.__version__)"])
        pkg_file, lib_path, version = where.split()
        pkg_dir = os.path.join(site, "capturekit")
        if os.path.dirname(pkg_file) != pkg_dir:
            fail(f"the venv imported capturekit from {pkg_file}, not from {pkg_dir}")
        if lib_path != os.path.join(pkg_dir, "libcapturekit.so"):
            fail(f"the binding loaded {lib_path}, not the .so bundled in {pkg_dir}")
        if version != args.version:
            fail(f"capturekit.__version__ is {version}, expected {args.version}")

        # The entry point on the demo dataset, against the dataset's own files.
        out = run_hidden([venv / "bin" / "capturekit", "inspect", "--json", dataset])
        try:
            info = json.loads(out)
        except ValueError:
            fail(f"`capturekit inspect --json` did not print JSON:\n{out}")
        images = sorted(p for p in (dataset / "images").iterdir() if p.suffix in (".png", ".jpg"))
        depths = sorted((dataset / "depth").glob("*.png"))
        if not images:
            fail(f"{dataset} has no images: not the demo dataset")
        expected = {"kind": "capturekit-dataset", "finished": True, "frames": len(images), "depth_frames": len(depths)}
        for key, value in expected.items():
            if info.get(key) != value:
                fail(f"inspect --json: {key} = {info.get(key)!r}, the dataset has {value!r}")
        w, h = png_size(images[0])
        if f"{w}x{h}" not in info.get("resolutions", []):
            fail(f"inspect --json: resolutions {info.get('resolutions')} lack the images' {w}x{h}")
        print(f"test_wheel: fresh venv, toolchain {'hidden' if HIDE_OK else 'VISIBLE (cannot hide it here)'}, "
              f"no CAPTUREKIT_LIBRARY/PYTHONPATH: bundled .so loaded, `capturekit inspect` saw "
              f"{info['frames']} frames ({len(depths)} with depth, {w}x{h}) as on disk")


HIDE_OK = toolchain_can_be_hidden()

if __name__ == "__main__":
    main()
