"""Where an armature's bones sit in its clips' (BVH) space: the import settings Stride stored on it
(axes, scale, file layout), the object's world transform, the scene's rate, and the rest pose in
joint order.

An armature made by a BVH import (Blender's or Stride's) reads back in the file's units and axes;
Blender stores none of its importer's settings, so callers pass the ones they used (the defaults are
Blender's), and the ones Stride's importer stored (`obj["stride_bvh"]`) win. Reads and writes apply
the object's world transform (rotation, uniform scale, location, parents): a clip is the motion as
it stands in the scene, so an armature that an FBX import left rotated 90 degrees about X at scale
0.01 (bones in centimeters) reads upright, in meters.
"""

from __future__ import annotations

import json
from typing import Any

import bpy
import numpy as np

from ..core import quat
from ..core.clip import snap_fps
from ..errors import BridgeError
from ..recipes.actions import Space, clip_space

# JSON: import settings and BVH layout, on the armature object; on each action Stride writes, the
# clip's own layout (joints, channels, end sites) and key rate, which override the armature's.
SETTINGS_KEY = "stride_bvh"


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
    return clip_space(world_matrix(obj), settings, obj.name)


def require_armature(obj: Any) -> None:
    """BridgeError unless `obj` is an armature object."""
    if obj is None or getattr(obj, "type", None) != "ARMATURE":
        name = getattr(obj, "name", None)
        raise BridgeError(f"{name!r} is not an armature" if name else "no armature selected")


def bone_order(obj: Any, settings: dict[str, Any]) -> tuple[list[str], list[int]]:
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


def rest_pose(obj: Any, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
