"""What the benchmarks share: the repo and its test data on the path (importing this module puts
them there), the machine a table was measured on, a median of timed runs, and a long take made of a
short one. A benchmark starts with `from _bench import ...` (bench/ is on the path of a script run
from it)."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _entry in (ROOT / "tests", ROOT):  # the repo first: `core` is the repo's
    if str(_entry) not in sys.path:
        sys.path.insert(0, str(_entry))

from core.clip import Clip  # noqa: E402


def cpu_model() -> str:
    """platform.processor(), or the model name Linux reports when that is empty."""
    name = platform.processor()
    if not name and Path("/proc/cpuinfo").is_file():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return name or "unknown processor"


def machine() -> str:
    """The machine, as every benchmark heads its table: processor, cores, load, Python, numpy."""
    return (f"{cpu_model()} ({platform.machine()}), {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
            f"Python {platform.python_version()}, numpy {np.__version__}")


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
