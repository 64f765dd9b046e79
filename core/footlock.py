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
knee bending in its own plane (`ik.solve`, on the component-major layout the FK of the chains
to the feet leaves: [joint, component, frame]); the root, the upper body and the toes' local
rotations are untouched, and so are bone lengths. Outside the locks no leg joint turns further in
a frame than its largest step in the source (`_limit_steps`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from . import ik, quat, skeleton
from .body import FeetSpec, with_feet
from .clip import Clip
from .contacts import runs
from .root import root_world, with_root_world

Array = npt.NDArray[np.float64]

# Seconds over which a lock fades out after the lift, by default.
BLEND_TIME = 0.1
# m/s: the most a fading lock moves the foot on average.
FADE_SPEED = 0.5
# Steps are kept this fraction under the source's largest (rounding stays under it too).
_STEP_MARGIN = 1e-6
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


def offsets(up: Array, meters_per_unit: float, fps: float, ankle_pos: Array, ankle_rot: Array,
            points: Array, planted: np.ndarray, blend_frames: int) -> tuple[Array, Array, Array]:
    """(position offset [3, T], yaw [4, T], weight [T]) of one foot's ankle from the source that
    hold its pivot over each contact of `planted`: the ankle's target is ankle_pos + weight offset
    and its world rotation yaw ankle_rot (yaw is a rotation about up, the identity off the locks).
    Component-major, as `quat.fk_components` lays them out: ankle_pos [3, T], ankle_rot [4, T],
    points [K, 3, T] the foot's points (ankle, ball, toe tips), world frame, file units."""
    T = len(planted)
    off = np.zeros((3, T))
    yaw = np.zeros((4, T))
    yaw[0] = 1.0
    weight = np.zeros(T)
    starts, stops = runs(planted)
    if not starts.size:
        return off, yaw, weight
    frames = np.flatnonzero(planted)
    n = len(frames)
    # Each contact frame's touchdown frame.
    t0 = np.repeat(starts, stops - starts)
    # The foot's turn about up since touchdown: the twist of its rotation since then (the toe's
    # direction on the floor is ill-defined on tiptoe), taken off as held = inverse twist, the
    # half turn within +-90 degrees.
    qf, q0 = np.take(ankle_rot, frames, axis=1), np.take(ankle_rot, t0, axis=1)
    sw, sx, sy, sz = quat._mul_c(qf[0], qf[1], qf[2], qf[3], q0[0], -q0[1], -q0[2], -q0[3])
    s_up = sx * up[0] + sy * up[1] + sz * up[2]
    size = np.hypot(sw, s_up)
    twisted = size > 0.0
    size = np.where(twisted, size, 1.0)
    hw = np.where(twisted, np.abs(sw) / size, 1.0)
    hs = np.where(sw < 0.0, s_up, -s_up) / size
    held = (hw, hs * up[0], hs * up[1], hs * up[2])
    # The ankle moves only as the foot rolls about its pivot, the point that moves least in the
    # source over each step: by minus the pivot's move seen from the ankle of the yaw-held foot.
    before = np.maximum(frames - 1, 0)
    step = np.take(points, frames, axis=2) - np.take(points, before, axis=2)
    step *= step
    k = np.argmin(np.sqrt(step[:, 0] + step[:, 1] + step[:, 2]), axis=0)
    prev = np.maximum(np.arange(n) - 1, 0)
    held_prev = tuple(h[prev] for h in held)
    r_now = quat._rot_c(*held, *(points[k, c, frames] - ankle_pos[c, frames] for c in range(3)))
    r_before = quat._rot_c(*held_prev, *(points[k, c, before] - ankle_pos[c, before] for c in range(3)))
    first = frames == t0
    roll = np.stack([np.where(first, 0.0, r_now[c] - r_before[c]) for c in range(3)])
    total = np.cumsum(roll, axis=1)
    total -= np.repeat(total[:, np.searchsorted(frames, starts)], stops - starts, axis=1)
    for c in range(3):
        off[c, frames] = np.take(ankle_pos[c], t0) - total[c] - np.take(ankle_pos[c], frames)
    for c in range(4):
        yaw[c, frames] = held[c]
    weight[frames] = 1.0
    if blend_frames > 0:
        # After each lift the last offset fades out, done by the next touchdown at the latest.
        nxt = np.append(starts[1:], T)
        # A large offset (a foot held far from where the source lifts it) fades out no faster
        # than FADE_SPEED: a 10 cm offset over 0.2 s, not in three frames at 30 fps.
        last = off[:, stops - 1]
        far = np.sqrt(np.sum(last * last, axis=0)) * meters_per_unit
        longer = np.ceil(far / FADE_SPEED * fps).astype(np.int64)
        fade = np.minimum(np.maximum(blend_frames, longer), nxt - stops)
        m = np.maximum(fade, 0)
        idx = np.repeat(np.arange(len(stops)), m)
        d = np.arange(m.sum()) - np.repeat(np.cumsum(m) - m, m) + 1
        at = np.repeat(stops, m) + d - 1
        off[:, at] = off[:, stops[idx] - 1]
        weight[at] = _smoothstep(1.0 - d / (fade[idx] + 1.0))
        # The held yaw at the lift, as an angle to fade.
        j = np.cumsum(stops - starts) - 1
        turn = _wrap(2.0 * np.arctan2(s_up[j], sw[j]))
        half = weight[at] * -turn[idx] / 2
        yaw[0, at] = np.cos(half)
        sin = np.sin(half)
        for c in range(3):
            yaw[c + 1, at] = sin * up[c]
    return off, yaw, weight


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
    fk: dict[str, Any] = {}
    if contacts is None:
        from .contacts import _contacts_keeping_fk

        contacts, fk = _contacts_keeping_fk(clip)  # and the feet's FK it did, reused below
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

    # FK along the chains to the feet only, component-major ([joint, component, frame]).
    used = sorted({j for side in legs for k in clip.body.feet[side] for j in skeleton.chain(clip.parents, k)})
    if fk and bool((fk["index"][used] >= 0).all()):
        index, lrot, gr, gp = fk["index"], fk["local"], fk["rotations"], fk["positions"]
    else:
        index = np.full(clip.n_joints, -1, dtype=np.int64)
        index[used] = np.arange(len(used))
        sub_parents = [int(index[clip.parents[j]]) if clip.parents[j] >= 0 else -1 for j in used]
        lrot = quat.components(clip.rotations, used)
        gr, gp = quat.fk_components(lrot, quat.components(clip.positions, used), sub_parents)
    up = clip.up
    mpu = clip.meters_per_unit
    blend_frames = max(0, math.ceil(blend_time * clip.fps - 1e-9))

    solve = {}
    for side, leg in legs.items():
        ankle_pos, ankle_rot = gp[index[leg.ankle]], gr[index[leg.ankle]]
        foot = [j for j in clip.body.feet[side] if index[j] >= 0]
        if leg.ball is not None:
            foot = [leg.ankle, leg.ball] + [j for j in foot if j not in (leg.ankle, leg.ball)]
        sites = np.flatnonzero(np.isin(clip.end_parents, foot))
        pts = [gp[index[j]] for j in foot]
        for site in sites:
            o = index[clip.end_parents[site]]
            tip = quat._rot_c(*gr[o], *clip.end_offsets[site])
            pts.append(np.stack([gp[o, c] + tip[c] for c in range(3)]))
        if len(pts) < 2:
            ahead = quat._rot_c(*ankle_rot, *clip.forward)
            pts = [ankle_pos, np.stack([ankle_pos[c] + ahead[c] for c in range(3)])]
        off, yaw, w = offsets(up, mpu, clip.fps, ankle_pos, ankle_rot, np.stack(pts), masks[side],
                              blend_frames)
        target = ankle_pos + w * off
        solve[side] = (target, yaw, w)

    drop = np.zeros(T)
    if lower_pelvis:
        for side, leg in legs.items():
            target, _, w = solve[side]
            at = np.flatnonzero(w > 0)
            hip, knee, ankle = (gp[index[j]][:, at].T for j in (leg.hip, leg.knee, leg.ankle))
            reach = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
            drop[at] = np.maximum(drop[at], _pelvis_drop(hip, target[:, at].T, reach, up))
        drop = _smooth_drop(drop, blend_frames)
        drop[:clip.motion_start] = 0.0  # a converter's T-pose stays as it is

    out = clip
    if drop.any():
        rrot, rpos = root_world(clip)
        out = with_root_world(clip, rrot, rpos - drop[:, None] * up)
        gp = gp - drop * up[None, :, None]
    rot = out.rotations.copy()
    short = []
    solved: list[tuple[int, Array, Array, np.ndarray]] = []  # joint, source and new locals, locked
    for side, leg in legs.items():
        target, yaw, w = solve[side]
        # A lowered pelvis moves every foot: those not locked are held where the source had them.
        frames = np.flatnonzero((w > 0) | (drop > 0))
        hip, knee, ankle = index[leg.hip], index[leg.knee], index[leg.ankle]
        got = ik.solve(_vec(gp[hip], frames), _vec(gp[knee], frames), _vec(gp[ankle], frames),
                       _quat(gr[hip], frames), _quat(gr[knee], frames), _vec(target, frames))
        # Back to locals: the hip's parent is as it was, the knee's parent swung with the thigh.
        p_hip = _parent_rot(clip, gr, index, leg.hip, frames)
        p_knee = _parent_rot(clip, gr, index, leg.knee, frames)
        new_hip = quat._mul_c(p_hip[0], -p_hip[1], -p_hip[2], -p_hip[3], *got.hip)
        opened = quat._mul_c(*got.opening, *_quat(gr[knee], frames))
        new_knee = quat._mul_c(p_knee[0], -p_knee[1], -p_knee[2], -p_knee[3], *opened)
        k = got.knee
        target_rot = quat._mul_c(*_quat(yaw, frames), *_quat(gr[ankle], frames))
        new_ankle = quat._mul_c(k[0], -k[1], -k[2], -k[3], *target_rot)
        for j, q in ((leg.hip, new_hip), (leg.knee, new_knee), (leg.ankle, new_ankle)):
            was = lrot[index[j]]
            new = was.copy()
            size = np.maximum(np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), 1e-12)
            dot = sum(q[c] * np.take(was[c], frames) for c in range(4))
            scale = np.where(dot < 0.0, -1.0, 1.0) / size
            for c in range(4):
                new[c, frames] = q[c] * scale
            solved.append((j, was, new, w == 1.0))
        miss = np.sqrt(sum((got.ankle[c] - target[c, frames]) ** 2 for c in range(3))) * mpu
        if miss.max(initial=0.0) > _SHORT_M:
            far = miss > _SHORT_M
            short.append(f"{side} on {int(far.sum())} frames from {frames[far][0] / clip.fps:.2f} s "
                         f"(up to {miss.max() * 100:.1f} cm)")
    news = np.stack([x[2] for x in solved])
    _limit_steps(np.stack([x[1] for x in solved]), news, clip.motion_start, np.stack([x[3] for x in solved]))
    for (j, *_), new in zip(solved, news, strict=True):
        rot[:, j] = new.T
    if short:
        warnings.warn(f"{clip.name or 'the take'}: a foot could not reach its lock, held as near as the "
                      f"leg reaches: {'; '.join(short)}. lower_pelvis=True lowers the pelvis instead",
                      FootLockWarning, stacklevel=2)
    return out.replace(rotations=rot)


def _merge(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows [a, b] (frame indices, inclusive) merged where they overlap; sorted."""
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    # Windows that only share an end frame stay apart: both keep that frame as it was.
    start = np.flatnonzero(np.concatenate([[True], a[1:] >= np.maximum.accumulate(b)[:-1]]))
    return a[start], np.maximum.reduceat(b, start)


def _limit_steps(src: Array, out: Array, first: int, pinned: np.ndarray) -> None:
    """Keep each frame-to-frame rotation step of `out` within the largest step of `src` (joints'
    local rotations in the output and the source, [J, 4, T], from frame `first` on; `out`
    changed in place). Where a step is larger, the correction the output makes to the source
    (out inv(src), in the parent's frame) is spread over just enough frames around it: along the
    shortest arc between its values at the window's ends, each frame's share in proportion to
    the room the source's own step leaves there, so that share plus the source's step (an upper
    bound on the output's step) stays within the largest. Windows grow only over frames not
    `pinned` ([J, T], the locked ones), which stay as they are, and so does each first frame.
    The joints' frames are laid end to end, joint j's frame i at j n + i: one pass for all."""
    q, p = src[:, :, first:], out[:, :, first:]
    J, _, n = q.shape
    if n < 2:
        return
    dq = np.abs(sum(q[:, c, 1:] * q[:, c, :-1] for c in range(4)))
    limit = 2.0 * np.arccos(np.minimum(dq.min(axis=1), 1.0)) * (1.0 - _STEP_MARGIN)
    dp = np.abs(sum(p[:, c, 1:] * p[:, c, :-1] for c in range(4)))
    bad = np.flatnonzero(dp < np.cos(0.5 * limit)[:, None])
    if not bad.size:
        return
    bad_j, bad_i = np.divmod(bad, n - 1)
    # room[j n + i]: what the source's step from frame i to i + 1 leaves (0 past each end).
    steps = np.zeros((J, n))
    for j in np.unique(bad_j):  # the joints that need it
        steps[j, :-1] = np.maximum(limit[j] - 2.0 * np.arccos(np.minimum(dq[j], 1.0)), 0.0)
    room = steps.ravel()
    total = np.concatenate([[0.0], np.cumsum(room)])

    def at(x: Array, k: np.ndarray) -> tuple[Array, Array, Array, Array]:
        """x [J, 4, n] at flat indices k: components (w, x, y, z) [len(k)]."""
        j, i = np.divmod(k, n)
        return x[j, 0, i], x[j, 1, i], x[j, 2, i], x[j, 3, i]

    def corr(k: np.ndarray) -> Array:
        """The output's correction to the source at flat indices k, (w, x, y, z) [4, len(k)]."""
        o, r = at(p, k), at(q, k)
        return np.stack(quat._mul_c(o[0], o[1], o[2], o[3], r[0], -r[1], -r[2], -r[3]))

    def angle(x: Array, y: Array) -> Array:
        """Angles of the rotations taking x to y ([4, N] each)."""
        d = np.abs(x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3])
        return 2.0 * np.arccos(np.minimum(d, 1.0))

    # A window's ends may be locked frames (kept as they are) but nothing inside it: the lock
    # holds. It grows past an end that is a free frame. A take's first frame stays as it is
    # too (what comes before it, a transition's switch, joins there).
    held = pinned[:, first:].copy()
    held[:, 0] = True
    pin = held.ravel()
    a = bad_j * n + bad_i
    b = a + 1
    while True:
        a, b = _merge(a, b)
        ca, cb = corr(a), corr(b)
        arc = angle(ca, cb)
        free_a, free_b = ~pin[a], ~pin[b] & (b % n != n - 1)
        grow = (arc > total[b] - total[a]) & (free_a | free_b)
        if not grow.any():
            break
        a = np.where(grow & free_a, a - 1, a)
        b = np.where(grow & free_b, b + 1, b)
    # Along each window, from the correction at its start to the one at its end, each frame's
    # share of the turn in proportion to its room. A window short of room (between locked
    # frames) shares it a little more evenly: a source step at the largest leaves no room.
    short = arc > total[b] - total[a]
    # One that runs into the take's end goes as far toward the end's correction as its room allows.
    loose = short & (b % n == n - 1) & ~pin[b]
    reach = np.where(loose, (total[b] - total[a]) / np.where(arc > 0.0, arc, 1.0), 1.0)
    short &= ~loose
    even = 1e-3 * limit[a // n]  # added to each frame's room
    # The turn from ca to cb, the shorter way: half angle and axis.
    tw, tx, ty, tz = quat._mul_c(cb[0], cb[1], cb[2], cb[3], ca[0], -ca[1], -ca[2], -ca[3])
    sin = np.sqrt(tx * tx + ty * ty + tz * tz)
    half = np.arctan2(sin, np.abs(tw))
    axis = np.stack([tx, ty, tz]) * (np.where(tw < 0.0, -1.0, 1.0) / np.where(sin > 0.0, sin, 1.0))
    length = b - a + 1
    win = np.repeat(np.arange(len(a)), length)
    f = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length) + a[win]
    cum = total[f] - total[a[win]] + np.where(short, even, 0.0)[win] * (f - a[win])
    whole = total[b] - total[a] + np.where(short, even, 0.0) * (b - a)
    x = cum / np.where(whole > 0.0, whole, 1.0)[win] * (reach * half)[win]
    s = np.sin(x)
    ax = np.take(axis, win, axis=1)
    h = quat._mul_c(np.cos(x), ax[0] * s, ax[1] * s, ax[2] * s, *np.take(ca, win, axis=1))
    r = at(q, f)
    new = quat._mul_c(*h, r[0], r[1], r[2], r[3])
    size = np.sqrt(new[0] * new[0] + new[1] * new[1] + new[2] * new[2] + new[3] * new[3])
    scale = np.where(new[0] * r[0] + new[1] * r[1] + new[2] * r[2] + new[3] * r[3] < 0.0, -1.0, 1.0) / size
    j, i = np.divmod(f, n)
    for c in range(4):
        p[j, c, i] = new[c] * scale


def _vec(x: Array, frames: np.ndarray) -> ik.Vec:
    """Components (x, y, z) of [3, T] on frames."""
    x = np.take(x, frames, axis=1)
    return x[0], x[1], x[2]


def _quat(q: Array, frames: np.ndarray) -> ik.Quat:
    """Components (w, x, y, z) of [4, T] on frames."""
    q = np.take(q, frames, axis=1)
    return q[0], q[1], q[2], q[3]


def _parent_rot(clip: Clip, gr: Array, index: np.ndarray, joint: int, frames: np.ndarray) -> ik.Quat:
    """World rotation (w, x, y, z) of `joint`'s parent on `frames` (the identity for a root)."""
    parent = int(clip.parents[joint])
    if parent < 0:
        one = np.ones(len(frames))
        return one, 0.0 * one, 0.0 * one, 0.0 * one
    return _quat(gr[index[parent]], frames)
