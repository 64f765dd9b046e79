"""Synchronized walk/run blends: quality on the CMU subject 02 walk and jog, and cost next to FK.

    python build.py bench sync        (or: PYTHONPATH=. python bench/sync.py)

Quality: loop cycles of 02_01 (walk) and 02_03 (jog) from `sync.loop_cycle`, blended by
`sync.sync_blend` for 3 s at 120 fps at weights 0, 0.25, 0.5, 0.75, 1 and a 0 -> 1 ramp. Per row:
the blended cycle (left marker to left marker), travel speed measured over whole cycles against
`sync.travel_speed`, the worst distance in frames between a detected footstep
(`contacts.footsteps`, default settings) and the nearest blend marker of its foot, whether the
steps alternate, and foot sliding (`metrics.foot_sliding`, m/s): over frames where both sources'
contacts, laid out on the blend by `sync.sync_times`, say planted; the same for each source played
alone (weights 0 and 1); and over the blend's own detected contacts. Then `weight_for_speed`
targets against the measured speeds.

Cost: 31 joints x 10,000 output frames (a 0 -> 1 ramp over 83 s, and a constant weight), against
FK of the output (target <= 3x). Median of 7 runs each after one warm-up run, in the same
process.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from _bench import machine
from _bench import median_seconds as timed
from fixtures import cmu_path

from core import bvh, contacts, metrics, root, sync
from core.clip import Clip

RUNS = 7
TARGET = 3.0
N_OUT = 10_000
SECONDS = 3.0
WEIGHTS: list[float | str] = [0.0, 0.25, 0.5, 0.75, 1.0, "ramp"]


def median_seconds(fn: Callable[[], object]) -> float:
    return timed(fn, RUNS, warm_up=True)


def warped_contacts(loop: Clip, t: np.ndarray) -> dict[str, np.ndarray]:
    """The loop's own contacts at the nearest frame of its warped times."""
    planted = contacts.contacts(loop)
    i = np.mod(np.rint(t * loop.fps).astype(np.int64), loop.n_frames)
    return {foot: mask[i] for foot, mask in planted.items()}


def measured_speed(out: Clip) -> float:
    """m/s over the floor from the first to the last left marker (whole blended cycles)."""
    first, last = out.events["FootDown_L"][[0, -1]]
    i, j = round(first * out.fps), round(last * out.fps)
    travel = root.trajectory(out).position
    return float(np.linalg.norm(travel[j] - travel[i]) * out.meters_per_unit / ((j - i) / out.fps))


def step_error(out: Clip) -> tuple[float, bool]:
    """(worst frames from a detected footstep to its foot's nearest marker, steps alternate)."""
    found = contacts.footsteps(out)
    worst = 0.0
    for key in ("FootDown_L", "FootDown_R"):
        steps, markers = found[key], out.events[key]
        if len(steps):
            worst = max(worst, float(np.abs(steps[:, None] - markers[None]).min(axis=1).max() * out.fps))
    times = np.concatenate([found["FootDown_L"], found["FootDown_R"]])
    feet = np.array([0] * len(found["FootDown_L"]) + [1] * len(found["FootDown_R"]))
    order = feet[np.argsort(times)]
    return worst, bool(np.all(order[1:] != order[:-1]))


def quality(walk: Clip, jog: Clip) -> None:
    print(f"\nQuality: 02_01 walk cycle ({walk.n_frames} frames, {walk.n_frames / walk.fps:.3f} s) + "
          f"02_03 jog cycle ({jog.n_frames} frames, {jog.n_frames / jog.fps:.3f} s), {SECONDS:g} s at "
          f"{walk.fps:g} fps; sliding in m/s")
    header = (f"{'weight':>6} {'cycle s':>8} {'m/s':>6} {'predicted':>9} {'step err fr':>11} {'alt':>4} "
              f"{'slide both':>10} {'walk':>6} {'jog':>6} {'own':>6}")
    print(header)
    print("-" * len(header))
    alone = []
    for end, loop, pick in ((0.0, walk, 0), (1.0, jog, 1)):
        times = sync.sync_times(walk, jog, end, SECONDS)[pick]
        played = sync.sync_blend(walk, jog, end, SECONDS)
        alone.append(metrics.foot_sliding(played, warped_contacts(loop, times)))
    for w in WEIGHTS:
        weight = (np.array([0.0, SECONDS]), np.array([0.0, 1.0])) if w == "ramp" else w
        out = sync.sync_blend(walk, jog, weight, SECONDS)
        ta, tb = sync.sync_times(walk, jog, weight, SECONDS)
        in_a, in_b = warped_contacts(walk, ta), warped_contacts(jog, tb)
        both = {foot: in_a[foot] & in_b[foot] for foot in in_a}
        left = out.events["FootDown_L"]
        cycle = float(np.diff(left).mean()) if len(left) > 1 else float("nan")
        predicted = f"{sync.travel_speed(walk, jog, w):9.3f}" if isinstance(w, float) else f"{'-':>9}"
        err, alternate = step_error(out)
        label = f"{w:6.2f}" if isinstance(w, float) else f"{w:>6}"
        print(f"{label} {cycle:8.3f} {measured_speed(out):6.3f} {predicted} {err:11.2f} "
              f"{'yes' if alternate else 'NO':>4} {metrics.foot_sliding(out, both):10.3f} {alone[0]:6.3f} "
              f"{alone[1]:6.3f} {metrics.foot_sliding(out):6.3f}")
    print("\nweight_for_speed (linear), measured over 4 s of the blend:")
    header = f"{'target m/s':>10} {'weight':>7} {'naive':>6} {'measured':>9} {'error %':>8}"
    print(header)
    print("-" * len(header))
    v0, v1 = sync.travel_speed(walk, jog, 0.0), sync.travel_speed(walk, jog, 1.0)
    for target in (1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6):
        w = sync.weight_for_speed(walk, jog, target)
        speed = measured_speed(sync.sync_blend(walk, jog, w, 4.0))
        print(f"{target:10.2f} {w:7.3f} {(target - v0) / (v1 - v0):6.3f} {speed:9.3f} "
              f"{100 * (speed / target - 1):8.2f}")


def cost(walk: Clip, jog: Clip) -> None:
    duration = (N_OUT - 1) / walk.fps
    ramp = (np.array([0.0, duration]), np.array([0.0, 1.0]))
    out = sync.sync_blend(walk, jog, ramp, duration)
    fk = median_seconds(out.fk)
    print(f"\nCost: {out.n_joints} joints x {out.n_frames:,} output frames; median of {RUNS} runs")
    header = f"{'step':<44} {'ms':>8} {'x FK':>6}"
    print(header)
    print("-" * len(header))
    print(f"{'FK of the output (baseline)':<44} {fk * 1e3:8.1f} {1.0:6.2f}")
    worst = 0.0
    clips = [bvh.load(cmu_path(name)) for name in ("02_01", "02_03")]
    rows: list[tuple[str, Callable[[], object], bool]] = [
        ("sync_blend, 0 -> 1 ramp", lambda: sync.sync_blend(walk, jog, ramp, duration), True),
        ("sync_blend, weight 0.5", lambda: sync.sync_blend(walk, jog, 0.5, duration), True),
        ("sync_blend, harmonic ramp",
         lambda: sync.sync_blend(walk, jog, ramp, duration, mode="harmonic"), True),
        ("sync_times alone (the phase), ramp", lambda: sync.sync_times(walk, jog, ramp, duration), False),
        ("loop_cycle(02_01) + loop_cycle(02_03)", lambda: [sync.loop_cycle(c) for c in clips], False),
    ]
    for label, fn, blend in rows:
        seconds = median_seconds(fn)
        if blend:
            worst = max(worst, seconds / fk)
        print(f"{label:<44} {seconds * 1e3:8.1f} {seconds / fk:6.2f}")
    verdict = "meets" if worst <= TARGET else "MISSES"
    print(f"sync_blend: slowest {worst:.2f}x FK, {verdict} the {TARGET:g}x target")


def main() -> int:
    print(machine())
    walk = sync.loop_cycle(bvh.load(cmu_path("02_01")))
    jog = sync.loop_cycle(bvh.load(cmu_path("02_03")))
    quality(walk, jog)
    cost(walk, jog)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
