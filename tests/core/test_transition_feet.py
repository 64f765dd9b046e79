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
    # The bound: at most the median candidate's jump, on every switch (the blend time the
    # search judges by, 0.25 s, is not the 0.3 s measured here).
    ratios_a = np.array(ratios)
    assert len(ratios_a) >= 15
    assert ratios_a.max() <= 1.0, ratios_a.round(2)


# --- foot locking through transitions and sync blends ---------------------------------------------

# (02_03 > 02_01 enters at 1.15 s: with the lift where the foot speeds up for good, 02_01's right
# foot is off by 1.2 s + the time 02_03's takes to land.)
LOCK_CASES = [("02_01", "02_03", 1.2, 0.6), ("02_03", "02_01", 0.8, 1.15),
              ("dataset-1_walk_normal_001", "dataset-1_run_happy_001", 2.0, 1.5),
              ("dataset-1_run_tired_001", "dataset-1_walk_happy_001", 2.5, 2.0)]


def settled(mask):
    """The contact frames after each contact's first: the steps a lock can hold (the step onto the
    touchdown frame is the landing itself, the same with or without a lock)."""
    first = mask & ~np.concatenate([[False], mask[:-1]])
    return mask & ~first


def test_locked_transitions_slide_no_more_than_their_sources():
    from core import metrics
    from core.contacts import contacts as detect

    for s_name, d_name, ts, td in LOCK_CASES:
        src, dst = load(s_name), load(d_name)
        dst_at = tr.at_rate(src, dst)
        i_s, i_d = round(ts * src.fps), round(td * src.fps)
        n = math.ceil(0.3 * src.fps) - 1
        cs, cd = detect(src), detect(dst_at)
        own = max(metrics.foot_sliding(src, {f: settled(m) for f, m in cs.items()}),
                  metrics.foot_sliding(dst_at, {f: settled(m) for f, m in cd.items()}))
        for method in (tr.dead_blend, tr.inertialize, tr.crossfade):
            plain = method(src, dst, ts, td, 0.3)
            locked = method(src, dst, ts, td, 0.3, lock_feet=True)
            # Where both sources have the foot planted inside the blend (src still playing).
            both = {}
            for f in "LR":
                m = np.zeros(plain.n_frames, dtype=bool)
                k = np.arange(1, n + 1)
                m[i_s + k] = cs[f][np.minimum(i_s + k, src.n_frames - 1)] & cd[f][i_d + k]
                both[f] = settled(m)
            window = (i_s + 1, i_s + n + 1)
            slid = metrics.foot_sliding(locked, both, frames=window)
            assert slid <= own + 0.02, (s_name, d_name, method.__name__)
            assert metrics.foot_sliding(plain, both, frames=window) > own + 0.02  # the blend slides
            before = metrics.switch_velocity_change(plain, i_s)
            after = metrics.switch_velocity_change(locked, i_s)
            assert after["position"] <= before["position"] + 1e-12
            assert after["rotation"] <= before["rotation"] + 1e-12
            np.testing.assert_array_equal(locked.rotations[:i_s + 1], src.rotations[:i_s + 1])


def test_a_locked_sequence_holds_the_feet_through_every_switch():
    from core import metrics

    a, b, c = load("02_01"), load("02_03"), load("02_02")
    clips = [(a, 0.1, 1.5), (b, 0.2, 1.2), (c, 0.5, 2.0)]
    plain, locked = tr.sequence(clips, 0.3), tr.sequence(clips, 0.3, lock_feet=True)
    assert plain.n_frames == locked.n_frames
    for t in locked.events["Transition"]:
        i = round(t * 120)
        window = (i + 1, i + 36)
        planted = {f: settled(m) for f, m in tr.switched_contacts(plain, plain, i, i, 35).items()}
        assert metrics.foot_sliding(locked, planted, frames=window) <= metrics.foot_sliding(
            plain, planted, frames=window)


def stance_slips(clip, planted, after=0.0):
    """Horizontal slip (m) of each contact's slowest point, summed over the contact from `after`
    seconds on (a lock is full 0.1 s after its touchdown)."""
    wrot, wpos = clip.fk()
    ends = clip.end_site_positions(wrot, wpos)
    up = clip.up
    slips = []
    for foot, mask in planted.items():
        joints = clip.body.feet[foot]
        sites = np.flatnonzero(np.isin(clip.end_parents, joints))
        p = np.concatenate([wpos[:, joints], ends[:, sites]], axis=1) * clip.meters_per_unit
        edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            step = np.diff(p[a + math.ceil(after * clip.fps - 1e-9):b], axis=0)
            step -= (step @ up)[..., None] * up
            slips.append(np.linalg.norm(step, axis=-1).min(axis=1).sum())
    return np.array(slips)


SYNC_PAIRS = [("02_01", "02_03"), ("dataset-1_walk_happy_001", "dataset-1_run_tired_001")]


@pytest.mark.parametrize("pair", SYNC_PAIRS)
def test_locked_sync_blends_slide_per_stance_no_more_than_the_better_source(pair):
    from core import footlock, sync
    from core.contacts import contacts as detect

    a, b = (sync.loop_cycle(load(n)) for n in pair)
    better = min(stance_slips(a, detect(a)).max(), stance_slips(b, detect(b)).max())
    for w in (0.3, 0.5, 0.7):
        planted = sync.sync_contacts(a, b, w, 3.0)
        locked = sync.sync_blend(a, b, w, 3.0, lock_feet=True)
        # From the frame the lock is full: a sync blend's touchdown comes with the blended foot
        # still landing, and issue 36's locks ease in over that (0.1 s), as the loops' feet do.
        held = stance_slips(locked, planted, footlock.EASE_IN).max()
        assert held <= better
        assert stance_slips(sync.sync_blend(a, b, w, 3.0), planted).max() > held
