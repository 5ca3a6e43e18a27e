"""The synthetic scene through the binding: deterministic, LiDAR-like, and consistent with the box."""

import numpy as np
import pytest

import capturekit as ck


def look_at(eye, target):
    eye = np.asarray(eye, float)
    f = np.asarray(target, float) - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, [0.0, 1.0, 0.0])
    r /= np.linalg.norm(r)
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([r, np.cross(r, f), -f])
    pose[:3, 3] = eye
    return pose


def test_depth_is_deterministic_and_lidar_like():
    k = ck.Intrinsics(fx=210, fy=210, cx=128, cy=96, width=256, height=192)
    pose = look_at([1.5, 1.2, 0.5], [0, 0.2, 0])
    with ck.Scene(7) as scene:
        d1, c1 = scene.render_depth(pose, k, frame=3)
        d2, c2 = scene.render_depth(pose, k, frame=3)
        d3, _ = scene.render_depth(pose, k, frame=4)
        target = scene.target()
    assert np.array_equal(d1, d2) and np.array_equal(c1, c2)
    assert not np.array_equal(d1, d3)                       # noise depends on the frame
    assert d1.dtype == np.float32 and d1.shape == (192, 256)
    valid = d1 > 0
    assert 0.9 < valid.mean() < 1.0                          # dropouts exist but are rare
    assert np.all((d1[valid] > 0.3) & (d1[valid] <= 5.1))
    assert set(np.unique(c1)) <= {0, 1, 2} and np.all(c1[~valid] == 0)
    # The centre pixel sees the target: its depth equals the z-distance to the box along the ray.
    hit = ck.ray_box(ck.ray_from_pixel(pose, k, 128, 96), target)
    assert hit is not None
    ray = ck.ray_from_pixel(pose, k, 128, 96)
    z = hit.distance * -np.dot(ray.direction, pose[:3, 2])
    assert abs(d1[95:97, 127:129].mean() - z) < 0.02


def test_rgb_and_closed_scene():
    k = ck.Intrinsics(fx=100, fy=100, cx=32, cy=24, width=64, height=48)
    scene = ck.Scene(1)
    rgb = scene.render_rgb(look_at([1, 1, 1], [0, 0.2, 0]), k)
    assert rgb.shape == (48, 64, 3) and rgb.dtype == np.uint8 and rgb.std() > 5
    scene.close()
    scene.close()
    with pytest.raises(ValueError):
        scene.target()
