"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bpy

from . import bridge
from .core import bvh
from .core.clip import Clip


class JobError(ValueError):
    """A user-facing failure: the message says what is wrong and what to do."""


USER_ERRORS = (JobError, bridge.BridgeError, bvh.BVHError, ValueError, OSError)


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


def export_bvh(obj: Any, action: str | None, path: str | Path) -> Clip:
    """Write an armature's action (the active one by default) to a BVH file, atomically."""
    clip = bridge.action_to_clip(obj, action or None)
    if clip.n_frames == 0:
        raise JobError(f"action {clip.name!r} has no keys to export")
    bvh.save(clip, path)
    return clip
