"""The C capture demo never deletes a folder it did not make (issue 8, finding 6).

`capture_demo DIR` used to delete DIR recursively before writing: `capture_demo ~` would have wiped
a home folder. It now replaces DIR only when DIR is empty or holds the demo's marker file.
"""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DEMO = REPO / ".build-dist" / "c" / "capture_demo"


@pytest.fixture(scope="module")
def demo():
    if not DEMO.exists():
        pytest.fail(f"{DEMO} is missing: `make test` builds the examples before pytest")
    return str(DEMO)


def run(demo, out):
    return subprocess.run([demo, str(out)], capture_output=True, text=True, timeout=300)


def test_refuses_a_folder_it_did_not_make(demo, tmp_path):
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "thesis.txt").write_text("years of work")
    (home / "notes.txt").write_text("keep")
    r = run(demo, home)
    assert r.returncode == 2 and "not an earlier demo output" in r.stderr
    assert (home / "docs" / "thesis.txt").read_text() == "years of work"
    assert sorted(p.name for p in home.iterdir()) == ["docs", "notes.txt"]


def test_refuses_a_file_and_a_link_to_a_folder(demo, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert run(demo, f).returncode == 2 and f.read_text() == "x"
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text("k")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert run(demo, link).returncode != 0
    assert (target / "keep.txt").read_text() == "k"


def test_uses_an_empty_folder_and_replaces_only_its_own_output(demo, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert run(demo, out).returncode == 0
    assert (out / ".capturekit-demo").is_file() and (out / "transforms.json").is_file()
    (out / "stale.txt").write_text("from the first run")
    r = run(demo, out)
    assert r.returncode == 0, r.stderr
    assert not (out / "stale.txt").exists() and (out / "transforms.json").is_file()
