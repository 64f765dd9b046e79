"""Animation data across Blender versions, in one place.

- 4.2/4.3: F-curves live on `action.fcurves`; `fcurves.new(path, index=, action_group=)`.
- 4.4+: slotted actions. F-curves live in a channelbag per slot:
  `action.layers[0].strips[0].channelbag(slot, ensure=True)`; groups are made on the channelbag.
  Assigning an action does not pick a slot for a fresh object, so the slot is set explicitly.
- 5.0+: `action.fcurves` is gone.

Keys are read and written in bulk with `foreach_get` / `foreach_set` (never per key).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import bpy
import numpy as np

SLOTTED = bpy.app.version >= (4, 4, 0)
SLOT_NAME = "Slot"  # what Blender's BVH importer names every slot; same name keeps auto-assignment

INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


def new_action(name: str, obj: Any) -> tuple[Any, Any]:
    """A new action (Blender makes the name unique) with one slot for `obj`: (action, slot).

    On 4.2/4.3 the slot is None.
    """
    action = bpy.data.actions.new(name)
    if not SLOTTED:
        return action, None
    slot_name = SLOT_NAME
    adt = obj.animation_data
    if adt is not None and getattr(adt, "action_slot", None) is not None:
        slot_name = adt.action_slot.name_display
    slot = action.slots.new(obj.id_type, slot_name)
    layer = action.layers.new("Layer")
    layer.strips.new(type="KEYFRAME")
    return action, slot


def assign(obj: Any, action: Any, slot: Any = None) -> None:
    """Make `action` the object's active action, on `slot` (4.4+: required for a fresh object)."""
    adt = obj.animation_data or obj.animation_data_create()
    adt.action = action
    if SLOTTED:
        adt.action_slot = slot if slot is not None else action_slot(action, obj)


def action_slot(action: Any, obj: Any) -> Any:
    """The slot of `action` that animates `obj`: the assigned one, the only one, or the one whose
    name matches the object's slot; None on 4.2/4.3 or when none fits."""
    if not SLOTTED:
        return None
    adt = obj.animation_data
    if adt is not None and adt.action == action and adt.action_slot is not None:
        return adt.action_slot
    slots = [s for s in action.slots if s.target_id_type in (obj.id_type, "UNSPECIFIED")]
    if len(slots) == 1:
        return slots[0]
    wanted = adt.last_slot_identifier if adt is not None else ""
    for s in slots:
        if s.identifier == wanted or s.name_display == SLOT_NAME:
            return s
    return slots[0] if slots else None


def channelbag(action: Any, slot: Any, create: bool = False) -> Any:
    """The channelbag holding `slot`'s F-curves (4.4+); the action itself on 4.2/4.3.

    Both have `.fcurves` and `.groups`. None when it does not exist and `create` is False.
    """
    if not SLOTTED:
        return action
    if slot is None:
        return None
    if not action.layers:
        if not create:
            return None
        action.layers.new("Layer")
    layer = action.layers[0]
    if not layer.strips:
        if not create:
            return None
        layer.strips.new(type="KEYFRAME")
    strip = layer.strips[0]
    return strip.channelbag(slot, ensure=create)


def fcurves(action: Any, slot: Any) -> list[Any]:
    """All F-curves of `slot` in `action` (an empty list when there are none)."""
    bag = channelbag(action, slot)
    return list(bag.fcurves) if bag is not None else []


def new_fcurve(bag: Any, data_path: str, index: int, group: str | None = None) -> Any:
    """A new F-curve in a channelbag (or legacy action), in group `group` (made if missing)."""
    if not SLOTTED:
        if group:
            return bag.fcurves.new(data_path, index=index, action_group=group)
        return bag.fcurves.new(data_path, index=index)
    fc = bag.fcurves.new(data_path, index=index)
    if group:
        grp = bag.groups.get(group) or bag.groups.new(group)
        fc.group = grp
    return fc


def write_keys(fc: Any, frames: np.ndarray, values: np.ndarray, interpolation: str = "LINEAR") -> None:
    """Replace the keys of `fc` with (frames, values) in bulk and make its handles valid."""
    kp = fc.keyframe_points
    n = len(frames)
    if len(kp):
        kp.clear()
    # A key per frame wants local auto handles: 'NONE' takes them from the neighbouring keys, where
    # the default 'CONT_ACCEL' solves over the whole curve, at 2.5x the update() cost.
    # Set before the keys exist: setting it recomputes the handles of every key there.
    fc.auto_smoothing = "NONE"
    kp.add(n)
    co = np.empty((n, 2), dtype=np.float32)
    co[:, 0] = frames
    co[:, 1] = values
    kp.foreach_set("co", co.ravel())
    # add() makes BEZIER keys whatever the user's default interpolation: only others need writing.
    if interpolation != "BEZIER":
        kp.foreach_set("interpolation", _modes(n, interpolation))
    # Bezier handles are zero after foreach_set("co"); update() recomputes them.
    fc.update()


_MODES: dict[tuple[int, str], np.ndarray] = {}


def _modes(n: int, interpolation: str) -> np.ndarray:
    """One interpolation array per length, shared by every curve of a bake (127 curves alike)."""
    key = (n, interpolation)
    if key not in _MODES:
        _MODES.clear()
        _MODES[key] = np.full(n, INTERPOLATION[interpolation], dtype=np.int32)
    return _MODES[key]


def read_keys(fc: Any) -> np.ndarray:
    """[n, 2] (frame, value) of an F-curve's keys, float64."""
    return _read_co(fc).astype(np.float64)


def read_keys_many(curves: Sequence[Any]) -> list[np.ndarray]:
    """[n, 2] (frame, value) of each curve's keys as Blender stores them (float32); curves with as
    many keys as each other (a baked or imported action's) read into one buffer."""
    counts = {len(fc.keyframe_points) for fc in curves}
    if len(counts) != 1:
        return [_read_co(fc) for fc in curves]
    co = np.empty((len(curves), 2 * counts.pop()), dtype=np.float32)
    for fc, row in zip(curves, co, strict=True):
        fc.keyframe_points.foreach_get("co", row)
    return list(co.reshape(len(curves), -1, 2))


def _read_co(fc: Any) -> np.ndarray:
    co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co.reshape(-1, 2)


def remove_fcurves(bag: Any, curves: Iterable[Any]) -> None:
    for fc in list(curves):
        bag.fcurves.remove(fc)
