"""Actions <-> Clips: the one place Blender animation data turns into core data and back.

- space.py: where an armature's bones sit in clip space (import settings, world transform, rest pose)
- keys.py: reading keys (`action_to_clip`, `action_timing`, F-curve paths, `curve_at`)
- evaluated.py: reading what the rig plays (`evaluated_clip`, `rig_driven`)
- reading.py: one read for a job (`read_action`: the source chosen and noted, the user's feet)
- checks.py: is an action this armature's (skeleton, rest pose, bones, rate)
- nla.py: what the NLA plays, as clips to sequence (`nla_items`)
- writing.py: clips into new actions (`clip_to_action`)

Every public name is here, as `bridge.<name>`.
"""

from __future__ import annotations

from ..errors import BridgeError, BridgeWarning
from ..recipes.actions import Space, clip_layout, quoted_name
from ..timing import Timing
from .checks import action_skeleton, check_bones, check_rest, check_skeleton, rate_note
from .evaluated import evaluated_bones, evaluated_clip, rig_driven
from .keys import (
    EVENTS_KEY,
    action_timing,
    action_to_clip,
    curve_at,
    no_keys,
    property_curve,
    property_path,
    resolve_action,
)
from .nla import nla_items, nla_tracks
from .reading import (
    FOOT_LABELS,
    SOURCES,
    chosen_feet,
    read_action,
    read_notes,
    read_source,
    remember_feet,
    source_clip,
    with_feet,
    with_unit,
)
from .space import SETTINGS_KEY, current_scene, import_settings, rest_pose, scene_fps, space, world_matrix
from .writing import clip_to_action, progress_after

__all__ = [
    "EVENTS_KEY", "FOOT_LABELS", "SETTINGS_KEY", "SOURCES", "BridgeError", "BridgeWarning", "Space",
    "Timing", "action_skeleton", "action_timing", "action_to_clip", "check_bones", "check_rest",
    "check_skeleton", "chosen_feet", "clip_layout", "clip_to_action", "current_scene", "curve_at",
    "evaluated_bones", "evaluated_clip", "import_settings", "nla_items", "nla_tracks", "no_keys",
    "progress_after", "property_curve", "property_path", "quoted_name", "rate_note", "read_action",
    "read_notes", "read_source", "remember_feet", "resolve_action", "rest_pose", "rig_driven", "scene_fps",
    "source_clip", "space", "with_feet", "with_unit", "world_matrix",
]
