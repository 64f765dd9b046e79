"""Training data from BVH folders: one `.npz` per take, quality flags, packs for training.

    python -m core.dataset INPUTS... --out DIR [--engine local|dask] [--scheduler ADDRESS]
                           [--workers N] [--shard I/N] [--exclude RULE]...
    python -m core.dataset pack DATASET --out PACK --window N --stride K [...]   (core/pack.py)
    python -m core.dataset manifest DIR

Each output is written atomically (a temp file renamed into place) and carries a hash of the
settings and the source file's bytes (and its LICENSE line), so a re-run skips what is already
done, also after a run that was killed midway, on any engine or shard. A bad file is reported and
the rest go on. The files hold no paths, times or engine details: every engine, worker count and
shard writes the same bytes. Workers are separate processes started fresh ("spawn") or Dask
workers, so this is safe to call from inside Blender (which runs it serially).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import math
import multiprocessing
import operator
import os
import re
import sys
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import axes, body, bvh, contacts, events, files, skeleton
from .clip import Clip

# 3: event tracks turn through the far side between events closer than two windows (issue 25).
SCHEMA_VERSION = 3

# Foot skating as motion generation papers report it (e.g. GMD, MotionLCM): a foot point within
# 5 cm of the floor that moves faster than 0.5 m/s along it.
SKATE_HEIGHT_M = 0.05
SKATE_SPEED_MPS = 0.5
# A take whose every joint stays this close to where it starts is static.
STATIC_M = 0.05
# A take with feet whose feet are planted on fewer frames than this is airborne.
AIRBORNE_PLANTED = 0.1
LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "COPYING")
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Settings:
    """What an export depends on besides the source file (changing any redoes the outputs)."""

    window: float = 0.5
    sigma: float = 1 / 120
    speed_mps: float | None = None  # foot speed threshold, m/s; None: Auto (contacts.thresholds)
    feet: tuple[str, str] | None = None  # (left, right) ankle names, where the body map's are wrong

    def digest(self, source: bytes, licence: str = "") -> str:
        said: dict[str, object] = {"schema": SCHEMA_VERSION, "window": self.window, "sigma": self.sigma,
                                   "speed_mps": self.speed_mps}
        if self.feet is not None:
            said["feet"] = list(self.feet)
        if licence:
            said["licence"] = licence
        h = hashlib.sha256(json.dumps(said).encode())
        h.update(hashlib.sha256(source).digest())
        return h.hexdigest()


@dataclass
class Report:
    written: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    excluded: list[tuple[Path, str]] = field(default_factory=list)  # (source, the rule it matched)
    warned: list[tuple[Path, str]] = field(default_factory=list)  # (source, an EventWarning it gave)
    seconds: float = 0.0
    manifest: Path | None = None

    def summary(self) -> str:
        done = len(self.written) + len(self.skipped) + len(self.failed) + len(self.excluded)
        rate = done / self.seconds if self.seconds > 0 else float("inf")
        warned = f", {len(self.warned)} event warnings" if self.warned else ""
        return (f"{len(self.written)} written, {len(self.skipped)} already done, {len(self.failed)} failed, "
                f"{len(self.excluded)} excluded{warned} in {self.seconds:.1f} s ({rate:.1f} takes/s)")


# -- quality flags --------------------------------------------------------------------------------


def skating_ratio(points: np.ndarray, up: np.ndarray, fps: float, *, height_m: float = SKATE_HEIGHT_M,
                  speed_mps: float = SKATE_SPEED_MPS) -> float:
    """Fraction of frame steps t -> t+1 where a foot skates: one of its points [T, F, P, 3]
    (meters; F feet, P points each) is within height_m of the floor at both frames and moves
    faster than speed_mps along it. The floor is the lowest foot point of the take. NaN for
    fewer than two frames or no feet."""
    T = points.shape[0]
    if T < 2 or points.shape[1] == 0:
        return float("nan")
    up = np.asarray(up, dtype=np.float64)
    height = points @ up
    height = height - height.min()
    low = (height[1:] < height_m) & (height[:-1] < height_m)
    step = np.diff(points, axis=0)
    along = step - (step @ up)[..., None] * up
    fast = np.linalg.norm(along, axis=-1) * fps > speed_mps
    skating = (low & fast).any(axis=(1, 2))
    return float(skating.mean())


def foot_points(clip: Clip, world_rot: np.ndarray, world_pos: np.ndarray) -> np.ndarray:
    """[T, 2, P, 3] world positions of each foot's joints and End Sites (L then R), file units;
    P is the larger foot's count, the smaller repeating its last point."""
    points = contacts.foot_points(clip)
    ends = (clip.end_site_positions(world_rot, world_pos) if len(clip.end_parents)
            else np.zeros((clip.n_frames, 0, 3)))
    per_foot = []
    for side in ("L", "R"):
        joints, sites = points[side]
        per_foot.append(np.concatenate([world_pos[:, joints], ends[:, sites]], axis=1))
    P = max(f.shape[1] for f in per_foot)
    padded = [np.concatenate([f, np.repeat(f[:, -1:], P - f.shape[1], axis=1)], axis=1) for f in per_foot]
    return np.stack(padded, axis=1)


def licence_of(source: Path) -> str:
    """The first line of a LICENSE (or COPYING) file beside `source`, '' when there is none."""
    for name in LICENCE_FILES:
        path = source.parent / name
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                if line.strip():
                    return line.strip()[:200]
    return ""


def mirror_partners(clip: Clip) -> np.ndarray | None:
    """[J] each joint's other-side joint (itself on the middle), for mirroring: from names
    (axes.partners) where they pair the body map's legs, else from the body map's legs, feet and
    arms (what lies below paired joints pairs child by child). None when neither is a mirror of
    the hierarchy."""
    b = clip.body
    by_names = axes.partners(clip.names)
    candidates = [by_names]
    if b.legs:
        candidates.append(_body_partners(clip))
    for partner in candidates:
        parents = clip.parents
        mapped = np.where(parents >= 0, partner[np.maximum(parents, 0)], -1)
        if not np.array_equal(parents[partner], mapped):
            continue
        if b.legs and not np.array_equal(partner[b.legs["L"]], b.legs["R"]):
            continue
        return partner
    return None


def _body_partners(clip: Clip) -> np.ndarray:
    parents = clip.parents
    kids = skeleton.children(parents)
    partner = np.arange(clip.n_joints)
    b = clip.body

    def pair(a: int, c: int) -> None:
        partner[a], partner[c] = c, a
        if len(kids[a]) == len(kids[c]):
            for x, y in zip(kids[a], kids[c], strict=True):
                if partner[x] == x and x != y:
                    pair(x, y)

    for chains in (b.legs, b.feet, b.arms):
        if set(chains) != {"L", "R"} or len(chains["L"]) != len(chains["R"]):
            continue
        a, c = chains["L"][0], chains["R"][0]
        while a >= 0 and c >= 0 and a != c and parents[a] != parents[c]:  # up to where the sides meet
            a, c = int(parents[a]), int(parents[c])
        if a >= 0 and c >= 0 and a != c:
            pair(a, c)
    return partner


def quality(clip: Clip, world_rot: np.ndarray, world_pos: np.ndarray, planted: Mapping[str, np.ndarray],
            steps: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The quality flags of one take as `quality_*` arrays (docs/api.md, training data)."""
    ms = clip.motion_start
    meters = clip.meters_per_unit
    found = bool(clip.body.feet)
    moved = (np.linalg.norm(world_pos[ms:] - world_pos[ms], axis=-1) * meters if clip.n_frames > ms
             else np.zeros(1))
    seconds = max(clip.n_frames - ms - 1, 0) / clip.fps
    out: dict[str, np.ndarray] = {
        "quality_feet_found": np.array(found),
        "quality_feet_from": np.array(clip.body.evidence.get("legs", "") if found else ""),
        "quality_static": np.array(bool(moved.max(initial=0.0) < STATIC_M)),
    }
    if found:
        feet = sorted(planted)
        n_steps = np.array([len(steps.get(f"FootDown_{f}", ())) for f in feet], dtype=np.int64)
        any_planted = np.stack([planted[f][ms:] for f in feet], axis=1).any(axis=1)
        planted_fraction = float(any_planted.mean()) if any_planted.size else 0.0
        points = foot_points(clip, world_rot, world_pos)[ms:] * meters
        out["quality_steps"] = n_steps
        out["quality_cadence"] = np.array(60.0 * n_steps.sum() / seconds if seconds > 0 else float("nan"))
        out["quality_planted_fraction"] = np.array(planted_fraction)
        out["quality_skating_ratio"] = np.array(skating_ratio(points, clip.up, clip.fps))
        out["quality_airborne"] = np.array(planted_fraction < AIRBORNE_PLANTED)
    else:
        out["quality_steps"] = np.zeros(0, dtype=np.int64)
        for key in ("cadence", "planted_fraction", "skating_ratio"):
            out[f"quality_{key}"] = np.array(float("nan"))
        out["quality_airborne"] = np.array(False)
    return out


def flags(data: Mapping[str, Any]) -> dict[str, Any]:
    """The flags of a take's arrays (or its loaded .npz) as plain Python values."""
    feet = [str(f) for f in data["contact_feet"]]

    def number(key: str) -> float | None:
        x = float(data[f"quality_{key}"])
        return None if math.isnan(x) else x

    return {
        "feet_found": bool(data["quality_feet_found"]),
        "feet_from": str(data["quality_feet_from"]),
        "steps": dict(zip(feet, (int(n) for n in data["quality_steps"]), strict=True)),
        "cadence": number("cadence"),
        "planted": number("planted_fraction"),
        "skating": number("skating_ratio"),
        "static": bool(data["quality_static"]),
        "airborne": bool(data["quality_airborne"]),
        "licence": str(data["licence"]),
    }


# -- exclusion rules ------------------------------------------------------------------------------

_NAMED_RULES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "no-feet": lambda f: not f["feet_found"],
    "static": lambda f: f["static"],
    "airborne": lambda f: f["airborne"],
    "no-licence": lambda f: not f["licence"],
}
_NUMBERS: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "skating": lambda f: f["skating"],
    "planted": lambda f: f["planted"],
    "cadence": lambda f: f["cadence"],
    "steps": lambda f: sum(f["steps"].values()) if f["feet_found"] else None,
}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_RULE = re.compile(r"^\s*([a-z-]+)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")


def check_rule(rule: str) -> str:
    """`rule` if it is one --exclude understands, else ValueError saying which are."""
    m = _RULE.match(rule)
    if rule.strip() in _NAMED_RULES or (m and m.group(1) in _NUMBERS and _is_number(m.group(3))):
        return rule.strip()
    raise ValueError(f"unknown --exclude rule {rule!r}: use {', '.join(_NAMED_RULES)}, or "
                     f"{'|'.join(_NUMBERS)} with <, <=, >, >= and a number (e.g. 'skating>0.1')")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def excluded_by(take_flags: dict[str, Any], rules: Sequence[str]) -> str | None:
    """The first rule that drops a take with these flags (a number that is unknown never matches)."""
    for rule in rules:
        if rule in _NAMED_RULES:
            if _NAMED_RULES[rule](take_flags):
                return rule
            continue
        m = _RULE.match(rule)
        if m is None:
            raise ValueError(check_rule(rule))
        value = _NUMBERS[m.group(1)](take_flags)
        if value is not None and _COMPARE[m.group(2)](value, float(m.group(3))):
            return rule
    return None


# -- one take -------------------------------------------------------------------------------------


def clip_arrays(path: str | os.PathLike[str], settings: Settings = Settings()) -> dict[str, np.ndarray]:
    """The arrays one take exports to (docs/api.md, training data)."""
    path = Path(path)
    source = path.read_bytes()
    licence = licence_of(path)
    clip = bvh.loads(source, source=str(path))
    return take_arrays(clip, settings, name=path.name, digest=settings.digest(source, licence),
                       licence=licence)


def take_arrays(clip: Clip, settings: Settings = Settings(), *, name: str = "", digest: str = "",
                licence: str = "") -> dict[str, np.ndarray]:
    """The arrays of a take already loaded (clip_arrays reads the file and names its hash).

    An EventWarning names each event track whose events are closer than two windows somewhere
    (events.close_gaps): its encoding decodes exactly only within gap - window of them."""
    if settings.feet is not None:
        clip = body.with_feet(clip, {"L": settings.feet[0], "R": settings.feet[1]})
    world_rot, world = clip.fk()
    partner = mirror_partners(clip)
    out: dict[str, np.ndarray] = {
        "schema_version": np.array(SCHEMA_VERSION),
        "source": np.array(name),
        "settings_hash": np.array(digest),
        "names": np.array(clip.names),
        "parents": clip.parents.astype(np.int64),
        "fps": np.array(clip.fps),
        "meters_per_unit": np.array(clip.meters_per_unit),
        "motion_start": np.array(clip.motion_start, dtype=np.int64),
        "root": np.array(clip.root, dtype=np.int64),
        "up": clip.up.astype(np.float64),
        "forward": clip.forward.astype(np.float64),
        "mirror_partner": (partner if partner is not None else np.full(clip.n_joints, -1)).astype(np.int64),
        "rotations": clip.rotations,
        "world_positions": world * clip.meters_per_unit,
        "event_window": np.array(settings.window),
        "event_sigma": np.array(settings.sigma),
        "licence": np.array(licence),
    }
    # A take whose feet cannot be found is written and flagged, with no contacts: never wrong ones.
    if clip.body.feet:
        planted = contacts.contacts(clip, speed_mps=settings.speed_mps)
        steps = contacts.footsteps(clip, speed_mps=settings.speed_mps)
    else:
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
        close = events.close_gaps(tracks[track], settings.window)
        if close.size:
            warnings.warn(f"{name or clip.name or 'take'}: "
                          f"{events.describe_close_gaps(track, close, settings.window)}",
                          events.EventWarning, stacklevel=2)
    out.update(quality(clip, world_rot, world, planted, steps))
    return out


def speed_arg(text: str) -> float | None:
    """`--speed auto|M`: None for auto, else a positive number of m/s."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected auto or a speed in m/s, not {text!r}") from None
    if not (value > 0.0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"the speed must be positive, not {text!r}")
    return value


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """`arrays` as a compressed .npz whose bytes depend on the arrays alone: np.savez stamps each
    member with the time of writing, which would make two runs' files differ. Deflate level 1:
    mocap floats shrink to 0.71 of their size at level 1 and to 0.70 at level 6 (the default),
    which takes a third longer, and compressing is half of an export's time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", allowZip64=True) as archive:
        for key, value in arrays.items():
            npy = io.BytesIO()
            np.lib.format.write_array(npy, np.asanyarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, npy.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
    return buffer.getvalue()


def output_path(source: Path, out_dir: Path) -> Path:
    return out_dir / f"{source.stem}.npz"


def is_done(source: Path, out_dir: Path, settings: Settings) -> bool:
    target = output_path(source, out_dir)
    if not target.is_file():
        return False
    try:
        with np.load(target) as data:
            return str(data["settings_hash"]) == settings.digest(source.read_bytes(), licence_of(source))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):  # unreadable or foreign: redo it
        return False


def export_one(source: str | os.PathLike[str], out_dir: str | os.PathLike[str],
               settings: Settings = Settings()) -> Path:
    """Write one take's .npz atomically; returns its path."""
    source, out_dir = Path(source), Path(out_dir)
    target = output_path(source, out_dir)
    files.write_atomic(target, npz_bytes(clip_arrays(source, settings)))
    return target


# Outcome of one take in a worker: (source, 'written' | 'skipped' | 'excluded' | 'failed', detail,
# the EventWarnings its export gave).
Outcome = tuple[str, str, str, tuple[str, ...]]


def export_batch(sources: Sequence[str], out_dir: str, settings: Settings,
                 exclude: Sequence[str] = ()) -> list[Outcome]:
    """Export several takes (one task on any engine): done ones are skipped (or removed, when a
    rule now excludes them), the rest written unless a rule excludes them; an error fails its
    take alone."""
    out = Path(out_dir)
    outcomes: list[Outcome] = []
    for name in sources:
        source = Path(name)
        target = output_path(source, out)
        said: tuple[str, ...] = ()
        try:
            if is_done(source, out, settings):
                with np.load(target) as data:
                    rule = excluded_by(flags(data), exclude)
                if rule is None:
                    outcomes.append((name, "skipped", str(target), said))
                    continue
                target.unlink(missing_ok=True)
                outcomes.append((name, "excluded", rule, said))
                continue
            # A worker's warnings would go to its own stderr, interleaved with the others': they
            # travel back with the outcome instead, for the report.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", events.EventWarning)
                arrays = clip_arrays(source, settings)
            said = tuple(str(w.message) for w in caught if issubclass(w.category, events.EventWarning))
            for w in caught:
                if not issubclass(w.category, events.EventWarning):
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            rule = excluded_by(flags(arrays), exclude)
            if rule is not None:
                target.unlink(missing_ok=True)  # an older export of it must not stay in the set
                outcomes.append((name, "excluded", rule, said))
                continue
            files.write_atomic(target, npz_bytes(arrays))
            outcomes.append((name, "written", str(target), said))
        except Exception as exc:  # one bad take (or a bug it triggers) must not stop a library
            message = str(exc) if isinstance(exc, (ValueError, OSError)) else f"{type(exc).__name__}: {exc}"
            outcomes.append((name, "failed", message, said))
    return outcomes


def _sources(inputs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Every input file, folders searched recursively for .bvh, sorted by path, once each."""
    found: set[Path] = set()
    for p in map(Path, inputs):
        if p.is_dir():
            found.update(q for q in p.rglob("*") if q.suffix.lower() == ".bvh" and q.is_file())
        else:
            found.add(p)
    return sorted(found, key=str)


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N), 1 <= I <= N."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/8), not {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_of(sources: Sequence[Path], shard: tuple[int, int] | None) -> list[Path]:
    """Shard I of N: every N-th file of the sorted list from the I-th, so shards take alike mixes
    of a folder's long and short takes."""
    if shard is None:
        return list(sources)
    i, n = shard
    return list(sources[i - 1::n])


def batches(sources: Sequence[Path], workers: int) -> list[list[Path]]:
    """Several takes per task (scheduling a task costs about a millisecond on Dask), about eight
    tasks per worker for balance; longest files first, so the last tasks are short ones."""
    if not sources:
        return []
    by_size = sorted(sources, key=lambda p: (-_size(p), str(p)))
    per_task = max(1, min(16, math.ceil(len(by_size) / (8 * max(workers, 1)))))
    return [by_size[k:k + per_task] for k in range(0, len(by_size), per_task)]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def export(inputs: Sequence[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
           settings: Settings = Settings(), workers: int | None = None, executor: Executor | None = None,
           shard: tuple[int, int] | None = None, exclude: Sequence[str] = (),
           progress: Callable[[int, int, str], None] | None = None) -> Report:
    """Export BVH files and folders (searched recursively) to `out_dir`, one .npz per take.

    executor: any concurrent.futures.Executor (a Dask client's `get_executor()`, say), left
    running; else `workers` processes (default: all cores; 1 runs here, serially). shard (I, N):
    only shard I of N of the sorted file list (see shard_of). Done outputs (same settings, same
    source bytes) are skipped; a bad file is reported in `Report.failed` and the rest go on;
    takes an `exclude` rule matches are not written. Without a shard the manifest is rebuilt.
    `progress(done, total, name)` is called after each take.
    """
    begin = time.perf_counter()
    rules = [check_rule(r) for r in exclude]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    everything = _sources(inputs)
    report = Report()
    first: dict[str, Path] = {}
    clashes: dict[Path, str] = {}
    for source in everything:
        other = first.setdefault(output_path(source, out).name, source)
        if other is not source:
            clashes[source] = f"{source}: writes {other.stem}.npz as {other} does: rename one"
    mine = shard_of(everything, shard)
    for source in mine:  # left by a run of this shard that was killed mid-write
        for stale in out.glob(f".{glob_escape(output_path(source, out).name)}.*.tmp"):
            stale.unlink(missing_ok=True)
    total, count = len(mine), 0

    def record(outcomes: list[Outcome]) -> None:
        nonlocal count
        for name, status, detail, said in outcomes:
            source = Path(name)
            count += 1
            report.warned.extend((source, message) for message in said)
            if status == "written":
                report.written.append(Path(detail))
            elif status == "skipped":
                report.skipped.append(Path(detail))
            elif status == "excluded":
                report.excluded.append((source, detail))
            else:
                report.failed.append((source, detail))
            if progress is not None:
                progress(count, total, source.name)

    record([(str(s), "failed", clashes[s], ()) for s in mine if s in clashes])
    todo = [s for s in mine if s not in clashes]
    if executor is None:
        workers = (os.cpu_count() or 1) if workers is None else max(1, workers)
    tasks = batches(todo, workers or 1)
    if executor is None and (workers == 1 or len(tasks) <= 1):
        for task in tasks:
            record(export_batch([str(s) for s in task], str(out), settings, rules))
    else:
        with contextlib.ExitStack() as stack:
            if executor is None:
                context = multiprocessing.get_context("spawn")
                executor = stack.enter_context(
                    ProcessPoolExecutor(max_workers=min(workers or 1, len(tasks)), mp_context=context))
            futures: dict[Future[list[Outcome]], list[Path]] = {
                executor.submit(export_batch, [str(s) for s in task], str(out), settings, rules): task
                for task in tasks}
            for future in as_completed(futures):
                try:
                    record(future.result())
                except Exception as exc:  # the worker itself died: its takes failed, the rest go on
                    record([(str(s), "failed", f"worker failed: {type(exc).__name__}: {exc}", ())
                            for s in futures[future]])
    report.written.sort()
    report.skipped.sort()
    report.failed.sort(key=lambda f: str(f[0]))
    report.excluded.sort(key=lambda f: str(f[0]))
    report.warned.sort(key=lambda f: str(f[0]))
    if shard is None:
        report.manifest = write_manifest(out)
    report.seconds = time.perf_counter() - begin
    return report


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


# -- the manifest ---------------------------------------------------------------------------------


def manifest(out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a dataset folder, read from its .npz files alone (docs/api.md, training data)."""
    takes, unreadable = [], []
    for path in sorted(Path(out_dir).glob("*.npz")):
        try:
            with np.load(path) as data:
                entry: dict[str, Any] = {
                    "file": path.name,
                    "source": str(data["source"]),
                    "schema_version": int(data["schema_version"]),
                    "settings_hash": str(data["settings_hash"]),
                }
                if entry["schema_version"] != SCHEMA_VERSION:
                    takes.append(entry)  # another version's file: listed, not read further
                    continue
                entry.update({
                    "frames": int(data["phase"].shape[0]),
                    "fps": float(data["fps"]),
                    "motion_start": int(data["motion_start"]),
                    "joints": int(data["parents"].shape[0]),
                    "event_window": float(data["event_window"]),
                    "event_sigma": float(data["event_sigma"]),
                    "event_tracks": [str(t) for t in data["event_tracks"]],
                    "flags": flags(data),
                })
                takes.append(entry)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            unreadable.append(path.name)
    return {"format": "stride-dataset", "schema_version": SCHEMA_VERSION, "takes": takes,
            "unreadable": unreadable}


def write_manifest(out_dir: str | os.PathLike[str]) -> Path:
    """Rebuild `out_dir`/manifest.json from the .npz files there (atomically)."""
    text = json.dumps(manifest(out_dir), indent=1, allow_nan=False) + "\n"
    return files.write_atomic(Path(out_dir) / MANIFEST, text.encode())


# -- engines and the command line -----------------------------------------------------------------


# The LocalCluster a run starts is Stride's own, for short CPU-bound tasks that return a few
# strings, so three of distributed's defaults for long-lived workers holding data are turned off.
# Measured on the 504-take benchmark, together they cost a quarter more CPU than the local pool:
# - MALLOC_TRIM_THRESHOLD_, set in every spawned worker, turns off glibc's adaptive mmap threshold,
#   so each large numpy array of a take comes as fresh pages from the system;
# - the statistical profiler, a thread taking the GIL every 10 ms from the task;
# - spawned workers, each importing distributed again (0.6 s of start-up): on Linux they are
#   forked from this process, which has it and the core imported already.
LOCAL_CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    **({"distributed.worker.multiprocessing-method": "fork"} if sys.platform.startswith("linux") else {}),
}


@contextlib.contextmanager
def dask_executor(scheduler: str | None = None, workers: int | None = None) -> Iterator[tuple[Executor, int]]:
    """(executor, worker threads) on Dask's distributed: the scheduler at `scheduler`, else a
    LocalCluster of `workers` single-threaded worker processes, closed on exit."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--engine dask needs Dask's distributed: "
                           "pip install -r requirements-dask.txt") from exc
    with contextlib.ExitStack() as stack:
        if scheduler:
            client = stack.enter_context(Client(scheduler))
        else:
            n = workers or os.cpu_count() or 1
            stack.enter_context(dask.config.set(LOCAL_CLUSTER_CONFIG))
            cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                       dashboard_address=None))
            client = stack.enter_context(Client(cluster))
            client.wait_for_workers(n)  # else the first to start takes the first tasks
        threads = sum(client.nthreads().values()) or 1
        yield client.get_executor(), threads


class ProgressBar:
    """One bar for a run on any engine: takes done of this run's (or shard's) total, and rate."""

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.begin = time.perf_counter()

    def __call__(self, done: int, total: int, name: str) -> None:
        width = 30
        filled = width * done // max(total, 1)
        elapsed = time.perf_counter() - self.begin
        rate = done / elapsed if elapsed > 0 else 0.0
        print(f"\r{self.label}[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:5.1f}/s "
              f"{name[:32]:<32}", end="", file=sys.stderr, flush=True)
        if done == total:
            print(file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["manifest"]:
        if len(argv) != 2 or not Path(argv[1]).is_dir():
            print("usage: python -m core.dataset manifest DIR (a dataset folder)", file=sys.stderr)
            return 2
        print(f"dataset: wrote {write_manifest(argv[1])}")
        return 0
    parser = argparse.ArgumentParser(prog="python -m core.dataset", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="BVH files or folders (searched recursively)")
    parser.add_argument("--out", required=True, help="output folder for the .npz files")
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local: a process pool here (default); dask: Dask's distributed")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes, or LocalCluster workers (default: all cores)")
    parser.add_argument("--shard", metavar="I/N", help="only shard I of N of the sorted files (array jobs)")
    parser.add_argument("--exclude", metavar="RULE", action="append", default=[],
                        help="drop takes by their flags: no-feet, static, airborne, no-licence, "
                             "skating>X, planted<X, cadence<X, steps<X (repeatable)")
    parser.add_argument("--window", type=float, default=Settings.window,
                        help="event encoding window, seconds")
    parser.add_argument("--sigma", type=float, default=Settings.sigma, help="event smoothing, seconds")
    parser.add_argument("--speed", type=speed_arg, default=None, metavar="auto|M",
                        help="foot contact speed in m/s, or auto (default): from the body and the take")
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
    try:
        shard = parse_shard(args.shard) if args.shard else None
        for rule in args.exclude:
            check_rule(rule)
    except ValueError as exc:
        parser.error(str(exc))
    if args.scheduler and args.engine != "dask":
        parser.error("--scheduler needs --engine dask")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers takes a positive count")
    settings = Settings(args.window, args.sigma, args.speed, feet)
    label = f"shard {shard[0]}/{shard[1]} " if shard else ""
    progress = None if args.quiet else ProgressBar(label)
    with contextlib.ExitStack() as stack:
        executor, workers = None, args.workers
        if args.engine == "dask":
            try:
                executor, workers = stack.enter_context(dask_executor(args.scheduler, args.workers))
            except RuntimeError as exc:
                parser.error(str(exc))
        report = export(args.inputs, args.out, settings=settings, workers=workers, executor=executor,
                        shard=shard, exclude=args.exclude, progress=progress)
    for _source, message in report.warned:
        print(f"dataset: warning: {message}", file=sys.stderr)
    for source, error in report.failed:
        print(f"dataset: error: {error if str(source) in error else f'{source}: {error}'}", file=sys.stderr)
    print(f"dataset: {label}{report.summary()} -> {args.out}")
    if shard is not None:
        print("dataset: after the last shard, "
              f"`python -m core.dataset manifest {args.out}` writes the manifest")
    return 1 if report.failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["pack"]:
        # Run as `python -m core.dataset`, this file is module __main__: pack's import of
        # core.dataset loads it as a module of its own, so the two make no cycle.
        from .pack import main as pack_main

        sys.exit(pack_main(sys.argv[2:]))
    sys.exit(main())
