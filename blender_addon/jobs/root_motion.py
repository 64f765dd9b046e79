"""Add Root Motion (`add_root_motion`): the core's `root.add_root` on an action. On an armature
without a root bone it adds one ("root", at the armature's origin, its Z axis along the
character's up, its Y axis along heading 0, the top bones re-parented to it): an armature edit
that leaves every existing action playing as before (the root rests at the origin unkeyed), and a
new action with the root's motion. An armature whose top bone is a still floor root already (a
Mixamo rig after conversion, Bandai's joint_Root) keeps it and gets the motion there. A rig whose
deform bones follow controls (Rigify) is not edited: the root goes on Stride's copy of its deform
skeleton ("<rig> (Stride)", the rig's other bones left out), which later bakes reuse.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import bpy
import numpy as np
from mathutils import Matrix

from .. import bridge, carry, compat, showing
from ..core import root
from ..core.clip import Clip
from ..errors import JobError
from ..options import RootMotionOptions
from ..recipes.engine import COPY_OF, ROOT_LENGTH, ROOT_NAME, ROOT_OF, ROOT_SUFFIX
from .events import CURVE_GROUP, WRITTEN_CURVES
from .results import PLAYS_ON, write_result
from .scene import BAKED_FROM, resolve_source


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
    not_editing(obj)
    act = resolve_source(obj, options.action)
    check_action_bones(obj, act)
    bridge.check_skeleton(obj, act)
    with _tops_at_rest(obj, act):
        clip, timing = bridge.read_action(obj, act, source=options.source)
    if clip.n_frames < 2:
        raise JobError(f"action {act.name!r} has fewer than two frames: no motion to put on a root")
    mode = options.mode.upper()
    if mode not in ("YAW", "NONE"):
        raise JobError(f"Root Turns must be YAW or NONE, not {options.mode!r}")
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
        action = write_result(obj, out, name, timing, source=act, progress=progress,
                                   pieces=[carry.Piece(act, slot)])
    else:
        # The copy keys only the deform skeleton: the rig's other channels have no bones there.
        action = write_result(target, out, name, timing, progress=progress)
        action[BAKED_FROM] = act.name
        action[PLAYS_ON] = target.name
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


def not_editing(obj: Any) -> None:
    """JobError in Edit Mode (the bones being edited are not the armature's yet); Object and Pose
    Mode are fine."""
    if obj.mode not in ("OBJECT", "POSE"):
        raise JobError(f"{obj.name!r} is in {obj.mode.lower().replace('_', ' ')} mode: go back to "
                            "Object or Pose Mode (Tab) first")


def check_action_bones(obj: Any, action: Any) -> None:
    """JobError when `action` keys bones `obj` lacks: an action of another skeleton."""
    bones = obj.data.bones
    missing = sorted({found[0] for fc in compat.fcurves(action, compat.action_slot(action, obj))
                      if (found := bridge.quoted_name(fc.data_path, "pose.bones")) and found[0] not in bones})
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise JobError(f"action {action.name!r} animates bone {missing[0]!r}{more}, which armature "
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
    length = ROOT_LENGTH * clip.height * where.scale
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
        new = compat.new_fcurve(bag, fc.data_path, fc.array_index, group=CURVE_GROUP)
        carry.write(new, carry.read(fc))
    if source.get(WRITTEN_CURVES) is not None:
        action[WRITTEN_CURVES] = list(source[WRITTEN_CURVES])


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
