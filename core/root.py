"""Root motion: heading on the floor, the character frame, and trajectory + residual.

Heading is the angle, about `up`, of the performer's facing on the floor: the root's world rotation
applied to `clip.forward` (the facing in the root's own frame), projected on the floor, measured
from the floor axes that `up` alone gives (`floor_axes(up)`: +Z for a Y-up clip), so a root whose
rest frame is not upright still gives a steady heading. Angles are radians, counter-clockwise
seen from above.

Root motion splits into a **trajectory** and a **residual**, per frame t:

- trajectory: a planar position P_t on the floor plane through the origin (up component 0) and a
  heading h_t (radians, unwrapped over time). Unsmoothed, P_t is the root's floor projection and
  h_t its heading; `smooth` (seconds) low-passes both.
- residual: the root's world transform (R_t, x_t) seen from the trajectory's frame
  Y_t = yaw_quat(h_t, up):  rotation = inv(Y_t) R_t,  position = inv(Y_t) (x_t - P_t).
  Its up component is the root's height; its floor components are the sway off the trajectory
  (zero unless smoothed); its rotation is the hip rotation relative to the heading.

Composing is the inverse, R_t = Y_t rotation, x_t = P_t + Y_t position, exact to rounding.
The root may sit below other joints (a static dummy ROOT above the hips): its world transform
comes from forward kinematics of its parent chain, and writing one back goes through the parent's
world transform, so the joints above the root are never changed (except by `reanchor`, which
moves the whole clip).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import quat, skeleton
from .clip import Clip


class Trajectory(NamedTuple):
    """Root trajectory on the floor: `position` [T, 3] (up component 0), `heading` [T] radians."""

    position: np.ndarray
    heading: np.ndarray


class Residual(NamedTuple):
    """Root motion relative to the trajectory frame: `position` [T, 3] (height along up, sway
    along the floor), `rotation` [T, 4] (the root's world rotation with the heading taken off)."""

    position: np.ndarray
    rotation: np.ndarray


# Heading 0 on the floor: the first of these with a floor component (+Z for Y-up files, as BVH
# performers face; -Y for Z-up, as Blender's characters face).
_HEADING_ZERO = (np.array([0.0, 0.0, 1.0]), np.array([0.0, -1.0, 0.0]), np.array([1.0, 0.0, 0.0]))


def floor_axes(up: npt.ArrayLike, forward: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(forward, side) unit vectors spanning the floor; side = up x forward (the performer's left
    for a right-handed, Y-up, +Z-facing skeleton such as CMU's). Without `forward`, heading 0:
    built from `up` alone, the same for every clip with that up."""
    up = np.asarray(up, dtype=np.float64)
    candidates = _HEADING_ZERO if forward is None else (np.asarray(forward, dtype=np.float64),)
    for axis in candidates:
        fwd = axis - up * (axis @ up)
        if np.linalg.norm(fwd) > 0.5 or forward is not None:
            break
    fwd = fwd / np.linalg.norm(fwd)
    return fwd, np.cross(up, fwd)


def heading(clip: Clip, world_rot: np.ndarray | None = None) -> np.ndarray:
    """[T] root heading in radians (0 = facing `floor_axes(up)[0]`), not unwrapped."""
    rot = root_world(clip)[0] if world_rot is None else world_rot[:, clip.root]
    return heading_of(rot, clip.up, clip.forward)


def heading_of(rot: np.ndarray, up: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """[...] heading of world rotations [..., 4] of a skeleton facing `forward` at rest: the angle
    on the floor of R forward from heading 0 (the array form of `heading`)."""
    facing = quat.mul_vec(rot, forward)
    fwd, side = floor_axes(up)
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
    origin, its heading turned to heading 0 (`floor_axes(up)[0]`). File units."""
    world_rot, world_pos = clip.fk()
    up = clip.up
    ground = world_pos[:, clip.root] - np.outer(world_pos[:, clip.root] @ up, up)
    unturn = quat.inv(yaw_quat(heading(clip, world_rot), up))
    return quat.mul_vec(unturn[:, None], world_pos - ground[:, None])


# -- the root's world transform ------------------------------------------------------------------


def _parent_world(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray,
                  root: int) -> tuple[np.ndarray, np.ndarray] | None:
    """World (rotation [T, 4], position [T, 3]) of the root's parent, None for a top-level root."""
    above = skeleton.chain(parents, root)[:-1]
    if not above:
        return None
    # FK along the chain alone: each joint's world transform depends only on its ancestors.
    grot, gpos = quat.fk(rotations[:, above], positions[:, above], np.arange(len(above)) - 1)
    return grot[:, -1], gpos[:, -1]


def root_world(clip: Clip) -> tuple[np.ndarray, np.ndarray]:
    """World (rotation [T, 4], position [T, 3]) of the motion root (`clip.root`), file units."""
    return root_world_of(clip.rotations, clip.positions, clip.parents, clip.root)


def root_world_of(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray,
                  root: int) -> tuple[np.ndarray, np.ndarray]:
    """`root_world` of local rotations [T, J, 4] and translations [T, J, 3] (any frames of a clip)."""
    parent = _parent_world(rotations, positions, parents, root)
    if parent is None:
        return rotations[:, root].copy(), positions[:, root].copy()
    prot, ppos = parent
    return quat.mul(prot, rotations[:, root]), ppos + quat.mul_vec(prot, positions[:, root])


def with_root_world(clip: Clip, rotation: npt.ArrayLike, position: npt.ArrayLike) -> Clip:
    """A copy whose motion root has world rotation [T, 4] and position [T, 3]; every other joint's
    local motion is kept (so the body follows the root)."""
    rot, pos = with_root_world_of(clip.rotations, clip.positions, clip.parents, clip.root,
                                  rotation, position)
    return clip.replace(rotations=rot, positions=pos)


def with_root_world_of(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, root: int,
                       rotation: npt.ArrayLike, position: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """`with_root_world` of local arrays: copies of `rotations` [T, J, 4] and `positions` [T, J, 3]
    whose root has world rotation [T, 4] and position [T, 3]."""
    rot, pos = rotations.copy(), positions.copy()
    n = rot.shape[0]
    rotation = np.broadcast_to(np.asarray(rotation, dtype=np.float64), (n, 4))
    position = np.broadcast_to(np.asarray(position, dtype=np.float64), (n, 3))
    parent = _parent_world(rotations, positions, parents, root)
    if parent is None:
        rot[:, root], pos[:, root] = rotation, position
    else:
        prot, ppos = parent
        rot[:, root] = quat.inv_mul(prot, rotation)
        pos[:, root] = quat.mul_vec(quat.inv(prot), position - ppos)
    return rot, pos


# -- trajectory and residual ---------------------------------------------------------------------


def lowpass(x: npt.ArrayLike, sigma: float) -> np.ndarray:
    """Gaussian low-pass over the first axis of `x` [T, ...], sigma in frames (0: a copy).

    The kernel is cut at 4 sigma (scipy's `gaussian_filter1d` default); the ends are padded by
    point reflection (x[-k] = 2 x[0] - x[k]), so motion at constant velocity passes unchanged,
    also at the ends, instead of bending toward a held pose.
    """
    x = np.array(x, dtype=np.float64)
    radius = min(int(4.0 * sigma + 0.5), x.shape[0] - 1) if sigma > 0 else 0
    if radius <= 0:
        return x
    k = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (k / sigma) ** 2)
    kernel /= kernel.sum()
    head = 2.0 * x[:1] - x[radius:0:-1]
    tail = 2.0 * x[-1:] - x[-2:-radius - 2:-1]
    padded = np.concatenate([head, x, tail])
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1, axis=0)
    return np.asarray(windows @ kernel)


def trajectory(clip: Clip, smooth: float = 0.0) -> Trajectory:
    """The root's trajectory: floor projection [T, 3] (up component 0) and heading [T] (radians,
    unwrapped), both low-passed (`lowpass`) by a Gaussian of sigma `smooth` seconds when > 0."""
    rot, pos = root_world(clip)
    return trajectory_of(rot, pos, clip.up, clip.forward, smooth * clip.fps)


def trajectory_of(rot: np.ndarray, pos: np.ndarray, up: np.ndarray, forward: np.ndarray,
                  sigma: float = 0.0) -> Trajectory:
    """`trajectory` of the root's world rotations [T, 4] and positions [T, 3] (`root_world_of`);
    `sigma` in frames."""
    planar = pos - np.outer(pos @ up, up)
    angle = np.unwrap(heading_of(rot, up, forward))
    if sigma > 0 and len(angle) > 1:
        planar = lowpass(planar, sigma)
        planar -= np.outer(planar @ up, up)  # keep the up component exactly 0
        angle = lowpass(angle, sigma)
    return Trajectory(planar, angle)


def residual(clip: Clip, traj: Trajectory) -> Residual:
    """The root's world transform seen from the trajectory frame (see the module docstring)."""
    return residual_of(*root_world(clip), traj, clip.up)


def residual_of(rot: np.ndarray, pos: np.ndarray, traj: Trajectory, up: np.ndarray) -> Residual:
    """`residual` of the root's world rotations [T, 4] and positions [T, 3]."""
    turn = yaw_quat(traj.heading, up)
    return Residual(quat.mul_vec(quat.inv(turn), pos - traj.position), quat.inv_mul(turn, rot))


def decompose(clip: Clip, smooth: float = 0.0) -> tuple[Trajectory, Residual]:
    """(trajectory, residual) of the clip's root motion; `recompose` inverts it."""
    rot, pos = root_world(clip)
    traj = trajectory_of(rot, pos, clip.up, clip.forward, smooth * clip.fps)
    return traj, residual_of(rot, pos, traj, clip.up)


def compose(traj: Trajectory, res: Residual, up: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """World root (rotation [T, 4], position [T, 3]) from a trajectory and a residual."""
    turn = yaw_quat(traj.heading, np.asarray(up, dtype=np.float64))
    return quat.mul(turn, res.rotation), np.asarray(traj.position) + quat.mul_vec(turn, res.position)


def recompose(clip: Clip, traj: Trajectory, res: Residual) -> Clip:
    """A copy of `clip` whose root motion is the trajectory with the residual on top."""
    return with_root_world(clip, *compose(traj, res, clip.up))


def reanchor(clip: Clip, frame: int, position: npt.ArrayLike, heading: float,
             smooth: float = 0.0) -> Clip:
    """The clip moved rigidly, turned about the vertical axis and slid along the floor, so its
    trajectory at `frame` is at the planar `position` [3] (its up component is ignored) facing
    `heading` radians. Heights are kept.

    The move goes on the motion root's world transform (everything below it follows) and on any
    other top-level joint the take moves; joints above the root that the take keeps still (a
    static dummy ROOT above the hips) stay where they are. `smooth` picks the trajectory to
    anchor, as in `trajectory`; smoothing commutes with the move, so the anchored frame lands
    exactly either way.
    """
    n = clip.n_frames
    if not -n <= frame < n:
        raise IndexError(f"frame {frame} is outside the clip's {n} frames")
    up = clip.up
    frame %= n
    # Unsmoothed, the trajectory up to `frame` is all it takes (heading unwraps from frame 0 on).
    stop = n if smooth > 0 else frame + 1
    rot, pos = root_world_of(clip.rotations[:stop], clip.positions[:stop], clip.parents, clip.root)
    traj = trajectory_of(rot, pos, up, clip.forward, smooth * clip.fps)
    target = np.asarray(position, dtype=np.float64).reshape(3)
    target = target - up * (target @ up)
    turn = yaw_quat(float(heading) - traj.heading[frame], up)
    rot, pos = root_world(clip) if stop < n else (rot, pos)
    at = traj.position[frame]
    moved = with_root_world(clip, quat.mul(turn, rot), quat.mul_vec(turn, pos - at) + target)
    tops = moving_tops(clip)
    if tops:
        moved.rotations[:, tops] = quat.mul(turn, moved.rotations[:, tops])
        moved.positions[:, tops] = quat.mul_vec(turn, moved.positions[:, tops] - at) + target
    return moved


def moving_tops(clip: Clip) -> list[int]:
    """The top-level joints besides the motion root's chain that the take moves (a helper bone
    listed before the skeleton): moving the character on the floor moves them too; static ones
    (a dummy ROOT at the origin) stay."""
    above = skeleton.chain(clip.parents, clip.root)
    static = set(clip.body.static)
    return [int(j) for j in np.flatnonzero(clip.parents < 0) if j not in above and j not in static]


def slide_of(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, root: int,
             tops: list[int], offset: npt.ArrayLike) -> None:
    """Local arrays moved by `offset` [3] in the world, in place (`positions` [T, J, 3] is written):
    the motion root's world position (through its parent chain, which stays) and the joints
    `tops` (`moving_tops`); rotations [T, J, 4] are unchanged."""
    move = np.asarray(offset, dtype=np.float64)
    parent = _parent_world(rotations, positions, parents, root)
    # In the parent's frame: the move seen from it.
    positions[:, root] += move if parent is None else quat.mul_vec(quat.inv(parent[0]), move)
    if tops:
        positions[:, tops] += move


def in_place(clip: Clip, keep_heading: bool = False, smooth: float = 0.0) -> Clip:
    """The clip with its trajectory stripped: the root stays over the origin (plus any sway of a
    smoothed trajectory) at its own height, facing the rest pose's forward; with `keep_heading`
    it still turns as the clip does. The root-motion output is the clip itself."""
    traj, res = decompose(clip, smooth)
    heading_kept = traj.heading if keep_heading else np.zeros_like(traj.heading)
    return recompose(clip, Trajectory(np.zeros_like(traj.position), heading_kept), res)
