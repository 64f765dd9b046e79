"""Motion metrics, all in meters and seconds (the one home for them)."""

from __future__ import annotations

import numpy as np

from .clip import Clip


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
