#!/usr/bin/env python3
"""One version number: include/capturekit/ck_base.h. Fails when a copy disagrees with it.

The header's CK_VERSION_MAJOR/MINOR/PATCH and CK_VERSION_STRING are the source; the Makefile
derives VERSION, the SONAME, the pkg-config file and the CMake package from it at build time.
The copies that cannot be derived at build time are checked here:

* the library's ck_version_string() literal (Sources/CaptureKit/Status+ABI.swift),
* the Python binding's version (bindings/python/capturekit/_version.py; pyproject.toml and the
  binding's expected major/minor read it),
* the major.minor the hand-written declarations of examples/lua and examples/cmake were written for,
* README's file names and SONAME (outside its "Changes" history): every `libcapturekit.so.<n>`
  is the SONAME or the installed file, every `capturekit-<v>-` wheel name has the version,
  every `find_package(CaptureKit <v>` the major.minor.

Usage: check_version.py [--self-test]. Run by scripts/check_abi.sh (`make check-abi`).
"""
from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def header_version(text: str) -> tuple[int, int, int, str]:
    def num(name: str) -> int:
        m = re.search(rf"^#define {name} (\d+)\s*$", text, re.M)
        if not m:
            raise SystemExit(f"check_version: ck_base.h lacks #define {name}")
        return int(m.group(1))

    m = re.search(r'^#define CK_VERSION_STRING "([^"]*)"', text, re.M)
    if not m:
        raise SystemExit("check_version: ck_base.h lacks CK_VERSION_STRING")
    return num("CK_VERSION_MAJOR"), num("CK_VERSION_MINOR"), num("CK_VERSION_PATCH"), m.group(1)


def soname(major: int, minor: int) -> str:
    """The SONAME the Makefile gives (libcapturekit.so.0.MINOR while the major is 0)."""
    return f"libcapturekit.so.{major}.{minor}" if major == 0 else f"libcapturekit.so.{major}"


def check(files: dict[str, str]) -> list[str]:
    """Disagreements between the header (files['include/capturekit/ck_base.h']) and the copies."""
    major, minor, patch, string = header_version(files["include/capturekit/ck_base.h"])
    version = f"{major}.{minor}.{patch}"
    mm = f"{major}.{minor}"
    errors = []
    if string != version:
        errors.append(f"ck_base.h: CK_VERSION_STRING is {string!r}, the numbers say {version!r}")

    def expect(path: str, pattern: str, want: str, what: str) -> None:
        text = files.get(path)
        if text is None:
            errors.append(f"{path}: missing")
            return
        found = re.findall(pattern, text, re.M)
        if not found:
            errors.append(f"{path}: no {what} found (pattern {pattern!r})")
        for f in found:
            if f != want:
                errors.append(f"{path}: {what} is {f!r}, the header says {want!r}")

    expect("Sources/CaptureKit/Status+ABI.swift",
           r'ck_version_string\(\)[^{]*\{\s*staticCString\("([^"\\]*)\\0"\)', version, "ck_version_string()")
    expect("bindings/python/capturekit/_version.py", r'^__version__ = "([^"]*)"', version, "__version__")
    expect("examples/lua/capturekit_demo.lua", r"these (\d+\.\d+) declarations", mm, "declarations' version")
    expect("examples/lua/capturekit_demo.lua",
           r"math\.floor\(v / 10000\) == (\d+) and math\.floor\(v / 100\) % 100 == (\d+)", (str(major), str(minor)),
           "version test")
    expect("examples/lua/capturekit_demo.lua", r'or "(libcapturekit\.so[.\d]*)"', soname(major, minor), "SONAME loaded")
    expect("examples/cmake/CMakeLists.txt", r"find_package\(CaptureKit (\S+) REQUIRED\)", mm, "find_package version")

    readme = files.get("README.md", "").split("\n## Changes", 1)[0]
    for f in re.findall(r"libcapturekit\.so\.(\d[\d.]*\d|\d)", readme):
        if f"libcapturekit.so.{f}" not in (soname(major, minor), f"libcapturekit.so.{version}"):
            errors.append(f"README.md: libcapturekit.so.{f} is neither the SONAME {soname(major, minor)} "
                          f"nor the installed file libcapturekit.so.{version}")
    for f in re.findall(r"capturekit-(\d[\d.]*\d)-py3", readme):
        if f != version:
            errors.append(f"README.md: wheel capturekit-{f}-... has another version than {version}")
    for f in re.findall(r"find_package\(CaptureKit (\S+)", readme):
        if f != mm:
            errors.append(f"README.md: find_package(CaptureKit {f}) is not {mm}")
    return errors


FILES = ["include/capturekit/ck_base.h", "Sources/CaptureKit/Status+ABI.swift",
         "bindings/python/capturekit/_version.py", "examples/lua/capturekit_demo.lua",
         "examples/cmake/CMakeLists.txt", "README.md"]


def self_test() -> None:
    files = {p: (ROOT / p).read_text() for p in FILES}
    assert check(files) == [], check(files)
    base = files["include/capturekit/ck_base.h"]
    bumped = dict(files)
    bumped["include/capturekit/ck_base.h"] = re.sub(r"(#define CK_VERSION_MINOR )\d+", r"\g<1>99",
                                                    re.sub(r'(CK_VERSION_STRING ")[^"]*', r"\g<1>0.99.0", base))
    errs = check(bumped)
    for path in FILES[1:]:
        assert any(e.startswith(path) for e in errs), (path, errs)
    torn = dict(files)
    torn["include/capturekit/ck_base.h"] = re.sub(r'(CK_VERSION_STRING ")[^"]*', r"\g<1>9.9.9", base)
    assert any("CK_VERSION_STRING" in e for e in check(torn))
    print("check_version: self-test passed (a bumped header flags every copy)")


def main() -> int:
    if "--self-test" in sys.argv[1:]:
        self_test()
    files = {p: (ROOT / p).read_text() for p in FILES if (ROOT / p).exists()}
    errors = check(files)
    for e in errors:
        print(f"check_version: {e}", file=sys.stderr)
    if not errors:
        major, minor, patch, _ = header_version(files["include/capturekit/ck_base.h"])
        print(f"check_version: {major}.{minor}.{patch} everywhere (SONAME {soname(major, minor)})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
