#!/usr/bin/env python3
"""Header rules a script can check (issue 9), over include/capturekit/*.h:

- every function returning ck_status has a doc comment with an @return list;
- every ck_*_close / ck_*_free / ck_*_cancel says what it does with NULL;
- argument order: every output (a parameter named *_out, dst, *_dst, dst_capacity) comes before
  every input (capturekit.h, "Shape of every call");
- buffers: a dst_capacity is followed by `size_t *written_out`;
- handles: _close returns ck_status, _free returns void;
- enum constants start with CK_ + the type name without ck_ (and a trailing _code).

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


OUTPUT = re.compile(r"(_out|^dst|_dst|^dst_capacity)$")
ENUM = re.compile(r"typedef\s+enum\s+(ck_[a-z0-9_]+)\s*\{(.*?)\}\s*\1\s*;", re.S)


def parameters(args):
    """(name, type) of each parameter of a C parameter list."""
    out = []
    for p in args.split(","):
        p = p.strip()
        if not p or p == "void":
            continue
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        out.append((m.group(1) if m else p, p))
    return out


def order_problems(name, args):
    params = parameters(args)
    problems = []
    seen_input = None
    for pname, ptype in params:
        if OUTPUT.search(pname):
            if seen_input:
                problems.append(f"{name}: output `{pname}` comes after the input `{seen_input}` (outputs first)")
        else:
            seen_input = seen_input or pname
    names = [p for p, _ in params]
    if "dst_capacity" in names:
        i = names.index("dst_capacity")
        if i + 1 >= len(names) or names[i + 1] != "written_out" or "size_t" not in params[i + 1][1]:
            problems.append(f"{name}: dst_capacity is not followed by size_t *written_out (the buffer rule)")
    return problems


def enum_problems(text):
    problems = []
    for m in ENUM.finditer(text):
        tname, body = m.group(1), re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S)
        prefix = "CK_" + re.sub(r"_code$", "", tname[3:]).upper() + "_"
        for const in re.findall(r"\b(CK_[A-Z0-9_]+)\s*=", body):
            if not const.startswith(prefix):
                problems.append(f"{tname}: constant {const} does not start with {prefix}")
    return problems


def main(headers):
    problems = []
    for h in headers:
        text = h.read_text()
        problems += [f"{h.name}:{p}" for p in enum_problems(text)]
        for name, ret, doc, args in declarations(text):
            problems += [f"{h.name}:{p}" for p in order_problems(name, args)]
            if name.endswith("_close") and ret != "ck_status":
                problems.append(f"{h.name}:{name}: a _close returns ck_status")
            if name.endswith("_free") and name != "ck_free" and ret != "void":
                problems.append(f"{h.name}:{name}: a _free returns void")
            if ret.endswith("ck_status") and "@return" not in doc:
                problems.append(f"{h.name}:{name}: returns ck_status but its doc has no @return list")
            if re.search(r"_(close|free|cancel)$", name) and "NULL" not in doc:
                problems.append(f"{h.name}:{name}: the doc does not say what NULL does")
    for p in problems:
        print(p)
    print(f"check_docs: {len(problems)} problem(s) in {len(headers)} headers", file=sys.stderr)
    return 1 if problems else 0


SELF_TEST = """
typedef enum ck_speed_band { CK_BAND_SLOW = 0 } ck_speed_band;
typedef enum ck_event_code { CK_EVENT_A = 1 } ck_event_code;
/** x */
CK_API ck_status ck_thing_update(ck_thing *thing, ck_guidance *guidance_out);
/** @return CK_OK. */
CK_API ck_status ck_thing_read(void *dst, size_t dst_capacity, ck_thing *thing);
/** @return CK_OK. */
CK_API void ck_thing_close(ck_thing *thing);
"""


def self_test():
    """The checker finds what it must (a check that cannot fail is a defect)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        h = pathlib.Path(d) / "bad.h"
        h.write_text(SELF_TEST)
        problems = []
        for name, ret, doc, args in declarations(SELF_TEST):
            problems += order_problems(name, args)
            if "@return" not in doc and ret.endswith("ck_status"):
                problems.append(f"{name}: no @return")
        problems += enum_problems(SELF_TEST)
        expect = ["output `guidance_out` comes after", "no @return", "not followed by size_t *written_out",
                  "CK_BAND_SLOW does not start with CK_SPEED_BAND_"]
        missing = [e for e in expect if not any(e in p for p in problems)]
        assert not missing, f"check_docs self-test: not detected: {missing}"
        assert not any("CK_EVENT_A" in p for p in problems), "ck_event_code constants are CK_EVENT_*"
        main_ret = main([h])
        assert main_ret == 1
    print("check_docs: self-test passed", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    paths = [pathlib.Path(a) for a in sys.argv[1:]] or sorted((ROOT / "include" / "capturekit").glob("*.h"))
    sys.exit(main(paths))
