"""The body map's cost next to FK, on 10,000-frame takes.

    python build.py bench body        (or: PYTHONPATH=. python bench/body.py)

`body.find` (what `clip.body` computes on first use) on a 10,000-frame CMU take (09_12 repeated)
and a 10,000-frame Bandai take (the walk repeated; 22 joints, a static dummy root), each with its
names and with every name stripped (legs found from the hierarchy and the motion alone), against
FK of the whole take. Target: at most 0.5x FK. Median of 9 runs each, in the same process.
"""

from __future__ import annotations

import sys
from functools import partial

from _bench import long_take, machine, median_seconds
from fixtures import cmu_path, take_path

from core import body, bvh
from core.clip import Clip

RUNS = 9
FRAMES = 10_000
TARGET = 0.5


def anonymous(clip: Clip) -> Clip:
    return Clip([f"j{j}" for j in range(clip.n_joints)], clip.parents, clip.offsets, clip.rotations,
                clip.positions, clip.fps, channels=clip.channels, end_parents=clip.end_parents,
                end_offsets=clip.end_offsets, motion_start=clip.motion_start)


def main() -> int:
    takes = {
        "CMU 09_12 x": long_take(bvh.load(cmu_path("09_12")), FRAMES),
        "Bandai walk x": long_take(bvh.load(take_path("dataset-1_walk_normal_001")), FRAMES),
    }
    print(f"body.find on {FRAMES:,}-frame takes vs FK ({machine()})\n")
    print(f"{'take':<16}{'names':<8}{'joints':>7}{'FK ms':>9}{'body ms':>9}{'ratio':>8}  legs from   target")
    worst = 0.0
    for label, clip in takes.items():
        fk = median_seconds(clip.fk, RUNS)
        for names, c in (("yes", clip), ("none", anonymous(clip))):
            t = median_seconds(partial(body.find, c), RUNS)
            b = body.find(c)
            ratio = t / fk
            worst = max(worst, ratio)
            print(f"{label:<16}{names:<8}{c.n_joints:>7}{fk * 1e3:>9.1f}{t * 1e3:>9.2f}{ratio:>7.2f}x  "
                  f"{b.evidence.get('legs', '-'):<11} <= {TARGET}x {'ok' if ratio <= TARGET else 'MISSED'}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
