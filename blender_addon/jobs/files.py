"""Files in and out: BVH files imported (each its own armature, or actions on one), an action written
as BVH, the open scene saved as a .blend."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from .. import bridge, importer
from ..core import bvh
from ..core.clip import Clip
from ..errors import USER_ERRORS, BridgeWarning, JobError
from ..options import ExportOptions, ImportOptions


def export_bvh(obj: Any, path: str | Path, *, options: ExportOptions) -> Clip:
    """Write an armature's action (the active one by default) to a BVH file, atomically: the motion
    as it stands in the scene (the object's world transform applied), at the action's own rate,
    lengths times Scale."""
    act, _ = bridge.resolve_action(obj, options.action or None)
    clip = bridge.source_clip(obj, act, source=options.source)
    if clip.n_frames == 0:
        raise JobError(f"action {clip.name!r} has no keys to export")
    note = bridge.rate_note(obj, act, clip)
    if note:
        warnings.warn(note, BridgeWarning, stacklevel=2)
    if not (options.global_scale > 0.0 and np.isfinite(options.global_scale)):
        raise JobError(f"Scale must be a positive number, not {options.global_scale:g}")
    bvh.save(clip.scaled(options.global_scale) if options.global_scale != 1.0 else clip, path)
    return clip


def import_files(context: Any, paths: Sequence[str | Path], *, options: ImportOptions | None = None,
                 single_armature: bool = False,
                 progress: Any = None) -> tuple[list[tuple[Any, Any]], list[str]]:
    """Import BVH files and folders: ([(armature, action)], [error message per failed file]).

    A bad file is reported and skipped; the rest still import. With `single_armature`, every file
    after the first becomes another action on the first file's armature (skeletons must match).
    """
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
            done.append(importer.import_bvh(context, path, target=target, progress=step,
                                            **dataclasses.asdict(options or ImportOptions())))
        except USER_ERRORS as exc:
            failed.append(f"{path.name}: {exc}" if str(path) not in str(exc) else str(exc))
    return done, failed


def save_blend(path: str | Path) -> None:
    """Save the open file as a copy at `path` (Blender writes it atomically); the folder must exist."""
    target = Path(path)
    if target.suffix.lower() != ".blend":
        raise JobError(f"{str(target)!r} is not a .blend file name: Blender scenes save as .blend")
    if not target.parent.is_dir():
        raise JobError(f"folder {str(target.parent)!r} does not exist")
    result = bpy.ops.wm.save_as_mainfile(filepath=str(target), copy=True, check_existing=False)
    if result != {"FINISHED"}:
        raise JobError(f"could not save {str(target)!r}")
