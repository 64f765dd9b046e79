"""Blend spaces: any number of gaits (a slow walk, a walk, a jog, a run, a sprint), each played at
the speed the character moves, all in step.

A one-dimensional blend space over speed, as engines have them at run time (Unreal's blend spaces
with sync groups and markers, Unity's 1-D blend trees, Godot's BlendSpace1D), baked offline:

- A **gait** is a loop (`sync.loop_cycle`; a take is cut with it) whose footsteps are its markers:
  FootDown_L and FootDown_R, alternating. A **cycle** runs from a left touchdown to the next, and
  a loop may hold several. A gait's **speed** is its stride over its cycle (`gait_speeds`); a loop
  of several cycles counts their mean stride over their mean cycle.
- **Phase** counts touchdowns: marker j + fraction, j = 0 being each gait's first left touchdown,
  every gait at its own marker j modulo its marker count. So loops of any length or cycle count
  play in step, and a loop played twice over is the same gait (Godot's blend spaces stumble on
  clips of different cycle counts; engines' sync markers are this).
- At each output frame the target speed picks the two gaits whose speeds bracket it and the weight
  at which their synchronized blend travels at it (`sync.weight_for_speed`, linear mode). The
  bracketing pair only changes where a gait's own speed is crossed, where that gait plays alone,
  so nothing jumps. Below the slowest gait's speed, down to `RATE_RANGE[0]` of it, that gait
  plays alone and slower (playback rate target / its speed); above the fastest, up to
  `RATE_RANGE[1]` of it, faster. Beyond, a ValueError names the range.
- The rest is `sync.sync_blend`'s, over two gaits at a time: segment durations blend linearly
  and are divided by the rate, the phase advances dt / S each frame (monotonic whatever the target
  does), each gait is sampled at its own warped time and slerped, the root's floor steps (each
  gait's velocity x its playback rate) blend and integrate, and its residual blends like a joint.
  So the root covers the blended stride over the blended cycle: the target speed, with each gait's
  own speed changes within a cycle kept. At a constant target between two gaits the output is
  `sync.sync_blend` of them at `sync.weight_for_speed`'s weight (when the slower one's loop
  starts on its left touchdown, as `loop_cycle` cuts them); at a gait's own speed, that loop.
- Travel is read at one joint for all gaits, the deepest of their motion roots (takes of one
  skeleton may carry it on the hips in one and on a dummy root above them in another; the joints
  above it hold still), measured with the up and facing of the slowest gait moved by that joint
  (as `sync_blend` measures b with a's).
- FootDown_L / FootDown_R events sit where the blend's feet land: each gait's own touchdowns, as
  `contacts.footsteps` finds them on its loop played on, on the output's clock and blended by
  weight (a loop's markers, carried over from the take it was cut from, can be frames off them).

Times are seconds at every boundary.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import blend, contacts, footlock, quat, resample, root, skeleton, sync
from .body import FeetSpec, with_feet
from .clip import Clip

Array = npt.NDArray[np.float64]

# How far past its gaits' speeds a blend space reaches, as fractions of the slowest and the
# fastest gait's speed: that gait played slower or faster. Engines clamp or scale the rate too;
# a walk played much slower than 0.7x looks like slow motion, a sprint sped up past 1.3x too.
RATE_RANGE = (0.7, 1.3)
_FEET = ("FootDown_L", "FootDown_R")
# Output frames sampled per pass (as in sync_blend: temporaries stay in cache).
_BLOCK = 512


# -- gaits ---------------------------------------------------------------------------------------


class _Gait(NamedTuple):
    """A loop ready to blend: its marker times [n] (seconds, from its first left touchdown on,
    increasing, the last before the first one's time plus the period) and segment durations [n]
    (marker j to j + 1, the last wrapping), markers alternating L, R."""

    clip: Clip
    times: Array
    durations: Array
    period: float       # seconds
    cycles: int         # left touchdowns in the loop
    stride: float       # meters per cycle, the mean over the loop's cycles

    @property
    def cycle(self) -> float:
        """Seconds per cycle, the mean over the loop's cycles."""
        return float(self.durations.sum()) / self.cycles

    @property
    def speed(self) -> float:
        return self.stride / self.cycle


def _as_loop(clip: Clip, feet: FeetSpec | None) -> Clip:
    """The clip as a loop with footstep markers: a loop that has FootDown markers as it is, any
    other clip cut (or, a loop, marked) by `sync.loop_cycle`."""
    if not isinstance(clip, Clip):
        raise TypeError(f"gaits are Clips (loops or takes), not {type(clip).__name__}")
    clip = with_feet(clip, feet)
    if clip.loop and all(len(clip.events.get(k, ())) for k in _FEET):
        return clip
    return sync.loop_cycle(clip)


def _markers(clip: Clip) -> tuple[Array, Array]:
    """A loop's marker times in cycle order from its first left touchdown (as sync_blend lays out
    its second loop's markers: seconds, unwrapped past the period) and its segment durations,
    checked to alternate L, R."""
    period = clip.n_frames / clip.fps
    t = [np.mod(np.asarray(clip.events.get(k, ()), dtype=np.float64), period) for k in _FEET]
    names = np.concatenate([np.zeros(len(t[0]), dtype=np.int64), np.ones(len(t[1]), dtype=np.int64)])
    times = np.concatenate(t)
    order = np.argsort(times, kind="stable")
    times, names = times[order], names[order]
    n = len(times)
    label = clip.name or "a gait"
    if n == 0 or not np.any(names == 0):
        raise ValueError(f"{label} has no left touchdown (FootDown_L) to start its cycle; "
                         "cut it with sync.loop_cycle or mark its footsteps")
    idx = np.arange(n) + int(np.argmax(names == 0))
    names = names[idx % n]
    times = times[idx % n] + period * (idx // n)
    if n % 2 or np.any(names != np.arange(n) % 2) or np.any(np.diff(times) <= 0.0):
        found = ", ".join(f"{'LR'[k]} {s:.3f}" for k, s in zip(names, times, strict=True))
        raise ValueError(f"{label}: touchdowns must alternate left and right, one per time, for its "
                         f"cycles to be found (it has {found} s over a {period:.3f} s loop); check its "
                         "FootDown markers or cut it again with sync.loop_cycle")
    return times, np.diff(np.append(times, times[0] + period))


class _RootLoop(NamedTuple):
    trajectory: root.Trajectory
    residual: root.Residual
    step: Array     # [N, 3] floor step out of each frame, in its heading frame (file units)
    turn: Array     # [N] radians


def _root_loop(clip: Clip, up: Array, forward: Array, joint: int) -> _RootLoop:
    """The loop's world transform of `joint` split into trajectory and residual with the given up
    and facing, and its floor steps by the loop convention (`sync` module notes: the step out of
    the last frame is the mean of its neighbours)."""
    rot, pos = root.root_world_of(clip.rotations, clip.positions, clip.parents, joint)
    traj = root.trajectory_of(rot, pos, up, forward)
    res = root.residual_of(rot, pos, traj, up)
    n = clip.n_frames
    step, turn = np.zeros((n, 3)), np.zeros(n)
    step[:-1] = quat.mul_vec(quat.inv(root.yaw_quat(traj.heading[:-1], up)), np.diff(traj.position, axis=0))
    turn[:-1] = np.diff(traj.heading)
    step[-1] = 0.5 * (step[-2] + step[0])
    turn[-1] = 0.5 * (turn[-2] + turn[0])
    return _RootLoop(traj, res, step, turn)


def _integrate(start: Array, heading: Array, step: Array, up: Array) -> Array:
    """Floor positions [len(step) + 1, 3] from `start`, each step turned by the heading before it."""
    moves = quat.mul_vec(root.yaw_quat(heading[:len(step)], up), step)
    return np.asarray(start) + np.concatenate([np.zeros((1, 3)), np.cumsum(moves, axis=0)])


def _trajectory_at(loop: _RootLoop, t: Array, fps: float, up: Array) -> tuple[Array, Array]:
    """(floor positions [m, 3], headings [m]) of a loop's trajectory at times t (seconds, within
    two periods), linear between frames, the second cycle on from the first by the loop
    convention; on a frame of the first cycle, that frame's own."""
    traj = loop.trajectory
    n = len(loop.turn)
    heading = traj.heading[0] + np.concatenate([[0.0], np.cumsum(np.tile(loop.turn, 2))])
    path = _integrate(traj.position[0], heading, np.tile(loop.step, (2, 1)), up)
    path[:n], heading[:n] = traj.position, traj.heading
    x = resample.snap_frames(np.asarray(t, dtype=np.float64) * fps)
    i = np.minimum(np.floor(x), 2 * n - 1).astype(np.int64)
    f = x - i
    return path[i] + f[:, None] * (path[i + 1] - path[i]), heading[i] + f * (heading[i + 1] - heading[i])


def _travel(loop: _RootLoop, t: Array, fps: float) -> tuple[Array, Array]:
    """Each output step's floor displacement [n - 1, 3] and turn [n - 1] in the loop: the integral,
    over the loop's own time step, of its velocity (constant from each frame to the next, in that
    frame's heading frame), i.e. velocity x playback rate, exact at any rate and sub-frame time
    (as sync_blend's root travels)."""
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


def _travel_joint(clips: list[Clip]) -> int:
    """The joint whose world motion every gait's travel is read from: the deepest of the clips'
    motion roots. Takes may carry their travel on different joints of one skeleton (Bandai's
    dataset-1 walk on the hips, its run and dash loops on the dummy root above them); read at the
    deepest, each gait's travel is the same world motion, and the joints above it hold still."""
    parents = clips[0].parents
    joint = max((c.root for c in clips), key=lambda j: len(skeleton.chain(parents, j)))
    above = skeleton.chain(parents, joint)
    for c in clips:
        if c.root not in above:
            raise ValueError(f"{c.name or 'a gait'} carries its travel on {c.names[c.root]!r}, another "
                             f"gait on {c.names[joint]!r}, neither above the other: give them one motion "
                             "root (clip.root)")
    return joint


def _stride(clip: Clip, times: Array, travel: _RootLoop, up: Array) -> float:
    """Meters per cycle: the mean over the loop's cycles of `travel`'s floor chord from each left
    touchdown to the next, as the blend space plays them. For a loop that starts on its left
    touchdown (as `sync.loop_cycle` cuts them), frame 0 to the seam, as `sync.cycle_travel`
    measures it."""
    ends = np.append(times[::2], times[0] + clip.n_frames / clip.fps)
    p, _ = _trajectory_at(travel, ends, clip.fps, up)
    return float(np.linalg.norm(np.diff(p, axis=0), axis=-1).mean()) * clip.meters_per_unit


class _Space(NamedTuple):
    """Gaits; the joint every gait's travel is read from; the gait whose up and facing measure it;
    the gaits' root motion there, by index, where it was worked out to measure their strides."""

    gaits: list[_Gait]
    joint: int
    reference: Clip
    roots: dict[int, _RootLoop]
    given: list[int]    # where each gait stands in the list given


def _space(loops: Sequence[Clip], feet: FeetSpec | None) -> _Space:
    """The loops as gaits of one blend space (see `_travel_joint`), in the order given."""
    if isinstance(loops, Clip) or len(loops) < 1:
        raise TypeError("give the gaits as a list of loops or takes of one skeleton")
    clips = [_as_loop(c, feet) for c in loops]
    for c in clips[1:]:
        clips[0].check_compatible(c)
    joint = _travel_joint(clips)
    marks = [_markers(c) for c in clips]
    own = [c.root == joint for c in clips]
    # A gait moved by that joint is measured with its own up and facing (sync.travel_speed's).
    roots = {i: _root_loop(c, c.up, c.forward, joint) for i, c in enumerate(clips) if own[i]}
    strides = [_stride(c, marks[i][0], roots[i], c.up) if own[i] else math.nan for i, c in enumerate(clips)]
    # The slowest of them gives up and facing to all (a facing is in its joint's frame).
    ref = min(roots, key=lambda i: strides[i] * len(marks[i][0]) / 2 / float(marks[i][1].sum()))
    up, forward = clips[ref].up, clips[ref].forward
    for i, c in enumerate(clips):
        if not own[i]:
            roots[i] = _root_loop(c, up, forward, joint)
            strides[i] = _stride(c, marks[i][0], roots[i], up)
        elif not (np.array_equal(c.up, up) and np.array_equal(c.forward, forward)):
            del roots[i]  # the blend measures it again with the reference's
    gaits = [_Gait(c, m[0], m[1], c.n_frames / c.fps, len(m[0]) // 2, d)
             for c, m, d in zip(clips, marks, strides, strict=True)]
    return _Space(gaits, joint, clips[ref], roots, list(range(len(gaits))))


def gait_speeds(loops: Sequence[Clip], *, feet: FeetSpec | None = None) -> np.ndarray:
    """[G] each loop's travel speed in m/s, in the order given: its stride over its cycle, as
    `sync.travel_speed(loop, loop, 0.0)` gives it (a loop of several cycles: the mean of its
    cycles' strides over the mean cycle). Takes are cut with `sync.loop_cycle` first; feet as
    for `sync.loop_cycle`. Where the loops carry their travel on different joints of the skeleton
    (a dummy root above the hips in some, the hips in others), each is measured on the deepest of
    those joints, as `blend_space` plays them."""
    return np.array([g.speed for g in _space(loops, feet).gaits], dtype=np.float64)


def _gaits(loops: Sequence[Clip], feet: FeetSpec | None) -> _Space:
    """The loops as a blend space, gaits in order of speed: two or more, of one skeleton, no two
    at one speed."""
    if isinstance(loops, Clip) or len(loops) < 2:
        raise ValueError("a blend space needs two or more gaits (loops or takes of one skeleton)")
    space = _space(loops, feet)
    order = sorted(range(len(space.gaits)), key=lambda i: space.gaits[i].speed)
    gaits = [space.gaits[i] for i in order]
    for a, b in itertools.pairwise(gaits):
        if b.speed <= a.speed * (1.0 + 1e-9):
            raise ValueError(f"gaits {a.clip.name or '?'} and {b.clip.name or '?'} both travel at "
                             f"{a.speed:.4g} m/s: a blend space needs one gait per speed")
    return space._replace(gaits=gaits, roots={order.index(i): r for i, r in space.roots.items()}, given=order)


# -- the target speed ----------------------------------------------------------------------------


def _targets(speed: Any, times: Array) -> Array:
    """[n] target speeds (m/s) at the output times from a number, a callable or a (times, speeds)
    pair, as `sync_blend` reads its weight."""
    if callable(speed):
        v = None
        try:
            v = np.asarray(speed(times), dtype=np.float64)
        except (TypeError, ValueError):
            pass
        if v is None or v.ndim > 1 or (v.ndim == 1 and v.shape != times.shape):
            # Not vectorized: once per frame (user code; the blend itself never loops over frames).
            v = np.array([float(speed(float(t))) for t in times])
        return np.broadcast_to(v, times.shape).astype(np.float64)
    if isinstance(speed, tuple):
        if len(speed) != 2:
            raise TypeError(f"a speed curve is a (times, speeds) pair, not a {len(speed)}-tuple")
        kt, kv = (np.asarray(x, dtype=np.float64).reshape(-1) for x in speed)
        if kt.size == 0 or kt.shape != kv.shape:
            raise ValueError(f"speed curve: {kt.size} times and {kv.size} speeds; give one speed per time")
        if np.any(np.diff(kt) <= 0.0) or not np.all(np.isfinite(kt)):
            raise ValueError("speed curve times must be finite and increasing")
        return np.interp(times, kt, kv)
    if np.ndim(speed) != 0 or isinstance(speed, (str, bytes)):
        raise TypeError("speed is a number (m/s), a callable f(t_seconds) -> m/s or a (times, speeds) "
                        "pair; a bare array is refused (at which times would its values hold?)")
    return np.full(times.shape, float(speed))


class _Bracket(NamedTuple):
    """Per output frame: the slower and the faster gait of the pair (one gait twice where it
    plays alone), the weight of the faster and the playback rate (1 inside the gaits' range)."""

    lo: np.ndarray
    hi: np.ndarray
    weight: Array
    rate: Array


def _bracket(gaits: list[_Gait], v: Array, times: Array) -> _Bracket:
    speeds = np.array([g.speed for g in gaits])
    least, most = RATE_RANGE[0] * speeds[0], RATE_RANGE[1] * speeds[-1]
    tol = 1e-9 * speeds[-1]
    bad = ~((v >= least - tol) & (v <= most + tol))
    if np.any(bad):
        i = int(np.argmax(bad))
        listed = ", ".join(f"{g.clip.name or '?'} {g.speed:.3g}" for g in gaits)
        raise ValueError(f"{v[i]:.4g} m/s at {times[i]:.3f} s is outside the range the gaits reach, "
                         f"[{least:.4g}, {most:.4g}] m/s ({listed} m/s; {RATE_RANGE[0]:g}x the slowest "
                         f"to {RATE_RANGE[1]:g}x the fastest play that gait slower or faster)")
    G = len(gaits)
    # At a gait's own speed it is the slower of its pair, at weight 0 (the fastest: the faster, at
    # weight 1): it plays alone, and the pair changes there.
    lo = np.clip(np.searchsorted(speeds, v, side="right") - 1, 0, G - 2)
    hi = lo + 1
    rate = np.ones_like(v)
    below, above = v < speeds[0] - tol, v > speeds[-1] + tol
    rate[below] = v[below] / speeds[0]
    rate[above] = v[above] / speeds[-1]
    lo[below], hi[below] = 0, 0
    lo[above], hi[above] = G - 1, G - 1
    # sync.weight_for_speed's closed form (linear mode): w = (s T1 - D1) / ((D2 - D1) - s (T2 - T1)).
    t = np.array([float(g.durations.sum()) / g.cycles for g in gaits])
    d = np.array([g.stride for g in gaits])
    t1, t2, d1, d2 = t[lo], t[hi], d[lo], d[hi]
    pair = lo != hi
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(pair, (v * t1 - d1) / ((d2 - d1) - v * (t2 - t1)), 0.0)
    w = np.clip(np.nan_to_num(w), 0.0, 1.0)
    # The ends as reached, not their rounding (as weight_for_speed has them).
    w[pair & (np.abs(v - speeds[lo]) <= tol)] = 0.0
    w[pair & (np.abs(v - speeds[hi]) <= tol) & (hi == G - 1)] = 1.0
    return _Bracket(lo, hi, w, rate)


# -- the phase -----------------------------------------------------------------------------------


class _Durations:
    """Blended segment durations S[k, p] (seconds) at output frame k for column p = segment j mod
    the least common multiple of the gaits' marker counts, kept as the phase their pace gains
    from frame 0 to each frame (`cumulative`); a column is worked out when the phase reaches it."""

    def __init__(self, gaits: list[_Gait], b: _Bracket, dt: float) -> None:
        counts = np.array([len(g.durations) for g in gaits])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.flat = np.concatenate([g.durations for g in gaits])
        self.period = math.lcm(*(int(c) for c in counts[np.union1d(b.lo, b.hi)]))
        self.lo = (starts[b.lo], counts[b.lo])
        self.hi = (starts[b.hi], counts[b.hi])
        self.weight, self.rate, self.dt = b.weight, b.rate, dt
        self.columns: dict[int, list[float]] = {}

    def cumulative(self, j: int) -> list[float]:
        """[n] phase gained from frame 0 to each frame at segment j's pace (dt / S per step)."""
        p = j % self.period
        col = self.columns.get(p)
        if col is None:
            w = self.weight
            lo = self.flat[self.lo[0] + p % self.lo[1]]
            hi = self.flat[self.hi[0] + p % self.hi[1]]
            S = ((1.0 - w) * lo + w * hi) / self.rate
            col = self.columns[p] = np.concatenate([[0.0], np.cumsum(self.dt / S[:-1])]).tolist()
        return col


def _phase(S: _Durations, n: int, dt: float) -> tuple[Array, list[tuple[float, int]]]:
    """Phase [n] at the output frames from 0 (every gait at its first left touchdown), advancing by
    dt / S[k, segment] over each frame step k (a step that crosses a marker finishes its time in
    the next segment at that segment's pace, as sync_blend's phase does), and the marker crossings
    (time, global marker index). Each crossing is where the cumulative phase of its segment's
    pace has gained 1 since the last (a bisection), then the phase at every frame at once."""
    starts, gained = [0.0], [0.0]  # each segment's start (frames) and its pace's phase there
    j = 0
    while True:
        G = S.cumulative(j)
        target = _at(G, starts[-1]) + 1.0
        if target > G[-1]:
            break
        k = min(bisect.bisect_left(G, target), n - 1)
        x = k - 1 + (target - G[k - 1]) / (G[k] - G[k - 1])
        j += 1
        starts.append(x)
        gained.append(_at(S.cumulative(j), x))
    # A marker on the last frame may have been left a rounding short of it.
    last = S.cumulative(j)[-1] - gained[-1]
    if n > 1 and starts[-1] < n - 1 and 1.0 - last < resample.SNAP_FRAMES:
        j += 1
        starts.append(float(n - 1))
        gained.append(_at(S.cumulative(j), n - 1.0))
    frames = np.arange(n)
    seg = np.searchsorted(np.asarray(starts), frames, side="right") - 1
    u = np.empty(n)
    base = np.asarray(gained)
    for p in range(min(S.period, len(starts))):
        sel = seg % S.period == p
        if sel.any():
            cum = np.asarray(S.cumulative(p))
            u[sel] = seg[sel] + cum[sel] - base[seg[sel]]
    return u, [(x * dt, i) for i, x in enumerate(starts)]


def _at(G: list[float], x: float) -> float:
    """G (per frame) at frame position x, linear between frames."""
    if len(G) == 1:
        return G[0]
    i = min(int(x), len(G) - 2)
    return G[i] + (x - i) * (G[i + 1] - G[i])


def _local_times(u: Array, g: _Gait) -> Array:
    """A gait's own time (seconds, unwrapped over its loops) at each phase."""
    K = len(g.durations)
    j = np.floor(u)
    seg = (j % K).astype(np.int64)
    return g.times[seg] + (u - j) * g.durations[seg] + (j // K) * g.period


# -- poses ---------------------------------------------------------------------------------------


class _Source(NamedTuple):
    """A gait ready to sample: the slerp table of its moving joints' local rotations, its local
    translations [N, J, 3] (the root's are its residual, so it blends like a joint), its rate."""

    table: quat.SlerpTable
    positions: Array
    fps: float


def _sources(gaits: list[_Gait], roots: dict[int, _RootLoop], joint: int,
             ref: Clip) -> tuple[dict[int, _Source], Array, Array, np.ndarray, np.ndarray]:
    """(sources by gait, rotations [J, 4] and translations [J, 3] of the joints no used gait moves,
    the joints whose rotations move, those whose translations move). The joints above `joint` hold
    `ref`'s first pose in every gait (their motion is in the travel)."""
    above = skeleton.chain(ref.parents, joint)[:-1]
    rots, poss = {}, {}
    for g, r in roots.items():
        clip = gaits[g].clip
        rot, pos = clip.rotations.copy(), clip.positions.copy()
        rot[:, joint], pos[:, joint] = r.residual.rotation, r.residual.position
        rot[:, above], pos[:, above] = ref.rotations[0, above], ref.positions[0, above]
        rots[g], poss[g] = rot, pos
    first = min(roots)
    still_rot, still_pos = rots[first][0], poss[first][0]
    # Joints that hold one rotation (translation) in every gait need no sampling (CMU: 6 of 31).
    same_rot = np.ones(len(still_rot), dtype=bool)
    same_pos = same_rot.copy()
    for g in roots:
        same_rot &= np.all(rots[g] == still_rot, axis=(0, 2))
        same_pos &= np.all(poss[g] == still_pos, axis=(0, 2))
    moving, moved = np.flatnonzero(~same_rot), np.flatnonzero(~same_pos)
    sources = {g: _Source(quat.slerp_table(rots[g][:, moving]), poss[g][:, moved], gaits[g].clip.fps)
               for g in roots}
    return sources, still_rot, still_pos, moving, moved


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


def _poses(sources: dict[int, _Source], times: dict[int, Array], lo: np.ndarray, hi: np.ndarray,
           weight: Array, still: tuple[Array, Array], moving: np.ndarray,
           moved: np.ndarray) -> tuple[Array, Array]:
    """Rotations [n, J, 4] and translations [n, J, 3]: over each run of frames with one pair, both
    gaits sampled at their warped times (slerp / lerp between their frames, wrapping at the seam)
    and blended as sync_blend blends its two loops; one gait alone where the other has no weight."""
    n = len(lo)
    rot, pos = np.empty((n, *still[0].shape)), np.empty((n, *still[1].shape))
    rot[:] = still[0]
    pos[:] = still[1]
    # Runs of one pair: frames where the faster has no weight slerp to the slower itself (t = 0).
    for a, z in _runs(lo, hi):
        ga, gb = int(lo[a]), int(hi[a])
        pair = ga != gb and bool(np.any(weight[a:z] > 0.0))
        gb = gb if pair else ga
        A, B = sources[ga], sources[gb]
        ia, na, fa = _frame_positions(times[ga][a:z], A.fps, len(A.positions))
        ib, nb, fb = _frame_positions(times[gb][a:z], B.fps, len(B.positions))
        t = weight[a:z, None]
        tm = np.broadcast_to(t, (z - a, len(moving)))
        for k in range(0, z - a, _BLOCK):
            f = slice(k, k + _BLOCK)
            q = quat.sample_table(A.table, ia[f], fa[f])
            if pair:
                q = quat.slerp_planes(q, quat.sample_table(B.table, ib[f], fb[f]), tm[f])
            block = rot[a + k:a + k + q.shape[1]]
            block[:, moving] = np.moveaxis(q, 0, -1)
        if moved.size:
            p = blend.lerp(A.positions[ia], A.positions[na], fa[:, None])
            if pair:
                p = blend.lerp(p, blend.lerp(B.positions[ib], B.positions[nb], fb[:, None]),
                               np.broadcast_to(t, p.shape[:2]))
            pos[a:z, moved] = p
    return rot, pos


# -- the blend space -----------------------------------------------------------------------------


class _Plan(NamedTuple):
    """What a blend space plays, frame by frame: the gaits, the output times, each frame's pair and
    weight, the second gait that shows (the faster where it has weight, else the slower again),
    the phase's marker crossings and each gait's warped time (seconds, over its loops)."""

    space: _Space
    fps: float
    times: Array
    bracket: _Bracket
    show: np.ndarray
    crossings: list[tuple[float, int]]
    warped: dict[int, Array]


def _plan(loops: Sequence[Clip], speed: Any, duration: float, fps: float | None,
          feet: FeetSpec | None) -> _Plan:
    space = _gaits(loops, feet)
    gaits = space.gaits
    rate = max(g.clip.fps for g in gaits) if fps is None else float(fps)
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"fps must be positive and finite, not {fps}")
    duration = float(duration)
    if not (duration >= 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be >= 0 seconds, not {duration}")
    n = math.floor(duration * rate + 1e-9) + 1
    times = np.arange(n) / rate
    b = _bracket(gaits, _targets(speed, times), times)
    u, crossings = _phase(_Durations(gaits, b, 1.0 / rate), n, 1.0 / rate)
    show = np.where(b.weight > 0.0, b.hi, b.lo)
    warped = {int(g): _local_times(u, gaits[g]) for g in np.union1d(b.lo, show)}
    return _Plan(space, rate, times, b, show, crossings, warped)


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

    The output starts at phase 0, every gait at its first left touchdown, on the trajectory of
    the slower gait of the pair selected at t = 0. `events` hold FootDown_L / FootDown_R at the
    blend's touchdowns: each gait's own (`contacts.footsteps` on its loop played on) at its warped
    time, the pair's two blended by weight (sub-frame seconds).
    """
    plan = _plan(loops, speed, duration, fps, feet)
    space, b, show, warped = plan.space, plan.bracket, plan.show, plan.warped
    gaits, j, first = space.gaits, space.joint, space.reference
    up = first.up
    roots = _roots(plan)
    sources, still_rot, still_pos, moving, moved = _sources(gaits, roots, j, first)
    rot, pos = _poses(sources, warped, b.lo, b.hi, b.weight, (still_rot, still_pos), moving, moved)
    residual = root.Residual(pos[:, j].copy(), rot[:, j].copy())
    trajectory = _blended_trajectory(gaits, roots, warped, b.lo, show, b.weight, up)
    _place(rot, pos, first.parents, j, *root.compose(trajectory, residual, up))
    own = {g: _own_offsets(gaits[g], roots[g], j, first) for g in warped}
    out = Clip(first.names, first.parents, first.offsets, rot, pos, plan.fps, channels=first.channels,
               end_parents=first.end_parents, end_offsets=first.end_offsets, events=_touchdowns(plan, own),
               name="+".join(x for x in (gaits[g].clip.name for g in warped) if x), root=j, up=up,
               forward=first.forward, meters_per_unit=first.meters_per_unit, motion_start=0)
    if lock_feet:
        out = footlock.lock_feet(out, contacts=_laid_out(plan))
    return out


def blend_space_contacts(loops: Sequence[Clip], speed: Any, duration: float, *, fps: float | None = None,
                         feet: FeetSpec | None = None) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: the gaits' contacts (`contacts.contacts` of each loop) on `blend_space`'s
    output frames with the same arguments: planted where every gait that shows is, each at the
    frame nearest its warped time. What `lock_feet=True` holds."""
    return _laid_out(_plan(loops, speed, duration, fps, feet))


def gait_weights(loops: Sequence[Clip], speed: Any, duration: float, *, fps: float | None = None,
                 feet: FeetSpec | None = None) -> np.ndarray:
    """[n, G] each gait's weight on `blend_space`'s output frames (same arguments), gaits in the
    order given: at most two non-zero on a frame, adjacent in speed, summing to 1."""
    plan = _plan(loops, speed, duration, fps, feet)
    order, b = np.array(plan.space.given), plan.bracket
    out = np.zeros((len(plan.times), len(order)))
    frames = np.arange(len(plan.times))
    np.add.at(out, (frames, order[b.lo]), 1.0 - b.weight)
    np.add.at(out, (frames, order[b.hi]), b.weight)
    return out


def _roots(plan: _Plan) -> dict[int, _RootLoop]:
    """Each gait's root motion at the travel joint, with the reference's up and facing."""
    space, ref = plan.space, plan.space.reference
    return {g: space.roots[g] if g in space.roots else
            _root_loop(space.gaits[g].clip, ref.up, ref.forward, space.joint) for g in plan.warped}


def _place(rot: Array, pos: Array, parents: np.ndarray, joint: int, world_rot: Array,
           world_pos: Array) -> None:
    """In place: `joint`'s local rotations [T, 4] and translations [T, 3] that put it at the given
    world ones, under joints above it that hold their frame 0 pose (as `root.with_root_world_of`,
    the parent's world transform worked out once)."""
    above = skeleton.chain(parents, joint)[:-1]
    if not above:
        rot[:, joint], pos[:, joint] = world_rot, world_pos
        return
    grot, gpos = quat.fk(rot[:1, above], pos[:1, above], np.arange(len(above)) - 1)
    parent, at = grot[0, -1], gpos[0, -1]
    rot[:, joint] = quat.inv_mul(parent, world_rot)
    pos[:, joint] = quat.mul_vec(quat.inv(parent), world_pos - at)


def _blended_trajectory(gaits: list[_Gait], roots: dict[int, _RootLoop], warped: dict[int, Array],
                        lo: np.ndarray, show: np.ndarray, weight: Array, up: Array) -> root.Trajectory:
    """The blend's floor trajectory: each gait's steps and turns over its warped time steps, the
    pair's blended by the weight of each step's first frame, integrated from the slower gait's
    trajectory at its time at frame 0."""
    n = len(lo)
    step_a, step_b = np.zeros((n - 1, 3)), np.zeros((n - 1, 3))
    turn_a, turn_b = np.zeros(n - 1), np.zeros(n - 1)
    for g, r in roots.items():
        step, turn = _travel(r, warped[g], gaits[g].clip.fps)
        for which, s_out, t_out in ((lo, step_a, turn_a), (show, step_b, turn_b)):
            sel = which[:-1] == g
            s_out[sel], t_out[sel] = step[sel], turn[sel]
    w = weight[:-1]
    step = blend.lerp(step_a, step_b, w)
    turn = blend.lerp(turn_a[:, None], turn_b[:, None], w)[:, 0]
    # From the gait that plays alone at t = 0 if one does, else the slower (as sync_blend from a).
    g0 = int(show[0] if weight[0] == 1.0 else lo[0])
    p0, h0 = _trajectory_at(roots[g0], warped[g0][:1], gaits[g0].clip.fps, up)
    heading = h0[0] + np.concatenate([[0.0], np.cumsum(turn)])
    return root.Trajectory(_integrate(p0[0], heading, step, up), heading)


# -- footsteps ----------------------------------------------------------------------------------


def _played(g: _Gait, travel: _RootLoop, joint: int, ref: Clip, copies: int) -> Clip:
    """The gait's loop played on for `copies` periods as the blend space plays it: `joint`'s world
    transform from its trajectory integrated on by the loop convention, and its residual; the
    joints above it hold `ref`'s first pose."""
    clip, up = g.clip, ref.up
    step, turn = np.tile(travel.step, (copies, 1)), np.tile(travel.turn, copies)
    heading = travel.trajectory.heading[0] + np.concatenate([[0.0], np.cumsum(turn[:-1])])
    position = _integrate(travel.trajectory.position[0], heading, step[:-1], up)
    residual = root.Residual(np.tile(travel.residual.position, (copies, 1)),
                             np.tile(travel.residual.rotation, (copies, 1)))
    rot, pos = np.tile(clip.rotations, (copies, 1, 1)), np.tile(clip.positions, (copies, 1, 1))
    above = skeleton.chain(clip.parents, joint)[:-1]
    rot[:, above], pos[:, above] = ref.rotations[0, above], ref.positions[0, above]
    _place(rot, pos, clip.parents, joint, *root.compose(root.Trajectory(position, heading), residual, up))
    # The loop's own body map: the same skeleton and feet (root, up and facing are given).
    return Clip(clip.names, clip.parents, clip.offsets, rot, pos, clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, loop=False, name=clip.name,
                root=joint, up=up, forward=ref.forward, meters_per_unit=clip.meters_per_unit,
                motion_start=0, body=clip.body)


def _own_offsets(g: _Gait, travel: _RootLoop, joint: int, ref: Clip) -> Array:
    """[n] seconds from each marker to the gait's own touchdown of that foot, as
    `contacts.footsteps` finds it on the loop played on for three periods, in the middle one (as a
    blend's feet are read, and the same for a loop played twice over); 0 where none is found
    within half the shorter neighbouring segment. Markers carried over from the take a loop was
    cut from can be frames off where its own feet land."""
    found = contacts.footsteps(_played(g, travel, joint, ref, 3))
    offsets = np.zeros(len(g.times))
    reach = 0.5 * np.minimum(g.durations, np.roll(g.durations, 1))
    for k, t in enumerate(g.times + g.period):
        own = np.asarray(found.get(_FEET[k % 2], ()), dtype=np.float64)
        if own.size:
            d = own[np.argmin(np.abs(own - t))] - t
            offsets[k] = d if abs(d) <= reach[k] else 0.0
    return offsets


def _laid_out(plan: _Plan) -> dict[str, np.ndarray]:
    """{foot: bool [n]}: planted where every gait that shows is (`contacts.contacts` of its loop,
    as `sync.sync_contacts` lays out two), each at the frame nearest its warped time."""
    lo, show = plan.bracket.lo, plan.show
    own = {g: contacts.contacts(plan.space.gaits[g].clip) for g in plan.warped}
    out = {foot: np.ones(len(lo), dtype=bool) for foot in sorted(set.intersection(*map(set, own.values())))}
    for g, planted in own.items():
        clip = plan.space.gaits[g].clip
        frame = np.rint(plan.warped[g] * clip.fps).astype(np.int64) % clip.n_frames
        shows = (lo == g) | (show == g)
        for foot in out:
            out[foot] &= planted[foot][frame] | ~shows
    return out


def _touchdowns(plan: _Plan, own: dict[int, Array]) -> dict[str, Array]:
    """{FootDown_L, FootDown_R: seconds}: the blend's touchdowns. Each marker the phase crosses
    (and the next one) stands for a touchdown of its foot; each gait's own touchdown for it is put
    on the output's clock through its warped time, and the pair's two are blended by the weight
    where the marker is crossed."""
    gaits, times, b = plan.space.gaits, plan.times, plan.bracket
    marks = np.array([j for _, j in plan.crossings] + [plan.crossings[-1][1] + 1])
    at = np.array([t for t, _ in plan.crossings] + [times[-1]])
    # The pair and weight of the step the marker is crossed in (a step's are its first frame's).
    frame = np.searchsorted(times, at + 1e-9, side="right") - 1
    lo, show, w = b.lo[frame], plan.show[frame], b.weight[frame]
    t_lo, t_show = np.zeros(len(marks)), np.zeros(len(marks))
    for g, warped in plan.warped.items():
        gait = gaits[g]
        K = len(gait.times)
        at_own = gait.times[marks % K] + (marks // K) * gait.period + own[g][marks % K]
        on_clock = np.interp(at_own, warped, times, left=np.nan, right=np.nan)
        t_lo[lo == g], t_show[show == g] = on_clock[lo == g], on_clock[show == g]
    t = np.where(lo == show, t_lo, (1.0 - w) * t_lo + w * t_show)
    keep = np.isfinite(t) & (t >= 0.0) & (t <= times[-1] + 1e-9)
    return {foot: np.sort(t[keep & (marks % 2 == i)]) for i, foot in enumerate(_FEET)}
