"""Synchronized blends: clean loop cycles with foot-plant markers, and blends of two cycles (a walk
and a run) played at one phase.

A walk and a run have different cycle lengths; blended on one clock their feet go out of phase.
Engines sync them: both clips play at the same phase, the blended cycle length is interpolated and
each clip's playback rate is scaled to it. With walk cycle T1, run cycle T2 and weight w (0: the
first clip, 1: the second), `linear` mode gives L = (T2 - T1) w + T1, walk rate T1 / L, run rate
T2 / L. Markers (Unreal's sync markers; here FootDown_L / FootDown_R) refine this: time is warped
piecewise between matching markers, so clips whose plants fall at different fractions of their
cycles still plant together.

Conventions:

- A **loop** is a Clip with `loop=True` holding N frames of one closed cycle: frame N (one past
  the last) has frame 0's pose, so the period is N / fps seconds. Its **markers** are its `events`,
  times in [0, N / fps).
- Root motion loops as a trajectory that moves on (root.decompose): frame N is frame 0 moved by
  the cycle's displacement and turn. The step from frame N - 1 to frame N is not stored: in the
  heading frame it is the mean of the steps N-2 -> N-1 and 0 -> 1, so the velocity runs on
  smoothly across the seam (`cycle_travel` gives the sum).
- **Phase** is a position among the markers: segment index + fraction (segment j runs from marker j
  to marker j + 1; the index counts on over cycles). A clip at phase j + f is at its own time
  marker_j + f * segment_j. The blended segment duration S_j(w) depends on the mode; the phase
  advances each output frame by dt / S_j(w(t)), so it is monotonic under any weight curve.
- Times are seconds at every boundary; frames are indices.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import blend, contacts, footlock, knees, quat, resample, root
from .body import FeetSpec, with_feet
from .clip import Clip

Array = npt.NDArray[np.float64]

MODES = ("linear", "harmonic", "leader")

# Phase arithmetic leaves ~1e-13 frames of rounding, and a blend at weight 0 must return the
# source's own frames: samples snap to whole frames as resample.snap_frames does, within its SNAP_FRAMES.
# Output frames blended per pass: a block's temporaries stay in cache (10,000 frames x 31 joints
# in one pass run 1.7x slower, mostly in page faults on fresh memory).
_BLOCK = 512


# -- loop cycles ---------------------------------------------------------------------------------


def loop_cycle(clip: Clip, frames: tuple[int, int] | None = None, *, straighten: bool | None = None,
               feet: FeetSpec | None = None) -> Clip:
    """One clean cycle of `clip` as a loop (`loop=True`, see the module notes), markers in `events`.

    frames: (a, b), b the frame with the same phase as a; frames a .. b-1 make the cycle (N = b - a
        frames, period N / fps). None: the take's steadiest whole cycle, from a touchdown to the
        next of the same foot (`whole_cycles`): a is the frame nearest that touchdown, and b, of
        the frames that make the cycle last within max(1 frame, 3 %) of the take's median
        same-foot touchdown interval, the one whose pose best matches a's (RMS local joint angle,
        root and fingers left out); steadiest is the smallest sum of that mismatch (radians) and
        the cycle's relative distance from the take's median cycle speed (so a start, a stop or
        a missed step is not taken for the cycle). A clip that is already a loop (`clip.loop`)
        is taken whole (a last frame that repeats the first pose, `seam_repeats`, is its seam,
        counted once). Touchdowns are the clip's own FootDown_* events if it has any, else
        `contacts.footsteps(clip)`.
    straighten: how much the loop turns per cycle. None (default): as much as its take does on
        average (`take_turn_rate` times the cycle's length: the travel direction over the take's
        first whole cycle against its last), so a straight take makes a straight loop however
        its pelvis happens to face at the two ends of the cycle, and a turning one keeps turning;
        a take with fewer than two whole cycles, or a clip that is already a loop, keeps what it
        has (a loop: its own turn). True: not at all (the loop walks straight); False: the cut
        cycle's own turn, as its ends face. The turn is spread evenly over the cycle's frames.
    feet: {'L': ankle, 'R': ankle} by name or index, when the body map's feet are not the ones
        (`body.with_feet`); None: the body map's.

    The seam is removed: the offset from frame a to frame b of every joint's local rotation and
    translation, and of the root's residual (height, sway and hip rotation off the heading,
    root.decompose), is spread linearly over the cycle, so frame N would equal frame 0. The floor
    trajectory keeps its per-cycle displacement (`cycle_travel`).

    Markers are the clip's events and touchdowns from half a frame before a to half a frame before
    b (or before the cycle's next touchdown of its foot, if earlier), in seconds from frame a; one
    within half a frame of a is put on it (0 s), so a cycle found from footsteps starts exactly on
    its touchdown marker (FootDown_L or FootDown_R). ValueError when no whole cycle is found (the
    message lists the touchdowns).
    """
    clip = with_feet(clip, feet)
    marks = dict(clip.events)
    if not any(k.startswith("FootDown_") for k in marks):
        marks.update(contacts.footsteps(clip))
    fps = clip.fps
    closed = frames is None and clip.loop
    if closed:
        # A pre-cut loop's repeated last frame is its seam (frame N): one cycle of N frames.
        first, n = 0, clip.loop_frames
        until = float(n)
    else:
        first, stop, until = _cycle_frames(clip, frames, marks)
        n = stop - first
    if n < 2:
        raise ValueError(f"a cycle needs at least 2 frames, not {n}")
    spread = not closed or n < clip.n_frames
    events = {}
    for name, times in marks.items():
        x = np.asarray(times, dtype=np.float64) * fps - first
        if closed:
            x = np.mod(x, n)
        else:
            x = x[(x >= -0.5) & (x < until - first - 0.5)]
            x = np.where(np.abs(x) < 0.5, 0.0, x)
        events[name] = np.sort(x) / fps

    stop_frame = first + n + 1 if spread else first + n
    src = clip.replace(rotations=clip.rotations[first:stop_frame], positions=clip.positions[first:stop_frame],
                       events={}, loop=False, motion_start=0, root=clip.root)
    traj, res = root.decompose(src)
    rot, pos = src.rotations[:n], src.positions[:n]
    res_rot, res_pos = res.rotation[:n], res.position[:n]
    if spread:
        # Frame n should be frame 0 again: take 0, 1/n, ... of the offset off frames 0, 1, ...
        f = np.arange(n) / n
        rot = quat.mul(rot, _fraction_of(quat.inv_mul(rot[0], src.rotations[n]), -f[:, None, None]))
        pos = pos - f[:, None, None] * (src.positions[n] - pos[0])
        res_rot = quat.mul(res_rot, _fraction_of(quat.inv_mul(res_rot[0], res.rotation[n]), -f[:, None]))
        res_pos = res_pos - f[:, None] * (res.position[n] - res_pos[0])
    name = clip.name if closed else f"{clip.name}.cycle" if clip.name else "cycle"
    body = src.replace(rotations=rot, positions=pos, events=events, loop=True, name=name)
    loop = root.recompose(body, root.Trajectory(traj.position[:n], traj.heading[:n]),
                          root.Residual(res_pos, res_rot))
    if straighten is False:
        return loop
    if straighten is None:
        if closed:
            # Taken whole: a loop turns as it does (a pre-cut one across its repeated seam).
            target = float(traj.heading[n] - traj.heading[0]) if spread else None
        else:
            target = take_turn_rate(clip, marks) * n / fps
    else:
        target = 0.0
    if target is None:
        return loop
    # From the loop's own trajectory: the spread residual may hold a trace of yaw.
    traj, res = root.decompose(loop)
    step, turn = _steps(traj.position, traj.heading, clip.up)
    turn = turn - (turn.sum() - target) / n
    heading = traj.heading[0] + np.concatenate([[0.0], np.cumsum(turn[:-1])])
    position = _integrate(traj.position[0], heading, step[:-1], clip.up)
    return root.recompose(loop, root.Trajectory(position, heading), res)


class Cycle(NamedTuple):
    """A whole cycle of a take: a touchdown of `foot` (the marker's name) to its next one, in
    frames (sub-frame, as the touchdowns are found)."""

    foot: str
    start: float
    stop: float


def whole_cycles(clip: Clip, marks: dict[str, np.ndarray] | None = None) -> list[Cycle]:
    """The take's whole cycles, from each touchdown to the next of the same foot, that last within
    a quarter of the median such interval (`touchdown_interval`: a step the detector missed makes
    a double one), sorted by start. marks: FootDown_* times in seconds (None: the clip's own
    events, else `contacts.footsteps`)."""
    spans, median = _same_foot(clip, marks)
    found = [Cycle(name, float(x), float(y)) for name, a, b in spans for x, y in zip(a, b, strict=True)
             if abs((y - x) - median) <= _REGULAR * median]
    return sorted(found, key=lambda c: c.start)


def touchdown_interval(clip: Clip, marks: dict[str, np.ndarray] | None = None) -> float:
    """The median interval (frames) from a touchdown to the next of the same foot, over both feet
    (nan without two touchdowns of one foot): how long the take's cycle lasts."""
    return _same_foot(clip, marks)[1]


def _same_foot(clip: Clip,
               marks: dict[str, np.ndarray] | None) -> tuple[list[tuple[str, Array, Array]], float]:
    """([(marker name, touchdown frames, next touchdown frames)], median interval in frames)."""
    if marks is None:
        own = {k: v for k, v in clip.events.items() if k.startswith("FootDown_")}
        marks = own or contacts.footsteps(clip)
    spans = [(name, t[:-1], t[1:]) for name, times in sorted(marks.items()) if name.startswith("FootDown_")
             for t in [np.sort(np.asarray(times, dtype=np.float64)) * clip.fps]]
    lengths = np.concatenate([b - a for _, a, b in spans] or [np.zeros(0)])
    return spans, float(np.median(lengths)) if lengths.size else math.nan


# A whole cycle lasts within this fraction of the median same-foot touchdown interval; a loop cut
# from a take within max(1 frame, this) of it.
_REGULAR = 0.25
_LENGTH_TOLERANCE = 0.03


def take_turn_rate(clip: Clip, marks: dict[str, np.ndarray] | None = None) -> float:
    """How fast the take turns on average (radians per second, counter-clockwise seen from above):
    its direction of travel (the root's chord over the floor) over its last whole cycle against its
    first (`whole_cycles`), over the time between their middles. A take that barely travels over
    either cycle (under 0.2 m/s), or travels at another angle to its facing at the end than at the
    start (a walk forward, then sideways), turns as it faces (mean root heading over each cycle).
    0.0 for a take with fewer than two whole cycles, and for one whose ends differ by less than
    5 degrees: a performer's wander in a capture volume and the stride's sway, which a loop
    repeated over a long bake would make a circle of (CMU 02_01 and 02_03: 1.9 and 0.7 degrees
    over a second; a walk that means to turn turns tens of degrees a cycle)."""
    cycles = whole_cycles(clip, marks)
    if len(cycles) < 2:
        return 0.0
    traj = root.trajectory(clip)
    ends = [cycles[0], cycles[-1]]
    travel, facing = [], []
    fwd, side = root.floor_axes(clip.up)
    for c in ends:
        a, b = round(c.start), min(round(c.stop), clip.n_frames - 1)
        chord = traj.position[b] - traj.position[a]
        slow = np.linalg.norm(chord) * clip.meters_per_unit < _STILL_MPS * (b - a) / clip.fps
        travel.append(math.nan if slow else math.atan2(float(chord @ side), float(chord @ fwd)))
        facing.append(float(np.mean(traj.heading[a:b + 1])))
    by_travel, by_facing = _wrap(travel[1] - travel[0]), facing[1] - facing[0]
    turn = by_facing if math.isnan(by_travel) or abs(_wrap(by_travel - by_facing)) > _SAME_GAIT else by_travel
    span = (ends[1].start + ends[1].stop - ends[0].start - ends[0].stop) / 2.0 / clip.fps
    if abs(turn) < _STRAIGHT or span <= 0.0:
        return 0.0
    return turn / span


# A root slower than this (m/s) over a cycle does not travel; travel and facing turning by angles
# this far apart (radians) are different gaits: the facing says how the take turns. A take whose
# first and last whole cycles head less than _STRAIGHT apart walks straight.
_STILL_MPS = 0.2
_SAME_GAIT = math.radians(45.0)
_STRAIGHT = math.radians(5.0)


def _wrap(x: float) -> float:
    return (x + math.pi) % (2.0 * math.pi) - math.pi


def _cycle_frames(clip: Clip, frames: tuple[int, int] | None,
                  marks: dict[str, np.ndarray]) -> tuple[int, int, float]:
    """(a, b, end of the marker window in frames) of the cycle: given, or the steadiest whole cycle
    with b matched to a's pose."""
    if frames is not None:
        a, b = (int(x) for x in frames)
        if not 0 <= a < b < clip.n_frames:
            raise ValueError(f"frames {frames} must be 0 <= a < b < {clip.n_frames} (b: the frame with "
                             "a's phase, the first frame after the cycle)")
        return a, b, float(b)
    start = clip.motion_start
    cycles = [c for c in whole_cycles(clip, marks) if math.floor(c.start + 0.5) >= start]
    if not cycles:
        found = ", ".join(f"{k} at frames {np.round(np.asarray(v) * clip.fps, 1).tolist()}"
                          for k, v in sorted(marks.items()) if k.startswith("FootDown_"))
        raise ValueError(f"{clip.name or 'the clip'} has no whole cycle, from a touchdown to the next of "
                         f"the same foot ({found or 'no touchdowns'}); pass frames=(a, b)")
    median = touchdown_interval(clip, marks)
    reach = max(1.0, _LENGTH_TOLERANCE * median)
    lengths = np.arange(max(2, math.ceil(median - reach - 1e-9)), math.floor(median + reach + 1e-9) + 1)
    joints = np.flatnonzero(blend.mask_preset(clip, "FINGERS") == 0.0)
    joints = joints[joints != clip.root]
    traj = root.trajectory(clip)
    options = []
    for c in cycles:
        a = math.floor(c.start + 0.5)
        ends = a + lengths[a + lengths <= clip.n_frames - 1]
        if not ends.size:
            continue
        angle = quat.angle(clip.rotations[a, joints], clip.rotations[ends][:, joints])
        mismatch = np.sqrt(np.mean(angle ** 2, axis=-1))
        k = int(np.argmin(mismatch))
        b = int(ends[k])
        speed = float(np.linalg.norm(traj.position[b] - traj.position[a])) / (b - a)
        options.append((a, b, float(mismatch[k]), speed, c.stop))
    if not options:
        raise ValueError(f"{clip.name or 'the clip'} ends before its first whole cycle closes "
                         f"(a cycle lasts about {median:.1f} frames); pass frames=(a, b)")
    typical = float(np.median([o[3] for o in options])) or 1.0
    a, b, _, _, next_down = min(options, key=lambda o: o[2] + abs(o[3] / typical - 1.0))
    return a, b, float(min(b, math.floor(next_down + 0.5)))


def _fraction_of(q: Array, f: Array) -> Array:
    """q to the power f (shortest path): the rotation by f times q's angle about its axis."""
    return quat.from_scaled_angle_axis(f * quat.to_scaled_angle_axis(quat.hemi(q)))


def _steps(position: Array, heading: Array, up: Array) -> tuple[Array, Array]:
    """A loop's floor steps, frame f -> f + 1, in the heading frame of f ([N, 3], file units) and its
    turns ([N], radians); the step out of the last frame is the mean of its neighbours."""
    n = len(heading)
    step, turn = np.zeros((n, 3)), np.zeros(n)
    if n >= 2:
        step[:-1] = quat.mul_vec(quat.inv(root.yaw_quat(heading[:-1], up)), np.diff(position, axis=0))
        turn[:-1] = np.diff(heading)
        step[-1] = 0.5 * (step[-2] + step[0])
        turn[-1] = 0.5 * (turn[-2] + turn[0])
    return step, turn


def _integrate(start: Array, heading: Array, step: Array, up: Array) -> Array:
    """Floor positions [len(step) + 1, 3] from `start`, each step turned by the heading before it."""
    moves = quat.mul_vec(root.yaw_quat(heading[:len(step)], up), step)
    return np.asarray(start) + np.concatenate([np.zeros((1, 3)), np.cumsum(moves, axis=0)])


def cycle_travel(clip: Clip) -> tuple[Array, float]:
    """(displacement [3], turn) of a loop over one cycle: file units, in the heading frame of its
    frame 0 (heading 0 = the rest pose's forward), and radians. The step across the seam follows
    the loop convention (module notes)."""
    _check_loop(clip, "clip")
    traj = root.trajectory(clip)
    step, turn = _steps(traj.position, traj.heading, clip.up)
    heading = traj.heading[0] + np.concatenate([[0.0], np.cumsum(turn[:-1])])
    end = _integrate(traj.position[0], heading, step, clip.up)[-1]
    unturn = quat.inv(root.yaw_quat(traj.heading[0], clip.up))
    return quat.mul_vec(unturn, end - traj.position[0]), float(turn.sum())


def _check_loop(clip: Clip, what: str) -> None:
    if not clip.loop:
        raise ValueError(f"{what} ({clip.name or 'unnamed'}) is not a loop: make one with loop_cycle()")
    if clip.n_frames < 2:
        raise ValueError(f"{what} ({clip.name or 'unnamed'}) has {clip.n_frames} frame(s); a cycle needs 2")


# -- markers and segments ------------------------------------------------------------------------


class _Segments(NamedTuple):
    """Matched markers: names [K], each clip's marker times [K] (seconds, increasing, the first in
    [0, period)) and segment durations [K] (marker j to j + 1, the last wrapping)."""

    names: list[str]
    times_a: Array
    durations_a: Array
    times_b: Array
    durations_b: Array


def _markers(clip: Clip, names: set[str]) -> tuple[Array, list[str]]:
    period = clip.n_frames / clip.fps
    t = [np.mod(np.asarray(clip.events[k], dtype=np.float64), period) for k in sorted(names)]
    n = [k for k in sorted(names) for _ in clip.events[k]]
    times = np.concatenate(t) if t else np.zeros(0)
    order = np.argsort(times, kind="stable")
    return times[order], [n[i] for i in order]


def _segments(a: Clip, b: Clip) -> _Segments:
    """Markers common to a and b (by name) matched in cycle order; none: one segment, the cycle."""
    period_a, period_b = a.n_frames / a.fps, b.n_frames / b.fps
    common = {k for k in set(a.events) & set(b.events) if len(a.events[k]) and len(b.events[k])}
    if not common:
        return _Segments([""], np.zeros(1), np.array([period_a]), np.zeros(1), np.array([period_b]))
    ta, na = _markers(a, common)
    tb, nb = _markers(b, common)
    for clip, t in ((a, ta), (b, tb)):
        if np.any(np.diff(np.append(t, t[0] + clip.n_frames / clip.fps)) <= 0.0):
            raise ValueError(f"{clip.name or 'a clip'} has two markers at one time ({t.tolist()} s)")
    k = len(na)
    shifts = [r for r in range(len(nb)) if len(nb) == k and all(nb[(j + r) % k] == na[j] for j in range(k))]
    if not shifts:
        raise ValueError(f"markers do not match in cycle order: {a.name or 'a'} has {na}, "
                         f"{b.name or 'b'} has {nb}")
    # Several rotations match a sequence that repeats (L R L R): take the closest in normalized time.
    r = min(shifts, key=lambda s: abs((tb[s % k] / period_b - ta[0] / period_a + 0.5) % 1.0 - 0.5))
    idx = np.arange(k) + r
    times_b = tb[idx % k] + period_b * (idx // k)
    return _Segments(na, ta, np.diff(np.append(ta, ta[0] + period_a)),
                     times_b, np.diff(np.append(times_b, times_b[0] + period_b)))


def _durations(seg: _Segments, w: Array, mode: str) -> Array:
    """[..., K] blended segment durations at weights w [...]."""
    sa, sb = seg.durations_a, seg.durations_b
    w = np.asarray(w, dtype=np.float64)[..., None]
    if mode == "linear":
        return (1.0 - w) * sa + w * sb
    if mode == "harmonic":
        with np.errstate(divide="ignore"):
            s = 1.0 / ((1.0 - w) / sa + w / sb)
        return np.where(w == 0.0, sa, np.where(w == 1.0, sb, s))
    if mode == "leader":
        # Ties go to the first clip.
        return np.where(w > 0.5, sb, sa)
    raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")


# -- the phase -----------------------------------------------------------------------------------


def _weights(weight: Any, times: Array) -> Array:
    """[n] weights at the output times from a number, a callable or a (times, weights) pair."""
    if callable(weight):
        w = None
        try:
            w = np.asarray(weight(times), dtype=np.float64)
        except (TypeError, ValueError):
            pass
        if w is None or w.ndim > 1 or (w.ndim == 1 and w.shape != times.shape):
            # Not vectorized: once per frame (user code; the blend itself never loops over frames).
            w = np.array([float(weight(float(t))) for t in times])
        w = np.broadcast_to(w, times.shape).astype(np.float64)
    elif isinstance(weight, tuple):
        if len(weight) != 2:
            raise TypeError(f"a weight curve is a (times, weights) pair, not a {len(weight)}-tuple")
        kt, kw = (np.asarray(x, dtype=np.float64).reshape(-1) for x in weight)
        if kt.size == 0 or kt.shape != kw.shape:
            raise ValueError(f"weight curve: {kt.size} times and {kw.size} weights; give one weight per time")
        if np.any(np.diff(kt) <= 0.0) or not np.all(np.isfinite(kt)):
            raise ValueError("weight curve times must be finite and increasing")
        w = np.interp(times, kt, kw)
    elif np.ndim(weight) != 0 or isinstance(weight, (str, bytes)):
        raise TypeError("weight is a number, a callable f(t_seconds) -> w or a (times, weights) pair; "
                        "a bare array is refused (at which times would its values hold?)")
    else:
        w = np.full(times.shape, float(weight))
    bad = ~((w >= 0.0) & (w <= 1.0))
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(f"weights must be in [0, 1]: {w[i]} at {times[i]:.4f} s")
    return w


def _phase(u0: float, S: Array, dt: float) -> tuple[Array, list[tuple[float, int]]]:
    """Phase [n] at the output frames from u0, advancing by dt / S[k, segment] per frame k, and the
    marker crossings (time, unwrapped marker index). Each step that crosses a marker finishes
    its time in the next segment at that segment's pace. Loops over segments, not frames."""
    n, K = S.shape
    u = np.empty(n)
    u[0] = u0
    crossings: list[tuple[float, int]] = [(0.0, int(u0))] if u0 == math.floor(u0) else []
    # No segment lasts longer than this many frames (the window searched for its end).
    span = math.ceil(float(S.max()) / dt) + 2
    k, uk = 0, u0
    while k < n - 1:
        j = math.floor(uk)
        seg = j % K
        m = min(n - 1 - k, span)
        inc = dt / S[k:k + m, seg]
        c = np.cumsum(inc)
        r = (j + 1) - uk
        hit = int(np.searchsorted(c, r))
        if hit == m:
            u[k + 1:k + m + 1] = uk + c
            k += m
            uk = float(u[k])
            continue
        u[k + 1:k + hit + 1] = uk + c[:hit]
        i = k + hit
        before = float(c[hit - 1]) if hit else 0.0
        used = min(max((r - before) / float(inc[hit]), 0.0), 1.0) * dt
        t, left, uj = i * dt + used, dt - used, j + 1
        crossings.append((t, uj))
        while True:
            need = float(S[i, uj % K])
            if need > left:
                u[i + 1] = uj + left / need
                break
            left -= need
            t += need
            uj += 1
            crossings.append((t, uj))
        k, uk = i + 1, float(u[i + 1])
    # A marker on the last frame may have been left a rounding short of it.
    if n > 1 and math.floor(u[-1]) + 1 - u[-1] < resample.SNAP_FRAMES:
        crossings.append(((n - 1) * dt, math.floor(u[-1]) + 1))
    return u, crossings


def _local_times(u: Array, marker_times: Array, durations: Array, period: float) -> Array:
    """Each phase's time in a clip (seconds, unwrapped over cycles)."""
    K = len(durations)
    j = np.floor(u)
    seg = (j % K).astype(np.int64)
    return marker_times[seg] + (u - j) * durations[seg] + (j // K) * period


class _Sync(NamedTuple):
    fps: float
    times: Array            # [n] output times
    weights: Array          # [n]
    times_a: Array          # [n] a's time (seconds, unwrapped)
    times_b: Array
    events: dict[str, Array]


def _sync(a: Clip, b: Clip, weight: Any, duration: float, mode: str, fps: float | None) -> _Sync:
    _check_loop(a, "a")
    _check_loop(b, "b")
    a.check_compatible(b)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    rate = a.fps if fps is None else float(fps)
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"fps must be positive and finite, not {fps}")
    duration = float(duration)
    if not (duration >= 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be >= 0 seconds, not {duration}")
    n = math.floor(duration * rate + 1e-9) + 1
    times = np.arange(n) / rate
    w = _weights(weight, times)
    seg = _segments(a, b)
    K = len(seg.names)
    period_a, period_b = a.n_frames / a.fps, b.n_frames / b.fps
    # The output starts at a's time 0: on its first marker, or inside the segment that wraps.
    if seg.times_a[0] == 0.0:
        u0 = 0.0
    else:
        u0 = -1.0 + (period_a - seg.times_a[-1]) / seg.durations_a[-1]
    u, crossings = _phase(u0, _durations(seg, w, mode), 1.0 / rate)
    ta = _local_times(u, seg.times_a, seg.durations_a, period_a)
    tb = _local_times(u, seg.times_b, seg.durations_b, period_b)
    events: dict[str, list[float]] = {name: [] for name in seg.names if name}
    for t, j in crossings:
        if seg.names[j % K] and t <= times[-1] + 1e-9:
            events[seg.names[j % K]].append(t)
    return _Sync(rate, times, w, ta, tb, {k: np.asarray(v) for k, v in events.items()})


def sync_times(a: Clip, b: Clip, weight: Any, duration: float, *, mode: str = "linear",
               fps: float | None = None) -> tuple[Array, Array]:
    """(a's times [n], b's times [n]): where `sync_blend` with the same arguments samples each loop
    at its output frames, in seconds, unwrapped over cycles (take them modulo the period for the
    time within the cycle). Use it to lay the sources' contacts or curves out on a blend."""
    s = _sync(a, b, weight, duration, mode, fps)
    return s.times_a, s.times_b


# -- sampling and blending poses -----------------------------------------------------------------


def _frame_positions(t: Array, fps: float, n: int) -> tuple[np.ndarray, np.ndarray, Array]:
    """(frame [m] int, next frame, fraction [m]) of times t in a loop of n frames."""
    x = resample.snap_frames(np.asarray(t) * fps)
    base = np.floor(x)
    frac = x - base
    i = np.mod(base, n).astype(np.int64)
    return i, np.where(i + 1 == n, 0, i + 1), frac


def _poses(a: tuple[Array, Array], b: tuple[Array, Array], fps: tuple[float, float], s: _Sync,
           m: Array) -> tuple[Array, Array]:
    """Loops a and b (local rotations [N, J, 4], translations [N, J, 3]) sampled at their warped
    times and blended: rotations [n, J, 4] and translations [n, J, 3]."""
    (rot_a, pos_a), (rot_b, pos_b) = a, b
    n, J = len(s.times), rot_a.shape[1]
    t = s.weights[:, None] * m
    rot, pos = np.empty((n, J, 4)), np.empty((n, J, 3))
    ia, na, fa = _frame_positions(s.times_a, fps[0], len(rot_a))
    ib, nb, fb = _frame_positions(s.times_b, fps[1], len(rot_b))
    # Joints that hold one rotation throughout both loops need no sampling (CMU: 6 of 31).
    same = (np.all(rot_a == rot_a[:1], axis=(0, 2)) & np.all(rot_b == rot_b[:1], axis=(0, 2))
            & np.all(rot_a[0] == rot_b[0], axis=-1))
    moving = np.flatnonzero(~same)
    frames_a, frames_b = quat.slerp_table(rot_a[:, moving]), quat.slerp_table(rot_b[:, moving])
    tm = t[:, moving]
    for k in range(0, n, _BLOCK):
        f = slice(k, k + _BLOCK)
        block = rot[f]
        block[:] = rot_a[0]
        q = quat.slerp_planes(quat.sample_table(frames_a, ia[f], fa[f]),
                              quat.sample_table(frames_b, ib[f], fb[f]), tm[f])
        block[:, moving] = np.moveaxis(q, 0, -1)
    # Translations: most joints keep their offsets; only those that move are sampled.
    same = (np.all(pos_a == pos_a[:1], axis=(0, 2)) & np.all(pos_b == pos_b[:1], axis=(0, 2))
            & np.all(pos_a[0] == pos_b[0], axis=-1))
    pos[:] = pos_a[0]
    moving = np.flatnonzero(~same)
    if moving.size:
        pos_a, pos_b = pos_a[:, moving], pos_b[:, moving]
        pa = blend.lerp(pos_a[ia], pos_a[na], fa[:, None])
        pb = blend.lerp(pos_b[ib], pos_b[nb], fb[:, None])
        pos[:, moving] = blend.lerp(pa, pb, t[:, moving])
    return rot, pos


# -- root motion ---------------------------------------------------------------------------------


class _RootLoop(NamedTuple):
    trajectory: root.Trajectory
    residual: root.Residual
    step: Array     # [N, 3] floor step out of each frame, in its heading frame (file units)
    turn: Array     # [N] radians


def _root_loop(clip: Clip, up: Array, forward: Array) -> _RootLoop:
    """The loop's root motion in its travel frame: the floor path under a heading that turns evenly
    by the loop's cycle turn (`cycle_travel`, read with the loop's own facing), at the pelvis's
    mean yaw; the pelvis's swing within a stride (14-24 degrees on Bandai takes) is in the
    residual. So steps and turns blend at one phase without the swings' difference at the
    blend's start leaking into the path's direction as the weight moves (up to 7 degrees over a
    walk -> run ramp). The steps are the loop convention's (module notes), re-expressed in that
    frame. Headings are measured with another clip's up and facing (`up`, `forward`: a's), so
    that residuals blend alike."""
    turn_total = cycle_travel(clip)[1]
    if not (np.array_equal(clip.up, up) and np.array_equal(clip.forward, forward)):
        clip = clip.replace(up=up, forward=forward)
    rot, pos = root.root_world(clip)
    raw = root.trajectory_of(rot, pos, up, forward)
    pelvis_step, _ = _steps(raw.position, raw.heading, up)
    n = len(raw.heading)
    even = turn_total * np.arange(n) / n
    traj = root.Trajectory(raw.position, even + float(np.mean(raw.heading - even)))
    step = quat.mul_vec(root.yaw_quat(raw.heading - traj.heading, up), pelvis_step)
    return _RootLoop(traj, root.residual_of(rot, pos, traj, up), step, np.full(n, turn_total / n))


def _travel(loop: _RootLoop, t: Array, fps: float) -> tuple[Array, Array]:
    """Each output step's floor displacement [n - 1, 3] and turn [n - 1] in the loop: the integral,
    over the loop's own time step, of its velocity (constant from each frame to the next, in that
    frame's heading frame), i.e. velocity x playback rate, exact at any rate and sub-frame time."""
    steps = np.concatenate([loop.step, loop.turn[:, None]], axis=1)
    n = len(steps)
    total = np.concatenate([np.zeros((1, 4)), np.cumsum(steps, axis=0)])
    x = resample.snap_frames(np.asarray(t) * fps)
    cycles = np.floor(x / n)
    r = x - cycles * n
    i = np.minimum(np.floor(r), n - 1).astype(np.int64)
    c = cycles[:, None] * total[-1] + total[i] + (r - i)[:, None] * steps[i]
    d = np.diff(c, axis=0)
    return d[:, :3], d[:, 3]


def _blended_trajectory(ra: _RootLoop, rb: _RootLoop, s: _Sync, w: Array, fps: tuple[float, float],
                        up: Array, still: float) -> root.Trajectory:
    """The blend's floor trajectory: each loop's steps and turns over its warped time steps,
    blended by `w` [n] (each step by its first frame's) and integrated from a's trajectory at
    its time 0.

    Each loop travels at its own angle to its heading (the pelvis's yaw, which swings within a
    stride and differs between gaits at one phase), so blended steps travel at an angle that moves
    with the weight: a walk -> run ramp of Bandai takes turned its path by up to 8 degrees.
    Where the weight moves, the heading turns the other way by as much (`_travel_angle` of each
    loop from where the blend starts in it, the blend's angle from their velocities added by
    weight), so the path keeps its direction and the body turns from one gait's facing to the
    other's. Not where a loop barely travels (`still`, file units per second) or the two travel
    more than 45 degrees apart from their facings (a forward walk and a backward one)."""
    step_a, turn_a = _travel(ra, s.times_a, fps[0])
    step_b, turn_b = _travel(rb, s.times_b, fps[1])
    step = blend.lerp(step_a, step_b, w[:-1])
    turn = blend.lerp(turn_a[:, None], turn_b[:, None], w[:-1])[:, 0]
    heading = ra.trajectory.heading[0] + np.concatenate([[0.0], np.cumsum(turn)])
    angle_a, speed_a = _travel_angle(ra, float(s.times_a[0]), fps[0], up)
    angle_b, speed_b = _travel_angle(rb, float(s.times_b[0]), fps[1], up)
    if min(speed_a, speed_b) >= still and abs(_wrap(angle_a - angle_b)) <= _SAME_GAIT and np.ptp(w) > 0.0:
        velocity = (1.0 - w) * speed_a * np.exp(1j * angle_a) + w * speed_b * np.exp(1j * angle_b)
        angle = np.unwrap(np.angle(velocity))
        heading = heading + (angle[0] - angle)
    return root.Trajectory(_integrate(ra.trajectory.position[0], heading, step, up), heading)


def _travel_angle(loop: _RootLoop, t: float, fps: float, up: Array) -> tuple[float, float]:
    """(angle, speed): the direction of the loop's travel over one cycle from time t (seconds),
    radians from its heading halfway through that cycle (a turning loop's chord points there),
    and its speed (file units per second)."""
    n = len(loop.turn)
    heading = loop.trajectory.heading[0] + np.concatenate([[0.0], np.cumsum(np.tile(loop.turn, 2))])
    pos = _integrate(loop.trajectory.position[0], heading, np.tile(loop.step, (2, 1)), up)
    x = float(resample.snap_frames(np.array([t * fps]))[0]) % n
    i = min(math.floor(x), n - 1)
    f = x - i
    chord = blend.lerp(pos[i + n], pos[i + n + 1], f) - blend.lerp(pos[i], pos[i + 1], f)
    at = float(blend.lerp(heading[i:i + 1], heading[i + 1:i + 2], f)[0]) + 0.5 * float(np.sum(loop.turn))
    fwd, side = root.floor_axes(up)
    return math.atan2(float(chord @ side), float(chord @ fwd)) - at, float(np.linalg.norm(chord)) * fps / n


def _with_residual(clip: Clip, loop: _RootLoop) -> tuple[Array, Array]:
    """The loop's local rotations and translations with the root's replaced by its residual, so
    the residual is sampled and blended like any joint."""
    rot, pos = clip.rotations.copy(), clip.positions.copy()
    rot[:, clip.root], pos[:, clip.root] = loop.residual.rotation, loop.residual.position
    return rot, pos


def sync_blend(a: Clip, b: Clip, weight: Any, duration: float, *, mode: str = "linear",
               fps: float | None = None, mask: npt.ArrayLike | None = None,
               feet: FeetSpec | None = None, lock_feet: bool = False) -> Clip:
    """Loops a and b blended at one phase for `duration` seconds (frames 0 .. duration * fps).

    weight: 0 plays a, 1 plays b; a number, a callable f(t_seconds) -> w (called with the array of
        output times if it accepts one) or a (times, weights) pair interpolated linearly and held
        past its ends. A bare array is refused.
    mode: how segment durations blend: 'linear' (S = (1 - w) s_a + w s_b), 'harmonic'
        (1 / S = (1 - w) / s_a + w / s_b), 'leader' (the heavier clip's, a's at w = 0.5: the pace
        jumps when the lead changes, as in engines).
    fps: the output rate (default a's). mask: `[J]` joint weights multiplied into w, as in
        `blend.blend_poses`; the root's entry weights its residual and trajectory.
    feet: {'L': ankle, 'R': ankle} when the body map's are not the ones (`body.with_feet`): up and
        facing, which root travel is measured by, come from the map.

    The output starts at a's time 0 (for `loop_cycle` loops, on the FootDown_L marker). Markers
    common to both loops (by name, in the same cycle order) are matched; without any, both play at
    one normalized time. Each loop is sampled at its warped time (`sync_times`) by slerp/lerp
    between its frames, wrapping at the seam, and the poses blend as `blend.blend_poses` does.
    Root motion: each loop's floor step over its own warped time step (velocity x playback rate)
    in its travel frame (a heading that turns evenly by the loop's cycle turn, at the pelvis's
    mean yaw), and its turn, blend by weight and integrate from a's trajectory at its time 0;
    the residual (height, sway, hip rotation and the pelvis's swing off that heading) blends like
    a joint. Where the weight moves, the heading turns against the change in the blended
    steps' angle to it, so a ramp between loops that travel straight travels straight, its body
    turning from one gait's facing to the other's (`_blended_trajectory`). So travel speed is
    blended stride over blended period (`travel_speed`), not linear in w. `events` hold the
    markers' times in the blend (sub-frame). lock_feet=True runs `footlock.lock_feet` on the
    blend with the loops' contacts laid out on it (`sync_contacts`: planted where both loops
    are at their warped times), so the feet the blend slides stay put.
    """
    a, b = with_feet(a, feet), with_feet(b, feet)
    s = _sync(a, b, weight, duration, mode, fps)
    m = blend.check_mask(mask, a.n_joints)
    up, forward = a.up, a.forward
    ra, rb = _root_loop(a, up, forward), _root_loop(b, up, forward)
    rot, pos = _poses(_with_residual(a, ra), _with_residual(b, rb), (a.fps, b.fps), s, m)
    residual = root.Residual(pos[:, a.root].copy(), rot[:, a.root].copy())
    # Two poses in range blend about in range; a knee the blend takes past both loops' is eased back.
    rot = knees.keep(rot, pos, a.parents, knees.ranges(a, b))
    trajectory = _blended_trajectory(ra, rb, s, s.weights * m[a.root], (a.fps, b.fps), up,
                                     _STILL_MPS / a.meters_per_unit)
    world_rot, world_pos = root.compose(trajectory, residual, up)
    top = a.parents[a.root] < 0
    if top:
        # A top-level root's local motion is its world motion (root.with_root_world without
        # its copies of every joint).
        rot[:, a.root], pos[:, a.root] = world_rot, world_pos
    out = Clip(a.names, a.parents, a.offsets, rot, pos, s.fps, channels=a.channels,
               end_parents=a.end_parents, end_offsets=a.end_offsets, events=s.events,
               name="+".join(x for x in (a.name, b.name) if x), root=a.root, up=up, forward=forward,
               meters_per_unit=a.meters_per_unit, motion_start=0)
    out = out if top else root.with_root_world(out, world_rot, world_pos)
    if lock_feet:
        out = footlock.lock_feet(out, contacts=_laid_out(a, b, s))
    return out


def _laid_out(a: Clip, b: Clip, s: _Sync) -> dict[str, np.ndarray]:
    ca, cb = contacts.contacts(a), contacts.contacts(b)
    ia = np.rint(s.times_a * a.fps).astype(np.int64) % a.loop_frames
    ib = np.rint(s.times_b * b.fps).astype(np.int64) % b.loop_frames
    return {foot: ca[foot][ia] & cb[foot][ib] for foot in ca.keys() & cb.keys()}


def sync_contacts(a: Clip, b: Clip, weight: Any, duration: float, *, mode: str = "linear",
                  fps: float | None = None, feet: FeetSpec | None = None) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: the loops' contacts (`contacts.contacts`) on `sync_blend`'s output frames
    with the same arguments: planted where both loops are, each at the frame nearest its warped
    time."""
    a, b = with_feet(a, feet), with_feet(b, feet)
    return _laid_out(a, b, _sync(a, b, weight, duration, mode, fps))


# -- travel speed --------------------------------------------------------------------------------


def _stride_m(clip: Clip) -> float:
    return float(np.linalg.norm(cycle_travel(clip)[0])) * clip.meters_per_unit


def travel_speed(a: Clip, b: Clip, weight: float, mode: str = "linear") -> float:
    """Travel speed (m/s) of `sync_blend(a, b, weight)` at a constant weight: blended stride over
    blended period, ((1 - w) D_a + w D_b) / S(w), D the loops' strides (`cycle_travel`, meters)
    and S(w) the sum of the blended segment durations."""
    _check_loop(a, "a")
    _check_loop(b, "b")
    w = float(weight)
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"weight must be in [0, 1], not {weight}")
    period = float(_durations(_segments(a, b), np.array(w), mode).sum())
    return ((1.0 - w) * _stride_m(a) + w * _stride_m(b)) / period


def blend_speed(a: Clip, b: Clip, weight: float, mode: str = "linear") -> float:
    """Travel speed (m/s) of `sync_blend(a, b, weight)` at a constant weight as it plays: the floor
    distance its root covers over one blended cycle (sampled on a grid that closes on the cycle,
    as a bake of whole cycles is) over the cycle's length.

    `travel_speed` blends the strides' lengths; the blend adds their steps as vectors in the
    heading frame, so where the two loops travel at different angles to their facing the blend
    covers a little less (CMU 02_01 and 02_03 at weight 0.25: 0.006 % less). Equal when both
    travel the same way, and at weights 0 and 1.
    """
    w = float(weight)
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"weight must be in [0, 1], not {weight}")
    length = cycle_length(a, b, w, mode)
    s = _sync(a, b, w, length, mode, max(1, round(length * a.fps)) / length)
    up, forward = a.up, a.forward
    trajectory = _blended_trajectory(_root_loop(a, up, forward), _root_loop(b, up, forward), s,
                                     s.weights, (a.fps, b.fps), up, _STILL_MPS / a.meters_per_unit)
    distance = float(np.linalg.norm(trajectory.position[-1] - trajectory.position[0]))
    return distance * a.meters_per_unit / length


def cycle_length(a: Clip, b: Clip, weight: float, mode: str = "linear") -> float:
    """Seconds one blended cycle lasts at a constant `weight`: the sum of its blended segments
    (linear: L = (T2 - T1) w + T1), e.g. to bake a whole number of cycles."""
    _check_loop(a, "a")
    _check_loop(b, "b")
    return float(_durations(_segments(a, b), np.asarray(float(weight)), mode).sum())


def weight_for_speed(a: Clip, b: Clip, speed_mps: float, mode: str = "linear", *,
                     feet: FeetSpec | None = None) -> float:
    """The constant weight at which `sync_blend(a, b, ...)` travels at `speed_mps` (`travel_speed`).

    linear: closed form, w = (s T1 - D1) / ((D2 - D1) - s (T2 - T1)) with T the cycle periods and
    D the strides; harmonic: solved numerically (the smallest such weight); leader: closed form on
    each side of w = 1/2. ValueError outside [v(0), v(1)], naming the reachable range, and, in
    leader mode, inside the gap where the pace jumps. feet: as for `sync_blend`.
    """
    a, b = with_feet(a, feet), with_feet(b, feet)
    _check_loop(a, "a")
    _check_loop(b, "b")
    seg = _segments(a, b)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    s = float(speed_mps)
    d1, d2 = _stride_m(a), _stride_m(b)
    t1, t2 = float(seg.durations_a.sum()), float(seg.durations_b.sum())
    v0, v1 = d1 / t1, d2 / t2
    lo, hi = min(v0, v1), max(v0, v1)
    tol = 1e-9 * hi  # the ends as reached, not their rounding
    if not lo - tol <= s <= hi + tol:
        raise ValueError(f"{s:.4g} m/s is outside the reachable range [{lo:.4g}, {hi:.4g}] m/s "
                         f"({a.name or 'a'} {v0:.4g} m/s at weight 0, {b.name or 'b'} {v1:.4g} m/s at 1)")
    if abs(s - v0) <= tol:
        return 0.0
    if abs(s - v1) <= tol:
        return 1.0
    if mode == "linear":
        return float(min(max((s * t1 - d1) / ((d2 - d1) - s * (t2 - t1)), 0.0), 1.0))
    if mode == "leader":
        # Each side is linear in w: D(w) over the leader's period.
        if d2 != d1:
            w_a, w_b = (s * t1 - d1) / (d2 - d1), (s * t2 - d1) / (d2 - d1)
            if 0.0 <= w_a <= 0.5:
                return float(w_a)
            if 0.5 < w_b <= 1.0:
                return float(w_b)
        edge = ((d1 + d2) / (2 * t1), (d1 + d2) / (2 * t2))
        raise ValueError(f"{s:.4g} m/s falls in leader mode's gap ({min(edge):.4g}, {max(edge):.4g}) m/s "
                         "where the lead, and the pace, jump at weight 0.5; use 'linear' or 'harmonic'")
    return _solve(lambda w: (((1.0 - w) * d1 + w * d2) / _durations(seg, w, mode).sum(axis=-1)) - s)


def _solve(f: Callable[[Array], Array]) -> float:
    """The smallest root of f on [0, 1], f(0) and f(1) of opposite signs or zero: a grid, then bisection."""
    grid = np.linspace(0.0, 1.0, 257)
    v = f(grid)
    change = np.flatnonzero(np.sign(v[1:]) != np.sign(v[:-1]))
    lo, hi = float(grid[change[0]]), float(grid[change[0] + 1])
    if v[change[0]] == 0.0:
        return lo
    f_lo = float(v[change[0]])
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        f_mid = float(f(np.array(mid)))
        if f_mid == 0.0 or hi - lo <= 1e-15:
            return mid
        if (f_mid < 0.0) == (f_lo < 0.0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
