"""Rays from pixels, ray vs plane/floor/box, and the batched casts, against NumPy references."""

import math

import numpy as np
import pytest

import capturekit as ck
from reference import look_at, pixel_direction, random_rotation, pose, slab, to_local

EDGE_EPS = 1e-4  # metres: hits this close to an edge may report either neighbouring face


def test_ray_from_pixel_matches_formula(rng, intrinsics):
    k = intrinsics
    for _ in range(100):
        cam = pose(random_rotation(rng), rng.uniform(-5, 5, size=3))
        u, v = rng.uniform(-50, 300), rng.uniform(-50, 250)
        ray = ck.ray_from_pixel(cam, k, u, v)
        assert np.allclose(ray.origin, cam[:3, 3], atol=1e-6)
        assert np.allclose(ray.direction, pixel_direction(cam, k.fx, k.fy, k.cx, k.cy, u, v), atol=1e-6)
        assert abs(np.linalg.norm(ray.direction) - 1) < 1e-6
    centre = ck.ray_from_pixel(np.eye(4), k, k.cx, k.cy)
    assert np.allclose(centre.direction, (0, 0, -1))  # OpenGL camera looks down -z
    top_left = ck.ray_from_pixel(np.eye(4), k, 0.0, 0.0).direction
    assert top_left[0] < 0 and top_left[1] > 0  # image v points down, camera +y up


def test_ray_plane_and_floor(rng):
    for _ in range(200):
        o = rng.uniform(-3, 3, size=3)
        d = rng.normal(size=3)
        p, n = rng.uniform(-3, 3, size=3), rng.normal(size=3)
        ray = ck.Ray(o, d)
        o64, d64 = ray.origin.astype(np.float64), ray.direction / np.linalg.norm(ray.direction)
        denom = n @ d64
        t = (n @ (p.astype(np.float32) - o64)) / denom
        hit = ck.ray_plane(ray, p, n)
        if abs(denom) < 1e-3 or abs(t) < 1e-4:
            continue
        if t < 0:
            assert hit is None
        else:
            assert hit.face == ck.Face.NONE and not hit.inside
            assert hit.distance == pytest.approx(t, rel=1e-5, abs=1e-6)
            assert np.allclose(hit.point, o64 + t * d64, atol=1e-5 * (1 + t))
    ray = ck.Ray((1, 2, 3), (0.2, -1, 0.1))
    hit = ck.ray_floor(ray, -0.5)
    assert hit.point[1] == pytest.approx(-0.5, abs=1e-6)
    assert np.allclose(hit.point, ray.point_at(hit.distance), atol=1e-5)
    assert ck.ray_floor(ray, 2.5) is None  # behind the origin
    assert ck.ray_plane(ck.Ray((0, 0, 0), (1, 0, 0)), (0, 0, 0), (0, 1, 0)) is None  # in the plane


def random_box(rng):
    return ck.Box(rng.uniform(-1, 1, size=3), rng.uniform(0.1, 2.0, size=3), rng.uniform(-math.pi, math.pi))


def random_ray_at(rng, box):
    """Origins around (sometimes inside) the box, aimed near it."""
    c, s = box.center, box.size
    if rng.random() < 0.15:
        origin = c + rng.uniform(-0.5, 0.5, size=3) * s
    else:
        origin = c + rng.normal(size=3) * 3
    target = c + rng.uniform(-0.8, 0.8, size=3) * s
    direction = target - origin if rng.random() < 0.9 else rng.normal(size=3)
    return ck.Ray(origin, direction)


def test_ray_box_matches_float64_slab(rng):
    counts = {"hit": 0, "miss": 0, "inside": 0, "unclear": 0}
    for _ in range(4000):
        box = random_box(rng) if rng.random() < 0.05 or not counts["hit"] else box
        ray = random_ray_at(rng, box)
        face, t, inside, clear = slab(ray.origin, ray.direction, box.center, box.size, box.yaw)
        hit = ck.ray_box(ray, box)
        if not clear:
            counts["unclear"] += 1
            continue
        if face < 0:
            assert hit is None, (ray, box)
            counts["miss"] += 1
            continue
        assert hit is not None, (ray, box)
        assert hit.face == face, (ray, box, hit, face)
        assert hit.inside == inside
        assert hit.distance == pytest.approx(t, rel=1e-5, abs=1e-6)
        assert np.allclose(hit.point, ray.point_at(t), atol=1e-5 * (1 + t))
        counts["inside" if inside else "hit"] += 1
    assert counts["hit"] > 1200 and counts["miss"] > 200 and counts["inside"] > 200, counts
    assert counts["unclear"] < 40, counts


def test_ray_box_edges_and_ties():
    box = ck.Box((0, 0, 0), (2, 2, 2))
    # Exactly through an edge (front/left): the lower face index wins.
    hit = ck.ray_box(ck.Ray((-3, 0, -3), (1, 0, 1)), box)
    assert hit.face == ck.Face.FRONT and hit.distance == pytest.approx(2 * math.sqrt(2), rel=1e-6)
    # Touching an edge still hits (closed box); grazing a face from outside too.
    assert ck.ray_box(ck.Ray((-1, 5, -1), (0, -1, 0)), box).face == ck.Face.TOP
    # Starting on a face counts as inside: exit face reported.
    hit = ck.ray_box(ck.Ray((0, 0, -1), (0, 0, 1)), box)
    assert hit.inside and hit.face == ck.Face.BACK and hit.distance == pytest.approx(2.0)
    hit = ck.ray_box(ck.Ray((0, 0, 0), (0, -1, 0)), box)
    assert hit.inside and hit.face == ck.Face.BOTTOM and hit.distance == pytest.approx(1.0)


def near_edge(points, box):
    """True where a box hit point lies within EDGE_EPS of two faces' planes."""
    local = to_local(points, box.center, box.yaw)
    close = np.abs(np.abs(local) - box.size / 2) <= EDGE_EPS
    return close.sum(axis=1) >= 2


def test_grid_equals_per_pixel_ray_box(rng):
    k = ck.Intrinsics(fx=60.0, fy=60.0, cx=32.0, cy=24.0, width=64, height=48)
    for trial in range(3):
        box = ck.Box((0.1, -0.2, 0.0), (0.9, 0.7, 1.3), rng.uniform(-math.pi, math.pi), floor=-0.95)
        eye = np.array([math.cos(trial * 2.1) * 3, 0.8 + trial * 0.3, math.sin(trial * 2.1) * 3])
        cam = look_at(eye, box.center)
        faces, distances = ck.raycast_box_grid(cam, k, box)
        assert faces.shape == distances.shape == (48, 64)
        assert faces.dtype == np.int32 and distances.dtype == np.float32
        hits = 0
        for row in range(48):
            for col in range(64):
                hit = ck.ray_box(ck.ray_from_pixel(cam, k, col + 0.5, row + 0.5), box)
                if hit is None:
                    assert faces[row, col] == ck.Face.NONE and np.isinf(distances[row, col])
                    continue
                hits += 1
                assert distances[row, col] == pytest.approx(hit.distance, rel=1e-5)
                if faces[row, col] != hit.face:
                    assert near_edge(hit.point[None, :], box)[0], (row, col, faces[row, col], hit)
        assert hits > 200


def test_pixels_equal_grid_and_single_rays(rng, intrinsics, box):
    cam = look_at(box.center + (2.7, 1.6, 1.0), box.center)  # sees the right, top and back faces
    faces, distances = ck.raycast_box_grid(cam, intrinsics, box)
    assert faces.shape == (192, 256)
    cols, rows = np.meshgrid(np.arange(256), np.arange(192))
    centres = np.column_stack([cols.ravel() + 0.5, rows.ravel() + 0.5]).astype(np.float32)
    f2, d2 = ck.raycast_box_pixels(centres, cam, intrinsics, box)
    assert np.array_equal(f2.reshape(192, 256), faces)
    assert np.array_equal(d2.reshape(192, 256), distances)
    assert len(set(np.unique(faces)) - {-1}) >= 3  # three faces visible from a corner view
    # Random sub-pixel positions (and some outside the image) agree with single rays.
    px = rng.uniform((-20, -20), (276, 212), size=(1500, 2)).astype(np.float32)
    f3, d3 = ck.raycast_box_pixels(px, cam, intrinsics, box)
    for (u, v), f, d in zip(px, f3, d3):
        hit = ck.ray_box(ck.ray_from_pixel(cam, intrinsics, u, v), box)
        if hit is None:
            assert f == -1 and np.isinf(d)
        else:
            assert d == pytest.approx(hit.distance, rel=1e-5)
            assert f == hit.face or near_edge(hit.point[None, :], box)[0]


def test_grid_from_inside_the_box(intrinsics):
    box = ck.Box((0, 0, 0), (4, 3, 5))
    faces, distances = ck.raycast_box_grid(np.eye(4), intrinsics, box)
    assert np.all(faces >= 0) and np.all(np.isfinite(distances))  # every ray exits somewhere
    assert faces[96, 128] == ck.Face.FRONT and distances[96, 128] == pytest.approx(2.5, rel=1e-5)


def test_grid_on_scaled_intrinsics(box):
    rgb = ck.Intrinsics(fx=1594.7247, fy=1594.7247, cx=950.26636, cy=715.69507, width=1920, height=1440)
    depth = rgb.scale(256, 192)
    cam = look_at((0.0, 0.5, 1.0), box.center)
    faces, _ = ck.raycast_box_grid(cam, depth, box)
    assert faces.shape == (192, 256)
    # The centre pixel sees what the centre ray of the full-resolution camera sees.
    hit = ck.ray_box(ck.ray_from_pixel(cam, rgb, 960.0, 720.0), box)
    assert faces[96, 128] == hit.face
