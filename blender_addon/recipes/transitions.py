"""A transition between two clips as Bake Transition (and `stride transition`) asks for it: the times
checked against the takes, the method and mask as the core takes them, the two skeletons compared;
and the target time that best continues the source."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ..core import blend, skeleton, transition
from ..core.clip import Clip
from ..errors import BridgeWarning, JobError
from ..options import METHODS, TransitionOptions
from ..timing import Timing
from ..wording import UI, Face

TRANSITION_METHODS = tuple(METHODS)


def check_lengths(a: Clip, b: Clip, allow: bool, face: Face = UI, joints: np.ndarray | None = None) -> None:
    """Refuse (JobError) two clips of one joint tree whose bone lengths differ, naming the bone, as
    `import --single-armature` refuses such files; with `allow`, a BridgeWarning says so instead.
    `face`: whose words (Allow Mismatch, or --allow-mismatch). `joints`: [J] bool, the joints
    whose lengths count (default all)."""
    label = face.called(TransitionOptions, "allow_mismatch")
    a.check_compatible(b)
    mine, theirs = skeleton.bone_lengths(a.parents, a.offsets), skeleton.bone_lengths(b.parents, b.offsets)
    k = skeleton.length_mismatch(mine, theirs if joints is None else np.where(joints, theirs, mine))
    if k is None:
        return
    la, lb = (float(np.linalg.norm(c.offsets[k])) for c in (a, b))
    what = f"bone {a.names[k]!r} is {la:.4g} long in {a.name!r} and {lb:.4g} in {b.name!r}"
    if allow:
        warnings.warn(f"{what}: combined anyway ({label})", BridgeWarning, stacklevel=2)
        return
    raise JobError(f"{what}: another skeleton, whose motion would not fit this one. Use takes of one "
                   f"skeleton, or combine them anyway ({label})")


def core_method(method: str, face: Face = UI) -> str:
    """The core's `transition.METHODS` key for a method as the user names it (DEAD, ...)."""
    key = METHODS.get(method.upper())
    if key is None:
        raise JobError(f"{face.called(TransitionOptions, 'method')} must be one of "
                       f"{', '.join(TRANSITION_METHODS)}, not {method!r}")
    return key


def joint_mask(clip: Clip, mask: str, face: Face = UI) -> np.ndarray | None:
    """Per-joint weights from a preset name (LOWER_BODY, UPPER_BODY, FINGERS) or joint names
    separated by commas (each with its descendants); None for an empty string. `face`: whose
    words the error is in."""
    text = mask.strip()
    if not text:
        return None
    if text.upper() in blend.PRESETS:
        return blend.mask(clip, preset=text.upper())
    names = [n.strip() for n in text.split(",") if n.strip()]
    missing = [n for n in names if n not in clip.names]
    if missing:
        documented = [p for p in blend.PRESETS if p != "ALL"]  # ALL is the empty mask
        raise JobError(f"{face.called(TransitionOptions, 'mask')}: no joint named {missing[0]!r}; use a "
                       f"preset ({', '.join(documented)}) or joint names separated by commas")
    return blend.mask(clip, include=names)


# What the sidebar offers for a time: its clock button (by Face.by); the CLI has none.
TIME_HINT = {"label": " (the clock button uses the current frame)", "flag": ""}


def transition_clip(src: Clip, dst: Clip, *, options: TransitionOptions, face: Face = UI) -> Clip:
    """The core transition the options ask for; `face`: whose words the errors are in (the
    sidebar's labels, or the CLI's flags)."""
    def called(name: str) -> str:
        return face.called(TransitionOptions, name)

    for key, seconds, clip in (("source_time", options.source_time, src),
                               ("target_time", options.target_time, dst)):
        if not 0.0 <= seconds <= clip.duration + 0.5 / clip.fps:
            raise JobError(f"{called(key)} {seconds:g} s is outside {clip.name!r}, which lasts "
                           f"{clip.duration:.2f} s: pick a time inside it{TIME_HINT[face.by]}")
    end = options.target_end
    if end and not options.target_time < end <= dst.duration + 0.5 / dst.fps:
        raise JobError(f"{called('target_end')} {end:g} s must come after {called('target_time')} "
                       f"({options.target_time:g} s) and inside {dst.name!r}, which lasts "
                       f"{dst.duration:.2f} s (0: to its end)")
    method = core_method(options.method, face)
    check_lengths(src, dst, options.allow_mismatch, face)
    extra: dict[str, Any] = {"mask": joint_mask(src, options.mask, face), "lock_feet": options.lock_feet}
    if method == "dead":
        extra["halflife"] = "auto" if options.halflife_mode == "AUTO" else options.halflife
    out = transition.METHODS[method](src, dst, options.source_time, options.target_time,
                                     options.blend_time, **extra)
    if not end:
        return out
    # The output is src's frames to the switch, then dst's from Target Time, both at src's rate
    # (frames rounded as the core rounds them): cut it where dst reaches Target End.
    fps = src.fps
    return out[:round(options.source_time * fps) + round(end * fps) - round(options.target_time * fps) + 1]


class Spans(NamedTuple):
    """Where a transition's sources play in its result, in the result's action frames."""

    switch: float  # the source's last frame alone (the switch)
    start: float  # the target's first: the next frame (the next key, where keys come closer)
    end: float  # the result's last frame
    offset: float  # target frame f plays at offset + scale * f
    scale: float


def spans(out: Clip, timing: Timing, dst_timing: Timing, options: TransitionOptions) -> Spans:
    """Where the source and target of transition `out` (made with `options`) play in its frames
    (`timing`, the source's; `dst_timing`, the target action's), by the time mapping Stride uses:
    target time t plays at the switch + t - Target Time."""
    fps = out.fps
    i_s, i_d = round(options.source_time * fps), round(options.target_time * fps)
    switch = float(timing.frame(i_s / fps))
    step = min(1.0, timing.fps / fps)  # the next scene frame, or the next key where keys come closer
    scale = timing.fps / dst_timing.fps
    offset = switch - scale * float(dst_timing.frame(i_d / fps))
    end = float(timing.frame((out.n_frames - 1) / fps))
    return Spans(switch, switch + step, end, offset, scale)


# A take going into itself: the target is looked for this far from the source time at least (the
# frames next to it continue it trivially), after it, else before it.
ITSELF_APART = 0.5  # seconds


def best_target_time(src: Clip, dst: Clip, source_time: float, itself: bool = False,
                     face: Face = UI) -> float:
    """transition.best_target_time, with the source time checked and named as the user of `face`
    calls it. `itself`: dst is src (a take into another time of itself): the times within
    ITSELF_APART of the source time are left out; the later part of the take is searched, the
    earlier where the later is too short."""
    label = face.called(TransitionOptions, "source_time")
    if not 0.0 <= source_time <= src.duration + 0.5 / src.fps:
        raise JobError(f"{label} {source_time:g} s is outside {src.name!r}, which lasts "
                       f"{src.duration:.2f} s")
    src.check_compatible(dst)
    search = None
    if itself:
        later, earlier = source_time + ITSELF_APART, source_time - ITSELF_APART
        start = dst.motion_start / dst.fps
        if later + 2.0 / dst.fps <= dst.duration:
            search = (later, dst.duration)
        elif earlier - 2.0 / dst.fps >= start:
            search = (start, earlier)
        else:
            raise JobError(f"{dst.name!r} lasts {dst.duration:.2f} s: too short to go into another time of "
                           f"itself, {ITSELF_APART:g} s or more from {label} ({source_time:g} s)")
    return float(transition.best_target_time(src, source_time, dst, search=search))
