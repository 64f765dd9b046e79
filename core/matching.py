"""Motion matching for a switch: the destination frame whose pose and motion best continue the
source's (`transition.best_target_time`).

Each frame is described as motion matching does (S. Clavet's "Motion Matching", GDC 2016;
D. Holden's "Learned Motion Matching", 2020): the leg joints' positions and velocities in the
character frame (the root's floor projection at the origin, its heading turned to 0), the root's
velocity over the floor in that frame and its turning rate. Each feature group is divided by its
spread over the candidates, so that centimetres and radians weigh alike, and the cost of a
candidate is the sum of its groups' mean squared differences from the source at the switch, plus
CONTACT_COST for each foot planted in one and not the other (a destination foot counts as planted
only inside a stance, not on its first or last frame, where the lock would start or end on the
switch), plus the circular distance between the gait phases (`contacts.phase`, a left touchdown
at 0) when both takes have steps to read one from.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import contacts as steps
from . import quat
from .clip import Clip
from .root import STILL_MPS, STRIDE_SECONDS, floor_axes, heading, trajectory, yaw_quat

Array = npt.NDArray[np.float64]

# A foot planted in one take and swinging in the other costs this much (the pose terms of a
# typical candidate are ~1 each, after scaling).
CONTACT_COST = 4.0
PHASE_COST = 1.0
# Weights of the groups: positions, velocities, root velocity, turn rate. Velocities count double:
# the switch carries the source's velocity into the destination.
WEIGHTS = (1.0, 1.0, 1.0, 1.0)


def _facing(clip: Clip, frames: np.ndarray) -> Array:
    """[n] the heading re-anchoring aligns at each frame (radians): the root's direction of travel
    over the stride before it (the first stride for early frames), its mean heading there when it
    barely moves (as `transition` re-anchors)."""
    traj = trajectory(clip)
    first = clip.motion_start
    n = min(round(STRIDE_SECONDS * clip.fps), clip.n_frames - 1 - first)
    a = np.clip(frames - n, first, None)
    b = a + n
    chord = traj.position[b] - traj.position[a]
    fwd, side = floor_axes(clip.up)
    travel = np.arctan2(chord @ side, chord @ fwd)
    cum = np.concatenate([[0.0], np.cumsum(traj.heading)])
    mean = (cum[b + 1] - cum[a]) / (n + 1)
    still = np.linalg.norm(chord, axis=-1) * clip.meters_per_unit < STILL_MPS * max(n, 1) / clip.fps
    return np.where(still | (n < 1), mean, travel)


def _features(clip: Clip, frames: np.ndarray) -> list[Array]:
    """Feature groups [n, ...] at `frames` (each >= 1): leg joint positions and velocities in
    the character frame (meters, m/s) turned by the heading re-anchoring aligns, the root's floor
    velocity in it and its turn rate."""
    joints = sorted({j for leg in clip.body.legs.values() for j in leg})
    both = np.concatenate([frames - 1, frames])
    wrot, wpos = quat.fk(clip.rotations[both], clip.positions[both], clip.parents)
    up, m, fps = clip.up, clip.meters_per_unit, clip.fps
    r = clip.root
    head = heading(clip, wrot)
    face = np.tile(_facing(clip, frames), 2)
    ground = wpos[:, r] - np.outer(wpos[:, r] @ up, up)
    unturn = quat.inv(yaw_quat(face, up))
    local = quat.mul_vec(unturn[:, None], wpos[:, joints] - ground[:, None]) * m
    n = len(frames)
    pos, prev = local[n:], local[:n]
    travel = quat.mul_vec(unturn[n:], ground[n:] - ground[:n]) * m * fps
    turn = np.angle(np.exp(1j * (head[n:] - head[:n]))) * fps
    return [pos.reshape(n, -1), ((pos - prev) * fps).reshape(n, -1), travel, turn[:, None]]


def _planted(clip: Clip) -> dict[str, np.ndarray] | None:
    try:
        return steps.contacts(clip)
    except ValueError:
        return None


def _phase(clip: Clip) -> Array | None:
    try:
        return steps.phase(clip)
    except ValueError:
        return None


def costs(src: Clip, i_s: int, dst: Clip, candidates: np.ndarray) -> Array:
    """[n] matching cost of each dst frame in `candidates` (each >= 1) against src frame i_s
    (>= 1); both clips at one rate and sharing up and forward (see the module notes)."""
    a = _features(src, np.array([i_s]))
    b = _features(dst, candidates)
    total = np.zeros(len(candidates))
    for fa, fb, weight in zip(a, b, WEIGHTS, strict=True):
        spread = float(np.sqrt(np.mean(np.var(fb, axis=0)))) or 1.0
        total += weight * np.mean((fb - fa) ** 2, axis=1) / spread ** 2
    total += CONTACT_COST * contact_mismatch(src, i_s, dst, candidates)
    ph_s, ph_d = _phase(src), _phase(dst)
    if ph_s is not None and ph_d is not None:
        total += PHASE_COST * np.abs(np.angle(np.exp(1j * (ph_d[candidates] - ph_s[i_s])))) / math.pi
    return total


def contact_mismatch(src: Clip, i_s: int, dst: Clip, candidates: np.ndarray) -> np.ndarray:
    """[n] int: how many feet are planted in src at frame i_s and not inside a stance of dst at
    each candidate, or the other way round (0 where contacts cannot be read)."""
    out = np.zeros(len(candidates), dtype=np.int64)
    planted_s, planted_d = _planted(src), _planted(dst)
    if planted_s is None or planted_d is None:
        return out
    for foot, ms in planted_s.items():
        md = planted_d.get(foot)
        if md is None:
            continue
        inner = md & np.roll(md, 1) & np.roll(md, -1)
        inner[[0, -1]] = False
        out += inner[candidates] != bool(ms[i_s])
    return out
