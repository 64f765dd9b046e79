"""Footsteps and locked feet of a clip, as Detect Footsteps and Lock Feet make them: Foot Speed as the
core takes it, the contacts' doubts kept as notes, and "none found" said with what to try."""

from __future__ import annotations

import warnings

import numpy as np

from ..core import contacts, footlock
from ..core.clip import Clip
from ..errors import LOWER_PELVIS_HINT, JobError, in_user_words
from ..options import LockFeetOptions
from ..wording import UI, Face


def foot_speed(value: float | None) -> float | None:
    """A Foot Speed setting as the core takes it: 0 (options.AUTO) or None is Auto."""
    return None if value is None or value <= 0.0 else float(value)


def find_footsteps(clip: Clip, name: str, speed: float | None, rate: str = "", *,
                   lifts: bool = False) -> tuple[dict[str, np.ndarray], list[str]]:
    """({'FootDown_L': seconds, 'FootDown_R': ...}, the contacts' doubts) of action `name`'s clip;
    JobError, saying what to try, when there are none. `speed`: Foot Speed, None for Auto; `rate`:
    what differs between the action's rate and the scene's (bridge.rate_note), the likelier cause."""
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


def lock_feet_clip(clip: Clip, *, options: LockFeetOptions, masks: dict[str, np.ndarray] | None = None,
                   face: Face = UI) -> tuple[Clip, list[str]]:
    """`clip` with its planted feet held: (clip, notes: where the contacts came from, then any doubt
    about them or the lock, in `face`'s words: Lower Pelvis named as its user calls it). `masks`:
    the contacts, else detected."""
    notes = ["contacts from the action's stride_contact curves" if masks is not None else "contacts detected"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if masks is None:
            masks = contacts.contacts(clip, speed_mps=foot_speed(options.speed_mps), split_slides=False)
        out = footlock.lock_feet(clip, contacts=masks, blend_time=options.blend_time,
                                 lower_pelvis=options.lower_pelvis)
    words = {LOWER_PELVIS_HINT: f". {face.called(LockFeetOptions, 'lower_pelvis')} lowers the pelvis instead"}
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
