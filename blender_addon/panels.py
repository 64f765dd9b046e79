"""The Stride tab in the 3D Viewport sidebar."""

from __future__ import annotations

import dataclasses
from typing import Any

import bpy

from .options import (
    DecodeOptions,
    EventOptions,
    FootstepOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
)


def fill_operator(op: Any, settings: Any, cls: type, renamed: dict[str, str] | None = None,
                  keep: tuple[str, ...] = ()) -> None:
    """An operator button's options from the sidebar settings that hold them (same name unless
    `renamed`: field -> setting); the others, and the fields in `keep`, keep their defaults."""
    renamed = renamed or {}
    for f in dataclasses.fields(cls):
        if f.name in keep:
            continue
        name = renamed.get(f.name, f.name)
        if name in settings.bl_rna.properties:
            setattr(op, f.name, getattr(settings, name))


class _StridePanel(bpy.types.Panel):
    """Where every Stride panel lives: the Stride tab of the 3D Viewport's sidebar."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stride"


class VIEW3D_PT_stride(_StridePanel):
    bl_label = "Stride"

    def draw(self, context: Any) -> None:
        layout = self.layout
        if layout is None:
            return
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select an armature", icon="INFO")
        else:
            adt = obj.animation_data
            action = adt.action if adt is not None else None
            layout.label(text=obj.name, icon="ARMATURE_DATA")
            layout.label(text=action.name if action else "No action", icon="ACTION")
        row = layout.row(align=True)
        row.operator("stride.import_bvh", text="Import BVH", icon="IMPORT")
        row.operator("stride.export_bvh", text="Export BVH", icon="EXPORT")


class VIEW3D_PT_stride_events(_StridePanel):
    bl_label = "Events"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout = self.layout
        settings = getattr(context.scene, "stride", None)
        if layout is None or settings is None:
            return
        col = layout.column(align=True)
        col.prop(settings, "speed_mps")
        fill_operator(col.operator("stride.detect_footsteps", icon="MARKER_HLT"), settings, FootstepOptions)
        col = layout.column(align=True)
        col.prop(settings, "window")
        col.prop(settings, "sigma")
        col.prop(settings, "tracks")
        fill_operator(col.operator("stride.write_event_curves", icon="GRAPH"), settings, EventOptions)
        decode = col.operator("stride.detect_events_from_curves", icon="MARKER")
        fill_operator(decode, settings, DecodeOptions)
        # The sidebar's Blend Time is the transition's; a lock eases out over its own.
        fill_operator(layout.operator("stride.lock_feet", icon="PINNED"), settings, LockFeetOptions,
                      keep=("blend_time",))


class VIEW3D_PT_stride_transition(_StridePanel):
    bl_label = "Transition"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout = self.layout
        s = getattr(context.scene, "stride", None)
        if layout is None or s is None:
            return
        col = layout.column(align=True)
        col.prop_search(s, "source_action", bpy.data, "actions")
        row = col.row(align=True)
        row.prop(s, "source_time")
        op: Any = row.operator("stride.pick_time", text="", icon="TIME")
        op.which = "SOURCE"
        col.prop_search(s, "target_action", bpy.data, "actions")
        row = col.row(align=True)
        row.prop(s, "target_time")
        op = row.operator("stride.pick_time", text="", icon="TIME")
        op.which = "TARGET"
        row.operator("stride.find_target_time", text="", icon="VIEWZOOM")
        col = layout.column(align=True)
        col.prop(s, "blend_time")
        col.prop(s, "method")
        col.prop(s, "mask")
        col.prop(s, "lock_feet")
        fill_operator(col.operator("stride.bake_transition", icon="IPO_EASE_IN_OUT"), s, TransitionOptions)
        fill_operator(layout.operator("stride.bake_nla_track", icon="NLA"), s, NlaBakeOptions)


class VIEW3D_PT_stride_sync(_StridePanel):
    bl_label = "Sync Blend"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout = self.layout
        s = getattr(context.scene, "stride", None)
        if layout is None or s is None:
            return
        col = layout.column(align=True)
        col.prop_search(s, "action_a", bpy.data, "actions")
        col.prop_search(s, "action_b", bpy.data, "actions")
        col = layout.column(align=True)
        col.prop(s, "weight_mode")
        if s.weight_mode == "CONSTANT":
            col.prop(s, "weight")
        elif s.weight_mode == "SPEED":
            col.prop(s, "target_speed")
        else:
            obj = context.active_object
            if obj is not None and "stride_blend_weight" in obj.keys():
                col.prop(obj, '["stride_blend_weight"]', text="Weight (key it)")
            else:
                col.label(text="Bake once to add stride_blend_weight", icon="INFO")
        row = col.row(align=True)
        row.prop(s, "duration")
        row.prop(s, "duration_unit", text="")
        col.prop(s, "sync_mode")
        col.prop(s, "sync_mask")
        col.prop(s, "in_place")
        col.prop(s, "lock_feet")
        fill_operator(layout.operator("stride.bake_sync_blend", icon="MOD_TIME"), s, SyncOptions,
                      {"speed_mps": "target_speed", "mode": "sync_mode", "mask": "sync_mask"})


CLASSES = (VIEW3D_PT_stride, VIEW3D_PT_stride_events, VIEW3D_PT_stride_sync, VIEW3D_PT_stride_transition)
