"""Stride's main job on the bundled samples, inside real Blender (a `bpy` wheel).

    python build.py demo [--blender 4.5]

Imports a walk and a run with Blender's own importer, marks footsteps, writes event-encoding,
phase and contact curves, bakes a walk -> run sync-blend ramp and a dead-blended transition,
saves out/stride_demo.blend, exports the baked clips as BVH and a small training dataset, and
prints one table: each step, what it made, how long it took, and its quality numbers.
"""
# mypy: disable-error-code="attr-defined,union-attr,func-returns-value"
# (bpy.ops.stride exists once the extension is installed; context members are set here;
# fake-bpy-module types libraries.load as returning None, where it is a context manager)

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import itertools
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
OUT = ROOT / "out"


class Steps:
    """Runs the demo's steps and keeps one row per step for the summary table."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, str]] = []

    def run(self, name: str, fn: Callable[[], tuple[str, str]]) -> None:
        t0 = time.perf_counter()
        made, quality = fn()
        self.rows.append((name, made, time.perf_counter() - t0, quality))
        print(f"  {name}: {made}", flush=True)

    def table(self) -> str:
        head = f"{'step':<22} {'made':<56} {'time s':>7}  quality"
        rows = [f"{n:<22} {m:<56} {t:>7.2f}  {q}" for n, m, t, q in self.rows]
        lines = [head, "-" * max(len(line) for line in [head, *rows]), *rows]
        return "\n".join(lines)


# The `time s` column of the steps table: the only one that changes from run to run.
TIME_COLUMN = slice(80, 87)


def without_times(table: str) -> str:
    """The steps table with its `time s` column blanked: what the README's copy must match."""
    return "\n".join(line[:TIME_COLUMN.start] + " " * len(line[TIME_COLUMN]) + line[TIME_COLUMN.stop:]
                     for line in table.splitlines())


def readme_tables(readme: str) -> tuple[str, str]:
    """The demo's two tables as the README quotes them (the fenced block that starts with the clip
    table's header): (clips, steps)."""
    blocks = readme.split("```")[1::2]
    block = next((b for b in blocks if b.lstrip("\n").startswith("clip ")), None)
    if block is None:
        raise ValueError("README.md quotes no demo output (a fenced block starting with 'clip ')")
    clips, _, steps = block.strip("\n").partition("\n\n")
    return clips, steps.strip("\n")


def clip_summary() -> str:
    from core import bvh, metrics

    lines = [f"{'clip':<8} {'joints':>6} {'frames':>6} {'fps':>5} {'seconds':>7} {'start':>5} "
             f"{'root m/s':>8} {'height m':>8}"]
    for path in sorted(SAMPLES.glob("*.bvh")):
        c = bvh.load(path)
        height = c.height * c.meters_per_unit
        lines.append(f"{c.name:<8} {c.n_joints:>6} {c.n_frames:>6} {c.fps:>5g} {c.duration:>7.2f} "
                     f"{c.motion_start:>5} {metrics.root_speed(c):>8.2f} {height:>8.2f}")
    return "\n".join(lines)


def run_steps(stride: Any, out: Path) -> Steps:
    """The demo's steps inside Blender with the installed extension `stride`, writing into `out`
    (shown in the table relative to its parent: out/...)."""
    import bpy

    from core import bvh, contacts, dataset, events, metrics, transition

    out.mkdir(parents=True, exist_ok=True)
    steps = Steps()
    state: dict[str, Any] = {}
    walk_file, run_file = SAMPLES / "02_01.bvh", SAMPLES / "02_03.bvh"

    def shown(path: Path) -> str:
        return str(path.relative_to(out.parent))

    def import_takes() -> tuple[str, str]:
        bpy.ops.wm.read_homefile(use_empty=True)
        for path in (walk_file, run_file):
            # Blender's importer prints its progress; the demo prints its own table.
            with contextlib.redirect_stdout(io.StringIO()):
                bpy.ops.import_anim.bvh(filepath=str(path), update_scene_fps=True, rotate_mode="QUATERNION")
        state["walk"], state["run"] = bpy.data.objects["02_01"], bpy.data.objects["02_03"]
        return "2 armatures, 2 actions (Blender's importer)", f"scene at {bpy.context.scene.render.fps} fps"

    def footsteps() -> tuple[str, str]:
        made = []
        for obj in (state["walk"], state["run"]):
            bpy.context.view_layer.objects.active = obj
            bpy.ops.stride.detect_footsteps()
            made.append(f"{obj.name}: {len(obj.animation_data.action.pose_markers)}")
        return "FootDown markers " + ", ".join(made), "see tests: labelled steps within 3 frames"

    def event_curves() -> tuple[str, str]:
        worst, count = 0.0, 0
        for obj in (state["walk"], state["run"]):
            bpy.context.view_layer.objects.active = obj
            bpy.ops.stride.write_event_curves(window=0.5, sigma=1 / 120)
            clip = stride.bridge.action_to_clip(obj)
            for times in contacts.footsteps(clip).values():
                sin, cos = events.encode(clip.times, times, 0.5, 1 / 120)
                found = events.detect(clip.times, sin, cos, 0.5)
                if found.shape == times.shape and len(times):
                    worst = max(worst, float(np.abs(found - times).max() * clip.fps))
                count += len(times)
        return ("event, phase, contact curves on 2 actions",
                f"{count} events recovered, worst {worst:.3f} frames")

    def sync_ramp() -> tuple[str, str]:
        walk = state["walk"]
        bpy.context.view_layer.objects.active = walk
        # The animator's part: key the blend weight from walk (0) to run (1) over 4 seconds.
        walk["stride_blend_weight"] = 0.0
        walk.keyframe_insert('["stride_blend_weight"]', frame=1)
        walk["stride_blend_weight"] = 1.0
        walk.keyframe_insert('["stride_blend_weight"]', frame=1 + 4 * 120)
        bpy.ops.stride.bake_sync_blend(action_a="02_01", action_b="02_03", weight_mode="CURVE",
                                       duration=4.0)
        baked = walk.animation_data.action
        state["baked"] = [baked]
        blend = stride.bridge.action_to_clip(walk, baked)
        a, b = bvh.load(walk_file), bvh.load(run_file)
        slide = {name: metrics.foot_sliding(c) for name, c in (("walk", a), ("run", b), ("blend", blend))}
        steps = contacts.footsteps(blend)
        both = sorted((t, k[-1]) for k, v in steps.items() for t in v)
        alternate = all(x[1] != y[1] for x, y in itertools.pairwise(both))
        slides = ", ".join(f"{k} {v:.2f}" for k, v in slide.items())
        marks = sum(m.name.startswith("FootDown") for m in baked.pose_markers)
        # The markers are the sources' plants laid out by the bake; the detector re-reads the result.
        return (f"action {baked.name!r}, {marks} footstep markers",
                f"{len(both)} steps detected, alternate: {alternate}; foot sliding m/s: {slides}")

    def transitions() -> tuple[str, str]:
        walk = state["walk"]
        bpy.context.view_layer.objects.active = walk
        bpy.ops.stride.bake_transition(source_action="02_01", source_time=1.6, target_action="02_03",
                                       target_time=0.3, blend_time=0.25, method="DEAD")
        state["transition"] = walk.animation_data.action
        src, dst = bvh.load(walk_file), bvh.load(run_file)
        i_s = round(1.6 * src.fps)
        change = {}
        for label, fn in (("dead", transition.dead_blend), ("inertialize", transition.inertialize),
                          ("crossfade", transition.crossfade)):
            out = fn(src, dst, 1.6, 0.3, 0.25)
            change[label] = metrics.switch_velocity_change(out, i_s)["position"]
        ratio = ", ".join(f"{k} {v / change['crossfade']:.2f}" for k, v in change.items())
        return f"action {state['transition'].name!r}", f"velocity change vs crossfade: {ratio}"

    def save() -> tuple[str, str]:
        path = out / "stride_demo.blend"
        stride.jobs.save_blend(path)
        # What a save keeps: every action the demo made or imported, read back from the file.
        with bpy.data.libraries.load(str(path)) as (saved, _):
            kept = sorted(saved.actions)
        return shown(path), f"{len(kept)} actions read back from the file"

    def export_bvh() -> tuple[str, str]:
        written = []
        walk = state["walk"]
        bpy.context.view_layer.objects.active = walk
        for action in [state["transition"], *state.get("baked", [])]:
            path = out / (re.sub(r"[^A-Za-z0-9]+", "_", action.name).strip("_") + ".bvh")
            bpy.ops.stride.export_bvh(filepath=str(path), action=action.name)
            written.append(path.name)
        back = bvh.load(out / written[0])
        return ", ".join(written), f"{back.n_frames} frames read back"

    def export_dataset() -> tuple[str, str]:
        target = out / "dataset"
        shutil.rmtree(target, ignore_errors=True)
        report = dataset.export([SAMPLES], target, workers=1)
        return f"{len(report.written)} .npz in {shown(target)}", f"{len(report.failed)} failed"

    for name, fn in (("import walk + run", import_takes), ("detect footsteps", footsteps),
                     ("write event curves", event_curves), ("bake sync-blend ramp", sync_ramp),
                     ("bake transition", transitions),
                     ("save .blend", save), ("export BVH", export_bvh), ("export dataset", export_dataset)):
        steps.run(name, fn)
    return steps


def main() -> int:
    import build

    stride: Any = build.install_extension()
    import bpy

    print(f"Stride demo in Blender {bpy.app.version_string}\n")
    print(clip_summary() + "\n")
    steps = run_steps(stride, OUT)
    print("\n" + steps.table())
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if importlib.util.find_spec("bpy") is None:
        import build

        sys.exit(build.rerun_in_blender(Path(__file__), sys.argv[1:], __doc__))
    sys.exit(main())
