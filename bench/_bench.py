"""What the benchmarks share: the repo and its test data on the path (importing this module puts
them there), the machine a table was measured on, a median of timed runs, rounds of cases taking
turns and a row of their ratios to FK, and a long take made of a short one. A benchmark starts
with `from _bench import ...` (bench/ is on the path of a script run from it) before it imports
anything of the repo's."""

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


def turns(fns: Sequence[Callable[[], object]], rounds: int, *, clock: Callable[[], float] = time.perf_counter,
          warm_up: bool = False, setup: Callable[[], object] | None = None) -> np.ndarray:
    """[rounds, len(fns)] seconds by `clock`, the functions taking turns in each round (a, b, a, b,
    ...) so that a machine shared with other work loads them alike: compare a case with the
    baseline of its own round. `warm_up`: one untimed call of each first; `setup()` runs before
    each call, untimed."""
    if warm_up:
        for fn in fns:
            fn()
    out = np.empty((rounds, len(fns)))
    for r in range(rounds):
        for i, fn in enumerate(fns):
            if setup is not None:
                setup()
            t0 = clock()
            fn()
            out[r, i] = clock() - t0
    return out


def cpu_rounds(fns: Sequence[Callable[[], object]], rounds: int) -> np.ndarray:
    """turns() in CPU seconds of the process (`time.process_time`, which other processes' load
    barely moves), after one untimed call of each."""
    return turns(fns, rounds, clock=time.process_time, warm_up=True)


RATIO_HEADER = f"{'FK ms':>8}{'case ms':>10}{'median':>8}{'min':>7}  target"


def ratio_row(label: str, t: np.ndarray, fk: np.ndarray, target: float | None,
              width: int = 40) -> tuple[str, bool]:
    """A row of a table of cases timed against FK in rounds (cpu_rounds): times t and fk [rounds]
    seconds, the median of the rounds' ratios (checked on `target`, None: for information) and the
    ratio of each side's fastest round; and whether the target is met. RATIO_HEADER heads it."""
    ratio = float(np.median(t / fk))
    ok = target is None or ratio <= target
    goal = "(for information)" if target is None else f"<= {target:g}x {'ok' if ok else 'MISSED'}"
    return (f"{label:<{width}}{np.median(fk) * 1e3:>8.1f}{np.median(t) * 1e3:>10.1f}{ratio:>7.2f}x"
            f"{t.min() / fk.min():>7.2f}x  {goal}"), ok


def long_take(clip: Clip, frames: int) -> Clip:
    """`clip` repeated to `frames` frames, read afresh (nothing inferred carried over)."""
    reps = -(-frames // clip.n_frames)
    return Clip(clip.names, clip.parents, clip.offsets, np.concatenate([clip.rotations] * reps)[:frames],
                np.concatenate([clip.positions] * reps)[:frames], clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, motion_start=clip.motion_start)
