"""Blend spaces in Blender (issue 41): gaits on the armature from imported takes (CMU subject 02's walk
and jog on one armature, Bandai dataset-1's walk, run and dash on three), Bake Blend Space at a
constant speed, a ramp and the armature's keyed Speed, against the core on the BVH files; the baked
speed as Blender plays it (frame_set, the hips' world positions) per cycle against the keyed curve as
Blender evaluates it; the Speed property where the Graph Editor shows it; undo; errors in the UI's
words; the CLI."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools
import warnings

import blender_fixtures
import bpy
import numpy as np
import pytest
import reports
from blender_fixtures import steps_of
from fixtures import bandai_path, cmu_path, take_path
from test_bridge import assert_same_motion

from core import blendspace, bvh, contacts, units

BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]
CMU = ["02_01", "02_03"]
UNIT = {"cmu": units.CMU_UNIT_M, "bandai": 0.01}  # metres per file unit: CMU's, Bandai's centimetres
# Locked legs on these takes fall short of a few plants (the core warns); what is checked is the motion.
pytestmark = pytest.mark.filterwarnings("ignore:.*could not reach its lock")


def takes(names):
    """The takes as the core reads their files."""
    return [bvh.load(take_path(n)) for n in names]


def cmu_gaits(stride):
    """CMU 02_01 (walk) and 02_03 (jog) imported onto one armature at 120 fps, each added as a gait
    while it is the armature's active action (Add Gait)."""
    bpy.context.scene.render.fps = 120
    return blender_fixtures.cmu_gaits(stride)


def bandai_gaits():
    """Bandai's walk, run and dash imported each onto its own armature (their travel sits on other
    joints, so they are no single armature's), all selected, the walk active: Gaits from Selected."""
    for name in BANDAI:
        assert bpy.ops.stride.import_bvh(filepath=str(bandai_path(name))) == {"FINISHED"}
    for obj in bpy.data.objects:
        obj.select_set(True)
    walk = bpy.data.objects[BANDAI[0]]
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.gaits_from_selected() == {"FINISHED"}
    return walk


def gaits_of(obj):
    return [(g.action.name, g.armature.name if g.armature else None) for g in obj.stride.gaits]


def speed_fcurve(stride, obj, action):
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    return next((fc for fc in curves if fc.data_path == "stride.speed"), None)


def test_gaits_are_added_from_imported_actions_and_listed_slowest_first(scene, stride):
    walk = bandai_gaits()
    assert gaits_of(walk) == [(BANDAI[0], None), (BANDAI[1], BANDAI[1]), (BANDAI[2], BANDAI[2])]
    assert walk.stride.gait_index == 2
    # The Gaits panel's rows: each gait's speed as the core measures the takes, slowest first.
    preview = stride.jobs.preview_gaits(walk)
    want = blendspace.gait_speeds(takes(BANDAI))
    np.testing.assert_allclose([r.speed for r in preview.rows], want, rtol=1e-5)
    assert stride.recipes.blendspace.gait_order([r.speed for r in preview.rows]) == list(np.argsort(want))
    assert preview.reach == pytest.approx((0.7 * want.min(), 1.3 * want.max()), rel=1e-5)
    assert not preview.problem and not any(preview.problems)
    lines = stride.panels.gait_lines(preview, stride.jobs.gait_names(walk))
    assert lines == [f"Reaches {0.7 * want.min():.2f} - {1.3 * want.max():.2f} m/s"]
    # Again: nothing new; a take added twice is refused; removing leaves the action.
    with pytest.raises(RuntimeError, match=r"Nothing new to add: 'dataset-1_walk_normal_001', .* already"):
        bpy.ops.stride.gaits_from_selected()
    with pytest.raises(RuntimeError, match=r"'dataset-1_walk_normal_001' is a gait of '\S+' already"):
        bpy.ops.stride.gait_add()
    walk.stride.gait_index = 1
    assert bpy.ops.stride.gait_remove() == {"FINISHED"}
    assert [n for n, _ in gaits_of(walk)] == [BANDAI[0], BANDAI[2]] and BANDAI[1] in bpy.data.actions

    bpy.ops.wm.read_homefile(use_empty=True)
    obj = cmu_gaits(stride)
    assert gaits_of(obj) == [("02_01", None), ("02_03", None)]
    rows = stride.jobs.preview_gaits(obj).rows
    np.testing.assert_allclose([r.speed for r in rows], blendspace.gait_speeds(takes(CMU)), rtol=1e-5)
    # The cycle, a touchdown to the next of that foot, as the take's own footsteps space them (the
    # loop is cut within 3 % of that, where its ends' poses match best).
    for take, row in zip(takes(CMU), rows, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = contacts.footsteps(take)
        median = float(np.median(np.concatenate([np.diff(found[k]) for k in ("FootDown_L", "FootDown_R")])))
        assert abs(row.cycle - median) <= max(0.035 * median, 1.5 / take.fps), (take.name, row.cycle, median)


def test_gaits_from_selected_skips_another_skeleton_and_says_so(scene, stride, capfd):
    scene.render.fps = 120
    for name in ("02_01", "02_03", "131_01"):
        assert bpy.ops.stride.import_bvh(filepath=str(cmu_path(name))) == {"FINISHED"}
    for obj in bpy.data.objects:
        obj.select_set(True)
    walk = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.gaits_from_selected() == {"FINISHED"}
    assert gaits_of(walk) == [("02_01", None), ("02_03", "02_03")]
    said = [s.message for s in reports.SAID if s.test.endswith("skips_another_skeleton_and_says_so")]
    skipped = "Not added: '131_01' is another skeleton ('02_01' has no bone '"
    assert any(m.startswith(skipped) for m in said), said
    assert all(reports.problems(m) == [] for m in said)


def test_a_constant_speed_bakes_the_cores_blend_space_as_a_new_action(scene, stride):
    obj = cmu_gaits(stride)
    before = {a.name for a in bpy.data.actions}
    assert bpy.ops.stride.bake_blend_space(speed=1.75, duration=3.0) == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name == "02_01 blend space (constant)" and action.use_fake_user
    assert {a.name for a in bpy.data.actions} == before | {action.name}
    want = blendspace.blend_space(takes(CMU), 1.75, 3.0, fps=120.0, lock_feet=True)  # Lock Feet: on
    got = stride.bridge.action_to_clip(obj, action)
    assert_same_motion(got, want)
    # Footstep markers at the blend's touchdowns, alternating; the speed keyed beside the bones.
    marks = steps_of(action)
    assert [n for _, n in marks] == [("FootDown_L", "FootDown_R")[k % 2] for k in range(len(marks))]
    wanted = sorted((1 + round(t * 120), k) for k, v in want.events.items() for t in v)
    assert marks == wanted
    fc = speed_fcurve(stride, obj, action)
    np.testing.assert_allclose(stride.compat.read_keys(fc), [[1.0, 1.75], [361.0, 1.75]])
    # Baking again (the result active) bakes from the gaits again, into a new action.
    assert bpy.ops.stride.bake_blend_space(speed=1.75, duration=3.0) == {"FINISHED"}
    again = obj.animation_data.action
    assert again.name == "02_01 blend space (constant).001"
    assert_same_motion(stride.bridge.action_to_clip(obj, again), want)


def test_a_ramp_over_three_gaits_on_three_armatures_bakes_the_cores(scene, stride):
    """Without Lock Feet and with it, each to float32."""
    walk = bandai_gaits()
    assert bpy.ops.stride.bake_blend_space(speed_mode="RAMP", ramp_from=1.375, ramp_to=4.25, duration=6.0,
                                           lock_feet=False) == {"FINISHED"}
    action = walk.animation_data.action
    assert action.name == "dataset-1_walk_normal_001 blend space (ramp)"
    ramp = (np.array([0.0, 6.0]), np.array([1.375, 4.25]))
    want = blendspace.blend_space(takes(BANDAI), ramp, 6.0, fps=30.0)
    assert_same_motion(stride.bridge.action_to_clip(walk, action), want)
    assert bpy.ops.stride.bake_blend_space(speed_mode="RAMP", ramp_from=1.375, ramp_to=4.25,
                                           duration=6.0) == {"FINISHED"}
    locked = blendspace.blend_space(takes(BANDAI), ramp, 6.0, fps=30.0, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(walk, walk.animation_data.action), locked)
    np.testing.assert_allclose(stride.compat.read_keys(speed_fcurve(stride, walk, action)),
                               [[1.0, 1.375], [181.0, 4.25]])
    # The sources are untouched: each take reads as its file.
    for name in BANDAI:
        arm = bpy.data.objects[name]
        assert_same_motion(stride.bridge.action_to_clip(arm, bpy.data.actions[name]), takes([name])[0])


def played_speeds(stride, obj, action, unit):
    """Per cycle (from each FootDown_L marker of the baked action to the next), as Blender plays
    the action: the hips' travel over the floor (world X, Y) over the cycle's time, and the
    armature's Speed as Blender evaluates it (frame_set), averaged over the same span; m/s."""
    scene = bpy.context.scene
    stride.compat.assign(obj, action, stride.compat.action_slot(action, obj))
    lefts = sorted(m.frame for m in action.pose_markers if m.name == "FootDown_L")
    frames = np.arange(lefts[0], lefts[-1] + 1)
    hips, target = np.empty((len(frames), 3)), np.empty(len(frames))
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        hips[i] = (obj.matrix_world @ obj.pose.bones["Hips"].matrix).translation
        target[i] = obj.stride.speed
    fps = scene.render.fps / scene.render.fps_base
    return blender_fixtures.speeds_per_cycle(hips[:, :2], target, np.subtract(lefts, lefts[0]), fps, unit)


@pytest.mark.parametrize("which", ["cmu", "bandai"])
def test_the_baked_speed_follows_the_keyed_curve_within_2_percent_a_cycle(which, scene, stride):
    obj = cmu_gaits(stride) if which == "cmu" else bandai_gaits()
    fps, names = (120.0, CMU) if which == "cmu" else (30.0, BANDAI)
    seconds = 10.0
    # The animator keys Speed (I over the field) in the armature's active action: slow, fast, slower.
    keys = [(0.0, 1.3), (4.0, 2.5), (10.0, 1.5)] if which == "cmu" else [(0.0, 1.4), (5.0, 4.0), (10.0, 2.0)]
    for t, v in keys:
        obj.stride.speed = v
        assert obj.keyframe_insert("stride.speed", frame=1 + round(t * fps))
    source, fc = stride.jobs.speed_curve(obj)
    assert fc is not None and source == obj.animation_data.action
    frames = 1 + np.arange(round(seconds * fps) + 1)
    curve = np.array([fc.evaluate(float(f)) for f in frames])
    assert bpy.ops.stride.bake_blend_space(speed_mode="CURVE", duration=seconds) == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name.endswith("blend space (curve)")
    want = blendspace.blend_space(takes(names), ((frames - 1) / fps, curve), seconds, fps=fps, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    # The curve goes with the bake (the Graph Editor shows it with the result), keys and handles alike.
    copied = speed_fcurve(stride, obj, action)
    np.testing.assert_array_equal(stride.compat.read_keys(copied), stride.compat.read_keys(fc))
    # As Blender plays it: the hips' speed per cycle against the curve over the same span.
    per_cycle = played_speeds(stride, obj, action, UNIT[which])
    assert len(per_cycle) >= 8
    err = np.abs(per_cycle[:, 0] / per_cycle[:, 1] - 1.0)
    assert err.max() <= 0.02, per_cycle
    assert np.ptp(per_cycle[:, 1]) > 0.8  # the curve does change speed


def test_speed_is_keyed_on_the_armature_where_the_graph_editor_shows_it(scene, stride):
    obj = cmu_gaits(stride)
    take = obj.animation_data.action  # the jog, the last gait added: its bone keys
    read = stride.bridge.action_to_clip(obj, take)
    assert bpy.types.Object.bl_rna.properties["stride"].fixed_type.properties["speed"].is_animatable
    for frame, value in ((1, 1.5), (121, 2.5)):
        obj.stride.speed = value
        assert obj.keyframe_insert("stride.speed", frame=frame)
    adt = obj.animation_data
    # In the action the armature plays, its slot's curves (4.4+: the slot assigned, which the Graph
    # Editor lists for the object), beside the bones' keys.
    curves = stride.compat.fcurves(adt.action, stride.compat.action_slot(adt.action, obj))
    (fc,) = [c for c in curves if c.data_path == "stride.speed"]
    assert any(c.data_path.startswith("pose.bones[") for c in curves)
    np.testing.assert_allclose(stride.compat.read_keys(fc), [[1.0, 1.5], [121.0, 2.5]])
    # Blender plays it: the property follows the curve.
    for frame in (1, 61, 121):
        bpy.context.scene.frame_set(frame)
        assert obj.stride.speed == pytest.approx(fc.evaluate(frame), abs=1e-6)
    # The take reads as before (a Speed curve moves no bone) and is still a gait.
    again = stride.bridge.action_to_clip(obj, take)
    np.testing.assert_array_equal(again.rotations, read.rotations)
    # After a bake the result plays the Speed it was baked at; the take keeps its curve.
    assert bpy.ops.stride.bake_blend_space(speed_mode="CURVE", duration=1.0) == {"FINISHED"}
    assert obj.animation_data.action != take
    bpy.context.scene.frame_set(61)
    assert obj.stride.speed == pytest.approx(fc.evaluate(61), abs=1e-6)
    np.testing.assert_allclose(stride.compat.read_keys(fc), [[1.0, 1.5], [121.0, 2.5]])


def test_an_unkeyed_speed_bakes_at_its_value_and_says_so(scene, stride):
    obj = cmu_gaits(stride)
    obj.stride.speed = 2.0
    assert bpy.ops.stride.bake_blend_space(speed_mode="CURVE", duration=1.0) == {"FINISHED"}
    said = [s.message for s in reports.SAID if s.test.endswith("bakes_at_its_value_and_says_so")]
    assert ("the Speed of '02_01' is not keyed in its action '02_03': baked at its value, 2.00 m/s, all "
            "along; key it over time (the Graph Editor shows it) for a speed that changes") in said
    want = blendspace.blend_space(takes(CMU), 2.0, 1.0, fps=120.0, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(obj, obj.animation_data.action), want)


def test_undo_leaves_the_scene_as_before(scene, stride):
    bpy.ops.ed.undo_push(message="empty")
    scene.render.fps = 120
    for name in CMU:
        assert bpy.ops.stride.import_bvh("EXEC_DEFAULT", True, filepath=str(cmu_path(name))) == {"FINISHED"}
    walk = bpy.data.objects["02_01"]
    walk.select_set(True)
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.gaits_from_selected("EXEC_DEFAULT", True) == {"FINISHED"}
    bpy.ops.ed.undo_push(message="before the bake")
    actions = sorted(a.name for a in bpy.data.actions)
    gaits = gaits_of(walk)
    assert bpy.ops.stride.bake_blend_space("EXEC_DEFAULT", True, speed=2.0, duration=2.0) == {"FINISHED"}
    assert len(bpy.data.actions) == len(actions) + 1
    bpy.ops.ed.undo()
    walk = bpy.data.objects["02_01"]  # every reference is stale after undo
    assert sorted(a.name for a in bpy.data.actions) == actions
    assert walk.animation_data.action.name == "02_01" and gaits_of(walk) == gaits
    bpy.ops.ed.undo()  # to the step pushed before the bake, then before the gaits were added
    bpy.ops.ed.undo()
    assert gaits_of(bpy.data.objects["02_01"]) == []


def refused(call):
    """What the user reads of a refused call: the report, or the button's poll message."""
    with pytest.raises(RuntimeError) as exc:
        call()
    said = str(exc.value).split(".poll() ", 1)[-1].removeprefix("Error: ").strip()
    assert reports.problems(said) == [], said
    return said


def test_errors_say_what_is_wrong_in_the_uis_words_and_leave_nothing(scene, stride):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    walk = bpy.data.objects["02_01"]
    # No gaits, one gait: the button says why (its poll), and so does the job.
    assert "'02_01' has no gaits to blend: add the actions of a walk, a run, ... in the Gaits panel (Add " \
           "Gait, or Gaits from Selected" in refused(bpy.ops.stride.bake_blend_space)
    assert "'02_01' has no gaits to remove" in refused(bpy.ops.stride.gait_remove)
    assert bpy.ops.stride.gait_add() == {"FINISHED"}
    assert "'02_01' has one gait ('02_01'): a blend space blends two or more" in \
        refused(bpy.ops.stride.bake_blend_space)
    with pytest.raises(stride.jobs.JobError, match="has one gait"):
        stride.jobs.bake_blend_space(walk, options=stride.options.BlendSpaceOptions())
    # A gait of another subject (the same bones, other lengths): refused naming the bone, unless allowed.
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("09_01"))) == {"FINISHED"}
    bpy.context.view_layer.objects.active = walk
    walk.select_set(True)
    assert bpy.ops.stride.gaits_from_selected() == {"FINISHED"}
    actions = sorted(a.name for a in bpy.data.actions)
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed=1.5))
    assert said.startswith("gait '09_01': bone '") and said.endswith(
        "or combine them anyway (Allow Mismatch)"), said
    assert sorted(a.name for a in bpy.data.actions) == actions
    # Speeds out of reach name the range and the gaits.
    assert bpy.ops.stride.bake_blend_space(speed=1.25, duration=0.5, allow_mismatch=True) == {"FINISHED"}
    assert sorted(a.name for a in bpy.data.actions) != actions
    actions = sorted(a.name for a in bpy.data.actions)
    speeds = blendspace.gait_speeds(takes(["02_01", "09_01"]))
    lo, hi = 0.7 * speeds.min(), 1.3 * speeds.max()
    for kwargs, says in (({"speed": 9.0}, "Speed 9 m/s is outside the speeds the gaits reach"),
                         ({"speed_mode": "RAMP", "ramp_to": 6.0}, "Ramp To 6 m/s is outside")):
        said = refused(lambda kwargs=kwargs: bpy.ops.stride.bake_blend_space(allow_mismatch=True, **kwargs))
        assert says in said and f"{lo:.2f}-{hi:.2f} m/s ('" in said, said
    walk.stride.speed = 1.2
    walk.keyframe_insert("stride.speed", frame=1)
    walk.stride.speed = 9.0
    walk.keyframe_insert("stride.speed", frame=241)
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed_mode="CURVE", allow_mismatch=True))
    assert "the armature's Speed, keyed, reaches " in said and " m/s at frame " in said, said
    # A gait's action made for other bones than the armature's, or gone.
    gait = walk.stride.gaits.add()
    gait.action = bpy.data.actions.new("nothing")
    walk.stride.gaits.remove(1)  # 09_01
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed=1.5))
    assert "action 'nothing' has no keys" in said, said
    bpy.data.actions.remove(bpy.data.actions["nothing"])
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed=1.5))
    assert "gait 2 of '02_01' has no action: choose one in the Gaits list, or remove it" in said, said
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("131_01"))) == {"FINISHED"}
    actions = sorted(a.name for a in bpy.data.actions)
    bpy.context.view_layer.objects.active = walk
    walk.stride.gaits[1].action = bpy.data.actions["131_01"]
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed=1.5))
    assert "which action '131_01' animates: it was made for another skeleton" in said, said
    walk.stride.gaits[1].armature = bpy.data.objects["131_01"]  # read on its own armature: other bones
    said = refused(lambda: bpy.ops.stride.bake_blend_space(speed=1.5))
    assert "gait '131_01' cannot play on '02_01'" in said, said
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_bakes_report_progress_and_survive_saving(scene, stride, tmp_path):
    obj = cmu_gaits(stride)
    seen: list[float] = []
    options = stride.options.BlendSpaceOptions(speed=2.0, duration=2.0)
    action, baked = stride.jobs.bake_blend_space(obj, options=options, progress=seen.append)
    assert seen[0] == 0.5 and 0.9 < seen[-1] <= 1.0 and len(seen) > 10
    assert all(b >= a for a, b in itertools.pairwise(seen))
    name = action.name
    stride.compat.assign(obj, bpy.data.actions["02_01"])  # the armature plays a take again
    path = tmp_path / "gaits.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["02_01"]
    assert name in bpy.data.actions and gaits_of(obj) == [("02_01", None), ("02_03", None)]
    assert len(steps_of(bpy.data.actions[name])) == sum(len(v) for v in baked.clip.events.values())


def test_cli_blend_space_writes_a_bvh_that_reads_back_at_the_speed_asked(scene, stride, tmp_path, capsys):
    out = tmp_path / "ramp.bvh"
    files = [str(bandai_path(n)) for n in BANDAI]
    assert stride.cli.main(["blend-space", *files, "--speed", "0:1.4,5:4,10:2", "--duration", "10",
                            "--out", str(out)]) == 0
    assert "stride: gaits at 'dataset-1_walk_normal_001' 1.26, " in capsys.readouterr().out
    keys = (np.array([0.0, 5.0, 10.0]), np.array([1.4, 4.0, 2.0]))
    want = blendspace.blend_space(takes(BANDAI), keys, 10.0, lock_feet=True)
    got = bvh.load(out)
    assert got.n_frames == want.n_frames == 301 and got.fps == 30.0
    assert np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-9 * want.height
    # Measured on the file as read back: the hips' travel per cycle, between left touchdowns found
    # on its own feet, against the keys' mean over the same span.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lefts = contacts.footsteps(got)["FootDown_L"]
    hips = got.fk()[1][:, got.names.index("Hips")]
    floor = hips - np.outer(hips @ got.up, got.up)
    target = np.interp(np.arange(got.n_frames) / got.fps, *keys)
    at = np.round(lefts * got.fps).astype(int)
    per_cycle = blender_fixtures.speeds_per_cycle(floor, target, at, got.fps, UNIT["bandai"])
    err = np.abs(per_cycle[:, 0] / per_cycle[:, 1] - 1.0)
    assert len(err) >= 8 and err.max() <= 0.02, err
    # A .blend: the slowest take's armature with the baked action, its markers and its speed keys.
    blend = tmp_path / "constant.blend"
    assert stride.cli.main(["blend-space", *files, "--speed", "2.5", "--duration", "4", "--no-lock-feet",
                            "--out", str(blend)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    obj = bpy.data.objects[BANDAI[0]]
    action = obj.animation_data.action
    assert action.name == "dataset-1_walk_normal_001 blend space (constant)" and action.use_fake_user
    want = blendspace.blend_space(takes(BANDAI), 2.5, 4.0)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    assert len(steps_of(action)) == sum(len(v) for v in want.events.values())
    np.testing.assert_allclose(stride.compat.read_keys(speed_fcurve(stride, obj, action)),
                               [[1.0, 2.5], [121.0, 2.5]])


def test_cli_blend_space_errors_name_the_flag(scene, stride, tmp_path, capsys):
    walk, run = str(cmu_path("02_01")), str(cmu_path("02_03"))
    out = str(tmp_path / "x.bvh")
    assert stride.cli.main(["blend-space", walk, "--speed", "1.5", "--duration", "2", "--out", out]) == 1
    assert "error: one gait ('02_01'): a blend space blends two or more; give two or more " \
           "GAIT.bvh takes of one skeleton" in capsys.readouterr().err
    assert stride.cli.main(["blend-space", walk, run, "--speed", "9", "--duration", "2", "--out", out]) == 1
    err = capsys.readouterr().err
    assert "stride blend-space: error: --speed 9 m/s is outside the speeds the gaits reach, " in err
    assert stride.cli.main(["blend-space", walk, run, "--speed", "0:1.5,2:9", "--duration", "2",
                            "--out", out]) == 1
    assert "error: --speed reaches " in capsys.readouterr().err
    assert stride.cli.main(["blend-space", walk, str(cmu_path("09_01")), "--speed", "1.5", "--duration", "2",
                            "--out", out]) == 1
    assert "or combine them anyway (--allow-mismatch)" in capsys.readouterr().err
    assert stride.cli.main(["blend-space", walk, run, "--speed", "fast", "--duration", "2",
                            "--out", out]) == 2
    assert not (tmp_path / "x.bvh").exists()


class Layout:
    """A stand-in for Blender's UILayout (panels draw only in a window): records what is laid out,
    and checks that each property drawn is one of its data's."""

    def __init__(self, said):
        self.said = said

    def _sub(self, *args, **kwargs):
        return Layout(self.said)

    row = column = box = _sub

    def separator(self, *args, **kwargs):
        pass

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, name
        self.said.append(("prop", name))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        assert name in data.bl_rna.properties and search_name in search_data.bl_rna.properties, name
        self.said.append(("prop", name))

    def label(self, text="", **kwargs):
        self.said.append(("label", text))

    def operator(self, idname, **kwargs):
        self.said.append(("operator", idname))
        return type("Button", (), {})()

    def template_list(self, kind, list_id, data, name, active_data, active, **kwargs):
        assert kind in dir(bpy.types) and name in data.bl_rna.properties
        assert active in active_data.bl_rna.properties
        self.said.append(("list", name))


def test_the_gaits_panel_lists_the_gaits_slowest_first_and_lays_out_the_bake(scene, stride):
    walk = bandai_gaits()
    walk.stride.gaits.move(0, 2)  # listed in another order than their speeds: dash, run... walk last
    said: list = []
    panel = type("Panel", (), {"layout": Layout(said)})()
    for mode in ("CONSTANT", "RAMP", "CURVE"):
        scene.stride.speed_mode = mode
        stride.panels.VIEW3D_PT_stride_gaits.draw(panel, bpy.context)
    shown = [what for kind, what in said if kind == "prop"]
    laid_out = {"speed_mode", "space_speed", "ramp_from", "ramp_to", "speed", "space_duration", "lock_feet"}
    assert laid_out <= set(shown)
    assert ("list", "gaits") in said and ("operator", "stride.bake_blend_space") in said
    assert ("label", "Not keyed: hover over Speed, press I") in said
    # The list's rows: each gait's action, speed and cycle; drawn slowest first.
    rows: list = []
    lister = stride.panels.STRIDE_UL_gaits
    for i, gait in enumerate(walk.stride.gaits):
        lister.draw_item(None, bpy.context, Layout(rows), walk.stride, gait, 0, walk.stride, "gait_index", i)
    speeds = blendspace.gait_speeds(takes([g.action.name for g in walk.stride.gaits]))
    assert [text for kind, text in rows if kind == "label" and text.endswith("m/s")] == \
        [f"{v:.2f} m/s" for v in speeds]
    _, places = lister.filter_items(None, bpy.context, walk.stride, "gaits")
    assert [walk.stride.gaits[i].action.name for i in np.argsort(places)] == BANDAI
