"""Export for Engine (`export_engine`): an armature and the chosen actions through Blender's own
FBX or glTF exporter (settings in recipes/engine.py, guarded by version in `exporter_options`),
from a temporary copy named `Armature` (Unreal then adds no root of its own) with one NLA track per
action, so the user's object, its name, NLA and active action stay as they were; and beside the
file, `<name>.events.json` (`SCHEMA`, docs/engines): each action's pose markers as events and
Stride's contact, phase and event curves once per frame, which FBX cannot carry. A GLB also holds
each animation's events in its `extras`. Both files are written whole or not at all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import bpy
import numpy as np
from mathutils import Matrix

from .. import bridge, carry, compat, markers
from ..core import files
from ..errors import JobError
from ..options import EngineExportOptions, RootMotionOptions
from ..recipes import engine as recipe
from ..recipes.engine import (
    ARMATURE_NAME,
    ENGINES,
    EXTENSIONS,
    FORMATS,
    ROOT_OF,
    SCHEMA,
    check_writable,
    curve_name,
    sidecar_path,
    with_animation_extras,
)
from .results import PLAYS_ON
from .root_motion import add_root_motion, check_action_bones, has_root_motion, not_editing


def exporter_options(file_format: str, engine: str, version: tuple[int, ...] | None = None) -> dict[str, Any]:
    """The keyword arguments Export for Engine passes Blender's exporter (recipes/engine.py's
    `exporter_options`) in Blender `version` (default: this one)."""
    return recipe.exporter_options(file_format, engine,
                                   tuple(bpy.app.version) if version is None else version)


class Exported(NamedTuple):
    """What Export for Engine wrote: the file, its sidecar, the armature exported, the actions (as
    named in the file), and the root-motion actions it made on the way."""

    path: Path
    sidecar: Path
    armature: Any
    actions: list[str]
    made: list[str]


def chosen_actions(obj: Any, names: str) -> list[Any]:
    """The actions `names` picks on `obj`: '' its active one, 'ALL' every action that keys its
    bones and only those, else names separated by commas (each must exist)."""
    text = names.strip()
    if not text:
        return [bridge.resolve_action(obj)[0]]
    if text.upper() == "ALL":
        bones = obj.data.bones
        found = []
        for act in bpy.data.actions:
            paths = [bridge.quoted_name(fc.data_path, "pose.bones")
                     for fc in compat.fcurves(act, compat.action_slot(act, obj))]
            named = [p[0] for p in paths if p is not None]
            if named and all(n in bones for n in named):
                found.append(act)
        if not found:
            raise JobError(f"no action keys the bones of {obj.name!r}: import or bake one first")
        return found
    wanted = [n.strip() for n in text.split(",") if n.strip()]
    missing = [n for n in wanted if n not in bpy.data.actions]
    if missing:
        raise JobError(f"no action named {missing[0]!r}: name actions as the Action Editor shows them, "
                            "separated by commas, or ALL")
    return [bpy.data.actions[n] for n in wanted]


def export_engine(obj: Any, path: str | Path, *, options: EngineExportOptions,
                  progress: Callable[[float], None] | None = None) -> Exported:
    """Write `obj` and the chosen actions for an engine (see the module notes) to `path`, and the
    events beside it (`sidecar_path`); with Add Root Motion on, an action without a root's
    motion is exported as its root-motion bake (made first, kept in the file)."""
    fmt, engine = options.file_format.upper(), options.engine.upper()
    if fmt not in FORMATS:
        raise JobError(f"Format must be one of {', '.join(FORMATS)}, not {options.file_format!r}")
    if engine not in ENGINES:
        raise JobError(f"Engine must be one of {', '.join(ENGINES)}, not {options.engine!r}")
    target = Path(path)
    sidecar = sidecar_path(target)
    check_writable(target, sidecar, EXTENSIONS[fmt])
    not_editing(obj)
    step = progress or (lambda fraction: None)
    actions = chosen_actions(obj, options.actions)
    made: list[str] = []
    adt = obj.animation_data
    playing = (adt.action, getattr(adt, "action_slot", None)) if adt is not None else (None, None)
    try:
        if options.root_motion:
            actions = _with_root_motion(obj, actions, options, made, step)
            if made and playing[0] is not None:  # an export leaves the armature playing what it played
                compat.assign(obj, playing[0], playing[1])
        armature, entries, data = _write_ready(obj, actions, fmt, engine, target, step)
    except BaseException:
        for name in made:  # a failed export leaves no bakes of its own behind
            if name in bpy.data.actions:
                bpy.data.actions.remove(bpy.data.actions[name])
        raise
    document = json.dumps({"version": SCHEMA, "file": target.name, "actions": entries}, indent=1)
    existed = target.exists()
    files.write_atomic(target, data)
    try:
        files.write_atomic(sidecar, (document + "\n").encode())
    except BaseException:
        if not existed:  # the pair or nothing
            target.unlink(missing_ok=True)
        raise
    step(1.0)
    return Exported(target, sidecar, armature, [act.name for act in actions], made)


def _write_ready(obj: Any, actions: Sequence[Any], fmt: str, engine: str, target: Path,
                 step: Callable[[float], None]) -> tuple[Any, list[dict[str, Any]], bytes]:
    """(the armature the actions play on, their sidecar records, the exported file's bytes)."""
    players = {_plays_on(obj, act) for act in actions}
    if len(players) > 1:
        names = ", ".join(sorted(repr(p.name) for p in players))
        raise JobError(f"the actions play on different armatures ({names}): export each armature's "
                            "actions on their own")
    armature = players.pop()
    for act in actions:
        check_action_bones(armature, act)
    step(0.5)
    fps = bridge.scene_fps()
    for act in actions:
        note = bridge.rate_note(armature, act, bridge.action_to_clip(armature, act))
        if note:
            warnings.warn(f"{note}; exported at the scene's {fps:g} fps", bridge.BridgeWarning, stacklevel=2)
    entries = [action_entry(armature, act, fps) for act in actions]
    data = _export_bytes(armature, actions, fmt, engine, target)
    step(0.9)
    if fmt == "GLB":
        data = with_animation_extras(data, {e["name"]: {"events": e["events"], "fps": e["fps"]}
                                            for e in entries})
    return armature, entries, data


def _with_root_motion(obj: Any, actions: Sequence[Any], options: EngineExportOptions, made: list[str],
                      step: Callable[[float], None]) -> list[Any]:
    """Each action with a root's motion: as it is where it has one, else its latest Add Root Motion
    result, else one made now (named in `made`); each once."""
    root_options = RootMotionOptions(smooth=options.smooth, mode=options.mode, source=options.source)
    ready: list[Any] = []
    for k, act in enumerate(actions):
        step(0.5 * k / len(actions))
        if not act.get(ROOT_OF):
            bakes = sorted((a for a in bpy.data.actions if a.get(ROOT_OF) == act.name), key=lambda a: a.name)
            if bakes:
                act = bakes[-1]
            elif not has_root_motion(obj, act, options.source):
                done = add_root_motion(obj, options=dataclasses.replace(root_options, action=act.name))
                act = done.action
                made.append(act.name)
        if act not in ready:
            ready.append(act)
    return ready


def _plays_on(obj: Any, action: Any) -> Any:
    """The armature an action plays on: the rig copy a bake went to (PLAYS_ON), else `obj`."""
    name = action.get(PLAYS_ON)
    other = bpy.data.objects.get(name) if name else None
    return other if other is not None and other.type == "ARMATURE" else obj


def action_entry(obj: Any, action: Any, fps: float) -> dict[str, Any]:
    """The sidecar's record of one action (SCHEMA): its frame range, the export's frame rate, its
    pose markers as events (seconds and frames from the action's start; Stride's exact sub-frame
    times where it keeps them), and Stride's curves sampled on every frame of the range."""
    timing = bridge.action_timing(obj, action)
    start, end = (float(f) for f in action.frame_range)
    found, tags = markers.tracks(action, timing)
    events = [(name, float(timing.frame(t))) for name, times in found.items() for t in times]
    events += [(name, float(timing.frame(t))) for name, t in tags]
    events.sort(key=lambda e: (e[1], e[0]))
    frames = np.arange(start, end + 0.5)
    curves: dict[str, list[float]] = {}
    for fc in sorted(compat.fcurves(action, compat.action_slot(action, obj)),
                     key=lambda fc: (fc.data_path, fc.array_index)):
        if not carry.is_stride_curve(fc.data_path) or not len(fc.keyframe_points):
            continue
        named = bridge.quoted_name(fc.data_path)
        prop = (named[0] if named else "")[len(carry.STRIDE_PREFIX):]
        key = curve_name(prop, fc.array_index, _components(action, obj, fc.data_path))
        curves[key] = [round(float(fc.evaluate(float(f))), 6) for f in frames]
    return {"name": action.name, "frame_start": start, "frame_end": end, "fps": fps,
            "events": [{"name": n, "time": round((f - start) / fps, 6), "frame": round(f - start, 4)}
                       for n, f in events],
            "curves": curves}


def _components(action: Any, obj: Any, path: str) -> int:
    return sum(1 for fc in compat.fcurves(action, compat.action_slot(action, obj)) if fc.data_path == path)


@contextmanager
def _staged(armature: Any, actions: Sequence[Any]) -> Iterator[Any]:
    """A copy of `armature` named ARMATURE_NAME (the user's object of that name renamed meanwhile),
    standing where it stands, each action on an NLA track of its own (a strip named as the action,
    from the action's first frame), selected alone and active; everything put back afterwards, also
    on error."""
    context: Any = bpy.context
    layer = context.view_layer
    scene = context.scene
    active = layer.objects.active
    selected = [o for o in layer.objects if o.select_get()]
    frame = scene.frame_current
    taken = bpy.data.objects.get(ARMATURE_NAME)
    taken_name = taken.name if taken is not None else ""
    copy = None
    try:
        if taken is not None:
            taken.name = ARMATURE_NAME + " (Stride export)"
        copy = armature.copy()
        copy.name = ARMATURE_NAME
        scene.collection.objects.link(copy)
        for pb in copy.pose.bones:  # what an action does not key rests
            pb.matrix_basis = Matrix.Identity(4)
        adt = copy.animation_data or copy.animation_data_create()
        adt.action = None
        for track in list(adt.nla_tracks):
            adt.nla_tracks.remove(track)
        for act in actions:
            track = adt.nla_tracks.new()
            track.name = act.name
            strip = track.strips.new(act.name, round(act.frame_range[0]), act)
            strip.name = act.name
            if compat.SLOTTED:
                strip.action_slot = compat.action_slot(act, armature)
        for o in selected:
            o.select_set(False)
        copy.select_set(True)
        layer.objects.active = copy
        layer.update()
        yield copy
    finally:
        if copy is not None:
            bpy.data.objects.remove(copy)
        if taken is not None:
            taken.name = taken_name
        for o in selected:
            if o.name in layer.objects:
                o.select_set(True)
        layer.objects.active = active
        scene.frame_set(frame)


def _export_bytes(armature: Any, actions: Sequence[Any], fmt: str, engine: str, target: Path) -> bytes:
    """The exported file's bytes: Blender's exporter run on the staged copy into a temporary file
    beside `target` (removed afterwards, also on error)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=EXTENSIONS[fmt], dir=target.parent)
    except OSError as exc:
        raise JobError(f"cannot write in folder {str(target.parent)!r} ({exc.strerror or exc}): nothing "
                            "written; choose another folder") from None
    os.close(fd)
    try:
        with _staged(armature, actions):
            kwargs = exporter_options(fmt, engine)
            if fmt == "FBX":
                result = bpy.ops.export_scene.fbx(filepath=tmp, **kwargs)
            else:
                result = bpy.ops.export_scene.gltf(filepath=tmp, **kwargs)
        if result != {"FINISHED"}:
            raise JobError(f"Blender's {fmt} exporter did not finish ({', '.join(result)}): nothing "
                                "written")
        return Path(tmp).read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)
