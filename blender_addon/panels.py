"""The Stride tab in the 3D Viewport sidebar."""

from __future__ import annotations

from typing import Any

import bpy


class VIEW3D_PT_stride(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stride"
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


class VIEW3D_PT_stride_events(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stride"
    bl_label = "Events"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout = self.layout
        settings = getattr(context.scene, "stride", None)
        if layout is None or settings is None:
            return
        col = layout.column(align=True)
        col.prop(settings, "speed_mps")
        op: Any = col.operator("stride.detect_footsteps", icon="MARKER_HLT")
        op.speed_mps = settings.speed_mps
        col = layout.column(align=True)
        col.prop(settings, "window")
        col.prop(settings, "sigma")
        col.prop(settings, "tracks")
        op = col.operator("stride.write_event_curves", icon="GRAPH")
        op.window, op.sigma, op.tracks = settings.window, settings.sigma, settings.tracks
        op.speed_mps = settings.speed_mps
        op = col.operator("stride.detect_events_from_curves", icon="MARKER")
        op.window = settings.window
        op = layout.operator("stride.lock_feet", icon="PINNED")
        op.speed_mps = settings.speed_mps


class VIEW3D_PT_stride_transition(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stride"
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
        op = col.operator("stride.bake_transition", icon="IPO_EASE_IN_OUT")
        for name in ("source_action", "source_time", "target_action", "target_time", "blend_time",
                     "method", "mask", "lock_feet"):
            setattr(op, name, getattr(s, name))
        op = layout.operator("stride.bake_nla_track", icon="NLA")
        op.blend_time, op.method, op.lock_feet = s.blend_time, s.method, s.lock_feet


class VIEW3D_PT_stride_sync(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stride"
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
        op: Any = layout.operator("stride.bake_sync_blend", icon="MOD_TIME")
        op.action_a, op.action_b, op.weight, op.weight_mode = s.action_a, s.action_b, s.weight, s.weight_mode
        op.speed_mps, op.duration, op.mode, op.mask, op.in_place = (
            s.target_speed, s.duration, s.sync_mode, s.sync_mask, s.in_place)
        op.duration_unit = s.duration_unit
        op.lock_feet = s.lock_feet


CLASSES = (VIEW3D_PT_stride, VIEW3D_PT_stride_events, VIEW3D_PT_stride_sync, VIEW3D_PT_stride_transition)
