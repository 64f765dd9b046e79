"""What an NLA stack plays, frame by frame, as takes joined by transitions.

Blender's NLA (anim_sys `nlastrips_ctime_get_strip`, `nlastrip_get_influence`) evaluates tracks
from the bottom up. On one track at frame f one strip plays at most: the one whose [start, end]
holds f (the first listed where two touch); before the track's first strip, that strip if it
extends 'HOLD'; after a strip (before the next, or after the last), that strip unless it extends
'NOTHING'. A held strip is evaluated at its nearest end. A muted strip found there plays nothing.
Its influence is |f - start| / blend_in within blend_in of its start, else |end - f| / blend_out
within blend_out of its end (at the held frame for a hold), else 1; influence 0 plays nothing.
A Replace strip lerps its pose over what the tracks below make by its influence, so the top
strip at influence 1 hides everything under it.

`plays` reads that as what a bake can make: runs of frames where one strip alone shows (at
influence 1, nothing partial above it), joined where the NLA blends from one into the next
(blend in or out, over the track below or over nothing) or cuts. Anything else (nothing playing,
a strip fading in and out again without taking over, three strips blending at once) is an
`NlaError` naming the strips and frames. Frames are scene frames; strips are numbered as given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

# Influence within this of 1 is full (Blender stores blend times and frames as float32).
_FULL = 1e-6


class NlaError(ValueError):
    """An NLA set-up a bake cannot reproduce; the message names the strips and frames."""


class Strip(NamedTuple):
    """One NLA strip as the stack evaluation needs it."""

    name: str  # as messages name it, e.g. "strip 'run' on track 'Upper'"
    track: int  # 0 is the bottom track; strips of one track in their list order
    start: float
    end: float
    blend_in: float = 0.0
    blend_out: float = 0.0
    extend: str = "HOLD_FORWARD"  # Blender's extrapolation: HOLD, HOLD_FORWARD or NOTHING
    muted: bool = False


class Segment(NamedTuple):
    """A strip that plays alone from frame `first` (the switch into it, or the bake's first
    frame) to frame `last` (the switch out of it, or the bake's last frame)."""

    strip: int
    first: int
    last: int


def influence(strip: Strip, frame: npt.ArrayLike) -> np.ndarray:
    """The strip's influence at `frame` (inside [start, end]), as nlastrip_get_influence."""
    f = np.asarray(frame, dtype=np.float64)
    out = np.ones(f.shape)
    if strip.blend_out > 0.0:
        fading = f >= strip.end - strip.blend_out
        out = np.where(fading, np.abs(strip.end - f) / strip.blend_out, out)
    if strip.blend_in > 0.0:
        rising = f <= strip.start + strip.blend_in
        out = np.where(rising, np.abs(f - strip.start) / strip.blend_in, out)
    return out


def evaluate(strips: Sequence[Strip], frames: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(strip [K, F] int, -1 where the track plays nothing; influence [K, F]; held frame [K, F],
    the frame the strip is evaluated at) for each track k (0 the bottom) at each of `frames`."""
    f = np.asarray(frames, dtype=np.float64)
    n_tracks = max((s.track for s in strips), default=-1) + 1
    which = np.full((n_tracks, len(f)), -1, dtype=np.int64)
    weight = np.zeros((n_tracks, len(f)))
    at = np.tile(f, (max(n_tracks, 0), 1))
    for k in range(n_tracks):
        ids = [i for i, s in enumerate(strips) if s.track == k]
        if not ids:
            continue
        found = np.full(len(f), -1, dtype=np.int64)
        held = f.copy()
        for i in ids:
            s = strips[i]
            inside = (found < 0) & (f >= s.start) & (f <= s.end)
            found[inside] = i
        first = strips[ids[0]]
        before = (found < 0) & (f < first.start)
        if first.extend == "HOLD":
            found[before], held[before] = ids[0], first.start
        for a, b in zip(ids, [*ids[1:], None], strict=True):
            s = strips[a]
            after = (found < 0) & (f > s.end) & ((f < strips[b].start) if b is not None else True)
            if s.extend != "NOTHING":
                found[after], held[after] = a, s.end
        w = np.zeros(len(f))
        for i in ids:
            here = found == i
            if strips[i].muted:
                found[here] = -1
            elif here.any():
                w[here] = influence(strips[i], held[here])
        found[w <= 0.0] = -1
        which[k], weight[k], at[k] = found, np.where(found >= 0, w, 0.0), held
    return which, weight, at


def _frames(frames: np.ndarray, mask: np.ndarray) -> str:
    """'frames 12-30' for the frames where mask is True (first and last)."""
    picked = frames[mask]
    return f"frame {picked[0]}" if len(picked) == 1 else f"frames {picked[0]}-{picked[-1]}"


def plays(strips: Sequence[Strip], first: int, last: int) -> tuple[list[Segment], list[int]]:
    """([Segment], blend frames per switch: the NLA's blend (frames from the switch to the first
    frame the next strip shows alone), 0 where it cuts) of what the stack plays at frames
    first..last; NlaError when that is not takes joined by blends (see the module notes)."""
    frames = np.arange(int(first), int(last) + 1)
    which, weight, _ = evaluate(strips, frames)
    n_tracks, n = which.shape
    owner = np.full(n, -1, dtype=np.int64)
    shown: list[set[int]] = []
    for t in range(n):
        full = [k for k in range(n_tracks) if which[k, t] >= 0 and weight[k, t] >= 1.0 - _FULL]
        lowest = full[-1] if full else 0
        visible = {int(which[k, t]) for k in range(lowest, n_tracks) if which[k, t] >= 0}
        shown.append(visible)
        if full and len(visible) == 1:
            owner[t] = which[full[-1], t]
    solid = np.flatnonzero(owner >= 0)
    if not len(solid):
        raise NlaError(f"no strip plays alone at any of frames {first}-{last}: "
                       + _blending(strips, frames, shown, np.ones(n, dtype=bool)))
    if solid[0] > 0:
        raise NlaError(_not_alone(strips, frames, shown, np.arange(n) < solid[0], set(),
                                  "before any strip plays alone (a bake starts on a strip at full "
                                  "influence)"))
    if solid[-1] < n - 1:
        raise NlaError(_not_alone(strips, frames, shown, np.arange(n) > solid[-1], set(),
                                  "after the last strip that plays alone (a bake ends on a strip at full "
                                  "influence)"))
    # Runs of one owner: their first and last frames (indices into frames).
    breaks = np.flatnonzero((np.diff(solid) > 1) | (np.diff(owner[solid]) != 0))
    starts = np.concatenate([[solid[0]], solid[breaks + 1]])
    stops = np.concatenate([solid[breaks], [solid[-1]]])
    segments: list[Segment] = []
    blends: list[int] = []
    for k, (a, b) in enumerate(zip(starts, stops, strict=True)):
        strip = int(owner[a])
        if k:
            p = int(stops[k - 1])
            before = int(owner[p])
            between = np.zeros(n, dtype=bool)
            between[p + 1:a] = True
            if between.any():
                involved = set().union(*(shown[t] for t in range(p + 1, a)))
                if any(not shown[t] for t in range(p + 1, a)):
                    empty = between & np.array([not v for v in shown])
                    raise NlaError(f"nothing plays at {_frames(frames, empty)}, between "
                                   f"{strips[before].name} and {strips[strip].name}: close the gap, or "
                                   f"set Extrapolation to Hold Forward on {strips[before].name} "
                                   "(Strip sidebar, N in the NLA Editor)")
                if before == strip:
                    raise NlaError(_not_alone(strips, frames, shown, between, {strip},
                                              f"over {strips[strip].name}, fading in and out again without "
                                              "taking over"))
                if involved - {before, strip}:
                    raise NlaError(_not_alone(strips, frames, shown, between, {before, strip},
                                              f"while {strips[before].name} blends into {strips[strip].name} "
                                              "(a bake blends two strips at a time)"))
            blends.append(int(a - p) if a - p > 1 else 0)
            segments[-1] = segments[-1]._replace(last=int(frames[p]))
            segments.append(Segment(strip, int(frames[p]), int(frames[b])))
        else:
            segments.append(Segment(strip, int(frames[a]), int(frames[b])))
    return segments, blends


def _blending(strips: Sequence[Strip], frames: np.ndarray, shown: list[set[int]], mask: np.ndarray) -> str:
    names = sorted({strips[i].name for t in np.flatnonzero(mask) for i in shown[t]})
    return ("nothing plays there" if not names else
            f"{', '.join(names)} play at partial influence there")


def _not_alone(strips: Sequence[Strip], frames: np.ndarray, shown: list[set[int]], mask: np.ndarray,
               exclude: set[int], why: str) -> str:
    """'at frames a-b strip X plays at partial influence <why>; ...how to change it'."""
    found = sorted({i for t in np.flatnonzero(mask) for i in shown[t]} - exclude)
    who = ", ".join(strips[i].name for i in found) or "no strip"
    return (f"at {_frames(frames, mask)} {who} {'plays' if len(found) <= 1 else 'play'} at partial "
            f"influence {why}: give it frames at full influence (shorter Blend In/Out, in the Strip "
            "sidebar, N in the NLA Editor), mute it, or leave its track out of Tracks")


def strip_frames(start: float, end: float, scale: float, repeat: float, action_start: float,
                 action_end: float, frames: npt.ArrayLike) -> np.ndarray:
    """The action frames a strip plays at scene `frames` (held at its ends outside [start, end]),
    as Blender maps strip time (nlastrip_get_frame_actionclip): repeats wrap the action range, and
    the strip's very last frame is the range's end when it repeats a whole number of times."""
    f = np.clip(np.asarray(frames, dtype=np.float64), start, end)
    span = action_end - action_start
    if span <= 0.0:
        return np.full(f.shape, float(action_start))
    local = f - start
    whole = math.isclose(repeat, round(repeat))
    wrapped = np.mod(local, span * abs(scale)) / abs(scale)
    at_end = np.isclose(f, end) & whole
    return action_start + np.where(at_end, span, wrapped)
