"""Actions <-> Clips: the one place Blender animation data turns into core data and back.

An armature made by a BVH import (Blender's or Stride's) reads back as the file's Clip: BVH local
rotations and translations, in BVH units and axes. Blender stores none of its importer's settings,
so callers pass the ones they used (the defaults are Blender's); Stride's importer stores them on
the armature (`obj["stride_bvh"]`) and those win. An armature not made by a BVH import reads in
armature space with `axis_forward='Y', axis_up='Z'`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import bpy
import numpy as np

from . import compat
from .core import armature, quat, resample
from .core.clip import DEFAULT_JOINT_CHANNELS, DEFAULT_ROOT_CHANNELS, POSITION_CHANNELS, Clip, snap_fps

# JSON: import settings and BVH layout, on the armature object; on each action Stride writes, the
# clip's own layout (joints, channels, end sites) and key rate, which override the armature's.
SETTINGS_KEY = "stride_bvh"
EVENTS_KEY = "stride_events"  # {track: [seconds]} on an action


class BridgeError(ValueError):
    """An armature or action that cannot be read or written (message for the user)."""


def _path(bone: str, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'


def current_scene() -> Any:
    scene = bpy.context.scene
    if scene is None:
        raise BridgeError("no scene")
    return scene


def scene_fps(scene: Any = None) -> float:
    scene = scene or current_scene()
    return scene.render.fps / scene.render.fps_base


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
    return settings


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
        raise BridgeError(f"action {action.name!r} has no slot for an object")
    return action, slot


def action_to_clip(obj: Any, action: Any = None, *, axis_forward: str = "-Z", axis_up: str = "Y",
                   global_scale: float = 1.0, fps: float | None = None, slot: Any = None) -> Clip:
    """The Clip an armature's action holds, in BVH conventions (local rotations, file units/axes).

    `action`: an Action or its name (default: the active one). `fps`: the rate of the action's
    frame numbers, default the scene's; the clip's rate is that over the key spacing. Blender's
    importer keys one BVH frame per scene frame and keeps no rate, so pass the file's rate
    (`fps=120`) unless it ran with use_fps_scale. Keys are read in bulk; curves whose keys do not
    share frames are evaluated on a common grid. `slot`: which slot to read (an NLA strip's).
    """
    action, slot = resolve_action(obj, action, slot)
    # Only bone curves make the motion: custom properties (event curves, a keyed blend weight)
    # must not stretch or misalign the frames read.
    curves = {(fc.data_path, fc.array_index): fc for fc in compat.fcurves(action, slot)
              if fc.data_path.startswith("pose.bones[")}
    _check_animated_bones(obj, action, curves)
    settings = import_settings(obj, axis_forward, axis_up, global_scale, action)
    names, parents = _bones(obj, settings)
    conversion = armature.axis_conversion(settings["axis_forward"], settings["axis_up"])
    scale = settings["global_scale"]
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


def read_action(obj: Any, action: Any = None, slot: Any = None) -> tuple[Clip, Timing]:
    """An action read once: its Clip and the frame mapping of that clip's times (what a job needs
    to write results back at the action's frames)."""
    action, slot = resolve_action(obj, action, slot)
    return action_to_clip(obj, action, slot=slot), action_timing(obj, action, slot=slot)


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


def nla_items(obj: Any, track: str = "",
              default_blend: float = 0.25) -> tuple[list, list[float], float, str]:
    """([(clip, start_s, end_s)] at the scene rate, blend time per junction, first frame, track
    name) for the strips of an NLA track, in order: each strip sampled at scene frames through its
    action range, scale and repeat (and its slot); a gap between strips holds the last pose."""
    adt = obj.animation_data
    tracks = list(adt.nla_tracks) if adt is not None else []
    if not tracks:
        raise BridgeError(f"armature {obj.name!r} has no NLA tracks: push actions down in the Action "
                       "Editor and arrange them as strips on one track first")
    if track:
        found = [t for t in tracks if t.name == track]
        if not found:
            raise BridgeError(f"no NLA track named {track!r} on {obj.name!r} "
                           f"(tracks: {', '.join(t.name for t in tracks)})")
        nla = found[0]
    else:
        nla = adt.nla_tracks.active or tracks[0]
    strips = sorted((s for s in nla.strips if not s.mute), key=lambda s: s.frame_start)
    if not strips:
        raise BridgeError(f"NLA track {nla.name!r} has no (unmuted) strips: add action strips to it first")
    for s in strips:
        unsupported = [what for what, on in (
            ("a reversed strip", s.use_reverse), ("animated influence", s.use_animated_influence),
            ("animated strip time", s.use_animated_time),
            ("a cyclic animated time", s.use_animated_time_cyclic),
            (f"blending '{s.blend_type}' (only REPLACE)", s.blend_type != "REPLACE"),
            (f"a {s.type.lower()} strip (only action strips)", s.type != "CLIP"),
            ("no action", s.action is None)) if on]
        if unsupported:
            raise BridgeError(f"NLA strip {s.name!r} uses {unsupported[0]}, which Stride cannot bake; "
                           "change it or bake without that strip")
    rate = scene_fps()
    items: list[tuple[Clip, float, float]] = []
    blends: list[float] = []
    for k, s in enumerate(strips):
        slot = getattr(s, "action_slot", None)
        clip, timing = read_action(obj, s.action, slot=slot)
        n = round(s.frame_end - s.frame_start) + 1
        local = np.arange(n) / s.scale  # action frames from the strip's start
        span = s.action_frame_end - s.action_frame_start
        # Repeats wrap the action range; the strip's very last frame is the range's end.
        offset = (np.where(local >= span * s.repeat - 1e-6, span, np.mod(local, span)) if span > 0
                  else np.zeros_like(local))
        strip_clip = resample.sample(clip, timing.seconds(s.action_frame_start + offset), rate)
        if k:
            prev = strips[k - 1]
            gap = round(s.frame_start - prev.frame_end)
            if gap < 0:
                raise BridgeError(f"NLA strips {prev.name!r} and {s.name!r} overlap")
            blend_frames = s.blend_in or prev.blend_out
            blend = blend_frames / rate if blend_frames else default_blend
            if gap > 0:
                last = items[-1][0]
                hold = last.replace(rotations=np.repeat(last.rotations[-1:], gap + 1, axis=0),
                                    positions=np.repeat(last.positions[-1:], gap + 1, axis=0), events={})
                items.append((hold, 0.0, gap / rate))
                blends.append(blend)
            blends.append(blend)
        items.append((strip_clip, 0.0, (n - 1) / rate))
    return items, blends, float(strips[0].frame_start), nla.name


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


def check_rest(obj: Any, clip: Clip, axis_forward: str = "-Z", axis_up: str = "Y",
               global_scale: float = 1.0) -> None:
    """Raise BridgeError unless the armature's rest offsets are the clip's: the same skeleton, not
    only the same bone names (an action keyed onto other bone lengths would not read back).
    Axes and scale: the armature's stored import settings, else the given ones."""
    if clip.n_joints == 0:
        return
    settings = import_settings(obj, axis_forward, axis_up, global_scale)
    conversion = armature.axis_conversion(settings["axis_forward"], settings["axis_up"])
    _, heads, _ = _rest(obj, list(clip.names))
    offsets = _relative_heads(heads, clip.parents.tolist(), conversion) / settings["global_scale"]
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
    gets a fake user so that it is not lost on save.
    """
    _require_armature(obj)
    settings = import_settings(obj, axis_forward, axis_up, global_scale)
    names, parents = list(clip.names), clip.parents.tolist()
    check_bones(obj, clip)
    conversion = armature.axis_conversion(settings["axis_forward"], settings["axis_up"])
    scale = settings["global_scale"]
    rest, heads, _ = _rest(obj, names)
    rel_heads = _relative_heads(heads, parents, conversion)
    pose_rot = quat.unroll(armature.local_to_pose(rest, clip.rotations, conversion), axis=0)
    # A joint without position channels moves only where its translation leaves its offset; the
    # extremes over time tell (a reduction over frames only: a take's positions are megabytes).
    drift = np.maximum(clip.positions.max(axis=0, initial=-np.inf) - clip.offsets,
                       clip.offsets - clip.positions.min(axis=0, initial=np.inf)).max(axis=1)
    moves = (np.array([any(c in POSITION_CHANNELS for c in ch) for ch in clip.channels])
             | (drift * scale > 1e-9 * np.maximum(1.0, np.abs(clip.offsets * scale).max(axis=1))))
    moving = np.flatnonzero(moves)
    # [T, len(moving), 3]: the moving joints' locations only (usually the root's).
    pose_loc = armature.translation_to_pose_location(
        rest[moving], rel_heads[moving], clip.positions[:, moving], conversion, scale)
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
    action.use_fake_user = not assign
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
        # Read back and export as this clip, whatever the armature's first import was.
        action[SETTINGS_KEY] = json.dumps(clip_layout(clip, float(frames_per_second)))
        if assign:
            compat.assign(obj, action, slot)
    except BaseException:
        # Nothing half-written stays behind (a failed write, an interrupt).
        bpy.data.actions.remove(action)
        raise
    if assign and previous is not None and previous.users <= 1:
        previous.use_fake_user = True
    return action
