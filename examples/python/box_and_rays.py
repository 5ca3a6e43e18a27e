"""CaptureKit from Python: a box on the floor, a camera looking at it, rays from its pixels.

Run after `make lib`:
    CAPTUREKIT_LIBRARY=.build-dist/release/libcapturekit.so PYTHONPATH=bindings/python \
        python3 examples/python/box_and_rays.py
"""

import math

import numpy as np

import capturekit as ck

print(f"capturekit {ck.version()} loaded from {ck.library_path}")

# 1. A 60 x 40 x 50 cm box standing on a floor 1.2 m below the origin, 2 m ahead (-z).
box = ck.Box(center=(0.0, 0.0, -2.0), size=(0.6, 0.4, 0.5), floor=-1.2)
print("new box:      ", box)

# 2. Edit it as a UI would: turn its front (local -z) towards us and 30 degrees further, make it
#    taller (the bottom stays on the floor), pull the front face 10 cm out, nudge it 20 cm right.
box.rotate_degrees(180 + 30)
box.extend_face(ck.Face.TOP, 0.2)
box.extend_face(ck.Face.FRONT, 0.1)
box.translate((0.2, 0.0, 0.0))
print("edited box:   ", box)
print("corners (m):\n", np.round(box.corners(), 3))

# 3. A camera 1.7 m above the floor, about 2 m from the box, looking at its centre (camera-to-world pose,
#    OpenGL axes: the camera looks down its -z axis). Matrices are plain M[row, column] arrays.
eye, target = np.array([0.8, 0.5, 0.0]), box.center
back = (eye - target) / np.linalg.norm(eye - target)
right = np.cross((0.0, 1.0, 0.0), back)
right /= np.linalg.norm(right)
pose = np.eye(4)
pose[:3, :3] = np.column_stack([right, np.cross(back, right), back])
pose[:3, 3] = eye
yaw, pitch, roll = (math.degrees(a) for a in ck.yaw_pitch_roll(pose))
print(f"camera: yaw {yaw:.1f} deg, pitch {pitch:.1f} deg, roll {roll:.1f} deg")

# 4. The 1920x1440 RGB intrinsics, and the same camera at the 256x192 depth resolution.
rgb = ck.Intrinsics(fx=1594.7, fy=1594.7, cx=960.0, cy=720.0, width=1920, height=1440)
depth = rgb.scale(256, 192)

# 5. The centre ray: which face does the operator look at, and how far away is it?
ray = ck.ray_from_pixel(pose, rgb, rgb.width / 2, rgb.height / 2)
hit = ck.ray_box(ray, box)
if hit is None:
    print("centre ray: misses the box")
else:
    print(f"centre ray: {hit.face.name} face at {hit.distance:.3f} m, point {np.round(hit.point, 3)}")

# 6. Every pixel of the depth-sized grid in one call, and a per-face histogram.
faces, distances = ck.raycast_box_grid(pose, depth, box)
print(f"grid {faces.shape[1]}x{faces.shape[0]}: box covers {100 * np.mean(faces >= 0):.1f}% of the image")
for face in ck.Face:
    n = int(np.count_nonzero(faces == face))
    if n:
        near = f", nearest {distances[faces == face].min():.3f} m" if face != ck.Face.NONE else ""
        print(f"  {face.name:<6} {n:6d} px{near}")

# 7. Tap to place: the operator taps the floor at the bottom-left of the screen; the box moves there.
hit = box.place_at_pixel(pose, rgb, 500.0, 1300.0)
print(f"tap at (500, 1300): floor hit at {np.round(hit.point, 3)}; box now {box}" if hit else "tap missed the floor")
