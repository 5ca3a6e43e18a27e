"""Surface coverage fusion cost (issue 23): ck_surface_fuse per depth frame at 256 x 192 and 640 x 480,
against Open3D's CPU TSDF integration (UniformTSDFVolume, the same 0.5 m cube at the same voxel size,
128^3) on the same frames, in the same run, on one core (taskset by the Makefile; OMP_NUM_THREADS=1).

Frames: a 0.15 m sphere in a 0.5 m box, rendered to z-depth by a NumPy ray cast from an orbit at
0.7 m (the object fills about a third of the image; the rest is background at 2 m, outside the box).
Open3D is optional (PyPI open3d or open3d-cpu; it needs Debian's libgomp1 and libusb-1.0-0): without
it the peer column says so. Prints a Markdown table for BENCHMARKS.md.

A second table fuses real sensor depth that no one here generated: the sets of
benchmarks/real_depth.py that are imported on this machine (RealSense active stereo, Kinect
structured light, Azure Kinect time of flight, ARKit phone LiDAR). They come without poses, so
each set's first frame is fused 60 times from one pose (a still camera: frames of a moving
camera, or a turned pose, would put depth on a different surface each time and smear the map),
and the box is a cube around the camera axis at the median depth of the image's
centre, its edge 0.6 x that depth (about the central half of the image, the way an object fills
a capture). Sets that are not imported are left out (import: see benchmarks/real_depth.py).

A third table times what a captured view costs on the same frames: every 6th frame (10 of 60) is
also added as a view at its pose (ck_surface_add_view), and the figures are read after it (they
judge the reach of every element not yet well covered, from the rings of candidate views). On the
real sets the camera stands still, so no element is ever well covered and every element is judged
after every view: the worst case for the map's size.
"""

import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bindings", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capturekit as ck  # noqa: E402
import real_depth  # noqa: E402

CENTRE = np.array([0.0, 0.5, 0.0])
RADIUS = 0.15
FRAMES = int(os.environ.get("BENCH_SURFACE_FRAMES", "60"))


def look_at(eye):
    z = eye - CENTRE
    z /= np.linalg.norm(z)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, eye
    return m


def render(pose, w, h, f):
    u = (np.arange(w) + 0.5 - w / 2) / f
    v = -(np.arange(h) + 0.5 - h / 2) / f
    uu, vv = np.meshgrid(u, v)
    d = np.stack([uu, vv, -np.ones_like(uu)], -1) @ pose[:3, :3].T
    o = pose[:3, 3] - CENTRE
    a, b, c = (d * d).sum(-1), 2 * (d @ o), o @ o - RADIUS ** 2
    disc = b * b - 4 * a * c
    t = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
    return np.where((disc > 0) & (t > 0), t, 2.0).astype(np.float32)


def frames(w, h):
    f = 0.82 * w  # ARKit-like field of view (256 x 192: fx ~ 210)
    k = ck.Intrinsics(fx=f, fy=f, cx=w / 2, cy=h / 2, width=w, height=h)
    out = []
    for i in range(FRAMES):
        a = 2 * math.pi * i / FRAMES
        e = math.radians(20 + 15 * math.sin(3 * a))
        eye = CENTRE + 0.7 * np.array([math.sin(a) * math.cos(e), math.sin(e), -math.cos(a) * math.cos(e)])
        pose = look_at(eye)
        out.append((render(pose, w, h, f), pose))
    return k, out


def bench_ck(k, fr, centre=CENTRE, edge=0.5):
    s = ck.Surface(ck.Box(tuple(centre), (edge, edge, edge), 0.0))
    times = []
    for i, (d, pose) in enumerate(fr):
        t0 = time.perf_counter()
        s.fuse(d, k, pose, timestamp=i)
        times.append(time.perf_counter() - t0)
    return times, s.figures()


def bench_views(k, fr, centre=CENTRE, edge=0.5, every=6):
    """ck_surface_add_view + ck_surface_figures after fusing every `every`-th frame."""
    s = ck.Surface(ck.Box(tuple(centre), (edge, edge, edge), 0.0))
    times = []
    for i, (d, pose) in enumerate(fr):
        s.fuse(d, k, pose, timestamp=i)
        if i % every == every - 1:
            t0 = time.perf_counter()
            s.add_view(pose, k, timestamp=i)
            s.figures()
            times.append(time.perf_counter() - t0)
    return times, len(s.elements())


def view_row(label, k, fr, centre=CENTRE, edge=0.5):
    t, n = bench_views(k, fr, centre, edge)
    print(f"| {label} | {statistics.median(t) * 1e3:.1f} ms (max {max(t) * 1e3:.1f}) | {len(t)} | {n} |")


def bench_open3d(k, fr, voxel, centre=CENTRE, edge=0.5):
    try:
        import open3d as o3d
    except Exception as e:  # pragma: no cover
        return None, f"open3d not importable ({type(e).__name__})"
    vol = o3d.pipelines.integration.UniformTSDFVolume(
        length=edge, resolution=128, sdf_trunc=4 * voxel,
        color_type=o3d.pipelines.integration.TSDFVolumeColorType.NoColor,
        origin=(np.asarray(centre) - edge / 2).reshape(3, 1))
    intr = o3d.camera.PinholeCameraIntrinsic(k.width, k.height, k.fx, k.fy, k.cx, k.cy)
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    times = []
    for d, pose in fr:
        color = o3d.geometry.Image(np.zeros((k.height, k.width, 3), np.uint8))
        depth = o3d.geometry.Image(d)
        rgbd = o3d.geometry.RGBDImage.create_from_color_and_depth(color, depth, depth_scale=1.0, depth_trunc=5.0,
                                                                  convert_rgb_to_intensity=False)
        extrinsic = flip @ np.linalg.inv(pose)   # world -> OpenCV camera
        t0 = time.perf_counter()
        vol.integrate(rgbd, intr, extrinsic)
        times.append(time.perf_counter() - t0)
    return times, o3d.__version__


def real_frames(name):
    """A real set's frames as metres, with still-camera poses and the box around what it sees
    (see the module's docstring), or None when the set is not imported."""
    raw = real_depth.load(name)
    if raw is None:
        return None
    first = raw[0].astype(np.float32)
    metres = first if real_depth.kind(name) == "float16" else first / 1000
    h, w = metres.shape
    f = 0.82 * w
    k = ck.Intrinsics(fx=f, fy=f, cx=w / 2, cy=h / 2, width=w, height=h)
    centre_px = metres[h // 3: 2 * h // 3, w // 3: 2 * w // 3]
    z = float(np.median(centre_px[centre_px > 0]))
    fr = [(metres, np.eye(4))] * FRAMES
    return k, fr, np.array([0.0, 0.0, -z]), 0.6 * z


def row(label, k, fr, centre=CENTRE, edge=0.5):
    ck_t, fig = bench_ck(k, fr, centre, edge)
    o3_t, o3_note = bench_open3d(k, fr, fig.voxel_size, centre, edge)
    ck_med, ck_mean = statistics.median(ck_t) * 1e3, statistics.mean(ck_t) * 1e3
    if o3_t is None:
        peer, ratio = o3_note, "-"
    else:
        o_med, o_mean = statistics.median(o3_t) * 1e3, statistics.mean(o3_t) * 1e3
        peer, ratio = f"{o_med:.2f} ms ({o_mean:.2f}) [open3d {o3_note}]", f"{o_med / ck_med:.1f}x"
    print(f"| {label} | {ck_med:.3f} ms ({ck_mean:.3f}) | {peer} | {ratio} | {fig.memory_bytes / 2**20:.1f} MiB |")


def main():
    import argparse

    ap = argparse.ArgumentParser(description="ck_surface_fuse per frame against Open3D's TSDF integration")
    ap.add_argument("--real-only", action="store_true", help="only the real sets' table")
    ap.add_argument("--no-peer", action="store_true", help="leave Open3D out (e.g. to count instructions under callgrind)")
    ap.add_argument("--sets", nargs="*", help="real sets to fuse (default: every imported one)")
    args = ap.parse_args()
    global bench_open3d
    if args.no_peer:
        bench_open3d = lambda *a: (None, "left out (--no-peer)")  # noqa: E731
    print(f"Surface fusion, {FRAMES} frames per size, one core (affinity {sorted(os.sched_getaffinity(0))}), "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print()
    print("| depth frame | ck_surface_fuse median (mean) | Open3D UniformTSDFVolume.integrate median (mean) | ratio (medians) | map memory |")
    print("|---|---|---|---|---|")
    synthetic = [] if args.real_only else [(f"{w} x {h}", *frames(w, h)) for w, h in ((256, 192), (640, 480))]
    for label, k, fr in synthetic:
        row(label, k, fr)
    print()
    print("Real sensor depth (imported sets; still camera, box around the central half of the image):")
    print()
    print("| set (size) | ck_surface_fuse median (mean) | Open3D UniformTSDFVolume.integrate median (mean) | ratio (medians) | map memory |")
    print("|---|---|---|---|---|")
    real = []
    for name in args.sets or real_depth.SETS:
        got = real_frames(name)
        if got is None:
            print(f"| {name} | not imported | | | |")
            continue
        k, fr, centre, edge = got
        if -centre[2] > ck.SurfaceOptions().max_depth:
            print(f"| {name} | its first frame's centre is {-centre[2]:.1f} m away, beyond max_depth: left out | | | |")
            continue
        label = f"{name} ({k.width} x {k.height}, box {edge:.2f} m)"
        row(label, k, fr, centre, edge)
        real.append((label, k, fr, centre, edge))
    print()
    print("A captured view: ck_surface_add_view + ck_surface_figures, every 6th frame a view:")
    print()
    print("| frames | add_view + figures median (max) | views | elements at the end |")
    print("|---|---|---|---|")
    for label, k, fr in synthetic:
        view_row(label, k, fr)
    for label, k, fr, centre, edge in real:
        view_row(label, k, fr, centre, edge)


if __name__ == "__main__":
    main()
