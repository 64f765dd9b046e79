"""The `stride` command's arguments: its subcommands and their flags (no bpy here; cli.py runs them).

Every flag that sets an option is made from its options field (options.py): flag, default, type,
choices and help.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from .errors import JobError
from .options import (
    AUTO,
    DatasetOptions,
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
    return parser


def feet_names(text: str | None) -> tuple[str, str] | None:
    """`--feet LEFT,RIGHT`: the two ankle names, None when not given."""
    if not text:
        return None
    left, sep, right = text.partition(",")
    if not (sep and left.strip() and right.strip()):
        raise JobError(f"--feet takes LEFT,RIGHT ankle names, not {text!r}")
    return left.strip(), right.strip()


def options_from(cls: type, args: argparse.Namespace, **overrides: Any) -> Any:
    """`cls` from the parsed flags that name its fields, the rest at their defaults."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in names and v is not None}
    return cls(**{**given, **overrides})
