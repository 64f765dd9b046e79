"""Issue 24 on transitions: re-anchoring from the direction of travel on Bandai walk and run takes,
the best target time, and foot locking through transitions and sync blends; issue 37's lock_feet
through every walk <-> run transition and sequence of tests/data."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import blend_checks as bc
import motion_checks as mc
import numpy as np
import pytest
from fixtures import ROOT, take_path
from test_transition_root import METHODS as ROOT_METHODS
from test_transition_root import PAIRS as ROOT_PAIRS
from test_transition_root import B, flexion_step, root_speeds, switches, window
from test_transition_root import load as load_pair_take

from core import bvh, root
from core import transition as tr
from core.clip import Clip

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


SYNC_PAIRS = [("02_01", "02_03"), ("dataset-1_walk_happy_001", "dataset-1_run_tired_001")]


@pytest.mark.parametrize("pair", SYNC_PAIRS)
def test_locked_sync_blends_slide_per_stance_no_more_than_the_better_source(pair):
    from core import footlock, sync
    from core.contacts import contacts as detect

    a, b = (sync.loop_cycle(load(n)) for n in pair)
    better = min(mc.stance_slips(a, detect(a)).max(), mc.stance_slips(b, detect(b)).max())
    for w in (0.3, 0.5, 0.7):
        planted = sync.sync_contacts(a, b, w, 3.0)
        locked = sync.sync_blend(a, b, w, 3.0, lock_feet=True)
        # From the frame the lock is full: a sync blend's touchdown comes with the blended foot
        # still landing, and issue 36's locks ease in over that (0.1 s), as the loops' feet do.
        held = mc.stance_slips(locked, planted, footlock.EASE_IN).max()
        assert held <= better
        assert mc.stance_slips(sync.sync_blend(a, b, w, 3.0), planted).max() > held


# --- issue 37: lock_feet on every walk <-> run transition of tests/data ---------------------------
#
# Measured as a motion person sees it, independently of the lock (tests/motion_checks.py: scipy
# FK, feet picked by name, the reference contacts of issue 36): in the blend window, on the frames
# where both takes plant the foot (src still playing) and the output's foot is down (its lowest
# point within 3 cm of the higher of the takes' feet there), the speed over the floor of the
# foot's point that moves least, each contact's first frame (the landing) left out, as the
# takes' own sliding is measured over their contacts.

class Feet:
    """A clip's feet as the measures read them: per side, foot points [T, K, 3] (m), the slide
    into each frame (m/s), the lowest point's height (m) and (for takes) the reference contacts."""

    def __init__(self, clip: Clip, contacts: bool = True) -> None:
        mats, pos = mc.world(clip)
        legs = bc.legs(clip.names)
        self.up = np.asarray(clip.up, dtype=np.float64)
        points = {f: mc.points_below(clip, legs[f].ankle, mats, pos) for f in "LR"}
        self.slide = {f: mc.pivot_speeds(p, self.up, clip.fps) for f, p in points.items()}
        self.low = {f: (p @ self.up).min(axis=1) for f, p in points.items()}
        self.planted = ({f: mc.reference_contacts(p, self.up, clip.fps) for f, p in points.items()}
                        if contacts else {})
        self.start = clip.motion_start

    def own(self) -> np.ndarray:
        """The take's slides over its contacts (first frames left out), from its motion on."""
        out = []
        for f in "LR":
            m = settled(self.planted[f])
            m[:self.start + 1] = False
            out.append(self.slide[f][m])
        return np.concatenate(out)


_FEET: dict[str, Feet] = {}


def take_feet(name: str) -> Feet:
    if name not in _FEET:
        _FEET[name] = Feet(load_pair_take(name))
    return _FEET[name]


def window_slides(out: Feet, at: int, src: Feet, i_s: int, dst: Feet, i_d: int, n: int) -> np.ndarray:
    """The output's slides (m/s) on the n frames after its switch frame `at` where both takes plant
    the foot (src from frame i_s on, held at its last frame, dst from i_d) and the output's foot
    is down; each such run's first frame left out."""
    k = np.arange(1, n + 1)
    s_k = np.minimum(i_s + k, len(src.low["L"]) - 1)
    out_slides = []
    for f in "LR":
        both = src.planted[f][s_k] & dst.planted[f][i_d + k]
        floor = np.maximum(src.low[f][s_k], dst.low[f][i_d + k])
        both &= out.low[f][at + k] <= floor + mc.REF_HEIGHT
        m = np.zeros(n + 1, dtype=bool)
        m[1:] = both
        out_slides.append(out.slide[f][at + k][settled(m)[1:]])
    return np.concatenate(out_slides)


_MATCHED: dict[tuple[str, str], list[tuple[float, float, float]]] = {}


def matched_switches(src_name: str, dst_name: str) -> list[tuple[float, float, float]]:
    """(src_time, dst_time, blend_time): three switch times over the source, each into the target
    time `best_target_time` finds (what Find Target Time gives an animator), blends of 0.2-0.5 s
    that end within both takes."""
    key = (src_name, dst_name)
    if key not in _MATCHED:
        src, dst = load_pair_take(src_name), load_pair_take(dst_name)
        out = []
        for ts in np.linspace(src.motion_start / src.fps + 1.0, src.duration - 0.6, 3):
            td = tr.best_target_time(src, float(ts), dst)
            for blend_time in (0.2, 0.35, 0.5):
                n = math.ceil(blend_time * src.fps - 1e-5)
                if round(td * src.fps) + n < dst.n_frames - 1 and round(ts * src.fps) + n < src.n_frames:
                    out.append((float(ts), td, blend_time))
        _MATCHED[key] = out
    return _MATCHED[key]


def unmatched_switches(src: Clip, dst: Clip) -> list[tuple[float, float, float]]:
    """test_transition_root's switches (phases as they come) whose blend ends within the source
    (the take a contact is compared with plays through the window)."""
    return [(ts, td, bt) for ts, td, bt in switches(src, dst)
            if round(ts * src.fps) + math.ceil(bt * src.fps - 1e-5) < src.n_frames]


def locked_slides(pair: tuple[str, str], method: str, cases) -> np.ndarray:
    src, dst = load_pair_take(pair[0]), load_pair_take(pair[1])
    fs, fd = take_feet(pair[0]), take_feet(pair[1])
    out = []
    for ts, td, blend_time in cases:
        locked = ROOT_METHODS[method](src, dst, ts, td, blend_time, lock_feet=True)
        i_s, i_d = round(ts * src.fps), round(td * src.fps)
        n = len(window(src, ts, blend_time))
        out.append(window_slides(Feet(locked, contacts=False), i_s, fs, i_s, fd, i_d, n))
    return np.concatenate(out)


@pytest.mark.parametrize("method", sorted(ROOT_METHODS))
@pytest.mark.parametrize("pair", ROOT_PAIRS, ids=lambda p: f"{p[0][-16:]}>{p[1][-16:]}")
def test_locked_transitions_into_the_target_time_slide_no_more_than_their_takes(pair, method):
    # Every walk <-> run pair, three switch times into the target time Find Target Time gives,
    # blends of 0.2-0.5 s: the window's sliding, over all of them, at most the takes' own + 0.02 m/s
    # (issue 37).
    own = max(take_feet(pair[0]).own().mean(), take_feet(pair[1]).own().mean())
    slides = locked_slides(pair, method, matched_switches(*pair))
    if slides.size:
        assert slides.mean() <= own + 0.02, (slides.mean(), own)
    else:  # its windows hold no stance both takes share (the output's foot down)
        assert pair == (B + "run_happy_001", B + "walk_tired_001")


@pytest.mark.parametrize("method", sorted(ROOT_METHODS))
@pytest.mark.parametrize("pair", ROOT_PAIRS, ids=lambda p: f"{p[0][-16:]}>{p[1][-16:]}")
def test_locked_transitions_at_any_phase_slide_little_more_than_their_takes(pair, method):
    # The root test's switches, into times 0.3 s after the target's start and halfway through
    # (phases as they come). Two takes planting a foot in two places at once leave a held foot
    # out of the leg's reach, or let go where one lifts it: within 0.05 m/s of the takes' own
    # here, within issue 37's 0.02 on 49 of the 52 (Bandai run_happy > walk_tired: +0.040 and
    # +0.044 m/s, over the 4 frames its windows share a stance; run_happy > walk-right_normal
    # inertialized +0.032). Main's window eased in over the landing: 42 of 52 over, up to +1.30.
    src, dst = load_pair_take(pair[0]), load_pair_take(pair[1])
    own = max(take_feet(pair[0]).own().mean(), take_feet(pair[1]).own().mean())
    slides = locked_slides(pair, method, unmatched_switches(src, dst))
    assert slides.size
    assert slides.mean() <= own + 0.05, (slides.mean(), own)


SEQUENCES = {
    "cmu_02": ["02_01", "02_03", "02_02"],
    "cmu_09": ["09_12", "09_01", "09_12"],
    "bandai": [B + "walk_normal_001", B + "run_happy_001", B + "walk_happy_001", B + "run_tired_001"],
}


def chained(names: list[str]) -> list[tuple[Clip, float, float]]:
    """(clip, start_s, end_s): the first from 0.1 s into its motion, each played up to 1.2 s (ending
    0.55 s before the take does, so it plays on through a blend) and entering the next at the
    target time Find Target Time gives (searched where the next has 0.3 s to play before that)."""
    clips = [load_pair_take(n) for n in names]
    start = clips[0].motion_start / clips[0].fps + 0.1
    spans = []
    for n, clip in enumerate(clips):
        end = min(start + 1.2, clip.duration - 0.55)
        spans.append((clip, start, end))
        if n + 1 < len(clips):
            nxt = clips[n + 1]
            start = tr.best_target_time(clip, end, nxt, search=(nxt.motion_start / nxt.fps + 0.1,
                                                                nxt.duration - 0.85))
    return spans


_MOTION: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}


def take_motion(name: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(the root's horizontal speed [T], each knee's flexion {side: [T]}) of a take, read once."""
    if name not in _MOTION:
        clip = load_pair_take(name)
        _MOTION[name] = root_speeds(clip), bc.knees(clip, bc.legs(clip.names))
    return _MOTION[name]


@pytest.mark.parametrize("method", sorted(ROOT_METHODS))
@pytest.mark.parametrize("family", sorted(SEQUENCES))
def test_a_locked_sequence_keeps_speed_knees_and_feet_at_every_switch(family, method):
    # transition.sequence with lock_feet: at each switch the root's horizontal speed within
    # [0.95 x min, 1.05 x max] of the two takes', knees within 3 degrees of their range up to the
    # next switch and no snap (as test_transition_root), and the windows' sliding, over all the
    # switches, at most the takes' own + 0.02 m/s.
    names = SEQUENCES[family]
    spans = chained(names)
    blends = [(0.2, 0.35, 0.5)[n % 3] for n in range(len(spans) - 1)]
    out = tr.sequence(spans, blends, "dead" if method == "dead" else "quintic", lock_feet=True)
    fps = out.fps
    legs = bc.legs(out.names)
    speed, bent, feet = root_speeds(out), bc.knees(out, legs), Feet(out, contacts=False)
    switch = [round(t * fps) for t in out.events["Transition"]]
    slides = []
    pairs = zip(spans[:-1], spans[1:], blends, strict=True)
    for n, ((a, _, end), (b, start, _), blend_time) in enumerate(pairs):
        i, j, k = switch[n], round(end * fps), round(start * fps)
        frames = window(out, out.events["Transition"][n], blend_time)
        w = len(frames)
        (speed_a, ka), (speed_b, kb) = take_motion(names[n]), take_motion(names[n + 1])
        takes = np.concatenate([speed_a[j - round(0.3 * fps) + 1:j + 1], speed_b[k + 1:k + 1 + w]])
        case = (names[n], names[n + 1], end, start, blend_time)
        moving = speed[frames]
        assert moving.max() <= 1.05 * takes.max(), (case, moving.max(), takes.max())
        assert moving.min() >= 0.95 * takes.min(), (case, moving.min(), takes.min())
        upto = switch[n + 1] + 1 if n + 1 < len(switch) else out.n_frames
        snap = 2.0 * max(max(flexion_step(ka[f], a.motion_start + 1), flexion_step(kb[f], b.motion_start + 1))
                         for f in "LR")
        for f in "LR":
            lo = min(ka[f][a.motion_start:].min(), kb[f][b.motion_start:].min()) - math.radians(3.0)
            hi = max(ka[f][a.motion_start:].max(), kb[f][b.motion_start:].max()) + math.radians(3.0)
            assert lo <= bent[f][i + 1:upto].min() and bent[f][i + 1:upto].max() <= hi, (case, f)
            assert flexion_step(bent[f][:upto], i) <= snap, (case, f)
        fa, fb = take_feet(names[n]), take_feet(names[n + 1])
        slides.append(window_slides(feet, i, fa, j, fb, k, w))
    own = max(take_feet(name).own().mean() for name in names)
    every = np.concatenate(slides)
    assert every.size
    assert every.mean() <= own + 0.02, (every.mean(), own)


def test_a_locked_sequence_bakes_the_same_bits_in_every_run():
    """Python's string hashing changes from one process to the next (PYTHONHASHSEED): a bake that
    walked the feet in a set's order came out 3e-16 apart between runs of the same call."""
    code = ("import sys, hashlib, warnings; sys.path[:0] = ['tests', '.']; warnings.simplefilter('ignore')\n"
            "from fixtures import take_path\nfrom core import bvh, transition as tr\n"
            "a, b = bvh.load(take_path('02_01')), bvh.load(take_path('02_03'))\n"
            "s = tr.sequence([(a, 0.2, 1.2), (b, 0.3, 1.2), (a, 0.5, 2.5)], 0.3, lock_feet=True)\n"
            "print(hashlib.sha256(s.rotations.tobytes() + s.positions.tobytes()).hexdigest())")
    digests = set()
    for seed in ("0", "1", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        digests.add(run.stdout.strip())
    assert len(digests) == 1, digests
