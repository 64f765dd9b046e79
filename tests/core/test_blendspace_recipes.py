"""Bake Blend Space and `stride blend-space` without Blender (blender_addon/recipes/blendspace.py): the
gaits checked to be of one skeleton, each one's speed and cycle as the Gaits panel lists them, the
target speed (constant, ramp, keys) checked against the range the gaits reach, in the words of the
user who asked (the sidebar's labels, the CLI's flags), and the bake equal to the core's blend space.

The core is the one the add-on bundles (blender_addon/core), so that clips are of one Clip class;
the Blender tests bake the same through the operators and the CLI (tests/blender/test_blendspace.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import warnings

import numpy as np
import pytest
from fixtures import take_path

from blender_addon import arguments, wording
from blender_addon.core import blendspace, bvh, contacts, skeleton
from blender_addon.core.clip import Clip
from blender_addon.errors import BridgeWarning, JobError
from blender_addon.options import BlendSpaceOptions
from blender_addon.recipes import blendspace as recipe
from blender_addon.recipes import previews
from blender_addon.timing import Timing

UI, CLI = wording.UI, wording.CLI
BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]
CMU = ["02_01", "02_03"]
pytestmark = pytest.mark.filterwarnings("ignore:.*could not reach its lock")


def load(names: list[str]) -> list[Clip]:
    return [bvh.load(take_path(n)) for n in names]


@pytest.fixture(scope="module")
def bandai() -> list[Clip]:
    return load(BANDAI)


@pytest.fixture(scope="module")
def cmu() -> list[Clip]:
    return load(CMU)


@pytest.fixture(scope="module")
def bandai_loops(bandai) -> list[Clip]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return recipe.gait_loops(bandai)


def test_gaits_of_one_subject_pass_though_their_travel_sits_on_different_joints(bandai):
    # Bandai's walk carries its travel on the hips, its run and dash on a root above them: the
    # offsets those channels replace differ (3 cm at the hips), which a plain length check refuses.
    walk, run, _ = bandai
    moved = [j for j in range(walk.n_joints) if abs(np.linalg.norm(walk.offsets[j]) -
                                                    np.linalg.norm(run.offsets[j])) > 1e-3]
    assert [walk.names[j] for j in moved] == ["Hips"]
    with pytest.raises(JobError, match="bone 'Hips'"):
        recipe.check_lengths(walk, run, False)
    recipe.check_gaits(bandai)  # nothing said


@pytest.mark.parametrize(("face", "allow"), [(UI, "Allow Mismatch"), (CLI, "--allow-mismatch")])
def test_a_gait_of_another_subject_is_refused_naming_the_gait_and_bone_unless_allowed(face, allow, cmu):
    other = bvh.load(take_path("09_01"))  # CMU subject 09: the same joints, other bone lengths
    with pytest.raises(JobError) as refused:
        recipe.check_gaits([*cmu, other], face=face)
    said = str(refused.value)
    assert said.startswith("gait '09_01': bone '"), said
    assert said.endswith(f"or combine them anyway ({allow})"), said
    k = skeleton.length_mismatch(skeleton.bone_lengths(cmu[0].parents, cmu[0].offsets),
                                 skeleton.bone_lengths(other.parents, other.offsets))
    assert f"bone {cmu[0].names[k]!r}" in said
    with pytest.warns(BridgeWarning, match=rf"combined anyway \({allow}\)"):
        recipe.check_gaits([*cmu, other], allow=True, face=face)


def test_a_gait_with_other_joints_is_another_skeleton(cmu, bandai):
    with pytest.raises(JobError, match=r"^gait 'dataset-1_walk_normal_001' is another skeleton than '02_01' "
                                       r"\(skeletons differ at joint 0.*\): remove it from the gaits$"):
        recipe.check_gaits([cmu[0], bandai[0]])
    with pytest.raises(JobError, match=r": leave that take out$"):
        recipe.check_gaits([cmu[0], bandai[0]], face=CLI)


def test_fewer_than_two_gaits_say_where_gaits_come_from():
    with pytest.raises(JobError, match=r"^'Bob' has no gaits to blend: add the actions of a walk, a run, "
                                       r"\.\.\. in the Gaits panel \(Add Gait, or Gaits from Selected"):
        recipe.check_count([], "Bob")
    with pytest.raises(JobError, match=r"^'Bob' has one gait \('walk'\): a blend space blends two or more"):
        recipe.check_count(["walk"], "Bob")
    with pytest.raises(JobError, match=r"^one gait \('walk'\): a blend space blends two or more; give two or "
                                       r"more GAIT\.bvh takes of one skeleton$"):
        recipe.check_count(["walk"], face=CLI)
    recipe.check_count(["walk", "run"])


def test_the_gait_rows_are_the_gaits_speeds_and_cycles(bandai, bandai_loops):
    rows = recipe.gait_rows(bandai_loops)
    assert [r.name for r in rows] == BANDAI  # named as the takes, not their cut loops
    np.testing.assert_allclose([r.speed for r in rows], blendspace.gait_speeds(bandai), rtol=1e-12)
    # The cycle: a touchdown to the next of that foot, as the takes' own footsteps space them (a loop
    # is cut within 3 % of that, where its ends' poses match best; Bandai's run and dash are loops).
    for take, row in zip(bandai, rows, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = contacts.footsteps(take)
        gaps = np.concatenate([np.diff(found[k]) for k in ("FootDown_L", "FootDown_R")])
        if len(gaps):
            median = float(np.median(gaps))
            assert abs(row.cycle - median) <= max(0.035 * median, 1.5 / take.fps), (take.name, row.cycle)
        else:  # a take of one cycle: all of it (a last frame that repeats the first is its seam)
            assert take.n_frames - 1 <= row.cycle * take.fps <= take.n_frames
    assert recipe.gait_order([2.0, math.nan, 1.0, 3.0]) == [2, 0, 3, 1]


def test_the_preview_lists_each_gait_and_the_reach(bandai_loops):
    shown = previews.gaits_preview([bandai_loops[2], None, bandai_loops[0]], ["", "no action", ""])
    assert shown.rows[1] is None and shown.problems[1] == "no action" and shown.problem == ""
    speeds = blendspace.gait_speeds([bandai_loops[2], bandai_loops[0]])
    shown_speeds = [r.speed for r in (shown.rows[0], shown.rows[2]) if r is not None]
    assert shown_speeds == pytest.approx(speeds, rel=1e-12)
    assert shown.reach == pytest.approx((0.7 * speeds.min(), 1.3 * speeds.max()))
    lonely = previews.gaits_preview([bandai_loops[0]], [""])
    assert all(math.isnan(v) for v in lonely.reach)


def options(**kw) -> BlendSpaceOptions:
    return BlendSpaceOptions(**kw)


def test_the_target_is_a_constant_a_ramp_or_keys():
    t, v = recipe.target_keys(options(speed=1.75, duration=3.0))
    np.testing.assert_array_equal(t, [0.0, 3.0])
    np.testing.assert_array_equal(v, [1.75, 1.75])
    t, v = recipe.target_keys(options(speed_mode="RAMP", ramp_from=1.0, ramp_to=2.5, duration=8.0))
    np.testing.assert_array_equal(v, [1.0, 2.5])
    keys = (np.array([0.0, 2.0, 5.0]), np.array([1.0, 3.0, 2.0]))
    t, v = recipe.target_keys(options(speed_mode="CURVE"), keys)
    np.testing.assert_array_equal(t, keys[0])
    with pytest.raises(JobError, match="Speed From must be one of CONSTANT, RAMP, CURVE, not 'FAST'"):
        recipe.target_keys(options(speed_mode="FAST"))
    with pytest.raises(JobError, match=r"^--duration must be above 0 s, not -1$"):
        recipe.target_keys(options(duration=-1.0), face=CLI)
    with pytest.raises(JobError, match="increasing times"):
        recipe.target_keys(options(speed_mode="CURVE"), (np.array([0.0, 0.0]), np.array([1.0, 2.0])))


def test_a_speed_outside_the_range_names_it_the_range_and_the_gaits(bandai_loops):
    rows = recipe.gait_rows(bandai_loops)
    lo, hi = 0.7 * rows[0].speed, 1.3 * rows[2].speed
    assert recipe.reach([r.speed for r in rows]) == pytest.approx((lo, hi))
    listed = ("'dataset-1_walk_normal_001' 1.26, 'dataset-1_run_normal_001' 2.62, "
              "'dataset-1_dash_normal_001' 4.31 m/s")
    rng = f"{lo:.2f}-{hi:.2f} m/s"
    # Keys from 2 m/s at 0 s to 8 m/s at 4 s leave the range on the first frame (at 30 fps) past hi.
    k = math.floor((hi - 2.0) / 1.5 * 30.0) + 1
    over = f"{2.0 + 1.5 * k / 30.0:.3g} m/s"
    cases = [
        (options(speed=9.0), None, UI, f"Speed 9 m/s is outside the speeds the gaits reach, {rng} "
                                       f"({listed}; 0.7x the slowest to 1.3x the fastest play that gait "
                                       "slower or faster)"),
        (options(speed=0.5), None, CLI, "--speed 0.5 m/s is outside"),
        (options(speed_mode="RAMP", ramp_from=1.0, ramp_to=7.0), None, UI, "Ramp To 7 m/s is outside"),
        (options(speed_mode="RAMP", ramp_from=0.2, ramp_to=2.0), None, UI, "Ramp From 0.2 m/s is outside"),
        # Keys: where the played target first leaves the range, at the bake's frame (UI) or second (CLI).
        (options(speed_mode="CURVE", duration=4.0), (np.array([0.0, 4.0]), np.array([2.0, 8.0])), UI,
         f"the armature's Speed, keyed, reaches {over} at frame {19 + k} is outside"),
        (options(speed_mode="CURVE", duration=4.0), (np.array([0.0, 4.0]), np.array([2.0, 8.0])), CLI,
         f"--speed reaches {over} at {k / 30.0:.2f} s is outside"),
    ]
    for opts, keys, face, says in cases:
        target = recipe.target_keys(opts, keys, face)
        with pytest.raises(JobError) as refused:
            recipe.check_reach(rows, target, opts, 30.0, Timing(19.0, 30.0), face)
        assert str(refused.value).startswith(says), (str(refused.value), says)
        assert f"{rng} (" in str(refused.value)
    # Inside (the ends themselves, as float32 settings round them): held there.
    at_ends = options(speed_mode="RAMP", ramp_from=float(np.float32(lo)), ramp_to=float(np.float32(hi)))
    _, v = recipe.check_reach(rows, recipe.target_keys(at_ends), at_ends, 30.0)
    assert v[0] >= lo and v[1] <= hi


def test_the_bake_is_the_cores_blend_space_at_the_rate_asked(bandai, bandai_loops):
    ramp = options(speed_mode="RAMP", ramp_from=1.4, ramp_to=4.0, duration=3.0, lock_feet=False)
    baked = recipe.blend_space_clip(bandai_loops, options=ramp, rate=24.0)
    want = blendspace.blend_space(bandai, (np.array([0.0, 3.0]), np.array([1.4, 4.0])), 3.0, fps=24.0)
    assert baked.clip.n_frames == want.n_frames == 73
    np.testing.assert_allclose(baked.clip.fk()[1], want.fk()[1], atol=1e-9 * want.height)
    assert recipe.result_name(baked.rows, ramp) == "dataset-1_walk_normal_001 blend space (ramp)"
    # No rate asked (the CLI): the fastest loop's.
    plain = recipe.blend_space_clip(bandai_loops, options=options(speed=2.0, duration=1.0, lock_feet=False))
    assert plain.clip.fps == 30.0 and plain.clip.n_frames == 31


def test_the_clis_speed_is_a_number_or_keys():
    parser = arguments.build_parser()
    base = ["blend-space", "walk.bvh", "run.bvh", "--duration", "8", "--out", "x.bvh"]
    assert parser.parse_args([*base, "--speed", "1.5"]).speed == 1.5
    assert parser.parse_args([*base, "--speed", "0:1.2,8:4"]).speed == ((0.0, 1.2), (8.0, 4.0))
    args = parser.parse_args([*base, "--speed", "2", "--no-lock-feet", "--allow-mismatch"])
    got = arguments.options_from(BlendSpaceOptions, args, speed_mode="CONSTANT")
    assert dataclasses.asdict(got) == dataclasses.asdict(options(speed=2.0, duration=8.0, lock_feet=False,
                                                                 allow_mismatch=True))
    for bad in ("fast", "0:1,0:2", "0:1,x", "1:-2", "-1"):
        with pytest.raises(SystemExit):
            parser.parse_args([*base, "--speed", bad])
    with pytest.raises(argparse.ArgumentTypeError, match="increasing times"):
        arguments.SYNTAX["speed_keys"][0]("2:1,1:2")


def test_a_gait_with_no_whole_cycle_is_told_the_gaits_fix_not_sync_blends(bandai):
    """A take shorter than a cycle, as a gait: the fix named is the gaits' (footsteps, the list),
    never Sync Blend's A Frames and B Frames, in either face."""
    short = bandai[0][:12]
    for face, fix in ((wording.UI, "Detect Footsteps"), (wording.CLI, "leave that take out")):
        with pytest.raises(JobError) as caught:
            recipe.gait_loop(short, face)
        said = wording.in_user_words(str(caught.value), face=face)
        assert "no whole cycle" in said or "ends before" in said, said
        assert fix in said and "frames" not in said.split(";")[-1] and "Frames" not in said, said
