"""Foot contacts, footsteps and gait phase from joint motion.

A foot is a few tracked points: by default the leg chain's last two joints (ankle, toe) and the
toe's End Site. Per analysed frame the foot has a speed, that of its slowest point (m/s, central
differences over +-1/60 s, then a median filter over about 1/24 s), and a height, that of its
lowest point above a local floor: the running minimum of all feet over `floor_seconds`, since
real floors are not level (subject 02's rises 5-8 cm along the CMU walkway).

Contact, by hysteresis: a run of frames slower than `exit_mps` and within `height_m` of the floor
that holds a frame slower than `speed_mps` (a run off either end of a clip needs none: the foot
lands or lifts outside it). Gaps shorter than `min_duration` are filled, then shorter contacts
dropped.

Touchdown (the contact's start): where the foot's fall in speed ends. A landing foot's speed
drops steeply, then flattens; the knee is the frame where the least-squares slope over the next
0.05 s exceeds that over the previous 0.05 s the most, searched from the last frame faster
than 2 m/s (a swinging foot) to the contact's first frame slower than `speed_mps`, and put
between frames by the parabola through the peak. A threshold alone misplaces it: a heel strike
ends the drop at 0.5-1 m/s and the foot then rolls for 10-15 frames before it is still, and a
foot that skates on landing (CMU 09_12) slides on at about 1 m/s for a tenth of a second.

Lift (the contact's end): where the speed crosses `speed_mps` for good (the foot's last slow
frame), or crosses `exit_mps`, or the foot's last point leaves the floor, whichever comes first,
interpolated between frames (lifts have no hand labels to be checked against).

A contact ends where the foot lifts or travels (`_split`): a run the hysteresis made is cut where
the foot's lowest point rises off its local standing height between frames on the floor, and
where its least moving point has spread over 0.14 leg lengths (the frames around the fastest
move are taken out: a step when faster than a contact and farther than that, else a slide).

Times are seconds (frame index / fps, so frame 0 is 0 s); frames are 0-based indices.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import body, quat, skeleton
from .clip import Clip
from .root import foot_lead, lead_passes

# Central differences reach this far each side: two frames at 120 fps, past one frame's jitter.
_SPEED_SECONDS = 1.0 / 60.0
_MEDIAN_SECONDS = 1.0 / 24.0  # the speed's median filter: 5 frames at 120 fps
# The slopes compared to find a knee each span this long: six frames at 120 fps. Set on the
# hand-labelled takes, where 5 to 7 frames find every touchdown (tests/data/footsteps/README.md).
_KNEE_SECONDS = 0.05
# Auto thresholds: fractions of the take's own spread from stance speed (5th percentile of the
# feet's speeds) to swing speed (98th), with floors in leg lengths per second so that a standing
# take's jitter makes no step, and heights in leg lengths (0.15 m for a 0.85 m leg).
_SEED = 0.12  # a contact gets this slow at least once
_SEED_LEGS = 0.1
_EXIT = 0.35  # and lasts while slower than this
_EXIT_LEGS = 0.5
_HEIGHT_LEGS = 0.18  # with its lowest point this near the floor
_SWING = 0.6  # a foot faster than this fraction of swing speed is swinging
_TOUCH = 0.4  # a touchdown is slower than this fraction of swing speed
_TOUCH_LEGS = 0.012  # with its leading point within 1 cm of its standing height
_KNEE_AFTER_LANDING = 0.05  # seconds: the knee is looked for this long after the landing
_REST = 0.05  # a foot this far from stance to swing speed has come to rest
_LIFT_LEGS = 0.018  # a planted foot lifts when its nearest point rises 1.5 cm
# A contact ends where the foot lifts or travels: its lowest point rises this far off its standing
# height between two frames on the floor (2 cm for a 0.85 m leg: mocap jitter is under 1 cm), or
# the point of it that moves least spreads over more than this (12 cm, the diagonal of the box
# around each point bounding it: a heel strike's roll and a heel-off stay under it, a shuffle
# step does not).
_AIR_LEGS = 0.04
_TRAVEL_LEGS = 0.14
# A lift comes before the least moving point has spread over this many times that (a loop's
# seam or the push-off's speed-up must not cut a stance short).
_TRIM = 1.2
# A touchdown is where the foot has arrived: its lowest point within this of its standing height.
_ARRIVED_LEGS = 0.03
# Seconds each side over which a long contact's standing heights are read (a floor, a stance).
_STAND_SECONDS = 0.5

FootSpec = Mapping[str, str | int | Sequence[str | int]]


class _Detection(NamedTuple):
    """One foot's contacts: mask [T] over the clip; touchdowns and lifts in sub-frames, sorted."""

    mask: np.ndarray
    downs: np.ndarray
    ups: np.ndarray
    slides: np.ndarray = np.zeros(0, np.int64)  # [k] frames where a contact was cut as the foot slid


def default_feet(clip: Clip) -> dict[str, list[int]]:
    """{'L': [ankle, ...joints below], 'R': [...]}: the feet of the body map (`clip.body`).
    body.NoLegsError (a ValueError) saying what was looked for and how to pick the feet when it
    found no legs."""
    body = clip.body
    body.check_legs(clip.name)
    return {side: list(joints) for side, joints in body.feet.items()}


def contacts(clip: Clip, *, feet: FootSpec | None = None, speed_mps: float | None = None,
             floor: str | float | None = "local", min_duration: float = 0.05,
             frames: tuple[int, int | None] | None = None, window: int | None = None,
             exit_mps: float | None = None, height_m: float | None = None,
             floor_seconds: float = 1.0, thresholds: Thresholds | None = None,
             split_slides: bool = True) -> dict[str, np.ndarray]:
    """{foot: bool [T]}: the frames where each foot is planted (False outside the analysed range).

    feet: None for the body map's feet, keys 'L' and 'R' (default_feet); {name: ankle} by joint
        name or index, e.g. {'L': 'LeftFoot', 'R': 'RightFoot'} (the ankle and every joint below
        it); or {name: [joint, ...]}, exactly those joints. Each foot is tracked at its joints and
        at their End Sites.
    speed_mps: a contact gets this slow at least once (m/s). None (Auto): the take's stance speed
        plus 12 % of its spread to swing speed, at least 0.1 leg lengths per second.
    exit_mps: a contact lasts while the foot stays slower than this (m/s); the lift is where the
        speed crosses it. None (Auto): stance speed plus 35 % of the spread, at least half a leg
        length per second and twice speed_mps.
    floor: 'local' (running minimum of the feet's lowest points over floor_seconds), None (no
        height test), or a fixed floor height along clip.up in file units. A planted foot's
        lowest point is at most height_m meters above it (None: 0.18 leg lengths, 15 cm for a
        0.85 m leg). `thresholds()` says what was used.
    thresholds: use these (e.g. another take's `thresholds()`, to read a library alike) instead of
        the take's own; speed_mps, exit_mps and height_m are then ignored.
    min_duration: seconds; gaps between contacts shorter than this are filled first, then
        shorter contacts dropped.
    frames: (first, stop) frames analysed, stop excluded (stop None: to the end). Default
        (clip.motion_start, None), leaving out a converter T-pose. A looping clip analysed whole
        wraps from its last frame to frame 0, moved on by the root's travel over the cycle.
    window: odd length in frames of the median filter on the speed (1: none). Default: the odd
        count nearest 1/24 s (5 frames at 120 fps, 3 at 60, none at 30 and below), so that the
        filter spans the same time at any frame rate.
    split_slides: a contact ends where the foot slides over the floor (its least moving point
        spreading over 0.14 leg lengths without a step); False: it goes on (what foot locking
        holds still: `footlock.lock_feet` detects so, and Lock Feet in Blender).
    """
    found = _detect(clip, feet=feet, speed_mps=speed_mps, floor=floor, min_duration=min_duration,
                   frames=frames, window=window, exit_mps=exit_mps, height_m=height_m,
                   floor_seconds=floor_seconds, thresholds=thresholds, split_slides=split_slides)
    return {name: d.mask for name, d in found.items()}


def footsteps(clip: Clip, *, lifts: bool = False, feet: FootSpec | None = None,
              speed_mps: float | None = None, floor: str | float | None = "local",
              min_duration: float = 0.05, frames: tuple[int, int | None] | None = None,
              window: int | None = None, exit_mps: float | None = None, height_m: float | None = None,
              floor_seconds: float = 1.0, thresholds: Thresholds | None = None,
              split_slides: bool = True) -> dict[str, np.ndarray]:
    """{"FootDown_L": times, "FootDown_R": times}: touchdowns in seconds (frame / fps), sorted,
    sub-frame; with lifts=True also "FootUp_L" and "FootUp_R". Keys follow the names of `feet`.

    A touchdown starts a contact and a lift ends it (see the module notes for where each is
    placed). In a non-looping clip a contact already active at the first analysed frame has no
    touchdown, nor does one reached without the foot swinging since that frame (it landed
    before); a contact still active at the last frame has no lift. In a looping clip a contact
    over the seam is one contact, and a touchdown on frame 0 counts. Options as for contacts().
    """
    found = _detect(clip, feet=feet, speed_mps=speed_mps, floor=floor, min_duration=min_duration,
                   frames=frames, window=window, exit_mps=exit_mps, height_m=height_m,
                   floor_seconds=floor_seconds, thresholds=thresholds, split_slides=split_slides)
    out = {f"FootDown_{name}": d.downs / clip.fps for name, d in found.items()}
    doubt = _doubt(clip, found)
    if doubt:
        th = thresholds or _measure(clip, feet, frames, window)[1](speed_mps, exit_mps, height_m)
        warnings.warn(f"{clip.name or 'the take'}: {doubt} (at {clip.fps:g} fps the feet moved "
                      f"{th.stance_seen_mps:.2f} m/s planted and {th.swing_seen_mps:.2f} m/s swinging; "
                      f"contacts were read below {th.speed_mps:.2f} m/s and within "
                      f"{th.height_m * 100:.0f} cm of the floor). Check the feet Stride found, or set "
                      f"Foot Speed by hand", ContactWarning, stacklevel=2)
    if lifts:
        out.update({f"FootUp_{name}": d.ups / clip.fps for name, d in found.items()})
    return out


# Hysteresis on which foot leads, in leg lengths: a stance sways by less, a step moves it more.
_LEAD_LEGS = 0.1


def step_seconds(clip: Clip) -> float | None:
    """Median seconds between steps: the lead along the facing passing from one foot to the
    other (by a tenth of a leg each way); None when it passes fewer than three times (a take that
    stands, or too short to tell). The take's cadence whatever its speed: people step every
    0.3-0.8 s, so a take that steps every 2 s plays slower than it was recorded."""
    if not clip.body.feet or clip.n_frames < 3:
        return None
    lead = foot_lead(clip) * clip.meters_per_unit
    passes = lead_passes(lead, _LEAD_LEGS * _leg_m(clip, foot_points(clip)))
    if len(passes) < 3:
        return None
    return float(np.median(np.diff(passes))) / clip.fps


def contacts_keeping_fk(clip: Clip) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """contacts(clip) with its defaults, and the FK of the feet it read over every frame (see
    `_seen`; empty when the take is too short to read): `footlock.lock_feet` reuses it."""
    fk: dict[str, Any] = {}
    found = _detect(clip, feet=None, speed_mps=None, floor="local", min_duration=0.05, frames=None,
                    window=None, exit_mps=None, height_m=None, floor_seconds=1.0, fk_out=fk,
                    split_slides=False)
    return {name: d.mask for name, d in found.items()}, fk


class ContactWarning(UserWarning):
    """Footsteps that look wrong: a foot that never plants, feet that do not alternate."""


def _doubt(clip: Clip, found: Mapping[str, _Detection]) -> str:
    """What looks wrong about two feet's touchdowns, naming the take's frames (0-based), '' when
    nothing does: a foot that never plants, a foot that steps twice in a row, a contact cut where
    the foot slid on the floor without a step."""
    doubts = []
    if len(found) == 2:
        (a, da), (b, db) = found.items()
        planted = {a: bool(da.mask.any()), b: bool(db.mask.any())}
        if planted[a] != planted[b]:
            never = a if not planted[a] else b
            return f"foot {never} never plants while the other does"
        t = np.concatenate([da.downs, db.downs])
        order = np.argsort(t, kind="stable")
        t = t[order]
        side = np.concatenate([np.zeros(da.downs.size), np.ones(db.downs.size)])[order]
        again = np.flatnonzero(side[1:] == side[:-1]) + 1
        if again.size:
            pairs = [f"{(a, b)[int(side[i])]} at frames {_frames(t[i - 1])} and {_frames(t[i])}"
                     for i in again[:6]]
            more = f" and {again.size - 6} more" if again.size > 6 else ""
            head = (f"the feet do not alternate ({again.size} of {t.size - 1} steps repeat a foot)"
                    if again.size * 2 > t.size - 1 else f"a foot steps twice in a row ({again.size} of "
                    f"{t.size - 1} steps)")
            doubts.append(f"{head}: {', '.join(pairs)}{more}")
    for name, d in found.items():
        if d.slides.size:
            at = ", ".join(_frames(f) for f in d.slides[:6]) + (" ..." if d.slides.size > 6 else "")
            doubts.append(f"foot {name} slides on the floor without a step (its contact is cut at frame"
                          f"{'s' if d.slides.size > 1 else ''} {at})")
    return "; ".join(doubts)


def _frames(f: float) -> str:
    return str(round(float(f)))


def phase(clip: Clip, steps: Mapping[str, Any] | None = None, ref_foot: str = "L", *,
          feet: FootSpec | None = None) -> np.ndarray:
    """[T] gait phase in unwrapped radians at clip.times: a `ref_foot` touchdown is 2 pi k, the
    other foot's pi + 2 pi k; linear in time between steps, extrapolated past the first and the
    last with the slope of the nearest segment.

    steps: footsteps() output; its FootDown_<ref_foot> and one other FootDown_ track are used.
        None: footsteps(clip, feet=feet).
    ValueError when fewer than two steps, or when the feet do not alternate (naming the time of
    the first repeated step).
    """
    if steps is None:
        steps = footsteps(clip, feet=feet)
    downs = {key[len("FootDown_"):]: np.asarray(times, dtype=np.float64).reshape(-1)
             for key, times in steps.items() if key.startswith("FootDown_")}
    if ref_foot not in downs:
        raise ValueError(f"steps has no FootDown_{ref_foot}")
    others = sorted(name for name in downs if name != ref_foot)
    if len(others) != 1:
        raise ValueError(f"phase needs the touchdowns of two feet, got {sorted(downs)}")
    ref, other = downs[ref_foot], downs[others[0]]
    t = np.concatenate([ref, other])
    if not np.all(np.isfinite(t)):
        raise ValueError("step times must be finite")
    is_ref = np.concatenate([np.ones(ref.size, bool), np.zeros(other.size, bool)])
    order = np.argsort(t, kind="stable")
    t, is_ref = t[order], is_ref[order]
    if t.size < 2:
        raise ValueError(f"phase needs at least two steps, got {t.size}")
    repeat = np.flatnonzero(is_ref[1:] == is_ref[:-1])
    if repeat.size:
        i = int(repeat[0]) + 1
        foot = ref_foot if is_ref[i] else others[0]
        raise ValueError(f"steps do not alternate: {foot} steps again at {t[i]:.4f} s "
                         f"(previous step {t[i - 1]:.4f} s)")
    if np.any(np.diff(t) <= 0.0):
        i = int(np.flatnonzero(np.diff(t) <= 0.0)[0]) + 1
        raise ValueError(f"both feet step at {t[i]:.4f} s")
    # Each step is half a cycle after the one before; the first step's foot sets the offset.
    ph = np.pi * np.arange(t.size) + (0.0 if is_ref[0] else np.pi)
    times = clip.times
    out = np.interp(times, t, ph)
    before, after = times < t[0], times > t[-1]
    out[before] = ph[0] + (times[before] - t[0]) * (ph[1] - ph[0]) / (t[1] - t[0])
    out[after] = ph[-1] + (times[after] - t[-1]) * (ph[-1] - ph[-2]) / (t[-1] - t[-2])
    return out


# -- detection ------------------------------------------------------------------------------------


class Thresholds(NamedTuple):
    """What contact detection used on a take, meters and m/s: the auto values scale with the
    body (leg length) and the take (its own swing and stance speeds)."""

    speed_mps: float  # a contact gets this slow at least once
    exit_mps: float  # and lasts while the foot is slower than this
    height_m: float  # with its lowest point this near the floor
    swing_mps: float  # a foot this fast is swinging: touchdowns are searched after it
    touch_m: float  # a touchdown has the foot's leading point this near its standing height
    touch_mps: float  # and the foot slower than this
    rest_mps: float  # a foot this slow has come to rest: the touchdown is before
    lift_m: float  # a planted foot whose nearest point rises this far off its standing height lifts
    air_m: float  # a contact whose lowest point rises this far off it between two frames down is two
    travel_m: float  # one whose least moving point spreads over more than this (m) is two
    leg_m: float  # hip to ankle
    stance_seen_mps: float  # the take's planted-foot speed (5th percentile of both feet)
    swing_seen_mps: float  # its swing speed (98th percentile)


def thresholds(clip: Clip, *, feet: FootSpec | None = None, speed_mps: float | None = None,
               exit_mps: float | None = None, height_m: float | None = None,
               frames: tuple[int, int | None] | None = None) -> Thresholds:
    """The thresholds `contacts` and `footsteps` use on this clip with these options."""
    return _measure(clip, feet, frames, None)[1](speed_mps, exit_mps, height_m)


def _detect(clip: Clip, *, feet: FootSpec | None, speed_mps: float | None, floor: str | float | None,
            min_duration: float, frames: tuple[int, int | None] | None, window: int | None,
            exit_mps: float | None, height_m: float | None, floor_seconds: float,
            thresholds: Thresholds | None = None,
            fk_out: dict[str, Any] | None = None, split_slides: bool = True) -> dict[str, _Detection]:
    """{foot: _Detection}: what contacts() and footsteps() report, onsets and lifts in frames.
    fk_out: filled with the feet's FK over every frame (see `_seen`)."""
    if speed_mps is not None:
        speed_mps = _positive(speed_mps, "speed_mps")
    if exit_mps is not None:
        exit_mps = _positive(exit_mps, "exit_mps")
    if height_m is not None:
        height_m = _positive(height_m, "height_m")
    floor_seconds = _positive(floor_seconds, "floor_seconds")
    min_duration = float(min_duration)
    if not (min_duration >= 0.0 and math.isfinite(min_duration)):
        raise ValueError(f"min_duration must be >= 0 seconds, not {min_duration}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 1 or window % 2 == 0):
        raise ValueError(f"window must be an odd number of frames >= 1, not {window!r}")
    fixed_floor = None
    if floor is not None and not (isinstance(floor, str) and floor == "local"):
        number = isinstance(floor, (int, float, np.integer, np.floating)) and not isinstance(floor, bool)
        if not number or not math.isfinite(float(floor)):
            raise ValueError(f"floor must be 'local', None or a height in file units, not {floor!r}")
        fixed_floor = float(floor)

    seen, choose = _measure(clip, feet, frames, window, fk_out)
    th = thresholds if thresholds is not None else choose(speed_mps, exit_mps, height_m)
    T, first, stop, loop = clip.n_frames, seen.first, seen.stop, seen.loop
    n = stop - first
    if n < 2:
        names = foot_points(clip, feet)
        return {name: _Detection(np.zeros(T, bool), np.zeros(0), np.zeros(0)) for name in names}
    fps = clip.fps
    if fixed_floor is None:
        radius = max(1, round(floor_seconds * fps / 2.0))
        lows = _lowest([h for heights in seen.heights.values() for h in heights.T])
        level = _running_min(lows, radius, loop)
    else:
        level = np.full(n, fixed_floor * clip.meters_per_unit)
    near, down = {}, {}
    for name, h in seen.heights.items():
        # [n, K] each point over the floor: how touchdowns and lifts are placed, with or without
        # the height test (floor=None) on what is a contact.
        down[name] = h - level[:, None]
        near[name] = _lowest(list(down[name].T)) <= th.height_m if floor is not None else np.ones(n, bool)

    min_frames = max(1, math.ceil(min_duration * fps - 1e-9))
    knee_frames = max(2, round(fps * _KNEE_SECONDS))
    reach = _KNEE_AFTER_LANDING * fps
    out = {}
    for name, s in seen.speeds.items():
        mask, downs, ups, slides = _track(s, s < th.speed_mps, s < th.exit_mps, near[name], down[name], th,
                                  min_frames, knee_frames, reach, loop, seen.points[name], fps,
                                  seen.travel, split_slides)
        full = np.zeros(T, bool)
        full[first:stop] = mask
        if loop and stop < T:  # the repeated seam frame is frame 0 again
            full[stop:] = mask[0]
        out[name] = _Detection(full, downs + first, ups + first, slides + first)
    return out


class _Seen(NamedTuple):
    """Per-foot speed [n] (m/s), point heights [n, K] (m, along up) and points over frames
    first..stop."""

    first: int
    stop: int
    loop: bool
    speeds: dict[str, np.ndarray]
    heights: dict[str, np.ndarray]
    points: dict[str, np.ndarray]  # [n, K, 3] the foot's points (m)
    travel: np.ndarray  # [3] m: how far a loop moves on over the floor each cycle


def _measure(clip: Clip, feet: FootSpec | None, frames: tuple[int, int | None] | None,
             window: int | None, fk_out: dict[str, Any] | None = None) -> tuple[_Seen, Any]:
    """What the feet do over the analysed frames, and the threshold chooser for them (from the
    whole take, so analysing part of it uses the take's thresholds)."""
    points = foot_points(clip, feet)
    seen = _seen(clip, points, frames, window, fk_out)
    whole = seen if frames is None else _seen(clip, points, None, window)
    leg = _leg_m(clip, points)
    pooled = np.concatenate(list(whole.speeds.values())) if whole.speeds else np.zeros(1)
    stance, swing = (float(x) for x in np.percentile(pooled, [5, 98]))

    def choose(speed_mps: float | None, exit_mps: float | None, height_m: float | None) -> Thresholds:
        spread = max(swing - stance, 0.0)
        # Floors in leg lengths per second: a standing take's jitter is no step.
        seed = speed_mps if speed_mps is not None else max(stance + _SEED * spread, _SEED_LEGS * leg)
        leave = max(stance + _EXIT * spread, _EXIT_LEGS * leg, 2.0 * seed)
        leave = exit_mps if exit_mps is not None else leave
        if leave <= seed:
            raise ValueError(f"the lift speed ({leave:g} m/s) must exceed the foot speed ({seed:g} m/s)")
        return Thresholds(speed_mps=seed, exit_mps=leave,
                          height_m=height_m if height_m is not None else _HEIGHT_LEGS * leg,
                          swing_mps=max(_SWING * swing, leave), touch_m=_TOUCH_LEGS * leg,
                          touch_mps=_TOUCH * swing, rest_mps=min(stance + _REST * spread, seed),
                          lift_m=_LIFT_LEGS * leg, air_m=_AIR_LEGS * leg, travel_m=_TRAVEL_LEGS * leg,
                          leg_m=leg, stance_seen_mps=stance,
                          swing_seen_mps=swing)

    return seen, choose


def _seen(clip: Clip, points: Mapping[str, tuple[list[int], list[int]]],
          frames: tuple[int, int | None] | None, window: int | None,
          fk_out: dict[str, Any] | None = None) -> _Seen:
    """fk_out: when given, the FK is done over every frame (not only the analysed ones: each
    frame's is its own) and kept there for `footlock.lock_feet`, component-major as it works:
    'index' [J] joint -> row (-1: not computed), 'local' rotations [rows, 4, T], 'rotations'
    [rows, 4, T] and 'positions' [rows, 3, T] in the world."""
    first, stop = _frame_range(clip, frames)
    T = clip.n_frames
    loop = clip.loop and first == 0 and stop == T
    if loop:
        stop = clip.loop_frames  # a repeated seam frame is counted once
    n = stop - first
    fps, up, m = clip.fps, clip.up, clip.meters_per_unit
    if window is None:
        window = 2 * int(fps * _MEDIAN_SECONDS // 2) + 1
    speeds: dict[str, np.ndarray] = {}
    heights: dict[str, np.ndarray] = {}
    where: dict[str, np.ndarray] = {}
    travel = np.zeros(3)
    if n >= 2:
        # FK along the chains down to the feet and the root only: a third of a skeleton's joints.
        used = ({int(j) for joints, _ in points.values() for k in joints
                 for j in skeleton.chain(clip.parents, k)}
                | set(skeleton.chain(clip.parents, clip.root)))
        # Component-major ([joint, component, frame]), as quat.fk works inside: no gathered copy
        # of the whole take's [T, J, 4] rotations.
        start = 0 if fk_out is not None else first
        index, local, rot, pos = quat.fk_joints(clip.rotations[start:T], clip.positions[start:T],
                                                clip.parents, used)
        if fk_out is not None:
            fk_out.update(index=index, local=local, rotations=rot, positions=pos)
            rot, pos = rot[:, :, first:], pos[:, :, first:]
        if loop:
            # The frame after the last is frame 0 moved on by one cycle's travel over the floor.
            root = pos[index[clip.root]].T * m
            travel = root[-1] - root[0] if stop < T else (root[-1] - root[0]) * n / (n - 1)
            travel -= up * (travel @ up)
        span = max(1, round(fps * _SPEED_SECONDS))
        axis = int(np.argmax(np.abs(up))) if np.count_nonzero(up) == 1 else None
        for name, (joints, sites) in points.items():
            # [n, K, 3] the foot's points: its joints, then its End Sites.
            p = np.empty((n, len(joints) + len(sites), 3))
            for i, j in enumerate(index[joints]):
                p[:, i] = pos[j, :, :n].T
            for i, (e, j) in enumerate(zip(sites, index[clip.end_parents[sites]], strict=True)):
                tip = quat.mul_vec_components(*rot[j, :, :n], *clip.end_offsets[e])
                for c in range(3):
                    p[:, len(joints) + i, c] = pos[j, c, :n] + tip[c]
            p *= m
            speeds[name] = _median(_speed(p, span, fps, loop, travel), window, loop)
            # Along an axis, the coordinate itself (what the dot product gives, without its cost).
            heights[name] = p[..., axis] * up[axis] if axis is not None else p @ up
            where[name] = p
    return _Seen(first, stop, loop, speeds, heights, where, travel)


def leg_length(clip: Clip, side: str) -> float:
    """Hip to ankle (file units) along the body map's leg on `side` ('L', 'R'): its bones' lengths
    summed; 0 where the map has no such leg or its ankle is not on it."""
    leg = clip.body.legs.get(side, [])
    foot = clip.body.feet.get(side, [])
    if not foot or foot[0] not in leg:
        return 0.0
    bone = np.linalg.norm(clip.offsets, axis=-1)
    return float(bone[leg[1:leg.index(foot[0]) + 1]].sum())


def _leg_m(clip: Clip, points: Mapping[str, tuple[list[int], list[int]]]) -> float:
    """Hip to ankle in meters: the body map's longer leg, else half the standing height."""
    lengths = [leg_length(clip, side) for side in clip.body.legs]
    leg_units = max(lengths) if lengths and max(lengths) > 0 else 0.5 * clip.height
    return leg_units * clip.meters_per_unit


def _track(s: np.ndarray, slow: np.ndarray, moving_slowly: np.ndarray, near: np.ndarray, above: np.ndarray,
           th: Thresholds, min_frames: int, knee_frames: int, reach: float,
           loop: bool, points: np.ndarray, fps: float,
           travel: np.ndarray,
           split_slides: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One foot over n frames: (mask [n], onsets, lifts, slides), the times in fractional frames,
    slides the frames where a contact was cut as the foot slid on the floor (no step).
    `above` [n, K] is how far (m) each of the foot's points is above the floor, `points` [n, K, 3]
    where they are (m)."""
    n = s.size
    exit_mps = th.exit_mps
    seed, grow = slow & near, moving_slowly & near
    shift = 0
    if loop:
        if grow.all():
            return np.full(n, bool(seed.any())), np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
        # Start the cycle at its fastest free frame: no contact wraps past it.
        shift = int(np.argmax(np.where(grow, -np.inf, s)))
        s, seed, grow, near, above, points = (np.roll(x, -shift, axis=0)
                                              for x in (s, seed, grow, near, above, points))
        if shift:
            points[n - shift:] += travel  # the frames after the seam, a cycle on
    starts, stops = runs(grow)
    seeds = np.concatenate([[0], np.cumsum(seed)])
    keep = seeds[stops] > seeds[starts]  # a contact gets slow at least once
    if not loop:  # or runs off an end of the clip, where it may have
        keep |= (starts == 0) | (stops == n)
    starts, stops = starts[keep], stops[keep]
    if starts.size > 1:
        short = (starts[1:] - stops[:-1]) < min_frames
        starts = starts[np.concatenate([[True], ~short])]
        stops = stops[np.concatenate([~short, [True]])]
    # Cut where the foot lifts or travels, then each piece is a contact when it gets slow (or
    # runs off an end); gaps shorter than min_frames are filled again (a lift that brief is
    # none; a cut for travel leaves none that short) and shorter contacts dropped.
    starts, stops, slid_in, slid_out, stepped = _split(starts, stops, s, seed, above, points, th, fps,
                                                       min_frames)
    if not split_slides and starts.size > 1:
        # A slide's cut undone: the two pieces are one contact again.
        join = slid_out[:-1] & slid_in[1:] & ~stepped[1:]
        head, tail = np.concatenate([[True], ~join]), np.concatenate([~join, [True]])
        starts, slid_in, stepped = starts[head], slid_in[head], stepped[head]
        stops, slid_out = stops[tail], slid_out[tail]
    keep = seeds[stops] > seeds[starts]
    if not loop:
        keep |= (starts == 0) | (stops == n)
    starts, stops, slid_in, slid_out, stepped = (x[keep] for x in (starts, stops, slid_in, slid_out, stepped))
    if starts.size > 1:
        short = (starts[1:] - stops[:-1]) < min_frames
        head, tail = np.concatenate([[True], ~short]), np.concatenate([~short, [True]])
        starts, slid_in, stepped = starts[head], slid_in[head], stepped[head]
        stops, slid_out = stops[tail], slid_out[tail]
    long = (stops - starts) >= min_frames
    starts, stops, slid_in, slid_out, stepped = (x[long] for x in (starts, stops, slid_in, slid_out, stepped))

    # Every contact at once (a 30 fps take has a contact every 16 frames). Contact k owns the
    # frames since its predecessor's end, [stops[k - 1], stops[k]): its touchdown and lift are
    # looked for there, and these windows do not overlap.
    K = starts.size
    downs, ups = starts.astype(np.float64), (stops - 1).astype(np.float64)
    has_down, has_up = np.ones(K, bool), np.ones(K, bool)
    slides = np.zeros(0, np.int64)
    if K:
        since = np.concatenate([[0], stops[:-1]])
        end = int(stops[-1])
        owner = np.repeat(np.arange(K), stops - since)  # [end] the contact whose window holds a frame
        inside = np.arange(end) >= starts[owner]
        next_seed = _next_true(seed)
        first_slow = np.where(next_seed[starts] < stops, next_seed[starts], stops - 1)  # a run off the end
        # Each point's own standing height in each contact: the middle of its sorted heights over
        # the contact's slow frames, else its last frame's (a heel strike lands the ankle at its
        # height, a forefoot landing the toe; real floors are not level).
        stand = _middles(above, np.flatnonzero(seed[:end] & inside), owner, above[stops - 1])
        # [end] the foot's lowest point over its stand (point by point: a min over 2-4 columns is slow)
        down = above[:end, 0] - stand[:, 0][owner]
        for j in range(1, above.shape[1]):
            np.minimum(down, above[:end, j] - stand[:, j][owner], out=down)
        # Touchdown: the knee after the foot last swung (or since the previous contact).
        swung = _last_true(s > th.swing_mps)[first_slow]
        swung = np.where(swung >= since, swung, -1)
        edge = starts == 0 if not loop else np.zeros(K, bool)
        # Standing at the first analysed frame, not swinging since: it landed before.
        standing = np.zeros(K, bool)
        if not loop:
            standing[0] = swung[0] < 0 and down[0] <= th.touch_m and s[0] <= th.touch_mps
        has_down[edge | standing] = False
        downs[standing & ~edge] = 0.0
        find = np.flatnonzero(~edge & ~standing)
        a, fs, sw, since_f = starts[find], first_slow[find], swung[find], since[find]
        lo = np.maximum(np.where(sw >= 0, sw, since_f), _last_true(~near)[fs] + 1)
        # Never before the fastest frame since the last contact (a shuffle's swing that never
        # reached swing speed: its climb is no landing).
        lo = np.maximum(lo, _argmax_windows(s, since_f, fs))
        # The knee of the speed's fall as the foot reaches the floor: never while it is still
        # above the floor and moving fast (at a low frame rate the knee of 2-frame slopes comes
        # early), nor long after it landed (a foot that lands flat falls to rest without a knee).
        landed, has_landed = _landing(s, down, lo, fs, since_f, th.touch_m, th.touch_mps)
        # The fall ends where the foot comes to rest: past the contact's first slow frame when
        # the take's threshold is high (a run's planted foot still rolls).
        next_rest = _next_true(s <= th.rest_mps)[a]
        rest = np.where(next_rest < stops[find], np.maximum(fs, next_rest), fs)
        reached = np.floor(np.where(has_landed, landed, 0.0) + reach).astype(np.int64)
        hi = np.where(has_landed, np.minimum(rest, reached), rest)
        at = _knees(_bend(s, knee_frames, loop), lo, hi, a.astype(np.float64))
        downs[find] = np.where(has_landed, np.minimum(np.maximum(at, landed), rest), at)
        # Lift: the speed crossing exit_mps, or the last point leaving the floor if that comes
        # first (a hop's foot rises before it is fast; a tired runner's toe hovers slowly).
        # The foot is off once it stays above the floor to the end of the slow run.
        settled = _last_true(down <= th.lift_m)[stops - 1]
        rises = (settled >= starts) & (settled < stops - 1)
        f = settled[rises] + 1
        ups[rises] = f - 1 + (th.lift_m - down[f - 1]) / (down[f] - down[f - 1])
        if not loop:
            has_up[~rises & (stops == n)] = False
        s_next = np.append(s, s[0]) if loop else np.append(s, np.inf)  # index n: the next cycle's 0
        b = stops
        crossing = ~rises & has_up & (s_next[b] >= exit_mps) & (exit_mps > s[b - 1])
        b = b[crossing]
        ups[crossing] = b - 1 + (exit_mps - s[b - 1]) / (s_next[b] - s[b - 1])
        # The foot has left once it speeds up past the contact speed for good: its last slow
        # frame before the end, where the speed crosses th.speed_mps (the lift speed comes a
        # few frames later, with the foot already on its way).
        gone = _last_true(seed)[stops - 1]
        early = has_up & (gone >= starts) & (gone < stops - 1) & (gone + 1 < n)
        g = gone[early]
        cross = g + (th.speed_mps - s[g]) / np.maximum(s_next[g + 1] - s[g], 1e-12)
        ups[early] = np.minimum(ups[early], np.clip(cross, g, g + 1))
        # A touchdown is where the foot has arrived: on a frame with its lowest point near its
        # standing height (a slow landing's knee can come while it is still coming down).
        at = np.minimum(np.ceil(downs - 1e-9).astype(np.int64), end - 1)
        late = has_down & (down[np.maximum(at, 0)] > _ARRIVED_LEGS * th.leg_m)
        arrived = np.append(_next_true(down <= _ARRIVED_LEGS * th.leg_m), end)[np.maximum(at, 0)]
        move = late & (arrived < stops)
        downs[move] = arrived[move]
        # Pieces of a contact cut where the foot moved on the floor begin and end at the cut;
        # only a move faster than a contact gets (a shuffle step) is a footstep.
        downs[slid_in] = starts[slid_in]
        ups[slid_out] = stops[slid_out] - 1
        # (a piece dropped as too short leaves its neighbour a touchdown or a lift of its own)
        slide = np.append(slid_in[1:] & ~stepped[1:], False) & slid_out
        has_up[slide] = False
        slides = stops[slide]
        has_down[np.insert(slide[:-1], 0, False)] = False
        # A lift comes before the foot has travelled: where the contact's least moving point
        # has spread over th.travel_m by the lift speed, the lift is the frame before.
        ups = _lift_before_travel(downs, ups, first_slow, _last_true(seed)[stops - 1], points,
                                  _TRIM * th.travel_m)
    # The knees may shorten a contact: the minimum duration holds for what is reported (not for
    # a contact running off either end of a clip: it goes on outside it).
    first = np.ceil(downs - 1e-9).astype(np.int64)
    last = np.floor(ups + 1e-9).astype(np.int64)
    long = ((last - first + 1) >= min_frames) | ~has_down | ~has_up
    downs, ups, has_down, has_up = downs[long], ups[long], has_down[long], has_up[long]
    first, last = first[long], last[long]
    mask = _cover(first, last, n)
    if loop:
        return (np.roll(mask, shift), np.sort(np.mod(downs + shift, n)), np.sort(np.mod(ups + shift, n)),
                np.sort(np.mod(slides + shift, n)))
    return mask, downs[has_down], ups[has_up], slides


def _split(starts: np.ndarray, stops: np.ndarray, s: np.ndarray, seed: np.ndarray, above: np.ndarray,
           points: np.ndarray, th: Thresholds, fps: float,
           min_frames: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Contacts [starts, stops) cut where the foot lifts or travels: where its lowest point rises
    more than th.air_m off its standing height between frames on the floor (those frames are the
    swing of a step too slow or too low for the speed and height tests), and where the point of
    it that moves least has spread over more than th.travel_m (a shuffle, a foot that slides):
    there the frames around the fastest one, as long as they are faster than th.speed_mps (at
    least that one), are the swing. The checks are cheap on all contacts at once; only the
    contacts they flag are cut, one by one; a cut for travel leaves at least min_frames out.
    Returns (starts, stops, slid_in, slid_out, stepped): the pieces, whether each begins or ends
    at a cut for travel (the foot moved there, on the floor), and whether the move it begins
    after was a step (faster than th.speed_mps and by more than th.travel_m: a shuffle)
    rather than a slide."""
    K = starts.size
    none = np.zeros(K, bool)
    if not K:
        return starts, stops, none, none, none
    lengths = stops - starts
    offsets = np.cumsum(lengths) - lengths
    idx = np.arange(int(lengths.sum())) + np.repeat(starts - offsets, lengths)  # the contacts' frames
    owner = np.repeat(np.arange(K), lengths)
    # Each point's lowest over the contact's slow frames (any frame where it has none): a flag
    # that errs toward air (the contacts it flags are read again, frame by frame).
    h = above[idx]
    slow_h = np.where(seed[idx][:, None], h, np.inf)
    stand = np.minimum.reduceat(slow_h, offsets, axis=0)
    stand = np.where(np.isfinite(stand), stand, np.minimum.reduceat(h, offsets, axis=0))
    low = (h - stand[owner]).min(axis=1)
    air = low > th.air_m
    # Air between two frames on the floor (a landing's or a lift's is the touchdown's and the lift's).
    pos = np.arange(idx.size)
    first_down = np.minimum.reduceat(np.where(air, idx.size, pos), offsets)
    last_down = np.maximum.reduceat(np.where(air, -1, pos), offsets)
    count = np.concatenate([[0], np.cumsum(air)])
    inner_air = (last_down > first_down) & (count[np.maximum(last_down, 0)]
                                            - count[np.minimum(first_down, idx.size - 1)] > 0)
    # Travel over the frames on the floor: a box around each point (its diagonal bounds the
    # largest distance between two of its positions), the least moving point's.
    # From the first slow frame on: before it the foot is landing (and a heel strike's
    # contact begins while it still rolls at the lift speed).
    landing = idx < np.repeat(np.minimum(_next_true(seed)[starts], stops - 1), lengths)
    out = (air | landing)[:, None, None]
    lo_box = np.minimum.reduceat(np.where(out, np.inf, points[idx]), offsets, axis=0)
    hi_box = np.maximum.reduceat(np.where(out, -np.inf, points[idx]), offsets, axis=0)
    diag = np.sqrt(np.sum(np.square(np.nan_to_num(hi_box - lo_box, posinf=0.0, neginf=0.0)), axis=-1))
    flagged = np.flatnonzero(inner_air | (diag.min(axis=1) > th.travel_m))
    if not flagged.size:
        return starts, stops, none, none, none
    new_starts, new_stops = [starts[:flagged[0]]], [stops[:flagged[0]]]
    slid: list[tuple[bool, bool, bool]] = [(False, False, False)] * int(flagged[0])
    for i, k in enumerate(flagged):
        a, b = int(starts[k]), int(stops[k])
        on_floor = _local_height(above[a:b], seed[a:b], round(_STAND_SECONDS * fps)) <= th.air_m
        if not on_floor.any():
            on_floor[:] = True
        pieces = [(a + u, a + v) for u, v in zip(*runs(on_floor), strict=True)]
        # A landing's air goes with the first piece, a lift's with the last.
        pieces[0] = (a, pieces[0][1])
        pieces[-1] = (pieces[-1][0], b)
        for u, v in pieces:
            cut = _travels(u, v, s, points, th, min_frames)
            for i_cut, (c, d, fast) in enumerate(cut):
                new_starts.append(np.array([c]))
                new_stops.append(np.array([d]))
                slid.append((i_cut > 0, i_cut < len(cut) - 1, fast))
        nxt = flagged[i + 1] if i + 1 < flagged.size else K
        new_starts.append(starts[k + 1:nxt])
        new_stops.append(stops[k + 1:nxt])
        slid += [(False, False, False)] * int(nxt - k - 1)
    flags = np.array(slid, bool).reshape(-1, 3)
    return (np.concatenate(new_starts).astype(np.int64), np.concatenate(new_stops).astype(np.int64),
            flags[:, 0], flags[:, 1], flags[:, 2])


def _lift_before_travel(downs: np.ndarray, ups: np.ndarray, first_slow: np.ndarray, last_slow: np.ndarray,
                        points: np.ndarray, limit: float) -> np.ndarray:
    """Lifts `ups` moved back to where each contact's least moving point (of `points` [n, K, 3])
    has spread over `limit` since its touchdown (since its first slow frame if it had by then:
    a foot that skates as it lands), when that is after its last slow frame (as the foot speeds
    up to lift; a contact made of several, by a min_duration that fills swings, stays). A box
    around each point bounds its spread: only the
    contacts whose box is larger are looked at frame by frame."""
    a = np.maximum(np.ceil(downs - 1e-9).astype(np.int64), 0)
    b = np.minimum(np.floor(ups + 1e-9).astype(np.int64), points.shape[0] - 1) + 1
    some = np.flatnonzero(b - a > 1)
    if not some.size:
        return ups
    size = b[some] - a[some]
    offset = np.cumsum(size) - size
    frames = np.arange(int(size.sum())) + np.repeat(a[some] - offset, size)
    p = points[frames]
    box = np.maximum.reduceat(p, offset, axis=0) - np.minimum.reduceat(p, offset, axis=0)
    out = ups.copy()
    for k in some[np.sqrt(np.sum(box * box, axis=-1)).min(axis=1) > limit]:
        for start in (int(a[k]), max(int(a[k]), int(first_slow[k]))):
            q = points[start:int(b[k])]
            grown = np.maximum.accumulate(q, axis=0) - np.minimum.accumulate(q, axis=0)
            past = np.flatnonzero(np.sqrt(np.sum(grown * grown, axis=-1)).min(axis=1) > limit)
            if not past.size:
                break
            over = start + int(past[0])
            if over > first_slow[k] + 1:
                if over > last_slow[k]:
                    out[k] = min(out[k], over - 1.0)
                break
    return out


def _local_height(above: np.ndarray, slow: np.ndarray, radius: int) -> np.ndarray:
    """[n] how far the lowest of the points rises above its own local standing height: the mean
    of each point's heights `above` [n, K] over the `slow` frames within `radius` frames (the
    floor under a long contact is not level, nor the foot's stance within it), by running sums."""
    n = above.shape[0]
    w = slow.astype(np.float64) if slow.any() else np.ones(n)
    total = np.concatenate([np.zeros((1, above.shape[1])), np.cumsum(above * w[:, None], axis=0)])
    count = np.concatenate([[0.0], np.cumsum(w)])
    lo = np.maximum(np.arange(n) - radius, 0)
    hi = np.minimum(np.arange(n) + radius + 1, n)
    got = count[hi] - count[lo]
    fallback = (above * w[:, None]).sum(axis=0) / max(w.sum(), 1.0)
    stand = np.where(got[:, None] > 0, (total[hi] - total[lo]) / np.maximum(got, 1.0)[:, None], fallback)
    return (above - stand).min(axis=1)


def _travels(a: int, b: int, s: np.ndarray, points: np.ndarray, th: Thresholds,
             min_frames: int) -> list[tuple[int, int, bool]]:
    """Frames [a, b) of one contact cut into pieces [start, stop) over none of which the foot's
    least moving point spreads beyond th.travel_m (see `_split`), each with whether the move
    before it was a step (False for the first)."""
    out = []
    start, fast = a, False
    slow = np.flatnonzero(s[a:b] < th.speed_mps)
    # The landing before the first slow frame and the lift after the last are no travel.
    begin, end = (a + int(slow[0]), a + int(slow[-1]) + 1) if slow.size else (a, b)
    while True:
        lo = max(start, begin)
        if lo + 1 >= end:
            break
        # The box around each point from lo on (its diagonal bounds the spread), grown frame by
        # frame: the first frame where the least moving point's passes the limit.
        p = points[lo:end]
        box = np.maximum.accumulate(p, axis=0) - np.minimum.accumulate(p, axis=0)
        over = np.flatnonzero(np.sqrt(np.sum(box * box, axis=-1)).min(axis=1) > th.travel_m)
        if not over.size:
            break
        t = lo + int(over[0])
        # The move: around the fastest frame, as long as faster than a contact gets, and at
        # least min_frames (shorter gaps are filled).
        m = lo + 1 + int(np.argmax(s[lo + 1:t + 1]))
        g0, g1 = m, m + 1
        while g0 - 1 > lo and s[g0 - 1] > th.speed_mps:
            g0 -= 1
        while g1 < end and s[g1] > th.speed_mps:
            g1 += 1
        while g1 - g0 < min_frames and (g0 - 1 > lo or g1 < end):
            if g0 - 1 > lo and (g1 >= end or s[g0 - 1] >= s[g1]):
                g0 -= 1
            else:
                g1 += 1
        out.append((start, g0, fast))
        # A step when the foot got faster than a contact does and moved by the limit.
        moved = np.sqrt(np.sum(np.square(points[min(g1, b - 1)] - points[g0 - 1]), axis=-1)).min()
        start, fast = g1, bool(s[m] > th.speed_mps and moved > th.travel_m)
    if start < b:
        out.append((start, b, fast))
    return out


def _middles(x: np.ndarray, frames: np.ndarray, owner: np.ndarray, default: np.ndarray) -> np.ndarray:
    """[k, K] per group, each column's middle value (np.sort(...)[count // 2]) over the rows
    `frames` (sorted) of x [n, K] that `owner` puts in it; `default`'s row for a group with none."""
    out = default.copy()
    if not frames.size:
        return out
    group = owner[frames]
    count = np.bincount(group, minlength=default.shape[0])
    got = np.flatnonzero(count)
    start = np.cumsum(count) - count
    rows = x[frames]
    width = int(count.max())
    if default.shape[0] * width <= 4 * frames.size and not np.isnan(rows).any():
        # Groups side by side, padded with +inf (sorted past every value), one sort for all
        # (along the last axis: [column, group, member]).
        box = np.full((x.shape[1], default.shape[0], width), np.inf)
        box[:, group, np.arange(frames.size) - start[group]] = rows.T
        box.sort(axis=-1)
        out[got] = box[:, got, count[got] // 2].T
        return out
    middle = (start + count // 2)[got]  # a group as long as the take: sort by group, then value
    for j in range(x.shape[1]):
        out[got, j] = rows[np.lexsort((rows[:, j], group))[middle], j]
    return out


def _cover(first: np.ndarray, last: np.ndarray, n: int) -> np.ndarray:
    """bool [n]: frames first..last (each pair, inclusive) taken modulo n."""
    mask = np.zeros(n, bool)
    some = last >= first
    first, last = first[some], last[some]
    if not first.size:
        return mask
    if first.min() < 0 or last.max() >= 2 * n - 1 or (last - first).max() >= n:
        for a, b in zip(first, last, strict=True):  # never in practice: a span wrapping further
            mask[np.arange(a, b + 1) % n] = True
        return mask
    edges = np.zeros(2 * n + 1, np.int64)
    np.add.at(edges, first, 1)
    np.add.at(edges, last + 1, -1)
    covered = np.cumsum(edges[:2 * n]) > 0
    return covered[:n] | covered[n:]

def _next_true(mask: np.ndarray) -> np.ndarray:
    """[n] the first index >= i where mask holds (n when none)."""
    n = mask.size
    at = np.where(mask, np.arange(n), n)
    return np.minimum.accumulate(at[::-1])[::-1]


def _last_true(mask: np.ndarray) -> np.ndarray:
    """[n] the last index <= i where mask holds (-1 when none)."""
    return np.maximum.accumulate(np.where(mask, np.arange(mask.size), -1))


def _landing(s: np.ndarray, down: np.ndarray, lo: np.ndarray, hi: np.ndarray, since: np.ndarray,
             touch_m: float, touch_mps: float) -> tuple[np.ndarray, np.ndarray]:
    """([k] fractional frame, [k] found): where in each [lo, hi] the foot first has its leading
    point within touch_m of its standing height (`down` [m], over each contact's own stand) and is
    slower than touch_mps (each crossing interpolated between frames, the later of the two).
    The fractions are taken from each contact's window start `since`, then moved by it."""
    m = down.size
    ok = (down <= touch_m) & (s[:m] <= touch_mps)
    f = np.append(_next_true(ok), m)[lo]
    found = f <= hi
    landed = f.astype(np.float64)
    later = np.flatnonzero(found & (f > lo))
    g = f[later]
    best = np.full(g.size, -np.inf)
    for x, limit in ((down, touch_m), (s, touch_mps)):
        x0, x1 = x[g - 1], x[g]
        cross = np.flatnonzero((x0 > limit) & (limit >= x1))
        at = (g[cross] - since[later][cross] - 1 + (x0[cross] - limit) / (x0[cross] - x1[cross])) \
            + since[later][cross]
        best[cross] = np.maximum(best[cross], at)
    landed[later] = np.where(best > -np.inf, best, landed[later])
    return landed, found


def _bend(s: np.ndarray, w: int, loop: bool) -> np.ndarray:
    """[n] least-squares slope of s over frames [t, t + w] minus that over [t - w, t]: large
    where a steep fall ends or a steep climb begins."""
    n = s.size
    k = np.arange(w + 1, dtype=np.float64)
    kernel = (k - k.mean()) / np.sum((k - k.mean()) ** 2)
    padded = np.pad(s, w, mode="wrap" if loop else "edge")
    slope = np.lib.stride_tricks.sliding_window_view(padded, w + 1) @ kernel  # slope[i]: s[i - w .. i]
    return slope[w:w + n] - slope[:n]


def _argmax_windows(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """[k] the first index of the largest x over each [lo, hi] (lo itself where hi < lo)."""
    out = lo.copy()
    some = np.flatnonzero(hi >= lo)
    if not some.size:
        return out
    a, b = lo[some], hi[some]
    size = b - a + 1
    offset = np.cumsum(size) - size
    frames = np.arange(int(size.sum())) + np.repeat(a - offset, size)
    values = x[frames]
    peak = np.repeat(np.maximum.reduceat(values, offset), size)
    hit = np.where(values == peak, np.arange(frames.size), frames.size)
    out[some] = frames[np.minimum.reduceat(hit, offset)]
    return out


def _knees(bend: np.ndarray, lo: np.ndarray, hi: np.ndarray, default: np.ndarray) -> np.ndarray:
    """[k] fractional frame in each [lo, hi] where `bend` peaks (its first peak, the vertex of
    the parabola through it and its neighbours); `default` where nothing there bends the right way."""
    out = default.copy()
    some = np.flatnonzero(hi >= lo)
    if not some.size:
        return out
    lo, hi = lo[some], hi[some]
    size = hi - lo + 1
    offset = np.cumsum(size) - size
    frames = np.arange(int(size.sum())) - np.repeat(offset - lo, size)
    values = bend[frames]
    peak = np.repeat(np.maximum.reduceat(values, offset), size)
    # The first frame at the peak (np.argmax's choice, a NaN first of all).
    hit = np.where((values == peak) | np.isnan(values), np.arange(frames.size), frames.size)
    i = frames[np.minimum.reduceat(hit, offset)]
    y1 = bend[i]
    knee = i.astype(np.float64)
    inner = np.flatnonzero((lo < i) & (i < hi))
    j = i[inner]
    y0, y2 = bend[j - 1], bend[j + 1]
    curvature = y0 - 2.0 * y1[inner] + y2
    bent = curvature < 0.0
    knee[inner[bent]] = j[bent] + 0.5 * (y0 - y2)[bent] / curvature[bent]
    good = y1 > 0.0
    out[some[good]] = knee[good]
    return out


# -- helpers -------------------------------------------------------------------------------------


def _frame_range(clip: Clip, frames: tuple[int, int | None] | None) -> tuple[int, int]:
    T = clip.n_frames
    if frames is None:
        return min(clip.motion_start, T), T
    try:
        a, b = frames
    except (TypeError, ValueError):
        raise ValueError(f"frames must be (first, stop), not {frames!r}") from None
    b = T if b is None else b
    ints = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (a, b))
    if not ints or not 0 <= a <= b <= T:
        raise ValueError(f"frames must be (first, stop) with 0 <= first <= stop <= {T}, not {frames!r}")
    return int(a), int(b)


def foot_points(clip: Clip, feet: FootSpec | None = None) -> dict[str, tuple[list[int], list[int]]]:
    """{name: (joint indices, End Site indices)}: the points a foot stands on, tracked per foot;
    feet None: the body map's ('L', 'R': each ankle and every joint below it)."""
    if feet is None:
        chosen: dict[str, list[int]] = default_feet(clip)
    else:
        if not isinstance(feet, Mapping) or not feet:
            raise ValueError("feet must map foot names to joints, e.g. {'L': ['LeftFoot', 'LeftToeBase']}")
        chosen = {str(name): foot_joints(clip, joints, f"foot {name!r}") for name, joints in feet.items()}
    return {name: (joints, [int(e) for e in np.flatnonzero(np.isin(clip.end_parents, joints))])
            for name, joints in chosen.items()}


def foot_joints(clip: Clip, joints: str | int | Sequence[str | int], what: str = "foot") -> list[int]:
    """Joint indices of a foot: an ankle (name or index) and every joint below it, or a list of
    joints taken as given."""
    if isinstance(joints, (str, int, np.integer)):
        ankle = body.joint_index(clip, joints, what)
        return [int(j) for j in np.flatnonzero(skeleton.descendants(clip.parents, ankle))]
    idx = [body.joint_index(clip, j, what) for j in joints]
    if not idx:
        raise ValueError(f"{what} has no joints")
    return idx


def _speed(p: np.ndarray, span: int, fps: float, loop: bool, travel: np.ndarray) -> np.ndarray:
    """[n] speed (m/s) of the slowest of the points p [n, K, 3] (meters): central differences over
    +-span frames, one-sided at the ends of a clip, wrapped around a loop (moved by `travel`)."""
    n = p.shape[0]
    i = np.arange(n)
    if loop:
        ahead, behind = i + span, i - span
        d = (p[ahead % n] + (ahead // n)[:, None, None] * travel) \
            - (p[behind % n] + (behind // n)[:, None, None] * travel)
        steps = np.full(n, 2 * span)
    else:
        ahead, behind = np.minimum(i + span, n - 1), np.maximum(i - span, 0)
        d = np.empty_like(p)
        top = max(n - span, span)
        np.subtract(p[2 * span:], p[:top - span], out=d[span:top])
        edge = np.concatenate([i[:span], i[top:]])
        d[edge] = p[ahead[edge]] - p[behind[edge]]
        steps = ahead - behind
    # |d| per point (as np.linalg.norm sums the squares, in order), the slowest point's speed.
    d *= d
    length = np.sqrt(d[..., 0] + d[..., 1] + d[..., 2])
    length *= (fps / steps)[:, None]
    return np.minimum.reduce([length[:, k] for k in range(length.shape[1])])


def _median(x: np.ndarray, window: int, loop: bool) -> np.ndarray:
    if window == 1:
        return x
    padded = np.pad(x, window // 2, mode="wrap" if loop else "edge")
    view = np.lib.stride_tricks.sliding_window_view(padded, window)
    if window in (3, 5):  # by selection (the default windows at 60 and 120 fps)
        lo, hi, mid = view[:, 0], view[:, -1], view[:, window // 2]
        if window == 5:
            # The lower of two pairs' minima is below the median, the higher of their maxima above.
            a, b, c, d = view[:, 0], view[:, 1], view[:, 3], view[:, 4]
            lo = np.maximum(np.minimum(a, b), np.minimum(c, d))
            hi = np.minimum(np.maximum(a, b), np.maximum(c, d))
        return np.maximum(np.minimum(lo, hi), np.minimum(np.maximum(lo, hi), mid))
    return np.median(view, axis=-1)


def _running_min(x: np.ndarray, radius: int, loop: bool) -> np.ndarray:
    """[n] the minimum of x over [i - radius, i + radius], padded by its ends (or wrapped): the
    minima from each window-long block's start and from its end, two of which cover a window."""
    w = 2 * radius + 1
    padded = np.pad(x, radius, mode="wrap" if loop else "edge")
    blocks = np.concatenate([padded, np.full(-padded.size % w, np.inf)]).reshape(-1, w)
    ahead = np.minimum.accumulate(blocks, axis=1).ravel()
    behind = np.minimum.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].ravel()
    n = x.size
    return np.minimum(behind[:n], ahead[w - 1:w - 1 + n])


def _lowest(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The elementwise minimum of a few columns (np.min over a 2-4 wide axis is slow)."""
    out = columns[0].copy()
    for c in columns[1:]:
        np.minimum(out, c, out=out)
    return out


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, stops) of the runs of True in a bool [T] mask (a foot's contacts), stops excluded."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _positive(x: float, what: str) -> float:
    x = float(x)
    if not (x > 0.0 and math.isfinite(x)):
        raise ValueError(f"{what} must be positive and finite, not {x}")
    return x
