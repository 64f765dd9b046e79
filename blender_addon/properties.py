"""Settings shown in the Stride sidebar, stored on the scene (`scene.stride`)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty, StringProperty


class StrideSettings(bpy.types.PropertyGroup):
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Foot Speed", default=0.0, min=0.0, max=5.0, unit="VELOCITY",
        description=("Foot speed in m/s under which a foot is planted; 0 = Auto (from the body "
                     "and the take: a slow shuffle, a walk, a run)"))
    window: FloatProperty(  # type: ignore[valid-type]
        name="Window", default=0.5, min=0.001, max=60.0, unit="TIME_ABSOLUTE",
        description="Event encoding: seconds before/after an event over which the curve turns")
    sigma: FloatProperty(  # type: ignore[valid-type]
        name="Smoothing", default=1 / 120, min=0.0, max=1.0, unit="TIME_ABSOLUTE", precision=4,
        description="Event encoding: Gaussian smoothing (seconds; 0 for none)")
    tracks: StringProperty(  # type: ignore[valid-type]
        name="Tracks", default="ALL",
        description="Event tracks (marker names) to encode: ALL, or names separated by commas")


    source_action: StringProperty(  # type: ignore[valid-type]
        name="Source",
        description="Action to leave (empty: the active one, or the action a Stride bake was baked from)")
    source_time: FloatProperty(name="Source Time", default=1.0, min=0.0, unit="TIME_ABSOLUTE")  # type: ignore[valid-type]
    target_action: StringProperty(name="Target", description="Action to go into")  # type: ignore[valid-type]
    target_time: FloatProperty(name="Target Time", default=0.0, min=0.0, unit="TIME_ABSOLUTE")  # type: ignore[valid-type]
    blend_time: FloatProperty(name="Blend Time", default=0.25, min=0.0, max=10.0, unit="TIME_ABSOLUTE")  # type: ignore[valid-type]
    method: EnumProperty(  # type: ignore[valid-type]
        name="Method", default="DEAD",
        items=[("DEAD", "Dead Blending", ""), ("INERTIALIZE", "Inertialization", ""),
               ("CROSSFADE", "Crossfade", "")])
    mask: StringProperty(name="Mask", description="LOWER_BODY, UPPER_BODY, FINGERS or joint names")  # type: ignore[valid-type]
    action_a: StringProperty(  # type: ignore[valid-type]
        name="A",
        description="First cycle (empty: the active action, or the action a Stride bake was baked from)")
    action_b: StringProperty(name="B", description="Second cycle")  # type: ignore[valid-type]
    weight: FloatProperty(name="Weight", default=0.5, min=0.0, max=1.0, subtype="FACTOR")  # type: ignore[valid-type]
    weight_mode: EnumProperty(  # type: ignore[valid-type]
        name="Weight From", default="CONSTANT",
        items=[("CONSTANT", "Constant", ""), ("CURVE", "Curve (stride_blend_weight)", ""),
               ("SPEED", "Target Speed", "")])
    target_speed: FloatProperty(name="Speed", default=1.5, min=0.0, max=20.0, unit="VELOCITY")  # type: ignore[valid-type]
    duration: FloatProperty(name="Duration", default=4.0, min=0.01, max=600.0)  # type: ignore[valid-type]
    duration_unit: EnumProperty(  # type: ignore[valid-type]
        name="Unit", default="SECONDS", items=[("SECONDS", "Seconds", ""), ("CYCLES", "Cycles", "")])
    sync_mode: EnumProperty(  # type: ignore[valid-type]
        name="Cycle Length", default="LINEAR",
        items=[("LINEAR", "Linear", ""), ("HARMONIC", "Harmonic", ""), ("LEADER", "Leader", "")])
    in_place: BoolProperty(name="In Place", default=False)  # type: ignore[valid-type]
    lock_feet: BoolProperty(  # type: ignore[valid-type]
        name="Lock Feet", default=True,
        description="Hold each foot where it is planted in the sources through the blend (leg IK)")
    sync_mask: StringProperty(name="Mask", description="LOWER_BODY, UPPER_BODY, FINGERS or joint names")  # type: ignore[valid-type]


CLASSES = (StrideSettings,)


def register() -> None:
    bpy.types.Scene.stride = PointerProperty(type=StrideSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Scene.stride  # type: ignore[attr-defined]
