"""Blend spaces: any number of gaits (a slow walk, a walk, a jog, a run, a sprint), each played at
the speed the character moves, all in step.

A one-dimensional blend space over speed, as engines have them at run time (Unreal's blend spaces
with sync groups and markers, Unity's 1-D blend trees, Godot's BlendSpace1D), baked offline:

- A **gait** is a loop (`sync.loop_cycle`; a take is cut with it) whose footsteps are its markers:
  FootDown_L and FootDown_R, alternating. A **cycle** runs from a left touchdown to the next, and
  a loop may hold several. A gait's **speed** is its stride over its period (`gait_speeds`,
  `sync.travel_speed`).
- **Phase** counts touchdowns from each gait's first left one (`sync.markers_in_step` with
  first='FootDown_L'), every gait at its own marker j modulo its marker count. So loops of any
  length or cycle count play in step, and a loop played twice over is the same gait (Godot's
  blend spaces stumble on clips of different cycle counts; engines' sync markers are this).
- At each output frame the target speed picks the two gaits whose speeds bracket it and the weight
  at which their synchronized blend travels at it (`sync.weight_for_speed`, linear mode). The
  bracketing pair only changes where a gait's own speed is crossed, where that gait plays alone,
  so nothing jumps. Below the slowest gait's speed, down to `RATE_RANGE[0]` of it, that gait
  plays alone and slower (playback rate target / its speed); above the fastest, up to
  `RATE_RANGE[1]` of it, faster. Beyond, a ValueError names the range.
- The rest is `sync_blend`'s, over two gaits at a time (`sync.warp`, `sync.blend_warped`): segment
  durations blend linearly and are divided by the rate, the phase advances dt / S each frame
  (monotonic whatever the target does), each gait is sampled at its own warped time, the root's
  floor steps (each gait's velocity x its playback rate) blend and integrate, and its residual
  blends like a joint. So the root covers the blended stride over the blended cycle: the target
  speed, with each gait's own speed changes within a cycle kept. At a constant target between
  two gaits the output is `sync.sync_blend` of them at `sync.weight_for_speed`'s weight (when the
  slower one's loop starts on its left touchdown); at a gait's own speed, that loop.
- Gaits that carry their travel on different joints of one skeleton (a dummy root above the hips
  in some) are played on the deepest (`sync.common_root`), measured with the up and facing of
  the slowest gait already on it.
- FootDown_L / FootDown_R events sit where the blend's feet land: each gait's own touchdowns
  (`contacts.footsteps` on its loop, read once per gait) at its warped time, the pair's two
  blended by weight.

Times are seconds at every boundary.
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from . import contacts, footlock, sync
from .body import FeetSpec, with_feet
from .clip import Clip

# How far past its gaits' speeds a blend space reaches, as fractions of the slowest and the
# fastest gait's speed: that gait played slower or faster. Engines clamp or scale the rate too;
# a walk played much slower than 0.7x looks like slow motion, a sprint sped up past 1.3x too.
RATE_RANGE = (0.7, 1.3)
_FEET = ("FootDown_L", "FootDown_R")


# -- gaits ---------------------------------------------------------------------------------------


def _as_loop(clip: Clip, feet: FeetSpec | None) -> Clip:
    """The clip as a loop with footstep markers: a loop that has FootDown markers as it is, any
    other clip cut (or, a loop, marked) by `sync.loop_cycle`."""
    if not isinstance(clip, Clip):
        raise TypeError(f"gaits are Clips (loops or takes), not {type(clip).__name__}")
    clip = with_feet(clip, feet)
    if clip.loop and all(len(clip.events.get(k, ())) for k in _FEET):
        return clip
    return sync.loop_cycle(clip)


def _loops(loops: Sequence[Clip], feet: FeetSpec | None) -> list[Clip]:
    """The gaits as loops of one skeleton on one motion root, in the order given."""
    if isinstance(loops, Clip) or len(loops) < 1:
        raise TypeError("give the gaits as a list of loops or takes of one skeleton")
    clips = [_as_loop(c, feet) for c in loops]
    for c in clips[1:]:
        clips[0].check_compatible(c)
    return sync.common_root(clips)


def gait_speeds(loops: Sequence[Clip], *, feet: FeetSpec | None = None) -> np.ndarray:
    """[G] each loop's travel speed in m/s, in the order given, as `sync.travel_speed(loop, loop,
    0.0)` gives it: its stride over its period (a loop of several cycles: their strides over
    their periods). Takes are cut with `sync.loop_cycle` first; feet as for `sync.loop_cycle`.
    Loops that carry their travel on different joints of the skeleton are measured on the
    deepest (`sync.common_root`), as `blend_space` plays them. Two or more gaits that make a blend
    space are read once: these are its speeds, which `blend_space` then reuses."""
    if not isinstance(loops, Clip) and len(loops) >= 2 and all(isinstance(c, Clip) for c in loops):
        try:
            space = _space(loops, feet)
        except ValueError:  # no blend space of them (two at one speed, steps that do not alternate)
            pass
        else:
            out = np.empty(len(loops))
            out[space.given] = space.speeds
            return out
    return np.array([sync.travel_speed(g, g, 0.0) for g in _loops(loops, feet)], dtype=np.float64)


def _check_steps(loop: Clip) -> None:
    """A gait's footstep markers must alternate left and right, from a left touchdown."""
    label = loop.name or "a gait"
    if not all(len(loop.events.get(k, ())) for k in _FEET):
        raise ValueError(f"{label} has no left and right touchdowns (FootDown_L, FootDown_R) to find its "
                         "cycle by; cut it with sync.loop_cycle or mark its footsteps")
    m = sync.markers_in_step([loop], names=_FEET, first=_FEET[0])[0]
    if len(m.names) % 2 or any(k != _FEET[i % 2] for i, k in enumerate(m.names)):
        found = ", ".join(f"{k[-1]} {t:.3f}" for k, t in zip(m.names, m.times, strict=True))
        raise ValueError(f"{label}: touchdowns must alternate left and right, one per time, for its "
                         f"cycles to be found (it has {found} s over a {m.period:.3f} s loop); check its "
                         "FootDown markers or cut it again with sync.loop_cycle")


class _Space(NamedTuple):
    """The gaits in order of speed, in step (`sync.in_step`, markers from each one's first left
    touchdown), their speeds (m/s), where each stands in the list given, and what each gait's
    feet do played on (`_own_feet`): its own touchdowns' offsets from its markers (seconds) and
    its contacts per frame."""

    gaits: sync.Gaits
    speeds: np.ndarray
    given: list[int]
    offsets: list[np.ndarray]
    planted: list[dict[str, np.ndarray]]


# The last few blend spaces worked out, by their gaits (see `_space`).
_SPACES: dict[tuple[Any, ...], tuple[list[weakref.ref[Clip]], _Space]] = {}
_KEEP = 4


def _fingerprint(clip: Clip) -> tuple[Any, ...]:
    """What a blend space reads of a gait, digested: its motion, events, rate and body facts."""
    digest = hashlib.blake2b(digest_size=16)
    for a in (clip.rotations, clip.positions):
        digest.update(np.ascontiguousarray(a).data)
    for k in sorted(clip.events):
        digest.update(k.encode())
        digest.update(np.ascontiguousarray(clip.events[k], dtype=np.float64).data)
    return (digest.hexdigest(), clip.fps, clip.loop, clip.name, clip.root, tuple(clip.up),
            tuple(clip.forward), clip.meters_per_unit, id(clip.body))


def _space(loops: Sequence[Clip], feet: FeetSpec | None) -> _Space:
    """The loops as a blend space: two or more, of one skeleton, no two at one speed. Worked out
    once for a set of gaits and reused while they are unchanged (a technical animator bakes many
    speed curves from one set): the gaits' speeds, travel, markers and what their feet do are
    what a bake reads of them, whatever its speed."""
    if isinstance(loops, Clip) or len(loops) < 2:
        raise ValueError("a blend space needs two or more gaits (loops or takes of one skeleton)")
    for c in loops:
        if not isinstance(c, Clip):
            raise TypeError(f"gaits are Clips (loops or takes), not {type(c).__name__}")
    key = (tuple(id(c) for c in loops), tuple(_fingerprint(c) for c in loops), repr(feet))
    found = _SPACES.get(key)
    if found is not None and all(r() is c for r, c in zip(found[0], loops, strict=True)):
        return found[1]
    space = _work_out(loops, feet)
    _SPACES[key] = ([weakref.ref(c) for c in loops], space)
    while len(_SPACES) > _KEEP:
        del _SPACES[next(iter(_SPACES))]
    return space


def _work_out(loops: Sequence[Clip], feet: FeetSpec | None) -> _Space:
    clips = _loops(loops, feet)
    for c in clips:
        _check_steps(c)
    speeds = np.array([sync.travel_speed(g, g, 0.0) for g in clips])
    order = sorted(range(len(clips)), key=lambda i: speeds[i])
    gaits = [clips[i] for i in order]
    for (a, va), (b, vb) in itertools.pairwise(zip(gaits, speeds[order], strict=True)):
        if vb <= va * (1.0 + 1e-9):
            raise ValueError(f"gaits {a.name or '?'} and {b.name or '?'} both travel at {va:.4g} m/s: "
                             "a blend space needs one gait per speed")
    step = sync.in_step(gaits, names=_FEET, first=_FEET[0])
    feet_of = [_own_feet(step, g) for g in range(len(gaits))]
    return _Space(step, speeds[order], order, [f[0] for f in feet_of], [f[1] for f in feet_of])


# -- the target speed ----------------------------------------------------------------------------


def _pairs(space: _Space, v: np.ndarray, times: np.ndarray) -> sync.Pairs:
    """Per output frame, the two gaits whose speeds bracket the target v [n] (m/s) at the weight
    that travels at it (`sync.pair_weights`); one gait alone, rate scaled, past the slowest or
    the fastest."""
    speeds, gaits = space.speeds, space.gaits.loops
    least, most = RATE_RANGE[0] * speeds[0], RATE_RANGE[1] * speeds[-1]
    tol = 1e-9 * speeds[-1]
    bad = ~((v >= least - tol) & (v <= most + tol))
    if np.any(bad):
        i = int(np.argmax(bad))
        listed = ", ".join(f"{g.name or '?'} {s:.3g}" for g, s in zip(gaits, speeds, strict=True))
        raise ValueError(f"{v[i]:.4g} m/s at {times[i]:.3f} s is outside the range the gaits reach, "
                         f"[{least:.4g}, {most:.4g}] m/s ({listed} m/s; {RATE_RANGE[0]:g}x the slowest "
                         f"to {RATE_RANGE[1]:g}x the fastest play that gait slower or faster)")
    G = len(gaits)
    # At a gait's own speed it is the slower of its pair, at weight 0 (the fastest: the faster, at
    # weight 1): it plays alone, and the pair changes there.
    a = np.clip(np.searchsorted(speeds, v, side="right") - 1, 0, G - 2)
    b = a + 1
    w, rate = np.zeros_like(v), np.ones_like(v)
    below, above = v < speeds[0] - tol, v > speeds[-1] + tol
    inside = ~(below | above)
    for k in np.unique(a[inside]).tolist():
        sel = inside & (a == k)
        w[sel] = sync.pair_weights(space.gaits, k, k + 1, v[sel])
    rate[below], rate[above] = v[below] / speeds[0], v[above] / speeds[-1]
    a[below], b[below] = 0, 0
    a[above], b[above] = G - 1, G - 1
    return sync.Pairs(a, b, w, rate)


def _plan(loops: Sequence[Clip], speed: Any, duration: float, fps: float | None,
          feet: FeetSpec | None) -> tuple[_Space, sync.Warp, int]:
    """The gaits, where the blend space plays them, and the gait whose trajectory it starts on:
    the one that plays alone at t = 0, else the slower of the pair, at its frame nearest its
    first left touchdown (phase 0, to the frame: a gait alone plays its own frames)."""
    space = _space(loops, feet)
    gaits = space.gaits
    rate = max(g.fps for g in gaits.loops) if fps is None else float(fps)
    times = sync.output_times(duration, rate)
    pairs = _pairs(space, sync.curve_values(speed, times, "speed"), times)
    anchor = int(pairs.b[0] if pairs.weight[0] == 1.0 else pairs.a[0])
    loop, m = gaits.loops[anchor], gaits.markers[anchor]
    start = sync.phase_at(m, round(m.times[0] * loop.fps) / loop.fps)
    return space, sync.warp(gaits.markers, pairs, rate, mode="linear", start=start), anchor


# -- the blend space -----------------------------------------------------------------------------


def blend_space(loops: Sequence[Clip], speed: Any, duration: float, *, fps: float | None = None,
                feet: FeetSpec | None = None, lock_feet: bool = False) -> Clip:
    """The gaits in `loops` played at `speed` for `duration` seconds (frames 0 .. duration * fps),
    in step: at each moment the two whose speeds bracket the target, blended (see the module notes).

    loops: two or more clips of one skeleton, each a loop (`sync.loop_cycle`) with FootDown_L /
        FootDown_R markers, or a take, cut with `sync.loop_cycle`; in any order (they are taken in
        order of their speed, `gait_speeds`), no two at one speed.
    speed: the target in m/s: a number, a callable f(t_seconds) -> m/s (called with the array of
        output times if it accepts one) or a (times, speeds) pair interpolated linearly and held
        past its ends, as `sync.sync_blend` takes its weight. From `RATE_RANGE[0]` times the
        slowest gait's speed to `RATE_RANGE[1]` times the fastest's; ValueError outside, naming
        that range.
    fps: the output rate (default: the highest of the loops' rates). feet: {'L': ankle, 'R':
        ankle} when the body map's are not the ones (`body.with_feet`).
    lock_feet: hold each foot where it lands (`footlock.lock_feet`) over the frames where every
        gait that shows has it planted (`blend_space_contacts`).

    The output starts at phase 0, every gait at its first left touchdown (to the nearest frame of
    the gait that plays alone at t = 0, or of the slower of the pair), on that gait's trajectory.
    `events` hold FootDown_L / FootDown_R at the blend's touchdowns: each gait's own (found on
    its loop played on) at its warped time, the pair's two blended by weight (sub-frame seconds).
    What a blend space reads of its gaits is worked out once and reused while they are unchanged.
    """
    space, s, anchor = _plan(loops, speed, duration, fps, feet)
    out = sync.blend_warped(space.gaits, s, anchor=anchor)
    out.events = _touchdowns(space, s)
    if lock_feet:
        out = footlock.lock_feet(out, contacts=sync.warped_contacts(space.gaits, s, space.planted))
    return out


def blend_space_contacts(loops: Sequence[Clip], speed: Any, duration: float, *, fps: float | None = None,
                         feet: FeetSpec | None = None) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: the gaits' contacts (each found on its loop played on) on `blend_space`'s
    output frames with the same arguments (`sync.warped_contacts`): planted where every gait that
    shows is. What `lock_feet=True` holds."""
    space, s, _ = _plan(loops, speed, duration, fps, feet)
    return sync.warped_contacts(space.gaits, s, space.planted)


def gait_weights(loops: Sequence[Clip], speed: Any, duration: float, *, fps: float | None = None,
                 feet: FeetSpec | None = None) -> np.ndarray:
    """[n, G] each gait's weight on `blend_space`'s output frames (same arguments), gaits in the
    order given: at most two non-zero on a frame, adjacent in speed, summing to 1."""
    space, s, _ = _plan(loops, speed, duration, fps, feet)
    order, p = np.array(space.given), s.pairs
    out = np.zeros((len(s.times), len(order)))
    frames = np.arange(len(s.times))
    np.add.at(out, (frames, order[p.a]), 1.0 - p.weight)
    np.add.at(out, (frames, order[p.b]), p.weight)
    return out


# -- footsteps ----------------------------------------------------------------------------------

# A gait's feet are read on its loop played on for this many periods, in the middle one: as the
# blend's own feet are read, and alike for a loop played twice over.
_PLAYED = 3


def _own_feet(gaits: sync.Gaits, g: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """([K] seconds from each of gait g's markers to its own touchdown of that foot, {foot: bool
    [N]} its contacts per frame), as `contacts.footsteps` and `contacts.contacts` find them on
    the loop played on from its frame 0 as a blend space plays it, in the middle period. An
    offset is 0 where no touchdown is found within half the shorter neighbouring segment.
    Markers carried over from the take a loop was cut from can be frames off where its own
    feet land, and a loop read whole wraps its seam, which the detector reads a frame or so
    differently from the same poses played on."""
    loop, m = gaits.loops[g], gaits.markers[g]
    N = loop.n_frames
    n = _PLAYED * N + 1
    alone = sync.Pairs(np.full(n, g), np.full(n, g), np.zeros(n), np.ones(n))
    s = sync.warp(gaits.markers, alone, loop.fps, start=sync.phase_at(m, 0.0))
    played = sync.blend_warped(gaits, s, anchor=g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", contacts.ContactWarning)
        found = contacts.footsteps(played)
    planted = {foot: mask[N:2 * N] for foot, mask in contacts.contacts(played).items()}
    reach = 0.5 * np.minimum(m.durations, np.roll(m.durations, 1))
    offsets = np.zeros(len(m.times))
    for k, (name, t) in enumerate(zip(m.names, m.times + m.period, strict=True)):
        own = np.asarray(found.get(name, ()), dtype=np.float64)
        if own.size:
            d = own[np.argmin(np.abs(own - t))] - t
            offsets[k] = d if abs(d) <= reach[k] else 0.0
    return offsets, planted


def _touchdowns(space: _Space, s: sync.Warp) -> dict[str, np.ndarray]:
    """{FootDown_L, FootDown_R: seconds}: the blend's touchdowns. Each marker the phase crosses
    (and the next one) stands for a touchdown of its foot; each gait's own touchdown for it is put
    on the output's clock through its warped time, and the pair's two are blended by the weight
    where the marker is crossed."""
    times, p = s.times, s.pairs
    last = s.crossings[-1][1] + 1 if s.crossings else int(np.floor(s.phase[-1])) + 1
    marks = np.array([j for _, j in s.crossings] + [last])
    at = np.array([t for t, _ in s.crossings] + [times[-1]])
    # The pair and weight of the step the marker is crossed in (a step's are its first frame's).
    frame = np.clip(np.searchsorted(times, at + 1e-9, side="right") - 1, 0, len(times) - 1)
    first, second = p.showing()
    a, shown, w = first[frame], second[frame], p.weight[frame]
    t_a, t_b = np.zeros(len(marks)), np.zeros(len(marks))
    for g in np.union1d(a, shown).tolist():
        m = space.gaits.markers[g]
        K = len(m.times)
        at_own = m.times[marks % K] + (marks // K) * m.period + space.offsets[g][marks % K]
        on_clock = np.interp(at_own, s.local[g], times, left=np.nan, right=np.nan)
        t_a[a == g], t_b[shown == g] = on_clock[a == g], on_clock[shown == g]
    t = np.where(a == shown, t_a, (1.0 - w) * t_a + w * t_b)
    keep = np.isfinite(t) & (t >= 0.0) & (t <= times[-1] + 1e-9)
    return {foot: np.sort(t[keep & (marks % 2 == i)]) for i, foot in enumerate(_FEET)}
