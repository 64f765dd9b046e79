"""Measures of blends and transitions as a motion person judges them, independent of the code under
test: world joint positions from scipy's rotations (not the core's FK), the root's path over the
floor, its horizontal speed, travel directions per whole cycle, how far a path strays from its
initial line, and knee flexion with its bend side from hip, knee and ankle positions.

Callers say which joints are which (by name or through a variant's joint map) and which way is up:
nothing here reads the body map, so a test does not grade the core with its own guesses. Lengths
come out in meters (`clip.meters_per_unit`), angles in radians, speeds in m/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from scipy.spatial.transform import Rotation

# Hip (thigh), knee and ankle joints by side, for each naming the tests' takes use.
LEG_NAMES = {
    "cmu": {"L": ("LeftUpLeg", "LeftLeg", "LeftFoot"), "R": ("RightUpLeg", "RightLeg", "RightFoot")},
    "bandai": {"L": ("UpperLeg_L", "LowerLeg_L", "Foot_L"), "R": ("UpperLeg_R", "LowerLeg_R", "Foot_R")},
}


class Leg(NamedTuple):
    hip: int
    knee: int
    ankle: int


def legs(names: Sequence[str], index: Sequence[int] | np.ndarray | None = None) -> dict[str, Leg]:
    """{'L': Leg, 'R': Leg} found by the names of `names` (a CMU or Bandai take); `index` maps each
    to another clip's joints (a variant's `index` from tests/variants.py)."""
    for table in LEG_NAMES.values():
        if all(n in names for side in table.values() for n in side):
            m = (lambda j: int(j)) if index is None else (lambda j: int(index[j]))
            return {s: Leg(*(m(names.index(n)) for n in table[s])) for s in ("L", "R")}
    raise ValueError(f"no known leg names in {list(names)[:6]}...")


def world_positions(clip) -> np.ndarray:
    """[T, J, 3] world joint positions in file units, by scipy's rotations along the hierarchy."""
    T, J = clip.rotations.shape[:2]
    rots: list[Rotation] = []
    pos = np.zeros((T, J, 3))
    for j in range(J):
        local = Rotation.from_quat(clip.rotations[:, j][:, [1, 2, 3, 0]])
        p = clip.parents[j]
        if p < 0:
            rots.append(local)
            pos[:, j] = clip.positions[:, j]
        else:
            rots.append(rots[p] * local)
            pos[:, j] = pos[:, p] + rots[p].apply(clip.positions[:, j])
    return pos


def floor_basis(up: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors spanning the floor under `up` (a right-handed pair: a x b = up)."""
    u = np.asarray(up, dtype=np.float64)
    u = u / np.linalg.norm(u)
    helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    a = np.cross(helper, u)
    a /= np.linalg.norm(a)
    return a, np.cross(u, a)


def on_floor(points: np.ndarray, up: npt.ArrayLike) -> np.ndarray:
    """[..., 2] floor coordinates of points [..., 3] (their height along `up` dropped)."""
    a, b = floor_basis(up)
    return np.stack([points @ a, points @ b], axis=-1)


def horizontal_speed(points: np.ndarray, up: npt.ArrayLike, fps: float,
                     meters_per_unit: float) -> np.ndarray:
    """[T - 1] speed over the floor (m/s) of a point [T, 3] from each frame to the next."""
    return np.linalg.norm(np.diff(on_floor(points, up), axis=0), axis=-1) * fps * meters_per_unit


def travel_direction(points: np.ndarray, up: npt.ArrayLike, a: int, b: int) -> float:
    """The direction (radians, on the floor) of the chord of a path [T, 3] from frame a to b."""
    d = on_floor(points[b] - points[a], up)
    return float(np.arctan2(d[1], d[0]))


def wrap(angle: float | np.ndarray) -> float | np.ndarray:
    """An angle wrapped to [-pi, pi)."""
    return (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi


def distance_from_line(points: np.ndarray, up: npt.ArrayLike, start: int, direction: float,
                       end: int) -> float:
    """How far (file units) the path's point at `end` lies, over the floor, from the line through
    its point at `start` along `direction` (radians, as `travel_direction` gives)."""
    d = on_floor(points[end] - points[start], up)
    return float(abs(-np.sin(direction) * d[0] + np.cos(direction) * d[1]))


def cycle_turn_rate(points: np.ndarray, up: npt.ArrayLike, starts: npt.ArrayLike, fps: float) -> float:
    """Average turn rate (rad/s) of a path [T, 3] cut into whole cycles at frames `starts` (each
    cycle from one start to the next): its travel direction over the last whole cycle against the
    first, over the time between their middles."""
    s = [int(x) for x in np.asarray(starts).reshape(-1)]
    first, last = travel_direction(points, up, s[0], s[1]), travel_direction(points, up, s[-2], s[-1])
    span = ((s[-2] + s[-1]) - (s[0] + s[1])) / 2.0 / fps
    return float(wrap(last - first)) / span


def knees(clip, leg_map: dict[str, Leg], world: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """{'L': [T], 'R': [T]} signed knee flexion (radians) from each leg's hip, knee and ankle world
    positions: the angle between thigh and shin, positive where the shin bends behind the thigh
    (their cross product along the pelvis's left, from the right hip to the left one: the side a
    knee bends to), negative past straight on the other side. `world`: the clip's world
    positions when already made."""
    w = world_positions(clip) if world is None else world
    out = {}
    for side, other in (("L", "R"), ("R", "L")):
        leg, o = leg_map[side], leg_map[other]
        left, right = (leg, o) if side == "L" else (o, leg)
        thigh = w[:, leg.knee] - w[:, leg.hip]
        shin = w[:, leg.ankle] - w[:, leg.knee]
        pelvis_left = w[:, left.hip] - w[:, right.hip]
        lengths = np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1)
        cos = np.einsum("ij,ij->i", thigh, shin) / lengths
        angle = np.arccos(np.clip(cos, -1.0, 1.0))
        side_sign = np.einsum("ij,ij->i", np.cross(thigh, shin), pelvis_left)
        out[side] = np.where(side_sign >= 0.0, angle, -angle)
    return out
