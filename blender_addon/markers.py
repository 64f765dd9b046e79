"""Pose markers as event tracks, and which of them Stride made.

Any pose marker name is an event track (FootDown_L, Jump, ...); `<tag>_start` / `<tag>_end` pairs
are tag ranges. Stride keeps exact (sub-frame) event times in `action["stride_events"]`
({track: [seconds]}) and the markers it made in `action["stride_auto_markers"]` ({track: [frames]}).
A marker is Stride's only while its (name, frame) is in that list, so a marker an animator added
or moved is never touched by a re-run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bridge import EVENTS_KEY, Timing

AUTO_KEY = "stride_auto_markers"


def _stored(action: Any, key: str) -> dict[str, list[float]]:
    value = action.get(key)
    return {str(k): list(v) for k, v in value.items()} if value else {}


def auto_markers(action: Any) -> dict[str, list[int]]:
    return {k: [int(f) for f in v] for k, v in _stored(action, AUTO_KEY).items()}


def is_tag_marker(name: str) -> bool:
    return name.endswith("_start") or name.endswith("_end")


def replace_track(action: Any, track: str, times: np.ndarray, timing: Timing) -> int:
    """Make Stride's markers of `track` match `times` (seconds): remove the ones Stride made
    before (unless moved or renamed by hand), add one per time at the nearest frame unless a
    marker of that name is already there, and keep the exact times. Returns markers added."""
    auto = auto_markers(action)
    mine = set(auto.get(track, []))
    for marker in list(action.pose_markers):
        if marker.name == track and marker.frame in mine:
            action.pose_markers.remove(marker)
    taken = {m.frame for m in action.pose_markers if m.name == track}
    frames = np.rint(timing.frame(times)).astype(int).tolist() if len(times) else []
    made = []
    for frame in frames:
        if frame in taken:
            continue
        marker = action.pose_markers.new(track)
        marker.frame = frame
        taken.add(frame)
        made.append(frame)
    auto[track] = made
    action[AUTO_KEY] = {k: v for k, v in auto.items() if v}
    events = _stored(action, EVENTS_KEY)
    events[track] = [float(t) for t in times]
    action[EVENTS_KEY] = {k: v for k, v in events.items() if v}
    return len(made)


def tracks(action: Any, timing: Timing) -> tuple[dict[str, np.ndarray], list[tuple[str, float]]]:
    """({track: event times in seconds}, [(tag marker name, seconds)]) from the action's markers.

    Stride's own markers give their exact stored times; markers placed by hand give their frame.
    """
    exact = _stored(action, EVENTS_KEY)
    auto = auto_markers(action)
    events: dict[str, list[float]] = {}
    tags: list[tuple[str, float]] = []
    for marker in sorted(action.pose_markers, key=lambda m: (m.name, m.frame)):
        seconds = float(timing.seconds(marker.frame))
        if is_tag_marker(marker.name):
            tags.append((marker.name, seconds))
            continue
        if marker.frame in auto.get(marker.name, []):
            near = [t for t in exact.get(marker.name, [])
                    if abs(float(timing.frame(t)) - marker.frame) <= 0.5]
            seconds = near[0] if near else seconds
        events.setdefault(marker.name, []).append(seconds)
    return {k: np.sort(np.asarray(v)) for k, v in events.items()}, tags
