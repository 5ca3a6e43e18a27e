"""Status codes -> exceptions, messages, CK_MISS, box unchanged on error, thread-local messages."""

import ctypes
import math
import pickle
import threading

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi
from capturekit.errors import error_for_status

NAN, INF = math.nan, math.inf


def raises(cls, code, function):
    """pytest.raises for `cls`, then checks code, CK_E_* name and that the message names `function`."""

    class Checker:
        def __enter__(self):
            self.ctx = pytest.raises(cls)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            suppressed = self.ctx.__exit__(*exc)
            err = self.info.value
            assert err.code == code
            assert err.name == ck.errors.STATUS_NAMES[code]
            assert ck.status_string(code).startswith(err.name)
            assert err.message.startswith(function + ":"), err.message
            assert str(err) == f"{err.name}: {err.message}"
            return suppressed

    return Checker()


def test_error_classes_by_code():
    classes = {
        -1: ck.InvalidArgumentError, -2: ck.BufferTooSmallError, -3: ck.CaptureKitIOError, -4: ck.CorruptError,
        -5: ck.StateError, -6: ck.UnsupportedError, -7: ck.NotFoundError, -8: ck.NoMemoryError,
    }
    for code, cls in classes.items():
        err = error_for_status(code, "ck_x: detail")
        assert type(err) is cls and isinstance(err, ck.CaptureKitError)
        assert err.code == code and err.message == "ck_x: detail"
        assert err.name == ck.status_string(code).split(":")[0]
        assert cls.status == code
        copy = pickle.loads(pickle.dumps(err))
        assert type(copy) is cls and (copy.code, copy.name, copy.message) == (err.code, err.name, err.message)
    unknown = error_for_status(-42, "new")
    assert type(unknown) is ck.CaptureKitError and unknown.name == "CK_E_UNKNOWN"
    assert issubclass(ck.InvalidArgumentError, ValueError)


# -- CK_E_INVALID_ARGUMENT ---------------------------------------------------------------------


def test_invalid_nan_center():
    with raises(ck.InvalidArgumentError, -1, "ck_box_init") as info:
        ck.Box(center=(NAN, 0, 0), size=(1, 1, 1))
    assert "center" in info.value.message


def test_invalid_inf_yaw():
    with raises(ck.InvalidArgumentError, -1, "ck_box_init") as info:
        ck.Box(center=(0, 0, 0), size=(1, 1, 1), yaw=INF)
    assert "yaw" in info.value.message


@pytest.mark.parametrize("size", [(0, 1, 1), (1, -1, 1), (1, 1, 1e-3), (1, 1, 2000)])
def test_invalid_size(size):
    with raises(ck.InvalidArgumentError, -1, "ck_box_init"):
        ck.Box(center=(0, 0, 0), size=size)


def test_invalid_size_edit_leaves_box_unchanged(box):
    before = box.copy()
    with raises(ck.InvalidArgumentError, -1, "ck_box_set_size"):
        box.set_size((0.0, 1.0, 1.0))
    with raises(ck.InvalidArgumentError, -1, "ck_box_scale"):
        box.scale((1.0, 0.0, 1.0))
    with raises(ck.InvalidArgumentError, -1, "ck_box_extend_face"):
        box.extend_face(ck.Face.LEFT, -5.0)
    with raises(ck.InvalidArgumentError, -1, "ck_box_translate"):
        box.translate((NAN, 0, 0))
    with raises(ck.InvalidArgumentError, -1, "ck_box_rotate_degrees"):
        box.rotate_degrees(INF)
    assert box == before


@pytest.mark.parametrize("face", [6, -1, ck.Face.NONE, 1000])
def test_invalid_face(box, face):
    with raises(ck.InvalidArgumentError, -1, "ck_box_face"):
        box.face(face)
    with raises(ck.InvalidArgumentError, -1, "ck_box_extend_face"):
        box.extend_face(face, 0.1)


def test_invalid_pose(intrinsics):
    not_rigid = np.diag([2.0, 1.0, 1.0, 1.0])
    with raises(ck.InvalidArgumentError, -1, "ck_pose_inverse"):
        ck.pose_inverse(not_rigid)
    with raises(ck.InvalidArgumentError, -1, "ck_ray_from_pixel") as info:
        ck.ray_from_pixel(not_rigid, intrinsics, 1.0, 1.0)
    assert "camera_pose" in info.value.message
    with raises(ck.InvalidArgumentError, -1, "ck_mat4_multiply"):
        ck.mat4_multiply(np.full((4, 4), NAN), np.eye(4))
    with raises(ck.InvalidArgumentError, -1, "ck_pose_from_quat"):
        ck.pose_from_quat((0, 0, 0, 0), (0, 0, 0))


def test_invalid_intrinsics(box):
    with raises(ck.InvalidArgumentError, -1, "Intrinsics"):   # refused on construction
        ck.Intrinsics(fx=0.0, fy=100.0, cx=10.0, cy=10.0, width=20, height=20)
    with raises(ck.InvalidArgumentError, -1, "ck_intrinsics_scale"):
        ck.Intrinsics(fx=100.0, fy=100.0, cx=10.0, cy=10.0, width=20, height=20).scale(0, 10)


def test_invalid_ray():
    with raises(ck.InvalidArgumentError, -1, "ck_ray_floor"):
        ck.ray_floor(ck.Ray((0, 0, 0), (0, 0, 0)), -1.0)
    with raises(ck.InvalidArgumentError, -1, "ck_ray_plane"):
        ck.ray_plane(ck.Ray((0, 0, 0), (0, -1, 0)), (0, -1, 0), (0, 0, 0))


# -- CK_E_BUFFER_TOO_SMALL (only reachable through the raw function) ----------------------------


def test_buffer_too_small_through_raw_ffi(box, intrinsics):
    n = intrinsics.width * intrinsics.height
    faces = np.full(n - 1, 7, dtype=np.int32)
    distances = np.full(n - 1, 7.0, dtype=np.float32)
    count = np.zeros(1, dtype=np.uintp)
    with raises(ck.BufferTooSmallError, -2, "ck_ray_box_grid") as info:
        _ffi.lib.ck_ray_box_grid(faces, distances, n - 1, count, _ffi.mat4_from_array(np.eye(4)),
                                     intrinsics._to_c(), box._c)
    assert "capacity" in info.value.message
    assert count[0] == n  # the needed size is reported
    assert np.all(faces == 7) and np.all(distances == 7.0)  # nothing written
    # With enough room it succeeds and reports the same count.
    faces, distances = np.empty(n, np.int32), np.empty(n, np.float32)
    count[0] = 0
    assert _ffi.lib.ck_ray_box_grid(faces, distances, n, count, _ffi.mat4_from_array(np.eye(4)),
                                        intrinsics._to_c(), box._c) == 0
    assert count[0] == n


# -- CK_E_STATE --------------------------------------------------------------------------------


def test_state_extend_bottom_with_floor(box):
    before = box.copy()
    with raises(ck.StateError, -5, "ck_box_extend_face") as info:
        box.extend_face(ck.Face.BOTTOM, 0.1)
    assert "floor" in info.value.message
    assert box == before
    box.clear_floor()
    box.extend_face(ck.Face.BOTTOM, 0.1)  # fine without a floor


def test_state_place_on_floor_without_floor():
    box = ck.Box(center=(0, 0, 0), size=(1, 1, 1))
    with raises(ck.StateError, -5, "ck_box_place_on_floor"):
        box.place_on_floor(1.0, 2.0)


def test_state_place_at_pixel_without_floor(intrinsics):
    box = ck.Box(center=(0, 0, -3), size=(1, 1, 1))
    before = box.copy()
    with raises(ck.StateError, -5, "ck_box_place_at_pixel"):
        box.place_at_pixel(np.eye(4), intrinsics, 128.0, 150.0)
    assert box == before


# -- CK_E_NOT_FOUND ----------------------------------------------------------------------------


def test_not_found_no_points():
    with raises(ck.NotFoundError, -7, "ck_box_fit_points"):
        ck.Box.fit_points(np.empty((0, 3), dtype=np.float32))


def test_not_found_all_points_under_floor(rng):
    points = rng.uniform(-1, 1, size=(100, 3)).astype(np.float32)
    points[:, 1] = rng.uniform(-2.0, -0.995, size=100)  # below floor + margin (-1 + 0.01)
    with raises(ck.NotFoundError, -7, "ck_box_fit_points"):
        ck.Box.fit_points(points, floor=-1.0)


# -- CK_E_UNSUPPORTED (options from a "newer header") -------------------------------------------


class FitOptionsV2(ctypes.Structure):
    """ck_fit_options as a future header might extend it."""

    _fields_ = _ffi.ck_fit_options._fields_ + [("future_field", ctypes.c_uint32)]


def fit_with(options):
    box = _ffi.ck_box()
    points = np.array([[0, 0, 0], [1, 1, 1]], dtype=np.float32)
    ptr = ctypes.cast(ctypes.pointer(options), ctypes.POINTER(_ffi.ck_fit_options))
    return _ffi.lib.ck_box_fit_points(box, points, 2, ptr), box


def test_unsupported_larger_options_with_nonzero_extra():
    options = FitOptionsV2()
    _ffi.lib.ck_fit_options_init(ctypes.cast(ctypes.pointer(options), ctypes.POINTER(_ffi.ck_fit_options)))
    options.struct_size = ctypes.sizeof(FitOptionsV2)
    options.future_field = 1
    with raises(ck.UnsupportedError, -6, "ck_box_fit_points") as info:
        fit_with(options)
    assert "struct_size" in info.value.message
    # The same larger struct with its unknown bytes zero is accepted.
    options.future_field = 0
    status, box = fit_with(options)
    assert status == 0 and box.size.y == pytest.approx(1.0)  # the points span 1 m in height


def test_options_struct_size_too_small_is_invalid():
    options = FitOptionsV2()
    _ffi.lib.ck_fit_options_init(ctypes.cast(ctypes.pointer(options), ctypes.POINTER(_ffi.ck_fit_options)))
    assert options.struct_size == ctypes.sizeof(_ffi.ck_fit_options) == 20
    options.struct_size = 8
    with raises(ck.InvalidArgumentError, -1, "ck_box_fit_points"):
        fit_with(options)


# -- CK_MISS is not an error -------------------------------------------------------------------


def test_miss_returns_none(box):
    up = ck.Ray((0, 0, 0), (0, 1, 0))
    assert ck.ray_box(up, box) is None
    assert ck.ray_floor(up, -1.0) is None
    assert ck.ray_plane(up, (0, 0, -5), (0, 0, 1)) is None  # parallel
    assert ck.ray_box(ck.Ray((0, 0, 0), (0, 0, 1)), box) is None  # box behind the origin


def test_binding_checks_raise_builtin_errors(box):
    with pytest.raises(TypeError):
        box.set_yaw("1.0")
    with pytest.raises(TypeError):
        box.extend_face(1.5, 0.1)
    with pytest.raises(ValueError):
        box.extend_face(2**40, 0.1)  # would wrap in int32
    with pytest.raises(ValueError):
        box.translate((1, 2))
    with pytest.raises(TypeError):
        ck.ray_box(((0, 0, 0), (0, 0, 1)), box)
    with pytest.raises(TypeError):
        ck.ray_box(ck.Ray((0, 0, 0), (0, 0, 1)), "box")


# -- thread-local messages ---------------------------------------------------------------------


def test_error_messages_are_thread_local():
    n_threads, rounds = 6, 25
    barrier = threading.Barrier(n_threads)
    failures = []

    def worker(k):
        try:
            marker = -(k + 1) * 1.5  # a distinct invalid size per thread
            for _ in range(rounds):
                try:
                    ck.Box(center=(0, 0, 0), size=(1.0, marker, 1.0))
                except ck.InvalidArgumentError as err:
                    own = err.message
                else:
                    failures.append(f"thread {k}: no error")
                    return
                assert repr(marker) in own or f"{marker}" in own, own
                barrier.wait()  # every thread has now failed with its own message
                if ck.last_error_message() != own:
                    failures.append(f"thread {k} sees {ck.last_error_message()!r}, expected {own!r}")
                barrier.wait()
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"thread {k}: {exc!r}")
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not failures, failures[:5]


def test_fresh_thread_has_empty_message():
    seen = []
    t = threading.Thread(target=lambda: seen.append(ck.last_error_message()))
    t.start()
    t.join()
    assert seen == [""]


class _InterruptedArray(np.ndarray):
    """An array whose dtype lookup is where Ctrl-C lands while ndpointer converts it."""

    @property
    def dtype(self):
        raise KeyboardInterrupt


def test_ctrl_c_while_converting_an_argument_stays_keyboard_interrupt(box):
    out = np.zeros((8, 3), np.float32).view(_InterruptedArray)
    with pytest.raises(KeyboardInterrupt):
        _ffi.lib.ck_box_corners(out, ctypes.byref(box._c))
    # other conversion failures stay argument errors, and the call itself works
    with pytest.raises(ctypes.ArgumentError, match="argument 1"):
        _ffi.lib.ck_box_corners(np.zeros((8, 3), np.float64), ctypes.byref(box._c))
    corners = np.zeros((8, 3), np.float32)
    assert _ffi.lib.ck_box_corners(corners, ctypes.byref(box._c)) == 0
    assert np.allclose(corners, box.corners())
