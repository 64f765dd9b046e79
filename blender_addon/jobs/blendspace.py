"""Blend spaces baked on an armature: its gaits (`obj.stride.gaits`, rig.py: actions, each read on the
armature it was made for), added and removed, and Bake Blend Space at a constant speed, a ramp, or the
armature's Speed (`obj.stride.speed`) as it is keyed in its active action (the Graph Editor). The
result is keyed with the target speed it travels at, so the Graph Editor shows it beside the bones
and baking again from it bakes the same speed."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import bridge, carry, compat
from ..core import sync
from ..core.clip import Clip
from ..errors import BridgeWarning, JobError
from ..options import BlendSpaceOptions, FollowPathOptions
from ..recipes.blendspace import (
    Baked,
    Keys,
    blend_space_clip,
    check_count,
    gait_loops,
    result_name,
    slowest_gait,
)
from ..timing import Timing
from .results import write_result
from .scene import gait_names

SPEED_PATH = "stride.speed"  # the F-curve path of the armature's Speed (rig.py)
SPEED_GROUP = "Stride"


# -- the gaits ----------------------------------------------------------------------------------


def gait_armature(obj: Any, gait: Any) -> Any:
    """The armature a gait's action is read on: the one it was taken from (Gaits from Selected),
    else `obj`, whose gaits they are."""
    other = gait.armature
    return other if other is not None and other.type == "ARMATURE" else obj


def add_gait(obj: Any, action: Any, armature: Any = None) -> Any:
    """`action` added to the armature's gaits, read on `armature` (None: on `obj`) and made the
    active gait; JobError when it is one already."""
    if action is None:
        raise JobError(f"{obj.name!r} has no action to add: assign one in the Action Editor")
    gaits = obj.stride.gaits
    if any(g.action == action for g in gaits):
        raise JobError(f"{action.name!r} is a gait of {obj.name!r} already")
    gait = gaits.add()
    gait.action = action
    gait.armature = armature if armature is not None and armature != obj else None
    obj.stride.gait_index = len(gaits) - 1
    return gait


def remove_gait(obj: Any, index: int) -> str:
    """Remove the armature's gait at `index` (the action stays): the name of its action."""
    gaits = obj.stride.gaits
    if not 0 <= index < len(gaits):
        raise JobError(f"{obj.name!r} has no gait {index + 1} to remove")
    name = gait_names(obj)[index]
    gaits.remove(index)
    obj.stride.gait_index = min(index, len(gaits) - 1) if len(gaits) else 0
    return name


def _tree(obj: Any) -> dict[str, str | None]:
    return {b.name: b.parent.name if b.parent is not None else None for b in obj.data.bones}


def skeleton_difference(obj: Any, other: Any) -> str:
    """What differs between two armatures' bones (names and parents); '' when nothing does."""
    mine, theirs = _tree(obj), _tree(other)
    if mine == theirs:
        return ""
    extra = sorted(set(theirs) - set(mine))
    if extra:
        return f"{obj.name!r} has no bone {extra[0]!r}"
    missing = sorted(set(mine) - set(theirs))
    if missing:
        return f"it has no bone {missing[0]!r}"
    name = next(n for n in sorted(mine) if mine[n] != theirs[n])
    return f"its bone {name!r} hangs under {theirs[name]!r}, not {mine[name]!r}"


def gaits_from_selected(obj: Any, selected: Iterable[Any]) -> tuple[list[str], list[str], list[str]]:
    """The active actions of the selected armatures of obj's skeleton (obj's own first, if it is
    selected) added to obj's gaits, each read on its armature: (added, already gaits, skipped with
    why), action and armature names."""
    chosen = [o for o in selected if o.type == "ARMATURE"]
    chosen.sort(key=lambda o: o != obj)
    added: list[str] = []
    already: list[str] = []
    skipped: list[str] = []
    for other in chosen:
        adt = other.animation_data
        action = adt.action if adt is not None else None
        if action is None:
            skipped.append(f"{other.name!r} has no active action")
            continue
        differs = skeleton_difference(obj, other)
        if differs:
            skipped.append(f"{other.name!r} is another skeleton ({differs})")
            continue
        if any(g.action == action for g in obj.stride.gaits):
            already.append(action.name)
            continue
        add_gait(obj, action, other)
        added.append(action.name)
    return added, already, skipped


def read_on(obj: Any, reader: Any, action: Any, source: str = "AUTO") -> Clip:
    """`action` as a clip for a bake on `obj`, read on `reader` (`obj`, or the armature that plays
    it) from `source`, on the feet chosen on `obj` where they are chosen (the Rig panel)."""
    clip, _ = bridge.read_action(reader, action, source=source)
    return clip if reader is obj else bridge.with_feet(obj, clip)


def check_plays(obj: Any, clip: Clip, what: str) -> None:
    """A clip read on another armature (`read_on`) plays on `obj`, which the bake is written on:
    its joints are bones of `obj` under the same parents (JobError: `what` cannot play there)."""
    try:
        bridge.check_bones(obj, clip)
    except bridge.BridgeError as exc:
        raise JobError(f"{what} cannot play on {obj.name!r}: {exc}") from None


def read_gait(obj: Any, index: int, source: str = "AUTO") -> Clip:
    """Gait `index` of the armature as a clip, read on its armature (`gait_armature`) from `source`,
    on the feet chosen on `obj` where they are chosen (the Rig panel)."""
    gait = obj.stride.gaits[index]
    if gait.action is None:
        raise JobError(f"gait {index + 1} of {obj.name!r} has no action: choose one in the Gaits list, or "
                       "remove it")
    return read_on(obj, gait_armature(obj, gait), gait.action, source)


def gait_clips(obj: Any, options: BlendSpaceOptions | FollowPathOptions,
               check: Callable[..., None] = check_count) -> list[Clip]:
    """Every gait of the armature as a clip (`read_gait`); an action read on `obj` that was made
    for another skeleton is refused (Allow Mismatch), and the gaits must be bones of `obj`, which
    the bake is written on. `check`: how many gaits the job needs (`check_count`: a blend space's
    two or more)."""
    check(gait_names(obj), obj.name)
    clips = []
    for i, gait in enumerate(obj.stride.gaits):
        clip = read_gait(obj, i, options.source)
        if gait_armature(obj, gait) is obj:
            bridge.check_skeleton(obj, gait.action, options.allow_mismatch)
        else:
            check_plays(obj, clip, f"gait {clip.name!r}")
        clips.append(clip)
    return clips


# -- the speed ----------------------------------------------------------------------------------


def speed_curve(obj: Any) -> tuple[Any, Any]:
    """(the armature's active action, the F-curve keying its Speed there): what Blender plays the
    Speed from and the Graph Editor shows; None for what is not there."""
    adt = obj.animation_data
    action = adt.action if adt is not None else None
    if action is None:
        return None, None
    for fc in compat.fcurves(action, compat.action_slot(action, obj)):
        if fc.data_path == SPEED_PATH and len(fc.keyframe_points):
            return action, fc
    return action, None


def unkeyed_speed(obj: Any, action: Any) -> float:
    """The armature's Speed where it is not keyed (in its active `action`, or it has none): its
    value, baked all along, said in a warning."""
    value = float(obj.stride.speed)
    where = f" in its action {action.name!r}" if action is not None else ""
    warnings.warn(f"the Speed of {obj.name!r} is not keyed{where}: baked at its value, {value:.2f} m/s, "
                  "all along; key it over time (the Graph Editor shows it) for a speed that changes",
                  BridgeWarning, stacklevel=3)
    return value


def speed_keys(obj: Any, timing: Timing, duration: float) -> tuple[Keys, Any]:
    """The armature's Speed on every frame a bake of `duration` seconds keys (`timing`), as Blender
    plays it from its active action: (keys, the F-curve read, or None when it is not keyed, then
    its value all along, said in a warning)."""
    action, fc = speed_curve(obj)
    times = sync.output_times(duration, timing.fps)
    if fc is None:
        return (times[[0, -1]], np.full(2, unkeyed_speed(obj, action))), None
    return (times, bridge.curve_at(fc, timing, times)), fc


def key_speed(obj: Any, action: Any, keys: Keys, timing: Timing, curve: Any = None) -> Any:
    """The baked `action` keyed with the Speed it travels at, on `obj`'s slot: a copy of the curve
    it was read from (`curve`), else the target's keys (Constant, Ramp), linear between them."""
    bag = compat.channelbag(action, compat.action_slot(action, obj), create=True)
    fc = compat.new_fcurve(bag, SPEED_PATH, 0, group=SPEED_GROUP)
    if curve is not None:
        carry.write(fc, carry.read(curve))
        fc.extrapolation = curve.extrapolation
    else:
        compat.write_keys(fc, timing.frame(keys[0]), keys[1], "LINEAR")
    return fc


# -- the bake -----------------------------------------------------------------------------------


def bake_blend_space(obj: Any, *, options: BlendSpaceOptions,
                     progress: Callable[[float], None] | None = None) -> tuple[Any, Baked]:
    """A new action on the armature: its gaits blended by speed, in step, from the scene's first
    frame at its rate, footstep markers at the blend's touchdowns: (action, what was baked)."""
    clips = gait_clips(obj, options)
    loops = gait_loops(clips, allow=options.allow_mismatch)
    scene = bridge.current_scene()
    timing = Timing(float(scene.frame_start), bridge.scene_fps(scene))
    keys, curve = None, None
    if options.speed_mode.upper() == "CURVE":
        keys, curve = speed_keys(obj, timing, float(options.duration))
    baked = blend_space_clip(loops, options=options, keys=keys, rate=timing.fps, timing=timing)
    actions = [g.action for g in obj.stride.gaits]
    slowest = actions[slowest_gait(baked.rows)]
    action = write_result(obj, baked.clip, result_name(baked.rows, options), timing, slowest, progress,
                          others=[a for a in actions if a != slowest])
    key_speed(obj, action, baked.keys, timing, curve)
    return action, baked
