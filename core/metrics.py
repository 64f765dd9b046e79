"""Motion metrics, all in meters and seconds (the one home for them)."""

from __future__ import annotations

import numpy as np

from .clip import Clip
from .root import character_positions


def root_speed(clip: Clip) -> float:
    """Mean horizontal speed of the motion root over the captured frames, in m/s.

    Path length of the root's floor projection divided by its duration, so a walk that turns
    keeps its speed; a converter T-pose at frame 0 is left out.
    """
    _, world = clip.fk()
    root = world[clip.motion_start:, clip.root]
    if len(root) < 2:
        return 0.0
    up = clip.up
    step = np.diff(root, axis=0)
    planar = step - np.outer(step @ up, up)
    return float(np.linalg.norm(planar, axis=-1).sum() * clip.meters_per_unit / ((len(root) - 1) / clip.fps))


def _world_meters(clip: Clip) -> np.ndarray:
    return clip.fk()[1] * clip.meters_per_unit


def _check_same_frames(a: Clip, b: Clip) -> None:
    a.check_compatible(b)
    if a.n_frames != b.n_frames:
        raise ValueError(f"clips have {a.n_frames} and {b.n_frames} frames; compare equal lengths")


def position_error(a: Clip, b: Clip) -> tuple[float, float]:
    """(mean, max) distance in meters between world joint positions of two clips on one skeleton
    (each converted with its own meters_per_unit)."""
    _check_same_frames(a, b)
    dist = np.linalg.norm(_world_meters(a) - _world_meters(b), axis=-1)
    if dist.size == 0:
        return 0.0, 0.0
    return float(dist.mean()), float(dist.max())


def relative_error(a: Clip, b: Clip) -> float:
    """Relative position error of `a` against the reference `b`, as used to score motion models.

    Positions are taken in each clip's character frame (root on the floor at the origin, heading
    aligned), in meters; per frame and joint |p_a - p_b| / max(|p_b|, 0.1 h) with h the height of
    b's skeleton in meters; the mean over frames and joints.
    """
    _check_same_frames(a, b)
    pa = character_positions(a) * a.meters_per_unit
    pb = character_positions(b) * b.meters_per_unit
    h = b.height * b.meters_per_unit
    err = np.linalg.norm(pa - pb, axis=-1) / np.maximum(np.linalg.norm(pb, axis=-1), 0.1 * h)
    return float(err.mean()) if err.size else 0.0
