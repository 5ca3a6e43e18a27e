#!/usr/bin/env python3
"""Writes the golden files of the native depth codec and .ckdepth format (see README.md).

Run from the repository root with the library built (`make lib`):

    CAPTUREKIT_LIBRARY=.build-dist/release/libcapturekit.so PYTHONPATH=bindings/python \
        python3 Tests/golden/make_golden.py

The inputs are written out explicitly below (no random generator, so they do not depend on the
NumPy version). The library writes frame version 4, so this script writes the `*.v4.*` files
(issue 24, second part) and the version-4-only frames `frame_mm_20x12.v4.ckframe` and
`frame_mm_32x24.v4.ckframe` (stored low bytes, added with the same files left unchanged). The version-3
files (`*.v3.*`, issue 24) were written by this script's revision of commit 557b642. The version-2 files
(`*.v2.*`, issue 10) were written by this script's revision of commit adee8de. The version-1 files (`frame_*_8x6.ckframe`, `recording_float16_8x6x3.ckdepth`) were
written by the version-1 library (commit fc44c14) with this script's earlier revision, from the
same inputs; they are frozen and never regenerated. Regenerating is only ever needed if the
formats change on purpose, which means a new format version and new file names.
"""

import ctypes
import ctypes.util
import os
import sys

import numpy as np

import capturekit as ck
from capturekit import depth

HERE = os.path.dirname(os.path.abspath(__file__))
W, H = 8, 6


def f16(metres):
    """float16 bit patterns (uint16) from a list of metres, 0 = invalid."""
    return np.array(metres, dtype=np.float16).view(np.uint16)


def float16_frame(k):
    """Frame k (0, 1, 2) of 8 x 6 float16 metres: a gentle ramp (nibble residuals), holes (0),
    residuals exactly at the escape boundaries (zigzag 14 -> nibble, 15 -> short escape 0,
    269 -> short escape 254, 270 -> long escape), big jumps in both directions (long escapes),
    the largest float16 (65504 m) and the smallest subnormal (2^-24 m)."""
    base = 0x3C00 + 16 * k  # 1.0 m (+ 16 ulps per frame)
    v = []
    for i in range(W * H):
        v.append(base + i // 2)  # ramp: residual 0 or +1
    b = np.array(v, dtype=np.int64)
    # residual boundaries (zigzag of +7 = 14, -8 = 15, -135 = 269, +135 = 270) after pixel 3
    b[4] = b[3] + 7
    b[5] = b[4] - 8
    b[6] = b[5] - 135
    b[7] = b[6] + 135
    # a step to 4.0 m and back (zigzag 4094 / 4093 ...: long escapes)
    b[12:16] = 0x4400 + k
    # extremes: 65504 m next to the smallest subnormal
    b[20] = 0x7BFF
    b[21] = 0x0001
    b[22] = 0x0400  # smallest normal
    holes = {0, 9, 10, 11, 30 + k, 31 + k, 47}  # first and last pixel, a run of three, moving holes
    for i in holes:
        b[i] = 0
    return b.astype(np.uint16)


def mm_frame():
    """8 x 6 uint16 millimetres: a ramp from 1500 mm with holes, boundary residuals, 65535 and 1."""
    b = np.array([1500 + 3 * i for i in range(W * H)], dtype=np.int64)
    b[5] = b[4] + 7
    b[6] = b[5] - 8
    b[7] = b[6] + 135
    b[16:20] = 65535
    b[20] = 1
    for i in (0, 1, 25, 26, 27, 47):
        b[i] = 0
    return b.astype(np.uint16)


def u8_frame():
    """8 x 6 uint8 confidence: rows of 2, 1, 0 with a few 255s."""
    b = np.array([(2 - (i // 16)) if i % 7 else 255 for i in range(W * H)], dtype=np.uint8)
    return b


def mm_frame_v3():
    """16 x 12 uint16 millimetres for version 3's paths without a palette (dense values): a ramp
    1000 + 16 y + x; row 0 with +4 mm on even columns (the row after it is predicted best by
    the slope, which averages that out, the rows after that by the plane); rows 8-11 with a
    130 mm step on every third diagonal (escapes); holes in runs and at row ends. The encoder
    picks all three row predictors on it."""
    W3, H3 = 16, 12
    b = np.zeros((H3, W3), np.int64)
    for y in range(H3):
        for x in range(W3):
            v = 1000 + 16 * y + x
            if y == 0 and x % 2 == 0:
                v += 4
            if y >= 8 and (x + y) % 3 == 0:
                v += 130
            b[y, x] = v
    for y, x in ((0, 9), (2, 5), (2, 6), (2, 7), (6, 15), (7, 0), (9, 3), (11, 15)):
        b[y, x] = 0
    return b.astype(np.uint16)


def mm_frame_v4():
    """20 x 12 uint16 millimetres for version 4's row layouts (no palette: dense values): a plane
    2000 + 5 y + 2 x (nibble rows; the width leaves the last group of each row half empty);
    rows 4 and 5 with a 0...288 mm pattern (byte rows with escapes); row 8 with a 600 mm step at
    x = 10 (a nibble row whose escapes have a high byte); holes in runs and at row ends."""
    W4, H4 = 20, 12
    b = np.zeros((H4, W4), np.int64)
    for y in range(H4):
        for x in range(W4):
            v = 2000 + 5 * y + 2 * x
            if y in (4, 5):
                v += ((x * 37 + y * 11) % 97) * 3
            if y == 8 and x >= 10:
                v += 600
            b[y, x] = v
    for y, x in ((0, 3), (2, 19), (6, 0), (6, 1), (6, 2), (6, 3), (6, 4), (9, 19), (11, 7)):
        b[y, x] = 0
    return b.astype(np.uint16)


def mm_frame_v4_stored():
    """32 x 24 uint16 millimetres whose residuals are wide and random-looking (a hash of x and y
    over 3000...6999 mm, holes at a stride of 53): byte rows with hundreds of escapes whose low
    bytes look random, so the encoder stores those after the zstd frame (word 6, bit 16)."""
    W5, H5 = 32, 24
    b = np.zeros((H5, W5), np.int64)
    for y in range(H5):
        for x in range(W5):
            i = y * W5 + x
            b[y, x] = 0 if i % 53 == 0 else 3000 + ((x * 73856093) ^ (y * 19349663) ^ (i * 83492791)) % 4000
    return b.astype(np.uint16)


TIMESTAMPS = np.array([1700000000.125, 1700000000.125 + 1 / 30, 1700000000.125 + 2 / 30], dtype="<f8")


def zstd_version_number():
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_versionNumber.restype = ctypes.c_uint
    return int(lib.ZSTD_versionNumber())


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    if sys.byteorder != "little":
        raise SystemExit("generate the golden files on a little-endian host")
    frames = [float16_frame(k).reshape(H, W) for k in range(3)]
    mm, u8 = mm_frame().reshape(H, W), u8_frame().reshape(H, W)
    mm3, mm4, mm5 = mm_frame_v3(), mm_frame_v4(), mm_frame_v4_stored()
    with depth.DepthCodec() as codec:  # level 0 = the default (zstd level 1)
        write("frame_float16_8x6.v4.ckframe", codec.encode(frames[0].view(np.float16)))
        write("frame_mm_8x6.v4.ckframe", codec.encode(mm))
        write("frame_u8_8x6.v4.ckframe", codec.encode(u8))
        write("frame_mm_16x12.v4.ckframe", codec.encode(mm3))
        write("frame_mm_20x12.v4.ckframe", codec.encode(mm4))
        write("frame_mm_32x24.v4.ckframe", codec.encode(mm5))
    write("frame_mm_16x12.u16", mm3.astype("<u2").tobytes())
    write("frame_mm_20x12.u16", mm4.astype("<u2").tobytes())
    write("frame_mm_32x24.u16", mm5.astype("<u2").tobytes())
    write("frame_float16_8x6.f16", frames[0].astype("<u2").tobytes())
    write("frame_mm_8x6.u16", mm.astype("<u2").tobytes())
    write("frame_u8_8x6.u8", u8.tobytes())

    path = os.path.join(HERE, "recording_float16_8x6x3.v4.ckdepth")
    with depth.DepthWriter(path, W, H, depth.DepthKind.FLOAT16, overwrite=True) as w:
        for f, t in zip(frames, TIMESTAMPS):
            w.append(f.view(np.float16), float(t))
    write("recording_float16_8x6x3.f16", np.stack(frames).astype("<u2").tobytes())
    write("recording_float16_8x6x3.timestamps.f64", TIMESTAMPS.tobytes())
    write("zstd_version.txt", f"{zstd_version_number()}\n".encode())
    print(f"golden files written to {HERE} with capturekit {ck.version()} and zstd {zstd_version_number()}")


if __name__ == "__main__":
    main()
