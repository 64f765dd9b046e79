"""Measures of a character walked along a path, as an animator judges it, independent of the code
under test: paths made in meters and put in a clip's own units and up axis, world positions from
scipy's rotations (blend_checks.world_positions), the hips' floor path and the path itself smoothed
by one centered moving average over the local gait cycle, the lateral distance between them, the
arc length the character has covered, the hips' heading from the thighs, and planted feet from
their height and speed (motion_checks) with the slip and skating of their pivot.

Positions in meters, angles in radians, times in seconds; `up` is the clip's up axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from blend_checks import Leg, floor_basis
from motion_checks import REF_HEIGHT, above_stance, foot_points, pivot_slip, reference_contacts, runs
from motion_checks import world as world_frames

# -- paths made in code -----------------------------------------------------------------------------


def arcs(radii: Sequence[float], turns: Sequence[float], up: np.ndarray, meters_per_unit: float,
         per_meter: int = 50) -> np.ndarray:
    """[N, 3] a path of circular arcs in file units, from the origin along the floor's first axis
    (`floor_basis(up)`): each arc of radius |r| meters turning left (r > 0) or right (r < 0) by its
    turn (radians), or straight on for r = inf (turn = its length in meters), `per_meter` points a
    meter (the chords of a circle)."""
    a, b = floor_basis(up)
    points = [np.zeros(2)]
    heading = 0.0
    for r, turn in zip(radii, turns, strict=True):
        length = abs(turn) if np.isinf(r) else abs(r * turn)
        k = max(int(np.ceil(length * per_meter)), 2)
        for _ in range(k):
            if np.isinf(r):
                chord, half = length / k, 0.0
            else:
                chord, half = 2.0 * abs(r) * np.sin(abs(turn) / k / 2.0), np.sign(r) * abs(turn) / k / 2.0
            heading += half
            points.append(points[-1] + chord * np.array([np.cos(heading), np.sin(heading)]))
            heading += half
    p = np.array(points)
    return (np.outer(p[:, 0], a) + np.outer(p[:, 1], b)) / meters_per_unit


def line(length: float, up: np.ndarray, meters_per_unit: float) -> np.ndarray:
    return arcs([np.inf], [length], up, meters_per_unit, per_meter=1)


def circle(radius: float, up: np.ndarray, meters_per_unit: float) -> np.ndarray:
    return arcs([radius], [2.0 * np.pi], up, meters_per_unit)


# -- the path and the hips --------------------------------------------------------------------------


class Polyline(NamedTuple):
    points: np.ndarray  # [M, 3] meters, on the floor
    arc: np.ndarray  # [M] meters from the start


def polyline(points: np.ndarray, up: np.ndarray, meters_per_unit: float) -> Polyline:
    """The path's points on the floor (up dropped), in meters, and their arc length."""
    p = (points - np.outer(points @ up, up)) * meters_per_unit
    return Polyline(p, np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=-1))]))


def track(path: Polyline, q: np.ndarray, reach: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """(arc length [n], distance [n]) of each point q [n, 3] (meters, on the floor) to its nearest
    point of the path, searched within `reach` meters of arc length of the one before (a path that
    crosses itself, as a figure eight does, is followed along, not jumped across)."""
    a, b = path.points[:-1], path.points[1:]
    ab = b - a
    length2 = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-18)
    s_out, d_out = np.empty(len(q)), np.empty(len(q))
    last = 0.0
    for i, p in enumerate(q):
        near = np.flatnonzero((path.arc[:-1] <= last + reach) & (path.arc[1:] >= last - reach))
        t = np.clip(np.einsum("ij,ij->i", p - a[near], ab[near]) / length2[near], 0.0, 1.0)
        d = np.linalg.norm(p - (a[near] + t[:, None] * ab[near]), axis=-1)
        k = int(np.argmin(d))
        last = path.arc[near[k]] + t[k] * np.sqrt(length2[near[k]])
        s_out[i], d_out[i] = last, d[k]
    return s_out, d_out


def hips_floor(clip, world: np.ndarray, hips: int) -> np.ndarray:
    """[T, 3] the hips' world position on the floor, meters."""
    p = world[:, hips] * clip.meters_per_unit
    return p - np.outer(p @ clip.up, clip.up)


def facing(world: np.ndarray, legs: dict[str, Leg], up: np.ndarray) -> np.ndarray:
    """[T, 3] the hips' facing on the floor: perpendicular to the line from the right thigh to the
    left one (left x up is forward for a performer standing up), unit."""
    left = world[:, legs["L"].hip] - world[:, legs["R"].hip]
    f = np.cross(left, up)
    f -= np.outer(f @ up, up)
    return f / np.linalg.norm(f, axis=-1, keepdims=True)


def angle_on_floor(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    """[T] the direction of floor vectors v [T, 3] (radians, unwrapped), in `floor_basis(up)`."""
    a, b = floor_basis(up)
    return np.unwrap(np.arctan2(v @ b, v @ a))


# -- cycles and smoothing ---------------------------------------------------------------------------


def planted(clip, world_m: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """{side: bool [T]} the reference contacts of each foot (its lowest point near its stance height
    and its slowest point slower than 0.5 m/s: `motion_checks.reference_contacts`); `world_m`: the
    clip's `motion_checks.world` (rotations, positions in meters) when the caller has it."""
    mats, pos = world_frames(clip) if world_m is None else world_m
    return {side: reference_contacts(foot_points(clip, side, mats, pos), clip.up, clip.fps)
            for side in clip.body.legs}


def cycle_frames(contacts: dict[str, np.ndarray], n: int) -> np.ndarray:
    """[n] the gait cycle in frames around each frame: from a touchdown (a contact's first frame)
    to the next of the same foot, interpolated between the middles of those intervals. A contact
    on the first frame began before it: no touchdown."""
    mids, lengths = [], []
    for mask in contacts.values():
        downs = np.array([a for a, _ in runs(mask) if a > 0], dtype=np.float64)
        mids += list(0.5 * (downs[1:] + downs[:-1]))
        lengths += list(np.diff(downs))
    order = np.argsort(mids)
    return np.interp(np.arange(n), np.asarray(mids)[order], np.asarray(lengths)[order])


def moving_average(x: np.ndarray, width: np.ndarray) -> np.ndarray:
    """x [T, ...] averaged over the centered window of `width` [T] frames around each frame (x
    linear between frames, the window's ends at fractional frames); NaN where the window leaves the
    clip."""
    T = x.shape[0]
    flat = x.reshape(T, -1)
    # The integral of the piecewise-linear signal from frame 0, at every frame.
    area = np.concatenate([np.zeros((1, flat.shape[1])), np.cumsum(0.5 * (flat[1:] + flat[:-1]), axis=0)])
    frames = np.arange(T, dtype=np.float64)

    def integral(at: np.ndarray) -> np.ndarray:
        i = np.clip(np.floor(at).astype(np.int64), 0, T - 2)
        f = (at - i)[:, None]
        # area to frame i, then the trapezoid from i to i + f.
        return area[i] + f * flat[i] + 0.5 * f * f * (flat[i + 1] - flat[i])

    lo, hi = frames - 0.5 * width, frames + 0.5 * width
    out = (integral(hi) - integral(lo)) / width[:, None]
    out[(lo < 0) | (hi > T - 1)] = np.nan
    return out.reshape(x.shape)


# -- feet -------------------------------------------------------------------------------------------


def slips_and_skating(points: np.ndarray, contact: np.ndarray, up: np.ndarray, fps: float,
                      settle: float = 0.1) -> tuple[np.ndarray, int, int]:
    """Over each contact (runs of `contact`) of a foot's points [T, K, 3] (meters): its pivot slip
    (`motion_checks.pivot_slip`) from `settle` seconds after the touchdown (a lock eases in over
    the landing), or from its middle for a shorter contact (a dash's at 30 fps), to the lift; and
    how many windows of 1/20 s inside the contacts, the foot down at both ends (its lowest point
    within 3 cm of its stance height, `motion_checks.above_stance`), see the pivot (the point that
    moves least) move more than 2.5 cm over the floor, of how many. Returns (slips [contacts],
    skating windows, windows)."""
    full = int(np.ceil(settle * fps))
    h = max(1, round(fps / 20.0))
    limit = 0.025 * h / (fps / 20.0)
    down = above_stance(points, up, fps) <= REF_HEIGHT
    slips, skating, windows = [], 0, 0
    for a, b in runs(contact):
        if b - a >= 2:
            slips.append(pivot_slip(points[a + min(full, (b - a) // 2):b], up))
        if b - a > h:
            step = points[a + h:b] - points[a:b - h]
            step -= (step @ up)[..., None] * up
            moved = np.linalg.norm(step, axis=-1).min(axis=1)
            both = down[a + h:b] & down[a:b - h]
            skating += int((moved[both] > limit).sum())
            windows += int(both.sum())
    return np.array(slips), skating, windows


def foot_turn_rates(points: np.ndarray, contact: np.ndarray, up: np.ndarray, fps: float,
                    settle: float = 0.1) -> np.ndarray:
    """[contacts] how fast (radians per second) each planted foot turns on the floor: the heading
    of the line from its first point (the ankle) to its second (the ball or toe) from `settle`
    seconds after the touchdown to the middle of the contact (before the heel lifts and the line
    tips up), over that time; contacts too short for it are left out."""
    line = points[:, 1] - points[:, 0]
    heading = angle_on_floor(line - np.outer(line @ up, up), up)
    full = int(np.ceil(settle * fps))
    rates = [abs(heading[(a + b) // 2] - heading[a + full]) / (((a + b) // 2 - a - full) / fps)
             for a, b in runs(contact) if (a + b) // 2 - a - full >= 2]
    return np.array(rates)


def knees_straightest(flexion: dict[str, np.ndarray]) -> float:
    """The straightest (least) knee flexion over both legs (radians)."""
    return float(min(f.min() for f in flexion.values()))

