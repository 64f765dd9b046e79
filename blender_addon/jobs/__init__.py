"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
What a job does to clips needs no bpy and lives in recipes/; here is what it reads and writes:

- scene.py: the armature and action to work on, what a command needs (`unmet`)
- files.py: BVH import and export, saving the .blend
- events.py: footstep markers, event curves, events from curves, Lock Feet
- transitions.py: Bake Transition, Find Target Time, Bake NLA Track
- sync.py: Bake Sync Blend and its weight curve
- blendspace.py: the armature's gaits and Bake Blend Space (its speed: constant, ramp, keyed)
- path.py: Walk Along Path (a curve object's points, the speed along it)
- results.py: a bake's result as a new action (`write_result`)
- previews.py: the sidebar's previews, kept between redraws
- root_motion.py: Add Root Motion
- engine.py: Export for Engine

Every public name is here, as `jobs.<name>` (the recipes' and errors' too).
"""

from __future__ import annotations

from ..errors import LOWER_PELVIS_HINT, NO_CORE_WORDS, USER_ERRORS, JobError, core_warnings, in_user_words
from ..recipes.blendspace import (
    Baked,
    GaitRow,
    blend_space_clip,
    check_count,
    gait_loops,
    gait_rows,
    gaits_hint,
    listed_speeds,
    result_name,
    slowest_gait,
)
from ..recipes.events import feet_note, find_footsteps, foot_speed, lock_feet_clip
from ..recipes.path import (
    PathFile,
    PathFileError,
    Track,
    check_any,
    circle_xy,
    constant_speed,
    follow_clip,
    line_xy,
    read_path_csv,
    start_floor,
    target_clip,
    travelled,
    walked_name,
)
from ..recipes.previews import CyclePreview, FootstepPreview, GaitsPreview, SyncPreview
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
from .blendspace import (
    SPEED_PATH,
    add_gait,
    bake_blend_space,
    gait_armature,
    gaits_from_selected,
    key_speed,
    remove_gait,
    speed_curve,
    speed_keys,
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
from .path import Walked, curve_points, find_target, follow_path, idle_clip, object_track
from .previews import action_key, forget_previews, preview_footsteps, preview_gaits, preview_sync
from .results import PLAYS_ON, write_result
from .root_motion import RootMotion, add_root_motion
from .scene import (
    ACTION,
    ARMATURE,
    BAKED_FROM,
    GAIT,
    GAITS,
    NLA_TRACK,
    TWO_ACTIONS,
    find_armature,
    gait_names,
    resolve_source,
    unmet,
)
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
    "GAIT",
    "GAITS",
    "ITSELF_APART",
    "LOWER_PELVIS_HINT",
    "NLA_TRACK",
    "NO_CORE_WORDS",
    "PLAYS_ON",
    "SPEED_PATH",
    "TRANSITION_METHODS",
    "TWO_ACTIONS",
    "USER_ERRORS",
    "WEIGHT_PROPERTY",
    "WRITTEN_CURVES",
    "Baked",
    "CyclePreview",
    "Exported",
    "FootstepPreview",
    "GaitRow",
    "GaitsPreview",
    "JobError",
    "PathFile",
    "PathFileError",
    "RootMotion",
    "SyncPreview",
    "Track",
    "Walked",
    "action_key",
    "add_cycles_modifiers",
    "add_gait",
    "add_root_motion",
    "bake_blend_space",
    "bake_frames",
    "bake_nla_track",
    "bake_sync_blend",
    "bake_transition",
    "best_target_time",
    "blend_space_clip",
    "check_any",
    "check_count",
    "check_lengths",
    "circle_xy",
    "constant_speed",
    "contact_masks",
    "core_method",
    "core_warnings",
    "curve_points",
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
    "find_target",
    "find_target_time",
    "follow_clip",
    "follow_path",
    "foot_speed",
    "forget_previews",
    "gait_armature",
    "gait_loops",
    "gait_names",
    "gait_rows",
    "gaits_from_selected",
    "gaits_hint",
    "idle_clip",
    "import_files",
    "in_user_words",
    "joint_mask",
    "key_speed",
    "key_weight_curve",
    "line_xy",
    "listed_speeds",
    "lock_feet_action",
    "lock_feet_clip",
    "loops",
    "nla_actions",
    "object_track",
    "played_cycles",
    "preview_footsteps",
    "preview_gaits",
    "preview_sync",
    "read_path_csv",
    "remove_gait",
    "resolve_source",
    "result_name",
    "save_blend",
    "slowest_gait",
    "speed_curve",
    "speed_keys",
    "start_floor",
    "sync_clip",
    "sync_weight",
    "target_clip",
    "transition_clip",
    "transition_pieces",
    "travelled",
    "unmet",
    "walked_name",
    "write_event_curves",
    "write_result",
]
