#!/usr/bin/env python3
"""bench_binding.py — the capturekit Python binding per call against raw ctypes (run by `make bench`).

For each call a rig makes, the same work three ways, interleaved in one run:

  binding   the public call (``capturekit.ray_box(ray, box)``, ``Scheduler.update(t, pose, box=box)``,
            ...) with the arguments a rig has: (4, 4) float32 pose arrays, tuples, Intrinsics,
            Box, Ray, numpy images and depth maps;
  raw       ctypes on its own ``CDLL`` of the same library: function objects fetched once,
            argument structs built once (pose, intrinsics, box, ray, frame structs with the
            image and depth pointers already set), the status checked, and the outputs read
            into plain Python values (a tuple of floats, a list of 16 for a matrix) -- the
            least a hand-written rig does to use an answer;
  call      the raw call alone (status check, outputs not read), for scale.

Reported: median microseconds per call of REPS interleaved repetitions, and the median of the
per-repetition ratios binding / raw (the target: <= 3x for the scalar calls, <= 2x for the
per-frame calls). Exit status 1 when a target is missed (``--no-fail`` to only report).
"""
import argparse
import ctypes
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

import capturekit as ck
from capturekit import _ffi

REPS = 9
MIN_SECONDS = 0.02
SCALAR_TARGET = 3.0
FRAME_TARGET = 2.0

P = ctypes.POINTER
f32, i32, u32, f64 = ctypes.c_float, ctypes.c_int32, ctypes.c_uint32, ctypes.c_double


def raw_library(path):
    """Function objects of a separate CDLL (the binding's declarations are not involved)."""
    lib = ctypes.CDLL(path)
    protos = {
        "ck_ray_from_pixel": [P(_ffi.ck_ray), P(_ffi.ck_mat4), P(_ffi.ck_intrinsics), f32, f32],
        "ck_ray_box": [P(_ffi.ck_hit), P(_ffi.ck_ray), P(_ffi.ck_box)],
        "ck_ray_plane": [P(_ffi.ck_hit), P(_ffi.ck_ray), _ffi.ck_vec3, _ffi.ck_vec3],
        "ck_box_set_center": [P(_ffi.ck_box), _ffi.ck_vec3],
        "ck_box_set_size": [P(_ffi.ck_box), _ffi.ck_vec3],
        "ck_box_rotate": [P(_ffi.ck_box), f32],
        "ck_pose_inverse": [P(_ffi.ck_mat4), P(_ffi.ck_mat4)],
        "ck_mat4_multiply": [P(_ffi.ck_mat4), P(_ffi.ck_mat4), P(_ffi.ck_mat4)],
        "ck_pose_yaw_pitch_roll": [P(f32), P(f32), P(f32), P(_ffi.ck_mat4)],
        "ck_scheduler_create": [P(_ffi.ck_scheduler_p), ctypes.c_void_p],
        "ck_scheduler_frame_init_sized": [P(_ffi.ck_scheduler_frame), ctypes.c_size_t],
        "ck_scheduler_update": [P(_ffi.ck_guidance), _ffi.ck_scheduler_p, P(_ffi.ck_scheduler_frame)],
        "ck_scheduler_free": [_ffi.ck_scheduler_p],
        "ck_coverage_create": [P(_ffi.ck_coverage_p), P(_ffi.ck_box), ctypes.c_void_p],
        "ck_coverage_add_view": [P(i32), _ffi.ck_coverage_p, P(_ffi.ck_mat4), P(_ffi.ck_intrinsics), f64],
        "ck_coverage_free": [_ffi.ck_coverage_p],
        "ck_session_options_init_sized": [P(_ffi.ck_session_options), ctypes.c_size_t, i32],
        "ck_session_create": [P(_ffi.ck_session_p), ctypes.c_char_p, P(_ffi.ck_session_options), P(_ffi.ck_box)],
        "ck_session_frame_init_sized": [P(_ffi.ck_session_frame), ctypes.c_size_t],
        "ck_session_process": [P(_ffi.ck_session_result), _ffi.ck_session_p, P(_ffi.ck_session_frame)],
        "ck_session_close": [_ffi.ck_session_p],
    }
    fns = {}
    for name, argtypes in protos.items():
        fn = lib[name]
        fn.argtypes = argtypes
        fn.restype = i32
        fns[name] = fn
    fns["ck_last_error_message"] = lib.ck_last_error_message
    fns["ck_last_error_message"].restype = ctypes.c_char_p
    return fns


def ok(raw, status, what):
    if status < 0:
        raise RuntimeError(f"{what}: {status} {raw['ck_last_error_message']()}")


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def calibrate(fn):
    fn()
    calls = 16
    while per_call(fn, calls) * calls < MIN_SECONDS / 4:
        calls *= 2
    return max(16, int(MIN_SECONDS / per_call(fn, calls)))


def build_cases(raw, workdir):
    """[(name, kind, binding, raw, call)] with every state (handles, counters) inside the closures."""
    pose = ck.look_at((0.55, 0.15, 0.95), (0.02, -0.5, -0.05))  # (4, 4) float32, as a rig has it
    k = ck.Intrinsics(1450.0, 1450.0, 959.5, 719.5, 1920, 1440)
    box = ck.Box((0.0, -0.5, 0.0), (0.6, 0.5, 0.8), 0.52)
    ray = ck.ray_from_pixel(pose, k, 960.5, 720.5)
    depth = np.full((192, 256), 1.2, np.float32)
    rgb = np.random.default_rng(1).integers(0, 256, (1440, 1920, 3), dtype=np.uint8)

    c_pose = _ffi.ck_mat4.from_buffer_copy(np.ascontiguousarray(pose.T))
    c_k = _ffi.ck_intrinsics(k.fx, k.fy, k.cx, k.cy, k.width, k.height)
    c_box = _ffi.ck_box.from_buffer_copy(box._c)
    c_ray = _ffi.ck_ray(_ffi.ck_vec3(*ray.origin.tolist()), _ffi.ck_vec3(*ray.direction.tolist()))
    out_ray, hit, out_m = _ffi.ck_ray(), _ffi.ck_hit(), _ffi.ck_mat4()
    cases = []

    # -- scalar calls -------------------------------------------------------------------------
    fn = raw["ck_ray_from_pixel"]

    def r_ray():
        s = fn(out_ray, c_pose, c_k, 960.5, 720.5)
        ok(raw, s, "ray_from_pixel")
        o, d = out_ray.origin, out_ray.direction
        return (o.x, o.y, o.z), (d.x, d.y, d.z)

    cases.append(("ray_from_pixel(pose, k, u, v)", "scalar", lambda: ck.ray_from_pixel(pose, k, 960.5, 720.5), r_ray,
                  lambda: ok(raw, fn(out_ray, c_pose, c_k, 960.5, 720.5), "")))

    def hit_tuple(s):
        if s == _ffi.CK_MISS:
            return None
        p = hit.point
        return (p.x, p.y, p.z), hit.distance, hit.face, hit.inside

    f_box = raw["ck_ray_box"]

    def r_box():
        s = f_box(hit, c_ray, c_box)
        ok(raw, s, "ray_box")
        return hit_tuple(s)

    cases.append(("ray_box(ray, box)", "scalar", lambda: ck.ray_box(ray, box), r_box,
                  lambda: ok(raw, f_box(hit, c_ray, c_box), "")))

    f_plane = raw["ck_ray_plane"]
    c_pt, c_n = _ffi.ck_vec3(0.0, -0.5, 0.0), _ffi.ck_vec3(0.0, 1.0, 0.0)
    pt, nrm = (0.0, -0.5, 0.0), (0.0, 1.0, 0.0)

    def r_plane():
        s = f_plane(hit, c_ray, c_pt, c_n)
        ok(raw, s, "ray_plane")
        return hit_tuple(s)

    cases.append(("ray_plane(ray, point, normal) (tuples)", "scalar", lambda: ck.ray_plane(ray, pt, nrm), r_plane,
                  lambda: ok(raw, f_plane(hit, c_ray, c_pt, c_n), "")))

    edit = ck.Box((0.0, -0.5, 0.0), (0.6, 0.5, 0.8), 0.52)
    c_edit = _ffi.ck_box.from_buffer_copy(edit._c)
    f_center, f_size, f_rot = raw["ck_box_set_center"], raw["ck_box_set_size"], raw["ck_box_rotate"]
    c_center, c_size = _ffi.ck_vec3(0.1, -0.5, 0.0), _ffi.ck_vec3(0.6, 0.5, 0.8)
    center, size = (0.1, -0.5, 0.0), (0.6, 0.5, 0.8)
    center_arr = np.array(center, np.float32)
    cases.append(("Box.set_center((x, y, z))", "scalar", lambda: edit.set_center(center),
                  lambda: ok(raw, f_center(c_edit, c_center), ""), None))
    cases.append(("Box.set_center(float32 array (3,))", "scalar", lambda: edit.set_center(center_arr),
                  lambda: ok(raw, f_center(c_edit, c_center), ""), None))
    cases.append(("Box.set_size((x, y, z))", "scalar", lambda: edit.set_size(size),
                  lambda: ok(raw, f_size(c_edit, c_size), ""), None))
    cases.append(("Box.rotate(delta)", "scalar", lambda: edit.rotate(1e-3),
                  lambda: ok(raw, f_rot(c_edit, 1e-3), ""), None))

    f_inv, f_mul, f_ypr = raw["ck_pose_inverse"], raw["ck_mat4_multiply"], raw["ck_pose_yaw_pitch_roll"]

    def r_inv():
        ok(raw, f_inv(out_m, c_pose), "pose_inverse")
        return out_m.m[:]

    def r_mul():
        ok(raw, f_mul(out_m, c_pose, c_pose), "mat4_multiply")
        return out_m.m[:]

    yaw, pitch, roll = f32(), f32(), f32()

    def r_ypr():
        ok(raw, f_ypr(yaw, pitch, roll, c_pose), "yaw_pitch_roll")
        return yaw.value, pitch.value, roll.value

    cases.append(("pose_inverse(pose)", "scalar", lambda: ck.pose_inverse(pose), r_inv,
                  lambda: ok(raw, f_inv(out_m, c_pose), "")))
    cases.append(("mat4_multiply(a, b)", "scalar", lambda: ck.mat4_multiply(pose, pose), r_mul,
                  lambda: ok(raw, f_mul(out_m, c_pose, c_pose), "")))
    cases.append(("yaw_pitch_roll(pose)", "scalar", lambda: ck.yaw_pitch_roll(pose), r_ypr,
                  lambda: ok(raw, f_ypr(yaw, pitch, roll, c_pose), "")))

    # -- per-frame calls ----------------------------------------------------------------------
    dt = 1.0 / 60.0
    for with_depth in (False, True):
        sched = ck.Scheduler()
        handle = _ffi.ck_scheduler_p()
        ok(raw, raw["ck_scheduler_create"](handle, None), "ck_scheduler_create")
        frame = _ffi.ck_scheduler_frame()
        ok(raw, raw["ck_scheduler_frame_init_sized"](frame, ctypes.sizeof(frame)), "ck_scheduler_frame_init_sized")
        frame.tracking = 2
        frame.pose = c_pose
        frame.box = ctypes.pointer(c_box)
        if with_depth:
            frame.depth = _ffi.ck_depth_map(depth.ctypes.data, 256, 192, 0, _ffi.CK_FORMAT_DEPTH_F32, 0)
        guidance = _ffi.ck_guidance()
        f_upd = raw["ck_scheduler_update"]
        clock = [0.0, 0.0, 0.0]
        kw = {"box": box, "depth": depth} if with_depth else {"box": box}

        def b_upd(sched=sched, kw=kw, clock=clock):
            clock[0] += dt
            return sched.update(clock[0], pose, **kw)

        def r_upd(handle=handle, frame=frame, clock=clock):
            clock[1] += dt
            frame.timestamp = clock[1]
            ok(raw, f_upd(guidance, handle, frame), "update")
            g = guidance
            return (g.capture, g.band, g.flags, g.captures, g.speed, g.angular_speed, g.pitch, g.interval,
                    g.next_capture_in, g.median_depth)

        def c_upd(handle=handle, frame=frame, clock=clock):
            clock[1] += dt
            frame.timestamp = clock[1]
            ok(raw, f_upd(guidance, handle, frame), "update")

        name = "Scheduler.update(t, pose, box=box" + (", depth=256x192 f32)" if with_depth else ")")
        cases.append((name, "frame", b_upd, r_upd, c_upd))

    cov = ck.Coverage(box)
    c_cov = _ffi.ck_coverage_p()
    ok(raw, raw["ck_coverage_create"](c_cov, c_box, None), "ck_coverage_create")
    f_add = raw["ck_coverage_add_view"]
    face = i32()
    cclock = [0.0, 0.0, 0.0]

    def b_add():
        cclock[0] += dt
        return cov.add_view(pose, k, cclock[0])

    def r_add():
        cclock[1] += dt
        ok(raw, f_add(face, c_cov, c_pose, c_k, cclock[1]), "add_view")
        return face.value

    def c_add():
        cclock[1] += dt
        ok(raw, f_add(face, c_cov, c_pose, c_k, cclock[1]), "add_view")

    cases.append(("Coverage.add_view(pose, k, t)", "frame", b_add, r_add, c_add))

    session = ck.Session(os.path.join(workdir, "binding"), box=box)
    opts = _ffi.ck_session_options()
    ok(raw, raw["ck_session_options_init_sized"](opts, ctypes.sizeof(opts), 0), "ck_session_options_init_sized")
    ds = _ffi.defaults("ck_dataset_options_init", _ffi.ck_dataset_options)
    ds.start_time_unix = time.time()
    opts.dataset = ctypes.pointer(ds)
    c_ses = _ffi.ck_session_p()
    ok(raw, raw["ck_session_create"](c_ses, os.fsencode(os.path.join(workdir, "raw")), opts, c_box),
       "ck_session_create")
    sf = _ffi.ck_session_frame()
    ok(raw, raw["ck_session_frame_init_sized"](sf, ctypes.sizeof(sf)), "ck_session_frame_init_sized")
    sf.tracking = 2
    sf.pose = c_pose
    sf.intrinsics = c_k
    sf.image = _ffi.ck_image(rgb.ctypes.data, 1920, 1440, 0, _ffi.CK_IMAGE_FORMAT_RGB8, 0)
    sf.depth = _ffi.ck_depth_map(depth.ctypes.data, 256, 192, 0, _ffi.CK_FORMAT_DEPTH_F32, 0)
    ok(raw, _ffi.lib.ck_intrinsics_scale(sf.depth_intrinsics, c_k, 256, 192), "ck_intrinsics_scale")
    result = _ffi.ck_session_result()
    f_proc = raw["ck_session_process"]
    sclock = [0.0, 0.0, 0.0]

    def b_proc():
        sclock[0] += dt
        return session.process(sclock[0], pose, k, rgb=rgb, depth=depth)

    def r_proc():
        sclock[1] += dt
        sf.timestamp = sclock[1]
        ok(raw, f_proc(result, c_ses, sf), "process")
        r, g = result, result.guidance
        return (r.captured, r.pass_, r.frame_id, r.coverage, r.minutes_left, r.events, r.image_path,
                (g.capture, g.band, g.flags, g.captures, g.speed, g.angular_speed, g.pitch, g.interval,
                 g.next_capture_in, g.median_depth))

    def c_proc():
        sclock[1] += dt
        sf.timestamp = sclock[1]
        ok(raw, f_proc(result, c_ses, sf), "process")

    cases.append(("Session.process(t, pose, k, rgb=1920x1440x3, depth=256x192)", "frame", b_proc, r_proc, c_proc))

    def close():
        sched.close()
        cov.close()
        session.close()
        raw["ck_coverage_free"](c_cov)
        raw["ck_session_close"](c_ses)

    return cases, close


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=REPS)
    parser.add_argument("--no-fail", action="store_true", help="report only; exit 0 when a target is missed")
    args = parser.parse_args()
    raw = raw_library(_ffi.library_path)
    workdir = tempfile.mkdtemp(prefix="ck-bench-binding-")
    try:
        cases, close = build_cases(raw, workdir)
        try:
            calls = [[calibrate(fn) if fn else 0 for fn in case[2:]] for case in cases]
            samples = [([], [], [], []) for _ in cases]
            for _ in range(args.reps):
                for i, (name, kind, b, r, c) in enumerate(cases):
                    tb, tr = per_call(b, calls[i][0]), per_call(r, calls[i][1])
                    tc = per_call(c, calls[i][2]) if c else float("nan")
                    s = samples[i]
                    s[0].append(tb * 1e6)
                    s[1].append(tr * 1e6)
                    s[2].append(tc * 1e6)
                    s[3].append(tb / tr)
        finally:
            close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"capturekit binding vs raw ctypes (CaptureKit {ck.__version__}, Python {sys.version.split()[0]}, "
          f"numpy {np.__version__}; median of {args.reps} interleaved repetitions of >= {MIN_SECONDS * 1e3:.0f} ms; "
          f"load {load:.1f})")
    print(f"\n{'call':<62} {'binding':>8} {'raw':>8} {'call':>8} {'ratio':>6} {'target':>7}")
    print(f"{'':<62} {'us':>8} {'us':>8} {'us':>8}")
    missed = []
    for (name, kind, *_), s in zip(cases, samples):
        ratio = statistics.median(s[3])
        target = SCALAR_TARGET if kind == "scalar" else FRAME_TARGET
        mark = "" if ratio <= target else "  << above target"
        if mark:
            missed.append(name)
        call = statistics.median(s[2])
        call_s = "-" if call != call else f"{call:8.2f}"
        print(f"{name:<62} {statistics.median(s[0]):8.2f} {statistics.median(s[1]):8.2f} {call_s:>8} "
              f"{ratio:6.2f} {'<= ' + format(target, '.0f') + 'x':>7}{mark}")
    print("\nraw: prebuilt argument structs, status checked, outputs read into Python values; "
          "call: the raw call alone. Box edits have no output: raw is the call.")
    if missed:
        print(f"{len(missed)} call(s) above target")
        return 0 if args.no_fail else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
