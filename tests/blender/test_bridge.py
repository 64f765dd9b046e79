"""Actions <-> Clips against Blender's own BVH importer, on the real CMU files."""
# mypy: disable-error-code="attr-defined"
# (bpy.ops.stride exists once the extension is installed; the bpy stubs cannot know it)

from __future__ import annotations

import itertools
import os

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from bpy_extras.io_utils import axis_conversion
from fixtures import CMU, cmu_path

from core import bvh
from core.clip import Clip

TOL_ROT = 1e-5  # rad: Blender keeps float32
TOL_ROT_EULER_LOCK = 1e-3  # rad: float32 Euler angles near gimbal lock (|cos(middle)| <= 0.05)
TOL_POS = 1e-5  # x skeleton height
TOL_POS_EULER_LOCK = 1e-3  # x skeleton height, frames with an Euler joint near lock


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle between quaternion arrays, written out here (not core.quat)."""
    w = np.abs(np.sum(a * b, axis=-1)) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return 2.0 * np.arccos(np.clip(w, -1.0, 1.0))


def euler_middle_cos(stride, obj, clip_names: list[str], action) -> np.ndarray | None:
    """[T, J] |cos| of the middle Euler angle Blender stored per bone (None for quaternion bones)."""
    out = None
    for j, name in enumerate(clip_names):
        mode = obj.pose.bones[name].rotation_mode
        if len(mode) != 3:
            continue
        path = f'pose.bones["{name}"].rotation_euler'
        fc = _fcurve(stride, action, obj, path, "XYZ".index(mode[1]))
        if fc is None:
            continue
        keys = np.empty(len(fc.keyframe_points) * 2, dtype=np.float32)
        fc.keyframe_points.foreach_get("co", keys)
        values = keys.reshape(-1, 2)[:, 1].astype(np.float64)
        if out is None:
            out = np.ones((len(values), len(clip_names)))
        out[:, j] = np.abs(np.cos(values))
    return out


def _fcurve(stride, action, obj, path, index):
    compat = stride.compat
    for fc in compat.fcurves(action, compat.action_slot(action, obj)):
        if fc.data_path == path and fc.array_index == index:
            return fc
    return None


def assert_same_motion(got: Clip, want: Clip, *, lock_cos: np.ndarray | None = None) -> None:
    """Same joints, frames and rate; rotations and world positions within Blender's float32.

    `lock_cos` [T, J]: |cos(middle angle)| of Euler bones as Blender stored them. Blender's importer
    computes Euler angles in float32 (mathutils), whose error grows as eps32 |angle| / |cos|
    (measured on CMU data: err x |cos| <= 1.1e-6 rad, up to 1.8e-3 rad for a thumb at
    |cos| = 2e-4 on 4.2). So Euler entries get the issue's bounds (1e-5 rad where |cos| > 0.05,
    1e-3 rad below) or 1.5e-6 / |cos| where float32 cannot reach them, and frames where any joint
    is within 0.05 of lock get 1e-3 x height instead of 1e-5.
    """
    assert got.names == want.names
    assert got.parents.tolist() == want.parents.tolist()
    assert got.n_frames == want.n_frames
    assert got.fps == want.fps
    err = angle_between(got.rotations, want.rotations)
    _, gp = got.fk()
    _, wp = want.fk()
    pos_err = np.linalg.norm(gp - wp, axis=-1).max(axis=-1) / want.height
    if lock_cos is None:
        tol = np.full(err.shape, TOL_ROT)
        free_frames: np.ndarray = np.ones(len(err), dtype=bool)
    else:
        float32_bound = 1.5e-6 / np.maximum(lock_cos, 1e-12)
        tol = np.maximum(np.where(lock_cos > 0.05, TOL_ROT, TOL_ROT_EULER_LOCK), float32_bound)
        free_frames = np.asarray((lock_cos > 0.05).all(axis=-1))
    t, j = np.unravel_index(np.argmax(err / tol), err.shape)
    assert err[t, j] <= tol[t, j], (
        f"rotation error {err[t, j]:.3g} rad at frame {t}, joint {want.names[j]} (tolerance {tol[t, j]:.3g})")
    assert pos_err[free_frames].max(initial=0.0) <= TOL_POS, (
        f"position error {pos_err[free_frames].max():.3g} x height")
    assert pos_err.max(initial=0.0) <= TOL_POS_EULER_LOCK, (
        f"position error near lock {pos_err.max():.3g} x height")


@pytest.mark.parametrize("name", sorted(CMU))
def test_blender_import_reads_back_as_the_file(name, scene, stride):
    obj = blender_import(cmu_path(name))  # Blender's defaults: NATIVE Euler, -Z forward, Y up
    want = bvh.load(cmu_path(name))
    # Blender keys one BVH frame per scene frame and keeps no rate: the caller says it.
    got = stride.bridge.action_to_clip(obj, fps=120.0)
    lock = euler_middle_cos(stride, obj, want.names, obj.animation_data.action)
    assert_same_motion(got, want, lock_cos=lock)
    np.testing.assert_allclose(got.offsets, want.offsets, atol=TOL_POS * want.height)


def _pairwise_options() -> list[dict]:
    """Every importer option value, every pair of values across options covered at least once."""
    factors: dict[str, list] = {
        "rotate_mode": ["QUATERNION", "NATIVE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"],
        "axes": [("-Z", "Y"), ("Y", "Z"), ("X", "Z"), ("-Y", "-X")],
        "global_scale": [1.0, 0.05644, 100.0],
        "frame_start": [1, 10],
        "use_fps_scale": [False, True],
    }
    names = list(factors)
    uncovered = {(a, i, b, k) for a, b in itertools.combinations(range(len(names)), 2)
                 for i in range(len(factors[names[a]])) for k in range(len(factors[names[b]]))}
    rows = []
    candidates = list(itertools.product(*(range(len(factors[n])) for n in names)))
    while uncovered:
        best = max(candidates, key=lambda row: sum(
            (a, row[a], b, row[b]) in uncovered for a, b in itertools.combinations(range(len(names)), 2)))
        uncovered -= {(a, best[a], b, best[b]) for a, b in itertools.combinations(range(len(names)), 2)}
        rows.append({n: factors[n][best[i]] for i, n in enumerate(names)})
    return rows


OPTIONS = _pairwise_options()


@pytest.mark.parametrize("name", ["02_03", "131_01"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_every_importer_option_reads_back(name, options, scene, stride):
    forward, up = options["axes"]
    obj = blender_import(cmu_path(name), rotate_mode=options["rotate_mode"], axis_forward=forward,
                         axis_up=up, global_scale=options["global_scale"],
                         frame_start=options["frame_start"], use_fps_scale=options["use_fps_scale"])
    want = bvh.load(cmu_path(name))
    # With use_fps_scale the key spacing tells the rate (scene 24 fps: 0.2 frames per BVH frame).
    fps = None if options["use_fps_scale"] else 120.0
    got = stride.bridge.action_to_clip(obj, axis_forward=forward, axis_up=up,
                                       global_scale=options["global_scale"], fps=fps)
    lock = None
    if options["rotate_mode"] != "QUATERNION":
        lock = euler_middle_cos(stride, obj, want.names, obj.animation_data.action)
    assert_same_motion(got, want, lock_cos=lock)


def test_axis_conversion_matches_blenders_for_every_axis_pair(stride):
    axes: list = ["X", "Y", "Z", "-X", "-Y", "-Z"]
    for forward, up in itertools.permutations(axes, 2):
        if forward.strip("-") == up.strip("-"):
            continue
        want = np.array(axis_conversion(from_forward=forward, from_up=up))
        got = stride.core.armature.axis_conversion(forward, up)
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{forward} {up}")


@pytest.mark.parametrize("rotate_mode", ["QUATERNION", "NATIVE"])
def test_clip_to_action_round_trips_and_poses_like_core_fk(rotate_mode, scene, stride):
    obj = blender_import(cmu_path("09_01"), rotate_mode=rotate_mode)
    source_action = obj.animation_data.action
    clip = bvh.load(cmu_path("09_01"))
    clip.events["FootDown_L"] = np.array([0.25, 0.75])
    scene.render.fps = 120
    action = stride.bridge.clip_to_action(clip, obj, "09_01 copy", assign=True)
    assert action.name == "09_01 copy" and action != source_action
    assert obj.animation_data.action == action
    back = stride.bridge.action_to_clip(obj)
    assert back.n_frames == clip.n_frames and back.fps == 120.0
    rot_err = angle_between(back.rotations, clip.rotations).max()
    assert rot_err <= 1e-6, rot_err
    pos_err = np.abs(back.positions - clip.positions) / np.maximum(1.0, np.abs(clip.positions))
    assert pos_err.max() <= 1e-6
    assert back.events["FootDown_L"] == pytest.approx([0.25, 0.75])
    # Blender's own evaluation of the new action: bone heads in armature space.
    conversion = np.array(axis_conversion(from_forward="-Z", from_up="Y"))
    _, world = clip.fk()
    for frame in (0, 37, 148):
        scene.frame_set(1 + frame)
        heads = np.array([tuple(obj.pose.bones[n].head) for n in clip.names])
        want = world[frame] @ conversion.T
        assert np.linalg.norm(heads - want, axis=-1).max() <= 1e-5 * clip.height, frame
    # The imported action is untouched and still there (fake user keeps it through a save).
    assert source_action.name in bpy.data.actions and source_action.use_fake_user


def test_thinned_curves_read_as_blender_evaluates_them(scene, stride):
    # An animator's cleanup: one channel keyed every 4th frame, the root's x only at its ends. The
    # curves no longer share frames, so the clip samples each on the common grid.
    scene.render.fps = 120
    obj = blender_import(cmu_path("09_01"), rotate_mode="QUATERNION")
    action = obj.animation_data.action
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    many = stride.compat.read_keys_many(curves)
    for fc, keys in zip(curves, many, strict=True):
        np.testing.assert_array_equal(keys, stride.compat.read_keys(fc))
    for path, index, kept in (('pose.bones["LeftArm"].rotation_quaternion', 2, slice(None, None, 4)),
                              ('pose.bones["Hips"].location', 0, [0, -1])):
        fc = _fcurve(stride, action, obj, path, index)
        keys = stride.compat.read_keys(fc)
        stride.compat.write_keys(fc, keys[kept, 0], keys[kept, 1], "LINEAR")
    assert len(fc.keyframe_points) == 2
    clip = stride.bridge.action_to_clip(obj, fps=120.0)
    assert clip.n_frames == len(keys)
    # Blender's own evaluation: bone heads in armature space.
    conversion = np.array(axis_conversion(from_forward="-Z", from_up="Y"))
    _, world = clip.fk()
    for frame in (0, 1, 2, 5, 38, len(keys) - 2):
        scene.frame_set(1 + frame)
        heads = np.array([tuple(obj.pose.bones[n].head) for n in clip.names])
        assert np.linalg.norm(heads - world[frame] @ conversion.T, axis=-1).max() <= 1e-5 * clip.height, frame


def test_clip_to_action_never_reuses_a_name(scene, stride):
    obj = blender_import(cmu_path("02_03"))
    clip = bvh.load(cmu_path("02_03"))
    first = stride.bridge.clip_to_action(clip, obj, "02_03")
    assert first.name != "02_03" and first.name.startswith("02_03")
    assert bpy.data.actions["02_03"] == obj.animation_data.action


@pytest.mark.parametrize("name", ["02_03", "131_01"])
def test_stride_export_imports_back_into_blender_as_the_file(name, scene, stride, tmp_path):
    scene.render.fps = 120
    # Quaternion keys: an Euler import would carry Blender's own float32 gimbal-lock error.
    blender_import(cmu_path(name), rotate_mode="QUATERNION")
    out = tmp_path / f"{name}_stride.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out)) == {"FINISHED"}
    reimported = blender_import(out, rotate_mode="QUATERNION")
    want = bvh.load(cmu_path(name))
    got = stride.bridge.action_to_clip(reimported)
    assert_same_motion(got, want)
    # Quaternion bones keep no rotation order: Stride writes its default layout.
    written = bvh.load(out).channels
    assert written[0] == ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
    assert set(written[1:]) == {("Zrotation", "Xrotation", "Yrotation")}


def test_export_keeps_the_rotation_order_of_native_euler_bones(scene, stride, tmp_path):
    scene.render.fps = 120
    blender_import(cmu_path("131_01"))  # NATIVE: each bone keeps its file's Euler order
    out = tmp_path / "native.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out)) == {"FINISHED"}
    assert bvh.load(out).channels == bvh.load(cmu_path("131_01")).channels


def test_export_without_an_armature_reports_and_writes_nothing(scene, tmp_path):
    out = tmp_path / "none.bvh"
    assert not bpy.ops.stride.export_bvh.poll()
    with pytest.raises(RuntimeError, match=r"poll\(\) No armature in the scene"):
        bpy.ops.stride.export_bvh(filepath=str(out))
    assert not out.exists()


def test_cli_export_writes_the_active_action(scene, stride, tmp_path, capsys):
    scene.render.fps = 120
    blender_import(cmu_path("09_01"))
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "out.bvh"
    assert stride.cli.main(["export", str(blend), "--out", str(out)]) == 0
    assert "149 frames" in capsys.readouterr().out
    assert_same_motion(bvh.load(out), bvh.load(cmu_path("09_01")))


def test_cli_reports_errors_with_exit_codes(scene, stride, tmp_path, capsys):
    out = tmp_path / "out.bvh"
    assert stride.cli.main(["export", "--out", str(out)]) == 1
    assert "no armature in the scene" in capsys.readouterr().err
    blender_import(cmu_path("09_01"))
    assert stride.cli.main(["export", "--action", "nope", "--out", str(out)]) == 1
    assert "no action named 'nope'" in capsys.readouterr().err
    assert stride.cli.main(["export", "--armature", "missing", "--out", str(out)]) == 1
    assert not out.exists()
    assert stride.cli.main(["export"]) == 2  # --out is required
    assert stride.cli.main(["--help"]) == 0
    assert "export" in capsys.readouterr().out


def test_undo_after_export_leaves_no_new_data(scene, tmp_path):
    blender_import(cmu_path("02_03"), undo=True)  # an undoable step, so the undo stack is live
    actions = sorted(a.name for a in bpy.data.actions)
    objects = sorted(o.name for o in bpy.data.objects)
    bpy.ops.ed.undo_push(message="before export")
    assert bpy.ops.stride.export_bvh("EXEC_DEFAULT", True, filepath=str(tmp_path / "u.bvh")) == {"FINISHED"}
    bpy.ops.ed.undo()
    assert sorted(a.name for a in bpy.data.actions) == actions
    assert sorted(o.name for o in bpy.data.objects) == objects


def test_extension_registers_cleanly_twice(stride):
    module = "bl_ext.user_default.stride"
    assert hasattr(bpy.types, "VIEW3D_PT_stride")
    assert bpy.types.VIEW3D_PT_stride.bl_category == "Stride"
    bpy.ops.preferences.addon_disable(module=module)
    assert not hasattr(bpy.types, "VIEW3D_PT_stride")
    assert not hasattr(bpy.ops.stride, "export_bvh") or not _operator_registered("stride.export_bvh")
    bpy.ops.preferences.addon_enable(module=module)
    assert hasattr(bpy.types, "VIEW3D_PT_stride")
    assert bpy.ops.stride.export_bvh.poll() in (True, False)


def _operator_registered(idname: str) -> bool:
    try:
        bpy.ops.stride.export_bvh.get_rna_type()
    except KeyError:
        return False
    return True


def test_core_is_bundled_inside_the_extension(stride):
    import sys
    from pathlib import Path

    assert stride.core.__name__ == "bl_ext.user_default.stride.core"
    assert stride.core.__file__.startswith(os.environ["BLENDER_USER_RESOURCES"])
    # The tests put the repo on sys.path for their oracle; nothing else may offer a top-level core.
    repo = Path(__file__).resolve().parents[2]
    offering = {Path(p).resolve() for p in sys.path if p and (Path(p) / "core" / "bvh.py").is_file()}
    assert offering <= {repo}
