"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from . import bridge, compat
from .core import bvh
from .core.clip import Clip


class JobError(ValueError):
    """A user-facing failure: the message says what is wrong and what to do."""


USER_ERRORS = (JobError, bridge.BridgeError, bvh.BVHError, ValueError, OSError)


def find_armature(name: str | None = None, context: Any = None) -> Any:
    """The armature to work on: by name, else the active object, else the only armature."""
    context = context or bpy.context
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise JobError(f"no object named {name!r}")
        if obj.type != "ARMATURE":
            raise JobError(f"object {name!r} is a {obj.type.lower()}, not an armature")
        return obj
    active = getattr(context, "active_object", None)
    if active is not None and active.type == "ARMATURE":
        return active
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    if len(armatures) == 1:
        return armatures[0]
    if not armatures:
        raise JobError("no armature in the scene: import a BVH file or select an armature first")
    names = ", ".join(repr(o.name) for o in armatures[:5])
    raise JobError(f"several armatures ({names}): select one or name it")


def export_bvh(obj: Any, action: str | None, path: str | Path) -> Clip:
    """Write an armature's action (the active one by default) to a BVH file, atomically."""
    clip = bridge.action_to_clip(obj, action or None)
    if clip.n_frames == 0:
        raise JobError(f"action {clip.name!r} has no keys to export")
    bvh.save(clip, path)
    return clip


def import_files(context: Any, paths: Sequence[str | Path], *, single_armature: bool = False,
                 progress: Any = None, **options: Any) -> tuple[list[tuple[Any, Any]], list[str]]:
    """Import BVH files and folders: ([(armature, action)], [error message per failed file]).

    A bad file is reported and skipped; the rest still import. With `single_armature`, every file
    after the first becomes another action on the first file's armature (skeletons must match).
    """
    from . import importer

    done: list[tuple[Any, Any]] = []
    failed: list[str] = []
    files = importer.bvh_files(paths)
    if not files:
        raise JobError("no .bvh files to import")
    for k, path in enumerate(files):
        target = done[0][0] if (single_armature and done) else None

        def step(fraction: float, k: int = k) -> None:
            if progress is not None:
                progress((k + fraction) / len(files))

        try:
            done.append(importer.import_bvh(context, path, target=target, progress=step, **options))
        except USER_ERRORS as exc:
            failed.append(f"{path.name}: {exc}" if str(path) not in str(exc) else str(exc))
    return done, failed


def save_blend(path: str | Path) -> None:
    """Save the open file as a copy at `path` (Blender writes it atomically); the folder must exist."""
    target = Path(path)
    if not target.parent.is_dir():
        raise JobError(f"folder {str(target.parent)!r} does not exist")
    result = bpy.ops.wm.save_as_mainfile(filepath=str(target), copy=True, check_existing=False)
    if result != {"FINISHED"}:
        raise JobError(f"could not save {str(target)!r}")


# -- events ---------------------------------------------------------------------------------------

CURVE_PREFIXES = ('["stride_event_', '["stride_phase"]', '["stride_contact_', '["stride_tag_')
CURVE_GROUP = "Stride Events"


def _armature_action(obj: Any, action: str | None) -> tuple[Any, Any, Clip, bridge.Timing]:
    act, _ = bridge.resolve_action(obj, action or None)
    clip = bridge.action_to_clip(obj, act)
    if clip.n_frames < 2:
        raise JobError(f"action {act.name!r} has fewer than two frames")
    return act, _, clip, bridge.action_timing(obj, act)


def detect_footsteps(obj: Any, action: str | None = None, speed_mps: float = 0.15,
                     **options: Any) -> tuple[Any, dict[str, int]]:
    """FootDown_L / FootDown_R pose markers on the action, exact times kept: (action, counts)."""
    from .core import contacts
    from .markers import replace_track

    act, _, clip, timing = _armature_action(obj, action)
    steps = contacts.footsteps(clip, speed_mps=speed_mps, **options)
    if not any(len(t) for t in steps.values()):
        planted = contacts.contacts(clip, speed_mps=speed_mps, **options)
        frames = slice(clip.motion_start, None)
        if all(p[frames].all() for p in planted.values()):
            hint = (f"the feet never lift: a static pose, or a foot speed threshold too high "
                    f"(try {speed_mps / 2:g} m/s)")
        else:
            hint = (f"no foot comes to rest near the floor below {speed_mps:g} m/s: try a higher "
                    f"foot speed (e.g. {2 * speed_mps:g} m/s)")
        raise JobError(f"no footsteps found in {act.name!r}: {hint}; or check the units (Stride reads "
                       f"{clip.meters_per_unit:g} m per unit from the skeleton's height)")
    counts = {track: len(times) for track, times in steps.items()}
    for track, times in steps.items():
        replace_track(act, track, times, timing)
    return act, counts


def write_event_curves(obj: Any, action: str | None = None, window: float = 0.5,
                       sigma: float = 1 / 120, tracks: str = "ALL") -> tuple[Any, list[str]]:
    """Event-encoding, phase, contact and tag F-curves on the armature's custom properties, in the
    action's own slot: (action, property names written). Replaces only Stride's own curves."""
    from .core import contacts, events
    from .markers import tracks as marker_tracks

    act, slot, clip, timing = _armature_action(obj, action)
    found, tag_markers = marker_tracks(act, timing)
    wanted = None if tracks.strip().upper() == "ALL" else {t.strip() for t in tracks.split(",") if t.strip()}
    if wanted is not None:
        missing = sorted(wanted - set(found))
        if missing:
            raise JobError(f"action {act.name!r} has no event track {missing[0]!r} "
                           f"(its tracks: {', '.join(sorted(found)) or 'none'})")
        found = {k: v for k, v in found.items() if k in wanted}
    times = clip.times
    frames = timing.frame(times)
    curves: dict[str, tuple[list[np.ndarray], str]] = {}
    for track, event_times in found.items():
        sin, cos = events.encode(times, event_times, window, sigma)
        curves[f"stride_event_{track}"] = ([sin, cos], "LINEAR")
    steps = {k: v for k, v in found.items() if k in ("FootDown_L", "FootDown_R")}
    notes: list[str] = []
    try:
        if len(steps) < 2:
            steps = contacts.footsteps(clip)
        angle = contacts.phase(clip, steps)
        curves["stride_phase"] = ([np.sin(angle), np.cos(angle)], "LINEAR")
    except ValueError as exc:
        notes.append(f"no phase curve ({exc})")
    try:
        for foot, planted in contacts.contacts(clip).items():
            curves[f"stride_contact_{foot}"] = ([planted.astype(np.float64)], "CONSTANT")
    except ValueError as exc:
        notes.append(f"no contact curves ({exc})")
    for tag, one_hot in events.one_hot_tags(times, events.from_markers(tag_markers)).items():
        curves[f"stride_tag_{tag}"] = ([one_hot], "CONSTANT")
    if not curves:
        raise JobError(f"action {act.name!r} has no event markers, footsteps or tags to encode")
    bag = compat.channelbag(act, slot, create=True)
    compat.remove_fcurves(bag, [fc for fc in bag.fcurves if fc.data_path.startswith(CURVE_PREFIXES)])
    for prop, (values, interpolation) in curves.items():
        obj[prop] = [0.0] * len(values) if len(values) > 1 else 0.0
        for index, v in enumerate(values):
            fc = compat.new_fcurve(bag, f'["{prop}"]', index, group=CURVE_GROUP)
            compat.write_keys(fc, frames, v, interpolation)
    return act, sorted(curves) + notes


def detect_events_from_curves(obj: Any, action: str | None = None, window: float = 0.5,
                              prefix: str = "stride_event_") -> tuple[Any, dict[str, int]]:
    """Decode (sin, cos) curves `["<prefix><track>"]` back into markers and exact times."""
    from .core import events
    from .markers import replace_track

    act, slot = bridge.resolve_action(obj, action or None)
    timing = bridge.action_timing(obj, act)
    start = f'["{prefix}'
    pairs: dict[str, dict[int, Any]] = {}
    for fc in compat.fcurves(act, slot):
        if fc.data_path.startswith(start) and fc.data_path.endswith('"]'):
            pairs.setdefault(fc.data_path[len(start):-2], {})[fc.array_index] = fc
    complete = {track: p for track, p in pairs.items() if 0 in p and 1 in p}
    if not complete:
        raise JobError(f"action {act.name!r} has no {prefix}<track> curves (index 0 sin, 1 cos) to decode")
    counts = {}
    for track, p in complete.items():
        sin_keys = compat.read_keys(p[0])
        frames = sin_keys[:, 0]
        cos_keys = compat.read_keys(p[1])
        if len(cos_keys) == len(frames) and np.array_equal(cos_keys[:, 0], frames):
            cos = cos_keys[:, 1]
        else:
            cos = np.array([p[1].evaluate(float(f)) for f in frames])
        found = events.detect(timing.seconds(frames), sin_keys[:, 1], cos, window)
        replace_track(act, track, found, timing)
        counts[track] = len(found)
    return act, counts
