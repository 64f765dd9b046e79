"""What each operator and CLI subcommand does, once: find the inputs, call the core, write results.

Operators and the CLI differ only in how they get their settings and report; both call these.
Every function raises `JobError` (or a subclass of ValueError) with a message meant for the user.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import bpy
import numpy as np

from . import bridge, compat, wording
from .core import bvh
from .core.clip import Clip
from .options import (
    METHODS,
    SYNC_MODES,
    DecodeOptions,
    EventOptions,
    ExportOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
    label_of,
)
from .wording import UI, Face


class JobError(ValueError):
    """A user-facing failure: the message says what is wrong and what to do."""


USER_ERRORS = (JobError, bridge.BridgeError, bvh.BVHError, ValueError, OSError)

# Core warnings name the core's keywords; a command tells the user its own option instead, or
# nothing where it has no such option (a transition's feet lock without Lower Pelvis). Everything
# else about the core's words is wording.in_user_words's (the one place; see there).
LOWER_PELVIS_HINT = ". lower_pelvis=True lowers the pelvis instead"
NO_CORE_WORDS = {LOWER_PELVIS_HINT: ""}


def in_user_words(message: str, words: Mapping[str, str] = NO_CORE_WORDS, face: Face = UI) -> str:
    """A core message as the user of `face` reads it (wording.in_user_words: UI, Blender's
    panels; CLI, flags), each phrase of `words` first replaced by what the command offers."""
    return wording.in_user_words(message, words, face)


@contextmanager
def core_warnings(words: Mapping[str, str] = NO_CORE_WORDS, face: Face = UI) -> Iterator[list[str]]:
    """The warnings the core raises inside the block (EventWarning, ContactWarning, FootLockWarning,
    BodyWarning, ...: every UserWarning), as messages in user words (`face`'s), each once, in the
    list yielded (filled when the block ends, even by an error), for an operator's report or the
    CLI's stderr. Other warnings are shown as usual."""
    messages: list[str] = []
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            yield messages
    finally:
        for w in caught:
            if issubclass(w.category, UserWarning):
                text = in_user_words(str(w.message), words, face)
                if text not in messages:
                    messages.append(text)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


# What an operator needs in its context (its poll); `unmet` says what is missing.
ARMATURE, ACTION, TWO_ACTIONS, NLA_TRACK = "ARMATURE", "ACTION", "TWO_ACTIONS", "NLA_TRACK"


def unmet(context: Any, need: str) -> str:
    """Why a command that needs `need` (ARMATURE, ACTION: an armature with an action, TWO_ACTIONS:
    and a second action to blend with, NLA_TRACK: an armature with NLA strips) cannot run
    in `context`, as a poll message; '' when it can. Cheap: polls and panels call it on every
    redraw."""
    try:
        obj = find_armature(context=context)
    except JobError as exc:
        return _sentence(str(exc))
    adt = obj.animation_data
    if need == ARMATURE:
        return ""
    if need == NLA_TRACK:
        if adt is None or not len(adt.nla_tracks):
            return (f"{obj.name!r} has no NLA tracks: push actions down to the NLA and arrange them "
                    "as strips on one track")
        if not any(len(t.strips) for t in adt.nla_tracks):
            return f"{obj.name!r} has no NLA strips: add action strips to a track"
        return ""
    if adt is None or adt.action is None:
        return f"{obj.name!r} has no action: import a BVH take, or assign an action in the Action Editor"
    if need == TWO_ACTIONS and len(bpy.data.actions) < 2:
        return f"No second action to blend with: import another take (only {adt.action.name!r})"
    return ""


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


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


def export_bvh(obj: Any, path: str | Path, *, options: ExportOptions) -> Clip:
    """Write an armature's action (the active one by default) to a BVH file, atomically: the motion
    as it stands in the scene (the object's world transform applied), at the action's own rate,
    lengths times Scale."""
    act, _ = bridge.resolve_action(obj, options.action or None)
    clip = bridge.source_clip(obj, act, source=options.source)
    if clip.n_frames == 0:
        raise JobError(f"action {clip.name!r} has no keys to export")
    note = bridge.rate_note(obj, act, clip)
    if note:
        warnings.warn(note, bridge.BridgeWarning, stacklevel=2)
    if not (options.global_scale > 0.0 and np.isfinite(options.global_scale)):
        raise JobError(f"Scale must be a positive number, not {options.global_scale:g}")
    bvh.save(clip.scaled(options.global_scale) if options.global_scale != 1.0 else clip, path)
    return clip


def import_files(context: Any, paths: Sequence[str | Path], *, options: ImportOptions | None = None,
                 single_armature: bool = False,
                 progress: Any = None) -> tuple[list[tuple[Any, Any]], list[str]]:
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
            done.append(importer.import_bvh(context, path, target=target, progress=step,
                                            **dataclasses.asdict(options or ImportOptions())))
        except USER_ERRORS as exc:
            failed.append(f"{path.name}: {exc}" if str(path) not in str(exc) else str(exc))
    return done, failed


def save_blend(path: str | Path) -> None:
    """Save the open file as a copy at `path` (Blender writes it atomically); the folder must exist."""
    target = Path(path)
    if target.suffix.lower() != ".blend":
        raise JobError(f"{str(target)!r} is not a .blend file name: Blender scenes save as .blend")
    if not target.parent.is_dir():
        raise JobError(f"folder {str(target.parent)!r} does not exist")
    result = bpy.ops.wm.save_as_mainfile(filepath=str(target), copy=True, check_existing=False)
    if result != {"FINISHED"}:
        raise JobError(f"could not save {str(target)!r}")


# -- events ---------------------------------------------------------------------------------------

CURVE_GROUP = "Stride Events"


def _armature_action(obj: Any, action: str | None,
                     source: str = "AUTO") -> tuple[Any, Any, Clip, bridge.Timing]:
    act, _ = bridge.resolve_action(obj, action or None)
    clip, timing = bridge.read_action(obj, act, source=source)
    if clip.n_frames < 2:
        raise JobError(f"action {act.name!r} has fewer than two frames")
    return act, _, clip, timing


def foot_speed(value: float | None) -> float | None:
    """A Foot Speed setting as the core takes it: 0 (options.AUTO) or None is Auto."""
    return None if value is None or value <= 0.0 else float(value)


def detect_footsteps(obj: Any, *, options: FootstepOptions) -> tuple[Any, dict[str, int], str]:
    """FootDown_L / FootDown_R pose markers on the action, exact times kept: (action, counts, what
    the feet are: their names and what decided them, and any doubt the body map or the contacts
    have). Foot Speed 0: Auto."""
    from .markers import replace_track

    act, _, clip, timing = _armature_action(obj, options.action, options.source)
    steps, doubts = find_footsteps(clip, act.name, foot_speed(options.speed_mps),
                                   bridge.rate_note(obj, act, clip), lifts=options.lifts)
    counts = {track: len(times) for track, times in steps.items()}
    for track, times in steps.items():
        replace_track(act, track, times, timing)
    return act, counts, "; ".join([feet_note(clip), *doubts])


def find_footsteps(clip: Clip, name: str, speed: float | None, rate: str = "", *,
                   lifts: bool = False) -> tuple[dict[str, np.ndarray], list[str]]:
    """({'FootDown_L': seconds, 'FootDown_R': ...}, the contacts' doubts) of action `name`'s clip;
    JobError, saying what to try, when there are none. `speed`: Foot Speed, None for Auto; `rate`:
    what differs between the action's rate and the scene's (bridge.rate_note), the likelier cause."""
    from .core import contacts

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", contacts.ContactWarning)
        steps = contacts.footsteps(clip, speed_mps=speed, lifts=lifts)
    doubts = [str(w.message) for w in caught if issubclass(w.category, contacts.ContactWarning)]
    if not any(len(t) for t in steps.values()):
        planted = contacts.contacts(clip, speed_mps=speed)
        used = contacts.thresholds(clip, speed_mps=speed).speed_mps
        frames = slice(clip.motion_start, None)
        if all(p[frames].all() for p in planted.values()):
            hint = (f"the feet never lift: a static pose, or a Foot Speed too high "
                    f"(try {used / 2:.2g} m/s)")
        else:
            hint = (f"no foot comes to rest near the floor below {used:.2g} m/s: try a higher "
                    f"Foot Speed (e.g. {2 * used:.2g} m/s)")
        if rate:  # the likely cause, rather than advice on a speed that is not the problem
            raise JobError(f"no footsteps found in {name!r}: {rate}")
        raise JobError(f"no footsteps found in {name!r}: {hint}; or check the units (Stride reads "
                       f"{clip.meters_per_unit:g} m per unit from the skeleton's height)")
    return steps, doubts


def contact_masks(act: Any, slot: Any, timing: bridge.Timing, clip: Clip) -> dict[str, np.ndarray] | None:
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
                     lower_pelvis: str = label_of(LockFeetOptions, "lower_pelvis"), face: Face = UI
                     ) -> tuple[Any, Clip, list[str]]:
    """A new action with the planted feet of the action (the active one by default) held where they
    land: (action, clip, notes). Contacts come from the action's `stride_contact_L/R` curves when
    it has them (Write Event Curves; edit them to say where a foot is planted), else they are
    detected (Foot Speed 0: Auto). `lower_pelvis`, `face`: as for lock_feet_clip."""
    from . import carry

    act, slot, clip, timing = _armature_action(obj, options.action, options.source)
    out, notes = lock_feet_clip(clip, options=options, masks=contact_masks(act, slot, timing, clip),
                                lower_pelvis=lower_pelvis, face=face)
    result = write_result(obj, out, f"{act.name} (feet locked)", timing, source=act, progress=progress,
                          pieces=[carry.Piece(act, slot)])
    return result, out, notes


def lock_feet_clip(clip: Clip, *, options: LockFeetOptions, masks: dict[str, np.ndarray] | None = None,
                   lower_pelvis: str = label_of(LockFeetOptions, "lower_pelvis"),
                   face: Face = UI) -> tuple[Clip, list[str]]:
    """`clip` with its planted feet held: (clip, notes: where the contacts came from, then any doubt
    about them or the lock, in `face`'s words). `masks`: the contacts, else detected. `lower_pelvis`:
    that option's name, as the user knows it (the CLI's flag), for the notes."""
    from .core import contacts, footlock

    notes = ["contacts from the action's stride_contact curves" if masks is not None else "contacts detected"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if masks is None:
            masks = contacts.contacts(clip, speed_mps=foot_speed(options.speed_mps), split_slides=False)
        out = footlock.lock_feet(clip, contacts=masks, blend_time=options.blend_time,
                                 lower_pelvis=options.lower_pelvis)
    words = {LOWER_PELVIS_HINT: f". {lower_pelvis} lowers the pelvis instead"}
    notes += [in_user_words(str(w.message), words, face) for w in caught
              if issubclass(w.category, (footlock.FootLockWarning, contacts.ContactWarning))]
    return out, notes


def feet_note(clip: Clip) -> str:
    """'feet LeftFoot, RightFoot (from names)', and the body map's warnings, for reports."""
    b = clip.body
    if not b.feet:
        return ""
    note = (f"feet {clip.names[b.feet['L'][0]]}, {clip.names[b.feet['R'][0]]} "
            f"(from {b.evidence.get('legs')})")
    return "; ".join([note, *b.warnings])


WRITTEN_CURVES = "stride_curves"  # on an action: the properties Write Event Curves keyed there


def write_event_curves(obj: Any, *, options: EventOptions) -> tuple[Any, list[str]]:
    """Event-encoding, phase, contact and tag F-curves on the armature's custom properties, in the
    action's own slot: (action, property names written). Replaces only Stride's own curves: the
    ones it wrote before and the ones it writes now. Foot Speed: contacts' and footsteps', as for
    detect_footsteps."""
    from .core import contacts, events
    from .markers import tracks as marker_tracks

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
    from .core import events
    from .markers import replace_track

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


# -- transitions ----------------------------------------------------------------------------------

TRANSITION_METHODS = tuple(METHODS)

# How the options are named to the user, in the panel's words; the CLI passes its flags instead.
OPERATOR_LABELS = {**{name: label_of(TransitionOptions, name)
                      for name in ("source_time", "target_time", "target_end", "method", "mask")},
                   "time_hint": " (the clock button uses the current frame)",
                   "allow_mismatch": label_of(TransitionOptions, "allow_mismatch")}


def check_lengths(a: Clip, b: Clip, allow: bool, label: str = "Allow Mismatch") -> None:
    """Refuse (JobError) two clips of one joint tree whose bone lengths differ, naming the bone, as
    `import --single-armature` refuses such files; with `allow`, a BridgeWarning says so instead."""
    from .core import skeleton

    a.check_compatible(b)
    k = skeleton.length_mismatch(skeleton.bone_lengths(a.parents, a.offsets),
                                 skeleton.bone_lengths(b.parents, b.offsets))
    if k is None:
        return
    la, lb = (float(np.linalg.norm(c.offsets[k])) for c in (a, b))
    what = f"bone {a.names[k]!r} is {la:.4g} long in {a.name!r} and {lb:.4g} in {b.name!r}"
    if allow:
        warnings.warn(f"{what}: combined anyway ({label})", bridge.BridgeWarning, stacklevel=2)
        return
    raise JobError(f"{what}: another skeleton, whose motion would not fit this one. Use takes of one "
                   f"skeleton, or combine them anyway ({label})")


def core_method(method: str, label: str = "Method") -> str:
    """The core's `transition.METHODS` key for a method as the user names it (DEAD, ...)."""
    key = METHODS.get(method.upper())
    if key is None:
        raise JobError(f"{label} must be one of {', '.join(TRANSITION_METHODS)}, not {method!r}")
    return key


def joint_mask(clip: Clip, mask: str, label: str = "Mask") -> np.ndarray | None:
    """Per-joint weights from a preset name (LOWER_BODY, UPPER_BODY, FINGERS) or joint names
    separated by commas (each with its descendants); None for an empty string."""
    from .core import blend

    text = mask.strip()
    if not text:
        return None
    if text.upper() in blend.PRESETS:
        return blend.mask(clip, preset=text.upper())
    names = [n.strip() for n in text.split(",") if n.strip()]
    missing = [n for n in names if n not in clip.names]
    if missing:
        documented = [p for p in blend.PRESETS if p != "ALL"]  # ALL is the empty mask
        raise JobError(f"{label}: no joint named {missing[0]!r}; use a preset "
                       f"({', '.join(documented)}) or joint names separated by commas")
    return blend.mask(clip, include=names)


def transition_clip(src: Clip, dst: Clip, *, options: TransitionOptions,
                    labels: dict[str, str] = OPERATOR_LABELS) -> Clip:
    """The core transition the options ask for; `labels`: the options' names in errors."""
    from .core import transition

    for key, seconds, clip in (("source_time", options.source_time, src),
                               ("target_time", options.target_time, dst)):
        if not 0.0 <= seconds <= clip.duration + 0.5 / clip.fps:
            raise JobError(f"{labels[key]} {seconds:g} s is outside {clip.name!r}, which lasts "
                           f"{clip.duration:.2f} s: pick a time inside it{labels.get('time_hint', '')}")
    end = options.target_end
    if end and not options.target_time < end <= dst.duration + 0.5 / dst.fps:
        raise JobError(f"{labels['target_end']} {end:g} s must come after {labels['target_time']} "
                       f"({options.target_time:g} s) and inside {dst.name!r}, which lasts "
                       f"{dst.duration:.2f} s (0: to its end)")
    method = core_method(options.method, labels["method"])
    check_lengths(src, dst, options.allow_mismatch, labels.get("allow_mismatch", "Allow Mismatch"))
    extra: dict[str, Any] = {"mask": joint_mask(src, options.mask, labels["mask"]),
                             "lock_feet": options.lock_feet}
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


def find_target_time(obj: Any, *, options: TransitionOptions) -> float:
    """Seconds into the target action whose pose and motion best continue the source action at
    Source Time (transition.best_target_time, a motion-matching cost)."""
    if not options.target_action:
        raise JobError("choose a target action to transition into")
    src_action = resolve_source(obj, options.source_action)
    dst_action, _ = bridge.resolve_action(obj, options.target_action)
    (src, _), (dst, _) = (bridge.read_action(obj, src_action, source=options.source),
                          bridge.read_action(obj, dst_action, source=options.source))
    for act in (src_action, dst_action):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    return best_target_time(src, dst, options.source_time, itself=src_action == dst_action)


# A take going into itself: the target is looked for this far from the source time at least (the
# frames next to it continue it trivially), after it, else before it.
ITSELF_APART = 0.5  # seconds


def best_target_time(src: Clip, dst: Clip, source_time: float, label: str = "Source Time",
                     itself: bool = False) -> float:
    """transition.best_target_time, with the source time checked and named as the user sees it.
    `itself`: dst is src (a take into another time of itself): the times within ITSELF_APART of
    the source time are left out; the later part of the take is searched, the earlier where the
    later is too short."""
    from .core import transition

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


BAKED_FROM = "stride_baked_from"  # on a baked action: the name of the action it was baked from


def resolve_source(obj: Any, name: str = "") -> Any:
    """The action named, else the active one; when the active one is a Stride bake, the action it
    was baked from, so that baking again (a bake makes its result active) repeats the bake rather
    than baking from its result."""
    action, _ = bridge.resolve_action(obj, name or None)
    origin = action.get(BAKED_FROM) if not name else None
    return bpy.data.actions[origin] if origin and origin in bpy.data.actions else action


def write_result(obj: Any, clip: Clip, name: str, timing: bridge.Timing, source: Any = None,
                 progress: Callable[[float], None] | None = None, *, pieces: Sequence[Any] | None = None,
                 others: Sequence[Any] = ()) -> Any:
    """A new action on `obj` holding `clip` (made active), its events as markers with exact times;
    `source`: the action it was baked from. `progress`: told a bake's progress, the maths done;
    writing keys is its second half.

    `pieces` (carry.Piece): the source actions playing in the result, whose channels Stride does not
    blend (scale, B-bones, custom properties) are carried into it; without them, the channels of
    `source` and `others` that the result lacks are named in a CarryWarning (never dropped silently).
    Where constraints or drivers override bones the result moves, or its joints hang under other
    parents than the rig's bones (an evaluated read), it plays on a copy of the rig
    (showing.py), named in a ShowWarning."""
    from . import carry, showing
    from .markers import replace_track

    # A copy only where bones the result moves are overridden; on it, every bone it keys plays its keys.
    found = showing.overrides(obj, showing.moving_joints(clip))
    # And where the result's joints hang differently from the rig's bones (an evaluated read of a
    # rig whose deform bones hang under controls): there keys under the rig's parents would play
    # another pose.
    parents = showing.rehung(obj, clip)
    player = (showing.make_player(obj, showing.overrides(obj, clip.names), parents, clip.names)
              if found or parents else None)
    target = player.armature if player is not None else obj
    adt = obj.animation_data
    previous = (adt.action, getattr(adt, "action_slot", None)) if adt is not None else (None, None)
    try:
        action = bridge.clip_to_action(clip, target, name, frame_start=timing.start, action_fps=timing.fps,
                                       assign=True, progress=bridge.progress_after(progress, 0.5))
    except BaseException:
        if player is not None:
            showing.remove_player(player)
        raise
    try:
        slot = compat.action_slot(action, target)
        if pieces:
            done = carry.carry(obj, action, slot, pieces)
            for note in done.notes:
                warnings.warn(note, carry.CarryWarning, stacklevel=2)
        else:
            written = set(carry.channels(action, slot))
            left = sorted({p for act in [source, *others] if act is not None
                           for p in carry.uncarried(obj, act, compat.action_slot(act, obj), written)})
            if left:
                more = ", ..." if len(left) > 4 else ""
                warnings.warn(f"{action.name!r} does not carry {len(left)} channel(s) of its sources that "
                              f"Stride does not blend ({', '.join(left[:4])}{more}): this bake's timing "
                              "differs from theirs; key them on the result if it needs them",
                              carry.CarryWarning, stacklevel=2)
    except BaseException:
        # Nothing half-made stays behind (as clip_to_action leaves nothing); the rig plays what it did.
        bpy.data.actions.remove(action)
        if player is not None:
            showing.remove_player(player)
        elif previous[0] is not None:
            compat.assign(obj, previous[0], previous[1])
        raise
    if source is not None:
        action[BAKED_FROM] = source.name
    for track, times in clip.events.items():
        if len(times):
            replace_track(action, track, np.asarray(times), timing)
    if player is not None:
        action[PLAYS_ON] = player.armature.name
        warnings.warn(showing.report(obj, action, player, found, parents), showing.ShowWarning, stacklevel=2)
    return action


def nla_actions(obj: Any) -> list[Any]:
    """The actions of an armature's NLA strips (whose other channels an NLA bake does not carry)."""
    adt = obj.animation_data
    tracks = adt.nla_tracks if adt is not None else ()
    return [s.action for t in tracks for s in t.strips if s.action is not None]


PLAYS_ON = "stride_plays_on"  # on a baked action: the rig copy it plays on (showing.py), if not the rig


def transition_pieces(src_action: Any, dst_action: Any, obj: Any, out: Clip, timing: bridge.Timing,
                      dst_timing: bridge.Timing, options: TransitionOptions) -> list[Any]:
    """The pieces of a transition's sources in its result (carry.Piece): the source's frames up to
    the switch, exact; the target's from the next frame on (the next key, where keys come closer), by
    the time mapping Stride uses for it
    (target time t plays at switch + t - Target Time), to the result's end."""
    from . import carry

    fps = out.fps
    i_s, i_d = round(options.source_time * fps), round(options.target_time * fps)
    switch = float(timing.frame(i_s / fps))
    step = min(1.0, timing.fps / fps)  # the next scene frame, or the next key where keys come closer
    scale = timing.fps / dst_timing.fps
    offset = switch - scale * float(dst_timing.frame(i_d / fps))
    end = float(timing.frame((out.n_frames - 1) / fps))
    return [carry.Piece(src_action, compat.action_slot(src_action, obj), end=switch),
            carry.Piece(dst_action, compat.action_slot(dst_action, obj), start=switch + step, end=end,
                        offset=offset, scale=scale, exact=False)]


def bake_transition(obj: Any, *, options: TransitionOptions,
                    progress: Callable[[float], None] | None = None) -> tuple[Any, Clip]:
    """A new action: the source action until Source Time, then a transition into the target action
    from Target Time to Target End (its end for 0; seconds in each action's own time). Sources are
    never modified."""
    if not options.target_action:
        raise JobError("choose a target action to transition into")
    src_action = resolve_source(obj, options.source_action)
    dst_action, _ = bridge.resolve_action(obj, options.target_action)
    src, timing = bridge.read_action(obj, src_action, source=options.source)
    dst, dst_timing = bridge.read_action(obj, dst_action, source=options.source)
    for act in (src_action, dst_action):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    out = transition_clip(src, dst, options=options)
    name = f"{src_action.name} > {dst_action.name} ({options.method.lower()})"
    pieces = transition_pieces(src_action, dst_action, obj, out, timing, dst_timing, options)
    return write_result(obj, out, name, timing, src_action, progress, pieces=pieces), out


def bake_nla_track(obj: Any, *, options: NlaBakeOptions,
                   progress: Callable[[float], None] | None = None) -> tuple[Any, Clip]:
    """One new action from what the NLA plays on the chosen tracks (bridge.nla_items), with
    transitions where one strip takes over from another."""
    from .core import transition

    method = core_method(options.method)
    items, blends, start, track_name = bridge.nla_items(obj, options.track, options.blend_time,
                                                        options.allow_mismatch, source=options.source)
    out = transition.sequence(items, blends, method, lock_feet=options.lock_feet, reanchor=options.reanchor)
    name = f"{track_name} baked ({options.method.lower()})"
    return write_result(obj, out, name, bridge.Timing(start, bridge.scene_fps()), progress=progress,
                        others=nla_actions(obj)), out


# -- synchronized blends --------------------------------------------------------------------------

WEIGHT_PROPERTY = "stride_blend_weight"

SYNC_LABELS = {"frames_a": "A Frames", "frames_b": "B Frames", "mode": "Cycle Length", "mask": "Mask",
               "duration": "Duration",
               "cycle_hint": "Run Detect Footsteps on it, or give its cycle's frames (A Frames, B Frames)",
               "allow_mismatch": "Allow Mismatch"}


CYCLES_NEED_ONE_WEIGHT = ("a duration in cycles needs one weight: use a Constant or Speed weight, or "
                          "give the duration in seconds")


def cycle_of(clip: Clip, timing: bridge.Timing, frames: tuple[int, int], straighten: bool = False,
             label: str = "A Frames", hint: str = SYNC_LABELS["cycle_hint"]) -> Clip:
    """One clean loop of a clip: between its footsteps, or the frames given (in `timing`'s frames);
    `straighten`: without any turn (a closed loop), else turning as the take does on average
    (sync.loop_cycle's default)."""
    from .core import sync

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
        raise JobError(f"{clip.name!r}: {exc}. {hint}") from None


def loops(options: SyncOptions) -> bool:
    """Whether the bake is one closed loop: whole blended cycles at one weight, Cyclic on."""
    duration = options.duration
    return bool(options.cyclic and options.duration_unit == "CYCLES" and duration >= 1
                and float(duration).is_integer())


def sync_clip(a: Clip, b: Clip, *, options: SyncOptions, timing_a: bridge.Timing,
              timing_b: bridge.Timing, curve: tuple[np.ndarray, np.ndarray] | None = None,
              labels: dict[str, str] = SYNC_LABELS, rate: float | None = None) -> tuple[Clip, float | None]:
    """The synchronized blend the options ask for, from two clips (whole takes): (clip, weight used
    when it is one). `curve`: (seconds, weights) for a CURVE weight. `timing_*`: the frames that
    A Frames and B Frames count in. `rate`: the frames per second the result is keyed at (a
    scene's; None: a's, for a file); a clip's frame k is then key k, whole frames apart."""
    from .core import root, sync

    if options.mode.upper() not in SYNC_MODES:
        raise JobError(f"{labels['mode']} must be one of {', '.join(SYNC_MODES)}, not {options.mode!r}")
    if options.duration_unit == "CYCLES" and options.weight_mode == "CURVE":
        raise JobError(CYCLES_NEED_ONE_WEIGHT)
    # One loop: whole blended cycles at one weight, from straightened cycles so that the heading
    # closes too. One time base: every bake is sampled at whole frames of `rate`. Blended cycles
    # are rarely whole frames long, so whole cycles (looping or not) are played on the nearest
    # grid of whole frames that closes on them (their last frame is their first, one loop on:
    # faster or slower by at most half a frame over the cycles); Blender's Cycles modifier then
    # repeats a loop seamlessly, and a loop and the same cycles baked without Cyclic match.
    closed = loops(options)
    hint = labels["cycle_hint"]
    check_lengths(a, b, options.allow_mismatch, labels.get("allow_mismatch", "Allow Mismatch"))
    a = cycle_of(a, timing_a, options.frames_a, closed, labels["frames_a"], hint)
    b = cycle_of(b, timing_b, options.frames_b, closed, labels["frames_b"], hint)
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
                          mask=joint_mask(a, options.mask, labels["mask"]), lock_feet=options.lock_feet)
    if rate is not None and fps != rate:
        # Frame k of the grid is played at whole frame k of `rate`: its events go with it.
        scale = fps / rate
        out = out.replace(fps=float(rate), events={k: np.asarray(v) * scale for k, v in out.events.items()})
    return (root.in_place(out) if options.in_place else out), used


def sync_weight(a: Clip, b: Clip, options: SyncOptions) -> float | None:
    """The one weight of a blend of cycles a and b: Weight, or the weight that travels at Speed;
    None for a Curve weight."""
    from .core import sync

    if options.weight_mode == "CURVE":
        return None
    if options.weight_mode != "SPEED":
        return float(options.weight)
    try:
        return sync.weight_for_speed(a, b, options.speed_mps, options.mode.lower())
    except ValueError as exc:
        raise JobError(str(exc)) from None


def add_cycles_modifiers(obj: Any, action: Any) -> None:
    """Cycles modifiers on every curve of a looping bake; the root travels on each loop instead of
    jumping back to the start."""
    for fc in compat.fcurves(action, compat.action_slot(action, obj)):
        cycles = fc.modifiers.new("CYCLES")
        if fc.data_path.endswith(".location"):
            cycles.mode_before = cycles.mode_after = "REPEAT_OFFSET"


def bake_frames(options: SyncOptions, start: float, rate: float) -> tuple[float, float]:
    """(first, last) scene frames a sync bake of `options` keys, from `start` at `rate` (a duration
    in cycles: one second, for a ramp to edit; a Curve weight is refused with cycles)."""
    seconds = options.duration if options.duration_unit != "CYCLES" else 1.0
    return float(start), float(start) + max(float(seconds) * rate, 1.0)


def _weight_curve(obj: Any, action: Any, start: float, rate: float,
                  duration: float) -> tuple[np.ndarray, np.ndarray]:
    """(times, weights) of the armature's `stride_blend_weight` as keyed in `action` (A's: where
    it is keyed while A plays) over the bake. The default ramp Stride keyed, while untouched, is
    keyed again to span this bake."""
    curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    first, last = float(start), float(start) + max(duration * rate, 1.0)
    if curve is None or not len(curve.keyframe_points):
        first, last = key_weight_curve(obj, action, first, last)
        raise JobError(f"key the armature property {WEIGHT_PROPERTY!r} in action {action.name!r} "
                       f"(0 for action A, 1 for action B) over the frames to bake, then bake again: it "
                       f"now ramps from 0 at frame {first:g} to 1 at frame {last:g} (the bake's "
                       f"{duration:g} s), to edit")
    if default_ramp(obj, action) not in (None, (first, last)):
        key_weight_curve(obj, action, first, last)
        curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    times = np.arange(int(np.floor(duration * rate + 1e-9)) + 1) / rate
    weights = np.array([curve.evaluate(start + t * rate) for t in times])
    return times, np.clip(weights, 0.0, 1.0)


DEFAULT_RAMP = "stride_default_ramp"  # on action A: the (first, last) frames of the ramp Stride keyed


def key_weight_curve(obj: Any, action: Any, first: float, last: float) -> tuple[float, float]:
    """Key the armature property stride_blend_weight in `action` (its slot for `obj`) from 0 at
    frame `first` to 1 at frame `last`, easing in and out as two keys do by default in Blender
    (Bezier, flat at both ends), adding the property; remembered on the action as Stride's
    default ramp (`default_ramp`) until edited. (first, last)."""
    if WEIGHT_PROPERTY not in obj.keys():
        obj[WEIGHT_PROPERTY] = 0.0
    _, slot = bridge.resolve_action(obj, action)
    fc = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    if fc is None:
        fc = compat.new_fcurve(compat.channelbag(action, slot, create=True),
                               bridge.property_path(WEIGHT_PROPERTY), 0, group="Stride")
    first, last = float(first), max(float(last), float(first) + 1.0)
    compat.write_keys(fc, np.array([first, last]), np.array([0.0, 1.0]), "BEZIER")
    for key in fc.keyframe_points:  # whatever the user's default handles: flat at 0 and at 1
        key.handle_left_type = key.handle_right_type = "AUTO_CLAMPED"
    fc.update()
    action[DEFAULT_RAMP] = [first, last]
    return first, last


def default_ramp(obj: Any, action: Any) -> tuple[float, float] | None:
    """(first, last) frames of the default weight ramp Stride keyed in `action`, while its keys are
    still those; None once edited (or when there is none)."""
    stored = action.get(DEFAULT_RAMP)
    curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
    if stored is None or curve is None or len(curve.keyframe_points) != 2:
        return None
    first, last = (float(f) for f in stored)
    same = np.allclose(compat.read_keys(curve), [[first, 0.0], [last, 1.0]], rtol=0.0, atol=1e-4)
    eased = curve.keyframe_points[0].interpolation == "BEZIER" and all(
        k.handle_left_type == k.handle_right_type == "AUTO_CLAMPED" for k in curve.keyframe_points)
    return (first, last) if same and eased else None


def ensure_weight_curve(context: Any, options: SyncOptions) -> bool:
    """When action A (as the bake finds it) has no stride_blend_weight keys, key them from 0 at the
    scene's first frame to 1 where the bake ends (`bake_frames`); whether it did (not without an
    armature and action)."""
    if unmet(context, ACTION):
        return False
    obj = find_armature(context=context)
    try:
        action = resolve_source(obj, options.action_a)
        curve = bridge.property_curve(obj, action, WEIGHT_PROPERTY)
        if curve is not None and len(curve.keyframe_points):
            return False
        key_weight_curve(obj, action, *bake_frames(options, context.scene.frame_start,
                                                   bridge.scene_fps(context.scene)))
    except USER_ERRORS:  # action A named but missing, or with no slot for the armature
        return False
    return True


def bake_sync_blend(obj: Any, *, options: SyncOptions,
                    progress: Callable[[float], None] | None = None) -> tuple[Any, Clip, float | None]:
    """A new action blending two cycles in phase: (action, clip, weight used when constant)."""
    if not options.action_b:
        raise JobError("choose action B (A is the armature's active action unless named)")
    act_a = resolve_source(obj, options.action_a)
    act_b, _ = bridge.resolve_action(obj, options.action_b)
    scene = bridge.current_scene()
    start, rate = float(scene.frame_start), bridge.scene_fps(scene)
    curve = None
    if options.weight_mode == "CURVE" and options.duration_unit != "CYCLES":
        curve = _weight_curve(obj, act_a, start, rate, options.duration)
    (a, timing_a), (b, timing_b) = (bridge.read_action(obj, act_a, source=options.source),
                                    bridge.read_action(obj, act_b, source=options.source))
    for act in (act_a, act_b):
        bridge.check_skeleton(obj, act, options.allow_mismatch)
    out, used = sync_clip(a, b, options=options, timing_a=timing_a, timing_b=timing_b, curve=curve,
                          rate=rate)
    name = f"{act_a.name} + {act_b.name} sync ({options.mode.lower()})"
    # Keys at whole scene frames, one per frame of the blend (sync_clip's one time base).
    action = write_result(obj, out, name, bridge.Timing(start, rate), act_a, progress)
    if loops(options):
        add_cycles_modifiers(obj, action)
    return action, out, used


# -- previews -------------------------------------------------------------------------------------

# The sidebar shows what a bake will find before it runs. Panels redraw on every mouse move over
# them, so results are kept by what they depend on: the action (its name, how many curves and keys
# it has, its frame range and stored events: an edit that adds or removes keys, retimes the action
# or moves footsteps changes them), the scene's rate, and the options read. Errors are kept too,
# so a take without footsteps is not searched again on every redraw.
_PREVIEWS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_PREVIEWS_KEPT = 32


def forget_previews() -> None:
    """Drop every kept preview (the sidebar's Refresh button)."""
    _PREVIEWS.clear()


def _kept(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """compute(), once per key; a user error is kept as its message and raised again as a JobError."""
    if key not in _PREVIEWS:
        try:
            _PREVIEWS[key] = compute()
        except USER_ERRORS as exc:
            _PREVIEWS[key] = JobError(str(exc))
        while len(_PREVIEWS) > _PREVIEWS_KEPT:
            _PREVIEWS.popitem(last=False)
    _PREVIEWS.move_to_end(key)
    value = _PREVIEWS[key]
    if isinstance(value, JobError):
        raise JobError(str(value))
    return value


def action_key(obj: Any, action: Any) -> tuple[Any, ...]:
    """What an action's previews depend on (cheap to read on every redraw)."""
    curves = compat.fcurves(action, compat.action_slot(action, obj))
    stored = action.get(bridge.EVENTS_KEY)
    return (obj.name, action.name, len(curves), sum(len(fc.keyframe_points) for fc in curves),
            tuple(action.frame_range), repr(stored.to_dict()) if stored is not None else "",
            bridge.scene_fps())


class FootstepPreview(NamedTuple):
    """What Detect Footsteps will find on an action: its markers per track and the cadence."""

    action: str
    steps: dict[str, int]  # {'FootDown_L': n, 'FootDown_R': m}
    cadence: float  # steps per minute from the first footstep to the last (nan below two)
    problem: str  # why none will be found ('' when some are)


def preview_footsteps(obj: Any, *, options: FootstepOptions) -> FootstepPreview:
    """The footsteps Detect Footsteps finds with these options, kept between redraws."""
    name = options.action
    try:
        act, _ = bridge.resolve_action(obj, options.action or None)
        name = act.name
        speed = foot_speed(options.speed_mps)

        used, why = bridge.read_source(obj, act, options.source)
        if used == "EVALUATED":  # a panel's draw cannot play frames
            raise JobError(f"{why}: no preview of what the rig plays; Detect Footsteps reads it")

        def compute() -> FootstepPreview:
            clip, _ = bridge.read_action(obj, act, source=used)
            if clip.n_frames < 2:
                raise JobError(f"action {act.name!r} has fewer than two frames")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the operator reports them
                steps, _ = find_footsteps(clip, act.name, speed)
            times = np.sort(np.concatenate([np.asarray(t, dtype=np.float64) for t in steps.values()]))
            span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
            cadence = 60.0 * (len(times) - 1) / span if span > 0.0 else math.nan
            return FootstepPreview(act.name, {k: len(v) for k, v in steps.items()}, cadence, "")

        return _kept(("footsteps", action_key(obj, act), speed), compute)
    except USER_ERRORS as exc:
        return FootstepPreview(name, {}, math.nan, str(exc))


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


_NO_SPEEDS = (math.nan, math.nan)


def _cycle_preview(obj: Any, action: Any, frames: tuple[int, int], straighten: bool,
                   label: str, source: str = "AUTO") -> tuple[Clip, CyclePreview]:
    """(cycle, preview) of an action as sync_clip cuts it (the same call), kept between redraws."""
    from .core import contacts

    used, why = bridge.read_source(obj, action, source)
    if used == "EVALUATED":  # a panel's draw cannot play frames
        raise JobError(f"{action.name!r}: {why}: no preview of what the rig plays; Bake Sync Blend reads it")

    def compute() -> tuple[Clip, CyclePreview]:
        clip, timing = bridge.read_action(obj, action, source=used)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the operator reports them
            cycle = cycle_of(clip, timing, frames, straighten, label)
            marks = {k: v for k, v in clip.events.items() if k.startswith("FootDown_")}
            steps = marks or contacts.footsteps(clip)
        counts = {k: len(v) for k, v in sorted(steps.items())}
        return cycle, CyclePreview(action.name, cycle.n_frames / cycle.fps, counts)

    key = ("cycle", action_key(obj, action), tuple(frames), straighten)
    return _kept(key, compute)


def preview_sync(obj: Any, *, options: SyncOptions) -> SyncPreview:
    """Each action's cycle, the blended cycle length, and the travel speed (at the weight Bake Sync
    Blend will use, and its reachable range), computed as the bake computes them."""
    cycles: list[CyclePreview | None] = [None, None]
    try:
        closed = loops(options)
        act_a = resolve_source(obj, options.action_a)
        a, cycles[0] = _cycle_preview(obj, act_a, options.frames_a, closed, SYNC_LABELS["frames_a"],
                                      options.source)
        if not options.action_b:
            raise JobError("choose action B to blend with")
        act_b, _ = bridge.resolve_action(obj, options.action_b)
        b, cycles[1] = _cycle_preview(obj, act_b, options.frames_b, closed, SYNC_LABELS["frames_b"],
                                      options.source)
        a.check_compatible(b)
        key = ("sync", action_key(obj, act_a), action_key(obj, act_b), closed, tuple(options.frames_a),
               tuple(options.frames_b), options.mode, options.weight_mode, options.weight, options.speed_mps)
        return _kept(key, lambda: _blend_preview(a, b, cycles[0], cycles[1], options, bridge.scene_fps()))
    except USER_ERRORS as exc:
        return SyncPreview(cycles[0], cycles[1], math.nan, math.nan, math.nan, _NO_SPEEDS, str(exc))


def played_cycles(seconds: float, options: SyncOptions, rate: float) -> float:
    """How long `seconds` of blended cycle lasts as Bake Sync Blend keys it at `rate`: a duration
    in Cycles is played on the nearest whole number of frames (sync_clip's one time base)."""
    if options.duration_unit != "CYCLES" or not options.duration > 0:
        return seconds
    total = options.duration * seconds
    return max(1, round(total * rate)) / rate / options.duration


def _blend_preview(a: Clip, b: Clip, pa: CyclePreview | None, pb: CyclePreview | None,
                   options: SyncOptions, rate: float) -> SyncPreview:
    from .core import sync

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
