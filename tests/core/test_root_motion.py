"""A root joint for engines (root.add_root) on CMU and Bandai takes, their loops, a U-turn made in
code and the same takes written in other conventions: every joint keeps its world pose, the root
stays on the floor near the hips without swaying, turns with the smoothed heading and never flips,
and a loop stays a loop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import variants as V
from fixtures import CMU, take_path
from scipy.ndimage import gaussian_filter1d
from scipy.signal import savgol_filter

from core import bvh, contacts, quat, root, sync
from core.clip import Clip

BANDAI = ["dataset-1_walk_normal_001", "dataset-1_walk_happy_001", "dataset-1_walk_tired_001",
          "dataset-1_run_happy_001", "dataset-1_run_tired_001", "dataset-1_walk-left_normal_001",
          "dataset-1_walk-right_normal_001", "dataset-1_bow_normal_001"]
BANDAI_LOOPS = ["dataset-1_walk_normal_002", "dataset-1_run_normal_001", "dataset-1_dash_normal_001",
                "dataset-1_walk-back_normal_001"]
TAKES = sorted(CMU) + BANDAI + BANDAI_LOOPS

_LOADED: dict[str, Clip] = {}


def take(name: str) -> Clip:
    if name not in _LOADED:
        _LOADED[name] = bvh.load(take_path(name))
    return _LOADED[name]


def kept(clip: Clip, out: Clip) -> np.ndarray:
    """out's joint for each of clip's joints (a new root shifts them by one)."""
    return np.arange(clip.n_joints) + (out.n_joints - clip.n_joints)


def hips_ground(clip: Clip) -> np.ndarray:
    """[T, 3] the hips' ground projection (the body map's pelvis), from full FK."""
    p = clip.fk()[1][:, clip.body.pelvis]
    return p - np.outer(p @ clip.up, clip.up)


def stride(clip: Clip) -> float:
    """Median distance (file units) between a foot's successive touchdowns (contacts.footsteps,
    the ankle's position there); a pre-cut loop's: how far its hips travel over the cycle."""
    if clip.loop and clip.seam_repeats:
        ground = hips_ground(clip)
        return float(np.linalg.norm(ground[clip.loop_frames] - ground[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = contacts.footsteps(clip)
    world = clip.fk()[1]
    gaps = []
    for side in ("L", "R"):
        frames = np.rint(np.asarray(steps[f"FootDown_{side}"]) * clip.fps).astype(int)
        ankle = world[frames, clip.body.feet[side][0]]
        gaps += np.linalg.norm(np.diff(ankle, axis=0), axis=-1).tolist()
    return float(np.median(gaps)) if gaps else 0.0


def root_heading(out: Clip) -> np.ndarray:
    """[T] the root joint's heading (unwrapped) from its world rotation and facing."""
    rot = out.fk()[0][:, out.root]
    return np.unwrap(root.heading_of(rot, out.up, out.forward))


@pytest.mark.parametrize("name", TAKES)
def test_every_joint_keeps_its_world_pose(name):
    clip = take(name)
    out = root.add_root(clip)
    (rot, pos), (got_rot, got_pos) = clip.fk(), out.fk()
    index = kept(clip, out)
    # A static top joint that becomes the root (Bandai's joint_Root) is the one joint that moves.
    moved = [j for j in range(clip.n_joints) if index[j] == out.root]
    others = np.setdiff1d(np.arange(clip.n_joints), moved)
    err = np.abs(got_pos[:, index[others]] - pos[:, others]).max()
    assert err <= 1e-6 * clip.height
    assert quat.angle(got_rot[:, index[others]], rot[:, others]).max() <= 1e-9
    assert out.n_frames == clip.n_frames and out.fps == clip.fps


@pytest.mark.parametrize("name", TAKES)
def test_the_root_stays_on_the_floor_within_a_stride_of_the_hips(name):
    clip = take(name)
    out = root.add_root(clip)
    path = out.fk()[1][:, out.root]
    np.testing.assert_allclose(path @ clip.up, 0.0, atol=1e-12 * clip.height)
    off = np.linalg.norm(path - hips_ground(clip), axis=-1)[clip.motion_start:]
    # A bow takes no steps: there the root stays within a foot's length of the hips.
    reach = stride(clip) if name != "dataset-1_bow_normal_001" else 0.15 * clip.height
    assert reach > 0.0
    assert off.max() <= reach, (off.max() * clip.meters_per_unit, reach * clip.meters_per_unit)
    # and it never travels faster than the hips do over the floor
    start = clip.motion_start
    speed = np.linalg.norm(np.diff(path[start:], axis=0), axis=-1)
    assert speed.max() <= np.linalg.norm(np.diff(hips_ground(clip)[start:], axis=0), axis=-1).max()


def cycle_seconds(clip: Clip) -> float:
    """Median time between a foot's successive touchdowns (contacts.footsteps)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = contacts.footsteps(clip)
    return float(np.median(np.concatenate([np.diff(steps["FootDown_L"]), np.diff(steps["FootDown_R"])])))


@pytest.mark.parametrize("name", ["02_01", "02_02", "09_12", "dataset-1_walk_normal_001",
                                  "dataset-1_run_happy_001"])
def test_the_root_does_not_sway_with_the_steps(name):
    clip = take(name)[take(name).motion_start:]
    out = root.add_root(clip)
    hips, path = hips_ground(clip), out.fk()[1][:, out.root]
    # Sway: what swings back and forth within a gait cycle, off a quadratic fitted over each
    # cycle's frames (Savitzky-Golay: keeps a path's slow bends and speed changes).
    width = round(cycle_seconds(clip) * clip.fps) | 1

    def sway(p: np.ndarray) -> float:
        off = p - savgol_filter(p, width, 2, axis=0)
        return float(np.linalg.norm(off[width:-width], axis=-1).max() * clip.meters_per_unit)

    assert sway(hips) > 0.015  # the hips swing by centimetres
    assert sway(path) < min(0.05 * sway(hips), 0.002)
    # and the root's speed along the path changes smoothly, where the hips' surges with each step
    speed = np.linalg.norm(np.diff(path, axis=0), axis=-1)
    hips_speed = np.linalg.norm(np.diff(hips, axis=0), axis=-1)
    assert np.abs(np.diff(speed)).max() < 0.1 * np.abs(np.diff(hips_speed)).max()


@pytest.mark.parametrize("name", ["02_01", "09_12", "131_03", "dataset-1_walk_happy_001",
                                  "dataset-1_run_tired_001"])
def test_the_root_turns_with_the_smoothed_heading(name):
    clip = take(name)[take(name).motion_start:]
    sigma = 0.4
    out = root.add_root(clip, smooth=sigma)
    got = root_heading(out)
    raw = np.unwrap(root.heading(clip))
    want = gaussian_filter1d(raw, sigma * clip.fps)  # scipy's Gaussian: the same inside the take
    inside = slice(int(4 * sigma * clip.fps) + 1, -int(4 * sigma * clip.fps) - 1)
    np.testing.assert_allclose(got[inside], want[inside], atol=1e-9)
    # Near the ends too, never faster than the character turns, nor the wrong way round.
    assert np.abs(np.diff(got)).max() <= np.abs(np.diff(raw)).max()
    assert np.abs(got - raw).max() < np.pi / 2


def u_turn(clip: Clip, seconds: float = 2.0) -> Clip:
    """The take turned left through 180 degrees over `seconds` in its middle (its heading and the
    direction of its travel both, a smoothstep), the body as it walks."""
    traj, res = root.decompose(clip)
    t = (clip.times - (clip.duration - seconds) / 2) / seconds
    s = np.clip(t, 0.0, 1.0)
    turn = np.pi * s * s * (3 - 2 * s)
    steps = np.diff(traj.position, axis=0)
    moved = quat.mul_vec(root.yaw_quat(turn[:-1], clip.up), steps)
    position = traj.position[0] + np.concatenate([np.zeros((1, 3)), np.cumsum(moved, axis=0)])
    return root.recompose(clip, root.Trajectory(position, traj.heading + turn), res)


@pytest.mark.parametrize("name", ["09_12", "dataset-1_walk_happy_001"])
def test_a_u_turn_turns_the_root_once_through_half_a_circle_without_a_flip(name):
    source = take(name)
    straight = source[source.motion_start:source.motion_start + int(7 * source.fps)]
    clip = u_turn(straight)
    own = np.unwrap(root.heading(straight))
    wrapped = root.heading(clip)
    # Read frame by frame, the heading wraps from +pi to -pi somewhere in the turn: the flip
    # converters make when they take it as it reads.
    assert np.abs(np.diff(wrapped)).max() > np.pi
    out = root.add_root(clip)
    got = root_heading(out)
    raw = np.unwrap(wrapped)
    assert abs((got[-1] - got[0]) - (raw[-1] - raw[0])) < np.radians(5.0)
    assert abs(got[-1] - got[0] - (own[-1] - own[0]) - np.pi) < np.radians(5.0)  # the take's own turns and U
    assert np.abs(got - raw).max() < np.radians(45.0)
    cycle = root.gait_cycle(clip)
    assert cycle is not None
    sigma = out.fps * 0.5 * cycle
    smoothed = gaussian_filter1d(raw, sigma, mode="nearest")
    assert np.abs(np.diff(got)).max() <= np.abs(np.diff(smoothed)).max() * 1.05
    off = np.linalg.norm(out.fk()[1][:, out.root] - hips_ground(clip), axis=-1)
    assert off.max() <= stride(clip)
    index = kept(clip, out)
    body = [j for j in range(clip.n_joints) if index[j] != out.root]
    assert np.abs(out.fk()[1][:, index[body]] - clip.fk()[1][:, body]).max() <= 1e-6 * clip.height


def test_mode_none_keeps_the_root_unrotated_and_yaw_turns_it_about_up_only(cmu_clips):
    clip = cmu_clips("131_03")[1:]
    still = root.add_root(clip, mode="none")
    assert quat.angle(still.rotations[:, 0], quat.identity()).max() < 1e-15
    turned = root.add_root(clip)
    # A rotation about up alone leaves up where it is.
    np.testing.assert_allclose(quat.mul_vec(turned.rotations[:, 0], clip.up), np.broadcast_to(clip.up, (
        clip.n_frames, 3)), atol=1e-15)
    np.testing.assert_allclose(still.positions[:, 0], turned.positions[:, 0], atol=1e-12 * clip.height)
    for out in (still, turned):
        np.testing.assert_allclose(out.fk()[1][:, 1:], clip.fk()[1], atol=1e-6 * clip.height)
    with pytest.raises(ValueError, match="mode must be one of yaw, none"):
        root.add_root(clip, mode="pitch")


def test_a_static_floor_joint_on_top_gets_the_motion_instead_of_a_new_joint():
    clip = take("dataset-1_walk_normal_001")
    assert clip.names[0] == "joint_Root" and 0 in clip.body.static
    out = root.add_root(clip, name="root")
    assert out.names == clip.names and out.root == 0
    assert out.channels[0] == root.ROOT_CHANNELS
    assert 0 not in out.body.static
    assert out.body.feet == clip.body.feet and out.body.pelvis == clip.body.pelvis
    # A CMU take's top joint is its hips: a new joint goes above them.
    cmu = take("02_01")
    new = root.add_root(cmu, name="root")
    assert new.names == ["root", *cmu.names] and list(new.parents[:3]) == [-1, 0, 1]
    assert new.body.feet == {s: [j + 1 for j in v] for s, v in cmu.body.feet.items()}
    with pytest.raises(ValueError, match="joint named 'Hips'"):
        root.add_root(cmu, name="Hips")


def test_the_new_root_is_the_motion_root_facing_its_heading(cmu_clips):
    clip = cmu_clips("09_12")[1:]
    out = root.add_root(clip)
    assert out.root == 0 and out.names[out.root] == "root"
    traj = root.trajectory(out)
    np.testing.assert_allclose(traj.position, out.positions[:, 0], atol=1e-12 * clip.height)
    np.testing.assert_allclose(traj.heading, root_heading(out), atol=1e-12)
    # Baked in place from there, the character stays over the origin.
    still = root.in_place(out)
    np.testing.assert_allclose(still.positions[:, 0], 0.0, atol=1e-9 * clip.height)


def in_root_frame(clip: Clip) -> np.ndarray:
    """[T, J, 3] every joint seen from the root joint."""
    rot, pos = clip.fk()
    r = clip.root
    return quat.mul_vec(quat.inv(rot[:, r:r + 1]), pos - pos[:, r:r + 1])


@pytest.mark.parametrize("name", BANDAI_LOOPS)
def test_a_precut_loop_stays_a_loop(name):
    clip = take(name)
    assert clip.loop and clip.seam_repeats
    out = root.add_root(clip)
    assert out.loop
    pose = in_root_frame(out)
    seam = np.linalg.norm(pose[-1] - pose[0], axis=-1).max() * clip.meters_per_unit
    # The take's own seam, seen from its unsmoothed character frame (the dash's is 9 cm).
    own = root.character_positions(clip)
    seam_in = np.linalg.norm(own[-1] - own[0], axis=-1).max() * clip.meters_per_unit
    assert seam <= seam_in + 0.001
    # The root's path repeats with the cycle's move: its step into the seam is its step out of it.
    path = out.positions[:, out.root] * clip.meters_per_unit
    steps = np.linalg.norm(np.diff(path, axis=0), axis=-1)
    assert abs(steps[-1] - steps[0]) < 0.001


# Loops of N frames whose frame N would be frame 0 again (loop_cycle's), whose last frame the
# clip does not take for a repeat of its first (clip.seam_repeats: walk_happy's cycle is read as
# one, and analysed so, as contacts analyse it).
@pytest.mark.parametrize("name", ["02_01", "02_03", "09_12", "dataset-1_walk_normal_001"])
def test_a_loop_cycle_stays_a_loop(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = sync.loop_cycle(take(name))
    assert not loop.seam_repeats
    out = root.add_root(loop)
    assert out.loop and out.n_frames == loop.n_frames
    unit = loop.meters_per_unit
    # The next lap is this one moved and turned as the hips move over the cycle (sync.cycle_travel,
    # the loop convention): the root carried along must go on without a kink at the seam.
    d, turn = sync.cycle_travel(loop)
    hips = root.trajectory(loop)
    spin = root.yaw_quat(turn, loop.up)
    end = hips.position[0] + quat.mul_vec(root.yaw_quat(hips.heading[0], loop.up), d)
    path = out.positions[:, 0]
    ahead = quat.mul_vec(spin, path[:2] - hips.position[0]) + end  # the next lap's first two frames
    steps = np.diff(np.concatenate([path, ahead]), axis=0) * unit
    bends = np.linalg.norm(np.diff(steps, axis=0), axis=-1)
    assert bends[-3:].max() < 0.001  # into, across and out of the seam: under a millimetre
    assert bends[-3:].max() < 1.5 * bends[:-3].max() + 1e-4  # as smooth as the rest of the lap
    heading = root_heading(out)
    turns = np.diff(np.concatenate([heading, heading[:2] + turn]))
    assert np.abs(np.diff(turns)[-3:]).max() < 1e-3


@pytest.mark.parametrize("name", ["02_01", "09_01", "09_12", "dataset-1_walk_normal_001",
                                  "dataset-1_run_happy_001", "dataset-1_walk_tired_001"])
def test_gait_cycle_is_the_time_between_a_foots_touchdowns(name):
    clip = take(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = contacts.footsteps(clip)
    touchdowns = np.concatenate([np.diff(steps["FootDown_L"]), np.diff(steps["FootDown_R"])])
    assert len(touchdowns) >= 1
    assert root.gait_cycle(clip) == pytest.approx(float(np.median(touchdowns)), rel=0.1)


def test_gait_cycle_of_a_precut_loop_is_its_period():
    for name in BANDAI_LOOPS:
        clip = take(name)
        assert root.gait_cycle(clip) == pytest.approx(clip.loop_frames / clip.fps, abs=1.5 / clip.fps)
    assert root.gait_cycle(take("dataset-1_bow_normal_001")) is None


VARIANTS = ["random rest frames", "bones along +X", "Z-up", "inches", "no names", "dummy root",
            "End Sites as joints", "+X bones, no names, Z-up, cm"]


def world_map(a: Clip, b: Clip, index: np.ndarray) -> np.ndarray:
    """[3, 3] the linear map (a rotation times a scale) taking a's world positions to b's: how
    the variant is written (Z-up, units), fitted on the inputs."""
    pa, pb = a.fk()[1].reshape(-1, 3), b.fk()[1][:, index].reshape(-1, 3)
    m, *_ = np.linalg.lstsq(pa, pb, rcond=None)
    return m.T


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ["02_01", "dataset-1_walk_normal_001", "dataset-1_walk_normal_002"])
def test_the_root_is_the_same_in_any_convention(name, variant):
    clip = take(name)
    made, index = V.remakes(clip)[variant](clip)
    m = world_map(clip, made, index)
    want, got = root.add_root(clip), root.add_root(made)
    height = made.height
    ours, theirs = want.fk()[1], got.fk()[1]
    # Every joint of the take where the same motion, written the other way, puts it (but for a
    # static top joint that one of them made its root: a dummy rotated by the variant is kept).
    mine, yours = kept(clip, want), kept(made, got)[index]
    body = (mine != want.root) & (yours != got.root)
    np.testing.assert_allclose(theirs[:, yours[body]], ours[:, mine[body]] @ m.T, rtol=0, atol=1e-6 * height)
    # The root: on the same path, facing the same way.
    np.testing.assert_allclose(theirs[:, got.root], ours[:, want.root] @ m.T, rtol=0, atol=1e-6 * height)
    facing = quat.mul_vec(want.fk()[0][:, want.root], want.forward) @ m.T
    facing /= np.linalg.norm(facing, axis=-1, keepdims=True)
    np.testing.assert_allclose(quat.mul_vec(got.fk()[0][:, got.root], got.forward), facing, atol=1e-6)
