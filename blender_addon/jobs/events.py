"""Event tracks on an action: footstep markers (Detect Footsteps), event-encoding, phase, contact and
tag curves (Write Event Curves) and markers decoded from such curves (Events from Curves); and the
planted feet held (Lock Feet), from the action's contact curves where it has them."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import bridge, carry, compat
from ..core import contacts, events
from ..core.clip import Clip
from ..errors import JobError
from ..markers import replace_track
from ..markers import tracks as marker_tracks
from ..options import DecodeOptions, EventOptions, FootstepOptions, LockFeetOptions
from ..recipes.events import feet_note, find_footsteps, foot_speed, lock_feet_clip
from ..timing import Timing
from ..wording import UI, Face
from .results import write_result

CURVE_GROUP = "Stride Events"


def _armature_action(obj: Any, action: str | None,
                     source: str = "AUTO") -> tuple[Any, Any, Clip, Timing]:
    act, _ = bridge.resolve_action(obj, action or None)
    clip, timing = bridge.read_action(obj, act, source=source)
    if clip.n_frames < 2:
        raise JobError(f"action {act.name!r} has fewer than two frames")
    return act, _, clip, timing


def detect_footsteps(obj: Any, *, options: FootstepOptions) -> tuple[Any, dict[str, int], str]:
    """FootDown_L / FootDown_R pose markers on the action, exact times kept: (action, counts, what
    the feet are: their names and what decided them, and any doubt the body map or the contacts
    have). Foot Speed 0: Auto."""
    act, _, clip, timing = _armature_action(obj, options.action, options.source)
    steps, doubts = find_footsteps(clip, act.name, foot_speed(options.speed_mps),
                                   bridge.rate_note(obj, act, clip), lifts=options.lifts)
    counts = {track: len(times) for track, times in steps.items()}
    for track, times in steps.items():
        replace_track(act, track, times, timing)
    return act, counts, "; ".join([feet_note(clip), *doubts])


def contact_masks(act: Any, slot: Any, timing: Timing, clip: Clip) -> dict[str, np.ndarray] | None:
    """The action's own contacts, {'L': bool [T], 'R': ...}, from the `stride_contact_L/R` curves
    Write Event Curves keyed (and an animator may have edited), at the clip's frames; None when
    the action has none."""
    bag = compat.channelbag(act, slot, create=False)
    if bag is None:
        return None
    frames = timing.frame(clip.times)
    out = {}
    for fc in bag.fcurves:
        for side in ("L", "R"):
            if fc.data_path == bridge.property_path(f"stride_contact_{side}"):
                out[side] = np.array([fc.evaluate(float(f)) for f in frames]) > 0.5
    return out if len(out) == 2 else None


def lock_feet_action(obj: Any, *, options: LockFeetOptions, progress: Callable[[float], None] | None = None,
                     face: Face = UI) -> tuple[Any, Clip, list[str]]:
    """A new action with the planted feet of the action (the active one by default) held where they
    land: (action, clip, notes). Contacts come from the action's `stride_contact_L/R` curves when
    it has them (Write Event Curves; edit them to say where a foot is planted), else they are
    detected (Foot Speed 0: Auto). `face`: as for lock_feet_clip."""
    act, slot, clip, timing = _armature_action(obj, options.action, options.source)
    out, notes = lock_feet_clip(clip, options=options, masks=contact_masks(act, slot, timing, clip),
                                face=face)
    result = write_result(obj, out, f"{act.name} (feet locked)", timing, source=act, progress=progress,
                          pieces=[carry.Piece(act, slot)])
    return result, out, notes


WRITTEN_CURVES = "stride_curves"  # on an action: the properties Write Event Curves keyed there


def write_event_curves(obj: Any, *, options: EventOptions) -> tuple[Any, list[str]]:
    """Event-encoding, phase, contact and tag F-curves on the armature's custom properties, in the
    action's own slot: (action, property names written). Replaces only Stride's own curves: the
    ones it wrote before and the ones it writes now. Foot Speed: contacts' and footsteps', as for
    detect_footsteps."""
    tracks, window, sigma = options.tracks, options.window, options.sigma
    speed_mps = foot_speed(options.speed_mps)
    act, slot, clip, timing = _armature_action(obj, options.action, options.source)
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
        # Named per track, where the window is too wide for its events to decode exactly.
        close = events.describe_close_gaps(track, events.close_gaps(event_times, window), window)
        if close:
            warnings.warn(close, events.EventWarning, stacklevel=2)
    steps = {k: v for k, v in found.items() if k in ("FootDown_L", "FootDown_R")}
    notes: list[str] = []
    try:
        if len(steps) < 2:
            steps = contacts.footsteps(clip, speed_mps=speed_mps)
        angle = contacts.phase(clip, steps)
        curves["stride_phase"] = ([np.sin(angle), np.cos(angle)], "LINEAR")
    except ValueError as exc:
        notes.append(f"no phase curve ({exc})")
    try:
        for foot, planted in contacts.contacts(clip, speed_mps=speed_mps).items():
            curves[f"stride_contact_{foot}"] = ([planted.astype(np.float64)], "CONSTANT")
    except ValueError as exc:
        notes.append(f"no contact curves ({exc})")
    for tag, one_hot in events.one_hot_tags(times, events.from_markers(tag_markers)).items():
        curves[f"stride_tag_{tag}"] = ([one_hot], "CONSTANT")
    if not curves:
        raise JobError(f"action {act.name!r} has no event markers, footsteps or tags to encode: run "
                       "Detect Footsteps or add pose markers first")
    bag = compat.channelbag(act, slot, create=True)
    # Curves keyed by hand under the same prefixes (a network's predictions) stay.
    ours = {bridge.property_path(p) for p in [*act.get(WRITTEN_CURVES, []), *curves]}
    compat.remove_fcurves(bag, [fc for fc in bag.fcurves if fc.data_path in ours])
    for prop, (values, interpolation) in curves.items():
        obj[prop] = [0.0] * len(values) if len(values) > 1 else 0.0
        for index, v in enumerate(values):
            fc = compat.new_fcurve(bag, bridge.property_path(prop), index, group=CURVE_GROUP)
            compat.write_keys(fc, frames, v, interpolation)
    act[WRITTEN_CURVES] = sorted(curves)
    return act, sorted(curves) + notes


def detect_events_from_curves(obj: Any, *, options: DecodeOptions) -> tuple[Any, dict[str, int]]:
    """Decode (sin, cos) curves `["<prefix><track>"]` back into markers and exact times."""
    prefix, window = options.prefix, options.window
    act, slot = bridge.resolve_action(obj, options.action or None)
    timing = bridge.action_timing(obj, act)
    pairs: dict[str, dict[int, Any]] = {}
    for fc in compat.fcurves(act, slot):
        named = bridge.quoted_name(fc.data_path)
        track = named[0][len(prefix):] if named and not named[1] and named[0].startswith(prefix) else ""
        if track:
            pairs.setdefault(track, {})[fc.array_index] = fc
    complete = {track: p for track, p in pairs.items() if 0 in p and 1 in p}
    if not complete:
        raise JobError(f"action {act.name!r} has no {prefix}<track> curves (index 0 sin, 1 cos) to "
                       "decode: run Write Event Curves first, or key such curves")
    counts = {}
    for track, p in complete.items():
        sin_keys = compat.read_keys(p[0])
        frames = sin_keys[:, 0]
        cos_keys = compat.read_keys(p[1])
        if len(cos_keys) == len(frames) and np.array_equal(cos_keys[:, 0], frames):
            cos = cos_keys[:, 1]
        else:
            cos = np.array([p[1].evaluate(float(f)) for f in frames])
        found = events.detect(timing.seconds(frames), sin_keys[:, 1], cos, window, span=options.span,
                              tolerance=options.tolerance or None, causal=options.causal)
        replace_track(act, track, found, timing)
        counts[track] = len(found)
    return act, counts
