"""Synchronized blends in Blender: bake_sync_blend against the core, weights, undo, errors, CLI."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import dataclasses

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from fixtures import cmu_path
from test_bridge import assert_same_motion

from core import bvh, contacts, sync


def walk_and_run(scene, undo=False):
    """Blender's importer: armature '02_01' (active) and action '02_03', scene at 120 fps."""
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), undo=undo, rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    walk = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = walk
    return walk


def cycles():
    return (sync.loop_cycle(bvh.load(cmu_path("02_01"))), sync.loop_cycle(bvh.load(cmu_path("02_03"))))


def curves(stride, obj, action):
    return stride.compat.fcurves(action, stride.compat.action_slot(action, obj))


def keys_of(stride, obj, action):
    return [stride.compat.read_keys(fc) for fc in curves(stride, obj, action)]


def test_constant_weight_equals_the_core_and_leaves_sources_alone(scene, stride):
    walk = walk_and_run(scene)
    before = {n: [k.copy() for k in keys_of(stride, walk, bpy.data.actions[n])] for n in ("02_01", "02_03")}
    assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight=0.5, duration=2.0) == {"FINISHED"}
    baked = walk.animation_data.action
    assert baked.name == "02_01 + 02_03 sync (linear)"
    a, b = cycles()
    want = sync.sync_blend(a, b, 0.5, 2.0, lock_feet=True)  # Lock Feet is on by default
    got = stride.bridge.action_to_clip(walk, baked)
    assert_same_motion(got, want)
    steps = {m.name for m in baked.pose_markers}
    assert {"FootDown_L", "FootDown_R"} <= steps
    for name, keys in before.items():
        after = keys_of(stride, walk, bpy.data.actions[name])
        assert all(np.array_equal(x, y) for x, y in zip(keys, after, strict=True)), name


def test_speed_weight_uses_weight_for_speed(scene, stride):
    walk = walk_and_run(scene)
    a, b = cycles()
    assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="SPEED", speed_mps=2.0,
                                          duration=1.5) == {"FINISHED"}
    w = sync.weight_for_speed(a, b, 2.0)
    want = sync.sync_blend(a, b, w, 1.5, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(walk, walk.animation_data.action), want)
    with pytest.raises(RuntimeError, match=r"reachable"):
        bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="SPEED", speed_mps=20.0)


def test_keyed_weight_curve_ramps_walk_to_run(scene, stride):
    walk = walk_and_run(scene)
    with pytest.raises(RuntimeError, match="key the armature property 'stride_blend_weight'"):
        bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="CURVE", duration=2.0)
    assert "stride_blend_weight" in walk.keys()  # made for the animator to key
    walk["stride_blend_weight"] = 0.0
    walk.keyframe_insert('["stride_blend_weight"]', frame=1)
    walk["stride_blend_weight"] = 1.0
    walk.keyframe_insert('["stride_blend_weight"]', frame=1 + 240)
    for fc in curves(stride, walk, walk.animation_data.action):
        if fc.data_path == '["stride_blend_weight"]':
            for kp in fc.keyframe_points:
                kp.interpolation = "LINEAR"
    assert bpy.ops.stride.bake_sync_blend(action_a="02_01", action_b="02_03", weight_mode="CURVE",
                                          duration=2.0) == {"FINISHED"}
    a, b = cycles()
    want = sync.sync_blend(a, b, (np.array([0.0, 2.0]), np.array([0.0, 1.0])), 2.0, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(walk, walk.animation_data.action), want)


def test_undo_removes_the_baked_action_and_markers(scene, stride):
    walk_and_run(scene, undo=True)
    actions = sorted(a.name for a in bpy.data.actions)
    bpy.ops.ed.undo_push(message="before sync")
    result = bpy.ops.stride.bake_sync_blend("EXEC_DEFAULT", True, action_b="02_03", duration=1.0)
    assert result == {"FINISHED"}
    bpy.ops.ed.undo()
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_mismatched_skeletons_are_refused_and_nothing_is_created(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("131_01"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    actions = sorted(a.name for a in bpy.data.actions)
    with pytest.raises(RuntimeError, match="has no bone 'LeftHip'"):
        bpy.ops.stride.bake_sync_blend(action_b="131_01")
    with pytest.raises(RuntimeError, match="choose action B"):
        bpy.ops.stride.bake_sync_blend()
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_cli_sync_blend_writes_bvh_and_blend(stride, tmp_path, scene):
    out = tmp_path / "ramp.bvh"
    assert stride.cli.main(["sync-blend", str(cmu_path("02_01")), str(cmu_path("02_03")), "--ramp", "0:0,3:1",
                            "--seconds", "3", "--out", str(out)]) == 0
    a, b = cycles()
    want = sync.sync_blend(a, b, (np.array([0.0, 3.0]), np.array([0.0, 1.0])), 3.0, lock_feet=True)
    got = bvh.load(out)
    assert got.n_frames == want.n_frames
    assert np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-9 * want.height
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_anim.bvh(filepath=str(out)) == {"FINISHED"}
    blend = tmp_path / "speed.blend"
    assert stride.cli.main(["sync-blend", str(cmu_path("02_01")), str(cmu_path("02_03")), "--speed", "2",
                            "--seconds", "2", "--out", str(blend)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    assert any(a.name.endswith("sync (linear)") for a in bpy.data.actions)


def test_duration_in_cycles_bakes_whole_blended_cycles_and_loops(scene, stride):
    walk = walk_and_run(scene)
    assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight=0.5, duration=2,
                                          duration_unit="CYCLES") == {"FINISHED"}
    a, b = cycles()
    length = sync.cycle_length(a, b, 0.5)  # 112.5 frames: not a whole number
    action = walk.animation_data.action
    got = stride.bridge.action_to_clip(walk, action)
    assert abs(got.duration - 2 * length) <= 1e-6
    # The loop closes: the last key's pose is the first's, the root one loop further on at the
    # speed it had; Cycles modifiers repeat it, the root's with offset.
    rot = got.rotations
    assert np.abs(np.abs(np.einsum("ji,ji->j", rot[0], rot[-1])) - 1.0).max() < 1e-6
    root = got.positions[:, got.root]
    # Its speed changes across the seam (the last step into the first of the next loop) no more
    # than from one frame to the next inside it (120 fps root steps vary by up to 5 % a frame).
    steps = np.linalg.norm(np.diff(root, axis=0), axis=-1)
    assert abs(steps[-1] - steps[0]) <= np.abs(np.diff(steps)).max()
    for fc in curves(stride, walk, action):
        (cycles_mod,) = [m for m in fc.modifiers if m.type == "CYCLES"]
        want = "REPEAT_OFFSET" if fc.data_path.endswith(".location") else "REPEAT"
        assert cycles_mod.mode_before == cycles_mod.mode_after == want, fc.data_path
    # Seconds, or cycles with cyclic off: no modifiers.
    for kwargs in ({"duration": 2.0}, {"duration": 2, "duration_unit": "CYCLES", "cyclic": False}):
        assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight=0.5, **kwargs) == {"FINISHED"}
        assert not any(fc.modifiers for fc in curves(stride, walk, walk.animation_data.action))
    with pytest.raises(RuntimeError, match="a duration in cycles needs one weight"):
        bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="CURVE", duration_unit="CYCLES")


def test_cyclic_and_plain_bakes_of_whole_cycles_key_whole_scene_frames_and_play_alike(scene, stride):
    """One time base: at 24 fps (takes at 120), a loop of two blended cycles and the same cycles
    baked without Cyclic both key frames 1, 2, ... and play the same poses (the loop's path is
    straightened, so the bodies compare in the hips' frame); the loop goes on seamlessly."""
    from played import in_root_frame, played

    scene.render.fps = 24
    options = stride.options.ImportOptions(update_scene_fps=False, use_fps_scale=True)
    stride.jobs.import_files(bpy.context, [cmu_path("02_01"), cmu_path("02_03")], options=options,
                             single_armature=True)
    obj = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = obj
    baked = {}
    for cyclic in (True, False):
        assert bpy.ops.stride.bake_sync_blend(action_a="02_01", action_b="02_03", weight=0.5, duration=2,
                                              duration_unit="CYCLES", cyclic=cyclic,
                                              lock_feet=False) == {"FINISHED"}
        baked[cyclic] = obj.animation_data.action
    a, b = cycles()
    n = round(2 * sync.cycle_length(a, b, 0.5) * 24)  # whole frames nearest two blended cycles
    for action in baked.values():
        for keys in keys_of(stride, obj, action):
            np.testing.assert_array_equal(keys[:, 0], np.arange(1.0, n + 2.0))
    height = bvh.load(cmu_path("02_01")).height
    names = [pb.name for pb in obj.pose.bones]
    frames = np.arange(1, n + 2)
    poses = {}
    for cyclic, action in baked.items():
        stride.compat.assign(obj, action, stride.compat.action_slot(action, obj))
        poses[cyclic] = in_root_frame(played(obj, frames if cyclic is False else np.arange(1, 2 * n + 2),
                                             names))
    loop, plain = poses[True], poses[False]
    gap = np.linalg.norm(loop[:n + 1, :, :3, 3] - plain[:, :, :3, 3], axis=-1).max()
    assert gap <= 1e-4 * height
    turn = np.abs(loop[:n + 1, :, :3, :3] - plain[:, :, :3, :3]).max()
    assert turn <= 1e-4
    # The Cycles modifiers play the loop on: frame 1 + n + k is frame 1 + k again.
    assert np.linalg.norm(loop[n:, :, :3, 3] - loop[:n + 1, :, :3, 3], axis=-1).max() <= 1e-4 * height


def root_speed(obj, first, last, fps):
    """Horizontal speed of the root bone as Blender plays it from frame `first` to `last` (armature
    units per second; Blender's importer keeps Y-up files' floor in armature X, Y)."""
    from played import played

    ends = played(obj, [first, last], ["Hips"])[:, 0, :2, 3]
    return float(np.linalg.norm(ends[1] - ends[0])) * fps / (last - first)


def test_the_default_curve_ramp_spans_the_bake_and_ends_at_the_second_gait(scene, stride):
    """Curve chosen in a scene whose frame range is longer than the bake (as after importing a long
    take): the ramp keyed for the animator goes from 0 where the bake starts to 1 where it ends, and
    follows Duration until edited; the blend's last cycle travels within 5 % of the run's speed."""
    walk = walk_and_run(scene)
    scene.frame_start, scene.frame_end = 1, 1200
    s = scene.stride
    s.action_a, s.action_b, s.duration = "02_01", "02_03", 2.0
    s.weight_mode = "CURVE"
    action_a = bpy.data.actions["02_01"]
    fc = stride.bridge.property_curve(walk, action_a, stride.jobs.WEIGHT_PROPERTY)
    np.testing.assert_array_equal(stride.compat.read_keys(fc), [[1.0, 0.0], [241.0, 1.0]])
    s.duration = 4.0  # changed after choosing Curve: the ramp, untouched, follows the bake
    options = stride.properties.settings_options(stride.options.SyncOptions, s)
    assert bpy.ops.stride.bake_sync_blend(**dataclasses.asdict(options)) == {"FINISHED"}
    fc = stride.bridge.property_curve(walk, action_a, stride.jobs.WEIGHT_PROPERTY)
    np.testing.assert_array_equal(stride.compat.read_keys(fc), [[1.0, 0.0], [481.0, 1.0]])
    assert fc.evaluate(1.0) == 0.0 and fc.evaluate(481.0) == 1.0
    assert walk.animation_data.action.frame_range[1] == 481.0
    # The run's speed over its cycle (left touchdown to the next), played by Blender from its action;
    # the blend's over its last cycle: as long, ending where the bake ends (a whole cycle's travel).
    lefts = contacts.footsteps(bvh.load(cmu_path("02_03")))["FootDown_L"]
    first, last = (1 + round(t * 120) for t in lefts[:2])
    want = root_speed(bpy.data.objects["02_03"], first, last, 120.0)
    blend = root_speed(walk, 481 - (last - first), 481, 120.0)
    assert abs(blend / want - 1.0) < 0.05, (blend, want)
    # An edited ramp is the animator's: it stays as it is for the next bake.
    fc.keyframe_points[1].co.x = 300.0
    fc.update()
    s.duration = 3.0
    assert bpy.ops.stride.bake_sync_blend(**dataclasses.asdict(
        stride.properties.settings_options(stride.options.SyncOptions, s))) == {"FINISHED"}
    np.testing.assert_array_equal(stride.compat.read_keys(fc), [[1.0, 0.0], [300.0, 1.0]])
