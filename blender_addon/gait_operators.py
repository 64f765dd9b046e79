"""Operators on the armature's gaits: the Gaits list's add, remove and from-selected, Bake Blend
Space and Walk Along Path. Declared as every operator is (operators.JobOperator, an options class
from options.py, a job in jobs/)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import jobs
from .operators import ActionOperator, JobOperator, progress
from .options import BlendSpaceOptions, FollowPathOptions


class STRIDE_OT_gait_add(ActionOperator):
    """Add the armature's active action to its gaits, for Bake Blend Space (a walk, a jog, a run,
    ...: a take or a loop)"""

    bl_idname = "stride.gait_add"
    bl_label = "Add Gait"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: Any) -> set[str]:
        obj = self.target(context)
        gait = jobs.add_gait(obj, obj.animation_data.action)
        self.tell("INFO", f"Added gait {gait.action.name!r} to {obj.name!r} ({len(obj.stride.gaits)} gaits)")
        return {"FINISHED"}


class STRIDE_OT_gait_remove(JobOperator):
    """Remove the chosen gait from the armature's gaits (its action stays)"""

    bl_idname = "stride.gait_remove"
    bl_label = "Remove Gait"
    bl_options = {"REGISTER", "UNDO"}
    needs = jobs.ARMATURE

    @classmethod
    def poll(cls, context: Any) -> bool:
        if not super().poll(context):
            return False
        obj = jobs.find_armature(context=context)
        return bool(len(obj.stride.gaits)) or cls.refuse(f"{obj.name!r} has no gaits to remove")

    def run(self, context: Any) -> set[str]:
        obj = jobs.find_armature(context=context)
        name = jobs.remove_gait(obj, obj.stride.gait_index)
        self.tell("INFO", f"Removed gait {name!r} from {obj.name!r} ({len(obj.stride.gaits)} gaits)")
        return {"FINISHED"}


class STRIDE_OT_gaits_from_selected(JobOperator):
    """Add the active actions of the selected armatures of this armature's skeleton to the active
    armature's gaits, each read on the armature it was made for"""

    bl_idname = "stride.gaits_from_selected"
    bl_label = "Gaits from Selected"
    bl_options = {"REGISTER", "UNDO"}
    needs = jobs.ARMATURE

    def run(self, context: Any) -> set[str]:
        obj = jobs.find_armature(context=context)
        added, already, skipped = jobs.gaits_from_selected(obj, context.selected_objects)
        for why in skipped:
            self.tell("WARNING", f"Not added: {why}")
        if not added:
            gaits = ", ".join(repr(n) for n in already)
            said = ("no selected armature has an active action to add" if not (already or skipped) else
                    "nothing new to add" + (f": {gaits} already gaits" if already else ""))
            self.tell("ERROR", f"{said[:1].upper()}{said[1:]}; select armatures of this skeleton with the "
                               "takes of other gaits active, then this one last")
            return {"CANCELLED"}
        self.tell("INFO", f"Added {len(added)} gait(s) to {obj.name!r}: {', '.join(repr(n) for n in added)} "
                          f"({len(obj.stride.gaits)} gaits)")
        return {"FINISHED"}


class STRIDE_OT_bake_blend_space(JobOperator):
    """Bake the armature's gaits blended by speed, in step (feet planting together), as a new action:
    at a constant speed, a ramp, or the armature's Speed as keyed; the gaits' actions are not changed"""

    bl_idname = "stride.bake_blend_space"
    bl_label = "Bake Blend Space"
    bl_options = {"REGISTER", "UNDO"}
    options_class = BlendSpaceOptions
    needs = jobs.GAITS

    def run(self, context: Any) -> set[str]:
        obj = jobs.find_armature(context=context)
        with progress(context) as step:
            action, baked = jobs.bake_blend_space(obj, options=self.read_options(), progress=step)
        speeds = baked.keys[1]
        steady = np.ptp(speeds) < 5e-3
        said = f"{speeds[0]:.2f} m/s" if steady else f"{speeds.min():.2f}-{speeds.max():.2f} m/s"
        self.tell("INFO", f"Baked action {action.name!r}: {baked.clip.n_frames} frames at {said}, "
                          f"{len(baked.rows)} gaits")
        return {"FINISHED"}


class STRIDE_OT_follow_path(JobOperator):
    """Walk the armature's gaits along a curve (the Target) at a speed, or after an animated object in
    time, feet planted through the turns, from and into an Idle if chosen, as a new action from the
    current frame; the gaits' actions are not changed"""

    bl_idname = "stride.follow_path"
    bl_label = "Walk Along Path"
    bl_options = {"REGISTER", "UNDO"}
    options_class = FollowPathOptions
    needs = jobs.GAIT

    def run(self, context: Any) -> set[str]:
        obj = jobs.find_armature(context=context)
        with progress(context) as step:
            action, walked = jobs.follow_path(obj, options=self.read_options(),
                                              selected=context.selected_objects, progress=step)
        clip = walked.clip
        steps = sum(len(v) for k, v in clip.events.items() if k.startswith("FootDown"))
        self.tell("INFO", f"Baked action {action.name!r}: {clip.n_frames} frames along {walked.along!r}, "
                          f"{steps} footsteps, from frame {walked.first:g}")
        return {"FINISHED"}


CLASSES = (STRIDE_OT_gait_add, STRIDE_OT_gait_remove, STRIDE_OT_gaits_from_selected,
           STRIDE_OT_bake_blend_space, STRIDE_OT_follow_path)
