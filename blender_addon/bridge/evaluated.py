"""What Blender plays: an action read through the rig (constraints, IK, drivers) frame by frame, as
the viewport shows it, into a Clip at the frames `action_to_clip` reads; the skeleton such a read
reads (a control rig's deform bones), and what besides its keys moves each bone.
"""

from __future__ import annotations

import math
from typing import Any

import bpy
import numpy as np

from .. import compat
from ..core import armature
from ..core.clip import Clip
from ..errors import BridgeError
from ..recipes.actions import fps_from_keys, key_frames, quoted_name, relative_heads
from .keys import begin_read, frame_rate, guess_channels, stored_events
from .space import bone_order, current_scene, import_settings, rest_pose


def evaluated_bones(obj: Any, settings: dict[str, Any] | None = None) -> tuple[list[str], list[int]]:
    """(bone names parents first, parent indices) of the skeleton an evaluated read reads.

    An armature whose bones all deform (a BVH or FBX import) reads every bone, as the keys read.
    One with controls (bones that do not deform: IK targets, a root, Rigify's ORG/MCH bones) reads
    its deform bones only, each under its nearest deform ancestor; where a control stands between
    (Rigify parents DEF-thigh.L to ORG-spine), a control that has a deform twin (the same rest head
    and tail: ORG-spine and DEF-spine) stands for it. A deform bone with neither is a top joint (a
    non-deform root is skipped: its motion is in its children's world pose)."""
    settings = settings if settings is not None else import_settings(obj)
    bones = obj.data.bones
    deform = [b for b in bones if b.use_deform]
    if settings.get("names") or len(deform) == len(bones) or len(deform) < 2:
        return bone_order(obj, settings)
    n = len(bones)
    heads = np.empty(n * 3, dtype=np.float32)
    tails = np.empty(n * 3, dtype=np.float32)
    bones.foreach_get("head_local", heads)
    bones.foreach_get("tail_local", tails)
    ends = np.concatenate([heads.reshape(n, 3), tails.reshape(n, 3)], axis=1).astype(np.float64)
    size = float(np.ptp(ends.reshape(-1, 3), axis=0).max()) or 1.0
    flags = np.zeros(n, dtype=bool)
    bones.foreach_get("use_deform", flags)
    where = np.flatnonzero(flags)

    def twin(bone: Any, below: Any) -> Any:
        close = np.abs(ends[where] - ends[bones.find(bone.name)]).max(axis=1) <= 1e-5 * size
        for k in where[close].tolist():
            other = bones[k]
            if other != below and not _is_ancestor(below, other):
                return other
        return None

    parent_of: dict[str, str | None] = {}
    for b in deform:
        a, found = b.parent, None
        while a is not None and found is None:
            found = a if a.use_deform else twin(a, b)
            a = a.parent
        parent_of[b.name] = found.name if found is not None else None
    names: list[str] = []
    placed: set[str] = set()
    pending = [b.name for b in deform]
    while pending:
        ready = [m for m in pending if parent_of[m] is None or parent_of[m] in placed]
        if not ready:  # twins that point at each other: the rest are top joints
            parent_of[pending[0]] = None
            continue
        for m in ready:
            names.append(m)
            placed.add(m)
        pending = [m for m in pending if m not in placed]
    index = {m: i for i, m in enumerate(names)}
    up = [index[parent_of[m]] if parent_of[m] is not None else -1 for m in names]  # type: ignore[index]
    return names, up


def _is_ancestor(bone: Any, other: Any) -> bool:
    """Whether `bone` is an ancestor of `other`."""
    a = other.parent
    while a is not None:
        if a == bone:
            return True
        a = a.parent
    return False


def rig_driven(obj: Any) -> dict[str, str]:
    """{bone: what moves it besides its keys}: an enabled constraint with influence (its type), a
    bone an IK constraint bends ('IK of <bone>'), or a driver on its pose channels ('driver')."""
    bones = obj.data.bones
    out: dict[str, str] = {}
    for pb in obj.pose.bones:
        for c in pb.constraints:
            if c.mute or not c.is_valid or c.influence <= 0.0:
                continue
            out.setdefault(pb.name, c.type)
            if c.type in ("IK", "SPLINE_IK"):
                a, left = bones[pb.name].parent, c.chain_count - 1
                while a is not None and (c.chain_count == 0 or left > 0):
                    out.setdefault(a.name, f"IK of {pb.name}")
                    a, left = a.parent, left - 1
    adt = obj.animation_data
    for fc in (adt.drivers if adt is not None else ()):
        found = quoted_name(fc.data_path, "pose.bones")
        if found is not None and not fc.mute and found[0] in bones:
            out.setdefault(found[0], "driver")
    return out


def evaluated_clip(obj: Any, action: Any = None, *, axis_forward: str = "-Z", axis_up: str = "Y",
                   global_scale: float = 1.0, fps: float | None = None, slot: Any = None) -> Clip:
    """The Clip Blender plays for an armature's action through its rig (constraints, IK, drivers),
    in BVH conventions as `action_to_clip` reads keys, at the same frames (`action_timing`).

    The action is played alone (the NLA off) on the armature for the read, frame by frame, and
    every pose bone's matrix read in one bulk call per frame; the armature's action, slot, NLA
    switch and the scene's frame are put back afterwards, also on error. The skeleton read is
    `evaluated_bones` (the deform bones of a rig with controls). A joint has position channels
    where its bone moves from its rest offset (a root, a stretching bone)."""
    read = begin_read(obj, action, slot, axis_forward, axis_up, global_scale, evaluated_bones)
    action, settings, names, parents, where = read.action, read.settings, read.names, read.parents, read.where
    conversion, scale = where.conversion, where.scale
    keyed = [fc for fc in read.curves.values() if len(fc.keyframe_points)]
    frames, _ = key_frames(compat.read_keys_many(keyed))
    pose = _play(obj, action, read.slot, frames, names)
    _, heads, tails = rest_pose(obj, names)
    bones = obj.data.bones
    mats = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", mats)
    rest_m = mats.reshape(-1, 4, 4).transpose(0, 2, 1)[[bones.find(n) for n in names]]
    rotations, moved = armature.pose_matrices_to_local(pose, rest_m, parents, conversion, scale)
    offsets = relative_heads(heads, parents, conversion) / scale
    top = np.asarray(parents) < 0
    # float32 matrices: a bone that keeps its rest offset reads it back within ~1e-6 of the size;
    # one a stretching parent carries along (Rigify's DEF-toe under a stretching DEF-foot), or
    # that IK's float32 drift leaves off its parent's rotation, gets position channels.
    size = max(float(np.ptp(heads, axis=0).max()) / scale, 1e-9) if len(heads) else 1.0
    has_loc = top | (np.abs(moved - offsets).max(axis=(0, 2), initial=0.0) > 5e-6 * size)
    positions = np.repeat(offsets[None], len(frames), axis=0)
    positions[:, has_loc] = moved[:, has_loc]
    if where.shift.any():
        positions[:, top] += where.shift
    channels = guess_channels(obj, names, has_loc)
    kids = {p for p in parents if p >= 0}
    end_parents = [j for j in range(len(names)) if j not in kids]
    end_offsets = ((tails[end_parents] - heads[end_parents]) @ conversion / scale).reshape(-1, 3)
    clip_fps = fps_from_keys(frames, frame_rate(settings, fps))
    return Clip(names, parents, offsets, rotations, positions, clip_fps, channels=channels,
                end_parents=end_parents, end_offsets=end_offsets, name=action.name,
                events=stored_events(action))


def _play(obj: Any, action: Any, slot: Any, frames: np.ndarray, names: list[str]) -> np.ndarray:
    """[T, J, 4, 4] armature-space pose matrices of bones `names` as Blender evaluates `action` on
    `obj` at `frames` (one foreach_get per frame); everything the read changes is put back."""
    scene = current_scene()
    view_layer = bpy.context.view_layer
    made = obj.animation_data is None
    adt = obj.animation_data or obj.animation_data_create()
    before = (adt.action, getattr(adt, "action_slot", None), adt.use_nla)
    frame, subframe = scene.frame_current, scene.frame_subframe
    swap = adt.action != action or (compat.SLOTTED and adt.action_slot != slot)
    if adt.use_tweak_mode and swap:
        raise BridgeError(f"{obj.name!r} is in NLA tweak mode, where Stride cannot play {action.name!r} to "
                          "read it: leave tweak mode (Tab in the NLA Editor), or read Keys")
    if view_layer is not None:
        view_layer.update()  # an armature never evaluated can crash Blender when given an action
    pose_bones = obj.pose.bones
    n = len(pose_bones)
    order = [pose_bones.find(name) for name in names]
    out = np.empty((len(frames), n * 16), dtype=np.float32)
    # Every frame step evaluates the whole view layer: the other objects (a character's meshes and
    # their modifiers) are disabled in viewports for the read, so that only the rig and what it
    # depends on (constraint targets, parents, driver sources: the depsgraph keeps those, visible
    # or not) are evaluated; a third to a half of each step with a 130k-vertex mesh. They are
    # enabled and selected as they were afterwards (disabling deselects), also on error. Objects
    # in a mode (a mesh in Weight Paint) and linked ones are left alone.
    others = [o for o in (view_layer.objects if view_layer is not None else ())
              if o != obj and not o.hide_viewport and o.library is None and o.mode == "OBJECT"]
    selected = [o for o in others if o.select_get()]
    hidden: list[Any] = []
    try:
        for o in others:
            try:
                o.hide_viewport = True
            except (AttributeError, RuntimeError, TypeError):  # one Blender will not change: it plays along
                continue
            hidden.append(o)
        if swap:
            compat.assign(obj, action, slot)
        if not adt.use_tweak_mode:
            adt.use_nla = False
        for i, f in enumerate(frames.tolist()):
            whole = math.floor(f + 1e-6)
            scene.frame_set(int(whole), subframe=max(f - whole, 0.0))
            pose_bones.foreach_get("matrix", out[i])
    finally:
        for o in hidden:
            o.hide_viewport = False
        for o in selected:
            if not o.select_get():
                o.select_set(True)
        if made:
            obj.animation_data_clear()
        else:
            if not adt.use_tweak_mode:
                adt.use_nla = before[2]
            if swap:
                adt.action = before[0]
                if compat.SLOTTED and before[0] is not None and before[1] is not None:
                    adt.action_slot = before[1]
        scene.frame_set(frame, subframe=subframe)
    return out.reshape(len(frames), n, 4, 4).transpose(0, 1, 3, 2)[:, order].astype(np.float64)
