"""What the sidebar shows before a bake, worked out as the bake works it out: the footsteps Detect
Footsteps will find, each action's cycle, and the blend's weight, cycle and speed."""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from ..core import contacts, sync
from ..core.clip import Clip
from ..errors import JobError
from ..options import SyncOptions
from ..timing import Timing
from .blendspace import GaitRow, check_gaits, gait_rows, reach
from .events import find_footsteps
from .sync import CYCLES_NEED_ONE_WEIGHT, cycle_of, played_cycles, sync_weight


class FootstepPreview(NamedTuple):
    """What Detect Footsteps will find on an action: its markers per track and the cadence."""

    action: str
    steps: dict[str, int]  # {'FootDown_L': n, 'FootDown_R': m}
    cadence: float  # steps per minute from the first footstep to the last (nan below two)
    problem: str  # why none will be found ('' when some are)


class CyclePreview(NamedTuple):
    """One action's cycle as Bake Sync Blend cuts it."""

    action: str
    seconds: float  # the cycle's length
    steps: dict[str, int]  # footsteps in the action the cycle is cut between ({'FootDown_L': n, ...})


class SyncPreview(NamedTuple):
    """What Bake Sync Blend will bake with these options, before it runs."""

    a: CyclePreview | None
    b: CyclePreview | None
    weight: float  # the one weight: Weight, or the one that travels at Speed (nan for a Curve)
    cycle_seconds: float  # one blended cycle at that weight as baked (nan for a Curve; see played_cycles)
    speed_mps: float  # the speed the blend travels at that weight (nan for a Curve)
    speed_range: tuple[float, float]  # the speeds Speed can ask for (weights 0 and 1), slowest first
    problem: str  # what stops the bake ('' when nothing does)


NO_SPEEDS = (math.nan, math.nan)


class GaitsPreview(NamedTuple):
    """The Gaits panel's list: each gait's speed and cycle, and what a blend space of them reaches."""

    rows: list[GaitRow | None]  # per gait, in the list's order; None where it cannot be read
    problems: list[str]  # per gait: why it cannot be read ('' where it can)
    reach: tuple[float, float]  # the speeds Bake Blend Space can ask for (NO_SPEEDS below two gaits)
    problem: str  # what else stops the bake ('' when nothing does)


def gaits_preview(loops: list[Clip | None], problems: list[str]) -> GaitsPreview:
    """The Gaits panel's rows from each gait's loop (None where `problems` says why there is none),
    measured together as Bake Blend Space measures them."""
    found = [c for c in loops if c is not None]
    rows: list[GaitRow | None] = [None] * len(loops)
    if not found:
        return GaitsPreview(rows, problems, NO_SPEEDS, "")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the bake reports them
            check_gaits(found)
            measured = iter(gait_rows(found))
    except ValueError as exc:  # a JobError, or the core's (two gaits at one speed)
        return GaitsPreview(rows, problems, NO_SPEEDS, str(exc))
    rows = [next(measured) if c is not None else None for c in loops]
    speeds = [r.speed for r in rows if r is not None]
    return GaitsPreview(rows, problems, reach(speeds) if len(speeds) > 1 else NO_SPEEDS, "")


def footstep_preview(clip: Clip, name: str, speed: float | None) -> FootstepPreview:
    """What Detect Footsteps finds on action `name`'s clip at Foot Speed `speed` (None: Auto): its
    footsteps per track and their cadence (JobError when it finds none)."""
    if clip.n_frames < 2:
        raise JobError(f"action {name!r} has fewer than two frames")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the operator reports them
        steps, _ = find_footsteps(clip, name, speed)
    times = np.sort(np.concatenate([np.asarray(t, dtype=np.float64) for t in steps.values()]))
    span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    cadence = 60.0 * (len(times) - 1) / span if span > 0.0 else math.nan
    return FootstepPreview(name, {k: len(v) for k, v in steps.items()}, cadence, "")


def cycle_preview(clip: Clip, timing: Timing, name: str, frames: tuple[int, int], straighten: bool,
                  which: str) -> tuple[Clip, CyclePreview]:
    """(cycle, preview) of action `name`'s clip as sync_clip cuts it (the same call); `which`:
    frames_a or frames_b."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the operator reports them
        cycle = cycle_of(clip, timing, frames, straighten, which)
        marks = {k: v for k, v in clip.events.items() if k.startswith("FootDown_")}
        steps = marks or contacts.footsteps(clip)
    counts = {k: len(v) for k, v in sorted(steps.items())}
    return cycle, CyclePreview(name, cycle.n_frames / cycle.fps, counts)


def blend_preview(a: Clip, b: Clip, pa: CyclePreview | None, pb: CyclePreview | None,
                  options: SyncOptions, rate: float) -> SyncPreview:
    """The blend of cycles a and b (`pa`, `pb`: their previews) as Bake Sync Blend bakes it at
    `rate`: its weight, played cycle, speed, and the speeds it can reach."""
    mode = options.mode.lower()
    ends = (sync.travel_speed(a, b, 0.0, mode), sync.travel_speed(a, b, 1.0, mode))
    speeds = (min(ends), max(ends))
    try:
        weight = sync_weight(a, b, options)
    except JobError as exc:
        return SyncPreview(pa, pb, math.nan, math.nan, math.nan, speeds, str(exc))
    if weight is None:
        problem = CYCLES_NEED_ONE_WEIGHT if options.duration_unit == "CYCLES" else ""
        return SyncPreview(pa, pb, math.nan, math.nan, math.nan, speeds, problem)
    seconds = sync.cycle_length(a, b, weight, mode)
    played = played_cycles(seconds, options, rate)
    # The same stride over the played cycle.
    return SyncPreview(pa, pb, weight, played, sync.blend_speed(a, b, weight, mode) * seconds / played,
                       speeds, "")
