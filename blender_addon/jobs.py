"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def import_files(context: Any, paths: Sequence[str | Path], *, single_armature: bool = False,
                 progress: Any = None, **options: Any) -> tuple[list[tuple[Any, Any]], list[str]]:
    """Import BVH files and folders: ([(armature, action)], [error message per failed file]).

    A bad file is reported and skipped; the rest still import. With `single_armature`, every file
    after the first becomes another action on the first file's armature (skeletons must match).
    """
    from . import importer

    done: list[tuple[Any, Any]] = []
    failed: list[str] = []
    files = importer.bvh_files(paths)
    if not files:
        raise JobError("no .bvh files to import")
    for k, path in enumerate(files):
        target = done[0][0] if (single_armature and done) else None

        def step(fraction: float, k: int = k) -> None:
            if progress is not None:
                progress((k + fraction) / len(files))

        try:
            done.append(importer.import_bvh(context, path, target=target, progress=step, **options))
        except USER_ERRORS as exc:
            failed.append(f"{path.name}: {exc}" if str(path) not in str(exc) else str(exc))
    return done, failed


def save_blend(path: str | Path) -> None:
    """Save the open file as a copy at `path` (Blender writes it atomically); the folder must exist."""
    target = Path(path)
    if not target.parent.is_dir():
        raise JobError(f"folder {str(target.parent)!r} does not exist")
    result = bpy.ops.wm.save_as_mainfile(filepath=str(target), copy=True, check_existing=False)
    if result != {"FINISHED"}:
        raise JobError(f"could not save {str(target)!r}")
