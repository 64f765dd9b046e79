"""Two-bone IK for a leg: hip, knee and ankle reach a target ankle position, vectorised over frames.

World transforms in, world rotations out, shapes `[..., 3]` / `[..., 4]` over any leading axes
(frames). The solve follows D. Holden's two-joint IK (Motion-Matching, `resources/...`): first
the knee opens or closes about the axis of its current bend until hip-to-ankle is the distance
wanted (law of cosines), then the hip swings, by the shortest arc, the ankle onto the target. So
the knee's bend plane is the current pose's (it never flips to the other side), and the thigh
keeps its twist. A straight leg has no bend plane of its own: it takes the nearest frame's that
has one, else `bend`.

Near full extension a target just in reach would need the knee to snap straight within a frame
or two; beyond `soft_start` of the reach the distance reached goes on growing ever slower
toward full reach (the "soft IK" of A. Stolarz's 2010 note: d' = s + (m - s)(1 - exp(-(d - s)
/ (m - s)))), starting no lower than the pose's own distance, so a frame left as it was is
solved as it was.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import quat

Array = npt.NDArray[np.float64]

# Softening starts at this fraction of the leg's full reach (l1 + l2): 2 cm of a 0.9 m leg.
SOFT_START = 0.98
# A leg bent by less than this (sine of the knee's angle off straight) has no bend plane of its own.
_STRAIGHT = 1e-4


class Leg(NamedTuple):
    """A solved leg: world rotations of hip and knee, and where the ankle got to (`[..., 3]`)."""

    hip: Array
    knee: Array
    ankle: Array


def soft_reach(d: npt.ArrayLike, reach: npt.ArrayLike, floor: npt.ArrayLike) -> Array:
    """Distances d `[...]` softened near full `reach`: unchanged up to max(SOFT_START reach,
    floor), then approaching reach without ever getting there."""
    d, reach = np.asarray(d, dtype=np.float64), np.asarray(reach, dtype=np.float64)
    s = np.minimum(np.maximum(SOFT_START * reach, np.asarray(floor, dtype=np.float64)), reach)
    room = np.maximum(reach - s, 1e-12)
    soft = s + room * -np.expm1(-np.maximum(d - s, 0.0) / room)
    return np.where(d > s, np.minimum(soft, reach), d)


def _fill_axis(axis: Array, ok: np.ndarray, fallback: Array) -> Array:
    """Bend axes `[T, 3]`: where not ok, the nearest frame's that is (along axis 0), else fallback."""
    if ok.all() or axis.ndim != 2:
        return np.where(ok[..., None], axis, fallback)
    good = np.flatnonzero(ok)
    if not good.size:
        return np.broadcast_to(fallback, axis.shape).copy()
    idx = np.arange(len(ok))
    at = np.searchsorted(good, idx).clip(0, len(good) - 1)
    before = good[(at - 1).clip(0)]
    nearest = np.where(np.abs(good[at] - idx) <= np.abs(before - idx), good[at], before)
    return axis[nearest]


def two_bone(hip_pos: npt.ArrayLike, knee_pos: npt.ArrayLike, ankle_pos: npt.ArrayLike,
             hip_rot: npt.ArrayLike, knee_rot: npt.ArrayLike, target: npt.ArrayLike, *,
             bend: npt.ArrayLike | None = None, soft: bool = True) -> Leg:
    """World rotations of hip and knee `[..., 4]` that put the ankle at `target` `[..., 3]`, or as
    near as the leg reaches (see the module notes). Positions are the current pose's world joint
    positions (any unit), rotations its world rotations. `bend`: the knee's bend axis (world,
    `[3]`) for a leg straight on every frame; None: perpendicular to the leg and the world's
    first axis least aligned with it. soft=False reaches any target within reach exactly.
    The ankle's world rotation is the caller's to set (its local is inv(knee) ankle_world)."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (hip_pos, knee_pos, ankle_pos))
    t = np.asarray(target, dtype=np.float64)
    hip_rot, knee_rot = np.asarray(hip_rot, dtype=np.float64), np.asarray(knee_rot, dtype=np.float64)
    ab, cb = a - b, c - b
    l1, l2 = np.linalg.norm(ab, axis=-1), np.linalg.norm(cb, axis=-1)
    axis = np.cross(ab, cb)
    size = np.linalg.norm(axis, axis=-1)
    ok = size > _STRAIGHT * np.maximum(l1 * l2, 1e-300)
    if bend is None:
        thigh = -ab
        helper = np.eye(3)[np.argmin(np.abs(thigh), axis=-1)]
        fallback = np.cross(thigh, helper)
    else:
        fallback = np.broadcast_to(np.asarray(bend, dtype=np.float64), axis.shape)
    axis = _fill_axis(axis / np.where(ok, size, 1.0)[..., None], ok, fallback)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)

    reach = l1 + l2
    d_now = np.linalg.norm(c - a, axis=-1)
    d = np.linalg.norm(t - a, axis=-1)
    d = soft_reach(d, reach, d_now) if soft else np.minimum(d, reach)
    d = np.maximum(d, np.abs(l1 - l2))
    # The knee's interior angle now and the one that puts the ankle d from the hip.
    now = np.arccos(np.clip(np.sum(ab * cb, axis=-1) / np.maximum(l1 * l2, 1e-300), -1.0, 1.0))
    want = np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / np.maximum(2.0 * l1 * l2, 1e-300), -1.0, 1.0))
    # Turning the shin about ab x cb by +x opens the knee (moves cb away from ab).
    open_knee = quat.from_scaled_angle_axis(axis * (want - now)[..., None])
    knee_rot = quat.mul(open_knee, knee_rot)
    c1 = b + quat.mul_vec(open_knee, cb)
    swing = quat.between(c1 - a, t - a)
    hip_new = quat.mul(swing, hip_rot)
    knee_new = quat.mul(swing, knee_rot)
    ankle = a + quat.mul_vec(swing, c1 - a)
    return Leg(hip_new, knee_new, ankle)
