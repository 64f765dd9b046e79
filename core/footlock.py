"""Foot locking: planted feet held where they landed, by two-bone IK on the legs.

During each contact the foot's pivot, the point it stands on, stays put: each step, the ankle
moves only as the foot rolls (or turns) about the point of it (ankle, ball, toe tips) that moves
least in the source over that step, so the heel holds after touchdown and the ball or toe once
the heel lifts, and a source that slides (or whose root was sped up) no longer does. The foot
keeps the source's rotation. It is held where the source's pivot is on average over the contact
(by at most MEAN_SHIFT from where it is when the lock is full), never below where the source
stood it in that contact. A lock eases in from the touchdown over the landing foot's
deceleration, full at most `ease_in` after it (`_locks`), and is let go from the lift, where the
source foot speeds up for good, by fading the IK's correction to each leg joint (`_faded`).
The legs (hip, knee, ankle) are solved by `ik.solve` with each knee's hinge and the take's
straightest knee (`_knee`: never straighter, never to the other side), on the component-major
layout the FK of the chains to the feet leaves ([joint, component, frame]); the root (unless
`lower_pelvis`), the upper body and the toes' local rotations are untouched, and so are bone
lengths. Outside the locks no leg joint turns further in a frame than its largest step in the
source (`_limit_steps`).

Only what the locks touch is worked on: each foot's locks on its contact frames (`_locks`), the
IK of both legs at once on the frames where a lock holds (laid end to end, each leg's in time
order), the let-go on the frames after each lift, the step limit on the frames around the steps
it spreads; every other frame is the source's, copied.
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
from .root import root_world, with_root_world

Array = npt.NDArray[np.float64]

# Seconds over which a lock fades out after the lift, by default.
BLEND_TIME = 0.1
# A lock is full at most this long after the touchdown (easing in over the foot's deceleration).
EASE_IN = 0.1
# Meters: how far a lock may hold the foot from where the source has it at the anchor, toward
# where the source's pivot is on average over the contact.
MEAN_SHIFT = 0.02
# m/s: the most a fading lock moves the foot on average.
FADE_SPEED = 0.5
# Steps are kept this fraction under the source's largest (rounding stays under it too).
_STEP_MARGIN = 1e-6
# A foot farther than this from its lock (meters) after the solve is reported.
_SHORT_M = 0.01


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


def _locks(up: Array, meters_per_unit: float, fps: float, T: int, blend_frames: int, starts: np.ndarray,
           stops: np.ndarray, A: Array, P: Array, after: Array, begin: int = 0,
           ease_in: float = 0.1) -> tuple[np.ndarray, Array, Array]:
    """One foot's locks over its contacts (runs [starts, stops) of a [T] mask), on the contact
    frames only, laid end to end: A [3, n] the ankle's positions and P [K, 3, n] the foot's points
    (ankle, ball, toe tips), world frame, file units, component-major; `after` [3, T] the ankle's
    positions on every frame (for the releases); `begin` the take's first frame of motion.
    Returns (frames [N], held ankle [3, N], weight [N]) over the frames the locks touch, in time
    order: the contact frames and after each lift those the lock lets go over (the IK's
    straight legs take the bend of the nearest frame in that order). The ankle's target is its
    position + weight (held - position); its world rotation stays the source's (a foot that
    turns on its ball keeps turning).

    A lock eases in from the touchdown: it is full on its anchor, at most ease_in seconds on,
    where the held foot is the source's, and before that the ankle goes from the source's to the
    held one's as the source foot covers the ground to the anchor (a smoothstep of the pivot's
    travel: the change is spread over the foot's own deceleration, and the target's velocity
    is the source's at the touchdown and the held foot's at the anchor). After the lift (where
    the source foot speeds up for good) the held foot's offset from the source's fades out with
    a smoothstep, over as long as the source foot speeds up (to its fastest), at least
    blend_frames and no faster than FADE_SPEED, by the next touchdown."""
    lengths = stops - starts
    n = A.shape[1]
    first = np.cumsum(lengths) - lengths  # each contact's touchdown, where it lies in the n
    last = first + lengths - 1
    ease = max(0, math.ceil(ease_in * fps - 1e-9))
    roll = np.zeros((3, n))
    moved = np.zeros(n)  # the pivot's step into each frame (m)
    if n > 1:
        step = P[:, :, 1:] - P[:, :, :-1]
        step *= step
        dist = np.sqrt(step[:, 0] + step[:, 1] + step[:, 2])
        k = np.argmin(dist, axis=0)
        moved[1:] = dist[k, np.arange(n - 1)] * meters_per_unit
        at = k * (3 * n) + np.arange(1, n)
        flat = P.reshape(-1)
        for c in range(3):
            np.subtract(np.take(flat, at + c * n) - A[c, 1:], np.take(flat, at + (c * n - 1)) - A[c, :-1],
                        out=roll[c, 1:])
        roll[:, first] = 0.0
        moved[first] = 0.0
    # The anchor: where the foot's landing has slowed it (its pivot's step within a tenth of the
    # way from the slowest in the first EASE_IN seconds to the touchdown's), at most EASE_IN on;
    # a contact that starts with the foot as slow as it gets (no landing: a lock from a
    # transition's switch on) is full at once.
    reach = np.minimum(ease, lengths - 1)
    k = np.arange(ease + 1)
    at = np.minimum(first[:, None] + k[None, :], (last)[:, None])
    step_at = moved[np.minimum(at + 1, np.maximum(last, first + 1)[:, None]).clip(0, n - 1)]
    step_at = np.where(k[None, :] <= reach[:, None], step_at, np.inf)
    slowest = step_at.min(axis=1)
    settled = step_at <= (slowest + 0.1 * (step_at[:, 0] - slowest))[:, None]
    anchor = first + np.minimum(np.argmax(settled, axis=1), reach)
    # A foot planted on the take's first frame landed before it, and one planted no longer than
    # the ease would take (a transition's blend has feet planted for a few frames): held at once.
    anchor = np.where((starts <= begin) | (lengths <= ease), first, anchor)
    total = np.cumsum(roll, axis=1)
    total -= np.repeat(total[:, anchor], lengths, axis=1)
    hold = np.repeat(A[:, anchor], lengths, axis=1) - total
    # Where the source's pivot wanders over the floor (mocap jitter, a slow slide), the foot is
    # held where it is on average from the anchor to the lift: as near as can be to the
    # source's on every frame, so that the leg reaches it where the source's knee is straightest.
    index = np.arange(n) - np.repeat(first, lengths)
    span = np.repeat(anchor - first, lengths)
    held_on = (index >= span).astype(np.float64)
    drift = A - hold
    drift -= np.outer(up, up @ drift)
    count = np.add.reduceat(held_on, first)
    mean = np.stack([np.add.reduceat(drift[c] * held_on, first) for c in range(3)]) / np.maximum(count, 1.0)
    # (by at most MEAN_SHIFT: a foot the source slides far is held near where it landed)
    size = np.sqrt(np.sum(mean * mean, axis=0)) * meters_per_unit
    mean *= np.minimum(1.0, MEAN_SHIFT / np.maximum(size, 1e-12))
    mean *= anchor > first  # a lock that is full at once stays on the source's foot there
    hold += np.repeat(mean, lengths, axis=1)
    # Never lower than the source stood the foot in this contact: where a pivot held as the
    # foot pitches (its points by turns) would put one of its points below that, up.
    h_src = np.einsum("c,kcn->kn", up, P)
    floor = np.minimum.reduceat(h_src.min(axis=0), first)
    lowest = (h_src + (up @ (hold - A))[None]).min(axis=0)
    hold += up[:, None] * np.maximum(np.repeat(floor, lengths) - lowest, 0.0)
    # The weight over each contact: 0 at the touchdown, 1 from the anchor on, in between a
    # smoothstep of the pivot's travel (of the frames when it does not travel).
    run = np.cumsum(moved)
    done = run - np.repeat(run[first], lengths)
    whole = np.repeat(done[anchor], lengths)
    progress = np.where(whole > 1e-9, done / np.where(whole > 1e-9, whole, 1.0),
                        index / np.maximum(span, 1))
    w_in = np.where(index >= span, 1.0, _smoothstep(progress))
    planted = np.repeat(starts - first, lengths) + np.arange(n)
    if blend_frames <= 0:
        return planted, hold, w_in
    # After each lift the foot is let go over the source foot's own speeding up (to its fastest
    # before the next touchdown, at least blend_frames), by the next touchdown at the latest.
    nxt = np.append(starts[1:], T)
    room = nxt - stops
    # A foot held far from where the source lifts it is let go no faster than FADE_SPEED on
    # average: a 10 cm offset over 0.2 s, not in three frames at 30 fps.
    lift = hold[:, last] - A[:, last]
    far = np.sqrt(np.sum(lift * lift, axis=0)) * meters_per_unit
    longer = np.ceil(far / FADE_SPEED * fps).astype(np.int64)
    fade = np.minimum(np.maximum(np.maximum(blend_frames, longer), _to_fastest(after, stops, room)), room)
    m = np.maximum(fade, 0)
    idx = np.repeat(np.arange(len(stops)), m)
    before = np.cumsum(m) - m  # fade frames before each contact
    d = np.arange(m.sum()) - np.repeat(before, m) + 1
    # In time order: each contact's frames, then its fade's.
    at = np.arange(n) + np.repeat(before, lengths)
    fading = (last + 1 + before)[idx] + d - 1
    N = n + len(idx)
    frames = np.empty(N, dtype=np.int64)
    frames[at] = planted
    frames[fading] = np.repeat(stops, m) + d - 1
    weight = np.empty(N)
    weight[at] = w_in
    # The held foot's offset from the source's at the lift fades out with a smoothstep (the
    # foot is let go where the source's starts to move: its velocity is the source's there).
    w = _smoothstep(1.0 - d / (fade[idx] + 1.0))
    weight[fading] = w
    out = np.empty((3, N))
    out[:, at] = hold
    out[:, fading] = after[:, frames[fading]] + lift[:, idx]
    return frames, out, weight


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


def _smoothstep(x: Array) -> Array:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _pelvis_drop(hip: Array, target: Array, r: Array, up: Array) -> Array:
    """[T] how far down the hip must go for `target` to be within r of it."""
    v = target - hip
    vu = v @ up
    disc = vu * vu - np.sum(v * v, axis=-1) + r * r
    drop = np.where(disc >= 0.0, -vu - np.sqrt(np.maximum(disc, 0.0)), -vu)
    return np.where(np.sum(v * v, axis=-1) > r * r, np.maximum(drop, 0.0), 0.0)


def _knee(gp: Array, gr: Array, index: np.ndarray, leg: _Leg, start: int,
          knee_local: tuple[Array, Array, Array] | None = None) -> tuple[Array, float]:
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
        cb = np.stack(quat._rot_c(*(x[first:] for x in lq), *shin))
        ab = thigh[:, first:] if thigh.shape[1] > 1 else thigh
        n = np.cross(ab, cb, axis=0)
        local = n.sum(axis=1)
        size = np.sqrt(local @ local)
        hinge = local / size if size > 0.0 else np.array([1.0, 0.0, 0.0])
        flexion = np.arctan2(hinge @ n, -(ab * cb).sum(axis=0))
        return hinge, float(flexion.min())
    a, b, c = (gp[index[j], :, first:] for j in (leg.hip, leg.knee, leg.ankle))
    ab, cb = a - b, c - b
    n = np.cross(ab, cb, axis=0)
    q = gr[index[leg.hip], :, first:]
    local = np.stack(quat._rot_c(q[0], -q[1], -q[2], -q[3], n[0], n[1], n[2])).sum(axis=1)
    size = np.sqrt(local @ local)
    hinge = local / size if size > 0.0 else np.array([1.0, 0.0, 0.0])
    h = np.stack(quat._rot_c(q[0], q[1], q[2], q[3], *hinge))
    flexion = np.arctan2(np.einsum("cn,cn->n", n, h), -np.einsum("cn,cn->n", ab, cb))
    return hinge, float(flexion.min())


def _ease_out(drop: Array, frames: int) -> Array:
    """A drop at least `drop` that never rises sooner (lowering only where a foot needs it) but
    eases out over `frames` after each need ends (a source that bends its knee at the lift
    would let the pelvis spring back up within a frame): each frame's need, smoothstepped down
    over the frames after it."""
    if frames < 1 or not drop.any():
        return drop
    out = drop.copy()
    for k in range(1, frames + 1):
        w = float(_smoothstep(np.array(1.0 - k / (frames + 1.0))))
        np.maximum(out[k:], w * drop[:-k], out=out[k:])
    return out


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
        foot's deceleration (0: full on the touchdown frame, as it is for a foot planted on the
        take's first frame or for no longer than the ease).
    lower_pelvis: where a foot cannot reach its lock, lower the motion root along up just enough
        (eased over blend_time); otherwise the foot is held as near as the leg reaches and a
        `FootLockWarning` says where.
    """
    if not (math.isfinite(ease_in) and ease_in >= 0.0):
        raise ValueError(f"ease_in must be finite and >= 0 seconds, not {ease_in}")
    if not (math.isfinite(blend_time) and blend_time >= 0.0):
        raise ValueError(f"blend_time must be finite and >= 0 seconds, not {blend_time}")
    clip = with_feet(clip, feet)
    clip.body.check_legs(clip.name)
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
        index, lrot, gr, gp = quat.fk_joints(clip.rotations, clip.positions, clip.parents, used)
    up = clip.up
    mpu = clip.meters_per_unit
    blend_frames = max(0, math.ceil(blend_time * clip.fps - 1e-9))

    # Each leg's locks on the frames they touch (contact frames, then those they fade out over);
    # every other frame keeps the source's pose and costs nothing more.
    solve: dict[str, _Lock] = {}
    for side, leg in legs.items():
        starts, stops = runs(masks[side])
        planted = np.flatnonzero(masks[side])
        a_row = index[leg.ankle]
        foot = [j for j in clip.body.feet[side] if index[j] >= 0]
        if leg.ball is not None:
            foot = [leg.ankle, leg.ball] + [j for j in foot if j not in (leg.ankle, leg.ball)]
        pos = {j: np.take(gp[index[j]], planted, axis=1) for j in foot}
        rot_at = {leg.ankle: np.take(gr[a_row], planted, axis=1)}
        pts = [pos[j] for j in foot]
        for site in np.flatnonzero(np.isin(clip.end_parents, foot)):
            o = int(clip.end_parents[site])
            if o not in rot_at:
                rot_at[o] = np.take(gr[index[o]], planted, axis=1)
            tip = quat._rot_c(*rot_at[o], *clip.end_offsets[site])
            pts.append(np.stack([pos[o][c] + tip[c] for c in range(3)]))
        A, Q = pos[leg.ankle], rot_at[leg.ankle]
        if len(pts) < 2:
            ahead = quat._rot_c(*Q, *clip.forward)
            pts = [A, np.stack([A[c] + ahead[c] for c in range(3)])]
        frames, hold, w = _locks(up, mpu, clip.fps, T, blend_frames, starts, stops, A, np.stack(pts),
                                 gp[a_row], clip.motion_start, ease_in)
        ankle_pos = np.take(gp[a_row], frames, axis=1)
        solve[side] = _Lock(frames, ankle_pos + w * (hold - ankle_pos), w,
                            np.take(gr[a_row], frames, axis=1),
                            np.take(gp[index[leg.hip]], frames, axis=1),
                            np.take(gp[index[leg.knee]], frames, axis=1), ankle_pos)

    # Each knee's hinge (in its thigh's frame) and the straightest the take has it: the IK keeps
    # it on that side and never straighter.
    knees = {side: _knee(gp, gr, index, leg, clip.motion_start,
                         (lrot[index[leg.knee]], -_translation(clip, leg.knee), _translation(clip, leg.ankle))
                         if clip.parents[leg.knee] == leg.hip else None)
             for side, leg in legs.items()}
    drop = np.zeros(T)
    if lower_pelvis:
        for side, lock in solve.items():
            reach = ik.reach_at(_norm(lock.knee - lock.hip), _norm(lock.ankle - lock.knee), knees[side][1])
            # Down only as far as the IK then reaches exactly (its soft start, or the pose's own).
            within = np.minimum(np.maximum(ik.SOFT_START_LIMITED * reach, _norm(lock.ankle - lock.hip)),
                                reach)
            need = _pelvis_drop(lock.hip.T, lock.target.T, within, up)
            drop[lock.frames] = np.maximum(drop[lock.frames], need)
        drop[drop * mpu < 1e-6] = 0.0  # rounding is no drop (a convention's float noise alike)
        drop = _ease_out(drop, blend_frames)
        drop[:clip.motion_start] = 0.0  # a converter's T-pose stays as it is

    out = clip
    lowered = bool(drop.any())
    if lowered:
        rrot, rpos = root_world(clip)
        out = with_root_world(clip, rrot, rpos - drop[:, None] * up)
    rot = out.rotations.copy()
    # Both legs solved at once, laid end to end: the leg joints' world rotations and their
    # parents' on the frames each leg's locks touch.
    locks = []
    # A lock is let go in the legs' joints: the correction the IK made to each joint's local
    # rotation at the lift fades out (slerp to none), so a knee near straight at push-off does
    # not snap as the foot's offset fades; where the pelvis is lowered the IK still holds it.
    letgo: dict[str, tuple[np.ndarray, Array]] = {}
    for side in legs:
        lock = solve[side]
        joint_fade = ~masks[side][lock.frames] & (drop[lock.frames] <= 0.0)
        letgo[side] = (lock.frames[joint_fade], lock.weight[joint_fade])
        keep = ~joint_fade
        solve[side] = lock._replace(frames=lock.frames[keep], target=lock.target[:, keep],
                                    weight=lock.weight[keep], ankle_rot=lock.ankle_rot[:, keep],
                                    hip=lock.hip[:, keep], knee=lock.knee[:, keep], ankle=lock.ankle[:, keep])
    for leg, lock in ((leg, solve[side]) for side, leg in legs.items()):
        if lowered:
            # A lowered pelvis moves every foot: those not locked are held where the source had them.
            inside = np.zeros(T, dtype=bool)
            inside[lock.frames] = True
            inside[letgo[_side_of(legs, leg)][0]] = True
            more = np.flatnonzero((drop > 0) & ~inside)
            if more.size:
                lock = _held_too(lock, more, gp[index[leg.hip]], gp[index[leg.knee]], gp[index[leg.ankle]],
                                 gr[index[leg.ankle]])
            down = drop[lock.frames] * up[:, None]
            lock = lock._replace(hip=lock.hip - down, knee=lock.knee - down, ankle=lock.ankle - down)
        locks.append(lock)
    sizes = [len(lock.frames) for lock in locks]
    cuts = np.cumsum(sizes)[:-1].tolist()

    def both(x: list[Array]) -> Array:
        return x[0] if len(x) == 1 else np.concatenate(x, axis=-1)

    def world(joint: str) -> Array:
        """World rotations [4, N] of each leg's joint `joint` (or its parent: 'up hip', 'up knee')."""
        out = []
        for leg, lock in zip(legs.values(), locks, strict=True):
            j = getattr(leg, joint.split()[-1])
            if joint.startswith("up"):
                j = int(clip.parents[j])
            out.append(np.tile(np.array([[1.0], [0.0], [0.0], [0.0]]), len(lock.frames)) if j < 0
                       else np.take(gr[index[j]], lock.frames, axis=1))
        return both(out)

    hip_rot, knee_rot = world("hip"), world("knee")
    target = both([lock.target for lock in locks])
    hinge = quat._rot_c(*_q4(hip_rot), *_v3(both([np.repeat(knees[side][0][:, None], len(lock.frames), axis=1)
                                                   for side, lock in zip(legs, locks, strict=True)])))
    limit = both([np.full(len(lock.frames), knees[side][1]) for side, lock in zip(legs, locks, strict=True)])
    got = ik.solve(_v3(both([lock.hip for lock in locks])), _v3(both([lock.knee for lock in locks])),
                   _v3(both([lock.ankle for lock in locks])), _q4(hip_rot), _q4(knee_rot), _v3(target),
                   segments=cuts, bend=np.stack(hinge, axis=-1), min_flexion=limit)
    # Back to locals: the hip's parent is as it was, the knee's parent swung with the thigh.
    p_hip = world("up hip")
    p_knee = hip_rot if all(clip.parents[leg.knee] == leg.hip for leg in legs.values()) else world("up knee")
    new_hip = quat._mul_c(p_hip[0], -p_hip[1], -p_hip[2], -p_hip[3], *got.hip)
    new_knee = quat._mul_c(p_knee[0], -p_knee[1], -p_knee[2], -p_knee[3], *got.opened)
    k = got.knee
    target_rot = _q4(both([lock.ankle_rot for lock in locks]))
    new_ankle = quat._mul_c(k[0], -k[1], -k[2], -k[3], *target_rot)
    joints = [j for leg in legs.values() for j in (leg.hip, leg.knee, leg.ankle)]
    # The leg joints' new locals go into the FK's own locals (component-major), in place, once
    # the source's steps are known.
    rows = index[joints]
    first = clip.motion_start
    dq = _steps(lrot, rows, first)
    pinned = np.zeros((len(joints), T), dtype=bool)
    short = []
    miss = np.sqrt(sum((got.ankle[c] - target[c]) ** 2 for c in range(3))) * mpu
    for n_leg, side in enumerate(legs):
        lock = locks[n_leg]
        frames = lock.frames
        at = slice(sum(sizes[:n_leg]), sum(sizes[:n_leg + 1]))
        for i, q in enumerate((new_hip, new_knee, new_ankle), 3 * n_leg):
            local = lrot[rows[i]]
            new = _unit_near(np.stack([x[at] for x in q]), np.take(local, frames, axis=1))
            for c in range(4):
                local[c][frames] = new[c]
            pinned[i, frames] = masks[side][frames]  # easing in too: the lock holds it
        m = miss[at]
        if m.max(initial=0.0) > _SHORT_M:
            far = m > _SHORT_M
            short.append(f"{side} on {int(far.sum())} frame{'s' if far.sum() > 1 else ''} "
                         f"({_ranges(frames[far])}), up to {m.max() * 100:.1f} cm short")
    for n_leg, side in enumerate(legs):
        fade, weight = letgo[side]
        if not fade.size:
            continue
        lift = np.maximum.accumulate(np.where(masks[side], np.arange(T), -1))[fade]
        leg = legs[side]
        if clip.parents[leg.knee] == leg.hip:
            # A knee let go no straighter than the limit: its share of the correction cut where
            # the source's own knee is near it.
            knee_axis, straightest = knees[side]
            thigh = -_translation(clip, leg.knee, fade)
            shin = _translation(clip, leg.ankle, fade)
            src = clip.rotations[fade, leg.knee].T
            want = _faded(lrot[index[leg.knee]][:, lift], clip.rotations[lift, leg.knee].T, src, weight)
            f0, f1 = (_flexion(q, thigh, shin, knee_axis) for q in (src, want))
            over = f1 < straightest
            cut = np.where(over, np.clip((f0 - straightest) / np.maximum(f0 - f1, 1e-12), 0.0, 1.0), 1.0)
        else:
            cut = np.ones(len(fade))
        for j, r in zip(joints[3 * n_leg:3 * n_leg + 3], rows[3 * n_leg:3 * n_leg + 3], strict=True):
            lrot[r][:, fade] = _faded(lrot[r][:, lift], clip.rotations[lift, j].T, clip.rotations[fade, j].T,
                                      weight, cut)
    _limit_steps(clip.rotations, np.array(joints), dq, lrot, rows, first, pinned)
    for j, r in zip(joints, rows, strict=True):
        rot[:, j] = lrot[r].T
    if short:
        advice = (" (with the pelvis lowered)" if lower_pelvis
                  else ". lower_pelvis=True lowers the pelvis instead")
        warnings.warn(f"{clip.name or 'the take'}: a foot could not reach its lock, held as near as the "
                      f"leg reaches: {'; '.join(short)}{advice}", FootLockWarning, stacklevel=2)
    return out.replace(rotations=rot)


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
        return np.stack(quat._mul_c(o[0], o[1], o[2], o[3], s[0], -s[1], -s[2], -s[3]))

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
    tw, tx, ty, tz = quat._mul_c(cb[0], cb[1], cb[2], cb[3], ca[0], -ca[1], -ca[2], -ca[3])
    sin = np.sqrt(tx * tx + ty * ty + tz * tz)
    half = np.arctan2(sin, np.abs(tw))
    axis = np.stack([tx, ty, tz]) * (np.where(tw < 0.0, -1.0, 1.0) / np.where(sin > 0.0, sin, 1.0))
    cum = cum + np.where(short, even, 0.0)[win] * (f - a[win])
    whole = whole + np.where(short, even, 0.0) * (b - a)
    x = cum / np.where(whole > 0.0, whole, 1.0)[win] * (reach * half)[win]
    s = np.sin(x)
    ax = np.take(axis, win, axis=1)
    h = quat._mul_c(np.cos(x), ax[0] * s, ax[1] * s, ax[2] * s, *np.take(ca, win, axis=1))
    o_at, s_at = at(f)
    r = np.stack([np.take(src_flat, s_at + c) for c in range(4)])
    for c, value in enumerate(_unit_near(np.stack(quat._mul_c(*h, r[0], r[1], r[2], r[3])), r)):
        out_flat[o_at + c * T] = value


class _Lock(NamedTuple):
    """One leg's solve on the frames its locks touch (time order): the ankle's target [3, N],
    its weight [N], and the source's ankle world rotation [4, N] and hip,
    knee and ankle positions [3, N]."""

    frames: np.ndarray
    target: Array
    weight: Array
    ankle_rot: Array
    hip: Array
    knee: Array
    ankle: Array


def _held_too(lock: _Lock, more: np.ndarray, hip: Array, knee: Array, ankle: Array,
              ankle_rot: Array) -> _Lock:
    """`lock` with frames `more` added, where the foot is held where the source had it (weight
    0); hip, knee, ankle [3, T] and ankle_rot [4, T] the source's in the world."""
    frames = np.concatenate([lock.frames, more])
    order = np.argsort(frames, kind="stable")
    frames = frames[order]
    target = np.concatenate([lock.target, np.take(ankle, more, axis=1)], axis=1)[:, order]
    weight = np.concatenate([lock.weight, np.zeros(len(more))])[order]
    return _Lock(frames, target, weight, np.take(ankle_rot, frames, axis=1),
                 np.take(hip, frames, axis=1), np.take(knee, frames, axis=1), np.take(ankle, frames, axis=1))


def _translation(clip: Clip, joint: int, frames: np.ndarray | None = None) -> Array:
    """A joint's local translation [3, T] (or on `frames`), [3, 1] where the file keys none (its
    offset on every frame: no copy of a column of the take's positions)."""
    if not any(c.endswith("position") for c in clip.channels[joint]):
        return np.asarray(clip.positions[0, joint])[:, None]
    return (clip.positions[:, joint] if frames is None else clip.positions[frames, joint]).T


def _flexion(knee: Array, thigh: Array, shin: Array, hinge: Array) -> Array:
    """[N] a knee's signed flexion (radians) from its local rotations [4, N], in the thigh's
    frame: thigh [3, N] from the knee to the hip, shin [3, N] the ankle's offset, hinge [3]."""
    cb = np.stack(quat._rot_c(*knee, *shin))
    n = np.cross(thigh, cb, axis=0)
    return np.arctan2(hinge @ n, -(thigh * cb).sum(axis=0))


def _ranges(frames: np.ndarray) -> str:
    """'frames 28-33, 40' for sorted frame indices (the first six runs, '...' after)."""
    cut = np.flatnonzero(np.diff(frames) > 1) + 1
    runs = [(int(r[0]), int(r[-1])) for r in np.split(frames, cut)]
    text = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:6])
    text += ", ..." if len(runs) > 6 else ""
    return f"frame{'s' if len(frames) > 1 else ''} {text}"


def _side_of(legs: Mapping[str, _Leg], leg: _Leg) -> str:
    return next(side for side, other in legs.items() if other is leg)


def _log(new: Array, src: Array) -> Array:
    """[3, N] the rotation vector (axis times angle) of the correction new inv(src), each [4, N]."""
    c = np.stack(quat._mul_c(new[0], new[1], new[2], new[3], src[0], -src[1], -src[2], -src[3]))
    c *= np.where(c[0] < 0.0, -1.0, 1.0)
    sin = np.sqrt(c[1] * c[1] + c[2] * c[2] + c[3] * c[3])
    return c[1:] * (2.0 * np.arctan2(sin, c[0]) / np.where(sin > 0.0, sin, 1.0))


def _faded(new_at: Array, src_at: Array, src: Array, weight: Array, cut: Array | None = None) -> Array:
    """[4, N] the source's local rotations `src` with `weight` [N] of the correction a lock made
    at its lift (new_at inv(src_at), each [4, N]; its rotation vector scaled), and `cut` [N]
    of that."""
    v = _log(new_at, src_at) * weight
    if cut is not None:
        v *= cut  # (a knee kept off straighter than the take's: the whole correction scaled)
    angle = np.sqrt(np.sum(v * v, axis=0))
    half = 0.5 * angle
    scale = np.sin(half) / np.where(angle > 0.0, angle, 1.0)
    out = np.stack(quat._mul_c(np.cos(half), v[0] * scale, v[1] * scale, v[2] * scale, *src))
    return _unit_near(out, src)


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
