"""Your own rig in Blender: a Mixamo character through Blender's FBX exporter and importer and a
hand-built Z-up rig (tests/blender/rigs.py), feet chosen on the armature, object transforms, frame
rates, skeletons that do not match. Every check is against Blender's own evaluation or importer."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools
import math

import bpy
import numpy as np
import pytest
import rigs
from blender_fixtures import blender_import, steps_of
from bpy_extras.io_utils import axis_conversion
from fixtures import cmu_path

KINDS = ["mixamo", "hand_built"]


def assert_alternating(marks: list[tuple[int, str]], least: int = 2) -> None:
    names = [n for _, n in marks]
    assert all(a != b for a, b in itertools.pairwise(names)), marks
    assert min(names.count("FootDown_L"), names.count("FootDown_R")) >= least, marks


def frames_of(action) -> range:
    first, last = (round(f) for f in action.frame_range)
    return range(first, last + 1)


def test_the_rigs_are_what_animators_bring(rig_folder):
    mixamo = rigs.open_rig("mixamo", rig_folder)
    assert tuple(mixamo.rotation_euler) == pytest.approx((math.pi / 2, 0.0, 0.0), abs=1e-6)
    assert tuple(mixamo.scale) == pytest.approx((0.01, 0.01, 0.01))
    bones = mixamo.data.bones
    assert all(b.name.startswith("mixamorig:") for b in bones)
    # Bones in centimeters, in a Y-up armature space.
    span = np.array(bones["mixamorig:Head"].head_local) - np.array(bones["mixamorig:LeftFoot"].head_local)
    assert span[1] > 100.0
    hand = rigs.open_rig("hand_built", rig_folder)
    assert np.allclose(np.array(hand.matrix_world), np.eye(4))
    bones = hand.data.bones
    assert {"thigh.L", "shin.L", "foot.L", "toe.L"} <= set(bones.keys())
    span = np.array(bones["head"].head_local) - np.array(bones["foot.L"].head_local)
    assert 1.0 < span[2] < 2.0  # meters, Z up
    rolls = [bpy.types.Bone.AxisRollFromMatrix(b.matrix_local.to_3x3())[1] for b in bones]
    assert sum(abs(r) > 0.05 for r in rolls) > 0.8 * len(rolls)  # rolled, each its own way


@pytest.mark.parametrize("kind", KINDS)
def test_detect_footsteps_marks_alternating_real_plants(kind, stride, rig_folder):
    obj = rigs.open_rig(kind, rig_folder)
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    action = obj.animation_data.action
    marks = steps_of(action)
    assert_alternating(marks, least=3)
    _, left, right, _, _ = rigs.PARTS[kind]
    frames = frames_of(action)
    # Blender's own evaluation: each ankle's height in the world over the take.
    heights = rigs.world_heads(obj, [left, right], frames)[..., 2]
    lowest = heights.min(axis=0)
    for frame, name in marks:
        k = 0 if name.endswith("_L") else 1
        assert heights[frame - frames[0], k] - lowest[k] <= 0.03, (frame, name)
    # The feet the body map found fill the armature's feet, with what they came from.
    assert (obj.stride.left_foot, obj.stride.right_foot) == (left, right)
    assert stride.rig.evidence(obj) == "names"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("scale", "meters"), [(1.0, 1.0), (100.0, 0.01)], ids=["m", "cm"])
def test_exported_bvh_keeps_bone_names_and_stands_upright(kind, scale, meters, stride, rig_folder, tmp_path):
    obj = rigs.open_rig(kind, rig_folder)
    names = sorted(b.name for b in obj.data.bones)
    out = tmp_path / f"{kind}.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out), global_scale=scale) == {"FINISHED"}
    assert "Frame Time: 0.00833333333333333" in out.read_text()  # the action's own 120 fps
    bpy.ops.wm.read_homefile(use_empty=True)
    got = blender_import(out)  # Blender's importer with its defaults
    assert sorted(b.name for b in got.data.bones) == names
    head, left, right, _, _ = rigs.PARTS[kind]
    at = blender_world(got, [head, left, right], frames_of(got.animation_data.action)[::20])
    rise = at[:, 0] - at[:, 1:].mean(axis=1)
    length = np.linalg.norm(rise, axis=-1)
    tilt = np.degrees(np.arccos(rise[:, 2] / length))
    assert tilt.max() < 30.0, tilt
    assert (length * meters > 1.0).all() and (length * meters < 2.3).all(), length  # in m, or in cm


def blender_world(obj, bones, frames) -> np.ndarray:
    return rigs.world_heads(obj, bones, frames)


@pytest.mark.parametrize("kind", KINDS)
def test_reads_and_writes_stand_where_blender_shows_the_rig(kind, stride, rig_folder):
    obj = rigs.open_rig(kind, rig_folder)
    # Moved about as a scene moves a character: parented to a carrier turned, scaled and moved (the
    # rig's own transform is keyed on the FBX import, so the carrier moves it).
    carrier = bpy.data.objects.new("carrier", None)
    bpy.context.scene.collection.objects.link(carrier)
    carrier.location, carrier.rotation_euler = (1.0, -2.0, 0.5), (0.3, 0.0, 0.7)
    carrier.scale = (2.0, 2.0, 2.0)
    obj.parent = carrier
    clip = stride.bridge.action_to_clip(obj)
    to_world = np.array(axis_conversion(from_forward="-Z", from_up="Y"))  # clip (BVH) axes -> Blender's
    names = list(clip.names)
    frames = frames_of(obj.animation_data.action)[::40]
    _, pos = clip.fk()
    want = rigs.world_heads(obj, names, frames)
    got = pos[np.asarray(frames) - frames[0]] @ to_world.T
    assert np.abs(got - want).max() <= 1e-4 * clip.height
    # Written back onto the moved rig, the same clip plays in the same place.
    stride.bridge.clip_to_action(clip, obj, "again", assign=True, frame_start=frames[0], action_fps=clip.fps)
    again = rigs.world_heads(obj, names, frames)
    assert np.abs(again - want).max() <= 1e-4 * clip.height
    carrier.scale = (1.0, 2.0, 1.0)
    with pytest.raises(stride.bridge.BridgeError, match="scaled unevenly"):
        stride.bridge.action_to_clip(obj)


def second_action(stride, obj):
    """The rig's take from its second half on, as its own action (a target to transition into)."""
    clip, timing = stride.bridge.read_action(obj)
    later = clip[clip.n_frames // 2:]
    action = stride.bridge.clip_to_action(later, obj, "later", frame_start=timing.start, action_fps=clip.fps)
    action.use_fake_user = True
    return action


def nla_track(obj, actions):
    track = obj.animation_data.nla_tracks.new()
    start = 1
    for action in actions:
        strip = track.strips.new(action.name, start, action)
        start = int(strip.frame_end) + 10
    return track


def test_feet_chosen_in_the_sidebar_are_used_by_every_operator_and_the_cli(stride, rig_folder, tmp_path,
                                                                          capfd):
    obj = rigs.open_rig("hand_built", rig_folder)
    walk = obj.animation_data.action
    later = second_action(stride, obj)
    nla_track(obj, [walk, later])
    settings = bpy.context.scene.stride
    settings.target_action = later.name
    # The user's choice: the toes, not the ankles the names say.
    obj.stride.left_foot, obj.stride.right_foot = "toe.L", "toe.R"
    assert stride.rig.evidence(obj) == "user"
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    assert "feet toe.L, toe.R (from user)" in capfd.readouterr().out
    blend = tmp_path / "rig.blend"
    # Every operator and subcommand that reads an action stands on them: a foot that is no bone of the
    # rig stops each one, naming the setting.
    obj.stride.left_foot = "nope"
    operators = [
        (bpy.ops.stride.detect_footsteps, {}),
        (bpy.ops.stride.write_event_curves, {}),
        (bpy.ops.stride.lock_feet, {}),
        (bpy.ops.stride.bake_transition, {"target_action": later.name}),
        (bpy.ops.stride.find_target_time, {}),
        (bpy.ops.stride.bake_sync_blend, {"action_b": later.name}),
        (bpy.ops.stride.bake_nla_track, {}),
    ]
    for operator, options in operators:
        with pytest.raises(RuntimeError, match="Left Foot 'nope' is no bone of 'rig'"):
            operator(**options)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    out = str(tmp_path / "out.blend")
    for argv in (["events", str(blend), "--out", out], ["lock-feet", str(blend), "--out", out],
                 ["sync-blend", str(blend), str(blend), "--weight", "0.5", "--seconds", "1", "--out", out],
                 ["inspect", str(blend)]):
        assert stride.cli.main(argv) == 1, argv
        assert "Left Foot 'nope' is no bone of 'rig'" in capfd.readouterr().err, argv
    # --feet chooses them for an armature (and the .blend keeps them), or where there is none.
    assert stride.cli.main(["events", str(blend), "--feet", "toe.L,toe.R", "--out", out]) == 0
    assert "feet toe.L, toe.R (from user)" in capfd.readouterr().out
    assert stride.cli.main(["inspect", out]) == 0
    said = capfd.readouterr().out
    assert "foot L: toe.L" in said and "legs from: user" in said
    walk_bvh, run_bvh = str(cmu_path("02_01")), str(cmu_path("02_03"))
    for argv in (["transition", walk_bvh, run_bvh, "--at", "1"],
                 ["sequence", f"{walk_bvh}@0:1.5", f"{run_bvh}@0.2:1"],
                 ["lock-feet", walk_bvh],
                 ["sync-blend", walk_bvh, run_bvh, "--weight", "0.5", "--seconds", "1"]):
        assert stride.cli.main([*argv, "--feet", "LeftToeBase,Nope", "--out", str(tmp_path / "x.bvh")]) == 1
        assert "--feet: '02_01' has no joint 'Nope'" in capfd.readouterr().err, argv
        assert stride.cli.main([*argv, "--feet", "LeftFoot,RightFoot", "--out", str(tmp_path / "x.bvh")]) == 0


def test_presets_and_find_feet_fill_the_feet(stride, rig_folder):
    obj = rigs.open_rig("mixamo", rig_folder)
    assert stride.rig.VIEW3D_PT_stride_rig.poll(bpy.context)
    assert bpy.ops.stride.feet_preset(preset="MIXAMO") == {"FINISHED"}
    assert (obj.stride.left_foot, obj.stride.right_foot) == ("mixamorig:LeftFoot", "mixamorig:RightFoot")
    with pytest.raises(RuntimeError, match=r"no bone 'DEF-foot\.L': not a Rigify"):
        bpy.ops.stride.feet_preset(preset="RIGIFY_DEF")
    assert bpy.ops.stride.find_feet() == {"FINISHED"}
    assert stride.rig.evidence(obj) == "names"
    # Another Mixamo character in the same file has another namespace.
    bones = ["mixamorig1:Hips", "mixamorig1:LeftFoot", "mixamorig1:RightFoot"]
    assert stride.rig.preset_feet(bones, "MIXAMO") == ("mixamorig1:LeftFoot", "mixamorig1:RightFoot")
    for preset, (_, left, right) in stride.rig.PRESETS.items():
        assert stride.rig.preset_feet([left, right], preset) == (left, right)
    bpy.context.view_layer.objects.active = None
    assert not bpy.ops.stride.feet_preset.poll() and not bpy.ops.stride.find_feet.poll()
    assert not stride.rig.VIEW3D_PT_stride_rig.poll(bpy.context)


@pytest.mark.parametrize("kind", KINDS)
def test_the_rig_panel_shows_the_body_map(kind, stride, rig_folder):
    obj = rigs.open_rig(kind, rig_folder)
    lines = [text for text, _ in stride.rig.body_lines(obj)]
    _, left, right, left_toe, _ = rigs.PARTS[kind]
    assert any(t.startswith("Leg L: ") and t.endswith(f"{left} > {left_toe}") for t in lines), lines
    assert f"Feet: {left}, {right} (from names)" in lines
    assert any(t.startswith("Unit: 1 m (height)") for t in lines), lines
    assert "Up: +Z in the scene (motion)" in lines
    assert "Rate: 120 fps, scene 120 fps" in lines
    bpy.context.scene.render.fps = 24
    lines = [text for text, _ in stride.rig.body_lines(obj)]
    assert "Rate: 24 fps, scene 24 fps" in lines  # Blender keeps no rate: the steps tell
    assert any("120 fps" in t and "24 fps" in t for t in lines), lines


def warnings_in(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Warning:")]


@pytest.mark.parametrize("take", ["02_01", "02_03"])
def test_a_120_fps_take_in_a_24_fps_scene_works_or_says_the_rates_differ(take, scene, stride, capfd):
    # Stride's importer, told to leave the scene's rate: the action keeps its own.
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path(take)), update_scene_fps=False) == {"FINISHED"}
    assert scene.render.fps == 24
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    said = warnings_in(capfd.readouterr().out)
    assert any("120 fps" in w and "24 fps" in w for w in said), said
    assert_alternating(steps_of(bpy.context.active_object.animation_data.action))
    # Blender's importer with its defaults: one key per scene frame, and no rate kept anywhere.
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps = 24
    obj = blender_import(cmu_path(take))
    capfd.readouterr()
    try:
        bpy.ops.stride.detect_footsteps()
    except RuntimeError as exc:
        assert "120 fps" in str(exc) and "24 fps" in str(exc), str(exc)
    else:
        said = warnings_in(capfd.readouterr().out)
        if not any("120 fps" in w and "24 fps" in w for w in said):
            assert_alternating(steps_of(obj.animation_data.action))


def test_stride_import_updates_the_scene_rate_and_duration_as_blenders_does(scene, stride, tmp_path):
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base, scene.frame_end) == (120, 1.0, 344)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01")), update_scene_fps=False,
                                     update_scene_duration=False) == {"FINISHED"}
    assert (scene.render.fps, scene.frame_end) == (24, 250)
    out = tmp_path / "x.blend"
    argv = ["import", str(cmu_path("02_03")), "--out", str(out), "--no-update-scene-fps"]
    assert stride.cli.main(argv) == 0
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert bpy.context.scene.render.fps == 24 and bpy.context.scene.frame_end == 250


def test_combining_actions_of_other_bone_lengths_is_refused_naming_the_bone_unless_allowed(
        scene, stride, tmp_path, capfd):
    # Subjects 02 and 09: the same bone names and parents, other bone lengths.
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("09_01"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    actions = sorted(a.name for a in bpy.data.actions)
    says = r"action '09_01' was made for another skeleton \(armature '09_01'\): its bone '\w+' is [\d.]+ long"
    with pytest.raises(RuntimeError, match=says):
        bpy.ops.stride.bake_transition(target_action="09_01")
    with pytest.raises(RuntimeError, match=says):
        bpy.ops.stride.bake_sync_blend(action_b="09_01")
    bpy.context.scene.stride.target_action = "09_01"
    with pytest.raises(RuntimeError, match=says):
        bpy.ops.stride.find_target_time()
    nla_track(walk, [bpy.data.actions["02_01"], bpy.data.actions["09_01"]])
    with pytest.raises(RuntimeError, match=says):
        bpy.ops.stride.bake_nla_track()
    assert sorted(a.name for a in bpy.data.actions) == actions
    capfd.readouterr()
    assert bpy.ops.stride.bake_transition(target_action="09_01", allow_mismatch=True) == {"FINISHED"}
    assert any("combined anyway (Allow Mismatch)" in w for w in warnings_in(capfd.readouterr().out))
    # Stride's importer keeps each action's bone lengths: the armature playing it may be gone.
    bpy.ops.wm.read_homefile(use_empty=True)
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path("02_01"), cmu_path("09_01")])
    assert not failed
    (walk, _), (other, run) = done
    bpy.data.objects.remove(other)
    run.use_fake_user = True
    bpy.context.view_layer.objects.active = walk
    with pytest.raises(RuntimeError, match=r"action '09_01' was made for another skeleton: its bone"):
        bpy.ops.stride.bake_transition(target_action="09_01")
    # The CLI, on the files: as `import --single-armature` refuses the pair.
    a, b, out = str(cmu_path("02_01")), str(cmu_path("09_01")), str(tmp_path / "t.bvh")
    assert stride.cli.main(["transition", a, b, "--at", "1", "--out", out]) == 1
    assert "in '02_01' and" in capfd.readouterr().err
    assert stride.cli.main(["sequence", f"{a}@0:1", f"{b}@0:1", "--out", out]) == 1
    assert "(--allow-mismatch)" in capfd.readouterr().err
    assert stride.cli.main(["transition", a, b, "--at", "1", "--out", out, "--allow-mismatch"]) == 0
    assert "combined anyway (--allow-mismatch)" in capfd.readouterr().err
