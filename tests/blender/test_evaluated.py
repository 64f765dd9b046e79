"""Rigs whose deform bones follow keyed controls (issue 23): a Rigify human and a small IK rig
(tests/blender/rigs.py). Stride reads what Blender plays through constraints and IK (the read
source), checked against Blender's own evaluation read bone by bone, frame by frame."""
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

KINDS = ["rigify", "small_ik"]


def test_the_rigs_move_their_deform_bones_by_controls(stride, rig_folder):
    rig = rigs.open_rig("rigify", rig_folder)
    bones = rig.data.bones
    deform = [b for b in bones if b.use_deform]
    assert len(deform) > 100 and len(bones) > 3 * len(deform)  # DEF bones among ORG, MCH and controls
    assert not bones["foot_ik.L"].use_deform and not bones["torso"].use_deform
    assert {c.type for c in rig.pose.bones["DEF-thigh.L"].constraints} >= {"COPY_TRANSFORMS"}
    assert rig.pose.bones["thigh_parent.L"]["IK_FK"] == 0.0  # IK
    keyed = {fc.data_path for fc in stride_curves(stride, rig)}
    assert keyed == {f'pose.bones["{n}"].location' for n in ("torso", "foot_ik.L", "foot_ik.R")}
    small = rigs.open_rig("small_ik", rig_folder)
    bones = small.data.bones
    assert [b.name for b in bones if not b.use_deform] == ["root", "foot_ik.L", "foot_ik.R"]
    ik = small.pose.bones["shin.L"].constraints[0]
    assert (ik.type, ik.subtarget, ik.chain_count) == ("IK", "foot_ik.L", 2)
    assert not any(b.name.startswith(("thigh", "shin", "foot.")) and "location" in fc.data_path
                   for fc in stride_curves(stride, small) for b in bones if f'"{b.name}"' in fc.data_path)


def stride_curves(stride, obj):
    action = obj.animation_data.action
    return stride.compat.fcurves(action, stride.compat.action_slot(action, obj))


@pytest.mark.parametrize("kind", KINDS)
def test_detect_footsteps_reads_what_the_rig_plays(kind, stride, rig_folder, capfd):
    obj = rigs.open_rig(kind, rig_folder)
    scene = bpy.context.scene
    scene.frame_set(37)
    action = obj.animation_data.action
    slot = getattr(obj.animation_data, "action_slot", None)
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    said = capfd.readouterr().out
    assert f"read {action.name!r}: evaluated (constraints or drivers move" in said, said
    # The user's action, slot, NLA switch and frame are as they were.
    assert obj.animation_data.action == action and scene.frame_current == 37
    assert getattr(obj.animation_data, "action_slot", None) == slot and obj.animation_data.use_nla
    marks = steps_of(action)
    names = [n for _, n in marks]
    assert all(a != b for a, b in itertools.pairwise(names)), marks
    assert min(names.count("FootDown_L"), names.count("FootDown_R")) >= 2, marks
    # The body map picks the deform legs' ankles, never the IK controllers.
    left, right = rigs.ANKLES[kind]
    assert (obj.stride.left_foot, obj.stride.right_foot) == (left, right)
    first, last = (round(f) for f in action.frame_range)
    frames = range(first, last + 1)
    heights = rigs.world_heads(obj, [left, right], frames)[..., 2]  # Blender's own evaluation
    lowest = heights.min(axis=0)
    for frame, name in marks:
        k = 0 if name.endswith("_L") else 1
        assert heights[frame - first, k] - lowest[k] <= 0.03, (frame, name, heights[frame - first, k])


def nearest(m: np.ndarray) -> np.ndarray:
    """The rotation nearest a matrix, U V^T of its SVD. Blender's float32 matrices are rotations only
    to ~5e-5: a tilted bone's rest `matrix_local` and IK solutions are that far off orthogonal, and
    stretchy bones scale theirs."""
    u, _, vt = np.linalg.svd(m)
    return u @ vt


def blender_pose(obj, names: list[str], frames) -> tuple[np.ndarray, np.ndarray]:
    """(world turns from rest [F, J, 3, 3], heads [F, J, 3]) of the bones in the armature's space,
    read bone by bone from `pose_bone.matrix` after `frame_set`: Blender's evaluation."""
    scene = bpy.context.scene
    turns = np.empty((len(frames), len(names), 3, 3))
    heads = np.empty((len(frames), len(names), 3))
    rest = [nearest(np.array(obj.data.bones[n].matrix_local, dtype=np.float64)[:3, :3]) for n in names]
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        for j, n in enumerate(names):
            m = np.array(obj.pose.bones[n].matrix, dtype=np.float64)
            turns[i, j] = nearest(m[:3, :3]) @ rest[j].T
            heads[i, j] = m[:3, 3]
    return turns, heads


def matrices(q: np.ndarray) -> np.ndarray:
    """[..., 3, 3] rotation matrices of unit quaternions [..., 4] (w, x, y, z), the textbook formula."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)], axis=-2)


@pytest.mark.parametrize("kind", KINDS)
def test_an_evaluated_read_is_blenders_evaluation(kind, stride, rig_folder):
    obj = rigs.open_rig(kind, rig_folder)
    clip, timing = stride.bridge.read_action(obj, source="EVALUATED")
    deform = {b.name for b in obj.data.bones if b.use_deform}
    assert set(clip.names) == deform  # the deform skeleton: no root, no controllers
    parent = {n: clip.names[p] if p >= 0 else None for n, p in zip(clip.names, clip.parents, strict=True)}
    if kind == "rigify":  # DEF bones hang under ORG bones: each joint under its deform twin's joint
        assert parent["DEF-thigh.L"] == "DEF-spine" and parent["DEF-foot.L"] == "DEF-shin.L.001"
        assert parent["DEF-spine"] is None
    else:
        assert parent["thigh.L"] == "pelvis" and parent["pelvis"] is None
    frames = np.round(timing.frame(clip.times)).astype(int)
    assert frames[0] == 1 and len(frames) == bpy.context.scene.frame_end
    turns, heads = blender_pose(obj, list(clip.names), frames)
    # The clip is in BVH axes (Blender's importer's conversion, -Z forward, Y up): C^T x.
    c = np.array(axis_conversion(from_forward="-Z", from_up="Y").to_3x3())
    want_turn = c.T @ turns @ c
    want_pos = heads @ c
    rot, pos = clip.fk()
    got = matrices(rot)
    height = float(np.ptp(want_pos[0], axis=0).max())
    err = np.linalg.norm(got - want_turn, axis=(-2, -1))
    assert err.max() < 2e-5, (clip.names[int(np.argmax(err.max(axis=0)))], err.max())
    off = np.linalg.norm(pos - want_pos, axis=-1)
    assert off.max() < 1e-5 * height, (clip.names[int(np.argmax(off.max(axis=0)))], off.max())


@pytest.mark.parametrize("kind", KINDS)
def test_auto_reads_the_rig_and_keys_say_what_they_miss(kind, stride, rig_folder):
    obj = rigs.open_rig(kind, rig_folder)
    used, why = stride.bridge.read_source(obj, source="AUTO")
    assert used == "EVALUATED" and "constraints or drivers move" in why
    used, why = stride.bridge.read_source(obj, source="KEYS")
    assert used == "KEYS" and "read Evaluated" in why


def test_auto_reads_keys_on_a_plain_bvh_import(scene, stride, capfd):
    scene.render.fps = 120
    obj = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    assert stride.bridge.read_source(obj)[0] == "KEYS"
    keys, _ = stride.bridge.read_action(obj, source="AUTO")
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    assert "read '02_01': keys (no constraint, IK or driver moves its bones)" in capfd.readouterr().out
    # The evaluated read of a plain import is its keys' clip, within float32.
    played, _ = stride.bridge.read_action(obj, source="EVALUATED")
    assert played.names == keys.names and np.array_equal(played.parents, keys.parents)
    _, pos_k = keys.fk()
    _, pos_e = played.fk()
    assert np.abs(pos_k - pos_e).max() < 1e-5 * keys.height


def test_reading_another_action_puts_back_the_users_action_and_frame(stride, rig_folder):
    obj = rigs.open_rig("small_ik", rig_folder)
    walk = obj.animation_data.action
    still = walk.copy()
    still.name = "still"
    obj.animation_data.action = still
    if hasattr(obj.animation_data, "action_slot"):
        obj.animation_data.action_slot = still.slots[0]
    bpy.context.scene.frame_set(12)
    clip, _ = stride.bridge.read_action(obj, walk, source="EVALUATED")
    assert obj.animation_data.action == still and bpy.context.scene.frame_current == 12
    assert clip.name == walk.name
    # A bad source is refused before anything changes.
    with pytest.raises(ValueError, match="read source"):
        stride.bridge.read_action(obj, walk, source="BOTH")
    assert obj.animation_data.action == still


def test_the_cli_names_the_source(stride, rig_folder, tmp_path, capfd):
    path = rigs.saved("small_ik", rig_folder)
    capfd.readouterr()
    assert stride.cli.main(["inspect", str(path), "--source", "evaluated"]) == 0
    out = capfd.readouterr().out
    assert "stride inspect: read '09_12 ik walk': evaluated (Source: Evaluated)" in out, out
    assert "foot.L" in out and "foot_ik" not in out
    assert stride.cli.main(["events", str(path), "--out", str(tmp_path / "e.blend")]) == 0
    out = capfd.readouterr().out
    assert "stride events: read '09_12 ik walk': evaluated (constraints or drivers move" in out, out


@pytest.mark.parametrize("kind", KINDS)
def test_a_transition_of_what_the_rig_plays_plays_on_a_rehung_copy(kind, stride, rig_folder):
    """Read as Blender plays them, the deform bones hang under their nearest deform ancestors, not
    the rig's parents: the bake plays on a copy whose own armature data hangs them so; before the
    switch it shows what the rig plays (Blender's evaluation of both, 1e-5 of height)."""
    obj = rigs.open_rig(kind, rig_folder)
    walk = obj.animation_data.action
    again = walk.copy()
    again.name = "walk again"
    objects, data = set(bpy.data.objects), obj.data
    parents = {b.name: b.parent.name if b.parent else None for b in data.bones}
    with stride.jobs.core_warnings() as warned:
        baked, clip = stride.jobs.bake_transition(obj, options=stride.options.TransitionOptions(
            source_action=walk.name, target_action=again.name, source_time=2.0, target_time=1.0,
            lock_feet=False))
    copy = bpy.data.objects[baked[stride.jobs.PLAYS_ON]]
    assert copy not in objects and copy.data is not data and copy.animation_data.action == baked
    assert any("re-parented" in w for w in warned), warned
    # The user's rig: its action, its bones' parents, unchanged.
    assert obj.animation_data.action == walk and obj.data == data
    assert {b.name: b.parent.name if b.parent else None for b in data.bones} == parents
    timing = stride.bridge.action_timing(obj, walk)
    frames = range(round(timing.start), math.ceil(timing.frame(2.0)))  # before the switch at 2 s
    shown = rigs.world_heads(copy, clip.names, frames)
    played = rigs.world_heads(obj, clip.names, frames)
    assert np.abs(shown - played).max() <= 1e-5 * clip.height, np.abs(shown - played).max()


def test_other_objects_sit_out_the_read_and_come_back_as_they_were(stride, rig_folder, monkeypatch):
    """The read evaluates only the rig and what it depends on: a mesh it deforms sits out (disabled
    in viewports for the read), an animated empty a bone's constraint follows still moves it, and
    every object comes back enabled, hidden and selected as it was, also when the read fails."""
    obj = rigs.open_rig("small_ik", rig_folder)
    scene, view_layer = bpy.context.scene, bpy.context.view_layer
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.2, location=(0.0, 0.0, 1.0))
    body = bpy.context.active_object
    body.modifiers.new("Armature", "ARMATURE").object = obj
    body.vertex_groups.new(name="spine").add(list(range(len(body.data.vertices))), 1.0, "REPLACE")
    bpy.ops.object.empty_add(location=(0.0, 0.0, 0.0))
    turner = bpy.context.active_object
    for frame, angle in ((1, 0.0), (60, 1.2)):
        turner.rotation_euler = (0.0, angle, 0.3 * angle)
        turner.keyframe_insert("rotation_euler", frame=frame)
    follow = obj.pose.bones["spine"].constraints.new("COPY_ROTATION")
    follow.target = turner
    bpy.ops.object.empty_add(location=(1.0, 0.0, 0.0))
    put_away = bpy.context.active_object
    put_away.hide_viewport = True
    body.select_set(True)
    turner.select_set(False)
    view_layer.objects.active = obj
    obj.select_set(True)
    view_layer.update()
    before = {o.name: (o.hide_viewport, o.hide_get(), o.select_get()) for o in scene.objects}

    def as_before():
        return {o.name: (o.hide_viewport, o.hide_get(), o.select_get()) for o in scene.objects} == before

    seen = []

    def look(scene, *args):
        seen.append((body.hide_viewport, turner.hide_viewport))

    bpy.app.handlers.frame_change_post.append(look)
    try:
        clip, timing = stride.bridge.read_action(obj, source="EVALUATED")
    finally:
        bpy.app.handlers.frame_change_post.remove(look)
    assert as_before() and view_layer.objects.active == obj
    assert len(seen) == clip.n_frames + 1 and set(seen[:-1]) == {(True, True)}, seen  # then the user's frame
    frames = np.round(timing.frame(clip.times)).astype(int)
    turns, heads = blender_pose(obj, list(clip.names), frames)  # everything shown
    c = np.array(axis_conversion(from_forward="-Z", from_up="Y").to_3x3())
    rot, pos = clip.fk()
    err = np.linalg.norm(matrices(rot) - c.T @ turns @ c, axis=(-2, -1))
    assert err.max() < 2e-5, (clip.names[int(np.argmax(err.max(axis=0)))], err.max())
    off = np.linalg.norm(pos - heads @ c, axis=-1)
    assert off.max() < 1e-5 * clip.height, off.max()
    spine = clip.names.index("spine")
    assert np.linalg.norm(turns[-1, spine] - turns[0, spine]) > 0.5  # the empty turns the spine
    # A read that fails halfway puts everything back too.
    other = obj.animation_data.action.copy()

    def fail(*args, **kwargs):
        raise RuntimeError("failed halfway")

    monkeypatch.setattr(stride.compat, "assign", fail)
    with pytest.raises(RuntimeError, match="failed halfway"):
        stride.bridge.read_action(obj, other, source="EVALUATED")
    assert as_before()
