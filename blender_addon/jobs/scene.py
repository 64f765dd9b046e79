"""What a job finds in the scene: the armature to work on, the action a bake starts from (not a
Stride bake's result), the names of its gaits, and what a command still needs there (its poll's
message)."""

from __future__ import annotations

from typing import Any

import bpy

from .. import bridge
from ..errors import JobError
from ..recipes.blendspace import check_count
from ..recipes.path import check_any

# What an operator needs in its context (its poll); `unmet` says what is missing.
ARMATURE, ACTION, TWO_ACTIONS, NLA_TRACK, GAITS = "ARMATURE", "ACTION", "TWO_ACTIONS", "NLA_TRACK", "GAITS"
GAIT = "GAIT"


def unmet(context: Any, need: str) -> str:
    """Why a command that needs `need` (ARMATURE, ACTION: an armature with an action, TWO_ACTIONS:
    and a second action to blend with, NLA_TRACK: an armature with NLA strips, GAITS: an armature
    with two or more gaits, GAIT: with one or more) cannot run in `context`, as a poll message; ''
    when it can. Cheap: polls and panels call it on every redraw."""
    try:
        obj = find_armature(context=context)
    except JobError as exc:
        return _sentence(str(exc))
    adt = obj.animation_data
    if need == ARMATURE:
        return ""
    if need in (GAITS, GAIT):
        check = check_count if need == GAITS else check_any
        try:
            check(gait_names(obj), obj.name)
        except JobError as exc:
            return _sentence(str(exc))
        return ""
    if need == NLA_TRACK:
        if adt is None or not len(adt.nla_tracks):
            return (f"{obj.name!r} has no NLA tracks: push actions down to the NLA and arrange them "
                    "as strips on one track")
        if not any(len(t.strips) for t in adt.nla_tracks):
            return f"{obj.name!r} has no NLA strips: add action strips to a track"
        return ""
    if adt is None or adt.action is None:
        return f"{obj.name!r} has no action: import a BVH take, or assign an action in the Action Editor"
    if need == TWO_ACTIONS and len(bpy.data.actions) < 2:
        return f"No second action to blend with: import another take (only {adt.action.name!r})"
    return ""


def gait_names(obj: Any) -> list[str]:
    """The names of the armature's gaits' actions, in the list's order ('?' where one has none)."""
    return [g.action.name if g.action is not None else "?" for g in obj.stride.gaits]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def find_armature(name: str | None = None, context: Any = None) -> Any:
    """The armature to work on: by name, else the active object, else the only armature."""
    context = context or bpy.context
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise JobError(f"no object named {name!r}")
        if obj.type != "ARMATURE":
            raise JobError(f"object {name!r} is a {obj.type.lower()}, not an armature")
        return obj
    active = getattr(context, "active_object", None)
    if active is not None and active.type == "ARMATURE":
        return active
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    if len(armatures) == 1:
        return armatures[0]
    if not armatures:
        raise JobError("no armature in the scene: import a BVH file or select an armature first")
    names = ", ".join(repr(o.name) for o in armatures[:5])
    raise JobError(f"several armatures ({names}): select one or name it")


BAKED_FROM = "stride_baked_from"  # on a baked action: the name of the action it was baked from


def resolve_source(obj: Any, name: str = "") -> Any:
    """The action named, else the active one; when the active one is a Stride bake, the action it
    was baked from, so that baking again (a bake makes its result active) repeats the bake rather
    than baking from its result."""
    action, _ = bridge.resolve_action(obj, name or None)
    origin = action.get(BAKED_FROM) if not name else None
    return bpy.data.actions[origin] if origin and origin in bpy.data.actions else action
