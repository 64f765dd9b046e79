"""Bakes keep what Stride does not blend: the source actions' other F-curves, carried into a result.

Stride's clip holds each bone's rotation and location; an action may key more: bone scale, B-bone
properties (`pose.bones[..].bbone_*`), custom properties of bones and of the object (`["foo"]`), a
rotation mode's curves the bone does not use. A bake carries every such curve (`carry`) from the
pieces of source actions that play in the result, each piece over its own span of result frames:

- keys are copied in bulk (`foreach_get` / `foreach_set`), with their handles, handle types,
  interpolation and easing, so that they evaluate as they did in the source;
- a piece is cut at its ends by splitting the key segment there (a Bezier segment by de Casteljau
  at the cut, so both halves trace the source's curve), so every frame inside a piece evaluates as
  its source does, the ends included;
- between two pieces (a transition's switch) a carried curve steps: the source's value holds
  through the switch frame (the last frame that is the source's alone, as Stride's own blend keeps
  it) and the target's takes over on the next frame. These channels are not blended;
- a curve that a piece's action does not key holds the property's value as it is set on the
  armature now over that piece.

Stride's own curves (`["stride_..."]`: event, phase, contact and tag curves, the blend weight) and
the keys of its settings on the armature (`stride.speed`) are never carried: bakes write their own.
F-curve modifiers and drivers are not carried (`Carried.notes` says which curves had modifiers).

The curves Stride writes itself (rotation, location) are replaced by the source's own keys over a
piece marked `exact` where Stride's keys there equal the source's (a rotation read from keys, then
written back unchanged): the source's Bezier handles and sub-frame keys then play exactly as
Blender evaluated them, where Stride's keys at its clip's frames would interpolate linearly between
them. Stride's keys after such a piece are turned (Euler angles by whole turns, quaternions by sign)
to continue the source's keys without a spin. Where they do not agree (a pose read from Blender's
evaluation that constraints moved, feet Stride locked, Euler keys past the gimbal's other solution)
Stride's keys stay: equal to the source at its clip's frames, linear between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from . import bridge, compat

STRIDE_PREFIX = "stride_"
# Blender's C enums, as foreach_get reads them.
CONSTANT, LINEAR, BEZIER = 0, 1, 2
FREE = 0  # handle type HD_FREE
_FLOATS = ("co", "handle_left", "handle_right")
_INTS = ("interpolation", "handle_left_type", "handle_right_type", "easing", "type")
_SCALARS = ("back", "amplitude", "period")
# Stride's keys "equal" the source's: float32 keys through float64 maths, far below a visible change.
_TOL = 1e-4
# The bone properties Stride writes itself.
_STRIDE_PROPS = (".rotation_quaternion", ".rotation_euler", ".location", ".rotation_axis_angle")


class Piece(NamedTuple):
    """A source action playing in a result over result frames start..end: result frame = offset +
    scale * action frame. `exact`: Stride's keys over the piece are the source's own (before a
    transition's switch), where they agree."""

    action: Any
    slot: Any
    start: float = -math.inf
    end: float = math.inf
    offset: float = 0.0
    scale: float = 1.0
    exact: bool = True


class Carried(NamedTuple):
    """What `carry` did: the curves carried, the Stride curves replaced by the source's keys, and
    what the user should hear (curves with modifiers, easing cut)."""

    carried: list[str]
    exact: list[str]
    notes: list[str]


def is_stride_curve(path: str) -> bool:
    """Whether an F-curve path is one of Stride's own custom properties (`["stride_..."]`)."""
    named = bridge.quoted_name(path)
    return named is not None and not named[1] and named[0].startswith(STRIDE_PREFIX)


def is_setting_curve(path: str) -> bool:
    """Whether an F-curve keys one of Stride's settings on the armature (`stride.speed`, the Speed
    Bake Blend Space reads): a bake that reads it writes its own."""
    return path.startswith("stride.")


def channels(action: Any, slot: Any) -> dict[tuple[str, int], Any]:
    """{(path, index): fcurve} of a slot's curves, Stride's own (its curves and its settings'
    keys) left out."""
    return {(fc.data_path, fc.array_index): fc for fc in compat.fcurves(action, slot)
            if not (is_stride_curve(fc.data_path) or is_setting_curve(fc.data_path))}


class CarryWarning(UserWarning):
    """Channels a bake could not carry, or carried with a change (operators report it as a WARNING)."""


def uncarried(obj: Any, action: Any, slot: Any, written: set[tuple[str, int]]) -> list[str]:
    """Paths of an action's curves (Stride's own left out) that a result holding `written` lacks,
    but for curves that only hold the value the property has on `obj` now (nothing is lost there)."""
    out = set()
    for (path, index), fc in channels(action, slot).items():
        if (path, index) in written or not len(fc.keyframe_points):
            continue
        values = read(fc).co[:, 1]
        static = _static(obj, path, index)
        if static is not None and np.abs(values - static).max() <= 1e-6 * max(1.0, abs(static)):
            continue
        out.add(path)
    return sorted(out)


# -- keys as arrays ---------------------------------------------------------------------------------

class Keys(NamedTuple):
    """Every key's data of a curve, in bulk: co, handles [n, 2]; the rest [n]."""

    co: np.ndarray
    left: np.ndarray
    right: np.ndarray
    ints: np.ndarray  # [n, 5]: _INTS
    scalars: np.ndarray  # [n, 3]: _SCALARS

    def __len__(self) -> int:
        return len(self.co)

    def take(self, mask: Any) -> Keys:
        return Keys(self.co[mask], self.left[mask], self.right[mask], self.ints[mask], self.scalars[mask])

    def copied(self) -> Keys:
        return Keys(self.co.copy(), self.left.copy(), self.right.copy(), self.ints.copy(),
                    self.scalars.copy())

    def mapped(self, offset: float, scale: float) -> Keys:
        def x(a: np.ndarray) -> np.ndarray:
            out = a.copy()
            out[:, 0] = offset + scale * a[:, 0]
            return out
        return Keys(x(self.co), x(self.left), x(self.right), self.ints, self.scalars)


def _empty() -> Keys:
    return Keys(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 5), dtype=np.int32),
                np.zeros((0, 3)))


def _concat(parts: Sequence[Keys]) -> Keys:
    parts = [p for p in parts if len(p)]
    if not parts:
        return _empty()
    return Keys(np.concatenate([p.co for p in parts]), np.concatenate([p.left for p in parts]),
                np.concatenate([p.right for p in parts]), np.concatenate([p.ints for p in parts]),
                np.concatenate([p.scalars for p in parts]))


def read(fc: Any) -> Keys:
    """All key data of an F-curve, float64 (ints as Blender's enums)."""
    kp = fc.keyframe_points
    n = len(kp)
    floats = []
    for prop in _FLOATS:
        buf = np.empty(2 * n, dtype=np.float32)
        kp.foreach_get(prop, buf)
        floats.append(buf.reshape(n, 2).astype(np.float64))
    ints = np.empty((len(_INTS), n), dtype=np.int32)
    for row, prop in zip(ints, _INTS, strict=True):
        kp.foreach_get(prop, row)
    scalars = np.empty((len(_SCALARS), n), dtype=np.float32)
    for srow, prop in zip(scalars, _SCALARS, strict=True):
        kp.foreach_get(prop, srow)
    return Keys(floats[0], floats[1], floats[2], ints.T.copy(), scalars.T.astype(np.float64))


def write(fc: Any, keys: Keys) -> None:
    """Replace an F-curve's keys with `keys` as they are: no handle is recalculated (the handles
    are the sources', which is how they evaluate as before)."""
    kp = fc.keyframe_points
    if len(kp):
        kp.clear()
    kp.add(len(keys))
    for prop, values in zip(_FLOATS, keys[:3], strict=True):
        kp.foreach_set(prop, np.ascontiguousarray(values, dtype=np.float32).ravel())
    for k, prop in enumerate(_INTS):
        kp.foreach_set(prop, np.ascontiguousarray(keys.ints[:, k], dtype=np.int32))
    for k, prop in enumerate(_SCALARS):
        kp.foreach_set(prop, np.ascontiguousarray(keys.scalars[:, k], dtype=np.float32))


# -- cutting ----------------------------------------------------------------------------------------

def _corrected(p0: np.ndarray, p1: np.ndarray, p2: np.ndarray,
               p3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Handles as Blender evaluates a Bezier segment: shortened together when they overlap in time
    (BKE_fcurve_correct_bezpart)."""
    h1, h2 = p0 - p1, p3 - p2
    span, l1, l2 = p3[0] - p0[0], abs(h1[0]), abs(h2[0])
    if l1 + l2 == 0.0 or l1 + l2 <= span:
        return p1, p2
    fac = span / (l1 + l2)
    return p0 - fac * h1, p3 - fac * h2


def _split(keys: Keys, i: int, x: float, value: float) -> tuple[Keys, np.ndarray, np.ndarray]:
    """A key at frame x inside segment i..i+1 with `value` (Blender's evaluation there): (new key,
    key i's new right handle, key i+1's new left handle), so that both halves trace the segment."""
    new = keys.take(slice(i, i + 1))
    new = new.copied()
    new.co[0] = (x, value)
    new.ints[0, 1:3] = FREE
    right, left = keys.right[i].copy(), keys.left[i + 1].copy()
    new.left[0] = new.right[0] = new.co[0]
    if keys.ints[i, 0] == BEZIER:
        p0, p3 = keys.co[i], keys.co[i + 1]
        p1, p2 = _corrected(p0, keys.right[i], keys.left[i + 1], p3)
        lo, hi = 0.0, 1.0  # x(t) rises on a corrected segment: bisect for x(t) = x
        for _ in range(60):
            t = 0.5 * (lo + hi)
            u = 1.0 - t
            xt = u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t ** 3 * p3[0]
            lo, hi = (t, hi) if xt < x else (lo, t)
        t = 0.5 * (lo + hi)
        a, b, c = p0 + t * (p1 - p0), p1 + t * (p2 - p1), p2 + t * (p3 - p2)
        ab, bc = a + t * (b - a), b + t * (c - b)
        here = np.array([x, value])
        mid = ab + t * (bc - ab)
        right, left = a, c
        new.left[0], new.right[0] = ab + here - mid, bc + here - mid
    return new, right, left


def cut(keys: Keys, start: float, end: float, value_at: Any) -> Keys:
    """The keys over frames start..end, with a key at each finite end (the segment there split, or
    the value there held) so that every frame in between evaluates as before. `value_at(x)`:
    Blender's evaluation of the curve at frame x."""
    co = keys.co
    parts: list[Keys] = []
    inside = (co[:, 0] >= start) & (co[:, 0] <= end)
    body = keys.take(inside)
    left_edge = right_edge = None
    for edge in (start, end):
        if not math.isfinite(edge) or (len(co) and np.any(co[:, 0] == edge)):
            continue
        i = int(np.searchsorted(co[:, 0], edge)) - 1
        if 0 <= i < len(co) - 1:
            new, right, left = _split(keys, i, edge, float(value_at(edge)))
            if edge == start:
                if len(body):  # the first kept key's left handle continues the split segment
                    body.left[0] = left
                    body.ints[0, 1:3] = FREE
                left_edge = new
            else:
                if len(body):
                    body.right[-1] = right
                    body.ints[-1, 1:3] = FREE
                right_edge = new
        else:  # outside the keys: the curve's extrapolation, held
            new = _held(keys, edge, float(value_at(edge)))
            if edge == start:
                left_edge = new
            else:
                right_edge = new
    if left_edge is not None:
        parts.append(left_edge)
    parts.append(body)
    if right_edge is not None:
        parts.append(right_edge)
    return _concat(parts)


def _held(template: Keys | None, x: float, value: float, interpolation: int = LINEAR) -> Keys:
    keys = _empty() if template is None or not len(template) else template.take(slice(0, 1))
    if not len(keys):
        keys = Keys(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 5), dtype=np.int32),
                    np.array([[1.70158, 0.8, 4.1]]))
    else:
        keys = keys.take(slice(0, 1)).copied()
    keys.co[0] = keys.left[0] = keys.right[0] = (x, value)
    keys.ints[0] = (interpolation, FREE, FREE, 0, 0)
    return keys


# -- carrying ---------------------------------------------------------------------------------------

def _static(obj: Any, path: str, index: int) -> float | None:
    """The value a property has on `obj` now (what plays where no curve keys it); None when the
    path does not resolve."""
    try:
        value = obj.path_resolve(path)
    except (ValueError, AttributeError, TypeError):
        return None
    try:
        return float(value[index])
    except TypeError:
        return float(value) if index == 0 else None
    except (IndexError, KeyError):
        return None


def _piece_keys(obj: Any, piece: Piece, fc: Any, path: str, index: int) -> Keys | None:
    """A piece's keys for one channel, in result frames, cut to the piece; a held value where the
    piece's action does not key it (None where not even that is known)."""
    inv = 1.0 / piece.scale

    if fc is not None and len(fc.keyframe_points):
        keys = read(fc)
        lo, hi = (piece.start - piece.offset) * inv, (piece.end - piece.offset) * inv
        return cut(keys, lo, hi, lambda x: fc.evaluate(x)).mapped(piece.offset, piece.scale)
    value = _static(obj, path, index)
    if value is None:
        return None
    frames = [f for f in (piece.start, piece.end) if math.isfinite(f)]
    return _concat([_held(None, f, value, CONSTANT) for f in frames])


def carry(obj: Any, action: Any, slot: Any, pieces: Sequence[Piece]) -> Carried:
    """Carry the curves of `pieces`' actions that Stride's result `action` (its `slot`) lacks into
    it, each over its piece's frames; over `exact` pieces, replace Stride's rotation and location
    keys by the source's where they agree. Pieces come in result-time order."""
    bag = compat.channelbag(action, slot, create=True)
    written = {(fc.data_path, fc.array_index): fc for fc in bag.fcurves}
    sources = [channels(p.action, p.slot) for p in pieces]
    notes: list[str] = []
    modified = sorted({f"{p.action.name}: {path}[{i}]" for p, src in zip(pieces, sources, strict=True)
                       for (path, i), fc in src.items() if len(fc.modifiers)})
    if modified:
        notes.append(f"F-curve modifiers are not carried into the bake ({', '.join(modified[:4])}"
                     f"{', ...' if len(modified) > 4 else ''}): add them to its curves again")
    wanted = {k for src in sources for k in src if k not in written}
    carried = []
    for path, index in sorted(wanted):
        parts = [_piece_keys(obj, p, src.get((path, index)), path, index)
                 for p, src in zip(pieces, sources, strict=True)]
        if not any(k is not None and len(k) for k in parts):
            continue
        for k in parts[:-1]:  # the step between pieces: a carried channel is not blended
            if k is not None and len(k):
                k.ints[-1, 0] = CONSTANT
        keys = _concat([k for k in parts if k is not None])
        source_fc = next(src[(path, index)] for src in sources if (path, index) in src)
        group = source_fc.group.name if source_fc.group is not None else None
        fc = compat.new_fcurve(bag, path, index, group=group)
        fc.extrapolation = source_fc.extrapolation
        fc.mute = source_fc.mute
        write(fc, keys)
        carried.append(f"{path}[{index}]")
    exact: list[str] = []
    for p, src in zip(pieces, sources, strict=True):
        if p.exact:
            exact += _exact(obj, written, p, src)
    return Carried(carried, exact, notes)


def _values_at(fc: Any, keys: Keys, frames: np.ndarray) -> np.ndarray:
    """A curve's values at `frames` (its own keys where they fall on them, else Blender's)."""
    if len(keys) == len(frames) and np.array_equal(keys.co[:, 0].astype(np.float32),
                                                   frames.astype(np.float32)):
        return keys.co[:, 1]
    return np.array([fc.evaluate(float(f)) for f in frames])


def _exact(obj: Any, written: dict[tuple[str, int], Any], piece: Piece,
           src: dict[tuple[str, int], Any]) -> list[str]:
    """Replace Stride's rotation and location keys over an exact piece by the source's own keys,
    per bone property, where they agree (within float32 through Stride's maths); the paths done."""
    done = []
    props: dict[str, list[int]] = {}
    for path, index in written:
        named = bridge.quoted_name(path, "pose.bones")
        if named and named[1] in _STRIDE_PROPS:
            props.setdefault(path, []).append(index)
    inv = 1.0 / piece.scale
    for path, indices in sorted(props.items()):
        indices = sorted(indices)
        if any((path, i) not in src or not len(src[(path, i)].keyframe_points) for i in indices):
            continue
        ours = [read(written[(path, i)]) for i in indices]
        frames = ours[0].co[:, 0]
        if any(not np.array_equal(k.co[:, 0], frames) for k in ours):
            continue
        inside = (frames >= piece.start) & (frames <= piece.end)
        if not inside.any():
            continue
        theirs_keys = [read(src[(path, i)]) for i in indices]
        here = (frames[inside] - piece.offset) * inv
        theirs = np.stack([_values_at(src[(path, i)], k, here)
                           for i, k in zip(indices, theirs_keys, strict=True)], axis=-1)
        mine = np.stack([k.co[inside, 1] for k in ours], axis=-1)
        kind = path.rsplit(".", 1)[1]
        aligned = _aligned(kind, theirs, mine)
        if aligned is None:
            continue
        # Stride's keys after the piece turn to continue the source's (Euler by whole turns,
        # quaternions by sign), taken at the piece's last frame.
        after = frames > piece.end
        turn = aligned
        for k, (i, their) in enumerate(zip(indices, theirs_keys, strict=True)):
            fc = src[(path, i)]
            lo, hi = (piece.start - piece.offset) * inv, (piece.end - piece.offset) * inv
            body = cut(their, lo, hi, lambda x, fc=fc: fc.evaluate(x)).mapped(piece.offset, piece.scale)
            rest = ours[k].take(after)
            if len(rest):
                if kind == "rotation_euler":
                    rest.co[:, 1] += turn[k]
                    rest.left[:, 1] += turn[k]
                    rest.right[:, 1] += turn[k]
                elif kind == "rotation_quaternion" and turn[0] < 0:
                    rest.co[:, 1] *= -1
                    rest.left[:, 1] *= -1
                    rest.right[:, 1] *= -1
                if len(body):
                    body.ints[-1, 0] = LINEAR  # into Stride's keys as Stride keys them
            before = ours[k].take(frames < piece.start)
            write(written[(path, i)], _concat([before, body, rest]))
        done.append(path)
    return done


def _aligned(kind: str, theirs: np.ndarray, mine: np.ndarray) -> np.ndarray | None:
    """Whether Stride's values `mine` [n, k] are the source's `theirs` over a piece: None if not;
    else what turns Stride's keys after it onto the source's (per Euler axis the whole turns at
    the last frame, for a quaternion the sign there [1]; zeros otherwise)."""
    if kind == "rotation_euler":
        diff = theirs - mine
        turns = np.round(diff / (2 * math.pi)) * 2 * math.pi
        if np.abs(diff - turns).max() > _TOL:
            return None
        return turns[-1]
    if kind == "rotation_quaternion":
        norm = np.linalg.norm(theirs, axis=-1, keepdims=True)
        if (norm < 1e-6).any():
            return None
        q = theirs / norm
        err = np.minimum(np.linalg.norm(q - mine, axis=-1), np.linalg.norm(q + mine, axis=-1))
        if err.max() > _TOL:
            return None
        return np.array([1.0 if float(q[-1] @ mine[-1]) >= 0.0 else -1.0])
    scale = max(1.0, float(np.abs(theirs).max()))
    if np.abs(theirs - mine).max() > _TOL * scale:
        return None
    return np.zeros(theirs.shape[1])
