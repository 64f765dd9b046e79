"""Walking along a path (issue 42) on the Bandai dataset-1 walk, run and dash of one subject and the
CMU subject 02 walk and jog: a 20 m line, circles (1.5 m at the walk's speed, 3 m at the run's,
6 m at the fastest), an S-curve of two 4 m arcs, a figure eight of 3 m lobes and a 30 m line
ramping from the walk's speed to the run's and back, each path made in code in the loops' own
units and up axis.

Every measure is the test's own (tests/path_checks.py, motion_checks.py, blend_checks.py): world
positions from scipy's rotations, the hips' floor path and the path both smoothed by one centered
moving average over the local gait cycle (from the output's own touchdowns), the arc length the
smoothed hips have covered, the hips' facing from the thighs, and planted feet from their height
and speed."""

from __future__ import annotations

import itertools
import math
import re
import warnings
from typing import Any, NamedTuple

import numpy as np
import path_checks as PC
import pytest
import variants
from blend_checks import floor_basis, knees, legs, world_positions, wrap
from fixtures import take_path
from motion_checks import foot_points, lowpass, peak_acceleration
from motion_checks import world as world_frames

from core import blendspace, bvh, contacts, metrics, path, quat, sync
from core.clip import Clip

BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]
CMU = ["02_01", "02_03"]
SETS = {"bandai": BANDAI, "cmu": CMU}
G = 9.80665
CASES = ("line", "circle at the walk's speed", "circle at the run's speed",
         "circle at the fastest speed", "S-curve", "figure eight", "ramp")

# The bounds.
PATH_MEAN_M, PATH_MAX_M = 0.03, 0.08
SPAN_M, SPAN_TIME, WHOLE_TIME = 2.0, 0.03, 0.02
FACING_DEG = 8.0
SLIP_P95_M, SLIP_MAX_M, SKATING = 0.01, 0.02, 0.01
ANGULAR = 1.2
# Peak accelerations of the hips, knees, ankles and toes over the gaits' own (issue 36's bound).
ACCEL = 1.25
# Degrees a knee may pass the gaits' straightest by (float and IK rounding).
KNEE_DEG = 0.5
# Seconds between a FootDown event and the touchdown found on the locked output's feet.
LOCKED_EVENT_S = 0.06


@pytest.fixture(scope="module")
def takes() -> dict[str, list[Clip]]:
    return {key: [bvh.load(take_path(n)) for n in names] for key, names in SETS.items()}


@pytest.fixture(scope="module")
def gaits(takes) -> dict[str, list[Clip]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {key: [sync.loop_cycle(t) for t in clips] for key, clips in takes.items()}


class Case(NamedTuple):
    points: np.ndarray  # [N, 3] file units
    speed: Any  # as follow takes it
    requested: Any  # f(meters) -> m/s, vectorized


def case(name: str, loops: list[Clip]) -> Case:
    """The path and speed of a named case, in the loops' units and up axis."""
    speeds = np.sort(blendspace.gait_speeds(loops))
    up, mpu = loops[0].up, loops[0].meters_per_unit
    walk, run, fastest = speeds[0], speeds[1], speeds[-1]
    if name == "line":
        v = 0.5 * (walk + run)  # a blend of the two
        return Case(PC.line(20.0, up, mpu), v, lambda s: np.full_like(s, v))
    if name.startswith("circle"):
        radius, v = {"walk's": (1.5, walk), "run's": (3.0, run), "fastest": (6.0, fastest)}[name.split()[-2]]
        assert v * v / radius <= 0.5 * G
        return Case(PC.circle(radius, up, mpu), v, lambda s: np.full_like(s, v))
    if name == "S-curve":
        v = min(fastest, math.sqrt(0.5 * G * 4.0))
        return Case(PC.arcs([4.0, -4.0], [math.pi, math.pi], up, mpu), v, lambda s: np.full_like(s, v))
    if name == "figure eight":
        eight = PC.arcs([3.0, -3.0], [2 * math.pi, 2 * math.pi], up, mpu)
        return Case(eight, run, lambda s: np.full_like(s, run))
    assert name == "ramp"
    profile = (np.array([0.0, 15.0, 30.0]), np.array([walk, run, walk]))
    return Case(PC.line(30.0, up, mpu), profile, lambda s: np.interp(s, *profile))


class Measured(NamedTuple):
    out: Clip
    lateral: np.ndarray  # [n] m, smoothed hips to smoothed path
    spans: np.ndarray  # [k] relative error of the time over each 2 m
    whole: float  # relative error of the time over the whole path
    facing: np.ndarray  # [n] degrees between the smoothed facing and the smoothed path's direction
    slips: np.ndarray  # [contacts] m
    skating: float  # share of contact windows
    knee_past: float  # degrees past the gaits' straightest (negative: within)
    angular: float  # peak angular speed over the gaits'
    accel: np.ndarray  # peak accelerations of hips, knees, ankles and toes over the gaits' own
    warned: list[str]


def clock(c: Case, road: PC.Polyline) -> tuple[np.ndarray, np.ndarray]:
    """(distances [20001] m along the road, the seconds the case's speed takes to reach each): the
    time asked, by trapezoids of 1 / speed."""
    dense = np.linspace(0.0, road.arc[-1], 20001)
    v = c.requested(dense)
    return dense, np.concatenate([[0.0], np.cumsum(np.diff(dense) * 0.5 * (1.0 / v[1:] + 1.0 / v[:-1]))])


def measure(out: Clip, c: Case, loops: list[Clip], warned: list[str]) -> Measured:
    up, mpu, fps = out.up, out.meters_per_unit, out.fps
    world = world_positions(out)
    road = PC.polyline(c.points, up, mpu)
    hips = PC.hips_floor(out, world, out.names.index("Hips"))
    world_m = world_frames(out)
    reference = PC.planted(out, world_m)
    cycle = PC.cycle_frames(reference, out.n_frames)
    smooth_hips = PC.moving_average(hips, cycle)
    # The path smoothed alike: its points where the hips are, frame by frame.
    s_raw, _ = PC.track(road, hips)
    on_road = np.stack([np.interp(s_raw, road.arc, road.points[:, k]) for k in range(3)], axis=-1)
    smooth_road = PC.moving_average(on_road, cycle)
    ok = np.isfinite(smooth_hips[:, 0])
    smoothed = PC.Polyline(smooth_road[ok], np.concatenate(
        [[0.0], np.cumsum(np.linalg.norm(np.diff(smooth_road[ok], axis=0), axis=-1))]))
    _, lateral = PC.track(smoothed, smooth_hips[ok])
    # Speed: the arc length of the path point nearest the smoothed hips, against the time asked.
    s, _ = PC.track(road, smooth_hips[ok])
    t = np.flatnonzero(ok) / fps
    assert np.all(np.diff(s) > 0), "the smoothed hips go back along the path"
    dense, asked = clock(c, road)
    marks = np.arange(math.ceil(s[0] / SPAN_M) * SPAN_M, s[-1] + 1e-9, SPAN_M)
    spans = np.diff(np.interp(marks, s, t)) / np.diff(np.interp(marks, dense, asked)) - 1.0
    whole = out.duration / asked[-1] - 1.0
    # Facing: the thighs' facing averaged over the cycle, against the smoothed path's direction.
    face = PC.moving_average(PC.facing(world, legs(out.names), up), cycle)[ok]
    direction = np.gradient(smooth_road[ok], axis=0)
    facing = np.degrees(np.abs(wrap(PC.angle_on_floor(face, up) - PC.angle_on_floor(direction, up))))
    slips, skating = feet_slips(out, world_m, reference)
    past, angular = knees_and_turns(out, world, loops)
    # Accelerations against the gaits' own, each played on for 4 s (a loop's sync blend with
    # itself at weight 0 plays that loop).
    gaits_peak = np.max([peak_accelerations(sync.sync_blend(g, g, 0.0, 4.0)) for g in loops], axis=0)
    accel = peak_accelerations(out, world) / gaits_peak
    return Measured(out, lateral, spans, whole, facing, slips, skating, past, angular, accel, warned)


def feet_slips(out: Clip, world_m: tuple[np.ndarray, np.ndarray] | None = None,
               reference: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, float]:
    """(pivot slips [contacts] m, the share of windows skating) of both feet over their reference
    contacts, the foot down and slow (path_checks.slips_and_skating); `world_m`: motion_checks'
    world frames of `out` and `reference`: its path_checks.planted, when the caller has them."""
    mats, pos = world_frames(out) if world_m is None else world_m
    reference = PC.planted(out, (mats, pos)) if reference is None else reference
    slips, skating, windows = [], 0, 0
    for side in ("L", "R"):
        got = PC.slips_and_skating(foot_points(out, side, mats, pos), reference[side], out.up, out.fps)
        slips.append(got[0])
        skating += got[1]
        windows += got[2]
    return np.concatenate(slips), skating / max(windows, 1)


def knees_and_turns(out: Clip, world: np.ndarray, sources: list[Clip]) -> tuple[float, float]:
    """(degrees the knees pass the sources' straightest by (negative: within), the peak angular
    speed over the sources' peak); `world`: `out`'s world_positions."""
    straightest = min(PC.knees_straightest(knees(g, legs(g.names))) for g in sources)
    past = math.degrees(straightest - PC.knees_straightest(knees(out, legs(out.names), world)))
    angular = metrics.peak_angular_speed(out) / max(metrics.peak_angular_speed(g) for g in sources)
    return past, angular


def peak_accelerations(clip: Clip, world: np.ndarray | None = None) -> np.ndarray:
    """[7] peak accelerations (m/s^2, after a 10 Hz low-pass) of the hips and each leg's knee,
    ankle and toe (motion_checks.peak_acceleration)."""
    w = world_positions(clip) if world is None else world
    joints = [clip.names.index("Hips")] + [j for leg in legs(clip.names).values() for j in leg[1:]]
    joints += [clip.parents.tolist().index(leg.ankle) for leg in legs(clip.names).values()]
    return peak_acceleration(w * clip.meters_per_unit, clip.fps, joints, 0)


@pytest.fixture(scope="module")
def followed(gaits):
    cache: dict[tuple[str, str], Measured] = {}

    def get(key: str, name: str) -> Measured:
        if (key, name) not in cache:
            c = case(name, gaits[key])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = path.follow(gaits[key], c.points, c.speed)
            cache[key, name] = measure(out, c, gaits[key], [str(w.message) for w in caught
                                                             if issubclass(w.category, path.PathWarning)])
        return cache[key, name]

    return get


ALL = [(key, name) for key in SETS for name in CASES]
IDS = [f"{key}-{name}" for key, name in ALL]


@pytest.mark.parametrize(("key", "name"), ALL, ids=IDS)
def test_the_smoothed_hips_follow_the_smoothed_path(followed, key, name):
    m = followed(key, name)
    assert not m.warned, m.warned  # every case is within the gaits' reach and 0.5 g
    assert m.lateral.mean() <= PATH_MEAN_M and m.lateral.max() <= PATH_MAX_M, (
        m.lateral.mean(), m.lateral.max())


@pytest.mark.parametrize(("key", "name"), ALL, ids=IDS)
def test_each_2m_of_path_takes_the_time_the_speed_asks(followed, key, name):
    m = followed(key, name)
    assert len(m.spans) >= 3
    assert np.abs(m.spans).max() <= SPAN_TIME, m.spans
    assert abs(m.whole) <= WHOLE_TIME, m.whole


@pytest.mark.parametrize(("key", "name"), ALL, ids=IDS)
def test_the_hips_face_along_the_path(followed, key, name):
    m = followed(key, name)
    assert m.facing.max() <= FACING_DEG, m.facing.max()


@pytest.mark.parametrize(("key", "name"), ALL, ids=IDS)
def test_planted_feet_hold_and_do_not_skate(followed, key, name):
    m = followed(key, name)
    assert len(m.slips) >= 4
    assert np.percentile(m.slips, 95) < SLIP_P95_M and m.slips.max() < SLIP_MAX_M, (
        np.percentile(m.slips, 95), m.slips.max())
    assert m.skating < SKATING, m.skating


@pytest.mark.parametrize(("key", "name"), ALL, ids=IDS)
def test_knees_joint_speeds_and_accelerations_stay_within_the_gaits(followed, key, name):
    m = followed(key, name)
    assert m.knee_past <= KNEE_DEG, m.knee_past
    assert m.angular <= ANGULAR, m.angular
    assert m.accel.max() <= ACCEL, m.accel


def test_without_locked_feet_the_measures_see_the_feet_slide(gaits):
    """The feet measure can fail: the same circle without lock_feet (legs neither turned nor
    locked) slides its planted feet by centimetres."""
    for key in SETS:
        c = case("circle at the walk's speed", gaits[key])
        m = measure(path.follow(gaits[key], c.points, c.speed, lock_feet=False), c, gaits[key], [])
        assert np.percentile(m.slips, 95) > 2 * SLIP_P95_M, (key, np.percentile(m.slips, 95))


@pytest.mark.parametrize("key", SETS)
def test_planted_feet_keep_their_heading_as_the_body_turns_over_them(gaits, key):
    """On the 1.5 m walking circle the body turns at v / R; a planted foot turns at most a third of
    that on the floor (a quarter by design, pivoting on its heel or ball), where the bend alone
    turns it with the body."""
    c = case("circle at the walk's speed", gaits[key])
    body = math.degrees(float(c.speed) / 1.5)
    for lock, low, high in ((True, 0.0, body / 3.0), (False, 0.8 * body, 1.2 * body)):
        out = path.follow(gaits[key], c.points, c.speed, lock_feet=lock)
        mats, pos = world_frames(out)
        reference = PC.planted(out, (mats, pos))
        rates = np.degrees(np.concatenate([
            PC.foot_turn_rates(foot_points(out, side, mats, pos), reference[side], out.up, out.fps)
            for side in ("L", "R")]))
        assert len(rates) >= 8 and low <= np.median(rates) <= high, (lock, body, rates)


@pytest.mark.parametrize("key", SETS)
def test_it_starts_on_the_first_point_and_ends_on_the_last(followed, gaits, key):
    for name in ("line", "circle at the walk's speed", "ramp"):
        out, c = followed(key, name).out, case(name, gaits[key])
        road = PC.polyline(c.points, out.up, out.meters_per_unit)
        hips = PC.hips_floor(out, world_positions(out), out.names.index("Hips"))
        # The hips sway a few centimetres about the path.
        assert np.linalg.norm(hips[0] - road.points[0]) < 0.06, (name, hips[0], road.points[0])
        s, across = PC.track(road, hips)
        step = np.diff(s).max()
        assert road.arc[-1] - step <= s[-1] <= road.arc[-1] + step, (name, s[-1], road.arc[-1])
        assert across[-1] < 0.06, (name, across[-1])
        assert s[-2] < road.arc[-1]  # the frame it gets there is the last
        # Facing along the path at the start: the hips' first cycle travels along it.
        cycle = int(PC.cycle_frames(PC.planted(out), out.n_frames)[0])
        chord = hips[cycle] - hips[0]
        tangent = road.points[1] - road.points[0]
        angles = PC.angle_on_floor(np.stack([chord, tangent]), out.up)
        bend = math.degrees(abs(float(wrap(angles[0] - angles[1]))))
        # (on the circle the chord of a cycle's arc is half its turn off the tangent)
        turned = math.degrees(s[cycle] / 1.5 / 2) if name.startswith("circle") else 0.0
        assert abs(bend - turned) < 5.0, (name, bend, turned)


@pytest.mark.parametrize("key", SETS)
def test_footdown_events_alternate_on_the_outputs_touchdowns(followed, gaits, key):
    for name in ("line", "circle at the run's speed", "figure eight", "ramp"):
        c = case(name, gaits[key])
        locked = followed(key, name).out
        free = path.follow(gaits[key], c.points, c.speed, lock_feet=False)
        for out, reach in ((free, 1.0 / free.fps), (locked, LOCKED_EVENT_S)):
            times = sorted([(t, f) for f in "LR" for t in out.events[f"FootDown_{f}"]])
            assert times[0][1] == "L" and times[0][0] <= 1.0 / 30.0  # phase 0: a left touchdown
            sides = [f for _, f in times]
            assert all(a != b for a, b in itertools.pairwise(sides)), sides
            assert times[-1][0] <= out.duration + 1e-9
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = contacts.footsteps(out)
            # Each near a touchdown found on the output's own feet (the one at phase 0 cannot be
            # seen): within a frame where the feet are as the gaits land them; locked feet land a
            # little differently to the detector (it reads them up to 51 ms earlier on the CMU run).
            for foot in ("FootDown_L", "FootDown_R"):
                for t in out.events[foot]:
                    if t > 0.1:
                        assert np.abs(found[foot] - t).min() <= reach + 1e-9, (name, foot, t, found[foot])


@pytest.mark.parametrize("key", SETS)
def test_a_turn_tighter_than_the_speed_allows_warns_naming_the_distance(gaits, key):
    loops = gaits[key]
    run = np.sort(blendspace.gait_speeds(loops))[1]
    assert run * run / 0.5 > 0.5 * G
    points = PC.circle(0.5, loops[0].up, loops[0].meters_per_unit)
    with pytest.warns(path.PathWarning) as caught:
        out = path.follow(loops, points, run)
    message = " ".join(str(w.message) for w in caught if issubclass(w.category, path.PathWarning))
    span = re.search(r"from (\d+\.\d+) to (\d+\.\d+) m along the path the turn is tighter", message)
    assert span and float(span.group(1)) < 0.1 and float(span.group(2)) > 3.0, message
    # By how much: v^2/R over the limit, and what would do.
    asked = run * run / 0.5
    found = re.search(r"v\^2/R = (\d+\.?\d*) m/s\^2, (\d+\.?\d*)x", message)
    assert found and float(found.group(1)) == pytest.approx(asked, rel=0.05), message
    assert float(found.group(2)) == pytest.approx(asked / (0.5 * G), rel=0.05), message
    assert "radius of" in message and "slow to" in message
    # It still goes round, at the speed asked, feet planted.
    assert out.duration == pytest.approx(math.pi / run, rel=0.05)
    slips, _ = feet_slips(out)
    assert len(slips) >= 2 and slips.max() < SLIP_MAX_M, slips


@pytest.mark.parametrize("key", SETS)
def test_a_speed_beyond_the_gaits_reach_warns_and_plays_the_nearest(gaits, key):
    loops = gaits[key]
    speeds = np.sort(blendspace.gait_speeds(loops))
    points = PC.line(12.0, loops[0].up, loops[0].meters_per_unit)
    asked = (np.array([0.0, 4.0, 8.0]), np.array([speeds[-1], 1.6 * speeds[-1], speeds[-1]]))
    with pytest.warns(path.PathWarning, match=r"m along the path the speed asked is above") as caught:
        out = path.follow(loops, points, asked)
    message = str(caught[0].message)
    found = re.search(r"from (\d+\.\d+) to (\d+\.\d+) m", message)
    assert found, message
    # Above 1.3x the fastest from 4 * 0.3 / 0.6 m before the peak to as far after it.
    lo, hi = (float(x) for x in found.groups())
    assert lo == pytest.approx(2.0, abs=0.05) and hi == pytest.approx(6.0, abs=0.05), message
    assert f"{0.3 * speeds[-1]:.3g} m/s above the {1.3 * speeds[-1]:.3g} m/s" in message, message
    # Played at the nearest the gaits reach: the time is that speed's.
    most = 1.3 * speeds[-1]
    reached = lambda s: np.minimum(np.interp(s, *asked), most)  # noqa: E731
    m = measure(out, Case(points, asked, reached), loops, [])
    assert abs(m.whole) <= WHOLE_TIME and np.abs(m.spans).max() <= SPAN_TIME, (m.whole, m.spans)


@pytest.mark.parametrize("key", SETS)
def test_a_polylines_corners_are_turned_over_steps_without_a_pop(gaits, key):
    """A 4 m square of five points walked at the walk's speed: each corner rounded over about two
    steps (the hips pass within 15 cm of it), the hips, knees, ankles and toes accelerating no
    more than in the gaits, feet planted, no warning (a right angle over two walking steps is
    well within 0.5 g)."""
    loops = gaits[key]
    walk = float(np.sort(blendspace.gait_speeds(loops))[0])
    a, b = floor_basis(loops[0].up)
    corners = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0], [0.0, 1.0]])
    points = (np.outer(corners[:, 0], a) + np.outer(corners[:, 1], b)) / loops[0].meters_per_unit
    with warnings.catch_warnings():
        warnings.simplefilter("error", path.PathWarning)
        out = path.follow(loops, points, walk)
    m = measure(out, Case(points, walk, lambda s: np.full_like(s, walk)), loops, [])
    assert m.accel.max() <= ACCEL and m.angular <= ANGULAR, (m.accel, m.angular)
    assert np.percentile(m.slips, 95) < SLIP_P95_M and m.slips.max() < SLIP_MAX_M
    hips = PC.hips_floor(out, world_positions(out), out.names.index("Hips"))
    for corner in corners[1:4]:
        passed = np.linalg.norm(hips - (corner[0] * a + corner[1] * b), axis=-1).min()
        assert 0.02 < passed < 0.15, (corner, passed)


def test_bad_paths_and_no_gaits_are_refused(gaits):
    loops = gaits["bandai"]
    for points in (np.zeros((0, 3)), np.zeros((1, 3)), [[0.0, 0.0, 0.0]]):
        with pytest.raises(ValueError, match="two or more points"):
            path.follow(loops, points, 1.3)
    with pytest.raises(ValueError, match="no length"):
        path.follow(loops, [[0.0, 0.0, 0.0], [0.0, 50.0, 0.0]], 1.3)  # Y-up: a path straight up
    with pytest.raises(ValueError, match="one or more gaits"):
        path.follow([], PC.line(5.0, loops[0].up, loops[0].meters_per_unit), 1.3)
    with pytest.raises(ValueError, match="finite"):
        path.follow(loops, [[0.0, 0.0, 0.0], [np.nan, 0.0, 1.0]], 1.3)
    # Speeds as sync blends take weights, over meters of path instead of seconds.
    line = PC.line(5.0, loops[0].up, loops[0].meters_per_unit)
    with pytest.raises(TypeError, match=r"bare array is refused \(at which distances"):
        path.follow(loops, line, np.array([1.3, 1.5]))
    with pytest.raises(ValueError, match="2 distances and 3 speeds; give one speed per distance"):
        path.follow(loops, line, ([0.0, 5.0], [1.3, 1.4, 1.5]))
    with pytest.raises(ValueError, match="distances must be finite and increasing"):
        path.follow(loops, line, ([5.0, 0.0], [1.3, 1.4]))
    with pytest.raises(ValueError, match="speeds must be finite"):
        path.follow(loops, line, lambda d: np.full_like(d, np.nan))


def test_one_gait_walks_the_path_alone(gaits):
    walk = gaits["cmu"][:1]
    c = case("circle at the walk's speed", gaits["cmu"])
    out = path.follow(walk, c.points, c.speed)
    m = measure(out, c, walk, [])
    assert m.lateral.mean() <= PATH_MEAN_M and np.abs(m.spans).max() <= SPAN_TIME
    assert np.percentile(m.slips, 95) < SLIP_P95_M and m.facing.max() <= FACING_DEG
    # Slower than it walks: the walk alone, played slower.
    slow = 0.8 * float(c.speed)
    out = path.follow(walk, c.points, slow)
    assert out.duration == pytest.approx(2 * math.pi * 1.5 / slow, rel=WHOLE_TIME)


def test_a_speed_given_as_a_number_a_function_or_a_profile_is_one_bake(gaits):
    loops = gaits["bandai"]
    points = PC.arcs([4.0], [1.0], loops[0].up, loops[0].meters_per_unit)
    v = 2.0
    ways = [v, lambda s: np.full_like(s, v), lambda s: v, (np.array([0.0, 1.0]), np.array([v, v]))]
    outs = [path.follow(loops, points, way) for way in ways]
    for other in outs[1:]:
        assert other.n_frames == outs[0].n_frames
        np.testing.assert_array_equal(other.rotations, outs[0].rotations)
        np.testing.assert_array_equal(other.positions, outs[0].positions)


def test_the_output_rate_and_the_feet_can_be_given(gaits):
    loops = gaits["cmu"]
    c = case("circle at the run's speed", loops)
    base = path.follow(loops, c.points, c.speed)
    slow = path.follow(loops, c.points, c.speed, fps=24.0)
    assert slow.fps == 24.0 and slow.duration == pytest.approx(base.duration, abs=1.0 / 24.0)
    m = measure(slow, c, loops, [])
    assert m.lateral.mean() <= PATH_MEAN_M and np.percentile(m.slips, 95) < SLIP_P95_M
    # The body map's own feet named: the same bake (the facing read again: within 0.1 mm).
    named = path.follow(loops, c.points, c.speed, feet={"L": "LeftFoot", "R": "RightFoot"})
    assert named.n_frames == base.n_frames
    np.testing.assert_allclose(named.positions * named.meters_per_unit, base.positions * base.meters_per_unit,
                               atol=1e-4)
    np.testing.assert_allclose(named.rotations, base.rotations, atol=1e-4)


def _convention(take: Clip, factor: float, names: str | None) -> Clip:
    """The take in another convention: leg joints named `names` (None: no joint named, and every
    bone along its joint's +X at rest), Z-up, its unit `factor` times smaller (tests/variants.py)."""
    legs = {side: [take.body.legs[side][0], int(take.parents[take.body.feet[side][0]]), *take.body.feet[side]]
            for side in take.body.legs}
    renamed, _ = variants.renamed(take if names else variants.bones_along_x(take)[0], legs, names)
    upright, _ = variants.z_up(renamed)
    return variants.scaled(upright, factor)[0]


@pytest.mark.parametrize("key", SETS)
def test_the_same_path_in_another_convention_is_the_same_motion(takes, key):
    """Z-up, centimetres, other names: the gaits and the path both written so, the same world
    motion (the takes are cut into loops by follow itself, in each convention)."""
    loops = takes[key]
    c = case("figure eight", [sync.loop_cycle(t) for t in loops])
    turn = quat.from_matrix(np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]))  # Y-up to Z-up
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = path.follow(loops, c.points, c.speed)
        base_world = world_positions(base) * base.meters_per_unit
        for names in ("unreal", None):
            factor = loops[0].meters_per_unit / 0.01
            other = [_convention(t, factor, names) for t in loops]
            got = path.follow(other, quat.mul_vec(turn, c.points) * factor, c.speed)
            assert got.n_frames == base.n_frames
            assert np.allclose(got.up, [0.0, 0.0, 1.0]) and got.meters_per_unit == pytest.approx(0.01)
            back = quat.mul_vec(quat.inv(turn), world_positions(got)) * got.meters_per_unit
            assert np.abs(back - base_world).max() < 1e-6, (names, np.abs(back - base_world).max())
            for k, t in base.events.items():
                np.testing.assert_allclose(got.events[k], t, atol=1e-9)


# -- starting and stopping (issue 43) ------------------------------------------------------------
# The idle: the first second of the Bandai bow take, before the bow, where the subject stands (its
# root drifting by 2-5 cm/s), on the gaits' skeleton.
IDLE_TAKE, IDLE_SECONDS = "dataset-1_bow_normal_001", 1.0
IDLE_CASES = ("line", "circle at the walk's speed", "circle at the run's speed", "S-curve", "ramp")
# The bounds: still at both ends (m/s over the idle's own), at rest within this of the
# path's end 1 s after the last transition.
STILL_MPS, END_M = 0.05, 0.10


@pytest.fixture(scope="module")
def idle() -> Clip:
    take = bvh.load(take_path(IDLE_TAKE))
    return take[:round(IDLE_SECONDS * take.fps) + 1]


def hips_speed(clip: Clip, world: np.ndarray | None = None) -> np.ndarray:
    """[T] m/s: the hips' speed over the floor, after motion_checks' 10 Hz low-pass."""
    w = world_positions(clip) if world is None else world
    hips = PC.hips_floor(clip, w, clip.names.index("Hips"))
    return np.linalg.norm(np.gradient(lowpass(hips, clip.fps), axis=0), axis=-1) * clip.fps


class Started(NamedTuple):
    out: Clip
    case: Case
    world: np.ndarray
    warned: list[str]


@pytest.fixture(scope="module")
def started(gaits, idle):
    cache: dict[str, Started] = {}

    def get(name: str) -> Started:
        if name not in cache:
            c = case(name, gaits["bandai"])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = path.follow(gaits["bandai"], c.points, c.speed, idle=idle)
            cache[name] = Started(out, c, world_positions(out), [str(w.message) for w in caught
                                                                 if issubclass(w.category, path.PathWarning)])
        return cache[name]

    return get


@pytest.mark.parametrize("name", IDLE_CASES)
def test_with_an_idle_it_starts_standing_and_comes_to_rest_on_the_paths_end(started, idle, name):
    s = started(name)
    out, fps = s.out, s.out.fps
    assert not s.warned, s.warned
    own = hips_speed(idle).max()
    speed = hips_speed(out, s.world)
    half = round(0.5 * fps)
    assert speed[:half].max() <= own + STILL_MPS, (speed[:half].max(), own)
    assert speed[-half:].max() <= own + STILL_MPS, (speed[-half:].max(), own)
    # A Transition where the gait starts and where it stops, the start after the character has stood.
    starts_stops = out.events["Transition"]
    assert len(starts_stops) == 2 and starts_stops[0] >= 0.5 - 1e-9, starts_stops
    road = PC.polyline(s.case.points, out.up, out.meters_per_unit)
    hips = PC.hips_floor(out, s.world, out.names.index("Hips"))
    settled = round((starts_stops[-1] + 1.0) * fps)
    assert settled < out.n_frames
    assert np.linalg.norm(hips[settled:] - road.points[-1], axis=-1).max() <= END_M, (
        np.linalg.norm(hips[settled:] - road.points[-1], axis=-1).max())
    # It stood on the first point, and walked the path (the hips sway a few centimetres about it).
    assert np.linalg.norm(hips[0] - road.points[0]) <= END_M
    s_along, across = PC.track(road, hips)
    assert across.max() < PATH_MAX_M and s_along.max() <= road.arc[-1] + END_M, (across.max(), s_along.max())


@pytest.mark.parametrize("name", IDLE_CASES)
def test_with_an_idle_the_start_and_stop_do_not_pop_and_feet_hold(started, gaits, idle, name):
    s = started(name)
    out, loops = s.out, gaits["bandai"]
    past, angular = knees_and_turns(out, s.world, [*loops, idle])
    assert angular <= ANGULAR, angular
    assert past <= KNEE_DEG, past
    slip, skating = feet_slips(out)
    p95 = np.percentile(slip, 95)
    assert p95 < SLIP_P95_M and slip.max() < SLIP_MAX_M, (p95, slip.max())
    assert skating < SKATING
    # Accelerations against the gaits' own and the idle's.
    own = np.max([*(peak_accelerations(sync.sync_blend(g, g, 0.0, 4.0)) for g in loops),
                  peak_accelerations(idle)], axis=0)
    accel = peak_accelerations(out, s.world) / own
    assert accel.max() <= ACCEL, accel
    # The root never faster than the fastest gait (the hips over a cycle).
    fastest = float(np.max(blendspace.gait_speeds(loops)))
    hips = PC.hips_floor(out, s.world, out.names.index("Hips"))
    cycle = round(float(np.median(np.diff(out.events["FootDown_L"]))) * out.fps)
    over_cycle = np.linalg.norm(hips[cycle:] - hips[:-cycle], axis=-1) / (cycle / out.fps)
    assert over_cycle.max() <= 1.02 * fastest, (over_cycle.max(), fastest)


def test_an_idle_that_travels_or_is_not_a_clip_is_refused(gaits):
    loops = gaits["bandai"]
    points = PC.line(5.0, loops[0].up, loops[0].meters_per_unit)
    with pytest.raises(ValueError, match=r"travels at .* m/s: give a standing clip"):
        path.follow(loops, points, 1.3, idle=bvh.load(take_path("dataset-1_walk_normal_001")))
    with pytest.raises(TypeError, match="standing Clip"):
        path.follow(loops, points, 1.3, idle="idle.bvh")  # type: ignore[arg-type]
    bow = bvh.load(take_path("dataset-1_bow_normal_001"))
    with pytest.raises(ValueError, match=r"has 1 frame of motion: give a standing clip of two frames"):
        path.follow(loops, points, 1.3, idle=bow[bow.motion_start + 5:bow.motion_start + 6])


# -- following a target in time (issue 43) -------------------------------------------------------
# Targets made from paths of part 1 and a speed profile, sampled at 30 fps as a keyed object is,
# starting at 3 s (the output's frame 0 is the target's first time).
TARGET_M = 0.10
TARGET_FROM_S = 2.0


def target_case(name: str, loops: list[Clip]) -> Case:
    speeds = np.sort(blendspace.gait_speeds(loops))
    walk, run = speeds[0], speeds[1]
    up, mpu = loops[0].up, loops[0].meters_per_unit
    if name == "ramp":  # walk 10 m, speed up to the run's over 10 m, run 10 m
        profile = (np.array([0.0, 10.0, 20.0, 30.0]), np.array([walk, walk, run, run]))
        points = PC.line(30.0, up, mpu)
    elif name == "S-curve":  # running, slowing to a walk through the second arc
        profile = (np.array([0.0, 10.0, 25.0]), np.array([run, run, walk]))
        points = PC.arcs([4.0, -4.0], [math.pi, math.pi], up, mpu)
    else:
        assert name == "figure eight"
        profile = (np.array([0.0]), np.array([walk]))
        points = PC.arcs([3.0, -3.0], [2 * math.pi, 2 * math.pi], up, mpu)
    return Case(points, profile, lambda s: np.interp(s, *profile))


def timed(c: Case, up: np.ndarray, mpu: float, rate: float = 30.0) -> tuple[np.ndarray, np.ndarray]:
    """(times [T] s, positions [T, 3] file units): the case's path walked at its speed, sampled."""
    road = PC.polyline(c.points, up, mpu)
    dense, asked = clock(c, road)
    times = np.arange(0.0, asked[-1], 1.0 / rate)
    s = np.interp(times, asked, dense)
    return times, np.stack([np.interp(s, road.arc, road.points[:, k]) for k in range(3)], axis=-1) / mpu


def apart_from_target(out: Clip, hips: np.ndarray, times: np.ndarray, positions: np.ndarray,
                      reference: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(t [T] s, meters [T]): the hips' floor path [T, 3] (meters) and the target's (`positions` [n, 3]
    in `out`'s units at `times`, linear between), both averaged over the local gait cycle (from the
    `reference` contacts' touchdowns), apart frame by frame; NaN where the cycle's window leaves
    the clip."""
    up = out.up
    t = np.arange(out.n_frames) / out.fps
    target = np.stack([np.interp(t, times, positions[:, k]) for k in range(3)], axis=-1) * out.meters_per_unit
    target -= np.outer(target @ up, up)
    cycle = PC.cycle_frames(reference, out.n_frames)
    return t, np.linalg.norm(PC.moving_average(hips, cycle) - PC.moving_average(target, cycle), axis=-1)


TARGETS = [(key, name) for key in SETS for name in ("ramp", "S-curve", "figure eight")]


@pytest.mark.parametrize(("key", "name"), TARGETS, ids=[f"{k}-{n}" for k, n in TARGETS])
def test_a_timed_target_is_followed_in_time_feet_planted(gaits, key, name):
    loops = gaits[key]
    c = target_case(name, loops)
    up, mpu = loops[0].up, loops[0].meters_per_unit
    times, positions = timed(c, up, mpu)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = path.follow_target(loops, times + 3.0, positions)
    assert not [w for w in caught if issubclass(w.category, path.PathWarning)]
    assert out.duration == pytest.approx(times[-1], abs=1.0 / out.fps)
    # The hips and the target, both averaged over the local gait cycle, frame by frame.
    world = world_positions(out)
    hips = PC.hips_floor(out, world, out.names.index("Hips"))
    t, apart = apart_from_target(out, hips, times, positions, PC.planted(out))
    judged = np.isfinite(apart) & (t >= TARGET_FROM_S)
    assert judged.sum() > 0.5 * out.n_frames and apart[judged].max() <= TARGET_M, apart[judged].max()
    # And every measure of part 1 along its path.
    m = measure(out, c, loops, [])
    assert m.lateral.mean() <= PATH_MEAN_M and m.lateral.max() <= PATH_MAX_M
    assert np.abs(m.spans).max() <= SPAN_TIME, m.spans
    assert m.facing.max() <= FACING_DEG, m.facing.max()
    assert np.percentile(m.slips, 95) < SLIP_P95_M and m.slips.max() < SLIP_MAX_M and m.skating < SKATING
    assert m.knee_past <= KNEE_DEG and m.angular <= ANGULAR, (m.knee_past, m.angular)
    assert m.accel.max() <= ACCEL, m.accel


def test_a_target_too_fast_or_turning_too_tight_warns_with_its_time(gaits):
    loops = gaits["bandai"]
    up, mpu = loops[0].up, loops[0].meters_per_unit
    fastest = float(np.max(blendspace.gait_speeds(loops)))
    a, _ = floor_basis(up)
    # On a line at the fastest gait's speed, 1.6x it from 2 s to 4 s (the gaits reach 1.3x).
    t = np.arange(0.0, 6.0, 1.0 / 30.0)
    v = np.where((t > 2.0) & (t < 4.0), 1.6 * fastest, fastest)
    s = np.concatenate([[0.0], np.cumsum(0.5 * (v[1:] + v[:-1]) / 30.0)])
    with pytest.warns(path.PathWarning, match="the speed asked is above") as caught:
        path.follow_target(loops, t + 10.0, np.outer(s, a) / mpu)
    found = re.search(r"from (\d+\.\d+) to (\d+\.\d+) s into the target's track", str(caught[0].message))
    assert found, str(caught[0].message)
    assert float(found.group(1)) == pytest.approx(2.0, abs=0.1) and float(found.group(2)) == pytest.approx(
        4.0, abs=0.1), found.group(0)
    # Round a 0.5 m circle at the run's speed: v^2 / R over 0.5 g from its start.
    run = float(np.sort(blendspace.gait_speeds(loops))[1])
    road = PC.polyline(PC.circle(0.5, up, mpu), up, mpu)
    tt = np.arange(0.0, road.arc[-1] / run, 1.0 / 30.0)
    pp = np.stack([np.interp(tt * run, road.arc, road.points[:, k]) for k in range(3)], axis=-1) / mpu
    with pytest.warns(path.PathWarning, match=r"s into the target's track the turn is tighter") as caught:
        path.follow_target(loops, tt, pp)
    assert re.search(r"^from 0\.00 to \d\.\d\d s into", str(caught[0].message)), str(caught[0].message)


def test_a_target_with_an_idle_starts_and_ends_standing_and_keeps_time(gaits, idle):
    """The figure eight at the walk's speed, the target standing 1.5 s before it leaves and 2 s
    after it arrives: the character stands, starts so as to be with it, follows it in time, and
    comes to rest on the end."""
    loops = gaits["bandai"]
    c = target_case("figure eight", loops)
    up, mpu = loops[0].up, loops[0].meters_per_unit
    track, along = timed(c, up, mpu)
    times = np.concatenate([[0.0], track + 1.5, [track[-1] + 3.5]])
    positions = np.concatenate([along[:1], along, along[-1:]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", path.PathWarning)
        out = path.follow_target(loops, times, positions, idle=idle)
    switches = out.events["Transition"]
    assert len(switches) == 2 and 0.5 < switches[0] < 1.5, switches
    world = world_positions(out)
    own, speed, half = hips_speed(idle).max(), hips_speed(out, world), round(0.5 * out.fps)
    assert speed[:half].max() <= own + STILL_MPS and speed[-half:].max() <= own + STILL_MPS
    hips = PC.hips_floor(out, world, out.names.index("Hips"))
    end = (positions[-1] - up * (positions[-1] @ up)) * mpu
    assert np.linalg.norm(hips[round((switches[-1] + 1.0) * out.fps):] - end, axis=-1).max() <= END_M
    # In time with the target from 2 s after the start's switch to 1.5 s before the target arrives
    # (the character slows over its last step to stop on the end; the target arrives at speed).
    world_m = world_frames(out)
    reference = PC.planted(out, world_m)
    t, apart = apart_from_target(out, hips, times, positions, reference)
    judged = np.isfinite(apart) & (t >= switches[0] + 2.0) & (t <= track[-1] + 1.5 - 1.5)
    assert judged.sum() > 0.5 * out.n_frames and apart[judged].max() <= TARGET_M, apart[judged].max()
    # Feet and knees as everywhere.
    slips, _ = feet_slips(out, world_m, reference)
    assert np.percentile(slips, 95) < SLIP_P95_M and slips.max() < SLIP_MAX_M, slips.max()
    angular = metrics.peak_angular_speed(out) / max(metrics.peak_angular_speed(g) for g in [*loops, idle])
    assert angular <= ANGULAR, angular


def test_bad_targets_are_refused(gaits):
    loops = gaits["bandai"]
    up, mpu = loops[0].up, loops[0].meters_per_unit
    a, _ = floor_basis(up)
    line = np.outer(np.linspace(0.0, 5.0, 6), a) / mpu
    with pytest.raises(ValueError, match="two or more samples"):
        path.follow_target(loops, [0.0], line[:1])
    with pytest.raises(ValueError, match="one time per position"):
        path.follow_target(loops, np.arange(5.0), line)
    with pytest.raises(ValueError, match="must increase: 2 s follows 3 s"):
        path.follow_target(loops, [0.0, 1.0, 3.0, 2.0, 4.0, 5.0], line)
    with pytest.raises(ValueError, match="finite"):
        path.follow_target(loops, [0.0, 1.0, np.nan, 3.0, 4.0, 5.0], line)
    with pytest.raises(ValueError, match="does not move over the floor"):
        path.follow_target(loops, np.arange(6.0), np.outer(np.arange(6.0), up))


def test_a_target_and_an_idle_in_another_convention_are_the_same_motion(takes, idle):
    """Z-up, centimetres, Unreal names: the gaits, the idle and the target all written so, the same
    world motion from follow_target with and without the idle, and from follow with it."""
    loops = takes["bandai"]
    cut = [sync.loop_cycle(t) for t in loops]
    c = target_case("S-curve", cut)
    up, mpu = cut[0].up, cut[0].meters_per_unit
    times, positions = timed(c, up, mpu)
    turn = quat.from_matrix(np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]))  # Y-up to Z-up
    factor = mpu / 0.01
    other = [_convention(t, factor, "unreal") for t in loops]
    other_idle = _convention(idle, factor, "unreal")
    moved = quat.mul_vec(turn, positions) * factor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [(path.follow_target(loops, times, positions), path.follow_target(other, times, moved)),
                 (path.follow_target(loops, times, positions, idle=idle),
                  path.follow_target(other, times, moved, idle=other_idle)),
                 (path.follow(loops, c.points, 2.0, idle=idle),
                  path.follow(other, quat.mul_vec(turn, c.points) * factor, 2.0, idle=other_idle))]
    for base, got in pairs:
        assert got.n_frames == base.n_frames
        base_world = world_positions(base) * base.meters_per_unit
        back = quat.mul_vec(quat.inv(turn), world_positions(got)) * got.meters_per_unit
        assert np.abs(back - base_world).max() < 1e-6, np.abs(back - base_world).max()
        for k, t in base.events.items():
            np.testing.assert_allclose(got.events[k], t, atol=1e-9)


def test_an_idle_of_another_skeleton_is_refused(gaits):
    loops = gaits["bandai"]
    points = PC.line(5.0, loops[0].up, loops[0].meters_per_unit)
    with pytest.raises(ValueError, match="skeletons differ"):
        path.follow(loops, points, 1.3, idle=bvh.load(take_path("02_01"))[:30])


def test_an_idle_at_another_rate_than_the_output_is_played_at_the_outputs(gaits, idle):
    """The Bandai gaits and idle at 30 fps baked at 24 fps: the idle resampled, the character
    still at both ends and at rest on the end."""
    loops = gaits["bandai"]
    c = case("line", loops)
    out = path.follow(loops, c.points, c.speed, idle=idle, fps=24.0)
    assert out.fps == 24.0
    world = world_positions(out)
    own, speed, half = hips_speed(idle).max(), hips_speed(out, world), round(0.5 * out.fps)
    assert speed[:half].max() <= own + STILL_MPS and speed[-half:].max() <= own + STILL_MPS
    road = PC.polyline(c.points, out.up, out.meters_per_unit)
    hips = PC.hips_floor(out, world, out.names.index("Hips"))
    assert np.linalg.norm(hips[-1] - road.points[-1]) <= END_M
