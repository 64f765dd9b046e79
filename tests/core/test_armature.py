"""Blender armature conventions in core.armature, against hand-computed cases and scipy."""

from __future__ import annotations

import numpy as np
import pytest
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
