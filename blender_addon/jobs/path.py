"""Walk Along Path on an armature: its gaits (`obj.stride.gaits`, the Gaits panel) walked along a curve
object (its first spline, as its object transform places it in the world) at a constant speed or the
armature's Speed (`obj.stride.speed`) as it is keyed over time, or after any other object as Blender
plays it over the scene's frames (followed in time), from the scene's current frame, from and into
the Idle action if one is chosen; a new action with footstep markers, its Speed keyed beside the
bones (for a curve). The maths is the core's (`path.follow`, `path.follow_target`, through
recipes/path.py); here is what is read from Blender and written back."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import bridge
from ..core.clip import Clip
from ..errors import BridgeWarning, JobError
from ..options import FollowPathOptions
from ..recipes.blendspace import GaitRow, gait_loops, gait_rows, reach
from ..recipes.path import (
    Track,
    bezier_points,
    check_any,
    clip_points,
    constant_speed,
    floor_length,
    follow_clip,
    speed_along,
    target_clip,
    target_track,
    walked_name,
    world_points,
)
from ..timing import Timing
from .blendspace import check_plays, gait_clips, key_speed, read_on, speed_curve, unkeyed_speed
from .results import write_result
from .scene import gait_names


def curve_points(curve: Any, unit_m: float = 1.0) -> np.ndarray:
    """[N, 3] world points along a curve object's first spline, in its order, as its object transform
    places it (a Bezier is affine: its control points are transformed, then sampled as
    `recipes.path.bezier_points` samples them, `unit_m` meters per scene unit); a cyclic spline
    closes on its first point.
    Poly splines are their points; NURBS splines Blender's evaluated curve (its resolution).
    Several splines: the first, said in a warning."""
    splines = curve.data.splines
    name = curve.name
    if not len(splines):
        raise JobError(f"the curve {name!r} has no spline to walk along: draw one (Add > Curve) or choose "
                       "another Target")
    if len(splines) > 1:
        warnings.warn(f"the curve {name!r} has {len(splines)} splines: walked along the first; separate the "
                      "others (Edit Mode, P) to walk along them", BridgeWarning, stacklevel=2)
    spline = splines[0]
    matrix = bridge.world_matrix(curve)
    resolution = max(int(spline.resolution_u), 1)
    if spline.type == "BEZIER":
        n = len(spline.bezier_points)
        flat = np.empty(3 * n, dtype=np.float32)
        keys = {}
        for attr in ("co", "handle_left", "handle_right"):
            spline.bezier_points.foreach_get(attr, flat)
            keys[attr] = world_points(flat.reshape(n, 3).astype(np.float64), matrix)
        points = bezier_points(keys["co"], keys["handle_left"], keys["handle_right"], spline.use_cyclic_u,
                               unit_m, resolution)
    elif spline.type == "POLY":
        n = len(spline.points)
        flat = np.empty(4 * n, dtype=np.float32)
        spline.points.foreach_get("co", flat)
        points = world_points(flat.reshape(n, 4)[:, :3].astype(np.float64), matrix)
        if spline.use_cyclic_u and n > 1:
            points = np.concatenate([points, points[:1]])
    else:
        points = _evaluated(curve, matrix)
    if len(points) < 2:
        raise JobError(f"the curve {name!r} has {len(points)} point(s) on its first spline: a path needs two "
                       "or more")
    return points


def _evaluated(curve: Any, matrix: np.ndarray) -> np.ndarray:
    """[N, 3] world points of a curve object as Blender evaluates it (its mesh, in its vertices' order)."""
    import bpy

    evaluated = curve.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        n = len(mesh.vertices)
        flat = np.empty(3 * n, dtype=np.float32)
        mesh.vertices.foreach_get("co", flat)
    finally:
        evaluated.to_mesh_clear()
    return world_points(flat.reshape(n, 3).astype(np.float64), matrix)


def find_target(obj: Any, options: FollowPathOptions, selected: Any = ()) -> Any:
    """The object walked along: Target by name, else the one selected object that is not an armature."""
    import bpy

    if options.target:
        target = bpy.data.objects.get(options.target)
        if target is None:
            raise JobError(f"there is no object {options.target!r} to walk along: choose the Target (a "
                           "curve, or an object animated over the frames)")
    else:
        others = [o for o in selected if o != obj and o.type != "ARMATURE"]
        if len(others) != 1:
            raise JobError("choose the Target to walk along: a curve, or an object animated over the frames "
                           "(or select it with the armature)")
        target = others[0]
    if target == obj or target.type == "ARMATURE":
        raise JobError(f"{target.name!r} is an armature: choose a curve, or an object animated over the "
                       "frames, as the Target")
    return target


class Speed(NamedTuple):
    """The speed a path is walked at: as the core takes it, and the F-curve it was read from (copied
    onto the result), or None for one speed."""

    along: Any  # m/s, or (distances [n] m, speeds [n] m/s)
    curve: Any


def path_speed(obj: Any, options: FollowPathOptions, rows: list[GaitRow], timing: Timing,
               length: float) -> Speed:
    """Speed (Auto: the slowest gait's), or with a Curve speed the armature's Speed as Blender plays it
    from its active action, read on every frame from the bake's first until the path is covered."""
    speeds = [r.speed for r in rows]
    if options.speed_mode.upper() != "CURVE":
        return Speed(constant_speed(options, speeds), None)
    action, fc = speed_curve(obj)
    if fc is None:
        return Speed(constant_speed(FollowPathOptions(speed=unkeyed_speed(obj, action)), speeds), None)
    within = reach(speeds)
    # Long enough to cover the path at the slowest speed played.
    n = math.ceil(length / within[0] * timing.fps) + 2
    times = np.arange(n) / timing.fps
    return Speed(speed_along(times, bridge.curve_at(fc, timing, times), length, within), fc)


class Walked(NamedTuple):
    """A path as walked: the clip, the gaits' rows, the speed (None: a target's, in time), what it
    walked along or followed, the frame it starts on."""

    clip: Clip
    rows: list[GaitRow]
    speed: Speed | None
    along: str  # the Target's name
    first: float


def object_track(target: Any, obj: Any, timing: Timing, up: np.ndarray, meters_per_unit: float) -> Track:
    """Where the Target is in the armature's clip space (`up` and `meters_per_unit`: its gaits') on
    every frame of the scene from the bake's first (`timing`) to its end, as Blender plays it (its
    animation, parents, constraints), up to where it stops (`target_track`); the scene's frame is
    put back."""
    scene = bridge.current_scene()
    now = scene.frame_current
    frames = np.arange(int(timing.start), int(scene.frame_end) + 1)
    world = np.empty((len(frames), 3))
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            world[i] = np.array(target.matrix_world.translation, dtype=np.float64)
    finally:
        scene.frame_set(now)
    where = bridge.space(obj, bridge.import_settings(obj))
    points = clip_points(world, bridge.world_matrix(obj), where)
    return target_track(frames, points, timing, up, meters_per_unit, target.name)


def idle_clip(obj: Any, options: FollowPathOptions) -> Clip | None:
    """The Idle action as a clip (None for none): a standing take of the armature's character, read
    on the armature that plays it (its active action: the one it was imported on, as a gait from
    another armature is), else on this one (an action made for another skeleton refused, unless
    Allow Mismatch); its bones must be this armature's, which the bake is written on."""
    import bpy

    if not options.idle_action:
        return None
    action = bpy.data.actions.get(options.idle_action)
    if action is None:
        raise JobError(f"there is no action {options.idle_action!r} to stand in: choose the Idle (a standing "
                       "take of this character), or leave it empty")
    players = [o for o in bpy.data.objects if o.type == "ARMATURE" and o != obj
               and o.animation_data is not None and o.animation_data.action == action]
    if not players:
        bridge.check_skeleton(obj, action, options.allow_mismatch)
        return read_on(obj, obj, action, options.source)
    clip = read_on(obj, players[0], action, options.source)
    check_plays(obj, clip, f"the Idle {action.name!r}")
    return clip


def follow_path(obj: Any, *, options: FollowPathOptions, selected: Any = (),
                progress: Callable[[float], None] | None = None) -> tuple[Any, Walked]:
    """A new action on the armature: its gaits walked along the Target curve, or after the Target
    object in time as it moves over the scene's frames, from the scene's current frame at its rate
    (from and into the Idle action when one is chosen), footstep markers at the touchdowns:
    (action, what was walked)."""
    target = find_target(obj, options, selected)
    clips = gait_clips(obj, options, check_any)  # one gait or more
    loops = gait_loops(clips, allow=options.allow_mismatch)
    idle = idle_clip(obj, options)
    rows = gait_rows(loops)
    scene = bridge.current_scene()
    timing = Timing(float(scene.frame_current), bridge.scene_fps(scene))
    speed: Speed | None = None
    if target.type == "CURVE":
        where = bridge.space(obj, bridge.import_settings(obj))
        unit_m = float(scene.unit_settings.scale_length) if scene.unit_settings.system != "NONE" else 1.0
        points = clip_points(curve_points(target, unit_m), bridge.world_matrix(obj), where)
        speed = path_speed(obj, options, rows, timing, floor_length(points, loops[0]))
        if progress is not None:
            progress(0.0)
        clip = follow_clip(loops, points, speed.along, options=options, idle=idle, fps=timing.fps,
                           timing=timing)
    else:
        track = object_track(target, obj, timing, loops[0].up, loops[0].meters_per_unit)
        if progress is not None:
            progress(0.0)
        clip = target_clip(loops, track, options=options, idle=idle, fps=timing.fps, timing=timing)
    actions = [g.action for g in obj.stride.gaits]
    action = write_result(obj, clip, walked_name(gait_names(obj), target.name), timing, actions[0],
                          progress, others=actions[1:])
    if speed is not None:
        # One speed is keyed over the bake; a curve's keys are copied.
        steady = float(speed.along) if speed.curve is None else 0.0
        key_speed(obj, action, (np.array([0.0, clip.duration]), np.full(2, steady)), timing, speed.curve)
    return action, Walked(clip, rows, speed, target.name, timing.start)
