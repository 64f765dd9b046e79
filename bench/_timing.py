"""What the benchmarks share: a median of timed runs, and a long take made of a short one."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from core.clip import Clip


def median_seconds(fn: Callable[[], object], runs: int, warm_up: bool = False,
                   clock: Callable[[], float] = time.perf_counter) -> float:
    """Median wall time of `runs` calls of fn, seconds; `warm_up`: one untimed call first (first-touch
    page faults and caches belong to no one call); `clock`: another clock (`time.process_time`: the
    CPU time of the process, all its threads, which other processes' load barely moves)."""
    if warm_up:
        fn()
    times = []
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return float(np.median(times))


def cpu_rounds(fns: Sequence[Callable[[], object]], rounds: int) -> np.ndarray:
    """[rounds, len(fns)] CPU seconds of the process (`time.process_time`), the functions taking
    turns in each round after one untimed call of each, so that a machine shared with other work
    loads them alike: compare a case with the baseline of its own round."""
    for fn in fns:
        fn()
    out = np.empty((rounds, len(fns)))
    for r in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            out[r, i] = time.process_time() - t0
    return out


def long_take(clip: Clip, frames: int) -> Clip:
    """`clip` repeated to `frames` frames, read afresh (nothing inferred carried over)."""
    reps = -(-frames // clip.n_frames)
    return Clip(clip.names, clip.parents, clip.offsets, np.concatenate([clip.rotations] * reps)[:frames],
                np.concatenate([clip.positions] * reps)[:frames], clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, motion_start=clip.motion_start)
