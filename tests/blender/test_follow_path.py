"""Walk Along Path in Blender (issue 43): CMU subject 02's walk and jog imported in meters onto one
armature as its gaits, walked along a Bezier circle on a turned, scaled and moved object and along a
curve at the armature's keyed Speed; the baked action against the core's `path.follow` on the same
points (read in the armature's space by hand) to float32, its hips as Blender plays them (frame_set)
against the curve within part 1's bounds, its footstep markers from the current frame, a fake user,
saving and reopening, undo, warnings with the frame and errors in the UI's words; `stride
follow-path` writing a BVH (read back and measured) and a .blend."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools
import math
import re
import warnings

import blender_fixtures
import bpy
import numpy as np
import pytest
import reports
from blender_fixtures import steps_of
from fixtures import cmu_path, take_path
from mathutils import geometry
from played import played
from test_blendspace import Layout, refused, speed_fcurve
from test_bridge import assert_same_motion

from core import blendspace, bvh, contacts, path, units

CMU = ["02_01", "02_03"]
SCALE = units.CMU_UNIT_M  # the import's scale (CMU to meters): the armature in meters
# Part 1's bounds: the smoothed hips to the smoothed path, mean and most (meters).
PATH_MEAN_M, PATH_MAX_M = 0.03, 0.08
# Locked legs on these takes fall short of a few plants (the core warns); what is checked is the motion.
pytestmark = pytest.mark.filterwarnings("ignore:.*could not reach its lock")


def takes():
    return [bvh.load(cmu_path(n)) for n in CMU]


def gaits(stride, fps=120):
    """02_01 (walk) and 02_03 (jog) imported in meters onto one armature, each added as a gait while
    it is the active action (Add Gait); the scene at `fps`."""
    options = stride.options.ImportOptions(scale_preset="CMU_TO_METERS", update_scene_fps=False)
    obj = blender_fixtures.cmu_gaits(stride, options)
    bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = fps, 1.0
    return obj


def circle(radius=1.0, scale=3.0, turn=0.6, at=(2.0, -1.0, 0.0)):
    """Blender's Bezier circle (radius 1 in its data) on an object scaled, turned about Z and moved."""
    bpy.ops.curve.primitive_bezier_circle_add(radius=radius)
    obj = bpy.context.active_object
    obj.scale = (scale, scale, scale)
    obj.rotation_euler = (0.0, 0.0, turn)
    obj.location = at
    bpy.context.view_layer.update()
    return obj


def in_clip_space(world, scale=SCALE):
    """World points (meters, Blender's Z up) in the armature's clip space by hand: Blender's BVH
    importer (forward -Z, up Y) put BVH (x, y, z) at world (x, -z, y) times its scale (meters per
    file unit)."""
    world = np.asarray(world, dtype=np.float64)
    return np.stack([world[:, 0], world[:, 2], -world[:, 1]], axis=-1) / scale


def hips_played(obj, action, frames):
    """[n, 2] the hips' world floor position (meters) as Blender plays the action, frame by frame."""
    obj.animation_data.action = action
    return (np.array(obj.matrix_world) @ played(obj, frames, ["Hips"])[:, 0])[:, :2, 3]


def to_polyline(points, line):
    """[n] the distance of each point [n, 3] to the polyline `line` [m, 3] (its segments)."""
    a, ab = line[:-1], np.diff(line, axis=0)
    out = np.empty(len(points))
    for i, p in enumerate(points):
        t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-30), 0, 1)
        out[i] = np.linalg.norm(a + t[:, None] * ab - p, axis=-1).min()
    return out


def moving_average(x, width):
    """x [T, ...] averaged over the centered window of `width` frames (odd) around each frame; the
    frames whose window leaves the clip are left out."""
    k = int(width) // 2 * 2 + 1
    sums = np.cumsum(np.concatenate([np.zeros((1, *x.shape[1:])), x]), axis=0)
    return (sums[k:] - sums[:-k]) / k


def circle_errors(hips, center, radius, cycle, fps):
    """Part 1's path error on a circle, worked by hand: the hips' floor path smoothed by a centered
    moving average over a cycle (`cycle` frames), against the circle smoothed alike (a point
    going round at the hips' angular speed w, averaged over T seconds, stays on a circle of
    radius R sin(w T / 2) / (w T / 2)): the lateral distance of each smoothed point (meters)."""
    smooth = moving_average(hips, cycle)
    angle = np.unwrap(np.arctan2(hips[:, 1] - center[1], hips[:, 0] - center[0]))
    w = abs(angle[-1] - angle[0]) / (len(angle) - 1) * fps
    half = w * (int(cycle) // 2 * 2 + 1) / fps / 2.0
    return np.abs(np.linalg.norm(smooth - center, axis=-1) - radius * math.sin(half) / half)


def test_a_bezier_circle_on_a_turned_scaled_object_is_walked_as_the_core_walks_it(scene, stride):
    obj = gaits(stride)
    ring = circle()
    scene.frame_current = 10
    before = {a.name for a in bpy.data.actions}
    assert bpy.ops.stride.follow_path(target=ring.name) == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name == f"02_01 along {ring.name}" and action.use_fake_user
    assert {a.name for a in bpy.data.actions} == before | {action.name}
    # The curve's points, as Blender itself interpolates its Bezier segments, on the 3 m circle
    # where the object puts it.
    world = stride.jobs.curve_points(ring)
    spline = ring.data.splines[0]
    m = ring.matrix_world
    sampled = []
    for i in range(4):
        a, b = spline.bezier_points[i], spline.bezier_points[(i + 1) % 4]
        segment = geometry.interpolate_bezier(a.co, a.handle_right, b.handle_left, b.co, 2000)
        sampled += [m @ v for v in segment]
    dense = np.array(sampled)
    gap = to_polyline(world, dense)
    assert gap.max() < 5e-5 and np.allclose(world[[0, -1]], dense[[0, 0]], atol=1e-5), gap.max()
    radius = np.linalg.norm(world[:, :2] - [2.0, -1.0], axis=-1)
    assert np.abs(radius - 3.0).max() < 0.01  # a Bezier circle is one within 0.03 % of its radius
    # The bake is the core's walk along those points in the armature's space, from frame 10.
    speeds = blendspace.gait_speeds(takes())
    want = path.follow(takes(), in_clip_space(world), float(speeds.min()), fps=120.0, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    marks = steps_of(action)
    assert marks == sorted((10 + round(t * 120), k) for k, v in want.events.items() for t in v)
    # From the current frame: the keys, and a left touchdown first (phase 0 of the gaits).
    assert tuple(action.frame_range) == (10.0, 10.0 + want.n_frames - 1)
    assert 10 <= marks[0][0] <= 10 + 0.1 * 120 and marks[0][1] == "FootDown_L"
    # As Blender plays it: the hips follow the circle within part 1's bounds.
    frames = np.arange(10, 10 + want.n_frames)
    hips = hips_played(obj, action, frames)
    lefts = [f for f, n in marks if n == "FootDown_L"]
    lateral = circle_errors(hips, np.array([2.0, -1.0]), 3.0, np.median(np.diff(lefts)), 120.0)
    assert lateral.mean() <= PATH_MEAN_M and lateral.max() <= PATH_MAX_M, (lateral.mean(), lateral.max())
    # The whole way round, back where it started.
    assert np.linalg.norm(hips[-1] - world[-1, :2]) < 0.3
    # The Speed it walked at, keyed beside the bones.
    fc = speed_fcurve(stride, obj, action)
    np.testing.assert_allclose(stride.compat.read_keys(fc)[:, 1], float(speeds.min()), rtol=1e-6)


def played_speeds(obj, action, fc):
    """Per cycle (from each FootDown_L marker of the action to the next), as Blender plays it: the
    hips' travel over the floor over the cycle's time, and the keyed Speed (`fc` as Blender
    evaluates it) averaged over the same span; m/s."""
    lefts = sorted(m.frame for m in action.pose_markers if m.name == "FootDown_L")
    frames = np.arange(lefts[0], lefts[-1] + 1)
    hips = hips_played(obj, action, frames)
    target = np.array([fc.evaluate(float(f)) for f in frames])
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    return blender_fixtures.speeds_per_cycle(hips, target, np.subtract(lefts, lefts[0]), fps)


def test_the_armatures_keyed_speed_is_walked_along_a_nurbs_path(scene, stride):
    """A NURBS path (Blender's evaluated curve) 20 m long, the Speed keyed from 1.3 m/s up to 2.5 and
    back: the bake is the core's walk at that speed per meter (the curve read on every frame from
    the current one), and as Blender plays it each cycle travels at the keyed speed within 3 %."""
    obj = gaits(stride)
    bpy.ops.curve.primitive_nurbs_path_add()
    road = bpy.context.active_object
    road.scale = (5.0, 5.0, 5.0)
    bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = obj
    scene.frame_current = 1
    for frame, value in ((1, 1.3), (481, 2.5), (1081, 1.6)):
        obj.stride.speed = value
        assert obj.keyframe_insert("stride.speed", frame=frame)
    _, fc = stride.jobs.speed_curve(obj)
    assert bpy.ops.stride.follow_path(target=road.name, speed_mode="CURVE") == {"FINISHED"}
    action = obj.animation_data.action
    world = stride.jobs.curve_points(road)
    assert np.linalg.norm(np.diff(world, axis=0), axis=-1).sum() == pytest.approx(20.0, rel=0.01)
    points = in_clip_space(world)
    length = np.linalg.norm(np.diff(world[:, :2], axis=0), axis=-1).sum()
    frames = np.arange(1, 1 + 30 * 120)
    keyed = np.array([fc.evaluate(float(f)) for f in frames])
    within = stride.recipes.blendspace.reach(blendspace.gait_speeds(takes()))
    speed = stride.recipes.path.speed_along((frames - 1) / 120.0, keyed, length, within)
    want = path.follow(takes(), points, speed, fps=120.0, lock_feet=True)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    per_cycle = played_speeds(obj, action, fc)
    assert len(per_cycle) >= 8 and np.ptp(per_cycle[:, 1]) > 0.8
    err = np.abs(per_cycle[:, 0] / per_cycle[:, 1] - 1.0)
    assert err.max() <= 0.03, per_cycle
    # The keyed curve goes with the result, as Bake Blend Space's does.
    copied = speed_fcurve(stride, obj, action)
    np.testing.assert_array_equal(stride.compat.read_keys(copied), stride.compat.read_keys(fc))


def test_the_bake_survives_saving_and_undo_leaves_the_scene_as_before(scene, stride, tmp_path):
    obj = gaits(stride)
    ring = circle(scale=2.0)
    bpy.context.view_layer.objects.active = obj
    seen: list[float] = []
    options = stride.options.FollowPathOptions(target=ring.name, speed=1.5)
    action, walked = stride.jobs.follow_path(obj, options=options, progress=seen.append)
    assert seen[0] == 0.0 and 0.9 < seen[-1] <= 1.0 and all(b >= a for a, b in itertools.pairwise(seen))
    name, marks = action.name, steps_of(action)
    assert len(marks) == sum(len(v) for k, v in walked.clip.events.items() if k.startswith("FootDown"))
    stride.compat.assign(obj, bpy.data.actions["02_01"])  # the armature plays a take again
    path_ = tmp_path / "walked.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path_)) == {"FINISHED"}
    bpy.ops.wm.open_mainfile(filepath=str(path_))
    assert name in bpy.data.actions and bpy.data.actions[name].use_fake_user
    assert steps_of(bpy.data.actions[name]) == marks
    # Undo: the operator with undo on, then back to the step before it.
    obj = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = obj
    bpy.ops.ed.undo_push(message="reopened")
    actions = sorted(a.name for a in bpy.data.actions)
    assert bpy.ops.stride.follow_path("EXEC_DEFAULT", True, target=options.target) == {"FINISHED"}
    assert len(bpy.data.actions) == len(actions) + 1
    bpy.ops.ed.undo()
    assert sorted(a.name for a in bpy.data.actions) == actions
    assert bpy.data.objects["02_01"].animation_data.action.name == "02_01"


def test_errors_say_what_to_choose_in_the_uis_words_and_leave_nothing(scene, stride):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    walk = bpy.data.objects["02_01"]
    said = refused(bpy.ops.stride.follow_path)
    assert "'02_01' has no gaits to walk with: add the action of a walk" in said, said
    assert bpy.ops.stride.gait_add() == {"FINISHED"}
    actions = sorted(a.name for a in bpy.data.actions)
    assert "choose the Target to walk along: a curve, or an object animated" in refused(
        bpy.ops.stride.follow_path)
    assert "there is no object 'Nowhere' to walk along" in refused(
        lambda: bpy.ops.stride.follow_path(target="Nowhere"))
    said = refused(lambda: bpy.ops.stride.follow_path(target="02_01"))
    assert "'02_01' is an armature: choose a curve" in said, said
    # An empty that neither is a curve nor moves: a clear error.
    empty = bpy.data.objects.new("Marker", None)
    scene.collection.objects.link(empty)
    said = refused(lambda: bpy.ops.stride.follow_path(target="Marker"))
    assert said.startswith("'Marker' is no curve"), said
    # A curve with no spline.
    bare = bpy.data.objects.new("Bare", bpy.data.curves.new("Bare", "CURVE"))
    scene.collection.objects.link(bare)
    assert "the curve 'Bare' has no spline to walk along" in refused(
        lambda: bpy.ops.stride.follow_path(target="Bare"))
    # An Idle that is gone, or that travels.
    ring = circle(scale=1.5)
    bpy.context.view_layer.objects.active = walk
    assert "there is no action 'Nowhere' to stand in: choose the Idle" in refused(
        lambda: bpy.ops.stride.follow_path(target=ring.name, idle_action="Nowhere"))
    said = refused(lambda: bpy.ops.stride.follow_path(target=ring.name, idle_action="02_01"))
    assert "travels at" in said and "give a standing clip" in said, said
    assert sorted(a.name for a in bpy.data.actions) == actions
    # Selected with the armature, the one other object is the Target.
    ring.select_set(True)
    walk.select_set(True)
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.follow_path(speed=1.2) == {"FINISHED"}
    assert walk.animation_data.action.name == f"02_01 along {ring.name}"


def test_a_turn_too_tight_is_a_warning_naming_the_frame(scene, stride):
    obj = gaits(stride)
    ring = circle(scale=0.4)
    bpy.context.view_layer.objects.active = obj
    scene.frame_current = 50
    jog = float(blendspace.gait_speeds(takes()).max())
    assert bpy.ops.stride.follow_path(target=ring.name, speed=jog) == {"FINISHED"}
    said = [s.message for s in reports.SAID if s.test.endswith("naming_the_frame") and s.level == "Warning"]
    (turn,) = [m for m in said if "the turn is tighter than the speed allows" in m]
    frames = [int(f) for f in re.findall(r" m \(frame (\d+)\)", turn)]
    assert frames and all(50 <= f <= 50 + 120 * 5 for f in frames), turn
    assert "sideways (v^2/R)" in turn and reports.problems(turn) == [], turn


def floor_track(clip, floor):
    """[T, 2] the hips' floor position of a clip (meters) in the floor a path in meters is laid on
    (x ahead, y to the left of the first take's start)."""
    hips = clip.fk()[1][:, clip.names.index("Hips")] - floor.origin
    return np.stack([hips @ floor.ahead, hips @ floor.left], axis=-1) * clip.meters_per_unit


def cycle_frames(clip):
    """Frames from a left touchdown to the next, found on the clip's own feet (the median)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lefts = contacts.footsteps(clip)["FootDown_L"]
    return float(np.median(np.diff(lefts))) * clip.fps


def test_cli_follow_path_walks_a_circle_and_a_csv_path_into_bvh_files(scene, stride, tmp_path, capsys):
    files = [str(cmu_path(n)) for n in CMU]
    speeds = blendspace.gait_speeds(takes())
    floor = stride.recipes.path.start_floor(takes()[0])
    # --circle 3: turning left from where the walk starts, at the walk's own speed (Speed Auto).
    out = tmp_path / "circle.bvh"
    assert stride.cli.main(["follow-path", *files, "--circle", "3", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert (f"stride: gaits at '02_01' {speeds[0]:.2f}, '02_03' {speeds[1]:.2f} m/s; {speeds[0]:.2f} m/s "
            "along a circle of 3 m") in said, said
    got = bvh.load(out)
    want = path.follow(takes(), floor.place(stride.recipes.path.circle_xy(3.0)), float(speeds[0]))
    assert got.n_frames == want.n_frames and got.fps == 120.0
    assert np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-6 * want.height
    track = floor_track(got, floor)
    lateral = circle_errors(track, np.array([0.0, 3.0]), 3.0, cycle_frames(got), got.fps)
    assert lateral.mean() <= PATH_MEAN_M and lateral.max() <= PATH_MAX_M, (lateral.mean(), lateral.max())
    assert np.linalg.norm(track[0]) < 0.15 and track[len(track) // 4, 1] > 2.0  # from the start, to the left
    # A CSV path: a circle of 2.5 m turning right, at 2 m/s.
    phi = np.linspace(0.0, 2.0 * math.pi, 160)
    csv = tmp_path / "right.csv"
    csv.write_text("x,y\n" + "".join(f"{2.5 * math.sin(a):.5f},{2.5 * (math.cos(a) - 1):.5f}\n" for a in phi))
    out = tmp_path / "right.bvh"
    assert stride.cli.main(["follow-path", *files, "--path", str(csv), "--speed", "2", "--out",
                            str(out)]) == 0
    got = bvh.load(out)
    track = floor_track(got, floor)
    lateral = circle_errors(track, np.array([0.0, -2.5]), 2.5, cycle_frames(got), got.fps)
    assert lateral.mean() <= PATH_MEAN_M and lateral.max() <= PATH_MAX_M, (lateral.mean(), lateral.max())
    travelled = np.linalg.norm(np.diff(phi[:2])) * 2.5 * (len(phi) - 1)
    assert got.duration == pytest.approx(travelled / 2.0, rel=0.03)


def test_cli_follow_path_walks_a_line_into_a_blend(scene, stride, tmp_path, capsys):
    files = [str(cmu_path(n)) for n in CMU]
    blend = tmp_path / "line.blend"
    assert stride.cli.main(["follow-path", *files, "--line", "8", "--speed", "2.0", "--out", str(blend)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    obj = bpy.data.objects["02_01"]
    action = obj.animation_data.action
    assert action.name == "02_01 along a 8 m line" and action.use_fake_user
    floor = stride.recipes.path.start_floor(takes()[0])
    want = path.follow(takes(), floor.place(stride.recipes.path.line_xy(8.0)), 2.0)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    assert len(steps_of(action)) == sum(len(v) for v in want.events.values())
    assert want.duration == pytest.approx(4.0, rel=0.03)
    track = floor_track(want, floor)
    smooth = moving_average(track, cycle_frames(want))
    assert np.abs(smooth[:, 1]).mean() <= PATH_MEAN_M and np.abs(smooth[:, 1]).max() <= PATH_MAX_M
    assert track[-1, 0] == pytest.approx(8.0, abs=0.15)


def test_cli_follow_path_errors_name_the_file_line_and_flag(scene, stride, tmp_path, capsys):
    walk = str(cmu_path("02_01"))
    out = str(tmp_path / "x.bvh")
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n0,0\n1,oops\n")
    assert stride.cli.main(["follow-path", walk, "--path", str(bad), "--out", out]) == 1
    assert f"stride follow-path: error: {bad}, line 3: 'oops' is not a number" in capsys.readouterr().err
    assert stride.cli.main(["follow-path", walk, "--circle", "-2", "--out", out]) == 1
    assert "error: --circle must be above 0 m" in capsys.readouterr().err
    assert stride.cli.main(["follow-path", walk, "--line", "5", "--speed", "-1", "--out", out]) == 1
    assert "error: --speed must be 0 (Auto) or above" in capsys.readouterr().err
    assert stride.cli.main(["follow-path", str(bad), "--line", "5", "--out", out]) == 1
    assert "is not a BVH take: give each gait as GAIT.bvh" in capsys.readouterr().err
    assert stride.cli.main(["follow-path", walk, "--line", "5", "--circle", "2", "--out", out]) == 2
    assert not (tmp_path / "x.bvh").exists()


def test_the_walk_along_path_panel_lays_out_the_bake(scene, stride):
    obj = gaits(stride)
    said: list = []
    panel = type("Panel", (), {"layout": Layout(said)})()
    for mode in ("CONSTANT", "CURVE"):
        scene.stride.path_speed_mode = mode
        stride.panels.VIEW3D_PT_stride_path.draw(panel, bpy.context)
    shown = {what for kind, what in said if kind == "prop"}
    assert {"path_target", "path_speed_mode", "path_speed", "speed", "idle_action", "lock_feet"} <= shown
    assert ("operator", "stride.follow_path") in said
    assert ("label", "Not keyed: hover over Speed, press I") in said
    # The button takes its settings from the sidebar.
    scene.stride.path_target, scene.stride.path_speed = "Ring", 1.75
    op = type("Op", (), {})()
    stride.panels.fill_operator(op, scene.stride, stride.options.FollowPathOptions)
    assert (op.target, op.speed, op.speed_mode, op.lock_feet) == ("Ring", pytest.approx(1.75), "CURVE", True)
    assert obj.stride.gaits[0].action.name == "02_01"


def test_an_unkeyed_speed_is_walked_at_its_value_and_said_on_a_moved_armature(scene, stride):
    """The armature object moved and turned: the walk is still on the curve where it is in the world.
    (The gaits read on it are the takes moved and turned alike, as a clip is the motion as it stands
    in the scene: the core's walk of those is the bake's to float32; of the files, it is the same
    walk but for the float rounding of the turn, which the loops' cuts and contacts may round
    otherwise.)"""
    obj = gaits(stride)
    obj.location, obj.rotation_euler = (1.0, 2.0, 0.0), (0.0, 0.0, 0.3)
    ring = circle(scale=1.5)
    bpy.context.view_layer.objects.active = obj
    obj.stride.speed = 1.9
    assert bpy.ops.stride.follow_path(target=ring.name, speed_mode="CURVE") == {"FINISHED"}
    said = [s.message for s in reports.SAID if s.test.endswith("its_value_and_said_on_a_moved_armature")]
    assert ("the Speed of '02_01' is not keyed in its action '02_03': baked at its value, 1.90 m/s, all "
            "along; key it over time (the Graph Editor shows it) for a speed that changes") in said, said
    world = stride.jobs.curve_points(ring)
    read = [stride.bridge.action_to_clip(obj, bpy.data.actions[n]) for n in CMU]
    want = stride.core.path.follow(read, in_clip_space(world), 1.9, fps=120.0)  # the add-on's Clips
    action = obj.animation_data.action
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    hips = hips_played(obj, action, np.arange(1, 1 + want.n_frames, 12))
    assert np.abs(np.linalg.norm(hips - [2.0, -1.0], axis=-1) - 1.5).max() < 0.15  # on the 1.5 m circle


def keyed_empty(stride, name, keys):
    """An empty keyed at each (frame, world location), linear between."""
    empty = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(empty)
    for frame, at in keys:
        empty.location = at
        assert empty.keyframe_insert("location", frame=frame)
    adt = empty.animation_data
    for fc in stride.compat.fcurves(adt.action, stride.compat.action_slot(adt.action, empty)):
        for key in fc.keyframe_points:
            key.interpolation = "LINEAR"
    return empty


def test_a_keyed_empty_is_followed_in_time(scene, stride):
    """An empty keyed 6 m ahead in 4 s (1.5 m/s), then 5 m to the left in 4 s (1.25 m/s), linear:
    the bake is the core's follow_target of its track as Blender plays it, frame by frame, from
    the current frame; the hips as Blender plays them, smoothed over a cycle, within 10 cm of the
    target smoothed alike from 2 s on."""
    obj = gaits(stride)
    scene.frame_end = 1 + 8 * 120
    keys = [(1, (0.0, 0.0, 0.0)), (481, (6.0, 0.0, 0.0)), (961, (6.0, 5.0, 0.0))]
    empty = keyed_empty(stride, "Target", keys)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.stride.follow_path(target="Target") == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name == "02_01 along Target" and action.use_fake_user
    frames = np.arange(1, 962)
    played = []
    for f in frames:
        scene.frame_set(int(f))
        played.append(np.array(empty.matrix_world.translation))
    world = np.array(played)
    want = path.follow_target(takes(), (frames - 1) / 120.0, in_clip_space(world), fps=120.0)
    assert_same_motion(stride.bridge.action_to_clip(obj, action), want)
    assert steps_of(action) == sorted((1 + round(t * 120), k) for k, v in want.events.items() for t in v)
    hips = hips_played(obj, action, frames[:want.n_frames])
    lefts = [f for f, n in steps_of(action) if n == "FootDown_L"]
    cycle = np.median(np.diff(lefts))
    smooth_hips, smooth_target = moving_average(hips, cycle), moving_average(world[:len(hips), :2], cycle)
    half = int(cycle) // 2
    gap = np.linalg.norm(smooth_hips - smooth_target, axis=-1)[2 * 120 - half:]
    assert gap.max() <= 0.10, (gap.mean(), gap.max())


def test_an_idle_action_starts_and_ends_the_walk_standing(scene, stride, tmp_path):
    """Bandai's walk and run (each on its own armature) with the first second of the bow take as the
    Idle, on the walk's armature: the bake is the core's follow with that idle, still at both ends
    (the hips over their first and last 0.5 s at most the idle's own speed + 0.05 m/s) and at rest
    within 10 cm of the line's end."""
    bow = bvh.load(take_path("dataset-1_bow_normal_001"))
    idle_file = tmp_path / "idle.bvh"
    bvh.save(bow[:31], idle_file)
    options = stride.options.ImportOptions(scale_preset="CM_TO_METERS")
    walk_file, run_file = (take_path(f"dataset-1_{g}_normal_001") for g in ("walk", "run"))
    # Each take on its own armature (their travel and rests differ), the idle's too.
    done, failed = stride.jobs.import_files(bpy.context, [walk_file, run_file, idle_file], options=options)
    assert not failed
    walk, run = done[0][0], done[1][0]
    for o in bpy.context.scene.objects:
        o.select_set(False)
    run.select_set(True)
    walk.select_set(True)
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.gaits_from_selected() == {"FINISHED"}
    bpy.ops.curve.primitive_nurbs_path_add()
    road = bpy.context.active_object
    road.scale = (2.0, 2.0, 2.0)  # 8 m
    bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.follow_path(target=road.name, idle_action="idle", speed=1.4) == {"FINISHED"}
    action = walk.animation_data.action
    world = stride.jobs.curve_points(road)
    points = in_clip_space(world, 0.01)  # BVH cm
    gaits_ = [bvh.load(walk_file), bvh.load(run_file)]
    want = path.follow(gaits_, points, 1.4, fps=30.0, idle=bvh.load(idle_file))
    assert_same_motion(stride.bridge.action_to_clip(walk, action), want)
    assert {m.name for m in action.pose_markers} >= {"FootDown_L", "FootDown_R", "Transition"}
    hips = hips_played(walk, action, np.arange(1, 1 + want.n_frames))
    speed = np.linalg.norm(np.diff(hips, axis=0), axis=-1) * 30.0
    idle_hips = bow.fk()[1][:31, bow.names.index("Hips")] * 0.01
    own = float(np.linalg.norm(np.diff(idle_hips[:, [0, 2]], axis=0), axis=-1).max() * 30.0)
    assert speed[:15].max() <= own + 0.05 and speed[-15:].max() <= own + 0.05, (speed[:15], speed[-15:], own)
    assert np.linalg.norm(hips[-1] - world[-1, :2]) <= 0.10


def test_cli_follow_path_follows_a_timed_path_and_starts_from_an_idle(scene, stride, tmp_path, capsys):
    walk_file, run_file = (str(take_path(f"dataset-1_{g}_normal_001")) for g in ("walk", "run"))
    bow = bvh.load(take_path("dataset-1_bow_normal_001"))
    idle_file = tmp_path / "idle.bvh"
    bvh.save(bow[:31], idle_file)
    gaits_ = [bvh.load(walk_file), bvh.load(run_file)]
    floor = stride.recipes.path.start_floor(gaits_[0])
    # Rows t,x,y: a target 6 m ahead in 4 s, then 3 m to the left in 2 s; followed in time.
    csv = tmp_path / "timed.csv"
    csv.write_text("t,x,y\n0,0,0\n4,6,0\n6,6,3\n")
    out = tmp_path / "timed.bvh"
    assert stride.cli.main(["follow-path", walk_file, run_file, "--path", str(csv), "--out", str(out)]) == 0
    assert "following timed.csv in time" in capsys.readouterr().out
    xy = np.array([[0.0, 0.0], [6.0, 0.0], [6.0, 3.0]])
    want = path.follow_target(gaits_, np.array([0.0, 4.0, 6.0]), floor.place(xy))
    got = bvh.load(out)
    assert got.n_frames == want.n_frames and np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-6 * want.height
    assert stride.cli.main(["follow-path", walk_file, "--path", str(csv), "--speed", "1.5", "--out",
                            str(out)]) == 1
    assert "error: --speed: timed.csv is a timed target (rows t,x,y), whose times set the speed" in \
        capsys.readouterr().err
    # --idle: from standing, to rest on the line's end.
    out = tmp_path / "rested.bvh"
    assert stride.cli.main(["follow-path", walk_file, run_file, "--line", "6", "--speed", "1.4", "--idle",
                            str(idle_file), "--out", str(out)]) == 0
    want = path.follow(gaits_, floor.place(stride.recipes.path.line_xy(6.0)), 1.4, idle=bvh.load(idle_file))
    got = bvh.load(out)
    assert got.n_frames == want.n_frames and np.abs(got.fk()[1] - want.fk()[1]).max() <= 1e-6 * want.height
    track = floor_track(got, floor)
    assert np.linalg.norm(track[-1] - [6.0, 0.0]) <= 0.10
