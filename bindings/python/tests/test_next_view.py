"""The next-best view (ck_surface_next_view) against independent geometry: an operator following it
around a non-convex union of spheres, rendered to sensor-like depth by our own NumPy ray cast, and
the truth of what each captured view saw computed on the spheres (benchmarks/nbv/nbv_sim.py,
imported through its path), compared with an all-knowing greedy planner and a uniform orbit."""

import math
import pathlib
import sys

import numpy as np
import pytest

import capturekit as ck

NBV = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "nbv"
needs_bench = pytest.mark.skipif(not (NBV / "nbv_sim.py").exists(), reason="needs the source tree's benchmarks/nbv")
if (NBV / "nbv_sim.py").exists():
    sys.path.insert(0, str(NBV))
    import nbv_sim as S  # noqa: E402

# A snowman with an arm and a foot: creases where the spheres meet, parts hiding each other.
SPHERES = [((0, 0.12, 0), 0.12), ((0, 0.29, 0.0), 0.075), ((0.12, 0.16, -0.03), 0.06), ((-0.05, 0.08, 0.12), 0.05)]


@pytest.fixture(scope="module")
def setup():
    return S.Setup(S.SphereUnion(SPHERES, samples_per_m2=30000))


@needs_bench
def test_following_the_hint_covers_the_object(setup):
    greedy = S.views_to_goal(S.run_greedy(setup))
    truth, lib, steps, _, _ = S.run_hint(setup, seed=1)
    hint = S.views_to_goal(truth)
    assert greedy is not None and 6 <= greedy <= 16
    # The operator reaches 95 % of the coverable surface well covered within 1.5x the greedy views.
    assert hint is not None and hint <= math.ceil(1.5 * greedy), (hint, greedy, steps)
    # Every prompt names a move, a place to stay or the finish.
    assert all(s[3].startswith(("Move", "Stay", "Surface complete")) for s in steps)
    # The library's figure follows the truth at every step: at most 5 points below and 4 above
    # (measured 2.9 below and 1.8 above; the target is 3 points; it lagged by 27 before
    # views were decided on their own depth frame and the unseen surface was estimated by rays).
    diff = np.array(truth) - np.array(lib)
    assert diff.max() < 0.05 and diff.min() > -0.04, diff


@needs_bench
def test_the_first_hint_turns_to_unseen_surface(setup):
    s = ck.Surface(setup.box)
    pose = S.ring_pose(setup.centre, setup.radius, 0.0, 30.0)
    s.fuse(S.lidar_depth(setup.scene, pose, np.random.default_rng(0)), S.K_D, pose, timestamp=0)
    s.add_view(pose, S.K_IMG, timestamp=0)
    v = s.next_view(pose, S.K_IMG)
    assert v.candidates == 48 and not v.complete and v.gain > 0
    assert abs(math.degrees(v.target_azimuth)) >= 60          # away from the seen front
    assert v.distance == pytest.approx(setup.radius, rel=1e-3)
    eye = v.target_pose[:3, 3]
    assert np.linalg.norm(eye - setup.centre) == pytest.approx(setup.radius, rel=1e-3)
    fwd = -v.target_pose[:3, 2]
    assert fwd @ (setup.centre - eye) / np.linalg.norm(setup.centre - eye) > 0.9999
    # The true gain of the chosen view beats the median candidate's (the oracle's measure).
    t = setup.truth()
    t.add(S.View(setup.scene, pose))
    chosen = t.gain(S.View(setup.scene, v.target_pose))
    gains = [t.gain(c) for c in setup.views]
    assert chosen >= np.median(gains), (chosen, sorted(gains))
    h = s.hint(pose)
    assert h.side == v.side and h.text == v.text


def test_next_view_refuses_bad_input():
    s = ck.Surface(ck.Box((0, 0.2, 0), (0.4, 0.4, 0.4), 0.0))
    with pytest.raises(ValueError):
        s.next_view(np.full((4, 4), np.nan))
    v = s.next_view(np.array([[1, 0, 0, 0], [0, 1, 0, 0.2], [0, 0, 1, 1.0], [0, 0, 0, 1]], float))
    assert v.candidates == 0 and v.gain == 0                   # no depth yet: the box's faces stand in


def _capture(s, scene, pose, t, rng, mask=None):
    depth = S.lidar_depth(scene, pose, rng)
    if mask is not None:
        depth = mask(depth, pose)
    s.fuse(depth, S.K_D, pose, timestamp=t)
    s.add_view(pose, S.K_IMG, timestamp=t)


def _ring_distance(az0, el0, az1, el1):
    """Degrees between two ring positions (azimuth wrapped)."""
    return abs((az1 - az0 + 180) % 360 - 180) + abs(el1 - el0)


@needs_bench
def test_a_half_seen_object_is_finished_from_its_unseen_side(setup):
    # Three captures of the front half (azimuths -30, 0, 30 at 30 degrees): the back is unseen,
    # so the best next view (by the truth on the spheres) is behind; the hint must go there.
    s = ck.Surface(setup.box)
    t = setup.truth()
    rng = np.random.default_rng(4)
    for i, az in enumerate((-30.0, 0.0, 30.0)):
        pose = S.ring_pose(setup.centre, setup.radius, az, 30.0)
        _capture(s, setup.scene, pose, i, rng)
        t.add(S.View(setup.scene, pose))
    v = s.next_view(pose, S.K_IMG)
    assert abs(math.degrees(v.target_azimuth)) >= 90, math.degrees(v.target_azimuth)
    chosen = t.gain(S.View(setup.scene, v.target_pose))
    gains = sorted(t.gain(c) for c in setup.views)
    assert chosen >= 0.7 * gains[-1], (chosen, gains[-5:])
    assert v.side in (1, 2, 5)                                   # left, right or back


@needs_bench
def test_no_repeat_of_a_view_just_taken(setup):
    # After one capture, the same place again adds a view count but no spread of directions:
    # any neighbour is worth more. From every start, the next view is elsewhere.
    for az, el in ((0.0, 30.0), (90.0, 5.0), (202.5, 30.0), (270.0, 60.0)):
        s = ck.Surface(setup.box)
        pose = S.ring_pose(setup.centre, setup.radius, az, el)
        _capture(s, setup.scene, pose, 0, np.random.default_rng(5))
        v = s.next_view(pose, S.K_IMG)
        taz, tel = math.degrees(v.target_azimuth), math.degrees(v.target_elevation)
        assert _ring_distance(az, el, taz, tel) >= 20, (az, el, taz, tel)
        # And after a second capture there, neither place is picked again.
        pose2 = v.target_pose
        _capture(s, setup.scene, pose2, 1, np.random.default_rng(6))
        v2 = s.next_view(pose2, S.K_IMG)
        t2 = (math.degrees(v2.target_azimuth), math.degrees(v2.target_elevation))
        assert _ring_distance(taz, tel, *t2) >= 20 and _ring_distance(az, el, *t2) >= 20, (az, el, taz, tel, t2)


@needs_bench
@pytest.mark.parametrize("floor, box_set_again", [(0.0, False), (3.0, False), (0.0, True)])
def test_surface_that_depth_never_returns_stops_attracting_views(floor, box_set_again, monkeypatch):
    # A ball with a dark patch in front that the depth sensor never returns (as LiDAR on black
    # velvet): the hole in the measured surface looks like unseen surface until views have looked
    # at it. After an orbit, the operator follows the hint: the planner remembers the views taken,
    # so it never sends the operator back to a place already captured, and what it expects to gain
    # falls as views look at the hole without revealing anything.
    # With the floor behind the ball (a box with a floor), the flying pixels where the ball meets
    # the floor are seen through and removed between the calls while new surface comes in: the
    # planner once kept its per-element cache when the count had grown back, and scored elements at
    # other elements' places (gains 1839, 482, 475, 355, 158, 253: the far side of the ball seen
    # "from behind" through surface that is there). Setting the same box again before each call
    # (as a host that passes its box every frame) resamples the elements into voxel order: the
    # cache went stale the same way (gains 1961, 4677, 4754, 3336, 2256, 835).
    monkeypatch.setattr(S, "FLOOR", floor)
    setup = S.Setup(S.SphereUnion([((0, 0.12, 0), 0.12)], samples_per_m2=30000))
    patch = setup.centre + np.array([0.0, 0.0, -0.12])            # the front of the ball

    def black_patch(depth, pose):
        rays = S.pixel_rays(pose, S.K_D).reshape(S.H_D, S.W_D, 3)
        pts = pose[:3, 3] + rays * depth[..., None]
        out = depth.copy()
        out[(np.linalg.norm(pts - patch, axis=-1) < 0.05) & (depth > 0)] = 0
        return out

    s = ck.Surface(setup.box)
    rng = np.random.default_rng(7)
    t = 0
    for el in (5.0, 30.0, 60.0):
        for az in np.arange(12) * 30.0 + 15.0:
            pose = S.ring_pose(setup.centre, setup.radius, az, el)
            _capture(s, setup.scene, pose, t, rng, black_patch)
            t += 1
    places, gains = [], []
    for _ in range(6):
        if box_set_again:
            s.set_box(setup.box)
        v = s.next_view(pose, S.K_IMG)
        place = (math.degrees(v.target_azimuth), math.degrees(v.target_elevation))
        assert all(_ring_distance(*place, *p) >= 10 for p in places), (place, places)
        places.append(place)
        gains.append(v.gain)
        pose = v.target_pose
        _capture(s, setup.scene, pose, t, rng, black_patch)
        t += 1
    # What it expects to gain falls once views have faced the hole, and stays low: a candidate
    # beside a captured view (within 10 degrees) has failed to reveal what that view failed to
    # reveal. (Before, once no fresh candidate had a gain left, the one 7.5 degrees beside the
    # orbit's view at azimuth -15 came back with the back of the ball seen through the hole:
    # gains 2038, 338, 23, 21, 0, 1087; a ball without the patch stays under 80.)
    assert min(gains[1:]) < 0.05 * gains[0], gains
    assert gains[-1] < 0.5 * gains[0], gains


@needs_bench
def test_next_view_straight_after_a_capture_answers_as_after_reading_the_figures(setup):
    # next_view skips the unseen estimate a capture leaves pending while the bound without it
    # leaves a side short of its goal (the estimate can only lower a side's figure). Two surfaces
    # get the same frames and views around the whole object: A reads the figures before each
    # next_view, B asks straight after the capture. Both must answer alike at every capture, the
    # one where the surface turns complete included, and B's call must leave its figures as A's.
    rng = np.random.default_rng(5)
    a, b = ck.Surface(setup.box), ck.Surface(setup.box)
    sides = bin(ck.SurfaceOptions().side_mask & 0x3F).count("1")
    completes = []
    for k, (az, el) in enumerate(setup.candidates):
        pose = S.ring_pose(setup.centre, setup.radius, az, el)
        depth = S.lidar_depth(setup.scene, pose, rng)
        for s in (a, b):
            s.fuse(depth, S.K_D, pose, timestamp=k)
            s.add_view(pose, S.K_IMG, timestamp=k)
        fa = a.figures()
        va = a.next_view(pose, S.K_IMG)
        vb = b.next_view(pose, S.K_IMG)
        fb = b.figures()
        assert (fa.all.observed, fa.all.well_covered, fa.all.frontier, fa.sides_completed) == \
               (fb.all.observed, fb.all.well_covered, fb.all.frontier, fb.sides_completed), k
        assert vb.complete == va.complete, k
        assert (vb.side, vb.gain, vb.target_azimuth, vb.target_elevation, vb.text) == \
               (va.side, va.gain, va.target_azimuth, va.target_elevation, va.text), k
        # Straight after a capture the surface takes the unseen share as last estimated: at least
        # the observed surface, so the fraction is at most the gain over it.
        assert 0 <= vb.gain_fraction <= vb.gain / max(1, fb.all.observed) + 1e-6, k
        assert vb.complete == (fb.sides_completed == sides), k
        completes.append(vb.complete)
    # The orbit completes the surface, and after that every answer says so.
    assert completes[-1] and not completes[0], completes
    first = completes.index(True)
    assert all(completes[first:]), completes


class _Slab:
    """An axis-aligned block (lo..hi), cast by the slab method: the scene of the thin-part test."""

    def __init__(self, lo, hi):
        self.lo, self.hi = np.array(lo, float), np.array(hi, float)

    def cast(self, o, d):
        o = np.broadcast_to(o, d.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (self.lo - o) / d, (self.hi - o) / d
        tn = np.nanmax(np.minimum(t1, t2), axis=1)
        tf = np.nanmin(np.maximum(t1, t2), axis=1)
        hit = (tn <= tf) & (tn > 1e-6)
        t = np.where(hit, tn, np.inf)
        axis = np.argmax(np.minimum(t1, t2), axis=1)
        n = np.zeros(d.shape)
        n[np.arange(len(d)), axis] = -np.sign(d[np.arange(len(d)), axis])
        return t, n


def _gain_from_above(thickness):
    """The expected gain of the best view from above of a plate of that thickness (its top at
    15 cm) seen all around from above and below by streamed depth (no view captured)."""
    top = 0.15
    scene = _Slab((-0.15, top - thickness, -0.15), (0.15, top, 0.15))
    s = ck.Surface(ck.Box((0.0, 0.1, 0.0), (0.34, 0.2, 0.34), 0.0))
    rng = np.random.default_rng(3)
    centre, r = np.array([0.0, 0.1, 0.0]), 0.6
    for t, el in enumerate((-60.0, -30.0, 30.0, 60.0)):
        for az in np.arange(8) * 45.0 + 10.0:
            pose = S.ring_pose(centre, r, az, el)
            s.fuse(S.lidar_depth(scene, pose, rng), S.K_D, pose, timestamp=t)
    v = s.next_view(S.ring_pose(centre, r, 0.0, 30.0), S.K_IMG)
    assert v.target_elevation > 0 and v.gain > 0
    return v.gain


@needs_bench
def test_the_underside_of_a_thin_part_is_not_unseen_surface():
    # From above, the underside of a 12 mm plate lies within a planner cell of its top. It faces
    # away from the candidates above, so it once counted as surface "seen from behind" (unseen
    # surface must lie in front of it) and was worth revealing, although its top, which faces
    # them, is right there. The best view from above must offer what the top and the edges offer:
    # about what it offers on an 8 cm block with the same top (its underside far behind the top),
    # not that plus the underside (measured: 0.98x the block's; 1.26x on the previous library).
    thin, block = _gain_from_above(0.012), _gain_from_above(0.08)
    assert thin < 1.12 * block, (thin, block)
