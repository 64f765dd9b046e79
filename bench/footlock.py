"""Foot locking's cost next to FK, on a 10,000-frame take, and a transition with locking.

    python build.py bench footlock        (or: PYTHONPATH=. python bench/footlock.py)

`footlock.lock_feet` on 10,000 frames of CMU 09_12 and of the Bandai walk repeated, with the
contacts given (targets: at most 1x FK of the whole take) and detected by it (at most 3x; the
detection alone, `contacts.contacts`, is shown for information as "detection"), and a dead-blend
transition between two such takes with and without lock_feet (at most 3x FK of the output). The
clip's body map is read once per clip and kept (bench/body.py times it). Median of 7 runs.
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _timing import median_seconds as timed  # noqa: E402
from fixtures import take_path  # noqa: E402

from core import bvh, contacts, footlock, transition  # noqa: E402
from core.clip import Clip  # noqa: E402

RUNS = 7
FRAMES = 10_000
TARGETS = {"given": 1.0, "detected": 3.0, "transition": 3.0}


def median_seconds(fn: Callable[[], object]) -> float:
    return timed(fn, RUNS)


def long_take(clip: Clip) -> Clip:
    reps = -(-FRAMES // clip.n_frames)
    return Clip(clip.names, clip.parents, clip.offsets, np.concatenate([clip.rotations] * reps)[:FRAMES],
                np.concatenate([clip.positions] * reps)[:FRAMES], clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, motion_start=clip.motion_start)


def row(label: str, fk: float, t: float, target: float) -> tuple[str, bool]:
    ok = t / fk <= target
    return (f"{label:<30}{fk * 1e3:>9.1f}{t * 1e3:>10.1f}{t / fk:>7.2f}x  <= {target}x "
            f"{'ok' if ok else 'MISSED'}"), ok


def main() -> int:
    warnings.simplefilter("ignore", footlock.FootLockWarning)
    print(f"lock_feet on {FRAMES:,} frames vs FK ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, numpy {np.__version__})\n")
    print(f"{'case':<30}{'FK ms':>9}{'lock ms':>10}{'ratio':>8}  target")
    good = True
    takes = (("CMU 09_12", take_path("09_12")), ("Bandai walk", take_path("dataset-1_walk_normal_001")))
    for label, path in takes:
        clip = long_take(bvh.load(path))
        clip.body  # noqa: B018
        fk = median_seconds(clip.fk)
        planted = contacts.contacts(clip)
        alone = median_seconds(partial(contacts.contacts, clip))
        name = f"{label} x, detection"
        print(f"{name:<30}{fk * 1e3:>9.1f}{alone * 1e3:>10.1f}{alone / fk:>7.2f}x  (for information)")
        for case, fn in (("given", partial(footlock.lock_feet, clip, contacts=planted)),
                         ("detected", partial(footlock.lock_feet, clip))):
            line, ok = row(f"{label} x, contacts {case}", fk, median_seconds(fn), TARGETS[case])
            good &= ok
            print(line)
    src, dst = long_take(bvh.load(take_path("02_01"))), long_take(bvh.load(take_path("02_03")))
    src.body, dst.body  # noqa: B018
    ts, td = 40.0, 20.0
    out = transition.dead_blend(src, dst, ts, td, 0.3)
    fk = median_seconds(out.fk)
    plain = median_seconds(partial(transition.dead_blend, src, dst, ts, td, 0.3))
    locked = median_seconds(partial(transition.dead_blend, src, dst, ts, td, 0.3, lock_feet=True))
    print(row("dead blend, 02_01 x > 02_03 x", fk, plain, TARGETS["transition"])[0])
    line, ok = row("  with lock_feet", fk, locked, TARGETS["transition"])
    good &= ok
    print(line)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
