"""Blender properties made from the options fields: each operator's (`FromOptions`), and the settings
shown in the Stride sidebar, stored on the scene (`scene.stride`), made from the fields of the
commands the sidebar runs (`SIDEBAR`).

A field added to an options class is a property of its operator and a setting of the sidebar with
nothing written here; a new command the sidebar runs is one more class in `SIDEBAR`.
"""

from __future__ import annotations

import dataclasses
import inspect
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
    BlendSpaceOptions,
    DecodeOptions,
    EngineExportOptions,
    EventOptions,
    FollowPathOptions,
    FootstepOptions,
    LockFeetOptions,
    NlaBakeOptions,
    RootMotionOptions,
    SyncOptions,
    TransitionOptions,
    field_of,
    from_source,
    help_of,
)

# A field's unit -> Blender's, so the value shows with it (and converts with the scene's units).
UNITS: dict[str, Any] = {"s": "TIME_ABSOLUTE", "m/s": "VELOCITY"}


def field_property(cls: type, name: str, **extra: Any) -> Any:
    """The Blender property of options field `cls.name`, for an operator or the sidebar: its
    type from the default, with the field's label, default, help and unit (the description),
    Blender unit, bounds, choices and how Blender shows it (`ui`: precision, subtype, soft
    bounds). `extra` adds the sidebar's own settings (an update callback)."""
    f = field_of(cls, name)
    meta = f.metadata
    kwargs: dict[str, Any] = {"name": meta["label"], "default": f.default, "description": help_of(cls, name),
                              **meta["ui"]}
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


def option_properties(cls: type) -> dict[str, Any]:
    """{field name: its Blender property} for every field of options class `cls`, in their order."""
    return {f.name: field_property(cls, f.name) for f in dataclasses.fields(cls)}


class FromOptions:
    """An operator whose properties are the fields of its `options_class` (options.py), in their
    order, after the ones it declares itself (a file browser's)."""

    options_class: type | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        options = cls.__dict__.get("options_class")
        if options is not None:
            cls.__annotations__ = {**inspect.get_annotations(cls), **option_properties(options)}

    def read_options(self, **overrides: Any) -> Any:
        """The operator's options: its `options_class` filled from its properties."""
        assert self.options_class is not None
        return from_source(self.options_class, self, **overrides)


# The commands the sidebar runs: it holds every field of each, one setting per name (the first
# class's declaration; a later one of that name must be the same declaration).
SIDEBAR = (EventOptions, DecodeOptions, FootstepOptions, LockFeetOptions, TransitionOptions, NlaBakeOptions,
           SyncOptions, RootMotionOptions, EngineExportOptions, BlendSpaceOptions, FollowPathOptions)
# Sidebar settings named other than their field: one panel holds several commands, whose fields
# of one name mean different things (Blend Time of a transition, of an NLA bake, of a lock).
RENAMED: dict[type, dict[str, str]] = {
    SyncOptions: {"speed_mps": "target_speed", "mode": "sync_mode", "mask": "sync_mask"},
    NlaBakeOptions: {"blend_time": "nla_blend_time", "method": "nla_method"},
    LockFeetOptions: {"blend_time": "lock_blend_time"},
    RootMotionOptions: {"smooth": "root_smooth", "mode": "root_mode"},
    EngineExportOptions: {"smooth": "root_smooth", "mode": "root_mode", "actions": "engine_actions"},
    BlendSpaceOptions: {"speed": "space_speed", "duration": "space_duration"},
    FollowPathOptions: {"target": "path_target", "speed_mode": "path_speed_mode", "speed": "path_speed"},
}


def setting_name(cls: type, name: str) -> str:
    """The sidebar setting that holds options field `cls.name` (whether or not there is one); a
    subclass of an options class is named as it is."""
    for base in cls.__mro__:
        if base in RENAMED:
            return RENAMED[base].get(name, name)
    return name


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


# What a sidebar setting does when it changes, by setting name.
UPDATES = {"weight_mode": _weight_mode_changed}


def sidebar_properties() -> dict[str, Any]:
    """{setting name: its Blender property} of every field of the SIDEBAR commands. A name that two
    commands declare differently is an error here, until RENAMED gives one of them its own."""
    out: dict[str, Any] = {}
    first: dict[str, Any] = {}
    for cls in SIDEBAR:
        for f in dataclasses.fields(cls):
            name = setting_name(cls, f.name)
            if name in first:
                if (f.default, f.metadata) != (first[name].default, first[name].metadata):
                    raise TypeError(f"sidebar setting {name!r}: {cls.__name__}.{f.name} is declared "
                                    "otherwise than the field of that name before it: name it in RENAMED")
                continue
            first[name] = f
            extra = {"update": UPDATES[name]} if name in UPDATES else {}
            out[name] = field_property(cls, f.name, **extra)
    return out


class StrideSettings(bpy.types.PropertyGroup):
    """The sidebar's settings (`scene.stride`): every option of every command it runs."""

    __annotations__ = sidebar_properties()


CLASSES = (StrideSettings,)


def register() -> None:
    bpy.types.Scene.stride = PointerProperty(type=StrideSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Scene.stride  # type: ignore[attr-defined]
