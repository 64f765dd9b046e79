"""Training data from BVH folders: one `.npz` per clip (schema in the README).

    python -m core.dataset SRC... --out DIR [--workers N] [--window 0.5] [--sigma 0.00833]

Each output is written atomically (a temp file renamed into place) and carries a hash of the
settings and the source file's bytes, so a re-run skips what is already done, also after a run
that was killed midway. A bad file is reported and the rest go on. Workers are separate processes
started fresh ("spawn"), so this is safe to call from inside Blender (which runs it serially).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import body, bvh, contacts, events, files

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Settings:
    """What an export depends on besides the source file (changing any redoes the outputs)."""

    window: float = 0.5
    sigma: float = 1 / 120
    speed_mps: float = contacts.FOOT_SPEED_MPS
    feet: tuple[str, str] | None = None  # (left, right) ankle names, where the body map's are wrong

    def digest(self, source: bytes) -> str:
        said: dict[str, object] = {"schema": SCHEMA_VERSION, "window": self.window, "sigma": self.sigma,
                                   "speed_mps": self.speed_mps}
        if self.feet is not None:
            said["feet"] = list(self.feet)
        h = hashlib.sha256(json.dumps(said).encode())
        h.update(hashlib.sha256(source).digest())
        return h.hexdigest()


@dataclass
class Report:
    written: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def clip_arrays(path: str | os.PathLike[str], settings: Settings = Settings()) -> dict[str, np.ndarray]:
    """The arrays one clip exports to (see the README's dataset schema)."""
    source = Path(path).read_bytes()
    clip = bvh.loads(source, source=str(path))
    if settings.feet is not None:
        clip = body.with_feet(clip, {"L": settings.feet[0], "R": settings.feet[1]})
    _, world = clip.fk()
    out: dict[str, np.ndarray] = {
        "schema_version": np.array(SCHEMA_VERSION),
        "source": np.array(Path(path).name),
        "settings_hash": np.array(settings.digest(source)),
        "names": np.array(clip.names),
        "parents": clip.parents.astype(np.int64),
        "fps": np.array(clip.fps),
        "meters_per_unit": np.array(clip.meters_per_unit),
        "motion_start": np.array(clip.motion_start, dtype=np.int64),
        "rotations": clip.rotations,
        "world_positions": world * clip.meters_per_unit,
        "event_window": np.array(settings.window),
        "event_sigma": np.array(settings.sigma),
    }
    try:
        planted = contacts.contacts(clip, speed_mps=settings.speed_mps)
        steps = contacts.footsteps(clip, speed_mps=settings.speed_mps)
    except ValueError:  # no two legs: no contacts, no footsteps
        planted, steps = {}, {}
    feet = sorted(planted)
    out["contact_feet"] = np.array(feet, dtype=str)
    out["contacts"] = (np.stack([planted[f] for f in feet], axis=1) if feet
                       else np.zeros((clip.n_frames, 0), dtype=bool))
    try:
        out["phase"] = contacts.phase(clip, steps)
    except ValueError:  # fewer than two steps, or feet that do not alternate
        out["phase"] = np.full(clip.n_frames, np.nan)
    tracks = {**{k: np.asarray(v) for k, v in clip.events.items()}, **steps}
    out["event_tracks"] = np.array(sorted(tracks), dtype=str)
    for track in sorted(tracks):
        sin, cos = events.encode(clip.times, tracks[track], settings.window, settings.sigma)
        out[f"event_{track}"] = np.stack([sin, cos], axis=1)
        out[f"event_{track}_times"] = np.asarray(tracks[track], dtype=np.float64)
    return out


def output_path(source: Path, out_dir: Path) -> Path:
    return out_dir / f"{source.stem}.npz"


def is_done(source: Path, out_dir: Path, settings: Settings) -> bool:
    target = output_path(source, out_dir)
    if not target.is_file():
        return False
    try:
        with np.load(target) as data:
            return str(data["settings_hash"]) == settings.digest(source.read_bytes())
    except (OSError, ValueError, KeyError):  # unreadable or foreign: redo it
        return False


def export_one(source: str | os.PathLike[str], out_dir: str | os.PathLike[str],
               settings: Settings = Settings()) -> Path:
    """Write one clip's .npz atomically; returns its path."""
    source, out_dir = Path(source), Path(out_dir)
    arrays = clip_arrays(source, settings)
    target = output_path(source, out_dir)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # (numpy 2.4 stubs read ** as allow_pickle)
    files.write_atomic(target, buffer.getvalue())
    return target


def _sources(inputs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    found: list[Path] = []
    for p in map(Path, inputs):
        if p.is_dir():
            found += sorted(q for q in p.rglob("*") if q.suffix.lower() == ".bvh" and q.is_file())
        else:
            found.append(p)
    return found


def export(inputs: Sequence[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
           settings: Settings = Settings(), workers: int | None = None,
           progress: Callable[[int, int, str], None] | None = None) -> Report:
    """Export BVH files and folders (searched recursively) to `out_dir`, one .npz per clip.

    `workers`: processes (default: all cores; 1 runs here, serially). Done outputs (same settings,
    same source bytes) are skipped; a bad file is reported in `Report.failed` and the rest go on.
    `progress(done, total, name)` is called after each file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(".*.npz.*.tmp"):  # left by a run that was killed mid-write
        stale.unlink(missing_ok=True)
    sources = _sources(inputs)
    report = Report()
    todo = []
    for source in sources:
        if is_done(source, out, settings):
            report.skipped.append(output_path(source, out))
        else:
            todo.append(source)
    total, count = len(sources), len(report.skipped)
    workers = (os.cpu_count() or 1) if workers is None else max(1, workers)

    def finished(source: Path, result: Path | None, error: str | None) -> None:
        nonlocal count
        count += 1
        if error is None and result is not None:
            report.written.append(result)
        else:
            report.failed.append((source, error or "failed"))
        if progress is not None:
            progress(count, total, source.name)

    if workers == 1 or len(todo) <= 1:
        for source in todo:
            try:
                finished(source, export_one(source, out, settings), None)
            except (bvh.BVHError, ValueError, OSError) as exc:
                finished(source, None, str(exc))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=context) as pool:
            futures = {pool.submit(export_one, source, out, settings): source for source in todo}
            for future in as_completed(futures):
                try:
                    finished(futures[future], future.result(), None)
                except (bvh.BVHError, ValueError, OSError) as exc:
                    finished(futures[future], None, str(exc))
    report.written.sort()
    return report


def _progress_bar(done: int, total: int, name: str) -> None:
    width = 30
    filled = width * done // max(total, 1)
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name[:40]:<40}", end="",
          file=sys.stderr, flush=True)
    if done == total:
        print(file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.dataset", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="BVH files or folders (searched recursively)")
    parser.add_argument("--out", required=True, help="output folder for the .npz files")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--window", type=float, default=0.5, help="event encoding window, seconds")
    parser.add_argument("--sigma", type=float, default=1 / 120, help="event smoothing, seconds")
    parser.add_argument("--speed", type=float, default=contacts.FOOT_SPEED_MPS,
                        help="foot contact speed, m/s")
    parser.add_argument("--feet", metavar="LEFT,RIGHT",
                        help="the two ankle joints by name, where the body map finds others")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    feet = None
    if args.feet:
        left, sep, right = args.feet.partition(",")
        if not (sep and left.strip() and right.strip()):
            parser.error(f"--feet takes LEFT,RIGHT ankle names, not {args.feet!r}")
        feet = (left.strip(), right.strip())
    report = export(args.inputs, args.out, settings=Settings(args.window, args.sigma, args.speed, feet),
                    workers=args.workers, progress=None if args.quiet else _progress_bar)
    for source, error in report.failed:
        print(f"dataset: error: {error if str(source) in error else f'{source}: {error}'}", file=sys.stderr)
    print(f"dataset: {len(report.written)} written, {len(report.skipped)} already done, "
          f"{len(report.failed)} failed -> {args.out}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
