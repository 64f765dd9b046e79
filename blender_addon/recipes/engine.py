"""Export for Engine's arithmetic (no bpy): the names it gives, each exporter's settings by Blender
version, the events file beside an export (`sidecar_path`, its `SCHEMA`), the names of Stride's
curves in it, and a GLB's JSON chunk (`glb_json`, `with_animation_extras`). jobs/engine.py runs the
exporters; docs/engines/ documents the file.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from ..errors import JobError
from ..options import ENGINE_CHOICES, ENGINE_FORMAT_CHOICES

ROOT_NAME = "root"
ROOT_SUFFIX = " (root motion)"
COPY_OF = "stride_deform_copy_of"  # on Stride's deform-skeleton copy of a rig: the rig's name
ROOT_OF = "stride_root_motion_of"  # on an Add Root Motion result: the action it was baked from
ARMATURE_NAME = "Armature"  # what the armature object is called in an exported file
SIDECAR_SUFFIX = ".events.json"
SCHEMA = 1
FORMATS = tuple(value for value, _, _ in ENGINE_FORMAT_CHOICES)
ENGINES = tuple(value for value, _, _ in ENGINE_CHOICES)
EXTENSIONS = {"FBX": ".fbx", "GLB": ".glb"}
# The root bone's length, in heights: long enough to see and pick in the viewport.
ROOT_LENGTH = 0.15


# Each exporter's settings, and the Blender version from which an option exists (probed in 4.2.23,
# 4.5.15, 5.0.1 and 5.2.3): the one place versions differ.
FBX_OPTIONS: dict[str, Any] = {
    "use_selection": True, "object_types": {"ARMATURE"}, "add_leaf_bones": False,
    "armature_nodetype": "NULL", "primary_bone_axis": "Y", "secondary_bone_axis": "X",
    "use_armature_deform_only": False, "bake_anim": True, "bake_anim_use_all_bones": True,
    "bake_anim_use_nla_strips": True, "bake_anim_use_all_actions": False,
    "bake_anim_force_startend_keying": True, "bake_anim_step": 1.0, "bake_anim_simplify_factor": 0.0,
    "apply_unit_scale": True, "bake_space_transform": False, "use_custom_props": False,
}
FBX_ENGINES: dict[str, dict[str, Any]] = {
    # Epic's Send to Unreal: Blender's own axes (Z up), scale in the object transforms.
    "UNREAL": {"axis_forward": "Y", "axis_up": "Z", "apply_scale_options": "FBX_SCALE_NONE"},
    # Unity's axes, and the unit in the file's scale so that Unity imports the rig at scale 1.
    "UNITY": {"axis_forward": "-Z", "axis_up": "Y", "apply_scale_options": "FBX_SCALE_ALL"},
}
GLTF_OPTIONS: dict[str, Any] = {
    "export_format": "GLB", "use_selection": True, "export_animations": True,
    "export_animation_mode": "ACTIONS", "export_anim_single_armature": False,
    "export_force_sampling": True, "export_optimize_animation_size": False,
    "export_optimize_animation_keep_anim_armature": True, "export_reset_pose_bones": True,
    "export_anim_slide_to_zero": True, "export_frame_range": False, "export_bake_animation": False,
    "export_def_bones": False, "export_leaf_bone": False, "export_extras": False, "export_yup": True,
    "export_apply": False, "export_skins": True, "export_current_frame": False,
}
SINCE: dict[str, tuple[int, int, int]] = {"export_merge_animation": (4, 5, 0)}
GLTF_SINCE: dict[str, Any] = {"export_merge_animation": "ACTION"}


def exporter_options(file_format: str, engine: str, version: tuple[int, ...]) -> dict[str, Any]:
    """The keyword arguments Export for Engine passes Blender's exporter for `file_format` (FBX, GLB)
    and `engine` (an FBX's axes and scale), in Blender `version`."""
    if file_format == "FBX":
        return {**FBX_OPTIONS, **FBX_ENGINES[engine]}
    options = dict(GLTF_OPTIONS)
    options.update({k: v for k, v in GLTF_SINCE.items() if version >= SINCE[k]})
    return options


def sidecar_path(path: str | Path) -> Path:
    """The events file beside an exported file: its extension replaced by `.events.json`."""
    target = Path(path)
    return target.with_name(target.stem + SIDECAR_SUFFIX)


def check_writable(target: Path, sidecar: Path, extension: str) -> None:
    if target.suffix.lower() != extension:
        raise JobError(f"{str(target)!r} does not end in {extension}: name the file with the format's "
                            "extension")
    folder = target.parent
    if not folder.is_dir():
        raise JobError(f"folder {str(folder)!r} does not exist: nothing written")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise JobError(f"folder {str(folder)!r} is not writable: nothing written; choose another folder")
    for path in (target, sidecar):
        if path.is_dir():
            raise JobError(f"{str(path)!r} is a folder: give a file name")
        if path.exists() and not os.access(path, os.W_OK):
            raise JobError(f"{str(path)!r} is read-only: nothing written")


def curve_name(prop: str, index: int, components: int) -> str:
    """A curve's name in the sidecar: the property without `stride_`; (sin, cos) pairs (event and
    phase curves) as `_sin`/`_cos`, other vectors as `_<index>`."""
    if components < 2:
        return prop
    if components == 2 and (prop == "phase" or prop.startswith("event_")):
        return f"{prop}_{('sin', 'cos')[index]}"
    return f"{prop}_{index}"


# -- GLB ----------------------------------------------------------------------------------------------

_GLB_MAGIC, _JSON, _BIN = b"glTF", 0x4E4F534A, 0x004E4942


def glb_json(data: bytes) -> dict[str, Any]:
    """The JSON chunk of a GLB file (glTF 2.0 binary), parsed."""
    return _glb_chunks(data)[0]


def _glb_chunks(data: bytes) -> tuple[dict[str, Any], bytes]:
    if len(data) < 20 or data[:4] != _GLB_MAGIC:
        raise ValueError("not a GLB file (no glTF header)")
    length, kind = struct.unpack_from("<II", data, 12)
    if kind != _JSON:
        raise ValueError("a GLB file's first chunk must be JSON")
    return json.loads(data[20:20 + length].decode("utf-8")), data[20 + length:]


def with_animation_extras(data: bytes, extras: dict[str, dict[str, Any]]) -> bytes:
    """A GLB whose animations named in `extras` hold those entries in their `extras` (merged with
    what is there); the binary chunk unchanged."""
    doc, rest = _glb_chunks(data)
    for animation in doc.get("animations", []):
        more = extras.get(animation.get("name", ""))
        if more:
            animation["extras"] = {**animation.get("extras", {}), **more}
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)  # chunks are 4-byte aligned; JSON pads with spaces
    total = 12 + 8 + len(text) + len(rest)
    return _GLB_MAGIC + struct.pack("<II", 2, total) + struct.pack("<II", len(text), _JSON) + text + rest
