"""Locked legs and contacts measured as an expert would, on every locomotion take in tests/data.

    python build.py bench legs        (or: PYTHONPATH=. python bench/legs.py [TAKE ...])

Not a timing: the quality table issue 36 asks for, by the independent measures of
tests/motion_checks.py. Per take: the contacts against the reference (agreement away from edges,
the largest pivot spread in a contact, the highest FootDown above stance), then `lock_feet` on
the take (detected contacts) and on it sped up 15 % (the original's contacts), each without and
with lower_pelvis: how far a knee goes past the input's straightest (degrees), the leg joints'
largest step and the knee/ankle/toe peak accelerations as ratios to the input's, the largest
pivot slip per contact (from 0.1 s after touchdown to the lift) and sink, and the warnings.
"""

from __future__ import annotations

import math
import sys
import warnings

from _bench import machine  # first: it puts the repo and tests/ on the path

# isort: split
import motion_checks as M
from fixtures import CMU, take_path

from core import bvh, contacts, footlock

BANDAI = ["dash_normal_001", "run_happy_001", "run_normal_001", "run_tired_001", "walk-back_normal_001",
          "walk-left_normal_001", "walk-right_normal_001", "walk_happy_001", "walk_normal_001",
          "walk_normal_002", "walk_tired_001"]
TAKES = sorted(CMU) + [f"dataset-1_{b}" for b in BANDAI]


def contact_row(clip) -> tuple[float, float, float, int]:
    """(agreement, largest pivot spread m, highest FootDown above stance m, doubts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        masks = contacts.contacts(clip)
        steps = contacts.footsteps(clip)
    doubts = sum(issubclass(w.category, contacts.ContactWarning) for w in caught)
    mats, pos = M.world(clip)
    start = clip.motion_start + 1
    agree, spread, high = 1.0, 0.0, 0.0
    for side in masks:
        pts = M.foot_points(clip, side, mats, pos)
        ref = M.reference_contacts(pts, clip.up, clip.fps)
        agree = min(agree, M.agreement(masks[side], ref, clip.fps, start))
        for a, b in M.runs(masks[side]):
            spread = max(spread, M.pivot_spread(pts[a:b]))
        above = M.above_stance(pts, clip.up, clip.fps)
        for t in steps[f"FootDown_{side}"]:
            f = t * clip.fps
            i = min(math.ceil(f - 1e-9), clip.n_frames - 1)
            high = max(high, float(above[i]))
    return agree, spread, high, doubts


def lock_row(src, masks, lower: bool, axes, base: M.Legs) -> tuple[float, ...]:
    start = src.motion_start + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = footlock.lock_feet(src, contacts=masks, lower_pelvis=lower)
    warned = sum(issubclass(w.category, footlock.FootLockWarning) for w in caught)
    got = M.measure_legs(out, axes, start)
    past = step = acc = slip = sink = 0.0
    full = math.ceil(0.1 * src.fps)
    for side in got.flexion:
        past = max(past, math.degrees(base.flexion[side][start:].min() - got.flexion[side][start:].min()))
        step = max(step, float((got.steps[side].max(axis=0) / base.steps[side].max(axis=0)).max()))
        acc = max(acc, float((got.accel[side] / base.accel[side]).max()))
        for a, b in M.runs(masks[side]):
            a = max(a, src.motion_start)
            p = got.points[side]
            if b - a > full:
                slip = max(slip, M.pivot_slip(p[a + full:b], src.up))
            planted = (base.points[side][a:b] @ src.up).min()
            sink = max(sink, float(planted - (p[a:b] @ src.up).min()))
    return past, step, acc, slip * 100, sink * 100, warned


def main(names: list[str]) -> int:
    print(f"locked legs and contacts, take by take ({machine()})\n")
    print(f"{'take':<30}{'agree':>6}{'spread':>7}{'down':>6}{'?':>2} | "
          "case       past  step   acc  slip  sink w")
    for name in names or TAKES:
        clip = bvh.load(take_path(name))
        agree, spread, high, doubts = contact_row(clip)
        head = f"{name[:30]:<30}{agree:>6.3f}{spread * 100:>6.1f}c{high * 100:>5.1f}c{doubts:>2}"
        start = clip.motion_start + 1
        axes = M.input_axes(clip, start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            planted = contacts.contacts(clip)
        fast = M.sped_up(clip)
        for label, src in (("", clip), ("fast", fast)):
            base = M.measure_legs(src, axes, start)
            for lower in (False, True):
                r = lock_row(src, planted, lower, axes, base)
                case = f"{label or 'same'}{' lp' if lower else ''}"
                print(f"{head} | {case:<9}{r[0]:>6.1f}{r[1]:>6.2f}{r[2]:>6.2f}{r[3]:>6.2f}{r[4]:>6.2f} "
                      f"{r[5]}", flush=True)
                head = " " * len(head)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
