"""Actions <-> Clips: the one place Blender animation data turns into core data and back.

An armature made by a BVH import (Blender's or Stride's) reads back as the file's Clip: BVH local
rotations and translations, in BVH units and axes. Blender stores none of its importer's settings,
so callers pass the ones they used (the defaults are Blender's); Stride's importer stores them on
the armature (`obj["stride_bvh"]`) and those win. An armature not made by a BVH import reads as
Blender's importer would have built it: Blender's Z-up space turned to the BVH's Y-up.

Reads and writes apply the armature object's world transform (rotation, uniform scale, location,
parents): a clip is the motion as it stands in the scene, so an armature that an FBX import left
rotated 90 degrees about X at scale 0.01 (bones in centimeters) reads upright, in meters. The feet
chosen on the armature (`obj.stride.left_foot` / `right_foot`, the Rig panel) set every read clip's
body map.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import bpy
import numpy as np

from . import compat
from .core import armature, body, contacts, quat, resample, skeleton
from .core.clip import DEFAULT_JOINT_CHANNELS, DEFAULT_ROOT_CHANNELS, POSITION_CHANNELS, Clip, snap_fps

# JSON: import settings and BVH layout, on the armature object; on each action Stride writes, the
# clip's own layout (joints, channels, end sites) and key rate, which override the armature's.
SETTINGS_KEY = "stride_bvh"
EVENTS_KEY = "stride_events"  # {track: [seconds]} on an action


class BridgeError(ValueError):
    """An armature or action that cannot be read or written (message for the user)."""


class BridgeWarning(UserWarning):
    """What a user should hear about a read: the action's rate and the scene's differ, or actions of
    other skeletons combined because the user allowed it. Operators report it as a WARNING."""


def _path(bone: str, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'


def current_scene() -> Any:
    scene = bpy.context.scene
    if scene is None:
        raise BridgeError("no scene")
    return scene


def scene_fps(scene: Any = None) -> float:
    """The scene's frame rate, snapped as BVH Frame Times are (`snap_fps`): Blender's importer leaves
    fps_base at 0.999996 for a 120 fps file (its Frame Time's few digits), and 120.0005 frames a
    second put a bake's keys off whole frames and its export at 120.365 fps."""
    scene = scene or current_scene()
    return snap_fps(scene.render.fps_base / scene.render.fps)


def import_settings(obj: Any, axis_forward: str = "-Z", axis_up: str = "Y",
                    global_scale: float = 1.0, action: Any = None) -> dict[str, Any]:
    """Import settings of an armature: the ones Stride's importer stored, else the given ones;
    with `action`, that action's own file layout where the importer stored one."""
    settings: dict[str, Any] = {"axis_forward": axis_forward, "axis_up": axis_up,
                                "global_scale": float(global_scale)}
    for owner in (obj, action):
        stored = owner.get(SETTINGS_KEY) if owner is not None else None
        if stored:
            settings.update(json.loads(stored))
    return _with_ancestors(obj, settings)


def _with_ancestors(obj: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """A stored joint layout with the bones added above its joints since it was stored (a root
    bone Add Root Motion put over the hips) listed first, parents first, without channels: they
    read as the still top joints they are in the actions made before them."""
    names = settings.get("names")
    bones = getattr(getattr(obj, "data", None), "bones", None)
    if not names or bones is None:
        return settings
    listed, above = set(names), []
    for name in names:
        bone = bones.get(name)
        chain = []
        parent = bone.parent if bone is not None else None
        while parent is not None and parent.name not in listed:
            chain.append(parent.name)
            parent = parent.parent
        for missing in reversed(chain):
            above.append(missing)
            listed.add(missing)
    if not above:
        return settings
    out = {**settings, "names": above + list(names)}
    if settings.get("channels") and len(settings["channels"]) == len(names):
        out["channels"] = [[] for _ in above] + list(settings["channels"])
    return out


class Space(NamedTuple):
    """Where an armature's bones sit in its clips' (BVH) space, the object's world transform
    included: clip = conversion^T @ armature / scale, plus `shift` for the top joints."""

    conversion: np.ndarray  # [3, 3]: BVH axes -> the armature's own (the importer's C, turned back by
    #                         the object's world rotation)
    scale: float  # armature units per clip unit: the import scale over the object's world scale
    shift: np.ndarray  # [3]: the object's world location in clip units and axes


def world_matrix(obj: Any) -> np.ndarray:
    """[4, 4] the object's world matrix as its transform and its parents' say now (no depsgraph
    update needed); Blender's last evaluated `matrix_world` where constraints or a bone or vertex
    parent take part."""
    if any(not c.mute and c.influence > 0.0 for c in obj.constraints):
        return np.array(obj.matrix_world, dtype=np.float64)
    basis = np.array(obj.matrix_basis, dtype=np.float64)
    if obj.parent is None:
        return basis
    if obj.parent_type != "OBJECT":
        return np.array(obj.matrix_world, dtype=np.float64)
    return world_matrix(obj.parent) @ np.array(obj.matrix_parent_inverse, dtype=np.float64) @ basis


def space(obj: Any, settings: dict[str, Any]) -> Space:
    """The armature's clip space: its import settings (axes, scale) after its world transform.
    Raises BridgeError for a transform no BVH can hold (uneven or negative scale, shear)."""
    conversion = armature.axis_conversion(settings["axis_forward"], settings["axis_up"])
    scale = float(settings["global_scale"])
    world = world_matrix(obj)
    linear = world[:3, :3]
    sizes = np.linalg.norm(linear, axis=0)
    size = float(sizes.mean())
    if not (size > 0.0 and math.isfinite(size)):
        raise BridgeError(f"armature {obj.name!r} has a zero scale in the scene: give it a scale")
    rotation = linear / sizes
    sheared = not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-4)
    if sizes.max() - sizes.min() > 1e-4 * size or sheared:
        raise BridgeError(f"armature {obj.name!r} is scaled unevenly in the scene "
                          f"({', '.join(f'{v:.4g}' for v in sizes)}), which a BVH cannot hold: apply its "
                          "scale (Object > Apply > Scale), or scale it evenly")
    if np.linalg.det(rotation) < 0.0:
        raise BridgeError(f"armature {obj.name!r} is mirrored in the scene (a negative scale), which a BVH "
                          "cannot hold: apply its scale (Object > Apply > Scale) first")
    return Space(rotation.T @ conversion, scale / size, conversion.T @ world[:3, 3] / scale)


def _require_armature(obj: Any) -> None:
    if obj is None or getattr(obj, "type", None) != "ARMATURE":
        name = getattr(obj, "name", None)
        raise BridgeError(f"{name!r} is not an armature" if name else "no armature selected")


def _bones(obj: Any, settings: dict[str, Any]) -> tuple[list[str], list[int]]:
    """Bone names in joint order (the stored BVH order, else the armature's, parents first)."""
    bones = obj.data.bones
    names = settings.get("names") or [b.name for b in bones]
    missing = [n for n in names if n not in bones]
    if missing:
        raise BridgeError(f"armature {obj.name!r} has no bone {missing[0]!r}")
    index = {n: i for i, n in enumerate(names)}
    parents = [index[bones[n].parent.name] if bones[n].parent else -1 for n in names]
    if any(p >= j for j, p in enumerate(parents)):
        # Reorder parents-first (armatures built by hand may list children before parents).
        order: list[str] = []
        pending = list(names)
        while pending:
            for n in list(pending):
                parent = bones[n].parent
                if parent is None or parent.name in order:
                    order.append(n)
                    pending.remove(n)
        names = order
        index = {n: i for i, n in enumerate(names)}
        parents = [index[bones[n].parent.name] if bones[n].parent else -1 for n in names]
    return list(names), parents


def _rest(obj: Any, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rest rotations M [J, 4], heads [J, 3], tails [J, 3]) in armature space, in `names` order."""
    bones = obj.data.bones
    n = len(bones)
    mats = np.empty(n * 16, dtype=np.float32)
    heads = np.empty(n * 3, dtype=np.float32)
    tails = np.empty(n * 3, dtype=np.float32)
    bones.foreach_get("matrix_local", mats)  # column-major per bone
    bones.foreach_get("head_local", heads)
    bones.foreach_get("tail_local", tails)
    order = [bones.find(name) for name in names]
    rot = mats.reshape(n, 4, 4).transpose(0, 2, 1)[order, :3, :3].astype(np.float64)
    return (quat.normalize(quat.from_matrix(rot)), heads.reshape(n, 3)[order].astype(np.float64),
            tails.reshape(n, 3)[order].astype(np.float64))


def _relative_heads(heads: np.ndarray, parents: list[int], conversion: np.ndarray) -> np.ndarray:
    """Rest heads relative to the parent, rotated back to BVH axes (still scaled)."""
    rel = heads.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            rel[j] = heads[j] - heads[p]
    return rel @ conversion


def resolve_action(obj: Any, action: Any = None, slot: Any = None) -> tuple[Any, Any]:
    """(action, slot) to read: the given action (or name), else the active one; the given slot
    (an NLA strip's), else the one animating `obj`."""
    _require_armature(obj)
    if isinstance(action, str):
        if action and action not in bpy.data.actions:
            raise BridgeError(f"no action named {action!r}: check the name in the Action Editor")
        action = bpy.data.actions[action] if action else None
    if action is None:
        adt = obj.animation_data
        action = adt.action if adt is not None else None
        if action is None:
            raise BridgeError(f"armature {obj.name!r} has no active action: assign one in the Action "
                              "Editor, or name the action to use")
    slot = slot if slot is not None else compat.action_slot(action, obj)
    if compat.SLOTTED and slot is None:
        if not len(action.slots):  # an empty action (Blender makes a slot with the first key)
            raise BridgeError(no_keys(action))
        kinds = ", ".join(sorted({s.target_id_type.lower() for s in action.slots}))
        raise BridgeError(f"action {action.name!r} animates no object (its slots are for: {kinds}): pick an "
                          "action of the armature in the Action Editor")
    return action, slot


def no_keys(action: Any, obj: Any = None) -> str:
    """The message for an action with no keys to read (an empty action, or one keyed on no bone)."""
    where = f" on the bones of {obj.name!r}" if obj is not None else ""
    return (f"action {action.name!r} has no keys{where}: key the bones in it, or pick an action that has "
            "keys (the Action Editor, or the action fields in the Stride sidebar)")


class _Read(NamedTuple):
    """What a read of an action starts from (`_begin_read`)."""

    action: Any
    slot: Any
    curves: dict[tuple[str, int], Any]  # the action's bone curves by (data path, index)
    settings: dict[str, Any]
    names: list[str]
    parents: list[int]
    where: Space


def _begin_read(obj: Any, action: Any, slot: Any, axis_forward: str, axis_up: str, global_scale: float,
                skeleton: Callable[[Any, dict[str, Any]], tuple[list[str], list[int]]]) -> _Read:
    """The checks and settings a read of keys (`action_to_clip`) and of what plays (`evaluated_clip`)
    share: the action and slot, its bone curves (an action that moves the object is warned of, one
    animating bones this armature lacks refused), the import settings, the skeleton `skeleton`
    reads, the armature's clip space."""
    action, slot = resolve_action(obj, action, slot)
    every = compat.fcurves(action, slot)
    _check_object_still(obj, action, every)
    # Only bone curves make the motion: custom properties (event curves, a keyed blend weight)
    # must not stretch or misalign the frames read.
    curves = {(fc.data_path, fc.array_index): fc for fc in every if fc.data_path.startswith("pose.bones[")}
    if not any(len(fc.keyframe_points) for fc in curves.values()):
        raise BridgeError(no_keys(action, obj))
    _check_animated_bones(obj, action, curves)
    settings = import_settings(obj, axis_forward, axis_up, global_scale, action)
    names, parents = skeleton(obj, settings)
    return _Read(action, slot, curves, settings, names, parents, space(obj, settings))


def action_to_clip(obj: Any, action: Any = None, *, axis_forward: str = "-Z", axis_up: str = "Y",
                   global_scale: float = 1.0, fps: float | None = None, slot: Any = None) -> Clip:
    """The Clip an armature's action holds, in BVH conventions (local rotations, file units/axes).

    `action`: an Action or its name (default: the active one). `fps`: the rate of the action's
    frame numbers, default the scene's; the clip's rate is that over the key spacing. Blender's
    importer keys one BVH frame per scene frame and keeps no rate, so pass the file's rate
    (`fps=120`) unless it ran with use_fps_scale. Keys are read in bulk; curves whose keys do not
    share frames are evaluated on a common grid. `slot`: which slot to read (an NLA strip's).
    """
    read = _begin_read(obj, action, slot, axis_forward, axis_up, global_scale, _bones)
    action, curves, settings, names, parents, where = (read.action, read.curves, read.settings, read.names,
                                                       read.parents, read.where)
    conversion, scale = where.conversion, where.scale
    rest, heads, tails = _rest(obj, names)
    rel_heads = _relative_heads(heads, parents, conversion)
    keyed = {k: fc for k, fc in curves.items() if len(fc.keyframe_points)}
    keys = dict(zip(keyed, compat.read_keys_many(list(keyed.values())), strict=True))
    frames, aligned = _key_frames(list(keys.values()))
    T, J = len(frames), len(names)
    # [T, J, n] views of channel-major storage: each curve's values land contiguously, and the
    # pose conversion's product reads them as they lie.
    pose_rot = np.empty((J, 4, T)).transpose(2, 0, 1)
    pose_loc = np.empty((J, 3, T)).transpose(2, 0, 1)
    has_loc = np.zeros(J, dtype=bool)
    for j, name in enumerate(names):
        pb = obj.pose.bones[name]
        mode = pb.rotation_mode
        if mode == "QUATERNION":
            _channel(curves, keys, _path(name, "rotation_quaternion"), tuple(pb.rotation_quaternion),
                     frames, aligned, out=pose_rot[:, j])
        elif mode == "AXIS_ANGLE":
            values = _channel(curves, keys, _path(name, "rotation_axis_angle"), tuple(pb.rotation_axis_angle),
                              frames, aligned)
            pose_rot[:, j] = armature.from_blender_axis_angle(values)
        else:
            values = _channel(curves, keys, _path(name, "rotation_euler"), tuple(pb.rotation_euler),
                              frames, aligned)
            pose_rot[:, j] = armature.from_blender_euler(values, mode)
        loc_path = _path(name, "location")
        has_loc[j] = any((loc_path, i) in curves for i in range(3))
        _channel(curves, keys, loc_path, tuple(pb.location), frames, aligned, out=pose_loc[:, j])
    # Quaternion keys need not be unit (hand-edited curves); the other modes' already are, and
    # renormalizing every joint at once is cheaper than picking them out.
    quat.normalize(pose_rot, out=pose_rot)
    rotations = armature.pose_to_local(rest, pose_rot, conversion)
    offsets = rel_heads / scale
    positions = np.repeat(offsets[None], T, axis=0)
    positions[:, has_loc] = armature.pose_location_to_translation(
        rest[has_loc], rel_heads[has_loc], pose_loc[:, has_loc], conversion, scale)
    if where.shift.any():  # the object's location moves the top joints, not their rest offsets
        positions[:, np.asarray(parents) < 0] += where.shift
    channels = settings.get("channels") or _guess_channels(obj, names, has_loc)
    if settings.get("end_sites"):
        end_parents = [names.index(n) for n, _ in settings["end_sites"]]
        end_offsets = np.array([o for _, o in settings["end_sites"]], dtype=np.float64).reshape(-1, 3)
    else:
        kids = {p for p in parents if p >= 0}
        end_parents = [j for j in range(J) if j not in kids]
        end_offsets = ((tails[end_parents] - heads[end_parents]) @ conversion / scale).reshape(-1, 3)
    clip_fps = _fps_from_keys(frames, _action_fps(settings, fps))
    clip = Clip(names, parents, offsets, rotations, positions, clip_fps, channels=channels,
                end_parents=end_parents, end_offsets=end_offsets, name=action.name,
                events=_stored_events(action))
    return clip


class Timing(NamedTuple):
    """How clip seconds map to an action's frames: frame = start + seconds * fps."""

    start: float
    fps: float

    def frame(self, seconds: Any) -> Any:
        return self.start + np.asarray(seconds) * self.fps

    def seconds(self, frame: Any) -> Any:
        return (np.asarray(frame, dtype=np.float64) - self.start) / self.fps


def _action_fps(settings: dict[str, Any], fps: float | None) -> float:
    return float(fps if fps is not None else settings.get("action_fps") or scene_fps())


def action_timing(obj: Any, action: Any = None, fps: float | None = None, slot: Any = None) -> Timing:
    """The frame mapping `action_to_clip` uses for this action (clip time 0 = its first key)."""
    action, slot = resolve_action(obj, action, slot)
    firsts = [fc.keyframe_points[0].co[0] for fc in compat.fcurves(action, slot)
              if len(fc.keyframe_points) and fc.data_path.startswith("pose.bones[")]
    start = float(min(firsts)) if firsts else float(current_scene().frame_start)
    return Timing(start, _action_fps(import_settings(obj, action=action), fps))


def read_action(obj: Any, action: Any = None, slot: Any = None, source: str = "KEYS") -> tuple[Clip, Timing]:
    """An action read once: its Clip and the frame mapping of that clip's times (what a job needs
    to write results back at the action's frames). The clip's body map stands on the feet the user
    chose on the armature; without, the armature's feet are filled with the ones the body map
    finds. A rate that differs from the scene's is a BridgeWarning.

    `source`: 'KEYS' (the F-curves, `action_to_clip`), 'EVALUATED' (what Blender plays through the
    rig: constraints, IK, drivers, `evaluated_clip`) or 'AUTO' (`read_source` decides). What was
    read, and why, is noted for the `read_notes()` that are open."""
    action, slot = resolve_action(obj, action, slot)
    clip = source_clip(obj, action, slot, source)
    chosen = chosen_feet(obj)
    if chosen is not None:
        clip = with_feet(obj, clip)
    else:
        remember_feet(obj, clip)
    note = rate_note(obj, action, clip)
    if note:
        warnings.warn(note, BridgeWarning, stacklevel=2)
    return clip, action_timing(obj, action, slot=slot)


# -- what Blender plays: the evaluated read ---------------------------------------------------------

SOURCES = ("KEYS", "EVALUATED", "AUTO")
_READS: list[list[str]] = []


@contextmanager
def read_notes() -> Iterator[list[str]]:
    """Collect what each `read_action` inside read and why ('read 'walk': evaluated (...)'), once
    each: operators report them, the CLI prints them."""
    notes: list[str] = []
    _READS.append(notes)
    try:
        yield notes
    finally:
        _READS.remove(notes)


def _note_read(text: str) -> None:
    for notes in _READS:
        if text not in notes:
            notes.append(text)


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
        return _bones(obj, settings)
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


def read_source(obj: Any, action: Any = None, source: str = "AUTO") -> tuple[str, str]:
    """('KEYS' or 'EVALUATED', why) for a read of `action` on `obj`. AUTO reads what Blender plays
    when a bone read, or one above it, is moved by a constraint, an IK chain or a driver; its keys
    otherwise (the faster read, and the same motion)."""
    source = source.upper()
    if source not in SOURCES:
        raise BridgeError(f"read source {source!r} is not one of {', '.join(s.lower() for s in SOURCES)}")
    _require_armature(obj)
    try:
        names, _ = evaluated_bones(obj)
    except BridgeError:  # the read itself says what is wrong
        names = [b.name for b in obj.data.bones]
    driven = rig_driven(obj)
    bones = obj.data.bones
    moved: dict[str, str] = {}
    for name in names:
        a = bones[name]
        while a is not None:
            if a.name in driven:
                above = "" if a.name == name else f" on {a.name}"
                moved.setdefault(name, f"{driven[a.name].lower()}{above}")
                break
            a = a.parent
    if moved:
        listed = ", ".join(f"{n} ({what})" for n, what in list(moved.items())[:3])
        more = f" and {len(moved) - 3} more bones" if len(moved) > 3 else ""
        why = f"constraints or drivers move {listed}{more}"
    else:
        why = "no constraint, IK or driver moves its bones"
    if source == "AUTO":
        return ("EVALUATED" if moved else "KEYS"), why
    if source == "EVALUATED":
        return source, "Source: Evaluated"
    return source, "Source: Keys" + (f"; {why}, which keys do not show: read Evaluated" if moved else "")


def evaluated_clip(obj: Any, action: Any = None, *, axis_forward: str = "-Z", axis_up: str = "Y",
                   global_scale: float = 1.0, fps: float | None = None, slot: Any = None) -> Clip:
    """The Clip Blender plays for an armature's action through its rig (constraints, IK, drivers),
    in BVH conventions as `action_to_clip` reads keys, at the same frames (`action_timing`).

    The action is played alone (the NLA off) on the armature for the read, frame by frame, and
    every pose bone's matrix read in one bulk call per frame; the armature's action, slot, NLA
    switch and the scene's frame are put back afterwards, also on error. The skeleton read is
    `evaluated_bones` (the deform bones of a rig with controls). A joint has position channels
    where its bone moves from its rest offset (a root, a stretching bone)."""
    read = _begin_read(obj, action, slot, axis_forward, axis_up, global_scale, evaluated_bones)
    action, settings, names, parents, where = read.action, read.settings, read.names, read.parents, read.where
    conversion, scale = where.conversion, where.scale
    keyed = [fc for fc in read.curves.values() if len(fc.keyframe_points)]
    frames, _ = _key_frames(compat.read_keys_many(keyed))
    pose = _play(obj, action, read.slot, frames, names)
    _, heads, tails = _rest(obj, names)
    bones = obj.data.bones
    mats = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", mats)
    rest_m = mats.reshape(-1, 4, 4).transpose(0, 2, 1)[[bones.find(n) for n in names]]
    rotations, moved = armature.pose_matrices_to_local(pose, rest_m, parents, conversion, scale)
    offsets = _relative_heads(heads, parents, conversion) / scale
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
    channels = _guess_channels(obj, names, has_loc)
    kids = {p for p in parents if p >= 0}
    end_parents = [j for j in range(len(names)) if j not in kids]
    end_offsets = ((tails[end_parents] - heads[end_parents]) @ conversion / scale).reshape(-1, 3)
    clip_fps = _fps_from_keys(frames, _action_fps(settings, fps))
    return Clip(names, parents, offsets, rotations, positions, clip_fps, channels=channels,
                end_parents=end_parents, end_offsets=end_offsets, name=action.name,
                events=_stored_events(action))


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


def source_clip(obj: Any, action: Any = None, slot: Any = None, source: str = "KEYS") -> Clip:
    """The Clip of an action read from `source` (KEYS, EVALUATED or AUTO: `read_source`), noted for
    the open `read_notes()`, in the unit the user set on the armature (`with_unit`); no body-map
    feet applied (`read_action` applies them)."""
    action, slot = resolve_action(obj, action, slot)
    used, why = read_source(obj, action, source)
    _note_read(f"read {action.name!r}: {used.lower()} ({why})")
    if used == "EVALUATED":
        return with_unit(obj, evaluated_clip(obj, action, slot=slot))
    return with_unit(obj, action_to_clip(obj, action, slot=slot))


def with_unit(obj: Any, clip: Clip) -> Clip:
    """`clip` with the unit the user set on the armature (`obj.stride.meters_per_unit`, the Rig
    panel's Unit) where it is set (0 is Auto: the body map's, from the standing height)."""
    settings = getattr(obj, "stride", None)
    unit = float(getattr(settings, "meters_per_unit", 0.0) or 0.0)
    if unit > 0.0:
        clip.meters_per_unit = unit
    return clip


FOOT_LABELS = {"L": "Left Foot", "R": "Right Foot"}


def chosen_feet(obj: Any) -> dict[str, str] | None:
    """The ankles the user chose on the armature, {'L': bone, 'R': bone} (`obj.stride`, the Rig
    panel); None while the feet are unset or still the ones the body map filled in. Raises
    BridgeError when only one is set."""
    settings = getattr(obj, "stride", None)
    if settings is None:
        return None
    chosen = {"L": settings.left_foot.strip(), "R": settings.right_foot.strip()}
    if not any(chosen.values()):
        return None
    for side, name in chosen.items():
        if not name:
            other = FOOT_LABELS["R" if side == "L" else "L"]
            raise BridgeError(f"{obj.name!r} has its {other} set but no {FOOT_LABELS[side]}: choose both "
                              "feet in the Stride sidebar (Rig), or clear both")
    if settings.found_from and (chosen["L"], chosen["R"]) == (settings.found_left, settings.found_right):
        return None
    return chosen


def with_feet(obj: Any, clip: Clip) -> Clip:
    """`clip` with its body map built on the feet the user chose on the armature (`chosen_feet`);
    itself when there are none. BridgeError names the setting when a foot is no bone of the clip."""
    chosen = chosen_feet(obj)
    if chosen is None:
        return clip
    for side, name in chosen.items():
        if name not in clip.names:
            raise BridgeError(f"{FOOT_LABELS[side]} {name!r} is no bone of {obj.name!r} that "
                              f"{clip.name!r} reads: choose it in the Stride sidebar (Rig), or clear it")
    try:
        return body.with_feet(clip, chosen)
    except ValueError as exc:
        raise BridgeError(f"feet {chosen['L']!r}, {chosen['R']!r} of {obj.name!r}: {exc}") from None


def remember_feet(obj: Any, clip: Clip) -> None:
    """The armature's feet filled with the ones the clip's body map found and what from (names,
    motion), where the user chose none; nothing where the data cannot be written (a panel's draw)."""
    settings = getattr(obj, "stride", None)
    b = clip.body
    if settings is None or not b.feet:
        return
    found = (clip.names[b.feet["L"][0]], clip.names[b.feet["R"][0]], str(b.evidence.get("legs", "")))
    if (settings.left_foot, settings.right_foot, settings.found_from) == found \
            and (settings.found_left, settings.found_right) == found[:2]:
        return
    try:
        settings.left_foot, settings.right_foot, settings.found_from = found
        settings.found_left, settings.found_right = found[:2]
    except (AttributeError, RuntimeError):
        pass


# A take whose steps come further apart than this plays slower than people move: people step every
# 0.3-0.8 s, and a 120 fps take keyed one file frame per scene frame at 24 fps steps every 2-3 s.
_SLOW_STEP_SECONDS = 1.25
# Rates mocap is recorded at, most common first: the first that makes the steps a person's is named.
_MOCAP_FPS = (120.0, 60.0, 30.0, 100.0, 240.0, 50.0)
_STEP_RANGE = (0.3, 0.8)


def rate_note(obj: Any, action: Any, clip: Clip) -> str:
    """'' when the action plays at the rate it was keyed at; else what differs, naming both fps.

    Stride stores the rate it keys an action at (its importer and its bakes), and that rate is
    compared with the scene's. Blender's importer stores none: its keys are read at the scene's
    rate, and a take that then steps slower than people do (core.contacts.step_seconds) was
    most likely recorded faster (one 120 fps file frame per 24 fps scene frame)."""
    scene = scene_fps()
    stored = import_settings(obj, action=action).get("action_fps")
    if stored:
        stored = float(stored)
        if abs(stored - scene) <= 1e-4 * scene:
            return ""
        speed = scene / stored
        how = f"{1 / speed:.3g}x slower" if speed < 1.0 else f"{speed:.3g}x faster"
        return (f"action {action.name!r} is keyed at {stored:g} fps and the scene plays at {scene:g} fps: "
                f"it plays {how} than it was recorded (Stride reads it at its own {clip.fps:g} fps); set "
                f"the scene's Frame Rate (Output Properties) to {stored:g} fps")
    if not clip.body.feet:
        return ""
    step = contacts.step_seconds(clip)
    if step is None or step <= _SLOW_STEP_SECONDS:
        return ""
    likely = next((r for r in _MOCAP_FPS if r > clip.fps and _STEP_RANGE[0] <= step * clip.fps / r
                   <= _STEP_RANGE[1]), None)
    guess = (f"it moves as if recorded at {likely:g} fps" if likely is not None
             else "it was likely recorded at a higher rate")
    fix = f"{likely:g} fps" if likely is not None else "the file's rate"
    return (f"action {action.name!r} steps every {step:.2g} s at the scene's {scene:g} fps (its keys one "
            f"scene frame apart, the rate Blender's importer leaves), slower than people walk: {guess}. "
            f"Set the scene's Frame Rate (Output Properties) to {fix} and try again, or import with "
            "Update Scene FPS")


def property_path(prop: str) -> str:
    """The F-curve path of a custom property (names from markers may hold quotes)."""
    return f'["{bpy.utils.escape_identifier(prop)}"]'


def quoted_name(path: str, head: str = "") -> tuple[str, str] | None:
    """(name, rest) of an F-curve path `head["name"]rest`, the name unescaped; None for another path.
    `quoted_name(p, "pose.bones")` is a bone's; `quoted_name(p)` with rest "" a custom property's."""
    start = head + '["'
    if not path.startswith(start):
        return None
    found = re.match(r'((?:[^"\\]|\\.)*)"\]', path[len(start):])
    if found is None:
        return None
    return re.sub(r"\\(.)", r"\1", found.group(1)), path[len(start) + found.end():]


def property_curve(obj: Any, action: Any, prop: str) -> Any:
    """The F-curve that keys the custom property `prop` of `obj` in `action` (its slot), else None."""
    path = property_path(prop)
    curves = [fc for fc in compat.fcurves(action, compat.action_slot(action, obj)) if fc.data_path == path]
    return curves[-1] if curves else None


def nla_tracks(obj: Any, tracks: str = "") -> list[Any]:
    """The NLA tracks a bake plays, bottom first: those named in `tracks` (separated by commas),
    or every unmuted track for an empty string. BridgeError for a name that is no track, a muted
    track named, a solo track (the NLA then plays it alone), or NLA tweak mode."""
    adt = obj.animation_data
    every = list(adt.nla_tracks) if adt is not None else []
    if not every:
        raise BridgeError(f"armature {obj.name!r} has no NLA tracks: push actions down in the Action "
                          "Editor and arrange them as strips first")
    if adt.use_tweak_mode:
        raise BridgeError(f"{obj.name!r} is in NLA tweak mode, where the NLA plays only the tracks below the "
                          "strip being edited: leave it (Tab in the NLA Editor), then bake again")
    solo = [t.name for t in every if t.is_solo]
    if solo:
        raise BridgeError(f"NLA track {solo[0]!r} is solo (the star in the NLA Editor), so the NLA plays it "
                          "alone: turn solo off, then name the tracks to bake")
    wanted = [n.strip() for n in tracks.split(",") if n.strip()]
    if not wanted:
        return [t for t in every if not t.mute]
    names = [t.name for t in every]
    for name in wanted:
        if name not in names:
            raise BridgeError(f"no NLA track named {name!r} on {obj.name!r} (tracks: {', '.join(names)})")
    chosen = [t for t in every if t.name in wanted]
    for t in chosen:
        if t.mute:
            raise BridgeError(f"NLA track {t.name!r} is muted, so the NLA does not play it: unmute it (its "
                              "checkbox in the NLA Editor) or leave it out of the tracks to bake")
    return chosen


def _strip_problems(s: Any) -> list[str]:
    """What Stride cannot bake exactly in an NLA strip, each with how to change it."""
    return [what for what, on in (
        ("a reversed strip (turn Reversed off)", s.use_reverse),
        ("animated influence (turn Animated Influence off)", s.use_animated_influence),
        ("animated strip time (turn Animated Strip Time off)", s.use_animated_time),
        ("a cyclic animated time (turn Cyclic Strip Time off)", s.use_animated_time_cyclic),
        (f"blending '{s.blend_type}' (only Replace: set Blending to Replace)", s.blend_type != "REPLACE"),
        (f"a {s.type.lower()} strip (only action strips)", s.type != "CLIP"),
        ("strip modifiers (remove them in the strip's Modifiers tab)", len(s.modifiers) > 0),
        ("no action (choose its action)", s.action is None)) if on]


def _keyed_channels(obj: Any, strip: Any) -> set[tuple[str, str]]:
    """{(bone, 'location' | 'rotation' | 'scale')} the strip's action keys for `obj`."""
    slot = getattr(strip, "action_slot", None) or compat.action_slot(strip.action, obj)
    out = set()
    for fc in compat.fcurves(strip.action, slot):
        named = quoted_name(fc.data_path, "pose.bones")
        if named is not None:
            prop = named[1].lstrip(".")
            out.add((named[0], "rotation" if prop.startswith("rotation_") else prop))
    return out


def _check_whole_poses(obj: Any, strips: list[Any], names: list[str], shown: list[int]) -> None:
    """Refuse strips of a stack whose actions key different channels: under the NLA a channel a
    strip does not key shows the track below, which a bake of whole poses cannot reproduce."""
    keyed = {i: _keyed_channels(obj, strips[i]) for i in sorted(set(shown))}
    union = set().union(*keyed.values())
    for i, channels in keyed.items():
        missing = sorted(union - channels)
        if missing:
            bone, prop = missing[0]
            other = next(names[j] for j, c in keyed.items() if (bone, prop) in c)
            raise BridgeError(f"NLA {names[i]} (action {strips[i].action.name!r}) keys no {prop} of bone "
                              f"{bone!r}, which {other} keys: there the NLA shows what is below it, which "
                              "Stride cannot bake; key that channel in the action, or bake the tracks "
                              "one at a time")


def nla_items(obj: Any, track: str = "", default_blend: float = 0.25,
              allow_mismatch: bool = False, source: str = "KEYS") -> tuple[list, list[float], float, str]:
    """([(clip, start_s, end_s)] at the scene rate, blend time per junction, first frame, track
    names) of what the NLA plays on tracks `track` (names separated by commas; empty: every
    unmuted track), in stack order with the strips' extrapolation, blend in/out, scale, repeat
    and slot: each strip that plays alone (`core.nla.plays`) from the switch into it to the switch
    out of it, sampled at scene frames; where the NLA blends one into the next the blend time is
    that blend's, where it cuts `default_blend`. Refused (BridgeError naming the track, strip and
    setting, and how to change it) when that is not what the NLA plays: see nla_tracks,
    _strip_problems and core.nla.plays. Strips of another skeleton's actions are refused unless
    `allow_mismatch` (check_skeleton)."""
    from .core import nla

    chosen = nla_tracks(obj, track)
    strips: list[Any] = []
    specs: list[nla.Strip] = []
    for k, t in enumerate(chosen):
        for s in t.strips:
            where = f"strip {s.name!r} on track {t.name!r}"
            if not s.mute:
                problems = _strip_problems(s)
                if problems:
                    raise BridgeError(f"NLA {where} uses {problems[0]}, which Stride cannot bake; change it "
                                      "(Strip sidebar, N in the NLA Editor), mute the strip, or bake without "
                                      "that track")
            strips.append(s)
            specs.append(nla.Strip(where, k, float(s.frame_start), float(s.frame_end), float(s.blend_in),
                                   float(s.blend_out), str(s.extrapolation), bool(s.mute)))
    playing = [sp for sp in specs if not sp.muted]
    if not playing:
        raise BridgeError(f"NLA track {chosen[0].name!r} has no (unmuted) strips: add action strips to it "
                          "first" if len(chosen) == 1 else
                          f"NLA tracks {', '.join(repr(t.name) for t in chosen)} have no unmuted strips")
    first = math.ceil(min(sp.start for sp in playing) - 1e-6)
    last = math.floor(max(sp.end for sp in playing) + 1e-6)
    try:
        segments, blend_frames = nla.plays(specs, first, last)
    except nla.NlaError as exc:
        raise BridgeError(f"the NLA of {obj.name!r}: {exc}") from None
    if len({sp.track for sp in playing}) > 1:  # strips over strips: all of them, hidden or not
        _check_whole_poses(obj, strips, [sp.name for sp in specs],
                           [i for i, sp in enumerate(specs) if not sp.muted])
    rate = scene_fps()
    items: list[tuple[Clip, float, float]] = []
    read: dict[int, tuple[Clip, Timing]] = {}
    for seg in segments:
        s = strips[seg.strip]
        if seg.strip not in read:
            read[seg.strip] = read_action(obj, s.action, slot=getattr(s, "action_slot", None),
                                        source=source)
            check_skeleton(obj, s.action, allow_mismatch)
        clip, timing = read[seg.strip]
        frames = np.arange(seg.first, seg.last + 1, dtype=np.float64)
        at = nla.strip_frames(s.frame_start, s.frame_end, s.scale, s.repeat, s.action_frame_start,
                              s.action_frame_end, frames)
        items.append((resample.sample(clip, timing.seconds(at), rate), 0.0, (seg.last - seg.first) / rate))
    blends = [n / rate if n else default_blend for n in blend_frames]
    return items, blends, float(first), " + ".join(t.name for t in chosen)


_OBJECT_TRANSFORM = {f"{delta}{prop}" for delta in ("", "delta_") for prop in (
    "location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale")}


def _check_object_still(obj: Any, action: Any, curves: list[Any]) -> None:
    """A read places the whole take by the object's transform as it is now (`space`); an action that
    moves the object itself over the take (an FBX import keys it, but constant) is warned of."""
    for fc in curves:
        if fc.data_path in _OBJECT_TRANSFORM and len(fc.keyframe_points) > 1:
            values = compat.read_keys(fc)[:, 1]
            if values.max() - values.min() > 1e-5 * max(1.0, float(np.abs(values).max())):
                warnings.warn(f"action {action.name!r} moves the armature object {obj.name!r} itself (its "
                              f"{fc.data_path} changes over the take): Stride reads the bones' motion with "
                              "the object where it stands now; move that motion onto the root bone for it "
                              "to count", BridgeWarning, stacklevel=4)
                return


def _check_animated_bones(obj: Any, action: Any, curves: dict[tuple[str, int], Any]) -> None:
    """An action keyed for another skeleton must not read as this one's rest pose."""
    bones = obj.data.bones
    for path, _ in curves:
        found = quoted_name(path, "pose.bones")
        if found is not None:
            name = found[0]
            if name not in bones:
                raise BridgeError(f"armature {obj.name!r} has no bone {name!r}, which action "
                                  f"{action.name!r} animates: it was made for another skeleton")


def _key_frames(keys: list[np.ndarray]) -> tuple[np.ndarray, bool]:
    """(frames to sample, whether every curve is keyed on exactly them): the shared key frames of
    all curves, else a grid at their key spacing."""
    keyed = [k[:, 0] for k in keys]
    if not keyed:
        return np.zeros(0), True
    shared = keyed[0]
    if len({len(k) for k in keyed}) == 1 and (np.stack(keyed) == shared).all():
        return shared, True
    first = min(float(k[0]) for k in keyed)
    last = max(float(k[-1]) for k in keyed)
    steps = np.concatenate([np.diff(k) for k in keyed if len(k) > 1] or [np.ones(1)])
    step = float(np.median(steps))
    count = math.floor((last - first) / step + 1e-6) + 1
    return first + step * np.arange(count), False


def _fps_from_keys(frames: np.ndarray, action_fps: float) -> float:
    """Clip rate: the action's frame rate over the key spacing (keys 0.2 frames apart at 24 fps,
    as Blender's importer writes with use_fps_scale, are 120 fps)."""
    if len(frames) < 2:
        return action_fps
    step = (float(frames[-1]) - float(frames[0])) / (len(frames) - 1)
    return snap_fps(step / action_fps)


def _channel(curves: dict[tuple[str, int], Any], keys: dict[tuple[str, int], np.ndarray], path: str,
             default: tuple[float, ...], frames: np.ndarray, aligned: bool = False,
             out: np.ndarray | None = None) -> np.ndarray:
    """[T, n] values of an array property over `frames` (into `out` if given); unkeyed indices
    keep the pose value.

    Keys on the sampled frames are used as they are (`aligned`: every curve is keyed on exactly
    `frames`); other curves are evaluated by Blender."""
    if out is None:
        out = np.empty((len(frames), len(default)))
    for i, value in enumerate(default):
        k = keys.get((path, i))
        if k is None:
            out[:, i] = value
        elif aligned or (len(k) == len(frames) and np.array_equal(k[:, 0], frames)):
            out[:, i] = k[:, 1]
        else:
            fc = curves[(path, i)]
            out[:, i] = [fc.evaluate(float(f)) for f in frames]
    return out


def _guess_channels(obj: Any, names: list[str], has_loc: np.ndarray) -> list[tuple[str, ...]]:
    """Channel layout of an armature imported without Stride: position channels where there are
    location curves; the rotation order of NATIVE Euler bones, else Z X Y."""
    channels = []
    for j, name in enumerate(names):
        mode = obj.pose.bones[name].rotation_mode
        rot = (tuple(f"{a}rotation" for a in mode) if mode in armature.EULER_MODES
               else DEFAULT_JOINT_CHANNELS)
        channels.append((POSITION_CHANNELS + rot) if has_loc[j] else rot)
    if not any(has_loc) and channels:
        channels[0] = DEFAULT_ROOT_CHANNELS
    return channels


def _stored_events(action: Any) -> dict[str, list[float]]:
    """Exact event times (seconds from the action's first key) kept on the action."""
    stored = action.get(EVENTS_KEY)
    if not stored:
        return {}
    return {str(k): [float(t) for t in v] for k, v in stored.items()}


def progress_after(progress: Callable[[float], None] | None,
                   done: float) -> Callable[[float], None] | None:
    """Report `done` of a job; the callback its last part reports through (0..1 to done..1)."""
    if progress is None:
        return None
    progress(done)
    return lambda fraction: progress(done + (1.0 - done) * fraction)


def _lengths(obj: Any, names: list[str], parents: list[int], settings: dict[str, Any]) -> np.ndarray:
    """[J] bone lengths (each joint's distance from its parent) in clip units, the object's world
    scale left out: the skeleton's own measure, wherever the armature stands."""
    _, heads, _ = _rest(obj, names)
    up = np.asarray(parents, dtype=np.int64)
    rel = heads - np.where((up >= 0)[:, None], heads[np.maximum(up, 0)], heads)
    return skeleton.bone_lengths(up, rel) / float(settings["global_scale"])


def _plays(obj: Any, action: Any) -> bool:
    adt = obj.animation_data
    if adt is None:
        return False
    return adt.action == action or any(s.action == action for t in adt.nla_tracks for s in t.strips)


def action_skeleton(obj: Any, action: Any) -> tuple[str, dict[str, float]] | None:
    """(what it is, {bone: length}) of the skeleton an action's keys were made for: the lengths Stride
    stored on it when it wrote it, else those of another armature that plays it; None when neither
    tells (an action Blender made, on no other armature)."""
    stored = action.get(SETTINGS_KEY)
    layout = json.loads(stored) if stored else {}
    if layout.get("lengths") and layout.get("names"):
        return "another skeleton", dict(zip(layout["names"], layout["lengths"], strict=False))
    for other in bpy.data.objects:
        if other is obj or other.type != "ARMATURE" or not _plays(other, action):
            continue
        settings = import_settings(other)
        try:
            names, parents = _bones(other, settings)
        except BridgeError:
            continue
        lengths = _lengths(other, names, parents, settings).tolist()
        return f"another skeleton (armature {other.name!r})", dict(zip(names, lengths, strict=True))
    return None


def check_skeleton(obj: Any, action: Any, allow: bool = False, label: str = "Allow Mismatch") -> None:
    """Raise BridgeError when `action` was made for bones of other lengths than `obj`'s (as
    `check_rest` refuses a file of another skeleton), naming the bone; with `allow`, a
    BridgeWarning says so instead. `label`: how the user turns `allow` on."""
    found = action_skeleton(obj, action)
    if found is None:
        return
    where, theirs = found
    settings = import_settings(obj)
    names, parents = _bones(obj, settings)
    common = [j for j, n in enumerate(names) if n in theirs and parents[j] >= 0]
    ours = _lengths(obj, names, parents, settings)[common]
    other = np.array([theirs[names[j]] for j in common], dtype=np.float64)
    k = skeleton.length_mismatch(ours, other)
    if k is None:
        return
    name, there, here = names[common[k]], f"{other[k]:.4g}", f"{ours[k]:.4g}"
    if allow:
        warnings.warn(f"action {action.name!r} was made for {where} (bone {name!r} {there} long there, "
                      f"{here} on {obj.name!r}); combined anyway ({label})", BridgeWarning, stacklevel=2)
        return
    raise BridgeError(f"action {action.name!r} was made for {where}: its bone {name!r} is {there} long there "
                      f"and {here} on {obj.name!r}, so its keys would not move this skeleton as they moved "
                      f"that one. Use an action of this skeleton, or combine them anyway ({label})")


def check_rest(obj: Any, clip: Clip, axis_forward: str = "-Z", axis_up: str = "Y",
               global_scale: float = 1.0) -> None:
    """Raise BridgeError unless the armature's rest offsets are the clip's: the same skeleton, not
    only the same bone names (an action keyed onto other bone lengths would not read back).
    Axes and scale: the armature's stored import settings, else the given ones."""
    if clip.n_joints == 0:
        return
    settings = import_settings(obj, axis_forward, axis_up, global_scale)
    where = space(obj, settings)
    _, heads, _ = _rest(obj, list(clip.names))
    offsets = _relative_heads(heads, clip.parents.tolist(), where.conversion) / where.scale
    err = np.linalg.norm(offsets - clip.offsets, axis=1)
    # Bone heads are float32: 1e-5 of the skeleton's size is far above their rounding (the longest
    # offset stands in for the height of a skeleton without one, such as a single joint).
    size = max(clip.height, float(np.linalg.norm(clip.offsets, axis=1).max()), 1e-9)
    j = int(np.argmax(err))
    if err[j] > 1e-5 * size:
        raise BridgeError(f"bone {clip.names[j]!r} of {obj.name!r} is offset {offsets[j].round(6).tolist()} "
                          f"from its parent; the file says {clip.offsets[j].round(6).tolist()}: "
                          "another skeleton")


def clip_layout(clip: Clip, action_fps: float) -> dict[str, Any]:
    """What an action needs to read back as `clip` (besides its keys): joints in order, channels,
    end sites, and the frame rate its keys were written at."""
    return {
        "names": list(clip.names),
        "channels": [list(c) for c in clip.channels],
        "end_sites": [[clip.names[p], [float(v) for v in o]]
                      for p, o in zip(clip.end_parents.tolist(), clip.end_offsets, strict=True)],
        "action_fps": action_fps,
    }


def check_bones(obj: Any, clip: Clip) -> None:
    """Raise BridgeError unless every clip joint is a bone of `obj` with the same parent."""
    bones = obj.data.bones
    for j, name in enumerate(clip.names):
        if name not in bones:
            raise BridgeError(f"armature {obj.name!r} has no bone {name!r} (the clip's joint {j})")
        parent = bones[name].parent
        want = clip.names[clip.parents[j]] if clip.parents[j] >= 0 else None
        have = parent.name if parent is not None else None
        if have != want:
            raise BridgeError(f"bone {name!r} of {obj.name!r} has parent {have!r}; the clip says {want!r}")


def clip_to_action(clip: Clip, obj: Any, name: str, *, frame_start: float | None = None,
                   axis_forward: str = "-Z", axis_up: str = "Y", global_scale: float = 1.0,
                   assign: bool = False, action_fps: float | None = None,
                   interpolation: str = "LINEAR", progress: Any = None) -> Any:
    """A new Action (unique name from `name`) on armature `obj` holding `clip`.

    Keys at `frame_start + t * action_fps` (default the scene fps, so the clip plays in real time;
    fractional frames allowed; `frame_start` defaults to the scene's), with `interpolation`
    (LINEAR, or BEZIER as Blender's importer keys) and valid Bezier handles.
    Quaternion bones get sign-continuous quaternions, Euler bones unwrapped Euler angles in their
    own rotation mode. Bones move only where the clip has
    position channels or translations that differ from the rest offsets. Never touches an existing
    action; with `assign`, the new action becomes the active one and the previously active action
    gets a fake user so that it is not lost on save. The new action has a fake user too: every
    action Stride makes (imports, bakes) survives saving the file once nothing plays it.
    """
    _require_armature(obj)
    settings = import_settings(obj, axis_forward, axis_up, global_scale)
    names, parents = list(clip.names), clip.parents.tolist()
    check_bones(obj, clip)
    where = space(obj, settings)
    conversion, scale = where.conversion, where.scale
    rest, heads, _ = _rest(obj, names)
    rel_heads = _relative_heads(heads, parents, conversion)
    pose_rot = quat.unroll(armature.local_to_pose(rest, clip.rotations, conversion), axis=0)
    # The object's location moved the top joints on the way in (action_to_clip): back out here.
    shifts = np.zeros((len(names), 3))
    shifts[clip.parents < 0] = where.shift
    # A joint without position channels moves only where its translation leaves its offset; the
    # extremes over time tell (a reduction over frames only: a take's positions are megabytes).
    drift = np.maximum(clip.positions.max(axis=0, initial=-np.inf) - shifts - clip.offsets,
                       clip.offsets - clip.positions.min(axis=0, initial=np.inf) + shifts).max(axis=1)
    moves = (np.array([any(c in POSITION_CHANNELS for c in ch) for ch in clip.channels])
             | (drift * scale > 1e-9 * np.maximum(1.0, np.abs(clip.offsets * scale).max(axis=1))))
    moving = np.flatnonzero(moves)
    # [T, len(moving), 3]: the moving joints' locations only (usually the root's).
    pose_loc = armature.translation_to_pose_location(
        rest[moving], rel_heads[moving], clip.positions[:, moving] - shifts[moving], conversion, scale)
    start = float(current_scene().frame_start) if frame_start is None else float(frame_start)
    frames_per_second = action_fps if action_fps is not None else scene_fps()
    frames = start + clip.times * frames_per_second
    rotates = np.array([any(c.endswith("rotation") for c in clip.channels[j])
                        or bool(quat.angle(clip.rotations[:, j], quat.identity()).max(initial=0.0) > 1e-12)
                        for j in range(clip.n_joints)])
    previous = obj.animation_data.action if obj.animation_data else None
    if assign and obj.animation_data is not None and obj.animation_data.use_tweak_mode:
        raise BridgeError(f"{obj.name!r} is in NLA tweak mode, where its action cannot change: leave "
                          "it (Tab in the NLA Editor), then try again")
    action, slot = compat.new_action(name, obj)
    action.use_fake_user = True
    try:
        bag = compat.channelbag(action, slot, create=True)
        for j, bone in enumerate(names):
            if progress is not None:
                progress(j / max(len(names), 1))
            mode = obj.pose.bones[bone].rotation_mode
            if not rotates[j]:
                pass
            elif mode == "QUATERNION":
                values = pose_rot[:, j]
                prop = "rotation_quaternion"
            elif mode == "AXIS_ANGLE":
                saa = quat.to_scaled_angle_axis(pose_rot[:, j])
                angle = np.linalg.norm(saa, axis=-1, keepdims=True)
                axis = np.where(angle > 1e-12, saa / np.where(angle > 1e-12, angle, 1.0), [0.0, 1.0, 0.0])
                values = np.concatenate([angle, axis], axis=-1)
                prop = "rotation_axis_angle"
            else:
                values = armature.to_blender_euler(pose_rot[:, j], mode)
                prop = "rotation_euler"
            if rotates[j]:
                for i in range(values.shape[1]):
                    compat.write_keys(compat.new_fcurve(bag, _path(bone, prop), i, group=bone), frames,
                                      values[:, i], interpolation)
            if moves[j]:
                k = int(np.searchsorted(moving, j))
                for i in range(3):
                    compat.write_keys(compat.new_fcurve(bag, _path(bone, "location"), i, group=bone),
                                      frames, pose_loc[:, k, i], interpolation)
        if clip.events:
            action[EVENTS_KEY] = {k: [float(t) for t in v] for k, v in clip.events.items()}
        # Read back and export as this clip, whatever the armature's first import was; the bone
        # lengths say which skeleton the keys were made for (check_skeleton).
        layout = clip_layout(clip, float(frames_per_second))
        layout["lengths"] = _lengths(obj, names, parents, settings).tolist()
        action[SETTINGS_KEY] = json.dumps(layout)
        if assign:
            compat.assign(obj, action, slot)
    except BaseException:
        # Nothing half-written stays behind (a failed write, an interrupt).
        bpy.data.actions.remove(action)
        raise
    if assign and previous is not None and previous.users <= 1:
        previous.use_fake_user = True
    return action
