#!/usr/bin/env python3
"""Runs the README's tested snippets, so the docs cannot rot (`make test-readme`).

A fenced code block is tested when the line right before its opening fence is

    <!-- test: LANG -->          LANG: c, cpp, python or sh

and its stdout is compared when the block right after it is introduced by `<!-- output -->`
(the comparison ignores trailing whitespace). Blocks without a marker are illustrations (fragments)
and are not run. Each snippet runs in a fresh scratch folder holding `capturekit-demo-dataset`
(a link to the dataset `make test-examples` writes, what `make demo` writes for a reader):

- c:      cc  -std=c99   -Wall -Wextra -Werror -pedantic -I include, linked to the built library;
- cpp:    c++ -std=c++17 -Wall -Wextra -Werror -pedantic -I include (capturekit.hpp), same library;
- python: python3 with the binding (PYTHONPATH=bindings/python, CAPTUREKIT_LIBRARY=the library);
- sh:     bash -eo pipefail, with a `capturekit` command on PATH (the binding's entry point).

Usage: run_readme_snippets.py --lib LIB --dataset DIR [--require c,cpp,python,sh] [README.md ...]
       run_readme_snippets.py --lib LIB --self-test   (the runner itself: failing snippets must fail)
Exits 1 when a snippet fails to build, exits non-zero, prints other than its output block, or a
marker is malformed, naming the README line.
"""
from __future__ import annotations

import argparse
import atexit
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
LANGS = ("c", "cpp", "python", "sh")
MARKER = re.compile(r"^<!--\s*test:\s*(\S+)\s*-->\s*$")
OUTPUT = re.compile(r"^<!--\s*output\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
TIMEOUT = 300


@dataclass
class Snippet:
    source: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    output: Optional[str] = None


class MarkdownError(Exception):
    pass


def _block(lines: List[str], i: int, source: str):
    """The fenced block opening at lines[i]: (info, code, index after the closing fence)."""
    m = FENCE.match(lines[i])
    if not m:
        raise MarkdownError(f"{source}:{i + 1}: a marker must be followed directly by a fenced block")
    fence = m.group(1)
    for j in range(i + 1, len(lines)):
        if lines[j].strip().startswith(fence[0] * len(fence)) and lines[j].strip().strip(fence[0]) == "":
            return m.group(2), "".join(lines[i + 1:j]), j + 1
    raise MarkdownError(f"{source}:{i + 1}: the fenced block is not closed")


def parse(text: str, source: str) -> List[Snippet]:
    lines = text.splitlines(keepends=True)
    out: List[Snippet] = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if OUTPUT.match(lines[i].strip()):
            raise MarkdownError(f"{source}:{i + 1}: an output block must follow a tested snippet")
        if not m:
            fm = FENCE.match(lines[i])
            i = _block(lines, i, source)[2] if fm else i + 1  # skip untested blocks whole
            continue
        lang = m.group(1)
        if lang not in LANGS:
            raise MarkdownError(f"{source}:{i + 1}: unknown snippet language {lang!r} (one of {', '.join(LANGS)})")
        if i + 1 >= len(lines):
            raise MarkdownError(f"{source}:{i + 1}: a marker must be followed directly by a fenced block")
        _, code, nxt = _block(lines, i + 1, source)
        snip = Snippet(source, i + 2, lang, code)
        k = nxt
        while k < len(lines) and not lines[k].strip():
            k += 1
        if k < len(lines) and OUTPUT.match(lines[k].strip()):
            if k + 1 >= len(lines):
                raise MarkdownError(f"{source}:{k + 1}: `<!-- output -->` must be followed directly by a fenced block")
            _, snip.output, nxt = _block(lines, k + 1, source)
        out.append(snip)
        i = nxt
    return out


def _norm(text: str) -> str:
    return "\n".join(l.rstrip() for l in text.strip("\n").splitlines())


class Runner:
    def __init__(self, lib: pathlib.Path, dataset: Optional[pathlib.Path], cc: str, cxx: str, python: str):
        self.lib = lib.resolve()
        self.dataset = dataset.resolve() if dataset else None
        self.cc, self.cxx, self.python = shlex.split(cc), shlex.split(cxx), python
        self.bin = pathlib.Path(tempfile.mkdtemp(prefix="ck-readme-bin-"))
        atexit.register(shutil.rmtree, self.bin, True)
        shim = self.bin / "capturekit"
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(python)} -m capturekit \"$@\"\n")
        shim.chmod(0o755)

    def env(self):
        env = dict(os.environ)
        env["CAPTUREKIT_LIBRARY"] = str(self.lib)
        env["PYTHONPATH"] = str(ROOT / "bindings" / "python")
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, snip: Snippet) -> Optional[str]:
        """None when the snippet passes, else why it failed."""
        with tempfile.TemporaryDirectory(prefix="ck-readme-") as tmp:
            tmp = pathlib.Path(tmp)
            if self.dataset:
                (tmp / "capturekit-demo-dataset").symlink_to(self.dataset)
            link = ["-I", str(ROOT / "include"), "-L", str(self.lib.parent), "-lcapturekit",
                    f"-Wl,-rpath,{self.lib.parent}", "-lm"]
            if snip.lang in ("c", "cpp"):
                src = tmp / ("snippet.c" if snip.lang == "c" else "snippet.cpp")
                src.write_text(snip.code)
                compiler = (self.cc + ["-std=c99"]) if snip.lang == "c" else (self.cxx + ["-std=c++17"])
                cmd = compiler + ["-Wall", "-Wextra", "-Werror", "-pedantic", str(src)] + link + ["-o", str(tmp / "snippet")]
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
                if p.returncode != 0:
                    return f"does not build ({' '.join(cmd)}):\n{p.stdout}{p.stderr}"
                cmd = [str(tmp / "snippet")]
            elif snip.lang == "python":
                (tmp / "snippet.py").write_text(snip.code)
                cmd = [self.python, "snippet.py"]
            else:
                (tmp / "snippet.sh").write_text(snip.code)
                cmd = ["bash", "-eo", "pipefail", "snippet.sh"]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=self.env(), timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                return f"did not finish within {TIMEOUT} s"
            if p.returncode != 0:
                return f"exited {p.returncode}:\n{p.stdout}{p.stderr}"
            if snip.output is not None and _norm(p.stdout) != _norm(snip.output):
                return f"printed\n{p.stdout}\ninstead of its output block\n{snip.output}"
            return None


def run_all(runner: Runner, snippets: List[Snippet], quiet: bool = False) -> List[str]:
    failures = []
    for s in snippets:
        why = runner.run(s)
        if why:
            failures.append(f"{s.source}:{s.line}: {s.lang} snippet {why}")
        elif not quiet:
            print(f"readme: {s.source}:{s.line}: {s.lang} snippet ok{' (output checked)' if s.output is not None else ''}")
    return failures


SELF_TEST = """\
<!-- test: sh -->
```sh
echo hello
```
<!-- output -->
```text
hello
```
<!-- test: c -->
```c
#include <capturekit.h>
int main(void) { return ck_version_number() == CK_VERSION_NUMBER ? 0 : 1; }
```
<!-- test: cpp -->
```cpp
#include <capturekit.hpp>
int main() { capturekit::check_version(); return 0; }
```
<!-- test: python -->
```python
import capturekit
print(capturekit.__version__.count("."))
```
<!-- output -->
```
2
```
```sh
exit 1   # unmarked: an illustration, never run
```
"""
# Each must fail, and for the reason given.
SELF_TEST_FAILING = {
    "sh exits non-zero": ("<!-- test: sh -->\n```sh\ntrue\nfalse\necho not reached\n```\n", "exited 1"),
    "sh pipeline fails": ("<!-- test: sh -->\n```sh\nfalse | cat\n```\n", "exited 1"),
    "wrong output": ("<!-- test: sh -->\n```sh\necho hello\n```\n<!-- output -->\n```\nworld\n```\n", "instead of its output"),
    "C warning": ("<!-- test: c -->\n```c\nint main(void) { int unused; return 0; }\n```\n", "does not build"),
    "C unknown function": ("<!-- test: c -->\n```c\n#include <capturekit.h>\nint main(void) { return ck_no_such(); }\n```\n",
                           "does not build"),
    "C++ not C++17": ("<!-- test: cpp -->\n```cpp\n#include <capturekit.hpp>\nint main() { auto x = capturekit::nope(); }\n```\n",
                      "does not build"),
    "C++ exits non-zero": ("<!-- test: cpp -->\n```cpp\n#include <capturekit.hpp>\nint main() {\n"
                           "  try { capturekit::make_box({0, 0, 0}, {-1, 1, 1}); } catch (const capturekit::error &) { return 3; }\n"
                           "  return 0;\n}\n```\n", "exited 3"),
    "python raises": ("<!-- test: python -->\n```python\nimport capturekit as ck\nck.Box(center=(0, 0, 0), size=(-1, 1, 1))\n```\n",
                      "exited 1"),
    "dataset missing": ("<!-- test: sh -->\n```sh\ncapturekit inspect no-such-folder\n```\n", "exited"),
}
SELF_TEST_MALFORMED = {
    "marker without block": "<!-- test: c -->\n\n```c\nint main(void) { return 0; }\n```\n",
    "unknown language": "<!-- test: rust -->\n```rust\nfn main() {}\n```\n",
    "unclosed block": "<!-- test: sh -->\n```sh\necho\n",
    "stray output marker": "<!-- output -->\n```\nx\n```\n",
}


def self_test(runner: Runner) -> int:
    problems = []
    snippets = parse(SELF_TEST, "self-test")
    if [s.lang for s in snippets] != ["sh", "c", "cpp", "python"]:
        problems.append(f"parsed {[s.lang for s in snippets]} from the passing document")
    problems += run_all(runner, snippets, quiet=True)
    for name, (doc, reason) in SELF_TEST_FAILING.items():
        got = run_all(runner, parse(doc, name), quiet=True)
        if len(got) != 1 or reason not in got[0]:
            problems.append(f"{name}: expected one failure containing {reason!r}, got {got}")
    for name, doc in SELF_TEST_MALFORMED.items():
        try:
            parse(doc, name)
            problems.append(f"{name}: accepted")
        except MarkdownError:
            pass
    for p in problems:
        print(f"readme self-test: FAILED: {p}", file=sys.stderr)
    if not problems:
        print(f"readme self-test: {len(snippets)} passing snippets passed, {len(SELF_TEST_FAILING)} failing ones failed, "
              f"{len(SELF_TEST_MALFORMED)} malformed documents refused")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=pathlib.Path)
    ap.add_argument("--lib", required=True, type=pathlib.Path, help="the built libcapturekit.so")
    ap.add_argument("--dataset", type=pathlib.Path, help="a demo dataset, linked as ./capturekit-demo-dataset")
    ap.add_argument("--require", default="", help="languages that must have at least one tested snippet")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    runner = Runner(args.lib, args.dataset, args.cc, args.cxx, args.python)
    if args.self_test:
        return self_test(runner)
    snippets, failures = [], []
    for f in args.files or [ROOT / "README.md"]:
        try:
            snippets += parse(f.read_text(encoding="utf-8"), str(f))
        except MarkdownError as e:
            failures.append(str(e))
    missing = [l for l in args.require.split(",") if l and l not in {s.lang for s in snippets}]
    if missing:
        failures.append(f"no tested snippet in {', '.join(missing)}")
    failures += run_all(runner, snippets)
    for f in failures:
        print(f"readme: FAILED: {f}", file=sys.stderr)
    if failures:
        return 1
    print(f"readme: {len(snippets)} snippets ran ({', '.join(sorted({s.lang for s in snippets}))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
