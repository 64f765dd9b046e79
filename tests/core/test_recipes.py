"""What the add-on's jobs do to clips, without Blender (blender_addon/recipes: no bpy there): the
options as the core takes them, checked against the core called by hand; errors and notes in the
words of the user who asked (the sidebar's labels, or the CLI's flags); and the bridge's numbers
(clip space, F-curve paths, key frames, rates) against hand-worked cases.

The core here is the one the add-on bundles (blender_addon/core, a link to core/), so that the clips
and the recipes' are of one Clip class. The Blender tests bake the same through the operators and the
CLI (test_transition, test_sync, test_footlock, test_options); these hold the recipes alone, in
seconds.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from typing import Any

import numpy as np
import pytest
from fixtures import cmu_path

from blender_addon import wording
from blender_addon.core import blend, bvh, contacts, footlock, root, sync, transition
from blender_addon.core.clip import Clip
from blender_addon.errors import BridgeError, BridgeWarning, JobError
from blender_addon.options import LockFeetOptions, SyncOptions, TransitionOptions
from blender_addon.recipes import actions, events, previews
from blender_addon.recipes import sync as sync_recipe
from blender_addon.recipes import transitions as transition_recipe
from blender_addon.timing import Timing

UI, CLI = wording.UI, wording.CLI
# Locked legs on these takes fall short of some plants (the core warns); what is checked is the motion.
pytestmark = pytest.mark.filterwarnings("ignore:.*could not reach its lock")


@pytest.fixture(scope="module")
def walk() -> Clip:
    return bvh.load(cmu_path("02_01"))


@pytest.fixture(scope="module")
def run() -> Clip:
    return bvh.load(cmu_path("02_03"))


def as_imported(clip: Clip) -> Timing:
    """A BVH take's frames as an import keys them: frame 1 is its first."""
    return Timing(1.0, clip.fps)


def same_motion(got: Clip, want: Clip) -> None:
    assert got.n_frames == want.n_frames
    assert np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-9 * want.height


# -- transitions ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("method", "core_method"), [("DEAD", "dead_blend"), ("INERTIALIZE", "inertialize"),
                                                     ("CROSSFADE", "crossfade")])
def test_a_transition_is_the_cores_method_with_its_options(method, core_method, walk, run):
    options = TransitionOptions(source_time=1.5, target_time=0.4, blend_time=0.3, method=method)
    got = transition_recipe.transition_clip(walk, run, options=options)
    # Lock Feet is on by default; dead blending's half-lives per joint (AUTO).
    same_motion(got, getattr(transition, core_method)(walk, run, 1.5, 0.4, 0.3, lock_feet=True))


def test_a_fixed_halflife_and_a_mask_reach_the_dead_blend(walk, run):
    options = TransitionOptions(source_time=1.5, target_time=0.4, halflife_mode="FIXED", halflife=0.2,
                                mask="LOWER_BODY", lock_feet=False)
    got = transition_recipe.transition_clip(walk, run, options=options)
    lower = blend.mask(walk, preset="LOWER_BODY")
    want = transition.dead_blend(walk, run, 1.5, 0.4, 0.25, halflife=0.2, mask=lower)
    same_motion(got, want)


def test_a_target_end_cuts_the_transition_where_the_target_reaches_it(walk, run):
    options = TransitionOptions(source_time=1.5, target_time=0.4, target_end=1.2)
    got = transition_recipe.transition_clip(walk, run, options=options)
    # The source's frames 0..180 (1.5 s at 120 fps), then the target's from 0.4 s (frame 48) to 1.2 s (144).
    span = 180 + 1 + (144 - 48)
    whole = transition.dead_blend(walk, run, 1.5, 0.4, 0.25, lock_feet=True)
    assert whole.n_frames > span
    same_motion(got, whole[:span])


@pytest.mark.parametrize(("face", "says"), [
    (UI, "Source Time 99 s is outside '02_01', which lasts 2.86 s: pick a time inside it (the clock button "
         "uses the current frame)"),
    (CLI, "--at 99 s is outside '02_01', which lasts 2.86 s: pick a time inside it")])
def test_a_time_outside_the_take_is_named_as_its_user_calls_it(face, says, walk, run):
    with pytest.raises(JobError) as refused:
        transition_recipe.transition_clip(walk, run, options=TransitionOptions(source_time=99.0), face=face)
    assert str(refused.value) == says


@pytest.mark.parametrize(("face", "end", "target"), [(UI, "Target End", "Target Time"),
                                                     (CLI, "--dst-end", "--dst-at")])
def test_a_target_end_before_the_target_time_is_refused(face, end, target, walk, run):
    options = TransitionOptions(source_time=1.5, target_time=0.4, target_end=0.3)
    says = rf"^{end} 0.3 s must come after {target} \(0.4 s\) and inside '02_03'"
    with pytest.raises(JobError, match=says):
        transition_recipe.transition_clip(walk, run, options=options, face=face)
    with pytest.raises(JobError, match=rf"^{end} 9 s must come after"):
        transition_recipe.transition_clip(walk, run, options=dataclasses.replace(options, target_end=9.0),
                                          face=face)


@pytest.mark.parametrize(("face", "mask", "method"), [(UI, "Mask", "Method"), (CLI, "--mask", "--method")])
def test_a_mask_or_method_that_is_none_is_named_with_what_there_is(face, mask, method, walk, run):
    with pytest.raises(JobError) as refused:
        transition_recipe.transition_clip(walk, run, options=TransitionOptions(mask="Nope"), face=face)
    assert str(refused.value) == (f"{mask}: no joint named 'Nope'; use a preset (LOWER_BODY, UPPER_BODY, "
                                  "FINGERS) or joint names separated by commas")
    with pytest.raises(JobError) as refused:
        transition_recipe.core_method("nope", face)
    assert str(refused.value) == f"{method} must be one of DEAD, INERTIALIZE, CROSSFADE, not 'nope'"
    assert [transition_recipe.core_method(m) for m in ("dead", "INERTIALIZE", "Crossfade")] == \
        ["dead", "quintic", "crossfade"]


def test_a_joint_mask_is_a_preset_or_joints_with_their_descendants(walk):
    assert transition_recipe.joint_mask(walk, " ") is None
    np.testing.assert_array_equal(transition_recipe.joint_mask(walk, "lower_body"),
                                  blend.mask(walk, preset="LOWER_BODY"))
    np.testing.assert_array_equal(transition_recipe.joint_mask(walk, "LeftUpLeg, Head"),
                                  blend.mask(walk, include=["LeftUpLeg", "Head"]))


def longer_thigh(clip: Clip) -> Clip:
    """The take on a skeleton whose left thigh is 10 % longer: another skeleton of the same joints."""
    offsets = clip.offsets.copy()
    offsets[clip.names.index("LeftLeg")] *= 1.1
    return clip.replace(offsets=offsets, name="long")


@pytest.mark.parametrize(("face", "allow"), [(UI, "Allow Mismatch"), (CLI, "--allow-mismatch")])
def test_another_skeleton_is_refused_naming_the_bone_unless_allowed(face, allow, walk):
    other = longer_thigh(walk)
    with pytest.raises(JobError) as refused:
        transition_recipe.check_lengths(walk, other, False, face)
    said = str(refused.value)
    assert said.startswith("bone 'LeftLeg' is ") and said.endswith(f"or combine them anyway ({allow})"), said
    with pytest.warns(BridgeWarning, match=rf"combined anyway \({allow}\)"):
        transition_recipe.check_lengths(walk, other, True, face)
    transition_recipe.check_lengths(walk, walk, False, face)  # one skeleton: nothing said


def test_the_best_target_time_is_the_cores_and_into_itself_keeps_apart(walk, run):
    assert transition_recipe.best_target_time(walk, run, 1.5) == transition.best_target_time(walk, 1.5, run)
    itself = transition_recipe.best_target_time(walk, walk, 1.0, itself=True)
    assert 1.0 + transition_recipe.ITSELF_APART <= itself <= walk.duration
    with pytest.raises(JobError, match=r"^--at 9 s is outside '02_01'"):
        transition_recipe.best_target_time(walk, run, 9.0, face=CLI)
    short = walk[:120]  # 1 s: no time of it is 0.5 s from 0.5 s with two frames to spare
    with pytest.raises(JobError, match=r"too short to go into another time of itself, 0.5 s or more from "
                                       r"Source Time \(0.5 s\)"):
        transition_recipe.best_target_time(short, short, 0.5, itself=True)


# -- synchronized blends --------------------------------------------------------------------------

def sync_of(a: Clip, b: Clip, face: wording.Face = UI, **options: Any) -> tuple[Clip, float | None]:
    return sync_recipe.sync_clip(a, b, options=SyncOptions(**options), timing_a=as_imported(a),
                                 timing_b=as_imported(b), face=face)


def test_a_constant_weight_blends_the_takes_cycles_in_phase(walk, run):
    got, used = sync_of(walk, run, weight=0.5, duration=2.0)
    assert used == 0.5
    same_motion(got, sync.sync_blend(sync.loop_cycle(walk), sync.loop_cycle(run), 0.5, 2.0, lock_feet=True))


def test_a_speed_weight_is_the_one_that_travels_at_speed(walk, run):
    got, used = sync_of(walk, run, weight_mode="SPEED", speed_mps=2.0, duration=1.5)
    a, b = sync.loop_cycle(walk), sync.loop_cycle(run)
    assert used == sync.weight_for_speed(a, b, 2.0)
    same_motion(got, sync.sync_blend(a, b, used, 1.5, lock_feet=True))
    with pytest.raises(JobError, match="reachable"):
        sync_of(walk, run, weight_mode="SPEED", speed_mps=20.0)


def test_a_weight_curve_ramps_as_the_core_blends_it(walk, run):
    ramp = (np.array([0.0, 3.0]), np.array([0.0, 1.0]))
    got, used = sync_recipe.sync_clip(walk, run, options=SyncOptions(weight_mode="CURVE", duration=3.0),
                                      timing_a=as_imported(walk), timing_b=as_imported(run), curve=ramp)
    assert used is None
    same_motion(got, sync.sync_blend(sync.loop_cycle(walk), sync.loop_cycle(run), ramp, 3.0, lock_feet=True))


def test_whole_cycles_close_one_loop_on_whole_frames(walk, run):
    got, _ = sync_of(walk, run, weight=0.3, duration=1, duration_unit="CYCLES")
    length = sync.cycle_length(sync.loop_cycle(walk, straighten=True), sync.loop_cycle(run, straighten=True),
                               0.3)
    # One cycle of 119.6 frames at 120 fps: played on 120 whole frames (a little slower), the last
    # pose the first's.
    frames = round(length * walk.fps)
    assert frames != length * walk.fps
    assert got.n_frames == frames + 1
    assert got.fps == pytest.approx(frames / length)
    assert abs(got.duration - length) <= 1e-9
    q0, q1 = got.rotations[0], got.rotations[-1]
    assert np.abs(np.abs(np.einsum("ji,ji->j", q0, q1)) - 1.0).max() < 1e-6
    assert sync_recipe.loops(SyncOptions(duration=2, duration_unit="CYCLES"))
    assert not sync_recipe.loops(SyncOptions(duration=2.5, duration_unit="CYCLES"))
    assert not sync_recipe.loops(SyncOptions(duration=2, duration_unit="CYCLES", cyclic=False))


def test_in_place_strips_the_roots_travel(walk, run):
    got, _ = sync_of(walk, run, weight=0.5, duration=1.0, in_place=True)
    want, _ = sync_of(walk, run, weight=0.5, duration=1.0)
    same_motion(got, root.in_place(want))


@pytest.mark.parametrize(("face", "frames", "mode", "hint"), [
    (UI, "A Frames", "Cycle Length",
     "Run Detect Footsteps on it, or give its cycle's frames (A Frames, B Frames)"),
    (CLI, "--frames-a", "--mode", "Give its cycle's frames (--frames-a, --frames-b)")])
def test_sync_errors_name_the_option_as_its_user_calls_it(face, frames, mode, hint, walk, run):
    with pytest.raises(JobError, match=rf"^{frames} 5-2 are not a cycle inside '02_01' \(frames 1-344\)$"):
        sync_of(walk, run, face, weight=0.5, duration=1.0, frames_a=(5, 2))
    with pytest.raises(JobError, match=rf"^{mode} must be one of LINEAR, HARMONIC, LEADER, not 'SIDEWAYS'$"):
        sync_of(walk, run, face, mode="SIDEWAYS")
    with pytest.raises(JobError, match="a duration in cycles needs one weight"):
        sync_of(walk, run, face, weight_mode="CURVE", duration_unit="CYCLES")
    still = walk[:1].replace(rotations=np.repeat(walk.rotations[:1], 200, axis=0),
                             positions=np.repeat(walk.positions[:1], 200, axis=0), name="still")
    with pytest.raises(JobError) as refused:
        sync_recipe.cycle_of(still, as_imported(still), (0, 0), face=face)
    assert str(refused.value).startswith("'still': ") and str(refused.value).endswith(f". {hint}")


def test_given_frames_cut_the_cycle_there(walk):
    got = sync_recipe.cycle_of(walk, as_imported(walk), (11, 121))
    same_motion(got, sync.loop_cycle(walk, (10, 120)))


def test_a_cycles_duration_plays_on_whole_frames(walk, run):
    # 2.5 cycles of 0.9375 s at 24 fps: 56.25 frames, played on 56.
    options = SyncOptions(duration=2.5, duration_unit="CYCLES")
    assert sync_recipe.played_cycles(0.9375, options, 24.0) == pytest.approx(56 / 24 / 2.5)
    assert sync_recipe.played_cycles(0.9375, SyncOptions(duration=2.5), 24.0) == 0.9375
    assert sync_recipe.bake_frames(SyncOptions(duration=4.0), 1.0, 24.0) == (1.0, 97.0)
    assert sync_recipe.bake_frames(options, 1.0, 24.0) == (1.0, 25.0)  # cycles: one second to edit


# -- footsteps and locked feet --------------------------------------------------------------------

def test_footsteps_are_the_contacts_footsteps_and_none_found_says_what_to_try(walk):
    steps, _ = events.find_footsteps(walk, "02_01", None)
    want = contacts.footsteps(walk)
    assert steps.keys() == want.keys()
    for track in want:
        np.testing.assert_array_equal(steps[track], want[track])
    still = walk[:1].replace(rotations=np.repeat(walk.rotations[:1], 100, axis=0),
                             positions=np.repeat(walk.positions[:1], 100, axis=0))
    with pytest.raises(JobError, match=r"^no footsteps found in 'still': the feet never lift: a static "
                                       r"pose, or a Foot Speed too high \(try "):
        events.find_footsteps(still, "still", None)
    with pytest.raises(JobError, match=r"^no footsteps found in 'still': the rate is off$"):
        events.find_footsteps(still, "still", None, "the rate is off")
    assert events.foot_speed(0.0) is None and events.foot_speed(None) is None
    assert events.foot_speed(0.2) == 0.2


def sliding(clip: Clip) -> Clip:
    """The take with its root travel over the floor 15 % faster: the feet slide."""
    traj, res = root.decompose(clip)
    start = traj.position[:1]
    return root.recompose(clip, root.Trajectory(start + (traj.position - start) * 1.15, traj.heading), res)


def test_locked_feet_are_the_cores_lock_on_the_detected_or_given_contacts(walk):
    take = sliding(walk[1:])
    options = LockFeetOptions(blend_time=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the notes are what is checked
        got, notes = events.lock_feet_clip(take, options=options)
        want = footlock.lock_feet(take, contacts=contacts.contacts(take, split_slides=False), blend_time=0.2)
    assert notes[0] == "contacts detected"
    same_motion(got, want)
    planted = contacts.contacts(walk[1:])
    got, notes = events.lock_feet_clip(take, options=options, masks=planted)
    assert notes[0] == "contacts from the action's stride_contact curves"
    same_motion(got, footlock.lock_feet(take, contacts=planted, blend_time=0.2))


@pytest.mark.parametrize(("face", "says"), [(UI, ". Lower Pelvis lowers the pelvis instead"),
                                            (CLI, ". --lower-pelvis lowers the pelvis instead")])
def test_a_locks_doubt_names_lower_pelvis_as_its_user_calls_it(face, says, walk, monkeypatch):
    def doubtful(clip, **kwargs):
        warnings.warn("walk: a foot could not reach its lock" + events.LOWER_PELVIS_HINT,
                      footlock.FootLockWarning, stacklevel=2)
        return clip

    monkeypatch.setattr(footlock, "lock_feet", doubtful)
    planted = contacts.contacts(walk)
    _, notes = events.lock_feet_clip(walk, options=LockFeetOptions(), masks=planted, face=face)
    assert notes[1:] == ["walk: a foot could not reach its lock" + says]


# -- previews -------------------------------------------------------------------------------------

def test_the_footstep_preview_counts_the_steps_and_their_cadence(walk):
    got = previews.footstep_preview(walk, "02_01", None)
    steps = contacts.footsteps(walk)
    times = np.sort(np.concatenate(list(steps.values())))
    assert got.steps == {k: len(v) for k, v in steps.items()} and got.problem == ""
    assert got.cadence == pytest.approx(60.0 * (len(times) - 1) / (times[-1] - times[0]))
    with pytest.raises(JobError, match="has fewer than two frames"):
        previews.footstep_preview(walk[:1], "02_01", None)


def test_the_sync_preview_is_the_blend_it_previews(walk, run):
    options = SyncOptions(weight=0.25, duration=1.0, duration_unit="CYCLES")
    a, pa = previews.cycle_preview(walk, as_imported(walk), "02_01", (0, 0), True, "frames_a")
    b, pb = previews.cycle_preview(run, as_imported(run), "02_03", (0, 0), True, "frames_b")
    assert pa.seconds == a.n_frames / a.fps
    assert pa.steps == {k: len(v) for k, v in contacts.footsteps(walk).items()}
    got = previews.blend_preview(a, b, pa, pb, options, 120.0)
    # One cycle at weight 0.25, played on whole frames at 120 fps, at the blend's speed over it.
    seconds = sync.cycle_length(a, b, 0.25)
    played = round(seconds * 120) / 120
    assert (got.weight, got.problem) == (0.25, "")
    assert got.cycle_seconds == pytest.approx(played)
    assert got.speed_mps == pytest.approx(sync.blend_speed(a, b, 0.25) * seconds / played)
    ends = sorted(sync.travel_speed(a, b, w) for w in (0.0, 1.0))
    assert got.speed_range == pytest.approx(tuple(ends))
    curve = previews.blend_preview(a, b, pa, pb, dataclasses.replace(options, weight_mode="CURVE"), 120.0)
    assert math.isnan(curve.weight) and curve.problem == sync_recipe.CYCLES_NEED_ONE_WEIGHT


def test_a_transitions_spans_put_target_time_at_the_switch(walk, run):
    options = TransitionOptions(source_time=1.5, target_time=0.4)
    out = transition_recipe.transition_clip(walk, run, options=options)
    # The result keyed at 24 fps from frame 1; the target action at 48 fps from frame 11.
    got = transition_recipe.spans(out, Timing(1.0, 24.0), Timing(11.0, 48.0), options)
    # The switch at 1.5 s (frame 1 + 36), the target from the next key (120 fps clip frames, 0.2
    # scene frames apart); its frame at 0.4 s (11 + 0.4 * 48 = 30.2) plays at the switch, half speed.
    assert got.switch == 37.0 and got.start == pytest.approx(37.2)
    assert got.scale == 0.5 and got.offset + got.scale * 30.2 == pytest.approx(got.switch)
    assert got.end == pytest.approx(1.0 + (out.n_frames - 1) / 120 * 24)


# -- the bridge's numbers -------------------------------------------------------------------------

def test_names_in_fcurve_paths_are_read_back_unescaped():
    # Blender escapes a quote and a backslash in a name with a backslash (bpy.utils.escape_identifier).
    assert actions.quoted_name(r'pose.bones["Left \"Arm\""].location', "pose.bones") == ('Left "Arm"',
                                                                                         ".location")
    assert actions.quoted_name(r'["stride_event_Foot\\Down"]') == ("stride_event_Foot\\Down", "")
    assert actions.quoted_name('pose.bones["Hips"].location') is None  # not a custom property's
    assert actions.quoted_name('["open', "") is None


def test_keys_on_shared_frames_are_read_as_they_are_and_others_on_a_grid():
    a = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0]])
    frames, aligned = actions.key_frames([a, a.copy()])
    assert aligned and frames.tolist() == [1.0, 2.0, 3.0]
    a = np.array([[f, 0.0] for f in (1.0, 2.0, 3.0, 4.0, 5.0)])
    b = np.array([[1.0, 0.0], [3.0, 1.0], [5.0, 2.0]])
    frames, aligned = actions.key_frames([a, b])
    assert not aligned and frames.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]  # the median spacing: 1 frame
    # Keys 0.2 frames apart at 24 fps (Blender's importer with Scale FPS) are a 120 fps clip.
    assert actions.fps_from_keys(1.0 + 0.2 * np.arange(50), 24.0) == 120.0
    assert actions.fps_from_keys(np.array([1.0]), 24.0) == 24.0


def fbx_world() -> np.ndarray:
    """An FBX import's armature object: turned 90 degrees about X, at scale 0.01, moved."""
    world = np.eye(4)
    world[:3, :3] = 0.01 * np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    world[:3, 3] = [1.0, 2.0, 3.0]
    return world


def test_an_armatures_clip_space_takes_its_world_transform():
    from blender_addon.core import armature

    settings = {"axis_forward": "-Z", "axis_up": "Y", "global_scale": 0.5}
    world = fbx_world()
    got = actions.clip_space(world, settings, "rig")
    c = armature.axis_conversion("-Z", "Y")
    rng = np.random.default_rng(3)
    for a in rng.normal(size=(5, 3)):  # a point of the armature: in the clip, the world's point in BVH axes
        there = c.T @ (world[:3, :3] @ a + world[:3, 3]) / 0.5
        assert np.allclose(got.conversion.T @ a / got.scale + got.shift, there, atol=1e-12)
    assert got.scale == pytest.approx(50.0)


@pytest.mark.parametrize(("diagonal", "says"), [
    ((1.0, 2.0, 1.0), "is scaled unevenly in the scene (1, 2, 1)"),
    ((-1.0, 1.0, 1.0), "is mirrored in the scene"),
    ((0.0, 0.0, 0.0), "has a zero scale")])
def test_a_transform_no_bvh_holds_is_refused_saying_what_to_apply(diagonal, says):
    settings = {"axis_forward": "-Z", "axis_up": "Y", "global_scale": 1.0}
    with pytest.raises(BridgeError, match=f"armature 'rig' {re.escape(says)}"):
        actions.clip_space(np.diag([*diagonal, 1.0]), settings, "rig")


def test_rest_heads_are_relative_to_their_parents_in_bvh_axes():
    heads = np.array([[0.0, 0.0, 1.0], [0.1, 0.0, 1.0], [0.1, 0.0, 0.5]])
    turn = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    got = actions.relative_heads(heads, [-1, 0, 1], turn)
    np.testing.assert_allclose(got, np.array([[0.0, 0.0, 1.0], [0.1, 0.0, 0.0], [0.0, 0.0, -0.5]]) @ turn)


def test_a_clips_layout_names_its_joints_channels_end_sites_and_rate(walk):
    got = actions.clip_layout(walk, 24.0)
    assert got["names"] == list(walk.names) and got["action_fps"] == 24.0
    assert got["channels"][0] == list(walk.channels[0])
    assert [e[0] for e in got["end_sites"]] == [walk.names[p] for p in walk.end_parents]


def test_a_take_at_another_rate_than_the_scenes_says_which_to_set(walk):
    assert actions.rate_note("02_01", 120.0, 120.0, walk) == ""
    assert actions.rate_note("02_01", 24.0, 120.0, walk) == (
        "action '02_01' is keyed at 120 fps and the scene plays at 24 fps: it plays 5x slower than it was "
        "recorded (Stride reads it at its own 120 fps); set the scene's Frame Rate (Output Properties) to "
        "120 fps")
    assert actions.rate_note("02_01", 120.0, None, walk) == ""  # steps as people step
    # Blender's importer keyed one 120 fps frame per 24 fps scene frame: steps every 2-3 s.
    slow = walk.replace(fps=24.0)
    said = actions.rate_note("02_01", 24.0, None, slow)
    assert "slower than people walk: it moves as if recorded at 120 fps" in said
    assert said.endswith("Set the scene's Frame Rate (Output Properties) to 120 fps and try again, or import "
                         "with Update Scene FPS")
