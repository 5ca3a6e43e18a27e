#!/usr/bin/env python3
"""The repository documents itself: every reference in its text files points inside it (issue 21).

Scans the repository's text files (C/C++ headers and sources, Swift, Python, shell, Markdown,
Makefile, CMake and packaging templates) for

- references to Markdown files (`docs/FORMATS.md`, `[text](RELIABILITY.md#campaign-issue-8)`):
  the file must exist, relative to the referring file's folder or to the repository root (a bare
  `FORMATS.md` therefore does not resolve to `docs/FORMATS.md`: write the path);
- section anchors on them: `#anchor` must be the GitHub slug of a heading of that file (or an
  explicit `<a id="anchor">`); `§N` / `section N` / `rule N` after the reference must name a
  numbered heading ("## 3. …") or a numbered list item ("3. …") of that file;
- guide names cited without a file (`STYLE rule 14`, `DESIGN §2`): the same, as `<NAME>.md`;
- absolute paths outside the repository (`/work/...`, `../shared/...`): never allowed.

References inside URLs (`https://...`) and in `owner/repo:path` form (another project's file)
are not checked. Prints "file:line: problem" for each dangling reference; exits 1 if any.
`--self-test` plants good and dangling references in a scratch tree and checks the checker.
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]

TEXT_SUFFIXES = {".h", ".hpp", ".c", ".cpp", ".swift", ".py", ".md", ".sh", ".txt", ".toml", ".in", ".cmake", ".cfg",
                 ".modulemap", ".exports"}
TEXT_NAMES = {"Makefile", "Package.swift", "bootstrap"}
SKIP_DIRS = {".git", "corpus", "crashers", "__pycache__", "node_modules"}
# Tests/golden and fuzz data are binary; a listed file bigger than this is not a source file.
MAX_BYTES = 2 << 20

URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# A Markdown file reference, with an optional #anchor, then an optional §N / section N / rule N.
MD_REF = re.compile(
    r"(?<![\w/.:-])((?:\.{1,2}/)?(?:[\w.-]+/)*[\w-]+\.md)(#[\w-]+)?"
    r"(?:\)?[ \t]*(?:§[ \t]*|sections?[ \t]+|rules?[ \t]+)(\d+)(?:[ \t]*[–-][ \t]*(\d+))?)?")
# A guide cited by its bare name: `STYLE rule 14`, `DESIGN §2`, `FORMATS section 3`.
BARE_GUIDE = re.compile(r"(?<![\w/.-])([A-Z][A-Z_]{2,})[ \t]+(?:§[ \t]*|sections?[ \t]+|rules?[ \t]+)(\d+)"
                        r"|(?<![\w/.-])(FORMATS|DESIGN|STYLE|PERFORMANCE)[ \t]+(\d+)")
# An absolute path outside the repository (a path token starting /work/, or ../shared).
OUTSIDE = re.compile(r"(?:(?<![\w.$}\])/-])/work/[\w.+-]+|(?:\.\./)+shared\b)")
# Names cited by section that are standards, not files of the repository.
STANDARDS = {"RFC", "ISO", "IEC", "IEEE", "PNG", "JSON", "ZIP", "APPNOTE", "SE", "POSIX"}
# The checker's own file: its docstring and self-test are examples of what it flags.
SELF = pathlib.Path("scripts/check_refs.py")
# Another project's file: `owner/repo:path/file.md`.
FOREIGN = re.compile(r"[\w.-]+/[\w.-]+:(?:[\w.-]+/)*[\w.-]+\.md")


def text_files(root):
    """The repository's text files: tracked and untracked-but-not-ignored (git), else a walk."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(".build")]
            names += [os.path.relpath(os.path.join(d, f), root) for f in files]
    for n in sorted(set(names)):
        p = pathlib.Path(n)
        if any(part in SKIP_DIRS or part.startswith(".build") for part in p.parts[:-1]):
            continue
        if p == SELF or (p.suffix not in TEXT_SUFFIXES and p.name not in TEXT_NAMES):
            continue
        full = root / p
        if full.is_file() and full.stat().st_size <= MAX_BYTES:
            yield p


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"`|\*\*|\*|_(?=\W)|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h, flags=re.UNICODE)
    return h.replace(" ", "-")


class Doc:
    """The anchors and numbered sections of one Markdown file."""

    def __init__(self, text):
        self.anchors, self.numbers = set(), set()
        seen = {}
        fence = False
        for line in text.splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            m = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                self.anchors.add(s if n == 0 else f"{s}-{n}")
                num = re.match(r"(?:§\s*)?(\d+)[.)\s]", m.group(2) + " ")
                if num:
                    self.numbers.add(int(num.group(1)))
            item = re.match(r"\s{0,3}(\d+)[.)]\s", line)
            if item:
                self.numbers.add(int(item.group(1)))
            for a in re.findall(r"<a\s+(?:id|name)=\"([\w-]+)\"", line):
                self.anchors.add(a)


def resolve(root, referrer, target):
    """The file `target` names from `referrer` (its folder first, then the root), or None."""
    for base in (root / referrer.parent, root):
        p = (base / target).resolve()
        try:
            p.relative_to(root.resolve())
        except ValueError:
            continue
        if p.is_file():
            return p
    return None


def check(root, files=None):
    root = pathlib.Path(root)
    problems, docs = [], {}

    def doc(path):
        if path not in docs:
            docs[path] = Doc(path.read_text(errors="replace"))
        return docs[path]

    def check_ref(where, target, anchor, first, last):
        p = resolve(root, where[0], target)
        if p is None:
            problems.append(f"{where[0]}:{where[1]}: {target} is not a file in the repository"
                            + (" (write its path, e.g. docs/" + pathlib.Path(target).name + ")"
                               if (root / "docs" / pathlib.Path(target).name).is_file() else ""))
            return
        if p.suffix != ".md":
            return
        d = doc(p)
        if anchor and anchor[1:] not in d.anchors:
            problems.append(f"{where[0]}:{where[1]}: {target}{anchor}: no such heading in {p.relative_to(root.resolve())}")
        if first:
            for n in range(int(first), int(last or first) + 1):
                if n not in d.numbers:
                    problems.append(f"{where[0]}:{where[1]}: {target} §{n}: {p.relative_to(root.resolve())} has no section or rule {n}")

    for rel in (files if files is not None else text_files(root)):
        try:
            text = (root / rel).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for i, line in enumerate(text.splitlines(), 1):
            where = (rel, i)
            clean = FOREIGN.sub(" ", URL.sub(" ", line))
            for m in MD_REF.finditer(clean):
                check_ref(where, m.group(1), m.group(2), m.group(3), m.group(4))
            for m in BARE_GUIDE.finditer(clean):
                name, number = m.group(1) or m.group(3), m.group(2) or m.group(4)
                if name in STANDARDS:
                    continue  # standards cited by section (RFC 8259 §6), not files
                check_ref(where, name + ".md", None, number, None)
            for m in OUTSIDE.finditer(URL.sub(" ", line)):
                problems.append(f"{where[0]}:{where[1]}: {m.group(0)} is a path outside the repository")
    return problems


def main():
    problems = check(ROOT)
    for p in problems:
        print(p)
    print(f"check_refs: {len(problems)} dangling reference(s)", file=sys.stderr)
    return 1 if problems else 0


SELF_TEST_FILES = {
    "docs/GUIDE.md": "# Guide\n\n## 1. Streams\n\n## Box and faces\n\n1. first rule\n2. second rule\n",
    "README.md": "See [the guide](docs/GUIDE.md#box-and-faces) and docs/GUIDE.md §1, docs/GUIDE.md rule 2.\n"
                 "RFC 8259 §6 is a standard. https://example.org/x/FORMATS.md is a URL.\n"
                 "facebook/zstd:doc/zstd_compression_format.md is another project's file.\n",
    "src/a.swift": "// docs/GUIDE.md §1–2 and ../docs/GUIDE.md and $B/work/x are fine.\n"
                   "// bad1: FORMATS.md §1\n"
                   "// bad2: docs/GUIDE.md#no-such-heading\n"
                   "// bad3: docs/GUIDE.md §7\n"
                   "// bad4: STYLE rule 14\n"
                   "// bad5: /work/shared/data/x.json\n"
                   "// bad6: ../shared/guide\n"
                   "// bad7: GUIDE.md (bare name of a docs/ file)\n"
                   "// bad8: (STYLE 47)\n",
}


# The message for a bare guide name, built so that this file itself cites no missing document.
_BARE_STYLE = "STYLE" + ".md is not a file"


def self_test():
    """The checker finds each planted dangling reference and nothing else (a check that cannot fail
    is a defect)."""
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for name, text in SELF_TEST_FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        problems = check(root, [pathlib.Path(n) for n in SELF_TEST_FILES])
        lines = sorted({int(p.split(":")[1]) for p in problems if p.startswith("src/a.swift:")})
        expect = {2: "FORMATS.md is not a file", 3: "no such heading", 4: "has no section or rule 7",
                  5: _BARE_STYLE, 6: "/work/shared", 7: "../shared", 8: "write its path, e.g. docs/GUIDE.md",
                  9: _BARE_STYLE}
        missing = [f"line {n}: {e}" for n, e in expect.items() if not any(p.startswith(f"src/a.swift:{n}:") and e in p for p in problems)]
        extra = [p for p in problems if not p.startswith("src/a.swift:") or int(p.split(":")[1]) not in expect]
        assert not missing, f"check_refs self-test: not detected: {missing}"
        assert not extra, f"check_refs self-test: false alarms: {extra}"
        assert lines == sorted(expect), lines
    print("check_refs: self-test passed", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    sys.exit(main())
