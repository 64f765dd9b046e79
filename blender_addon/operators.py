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

from . import bridge, jobs
from .options import (
    DecodeOptions,
    EventOptions,
    ExportOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
    from_source,
    prop,
)

_AXES = [(a, a, f"{a} axis") for a in ("X", "Y", "Z", "-X", "-Y", "-Z")]


class _JobOperator(bpy.types.Operator):
    """One `execute` for every operator: `run` does the work; a user error is reported, not raised."""

    def run(self, context: Any) -> set[str]:
        raise NotImplementedError

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        notes: list[str] = []  # what the bridge warned of (rates, skeletons), reported as warnings
        error = ""
        try:
            with jobs.reported(notes):
                return self.run(context)
        except jobs.USER_ERRORS as exc:
            error = str(exc)
            self.report({"ERROR"}, error)
            return {"CANCELLED"}
        finally:
            for note in notes:
                if note not in error:
                    self.report({"WARNING"}, note)


class STRIDE_OT_import_bvh(_JobOperator, ImportHelper):
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
    axis_forward: EnumProperty(name="Forward", items=_AXES, **prop(ImportOptions, "axis_forward"))  # type: ignore[valid-type]
    axis_up: EnumProperty(name="Up", items=_AXES, **prop(ImportOptions, "axis_up"))  # type: ignore[valid-type]
    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale", min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0,
        **prop(ImportOptions, "global_scale"))
    scale_preset: EnumProperty(  # type: ignore[valid-type]
        name="Units", **prop(ImportOptions, "scale_preset"),
        items=[("NONE", "As in file", "Keep the file's units"),
               ("CMU_TO_METERS", "CMU to meters", "CMU units (0.05644 m)"),
               ("CM_TO_METERS", "cm to meters", "Centimeters")])
    rotate_mode: EnumProperty(  # type: ignore[valid-type]
        name="Rotation", **prop(ImportOptions, "rotate_mode"),
        items=[("QUATERNION", "Quaternion", "Quaternion keys (no gimbal lock)"),
               ("NATIVE", "Euler (native)", "Each bone's Euler order from the file")]
        + [(m, f"Euler ({m})", f"Euler {m}") for m in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")])
    frame_start: IntProperty(name="Start Frame", **prop(ImportOptions, "frame_start"))  # type: ignore[valid-type]
    use_fps_scale: BoolProperty(name="Scale FPS", **prop(ImportOptions, "use_fps_scale"))  # type: ignore[valid-type]
    update_scene_fps: BoolProperty(name="Update Scene FPS", **prop(ImportOptions, "update_scene_fps"))  # type: ignore[valid-type]
    update_scene_duration: BoolProperty(  # type: ignore[valid-type]
        name="Update Scene Duration", **prop(ImportOptions, "update_scene_duration"))

    def invoke(self, context: Any, event: Any) -> set[str]:  # type: ignore[override]
        # Dropped files arrive with their path set: ask for the options, not for a file.
        if self.filepath or len(self.files):
            popup = getattr(self, "invoke_popup", None)
            return popup(context) if popup else self.execute(context)
        return ImportHelper.invoke(self, context, event)

    def run(self, context: Any) -> set[str]:
        paths = [str(Path(self.directory) / f.name) for f in self.files if f.name] if self.directory else []
        paths = paths or ([self.filepath] if self.filepath else [])
        if not paths:
            self.report({"ERROR"}, "Choose a .bvh file to import")
            return {"CANCELLED"}
        with _progress(context) as step:
            done, failed = jobs.import_files(context, paths, options=from_source(ImportOptions, self),
                                             progress=step)
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


class STRIDE_OT_export_bvh(_JobOperator, ExportHelper):  # type: ignore[misc]
    """Write the active armature's action to a BVH file (channel layout kept from the import)"""

    bl_idname = "stride.export_bvh"
    bl_label = "Export BVH (Stride)"
    bl_options = {"REGISTER"}

    filename_ext = ".bvh"
    filepath: StringProperty(subtype="FILE_PATH")  # type: ignore[valid-type]
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})  # type: ignore[valid-type]
    action: StringProperty(name="Action", **prop(ExportOptions, "action"))  # type: ignore[valid-type]
    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale", min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0,
        **prop(ExportOptions, "global_scale"))

    def run(self, context: Any) -> set[str]:
        clip = jobs.export_bvh(jobs.find_armature(context=context), self.filepath,
                               options=from_source(ExportOptions, self))
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


class _ActionOperator(_JobOperator):
    """Shared by the operators that work on an armature's action (the active one by default)."""

    def target(self, context: Any) -> Any:
        return jobs.find_armature(context=context)


class STRIDE_OT_detect_footsteps(_ActionOperator):
    """Mark footsteps (FootDown_L / FootDown_R pose markers, exact times kept) on the action.
    Re-running replaces only the markers Stride made; markers you added or moved stay"""

    bl_idname = "stride.detect_footsteps"
    bl_label = "Detect Footsteps"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", **prop(FootstepOptions, "action"))  # type: ignore[valid-type]
    speed_mps: FloatProperty(name="Foot Speed", min=0.0, max=5.0, unit="VELOCITY",  # type: ignore[valid-type]
                             **prop(FootstepOptions, "speed_mps"))

    def run(self, context: Any) -> set[str]:
        act, counts, feet = jobs.detect_footsteps(self.target(context),
                                                  options=from_source(FootstepOptions, self))
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        # A doubt about which joints are the feet is a warning the user should see.
        doubt = any(word in feet for word in ("disagree", "mirrored", "never plants", "do not alternate"))
        self.report({"WARNING"} if doubt else {"INFO"},
                    f"{act.name}: {found} (pose markers; exact times in stride_events); {feet}")
        return {"FINISHED"}


class STRIDE_OT_write_event_curves(_ActionOperator):
    """Write event-encoding (sin, cos), phase, contact and tag curves for the action's markers
    as F-curves on the armature's custom properties (Graph Editor). Replaces only Stride's curves"""

    bl_idname = "stride.write_event_curves"
    bl_label = "Write Event Curves"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", **prop(EventOptions, "action"))  # type: ignore[valid-type]
    window: FloatProperty(name="Window", min=0.001, max=60.0, **prop(EventOptions, "window"))  # type: ignore[valid-type]
    sigma: FloatProperty(name="Smoothing", min=0.0, max=1.0, precision=4, **prop(EventOptions, "sigma"))  # type: ignore[valid-type]
    tracks: StringProperty(name="Tracks", **prop(EventOptions, "tracks"))  # type: ignore[valid-type]
    speed_mps: FloatProperty(name="Foot Speed", min=0.0, max=5.0, unit="VELOCITY",  # type: ignore[valid-type]
                             **prop(EventOptions, "speed_mps"))

    def run(self, context: Any) -> set[str]:
        act, written = jobs.write_event_curves(self.target(context), options=from_source(EventOptions, self))
        self.report({"INFO"}, f"{act.name}: wrote {', '.join(written)}")
        return {"FINISHED"}


class STRIDE_OT_detect_events_from_curves(_ActionOperator):
    """Decode event-encoding curves (e.g. predicted by a network and keyed back) into pose
    markers with exact times: the inverse of Write Event Curves"""

    bl_idname = "stride.detect_events_from_curves"
    bl_label = "Events from Curves"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", **prop(DecodeOptions, "action"))  # type: ignore[valid-type]
    window: FloatProperty(name="Window", min=0.001, max=60.0, **prop(DecodeOptions, "window"))  # type: ignore[valid-type]
    prefix: StringProperty(name="Prefix", **prop(DecodeOptions, "prefix"))  # type: ignore[valid-type]

    def run(self, context: Any) -> set[str]:
        act, counts = jobs.detect_events_from_curves(self.target(context),
                                                     options=from_source(DecodeOptions, self))
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        self.report({"INFO"}, f"{act.name}: {found}")
        return {"FINISHED"}


_METHOD_ITEMS = [("DEAD", "Dead Blending",
                  "Extrapolate the source with decaying velocity, blend into the target"),
                 ("INERTIALIZE", "Inertialization", "Target plus a decaying offset from the source"),
                 ("CROSSFADE", "Crossfade", "Blend from the held source pose (as the NLA does)")]


class STRIDE_OT_bake_transition(_ActionOperator):
    """Bake a transition from one action into another as a new action on the armature
    (dead blending by default); the source actions are not changed"""

    bl_idname = "stride.bake_transition"
    bl_label = "Bake Transition"
    bl_options = {"REGISTER", "UNDO"}

    source_action: StringProperty(name="Source", **prop(TransitionOptions, "source_action"))  # type: ignore[valid-type]
    source_time: FloatProperty(name="Source Time", min=0.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                               **prop(TransitionOptions, "source_time"))
    target_action: StringProperty(name="Target", **prop(TransitionOptions, "target_action"))  # type: ignore[valid-type]
    target_time: FloatProperty(name="Target Time", min=0.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                               **prop(TransitionOptions, "target_time"))
    blend_time: FloatProperty(name="Blend Time", min=0.0, max=10.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                              **prop(TransitionOptions, "blend_time"))
    method: EnumProperty(name="Method", items=_METHOD_ITEMS, **prop(TransitionOptions, "method"))  # type: ignore[valid-type]
    halflife_mode: EnumProperty(  # type: ignore[valid-type]
        name="Half-life", **prop(TransitionOptions, "halflife_mode"),
        items=[("AUTO", "Auto", "Per joint and axis, from the pose difference and velocity at the switch"),
               ("FIXED", "Fixed", "One half-life for every joint")])
    halflife: FloatProperty(name="Half-life", min=0.0, max=10.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                            **prop(TransitionOptions, "halflife"))
    mask: StringProperty(name="Mask", **prop(TransitionOptions, "mask"))  # type: ignore[valid-type]
    lock_feet: BoolProperty(name="Lock Feet", **prop(TransitionOptions, "lock_feet"))  # type: ignore[valid-type]
    allow_mismatch: BoolProperty(name="Allow Mismatch", **prop(TransitionOptions, "allow_mismatch"))  # type: ignore[valid-type]

    def run(self, context: Any) -> set[str]:
        with _progress(context) as step:
            options = from_source(TransitionOptions, self)
            action, clip = jobs.bake_transition(self.target(context), options=options, progress=step)
        self.report({"INFO"}, f"Baked {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_nla_track(_ActionOperator):
    """Bake an NLA track's strips into one new action, with dead-blended transitions where strips
    meet (blend time: the later strip's Blend In, else the earlier one's Blend Out)"""

    bl_idname = "stride.bake_nla_track"
    bl_label = "Bake NLA Track"
    bl_options = {"REGISTER", "UNDO"}

    track: StringProperty(name="Track", **prop(NlaBakeOptions, "track"))  # type: ignore[valid-type]
    blend_time: FloatProperty(name="Blend Time", min=0.0, max=10.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                              **prop(NlaBakeOptions, "blend_time"))
    method: EnumProperty(name="Method", items=_METHOD_ITEMS, **prop(NlaBakeOptions, "method"))  # type: ignore[valid-type]
    lock_feet: BoolProperty(name="Lock Feet", **prop(NlaBakeOptions, "lock_feet"))  # type: ignore[valid-type]
    allow_mismatch: BoolProperty(name="Allow Mismatch", **prop(NlaBakeOptions, "allow_mismatch"))  # type: ignore[valid-type]

    def run(self, context: Any) -> set[str]:
        with _progress(context) as step:
            options = from_source(NlaBakeOptions, self)
            action, clip = jobs.bake_nla_track(self.target(context), options=options, progress=step)
        self.report({"INFO"}, f"Baked {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_sync_blend(_ActionOperator):
    """Bake two cycles of different lengths (a walk and a run) blended in phase, feet planting
    together, as a new action on the armature; the source actions are not changed"""

    bl_idname = "stride.bake_sync_blend"
    bl_label = "Bake Sync Blend"
    bl_options = {"REGISTER", "UNDO"}

    action_a: StringProperty(name="A", **prop(SyncOptions, "action_a"))  # type: ignore[valid-type]
    action_b: StringProperty(name="B", **prop(SyncOptions, "action_b"))  # type: ignore[valid-type]
    weight: FloatProperty(name="Weight", min=0.0, max=1.0, subtype="FACTOR", **prop(SyncOptions, "weight"))  # type: ignore[valid-type]
    weight_mode: EnumProperty(  # type: ignore[valid-type]
        name="Weight From", **prop(SyncOptions, "weight_mode"),
        items=[("CONSTANT", "Constant", "One weight for the whole bake"),
               ("CURVE", "Curve", "Key the armature property stride_blend_weight over time"),
               ("SPEED", "Speed", "The weight that travels at Speed")])
    speed_mps: FloatProperty(  # type: ignore[valid-type]
        name="Speed", min=0.0, max=20.0, unit="VELOCITY", **prop(SyncOptions, "speed_mps"))
    duration: FloatProperty(name="Duration", min=0.01, max=600.0, **prop(SyncOptions, "duration"))  # type: ignore[valid-type]
    duration_unit: EnumProperty(  # type: ignore[valid-type]
        name="Unit", **prop(SyncOptions, "duration_unit"),
        items=[("SECONDS", "Seconds", "Duration in seconds"),
               ("CYCLES", "Cycles", "Duration in blended cycles (constant or speed weight)")])
    mode: EnumProperty(  # type: ignore[valid-type]
        name="Cycle Length", **prop(SyncOptions, "mode"),
        items=[("LINEAR", "Linear", "Cycle length interpolated linearly (engines' default)"),
               ("HARMONIC", "Harmonic", "Cadence interpolated linearly"),
               ("LEADER", "Leader", "The clip with the higher weight sets the pace")])
    frames_a: IntVectorProperty(name="A Frames", size=2, **prop(SyncOptions, "frames_a"))  # type: ignore[valid-type]
    frames_b: IntVectorProperty(name="B Frames", size=2, **prop(SyncOptions, "frames_b"))  # type: ignore[valid-type]
    in_place: BoolProperty(name="In Place", **prop(SyncOptions, "in_place"))  # type: ignore[valid-type]
    cyclic: BoolProperty(name="Cyclic", **prop(SyncOptions, "cyclic"))  # type: ignore[valid-type]
    mask: StringProperty(name="Mask", **prop(SyncOptions, "mask"))  # type: ignore[valid-type]
    lock_feet: BoolProperty(name="Lock Feet", **prop(SyncOptions, "lock_feet"))  # type: ignore[valid-type]
    allow_mismatch: BoolProperty(name="Allow Mismatch", **prop(SyncOptions, "allow_mismatch"))  # type: ignore[valid-type]

    def run(self, context: Any) -> set[str]:
        with _progress(context) as step:
            options = from_source(SyncOptions, self)
            action, clip, used = jobs.bake_sync_blend(self.target(context), options=options, progress=step)
        weight = f" at weight {used:.3f}" if used is not None else ""
        self.report({"INFO"}, f"Baked {action.name!r}{weight}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_pick_time(_ActionOperator):
    """Use the current frame as the source or target time (seconds into that action)"""

    bl_idname = "stride.pick_time"
    bl_label = "Use Current Frame"
    bl_options = {"REGISTER", "UNDO"}

    which: EnumProperty(items=[("SOURCE", "Source", ""), ("TARGET", "Target", "")])  # type: ignore[valid-type]

    def run(self, context: Any) -> set[str]:
        settings = context.scene.stride
        name = settings.source_action if self.which == "SOURCE" else settings.target_action
        timing = bridge.action_timing(self.target(context), name or None)
        seconds = max(0.0, float(timing.seconds(context.scene.frame_current)))
        setattr(settings, "source_time" if self.which == "SOURCE" else "target_time", seconds)
        return {"FINISHED"}


class STRIDE_OT_lock_feet(_ActionOperator):
    """Bake a new action whose planted feet stay where they land (two-bone leg IK, the rest of the
    body untouched). Contacts from the action's stride_contact curves when it has them"""

    bl_idname = "stride.lock_feet"
    bl_label = "Lock Feet"
    bl_options = {"REGISTER", "UNDO"}

    action: StringProperty(name="Action", **prop(LockFeetOptions, "action"))  # type: ignore[valid-type]
    blend_time: FloatProperty(name="Blend Time", min=0.0, max=2.0, unit="TIME_ABSOLUTE",  # type: ignore[valid-type]
                              **prop(LockFeetOptions, "blend_time"))
    lower_pelvis: BoolProperty(name="Lower Pelvis", **prop(LockFeetOptions, "lower_pelvis"))  # type: ignore[valid-type]
    speed_mps: FloatProperty(name="Foot Speed", min=0.0, max=5.0, unit="VELOCITY",  # type: ignore[valid-type]
                             **prop(LockFeetOptions, "speed_mps"))

    def run(self, context: Any) -> set[str]:
        with _progress(context) as step:
            options = from_source(LockFeetOptions, self)
            act, clip, notes = jobs.lock_feet_action(self.target(context), options=options, progress=step)
        for note in notes[1:]:
            self.report({"WARNING"}, note)
        self.report({"INFO"}, f"{act.name}: {clip.n_frames} frames, {notes[0]}")
        return {"FINISHED"}


class STRIDE_OT_find_target_time(_ActionOperator):
    """Set Target Time to the moment of the target action whose pose and motion best continue the
    source at Source Time (motion matching: legs, root velocity, planted feet, gait phase)"""

    bl_idname = "stride.find_target_time"
    bl_label = "Find Target Time"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: Any) -> set[str]:
        settings = context.scene.stride
        seconds = jobs.find_target_time(self.target(context),
                                        options=from_source(TransitionOptions, settings))
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
