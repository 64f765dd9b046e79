"""Knees kept within the range the takes use: never straighter than the straightest, nor more bent
than the most bent, that the takes a blend is made of have, and bending to the same side.

A knee's flexion is the angle between thigh (hip to knee) and shin (knee to ankle). It is read
from the leg's own joints in the hip's frame (the knee's local rotation and the bones' offsets, and
any joint between them), so it does not depend on the pose above the hip, nor on how the skeleton
writes its rest frames. Its sign is its side: positive where the shin swings about the knee's
bend axis as the takes bend it (`Knee.axis`, the mean direction of thigh x shin over the takes'
bent frames, in the hip's frame), negative past straight on the other side.

A blend of two poses whose knees are in range stays about in range; what leaves it is an
extrapolation (dead blending carries a knee's angular velocity on past the switch: a run -> walk
switched while the knee straightens bent it 29 degrees past straight where neither take goes
past 6) or an offset added to another pose (inertialization). `keep` turns each knee that
leaves the range back to its nearest end, about the axis of its own bend, so its twist and the
plane it bends in stay the pose's.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import quat, skeleton
from .clip import Clip

Array = npt.NDArray[np.float64]

# Frames bent more than this (radians) say which way a knee bends; a straight knee does not.
_BENT = np.radians(15.0)
# A knee past its range is eased back, never further out than this (radians): beyond an end by x,
# it is at SOFT tanh(x / SOFT), which follows x at first (same pose, speed and acceleration as
# it crosses the end: the move away from it is not cut short with a jump in speed) and stops
# short of SOFT.
SOFT = np.radians(2.0)
# Where `keep` takes only a share of its turn (a transition's first frames, keeping the knee's
# velocity at the switch), a knee still past SOFT is eased to within SOFT + SLACK.
SLACK = np.radians(0.75)


class Knee(NamedTuple):
    """One knee: its hip, knee and ankle joints, its bend axis [3] in the hip's frame, and the range
    [lo, hi] of its signed flexion (radians) over the takes."""

    hip: int
    knee: int
    ankle: int
    axis: Array
    lo: float
    hi: float


def _in_hip(rotations: Array, positions: Array, parents: np.ndarray, hip: int,
            joint: int) -> tuple[Array, Array]:
    """(rotation [T, 4], position [T, 3]) of `joint`'s frame in `hip`'s frame, by the local
    transforms of the joints from below the hip down to it."""
    path = skeleton.chain(parents, joint)
    path = path[path.index(hip) + 1:]
    rot = np.broadcast_to(quat.identity(), (rotations.shape[0], 4))
    pos = np.zeros((rotations.shape[0], 3))
    for j in path:
        pos = pos + quat.mul_vec(rot, positions[:, j])
        rot = quat.mul(rot, rotations[:, j])
    return rot, pos


def _thigh_shin(rotations: Array, positions: Array, parents: np.ndarray, hip: int, knee: int,
                ankle: int) -> tuple[Array, Array]:
    """Thigh and shin vectors [T, 3] in the hip's frame."""
    if parents[knee] == hip and parents[ankle] == knee:  # the usual leg: one product
        return positions[:, knee], quat.mul_vec(rotations[:, knee], positions[:, ankle])
    _, at_knee = _in_hip(rotations, positions, parents, hip, knee)
    _, at_ankle = _in_hip(rotations, positions, parents, hip, ankle)
    return at_knee, at_ankle - at_knee


def _cross(a: Array, b: Array) -> Array:
    """a x b over [..., 3] (np.cross's axis handling costs more than the product on short takes)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _unit(v: Array) -> Array:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0.0, n, 1.0)


def flexion(rotations: Array, positions: Array, parents: np.ndarray, hip: int, knee: int, ankle: int,
            axis: Array) -> Array:
    """[T] signed knee flexion (radians) of local rotations [T, J, 4] and translations [T, J, 3]:
    the thigh-shin angle, negative where thigh x shin points against `axis` (hip frame)."""
    thigh, shin = _thigh_shin(rotations, positions, parents, hip, knee, ankle)
    cross = _cross(thigh, shin)
    angle = np.arctan2(np.linalg.norm(cross, axis=-1), np.einsum("...i,...i->...", thigh, shin))
    return np.where(cross @ axis < 0.0, -angle, angle)


def ranges(*clips: Clip) -> list[Knee]:
    """Both knees of the clips' shared skeleton (`clip.body.legs`: hip, knee, ankle) with their bend
    axis and range over every clip's frames from its motion_start; [] without legs (or for a leg
    that never bends past 15 degrees, which gives no axis)."""
    first = clips[0]
    legs = first.body.legs
    out = []
    for side in sorted(legs):
        chain = legs[side]
        if len(chain) < 3:
            continue
        hip, knee, ankle = (int(j) for j in chain[:3])
        parts = [_thigh_shin(c.rotations[c.motion_start:], c.positions[c.motion_start:], c.parents, hip,
                             knee, ankle) for c in clips]
        thigh = np.concatenate([t for t, _ in parts])
        shin = np.concatenate([s for _, s in parts])
        cross = _cross(thigh, shin)
        angle = np.arctan2(np.linalg.norm(cross, axis=-1), np.einsum("...i,...i->...", thigh, shin))
        bent = angle > _BENT
        if not bent.any():
            continue
        axis = _unit(_unit(cross[bent]).sum(axis=0))
        signed = np.where(cross @ axis < 0.0, -angle, angle)
        out.append(Knee(hip, knee, ankle, axis, float(signed.min()), float(signed.max())))
    return out


def keep(rotations: Array, positions: Array, parents: np.ndarray, knees: list[Knee],
         share: npt.ArrayLike | None = None, slack: float = SLACK) -> Array:
    """Local rotations [T, J, 4] with each knee outside its range eased back to within `SOFT` of
    the nearest end (past it by x: by SOFT tanh(x / SOFT)): the knee's local rotation turned
    about the axis of its own bend (thigh x shin, the range's axis where the knee is straight)
    by the difference, so the shin stays in the plane it bends in. Positions [T, J, 3] are the
    pose's. `share` [T] in [0, 1]: how much of that turn each frame takes (None: all of it; a
    transition eases it in from 0 so the knee keeps its velocity at the switch), a frame left
    past SOFT eased to within SOFT + `slack` (inf: not). A copy when anything changes, else
    `rotations`."""
    out = rotations
    for k in knees:
        thigh, shin = _thigh_shin(out, positions, parents, k.hip, k.knee, k.ankle)
        cross = _cross(thigh, shin)
        size = np.linalg.norm(cross, axis=-1)
        angle = np.arctan2(size, np.einsum("...i,...i->...", thigh, shin))
        side = np.where(cross @ k.axis < 0.0, -1.0, 1.0)
        signed = side * angle
        fix = np.flatnonzero((signed < k.lo) | (signed > k.hi))
        if not fix.size:
            continue
        past = signed[fix]
        below = past < k.lo
        beyond = np.where(below, k.lo - past, past - k.hi)
        eased = SOFT * np.tanh(beyond / SOFT)
        if share is not None:
            # Taken in by share; a frame left further out than SOFT (a blend's first frame, kept
            # as it is, is up to 5.4 degrees past) is eased to within SOFT + slack.
            eased = beyond - np.asarray(share, dtype=np.float64)[fix] * (beyond - eased)
            if math.isfinite(slack):
                eased = np.where(eased > SOFT, SOFT + slack * np.tanh((eased - SOFT) / slack), eased)
        want = np.where(below, k.lo - eased, k.hi + eased)
        # Turning about thigh x shin by +x opens the knee by x: the signed change, on the side it is on.
        lengths = np.linalg.norm(thigh[fix], axis=-1) * np.linalg.norm(shin[fix], axis=-1)
        straight = size[fix] <= 1e-12 * lengths
        about = np.where(straight[:, None], k.axis, _unit(cross[fix]))
        by = np.where(straight, 1.0, side[fix]) * (want - past)
        turn = quat.from_scaled_angle_axis(about * by[:, None])
        # The turn is in the hip's frame; the knee's rotation is in its parent's.
        parent = int(parents[k.knee])
        if parent != k.hip:
            frame, _ = _in_hip(out[fix], positions[fix], parents, k.hip, parent)
            turn = quat.mul(quat.inv(frame), quat.mul(turn, frame))
        if out is rotations:
            out = rotations.copy()
        out[fix, k.knee] = quat.mul(turn, out[fix, k.knee])
    return out
