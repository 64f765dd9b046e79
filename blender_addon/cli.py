"""The `stride` command: `blender -b [FILE.blend] --command stride SUBCOMMAND ...`.

`main(argv) -> int` is registered with `bpy.utils.register_cli_command`, and is callable from
Python with the `bpy` module. Exit codes: 0 done, 1 failed (one message on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from . import bridge, engine, importer, jobs
from .core import bvh
from .core.clip import Clip
from .options import (
    AUTO,
    DatasetOptions,
    EngineExportOptions,
    EventOptions,
    ExportOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
    default,
    help_of,
)
from .wording import CLI

FEET_HELP = ("the two ankle joints, LEFT,RIGHT (default: the armature's Left/Right Foot, else the ones "
             "the body map finds); on a .blend's armature they are kept as its feet")


def _frames(text: str) -> tuple[int, int]:
    first, _, last = text.partition(",")
    try:
        return int(first), int(last)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FIRST,LAST frames, e.g. 1,120, not {text!r}") from None


def _foot_speed(text: str) -> float:
    """`--speed auto|M`: Foot Speed in m/s, auto (options.AUTO) from the body and the take."""
    if text.strip().lower() == "auto":
        return AUTO
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected auto or a speed in m/s above 0, not {text!r}")
    return value


def _seconds_or_auto(text: str) -> float | None:
    """`--dst-at SECONDS|auto`: None for auto."""
    if text.strip().lower() == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds or auto, not {text!r}") from None


# Flags whose values are more than their field's type.
_PARSE = {"speed_mps": {"type": _foot_speed, "metavar": "auto|M"},
          "source": {"type": str.upper, "choices": ["KEYS", "EVALUATED", "AUTO"],
                     "metavar": "keys|evaluated|auto"}}


def _add(parser: Any, cls: type, name: str, *, required: bool = False, **extra: Any) -> None:
    """A CLI flag for an options field: its flag, default, type and help from the declaration."""
    flag = {f.name: f for f in dataclasses.fields(cls)}[name].metadata["flag"]
    value = default(cls, name)
    kind: dict[str, Any]
    if isinstance(value, bool):
        kind = {"action": argparse.BooleanOptionalAction if value else "store_true"}
    elif isinstance(value, tuple):
        kind = {"type": _frames, "metavar": "FIRST,LAST"}
    else:
        kind = {"type": type(value)}
    shown = f" (default {value:g})" if isinstance(value, float) and not required else ""
    kind = {**kind, **_PARSE.get(name, {}), **extra}
    parser.add_argument(flag, dest=name, help=help_of(cls, name) + shown,
                        **({"required": True} if required else {"default": value}), **kind)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blender -b --command stride",
        description="Stride motion-capture tools in batch.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    imp = sub.add_parser(
        "import", help="import BVH files into a .blend (one armature per file)",
        description="Import BVH files (or folders of them) with Stride's importer and save a .blend. "
                    "A bad file is reported and skipped; the exit code is 1 if any failed.")
    imp.add_argument("files", nargs="+", help="BVH files or folders")
    imp.add_argument("--out", required=True, help=".blend file to write")
    imp.add_argument("--into", help="add to this .blend instead of an empty scene")
    imp.add_argument("--single-armature", action="store_true",
                     help="one armature with one action per file (skeletons must match)")
    axes = ["X", "Y", "Z", "-X", "-Y", "-Z"]
    _add(imp, ImportOptions, "axis_forward", choices=axes)
    _add(imp, ImportOptions, "axis_up", choices=axes)
    _add(imp, ImportOptions, "global_scale")
    _add(imp, ImportOptions, "scale_preset", choices=["NONE", "CMU_TO_METERS", "CM_TO_METERS"])
    _add(imp, ImportOptions, "rotate_mode",
         choices=["QUATERNION", "NATIVE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
    _add(imp, ImportOptions, "frame_start")
    _add(imp, ImportOptions, "use_fps_scale")
    _add(imp, ImportOptions, "update_scene_fps")
    _add(imp, ImportOptions, "update_scene_duration")
    ev = sub.add_parser(
        "events", help="footstep markers and event curves for a BVH or .blend",
        description="Detect footsteps and write event-encoding, phase, contact and tag curves on every "
                    "armature's active action; save a .blend. A .bvh is imported with Stride first.")
    ev.add_argument("input", help="IN.bvh or IN.blend")
    ev.add_argument("--out", required=True, help=".blend file to write")
    for name in ("window", "sigma", "speed_mps"):
        _add(ev, EventOptions, name)
    _add(ev, FootstepOptions, "lifts")
    _add(ev, FootstepOptions, "source")
    ev.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    ds = sub.add_parser(
        "export-dataset", help="training data: one .npz per BVH clip (see the README schema)",
        description="Export BVH files or folders to one .npz per clip (rotations, world positions, "
                    "contacts, phase, event encodings). Resumable; a bad file is reported and skipped.")
    ds.add_argument("inputs", nargs="+", help="BVH files or folders (searched recursively)")
    ds.add_argument("--out", required=True, help="output folder")
    for name in ("workers", "window", "sigma", "speed_mps"):  # dataset.Settings checks them too
        _add(ds, DatasetOptions, name)
    _add(ds, DatasetOptions, "feet", metavar="LEFT,RIGHT")
    sb = sub.add_parser(
        "sync-blend", help="blend a walk and a run cycle in phase: --weight, --ramp or --speed",
        description="Cycles of A and B (from their footsteps, or --frames-a/--frames-b) blended in "
                    "phase for --seconds or --cycles. Inputs are BVH files or .blend files (the active "
                    "action of their armature); frames count from 1 for a BVH file.")
    sb.add_argument("a", help="A.bvh or A.blend (weight 0)")
    sb.add_argument("b", help="B.bvh or B.blend (weight 1)")
    weight = sb.add_mutually_exclusive_group(required=True)
    weight.add_argument("--weight", type=float, help=help_of(SyncOptions, "weight") + ", constant")
    weight.add_argument("--ramp", help="weight keys SECONDS:WEIGHT,..., e.g. 0:0,4:1")
    weight.add_argument("--speed", type=float, help=help_of(SyncOptions, "speed_mps"))
    length = sb.add_mutually_exclusive_group(required=True)
    length.add_argument("--seconds", type=float, help="duration of the result (s)")
    length.add_argument("--cycles", type=float, help="duration in blended cycles (with --weight or --speed)")
    sb.add_argument("--mode", default=default(SyncOptions, "mode").lower(), type=str.lower,
                    choices=["linear", "harmonic", "leader"], help=help_of(SyncOptions, "mode"))
    for name in ("frames_a", "frames_b", "in_place", "cyclic", "mask", "lock_feet", "allow_mismatch",
                 "source"):
        _add(sb, SyncOptions, name)
    sb.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    sb.add_argument("--out", required=True, help="OUT.bvh or OUT.blend")
    methods = ["dead", "inertialize", "crossfade"]
    tr = sub.add_parser(
        "transition", help="bake a transition from one BVH take into another",
        description="Play A until --at seconds, then transition into B from --dst-at seconds until "
                    "--dst-end (B's end by default). Writes a BVH, or a .blend with A's armature and the "
                    "baked action.")
    tr.add_argument("a", help="source BVH")
    tr.add_argument("b", help="destination BVH (same skeleton)")
    _add(tr, TransitionOptions, "source_time", required=True)
    _add(tr, TransitionOptions, "target_time", type=_seconds_or_auto, metavar="SECONDS|auto")
    _add(tr, TransitionOptions, "target_end")
    _add(tr, TransitionOptions, "blend_time")
    tr.add_argument("--method", default="dead", type=str.lower, choices=methods,
                    help=help_of(TransitionOptions, "method"))
    tr.add_argument("--halflife", type=float,
                    help=help_of(TransitionOptions, "halflife") + " (default: auto)")
    _add(tr, TransitionOptions, "mask")
    _add(tr, TransitionOptions, "lock_feet")
    _add(tr, TransitionOptions, "allow_mismatch")
    tr.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    tr.add_argument("--out", required=True, help="OUT.bvh or OUT.blend")
    sq = sub.add_parser(
        "sequence", help="chain BVH takes with transitions: A@0:2 B@0.5:3 ...",
        description="Each item is FILE@START:END (seconds in that file). Each take plays until its END, "
                    "then transitions into the next at its START.")
    sq.add_argument("items", nargs="+", help="FILE@START:END")
    _add(sq, TransitionOptions, "blend_time")
    sq.add_argument("--method", default="dead", type=str.lower, choices=methods,
                    help=help_of(TransitionOptions, "method"))
    _add(sq, TransitionOptions, "lock_feet")
    _add(sq, NlaBakeOptions, "allow_mismatch")
    sq.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    sq.add_argument("--out", required=True, help="OUT.bvh or OUT.blend")
    ins = sub.add_parser(
        "inspect", help="print what Stride reads from a skeleton: legs, feet, up, facing, unit",
        description="Print the body map of a BVH file, or of an armature's action (--armature, in the "
                    "open or given .blend): legs and feet by name with their evidence (names, motion, "
                    "user), root, static joints, up, facing, unit, fps, motion start.")
    ins.add_argument("input", nargs="?", help="IN.bvh, or IN.blend to open (default: the open file)")
    ins.add_argument("--armature", help="armature object name (default: active or only armature)")
    ins.add_argument("--action", help="action name (default: the armature's active action)")
    ins.add_argument("--feet", metavar="LEFT,RIGHT", help="the two ankle joints, to see the map around them")
    _add(ins, FootstepOptions, "source")
    lf = sub.add_parser(
        "lock-feet", help="hold planted feet where they land (a BVH take, or an armature's action)",
        description="Lock the planted feet of a BVH take, or of an armature's action in a .blend "
                    "(its stride_contact curves when it has them, else detected contacts), and write "
                    "the result as a BVH or as a new action in a .blend.")
    lf.add_argument("input", help="IN.bvh or IN.blend")
    lf.add_argument("--armature", help="armature object in a .blend (default: active or only armature)")
    lf.add_argument("--action", help="action name in a .blend (default: the armature's active action)")
    for name in ("blend_time", "lower_pelvis", "speed_mps", "source"):
        _add(lf, LockFeetOptions, name)
    lf.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    lf.add_argument("--out", required=True, help="OUT.bvh or OUT.blend")
    nl = sub.add_parser(
        "nla", help="bake what an armature's NLA plays into one action (a .blend)",
        description="Bake what the NLA plays on an armature's tracks (--tracks, default every unmuted "
                    "track) into one new action, with transitions where one strip takes over from "
                    "another, and save the .blend (or write the action as a BVH). What a bake cannot "
                    "reproduce is refused, naming the track, strip and setting.")
    nl.add_argument("blend_file", nargs="?", metavar="blend",
                    help=".blend file to open first (default: the open file)")
    nl.add_argument("--armature", help="armature object name (default: active or only armature)")
    for name in ("track", "blend_time", "lock_feet", "allow_mismatch", "reanchor", "source"):
        _add(nl, NlaBakeOptions, name)
    nl.add_argument("--method", default="dead", type=str.lower, choices=methods,
                    help=help_of(NlaBakeOptions, "method"))
    nl.add_argument("--out", required=True, help="OUT.blend or OUT.bvh")
    export = sub.add_parser("export", help="write an armature's action as a BVH file",
                            description="Write an armature's action as a BVH file.")
    export.add_argument("blend_file", nargs="?", metavar="blend",
                        help=".blend file to open first (default: the open file)")
    export.add_argument("--armature", help="armature object name (default: active or only armature)")
    export.add_argument("--action", help="action name (default: the armature's active action)")
    _add(export, ExportOptions, "global_scale")
    _add(export, ExportOptions, "source")
    export.add_argument("--out", required=True, help="BVH file to write")
    ee = sub.add_parser(
        "export-engine", help="an armature's actions as FBX or glTF for a game engine, events beside them",
        description="Write an armature and its actions through Blender's FBX or glTF exporter for a game "
                    "engine (a root bone carrying the travel: actions without one get Add Root Motion "
                    "first), and FILE.events.json beside the file: each action's markers and Stride's "
                    "curves. The input is a .blend (its --armature), or BVH takes: imported onto one "
                    "armature, their footsteps marked and event curves written, each take exported.")
    ee.add_argument("inputs", nargs="*", metavar="IN",
                    help="IN.blend, or BVH takes of one skeleton (default: the open file)")
    ee.add_argument("--armature", help="armature object name (default: active or only armature)")
    _add(ee, EngineExportOptions, "actions", metavar="A,B|ALL")
    _add(ee, EngineExportOptions, "file_format", type=str.upper, choices=["FBX", "GLB"], metavar="fbx|glb",
         required=True)
    _add(ee, EngineExportOptions, "engine", type=str.upper, choices=["UNREAL", "UNITY"],
         metavar="unreal|unity")
    _add(ee, EngineExportOptions, "root_motion")
    _add(ee, EngineExportOptions, "smooth")
    _add(ee, EngineExportOptions, "mode", type=str.upper, choices=["YAW", "NONE"], metavar="yaw|none")
    _add(ee, EngineExportOptions, "source")
    ee.add_argument("--feet", metavar="LEFT,RIGHT", help=FEET_HELP)
    ee.add_argument("--out", required=True, help="FILE.fbx or FILE.glb (FILE.events.json is written beside)")
    return parser


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # --help, or bad usage
        return int(exc.code or 0)
    error = ""
    code = 1
    # The core's warnings (contacts in doubt, events merged, ...) go to stderr once the command ends.
    # Core messages in the CLI's words (its flags, where they give Python advice).
    with jobs.core_warnings(face=CLI) as warned, bridge.read_notes() as reads:
        try:
            code = _run(args)
        except jobs.USER_ERRORS as exc:
            error = jobs.in_user_words(str(exc), face=CLI)
        except RuntimeError as exc:  # bpy.ops failures (e.g. a .blend that cannot be opened)
            error = str(exc).strip().removeprefix("Error:").strip()  # Blender's own prefix, once is enough
    for note in reads:  # which source each action was read from, and why
        print(f"stride {args.command}: {note}")
    for message in warned:
        print(f"stride {args.command}: warning: {message}", file=sys.stderr)
    if error:
        print(f"stride {args.command}: error: {error}", file=sys.stderr)
        return 1
    return code


def _run(args: argparse.Namespace) -> int:
    """The subcommand, with its exit code."""
    if getattr(args, "blend_file", None):
        bpy.ops.wm.open_mainfile(filepath=args.blend_file)
    if args.command == "import":
        return _import(args)
    if args.command == "events":
        return _events(args)
    if args.command == "export-dataset":
        return _export_dataset(args)
    if args.command == "transition":
        return _transition(args)
    if args.command == "sync-blend":
        return _sync_blend(args)
    if args.command == "sequence":
        return _sequence(args)
    if args.command == "lock-feet":
        return _lock_feet(args)
    if args.command == "inspect":
        return _inspect(args)
    if args.command == "nla":
        return _nla(args)
    if args.command == "export-engine":
        return _export_engine(args)
    obj = jobs.find_armature(args.armature)  # export
    clip = jobs.export_bvh(obj, args.out, options=_options(ExportOptions, args))
    print(f"stride: wrote {args.out}: {clip.n_joints} joints, {clip.n_frames} frames at {clip.fps:g} fps")
    return 0


def _import(args: argparse.Namespace) -> int:
    if args.into:
        bpy.ops.wm.open_mainfile(filepath=args.into)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
    context = bpy.context
    done, failed = jobs.import_files(context, args.files, options=_options(ImportOptions, args),
                                     single_armature=args.single_armature)
    for message in failed:
        print(f"stride import: error: {message}", file=sys.stderr)
    if done:
        jobs.save_blend(args.out)
        for obj, action in done:
            print(f"stride: imported {action.name!r} on armature {obj.name!r}")
        print(f"stride: wrote {args.out}")
    return 1 if failed else 0


def _events(args: argparse.Namespace) -> int:
    source = Path(args.input)
    if not source.is_file():
        raise jobs.JobError(f"no such file: {str(source)!r}")
    if source.suffix.lower() == ".blend":
        bpy.ops.wm.open_mainfile(filepath=str(source))
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
        obj, _ = importer.import_bvh(bpy.context, source)
        scene = bpy.context.scene
        if scene is not None:  # play the take in real time
            scene.render.fps, scene.render.fps_base = round(bridge.action_to_clip(obj).fps), 1.0
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.animation_data
                 and o.animation_data.action]
    if not armatures:
        raise jobs.JobError(f"{source.name} has no armature with an action")
    for obj in armatures:
        _choose_feet(args, obj)
        action, counts, feet = jobs.detect_footsteps(obj, options=_options(FootstepOptions, args))
        _, written = jobs.write_event_curves(obj, options=_options(EventOptions, args))
        steps = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        feet = jobs.in_user_words(feet, face=CLI)  # the body map's doubts say how to choose other feet
        print(f"stride: {obj.name} / {action.name}: {steps}; {feet}; curves {', '.join(written)}")
    jobs.save_blend(args.out)
    print(f"stride: wrote {args.out}")
    return 0


def _lock_feet(args: argparse.Namespace) -> int:
    source = Path(args.input)
    if not source.is_file():
        raise jobs.JobError(f"no such file: {str(source)!r}")
    options = _options(LockFeetOptions, args)
    if source.suffix.lower() == ".blend":
        bpy.ops.wm.open_mainfile(filepath=str(source))
        obj = jobs.find_armature(args.armature)
        _choose_feet(args, obj)
        act, clip, notes = jobs.lock_feet_action(obj, options=options, lower_pelvis="--lower-pelvis",
                                                 face=CLI)
        for note in notes[1:]:
            print(f"stride lock-feet: warning: {note}", file=sys.stderr)
        _save_baked(clip, args.out)
        print(f"stride: {act.name!r}: {clip.n_frames} frames ({notes[0]}); wrote {args.out}")
        return 0
    clip = _with_feet(args, bvh.load(source))
    out, notes = jobs.lock_feet_clip(clip, options=options, lower_pelvis="--lower-pelvis", face=CLI)
    for note in notes[1:]:
        print(f"stride lock-feet: warning: {note}", file=sys.stderr)
    _write_clip(out, source, args.out, f"{clip.name} (feet locked)")
    return 0


def _nla(args: argparse.Namespace) -> int:
    obj = jobs.find_armature(args.armature)
    options = _options(NlaBakeOptions, args, method=args.method.upper())
    action, clip = jobs.bake_nla_track(obj, options=options)
    _save_baked(clip, args.out)
    print(f"stride: baked {action.name!r}: {clip.n_frames} frames; wrote {args.out}")
    return 0


def _export_engine(args: argparse.Namespace) -> int:
    inputs = [Path(p) for p in args.inputs]
    for path in inputs:
        if not path.is_file():
            raise jobs.JobError(f"no such file: {str(path)!r}")
    options = _options(EngineExportOptions, args)
    if any(p.suffix.lower() == ".blend" for p in inputs):
        if len(inputs) > 1:
            raise jobs.JobError("give one .blend file, or BVH takes")
        bpy.ops.wm.open_mainfile(filepath=str(inputs[0]))
    if inputs and inputs[0].suffix.lower() != ".blend":
        obj, names = _takes_for_engine(args, inputs)
        if not options.actions:
            options = dataclasses.replace(options, actions=",".join(names))
    else:
        obj = jobs.find_armature(args.armature)
        _choose_feet(args, obj)
    done = engine.export_engine(obj, args.out, options=options)
    for name in done.made:
        print(f"stride: made {name!r} (Add Root Motion)")
    print(f"stride: wrote {done.path} ({len(done.actions)} action(s) of {done.armature.name!r}: "
          f"{', '.join(done.actions)}) and {done.sidecar}")
    return 0


def _takes_for_engine(args: argparse.Namespace, paths: list[Path]) -> tuple[Any, list[str]]:
    """BVH takes imported onto one armature in an empty scene, each take's footsteps marked and its
    event curves written (a take without footsteps is exported without, with a warning): (armature,
    action names)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    done, failed = jobs.import_files(bpy.context, paths, single_armature=True)
    if failed:
        raise jobs.JobError("; ".join(failed) + "; nothing written")
    obj = done[0][0]
    _choose_feet(args, obj)
    scene = bpy.context.scene
    if scene is not None:  # play the takes in real time
        scene.render.fps, scene.render.fps_base = round(bridge.action_to_clip(obj).fps), 1.0
    names = [action.name for _, action in done]
    for name in names:
        try:
            jobs.detect_footsteps(obj, options=FootstepOptions(action=name))
            jobs.write_event_curves(obj, options=EventOptions(action=name))
        except jobs.JobError as exc:
            print(f"stride export-engine: warning: {name!r}: {exc}", file=sys.stderr)
    return obj, names


def _save_baked(clip: Clip, out: str) -> None:
    """A bake made in the open .blend: the clip as BVH, or the whole file (with the new action)."""
    if out.lower().endswith(".bvh"):
        bvh.save(clip, out)
    else:
        jobs.save_blend(out)


def _inspect(args: argparse.Namespace) -> int:
    from .core import body

    source = Path(args.input) if args.input else None
    if source is not None and not source.is_file():
        raise jobs.JobError(f"no such file: {str(source)!r}")
    if source is not None and source.suffix.lower() != ".blend":
        clip = bvh.load(source)
    else:
        if source is not None:
            bpy.ops.wm.open_mainfile(filepath=str(source))
        obj = jobs.find_armature(args.armature)
        # The armature's own feet, unless --feet names others.
        clip = (bridge.source_clip(obj, args.action, source=args.source) if args.feet
                else bridge.read_action(obj, args.action, source=args.source)[0])
    feet = _feet(args.feet)
    if feet is not None:
        clip = body.with_feet(clip, {"L": feet[0], "R": feet[1]})
    print(body.inspect(clip))
    return 0


def _choose_feet(args: argparse.Namespace, obj: Any) -> None:
    """`--feet` kept as the armature's feet (its Stride Rig settings), as choosing them in the
    sidebar does; the armature's own stay when it is not given."""
    feet = _feet(getattr(args, "feet", None))
    if feet is None:
        return
    for name in feet:
        if name not in obj.data.bones:
            raise jobs.JobError(f"--feet: armature {obj.name!r} has no bone {name!r}")
    obj.stride.left_foot, obj.stride.right_foot = feet


def _with_feet(args: argparse.Namespace, clip: Clip) -> Clip:
    """A BVH take's clip with its body map on `--feet` when given."""
    from .core import body

    feet = _feet(getattr(args, "feet", None))
    if feet is None:
        return clip
    for name in feet:
        if name not in clip.names:
            raise jobs.JobError(f"--feet: {clip.name!r} has no joint {name!r}")
    return body.with_feet(clip, {"L": feet[0], "R": feet[1]})


def _feet(text: str | None) -> tuple[str, str] | None:
    """`--feet LEFT,RIGHT`: the two ankle names, None when not given."""
    if not text:
        return None
    left, sep, right = text.partition(",")
    if not (sep and left.strip() and right.strip()):
        raise jobs.JobError(f"--feet takes LEFT,RIGHT ankle names, not {text!r}")
    return left.strip(), right.strip()


def _export_dataset(args: argparse.Namespace) -> int:
    from .core import dataset

    if args.workers > 1:
        # Worker processes must never import bpy: run the bundled core in a plain Python.
        package_dir = Path(dataset.__file__).resolve().parents[1]
        env = dict(os.environ, PYTHONPATH=str(package_dir))
        cmd = [sys.executable, "-m", "core.dataset", *args.inputs, "--out", args.out,
               "--workers", str(args.workers), "--window", str(args.window), "--sigma", str(args.sigma),
               "--speed", "auto" if jobs.foot_speed(args.speed_mps) is None else str(args.speed_mps)] + (
                   ["--feet", args.feet] if args.feet else [])
        return subprocess.run(cmd, env=env).returncode
    settings = dataset.Settings(args.window, args.sigma, jobs.foot_speed(args.speed_mps), _feet(args.feet))
    report = dataset.export(args.inputs, args.out, settings=settings, workers=1)
    for source, message in report.warned:
        said = message if str(source) in message else f"{source}: {message}"
        print(f"stride export-dataset: warning: {said}", file=sys.stderr)
    for source, error in report.failed:
        print(f"stride export-dataset: error: {error if str(source) in error else f'{source}: {error}'}",
              file=sys.stderr)
    print(f"stride: {len(report.written)} written, {len(report.skipped)} already done, "
          f"{len(report.failed)} failed -> {args.out}")
    return 1 if report.failed else 0


def _write_clip(clip: Clip, source: Path, out: str, name: str) -> None:
    """A baked clip as BVH, or as a new action on `source`'s armature in a .blend."""
    if out.lower().endswith(".bvh"):
        bvh.save(clip, out)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
        scene = bpy.context.scene
        if scene is not None:
            scene.render.fps, scene.render.fps_base = round(clip.fps), 1.0
        obj, _ = importer.import_bvh(bpy.context, source)
        jobs.write_result(obj, clip, name, bridge.Timing(1.0, clip.fps))
        jobs.save_blend(out)
    print(f"stride: wrote {out}: {clip.n_frames} frames at {clip.fps:g} fps")


# The transition options as the CLI names them, for its errors.
TRANSITION_LABELS = {"source_time": "--at", "target_time": "--dst-at", "target_end": "--dst-end",
                     "method": "--method", "mask": "--mask", "allow_mismatch": "--allow-mismatch"}
SYNC_LABELS = {"frames_a": "--frames-a", "frames_b": "--frames-b", "mode": "--mode", "mask": "--mask",
               "cycle_hint": "Give its cycle's frames (--frames-a, --frames-b)",
               "allow_mismatch": "--allow-mismatch"}


def _options(cls: type, args: argparse.Namespace, **overrides: Any) -> Any:
    """`cls` from the parsed flags that name its fields, the rest at their defaults."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in names and v is not None}
    return cls(**{**given, **overrides})


def _transition(args: argparse.Namespace) -> int:
    src, dst = _with_feet(args, bvh.load(args.a)), _with_feet(args, bvh.load(args.b))
    halflife = {} if args.halflife is None else {"halflife_mode": "FIXED", "halflife": args.halflife}
    options = _options(TransitionOptions, args, method=args.method.upper(), **halflife)
    if args.target_time is None:  # --dst-at auto
        found = jobs.best_target_time(src, dst, options.source_time, TRANSITION_LABELS["source_time"],
                                      itself=Path(args.a).resolve() == Path(args.b).resolve())
        options = dataclasses.replace(options, target_time=found)
        print(f"stride: --dst-at auto: {found:.3f} s")
    clip = jobs.transition_clip(src, dst, options=options, labels=TRANSITION_LABELS)
    _write_clip(clip, Path(args.a), args.out, f"{src.name} > {dst.name} ({args.method})")
    return 0


def _sequence(args: argparse.Namespace) -> int:
    from .core import transition

    method = jobs.core_method(args.method, "--method")
    spans = []
    for item in args.items:
        # The spans first: a missing '@' must not read as a file named '' (the current folder).
        path, _, span = item.rpartition("@")
        start, _, end = span.partition(":")
        try:
            spans.append((path, float(start), float(end)))
        except ValueError:
            raise jobs.JobError(f"{item!r}: expected FILE@START:END in seconds, e.g. walk.bvh@0:2.5"
                                ) from None
        if not path:
            raise jobs.JobError(f"{item!r}: expected FILE@START:END in seconds, e.g. walk.bvh@0:2.5")
    items = [(_with_feet(args, bvh.load(path)), start, end) for path, start, end in spans]
    for (a, _, _), (b, _, _) in itertools.pairwise(items):
        jobs.check_lengths(a, b, args.allow_mismatch, "--allow-mismatch")
    clip = transition.sequence(items, args.blend_time, method, lock_feet=args.lock_feet)
    _write_clip(clip, Path(args.items[0].rpartition("@")[0]), args.out, f"sequence ({args.method})")
    return 0


def _clip_from(path: str, args: argparse.Namespace) -> tuple[Clip, Path, bridge.Timing]:
    """A clip from a BVH file (its frames counted from 1, as imported), or from the active action of a
    .blend's armature; with the timing its frames count in. Feet: `--feet`, else the armature's."""
    source = Path(path)
    if source.suffix.lower() != ".blend":
        clip = _with_feet(args, bvh.load(source))
        return clip, source, bridge.Timing(1.0, clip.fps)
    if not source.is_file():
        raise jobs.JobError(f"no such file: {path!r}")
    bpy.ops.wm.open_mainfile(filepath=str(source))
    obj = jobs.find_armature()
    _choose_feet(args, obj)
    clip, timing = bridge.read_action(obj, source=args.source)
    return clip, source, timing


def _sync_blend(args: argparse.Namespace) -> int:
    a, source, timing_a = _clip_from(args.a, args)
    b, _, timing_b = _clip_from(args.b, args)
    unit = {"duration": args.seconds, "duration_unit": "SECONDS"} if args.cycles is None else {
        "duration": args.cycles, "duration_unit": "CYCLES"}
    curve = None
    if args.speed is not None:
        weight = {"weight_mode": "SPEED", "speed_mps": args.speed}
    elif args.ramp:
        try:
            pairs = [tuple(float(v) for v in key.split(":")) for key in args.ramp.split(",")]
            curve = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
        except (ValueError, IndexError):
            raise jobs.JobError(f"--ramp {args.ramp!r}: expected SECONDS:WEIGHT,... e.g. 0:0,4:1") from None
        if args.cycles is not None:
            raise jobs.JobError("--cycles needs one weight: use --weight or --speed, or give --seconds")
        weight = {"weight_mode": "CURVE"}
    else:
        weight = {"weight_mode": "CONSTANT", "weight": args.weight}
    options = _options(SyncOptions, args, mode=args.mode.upper(), **unit, **weight)
    to_blend = source.suffix.lower() == ".blend" and not args.out.lower().endswith(".bvh")
    rate = None
    if to_blend:  # keyed at the scene's whole frames, as the operator keys it
        bpy.ops.wm.open_mainfile(filepath=str(source))
        rate = bridge.scene_fps(bridge.current_scene())
    clip, used = jobs.sync_clip(a, b, options=options, timing_a=timing_a, timing_b=timing_b, curve=curve,
                                labels=SYNC_LABELS, rate=rate)
    if args.speed is not None:
        print(f"stride: weight {used:.4f} travels at {args.speed:g} m/s")
    name = f"{a.name} + {b.name} sync ({args.mode})"
    closed = jobs.loops(options)
    if to_blend:
        obj = jobs.find_armature()
        scene = bridge.current_scene()
        timing = bridge.Timing(float(scene.frame_start), bridge.scene_fps(scene))
        action = jobs.write_result(obj, clip, name, timing, obj.animation_data.action)
        if closed:
            jobs.add_cycles_modifiers(obj, action)
        jobs.save_blend(args.out)
        print(f"stride: wrote {args.out}: {clip.n_frames} frames at {clip.fps:g} fps")
    else:
        _write_clip(clip, source, args.out, name)
    return 0
