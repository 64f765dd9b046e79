"""Stride's BVH import: the armature Blender's importer builds, keyed in bulk from the core parser.

Bones, names, heads, tails, rolls and the object transform match `io_anim_bvh` (the layout comes
from `core.armature.rest_bones`, the axis conversion is applied the way Blender applies it), so
every Stride operator treats both alike. The import settings and the file's channel layout are
stored on the armature (`obj["stride_bvh"]`) for exact read-back and export. Nothing is skipped:
a converter T-pose at frame 0 stays (clips know their `motion_start`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bpy
from mathutils import Matrix

from . import bridge
from .core import armature, bvh, units
from .core.clip import Clip

SCALE_PRESETS = {"NONE": 1.0, "CMU_TO_METERS": units.CMU_UNIT_M, "CM_TO_METERS": 0.01}
ROTATE_MODES = ("QUATERNION", "NATIVE", *armature.EULER_MODES)


def import_bvh(context: Any, filepath: str | Path, *, axis_forward: str = "-Z", axis_up: str = "Y",
               global_scale: float = 1.0, rotate_mode: str = "QUATERNION", frame_start: int = 1,
               use_fps_scale: bool = False, scale_preset: str = "NONE", target: Any = None,
               update_scene_fps: bool = True, update_scene_duration: bool = True,
               progress: Callable[[float], None] | None = None) -> tuple[Any, Any]:
    """Import one BVH file: (armature object, action).

    `target`: an existing armature with the same skeleton to add the action to (a new armature
    otherwise). On any error nothing is left behind (the new armature, its data and action are
    removed) and the error propagates: BVHError names the file and line. `update_scene_fps`,
    `update_scene_duration`: Blender's importer options of those names (the scene takes the file's
    rate, which leaves Scale FPS nothing to scale; its frame range grows to the take's end).
    """
    if scale_preset not in SCALE_PRESETS:
        raise ValueError(f"scale_preset must be one of {', '.join(SCALE_PRESETS)}, not {scale_preset!r}")
    if not (math.isfinite(global_scale) and global_scale > 0):
        raise ValueError(f"scale must be a positive number, not {global_scale}")
    if rotate_mode not in ROTATE_MODES:
        raise ValueError(f"rotate_mode must be one of {', '.join(ROTATE_MODES)}, not {rotate_mode!r}")
    if progress is not None:
        progress(0.0)
    clip = bvh.load(filepath)
    if clip.n_frames == 0:
        raise bvh.BVHError("the file holds no frames (Frames: 0): nothing to animate", str(filepath))
    scale = float(global_scale) * SCALE_PRESETS[scale_preset]
    name = bpy.path.display_name_from_filepath(str(filepath))
    scene = context.scene
    # The scene takes the file's rate once the import has worked; keys are at that rate already.
    action_fps = bridge.scene_fps(scene) if use_fps_scale and not update_scene_fps else clip.fps
    created: list[Any] = []
    try:
        if target is None:
            obj = _build_armature(context, clip, name, scale, axis_forward, axis_up, rotate_mode)
            created += [obj, obj.data]
            obj[bridge.SETTINGS_KEY] = json.dumps(_settings(clip, scale, axis_forward, axis_up, action_fps))
        else:
            obj = target
            bridge.check_bones(obj, clip)
            bridge.check_rest(obj, clip, axis_forward, axis_up, scale)
        context.view_layer.update()  # a never-evaluated pose can crash action assignment (4.5-5.2)
        # Parsing the text, which reports nothing, is about a third of an import.
        action = bridge.clip_to_action(clip, obj, name, frame_start=frame_start, action_fps=action_fps,
                                       axis_forward=axis_forward, axis_up=axis_up, global_scale=scale,
                                       assign=True, interpolation="BEZIER",
                                       progress=bridge.progress_after(progress, 1 / 3))
        created.append(action)
    except BaseException:
        for block in reversed(created):
            _remove(block)
        raise
    if update_scene_fps:
        _update_scene_fps(scene, clip.fps)
    if update_scene_duration:
        last = math.ceil(frame_start + clip.duration * action_fps - 1e-6)
        scene.frame_end = max(scene.frame_end, last)
    return obj, action


def _update_scene_fps(scene: Any, fps: float) -> None:
    """The scene's rate set to `fps` as Blender's importer sets it: a whole number over a base
    (29.97 fps is 30 / 1.001)."""
    whole = max(1, round(fps))
    scene.render.fps, scene.render.fps_base = whole, whole / fps


def _settings(clip: Clip, scale: float, axis_forward: str, axis_up: str, action_fps: float) -> dict:
    return {"axis_forward": axis_forward, "axis_up": axis_up, "global_scale": scale,
            **bridge.clip_layout(clip, action_fps)}


def _build_armature(context: Any, clip: Clip, name: str, scale: float, axis_forward: str,
                    axis_up: str, rotate_mode: str) -> Any:
    heads, tails, connected = armature.rest_bones(
        clip, scale, legacy_multi_child_tail=bpy.app.version < (4, 5, 0))
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    context.collection.objects.link(obj)
    for other in context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj
    if context.object is not None and context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.object.mode_set(mode="EDIT", toggle=False)
    try:
        bones = []
        for j, joint in enumerate(clip.names):
            bone = data.edit_bones.new(joint)
            bone.head = heads[j].tolist()
            bone.tail = tails[j].tolist()
            bones.append(bone)
        for j, bone in enumerate(bones):
            parent = int(clip.parents[j])
            if parent >= 0:
                bone.parent = bones[parent]
                bone.use_connect = bool(connected[j])
    finally:
        bpy.ops.object.mode_set(mode="OBJECT", toggle=False)
    pose = obj.pose
    if pose is None:
        raise RuntimeError(f"armature {name!r} has no pose after building its bones")
    for j, joint in enumerate(clip.names):
        pose_bone: Any = pose.bones[joint]
        if rotate_mode == "NATIVE":
            order = "".join(c[0] for c in clip.channels[j] if c.endswith("rotation"))
            pose_bone.rotation_mode = order if len(order) == 3 else "XYZ"
        else:
            pose_bone.rotation_mode = rotate_mode
    # As Blender's importer: bones built in BVH axes, then the armature rotated into Blender's
    # (its transform_apply calls the same armature transform, without an operator's scene update).
    conversion = armature.axis_conversion(axis_forward, axis_up)
    rows = [[*conversion[i].tolist(), 0.0] for i in range(3)] + [[0.0, 0.0, 0.0, 1.0]]
    data.transform(Matrix(rows))  # a Matrix, not a nested list: RNA reads lists column-major
    return obj


def _remove(block: Any) -> None:
    collection: dict[type, Any] = {bpy.types.Object: bpy.data.objects,
                                   bpy.types.Armature: bpy.data.armatures,
                                   bpy.types.Action: bpy.data.actions}
    for kind, store in collection.items():
        if isinstance(block, kind):
            try:
                store.remove(block)
            except ReferenceError:
                pass
            return


def bvh_files(paths: Sequence[str | Path]) -> list[Path]:
    """BVH files from files and folders (a folder gives its *.bvh files, sorted)."""
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found += sorted(q for q in p.iterdir() if q.suffix.lower() == ".bvh" and q.is_file())
        else:
            found.append(p)
    return found
