"""Splat-ready datasets: a session with depth and images finishes with sparse_pc.ply, named by
transforms.json's ply_file_path, and the COLMAP export's points3D.txt holds the same points.

The point cloud is loaded the way nerfstudio loads it (nerfstudio/data/dataparsers/
nerfstudio_dataparser.py and nerfstudio/cameras/camera_utils.py at nerfstudio commit 50e0e3c,
replicated step by step in NumPy below, as nerfstudio itself needs PyTorch): the poses of
transforms.json are oriented and centred (auto_orient_and_center_poses, method "up", centre
"poses"), scaled by 1 / max |translation| (auto_scale_poses), and the PLY's points are mapped by
the same transform_matrix and scale_factor (_load_3D_points). The test then checks that
points3D_xyz lands on the object in nerfstudio's frame: on the sphere (mapped the same way), and
where nerfstudio's own cameras see the sphere. Colours are checked against the images' colours (the
sphere is painted by its normal). points3D.txt is read with pycolmap when it is installed, else by
an independent parser of COLMAP's text format."""

import json
import math

import numpy as np
import pytest

import capturekit as ck

CENTRE = np.array([0.1, 0.6, -0.3])
RADIUS = 0.15
W, H = 256, 192
K = ck.Intrinsics(fx=200.0, fy=200.0, cx=128.0, cy=96.0, width=W, height=H)
VOXEL = 0.5 / 128


def look_at(eye, target=CENTRE):
    z = eye - target
    z /= np.linalg.norm(z)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, eye
    return m


def render(pose):
    """z-depth and an RGB image of the sphere painted by its normal ((n + 1) / 2 x 255); our own ray cast."""
    u = (np.arange(W) + 0.5 - K.cx) / K.fx
    v = -(np.arange(H) + 0.5 - K.cy) / K.fy
    uu, vv = np.meshgrid(u, v)
    d = np.stack([uu, vv, -np.ones_like(uu)], -1) @ pose[:3, :3].T
    o = pose[:3, 3] - CENTRE
    a, b, c = (d * d).sum(-1), 2 * (d @ o), o @ o - RADIUS ** 2
    disc = b * b - 4 * a * c
    t = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
    hit = (disc > 0) & (t > 0)
    n = (o + t[..., None] * d) / RADIUS
    rgb = np.where(hit[..., None], np.clip((n + 1) / 2 * 255, 0, 255), 40).astype(np.uint8)
    return np.where(hit, t, 0.0).astype(np.float32), rgb


def orbit():
    poses = []
    for ring, (n, el) in enumerate(((12, 15), (10, 45))):
        for i in range(n):
            a = 2 * math.pi * (i + 0.5 * ring) / n
            e = math.radians(el)
            eye = CENTRE + 1.0 * np.array([math.sin(a) * math.cos(e), math.sin(e), -math.cos(a) * math.cos(e)])
            poses.append(look_at(eye))
    return poses


# --- nerfstudio's loading steps (commit 50e0e3c), in NumPy ---------------------------------------

def rotation_matrix_between(a, b):
    """camera_utils.rotation_matrix_between."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    eps = 1e-6
    if np.sum(np.abs(v)) < eps:
        x = np.array([1.0, 0, 0]) if abs(a[0]) < eps else np.array([0, 1.0, 0])
        v = np.cross(a, x)
    v = v / np.linalg.norm(v)
    skew = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    theta = np.arccos(np.clip(np.dot(a, b), -1, 1))
    return np.eye(3) + np.sin(theta) * skew + (1 - np.cos(theta)) * (skew @ skew)


def auto_orient_and_center_poses(poses):
    """camera_utils.auto_orient_and_center_poses(method="up", center_method="poses")."""
    origins = poses[..., :3, 3]
    translation = np.mean(origins, axis=0)
    up = np.mean(poses[:, :3, 1], axis=0)
    up = up / np.linalg.norm(up)
    rotation = rotation_matrix_between(up, np.array([0, 0, 1.0]))
    transform = np.concatenate([rotation, rotation @ -translation[..., None]], axis=-1)
    return transform @ poses, transform


def nerfstudio_load(data_dir):
    """NerfstudioDataParser._generate_dataparser_outputs (defaults: orientation "up", centre
    "poses", auto_scale_poses, scale_factor 1) and _load_3D_points."""
    meta = json.loads((data_dir / "transforms.json").read_text())
    poses = np.array([np.array(f["transform_matrix"]) for f in meta["frames"]]).astype(np.float32)
    poses, transform_matrix = auto_orient_and_center_poses(poses)
    scale_factor = 1.0 / float(np.max(np.abs(poses[:, :3, 3])))
    poses[:, :3, 3] *= scale_factor
    assert "applied_transform" not in meta and "applied_scale" not in meta
    ply = data_dir / meta["ply_file_path"]
    xyz, rgb = read_ply_points(ply)
    points = np.concatenate([xyz, np.ones_like(xyz[..., :1])], -1) @ transform_matrix.T
    points *= scale_factor
    return poses, transform_matrix, scale_factor, points, rgb


def read_ply_points(path):
    """open3d.io.read_point_cloud when Open3D is installed (nerfstudio's reader), else our own
    parser of the binary little-endian layout the header declares."""
    try:
        import open3d as o3d
    except Exception:
        o3d = None
    if o3d is not None:
        pc = o3d.io.read_point_cloud(str(path))
        return np.asarray(pc.points, dtype=np.float32), (np.asarray(pc.colors) * 255).astype(np.uint8)
    data = path.read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode().split("\n")
    assert header[1] == "format binary_little_endian 1.0"
    count = next(int(h.split()[2]) for h in header if h.startswith("element vertex"))
    types = {"float": "<f4", "uchar": "u1"}
    names = [(h.split()[2], types[h.split()[1]]) for h in header if h.startswith("property")]
    rows = np.frombuffer(data, dtype=np.dtype(names), count=count, offset=end)
    return (np.stack([rows["x"], rows["y"], rows["z"]], 1).astype(np.float32),
            np.stack([rows["red"], rows["green"], rows["blue"]], 1))


def read_points3d_text(path):
    """COLMAP's points3D.txt, our own parser: POINT3D_ID X Y Z R G B ERROR TRACK[]."""
    pts = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        e = line.split()
        assert len(e) >= 8 and (len(e) - 8) % 2 == 0
        pts[int(e[0])] = (np.array([float(x) for x in e[1:4]]), np.array([int(x) for x in e[4:7]]), float(e[7]))
    return pts


@pytest.fixture(scope="module")
def splat_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("splat")
    box = ck.Box(CENTRE, (0.5, 0.5, 0.5), 0.0)
    s = ck.Session(root / "ds", box, stream_depth=False)
    captured = 0
    for i, pose in enumerate(orbit()):
        depth, rgb = render(pose)
        r = s.process(3.5 * i, pose, K, rgb=rgb, depth=depth, depth_intrinsics=K)
        captured += r.captured
    figures = s.surface().figures()
    s.finish()
    s.close()
    return root / "ds", captured, figures


def test_finish_writes_sparse_pc_named_by_transforms(splat_dataset):
    ds, captured, figures = splat_dataset
    assert captured >= 10, "the session captured too few frames for the test to mean anything"
    assert figures.from_depth
    meta = json.loads((ds / "transforms.json").read_text())
    assert meta["ply_file_path"] == "sparse_pc.ply"
    xyz, _ = read_ply_points(ds / "sparse_pc.ply")
    assert len(xyz) > 2000
    # World frame (the frames' frame): on the sphere, inside the box.
    r = np.linalg.norm(xyz - CENTRE, axis=1)
    assert np.all(np.abs(r - RADIUS) <= VOXEL * 0.87 + 1e-4)
    assert np.all(np.abs(xyz - CENTRE) <= 0.25 + 1e-6)


def test_nerfstudio_points3d_land_on_the_object(splat_dataset):
    ds, _, _ = splat_dataset
    poses, transform, scale, points, rgb = nerfstudio_load(ds)
    xyz = points[:, :3]
    # The sphere (and its box) mapped by nerfstudio's transform and scale.
    centre = (transform @ np.append(CENTRE, 1.0)) * scale
    r = np.linalg.norm(xyz - centre, axis=1)
    assert np.all(np.abs(r - RADIUS * scale) <= (VOXEL * 0.87 + 1e-4) * scale)
    local = (xyz / scale - transform[:, 3]) @ transform[:, :3]     # back through the rotation
    assert np.all(np.abs(local - CENTRE) <= 0.25 + 1e-5)
    # nerfstudio's own cameras (its oriented, centred, scaled poses) see the points on the sphere:
    # each point a camera faces projects inside that camera's silhouette of the sphere.
    meta = json.loads((ds / "transforms.json").read_text())
    hits = 0
    for f, c2w in zip(meta["frames"], poses):
        depth = np.asarray(render(np.asarray(f["transform_matrix"]))[0])
        cam = (xyz - c2w[:3, 3]) @ c2w[:3, :3]             # nerfstudio camera axes: OpenGL
        z = -cam[:, 2]
        u = K.cx + K.fx * cam[:, 0] / z
        v = K.cy - K.fy * cam[:, 1] / z
        normal = (xyz - centre) / np.linalg.norm(xyz - centre, axis=1, keepdims=True)
        facing = (normal * (c2w[:3, 3] - xyz)).sum(1) > 0.3 * np.linalg.norm(c2w[:3, 3] - xyz, axis=1)
        inside = facing & (u >= 1) & (v >= 1) & (u < W - 1) & (v < H - 1)
        ui, vi = u[inside].astype(int), v[inside].astype(int)
        assert np.mean(depth[vi, ui] > 0) > 0.98
        hits += inside.sum()
    assert hits > 1000
    # Colours: the images paint the sphere by its normal; each point's colour is that of its
    # surface (averaged over the views that saw it, within a voxel of it).
    world_normal = (local - CENTRE) / np.linalg.norm(local - CENTRE, axis=1, keepdims=True)
    want = np.clip((world_normal + 1) / 2 * 255, 0, 255)
    err = np.abs(rgb.astype(float) - want)
    assert np.median(err) < 4 and np.percentile(err, 90) < 30


def test_colmap_points3d_hold_the_point_cloud(splat_dataset, tmp_path):
    ds, _, _ = splat_dataset
    xyz, rgb = read_ply_points(ds / "sparse_pc.ply")
    out = tmp_path / "colmap"
    ck.export_colmap(ds, out)
    pts = read_points3d_text(out / "points3D.txt")
    assert sorted(pts) == list(range(1, len(xyz) + 1))
    got = np.array([pts[i + 1][0] for i in range(len(xyz))])
    col = np.array([pts[i + 1][1] for i in range(len(xyz))])
    assert np.allclose(got, xyz, atol=1e-6)
    assert np.array_equal(col, rgb)
    try:
        import pycolmap
    except Exception:  # pragma: no cover - pycolmap is a test-data tool, not a dependency
        return
    rec = pycolmap.Reconstruction(str(out))
    assert rec.num_points3D() == len(xyz)
    assert rec.num_images() == len(json.loads((ds / "transforms.json").read_text())["frames"])
    p = rec.points3D[1]
    assert np.allclose(p.xyz, xyz[0], atol=1e-6) and np.array_equal(np.asarray(p.color), rgb[0])


def test_camera_pixels_colour_the_point_cloud(tmp_path):
    """BGRA camera frames (ARKit / CoreVideo) colour the points as RGB, channel order kept."""
    s = ck.Session(tmp_path / "ds", ck.Box(CENTRE, (0.5, 0.5, 0.5), 0.0), stream_depth=False)
    for i, pose in enumerate(orbit()[:12]):
        depth, rgb = render(pose)
        bgra = np.concatenate([rgb[..., ::-1], np.full((H, W, 1), 255, np.uint8)], -1)
        s.process(3.5 * i, pose, K, bgra=np.ascontiguousarray(bgra), depth=depth, depth_intrinsics=K)
    s.finish()
    s.close()
    xyz, rgb = read_ply_points(tmp_path / "ds" / "sparse_pc.ply")
    assert len(xyz) > 1000
    n = (xyz - CENTRE) / np.linalg.norm(xyz - CENTRE, axis=1, keepdims=True)
    assert np.median(np.abs(rgb.astype(float) - np.clip((n + 1) / 2 * 255, 0, 255))) < 4
