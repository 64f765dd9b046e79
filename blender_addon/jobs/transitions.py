"""Transitions baked on an armature: from one action into another (or into another time of itself),
the target time that best continues the source, and what the NLA plays on its tracks as one action."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import bridge, carry, compat
from ..core import transition
from ..core.clip import Clip
from ..errors import JobError
from ..options import NlaBakeOptions, TransitionOptions
from ..recipes.transitions import best_target_time, core_method, spans, transition_clip
from ..timing import Timing
from .results import write_result
from .scene import resolve_source


def find_target_time(obj: Any, *, options: TransitionOptions) -> float:
    """Seconds into the target action whose pose and motion best continue the source action at
    Source Time (transition.best_target_time, a motion-matching cost)."""
    if not options.target_action:
        raise JobError("choose a target action to transition into")
    src_action = resolve_source(obj, options.source_action)
    dst_action, _ = bridge.resolve_action(obj, options.target_action)
    (src, _), (dst, _) = (bridge.read_action(obj, src_action, source=options.source),
                          bridge.read_action(obj, dst_action, source=options.source))
    for act in (src_action, dst_action):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    return best_target_time(src, dst, options.source_time, itself=src_action == dst_action)


def nla_actions(obj: Any) -> list[Any]:
    """The actions of an armature's NLA strips (whose other channels an NLA bake does not carry)."""
    adt = obj.animation_data
    tracks = adt.nla_tracks if adt is not None else ()
    return [s.action for t in tracks for s in t.strips if s.action is not None]


def transition_pieces(src_action: Any, dst_action: Any, obj: Any, out: Clip, timing: Timing,
                      dst_timing: Timing, options: TransitionOptions) -> list[Any]:
    """The pieces of a transition's sources in its result (carry.Piece), where `spans` puts them: the
    source's frames up to the switch, exact; the target's after it, to the result's end."""
    span = spans(out, timing, dst_timing, options)
    return [carry.Piece(src_action, compat.action_slot(src_action, obj), end=span.switch),
            carry.Piece(dst_action, compat.action_slot(dst_action, obj), start=span.start, end=span.end,
                        offset=span.offset, scale=span.scale, exact=False)]


def bake_transition(obj: Any, *, options: TransitionOptions,
                    progress: Callable[[float], None] | None = None) -> tuple[Any, Clip]:
    """A new action: the source action until Source Time, then a transition into the target action
    from Target Time to Target End (its end for 0; seconds in each action's own time). Sources are
    never modified."""
    if not options.target_action:
        raise JobError("choose a target action to transition into")
    src_action = resolve_source(obj, options.source_action)
    dst_action, _ = bridge.resolve_action(obj, options.target_action)
    src, timing = bridge.read_action(obj, src_action, source=options.source)
    dst, dst_timing = bridge.read_action(obj, dst_action, source=options.source)
    for act in (src_action, dst_action):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    out = transition_clip(src, dst, options=options)
    name = f"{src_action.name} > {dst_action.name} ({options.method.lower()})"
    pieces = transition_pieces(src_action, dst_action, obj, out, timing, dst_timing, options)
    return write_result(obj, out, name, timing, src_action, progress, pieces=pieces), out


def bake_nla_track(obj: Any, *, options: NlaBakeOptions,
                   progress: Callable[[float], None] | None = None) -> tuple[Any, Clip]:
    """One new action from what the NLA plays on the chosen tracks (bridge.nla_items), with
    transitions where one strip takes over from another."""
    method = core_method(options.method)
    items, blends, start, track_name = bridge.nla_items(obj, options.track, options.blend_time,
                                                        options.allow_mismatch, source=options.source)
    out = transition.sequence(items, blends, method, lock_feet=options.lock_feet, reanchor=options.reanchor)
    name = f"{track_name} baked ({options.method.lower()})"
    return write_result(obj, out, name, Timing(start, bridge.scene_fps()), progress=progress,
                        others=nla_actions(obj)), out
