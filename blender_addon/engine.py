"""Ready for the engine (issue 39's names, where they were first published): Add Root Motion
(jobs/root_motion.py), Export for Engine (jobs/engine.py) and what they share without bpy
(recipes/engine.py: names, exporter settings by version, the events file, GLB extras)."""

from __future__ import annotations

from .jobs.engine import Exported, action_entry, chosen_actions, export_engine, exporter_options
from .jobs.root_motion import RootMotion, add_root_motion, has_root_motion
from .recipes.engine import (
    ARMATURE_NAME,
    COPY_OF,
    ENGINES,
    EXTENSIONS,
    FORMATS,
    ROOT_NAME,
    ROOT_OF,
    ROOT_SUFFIX,
    SCHEMA,
    SIDECAR_SUFFIX,
    curve_name,
    glb_json,
    sidecar_path,
    with_animation_extras,
)

__all__ = [
    "ARMATURE_NAME", "COPY_OF", "ENGINES", "EXTENSIONS", "FORMATS", "ROOT_NAME", "ROOT_OF", "ROOT_SUFFIX",
    "SCHEMA", "SIDECAR_SUFFIX", "Exported", "RootMotion", "action_entry", "add_root_motion", "chosen_actions",
    "curve_name", "export_engine", "exporter_options", "glb_json", "has_root_motion", "sidecar_path",
    "with_animation_extras",
]
