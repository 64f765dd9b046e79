"""Foot locking: planted feet held where they landed, by two-bone IK on the legs.

During each contact the foot's pivot, the point it stands on, stays where it was planted: each
step, the ankle moves only as the foot rolls about the point of it (ankle, ball, toe tips) that
moves least in the source over that step, so the heel holds after touchdown and the ball or toe
once the heel lifts, and a source that slides (or whose root was sped up) no longer does. The foot
keeps the source's roll and pitch (a heel-off stays a heel-off) and its yaw about up is held at
the touchdown's (the twist of its rotation since then is taken off). What changes is a per-frame
offset of the ankle (position and a yaw) from the source; it is zero at touchdown by construction,
so a lock is at full strength on the touchdown frame, and after the lift it fades out with a
smoothstep over `blend_time`, or over as long as keeps its average speed under FADE_SPEED, and by
the next touchdown at the latest. The legs (hip, knee, ankle) are solved by `ik.two_bone`, the
knee bending in its own plane; the root, the upper body and the toes' local rotations are
untouched, and so are bone lengths.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from . import ik, quat, skeleton
from .body import FeetSpec, with_feet
from .clip import Clip
from .contacts import runs
from .root import root_world, with_root_world, yaw_quat

Array = npt.NDArray[np.float64]

# Seconds over which a lock fades out after the lift, by default.
BLEND_TIME = 0.1
# m/s: the most a fading lock moves the foot on average.
FADE_SPEED = 0.5
# A foot farther than this from its lock (meters) after the solve is reported.
_SHORT_M = 0.01


class FootLockWarning(UserWarning):
    """A locked foot could not be held where it was planted (the leg is too short there)."""


def _wrap(x: Array) -> Array:
    return (x + np.pi) % (2.0 * np.pi) - np.pi


class _Leg:
    """Joint indices of one leg for the solve: hip (top of the leg), knee (the ankle's parent),
    ankle, and the ball (the ankle's child along the foot) or None."""

    def __init__(self, clip: Clip, side: str) -> None:
        leg, foot = clip.body.legs[side], clip.body.feet[side]
        self.ankle = foot[0]
        self.knee = int(clip.parents[self.ankle])
        self.hip = leg[0]
        if self.knee == self.hip or self.knee < 0:
            raise ValueError(f"leg {side} has no knee between {clip.names[self.hip]} and its ankle")
        below = [j for j in foot[1:] if clip.parents[j] == self.ankle]
        self.ball: int | None = below[0] if below else None


def offsets(clip: Clip, ankle_pos: Array, ankle_rot: Array, points: Array, planted: np.ndarray,
            blend_frames: int) -> tuple[Array, Array, Array]:
    """(position offset [T, 3], yaw offset [T] radians, weight [T]) of one foot's ankle from the
    source, world frame, file units, that hold its pivot over each contact of `planted`.
    points [T, K, 3]: the foot's points (ankle, ball, toe tips)."""
    T = len(planted)
    up = clip.up
    off = np.zeros((T, 3))
    off_yaw = np.zeros(T)
    weight = np.zeros(T)
    starts, stops = runs(planted)
    if not starts.size:
        return off, off_yaw, weight
    frames = np.flatnonzero(planted)
    # Each contact frame's touchdown frame.
    t0 = np.repeat(starts, stops - starts)
    # The foot's turn about up since touchdown: the twist of its rotation since then (the toe's
    # direction on the floor is ill-defined on tiptoe).
    since = quat.mul_inv(ankle_rot[frames], ankle_rot[t0])
    turn = _wrap(2.0 * np.arctan2(since[:, 1:] @ up, since[:, 0]))
    held = yaw_quat(-turn, up)
    # The ankle moves only as the foot rolls about its pivot, the point that moves least in the
    # source over each step: by minus the pivot's move seen from the ankle of the yaw-held foot.
    r = quat.mul_vec(held[:, None], points[frames] - ankle_pos[frames, None])
    first = frames == t0
    prev = np.maximum(np.arange(len(frames)) - 1, 0)
    moved = np.linalg.norm(points[frames] - points[np.maximum(frames - 1, 0)], axis=-1)
    k = np.argmin(moved, axis=1)
    rows = np.arange(len(frames))
    roll = np.where(first[:, None], 0.0, r[rows, k] - r[prev, k])
    total = np.cumsum(roll, axis=0)
    total -= np.repeat(total[np.searchsorted(frames, starts)], stops - starts, axis=0)
    off[frames] = ankle_pos[t0] - total - ankle_pos[frames]
    off_yaw[frames] = -turn
    weight[frames] = 1.0
    if blend_frames > 0:
        # After each lift the last offset fades out, done by the next touchdown at the latest.
        nxt = np.append(starts[1:], T)
        # A large offset (a foot held far from where the source lifts it) fades out no faster
        # than FADE_SPEED: a 10 cm offset over 0.2 s, not in three frames at 30 fps.
        held = np.linalg.norm(off[stops - 1], axis=-1) * clip.meters_per_unit
        longer = np.ceil(held / FADE_SPEED * clip.fps).astype(np.int64)
        fade = np.minimum(np.maximum(blend_frames, longer), nxt - stops)
        n = np.maximum(fade, 0)
        idx = np.repeat(np.arange(len(stops)), n)
        d = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n) + 1
        at = np.repeat(stops, n) + d - 1
        off[at] = off[stops[idx] - 1]
        off_yaw[at] = off_yaw[stops[idx] - 1]
        weight[at] = _smoothstep(1.0 - d / (fade[idx] + 1.0))
    return off, off_yaw, weight


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _pelvis_drop(hip: Array, target: Array, reach: Array, up: Array) -> Array:
    """[T] how far down the hip must go for `target` to be within SOFT_START of its reach."""
    v = target - hip
    vu = v @ up
    r = ik.SOFT_START * reach
    disc = vu * vu - np.sum(v * v, axis=-1) + r * r
    drop = np.where(disc >= 0.0, -vu - np.sqrt(np.maximum(disc, 0.0)), -vu)
    return np.where(np.sum(v * v, axis=-1) > r * r, np.maximum(drop, 0.0), 0.0)


def _smooth_drop(drop: Array, radius: int) -> Array:
    """A drop at least `drop` everywhere that eases in and out over `radius` frames."""
    if radius < 1 or not drop.any():
        return drop
    padded = np.pad(drop, radius, mode="edge")
    peak = np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).max(axis=-1)
    # The mean over a window no wider than the running max's never falls below the drop.
    padded = np.pad(peak, radius, mode="edge")
    return np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).mean(axis=-1)


def lock_feet(clip: Clip, *, contacts: Mapping[str, npt.ArrayLike] | None = None,
              feet: FeetSpec | None = None, blend_time: float = BLEND_TIME,
              lower_pelvis: bool = False) -> Clip:
    """A copy of `clip` whose planted feet stay where they landed (see the module notes).

    contacts: {'L': bool [T], 'R': bool [T]}, as `contacts.contacts` returns them (detected on the
        clip when None); a side left out is not locked.
    feet: {'L': ankle, 'R': ankle} by name or index (`body.with_feet`); None: the body map's.
    blend_time: seconds over which a lock fades out after the lift.
    lower_pelvis: where a foot cannot reach its lock, lower the motion root along up just enough
        (eased over blend_time); otherwise the foot is held as near as the leg reaches and a
        `FootLockWarning` says where.
    """
    if not (math.isfinite(blend_time) and blend_time >= 0.0):
        raise ValueError(f"blend_time must be finite and >= 0 seconds, not {blend_time}")
    clip = with_feet(clip, feet)
    if not clip.body.legs:
        raise ValueError(f"no legs found: {clip.body.problem}")
    if contacts is None:
        from .contacts import contacts as detect

        contacts = detect(clip)
    T = clip.n_frames
    masks = {}
    for side, mask in contacts.items():
        if side not in clip.body.legs:
            raise ValueError(f"contacts name a foot {side!r}; the legs are {sorted(clip.body.legs)}")
        m = np.asarray(mask, dtype=bool)
        if m.shape != (T,):
            raise ValueError(f"contacts[{side!r}] has shape {m.shape}, the clip {T} frames")
        # A converter's T-pose before the motion is no contact.
        masks[side] = m & (np.arange(T) >= clip.motion_start)
    legs = {side: _Leg(clip, side) for side in masks if masks[side].any()}
    if not legs:
        return clip.copy()

    # FK along the chains to the feet only.
    used = sorted({j for side in legs for k in clip.body.feet[side] for j in skeleton.chain(clip.parents, k)})
    index = np.full(clip.n_joints, -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    sub_parents = np.array([index[clip.parents[j]] if clip.parents[j] >= 0 else -1 for j in used])
    wrot, wpos = quat.fk(clip.rotations[:, used], clip.positions[:, used], sub_parents)
    up = clip.up
    blend_frames = max(0, math.ceil(blend_time * clip.fps - 1e-9))

    solve = {}
    for side, leg in legs.items():
        ankle_pos, ankle_rot = wpos[:, index[leg.ankle]], wrot[:, index[leg.ankle]]
        foot = [j for j in clip.body.feet[side] if index[j] >= 0]
        if leg.ball is not None:
            foot = [leg.ankle, leg.ball] + [j for j in foot if j not in (leg.ankle, leg.ball)]
        sites = np.flatnonzero(np.isin(clip.end_parents, foot))
        owner = index[clip.end_parents[sites]]
        tips = wpos[:, owner] + quat.mul_vec(wrot[:, owner], clip.end_offsets[sites])
        points = np.concatenate([wpos[:, index[foot]], tips], axis=1)
        if points.shape[1] < 2:
            points = np.stack([ankle_pos, ankle_pos + quat.mul_vec(ankle_rot, clip.forward)], axis=1)
        hip_pos, knee_pos = wpos[:, index[leg.hip]], wpos[:, index[leg.knee]]
        reach = np.linalg.norm(knee_pos - hip_pos, axis=-1) + np.linalg.norm(ankle_pos - knee_pos, axis=-1)
        off, off_yaw, w = offsets(clip, ankle_pos, ankle_rot, points, masks[side], blend_frames)
        target = ankle_pos + w[:, None] * off
        target_rot = quat.mul(yaw_quat(w * off_yaw, up), ankle_rot)
        solve[side] = (target, target_rot, reach, w)

    drop = np.zeros(T)
    if lower_pelvis:
        for side, leg in legs.items():
            target, _, reach, w = solve[side]
            d = _pelvis_drop(wpos[:, index[leg.hip]], target, reach, up)
            drop = np.maximum(drop, np.where(w > 0, d, 0.0))
        drop = _smooth_drop(drop, blend_frames)
        drop[:clip.motion_start] = 0.0  # a converter's T-pose stays as it is

    rot = clip.rotations.copy()
    out = clip
    if drop.any():
        rrot, rpos = root_world(clip)
        out = with_root_world(clip, rrot, rpos - drop[:, None] * up)
        rot = out.rotations.copy()
        wpos = wpos - drop[:, None, None] * up
    short = []
    for side, leg in legs.items():
        target, target_rot, _, w = solve[side]
        # A lowered pelvis moves every foot: those not locked are held where the source had them.
        frames = np.flatnonzero((w > 0) | (drop > 0))
        hip, knee, ankle = index[leg.hip], index[leg.knee], index[leg.ankle]
        got = ik.two_bone(wpos[frames, hip], wpos[frames, knee], wpos[frames, ankle],
                          wrot[frames, hip], wrot[frames, knee], target[frames])
        # Back to locals: each joint's parent's world rotation is the old one times what moved it.
        hip_parent = quat.mul_inv(wrot[frames, hip], clip.rotations[frames, leg.hip])
        knee_parent = quat.mul_inv(wrot[frames, knee], clip.rotations[frames, leg.knee])
        swing = quat.mul_inv(got.hip, wrot[frames, hip])
        new_hip = quat.inv_mul(hip_parent, got.hip)
        new_knee = quat.inv_mul(quat.mul(swing, knee_parent), got.knee)
        new_ankle = quat.inv_mul(got.knee, target_rot[frames])
        for j, q in ((leg.hip, new_hip), (leg.knee, new_knee), (leg.ankle, new_ankle)):
            q = quat.normalize(q)
            rot[frames, j] = np.where(quat.dot(q, clip.rotations[frames, j])[:, None] < 0.0, -q, q)
        miss = np.linalg.norm(got.ankle - target[frames], axis=-1) * clip.meters_per_unit
        if miss.max(initial=0.0) > _SHORT_M:
            far = miss > _SHORT_M
            short.append(f"{side} on {int(far.sum())} frames from {frames[far][0] / clip.fps:.2f} s "
                         f"(up to {miss.max() * 100:.1f} cm)")
    if short:
        warnings.warn(f"{clip.name or 'the take'}: a foot could not reach its lock, held as near as the "
                      f"leg reaches: {'; '.join(short)}. lower_pelvis=True lowers the pelvis instead",
                      FootLockWarning, stacklevel=2)
    return out.replace(rotations=rot)
