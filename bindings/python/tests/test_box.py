"""The Box: corners, faces, containment, every edit, fitting and tap-to-place, checked against the
conventions of docs/DESIGN.md#conventions computed independently with NumPy."""

import copy
import math
import pickle

import numpy as np
import pytest

import capturekit as ck
from reference import FACE_NORMALS, box_corners, look_at, pixel_direction, quat_to_matrix, rot_y, to_local

YAW = math.radians(25)
SIZE = (0.9, 0.7, 1.3)
FLOOR = -0.95
OPPOSITE = {0: 5, 5: 0, 1: 2, 2: 1, 3: 4, 4: 3}


def test_corners_yaw_25_on_floor():
    box = ck.Box(center=(0.2, 0.3, -2.5), size=SIZE, yaw=YAW, floor=FLOOR)
    corners = box.corners()
    assert corners.shape == (8, 3) and corners.dtype == np.float32
    expected_center = (0.2, FLOOR + SIZE[1] / 2, -2.5)
    assert np.allclose(box.center, expected_center, atol=1e-6)
    assert np.allclose(corners, box_corners(expected_center, SIZE, YAW), atol=1e-6)
    bottom = [ck.Corner.BOT_RIGHT_FRONT, ck.Corner.BOT_LEFT_FRONT, ck.Corner.BOT_RIGHT_BACK, ck.Corner.BOT_LEFT_BACK]
    assert np.all(np.abs(corners[bottom, 1] - FLOOR) <= 1e-6)
    top = [c for c in ck.Corner if c not in bottom]
    assert np.allclose(corners[top, 1], FLOOR + SIZE[1], atol=1e-6)
    # Named corners sit where their names say, in the box frame.
    local = to_local(corners, box.center, box.yaw)
    assert local[ck.Corner.TOP_LEFT_FRONT, 0] < 0 and local[ck.Corner.TOP_LEFT_FRONT, 2] < 0
    assert local[ck.Corner.BOT_RIGHT_BACK, 0] > 0 and local[ck.Corner.BOT_RIGHT_BACK, 2] > 0


def test_fields_and_repr(box):
    assert box.has_floor and box.floor == pytest.approx(FLOOR)
    assert box.yaw == pytest.approx(YAW, abs=1e-7)
    assert np.allclose(box.size, SIZE)
    assert "floor=-0.95" in repr(box) and repr(box).startswith("Box(center=(")
    free = ck.Box((1, 2, 3), (1, 1, 1))
    assert free.floor is None and not free.has_floor and "floor" not in repr(free)


def test_copy_equality_pickle(box):
    other = box.copy()
    assert other == box and other is not box
    other.translate((0.1, 0, 0))
    assert other != box
    assert copy.copy(box) == box and copy.deepcopy(box) == box
    assert copy.copy(box)._c is not box._c
    assert pickle.loads(pickle.dumps(box)) == box
    with pytest.raises(TypeError):
        hash(box)


def test_faces(box):
    R = rot_y(box.yaw)
    half = box.size.astype(np.float64) / 2
    for face in range(6):
        frame = box.face(ck.Face(face))
        n = R @ FACE_NORMALS[face]
        assert np.allclose(frame.normal, n, atol=1e-6)
        assert np.allclose(frame.center, box.center + R @ (FACE_NORMALS[face] * half), atol=1e-6)
        Q = quat_to_matrix(frame.orientation)
        assert abs(np.linalg.norm(frame.orientation) - 1) < 1e-6
        assert np.allclose(Q[:, 2], n, atol=1e-6), face  # +z on the outward normal
        if face in (ck.Face.TOP, ck.Face.BOTTOM):
            front = R @ [0, 0, -1]
            assert np.allclose(Q[:, 1], front if face == ck.Face.TOP else -front, atol=1e-6)
        else:
            assert np.allclose(Q[:, 1], [0, 1, 0], atol=1e-6)  # side faces keep +y up


def test_contains_matches_numpy(box, rng):
    pts = box.center + rng.uniform(-1.2, 1.2, size=(2000, 3))
    local = to_local(pts, box.center, box.yaw)
    slack = np.min(np.abs(np.abs(local) - box.size / 2), axis=1)
    inside = np.all(np.abs(local) <= box.size / 2, axis=1)
    checked = 0
    for p, expect, s in zip(pts, inside, slack):
        if s < 1e-4:
            continue
        assert box.contains(p) == expect, p
        checked += 1
    assert checked > 1500 and inside.sum() > 100
    for c in box.corners():
        assert box.contains(c)  # closed box


def test_set_center_and_translate(box):
    y = box.center[1]
    box.set_center((1.0, 5.0, 2.0))  # y ignored on a floor
    assert np.allclose(box.center, (1.0, y, 2.0))
    box.translate((0.5, 3.0, -1.0))
    assert np.allclose(box.center, (1.5, y, 1.0))
    box.clear_floor()
    assert box.floor is None and np.allclose(box.center, (1.5, y, 1.0))  # stays where it is
    box.translate((0, 1, 0))
    assert np.allclose(box.center, (1.5, y + 1, 1.0))


@pytest.mark.parametrize("pitch", [0.0, -0.5, 0.4])
def test_translate_camera(pitch):
    heading = math.radians(40)
    cam = np.eye(4)
    cam[:3, :3] = rot_y(heading) @ np.array([[1, 0, 0], [0, math.cos(pitch), -math.sin(pitch)],
                                             [0, math.sin(pitch), math.cos(pitch)]])
    cam[:3, 3] = (3, 1.5, -2)
    forward = np.array([-math.sin(heading), 0, -math.cos(heading)])  # horizontal view direction
    right = np.array([math.cos(heading), 0, -math.sin(heading)])
    box = ck.Box((0, 0, 0), (1, 1, 1))
    box.translate_camera(cam, right=0.5, up=0.25, forward=2.0)
    assert np.allclose(box.center, 0.5 * right + 2.0 * forward + [0, 0.25, 0], atol=1e-5)
    box.set_floor(-1.0)
    c = box.center
    box.translate_camera(cam, up=3.0)  # ignored with a floor
    assert np.allclose(box.center, c)


def test_translate_camera_looking_straight_down():
    # Looking straight down, "forward" is the direction of the top of the image (camera +y).
    cam = np.eye(4)
    cam[:3, :3] = rot_y(0.3) @ np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]])  # pitch -90 degrees
    top_of_image = cam[:3, 1]
    box = ck.Box((0, 0, 0), (1, 1, 1))
    box.translate_camera(cam, forward=1.0)
    assert np.allclose(box.center, top_of_image, atol=1e-5)


def test_yaw_edits_wrap():
    box = ck.Box((0, 0, 0), (1, 2, 3))
    box.set_yaw(3 * math.pi / 2)
    assert box.yaw == pytest.approx(-math.pi / 2, abs=1e-6)
    box.set_yaw(-3 * math.pi)
    assert -math.pi < box.yaw <= np.float32(math.pi)
    assert abs(abs(box.yaw) - math.pi) < 1e-6
    box.set_yaw(0.2)
    box.rotate(0.3)
    assert box.yaw == pytest.approx(0.5, abs=1e-6)
    box.rotate(2 * math.pi * 5)
    assert box.yaw == pytest.approx(0.5, abs=1e-5)
    for _ in range(4):
        box.rotate_degrees(90)
    assert box.yaw == pytest.approx(0.5, abs=1e-5)
    box.rotate_degrees(-45)
    assert box.yaw == pytest.approx(0.5 - math.pi / 4, abs=1e-6)
    for _ in range(1000):  # many small steps do not drift
        box.rotate_degrees(0.36)
    assert box.yaw == pytest.approx(0.5 - math.pi / 4, abs=1e-4)


def test_set_size_and_scale_keep_bottom_on_floor(box):
    box.set_size((1.0, 2.0, 0.5))
    assert np.allclose(box.size, (1.0, 2.0, 0.5))
    assert box.center[1] - box.size[1] / 2 == pytest.approx(FLOOR, abs=1e-6)
    box.scale((2.0, 0.5, 1.0))
    assert np.allclose(box.size, (2.0, 1.0, 0.5))
    assert box.center[1] - box.size[1] / 2 == pytest.approx(FLOOR, abs=1e-6)
    box.scale(1.5)
    assert np.allclose(box.size, (3.0, 1.5, 0.75))
    free = ck.Box((0, 1, 0), (1, 1, 1))
    free.scale(2)
    assert np.allclose(free.center, (0, 1, 0)) and np.allclose(free.size, (2, 2, 2))  # about the centre
    with pytest.raises(ck.InvalidArgumentError):
        free.scale(-1)


@pytest.mark.parametrize("face", [f for f in ck.Face if f != ck.Face.NONE])
@pytest.mark.parametrize("distance", [0.2, -0.1])
def test_extend_face_moves_only_that_face(face, distance):
    box = ck.Box((0.3, 0.1, -1.0), SIZE, YAW)
    R = rot_y(box.yaw)
    n = FACE_NORMALS[face]
    before_center, before_size = box.center.astype(np.float64), box.size.astype(np.float64)
    box.extend_face(face, distance)
    assert np.allclose(box.size, before_size + np.abs(n) * distance, atol=1e-6)
    assert np.allclose(box.center, before_center + R @ n * distance / 2, atol=1e-6)
    moved = before_center + R @ (n * (before_size / 2 + distance))
    kept = before_center - R @ (n * before_size / 2)
    assert np.allclose(box.face(face).center, moved, atol=1e-6)
    assert np.allclose(box.face(OPPOSITE[face]).center, kept, atol=1e-6)


def test_extend_top_with_floor(box):
    box.extend_face(ck.Face.TOP, 0.3)
    assert box.size[1] == pytest.approx(SIZE[1] + 0.3)
    assert box.center[1] - box.size[1] / 2 == pytest.approx(FLOOR, abs=1e-6)


def test_floor_edits():
    box = ck.Box((1, 5, 2), (1, 0.5, 1), 0.3)
    box.set_floor(0.25)
    assert box.floor == 0.25 and np.allclose(box.center, (1, 0.5, 2))
    box.place_on_floor(-3, 4)
    assert np.allclose(box.center, (-3, 0.5, 4)) and box.yaw == pytest.approx(0.3)
    box.clear_floor()
    box.set_center((0, 9, 0))
    assert np.allclose(box.center, (0, 9, 0))


def test_fit_points_recovers_a_known_box(rng):
    for trial in range(8):
        yaw = rng.uniform(-math.pi, math.pi)
        size = rng.uniform(0.2, 2.0, size=3)
        center = rng.uniform(-3, 3, size=3)
        corners = box_corners(center, size, yaw)
        inner = center + (rng.uniform(-0.5, 0.5, size=(500, 3)) * size) @ rot_y(yaw).T
        pts = np.vstack([inner, corners]).astype(np.float32)
        rng.shuffle(pts)
        fit = ck.Box.fit_points(pts)
        assert np.allclose(fit.center, center, atol=1e-4), trial
        assert fit.size[1] == pytest.approx(size[1], abs=1e-4)
        assert sorted(fit.size[[0, 2]]) == pytest.approx(sorted(size[[0, 2]]), abs=1e-4)
        d = (fit.yaw - yaw) % (math.pi / 2)
        assert min(d, math.pi / 2 - d) < 1e-3, (fit.yaw, yaw)
        # Same solid: every true corner is one of the fitted corners.
        got = fit.corners()
        for c in corners:
            assert np.min(np.linalg.norm(got - c, axis=1)) < 2e-4
        assert all(fit.contains(p) for p in pts[::25])


def test_fit_points_on_floor_with_padding(rng):
    yaw, size, floor = 0.6, np.array([0.8, 0.5, 0.4]), -1.0
    center = np.array([0.5, floor + size[1] / 2, 1.0])
    corners = box_corners(center, size, yaw)
    top = corners[[0, 1, 4, 5]]
    inner = center + (rng.uniform(-0.5, 0.5, size=(300, 3)) * size) @ rot_y(yaw).T
    inner = inner[inner[:, 1] > floor + 0.05]
    # Floor points (up to floor + 0.009, inside the default 0.01 margin) are ignored.
    clutter = np.column_stack([rng.uniform(-5, 5, 200), floor + rng.uniform(-0.05, 0.009, 200),
                               rng.uniform(-5, 5, 200)])
    pts = np.vstack([inner, top, clutter]).astype(np.float32)
    fit = ck.Box.fit_points(pts, floor=floor)
    assert fit.floor == floor
    assert fit.center[1] - fit.size[1] / 2 == pytest.approx(floor, abs=1e-5)
    assert fit.size[1] == pytest.approx(size[1], abs=1e-4)
    assert sorted(fit.size[[0, 2]]) == pytest.approx(sorted(size[[0, 2]]), abs=2e-3)
    padded = ck.Box.fit_points(pts, floor=floor, padding=0.05)
    assert padded.size[1] == pytest.approx(size[1] + 0.05, abs=1e-4)  # top only: never below the floor
    assert sorted(padded.size[[0, 2]]) == pytest.approx(sorted(size[[0, 2]] + 0.1), abs=2e-3)
    assert padded.center[1] - padded.size[1] / 2 == pytest.approx(floor, abs=1e-5)
    # A larger floor margin drops the box's lower points: the height shrinks accordingly.
    margin = ck.Box.fit_points(pts, floor=floor, floor_margin=0.3)
    assert margin.size[1] <= size[1] + 1e-4


def test_place_at_pixel(intrinsics):
    cam = look_at(eye=(0.5, 1.6, 1.0), target=(0.0, -1.0, -2.0))
    box = ck.Box((0, 0, 0), (0.5, 0.4, 0.6), 0.2, floor=-1.0)
    u, v = 150.0, 120.0
    hit = box.place_at_pixel(cam, intrinsics, u, v)
    d = pixel_direction(cam, intrinsics.fx, intrinsics.fy, intrinsics.cx, intrinsics.cy, u, v)
    t = (-1.0 - cam[1, 3]) / d[1]
    expected = cam[:3, 3] + t * d
    assert hit is not None and hit.face == ck.Face.NONE and not hit.inside
    assert np.allclose(hit.point, expected, atol=1e-5)
    assert hit.distance == pytest.approx(t, rel=1e-5)
    assert np.allclose(box.center, (expected[0], -1.0 + 0.2, expected[2]), atol=1e-5)
    assert box.yaw == pytest.approx(0.2) and np.allclose(box.size, (0.5, 0.4, 0.6))
    # Above the horizon the ray never reaches the floor: None, box unchanged.
    before = box.copy()
    assert box.place_at_pixel(cam, intrinsics, 128.0, -400.0) is None
    assert box == before


def test_face_camera_turns_the_front_face_toward_the_camera():
    """After face_camera the front face's outward normal (read back through Box.face) points
    horizontally at the camera, for random boxes and cameras (numpy computes the direction);
    centre, size and floor stay. From straight above, the front faces against the heading."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        b = ck.Box(center=rng.uniform(-2, 2, 3), size=rng.uniform(0.1, 1.5, 3), yaw=rng.uniform(-3, 3))
        before = (b.center.copy(), b.size.copy())
        eye = rng.uniform(-4, 4, 3)
        pose = np.eye(4)
        pose[:3, 3] = eye
        b.face_camera(pose)
        d = eye - b.center
        d[1] = 0
        if np.linalg.norm(d) < 0.01:
            continue
        n = b.face(ck.Face.FRONT).normal
        assert abs(n[1]) < 1e-6
        assert float(np.dot(n, d / np.linalg.norm(d))) > 0.99999
        assert np.allclose(b.center, before[0]) and np.allclose(b.size, before[1])
    # Straight above the centre, looking down with the image top toward -x: the front faces +x.
    b = ck.Box(center=(0, 0.25, 0), size=(0.5, 0.5, 0.5))
    down = np.eye(4)
    down[:3, 0] = (0, 0, -1)   # camera right
    down[:3, 1] = (-1, 0, 0)   # camera up: the top of the image points to -x
    down[:3, 2] = (0, 1, 0)    # camera back (+z), so it looks along -y
    down[:3, 3] = (0, 2, 0)
    b.face_camera(down)
    assert np.allclose(b.face(ck.Face.FRONT).normal, (1, 0, 0), atol=1e-6)
    with pytest.raises(ck.InvalidArgumentError):
        b.face_camera(np.full((4, 4), np.nan))
