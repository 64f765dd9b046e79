"""A synchronized blend of two cycles as Bake Sync Blend (and `stride sync-blend`) asks for it: each
clip's cycle (between its footsteps, or the frames given in the action's frames), the one weight
(given, or the one that travels at Speed), the time base the result is keyed at."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import root, sync
from ..core.clip import Clip
from ..errors import JobError, chosen
from ..options import SyncOptions
from ..timing import Timing
from ..wording import UI, Face
from .transitions import check_lengths, joint_mask

CYCLES_NEED_ONE_WEIGHT = ("a duration in cycles needs one weight: use a Constant or Speed weight, or "
                          "give the duration in seconds")


def cycle_hint(face: Face = UI) -> str:
    """What to do about a take whose cycle is not found, for the user of `face`: in Blender, Detect
    Footsteps marks the steps a cycle is cut between."""
    frames = f"({face.called(SyncOptions, 'frames_a')}, {face.called(SyncOptions, 'frames_b')})"
    if face.by == "label":
        return f"Run Detect Footsteps on it, or give its cycle's frames {frames}"
    return f"Give its cycle's frames {frames}"


def cycle_of(clip: Clip, timing: Timing, frames: tuple[int, int], straighten: bool = False,
             which: str = "frames_a", face: Face = UI) -> Clip:
    """One clean loop of a clip: between its footsteps, or the frames given (in `timing`'s frames);
    `straighten`: without any turn (a closed loop), else turning as the take does on average
    (sync.loop_cycle's default). `which`: the option the frames
    are (frames_a, frames_b), named in errors as the user of `face` calls it."""
    label = face.called(SyncOptions, which)
    span: tuple[int, int] | None = None
    if tuple(frames) != (0, 0):
        first, last = (round(float(timing.seconds(f)) * clip.fps) for f in frames)
        span = (first, last)
        if not 0 <= first < last < clip.n_frames:
            raise JobError(f"{label} {frames[0]}-{frames[1]} are not a cycle inside {clip.name!r} "
                           f"(frames {timing.start:g}-{float(timing.frame(clip.duration)):g})")
    try:
        return sync.loop_cycle(clip, span, straighten=True if straighten else None)
    except ValueError as exc:
        raise JobError(f"{clip.name!r}: {exc}. {cycle_hint(face)}") from None


def loops(options: SyncOptions) -> bool:
    """Whether the bake is one closed loop: whole blended cycles at one weight, Cyclic on."""
    duration = options.duration
    return bool(options.cyclic and options.duration_unit == "CYCLES" and duration >= 1
                and float(duration).is_integer())


def sync_clip(a: Clip, b: Clip, *, options: SyncOptions, timing_a: Timing,
              timing_b: Timing, curve: tuple[np.ndarray, np.ndarray] | None = None,
              face: Face = UI, rate: float | None = None) -> tuple[Clip, float | None]:
    """The synchronized blend the options ask for, from two clips (whole takes): (clip, weight used
    when it is one). `curve`: (seconds, weights) for a CURVE weight. `timing_*`: the frames that
    A Frames and B Frames count in. `rate`: the frames per second the result is keyed at (a
    scene's; None: a's, for a file); a clip's frame k is then key k, whole frames apart. `face`:
    whose words the errors are in (the sidebar's labels, or the CLI's flags)."""
    chosen(options, "mode", face)
    if options.duration_unit == "CYCLES" and options.weight_mode == "CURVE":
        raise JobError(CYCLES_NEED_ONE_WEIGHT)
    # One loop: whole blended cycles at one weight, from straightened cycles so that the heading
    # closes too. One time base: every bake is sampled at whole frames of `rate`. Blended cycles
    # are rarely whole frames long, so whole cycles (looping or not) are played on the nearest
    # grid of whole frames that closes on them (their last frame is their first, one loop on:
    # faster or slower by at most half a frame over the cycles); Blender's Cycles modifier then
    # repeats a loop seamlessly, and a loop and the same cycles baked without Cyclic match.
    closed = loops(options)
    check_lengths(a, b, options.allow_mismatch, face)
    a = cycle_of(a, timing_a, options.frames_a, closed, "frames_a", face)
    b = cycle_of(b, timing_b, options.frames_b, closed, "frames_b", face)
    a.check_compatible(b)
    core_mode = options.mode.lower()
    used = sync_weight(a, b, options)
    w: Any = used
    if used is None:
        if curve is None:
            raise JobError("a Curve weight needs its keys")
        w = curve
    fps = a.fps if rate is None else float(rate)
    duration = options.duration
    if options.duration_unit == "CYCLES":
        assert used is not None  # refused above for a weight curve
        duration = duration * sync.cycle_length(a, b, used, core_mode)
        fps = max(1, round(duration * fps)) / duration
    out = sync.sync_blend(a, b, w, duration, mode=core_mode, fps=fps,
                          mask=joint_mask(a, options.mask, face), lock_feet=options.lock_feet)
    if rate is not None and fps != rate:
        # Frame k of the grid is played at whole frame k of `rate`: its events go with it.
        scale = fps / rate
        out = out.replace(fps=float(rate), events={k: np.asarray(v) * scale for k, v in out.events.items()})
    return (root.in_place(out) if options.in_place else out), used


def sync_weight(a: Clip, b: Clip, options: SyncOptions) -> float | None:
    """The one weight of a blend of cycles a and b: Weight, or the weight that travels at Speed;
    None for a Curve weight."""
    if options.weight_mode == "CURVE":
        return None
    if options.weight_mode != "SPEED":
        return float(options.weight)
    try:
        return sync.weight_for_speed(a, b, options.speed_mps, options.mode.lower())
    except ValueError as exc:
        raise JobError(str(exc)) from None


def bake_frames(options: SyncOptions, start: float, rate: float) -> tuple[float, float]:
    """(first, last) scene frames a sync bake of `options` keys, from `start` at `rate` (a duration
    in cycles: one second, for a ramp to edit; a Curve weight is refused with cycles)."""
    seconds = options.duration if options.duration_unit != "CYCLES" else 1.0
    return float(start), float(start) + max(float(seconds) * rate, 1.0)


def played_cycles(seconds: float, options: SyncOptions, rate: float) -> float:
    """How long `seconds` of blended cycle lasts as Bake Sync Blend keys it at `rate`: a duration
    in Cycles is played on the nearest whole number of frames (sync_clip's one time base)."""
    if options.duration_unit != "CYCLES" or not options.duration > 0:
        return seconds
    total = options.duration * seconds
    return max(1, round(total * rate)) / rate / options.duration
