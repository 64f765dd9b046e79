"""Operators: read settings, call one job, report. Errors go to Blender's report, never a traceback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    IntVectorProperty,
    StringProperty,
)
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import jobs

_AXES = [(a, a, f"{a} axis") for a in ("X", "Y", "Z", "-X", "-Y", "-Z")]


class STRIDE_OT_import_bvh(bpy.types.Operator, ImportHelper):
    """Import BVH motion capture as an armature with an action (fast, bulk keys; Stride keeps the
    file's channel layout for exact read-back and export)"""

    bl_idname = "stride.import_bvh"
    bl_label = "Import BVH (Stride)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".bvh"
    filepath: StringProperty(subtype="FILE_PATH", options={"SKIP_SAVE"})  # type: ignore[valid-type]
    directory: StringProperty(subtype="DIR_PATH", options={"SKIP_SAVE"})  # type: ignore[valid-type]
    files: CollectionProperty(  # type: ignore[valid-type]
        type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})  # type: ignore[valid-type]
    axis_forward: EnumProperty(name="Forward", items=_AXES, default="-Z")  # type: ignore[valid-type]
    axis_up: EnumProperty(name="Up", items=_AXES, default="Y")  # type: ignore[valid-type]
    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0)
    scale_preset: EnumProperty(  # type: ignore[valid-type]
        name="Units", default="NONE", description="Convert file units to meters (times Scale)",
        items=[("NONE", "As in file", "Keep the file's units"),
               ("CMU_TO_METERS", "CMU to meters", "CMU units (0.05644 m)"),
               ("CM_TO_METERS", "cm to meters", "Centimeters")])
    rotate_mode: EnumProperty(  # type: ignore[valid-type]
        name="Rotation", default="QUATERNION",
        items=[("QUATERNION", "Quaternion", "Quaternion keys (no gimbal lock)"),
               ("NATIVE", "Euler (native)", "Each bone's Euler order from the file")]
        + [(m, f"Euler ({m})", f"Euler {m}") for m in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")])
    frame_start: IntProperty(name="Start Frame", default=1)  # type: ignore[valid-type]
    use_fps_scale: BoolProperty(  # type: ignore[valid-type]
        name="Scale FPS", default=False,
        description="Key at the scene's rate, so the motion plays in real time (else one key per frame)")

    def invoke(self, context: Any, event: Any) -> set[str]:  # type: ignore[override]
        # Dropped files arrive with their path set: ask for the options, not for a file.
        if self.filepath or len(self.files):
            popup = getattr(self, "invoke_popup", None)
            return popup(context) if popup else self.execute(context)
        return ImportHelper.invoke(self, context, event)

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        paths = [str(Path(self.directory) / f.name) for f in self.files if f.name] if self.directory else []
        paths = paths or ([self.filepath] if self.filepath else [])
        if not paths:
            self.report({"ERROR"}, "Choose a .bvh file to import")
            return {"CANCELLED"}
        try:
            with _progress(context) as step:
                done, failed = jobs.import_files(
                    context, paths, progress=step, axis_forward=self.axis_forward, axis_up=self.axis_up,
                    global_scale=self.global_scale, rotate_mode=self.rotate_mode,
                    frame_start=self.frame_start, use_fps_scale=self.use_fps_scale,
                    scale_preset=self.scale_preset)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for message in failed:
            self.report({"WARNING"} if done else {"ERROR"}, message)
        if not done:
            return {"CANCELLED"}
        names = ", ".join(obj.name for obj, _ in done[:3]) + (" ..." if len(done) > 3 else "")
        self.report({"INFO"}, f"Imported {len(done)} of {len(paths)} BVH file(s): {names}")
        return {"FINISHED"}


class STRIDE_FH_bvh(bpy.types.FileHandler):
    """Drag and drop .bvh files into the 3D Viewport to import them with Stride."""

    bl_idname = "STRIDE_FH_bvh"
    bl_label = "BVH (Stride)"
    bl_import_operator = "stride.import_bvh"
    bl_file_extensions = ".bvh"

    @classmethod
    def poll_drop(cls, context: Any) -> bool:
        return context.area is not None and context.area.type == "VIEW_3D"


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


@contextmanager
def _progress(context: Any) -> Iterator[Callable[[float], None]]:
    """The window manager's progress bar for a long job: yields the job's progress callback."""
    wm = context.window_manager
    wm.progress_begin(0, 100)
    try:
        yield lambda fraction: wm.progress_update(int(100 * fraction))
    finally:
        wm.progress_end()


class _ActionOperator:
    """Shared by the operators that work on an armature's action (the active one by default)."""

    def target(self, context: Any) -> Any:
        return jobs.find_armature(context=context)


class STRIDE_OT_detect_footsteps(bpy.types.Operator, _ActionOperator):
    """Mark footsteps (FootDown_L / FootDown_R pose markers, exact times kept) on the action.
    Re-running replaces only the markers Stride made; markers you added or moved stay"""

    bl_idname = "stride.detect_footsteps"
    bl_label = "Detect Footsteps"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", description="Action (empty: the active one)")  # type: ignore[valid-type]
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Foot Speed", default=0.0, min=0.0, max=5.0, unit="VELOCITY",
        description=("Foot speed in m/s under which a foot is planted; 0 = Auto (from the body "
                     "and the take: a slow shuffle, a walk, a run)"))

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            act, counts, feet = jobs.detect_footsteps(self.target(context), self.action, self.speed_mps)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        # A doubt about which joints are the feet is a warning the user should see.
        doubt = any(word in feet for word in ("disagree", "mirrored", "never plants", "do not alternate"))
        self.report({"WARNING"} if doubt else {"INFO"},
                    f"{act.name}: {found} (pose markers; exact times in stride_events); {feet}")
        return {"FINISHED"}


class STRIDE_OT_write_event_curves(bpy.types.Operator, _ActionOperator):
    """Write event-encoding (sin, cos), phase, contact and tag curves for the action's markers
    as F-curves on the armature's custom properties (Graph Editor). Replaces only Stride's curves"""

    bl_idname = "stride.write_event_curves"
    bl_label = "Write Event Curves"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", description="Action (empty: the active one)")  # type: ignore[valid-type]
    window: FloatProperty(name="Window", default=0.5, min=0.001, max=60.0)  # type: ignore[valid-type]
    sigma: FloatProperty(name="Smoothing", default=1 / 120, min=0.0, max=1.0, precision=4)  # type: ignore[valid-type]
    tracks: StringProperty(name="Tracks", default="ALL")  # type: ignore[valid-type]
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Foot Speed", default=0.0, min=0.0, max=5.0, unit="VELOCITY",
        description=("Foot speed in m/s under which a foot is planted; 0 = Auto (from the body "
                     "and the take: a slow shuffle, a walk, a run)"))

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            act, written = jobs.write_event_curves(self.target(context), self.action, self.window,
                                                   self.sigma, self.tracks, self.speed_mps)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"{act.name}: wrote {', '.join(written)}")
        return {"FINISHED"}


class STRIDE_OT_detect_events_from_curves(bpy.types.Operator, _ActionOperator):
    """Decode event-encoding curves (e.g. predicted by a network and keyed back) into pose
    markers with exact times: the inverse of Write Event Curves"""

    bl_idname = "stride.detect_events_from_curves"
    bl_label = "Events from Curves"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", description="Action (empty: the active one)")  # type: ignore[valid-type]
    window: FloatProperty(name="Window", default=0.5, min=0.001, max=60.0)  # type: ignore[valid-type]
    prefix: StringProperty(name="Prefix", default="stride_event_")  # type: ignore[valid-type]

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            act, counts = jobs.detect_events_from_curves(self.target(context), self.action, self.window,
                                                         self.prefix)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        self.report({"INFO"}, f"{act.name}: {found}")
        return {"FINISHED"}


_METHOD_ITEMS = [("DEAD", "Dead Blending",
                  "Extrapolate the source with decaying velocity, blend into the target"),
                 ("INERTIALIZE", "Inertialization", "Target plus a decaying offset from the source"),
                 ("CROSSFADE", "Crossfade", "Blend from the held source pose (as the NLA does)")]


class STRIDE_OT_bake_transition(bpy.types.Operator, _ActionOperator):
    """Bake a transition from one action into another as a new action on the armature
    (dead blending by default); the source actions are not changed"""

    bl_idname = "stride.bake_transition"
    bl_label = "Bake Transition"
    bl_options = {"REGISTER", "UNDO"}

    source_action: StringProperty(  # type: ignore[valid-type]
        name="Source",
        description="Action to leave (empty: the active one, or the action a Stride bake was baked from)")
    source_time: FloatProperty(name="Source Time", default=1.0, min=0.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                               description="Seconds into the source action where the transition starts")
    target_action: StringProperty(name="Target", description="Action to go into")  # type: ignore[valid-type]
    target_time: FloatProperty(name="Target Time", default=0.0, min=0.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                               description="Seconds into the target action to continue from")
    blend_time: FloatProperty(name="Blend Time", default=0.25, min=0.0, max=10.0, unit="TIME_ABSOLUTE")  # type: ignore[valid-type]
    method: EnumProperty(name="Method", items=_METHOD_ITEMS, default="DEAD")  # type: ignore[valid-type]
    halflife_mode: EnumProperty(  # type: ignore[valid-type]
        name="Half-life", default="AUTO",
        items=[("AUTO", "Auto", "Per joint and axis, from the pose difference and velocity at the switch"),
               ("FIXED", "Fixed", "One half-life for every joint")])
    halflife: FloatProperty(name="Half-life", default=0.3, min=0.0, max=10.0, unit="TIME_ABSOLUTE")  # type: ignore[valid-type]
    mask: StringProperty(  # type: ignore[valid-type]
        name="Mask", description="LOWER_BODY, UPPER_BODY, FINGERS or joint names (with descendants); "
                                 "empty for all joints; joints outside it cut over")
    lock_feet: BoolProperty(  # type: ignore[valid-type]
        name="Lock Feet", default=True,
        description="Hold each foot where it is planted in the sources through the blend (leg IK)")

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            with _progress(context) as step:
                action, clip = jobs.bake_transition(
                    self.target(context), self.source_action, self.source_time, self.target_action,
                    self.target_time, self.blend_time, self.method, self.halflife_mode, self.halflife,
                    self.mask, progress=step, lock_feet=self.lock_feet)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Baked {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_nla_track(bpy.types.Operator, _ActionOperator):
    """Bake an NLA track's strips into one new action, with dead-blended transitions where strips
    meet (blend time: the later strip's Blend In, else the earlier one's Blend Out)"""

    bl_idname = "stride.bake_nla_track"
    bl_label = "Bake NLA Track"
    bl_options = {"REGISTER", "UNDO"}

    track: StringProperty(name="Track", description="NLA track (empty: the active one)")  # type: ignore[valid-type]
    blend_time: FloatProperty(name="Blend Time", default=0.25, min=0.0, max=10.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                              description="Where strips set no Blend In/Out")
    method: EnumProperty(name="Method", items=_METHOD_ITEMS, default="DEAD")  # type: ignore[valid-type]
    lock_feet: BoolProperty(  # type: ignore[valid-type]
        name="Lock Feet", default=True,
        description="Hold each foot where it is planted in the sources through the blend (leg IK)")

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            with _progress(context) as step:
                action, clip = jobs.bake_nla_track(self.target(context), self.track, self.blend_time,
                                                   self.method, progress=step, lock_feet=self.lock_feet)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Baked {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_sync_blend(bpy.types.Operator, _ActionOperator):
    """Bake two cycles of different lengths (a walk and a run) blended in phase, feet planting
    together, as a new action on the armature; the source actions are not changed"""

    bl_idname = "stride.bake_sync_blend"
    bl_label = "Bake Sync Blend"
    bl_options = {"REGISTER", "UNDO"}

    action_a: StringProperty(  # type: ignore[valid-type]
        name="A",
        description="First cycle (empty: the active action, or the action a Stride bake was baked from)")
    action_b: StringProperty(name="B", description="Second cycle's action")  # type: ignore[valid-type]
    weight: FloatProperty(name="Weight", default=0.5, min=0.0, max=1.0, subtype="FACTOR",  # type: ignore[valid-type]
                          description="0 = A, 1 = B")
    weight_mode: EnumProperty(  # type: ignore[valid-type]
        name="Weight From", default="CONSTANT",
        items=[("CONSTANT", "Constant", "One weight for the whole bake"),
               ("CURVE", "Curve", "Key the armature property stride_blend_weight over time"),
               ("SPEED", "Speed", "The weight that travels at Speed")])
    speed_mps: FloatProperty(name="Speed", default=1.5, min=0.0, max=20.0, unit="VELOCITY")  # type: ignore[valid-type]
    duration: FloatProperty(name="Duration", default=4.0, min=0.01, max=600.0)  # type: ignore[valid-type]
    duration_unit: EnumProperty(  # type: ignore[valid-type]
        name="Unit", default="SECONDS",
        items=[("SECONDS", "Seconds", "Duration in seconds"),
               ("CYCLES", "Cycles", "Duration in blended cycles (constant or speed weight)")])
    mode: EnumProperty(  # type: ignore[valid-type]
        name="Cycle Length", default="LINEAR",
        items=[("LINEAR", "Linear", "Cycle length interpolated linearly (engines' default)"),
               ("HARMONIC", "Harmonic", "Cadence interpolated linearly"),
               ("LEADER", "Leader", "The clip with the higher weight sets the pace")])
    frames_a: IntVectorProperty(name="A Frames", size=2, default=(0, 0),  # type: ignore[valid-type]
                                description="A's cycle: first frame and the frame of the same phase "
                                            "(0, 0: from footsteps)")
    frames_b: IntVectorProperty(name="B Frames", size=2, default=(0, 0),  # type: ignore[valid-type]
                                description="B's cycle (0, 0: from footsteps)")
    in_place: BoolProperty(name="In Place", default=False,  # type: ignore[valid-type]
                           description="Strip the root's travel (the character stays at the origin)")
    cyclic: BoolProperty(name="Cyclic", default=True,  # type: ignore[valid-type]
                         description="A duration of whole cycles bakes one closed loop with "
                                     "Cycles modifiers")
    mask: StringProperty(name="Mask", description="LOWER_BODY, UPPER_BODY, FINGERS or joint names")  # type: ignore[valid-type]
    lock_feet: BoolProperty(  # type: ignore[valid-type]
        name="Lock Feet", default=True,
        description="Hold each foot where it is planted in the sources through the blend (leg IK)")

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            with _progress(context) as step:
                action, clip, used = jobs.bake_sync_blend(
                    self.target(context), self.action_a, self.action_b, self.weight, self.weight_mode,
                    self.speed_mps, self.duration, self.mode, tuple(self.frames_a), tuple(self.frames_b),
                    self.in_place, self.cyclic, self.mask, self.duration_unit, progress=step,
                    lock_feet=self.lock_feet)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        weight = f" at weight {used:.3f}" if used is not None else ""
        self.report({"INFO"}, f"Baked {action.name!r}{weight}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_pick_time(bpy.types.Operator, _ActionOperator):
    """Use the current frame as the source or target time (seconds into that action)"""

    bl_idname = "stride.pick_time"
    bl_label = "Use Current Frame"
    bl_options = {"REGISTER", "UNDO"}

    which: EnumProperty(items=[("SOURCE", "Source", ""), ("TARGET", "Target", "")])  # type: ignore[valid-type]

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        settings = context.scene.stride
        name = settings.source_action if self.which == "SOURCE" else settings.target_action
        try:
            timing = jobs.bridge.action_timing(self.target(context), name or None)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        seconds = max(0.0, float(timing.seconds(context.scene.frame_current)))
        setattr(settings, "source_time" if self.which == "SOURCE" else "target_time", seconds)
        return {"FINISHED"}


class STRIDE_OT_lock_feet(bpy.types.Operator, _ActionOperator):
    """Bake a new action whose planted feet stay where they land (two-bone leg IK, the rest of the
    body untouched). Contacts from the action's stride_contact curves when it has them"""

    bl_idname = "stride.lock_feet"
    bl_label = "Lock Feet"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", description="Action (empty: the active one)")  # type: ignore[valid-type]
    blend_time: FloatProperty(  # type: ignore[valid-type]
        name="Blend Time", default=0.1, min=0.0, max=2.0, unit="TIME_ABSOLUTE",
        description="Seconds over which a lock eases out after the foot lifts")
    lower_pelvis: BoolProperty(  # type: ignore[valid-type]
        name="Lower Pelvis", default=False,
        description="Where a leg cannot reach its planted foot, lower the hips just enough")
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Foot Speed", default=0.0, min=0.0, max=5.0, unit="VELOCITY",
        description=("Foot speed in m/s under which a foot is planted, when contacts are detected; "
                     "0 = Auto"))

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        try:
            with _progress(context) as step:
                act, clip, notes = jobs.lock_feet_action(self.target(context), self.action, self.blend_time,
                                                         self.lower_pelvis, self.speed_mps, progress=step)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for note in notes[1:]:
            self.report({"WARNING"}, note)
        self.report({"INFO"}, f"{act.name}: {clip.n_frames} frames, {notes[0]}")
        return {"FINISHED"}


class STRIDE_OT_find_target_time(bpy.types.Operator, _ActionOperator):
    """Set Target Time to the moment of the target action whose pose and motion best continue the
    source at Source Time (motion matching: legs, root velocity, planted feet, gait phase)"""

    bl_idname = "stride.find_target_time"
    bl_label = "Find Target Time"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        settings = context.scene.stride
        try:
            seconds = jobs.find_target_time(self.target(context), settings.source_action,
                                            settings.source_time, settings.target_action)
        except jobs.USER_ERRORS as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        settings.target_time = seconds
        self.report({"INFO"}, f"Target Time {seconds:.3f} s")
        return {"FINISHED"}


def _menu_export(self: Any, context: Any) -> None:
    self.layout.operator(STRIDE_OT_export_bvh.bl_idname, text="Motion Capture (.bvh) - Stride")


def _menu_import(self: Any, context: Any) -> None:
    self.layout.operator(STRIDE_OT_import_bvh.bl_idname, text="Motion Capture (.bvh) - Stride")


def register_menus() -> None:
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)  # type: ignore[arg-type]
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)  # type: ignore[arg-type]


def unregister_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)  # type: ignore[arg-type]
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)  # type: ignore[arg-type]


CLASSES = (STRIDE_OT_import_bvh, STRIDE_FH_bvh, STRIDE_OT_export_bvh, STRIDE_OT_detect_footsteps,
           STRIDE_OT_write_event_curves, STRIDE_OT_detect_events_from_curves, STRIDE_OT_bake_transition,
           STRIDE_OT_bake_nla_track, STRIDE_OT_pick_time, STRIDE_OT_bake_sync_blend, STRIDE_OT_lock_feet,
           STRIDE_OT_find_target_time)
