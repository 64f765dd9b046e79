"""Your own rig: the feet Stride stands on and its unit, kept on the armature object (`obj.stride`),
presets for common rigs, and the Rig sub-panel that shows the active armature's body map. The
armature's gaits (`obj.stride.gaits`) and its animatable Speed (`obj.stride.speed`), which Bake
Blend Space reads, live in `obj.stride` too.

The Left Foot / Right Foot fields hold bone names (the ankles). Stride fills them with what the
body map finds on the armature's action and says from what (names or motion); a foot the user
chose (typed, searched or from a preset) is the user's, and every read of the armature's actions
stands on it (`bridge.with_feet`, through `bridge.read_action`: every operator and CLI
subcommand).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from typing import Any

import bpy
import numpy as np
from bpy.props import (
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import bridge, compat, jobs
from .core import armature
from .options import SPEED_MAX, FindFeetOptions
from .panels import StridePanel
from .properties import FromOptions

# Preset -> (label, left ankle, right ankle), as each rig names its deforming foot bones.
PRESETS = {
    "MIXAMO": ("Mixamo", "mixamorig:LeftFoot", "mixamorig:RightFoot"),
    "RIGIFY_DEF": ("Rigify (DEF- bones)", "DEF-foot.L", "DEF-foot.R"),
    "RIGIFY_ORG": ("Rigify (ORG- bones)", "ORG-foot.L", "ORG-foot.R"),
    "UNREAL": ("Unreal mannequin", "foot_l", "foot_r"),
    "CMU": ("CMU", "LeftFoot", "RightFoot"),
    "BANDAI": ("Bandai Namco", "Foot_L", "Foot_R"),
    "AUTO_RIG_PRO": ("Auto-Rig Pro", "foot.l", "foot.r"),
}


def preset_feet(bones: Collection[str], preset: str) -> tuple[str, str]:
    """The preset's two ankles as this armature names them: exactly, else after another namespace
    (Mixamo's second character is `mixamorig1:LeftFoot`). KeyError names the first one missing."""
    _, *names = PRESETS[preset]
    found = []
    for name in names:
        if name in bones:
            found.append(name)
            continue
        tail = name.split(":")[-1]
        others = sorted(b for b in bones if ":" in b and b.split(":")[-1] == tail) if ":" in name else []
        if not others:
            raise KeyError(name)
        found.append(others[0])
    return found[0], found[1]


def _is_armature(_gait: Any, obj: Any) -> bool:
    return bool(obj.type == "ARMATURE")


class StrideGait(bpy.types.PropertyGroup):
    """A gait of the armature's blend space (Bake Blend Space): an action of a walk, a run, ...
    and the armature it is read on."""

    action: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Action, name="Action",
        description="The gait's action: a take or a loop of one gait (a walk, a jog, a run, ...)")
    armature: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Object, name="Armature", poll=_is_armature,
        description="The armature the action was made for, which reads it (empty: this armature)")


# Blender's own bound for a speed field a user drags: far above a sprint.
SPEED_SOFT_MAX = 12.0


class StrideRigSettings(bpy.types.PropertyGroup):
    """Stride's settings on an armature object: the feet every operator stands on, the unit, the
    gaits of its blend space and the Speed it is baked at."""

    left_foot: StringProperty(  # type: ignore[valid-type]
        name="Left Foot",
        description="The left ankle bone every Stride operator and the CLI stand on (filled with what "
                    "the body map finds; choose another to override it)")
    right_foot: StringProperty(  # type: ignore[valid-type]
        name="Right Foot",
        description="The right ankle bone every Stride operator and the CLI stand on (filled with what "
                    "the body map finds; choose another to override it)")
    meters_per_unit: FloatProperty(  # type: ignore[valid-type]
        name="Unit", default=0.0, min=0.0, soft_max=1.0, precision=5, step=1,
        description="Meters per unit of the armature's actions as Stride reads them (a BVH import's file "
                    "units, else the scene's): 0 = Auto, from the body's standing height (a guess where "
                    "part of the body is missing)")
    # What the body map found when it last filled the fields, and from what: while the fields still
    # hold these, the feet are the body map's (its evidence stands); once changed, the user's.
    found_left: StringProperty(options={"HIDDEN"})  # type: ignore[valid-type]
    found_right: StringProperty(options={"HIDDEN"})  # type: ignore[valid-type]
    found_from: StringProperty(options={"HIDDEN"})  # type: ignore[valid-type]
    gaits: CollectionProperty(  # type: ignore[valid-type]
        type=StrideGait, name="Gaits",
        description="The gaits Bake Blend Space blends by speed (a walk, a run, ...), listed slowest first")
    gait_index: IntProperty(  # type: ignore[valid-type]
        name="Active Gait", default=0, min=0, description="The gait chosen in the Gaits list")
    speed: FloatProperty(  # type: ignore[valid-type]
        name="Speed", default=1.5, min=0.0, max=SPEED_MAX, soft_max=SPEED_SOFT_MAX, unit="VELOCITY",
        description="The speed the character travels at, which Bake Blend Space reads with a Curve speed: "
                    "key it over time (hover it and press I); the Graph Editor shows its curve")


def evidence(obj: Any) -> str:
    """What the armature's feet come from: 'names' or 'motion' (the body map's, as found), 'user'
    (chosen), or '' while none are set."""
    s = obj.stride
    if not (s.left_foot or s.right_foot):
        return ""
    if (s.left_foot, s.right_foot) == (s.found_left, s.found_right) and s.found_from:
        return s.found_from
    return "user"


def _armature(context: Any) -> Any:
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        raise bridge.BridgeError("select an armature first")
    return obj


def _has_armature(cls: Any, context: Any) -> bool:
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        cls.poll_message_set("Select an armature")
        return False
    return True


class STRIDE_OT_feet_preset(bpy.types.Operator):
    """Set Left Foot and Right Foot to the ankle bones of a common rig"""

    bl_idname = "stride.feet_preset"
    bl_label = "Feet Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(  # type: ignore[valid-type]
        name="Rig", description="The rig whose ankle bones to use",
        items=[(key, label, f"{left}, {right}") for key, (label, left, right) in PRESETS.items()])

    @classmethod
    def poll(cls, context: Any) -> bool:
        return _has_armature(cls, context)

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            obj = _armature(context)
            left, right = preset_feet(obj.data.bones.keys(), self.preset)
        except bridge.BridgeError as exc:
            self.report({"ERROR"}, jobs.in_user_words(str(exc)))
            return {"CANCELLED"}
        except KeyError as exc:
            label = PRESETS[self.preset][0]
            said = (f"{obj.name!r} has no bone {exc.args[0]!r}: not a {label} rig; choose the feet by name "
                    "in the Rig panel")
            self.report({"ERROR"}, jobs.in_user_words(said))
            return {"CANCELLED"}
        obj.stride.left_foot, obj.stride.right_foot = left, right
        self.report({"INFO"}, jobs.in_user_words(f"Feet {left}, {right} ({PRESETS[self.preset][0]})"))
        return {"FINISHED"}


class STRIDE_OT_find_feet(FromOptions, bpy.types.Operator):
    """Fill Left Foot and Right Foot with the ankles the body map finds on the active action (from
    bone names, else the motion), replacing a choice of yours"""

    bl_idname = "stride.find_feet"
    bl_label = "Find Feet"
    bl_options = {"REGISTER", "UNDO"}

    options_class = FindFeetOptions

    @classmethod
    def poll(cls, context: Any) -> bool:
        if not _has_armature(cls, context):
            return False
        adt = context.active_object.animation_data
        if adt is None or adt.action is None:
            cls.poll_message_set("The armature has no action to read its feet from")
            return False
        return True

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            obj = _armature(context)
            s = obj.stride
            s.left_foot = s.right_foot = ""
            # On a control rig the deform bones' keys stand still: the body map is found on what
            # the rig plays (AUTO), as every bake reads it.
            clip = bridge.source_clip(obj, source=self.read_options().source)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                b = clip.body
            if not b.feet:
                raise bridge.BridgeError(f"no legs found in {clip.name!r}: {b.problem}")
            bridge.remember_feet(obj, clip)
        except bridge.BridgeError as exc:
            self.report({"ERROR"}, jobs.in_user_words(str(exc)))
            return {"CANCELLED"}
        self.report({"INFO"}, jobs.in_user_words(f"Feet {s.left_foot}, {s.right_foot} (from {s.found_from})"))
        return {"FINISHED"}


# The body map drawn in the panel, by what it was read from: reading an action and finding its body
# takes tens of milliseconds, too long for every redraw.
_SHOWN: dict[tuple, list[tuple[str, str]]] = {}


def _axis(v: np.ndarray) -> str:
    k = int(np.argmax(np.abs(v)))
    if abs(v[k]) > 0.999:
        return ("+" if v[k] > 0 else "-") + "XYZ"[k]
    return "(" + ", ".join(f"{x:+.2f}" for x in v) + ")"


def body_lines(obj: Any) -> list[tuple[str, str]]:
    """(text, icon) lines of the armature's body map on its active action: legs, feet and what they
    come from, unit, up (in the scene's axes), the action's rate and the scene's, doubts."""
    adt = obj.animation_data
    action = adt.action if adt is not None else None
    if action is None:
        return [("No action to read", "INFO")]
    s = obj.stride
    slot = compat.action_slot(action, obj)
    curves = compat.fcurves(action, slot)
    key = (obj.name, action.name, len(curves), tuple(action.frame_range), s.left_foot, s.right_foot,
           s.meters_per_unit, bridge.scene_fps(), bridge.world_matrix(obj).round(6).tobytes(),
           sum(len(fc.keyframe_points) for fc in curves))
    if key not in _SHOWN:
        if len(_SHOWN) > 16:
            _SHOWN.clear()
        # In the UI's words: a body map's problem and doubts are the core's, written for Python.
        _SHOWN[key] = [(jobs.in_user_words(text), icon) for text, icon in _read_lines(obj, action)]
    return _SHOWN[key]


def _read_lines(obj: Any, action: Any) -> list[tuple[str, str]]:
    # A panel cannot step frames, so the map reads keys: on a rig whose bones constraints move,
    # it says what it misses and what reads what the rig plays.
    used, why = bridge.read_source(obj, action)
    played = ([(f"Read from keys, but {why}: Find Feet reads what the rig plays", "INFO")]
              if used == "EVALUATED" else [])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clip = bridge.with_feet(obj, bridge.with_unit(obj, bridge.action_to_clip(obj, action)))
            b = clip.body
            rate = bridge.rate_note(obj, action, clip)
    except (ValueError, OSError) as exc:
        return [(str(exc), "ERROR"), *played]
    lines: list[tuple[str, str]] = []
    if b.legs:
        for side in ("L", "R"):
            lines.append((f"Leg {side}: {' > '.join(b.joint_names(b.legs[side]))}", "BONE_DATA"))
        lines.append((f"Feet: {clip.names[b.feet['L'][0]]}, {clip.names[b.feet['R'][0]]} "
                      f"(from {b.evidence.get('legs')})", "NONE"))
    else:
        lines.append((f"No legs found: {b.problem}", "ERROR"))
    lines += played
    settings = bridge.import_settings(obj, action=action)
    up = armature.axis_conversion(settings["axis_forward"], settings["axis_up"]) @ b.up
    guessed = b.evidence.get("unit") == "guess"
    lines.append((f"Unit: {b.meters_per_unit:g} m ({b.evidence.get('unit')}), height "
                  f"{b.height * b.meters_per_unit:.2f} m", "ERROR" if guessed else "NONE"))
    lines.append((f"Up: {_axis(up)} in the scene ({b.evidence.get('up')})", "NONE"))
    scene = bridge.scene_fps()
    lines.append((f"Rate: {clip.fps:g} fps, scene {scene:g} fps", "ERROR" if rate else "NONE"))
    if rate:
        lines.append((rate, "ERROR"))
    lines += [(w, "ERROR") for w in b.warnings]
    return lines


class VIEW3D_PT_stride_rig(StridePanel, bpy.types.Panel):
    """The active armature's feet and body map."""

    bl_label = "Rig"
    bl_parent_id = "VIEW3D_PT_stride"

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE"

    def draw(self, context: Any) -> None:
        layout = self.layout
        obj = context.active_object
        if layout is None or obj is None or obj.type != "ARMATURE":
            return
        feet = obj.stride
        col = layout.column(align=True)
        col.prop_search(feet, "left_foot", obj.data, "bones", text="Left Foot")
        col.prop_search(feet, "right_foot", obj.data, "bones", text="Right Foot")
        layout.prop(feet, "meters_per_unit")
        row = layout.row(align=True)
        row.operator_menu_enum("stride.feet_preset", "preset", text="Preset", icon="PRESET")
        row.operator("stride.find_feet", icon="VIEWZOOM")
        found = evidence(obj)
        if found:
            layout.label(text=f"Feet from: {found}", icon="INFO")
        box = layout.box()
        box.label(text="Body Map", icon="ARMATURE_DATA")
        for text, icon in body_lines(obj):
            box.label(text=text, icon=icon)  # type: ignore[arg-type]
        s = getattr(context.scene, "stride", None)
        if s is not None:
            layout.prop(s, "allow_mismatch")


CLASSES = (StrideGait, StrideRigSettings, STRIDE_OT_feet_preset, STRIDE_OT_find_feet, VIEW3D_PT_stride_rig)


def register() -> None:
    bpy.types.Object.stride = PointerProperty(type=StrideRigSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Object.stride  # type: ignore[attr-defined]
