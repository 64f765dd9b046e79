"""Ready for the engine: a root bone that carries the travel, and exports with their events.

- **Add Root Motion** (`add_root_motion`): the core's `root.add_root` on an action. On an armature
  without a root bone it adds one ("root", at the armature's origin, its Z axis along the
  character's up, its Y axis along heading 0, the top bones re-parented to it): an armature edit
  that leaves every existing action playing as before (the root rests at the origin unkeyed), and
  a new action with the root's motion. An armature whose top bone is a still floor root already
  (a Mixamo rig after conversion, Bandai's joint_Root) keeps it and gets the motion there. A rig
  whose deform bones follow controls (Rigify) is not edited: the root goes on Stride's copy of its
  deform skeleton ("<rig> (Stride)", the rig's other bones left out), which later bakes reuse.
- **Export for Engine** (`export_engine`): an armature and the chosen actions through Blender's own
  FBX or glTF exporter (settings below, guarded by version in `exporter_options`), from a
  temporary copy named `Armature` (Unreal then adds no root of its own) with one NLA track per
  action, so the user's object, its name, NLA and active action stay as they were; and beside the
  file, `<name>.events.json` (`SCHEMA`, docs/engines): each action's pose markers as events and
  Stride's contact, phase and event curves once per frame, which FBX cannot carry. A GLB also
  holds each animation's events in its `extras`. Both files are written whole or not at all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import bpy
import numpy as np
from mathutils import Matrix

from . import bridge, carry, compat, jobs, markers, showing
from .core import files, root
from .core.clip import Clip
from .options import ENGINE_CHOICES, ENGINE_FORMAT_CHOICES, EngineExportOptions, RootMotionOptions

ROOT_NAME = "root"
ROOT_SUFFIX = " (root motion)"
COPY_OF = "stride_deform_copy_of"  # on Stride's deform-skeleton copy of a rig: the rig's name
ROOT_OF = "stride_root_motion_of"  # on an Add Root Motion result: the action it was baked from
ARMATURE_NAME = "Armature"  # what the armature object is called in an exported file
SIDECAR_SUFFIX = ".events.json"
SCHEMA = 1
FORMATS = tuple(value for value, _, _ in ENGINE_FORMAT_CHOICES)
ENGINES = tuple(value for value, _, _ in ENGINE_CHOICES)
EXTENSIONS = {"FBX": ".fbx", "GLB": ".glb"}
# The root bone's length, in heights: long enough to see and pick in the viewport.
_ROOT_LENGTH = 0.15


# -- Add Root Motion --------------------------------------------------------------------------------

class RootMotion(NamedTuple):
    """What Add Root Motion made: the action, the armature it plays on (the rig's copy for a rig with
    controls), its clip, the root bone it added ('' when the armature's own was used) and the
    smoothing used (seconds)."""

    action: Any
    armature: Any
    clip: Clip
    added: str
    smooth: float


def add_root_motion(obj: Any, *, options: RootMotionOptions,
                    progress: Callable[[float], None] | None = None) -> RootMotion:
    """A new action "<action> (root motion)" whose root bone carries the travel (see the module
    notes), from the action (the active one by default; baking again bakes from the action a root
    motion was baked from). The source action is never changed."""
    _not_editing(obj)
    act = jobs.resolve_source(obj, options.action)
    _check_bones(obj, act)
    bridge.check_skeleton(obj, act)
    with _tops_at_rest(obj, act):
        clip, timing = bridge.read_action(obj, act, source=options.source)
    if clip.n_frames < 2:
        raise jobs.JobError(f"action {act.name!r} has fewer than two frames: no motion to put on a root")
    mode = options.mode.upper()
    if mode not in ("YAW", "NONE"):
        raise jobs.JobError(f"Root Turns must be YAW or NONE, not {options.mode!r}")
    found = showing.overrides(obj, showing.moving_joints(clip))
    parents = showing.rehung(obj, clip)
    target, made = _deform_copy(obj, clip, parents) if found or parents else (obj, None)
    seconds = options.smooth if options.smooth > 0.0 else 0.5 * (root.gait_cycle(clip)
                                                                 or root.DEFAULT_CYCLE_SECONDS)
    out = root.add_root(clip, name=_free_name(target, clip), smooth=seconds, mode=mode.lower())
    added = out.names[0] if out.n_joints > clip.n_joints and out.names[0] not in target.data.bones else ""
    if added:
        _add_root_bone(target, out, clip)
    try:
        action = _write_root_motion(obj, act, target, out, timing, progress)
    except BaseException:
        # Nothing half-made stays: the root bone goes again (a new copy with it), as undo would.
        if made is not None:
            showing.remove_player(made)
        elif added:
            _remove_root_bone(target, added)
        raise
    return RootMotion(action, target, out, added, float(seconds))


def _write_root_motion(obj: Any, act: Any, target: Any, out: Clip, timing: bridge.Timing,
                       progress: Callable[[float], None] | None) -> Any:
    """The root-motion action of `act` on `target` (`obj`, or its deform copy)."""
    name = f"{act.name}{ROOT_SUFFIX}"
    if target is obj:
        slot = compat.action_slot(act, obj)
        action = jobs.write_result(obj, out, name, timing, source=act, progress=progress,
                                   pieces=[carry.Piece(act, slot)])
    else:
        # The copy keys only the deform skeleton: the rig's other channels have no bones there.
        action = jobs.write_result(target, out, name, timing, progress=progress)
        action[jobs.BAKED_FROM] = act.name
        action[jobs.PLAYS_ON] = target.name
        warnings.warn(f"{action.name!r} plays on {target.name!r}, Stride's copy of the deform skeleton of "
                      f"{obj.name!r} with the root bone {out.names[0]!r} (the rig, its bones and actions are "
                      f"unchanged: controls drive {obj.name!r}'s deform bones, and the root goes on the "
                      "skeleton an engine plays); export it from there", showing.ShowWarning, stacklevel=2)
    _copy_stride_curves(obj, act, target, action)
    action[ROOT_OF] = act.name
    action.use_fake_user = True
    return action


@contextmanager
def _tops_at_rest(obj: Any, action: Any) -> Iterator[None]:
    """The top bones `action` does not key at rest for the block (a read), their pose put back
    after: an unkeyed bone holds the pose the last action played left it in, and a root bone
    added for another action must read as the still root it is in this one."""
    keyed = {found[0] for fc in compat.fcurves(action, compat.action_slot(action, obj))
             if (found := bridge.quoted_name(fc.data_path, "pose.bones"))}
    held = [(pb, pb.matrix_basis.copy()) for pb in obj.pose.bones
            if pb.parent is None and pb.name not in keyed] if obj.pose is not None else []
    try:
        for pb, _ in held:
            pb.matrix_basis = Matrix.Identity(4)
        yield
    finally:
        for pb, basis in held:
            pb.matrix_basis = basis


def _not_editing(obj: Any) -> None:
    """JobError in Edit Mode (the bones being edited are not the armature's yet); Object and Pose
    Mode are fine."""
    if obj.mode not in ("OBJECT", "POSE"):
        raise jobs.JobError(f"{obj.name!r} is in {obj.mode.lower().replace('_', ' ')} mode: go back to "
                            "Object or Pose Mode (Tab) first")


def _check_bones(obj: Any, action: Any) -> None:
    """JobError when `action` keys bones `obj` lacks: an action of another skeleton."""
    bones = obj.data.bones
    missing = sorted({found[0] for fc in compat.fcurves(action, compat.action_slot(action, obj))
                      if (found := bridge.quoted_name(fc.data_path, "pose.bones")) and found[0] not in bones})
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise jobs.JobError(f"action {action.name!r} animates bone {missing[0]!r}{more}, which armature "
                            f"{obj.name!r} has not: it was made for another skeleton. Pick an action of "
                            f"{obj.name!r} (Action Editor), or select the armature it was made for")


def _free_name(target: Any, clip: Clip) -> str:
    """'root', else 'root.001', ...: a name no joint of the clip has, nor a bone of `target` (on
    Stride's copy of a rig, the bones besides the clip's are its root)."""
    taken = set(clip.names)
    if not target.get(COPY_OF):
        taken |= {b.name for b in target.data.bones}
    name, k = ROOT_NAME, 0
    while name in taken:
        k += 1
        name = f"{ROOT_NAME}.{k:03d}"
    return name


def _edit(obj: Any) -> tuple[Any, str]:
    """Edit mode on `obj` (made active) for the caller's block; `_leave` goes back: (the active
    object before, the mode `obj` was in)."""
    context: Any = bpy.context
    layer = context.view_layer
    before = (layer.objects.active, obj.mode)
    layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return before


def _leave(before: tuple[Any, str]) -> None:
    active, mode = before
    bpy.ops.object.mode_set(mode="POSE" if mode == "POSE" else "OBJECT")
    context: Any = bpy.context
    context.view_layer.objects.active = active


def _add_root_bone(target: Any, out: Clip, clip: Clip) -> None:
    """The root bone of `out` (its joint 0) added to `target`'s armature at its origin, lying on the
    floor: Y along heading 0, Z along the character's up (both in armature space), the bones of the
    clip's top joints re-parented to it, unconnected. Unkeyed, it rests where the armature's origin
    is, so every action that does not key it plays as before."""
    where = bridge.space(target, bridge.import_settings(target))
    up = where.conversion @ clip.up
    forward = where.conversion @ root.floor_axes(clip.up)[0]
    length = _ROOT_LENGTH * clip.height * where.scale
    children = [out.names[j] for j in np.flatnonzero(out.parents == 0)]
    before = _edit(target)
    try:
        edit = target.data.edit_bones
        bone = edit.new(out.names[0])
        bone.head = (0.0, 0.0, 0.0)
        bone.tail = tuple(float(v) for v in forward * length)
        bone.align_roll(tuple(float(v) for v in up))
        bone.use_deform = False
        for name in children:
            edit[name].use_connect = False
            edit[name].parent = bone
    finally:
        _leave(before)


def _remove_root_bone(target: Any, name: str) -> None:
    """Undo `_add_root_bone`: its children top bones again, the bone gone."""
    before = _edit(target)
    try:
        edit = target.data.edit_bones
        bone = edit[name]
        for child in list(bone.children):
            child.parent = None
        edit.remove(bone)
    finally:
        _leave(before)


def _deform_copy(obj: Any, clip: Clip, parents: dict[str, str | None]) -> tuple[Any, Any]:
    """Stride's copy of a rig's deform skeleton, where a root goes without touching the rig: the
    one an earlier Add Root Motion made (its bones hang as the clip's joints), else a new one: a
    rig copy (showing.make_player) with its own armature data, bones re-parented as read, the
    bones the clip does not read removed, and without the constraints and drivers of the rig."""
    for other in bpy.data.objects:
        if other.type == "ARMATURE" and other.get(COPY_OF) == obj.name and _hangs_as(other, clip):
            return other, None
    player = showing.make_player(obj, showing.overrides(obj, clip.names), parents or None, clip.names)
    copy = player.armature
    try:
        if player.data is None:
            player = player._replace(data=obj.data.copy())
            copy.data = player.data
            copy.data.name = obj.data.name + showing.SUFFIX
        copy[COPY_OF] = obj.name
        keep = set(clip.names)
        adt = copy.animation_data
        for d in list(adt.drivers if adt is not None else ()):
            if bridge.quoted_name(d.data_path, "pose.bones") is not None:  # keys alone move its bones
                adt.drivers.remove(d)
        for pb in copy.pose.bones:
            for c in list(pb.constraints):
                pb.constraints.remove(c)
        before = _edit(copy)
        try:
            edit = copy.data.edit_bones
            for bone in [b for b in edit if b.name not in keep]:
                edit.remove(bone)
            for name, p in zip(clip.names, clip.parents, strict=True):
                edit[name].use_connect = False
                edit[name].parent = edit[clip.names[p]] if p >= 0 else None
        finally:
            _leave(before)
    except BaseException:
        showing.remove_player(player)
        raise
    return copy, player


def _hangs_as(obj: Any, clip: Clip) -> bool:
    """Whether `obj` has the clip's joints as bones hanging as they do (a root above allowed)."""
    bones = obj.data.bones
    for name, p in zip(clip.names, clip.parents, strict=True):
        bone = bones.get(name)
        if bone is None:
            return False
        want = clip.names[p] if p >= 0 else None
        have = bone.parent.name if bone.parent is not None else None
        if have != want and not (want is None and bone.parent is not None and bone.parent.parent is None
                                 and bone.parent.name not in clip.names):
            return False
    return True


def _copy_stride_curves(obj: Any, source: Any, target: Any, action: Any) -> None:
    """Stride's event, phase, contact and tag curves of `source` into `action` (on `target`), keys as
    they are: a root motion keeps the source's frames, so they stay in step."""
    bag = compat.channelbag(action, compat.action_slot(action, target), create=True)
    for fc in compat.fcurves(source, compat.action_slot(source, obj)):
        if not carry.is_stride_curve(fc.data_path) or not len(fc.keyframe_points):
            continue
        named = bridge.quoted_name(fc.data_path)
        prop = named[0] if named else ""
        if prop and prop not in target.keys() and prop in obj.keys():
            target[prop] = obj[prop]
        new = compat.new_fcurve(bag, fc.data_path, fc.array_index, group=jobs.CURVE_GROUP)
        carry.write(new, carry.read(fc))
    if source.get(jobs.WRITTEN_CURVES) is not None:
        action[jobs.WRITTEN_CURVES] = list(source[jobs.WRITTEN_CURVES])


def has_root_motion(obj: Any, action: Any, source: str = "AUTO") -> bool:
    """Whether `action` moves a root above the hips on `obj`: one top joint, not the pelvis, that
    moves (an Add Root Motion result, a pre-cut loop whose travel is on its top joint)."""
    with _tops_at_rest(obj, action):
        clip = bridge.source_clip(obj, action, source=source)
    tops = np.flatnonzero(clip.parents < 0)
    if len(tops) != 1 or clip.n_frames < 2 or tops[0] == clip.body.pelvis:
        return False
    top = int(tops[0])
    moved = np.ptp(clip.positions[:, top], axis=0).max() > 1e-6 * clip.height
    return bool(moved or np.abs(clip.rotations[:, top] - clip.rotations[:1, top]).max() > 1e-9)


# -- Export for Engine ------------------------------------------------------------------------------

# Each exporter's settings, and the Blender version from which an option exists (probed in 4.2.23,
# 4.5.15, 5.0.1 and 5.2.3): the one place versions differ.
FBX_OPTIONS: dict[str, Any] = {
    "use_selection": True, "object_types": {"ARMATURE"}, "add_leaf_bones": False,
    "armature_nodetype": "NULL", "primary_bone_axis": "Y", "secondary_bone_axis": "X",
    "use_armature_deform_only": False, "bake_anim": True, "bake_anim_use_all_bones": True,
    "bake_anim_use_nla_strips": True, "bake_anim_use_all_actions": False,
    "bake_anim_force_startend_keying": True, "bake_anim_step": 1.0, "bake_anim_simplify_factor": 0.0,
    "apply_unit_scale": True, "bake_space_transform": False, "use_custom_props": False,
}
FBX_ENGINES: dict[str, dict[str, Any]] = {
    # Epic's Send to Unreal: Blender's own axes (Z up), scale in the object transforms.
    "UNREAL": {"axis_forward": "Y", "axis_up": "Z", "apply_scale_options": "FBX_SCALE_NONE"},
    # Unity's axes, and the unit in the file's scale so that Unity imports the rig at scale 1.
    "UNITY": {"axis_forward": "-Z", "axis_up": "Y", "apply_scale_options": "FBX_SCALE_ALL"},
}
GLTF_OPTIONS: dict[str, Any] = {
    "export_format": "GLB", "use_selection": True, "export_animations": True,
    "export_animation_mode": "ACTIONS", "export_anim_single_armature": False,
    "export_force_sampling": True, "export_optimize_animation_size": False,
    "export_optimize_animation_keep_anim_armature": True, "export_reset_pose_bones": True,
    "export_anim_slide_to_zero": True, "export_frame_range": False, "export_bake_animation": False,
    "export_def_bones": False, "export_leaf_bone": False, "export_extras": False, "export_yup": True,
    "export_apply": False, "export_skins": True, "export_current_frame": False,
}
SINCE: dict[str, tuple[int, int, int]] = {"export_merge_animation": (4, 5, 0)}
GLTF_SINCE: dict[str, Any] = {"export_merge_animation": "ACTION"}


def exporter_options(file_format: str, engine: str, version: tuple[int, ...] | None = None) -> dict[str, Any]:
    """The keyword arguments Export for Engine passes Blender's exporter for `file_format` (FBX, GLB)
    and `engine` (an FBX's axes and scale), in Blender `version` (default: this one)."""
    version = tuple(bpy.app.version) if version is None else version
    if file_format == "FBX":
        return {**FBX_OPTIONS, **FBX_ENGINES[engine]}
    options = dict(GLTF_OPTIONS)
    options.update({k: v for k, v in GLTF_SINCE.items() if version >= SINCE[k]})
    return options


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
            raise jobs.JobError(f"no action keys the bones of {obj.name!r}: import or bake one first")
        return found
    wanted = [n.strip() for n in text.split(",") if n.strip()]
    missing = [n for n in wanted if n not in bpy.data.actions]
    if missing:
        raise jobs.JobError(f"no action named {missing[0]!r}: name actions as the Action Editor shows them, "
                            "separated by commas, or ALL")
    return [bpy.data.actions[n] for n in wanted]


def export_engine(obj: Any, path: str | Path, *, options: EngineExportOptions,
                  progress: Callable[[float], None] | None = None) -> Exported:
    """Write `obj` and the chosen actions for an engine (see the module notes) to `path`, and the
    events beside it (`sidecar_path`); with Add Root Motion on, an action without a root's
    motion is exported as its root-motion bake (made first, kept in the file)."""
    fmt, engine = options.file_format.upper(), options.engine.upper()
    if fmt not in FORMATS:
        raise jobs.JobError(f"Format must be one of {', '.join(FORMATS)}, not {options.file_format!r}")
    if engine not in ENGINES:
        raise jobs.JobError(f"Engine must be one of {', '.join(ENGINES)}, not {options.engine!r}")
    target = Path(path)
    sidecar = sidecar_path(target)
    _check_writable(target, sidecar, EXTENSIONS[fmt])
    _not_editing(obj)
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
        raise jobs.JobError(f"the actions play on different armatures ({names}): export each armature's "
                            "actions on their own")
    armature = players.pop()
    for act in actions:
        _check_bones(armature, act)
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


def sidecar_path(path: str | Path) -> Path:
    """The events file beside an exported file: its extension replaced by `.events.json`."""
    target = Path(path)
    return target.with_name(target.stem + SIDECAR_SUFFIX)


def _check_writable(target: Path, sidecar: Path, extension: str) -> None:
    if target.suffix.lower() != extension:
        raise jobs.JobError(f"{str(target)!r} does not end in {extension}: name the file with the format's "
                            "extension")
    folder = target.parent
    if not folder.is_dir():
        raise jobs.JobError(f"folder {str(folder)!r} does not exist: nothing written")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise jobs.JobError(f"folder {str(folder)!r} is not writable: nothing written; choose another folder")
    for path in (target, sidecar):
        if path.is_dir():
            raise jobs.JobError(f"{str(path)!r} is a folder: give a file name")
        if path.exists() and not os.access(path, os.W_OK):
            raise jobs.JobError(f"{str(path)!r} is read-only: nothing written")


def _plays_on(obj: Any, action: Any) -> Any:
    """The armature an action plays on: the rig copy a bake went to (PLAYS_ON), else `obj`."""
    name = action.get(jobs.PLAYS_ON)
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


def curve_name(prop: str, index: int, components: int) -> str:
    """A curve's name in the sidecar: the property without `stride_`; (sin, cos) pairs (event and
    phase curves) as `_sin`/`_cos`, other vectors as `_<index>`."""
    if components < 2:
        return prop
    if components == 2 and (prop == "phase" or prop.startswith("event_")):
        return f"{prop}_{('sin', 'cos')[index]}"
    return f"{prop}_{index}"


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
        raise jobs.JobError(f"cannot write in folder {str(target.parent)!r} ({exc.strerror or exc}): nothing "
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
            raise jobs.JobError(f"Blender's {fmt} exporter did not finish ({', '.join(result)}): nothing "
                                "written")
        return Path(tmp).read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)


# -- GLB ----------------------------------------------------------------------------------------------

_GLB_MAGIC, _JSON, _BIN = b"glTF", 0x4E4F534A, 0x004E4942


def glb_json(data: bytes) -> dict[str, Any]:
    """The JSON chunk of a GLB file (glTF 2.0 binary), parsed."""
    return _glb_chunks(data)[0]


def _glb_chunks(data: bytes) -> tuple[dict[str, Any], bytes]:
    if len(data) < 20 or data[:4] != _GLB_MAGIC:
        raise ValueError("not a GLB file (no glTF header)")
    length, kind = struct.unpack_from("<II", data, 12)
    if kind != _JSON:
        raise ValueError("a GLB file's first chunk must be JSON")
    return json.loads(data[20:20 + length].decode("utf-8")), data[20 + length:]


def with_animation_extras(data: bytes, extras: dict[str, dict[str, Any]]) -> bytes:
    """A GLB whose animations named in `extras` hold those entries in their `extras` (merged with
    what is there); the binary chunk unchanged."""
    doc, rest = _glb_chunks(data)
    for animation in doc.get("animations", []):
        more = extras.get(animation.get("name", ""))
        if more:
            animation["extras"] = {**animation.get("extras", {}), **more}
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)  # chunks are 4-byte aligned; JSON pads with spaces
    total = 12 + 8 + len(text) + len(rest)
    return _GLB_MAGIC + struct.pack("<II", 2, total) + struct.pack("<II", len(text), _JSON) + text + rest
