"""Animators' rigs, built in the tests from a CMU take (tests/data), walking as the take walks.

- `mixamo`: a Mixamo character as Blender's FBX importer leaves one: bones in centimeters in a
  Y-up armature space, the object rotated 90 degrees about X at scale 0.01, `mixamorig:` names;
  made here and sent through Blender's own FBX exporter and importer.
- `hand_built`: a rig built in Blender's own Z-up space, in meters, named as Blender names bones
  (`thigh.L`, `shin.L`, `foot.L`, `toe.L`), every bone rolled about its axis.
- `rigify`: a Rigify human (the Human metarig, generated; built in a child process), its walk keyed
  on its controls: the foot IK controls along the take's ankle paths, the torso along its pelvis.
- `small_ik`: a non-deform `root`, deform pelvis, spine and legs whose shins follow IK controllers
  `foot_ik.L/R` (keyed along the ankle paths) and whose pelvis is keyed along the take's.

The first two are animated by Blender itself, never by Stride: the take is imported with Blender's BVH
importer, each bone of the rig copies the world location and rotation of its joint there
(constraints), and `nla.bake` with visual keying bakes that into the rig's action. Joint positions
are the take's; the rig's rest frames (rolls, axes, units, object transform) are its own.
"""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import math
import subprocess
import sys
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
        if kind == "rigify":
            _build_apart(kind, folder, path)
            return path
        builders = {"mixamo": mixamo, "hand_built": hand_built, "small_ik": small_ik}
        obj = builders[kind](folder)
        bpy.context.view_layer.objects.active = obj
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def _build_apart(kind: str, folder: Path, path: Path) -> None:
    """Build rig `kind` and save it at `path` in a child Python of the same bpy: after Rigify has
    generated a rig, bpy 4.2 crashes when its Python exits and 4.5 hangs there (the saved file opens
    cleanly), so the child's exit is not the test's, and it leaves without Python's shutdown. The
    child must have printed that it saved."""
    here = Path(__file__).resolve().parent
    paths = [str(here.parents[1]), str(here.parent), str(here)]
    code = (f"import sys; sys.path[:0] = {paths!r}\n"
            "import bpy, rigs\nfrom pathlib import Path\n"
            f"obj = rigs.{kind}(Path({str(folder)!r}))\n"
            "bpy.context.view_layer.objects.active = obj\n"
            f"bpy.ops.wm.save_as_mainfile(filepath={str(path)!r}, copy=True)\n"
            "print('STRIDE-RIG-SAVED', flush=True)\n"
            # Skip Python's shutdown: after a Rigify generation bpy 4.2 crashes there and 4.5 hangs.
            "import os; os._exit(0)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    if "STRIDE-RIG-SAVED" not in run.stdout or not path.exists():
        raise RuntimeError(f"building the {kind} rig failed ({run.returncode}): {run.stderr[-3000:]}")


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


# -- rigs whose legs follow keyed controls (issue 23) -----------------------------------------------

# The take at 60 fps (every other 120 fps frame): 240 frames, seven steps.
WALK_FPS = 60
# The bones tests look at on the control rigs: (left ankle, right ankle) of the deform skeleton.
ANKLES = {"rigify": ("DEF-foot.L", "DEF-foot.R"), "small_ik": ("foot.L", "foot.R")}


def walk_paths() -> dict[str, np.ndarray]:
    """{'hips', 'L', 'R': [T, 3]} the take's pelvis and ankle paths in meters, Blender's Z-up
    axes, turned to walk along -Y (where rigs face) from above the origin, at WALK_FPS."""
    clip = bvh.load(cmu_path(TAKE))[FRAMES[0]:FRAMES[1]:120 // WALK_FPS]
    _, pos = clip.fk()
    pick = {k: clip.names.index(n) for k, n in (("hips", "Hips"), ("L", "LeftFoot"), ("R", "RightFoot"))}
    # BVH Y-up, -Z forward -> Blender Z-up, Y forward (the importer's default conversion).
    paths = {k: pos[:, j] @ np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]) * units.CMU_UNIT_M
             for k, j in pick.items()}
    travel = paths["hips"][-1, :2] - paths["hips"][0, :2]
    turn = math.atan2(-travel[0], -travel[1])  # the angle that takes the travel onto -Y
    c, s_ = math.cos(turn), math.sin(turn)
    yaw = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
    start = np.array([*paths["hips"][0, :2], 0.0])
    return {k: (v - start) @ yaw.T for k, v in paths.items()}


def _fit(paths: dict[str, np.ndarray], hip_height: float, ankle_height: float) -> dict[str, np.ndarray]:
    """The paths scaled to a rig whose hips stand `hip_height` above the floor and ankles
    `ankle_height` at rest (its leg length), the lowest ankle at its rest height, the hips 3% of
    the leg lower so that the legs always reach."""
    ankles = np.concatenate([paths["L"][:, 2], paths["R"][:, 2]])
    leg = float(np.median(paths["hips"][:, 2]) - ankles.min())
    scale = 0.97 * (hip_height - ankle_height) / leg
    lift = ankle_height - scale * ankles.min()
    return {k: v * scale + np.array([0.0, 0.0, lift]) for k, v in paths.items()}


def _key_locations(obj, targets: dict[str, np.ndarray], rests: dict[str, np.ndarray]) -> None:
    """Key each control's pose location so that its head moves by target - rest in armature space
    (controls whose parents stay at rest: loc = M^T delta), one key per scene frame from 1."""
    for bone, path in targets.items():
        pb = obj.pose.bones[bone]
        m = np.array(obj.data.bones[bone].matrix_local)[:3, :3]
        local = (path - rests[bone]) @ m  # rows: M^T delta
        for f, value in enumerate(local, start=1):
            pb.location = value.tolist()
            pb.keyframe_insert("location", frame=f)


def _walk_scene(frames: int) -> None:
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = WALK_FPS, 1.0
    scene.frame_start, scene.frame_end = 1, frames


def small_ik(folder: Path) -> object:
    """A Z-up rig in meters facing -Y: a non-deform `root`; deform pelvis, spine and legs
    (thigh, shin, foot, toe .L/.R, no arms); shins bent by IK constraints (chain 2) towards
    non-deform controllers `foot_ik.L/R` under the root; feet copying the controllers' rotation.
    The pelvis and the controllers are keyed along the take's pelvis and ankle paths."""
    bpy.ops.wm.read_homefile(use_empty=True)
    data = bpy.data.armatures.new("small_ik")
    obj = bpy.data.objects.new("small_ik", data)
    bpy.context.scene.collection.objects.link(obj)
    _select(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    made: dict[str, Any] = {}

    def bone(name: str, head, tail, parent: str | None, deform: bool = True) -> None:
        edit = data.edit_bones.new(name)
        edit.head, edit.tail = head, tail
        edit.use_deform = deform
        if parent is not None:
            edit.parent = made[parent]
        made[name] = edit

    bone("root", (0, 0, 0), (0, 0.3, 0), None, deform=False)
    bone("pelvis", (0, 0, 0.95), (0, 0, 1.1), "root")
    bone("spine", (0, 0, 1.1), (0, 0, 1.5), "pelvis")
    for side, x in (("L", 0.1), ("R", -0.1)):
        bone(f"thigh.{side}", (x, 0, 0.92), (x, -0.04, 0.52), "pelvis")  # knees a little forward
        bone(f"shin.{side}", (x, -0.04, 0.52), (x, 0, 0.1), f"thigh.{side}")
        bone(f"foot.{side}", (x, 0, 0.1), (x, -0.13, 0.03), f"shin.{side}")
        bone(f"toe.{side}", (x, -0.13, 0.03), (x, -0.19, 0.03), f"foot.{side}")
        bone(f"foot_ik.{side}", (x, 0, 0.1), (x, -0.13, 0.03), "root", deform=False)
    for side in ("L", "R"):
        made[f"shin.{side}"].use_connect = True
        made[f"foot.{side}"].use_connect = True
    bpy.ops.object.mode_set(mode="OBJECT")
    for side in ("L", "R"):
        ik = obj.pose.bones[f"shin.{side}"].constraints.new("IK")
        ik.target, ik.subtarget, ik.chain_count = obj, f"foot_ik.{side}", 2
        turn = obj.pose.bones[f"foot.{side}"].constraints.new("COPY_ROTATION")
        turn.target, turn.subtarget = obj, f"foot_ik.{side}"
    bones = obj.data.bones
    paths = _fit(walk_paths(), bones["thigh.L"].head_local.z, bones["foot.L"].head_local.z)
    rests = {n: np.array(bones[n].head_local) for n in ("pelvis", "foot_ik.L", "foot_ik.R")}
    hips = paths["hips"] + (rests["pelvis"] - np.array([0.0, 0.0, bones["thigh.L"].head_local.z]))
    _key_locations(obj, {"pelvis": hips, "foot_ik.L": paths["L"], "foot_ik.R": paths["R"]}, rests)
    _walk_scene(len(hips))
    obj.animation_data.action.name = f"{TAKE} ik walk"
    bpy.context.scene.frame_set(1)
    return obj


def rigify(folder: Path) -> object:
    """A Rigify human (the Human metarig, generated), its walk keyed on its controls: the foot IK
    controls `foot_ik.L/R` along the take's ankle paths and `torso` along its pelvis path, legs
    in IK (IK_FK 0). The metarig is removed."""
    import addon_utils

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.active_object
    assert meta is not None and bpy.ops.pose.rigify_generate() == {"FINISHED"}
    (obj,) = [o for o in bpy.data.objects if o.type == "ARMATURE" and o != meta]
    bpy.data.objects.remove(meta)
    addon_utils.disable("rigify", default_set=True)  # the generated rig plays without it
    for name in list(bpy.data.objects.keys()):  # the widgets' collection stays, hidden
        if name.startswith("WGT-"):
            bpy.data.objects[name].hide_render = True
    _select(obj)
    for side in ("L", "R"):
        obj.pose.bones[f"thigh_parent.{side}"]["IK_FK"] = 0.0  # 0 = IK
    bones = obj.data.bones
    hip = bones["DEF-thigh.L"].head_local.z
    paths = _fit(walk_paths(), hip, bones["DEF-foot.L"].head_local.z)
    ankle = {s: np.array(bones[f"DEF-foot.{s}"].head_local) for s in ("L", "R")}
    rests = {"torso": np.array(bones["torso"].head_local),
             "foot_ik.L": np.array(bones["foot_ik.L"].head_local),
             "foot_ik.R": np.array(bones["foot_ik.R"].head_local)}
    # Each control moves as its joint does: by the path's change from where the joint rests.
    hips_rest = np.array([0.0, 0.0, hip])
    targets = {"torso": rests["torso"] + paths["hips"] - hips_rest,
               "foot_ik.L": rests["foot_ik.L"] + paths["L"] - ankle["L"],
               "foot_ik.R": rests["foot_ik.R"] + paths["R"] - ankle["R"]}
    _key_locations(obj, targets, rests)
    _walk_scene(len(paths["hips"]))
    obj.animation_data.action.name = f"{TAKE} rigify walk"
    bpy.context.scene.frame_set(1)
    return obj
