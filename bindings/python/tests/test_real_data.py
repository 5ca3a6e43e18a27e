"""A real capture (tests/data, from JoshuaG-K/wayfair23-serverV2 public/, ISC License): 82 camera
poses and the box the capture app placed around the object."""

import json
import pathlib

import numpy as np
import pytest

import capturekit as ck
from reference import rot_x, rot_y, rot_z, slab

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def bbox_json():
    return json.loads((DATA / "boundingbox.json").read_text())


@pytest.fixture(scope="module")
def frames():
    frames = json.loads((DATA / "transforms.json").read_text())["frames"]
    assert len(frames) == 82
    return frames


@pytest.fixture(scope="module")
def real_box(bbox_json):
    """The Box built from the file: centre, yaw, and the size derived from the named corners."""
    p = {name: np.array([v["x"], v["y"], v["z"]]) for name, v in bbox_json["positions"].items()}
    size = (
        np.linalg.norm(p["top_right_front"] - p["top_left_front"]),  # along local x (left -> right)
        np.linalg.norm(p["top_left_front"] - p["bot_left_front"]),  # along y (bottom -> top)
        np.linalg.norm(p["top_left_back"] - p["top_left_front"]),  # along local z (front -> back)
    )
    c = bbox_json["center"]
    return ck.Box((c["x"], c["y"], c["z"]), size, bbox_json["rad_rot_about_y"])


def intrinsics_of(frame):
    return ck.Intrinsics(frame["fl_x"], frame["fl_y"], frame["cx"], frame["cy"], frame["w"], frame["h"])


def test_corners_match_the_file(real_box, bbox_json):
    corners = real_box.corners()
    assert set(bbox_json["positions"]) == {c.name.lower() for c in ck.Corner}
    for corner in ck.Corner:
        v = bbox_json["positions"][corner.name.lower()]
        assert np.allclose(corners[corner], (v["x"], v["y"], v["z"]), atol=1e-4), corner.name


def test_every_real_pose_is_valid(frames):
    for i, frame in enumerate(frames):
        M = np.array(frame["transform_matrix"])  # row-major rows: M[r, c]
        inv = ck.pose_inverse(M)
        assert np.allclose(inv @ M, np.eye(4), atol=1e-4), i
        q, t = ck.pose_to_quat(M)
        assert np.allclose(t, M[:3, 3], atol=1e-6)
        assert np.allclose(ck.pose_from_quat(q, t), M, atol=1e-4), i
        yaw, pitch, roll = ck.yaw_pitch_roll(M)
        assert np.allclose(rot_y(yaw) @ rot_x(pitch) @ rot_z(roll), M[:3, :3], atol=1e-4), i
        assert np.allclose(ck.opengl_to_opencv(M), M @ np.diag([1, -1, -1, 1]), atol=1e-6)


def test_centre_rays_hit_the_box(frames, real_box):
    hits = 0
    for frame in frames:
        M = np.array(frame["transform_matrix"])
        ray = ck.ray_from_pixel(M, intrinsics_of(frame), frame["w"] / 2, frame["h"] / 2)
        hit = ck.ray_box(ray, real_box)
        face, t, inside, clear = slab(ray.origin, ray.direction, real_box.center, real_box.size, real_box.yaw)
        if clear:
            assert (hit is None) == (face < 0)
            if hit is not None:
                assert (hit.face, hit.inside) == (face, inside)
                assert hit.distance == pytest.approx(t, rel=1e-5)
        hits += hit is not None
    assert hits >= 0.9 * len(frames)  # the operator kept the object in view


def test_depth_grids_of_real_frames(frames, real_box):
    partial = 0
    for frame in frames:
        M = np.array(frame["transform_matrix"])
        coarse = intrinsics_of(frame).scale(32, 24)
        faces, distances = ck.raycast_box_grid(M, coarse, real_box)
        assert faces.shape == (24, 32)
        seen = faces >= 0
        assert np.all(np.isfinite(distances[seen])) and np.all(np.isinf(distances[~seen]))
        partial += 0 < seen.mean() < 1
        for row, col in ((12, 16), (3, 5), (20, 28)):
            hit = ck.ray_box(ck.ray_from_pixel(M, coarse, col + 0.5, row + 0.5), real_box)
            if hit is None:
                assert faces[row, col] == -1
            else:
                assert distances[row, col] == pytest.approx(hit.distance, rel=1e-5)
    assert partial >= 20  # many frames show the box's outline, not just its inside
