#!/usr/bin/env python3
"""Header rules a script can check (issue 9), over include/capturekit/*.h:

- every function returning ck_status has a doc comment with an @return list;
- every ck_*_close / ck_*_free / ck_*_cancel says what it does with NULL.

Prints each violation as "header:function: problem" and exits 1 if there is any.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DECL = re.compile(r"(/\*\*(?:(?!\*/).)*\*/)?\s*CK_API\s+([^;(]*?)\b(ck_[A-Za-z0-9_]+)\s*\(([^;]*?)\)\s*;", re.S)


def declarations(text):
    for m in DECL.finditer(text):
        doc, ret, name, args = m.group(1) or "", " ".join(m.group(2).split()), m.group(3), " ".join(m.group(4).split())
        yield name, ret, doc, args


def main(headers):
    problems = []
    for h in headers:
        for name, ret, doc, args in declarations(h.read_text()):
            if ret.endswith("ck_status") and "@return" not in doc:
                problems.append(f"{h.name}:{name}: returns ck_status but its doc has no @return list")
            if re.search(r"_(close|free|cancel)$", name) and "NULL" not in doc:
                problems.append(f"{h.name}:{name}: the doc does not say what NULL does")
    for p in problems:
        print(p)
    print(f"check_docs: {len(problems)} problem(s) in {len(headers)} headers", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    paths = [pathlib.Path(a) for a in sys.argv[1:]] or sorted((ROOT / "include" / "capturekit").glob("*.h"))
    sys.exit(main(paths))
