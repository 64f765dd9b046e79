"""Event tracks in Blender: footstep markers, event-encoding curves, decoding, undo, CLI."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from fixtures import cmu_path

from core import bvh, contacts, events


def imported(name, scene, undo=False):
    """Blender's importer with the scene at the file's rate (as 'Update Scene FPS' does)."""
    scene.render.fps = 120
    return blender_import(cmu_path(name), undo=undo, rotate_mode="QUATERNION")


def markers(action):
    return sorted((m.name, m.frame) for m in action.pose_markers)


def curve(stride, obj, action, prop, index):
    for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, obj)):
        if fc.data_path == f'["{prop}"]' and fc.array_index == index:
            return fc
    return None


@pytest.mark.parametrize("name", ["02_01", "02_03", "09_01"])
def test_footstep_markers_match_the_core_detector(name, scene, stride):
    obj = imported(name, scene)
    want = contacts.footsteps(bvh.load(cmu_path(name)))
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    action = obj.animation_data.action
    for track, times in want.items():
        frames = sorted(m.frame for m in action.pose_markers if m.name == track)
        assert frames == [1 + round(t * 120) for t in times], track
        np.testing.assert_allclose(action["stride_events"][track], times, atol=1e-3)
        assert sorted(action["stride_auto_markers"][track]) == frames


def test_rerun_keeps_markers_moved_or_added_by_hand_and_does_not_duplicate(scene, stride):
    obj = imported("02_01", scene)
    bpy.ops.stride.detect_footsteps()
    action = obj.animation_data.action
    first = markers(action)
    moved = next(m for m in action.pose_markers if m.name == "FootDown_L")
    moved.frame += 3
    added = action.pose_markers.new("FootDown_R")
    added.frame = 5
    user = action.pose_markers.new("Jump")
    user.frame = 100
    bpy.ops.stride.detect_footsteps()
    after = markers(action)
    assert ("FootDown_L", moved.frame) in after and ("FootDown_R", 5) in after and ("Jump", 100) in after
    # The moved marker is the user's correction of its step: not added again at its old frame.
    assert len(after) == len(first) + 2
    assert len(set(after)) == len(after)


def test_event_curves_evaluate_to_the_core_encoding_and_decode_back(scene, stride):
    obj = imported("02_01", scene)
    bpy.ops.stride.detect_footsteps()
    action = obj.animation_data.action
    user = action.pose_markers.new("Jump")
    user.frame = 100
    start = action.pose_markers.new("Run_start")
    start.frame = 50
    end = action.pose_markers.new("Run_end")
    end.frame = 120
    assert bpy.ops.stride.write_event_curves(window=0.5, sigma=1 / 120) == {"FINISHED"}
    clip = bvh.load(cmu_path("02_01"))
    times = clip.times
    exact = {k: np.asarray(v) for k, v in action["stride_events"].to_dict().items()}
    exact["Jump"] = np.array([99 / 120])
    for track, event_times in exact.items():
        sin, cos = events.encode(times, event_times, 0.5, 1 / 120)
        for index, want in enumerate((sin, cos)):
            fc = curve(stride, obj, action, f"stride_event_{track}", index)
            got = np.array([fc.evaluate(1 + k) for k in range(clip.n_frames)])
            assert np.abs(got - want).max() <= 1e-6, (track, index)
    run = curve(stride, obj, action, "stride_tag_Run", 0)
    assert run.keyframe_points[0].interpolation == "CONSTANT"
    assert [run.evaluate(f) for f in (49, 50, 119, 120)] == [0.0, 1.0, 1.0, 0.0]
    for prop in ("stride_phase", "stride_contact_L", "stride_contact_R"):
        assert curve(stride, obj, action, prop, 0) is not None, prop
    # Decoding gives the events back within half a frame, into markers with exact times.
    for m in [m for m in action.pose_markers if m.name.startswith("FootDown")]:
        action.pose_markers.remove(m)
    action["stride_events"] = {}
    action["stride_auto_markers"] = {}
    assert bpy.ops.stride.detect_events_from_curves(window=0.5) == {"FINISHED"}
    for track in ("FootDown_L", "FootDown_R"):
        got = np.asarray(action["stride_events"][track])
        assert got.shape == exact[track].shape
        assert np.abs(got - exact[track]).max() <= 0.5 / 120, track


def test_rerunning_write_event_curves_replaces_only_strides_curves(scene, stride):
    obj = imported("09_01", scene)
    bpy.ops.stride.detect_footsteps()
    bpy.ops.stride.write_event_curves()
    action = obj.animation_data.action
    count = len(stride.compat.fcurves(action, stride.compat.action_slot(action, obj)))
    bpy.ops.stride.write_event_curves(window=0.4)
    assert len(stride.compat.fcurves(action, stride.compat.action_slot(action, obj))) == count


@pytest.mark.parametrize("operator", ["detect_footsteps", "write_event_curves", "detect_events_from_curves"])
def test_undo_restores_markers_properties_and_curves(operator, scene, stride):
    obj = imported("09_01", scene, undo=True)
    if operator != "detect_footsteps":
        bpy.ops.stride.detect_footsteps("EXEC_DEFAULT", True)
        bpy.ops.stride.write_event_curves("EXEC_DEFAULT", True)
    # After undo every reference is stale: look things up by name.
    action_name, obj_name = obj.animation_data.action.name, obj.name

    def state():
        act = bpy.data.actions[action_name]
        ob = bpy.data.objects[obj_name]
        curves = sorted((fc.data_path, fc.array_index, len(fc.keyframe_points))
                        for fc in stride.compat.fcurves(act, stride.compat.action_slot(act, ob)))
        props = {k: (v.to_dict() if hasattr(v, "to_dict") else v) for k, v in act.items()}
        return markers(act), curves, repr(props), sorted(ob.keys())

    before = state()
    bpy.ops.ed.undo_push(message="before")
    assert getattr(bpy.ops.stride, operator)("EXEC_DEFAULT", True) == {"FINISHED"}
    bpy.ops.ed.undo()
    assert state() == before


def test_clear_messages_for_no_armature_no_action_no_footsteps(scene, stride, tmp_path):
    # The buttons are off, and say why (the poll message).
    with pytest.raises(RuntimeError, match=r"poll\(\) No armature in the scene: import a BVH file"):
        bpy.ops.stride.detect_footsteps()
    obj = imported("09_01", scene)
    action = obj.animation_data.action
    obj.animation_data.action = None
    with pytest.raises(RuntimeError, match=r"poll\(\) '09_01' has no action: import a BVH take"):
        bpy.ops.stride.write_event_curves()
    obj.animation_data.action = action
    if stride.compat.SLOTTED:
        obj.animation_data.action_slot = action.slots[0]
    with pytest.raises(RuntimeError, match="no stride_event_<track> curves"):
        bpy.ops.stride.detect_events_from_curves()
    # A take that stands still on both feet: nothing to mark, and the message says why.
    clip = bvh.load(cmu_path("02_01"))
    planted = contacts.contacts(clip)
    both = int(np.nonzero(planted["L"] & planted["R"])[0][0])  # double support in the walk
    still = tmp_path / "still.bvh"
    bvh.save(clip.replace(rotations=np.repeat(clip.rotations[both:both + 1], 60, axis=0),
                          positions=np.repeat(clip.positions[both:both + 1], 60, axis=0)), still)
    bpy.ops.stride.import_bvh(filepath=str(still))
    with pytest.raises(RuntimeError, match=r"no footsteps found in 'still': the feet never lift"):
        bpy.ops.stride.detect_footsteps()


def test_cli_events_writes_markers_and_curves(scene, stride, tmp_path, capsys):
    out = tmp_path / "events.blend"
    assert stride.cli.main(["events", str(cmu_path("02_03")), "--out", str(out)]) == 0
    assert "FootDown_L" in capsys.readouterr().out
    bpy.ops.wm.open_mainfile(filepath=str(out))
    action = bpy.data.actions["02_03"]
    assert {m.name for m in action.pose_markers} == {"FootDown_L", "FootDown_R"}
    obj = bpy.data.objects["02_03"]
    assert curve(stride, obj, action, "stride_event_FootDown_L", 1) is not None


def test_cli_events_on_a_malformed_file_exits_1_and_writes_nothing(scene, stride, tmp_path, capsys):
    bad = tmp_path / "bad.bvh"
    bad.write_text(cmu_path("09_01").read_text().replace("Frame Time", "Frame Tme"))
    out = tmp_path / "never.blend"
    assert stride.cli.main(["events", str(bad), "--out", str(out)]) == 1
    assert "missing 'Frame Time" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cli_export_dataset_matches_the_core_export(workers, stride, tmp_path, capsys):
    import shutil

    from core import dataset

    src = tmp_path / "src"
    src.mkdir()
    for name in ("02_03", "09_01"):
        shutil.copy(cmu_path(name), src / f"{name}.bvh")
    (src / "bad.bvh").write_text("HIERARCHY\n")
    out = tmp_path / "out"
    assert stride.cli.main(["export-dataset", str(src), "--out", str(out), "--workers", workers]) == 1
    want = tmp_path / "want"
    dataset.export([src], want, workers=1)
    for name in ("02_03.npz", "09_01.npz"):
        with np.load(out / name) as got, np.load(want / name) as ref:
            for key in ref.files:
                np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    assert not (out / "bad.npz").exists()


def test_write_event_curves_keeps_curves_keyed_by_hand_under_its_prefixes(scene, stride):
    # A network's predictions keyed as ["stride_event_Pred"] are not Stride's to replace.
    obj = imported("02_01", scene)
    bpy.ops.stride.detect_footsteps()
    action = obj.animation_data.action
    obj["stride_event_Pred"] = [0.0, 1.0]
    obj.keyframe_insert('["stride_event_Pred"]', frame=10)
    for _ in range(2):
        assert bpy.ops.stride.write_event_curves() == {"FINISHED"}
        assert curve(stride, obj, action, "stride_event_Pred", 0) is not None
        assert curve(stride, obj, action, "stride_event_Pred", 1) is not None
    # A track no longer written loses only the curves Stride made for it.
    assert bpy.ops.stride.write_event_curves(tracks="FootDown_L") == {"FINISHED"}
    assert curve(stride, obj, action, "stride_event_FootDown_R", 0) is None
    assert curve(stride, obj, action, "stride_event_Pred", 0) is not None


def test_event_names_with_quotes_make_curves_that_drive_and_decode(scene, stride):
    obj = imported("02_01", scene)
    action = obj.animation_data.action
    for frame in (60, 180):
        action.pose_markers.new('Say "hi"').frame = frame
    assert bpy.ops.stride.write_event_curves(tracks='Say "hi"') == {"FINISHED"}
    paths = [fc.data_path for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, obj))]
    path = next(p for p in paths if "Say" in p)
    assert obj.path_resolve(path) is not None  # the curve drives the property
    for m in [m for m in action.pose_markers if m.name == 'Say "hi"']:
        action.pose_markers.remove(m)
    assert bpy.ops.stride.detect_events_from_curves() == {"FINISHED"}
    assert sorted(m.frame for m in action.pose_markers if m.name == 'Say "hi"') == [60, 180]


def test_contact_curves_follow_the_foot_speed_setting(scene, stride):
    obj = imported("02_01", scene)
    action = obj.animation_data.action
    planted = {}
    for speed in (0.01, 0.15):  # 75 and 250 planted frames of the left foot
        assert bpy.ops.stride.write_event_curves(speed_mps=speed) == {"FINISHED"}
        keys = stride.compat.read_keys(curve(stride, obj, action, "stride_contact_L", 0))
        planted[speed] = keys[:, 1]
        want = contacts.contacts(bvh.load(cmu_path("02_01")), speed_mps=speed)["L"]
        np.testing.assert_array_equal(keys[:, 1], want.astype(float))
    assert planted[0.15].sum() > planted[0.01].sum()  # a stricter speed plants fewer frames
