"""Operators: read settings, call one job, report. Errors go to Blender's report, never a traceback.

An operator is declared with its command's options class (`options_class`): its properties are that
class's fields (properties.FromOptions) and `read_options()` reads them back into it for the job. A
new operator goes here (or in gait_operators.py, the gaits' own), with its options class in
options.py and its job in jobs/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bpy
from bpy.props import CollectionProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import bridge, jobs
from .options import (
    DecodeOptions,
    EngineExportOptions,
    EventOptions,
    ExportOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    RootMotionOptions,
    SyncOptions,
    TransitionOptions,
)
from .properties import FromOptions, settings_options
from .recipes.engine import EXTENSIONS


class JobOperator(FromOptions, bpy.types.Operator):
    """One `execute` for every operator: `run` does the work; a user error is reported, not raised,
    and the warnings the core raises on the way are reported as warnings. `needs`: what the
    operator needs in the context (`jobs.unmet`), its poll's test and message. Every report and
    poll message is in the UI's words (`tell`, `refuse`: jobs.in_user_words, never a Python
    argument or a name of the code)."""

    needs = ""

    @classmethod
    def poll(cls, context: Any) -> bool:
        reason = jobs.unmet(context, cls.needs) if cls.needs else ""
        return cls.refuse(reason) if reason else True

    @classmethod
    def refuse(cls, reason: str) -> bool:
        """False, with the reason shown in the button's tooltip."""
        cls.poll_message_set(jobs.in_user_words(reason))
        return False

    def tell(self, level: str, message: str) -> None:
        """Report `message` (INFO, WARNING or ERROR) in the UI's words: every report goes here."""
        self.report({level}, jobs.in_user_words(message))  # type: ignore[arg-type]

    def run(self, context: Any) -> set[str]:
        raise NotImplementedError

    def execute(self, context: Any) -> set[str]:  # type: ignore[override]
        error = ""
        result = {"CANCELLED"}
        with jobs.core_warnings() as warned, bridge.read_notes() as reads:
            try:
                result = self.run(context)
            except jobs.USER_ERRORS as exc:
                error = str(exc)
        for note in reads:  # which source each action was read from, and why
            self.tell("INFO", note)
        for message in warned:
            self.tell("WARNING", message)
        if error:
            self.tell("ERROR", error)
        return result


class STRIDE_OT_import_bvh(JobOperator, ImportHelper):
    """Import BVH motion capture as an armature with an action (fast, bulk keys; Stride keeps the
    file's channel layout for exact read-back and export)"""

    bl_idname = "stride.import_bvh"
    bl_label = "Import BVH (Stride)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    options_class = ImportOptions

    filename_ext = ".bvh"
    filepath: StringProperty(  # type: ignore[valid-type]
        name="File Path", description="The BVH file to import", subtype="FILE_PATH", options={"SKIP_SAVE"})
    directory: StringProperty(  # type: ignore[valid-type]
        name="Folder", description="Folder of the files chosen", subtype="DIR_PATH", options={"SKIP_SAVE"})
    files: CollectionProperty(  # type: ignore[valid-type]
        name="Files", description="The BVH files to import, each its own armature",
        type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    filter_glob: StringProperty(  # type: ignore[valid-type]
        default="*.bvh", description="Files shown in the file browser", options={"HIDDEN"})

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
            self.tell("ERROR", "Choose a .bvh file to import")
            return {"CANCELLED"}
        with progress(context) as step:
            done, failed = jobs.import_files(context, paths, options=self.read_options(), progress=step)
        for message in failed:
            self.tell("WARNING" if done else "ERROR", message)
        if not done:
            return {"CANCELLED"}
        names = ", ".join(f"action {action.name!r} on armature {obj.name!r}" for obj, action in done[:3])
        self.tell("INFO", f"Imported {len(done)} of {len(paths)} BVH file(s): {names}"
                          + (" ..." if len(done) > 3 else ""))
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


class STRIDE_OT_export_bvh(JobOperator, ExportHelper):  # type: ignore[misc]
    """Write the active armature's action to a BVH file (channel layout kept from the import)"""

    bl_idname = "stride.export_bvh"
    bl_label = "Export BVH (Stride)"
    bl_options = {"REGISTER"}
    options_class = ExportOptions
    needs = jobs.ACTION

    filename_ext = ".bvh"
    filepath: StringProperty(  # type: ignore[valid-type]
        name="File Path", description="The BVH file to write", subtype="FILE_PATH")
    filter_glob: StringProperty(  # type: ignore[valid-type]
        default="*.bvh", description="Files shown in the file browser", options={"HIDDEN"})

    def run(self, context: Any) -> set[str]:
        obj = jobs.find_armature(context=context)
        clip = jobs.export_bvh(obj, self.filepath, options=self.read_options())
        self.tell("INFO", f"Exported {clip.n_frames} frames of {clip.name!r} to {self.filepath}")
        return {"FINISHED"}


@contextmanager
def progress(context: Any) -> Iterator[Callable[[float], None]]:
    """The window manager's progress bar for a long job: yields the job's progress callback."""
    wm = context.window_manager
    wm.progress_begin(0, 100)
    try:
        yield lambda fraction: wm.progress_update(int(100 * fraction))
    finally:
        wm.progress_end()


class ActionOperator(JobOperator):
    """Shared by the operators that work on an armature's action (the active one by default)."""

    needs = jobs.ACTION

    def target(self, context: Any) -> Any:
        return jobs.find_armature(context=context)


class STRIDE_OT_detect_footsteps(ActionOperator):
    """Mark footsteps (FootDown_L / FootDown_R pose markers, exact times kept) on the action.
    Re-running replaces only the markers Stride made; markers you added or moved stay"""

    bl_idname = "stride.detect_footsteps"
    bl_label = "Detect Footsteps"
    bl_options = {"REGISTER", "UNDO"}
    options_class = FootstepOptions

    def run(self, context: Any) -> set[str]:
        act, counts, feet = jobs.detect_footsteps(self.target(context), options=self.read_options())
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        # A doubt about which joints are the feet, or the unit, or about the contacts (a
        # ContactWarning: a foot that never plants, steps twice in a row or slides), is a warning to see.
        doubt = any(word in feet for word in ("disagree", "mirrored", "never plants", "do not alternate",
                                              "more than two limbs", "unit is a guess", "twice in a row",
                                              "slides on the floor"))
        self.tell("WARNING" if doubt else "INFO",
                  f"{act.name}: {found} (pose markers; exact times in stride_events); {feet}")
        return {"FINISHED"}


class STRIDE_OT_write_event_curves(ActionOperator):
    """Write event-encoding (sin, cos), phase, contact and tag curves for the action's markers
    as F-curves on the armature's custom properties (Graph Editor). Replaces only Stride's curves"""

    bl_idname = "stride.write_event_curves"
    bl_label = "Write Event Curves"
    bl_options = {"REGISTER", "UNDO"}
    options_class = EventOptions

    def run(self, context: Any) -> set[str]:
        act, written = jobs.write_event_curves(self.target(context), options=self.read_options())
        self.tell("INFO", f"{act.name}: wrote {', '.join(written)}")
        return {"FINISHED"}


class STRIDE_OT_detect_events_from_curves(ActionOperator):
    """Decode event-encoding curves (e.g. predicted by a network and keyed back) into pose
    markers with exact times: the inverse of Write Event Curves"""

    bl_idname = "stride.detect_events_from_curves"
    bl_label = "Events from Curves"
    bl_options = {"REGISTER", "UNDO"}
    options_class = DecodeOptions

    def run(self, context: Any) -> set[str]:
        act, counts = jobs.detect_events_from_curves(self.target(context), options=self.read_options())
        found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        self.tell("INFO", f"{act.name}: {found}")
        return {"FINISHED"}


class STRIDE_OT_bake_transition(ActionOperator):
    """Bake a transition from one action into another, or into another time of itself, as a new
    action on the armature (dead blending by default); the source actions are not changed"""

    bl_idname = "stride.bake_transition"
    bl_label = "Bake Transition"
    bl_options = {"REGISTER", "UNDO"}  # one action is enough: a take goes into another time of itself
    options_class = TransitionOptions

    def run(self, context: Any) -> set[str]:
        with progress(context) as step:
            options = self.read_options()
            action, clip = jobs.bake_transition(self.target(context), options=options, progress=step)
        self.tell("INFO", f"Baked action {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_nla_track(ActionOperator):
    """Bake what the NLA plays on the chosen tracks (all unmuted ones by default) into one new
    action, with dead-blended transitions where one strip takes over from another (over its Blend
    In or Out, else Blend Time); refuses, naming the strip and setting, what it cannot bake"""

    bl_idname = "stride.bake_nla_track"
    bl_label = "Bake NLA Track"
    bl_options = {"REGISTER", "UNDO"}
    options_class = NlaBakeOptions
    needs = jobs.NLA_TRACK

    def run(self, context: Any) -> set[str]:
        with progress(context) as step:
            options = self.read_options()
            action, clip = jobs.bake_nla_track(self.target(context), options=options, progress=step)
        self.tell("INFO", f"Baked action {action.name!r}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_bake_sync_blend(ActionOperator):
    """Bake two cycles of different lengths (a walk and a run) blended in phase, feet planting
    together, as a new action on the armature; the source actions are not changed"""

    bl_idname = "stride.bake_sync_blend"
    bl_label = "Bake Sync Blend"
    bl_options = {"REGISTER", "UNDO"}
    options_class = SyncOptions
    needs = jobs.TWO_ACTIONS

    def run(self, context: Any) -> set[str]:
        with progress(context) as step:
            options = self.read_options()
            action, clip, used = jobs.bake_sync_blend(self.target(context), options=options, progress=step)
        weight = f" at weight {used:.3f}" if used is not None else ""
        self.tell("INFO", f"Baked action {action.name!r}{weight}: {clip.n_frames} frames")
        return {"FINISHED"}


class STRIDE_OT_pick_time(ActionOperator):
    """Use the current frame as the source time, target time or target end (seconds into that
    action)"""

    bl_idname = "stride.pick_time"
    bl_label = "Use Current Frame"
    bl_options = {"REGISTER", "UNDO"}

    which: EnumProperty(  # type: ignore[valid-type]
        name="Which", description="The time the current frame sets",
        items=[("SOURCE", "Source Time", "Seconds into the source action"),
               ("TARGET", "Target Time", "Seconds into the target action"),
               ("END", "Target End", "Seconds into the target action where the bake ends")])

    def run(self, context: Any) -> set[str]:
        settings = context.scene.stride
        name = settings.source_action if self.which == "SOURCE" else settings.target_action
        timing = bridge.action_timing(self.target(context), name or None)
        seconds = max(0.0, float(timing.seconds(context.scene.frame_current)))
        setting = {"SOURCE": "source_time", "TARGET": "target_time", "END": "target_end"}[self.which]
        setattr(settings, setting, seconds)
        return {"FINISHED"}


class STRIDE_OT_lock_feet(ActionOperator):
    """Bake a new action whose planted feet stay where they land (two-bone leg IK, the rest of the
    body untouched). Contacts from the action's stride_contact curves when it has them"""

    bl_idname = "stride.lock_feet"
    bl_label = "Lock Feet"
    bl_options = {"REGISTER", "UNDO"}
    options_class = LockFeetOptions

    def run(self, context: Any) -> set[str]:
        with progress(context) as step:
            options = self.read_options()
            act, clip, notes = jobs.lock_feet_action(self.target(context), options=options, progress=step)
        for note in notes[1:]:
            self.tell("WARNING", note)
        self.tell("INFO", f"Baked action {act.name!r}: {clip.n_frames} frames, {notes[0]}")
        return {"FINISHED"}


class STRIDE_OT_find_target_time(ActionOperator):
    """Set Target Time to the moment of the target action whose pose and motion best continue the
    source at Source Time (motion matching: legs, root velocity, planted feet, gait phase)"""

    bl_idname = "stride.find_target_time"
    bl_label = "Find Target Time"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        if not super().poll(context):
            return False
        return bool(context.scene.stride.target_action) or cls.refuse("Choose a Target action first")

    def run(self, context: Any) -> set[str]:
        settings = context.scene.stride
        seconds = jobs.find_target_time(self.target(context),
                                        options=settings_options(TransitionOptions, settings))
        settings.target_time = seconds
        self.tell("INFO", f"Target Time {seconds:.3f} s")
        return {"FINISHED"}


class STRIDE_OT_refresh_previews(JobOperator):
    """Compute the sidebar's previews (footsteps, cycles, speeds) again, after editing keys"""

    bl_idname = "stride.refresh_previews"
    bl_label = "Refresh Previews"
    bl_options = {"REGISTER"}
    needs = jobs.ACTION

    def run(self, context: Any) -> set[str]:
        jobs.forget_previews()
        for area in getattr(context.screen, "areas", ()):
            area.tag_redraw()
        return {"FINISHED"}


class STRIDE_OT_add_root_motion(ActionOperator):
    """Bake the action with a root bone that carries the travel on the floor (root motion for game
    engines): adds a root bone where the armature has none (a rig with controls: on Stride's copy
    of its deform skeleton); the source action is not changed"""

    bl_idname = "stride.add_root_motion"
    bl_label = "Add Root Motion"
    bl_options = {"REGISTER", "UNDO"}
    options_class = RootMotionOptions

    def run(self, context: Any) -> set[str]:
        obj = self.target(context)
        with progress(context) as step:
            done = jobs.add_root_motion(obj, options=self.read_options(), progress=step)
        if done.armature is not obj:  # the next command works on the copy the result plays on
            obj.select_set(False)
            done.armature.select_set(True)
            context.view_layer.objects.active = done.armature
        added = f"added bone {done.added!r} to {done.armature.name!r}; " if done.added else ""
        self.tell("INFO", f"{added}baked action {done.action.name!r}: {done.clip.n_frames} frames, the root "
                          f"smoothed over {done.smooth:.2f} s")
        return {"FINISHED"}


class STRIDE_OT_export_engine(ActionOperator, ExportHelper):  # type: ignore[misc]
    """Write the armature and its actions for a game engine through Blender's FBX or glTF exporter
    (root bone, no leaf bones, every key), with their markers and Stride's curves beside the file
    (<name>.events.json)"""

    bl_idname = "stride.export_engine"
    bl_label = "Export for Engine"
    bl_options = {"REGISTER", "UNDO"}
    options_class = EngineExportOptions

    filepath: StringProperty(  # type: ignore[valid-type]
        name="File Path", description="The .fbx or .glb file to write", subtype="FILE_PATH")
    filter_glob: StringProperty(  # type: ignore[valid-type]
        default="*.fbx;*.glb", description="Files shown in the file browser", options={"HIDDEN"})

    @property
    def filename_ext(self) -> str:
        return EXTENSIONS.get(self.file_format, ".fbx")  # type: ignore[attr-defined]

    def run(self, context: Any) -> set[str]:
        with progress(context) as step:
            done = jobs.export_engine(self.target(context), self.filepath,
                                        options=self.read_options(), progress=step)
        made = f"; made {', '.join(repr(n) for n in done.made)}" if done.made else ""
        self.tell("INFO", f"Exported {len(done.actions)} action(s) of {done.armature.name!r} to "
                          f"{done.path.name!r} and {done.sidecar.name!r}{made}")
        return {"FINISHED"}


def menu_export(self: Any, context: Any) -> None:
    self.layout.operator(STRIDE_OT_export_bvh.bl_idname, text="Motion Capture (.bvh) - Stride")


def menu_import(self: Any, context: Any) -> None:
    self.layout.operator(STRIDE_OT_import_bvh.bl_idname, text="Motion Capture (.bvh) - Stride")


def register_menus() -> None:
    bpy.types.TOPBAR_MT_file_import.append(menu_import)  # type: ignore[arg-type]
    bpy.types.TOPBAR_MT_file_export.append(menu_export)  # type: ignore[arg-type]


def unregister_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)  # type: ignore[arg-type]
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)  # type: ignore[arg-type]


CLASSES = (STRIDE_OT_import_bvh, STRIDE_FH_bvh, STRIDE_OT_export_bvh, STRIDE_OT_detect_footsteps,
           STRIDE_OT_write_event_curves, STRIDE_OT_detect_events_from_curves, STRIDE_OT_bake_transition,
           STRIDE_OT_bake_nla_track, STRIDE_OT_pick_time, STRIDE_OT_bake_sync_blend, STRIDE_OT_lock_feet,
           STRIDE_OT_find_target_time, STRIDE_OT_refresh_previews, STRIDE_OT_add_root_motion,
           STRIDE_OT_export_engine)
