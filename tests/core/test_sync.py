"""Synchronized blends: the issue's hand-worked warps and speeds on tiny loops, weight forms and
errors, and on the CMU subject 02 walk (02_01) and jog (02_03): clean loop cycles, weights 0 and 1
reproducing them, footsteps on the warped markers, foot sliding, and speed targets."""

from __future__ import annotations

import warnings

import motion_checks
import numpy as np
import pytest
from fixtures import take_path
from scipy.spatial.transform import Rotation, Slerp
from variants import played, travel_on

from core import blend, bvh, contacts, footlock, metrics, quat, root, skeleton, sync
from core.clip import Clip, SkeletonMismatch

FPS = 100.0
WEIGHTS = [0.0, 0.25, 0.5, 0.75, 1.0, "ramp"]
SECONDS = 3.0


def rig(period: float, markers: dict[str, list[float]] | None = None, stride: float = 0.0,
        fps: float = FPS, clock_axis: int = 0, wobble: float = 0.0, spin: np.ndarray | None = None) -> Clip:
    """A loop of `period` seconds: Hips walking `stride` meters per cycle along +Z (at a pace that
    swings by `wobble` within the cycle), and a Clock joint whose translation along `clock_axis` is
    the loop's own time in seconds, so a blend's Clock reads where it sampled each loop; `spin`
    [N, 4] gives the Clock's rotations (else none)."""
    n = round(period * fps)
    t = np.arange(n) / fps
    rot = np.zeros((n, 2, 4))
    rot[..., 0] = 1.0
    if spin is not None:
        rot[:, 1] = spin
    pos = np.zeros((n, 2, 3))
    pos[:, 0, 1] = 1.0
    pos[:, 0, 2] = stride * (t / period + wobble * np.sin(2 * np.pi * t / period))
    pos[:, 1, clock_axis] = t
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * 2
    return Clip(["Hips", "Clock"], [-1, 0], np.zeros((2, 3)), rot, pos, fps, channels=channels,
                events=markers or {}, loop=True, root=0, forward=[0.0, 0.0, 1.0], meters_per_unit=1.0)


def walk_run(d1: float = 0.0, d2: float = 0.0, fps: float = FPS) -> tuple[Clip, Clip]:
    """The issue's two-marker example: walk T = 1.2 s (L at 0, R at 0.6) with stride d1, run
    T = 0.8 s (L at 0, R at 0.3) with stride d2, the run at `fps`."""
    walk = rig(1.2, {"FootDown_L": [0.0], "FootDown_R": [0.6]}, stride=d1)
    run = rig(0.8, {"FootDown_L": [0.0], "FootDown_R": [0.3]}, stride=d2, clock_axis=1, fps=fps)
    return walk, run


def at(times: np.ndarray, t: float, fps: float = FPS) -> float:
    return float(times[round(t * fps)])


# --- the warp, hand-worked ----------------------------------------------------------------------


def test_one_marker_linear_blend_plays_both_at_one_normalized_time_over_the_blended_cycle():
    walk, run = rig(1.2, {"FootDown_L": [0.0]}), rig(0.8, {"FootDown_L": [0.0]})
    w = 0.25
    cycle = (0.8 - 1.2) * w + 1.2  # L = 1.1 s
    ta, tb = sync.sync_times(walk, run, w, 3.0, fps=FPS)
    t = np.arange(301) / FPS
    # Rates T1 / L and T2 / L: walk time 1.2 / 1.1 t, run time 0.8 / 1.1 t, one normalized time.
    np.testing.assert_allclose(ta, t * 1.2 / cycle, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tb, t * 0.8 / cycle, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ta / 1.2, tb / 0.8, atol=1e-12)
    out = sync.sync_blend(walk, run, w, 3.0)
    np.testing.assert_allclose(out.events["FootDown_L"], [0.0, 1.1, 2.2], atol=1e-12)


def test_two_markers_warp_each_segment_between_matching_plants():
    walk, run = walk_run()
    ta, tb = sync.sync_times(walk, run, 0.5, 2.0, fps=40.0)
    # Segments L->R: 0.6 and 0.3 s blend to 0.45; R->L: 0.6 and 0.5 to 0.55; one cycle 1.0 s.
    assert at(ta, 0.225, 40) == pytest.approx(0.3, abs=1e-12)
    assert at(tb, 0.225, 40) == pytest.approx(0.15, abs=1e-12)
    assert at(ta, 0.45, 40) == pytest.approx(0.6, abs=1e-12)
    assert at(tb, 0.45, 40) == pytest.approx(0.3, abs=1e-12)
    assert at(ta, 1.0, 40) == pytest.approx(1.2, abs=1e-12)
    assert at(tb, 1.0, 40) == pytest.approx(0.8, abs=1e-12)
    out = sync.sync_blend(walk, run, 0.5, 2.0, fps=40.0)
    np.testing.assert_allclose(out.events["FootDown_L"], [0.0, 1.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(out.events["FootDown_R"], [0.45, 1.45], atol=1e-12)


def test_the_blend_samples_each_loop_at_its_warped_time():
    # The walk's Clock runs along x, the run's along y: at weight w the blend's Clock reads
    # ((1 - w) walk time, w run time) wherever neither loop is between its last frame and frame 0.
    # The run is at 50 fps: loops are sampled in seconds, between their own frames.
    walk, run = walk_run(fps=50.0)
    out = sync.sync_blend(walk, run, 0.5, 2.0, fps=40.0)
    clock = out.positions[:, 1]
    assert clock[round(0.225 * 40), 0] == pytest.approx(0.5 * 0.3, abs=1e-12)
    assert clock[round(0.225 * 40), 1] == pytest.approx(0.5 * 0.15, abs=1e-12)
    assert clock[round(0.45 * 40), 0] == pytest.approx(0.5 * 0.6, abs=1e-12)
    assert clock[round(0.45 * 40), 1] == pytest.approx(0.5 * 0.3, abs=1e-12)
    ta, tb = sync.sync_times(walk, run, 0.5, 2.0, fps=40.0)
    inside = (np.mod(ta, 1.2) < 1.19 - 1e-9) & (np.mod(tb, 0.8) < 0.78 - 1e-9)
    np.testing.assert_allclose(clock[inside, 0], 0.5 * np.mod(ta, 1.2)[inside], atol=1e-12)
    np.testing.assert_allclose(clock[inside, 1], 0.5 * np.mod(tb, 0.8)[inside], atol=1e-12)


def test_harmonic_mode_blends_segment_durations_harmonically():
    walk, run = walk_run()
    out = sync.sync_blend(walk, run, 0.5, 2.0, mode="harmonic", fps=FPS)
    # 1 / S = 0.5 / 0.6 + 0.5 / 0.3 -> 0.4 s; 0.5 / 0.6 + 0.5 / 0.5 -> 0.5455 s.
    s1, s2 = 1 / (0.5 / 0.6 + 0.5 / 0.3), 1 / (0.5 / 0.6 + 0.5 / 0.5)
    assert s1 == pytest.approx(0.4) and s2 == pytest.approx(0.5455, abs=5e-5)
    np.testing.assert_allclose(out.events["FootDown_R"], [s1, s1 + s2 + s1], atol=1e-12)
    np.testing.assert_allclose(out.events["FootDown_L"], [0.0, s1 + s2, 2 * (s1 + s2)], atol=1e-12)
    ta, tb = sync.sync_times(walk, run, 0.5, 2.0, mode="harmonic", fps=FPS)
    assert at(ta, 0.2) == pytest.approx(0.3, abs=1e-12)
    assert at(tb, 0.2) == pytest.approx(0.15, abs=1e-12)


def test_leader_mode_takes_the_heavier_clips_pace_and_jumps_when_the_lead_changes():
    walk, run = walk_run()
    slow = sync.sync_blend(walk, run, 0.3, 2.5, mode="leader", fps=FPS)
    np.testing.assert_allclose(slow.events["FootDown_R"], [0.6, 1.8], atol=1e-12)
    fast = sync.sync_blend(walk, run, 0.7, 2.5, mode="leader", fps=FPS)
    np.testing.assert_allclose(fast.events["FootDown_R"], [0.3, 1.1, 1.9], atol=1e-12)
    # A ramp through 0.5: the walk's clock runs at rate 1 while it leads, then at the run's pace
    # (0.6 / 0.3 = 2 in the L->R segment) the frame after the lead changes.
    ta, _ = sync.sync_times(walk, run, (np.array([0.0, 0.4]), np.array([0.0, 1.0])), 0.4,
                            mode="leader", fps=FPS)
    rate = np.diff(ta) * FPS
    np.testing.assert_allclose(rate[:21], 1.0, atol=1e-12)
    np.testing.assert_allclose(rate[21:30], 2.0, atol=1e-12)


def test_under_a_ramp_the_phase_advances_dt_over_the_blended_cycle_every_frame():
    walk, run = rig(1.2, {"FootDown_L": [0.0]}), rig(0.8, {"FootDown_L": [0.0]})
    ramp = (np.array([0.5, 2.5]), np.array([0.0, 1.0]))
    ta, tb = sync.sync_times(walk, run, ramp, 3.0, fps=FPS)
    t = np.arange(301) / FPS
    w = np.interp(t, *ramp)
    cycle = (0.8 - 1.2) * w + 1.2
    np.testing.assert_allclose(np.diff(ta), 0.01 * 1.2 / cycle[:-1], rtol=1e-12)
    np.testing.assert_allclose(np.diff(tb), 0.01 * 0.8 / cycle[:-1], rtol=1e-12)
    np.testing.assert_allclose(ta / 1.2, tb / 0.8, atol=1e-12)


def test_without_common_markers_both_loops_share_normalized_time():
    walk, run = rig(1.2, {"FootDown_L": [0.0]}), rig(0.8, {"Jump": [0.2]})
    ta, tb = sync.sync_times(walk, run, 0.5, 2.0, fps=FPS)
    np.testing.assert_allclose(ta / 1.2, tb / 0.8, atol=1e-12)
    assert sync.sync_blend(walk, run, 0.5, 2.0).events == {}


def test_the_blend_starts_at_the_first_loops_time_0_even_between_markers():
    # Walk: R at 0.7, L at 0.1 (and 1.3); its time 0 is 5/6 of the way from R to L. The run is
    # there too: R at 0.3 plus 5/6 of its R->L segment (0.5 s), 0.7167 s.
    walk = rig(1.2, {"FootDown_L": [0.1], "FootDown_R": [0.7]})
    run = rig(0.8, {"FootDown_L": [0.0], "FootDown_R": [0.3]})
    ta, tb = sync.sync_times(walk, run, 0.5, 1.0, fps=FPS)
    assert ta[0] == pytest.approx(0.0, abs=1e-12)
    assert np.mod(tb[0], 0.8) == pytest.approx(0.3 + 0.5 * 5 / 6, abs=1e-12)
    # The rest of that segment blends to (0.6 + 0.5) / 2 / 6 s; the L marker comes then.
    out = sync.sync_blend(walk, run, 0.5, 1.0, fps=FPS)
    assert out.events["FootDown_L"][0] == pytest.approx(0.55 / 6, abs=1e-12)
    assert out.events["FootDown_R"][0] == pytest.approx(0.55 / 6 + 0.45, abs=1e-12)


def test_markers_match_by_name_in_cycle_order_whatever_the_first_one_is():
    # The run's cycle starts on its right plant: its L comes second; only common names count.
    walk = rig(1.2, {"FootDown_L": [0.0], "FootDown_R": [0.6], "Clap": [0.1]})
    run = rig(0.8, {"FootDown_R": [0.0], "FootDown_L": [0.5]})
    _, tb = sync.sync_times(walk, run, 0.0, 1.2, fps=FPS)
    assert tb[0] == pytest.approx(0.5, abs=1e-12)
    assert at(tb, 0.6) == pytest.approx(0.8, abs=1e-12)
    out = sync.sync_blend(walk, run, 0.0, 1.2, fps=FPS)
    assert sorted(out.events) == ["FootDown_L", "FootDown_R"]


def test_a_loop_of_two_cycles_plays_each_of_a_one_cycle_loops_markers_twice():
    # The issue's run as a loop of two cycles (1.6 s): matched marker by marker with the walk's
    # one cycle, modulo each one's count, it blends as the one-cycle run does.
    walk, run = walk_run(1.8, 3.2)
    two = rig(1.6, {"FootDown_L": [0.0, 0.8], "FootDown_R": [0.3, 1.1]}, stride=6.4, clock_axis=1)
    ta, tb = sync.sync_times(walk, two, 0.5, 2.0, fps=40.0)
    ta1, tb1 = sync.sync_times(walk, run, 0.5, 2.0, fps=40.0)
    np.testing.assert_allclose(ta, ta1, atol=1e-12)
    np.testing.assert_allclose(tb, tb1, atol=1e-12)  # the second cycle is the first one on
    out = sync.sync_blend(walk, two, 0.5, 2.0, fps=40.0)
    np.testing.assert_allclose(out.events["FootDown_L"], [0.0, 1.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(out.events["FootDown_R"], [0.45, 1.45], atol=1e-12)
    assert sync.travel_speed(walk, two, 0.5) == pytest.approx(sync.travel_speed(walk, run, 0.5), rel=1e-12)
    assert sync.cycle_length(walk, two, 0.5) == pytest.approx(1.0, abs=1e-12)
    assert sync.weight_for_speed(walk, two, 2.5) == pytest.approx(0.5, abs=1e-12)
    # Three markers to two do not repeat one sequence.
    odd = rig(0.8, {"FootDown_L": [0.0, 0.4], "FootDown_R": [0.3]})
    with pytest.raises(ValueError, match="do not match in cycle order"):
        sync.sync_times(walk, odd, 0.5, 1.0)


def test_rotations_blend_along_the_shortest_path_whatever_the_quaternion_signs():
    # Same periods, so both loops play at rate 1 on whole frames: only the blend is at work.
    qa = Rotation.random(50, random_state=1).as_quat()[:, [3, 0, 1, 2]]
    qb = Rotation.random(50, random_state=2).as_quat()[:, [3, 0, 1, 2]]
    qb[::2] *= -1.0
    # Nearly a half turn apart: cos(t h) must not come from 1 - sin^2 there.
    qa[0], qb[0] = [1.0, 0.0, 0.0, 0.0], [np.cos(np.pi / 2 - 1e-9), np.sin(np.pi / 2 - 1e-9), 0.0, 0.0]
    a, b = rig(0.5, spin=qa), rig(0.5, spin=qb)
    for w in (0.3, 0.8, 1.0 - 1e-9):
        out = sync.sync_blend(a, b, w, 0.49)
        np.testing.assert_allclose(out.rotations[:, 1], blend.slerp(qa, qb, w), atol=1e-12)
        assert quat.angle(out.rotations[:, 1], qa).max() <= np.pi
    np.testing.assert_array_equal(sync.sync_blend(a, b, 0.0, 0.49).rotations[:, 1], qa)
    np.testing.assert_array_equal(sync.sync_blend(a, b, 1.0, 0.49).rotations[:, 1], qb)


def path(clip: Clip, t: np.ndarray) -> np.ndarray:
    """A straight loop's root position along +Z at times t (seconds, over cycles): its frames,
    linear between them, across the seam by the loop convention (the mean of the neighbouring
    steps), each cycle on from the last."""
    z = clip.positions[:, 0, 2]
    seam = z[-1] + 0.5 * ((z[-1] - z[-2]) + (z[1] - z[0]))
    n = clip.n_frames
    x = t * clip.fps
    cycles = np.floor(x / n)
    return cycles * (seam - z[0]) + np.interp(x - cycles * n, np.arange(n + 1), np.append(z, seam))


def test_each_loop_moves_the_root_along_its_own_path_over_its_warped_time():
    # Uneven paces: the blend's root follows w-weighted pieces of each loop's own path.
    walk = rig(1.2, {"FootDown_L": [0.0], "FootDown_R": [0.6]}, stride=1.8, wobble=0.08)
    run = rig(0.8, {"FootDown_L": [0.0], "FootDown_R": [0.3]}, stride=3.2, wobble=0.05)
    for w in (0.3, (np.array([0.0, 3.0]), np.array([0.0, 1.0]))):
        out = sync.sync_blend(walk, run, w, 3.0, fps=90.0)
        ta, tb = sync.sync_times(walk, run, w, 3.0, fps=90.0)
        t = np.arange(270) / 90.0  # the weight of each step is its first frame's
        weights = np.interp(t, *w) if isinstance(w, tuple) else np.full(270, w)
        want = np.concatenate([[0.0], np.cumsum((1 - weights) * np.diff(path(walk, ta))
                                                + weights * np.diff(path(run, tb)))])
        z = root.trajectory(out).position[:, 2]
        np.testing.assert_allclose(z - z[0], want, atol=1e-12)


def test_a_root_below_a_still_dummy_joint_moves_as_a_top_level_one():
    def dummy(c: Clip) -> Clip:
        n = c.n_frames
        rot = np.concatenate([np.tile([1.0, 0.0, 0.0, 0.0], (n, 1, 1)), c.rotations], axis=1)
        pos = np.concatenate([np.zeros((n, 1, 3)), c.positions], axis=1)
        return Clip(["Root", *c.names], [-1, 0, 1], np.zeros((3, 3)), rot, pos, c.fps, events=c.events,
                    loop=True, root=1, forward=[0.0, 0.0, 1.0], meters_per_unit=1.0)

    walk, run = walk_run(1.8, 3.2)
    ramp = (np.array([0.0, 2.0]), np.array([0.0, 1.0]))
    top = sync.sync_blend(walk, run, ramp, 2.0)
    below = sync.sync_blend(dummy(walk), dummy(run), ramp, 2.0)
    np.testing.assert_allclose(below.fk()[1][:, 1:], top.fk()[1], atol=1e-12)
    np.testing.assert_array_equal(below.positions[:, 0], 0.0)


# --- travel speed ---------------------------------------------------------------------------------


def test_travel_speed_is_blended_stride_over_blended_period():
    walk, run = walk_run(d1=1.8, d2=3.2)
    # a = (s T1 - D1) / ((D2 - D1) - s (T2 - T1)) = (3.0 - 1.8) / (1.4 + 1.0) = 0.5.
    assert sync.weight_for_speed(walk, run, 2.5) == pytest.approx(0.5, abs=1e-12)
    assert sync.travel_speed(walk, run, 0.5) == pytest.approx(2.5, abs=1e-12)
    # The naive weight (2.5 - 1.5) / (4 - 1.5) = 0.4 is short: 2.36 m over 1.04 s.
    assert sync.travel_speed(walk, run, 0.4) == pytest.approx(2.36 / 1.04, abs=1e-12)
    assert 2.36 / 1.04 == pytest.approx(2.269, abs=5e-4)
    for w, cycle, stride in ((0.5, 1.0, 2.5), (0.4, 1.04, 2.36)):
        out = sync.sync_blend(walk, run, w, 2.0)
        travel = root.trajectory(out).position
        np.testing.assert_allclose(travel[round(cycle * FPS)] - travel[0], [0.0, 0.0, stride], atol=1e-12)


@pytest.mark.parametrize("mode", sync.MODES)
def test_blend_speed_is_the_speed_a_loop_of_one_cycle_travels(mode, loops):
    walk, jog = loops["02_01"], loops["02_03"]
    for w in (0.0, 0.25, 0.7, 1.0):
        length = sync.cycle_length(walk, jog, w, mode)
        out = sync.sync_blend(walk, jog, w, length, mode=mode, fps=round(length * walk.fps) / length)
        travel = root.trajectory(out).position
        measured = np.linalg.norm(travel[-1] - travel[0]) * walk.meters_per_unit / length
        assert sync.blend_speed(walk, jog, w, mode) == pytest.approx(measured, rel=1e-9), w
        # The strides' lengths blended: equal at the ends, a little faster between them here.
        model = sync.travel_speed(walk, jog, w, mode)
        assert model == pytest.approx(measured, rel=1e-6 if w in (0.0, 1.0) else 5e-3), w


def test_blend_speed_is_travel_speed_when_both_loops_travel_straight_ahead():
    walk, run = walk_run(d1=1.8, d2=3.2)
    for w in (0.0, 0.4, 0.5, 1.0):
        assert sync.blend_speed(walk, run, w) == pytest.approx(sync.travel_speed(walk, run, w), rel=1e-12)


@pytest.mark.parametrize("mode", sync.MODES)
def test_weight_for_speed_inverts_travel_speed_in_every_mode(mode):
    walk, run = walk_run(d1=1.8, d2=3.2)
    for target in (1.5, 1.9, 2.9, 4.0) if mode != "leader" else (1.5, 1.9, 3.8, 4.0):
        w = sync.weight_for_speed(walk, run, target, mode)
        assert sync.travel_speed(walk, run, w, mode) == pytest.approx(target, abs=1e-9)


def test_speeds_out_of_reach_name_the_reachable_range():
    walk, run = walk_run(d1=1.8, d2=3.2)
    with pytest.raises(ValueError, match=r"reachable range \[1\.5, 4\] m/s"):
        sync.weight_for_speed(walk, run, 4.5)
    with pytest.raises(ValueError, match="reachable range"):
        sync.weight_for_speed(walk, run, 1.0)
    # Leader mode jumps from (1.8 + 3.2) / 2 / 1.2 = 2.083 to 3.125 m/s at w = 0.5.
    with pytest.raises(ValueError, match=r"gap \(2\.083, 3\.125\)"):
        sync.weight_for_speed(walk, run, 2.5, "leader")


# --- arguments ------------------------------------------------------------------------------------


def test_weight_may_be_a_number_a_callable_or_a_times_weights_pair():
    walk, run = walk_run()
    ramp = sync.sync_times(walk, run, (np.array([0.0, 2.0]), np.array([0.0, 1.0])), 2.0)
    vectorized = sync.sync_times(walk, run, lambda t: np.clip(t / 2.0, 0.0, 1.0), 2.0)
    per_frame = sync.sync_times(walk, run, lambda t: min(max(t / 2.0, 0.0), 1.0), 2.0)
    for got in (vectorized, per_frame):
        np.testing.assert_allclose(got, ramp, atol=1e-12)
    with pytest.raises(TypeError, match="bare array"):
        sync.sync_blend(walk, run, np.linspace(0.0, 1.0, 201), 2.0)
    with pytest.raises(TypeError, match="bare array"):
        sync.sync_blend(walk, run, [0.2, 0.8], 2.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]: 1.5 at 0.0000 s"):
        sync.sync_blend(walk, run, 1.5, 2.0)
    with pytest.raises(ValueError, match="increasing"):
        sync.sync_blend(walk, run, (np.array([1.0, 0.0]), np.array([0.0, 1.0])), 2.0)


def test_bad_clips_and_modes_are_refused_where_they_are_first_seen():
    walk, run = walk_run()
    with pytest.raises(ValueError, match="not a loop: make one with loop_cycle"):
        sync.sync_blend(walk.replace(loop=False), run, 0.5, 1.0)
    with pytest.raises(ValueError, match="unknown mode 'cubic'"):
        sync.sync_blend(walk, run, 0.5, 1.0, mode="cubic")
    with pytest.raises(SkeletonMismatch):
        sync.sync_blend(walk, run.replace(names=["Hips", "Tail"]), 0.5, 1.0)
    twice = rig(0.8, {"FootDown_L": [0.0, 0.4], "FootDown_R": [0.3]})
    with pytest.raises(ValueError, match="do not match in cycle order"):
        sync.sync_blend(walk, twice, 0.5, 1.0)
    with pytest.raises(ValueError, match=r"mask has shape \[3\]"):
        sync.sync_blend(walk, run, 0.5, 1.0, mask=[1.0, 1.0, 1.0])


# --- real CMU cycles ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loops(cmu_clips) -> dict[str, Clip]:
    return {name: sync.loop_cycle(cmu_clips(name)) for name in ("02_01", "02_03")}


def body_joints(clip: Clip) -> np.ndarray:
    """Every joint but the root and the fingers and thumbs (they flip in the CMU data)."""
    idx = np.flatnonzero(blend.mask_preset(clip, "FINGERS") == 0.0)
    return idx[idx != clip.root]


def test_the_walk_cycle_runs_from_a_left_touchdown_to_the_next(cmu_clips, loops):
    walk, loop = cmu_clips("02_01"), loops["02_01"]
    steps = contacts.footsteps(walk)
    # Touchdowns L 137.4, 268.1 and R 73.0, 206.0, 335.4 (same-foot intervals 130.7, 133.0,
    # 129.4: median 130.7). The L cycle closes best: frames 137..267, R 69.0 frames in.
    assert loop.loop and loop.n_frames == 131
    body = body_joints(walk)
    np.testing.assert_array_equal(loop.rotations[0, body], walk.rotations[137, body])
    np.testing.assert_array_equal(loop.events["FootDown_L"], [0.0])
    np.testing.assert_allclose(loop.events["FootDown_R"], [steps["FootDown_R"][1] - 137 / 120], atol=1e-12)
    assert loop.events["FootDown_R"][0] == pytest.approx(0.575, abs=1e-3)


def test_the_jog_has_one_left_to_left_cycle_closed_where_its_pose_matches(cmu_clips, loops):
    jog, loop = cmu_clips("02_03"), loops["02_03"]
    steps = contacts.footsteps(jog)
    np.testing.assert_allclose(steps["FootDown_L"] * 120, [55.17, 152.0], atol=0.1)
    # Same-foot intervals 96.8 (L) and 96.5 (R): a cycle lasts 94..99 frames (within 3 %). The
    # next touchdown is at 152.0, but of frames 149..154 frame 149 matches frame 55's pose best
    # (the touchdowns are found to a few frames): 94 frames, R 51.0 frames in. (Frame 148, 93
    # frames, matches better still, but the cycle would be 4 % short.)
    assert loop.n_frames == 94
    assert abs(loop.n_frames - sync.touchdown_interval(jog)) <= 0.03 * 96.7
    np.testing.assert_allclose(loop.events["FootDown_R"] * 120, steps["FootDown_R"][1] * 120 - 55, atol=1e-9)
    body = body_joints(jog)
    rms = [np.sqrt(np.mean(quat.angle(jog.rotations[55, body], jog.rotations[b, body]) ** 2))
           for b in (149, 152)]
    assert rms[0] < 0.6 * rms[1]


@pytest.mark.parametrize("name", ["02_01", "02_03"])
def test_the_seam_step_is_no_larger_than_the_largest_step_inside_the_cycle(name, cmu_clips, loops):
    loop = loops[name]
    body = body_joints(loop)
    q = loop.rotations[:, body]
    inside = quat.angle(q[1:], q[:-1]).max(axis=0)
    # Within a degree where a joint barely moves: 02_03's right hand steps 2.0 degrees across the
    # seam and at most 1.6 inside (the cycle's length is held near the take's median interval).
    assert np.all(quat.angle(q[-1], q[0]) <= inside + np.radians(1.0))
    assert np.mean(quat.angle(q[-1], q[0]) <= inside + 1e-6) >= 0.95
    # The root: its residual (hip rotation off the heading, height) closes the same way.
    _, res = root.decompose(loop)
    turns = quat.angle(res.rotation[1:], res.rotation[:-1])
    assert quat.angle(res.rotation[-1], res.rotation[0]) <= turns.max()
    height = res.position @ loop.up
    assert abs(height[-1] - height[0]) <= np.abs(np.diff(height)).max() + 1e-6 * loop.height
    # Cut without the spread, the same frames jump at the seam by up to 4.5 times the largest step.
    clip = cmu_clips(name)
    raw = clip.rotations[:, body][137 if name == "02_01" else 55:][:loop.n_frames]
    assert np.any(quat.angle(raw[-1], raw[0]) > 1.5 * quat.angle(raw[1:], raw[:-1]).max(axis=0))


@pytest.mark.parametrize("name, first", [("02_01", 137), ("02_03", 55)])
def test_a_loop_can_keep_its_cycles_displacement_and_turn(name, first, cmu_clips, loops):
    clip, loop = cmu_clips(name), sync.loop_cycle(cmu_clips(name), straighten=False)
    traj = root.trajectory(clip)
    last = first + loop.n_frames
    disp, turn = sync.cycle_travel(loop)
    world = quat.mul_vec(root.yaw_quat(traj.heading[first], clip.up), disp)
    # The seam step is the mean of its neighbours (the loop convention), not frame b's own step.
    assert np.linalg.norm(world - (traj.position[last] - traj.position[first])) * clip.meters_per_unit < 2e-3
    # The pelvis yaw swings a few degrees within each stride: the seam's mean step reads it to
    # a third of a degree.
    assert turn == pytest.approx(traj.heading[last] - traj.heading[first], abs=6e-3)
    straight = sync.loop_cycle(clip, straighten=True)
    s_disp, s_turn = sync.cycle_travel(straight)
    assert abs(s_turn) < 1e-12
    assert np.linalg.norm(s_disp) == pytest.approx(np.linalg.norm(disp), rel=1e-3)
    body = body_joints(clip)
    np.testing.assert_array_equal(straight.rotations[:, body], loop.rotations[:, body])
    # By default the loop turns as its take does on average: these walk within 5 degrees of one
    # direction (their ends' cycles 1.9 and 0.7 degrees apart), so straight.
    default = sync.cycle_travel(loops[name])
    assert abs(default[1]) < 1e-12
    np.testing.assert_allclose(default[0], s_disp, rtol=0, atol=1e-9 * clip.height)


def test_a_loop_made_into_a_loop_again_is_unchanged(loops):
    loop = loops["02_01"]
    again = sync.loop_cycle(loop)
    assert again.n_frames == loop.n_frames and again.loop
    assert quat.angle(again.rotations, loop.rotations).max() < 1e-12
    np.testing.assert_allclose(again.positions, loop.positions, atol=1e-12 * loop.height)
    assert again.events.keys() == loop.events.keys()
    for k in loop.events:
        np.testing.assert_array_equal(again.events[k], loop.events[k])


def test_frames_pick_any_cycle_and_a_clip_without_a_whole_cycle_says_so(cmu_clips):
    jog = cmu_clips("02_03")
    # Right touchdowns at 9.5 and 106.0: an R->R cycle from frame 9 to 105.
    right = sync.loop_cycle(jog, frames=(9, 106))
    assert right.n_frames == 97
    np.testing.assert_array_equal(right.events["FootDown_R"], [0.0])
    np.testing.assert_allclose(right.events["FootDown_L"] * 120, [55.17 - 9], atol=0.01)
    # Before frame 120 one right cycle (9.5 -> 106.0) is whole: the loop is cut from it.
    assert sync.loop_cycle(jog[:120]).events["FootDown_R"][0] == 0.0
    with pytest.raises(ValueError, match=r"no whole cycle.*FootDown_L at frames \[55.2\].*frames=\(a, b\)"):
        sync.loop_cycle(jog[:100])
    with pytest.raises(ValueError, match="0 <= a < b < 174"):
        sync.loop_cycle(jog, frames=(100, 174))


# --- real blends ----------------------------------------------------------------------------------


def weight_of(w):
    return (np.array([0.0, SECONDS]), np.array([0.0, 1.0])) if w == "ramp" else w


@pytest.mark.parametrize("w", [0.0, 1.0])
def test_weights_0_and_1_play_the_loop_cycles_from_the_same_marker_and_anchor(w, loops):
    walk, jog = loops["02_01"], loops["02_03"]
    out = sync.sync_blend(walk, jog, w, SECONDS)
    start = root.trajectory(walk)
    if w == 0.0:
        want = played(walk, out.n_frames, start.position[0], start.heading[0])
    else:
        # Headings measured alike: the blend measures B's with A's up and facing. Each loop is
        # placed by its travel frame, the pelvis's mean yaw over the cycle (both loops walk
        # straight), not by the pelvis's swing at the cut: B's mean heading starts at A's. A loop
        # turns by its own cycle turn (0 here), whatever facing measures it.
        seen = jog.replace(up=walk.up, forward=walk.forward)
        own = root.trajectory(seen).heading
        heading = own[0] - np.mean(own) + np.mean(start.heading)
        want = played(seen, out.n_frames, start.position[0], heading, sync.cycle_travel(jog)[1])
    assert quat.angle(out.rotations, want.rotations).max() < 1e-6
    error = np.linalg.norm(out.fk()[1] - want.fk()[1], axis=-1).max()
    assert error < 1e-6 * walk.height


def test_the_fused_pose_blend_equals_slerp_sampling_then_blend_poses(loops):
    walk, jog = loops["02_01"], loops["02_03"]
    mask = blend.mask(walk, preset="LOWER_BODY") * 0.6 + 0.2
    ramp = (np.array([0.0, 1.0]), np.array([0.1, 0.9]))
    out = sync.sync_blend(walk, jog, ramp, 1.0, mask=mask)
    ta, tb = sync.sync_times(walk, jog, ramp, 1.0)

    def sampled(loop: Clip, t: np.ndarray) -> np.ndarray:
        # scipy's Slerp per joint over the loop and its seam (frame N = frame 0).
        times = np.arange(loop.n_frames + 1) / loop.fps
        frames = np.concatenate([loop.rotations, loop.rotations[:1]])
        at_t = np.mod(t, loop.n_frames / loop.fps)
        xyzw = [Slerp(times, Rotation.from_quat(frames[:, j][:, [1, 2, 3, 0]]))(at_t).as_quat()
                for j in range(loop.n_joints)]
        return np.stack(xyzw, axis=1)[..., [3, 0, 1, 2]]

    w = np.interp(np.arange(out.n_frames) / out.fps, *ramp)
    want, _ = blend.blend_poses(sampled(walk, ta), walk.positions[:1], sampled(jog, tb), jog.positions[:1],
                                w, mask)
    others = np.arange(walk.n_joints) != walk.root
    assert quat.angle(out.rotations[:, others], want[:, others]).max() < 1e-9


def warped_contacts(loop: Clip, t: np.ndarray) -> dict[str, np.ndarray]:
    """The loop's own contacts at the nearest frame of its warped times."""
    planted = contacts.contacts(loop)
    i = np.mod(np.rint(t * loop.fps).astype(np.int64), loop.n_frames)
    return {foot: mask[i] for foot, mask in planted.items()}


@pytest.mark.parametrize("w", WEIGHTS)
def test_blend_footsteps_land_within_3_frames_of_the_warped_markers_and_alternate(w, loops):
    walk, jog = loops["02_01"], loops["02_03"]
    out = sync.sync_blend(walk, jog, weight_of(w), SECONDS)
    found = contacts.footsteps(out)
    for key in ("FootDown_L", "FootDown_R"):
        markers, steps = out.events[key], found[key]
        assert len(steps)
        assert np.abs(steps[:, None] - markers[None]).min(axis=1).max() * out.fps <= 3.0
        # Every marker is found, but one at the first frame (the foot is already down) and one in
        # the last 0.1 s (the touchdown's knee needs frames after it).
        inner = markers[(markers > 0.0) & (markers < SECONDS - 0.1)]
        assert np.abs(inner[:, None] - steps[None]).min(axis=1).max() * out.fps <= 3.0
    times = np.concatenate([found["FootDown_L"], found["FootDown_R"]])
    feet = np.array(["L"] * len(found["FootDown_L"]) + ["R"] * len(found["FootDown_R"]))
    order = feet[np.argsort(times)]
    assert np.all(order[1:] != order[:-1])


@pytest.mark.parametrize("w", WEIGHTS)
def test_feet_planted_in_both_sources_slide_no_more_than_the_worse_source_plus_2_cm_s(w, loops):
    walk, jog = loops["02_01"], loops["02_03"]
    out = sync.sync_blend(walk, jog, weight_of(w), SECONDS)
    ta, tb = sync.sync_times(walk, jog, weight_of(w), SECONDS)
    in_a, in_b = warped_contacts(walk, ta), warped_contacts(jog, tb)
    both = {foot: in_a[foot] & in_b[foot] for foot in in_a}
    assert all(mask.sum() > 60 for mask in both.values())
    # Each source played alone (weights 0 and 1), over its own warped contacts.
    sources = []
    for alone, loop, pick in ((0.0, walk, 0), (1.0, jog, 1)):
        times = sync.sync_times(walk, jog, alone, SECONDS)[pick]
        sources.append(metrics.foot_sliding(sync.sync_blend(walk, jog, alone, SECONDS),
                                            warped_contacts(loop, times)))
    assert metrics.foot_sliding(out, both) <= max(sources) + 0.02


@pytest.mark.parametrize("target", [1.5, 2.0, 2.4])
def test_weight_for_speed_hits_the_target_on_the_subject_02_walk_and_jog(target, loops):
    walk, jog = loops["02_01"], loops["02_03"]
    w = sync.weight_for_speed(walk, jog, target)
    assert 0.0 < w < 1.0
    out = sync.sync_blend(walk, jog, w, 4.0)
    # Measured over whole blended cycles: left marker to left marker.
    first, last = out.events["FootDown_L"][[0, -1]]
    i, j = round(first * out.fps), round(last * out.fps)
    travel = root.trajectory(out).position
    speed = np.linalg.norm(travel[j] - travel[i]) * out.meters_per_unit / ((j - i) / out.fps)
    assert speed == pytest.approx(target, rel=0.02)


def test_cycle_length_matches_the_issue_example_in_every_mode():
    walk, run = walk_run()
    assert sync.cycle_length(walk, run, 0.5) == pytest.approx(1.0, abs=1e-12)  # (1.2 + 0.8) / 2
    assert sync.cycle_length(walk, run, 0.5, "harmonic") == pytest.approx(0.4 + 0.5454545454545, abs=1e-9)
    assert sync.cycle_length(walk, run, 0.75, "leader") == pytest.approx(0.8, abs=1e-12)
    assert sync.cycle_length(walk, run, 0.0) == pytest.approx(1.2, abs=1e-12)


# --- sync ramps with lock_feet (issue 37) -----------------------------------------------------------

LOCK_PAIRS = [("02_01", "02_03"), ("dataset-1_walk_normal_001", "dataset-1_run_normal_001"),
              ("dataset-1_walk_happy_001", "dataset-1_run_tired_001")]


@pytest.mark.parametrize("pair", LOCK_PAIRS)
def test_a_locked_ramp_holds_each_stance_within_the_better_sources_slide_and_half_a_centimetre(pair):
    """A walk -> run ramp over 6 s with lock_feet: every stance laid out on it (`sync_contacts`,
    the loops' contacts at their warped times, while the cycle shortens from the walk's to the
    run's) slides its pivot by at most the better source's worst stance + 0.5 cm, from where the
    lock is full (issue 36's locks ease in over the landing, as the loops' own feet land). The
    sources: each loop played alone (weights 0 and 1) over its own stances, measured alike.
    Held: CMU 0.0 cm (the better source 2.6), Bandai walk_happy/run_tired 0.0 (2.8), and
    walk_normal/run_normal 1.8 (2.8): the pre-cut run loop slides 5.6 cm a stance itself, and
    the leg cannot reach some of its locks. Counted from the touchdown, the landings the locks
    ease in over add up to 5.8 cm (the better sources' own, so counted: 3.5-6.7 cm)."""
    a, b = (sync.loop_cycle(bvh.load(take_path(name))) for name in pair)
    ramp = (np.array([0.0, 6.0]), np.array([0.0, 1.0]))
    planted = sync.sync_contacts(a, b, ramp, 6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        locked = sync.sync_blend(a, b, ramp, 6.0, lock_feet=True)
    held = motion_checks.stance_slips(locked, planted, footlock.EASE_IN)
    # Stances all through the ramp, of both feet.
    assert len(held) >= 2 * 6.0 / 1.2
    sources = [motion_checks.stance_slips(sync.sync_blend(a, b, w, 6.0), sync.sync_contacts(a, b, w, 6.0),
                                          footlock.EASE_IN).max() for w in (0.0, 1.0)]
    assert held.max() <= min(sources) + 0.005, (np.round(held * 100, 2), np.round(sources, 4))
    # The lock holds what the plain ramp lets slide.
    loose = motion_checks.stance_slips(sync.sync_blend(a, b, ramp, 6.0), planted, footlock.EASE_IN)
    assert held.sum() < 0.5 * loose.sum()


def test_loops_that_carry_their_travel_on_different_joints_blend_as_on_the_deeper_one():
    # Bandai's walk moves its hips, its pre-cut run its dummy root above them: blended joint by
    # joint, the walk's root motion met the run's plain hips transform (11.7 % of the height off
    # at weight 0.5 before). Played on the hips, as a run that moves its hips would be.
    walk, run = (sync.loop_cycle(bvh.load(take_path(f"dataset-1_{g}_normal_001"))) for g in ("walk", "run"))
    hips = walk.body.pelvis
    assert walk.root == hips and run.root != hips
    moved = travel_on(run, hips, walk)
    body = [j for j in range(walk.n_joints) if hips in skeleton.chain(walk.parents, j)]
    for a, b, a2, b2 in ((walk, run, walk, moved), (run, walk, moved, walk)):
        for w in (0.5, (np.array([0.0, 3.0]), np.array([0.0, 1.0]))):
            out, want = sync.sync_blend(a, b, w, 3.0), sync.sync_blend(a2, b2, w, 3.0)
            error = np.linalg.norm(out.fk()[1][:, body] - want.fk()[1][:, body], axis=-1).max()
            assert error < 1e-9 * walk.height
            assert out.root == hips
