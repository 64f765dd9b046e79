"""Animators' rigs, built in the tests from a CMU take (tests/data), walking as the take walks.

- `mixamo`: a Mixamo character as Blender's FBX importer leaves one: bones in centimeters in a
  Y-up armature space, the object rotated 90 degrees about X at scale 0.01, `mixamorig:` names;
  made here and sent through Blender's own FBX exporter and importer.
- `hand_built`: a rig built in Blender's own Z-up space, in meters, named as Blender names bones
  (`thigh.L`, `shin.L`, `foot.L`, `toe.L`), every bone rolled about its axis.

Each is animated by Blender itself, never by Stride: the take is imported with Blender's BVH
importer, each bone of the rig copies the world location and rotation of its joint there
(constraints), and `nla.bake` with visual keying bakes that into the rig's action. Joint positions
are the take's; the rig's rest frames (rolls, axes, units, object transform) are its own.
"""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import bpy
import numpy as np
from fixtures import cmu_path

from core import bvh, units

# CMU subject 9 walking, 120 fps: seven steps on a level floor (subject 2's walkway rises 5-8 cm,
# so its later plants never come within 3 cm of the take's lowest foot).
TAKE, FRAMES = "09_12", (100, 580)

# CMU joint -> the rig's bone.
MIXAMO = {"LowerBack": "Spine", "Spine": "Spine1", "Spine1": "Spine2"}
BLENDER_NAMES = {
    "Hips": "hips", "LowerBack": "spine", "Spine": "spine.001", "Spine1": "chest", "Neck": "neck",
    "Neck1": "neck.001", "Head": "head",
    **{f"{cmu}": f"{name}.{s}" for side, s in (("Left", "L"), ("Right", "R")) for cmu, name in (
        (f"{side}UpLeg", "thigh"), (f"{side}Leg", "shin"), (f"{side}Foot", "foot"), (f"{side}ToeBase", "toe"),
        (f"{side}Shoulder", "shoulder"), (f"{side}Arm", "upper_arm"), (f"{side}ForeArm", "forearm"),
        (f"{side}Hand", "hand"), (f"{side}FingerBase", "palm"), (f"{side}HandIndex1", "f_index"))},
    "LHipJoint": "pelvis.L", "RHipJoint": "pelvis.R", "LThumb": "thumb.L", "RThumb": "thumb.R",
}
# The bones tests look at, per rig: (head, left ankle, right ankle, left toe, right toe).
PARTS = {"mixamo": ("mixamorig:Head", "mixamorig:LeftFoot", "mixamorig:RightFoot", "mixamorig:LeftToeBase",
                    "mixamorig:RightToeBase"),
         "hand_built": ("head", "foot.L", "foot.R", "toe.L", "toe.R")}


def _source(folder: Path) -> tuple[object, int]:
    """The take's frames imported by Blender's BVH importer in meters, the scene at its rate:
    (armature, frames)."""
    scene = bpy.context.scene
    path = folder / f"{TAKE}_{FRAMES[0]}_{FRAMES[1]}.bvh"
    clip = bvh.load(cmu_path(TAKE))
    bvh.save(clip[FRAMES[0]:FRAMES[1]], path)
    assert bpy.ops.import_anim.bvh(filepath=str(path), global_scale=units.CMU_UNIT_M, update_scene_fps=True,
                                   update_scene_duration=True) == {"FINISHED"}
    src = bpy.context.active_object
    frames = int(src.animation_data.action.frame_range[1])
    scene.frame_start, scene.frame_end = 1, frames
    return src, frames


def _build(src, name: str, names: dict[str, str], to_armature: np.ndarray, scale: float,
           roll: bool) -> object:
    """An armature whose bones sit where `src`'s do (heads, tails), in its own armature space:
    armature = to_armature @ world / scale."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    _select(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    made: dict[str, Any] = {}
    for k, bone in enumerate(src.data.bones):
        edit = data.edit_bones.new(names.get(bone.name, bone.name))
        edit.head = (to_armature @ np.array(bone.head_local) / scale).tolist()
        edit.tail = (to_armature @ np.array(bone.tail_local) / scale).tolist()
        if roll:  # every bone turned about its own axis by its own angle
            edit.roll = math.radians((53 * k) % 170 - 85)
        if bone.parent is not None:
            edit.parent = made[bone.parent.name]
        made[bone.name] = edit
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def _select(obj) -> None:
    bpy.context.view_layer.update()
    for other in bpy.context.scene.objects:
        other.select_set(other == obj)
    bpy.context.view_layer.objects.active = obj


def _animate(obj, src, names: dict[str, str], frames: int) -> None:
    """`obj`'s bones copy the world location and rotation of `src`'s, baked with visual keying."""
    back = {v: k for k, v in names.items()}
    for pb in obj.pose.bones:
        joint = back.get(pb.name, pb.name)
        for kind in ("COPY_LOCATION", "COPY_ROTATION"):
            c = pb.constraints.new(kind)
            c.target, c.subtarget = src, joint
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.nla.bake(frame_start=1, frame_end=frames, only_selected=False, visual_keying=True,
                            clear_constraints=True, bake_types={"POSE"},
                            channel_types={"LOCATION", "ROTATION"}) == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    source_action = src.animation_data.action
    bpy.data.objects.remove(src)
    bpy.data.actions.remove(source_action)


def hand_built(folder: Path) -> object:
    """A Z-up rig in meters, Blender bone names, every bone rolled, walking the take."""
    bpy.ops.wm.read_homefile(use_empty=True)
    src, frames = _source(folder)
    names = {b.name: BLENDER_NAMES.get(b.name, b.name.lower()) for b in src.data.bones}
    obj = _build(src, "rig", names, np.eye(3), 1.0, roll=True)
    _animate(obj, src, names, frames)
    obj.animation_data.action.name = f"{TAKE} walk"
    return obj


def mixamo(folder: Path) -> object:
    """A Mixamo character (Y-up centimeters, object rotated 90 degrees about X at scale 0.01,
    `mixamorig:` names) walking the take, after Blender's FBX exporter and importer."""
    bpy.ops.wm.read_homefile(use_empty=True)
    src, frames = _source(folder)
    names = {b.name: "mixamorig:" + MIXAMO.get(b.name, b.name) for b in src.data.bones}
    # world = Rx(90) @ armature * 0.01, so armature = Rx(-90) @ world / 0.01
    obj = _build(src, "mixamo", names, np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]), 0.01, roll=False)
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    obj.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    _animate(obj, src, names, frames)
    path = folder / "mixamo.fbx"
    _select(obj)
    assert bpy.ops.export_scene.fbx(filepath=str(path), use_selection=True, object_types={"ARMATURE"},
                                    add_leaf_bones=False, bake_anim=True, bake_anim_simplify_factor=0.0,
                                    bake_anim_use_nla_strips=False,
                                    bake_anim_use_all_actions=False) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.fbx(filepath=str(path)) == {"FINISHED"}
    (obj,) = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    bpy.context.view_layer.objects.active = obj
    return obj


def saved(kind: str, folder: Path) -> Path:
    """The rig built once and saved as a .blend in `folder` (tests open it)."""
    path = folder / f"{kind}.blend"
    if not path.exists():
        obj = mixamo(folder) if kind == "mixamo" else hand_built(folder)
        bpy.context.view_layer.objects.active = obj
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def open_rig(kind: str, folder: Path) -> object:
    """A fresh copy of the rig: its .blend opened, the armature active."""
    bpy.ops.wm.open_mainfile(filepath=str(saved(kind, folder)))
    (obj,) = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def world_heads(obj, bones: list[str], frames) -> np.ndarray:
    """[F, B, 3] where Blender puts the bones' heads in the world at each frame (its own
    evaluation)."""
    scene = bpy.context.scene
    out = np.empty((len(frames), len(bones), 3))
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        world = np.array(obj.matrix_world)
        for b, name in enumerate(bones):
            out[i, b] = (world @ np.array([*obj.pose.bones[name].head, 1.0]))[:3]
    return out
