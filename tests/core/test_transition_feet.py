"""Issue 24 on transitions: re-anchoring from the direction of travel on Bandai walk and run takes,
the best target time, and foot locking through transitions and sync blends."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import take_path

from core import bvh, root
from core import transition as tr

WALKS = ["dataset-1_walk_normal_001", "dataset-1_walk_happy_001", "dataset-1_walk_tired_001"]
RUNS = ["dataset-1_run_happy_001", "dataset-1_run_tired_001"]
PAIRS = [(w, r) for w in WALKS for r in RUNS] + [(r, w) for w in WALKS for r in RUNS]
SWITCHES = [(2.0, 1.5), (2.5, 2.0), (3.0, 1.8)]


def load(name):
    return bvh.load(take_path(name))


def floor_degrees(v, clip) -> float:
    fwd, side = root.floor_axes(clip.up)
    return math.degrees(math.atan2(float(v @ side), float(v @ fwd)))


def wrap(x: float) -> float:
    return (x + 180.0) % 360.0 - 180.0


def path_error(out, dst, i_s, i_d, n_window, fps) -> float:
    """Degrees between the output's travel over the second after the blend, less dst's own turn
    from the second before its entry to that span, and the output's travel over the second
    before the switch (root chords on the floor)."""
    n = round(fps)
    to, td = root.trajectory(out), root.trajectory(dst)
    before = floor_degrees(to.position[i_s] - to.position[i_s - n], out)
    after = floor_degrees(to.position[i_s + n_window + n] - to.position[i_s + n_window], out)
    own = (floor_degrees(td.position[i_d + n_window + n] - td.position[i_d + n_window], out)
           - floor_degrees(td.position[i_d] - td.position[i_d - n], out))
    return abs(wrap(after - own - before))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0][10:]}>{p[1][10:]}")
def test_walk_run_switches_keep_the_path_straight(pair):
    src, dst = load(pair[0]), load(pair[1])
    old = []
    for ts, td in SWITCHES:
        out = tr.dead_blend(src, dst, ts, td, 0.3)
        i_s, i_d = round(ts * 30), round(td * 30)
        assert path_error(out, dst, i_s, i_d, 9, 30.0) < 5.0
        # One frame's pelvis yaw (the old anchoring) turns the same paths by up to 23 degrees.
        at = root.trajectory(src)
        pelvis = root.reanchor(dst.replace(up=src.up, forward=src.forward), i_d, at.position[i_s],
                               at.heading[i_s])
        lined = np.concatenate([out.rotations[:i_s + 1], pelvis.rotations[i_d + 1:]])
        placed = np.concatenate([out.positions[:i_s + 1], pelvis.positions[i_d + 1:]])
        old.append(path_error(out.replace(rotations=lined, positions=placed), dst, i_s, i_d, 9, 30.0))
    if pair[0] in WALKS and pair[1] == "dataset-1_run_happy_001":
        assert max(old) > 5.0
