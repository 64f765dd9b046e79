"""Blender armature conventions in core.armature, against hand-computed cases and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import polar
from scipy.spatial.transform import Rotation

from core import armature


@pytest.mark.parametrize("mode", armature.EULER_MODES)
def test_blender_euler_turns_through_gimbal_lock_without_a_jump(mode):
    # A turn about the middle axis from 0 to 170 degrees: the principal solution flips at 90
    # (first and last angles jump by pi); the continuous one is just that angle, exactly.
    middle = mode[1]
    angle = np.radians(np.linspace(0.0, 170.0, 181))
    q = Rotation.from_euler(middle.lower(), angle[:, None]).as_quat(scalar_first=True)
    want = np.zeros((len(angle), 3))
    want[:, "XYZ".index(middle)] = angle
    np.testing.assert_allclose(armature.to_blender_euler(q, mode), want, atol=1e-12)


@pytest.mark.parametrize("mode", armature.EULER_MODES)
def test_blender_euler_starts_nearest_zero_and_rebuilds_each_rotation(mode):
    # A tumbling motion that passes near lock many times, read as Blender reads the angles
    # (mode 'XYZ' is extrinsic x, then y, then z: scipy's 'xyz').
    rng = np.random.default_rng(7)
    steps = Rotation.from_rotvec(rng.normal(scale=0.05, size=(2000, 3)))
    motion = Rotation.from_quat([0.0, np.sqrt(0.5), 0.0, np.sqrt(0.5)])  # first frame at lock's far side
    frames = [motion]
    for step in steps:
        frames.append(step * frames[-1])
    q = Rotation.concatenate(frames).as_quat(scalar_first=True)
    xyz = armature.to_blender_euler(q, mode)
    order = ["XYZ".index(a) for a in mode]
    back = Rotation.from_euler(mode.lower(), xyz[:, order]).as_quat(scalar_first=True)
    np.testing.assert_allclose(np.abs(np.einsum("ti,ti->t", back, q)), 1.0, atol=1e-12)
    # No key jumps by more than the motion allows: the largest step stays near the largest turn
    # per frame, except where the path grazes lock and the outer angles must spin fast.
    assert np.abs(np.diff(xyz, axis=0)).max() < np.pi / 2


@pytest.mark.parametrize("mode", armature.EULER_MODES)
def test_blender_euler_first_key_is_the_solution_nearest_zero(mode):
    # 170 degrees about the middle axis: principal solution (pi, 10 deg, pi) up to signs; the one
    # nearer zero, which Blender's importer keys (it starts from a zero Euler), is (0, 170 deg, 0).
    middle = mode[1]
    q = Rotation.from_euler(middle.lower(), [[np.radians(170.0)]]).as_quat(scalar_first=True)
    want = np.zeros((1, 3))
    want[0, "XYZ".index(middle)] = np.radians(170.0)
    np.testing.assert_allclose(armature.to_blender_euler(q, mode), want, atol=1e-12)


def test_pose_conversions_take_any_leading_shape_and_no_joints():
    rest = Rotation.random(4, random_state=5).as_quat(scalar_first=True)
    conversion = armature.axis_conversion()
    local = Rotation.random(2 * 3 * 4, random_state=6).as_quat(scalar_first=True).reshape(2, 3, 4, 4)
    pose = armature.local_to_pose(rest, local, conversion)
    assert pose.shape == local.shape
    # B = M^T C L C^T M per joint, with scipy's products as the oracle.
    r = Rotation.from_matrix(conversion.T) * Rotation.from_quat(rest, scalar_first=True)
    for j in range(4):
        want = (r[j].inv() * Rotation.from_quat(local[..., j, :].reshape(-1, 4), scalar_first=True) * r[j])
        got = pose[..., j, :].reshape(-1, 4)
        np.testing.assert_allclose(np.abs(np.einsum("ti,ti->t", got, want.as_quat(scalar_first=True))), 1.0,
                                   atol=1e-12)
    np.testing.assert_allclose(armature.pose_to_local(rest, pose, conversion), local, atol=1e-12)
    assert armature.local_to_pose(np.zeros((0, 4)), np.zeros((5, 0, 4)), conversion).shape == (5, 0, 4)


def _blender_pose(rest_rot, heads, parents, basis_rot, basis_loc):
    """Armature-space pose matrices [T, J, 4, 4] as Blender composes them for bones that inherit
    rotation and location: P = P_parent R_parent^-1 R B (R rest, B basis), with scipy."""
    T, J = basis_rot.shape[:2]
    rest = np.tile(np.eye(4), (J, 1, 1))
    rest[:, :3, :3] = Rotation.from_quat(rest_rot, scalar_first=True).as_matrix()
    rest[:, :3, 3] = heads
    basis = np.tile(np.eye(4), (T, J, 1, 1))
    basis[..., :3, :3] = Rotation.from_quat(basis_rot.reshape(-1, 4), scalar_first=True).as_matrix().reshape(
        T, J, 3, 3)
    basis[..., :3, 3] = basis_loc
    pose = np.empty((T, J, 4, 4))
    for j, p in enumerate(parents):
        local = rest[j] if p < 0 else np.linalg.inv(rest[p]) @ rest[j]
        above = np.eye(4) if p < 0 else pose[:, p]
        pose[:, j] = above @ local @ basis[:, j]
    return rest, pose


def test_pose_matrices_give_the_local_rotations_and_translations_the_keys_give():
    rng = np.random.default_rng(3)
    parents = [-1, 0, 1, 1, 3]
    J, T = len(parents), 6
    rest_rot = Rotation.random(J, random_state=4).as_quat(scalar_first=True)
    heads = rng.normal(size=(J, 3))
    basis_rot = Rotation.random(T * J, random_state=5).as_quat(scalar_first=True).reshape(T, J, 4)
    basis_loc = rng.normal(size=(T, J, 3))
    rest, pose = _blender_pose(rest_rot, heads, parents, basis_rot, basis_loc)
    conversion = armature.axis_conversion("-Z", "Y")
    scale = 0.5
    local, shift = armature.pose_matrices_to_local(pose, rest, parents, conversion, scale)
    want = armature.pose_to_local(rest_rot, basis_rot, conversion)
    np.testing.assert_allclose(np.abs(np.einsum("tji,tji->tj", local, want)), 1.0, atol=1e-12)
    rel = heads.copy()
    rel[1:] -= heads[parents[1:]]
    moved = armature.pose_location_to_translation(rest_rot, rel @ conversion, basis_loc, conversion, scale)
    np.testing.assert_allclose(shift, moved, atol=1e-12)


def test_pose_matrices_skip_bones_between_joints_and_drop_stretch():
    # Joint 2's bone hangs under a control bone (1) that is not read: its joint's parent is 0. FK of
    # what is read puts every joint where Blender puts its bone, turned as Blender turns it.
    parents_bones = [-1, 0, 1]
    T = 4
    rest_rot = Rotation.random(3, random_state=8).as_quat(scalar_first=True)
    heads = np.array([[0.0, 0.0, 1.0], [0.2, 0.1, 0.9], [0.3, -0.1, 0.4]])
    basis_rot = Rotation.random(T * 3, random_state=9).as_quat(scalar_first=True).reshape(T, 3, 4)
    basis_loc = np.random.default_rng(1).normal(size=(T, 3, 3)) * 0.1
    rest, pose = _blender_pose(rest_rot, heads, parents_bones, basis_rot, basis_loc)
    pose[:, 2, :3, 1] *= 1.5  # a stretched bone: its Y column scaled
    conversion = armature.axis_conversion("-Z", "Y")
    read = [0, 2]
    local, shift = armature.pose_matrices_to_local(pose[:, read], rest[read], [-1, 0], conversion, 1.0)
    turn = Rotation.from_quat(local.reshape(-1, 4), scalar_first=True).as_matrix().reshape(T, 2, 3, 3)
    world_0 = turn[:, 0]
    world_2 = world_0 @ turn[:, 1]
    pos_2 = shift[:, 0] + np.einsum("tij,tj->ti", world_0, shift[:, 1])
    c = conversion
    for k, j in enumerate(read):
        p = pose[:, j, :3, :3] / np.linalg.norm(pose[:, j, :3, :3], axis=-2, keepdims=True)
        want = c.T @ p @ rest[j, :3, :3].T @ c
        np.testing.assert_allclose((world_0, world_2)[k], want, atol=1e-12)
    np.testing.assert_allclose(pos_2, pose[:, 2, :3, 3] @ c, atol=1e-12)


def test_nearest_rotation_is_the_polar_factor():
    # scipy's polar decomposition is the oracle: float32 drift (IK), stretch, uniform scale, shear.
    rng = np.random.default_rng(11)
    turns = Rotation.random(200, random_state=12).as_matrix()
    cases = np.concatenate([
        turns + rng.normal(scale=4e-5, size=turns.shape),
        turns @ np.diag([0.7, 1.6, 0.7]) @ Rotation.random(200, random_state=13).as_matrix(),
        25.0 * turns,
        turns + rng.normal(scale=0.3, size=turns.shape) * (np.linalg.det(turns)[:, None, None] > 0),
    ]).reshape(8, 100, 3, 3)
    got = armature.nearest_rotation(cases)
    assert got.shape == cases.shape
    for m, r in zip(cases.reshape(-1, 3, 3), got.reshape(-1, 3, 3), strict=True):
        want, _ = polar(m)
        if np.linalg.det(want) > 0.0:
            np.testing.assert_allclose(r, want, atol=1e-12)
        np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
        assert np.linalg.det(r) > 0.0


def test_nearest_rotation_of_a_mirror_or_a_flat_matrix_is_a_proper_rotation():
    m = np.array([np.diag([1.0, 1.0, -1.0]), np.diag([2.0, 3.0, 0.0]), np.eye(3)])
    r = armature.nearest_rotation(m)
    np.testing.assert_allclose(r[0], np.eye(3), atol=1e-12)  # u v^T with the last singular vector flipped
    np.testing.assert_allclose(r[1], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(r[2], np.eye(3), atol=1e-12)
