"""What the bridge works out from an action's numbers with no bpy: an armature's clip space from its
world matrix, rest heads relative to their parents, the names in F-curve paths, the frames keys are
sampled at and the rate they make, the layout a clip leaves on its action, and what a take's rate
says about how it plays (bridge/ reads and writes the Blender data around these)."""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import numpy as np

from ..core import armature, contacts
from ..core.clip import Clip, snap_fps
from ..errors import BridgeError


class Space(NamedTuple):
    """Where an armature's bones sit in its clips' (BVH) space, the object's world transform
    included: clip = conversion^T @ armature / scale, plus `shift` for the top joints."""

    conversion: np.ndarray  # [3, 3]: BVH axes -> the armature's own (the importer's C, turned back by
    #                         the object's world rotation)
    scale: float  # armature units per clip unit: the import scale over the object's world scale
    shift: np.ndarray  # [3]: the object's world location in clip units and axes


def clip_space(world: np.ndarray, settings: dict[str, Any], name: str) -> Space:
    """The clip space of armature `name` whose world matrix is `world` [4, 4]: its import settings
    (axes, scale) after its world transform. Raises BridgeError for a transform no BVH can hold
    (uneven or negative scale, shear)."""
    conversion = armature.axis_conversion(settings["axis_forward"], settings["axis_up"])
    scale = float(settings["global_scale"])
    linear = world[:3, :3]
    sizes = np.linalg.norm(linear, axis=0)
    size = float(sizes.mean())
    if not (size > 0.0 and math.isfinite(size)):
        raise BridgeError(f"armature {name!r} has a zero scale in the scene: give it a scale")
    rotation = linear / sizes
    sheared = not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-4)
    if sizes.max() - sizes.min() > 1e-4 * size or sheared:
        raise BridgeError(f"armature {name!r} is scaled unevenly in the scene "
                          f"({', '.join(f'{v:.4g}' for v in sizes)}), which a BVH cannot hold: apply its "
                          "scale (Object > Apply > Scale), or scale it evenly")
    if np.linalg.det(rotation) < 0.0:
        raise BridgeError(f"armature {name!r} is mirrored in the scene (a negative scale), which a BVH "
                          "cannot hold: apply its scale (Object > Apply > Scale) first")
    return Space(rotation.T @ conversion, scale / size, conversion.T @ world[:3, 3] / scale)


def relative_heads(heads: np.ndarray, parents: list[int], conversion: np.ndarray) -> np.ndarray:
    """Rest heads relative to the parent, rotated back to BVH axes (still scaled)."""
    rel = heads.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            rel[j] = heads[j] - heads[p]
    return rel @ conversion


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


def key_frames(keys: list[np.ndarray]) -> tuple[np.ndarray, bool]:
    """(frames to sample, whether every curve is keyed on exactly them): the shared key frames of
    all curves ([n, 2] keys each), else a grid at their key spacing."""
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


def fps_from_keys(frames: np.ndarray, action_fps: float) -> float:
    """Clip rate: the action's frame rate over the key spacing (keys 0.2 frames apart at 24 fps,
    as Blender's importer writes with use_fps_scale, are 120 fps)."""
    if len(frames) < 2:
        return action_fps
    step = (float(frames[-1]) - float(frames[0])) / (len(frames) - 1)
    return snap_fps(step / action_fps)


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


# A take whose steps come further apart than this plays slower than people move: people step every
# 0.3-0.8 s, and a 120 fps take keyed one file frame per scene frame at 24 fps steps every 2-3 s.
SLOW_STEP_SECONDS = 1.25
# Rates mocap is recorded at, most common first: the first that makes the steps a person's is named.
MOCAP_FPS = (120.0, 60.0, 30.0, 100.0, 240.0, 50.0)
STEP_RANGE = (0.3, 0.8)


def rate_note(action: str, scene: float, stored: float | None, clip: Clip) -> str:
    """'' when action `action`'s clip plays at the rate it was keyed at (`stored`, the rate Stride
    keyed it at; None where Blender's importer keyed it) in a scene at `scene` fps; else what
    differs, naming both fps. Without a stored rate, a take that steps slower than people do
    (core.contacts.step_seconds) was most likely recorded faster (one 120 fps file frame per 24 fps
    scene frame)."""
    if stored:
        stored = float(stored)
        if abs(stored - scene) <= 1e-4 * scene:
            return ""
        speed = scene / stored
        how = f"{1 / speed:.3g}x slower" if speed < 1.0 else f"{speed:.3g}x faster"
        return (f"action {action!r} is keyed at {stored:g} fps and the scene plays at {scene:g} fps: "
                f"it plays {how} than it was recorded (Stride reads it at its own {clip.fps:g} fps); set "
                f"the scene's Frame Rate (Output Properties) to {stored:g} fps")
    if not clip.body.feet:
        return ""
    step = contacts.step_seconds(clip)
    if step is None or step <= SLOW_STEP_SECONDS:
        return ""
    likely = next((r for r in MOCAP_FPS if r > clip.fps and STEP_RANGE[0] <= step * clip.fps / r
                   <= STEP_RANGE[1]), None)
    guess = (f"it moves as if recorded at {likely:g} fps" if likely is not None
             else "it was likely recorded at a higher rate")
    fix = f"{likely:g} fps" if likely is not None else "the file's rate"
    return (f"action {action!r} steps every {step:.2g} s at the scene's {scene:g} fps (its keys one "
            f"scene frame apart, the rate Blender's importer leaves), slower than people walk: {guess}. "
            f"Set the scene's Frame Rate (Output Properties) to {fix} and try again, or import with "
            "Update Scene FPS")
