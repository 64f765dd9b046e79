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

With `min_flexion` (radians, signed toward the knee's bend side) the side the knee bends to is
`bend` (the hinge) when given, else the pose's own, and the knee opens and closes only on it, no
straighter than the limit: a pose past straight (a hyperextended frame, whose own bend axis points
the wrong way) closes toward its side, not further back; the reach is the leg's at the limit
(`reach_at`), softened from SOFT_START_LIMITED of it.

`solve` is the same on unpacked components (tuples of `[N]` arrays, as `quat.fk_components`
lays them out): what `footlock` calls on whole takes, without packing and unpacking `[N, 4]`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import quat

Array = npt.NDArray[np.float64]
Vec = tuple[Array, Array, Array]
Quat = tuple[Array, Array, Array, Array]

# Softening starts at this fraction of the leg's full reach (l1 + l2): 2 cm of a 0.9 m leg.
SOFT_START = 0.98
# With a knee limit (min_flexion) it starts this much nearer the reach at that knee: 2.7 mm of a
# 0.9 m leg, so a foot just out of reach is missed by its shortfall + 1 mm at most, and a target
# within reach but for that is still reached within 1 mm.
SOFT_START_LIMITED = 0.997
# A leg bent by less than this (sine of the knee's angle off straight) has no bend plane of its own.
_STRAIGHT = 1e-4


class Leg(NamedTuple):
    """A solved leg: world rotations of hip and knee, and where the ankle got to (`[..., 3]`)."""

    hip: Array
    knee: Array
    ankle: Array


class Solved(NamedTuple):
    """`solve`'s answer on components: world rotations of hip and knee, the ankle's position, and
    the two rotations that made them (world frame): the hip's swing and the knee's opening, so
    hip = swing hip_before and knee = swing opening knee_before; `opened` is opening knee_before."""

    hip: Quat
    knee: Quat
    ankle: Vec
    swing: Quat
    opening: Quat
    opened: Quat


def soft_reach(d: npt.ArrayLike, reach: npt.ArrayLike, floor: npt.ArrayLike) -> Array:
    """Distances d `[...]` softened near full `reach`: unchanged up to max(SOFT_START reach,
    floor), then approaching reach without ever getting there."""
    d, reach = np.asarray(d, dtype=np.float64), np.asarray(reach, dtype=np.float64)
    s = np.minimum(np.maximum(SOFT_START * reach, np.asarray(floor, dtype=np.float64)), reach)
    far = d > s
    if d.ndim != 1 or s.shape != d.shape or reach.shape != d.shape:
        room = np.maximum(reach - s, 1e-12)
        soft = s + room * -np.expm1(-np.maximum(d - s, 0.0) / room)
        return np.where(far, np.minimum(soft, reach), d)
    # Frames beyond the soft start only (most frames of a take are not).
    at = np.flatnonzero(far)
    out = d.copy()
    sa, ra = s[at], reach[at]
    room = np.maximum(ra - sa, 1e-12)
    out[at] = np.minimum(sa + room * -np.expm1(-np.maximum(d[at] - sa, 0.0) / room), ra)
    return out


def _fill_axis(axis: Vec, ok: np.ndarray, fallback: Callable[[], Vec]) -> Vec:
    """Bend axes: where not ok, the nearest frame's that is (along the only axis), else
    fallback() (called only then)."""
    if ok.ndim != 1:
        f = fallback()
        return (np.where(ok, axis[0], f[0]), np.where(ok, axis[1], f[1]), np.where(ok, axis[2], f[2]))
    good = np.flatnonzero(ok)
    if not good.size:
        f = fallback()
        return tuple(np.array(np.broadcast_to(x, ok.shape)) for x in f)  # type: ignore[return-value]
    # Only the straight frames change (most are bent).
    bad = np.flatnonzero(~ok)
    at = np.searchsorted(good, bad).clip(0, len(good) - 1)
    before = good[(at - 1).clip(0)]
    nearest = np.where(np.abs(good[at] - bad) <= np.abs(before - bad), good[at], before)
    out = (axis[0].copy(), axis[1].copy(), axis[2].copy())
    for c in range(3):
        out[c][bad] = axis[c][nearest]
    return out


def _sub(u: Vec, v: Vec) -> Vec:
    return u[0] - v[0], u[1] - v[1], u[2] - v[2]


def _dot(u: Vec, v: Vec) -> Array:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _cross(u: Vec, v: Vec) -> Vec:
    return u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]


def _scale(u: Vec, s: Array) -> Vec:
    return u[0] * s, u[1] * s, u[2] * s


def _unit(u: Vec, eps: float = 1e-12) -> Vec:
    """u / max(|u|, eps), as quat.normalize."""
    n = np.maximum(np.sqrt(_dot(u, u)), eps)
    return u[0] / n, u[1] / n, u[2] / n


def _between(u: Vec, v: Vec) -> Quat:
    """quat.between on components: the shortest arc rotating direction u onto v. As
    (|u||v| + u.v, u x v) normalised where u and v are not near opposite (nor zero); there
    through the unit vectors, whose half-way vector's length is exact."""
    nn = np.sqrt(_dot(u, u) * _dot(v, v))
    w = nn + _dot(u, v)
    if not (w > 1e-6 * nn).all():
        return _between_units(u, v)
    x, y, z = _cross(u, v)
    n = np.sqrt(w * w + x * x + y * y + z * z)
    return w / n, x / n, y / n, z / n


def _between_units(u: Vec, v: Vec) -> Quat:
    """`_between` through unit vectors: exact near opposite, a half turn there."""
    u, v = _unit(u), _unit(v)
    uv = (u[0] + v[0], u[1] + v[1], u[2] + v[2])
    w = 0.5 * _dot(uv, uv)
    x, y, z = _cross(u, v)
    opposite = np.sqrt(2.0 * w) < quat.OPPOSITE
    if opposite.any():
        # Half turn about the axis orthogonal to u and the basis axis least aligned with it.
        least = np.argmin(np.stack([np.abs(u[0]), np.abs(u[1]), np.abs(u[2])]), axis=0)
        h = tuple((least == i).astype(np.float64) for i in range(3))
        fx, fy, fz = _unit(_cross(u, (h[0], h[1], h[2])))
        w, x, y, z = (np.where(opposite, f, q) for f, q in ((0.0, w), (fx, x), (fy, y), (fz, z)))
    n = np.maximum(np.sqrt(w * w + x * x + y * y + z * z), 1e-12)
    return w / n, x / n, y / n, z / n


def _bend_axis(ab: Vec, cb: Vec, l1: Array, l2: Array, bend: npt.ArrayLike | None,
               segments: Sequence[int]) -> Vec:
    """The knee's bend axis, ab x cb made unit; where the leg is straight, the nearest bent frame's
    of its segment, else `bend` (or an axis square to the thigh)."""
    axis = _cross(ab, cb)
    size = np.sqrt(_dot(axis, axis))
    ok = size > _STRAIGHT * np.maximum(l1 * l2, 1e-300)
    axis = _scale(axis, 1.0 / np.where(ok, size, 1.0))
    if not ok.all():
        def fallback(at: slice = slice(None)) -> Vec:
            """The bend axis where a leg is straight on every frame (of slice `at`)."""
            if bend is not None:
                fb = np.asarray(bend, dtype=np.float64)
                if fb.ndim > 1:  # one per frame
                    fb = fb[at]
                return _unit((fb[..., 0], fb[..., 1], fb[..., 2]))
            thigh = (-ab[0][at], -ab[1][at], -ab[2][at])
            least = np.argmin(np.stack([np.abs(thigh[0]), np.abs(thigh[1]), np.abs(thigh[2])]), axis=0)
            h = tuple((least == i).astype(np.float64) for i in range(3))
            return _unit(_cross(thigh, (h[0], h[1], h[2])))

        if segments:
            cuts = [0, *segments, len(ok)]
            parts = [_fill_axis((axis[0][s:e], axis[1][s:e], axis[2][s:e]), ok[s:e],
                                functools.partial(fallback, slice(s, e)))
                     for s, e in itertools.pairwise(cuts)]
            axis = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts]))
        else:
            axis = _fill_axis(axis, ok, fallback)

    return axis


def solve(a: Vec, b: Vec, c: Vec, hip_rot: Quat, knee_rot: Quat, t: Vec, *,
          bend: npt.ArrayLike | None = None, soft: bool = True, segments: Sequence[int] = (),
          min_flexion: npt.ArrayLike | None = None) -> Solved:
    """`two_bone` on components: hip, knee, ankle and target positions as (x, y, z) and world
    rotations as (w, x, y, z), each component an array over the same frames `[...]`.
    segments: where (along a single frame axis) the frames of another leg or take begin, laid
    end to end: a straight leg takes the bend of the nearest frame of its own segment.
    min_flexion: see `two_bone`."""
    if min_flexion is not None:
        return _solve_limited(a, b, c, hip_rot, knee_rot, t, bend, soft, segments,
                              np.asarray(min_flexion, dtype=np.float64))
    ab, cb = _sub(a, b), _sub(c, b)
    l1, l2 = np.sqrt(_dot(ab, ab)), np.sqrt(_dot(cb, cb))
    axis = _bend_axis(ab, cb, l1, l2, bend, segments)
    reach = l1 + l2
    ca, ta = _sub(c, a), _sub(t, a)
    d_now = np.sqrt(_dot(ca, ca))
    far = np.sqrt(_dot(ta, ta))
    d = soft_reach(far, reach, d_now) if soft else np.minimum(far, reach)
    d = np.maximum(d, np.abs(l1 - l2))
    # The knee's interior angle now and the one that puts the ankle d from the hip.
    now = np.arccos(np.clip(_dot(ab, cb) / np.maximum(l1 * l2, 1e-300), -1.0, 1.0))
    want = np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / np.maximum(2.0 * l1 * l2, 1e-300), -1.0, 1.0))
    # Turning the shin about ab x cb by +x opens the knee (moves cb away from ab).
    half = 0.5 * (want - now)
    return _open_and_swing(axis, half, a, ab, cb, ta, far, hip_rot, knee_rot)


def _open_and_swing(axis: Vec, half: Array, a: Vec, ab: Vec, cb: Vec, ta: Vec, far: Array, hip_rot: Quat,
                    knee_rot: Quat) -> Solved:
    """The knee turned by twice `half` about `axis`, then the hip swung by the shortest arc that
    points the ankle at the target (ta = target - hip, far = its length)."""
    s = np.sin(half)
    opening = (np.cos(half), axis[0] * s, axis[1] * s, axis[2] * s)
    opened = quat.mul_components(*opening, *knee_rot)
    c1 = _sub(quat.mul_vec_components(*opening, *cb), ab)  # where the ankle goes, from the hip: b + R cb - a
    swing = _between(c1, ta)
    hip_new = quat.mul_components(*swing, *hip_rot)
    knee_new = quat.mul_components(*swing, *opened)
    # The swing turns c1 onto the target's direction: the ankle is that far along it (at c1
    # where the target is at the hip, whose swing is none).
    along = np.sqrt(_dot(c1, c1)) / np.where(far > 0.0, far, 1.0)
    ankle = tuple(a[i] + np.where(far > 0.0, ta[i] * along, c1[i]) for i in range(3))
    return Solved(hip_new, knee_new, (ankle[0], ankle[1], ankle[2]), swing, opening, opened)


def two_bone(hip_pos: npt.ArrayLike, knee_pos: npt.ArrayLike, ankle_pos: npt.ArrayLike,
             hip_rot: npt.ArrayLike, knee_rot: npt.ArrayLike, target: npt.ArrayLike, *,
             bend: npt.ArrayLike | None = None, soft: bool = True,
             min_flexion: npt.ArrayLike | None = None) -> Leg:
    """World rotations of hip and knee `[..., 4]` that put the ankle at `target` `[..., 3]`, or as
    near as the leg reaches (see the module notes). Positions are the current pose's world joint
    positions (any unit), rotations its world rotations. `bend`: the knee's bend axis (world,
    `[3]` or `[..., 3]`) for a leg straight on every frame; None: perpendicular to the leg and the
    world's first axis least aligned with it. soft=False reaches any target within reach exactly.
    min_flexion: the straightest the knee may get (radians, `[...]` or one), signed toward the side
    the knee bends to (negative: past straight); None: no limit. With it, `bend` (when given) is
    that side on every frame (the knee's hinge, as a hyperextended pose does not show it), and the
    knee opens and closes only on that side: where the target is farther than the leg reaches
    at that knee, the ankle stops as near as it gets, the knee at the limit.
    The ankle's world rotation is the caller's to set (its local is inv(knee) ankle_world)."""
    arrays = [np.asarray(x, dtype=np.float64)
              for x in (hip_pos, knee_pos, ankle_pos, target, hip_rot, knee_rot)]
    shape = np.broadcast_shapes(*(x.shape[:-1] for x in arrays))
    a, b, c, t, qh, qk = (tuple(np.broadcast_to(x[..., i], shape) for i in range(x.shape[-1]))
                          for x in arrays)
    got = solve(a, b, c, qh, qk, t, bend=bend, soft=soft, min_flexion=min_flexion)  # type: ignore[arg-type]
    return Leg(np.stack(got.hip, axis=-1), np.stack(got.knee, axis=-1), np.stack(got.ankle, axis=-1))


def reach_at(l1: npt.ArrayLike, l2: npt.ArrayLike, min_flexion: npt.ArrayLike) -> Array:
    """Hip-to-ankle distance of a leg (thigh l1, shin l2) whose knee may straighten only to
    min_flexion (radians, toward its bend side): l1 + l2 when that is straight or past it."""
    l1, l2 = np.asarray(l1, dtype=np.float64), np.asarray(l2, dtype=np.float64)
    f = np.maximum(np.asarray(min_flexion, dtype=np.float64), 0.0)
    return np.sqrt(np.maximum(l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * np.cos(f), 0.0))


def _solve_limited(a: Vec, b: Vec, c: Vec, hip_rot: Quat, knee_rot: Quat, t: Vec, bend: npt.ArrayLike | None,
                   soft: bool, segments: Sequence[int], min_flexion: Array) -> Solved:
    """`solve` with the knee kept on its bend side and no straighter than min_flexion."""
    ab, cb = _sub(a, b), _sub(c, b)
    l1, l2 = np.sqrt(_dot(ab, ab)), np.sqrt(_dot(cb, cb))
    n = _cross(ab, cb)
    size = np.sqrt(_dot(n, n))
    if bend is not None:
        fb = np.asarray(bend, dtype=np.float64)
        hinge = _unit((np.broadcast_to(fb[..., 0], l1.shape), np.broadcast_to(fb[..., 1], l1.shape),
                       np.broadcast_to(fb[..., 2], l1.shape)))
    else:
        hinge = _bend_axis(ab, cb, l1, l2, None, segments)  # the current pose's side
    # The knee turns about its bend plane's normal turned toward the hinge (the hinge itself,
    # kept square to the thigh, where the leg is straight or bends square to it).
    side = _dot(n, hinge)
    sign = np.where(side < 0.0, -1.0, 1.0)
    u = _scale(ab, 1.0 / np.maximum(l1, 1e-300))
    square = _unit(_sub(hinge, _scale(u, _dot(hinge, u))))
    bent = size > _STRAIGHT * l1 * l2
    axis = tuple(np.where(bent, sign * n[i] / np.where(bent, size, 1.0), square[i]) for i in range(3))
    # Signed flexion about that axis: 0 straight, positive toward the hinge's side.
    now = np.arctan2(np.where(bent, sign * size, 0.0), -_dot(ab, cb))
    limit = np.broadcast_to(min_flexion, l1.shape)
    reach = reach_at(l1, l2, limit)
    ca, ta = _sub(c, a), _sub(t, a)
    d_now = np.sqrt(_dot(ca, ca))
    far = np.sqrt(_dot(ta, ta))
    if soft:
        s = np.minimum(np.maximum(SOFT_START_LIMITED * reach, d_now), reach)
        room = np.maximum(reach - s, 1e-12)
        d = np.where(far > s, np.minimum(s + room * -np.expm1(-np.maximum(far - s, 0.0) / room), reach), far)
    else:
        d = np.minimum(far, reach)
    d = np.maximum(d, np.abs(l1 - l2))
    bend_abs = np.pi - np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / np.maximum(2.0 * l1 * l2, 1e-300),
                                         -1.0, 1.0))
    # The same side as now where the limit allows it (a knee the take hyperextends may stay so).
    want = np.where((now < 0.0) & (-bend_abs >= limit), -bend_abs, np.maximum(bend_abs, limit))
    # Turning the shin about the axis by +x lowers the flexion by x.
    return _open_and_swing((axis[0], axis[1], axis[2]), 0.5 * (now - want), a, ab, cb, ta, far, hip_rot,
                           knee_rot)
