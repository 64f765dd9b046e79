"""Bakes keep what Stride does not blend (carry.py) and bakes that show (showing.py), checked against
Blender's own evaluation: `frame_set` and pose bone matrices, F-curve evaluation of the sources."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import importlib

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from bpy_extras.io_utils import axis_conversion
from fixtures import cmu_path

SWITCH_S, TARGET_S = 1.0, 0.4


def _bag(stride, action, obj):
    return stride.compat.channelbag(action, stride.compat.action_slot(action, obj), create=True)


def _curve(stride, bag, path, index, frames, values, group=None):
    fc = stride.compat.new_fcurve(bag, path, index, group=group)
    stride.compat.write_keys(fc, np.asarray(frames, dtype=np.float64), np.asarray(values, dtype=np.float64),
                             "BEZIER")
    return fc


def _decimate(stride, obj, action, every: int = 3) -> None:
    """Every bone curve of `action` keyed on every `every`-th frame only, Bezier with auto handles
    (Blender's own), so that frames between keys are Bezier in-betweens; one curve gets a sub-frame
    key."""
    bag = _bag(stride, action, obj)
    for fc in list(bag.fcurves):
        keys = stride.compat.read_keys(fc)
        keep = keys[::every]
        if fc.data_path.endswith('"LeftLeg"].rotation_euler') and fc.array_index == 0:
            extra = np.array([[keep[5, 0] + 1.5, keep[5, 1] + 0.2]])
            keep = np.concatenate([keep[:6], extra, keep[6:]])
        stride.compat.write_keys(fc, keep[:, 0], keep[:, 1], "BEZIER")


def _extras(stride, obj, action, seed: int):
    """Channels Stride does not blend, keyed in `action`: scale, a B-bone property, custom
    properties of a bone and of the object, and Stride's own weight curve (never carried)."""
    rng = np.random.default_rng(seed)
    bag = _bag(stride, action, obj)
    frames = np.arange(1, 300, 5, dtype=np.float64)
    obj["foo"] = 0.0
    obj.pose.bones["Head"]["wiggle"] = 0.0
    obj["stride_blend_weight"] = 0.0
    for i in range(3):
        values = 1.0 + 0.1 * rng.standard_normal(len(frames))
        _curve(stride, bag, 'pose.bones["LeftLeg"].scale', i, frames, values)
    _curve(stride, bag, 'pose.bones["Spine"].bbone_curveinx', 0, frames, rng.standard_normal(len(frames)))
    _curve(stride, bag, 'pose.bones["Head"]["wiggle"]', 0, frames, rng.standard_normal(len(frames)))
    _curve(stride, bag, '["foo"]', 0, frames, seed + rng.standard_normal(len(frames)))
    _curve(stride, bag, '["stride_blend_weight"]', 0, frames[:2], [0.0, 1.0])


CARRIED = [('pose.bones["LeftLeg"].scale', 0), ('pose.bones["LeftLeg"].scale', 2),
           ('pose.bones["Spine"].bbone_curveinx', 0), ('pose.bones["Head"]["wiggle"]', 0), ('["foo"]', 0)]


def _heads(stride, obj, action, frames) -> np.ndarray:
    """[T, J, 3] world bone heads and [T, J, 3, 3] pose matrices as Blender evaluates `action` on
    `obj` at `frames` (frame_set, pose_bone.matrix)."""
    stride.compat.assign(obj, action, stride.compat.action_slot(action, obj))
    scene = bpy.context.scene
    world = np.array(obj.matrix_world)
    out = []
    for f in frames:
        scene.frame_set(int(f))
        out.append([(world @ np.array(pb.matrix))[:3, :] for pb in obj.pose.bones])
    return np.array(out)


@pytest.fixture
def takes(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"))  # NATIVE: Euler bones in the file's orders
    run = blender_import(cmu_path("02_03"))
    bpy.context.view_layer.objects.active = walk
    src, dst = bpy.data.actions["02_01"], bpy.data.actions["02_03"]
    _decimate(stride, walk, src)
    # A non-root bone that moves: its location is Stride's to blend, read from keys as well.
    _curve(stride, _bag(stride, src, walk), 'pose.bones["LeftArm"].location', 1, np.arange(1, 300, 9),
           0.5 * np.sin(np.arange(1, 300, 9) / 10.0), group="LeftArm")
    _extras(stride, walk, src, 1)
    _extras(stride, run, dst, 7)
    stride.compat.assign(walk, src, stride.compat.action_slot(src, walk))
    return walk, src, dst


def test_frames_before_the_switch_equal_the_source_as_blender_plays_it(takes, stride):
    walk, src, dst = takes
    assert walk.pose.bones["LeftLeg"].rotation_mode != "QUATERNION"
    slot = stride.compat.action_slot(src, walk)
    before = [stride.compat.read_keys(fc).copy() for fc in stride.compat.fcurves(src, slot)]
    assert bpy.ops.stride.bake_transition(source_time=SWITCH_S, target_action="02_03", target_time=TARGET_S,
                                          blend_time=0.3, lock_feet=False) == {"FINISHED"}
    baked = walk.animation_data.action
    assert baked.name.startswith("02_01 > 02_03")
    assert baked.get(stride.jobs.PLAYS_ON) is None  # a rig without constraints plays its bake
    switch = 1 + round(SWITCH_S * 40) * 3  # the decimated source reads at 40 fps
    frames = np.arange(1, switch + 1)
    want = _heads(stride, walk, src, frames)
    got = _heads(stride, walk, baked, frames)
    height = np.ptp(want[..., :, 3], axis=1).max()
    err = np.abs(got - want)
    assert err[..., 3].max() <= 1e-5 * height, np.unravel_index(np.argmax(err[..., 3]), err[..., 3].shape)
    assert err[..., :3].max() <= 1e-5
    # The sources are untouched.
    after = [stride.compat.read_keys(fc) for fc in stride.compat.fcurves(src, slot)]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))

    # Carried channels: the source's up to the switch, the target's (shifted) after it.
    bag = _bag(stride, baked, walk)
    src_bag, dst_bag = _bag(stride, src, walk), _bag(stride, dst, walk)
    assert bag.fcurves.find('["stride_blend_weight"]', index=0) is None
    last = int(stride.compat.read_keys(bag.fcurves[0])[-1, 0])
    assert last > switch + 100
    target_frame = 1 + round(TARGET_S * 40) * 3
    for path, index in CARRIED:
        fc = bag.fcurves.find(path, index=index)
        assert fc is not None, path
        a, b = src_bag.fcurves.find(path, index=index), dst_bag.fcurves.find(path, index=index)
        pre = np.arange(1.0, switch + 0.01, 0.25)  # through the switch frame
        got, want = np.array([fc.evaluate(f) for f in pre]), np.array([a.evaluate(f) for f in pre])
        assert np.abs(got - want).max() <= 1e-5, (path, pre[np.argmax(np.abs(got - want))])
        post = np.arange(switch + 1.0, last + 0.01, 0.25)  # to the last frame
        got = np.array([fc.evaluate(f) for f in post])
        want = np.array([b.evaluate(f - switch + target_frame) for f in post])
        assert np.abs(got - want).max() <= 1e-5, (path, post[np.argmax(np.abs(got - want))])


def test_lock_feet_carries_every_other_channel_whole(takes, stride):
    walk, src, _ = takes
    result, _, _ = stride.jobs.lock_feet_action(walk, options=stride.options.LockFeetOptions())
    bag, src_bag = _bag(stride, result, walk), _bag(stride, src, walk)
    frames = np.arange(-5.0, 320.0, 0.5)
    for path, index in CARRIED:
        fc, a = bag.fcurves.find(path, index=index), src_bag.fcurves.find(path, index=index)
        assert np.allclose([fc.evaluate(f) for f in frames], [a.evaluate(f) for f in frames], atol=1e-6), path


def test_a_sync_bake_names_the_channels_it_does_not_carry(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"))
    blender_import(cmu_path("02_03"))
    bpy.context.view_layer.objects.active = walk
    _extras(stride, walk, bpy.data.actions["02_01"], 1)
    options = stride.options.SyncOptions(action_b="02_03", duration=2.0)
    with stride.jobs.core_warnings() as warned:
        stride.jobs.bake_sync_blend(walk, options=options)
    assert any("does not carry" in w and "LeftLeg" in w and "foo" in w for w in warned), warned
    assert not any("stride_blend_weight" in w for w in warned)


# -- bakes that show --------------------------------------------------------------------------------

def _constrained(stride, scene):
    """Armature '02_01' whose every bone copies the transforms of its namesake on a control rig
    ('controls', keyed with the run): the walk keyed on its own bones never shows there. A mesh
    deforms by it."""
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    controls = walk.copy()
    controls.name = "controls"
    scene.collection.objects.link(controls)
    bpy.context.view_layer.update()
    stride.compat.assign(controls, bpy.data.actions["02_03"])
    for pb in walk.pose.bones:
        c = pb.constraints.new("COPY_TRANSFORMS")
        c.target, c.subtarget = controls, pb.name
    mesh = bpy.data.meshes.new("body")
    heads = [b.head_local for b in walk.data.bones]
    mesh.from_pydata([tuple(h) for h in heads], [], [])
    body = bpy.data.objects.new("body", mesh)
    scene.collection.objects.link(body)
    for k, b in enumerate(walk.data.bones):
        body.vertex_groups.new(name=b.name).add([k], 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = walk
    body.parent = walk
    bpy.context.view_layer.objects.active = walk
    bpy.context.view_layer.update()
    return walk, controls, body


def test_a_bake_of_constrained_bones_plays_on_a_copy_without_them(scene, stride):
    walk, _, body = _constrained(stride, scene)
    src = walk.animation_data.action
    options = stride.options.TransitionOptions(target_action="02_03", source_time=1.5, target_time=0.4,
                                               lock_feet=False)
    with stride.jobs.core_warnings() as warned:
        baked, clip = stride.jobs.bake_transition(walk, options=options)
    player = bpy.data.objects[baked[stride.jobs.PLAYS_ON]]
    assert player.name == "02_01 (Stride)"
    assert any(player.name in w and "COPY_TRANSFORMS" in w for w in warned), warned
    # The user's rig is unchanged: its action, its constraints.
    assert walk.animation_data.action == src
    assert all(len(pb.constraints) == 1 for pb in walk.pose.bones)
    assert all(len(pb.constraints) == 0 for pb in player.pose.bones)
    assert player.data == walk.data and player.animation_data.action == baked
    twin = bpy.data.objects["body (Stride)"]
    assert twin.data == body.data and twin.modifiers[0].object == player and twin.parent == player
    # The copy shows the baked clip: its world heads are the clip's FK (Blender's own axis conversion).
    _, positions = clip.fk()
    to_blender = np.array(axis_conversion(from_forward="-Z", from_up="Y").to_4x4())[:3, :3]
    names = [pb.name for pb in player.pose.bones]
    order = [clip.names.index(n) for n in names]
    scene = bpy.context.scene
    world = np.array(player.matrix_world)
    for k in range(0, clip.n_frames, 7):
        scene.frame_set(1 + k)
        got = np.array([(world @ np.array(pb.matrix))[:3, 3] for pb in player.pose.bones])
        want = positions[k, order] @ to_blender.T
        bad = np.abs(got - want).max(axis=1) > 1e-5 * clip.height
        assert not bad.any(), (k, [names[i] for i in np.flatnonzero(bad)])


def test_a_bake_that_shows_undoes_and_repeats_with_new_names(scene, stride):
    walk, _, _ = _constrained(stride, scene)
    bpy.ops.ed.undo_push(message="before")
    kwargs = {"source_time": 1.5, "target_action": "02_03", "target_time": 0.4, "lock_feet": False}
    assert bpy.ops.stride.bake_transition("EXEC_DEFAULT", True, **kwargs) == {"FINISHED"}
    assert "02_01 (Stride)" in bpy.data.objects and "body (Stride)" in bpy.data.objects
    bpy.ops.ed.undo()
    assert "02_01 (Stride)" not in bpy.data.objects and "body (Stride)" not in bpy.data.objects
    assert not [a for a in bpy.data.actions if a.name.startswith("02_01 >")]
    walk = bpy.data.objects["02_01"]
    assert walk.animation_data.action.name == "02_01"
    bpy.context.view_layer.objects.active = walk
    for _ in range(2):
        assert bpy.ops.stride.bake_transition(**kwargs) == {"FINISHED"}
    made = {"02_01 (Stride)", "02_01 (Stride).001", "body (Stride)", "body (Stride).001"}
    assert made <= set(bpy.data.objects.keys())
    assert all(len(pb.constraints) == 1 for pb in bpy.data.objects["02_01"].pose.bones)


def test_cli_lock_feet_on_a_constrained_rig_says_where_the_bake_plays(scene, stride, tmp_path, capsys):
    _constrained(stride, scene)
    _extras(stride, bpy.data.objects["02_01"], bpy.data.actions["02_01"], 3)
    path, out = tmp_path / "rig.blend", tmp_path / "locked.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}
    assert stride.cli.main(["lock-feet", str(path), "--armature", "02_01", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "plays on '02_01 (Stride)'" in err, err
    bpy.ops.wm.open_mainfile(filepath=str(out))
    player, walk = bpy.data.objects["02_01 (Stride)"], bpy.data.objects["02_01"]
    baked = player.animation_data.action
    assert baked.name.startswith("02_01 (feet locked)") and walk.animation_data.action.name == "02_01"
    bag = _bag(stride, baked, player)
    for path_, index in CARRIED:
        assert bag.fcurves.find(path_, index=index) is not None, path_


def test_constraints_on_bones_the_bake_keeps_still_leave_it_on_the_rig(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    # Bones whose keys never turn in either take (CMU's static joints), as a rig's deform bones read
    # from keys that never set them: constrained, they do not stop the bake from showing on the rig.
    still = []
    for pb in walk.pose.bones:
        path = f'pose.bones["{pb.name}"].rotation_quaternion'
        spans = [np.ptp(stride.compat.read_keys(fc)[:, 1])
                 for name in ("02_01", "02_03") for fc in stride.compat.fcurves(bpy.data.actions[name],
                 stride.compat.action_slot(bpy.data.actions[name], walk)) if fc.data_path == path]
        if spans and max(spans) == 0.0:
            still.append(pb.name)
    assert still
    for name in still:
        c = walk.pose.bones[name].constraints.new("COPY_ROTATION")
        c.target, c.subtarget = walk, "Hips"
    # Read from keys: Auto would read the constrained bones as Blender plays them, turning with Hips.
    with stride.jobs.core_warnings() as warned:
        baked, _ = stride.jobs.bake_transition(walk, options=stride.options.TransitionOptions(
            target_action="02_03", source_time=1.5, target_time=0.4, lock_feet=False, source="KEYS"))
    assert walk.animation_data.action == baked and baked.get(stride.jobs.PLAYS_ON) is None
    assert not [o for o in bpy.data.objects if o.name.endswith("(Stride)")]
    assert not any("plays on" in w for w in warned)


def test_ik_chains_and_drivers_override_the_bones_they_reach(scene, stride):
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    ik = walk.pose.bones["LeftFoot"].constraints.new("IK")
    ik.target, ik.subtarget, ik.chain_count = walk, "Hips", 2
    muted = walk.pose.bones["RightFoot"].constraints.new("COPY_ROTATION")
    muted.target, muted.subtarget, muted.mute = walk, "Hips", True
    limit = walk.pose.bones["RightLeg"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x = True
    driver = walk.driver_add('pose.bones["Head"].rotation_quaternion', 1).driver
    driver.expression = "0.1"
    bpy.context.view_layer.update()
    names = [pb.name for pb in walk.pose.bones]
    showing = importlib.import_module(f"{stride.__name__}.showing")
    found = {(o.bone, o.kind) for o in showing.overrides(walk, names)}
    # The IK's two bones (the foot and its parent, not the thigh), the driven head; not the muted
    # constraint nor the limit.
    assert found == {("LeftFoot", "IK"), ("LeftLeg", "IK"), ("Head", "DRIVER")}
