"""Stride's BVH import against Blender's own importer, on the real CMU files."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools
import shutil
from typing import Any

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from fixtures import CMU, cmu_path
from test_bridge import assert_same_motion

from core import bvh, units
from core.clip import Clip


def stride_import(path, undo=False, **options):
    before = set(bpy.data.objects)
    if undo:
        bpy.ops.ed.undo_push(message="before import")
    args = ("EXEC_DEFAULT", True) if undo else ()
    assert bpy.ops.stride.import_bvh(*args, filepath=str(path), **options) == {"FINISHED"}
    (obj,) = set(bpy.data.objects) - before
    return obj


def bone_table(obj):
    bones = obj.data.bones
    names = [b.name for b in bones]
    parents = [b.parent.name if b.parent else None for b in bones]
    heads = np.array([tuple(b.head_local) for b in bones])
    tails = np.array([tuple(b.tail_local) for b in bones])
    rest = np.array([[list(r) for r in b.matrix_local] for b in bones])
    return names, parents, heads, tails, rest


def posed(obj, frame):
    scene = bpy.context.scene
    assert scene is not None
    scene.frame_set(frame)
    return np.array([[list(r) for r in pb.matrix] for pb in obj.pose.bones])


# Each unit preset against Blender's importer at the same scale: at 0.01, zero-length joints
# lengthened by scale / 10 sit right at the importer's 0.001 threshold, decided in float32.
PRESETS = {"NONE": 1.0, "CM_TO_METERS": 0.01, "CMU_TO_METERS": units.CMU_UNIT_M}


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("name", sorted(CMU))
def test_stride_import_builds_blenders_armature_and_reads_back_as_the_file(name, preset, scene, stride):
    scene.render.fps = 120
    theirs = blender_import(cmu_path(name), rotate_mode="QUATERNION", global_scale=PRESETS[preset])
    ours = stride_import(cmu_path(name), scale_preset=preset)
    want = bvh.load(cmu_path(name))
    h = want.height * PRESETS[preset]
    n1, p1, heads1, tails1, rest1 = bone_table(theirs)
    n2, p2, heads2, tails2, rest2 = bone_table(ours)
    assert n2 == n1 and p2 == p1
    assert [b.use_connect for b in ours.data.bones] == [b.use_connect for b in theirs.data.bones]
    assert np.abs(heads2 - heads1).max() <= 1e-5 * h
    assert np.abs(tails2 - tails1).max() <= 1e-5 * h
    assert np.abs(rest2[:, :3, :3] - rest1[:, :3, :3]).max() <= 1e-5  # rolls included
    assert list(ours.matrix_world) == list(theirs.matrix_world)
    for frame in (1, 2, want.n_frames // 2, want.n_frames):
        a, b = posed(theirs, frame), posed(ours, frame)
        assert np.abs(a[:, :3, :3] - b[:, :3, :3]).max() <= 1e-5, frame
        assert np.abs(a[:, :3, 3] - b[:, :3, 3]).max() <= 1e-5 * h, frame
    got = stride.bridge.action_to_clip(ours)
    assert_same_motion(got, want)
    assert got.channels == want.channels


@pytest.mark.parametrize("options", [
    {"rotate_mode": "NATIVE"}, {"rotate_mode": "ZXY", "axis_forward": "Y", "axis_up": "Z"},
    {"global_scale": 100.0, "frame_start": 10}, {"use_fps_scale": True},
    {"scale_preset": "CMU_TO_METERS"}, {"rotate_mode": "XYZ", "axis_forward": "-Y", "axis_up": "-X"},
], ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_stride_import_options_read_back_exactly(options, scene, stride):
    obj = stride_import(cmu_path("131_01"), **options)
    want = bvh.load(cmu_path("131_01"))
    got = stride.bridge.action_to_clip(obj)  # the stored settings say how to read it
    # Stride writes Euler angles computed in float64: no gimbal-lock loss, one tolerance for all.
    assert_same_motion(got, want)
    action = obj.animation_data.action
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    first = min(fc.keyframe_points[0].co[0] for fc in curves)
    assert first == options.get("frame_start", 1)


def euler_keys(stride, obj):
    action = obj.animation_data.action
    return {(fc.data_path, fc.array_index): stride.compat.read_keys(fc)[:, 1]
            for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
            if fc.data_path.endswith("rotation_euler")}


@pytest.mark.parametrize("name", sorted(CMU))
def test_native_euler_keys_are_continuous_as_blenders_importer_keys_them(name, scene, stride):
    # Through gimbal lock (09_12's hips) the principal Euler solution jumps by about pi; Blender's
    # importer keys the solution nearest the previous frame's. Its keys differ from ours only by
    # its float32 maths near lock (2e-3 rad on 131_02's thumb), far below a switch of solution.
    theirs = euler_keys(stride, blender_import(cmu_path(name), rotate_mode="NATIVE"))
    ours = euler_keys(stride, stride_import(cmu_path(name), rotate_mode="NATIVE"))
    assert ours.keys() == theirs.keys()
    for key, want in theirs.items():
        got = ours[key]
        assert np.abs(got - want).max() <= 5e-3, key
        assert np.abs(np.diff(got)).max(initial=0.0) <= np.abs(np.diff(want)).max(initial=0.0) + 5e-3, key


def keys_and_handles(fc):
    kp = fc.keyframe_points
    arrays = []
    for prop in ("co", "handle_left", "handle_right"):
        buf = np.empty(2 * len(kp), dtype=np.float32)
        kp.foreach_get(prop, buf)
        arrays.append(buf.reshape(-1, 2))
    return arrays


def test_stride_import_keys_bezier_with_the_handles_blender_computes(scene, stride):
    # Blender's importer keys BEZIER and leaves every handle at (0, 0), which evaluates wrongly
    # between keys; Stride's keys must be Blender's own valid auto-clamped handles.
    obj = stride_import(cmu_path("02_01"))
    action = obj.animation_data.action
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    assert len(curves) == 31 * 4 + 3
    for fc in curves:
        modes = {kp.interpolation for kp in fc.keyframe_points[:3]} | {fc.keyframe_points[-1].interpolation}
        assert modes == {"BEZIER"}, fc.data_path
        co, left, right = keys_and_handles(fc)
        # Handles sit between the neighbouring keys in time, on both sides of their key.
        assert (left[1:, 0] < co[1:, 0]).all() and (left[1:, 0] > co[:-1, 0]).all(), fc.data_path
        assert (right[:-1, 0] > co[:-1, 0]).all() and (right[:-1, 0] < co[1:, 0]).all(), fc.data_path
        # Half a frame after each key the curve stays within its four nearest keys (auto-clamped
        # handles never leave their neighbours' range); zero handles swing far outside it.
        values = co[:, 1].astype(np.float64)
        mid = np.array([fc.evaluate(float(f) + 0.5) for f in co[1:-2, 0]])
        hull = np.stack([values[:-3], values[1:-2], values[2:-1], values[3:]])
        slack = 1e-5 * max(1.0, float(np.abs(values).max()))
        inside = (mid >= hull.min(axis=0) - slack) & (mid <= hull.max(axis=0) + slack)
        assert inside.all(), fc.data_path
        # And they are what Blender computes for these keys: recomputing changes nothing.
        fc.update()
        again = keys_and_handles(fc)
        np.testing.assert_array_equal(again[1], left, err_msg=fc.data_path)
        np.testing.assert_array_equal(again[2], right, err_msg=fc.data_path)


@pytest.mark.parametrize("name", sorted(CMU))
def test_import_then_export_gives_the_file_back(name, scene, stride, tmp_path):
    # Euler keys for 09_12, whose hips pass through gimbal lock; quaternion keys for the rest.
    obj = stride_import(cmu_path(name), rotate_mode="NATIVE" if name == "09_12" else "QUATERNION")
    out = tmp_path / "again.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out)) == {"FINISHED"}
    assert obj.name in bpy.data.objects
    want = bvh.load(cmu_path(name))
    assert_same_motion(bvh.load(out), want)
    assert bvh.load(out).channels == want.channels
    np.testing.assert_allclose(bvh.load(out).offsets, want.offsets, atol=1e-6 * want.height)


def test_undo_after_import_removes_armature_and_action(scene):
    blender_import(cmu_path("02_03"), undo=True)
    objects = sorted(o.name for o in bpy.data.objects)
    actions = sorted(a.name for a in bpy.data.actions)
    armatures = sorted(a.name for a in bpy.data.armatures)
    bpy.ops.ed.undo_push(message="before stride import")
    assert bpy.ops.stride.import_bvh("EXEC_DEFAULT", True, filepath=str(cmu_path("09_01"))) == {"FINISHED"}
    assert "09_01" in bpy.data.objects
    bpy.ops.ed.undo()
    assert sorted(o.name for o in bpy.data.objects) == objects
    assert sorted(a.name for a in bpy.data.actions) == actions
    assert sorted(a.name for a in bpy.data.armatures) == armatures


def test_malformed_file_reports_file_and_line_and_adds_nothing(scene, tmp_path):
    bad = tmp_path / "bad.bvh"
    text = cmu_path("09_01").read_text().splitlines()
    row = text[200].split()
    row[3] = "nan"
    text[200] = " ".join(row)
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(RuntimeError, match=r"bad\.bvh, line 201: 'nan' is not a finite number"):
        bpy.ops.stride.import_bvh(filepath=str(bad))
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0 and len(bpy.data.armatures) == 0


def test_folder_import_continues_past_a_bad_file(scene, tmp_path):
    shutil.copy(cmu_path("09_01"), tmp_path / "a_good.bvh")
    (tmp_path / "b_bad.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    shutil.copy(cmu_path("02_03"), tmp_path / "c_good.bvh")
    files = [{"name": "a_good.bvh"}, {"name": "b_bad.bvh"}, {"name": "c_good.bvh"}]
    result = bpy.ops.stride.import_bvh(directory=str(tmp_path), files=files)
    assert result == {"FINISHED"}
    assert sorted(o.name for o in bpy.data.objects) == ["a_good", "c_good"]
    assert sorted(a.name for a in bpy.data.actions) == ["a_good", "c_good"]


def test_drag_and_drop_handler_is_registered_for_bvh():
    handler = bpy.types.STRIDE_FH_bvh
    assert handler.bl_import_operator == "stride.import_bvh"
    assert handler.bl_file_extensions == ".bvh"


def test_cli_import_writes_a_blend_and_skips_bad_files(scene, stride, tmp_path, capsys):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    out = tmp_path / "out.blend"
    code = stride.cli.main(["import", str(cmu_path("02_01")), str(bad), str(cmu_path("02_03")),
                            "--out", str(out), "--single-armature"])
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.bvh, line 4: OFFSET needs 3 numbers, found 2" in err
    bpy.ops.wm.open_mainfile(filepath=str(out))
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert [o.name for o in arms] == ["02_01"]
    assert sorted(a.name for a in bpy.data.actions) == ["02_01", "02_03"]
    assert stride.cli.main(["import", str(cmu_path("09_01")), "--out", str(tmp_path / "one.blend")]) == 0
    assert (tmp_path / "one.blend").is_file()


@pytest.mark.parametrize("other, says", [
    ("131_01", "has no bone 'LeftHip'"),
    # 02 and 09 share bone names and parents, not bone lengths: 09's motion on 02's bones would
    # read back and export with 02's offsets.
    ("09_01", "another skeleton"),
])
def test_cli_single_armature_refuses_a_different_skeleton(other, says, scene, stride, tmp_path, capsys):
    out = tmp_path / "mixed.blend"
    code = stride.cli.main(["import", str(cmu_path("02_01")), str(cmu_path(other)), "--out", str(out),
                            "--single-armature"])
    assert code == 1
    assert says in capsys.readouterr().err
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert [a.name for a in bpy.data.actions] == ["02_01"]


def test_single_armature_reads_each_action_in_its_own_files_layout(scene, stride, tmp_path):
    # Same skeleton, another rate and channel order: each action reads back (and so exports) as
    # its own file, not as the armature's first one.
    text = cmu_path("02_03").read_text()
    slow = tmp_path / "02_03_60fps.bvh"
    zyx, xzy = "CHANNELS 3 Zrotation Yrotation Xrotation", "CHANNELS 3 Xrotation Zrotation Yrotation"
    slow.write_text(text.replace("Frame Time: .0083333", "Frame Time: .0166667").replace(zyx, xzy, 1))
    assert bvh.load(slow).channels != bvh.load(cmu_path("02_01")).channels
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path("02_01"), slow], single_armature=True)
    assert not failed and len(done) == 2 and done[0][0] == done[1][0]
    obj = done[0][0]
    for (_, action), path in zip(done, (cmu_path("02_01"), slow), strict=True):
        want = bvh.load(path)
        got = stride.bridge.action_to_clip(obj, action)
        assert got.fps == want.fps
        assert_same_motion(got, want)
        assert got.channels == want.channels
    assert stride.bridge.action_timing(obj, done[1][1]).fps == 60.0


def test_failed_key_writing_leaves_no_action(scene, stride):
    def interrupt(fraction):
        if fraction > 0.5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stride.importer.import_bvh(bpy.context, cmu_path("02_03"), progress=interrupt)
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0 and len(bpy.data.armatures) == 0
    obj = stride_import(cmu_path("02_03"))
    actions = set(bpy.data.actions)
    with pytest.raises(KeyboardInterrupt):
        stride.bridge.clip_to_action(bvh.load(cmu_path("02_03")), obj, "again", progress=interrupt)
    assert set(bpy.data.actions) == actions


def test_cli_imports_a_folder_one_armature_per_file_past_a_bad_one(scene, stride, tmp_path, capsys):
    takes = tmp_path / "takes"
    takes.mkdir()
    shutil.copy(cmu_path("09_01"), takes / "a_good.bvh")
    (takes / "b_bad.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    shutil.copy(cmu_path("02_03"), takes / "c_good.bvh")
    (takes / "notes.txt").write_text("not a take")
    out = tmp_path / "takes.blend"
    assert stride.cli.main(["import", str(takes), "--out", str(out)]) == 1
    assert "b_bad.bvh" in capsys.readouterr().err
    bpy.ops.wm.open_mainfile(filepath=str(out))
    arms = sorted((o.name, o.animation_data.action.name) for o in bpy.data.objects if o.type == "ARMATURE")
    assert arms == [("a_good", "a_good"), ("c_good", "c_good")]
    for name, source in (("a_good", "09_01"), ("c_good", "02_03")):
        assert_same_motion(stride.bridge.action_to_clip(bpy.data.objects[name]), bvh.load(cmu_path(source)))


def test_empty_take_reports_and_adds_nothing(scene, tmp_path):
    empty = tmp_path / "empty.bvh"
    text = cmu_path("09_01").read_text().split("MOTION")[0]
    empty.write_text(text + "MOTION\nFrames: 0\nFrame Time: 0.0083333\n")
    with pytest.raises(RuntimeError, match=r"empty\.bvh.*Frames: 0"):
        bpy.ops.stride.import_bvh(filepath=str(empty))
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0 and len(bpy.data.armatures) == 0


def test_import_progress_rises_from_zero_through_parsing_and_keys(scene, stride):
    seen: list[float] = []
    stride.importer.import_bvh(bpy.context, cmu_path("02_03"), progress=seen.append)
    assert seen[0] == 0.0 and seen[1] == pytest.approx(1 / 3)
    assert all(b >= a for a, b in itertools.pairwise(seen)) and 0.9 < seen[-1] <= 1.0
    assert len(seen) > 10  # moves per bone, not just at the ends


def test_file_menus_offer_stride_import_and_export(stride):
    class Layout:
        def __init__(self):
            self.items = []

        def operator(self, idname, text=""):
            self.items.append((idname, text))

    menus: list[tuple[Any, Any, str]] = [
        (bpy.types.TOPBAR_MT_file_import, stride.operators.menu_import, "stride.import_bvh"),
        (bpy.types.TOPBAR_MT_file_export, stride.operators.menu_export, "stride.export_bvh")]
    for menu, draw, idname in menus:
        assert draw in menu._dyn_ui_initialize()  # what the menu draws, appended functions included
        holder = type("Menu", (), {"layout": Layout()})()
        draw(holder, bpy.context)
        assert holder.layout.items == [(idname, "Motion Capture (.bvh) - Stride")]


def test_single_armature_takes_a_file_with_fewer_joints_and_reads_it_back_as_that_file(
        scene, stride, tmp_path):
    # The same skeleton without its last joint (a leaf): keyed onto the full armature, its action
    # still reads back and exports with its own joints and channels.
    full = bvh.load(cmu_path("02_03"))
    keep = list(range(full.n_joints - 1))
    ends = [k for k, p in enumerate(full.end_parents.tolist()) if p in keep]
    fewer = Clip([full.names[j] for j in keep], full.parents[keep], full.offsets[keep],
                 full.rotations[:, keep], full.positions[:, keep], full.fps,
                 channels=[full.channels[j] for j in keep], end_parents=full.end_parents[ends],
                 end_offsets=full.end_offsets[ends])
    path = tmp_path / "fewer.bvh"
    bvh.save(fewer, path)
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path("02_01"), path], single_armature=True)
    assert not failed and done[0][0] == done[1][0]
    obj, action = done[1]
    want = bvh.load(path)
    got = stride.bridge.action_to_clip(obj, action)
    assert got.names == want.names and got.channels == want.channels
    assert_same_motion(got, want)
    out = tmp_path / "again.bvh"
    stride.jobs.export_bvh(obj, out, options=stride.options.ExportOptions(action=action.name))
    assert bvh.load(out).channels == want.channels
    assert_same_motion(bvh.load(out), want)


def test_blender_armature_takes_stride_import_at_its_scale(scene, stride):
    # An armature from Blender's importer stores no settings: the import's own scale applies.
    obj = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION", global_scale=0.01)
    _, action = stride.importer.import_bvh(bpy.context, cmu_path("02_03"), global_scale=0.01, target=obj)
    got = stride.bridge.action_to_clip(obj, action, global_scale=0.01)
    assert_same_motion(got, bvh.load(cmu_path("02_03")))


def test_single_joint_file_goes_onto_its_own_armature(scene, stride, tmp_path):
    path = tmp_path / "one.bvh"
    path.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0.1 0.2 0.3\n"
                    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                    "  End Site\n  {\n    OFFSET 0 0 0\n  }\n}\n"
                    "MOTION\nFrames: 2\nFrame Time: 0.0083333\n1 2 3 10 20 30\n1 2 3 11 21 31\n")
    done, failed = stride.jobs.import_files(bpy.context, [path, path], single_armature=True)
    assert not failed and len(done) == 2 and done[0][0] == done[1][0]


def test_actions_written_at_the_scene_rate_read_back_at_the_clips_rate(scene, stride):
    # The armature's import keyed one BVH frame per scene frame (120); a clip written at the
    # scene's 24 fps keys every 0.2 frames and must not read back five times too fast.
    obj = stride_import(cmu_path("02_03"))
    scene.render.fps = 24
    clip = bvh.load(cmu_path("02_03"))
    action = stride.bridge.clip_to_action(clip, obj, "at 24 fps")
    got = stride.bridge.action_to_clip(obj, action)
    assert got.fps == clip.fps and got.n_frames == clip.n_frames
    assert stride.bridge.action_timing(obj, action).fps == 24.0


def test_bones_connect_where_blenders_importer_connects_them(scene, stride, tmp_path):
    # The importer connects a bone whose head equals its parent's tail by mathutils' Vector ==,
    # which allows one float32 ulp: a 1e-7 parent offset leaves exactly that difference.
    path = tmp_path / "ulp.bvh"
    path.write_text("HIERARCHY\nROOT A\n{\n  OFFSET 0 0 0\n"
                    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                    "  JOINT B\n  {\n    OFFSET 1e-07 0 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
                    "    JOINT C\n    {\n      OFFSET 1 1 1\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
                    "      End Site\n      {\n        OFFSET 0 1 0\n      }\n    }\n  }\n}\n"
                    "MOTION\nFrames: 1\nFrame Time: 0.0083333\n0 0 0 0 0 0 0 0 0 0 0 0\n")
    theirs = blender_import(path)
    ours = stride_import(path)
    assert [b.use_connect for b in ours.data.bones] == [b.use_connect for b in theirs.data.bones]
