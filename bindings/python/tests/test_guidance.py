"""Guided capture: Scheduler, Coverage, events, sharpness; handles, closing, errors; real data."""

import ctypes
import gc
import json
import math
import pathlib

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi
from capturekit.events import BLOCKING_OBJECT_CAPTURE, BLOCKING_ROOM_SCAN
from reference import look_at, slab

DATA = pathlib.Path(__file__).parent / "data"
NAN, INF = math.nan, math.inf


@pytest.fixture
def chair_box():
    return ck.Box(center=(0.0, 0.5, 0.0), size=(0.6, 1.0, 0.6), yaw=0.3, floor=0.0)


@pytest.fixture
def camera():
    return ck.Intrinsics(fx=1500, fy=1500, cx=960, cy=720, width=1920, height=1440)


def orbit(center, radius, height, azimuth):
    """Camera on a circle around `center` at dial azimuth (0 at -z, pi/2 at -x), looking at it."""
    c = np.asarray(center, dtype=float)
    eye = c + (-math.sin(azimuth) * radius, height, -math.cos(azimuth) * radius)
    return look_at(eye, c)


# -- scheduler -------------------------------------------------------------------------------


@pytest.mark.parametrize("speed, interval, band", [(0.18, 3, ck.SpeedBand.SLOW), (0.33, 2, ck.SpeedBand.MEDIUM), (0.45, 1, ck.SpeedBand.FAST)])
def test_orbit_captures_at_the_interval(chair_box, speed, interval, band):
    radius = 2.0
    lap = 2 * math.pi * radius / speed
    captures = []
    with ck.Scheduler() as s:
        for i in range(int((lap - 1) * 60)):
            t = i / 60
            g = s.update(t, orbit(chair_box.center, radius, 0.8, t * speed / radius), box=chair_box)
            if t > 1:
                assert g.band == band and g.speed == pytest.approx(speed, rel=0.01) and g.interval == interval
            if g.capture:
                captures.append(t)
                assert g.captures == len(captures)
    assert captures[0] == pytest.approx(3, abs=1 / 60 + 1e-9)
    gaps = np.diff(captures)
    assert np.all(gaps >= interval - 1e-6) and np.all(gaps <= interval + 1 / 60 + 1e-6)


def test_guidance_fields_and_prompts(chair_box):
    still = look_at((0, 1.2, -2), chair_box.center)
    with ck.Scheduler() as s:
        assert s.next_event() is None and s.events() == []
        for i in range(301):
            g = s.update(i / 60, still, ck.Tracking.NORMAL, box=chair_box)
        assert isinstance(g, ck.Guidance) and g.band is ck.SpeedBand.SLOW and g.flags == ck.Guide.SPEED_UP
        assert g.captures == 1 and g.speed == 0 and g.median_depth == 0
        assert g.pitch == pytest.approx(-math.atan2(0.7, 2), abs=1e-4)
        events = s.events()
        assert [e.code for e in events] == [ck.EventCode.SPEED_UP] * 3
        # Once it held 0.3 s within 0.75 s, then every 2 s; each may land one 60 Hz frame late.
        for n, e in enumerate(events):
            assert 0.3 + 2 * n - 1e-9 < e.timestamp < 0.3 + 2 * n + (n + 1) * 1.01 / 60
        assert events[0].text == "Move a little faster" == ck.event_string(ck.EventCode.SPEED_UP)
        assert s.events() == []


def test_every_scheduler_condition_through_the_binding(chair_box):
    """Blurry, tracking, point at the object, depth (with a padded depth map), tilt."""
    opts = ck.SchedulerOptions(min_sharpness=100.0)
    still = look_at((0, 1.2, -2), chair_box.center)
    k = ck.Intrinsics(fx=200, fy=200, cx=16, cy=12, width=32, height=24)
    padded = np.full((24, 40), 9.0, dtype=np.float32)[:, :32]  # a view with 160-byte rows
    padded[:] = 0.1
    padded[::3, ::2] = 0  # no depth: ignored
    cases = [
        (dict(sharpness=40.0), ck.Guide.BLURRY, ck.EventCode.BLURRY),
        (dict(tracking=ck.Tracking.LIMITED), ck.Guide.TRACKING_LIMITED, ck.EventCode.TRACKING_LIMITED),
        (dict(tracking=ck.Tracking.NOT_AVAILABLE), ck.Guide.TRACKING_NOT_AVAILABLE, ck.EventCode.TRACKING_NOT_AVAILABLE),
        (dict(depth=padded, depth_intrinsics=k), ck.Guide.TOO_CLOSE, ck.EventCode.TOO_CLOSE),
        (dict(depth=np.full((24, 32), 4.0, np.float32), depth_intrinsics=k), ck.Guide.TOO_FAR, ck.EventCode.TOO_FAR),
    ]
    for kwargs, flag, code in cases:
        with ck.Scheduler(opts) as s:
            for i in range(121):
                g = s.update(i / 60, still, box=chair_box, **kwargs)
            assert flag in g.flags and not g.capture and g.captures == 0, kwargs.keys()
            assert [e.code for e in s.events() if e.code != ck.EventCode.SPEED_UP] == [code]
    with ck.Scheduler() as s:
        g = s.update(0, look_at((0, 1.2, -2), (0, 1.2, -4)), box=chair_box)
        assert ck.Guide.POINT_AT_OBJECT in g.flags
        g = s.update(1, look_at((0, 0, 0), (0, 1, -1)))
        assert ck.Guide.TILT_DOWN in g.flags and g.pitch == pytest.approx(math.pi / 4, abs=1e-5)


def test_room_scan_preset_and_sideways():
    opts = ck.SchedulerOptions.preset(ck.Preset.ROOM_SCAN)
    assert opts.speed_fast == pytest.approx(0.8) and opts.box_view_angle_deg == 0
    assert opts.blocking_flags == BLOCKING_ROOM_SCAN and ck.SchedulerOptions().blocking_flags == BLOCKING_OBJECT_CAPTURE
    assert ck.SchedulerOptions.preset(ck.Preset.OBJECT_CAPTURE) == ck.SchedulerOptions()
    for preset_arg in (opts, ck.Preset.ROOM_SCAN):
        with ck.Scheduler(preset_arg) as s:
            for i in range(181):
                t = i / 60
                eye = np.array([-0.5 * t, 1.5, 0.0])
                g = s.update(t, look_at(eye, eye + (0, -0.2, -1)))
            assert ck.Guide.WALKING_SIDEWAYS_LEFT in g.flags
            ev = [e for e in s.events() if e.code == ck.EventCode.WALKING_SIDEWAYS_LEFT]
            assert ev and ev[0].value == pytest.approx(0.5, abs=0.01)


def test_drift_raises_state_until_reset():
    with ck.Scheduler() as s:
        for i in range(60):
            s.update(i / 60, look_at((0, 1.5, 0), (0, 1, -1)))
        g = s.update(1.0, look_at((11, 1.5, 0), (11, 1, -1)))
        assert g.flags == ck.Guide.DRIFT and not g.capture
        drift = [e for e in s.events() if e.code == ck.EventCode.DRIFT]
        assert len(drift) == 1 and drift[0].value == pytest.approx(11)
        with pytest.raises(ck.StateError) as info:
            s.update(1.1, look_at((11, 1.5, 0), (11, 1, -1)))
        assert info.value.message.startswith("ck_scheduler_update:") and "reset" in info.value.message
        s.reset()
        assert s.update(1.1, look_at((11, 1.5, 0), (11, 1, -1))).flags != ck.Guide.DRIFT


def test_bad_options_and_inputs_map_to_exceptions(chair_box):
    for field, value in [("speed_slow", -1.0), ("interval_fast", 0.0), ("pitch_min_deg", 50.0), ("drift_time", NAN),
                         ("prompt_repeat", INF), ("blocking_flags", 1 << 21)]:
        with pytest.raises(ck.InvalidArgumentError) as info:
            ck.Scheduler(ck.SchedulerOptions(**{field: value}))
        assert info.value.message.startswith("ck_scheduler_create:") and field in info.value.message
        assert info.value.code == -1 and info.value.name == "CK_E_INVALID_ARGUMENT"
    with pytest.raises(ck.InvalidArgumentError, match="preset"):
        ck.SchedulerOptions.preset(7)
    with pytest.raises(TypeError):
        ck.Scheduler(options="fast")
    with pytest.raises(TypeError):
        ck.SchedulerOptions(goal=1)  # not a field
    with ck.Scheduler() as s:
        pose = look_at((0, 1, -2), (0, 0.5, 0))
        s.update(0, pose)
        bad = pose.copy()
        bad[0, 0] = NAN
        with pytest.raises(ck.InvalidArgumentError, match="frame.pose"):
            s.update(1, bad)
        for t in (NAN, INF, 0.0, -1.0):
            with pytest.raises(ck.InvalidArgumentError, match="timestamp"):
                s.update(t, pose)
        with pytest.raises(ck.InvalidArgumentError, match="frame.sharpness"):
            s.update(1, pose, sharpness=NAN)
        with pytest.raises(ck.InvalidArgumentError, match="frame.tracking"):
            s.update(1, pose, tracking=5)
        with pytest.raises(TypeError):
            s.update(1, pose, box="box")
        k = ck.Intrinsics(fx=200, fy=200, cx=16, cy=12, width=32, height=24)
        with pytest.raises(ValueError):
            s.update(1, pose, depth=np.ones((20, 32), np.float32), depth_intrinsics=k)
        with pytest.raises(ValueError):
            s.update(1, pose, depth_intrinsics=k)  # intrinsics without depth
        with pytest.raises(ValueError):
            s.update(1, pose, depth=np.ones((2, 24, 32), np.float32))
        with pytest.raises(TypeError):
            s.update(1, pose, depth=np.ones((24, 32), np.float64), depth_intrinsics=k)
        with pytest.raises(TypeError):
            s.update(1, pose, depth=np.ones((24, 32), np.uint8))
        assert s.update(1, pose).captures == 0  # errors changed nothing


def test_depth_formats_strides_and_default_intrinsics():
    """Since 0.2 the depth map is a ck_depth_map: float32 / float16 metres or uint16 mm, any row
    stride, and no intrinsics needed (the centre window is the map's centre)."""
    pose = np.eye(4)
    k = ck.Intrinsics(fx=200, fy=200, cx=16, cy=12, width=32, height=24)
    metres = np.full((24, 32), 0.75, np.float32)
    metres[::4, ::3] = 0  # no depth: ignored
    big = np.zeros((30, 50), np.float32)
    big[3:27, 9:41] = metres
    variants = [
        dict(depth=metres, depth_intrinsics=k),
        dict(depth=metres),
        dict(depth=metres.astype(np.float16)),
        dict(depth=np.round(metres * 1000).astype(np.uint16)),  # millimetres
        dict(depth=big[3:27, 9:41]),  # a crop: rows 200 bytes apart, passed without a copy
        dict(depth=np.asfortranarray(metres)),  # copied to C order first
    ]
    for kwargs in variants:
        with ck.Scheduler() as s:
            g = s.update(0, pose, **kwargs)
            assert g.median_depth == pytest.approx(0.75, abs=1e-3), kwargs.keys()
    with ck.Scheduler() as s:
        assert s.update(0, pose).median_depth == 0  # not measured


def test_update_sets_only_this_frames_fields(chair_box, camera):
    """Scheduler.update reuses one frame struct: a field given on one frame (depth, sharpness, box,
    intrinsics, luma, tracking) must not leak into the next. Reference: the same frames through
    the C API, each from a fresh ck_scheduler_frame_init."""
    depth = np.full((24, 32), 0.75, np.float32)
    far = np.full((24, 32), 1.5, np.float32)
    k_depth = ck.Intrinsics(fx=40, fy=40, cx=16, cy=12, width=32, height=24)
    frames = [dict(depth=depth), dict(), dict(depth=far, depth_intrinsics=k_depth), dict(box=chair_box),
              dict(sharpness=0.0), dict(), dict(box=chair_box, intrinsics=camera), dict(mean_luma=0.01),
              dict(tracking=ck.Tracking.LIMITED, tracking_reason=ck.TrackingReason.EXCESSIVE_MOTION), dict(),
              dict(box=chair_box), dict(depth=depth, box=chair_box), dict(box=chair_box)]
    ref = _ffi.ck_scheduler_p()
    _ffi.lib.ck_scheduler_create(ref, None)
    try:
        with ck.Scheduler() as s:
            for i, kw in enumerate(frames * 2):
                t, pose = 0.1 * i, orbit((0, 0.5, 0), 1.2, 0.3, 0.05 * i)
                got = s.update(t, pose, **kw)
                f = _ffi.defaults("ck_scheduler_frame_init", _ffi.ck_scheduler_frame)
                f.timestamp, f.pose = t, _ffi.mat4_from_array(pose)
                f.tracking = int(kw.get("tracking", ck.Tracking.NORMAL))
                f.tracking_reason = int(kw.get("tracking_reason", 0))
                f.sharpness = kw.get("sharpness", -1.0)
                f.mean_luma = kw.get("mean_luma", -1.0)
                if "box" in kw:
                    f.box = ctypes.pointer(kw["box"]._c)
                if "intrinsics" in kw:
                    f.intrinsics = kw["intrinsics"]._to_c()
                if "depth_intrinsics" in kw:
                    f.depth_intrinsics = kw["depth_intrinsics"]._to_c()
                if "depth" in kw:
                    f.depth = _ffi.depth_map(kw["depth"], _ffi.CK_FORMAT_DEPTH_F32)
                out = _ffi.ck_guidance()
                _ffi.lib.ck_scheduler_update(out, ref, f)
                assert got == ck.Guidance._from_c(out), (i, kw)
                assert (got.median_depth > 0) == ("depth" in kw), (i, kw)
    finally:
        _ffi.lib.ck_scheduler_free(ref)


def test_unsupported_struct_size_through_ffi():
    """A newer caller's bigger options struct with a non-zero tail is CK_E_UNSUPPORTED."""
    opts = _ffi.defaults("ck_scheduler_options_init", _ffi.ck_scheduler_options)
    buf = (ctypes.c_ubyte * (ctypes.sizeof(opts) + 8))()
    ctypes.memmove(buf, ctypes.byref(opts), ctypes.sizeof(opts))
    ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint32))[0] = ctypes.sizeof(buf)
    handle = _ffi.ck_scheduler_p()
    _ffi.lib.ck_scheduler_create(handle, ctypes.cast(buf, ctypes.POINTER(_ffi.ck_scheduler_options)))
    _ffi.lib.ck_scheduler_free(handle)
    buf[ctypes.sizeof(opts) + 2] = 1
    with pytest.raises(ck.UnsupportedError):
        _ffi.lib.ck_scheduler_create(handle, ctypes.cast(buf, ctypes.POINTER(_ffi.ck_scheduler_options)))


# -- handles: close, context managers, finalizers ---------------------------------------------


@pytest.mark.parametrize("make", [lambda box: ck.Scheduler(), lambda box: ck.Coverage(box)])
def test_close_is_idempotent_and_use_after_close_raises(make, chair_box, camera):
    obj = make(chair_box)
    assert not obj.closed
    obj.close()
    assert obj.closed
    obj.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        if isinstance(obj, ck.Scheduler):
            obj.update(0, np.eye(4))
        else:
            obj.add_view(np.eye(4), camera, 0)
    with pytest.raises(ValueError, match="closed"):
        obj.events()
    with pytest.raises(ValueError, match="closed"):
        obj.reset()
    with pytest.raises(ValueError, match="closed"):
        with obj:
            pass
    with make(chair_box) as other:
        assert not other.closed
    assert other.closed


def test_finalizer_frees_a_forgotten_handle(chair_box):
    s = ck.Scheduler()
    finalizer, handle = s._finalizer, s._handle
    assert finalizer.alive and handle.value
    del s
    gc.collect()
    assert not finalizer.alive and handle.value is None
    c = ck.Coverage(chair_box)
    finalizer = c._finalizer
    c.close()
    assert not finalizer.alive


def test_handles_are_c_void_p_subclasses():
    assert issubclass(_ffi.ck_scheduler_p, ctypes.c_void_p) and issubclass(_ffi.ck_coverage_p, ctypes.c_void_p)
    assert _ffi.ck_scheduler_p is not _ffi.ck_coverage_p
    # A coverage handle is not accepted where a scheduler handle is expected.
    with ck.Coverage(ck.Box((0, 0, 0), (1, 1, 1))) as c:
        with pytest.raises(ctypes.ArgumentError):
            _ffi.lib.ck_scheduler_reset(c._handle)


# -- coverage --------------------------------------------------------------------------------


def test_reference_mode_colours_and_side_completed_once(chair_box, camera):
    with ck.Coverage(chair_box) as c:
        for i in range(1, 13):
            face = c.add_view(orbit(chair_box.center, 2, 0.3, chair_box.yaw), camera, float(i))
            assert face is ck.Face.FRONT
            fc = c.face(ck.Face.FRONT)
            p = min(i, 10) / 10
            assert fc.count == i and fc.goal == 10 and fc.completed == (i >= 10)
            assert fc.progress == pytest.approx(p) and fc.opacity == pytest.approx(0.25 + 0.5 * p)
            assert fc.color == pytest.approx((1 - p, 1, p))
            events = c.events()
            assert [(e.code, e.index, e.timestamp) for e in events] == ([(ck.EventCode.SIDE_COMPLETED, ck.Face.FRONT, 10.0)] if i == 10 else [])
        assert c.add_view(look_at((0, 1, -3), (0, 1, -5)), camera, 13.0) is ck.Face.NONE
        s = c.summary()
        assert s.views == 13 and s.faces_completed == 1 and not s.all_completed and s.completion == pytest.approx(0.2)
        # Box edits keep the counts.
        edited = chair_box.copy()
        edited.translate((0.4, 0, 0.2))
        edited.rotate(0.7)
        c.set_box(edited)
        assert c.face(ck.Face.FRONT).count == 12
        assert c.add_view(orbit(edited.center, 2, 0.3, edited.yaw), camera, 14.0) is ck.Face.FRONT
        assert c.events() == []
        with pytest.raises(ck.InvalidArgumentError, match="face"):
            c.face(6)
        with pytest.raises(ck.InvalidArgumentError, match="timestamp"):
            c.add_view(np.eye(4), camera, NAN)
        c.reset()
        assert c.summary().views == 0 and c.cells().sum() == 0 and c.dial().sum() == 0


def test_orbit_fills_the_dial_and_completes_the_sides(chair_box, camera):
    radius, speed = 2.0, 0.45
    lap = 2 * math.pi * radius / speed
    t = 0.0
    with ck.Scheduler() as s, ck.Coverage(chair_box) as c:
        events = []
        for ring, elevation in enumerate((15, 40)):
            height = radius * math.tan(math.radians(elevation))
            for i in range(int((lap + 4) * 60)):
                pose = orbit(chair_box.center, radius, height, chair_box.yaw + i / 60 * speed / radius + 0.1 * ring)
                if s.update(t, pose, box=chair_box).capture:
                    c.add_view(pose, camera, t)
                t += 1 / 60
            events += c.events()
        summary = c.summary()
        assert summary.dial_fraction >= 0.9 and summary.faces_completed == 4
        for f in (ck.Face.FRONT, ck.Face.LEFT, ck.Face.RIGHT, ck.Face.BACK):
            assert c.face(f).completed and c.face(f).cell_fraction == 1.0
        assert sorted(e.index for e in events if e.code == ck.EventCode.SIDE_COMPLETED) == [0, 1, 2, 5]
        names = ["Front", "Left", "Right", "Bottom", "Top", "Back"]
        assert all(e.text == f"{names[e.index]} side completed" for e in events if e.code == ck.EventCode.SIDE_COMPLETED)
        assert [e.index for e in events if e.code == ck.EventCode.RING_COMPLETED] == [0, 1]
        dial, cells = c.dial(), c.cells()
        assert dial.shape == (2, 24) and dial.dtype == np.uint32 and (dial > 0).all()
        assert cells.shape == (6, 4, 4) and cells.dtype == np.uint32 and cells[ck.Face.BOTTOM].sum() == 0
        hint = c.hint(orbit(chair_box.center, radius, 0.5, chair_box.yaw))
        # The hint aims at the side the views saw least: the sum over its cells of min(views, goal).
        seen = {f: int(np.minimum(cells[f], 10).sum()) for f in (ck.Face.FRONT, ck.Face.LEFT, ck.Face.BACK, ck.Face.RIGHT)}
        side = [ck.Face.FRONT, ck.Face.LEFT, ck.Face.BACK, ck.Face.RIGHT][round(hint.target_azimuth / (math.pi / 2)) % 4]
        assert isinstance(hint, ck.CoverageHint) and seen[side] == min(seen.values())
        assert dial[hint.ring, hint.bin] == hint.target_count


def test_one_sided_camera_never_completes_the_others(chair_box, camera):
    rng = np.random.default_rng(3)
    with ck.Coverage(chair_box, ck.CoverageOptions(azimuth_bins=12, elevation_rings=3)) as c:
        for i in range(200):
            pose = orbit(chair_box.center, rng.uniform(1.2, 3), rng.uniform(-0.3, 1), chair_box.yaw + rng.uniform(-0.6, 0.6))
            assert c.add_view(pose, camera, float(i)) is ck.Face.FRONT
        assert [c.face(f).count for f in ck.Face if f >= 0] == [200, 0, 0, 0, 0, 0]
        assert [e.index for e in c.events()] == [ck.Face.FRONT]
        assert c.dial().shape == (3, 12)


def test_coverage_bad_options(chair_box):
    for field, value in [("goal", 0), ("face_mask", 0x40), ("cells_per_side", 65), ("azimuth_bins", 0),
                         ("elevation_max_deg", -1.0), ("elevation_min_deg", NAN)]:
        with pytest.raises(ck.InvalidArgumentError) as info:
            ck.Coverage(chair_box, ck.CoverageOptions(**{field: value}))
        assert info.value.message.startswith("ck_coverage_create:") and field in info.value.message
    with pytest.raises(ValueError):
        ck.CoverageOptions(goal=-1)._to_c()  # does not fit uint32: caught by the binding
    with pytest.raises(TypeError):
        ck.Coverage("box")
    with pytest.raises(TypeError):
        ck.Coverage(chair_box, options={"goal": 3})


def test_real_capture_coverage(camera):
    """The 82 real poses around the HMC chair: centre-ray faces equal an independent slab test;
    views from inside the box count nothing (issue 11) and say "step back" once per spell."""
    bbox = json.loads((DATA / "boundingbox.json").read_text())
    frames = json.loads((DATA / "transforms.json").read_text())["frames"]
    p = {name: np.array([v["x"], v["y"], v["z"]]) for name, v in bbox["positions"].items()}
    size = (np.linalg.norm(p["top_right_front"] - p["top_left_front"]), np.linalg.norm(p["top_left_front"] - p["bot_left_front"]),
            np.linalg.norm(p["top_left_back"] - p["top_left_front"]))
    c0 = bbox["center"]
    box = ck.Box((c0["x"], c0["y"], c0["z"]), size, bbox["rad_rot_about_y"])
    want = np.zeros(6, int)
    inside_frames = 0
    with ck.Coverage(box) as cov, ck.Scheduler(ck.SchedulerOptions(drift_distance=10)) as sched:
        for f in frames:
            M = np.array(f["transform_matrix"])
            k = ck.Intrinsics(f["fl_x"], f["fl_y"], f["cx"], f["cy"], f["w"], f["h"])
            ray = ck.ray_from_pixel(M, k, f["w"] / 2, f["h"] / 2)
            face, _, inside, clear = slab(ray.origin, ray.direction, box.center, box.size, box.yaw)
            got = cov.add_view(M, k, f["timestamp"])
            if clear:
                assert got == (ck.Face.NONE if inside else face)
            inside_frames += bool(inside)
            if got >= 0:
                want[got] += 1
            g = sched.update(f["timestamp"], M, box=box)
            assert not ck.Guide.DRIFT & g.flags
        assert [cov.face(i).count for i in range(6)] == want.tolist()
        s = cov.summary()
        assert inside_frames == 6 and cov.face(ck.Face.BOTTOM).count == 0
        assert s.views == 82 - inside_frames and s.dial_fraction > 0.3 and s.cell_fraction > 0.3
        assert 1 <= sum(e.code == ck.EventCode.INSIDE_BOX for e in cov.events()) <= inside_frames


# -- sharpness -------------------------------------------------------------------------------


def laplacian_variance(img):
    """Independent numpy computation (the interior of OpenCV's Laplacian with ksize=1, then .var())."""
    x = img.astype(np.float64)
    lap = x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]
    return lap.var()


def test_sharpness_matches_numpy(rng):
    for _ in range(30):
        h, w = rng.integers(3, 90, size=2)
        img = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        assert ck.sharpness_score(img) == pytest.approx(laplacian_variance(img), rel=1e-6)
    big = rng.integers(0, 256, size=(192, 256), dtype=np.uint8)
    crop = big[10:150, 7:203]  # a row-padded view: used without a copy
    assert ck.sharpness_score(crop) == pytest.approx(laplacian_variance(crop), rel=1e-6)
    transposed = big.T  # not row-major: copied first
    assert ck.sharpness_score(transposed) == pytest.approx(laplacian_variance(transposed), rel=1e-6)
    smooth = np.tile(np.arange(64, dtype=np.uint8), (48, 1))
    assert ck.sharpness_score(smooth) == 0.0
    blurred = ((big[:-2].astype(int) + big[1:-1] + big[2:]) // 3).astype(np.uint8)
    assert ck.sharpness_score(blurred) < ck.sharpness_score(big)


def test_sharpness_rejects_bad_images():
    with pytest.raises(TypeError):
        ck.sharpness_score(np.zeros((10, 10), np.float32))
    with pytest.raises(ValueError):
        ck.sharpness_score(np.zeros((10, 10, 3), np.uint8))
    with pytest.raises(ck.InvalidArgumentError) as info:
        ck.sharpness_score(np.zeros((2, 10), np.uint8))
    assert info.value.message.startswith("ck_sharpness_score:")


def test_event_strings():
    assert ck.event_string(ck.EventCode.SIDE_COMPLETED) == "Side completed"
    assert ck.event_string(999) == "unknown event"
    assert {c.value for c in ck.EventCode} == set(range(1, 22)) | {101, 102, 103, 104, 105, 106, 201, 202, 203, 204}
    assert ck.event_string(ck.EventCode.SURFACE_SIDE_COMPLETED) != "unknown event"
    assert ck.event_string(ck.EventCode.SURFACE_COMPLETED) != "unknown event"
    # Issue 11's gates: the texts are the library's.
    assert ck.event_string(ck.EventCode.OBJECT_OUT_OF_FRAME) == "Move back: the object is partly out of frame"
    assert ck.event_string(ck.EventCode.LOW_LIGHT) == "More light needed"
    assert ck.event_string(ck.EventCode.TRACKING_INITIALIZING) == "Move the device slowly to start"
    assert ck.event_string(ck.EventCode.TRACKING_EXCESSIVE_MOTION) == "Slow down: moving too fast for tracking"
    assert ck.event_string(ck.EventCode.TRACKING_INSUFFICIENT_FEATURES) == "Point at a more detailed surface, or add light"
    assert ck.event_string(ck.EventCode.TRACKING_RELOCALIZING) == "Return to where you were"
    assert ck.event_string(ck.EventCode.INSIDE_BOX) == "Step back: the camera is inside the box"
    # Flag names, bit by bit, as the Guide flags spell them.
    assert ck.guide_names(0) == []
    assert ck.guide_names(ck.Guide.SLOW_DOWN | ck.Guide.TILT_UP) == ["SLOW_DOWN", "TILT_UP"]
    assert ck.guide_names(ck.Guide(0x1FFFFF)) == [g.name for g in sorted(ck.Guide, key=lambda g: g.value) if g.value <= 1 << 20 and bin(g.value).count("1") == 1]
    assert ck.guide_names(1 << 21) == ["unknown"]
    with pytest.raises((TypeError, ValueError)):
        ck.guide_names(-1)
    assert all(ck.Guide[c.name] == 1 << (c.value - 1) for c in ck.EventCode if c.value <= 21)
    assert sum(1 << (c.value - 1) for c in ck.EventCode if c.value <= 21) == 0x1FFFFF


# -- issue 11's gates ------------------------------------------------------------------------

def _run_gate(scheduler, seconds=1.0, **kwargs):
    """30 Hz frames for `seconds`; every guidance and every event."""
    gs, events = [], []
    for i in range(int(seconds * 30) + 1):
        gs.append(scheduler.update(10 + i / 30, kwargs.get("pose", np.eye(4)), kwargs.get("tracking", ck.Tracking.NORMAL),
                                   **{k: v for k, v in kwargs.items() if k not in ("pose", "tracking")}))
        events += scheduler.events()
    return gs, events


def test_object_out_of_frame_by_hand():
    """A 0.5 m cube 2 m ahead: its near face projects to a 28.6 px square centred on the principal
    point; with the principal point at the image's top-left corner a quarter of it is in the
    100 x 100 image (mostly outside and small: blocks); at cx = 0 half of it; at cx = 5, two
    thirds (partly out of frame: advice, captured)."""
    cube = ck.Box(center=(0, 0, -2), size=(0.5, 0.5, 0.5))
    half = ck.Intrinsics(fx=100, fy=100, cx=0, cy=50, width=100, height=100)
    quarter = ck.Intrinsics(fx=100, fy=100, cx=0, cy=0, width=100, height=100)
    with ck.Scheduler(ck.SchedulerOptions(box_view_angle_deg=0)) as s:
        gs, events = _run_gate(s, box=cube, intrinsics=quarter)
    assert all(g.flags & ck.Guide.OBJECT_OUT_OF_FRAME and g.blocked & ck.Guide.OBJECT_OUT_OF_FRAME and not g.capture for g in gs)
    out = [e for e in events if e.code == ck.EventCode.OBJECT_OUT_OF_FRAME]
    assert len(out) == 1 and abs(out[0].value - 0.25) < 1e-4
    with ck.Scheduler(ck.SchedulerOptions(box_view_angle_deg=0)) as s:
        gs, events = _run_gate(s, box=cube, intrinsics=ck.Intrinsics(fx=100, fy=100, cx=5, cy=50, width=100, height=100), seconds=4)
    assert all(g.flags & ck.Guide.OBJECT_OUT_OF_FRAME and not g.blocked for g in gs) and sum(g.capture for g in gs) == 1
    with ck.Scheduler(ck.SchedulerOptions(box_view_angle_deg=0, min_box_in_frame=0.4)) as s:
        gs, _ = _run_gate(s, box=cube, intrinsics=half)
    assert not any(g.flags & ck.Guide.OBJECT_OUT_OF_FRAME for g in gs)


def test_box_distance_without_depth():
    """No depth: the distance to the box's nearest point (0.1 m to its front face) is too close."""
    slab_box = ck.Box(center=(0, 0.3, 0), size=(0.4, 0.6, 0.8))
    with ck.Scheduler() as s:
        gs, events = _run_gate(s, pose=look_at((0.05, 0.3, -0.5), (0, 0.3, 0)), box=slab_box)
    close = [e for e in events if e.code == ck.EventCode.TOO_CLOSE]
    assert close and abs(close[0].value - 0.1) < 1e-5 and all(g.median_depth == 0 for g in gs)


@pytest.mark.parametrize("reason", list(ck.TrackingReason))
def test_tracking_reasons(reason):
    with ck.Scheduler() as s:
        gs, events = _run_gate(s, tracking=ck.Tracking.LIMITED, tracking_reason=reason)
    codes = {e.code for e in events} - {ck.EventCode.SPEED_UP}
    assert all(g.flags & ck.Guide.TRACKING_LIMITED for g in gs)
    if reason == ck.TrackingReason.NONE:
        assert codes == {ck.EventCode.TRACKING_LIMITED}
    else:
        code = ck.EventCode(17 + int(reason))
        assert codes == {code} and all(g.flags & ck.Guide[code.name] for g in gs)


def test_low_light_and_bad_gate_inputs():
    with ck.Scheduler() as s:
        gs, events = _run_gate(s, mean_luma=0.1)
        assert [e.value for e in events if e.code == ck.EventCode.LOW_LIGHT] == [pytest.approx(0.1)]
        for bad in (NAN, INF, -INF, 1.5):
            with pytest.raises(ck.InvalidArgumentError, match="mean_luma"):
                s.update(100, np.eye(4), mean_luma=bad)
        with pytest.raises(ck.InvalidArgumentError, match="tracking_reason"):
            s.update(100, np.eye(4), tracking_reason=5)
        with pytest.raises(ck.InvalidArgumentError, match="Intrinsics"):   # refused before the call
            s.update(100, np.eye(4), intrinsics=ck.Intrinsics(fx=NAN, fy=1, cx=0, cy=0, width=4, height=4))
    with pytest.raises(ck.InvalidArgumentError, match="min_luma"):
        ck.Scheduler(ck.SchedulerOptions(min_luma=NAN))


def test_session_measures_mean_luma(tmp_path):
    """The session measures the luma of the RGB image it is given (BT.601, every 4th pixel):
    pure green at 60 has luma 0.587 * 60 / 255 = 0.138, below the default 0.15."""
    box = ck.Box((0, 0.3, 0), (0.4, 0.6, 0.4))
    k = ck.Intrinsics(200, 200, 64, 48, 128, 96)
    rgb = np.zeros((96, 128, 3), np.uint8)
    rgb[..., 1] = 60
    with ck.Session(tmp_path / "s", box=box) as s:
        lows = []
        for i in range(30):
            r = s.process(i / 30, look_at((0, 1.0, -1.5), (0, 0.3, 0)), k, rgb=rgb)
            assert r.guidance.flags & ck.Guide.LOW_LIGHT
            lows += [e.value for e in s.events() if e.code == ck.EventCode.LOW_LIGHT]
        assert lows == [pytest.approx(0.587 * 60 / 255, abs=1e-6)]
        r = s.process(2.0, look_at((0, 1.0, -1.5), (0, 0.3, 0)), k, rgb=rgb, mean_luma=0.5)
        assert not r.guidance.flags & ck.Guide.LOW_LIGHT


def test_speed_falls_back_to_the_previous_frame_when_frames_are_far_apart():
    """Frames 2 s apart (captures, as the HMC app records them) with a 0.5 s smoothing window: the
    window holds only the current frame, so the speed is the displacement since the previous frame
    over the time between them (0.6 m in 2 s: 0.3 m/s, the medium band), and the angular speed
    the rotation between them over that time."""
    turn = np.eye(4)
    turn[:3, :3] = np.array([[math.cos(0.4), 0, math.sin(0.4)], [0, 1, 0], [-math.sin(0.4), 0, math.cos(0.4)]])
    turn[:3, 3] = (0.36, 0, 0.48)
    with ck.Scheduler() as s:
        s.update(10.0, np.eye(4))
        g = s.update(12.0, turn)
    assert abs(g.speed - 0.3) < 1e-5 and g.band == ck.SpeedBand.MEDIUM
    assert abs(g.angular_speed - 0.2) < 1e-4


def test_prompt_repeat_counts_across_separate_spells():
    """Limited tracking for 0.6 s, normal for 0.6 s (the prompt goes inactive), limited again: the
    second spell is not prompted until prompt_repeat (2 s) after the first spell's prompt."""
    prompts = []
    with ck.Scheduler() as s:
        for i in range(int(4 * 30)):
            t = 10 + i / 30
            limited = t < 10.6 or t >= 11.2
            s.update(t, np.eye(4), ck.Tracking.LIMITED if limited else ck.Tracking.NORMAL)
            prompts += [e.timestamp for e in s.events() if e.code == ck.EventCode.TRACKING_LIMITED]
    assert len(prompts) >= 2 and prompts[0] < 10.6
    assert prompts[1] - prompts[0] >= 2.0 - 1e-9 and prompts[1] < prompts[0] + 2.0 + 0.05
