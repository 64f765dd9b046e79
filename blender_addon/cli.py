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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from . import bridge, importer, jobs
from .arguments import build_parser, feet_names, options_from
from .core import bvh
from .core.clip import Clip
from .options import (
    BlendSpaceOptions,
    EngineExportOptions,
    EventOptions,
    ExportOptions,
    FollowPathOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
)
from .wording import CLI


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
    return COMMANDS[args.command](args)


def _export(args: argparse.Namespace) -> int:
    obj = jobs.find_armature(args.armature)
    clip = jobs.export_bvh(obj, args.out, options=options_from(ExportOptions, args))
    print(f"stride: wrote {args.out}: {clip.n_joints} joints, {clip.n_frames} frames at {clip.fps:g} fps")
    return 0


def _import(args: argparse.Namespace) -> int:
    if args.into:
        bpy.ops.wm.open_mainfile(filepath=args.into)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
    context = bpy.context
    done, failed = jobs.import_files(context, args.files, options=options_from(ImportOptions, args),
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
        action, counts, feet = jobs.detect_footsteps(obj, options=options_from(FootstepOptions, args))
        _, written = jobs.write_event_curves(obj, options=options_from(EventOptions, args))
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
    options = options_from(LockFeetOptions, args)
    if source.suffix.lower() == ".blend":
        bpy.ops.wm.open_mainfile(filepath=str(source))
        obj = jobs.find_armature(args.armature)
        _choose_feet(args, obj)
        act, clip, notes = jobs.lock_feet_action(obj, options=options, face=CLI)
        for note in notes[1:]:
            print(f"stride lock-feet: warning: {note}", file=sys.stderr)
        _save_baked(clip, args.out)
        print(f"stride: {act.name!r}: {clip.n_frames} frames ({notes[0]}); wrote {args.out}")
        return 0
    clip = _with_feet(args, bvh.load(source))
    out, notes = jobs.lock_feet_clip(clip, options=options, face=CLI)
    for note in notes[1:]:
        print(f"stride lock-feet: warning: {note}", file=sys.stderr)
    _write_clip(out, source, args.out, f"{clip.name} (feet locked)")
    return 0


def _nla(args: argparse.Namespace) -> int:
    obj = jobs.find_armature(args.armature)
    options = options_from(NlaBakeOptions, args)
    action, clip = jobs.bake_nla_track(obj, options=options)
    _save_baked(clip, args.out)
    print(f"stride: baked {action.name!r}: {clip.n_frames} frames; wrote {args.out}")
    return 0


def _export_engine(args: argparse.Namespace) -> int:
    inputs = [Path(p) for p in args.inputs]
    for path in inputs:
        if not path.is_file():
            raise jobs.JobError(f"no such file: {str(path)!r}")
    options = options_from(EngineExportOptions, args)
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
    done = jobs.export_engine(obj, args.out, options=options)
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
    feet = feet_names(args.feet)
    if feet is not None:
        clip = body.with_feet(clip, {"L": feet[0], "R": feet[1]})
    print(body.inspect(clip))
    return 0


def _choose_feet(args: argparse.Namespace, obj: Any) -> None:
    """`--feet` kept as the armature's feet (its Stride Rig settings), as choosing them in the
    sidebar does; the armature's own stay when it is not given."""
    feet = feet_names(getattr(args, "feet", None))
    if feet is None:
        return
    for name in feet:
        if name not in obj.data.bones:
            raise jobs.JobError(f"--feet: armature {obj.name!r} has no bone {name!r}")
    obj.stride.left_foot, obj.stride.right_foot = feet


def _with_feet(args: argparse.Namespace, clip: Clip) -> Clip:
    """A BVH take's clip with its body map on `--feet` when given."""
    from .core import body

    feet = feet_names(getattr(args, "feet", None))
    if feet is None:
        return clip
    for name in feet:
        if name not in clip.names:
            raise jobs.JobError(f"--feet: {clip.name!r} has no joint {name!r}")
    return body.with_feet(clip, {"L": feet[0], "R": feet[1]})



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
    settings = dataset.Settings(args.window, args.sigma, jobs.foot_speed(args.speed_mps),
                                feet_names(args.feet))
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


def _write_clip(clip: Clip, source: Path, out: str, name: str,
                then: Callable[[Any, Any, bridge.Timing], None] | None = None) -> None:
    """A baked clip as BVH, or as a new action on `source`'s armature in a .blend (`then(armature,
    action, timing)` called before it is saved)."""
    if out.lower().endswith(".bvh"):
        bvh.save(clip, out)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
        scene = bpy.context.scene
        if scene is not None:
            scene.render.fps, scene.render.fps_base = round(clip.fps), 1.0
        obj, _ = importer.import_bvh(bpy.context, source)
        timing = bridge.Timing(1.0, clip.fps)
        action = jobs.write_result(obj, clip, name, timing)
        if then is not None:
            then(obj, action, timing)
        jobs.save_blend(out)
    print(f"stride: wrote {out}: {clip.n_frames} frames at {clip.fps:g} fps")


def _transition(args: argparse.Namespace) -> int:
    src, dst = _with_feet(args, bvh.load(args.a)), _with_feet(args, bvh.load(args.b))
    halflife = {} if args.halflife is None else {"halflife_mode": "FIXED", "halflife": args.halflife}
    options = options_from(TransitionOptions, args, **halflife)
    if args.target_time is None:  # --dst-at auto
        found = jobs.best_target_time(src, dst, options.source_time, face=CLI,
                                      itself=Path(args.a).resolve() == Path(args.b).resolve())
        options = dataclasses.replace(options, target_time=found)
        print(f"stride: --dst-at auto: {found:.3f} s")
    clip = jobs.transition_clip(src, dst, options=options, face=CLI)
    _write_clip(clip, Path(args.a), args.out, f"{src.name} > {dst.name} ({args.method})")
    return 0


def _sequence(args: argparse.Namespace) -> int:
    from .core import transition

    method = jobs.core_method(args.method, CLI)
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
        jobs.check_lengths(a, b, args.allow_mismatch, CLI)
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
    options = options_from(SyncOptions, args, **unit, **weight)
    to_blend = source.suffix.lower() == ".blend" and not args.out.lower().endswith(".bvh")
    rate = None
    if to_blend:  # keyed at the scene's whole frames, as the operator keys it
        bpy.ops.wm.open_mainfile(filepath=str(source))
        rate = bridge.scene_fps(bridge.current_scene())
    clip, used = jobs.sync_clip(a, b, options=options, timing_a=timing_a, timing_b=timing_b, curve=curve,
                                face=CLI, rate=rate)
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


def _gait_takes(args: argparse.Namespace, check: Callable[..., None]) -> tuple[list[Path], list[Clip]]:
    """The GAIT.bvh takes a subcommand was given (`check`: how many it needs, by name), read with
    the feet asked."""
    paths = [Path(p) for p in args.gaits]
    for path in paths:
        if path.suffix.lower() != ".bvh":
            raise jobs.JobError(f"{str(path)!r} is not a BVH take: give each gait as GAIT.bvh")
    check([p.stem for p in paths], face=CLI)
    return paths, [_with_feet(args, bvh.load(p)) for p in paths]


def _blend_space(args: argparse.Namespace) -> int:
    paths, clips = _gait_takes(args, jobs.check_count)
    keys = None
    if isinstance(args.speed, tuple):  # --speed T:M,...
        keys = (np.array([t for t, _ in args.speed]), np.array([v for _, v in args.speed]))
        options = options_from(BlendSpaceOptions, args, speed_mode="CURVE",
                               speed=BlendSpaceOptions.speed)
    else:
        options = options_from(BlendSpaceOptions, args, speed_mode="CONSTANT")
    loops = jobs.gait_loops(clips, allow=options.allow_mismatch, face=CLI)
    baked = jobs.blend_space_clip(loops, options=options, keys=keys, face=CLI)
    print(f"stride: gaits at {jobs.listed_speeds(baked.rows)} m/s")
    slowest = jobs.slowest_gait(baked.rows)

    def key_speed(obj: Any, action: Any, timing: bridge.Timing) -> None:
        jobs.key_speed(obj, action, baked.keys, timing)

    _write_clip(baked.clip, paths[slowest], args.out, jobs.result_name(baked.rows, options), key_speed)
    return 0


def _follow_path(args: argparse.Namespace) -> int:
    paths, clips = _gait_takes(args, jobs.check_any)
    options = options_from(FollowPathOptions, args)
    loops = jobs.gait_loops(clips, allow=options.allow_mismatch, face=CLI)
    idle = _with_feet(args, bvh.load(options.idle_action)) if options.idle_action else None
    floor = jobs.start_floor(clips[0])
    rows = jobs.gait_rows(loops)
    listed = jobs.listed_speeds(rows)
    if args.path:
        given = jobs.read_path_csv(args.path)
        along = Path(args.path).name
        if given.times is not None:  # a target in time: its times set the speed
            if args.speed is not None:
                raise jobs.JobError(f"--speed: {along} is a timed target (rows t,x,y), whose times set the "
                                    "speed; leave --speed out, or give rows x,y")
            print(f"stride: gaits at {listed} m/s; following {along} in time")
            track = jobs.Track(given.times, floor.place(given.xy))
            clip = jobs.target_clip(loops, track, options=options, idle=idle)
            _write_clip(clip, paths[0], args.out, jobs.walked_name([c.name for c in clips], along))
            return 0
        xy = given.xy
    elif args.circle is not None:
        xy, along = jobs.circle_xy(args.circle), f"a circle of {args.circle:g} m"
    else:
        xy, along = jobs.line_xy(args.line), f"a {args.line:g} m line"
    speed = jobs.constant_speed(options, [r.speed for r in rows], CLI)
    print(f"stride: gaits at {listed} m/s; {speed:.2f} m/s along {along}")
    clip = jobs.follow_clip(loops, floor.place(xy), speed, options=options, idle=idle)
    _write_clip(clip, paths[0], args.out, jobs.walked_name([c.name for c in clips], along))
    return 0


# What each subcommand runs (arguments.build_parser declares its flags).
COMMANDS = {"import": _import, "events": _events, "export-dataset": _export_dataset,
            "transition": _transition, "sync-blend": _sync_blend, "sequence": _sequence,
            "lock-feet": _lock_feet, "inspect": _inspect, "nla": _nla, "export": _export,
            "export-engine": _export_engine, "blend-space": _blend_space, "follow-path": _follow_path}
