"""Root motion: heading on the floor and the character frame.

Heading is the yaw, about `up`, that turns the rest pose's facing (`clip.forward`) onto the root's
current facing projected on the floor. Angles are radians, counter-clockwise seen from above.
"""

from __future__ import annotations

import numpy as np

from . import quat
from .clip import Clip


def floor_axes(up: np.ndarray, forward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(forward, side) unit vectors spanning the floor; side = up x forward (the performer's left
    for a right-handed, Y-up, +Z-facing skeleton such as CMU's)."""
    up = np.asarray(up, dtype=np.float64)
    fwd = np.asarray(forward, dtype=np.float64)
    fwd = fwd - up * (fwd @ up)
    fwd = fwd / np.linalg.norm(fwd)
    return fwd, np.cross(up, fwd)


def heading(clip: Clip, world_rot: np.ndarray | None = None) -> np.ndarray:
    """[T] root heading in radians (0 = facing the rest pose's forward), not unwrapped."""
    if world_rot is None:
        world_rot, _ = clip.fk()
    facing = quat.mul_vec(world_rot[:, clip.root], clip.forward)
    fwd, side = floor_axes(clip.up, clip.forward)
    return np.arctan2(facing @ side, facing @ fwd)


def yaw_quat(angle: np.ndarray, up: np.ndarray) -> np.ndarray:
    """[..., 4] rotations by `angle` radians about the unit `up` axis."""
    angle = np.asarray(angle, dtype=np.float64)
    half = angle / 2
    q = np.empty((*angle.shape, 4))
    q[..., 0] = np.cos(half)
    q[..., 1:] = np.sin(half)[..., None] * np.asarray(up, dtype=np.float64)
    return q


def character_positions(clip: Clip) -> np.ndarray:
    """[T, J, 3] world joint positions in the character frame: the root's floor projection at the
    origin, its heading turned to the rest pose's forward. File units."""
    world_rot, world_pos = clip.fk()
    up = clip.up
    ground = world_pos[:, clip.root] - np.outer(world_pos[:, clip.root] @ up, up)
    unturn = quat.inv(yaw_quat(heading(clip, world_rot), up))
    return quat.mul_vec(unturn[:, None], world_pos - ground[:, None])
