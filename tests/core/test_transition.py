"""Transitions: dead blending, inertialization and crossfades on hand-worked rigs (exact maths,
the fast-spin case) and real CMU takes (layout, re-anchoring, velocity continuity), sequences, and
the transition metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import blend, metrics, quat, root
from core import transition as tr
from core.clip import Clip, SkeletonMismatch
from core.resample import resample

LN2 = math.log(2.0)
EPS = 1e-8
METHODS = sorted(tr.METHODS)

# Real switches: (src, dst, src_time, dst_time). Walk <-> run (subject 02), run -> the forward
# walk at the start of 09_12, and walk -> stop within 131_01 (walking 4.5-5.8 s, stopping by 7 s).
REAL_CASES = [
    ("02_01", "02_03", 0.6, 0.3), ("02_01", "02_03", 1.2, 0.6), ("02_01", "02_03", 1.8, 0.9),
    ("02_01", "02_03", 2.4, 0.45),
    ("02_03", "02_01", 0.4, 0.5), ("02_03", "02_01", 0.8, 1.2), ("02_03", "02_01", 1.1, 2.0),
    ("09_01", "09_12", 0.3, 0.5), ("09_01", "09_12", 0.6, 1.5), ("09_01", "09_12", 0.9, 2.5),
    ("131_01", "131_01", 4.75, 6.25), ("131_01", "131_01", 5.25, 6.5), ("131_01", "131_01", 5.75, 6.75),
]


def to_scipy(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.asarray(q).reshape(-1, 4)[:, [1, 2, 3, 0]])


def rot_about(axis, angle) -> np.ndarray:
    """[..., 4] rotations by `angle` [...] radians about a fixed unit axis (hand-made, not quat.*)."""
    angle = np.asarray(angle, dtype=np.float64)
    q = np.zeros((*angle.shape, 4))
    q[..., 0] = np.cos(angle / 2)
    q[..., 1:] = np.sin(angle / 2)[..., None] * np.asarray(axis, dtype=np.float64)
    return q


def steps(q: np.ndarray) -> np.ndarray:
    """Rotation angle between consecutive frames of [T, 4] (scipy)."""
    return (to_scipy(q[1:]) * to_scipy(q[:-1]).inv()).magnitude()


def z_angle(q: np.ndarray) -> np.ndarray:
    """Unwrapped angle of rotations about +Z [T, 4] (scipy)."""
    return np.unwrap(to_scipy(q).as_rotvec()[:, 2])


def rig(spine: np.ndarray, arm_pos: np.ndarray | None = None, fps: float = 30.0) -> Clip:
    """Hips (root, still at the origin) -> Spine (rotations [T, 4]) -> Arm (translations [T, 3])."""
    n = len(spine)
    rot = np.zeros((n, 3, 4))
    rot[..., 0] = 1.0
    rot[:, 1] = spine
    offsets = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.0]])
    pos = np.broadcast_to(offsets, (n, 3, 3)).copy()
    if arm_pos is not None:
        pos[:, 2] = arm_pos
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                ("Zrotation", "Xrotation", "Yrotation"),
                ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")]
    return Clip(["Hips", "Spine", "Arm"], [-1, 0, 1], offsets, rot, pos, fps, channels=channels,
                root=0, forward=[0.0, 0.0, 1.0])


def held(q: np.ndarray, n: int, arm: np.ndarray | list[float] | None = None, fps: float = 30.0) -> Clip:
    """A rig holding one spine rotation (and arm translation) for n frames."""
    return rig(np.broadcast_to(q, (n, 4)), None if arm is None else np.broadcast_to(arm, (n, 3)), fps)


def case_clips(cmu_clips, case) -> tuple[Clip, Clip, float, float]:
    s, d, ts, td = case
    return cmu_clips(s), cmu_clips(d), ts, td


def floor_angle(v: np.ndarray, clip: Clip) -> float:
    """Angle on the floor of a vector, from heading 0 of the clip's up (CMU: +Z toward +X)."""
    fwd, side = root.floor_axes(clip.up)
    return math.atan2(float(v @ side), float(v @ fwd))


def anchored(src: Clip, dst: Clip, src_time: float, dst_time: float) -> Clip:
    """dst moved onto src's trajectory at the switch with the blend primitives (the oracle): at
    src's position there, turned by the angle between the two takes' directions of travel (the
    root's chord on the floor) over the second before each switch frame (from the first frame
    after a reference pose; src's up to its switch frame at most, dst's first second when it enters
    sooner); dst's heading measured as src's (its up and facing), as the transitions measure it.
    (Every real case travels, in the same direction relative to its facing.)"""
    at = root.trajectory(src)
    dst = dst.replace(up=src.up, forward=src.forward)
    i_s, i_d = round(src_time * src.fps), round(dst_time * src.fps)
    own = root.trajectory(dst)
    n = round(src.fps)
    a_s, a_d = max(i_s - n, src.motion_start), max(i_d - n, dst.motion_start)
    turn = (floor_angle(at.position[i_s] - at.position[a_s], src)
            - floor_angle(own.position[a_d + n] - own.position[a_d], src))
    # Travel and facing (mean heading over the same frames) disagreeing by more than 45 degrees
    # (131_01 walks 55 degrees off its facing before 4.75 s): the facings are aligned instead.
    facing = np.mean(at.heading[a_s:i_s + 1]) - np.mean(own.heading[a_d:a_d + n + 1])
    if abs(np.angle(np.exp(1j * (turn - facing)))) > math.radians(45):
        turn = facing
    return root.reanchor(dst, i_d, at.position[i_s], own.heading[i_d] + turn)


# --- the curves ---------------------------------------------------------------------------------


def test_smoothstep_matches_a_hand_worked_table():
    x = np.array([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 2.0])
    np.testing.assert_allclose(tr.smoothstep(x), [0.0, 0.0, 0.15625, 0.5, 0.84375, 1.0, 1.0], atol=1e-16)


def test_decay_offset_has_rate_v_exp_minus_yt_per_axis():
    w0 = np.array([3.0, -2.0, 0.5])
    halflife = np.array([0.1, 0.35, 1.0])
    y = LN2 / (halflife + EPS)
    t = np.linspace(0.0, 1.5, 16)
    h = 1e-6
    # Central differences of the exponent a(t) itself, not of the rotation built from it.
    rate = (tr.decay_offset(w0, halflife, t + h) - tr.decay_offset(w0, halflife, t - h)) / (2 * h)
    # The eps regularizer makes it w0 y / (y + eps) e^(-y t) (1.4e-8 relative at 1 s).
    np.testing.assert_allclose(rate, w0 * y / (y + EPS) * np.exp(-np.outer(t, y)), rtol=0, atol=1e-9)
    np.testing.assert_allclose(tr.decay_offset(w0, halflife, 0.0), 0.0, atol=0)
    # The limits: a held pose and a constant velocity.
    assert np.abs(tr.decay_offset(w0, 1e-12, t)).max() < 1e-7
    np.testing.assert_allclose(tr.decay_offset(w0, 1e3, t), np.outer(t, w0), rtol=1e-3)


def test_with_one_half_life_the_extrapolated_angular_speed_halves_every_half_life():
    q0 = to_scipy(rot_about([0.6, 0.0, 0.8], 0.4)).as_quat()[0][[3, 0, 1, 2]]
    w0 = np.array([4.0, -3.0, 6.0])
    halflife, fps = 0.2, 600.0
    t = np.arange(0, 481) / fps
    q = tr.extrapolate_rotation(q0, w0, halflife, t)
    speed = steps(q) * fps
    every = round(halflife * fps)
    # Halves to 2^(-h / (h + eps)): 0.5 up to the eps regularizer.
    half = 2.0 ** (-halflife / (halflife + EPS))
    np.testing.assert_allclose(speed[every::every] / speed[:-every:every], half, rtol=1e-9)
    assert half == pytest.approx(0.5, rel=1e-7)
    # About the fixed axis of w0 throughout.
    axes = (to_scipy(q[1:]) * to_scipy(q0).inv()).as_rotvec()
    np.testing.assert_allclose(np.cross(axes, w0), 0.0, atol=1e-12)


def test_estimated_half_lives_follow_the_hand_worked_rule():
    diff = np.array([2.0, 2.0, -1.0, 0.5, 0.0, 3.0])
    vel = np.array([2.0, 40.0, 2.0, 0.1, 0.0, -0.0])
    # toward dst: 0.3 * 2 / 2; fast: 0.015 -> min; away: negative -> min; slow toward: 1.5 -> max;
    # no difference, no velocity: 0; still with a difference: 3 / +eps -> max (max_mag(-0) = +eps).
    np.testing.assert_allclose(tr.estimate_halflife(diff, vel), [0.3, 0.1, 0.1, 1.0, 0.1, 1.0])
    np.testing.assert_array_equal(tr.max_mag(np.array([0.5, 1e-9, 0.0, -1e-9, -0.5])),
                                  [0.5, EPS, EPS, -EPS, -0.5])


def test_spring_cubic_and_quintic_offsets_match_their_closed_forms():
    x0, v0, t = np.array([0.4, -1.0]), np.array([3.0, 0.5]), np.array([0.0, 0.05, 0.1, 0.25])
    y = 2 * LN2 / (0.25 / 6 + EPS)
    want = (x0 + (v0 + y * x0) * t[:, None]) * np.exp(-y * t[:, None])
    np.testing.assert_allclose(tr.spring_offset(x0, v0, 0.25 / 6, t), want, rtol=1e-14)
    # After 6 half-lives about 0.2% of a still offset is left.
    assert tr.spring_offset(1.0, 0.0, 0.25 / 6, 0.25) == pytest.approx(0.00227, abs=1e-5)
    c = tr.cubic_offset(x0, v0, 0.25, np.array([0.0, 0.125, 0.25, 0.5]))
    np.testing.assert_allclose(c[0], x0, atol=0)
    # s = 1/2: x0 (1 - 3/4 + 1/4) + v0 T (1/2 - 1/2 + 1/8).
    np.testing.assert_allclose(c[1], x0 * 0.5 + v0 * 0.25 / 8, rtol=1e-15)
    np.testing.assert_array_equal(c[2:], 0.0)
    h = 1e-7
    np.testing.assert_allclose((tr.cubic_offset(x0, v0, 0.25, h) - x0) / h, v0, rtol=1e-5)
    np.testing.assert_allclose(tr.cubic_offset(x0, v0, 0.25, 0.25 - h) / h, 0.0, atol=1e-5)
    q = tr.quintic_offset(x0, v0, 0.25, np.array([0.0, 0.125, 0.25, 0.5]))
    np.testing.assert_allclose(q[0], x0, atol=0)
    # s = 1/2: x0 (1 - (10 - 15/2 + 6/4) / 8) + v0 T (1/2 - (6 - 4 + 3/4) / 8).
    np.testing.assert_allclose(q[1], x0 * 0.5 + v0 * 0.25 * 5 / 32, rtol=1e-15)
    np.testing.assert_array_equal(q[2:], 0.0)
    # Rate v0 and no acceleration at the start; no rate and no acceleration at the end.
    h = 1e-4
    ends = tr.quintic_offset(x0, v0, 0.25, np.array([0.0, h, 2 * h, 0.25 - 2 * h, 0.25 - h, 0.25]))
    np.testing.assert_allclose((ends[1] - ends[0]) / h, v0, rtol=1e-3)
    # Second differences carry the jerk x h (~0.6 here); a cubic's acceleration would be ~100.
    np.testing.assert_allclose((ends[2] - 2 * ends[1] + ends[0]) / h**2, 0.0, atol=1.0)
    np.testing.assert_allclose((ends[5] - ends[4]) / h, 0.0, atol=1e-4)
    np.testing.assert_allclose((ends[5] - 2 * ends[4] + ends[3]) / h**2, 0.0, atol=1.0)
    assert abs((tr.cubic_offset(x0, v0, 0.25, 2 * h) - 2 * tr.cubic_offset(x0, v0, 0.25, h) + x0)[0]
               / h**2) > 50.0


# --- layout, on real takes ----------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", REAL_CASES[::3], ids=lambda c: f"{c[0]}-{c[1]}@{c[2]}")
def test_the_source_up_to_the_switch_then_the_reanchored_destination_after_the_blend(method, case, cmu_clips):
    src, dst, ts, td = case_clips(cmu_clips, case)
    out = tr.METHODS[method](src, dst, ts, td, 0.25)
    i_s, i_d = round(ts * 120), round(td * 120)
    assert out.fps == src.fps
    assert out.n_frames == i_s + 1 + dst.n_frames - 1 - i_d
    np.testing.assert_array_equal(out.rotations[:i_s + 1], src.rotations[:i_s + 1])
    np.testing.assert_array_equal(out.positions[:i_s + 1], src.positions[:i_s + 1])
    want = anchored(src, dst, ts, td)
    first = 1 if method == "cut" else math.ceil(0.25 * 120)
    np.testing.assert_array_equal(out.rotations[i_s + first:], want.rotations[i_d + first:])
    if method in ("cut", "crossfade", "crossfade_playing"):
        np.testing.assert_array_equal(out.positions[i_s + first:], want.positions[i_d + first:])
    else:
        # Dead blending and inertialization blend the root's travel by velocity: after the blend
        # dst goes on from where that took the root, moved rigidly over the floor.
        r = src.root
        others = np.arange(src.n_joints) != r
        after, kept = out.positions[i_s + first:], want.positions[i_d + first:]
        np.testing.assert_array_equal(after[:, others], kept[:, others])
        shift = after[:, r] - kept[:, r]
        np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), rtol=0,
                                   atol=1e-9 * src.height)
        assert abs(shift[0] @ src.up) < 1e-9 * src.height
    np.testing.assert_array_equal(out.events["Transition"], [i_s / 120])


def test_the_reanchored_destination_continues_the_source_trajectory(cmu_clips):
    src, dst = cmu_clips("09_12"), cmu_clips("02_01")
    out = tr.dead_blend(src, dst, 12.5, 0.4)
    i_s = 1500
    traj_out, traj_src = root.trajectory(out), root.trajectory(src)
    np.testing.assert_allclose(traj_out.position[i_s], traj_src.position[i_s], atol=0)
    # One frame on, the root is one step further along the floor, not displaced by a pop.
    step = np.linalg.norm(np.diff(traj_out.position[i_s - 2:i_s + 3], axis=0), axis=-1)
    assert step.max() * out.meters_per_unit * out.fps < 2.0
    # After the blend the output walks dst's path turned by the takes' facings over the second
    # before the switch (mean headings, src's frames 1380..1500, dst's 1..121 as it enters
    # sooner): 09_12 moves 155 degrees off its facing there and 02_01 along it, so their travel
    # directions are not comparable (headings of both measured from src's forward).
    traj_dst = root.trajectory(dst.replace(forward=src.forward))
    turn = traj_out.heading[i_s + 40:] - traj_dst.heading[48 + 40:]
    assert np.ptp(turn) < 1e-9
    assert abs(floor_angle(traj_src.position[i_s] - traj_src.position[i_s - 120], src)
               - np.mean(traj_src.heading[i_s - 120:i_s + 1])) > math.radians(150)
    want = np.mean(traj_src.heading[i_s - 120:i_s + 1]) - np.mean(traj_dst.heading[1:122])
    assert abs(np.angle(np.exp(1j * (turn[0] - want)))) < 1e-9


def test_alpha_rises_as_a_smoothstep_and_never_decreases():
    # Still poses: the arm at y = 1 in src and y = 3 in dst, so out = 1 + 2 alpha exactly.
    src = held(quat.identity(), 40, [0.0, 1.0, 0.0])
    dst = held(quat.identity(), 40, [0.0, 3.0, 0.0])
    for method in ("dead", "crossfade", "crossfade_playing"):
        out = tr.METHODS[method](src, dst, 0.5, 0.2, 0.5)
        alpha = (out.positions[:, 2, 1] - 1.0) / 2.0
        k = np.arange(out.n_frames) - 15
        want = np.where(k <= 0, 0.0, tr.smoothstep(k / 30.0 / 0.5))
        np.testing.assert_allclose(alpha, want, rtol=0, atol=1e-15)
        assert np.all(np.diff(alpha) >= 0.0)
        np.testing.assert_array_equal(alpha[15 + 15:], 1.0)


def test_a_destination_at_another_rate_is_resampled_to_the_source_rate(cmu_clips):
    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    out = tr.dead_blend(src, dst[::4], 1.0, 0.5)
    want = tr.dead_blend(src, resample(dst[::4], 120.0), 1.0, 0.5)
    assert out.fps == 120.0 and out.n_frames == want.n_frames
    np.testing.assert_array_equal(out.rotations, want.rotations)


def test_events_are_the_sources_up_to_the_switch_and_the_destinations_after():
    src = held(quat.identity(), 31).replace(events={"FootDown_L": [0.2, 0.5, 0.8], "Sync": [0.1]})
    dst = held(quat.identity(), 31).replace(events={"FootDown_L": [0.3, 0.4, 0.9]})
    out = tr.dead_blend(src, dst, 0.5, 0.4)
    np.testing.assert_allclose(out.events["FootDown_L"], [0.2, 0.5, 0.5 + 0.5])
    np.testing.assert_allclose(out.events["Sync"], [0.1])
    np.testing.assert_allclose(out.events["Transition"], [0.5])
    # A second transition keeps the first one's mark.
    again = tr.crossfade(out, dst, 0.8, 0.1)
    np.testing.assert_allclose(again.events["Transition"], [0.5, 0.8])


def test_a_root_below_a_dummy_joint_transitions_like_a_top_level_root(cmu_clips):
    def with_dummy(c: Clip) -> Clip:
        n = c.n_frames
        parents = np.concatenate([[-1], c.parents + 1])
        parents[1] = 0
        top = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
        # A dummy turned and moved away from the origin, so the root's local and world transforms differ.
        dummy_rot = np.broadcast_to(rot_about([0.0, 1.0, 0.0], 0.7), (n, 1, 4))
        return c.replace(names=["Dummy", *c.names], parents=parents,
                         offsets=np.concatenate([np.zeros((1, 3)), c.offsets]),
                         rotations=np.concatenate([dummy_rot, c.rotations], axis=1),
                         positions=np.concatenate([np.full((n, 1, 3), 5.0), c.positions], axis=1),
                         channels=[top, *c.channels], end_parents=c.end_parents + 1, root=1)

    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    turn = Rotation.from_rotvec([0.0, 0.7, 0.0])
    for method in METHODS:
        plain = tr.METHODS[method](src, dst, 1.0, 0.5)
        dummy = tr.METHODS[method](with_dummy(src), with_dummy(dst), 1.0, 0.5)
        # The whole output is the plain one seen through the dummy's rigid transform.
        want = turn.apply(plain.fk()[1].reshape(-1, 3)).reshape(plain.n_frames, -1, 3) + 5.0
        np.testing.assert_allclose(dummy.fk()[1][:, 1:], want, rtol=0, atol=1e-9 * src.height)


# --- dead blending: the exact checks ------------------------------------------------------


def test_first_blended_frame_velocity_is_the_decayed_source_velocity_plus_the_blend_term():
    fps, w, theta_s = 60.0, 2.0, 0.6
    t = np.arange(31) / fps
    src = rig(rot_about([0.0, 0.0, 1.0], theta_s - w * (0.5 - t)), np.outer(0.5 - t, [1.0, -2.0, 0.5]), fps)
    i_s = 30
    # dst turns ahead of the spine (+2 rad, toward: half-life 0.3 * 2 / 2 = 0.3 s) and the arm
    # moves to another point, both while turning/moving on their own.
    dst = rig(rot_about([0.0, 0.0, 1.0], theta_s + 2.0 + 1.5 * t), np.outer(1.0 + t, [0.3, 0.4, -1.0]), fps)
    # The plain formula: this rig's spine turns 2 rad in 0.25 s where its takes turn at 2 rad/s,
    # which the transition would otherwise blend for longer (test_transition_speed.py).
    out = tr.dead_blend(src, dst, 0.5, 0.0, 0.25, extend_fast_joints=False)
    dt = 1 / fps
    # Rotation about Z only, so everything commutes: angles add.
    y = LN2 / (0.3 + EPS)
    ext = theta_s + w * (1 - math.exp(-y * dt)) / y
    alpha = float(tr.smoothstep(dt / 0.25))
    ext_rate = w * (1 - math.exp(-y * dt)) / (y * dt)
    blend_term = alpha * ((theta_s + 2.0 + 1.5 * dt) - ext) / dt
    got = np.diff(z_angle(out.rotations[i_s - 1:i_s + 2, 1])) * fps
    assert got[0] == pytest.approx(w, abs=1e-9)
    assert got[1] == pytest.approx(ext_rate + blend_term, abs=1e-6)
    # Translations, per axis: each with its own half-life from the same rule.
    v0 = -np.array([1.0, -2.0, 0.5])
    x0 = src.positions[i_s, 2]
    diff = dst.positions[0, 2] - x0
    hl = np.clip(0.3 * diff / v0, 0.1, 1.0)
    yx = LN2 / (hl + EPS)
    ext_x = x0 + v0 / (yx + EPS) * (1 - np.exp(-yx * dt))
    blend_x = alpha * (dst.positions[1, 2] - ext_x) / dt
    np.testing.assert_allclose((out.positions[i_s + 1, 2] - x0) / dt,
                               v0 * (1 - np.exp(-yx * dt)) / (yx * dt) + blend_x, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out.positions[i_s + 1, 2], ext_x + alpha * (dst.positions[1, 2] - ext_x),
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("case", REAL_CASES[::4], ids=lambda c: f"{c[0]}-{c[1]}@{c[2]}")
def test_on_real_takes_the_extrapolated_velocity_is_the_decayed_one_per_axis(case, cmu_clips):
    src, dst, ts, td = case_clips(cmu_clips, case)
    # A blend so long that alpha(1) ~ 1e-16: the first frame after the switch is the extrapolation.
    out = tr.dead_blend(src, dst, ts, td, 1e6)
    i_s, i_d, dt = round(ts * 120), round(td * 120), 1 / 120
    q = src.rotations
    w0 = (to_scipy(q[i_s]) * to_scipy(q[i_s - 1]).inv()).as_rotvec() / dt
    diff = (to_scipy(dst.rotations[i_d]) * to_scipy(q[i_s]).inv()).as_rotvec()
    hl = np.clip(0.3 * diff / tr.max_mag(w0), 0.1, 1.0)
    hl[src.root] = 5.0
    y = LN2 / (hl + EPS)
    got = (to_scipy(out.rotations[i_s + 1]) * to_scipy(q[i_s]).inv()).as_rotvec() / dt
    fingers = blend.mask_preset(src, "FINGERS") > 0
    # Thumbs that flip half a turn in a frame extrapolate past pi; the rest are exact per axis.
    ok = ~fingers & (np.linalg.norm(w0, axis=-1) * dt < 1.0)
    # w0 (1 - e^(-y dt)) / (y dt), with the eps of the documented formula: v0 / (y + eps), which
    # differs from it by eps / y, 7e-8 relative at the root's 5 s.
    want = w0 * (1 - np.exp(-y * dt)) / ((y + EPS) * dt)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-9)
    # The root's world position carries on with the 5 s half-life.
    p = src.positions[:, src.root]
    v0 = (p[i_s] - p[i_s - 1]) / dt
    y5 = LN2 / (5.0 + EPS)
    want_v = v0 * (1 - math.exp(-y5 * dt)) / ((y5 + EPS) * dt)
    np.testing.assert_allclose((out.positions[i_s + 1, src.root] - p[i_s]) / dt, want_v, rtol=0,
                               atol=1e-9 * src.height)


def test_measured_angular_speed_halves_every_half_life_in_a_long_blend():
    fps, w = 120.0, 6.0
    t = np.arange(121) / fps
    src = rig(rot_about([0.0, 0.6, 0.8], w * t), None, fps)
    dst = held(rot_about([1.0, 0.0, 0.0], 0.3), 400, fps=fps)
    out = tr.dead_blend(src, dst, 1.0, 0.0, 1e6, halflife=0.25)
    speed = steps(out.rotations[120:, 1]) * fps
    np.testing.assert_allclose(speed[30::30][:8] / speed[:-30:30][:8], 0.5, rtol=1e-6)


def test_a_vanishing_half_life_tends_to_a_crossfade_from_the_held_pose(cmu_clips):
    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    fade = tr.crossfade(src, dst, 1.0, 0.5, hold_source=True)
    gaps = []
    for hl in (1e-1, 1e-2, 1e-3, 1e-9):
        dead = tr.dead_blend(src, dst, 1.0, 0.5, halflife=hl, root_halflife=hl)
        gaps.append(float(quat.angle(dead.rotations, fade.rotations).max()))
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 1e-6 and gaps[0] > 1e-2


# --- the fast spin -------------------------------------------------------------------------------


SPIN_FPS = 30.0


def spin_source() -> Clip:
    """The spine spinning at 10 rad/s about Z for 2 s at 30 fps; the switch is at 1 s (10 rad)."""
    t = np.arange(61) / SPIN_FPS
    return rig(rot_about([0.0, 0.0, 1.0], 10.0 * t))


SPIN_AT = rot_about([0.0, 0.0, 1.0], 10.0)
# 2.5 rad behind the spin about its own axis, or 2.5 rad about X.
SPIN_TARGETS = {"behind": rot_about([0.0, 0.0, 1.0], 7.5),
                "across": quat.mul(rot_about([1.0, 0.0, 0.0], 2.5), SPIN_AT)}


@pytest.mark.parametrize("halflife", ["auto", 1.0])
@pytest.mark.parametrize("where", sorted(SPIN_TARGETS))
def test_a_fast_spin_blends_in_steps_no_bigger_than_its_own(halflife, where):
    out = tr.dead_blend(spin_source(), held(SPIN_TARGETS[where], 61), 1.0, 0.0, 1.0, halflife=halflife)
    # 10 rad/s at 30 fps is 0.333 rad a frame.
    assert steps(out.rotations[:, 1]).max() <= 0.34


def test_the_same_spin_blended_along_the_shortest_path_jumps():
    # With a 1 s half-life the spine spins on for 14 rad: the shortest path to dst flips side
    # each time the difference passes a half turn, and the blend jumps with it.
    target = SPIN_TARGETS["across"]
    t = np.arange(1, 31) / SPIN_FPS
    ext = tr.extrapolate_rotation(SPIN_AT, [0.0, 0.0, 10.0], 1.0, t)
    naive = quat.slerp(ext, np.broadcast_to(target, ext.shape), tr.smoothstep(t))
    assert steps(np.concatenate([SPIN_AT[None], naive])).max() > 1.7
    out = tr.dead_blend(spin_source(), held(target, 61), 1.0, 0.0, 1.0, halflife=1.0)
    assert float(quat.angle(out.rotations[31:61, 1], naive).max()) > 1.0


def test_a_spin_away_from_the_destination_keeps_its_path_on_one_side():
    # Hand-worked in one axis: the spine at 10 rad, spinning on at 10 rad/s, dst 2.5 rad behind.
    # Moving away, so its half-life is the 0.1 s minimum: a(t) = 10 / y (1 - e^(-y t)) -> 1.44 rad.
    # The path back to dst is -(2.5 + a(t)): past a half turn, yet it never switches to the
    # shorter way round (which the shortest-path slerp takes once 2.5 + a(t) > pi).
    src = spin_source()
    out = tr.dead_blend(src, held(rot_about([0.0, 0.0, 1.0], 7.5), 61), 1.0, 0.0, 1.0)
    t = np.arange(1, 31) / SPIN_FPS
    y = LN2 / (0.1 + EPS)
    a = 10.0 / (y + EPS) * (1 - np.exp(-y * t))
    alpha = tr.smoothstep(t)
    path = -(2.5 + a)
    want = 10.0 + a + alpha * path
    got = z_angle(out.rotations[30:61, 1])
    got += 10.0 - got[0]
    np.testing.assert_allclose(got[1:], want, rtol=0, atol=1e-12)
    assert path.min() < -np.pi and np.all(path < 0)
    assert steps(out.rotations[:, 1]).max() <= 0.34


# --- inertialization and crossfades --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quintic", "cubic", "spring"])
def test_inertialization_is_the_destination_plus_the_decaying_switch_offset(kind):
    fps = 60.0
    t = np.arange(31) / fps
    src = rig(rot_about([0.0, 0.0, 1.0], 0.5 + 2.0 * t), np.outer(t, [1.0, 0.0, -3.0]), fps)
    dst = rig(rot_about([0.0, 0.0, 1.0], -0.4 - 1.0 * t), np.outer(1.0 + t * t, [0.5, 2.0, 0.0]), fps)
    # The plain offset: the spine's (2 rad, 3 rad/s) would otherwise decay for longer, its
    # window turning faster than these takes do (test_transition_speed.py).
    out = tr.inertialize(src, dst, 0.5, 0.1, 0.25, kind=kind, extend_fast_joints=False)
    dt, i_s, i_d = 1 / fps, 30, 6
    k = np.arange(1, 15)
    # Offsets at the switch: src - dst, and src's last step minus dst's first step, as rates.
    x0 = src.positions[i_s, 2] - dst.positions[i_d, 2]
    v0 = (np.diff(src.positions[i_s - 1:i_s + 1, 2], axis=0)[0]
          - np.diff(dst.positions[i_d:i_d + 2, 2], axis=0)[0]) / dt
    a0 = (0.5 + 2.0 * 0.5) - (-0.4 - 0.1)
    w0 = 2.0 - (-1.0)
    if kind == "spring":
        y = 2 * LN2 / (0.25 / 6 + EPS)
        curve = lambda x, v, s: (x + (v + y * x) * s) * np.exp(-y * s)  # noqa: E731
    elif kind == "cubic":
        curve = lambda x, v, s: (x * (1 - 3 * (s / 0.25) ** 2 + 2 * (s / 0.25) ** 3)  # noqa: E731
                                 + v * 0.25 * (s / 0.25) * (1 - s / 0.25) ** 2)
    else:
        curve = lambda x, v, s: (x * (1 - 10 * (s / 0.25) ** 3 + 15 * (s / 0.25) ** 4  # noqa: E731
                                      - 6 * (s / 0.25) ** 5)
                                 + v * 0.25 * (s / 0.25) * (1 - s / 0.25) ** 3 * (1 + 3 * s / 0.25))
    s = k * dt
    want_pos = dst.positions[i_d + k, 2] + curve(x0, v0, s[:, None])
    np.testing.assert_allclose(out.positions[i_s + k, 2], want_pos, rtol=0, atol=1e-13)
    want_angle = (-0.4 - 1.0 * (0.1 + s)) + curve(a0, w0, s)
    np.testing.assert_allclose(z_angle(out.rotations[i_s + k, 1]), want_angle, rtol=0, atol=1e-12)
    # Frame 15 (t = blend_time) is dst's: the polynomials are zero there, the spring is snapped.
    np.testing.assert_array_equal(out.rotations[i_s + 15:], dst.rotations[i_d + 15:])


def saa_rate(a: np.ndarray, w: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d/dt of rotvec(exp(w t) exp(a)) at t = 0 `[..., 3]`, by central differences (scipy)."""
    a, w = a.reshape(-1, 3), w.reshape(-1, 3)
    plus = (Rotation.from_rotvec(w * h) * Rotation.from_rotvec(a)).as_rotvec()
    minus = (Rotation.from_rotvec(-w * h) * Rotation.from_rotvec(a)).as_rotvec()
    return (plus - minus) / (2 * h)


def test_inertialization_turns_at_the_sources_angular_velocity_through_the_switch():
    # The offset (1.7 rad) and dst's turning (3 rad/s about z) are not parallel: the offset's rate
    # must see dst's velocity through the offset and be a rate of the exponent. Taking w0 - wd
    # instead jumps by 2.6 rad/s (cubic) here, more than the source's own 2 rad/s.
    fps = 120.0
    t = np.arange(121) / fps
    src = rig(rot_about([1.0, 0.0, 0.0], 2.0 * t), fps=fps)
    dst = rig(quat.mul(rot_about([0.0, 0.0, 1.0], 3.0 * t), rot_about([0.0, 1.0, 0.0], 1.0)), fps=fps)

    def jump(kind: str) -> float:
        q = tr.inertialize(src, dst, 0.5, 0.2, kind=kind).rotations[59:62, 1]
        w = (to_scipy(q[1:]) * to_scipy(q[:-1]).inv()).as_rotvec() * fps
        return float(np.linalg.norm(w[1] - w[0]))

    # The quintic starts without acceleration: what is left is its jerk, (10 a0 / T + 6 a0') (dt / T)^2.
    assert jump("quintic") <= 0.05 * 2.0
    # The cubic decelerates from the start: (3 a0 / T + 2 a0') dt / T.
    assert jump("cubic") <= 0.5 * 2.0


def test_the_spring_follows_its_formula_and_is_snapped_within_0_2_percent_of_height(cmu_clips):
    for case in REAL_CASES[::2]:
        src, dst, ts, td = case_clips(cmu_clips, case)
        out = tr.inertialize(src, dst, ts, td, kind="spring")
        want = anchored(src, dst, ts, td)
        i_s, i_d = round(ts * 120), round(td * 120)
        # The unsnapped spring at frame i_s + 30, from the documented formula (world root, local joints).
        dt = 1 / 120
        q0, qd = src.rotations[i_s], want.rotations[i_d]
        w_s = quat.to_scaled_angle_axis(quat.hemi(quat.mul_inv(q0, src.rotations[i_s - 1]))) / dt
        w_d = quat.to_scaled_angle_axis(quat.hemi(quat.mul_inv(want.rotations[i_d + 1], qd))) / dt
        off = quat.to_scaled_angle_axis(quat.hemi(quat.mul_inv(q0, qd)))
        # The offset's rate turns the output at the source's angular velocity: dst's seen through
        # the offset, as a rate of the exponent (scipy, by finite differences).
        rate = saa_rate(off, w_s - Rotation.from_rotvec(off).apply(w_d)).reshape(off.shape)
        x_s, xd = src.positions[i_s], want.positions[i_d]
        v_s = (x_s - src.positions[i_s - 1]) / dt
        v_d = (want.positions[i_d + 1] - xd) / dt
        ks = np.array([1, 10, 29, 30])
        rot = quat.mul(quat.from_scaled_angle_axis(tr.spring_offset(off, rate, 0.25 / 6, ks * dt)),
                       want.rotations[i_d + ks])
        pos = want.positions[i_d + ks] + tr.spring_offset(x_s - xd, v_s - v_d, 0.25 / 6, ks * dt)
        # Finite differences leave ~1e-9 rad/s in the rate, which the spring carries 0.01 s.
        assert float(quat.angle(rot[:3], out.rotations[i_s + ks[:3]]).max()) < 1e-10
        # The root's height follows the formula; its travel over the floor blends velocities
        # (tests/core/test_transition_root.py).
        r = src.root
        others = np.arange(src.n_joints) != r
        np.testing.assert_allclose(pos[:3, others], out.positions[i_s + ks[:3]][:, others], rtol=0,
                                   atol=1e-12 * src.height)
        np.testing.assert_allclose(pos[:3, r] @ src.up, out.positions[i_s + ks[:3], r] @ src.up, rtol=0,
                                   atol=1e-12 * src.height)
        unsnapped = quat.fk(rot[3], pos[3], src.parents)[1]
        gap = np.linalg.norm(unsnapped - quat.fk(want.rotations[i_d + 30], want.positions[i_d + 30],
                                                 src.parents)[1], axis=-1)
        # ~0.2% of the offset is left at blend_time; on these phase-mismatched switches that is
        # at most 1.6e-3 x height (2.6 mm, the right hand of 131_01 at 5.75 s, at the end of the
        # arm's chain of offsets), where the snap removes it.
        assert gap.max() <= 2e-3 * src.height


def test_transitioning_a_take_into_itself_at_the_same_frame_changes_it_little_or_not_at_all(cmu_clips):
    clip = cmu_clips("09_12")
    body = blend.mask_preset(clip, "FINGERS") == 0
    for method in METHODS:
        out = tr.METHODS[method](clip, clip, 7.0, 7.0)
        assert out.n_frames == clip.n_frames
        gap = quat.angle(out.rotations, clip.rotations)[:, body]
        if method in ("crossfade_playing", "cut"):
            # Both play the same frames: nothing to blend.
            assert float(gap.max()) < 1e-9
            np.testing.assert_allclose(out.positions, clip.positions, rtol=0, atol=1e-9 * clip.height)
        else:
            # The others replace the take's own acceleration at the switch (inertialization) or
            # its motion (dead blending: extrapolated; crossfade: held) for the blend, so they
            # stray from it by a few degrees on average, and are back on it after the blend.
            assert 1e-6 < float(gap[840:870].mean()) < 0.05
            assert float(gap[840 + 30:].max()) < 1e-9


def test_a_held_crossfade_stops_the_source_and_a_playing_one_keeps_it_going():
    t = np.arange(41) / 30.0
    src = rig(rot_about([0.0, 0.0, 1.0], 3.0 * t))
    dst = held(rot_about([0.0, 0.0, 1.0], 1.0), 41)
    hold = tr.crossfade(src, dst, 0.5, 0.0, 0.5, hold_source=True)
    play = tr.crossfade(src, dst, 0.5, 0.0, 0.5, hold_source=False)
    k = np.arange(1, 15)
    alpha = tr.smoothstep(k / 15)
    np.testing.assert_allclose(z_angle(hold.rotations[15 + k, 1]), 1.5 + alpha * (1.0 - 1.5), atol=1e-12)
    np.testing.assert_allclose(z_angle(play.rotations[15 + k, 1]), 3.0 * (15 + k) / 30 * (1 - alpha) + alpha,
                               atol=1e-12)


def test_a_mask_gives_each_joint_its_share_of_the_transition(cmu_clips):
    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    upper = blend.mask_preset(src, "UPPER_BODY")
    full = tr.dead_blend(src, dst, 1.0, 0.5)
    masked = tr.dead_blend(src, dst, 1.0, 0.5, mask=upper)
    cut = tr.cut(src, dst, 1.0, 0.5)
    on, off = upper == 1.0, upper == 0.0
    np.testing.assert_array_equal(masked.rotations[:, on], full.rotations[:, on])
    np.testing.assert_array_equal(masked.rotations[:, off], cut.rotations[:, off])
    # Half a mask is half the source's share: alpha' = 1 - (1 - alpha) / 2 on still poses.
    a = held(quat.identity(), 40, [0.0, 1.0, 0.0])
    b = held(quat.identity(), 40, [0.0, 3.0, 0.0])
    half = tr.crossfade(a, b, 0.5, 0.2, 0.5, mask=[1.0, 1.0, 0.5])
    k = np.arange(1, 15)
    want = 1 - (1 - tr.smoothstep(k / 15)) / 2
    np.testing.assert_allclose((half.positions[15 + k, 2, 1] - 1.0) / 2.0, want, atol=1e-15)


def test_max_speed_caps_the_extrapolated_angular_speed():
    t = np.arange(31) / 30.0
    src = rig(rot_about([0.0, 0.0, 1.0], 20.0 * t))
    dst = held(rot_about([0.0, 0.0, 1.0], 10.0 + 3.0), 31)
    # A 1e6 s blend leaves the first frame all extrapolation; the 0.5 s half-life is fixed.
    free = tr.dead_blend(src, dst, 0.5, 0.0, 1e6, halflife=0.5)
    capped = tr.dead_blend(src, dst, 0.5, 0.0, 1e6, halflife=0.5, max_speed=5.0)
    y = LN2 / (0.5 + EPS)
    decay = (1 - math.exp(-y / 30)) / ((y + EPS) / 30)
    assert np.diff(z_angle(free.rotations[15:17, 1]))[0] * 30 == pytest.approx(20.0 * decay, abs=1e-9)
    assert np.diff(z_angle(capped.rotations[15:17, 1]))[0] * 30 == pytest.approx(5.0 * decay, abs=1e-9)


# --- real data: velocity continuity -------------------------------------------------------------


@pytest.mark.parametrize("method", ["dead", "inertialize"])
@pytest.mark.parametrize("case", REAL_CASES, ids=lambda c: f"{c[0]}-{c[1]}@{c[2]}")
def test_the_switch_velocity_change_stays_under_a_quarter_of_a_crossfades(case, method, cmu_clips):
    src, dst, ts, td = case_clips(cmu_clips, case)
    i_s = round(ts * 120)
    fade = metrics.switch_velocity_change(tr.crossfade(src, dst, ts, td), i_s)
    transition = tr.dead_blend if method == "dead" else tr.inertialize  # its default kind
    change = metrics.switch_velocity_change(transition(src, dst, ts, td), i_s)
    assert change["rotation"] <= 0.25 * fade["rotation"]
    assert change["position"] <= 0.25 * fade["position"]
    # and a cut is far worse than either
    jump = metrics.switch_velocity_change(tr.cut(src, dst, ts, td), i_s)
    assert jump["rotation"] > 5 * fade["rotation"]


@pytest.mark.parametrize("kind", ["quintic", "cubic", "spring"])
def test_inertializations_switch_velocity_change_is_its_offsets_curvature(kind):
    # Translations, exact: v_out(1) - v_out(0) = (off(dt) - off(0)) / dt - off'(0), because dst's
    # first step and the offset's rate add up to src's last step. dst accelerates here, and that
    # does not show.
    # A stiff spring (y = 33/s) accelerates hard here: the reason it can jump more than a
    # crossfade on real takes.
    fps = 120.0
    t = np.arange(121) / fps
    # The arm is at (0.5, 0, 0) in src at 0.5 s and at (0.3, 0, 0.2) in dst at 0.2 s.
    src = rig(quat.identity(121), np.outer(t, [1.0, 0.0, 0.0]), fps)
    dst = rig(quat.identity(121), np.outer(t, [0.0, 0.0, 1.0]) + np.array([0.3, 0.0, 0.0]), fps)
    dst.positions[:, 2, 1] = 5.0 * t * t
    out = tr.inertialize(src, dst, 0.5, 0.2, kind=kind)
    i_s, dt = 60, 1 / fps
    v = np.diff(out.positions[i_s - 1:i_s + 2, 2], axis=0) * fps
    # dst's first step from 0.2 s: (0, 5 (0.2 + dt)^2 - 5 0.2^2, 1) / dt.
    dst_v = np.array([0.0, 5.0 * (2 * 0.2 + dt), 1.0])
    x0, v0 = np.array([0.2, -5.0 * 0.04, -0.2]), np.array([1.0, 0.0, 0.0]) - dst_v
    if kind == "spring":
        off = tr.spring_offset(x0, v0, 0.25 / 6, dt)
    else:
        off = (tr.cubic_offset if kind == "cubic" else tr.quintic_offset)(x0, v0, 0.25, dt)
    np.testing.assert_allclose(v[1] - v[0], (off - x0) / dt - v0, rtol=0, atol=1e-9)


# --- sequences ----------------------------------------------------------------------------------


def test_a_sequence_chains_clips_each_continuing_the_last(cmu_clips):
    a, b, c = cmu_clips("02_01"), cmu_clips("02_03"), cmu_clips("02_02")
    out = tr.sequence([(a, 0.1, 1.5), (b, 0.2, 1.2), (c, 0.5, 2.0)])
    spans = [(12, 180), (24, 144), (60, 240)]
    assert out.n_frames == sum(e - s for s, e in spans) + 1
    np.testing.assert_array_equal(out.rotations[:180 - 12 + 1], a.rotations[12:181])
    np.testing.assert_allclose(out.events["Transition"], [(180 - 12) / 120, (180 - 12 + 144 - 24) / 120])
    # Each transition is the pairwise one: the same frames as dead_blend(previous output, next clip).
    first = tr.dead_blend(a[12:], b, (180 - 12) / 120, 0.2)
    n1 = 180 - 12 + 144 - 24 + 1
    np.testing.assert_allclose(out.rotations[:n1], first.rotations[:n1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(out.positions[:n1], first.positions[:n1], rtol=0, atol=1e-12 * a.height)
    # No pops: no joint moves faster than 12 m/s anywhere (a cut jumps metres in a frame).
    world = out.fk()[1] * out.meters_per_unit
    assert np.linalg.norm(np.diff(world, axis=0), axis=-1).max() * 120 < 12.0
    cut = tr.sequence([(a, 0.1, 1.5), (b, 0.2, 1.2), (c, 0.5, 2.0)], method="cut")
    assert np.linalg.norm(np.diff(cut.fk()[1] * cut.meters_per_unit, axis=0), axis=-1).max() * 120 > 50.0


def test_a_sequence_keeps_each_clips_events_within_its_span():
    a = held(quat.identity(), 31).replace(events={"Step": [0.1, 0.4, 0.9]})
    b = held(quat.identity(), 31).replace(events={"Step": [0.2, 0.3, 0.6]}, fps=30.0)
    out = tr.sequence([(a, 0.1, 0.5), (b, 0.2, 0.7)], method="crossfade")
    # a: 0.1, 0.4 -> 0.0, 0.3; the switch at 0.4; b after 0.2 up to 0.7: 0.3, 0.6 -> 0.5, 0.8.
    np.testing.assert_allclose(out.events["Step"], [0.0, 0.3, 0.5, 0.8], atol=1e-12)
    np.testing.assert_allclose(out.events["Transition"], [0.4])
    assert out.n_frames == 12 + 15 + 1


def test_a_sequence_plays_clips_of_other_rates_at_the_first_clips_rate(cmu_clips):
    a, b = cmu_clips("02_01"), cmu_clips("02_03")
    out = tr.sequence([(a, 0.5, 1.0), (b[::2], 0.25, 1.0)], method="cubic")
    assert out.fps == 120.0
    # 60 frames of a, then b's frames 31..120 at 120 fps.
    assert out.n_frames == 60 + 90 + 1
    np.testing.assert_array_equal(out.rotations[:61], a.rotations[60:121])
    want = tr.inertialize(a[60:], resample(b[::2], 120.0), 0.5, 0.25, kind="cubic")
    assert float(quat.angle(out.rotations, want.rotations[:151]).max()) < 1e-12


def test_switching_onto_the_destinations_last_frame_ends_the_output_there(cmu_clips):
    a, b = cmu_clips("02_01"), cmu_clips("02_03")
    for method in METHODS:
        out = tr.METHODS[method](a, b, 1.0, b.duration)
        np.testing.assert_array_equal(out.rotations, a.rotations[:121])


def test_a_one_clip_sequence_is_its_span(cmu_clips):
    a = cmu_clips("02_01")
    out = tr.sequence([(a, 0.5, 1.0)])
    np.testing.assert_array_equal(out.rotations, a.rotations[60:121])
    assert "Transition" not in out.events


def test_bad_requests_name_the_problem(cmu_clips):
    a, other = cmu_clips("02_01"), cmu_clips("131_01")
    with pytest.raises(SkeletonMismatch):
        tr.dead_blend(a, other, 1.0, 1.0)
    with pytest.raises(SkeletonMismatch):
        tr.sequence([(a, 0.0, 1.0), (other, 0.0, 1.0)])
    with pytest.raises(ValueError, match="src_time"):
        tr.dead_blend(a, a, 10.0, 1.0)
    with pytest.raises(ValueError, match="dst_time"):
        tr.crossfade(a, a, 1.0, -0.5)
    with pytest.raises(ValueError, match="halflife"):
        tr.dead_blend(a, a, 1.0, 1.0, halflife="fast")
    with pytest.raises(ValueError, match="kind"):
        tr.inertialize(a, a, 1.0, 1.0, kind="linear")
    with pytest.raises(ValueError, match="mask"):
        tr.dead_blend(a, a, 1.0, 1.0, mask=np.ones(3))
    with pytest.raises(ValueError, match="blend_time"):
        tr.dead_blend(a, a, 1.0, 1.0, -0.1)
    with pytest.raises(ValueError, match="method"):
        tr.sequence([(a, 0.0, 1.0)], method="morph")
    with pytest.raises(ValueError, match="before it starts"):
        tr.sequence([(a, 1.0, 0.5)])


# --- metrics ------------------------------------------------------------------------------------


def test_switch_velocity_change_on_a_hand_worked_turn():
    # The spine turns at 1 rad/s until frame 10, then at 4 rad/s about another axis.
    fps = 30.0
    ang = np.concatenate([np.arange(11) / fps, 10 / fps + 4.0 * np.arange(1, 10) / fps])
    spine = np.concatenate([rot_about([0.0, 0.0, 1.0], ang[:11]),
                            quat.mul(rot_about([1.0, 0.0, 0.0], 4.0 * np.arange(1, 10) / fps),
                                     rot_about([0.0, 0.0, 1.0], 10 / fps))])
    clip = rig(spine, None, fps).replace(meters_per_unit=1.0)
    change = metrics.switch_velocity_change(clip, 10, joints=[1])
    assert change["rotation"] == pytest.approx(math.hypot(1.0, 4.0), abs=1e-12)
    assert change["rotation_max"] == change["rotation"]
    # The arm's origin sits at (0, 1, 0) + R_spine (0, 0.5, 0): its speed changes too.
    change = metrics.switch_velocity_change(clip, 10, joints=[0, 2])
    world = clip.fk()[1][9:12, 2]
    v = np.diff(world, axis=0) * fps
    assert change["position_max"] == pytest.approx(np.linalg.norm(v[1] - v[0]), rel=1e-12)
    assert change["position"] == pytest.approx(change["position_max"] / 2, rel=1e-12)


def test_peak_angular_speed_and_acceleration_on_a_hand_worked_ramp(cmu_clips):
    fps = 60.0
    t = np.arange(61) / fps
    clip = rig(rot_about([0.0, 1.0, 0.0], 1.5 * t * t), None, fps)  # w = 3 t, acceleration 3
    speed = metrics.peak_angular_speed(clip, (10, 31), joints=[1])
    assert speed == pytest.approx(1.5 * (30**2 - 29**2) / fps, rel=1e-12)
    assert metrics.peak_angular_acceleration(clip, (2, 61), joints=[1]) == pytest.approx(3.0, rel=1e-9)
    # Fingers are left out by default: a thumb spinning half a turn a frame does not count.
    cmu: Clip = cmu_clips("02_01")[1:60]
    fingers = blend.mask_preset(cmu, "FINGERS") > 0
    spiky = cmu.rotations.copy()
    spiky[1::2, np.flatnonzero(fingers)[0]] = rot_about([1.0, 0.0, 0.0], 3.0)
    spiky_clip = cmu.replace(rotations=spiky)
    assert metrics.peak_angular_speed(spiky_clip) == metrics.peak_angular_speed(cmu)
    assert metrics.peak_angular_speed(spiky_clip, joints=np.ones(cmu.n_joints, bool)) > 100.0


def test_foot_sliding_sees_feet_dragged_over_the_floor(cmu_clips):
    from core import contacts

    clip: Clip = cmu_clips("02_01")[1:]
    # One pose held: planted feet do not move; dragged sideways at 0.5 m/s, every point slides so.
    pose = clip[100:101]
    still = pose.replace(rotations=np.repeat(pose.rotations, 60, axis=0),
                         positions=np.repeat(pose.positions, 60, axis=0))
    everywhere = {"L": np.ones(60, bool), "R": np.ones(60, bool)}
    assert metrics.foot_sliding(still, everywhere) == 0.0
    pos = still.positions.copy()
    pos[:, clip.root] += np.outer(still.times, [0.5 / clip.meters_per_unit, 0.0, 0.0])
    assert metrics.foot_sliding(still.replace(positions=pos), everywhere) == pytest.approx(0.5, rel=1e-9)
    assert metrics.foot_sliding(still.replace(positions=pos), {"L": np.zeros(60, bool)}) == 0.0
    # The captured walk: feet roll on and off the floor (contacts run from heel strike to toe-off)
    # but do not skate; contacts default to those detected on the clip.
    planted = contacts.contacts(clip)
    walk = metrics.foot_sliding(clip, planted)
    assert 0.05 < walk < 0.25
    assert metrics.foot_sliding(clip) == walk


def test_blend_window_error_measures_the_distance_to_the_destination(cmu_clips):
    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    cut = tr.cut(src, dst, 1.0, 0.5)
    assert metrics.blend_window_error(cut, cut, (121, 150)) == (0.0, 0.0)
    pos = cut.positions.copy()
    pos[:, cut.root] += [0.0, 0.1 / cut.meters_per_unit, 0.0]
    moved = cut.replace(positions=pos)
    mean, peak = metrics.blend_window_error(moved, cut, (121, 150))
    assert mean == pytest.approx(0.1, rel=1e-9) and peak == pytest.approx(0.1, rel=1e-9)
    dead = tr.dead_blend(src, dst, 1.0, 0.5)
    mean, peak = metrics.blend_window_error(dead, cut, (121, 150))
    assert 0.0 < mean < peak < 1.0


def test_a_float32_blend_time_from_a_ui_field_ends_on_the_same_frame(cmu_clips):
    src, dst = cmu_clips("02_01"), cmu_clips("02_03")
    exact = tr.inertialize(src, dst, 1.5, 0.4, 0.3)
    from_ui = tr.inertialize(src, dst, 1.5, 0.4, float(np.float32(0.3)))  # 36.0000014 frames
    assert np.abs(exact.rotations - from_ui.rotations).max() < 1e-6
