"""Blender armature conventions as plain maths (no bpy), for the action <-> Clip bridge.

Blender's BVH importer builds bones in BVH space, keys pose values relative to each bone's rest,
then rotates the armature by the axis conversion C (`transform_apply`). With M a bone's rest
rotation (`bone.matrix_local`, after the conversion), B its pose rotation and L the BVH local
rotation of the joint:

    L = C^T M B M^T C        B = M^T C L C^T M

and with h the rest head relative to the parent (BVH units x global_scale, before C) and p the
pose-bone location, the BVH translation of a joint with position channels is
`t = (h + C^T M p) / scale`. Blender Euler modes name axes in the order they apply:
'XYZ' is Rz Ry Rx, i.e. the intrinsic order 'ZYX' of `quat.from_euler` with angles reversed.
"""

from __future__ import annotations

import numpy as np

from . import axes, quat

EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def axis_conversion(from_forward: str = "-Z", from_up: str = "Y", to_forward: str = "Y",
                    to_up: str = "Z") -> np.ndarray:
    """3x3 rotation C of Blender's BVH importer (`bpy_extras.io_utils.axis_conversion`); the
    defaults are the importer's: BVH's Y-up, -Z-forward onto Blender's Z-up, Y-forward."""
    return axes.matrix(from_forward, from_up, to_forward, to_up)


def pose_to_local(rest: np.ndarray, pose: np.ndarray, conversion: np.ndarray) -> np.ndarray:
    """BVH local rotations L = C^T M B M^T C from rest rotations M [J, 4] and pose rotations
    B [T, J, 4]; `conversion` is C as a 3x3 matrix."""
    c = quat.from_matrix(conversion)
    return quat.mul(quat.inv_mul(c, quat.mul(rest, quat.mul_inv(pose, rest))), c)


def local_to_pose(rest: np.ndarray, local: np.ndarray, conversion: np.ndarray) -> np.ndarray:
    """Pose rotations B = M^T C L C^T M, the inverse of `pose_to_local`."""
    c = quat.from_matrix(conversion)
    return quat.mul(quat.inv_mul(rest, quat.mul(c, quat.mul_inv(local, c))), rest)


def pose_location_to_translation(rest: np.ndarray, head: np.ndarray, location: np.ndarray,
                                 conversion: np.ndarray, scale: float) -> np.ndarray:
    """BVH translations [T, J, 3] = (h + C^T M p) / scale from rest rotations M [J, 4], rest heads
    relative to the parent h [J, 3] (Blender space, before C), pose locations p [T, J, 3]."""
    moved = quat.mul_vec(rest, location) @ conversion
    return (head + moved) / scale


def translation_to_pose_location(rest: np.ndarray, head: np.ndarray, translation: np.ndarray,
                                 conversion: np.ndarray, scale: float) -> np.ndarray:
    """Pose locations p = M^T C (scale t - h), the inverse of `pose_location_to_translation`."""
    return quat.mul_vec(quat.inv(rest), (translation * scale - head) @ conversion.T)


def from_blender_euler(angles: np.ndarray, mode: str) -> np.ndarray:
    """Quaternions from Blender Euler angles [..., 3] (x, y, z radians) in rotation mode `mode`."""
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler mode: {mode!r}")
    order = mode[::-1]
    ordered = np.stack([angles[..., "XYZ".index(a)] for a in order], axis=-1)
    return quat.from_euler(ordered, order)


def to_blender_euler(q: np.ndarray, mode: str, axis: int = 0) -> np.ndarray:
    """Blender Euler angles [..., 3] (x, y, z) for rotation mode `mode`, unwrapped along `axis`
    (time) so that keys interpolate without 360-degree jumps."""
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler mode: {mode!r}")
    order = mode[::-1]
    ordered = quat.to_euler(q, order)
    xyz = np.stack([ordered[..., order.index(a)] for a in "XYZ"], axis=-1)
    if xyz.shape[axis] > 1:
        xyz = np.unwrap(xyz, axis=axis)
    return xyz


def from_blender_axis_angle(values: np.ndarray) -> np.ndarray:
    """Quaternions from Blender axis-angle values [..., 4] (angle, x, y, z)."""
    axis = values[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    unit = np.where(norm > 0, axis / np.where(norm > 0, norm, 1.0), np.array([0.0, 1.0, 0.0]))
    return quat.from_scaled_angle_axis(unit * values[..., :1])
