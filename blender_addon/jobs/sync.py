"""Synchronized blends baked on an armature: two cycles in phase at a weight (constant, keyed as the
armature's stride_blend_weight in action A, or the one that travels at Speed), and the weight ramp
Stride keys for the animator to edit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import bridge, compat
from ..core import sync
from ..core.clip import Clip
from ..errors import USER_ERRORS, JobError
from ..options import SyncOptions
from ..recipes.sync import bake_frames, loops, sync_clip
from ..timing import Timing
from .results import write_result
from .scene import ACTION, find_armature, resolve_source, unmet

WEIGHT_PROPERTY = "stride_blend_weight"


def add_cycles_modifiers(obj: Any, action: Any) -> None:
    """Cycles modifiers on every curve of a looping bake; the root travels on each loop instead of
    jumping back to the start."""
    for fc in compat.fcurves(action, compat.action_slot(action, obj)):
        cycles = fc.modifiers.new("CYCLES")
        if fc.data_path.endswith(".location"):
            cycles.mode_before = cycles.mode_after = "REPEAT_OFFSET"


def _weight_curve(obj: Any, action: Any, start: float, rate: float,
                  duration: float) -> tuple[np.ndarray, np.ndarray]:
    """(times, weights) of the armature's `stride_blend_weight` as keyed in `action` (A's: where
    it is keyed while A plays) over the bake. The default ramp Stride keyed, while untouched, is
    keyed again to span this bake."""
    curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    first, last = float(start), float(start) + max(duration * rate, 1.0)
    if curve is None or not len(curve.keyframe_points):
        first, last = key_weight_curve(obj, action, first, last)
        raise JobError(f"key the armature property {WEIGHT_PROPERTY!r} in action {action.name!r} "
                       f"(0 for action A, 1 for action B) over the frames to bake, then bake again: it "
                       f"now ramps from 0 at frame {first:g} to 1 at frame {last:g} (the bake's "
                       f"{duration:g} s), to edit")
    if default_ramp(obj, action) not in (None, (first, last)):
        key_weight_curve(obj, action, first, last)
        curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    times = sync.output_times(duration, rate)
    return times, np.clip(bridge.curve_at(curve, Timing(start, rate), times), 0.0, 1.0)


DEFAULT_RAMP = "stride_default_ramp"  # on action A: the (first, last) frames of the ramp Stride keyed


def key_weight_curve(obj: Any, action: Any, first: float, last: float) -> tuple[float, float]:
    """Key the armature property stride_blend_weight in `action` (its slot for `obj`) from 0 at
    frame `first` to 1 at frame `last`, easing in and out as two keys do by default in Blender
    (Bezier, flat at both ends), adding the property; remembered on the action as Stride's
    default ramp (`default_ramp`) until edited. (first, last)."""
    if WEIGHT_PROPERTY not in obj.keys():
        obj[WEIGHT_PROPERTY] = 0.0
    _, slot = bridge.resolve_action(obj, action)
    fc = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    if fc is None:
        fc = compat.new_fcurve(compat.channelbag(action, slot, create=True),
                               bridge.property_path(WEIGHT_PROPERTY), 0, group="Stride")
    first, last = float(first), max(float(last), float(first) + 1.0)
    compat.write_keys(fc, np.array([first, last]), np.array([0.0, 1.0]), "BEZIER")
    for key in fc.keyframe_points:  # whatever the user's default handles: flat at 0 and at 1
        key.handle_left_type = key.handle_right_type = "AUTO_CLAMPED"
    fc.update()
    action[DEFAULT_RAMP] = [first, last]
    return first, last


def default_ramp(obj: Any, action: Any) -> tuple[float, float] | None:
    """(first, last) frames of the default weight ramp Stride keyed in `action`, while its keys are
    still those; None once edited (or when there is none)."""
    stored = action.get(DEFAULT_RAMP)
    curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    if stored is None or curve is None or len(curve.keyframe_points) != 2:
        return None
    first, last = (float(f) for f in stored)
    same = np.allclose(compat.read_keys(curve), [[first, 0.0], [last, 1.0]], rtol=0.0, atol=1e-4)
    eased = curve.keyframe_points[0].interpolation == "BEZIER" and all(
        k.handle_left_type == k.handle_right_type == "AUTO_CLAMPED" for k in curve.keyframe_points)
    return (first, last) if same and eased else None


def ensure_weight_curve(context: Any, options: SyncOptions) -> bool:
    """When action A (as the bake finds it) has no stride_blend_weight keys, key them from 0 at the
    scene's first frame to 1 where the bake ends (`bake_frames`); whether it did (not without an
    armature and action)."""
    if unmet(context, ACTION):
        return False
    obj = find_armature(context=context)
    try:
        action = resolve_source(obj, options.action_a)
        curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
        if curve is not None and len(curve.keyframe_points):
            return False
        key_weight_curve(obj, action, *bake_frames(options, context.scene.frame_start,
                                                   bridge.scene_fps(context.scene)))
    except USER_ERRORS:  # action A named but missing, or with no slot for the armature
        return False
    return True


def bake_sync_blend(obj: Any, *, options: SyncOptions,
                    progress: Callable[[float], None] | None = None) -> tuple[Any, Clip, float | None]:
    """A new action blending two cycles in phase: (action, clip, weight used when constant)."""
    if not options.action_b:
        raise JobError("choose action B (A is the armature's active action unless named)")
    act_a = resolve_source(obj, options.action_a)
    act_b, _ = bridge.resolve_action(obj, options.action_b)
    scene = bridge.current_scene()
    start, rate = float(scene.frame_start), bridge.scene_fps(scene)
    curve = None
    if options.weight_mode == "CURVE" and options.duration_unit != "CYCLES":
        curve = _weight_curve(obj, act_a, start, rate, options.duration)
    (a, timing_a), (b, timing_b) = (bridge.read_action(obj, act_a, source=options.source),
                                    bridge.read_action(obj, act_b, source=options.source))
    for act in (act_a, act_b):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    out, used = sync_clip(a, b, options=options, timing_a=timing_a, timing_b=timing_b, curve=curve,
                          rate=rate)
    name = f"{act_a.name} + {act_b.name} sync ({options.mode.lower()})"
    # Keys at whole scene frames, one per frame of the blend (sync_clip's one time base).
    action = write_result(obj, out, name, Timing(start, rate), act_a, progress)
    if loops(options):
        add_cycles_modifiers(obj, action)
    return action, out, used
