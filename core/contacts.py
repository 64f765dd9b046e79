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

Lift (the contact's end): the speed crossing `exit_mps`, interpolated between frames. The toe
accelerates steadily off the floor, so this comes a few frames after it leaves (lifts have no
hand labels to be checked against).

Times are seconds (frame index / fps, so frame 0 is 0 s); frames are 0-based indices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import body, skeleton
from .clip import Clip

# Central differences reach this far each side: two frames at 120 fps, past one frame's jitter.
_SPEED_SECONDS = 1.0 / 60.0
_MEDIAN_SECONDS = 1.0 / 24.0  # the speed's median filter: 5 frames at 120 fps
# The slopes compared to find a knee each span this long: six frames at 120 fps. Set on the
# hand-labelled takes, where 5 to 7 frames find every touchdown (tests/data/footsteps/README.md).
_KNEE_SECONDS = 0.05
# A foot this fast is swinging: a touchdown is searched after the last such frame.
_SWING_MPS = 2.0

FootSpec = Mapping[str, str | int | Sequence[str | int]]


class _Detection(NamedTuple):
    """One foot's contacts: mask [T] over the clip; touchdowns and lifts in sub-frames, sorted."""

    mask: np.ndarray
    downs: np.ndarray
    ups: np.ndarray


def default_feet(clip: Clip) -> dict[str, list[int]]:
    """{'L': [ankle, ...joints below], 'R': [...]}: the feet of the body map (`clip.body`).
    ValueError saying what was tried when it found no legs."""
    body = clip.body
    if not body.feet:
        raise ValueError(f"no legs found: {body.problem}")
    return {side: list(joints) for side, joints in body.feet.items()}


# Foot Speed: a foot moving slower than this (m/s) is planted; every default of it is this one.
FOOT_SPEED_MPS = 0.15


def contacts(clip: Clip, *, feet: FootSpec | None = None, speed_mps: float = FOOT_SPEED_MPS,
             floor: str | float | None = "local", min_duration: float = 0.05,
             frames: tuple[int, int | None] | None = None, window: int | None = None, exit_mps: float = 1.0,
             height_m: float = 0.15, floor_seconds: float = 1.0) -> dict[str, np.ndarray]:
    """{foot: bool [T]}: the frames where each foot is planted (False outside the analysed range).

    feet: None for the body map's feet, keys 'L' and 'R' (default_feet); {name: ankle} by joint
        name or index, e.g. {'L': 'LeftFoot', 'R': 'RightFoot'} (the ankle and every joint below
        it); or {name: [joint, ...]}, exactly those joints. Each foot is tracked at its joints and
        at their End Sites.
    speed_mps: a contact gets this slow at least once (m/s).
    exit_mps: a contact lasts while the foot stays slower than this (m/s); the lift is where the
        speed crosses it.
    floor: 'local' (running minimum of the feet's lowest points over floor_seconds), None (no
        height test), or a fixed floor height along clip.up in file units. A planted foot's
        lowest point is at most height_m meters above it.
    min_duration: seconds; gaps between contacts shorter than this are filled first, then
        shorter contacts dropped.
    frames: (first, stop) frames analysed, stop excluded (stop None: to the end). Default
        (clip.motion_start, None), leaving out a converter T-pose. A looping clip analysed whole
        wraps from its last frame to frame 0, moved on by the root's travel over the cycle.
    window: odd length in frames of the median filter on the speed (1: none). Default: the odd
        count nearest 1/24 s (5 frames at 120 fps, 3 at 60, none at 30 and below), so that the
        filter spans the same time at any frame rate.
    """
    found = _detect(clip, feet=feet, speed_mps=speed_mps, floor=floor, min_duration=min_duration,
                   frames=frames, window=window, exit_mps=exit_mps, height_m=height_m,
                   floor_seconds=floor_seconds)
    return {name: d.mask for name, d in found.items()}


def footsteps(clip: Clip, *, lifts: bool = False, feet: FootSpec | None = None,
              speed_mps: float = FOOT_SPEED_MPS, floor: str | float | None = "local",
              min_duration: float = 0.05, frames: tuple[int, int | None] | None = None,
              window: int | None = None, exit_mps: float = 1.0, height_m: float = 0.15,
              floor_seconds: float = 1.0) -> dict[str, np.ndarray]:
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
                   floor_seconds=floor_seconds)
    out = {f"FootDown_{name}": d.downs / clip.fps for name, d in found.items()}
    if lifts:
        out.update({f"FootUp_{name}": d.ups / clip.fps for name, d in found.items()})
    return out


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


def _detect(clip: Clip, *, feet: FootSpec | None, speed_mps: float, floor: str | float | None,
            min_duration: float, frames: tuple[int, int | None] | None, window: int | None,
            exit_mps: float, height_m: float, floor_seconds: float) -> dict[str, _Detection]:
    """{foot: _Detection}: what contacts() and footsteps() report, onsets and lifts in frames."""
    speed_mps = _positive(speed_mps, "speed_mps")
    exit_mps = _positive(exit_mps, "exit_mps")
    if exit_mps <= speed_mps:
        raise ValueError(f"exit_mps ({exit_mps}) must exceed speed_mps ({speed_mps})")
    height_m = _positive(height_m, "height_m")
    floor_seconds = _positive(floor_seconds, "floor_seconds")
    min_duration = float(min_duration)
    if not (min_duration >= 0.0 and math.isfinite(min_duration)):
        raise ValueError(f"min_duration must be >= 0 seconds, not {min_duration}")
    if window is None:
        window = 2 * int(clip.fps * _MEDIAN_SECONDS // 2) + 1
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1 or window % 2 == 0:
        raise ValueError(f"window must be an odd number of frames >= 1, not {window!r}")
    fixed_floor = None
    if floor is not None and not (isinstance(floor, str) and floor == "local"):
        number = isinstance(floor, (int, float, np.integer, np.floating)) and not isinstance(floor, bool)
        if not number or not math.isfinite(float(floor)):
            raise ValueError(f"floor must be 'local', None or a height in file units, not {floor!r}")
        fixed_floor = float(floor)

    points = _foot_points(clip, feet)
    first, stop = _frame_range(clip, frames)
    T, n = clip.n_frames, stop - first
    if n < 2:
        return {name: _Detection(np.zeros(T, bool), np.zeros(0), np.zeros(0)) for name in points}
    loop = clip.loop and first == 0 and stop == T
    fps, up, m = clip.fps, clip.up, clip.meters_per_unit
    rot, pos = clip.fk()
    ends = clip.end_site_positions(rot, pos)
    travel = np.zeros(3)
    if loop:
        # The frame after the last is frame 0 moved on by one cycle's travel over the floor.
        root = pos[:, clip.root] * m
        travel = (root[-1] - root[0]) * n / (n - 1)
        travel -= up * (travel @ up)

    span = max(1, round(fps * _SPEED_SECONDS))
    speeds, lows = {}, {}
    for name, (joints, sites) in points.items():
        p = np.concatenate([pos[first:stop][:, joints], ends[first:stop][:, sites]], axis=1) * m
        speeds[name] = _median(_speed(p, span, fps, loop, travel), window, loop)
        lows[name] = (p @ up).min(axis=1)
    if floor is None:
        near = {name: np.ones(n, bool) for name in points}
    else:
        if fixed_floor is None:
            radius = max(1, round(floor_seconds * fps / 2.0))
            level = _running_min(np.min(np.stack(list(lows.values())), axis=0), radius, loop)
        else:
            level = np.full(n, fixed_floor * m)
        near = {name: lows[name] - level <= height_m for name in points}

    min_frames = max(1, math.ceil(min_duration * fps - 1e-9))
    knee_frames = max(2, round(fps * _KNEE_SECONDS))
    out = {}
    for name in points:
        s = speeds[name]
        mask, downs, ups = _track(s, s < speed_mps, s < exit_mps, near[name], exit_mps, min_frames,
                                  knee_frames, loop)
        full = np.zeros(T, bool)
        full[first:stop] = mask
        out[name] = _Detection(full, downs + first, ups + first)
    return out


def _track(s: np.ndarray, slow: np.ndarray, moving_slowly: np.ndarray, near: np.ndarray, exit_mps: float,
           min_frames: int, knee_frames: int, loop: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One foot over n frames: (mask [n], onsets, lifts), the times in fractional frames."""
    n = s.size
    seed, grow = slow & near, moving_slowly & near
    shift = 0
    if loop:
        if grow.all():
            return np.full(n, bool(seed.any())), np.zeros(0), np.zeros(0)
        # Start the cycle at its fastest free frame: no contact wraps past it.
        shift = int(np.argmax(np.where(grow, -np.inf, s)))
        s, seed, grow, near = (np.roll(x, -shift) for x in (s, seed, grow, near))
    starts, stops = _runs(grow)
    keep = np.array([seed[a:b].any() or (not loop and (a == 0 or b == n))
                     for a, b in zip(starts, stops, strict=True)], dtype=bool)
    starts, stops = starts[keep], stops[keep]
    if starts.size > 1:
        short = (starts[1:] - stops[:-1]) < min_frames
        starts = starts[np.concatenate([[True], ~short])]
        stops = stops[np.concatenate([~short, [True]])]
    long = (stops - starts) >= min_frames
    starts, stops = starts[long], stops[long]

    K = starts.size
    downs, ups = starts.astype(np.float64), (stops - 1).astype(np.float64)
    has_down, has_up = np.ones(K, bool), np.ones(K, bool)
    bend = _bend(s, knee_frames, loop)
    s_next = np.append(s, s[0]) if loop else s  # index n: frame 0 of the next cycle
    for k, (a, b) in enumerate(zip(starts, stops, strict=True)):
        planted = a + np.flatnonzero(seed[a:b])
        first_slow = int(planted[0]) if planted.size else int(b - 1)  # a run off the clip's end
        # Touchdown: the knee after the foot last swung (or since the previous contact).
        if a == 0 and not loop:
            has_down[k] = False
        else:
            since = int(stops[k - 1]) if k > 0 else 0
            swing = since + np.flatnonzero(s[since:first_slow + 1] > _SWING_MPS)
            if not swing.size and k == 0 and not loop and near[:first_slow + 1].all():
                # On the floor and never swinging since the clip began: it landed before that.
                downs[k], has_down[k] = 0.0, False
            else:
                lo = max(int(swing[-1]) if swing.size else since, _run_start(near, first_slow))
                knee = _knee(bend, lo, first_slow)
                downs[k] = a if knee is None else knee
        # Lift: the speed crossing exit_mps (or the last frame on the floor).
        if b == n and not loop:
            has_up[k] = False
        elif s_next[b] >= exit_mps > s[b - 1]:
            ups[k] = b - 1 + (exit_mps - s[b - 1]) / (s_next[b] - s[b - 1])
    # The knees may shorten a contact: the minimum duration holds for what is reported.
    first = np.ceil(downs - 1e-9).astype(np.int64)
    last = np.floor(ups + 1e-9).astype(np.int64)
    long = (last - first + 1) >= min_frames
    downs, ups, has_down, has_up = downs[long], ups[long], has_down[long], has_up[long]
    mask = np.zeros(n, bool)
    for d, u in zip(downs, ups, strict=True):
        mask[np.arange(math.ceil(d - 1e-9), math.floor(u + 1e-9) + 1) % n] = True
    if loop:
        return np.roll(mask, shift), np.sort(np.mod(downs + shift, n)), np.sort(np.mod(ups + shift, n))
    return mask, downs[has_down], ups[has_up]


def _bend(s: np.ndarray, w: int, loop: bool) -> np.ndarray:
    """[n] least-squares slope of s over frames [t, t + w] minus that over [t - w, t]: large
    where a steep fall ends or a steep climb begins."""
    n = s.size
    k = np.arange(w + 1, dtype=np.float64)
    kernel = (k - k.mean()) / np.sum((k - k.mean()) ** 2)
    padded = np.pad(s, w, mode="wrap" if loop else "edge")
    slope = np.lib.stride_tricks.sliding_window_view(padded, w + 1) @ kernel  # slope[i]: s[i - w .. i]
    return slope[w:w + n] - slope[:n]


def _knee(bend: np.ndarray, lo: int, hi: int) -> float | None:
    """Fractional frame in [lo, hi] where `bend` peaks (vertex of the parabola through the peak
    and its neighbours); None when nothing there bends the right way."""
    if hi < lo:
        return None
    i = lo + int(np.argmax(bend[lo:hi + 1]))
    if bend[i] <= 0.0:
        return None
    if lo < i < hi:
        y0, y1, y2 = bend[i - 1], bend[i], bend[i + 1]
        curvature = y0 - 2.0 * y1 + y2
        if curvature < 0.0:
            return i + 0.5 * float(y0 - y2) / float(curvature)
    return float(i)


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


def _foot_points(clip: Clip, feet: FootSpec | None) -> dict[str, tuple[list[int], list[int]]]:
    """{name: (joint indices, End Site indices)}: the points tracked per foot."""
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
        d = p[ahead] - p[behind]
        steps = ahead - behind
    return (np.linalg.norm(d, axis=-1) * (fps / steps)[:, None]).min(axis=1)


def _median(x: np.ndarray, window: int, loop: bool) -> np.ndarray:
    if window == 1:
        return x
    padded = np.pad(x, window // 2, mode="wrap" if loop else "edge")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, window), axis=-1)


def _running_min(x: np.ndarray, radius: int, loop: bool) -> np.ndarray:
    padded = np.pad(x, radius, mode="wrap" if loop else "edge")
    return np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).min(axis=-1)


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, stops) of the runs of True, stops excluded."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _positive(x: float, what: str) -> float:
    x = float(x)
    if not (x > 0.0 and math.isfinite(x)):
        raise ValueError(f"{what} must be positive and finite, not {x}")
    return x


def _run_start(mask: np.ndarray, i: int) -> int:
    """First index of the run of True that holds index i (i when mask[i] is False)."""
    off = np.flatnonzero(~mask[:i + 1])
    if not off.size:
        return 0
    return i if off[-1] == i else int(off[-1]) + 1
