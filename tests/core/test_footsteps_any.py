"""Footsteps on any take: thresholds that scale with the body and the motion, touchdowns on time.

Oracles: the hand labels (tests/data/footsteps.csv for CMU at 120 fps, footsteps_bandai.csv for
three Bandai takes at 30 fps, read off foot heights and speeds, never from the detector), the same
take at other frame rates and speeds (its steps must not move), human cadence ranges, and the
Bandai loops' own construction (one cycle: one step per foot).
"""

from __future__ import annotations

import csv
import glob
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from fixtures import BANDAI_DIR, take_path

from core import bvh, contacts, resample, sync
from core.clip import Clip

DATA = Path(__file__).resolve().parents[1] / "data"
BANDAI = sorted(Path(p).stem for p in glob.glob(str(BANDAI_DIR / "*.bvh")))
LOOPS = ["dataset-1_walk_normal_002", "dataset-1_run_normal_001", "dataset-1_dash_normal_001",
         "dataset-1_walk-back_normal_001"]
# Locomotion takes (not the jumps of 01_01, the hops and turning starts of the 131 takes, the bow):
# cadence in steps per second, and the feet alternate.
WALKS = ["02_01", "02_02", "dataset-1_walk_normal_001", "dataset-1_walk_happy_001",
         "dataset-1_walk_tired_001", "dataset-1_walk-left_normal_001", "dataset-1_walk-right_normal_001"]
RUNS = ["02_03", "09_01", "dataset-1_run_happy_001", "dataset-1_run_tired_001"]
LOCOMOTION = WALKS + RUNS + ["09_12"] + LOOPS


def load(name: str) -> Clip:
    return bvh.load(take_path(name))


def bandai_labels() -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, list[int]]] = {}
    with (DATA / "footsteps_bandai.csv").open(newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")][1:]
    for clip, foot, frame in rows:
        out.setdefault(clip, {"L": [], "R": []})[foot].append(int(frame))
    return {clip: {k: np.array(sorted(v)) for k, v in feet.items()} for clip, feet in out.items()}


def steps_in_order(steps: dict[str, np.ndarray]) -> list[tuple[float, str]]:
    return sorted((float(t), key[-1]) for key, times in steps.items() if key.startswith("FootDown_")
                  for t in times)


def alternate(order: list[tuple[float, str]]) -> bool:
    return all(a[1] != b[1] for a, b in itertools.pairwise(order))


# -- hand labels ------------------------------------------------------------------------------------


def test_the_bandai_labels_cover_a_walk_a_run_and_a_styled_walk_and_alternate():
    labels = bandai_labels()
    assert set(labels) == {"dataset-1_walk_normal_001", "dataset-1_run_happy_001", "dataset-1_walk_happy_001"}
    for feet in labels.values():
        order = sorted([(int(f), s) for s, frames in feet.items() for f in frames])
        assert alternate([(float(f), s) for f, s in order])


def test_every_bandai_labelled_touchdown_is_found_with_a_mean_error_under_a_frame():
    errors = []
    for name, feet in bandai_labels().items():
        clip = load(name)
        found = contacts.footsteps(clip)
        for side, frames in feet.items():
            got = found[f"FootDown_{side}"] * clip.fps
            assert got.size == frames.size, f"{name} {side}: labelled {frames}, found {np.round(got, 1)}"
            assert np.abs(got - frames).max() <= 1.5, f"{name} {side}: {frames} vs {np.round(got, 1)}"
            errors.append((got - frames) / clip.fps)
    e = np.abs(np.concatenate(errors))
    # 38 touchdowns at 30 fps: mean 17 ms, worst 44 ms when this was written (docs/api.md).
    assert e.mean() < 1.0 / 30.0
    assert e.max() < 1.5 / 30.0


# -- the same take at other rates and speeds ---------------------------------------------------------


# CMU takes are 120 fps, Bandai's 30: each at the two other rates.
RATES = [(n, r) for n in ("02_01", "02_02", "02_03", "09_01", "09_12") for r in (24.0, 30.0)] + [
    (b, r) for b in BANDAI if "bow" not in b for r in (24.0, 120.0)]


@pytest.mark.parametrize(("name", "rate"), RATES)
def test_a_take_resampled_steps_where_it_did(name, rate):
    clip = load(name)
    if name == "09_12":
        clip = clip[:381]  # the forward walk (labels README); it then walks backward and sideways
    base = steps_in_order(contacts.footsteps(clip))
    other = steps_in_order(contacts.footsteps(resample.resample(clip, rate)))
    frame = 1.0 / min(rate, clip.fps)
    # A touchdown within a few frames of the first analysed frame cannot be told from a foot that
    # was already down there.
    start = clip.motion_start / clip.fps + 4 * frame
    base = [s for s in base if s[0] > start]
    other = [s for s in other if s[0] > start]
    assert [f for _, f in other] == [f for _, f in base]
    worst = max(abs(a[0] - b[0]) for a, b in zip(base, other, strict=True)) / frame
    # Within a frame of the coarser rate (a quarter more for interpolated poses between frames).
    assert worst <= 1.25


@pytest.mark.parametrize(("name", "speed"), [("02_01", 0.27), ("02_01", 0.5), ("09_01", 1.3)])
def test_a_take_played_slower_or_faster_steps_at_the_same_moments_of_its_motion(name, speed):
    # 02_01 at 0.27x walks at 0.32 m/s with a swing foot under 1.1 m/s; 09_01 at 1.3x runs 4.6 m/s.
    clip = load(name)
    base = steps_in_order(contacts.footsteps(clip))
    other = steps_in_order(contacts.footsteps(clip.replace(fps=clip.fps * speed)))
    assert [f for _, f in other] == [f for _, f in base]
    for (a, _), (b, _) in zip(base, other, strict=True):
        # Seconds of the original take: within 4 of its frames (33 ms).
        assert abs(b * speed - a) <= 4.0 / clip.fps


@pytest.mark.parametrize("weight", [0.3, 0.5])
def test_walk_run_sync_blends_step_with_alternating_feet(weight):
    walk, jog = sync.loop_cycle(load("02_01")), sync.loop_cycle(load("02_03"))
    out = sync.sync_blend(walk, jog, weight, 4.0)
    order = steps_in_order(contacts.footsteps(out))
    assert len(order) >= 6 and alternate(order)


# -- loops, cadence, doubt ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LOOPS)
def test_a_pre_cut_loop_is_a_loop_with_one_step_per_foot(name):
    clip = load(name)
    assert clip.loop and clip.seam_repeats and clip.loop_frames == clip.n_frames - 1
    steps = contacts.footsteps(clip)
    assert steps["FootDown_L"].size == 1 and steps["FootDown_R"].size == 1
    assert np.all(steps["FootDown_L"] < clip.loop_frames / clip.fps)
    # A take that starts and ends standing is no loop; set by hand, it is.
    bow = load("dataset-1_bow_normal_001")
    assert not bow.loop
    bow.loop = True
    assert bow.loop


@pytest.mark.parametrize("name", LOCOMOTION)
def test_cadence_is_human_and_the_feet_alternate(name):
    clip = load(name)
    if name == "09_12":
        clip = clip[:381]  # it walks forward this long, then backward and sideways (labels README)
    order = steps_in_order(contacts.footsteps(clip))
    assert alternate(order), order
    if name in LOOPS:
        return  # one step per foot: no cadence within a cycle of two
    t = np.array([s[0] for s in order])
    cadence = (t.size - 1) / (t[-1] - t[0])
    low, high = (2.0, 3.3) if name in RUNS else (1.4, 2.3)
    assert low <= cadence <= high, f"{name}: {cadence:.2f} steps/s"


def test_a_foot_that_never_plants_is_reported_with_what_was_seen():
    clip = load("02_01")
    # The right foot raised 40 cm through the whole take: a hop on the left.
    raised = clip.copy()
    legs = clip.body.legs
    raised.positions[:, legs["R"][0]] += clip.up * 0.4 / clip.meters_per_unit
    with pytest.warns(contacts.ContactWarning, match=r"foot R never plants.*m/s.*Foot Speed"):
        contacts.footsteps(raised)
    with warnings.catch_warnings():
        warnings.simplefilter("error", contacts.ContactWarning)
        contacts.footsteps(clip)


def test_auto_thresholds_scale_with_the_take_and_the_body():
    walk, run = contacts.thresholds(load("02_01")), contacts.thresholds(load("09_01"))
    assert walk.speed_mps < run.speed_mps and walk.exit_mps < run.exit_mps
    slow = contacts.thresholds(load("02_01").replace(fps=120 * 0.27))
    assert slow.exit_mps < 0.6 < walk.exit_mps
    # A body half the size: heights half as far.
    big = load("02_01")
    small = big.replace(offsets=big.offsets * 0.5, positions=big.positions * 0.5,
                        end_offsets=big.end_offsets * 0.5, meters_per_unit=big.meters_per_unit)
    assert contacts.thresholds(small).height_m == pytest.approx(walk.height_m * 0.5, rel=1e-9)
    # A user's Foot Speed is taken as given, any value in range.
    for mps in (0.05, 1.0, 3.0, 5.0):
        th = contacts.thresholds(load("02_01"), speed_mps=mps)
        assert th.speed_mps == mps and th.exit_mps > mps


def test_takes_too_short_to_step_name_both_feet_with_no_steps():
    clip = load("02_01")
    for short in (clip[:1], clip[:2]):
        steps = contacts.footsteps(short, lifts=True)
        assert set(steps) == {"FootDown_L", "FootDown_R", "FootUp_L", "FootUp_R"}
        assert all(v.size == 0 for v in steps.values())
        assert {k: v.shape for k, v in contacts.contacts(short).items()} == {"L": (short.n_frames,),
                                                                              "R": (short.n_frames,)}
