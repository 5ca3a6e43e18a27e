#!/usr/bin/env python3
"""Every status a header promises is produced by some test (issue 9).

Reads the @return list of every status-returning function in include/capturekit/*.h ("@return as
ck_x" and "as ck_x, plus CK_E_Y" included) and the status trace the test suites write (the library
appends each distinct "function status" pair to $CK_TRACE_STATUS), and lists every promised pair
no test produced. Exit 1 if any is missing and not in the allow-list below (each entry says why a
test cannot produce it through the C API).

usage: check_status_coverage.py [--report-only] TRACE_FILE [TRACE_FILE...]
(--report-only: print the gaps and the count, exit 0; `make test` runs the strict check)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_docs import declarations  # noqa: E402

STATUS = {"CK_OK": 0, "CK_MISS": 1, "CK_END": 2, "CK_E_INVALID_ARGUMENT": -1, "CK_E_BUFFER_TOO_SMALL": -2,
          "CK_E_IO": -3, "CK_E_CORRUPT": -4, "CK_E_STATE": -5, "CK_E_UNSUPPORTED": -6, "CK_E_NOT_FOUND": -7,
          "CK_E_NO_MEMORY": -8, "CK_E_EXISTS": -9, "CK_E_BUSY": -10}

# Promised but not producible by a test through the C API, with the reason.
ALLOWED = {
    ("ck_depth_codec_create", "CK_E_NO_MEMORY"): "zstd context allocation failing needs a failing malloc",
    ("ck_png_encode", "CK_E_NO_MEMORY"): "zlib deflateInit failing needs a failing malloc",
    ("ck_jpeg_encode", "CK_E_NO_MEMORY"): "tjInitCompress / tjCompress2 failing needs a failing malloc",
}


def promised(headers):
    docs = {}
    for h in headers:
        for name, ret, doc, _ in declarations(h.read_text()):
            if ret.endswith("ck_status"):
                docs[name] = doc
    result = {}

    def resolve(name, depth=0):
        if name in result:
            return result[name]
        doc = docs.get(name, "")
        tail = doc.split("@return", 1)[1] if "@return" in doc else ""
        codes = set(re.findall(r"\b(CK_OK|CK_MISS|CK_END|CK_E_[A-Z_]+)\b", tail))
        if depth < 4:
            for ref in re.findall(r"\bas (ck_[a-z0-9_]+)(?:\s+and\s+(ck_[a-z0-9_]+))?", tail):
                for r in ref:
                    if r and r in docs:
                        codes |= resolve(r, depth + 1)
        result[name] = {c for c in codes if c in STATUS}
        return result[name]

    for name in docs:
        resolve(name)
    return result


def main(traces, report_only=False):
    produced = set()
    for t in traces:
        p = pathlib.Path(t)
        if p.exists():
            for line in p.read_text().split("\n"):
                parts = line.split()
                if len(parts) == 2:
                    produced.add((parts[0], int(parts[1])))
    if not produced:
        print("check_status_coverage: no trace lines (run the suites with CK_TRACE_STATUS set)", file=sys.stderr)
        return 1
    promises = promised(sorted((ROOT / "include" / "capturekit").glob("*.h")))
    missing, allowed, total = [], [], 0
    for name in sorted(promises):
        for code in sorted(promises[name], key=lambda c: STATUS[c]):
            total += 1
            if (name, STATUS[code]) in produced:
                continue
            (allowed if (name, code) in ALLOWED else missing).append(f"{name} {code}")
    undocumented = sorted(f"{n} {s}" for n, s in produced
                          if n in promises and s not in {STATUS[c] for c in promises[n]} and s != 0)
    for m in missing:
        print(f"not produced by any test: {m}")
    for u in undocumented:
        print(f"produced but not in the @return list: {u}")
    print(f"check_status_coverage: {total - len(missing) - len(allowed)}/{total} promised statuses produced, "
          f"{len(allowed)} allowed ({', '.join(allowed) or 'none'}), {len(missing)} missing, "
          f"{len(undocumented)} undocumented", file=sys.stderr)
    if report_only:
        return 0
    return 1 if missing or undocumented else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    report = "--report-only" in args
    sys.exit(main([a for a in args if a != "--report-only"], report_only=report))
