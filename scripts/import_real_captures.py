#!/usr/bin/env python3
"""Imports the HMC object-capture app's other real captures for the guidance tests (issue 23).

The repository commits one of that app's captures (Tests/CaptureKitCoreTests/Fixtures/
hmc-clinic-chair/). Its six others are third-party recordings the project does not redistribute;
`bindings/python/tests/test_guidance_real.py` replays them too where they were imported, from
github.com/JoshuaG-K/wayfair23-serverV2 (ISC License) at the commit below, into
``.build-dist/real-captures/<name>/{transforms.json,boundingbox.json}`` (or $CK_REAL_CAPTURES):

    python3 scripts/import_real_captures.py <git dir or URL of JoshuaG-K/wayfair23-serverV2>

The files are read with ``git show <commit>:<path>`` (a bare mirror works; a URL is cloned into
the cache first) and written unchanged. Upstream's Clinic_Chair1 and Purple_Chair1..3 are
byte-identical copies of Clinic_Chair and Purple_Chair, so they are left out.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = pathlib.Path(os.environ.get("CK_REAL_CAPTURES", ROOT / ".build-dist" / "real-captures"))
REPO = "https://github.com/JoshuaG-K/wayfair23-serverV2"
COMMIT = "ee6d3cc4ec1547c2600258e59ffeaba31c98aea2"
_POSES, _BOXES, _UPLOADS = "public/app_camera_transforms_folder", "public/boundingbox_folder", "public/tmp_uploads"
#: name here: (transforms.json upstream, boundingbox.json upstream)
CAPTURES = {
    "Chair_with_wipe": (f"{_POSES}/Chair_with_wipe/app_camera_poses.json", f"{_BOXES}/Chair_with_wipe/boundingbox.json"),
    "Chair_with_wipe2": (f"{_POSES}/Chair_with_wipe2/app_camera_poses.json", f"{_BOXES}/Chair_with_wipe2/boundingbox.json"),
    "Hand_sanitizer": (f"{_POSES}/Hand sanitizer/app_camera_poses.json", f"{_BOXES}/Hand sanitizer/boundingbox.json"),
    "Purple_Chair": (f"{_POSES}/Purple_Chair/app_camera_poses.json", f"{_BOXES}/Purple_Chair/boundingbox.json"),
    "Upload_240222111326": (f"{_UPLOADS}/240222111326/transforms.json", f"{_UPLOADS}/240222111326/boundingbox.json"),
    "Upload_data": (f"{_UPLOADS}/data/transforms.json", f"{_UPLOADS}/data/boundingbox.json"),
}


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source = argv[1]
    gitdir = source
    if "://" in source:
        gitdir = str(CACHE / "git" / "wayfair23-serverV2.git")
        if not pathlib.Path(gitdir).exists():
            subprocess.run(["git", "clone", "--bare", "--quiet", source, gitdir], check=True)
    found = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "-e", f"{COMMIT}^{{commit}}"], capture_output=True)
    if found.returncode != 0:
        print(f"import_real_captures: {gitdir} does not hold commit {COMMIT} of {REPO}", file=sys.stderr)
        return 1
    for name, (poses, box) in CAPTURES.items():
        blobs = [subprocess.run(["git", "--git-dir", gitdir, "show", f"{COMMIT}:{path}"], capture_output=True, check=True).stdout
                 for path in (poses, box)]
        folder = CACHE / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, blob in zip(("transforms.json", "boundingbox.json"), blobs):
            tmp = folder / (file + ".tmp")
            tmp.write_bytes(blob)
            tmp.replace(folder / file)
        print(f"{name}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
