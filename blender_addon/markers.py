"""Pose markers as event tracks, and which of them Stride made.

Any pose marker name is an event track (FootDown_L, Jump, ...); `<tag>_start` / `<tag>_end` pairs
are tag ranges. Stride keeps exact (sub-frame) event times in `action["stride_events"]`
({track: [seconds]}) and the markers it made in `action["stride_auto_markers"]` ({track: [frames]}).
A marker is Stride's only while its (name, frame) is in that list, so a marker an animator added
or moved is never touched by a re-run; and one near a detected event is taken as the animator's
correction of it, so a re-run does not add that event again beside it (`replace_track`).
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


# A marker placed by hand within this many seconds of a detected event is that event, corrected:
# less than half the shortest interval between two events of one track that Stride detects (a
# foot's touchdowns, 0.35 s apart in a sprint), so it never stands in for the next step, and
# wider than a detector's error (a frame or two).
CORRECTION_SECONDS = 0.15


def corrected(times: np.ndarray, user: np.ndarray, window: float = CORRECTION_SECONDS) -> np.ndarray:
    """Which of `times` (seconds) a marker placed by hand stands for: a bool mask, True where one
    of `user` (seconds) is within `window` of that time, each user marker matched to one time
    only, nearest pairs first."""
    times, user = np.asarray(times, dtype=np.float64), np.asarray(user, dtype=np.float64)
    taken = np.zeros(len(times), dtype=bool)
    if not len(times) or not len(user):
        return taken
    gap = np.abs(times[:, None] - user[None, :])
    used = np.zeros(len(user), dtype=bool)
    for flat in np.argsort(gap, axis=None, kind="stable"):
        i, j = divmod(int(flat), len(user))
        if gap[i, j] > window:
            break
        if not taken[i] and not used[j]:
            taken[i] = used[j] = True
    return taken


def replace_track(action: Any, track: str, times: np.ndarray, timing: Timing) -> int:
    """Make Stride's markers of `track` match `times` (seconds): remove the ones Stride made
    before (unless moved or renamed by hand), add one per time at the nearest frame unless a
    marker of that name placed by hand (added, or one of Stride's moved) is within
    CORRECTION_SECONDS of it: that marker is the user's correction of the event, kept in its
    place and its time kept for the event. Returns markers added."""
    auto = auto_markers(action)
    mine = set(auto.get(track, []))
    for marker in list(action.pose_markers):
        if marker.name == track and marker.frame in mine:
            action.pose_markers.remove(marker)
    user_frames = sorted({m.frame for m in action.pose_markers if m.name == track})
    user = np.asarray(timing.seconds(np.asarray(user_frames, dtype=np.float64))).reshape(-1)
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    kept = times[~corrected(times, user)]
    frames = np.rint(timing.frame(kept)).astype(int) if len(kept) else np.zeros(0, dtype=int)
    on_user = np.isin(frames, user_frames)  # a user's marker already on that frame stands for it
    kept, frames = kept[~on_user], frames[~on_user]
    taken: set[int] = set()
    made = []
    for frame in frames.tolist():
        if frame in taken:
            continue
        marker = action.pose_markers.new(track)
        marker.frame = frame
        taken.add(frame)
        made.append(frame)
    auto[track] = made
    action[AUTO_KEY] = {k: v for k, v in auto.items() if v}
    events = _stored(action, EVENTS_KEY)
    # The exact times are what the markers say: Stride's at their sub-frame times, the user's at
    # their frames.
    events[track] = sorted(float(t) for t in np.concatenate([kept, user]))
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
