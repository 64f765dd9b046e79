"""Stride demo on the bundled samples: what each clip holds, in the units an animator thinks in.

    python build.py demo [FILE.bvh ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from core import bvh, metrics

SAMPLES = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(SAMPLES.glob("*.bvh"))
    header = (f"{'clip':<10} {'joints':>6} {'frames':>6} {'fps':>5} {'seconds':>7} {'motion start':>12} "
              f"{'root m/s':>8} {'height m':>8}")
    print(header)
    print("-" * len(header))
    failed = 0
    for path in paths:
        try:
            clip = bvh.load(path)
        except (OSError, bvh.BVHError) as exc:
            print(f"{path.name:<10} error: {exc}")
            failed += 1
            continue
        print(f"{clip.name:<10} {clip.n_joints:>6} {clip.n_frames:>6} {clip.fps:>5g} {clip.duration:>7.2f} "
              f"{clip.motion_start:>12} {metrics.root_speed(clip):>8.2f} "
              f"{clip.height * clip.meters_per_unit:>8.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
