"""A blend space as Bake Blend Space (and `stride blend-space`) asks for it: the gaits cut into loops
and checked to be of one skeleton, each gait's speed and cycle (the Gaits panel shows them, slowest
first), and the target speed (a constant, a ramp over the duration, or keys: the armature's keyed
Speed, the CLI's SECONDS:SPEED,...) checked against the speeds the gaits reach, in the words of
the user who asked."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..core import blendspace, sync
from ..core.clip import POSITION_CHANNELS, Clip, SkeletonMismatch
from ..errors import JobError, chosen
from ..options import BlendSpaceOptions
from ..timing import Timing
from ..wording import UI, Face
from .transitions import check_lengths

# (times [n] seconds, speeds [n] m/s): keys of a target speed, linear between them.
Keys = tuple[np.ndarray, np.ndarray]


def gaits_hint(face: Face = UI) -> str:
    """Where the user of `face` gives a blend space its gaits."""
    if face.by == "label":
        return ("add the actions of a walk, a run, ... in the Gaits panel (Add Gait, or Gaits from "
                "Selected for the actions of other armatures)")
    return "give two or more GAIT.bvh takes of one skeleton"


def check_count(names: Sequence[str], owner: str = "", face: Face = UI) -> None:
    """A blend space needs two or more gaits (`names`, of `owner`, the armature that holds them)."""
    has = f"{owner!r} has " if owner else ""
    if not names:
        raise JobError(f"{has}no gaits to blend: {gaits_hint(face)}")
    if len(names) < 2:
        raise JobError(f"{has}one gait ({names[0]!r}): a blend space blends two or more; {gaits_hint(face)}")


def gait_loop(clip: Clip, face: Face = UI) -> Clip:
    """The gait's loop, one clean cycle between its footsteps (`sync.loop_cycle`, as the blend
    space cuts a take), named as the take; in `face`'s words when none is found."""
    try:
        return sync.loop_cycle(clip).replace(name=clip.name)
    except ValueError as exc:
        fix = ("mark its footsteps (Detect Footsteps) or remove it from the gaits" if face.by == "label"
               else "leave that take out or use one with whole steps")
        # sync's advice (the cycle's frames) is Sync Blend's: a gait is cut where its steps say
        said = str(exc).removesuffix("; pass frames=(a, b)")
        raise JobError(f"gait {clip.name!r}: {said}; {fix}") from None


def _moving(clip: Clip) -> np.ndarray:
    """[J] joints whose position channels move over the clip: the travel, whose offset in the
    file (replaced by those channels) measures nothing."""
    keyed = np.array([any(c in POSITION_CHANNELS for c in ch) for ch in clip.channels])
    if clip.n_frames < 2:
        return np.zeros(clip.n_joints, dtype=bool)
    spread = np.ptp(clip.positions, axis=0).max(axis=-1)
    return keyed & (spread > 1e-6 * max(clip.height, 1e-9))


def check_gaits(clips: Sequence[Clip], allow: bool = False, face: Face = UI) -> None:
    """The gaits are of one skeleton: the same joints under the same parents, and the same bone
    lengths but where a gait's position channels move a joint (one take carries its travel on the
    hips, another on a root above them). JobError names the gait and what differs; lengths that
    differ with `allow` are a warning (check_lengths)."""
    first = clips[0]
    fix = "remove it from the gaits" if face.by == "label" else "leave that take out"
    for c in clips[1:]:
        try:
            first.check_compatible(c)
        except SkeletonMismatch as exc:
            raise JobError(f"gait {c.name!r} is another skeleton than {first.name!r} ({exc}): "
                           f"{fix}") from None
    moved = np.logical_or.reduce([_moving(c) for c in clips])
    for c in clips[1:]:
        try:
            check_lengths(first, c, allow, face, joints=~moved)
        except JobError as exc:
            raise JobError(f"gait {c.name!r}: {exc}") from None


def gait_loops(clips: Sequence[Clip], *, allow: bool = False, face: Face = UI) -> list[Clip]:
    """The gaits' loops, checked to be of one skeleton (`check_gaits`), in the order given."""
    check_gaits(clips, allow, face)
    return [gait_loop(c, face) for c in clips]


class GaitRow(NamedTuple):
    """A gait as the Gaits panel lists it."""

    name: str
    speed: float  # m/s, as the blend space measures it (blendspace.gait_speeds)
    cycle: float  # seconds from a left touchdown to the next


def cycle_seconds(loop: Clip) -> float:
    """A loop's cycle: its length over the left touchdowns in it."""
    return loop.n_frames / loop.fps / max(1, len(loop.events.get("FootDown_L", ())))


def gait_rows(loops: Sequence[Clip]) -> list[GaitRow]:
    """Each loop's speed and cycle, in the order given."""
    speeds = blendspace.gait_speeds(loops)
    return [GaitRow(c.name, float(v), cycle_seconds(c)) for c, v in zip(loops, speeds, strict=True)]


def gait_order(speeds: Sequence[float]) -> list[int]:
    """Indices of gaits slowest first, those of no known speed last (in the order given)."""
    return sorted(range(len(speeds)), key=lambda i: (not math.isfinite(speeds[i]), speeds[i]
                                                     if math.isfinite(speeds[i]) else 0.0, i))


def reach(speeds: Sequence[float]) -> tuple[float, float]:
    """(slowest, fastest) speed a blend space of gaits at `speeds` plays, m/s: the slowest gait
    played down to RATE_RANGE[0] of its speed, the fastest up to RATE_RANGE[1] of its."""
    lo, hi = blendspace.RATE_RANGE
    return lo * float(min(speeds)), hi * float(max(speeds))


def listed_speeds(rows: Sequence[GaitRow]) -> str:
    """The gaits and their speeds, slowest first ("'walk' 1.20, 'run' 3.10"; m/s)."""
    return ", ".join(f"{r.name!r} {r.speed:.2f}" for r in sorted(rows, key=lambda r: r.speed))


def slowest_gait(rows: Sequence[GaitRow]) -> int:
    """The index of the slowest gait's row (the first of equal speeds)."""
    return int(np.argmin([r.speed for r in rows]))


def target_keys(options: BlendSpaceOptions, keys: Keys | None = None, face: Face = UI) -> Keys:
    """The target speed over the bake as keys, linear between them: Speed for the whole duration,
    the ramp from Ramp From to Ramp To, or `keys` (a curve's)."""
    mode = chosen(options, "speed_mode", face)
    if not (math.isfinite(options.duration) and options.duration > 0.0):
        raise JobError(f"{face.called(BlendSpaceOptions, 'duration')} must be above 0 s, not "
                       f"{options.duration:g}")
    ends = np.array([0.0, float(options.duration)])
    if mode == "CONSTANT":
        return ends, np.full(2, float(options.speed))
    if mode == "RAMP":
        return ends, np.array([float(options.ramp_from), float(options.ramp_to)])
    if keys is None:
        raise JobError("a Curve speed needs its keys")
    times, speeds = (np.asarray(x, dtype=np.float64).reshape(-1) for x in keys)
    if not times.size or times.shape != speeds.shape or np.any(np.diff(times) <= 0.0) \
            or not (np.isfinite(times).all() and np.isfinite(speeds).all()):
        raise JobError("the speed keys must be one speed per time, at increasing times")
    return times, speeds


def _what(options: BlendSpaceOptions, times: np.ndarray, speeds: np.ndarray, k: int,
          timing: Timing | None, face: Face) -> str:
    """The target the user gave that reaches speeds[k], as the user of `face` gave it."""
    mode, v = options.speed_mode.upper(), speeds[k]
    if mode == "CONSTANT":
        return f"{face.called(BlendSpaceOptions, 'speed')} {v:.3g} m/s"
    if mode == "RAMP":
        name = "ramp_from" if k == 0 else "ramp_to"
        return f"{face.called(BlendSpaceOptions, name)} {v:.3g} m/s"
    if face.by == "label":
        when = f"frame {float(timing.frame(times[k])):g}" if timing is not None else f"{times[k]:.2f} s"
        return f"the armature's Speed, keyed, reaches {v:.3g} m/s at {when}"
    return f"{face.called(BlendSpaceOptions, 'speed')} reaches {v:.3g} m/s at {times[k]:.2f} s"


def check_reach(rows: Sequence[GaitRow], keys: Keys, options: BlendSpaceOptions, rate: float,
                timing: Timing | None = None, face: Face = UI) -> Keys:
    """The target keys held inside the speeds the gaits reach (`reach`), where they are (float32
    settings round); JobError naming the target, when and the range where it leaves it, at the
    frames of `rate` a bake samples (`timing`: the frames it names)."""
    lo, hi = reach([r.speed for r in rows])
    times = sync.output_times(float(options.duration), rate)
    played = np.interp(times, *keys)
    tol = 1e-6 * hi
    bad = (played < lo - tol) | (played > hi + tol)
    if np.any(bad):
        k = int(np.argmax(bad))
        if options.speed_mode.upper() == "CURVE":
            what = _what(options, times, played, k, timing, face)
        else:  # a constant or a ramp leaves the range at one of its ends
            ends = keys[1]
            k = 0 if not lo - tol <= ends[0] <= hi + tol else len(ends) - 1
            what = _what(options, keys[0], ends, k, timing, face)
        slow, fast = blendspace.RATE_RANGE
        raise JobError(f"{what} is outside the speeds the gaits reach, {lo:.2f}-{hi:.2f} m/s "
                       f"({listed_speeds(rows)} m/s; {slow:g}x the slowest to {fast:g}x the fastest play "
                       "that gait slower or faster)")
    return keys[0], np.clip(keys[1], lo, hi)


class Baked(NamedTuple):
    """A blend space as baked: the clip, the gaits' rows, the target speed's keys it played."""

    clip: Clip
    rows: list[GaitRow]
    keys: Keys


def blend_space_clip(loops: Sequence[Clip], *, options: BlendSpaceOptions, keys: Keys | None = None,
                     rate: float | None = None, timing: Timing | None = None, face: Face = UI) -> Baked:
    """The blend space the options ask for, from the gaits' loops (`gait_loops`): the target speed
    (`target_keys`, `keys` for a Curve) checked against what they reach, played at `rate` frames
    per second (None: the fastest loop's rate) for Duration, feet locked with Lock Feet. `timing`:
    the frames errors name (a bake's); `face`: whose words."""
    check_count([c.name for c in loops], face=face)
    fps = max(c.fps for c in loops) if rate is None else float(rate)
    rows = gait_rows(loops)
    target = check_reach(rows, target_keys(options, keys, face), options, fps, timing, face)
    try:
        clip = blendspace.blend_space(loops, target, float(options.duration), fps=fps,
                                      lock_feet=options.lock_feet)
    except ValueError as exc:
        raise JobError(str(exc)) from None
    return Baked(clip, rows, target)


def result_name(rows: Sequence[GaitRow], options: BlendSpaceOptions) -> str:
    """The baked action's name: the slowest gait's, the blend space and how its speed was given."""
    return f"{rows[slowest_gait(rows)].name} blend space ({options.speed_mode.lower()})"
