"""Walking along a path: cost next to FK of the output.

    python build.py bench path        (or: PYTHONPATH=. python bench/path.py)

`path.follow` of the Bandai dataset-1 walk, run and dash loops (`sync.loop_cycle`) along an
S-curve (alternating 4 m half circles) as long as a ramp from the walk's speed to the dash's and
back, linear in distance, takes 60 s, at 30 fps, with lock_feet (target: at most 8x FK of the
output frames). For information: the same without lock_feet, and what it is made of, each over
the same number of frames: `blendspace.blend_space` of a 60 s ramp in time, contact detection on
its output (`contacts.contacts`) and `footlock.lock_feet` with those contacts; what is left is the
path's own (resampling, the bend, the legs turned through the turns).

The process's CPU time, in rounds where FK and each case take turns, so that a machine shared
with other work loads them alike: each row gives the median over the rounds of the ratio to that
round's FK, and the ratio of the fastest runs of each (the target is checked on the median).
"""

from __future__ import annotations

import math
import sys
import warnings
from functools import partial

import numpy as np
from _bench import RATIO_HEADER, cpu_rounds, machine, ratio_row
from fixtures import take_path

from core import blendspace, bvh, contacts, footlock, path, root, sync
from core.clip import Clip

ROUNDS = 15
SECONDS = 60.0
RADIUS = 4.0
TARGET = 8.0
BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]


def loops(names: list[str]) -> list[Clip]:
    out = [sync.loop_cycle(bvh.load(take_path(n))) for n in names]
    for loop in out:
        loop.body  # noqa: B018  (read once, as a session keeps it)
    return out


def s_curve(length: float, up: np.ndarray, meters_per_unit: float, per_meter: int = 20) -> np.ndarray:
    """[N, 3] file units: half circles of RADIUS meters turning left and right by turns, `length`
    meters in all."""
    fwd, side = root.floor_axes(up)
    n = math.ceil(length * per_meter)
    step = length / n
    turn = step / RADIUS * np.where((np.arange(n) * step // (math.pi * RADIUS)) % 2 == 0, 1.0, -1.0)
    heading = np.concatenate([[0.0], np.cumsum(turn)])
    mid = heading[:-1] + 0.5 * turn
    steps = step * np.stack([np.cos(mid), np.sin(mid)], axis=1)
    xy = np.concatenate([[[0.0, 0.0]], np.cumsum(steps, axis=0)])
    return (np.outer(xy[:, 0], fwd) + np.outer(xy[:, 1], side)) / meters_per_unit


def row(label: str, t: np.ndarray, fk: np.ndarray, target: float | None) -> tuple[str, bool]:
    return ratio_row(label, t, fk, target, 44)


def main() -> int:
    warnings.simplefilter("ignore")
    print(f"path.follow vs FK of its output ({machine()}); CPU time, {ROUNDS} rounds\n")
    gaits = loops(BANDAI)
    speeds = np.sort(blendspace.gait_speeds(gaits))
    slow, fast = float(speeds[0]), float(speeds[-1])
    # A ramp linear in distance over half the length takes (L / 2) ln(fast / slow) / (fast - slow).
    length = SECONDS * (fast - slow) / math.log(fast / slow)
    points = s_curve(length, gaits[0].up, gaits[0].meters_per_unit)
    speed = (np.array([0.0, 0.5 * length, length]), np.array([slow, fast, slow]))
    out = path.follow(gaits, points, speed)
    ramp = (np.array([0.0, 0.5 * out.duration, out.duration]), np.array([slow, fast, slow]))
    straight = blendspace.blend_space(gaits, ramp, out.duration)
    planted = contacts.contacts(straight, split_slides=False)
    print(f"{length:.1f} m of S-curve ({RADIUS:g} m arcs), {slow:.2f} -> {fast:.2f} -> {slow:.2f} m/s: "
          f"{out.n_frames:,} frames x {out.n_joints} joints ({out.duration:.1f} s)\n")
    print(f"{'case':<44}{RATIO_HEADER}")
    t = cpu_rounds([out.fk, partial(path.follow, gaits, points, speed),
                    partial(path.follow, gaits, points, speed, lock_feet=False),
                    partial(blendspace.blend_space, gaits, ramp, out.duration),
                    partial(contacts.contacts, straight, split_slides=False),
                    partial(footlock.lock_feet, straight, contacts=planted, lower_pelvis=True)], ROUNDS)
    line, good = row("path.follow, lock_feet", t[:, 1], t[:, 0], TARGET)
    print(line)
    print(row("  without lock_feet", t[:, 2], t[:, 0], None)[0])
    print(row("  blend_space alone (a ramp in time)", t[:, 3], t[:, 0], None)[0])
    print(row("  contacts.contacts of it", t[:, 4], t[:, 0], None)[0])
    print(row("  lock_feet of it, lower_pelvis", t[:, 5], t[:, 0], None)[0])
    rest = t[:, 1] - t[:, 3] - t[:, 4] - t[:, 5]
    print(row("  the path's own (the rest)", rest, t[:, 0], None)[0])
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
