"""A bake's result written back: a new action on the armature (made active), its events as markers,
the channels Stride does not blend carried from its sources (carry.py), and, where the rig would not
show it, a copy of the rig it plays on (showing.py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import bpy
import numpy as np

from .. import bridge, carry, compat, showing
from ..core.clip import Clip
from ..markers import replace_track
from ..timing import Timing
from .scene import BAKED_FROM

PLAYS_ON = "stride_plays_on"  # on a baked action: the rig copy it plays on (showing.py), if not the rig


def write_result(obj: Any, clip: Clip, name: str, timing: Timing, source: Any = None,
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
