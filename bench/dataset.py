"""Dataset export throughput: takes/s on each engine.

    python build.py bench dataset        (or: PYTHONPATH=. python bench/dataset.py [--rounds 3])

The 9 CMU and 12 Bandai takes of tests/data, copied 24 times under other names (504 files, the
Bandai ones beside their LICENSE), exported to a fresh folder each time by: the local engine with
1 worker (serial, in this process) and with 2 (a spawn pool, its start included); Dask's
distributed with a LocalCluster of 2 single-threaded worker processes, once counting the
cluster's start and stop (what `--engine dask` costs) and once on a cluster already running (what
a long-lived scheduler costs). Median and best of the rounds, engines taking turns (the
best is the one least disturbed by other work on a shared machine). Targets: 2 local
workers >= 1.7x one on a 2-core machine; Dask within 20 % of the local pool.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
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


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (pool workers, cluster ones)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(run: Callable[[Path], dataset.Report], out: Path, cpu: list[float] | None = None) -> float:
    shutil.rmtree(out, ignore_errors=True)
    c0, t0 = cpu_seconds(), time.perf_counter()
    report = run(out)
    seconds = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(cpu_seconds() - c0)
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

        def on_running_dask(target: Path) -> dataset.Report:
            return dataset.export([src], target, executor=client.get_executor(), workers=2)

        times: dict[str, list[float]] = {"local, 1 worker": [], "local, 2 workers": [],
                                         "dask, 2 workers (cluster start included)": [],
                                         "dask, 2 workers (running cluster)": []}
        loads = [os.getloadavg()[0]]
        cpu: dict[str, list[float]] = {"local, 1 worker": [], "local, 2 workers": []}
        for _ in range(args.rounds):
            times["local, 1 worker"].append(timed(lambda o: dataset.export([src], o, workers=1), out,
                                                  cpu["local, 1 worker"]))
            times["local, 2 workers"].append(timed(lambda o: dataset.export([src], o, workers=2), out,
                                                   cpu["local, 2 workers"]))
            times["dask, 2 workers (cluster start included)"].append(timed(on_dask_with_start, out))
            # A cluster up only for its own timing: idle Dask workers would share the cores too.
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            with cluster, Client(cluster) as client:
                client.run(lambda: None)
                times["dask, 2 workers (running cluster)"].append(timed(on_running_dask, out))
            loads.append(os.getloadavg()[0])

    print(f"dataset export, {n} files (CMU + Bandai x {COPIES}), {args.rounds} rounds, engines taking "
          f"turns; {os.cpu_count()} CPUs, load average {min(loads):.2f}-{max(loads):.2f} "
          f"(other work shares these cores), Python {platform.python_version()}")
    for label, pick in (("median", statistics.median), ("best", min)):
        best = {k: pick(v) for k, v in times.items()}
        one, pool = best["local, 1 worker"], best["local, 2 workers"]
        print(f"\n{label + ' of rounds':<44} {'seconds':>8} {'takes/s':>8} {'vs 1 worker':>12} "
              f"{'vs local pool':>14}")
        for name, seconds in best.items():
            print(f"{name:<44} {seconds:8.2f} {n / seconds:8.1f} {one / seconds:11.2f}x "
                  f"{pool / seconds:13.2f}x")
        scaling = one / pool
        dask = [k for k in best if k.startswith("dask")]
        print(f"targets ({label}): 2 local workers >= 1.7x one: {scaling:.2f}x "
              f"({'met' if scaling >= 1.7 else 'MISSED'}); Dask within 20 % of the local pool: "
              + ", ".join(f"{k.split('(')[1].rstrip(')')} {best[k] / pool:.2f}x "
                          f"({'met' if best[k] <= 1.2 * pool else 'MISSED'})" for k in dask))
    one_cpu, two_cpu = (statistics.median(cpu[k]) for k in ("local, 1 worker", "local, 2 workers"))
    print(f"\nCPU seconds (median): 1 worker {one_cpu:.2f}, 2 workers {two_cpu:.2f} (pool start included): "
          f"the work split over 2 processes costs {two_cpu / one_cpu:.2f}x its serial CPU time, so on 2 free "
          f"cores 2 workers could run at best {2 * one_cpu / two_cpu:.2f}x as fast as 1")
    print("per round, seconds: " + "; ".join(f"{k}: {', '.join(f'{t:.2f}' for t in v)}"
                                               for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
