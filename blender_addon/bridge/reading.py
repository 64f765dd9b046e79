"""One read of an action for a job: from its keys or from what the rig plays (`read_source` decides
for AUTO, and says why, for the `read_notes()` that are open), on the feet the user chose on the
armature (`obj.stride.left_foot` / `right_foot`, the Rig panel: they set every read clip's body map),
its rate checked against the scene's.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core import body
from ..core.clip import Clip
from ..errors import BridgeError, BridgeWarning
from ..timing import Timing
from .checks import rate_note
from .evaluated import evaluated_bones, evaluated_clip, rig_driven
from .keys import action_timing, action_to_clip, resolve_action
from .space import require_armature

SOURCES = ("KEYS", "EVALUATED", "AUTO")
_READS: list[list[str]] = []


@contextmanager
def read_notes() -> Iterator[list[str]]:
    """Collect what each `read_action` inside read and why ('read 'walk': evaluated (...)'), once
    each: operators report them, the CLI prints them."""
    notes: list[str] = []
    _READS.append(notes)
    try:
        yield notes
    finally:
        _READS.remove(notes)


def _note_read(text: str) -> None:
    for notes in _READS:
        if text not in notes:
            notes.append(text)


def read_source(obj: Any, action: Any = None, source: str = "AUTO") -> tuple[str, str]:
    """('KEYS' or 'EVALUATED', why) for a read of `action` on `obj`. AUTO reads what Blender plays
    when a bone read, or one above it, is moved by a constraint, an IK chain or a driver; its keys
    otherwise (the faster read, and the same motion)."""
    source = source.upper()
    if source not in SOURCES:
        raise BridgeError(f"read source {source!r} is not one of {', '.join(s.lower() for s in SOURCES)}")
    require_armature(obj)
    try:
        names, _ = evaluated_bones(obj)
    except BridgeError:  # the read itself says what is wrong
        names = [b.name for b in obj.data.bones]
    driven = rig_driven(obj)
    bones = obj.data.bones
    moved: dict[str, str] = {}
    for name in names:
        a = bones[name]
        while a is not None:
            if a.name in driven:
                above = "" if a.name == name else f" on {a.name}"
                moved.setdefault(name, f"{driven[a.name].lower()}{above}")
                break
            a = a.parent
    if moved:
        listed = ", ".join(f"{n} ({what})" for n, what in list(moved.items())[:3])
        more = f" and {len(moved) - 3} more bones" if len(moved) > 3 else ""
        why = f"constraints or drivers move {listed}{more}"
    else:
        why = "no constraint, IK or driver moves its bones"
    if source == "AUTO":
        return ("EVALUATED" if moved else "KEYS"), why
    if source == "EVALUATED":
        return source, "Source: Evaluated"
    return source, "Source: Keys" + (f"; {why}, which keys do not show: read Evaluated" if moved else "")


def source_clip(obj: Any, action: Any = None, slot: Any = None, source: str = "KEYS") -> Clip:
    """The Clip of an action read from `source` (KEYS, EVALUATED or AUTO: `read_source`), noted for
    the open `read_notes()`, in the unit the user set on the armature (`with_unit`); no body-map
    feet applied (`read_action` applies them)."""
    action, slot = resolve_action(obj, action, slot)
    used, why = read_source(obj, action, source)
    _note_read(f"read {action.name!r}: {used.lower()} ({why})")
    if used == "EVALUATED":
        return with_unit(obj, evaluated_clip(obj, action, slot=slot))
    return with_unit(obj, action_to_clip(obj, action, slot=slot))


def with_unit(obj: Any, clip: Clip) -> Clip:
    """`clip` with the unit the user set on the armature (`obj.stride.meters_per_unit`, the Rig
    panel's Unit) where it is set (0 is Auto: the body map's, from the standing height)."""
    settings = getattr(obj, "stride", None)
    unit = float(getattr(settings, "meters_per_unit", 0.0) or 0.0)
    if unit > 0.0:
        clip.meters_per_unit = unit
    return clip


def read_action(obj: Any, action: Any = None, slot: Any = None, source: str = "KEYS") -> tuple[Clip, Timing]:
    """An action read once: its Clip and the frame mapping of that clip's times (what a job needs
    to write results back at the action's frames). The clip's body map stands on the feet the user
    chose on the armature; without, the armature's feet are filled with the ones the body map
    finds. A rate that differs from the scene's is a BridgeWarning.

    `source`: 'KEYS' (the F-curves, `action_to_clip`), 'EVALUATED' (what Blender plays through the
    rig: constraints, IK, drivers, `evaluated_clip`) or 'AUTO' (`read_source` decides). What was
    read, and why, is noted for the `read_notes()` that are open."""
    action, slot = resolve_action(obj, action, slot)
    clip = source_clip(obj, action, slot, source)
    chosen = chosen_feet(obj)
    if chosen is not None:
        clip = with_feet(obj, clip)
    else:
        remember_feet(obj, clip)
    note = rate_note(obj, action, clip)
    if note:
        warnings.warn(note, BridgeWarning, stacklevel=2)
    return clip, action_timing(obj, action, slot=slot)


FOOT_LABELS = {"L": "Left Foot", "R": "Right Foot"}


def chosen_feet(obj: Any) -> dict[str, str] | None:
    """The ankles the user chose on the armature, {'L': bone, 'R': bone} (`obj.stride`, the Rig
    panel); None while the feet are unset or still the ones the body map filled in. Raises
    BridgeError when only one is set."""
    settings = getattr(obj, "stride", None)
    if settings is None:
        return None
    chosen = {"L": settings.left_foot.strip(), "R": settings.right_foot.strip()}
    if not any(chosen.values()):
        return None
    for side, name in chosen.items():
        if not name:
            other = FOOT_LABELS["R" if side == "L" else "L"]
            raise BridgeError(f"{obj.name!r} has its {other} set but no {FOOT_LABELS[side]}: choose both "
                              "feet in the Stride sidebar (Rig), or clear both")
    if settings.found_from and (chosen["L"], chosen["R"]) == (settings.found_left, settings.found_right):
        return None
    return chosen


def with_feet(obj: Any, clip: Clip) -> Clip:
    """`clip` with its body map built on the feet the user chose on the armature (`chosen_feet`);
    itself when there are none. BridgeError names the setting when a foot is no bone of the clip."""
    chosen = chosen_feet(obj)
    if chosen is None:
        return clip
    for side, name in chosen.items():
        if name not in clip.names:
            raise BridgeError(f"{FOOT_LABELS[side]} {name!r} is no bone of {obj.name!r} that "
                              f"{clip.name!r} reads: choose it in the Stride sidebar (Rig), or clear it")
    try:
        return body.with_feet(clip, chosen)
    except ValueError as exc:
        raise BridgeError(f"feet {chosen['L']!r}, {chosen['R']!r} of {obj.name!r}: {exc}") from None


def remember_feet(obj: Any, clip: Clip) -> None:
    """The armature's feet filled with the ones the clip's body map found and what from (names,
    motion), where the user chose none; nothing where the data cannot be written (a panel's draw)."""
    settings = getattr(obj, "stride", None)
    b = clip.body
    if settings is None or not b.feet:
        return
    found = (clip.names[b.feet["L"][0]], clip.names[b.feet["R"][0]], str(b.evidence.get("legs", "")))
    if (settings.left_foot, settings.right_foot, settings.found_from) == found \
            and (settings.found_left, settings.found_right) == found[:2]:
        return
    try:
        settings.left_foot, settings.right_foot, settings.found_from = found
        settings.found_left, settings.found_right = found[:2]
    except (AttributeError, RuntimeError):
        pass
