"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
What a job does to clips needs no bpy and lives in recipes/; here is what it reads and writes:

- scene.py: the armature and action to work on, what a command needs (`unmet`)
- files.py: BVH import and export, saving the .blend
- events.py: footstep markers, event curves, events from curves, Lock Feet
- transitions.py: Bake Transition, Find Target Time, Bake NLA Track
- sync.py: Bake Sync Blend and its weight curve
- results.py: a bake's result as a new action (`write_result`)
- previews.py: the sidebar's previews, kept between redraws
- root_motion.py: Add Root Motion
- engine.py: Export for Engine

Every public name is here, as `jobs.<name>` (the recipes' and errors' too).
"""

from __future__ import annotations

from ..errors import LOWER_PELVIS_HINT, NO_CORE_WORDS, USER_ERRORS, JobError, core_warnings, in_user_words
from ..recipes.events import feet_note, find_footsteps, foot_speed, lock_feet_clip
from ..recipes.previews import CyclePreview, FootstepPreview, SyncPreview
from ..recipes.sync import (
    CYCLES_NEED_ONE_WEIGHT,
    bake_frames,
    cycle_of,
    loops,
    played_cycles,
    sync_clip,
    sync_weight,
)
from ..recipes.transitions import (
    ITSELF_APART,
    TRANSITION_METHODS,
    best_target_time,
    check_lengths,
    core_method,
    joint_mask,
    transition_clip,
)
from .engine import Exported, export_engine
from .events import (
    CURVE_GROUP,
    WRITTEN_CURVES,
    contact_masks,
    detect_events_from_curves,
    detect_footsteps,
    lock_feet_action,
    write_event_curves,
)
from .files import export_bvh, import_files, save_blend
from .previews import action_key, forget_previews, preview_footsteps, preview_sync
from .results import PLAYS_ON, write_result
from .root_motion import RootMotion, add_root_motion
from .scene import ACTION, ARMATURE, BAKED_FROM, NLA_TRACK, TWO_ACTIONS, find_armature, resolve_source, unmet
from .sync import (
    DEFAULT_RAMP,
    WEIGHT_PROPERTY,
    add_cycles_modifiers,
    bake_sync_blend,
    default_ramp,
    ensure_weight_curve,
    key_weight_curve,
)
from .transitions import bake_nla_track, bake_transition, find_target_time, nla_actions, transition_pieces

__all__ = [
    "ACTION",
    "ARMATURE",
    "BAKED_FROM",
    "CURVE_GROUP",
    "CYCLES_NEED_ONE_WEIGHT",
    "DEFAULT_RAMP",
    "ITSELF_APART",
    "LOWER_PELVIS_HINT",
    "NLA_TRACK",
    "NO_CORE_WORDS",
    "PLAYS_ON",
    "TRANSITION_METHODS",
    "TWO_ACTIONS",
    "USER_ERRORS",
    "WEIGHT_PROPERTY",
    "WRITTEN_CURVES",
    "CyclePreview",
    "Exported",
    "FootstepPreview",
    "JobError",
    "RootMotion",
    "SyncPreview",
    "action_key",
    "add_cycles_modifiers",
    "add_root_motion",
    "bake_frames",
    "bake_nla_track",
    "bake_sync_blend",
    "bake_transition",
    "best_target_time",
    "check_lengths",
    "contact_masks",
    "core_method",
    "core_warnings",
    "cycle_of",
    "default_ramp",
    "detect_events_from_curves",
    "detect_footsteps",
    "ensure_weight_curve",
    "export_bvh",
    "export_engine",
    "feet_note",
    "find_armature",
    "find_footsteps",
    "find_target_time",
    "foot_speed",
    "forget_previews",
    "import_files",
    "in_user_words",
    "joint_mask",
    "key_weight_curve",
    "lock_feet_action",
    "lock_feet_clip",
    "loops",
    "nla_actions",
    "played_cycles",
    "preview_footsteps",
    "preview_sync",
    "resolve_source",
    "save_blend",
    "sync_clip",
    "sync_weight",
    "transition_clip",
    "transition_pieces",
    "unmet",
    "write_event_curves",
    "write_result",
]
