"""Independent NumPy (float64) reference implementations of the conventions in docs/DESIGN.md#conventions and
include/capturekit.h, written from the documents, not from the library's source.

Imported by the tests (pytest puts this folder on sys.path).
"""

import numpy as np

# Local corner signs in ck_corner order (docs/DESIGN.md#the-box).
CORNER_SIGNS = np.array(
    [(-1, 1, -1), (1, 1, -1), (1, -1, -1), (-1, -1, -1), (-1, 1, 1), (1, 1, 1), (1, -1, 1), (-1, -1, 1)],
    dtype=np.float64,
)
# Local outward normals in ck_face order: front -z, left -x, right +x, bottom -y, top +y, back +z.
FACE_NORMALS = np.array([(0, 0, -1), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, 1)], dtype=np.float64)
# Per axis (x, y, z): the face on the negative side and on the positive side.
NEG_FACE = (1, 3, 0)
POS_FACE = (2, 4, 5)


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    """R_y with rows [cos,0,sin],[0,1,0],[-sin,0,cos] (docs/DESIGN.md#the-box)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def quat_to_matrix(q):
    """3x3 rotation of a unit quaternion (x, y, z, w)."""
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def pose(R, t):
    """4x4 [R | t] (row/column orientation)."""
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = t
    return M


def random_rotation(rng):
    q = rng.normal(size=4)
    return quat_to_matrix(q / np.linalg.norm(q))


def look_at(eye, target, up=(0.0, 1.0, 0.0)):
    """Camera-to-world pose (OpenGL axes: camera looks down -z) at `eye` looking at `target`."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    back = eye - target
    back /= np.linalg.norm(back)
    right = np.cross(up, back)
    right /= np.linalg.norm(right)
    true_up = np.cross(back, right)
    return pose(np.column_stack([right, true_up, back]), eye)


def box_corners(center, size, yaw):
    """World corners (8, 3) in ck_corner order: center + R_y(yaw) (signs * size / 2)."""
    local = CORNER_SIGNS * (np.asarray(size, dtype=np.float64) / 2)
    return np.asarray(center, dtype=np.float64) + local @ rot_y(yaw).T


def to_local(points, center, yaw):
    """World points (N, 3) -> box-local coordinates."""
    return (np.asarray(points, dtype=np.float64) - np.asarray(center, dtype=np.float64)) @ rot_y(yaw)


def pixel_direction(pose4, fx, fy, cx, cy, u, v):
    """Unit world direction of the ray through (u, v): R ((u-cx)/fx, -(v-cy)/fy, -1)."""
    d_cam = np.array([(u - cx) / fx, -(v - cy) / fy, -1.0])
    d = np.asarray(pose4, dtype=np.float64)[:3, :3] @ d_cam
    return d / np.linalg.norm(d)


def slab(origin, direction, center, size, yaw, eps=1e-5):
    """Ray vs closed oriented box by the slab method in float64.

    Returns (face, distance, inside, clear): face -1 and distance inf on a miss. `clear` is False
    when float32 rounding could change the answer: the ray grazes the box (entry and exit within
    `eps`), starts within `eps` of its surface or just in front of/behind it, or hits within
    `eps` of an edge (where either neighbouring face is a fair answer).
    """
    o = to_local(np.asarray(origin)[None, :], center, yaw)[0]
    d = np.asarray(direction, dtype=np.float64) @ rot_y(yaw)
    d = d / np.linalg.norm(d)
    h = np.asarray(size, dtype=np.float64) / 2
    t_near, t_far, near_face, far_face = -np.inf, np.inf, -1, -1
    for i in range(3):
        if d[i] == 0.0:
            if abs(o[i]) > h[i]:
                return -1, np.inf, False, abs(abs(o[i]) - h[i]) > eps
            continue
        t1, t2 = (-h[i] - o[i]) / d[i], (h[i] - o[i]) / d[i]
        lo, hi = min(t1, t2), max(t1, t2)
        if lo > t_near:
            t_near, near_face = lo, (NEG_FACE[i] if d[i] > 0 else POS_FACE[i])
        if hi < t_far:
            t_far, far_face = hi, (POS_FACE[i] if d[i] > 0 else NEG_FACE[i])
    clear = abs(t_far - t_near) > eps and abs(t_far) > eps and abs(t_near) > eps
    clear = clear and abs(float(np.min(np.abs(np.abs(o) - h)))) > eps
    if t_near > t_far or t_far < 0:
        return -1, np.inf, False, clear
    inside = bool(np.all(np.abs(o) <= h))
    face, t = (far_face, t_far) if inside else (near_face, t_near)
    p = o + d * t
    on_bounds = np.sum(np.abs(np.abs(p) - h) <= eps)
    return face, t, inside, clear and on_bounds <= 1
