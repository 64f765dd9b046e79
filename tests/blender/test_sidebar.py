"""The Stride sidebar: polls say what is missing, previews equal what the bakes then produce, a
Curve weight keys a curve to edit, Foot Speed takes any value in its range, and the core's
warnings reach the operators' reports and the CLI's stderr."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from fixtures import cmu_path
from test_bridge import assert_same_motion

from core import bvh, contacts, events, footlock, sync, transition


def operators():
    return sorted(name for name in dir(bpy.ops.stride) if not name.startswith("_"))


def panel_polls(stride):
    """{panel class name: its poll in the current context}, as Blender calls it."""
    return {cls.__name__: getattr(bpy.types, cls.__name__).poll(bpy.context) for cls in stride.panels.CLASSES}


def is_sub_panel(cls):
    return "bl_parent_id" in vars(cls)


def test_with_no_armature_only_import_runs_and_every_sub_panel_hides(scene, stride):
    for name in operators():
        assert getattr(bpy.ops.stride, name).poll() == (name == "import_bvh"), name
    subs = [cls for cls in stride.panels.CLASSES if is_sub_panel(cls)]
    assert len(subs) == len(stride.panels.CLASSES) - 1 == 13
    assert panel_polls(stride) == {cls.__name__: not is_sub_panel(cls) for cls in stride.panels.CLASSES}
    assert not bpy.types.VIEW3D_PT_stride_rig.poll(bpy.context)
    # The Stride panel says why; a button run anyway says it too (its poll message).
    lines = stride.panels.status(bpy.context)
    assert " ".join(text for text, _ in lines) == \
        "No armature in the scene: import a BVH file or select an armature first"
    with pytest.raises(RuntimeError, match=r"poll\(\) No armature in the scene"):
        bpy.ops.stride.bake_sync_blend()


def test_the_panels_lay_out_every_setting_and_every_operator(stride):
    # Panels draw only in a window; what they lay out is read from their source instead.
    source = inspect.getsource(stride.panels) + inspect.getsource(stride.rig)  # the Rig panel is rig's
    laid_out = set(re.findall(r'(?:\.prop|\.prop_search|_time_row)\((?:col, )?s, "(\w+)"', source))
    settings = {p.identifier for p in bpy.types.Scene.bl_rna.properties["stride"].fixed_type.properties}
    assert laid_out == settings - {"rna_type", "name"}
    assert set(re.findall(r'"stride\.(\w+)"', source)) == set(operators())


def test_polls_say_what_is_missing(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    action = walk.animation_data.action
    walk.animation_data.action = None
    assert not bpy.ops.stride.detect_footsteps.poll()
    with pytest.raises(RuntimeError, match=r"poll\(\) '02_01' has no action: import a BVH take"):
        bpy.ops.stride.lock_feet()
    polls = panel_polls(stride)
    assert polls.pop("VIEW3D_PT_stride_nla") and polls.pop("VIEW3D_PT_stride")  # the armature is enough
    assert polls.pop("VIEW3D_PT_stride_gaits")  # gaits may be other armatures' actions
    assert polls.pop("VIEW3D_PT_stride_path")  # so may the gaits a path is walked with
    assert not any(polls.values())
    texts = [text for text, _ in stride.panels.status(bpy.context)]
    assert texts[0] == "02_01"
    assert " ".join(texts[1:]) == ("'02_01' has no action: import a BVH take, or assign an action in the "
                                   "Action Editor")
    stride.compat.assign(walk, action)
    # One action: Events run, and a transition (into another time of the take); a blend needs a
    # second action; the NLA bake needs strips.
    assert all(panel_polls(stride).values())
    assert bpy.ops.stride.detect_footsteps.poll() and bpy.ops.stride.pick_time.poll()
    assert bpy.ops.stride.bake_transition.poll() and not bpy.ops.stride.bake_sync_blend.poll()
    with pytest.raises(RuntimeError, match=r"poll\(\) No second action to blend with"):
        bpy.ops.stride.bake_sync_blend()
    with pytest.raises(RuntimeError, match=r"poll\(\) '02_01' has no NLA tracks: push actions down"):
        bpy.ops.stride.bake_nla_track()
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.bake_transition.poll() and bpy.ops.stride.bake_sync_blend.poll()
    with pytest.raises(RuntimeError, match=r"poll\(\) Choose a Target action first"):
        bpy.ops.stride.find_target_time()
    scene.stride.target_action = "02_03"
    assert bpy.ops.stride.find_target_time.poll()
    assert stride.panels.status(bpy.context) == [("02_01", "ARMATURE_DATA"), ("02_01", "ACTION")]


def cycles():
    """The straightened walk and run cycles a bake of whole cycles blends, from the files."""
    return tuple(sync.loop_cycle(bvh.load(cmu_path(name)), straighten=True) for name in ("02_01", "02_03"))


def walk_and_run(scene):
    """Blender's importer: armature '02_01' (active) and action '02_03', scene at 120 fps."""
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    return walk


def test_the_events_preview_is_what_detect_footsteps_finds(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    options = stride.properties.settings_options(stride.options.FootstepOptions, scene.stride)
    preview = stride.jobs.preview_footsteps(walk, options=options)
    assert preview.action == "02_01" and not preview.problem
    assert stride.jobs.preview_footsteps(walk, options=options) is preview  # kept between redraws
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    found = walk.animation_data.action["stride_events"]
    assert preview.steps == {track: len(found[track]) for track in ("FootDown_L", "FootDown_R")}
    times = np.sort(np.concatenate([found["FootDown_L"], found["FootDown_R"]]))
    assert preview.cadence == pytest.approx(60.0 * (len(times) - 1) / (times[-1] - times[0]))
    left, right = preview.steps["FootDown_L"], preview.steps["FootDown_R"]
    assert stride.panels.footstep_lines(preview) == [
        f"{left + right} steps (L {left}, R {right}), {preview.cadence:.0f} steps/min"]
    # Kept by the options too: another Foot Speed is another preview.
    assert stride.jobs.preview_footsteps(walk, options=dataclasses.replace(options, speed_mps=2.0)) != preview


def baked_speed(stride, obj, action, source):
    """Travel speed (m/s) of a baked loop: its root's displacement on the floor from the first key
    to the last (one loop on) over its duration, in the source's units."""
    got = stride.bridge.action_to_clip(obj, action)
    root = got.positions[:, got.root]
    step = root[-1] - root[0]
    step = step - (step @ got.up) * got.up
    return float(np.linalg.norm(step)) * source.meters_per_unit / got.duration, got


@pytest.mark.parametrize("weight", [{"weight_mode": "CONSTANT", "weight": 0.25},
                                    {"weight_mode": "SPEED", "target_speed": 2.0}])
def test_the_sync_preview_is_what_the_bake_produces(weight, scene, stride):
    walk = walk_and_run(scene)
    s = scene.stride
    s.action_b, s.duration, s.duration_unit = "02_03", 1.0, "CYCLES"  # one closed loop: one cycle
    for name, value in weight.items():
        setattr(s, name, value)
    options = stride.properties.settings_options(stride.options.SyncOptions, s)
    preview = stride.jobs.preview_sync(walk, options=options)
    assert not preview.problem
    # Each action's cycle is the core's (straightened: the bake is one loop).
    for cycle, name, want in zip((preview.a, preview.b), ("02_01", "02_03"), cycles(), strict=True):
        assert cycle.action == name
        assert cycle.seconds == pytest.approx(want.n_frames / want.fps, abs=1e-9)
        assert cycle.steps == {k: len(v) for k, v in contacts.footsteps(bvh.load(cmu_path(name))).items()}
    slow, fast = preview.speed_range
    assert slow < preview.speed_mps < fast
    if s.weight_mode == "SPEED":
        # The weight is the one that travels at Speed by the strides' lengths (sync.weight_for_speed);
        # the preview says what the blend then travels, within the core's 2 % of it.
        loop_a, loop_b = cycles()
        want = sync.weight_for_speed(loop_a, loop_b, 2.0)
        assert preview.weight == pytest.approx(want, rel=1e-6)  # float32 keys
        assert preview.speed_mps == pytest.approx(2.0, rel=0.02)
    else:
        assert preview.weight == 0.25
    # The button bakes these options: one loop as long as the preview's cycle, at its speed.
    assert bpy.ops.stride.bake_sync_blend(**dataclasses.asdict(options)) == {"FINISHED"}
    source = stride.bridge.action_to_clip(walk, bpy.data.actions["02_01"])
    speed, got = baked_speed(stride, walk, walk.animation_data.action, source)
    assert got.duration == pytest.approx(preview.cycle_seconds, abs=1e-6)
    assert speed == pytest.approx(preview.speed_mps, rel=1e-5)  # float32 keys
    lines = stride.panels.sync_lines(preview, 120.0)
    assert lines[2] == (f"Weight {preview.weight:.3f}: cycle {preview.cycle_seconds:.3f} s "
                        f"({preview.cycle_seconds * 120:.1f} fr), {preview.speed_mps:.2f} m/s")
    assert lines[3] == f"Speeds {slow:.2f} - {fast:.2f} m/s"


def test_the_sync_preview_says_what_stops_the_bake(scene, stride):
    walk = walk_and_run(scene)
    s = scene.stride
    options = stride.properties.settings_options(stride.options.SyncOptions, s)
    assert stride.jobs.preview_sync(walk, options=options).problem == "choose action B to blend with"
    s.action_b, s.weight_mode, s.target_speed = "02_03", "SPEED", 20.0
    options = stride.properties.settings_options(stride.options.SyncOptions, s)
    preview = stride.jobs.preview_sync(walk, options=options)
    assert "20 m/s is outside the reachable range" in preview.problem
    with pytest.raises(RuntimeError, match="20 m/s is outside the reachable range"):
        bpy.ops.stride.bake_sync_blend(**dataclasses.asdict(options))


def test_choosing_a_curve_weight_keys_one_to_edit(scene, stride):
    walk = walk_and_run(scene)
    scene.frame_start, scene.frame_end = 1, 100  # the ramp spans the bake, whatever the scene's range
    s = scene.stride
    s.action_b, s.duration = "02_03", 2.0
    assert stride.jobs.WEIGHT_PROPERTY not in walk.keys()
    s.weight_mode = "CURVE"
    assert stride.jobs.WEIGHT_PROPERTY in walk.keys()
    fc = stride.bridge.property_curve(walk, bpy.data.actions["02_01"], stride.jobs.WEIGHT_PROPERTY)
    np.testing.assert_array_equal(stride.compat.read_keys(fc), [[1.0, 0.0], [241.0, 1.0]])
    # Eased in and out, as two keys are in Blender by default.
    assert fc.evaluate(21.0) < 0.05 and fc.evaluate(121.0) == pytest.approx(0.5, abs=1e-6)
    # The animator's edit stays when Curve is chosen again.
    fc.keyframe_points[1].co.y = 0.5
    fc.update()
    s.weight_mode = "CONSTANT"
    s.weight_mode = "CURVE"
    np.testing.assert_array_equal(stride.compat.read_keys(fc), [[1.0, 0.0], [241.0, 0.5]])
    preview = stride.jobs.preview_sync(walk, options=stride.properties.settings_options(
        stride.options.SyncOptions, s))
    assert not preview.problem and np.isnan(preview.cycle_seconds)  # no one weight, but the range
    assert stride.panels.sync_lines(preview, 120.0)[-1].startswith("Speeds ")
    assert bpy.ops.stride.bake_sync_blend(action_b="02_03", weight_mode="CURVE", duration=2.0) == {"FINISHED"}
    a = sync.loop_cycle(bvh.load(cmu_path("02_01")))
    b = sync.loop_cycle(bvh.load(cmu_path("02_03")))
    times = np.arange(241) / 120  # the edited curve as Blender evaluates it at each frame baked
    want = sync.sync_blend(a, b, (times, np.array([fc.evaluate(1.0 + 120 * t) for t in times])), 2.0,
                           lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(walk, walk.animation_data.action), want)


# The core's keyword names with an underscore: a user of the sidebar or the CLI never sees them.
INTERNAL = sorted({p for f in (contacts.contacts, contacts.footsteps, contacts.thresholds, footlock.lock_feet,
                               events.encode, transition.dead_blend, sync.sync_blend, sync.loop_cycle)
                   for p in inspect.signature(f).parameters if "_" in p})


@pytest.mark.parametrize("speed", [1.0, 2.0, 3.5, 5.0])
def test_foot_speed_one_to_five_is_accepted_and_no_message_names_an_internal(speed, scene, stride, capfd,
                                                                           tmp_path):
    assert {"speed_mps", "exit_mps", "lower_pelvis"} <= set(INTERNAL)
    scene.render.fps = 120
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    for operator in ("detect_footsteps", "write_event_curves", "lock_feet"):
        assert getattr(bpy.ops.stride, operator)(speed_mps=speed) == {"FINISHED"}, operator
    run = str(cmu_path("02_03"))
    assert stride.cli.main(["events", run, "--speed", str(speed), "--out", str(tmp_path / "e.blend")]) == 0
    assert stride.cli.main(["lock-feet", run, "--speed", str(speed), "--out", str(tmp_path / "l.bvh")]) == 0
    said = capfd.readouterr()
    messages = said.out + said.err
    assert "Info: 02_03" in messages  # the reports were read
    named = [name for name in INTERNAL if name in messages]
    assert not named, (named, messages)


def test_core_warnings_are_collected_once_in_user_words(stride):
    with stride.jobs.core_warnings() as warned:
        for _ in range(2):
            warnings.warn("the feet disagree", contacts.ContactWarning, stacklevel=1)
        warnings.warn("a foot could not reach its lock. lower_pelvis=True lowers the pelvis instead",
                      footlock.FootLockWarning, stacklevel=1)
    assert warned == ["the feet disagree", "a foot could not reach its lock"]


def test_a_core_warning_inside_an_operator_shows_in_its_reports_and_on_the_cli(scene, stride, capfd,
                                                                               tmp_path):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    action = walk.animation_data.action
    for frame in (50, 55):  # 5 frames apart: closer than the smoothing reaches
        action.pose_markers.new("Hit").frame = frame
    capfd.readouterr()
    assert bpy.ops.stride.write_event_curves(tracks="Hit") == {"FINISHED"}
    out = capfd.readouterr().out
    warned = re.findall(r"Warning: (1 events decode exactly for less than .*)", out)
    assert len(warned) == 1 and "smoothing blends their encodings" in warned[0], out
    blend = tmp_path / "hits.blend"
    stride.jobs.save_blend(blend)
    assert stride.cli.main(["events", str(blend), "--out", str(tmp_path / "out.blend")]) == 0
    err = capfd.readouterr().err
    assert f"stride events: warning: {warned[0]}" in err


def test_contact_doubts_show_as_warnings_naming_frames(scene, stride, capfd):
    """A take whose feet step twice in a row (01_01's jumps land one foot first) reports its
    footsteps as a Warning, not Info, with the frames."""
    scene.render.fps = 120
    blender_import(cmu_path("01_01"), rotate_mode="QUATERNION")
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    out = capfd.readouterr().out
    assert re.search(r"Warning: 01_01: .*steps twice in a row .*at frames \d+ and \d+", out), out
