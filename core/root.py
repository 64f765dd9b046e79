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

import dataclasses
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
    # (np.cross's own checks cost more than its six products on one pair)
    return fwd, np.array([up[1] * fwd[2] - up[2] * fwd[1], up[2] * fwd[0] - up[0] * fwd[2],
                          up[0] * fwd[1] - up[1] * fwd[0]])


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


def yaw_quat(angle: npt.ArrayLike, up: npt.ArrayLike) -> np.ndarray:
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
    set_root_world(rot, pos, parents, root, rotation, position)
    return rot, pos


def set_root_world(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, root: int,
                   rotation: npt.ArrayLike, position: npt.ArrayLike) -> None:
    """`with_root_world_of` in place: the root's local rotation and translation in `rotations`
    [T, J, 4] and `positions` [T, J, 3] written so that its world transform is `rotation` [T, 4]
    and `position` [T, 3] under the joints above it as they are (a bake's own arrays: no copy of
    every joint)."""
    n = rotations.shape[0]
    rotation = np.broadcast_to(np.asarray(rotation, dtype=np.float64), (n, 4))
    position = np.broadcast_to(np.asarray(position, dtype=np.float64), (n, 3))
    parent = _parent_world(rotations, positions, parents, root)
    if parent is None:
        rotations[:, root], positions[:, root] = rotation, position
    else:
        prot, ppos = parent
        rotations[:, root] = quat.inv_mul(prot, rotation)
        positions[:, root] = quat.mul_vec(quat.inv(prot), position - ppos)


# -- trajectory and residual ---------------------------------------------------------------------

# Re-anchoring aligns the takes' travel over this long before a switch: about one walking stride,
# over which the pelvis's swing (14-24 degrees a stride on Bandai takes) averages out.
STRIDE_SECONDS = 1.0
# A root slower than this (m/s) over a stride or a cycle does not travel: its facing says where it
# heads (transitions, best_target_time and loops read it so).
STILL_MPS = 0.2


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
    head = 2.0 * x[:1] - x[radius:0:-1]
    tail = 2.0 * x[-1:] - x[-2:-radius - 2:-1]
    return _convolve(np.concatenate([head, x, tail]), sigma, radius)


def _convolve(padded: np.ndarray, sigma: float, radius: int) -> np.ndarray:
    """The Gaussian of `sigma` frames, cut at `radius`, over `padded` [T + 2 radius, ...]: [T, ...]."""
    k = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (k / sigma) ** 2)
    kernel /= kernel.sum()
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


# -- a root joint for engines ------------------------------------------------------------------

ROOT_MODES = ("yaw", "none")
ROOT_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
# Without a gait to measure (a bow, a sidestep, jumps), the root's path is smoothed as a walk's.
DEFAULT_CYCLE_SECONDS = 1.0
# Human gait cycles (a step of each foot) last 0.5-2 s, sprint to slowest walk: a measure outside
# these is no gait (feet passing each other now and then between jumps).
_GAIT_SECONDS = (0.4, 2.5)
# The feet pass each other once their fore-aft gap has crossed from beyond minus this fraction of
# the standing height to beyond plus it: a shuffle's steps (30 cm) do, a standing sway does not.
_PASS_GAP = 0.05
# A top joint whose rotation and up-component stay within these of none is a floor root already
# (Bandai's joint_Root): radians, and a fraction of the height.
_STILL_ANGLE = 1e-9
_ON_FLOOR = 1e-9


def foot_lead(clip: Clip) -> np.ndarray:
    """[T] how far the left ankle leads the right along the performer's facing on the floor (file
    units; negative: the right leads). Its sign changes as the feet pass each other, twice a gait
    cycle. Zeros without legs."""
    feet = clip.body.feet
    if not feet:
        return np.zeros(clip.n_frames)
    up = clip.up
    facing = quat.mul_vec(root_world(clip)[0], clip.forward)
    facing -= np.outer(facing @ up, up)
    facing /= np.maximum(np.linalg.norm(facing, axis=-1, keepdims=True), 1e-300)
    left, right = (root_world_of(clip.rotations, clip.positions, clip.parents, feet[s][0])[1] for s in "LR")
    return np.einsum("ij,ij->i", left - right, facing)


def lead_passes(lead: np.ndarray, level: float) -> np.ndarray:
    """Frames where `lead` [T] has crossed from below -level to above +level, or back: the feet
    passing each other, with hysteresis against a standing performer's sway."""
    side = np.where(lead > level, 1, np.where(lead < -level, -1, 0))
    seen = np.flatnonzero(side)
    return seen[1:][side[seen][1:] != side[seen][:-1]]


def gait_cycle(clip: Clip) -> float | None:
    """Seconds of one gait cycle (a step of each foot): twice the median time between the feet
    passing each other (`foot_lead`, `lead_passes` by 5 % of the height each way) from the
    motion start on; a loop counts the pass across its seam. None without legs, with fewer than
    two passes (a bow, a sidestep), or outside 0.4-2.5 s (no steady gait: jumps)."""
    if not clip.body.feet or clip.n_frames < 3:
        return None
    start = min(clip.motion_start, clip.n_frames - 1)
    n = clip.loop_frames if clip.loop else clip.n_frames
    lead = foot_lead(clip)[start:n]
    level = _PASS_GAP * clip.height
    if clip.loop:
        # Around the seam: the passes of the middle lap of three, and the next lap's first.
        laps = lead_passes(np.tile(lead, 3), level) - len(lead)
        passes = laps[laps >= 0]
        passes = passes[:np.searchsorted(passes, len(lead)) + 1]
    else:
        passes = lead_passes(lead, level)
    if len(passes) < 2:
        return None
    cycle = float(2.0 * np.median(np.diff(passes)) / clip.fps)
    return cycle if _GAIT_SECONDS[0] <= cycle <= _GAIT_SECONDS[1] else None


def add_root(clip: Clip, *, name: str = "root", smooth: float | None = None, mode: str = "yaw") -> Clip:
    """The clip with a root joint on the floor that carries its travel, as game engines want it
    (root motion): every joint's world pose unchanged.

    The root is a new top joint `name` above every top joint of the clip, at the ground
    projection of the hips (the body map's pelvis; up component 0) smoothed by a Gaussian of
    sigma `smooth` seconds, so it does not sway with the steps. None: half a gait cycle
    (`gait_cycle`, else DEFAULT_CYCLE_SECONDS), a Gaussian whose +-sigma spans one cycle: the
    hips' side sway (a cycle's period) keeps under 1 % of itself, and the path stays near the
    hips through turns (sigma a whole cycle cuts corners twice as wide). The ends follow the
    take's trend over a cycle (not the last frame, wherever the sway has the hips). A loop is
    smoothed around its seam (its path continued by its cycle's own move and turn), so it stays
    a loop. `mode` "yaw" turns it about up by the character's heading (`heading`, unwrapped, then
    smoothed: it never flips), "none" keeps it unrotated. The old top joints' motion becomes
    relative to it. Frames before `motion_start` (a converter's T-pose) hold the first captured
    frame's root.

    A clip whose only top joint has no rotation and only floor translation, or none (Bandai's
    static joint_Root), gets the root motion there, under its own name, instead of a new joint.
    The result's motion root is the root joint, facing `floor_axes(up)[0]` in its own frame for
    "yaw" (its heading is the smoothed heading); its body map is the clip's, joints renumbered.
    ValueError for an unknown mode, a negative `smooth`, or a `name` another joint has.
    """
    if mode not in ROOT_MODES:
        raise ValueError(f"mode must be one of {', '.join(ROOT_MODES)}, not {mode!r}")
    if smooth is not None and not (smooth >= 0.0 and np.isfinite(smooth)):
        raise ValueError(f"smooth must be seconds >= 0, not {smooth}")
    if clip.n_frames == 0 or clip.n_joints == 0:
        raise ValueError("a clip without frames or joints has no motion to put on a root")
    up = clip.up
    b = clip.body
    hips = b.pelvis if b.pelvis is not None else clip.root
    tops = [int(j) for j in np.flatnonzero(clip.parents < 0)]
    reuse = len(tops) == 1 and tops[0] != hips and _floor_root(clip, tops[0])
    if not reuse and name in clip.names:
        raise ValueError(f"the clip has a joint named {name!r} already: name the root otherwise")
    seconds = smooth if smooth is not None else 0.5 * (gait_cycle(clip) or DEFAULT_CYCLE_SECONDS)
    position, angle = _root_path(clip, hips, seconds * clip.fps)
    turn = yaw_quat(angle if mode == "yaw" else np.zeros_like(angle), up)
    if reuse:
        top = tops[0]
        rot, pos = clip.rotations.copy(), clip.positions.copy()
        names, parents, offsets = list(clip.names), clip.parents.copy(), clip.offsets.copy()
        channels = list(clip.channels)
        end_parents, index = clip.end_parents.copy(), np.arange(clip.n_joints)
        below = [int(j) for j in np.flatnonzero(clip.parents == top)]
    else:
        top = 0
        T = clip.n_frames
        rot = np.concatenate([np.broadcast_to(quat.identity(), (T, 1, 4)), clip.rotations], axis=1)
        pos = np.concatenate([np.zeros((T, 1, 3)), clip.positions], axis=1)
        names = [name, *clip.names]
        parents = np.concatenate([[-1], np.where(clip.parents < 0, 0, clip.parents + 1)])
        offsets = np.concatenate([np.zeros((1, 3)), clip.offsets])
        channels = [(), *clip.channels]
        end_parents, index = clip.end_parents + 1, np.arange(clip.n_joints) + 1
        below = [j + 1 for j in tops]
    # The joints below the root keep their world transforms: W = R_top L, w = p_top + R_top l.
    old_rot, old_pos = rot[:, top:top + 1].copy(), pos[:, top:top + 1].copy()
    unturn = quat.inv(turn)[:, None]
    rot[:, below] = quat.mul(unturn, quat.mul(old_rot, rot[:, below]))
    pos[:, below] = quat.mul_vec(unturn, old_pos + quat.mul_vec(old_rot, pos[:, below]) - position[:, None])
    rot[:, top], pos[:, top] = turn, position
    channels[top] = ROOT_CHANNELS
    facing = floor_axes(up)[0] if mode == "yaw" else _mean_facing(clip)
    out = Clip(names, parents, offsets, rot, pos, clip.fps, channels=channels, end_parents=end_parents,
               end_offsets=clip.end_offsets, events=clip.events, loop=clip.loop, name=clip.name, root=top,
               up=up, forward=facing, meters_per_unit=clip.meters_per_unit, motion_start=clip.motion_start)
    out.body = dataclasses.replace(
        b, names=list(names), legs={s: index[v].tolist() for s, v in b.legs.items()},
        feet={s: index[v].tolist() for s, v in b.feet.items()},
        pelvis=None if b.pelvis is None else int(index[b.pelvis]), spine=index[b.spine].tolist(),
        head=None if b.head is None else int(index[b.head]),
        arms={s: index[v].tolist() for s, v in b.arms.items()},
        static=[int(index[j]) for j in b.static if int(index[j]) != top], root=top, forward=facing.copy(),
        evidence=dict(b.evidence), warnings=list(b.warnings))
    return out


def _floor_root(clip: Clip, joint: int) -> bool:
    """Whether top joint `joint` never rotates and only ever moves along the floor."""
    still = bool(quat.angle(clip.rotations[:, joint], quat.identity()).max(initial=0.0) <= _STILL_ANGLE)
    level = float(np.abs(clip.positions[:, joint] @ clip.up).max(initial=0.0))
    return still and level <= _ON_FLOOR * max(clip.height, 1e-300)


def _mean_facing(clip: Clip) -> np.ndarray:
    """The performer's mean facing over the take on the floor (world axes): an unturned root's."""
    facing = quat.mul_vec(root_world(clip)[0], clip.forward).mean(axis=0)
    up = clip.up
    facing -= up * (facing @ up)
    norm = float(np.linalg.norm(facing))
    return facing / norm if norm > 0.0 else floor_axes(up)[0]


def _root_path(clip: Clip, hips: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The root's floor position [T, 3] and heading [T] (radians, unwrapped): the hips' ground
    projection and the character's heading from `motion_start` on, smoothed by `sigma` frames
    (around the seam for a loop), held before it."""
    start = min(clip.motion_start, clip.n_frames - 1)
    up = clip.up
    rot, _ = root_world(clip)
    _, hips_pos = root_world_of(clip.rotations, clip.positions, clip.parents, hips)
    planar = hips_pos[start:] - np.outer(hips_pos[start:] @ up, up)
    angle = np.unwrap(heading_of(rot[start:], up, clip.forward))
    n = len(angle)
    cycle = clip.loop_frames - start if clip.loop else 0
    if sigma > 0 and n > 1:
        if cycle >= 2:
            planar, angle = _periodic(planar, angle, cycle, up, sigma)
        else:
            planar, angle = _lowpass_trend(planar, sigma), _lowpass_trend(angle, sigma)
        planar -= np.outer(planar @ up, up)
    if start:
        planar = np.concatenate([np.repeat(planar[:1], start, axis=0), planar])
        angle = np.concatenate([np.repeat(angle[:1], start), angle])
    return planar, angle


def _lowpass_trend(x: np.ndarray, sigma: float) -> np.ndarray:
    """`lowpass` whose ends are padded by point reflection about the take's trend there (a line
    fitted over 2 sigma, a gait cycle), not about the end frame: motion at constant velocity
    still passes unchanged, and the root does not end where the hips' sway happens to be, with
    a turn or a swerve into it."""
    n = x.shape[0]
    radius = min(int(4.0 * sigma + 0.5), n - 1)
    if radius <= 0:
        return x.copy()
    span = max(min(int(2.0 * sigma + 0.5) + 1, n), 2)
    t = np.arange(span, dtype=np.float64)
    design = np.stack([np.ones(span), t], axis=1)
    flat = x.reshape(n, -1)
    first = np.linalg.lstsq(design, flat[:span], rcond=None)[0][0].reshape(x.shape[1:])
    last = np.linalg.lstsq(design, flat[::-1][:span], rcond=None)[0][0].reshape(x.shape[1:])
    head = 2.0 * first - x[radius:0:-1]
    tail = 2.0 * last - x[-2:-radius - 2:-1]
    return _convolve(np.concatenate([head, x, tail]), sigma, radius)


def _periodic(planar: np.ndarray, angle: np.ndarray, cycle: int, up: np.ndarray,
              sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """`planar` [T, 3] and `angle` [T] of a loop of `cycle` frames smoothed by `sigma` frames, the
    path continued past both ends by the cycle's own move: frame k + cycle is frame k turned by
    the cycle's turn and moved by its displacement (frame `cycle` is stored when the seam repeats;
    else its step out of the last frame is the mean of its neighbours' in the heading frame, the
    loop convention of core/sync.py). The smoothed path keeps that symmetry: it stays a loop."""
    n = len(angle)
    base_p, base_h = planar[:cycle], angle[:cycle]
    if n > cycle:
        end_p, end_h = planar[cycle], angle[cycle]
    else:
        steps = quat.mul_vec(quat.inv(yaw_quat(base_h[:-1], up)), np.diff(base_p, axis=0))
        step = 0.5 * (steps[-1] + steps[0]) if len(steps) > 1 else steps[0]
        turns = np.diff(base_h)
        end_h = base_h[-1] + (0.5 * (turns[-1] + turns[0]) if len(turns) > 1 else turns[0])
        end_p = base_p[-1] + quat.mul_vec(yaw_quat(base_h[-1], up), step)
    turn = float(end_h - base_h[0])
    radius = int(4.0 * sigma + 0.5)
    k = np.arange(-radius, n + radius)
    laps, r = np.divmod(k, cycle)
    out_p, out_h = np.empty((len(k), 3)), np.empty(len(k))
    for lap in np.unique(laps).tolist():
        at = laps == lap
        # The cycle's move M(x) = Y(turn) (x - p0) + p_end, applied `lap` times (inverted for < 0).
        origin = base_p[0].copy()
        for _ in range(abs(lap)):
            origin = (quat.mul_vec(yaw_quat(turn, up), origin - base_p[0]) + end_p if lap > 0
                      else quat.mul_vec(yaw_quat(-turn, up), origin - end_p) + base_p[0])
        out_p[at] = quat.mul_vec(yaw_quat(lap * turn, up), base_p[r[at]] - base_p[0]) + origin
        out_h[at] = base_h[r[at]] + lap * turn
    return _convolve(out_p, sigma, radius), _convolve(out_h, sigma, radius)
