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


CLASSES = (VIEW3D_PT_stride,)
