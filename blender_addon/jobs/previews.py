"""What the sidebar shows before a bake runs (recipes/previews.py works it out), kept between redraws."""

from __future__ import annotations

import functools
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .. import bridge, compat
from ..core.clip import Clip
from ..errors import USER_ERRORS, JobError
from ..options import FootstepOptions, SyncOptions
from ..recipes.blendspace import gait_loop
from ..recipes.events import foot_speed
from ..recipes.previews import (
    NO_SPEEDS,
    CyclePreview,
    FootstepPreview,
    GaitsPreview,
    SyncPreview,
    blend_preview,
    cycle_preview,
    footstep_preview,
    gaits_preview,
)
from ..recipes.sync import loops
from .blendspace import gait_armature, read_gait
from .scene import resolve_source

# The sidebar shows what a bake will find before it runs. Panels redraw on every mouse move over
# them, so results are kept by what they depend on: the action (its name, how many curves and keys
# it has, its frame range and stored events: an edit that adds or removes keys, retimes the action
# or moves footsteps changes them), the scene's rate, and the options read. Errors are kept too,
# so a take without footsteps is not searched again on every redraw.
_PREVIEWS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_PREVIEWS_KEPT = 32


def forget_previews() -> None:
    """Drop every kept preview (the sidebar's Refresh button)."""
    _PREVIEWS.clear()


def _kept(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """compute(), once per key; a user error is kept as its message and raised again as a JobError."""
    if key not in _PREVIEWS:
        try:
            _PREVIEWS[key] = compute()
        except USER_ERRORS as exc:
            _PREVIEWS[key] = JobError(str(exc))
        while len(_PREVIEWS) > _PREVIEWS_KEPT:
            _PREVIEWS.popitem(last=False)
    _PREVIEWS.move_to_end(key)
    value = _PREVIEWS[key]
    if isinstance(value, JobError):
        raise JobError(str(value))
    return value


def action_key(obj: Any, action: Any) -> tuple[Any, ...]:
    """What an action's previews depend on (cheap to read on every redraw)."""
    curves = compat.fcurves(action, compat.action_slot(action, obj))
    stored = action.get(bridge.EVENTS_KEY)
    return (obj.name, action.name, len(curves), sum(len(fc.keyframe_points) for fc in curves),
            tuple(action.frame_range), repr(stored.to_dict()) if stored is not None else "",
            bridge.scene_fps())


def preview_footsteps(obj: Any, *, options: FootstepOptions) -> FootstepPreview:
    """The footsteps Detect Footsteps finds with these options, kept between redraws."""
    name = options.action
    try:
        act, _ = bridge.resolve_action(obj, options.action or None)
        name = act.name
        speed = foot_speed(options.speed_mps)

        used, why = bridge.read_source(obj, act, options.source)
        if used == "EVALUATED":  # a panel's draw cannot play frames
            raise JobError(f"{why}: no preview of what the rig plays; Detect Footsteps reads it")

        def compute() -> FootstepPreview:
            return footstep_preview(bridge.read_action(obj, act, source=used)[0], act.name, speed)

        return _kept(("footsteps", action_key(obj, act), speed), compute)
    except USER_ERRORS as exc:
        return FootstepPreview(name, {}, math.nan, str(exc))


def _cycle_preview(obj: Any, action: Any, frames: tuple[int, int], straighten: bool,
                   which: str, source: str = "AUTO") -> tuple[Clip, CyclePreview]:
    """(cycle, preview) of an action as sync_clip cuts it (the same call), kept between redraws."""
    used, why = bridge.read_source(obj, action, source)
    if used == "EVALUATED":  # a panel's draw cannot play frames
        raise JobError(f"{action.name!r}: {why}: no preview of what the rig plays; Bake Sync Blend reads it")

    def compute() -> tuple[Clip, CyclePreview]:
        clip, timing = bridge.read_action(obj, action, source=used)
        return cycle_preview(clip, timing, action.name, frames, straighten, which)

    key = ("cycle", action_key(obj, action), tuple(frames), straighten)
    return _kept(key, compute)


def preview_sync(obj: Any, *, options: SyncOptions) -> SyncPreview:
    """Each action's cycle, the blended cycle length, and the travel speed (at the weight Bake Sync
    Blend will use, and its reachable range), computed as the bake computes them."""
    cycles: list[CyclePreview | None] = [None, None]
    try:
        closed = loops(options)
        act_a = resolve_source(obj, options.action_a)
        a, cycles[0] = _cycle_preview(obj, act_a, options.frames_a, closed, "frames_a",
                                      options.source)
        if not options.action_b:
            raise JobError("choose action B to blend with")
        act_b, _ = bridge.resolve_action(obj, options.action_b)
        b, cycles[1] = _cycle_preview(obj, act_b, options.frames_b, closed, "frames_b",
                                      options.source)
        a.check_compatible(b)
        key = ("sync", action_key(obj, act_a), action_key(obj, act_b), closed, tuple(options.frames_a),
               tuple(options.frames_b), options.mode, options.weight_mode, options.weight, options.speed_mps)
        return _kept(key, lambda: blend_preview(a, b, cycles[0], cycles[1], options, bridge.scene_fps()))
    except USER_ERRORS as exc:
        return SyncPreview(cycles[0], cycles[1], math.nan, math.nan, math.nan, NO_SPEEDS, str(exc))


def _gait_key(obj: Any, index: int, source: str) -> tuple[Any, ...]:
    """What gait `index`'s loop depends on: its action as its armature reads it (KEYS: a panel's
    draw cannot play frames), and the armature's feet and unit."""
    gait = obj.stride.gaits[index]
    if gait.action is None:
        raise JobError("no action: choose one in the Gaits list, or remove it")
    reader = gait_armature(obj, gait)
    used, why = bridge.read_source(reader, gait.action, source)
    if used == "EVALUATED":
        raise JobError(f"{why}: no preview of what the rig plays; Bake Blend Space reads it")
    s = obj.stride
    return ("gait", action_key(reader, gait.action), used, s.left_foot, s.right_foot, s.meters_per_unit)


def _gait_loop(obj: Any, index: int, source: str) -> Clip:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the bake reports them
        return gait_loop(read_gait(obj, index, source))


def preview_gaits(obj: Any, *, source: str = "AUTO") -> GaitsPreview:
    """Each of the armature's gaits' speed and cycle and the speeds their blend space reaches,
    measured as Bake Blend Space measures them, kept between redraws."""
    found: list[Clip | None] = []
    problems: list[str] = []
    keys: list[tuple[Any, ...]] = []
    for i in range(len(obj.stride.gaits)):
        try:
            key = _gait_key(obj, i, source)
            keys.append(key)
            found.append(_kept(key, functools.partial(_gait_loop, obj, i, key[2])))
            problems.append("")
        except USER_ERRORS as exc:
            found.append(None)
            problems.append(str(exc))
    return _kept(("gaits", *keys, *problems), lambda: gaits_preview(found, problems))
