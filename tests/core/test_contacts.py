"""Foot contacts, footsteps and gait phase: hand-labelled CMU takes, a synthetic walker, exact maths.

The touchdown frames in tests/data/footsteps.csv and the flight ranges in tests/data/flight.csv
were read by eye off the plots in tests/data/footsteps/ (see its README), never from the detector.
"""

from __future__ import annotations

import csv
import inspect
import math
from pathlib import Path

import numpy as np
import pytest

from core import contacts
from core.clip import Clip
from core.contacts import contacts as find_contacts
from core.contacts import footsteps, phase

DATA = Path(__file__).resolve().parents[1] / "data"
# Labelled frames per clip (first, last), both included; 09_12 only walks forward this long
# (tests/data/footsteps/README.md). The others are labelled whole from their first captured frame.
LABELLED = {"02_01": (1, 343), "02_02": (1, 298), "02_03": (1, 173), "09_01": (1, 148), "09_12": (1, 380)}
TOLERANCE_FRAMES = 3


def _rows(name: str) -> list[list[str]]:
    with (DATA / name).open(newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    return rows[1:]


def touchdown_labels() -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, list[int]]] = {}
    for clip, foot, frame in _rows("footsteps.csv"):
        out.setdefault(clip, {"L": [], "R": []})[foot].append(int(frame))
    return {clip: {foot: np.array(sorted(f)) for foot, f in feet.items()} for clip, feet in out.items()}


def flight_labels() -> list[tuple[str, int, int]]:
    return [(clip, int(a), int(b)) for clip, a, b in _rows("flight.csv")]


def detected_frames(clip: Clip, name: str) -> dict[str, np.ndarray]:
    """Touchdowns in (sub-)frames inside the labelled range, default parameters."""
    first, last = LABELLED[name]
    steps = footsteps(clip)
    out = {}
    for foot in "LR":
        f = steps[f"FootDown_{foot}"] * clip.fps
        out[foot] = f[(f >= first) & (f <= last)]
    return out


# -- real takes: hand labels -----------------------------------------------------------------------


def test_the_labels_cover_the_five_takes_and_alternate():
    labels = touchdown_labels()
    assert sorted(labels) == sorted(LABELLED)
    assert sum(f.size for feet in labels.values() for f in feet.values()) == 23
    for feet in labels.values():
        order = np.argsort(np.concatenate([feet["L"], feet["R"]]))
        side = np.array(["L"] * feet["L"].size + ["R"] * feet["R"].size)[order]
        assert np.all(side[1:] != side[:-1])


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_every_labelled_touchdown_is_found_within_3_frames_and_nothing_else(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    found = detected_frames(clip, name)
    for foot, want in touchdown_labels()[name].items():
        got = found[foot]
        assert got.size == want.size, f"{name} {foot}: labelled {want}, found {np.round(got, 1)}"
        # Same count, both sorted: pair them in order.
        assert np.abs(got - want).max() <= TOLERANCE_FRAMES, f"{name} {foot}: {want} vs {np.round(got, 1)}"


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_detected_steps_alternate_strictly_on_the_labelled_takes(name, cmu_clips):
    found = detected_frames(cmu_clips(name), name)
    times = np.concatenate([found["L"], found["R"]])
    side = np.array(["L"] * found["L"].size + ["R"] * found["R"].size)[np.argsort(times)]
    assert side.size >= 3
    assert np.all(side[1:] != side[:-1]), "".join(side)


@pytest.mark.parametrize("name", ["131_03", "01_01"])
def test_no_foot_is_in_contact_during_a_labelled_flight(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    planted = find_contacts(clip)
    flights = [(a, b) for clip_name, a, b in flight_labels() if clip_name == name]
    assert flights
    for a, b in flights:
        for foot, mask in planted.items():
            assert not mask[a:b + 1].any(), f"{name} {foot} planted in flight {a}-{b}: " \
                                            f"{np.flatnonzero(mask[a:b + 1]) + a}"
        # A foot stands within half a second either side of each flight.
        assert any(mask[a - 60:a].any() for mask in planted.values())
        assert any(mask[b + 1:b + 61].any() for mask in planted.values())


def test_a_contact_active_at_the_first_captured_frame_is_not_a_touchdown(cmu_clips):
    # 02_01 starts with the left foot landing and 09_01 with it planted (frame 0 is the T-pose).
    for name in ("02_01", "09_01"):
        clip: Clip = cmu_clips(name)
        planted = find_contacts(clip)
        assert not planted["L"][0] and planted["L"][1]
        assert footsteps(clip)["FootDown_L"].min() > 0.5


def test_a_global_floor_misreads_subject_02_where_the_local_floor_does_not(cmu_clips):
    # Subject 02's floor rises 5-8 cm along the walkway: with a tight 10 cm height test, a single
    # floor at the take's lowest point leaves late steps "in the air".
    clip: Clip = cmu_clips("02_02")
    lowest = float((clip.fk()[1][clip.motion_start:] @ clip.up).min())
    want = touchdown_labels()["02_02"]
    local = footsteps(clip, height_m=0.1)
    flat = footsteps(clip, height_m=0.1, floor=lowest)

    def all_found(steps):
        return all(steps[f"FootDown_{f}"].size == want[f].size
                   and np.abs(steps[f"FootDown_{f}"] * clip.fps - want[f]).max() <= TOLERANCE_FRAMES
                   for f in "LR")

    assert all_found(local)
    assert not all_found(flat)


# -- real takes: invariances --------------------------------------------------------------------------


def test_feet_come_from_the_hierarchy_not_from_joint_names(cmu_clips):
    clip: Clip = cmu_clips("02_02")
    anonymous = clip.replace(names=[f"joint{j}" for j in range(clip.n_joints)])
    a, b = footsteps(clip), footsteps(anonymous)
    assert a.keys() == b.keys() == {"FootDown_L", "FootDown_R"}
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    # The 131 takes name their joints otherwise (LeftAnkle, LeftToe).
    feet = contacts.default_feet(cmu_clips("131_03"))
    assert [cmu_clips("131_03").names[j] for j in feet["L"] + feet["R"]] == [
        "LeftAnkle", "LeftToe", "RightAnkle", "RightToe"]


def test_feet_given_by_joint_name_match_the_default_and_name_the_tracks(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    by_name = {"L": ["LeftFoot", "LeftToeBase"], "R": ["RightFoot", "RightToeBase"]}
    assert footsteps(clip, feet=by_name).keys() == {"FootDown_L", "FootDown_R"}
    for key, times in footsteps(clip).items():
        np.testing.assert_array_equal(footsteps(clip, feet=by_name)[key], times)
    custom = footsteps(clip, feet={"left": ["LeftFoot", "LeftToeBase"], "right": "RightFoot"}, lifts=True)
    assert custom.keys() == {"FootDown_left", "FootUp_left", "FootDown_right", "FootUp_right"}
    np.testing.assert_array_equal(custom["FootDown_left"], footsteps(clip)["FootDown_L"])
    np.testing.assert_array_equal(custom["FootDown_right"], footsteps(clip)["FootDown_R"])


def test_speeds_are_meters_per_second_whatever_the_file_unit(cmu_clips):
    clip: Clip = cmu_clips("09_01")
    in_cm = clip.scaled(100.0)  # lengths x100, meters_per_unit / 100
    a, b = footsteps(clip, lifts=True), footsteps(in_cm, lifts=True)
    for key in a:
        np.testing.assert_allclose(b[key], a[key], rtol=0, atol=1e-9)


def test_times_are_seconds_from_the_clips_frame_0(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    cut = 60
    whole, part = footsteps(clip), footsteps(clip[cut:])
    for key in whole:
        # Far from the cut both see the same frames: the same touchdowns, shifted by 0.5 s.
        far = whole[key][whole[key] > (cut + 30) / clip.fps]
        np.testing.assert_allclose(part[key][part[key] > 30 / clip.fps] + cut / clip.fps, far,
                                   rtol=0, atol=1e-9)
    steps = footsteps(clip)
    assert all(0.0 < t.min() and t.max() < clip.duration for t in steps.values())


def test_frames_restricts_the_analysis(cmu_clips):
    clip: Clip = cmu_clips("09_12")
    first, last = LABELLED["09_12"]
    part = find_contacts(clip, frames=(first, last + 1))
    whole = find_contacts(clip)
    for foot in "LR":
        assert not part[foot][:first].any() and not part[foot][last + 1:].any()
        # Away from the ends the range changes nothing.
        np.testing.assert_array_equal(part[foot][first + 30:last - 30], whole[foot][first + 30:last - 30])
    steps = footsteps(clip, frames=(first, last + 1))
    want = touchdown_labels()["09_12"]
    for foot in "LR":
        np.testing.assert_allclose(steps[f"FootDown_{foot}"] * clip.fps, want[foot], atol=TOLERANCE_FRAMES)
    # A range that starts inside a stance: that contact has no touchdown.
    inside = footsteps(clip, frames=(100, 381))["FootDown_L"] * clip.fps
    np.testing.assert_allclose(inside, want["L"][want["L"] > 100], atol=TOLERANCE_FRAMES)


def test_contact_masks_run_from_touchdown_to_lift(cmu_clips):
    clip: Clip = cmu_clips("02_02")
    planted = find_contacts(clip)
    steps = footsteps(clip, lifts=True)
    start = clip.motion_start
    for foot in "LR":
        mask = planted[foot]
        assert not mask[:start].any()
        edges = np.diff(mask[start:].astype(np.int8))
        on, off = np.flatnonzero(edges == 1) + 1 + start, np.flatnonzero(edges == -1) + start
        np.testing.assert_array_equal(on, np.ceil(steps[f"FootDown_{foot}"] * clip.fps - 1e-9))
        np.testing.assert_array_equal(off, np.floor(steps[f"FootUp_{foot}"] * clip.fps + 1e-9))


@pytest.mark.parametrize("name", ["02_02", "09_01", "131_02"])
def test_each_foot_lifts_between_its_touchdowns(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    steps = footsteps(clip, lifts=True)
    for foot in "LR":
        down, up = steps[f"FootDown_{foot}"], steps[f"FootUp_{foot}"]
        events = np.concatenate([down, up])
        kind = np.array([1] * down.size + [-1] * up.size)[np.argsort(events)]
        assert np.all(kind[1:] != kind[:-1]), kind
        assert np.all(np.diff(np.sort(events)) > 0.05)


def test_the_height_test_keeps_feet_off_a_floor_far_below(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    below = find_contacts(clip, floor=-1000.0)
    assert not below["L"].any() and not below["R"].any()
    # Velocity leads: without any height test the walk reads the same.
    for key, times in footsteps(clip, floor=None).items():
        np.testing.assert_array_equal(times, footsteps(clip)[key])


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_phase_increases_through_real_walks_and_runs(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    first, last = LABELLED[name]
    steps = footsteps(clip, frames=(first, last + 1))
    ph = phase(clip, steps)
    assert np.all(np.diff(ph) > 0.0)
    # Left touchdowns sit on whole cycles (to within one frame's phase step).
    at = ph[np.round(steps["FootDown_L"] * clip.fps).astype(int)]
    np.testing.assert_allclose((at + np.pi) % (2 * np.pi) - np.pi, 0.0, atol=np.diff(ph).max())


# -- looping clips -------------------------------------------------------------------------------------


def test_a_contact_across_a_loops_seam_is_one_contact(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    # One stride from mid-stance of the right foot: its contact runs over the seam.
    a, b = 100, 233
    cycle = clip[a:b].replace(loop=True)
    # The take's thresholds on both (a cycle's own speeds would set its own).
    th = contacts.thresholds(clip)
    planted = find_contacts(cycle, thresholds=th)
    assert planted["R"][0] and planted["R"][-1]
    edges = np.flatnonzero(np.diff(planted["R"].astype(np.int8)))
    assert edges.size == 2  # one lift and one touchdown inside, the rest wraps
    looped, straight = footsteps(cycle, lifts=True, thresholds=th), footsteps(clip, lifts=True)
    for key in looped:
        assert looped[key].size == 1
        inside = straight[key][(straight[key] > a / clip.fps) & (straight[key] < (b - 1) / clip.fps)]
        # Subject 02's floor rises 5-8 cm along the walkway: wrapped, the loop's local floor
        # mixes both ends of the stride, which moves where a foot is read as landed by a frame
        # or two (as a loop cut from a sloped floor must).
        np.testing.assert_allclose(looped[key] + a / clip.fps, inside, atol=2.5 / clip.fps)


def test_a_touchdown_just_after_a_loops_seam_is_found_in_the_loop(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    # One stride from frame 198, as the right foot comes down (touchdown at 203). Read straight,
    # the take starts with the foot above the floor: it lands inside. As a loop, the swing before
    # the seam shows it land too; the take's thresholds on both.
    a, b = 198, 331
    th = contacts.thresholds(clip)
    plain, looped = clip[a:b].replace(loop=False), clip[a:b].replace(loop=True)
    whole = footsteps(clip)["FootDown_R"] * clip.fps
    for part in (plain, looped):
        down = footsteps(part, thresholds=th)["FootDown_R"] * clip.fps
        assert down.size == 1
        assert np.abs(down[0] + a - whole).min() <= TOLERANCE_FRAMES
    # Standing on it at the first frame (a frame after the touchdown) is no touchdown.
    assert footsteps(clip[206:b], thresholds=th)["FootDown_R"].size == 0


# -- a synthetic walker -----------------------------------------------------------------------------


def walker(frames: int = 120, period: int = 120, fps: float = 120.0, left_down: float = 0.0,
           stance: float = 0.6, stride: float = 1.2, loop: bool = False) -> Clip:
    """A stick figure walking along +Z, one cycle every `period` frames: each foot is planted for
    `stance` of the cycle and swings `stride` meters forward at constant speed in the rest,
    lifting 10 cm. The left foot lands on frame `left_down` (and every period after), the right
    half a cycle later. Meters, +Y up, identity rotations: world positions add up the local ones."""
    names = ["Hips", "LeftUpLeg", "LeftFoot", "LeftToeBase", "RightUpLeg", "RightFoot", "RightToeBase"]
    parents = [-1, 0, 1, 2, 0, 4, 5]
    toe = [0.0, -0.05, 0.12]
    offsets = np.array([[0, 1.0, 0], [0.1, 0, 0], [0, -0.92, 0], toe, [-0.1, 0, 0], [0, -0.92, 0], toe])
    t = np.arange(frames, dtype=np.float64)
    pos = np.broadcast_to(offsets, (frames, 7, 3)).copy()
    pos[:, 0, 2] = stride * t / period
    for hip, ankle, down in ((1, 2, left_down), (4, 5, left_down + period / 2)):
        cycles = (t - down) / period
        k = np.floor(cycles)
        u = np.clip(((cycles - k) - stance) / (1.0 - stance), 0.0, 1.0)  # swing progress
        world = np.stack([np.full(frames, offsets[hip, 0]), 0.08 + 0.1 * np.sin(np.pi * u),
                          stride * (k + u)], axis=-1)
        pos[:, ankle] = world - (pos[:, 0] + pos[:, hip])
    rot = np.zeros((frames, 7, 4))
    rot[..., 0] = 1.0
    return Clip(names, parents, offsets, rot, pos, fps, end_parents=[3, 6],
                end_offsets=np.array([[0, 0, 0.05]] * 2), loop=loop, meters_per_unit=1.0, motion_start=0)


def circular_frames(a: np.ndarray, b: float, n: int) -> np.ndarray:
    return np.abs((a - b + n / 2) % n - n / 2)


def test_the_walker_steps_where_it_was_built_to():
    clip = walker(frames=480, left_down=30.0)
    steps = footsteps(clip, lifts=True)
    # Left lands at 30, 150, ...; right at 90, 210, ...; each lifts 72 frames (0.6 s) after landing.
    np.testing.assert_allclose(steps["FootDown_L"] * 120, [30, 150, 270, 390], atol=2.5)
    np.testing.assert_allclose(steps["FootDown_R"] * 120, [90, 210, 330, 450], atol=2.5)
    np.testing.assert_allclose(steps["FootUp_L"] * 120, [102, 222, 342, 462], atol=2.5)
    np.testing.assert_allclose(steps["FootUp_R"] * 120, [42, 162, 282, 402], atol=2.5)


def test_a_loop_reads_like_the_middle_of_a_longer_take():
    # The frame after a loop's last is its frame 0 moved on by one cycle's travel.
    looped = footsteps(walker(loop=True, left_down=17.0), lifts=True)
    plain = footsteps(walker(frames=360, left_down=17.0), lifts=True)
    for key, times in looped.items():
        middle = plain[key][(plain[key] >= 1.0) & (plain[key] < 2.0)] - 1.0
        np.testing.assert_allclose(np.sort(times), np.sort(middle), rtol=0, atol=1e-9)


def test_a_loop_counts_a_touchdown_on_frame_0_a_plain_clip_does_not():
    looped = walker(loop=True)
    plain = walker(loop=False)
    n = looped.n_frames
    down = footsteps(looped)["FootDown_L"] * looped.fps
    assert down.size == 1 and circular_frames(down, 0.0, n)[0] <= 2.5
    assert not find_contacts(looped)["L"][-1]
    # Without the loop, frame 0 is the first analysed frame and the foot is already down.
    assert footsteps(plain)["FootDown_L"].size == 0 and find_contacts(plain)["L"][0]
    # The right foot's contact wraps: planted at both ends, one touchdown at mid-cycle.
    right = find_contacts(looped)["R"]
    assert right[0] and right[-1]
    np.testing.assert_allclose(footsteps(looped)["FootDown_R"] * looped.fps, [n / 2], atol=2.5)


# -- phase ------------------------------------------------------------------------------------------


def timeline(seconds: float = 3.0, fps: float = 100.0) -> Clip:
    """A one-joint clip whose only use is its frame times."""
    frames = round(seconds * fps) + 1
    rot = np.zeros((frames, 1, 4))
    rot[..., 0] = 1.0
    return Clip(["Root"], [-1], np.zeros((1, 3)), rot, fps=fps)


def test_phase_is_exact_at_steps_and_linear_between():
    clip = timeline()
    steps = {"FootDown_L": np.array([0.5, 1.7]), "FootDown_R": np.array([1.0, 2.5])}
    ph = phase(clip, steps)
    at = {0.5: 0.0, 1.0: np.pi, 1.7: 2 * np.pi, 2.5: 3 * np.pi}
    for t, want in at.items():
        assert ph[round(t * 100)] == pytest.approx(want, abs=1e-12)
    # Linear between: 1.0 -> 1.7 s covers pi in 0.7 s.
    np.testing.assert_allclose(ph[100:171], np.pi + np.pi * (clip.times[100:171] - 1.0) / 0.7, atol=1e-12)


def test_phase_extrapolates_with_the_nearest_segments_slope():
    clip = timeline()
    ph = phase(clip, {"FootDown_L": np.array([0.5, 1.7]), "FootDown_R": np.array([1.0, 2.5])})
    np.testing.assert_allclose(ph[:51], np.pi * (clip.times[:51] - 0.5) / 0.5, atol=1e-12)
    np.testing.assert_allclose(ph[250:], 3 * np.pi + np.pi * (clip.times[250:] - 2.5) / 0.8, atol=1e-12)
    assert ph[0] == pytest.approx(-np.pi)


def test_phase_with_the_right_foot_as_reference_is_half_a_cycle_on():
    clip = timeline()
    steps = {"FootDown_L": np.array([0.5, 1.7]), "FootDown_R": np.array([1.0, 2.5])}
    np.testing.assert_allclose(phase(clip, steps, ref_foot="R"), phase(clip, steps) + np.pi, atol=1e-12)
    # A walk that starts on the other foot starts at pi.
    assert phase(clip, {"FootDown_L": [1.0], "FootDown_R": [0.5]})[50] == pytest.approx(np.pi)


def test_phase_refuses_steps_that_do_not_alternate():
    clip = timeline()
    with pytest.raises(ValueError, match=r"L steps again at 1\.2000 s"):
        phase(clip, {"FootDown_L": [0.5, 1.2], "FootDown_R": [1.5]})
    with pytest.raises(ValueError, match="at least two steps"):
        phase(clip, {"FootDown_L": [0.5], "FootDown_R": []})
    with pytest.raises(ValueError, match="FootDown_R"):
        phase(clip, {"FootDown_L": [0.5, 1.0]}, ref_foot="R")


# -- parameters ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [
    {"window": 4}, {"window": 0}, {"window": 2.0}, {"window": True},
    {"speed_mps": 0.0}, {"speed_mps": -1.0}, {"speed_mps": math.nan}, {"exit_mps": 0.1},
    {"min_duration": -0.1}, {"height_m": 0.0}, {"floor_seconds": 0.0},
    {"floor": "global"}, {"floor": math.inf}, {"floor": True},
    {"frames": (5, 2)}, {"frames": (0, 10_000)}, {"frames": (-1, None)}, {"frames": 7},
    {"feet": {"L": ["NoSuchJoint"]}}, {"feet": {}}, {"feet": {"L": [99]}},
])
def test_bad_parameters_are_refused(bad):
    clip = walker()
    with pytest.raises(ValueError):
        find_contacts(clip, **bad)
    with pytest.raises(ValueError):
        footsteps(clip, **bad)


def test_a_skeleton_without_two_legs_needs_feet_named():
    with pytest.raises(ValueError, match="feet="):
        footsteps(timeline())


def test_contacts_and_footsteps_share_their_defaults():
    a = inspect.signature(find_contacts).parameters
    b = inspect.signature(footsteps).parameters
    shared = set(a) - {"clip"}
    assert shared <= set(b)
    assert {k: a[k].default for k in shared} == {k: b[k].default for k in shared}
    assert a["speed_mps"].default is None and a["min_duration"].default == 0.05  # Auto
    assert a["floor"].default == "local" and a["window"].default is None


@pytest.mark.parametrize("step, window", [(1, 5), (2, 3), (4, 1), (5, 1)])
def test_the_speed_filter_spans_the_same_time_at_any_frame_rate(step, window, cmu_clips):
    # 5 frames at 120 fps is 1/24 s; a fixed 5 frames would span 1/6 s at 30 fps and swallow
    # touchdowns (7 of the 23 labelled ones at 30 fps; 4 with the filter at 1/24 s).
    clip = cmu_clips("02_01")[::step]
    assert clip.fps == 120 / step
    got, want = footsteps(clip), footsteps(clip, window=window)
    assert got.keys() == want.keys()
    assert all(np.array_equal(got[k], want[k]) for k in got)


def test_short_contacts_are_dropped_and_short_gaps_filled():
    # Stances of 0.6 s and swings of 0.4 s: a minimum of 0.5 s fills every swing.
    clip = walker(frames=480, left_down=30.0)
    assert np.flatnonzero(np.diff(find_contacts(clip)["L"].astype(np.int8))).size == 8
    joined = find_contacts(clip, min_duration=0.5)["L"]
    assert joined[35:455].all() and not joined[:25].any()
    # Stances of 0.1 s (12 frames) stay at the default 0.05 s, go at 0.15 s.
    brief = walker(frames=480, left_down=30.0, stance=0.1, stride=3.0)
    assert np.flatnonzero(np.diff(find_contacts(brief)["L"].astype(np.int8))).size == 8
    assert not find_contacts(brief, min_duration=0.15)["L"].any()


@pytest.mark.parametrize("name", ["02_01", "02_03", "09_12", "131_02"])
def test_step_seconds_is_the_time_between_footsteps_at_any_rate_the_take_is_played(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    steps = footsteps(clip)
    touchdowns = np.sort(np.concatenate([steps["FootDown_L"], steps["FootDown_R"]]))
    got = contacts.step_seconds(clip)
    assert got is not None and 0.3 <= got <= 0.8  # a person's steps
    assert got == pytest.approx(float(np.median(np.diff(touchdowns))), rel=0.2)
    # Keyed one file frame per 24 fps frame, the same take steps five times slower.
    slow = clip.replace(fps=24.0)
    assert contacts.step_seconds(slow) == pytest.approx(got * 5.0)


def test_step_seconds_is_none_for_a_take_that_never_steps(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    still = clip.replace(rotations=np.repeat(clip.rotations[100:101], 240, axis=0),
                         positions=np.repeat(clip.positions[100:101], 240, axis=0))
    assert contacts.step_seconds(still) is None
