"""Settings shown in the Stride sidebar, stored on the scene (`scene.stride`)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty, StringProperty

from .options import EventOptions, SyncOptions, TransitionOptions, prop

# Each setting is the operator's option of the same meaning (options.py): same default, same help.
E, S, T = EventOptions, SyncOptions, TransitionOptions


class StrideSettings(bpy.types.PropertyGroup):
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Foot Speed", min=0.0, max=5.0, unit="VELOCITY", **prop(E, "speed_mps"))
    window: FloatProperty(  # type: ignore[valid-type]
        name="Window", min=0.001, max=60.0, unit="TIME_ABSOLUTE", **prop(E, "window"))
    sigma: FloatProperty(  # type: ignore[valid-type]
        name="Smoothing", min=0.0, max=1.0, unit="TIME_ABSOLUTE", precision=4, **prop(E, "sigma"))
    tracks: StringProperty(  # type: ignore[valid-type]
        name="Tracks", **prop(E, "tracks"))
    source_action: StringProperty(  # type: ignore[valid-type]
        name="Source", **prop(T, "source_action"))
    source_time: FloatProperty(name="Source Time", min=0.0, unit="TIME_ABSOLUTE", **prop(T, "source_time"))  # type: ignore[valid-type]
    target_action: StringProperty(name="Target", **prop(T, "target_action"))  # type: ignore[valid-type]
    target_time: FloatProperty(name="Target Time", min=0.0, unit="TIME_ABSOLUTE", **prop(T, "target_time"))  # type: ignore[valid-type]
    blend_time: FloatProperty(  # type: ignore[valid-type]
        name="Blend Time", min=0.0, max=10.0, unit="TIME_ABSOLUTE", **prop(T, "blend_time"))
    method: EnumProperty(  # type: ignore[valid-type]
        name="Method", **prop(T, "method"),
        items=[("DEAD", "Dead Blending", ""), ("INERTIALIZE", "Inertialization", ""),
               ("CROSSFADE", "Crossfade", "")])
    mask: StringProperty(name="Mask", **prop(T, "mask"))  # type: ignore[valid-type]
    action_a: StringProperty(  # type: ignore[valid-type]
        name="A", **prop(S, "action_a"))
    action_b: StringProperty(name="B", **prop(S, "action_b"))  # type: ignore[valid-type]
    weight: FloatProperty(name="Weight", min=0.0, max=1.0, subtype="FACTOR", **prop(S, "weight"))  # type: ignore[valid-type]
    weight_mode: EnumProperty(  # type: ignore[valid-type]
        name="Weight From", **prop(S, "weight_mode"),
        items=[("CONSTANT", "Constant", ""), ("CURVE", "Curve (stride_blend_weight)", ""),
               ("SPEED", "Target Speed", "")])
    target_speed: FloatProperty(name="Speed", min=0.0, max=20.0, unit="VELOCITY", **prop(S, "speed_mps"))  # type: ignore[valid-type]
    duration: FloatProperty(name="Duration", min=0.01, max=600.0, **prop(S, "duration"))  # type: ignore[valid-type]
    duration_unit: EnumProperty(  # type: ignore[valid-type]
        name="Unit", **prop(S, "duration_unit"), items=[("SECONDS", "Seconds", ""), ("CYCLES", "Cycles", "")])
    sync_mode: EnumProperty(  # type: ignore[valid-type]
        name="Cycle Length", **prop(S, "mode"),
        items=[("LINEAR", "Linear", ""), ("HARMONIC", "Harmonic", ""), ("LEADER", "Leader", "")])
    in_place: BoolProperty(name="In Place", **prop(S, "in_place"))  # type: ignore[valid-type]
    # One Lock Feet for the transition and the sync blend bakes (the same declaration in both).
    lock_feet: BoolProperty(name="Lock Feet", **prop(S, "lock_feet"))  # type: ignore[valid-type]
    sync_mask: StringProperty(name="Mask", **prop(S, "mask"))  # type: ignore[valid-type]
    # One Allow Mismatch for every bake that combines actions (the Rig panel shows it).
    allow_mismatch: BoolProperty(name="Allow Mismatch", **prop(T, "allow_mismatch"))  # type: ignore[valid-type]


CLASSES = (StrideSettings,)


def register() -> None:
    bpy.types.Scene.stride = PointerProperty(type=StrideSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Scene.stride  # type: ignore[attr-defined]
