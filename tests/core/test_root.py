"""Root motion: trajectory and residual on hand-worked roots and real CMU takes, re-anchoring,
in-place output, and a root below a dummy joint."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import CMU
from scipy.ndimage import gaussian_filter1d
from scipy.spatial.transform import Rotation

from core import root
from core.clip import Clip


def to_scipy(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.asarray(q).reshape(-1, 4)[:, [1, 2, 3, 0]])


def from_scipy(r: Rotation) -> np.ndarray:
    return r.as_quat()[..., [3, 0, 1, 2]]


def sign_free_error(q: np.ndarray, p: np.ndarray) -> float:
    q, p = np.broadcast_arrays(np.asarray(q), np.asarray(p))
    return float(np.minimum(np.abs(q - p).max(-1), np.abs(q + p).max(-1)).max(initial=0.0))


def wrapped(angle: np.ndarray) -> np.ndarray:
    return np.angle(np.exp(1j * np.asarray(angle)))


def yaw_between(forward: np.ndarray, facing: np.ndarray) -> np.ndarray:
    """Signed angle about +Y from `forward` to each `facing` [T, 3] on the XZ floor (CCW from above)."""
    fx, fz = forward[0], forward[2]
    vx, vz = facing[:, 0], facing[:, 2]
    return np.arctan2(fz * vx - fx * vz, fx * vx + fz * vz)


def pairwise(points: np.ndarray) -> np.ndarray:
    """[T, J, J] distances between all joints per frame."""
    return np.linalg.norm(points[:, :, None] - points[:, None], axis=-1)


# --- trajectory and residual ----------------------------------------------------------------------


def test_a_hand_worked_root_splits_into_floor_point_heading_height_and_pitch():
    # One joint at (3, 1.5, 4), turned 0.7 rad about up (+Y) after pitching 0.2 rad about X.
    rotation = from_scipy(Rotation.from_euler("YX", [0.7, 0.2]))
    clip = Clip(["Hips"], [-1], np.zeros((1, 3)), rotation[None, None],
                np.array([[[3.0, 1.5, 4.0]]]), forward=[0.0, 0.0, 1.0])
    traj, res = root.decompose(clip)
    np.testing.assert_allclose(traj.position, [[3.0, 0.0, 4.0]], atol=1e-15)
    np.testing.assert_allclose(traj.heading, [0.7], atol=1e-15)
    np.testing.assert_allclose(res.position, [[0.0, 1.5, 0.0]], atol=1e-15)
    assert sign_free_error(res.rotation, from_scipy(Rotation.from_euler("X", 0.2))) < 1e-15


def test_trajectory_follows_the_root_through_several_turns(cmu_clips):
    clip: Clip = cmu_clips("131_03")
    traj = root.trajectory(clip)
    world = clip.fk()
    hips = world[1][:, clip.root]
    np.testing.assert_allclose(traj.position, hips * [1.0, 0.0, 1.0], rtol=0, atol=1e-12 * clip.height)
    # Heading 0 is +Z, the floor axis a Y-up clip's up gives (root.floor_axes), whatever the facing.
    facing = to_scipy(world[0][:, clip.root]).apply(clip.forward)
    assert np.abs(wrapped(traj.heading - yaw_between(np.array([0.0, 0.0, 1.0]), facing))).max() < 1e-12
    # Unwrapped: no jump between frames, and this take turns through more than a full circle.
    assert np.abs(np.diff(traj.heading)).max() < 0.2
    assert np.ptp(traj.heading) > 2 * np.pi


@pytest.mark.parametrize("name", sorted(CMU))
@pytest.mark.parametrize("smooth", [0.0, 0.25])
def test_trajectory_and_residual_recompose_to_the_original_root(name, smooth, cmu_clips):
    clip: Clip = cmu_clips(name)
    traj, res = root.decompose(clip, smooth)
    back = root.recompose(clip, traj, res)
    assert sign_free_error(back.rotations, clip.rotations) < 1e-9
    np.testing.assert_allclose(back.positions, clip.positions, rtol=0, atol=1e-9 * clip.height)
    np.testing.assert_allclose(traj.position[:, 1], 0.0, atol=0)


def test_unsmoothed_residual_holds_height_and_hip_rotation_but_no_sway(cmu_clips):
    clip: Clip = cmu_clips("09_12")
    _, res = root.decompose(clip)
    hips = clip.fk()[1][:, clip.root]
    np.testing.assert_allclose(res.position[:, 1], hips[:, 1], rtol=0, atol=1e-12 * clip.height)
    np.testing.assert_allclose(res.position[:, [0, 2]], 0.0, atol=1e-12 * clip.height)
    # The heading is all in the trajectory: the residual rotation faces heading 0 (+Z).
    facing = to_scipy(res.rotation).apply(clip.forward)
    np.testing.assert_allclose(yaw_between(np.array([0.0, 0.0, 1.0]), facing), 0.0, atol=1e-12)


def test_a_smoothed_trajectory_leaves_the_sway_in_the_residual(cmu_clips):
    clip: Clip = cmu_clips("02_01")[1:]
    _, res = root.decompose(clip, smooth=0.5)
    sway_m = np.abs(res.position[:, [0, 2]]).max(axis=0) * clip.meters_per_unit
    # A walk sways the hips side to side by centimetres, not metres.
    assert 0.005 < sway_m[0] < 0.2


def test_lowpass_keeps_constant_velocity_and_matches_scipy_inside():
    line = np.outer(np.arange(40.0), [1.5, 0.0, -0.5]) + np.array([2.0, 0.0, 7.0])
    np.testing.assert_allclose(root.lowpass(line, 3.0), line, rtol=0, atol=1e-12)
    x = np.random.default_rng(5).normal(size=(200, 2))
    sigma = 4.0
    radius = int(4 * sigma + 0.5)
    want = gaussian_filter1d(x, sigma, axis=0)
    inside = slice(radius, -radius)
    np.testing.assert_allclose(root.lowpass(x, sigma)[inside], want[inside], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(root.lowpass(x, 0.0), x)


# --- re-anchoring and in place ----------------------------------------------------------------


@pytest.mark.parametrize("smooth", [0.0, 0.3])
def test_reanchor_moves_the_clip_rigidly_onto_the_requested_trajectory_point(smooth, cmu_clips):
    clip: Clip = cmu_clips("131_03")[::4]
    frame, target, heading = 120, np.array([100.0, 55.0, -40.0]), 2.0
    moved = root.reanchor(clip, frame, target, heading, smooth=smooth)
    before, after = clip.fk()[1], moved.fk()[1]
    np.testing.assert_allclose(pairwise(after), pairwise(before), rtol=0, atol=1e-9 * clip.height)
    np.testing.assert_allclose(after[..., 1], before[..., 1], rtol=0, atol=1e-9 * clip.height)
    traj = root.trajectory(moved, smooth)
    # The target's up component is ignored: the trajectory stays on the floor.
    np.testing.assert_allclose(traj.position[frame], [100.0, 0.0, -40.0], rtol=0, atol=1e-9 * clip.height)
    assert abs(wrapped(traj.heading[frame] - heading)) < 1e-12


def test_reanchor_continues_one_take_where_another_leaves_off(cmu_clips):
    src: Clip = cmu_clips("09_12")
    dst: Clip = cmu_clips("02_01")
    i_s, i_d = 1500, 40
    at = root.trajectory(src)
    moved = root.reanchor(dst, i_d, at.position[i_s], at.heading[i_s])
    got = root.trajectory(moved)
    np.testing.assert_allclose(got.position[i_d], at.position[i_s], rtol=0, atol=1e-9 * src.height)
    assert abs(wrapped(got.heading[i_d] - at.heading[i_s])) < 1e-12
    # Heights and the take's own path shape are dst's.
    np.testing.assert_allclose(moved.fk()[1][:, :, 1], dst.fk()[1][:, :, 1], rtol=0, atol=1e-9 * dst.height)
    np.testing.assert_allclose(np.diff(got.heading), np.diff(root.trajectory(dst).heading), atol=1e-12)


def test_reanchor_refuses_a_frame_outside_the_clip(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    with pytest.raises(IndexError):
        root.reanchor(clip, clip.n_frames, np.zeros(3), 0.0)
    np.testing.assert_allclose(root.trajectory(root.reanchor(clip, -1, np.zeros(3), 0.0)).position[-1], 0.0,
                               atol=1e-9 * clip.height)


def test_in_place_keeps_the_root_over_the_origin_facing_forward(cmu_clips):
    clip: Clip = cmu_clips("131_03")[::4]
    still = root.in_place(clip)
    traj = root.trajectory(still)
    np.testing.assert_allclose(traj.position, 0.0, atol=1e-9 * clip.height)
    np.testing.assert_allclose(traj.heading, 0.0, atol=1e-12)
    hips = still.fk()[1][:, still.root]
    np.testing.assert_allclose(hips[:, 1], clip.fk()[1][:, clip.root, 1], rtol=0, atol=1e-9 * clip.height)
    # The body relative to the root is untouched: the character-frame pose is the same.
    np.testing.assert_allclose(root.character_positions(still), root.character_positions(clip),
                               rtol=0, atol=1e-9 * clip.height)


def test_in_place_can_keep_the_heading(cmu_clips):
    clip: Clip = cmu_clips("09_12")[::4]
    still = root.in_place(clip, keep_heading=True)
    traj = root.trajectory(still)
    np.testing.assert_allclose(traj.position, 0.0, atol=1e-9 * clip.height)
    np.testing.assert_allclose(traj.heading, root.trajectory(clip).heading, atol=1e-12)


# --- a root below a dummy joint -------------------------------------------------------------------


def under_a_dummy(clip: Clip) -> Clip:
    """The same motion with a static, turned and shifted top joint above the hips (built with scipy)."""
    dummy_rot = Rotation.from_euler("YX", [0.4, 0.1])
    dummy_pos = np.array([5.0, 2.0, -3.0])
    hips_rot = dummy_rot.inv() * to_scipy(clip.rotations[:, 0])
    hips_pos = dummy_rot.inv().apply(clip.positions[:, 0] - dummy_pos)
    T = clip.n_frames
    rotations = np.concatenate([np.broadcast_to(from_scipy(dummy_rot), (T, 1, 4)), clip.rotations], axis=1)
    rotations[:, 1] = from_scipy(hips_rot)
    positions = np.concatenate([np.broadcast_to(dummy_pos, (T, 1, 3)), clip.positions], axis=1)
    positions[:, 1] = hips_pos
    parents = np.concatenate([[-1], np.where(clip.parents < 0, 0, clip.parents + 1)])
    offsets = np.concatenate([dummy_pos[None], clip.offsets])
    return Clip(["Dummy", *clip.names], parents, offsets, rotations, positions, clip.fps, root=1,
                forward=clip.forward)


def test_a_root_below_a_dummy_joint_has_the_same_trajectory(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    deep = under_a_dummy(clip)
    np.testing.assert_allclose(deep.fk()[1][:, 1:], clip.fk()[1], rtol=0, atol=1e-9 * clip.height)
    want, got = root.trajectory(clip), root.trajectory(deep)
    np.testing.assert_allclose(got.position, want.position, rtol=0, atol=1e-9 * clip.height)
    np.testing.assert_allclose(got.heading, want.heading, rtol=0, atol=1e-12)
    traj, res = root.decompose(deep)
    back = root.recompose(deep, traj, res)
    assert sign_free_error(back.rotations, deep.rotations) < 1e-9
    np.testing.assert_allclose(back.positions, deep.positions, rtol=0, atol=1e-9 * clip.height)
    # In place and reanchor move the hips under the still dummy; the body moves rigidly.
    still = root.in_place(deep)
    np.testing.assert_array_equal(still.rotations[:, 0], deep.rotations[:, 0])
    np.testing.assert_allclose(root.trajectory(still).position, 0.0, atol=1e-9 * clip.height)
    target = np.array([40.0, 0.0, 12.0])
    moved = root.reanchor(deep, 10, target, -1.0)
    tol = 1e-9 * clip.height
    body_moved, body_still = moved.fk()[1][:, 1:], deep.fk()[1][:, 1:]
    np.testing.assert_allclose(pairwise(body_moved), pairwise(body_still), rtol=0, atol=tol)
    np.testing.assert_allclose(root.trajectory(moved).position[10], target, rtol=0, atol=tol)
    np.testing.assert_array_equal(moved.rotations[:, 0], deep.rotations[:, 0])
    np.testing.assert_array_equal(moved.positions[:, 0], deep.positions[:, 0])


def test_heading_reads_the_same_from_the_root_chain_or_full_fk(cmu_clips):
    clip: Clip = cmu_clips("09_12")
    np.testing.assert_array_equal(root.heading(clip), root.heading(clip, clip.fk()[0]))
