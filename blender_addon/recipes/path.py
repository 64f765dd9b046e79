"""Walk Along Path (and `stride follow-path`) without bpy: the path as the user gives it (a CSV file of
floor points, a circle, a line, a curve object's points, an animated object's track) put in the gaits'
units and axes, the speed along it (a constant, Auto, or the armature's Speed keyed over time, made a
speed per meter of path), the core's `path.follow` on them, and its warnings naming the frame.

A path given in meters on the floor (the CSV file, --circle, --line) is laid out from where the first
gait starts: x ahead (the way it faces over its take), y to its left, (0, 0) under its root on its
first frame. A curve object's points (a Bezier spline's sampled by `bezier_points`) and an animated
object's track come from Blender in world space, which a clip's space is (bridge/space.py):
`clip_points` turns them into it."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..core import path, quat, root
from ..core.clip import Clip
from ..errors import JobError, chosen
from ..options import AUTO_PATH_SPEED, FollowPathOptions
from ..timing import Timing
from ..wording import UI, Face
from .actions import Space

# -- a path file ----------------------------------------------------------------------------------


class PathFileError(JobError):
    """A path file that cannot be read; the message names the file and the line."""


class PathFile(NamedTuple):
    """A path as a CSV file gives it: floor points in meters (x ahead, y to the left) and, for a
    timed target (rows t,x,y), the second each is reached at."""

    xy: np.ndarray  # [N, 2] meters
    times: np.ndarray | None  # [N] seconds, increasing; None for a path (rows x,y)


# The header a file may start with, and the columns it names.
HEADERS = {("x", "y"): 2, ("t", "x", "y"): 3}
# Rows a path file may have (a point every centimeter for 10 km): a bigger file is refused before
# it is read on (no unbounded memory for a file that is no path).
MAX_ROWS = 1_000_000


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PathFileError(f"{where}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise PathFileError(f"{where}: {text.strip()!r} is not a finite number")
    return value


def read_path_csv(file: str | Path) -> PathFile:
    """The rows of a path file: `x,y` (meters on the floor: x along the first gait's facing, y to its
    left) or `t,x,y` (a timed target: seconds, increasing), comma separated, every row alike; an
    optional header `x,y` or `t,x,y`, blank lines and lines starting with # skipped. PathFileError
    naming the file and line for anything else."""
    name = str(file)
    try:
        handle = open(file, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise PathFileError(f"cannot read the path file {name}: {exc.strerror or exc}") from None
    rows: list[list[float]] = []
    columns = 0
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                where = f"{name}, line {number}"
                cells = [c.strip() for c in text.split(",")]
                if not rows and columns == 0 and tuple(c.lower() for c in cells) in HEADERS:
                    columns = HEADERS[tuple(c.lower() for c in cells)]
                    continue
                if len(cells) not in (2, 3):
                    raise PathFileError(f"{where}: {len(cells)} values; each row is x,y (meters on the "
                                        "floor) or t,x,y (seconds, then meters)")
                if columns and len(cells) != columns:
                    kind = "x,y" if columns == 2 else "t,x,y"
                    raise PathFileError(f"{where}: {len(cells)} values where the rows before have {columns} "
                                        f"({kind}); give every row alike")
                columns = len(cells)
                rows.append([_number(c, where) for c in cells])
                if columns == 3 and len(rows) > 1 and rows[-1][0] <= rows[-2][0]:
                    raise PathFileError(f"{where}: time {rows[-1][0]:g} s is not after the row before's "
                                        f"{rows[-2][0]:g} s; a timed target's times increase")
                if len(rows) > MAX_ROWS:
                    raise PathFileError(f"{where}: more than {MAX_ROWS} rows; thin the path out (a point "
                                        "every few centimeters is plenty)")
        except UnicodeDecodeError:
            raise PathFileError(f"{name}: not a text file (rows x,y or t,x,y, UTF-8)") from None
    if len(rows) < 2:
        raise PathFileError(f"{name}: {len(rows)} point(s); a path needs two or more rows x,y (or t,x,y)")
    table = np.array(rows, dtype=np.float64)
    if columns == 3:
        return PathFile(table[:, 1:], table[:, 0])
    return PathFile(table, None)


# -- paths in meters on the floor, laid out from the first gait's start -----------------------------


class Floor(NamedTuple):
    """The floor a path in meters is laid on, in a clip's units and axes: its origin (on the floor),
    the way ahead and the way to the left (unit, on the floor)."""

    origin: np.ndarray  # [3] file units
    ahead: np.ndarray  # [3]
    left: np.ndarray  # [3]
    meters_per_unit: float

    def place(self, xy: np.ndarray) -> np.ndarray:
        """[N, 3] file units of floor points xy [N, 2] in meters (x ahead, y to the left)."""
        xy = np.asarray(xy, dtype=np.float64)
        across = np.outer(xy[:, 0], self.ahead) + np.outer(xy[:, 1], self.left)
        return self.origin + across / self.meters_per_unit


def start_floor(clip: Clip) -> Floor:
    """The floor of a take's start: origin under its root on its first frame, ahead the way it faces
    on average over the take (its root's facing, as a straight walk travels), left = up x ahead
    (the performer's left in a right-handed frame)."""
    up = clip.up
    rot, pos = root.root_world(clip)
    origin = pos[0] - up * (pos[0] @ up)
    facing = quat.mul_vec(rot, clip.forward).mean(axis=0)
    facing -= up * (facing @ up)
    norm = float(np.linalg.norm(facing))
    ahead = facing / norm if norm > 1e-9 else root.floor_axes(up, clip.forward)[0]
    return Floor(origin, ahead, np.cross(up, ahead), clip.meters_per_unit)


# Meters between the points of a circle, and of a curve object's Bezier segments (a chord of 2 cm
# strays 0.03 mm from a circle of 1.5 m).
CIRCLE_SPACING = 0.02
# The largest circle or line asked for: 10 km (a typo is no bake of hours).
LONGEST = 10_000.0


def _length(value: float, what: str) -> float:
    if not (math.isfinite(value) and 0.0 < value <= LONGEST):
        raise JobError(f"{what} must be above 0 m and at most {LONGEST:g} m, not {value:g}")
    return float(value)


def circle_xy(radius: float, what: str = "--circle") -> np.ndarray:
    """[N, 2] meters: a circle of `radius` m from (0, 0), heading ahead (+x) and turning left
    (counter-clockwise seen from above) once round, back to (0, 0)."""
    r = _length(radius, what)
    n = max(64, math.ceil(2.0 * math.pi * r / CIRCLE_SPACING))
    phi = np.linspace(0.0, 2.0 * math.pi, n + 1)
    return np.stack([r * np.sin(phi), r * (1.0 - np.cos(phi))], axis=-1)


def line_xy(length: float, what: str = "--line") -> np.ndarray:
    """[2, 2] meters: straight ahead from (0, 0) for `length` m."""
    return np.array([[0.0, 0.0], [_length(length, what), 0.0]])


# -- points from Blender's world ----------------------------------------------------------------

# Points a Bezier segment is sampled at, at most (a segment a kilometer long still bakes).
SEGMENT_MAX = 20_000


def world_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """[N, 3] world points of points [N, 3] in an object's space, `matrix` [4, 4] its world matrix."""
    return np.asarray(points @ matrix[:3, :3].T + matrix[:3, 3])


def _bezier(corners: np.ndarray, n: int) -> np.ndarray:
    """[n, 3] points of a cubic Bezier segment from corners [4, 3] (knot, handle, handle, knot), both
    ends included."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    u = 1.0 - t
    k0, h0, h1, k1 = corners
    return np.asarray(u ** 3 * k0 + 3.0 * u * u * t * h0 + 3.0 * u * t * t * h1 + t ** 3 * k1)


def _samples(corners: np.ndarray, unit_m: float, resolution: int) -> int:
    """Points for a segment whose control polygon is `corners` [k, 3] (world, scene units)."""
    length = float(np.linalg.norm(np.diff(corners, axis=0), axis=-1).sum()) * unit_m
    return int(min(SEGMENT_MAX, max(resolution + 1, math.ceil(length / CIRCLE_SPACING) + 1)))


def bezier_points(co: np.ndarray, left: np.ndarray, right: np.ndarray, cyclic: bool, unit_m: float = 1.0,
                  resolution: int = 12) -> np.ndarray:
    """[N, 3] points along a Bezier spline of knots `co` [n, 3] and their handles `left`, `right`
    [n, 3] (scene units, `unit_m` meters each), in its order, from its first knot: each segment
    sampled every `CIRCLE_SPACING` m of its control polygon, at least at `resolution` + 1 points
    (Blender's own, a spline's Resolution U), at most `SEGMENT_MAX`; a cyclic spline closes on its
    first knot."""
    n = len(co)
    segments = list(range(n - 1)) + ([n - 1] if cyclic and n > 1 else [])
    pieces = [co[:1]]
    for i in segments:
        j = (i + 1) % n
        corners = np.stack([co[i], right[i], left[j], co[j]])
        pieces.append(_bezier(corners, _samples(corners, unit_m, resolution))[1:])
    return np.concatenate(pieces)


def clip_points(world_points: np.ndarray, world: np.ndarray, where: Space) -> np.ndarray:
    """[N, 3] points in an armature's clip space (its units and axes) of points [N, 3] in Blender's
    world space; `world` [4, 4] the armature's world matrix and `where` its clip space (as
    bridge.space gives them), read as the bridge reads the armature's bones: clip = conversion^T
    @ armature / scale + shift."""
    p = np.asarray(world_points, dtype=np.float64)
    local = (p - world[:3, 3]) @ np.linalg.inv(world[:3, :3]).T
    return np.asarray(local @ where.conversion / where.scale + where.shift)


def floor_length(points: np.ndarray, clip: Clip) -> float:
    """Meters along the polyline `points` [N, 3] (clip units) over the floor (`clip`'s up left out)."""
    floor = points - np.outer(points @ clip.up, clip.up)
    return float(np.linalg.norm(np.diff(floor, axis=0), axis=-1).sum()) * clip.meters_per_unit


# Meters an animated target must travel over the floor to be followed (less is standing still).
STILL_M = 0.01


class Track(NamedTuple):
    """An object's floor track followed in time: seconds from the bake's first frame, positions."""

    times: np.ndarray  # [T] seconds
    positions: np.ndarray  # [T, 3] clip units


def target_track(frames: np.ndarray, positions: np.ndarray, timing: Timing, up: np.ndarray,
                 meters_per_unit: float, name: str) -> Track:
    """The track of object `name` sampled on the scene's `frames` (from the bake's first frame,
    `timing`, to the scene's end) at `positions` [T, 3] (clip units), as it is followed: up to the
    frame it last moves on the floor (after that it stands, and the bake ends). JobError when it
    never moves: no curve and no animation."""
    frames = np.asarray(frames, dtype=np.float64)
    p = np.asarray(positions, dtype=np.float64)
    floor = p - np.outer(p @ up, up)
    if len(floor) >= 2:
        step = np.linalg.norm(np.diff(floor, axis=0), axis=-1) * meters_per_unit
        moving = np.flatnonzero(step > 1e-6)
    else:
        step, moving = np.zeros(0), np.zeros(0, dtype=np.int64)
    if len(frames) < 2 or float(step.sum()) < STILL_M:
        span = f"frames {frames[0]:g}-{frames[-1]:g}" if len(frames) else "no frames"
        raise JobError(f"{name!r} is no curve and does not move over the floor ({span}, from the current "
                       "frame to the scene's end): choose a curve object as the Target, or key the object's "
                       "location over the frames the character walks")
    last = int(moving[-1]) + 2  # the frame it stops on, included
    return Track(np.asarray(timing.seconds(frames[:last])), p[:last])


# -- the gaits and the speed --------------------------------------------------------------------


def _gaits_hint(face: Face) -> str:
    """Where the user of `face` gives the gaits a path is walked with."""
    if face.by == "label":
        return ("add the action of a walk (and a run, ...) in the Gaits panel (Add Gait, or Gaits from "
                "Selected)")
    return "give one or more GAIT.bvh takes of one skeleton"


def check_any(names: Sequence[str], owner: str = "", face: Face = UI) -> None:
    """A path is walked with one gait or more (`names`, of `owner`, the armature that holds them)."""
    if not names:
        has = f"{owner!r} has " if owner else ""
        raise JobError(f"{has}no gaits to walk with: {_gaits_hint(face)}")


def constant_speed(options: FollowPathOptions, speeds: Sequence[float], face: Face = UI) -> float:
    """The one speed along the path: Speed, or for Auto (0) the slowest gait's own."""
    chosen(options, "speed_mode", face)
    v = float(options.speed)
    if not (math.isfinite(v) and v >= 0.0):
        raise JobError(f"{face.called(FollowPathOptions, 'speed')} must be 0 (Auto) or above, not {v:g}")
    return float(min(speeds)) if v == AUTO_PATH_SPEED else v


def speed_along(times: np.ndarray, speeds: np.ndarray, length: float,
                within: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """A speed keyed over time (`times` [n] seconds from the bake's start, `speeds` [n] m/s, linear
    between) as `path.follow` takes a speed: (distances, speeds) along the path. The distance
    covered by each time is the integral of the speed as it is played (held `within` what the gaits
    reach, as the core plays it), the last speed held on to the path's `length` (meters)."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    v = np.asarray(speeds, dtype=np.float64).reshape(-1)
    if t.size == 0 or t.shape != v.shape or np.any(np.diff(t) <= 0.0) or not np.all(np.isfinite(v)):
        raise JobError("the speed keys must be one speed per time, at increasing times")
    played = np.clip(v, *within)
    s = np.concatenate([[0.0], np.cumsum(np.diff(t) * 0.5 * (played[1:] + played[:-1]))])
    if s[-1] < length:
        s, v = np.append(s, float(length)), np.append(v, v[-1])
        if len(s) == 2 and s[0] == s[1]:
            s[1] += 1.0
    return s, v


# "at 3.20 m", "from 1.00 to 3.00 m": distances along the path (a radius follows "of", a speed is m/s);
# "at 2.50 s", "from 1.00 to 3.00 s": times into a target's track.
_NAMED = {unit: re.compile(rf"\b(?:from (\d+(?:\.\d+)?) to|at) (\d+(?:\.\d+)?) {unit}\b(?!/)")
          for unit in ("m", "s")}


def with_frames(message: str, frame_at: Callable[[np.ndarray], np.ndarray], unit: str = "m") -> str:
    """A PathWarning's message with the frames of the distances along the path (`unit` "m") or the
    times into a target's track ("s") it names after them ("at 1.20 m (frame 57)", "from 0.00 to
    2.50 m (frames 10-162)"; `frame_at`: frames of distances in meters, or of seconds)."""
    def named(m: re.Match[str]) -> str:
        values = [float(g) for g in m.groups() if g is not None]
        frames = [f"{f:.0f}" for f in frame_at(np.array(values))]
        return f"{m.group(0)} (frame{'s' if len(frames) > 1 else ''} {'-'.join(frames)})"

    return _NAMED[unit].sub(named, message)


def travelled(clip: Clip, points: np.ndarray) -> np.ndarray:
    """[T] meters along the polyline `points` [N, 3] (clip units, up ignored) where the clip's root
    is on each frame: the arc length of its nearest point on the floor, searched from 0.5 m behind
    to 2 m ahead of the frame before's (a path that crosses itself is followed along, not jumped
    across), never going back."""
    up, mpu = clip.up, clip.meters_per_unit
    p = np.asarray(points, dtype=np.float64)
    p = (p - np.outer(p @ up, up)) * mpu
    a, ab = p[:-1], np.diff(p, axis=0)
    length2 = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-18)
    arc = np.concatenate([[0.0], np.cumsum(np.sqrt(length2))])
    q = root.root_world(clip)[1] * mpu
    q -= np.outer(q @ up, up)
    out = np.empty(len(q))
    last = 0.0
    for i, x in enumerate(q):  # (one nearest-point search a frame, over a few meters of path)
        near = np.flatnonzero((arc[1:] >= last - 0.5) & (arc[:-1] <= last + 2.0))
        if near.size == 0:
            near = np.arange(len(a))
        t = np.clip(np.einsum("ij,ij->i", x - a[near], ab[near]) / length2[near], 0.0, 1.0)
        d = np.linalg.norm(a[near] + t[:, None] * ab[near] - x, axis=-1)
        k = int(np.argmin(d))
        last = max(last, float(arc[near[k]] + t[k] * np.sqrt(length2[near[k]])))
        out[i] = last
    return out


# -- the bake -------------------------------------------------------------------------------------


def _warned_again(caught: list[warnings.WarningMessage], rewrite: Callable[[str], str]) -> None:
    """The warnings `caught`, warned again: each PathWarning's message through `rewrite`."""
    for w in caught:
        if issubclass(w.category, path.PathWarning):
            warnings.warn(rewrite(str(w.message)), path.PathWarning, stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def follow_clip(loops: Sequence[Clip], points: np.ndarray, speed: Any, *, options: FollowPathOptions,
                idle: Clip | None = None, fps: float | None = None, timing: Timing | None = None) -> Clip:
    """`path.follow` of the gaits along `points` (clip units) at `speed` (m/s, or (distances,
    speeds)), from and into `idle` (a standing clip; None: none), Lock Feet as the options say, at
    `fps` (None: the fastest gait's); its PathWarnings warned again with the frame of each distance
    they name, where the output's root is there (`travelled`; `timing`: the bake's frames; without
    it, frames counted from 1 at the output's rate)."""
    rate = float(fps) if fps is not None else max(c.fps for c in loops)
    when = timing if timing is not None else Timing(1.0, rate)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", path.PathWarning)
        try:
            clip = path.follow(list(loops), points, speed, fps=rate, lock_feet=options.lock_feet, idle=idle)
        except ValueError as exc:
            raise JobError(str(exc)) from None
    if any(issubclass(w.category, path.PathWarning) for w in caught):
        along = travelled(clip, points)
        frames = np.arange(clip.n_frames, dtype=np.float64)
        _warned_again(caught, lambda text: with_frames(
            text, lambda d: when.frame(np.interp(d, along, frames) / clip.fps)))
    else:
        _warned_again(caught, str)
    return clip


def target_clip(loops: Sequence[Clip], track: Track, *, options: FollowPathOptions, idle: Clip | None = None,
                fps: float | None = None, timing: Timing | None = None) -> Clip:
    """`path.follow_target` of the gaits after a target's `track` (its times from the bake's first
    frame), from and into `idle`, Lock Feet as the options say, at `fps` (None: the fastest gait's);
    its PathWarnings warned again with the frame of each of the target's times they name."""
    rate = float(fps) if fps is not None else max(c.fps for c in loops)
    when = timing if timing is not None else Timing(1.0, rate)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", path.PathWarning)
        try:
            clip = path.follow_target(list(loops), track.times, track.positions, idle=idle, fps=rate,
                                      lock_feet=options.lock_feet)
        except ValueError as exc:
            raise JobError(str(exc)) from None
    _warned_again(caught, lambda text: with_frames(text, lambda t: when.frame(t), "s"))
    return clip


def walked_name(gaits: Sequence[str], along: str) -> str:
    """The baked action's name: the first gait's and what it walked along ('a circle of 3 m', a
    curve object's name, a file's)."""
    return f"{gaits[0]} along {along}"
