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
