"""Paths: a character walked along a polyline on the floor at the speed it is given, feet planted.

Distance matching, as engines do it at run time (Unreal's distance matching and orientation
warping, motion matching's trajectories), baked offline from the user's own gaits:

- The **path** is the polyline's floor projection (its up component dropped), resampled by arc
  length, its corners rounded over about two steps (`_rounded`: its tangent's direction
  low-passed over `ROUNDING` of a step and integrated again, so circles and lines, whose
  direction changes evenly, keep their shape exactly). Distances along it are meters; angles are
  radians about up, as `root.heading` measures them.
- The **speed** is asked per meter of path (a number, a callable of the distance, or a
  (distances, speeds) pair) and becomes a clock by t(s) = integral of ds / v. The blend space
  (`blendspace.blend_space`) plays the gaits at that speed in time: a straight clip whose root
  covers, cycle by cycle, the distance the speed asks (the gaits chosen and blended by speed,
  in step, from phase 0).
- **Bending** (`_laid_along`): the straight clip's root travels along a line. Its floor position
  splits into the distance along the line, x(t), and the offset across it: the sway, plus any
  drift of the blend (the offset low-passed over a cycle, which is dropped). The root goes on the
  path at arc length x(t), the sway across the path's tangent there, at its own height; its
  rotation turns by the path's tangent (low-passed over an eighth of a cycle) less the line's
  direction, so the hips' swing about the travel direction is kept. The body follows its root.
  The clip ends on the frame its root reaches the path's end.
- **Feet**: turning the body turns the legs with it, so a foot the straight clip holds still would
  spin on the floor and sweep around the root through a turn. Each leg turns about its
  hip-ankle line over a contact so that the foot keeps the heading the body has mid-contact (the
  body turning over it: the hip's rotation, as a walker's) but for `FOOT_TURN` of the body's turn,
  and on to the next in the air (`_swivel`); then `footlock.lock_feet` holds each planted foot
  where it lands (pivoting on the point of it that moves least as it turns), lowering the
  pelvis where a leg would not reach (a tight turn, or a blend of gaits that slides its feet):
  turning comes from turning the travel and holding the feet. Contacts are found on the straight
  clip (`contacts.contacts`), where its feet do not sweep, each lock let go `LET_GO` before the
  lift they find and eased in over `EASE_IN`. The locks are worked on the clip with its first
  cycle played before it (`_with_lead_in`, then cut off), so that a foot planted over the start
  is held as it was instead of landing on the first frame.
- **Events**: FootDown_L / FootDown_R at the blend's touchdowns (bending does not move them in time).
- **Warnings** (`PathWarning`): where the speed asked is outside what the gaits reach (below
  `blendspace.RATE_RANGE[0]` of the slowest gait's speed, above `RATE_RANGE[1]` of the fastest's:
  played at the nearest they reach), and where a turn is tighter than the speed allows (v^2 / R
  above `TURN_LIMIT`, R the radius of the turn over a step), naming the distances along the path
  and by how much. The bake still follows the path.
- **Starts and stops** (`follow(..., idle=...)`): the character stands in the idle (a standing
  clip, played forward and back for as long as needed) on the path's first point for `STAND`
  seconds, then dead-blends (`transition.dead_blend`) over `START_BLEND` into the frame of the
  slowest gait's first cycle that best continues it (`transition.best_target_time`); it speeds
  up from the slowest gait's speed at `ACCELERATION` and slows down to it before the end. At
  the touchdown whose rest comes nearest the path's end it dead-blends into the idle again,
  over as long as its body takes to come over the landing foot (`STOP_BLEND`), turned on its
  root over the blend to rest facing along its travel, and stands `REST` seconds. Its last
  `STOP_STRIDES` strides are stretched or shrunk together so that it comes to rest on the end.
  `Transition` events at the two switches. A blend slowing down drags its feet: here the
  contacts are cut where a foot slides (`contacts.contacts(split_slides=True)`).
- **Targets** (`follow_target`): a target's floor track in time (a keyed object's location) is
  walked at its speed along the track (averaged over `TARGET_SMOOTH`), from the target's first
  time; the straight clip's travel, averaged over a cycle, is then remapped onto where the
  target is on each frame (`_in_time`), strides within `TARGET_STRETCH`. With an idle the
  character stands until the target leaves its first point, less the time its start takes to
  cover `TARGET_LAG_M` behind the target (a first bake tells). Warnings name the target's times.

Times are seconds and distances meters at every boundary; positions in the loops' units and axes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import blendspace, contacts, footlock, quat, resample, root, skeleton, sync, transition
from .body import FeetSpec, with_feet
from .clip import Clip

Array = npt.NDArray[np.float64]

GRAVITY = 9.80665  # m/s^2
# The most a turn may ask (v^2 / R, m/s^2) before a warning: half of g, about the lean a runner
# takes into a bend (atan(0.5), 27 degrees).
TURN_LIMIT = 0.5 * GRAVITY
# A path's corners are rounded over this fraction of a step (the sigma of a Gaussian over arc
# length, of its tangent's direction): a right angle is turned over about two steps, the hips
# passing 10 cm inside it at a walk (a quarter of a step: 5 cm, and a pop in the hips and feet).
ROUNDING = 0.5
# Meters between the samples a path is resampled at (a chord 5 cm long strays 0.2 mm from a
# circle of 1.5 m).
_SPACING = 0.05
# The share of the body's turn a planted foot follows, pivoting on the point of it that moves
# least (its heel, then its ball): walkers' feet turn a little on the floor in a bend, and a leg
# twisted by the whole turn at the lift whips round in the air where a path turns sharply (the
# CMU walk's toe accelerating 1.35x its own round a right angle, 1.04x with a quarter).
FOOT_TURN = 0.25
# Seconds before the detector's lift that a lock lets go. The detector lifts a foot where it is
# already moving fast (its exit speed, over a metre a second for a walk); a blend's planted foot
# can skate on at half a metre a second up to there (the CMU walk-jog ramp slowing down), and a
# lock let go there pops the knee as the foot catches up (1.34x the gaits' peak acceleration,
# 1.18x let go 1/60 s before). At 30 fps the same lift rounds up to the lift frame itself, held:
# let go a frame before it, a foot still down slides a centimetre on its last frame.
LET_GO = 1.0 / 60.0
# Seconds over which a lock eases in after a touchdown (`footlock.lock_feet`'s ease_in): a blend's
# feet slide, and the offset a landing is held at is weighed in more slowly than a take's (at
# 0.1 s the CMU walk-jog line's last landing is carried on at 0.51 m/s).
EASE_IN = 0.15
# The same where contacts are cut where a foot slides (starts and stops): a foot so held does not
# slide, and a stop's landing into the idle, slowed by its blend, slid 3 cm over 0.15 s.
EASE_IN_CUT = 0.05
_FEET = ("FootDown_L", "FootDown_R")

# Starting and stopping (`follow(..., idle=...)`). Seconds the character stands on the path's
# first point before it starts, and on its last after its stop's blend:
STAND = 0.5
REST = 1.0
# Seconds of the dead blend from standing into the step that best continues it (the body leans
# into its first step while the stance foot stays put).
START_BLEND = 0.5
# The stop's dead blend, from a touchdown, lasts as long as the body takes to come over the foot
# it lands at the speed it comes in at (its lead over the hips x 2 / v: the travel of a blend
# that slows from v to rest), within these seconds.
STOP_BLEND = (0.3, 0.8)
# m/s^2: how fast the character speeds up from the slowest the gaits go after it starts, and
# slows down to it before it stops (walkers reach their pace in about two steps).
ACCELERATION = 1.5
# The character comes to rest on the path's end: its last strides before the stop are lengthened
# or shortened together, over this many, as walkers adjust their last steps to a mark (at most
# half a step over them: 8 % at three).
STOP_STRIDES = 3.0
# Following a target in time (`follow_target`): seconds over which its speed along its track is
# averaged (a keyed object's speed jitters from frame to frame), and the most its remap stretches
# or shrinks the blend's strides to put the character where the target is (the blend's own
# timing drifts by a fraction of a percent: 13 cm over 20 m at 0.65 %).
TARGET_SMOOTH = 0.5
TARGET_STRETCH = 0.05
# Meters: with an idle, the character stands until the target is this far along its track.
TARGET_LEAVES = 0.05
# Meters from its first point at which the character, started from an idle, is timed against the
# target (it starts that much earlier than the target leaves, to be there with it).
TARGET_LAG_M = 1.0


class PathWarning(UserWarning):
    """A path asks more than the gaits give: a speed outside their reach or a turn tighter than the
    speed allows, at the distances along the path it names; the bake follows as closely as it can."""


# -- the path ------------------------------------------------------------------------------------


class _Path(NamedTuple):
    """A path on the floor resampled by arc length: points [M, 3] (file units, up component 0),
    distance [M] (meters from the start), angle [M] (the tangent's heading, radians, unwrapped)."""

    points: Array
    distance: Array
    angle: Array

    @property
    def length(self) -> float:
        return float(self.distance[-1])


def _floor_path(points: npt.ArrayLike, up: Array, meters_per_unit: float) -> _Path:
    """The polyline `points` [N, 3] (file units) on the floor under `up`, resampled every `_SPACING`
    meters. ValueError for fewer than two points, points that are not finite, or no length on the
    floor."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"a path is [N, 3] points in the gaits' units and axes, not shape {p.shape}")
    if len(p) < 2:
        raise ValueError(f"a path needs two or more points, not {len(p)}")
    if not np.all(np.isfinite(p)):
        raise ValueError("the path's points must be finite")
    p = p - np.outer(p @ up, up)
    seg = np.linalg.norm(np.diff(p, axis=0), axis=-1) * meters_per_unit
    keep = np.concatenate([[True], seg > 1e-9])
    p, seg = p[keep], seg[keep[1:]]
    if len(p) < 2:
        raise ValueError("the path has no length on the floor (its points differ only along up)")
    s = np.concatenate([[0.0], np.cumsum(seg)])
    even = np.linspace(0.0, s[-1], max(math.ceil(s[-1] / _SPACING), 2) + 1)
    return _sampled(np.stack([np.interp(even, s, p[:, k]) for k in range(3)], axis=-1), up, meters_per_unit)


def _sampled(points: Array, up: Array, meters_per_unit: float) -> _Path:
    """A `_Path` of floor points [M, 3] (file units): their arc length and tangents' headings."""
    d = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=-1))]) * meters_per_unit
    tangent = np.gradient(points, axis=0)
    fwd, side = root.floor_axes(up)
    return _Path(points, d, np.unwrap(np.arctan2(tangent @ side, tangent @ fwd)))


def _rounded(path: _Path, up: Array, meters_per_unit: float, sigma: float) -> _Path:
    """The path with its corners rounded over `sigma` meters of arc length and its curves kept: the
    tangent's direction low-passed (a circle's grows evenly, so it stays) and integrated again,
    then pulled back by the low-passed difference (where the rounding leaves a corner, the path
    goes on where it did). Its first and last points stay."""
    n = len(path.distance)
    if n < 3 or sigma <= 0.0:
        return path
    spacing = path.length / (n - 1)
    width = sigma / spacing
    angle = root.lowpass(path.angle, width)
    mid = 0.5 * (angle[1:] + angle[:-1])
    fwd, side = root.floor_axes(up)
    along = np.outer(np.cos(mid), fwd) + np.outer(np.sin(mid), side)
    steps = along * (np.diff(path.distance) / meters_per_unit)[:, None]
    smooth = path.points[0] + np.concatenate([np.zeros((1, 3)), np.cumsum(steps, axis=0)])
    smooth += root.lowpass(path.points - smooth, width)
    smooth -= np.outer(smooth @ up, up)
    return _sampled(smooth, up, meters_per_unit)


# -- the speed -----------------------------------------------------------------------------------


def _speeds(speed: Any, s: Array) -> Array:
    """[n] m/s at distances s (meters) from a number, a callable of the distance (with the array if
    it takes one) or a (distances, speeds) pair (linear between, held past its ends)."""
    v = sync.curve_values(speed, s, "speed", over="distance")
    if not np.all(np.isfinite(v)):
        raise ValueError("speeds must be finite")
    return v


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[(start, stop)] of the runs of True, stop excluded."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))


class _Where(NamedTuple):
    """How a warning names a place on the path: a value per path sample (`at` [M]), its unit, and
    the words after a stretch of them ("from 2.00 to 6.00 m along the path")."""

    at: Array
    unit: str = "m"
    along: str = "along the path"


def _stretch(where: _Where, a: int, b: int) -> str:
    """Where a run [a, b) of path samples lies, in words."""
    at, u = where.at, where.unit
    span = f"at {at[a]:.2f} {u}" if at[b - 1] - at[a] < 0.005 else f"from {at[a]:.2f} to {at[b - 1]:.2f} {u}"
    return f"{span} {where.along}"


def _within_reach(v: Array, where: _Where, speeds: Array) -> tuple[Array, list[str]]:
    """The speeds kept within what the gaits reach, and a sentence per stretch of path outside it."""
    least, most = blendspace.RATE_RANGE[0] * speeds.min(), blendspace.RATE_RANGE[1] * speeds.max()
    at, u = where.at, where.unit
    out = []
    for mask, word, bound, which, times in ((v < least, "below", least, "slowest", blendspace.RATE_RANGE[0]),
                                            (v > most, "above", most, "fastest", blendspace.RATE_RANGE[1])):
        gait = speeds.min() if which == "slowest" else speeds.max()
        for a, b in _runs(mask):
            k = a + int(np.argmax(np.abs(v[a:b] - bound)))
            out.append(f"{_stretch(where, a, b)} the speed asked is {word} what the gaits "
                       f"reach: {v[k]:.3g} m/s at {at[k]:.2f} {u}, {abs(v[k] - bound):.3g} m/s {word} the "
                       f"{bound:.3g} m/s they reach ({times:g}x the {which}, {gait:.3g} m/s); played at "
                       f"{bound:.3g} m/s there")
    return np.clip(v, least, most), out


def _tight_turns(path: _Path, v: Array, step: Array, where: _Where) -> list[str]:
    """A sentence per stretch of path where v^2 / R is above TURN_LIMIT, R the radius of the turn
    over a step (`step` [M] meters, centered: the curvature a character turns over as it steps)."""
    d, half = path.distance, 0.5 * step
    a, b = np.clip(d - half, 0.0, d[-1]), np.clip(d + half, 0.0, d[-1])
    curvature = np.abs(np.interp(b, d, path.angle) - np.interp(a, d, path.angle)) / np.maximum(b - a, 1e-9)
    asked = v * v * curvature
    out = []
    for a0, b0 in _runs(asked > TURN_LIMIT * (1.0 + 1e-9)):
        k = a0 + int(np.argmax(asked[a0:b0]))
        radius = 1.0 / curvature[k]
        out.append(f"{_stretch(where, a0, b0)} the turn is tighter than the speed allows: at "
                   f"{where.at[k]:.2f} {where.unit} a radius of {radius:.2f} m at {v[k]:.3g} m/s asks "
                   f"v^2/R = {asked[k]:.3g} m/s^2, {asked[k] / TURN_LIMIT:.2g}x the {TURN_LIMIT:.2f} m/s^2 "
                   f"(0.5 g) a character leans into; widen it to a radius of {v[k] ** 2 / TURN_LIMIT:.2f} m "
                   f"or slow to {math.sqrt(TURN_LIMIT * radius):.2f} m/s there")
    return out


# -- the gaits -----------------------------------------------------------------------------------


def _as_loops(loops: Sequence[Clip], feet: FeetSpec | None) -> list[Clip]:
    """The gaits as loops with footstep markers (takes cut by `sync.loop_cycle` once, not at each
    call of the blend space). One gait gets a twin a hair faster, the pair a blend space needs:
    it then plays alone, slower or faster by its rate, as a blend space's slowest or fastest does."""
    if isinstance(loops, Clip):
        raise TypeError("give the gaits as a list of loops or takes of one skeleton")
    if len(loops) == 0:
        raise ValueError("a path needs one or more gaits (loops or takes of one skeleton) to walk it")
    out = []
    for clip in loops:
        if not isinstance(clip, Clip):
            raise TypeError(f"gaits are Clips (loops or takes), not {type(clip).__name__}")
        clip = with_feet(clip, feet)
        if not (clip.loop and all(len(clip.events.get(k, ())) for k in _FEET)):
            clip = sync.loop_cycle(clip)
        out.append(clip)
    if len(out) == 1:
        out.append(out[0].replace(fps=out[0].fps * (1.0 + 1e-6)))
    return out


def _body_of(clip: Clip, gaits: list[Clip]) -> None:
    """The blend's body map from the gait it is measured with (same motion root, up and facing), as
    the gaits' were read; else read off the straight clip. A bent clip faces every way."""
    for g in gaits:
        if g.root == clip.root and np.array_equal(g.up, clip.up) and np.array_equal(g.forward, clip.forward):
            clip.body = g.body
            return
    clip.body = clip.body


def _cycle(clip: Clip) -> float:
    """Seconds per cycle of a blend space's output: the median from a left touchdown to the next."""
    left = np.asarray(clip.events.get("FootDown_L", ()))
    if len(left) >= 2:
        return float(np.median(np.diff(left)))
    steps = np.diff(np.sort(np.concatenate([left, np.asarray(clip.events.get("FootDown_R", ()))])))
    return 2.0 * float(np.median(steps)) if len(steps) else max(clip.duration, 1.0 / clip.fps)


class _Paces(NamedTuple):
    """The gaits as given (a lone gait's twin left out): their speeds [G] (m/s) and cycles [G]
    (seconds from a left touchdown to the next)."""

    speeds: Array
    cycles: Array


def _paces(gaits: list[Clip], given: int) -> _Paces:
    """The first `given` gaits' speeds (`blendspace.gait_speeds`, which digests every gait: read
    once a bake) and cycles."""
    return _Paces(blendspace.gait_speeds(gaits)[:given],
                  np.array([g.n_frames / g.fps / len(g.events["FootDown_L"]) for g in gaits[:given]]))


def _rate(gaits: list[Clip], fps: float | None) -> float:
    """The output's frame rate: `fps`, else the highest of the gaits' (as the blend space's)."""
    return max(g.fps for g in gaits) if fps is None else float(fps)


# -- following -----------------------------------------------------------------------------------


def follow(loops: Sequence[Clip], points: npt.ArrayLike, speed: Any, *, fps: float | None = None,
           feet: FeetSpec | None = None, lock_feet: bool = True, idle: Clip | None = None) -> Clip:
    """The gaits in `loops` walked along the polyline `points` at `speed` (see the module notes).

    loops: one or more gaits as `blendspace.blend_space` takes them (loops from `sync.loop_cycle`,
        or takes, cut with it), of one skeleton.
    points: [N, 3] in the loops' units and axes: a polyline on the floor (the up component is
        ignored), two or more points.
    speed: m/s along the path: a number, a callable of the distance travelled along the path in
        meters (called with an array of distances if it accepts one), or a (distances, speeds)
        pair, linear between and held past its ends.
    fps: the output rate (default: the highest of the loops'). feet: {'L': ankle, 'R': ankle} when
        the body map's are not the ones (`body.with_feet`).
    lock_feet: hold each planted foot where it lands (`footlock.lock_feet`, lowering the pelvis
        where a leg would not reach it).
    idle: a standing clip of the gaits' skeleton (a still stretch of a take will do). With it the
        character stands on the path's first point for `STAND` seconds, starts into the gaits,
        speeds up and slows down at most at `ACCELERATION`, and comes to rest standing on the
        last point, where the clip goes on for `REST` seconds (module notes: starts and stops).

    Without `idle` the character starts on the path's first point facing along it, at phase 0 (a
    left touchdown) of the gaits for the starting speed, and the clip ends on the frame it
    reaches the last point. FootDown_L / FootDown_R events at its touchdowns, `Transition` where
    it starts and stops. `PathWarning` where the speed is outside the gaits' reach or a turn is
    tighter than the speed allows (the bake follows as closely as it can); ValueError for fewer
    than two points or no gaits, TypeError or ValueError for an idle that is not a standing clip
    of the gaits' skeleton.
    """
    gaits = _as_loops(loops, feet)
    paces = _paces(gaits, len(loops))
    if idle is None:
        path, v = _planned(gaits, paces, points, speed)
        # Played on past the end (the output is cut where it reaches the last point, which the
        # blend's own speed decides), at the last speed.
        straight = _straight(gaits, _clock(path.distance, v), v, float(paces.cycles.max()) + 0.5, fps, feet)
        return _walked(straight, path, gaits, lock_feet)
    return _from_standing(gaits, paces, points, speed, idle, fps, feet, lock_feet)


def _from_standing(gaits: list[Clip], paces: _Paces, points: npt.ArrayLike, speed: Any, idle: Clip,
                   fps: float | None, feet: FeetSpec | None, lock_feet: bool, *, stand: float = STAND,
                   when: Callable[[Array], Array] | None = None) -> Clip:
    """`follow` with an idle: standing `stand` seconds, then walking the path, coming to rest on
    its end (`_started_and_stopped`); `when` as `_planned` takes it."""
    still = _standing(idle, gaits[0], feet, _rate(gaits, fps))
    slowest = int(np.argmin(paces.speeds))
    least = float(paces.speeds[slowest])
    # The slowest gait's cycle and stride played slower, at the least speed.
    cycle = float(paces.cycles[slowest])
    path, v = _planned(gaits, paces, points, speed, when=when,
                       ease=partial(_eased, least=least, margin=least * cycle))
    walked, planted, remap = _started_and_stopped(gaits, path, v, still, cycle, float(paces.cycles.max()),
                                                  fps, feet, stand)
    return _walked(walked, path, gaits, lock_feet, remap=remap, planted=planted, lead=False,
                   ease_in=EASE_IN_CUT)


def follow_target(loops: Sequence[Clip], times: npt.ArrayLike, positions: npt.ArrayLike, *,
                  idle: Clip | None = None, fps: float | None = None, feet: FeetSpec | None = None,
                  lock_feet: bool = True) -> Clip:
    """The gaits in `loops` following a target's floor track in time (see the module notes).

    times: [T] seconds, increasing (a keyed object's frames, say); positions: [T, 3] where the
        target is then, in the loops' units and axes (the up component is ignored).
    idle, fps, feet, lock_feet: as `follow` takes them.

    The output's frame 0 is the target's first time. The character walks the target's track at
    the target's speed along it (m/s, averaged over `TARGET_SMOOTH` seconds), and its travel
    along the track is then put where the target is at each time, its strides lengthened or
    shortened by at most `TARGET_STRETCH` (the blend's own timing drifts by a fraction of a
    percent; a target the gaits cannot keep up with is not caught up with by strides out of
    reach). Without `idle` the output lasts as long as the target's track, and the character
    starts walking at phase 0 on its first point; with `idle` it starts from standing and comes
    to rest on the track's end as `follow` does, at the target's speeds. `PathWarning` naming
    the target's times (seconds from its first) where it is faster or slower than the gaits
    reach or turns tighter than its speed allows (v^2 / R above 0.5 g). ValueError for fewer
    than two samples, times that do not increase, values that are not finite, or a target that
    does not move over the floor.
    """
    gaits = _as_loops(loops, feet)
    up, mpu = gaits[0].up, gaits[0].meters_per_unit
    t, points = _target(times, positions, up)
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=-1))]) * mpu
    if s[-1] <= 1e-6:
        raise ValueError("the target does not move over the floor (its positions differ only along up)")
    profile = _target_speeds(t, s)
    paces = _paces(gaits, len(loops))

    def when(d: Array) -> Array:
        return np.interp(d, s, t)

    if idle is not None:
        # Its start and stop as `follow` makes them, at the target's speeds along its track,
        # standing until the target leaves its first point.
        rate = _rate(gaits, fps)
        profile = _from_rest(profile, blendspace.RATE_RANGE[0] * float(paces.speeds.min()))
        leaves = float(np.interp(TARGET_LEAVES, s, t)) if s[-1] > TARGET_LEAVES else 0.0
        stand = max(leaves, 2.0 / rate)
        out = _from_standing(gaits, paces, points, profile, idle, fps, feet, lock_feet, stand=stand,
                             when=when)
        # Started as early as the blend into walking and the speeding up take to cover its first
        # meter later than the target does (a second bake; what it asks was said by the first).
        lag = _reaches(out, points[0], TARGET_LAG_M) - _reaches_track(t, points, mpu, TARGET_LAG_M)
        if lag > 1.0 / rate and stand > 2.0 / rate:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PathWarning)
                out = _from_standing(gaits, paces, points, profile, idle, fps, feet, lock_feet,
                                     stand=max(stand - lag, 2.0 / rate), when=when)
        return out
    path, v = _planned(gaits, paces, points, profile, when=when)
    duration, clock = float(t[-1]), _clock(path.distance, v)
    # Played on past the target's last time by as much as `follow` plays past the path's end (the
    # frames kept are a blend's prefix: it only goes forward in time, and the speed is held after
    # the last).
    extra = float(paces.cycles.max()) + 0.5 + max(duration - float(clock[-1]), 0.0)
    straight = _straight(gaits, clock, v, extra, fps, feet)
    straight = straight[:math.floor(duration * straight.fps + 1e-9) + 1]
    return _walked(straight, path, gaits, lock_feet, remap=_in_time(straight, t, s * path.length / s[-1]))


def _from_rest(profile: tuple[Array, Array], least: float) -> tuple[Array, Array]:
    """The target's (distances, speeds) with the speeds where it speeds up from rest at its start
    and slows to rest at its end raised to `least` m/s (the idle starts and stops the walk)."""
    d, v = profile
    fast = np.flatnonzero(v >= least)
    if not fast.size:
        return d, np.maximum(v, least)
    v = v.copy()
    v[:fast[0]] = least
    v[fast[-1] + 1:] = least
    return d, v


def _reaches(clip: Clip, start: Array, meters: float) -> float:
    """Seconds until the clip's root is first `meters` from `start` (file units) over the floor
    (its duration if never)."""
    _, pos = root.root_world(clip)
    return _reaches_track(np.arange(clip.n_frames) / clip.fps, pos - np.outer(pos @ clip.up, clip.up),
                          clip.meters_per_unit, meters, start)


def _reaches_track(t: Array, points: Array, meters_per_unit: float, meters: float,
                   start: Array | None = None) -> float:
    """Seconds (of t [T]) until points [T, 3] are first `meters` from `start` (default: the first)."""
    away = np.linalg.norm(points - (points[0] if start is None else start), axis=-1) * meters_per_unit
    far = np.flatnonzero(away >= meters)
    if not far.size:
        return float(t[-1])
    k = int(far[0])
    if k == 0:
        return float(t[0])
    return float(np.interp(meters, [away[k - 1], away[k]], [t[k - 1], t[k]]))


def _target(times: npt.ArrayLike, positions: npt.ArrayLike, up: Array) -> tuple[Array, Array]:
    """(times [T] from the first, seconds; positions [T, 3] on the floor), checked."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"a target's positions are [T, 3] in the gaits' units and axes, not shape {p.shape}")
    if len(t) != len(p):
        raise ValueError(f"a target needs one time per position: {len(t)} times, {len(p)} positions")
    if len(t) < 2:
        raise ValueError(f"a target needs two or more samples in time, not {len(t)}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p))):
        raise ValueError("the target's times and positions must be finite")
    if np.any(np.diff(t) <= 0.0):
        k = int(np.flatnonzero(np.diff(t) <= 0.0)[0])
        raise ValueError(f"the target's times must increase: {t[k + 1]:g} s follows {t[k]:g} s "
                         f"(sample {k + 1})")
    return t - t[0], p - np.outer(p @ up, up)


def _target_speeds(t: Array, s: Array) -> tuple[Array, Array]:
    """(distances, speeds): the target's speed along its track (m/s), its distance over time
    averaged over `TARGET_SMOOTH` seconds (a keyed object's steps from frame to frame are
    noise to a walker), at the distances it has then covered."""
    step = min(float(np.median(np.diff(t))), TARGET_SMOOTH / 4.0)
    even = np.arange(0.0, t[-1] + 0.5 * step, step)
    d = root.lowpass(np.interp(even, t, s), 0.5 * TARGET_SMOOTH / step)
    v = np.gradient(d, even)
    at = np.maximum.accumulate(d)
    keep = np.concatenate([[True], np.diff(at) > 1e-9])
    return at[keep], v[keep]


def _in_time(clip: Clip, t: Array, s: Array) -> tuple[Array, Array]:
    """(meters along the clip's travel line, meters along the path): the remap that puts the
    clip's root, averaged over a cycle, where the target is (s [T] meters at t [T] seconds) on
    each of its frames, its slope within 1 -+ `TARGET_STRETCH` (strides at most that much longer
    or shorter than the blend's)."""
    fps = clip.fps
    x = root.lowpass(_along_travel(clip)[0], 0.5 * _cycle(clip) * fps)
    x = np.maximum.accumulate(x)
    want = np.interp(np.arange(clip.n_frames) / fps, t, s)
    m = np.empty_like(want)
    m[0] = 0.0
    # Forward, each step's slope held within the stretch (one pass over the frames).
    dx = np.diff(x)
    for k in range(1, len(m)):
        lo, hi = m[k - 1] + (1.0 - TARGET_STRETCH) * dx[k - 1], m[k - 1] + (1.0 + TARGET_STRETCH) * dx[k - 1]
        m[k] = min(max(want[k], lo), hi)
    keep = np.concatenate([[True], np.diff(x) > 1e-9])
    return x[keep], m[keep]


def _clock(distance: Array, v: Array) -> Array:
    """[M] seconds at each path sample when walked at speeds v [M] (m/s): t(s) = integral ds / v."""
    return np.concatenate([[0.0], np.cumsum(np.diff(distance) * 0.5 * (1.0 / v[1:] + 1.0 / v[:-1]))])


def _straight(gaits: list[Clip], clock: Array, v: Array, extra: float, fps: float | None,
              feet: FeetSpec | None) -> Clip:
    """The blend space of the gaits at speeds v [M] (m/s) at times `clock` [M] (seconds), played
    `extra` seconds past the last at the last speed."""
    return blendspace.blend_space(gaits, (np.append(clock, clock[-1] + extra), np.append(v, v[-1])),
                                  float(clock[-1]) + extra, fps=fps, feet=feet)


def _planned(gaits: list[Clip], paces: _Paces, points: npt.ArrayLike, speed: Any, *,
             ease: Callable[[Array, _Path], Array] | None = None,
             when: Callable[[Array], Array] | None = None) -> tuple[_Path, Array]:
    """(the path to walk, its corners rounded; the speed at each of its samples, within the reach
    of the gaits of `paces` and `ease`d (speeds [M], the path) -> speeds [M] when given), with a
    `PathWarning` for what the path asks beyond them, naming distances along it, or with `when`
    (meters along the path -> seconds) the times a target is there."""
    up, mpu = gaits[0].up, gaits[0].meters_per_unit
    path = _floor_path(points, up, mpu)
    speeds, cycles = paces
    # A step is half a cycle's stride at the speed, the cycle of the gaits bracketing it.
    order = np.argsort(speeds)

    def steps(v: Array) -> Array:
        return 0.5 * v * np.interp(v, speeds[order], cycles[order])

    v, _ = _within_reach(_speeds(speed, path.distance), _Where(path.distance), speeds)
    path = _rounded(path, up, mpu, ROUNDING * float(np.median(steps(v))))
    where = (_Where(path.distance) if when is None
             else _Where(when(path.distance), "s", "into the target's track"))
    v, problems = _within_reach(_speeds(speed, path.distance), where, speeds)
    if ease is not None:
        v = ease(v, path)
    problems += _tight_turns(path, v, steps(v), where)
    if problems:
        warnings.warn("; ".join(problems), PathWarning, stacklevel=3)
    return path, v


def _walked(straight: Clip, path: _Path, gaits: list[Clip], lock_feet: bool,
            remap: tuple[Array, Array] | None = None, planted: dict[str, np.ndarray] | None = None,
            lead: bool = True, ease_in: float = EASE_IN) -> Clip:
    """A straight clip of the gaits (a blend space's, whose root travels a line from the path's
    start) walked along the path: bent onto it, its legs turned over its planted feet and those
    held (see the module notes). remap: (meters along the line, meters along the path),
    increasing, for a clip that comes to rest on the path's end (`_started_and_stopped`): then
    every frame is kept. planted: the contacts to hold (None: found on the straight clip).
    lead: the lock is worked on the clip with a lead-in (`_with_lead_in`), then cut off (a clip
    that starts walking). ease_in: seconds a lock eases in (`footlock.lock_feet`). Writes into
    the straight clip's arrays."""
    _body_of(straight, gaits)
    start = 0
    if lead:
        straight, start = _with_lead_in(straight)
    if not lock_feet:
        planted = {}
    elif planted is None:
        planted = contacts.contacts(straight, split_slides=False)
    out, turn = _laid_along(straight, path, remap, start)
    planted = {side: _let_go_early(mask[:out.n_frames], out.fps) for side, mask in planted.items()}
    if planted:
        _stance_yaw(out, turn, planted)
    if lock_feet:
        out = footlock.lock_feet(out, contacts=planted, lower_pelvis=True, ease_in=ease_in)
    return _from_frame(out, start) if start else out


def _from_frame(clip: Clip, start: int) -> Clip:
    """The clip from frame `start` on, its events with it: its arrays' views (a bake's own, made
    for this; `clip[start:]` would copy every frame again)."""
    t0 = start / clip.fps
    out = clip.with_frames(clip.rotations[start:], clip.positions[start:])
    out.events = {k: t[t >= t0 - 1e-9] - t0 for k, t in clip.events.items()}
    out.name, out.loop = clip.name, False
    return out


def _with_lead_in(clip: Clip) -> tuple[Clip, int]:
    """(the straight clip with its first cycle played before it, its root moved back by that
    cycle's travel; the frames so added). The path starts at phase 0 on a walk already going: a
    foot planted over the start is held as it was, not landed on the first frame (a lock eases
    in from a touchdown). The seam is within a frame of the cycle's phase. A clip without two
    left touchdowns gets none."""
    left = np.asarray(clip.events.get("FootDown_L", ()))
    n = round(float(left[1] - left[0]) * clip.fps) if len(left) > 1 else 0
    if not 0 < n < clip.n_frames:
        return clip, 0
    up = clip.up
    _, pos = root.root_world_of(clip.rotations[[0, n]], clip.positions[[0, n]], clip.parents, clip.root)
    back = pos[1] - pos[0]
    back -= up * (back @ up)
    rotations = np.concatenate([clip.rotations[:n], clip.rotations])
    positions = np.concatenate([clip.positions[:n], clip.positions])
    root.slide_of(rotations[:n], positions[:n], clip.parents, clip.root, root.moving_tops(clip), -back)
    return clip.replace(rotations=rotations, positions=positions,
                        events={k: t + n / clip.fps for k, t in clip.events.items()}), n


def _let_go_early(mask: np.ndarray, fps: float) -> np.ndarray:
    """The contacts, each let go `LET_GO` seconds before the frame the detector lifts it (the next
    frame's, rounding up: a lock ends on a whole frame)."""
    out = np.zeros_like(mask)
    for a, b in _runs(mask):
        out[a:max(a + 1, min(len(mask), math.ceil(b - LET_GO * fps - 1e-9) + 1))] = True
    return out


def _travel_line(floor: Array, up: Array) -> Array:
    """The line [3] a straight clip's root travels: its floor positions' [T, 3] principal
    direction, from its start toward its end (unit, on the floor)."""
    line = np.linalg.svd(floor - floor.mean(axis=0), full_matrices=False)[2][0]
    line -= up * (line @ up)
    line /= np.linalg.norm(line)
    return -line if (floor[-1] - floor[0]) @ line < 0.0 else line


def _along_travel(clip: Clip) -> tuple[Array, Array]:
    """(meters [T] the clip's root has come from its first frame along the line it travels, and
    that line [3]: `_travel_line` of its floor positions)."""
    up = clip.up
    _, pos = root.root_world(clip)
    floor = pos - np.outer(pos @ up, up)
    line = _travel_line(floor, up)
    return (floor - floor[0]) @ line * clip.meters_per_unit, line


def _laid_along(clip: Clip, path: _Path, remap: tuple[Array, Array] | None = None,
                start: int = 0) -> tuple[Clip, Array]:
    """The straight clip bent onto the path from frame `start` (see the module notes; before it
    the root is on the path's start line, straight back), up to the frame its root reaches the
    path's end (with `remap`, see `_walked`: every frame, its distances along the line
    remapped), and the turn [n] (radians about up) the bend gives each frame. Writes into the
    clip's own arrays (a blend space's, made for this) and returns a clip of their first n
    frames."""
    up, mpu, j = clip.up, clip.meters_per_unit, clip.root
    rot, pos = root.root_world(clip)
    height = pos @ up
    floor = pos - np.outer(height, up)
    line = _travel_line(floor, up)
    rel = floor - floor[start]
    x = rel @ line * mpu
    across = rel @ np.cross(up, line)
    if remap is None:
        reached = start + np.flatnonzero(x[start:] >= path.length - 0.5 * np.abs(np.gradient(x[start:])))
        n = int(reached[0]) + 1 if reached.size else clip.n_frames
    else:
        n = clip.n_frames
    cycle = _cycle(clip) * clip.fps
    # The drift across the line is slower than a cycle; the sway (its rate) passes whole.
    drift = root.lowpass(across, 0.5 * cycle)
    sway = (across - drift)[:n]
    fwd, side = root.floor_axes(up)
    # (the drift's direction: a blend that veers is straightened, its heading with it; where the
    # root stands, no direction: its step is floored at a slow walk's)
    slowest = root.STILL_MPS / clip.fps / mpu
    travel = math.atan2(line @ side, line @ fwd) + np.arctan2(
        np.gradient(drift), np.maximum(np.gradient(x / mpu), slowest))
    x = x[:n] if remap is None else _remapped(x, *remap)
    inside = np.clip(x, 0.0, path.length)
    point = np.stack([np.interp(inside, path.distance, path.points[:, k]) for k in range(3)], axis=-1)
    tangent = np.interp(inside, path.distance, path.angle)
    along = np.outer(np.cos(tangent), fwd) + np.outer(np.sin(tangent), side)
    # Past either end the path runs straight on.
    point += along * ((x - inside) / mpu)[:, None]
    turn = root.lowpass(tangent, cycle / 8.0) - travel[:n]
    yaw = root.yaw_quat(turn, up)
    new_rot = quat.mul(yaw, rot[:n])
    new_pos = point + np.cross(up, along) * sway[:, None] + np.outer(height[:n], up)
    rotations, positions = clip.rotations[:n], clip.positions[:n]
    # Any other top-level joint the take moves goes with the root (the root's move, rigidly).
    for top in root.moving_tops(clip):
        positions[:, top] = quat.mul_vec(yaw, positions[:, top] - pos[:n]) + new_pos
        rotations[:, top] = quat.mul(yaw, rotations[:, top])
    # The joints above the root stay: its world transform is written through theirs.
    root.set_root_world(rotations, positions, clip.parents, j, new_rot, new_pos)
    name = "+".join(dict.fromkeys(clip.name.split("+")))  # (a lone gait's twin named once)
    out = clip.with_frames(rotations, positions)
    out.events = {k: t[t <= (n - 1) / clip.fps + 1e-9] for k, t in clip.events.items()}
    out.name, out.loop = f"{name} along a path", False
    return out, turn


# -- starting and stopping -----------------------------------------------------------------------


def _standing(idle: Any, ref: Clip, feet: FeetSpec | None, fps: float) -> Clip:
    """The idle checked to be a standing clip of the gaits' skeleton, at the output rate, from its
    motion's first frame (a converter's T-pose left out)."""
    if not isinstance(idle, Clip):
        raise TypeError(f"idle is a standing Clip of the gaits' skeleton, not {type(idle).__name__}")
    ref.check_compatible(idle)
    idle = with_feet(idle, feet)
    if idle.motion_start:
        idle = idle[idle.motion_start:]
    if idle.fps != fps:
        idle = resample.resample(idle, fps)
    named = f"the idle {idle.name}" if idle.name else "the idle"
    if idle.n_frames < 2:  # the stop's transition needs a frame of the idle to land on after its first
        raise ValueError(f"{named} has {idle.n_frames} frame of motion: give a standing clip of two frames "
                         "or more")
    moves = _root_speed(idle)
    if moves > root.STILL_MPS:
        raise ValueError(f"{named} travels at {moves:.2f} m/s: give a standing clip (a still stretch of a "
                         f"take will do; under {root.STILL_MPS:g} m/s)")
    # On the gaits' skeleton (its End Sites: what the feet stand on), with the idle's own motion.
    out = ref.with_frames(idle.rotations, idle.positions)
    out.fps, out.name = idle.fps, idle.name  # (at the output's rate, which need not be the gaits')
    return out


def _root_speed(clip: Clip) -> float:
    """m/s: how far the root travels over the floor from the first frame to the last, over its
    duration (0 for one frame)."""
    _, pos = root.root_world(clip)
    step = (pos[-1] - pos[0]) - clip.up * ((pos[-1] - pos[0]) @ clip.up)
    return float(np.linalg.norm(step)) * clip.meters_per_unit / max(clip.duration, 1.0 / clip.fps)


def _played(idle: Clip, seconds: float) -> Clip:
    """The idle for at least `seconds`: played forward, then back, and so on (a standing clip has
    no seam to loop over; played back it goes on from the pose it is in)."""
    T = idle.n_frames
    n = max(math.ceil(seconds * idle.fps - 1e-9) + 1, T)
    k = np.arange(n)
    if T > 1:
        k %= 2 * (T - 1)
        k = np.where(k < T, k, 2 * (T - 1) - k)
    else:
        k[:] = 0
    out = idle.with_frames(idle.rotations[k], idle.positions[k])
    out.name = idle.name
    return out


def _eased(v: Array, path: _Path, *, least: float, margin: float) -> Array:
    """The speeds v [M] (m/s) at the path's samples held to what the character reaches speeding
    up at `ACCELERATION` from `least` at the path's start and slowing down to it `margin`
    meters before its end."""
    s = path.distance
    room = np.maximum(np.minimum(s, path.length - margin - s), 0.0)
    return np.minimum(v, np.sqrt(least * least + 2.0 * ACCELERATION * room))


def _started_and_stopped(gaits: list[Clip], path: _Path, v: Array, still: Clip, cycle: float, longest: float,
                         fps: float | None, feet: FeetSpec | None, stand: float = STAND
                         ) -> tuple[Clip, dict[str, np.ndarray], tuple[Array, Array]]:
    """The gaits walked straight at speeds v [M] (m/s, at the path's samples), started from the
    standing clip `still` and stopped into it, and where its travel along its line (meters)
    goes on the path (see `_walked`): the character stands `stand` seconds, dead-blends over
    `START_BLEND` into the frame of the gaits at the slowest (their first `cycle` seconds) that
    best continues the pose (`transition.best_target_time`), and walks on at the path's speeds
    from there; near the path's end, at a touchdown, it dead-blends into the standing clip over
    as long as its body takes to come over that foot (`STOP_BLEND`), choosing the touchdown
    whose rest is nearest the end; then it stands `REST` seconds. Its last `STOP_STRIDES`
    strides are remapped onto the path so that it comes to rest on the end (feet held where
    they land: longer or shorter steps). `longest`: the longest gait cycle (seconds)."""
    least = float(v.min())
    lead = blendspace.blend_space(gaits, least, 2.5 * cycle, fps=fps, feet=feet)
    standing = _played(still, stand)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", contacts.ContactWarning)  # (matching reads a few strides)
        t_d = transition.best_target_time(standing, stand, lead, search=(0.0, cycle))
    # The same frames up to t_d, then the path's speeds.
    clock = t_d + _clock(path.distance, v)
    straight = _straight(gaits, np.concatenate([[0.0], clock]), np.concatenate([[least], v]),
                         2.0 * longest + 1.0, fps, feet)
    fps = straight.fps
    mpu = straight.meters_per_unit
    length = path.length
    cycle = _cycle(straight)
    head = transition.dead_blend(standing, straight, stand, t_d, START_BLEND)
    head.body = straight.body
    # The stop: a touchdown after the start's blend whose rest comes nearest the path's end.
    x, line = _along_travel(head)
    speed = root.lowpass(np.gradient(x) * fps, 0.25 * cycle * fps)
    started = math.ceil((stand + START_BLEND) * fps)
    downs = sorted((round(t * fps), foot) for foot in ("L", "R")
                   for t in head.events.get(f"FootDown_{foot}", ()) if round(t * fps) >= started)
    if not downs:
        downs = [(min(started, head.n_frames - 1), "L")]
    frames = np.array([i for i, _ in downs])
    _, wpos = quat.fk(head.rotations[frames], head.positions[frames], head.parents)
    ahead = _foot_ahead(still, [f for _, f in downs])
    # How far the landing foot is ahead of the hips beyond where the standing clip has it.
    over = np.array([(wpos[k, head.body.feet[f][0]] - wpos[k, head.root]) @ line * mpu
                     for k, (_, f) in enumerate(downs)]) - ahead
    v = np.maximum(speed[frames], root.STILL_MPS)
    blends = np.clip(2.0 * over / v, *STOP_BLEND)
    rests = x[frames] + 0.5 * v * blends
    k = int(np.argmin(np.abs(rests - length)))
    i, blend_time = int(frames[k]), float(blends[k])
    a = max(i - math.ceil(2.0 * cycle * fps), 0)
    before = head[a:i + 1]
    rest = _played(still, blend_time + REST + still.duration)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", contacts.ContactWarning)
        t_i = transition.best_target_time(before, (i - a) / fps, rest, search=(0.0, still.duration))
    stop = transition.dead_blend(before, rest, (i - a) / fps, t_i, blend_time)
    n = min((i - a) + math.ceil((blend_time + REST) * fps) + 1, stop.n_frames)
    stop = stop[:n]
    _rests_facing(stop, line, i - a, math.ceil(blend_time * fps))
    keep = a / fps - 0.5 / fps
    events = {}
    for name in {*head.events, *stop.events}:
        mine = head.events.get(name, np.zeros(0))
        theirs = stop.events.get(name, np.zeros(0))
        events[name] = np.sort(np.concatenate([mine[mine < keep],
                                               theirs[theirs <= (n - 1) / fps + 1e-9] + a / fps]))
    out = head.replace(rotations=np.concatenate([head.rotations[:a], stop.rotations[:n]]),
                       positions=np.concatenate([head.positions[:a], stop.positions[:n]]),
                       events=events, name=straight.name, loop=False, motion_start=0, root=straight.root)
    out.body = straight.body
    # Found on the whole, read as the walk alone reads (a standing stretch would lower what the
    # detector calls slow: the lifts of a run a frame late).
    planted = contacts.contacts(out, split_slides=True, thresholds=contacts.thresholds(straight))
    return out, planted, _rest_on(out, length, i, blend_time, started)


def _rests_facing(clip: Clip, line: Array, switch: int, frames: int) -> None:
    """In place on the clip's arrays (the stop's own): the stop turned on its root about up from
    frame `switch` on, by a smoothstep over `frames`, so that it rests facing along `line` (a dead
    blend re-anchors the standing clip on the hips' heading at the switch, a touchdown, where a
    walk's hips are swung round by up to 10 degrees)."""
    up = clip.up
    rot, pos = root.root_world(clip)
    heading = root.heading_of(rot, up, clip.forward)
    fwd, side = root.floor_axes(up)
    settled = min(switch + frames, clip.n_frames - 1)
    off = math.atan2(line @ side, line @ fwd) - float(np.median(heading[settled:]))
    off = math.atan2(math.sin(off), math.cos(off))
    w = transition.smoothstep((np.arange(clip.n_frames) - switch) / max(frames, 1))
    root.set_root_world(clip.rotations, clip.positions, clip.parents, clip.root,
                        quat.mul(root.yaw_quat(w * off, up), rot), pos)


def _foot_ahead(still: Clip, feet: list[str]) -> Array:
    """[n] meters each of `feet` stands ahead of the root in the standing clip, along its facing
    (the mean over its frames), to compare with a walk's along its line."""
    _, wpos = still.fk()
    facing = root.trajectory(still).heading
    fwd, side = root.floor_axes(still.up)
    ahead = {}
    for foot in set(feet):
        rel = wpos[:, still.body.feet[foot][0]] - wpos[:, still.root]
        along = np.cos(facing) * (rel @ fwd) + np.sin(facing) * (rel @ side)
        ahead[foot] = float(np.mean(along)) * still.meters_per_unit
    return np.array([ahead[f] for f in feet])


def _rest_on(clip: Clip, length: float, stop: int, blend_time: float, started: int) -> tuple[Array, Array]:
    """(meters along the clip's travel line, meters along the path): the remap that puts where
    the clip comes to rest (after its stop's blend, from frame `stop`) on the path's end,
    lengthening or shortening its last `STOP_STRIDES` strides together (and no more of them
    than it walks after its start's blend, which ends on frame `started`)."""
    fps = clip.fps
    x = _along_travel(clip)[0]
    settled = min(stop + math.ceil(blend_time * fps), clip.n_frames - 1)
    at_rest = float(np.median(x[settled:]))
    left = np.asarray(clip.events.get("FootDown_L", ()))
    near = np.round(left[(left * fps < stop)][-4:] * fps).astype(np.int64)
    stride = float(np.median(np.diff(x[near]))) if len(near) >= 2 else 0.0
    walking = float(x[min(started, clip.n_frames - 1)])
    start = max(at_rest - STOP_STRIDES * stride, walking)
    lo, hi = min(float(x.min()), 0.0) - 1.0, max(float(x.max()), at_rest) + 1.0
    if start >= at_rest - 1e-6:
        return np.array([lo, hi]), np.array([lo, hi]) + (length - at_rest)
    return (np.array([lo, start, at_rest, hi]),
            np.array([lo, start, length, length + hi - at_rest]))


def _remapped(x: Array, xs: Array, ms: Array) -> Array:
    """x [n] through the piecewise-linear map (xs -> ms, increasing), straight on past its ends."""
    out = np.interp(x, xs, ms)
    below, above = x < xs[0], x > xs[-1]
    out[below] = ms[0] + (x[below] - xs[0]) * (ms[1] - ms[0]) / (xs[1] - xs[0])
    out[above] = ms[-1] + (x[above] - xs[-1]) * (ms[-1] - ms[-2]) / (xs[-1] - xs[-2])
    return out


# -- feet through turns --------------------------------------------------------------------------


def _swivel(turn: Array, mask: np.ndarray) -> Array:
    """[T] radians: how far to turn a leg about its hip-ankle line so that its foot keeps the heading
    the bend gives it mid-contact over each contact (runs of `mask`), the body turning over it,
    but for `FOOT_TURN` of the body's turn; in the air the foot turns on to the next contact's
    heading (a smoothstep from the lift to the touchdown)."""
    T = len(turn)
    found = _runs(mask)
    if not found or T < 2:
        return np.zeros(T)
    frames = np.arange(T, dtype=np.float64)
    starts, stops = (np.array(x) for x in zip(*found, strict=True))
    heading = np.interp(0.5 * (starts + stops - 1), frames, turn)
    # On each contact (and before the first, after the last) the foot holds its contact's heading.
    owner = np.clip(np.searchsorted(starts, frames, side="right") - 1, 0, len(found) - 1)
    foot = heading[owner]
    t0, t1 = stops[:-1] - 1, starts[1:]
    gap = t1 - t0 - 1
    if gap.sum() > 0:
        which = np.repeat(np.arange(len(gap)), gap)
        at = t0[which] + 1 + np.arange(int(gap.sum())) - np.repeat(np.cumsum(gap) - gap, gap)
        x = (at - t0[which]) / (t1 - t0)[which]
        foot[at] = heading[which] + x * x * (3.0 - 2.0 * x) * (heading[which + 1] - heading[which])
    return (1.0 - FOOT_TURN) * (foot - turn)


def _stance_yaw(clip: Clip, turn: Array, planted: dict[str, np.ndarray]) -> None:
    """In place on `clip.rotations`: each leg turned about its hip-ankle line by `_swivel` (the
    thigh's local rotation; the ankle stays where it is), so that a planted foot keeps its heading
    through a turn instead of spinning on the floor under the body."""
    rot, pos = clip.rotations, clip.positions
    for side, mask in planted.items():
        if side not in clip.body.legs or not mask.any():
            continue
        ankle, thigh = clip.body.feet[side][0], clip.body.legs[side][0]
        chain = skeleton.chain(clip.parents, ankle)
        # The ankle seen from the thigh's parent, less the thigh's offset: the hip-ankle line.
        v = pos[:, ankle]
        for j in reversed(chain[chain.index(thigh) + 1:-1]):
            v = pos[:, j] + quat.mul_vec(rot[:, j], v)
        v = quat.mul_vec(rot[:, thigh], v)
        # Up the leg: a turn about it by an angle turns the foot by about that angle about up.
        axis = -v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)
        angle = _swivel(turn, np.asarray(mask, dtype=bool))
        rot[:, thigh] = quat.mul(quat.from_scaled_angle_axis(axis * angle[:, None]), rot[:, thigh])
