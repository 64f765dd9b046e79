"""Synchronized blends: clean loop cycles with foot-plant markers, and blends of loops (a walk and
a run, or any number of gaits two at a time) played at one phase.

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
  marker_j + f * segment_j (j modulo its marker count: a loop of two cycles has twice the markers
  of a one-cycle loop, `markers_in_step`). The blended segment duration S_j(w) depends on the
  mode; the phase advances each output frame by dt / S_j(w(t)), so it is monotonic under any
  weight curve.
- Any number of loops blend two at a time (`Pairs`: which two at each output frame, at what
  weight and playback rate): `in_step` makes them ready, `warp` finds the phase and each loop's
  time, `blend_warped` samples and blends them. `sync_blend` is the case of two loops whose pair
  never changes; `blendspace.blend_space` picks the pair by speed.
- Times are seconds at every boundary; frames are indices.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import blend, contacts, footlock, knees, quat, resample, root, skeleton
from .body import FeetSpec, with_feet
from .clip import Clip
from .root import STILL_MPS

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
        slow = np.linalg.norm(chord) * clip.meters_per_unit < STILL_MPS * (b - a) / clip.fps
        travel.append(math.nan if slow else math.atan2(float(chord @ side), float(chord @ fwd)))
        facing.append(float(np.mean(traj.heading[a:b + 1])))
    by_travel, by_facing = _wrap(travel[1] - travel[0]), facing[1] - facing[0]
    turn = by_facing if math.isnan(by_travel) or abs(_wrap(by_travel - by_facing)) > _SAME_GAIT else by_travel
    span = (ends[1].start + ends[1].stop - ends[0].start - ends[0].stop) / 2.0 / clip.fps
    if abs(turn) < _STRAIGHT or span <= 0.0:
        return 0.0
    return turn / span


# Travel and facing turning by angles this far apart (radians) are different gaits: the facing
# says how the take turns (as it does for a root under root.STILL_MPS). A take whose first and last
# whole cycles head less than _STRAIGHT apart walks straight.
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


# -- one motion root -----------------------------------------------------------------------------


def common_root(loops: Sequence[Clip]) -> list[Clip]:
    """The loops with their travel on one joint, the deepest of their motion roots.

    Takes of one skeleton may carry their travel on different joints (Bandai's dataset-1 walk on
    its hips, its run and dash loops on the dummy root above them); blended joint by joint, one
    loop's root motion would meet the other's plain local transform there. A loop moved onto
    that joint keeps its world motion; the joints above it hold the first pose of the first loop
    already on it, whose up, facing (a facing is in its root's frame) and body map it takes.
    Loops already on the joint are returned as they are. ValueError when the roots are not on
    one chain."""
    clips = list(loops)
    parents = clips[0].parents
    joint = max((c.root for c in clips), key=lambda j: len(skeleton.chain(parents, j)))
    if all(c.root == joint for c in clips):
        return clips
    chain = skeleton.chain(parents, joint)
    like = next(c for c in clips if c.root == joint)
    for c in clips:
        if c.root not in chain:
            raise ValueError(f"{c.name or 'a loop'} carries its travel on {c.names[c.root]!r}, "
                             f"{like.name or 'another'} on {c.names[joint]!r}, neither above the other: "
                             "give them one motion root (clip.root)")
    above = chain[:-1]
    out = []
    for c in clips:
        if c.root == joint:
            out.append(c)
            continue
        world = root.root_world_of(c.rotations, c.positions, c.parents, joint)
        rot, pos = c.rotations.copy(), c.positions.copy()
        rot[:, above], pos[:, above] = like.rotations[0, above], like.positions[0, above]
        rot, pos = root.with_root_world_of(rot, pos, c.parents, joint, *world)
        out.append(c.replace(rotations=rot, positions=pos, root=joint, up=like.up, forward=like.forward,
                             body=like.body))
    return out


# -- markers -------------------------------------------------------------------------------------


class Markers(NamedTuple):
    """A loop's markers in cycle order, as a blend plays them: `names` [K]; `times` [K] (seconds,
    increasing from the first, which lies in [0, period), unwrapped past the period); `durations`
    [K] (marker j to j + 1, the last to the first one period on); `period` (seconds)."""

    names: list[str]
    times: Array
    durations: Array
    period: float


def _sorted_markers(clip: Clip, names: set[str]) -> tuple[Array, list[str]]:
    period = clip.n_frames / clip.fps
    t = [np.mod(np.asarray(clip.events[k], dtype=np.float64), period) for k in sorted(names)]
    n = [k for k in sorted(names) for _ in clip.events[k]]
    times = np.concatenate(t) if t else np.zeros(0)
    order = np.argsort(times, kind="stable")
    times, n = times[order], [n[i] for i in order]
    if np.any(np.diff(np.append(times, times[0] + period)) <= 0.0):
        raise ValueError(f"{clip.name or 'a clip'} has two markers at one time ({times.tolist()} s)")
    return times, n


def markers_in_step(loops: Sequence[Clip], *, names: Sequence[str] | None = None,
                    first: str | None = None) -> list[Markers]:
    """Each loop's `Markers`, matched across the loops: marker j of one plays with marker j of
    every other, counted modulo each loop's marker count (so a loop of two cycles plays each of
    a one-cycle loop's markers twice over).

    The markers are the events every loop has (by name; `names`: of those, only these). None in
    common: one each at its time 0, so the loops share normalized time. Each loop's names must
    repeat the first loop's sequence in cycle order (ValueError otherwise). first: the name every
    loop's markers start from, its first such marker; None: the first loop's first marker from
    its time 0, each other loop's match the one closest to it in normalized time (a sequence
    that repeats, L R L R, matches in several places)."""
    periods = [c.n_frames / c.fps for c in loops]
    common: set[str] | None = None if names is None else set(names)
    for c in loops:
        own = {k for k, v in c.events.items() if len(v)}
        common = own if common is None else common & own
    if not common:
        return [Markers([""], np.zeros(1), np.array([p]), p) for p in periods]
    seqs = [_sorted_markers(c, common) for c in loops]
    ref_t, ref = seqs[0]
    r0 = 0
    if first is not None:
        if first not in ref:
            raise ValueError(f"{loops[0].name or 'a loop'} has no {first} marker to start its cycle from")
        r0 = ref.index(first)
    ref = ref[r0:] + ref[:r0]
    k_ref = len(ref)
    out = []
    for clip, (t, seq), period in zip(loops, seqs, periods, strict=True):
        k = len(seq)
        span = math.lcm(k, k_ref)
        shifts = [r for r in range(k) if all(seq[(j + r) % k] == ref[j % k_ref] for j in range(span))]
        if not shifts:
            raise ValueError(f"markers do not match in cycle order: {loops[0].name or 'a'} has {seqs[0][1]}, "
                             f"{clip.name or 'b'} has {seq}")
        if first is not None:
            r = shifts[0]
        else:
            at = ref_t[r0] / periods[0]
            r = min(shifts, key=lambda s: abs((t[s] / period - at + 0.5) % 1.0 - 0.5))
        idx = np.arange(k) + r
        times = t[idx % k] + period * (idx // k)
        out.append(Markers(list(np.asarray(seq, dtype=object)[idx % k]), times,
                           np.diff(np.append(times, times[0] + period)), period))
    return out


def phase_at(markers: Markers, t: float) -> float:
    """The phase (marker index + fraction, see the module notes) at which a loop with these
    markers is at its time t (seconds; phase 0 is its first marker, so a time before it gives a
    negative phase)."""
    K = len(markers.times)
    x = float(t) - float(markers.times[0])
    cycles = math.floor(x / markers.period)
    r = x - cycles * markers.period
    offsets = markers.times - markers.times[0]
    j = min(int(np.searchsorted(offsets, r, side="right")) - 1, K - 1)
    return cycles * K + j + (r - float(offsets[j])) / float(markers.durations[j])


def _durations(sa: Array, sb: Array, w: Array, mode: str) -> Array:
    """[..., K] segment durations blended at weights w [...] from a's and b's [..., K]."""
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


def curve_values(curve: Any, times: Array, what: str = "weight", over: str = "time") -> Array:
    """[n] values at `times` (seconds; or meters along a path, `over="distance"`) of a number, a
    callable f(t) (called with the array if it accepts one, else once per sample) or a (times,
    values) pair interpolated linearly and held past its ends; a bare array is refused. `what`
    names the value in errors (a weight, a speed), `over` what it is a curve of."""
    ats, call = f"{over}s", "f(t_seconds)" if over == "time" else f"f({over} in meters)"
    if callable(curve):
        v = None
        try:
            v = np.asarray(curve(times), dtype=np.float64)
        except (TypeError, ValueError):
            pass
        if v is None or v.ndim > 1 or (v.ndim == 1 and v.shape != times.shape):
            # Not vectorized: once per sample (user code; the blend itself never loops over frames).
            v = np.array([float(curve(float(t))) for t in times])
        return np.broadcast_to(v, times.shape).astype(np.float64)
    if isinstance(curve, tuple):
        if len(curve) != 2:
            raise TypeError(f"a {what} curve is a ({ats}, {what}s) pair, not a {len(curve)}-tuple")
        kt, kv = (np.asarray(x, dtype=np.float64).reshape(-1) for x in curve)
        if kt.size == 0 or kt.shape != kv.shape:
            raise ValueError(f"{what} curve: {kt.size} {ats} and {kv.size} {what}s; "
                             f"give one {what} per {over}")
        if np.any(np.diff(kt) <= 0.0) or not np.all(np.isfinite(kt)):
            raise ValueError(f"{what} curve {ats} must be finite and increasing")
        return np.interp(times, kt, kv)
    if np.ndim(curve) != 0 or isinstance(curve, (str, bytes)):
        raise TypeError(f"{what} is a number, a callable {call} -> {what} or a ({ats}, {what}s) pair; "
                        f"a bare array is refused (at which {ats} would its values hold?)")
    return np.full(times.shape, float(curve))


def _weights(weight: Any, times: Array) -> Array:
    """[n] weights in [0, 1] at the output times (`curve_values`)."""
    w = curve_values(weight, times, "weight")
    bad = ~((w >= 0.0) & (w <= 1.0))
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(f"weights must be in [0, 1]: {w[i]} at {times[i]:.4f} s")
    return w


def output_times(duration: float, fps: float) -> Array:
    """The output frames' times (seconds): 0 .. duration at `fps`, both checked."""
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be positive and finite, not {fps}")
    duration = float(duration)
    if not (duration >= 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be >= 0 seconds, not {duration}")
    return np.arange(math.floor(duration * fps + 1e-9) + 1) / fps


def _phase(u0: float, S: Array, dt: float) -> tuple[Array, list[tuple[float, int]]]:
    """Phase [n] at the output frames from u0, advancing by dt / S[k, segment] over each frame step
    k, and the marker crossings (time, unwrapped marker index). A step that crosses a marker
    finishes its time in the next segment at that segment's pace. Each segment's column of S
    gives a cumulative pace (phase gained from frame 0, linear within a step): a segment ends
    where its pace has gained 1 since it began (a search, not a loop over frames)."""
    n, K = S.shape
    gained = np.zeros((n, K))
    np.cumsum(dt / S[:-1], axis=0, out=gained[1:])
    # Python floats for the search: a few hundred scalar steps, cheaper than numpy calls.
    columns = [gained[:, p].tolist() for p in range(K)]
    j = math.floor(u0)
    crossings: list[tuple[float, int]] = [(0.0, j)] if u0 == j else []
    # Each segment: its marker index, the frame position it is entered at, its column's pace
    # gained there and the fraction of it already behind (the first one's only).
    segments, at, base, behind = [j], [0.0], [0.0], [u0 - j]
    while True:
        g = columns[j % K]
        end = base[-1] + 1.0 - behind[-1]
        if end > g[-1]:
            break
        k = max(bisect.bisect_left(g, end), 1)
        x = k - 1 + (end - g[k - 1]) / (g[k] - g[k - 1])
        j += 1
        nxt = columns[j % K]
        i = min(int(x), n - 2)
        segments.append(j)
        at.append(x)
        base.append(nxt[i] + (x - i) * (nxt[i + 1] - nxt[i]))
        behind.append(0.0)
        crossings.append((x * dt, j))
    # A marker on the last frame may have been left a rounding short of it.
    last = columns[j % K][-1] - base[-1] + behind[-1]
    if n > 1 and at[-1] < n - 1 and 1.0 - last < resample.SNAP_FRAMES:
        j += 1
        segments.append(j)
        at.append(float(n - 1))
        base.append(columns[j % K][-1])
        behind.append(0.0)
        crossings.append(((n - 1) * dt, j))
    frames = np.arange(n)
    seg = np.searchsorted(np.asarray(at), frames, side="right") - 1
    js = np.asarray(segments)[seg]
    u = js + np.asarray(behind)[seg] + gained[frames, js % K] - np.asarray(base)[seg]
    return u, crossings


def local_times(u: Array, markers: Markers) -> Array:
    """A loop's own time (seconds, unwrapped over its cycles) at each phase u [n]."""
    K = len(markers.durations)
    j = np.floor(u)
    seg = (j % K).astype(np.int64)
    return markers.times[seg] + (u - j) * markers.durations[seg] + (j // K) * markers.period


class Pairs(NamedTuple):
    """Which loops blend at each output frame [n]: the loop `a` plays at 1 - `weight`, `b` at
    `weight` (indices into a list of loops; a == b where one plays alone), both at `rate` times
    their blended pace (1: as they are)."""

    a: np.ndarray
    b: np.ndarray
    weight: Array
    rate: Array

    def showing(self) -> tuple[np.ndarray, np.ndarray]:
        """([n], [n]) the loops that show at each frame, blended at `weight` from the first to
        the second: a and b, but b twice where a has no weight and a twice where b has none."""
        return _showing(self.a, self.b, self.weight)


def _showing(a: np.ndarray, b: np.ndarray, w: Array) -> tuple[np.ndarray, np.ndarray]:
    return np.where(w < 1.0, a, b), np.where(w > 0.0, b, a)


class Warp(NamedTuple):
    """Where a blend plays its loops: the output rate and times [n], the pairs, each loop's
    markers, the phase [n] with its marker crossings (time, unwrapped marker index), and each
    paired loop's own time at every output frame (seconds, unwrapped over its cycles), by index."""

    fps: float
    times: Array
    pairs: Pairs
    markers: list[Markers]
    phase: Array
    crossings: list[tuple[float, int]]
    local: dict[int, Array]


def warp(markers: list[Markers], pairs: Pairs, fps: float, *, mode: str = "linear",
         start: float = 0.0) -> Warp:
    """The phase and each loop's warped time over the output frames of `pairs` at `fps`, from
    phase `start`: each frame's segment durations are its pair's, blended by `mode` at its
    weight and divided by its rate, and the phase advances dt / S each frame (module notes)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    n = len(pairs.weight)
    used = sorted(set(np.unique(pairs.a).tolist()) | set(np.unique(pairs.b).tolist()))
    count = math.lcm(*(len(markers[g].durations) for g in used))
    D = np.ones((len(markers), count))
    for g in used:
        D[g] = np.tile(markers[g].durations, count // len(markers[g].durations))
    S = _durations(D[pairs.a], D[pairs.b], pairs.weight, mode) / pairs.rate[:, None]
    u, crossings = _phase(float(start), S, 1.0 / fps)
    local = {g: local_times(u, markers[g]) for g in used}
    return Warp(fps, np.arange(n) / fps, pairs, markers, u, crossings, local)


def _two(a: Clip, b: Clip, weight: Any, duration: float, mode: str,
         fps: float | None) -> tuple[Gaits, Warp]:
    """sync_blend's loops in step and warp: a plays at 1 - weight, b at weight, from a's time 0."""
    _check_loop(a, "a")
    _check_loop(b, "b")
    a.check_compatible(b)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    rate = a.fps if fps is None else float(fps)
    times = output_times(duration, rate)
    w = _weights(weight, times)
    n = len(times)
    gaits = in_step([a, b])
    pairs = Pairs(np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), w, np.ones(n))
    return gaits, warp(gaits.markers, pairs, rate, mode=mode, start=phase_at(gaits.markers[0], 0.0))


def sync_times(a: Clip, b: Clip, weight: Any, duration: float, *, mode: str = "linear",
               fps: float | None = None) -> tuple[Array, Array]:
    """(a's times [n], b's times [n]): where `sync_blend` with the same arguments samples each loop
    at its output frames, in seconds, unwrapped over cycles (take them modulo the period for the
    time within the cycle). Use it to lay the sources' contacts or curves out on a blend."""
    _, s = _two(a, b, weight, duration, mode, fps)
    return s.local[0], s.local[1]


# -- root motion ---------------------------------------------------------------------------------


class Travel(NamedTuple):
    """A loop's root motion in its travel frame (`loop_travel`): the trajectory (floor path, and a
    heading that turns evenly at the pelvis's mean yaw), the residual off it, and the floor step
    [N, 3] (file units, in the heading frame of the frame it leaves) and turn [N] (radians) out
    of each frame, the last across the seam by the loop convention."""

    trajectory: root.Trajectory
    residual: root.Residual
    step: Array
    turn: Array


def loop_travel(clip: Clip, up: Array | None = None, forward: Array | None = None) -> Travel:
    """The loop's root motion in its travel frame: the floor path under a heading that turns evenly
    by the loop's cycle turn (`cycle_travel`, read with the loop's own facing), at the pelvis's
    mean yaw; the pelvis's swing within a stride (14-24 degrees on Bandai takes) is in the
    residual. So steps and turns blend at one phase without the swings' difference at the
    blend's start leaking into the path's direction as the weight moves (up to 7 degrees over a
    walk -> run ramp). The steps are the loop convention's (module notes), re-expressed in that
    frame. Headings are measured with the given up and facing (None: the loop's own; a blend
    measures every loop with its first loop's, so that residuals blend alike)."""
    turn_total = cycle_travel(clip)[1]
    up = clip.up if up is None else up
    forward = clip.forward if forward is None else forward
    if not (np.array_equal(clip.up, up) and np.array_equal(clip.forward, forward)):
        clip = clip.replace(up=up, forward=forward)
    rot, pos = root.root_world(clip)
    raw = root.trajectory_of(rot, pos, up, forward)
    pelvis_step, _ = _steps(raw.position, raw.heading, up)
    n = len(raw.heading)
    even = turn_total * np.arange(n) / n
    traj = root.Trajectory(raw.position, even + float(np.mean(raw.heading - even)))
    step = quat.mul_vec(root.yaw_quat(raw.heading - traj.heading, up), pelvis_step)
    return Travel(traj, root.residual_of(rot, pos, traj, up), step, np.full(n, turn_total / n))


def _stride_m(clip: Clip) -> float:
    """Meters a loop travels per loop along its travel frame, its turn taken out: `cycle_travel`'s
    displacement for a loop that does not turn, and for one that does, the sum of its steps each
    in its own frame, so that the loop played twice over strides twice as far."""
    return float(np.linalg.norm(loop_travel(clip).step.sum(axis=0))) * clip.meters_per_unit


def _travel(loop: Travel, t: Array, fps: float) -> tuple[Array, Array]:
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


def _trajectory_at(loop: Travel, t: float, fps: float, up: Array) -> tuple[Array, float]:
    """(floor position [3], heading) of a loop's trajectory at its time t (seconds, modulo its
    period): a frame's own on a frame, else on along the step out of the frame before."""
    n = len(loop.turn)
    x = float(resample.snap_frames(np.array([t * fps]))[0]) % n
    i = min(math.floor(x), n - 1)
    f = x - i
    p, h = loop.trajectory.position[i], float(loop.trajectory.heading[i])
    if f == 0.0:
        return p, h
    return p + f * quat.mul_vec(root.yaw_quat(h, up), loop.step[i]), h + f * float(loop.turn[i])


def _travel_angle(loop: Travel, fps: float, up: Array) -> tuple[float, float]:
    """(angle, speed): the direction of the loop's travel, radians from its heading, and its speed
    (file units per second): its steps over a period, each in its own heading frame (the turn
    taken out), summed. The same from any time in the loop, and for the loop played twice over;
    for a loop that does not turn, its chord over a cycle."""
    total = loop.step.sum(axis=0)
    fwd, side = root.floor_axes(up)
    speed = float(np.linalg.norm(total)) * fps / len(loop.turn)
    return math.atan2(float(total @ side), float(total @ fwd)), speed


# -- loops in step -------------------------------------------------------------------------------


class Gaits(NamedTuple):
    """Loops ready to be played in step (`in_step`): on one motion root, their markers matched,
    each one's travel (with the first loop's up and facing), and, worked out when first needed,
    each one's stride (`stride`) and the knees' range of each pair that blends (`knee_ranges`)."""

    loops: list[Clip]
    markers: list[Markers]
    travel: list[Travel]
    strides: dict[int, float]
    pair_knees: dict[tuple[int, int], list[knees.Knee]]

    def stride(self, g: int) -> float:
        """Meters loop g travels per loop (`_stride_m`, with its own facing)."""
        if g not in self.strides:
            self.strides[g] = _stride_m(self.loops[g])
        return self.strides[g]

    def knee_ranges(self, a: int, b: int) -> list[knees.Knee]:
        """The knees' range over loops a and b (one loop: a == b)."""
        key = (min(a, b), max(a, b))
        if key not in self.pair_knees:
            self.pair_knees[key] = knees.ranges(*(self.loops[g] for g in sorted(set(key))))
        return self.pair_knees[key]


def in_step(loops: Sequence[Clip], *, names: Sequence[str] | None = None, first: str | None = None) -> Gaits:
    """Loops of one skeleton made ready to blend in step: moved onto one motion root
    (`common_root`), their markers matched (`markers_in_step` with `names` and `first`), and
    what a blend reads of each loop worked out once."""
    for i, c in enumerate(loops):
        _check_loop(c, f"loop {i}")
        loops[0].check_compatible(c)
    clips = common_root(loops)
    up, forward = clips[0].up, clips[0].forward
    return Gaits(clips, markers_in_step(clips, names=names, first=first),
                 [loop_travel(c, up, forward) for c in clips], {}, {})


class _Pace(NamedTuple):
    """Two loops' matched segment durations over the least common multiple of their marker
    counts (seconds, [K] each) and their strides over as many loops (meters)."""

    durations_a: Array
    durations_b: Array
    stride_a: float
    stride_b: float
    loops_a: int        # a's loops in those segments


def _pace(ma: Markers, mb: Markers, stride_a: float, stride_b: float) -> _Pace:
    count = math.lcm(len(ma.durations), len(mb.durations))
    ra, rb = count // len(ma.durations), count // len(mb.durations)
    return _Pace(np.tile(ma.durations, ra), np.tile(mb.durations, rb), stride_a * ra, stride_b * rb, ra)


def _pace_of(a: Clip, b: Clip) -> _Pace:
    """The pace of loops a and b as `sync_blend` plays them, without the rest of `in_step`."""
    _check_loop(a, "a")
    _check_loop(b, "b")
    a.check_compatible(b)
    loops = common_root([a, b])
    ma, mb = markers_in_step(loops)
    return _pace(ma, mb, _stride_m(loops[0]), _stride_m(loops[1]))


def pair_weights(gaits: Gaits, a: int, b: int, speeds: npt.ArrayLike, mode: str = "linear") -> Array:
    """[...] the weights at which gaits a and b (indices) blended in step travel at `speeds` (m/s,
    an array): `weight_for_speed` of that pair, from what `in_step` worked out."""
    p = _pace(gaits.markers[a], gaits.markers[b], gaits.stride(a), gaits.stride(b))
    return np.asarray(_weights_for(p, np.asarray(speeds, dtype=np.float64), mode, gaits.loops[a].name,
                                   gaits.loops[b].name))


# -- sampling and blending poses -----------------------------------------------------------------


def _frame_positions(t: Array, fps: float, n: int) -> tuple[np.ndarray, np.ndarray, Array]:
    """(frame [m] int, next frame, fraction [m]) of times t in a loop of n frames."""
    x = resample.snap_frames(np.asarray(t) * fps)
    base = np.floor(x)
    frac = x - base
    i = np.mod(base, n).astype(np.int64)
    return i, np.where(i + 1 == n, 0, i + 1), frac


def _runs(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """[(start, stop)] of the runs of frames over which a and b each hold one value."""
    change = np.ones(len(a), dtype=bool)
    change[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    starts = np.flatnonzero(change)
    return list(zip(starts.tolist(), np.append(starts[1:], len(a)).tolist(), strict=True))


def _shown(pairs: Pairs) -> list[int]:
    """The loops that show somewhere (`Pairs.showing`)."""
    return sorted(set().union(*(np.unique(x).tolist() for x in pairs.showing())))


def _poses(gaits: Gaits, s: Warp, m: Array) -> tuple[Array, Array]:
    """The loops sampled at their warped times and blended in their pairs, by weight times `m`
    per joint: rotations [n, J, 4] and translations [n, J, 3], the root's its residual (each
    loop's root is replaced by its residual, so that it blends like a joint). Over each run of
    frames with one pair; one loop alone where the other has no weight."""
    pairs = s.pairs
    shown = sorted(set(np.unique(pairs.a).tolist()) | set(np.unique(pairs.b[pairs.weight > 0.0]).tolist()))
    j0 = gaits.loops[0].root
    rots, poss = {}, {}
    for g in shown:
        loop, travel = gaits.loops[g], gaits.travel[g]
        rots[g], poss[g] = loop.rotations.copy(), loop.positions.copy()
        rots[g][:, j0], poss[g][:, j0] = travel.residual.rotation, travel.residual.position
    still_rot, still_pos = rots[shown[0]][0], poss[shown[0]][0]
    # Joints that hold one rotation (translation) in every loop need no sampling (CMU: 6 of 31).
    same_rot = np.ones(len(still_rot), dtype=bool)
    same_pos = same_rot.copy()
    for g in shown:
        same_rot &= np.all(rots[g] == still_rot, axis=(0, 2))
        same_pos &= np.all(poss[g] == still_pos, axis=(0, 2))
    moving, moved = np.flatnonzero(~same_rot), np.flatnonzero(~same_pos)
    tables = {g: quat.slerp_table(rots[g][:, moving]) for g in shown}
    n = len(pairs.weight)
    rot, pos = np.empty((n, *still_rot.shape)), np.empty((n, *still_pos.shape))
    rot[:] = still_rot
    pos[:] = still_pos
    t = pairs.weight[:, None] * m
    for a, z in _runs(pairs.a, pairs.b):
        ga, gb = int(pairs.a[a]), int(pairs.b[a])
        # One loop alone where the other has no weight on any joint.
        if ga != gb and np.all(t[a:z] >= 1.0):
            ga = gb
        pair = ga != gb and bool(np.any(t[a:z] > 0.0))
        A, B = gaits.loops[ga], gaits.loops[gb]
        ia, na, fa = _frame_positions(s.local[ga][a:z], A.fps, A.n_frames)
        if pair:
            ib, nb, fb = _frame_positions(s.local[gb][a:z], B.fps, B.n_frames)
        tm = t[a:z, moving]
        for k in range(0, z - a, _BLOCK):
            f = slice(k, k + _BLOCK)
            q = quat.sample_table(tables[ga], ia[f], fa[f])
            if pair:
                q = quat.slerp_planes(q, quat.sample_table(tables[gb], ib[f], fb[f]), tm[f])
            block = rot[a + k:a + k + q.shape[1]]
            block[:, moving] = np.moveaxis(q, 0, -1)
        if moved.size:
            pa = poss[ga][:, moved]
            p = blend.lerp(pa[ia], pa[na], fa[:, None])
            if pair:
                pb = poss[gb][:, moved]
                p = blend.lerp(p, blend.lerp(pb[ib], pb[nb], fb[:, None]), t[a:z, moved])
            pos[a:z, moved] = p
    return rot, pos


def _blended_trajectory(gaits: Gaits, shown: list[int], s: Warp, w: Array, anchor: int,
                        still: float) -> root.Trajectory:
    """The blend's floor trajectory: each loop's steps and turns over its warped time steps, the
    pair's blended by `w` [n] (each step by its first frame's) and integrated from the `anchor`
    loop's trajectory at its time at frame 0.

    Each loop travels at its own angle to its heading (the pelvis's yaw, which swings within a
    stride and differs between gaits at one phase), so blended steps travel at an angle that moves
    with the weight: a walk -> run ramp of Bandai takes turned its path by up to 8 degrees.
    Where the weight moves, the heading turns the other way by as much (`_travel_angle` of each
    loop, the blend's angle from their velocities added by weight), so the path keeps its
    direction and the body turns from one gait's facing to the other's. Not where a loop barely
    travels (`still`, file units per second) or two travel more than 45 degrees apart from their
    facings (a forward walk and a backward one)."""
    n = len(w)
    up = gaits.loops[0].up
    a, b = _showing(s.pairs.a, s.pairs.b, w)
    step_a, step_b = np.zeros((n - 1, 3)), np.zeros((n - 1, 3))
    turn_a, turn_b = np.zeros(n - 1), np.zeros(n - 1)
    velocity = np.zeros(len(gaits.loops), dtype=np.complex128)
    speeds, angles = [], []
    for g in shown:
        travel, fps = gaits.travel[g], gaits.loops[g].fps
        step, turn = _travel(travel, s.local[g], fps)
        on_a, on_b = a[:-1] == g, b[:-1] == g
        step_a[on_a], turn_a[on_a] = step[on_a], turn[on_a]
        step_b[on_b], turn_b[on_b] = step[on_b], turn[on_b]
        angle, speed = _travel_angle(travel, fps, up)
        velocity[g] = speed * np.exp(1j * angle)
        speeds.append(speed)
        angles.append(angle)
    step = blend.lerp(step_a, step_b, w[:-1])
    turn = blend.lerp(turn_a[:, None], turn_b[:, None], w[:-1])[:, 0]
    p0, h0 = _trajectory_at(gaits.travel[anchor], float(s.local[anchor][0]), gaits.loops[anchor].fps, up)
    heading = h0 + np.concatenate([[0.0], np.cumsum(turn)])
    apart = max(abs(_wrap(x - y)) for x in angles for y in angles)
    if min(speeds) >= still and apart <= _SAME_GAIT:
        angle = np.unwrap(np.angle((1.0 - w) * velocity[a] + w * velocity[b]))
        heading = heading + (angle[0] - angle)
    return root.Trajectory(_integrate(p0, heading, step, up), heading)


def blend_warped(gaits: Gaits, s: Warp, *, mask: npt.ArrayLike | None = None, anchor: int = 0,
                 name: str | None = None) -> Clip:
    """The loops played where `s` warps them and blended in its pairs: what `sync_blend` does with
    two.

    Each loop is sampled at its warped time by slerp / lerp between its frames, wrapping at the
    seam, and each pair's poses blend at its weight (times `mask` [J] per joint, as in
    `blend.blend_poses`). Root motion: each loop's floor step over its own warped time step
    (velocity x playback rate) in its travel frame, and its turn, blend by the weight (times
    the root's mask) and integrate from the `anchor` loop's trajectory where it is at frame 0;
    the residual (height, sway, hip rotation and the pelvis's swing off that heading) blends like
    a joint; where the weight moves, the heading turns against the change in the blended steps'
    angle to it (`_blended_trajectory`). Knees are kept within the range of the pair's loops
    (`knees.keep`). `events` hold the markers' crossings (the first loop's names; sub-frame
    seconds). name: the clip's (default: the names of the loops that show, joined by '+')."""
    ref = gaits.loops[0]
    m = blend.check_mask(mask, ref.n_joints)
    shown = _shown(s.pairs)
    rot, pos = _poses(gaits, s, m)
    j = ref.root
    residual = root.Residual(pos[:, j].copy(), rot[:, j].copy())
    # Poses in range blend about in range; a knee the blend takes past its pair's is eased back.
    first, second = s.pairs.showing()
    for a, z in _runs(first, second):
        ranges = gaits.knee_ranges(int(first[a]), int(second[a]))
        rot[a:z] = knees.keep(rot[a:z], pos[a:z], ref.parents, ranges)
    trajectory = _blended_trajectory(gaits, shown, s, s.pairs.weight * m[j], anchor,
                                     STILL_MPS / ref.meters_per_unit)
    world_rot, world_pos = root.compose(trajectory, residual, ref.up)
    root.set_root_world(rot, pos, ref.parents, j, world_rot, world_pos)
    names = s.markers[0].names
    events: dict[str, list[float]] = {k: [] for k in names if k}
    for t, k in s.crossings:
        if names[k % len(names)] and t <= s.times[-1] + 1e-9:
            events[names[k % len(names)]].append(t)
    if name is None:
        name = "+".join(x for x in (gaits.loops[g].name for g in shown) if x)
    return Clip(ref.names, ref.parents, ref.offsets, rot, pos, s.fps, channels=ref.channels,
                end_parents=ref.end_parents, end_offsets=ref.end_offsets,
                events={k: np.asarray(v) for k, v in events.items()}, name=name, root=j, up=ref.up,
                forward=ref.forward, meters_per_unit=ref.meters_per_unit, motion_start=0)


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

    The output starts at a's time 0 (for `loop_cycle` loops, on a touchdown marker). Markers
    common to both loops (by name, in cycle order, `markers_in_step`; a loop of two cycles plays
    each of a one-cycle loop's markers twice) are matched; without any, both play at one
    normalized time. Loops that carry their travel on different joints (a dummy root above the
    hips in one) are played on the deeper (`common_root`). Each loop is sampled at its warped
    time (`sync_times`) and the two blend as `blend_warped` does (poses by slerp, root steps in
    each loop's travel frame blended and integrated from a's trajectory at its time 0, knees kept
    within the loops' range). So travel speed is blended stride over blended period
    (`travel_speed`), not linear in w. `events` hold the markers' times in the blend (sub-frame).
    lock_feet=True runs `footlock.lock_feet` on the blend with the loops' contacts laid out on it
    (`sync_contacts`), so the feet the blend slides stay put.
    """
    a, b = with_feet(a, feet), with_feet(b, feet)
    gaits, s = _two(a, b, weight, duration, mode, fps)
    out = blend_warped(gaits, s, mask=mask, name="+".join(x for x in (a.name, b.name) if x))
    if lock_feet:
        out = footlock.lock_feet(out, contacts=warped_contacts(gaits, s))
    return out


def warped_contacts(gaits: Gaits, s: Warp,
                    planted: Sequence[dict[str, np.ndarray]] | None = None) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: the loops' contacts on the output frames of `s`: planted where every loop
    that shows is (`Pairs.showing`: each loop of a pair where it has weight), each at the frame
    nearest its warped time. planted: each loop's {foot: bool [N]} (None: `contacts.contacts` of
    each loop, read whole, wrapping)."""
    pairs = s.pairs
    shown = _shown(pairs)
    own = {g: contacts.contacts(gaits.loops[g]) if planted is None else planted[g] for g in shown}
    feet = sorted(set.intersection(*(set(c) for c in own.values())))
    out = {foot: np.ones(len(pairs.weight), dtype=bool) for foot in feet}
    first, second = pairs.showing()
    for g, mask in own.items():
        clip = gaits.loops[g]
        frame = np.rint(s.local[g] * clip.fps).astype(np.int64) % clip.loop_frames
        shows = (first == g) | (second == g)
        for foot in feet:
            out[foot] &= mask[foot][frame] | ~shows
    return out


def sync_contacts(a: Clip, b: Clip, weight: Any, duration: float, *, mode: str = "linear",
                  fps: float | None = None, feet: FeetSpec | None = None) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: the loops' contacts (`contacts.contacts`) on `sync_blend`'s output frames
    with the same arguments (`warped_contacts`): planted where a is and, where b has weight,
    b is, each at the frame nearest its warped time. What `lock_feet=True` holds."""
    a, b = with_feet(a, feet), with_feet(b, feet)
    return warped_contacts(*_two(a, b, weight, duration, mode, fps))


# -- travel speed --------------------------------------------------------------------------------


def travel_speed(a: Clip, b: Clip, weight: float, mode: str = "linear") -> float:
    """Travel speed (m/s) of `sync_blend(a, b, weight)` at a constant weight: blended stride over
    blended period, ((1 - w) D_a + w D_b) / S(w), D the loops' strides (meters: `cycle_travel`'s
    displacement for a loop that does not turn, the steps without the turn for one that does)
    and S(w) the sum of the blended segment durations (over as many cycles of each as their
    markers match, `markers_in_step`)."""
    p = _pace_of(a, b)
    w = float(weight)
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"weight must be in [0, 1], not {weight}")
    period = float(_durations(p.durations_a, p.durations_b, np.array(w), mode).sum())
    return ((1.0 - w) * p.stride_a + w * p.stride_b) / period


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
    gaits, s = _two(a, b, w, length, mode, max(1, round(length * a.fps)) / length)
    ref = gaits.loops[0]
    trajectory = _blended_trajectory(gaits, [0, 1], s, s.pairs.weight, 0, STILL_MPS / ref.meters_per_unit)
    distance = float(np.linalg.norm(trajectory.position[-1] - trajectory.position[0]))
    return distance * ref.meters_per_unit / length


def cycle_length(a: Clip, b: Clip, weight: float, mode: str = "linear") -> float:
    """Seconds one blended cycle (a's loop, its segments blended with b's) lasts at a constant
    `weight`: the sum of its blended segments (linear: L = (T2 - T1) w + T1), e.g. to bake a
    whole number of cycles."""
    p = _pace_of(a, b)
    return float(_durations(p.durations_a, p.durations_b, np.asarray(float(weight)), mode).sum()) / p.loops_a


def weight_for_speed(a: Clip, b: Clip, speed_mps: npt.ArrayLike, mode: str = "linear", *,
                     feet: FeetSpec | None = None) -> Any:
    """The constant weight at which `sync_blend(a, b, ...)` travels at `speed_mps` (`travel_speed`);
    an array of them for an array of speeds.

    linear: closed form, w = (s T1 - D1) / ((D2 - D1) - s (T2 - T1)) with T the cycle periods and
    D the strides; harmonic: solved numerically (the smallest such weight); leader: closed form on
    each side of w = 1/2. ValueError outside [v(0), v(1)], naming the reachable range, and, in
    leader mode, inside the gap where the pace jumps. feet: as for `sync_blend`.
    """
    a, b = with_feet(a, feet), with_feet(b, feet)
    p = _pace_of(a, b)
    speeds = np.asarray(speed_mps, dtype=np.float64)
    w = _weights_for(p, speeds, mode, a.name, b.name)
    return float(w) if speeds.ndim == 0 else w


def _weights_for(p: _Pace, speeds: Array, mode: str, name_a: str | None, name_b: str | None) -> Array:
    """`weight_for_speed`'s weights [...] for speeds [...] from a pair's pace."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    s = speeds.reshape(-1)
    d1, d2 = p.stride_a, p.stride_b
    t1, t2 = float(p.durations_a.sum()), float(p.durations_b.sum())
    v0, v1 = d1 / t1, d2 / t2
    lo, hi = min(v0, v1), max(v0, v1)
    tol = 1e-9 * hi  # the ends as reached, not their rounding
    bad = ~((s >= lo - tol) & (s <= hi + tol))
    if np.any(bad):
        x = float(s[np.argmax(bad)])
        raise ValueError(f"{x:.4g} m/s is outside the reachable range [{lo:.4g}, {hi:.4g}] m/s "
                         f"({name_a or 'a'} {v0:.4g} m/s at weight 0, {name_b or 'b'} {v1:.4g} m/s at 1)")
    at_a, at_b = np.abs(s - v0) <= tol, np.abs(s - v1) <= tol
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "linear":
            w = np.clip((s * t1 - d1) / ((d2 - d1) - s * (t2 - t1)), 0.0, 1.0)
        elif mode == "leader":
            # Each side is linear in w: D(w) over the leader's period.
            w_a, w_b = (s * t1 - d1) / (d2 - d1), (s * t2 - d1) / (d2 - d1)
            w = np.where((w_a >= 0.0) & (w_a <= 0.5), w_a, np.where((w_b > 0.5) & (w_b <= 1.0), w_b, np.nan))
        else:
            def gap(x: Array, v: float) -> Array:
                period = _durations(p.durations_a, p.durations_b, x, mode).sum(axis=-1)
                return ((1.0 - x) * d1 + x * d2) / period - v

            w = np.array([0.0 if at_a[k] or at_b[k] else _solve(functools.partial(gap, v=float(v)))
                          for k, v in enumerate(s)])
    w = np.where(at_a, 0.0, np.where(at_b, 1.0, w))
    if np.any(np.isnan(w)):
        edge = ((d1 + d2) / (2 * t1), (d1 + d2) / (2 * t2))
        x = float(s[np.argmax(np.isnan(w))])
        raise ValueError(f"{x:.4g} m/s falls in leader mode's gap ({min(edge):.4g}, {max(edge):.4g}) m/s "
                         "where the lead, and the pace, jump at weight 0.5; use 'linear' or 'harmonic'")
    return w.reshape(speeds.shape)


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
