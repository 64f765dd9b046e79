"""The Clip: one take of skeletal motion in BVH conventions.

Local joint rotations are (w, x, y, z) quaternions `[T, J, 4]`, local translations `[T, J, 3]`,
in the file's own units and axes. Time is in seconds at every boundary; frames are indices.
Facts a caller may know better than any guess (which joint carries the motion, which way is up
and forward, the unit, where the captured motion starts) are computed on first use and can be
overridden by assignment or by the constructor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import quat

if TYPE_CHECKING:
    from .body import Body

POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
DEFAULT_ROOT_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
DEFAULT_JOINT_CHANNELS = ("Zrotation", "Xrotation", "Yrotation")

# Frame rates mocap is recorded and exported at; a Frame Time within 1e-4 (relative) of one of
# these is that rate (".0083333" is 120 fps, not 120.0005 fps).
COMMON_FPS = (24.0, 25.0, 30.0, 48.0, 50.0, 60.0, 72.0, 90.0, 100.0, 120.0, 125.0, 144.0, 150.0,
              180.0, 200.0, 240.0, 250.0, 300.0, 360.0, 480.0, 500.0, 960.0, 1000.0,
              23.976, 29.97, 59.94, 119.88)


# A clip this short whose last frame repeats its first pose is a pre-cut loop; the repeat is a
# fraction of a frame's step (Bandai's loops: 0 to 0.53 of theirs; the end of a longer take that
# stops where it started: 2 and more).
_LOOP_SECONDS = 3.0
_SEAM_STEPS = 0.6

# A reference pose before the motion: the upper quartile of the joints' jumps into frame 1 over
# their 99th-percentile step (and of the break in their motion there, third differences, over
# theirs) exceeds this. Real starts of the tests' takes reach 1.1 at 24-120 fps, reference poses
# (CMU's T-poses, rest poses that do not stand) 1.9 and more, most of them 5-200.
_START_JUMP = 1.5
# Frames (4 in a row each) the typical steps are read from, spread over a long take.
_START_SAMPLES = 256

# Constructor arguments the body map is read from: a copy that changes one reads its own.
_BODY_INPUTS = ("names", "parents", "offsets", "end_parents", "end_offsets", "root", "up", "forward",
                "meters_per_unit")


class SkeletonMismatch(ValueError):
    """Two clips do not share one skeleton (joint names and parents)."""


def snap_fps(frame_time: float) -> float:
    """Frames per second from a BVH Frame Time, snapped to a common rate or a whole number when
    within 1e-4 relative (files print Frame Time with few digits)."""
    fps = 1.0 / frame_time
    for rate in COMMON_FPS:
        if abs(fps - rate) <= 1e-4 * rate:
            return rate
    whole = round(fps)
    if whole > 0 and abs(fps - whole) <= 1e-4 * whole:
        return float(whole)
    return fps


@dataclass(frozen=True)
class Stated:
    """A clip's root, up, forward and unit as its maker gave them (None: to be found)."""

    root: int | None
    up: np.ndarray | None
    forward: np.ndarray | None
    meters_per_unit: float | None


class Clip:
    """Skeletal motion: joints (names, parents, offsets, channels), frames, fps and events."""

    def __init__(
        self,
        names: Sequence[str],
        parents: Sequence[int] | np.ndarray,
        offsets: np.ndarray,
        rotations: np.ndarray,
        positions: np.ndarray | None = None,
        fps: float = 30.0,
        *,
        channels: Sequence[Sequence[str]] | None = None,
        end_parents: Sequence[int] | np.ndarray | None = None,
        end_offsets: np.ndarray | None = None,
        events: Mapping[str, Any] | None = None,
        loop: bool | None = None,
        name: str = "",
        root: int | None = None,
        up: Sequence[float] | np.ndarray | None = None,
        forward: Sequence[float] | np.ndarray | None = None,
        meters_per_unit: float | None = None,
        motion_start: int | None = None,
        body: Body | None = None,
    ) -> None:
        self.names = list(names)
        J = len(self.names)
        self.parents = np.asarray(parents, dtype=np.int64).reshape(-1)
        if self.parents.shape != (J,):
            raise ValueError(f"parents has {self.parents.size} entries for {J} joints")
        if np.any(self.parents >= np.arange(J)) or np.any(self.parents < -1):
            raise ValueError("parents must list each joint after its parent (parents[j] < j, roots -1)")
        self.offsets = _float_array(offsets, (J, 3), "offsets")
        self.rotations = _float_array(rotations, (None, J, 4), "rotations")
        T = self.rotations.shape[0]
        if positions is None:
            positions = np.broadcast_to(self.offsets, (T, J, 3))
        self.positions = _float_array(positions, (T, J, 3), "positions")
        if not (fps > 0 and math.isfinite(fps)):
            raise ValueError(f"fps must be positive and finite, not {fps}")
        self.fps = float(fps)
        if channels is None:
            channels = [DEFAULT_ROOT_CHANNELS if p < 0 else DEFAULT_JOINT_CHANNELS for p in self.parents]
        self.channels = [tuple(c) for c in channels]
        if len(self.channels) != J:
            raise ValueError(f"channels has {len(self.channels)} entries for {J} joints")
        self.end_parents = np.asarray([] if end_parents is None else end_parents, dtype=np.int64).reshape(-1)
        E = self.end_parents.size
        self.end_offsets = _float_array(np.zeros((0, 3)) if end_offsets is None else end_offsets,
                                        (E, 3), "end_offsets")
        self.events: dict[str, np.ndarray] = {
            k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in (events or {}).items()}
        self._loop = None if loop is None else bool(loop)
        self._repeats: bool | None = None
        self.name = name
        self._root = root
        self._up = None if up is None else _unit(up)
        self._forward = None if forward is None else _unit(forward)
        self._meters_per_unit = meters_per_unit
        self._motion_start = motion_start
        self._body = body

    # -- sizes and time ---------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def n_joints(self) -> int:
        return len(self.names)

    @property
    def dt(self) -> float:
        return 1.0 / self.fps

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame: (T - 1) / fps."""
        return max(self.n_frames - 1, 0) / self.fps

    @property
    def times(self) -> np.ndarray:
        """[T] frame times in seconds."""
        return np.arange(self.n_frames) / self.fps

    def frame(self, seconds: float) -> int:
        """Nearest frame index to a time in seconds (clamped to the clip)."""
        return int(min(max(round(seconds * self.fps), 0), max(self.n_frames - 1, 0)))

    # -- overridable facts ------------------------------------------------------------------
    @property
    def root(self) -> int:
        """Index of the motion root: the first joint on the way down to the pelvis (the body
        map's) whose position channels move, so a static dummy ROOT above the hips is skipped;
        without legs, the first joint whose position channels move."""
        if self._root is None:
            self._root = self.body.root
        return self._root

    @root.setter
    def root(self, value: int) -> None:
        self._root = int(value)
        self._body = None

    @property
    def body(self) -> Body:
        """The body map (legs, feet, pelvis, spine, head, arms, static joints, up, facing, unit),
        read from names, the hierarchy and the animated pose on first use; settable, e.g. to
        `body.find(clip, feet={"L": "LeftFoot", "R": "RightFoot"})`."""
        if self._body is None:
            # The one import cycle the core allows (tests/core/test_code_rules.py): the body map
            # reads clips, and a clip reads its body map on first use.
            from .body import find

            self._body = find(self)
        return self._body

    @body.setter
    def body(self, value: Body) -> None:
        self._body = value

    @property
    def up(self) -> np.ndarray:
        """Unit up vector in clip space: set, else from the animated pose (the body map: ankles
        to pelvis and head, snapped to a file axis), else +Y as BVH files are written."""
        if self._up is not None:
            return self._up.copy()
        return self.body.up.copy()

    @up.setter
    def up(self, value: Sequence[float] | np.ndarray) -> None:
        self._up = _unit(value)
        self._body = None

    @property
    def forward(self) -> np.ndarray:
        """Unit facing in the motion root's own frame: the root's world rotation turns it into the
        performer's facing at each frame (see `core.body`). Set, else from the hip line over the
        take, its sign from the toes."""
        if self._forward is not None:
            return self._forward.copy()
        return self.body.forward.copy()

    @forward.setter
    def forward(self, value: Sequence[float] | np.ndarray) -> None:
        self._forward = _unit(value)
        self._body = None

    @property
    def height(self) -> float:
        """Standing height in file units: bone lengths from a sole to the head's top (the body
        map's; the rest pose's tips when no legs are found)."""
        return self.body.height

    @property
    def meters_per_unit(self) -> float:
        """Meters per file unit: set, else the known unit that makes the standing height a
        person's (units.guess_meters_per_unit)."""
        if self._meters_per_unit is None:
            return self.body.meters_per_unit
        return self._meters_per_unit

    @meters_per_unit.setter
    def meters_per_unit(self, value: float) -> None:
        self._meters_per_unit = float(value)
        self._body = None

    @property
    def loop(self) -> bool:
        """The clip is one closed cycle: set, else True when its last frame repeats its first pose
        (a pre-cut loop, as game and dataset loops are cut) and it lasts a cycle (at most 3 s)."""
        if self._loop is None:
            self._loop = self.duration <= _LOOP_SECONDS and self.seam_repeats
        return self._loop

    @loop.setter
    def loop(self, value: bool) -> None:
        self._loop = bool(value)

    @property
    def seam_repeats(self) -> bool:
        """The last frame repeats the first pose (joint rotations within 0.6 of the take's median
        step between frames; the root may have travelled): a loop's seam frame, counted once."""
        if self._repeats is None:
            self._repeats = self._find_repeat()
        return self._repeats

    @property
    def loop_frames(self) -> int:
        """Frames in one cycle when analysed as a loop: n_frames - 1 when the last frame repeats
        the first pose, else n_frames."""
        return self.n_frames - 1 if self.seam_repeats and self.n_frames > 2 else self.n_frames

    @property
    def motion_start(self) -> int:
        """First captured frame: 1 when frame 0 is a reference pose (a converter's T-pose, a bind
        pose) before the motion: most joints jump into frame 1 further than they step anywhere
        after it (over 1.5x their 99th-percentile step, in world positions), breaking the
        motion's continuity as much; else 0."""
        if self._motion_start is None:
            self._motion_start = self._find_motion_start()
        return self._motion_start

    @motion_start.setter
    def motion_start(self, value: int) -> None:
        self._motion_start = int(value)

    def legs(self) -> tuple[list[int], list[int]] | None:
        """(left, right) leg chains, hip first, toes last (the body map's); None without legs."""
        legs = self.body.legs
        if not legs:
            return None
        return list(legs["L"]), list(legs["R"])

    @property
    def stated(self) -> Stated:
        """What the clip was told (None where nothing was), before the body map fills in the rest."""
        return Stated(self._root, None if self._up is None else self._up.copy(),
                      None if self._forward is None else self._forward.copy(), self._meters_per_unit)

    def first_moving_root(self) -> int:
        """The first joint with position channels that move (else the first with any): the root
        a hierarchy alone suggests."""
        if self.n_frames == 0 or self.n_joints == 0:
            return 0
        has_pos = [j for j, ch in enumerate(self.channels) if any(c in POSITION_CHANNELS for c in ch)]
        for j in has_pos:
            if np.any(self.positions[:, j] != self.positions[:1, j]):
                return j
        return has_pos[0] if has_pos else 0

    def _find_repeat(self) -> bool:
        if self.n_frames < 4 or self.n_joints == 0:
            return False
        step = float(np.median(quat.angle(self.rotations[1:], self.rotations[:-1]).mean(axis=-1)))
        seam = float(quat.angle(self.rotations[-1], self.rotations[0]).mean())
        return step > 0.0 and seam < _SEAM_STEPS * step

    def _find_motion_start(self) -> int:
        if self.n_frames < 5 or self.n_joints == 0:
            return 0
        # A reference pose (a converter's T-pose, a bind pose) one frame before the motion makes
        # the joints jump into frame 1 further than they ever move in a frame after it, and
        # breaks the motion's continuity there. Both are read from world positions (relative to
        # the root, and the root's own), joint by joint against that joint's own steps, so they
        # hold at any rate: at 30 fps a walk's steps are four times 120 fps's, a T-pose's jump is
        # the same. Not the body map's: it samples frames from motion_start on.
        r = self.first_moving_root()
        ahead = self.n_frames - 4
        picks = np.arange(1, ahead + 1) if ahead <= _START_SAMPLES else np.unique(
            np.linspace(1, ahead, _START_SAMPLES).astype(np.int64))
        frames = np.concatenate([np.arange(4), (picks[:, None] + np.arange(4)).reshape(-1)])
        _, wpos = quat.fk(self.rotations[frames], self.positions[frames], self.parents)
        rel = wpos - wpos[:, r:r + 1]
        rel[:, r] = wpos[:, r]
        x = rel.reshape(-1, 4, *rel.shape[1:])  # [1 + samples, 4 frames, J, 3]
        step = np.linalg.norm(x[:, 1] - x[:, 0], axis=-1)
        jerk = np.linalg.norm(np.diff(x, 3, axis=1)[:, 0], axis=-1)
        return int(_jumps(step) and _jumps(jerk))

    # -- motion -----------------------------------------------------------------------------
    def fk(self) -> tuple[np.ndarray, np.ndarray]:
        """World (rotations [T, J, 4], positions [T, J, 3]) in file units and axes."""
        return quat.fk(self.rotations, self.positions, self.parents)

    def end_site_positions(self, world_rot: np.ndarray, world_pos: np.ndarray) -> np.ndarray:
        """[T, E, 3] world positions of the End Sites, given fk() output."""
        p = self.end_parents
        return world_pos[:, p] + quat.mul_vec(world_rot[:, p], self.end_offsets)

    # -- copies and slices ------------------------------------------------------------------
    def replace(self, **changes: Any) -> Clip:
        """A copy with some constructor arguments changed; overrides carry over unless changed.

        Motion arrays are copied, so the new clip never aliases this one.
        """
        args: dict[str, Any] = {
            "names": self.names, "parents": self.parents, "offsets": self.offsets,
            "rotations": self.rotations, "positions": self.positions, "fps": self.fps,
            "channels": self.channels, "end_parents": self.end_parents,
            "end_offsets": self.end_offsets, "events": self.events, "loop": self._loop,
            "name": self.name, "root": self._root, "up": self._up, "forward": self._forward,
            "meters_per_unit": self._meters_per_unit, "motion_start": self._motion_start,
            "body": self._body,
        }
        # The body map belongs to the skeleton and its facts: kept unless they change.
        if "body" not in changes and self._body is not None and any(
                k in changes and not self._same(k, changes[k]) for k in _BODY_INPUTS):
            args["body"] = None
        unknown = set(changes) - set(args)
        if unknown:
            raise TypeError(f"Clip has no argument {sorted(unknown)[0]!r}")
        # Copy what is kept, and what was passed only where it may be this clip's own memory: a
        # fresh array from the caller needs no second copy (whole takes are large).
        for key in ("offsets", "rotations", "positions", "end_parents", "end_offsets"):
            if key not in changes:
                args[key] = args[key].copy()
            elif np.may_share_memory(changes[key], args[key]):
                changes[key] = np.array(changes[key])
        if "events" not in changes:
            args["events"] = {k: v.copy() for k, v in self.events.items()}
        args.update(changes)
        return Clip(**args)

    def _same(self, key: str, value: Any) -> bool:
        """Whether a constructor argument equals this clip's own (as read, for the facts)."""
        if value is None:
            return getattr(self, "_" + key) is None
        if key == "names":
            return list(value) == self.names
        if key == "root":
            return int(value) == self.root
        if key == "meters_per_unit":
            return float(value) == self.meters_per_unit
        mine = getattr(self, key)
        return bool(np.array_equal(np.asarray(value, dtype=np.float64), mine))

    def with_frames(self, rotations: np.ndarray, positions: np.ndarray) -> Clip:
        """This clip's skeleton and facts (root, up, forward, unit) with other frames `[n, J, 4]`,
        `[n, J, 3]`, sharing the arrays given (views stay views, unlike `replace`); no events."""
        return Clip(self.names, self.parents, self.offsets, rotations, positions, self.fps,
                    channels=self.channels, end_parents=self.end_parents, end_offsets=self.end_offsets,
                    root=self.root, up=self.up, forward=self.forward, meters_per_unit=self.meters_per_unit,
                    motion_start=0, body=self._body)

    def copy(self) -> Clip:
        return self.replace()

    def __getitem__(self, frames: slice) -> Clip:
        """Frames by slice (`clip[10:50]`, `clip[::4]`): events inside the range are kept, with
        times shifted to the new first frame; a step divides the fps."""
        if not isinstance(frames, slice):
            raise TypeError("index a Clip with a slice of frames, e.g. clip[10:50]")
        start, stop, step = frames.indices(self.n_frames)
        if step <= 0:
            raise ValueError("clip slices must step forward")
        kept = range(start, stop, step)
        t0 = start / self.fps
        t1 = (kept[-1] if len(kept) else start) / self.fps
        events = {k: v[(v >= t0 - 1e-9) & (v <= t1 + 1e-9)] - t0 for k, v in self.events.items()}
        motion_start = max(0, -(-(self.motion_start - start) // step)) if len(kept) else 0
        return self.replace(
            rotations=self.rotations[start:stop:step].copy(),
            positions=self.positions[start:stop:step].copy(),
            fps=self.fps / step, events=events, loop=False, motion_start=motion_start,
            root=self.root)

    def time_slice(self, start: float, stop: float | None = None) -> Clip:
        """Frames from `start` to `stop` seconds, both included (nearest frames)."""
        a = self.frame(start)
        b = self.n_frames - 1 if stop is None else self.frame(stop)
        return self[a:b + 1]

    def scaled(self, factor: float) -> Clip:
        """A copy with all lengths multiplied by `factor` (meters_per_unit divided by it)."""
        return self.replace(
            offsets=self.offsets * factor, positions=self.positions * factor,
            end_offsets=self.end_offsets * factor,
            meters_per_unit=self.meters_per_unit / factor)

    # -- skeleton compatibility -------------------------------------------------------------
    def check_compatible(self, other: Clip) -> None:
        """Raise SkeletonMismatch naming the first joint where names or parents differ."""
        if self.names == other.names and np.array_equal(self.parents, other.parents):
            return
        for j in range(max(self.n_joints, other.n_joints)):
            if j >= self.n_joints or j >= other.n_joints:
                extra = other.names[j] if j >= self.n_joints else self.names[j]
                raise SkeletonMismatch(
                    f"skeletons differ at joint {j} ({extra!r}): {self.n_joints} joints vs "
                    f"{other.n_joints}")
            a_parent = self.names[self.parents[j]] if self.parents[j] >= 0 else None
            b_parent = other.names[other.parents[j]] if other.parents[j] >= 0 else None
            if self.names[j] != other.names[j] or a_parent != b_parent:
                raise SkeletonMismatch(
                    f"skeletons differ at joint {j}: {self.names[j]!r} (parent {a_parent!r}) vs "
                    f"{other.names[j]!r} (parent {b_parent!r})")

    def compatible(self, other: Clip) -> bool:
        try:
            self.check_compatible(other)
        except SkeletonMismatch:
            return False
        return True

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (f"Clip({label}{self.n_joints} joints, {self.n_frames} frames at {self.fps:g} fps, "
                f"{len(self.events)} event tracks{', loop' if self.loop else ''})")


def _jumps(x: np.ndarray) -> bool:
    """Whether row 0 of per-joint magnitudes [1 + n, J] stands out from the rows after it: the
    joints' ratios to their own 99th percentile, at the upper quartile over joints (a few
    joints may not move much, a few may be noisy), above _START_JUMP."""
    typical = np.percentile(x[1:], 99, axis=0)
    moving = typical > 0.0
    if not moving.any():
        return False
    return bool(np.percentile(x[0, moving] / typical[moving], 75) > _START_JUMP)


def _float_array(x: Any, shape: tuple[int | None, ...], what: str) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape, strict=True)):
        want = "[" + ", ".join("T" if s is None else str(s) for s in shape) + "]"
        raise ValueError(f"{what} has shape {list(a.shape)}, expected {want}")
    return a


def _unit(v: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(3)
    n = float(np.linalg.norm(a))
    if not (n > 0 and math.isfinite(n)):
        raise ValueError(f"not a direction: {list(a)}")
    return a / n
