"""BVH reading speed: Stride against pybvh, bvhio and Blender's own reader, same files, one run.

    python build.py bench bvh        (or: PYTHONPATH=. python bench/bvh.py)

Files: the nine CMU takes in tests/data/cmu/; a 10,000-frame, 31-joint take (02_01's hierarchy,
its rows repeated); and three files made from 02_01 that some readers refuse: every JOINT with 6
channels (its OFFSET as position values), the channels 02_01 never moves dropped (joints with 0
and 1 channels, the same motion), and `Frames: 0`.

- load: file to the library's in-memory motion. Stride `core.bvh.load` (a Clip: quaternions,
  every row validated); pybvh `read_bvh_file`; bvhio `readAsBvh`; Blender 4.5's
  `io_anim_bvh.import_bvh.read_bvh`, timed inside a subprocess in the bpy wheel's Python. MB/s.
- loads: Stride `core.bvh.loads` on the file's text, already in memory. MB/s.
- FK: world positions of every joint in every frame, from the loaded object. Stride `Clip.fk()`;
  pybvh `frames_to_node_positions`; bvhio `convertBvhToHierarchy`, then `loadPose` and
  `PositionWorld` per frame (its only way there). Blender's reader has none. Milliseconds.

Median of 5 runs, each timed in CPU time of the process (time.process_time: time spent waiting
for a CPU while other work runs on the machine would swamp runs of a few milliseconds). Stride and
pybvh take turns run by run, so that contention hits both alike; a slow library's cell stops early
(marked *) once its runs took 3 s.
Every library's local rotations, position channels and world positions over the first 60 frames
are compared with Stride's; a cell that disagrees is marked '!'. A library that raises on a file
shows FAILS, and the notes say what it raised. Targets (docs/benchmarks.md): Stride load >= 1.0x pybvh's MB/s
(median and best) on the CMU files and the 10,000-frame file; loads >= 40 MB/s; FK of 10,000
frames x 31 joints <= 0.1 s. Ratios hold for this machine and this run only. No asserts: it
prints what it measured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from _bench import ROOT, machine

from core import bvh, quat
from core.clip import POSITION_CHANNELS, Clip

RUNS = 5
# CPU time of this process: on a shared machine, time spent descheduled while other work runs
# would swamp runs of a few milliseconds. Everything here is single-threaded.
CLOCK = time.process_time
BUDGET = 3.0  # seconds of runs before a measurement settles for fewer than RUNS
CHECK_FRAMES = 60
BIG_FRAMES = 10_000
TARGET_LOAD_RATIO = 1.0
TARGET_LOADS = 40.0  # MB/s
TARGET_FK = 0.1  # seconds for BIG_FRAMES x 31 joints
ROT_TOL = 1e-4  # radians: bvhio computes in float32
POS_TOL = 1e-5  # relative to the largest coordinate compared


# -- the files ----------------------------------------------------------------------------------

@dataclass
class Take:
    name: str
    path: Path
    frames: int
    joints: int
    note: str = ""

    @property
    def size(self) -> int:
        return self.path.stat().st_size


def cmu_takes() -> list[Take]:
    paths = sorted((ROOT / "tests" / "data" / "cmu").glob("*/*.bvh"), key=lambda p: p.stem)
    takes = []
    for path in paths:
        clip = bvh.load(path)
        takes.append(Take(path.stem, path, clip.n_frames, clip.n_joints))
    return takes


def split_take(text: str) -> tuple[list[str], list[str]]:
    """(hierarchy lines up to and including MOTION, motion rows) of an LF file."""
    lines = text.splitlines()
    motion = next(k for k, line in enumerate(lines) if line.strip() == "MOTION")
    rows = [line for line in lines[motion + 3:] if line.strip()]
    return lines[:motion + 1], rows


def big_take(text: str) -> str:
    """The take's hierarchy, its rows repeated to BIG_FRAMES frames."""
    head, rows = split_take(text)
    body = [rows[k % len(rows)] for k in range(BIG_FRAMES)]
    return "\n".join(head_with_frames(head, text, BIG_FRAMES) + body) + "\n"


def joint_columns(head: list[str]) -> list[tuple[int, list[str] | None]]:
    """Per joint in file order: (channel count, its OFFSET tokens)."""
    out: list[tuple[int, list[str] | None]] = []
    offset: list[str] | None = None
    for line in head:
        tokens = line.split()
        if tokens and tokens[0] == "OFFSET":
            offset = tokens[1:]
        elif tokens and tokens[0] == "CHANNELS":
            out.append((int(tokens[1]), offset))
    return out


def six_channel_take(text: str) -> str:
    """Every 3-channel JOINT given position channels holding its OFFSET: the same motion."""
    head, rows = split_take(text)
    joints = joint_columns(head)
    new_head = []
    for line in head:
        tokens = line.split()
        if tokens and tokens[0] == "CHANNELS" and tokens[1] == "3":
            indent = line[:len(line) - len(line.lstrip())]
            line = f"{indent}CHANNELS 6 {' '.join(POSITION_CHANNELS)} {' '.join(tokens[2:])}"
        new_head.append(line)
    new_rows = []
    for row in rows:
        values, col, out = row.split(), 0, []
        for count, offset in joints:
            if count == 3 and offset is not None:
                out += offset
            out += values[col:col + count]
            col += count
        new_rows.append(" ".join(out))
    return "\n".join(head_with_frames(new_head, text, len(new_rows)) + new_rows) + "\n"


def sparse_take(text: str) -> tuple[str, int, int]:
    """The channels the take never moves dropped: joints with 0 and 1 channels, the same motion.
    Returns (text, joints left with 0 channels, joints left with 1)."""
    head, rows = split_take(text)
    table = [row.split() for row in rows]
    joints = joint_columns(head)
    keep: list[list[int]] = []  # per joint, the kept channel positions
    col = 0
    for count, _ in joints:
        moving = [k for k in range(count) if any(float(r[col + k]) != 0.0 for r in table)]
        keep.append(list(range(count)) if count != 3 else moving)
        col += count
    new_head, j = [], 0
    for line in head:
        tokens = line.split()
        if tokens and tokens[0] == "CHANNELS":
            indent = line[:len(line) - len(line.lstrip())]
            names = [tokens[2 + k] for k in keep[j]]
            line = f"{indent}CHANNELS {len(names)}{''.join(' ' + n for n in names)}"
            j += 1
        new_head.append(line)
    new_rows = []
    for r in table:
        col, out = 0, []
        for (count, _), kept in zip(joints, keep, strict=True):
            out += [r[col + k] for k in kept]
            col += count
        new_rows.append(" ".join(out))
    n0 = sum(1 for kept in keep if not kept)
    n1 = sum(1 for kept in keep if len(kept) == 1)
    return "\n".join(head_with_frames(new_head, text, len(new_rows)) + new_rows) + "\n", n0, n1


def head_with_frames(head: list[str], text: str, frames: int) -> list[str]:
    frame_time = text.splitlines()[len(head) + 1]
    return [*head, f"Frames: {frames}", frame_time]


def made_takes(folder: Path) -> list[Take]:
    source = ROOT / "tests" / "data" / "cmu" / "subject02" / "02_01.bvh"
    text = source.read_text()
    head, _ = split_take(text)
    sparse, n0, n1 = sparse_take(text)
    files = [
        ("02_01 x10k frames", big_take(text), "02_01's rows repeated"),
        ("02_01 6-ch joints", six_channel_take(text), "every JOINT has 6 channels"),
        ("02_01 0/1-ch joints", sparse, f"{n0} joints with 0 channels, {n1} with 1"),
        ("02_01 Frames: 0", "\n".join(head_with_frames(head, text, 0)) + "\n", "no motion rows"),
    ]
    takes = []
    for name, body, note in files:
        path = folder / (re.sub(r"[^\w.-]+", "_", name) + ".bvh")
        path.write_text(body)
        clip = bvh.load(path)
        takes.append(Take(name, path, clip.n_frames, clip.n_joints, note))
    return takes


# -- measuring ----------------------------------------------------------------------------------

@dataclass
class Timing:
    seconds: float | None = None  # median
    runs: int = 0
    best: float | None = None  # the fastest run
    error: str | None = None  # what the library raised
    differs: str | None = None  # it ran, but disagrees with Stride


@dataclass
class Row:
    take: Take
    cells: dict[str, Timing] = field(default_factory=dict)  # "<library> load" / "<library> FK"


def measure(fns: dict[str, Callable[[], Any]]) -> dict[str, tuple[Timing, Any]]:
    """Time each fn up to RUNS times, taking turns, so that a burst of work elsewhere on the machine
    hits them alike. Returns per key (timing, what the last run returned)."""
    times: dict[str, list[float]] = {key: [] for key in fns}
    results: dict[str, Any] = {}
    errors: dict[str, str] = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(RUNS):
            for key, fn in fns.items():
                if key in errors:
                    continue
                try:
                    t0 = CLOCK()
                    results[key] = fn()
                    times[key].append(CLOCK() - t0)
                except Exception as exc:  # a library refusing a file is a result, not a crash
                    errors[key] = describe(exc)
            if time.perf_counter() - start > BUDGET:
                break
    return {key: (Timing(error=errors[key]) if key in errors else Timing(
        float(np.median(times[key])), len(times[key]), float(np.min(times[key]))), results.get(key))
        for key in fns}


def describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}{'...' if len(text) > 300 else ''}"


@dataclass
class Reference:
    """Stride's reading of a take, to compare the other libraries with."""
    clip: Clip
    world: np.ndarray  # [K, J, 3]

    @property
    def positioned(self) -> list[int]:
        return [j for j, ch in enumerate(self.clip.channels) if any(c in POSITION_CHANNELS for c in ch)]


def disagreement(ref: Reference, rotations: np.ndarray | None, positions: np.ndarray | None,
                 world: np.ndarray | None = None) -> str | None:
    """Why a library's first frames differ from Stride's, or None. rotations [K, J, 4] local
    (w, x, y, z); positions [K, J, 3] local, NaN where unknown; world [K, J, 3]."""
    K = min(CHECK_FRAMES, ref.clip.n_frames)
    if rotations is not None:
        if rotations.shape != (K, ref.clip.n_joints, 4):
            return f"rotations shaped {rotations.shape}, Stride {(K, ref.clip.n_joints, 4)}"
        off = quat.angle(rotations, ref.clip.rotations[:K])
        if off.size and off.max() > ROT_TOL:
            t, j = np.unravel_index(np.argmax(off), off.shape)
            return f"joint {ref.clip.names[j]!r} frame {t}: rotation off by {np.degrees(off[t, j]):.3g} deg"
    if positions is not None and ref.positioned and K:
        mine = positions[:, ref.positioned]
        want = ref.clip.positions[:K, ref.positioned]
        known = ~np.isnan(mine)
        gap = np.abs(mine - want)[known]
        if gap.size and gap.max() > POS_TOL * max(1.0, float(np.abs(want).max())):
            return f"position channels off by up to {gap.max():.3g}"
    if world is not None and K:
        if world.shape != ref.world.shape:
            return f"world positions shaped {world.shape}, Stride {ref.world.shape}"
        gap = np.abs(world - ref.world)
        if gap.max() > POS_TOL * max(1.0, float(np.abs(ref.world).max())):
            return f"world positions off by up to {gap.max():.3g}"
    return None


# -- the libraries --------------------------------------------------------------------------

def run_stride_and_pybvh(take: Take, row: Row) -> Reference | None:
    """Stride and pybvh, the two numpy readers, timed in turns; returns Stride's reading."""
    import pybvh

    text = take.path.read_bytes().decode("utf-8")  # as is: read_text() would turn CRLF into LF
    loaded = measure({"Stride load": lambda: bvh.load(take.path),
                      "pybvh load": lambda: pybvh.read_bvh_file(take.path),
                      "Stride loads": lambda: bvh.loads(text)})
    for key, (timing, _) in loaded.items():
        row.cells[key] = timing
    clip, b = loaded["Stride load"][1], loaded["pybvh load"][1]
    fk: dict[str, Callable[[], Any]] = {}
    if clip is not None:
        fk["Stride FK"] = clip.fk
    if b is not None:
        fk["pybvh FK"] = lambda: pybvh.frames_to_node_positions(b)
    worlds = measure(fk)
    for key, (timing, _) in worlds.items():
        row.cells[key] = timing
    fk_result = worlds.get("Stride FK", (None, None))[1]
    if clip is None or fk_result is None:
        return None
    ref = Reference(clip, fk_result[1][:CHECK_FRAMES])
    if b is not None:
        K = min(CHECK_FRAMES, b.frame_count)
        rotations = np.stack([quat.from_euler(b.joint_angles[:K, j], order)
                              for j, order in enumerate(b.euler_orders)], axis=1)
        positions = np.full((K, clip.n_joints, 3), np.nan)
        positions[:, 0] = b.root_pos[:K]
        row.cells["pybvh load"].differs = disagreement(ref, rotations, positions)
        nodes = worlds["pybvh FK"][1]
        if nodes is not None:
            joints = [i for i, node in enumerate(b.nodes) if not node.is_end_site()]
            row.cells["pybvh FK"].differs = disagreement(ref, None, None, nodes[:K, joints])
    return ref


def bvhio_joints(root: Any) -> list[Any]:
    order, stack = [], [root]
    while stack:
        joint = stack.pop()
        order.append(joint)
        stack.extend(reversed(joint.Children))
    return order


def run_bvhio(take: Take, row: Row, ref: Reference | None) -> None:
    import bvhio

    load, container = measure({"load": lambda: bvhio.readAsBvh(str(take.path))})["load"]
    row.cells["bvhio load"] = load
    if container is None:
        return
    n_frames = container.FrameCount

    def world_positions() -> np.ndarray:
        root = bvhio.convertBvhToHierarchy(container.Root).loadRestPose(recursive=True)
        joints = [joint for joint, _, _ in root.layout()]
        out = np.empty((n_frames, len(joints), 3))
        for f in range(n_frames):
            root.loadPose(f)
            out[f] = [tuple(joint.PositionWorld) for joint in joints]
        return out

    fk, world = measure({"FK": world_positions})["FK"]
    row.cells["bvhio FK"] = fk
    K = min(CHECK_FRAMES, n_frames)
    if ref is None or K == 0:
        return
    joints = bvhio_joints(container.Root)
    rotations = np.array([[[k.Rotation.w, k.Rotation.x, k.Rotation.y, k.Rotation.z]
                           for k in (j.Keyframes[f] for j in joints)] for f in range(K)]).reshape(K, -1, 4)
    positions = np.array([[tuple(j.Keyframes[f].Position) for j in joints]
                          for f in range(K)]).reshape(K, -1, 3)
    load.differs = disagreement(ref, rotations, positions)
    if world is not None:
        fk.differs = disagreement(ref, None, None, world[:K])


# Runs in the bpy wheel's Python: times read_bvh on each file, writes JSON (stdout carries
# read_bvh's own prints).
BLENDER_CHILD = r"""
import importlib.util, json, os, statistics, sys, time
import bpy
jobs = json.load(open(sys.argv[1]))
path = os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "io_anim_bvh", "import_bvh.py")
spec = importlib.util.spec_from_file_location("import_bvh", path)
import_bvh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_bvh)
opens = [line.strip() for line in open(path) if "open(file_path" in line]
results = {"version": bpy.app.version_string, "opens": opens[0] if opens else "?", "files": {}}
for name, file_path in jobs["files"]:
    times, out = [], {}
    start = time.perf_counter()
    try:
        while len(times) < jobs["runs"] and (not times or time.perf_counter() - start < jobs["budget"]):
            t0 = time.process_time()
            nodes, frame_time, frame_count = import_bvh.read_bvh(None, file_path)
            times.append(time.process_time() - t0)
        out["seconds"] = statistics.median(times)
        out["runs"] = len(times)
        k = jobs["check_frames"]
        out["joints"] = [
            {"order": n.rot_order_str, "has_rot": n.has_rot, "has_loc": n.has_loc,
             "anim": [list(a) for a in n.anim_data[1:k + 1]]}
            for n in import_bvh.sorted_nodes(nodes)]
    except Exception as exc:
        text = " ".join(str(exc).split())
        out["error"] = f"{type(exc).__name__}: {text[:300]}"
    results["files"][name] = out
json.dump(results, open(sys.argv[2], "w"))
"""


def run_blender(takes: list[Take], rows: list[Row], refs: list[Reference | None]) -> tuple[str, str]:
    """Fills the "Blender load" cells; returns (column title, how read_bvh opens files)."""
    try:
        import build

        # The cached bpy venv as is; build.blender_python (re)installs it when its stamp is stale.
        python = build.venv_python(build.CACHE / f"bpy-{build.BLENDER[build.DEFAULT_BLENDER][0]}")
        if not python.exists():
            python = build.blender_python(build.DEFAULT_BLENDER)
    except (Exception, SystemExit) as exc:
        reason = f"unavailable: {describe(exc)}"
        for row in rows:
            row.cells["Blender load"] = Timing(error=reason)
        return "Blender (unavailable)", ""
    with tempfile.TemporaryDirectory(prefix="stride-bench-") as tmp:
        jobs, out = Path(tmp) / "jobs.json", Path(tmp) / "out.json"
        jobs.write_text(json.dumps({"files": [[t.name, str(t.path)] for t in takes], "runs": RUNS,
                                    "budget": BUDGET, "check_frames": CHECK_FRAMES}))
        proc = subprocess.run([str(python), "-c", BLENDER_CHILD, str(jobs), str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            reason = f"unavailable: bpy subprocess failed ({proc.stderr.strip().splitlines()[-1:]})"
            for row in rows:
                row.cells["Blender load"] = Timing(error=reason)
            return "Blender (failed)", ""
        results = json.loads(out.read_text())
    for take, row, ref in zip(takes, rows, refs, strict=True):
        res = results["files"][take.name]
        if "error" in res:
            row.cells["Blender load"] = Timing(error=res["error"])
            continue
        cell = Timing(res["seconds"], res["runs"])
        row.cells["Blender load"] = cell
        if ref is not None:
            cell.differs = blender_disagreement(ref, res["joints"])
    return f"Blender {results['version']}", results["opens"]


def blender_disagreement(ref: Reference, joints: list[dict[str, Any]]) -> str | None:
    """read_bvh keeps per joint (lx, ly, lz, rx, ry, rz): position channels (0 where absent) and
    Euler angles in radians, applied in the channel order `order`."""
    K = min(CHECK_FRAMES, ref.clip.n_frames)
    if len(joints) != ref.clip.n_joints:
        return f"{len(joints)} joints, Stride {ref.clip.n_joints}"
    rotations = np.empty((K, len(joints), 4))
    positions = np.full((K, len(joints), 3), np.nan)
    for j, joint in enumerate(joints):
        anim = np.array(joint["anim"], dtype=np.float64).reshape(-1, 6)
        if len(anim) != K:
            return f"{len(anim)} frames, Stride {K}"
        if joint["has_rot"]:
            order = joint["order"]
            angles = anim[:, [3 + "XYZ".index(a) for a in order]]
            rotations[:, j] = quat.from_euler(angles, order)
        else:
            rotations[:, j] = quat.identity()
        if joint["has_loc"]:
            positions[:, j] = anim[:, :3]
    return disagreement(ref, rotations, positions)


# -- the table ----------------------------------------------------------------------------------

def mbps(take: Take, cell: Timing | None) -> str:
    if cell is None:
        return "n/a"
    if cell.error is not None:
        return "FAILS"
    assert cell.seconds is not None
    return f"{take.size / 1e6 / cell.seconds:.1f}{mark(cell)}"


def ms(cell: Timing | None) -> str:
    if cell is None:
        return "n/a"
    if cell.error is not None:
        return "FAILS"
    assert cell.seconds is not None
    return f"{cell.seconds * 1e3:.1f}{mark(cell)}"


def mark(cell: Timing) -> str:
    return ("*" if cell.runs < RUNS else "") + ("!" if cell.differs else "")


def throughput(rows: list[Row], key: str, only: Callable[[Row], bool] = lambda r: True,
               best: bool = False) -> float:
    picked = [r for r in rows if only(r)]
    seconds = sum((r.cells[key].best if best else r.cells[key].seconds) or 0.0 for r in picked)
    return sum(r.take.size for r in picked) / 1e6 / seconds if seconds else float("nan")


def main() -> int:
    import bvhio
    import pybvh

    print(f"{machine()}, "
          f"pybvh {metadata.version('pybvh')}, bvhio {metadata.version('bvhio')}")
    with tempfile.TemporaryDirectory(prefix="stride-bench-") as tmp:
        takes = cmu_takes() + made_takes(Path(tmp))
        # Warm-up: first calls pay for imports and numpy's lazy setup.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            small = takes[0].path
            bvh.load(small).fk()
            pybvh.read_bvh_file(small)
            bvhio.readAsBvh(str(small))
        rows = [Row(t) for t in takes]
        refs: list[Reference | None] = []
        for take, row in zip(takes, rows, strict=True):
            ref = run_stride_and_pybvh(take, row)
            refs.append(ref)
            run_bvhio(take, row, ref)
        blender_title, blender_opens = run_blender(takes, rows, refs)
        same = made_sanity(takes, refs)
        print_table(rows, blender_title)
        print_notes(rows, blender_opens, same)
        print_summary(rows)
    return 0


def made_sanity(takes: list[Take], refs: list[Reference | None]) -> str:
    """Stride reads the files made from 02_01 to 02_01's poses."""
    by_name = {t.name: r for t, r in zip(takes, refs, strict=True)}
    base = by_name.get("02_01")
    if base is None:
        return ""
    worst_rot, worst_pos = 0.0, 0.0
    for name in ("02_01 6-ch joints", "02_01 0/1-ch joints", "02_01 x10k frames"):
        ref = by_name.get(name)
        if ref is None:
            return f"Stride could not read {name}"
        K = min(len(ref.world), len(base.world))
        worst_rot = max(worst_rot, float(quat.angle(ref.clip.rotations[:K], base.clip.rotations[:K]).max()))
        worst_pos = max(worst_pos, float(np.abs(ref.world[:K] - base.world[:K]).max()))
    return (f"Stride reads the 6-ch, 0/1-ch and 10k files made from 02_01 to 02_01's poses: "
            f"max {worst_rot:.1e} rad, {worst_pos:.1e} units apart (first {CHECK_FRAMES} frames)")


COLUMNS = [("Stride load", "load"), ("Stride loads", "loads"), ("Stride FK", "FK ms"),
           ("pybvh load", "load"), ("pybvh FK", "FK ms"), ("bvhio load", "load"), ("bvhio FK", "FK ms"),
           ("Blender load", "load"), ("Blender FK", "FK ms")]


def print_table(rows: list[Row], blender_title: str) -> None:
    name_w = max(len(r.take.name) for r in rows)
    lead = f"{'file':<{name_w}} {'MB':>6} {'frames':>6} {'joints':>6}"
    groups = [("Stride", 3), ("pybvh", 2), ("bvhio", 2), (blender_title, 2)]
    width = 9
    top = " " * len(lead)
    for title, span in groups:
        top += " " + f"{title:-^{width * span + span - 1}}"
    header = lead + "".join(f" {label:>{width}}" for _, label in COLUMNS)
    print()
    print(top)
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = []
        for key, label in COLUMNS:
            cell = row.cells.get(key)
            cells.append(ms(cell) if label == "FK ms" else mbps(row.take, cell))
        take = row.take
        line = f"{take.name:<{name_w}} {take.size / 1e6:6.3f} {take.frames:6d} {take.joints:6d}"
        print(line + "".join(f" {c:>{width}}" for c in cells))
    print("load, loads: MB/s (higher is faster); FK ms: world positions of all joints, all frames; "
          f"n/a: the library has no such step; median of {RUNS} runs, CPU time")
    print(f"* fewer than {RUNS} runs (a cell stops after {BUDGET:g} s); "
          f"! disagrees with Stride (see notes); FAILS: raised (see notes)")


def print_notes(rows: list[Row], blender_opens: str, same: str) -> None:
    print("\nnotes:")
    for row in rows:
        if row.take.note:
            print(f"  {row.take.name}: {row.take.note}")
    seen: set[tuple[str, str]] = set()
    for row in rows:
        for key, cell in row.cells.items():
            library = key.split()[0]
            if cell.error and (library, cell.error) not in seen:
                seen.add((library, cell.error))
                files = [r.take.name for r in rows if (c := r.cells.get(key)) and c.error == cell.error]
                reason = cell.error.replace(str(row.take.path.parent) + os.sep, "")
                print(f"  {key} FAILS on {', '.join(files)}: {reason}")
            if cell.differs:
                print(f"  {key} on {row.take.name} disagrees with Stride: {cell.differs}")
    if blender_opens:
        print(f"  Blender's read_bvh opens the file with `{blender_opens}`; it has no FK step (the "
              "armature import does that in Blender)")
    if same:
        print(f"  {same}")


def rate(row: Row, key: str) -> float:
    """MB/s of a load cell that ran."""
    seconds = row.cells[key].seconds
    return row.take.size / 1e6 / seconds if seconds else float("nan")


def print_summary(rows: list[Row]) -> None:
    def reads(r: Row, library: str) -> bool:
        return r.cells[f"{library} load"].error is None

    both = [r for r in rows if reads(r, "Stride") and reads(r, "pybvh")]
    ours = throughput(rows, "Stride load", lambda r: r in both)
    theirs = throughput(rows, "pybvh load", lambda r: r in both)
    ratio = ours / theirs
    worst = min(both, key=lambda r: rate(r, "Stride load") / rate(r, "pybvh load"))
    only_ours = [r.take.name for r in rows if reads(r, "Stride") and not reads(r, "pybvh")]
    readable = [r for r in rows if r.cells["Stride loads"].error is None and r.take.frames > 0]
    loads = throughput(rows, "Stride loads", lambda r: r in readable)
    slowest = min(readable, key=lambda r: rate(r, "Stride loads"))
    big = next(r for r in rows if r.take.frames == BIG_FRAMES)
    fk = big.cells["Stride FK"].seconds or float("nan")

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    print("\nsummary (ratios on this machine, this run):")
    print(f"  Stride load / pybvh load: {ratio:.2f}x over the {len(both)} files both read ({ours:.0f} vs "
          f"{theirs:.0f} MB/s; lowest {rate(worst, 'Stride load') / rate(worst, 'pybvh load'):.2f}x on "
          f"{worst.take.name})")
    cmu = [r for r in both if r.take.path.parent.parent.name == "cmu"]
    for label, group in (("the 9 CMU files", cmu), (big.take.name, [big])):
        members = {id(r) for r in group}

        def inside(row: Row, members: set[int] = members) -> bool:
            return id(row) in members

        for kind, best in (("median", False), ("best", True)):
            r = (throughput(rows, "Stride load", inside, best) / throughput(rows, "pybvh load", inside, best))
            print(f"    {label}, {kind} of alternating runs: {r:.2f}x   target >= {TARGET_LOAD_RATIO}x   "
                  f"{verdict(r >= TARGET_LOAD_RATIO)}")
    print(f"    and Stride reads what pybvh refuses: {', '.join(only_ours) or 'nothing'}")
    print(f"  Stride loads(text): {loads:.0f} MB/s over {len(readable)} files (slowest "
          f"{rate(slowest, 'Stride loads'):.0f} MB/s, {slowest.take.name})   "
          f"target >= {TARGET_LOADS:g} MB/s   {verdict(loads >= TARGET_LOADS)}")
    print(f"  Stride FK, {big.take.frames:,} frames x {big.take.joints} joints: {fk:.3f} s   "
          f"target <= {TARGET_FK:g} s   {verdict(fk <= TARGET_FK)}")


if __name__ == "__main__":
    raise SystemExit(main())
