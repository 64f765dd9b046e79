"""Measures of motion an expert would accept, independent of the code under test.

Every feature that makes motion is judged by these (the guide's "Motion an expert would
accept"): world positions from our own FK (scipy rotations, not `quat.fk`), accelerations after
a 10 Hz zero-phase low-pass (scipy), the knee's flexion from hip, knee and ankle positions and the
side the knee bends to, a planted foot's pivot (the point of it that moves least), and a contact
reference read off the foot's height and speed alone. Positions in meters, angles in radians,
times in seconds. Fingers play no part: only legs, feet and the root are measured.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.signal import butter, filtfilt
from scipy.spatial.transform import Rotation

# The reference contact (issue 36): the foot's lowest point within this of its local stance
# height and slower than REF_SPEED.
REF_HEIGHT = 0.03
REF_SPEED = 0.5
# Seconds each side over which a foot's stance height is its lowest (about a gait cycle).
STANCE_SECONDS = 0.6
LOWPASS_HZ = 10.0


class Leg(NamedTuple):
    hip: int
    knee: int
    ankle: int
    toe: int | None


def legs(clip) -> dict[str, Leg]:
    """Each side's hip (top of the leg), knee (the ankle's parent), ankle and toe (the ankle's
    child along the foot, if any)."""
    out = {}
    for side, leg in clip.body.legs.items():
        ankle = clip.body.feet[side][0]
        below = [j for j in clip.body.feet[side][1:] if clip.parents[j] == ankle]
        out[side] = Leg(leg[0], int(clip.parents[ankle]), ankle, below[0] if below else None)
    return out


def world(clip) -> tuple[np.ndarray, np.ndarray]:
    """([T, J, 3, 3] world rotation matrices, [T, J, 3] world positions in meters), from scipy's
    rotations, joint by joint (parents come first in a clip)."""
    T, J = clip.n_frames, clip.n_joints
    local = Rotation.from_quat(clip.rotations.reshape(-1, 4)[:, [1, 2, 3, 0]])
    local_m = local.as_matrix().reshape(T, J, 3, 3)
    mats = np.empty((T, J, 3, 3))
    pos = np.empty((T, J, 3))
    for j in range(J):
        p = clip.parents[j]
        if p < 0:
            mats[:, j] = local_m[:, j]
            pos[:, j] = clip.positions[:, j]
        else:
            mats[:, j] = mats[:, p] @ local_m[:, j]
            pos[:, j] = pos[:, p] + np.einsum("tij,tj->ti", mats[:, p], clip.positions[:, j])
    return mats, pos * clip.meters_per_unit


def foot_points(clip, side: str, mats: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """[T, K, 3] meters: the foot's joints (the body map's ankle and every joint below it) and
    their End Sites (`points_below`)."""
    return points_below(clip, clip.body.feet[side][0], mats, pos)


def points_below(clip, joint: int, mats: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """[T, K, 3] meters: a joint (an ankle, picked by the caller), every joint below it and their
    End Sites, from `world`'s output: a foot without the body map's say."""
    joints = [joint]
    for j in range(joint + 1, clip.n_joints):  # parents come first in a clip
        if clip.parents[j] in joints:
            joints.append(j)
    sites = np.flatnonzero(np.isin(clip.end_parents, joints))
    ends = [pos[:, clip.end_parents[s]] + np.einsum("tij,j->ti", mats[:, clip.end_parents[s]],
                                                    clip.end_offsets[s]) * clip.meters_per_unit
            for s in sites]
    return np.concatenate([pos[:, joints], *(e[:, None] for e in ends)], axis=1)


def pivot_speeds(points: np.ndarray, up: np.ndarray, fps: float) -> np.ndarray:
    """[T] m/s: how fast a foot slides over the floor into each frame, its point that moves least
    on each step (0 on the first frame): `pivot_slip` frame by frame."""
    step = np.diff(points, axis=0)
    flat = step - (step @ up)[..., None] * up
    return np.concatenate([[0.0], np.linalg.norm(flat, axis=-1).min(axis=1) * fps])


def lowpass(x: np.ndarray, fps: float, hz: float = LOWPASS_HZ) -> np.ndarray:
    """x [T, ...] low-passed along time, zero phase (a 2nd-order Butterworth, forward and back)."""
    if hz >= 0.5 * fps:
        return x.copy()
    b, a = butter(2, hz / (0.5 * fps))
    return filtfilt(b, a, x, axis=0, padlen=min(x.shape[0] - 1, 3 * max(len(a), len(b))))


def peak_acceleration(pos: np.ndarray, fps: float, joints, start: int) -> np.ndarray:
    """[len(joints)] the largest acceleration (m/s^2) of each joint from frame `start` on: second
    differences of its world positions after the 10 Hz zero-phase low-pass."""
    p = lowpass(pos[start:, list(joints)], fps)
    acc = np.diff(p, 2, axis=0) * fps * fps
    return np.linalg.norm(acc, axis=-1).max(axis=0)


def rotation_steps(clip, joints, start: int, stop: int | None = None) -> np.ndarray:
    """[stop - start - 1, len(joints)] angle (rad) of each joint's local rotation from frame to
    frame, over frames start..stop - 1 (stop None: to the end)."""
    q = clip.rotations[start:stop, list(joints)]
    a = Rotation.from_quat(q[1:].reshape(-1, 4)[:, [1, 2, 3, 0]])
    b = Rotation.from_quat(q[:-1].reshape(-1, 4)[:, [1, 2, 3, 0]])
    return (a * b.inv()).magnitude().reshape(len(q) - 1, len(joints))


def hinge(clip, mats: np.ndarray, pos: np.ndarray, leg: Leg, start: int) -> np.ndarray:
    """The knee's bend axis in the thigh's frame (the hip joint's): the bend planes' normals
    (hip - knee) x (ankle - knee), taken into that frame and summed (a bent knee weighs more
    than a nearly straight one), made unit. The side a knee bends to is this axis's."""
    a, b, c = pos[start:, leg.hip], pos[start:, leg.knee], pos[start:, leg.ankle]
    n = np.cross(a - b, c - b)
    local = np.einsum("tji,tj->ti", mats[start:, leg.hip], n)
    h = local.sum(axis=0)
    return h / np.linalg.norm(h)


def knee_flexion(mats: np.ndarray, pos: np.ndarray, leg: Leg, axis: np.ndarray) -> np.ndarray:
    """[T] the knee's flexion (rad): 0 straight, positive toward the side of `axis` (the thigh-frame
    bend axis `hinge` found), negative past straight."""
    a, b, c = pos[:, leg.hip], pos[:, leg.knee], pos[:, leg.ankle]
    ab, cb = a - b, c - b
    h = np.einsum("tij,j->ti", mats[:, leg.hip], axis)
    n = np.cross(ab, cb)
    return np.arctan2(np.einsum("ti,ti->t", n, h), -np.einsum("ti,ti->t", ab, cb))


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[(start, stop)] of the runs of True, stop excluded."""
    edges = np.diff(np.concatenate([[0], np.asarray(mask).astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))


def heights(points: np.ndarray, up: np.ndarray) -> np.ndarray:
    return points @ up


def slowest_speed(points: np.ndarray, fps: float) -> np.ndarray:
    """[T] m/s of the foot's slowest point: central differences of the low-passed positions."""
    v = np.gradient(lowpass(points, fps), axis=0) * fps
    return np.linalg.norm(v, axis=-1).min(axis=1)


def stance_height(points: np.ndarray, up: np.ndarray, fps: float) -> np.ndarray:
    """[T, K] each foot point's local stance height: the median of its height over the frames
    within STANCE_SECONDS where the foot is slower than REF_SPEED (its lowest there when none
    is). Each point its own (a skeleton's foot has no heel: at a heel strike the ankle is at its
    stance height, well above the toe's), and a median, not a minimum (a toe tip swings below
    the floor at push-off)."""
    h = points @ up
    slow = slowest_speed(points, fps) < REF_SPEED
    r = max(1, round(STANCE_SECONDS * fps))
    out = np.empty_like(h)
    for t in range(h.shape[0]):
        a, b = max(0, t - r), min(h.shape[0], t + r + 1)
        at = h[a:b][slow[a:b]]
        out[t] = np.median(at, axis=0) if len(at) else h[a:b].min(axis=0)
    return out


def above_stance(points: np.ndarray, up: np.ndarray, fps: float) -> np.ndarray:
    """[T] m: how far the foot's lowest point rises above its local stance height (the point
    nearest its own stance height: the foot is down where any of it is)."""
    return ((points @ up) - stance_height(points, up, fps)).min(axis=1)


def reference_contacts(points: np.ndarray, up: np.ndarray, fps: float) -> np.ndarray:
    """bool [T]: the foot's lowest point within 3 cm of its local stance height (`above_stance`)
    and its slowest point slower than 0.5 m/s (from the low-passed positions, central differences)."""
    return (above_stance(points, up, fps) <= REF_HEIGHT) & (slowest_speed(points, fps) < REF_SPEED)


def agreement(mask: np.ndarray, ref: np.ndarray, fps: float, start: int = 0,
              margin_s: float = 0.067) -> float:
    """Fraction of frames (from `start`) farther than `margin_s` from any edge of either mask on
    which the two agree."""
    mask, ref = np.asarray(mask, bool)[start:], np.asarray(ref, bool)[start:]
    n = mask.size
    edges = np.zeros(n, bool)
    for m in (mask, ref):
        at = np.flatnonzero(np.diff(m.astype(np.int8))) + 0.5  # between frames
        if at.size:
            dist = np.abs(np.arange(n)[:, None] - at[None, :]).min(axis=1) / fps
            edges |= dist <= margin_s
    keep = ~edges
    return float((mask[keep] == ref[keep]).mean()) if keep.any() else 1.0


def pivot_spread(points: np.ndarray) -> float:
    """Over one contact's frames, the largest distance (m) between two positions of the foot
    point that moves least (the smallest such spread among the points)."""
    best = np.inf
    for k in range(points.shape[1]):
        p = points[:, k]
        d = np.linalg.norm(p[:, None] - p[None, :], axis=-1).max()
        best = min(best, float(d))
    return best


def pivot_slip(points: np.ndarray, up: np.ndarray) -> float:
    """Over one contact's frames, how far (m) the foot slid over the floor: at each step the
    point that moves least, its move along the floor, summed."""
    return float(pivot_speeds(points, up, 1.0)[1:].sum())


def stance_slips(clip, planted: dict[str, np.ndarray], after: float = 0.0) -> np.ndarray:
    """[stances] how far (m) each stance's pivot slid over the floor (`pivot_slip`), over the runs
    of `planted` ({side: bool [T]}) from `after` seconds past each one's first frame (where a
    lock eases in over the landing, from where it is full)."""
    mats, pos = world(clip)
    skip = int(np.ceil(after * clip.fps - 1e-9))
    out = []
    for side, mask in planted.items():
        points = foot_points(clip, side, mats, pos)
        out += [pivot_slip(points[a + skip:b], clip.up) for a, b in runs(mask)]
    return np.array(out)


def frames_apart(found: np.ndarray, t: float, fps: float) -> float:
    """Frames from time t (seconds) to the nearest of the touchdowns `found` (seconds, as
    `contacts.footsteps` gives them). The detector puts many a touchdown on a whole frame k, the
    first frame on which the foot has arrived (61 % of them on a Bandai blend-space ramp at 30
    fps, 17 % on a CMU one at 120): the foot landed after frame k - 1 and by frame k, and t is
    measured from that span."""
    x, y = np.asarray(found, dtype=np.float64) * fps, t * fps
    whole = np.abs(x - np.round(x)) < 1e-9
    lo = np.where(whole, x - 1.0, x)
    d = np.where(y < lo, lo - y, np.where(y > x, y - x, 0.0))
    return float(d.min()) if d.size else float("inf")


def sped_up(clip, factor: float = 1.15):
    """The take with its root's travel over the floor (from frame 0) scaled by `factor`."""
    from core import root

    rot, pos = root.root_world(clip)
    d = pos - pos[0]
    d -= np.outer(d @ clip.up, clip.up)
    return root.with_root_world(clip, rot, pos + (factor - 1.0) * d)


class Legs(NamedTuple):
    """What the leg measures read off one clip, from frame `start` on (a leg's side -> value)."""

    flexion: dict[str, np.ndarray]  # [T] rad
    steps: dict[str, np.ndarray]  # [T - start - 1, 3] hip, knee, ankle local steps
    accel: dict[str, np.ndarray]  # [3] knee, ankle, toe peak accelerations
    points: dict[str, np.ndarray]  # [T, K, 3] foot points
    pos: np.ndarray  # [T, J, 3]


def measure_legs(clip, axes: dict[str, np.ndarray], start: int) -> Legs:
    """Knee flexion about the given thigh-frame `axes` (from `hinge` on the input), rotation steps
    of hip, knee and ankle, peak accelerations of knee, ankle and toe, and the foot points."""
    mats, pos = world(clip)
    flex, steps, acc, pts = {}, {}, {}, {}
    for side, leg in legs(clip).items():
        flex[side] = knee_flexion(mats, pos, leg, axes[side])
        steps[side] = rotation_steps(clip, [leg.hip, leg.knee, leg.ankle], start)
        tip = [leg.knee, leg.ankle] + ([leg.toe] if leg.toe is not None else [])
        acc[side] = peak_acceleration(pos, clip.fps, tip, start)
        pts[side] = foot_points(clip, side, mats, pos)
    return Legs(flex, steps, acc, pts, pos)


def input_axes(clip, start: int) -> dict[str, np.ndarray]:
    mats, pos = world(clip)
    return {side: hinge(clip, mats, pos, leg, start) for side, leg in legs(clip).items()}
