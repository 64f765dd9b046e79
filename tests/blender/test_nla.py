"""Bake NLA Track on a stack of tracks: what Blender's NLA plays (frame_set and pose bone
matrices, its own evaluation) outside the transitions, and a refusal naming the track, strip and
setting for what a bake cannot reproduce."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import bpy
import numpy as np
import pytest
from blender_fixtures import walk_and_run
from fixtures import cmu_path
from played import in_root_frame, played

from core import bvh

FIRST, SWITCH, BLEND_IN, LAST = 1, 121, 20, 301


def crossfade_setup(scene, stride):
    """The usual crossfade: track 'Walk' (lower) plays 02_01 from frame 1 to 161, track 'Run'
    (upper) 02_03 from frame 121 (while the walk plays) to 301, blending in over 20 frames."""
    obj = walk_and_run(scene, stride)
    lower = obj.animation_data.nla_tracks.new()
    lower.name = "Walk"
    a = lower.strips.new("walk", FIRST, bpy.data.actions["02_01"])
    a.action_frame_start, a.action_frame_end = 11, 171  # frames 1..161
    upper = obj.animation_data.nla_tracks.new(prev=lower)
    upper.name = "Run"
    b = upper.strips.new("run", SWITCH, bpy.data.actions["02_03"])
    b.action_frame_start, b.action_frame_end = 21, 201  # frames 121..301
    b.blend_in = BLEND_IN
    assert [t.name for t in obj.animation_data.nla_tracks] == ["Walk", "Run"]  # bottom first
    return obj, (lower, upper), (a, b)


def nla_and_bake(obj, **options):
    """(pose bone matrices as Blender's NLA plays the tracks, as the baked action plays alone)."""
    frames = np.arange(FIRST, LAST + 1)
    names = [pb.name for pb in obj.pose.bones]
    nla = played(obj, frames, names)
    assert bpy.ops.stride.bake_nla_track(**options) == {"FINISHED"}
    obj.animation_data.use_nla = False  # the baked (active) action alone
    baked = played(obj, frames, names)
    obj.animation_data.use_nla = True
    return nla, baked


def gaps(got, want):
    """(position gap [F] in units, rotation gap [F]: largest matrix entry) per frame."""
    pos = np.linalg.norm(got[..., :3, 3] - want[..., :3, 3], axis=-1).max(axis=-1)
    rot = np.abs(got[..., :3, :3] - want[..., :3, :3]).max(axis=(-3, -2, -1))
    return pos, rot


def test_two_tracks_bake_to_what_the_nla_plays_outside_the_transition(scene, stride):
    obj, _tracks, _strips = crossfade_setup(scene, stride)
    nla, baked = nla_and_bake(obj, lock_feet=False)  # strips where the NLA places them, by default
    assert obj.animation_data.action.name == "Walk + Run baked (dead)"
    height = bvh.load(cmu_path("02_01")).height
    pos, rot = gaps(baked, nla)
    frame = np.arange(FIRST, LAST + 1)
    outside = (frame <= SWITCH) | (frame >= SWITCH + BLEND_IN)
    assert pos[outside].max() <= 1e-4 * height
    assert rot[outside].max() <= 1e-4
    # Both tracks are in it: the walk to the switch, the run after the blend, the two takes far apart.
    assert np.linalg.norm(nla[0, :, :3, 3] - nla[-1, :, :3, 3], axis=-1).max() > 0.5 * height


def test_continuing_the_path_keeps_the_bodies_and_moves_the_run_onto_the_walk(scene, stride):
    obj, _tracks, _strips = crossfade_setup(scene, stride)
    nla, baked = nla_and_bake(obj, lock_feet=False, reanchor=True)
    height = bvh.load(cmu_path("02_01")).height
    frame = np.arange(FIRST, LAST + 1)
    before = frame <= SWITCH
    pos, rot = gaps(baked[before], nla[before])
    assert pos.max() <= 1e-4 * height and rot.max() <= 1e-4
    after = frame >= SWITCH + BLEND_IN
    body_pos, body_rot = gaps(in_root_frame(baked[after]), in_root_frame(nla[after]))
    assert body_pos.max() <= 1e-4 * height and body_rot.max() <= 1e-4
    # The run itself is moved: it goes on from where the walk is, not from where its take was.
    assert np.linalg.norm(baked[after][:, 0, :3, 3] - nla[after][:, 0, :3, 3], axis=-1).max() > 0.05 * height


def test_tracks_are_chosen_by_name_and_one_track_bakes_alone(scene, stride):
    obj, _tracks, (_a, _b) = crossfade_setup(scene, stride)
    assert bpy.ops.stride.bake_nla_track(track="Walk") == {"FINISHED"}
    assert obj.animation_data.action.name == "Walk baked (dead)"
    keys = stride.compat.fcurves(obj.animation_data.action,
                                 stride.compat.action_slot(obj.animation_data.action, obj))
    assert {len(fc.keyframe_points) for fc in keys} == {161}
    with pytest.raises(RuntimeError, match=r"no NLA track named 'Jog'"):
        bpy.ops.stride.bake_nla_track(track="Walk, Jog")


def refused(obj, match, **options):
    actions = sorted(a.name for a in bpy.data.actions)
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.stride.bake_nla_track(**options)
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_settings_a_bake_cannot_reproduce_are_refused_naming_track_and_strip(scene, stride):
    obj, (_lower, upper), (_a, b) = crossfade_setup(scene, stride)
    b.blend_type = "ADD"
    refused(obj, r"NLA strip 'run' on track 'Run' uses blending 'ADD' \(only Replace: set Blending to "
                 r"Replace\)")
    b.blend_type = "REPLACE"
    b.use_reverse = True
    refused(obj, r"strip 'run' on track 'Run' uses a reversed strip \(turn Reversed off\)")
    b.use_reverse = False
    upper.mute = True
    refused(obj, r"NLA track 'Run' is muted", track="Walk,Run")
    upper.mute = False
    upper.is_solo = True
    refused(obj, r"NLA track 'Run' is solo")
    upper.is_solo = False
    # The run fades in and out again without ever taking over from the walk.
    b.action_frame_end = 36  # frames 121..136
    b.blend_in, b.blend_out = 7.5, 7.5  # at full influence at no frame
    refused(obj, r"strip 'run' on track 'Run' plays at partial influence over strip 'walk' on track "
                 r"'Walk', fading in and out again")


def test_a_strip_over_another_that_keys_fewer_bones_is_refused(scene, stride):
    obj, _tracks, (_a, b) = crossfade_setup(scene, stride)
    run = b.action
    slot = getattr(b, "action_slot", None) or stride.compat.action_slot(run, obj)
    bag = stride.compat.channelbag(run, slot)
    curves = [fc for fc in bag.fcurves if fc.data_path == 'pose.bones["LeftHand"].rotation_quaternion']
    assert curves
    stride.compat.remove_fcurves(bag, curves)
    refused(obj, r"NLA strip 'run' on track 'Run' \(action '02_03'\) keys no rotation of bone 'LeftHand', "
                 r"which strip 'walk' on track 'Walk' keys")
    # One track alone plays whole poses of its strips: baked (without a blend in from nothing,
    # which is refused, naming the frames).
    refused(obj, r"at frames 121-140 strip 'run' on track 'Run' plays at partial influence before any "
                 r"strip plays alone", track="Run")
    b.blend_in = 0
    assert bpy.ops.stride.bake_nla_track(track="Run") == {"FINISHED"}


def test_cli_nla_bakes_the_tracks_of_a_blend_and_refuses_what_it_cannot(scene, stride, tmp_path, capsys):
    crossfade_setup(scene, stride)
    source = tmp_path / "stack.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    out = tmp_path / "baked.blend"
    assert stride.cli.main(["nla", str(source), "--tracks", "Walk,Run", "--no-lock-feet",
                            "--out", str(out)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(out))
    obj = bpy.data.objects["02_01"]
    action = obj.animation_data.action
    assert action.name == "Walk + Run baked (dead)"
    keys = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    assert {len(fc.keyframe_points) for fc in keys} == {LAST - FIRST + 1}
    bvh_out = tmp_path / "baked.bvh"
    assert stride.cli.main(["nla", str(source), "--out", str(bvh_out)]) == 0
    assert bvh.load(bvh_out).n_frames == LAST - FIRST + 1
    bpy.ops.wm.open_mainfile(filepath=str(source))
    bpy.data.objects["02_01"].animation_data.nla_tracks["Run"].strips[0].blend_type = "ADD"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    capsys.readouterr()
    assert stride.cli.main(["nla", str(source), "--out", str(out)]) == 1
    assert "strip 'run' on track 'Run' uses blending 'ADD'" in capsys.readouterr().err


def test_one_track_with_scale_and_repeat_bakes_to_what_the_nla_plays_outside_the_transitions(scene, stride):
    from test_transition import nla_setup

    obj, _track, (_a, b, _c) = nla_setup(scene, stride)  # walk 1-61, run 61-151 (scale 1.5), walk x2
    frames = np.arange(1, 212)
    names = [pb.name for pb in obj.pose.bones]
    nla = played(obj, frames, names)
    assert bpy.ops.stride.bake_nla_track(track="Locomotion", lock_feet=False) == {"FINISHED"}
    obj.animation_data.use_nla = False
    baked = played(obj, frames, names)
    pos, rot = gaps(baked, nla)
    # The run blends in over its 12 frames of Blend In, the second walk cuts in (Blend Time 0.25 s).
    outside = (frames <= 61) | ((frames >= 61 + int(b.blend_in)) & (frames <= 151)) | (frames >= 151 + 30)
    height = bvh.load(cmu_path("02_01")).height
    # Scale 1.5 samples the run's action between its keys on two frames of three: Stride slerps
    # between the keys where Blender evaluates the importer's Bezier curves (a known limit, within
    # 1e-3 of height); on its keys, and everywhere else, the bake is what the NLA plays.
    on_keys = outside & ((frames < 61) | (frames > 151) | ((frames - 61) % 3 == 0))
    assert pos[on_keys].max() <= 1e-4 * height
    assert rot[on_keys].max() <= 1e-4
    assert pos[outside].max() <= 1e-3 * height
