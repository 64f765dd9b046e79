"""Transitions that carry their speed and keep their knees (dead blending and inertialization, and
sequences of them), on every walk <-> run pair of tests/data at several switch times and blend times
of 0.2-0.5 s, measured with tests/blend_checks.py (scipy FK), with and without lock_feet:

- at each frame of the blend window the root's horizontal speed lies within [0.95 x min, 1.05 x max]
  of both takes' (the source's over the 0.3 s before the switch, the destination's over its own
  window frames);
- no knee more than 3 degrees past the straightest or beyond the most bent of the two takes, and
  no knee's flexion changing in a frame more than twice the most the takes' does;
- the switch velocity change is the one positions blended into the same re-anchored destination
  give (the travel changes nothing at the switch), and where a knee is eased at the switch its
  velocity changes there no more than the source's own knee does over its next two frames;
- with 0.35-0.5 s dead blends, metrics.peak_angular_speed of the window at most 1.2x the sources'
  over their whole takes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import blend_checks as bc
import numpy as np
import pytest
from fixtures import take_path
from test_transition import anchored

from core import bvh, knees, metrics, quat
from core import transition as tr
from core.clip import Clip

B = "dataset-1_"
WALKS = [B + n for n in ("walk_normal_001", "walk_happy_001", "walk_tired_001", "walk-left_normal_001",
                         "walk-right_normal_001")]
RUNS = [B + "run_happy_001", B + "run_tired_001"]
# Walk <-> run pairs that share a skeleton: CMU subject 02, subject 09 (09_12 walks forward for its
# first 3 s) and Bandai's.
PAIRS = [("02_01", "02_03"), ("02_02", "02_03"), ("09_12", "09_01")] + [(w, r) for w in WALKS for r in RUNS]
PAIRS += [(b, a) for a, b in PAIRS]
BLENDS = (0.2, 0.35, 0.5)
METHODS: dict[str, Callable[..., Clip]] = {"dead": tr.dead_blend, "inertialize": tr.inertialize}
Y_UP = np.array([0.0, 1.0, 0.0])

_LOADED: dict[str, Clip] = {}


def load(name: str) -> Clip:
    if name not in _LOADED:
        clip = bvh.load(take_path(name))
        _LOADED[name] = clip[:round(3.2 * clip.fps)] if name == "09_12" else clip
    return _LOADED[name]


def switches(src: Clip, dst: Clip):
    """(src_time, dst_time, blend_time): three switch times over the source, into the destination
    0.3 s after its start and halfway through (phases as they come, not matched)."""
    for ts in np.linspace(src.motion_start / src.fps + 1.0, src.duration - 0.3, 3):
        for td in (dst.motion_start / dst.fps + 0.3, dst.duration / 2):
            for blend_time in BLENDS:
                if round(td * src.fps) + math.ceil(blend_time * src.fps - 1e-5) < dst.n_frames - 1:
                    yield float(ts), float(td), blend_time


def window(src: Clip, ts: float, blend_time: float) -> np.ndarray:
    """Output frames of the blend window: from the first after the switch to the first at alpha 1."""
    i_s = round(ts * src.fps)
    return np.arange(i_s + 1, i_s + math.ceil(blend_time * src.fps - 1e-5) + 1)


def root_speeds(clip: Clip) -> np.ndarray:
    """[T] horizontal speed of the hips into each frame (m/s; frame 0 repeats frame 1's)."""
    hips = clip.names.index("Hips")
    speed = bc.horizontal_speed(bc.world_positions(clip)[:, hips], Y_UP, clip.fps, clip.meters_per_unit)
    return np.concatenate([speed[:1], speed])


def flexion_step(knee: np.ndarray, start: int) -> float:
    """The largest change (rad) of a knee's flexion from one frame to the next, from `start` on."""
    return float(np.abs(np.diff(knee[start:])).max())


@pytest.mark.parametrize("lock_feet", [False, True], ids=["", "lock_feet"])
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0][-16:]}>{p[1][-16:]}")
def test_the_root_moves_between_the_takes_speeds_and_knees_stay_in_their_range(pair, method, lock_feet):
    # With lock_feet as well: the lock holds feet by the legs (no lower_pelvis: the root's floor
    # travel is the blend's), its knees kept in range up to where it lets go, and no knee snaps,
    # its flexion changing in a frame at most twice what the takes' does (issue 36's bound for
    # locks pulling feet back; the unlocked blends reach 1.3x, the locks 1.78x: a foot stopped at
    # once on a leg the blend has straight. Before issue 37's lock_feet part 3.6x, and 25 degrees
    # past the most bent in a lock's let-go; main's window on issue 36b's locks 2.48x, 3.1 degrees).
    src, dst = load(pair[0]), load(pair[1])
    legs = bc.legs(src.names)
    own_s, own_d = root_speeds(src), root_speeds(dst)
    ks, kd = bc.knees(src, legs), bc.knees(dst, legs)
    reach = {f: (min(ks[f][src.motion_start:].min(), kd[f][dst.motion_start:].min()),
                 max(ks[f][src.motion_start:].max(), kd[f][dst.motion_start:].max())) for f in "LR"}
    slack = math.radians(3.0)
    snap = 2.0 * max(max(flexion_step(ks[f], src.motion_start + 1), flexion_step(kd[f], dst.motion_start + 1))
                     for f in "LR")
    for ts, td, blend_time in switches(src, dst):
        out = METHODS[method](src, dst, ts, td, blend_time, lock_feet=lock_feet)
        frames = window(src, ts, blend_time)
        i_s, i_d = round(ts * src.fps), round(td * src.fps)
        takes = np.concatenate([own_s[i_s - round(0.3 * src.fps) + 1:i_s + 1],
                                own_d[i_d + 1:i_d + 1 + len(frames)]])
        speed = root_speeds(out)[frames]
        case = (pair, ts, td, blend_time)
        assert speed.max() <= 1.05 * takes.max(), (case, speed.max(), takes.max())
        assert speed.min() >= 0.95 * takes.min(), (case, speed.min(), takes.min())
        bent = bc.knees(out, legs)
        for f in "LR":
            after = bent[f][i_s + 1:]  # the window, the lock's let-go, and dst's own frames after them
            assert after.min() >= reach[f][0] - slack, (case, f, np.degrees(after.min()))
            assert after.max() <= reach[f][1] + slack, (case, f, np.degrees(after.max()))
            assert flexion_step(bent[f], i_s) <= snap, (case, f, flexion_step(bent[f], i_s) / snap * 2.0)


def test_positions_blended_overshoot_where_the_travel_does_not():
    # The lurch the issue names: positions whose distance grows while the weight moves fastest.
    src, dst = load(B + "walk_tired_001"), load(B + "run_happy_001")
    worst = 0.0
    for ts, td, blend_time in switches(src, dst):
        placed = anchored(src, dst, ts, td)
        out = tr.dead_blend(src, placed, ts, td, blend_time, reanchor=False)
        frames = window(src, ts, blend_time)
        i_d = round(td * src.fps)
        worst = max(worst, float(root_speeds(out)[frames].max() / root_speeds(placed)[i_d + 1:i_d + 1 +
                                                                                      len(frames)].max()))
    assert worst > 1.2


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0][-16:]}>{p[1][-16:]}")
def test_the_switch_is_the_one_positions_blended_give_and_an_eased_knee_turns_no_harder_than_the_take(
        pair, method):
    src, dst = load(pair[0]), load(pair[1])
    ranges = knees.ranges(src, dst)
    for ts, td, blend_time in switches(src, dst):
        i_s = round(ts * src.fps)
        out = METHODS[method](src, dst, ts, td, blend_time)
        # The same switch into the destination placed where re-anchoring puts it, its root's
        # positions blended (reanchor=False), its fast joints blending as long: only the root's
        # travel differs.
        placed = METHODS[method](src, anchored(src, dst, ts, td), ts, td, blend_time, reanchor=False,
                                 extend_fast_joints=True)
        new, old = metrics.switch_velocity_change(out, i_s), metrics.switch_velocity_change(placed, i_s)
        for k in ("position", "rotation"):
            assert new[k] <= old[k] * (1 + 1e-9) + 1e-12, (pair, ts, td, blend_time, k, new[k], old[k])
        for knee in ranges:
            after = slice(i_s + 1, i_s + 2)
            flexion = knees.flexion(out.rotations[after], out.positions[after], out.parents, knee.hip,
                                    knee.knee, knee.ankle, knee.axis)[0]
            if knee.lo <= flexion <= knee.hi:
                continue
            # Eased at the switch: the take's own knee turns back there within two frames.
            w_out = quat.angular_velocity(out.rotations[i_s - 1:i_s + 2, knee.knee], out.fps)
            w_src = quat.angular_velocity(src.rotations[i_s - 1:i_s + 3, knee.knee], src.fps)
            own = max(np.linalg.norm(w_src[1] - w_src[0]), np.linalg.norm(w_src[2] - w_src[1]))
            assert np.linalg.norm(w_out[1] - w_out[0]) <= own, (pair, ts, td, blend_time)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0][-16:]}>{p[1][-16:]}")
def test_dead_blends_of_a_third_of_a_second_and_more_turn_joints_no_faster_than_the_takes(pair):
    src, dst = load(pair[0]), load(pair[1])
    takes = max(metrics.peak_angular_speed(src, (src.motion_start + 1, src.n_frames)),
                metrics.peak_angular_speed(dst, (dst.motion_start + 1, dst.n_frames)))
    for ts, td, blend_time in switches(src, dst):
        if blend_time < 0.35:
            continue
        out = tr.dead_blend(src, dst, ts, td, blend_time)
        frames = window(src, ts, blend_time)
        peak = metrics.peak_angular_speed(out, (int(frames[0]), int(frames[-1]) + 1))
        assert peak <= 1.2 * takes, (pair, ts, td, blend_time, peak / takes)


def test_a_sequence_carries_its_speed_through_every_switch():
    walk, run = load("02_01"), load("02_03")
    spans = [(walk, 0.2, 1.4), (run, 0.3, 1.2), (walk, 1.0, 2.5)]
    out = tr.sequence(spans, blend_time=0.3, method="dead")
    speed = root_speeds(out)
    own = {id(walk): root_speeds(walk), id(run): root_speeds(run)}
    switch = out.events["Transition"]
    for (a, _, end), (b, start, _), t in zip(spans[:-1], spans[1:], switch, strict=True):
        i = round(t * out.fps)
        frames = np.arange(i + 1, i + 1 + math.ceil(0.3 * out.fps - 1e-5))
        j = round(end * a.fps)
        k = round(start * b.fps)
        takes = np.concatenate([own[id(a)][j - round(0.3 * a.fps) + 1:j + 1],
                                own[id(b)][k + 1:k + 1 + len(frames)]])
        assert takes.min() * 0.95 <= speed[frames].min() and speed[frames].max() <= 1.05 * takes.max()


def rig(speed: float, fps: float = 60.0, frames: int = 120) -> Clip:
    """Hips walking straight along +Z at `speed` m/s, a Spine above them."""
    t = np.arange(frames) / fps
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (frames, 2, 1))
    pos = np.zeros((frames, 2, 3))
    pos[:, 0, 1] = 1.0
    pos[:, 0, 2] = speed * t
    pos[:, 1, 1] = 0.2
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                ("Zrotation", "Xrotation", "Yrotation")]
    return Clip(["Hips", "Spine"], [-1, 0], np.array([[0.0, 0.0, 0.0], [0.0, 0.2, 0.0]]), rot, pos, fps,
                channels=channels, root=0, up=[0.0, 1.0, 0.0], forward=[0.0, 0.0, 1.0], meters_per_unit=1.0)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_on_a_clean_rig_the_root_speeds_up_from_the_walks_to_the_runs_and_no_further(method):
    walk, run = rig(1.0), rig(4.0)
    out = METHODS[method](walk, run, 1.0, 0.5, 0.5)
    speed = np.linalg.norm(np.diff(out.positions[:, 0], axis=0), axis=-1) * 60.0
    # Before the switch the walk's 1 m/s, after the window the run's 4 m/s, in between rising
    # from one to the other (dead blending's walk slows by its 5 s half-life while it fades).
    np.testing.assert_allclose(speed[:60], 1.0, rtol=1e-12)
    np.testing.assert_allclose(speed[60 + 30:], 4.0, rtol=1e-12)
    assert np.all(np.diff(speed[59:60 + 31]) >= -1e-12)
    # Positions blended (the destination placed where the walk is at the switch): 5.4 m/s and more.
    placed = run.replace(positions=run.positions + np.array([0.0, 0.0, 1.0 - 2.0]))
    old = METHODS[method](walk, placed, 1.0, 0.5, 0.5, reanchor=False)
    assert (np.linalg.norm(np.diff(old.positions[:, 0], axis=0), axis=-1) * 60.0).max() > 4.5
