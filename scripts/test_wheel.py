#!/usr/bin/env python3
"""The wheel of `make python-wheel`, installed the way a user installs it (`make test-wheel`).

1. The wheel: exactly one `capturekit-<version>-py3-none-manylinux_<glibc>_x86_64.whl`, its tag
   the one `auditwheel show` computes for it, carrying `capturekit/<SONAME>` stripped (no
   .symtab, no DWARF) that still exports the C API, and in `capturekit.libs/` the libzstd,
   libturbojpeg and libjson-c it needs (the .so names the copies and finds them by its rpath;
   zlib is on the manylinux list of libraries every system has, so it stays the system's).
2. A fresh venv (`python3 -m venv --system-site-packages`); pip installs the wheel with
   `--no-index`: its declared dependencies (numpy, tqdm) must be satisfied by what bootstrap
   installed, so `make test` needs no network and always tests the same thing; `pip check`
   then confirms the dependency metadata is consistent.
3. With the Swift toolchain and the system's libzstd, libturbojpeg and libjson-c hidden
   (scripts/run_without_toolchain.sh with CK_HIDE_LIBS: private mount namespace, environment
   emptied, so neither CAPTUREKIT_LIBRARY nor PYTHONPATH is set), the venv's Python must load the
   .so bundled in the installed package, and the venv's `capturekit inspect --json` entry point
   must describe the demo dataset as its files do: frame and depth counts from the folder's
   images/ and depth/ listings, resolution from the first image's PNG header. The same hiding
   must make the source-tree library (--library) fail to load, in one line naming the missing
   library and the apt-get line: the control proving the libraries were hidden.
4. A broken install (one of capturekit.libs/ deleted): the command prints one line saying to
   reinstall the wheel, and exits 1.

Usage: test_wheel.py --wheel-dir DIR --dataset DIR --version X.Y.Z --soname libcapturekit.so.X.Y --library PATH
Where the toolchain and libraries cannot be hidden (not root, no unshare/overlay) step 3 still
runs with an empty environment and says what was visible.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import struct
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDE = ROOT / "scripts" / "run_without_toolchain.sh"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
#: The libraries the wheel must carry: hidden from the system while the wheel is run.
BUNDLED = {"libzstd.so.1": "libzstd", "libturbojpeg.so.0": "libturbojpeg", "libjson-c.so.5": "libjson-c"}
HIDE_ENV = {**os.environ, "CK_HIDE_LIBS": " ".join(BUNDLED)}


def fail(msg: str) -> None:
    print(f"test_wheel: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def hiding_works() -> bool:
    """True when run_without_toolchain.sh hides the toolchain and the BUNDLED libraries (each
    file the loader's cache lists for them is gone inside)."""
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    paths = [line.split(" => ")[1].strip() for line in cache.splitlines()
             if " => " in line and line.split()[0] in BUNDLED]
    if not paths:
        return False
    p = subprocess.run([str(HIDE), "/bin/sh", "-c", " && ".join(f"! test -e {q}" for q in paths)],
                       capture_output=True, text=True, env=HIDE_ENV)
    return p.returncode == 0 and "skipped" not in p.stdout


def run_hidden(cmd, check=True) -> subprocess.CompletedProcess:
    """Runs cmd with the toolchain and the BUNDLED system libraries hidden and an empty environment."""
    argv = [str(HIDE)] + [str(c) for c in cmd] if HIDE_OK else [str(c) for c in cmd]
    p = subprocess.run(argv, capture_output=True, text=True, env=HIDE_ENV if HIDE_OK else CLEAN_ENV)
    if check and p.returncode != 0:
        fail(f"{' '.join(argv)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def check_wheel(wheel_dir: pathlib.Path, version: str, soname: str, scratch: pathlib.Path) -> pathlib.Path:
    wheels = sorted(wheel_dir.glob("*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel in {wheel_dir}, found {[w.name for w in wheels]}")
    wheel = wheels[0]
    show = run([sys.executable, "-m", "auditwheel", "show", wheel]).stdout
    m = re.search(r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s+"([^"]+)"', show)
    if m is None or not m.group(1).startswith("manylinux_"):
        fail(f"auditwheel show does not find {wheel.name} manylinux:\n{show}")
    expected = f"capturekit-{version}-py3-none-{m.group(1)}.whl"
    if wheel.name != expected:
        fail(f"wheel is named {wheel.name}, expected {expected} (the tag auditwheel computes)")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        if f"capturekit/{soname}" not in names:
            fail(f"{wheel.name} does not carry capturekit/{soname}")
        if "capturekit/cli.py" not in names or "_capturekit_cli.py" not in names \
                or not any(n.endswith("entry_points.txt") for n in names):
            fail(f"{wheel.name} lacks the CLI or its entry point")
        libs = [n for n in names if n.startswith("capturekit.libs/") and not n.endswith("/")]
        for so, stem in BUNDLED.items():
            if not any(pathlib.PurePath(n).name.startswith(stem + "-") for n in libs):
                fail(f"{wheel.name} does not carry {so} in capturekit.libs/ (it has {libs})")
        so = scratch / soname
        so.write_bytes(z.read(f"capturekit/{soname}"))
    sections = run(["readelf", "-S", "--wide", so]).stdout
    for s in (".symtab", ".debug_info", ".debug_line"):
        if f" {s} " in sections:
            fail(f"the bundled .so is not stripped: it has {s}")
    dynamic = run(["readelf", "-d", so]).stdout
    if f"[{soname}]" not in dynamic or "$ORIGIN/../capturekit.libs" not in dynamic:
        fail(f"the bundled .so lacks its SONAME {soname} or the rpath to capturekit.libs:\n{dynamic}")
    exported = run(["nm", "-D", "--defined-only", so]).stdout
    if " T ck_version_number" not in exported:
        fail("the bundled .so does not export ck_version_number")
    print(f"test_wheel: {wheel.name} (the tag auditwheel computes) carries a stripped {soname} "
          f"({so.stat().st_size / 1e6:.1f} MB) and {', '.join(sorted(pathlib.PurePath(n).name for n in libs))}")
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
    ap.add_argument("--soname", required=True)
    ap.add_argument("--library", required=True, type=pathlib.Path, help="the source tree's library (the control)")
    args = ap.parse_args()
    dataset = args.dataset.resolve()

    with tempfile.TemporaryDirectory(prefix="ck-wheel-") as tmp:
        tmp = pathlib.Path(tmp)
        wheel = check_wheel(args.wheel_dir, args.version, args.soname, tmp)
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
                                      "print(capturekit.__file__); print(f.library_path); print(capturekit.__version__)"]).stdout
        pkg_file, lib_path, version = where.split()
        pkg_dir = os.path.join(site, "capturekit")
        if os.path.dirname(pkg_file) != pkg_dir:
            fail(f"the venv imported capturekit from {pkg_file}, not from {pkg_dir}")
        if lib_path != os.path.join(pkg_dir, args.soname):
            fail(f"the binding loaded {lib_path}, not the .so bundled in {pkg_dir}")
        if version != args.version:
            fail(f"capturekit.__version__ is {version}, expected {args.version}")

        # The entry point on the demo dataset, against the dataset's own files.
        out = run_hidden([venv / "bin" / "capturekit", "inspect", "--json", dataset]).stdout
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
        hidden = f"toolchain and system {', '.join(BUNDLED)} hidden" if HIDE_OK else \
            "toolchain and system libraries VISIBLE (cannot hide them here: needs root, unshare and overlayfs)"
        print(f"test_wheel: fresh venv, {hidden}, no CAPTUREKIT_LIBRARY/PYTHONPATH: bundled .so loaded, "
              f"`capturekit inspect` saw {info['frames']} frames ({len(depths)} with depth, {w}x{h}) as on disk")

        # The control: the same hiding makes the source-tree library (linked to the system's
        # libraries) fail, and the binding says so in one line with the apt-get advice.
        if HIDE_OK:
            p = run_hidden([f"CAPTUREKIT_LIBRARY={args.library.resolve()}", f"PYTHONPATH={ROOT / 'bindings' / 'python'}",
                            sys.executable, "-m", "capturekit", "inspect", dataset], check=False)
            lines = p.stderr.strip().splitlines()
            if p.returncode != 1 or len(lines) != 1 or not re.search(r"lib(zstd|turbojpeg|json-c)\.so\.\d+ is missing", lines[0]) \
                    or "apt-get install" not in lines[0]:
                fail(f"with the system libraries hidden, the tree's library should fail in one line with the "
                     f"apt-get advice; got exit {p.returncode}:\n{p.stderr}")
            print(f"test_wheel: control, the tree's .so with the same libraries hidden: {lines[0]}")

        # A broken install: one of the bundled copies gone. One line, advice: reinstall the wheel.
        bundled = sorted((pathlib.Path(site) / "capturekit.libs").glob("libzstd-*"))
        if not bundled:
            fail(f"the venv has no capturekit.libs/libzstd-* in {site}")
        bundled[0].unlink()
        p = subprocess.run([str(venv / "bin" / "capturekit"), "inspect", str(dataset)], capture_output=True, text=True,
                           env=CLEAN_ENV)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 1 or len(lines) != 1 or "is missing" not in lines[0] or "reinstall" not in lines[0]:
            fail(f"a wheel install missing {bundled[0].name}: expected one line saying to reinstall, "
                 f"got exit {p.returncode}:\n{p.stderr}")
        print(f"test_wheel: broken install ({bundled[0].name} deleted): {lines[0]}")


HIDE_OK = hiding_works()

if __name__ == "__main__":
    main()
