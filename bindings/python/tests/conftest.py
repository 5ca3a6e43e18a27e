"""Shared fixtures. Run with the library built: `make test-python`."""

import numpy as np
import pytest

import capturekit as ck


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture
def intrinsics():
    """A 256 x 192 depth-sized camera."""
    return ck.Intrinsics(fx=210.0, fy=210.0, cx=128.0, cy=96.0, width=256, height=192)


@pytest.fixture
def box():
    """A yawed box standing on a floor, 2.5 m in front of the origin."""
    return ck.Box(center=(0.2, 0.0, -2.5), size=(0.9, 0.7, 1.3), yaw=np.radians(25), floor=-0.95)


# Inputs other suites make. Each is made here, or taken from where `make test` put it; a missing
# prerequisite fails the tests that need it (never a silent skip).
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def c_demo_dataset(tmp_path_factory):
    """The C capture demo's dataset: $CAPTUREKIT_DEMO_DATASET (set by `make test-python`), or the
    built demo (.build-dist/c/capture_demo) run into a temporary folder."""
    given = os.environ.get("CAPTUREKIT_DEMO_DATASET")
    if given:
        root = pathlib.Path(given)
        if not (root / "transforms.json").exists():
            pytest.fail(f"CAPTUREKIT_DEMO_DATASET={given} holds no finished demo dataset")
        return root
    demo = REPO / ".build-dist" / "c" / "capture_demo"
    if not demo.exists():
        pytest.fail(f"{demo} is missing: build it with `make examples` (make test does)")
    root = tmp_path_factory.mktemp("cdemo") / "dataset"
    subprocess.run([str(demo), str(root)], check=True, stdout=subprocess.DEVNULL)
    return root


@pytest.fixture(scope="session")
def manifest_samples():
    """The manifest and ZIP writers' sample outputs, written by the Swift test SampleOutputTests
    (`swift test`, which `make test` runs before pytest) into .build-fixtures/manifests/."""
    folder = REPO / ".build-fixtures" / "manifests"
    if not (folder / "expected.json").exists():
        pytest.fail(f"{folder} is missing: run `swift test --filter SampleOutputTests` (make test does)")
    return folder
