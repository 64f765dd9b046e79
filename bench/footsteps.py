"""Footsteps' cost next to FK, on a 10,000-frame take, and their error against the hand labels.

    python build.py bench footsteps        (or: PYTHONPATH=. python bench/footsteps.py)

Cost: `contacts.footsteps` (auto thresholds) on 10,000 frames of CMU 09_12 and of the Bandai walk
repeated, against FK of the whole take; the clip's body map is read once per clip and kept, and
bench/body.py times it (0.2x FK). Target: at most 2x FK. Median of 7 runs.
Quality: every hand-labelled touchdown (CMU at 120 fps, Bandai at 30 fps; tests/data/footsteps/)
matched to the nearest detection of its foot, with each take also resampled to 24, 30 and 120 fps:
found, extra, mean and worst error in ms.
"""

from __future__ import annotations

import csv
import sys
import warnings
from functools import partial

import numpy as np
from _bench import ROOT, long_take, machine, median_seconds
from fixtures import take_path

from core import bvh, contacts, resample

RUNS = 7
FRAMES = 10_000
TARGET = 2.0
# Labelled frame ranges of the CMU takes (tests/data/footsteps/README.md); Bandai's are whole.
LABELLED = {"02_01": (1, 343), "02_02": (1, 298), "02_03": (1, 173), "09_01": (1, 148), "09_12": (1, 380)}


def labels() -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for name in ("footsteps.csv", "footsteps_bandai.csv"):
        with (ROOT / "tests" / "data" / name).open(newline="") as f:
            for row in [r for r in csv.reader(f) if r and not r[0].startswith("#")][1:]:
                out.setdefault(row[0], {"L": [], "R": []})[row[1]].append(int(row[2]))
    return out


def main() -> int:
    warnings.simplefilter("ignore", contacts.ContactWarning)
    print(f"footsteps on {FRAMES:,} frames vs FK ({machine()})\n")
    print(f"{'take':<16}{'FK ms':>9}{'steps ms':>10}{'ratio':>8}  target")
    worst = 0.0
    takes = (("CMU 09_12 x", take_path("09_12")), ("Bandai walk x", take_path("dataset-1_walk_normal_001")))
    for label, path in takes:
        clip = long_take(bvh.load(path), FRAMES)
        fk = median_seconds(clip.fk, RUNS)
        clip.body  # noqa: B018  (read once per clip and kept; bench/body.py times it: 0.2x FK)
        t = median_seconds(partial(contacts.footsteps, clip), RUNS)
        worst = max(worst, t / fk)
        print(f"{label:<16}{fk * 1e3:>9.1f}{t * 1e3:>10.1f}{t / fk:>7.2f}x  <= {TARGET}x "
              f"{'ok' if t / fk <= TARGET else 'MISSED'}")

    print(f"\n{'labelled take':<28}{'fps':>5}{'found':>8}{'extra':>7}{'mean ms':>9}{'|mean| ms':>10}"
          f"{'worst ms':>9}")
    for name, feet in labels().items():
        original = bvh.load(take_path(name))
        lo, hi = LABELLED.get(name, (0, original.n_frames - 1))
        for rate in sorted({original.fps, 24.0, 30.0, 120.0}):
            clip = original if rate == original.fps else resample.resample(original, rate)
            found = contacts.footsteps(clip)
            errors, extra, missed = [], 0, 0
            for side, frames in feet.items():
                got = found[f"FootDown_{side}"]
                got = got[(got >= lo / original.fps - 0.05) & (got <= hi / original.fps + 0.05)]
                used = set()
                for want in np.array(frames) / original.fps:
                    k = int(np.argmin(np.abs(got - want))) if got.size else -1
                    if k >= 0 and abs(got[k] - want) <= 0.1 and k not in used:
                        used.add(k)
                        errors.append(got[k] - want)
                    else:
                        missed += 1
                extra += got.size - len(used)
            e = np.array(errors) * 1e3
            n = sum(len(v) for v in feet.values())
            print(f"{name:<28}{rate:>5.0f}{n - missed:>4}/{n:<3}{extra:>7}{e.mean():>+9.1f}"
                  f"{np.abs(e).mean():>10.1f}{np.abs(e).max():>9.1f}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
