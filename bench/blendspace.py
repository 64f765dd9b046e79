"""Blend spaces: cost next to FK of the output, and how well a speed ramp holds its target.

    python build.py bench blendspace        (or: PYTHONPATH=. python bench/blendspace.py)

Cost: `blendspace.blend_space` over the Bandai dataset-1 walk, run and dash loops
(`sync.loop_cycle`), a 60 s ramp from the walk's speed to the dash's at 30 fps (1,801 frames),
against FK of the output frames (targets: at most 4x FK, 6x with lock_feet). A blend space works
out what it reads of its gaits (speeds, travel, markers, each gait's touchdowns and contacts on
its loop played on) once and reuses it while they are unchanged, as a technical animator bakes
many speed curves from one set of gaits: the rows time a bake from gaits already read, and, for
information, the first bake from gaits (fresh copies) it has not seen. Also for information: the
same ramp over the CMU 02_01 walk and 02_03 jog at 120 fps (7,201 frames), `sync.sync_blend` of
the Bandai walk and run over the same frames (the two-gait blend a blend space generalizes,
which works out its loops on every call) and `footlock.lock_feet` of the output alone.
The process's CPU time, in rounds where FK and each case take turns, so that a machine shared
with other work loads them alike: each row gives the median over the rounds of the ratio to that
round's FK, and the ratio of the fastest runs of each (the target is checked on the median).

Quality, on the same ramps: the pelvis's speed over the floor per output cycle (from a
touchdown found on the output's feet to the next of that foot) against the target's mean over
that cycle, and each event's distance to the touchdown found on the output's feet around it,
read with the thresholds of the gait nearest in speed (`motion_checks.frames_apart`: a touchdown
the detector puts on a whole frame stands for the span the foot landed in).
"""

from __future__ import annotations

import itertools
import sys
import warnings
from functools import partial

import numpy as np
from _bench import RATIO_HEADER, cpu_rounds, machine, ratio_row
from fixtures import take_path
from motion_checks import frames_apart

from core import blendspace, bvh, contacts, footlock, sync
from core.clip import Clip

ROUNDS = 15
SECONDS = 60.0
TARGETS = {"plain": 4.0, "lock_feet": 6.0}
BANDAI = [f"dataset-1_{gait}_normal_001" for gait in ("walk", "run", "dash")]
CMU = ["02_01", "02_03"]


def row(label: str, t: np.ndarray, fk: np.ndarray, target: float | None) -> tuple[str, bool]:
    return ratio_row(label, t, fk, target, 40)


def loops(names: list[str]) -> list[Clip]:
    out = [sync.loop_cycle(bvh.load(take_path(n))) for n in names]
    for loop in out:
        loop.body  # noqa: B018  (read once, as a session keeps it)
    return out


def ramp(gaits: list[Clip]) -> tuple[np.ndarray, np.ndarray]:
    speeds = blendspace.gait_speeds(gaits)
    return np.array([0.0, SECONDS]), np.array([speeds.min(), speeds.max()])


def quality(label: str, gaits: list[Clip]) -> None:
    target = ramp(gaits)
    out = blendspace.blend_space(gaits, target, SECONDS)
    found = contacts.footsteps(out)
    p = out.fk()[1][:, out.body.pelvis]
    path = (p - np.outer(p @ out.up, out.up)) * out.meters_per_unit
    frames = np.arange(out.n_frames)
    speeds = blendspace.gait_speeds(gaits)
    thresholds = [contacts.thresholds(g) for g in gaits]
    errors, distances = [], []
    for foot in ("FootDown_L", "FootDown_R"):
        for a, b in itertools.pairwise(found[foot]):
            ends = [np.array([np.interp(t * out.fps, frames, path[:, k]) for k in range(3)]) for t in (a, b)]
            speed = np.linalg.norm(ends[1] - ends[0]) / (b - a)
            errors.append(speed / np.interp(np.linspace(a, b, 401), *target).mean() - 1.0)
        events = out.events[foot]
        for e in events[(events > 0.1) & (events < SECONDS - 0.1)]:
            # Touchdowns found within a second of the event, read as the nearest gait reads its own.
            lo, hi = max(0, int((e - 1.0) * out.fps)), min(out.n_frames, int((e + 1.0) * out.fps) + 1)
            th = thresholds[int(np.argmin(np.abs(speeds - np.interp(e, *target))))]
            near = contacts.footsteps(out[lo:hi], thresholds=th)[foot] + lo / out.fps
            distances.append(frames_apart(near, float(e), out.fps))
    err = 100 * np.abs(errors)
    print(f"{label:<34}{len(errors):>7}{err.max():>10.2f}{np.median(err):>9.2f}"
          f"{max(distances):>12.2f}{np.median(distances):>9.2f}")


def fresh(gaits: list[Clip]) -> list[Clip]:
    """Copies of the gaits, which a blend space has not seen."""
    return [g.copy() for g in gaits]


def main() -> int:
    warnings.simplefilter("ignore")
    print(f"blend_space vs FK of its output ({machine()}); CPU time, {ROUNDS} rounds\n")
    print(f"{'case':<40}{RATIO_HEADER}")
    good = True
    bandai, cmu = loops(BANDAI), loops(CMU)
    target = ramp(bandai)
    out = blendspace.blend_space(bandai, target, SECONDS)
    walk_run = (np.array([0.0, SECONDS]), np.array([0.0, 1.0]))
    planted = blendspace.blend_space_contacts(bandai, target, SECONDS)
    t = cpu_rounds([out.fk, partial(blendspace.blend_space, bandai, target, SECONDS),
                    partial(blendspace.blend_space, bandai, target, SECONDS, lock_feet=True),
                    partial(sync.sync_blend, bandai[0], bandai[1], walk_run, SECONDS),
                    lambda: blendspace.blend_space(fresh(bandai), target, SECONDS),
                    partial(footlock.lock_feet, out, contacts=planted)], ROUNDS)
    title = f"Bandai walk>run>dash, {out.n_frames:,} fr"
    for i, (label, key) in enumerate(((title, "plain"), ("  with lock_feet", "lock_feet")), start=1):
        line, ok = row(label, t[:, i], t[:, 0], TARGETS[key])
        good &= ok
        print(line)
    print(row("  sync_blend walk>run, same frames", t[:, 3], t[:, 0], None)[0])
    print(row("  first bake from gaits not seen yet", t[:, 4], t[:, 0], None)[0])
    print(row("  lock_feet alone, contacts given", t[:, 5], t[:, 0], None)[0])
    target = ramp(cmu)
    out = blendspace.blend_space(cmu, target, SECONDS)
    t = cpu_rounds([out.fk, partial(blendspace.blend_space, cmu, target, SECONDS),
                    partial(blendspace.blend_space, cmu, target, SECONDS, lock_feet=True)], ROUNDS)
    print(row(f"CMU 02_01>02_03, {out.n_frames:,} fr", t[:, 1], t[:, 0], None)[0])
    print(row("  with lock_feet", t[:, 2], t[:, 0], None)[0])

    print(f"\nQuality over the {SECONDS:g} s ramps: speed per output cycle against the target's mean, "
          "and events against the touchdowns found on the output's feet")
    print(f"{'ramp':<34}{'cycles':>7}{'max err %':>10}{'median':>9}{'events fr':>12}{'median':>9}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        quality("Bandai walk > run > dash, 30 fps", bandai)
        quality("CMU 02_01 > 02_03, 120 fps", cmu)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
