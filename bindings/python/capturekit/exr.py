"""A minimal OpenEXR writer for depth maps: one FLOAT channel, scanline, uncompressed.

``write_exr(path, metres)`` writes an (h, w) float32 array as the single channel ``Z`` (the
depth channel name of OpenEXR's conventions), readable by OpenEXR, OpenCV, Blender and
nerfstudio's tooling. Uncompressed keeps it exact and dependency-free (depth maps are small).
"""

from __future__ import annotations

import os
import struct

import numpy as np

__all__ = ["write_exr"]


def _attr(name: str, kind: str, value: bytes) -> bytes:
    return name.encode() + b"\0" + kind.encode() + b"\0" + struct.pack("<i", len(value)) + value


def write_exr(path, metres, channel: str = "Z") -> None:
    """Writes ``metres`` ((h, w) float32, 0 = no depth) to ``path`` (replaced atomically)."""
    a = np.ascontiguousarray(metres, dtype="<f4")
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"expected an (h, w) array, got shape {a.shape}")
    h, w = a.shape
    chlist = channel.encode() + b"\0" + struct.pack("<iB3xii", 2, 0, 1, 1) + b"\0"  # 2 = FLOAT
    box = struct.pack("<iiii", 0, 0, w - 1, h - 1)
    header = (b"\x76\x2f\x31\x01" + struct.pack("<i", 2)
              + _attr("channels", "chlist", chlist)
              + _attr("compression", "compression", b"\0")
              + _attr("dataWindow", "box2i", box)
              + _attr("displayWindow", "box2i", box)
              + _attr("lineOrder", "lineOrder", b"\0")
              + _attr("pixelAspectRatio", "float", struct.pack("<f", 1.0))
              + _attr("screenWindowCenter", "v2f", struct.pack("<ff", 0.0, 0.0))
              + _attr("screenWindowWidth", "float", struct.pack("<f", 1.0))
              + b"\0")
    row = 4 * w
    first = len(header) + 8 * h
    offsets = np.arange(h, dtype="<u8") * (8 + row) + first
    blocks = bytearray()
    for y in range(h):
        blocks += struct.pack("<ii", y, row) + a[y].tobytes()
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header + offsets.tobytes() + bytes(blocks))
    os.replace(tmp, path)
