"""Bakes that show: a result whose moving bones constraints override plays on a copy of the armature.

A bone's keys do not show while an enabled constraint at influence > 0 sets its transform
(`OVERRIDING`: Copy Transforms, Copy Rotation, Child Of, Stretch To, Damped Track, Armature, ...;
an IK or Spline IK constraint on it or on a bone whose chain reaches it) or a driver drives one of
its transform channels: Rigify's DEF bones follow its controls so. When a bake moves such a bone,
its result goes where it plays: a copy of the armature object, "<rig> (Stride)", sharing the
armature data (bones, rest pose) and standing where the rig stands, without those constraints and
drivers (they live on the object's pose and animation data, so the user's rig keeps them), with the
result as its action; each mesh the rig deforms gets a linked duplicate ("<mesh> (Stride)", sharing
the mesh data) whose Armature modifier points at the copy. The user's rig, its actions and its
constraints are left as they were; a ShowWarning names the copy (the operator's report, the CLI's
stderr). Limit and Floor constraints only clamp and stay. Bones the result keys without moving
them (a rig's deform bones read from keys it never set) do not count: their constraints stay, on
the rig itself.

A result whose joints hang differently from the rig's bones (an evaluated read of a rig whose deform
bones hang under controls: each then hangs under its nearest deform ancestor) plays on such a copy
too, with its own copy of the armature data ("<armature> (Stride)", same rest pose) whose bones are
re-parented as the result's joints hang (`rehung`), so its keys play the pose read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import bpy
import numpy as np

from . import bridge
from .core import quat
from .core.clip import Clip

SUFFIX = " (Stride)"
OVERRIDING = frozenset({
    "COPY_TRANSFORMS", "COPY_ROTATION", "COPY_LOCATION", "COPY_SCALE", "CHILD_OF", "STRETCH_TO",
    "DAMPED_TRACK", "TRACK_TO", "LOCKED_TRACK", "ARMATURE", "TRANSFORM", "ACTION", "CLAMP_TO",
    "FOLLOW_PATH", "PIVOT", "SHRINKWRAP", "TRANSFORM_CACHE", "FOLLOW_TRACK", "OBJECT_SOLVER",
    "CAMERA_SOLVER"})
CHAINS = frozenset({"IK", "SPLINE_IK"})
TRANSFORMS = frozenset({"location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale"})


class ShowWarning(UserWarning):
    """Where a bake plays when it cannot play on the rig it was read from (operators report it as
    a WARNING, the CLI on stderr)."""


class Override(NamedTuple):
    """What stops a bone's keys from showing: a constraint (its owner bone for a chain) or a driver."""

    bone: str
    owner: str  # the bone the constraint is on (the bone itself unless a chain reaches it)
    constraint: str  # the constraint's name ('' for a driver)
    kind: str  # the constraint's type, or 'DRIVER'

    def describe(self) -> str:
        if self.kind == "DRIVER":
            return f"{self.bone}: a driver"
        where = "" if self.owner == self.bone else f" on {self.owner}"
        return f"{self.bone}: {self.kind}{where}"


def moving_joints(clip: Clip) -> list[str]:
    """The joints whose local rotation or translation changes over the clip."""
    if clip.n_frames < 2:
        return []
    turns = quat.angle(clip.rotations, clip.rotations[:1]).max(axis=0) > 1e-6
    spread = np.ptp(clip.positions, axis=0).max(axis=-1) > 1e-9 * max(clip.height, 1.0)
    return [n for n, m in zip(clip.names, turns | spread, strict=True) if m]


def _active(c: Any) -> bool:
    return not c.mute and c.influence > 0.0 and getattr(c, "is_valid", True)


def _chain(pb: Any, count: int) -> Iterable[Any]:
    """The bones an IK chain of `count` bones (0: to the root) ending at `pb` moves."""
    k = 0
    while pb is not None and (count <= 0 or k < count):
        yield pb
        pb, k = pb.parent, k + 1


def overrides(obj: Any, bones: Iterable[str]) -> list[Override]:
    """What overrides the keys of `bones` on armature `obj`: active constraints that set their
    transform (OVERRIDING), IK chains reaching them, drivers on their transform channels."""
    wanted = set(bones)
    found: list[Override] = []
    if obj.pose is None:
        context: Any = bpy.context
        context.view_layer.update()
    for pb in obj.pose.bones if obj.pose is not None else ():
        for c in pb.constraints:
            if not _active(c):
                continue
            if c.type in OVERRIDING and pb.name in wanted:
                found.append(Override(pb.name, pb.name, c.name, c.type))
            elif c.type in CHAINS:
                for link in _chain(pb, int(getattr(c, "chain_count", 0))):
                    if link.name in wanted:
                        found.append(Override(link.name, pb.name, c.name, c.type))
    adt = obj.animation_data
    for d in adt.drivers if adt is not None else ():
        named = bridge.quoted_name(d.data_path, "pose.bones")
        if named and named[0] in wanted and named[1].lstrip(".") in TRANSFORMS and not d.mute:
            found.append(Override(named[0], named[0], "", "DRIVER"))
    return found


class Player(NamedTuple):
    """Where a bake plays: the armature copy and the mesh copies made for it (and the copy of the
    armature data, when its bones were re-parented)."""

    armature: Any
    meshes: list[Any]
    data: Any = None


def rehung(obj: Any, clip: Clip) -> dict[str, str | None]:
    """{bone: the parent its joint has in `clip`} for the bones of `obj` that hang elsewhere (joints
    that are no bone are left to clip_to_action to refuse)."""
    bones = obj.data.bones
    out: dict[str, str | None] = {}
    for name, p in zip(clip.names, clip.parents, strict=True):
        if name not in bones:
            continue
        want = clip.names[p] if p >= 0 else None
        have = bones[name].parent.name if bones[name].parent is not None else None
        if want != have:
            out[name] = want
    return out


def _rehang(copy: Any, parents: dict[str, str | None], loose: Iterable[str]) -> None:
    """Re-parent the copy's bones (its own armature data) in edit mode, keeping their rest pose,
    and disconnect the bones in `loose` (a connected bone ignores its location keys, and a pose read
    as Blender plays it moves stretching bones' children off their parents' tails)."""
    context: Any = bpy.context
    layer = context.view_layer
    active = layer.objects.active
    layer.objects.active = copy
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        edit = copy.data.edit_bones
        for name in loose:
            if name in edit:
                edit[name].use_connect = False
        for name, parent in parents.items():
            bone = edit[name]
            bone.use_connect = False
            bone.parent = edit[parent] if parent is not None else None
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        layer.objects.active = active


def make_player(obj: Any, found: list[Override], parents: dict[str, str | None] | None = None,
                loose: Iterable[str] = ()) -> Player:
    """A copy of `obj` ("<rig> (Stride)", sharing its armature data, in its collections) without the
    constraints and drivers in `found` and without the rig's NLA tracks or action; linked duplicates
    of the meshes `obj` deforms, deforming by the copy. `parents` ({bone: parent}, see `rehung`):
    the copy gets its own armature data with those bones re-parented and the bones in `loose`
    disconnected."""
    if obj.animation_data is not None and obj.animation_data.use_tweak_mode:
        raise bridge.BridgeError(f"{obj.name!r} is in NLA tweak mode, where its action cannot change: leave "
                                 "it (Tab in the NLA Editor), then try again")
    context: Any = bpy.context
    copy = obj.copy()
    meshes: list[Any] = []
    data = None
    try:
        copy.name = obj.name + SUFFIX
        for collection in obj.users_collection or (context.scene.collection,):
            collection.objects.link(copy)
        if parents:
            data = copy.data = obj.data.copy()
            data.name = obj.data.name + SUFFIX
            _rehang(copy, parents, loose)
        context.view_layer.update()  # the copy's pose exists once evaluated (and assigning needs it)
        adt = copy.animation_data
        if adt is not None:
            adt.action = None
            for track in list(adt.nla_tracks):
                adt.nla_tracks.remove(track)
            drivers = {(o.bone, "DRIVER") for o in found if o.kind == "DRIVER"}
            for d in list(adt.drivers):
                named = bridge.quoted_name(d.data_path, "pose.bones")
                if named and (named[0], "DRIVER") in drivers and named[1].lstrip(".") in TRANSFORMS:
                    adt.drivers.remove(d)
        for owner, name in {(o.owner, o.constraint) for o in found if o.kind != "DRIVER"}:
            constraints = copy.pose.bones[owner].constraints
            c = constraints.get(name)
            if c is not None:
                constraints.remove(c)
        mesh: Any
        for mesh in [o for o in bpy.data.objects if o.type == "MESH"]:
            deforms = [m for m in mesh.modifiers if m.type == "ARMATURE" and m.object == obj]
            if not deforms:
                continue
            twin: Any = mesh.copy()  # a linked duplicate: the mesh data is shared
            twin.name = mesh.name + SUFFIX
            for collection in mesh.users_collection or (context.scene.collection,):
                collection.objects.link(twin)
            for m in twin.modifiers:
                if m.type == "ARMATURE" and m.object == obj:
                    m.object = copy
            if twin.parent == obj:
                twin.parent = copy
            meshes.append(twin)
        context.view_layer.update()
    except BaseException:
        remove_player(Player(copy, meshes, data))
        raise
    return Player(copy, meshes, data)


def remove_player(player: Player) -> None:
    """Undo make_player (a bake that failed after it)."""
    for o in [*player.meshes, player.armature]:
        bpy.data.objects.remove(o)
    if player.data is not None:
        bpy.data.armatures.remove(player.data)


def report(obj: Any, action: Any, player: Player, found: list[Override],
           parents: dict[str, str | None] | None = None) -> str:
    """What a ShowWarning says: why the result is not on the rig, and where it plays."""
    if parents:
        name, parent = next(iter(parents.items()))
        more = f" and {len(parents) - 1} more" if len(parents) > 1 else ""
        return (f"{action.name!r} hangs {len(parents)} bone(s) of {obj.name!r} under other parents than the "
                f"rig's, as they were read ({name!r} under {parent!r}{more}): it plays on "
                f"{player.armature.name!r}, a copy of the rig with its own armature data "
                f"{player.data.name!r} (those bones re-parented, the same rest pose) and without the "
                f"constraints and drivers on the bones it keys; {obj.name!r} and its actions are unchanged "
                "(hide it to see the bake alone)")
    bones = sorted({o.bone for o in found})
    shown = ", ".join(o.describe() for o in found[:3]) + (", ..." if len(found) > 3 else "")
    meshes = (f" with linked copies of its meshes ({', '.join(repr(m.name) for m in player.meshes)})"
              if player.meshes else " (it deforms no mesh)")
    return (f"{action.name!r} moves {len(bones)} bone(s) of {obj.name!r} that constraints or drivers "
            f"override there ({shown}), where its keys would not show: it plays on "
            f"{player.armature.name!r}, a copy of the rig without the constraints and drivers on the bones "
            f"it keys{meshes}; {obj.name!r} and its actions are unchanged (hide it to see the bake alone)")
