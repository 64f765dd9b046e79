"""Actions' keys into Clips: the action and slot to read, the F-curves' paths, and `action_to_clip`,
the bulk read of an armature's keyed bone curves (`foreach_get`) in BVH conventions, with the frame
mapping of its times (`action_timing`), and a curve's values at a bake's times (`curve_at`).

An armature not made by a BVH import reads as Blender's importer would have built it: Blender's
Z-up space turned to the BVH's Y-up. A read starts from the checks and settings `begin_read` gives,
which the evaluated read (evaluated.py) shares.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import bpy
import numpy as np

from .. import compat
from ..core import armature, quat
from ..core.clip import DEFAULT_JOINT_CHANNELS, DEFAULT_ROOT_CHANNELS, POSITION_CHANNELS, Clip
from ..errors import BridgeError, BridgeWarning
from ..recipes.actions import Space, fps_from_keys, key_frames, quoted_name, relative_heads
from ..timing import Timing
from .space import bone_order, current_scene, import_settings, require_armature, rest_pose, scene_fps, space

EVENTS_KEY = "stride_events"  # {track: [seconds]} on an action


def bone_path(bone: str, prop: str) -> str:
    """The F-curve path of a pose bone's property (`pose.bones["name"].location`)."""
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'


def property_path(prop: str) -> str:
    """The F-curve path of a custom property (names from markers may hold quotes)."""
    return f'["{bpy.utils.escape_identifier(prop)}"]'


def property_curve(obj: Any, action: Any, prop: str) -> Any:
    """The F-curve that keys the custom property `prop` of `obj` in `action` (its slot), else None."""
    path = property_path(prop)
    curves = [fc for fc in compat.fcurves(action, compat.action_slot(action, obj)) if fc.data_path == path]
    return curves[-1] if curves else None


def curve_at(fc: Any, timing: Timing, times: Any) -> np.ndarray:
    """[n] values of F-curve `fc` as Blender plays it at `times` [n] (seconds, on `timing`'s frames)."""
    return np.array([fc.evaluate(float(f)) for f in timing.frame(times)])


def resolve_action(obj: Any, action: Any = None, slot: Any = None) -> tuple[Any, Any]:
    """(action, slot) to read: the given action (or name), else the active one; the given slot
    (an NLA strip's), else the one animating `obj`."""
    require_armature(obj)
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


class Read(NamedTuple):
    """What a read of an action starts from (`begin_read`)."""

    action: Any
    slot: Any
    curves: dict[tuple[str, int], Any]  # the action's bone curves by (data path, index)
    settings: dict[str, Any]
    names: list[str]
    parents: list[int]
    where: Space


def begin_read(obj: Any, action: Any, slot: Any, axis_forward: str, axis_up: str, global_scale: float,
               skeleton: Callable[[Any, dict[str, Any]], tuple[list[str], list[int]]]) -> Read:
    """The checks and settings a read of keys (`action_to_clip`) and of what plays (`evaluated_clip`)
    share: the action and slot, its bone curves (an action that moves the object is warned of, one
    animating bones this armature lacks refused), the import settings, the skeleton `skeleton`
    reads, the armature's clip space."""
    action, slot = resolve_action(obj, action, slot)
    every = compat.fcurves(action, slot)
    check_object_still(obj, action, every)
    # Only bone curves make the motion: custom properties (event curves, a keyed blend weight)
    # must not stretch or misalign the frames read.
    curves = {(fc.data_path, fc.array_index): fc for fc in every if fc.data_path.startswith("pose.bones[")}
    if not any(len(fc.keyframe_points) for fc in curves.values()):
        raise BridgeError(no_keys(action, obj))
    check_animated_bones(obj, action, curves)
    settings = import_settings(obj, axis_forward, axis_up, global_scale, action)
    names, parents = skeleton(obj, settings)
    return Read(action, slot, curves, settings, names, parents, space(obj, settings))


_OBJECT_TRANSFORM = {f"{delta}{prop}" for delta in ("", "delta_") for prop in (
    "location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale")}


def check_object_still(obj: Any, action: Any, curves: list[Any]) -> None:
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


def check_animated_bones(obj: Any, action: Any, curves: dict[tuple[str, int], Any]) -> None:
    """An action keyed for another skeleton must not read as this one's rest pose."""
    bones = obj.data.bones
    for path, _ in curves:
        found = quoted_name(path, "pose.bones")
        if found is not None:
            name = found[0]
            if name not in bones:
                raise BridgeError(f"armature {obj.name!r} has no bone {name!r}, which action "
                                  f"{action.name!r} animates: it was made for another skeleton")


def action_to_clip(obj: Any, action: Any = None, *, axis_forward: str = "-Z", axis_up: str = "Y",
                   global_scale: float = 1.0, fps: float | None = None, slot: Any = None) -> Clip:
    """The Clip an armature's action holds, in BVH conventions (local rotations, file units/axes).

    `action`: an Action or its name (default: the active one). `fps`: the rate of the action's
    frame numbers, default the scene's; the clip's rate is that over the key spacing. Blender's
    importer keys one BVH frame per scene frame and keeps no rate, so pass the file's rate
    (`fps=120`) unless it ran with use_fps_scale. Keys are read in bulk; curves whose keys do not
    share frames are evaluated on a common grid. `slot`: which slot to read (an NLA strip's).
    """
    read = begin_read(obj, action, slot, axis_forward, axis_up, global_scale, bone_order)
    action, curves, settings, names, parents, where = (read.action, read.curves, read.settings, read.names,
                                                       read.parents, read.where)
    conversion, scale = where.conversion, where.scale
    rest, heads, tails = rest_pose(obj, names)
    rel_heads = relative_heads(heads, parents, conversion)
    keyed = {k: fc for k, fc in curves.items() if len(fc.keyframe_points)}
    keys = dict(zip(keyed, compat.read_keys_many(list(keyed.values())), strict=True))
    frames, aligned = key_frames(list(keys.values()))
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
            read_channel(curves, keys, bone_path(name, "rotation_quaternion"), tuple(pb.rotation_quaternion),
                         frames, aligned, out=pose_rot[:, j])
        elif mode == "AXIS_ANGLE":
            values = read_channel(curves, keys, bone_path(name, "rotation_axis_angle"),
                                  tuple(pb.rotation_axis_angle), frames, aligned)
            pose_rot[:, j] = armature.from_blender_axis_angle(values)
        else:
            values = read_channel(curves, keys, bone_path(name, "rotation_euler"), tuple(pb.rotation_euler),
                                  frames, aligned)
            pose_rot[:, j] = armature.from_blender_euler(values, mode)
        loc_path = bone_path(name, "location")
        has_loc[j] = any((loc_path, i) in curves for i in range(3))
        read_channel(curves, keys, loc_path, tuple(pb.location), frames, aligned, out=pose_loc[:, j])
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
    channels = settings.get("channels") or guess_channels(obj, names, has_loc)
    if settings.get("end_sites"):
        end_parents = [names.index(n) for n, _ in settings["end_sites"]]
        end_offsets = np.array([o for _, o in settings["end_sites"]], dtype=np.float64).reshape(-1, 3)
    else:
        kids = {p for p in parents if p >= 0}
        end_parents = [j for j in range(J) if j not in kids]
        end_offsets = ((tails[end_parents] - heads[end_parents]) @ conversion / scale).reshape(-1, 3)
    clip_fps = fps_from_keys(frames, frame_rate(settings, fps))
    clip = Clip(names, parents, offsets, rotations, positions, clip_fps, channels=channels,
                end_parents=end_parents, end_offsets=end_offsets, name=action.name,
                events=stored_events(action))
    return clip


def read_channel(curves: dict[tuple[str, int], Any], keys: dict[tuple[str, int], np.ndarray], path: str,
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


def guess_channels(obj: Any, names: list[str], has_loc: np.ndarray) -> list[tuple[str, ...]]:
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


def stored_events(action: Any) -> dict[str, list[float]]:
    """Exact event times (seconds from the action's first key) kept on the action."""
    stored = action.get(EVENTS_KEY)
    if not stored:
        return {}
    return {str(k): [float(t) for t in v] for k, v in stored.items()}


def frame_rate(settings: dict[str, Any], fps: float | None) -> float:
    """The rate of an action's frame numbers: `fps` given, else the rate Stride keyed it at, else the
    scene's."""
    return float(fps if fps is not None else settings.get("action_fps") or scene_fps())


def action_timing(obj: Any, action: Any = None, fps: float | None = None, slot: Any = None) -> Timing:
    """The frame mapping `action_to_clip` uses for this action (clip time 0 = its first key)."""
    action, slot = resolve_action(obj, action, slot)
    firsts = [fc.keyframe_points[0].co[0] for fc in compat.fcurves(action, slot)
              if len(fc.keyframe_points) and fc.data_path.startswith("pose.bones[")]
    start = float(min(firsts)) if firsts else float(current_scene().frame_start)
    return Timing(start, frame_rate(import_settings(obj, action=action), fps))
