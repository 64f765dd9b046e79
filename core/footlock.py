"""Foot locking: planted feet held where they landed, by two-bone IK on the legs.

A lock takes out of each contact what makes a planted foot slide: the slide over the floor of
the foot's pivot, the point of it (ankle, ball, toe tips) that moves least in the source from
frame to frame. The held foot is the source's foot moved over the floor by an offset that
cancels that slide (`_holds`), so it keeps the source's heights and rotation: a heel strike
still lands, a heel-off still rises, a foot that turns on its ball turns, and no point of it
goes under where the source stood it. The offset starts where the source's pivot is on
average over the contact (mocap feet wander), weighed toward the frames where the knee has the
least room to straighten: a millimetre of reach turns a nearly straight knee by degrees, so a
foot held a little farther from the hip than the source's would make the knee snap.

A lock eases in from the touchdown: the foot moves as the source's plus the offset it will be
held at, weighed in over the landing foot's deceleration, full at most `ease_in` after it.
Where the heel has come off (the pivot is the ball or the toes) and the held ankle would be
farther from the hip than the source's (mocap toes slide at push-off), the foot turns heel up
on its ball, the toes keeping their world rotation, and where that cannot bring the ankle near
enough (a foot nearly on end) a little further on its toe tip (`_heel_up`, `_roll`), instead
of pulling the knee straighter. A target out of the leg's reach at the take's straightest
knee is held as near as the leg reaches, softly (`_within`), or with `lower_pelvis` the root
goes down by a smooth amount just where it is needed (`_lowered`). After the lift a lock is
let go in the leg's joints (`_let_go`): the correction the solve made at the lift fades out
over as long as the source foot speeds up (`_fades`), the knee kept no straighter than the
take's; where the pelvis is lowered the IK still holds the foot as it fades.

The legs (hip, knee, ankle) are solved by `ik.solve` with each knee's hinge and the take's
straightest knee (`_knee`: never straighter, never to the other side), on the component-major
layout the FK of the chains to the feet leaves ([joint, component, frame]); the root (unless
`lower_pelvis`), the upper body and every joint but the legs' and the toes' are untouched, and
so are bone lengths. Outside the contacts no leg joint turns further in a frame than its
largest step in the source (`_limit_steps`). Only the frames a lock touches are worked on;
every other frame is the source's, copied.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import ik, quat, skeleton
from .body import FeetSpec, with_feet
from .clip import Clip
from .contacts import runs
from .root import slide_of

Array = npt.NDArray[np.float64]

# Seconds over which a lock fades out after the lift, by default.
BLEND_TIME = 0.1
# A lock is full at most this long after the touchdown (easing in over the foot's deceleration).
EASE_IN = 0.1
# Meters: how far a lock may hold the foot from where the source has it when the lock is full,
# toward where the source's pivot is on average over the contact.
MEAN_SHIFT = 0.04
# m/s: the most a fading lock moves the foot on average.
FADE_SPEED = 0.5
# Radians: the most a held foot turns heel up on its ball beyond the source's (its toes bending),
# and then the whole foot on its toe tip (which lifts the ball: a foot nearly on end).
ROLL_MAX = math.radians(10.0)
TIP_MAX = math.radians(3.0)
# Meters: a lowered pelvis may go this much lower than the shortfall it makes up (the issue's
# 3 mm): room to ease into a need instead of following its kinks.
DROP_ROOM = 0.003
# Steps are kept this fraction under the source's largest (rounding stays under it too).
_STEP_MARGIN = 1e-6
# A foot farther than this from its lock (meters) after the solve is reported.
_SHORT_M = 0.01
# The hold's shift (`_shift`): meters of a knee's room to straighten at which a frame counts a
# quarter; the weight of the offset itself against that; rounds that weigh a leg made longer
# more, and by how much.
_FIT_ROOM = 0.002
_FIT_OFFSET = 0.01
_FIT_ROUNDS = 1
_FIT_LONG = 4.0


class FootLockWarning(UserWarning):
    """A locked foot could not be held where it was planted (the leg is too short there)."""


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


class _Holds(NamedTuple):
    """One foot's locks over its contact frames (laid end to end, [n]): the held ankle's offset
    from the source's [3, n] (over the floor), the lock's weight [n] (0 at a touchdown, 1 once
    full), and where the heel has come off [n] (the pivot is no longer the ankle)."""

    offset: Array
    weight: Array
    heel_off: np.ndarray


def _holds(up: Array, meters_per_unit: float, fps: float, starts: np.ndarray, stops: np.ndarray,
           A: Array, P: Array, H: Array, ease_in: float) -> _Holds:
    """One foot's locks over its contacts (runs [starts, stops) of a [T] mask), on the contact
    frames only, laid end to end: A [3, n] the ankle's and H [3, n] the hip's positions, P
    [K, 3, n] the foot's points (ankle first), world frame, file units, component-major.

    The held foot is the source's moved over the floor by the offset, which cancels the
    pivot's slide from the anchor on: each frame the pivot is the point that moves least into
    it, and its step over the floor is taken out. The anchor is where the landing has slowed
    the foot (its pivot's step within a tenth of the way from the slowest in the first
    `ease_in` seconds to the touchdown's), at most ease_in on; a contact no longer than that
    is full at once. Before the anchor the foot moves as the source's plus the offset it is
    held at there, weighed in by a smoothstep of the pivot's travel (the change is spread over
    the foot's own deceleration). The offset at the anchor (`_shift`) is where the source's
    pivot is over the contact, weighed toward the straight-kneed frames."""
    lengths = stops - starts
    n = A.shape[1]
    first = np.cumsum(lengths) - lengths  # each contact's touchdown, where it lies in the n
    last = first + lengths - 1
    ease = max(0, math.ceil(ease_in * fps - 1e-9))
    pivot = np.zeros(n, np.int64)
    moved = np.zeros(n)  # the pivot's step into each frame (m)
    slide = np.zeros((3, n))  # and its step over the floor
    if n > 1:
        step = P[:, :, 1:] - P[:, :, :-1]
        dist = np.sqrt(np.einsum("kcn,kcn->kn", step, step))
        k = np.argmin(dist, axis=0)
        pivot[1:] = k
        moved[1:] = dist[k, np.arange(n - 1)] * meters_per_unit
        at = k * (3 * (n - 1)) + np.arange(n - 1)
        flat = step.reshape(-1)
        for c in range(3):
            slide[c, 1:] = np.take(flat, at + c * (n - 1))
        slide -= np.outer(up, up @ slide)
        pivot[first] = 0
        moved[first] = 0.0
        slide[:, first] = 0.0
    reach = np.minimum(ease, lengths - 1)
    k = np.arange(ease + 1)
    at = np.minimum(first[:, None] + k[None, :], last[:, None])
    step_at = moved[np.minimum(at + 1, np.maximum(last, first + 1)[:, None]).clip(0, n - 1)]
    step_at = np.where(k[None, :] <= reach[:, None], step_at, np.inf)
    slowest = step_at.min(axis=1)
    settled = step_at <= (slowest + 0.1 * (step_at[:, 0] - slowest))[:, None]
    anchor = first + np.minimum(np.argmax(settled, axis=1), reach)
    # One planted no longer than the ease would take is held at once. (One planted on the take's
    # first frame eases in as any landing does: a take may start on a landing foot.)
    anchor = np.where(lengths <= ease, first, anchor)
    index = np.arange(n) - np.repeat(first, lengths)
    span = np.repeat(anchor - first, lengths)
    held = index >= span
    total = np.cumsum(slide, axis=1)
    total -= np.repeat(total[:, anchor], lengths, axis=1)
    # Before the anchor: the source's landing (the held offset weighed in below).
    offset = np.where(held, -total, 0.0)
    heel = np.maximum.reduceat(np.where(pivot == 0, np.arange(n), -1), first)
    heel_off = np.arange(n) > np.repeat(heel, lengths)
    shift = _shift(up, meters_per_unit, offset, A, H, held, first, lengths)
    shift *= anchor > first  # a lock that is full at once stays on the source's foot there
    offset += np.repeat(shift, lengths, axis=1)
    # The weight: 0 at the touchdown, 1 from the anchor on, in between a smoothstep of the
    # pivot's travel (of the frames when it does not travel).
    run = np.cumsum(moved)
    done = run - np.repeat(run[first], lengths)
    whole = np.repeat(done[anchor], lengths)
    progress = np.where(whole > 1e-9, done / np.where(whole > 1e-9, whole, 1.0), index / np.maximum(span, 1))
    weight = np.where(held, 1.0, _smoothstep(progress))
    return _Holds(offset, weight, heel_off)


def _shift(up: Array, meters_per_unit: float, offset: Array, A: Array, H: Array, held: np.ndarray,
           first: np.ndarray, lengths: np.ndarray) -> Array:
    """[3, k] the shift over the floor each contact's held foot gets (by at most MEAN_SHIFT):
    the least squares of the change it makes to the hip-to-ankle distance, each frame weighed
    by how little room the knee has there to straighten before it is straighter than the
    source's straightest in that contact (a long leg at a straight knee is what turns a knee
    by degrees), and a little of the offset itself; rounds weigh a leg made longer more."""
    ah = A - H
    d = _norm(ah)
    u = ah / np.maximum(d, 1e-12)
    top = np.repeat(np.maximum.reduceat(np.where(held, d, 0.0), first), lengths)
    room = (top - d) * meters_per_unit
    weight = np.where(held, (_FIT_ROOM / (room + _FIT_ROOM)) ** 2, 0.0)
    # In a basis of the floor (e1, e2): the leg's direction and the offset there.
    e1 = np.cross(up, np.eye(3)[int(np.argmin(np.abs(up)))])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(up, e1)
    u1, u2 = e1 @ u, e2 @ u
    o1, o2 = e1 @ offset, e2 @ offset
    radial = np.einsum("cn,cn->n", offset, u)
    on = held.astype(np.float64)
    count = np.add.reduceat(on, first)
    c = _FIT_OFFSET * count + 1e-12
    t1, t2 = np.add.reduceat(on * o1, first), np.add.reduceat(on * o2, first)
    w = weight
    for _ in range(_FIT_ROUNDS + 1):
        a11 = np.add.reduceat(w * u1 * u1, first) + c
        a12 = np.add.reduceat(w * u1 * u2, first)
        a22 = np.add.reduceat(w * u2 * u2, first) + c
        b1 = -np.add.reduceat(w * radial * u1, first) - _FIT_OFFSET * t1
        b2 = -np.add.reduceat(w * radial * u2, first) - _FIT_OFFSET * t2
        det = a11 * a22 - a12 * a12
        s1 = (a22 * b1 - a12 * b2) / det
        s2 = (a11 * b2 - a12 * b1) / det
        longer = radial + np.repeat(s1, lengths) * u1 + np.repeat(s2, lengths) * u2
        w = weight * np.where(longer > 0.0, _FIT_LONG, 1.0)
    shift = np.outer(e1, s1) + np.outer(e2, s2)
    size = np.sqrt(s1 * s1 + s2 * s2) * meters_per_unit
    return shift * np.minimum(1.0, MEAN_SHIFT / np.maximum(size, 1e-12))


def _heel_up(leg: _Leg, up: Array, planted: np.ndarray, target: Array, Q: Array, A: Array, H: Array,
             P: Array, heel_off: np.ndarray) -> tuple[Array, Array, Array, Array]:
    """A held foot turned heel up where its ankle would be farther from the hip than the source's,
    from where the heel came off (the ankle is no longer the pivot), by no more than the heel
    has risen since: on its ball (the toes keep their world rotation: a push-off's toe joint
    bends), then where that cannot bring the ankle near enough (the foot nearly on end) the
    whole foot on its toe tip. (target [3, n], ankle world rotation [4, n], the turn on the
    ball and the whole turn [4, n]) on the planted frames, from their target, source ankle
    rotation Q and position A, hip H, foot points P [K, 3, n] and heel_off [n]."""
    n = len(planted)
    turn = np.zeros((4, n))
    turn[0] = 1.0
    total = turn
    if len(P) < 3 and leg.ball is None:
        return target, Q, turn, total
    h = up @ A
    start = heel_off & ~np.concatenate([[False], heel_off[:-1]])
    rise = np.where(heel_off, h - h[np.maximum.accumulate(np.where(start, np.arange(n), 0))], 0.0)
    at = np.flatnonzero(rise > 0.0)
    if not at.size:
        return target, Q, turn, total
    target, Q, total = target.copy(), Q.copy(), turn.copy()
    t, q, hip, src, left = target[:, at], Q[:, at], H[:, at], A[:, at], rise[at]
    if leg.ball is not None:
        ball = P[1][:, at] + (t - src)  # (the held foot is the source's moved: its ball likewise)
        t, q, on_ball = _roll(t, q, ball, hip, src, left, up, ROLL_MAX)
        turn[:, at] = on_ball
        left = left - 2.0 * np.arctan2(_norm(on_ball[1:]), on_ball[0]) * _norm(t - ball)
    # Where that cannot bring the ankle near enough (the foot nearly on end), the whole foot on
    # its toe tip (the point farthest from the ankle), by no more than the heel has risen since
    # it came off.
    d = P[:, :, at[0]] - P[:, :, at[0]][:1]
    tip = P[int(np.argmax(np.einsum("kc,kc->k", d, d)))][:, at] + (target[:, at] - src)
    t, q, tipped = _roll(t, q, tip, hip, src, np.maximum(left, 0.0), up, TIP_MAX)
    target[:, at], Q[:, at] = t, q
    total[:, at] = np.stack(quat.mul_components(*tipped, *turn[:, at]))
    return target, Q, turn, total


def _roll(target: Array, ankle_rot: Array, tip: Array, hip: Array, src: Array, rise: Array, up: Array,
          most: float) -> tuple[Array, Array, Array]:
    """The held foot turned heel up about a point of it, `tip` [3, N] (its ball or toe tip), about
    the foot's own cross axis, where its ankle is farther from the hip than the source's:
    (target [3, N], ankle world rotation [4, N], the turn [4, N]) from the ankle's target and
    world rotation, the hip's and the source ankle's positions. The turn brings the ankle back
    to the source's distance from the hip as far as turning can, by at most `most` radians and
    by no more than lifts the heel as much again as the source's has risen since it came off
    (rise [N], 0: no turn)."""
    v = target - tip
    c = hip - tip
    lv = _norm(v)
    want = _norm(src - hip)
    axis = np.cross(v, up[:, None], axis=0)
    size = _norm(axis)
    a = axis / np.maximum(size, 1e-300)
    # c . (turned v) = rho cos(beta - phi): the distance to the hip falls as it grows.
    k1 = np.einsum("cn,cn->n", c, v)
    k2 = np.einsum("cn,cn->n", c, np.cross(a, v, axis=0))
    rho = np.sqrt(k1 * k1 + k2 * k2)
    phi = np.arctan2(k2, k1)
    F = 0.5 * (np.einsum("cn,cn->n", c, c) + lv * lv - want * want)
    beta = phi - np.arccos(np.clip(F / np.maximum(rho, 1e-300), -1.0, 1.0))
    cap = np.minimum(most, rise / np.maximum(lv, 1e-300))
    beta = np.where((size > 1e-6 * lv) & (phi > 0.0), np.clip(beta, 0.0, cap), 0.0)
    s = np.sin(0.5 * beta)
    turn = np.stack([np.cos(0.5 * beta), a[0] * s, a[1] * s, a[2] * s])
    return (tip + np.stack(quat.mul_vec_components(*turn, *v)),
            np.stack(quat.mul_components(*turn, *ankle_rot)), turn)


def _fades(starts: np.ndarray, stops: np.ndarray, T: int, after: Array, far: Array, fps: float,
           blend_frames: int) -> tuple[np.ndarray, Array, np.ndarray]:
    """The frames after each lift over which a lock fades out, with its weight and the contact
    each belongs to: over as long as the source foot speeds up (to its fastest before the next
    touchdown; `after` [3, T] the source ankle), at least blend_frames, no faster than
    FADE_SPEED on average for a foot held `far` [k] (meters) from the source's at the lift, by
    the next touchdown. The weight falls from 1 with a smoothstep (the foot is let go where the
    source's starts to move: its velocity is the source's there)."""
    nxt = np.append(starts[1:], T)
    room = nxt - stops
    longer = np.ceil(far / FADE_SPEED * fps).astype(np.int64)
    fade = np.minimum(np.maximum(np.maximum(blend_frames, longer), _to_fastest(after, stops, room)), room)
    m = np.maximum(fade, 0)
    owner = np.repeat(np.arange(len(stops)), m)
    before = np.cumsum(m) - m
    d = np.arange(m.sum()) - np.repeat(before, m) + 1
    return np.repeat(stops, m) + d - 1, _smoothstep(1.0 - d / (fade[owner] + 1.0)), owner


def _to_fastest(after: Array, stops: np.ndarray, room: np.ndarray) -> np.ndarray:
    """[k] frames from each lift (stops) to where the ankle (of `after` [3, T]) is nearly at its
    fastest before the next touchdown (room frames on): how long the source foot speeds up
    after it lifts."""
    T = after.shape[1]
    step = np.zeros(T)
    if T > 1:
        diff = np.diff(after, axis=1)
        step[1:] = np.sqrt(np.sum(diff * diff, axis=0))
    ok = room > 0
    out = np.zeros(len(stops), np.int64)
    if not ok.any():
        return out
    a, size = stops[ok], room[ok]
    offset = np.cumsum(size) - size
    frames = np.minimum(np.arange(int(size.sum())) + np.repeat(a - offset, size), T - 1)
    values = step[frames]
    # (the first frame within 10 % of the fastest: a plateau's float noise does not move it)
    peak = np.repeat(np.maximum.reduceat(values, offset), size)
    hit = np.where(values >= 0.9 * peak, np.arange(frames.size), frames.size)
    out[ok] = frames[np.minimum.reduceat(hit, offset)] - a
    return out


def _within(target: Array, hip: Array, src: Array, reach: Array) -> Array:
    """Targets [3, N] brought within `reach` [N] of the hip: beyond the soft start (ik's
    SOFT_START_LIMITED of the reach, or the source ankle's own distance if farther) the
    distance reached goes on growing ever slower toward the reach, as the IK's soft reach does
    (no kink a knee would show as a snap)."""
    v = target - hip
    d = _norm(v)
    s = np.minimum(np.maximum(ik.SOFT_START_LIMITED * reach, _norm(src - hip)), reach)
    far = d > s
    if not far.any():
        return target
    room = np.maximum(reach - s, 1e-12)
    soft = np.minimum(s + room * -np.expm1(-np.maximum(d - s, 0.0) / room), reach)
    return np.where(far, hip + v * (soft / np.maximum(d, 1e-300)), target)


def _lowered(need: Array, fps: float, frames: int, room: float) -> Array:
    """[T] how far the pelvis goes down: at least `need` [T] (file units), eased into it within
    `room` more (a parabola ahead of each need, as steep as the steepest need calls for), and
    eased back up over `frames` after each need ends (a source that bends its knee at the lift
    would let the pelvis spring back up within a frame)."""
    if not need.any():
        return need
    out = need.copy()
    rate = np.diff(need).max(initial=0.0) * fps
    if rate > 0.0 and room > 0.0:
        # need(t + tau) - a tau^2 / 2 stays under need(t) + room for a >= rate^2 / (2 room).
        a = rate * rate / (2.0 * room)
        # (a parabola from the largest need is under every need past sqrt(2 max / a))
        ahead = min(len(need) - 1, math.ceil(min(2.0 * rate / a, math.sqrt(2.0 * need.max() / a)) * fps))
        for k in range(1, ahead + 1):
            tau = k / fps
            np.maximum(out[:-k], need[k:] - 0.5 * a * tau * tau, out=out[:-k])
    if frames >= 1:
        base = out.copy()
        for k in range(1, frames + 1):
            w = float(_smoothstep(np.array(1.0 - k / (frames + 1.0))))
            np.maximum(out[k:], w * base[:-k], out=out[k:])
    return out


def _pelvis_drop(hip: Array, target: Array, r: Array, up: Array) -> Array:
    """[N] how far down the hip [3, N] must go for `target` [3, N] to be within r [N] of it."""
    v = target - hip
    vu = up @ v
    vv = np.einsum("cn,cn->n", v, v)
    disc = vu * vu - vv + r * r
    drop = np.where(disc >= 0.0, -vu - np.sqrt(np.maximum(disc, 0.0)), -vu)
    return np.where(vv > r * r, np.maximum(drop, 0.0), 0.0)


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _knee(gp: Array, gr: Array, index: np.ndarray, leg: _Leg, start: int,
          knee_local: tuple[Array, Array, Array] | None = None) -> tuple[Array, float, Array]:
    """A knee's hinge in its thigh's frame (the hip joint's: [3]) and the straightest the take has
    it (signed flexion, radians: negative past straight), from frame `start` on (a reference
    pose before the motion is not the take; a lock never moves it). The hinge is the bend
    planes' normals, hip - knee cross ankle - knee, taken into the thigh's frame and summed: a
    bent knee counts more than a nearly straight one, and a hyperextended frame cannot flip it.
    knee_local: (the knee's local rotations [4, T], the thigh from the knee to the hip and the
    ankle's offset, both [3, T] in the thigh's frame) where the knee's parent is the hip."""
    first = min(start, gp.shape[2] - 1)
    if knee_local is not None:
        # The knee's parent is the hip: the thigh and the shin in the thigh's frame from the
        # knee's local rotations alone (one rotation a frame, no world frames).
        lq, thigh, shin = knee_local
        shin = shin[:, first:] if shin.shape[1] > 1 else shin
        cb = np.stack(quat.mul_vec_components(*(x[first:] for x in lq), *shin))
        ab = thigh[:, first:] if thigh.shape[1] > 1 else thigh
        n = np.cross(ab, cb, axis=0)
        local = n.sum(axis=1)
        size = np.sqrt(local @ local)
        hinge = local / size if size > 0.0 else np.array([1.0, 0.0, 0.0])
        flexion = np.arctan2(hinge @ n, -(ab * cb).sum(axis=0))
        return hinge, float(flexion.min()), np.concatenate([np.full(first, np.inf), flexion])
    a, b, c = (gp[index[j], :, first:] for j in (leg.hip, leg.knee, leg.ankle))
    ab, cb = a - b, c - b
    n = np.cross(ab, cb, axis=0)
    q = gr[index[leg.hip], :, first:]
    local = np.stack(quat.mul_vec_components(q[0], -q[1], -q[2], -q[3], n[0], n[1], n[2])).sum(axis=1)
    size = np.sqrt(local @ local)
    hinge = local / size if size > 0.0 else np.array([1.0, 0.0, 0.0])
    h = np.stack(quat.mul_vec_components(q[0], q[1], q[2], q[3], *hinge))
    flexion = np.arctan2(np.einsum("cn,cn->n", n, h), -np.einsum("cn,cn->n", ab, cb))
    return hinge, float(flexion.min()), np.concatenate([np.full(first, np.inf), flexion])


class _Knee(NamedTuple):
    """A knee as the take has it: its hinge in its thigh's frame [3], its straightest (signed
    flexion, radians) and its flexion on each frame [T] (+inf before the motion), the thigh
    from the knee to the hip and the ankle's offset in the thigh's frame ([3, T], or [3, 1]
    where the file keys none)."""

    hinge: Array
    straightest: float
    flexion: Array
    thigh: Array
    shin: Array


class _Held(NamedTuple):
    """One foot's locks: on its contact frames `planted` [n] the ankle's target [3, n] and world
    rotation [4, n], its turn on the ball [4, n] (the toes keep their world rotation) and its
    whole turn; the source's ankle, hip and knee positions [3, n]; the frames after each lift
    a lock fades out over [m], the contact each belongs to and its weight [m]; each contact's
    last frame (an index into the planted frames) [k]."""

    planted: np.ndarray
    target: Array
    rot: Array
    turn: Array
    total: Array
    ankle: Array
    hip: Array
    knee: Array
    fades: np.ndarray
    owner: np.ndarray
    weight: Array
    last: np.ndarray


class _Side(NamedTuple):
    """One leg's solve, in time order: the frames [N], the ankle's target [3, N] and world rotation
    [4, N], the turn on the ball [4, N] and the source's hip, knee and ankle positions [3, N] (the
    pelvis lowered)."""

    frames: np.ndarray
    target: Array
    rot: Array
    turn: Array
    hip: Array
    knee: Array
    ankle: Array


def lock_feet(clip: Clip, *, contacts: Mapping[str, npt.ArrayLike] | None = None,
              feet: FeetSpec | None = None, blend_time: float = BLEND_TIME,
              lower_pelvis: bool = False, ease_in: float = EASE_IN) -> Clip:
    """A copy of `clip` whose planted feet stay where they landed (see the module notes).

    contacts: {'L': bool [T], 'R': bool [T]}, as `contacts.contacts` returns them (detected on the
        clip when None); a side left out is not locked.
    feet: {'L': ankle, 'R': ankle} by name or index (`body.with_feet`); None: the body map's.
    blend_time: seconds over which a lock fades out after the lift, at least (longer as the
        source foot speeds up, or for a foot held far from the source's).
    ease_in: seconds after a touchdown by which the lock is full, easing in over the landing
        foot's deceleration (0: full on the touchdown frame, as it is for a foot planted for no
        longer than the ease).
    lower_pelvis: where a foot cannot reach its lock, lower the motion root along up just enough
        (eased in within 3 mm more and out over blend_time); otherwise the foot is held as near
        as the leg reaches and a `FootLockWarning` says where.
    """
    if not (math.isfinite(ease_in) and ease_in >= 0.0):
        raise ValueError(f"ease_in must be finite and >= 0 seconds, not {ease_in}")
    if not (math.isfinite(blend_time) and blend_time >= 0.0):
        raise ValueError(f"blend_time must be finite and >= 0 seconds, not {blend_time}")
    clip = with_feet(clip, feet)
    clip.body.check_legs(clip.name)
    fk: dict[str, Any] = {}
    if contacts is None:
        from .contacts import contacts_keeping_fk

        contacts, fk = contacts_keeping_fk(clip)  # and the feet's FK it did, reused below
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
        index, lrot, gr, gp = quat.fk_joints(clip.rotations, clip.positions, clip.parents, used)
    up = clip.up
    mpu = clip.meters_per_unit
    blend_frames = max(0, math.ceil(blend_time * clip.fps - 1e-9))
    # Each knee's hinge (in its thigh's frame) and the straightest the take has it: the IK keeps
    # it on that side and never straighter.
    knees = {}
    for side, leg in legs.items():
        thigh, shin = -_translation(clip, leg.knee), _translation(clip, leg.ankle)
        knees[side] = _Knee(*_knee(gp, gr, index, leg, clip.motion_start, (lrot[index[leg.knee]], thigh, shin)
                                   if clip.parents[leg.knee] == leg.hip else None), thigh, shin)
    held = {side: _held(clip, leg, side, masks[side], index, gr, gp, ease_in, blend_frames)
            for side, leg in legs.items()}
    reach = {side: ik.reach_at(_norm(h.knee - h.hip), _norm(h.ankle - h.knee), knees[side].straightest)
             for side, h in held.items()}

    drop = np.zeros(T)
    if lower_pelvis:
        for side, h in held.items():
            # Down only as far as the IK then reaches (its soft start, or the pose's own), on the
            # contact frames and the fades.
            within = np.minimum(np.maximum(ik.SOFT_START_LIMITED * reach[side], _norm(h.ankle - h.hip)),
                                reach[side])
            drop[h.planted] = np.maximum(drop[h.planted], _pelvis_drop(h.hip, h.target, within, up))
            if h.fades.size:
                a, r = np.take(gp[index[legs[side].ankle]], h.fades, axis=1), reach[side][h.last][h.owner]
                hip = np.take(gp[index[legs[side].hip]], h.fades, axis=1)
                lift = (h.target - h.ankle)[:, h.last]
                need = _pelvis_drop(hip, a + h.weight * lift[:, h.owner], np.minimum(
                    np.maximum(ik.SOFT_START_LIMITED * r, _norm(a - hip)), r), up)
                drop[h.fades] = np.maximum(drop[h.fades], need)
        drop[drop * mpu < 1e-6] = 0.0  # rounding is no drop (a convention's float noise alike)
        drop = _lowered(drop, clip.fps, blend_frames, DROP_ROOM / mpu)
        drop[:clip.motion_start] = 0.0  # a converter's T-pose stays as it is
    # The output's own arrays (the solve writes into its rotations), its root lowered.
    out = clip.replace(positions=_root_lowered(clip, drop)) if drop.any() else clip.copy()

    # The solve: the contact frames held as near as the leg reaches (the pelvis lowered), and
    # the fades where the pelvis is lowered, from the foot as held at the lift; a lowered pelvis
    # moves every foot: those not locked are held where the source had them. Elsewhere a lock
    # is let go in the leg's joints (`_solved`).
    sides: dict[str, _Side] = {}
    letgo: dict[str, tuple[np.ndarray, np.ndarray, Array]] = {}
    short = []
    for side, leg in legs.items():
        h = held[side]
        down = drop[h.planted] * up[:, None]
        hip = h.hip - down
        target = _within(h.target, hip, h.ankle - down, reach[side])
        miss = _norm(target - h.target) * mpu
        if miss.max(initial=0.0) > _SHORT_M:
            far = miss > _SHORT_M
            short.append(f"{side} on {int(far.sum())} frame{'s' if far.sum() > 1 else ''} "
                         f"({_ranges(h.planted[far])}), up to {miss.max() * 100:.1f} cm short")
        parts = [(h.planted, target, h.rot, h.turn, hip, h.knee - down, h.ankle - down)]
        ik_fade = drop[h.fades] > 0.0
        letgo[side] = (h.fades[~ik_fade], h.planted[h.last][h.owner[~ik_fade]], h.weight[~ik_fade])
        if ik_fade.any():
            f, owner, w = h.fades[ik_fade], h.owner[ik_fade], h.weight[ik_fade][None]
            d = drop[f] * up[:, None]
            a = np.take(gp[index[leg.ankle]], f, axis=1)
            lift = (target - h.ankle)[:, h.last][:, owner]
            rot = np.stack(quat.mul_components(*_scaled(h.total[:, h.last][:, owner], w[0]),
                                       *np.take(gr[index[leg.ankle]], f, axis=1)))
            fhip = np.take(gp[index[leg.hip]], f, axis=1) - d
            parts.append((f, _within(a + w * lift, fhip, a - d, reach[side][h.last][owner]), rot,
                          _scaled(h.turn[:, h.last][:, owner], w[0]), fhip,
                          np.take(gp[index[leg.knee]], f, axis=1) - d, a - d))
        inside = np.zeros(T, dtype=bool)
        inside[h.planted] = True
        inside[h.fades] = True
        more = np.flatnonzero((drop > 0.0) & ~inside)
        if more.size:
            d = drop[more] * up[:, None]
            a, fhip, k = (np.take(gp[index[j]], more, axis=1) for j in (leg.ankle, leg.hip, leg.knee))
            r = ik.reach_at(_norm(k - fhip), _norm(a - k), knees[side].straightest)
            parts.append((more, _within(a, fhip - d, a - d, r), np.take(gr[index[leg.ankle]], more, axis=1),
                          np.tile([[1.0], [0.0], [0.0], [0.0]], more.size), fhip - d, k - d,
                          a - d))
        sides[side] = _side(parts)
    return _solved(clip, out, legs, sides, letgo, knees, masks, index, lrot, gr, short, lower_pelvis)


def _root_lowered(clip: Clip, drop: Array) -> Array:
    """The clip's local translations [T, J, 3] (a copy) with its motion root `drop` [T] (file
    units) lower along up in the world, the joints above it as they are."""
    pos = clip.positions.copy()
    slide_of(clip.rotations, pos, clip.parents, clip.root, [], -drop[:, None] * clip.up)
    return pos


def _held(clip: Clip, leg: _Leg, side: str, mask: np.ndarray, index: np.ndarray, gr: Array, gp: Array,
          ease_in: float, blend_frames: int) -> _Held:
    """One foot's locks (`_holds`, turned heel up by `_heel_up`) and the frames they fade out over."""
    starts, stops = runs(mask)
    planted = np.flatnonzero(mask)
    a_row = index[leg.ankle]
    A, H, K, Q = (np.take(x, planted, axis=1) for x in (gp[a_row], gp[index[leg.hip]], gp[index[leg.knee]],
                                                         gr[a_row]))
    P = _points(clip, leg, side, index, gr, gp, planted, A, Q)
    holds = _holds(clip.up, clip.meters_per_unit, clip.fps, starts, stops, A, P, H, ease_in)
    target = A + holds.weight * holds.offset
    target, rot, turn, total = _heel_up(leg, clip.up, planted, target, Q, A, H, P, holds.heel_off)
    last = np.cumsum(stops - starts) - 1
    far = _norm(target[:, last] - A[:, last]) * clip.meters_per_unit
    fades, weight, owner = _fades(starts, stops, clip.n_frames, gp[a_row], far, clip.fps, blend_frames)
    return _Held(planted, target, rot, turn, total, A, H, K, fades, owner, weight, last)


def _points(clip: Clip, leg: _Leg, side: str, index: np.ndarray, gr: Array, gp: Array, planted: np.ndarray,
            A: Array, Q: Array) -> Array:
    """[K, 3, n] the foot's points on the planted frames: the ankle (A), the ball, the foot's other
    joints and their End Sites; a point ahead of the ankle where the foot has no other."""
    foot = [j for j in clip.body.feet[side] if index[j] >= 0]
    if leg.ball is not None:
        foot = [leg.ankle, leg.ball] + [j for j in foot if j not in (leg.ankle, leg.ball)]
    pos = {leg.ankle: A} | {j: np.take(gp[index[j]], planted, axis=1) for j in foot[1:]}
    rot_at = {leg.ankle: Q}
    pts = [pos[j] for j in foot]
    for site in np.flatnonzero(np.isin(clip.end_parents, foot)):
        o = int(clip.end_parents[site])
        if o not in rot_at:
            rot_at[o] = np.take(gr[index[o]], planted, axis=1)
        tip = quat.mul_vec_components(*rot_at[o], *clip.end_offsets[site])
        pts.append(np.stack([pos[o][c] + tip[c] for c in range(3)]))
    if len(pts) < 2:
        ahead = quat.mul_vec_components(*Q, *clip.forward)
        pts = [A, np.stack([A[c] + ahead[c] for c in range(3)])]
    return np.stack(pts)


def _side(parts: list[tuple[np.ndarray, Array, Array, Array, Array, Array, Array]]) -> _Side:
    """A leg's solve from parts (frames, target, rotation, turn, hip, knee, ankle), in time order."""
    if len(parts) == 1:
        return _Side(*parts[0])
    frames = np.concatenate([p[0] for p in parts])
    order = np.argsort(frames, kind="stable")
    return _Side(frames[order],
                 *(np.concatenate([p[i] for p in parts], axis=1)[:, order] for i in range(1, 7)))


def _solved(clip: Clip, out: Clip, legs: Mapping[str, _Leg], sides: Mapping[str, _Side],
            letgo: Mapping[str, tuple[np.ndarray, np.ndarray, Array]], knees: Mapping[str, _Knee],
            masks: Mapping[str, np.ndarray], index: np.ndarray, lrot: Array, gr: Array,
            short: list[str], lower_pelvis: bool) -> Clip:
    """`out` (the clip's copy, its pelvis lowered: written into) with each leg solved on the frames
    of its side, its locks let go in the joints on the frames of `letgo` ((frames, lift, weight)
    per leg: the correction the solve made to each joint at the lift fades out, a slerp to none,
    the knee kept no straighter than the take's), the steps outside the contacts limited, and a
    FootLockWarning for the feet held short. The new locals go into the FK's own
    (component-major, in place) once the source's steps are known."""
    T = clip.n_frames
    first = clip.motion_start
    joints = [j for leg in legs.values() for j in (leg.hip, leg.knee, leg.ankle)]
    toes = [leg.ball for side, leg in legs.items()
            if leg.ball is not None and bool((sides[side].turn[0] < 1.0).any())]
    rows = index[joints + toes]
    dq = _steps(lrot, rows, first)
    # The legs' joints held on the contact frames (easing in too: the lock holds them), and the
    # toes where the foot turns on its ball.
    pinned = np.zeros((len(rows), T), dtype=bool)
    for n_leg, (side, leg) in enumerate(legs.items()):
        s = sides[side]
        pinned[3 * n_leg:3 * n_leg + 3] = masks[side]
        if leg.ball in toes:
            pinned[len(joints) + toes.index(leg.ball)] = masks[side]
        _solve_leg(clip, leg, s, knees[side], index, lrot, gr)
        fade, lift, weight = letgo[side]
        if fade.size:
            _let_go(clip, leg, fade, lift, weight, knees[side], index, lrot, leg.ball in toes)
    _limit_steps(clip.rotations, np.array(joints + toes), dq, lrot, rows, first, pinned)
    for j, r in zip(joints + toes, rows, strict=True):
        out.rotations[:, j] = lrot[r].T
    if short:
        advice = (" (with the pelvis lowered)" if lower_pelvis
                  else ". lower_pelvis=True lowers the pelvis instead")
        warnings.warn(f"{clip.name or 'the take'}: a foot could not reach its lock, held as near as the "
                      f"leg reaches: {'; '.join(short)}{advice}", FootLockWarning, stacklevel=3)
    return out


def _solve_leg(clip: Clip, leg: _Leg, s: _Side, knee: _Knee, index: np.ndarray, lrot: Array,
               gr: Array) -> None:
    """One leg solved on the frames of `s` (its targets within reach: reached exactly), its hip,
    knee and ankle locals written into lrot; where the foot turns on its ball the toes keep
    their world rotation."""
    frames = s.frames

    def world(j: int) -> Array:
        """World rotations [4, N] of joint j on the frames (the identity for no joint)."""
        if j < 0:
            return np.tile([[1.0], [0.0], [0.0], [0.0]], len(frames))
        return np.take(gr[index[j]], frames, axis=1)

    hip_rot, knee_rot = world(leg.hip), world(leg.knee)
    hinge = quat.mul_vec_components(*_q4(hip_rot), *knee.hinge)
    got = ik.solve(_v3(s.hip), _v3(s.knee), _v3(s.ankle), _q4(hip_rot), _q4(knee_rot), _v3(s.target),
                   bend=np.stack(hinge, axis=-1), min_flexion=knee.straightest, soft=False)
    # Back to locals: the hip's parent is as it was, the knee's parent swung with the thigh.
    p_hip = world(int(clip.parents[leg.hip]))
    p_knee = hip_rot if clip.parents[leg.knee] == leg.hip else world(int(clip.parents[leg.knee]))
    k = got.knee
    for j, q in ((leg.hip, quat.mul_components(p_hip[0], -p_hip[1], -p_hip[2], -p_hip[3], *got.hip)),
                 (leg.knee, quat.mul_components(p_knee[0], -p_knee[1], -p_knee[2], -p_knee[3], *got.opened)),
                 (leg.ankle, quat.mul_components(k[0], -k[1], -k[2], -k[3], *_q4(s.rot)))):
        local = lrot[index[j]]
        new = np.stack(q)
        # (unit as they are, products of unit rotations: on the side of the source's keys)
        new *= np.where(np.einsum("cn,cn->n", new, np.take(local, frames, axis=1)) < 0.0, -1.0, 1.0)
        for c in range(4):
            local[c][frames] = new[c]
    turned = s.turn[0] < 1.0
    if leg.ball is not None and turned.any():
        # The toes keep their world rotation as the foot turns heel up on its ball: inv(R Q) Q.
        at, t = frames[turned], s.turn[:, turned]
        local = lrot[index[leg.ball]]
        Q = np.take(gr[index[leg.ankle]], at, axis=1)
        RQ = quat.mul_components(*t, *Q)
        rel = quat.mul_components(RQ[0], -RQ[1], -RQ[2], -RQ[3], *Q)
        old = np.take(local, at, axis=1)
        new = _unit_near(np.stack(quat.mul_components(*rel, *old)), old)
        for c in range(4):
            local[c][at] = new[c]


def _let_go(clip: Clip, leg: _Leg, fade: np.ndarray, lift: np.ndarray, weight: Array, knee: _Knee,
            index: np.ndarray, lrot: Array, toes: bool) -> None:
    """A leg's locks let go in its joints on the frames `fade` [m]: the correction the solve made
    to each joint (and the toes', where they turned) at each one's lift [m] fades out with
    `weight` [m], the knee turned back about its hinge where it would be straighter than the
    take's. Each lift's corrections once, as rotation vectors; the source's locals on the fade
    frames are still the FK's, untouched."""
    lifts, owner = np.unique(lift, return_inverse=True)
    for j in (leg.hip, leg.knee, leg.ankle) + ((leg.ball,) if toes and leg.ball is not None else ()):
        local = lrot[index[j]]
        v = _log(np.take(local, lifts, axis=1), clip.rotations[lifts, j].T)[:, owner] * weight
        new = np.stack(quat.mul_components(*_exp(v), *np.take(local, fade, axis=1)))
        if j == leg.knee and clip.parents[leg.knee] == leg.hip:
            # (only where the correction could take the knee past it: it turns the knee by no
            # more than its angle)
            near = np.flatnonzero(np.take(knee.flexion, fade) - _norm(v) < knee.straightest + 1e-9)
            if near.size:
                at, q, hinge = fade[near], new[:, near], knee.hinge
                thigh, shin = (x if x.shape[1] == 1 else np.take(x, at, axis=1)
                               for x in (knee.thigh, knee.shin))
                h = np.sin(-0.5 * np.maximum(knee.straightest - _flexion(q, thigh, shin, hinge), 0.0))
                new[:, near] = np.stack(quat.mul_components(np.sqrt(1.0 - h * h), hinge[0] * h, hinge[1] * h,
                                                    hinge[2] * h, *q))
        for c in range(4):
            local[c][fade] = new[c]


def _merge(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows [a, b] (frame indices, inclusive) merged where they overlap; sorted."""
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    # Windows that only share an end frame stay apart: both keep that frame as it was.
    start = np.flatnonzero(np.concatenate([[True], a[1:] >= np.maximum.accumulate(b)[:-1]]))
    return a[start], np.maximum.reduceat(b, start)


def _steps(local: Array, rows: np.ndarray, first: int) -> Array:
    """|cos(half angle)| of each frame-to-frame step of joints `rows` of component-major local
    rotations [J, 4, T], from frame `first` on: [len(rows), T - first - 1]."""
    n = local.shape[2] - first
    d = np.empty((len(rows), max(n - 1, 0)))
    for i, r in enumerate(rows):
        x = local[r, :, first:]
        np.multiply(x[0, 1:], x[0, :-1], out=d[i])
        for c in range(1, 4):
            d[i] += x[c, 1:] * x[c, :-1]
    return np.abs(d, out=d)


def _limit_steps(src: Array, joints: np.ndarray, dq: Array, out: Array, rows: np.ndarray, first: int,
                 pinned: np.ndarray) -> None:
    """Keep each frame-to-frame rotation step of the output's `joints` (rows `rows` of `out`, local
    rotations [., 4, T] component-major) within the largest step of the source's (`src`, local
    rotations [T, J, 4]; `dq` its steps, as `_steps` gives them), from frame `first` on; `out`
    changed in place. Where a step is larger, the correction the output makes to the source
    (out inv(src), in the parent's frame) is spread over just enough frames around it: along
    the shortest arc between its values at the window's ends, each frame's share in proportion
    to the room the source's own step leaves there, so that share plus the source's step (an
    upper bound on the output's step) stays within the largest. Windows grow only over frames
    not `pinned` ([len(joints), T], the locked ones), which stay as they are, and so does each
    first frame. The joints' frames are laid end to end, joint j's frame i at j n + i: one pass
    for all, the room worked out only on the frames the windows cover."""
    T = out.shape[2]
    n = T - first
    if n < 2:
        return
    dp = _steps(out, rows, first)
    limit = 2.0 * np.arccos(np.minimum(dq.min(axis=1), 1.0)) * (1.0 - _STEP_MARGIN)
    bad = np.flatnonzero(dp < np.cos(0.5 * limit)[:, None])
    if not bad.size:
        return
    bad_j, bad_i = np.divmod(bad, n - 1)
    flat_dq = dq.reshape(-1)

    def room(k: np.ndarray) -> Array:
        """What the source's step from frame i to i + 1 leaves at flat indices k = j n + i (0 at
        each joint's last frame)."""
        j, i = np.divmod(k, n)
        step = 2.0 * np.arccos(np.minimum(np.take(flat_dq, j * (n - 1) + np.minimum(i, n - 2)), 1.0))
        return np.where(i < n - 1, np.maximum(np.take(limit, j) - step, 0.0), 0.0)

    def spans(a: np.ndarray, b: np.ndarray) -> tuple[Array, np.ndarray, np.ndarray, Array]:
        """Over each window [a, b]: (the room summed from a up to each of its frames f, f, the
        window of each, the whole window's room, from a to b)."""
        length = b - a + 1
        win = np.repeat(np.arange(len(a)), length)
        begin = np.cumsum(length) - length
        f = np.arange(length.sum()) - np.repeat(begin - a, length)
        r = room(f)
        cum = np.cumsum(r) - r  # the room before each frame
        cum -= np.repeat(cum[begin], length)
        return cum, f, win, cum[begin + length - 1]

    n_src = src.shape[1]
    if not out.flags.c_contiguous:
        raise ValueError("_limit_steps changes out through a flat view: it must be C-contiguous")
    out_flat, src_flat = out.reshape(-1), np.ascontiguousarray(src).reshape(-1)

    def at(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where flat indices k lie in out's and in src's memory (their w; x, y, z follow T and
        1 further on)."""
        j, i = np.divmod(k, n)
        i += first
        return np.take(rows, j) * (4 * T) + i, (i * n_src + np.take(joints, j)) * 4

    def corr(k: np.ndarray) -> Array:
        """The output's correction to the source at flat indices k, (w, x, y, z) [4, len(k)]."""
        o_at, s_at = at(k)
        o = [np.take(out_flat, o_at + c * T) for c in range(4)]
        s = [np.take(src_flat, s_at + c) for c in range(4)]
        return np.stack(quat.mul_components(o[0], o[1], o[2], o[3], s[0], -s[1], -s[2], -s[3]))

    def angle(x: Array, y: Array) -> Array:
        """Angles of the rotations taking x to y ([4, N] each)."""
        d = np.abs(x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3])
        return 2.0 * np.arccos(np.minimum(d, 1.0))

    # A window's ends may be locked frames (kept as they are) but nothing inside it: the lock
    # holds. It grows past an end that is a free frame. A take's first frame stays as it is
    # too (what comes before it, a transition's switch, joins there).
    def free(k: np.ndarray) -> np.ndarray:
        j, i = np.divmod(k, n)
        return ~pinned[j, i + first] & (i > 0)

    a = bad_j * n + bad_i
    b = a + 1
    while True:
        a, b = _merge(a, b)
        ca, cb = np.split(corr(np.concatenate([a, b])), 2, axis=1)
        arc = angle(ca, cb)
        free_a, free_b = free(a), free(b) & (b % n != n - 1)
        cum, f, win, whole = spans(a, b)
        grow = (arc > whole) & (free_a | free_b)
        if not grow.any():
            break
        a = np.where(grow & free_a, a - 1, a)
        b = np.where(grow & free_b, b + 1, b)
    # Along each window, from the correction at its start to the one at its end, each frame's
    # share of the turn in proportion to its room. A window short of room (between locked
    # frames) shares it a little more evenly: a source step at the largest leaves no room.
    short = arc > whole
    # One that runs into the take's end goes as far toward the end's correction as its room allows.
    loose = short & (b % n == n - 1) & free(b)
    reach = np.where(loose, whole / np.where(arc > 0.0, arc, 1.0), 1.0)
    short &= ~loose
    even = 1e-3 * limit[a // n]  # added to each frame's room
    # The turn from ca to cb, the shorter way: half angle and axis.
    tw, tx, ty, tz = quat.mul_components(cb[0], cb[1], cb[2], cb[3], ca[0], -ca[1], -ca[2], -ca[3])
    sin = np.sqrt(tx * tx + ty * ty + tz * tz)
    half = np.arctan2(sin, np.abs(tw))
    axis = np.stack([tx, ty, tz]) * (np.where(tw < 0.0, -1.0, 1.0) / np.where(sin > 0.0, sin, 1.0))
    cum = cum + np.where(short, even, 0.0)[win] * (f - a[win])
    whole = whole + np.where(short, even, 0.0) * (b - a)
    x = cum / np.where(whole > 0.0, whole, 1.0)[win] * (reach * half)[win]
    s = np.sin(x)
    ax = np.take(axis, win, axis=1)
    h = quat.mul_components(np.cos(x), ax[0] * s, ax[1] * s, ax[2] * s, *np.take(ca, win, axis=1))
    o_at, s_at = at(f)
    r = np.stack([np.take(src_flat, s_at + c) for c in range(4)])
    for c, value in enumerate(_unit_near(np.stack(quat.mul_components(*h, r[0], r[1], r[2], r[3])), r)):
        out_flat[o_at + c * T] = value


def _translation(clip: Clip, joint: int, frames: np.ndarray | None = None) -> Array:
    """A joint's local translation [3, T] (or on `frames`), [3, 1] where the file keys none (its
    offset on every frame: no copy of a column of the take's positions)."""
    if not any(c.endswith("position") for c in clip.channels[joint]):
        return np.asarray(clip.positions[0, joint])[:, None]
    return (clip.positions[:, joint] if frames is None else clip.positions[frames, joint]).T


def _flexion(knee: Array, thigh: Array, shin: Array, hinge: Array) -> Array:
    """[N] a knee's signed flexion (radians) from its local rotations [4, N], in the thigh's
    frame: thigh [3, N] from the knee to the hip, shin [3, N] the ankle's offset, hinge [3]."""
    cb = np.stack(quat.mul_vec_components(*knee, *shin))
    n = np.cross(thigh, cb, axis=0)
    return np.arctan2(hinge @ n, -(thigh * cb).sum(axis=0))


def _log(new: Array, src: Array) -> Array:
    """[3, N] the rotation vector (axis times angle) of the correction new inv(src), each [4, N]."""
    c = np.stack(quat.mul_components(new[0], new[1], new[2], new[3], src[0], -src[1], -src[2], -src[3]))
    c *= np.where(c[0] < 0.0, -1.0, 1.0)
    sin = np.sqrt(c[1] * c[1] + c[2] * c[2] + c[3] * c[3])
    return c[1:] * (2.0 * np.arctan2(sin, c[0]) / np.where(sin > 0.0, sin, 1.0))


def _exp(v: Array) -> Array:
    """[4, N] the rotations of rotation vectors v [3, N]."""
    angle = _norm(v)
    scale = np.sin(0.5 * angle) / np.where(angle > 0.0, angle, 1.0)
    return np.stack([np.cos(0.5 * angle), v[0] * scale, v[1] * scale, v[2] * scale])


def _scaled(turn: Array, weight: Array) -> Array:
    """[4, N] rotations `turn` [4, N] scaled by `weight` [N] (their rotation vectors)."""
    sin = _norm(turn[1:])
    angle = 2.0 * np.arctan2(sin, np.abs(turn[0])) * weight
    s = np.sin(0.5 * angle) * np.where(turn[0] < 0.0, -1.0, 1.0) / np.where(sin > 0.0, sin, 1.0)
    return np.stack([np.cos(0.5 * angle), turn[1] * s, turn[2] * s, turn[3] * s])


def _ranges(frames: np.ndarray) -> str:
    """'frames 28-33, 40' for sorted frame indices (the first six runs, '...' after)."""
    cut = np.flatnonzero(np.diff(frames) > 1) + 1
    runs = [(int(r[0]), int(r[-1])) for r in np.split(frames, cut)]
    text = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:6])
    text += ", ..." if len(runs) > 6 else ""
    return f"frame{'s' if len(frames) > 1 else ''} {text}"


def _unit_near(q: Array, ref: Array) -> Array:
    """Rotations q [4, N] made unit, in place, on the side of the sphere of ref's [4, N] (q and -q
    are one rotation; the keys stay sign-continuous with the source's)."""
    size = np.maximum(np.sqrt(np.einsum("cn,cn->n", q, q)), 1e-12)
    q *= np.where(np.einsum("cn,cn->n", q, ref) < 0.0, -1.0, 1.0) / size
    return q


def _v3(x: Array) -> ik.Vec:
    return x[0], x[1], x[2]


def _q4(x: Array) -> ik.Quat:
    return x[0], x[1], x[2], x[3]


def _norm(v: Array) -> Array:
    """Lengths of [3, N] vectors."""
    return np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
