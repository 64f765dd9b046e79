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


def _stance_inside(planted, frame) -> bool:
    return bool(planted[frame - 1] and planted[frame] and planted[frame + 1])


def test_best_target_time_lands_mid_stance_of_the_planted_foot_with_a_small_velocity_change():
    from core import metrics
    from core.contacts import contacts as detect

    ratios = []
    for w in [*WALKS, "02_01"]:
        for r in (RUNS if w in WALKS else ["02_03"]):
            src, dst = load(w), load(r)
            planted_s, planted_d = detect(src), detect(dst)
            for ts in (1.2, 1.5, 1.7, 2.0, 2.5):
                i_s = round(ts * src.fps)
                feet = [f for f in "LR" if planted_s[f][i_s]]
                if len(feet) != 1:
                    continue
                td = tr.best_target_time(src, ts, dst)
                i_d = round(td * dst.fps)
                assert _stance_inside(planted_d[feet[0]], i_d), (w, r, ts, td)

                def change(t: float, ts=ts, src=src, dst=dst, i_s=i_s) -> float:
                    out = tr.dead_blend(src, dst, ts, t, 0.3)
                    return metrics.switch_velocity_change(out, i_s)["position"]

                step = max(1, round(dst.fps / 15))
                every = [change(i / dst.fps) for i in range(dst.motion_start + 1, dst.n_frames - 2, step)]
                ratios.append(change(td) / float(np.median(every)))
    # The pose and contact match keeps the jump at or below the median candidate's on most
    # switches; where it does not (a walk into the start of a run, 02_01 -> 02_03), it is close.
    ratios_a = np.array(ratios)
    assert len(ratios_a) >= 15
    assert np.mean(ratios_a <= 1.0) >= 0.8 and ratios_a.max() < 1.3
