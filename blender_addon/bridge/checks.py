"""Is an action this armature's? The skeleton an action's keys were made for against the armature's
(bone lengths), a clip's rest offsets and bones against its bones, and the action's rate against the
scene's: each refused (BridgeError) or warned of (BridgeWarning) in words that say what to do.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import bpy
import numpy as np

from ..core import skeleton
from ..core.clip import Clip
from ..errors import BridgeError, BridgeWarning
from ..recipes import actions
from ..recipes.actions import relative_heads
from .space import SETTINGS_KEY, bone_order, import_settings, rest_pose, scene_fps, space


def rest_lengths(obj: Any, names: list[str], parents: list[int], settings: dict[str, Any]) -> np.ndarray:
    """[J] bone lengths (each joint's distance from its parent) in clip units, the object's world
    scale left out: the skeleton's own measure, wherever the armature stands."""
    _, heads, _ = rest_pose(obj, names)
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
            names, parents = bone_order(other, settings)
        except BridgeError:
            continue
        lengths = rest_lengths(other, names, parents, settings).tolist()
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
    names, parents = bone_order(obj, settings)
    common = [j for j, n in enumerate(names) if n in theirs and parents[j] >= 0]
    ours = rest_lengths(obj, names, parents, settings)[common]
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
    _, heads, _ = rest_pose(obj, list(clip.names))
    offsets = relative_heads(heads, clip.parents.tolist(), where.conversion) / where.scale
    err = np.linalg.norm(offsets - clip.offsets, axis=1)
    # Bone heads are float32: 1e-5 of the skeleton's size is far above their rounding (the longest
    # offset stands in for the height of a skeleton without one, such as a single joint).
    size = max(clip.height, float(np.linalg.norm(clip.offsets, axis=1).max()), 1e-9)
    j = int(np.argmax(err))
    if err[j] > 1e-5 * size:
        raise BridgeError(f"bone {clip.names[j]!r} of {obj.name!r} is offset {offsets[j].round(6).tolist()} "
                          f"from its parent; the file says {clip.offsets[j].round(6).tolist()}: "
                          "another skeleton")


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


def rate_note(obj: Any, action: Any, clip: Clip) -> str:
    """'' when the action plays at the rate it was keyed at; else what differs, naming both fps
    (recipes.actions.rate_note): Stride stores the rate it keys an action at (its importer and its
    bakes), Blender's importer none."""
    stored = import_settings(obj, action=action).get("action_fps")
    return actions.rate_note(action.name, scene_fps(), stored, clip)
