"""Operators: read settings, call one job, report. Errors go to Blender's report, never a traceback."""

from __future__ import annotations

from typing import Any

import bpy
from bpy.props import StringProperty
from bpy_extras.io_utils import ExportHelper

from . import jobs


class STRIDE_OT_export_bvh(bpy.types.Operator, ExportHelper):  # type: ignore[misc]
    """Write the active armature's action to a BVH file (channel layout kept from the import)"""

    bl_idname = "stride.export_bvh"
    bl_label = "Export BVH (Stride)"
    bl_options = {"REGISTER"}

    filename_ext = ".bvh"
    filepath: StringProperty(subtype="FILE_PATH")  # type: ignore[valid-type]
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})  # type: ignore[valid-type]
    action: StringProperty(  # type: ignore[valid-type]
        name="Action", description="Action to export (empty: the armature's active action)")

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            obj = jobs.find_armature(context=context)
            clip = jobs.export_bvh(obj, self.action, self.filepath)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {clip.n_frames} frames of {clip.name!r} to {self.filepath}")
        return {"FINISHED"}


def _menu_export(self: Any, context: Any) -> None:
    self.layout.operator(STRIDE_OT_export_bvh.bl_idname, text="Motion Capture (.bvh) - Stride")


def register_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)  # type: ignore[arg-type]


def unregister_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)  # type: ignore[arg-type]


CLASSES = (STRIDE_OT_export_bvh,)
