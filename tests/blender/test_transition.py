"""Transitions in Blender: bake_transition and bake_nla_track against the core, undo, errors, CLI."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

from typing import Any

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import, walk_and_run
from fixtures import cmu_path
from test_bridge import assert_same_motion

from core import bvh, transition
from core.resample import resample


def keys_of(stride, obj, action):
    out = []
    for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, obj)):
        out.append(stride.compat.read_keys(fc))
    return out


def two_actions(scene):
    """Blender's importer twice: armature '02_01' and the action '02_03' (same skeleton)."""
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    run = blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    return walk, run


@pytest.mark.parametrize("method", ["DEAD", "INERTIALIZE", "CROSSFADE"])
def test_bake_transition_equals_the_core_and_leaves_sources_alone(method, scene, stride):
    walk, _run = two_actions(scene)
    before = [k.copy() for k in keys_of(stride, walk, bpy.data.actions["02_01"])]
    result = bpy.ops.stride.bake_transition(source_time=1.5, target_action="02_03", target_time=0.4,
                                            blend_time=0.3, method=method)
    assert result == {"FINISHED"}
    baked = walk.animation_data.action
    assert baked.name.startswith("02_01 > 02_03")
    src, dst = bvh.load(cmu_path("02_01")), bvh.load(cmu_path("02_03"))
    core_method: Any = {"DEAD": transition.dead_blend, "INERTIALIZE": transition.inertialize,
                        "CROSSFADE": transition.crossfade}[method]
    want = core_method(src, dst, 1.5, 0.4, 0.3, lock_feet=True)  # Lock Feet is on by default
    got = stride.bridge.action_to_clip(walk, baked)
    assert_same_motion(got, want)
    after = keys_of(stride, walk, bpy.data.actions["02_01"])
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    assert [m.frame for m in baked.pose_markers if m.name == "Transition"] == [1 + 180]


def test_a_target_end_bakes_exactly_that_span(scene, stride, tmp_path):
    walk, _run = two_actions(scene)
    assert bpy.ops.stride.bake_transition(source_time=1.5, target_action="02_03", target_time=0.4,
                                          target_end=1.2) == {"FINISHED"}
    baked = walk.animation_data.action
    # The source's frames 0..180, then the target's from 0.4 s (frame 48) to 1.2 s (frame 144).
    span = 180 + 1 + (144 - 48)
    assert {len(k) for k in keys_of(stride, walk, baked)} == {span}
    src, dst = bvh.load(cmu_path("02_01")), bvh.load(cmu_path("02_03"))
    whole = transition.dead_blend(src, dst, 1.5, 0.4, 0.25, lock_feet=True)
    assert whole.n_frames > span  # without an end, the target plays to its end
    got = stride.bridge.action_to_clip(walk, baked)
    assert got.n_frames == span
    assert_same_motion(got, whole[:span])
    with pytest.raises(RuntimeError, match=r"Target End 0.3 s must come after Target Time \(0.4 s\)"):
        bpy.ops.stride.bake_transition(source_time=1.5, target_action="02_03", target_time=0.4,
                                       target_end=0.3)
    out = tmp_path / "t.bvh"
    walk_bvh, run_bvh = str(cmu_path("02_01")), str(cmu_path("02_03"))
    assert stride.cli.main(["transition", walk_bvh, run_bvh, "--at", "1.5", "--dst-at", "0.4",
                            "--dst-end", "1.2", "--out", str(out)]) == 0
    assert bvh.load(out).n_frames == span
    assert stride.cli.main(["transition", walk_bvh, run_bvh, "--at", "1.5", "--dst-at", "0.4",
                            "--dst-end", "9", "--out", str(out)]) == 1


def test_undo_removes_the_baked_transition(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), undo=True, rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = bpy.data.objects[walk.name]
    actions = sorted(a.name for a in bpy.data.actions)
    bpy.ops.ed.undo_push(message="before bake")
    assert bpy.ops.stride.bake_transition("EXEC_DEFAULT", True, source_time=1.0,
                                          target_action="02_03") == {"FINISHED"}
    assert len(bpy.data.actions) == len(actions) + 1
    bpy.ops.ed.undo()
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_bake_transition_refuses_a_different_skeleton_and_creates_nothing(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("131_01"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    actions = sorted(a.name for a in bpy.data.actions)
    with pytest.raises(RuntimeError, match="has no bone 'LeftHip'"):
        bpy.ops.stride.bake_transition(source_time=1.0, target_action="131_01")
    with pytest.raises(RuntimeError, match="choose a target action"):
        bpy.ops.stride.bake_transition(source_time=1.0)
    assert sorted(a.name for a in bpy.data.actions) == actions


def nla_setup(scene, stride):
    """One armature, actions 02_01 and 02_03, and a track of three meeting strips."""
    obj = walk_and_run(scene, stride)
    track = obj.animation_data.nla_tracks.new()
    track.name = "Locomotion"
    a = track.strips.new("walk", 1, bpy.data.actions["02_01"])
    a.action_frame_start, a.action_frame_end = 11, 71  # 60 frames, at frames 1..61
    b = track.strips.new("run", 61, bpy.data.actions["02_03"])
    b.action_frame_start, b.action_frame_end = 21, 81
    b.scale = 1.5  # 90 frames: 61..151
    b.blend_in = 12
    c = track.strips.new("walk again", 151, bpy.data.actions["02_01"])
    c.action_frame_start, c.action_frame_end = 101, 131
    c.repeat = 2.0  # 60 frames: 151..211
    return obj, track, (a, b, c)


def test_nla_track_bakes_to_the_core_sequence(scene, stride):
    obj, _track, (a, b, c) = nla_setup(scene, stride)
    assert (a.frame_end, b.frame_end, c.frame_end) == (61, 151, 211)
    # Continue Path: the core sequence's re-anchoring (off by default since issue 23).
    assert bpy.ops.stride.bake_nla_track(track="Locomotion", reanchor=True) == {"FINISHED"}
    got = stride.bridge.action_to_clip(obj, obj.animation_data.action)
    walk, run = bvh.load(cmu_path("02_01")), bvh.load(cmu_path("02_03"))
    # The same ranges built another way: action frame f is clip frame f - 1.
    first = walk[10:71]
    second = resample(run[20:81], 180.0).replace(fps=120.0)  # scale 1.5: 60 frames over 90
    third = walk[100:130].replace(
        rotations=np.concatenate([walk.rotations[100:130], walk.rotations[100:131]]),
        positions=np.concatenate([walk.positions[100:130], walk.positions[100:131]]))
    for clip in (first, second, third):
        clip.events.clear()
    want = transition.sequence([(first, 0.0, 60 / 120), (second, 0.0, 90 / 120), (third, 0.0, 60 / 120)],
                               [12 / 120, 0.25], "dead", lock_feet=True)
    assert got.n_frames == want.n_frames == 211
    assert_same_motion(got, want)
    keys = keys_of(stride, obj, obj.animation_data.action)
    assert min(k[0, 0] for k in keys) == 1.0


def test_nla_bake_without_an_active_track_uses_the_first_and_names_it(scene, stride):
    obj, _track, _strips = nla_setup(scene, stride)
    obj.animation_data.nla_tracks.active = None
    assert bpy.ops.stride.bake_nla_track() == {"FINISHED"}
    assert obj.animation_data.action.name == "Locomotion baked (dead)"


def test_nla_bake_reports_unsupported_strip_settings_and_creates_nothing(scene, stride):
    _obj, _track, (_a, b, c) = nla_setup(scene, stride)
    b.use_reverse = True
    actions = sorted(x.name for x in bpy.data.actions)
    with pytest.raises(RuntimeError, match="NLA strip 'run' on track 'Locomotion' uses a reversed strip"):
        bpy.ops.stride.bake_nla_track(track="Locomotion")
    b.use_reverse = False
    c.use_animated_influence = True
    with pytest.raises(RuntimeError, match="NLA strip 'walk again' on track 'Locomotion' uses animated "
                                           "influence"):
        bpy.ops.stride.bake_nla_track()
    assert sorted(x.name for x in bpy.data.actions) == actions


def test_cli_transition_and_sequence_write_files_blender_can_import(stride, tmp_path, scene):
    out = tmp_path / "t.bvh"
    assert stride.cli.main(["transition", str(cmu_path("02_01")), str(cmu_path("02_03")), "--at", "1.5",
                            "--dst-at", "0.2", "--blend", "0.3", "--out", str(out)]) == 0
    want = transition.dead_blend(bvh.load(cmu_path("02_01")), bvh.load(cmu_path("02_03")), 1.5, 0.2, 0.3,
                                 lock_feet=True)
    got = bvh.load(out)
    assert got.n_frames == want.n_frames
    assert np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-9 * want.height
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_anim.bvh(filepath=str(out)) == {"FINISHED"}
    seq = tmp_path / "s.blend"
    assert stride.cli.main(["sequence", f"{cmu_path('02_01')}@0.1:1.5", f"{cmu_path('02_03')}@0.2:1.2",
                            "--out", str(seq)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(seq))
    assert any(a.name.startswith("sequence") for a in bpy.data.actions)
    assert stride.cli.main(["sequence", "nofile@x:y", "--out", str(tmp_path / "x.bvh")]) == 1


def test_a_take_goes_into_a_later_time_of_itself_as_into_a_copy_of_it(scene, stride):
    """With one action in the file, Bake Transition is offered; a walk into a later part of itself
    bakes as the same walk into a second copy of it does (length, markers, motion), and as the core
    blends the take with itself. Find Target Time finds a time a whole cycle on, not the frames next
    to Source Time."""
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    assert len(bpy.data.actions) == 1
    assert bpy.ops.stride.bake_transition.poll()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}  # markers, carried into the bakes
    assert bpy.ops.stride.bake_transition(source_time=1.0, target_action="02_01", target_time=2.0,
                                          blend_time=0.3) == {"FINISHED"}
    itself = walk.animation_data.action
    assert itself.name == "02_01 > 02_01 (dead)"
    copy = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.bake_transition(source_action="02_01", source_time=1.0,
                                          target_action=copy.animation_data.action.name, target_time=2.0,
                                          blend_time=0.3) == {"FINISHED"}
    into_copy = walk.animation_data.action
    lengths = [{len(k) for k in keys_of(stride, walk, action)} for action in (itself, into_copy)]
    assert lengths[0] == lengths[1]
    assert sorted((m.frame, m.name) for m in itself.pose_markers) == \
        sorted((m.frame, m.name) for m in into_copy.pose_markers)
    assert [m.frame for m in itself.pose_markers if m.name == "Transition"] == [1 + 120]
    got = stride.bridge.action_to_clip(walk, itself)
    assert_same_motion(got, stride.bridge.action_to_clip(walk, into_copy))
    take = bvh.load(cmu_path("02_01"))
    assert_same_motion(got, transition.dead_blend(take, take, 1.0, 2.0, 0.3, lock_feet=True))
    # Find Target Time: over the whole take the best match of a time is next to it (the frames after
    # it continue it: 1.15 s); into itself, Stride looks from ITSELF_APART on, and bakes from there.
    assert abs(transition.best_target_time(take, 1.0, take) - 1.0) < stride.jobs.ITSELF_APART
    s = scene.stride
    s.source_action, s.source_time, s.target_action = "02_01", 1.0, "02_01"
    assert bpy.ops.stride.find_target_time() == {"FINISHED"}
    assert 1.0 + stride.jobs.ITSELF_APART <= s.target_time <= take.duration
    assert bpy.ops.stride.bake_transition(source_action="02_01", source_time=1.0, target_action="02_01",
                                          target_time=s.target_time) == {"FINISHED"}
    later = walk.animation_data.action
    assert later.name == "02_01 > 02_01 (dead).001"
    assert len(keys_of(stride, walk, later)[0]) == 121 + round((take.duration - s.target_time) * 120)
