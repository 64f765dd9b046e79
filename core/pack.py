"""Training packs: a dataset folder (one .npz per take, core/dataset.py) cut into fixed windows.

    python -m core.dataset pack DATASET --out PACK --window N --stride K [--split val=F]...
        [--group-by REGEX] [--seed S] [--fps F] [--mirror] [--float32]

Windows of N frames every K frames from each take's `motion_start`, features in the character
frame, a split by take (or by group) so no take has windows on both sides, optional mirrored
windows, written as a few large .npz files per split (`train-000.npz`, `val-000.npz`, every array
`[windows, N, ...]`) and `manifest.json` with shapes, settings, sources and the training split's
per-feature mean and std. Schema in docs/api.md ("Packs for training").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import axes, dataset, events, files, quat, resample, root
from .clip import Clip

PACK_VERSION = 1
FILE_BYTES = 1 << 30  # about this much per pack file: few files, each loads whole

FEATURES = {
    "rotations": "local joint rotations (w, x, y, z), sign-continuous, w >= 0 on each window's first frame",
    "positions": "joint positions in the character frame, meters: (side, up, forward) from the root's "
                 "floor point, heading turned to forward",
    "root_velocity": "root velocity in the character frame: side and forward m/s, turning rad/s "
                     "(to the next frame; a take's last frame repeats the one before)",
    "contacts": "planted feet (L, R), 1 or 0",
    "phase": "gait phase as (sin, cos); (0, 0) where the feet do not alternate",
}


@dataclass
class Take:
    """One take's frames as the pack reads them (meters, seconds, file axes)."""

    file: str
    source: str
    fps: float
    motion_start: int
    rotations: np.ndarray  # [T, J, 4]
    world: np.ndarray  # [T, J, 3] meters
    parents: np.ndarray
    root: int
    up: np.ndarray
    forward: np.ndarray
    contacts: np.ndarray  # [T, 2] bool (L, R)
    phase: np.ndarray  # [T] radians, NaN where unknown
    tracks: dict[str, np.ndarray]  # event name -> [T, 2] encoding
    times: dict[str, np.ndarray]  # event name -> event times, seconds
    window: float
    sigma: float
    partner: np.ndarray
    flags: dict[str, Any] = field(default_factory=dict)


def load_take(path: Path) -> Take:
    with np.load(path) as d:
        if int(d["schema_version"]) != dataset.SCHEMA_VERSION:
            raise ValueError(f"{path.name}: schema {int(d['schema_version'])}, this pack reads "
                             f"{dataset.SCHEMA_VERSION}: export the dataset again")
        feet = [str(f) for f in d["contact_feet"]]
        tracks = [str(t) for t in d["event_tracks"]]
        return Take(
            file=path.name, source=str(d["source"]), fps=float(d["fps"]), motion_start=int(d["motion_start"]),
            rotations=d["rotations"], world=d["world_positions"], parents=d["parents"], root=int(d["root"]),
            up=d["up"], forward=d["forward"],
            contacts=(d["contacts"][:, [feet.index("L"), feet.index("R")]] if feet == ["L", "R"]
                      else np.zeros((d["phase"].shape[0], 0), dtype=bool)),
            phase=d["phase"], tracks={t: d[f"event_{t}"] for t in tracks},
            times={t: d[f"event_{t}_times"] for t in tracks}, window=float(d["event_window"]),
            sigma=float(d["event_sigma"]), partner=d["mirror_partner"], flags=dataset.flags(d))


def resampled(take: Take, fps: float) -> Take:
    """`take` at `fps`: rotations slerped and positions lerped as core.resample does, contacts
    from the nearer frame, phase lerped, events encoded again at the new frame times."""
    if fps == take.fps:
        return take
    T, J = take.rotations.shape[:2]
    # core.resample works on clips: a stand-in clip whose joint translations are the world positions.
    stand_in = Clip([str(j) for j in range(J)], take.parents, np.zeros((J, 3)), take.rotations, take.world,
                    take.fps, motion_start=take.motion_start, root=take.root)
    out = resample.resample(stand_in, fps)
    base, frac = resample.source_frames(T, take.fps, fps)
    nearer = np.minimum(base + (frac >= 0.5), T - 1)
    nxt = np.minimum(base + 1, T - 1)
    phase = (1 - frac) * take.phase[base] + frac * take.phase[nxt]
    times = out.times
    tracks = {}
    for name, at in take.times.items():
        sin, cos = events.encode(times, at, take.window, take.sigma)
        tracks[name] = np.stack([sin, cos], axis=1)
    return Take(take.file, take.source, fps, out.motion_start, out.rotations, out.positions, take.parents,
                take.root, take.up, take.forward, take.contacts[nearer], phase, tracks, dict(take.times),
                take.window, take.sigma, take.partner, take.flags)


def mirrored(take: Take) -> Take:
    """The take mirrored left <-> right as axes.mirror mirrors a clip: each joint moves as its
    partner did, reflected through the plane across the performer's side axis; contacts, events
    and phase swap feet."""
    m = axes.reflection(np.cross(take.up, take.forward))
    p = take.partner
    rot = take.rotations[:, p]
    reflected = np.empty_like(rot)
    reflected[..., 0] = rot[..., 0]
    reflected[..., 1:] = -(rot[..., 1:] @ m.T)  # M R M for a reflection M (det -1)
    names = {n: axes.mirror_name(n) for n in take.tracks}
    return Take(take.file, take.source, take.fps, take.motion_start, reflected, take.world[:, p] @ m.T,
                take.parents, int(p[take.root]), m @ take.up, m @ take.forward, take.contacts[:, ::-1],
                take.phase + np.pi, {names[n]: v for n, v in take.tracks.items()},
                {names[n]: v for n, v in take.times.items()}, take.window, take.sigma, take.partner,
                take.flags)


def features(take: Take, tracks: Sequence[str]) -> dict[str, np.ndarray]:
    """[T, ...] per-frame features of a take (see FEATURES), event encodings for `tracks` (a
    track the take lacks reads as no event: (0, -1))."""
    T, J = take.rotations.shape[:2]
    world_rot, _ = quat.fk(take.rotations, np.zeros((T, J, 3)), take.parents)
    up = take.up
    fwd0, side0 = root.floor_axes(up)
    facing = quat.mul_vec(world_rot[:, take.root], take.forward)
    heading = np.arctan2(facing @ side0, facing @ fwd0)
    fwd = np.cos(heading)[:, None] * fwd0 + np.sin(heading)[:, None] * side0
    side = np.cross(up, fwd)
    axes3 = np.stack([side, np.broadcast_to(up, fwd.shape), fwd], axis=1)  # [T, 3 (side, up, fwd), 3]
    ground = take.world[:, take.root] - np.outer(take.world[:, take.root] @ up, up)
    positions = np.einsum("tij,tkj->tki", axes3, take.world - ground[:, None])
    step = np.diff(ground, axis=0) * take.fps if T > 1 else np.zeros((0, 3))
    turn = (np.diff(heading) + np.pi) % (2 * np.pi) - np.pi
    velocity = np.concatenate([np.einsum("tj,tj->t", step, side[:-1])[:, None],
                               np.einsum("tj,tj->t", step, fwd[:-1])[:, None],
                               turn[:, None] * take.fps], axis=1)
    velocity = np.concatenate([velocity, velocity[-1:]]) if T > 1 else np.zeros((T, 3))
    phase = np.stack([np.sin(take.phase), np.cos(take.phase)], axis=1)
    out = {
        "rotations": quat.unroll(take.rotations),
        "positions": positions,
        "root_velocity": velocity,
        "contacts": take.contacts,
        "phase": np.where(np.isnan(phase), 0.0, phase),
    }
    for name in tracks:
        out[f"event_{name}"] = take.tracks.get(name, np.tile([0.0, -1.0], (T, 1)))
    return out


def window_starts(frames: int, motion_start: int, window: int, stride: int) -> np.ndarray:
    """Window starts: motion_start + k stride, floor((T - motion_start - N) / K) + 1 of them."""
    if frames - motion_start < window:
        return np.zeros(0, dtype=np.int64)
    return motion_start + stride * np.arange((frames - motion_start - window) // stride + 1)


def windows(per_frame: Mapping[str, np.ndarray], starts: np.ndarray, window: int) -> dict[str, np.ndarray]:
    """[W, N, ...] windows of each [T, ...] feature; rotations turned so each window starts at w >= 0."""
    index = starts[:, None] + np.arange(window)
    out = {k: v[index] for k, v in per_frame.items()}
    if len(starts):
        first = out["rotations"][:, :1, :, :1]
        out["rotations"] = np.where(first < 0, -out["rotations"], out["rotations"])
    return out


def assign_splits(groups: Sequence[str], splits: Mapping[str, float], seed: int) -> dict[str, str]:
    """{group: split}: round(F x groups) groups, drawn at random (seeded), for each split in
    order; the rest 'train'."""
    unique = sorted(set(groups))
    order = [unique[i] for i in np.random.default_rng(seed).permutation(len(unique))]
    out = dict.fromkeys(unique, "train")
    k = 0
    for name, fraction in splits.items():
        n = round(fraction * len(unique))
        for g in order[k:k + n]:
            out[g] = name
        k += n
    return out


def group_of(name: str, pattern: re.Pattern[str] | None) -> str:
    """The group of a source file name: the regex's first group (or whole match), else the name."""
    if pattern is None:
        return name
    m = pattern.search(name)
    if m is None:
        raise ValueError(f"--group-by {pattern.pattern!r} does not match {name!r}")
    return m.group(1) if pattern.groups else m.group(0)


class _Stats:
    """Per-channel mean and variance over windows and frames, merged chunk by chunk (Chan et al.)."""

    def __init__(self) -> None:
        self.n = 0
        self.mean: dict[str, np.ndarray] = {}
        self.m2: dict[str, np.ndarray] = {}

    def add(self, chunk: Mapping[str, np.ndarray]) -> None:
        some = next(iter(chunk.values()))
        n = some.shape[0] * some.shape[1]
        if n == 0:
            return
        total = self.n + n
        for k, v in chunk.items():
            x = v.reshape(n, *v.shape[2:]).astype(np.float64)
            mean = x.mean(axis=0)
            m2 = ((x - mean) ** 2).sum(axis=0)
            if self.n == 0:
                self.mean[k], self.m2[k] = mean, m2
            else:
                delta = mean - self.mean[k]
                self.mean[k] = self.mean[k] + delta * n / total
                self.m2[k] = self.m2[k] + m2 + delta**2 * self.n * n / total
        self.n = total

    def result(self, key: str) -> tuple[list[Any], list[Any]]:
        if self.n == 0:
            return [], []
        return self.mean[key].tolist(), np.sqrt(self.m2[key] / self.n).tolist()


def write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Uncompressed .npz (loads fast), streamed to a temp file renamed into place; no timestamps."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w") as archive:
            for key, value in arrays.items():
                info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def pack(dataset_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, window: int, stride: int,
         splits: Mapping[str, float] | None = None, group_by: str | None = None, seed: int = 0,
         fps: float | None = None, mirror: bool = False, float32: bool = False,
         file_bytes: int = FILE_BYTES) -> dict[str, Any]:
    """Pack the takes of `dataset_dir` into `out_dir` (see the module notes); returns the manifest."""
    if window < 1 or stride < 1:
        raise ValueError(f"--window and --stride take positive frame counts, not {window} and {stride}")
    splits = dict(splits or {})
    if ("train" in splits or sum(splits.values()) >= 1 or any(not 0 <= f < 1 for f in splits.values())
            or any(not re.fullmatch(r"[A-Za-z0-9_]+", name) for name in splits)):
        raise ValueError(f"--split takes NAME=F (letters, digits, _; not train) with fractions summing "
                         f"below 1, not {splits}")
    pattern = re.compile(group_by) if group_by else None
    paths = sorted(Path(dataset_dir).glob("*.npz"))
    if not paths:
        raise ValueError(f"no .npz files in {dataset_dir}")
    out = Path(out_dir)
    if out.resolve() == Path(dataset_dir).resolve():
        raise ValueError("--out must be another folder than the dataset's")
    out.mkdir(parents=True, exist_ok=True)
    _remove_pack(out)

    heads = []
    skeleton: tuple[list[str], list[int]] | None = None
    tracks: set[str] = set()
    for path in paths:
        with np.load(path) as d:
            names, parents = [str(n) for n in d["names"]], d["parents"].tolist()
            source = str(d["source"])
            tracks.update(str(t) for t in d["event_tracks"])
        if skeleton is None:
            skeleton = (names, parents)
        elif parents != skeleton[1]:  # names may differ (CMU's LFingers / LeftHandIndex1): joints line up
            raise ValueError(f"{path.name} has another hierarchy than {paths[0].name}: pack one skeleton "
                             "at a time (a folder per skeleton)")
        heads.append((path, source, group_of(source, pattern), names))
    assert skeleton is not None
    if mirror:
        tracks.update(axes.mirror_name(t) for t in list(tracks))
    track_list = sorted(tracks)
    split_of = assign_splits([h[2] for h in heads], splits, seed)

    stats = _Stats()
    buffers: dict[str, list[dict[str, np.ndarray]]] = {}
    runs: dict[str, list[list[Any]]] = {}
    counts: dict[str, int] = {}
    written: list[dict[str, Any]] = []
    takes: list[dict[str, Any]] = []
    per_file: int | None = None

    def flush(split: str, force: bool) -> None:
        chunks = buffers.get(split, [])
        n = sum(len(c["rotations"]) for c in chunks)
        if n == 0 or (not force and per_file is not None and n < per_file):
            return
        arrays = {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}
        name = f"{split}-{len([w for w in written if w['split'] == split]):03d}.npz"
        write_npz(out / name, arrays)
        written.append({"file": name, "split": split, "windows": n, "runs": runs.pop(split, [])})
        buffers[split] = []

    for index, (path, source, group, names) in enumerate(heads):
        split = split_of[group]
        take = load_take(path)
        entry: dict[str, Any] = {"file": path.name, "source": source, "group": group, "split": split,
                                 "flags": take.flags, "licence": take.flags["licence"]}
        if names != skeleton[0]:
            entry["joints"] = names
        takes.append(entry)
        if take.contacts.shape[1] != 2:
            entry.update(windows=0, skipped="no feet found: no contacts to pack")
            continue
        if fps is not None:
            take = resampled(take, fps)
        versions = [(take, False)]
        if mirror:
            if (take.partner < 0).any():
                entry["skipped_mirror"] = "no left/right partners for this skeleton"
            else:
                versions.append((mirrored(take), True))
        T = take.rotations.shape[0]
        starts = window_starts(T, take.motion_start, window, stride)
        entry.update(fps=take.fps, frames=T, motion_start=take.motion_start, windows=len(starts))
        if not len(starts):
            continue
        for version, is_mirror in versions:
            chunk = windows(features(version, track_list), starts, window)
            if split == "train":
                stats.add(chunk)
            if float32:
                chunk = {k: v.astype(np.float32) if v.dtype.kind == "f" else v for k, v in chunk.items()}
            if per_file is None:
                per_window = sum(v[0].nbytes for v in chunk.values())
                per_file = max(1, file_bytes // max(per_window, 1))
            buffers.setdefault(split, []).append(chunk)
            runs.setdefault(split, []).append([index, int(starts[0]), len(starts), is_mirror])
            counts[split] = counts.get(split, 0) + len(starts)
            flush(split, False)
    for split in sorted(buffers):
        flush(split, True)

    dtype = "float32" if float32 else "float64"
    J = len(skeleton[0])
    shapes = {"rotations": [window, J, 4], "positions": [window, J, 3], "root_velocity": [window, 3],
              "contacts": [window, 2], "phase": [window, 2],
              **{f"event_{t}": [window, 2] for t in track_list}}
    described = {**FEATURES,
                 **{f"event_{t}": f"event {t!r} as (sin, cos) (core.events.encode)" for t in track_list}}
    feature_info = {}
    for name, shape in shapes.items():
        mean, std = stats.result(name)
        feature_info[name] = {"shape": shape, "dtype": "bool" if name == "contacts" else dtype,
                              "description": described[name], "mean": mean, "std": std}
    manifest = {
        "format": "stride-pack", "version": PACK_VERSION,
        "settings": {"window": window, "stride": stride, "fps": fps, "mirror": mirror, "float32": float32,
                     "split": splits, "group_by": group_by, "seed": seed},
        "joints": skeleton[0], "parents": skeleton[1], "event_tracks": track_list,
        "features": feature_info,
        "splits": {s: {"takes": sum(1 for t in takes if t["split"] == s), "windows": counts.get(s, 0)}
                   for s in ["train", *splits]},
        "files": sorted(written, key=lambda w: w["file"]),
        "takes": takes,
    }
    text = json.dumps(manifest, indent=1, allow_nan=False) + "\n"
    files.write_atomic(out / "manifest.json", text.encode())
    return manifest


def _remove_pack(out: Path) -> None:
    """Remove the files of an earlier pack in `out` (those its manifest lists): a pack is written
    whole, and none of an earlier one's files may stay beside it. Other files are left alone."""
    old = out / "manifest.json"
    try:
        listed = json.loads(old.read_text())
    except (OSError, ValueError):
        return
    if not isinstance(listed, dict) or listed.get("format") != "stride-pack":
        return
    for entry in listed.get("files", []):
        name = str(entry.get("file", ""))
        if re.fullmatch(r"[A-Za-z0-9_]+-\d{3}\.npz", name):
            (out / name).unlink(missing_ok=True)
    old.unlink(missing_ok=True)


def _split_arg(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        fraction = float(value)
    except ValueError:
        fraction = -1.0
    if not sep or not re.fullmatch(r"[A-Za-z0-9_]+", name) or not 0 <= fraction < 1 or math.isnan(fraction):
        raise argparse.ArgumentTypeError(f"--split takes NAME=F with 0 <= F < 1 (e.g. val=0.1), not {text!r}")
    return name, fraction


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.dataset pack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="a folder of per-take .npz files (python -m core.dataset)")
    parser.add_argument("--out", required=True, help="the pack's folder")
    parser.add_argument("--window", type=int, required=True, help="frames per window")
    parser.add_argument("--stride", type=int, required=True, help="frames between window starts")
    parser.add_argument("--split", type=_split_arg, action="append", default=[], metavar="NAME=F",
                        help="a fraction of the takes (or groups) for another split, e.g. val=0.1 "
                             "(repeatable)")
    parser.add_argument("--group-by", metavar="REGEX",
                        help="split by the group this takes from the file name (its first group), "
                             "e.g. '^(\\d+)_'")
    parser.add_argument("--seed", type=int, default=0, help="the split's random seed (0)")
    parser.add_argument("--fps", type=float, help="resample every take to this rate (default: their own)")
    parser.add_argument("--mirror", action="store_true", help="add left/right mirrored windows")
    parser.add_argument("--float32", action="store_true", help="store floats as float32")
    args = parser.parse_args(argv)
    try:
        manifest = pack(args.dataset, args.out, window=args.window, stride=args.stride,
                        splits=dict(args.split), group_by=args.group_by, seed=args.seed, fps=args.fps,
                        mirror=args.mirror, float32=args.float32)
    except (ValueError, re.error) as exc:
        print(f"pack: error: {exc}", file=sys.stderr)
        return 1
    sizes = ", ".join(f"{s} {v['windows']} windows of {v['takes']} takes"
                      for s, v in manifest["splits"].items())
    print(f"pack: {sizes} -> {args.out}")
    return 0
