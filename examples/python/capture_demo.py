"""CaptureKit capture demo through the Python binding (the shorter twin of examples/c/capture_demo.c).

A camera orbits the synthetic scene's target once, 30 frames a second, at a walking pace that
changes slowly. Every frame goes to Session.process() with its LiDAR-like 256x192 depth and
confidence; when the session says "capture", the 320x240 image is rendered and written where the
session asked. Prompts are printed as they fire; at the end the folder holds transforms.json,
boundingbox.json, images/, depth/, the MultiScan streams and the events log.

Run: CAPTUREKIT_LIBRARY=.build-dist/release/libcapturekit.so PYTHONPATH=bindings/python \\
     python3 examples/python/capture_demo.py [output-folder]   (default: a new temporary folder)
"""

import json
import math
import os
import sys
import tempfile

import numpy as np

import capturekit as ck
from capturekit import DatasetOptions, Session


def look_at(eye, target):
    """Camera-to-world (4, 4) pose at `eye` looking at `target` (OpenGL axes: looks down -z)."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    back = (eye - target) / np.linalg.norm(eye - target)
    right = np.cross((0.0, 1.0, 0.0), back)
    right /= np.linalg.norm(right)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = right, np.cross(back, right), back, eye
    return pose


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(prefix="capturekit-demo-"), "dataset")
    fps, frames = 30.0, 30 * 22  # one orbit of ~22 s
    k_rgb = ck.Intrinsics(fx=260.0, fy=260.0, cx=160.0, cy=120.0, width=320, height=240)
    k_depth = k_rgb.scale(256, 192)
    with ck.Scene(7) as scene:
        box = scene.target()
        box.scale((1.15, 1.1, 1.15))  # the operator's box: a little larger than the object
        # The demo halves the reference intervals (3 / 2 / 1 s) so one orbit sees every side.
        sched = ck.SchedulerOptions(interval_slow=1.2, interval_medium=0.8, interval_fast=0.5)
        options = DatasetOptions(start_time_unix=1795000000.0, device_id="demo",
                                 device_name="CaptureKit synthetic rig", scene_description="synthetic box on a floor")
        captured, angle, last_second = 0, 0.0, -1
        print(f"CaptureKit {ck.__version__} capture demo (Python): one orbit, {frames} frames at {fps:.0f} Hz -> {out}")
        # Frames come faster than a camera's here: a full write queue waits rather than drops.
        with Session(out, box, scheduler=sched, dataset=options, queue_full=ck.QueueFull.WAIT) as session:
            for i in range(frames):
                t = i / fps
                speed = 0.29 + 0.11 * math.sin(t * 0.35)  # 0.18 .. 0.40 m/s on a 1.3 m radius
                angle += speed / 1.3 / fps
                pose = look_at((1.3 * math.sin(angle), 0.8, 1.3 * math.cos(angle)), (0.0, 0.25, 0.0))
                depth, conf = scene.render_depth(pose, k_depth, i)
                # No depth_intrinsics: the session scales k_rgb to the map's 256x192 (= k_depth), as
                # for ARKit, whose depth is aligned with its image.
                r = session.process(t, pose, k_rgb, depth=depth, confidence=conf)
                if r.captured:
                    # The session asked for the image: render it and write it where it said.
                    ck.write_png(os.path.join(out, r.image_path), scene.render_rgb(pose, k_rgb))
                    captured += 1
                for e in session.events():
                    print(f"  {e.timestamp:6.2f} s  event {int(e.code):3d}: {e.text}")
                if int(t) != last_second and int(t) % 4 == 0:
                    print(f"  {t:6.2f} s  speed {r.guidance.speed:.2f} m/s  captures {captured:3d}  "
                          f"coverage {100 * r.coverage:3.0f}%")
                last_second = int(t)
            session.finish()
            n = session.dataset.frame_count
    with open(os.path.join(out, "transforms.json")) as f:
        listed = len(json.load(f)["frames"])
    print(f"\ncaptured {captured} frames; dataset has {n}, transforms.json lists {listed}")
    if not (captured == n == listed and n > 0):
        sys.exit("capture_demo.py: frame counts disagree")
    for name in sorted(os.listdir(out)):
        p = os.path.join(out, name)
        print(f"  {name:40s} {'(folder)' if os.path.isdir(p) else str(os.path.getsize(p)) + ' bytes'}")
    print(f"open it with: ns-train nerfacto --data {out}")


if __name__ == "__main__":
    main()
