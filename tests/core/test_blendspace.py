"""Blend spaces (issue 41) on the Bandai dataset-1 walk, run and dash of one subject and the CMU
subject 02 walk and jog: gait speeds, a constant speed at a gait's own (that loop) and between two
(their sync blend), loops of two cycles, speed ramps measured per output cycle on the output's own
feet, pops, footstep events, foot locking and the reachable range.

Every motion measure here is the test's own, from forward kinematics of the output: the pelvis's
floor path, touchdowns found by `contacts.footsteps` on the output's feet, slips per stance."""

from __future__ import annotations

import itertools
import warnings

import motion_checks
import numpy as np
import pytest
from fixtures import take_path
from variants import played, travel_on

from core import blendspace, bvh, contacts, footlock, metrics, quat, skeleton, sync
from core.body import with_feet
from core.clip import Clip, SkeletonMismatch

BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]
CMU = ["02_01", "02_03"]
SETS = {"bandai": BANDAI, "cmu": CMU}
RAMP = 8.0  # seconds from the slowest gait's speed to the fastest's (and as long back)


@pytest.fixture(scope="module")
def takes() -> dict[str, list[Clip]]:
    return {key: [bvh.load(take_path(n)) for n in names] for key, names in SETS.items()}


@pytest.fixture(scope="module")
def loops(takes) -> dict[str, list[Clip]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {key: [sync.loop_cycle(t) for t in clips] for key, clips in takes.items()}


# --- the test's own measures ----------------------------------------------------------------------


def twice(loop: Clip) -> Clip:
    """A loop of two cycles: the loop played twice over, its markers in both."""
    n = loop.n_frames
    two = played(loop, 2 * n)
    events = {k: np.concatenate([v, v + n / loop.fps]) for k, v in loop.events.items()}
    return two.replace(events=events, loop=True, name=f"{loop.name} x2")


def from_left_touchdown(loop: Clip) -> Clip:
    """The loop started on the frame nearest its first left touchdown marker, as loop_cycle cuts
    takes: its frames from there, played on into the next cycle."""
    f = round(loop.events["FootDown_L"][0] * loop.fps)
    n = loop.n_frames
    two = played(loop, 2 * n)
    events = {k: np.sort(np.mod(v - f / loop.fps, n / loop.fps)) for k, v in loop.events.items()}
    return two.replace(rotations=two.rotations[f:f + n], positions=two.positions[f:f + n], events=events,
                       loop=True, name=loop.name)


def own_turn(loop: Clip, joint: int, like: Clip) -> float:
    """The loop's turn per cycle as a blend plays it: read with its own facing where it carries
    its travel on `joint`, else (its facing was its dummy root's) with `like`'s there."""
    return sync.cycle_travel(loop if loop.root == joint else travel_on(loop, joint, like))[1]


def pelvis(clip: Clip) -> int:
    joint = clip.body.pelvis
    assert joint is not None
    return joint


def body(clip: Clip) -> np.ndarray:
    """The pelvis and every joint below it: the body whose world motion is compared (a dummy root
    above the hips only carries travel in some takes)."""
    return np.array([j for j in range(clip.n_joints) if pelvis(clip) in skeleton.chain(clip.parents, j)])


def pelvis_floor(clip: Clip) -> np.ndarray:
    """[T, 3] the pelvis's world position projected on the floor, meters."""
    p = clip.fk()[1][:, pelvis(clip)]
    return (p - np.outer(p @ clip.up, clip.up)) * clip.meters_per_unit


def touchdowns(clip: Clip) -> dict[str, np.ndarray]:
    """Touchdowns found on the clip's own feet, seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = contacts.footsteps(clip)
    return {k: found[k] for k in ("FootDown_L", "FootDown_R")}


def cycle_speeds(out: Clip, target) -> tuple[np.ndarray, np.ndarray]:
    """(measured, target) m/s per output cycle: from each touchdown found on the output's feet to
    the next of the same foot, the pelvis's floor chord over the time, and the target's mean."""
    path = pelvis_floor(out)
    frames = np.arange(out.n_frames)
    measured, wanted = [], []
    for steps in touchdowns(out).values():
        for a, b in itertools.pairwise(steps):
            ends = [np.array([np.interp(t * out.fps, frames, path[:, k]) for k in range(3)]) for t in (a, b)]
            measured.append(np.linalg.norm(ends[1] - ends[0]) / (b - a))
            wanted.append(np.interp(np.linspace(a, b, 401), *target).mean())
    return np.array(measured), np.array(wanted)


def ramp(speeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.array([0.0, RAMP, 2 * RAMP]), np.array([speeds.min(), speeds.max(), speeds.min()])


def stance_slips(clip: Clip, planted: dict[str, np.ndarray]) -> np.ndarray:
    """Slip (m) over the floor of each stance's pivot (`motion_checks`, from scipy's FK), from where
    a lock is full (issue 36's locks ease in over the landing foot's deceleration, as the loops'
    own feet land)."""
    return motion_checks.stance_slips(clip, planted, footlock.EASE_IN)


def nearest_gait_thresholds(gaits: list[Clip], target, at: float) -> contacts.Thresholds:
    """The contact thresholds of the gait whose speed is nearest the target at `at` seconds: the
    blend space reads each gait's own touchdowns with its thresholds, and a ramp from a walk to
    a dash is not one gait whose thresholds one reading could set."""
    speeds = blendspace.gait_speeds(gaits)
    v = np.interp(at, *target) if isinstance(target, tuple) else float(target)
    return contacts.thresholds(gaits[int(np.argmin(np.abs(speeds - v)))])


def touchdowns_near(out: Clip, at: float, foot: str, thresholds: contacts.Thresholds) -> np.ndarray:
    """Touchdowns of `foot` (seconds) found on the output's own feet within a second of `at`."""
    a, z = max(0, int((at - 1.0) * out.fps)), min(out.n_frames, int((at + 1.0) * out.fps) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = contacts.footsteps(out[a:z], thresholds=thresholds)
    return found[foot] + a / out.fps


def world_body(clip: Clip) -> np.ndarray:
    return clip.fk()[1][:, body(clip)]


# --- gait speeds ------------------------------------------------------------------------------------


def test_gait_speeds_are_each_loops_travel_speed_in_the_order_given(loops, takes):
    cmu = loops["cmu"]
    want = [sync.travel_speed(loop, loop, 0.0) for loop in cmu]
    np.testing.assert_allclose(blendspace.gait_speeds(cmu), want, rtol=1e-12)
    np.testing.assert_allclose(blendspace.gait_speeds(cmu[::-1]), want[::-1], rtol=1e-12)
    # Takes are cut with loop_cycle: the same speeds.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(blendspace.gait_speeds(takes["cmu"]), want, rtol=1e-12)
    assert 1.1 < want[0] < 1.3 and 2.5 < want[1] < 2.9  # a walk and a jog
    # One gait, or two that make no blend space (one speed twice): each measured all the same.
    np.testing.assert_allclose(blendspace.gait_speeds(cmu[:1]), want[:1], rtol=1e-12)
    np.testing.assert_allclose(blendspace.gait_speeds([cmu[0], cmu[0]]), [want[0]] * 2, rtol=1e-12)


def test_gaits_that_carry_their_travel_on_another_joint_are_measured_on_the_hips(loops):
    # Bandai's walk travels on its hips, its run and dash loops on the dummy root above them.
    walk, run, dash = loops["bandai"]
    hips = pelvis(walk)
    assert walk.root == hips and run.root != hips and dash.root != hips
    speeds = blendspace.gait_speeds([walk, run, dash])
    assert speeds[0] == pytest.approx(sync.travel_speed(walk, walk, 0.0), rel=1e-12)
    for speed, loop in zip(speeds[1:], (run, dash), strict=True):
        # Their hips' floor chord over the loop, played on as the hips travel. Read on the hips,
        # with the walk's facing, these loops turn a little (0.3-0.6 degrees a cycle), and a
        # stride is the hips' travel with the turn taken out, each step in its own frame: it
        # differs from the chord of a swaying path that turns by the turn times the sway.
        n = loop.n_frames
        turn = own_turn(loop, hips, walk)
        assert abs(turn) < np.radians(1.0)
        path = pelvis_floor(played(travel_on(loop, hips, walk), n + 1))
        chord = np.linalg.norm(path[n] - path[0]) * loop.fps / n
        assert speed == pytest.approx(chord, rel=1e-4)
    assert list(speeds) == sorted(speeds) and speeds[0] > 1.0 and speeds[2] > 2 * speeds[0]


# --- constant speeds: the loops and their sync blends ----------------------------------------------


@pytest.mark.parametrize("key", SETS)
def test_a_constant_speed_at_a_gaits_own_speed_plays_that_loop(key, loops):
    gaits = loops[key]
    walk = gaits[0]
    for loop, speed in zip(gaits, blendspace.gait_speeds(gaits), strict=True):
        out = blendspace.blend_space(gaits[::-1], speed, 2.5)
        # It starts on the loop's first left touchdown and plays its frames at its rate.
        start = round(loop.events["FootDown_L"][0] * loop.fps)
        frames = (start + np.arange(out.n_frames)) % loop.n_frames
        inner = body(loop)[1:]
        assert quat.angle(out.rotations[:, inner], loop.rotations[frames][:, inner]).max() < 1e-12
        # Played on, cycle after cycle, as its hips travel (where the blend space reads travel),
        # the seam's step measured with the walk's facing, as the blend measures every gait, and
        # turning by the loop's own turn.
        hips = pelvis(walk)
        moved = travel_on(loop, hips, walk)
        want = played(moved, start + out.n_frames, turn=own_turn(loop, hips, walk))[start:]
        error = np.linalg.norm(world_body(out) - world_body(want), axis=-1).max()
        assert error < 1e-9 * loop.height


def test_a_constant_speed_between_two_gaits_is_their_sync_blend(loops):
    walk, jog = loops["cmu"]
    for target in (1.5, 2.0, 2.5):
        w = sync.weight_for_speed(walk, jog, target)
        want = sync.sync_blend(walk, jog, w, 3.0, mode="linear", lock_feet=False)
        out = blendspace.blend_space([jog, walk], target, 3.0)
        assert out.n_frames == want.n_frames and out.fps == want.fps
        assert quat.angle(out.rotations, want.rotations).max() < 1e-12
        np.testing.assert_allclose(out.positions, want.positions, rtol=0, atol=1e-9 * walk.height)


def test_three_gaits_between_two_are_the_sync_blend_of_those_two(loops):
    # Bandai: walk, run and dash started on their left touchdowns (as loop_cycle cuts takes), and,
    # for sync_blend, with their travel on the hips, where the blend space reads it.
    walk, run, dash = (from_left_touchdown(loop) for loop in loops["bandai"])
    speeds = blendspace.gait_speeds([walk, run, dash])
    hips = pelvis(walk)
    moved = [travel_on(loop, hips, walk) for loop in (walk, run, dash)]
    for lo, f in ((0, 0.3), (0, 0.8), (1, 0.5)):
        target = speeds[lo] + f * (speeds[lo + 1] - speeds[lo])
        a, b = moved[lo], moved[lo + 1]
        w = sync.weight_for_speed(a, b, target)
        want = sync.sync_blend(a, b, w, 3.0, mode="linear", lock_feet=False)
        out = blendspace.blend_space([dash, walk, run], target, 3.0)
        inner = body(walk)
        assert quat.angle(out.rotations[:, inner], want.rotations[:, inner]).max() < 1e-12
        error = np.linalg.norm(world_body(out) - world_body(want), axis=-1).max()
        assert error < 1e-9 * walk.height, (lo, f)


def test_a_loop_played_twice_is_the_same_gait(loops):
    for key, (i, j) in (("bandai", (0, 2)), ("cmu", (1, 0))):
        # Each loop as the blend space reads it: its travel on the hips (Bandai's run and dash
        # loops carry it on the dummy root above them), with the slowest gait's up and facing,
        # which the loop convention's step across the seam is measured in.
        hips = pelvis(loops[key][0])
        gaits = [travel_on(g, hips, loops[key][0]) for g in loops[key]]
        doubled = [twice(g) if k in (i, j) else g for k, g in enumerate(gaits)]
        assert doubled[i].n_frames == 2 * gaits[i].n_frames
        np.testing.assert_allclose(blendspace.gait_speeds(doubled), blendspace.gait_speeds(gaits), rtol=1e-12)
        target = ramp(blendspace.gait_speeds(gaits))
        once = blendspace.blend_space(gaits, target, 5.0)
        two = blendspace.blend_space(doubled, target, 5.0)
        error = np.linalg.norm(two.fk()[1] - once.fk()[1], axis=-1).max()
        assert error < 1e-9 * gaits[0].height, key
        # The events come from touchdowns found on each loop, and the detector reads a loop's seam
        # (wrapped) a little differently from the same poses played on (Bandai's dash: 0.58 frame).
        for foot in once.events:
            np.testing.assert_allclose(two.events[foot], once.events[foot], atol=0.5 / once.fps)


# --- ramps ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", SETS)
def test_over_a_ramp_each_cycle_travels_at_the_target_speed(key, loops):
    gaits = loops[key]
    speeds = blendspace.gait_speeds(gaits)
    target = ramp(speeds)
    out = blendspace.blend_space(gaits, target, 2 * RAMP)
    measured, wanted = cycle_speeds(out, target)
    assert len(measured) >= 2 * 2 * RAMP / 1.2  # every cycle, of both feet
    np.testing.assert_allclose(measured, wanted, rtol=0.02)
    # The root moves at the speeds between its sources', never beyond.
    assert speeds.min() * 0.99 <= measured.min() and measured.max() <= speeds.max() * 1.01


@pytest.mark.parametrize("key", SETS)
def test_ramps_inside_the_range_do_not_pop(key, loops):
    gaits = loops[key]
    speeds = blendspace.gait_speeds(gaits)
    fastest = max(metrics.peak_angular_speed(played(g, 3 * g.n_frames)) for g in gaits)
    for seconds in (RAMP, 3.0):
        target = (np.array([0.0, seconds, 2 * seconds]), np.array([speeds[0], speeds[-1], speeds[0]]))
        out = blendspace.blend_space(gaits, target, 2 * seconds)
        assert metrics.peak_angular_speed(out) <= 1.1 * fastest
        # Where the bracketing pair changes (the target crosses a middle gait's speed, which plays
        # alone there), joints accelerate no more than that gait does itself.
        v = np.interp(np.arange(out.n_frames) / out.fps, *target)
        for g, speed in zip(gaits[1:-1], speeds[1:-1], strict=True):
            own = metrics.peak_angular_acceleration(played(g, 3 * g.n_frames))
            switches = np.flatnonzero((v[:-1] - speed) * (v[1:] - speed) <= 0.0)
            assert len(switches) == 2
            for k in switches:
                assert metrics.peak_angular_acceleration(out, frames=(int(k), int(k) + 3)) <= own


# --- footstep events ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", SETS)
def test_footdown_events_alternate_and_sit_on_the_touchdowns_of_the_outputs_feet(key, loops):
    """Each event within 1 frame of the touchdown found on the output's own feet
    (`contacts.footsteps` around it, with the thresholds of the gait nearest in speed, a
    touchdown on a whole frame the span it landed in: `motion_checks.frames_apart`), and at
    constant speeds each touchdown found within 1 frame of an event. Where a gait plays alone they coincide
    (under 0.1 frame); between two, up to 0.86 frame (CMU at 120 fps) and 0.91 (a Bandai ramp
    at 30 fps). Read instead with the thresholds of the whole output, or of a two-second window
    of it, and to the sub-frame value the detector gives, the events were 1.6 frames from them at
    worst (a Bandai ramp), and a window's own thresholds put one CMU touchdown 7 frames late."""
    gaits = loops[key]
    speeds = blendspace.gait_speeds(gaits)
    for target in (*np.linspace(speeds[0], speeds[-1], 7), ramp(speeds)):
        seconds = 2 * RAMP if isinstance(target, tuple) else 4.0
        out = blendspace.blend_space(gaits, target, seconds)
        events = np.concatenate([out.events["FootDown_L"], out.events["FootDown_R"]])
        feet = np.repeat([0, 1], [len(out.events["FootDown_L"]), len(out.events["FootDown_R"])])
        order = feet[np.argsort(events)]
        assert len(order) >= 2 * seconds and np.all(order[1:] != order[:-1])
        for foot in ("FootDown_L", "FootDown_R"):
            # A touchdown needs frames either side of it to be found.
            for e in out.events[foot]:
                if 0.1 < e < seconds - 0.1:
                    found = touchdowns_near(out, e, foot, nearest_gait_thresholds(gaits, target, e))
                    assert motion_checks.frames_apart(found, e, out.fps) <= 1.0, (key, foot, e)
            if isinstance(target, tuple):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = contacts.footsteps(out, thresholds=nearest_gait_thresholds(gaits, target, 0.0))[foot]
            for t in found[(found > 0.1) & (found < seconds - 0.1)]:
                nearest = float(out.events[foot][np.argmin(np.abs(out.events[foot] - t))])
                assert motion_checks.frames_apart(np.array([t]), nearest, out.fps) <= 1.0, (key, foot, t)


# --- foot locking ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", SETS)
def test_locked_feet_slide_under_a_centimetre_per_stance(key, loops):
    """Slip per stance of the feet's pivot, over the frames every gait that shows has the foot
    planted, from where a lock is full: at most 1 cm (0.1 cm Bandai, 0.0 CMU); plain, up to
    2.6-2.8 cm. Counted from the touchdown, the landing that issue 36's locks ease in over adds
    up to 4.6 cm (Bandai) and 3.4 cm (CMU), as the loops' own landings do (up to 6.7 and 9.8)."""
    gaits = loops[key]
    target = ramp(blendspace.gait_speeds(gaits))
    planted = blendspace.blend_space_contacts(gaits, target, 2 * RAMP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        locked = blendspace.blend_space(gaits, target, 2 * RAMP, lock_feet=True)
    plain = blendspace.blend_space(gaits, target, 2 * RAMP)
    held, loose = stance_slips(locked, planted), stance_slips(plain, planted)
    assert len(held) >= 2 * 2 * RAMP / 1.2
    assert held.max() <= 0.01, np.round(held * 100, 2)
    # Each stance no worse than the worst stance of the better of the two gaits the target is
    # between, each played alone over its own contacts; and well under the plain blend's.
    alone = []
    for g in gaits:
        own = {f: np.tile(m, 4) for f, m in contacts.contacts(g).items()}
        alone.append(stance_slips(played(g, 4 * g.n_frames), own).max())
    speeds = blendspace.gait_speeds(gaits)
    starts = np.concatenate([[a for a, _ in motion_checks.runs(m)] for m in planted.values()])
    v = np.interp(starts / locked.fps, *target)
    lo = np.clip(np.searchsorted(speeds, v, side="right") - 1, 0, len(gaits) - 2)
    better = np.minimum(np.take(alone, lo), np.take(alone, lo + 1))
    assert np.all(held <= better), np.round(np.c_[held, better] * 100, 2)
    assert held.max() < 0.5 * loose.max()
    # Locking moves only the legs.
    legs = sorted({j for leg in locked.body.legs.values() for j in leg})
    others = np.setdiff1d(np.arange(locked.n_joints), legs)
    np.testing.assert_array_equal(locked.rotations[:, others], plain.rotations[:, others])


# --- outside the gaits' speeds, and the arguments ----------------------------------------------------


@pytest.mark.parametrize("key", SETS)
def test_past_the_slowest_and_the_fastest_gait_it_plays_slower_or_faster(key, loops):
    gaits = loops[key]
    speeds = blendspace.gait_speeds(gaits)
    for speed, scale in ((speeds[0], 0.7), (speeds[0], 0.85), (speeds[-1], 1.15), (speeds[-1], 1.3)):
        target = (np.array([0.0, 1.0]), np.array([scale * speed] * 2))
        out = blendspace.blend_space(gaits, target, 5.0)
        measured, wanted = cycle_speeds(out, target)
        np.testing.assert_allclose(measured, wanted, rtol=0.02)
        # Rate scaled: that gait's cycle, over the scale.
        loop = gaits[0] if scale < 1.0 else gaits[-1]
        cycle = np.diff(out.events["FootDown_L"])
        np.testing.assert_allclose(cycle, loop.n_frames / loop.fps / scale, rtol=1e-6)


def test_speeds_out_of_reach_name_the_range_the_gaits_reach(loops):
    gaits = loops["cmu"]
    low, high = 0.7 * blendspace.gait_speeds(gaits)[0], 1.3 * blendspace.gait_speeds(gaits)[1]
    reach = rf"\[{low:.4g}, {high:.4g}\] m/s"
    for bad in (0.5 * low, 1.1 * high, -1.0, (np.array([0.0, 2.0]), np.array([1.5, 1.2 * high]))):
        with pytest.raises(ValueError, match=reach):
            blendspace.blend_space(gaits, bad, 2.0)
    with pytest.raises(ValueError, match=r"at 1\.600 s"):
        blendspace.blend_space(gaits, lambda t: np.where(t < 1.6, 1.5, 0.1), 2.0)
    blendspace.blend_space(gaits, low, 1.0)
    blendspace.blend_space(gaits, high, 1.0)


def test_speed_may_be_a_number_a_callable_or_a_times_speeds_pair(loops):
    gaits = loops["cmu"]
    curve = (np.array([0.0, 2.0]), np.array([1.3, 2.5]))
    want = blendspace.blend_space(gaits, curve, 2.0)
    for speed in (lambda t: np.interp(t, *curve), lambda t: float(np.interp(t, *curve))):
        got = blendspace.blend_space(gaits, speed, 2.0)
        np.testing.assert_array_equal(got.rotations, want.rotations)
    with pytest.raises(TypeError, match="bare array"):
        blendspace.blend_space(gaits, np.full(241, 1.5), 2.0)
    with pytest.raises(ValueError, match="increasing"):
        blendspace.blend_space(gaits, (np.array([1.0, 0.0]), np.array([1.5, 1.5])), 2.0)


def test_the_output_rate_and_start(loops):
    walk, jog = loops["cmu"]
    slow = jog.replace(rotations=jog.rotations[::2], positions=jog.positions[::2], fps=60.0)
    out = blendspace.blend_space([walk, slow], 1.8, 1.0)
    assert out.fps == 120.0 and out.n_frames == 121
    assert blendspace.blend_space([walk, slow], 1.8, 1.0, fps=30.0).n_frames == 31
    # Phase 0: both gaits at their left touchdowns, so the first frame is walk frame 0 blended
    # with jog frame 0 at the weight for the speed.
    w = sync.weight_for_speed(walk, slow, 1.8)
    inner = body(walk)[1:]
    first = quat.slerp(walk.rotations[0, inner], slow.rotations[0, inner], w)
    assert quat.angle(out.rotations[0, inner], first).max() < 1e-12


def test_bad_gaits_are_refused_with_what_to_do(loops):
    walk, jog = loops["cmu"]
    with pytest.raises(ValueError, match="two or more gaits"):
        blendspace.blend_space([walk], 1.2, 1.0)
    with pytest.raises(ValueError, match="one gait per speed"):
        blendspace.blend_space([walk, walk.replace(name="again")], 1.2, 1.0)
    with pytest.raises(SkeletonMismatch):
        blendspace.blend_space([walk, loops["bandai"][1]], 1.2, 1.0)
    limping = walk.replace(events={"FootDown_L": [0.0, 0.3], "FootDown_R": [0.6]})
    with pytest.raises(ValueError, match="alternate left and right"):
        blendspace.blend_space([limping, jog], 1.5, 1.0)
    with pytest.raises(ValueError, match="duration"):
        blendspace.blend_space([walk, jog], 1.5, -1.0)


def test_gait_weights_hold_two_neighbouring_gaits_at_weight_for_speeds_weight(loops):
    walk, run, dash = (from_left_touchdown(loop) for loop in loops["bandai"])
    given = [dash, walk, run]
    speeds = blendspace.gait_speeds(given)
    target = ramp(speeds)
    w = blendspace.gait_weights(given, target, 2 * RAMP)
    assert w.shape == (round(2 * RAMP * 30) + 1, 3)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((w > 0).sum(axis=1) <= 2) and not np.any(w[:, 0] * w[:, 1] > 0)  # dash and walk
    # At the walk's speed the walk alone; at the dash's the dash; between the run and the dash,
    # sync.weight_for_speed's weight (both read on the hips, where the blend space reads travel).
    np.testing.assert_array_equal(w[0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(w[round(RAMP * 30)], [1.0, 0.0, 0.0])
    middle = 0.5 * (speeds[2] + speeds[0])
    hips = pelvis(walk)
    want = sync.weight_for_speed(travel_on(run, hips, walk), travel_on(dash, hips, walk), middle)
    np.testing.assert_allclose(blendspace.gait_weights(given, middle, 1.0)[0], [want, 0.0, 1.0 - want],
                               atol=1e-12)


def test_feet_given_are_the_feet_every_gait_is_read_with(loops):
    # Naming the feet rebuilds each loop's body map around them (body.with_feet), facing included.
    gaits, feet = loops["cmu"], {"L": "LeftFoot", "R": "RightFoot"}
    named = blendspace.blend_space(gaits, 1.8, 2.0, feet=feet, lock_feet=True)
    want = blendspace.blend_space([with_feet(g, feet) for g in gaits], 1.8, 2.0, lock_feet=True)
    np.testing.assert_array_equal(named.rotations, want.rotations)
    for foot in want.events:
        np.testing.assert_array_equal(named.events[foot], want.events[foot])
    with pytest.raises(ValueError, match="both feet"):
        blendspace.blend_space(gaits, 1.8, 2.0, feet={"L": "LeftFoot", "R": "LeftFoot"})
