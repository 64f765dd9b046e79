"""The Stride tab in the 3D Viewport sidebar: every command's options, grouped in sub-panels.

Panels only lay out settings and buttons; what they show comes from small functions (`status`,
`footstep_lines`, `sync_lines`, `gait_lines`) fed by the jobs' kept previews, so a redraw costs no
maths.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from typing import Any

import bpy

from . import bridge, jobs
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
)
from .properties import setting_name, settings_options
from .recipes.blendspace import gait_order


def fill_operator(op: Any, settings: Any, cls: type) -> None:
    """An operator button's options from the sidebar settings that hold them
    (`properties.setting_name`); the others keep their defaults."""
    for f in dataclasses.fields(cls):
        name = setting_name(cls, f.name)
        if name in settings.bl_rna.properties:
            setattr(op, f.name, getattr(settings, name))


def status(context: Any) -> list[tuple[str, Any]]:
    """(text, icon) lines at the top of the sidebar: the armature and action Stride works on, or
    what is missing."""
    reason = jobs.unmet(context, jobs.ARMATURE)
    if reason:
        return [(line, "INFO") for line in wrap(reason)]
    obj = jobs.find_armature(context=context)
    reason = jobs.unmet(context, jobs.ACTION)
    if reason:
        return [(obj.name, "ARMATURE_DATA")] + [(line, "INFO") for line in wrap(reason)]
    return [(obj.name, "ARMATURE_DATA"), (obj.animation_data.action.name, "ACTION")]


def footstep_lines(preview: jobs.FootstepPreview) -> list[str]:
    """What Detect Footsteps will find, as the Events panel shows it."""
    if preview.problem:
        return wrap(jobs.in_user_words(preview.problem))
    cadence = f", {preview.cadence:.0f} steps/min" if math.isfinite(preview.cadence) else ""
    return [f"{sum(preview.steps.values())} steps ({_per_foot(preview.steps)}){cadence}"]


def _per_foot(steps: dict[str, int]) -> str:
    """'L 2, R 3' from {'FootDown_L': 2, 'FootDown_R': 3}."""
    return ", ".join(f"{track.removeprefix('FootDown_')} {n}" for track, n in sorted(steps.items())) or "none"


def sync_lines(preview: jobs.SyncPreview, fps: float) -> list[str]:
    """What Bake Sync Blend will bake, as the Sync Blend panel shows it (`fps`: the scene's, for
    lengths in frames)."""
    lines = []
    for side, cycle in (("A", preview.a), ("B", preview.b)):
        if cycle is not None:
            lines.append(f"{side}: cycle {cycle.seconds:.3f} s ({cycle.seconds * fps:.1f} fr), "
                         f"steps {_per_foot(cycle.steps)}")
    if math.isfinite(preview.cycle_seconds):
        lines.append(f"Weight {preview.weight:.3f}: cycle {preview.cycle_seconds:.3f} s "
                     f"({preview.cycle_seconds * fps:.1f} fr), {preview.speed_mps:.2f} m/s")
    if all(math.isfinite(v) for v in preview.speed_range):
        lines.append(f"Speeds {preview.speed_range[0]:.2f} - {preview.speed_range[1]:.2f} m/s")
    return lines + (wrap(jobs.in_user_words(preview.problem)) if preview.problem else [])


def wrap(text: str, width: int = 42) -> list[str]:
    """A long message as sidebar lines (a label does not wrap)."""
    return textwrap.wrap(text, width) or [""]


def _labels(layout: Any, lines: list[str], icon: Any = "NONE") -> None:
    """Lines of text, the first with `icon` and the others indented under it."""
    col = layout.column(align=True)
    for k, line in enumerate(lines):
        col.label(text=line, icon=icon if k == 0 or icon == "NONE" else "BLANK1")


def _button(layout: Any, context: Any, idname: str, cls: type, need: str, icon: str) -> Any:
    """The operator button, its options from the sidebar; with what is missing above it."""
    reason = jobs.unmet(context, need)
    if reason:
        _labels(layout, wrap(reason), "INFO")
    op = layout.operator(idname, icon=icon)
    fill_operator(op, context.scene.stride, cls)
    return op


class StridePanel:
    """Where every Stride panel lives: the Stride tab of the 3D Viewport's sidebar. `needs`: what
    its commands need (`jobs.unmet`); the panel hides while it is missing, and the Stride panel
    says what is."""

    bl_space_type: Any = "VIEW_3D"  # Any: fake-bpy-module types them as Literals of every space
    bl_region_type: Any = "UI"
    bl_category = "Stride"
    needs = jobs.ACTION

    @classmethod
    def poll(cls, context: Any) -> bool:
        return getattr(context.scene, "stride", None) is not None and not jobs.unmet(context, cls.needs)


class VIEW3D_PT_stride(StridePanel, bpy.types.Panel):
    bl_label = "Stride"

    @classmethod
    def poll(cls, context: Any) -> bool:
        return True  # Import is always there; the panel says what the others need

    def draw(self, context: Any) -> None:
        layout = self.layout
        if layout is None:
            return
        col = layout.column(align=True)
        for text, icon in status(context):
            col.label(text=text, icon=icon)
        row = layout.row(align=True)
        row.operator("stride.import_bvh", text="Import BVH", icon="IMPORT")
        row.operator("stride.export_bvh", text="Export BVH", icon="EXPORT")


class VIEW3D_PT_stride_events(StridePanel, bpy.types.Panel):
    bl_label = "Events"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop_search(s, "action", bpy.data, "actions")
        col.prop(s, "speed_mps")
        col.prop(s, "lifts")
        col.prop(s, "source")
        preview = jobs.preview_footsteps(jobs.find_armature(context=context),
                                         options=settings_options(FootstepOptions, s))
        box = layout.box()
        row = box.row()
        row.label(text=f"{preview.action}:")
        row.operator("stride.refresh_previews", text="", icon="FILE_REFRESH", emboss=False)
        _labels(box, footstep_lines(preview))
        _button(layout, context, "stride.detect_footsteps", FootstepOptions, jobs.ACTION, "MARKER_HLT")


class VIEW3D_PT_stride_event_curves(StridePanel, bpy.types.Panel):
    bl_label = "Event Curves"
    bl_parent_id = "VIEW3D_PT_stride_events"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "window")
        col.prop(s, "sigma")
        col.prop(s, "tracks")
        _button(layout, context, "stride.write_event_curves", EventOptions, jobs.ACTION, "GRAPH")
        col = layout.column(align=True)
        col.prop(s, "prefix")
        col.prop(s, "span")
        col.prop(s, "tolerance")
        col.prop(s, "causal")
        _button(layout, context, "stride.detect_events_from_curves", DecodeOptions, jobs.ACTION, "MARKER")


class VIEW3D_PT_stride_lock_feet(StridePanel, bpy.types.Panel):
    bl_label = "Lock Feet"
    bl_parent_id = "VIEW3D_PT_stride_events"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "lock_blend_time")
        col.prop(s, "lower_pelvis")
        _button(layout, context, "stride.lock_feet", LockFeetOptions, jobs.ACTION, "PINNED")


class VIEW3D_PT_stride_transition(StridePanel, bpy.types.Panel):
    bl_label = "Transition"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop_search(s, "source_action", bpy.data, "actions")
        _time_row(col, s, "source_time", "SOURCE")
        col.prop_search(s, "target_action", bpy.data, "actions")
        row = _time_row(col, s, "target_time", "TARGET")
        row.operator("stride.find_target_time", text="", icon="VIEWZOOM")
        _time_row(col, s, "target_end", "END")
        col = layout.column(align=True)
        col.prop(s, "blend_time")
        col.prop(s, "method")
        col.prop(s, "lock_feet")
        _button(layout, context, "stride.bake_transition", TransitionOptions, jobs.ACTION, "IPO_EASE_IN_OUT")


def _time_row(layout: Any, settings: Any, name: str, which: str) -> Any:
    row = layout.row(align=True)
    row.prop(settings, name)
    op = row.operator("stride.pick_time", text="", icon="TIME")
    op.which = which
    return row


class VIEW3D_PT_stride_halflife(StridePanel, bpy.types.Panel):
    bl_label = "Half-life"
    bl_parent_id = "VIEW3D_PT_stride_transition"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        layout.active = s.method == "DEAD"  # only dead blending extrapolates with half-lives
        layout.prop(s, "halflife_mode")
        row = layout.row()
        row.active = s.halflife_mode == "FIXED"
        row.prop(s, "halflife")


class VIEW3D_PT_stride_transition_mask(StridePanel, bpy.types.Panel):
    bl_label = "Mask"
    bl_parent_id = "VIEW3D_PT_stride_transition"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is not None:
            layout.prop(s, "mask")


class VIEW3D_PT_stride_nla(StridePanel, bpy.types.Panel):
    bl_label = "NLA Track"
    bl_parent_id = "VIEW3D_PT_stride"
    bl_options = {"DEFAULT_CLOSED"}
    needs = jobs.ARMATURE

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "track")  # names separated by commas: prop_search takes one
        col.prop(s, "nla_blend_time")
        col.prop(s, "nla_method")
        col.prop(s, "lock_feet")
        col.prop(s, "reanchor")
        _button(layout, context, "stride.bake_nla_track", NlaBakeOptions, jobs.NLA_TRACK, "NLA")


class VIEW3D_PT_stride_sync(StridePanel, bpy.types.Panel):
    bl_label = "Sync Blend"
    bl_parent_id = "VIEW3D_PT_stride"

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        obj = jobs.find_armature(context=context)
        col = layout.column(align=True)
        col.prop_search(s, "action_a", bpy.data, "actions")
        col.prop_search(s, "action_b", bpy.data, "actions")
        col = layout.column(align=True)
        col.prop(s, "weight_mode")
        if s.weight_mode == "CONSTANT":
            col.prop(s, "weight")
        elif s.weight_mode == "SPEED":
            col.prop(s, "target_speed")
        elif jobs.WEIGHT_PROPERTY in obj.keys():
            col.prop(obj, f'["{jobs.WEIGHT_PROPERTY}"]', text="Weight (keyed in A)")
        else:
            col.label(text=f"Choose Curve again to key {jobs.WEIGHT_PROPERTY}", icon="INFO")
        row = col.row(align=True)
        row.prop(s, "duration")
        row.prop(s, "duration_unit", text="")
        col.prop(s, "sync_mode")
        if not jobs.unmet(context, jobs.TWO_ACTIONS):
            preview = jobs.preview_sync(obj, options=settings_options(SyncOptions, s))
            box = layout.box()
            row = box.row()
            row.label(text="Before baking")
            row.operator("stride.refresh_previews", text="", icon="FILE_REFRESH", emboss=False)
            _labels(box, sync_lines(preview, bridge.scene_fps(context.scene)))
        _button(layout, context, "stride.bake_sync_blend", SyncOptions, jobs.TWO_ACTIONS, "MOD_TIME")


class VIEW3D_PT_stride_sync_cycles(StridePanel, bpy.types.Panel):
    bl_label = "Cycles"
    bl_parent_id = "VIEW3D_PT_stride_sync"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "frames_a")
        col.prop(s, "frames_b")
        layout.prop(s, "cyclic")


class VIEW3D_PT_stride_sync_body(StridePanel, bpy.types.Panel):
    bl_label = "Body"
    bl_parent_id = "VIEW3D_PT_stride_sync"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "sync_mask")
        col.prop(s, "in_place")
        col.prop(s, "lock_feet")


def gait_lines(preview: jobs.GaitsPreview, names: list[str]) -> list[str]:
    """Under the Gaits list (`names`: its actions): why a gait cannot be read, what else stops a
    bake, or the speeds a blend space of them reaches."""
    lines = []
    for name, problem in zip(names, preview.problems, strict=True):
        if problem:
            lines += wrap(jobs.in_user_words(f"{name!r}: {problem}"))
    if preview.problem:
        lines += wrap(jobs.in_user_words(preview.problem))
    elif all(math.isfinite(v) for v in preview.reach):
        lines.append(f"Reaches {preview.reach[0]:.2f} - {preview.reach[1]:.2f} m/s")
    return lines


def speed_line(obj: Any) -> str:
    """Where Bake Blend Space reads a Curve speed from: the armature's Speed as keyed, or its value."""
    action, fc = jobs.speed_curve(obj)
    if fc is not None:
        first, last = (float(f) for f in fc.range())
        return f"Keyed in {action.name!r}, frames {first:g}-{last:g}"
    return "Not keyed: hover over Speed, press I"


def _keyed_speed(layout: Any, obj: Any) -> None:
    """The armature's Speed, which a Curve speed reads, and where it is keyed."""
    layout.prop(obj.stride, "speed")
    _labels(layout, wrap(jobs.in_user_words(speed_line(obj))))


class STRIDE_UL_gaits(bpy.types.UIList):
    """The armature's gaits, slowest first: each one's action, speed and cycle."""

    def draw_item(self, context: Any, layout: Any, data: Any, item: Any, icon: Any, active_data: Any,
                  active_property: Any, index: Any = 0, flt_flag: Any = 0) -> None:
        preview = _list_preview(context, data)
        row = layout.row(align=True)
        row.prop(item, "action", text="", emboss=False, icon="ACTION")
        found = preview.rows[index] if index < len(preview.rows) else None
        if found is not None:
            row.label(text=f"{found.speed:.2f} m/s")
            row.label(text=f"{found.cycle:.2f} s")
        else:
            row.label(text="", icon="ERROR")

    def filter_items(self, context: Any, data: Any, propname: str) -> Any:
        preview = _list_preview(context, data)
        speeds = [r.speed if r is not None else math.nan for r in preview.rows]
        order = gait_order(speeds)
        places = [0] * len(order)
        for place, index in enumerate(order):
            places[index] = place
        return [], places


_DRAWN: list[jobs.GaitsPreview] = []  # the Gaits panel's, while its template_list calls the list's methods


def _list_preview(context: Any, data: Any) -> jobs.GaitsPreview:
    """The Gaits list's preview: the panel's while it draws the list (`_DRAWN`), else one built now."""
    return _DRAWN[-1] if _DRAWN else jobs.preview_gaits(data.id_data, source=context.scene.stride.source)


class VIEW3D_PT_stride_gaits(StridePanel, bpy.types.Panel):
    bl_label = "Gaits"
    bl_parent_id = "VIEW3D_PT_stride"
    needs = jobs.ARMATURE

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        obj = jobs.find_armature(context=context)
        rig = obj.stride
        row = layout.row()
        _DRAWN.append(jobs.preview_gaits(obj, source=s.source))
        try:
            row.template_list("STRIDE_UL_gaits", "", rig, "gaits", rig, "gait_index", rows=3)
        finally:
            preview = _DRAWN.pop()
        col = row.column(align=True)
        col.operator("stride.gait_add", text="", icon="ADD")
        col.operator("stride.gait_remove", text="", icon="REMOVE")
        col.separator()
        col.operator("stride.gaits_from_selected", text="", icon="RESTRICT_SELECT_OFF")
        lines = gait_lines(preview, jobs.gait_names(obj))
        if lines:
            _labels(layout.box(), lines)
        col = layout.column(align=True)
        col.prop(s, "speed_mode")
        if s.speed_mode == "CONSTANT":
            col.prop(s, "space_speed")
        elif s.speed_mode == "RAMP":
            col.prop(s, "ramp_from")
            col.prop(s, "ramp_to")
        else:
            _keyed_speed(col, obj)
        col.prop(s, "space_duration")
        col.prop(s, "lock_feet")
        _button(layout, context, "stride.bake_blend_space", BlendSpaceOptions, jobs.GAITS, "ANIM")


class VIEW3D_PT_stride_path(StridePanel, bpy.types.Panel):
    bl_label = "Walk Along Path"
    bl_parent_id = "VIEW3D_PT_stride"
    needs = jobs.ARMATURE

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        obj = jobs.find_armature(context=context)
        col = layout.column(align=True)
        col.prop_search(s, "path_target", bpy.data, "objects", text="Target", icon="CURVE_BEZCURVE")
        col.prop(s, "path_speed_mode")
        if s.path_speed_mode == "CONSTANT":
            col.prop(s, "path_speed")
        else:
            _keyed_speed(col, obj)
        col.prop_search(s, "idle_action", bpy.data, "actions", icon="ACTION")
        col.prop(s, "lock_feet")
        _button(layout, context, "stride.follow_path", FollowPathOptions, jobs.GAIT, "CURVE_PATH")


class VIEW3D_PT_stride_engine(StridePanel, bpy.types.Panel):
    bl_label = "Engine"
    bl_parent_id = "VIEW3D_PT_stride"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout, s = self.layout, context.scene.stride
        if layout is None:
            return
        col = layout.column(align=True)
        col.prop(s, "root_smooth")
        col.prop(s, "root_mode")
        _button(layout, context, "stride.add_root_motion", RootMotionOptions, jobs.ACTION,
                "ORIENTATION_GLOBAL")
        col = layout.column(align=True)
        col.prop(s, "engine_actions")
        col.prop(s, "file_format")
        row = col.row()
        row.active = s.file_format == "FBX"  # a glTF file has one set of axes and units
        row.prop(s, "engine")
        col.prop(s, "root_motion")
        _button(layout, context, "stride.export_engine", EngineExportOptions, jobs.ACTION, "EXPORT")


# Parents before their sub-panels, in the order the sidebar shows them.
CLASSES = (VIEW3D_PT_stride,
           VIEW3D_PT_stride_events, VIEW3D_PT_stride_event_curves, VIEW3D_PT_stride_lock_feet,
           VIEW3D_PT_stride_transition, VIEW3D_PT_stride_halflife, VIEW3D_PT_stride_transition_mask,
           VIEW3D_PT_stride_nla,
           VIEW3D_PT_stride_sync, VIEW3D_PT_stride_sync_cycles, VIEW3D_PT_stride_sync_body,
           VIEW3D_PT_stride_gaits, VIEW3D_PT_stride_path, VIEW3D_PT_stride_engine)
# The lists the panels draw (registered before them).
LISTS = (STRIDE_UL_gaits,)
