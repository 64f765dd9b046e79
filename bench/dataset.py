"""Dataset export throughput: takes/s on each engine.

    python build.py bench dataset        (or: PYTHONPATH=. python bench/dataset.py [--rounds 3])

The 9 CMU and 12 Bandai takes of tests/data, copied 24 times under other names (504 files, the
Bandai ones beside their LICENSE), exported to a fresh folder each time by: the local engine with
1 worker (serial, in this process) and with 2 (a spawn pool, its start included); Dask's
distributed with a LocalCluster of 2 single-threaded worker processes, once counting the
cluster's start and stop (what `--engine dask` costs) and once on a cluster already running (what
a long-lived scheduler costs). Median of the rounds, engines taking turns. Targets: 2 local
workers >= 1.7x one on a 2-core machine; Dask within 20 % of the local pool.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import dataset  # noqa: E402

COPIES = 24


def library(folder: Path) -> list[Path]:
    cmu = sorted((ROOT / "tests" / "data" / "cmu").rglob("*.bvh"))
    bandai = sorted((ROOT / "tests" / "data" / "bandai").glob("*.bvh"))
    (folder / "cmu").mkdir(parents=True)
    (folder / "bandai").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "bandai" / "LICENSE", folder / "bandai" / "LICENSE")
    out = []
    for k in range(COPIES):
        for kind, takes in (("cmu", cmu), ("bandai", bandai)):
            for take in takes:
                target = folder / kind / f"{take.stem}_{k:02d}.bvh"
                shutil.copy(take, target)
                out.append(target)
    return out


def timed(run: Callable[[Path], dataset.Report], out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    report = run(out)
    seconds = time.perf_counter() - t0
    if report.failed or report.skipped:
        raise SystemExit(f"export did not write every file: {report.failed[:3]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        n = len(library(src))
        out = Path(tmp) / "out"

        def on_dask_with_start(target: Path) -> dataset.Report:
            with dataset.dask_executor(None, 2) as (executor, threads):
                return dataset.export([src], target, executor=executor, workers=threads)

        times: dict[str, list[float]] = {"local, 1 worker": [], "local, 2 workers": [],
                                         "dask, 2 workers (cluster start included)": [],
                                         "dask, 2 workers (running cluster)": []}
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        with cluster, Client(cluster) as client:
            client.run(lambda: None)  # workers up before the first timing
            for _ in range(args.rounds):
                times["local, 1 worker"].append(timed(lambda o: dataset.export([src], o, workers=1), out))
                times["local, 2 workers"].append(timed(lambda o: dataset.export([src], o, workers=2), out))
                times["dask, 2 workers (running cluster)"].append(timed(
                    lambda o: dataset.export([src], o, executor=client.get_executor(), workers=2), out))
        for _ in range(args.rounds):
            times["dask, 2 workers (cluster start included)"].append(timed(on_dask_with_start, out))

    median = {k: statistics.median(v) for k, v in times.items()}
    one = median["local, 1 worker"]
    pool = median["local, 2 workers"]
    print(f"dataset export, {n} files (CMU + Bandai x {COPIES}), median of {args.rounds} rounds; "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}")
    print(f"{'engine':<44} {'seconds':>8} {'takes/s':>8} {'vs 1 worker':>12} {'vs local pool':>14}")
    for name, seconds in median.items():
        print(f"{name:<44} {seconds:8.2f} {n / seconds:8.1f} {one / seconds:11.2f}x {pool / seconds:13.2f}x")
    scaling = one / pool
    print(f"targets: 2 local workers >= 1.7x one: {scaling:.2f}x ({'met' if scaling >= 1.7 else 'MISSED'}); "
          f"Dask within 20 % of the local pool: "
          + ", ".join(f"{k.split('(')[1].rstrip(')')} {median[k] / pool:.2f}x "
                      f"({'met' if median[k] <= 1.2 * pool else 'MISSED'})"
                      for k in median if k.startswith("dask")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
