"""NumPy inputs: dtype, shape and contiguity are checked (or documented conversions done) before
the library is called; outputs are allocated by the binding."""

import ctypes

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi

POSE = np.eye(4)


def pixels_grid(intrinsics, step=16):
    us, vs = np.meshgrid(np.arange(0.5, intrinsics.width, step), np.arange(0.5, intrinsics.height, step))
    return np.column_stack([us.ravel(), vs.ravel()]).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool, object, np.complex64])
def test_pixels_non_float_dtype_rejected(dtype, intrinsics, box, monkeypatch):
    monkeypatch.setattr(_ffi.lib, "ck_ray_box_pixels", lambda *a: pytest.fail("library called"))
    with pytest.raises(TypeError, match="floating-point"):
        ck.raycast_box_pixels(np.zeros((4, 2), dtype=dtype), POSE, intrinsics, box)


def test_pixels_list_of_ints_rejected(intrinsics, box):
    with pytest.raises(TypeError):
        ck.raycast_box_pixels([[1, 2], [3, 4]], POSE, intrinsics, box)


@pytest.mark.parametrize("shape", [(4,), (4, 3), (2, 4), (4, 2, 1), (2,), ()])
def test_pixels_wrong_shape_rejected(shape, intrinsics, box, monkeypatch):
    monkeypatch.setattr(_ffi.lib, "ck_ray_box_pixels", lambda *a: pytest.fail("library called"))
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        ck.raycast_box_pixels(np.zeros(shape, dtype=np.float32), POSE, intrinsics, box)


def test_pixels_float_inputs_are_converted(intrinsics, box):
    px = pixels_grid(intrinsics)
    faces, distances = ck.raycast_box_pixels(px, POSE, intrinsics, box)
    assert faces.dtype == np.int32 and distances.dtype == np.float32
    assert faces.shape == distances.shape == (len(px),)
    assert (faces >= 0).any() and (faces == ck.Face.NONE).any()
    # float64, a list of floats, a Fortran-ordered copy and a strided view hold the same values
    # and give the same answers.
    for variant in (px.astype(np.float64), px.tolist(), np.asfortranarray(px), np.repeat(px, 2, axis=0)[::2]):
        f2, d2 = ck.raycast_box_pixels(variant, POSE, intrinsics, box)
        assert np.array_equal(f2, faces) and np.array_equal(d2, distances)
    strided = np.zeros((len(px), 4), dtype=np.float32)
    strided[:, ::2] = px
    assert not strided[:, ::2].flags.c_contiguous
    f3, d3 = ck.raycast_box_pixels(strided[:, ::2], POSE, intrinsics, box)
    assert np.array_equal(f3, faces) and np.array_equal(d3, distances)


def test_pixels_empty_and_non_finite(intrinsics, box):
    faces, distances = ck.raycast_box_pixels(np.empty((0, 2), np.float32), POSE, intrinsics, box)
    assert faces.shape == distances.shape == (0,)
    faces, distances = ck.raycast_box_pixels(np.array([[np.nan, 1.0], [np.inf, 2.0]]), POSE, intrinsics, box)
    assert list(faces) == [-1, -1] and np.all(np.isinf(distances))


def test_raw_ffi_rejects_wrong_arrays(intrinsics, box):
    """The ndpointer declarations refuse what the wrappers would otherwise convert."""
    px = pixels_grid(intrinsics)
    n = len(px)
    pose, k = _ffi.mat4_from_array(POSE), intrinsics._to_c()
    faces, distances = np.empty(n, np.int32), np.empty(n, np.float32)
    call = _ffi.lib.ck_ray_box_pixels
    assert call(faces, distances, px, n, pose, k, box._c) == 0
    with pytest.raises(ctypes.ArgumentError):  # float64 pixels
        call(faces, distances, px.astype(np.float64), n, pose, k, box._c)
    wide = np.zeros((n, 4), np.float32)
    with pytest.raises(ctypes.ArgumentError):  # non-contiguous pixels
        call(faces, distances, wide[:, ::2], n, pose, k, box._c)
    with pytest.raises(ctypes.ArgumentError):  # float32 faces
        call(distances, distances, px, n, pose, k, box._c)
    with pytest.raises(ctypes.ArgumentError):  # read-only output
        ro = np.empty(n, np.float32)
        ro.flags.writeable = False
        call(faces, ro, px, n, pose, k, box._c)
    with pytest.raises(ctypes.ArgumentError):  # non-contiguous output
        call(np.empty(2 * n, np.int32)[::2], distances, px, n, pose, k, box._c)
    with pytest.raises(ctypes.ArgumentError):  # a list instead of an array
        call(faces, distances, px.tolist(), n, pose, k, box._c)


@pytest.mark.parametrize("dtype", [np.int32, object, bool])
def test_fit_points_non_float_rejected(dtype):
    with pytest.raises(TypeError):
        ck.Box.fit_points(np.ones((10, 3), dtype=dtype))


@pytest.mark.parametrize("shape", [(10,), (10, 2), (3, 10), (10, 3, 1)])
def test_fit_points_wrong_shape_rejected(shape):
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        ck.Box.fit_points(np.ones(shape, dtype=np.float32))


def test_fit_points_layouts_agree(rng):
    pts = rng.uniform(-1, 1, size=(200, 3)).astype(np.float32)
    ref = ck.Box.fit_points(pts)
    assert ck.Box.fit_points(pts.astype(np.float64)) == ref
    assert ck.Box.fit_points(np.asfortranarray(pts)) == ref
    assert ck.Box.fit_points(np.repeat(pts, 2, axis=0)[::2]) == ref


def test_matrix_and_vector_arguments():
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        ck.pose_inverse(np.eye(3))
    with pytest.raises(ValueError):
        ck.pose_inverse(np.eye(4).ravel())
    with pytest.raises(TypeError):
        ck.pose_inverse(np.array([["a"] * 4] * 4))
    with pytest.raises(TypeError):
        ck.pose_inverse(np.eye(4, dtype=complex))
    # Any real dtype and layout works for a single matrix (converted to float32).
    M = ck.pose_from_quat((0.1, 0.2, 0.3, 0.9), (1, 2, 3))
    for variant in (M.astype(np.float64), np.asfortranarray(M), M.tolist(), M.T.copy().T):
        assert np.allclose(ck.pose_inverse(variant) @ M, np.eye(4), atol=1e-5)
    assert np.array_equal(ck.pose_inverse(np.eye(4, dtype=np.int64)), np.eye(4))
    with pytest.raises(ValueError):
        ck.pose_from_quat((0, 0, 1), (0, 0, 0))
    with pytest.raises(TypeError):
        ck.Box(center=("a", "b", "c"), size=(1, 1, 1))


def test_intrinsics_types():
    with pytest.raises(TypeError):
        ck.Intrinsics(100.0, 100.0, 50.0, 50.0, 100.5, 100)
    with pytest.raises(ValueError):
        ck.Intrinsics(100.0, 100.0, 50.0, 50.0, -1, 100)
    with pytest.raises(ValueError):
        ck.Intrinsics(100.0, 100.0, 50.0, 50.0, 2**32, 100)
    with pytest.raises(TypeError):
        ck.Intrinsics("100", 100.0, 50.0, 50.0, 100, 100)
    k = ck.Intrinsics(np.float32(100), 100, 50, 50, np.int64(100), 100)
    assert isinstance(k.fx, float) and isinstance(k.width, int)
    assert hash(k) == hash(ck.Intrinsics(100.0, 100.0, 50.0, 50.0, 100, 100))


def test_outputs_are_fresh_arrays(box):
    a, b = box.corners(), box.corners()
    assert a.dtype == np.float32 and a.shape == (8, 3) and a.flags.c_contiguous
    a[:] = 0
    assert not np.array_equal(a, b)
    c = box.center
    c[:] = 99
    assert box.center[0] != 99
    ray = ck.Ray((0, 0, 0), (0, 0, -1))
    with pytest.raises(ValueError):
        ray.origin[0] = 1.0  # read-only
