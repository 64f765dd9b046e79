"""Dataset export throughput: takes/s on each engine, as the command line runs it.

    python build.py bench dataset        (or: PYTHONPATH=. python bench/dataset.py [--rounds 4])

The 9 CMU and 12 Bandai takes of tests/data, copied 24 times under other names (504 files, the
Bandai ones beside their LICENSE), exported to a fresh folder by `python -m core.dataset` in a
fresh process each time (interpreter start and imports included, as a user pays them): the local
engine with `--workers 1` (serial) and `--workers 2` (a spawn pool); `--engine dask --workers 2`
(a LocalCluster of 2 single-threaded worker processes, started and stopped by the run); and
`--engine dask --scheduler ADDRESS` on a LocalCluster of 2 workers this script keeps running
(what a long-lived cluster costs; its workers set up as docs/batch.md's Dask config file sets
them). Median and best of the rounds, engines taking turns (the best is the round least
disturbed by other work on a shared machine). Targets: 2 local workers >=
1.7x one on a 2-core machine; Dask within 20 % of the local pool. CPU seconds of the local runs
(the process and its pool) tell what scaling the work itself allows.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import ROOT, machine

COPIES = 24


def library(folder: Path) -> int:
    cmu = sorted((ROOT / "tests" / "data" / "cmu").rglob("*.bvh"))
    bandai = sorted((ROOT / "tests" / "data" / "bandai").glob("*.bvh"))
    (folder / "cmu").mkdir(parents=True)
    (folder / "bandai").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "bandai" / "LICENSE", folder / "bandai" / "LICENSE")
    n = 0
    for k in range(COPIES):
        for kind, takes in (("cmu", cmu), ("bandai", bandai)):
            for take in takes:
                shutil.copy(take, folder / kind / f"{take.stem}_{k:02d}.bvh")
                n += 1
    return n


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def timed(args: list[str], src: Path, out: Path, n: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one export from scratch."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    c0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "core.dataset", str(src), "--out", str(out), "--quiet",
                           *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0 or f"{n} written" not in done.stdout:
        raise SystemExit(f"export {args} failed: {done.stdout[-500:]} {done.stderr[-2000:]}")
    return seconds, children_cpu() - c0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    engines = {"local, 1 worker": ["--workers", "1"], "local, 2 workers": ["--workers", "2"],
               "dask, LocalCluster of 2 (started by the run)": ["--engine", "dask", "--workers", "2"],
               "dask, running cluster of 2": ["--engine", "dask"]}
    times: dict[str, list[float]] = {k: [] for k in engines}
    cpu: dict[str, list[float]] = {k: [] for k in engines}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        n = library(src)
        out = Path(tmp) / "out"
        from dask import config as dask_config

        from core.dataset import LOCAL_CLUSTER_CONFIG

        with dask_config.set(LOCAL_CLUSTER_CONFIG):  # as docs/batch.md sets up a long-running cluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        with cluster, Client(cluster) as client:
            client.wait_for_workers(2)
            engines["dask, running cluster of 2"] += ["--scheduler", cluster.scheduler_address]
            for _ in range(args.rounds):
                for name, flags in engines.items():
                    seconds, used = timed(flags, src, out, n)
                    times[name].append(seconds)
                    cpu[name].append(used)
                loads.append(os.getloadavg()[0])

    print(f"dataset export, {n} files (CMU + Bandai x {COPIES}), {args.rounds} rounds, engines taking "
          f"turns; {machine()}, load average over the rounds {min(loads):.2f}-{max(loads):.2f} "
          "(other work shares these cores)")
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
              + ", ".join(f"{k.removeprefix('dask, ')} {best[k] / pool:.2f}x "
                          f"({'met' if best[k] <= 1.2 * pool else 'MISSED'})" for k in dask))
    one_cpu, two_cpu = (statistics.median(cpu[k]) for k in ("local, 1 worker", "local, 2 workers"))
    print(f"\nCPU seconds (median): 1 worker {one_cpu:.2f}, 2 workers {two_cpu:.2f} (process starts "
          f"included): the work split over 2 processes costs {two_cpu / one_cpu:.2f}x its serial CPU time, "
          f"so on 2 free cores 2 workers could run at best {2 * one_cpu / two_cpu:.2f}x as fast as 1")
    print("per round, seconds: " + "; ".join(f"{k}: {', '.join(f'{t:.2f}' for t in v)}"
                                               for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
