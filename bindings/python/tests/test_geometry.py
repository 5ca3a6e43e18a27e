"""Poses, quaternions, Euler angles, OpenCV conversion and intrinsics against NumPy references."""

import math

import numpy as np
import pytest

import capturekit as ck
from reference import look_at, pose, quat_to_matrix, random_rotation, rot_x, rot_y, rot_z


def random_poses(rng, n):
    for _ in range(n):
        yield pose(random_rotation(rng), rng.uniform(-20, 20, size=3))


def test_pose_from_quat_matches_numpy(rng):
    for _ in range(200):
        q = rng.normal(size=4)
        t = rng.uniform(-10, 10, size=3)
        M = ck.pose_from_quat(q, t)
        assert M.dtype == np.float32 and M.shape == (4, 4)
        assert np.allclose(M, pose(quat_to_matrix(q), t), atol=2e-6 * (1 + np.abs(t).max()))


def test_pose_from_quat_orientation():
    # A quarter turn about +y maps +x to -z (right-handed), translation in the last column.
    s = math.sqrt(0.5)
    M = ck.pose_from_quat((0, s, 0, s), (1, 2, 3))
    assert np.allclose(M @ [1, 0, 0, 1], [1, 2, 2, 1], atol=1e-6)
    assert np.allclose(M[:3, 3], [1, 2, 3]) and np.allclose(M[3], [0, 0, 0, 1])


def test_quaternion_round_trip(rng):
    for _ in range(200):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        t = rng.uniform(-5, 5, size=3)
        q2, t2 = ck.pose_to_quat(ck.pose_from_quat(q, t))
        assert q2.dtype == np.float32 and q2.shape == (4,) and t2.shape == (3,)
        assert q2[3] >= 0
        assert abs(np.linalg.norm(q2) - 1) < 1e-6
        assert np.allclose(q2, q * np.sign(q[3]), atol=2e-6)  # q and -q are the same rotation
        assert np.allclose(t2, t, atol=1e-5)
        M = pose(quat_to_matrix(q), t)
        q3, _ = ck.pose_to_quat(M)
        assert np.allclose(quat_to_matrix(q3), M[:3, :3], atol=2e-6)


def test_pose_inverse_times_pose_is_identity(rng):
    for M in random_poses(rng, 200):
        inv = ck.pose_inverse(M)
        assert np.allclose(inv @ M, np.eye(4), atol=2e-5)
        assert np.allclose(M @ inv, np.eye(4), atol=2e-5)
        assert np.allclose(inv[:3, :3], M[:3, :3].T, atol=1e-6)
        assert np.allclose(inv[:3, 3], -M[:3, :3].T @ M[:3, 3], atol=2e-5)


def test_mat4_multiply_and_transpose(rng):
    for _ in range(50):
        a, b = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        assert np.allclose(ck.mat4_multiply(a, b), a32.astype(np.float64) @ b32, atol=1e-5)
        assert np.array_equal(ck.mat4_transpose(a), a32.T)
    P = next(random_poses(rng, 1))
    assert np.allclose(ck.mat4_multiply(ck.pose_inverse(P), P), np.eye(4), atol=2e-5)
    with pytest.raises(ck.InvalidArgumentError, match="ck_mat4_multiply"):
        ck.mat4_multiply(np.full((4, 4), 1e30), np.full((4, 4), 1e30))  # the product overflows


def test_mat4_float32_paths_match_the_other_layouts(rng):
    """float32 C-contiguous matrices take a path without transposing copies (the library is handed
    the transposed problem); its results must be bit-identical to the same matrices in another
    layout (Fortran order, float64), and its errors must name the argument at fault."""
    for _ in range(200):
        a = (rng.normal(size=(4, 4)) * 10.0 ** rng.integers(-3, 4)).astype(np.float32)
        b = rng.normal(size=(4, 4)).astype(np.float32)
        fast = ck.mat4_multiply(a, b)
        other = ck.mat4_multiply(np.asfortranarray(a), b.astype(np.float64))
        assert fast.tobytes() == other.tobytes()
        assert fast.flags.c_contiguous and fast.flags.writeable and fast.dtype == np.float32
        assert ck.mat4_transpose(a).tobytes() == np.ascontiguousarray(a.T).tobytes()
        assert ck.mat4_transpose(a).tobytes() == ck.mat4_transpose(np.asfortranarray(a)).tobytes()
    bad = np.full((4, 4), np.nan, np.float32)
    with pytest.raises(ck.InvalidArgumentError, match="ck_mat4_multiply: b "):
        ck.mat4_multiply(np.eye(4, dtype=np.float32), bad)
    with pytest.raises(ck.InvalidArgumentError, match="ck_mat4_multiply: a "):
        ck.mat4_multiply(bad, np.eye(4, dtype=np.float32))
    with pytest.raises(ck.InvalidArgumentError, match="ck_mat4_transpose: m "):
        ck.mat4_transpose(bad)


def test_yaw_pitch_roll_recovers_angles(rng):
    for _ in range(300):
        yaw, roll = rng.uniform(-math.pi + 1e-3, math.pi - 1e-3, size=2)
        pitch = rng.uniform(-1.45, 1.45)
        R = rot_y(yaw) @ rot_x(pitch) @ rot_z(roll)
        got = ck.yaw_pitch_roll(pose(R, rng.uniform(-3, 3, size=3)))
        assert all(isinstance(a, float) for a in got)
        assert np.allclose(got, (yaw, pitch, roll), atol=5e-5), (yaw, pitch, roll, got)


def test_yaw_pitch_roll_meaning():
    # Turning left (counter-clockwise from above) is positive yaw; looking up is positive pitch.
    left = pose(rot_y(0.5), (0, 0, 0))
    assert (left[:3, :3] @ [0, 0, -1])[0] < 0  # the view direction moved to -x: left
    assert ck.yaw_pitch_roll(left) == pytest.approx((0.5, 0.0, 0.0), abs=1e-6)
    up = pose(rot_x(0.3), (0, 0, 0))
    assert ck.yaw_pitch_roll(up) == pytest.approx((0.0, 0.3, 0.0), abs=1e-6)
    # Looking straight down: roll is reported as 0 and yaw carries the rest.
    down = pose(rot_y(0.4) @ rot_x(-math.pi / 2) @ rot_z(0.3), (0, 0, 0))
    yaw, pitch, roll = ck.yaw_pitch_roll(down)
    assert pitch == pytest.approx(-math.pi / 2, abs=1e-3) and roll == 0.0
    assert np.allclose(rot_y(yaw) @ rot_x(pitch), down[:3, :3], atol=2e-3)


def test_opencv_conversion(rng):
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    for M in random_poses(rng, 50):
        cv = ck.opengl_to_opencv(M)
        assert np.allclose(cv, M @ flip, atol=1e-5)
        assert np.allclose(ck.opencv_to_opengl(cv), M, atol=1e-5)
        assert np.allclose(ck.opencv_to_opengl(M), M @ flip, atol=1e-5)
    with pytest.raises(ck.InvalidArgumentError, match="ck_pose_opengl_to_opencv"):
        ck.opengl_to_opencv(np.diag([1.0, 1.0, -1.0, 1.0]))  # a reflection is not a rigid pose


def test_intrinsics_scale():
    k = ck.Intrinsics(fx=1594.7247, fy=1594.7247, cx=950.26636, cy=715.69507, width=1920, height=1440)
    s = k.scale(256, 192)
    assert (s.width, s.height) == (256, 192)
    assert s.fx == pytest.approx(k.fx * 256 / 1920, rel=1e-6)
    assert s.cx == pytest.approx(k.cx * 256 / 1920, rel=1e-6)
    assert s.fy == pytest.approx(k.fy * 192 / 1440, rel=1e-6)
    assert s.cy == pytest.approx(k.cy * 192 / 1440, rel=1e-6)
    odd = k.scale(640, 360)  # anisotropic
    assert odd.fx == pytest.approx(k.fx / 3, rel=1e-6) and odd.fy == pytest.approx(k.fy / 4, rel=1e-6)
    assert k.scale(1920, 1440) == k
    with pytest.raises(ck.InvalidArgumentError):
        k.scale(70000, 10)


def test_intrinsics_matrix_round_trip():
    k = ck.Intrinsics(fx=500.0, fy=510.0, cx=320.0, cy=240.0, width=640, height=480)
    assert np.array_equal(k.matrix, [[500, 0, 320], [0, 510, 240], [0, 0, 1]])
    assert ck.Intrinsics.from_matrix(k.matrix, 640, 480) == k
    assert ck.Intrinsics.from_matrix(k.matrix.reshape(9), 640, 480) == k  # row by row
    assert ck.Intrinsics.from_matrix(k.matrix.T.reshape(9), 640, 480, column_major=True) == k


def test_intrinsics_from_multiscan_camera_info():
    """MultiScan's camera-info ``intrinsics`` are 9 numbers column by column (ARKit's layout)."""
    import json
    import pathlib
    line = (pathlib.Path(__file__).resolve().parents[3] / "Tests/CaptureKitCoreTests/Fixtures/multiscan-sample/camera-info-example.jsonl").read_text().splitlines()[0]
    m = json.loads(line)["intrinsics"]
    k = ck.Intrinsics.from_matrix(m, 1920, 1440, column_major=True)
    assert (k.fx, k.fy, k.cx, k.cy) == (np.float32(m[0]), np.float32(m[4]), np.float32(m[6]), np.float32(m[7]))
    # The same numbers read row by row are not a camera matrix: refused, naming the problem.
    with pytest.raises(ck.InvalidArgumentError, match="row 3"):
        ck.Intrinsics.from_matrix(m, 1920, 1440)
    skewed = np.array([[500, 1.5, 320], [0, 500, 240], [0, 0, 1]])
    with pytest.raises(ck.InvalidArgumentError, match="skew"):
        ck.Intrinsics.from_matrix(skewed, 640, 480)
    with pytest.raises(ValueError):
        ck.Intrinsics.from_matrix(np.eye(4), 640, 480)


def test_depth_to_points_matches_numpy():
    """Back-projection against an independent float64 computation: pixel centres, z-depth along
    the optical axis, OpenGL camera axes, camera-to-world pose; every depth format; invalid pixels
    and max_depth skipped; the count-then-fill buffer contract."""
    rng = np.random.default_rng(3)
    h, w = 12, 16
    k = ck.Intrinsics(fx=14.0, fy=15.0, cx=7.5, cy=6.25, width=w, height=h)
    yaw = 0.7
    pose = np.array([[math.cos(yaw), 0, math.sin(yaw), 0.3], [0, 1, 0, 1.2], [-math.sin(yaw), 0, math.cos(yaw), -0.4], [0, 0, 0, 1]])
    depth = rng.uniform(0.3, 4.0, (h, w)).astype(np.float32)
    depth[0, 0] = 0
    depth[1, 2] = np.nan
    depth[3, 4] = np.inf
    depth[5, 5] = 3.9  # beyond max_depth below
    ys, xs = np.nonzero(np.isfinite(depth) & (depth > 0) & (depth <= 3.5))
    d = depth[ys, xs].astype(np.float64)
    cam = np.stack([(xs + 0.5 - k.cx) / k.fx * d, -(ys + 0.5 - k.cy) / k.fy * d, -d, np.ones_like(d)])
    want = (pose @ cam)[:3].T
    got = ck.depth_to_points(depth, k, pose, max_depth=3.5)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=2e-5)
    # The same map as float16 metres and as millimetres: the same points within their rounding.
    f16 = ck.depth_to_points(depth.astype(np.float16), k, pose, max_depth=3.5)
    assert f16.shape == want.shape
    mm = np.nan_to_num(depth * 1000, nan=0, posinf=0).round().astype(np.uint16)
    pts_mm = ck.depth_to_points(mm, k, pose, max_depth=3.5)
    np.testing.assert_allclose(pts_mm, want, atol=2e-3)
    assert ck.depth_to_points(np.zeros((h, w), np.float32), k, pose).shape == (0, 3)
    with pytest.raises(ck.InvalidArgumentError, match="12"):
        ck.depth_to_points(depth, ck.Intrinsics(14, 15, 7.5, 6.25, 32, 24), pose)  # the image's, not the map's
    with pytest.raises(ck.InvalidArgumentError, match="max_depth"):
        ck.depth_to_points(depth, k, pose, max_depth=0)
    with pytest.raises(ck.InvalidArgumentError):
        ck.depth_to_points(depth, k, np.diag([2.0, 1, 1, 1]))  # not rigid


def test_floor_from_points_ignores_the_object_on_it():
    """A floor at -0.95 m (5 mm noise) seen partly, a box-shaped object standing on it whose top
    holds more points than the visible floor, walls, and stray points below: the floor is found
    within a few millimetres; the answer is the lowest dense layer, not the densest one."""
    rng = np.random.default_rng(8)
    floor = np.column_stack([rng.uniform(-1, 1, 2000), -0.95 + rng.normal(0, 0.005, 2000), rng.uniform(-1, 1, 2000)])
    top = np.column_stack([rng.uniform(-0.25, 0.25, 3000), np.full(3000, -0.35) + rng.normal(0, 0.003, 3000), rng.uniform(-0.25, 0.25, 3000)])
    sides = np.column_stack([rng.choice([-0.25, 0.25], 1500), rng.uniform(-0.95, -0.35, 1500), rng.uniform(-0.25, 0.25, 1500)])
    wall = np.column_stack([rng.uniform(-1, 1, 1500), rng.uniform(-0.95, 1.5, 1500), np.full(1500, -1.0)])
    stray = np.column_stack([rng.uniform(-1, 1, 30), rng.uniform(-1.6, -1.1, 30), rng.uniform(-1, 1, 30)])
    pts = np.concatenate([floor, top, sides, wall, stray]).astype(np.float32)
    rng.shuffle(pts)
    y, inliers = ck.floor_from_points(pts, tolerance=0.015)
    assert abs(y - -0.95) < 0.003, y
    # Independent count: the points within ±tolerance of the answer.
    assert inliers == int(np.sum(np.abs(pts[:, 1] - np.float32(y)) <= np.float32(0.015)))
    assert 1800 < inliers < 2300
    # Nothing to stand on: too few points; bad arguments.
    with pytest.raises(ck.NotFoundError):
        ck.floor_from_points(np.zeros((2, 3), np.float32))
    with pytest.raises(ck.InvalidArgumentError, match="tolerance"):
        ck.floor_from_points(pts, tolerance=0)
    bad = pts.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ck.InvalidArgumentError, match=r"points\[5\]"):
        ck.floor_from_points(bad)


def test_floor_from_the_synthetic_scene_depth():
    """End to end on the library's own scene: render depth, back-project it, find the floor that
    the scene's target box stands on."""
    with ck.Scene(7) as scene:
        box = scene.target()
        k = ck.Intrinsics(fx=215.0, fy=215.0, cx=128.0, cy=96.0, width=256, height=192)
        eye = np.array([0.0, 0.9, 1.6]) + np.asarray(box.center, float)
        target = np.asarray(box.center, float)
        f = target - eye
        f /= np.linalg.norm(f)
        r = np.cross(f, [0.0, 1.0, 0.0])
        r /= np.linalg.norm(r)
        u = np.cross(r, f)
        pose = np.eye(4)
        pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = r, u, -f, eye
        depth, _ = scene.render_depth(pose, k, 0)
        pts = ck.depth_to_points(depth, k, pose, max_depth=5.0)
        y, inliers = ck.floor_from_points(pts)
        assert box.floor is not None and abs(y - box.floor) < 0.01, (y, box.floor)
        assert inliers > 1000


def test_look_at_matches_numpy_reference(rng):
    for _ in range(300):
        eye, target = rng.uniform(-10, 10, size=3), rng.uniform(-10, 10, size=3)
        up = rng.uniform(-1, 1, size=3) + np.array([0, 2.0, 0])
        d = (target - eye) / np.linalg.norm(target - eye)
        if np.linalg.norm(np.cross(d, up / np.linalg.norm(up))) < 0.05:
            continue
        eye32, target32, up32 = (v.astype(np.float32) for v in (eye, target, up))
        np.testing.assert_allclose(ck.look_at(eye32, target32, up32), look_at(eye32, target32, up32), atol=2e-6)
    np.testing.assert_allclose(ck.look_at((0, 0, 0), (0, 0, -3)), np.eye(4), atol=1e-7)


@pytest.mark.parametrize("eye, target, up", [
    ((0, 0, 0), (0, 0, 0), (0, 1, 0)),       # eye == target
    ((0, 0, 0), (0, 2, 0), (0, 1, 0)),       # looking straight up
    ((0, 0, 0), (0, 0, -1), (0, 0, 0)),      # zero up
    ((math.nan, 0, 0), (0, 0, -1), (0, 1, 0)),
])
def test_look_at_refuses_degenerate_views(eye, target, up):
    with pytest.raises(ck.InvalidArgumentError):
        ck.look_at(eye, target, up)


def test_face_iterates_the_six_faces_only():
    assert list(ck.Face) == [ck.Face.FRONT, ck.Face.LEFT, ck.Face.RIGHT, ck.Face.BOTTOM, ck.Face.TOP, ck.Face.BACK]
    assert len(ck.Face) == 6
    assert ck.Face(-1) is ck.Face.NONE and ck.Face.NONE == -1
    box = ck.Box(center=(0, 0, -2), size=(1, 1, 1))
    assert [box.face(f).normal.tolist() for f in ck.Face][0] == [0.0, 0.0, -1.0]   # every face works


@pytest.mark.parametrize("kwargs, word", [
    (dict(fx=-1, fy=500, cx=320, cy=240, width=640, height=480), "focal"),
    (dict(fx=500, fy=0, cx=320, cy=240, width=640, height=480), "focal"),
    (dict(fx=500, fy=500, cx=math.inf, cy=240, width=640, height=480), "finite"),
    (dict(fx=500, fy=500, cx=320, cy=240, width=0, height=480), "width"),
    (dict(fx=500, fy=500, cx=320, cy=240, width=640, height=70000), "width"),
])
def test_intrinsics_are_validated_on_construction(kwargs, word):
    with pytest.raises(ck.InvalidArgumentError, match=word):
        ck.Intrinsics(**kwargs)
