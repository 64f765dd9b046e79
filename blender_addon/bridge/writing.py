"""Clips into new Actions: `clip_to_action` keys a clip on an armature in bulk (`foreach_set`), in
the bones' own rotation modes, with the layout that reads it back as the same clip; nothing
half-written stays behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import bpy
import numpy as np

from .. import compat
from ..core import armature, quat
from ..core.clip import POSITION_CHANNELS, Clip
from ..errors import BridgeError
from ..recipes.actions import clip_layout, relative_heads
from .checks import check_bones, rest_lengths
from .keys import EVENTS_KEY, bone_path
from .space import SETTINGS_KEY, current_scene, import_settings, require_armature, rest_pose, scene_fps, space


def progress_after(progress: Callable[[float], None] | None,
                   done: float) -> Callable[[float], None] | None:
    """Report `done` of a job; the callback its last part reports through (0..1 to done..1)."""
    if progress is None:
        return None
    progress(done)
    return lambda fraction: progress(done + (1.0 - done) * fraction)


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
    require_armature(obj)
    settings = import_settings(obj, axis_forward, axis_up, global_scale)
    names, parents = list(clip.names), clip.parents.tolist()
    check_bones(obj, clip)
    where = space(obj, settings)
    conversion, scale = where.conversion, where.scale
    rest, heads, _ = rest_pose(obj, names)
    rel_heads = relative_heads(heads, parents, conversion)
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
                    compat.write_keys(compat.new_fcurve(bag, bone_path(bone, prop), i, group=bone), frames,
                                      values[:, i], interpolation)
            if moves[j]:
                k = int(np.searchsorted(moving, j))
                for i in range(3):
                    compat.write_keys(compat.new_fcurve(bag, bone_path(bone, "location"), i, group=bone),
                                      frames, pose_loc[:, k, i], interpolation)
        if clip.events:
            action[EVENTS_KEY] = {k: [float(t) for t in v] for k, v in clip.events.items()}
        # Read back and export as this clip, whatever the armature's first import was; the bone
        # lengths say which skeleton the keys were made for (check_skeleton).
        layout = clip_layout(clip, float(frames_per_second))
        layout["lengths"] = rest_lengths(obj, names, parents, settings).tolist()
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
