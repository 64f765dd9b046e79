"""Running operators again, in awkward states, with bad values: what users' data and files look
like afterwards, and what the report says."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools

import bpy
import numpy as np
import pytest
from fixtures import cmu_path
from test_bridge import assert_same_motion
from test_sync import keys_of, walk_and_run


def test_baking_again_repeats_the_bake_instead_of_baking_from_its_result(scene, stride):
    walk = walk_and_run(scene)
    assert bpy.ops.stride.bake_transition(source_time=0.5, target_action="02_03") == {"FINISHED"}
    first = walk.animation_data.action
    assert bpy.ops.stride.bake_transition(source_time=0.5, target_action="02_03") == {"FINISHED"}
    second = walk.animation_data.action
    assert first.name == "02_01 > 02_03 (dead)" and second.name == "02_01 > 02_03 (dead).001"
    assert all(np.array_equal(x, y) for x, y in zip(keys_of(stride, walk, first),
                                                     keys_of(stride, walk, second), strict=True))
    # Naming the result bakes from it, as asked.
    assert bpy.ops.stride.bake_transition(source_action=second.name, source_time=0.5,
                                          target_action="02_03") == {"FINISHED"}
    assert walk.animation_data.action.name == "02_01 > 02_03 (dead).001 > 02_03 (dead)"


def test_sync_blend_on_a_weight_curve_bakes_again(scene, stride):
    walk = walk_and_run(scene)
    for frame, value in ((1, 0.0), (241, 1.0)):
        walk["stride_blend_weight"] = value
        walk.keyframe_insert('["stride_blend_weight"]', frame=frame)
    results = []
    for _ in range(2):
        assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="CURVE",
                                              duration=2.0) == {"FINISHED"}
        results.append(stride.bridge.action_to_clip(walk, walk.animation_data.action))
    assert_same_motion(results[1], results[0])


def test_baking_in_nla_tweak_mode_reports_and_leaves_nothing(scene, stride):
    walk = walk_and_run(scene)
    track = walk.animation_data.nla_tracks.new()
    track.strips.new("walk", 1, bpy.data.actions["02_01"])
    walk.animation_data.action = None
    walk.animation_data.use_tweak_mode = True
    actions = set(bpy.data.actions)
    with pytest.raises(RuntimeError, match="tweak mode") as exc:
        bpy.ops.stride.bake_transition(source_action="02_01", source_time=0.5, target_action="02_03")
    assert "Traceback" not in str(exc.value)
    with pytest.raises(RuntimeError, match="tweak mode"):
        bpy.ops.stride.bake_nla_track()
    assert set(bpy.data.actions) == actions


def test_cli_refuses_a_scale_that_is_not_positive(scene, stride, tmp_path, capsys):
    for scale in ("0", "-1", "nan"):
        out = tmp_path / f"s{scale}.blend"
        assert stride.cli.main(["import", str(cmu_path("09_01")), "--scale", scale, "--out", str(out)]) == 1
        assert "scale must be a positive number" in capsys.readouterr().err
        assert not out.exists()


def test_cli_names_what_is_wrong_with_its_arguments(scene, stride, tmp_path, capsys):
    walk = str(cmu_path("02_01"))
    assert stride.cli.main(["sequence", walk, walk, "--out", str(tmp_path / "s.bvh")]) == 1
    assert "expected FILE@START:END" in capsys.readouterr().err
    assert stride.cli.main(["import", walk, "--out", str(tmp_path / "t.txt")]) == 1
    assert "not a .blend file name" in capsys.readouterr().err
    assert not (tmp_path / "t.txt").exists()


def test_export_writes_through_a_symlink_and_refuses_a_read_only_file(scene, stride, tmp_path):
    bpy.ops.stride.import_bvh(filepath=str(cmu_path("09_01")))
    real = tmp_path / "real.bvh"
    real.write_text("old")
    link = tmp_path / "link.bvh"
    link.symlink_to(real)
    assert bpy.ops.stride.export_bvh(filepath=str(link)) == {"FINISHED"}
    assert link.is_symlink() and real.read_text().startswith("HIERARCHY")
    real.chmod(0o444)
    with pytest.raises(RuntimeError, match="read-only"):
        bpy.ops.stride.export_bvh(filepath=str(real))
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.stride.export_bvh(filepath=str(tmp_path / "missing" / "a.bvh"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bvh", "real.bvh"]


def test_bakes_report_progress_while_writing_keys(scene, stride):
    walk = walk_and_run(scene)
    jobs, options = stride.jobs, stride.options
    transition = options.TransitionOptions(source_time=0.5, target_action="02_03")
    blend = options.SyncOptions(action_a="02_01", action_b="02_03", duration=1.0)
    for bake in (lambda step: jobs.bake_transition(walk, options=transition, progress=step),
                 lambda step: jobs.bake_sync_blend(walk, options=blend, progress=step)):
        seen: list[float] = []
        bake(seen.append)
        assert seen[0] == 0.5 and 0.9 < seen[-1] <= 1.0 and len(seen) > 10
        assert all(b >= a for a, b in itertools.pairwise(seen))


def test_every_bake_survives_saving_once_the_armature_plays_its_source_again(scene, stride, tmp_path):
    """An afternoon's bakes on imported CMU takes (a transition, a sync blend, Lock Feet, an NLA
    bake), each followed by playing the source again, and an import whose armature is deleted:
    saved and opened again, every action is there with its keys (Blender drops what has no user)."""
    scene.render.fps = 120
    folder = cmu_path("02_01").parent
    assert bpy.ops.stride.import_bvh(directory=str(folder), files=[{"name": "02_01.bvh"},
                                                                   {"name": "02_03.bvh"}]) == {"FINISHED"}
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("09_01"))) == {"FINISHED"}
    bpy.data.objects.remove(bpy.data.objects["09_01"])  # its action is left with no armature
    walk = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = walk
    source = bpy.data.actions["02_01"]
    track = walk.animation_data.nla_tracks.new()
    first = track.strips.new("walk", 1, source)
    track.strips.new("run", int(first.frame_end), bpy.data.actions["02_03"])
    baked = []
    for bake in (lambda: bpy.ops.stride.bake_transition(source_time=1.0, target_action="02_03"),
                 lambda: bpy.ops.stride.bake_sync_blend(action_a="02_01", action_b="02_03", duration=2.0),
                 lambda: bpy.ops.stride.lock_feet(),
                 lambda: bpy.ops.stride.bake_nla_track(track=track.name)):
        assert bake() == {"FINISHED"}
        action = walk.animation_data.action
        assert action != source and action.use_fake_user
        baked.append(action.name)
        stride.compat.assign(walk, source, stride.compat.action_slot(source, walk))  # play the source again
    assert len(set(baked)) == 4
    keys = {name: sum(len(fc.keyframe_points) for fc in stride.compat.fcurves(
        bpy.data.actions[name], stride.compat.action_slot(bpy.data.actions[name], walk))) for name in baked}
    assert all(keys.values()) and not any(bpy.data.actions[name].users - 1 for name in baked)  # the fake user
    path = tmp_path / "afternoon.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}
    bpy.ops.wm.open_mainfile(filepath=str(path))
    walk = bpy.data.objects["02_01"]
    assert {"02_01", "02_03", "09_01", *baked} <= {a.name for a in bpy.data.actions}
    for name, count in keys.items():
        action = bpy.data.actions[name]
        assert sum(len(fc.keyframe_points) for fc in stride.compat.fcurves(
            action, stride.compat.action_slot(action, walk))) == count, name
