"""How many of the elements a real depth frame makes does that same frame count as seen?

Each frame of the real sets (`benchmarks/real_depth.py`) is fused alone into `bench_surface.py`'s
box and then added as a view at its own pose: no element is hidden from the camera that measured
it, so every element it does not count is a fault of ck_surface_add_view's visibility rules
(BENCHMARKS.md, "A captured frame counts the surface it measured").

Usage: CAPTUREKIT_LIBRARY=... PYTHONPATH=bindings/python python3 benchmarks/surface_own_frame.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_surface as B  # noqa: E402
import real_depth  # noqa: E402

import capturekit as ck  # noqa: E402


def main():
    for name in real_depth.SETS:
        r = B.real_frames(name)
        if r is None:
            print(f"{name}: not imported (benchmarks/real_depth.py), skipped")
            continue
        k, _, centre, edge = r
        raw = real_depth.load(name)
        elements = seen = 0
        for frame in raw:
            m = frame.astype(np.float32)
            m = m if real_depth.kind(name) == "float16" else m / 1000
            s = ck.Surface(ck.Box(tuple(centre), (edge, edge, edge), 0.0))
            s.fuse(m, k, np.eye(4), timestamp=0)
            seen += s.add_view(np.eye(4), k, timestamp=0)
            elements += len(s.elements())
        if elements:
            print(f"{name}: {elements} elements, counted by the frame that made them {seen} ({100 * seen / elements:.2f} %)")


if __name__ == "__main__":
    main()
