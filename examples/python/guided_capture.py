"""A simulated guided capture with CaptureKit's scheduler and coverage (the Python twin of
examples/c/guided_capture.c).

An operator orbits a chair-sized box at 60 Hz: first too fast, then at a good pace with the phone
held high, then lower. Every frame goes to Scheduler.update(); captured frames go to
Coverage.add_view(). Prompts are printed as they fire, then each face's progress and colour, the
dial, and where to go next.

Run: CAPTUREKIT_LIBRARY=.build-dist/release/libcapturekit.so PYTHONPATH=bindings/python \\
     python3 examples/python/guided_capture.py
"""

import math

import numpy as np

import capturekit as ck


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
    box = ck.Box(center=(0, 0.5, 0), size=(0.6, 1.0, 0.6), yaw=math.radians(20), floor=0.0)
    camera = ck.Intrinsics(fx=1500, fy=1500, cx=960, cy=720, width=1920, height=1440)
    radius, azimuth, captures = 1.8, 0.0, 0
    print(f"CaptureKit {ck.version()}: guided capture around {box}")
    with ck.Scheduler(ck.Preset.OBJECT_CAPTURE) as scheduler, ck.Coverage(box) as coverage:
        for i in range(60 * 75):
            t = i / 60
            speed, height = (0.7 if t < 6 else 0.45), (1.75 if t < 33 else 0.8)
            azimuth += speed / radius / 60
            eye = box.center + (-math.sin(azimuth + box.yaw) * radius, 0, -math.cos(azimuth + box.yaw) * radius)
            eye[1] = height
            pose = look_at(eye, box.center)
            guidance = scheduler.update(t, pose, ck.Tracking.NORMAL, box=box)
            if guidance.capture:
                captures += 1
                coverage.add_view(pose, camera, t)
            for event in scheduler.events() + coverage.events():
                detail = f" ({ck.Face(event.index).name.lower()})" if event.code == ck.EventCode.SIDE_COMPLETED else ""
                print(f"  t={event.timestamp:6.2f} s  {event.code.name:<16} {event.text}{detail}")

        summary = coverage.summary()
        print(f"\n{captures} captures; completion {summary.completion:.0%}, dial {summary.dial_fraction:.0%} filled, "
              f"cells {summary.cell_fraction:.0%} seen")
        for face in ck.Face:
            if face is ck.Face.NONE:
                continue
            fc = coverage.face(face)
            r, g, b = fc.color
            print(f"  {face.name.lower():<7} {fc.count:3d} views  {fc.progress:4.0%}  colour ({r:.2f}, {g:.2f}, {b:.2f})"
                  f"  opacity {fc.opacity:.2f}{'  done' if fc.completed else ''}")
        for ring, row in reversed(list(enumerate(coverage.dial()))):
            print(f"  ring {ring} " + "".join("." if n == 0 else str(min(n, 9)) for n in row))
        hint = coverage.hint(pose)
        side = "left" if hint.move_angle >= 0 else "right"
        level = ", higher" if hint.ring_delta > 0 else ", lower" if hint.ring_delta < 0 else ""
        print(f"next: walk {side} ~{math.degrees(abs(hint.move_angle)):.0f} deg{level}")
        luma = (np.indices((192, 256)).sum(axis=0) % 16 * 16).astype(np.uint8)
        print(f"sharpness of a test pattern: {ck.sharpness_score(luma):.0f}")


if __name__ == "__main__":
    main()
