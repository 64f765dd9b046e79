"""Blender properties made from the options fields, and the settings shown in the Stride sidebar,
stored on the scene (`scene.stride`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    IntVectorProperty,
    PointerProperty,
    StringProperty,
)

from .options import (
    DecodeOptions,
    EngineExportOptions,
    EventOptions,
    FootstepOptions,
    LockFeetOptions,
    NlaBakeOptions,
    RootMotionOptions,
    SyncOptions,
    TransitionOptions,
    field_of,
    help_of,
)

# A field's unit -> Blender's, so the value shows with it (and converts with the scene's units).
UNITS: dict[str, Any] = {"s": "TIME_ABSOLUTE", "m/s": "VELOCITY"}


def field_property(cls: type, name: str, **extra: Any) -> Any:
    """The Blender property of options field `cls.name`, for an operator or the sidebar: its
    type from the default, with the field's label, default, help and unit (the description),
    Blender unit, bounds and choices. `extra` adds Blender-only settings (precision, subtype, a
    sidebar's own name or update callback)."""
    f = field_of(cls, name)
    meta = f.metadata
    kwargs: dict[str, Any] = {"name": meta["label"], "default": f.default, "description": help_of(cls, name)}
    if meta["choices"]:
        return EnumProperty(items=[tuple(c) for c in meta["choices"]], **{**kwargs, **extra})
    if isinstance(f.default, bool):
        return BoolProperty(**{**kwargs, **extra})
    if isinstance(f.default, tuple):
        return IntVectorProperty(size=len(f.default), **{**kwargs, **extra})
    bounds = dict(zip(("min", "max"), meta["bounds"], strict=True)) if meta["bounds"] else {}
    if isinstance(f.default, int):
        return IntProperty(**{**kwargs, **bounds, **extra})
    if isinstance(f.default, float):
        unit = UNITS.get(meta["unit"], "NONE")
        return FloatProperty(unit=unit, **{**kwargs, **bounds, **extra})
    return StringProperty(**{**kwargs, **extra})


# Sidebar settings named other than their field: one panel holds several commands, whose fields
# of one name mean different things (Blend Time of a transition, of an NLA bake, of a lock).
RENAMED: dict[type, dict[str, str]] = {
    SyncOptions: {"speed_mps": "target_speed", "mode": "sync_mode", "mask": "sync_mask"},
    NlaBakeOptions: {"blend_time": "nla_blend_time", "method": "nla_method"},
    LockFeetOptions: {"blend_time": "lock_blend_time"},
    RootMotionOptions: {"smooth": "root_smooth", "mode": "root_mode"},
    EngineExportOptions: {"smooth": "root_smooth", "mode": "root_mode", "actions": "engine_actions"},
}


def setting_name(cls: type, name: str) -> str:
    """The sidebar setting that holds options field `cls.name` (whether or not there is one)."""
    return RENAMED.get(cls, {}).get(name, name)


def settings_options(cls: type, settings: Any, **overrides: Any) -> Any:
    """`cls` filled from the sidebar settings that hold its fields; the others at their defaults."""
    values = {}
    for f in dataclasses.fields(cls):
        name = setting_name(cls, f.name)
        if name in settings.bl_rna.properties:
            value = getattr(settings, name)
            values[f.name] = tuple(value) if isinstance(f.default, tuple) else value
    return cls(**{**values, **overrides})


def _weight_mode_changed(settings: Any, context: Any) -> None:
    """Choosing a Curve weight keys stride_blend_weight (0 at the scene's start, 1 at its end) in
    action A when it has no such curve, so that the user edits a curve that exists."""
    from . import jobs

    if settings.weight_mode == "CURVE":
        jobs.ensure_weight_curve(context, settings_options(SyncOptions, settings))


# Each setting is the operator's option of the same meaning (options.py): same default, same help.
E, T, S = EventOptions, TransitionOptions, SyncOptions


class StrideSettings(bpy.types.PropertyGroup):
    # Events: Detect Footsteps, Write Event Curves, Events from Curves, Lock Feet.
    action: field_property(E, "action")  # type: ignore[valid-type]
    speed_mps: field_property(E, "speed_mps")  # type: ignore[valid-type]
    window: field_property(E, "window")  # type: ignore[valid-type]
    sigma: field_property(E, "sigma", precision=4)  # type: ignore[valid-type]
    tracks: field_property(E, "tracks")  # type: ignore[valid-type]
    prefix: field_property(DecodeOptions, "prefix")  # type: ignore[valid-type]
    span: field_property(DecodeOptions, "span")  # type: ignore[valid-type]
    tolerance: field_property(DecodeOptions, "tolerance", precision=3)  # type: ignore[valid-type]
    causal: field_property(DecodeOptions, "causal")  # type: ignore[valid-type]
    lifts: field_property(FootstepOptions, "lifts")  # type: ignore[valid-type]
    # One Read source for every command that reads an action (the Rig panel shows it).
    source: field_property(E, "source")  # type: ignore[valid-type]
    lock_blend_time: field_property(LockFeetOptions, "blend_time")  # type: ignore[valid-type]
    lower_pelvis: field_property(LockFeetOptions, "lower_pelvis")  # type: ignore[valid-type]
    # Transition.
    source_action: field_property(T, "source_action")  # type: ignore[valid-type]
    source_time: field_property(T, "source_time")  # type: ignore[valid-type]
    target_action: field_property(T, "target_action")  # type: ignore[valid-type]
    target_time: field_property(T, "target_time")  # type: ignore[valid-type]
    target_end: field_property(T, "target_end")  # type: ignore[valid-type]
    blend_time: field_property(T, "blend_time")  # type: ignore[valid-type]
    method: field_property(T, "method")  # type: ignore[valid-type]
    halflife_mode: field_property(T, "halflife_mode")  # type: ignore[valid-type]
    halflife: field_property(T, "halflife")  # type: ignore[valid-type]
    mask: field_property(T, "mask")  # type: ignore[valid-type]
    # NLA track.
    track: field_property(NlaBakeOptions, "track")  # type: ignore[valid-type]
    nla_blend_time: field_property(NlaBakeOptions, "blend_time")  # type: ignore[valid-type]
    nla_method: field_property(NlaBakeOptions, "method")  # type: ignore[valid-type]
    reanchor: field_property(NlaBakeOptions, "reanchor")  # type: ignore[valid-type]
    # Sync blend.
    action_a: field_property(S, "action_a")  # type: ignore[valid-type]
    action_b: field_property(S, "action_b")  # type: ignore[valid-type]
    weight: field_property(S, "weight", subtype="FACTOR")  # type: ignore[valid-type]
    weight_mode: field_property(S, "weight_mode", update=_weight_mode_changed)  # type: ignore[valid-type]
    target_speed: field_property(S, "speed_mps")  # type: ignore[valid-type]
    duration: field_property(S, "duration")  # type: ignore[valid-type]
    duration_unit: field_property(S, "duration_unit")  # type: ignore[valid-type]
    sync_mode: field_property(S, "mode")  # type: ignore[valid-type]
    frames_a: field_property(S, "frames_a")  # type: ignore[valid-type]
    frames_b: field_property(S, "frames_b")  # type: ignore[valid-type]
    cyclic: field_property(S, "cyclic")  # type: ignore[valid-type]
    in_place: field_property(S, "in_place")  # type: ignore[valid-type]
    sync_mask: field_property(S, "mask")  # type: ignore[valid-type]
    # One Lock Feet for the transition, NLA and sync blend bakes (the same declaration in each).
    lock_feet: field_property(S, "lock_feet")  # type: ignore[valid-type]
    # One Allow Mismatch for every bake that combines actions (the Rig panel shows it).
    allow_mismatch: field_property(T, "allow_mismatch")  # type: ignore[valid-type]
    # Engine: Add Root Motion and Export for Engine (one smoothing and one turn for both).
    root_smooth: field_property(RootMotionOptions, "smooth")  # type: ignore[valid-type]
    root_mode: field_property(RootMotionOptions, "mode")  # type: ignore[valid-type]
    engine_actions: field_property(EngineExportOptions, "actions")  # type: ignore[valid-type]
    file_format: field_property(EngineExportOptions, "file_format")  # type: ignore[valid-type]
    engine: field_property(EngineExportOptions, "engine")  # type: ignore[valid-type]
    root_motion: field_property(EngineExportOptions, "root_motion")  # type: ignore[valid-type]


CLASSES = (StrideSettings,)


def register() -> None:
    bpy.types.Scene.stride = PointerProperty(type=StrideSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Scene.stride  # type: ignore[attr-defined]
