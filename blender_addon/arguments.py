"""The `stride` command's arguments: its subcommands and their flags (no bpy here; cli.py runs them).

Every flag that sets an option is its options field (options.py): `add_options` gives a subcommand
the flag of each field of its options class, with the field's default, type, choices and help; a
field added there is a flag here. Flags several subcommands share that are no option (`--feet`,
`--armature`, ...) are declared once, as argparse parents (`shared`).

A new subcommand: its parser in `build_parser`, what it does in cli.py (`COMMANDS`).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
from typing import Any

from .errors import JobError
from .options import (
    AUTO,
    BlendSpaceOptions,
    DatasetOptions,
    EngineExportOptions,
    EventOptions,
    ExportOptions,
    FindFeetOptions,
    FollowPathOptions,
    FootstepOptions,
    ImportOptions,
    LockFeetOptions,
    NlaBakeOptions,
    SyncOptions,
    TransitionOptions,
    field_of,
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


def _speed_or_keys(text: str) -> float | tuple[tuple[float, float], ...]:
    """`--speed M | T:M,T:M,...`: one speed in m/s, or keys (seconds, m/s) at increasing times."""
    try:
        if ":" not in text:
            value = float(text)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError
            return value
        keys = tuple((float(t), float(v)) for t, v in (key.split(":") for key in text.split(",")))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a speed in m/s or SECONDS:SPEED keys, e.g. 1.5 or "
                                         f"0:1.2,8:4, not {text!r}") from None
    times = [t for t, _ in keys]
    good = all(math.isfinite(t) and math.isfinite(v) and v >= 0.0 for t, v in keys)
    if not good or any(b <= a for a, b in itertools.pairwise(times)):
        raise argparse.ArgumentTypeError(f"speed keys need increasing times and speeds of 0 or more, not "
                                         f"{text!r}")
    return keys


# A field's `syntax` (options.opt): how its flag reads a value other than by the field's type, and
# the value as the help names it.
SYNTAX: dict[str, tuple[Any, str | None]] = {
    "auto_speed": (_foot_speed, "auto|M"),  # Foot Speed: auto or m/s
    "auto_seconds": (_seconds_or_auto, "SECONDS|auto"),  # a time, or auto to find one
    "lower": (str.lower, None),  # choices in lower case (--method dead)
    "upper": (str.upper, None),  # choices in any case, read as declared (--source keys)
    "speed_keys": (_speed_or_keys, "M|T:M,..."),  # a speed, or keys SECONDS:SPEED (a blend space's)
}


def add_flag(parser: Any, cls: type, name: str, *, required: bool = False, unset: bool = False,
             also: str = "", **extra: Any) -> None:
    """The CLI flag of options field `cls.name`: its flag, default, type, choices, metavar and help
    from the declaration. `required`: no default. `unset`: None by default, where leaving the flag
    out means something the subcommand decides (--halflife: per joint). `also`: said after the
    help. `extra`: argparse's own (the namespace's name for it)."""
    f = field_of(cls, name)
    meta = f.metadata
    value = f.default
    kind: dict[str, Any]
    if isinstance(value, bool):
        kind = {"action": argparse.BooleanOptionalAction if value else "store_true"}
    elif isinstance(value, tuple):
        kind = {"type": _frames, "metavar": "FIRST,LAST"}
    else:
        kind = {"type": type(value)}
    choices = [c[0] for c in meta["choices"]]
    if meta["syntax"]:
        kind["type"], metavar = SYNTAX[meta["syntax"]]
        kind.update({"metavar": metavar} if metavar else {})
    if meta["syntax"] == "lower":
        choices, value = [c.lower() for c in choices], value.lower()
    kind.update({"choices": choices} if choices else {})
    kind.update({"metavar": meta["metavar"]} if meta["metavar"] else {})
    shown = f" (default {value:g})" if isinstance(value, float) and not (required or unset) else ""
    given = {"required": True} if required else {"default": None if unset else value}
    parser.add_argument(meta["flag"], **{"dest": name, **kind, **extra, **given},
                        help=help_of(cls, name) + shown + also)


def add_options(parser: argparse.ArgumentParser, *classes: type, skip: tuple[str, ...] = (),
                only: tuple[str, ...] | None = None) -> None:
    """The flags of every field with one of options `classes` (`only` those, not those in `skip`),
    each once: a flag the subcommand already has (its own way, or an earlier class's) stays."""
    for cls in classes:
        for f in dataclasses.fields(cls):
            wanted = f.name not in skip and (only is None or f.name in only)
            if f.metadata["flag"] and wanted and f.metadata["flag"] not in parser._option_string_actions:
                add_flag(parser, cls, f.name)


def shared() -> dict[str, argparse.ArgumentParser]:
    """The arguments several subcommands share that set no option, each declared once, as argparse
    parents: the feet, the armature and action in a .blend, the .blend to open, the file written."""
    def parent(*names: str, **kwargs: Any) -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(add_help=False)
        p.add_argument(*names, **kwargs)
        return p

    return {
        "feet": parent("--feet", metavar="LEFT,RIGHT", help=FEET_HELP),
        "armature": parent("--armature", help="armature object name (default: active or only armature)"),
        "action": parent("--action", help="action name (default: the armature's active action)"),
        "blend": parent("blend_file", nargs="?", metavar="blend",
                        help=".blend file to open first (default: the open file)"),
        "bake_out": parent("--out", required=True, help="OUT.bvh or OUT.blend"),
        "blend_out": parent("--out", required=True, help=".blend file to write"),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blender -b --command stride",
        description="Stride motion-capture tools in batch.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    p = shared()
    imp = sub.add_parser(
        "import", parents=[p["blend_out"]], help="import BVH files into a .blend (one armature per file)",
        description="Import BVH files (or folders of them) with Stride's importer and save a .blend. "
                    "A bad file is reported and skipped; the exit code is 1 if any failed.")
    imp.add_argument("files", nargs="+", help="BVH files or folders")
    imp.add_argument("--into", help="add to this .blend instead of an empty scene")
    imp.add_argument("--single-armature", action="store_true",
                     help="one armature with one action per file (skeletons must match)")
    add_options(imp, ImportOptions)
    ev = sub.add_parser(
        "events", parents=[p["blend_out"], p["feet"]],
        help="footstep markers and event curves for a BVH or .blend",
        description="Detect footsteps and write event-encoding, phase, contact and tag curves on every "
                    "armature's active action; save a .blend. A .bvh is imported with Stride first.")
    ev.add_argument("input", help="IN.bvh or IN.blend")
    add_options(ev, EventOptions, FootstepOptions)
    ds = sub.add_parser(
        "export-dataset", help="training data: one .npz per BVH clip (see docs/api.md for the schema)",
        description="Export BVH files or folders to one .npz per clip (rotations, world positions, "
                    "contacts, phase, event encodings). Resumable; a bad file is reported and skipped.")
    ds.add_argument("inputs", nargs="+", help="BVH files or folders (searched recursively)")
    ds.add_argument("--out", required=True, help="output folder")
    add_options(ds, DatasetOptions)  # dataset.Settings checks them too
    sb = sub.add_parser(
        "sync-blend", parents=[p["bake_out"], p["feet"]],
        help="blend a walk and a run cycle in phase: --weight, --ramp or --speed",
        description="Cycles of A and B (from their footsteps, or --frames-a/--frames-b) blended in "
                    "phase for --seconds or --cycles. Inputs are BVH files or .blend files (the active "
                    "action of their armature); frames count from 1 for a BVH file.")
    sb.add_argument("a", help="A.bvh or A.blend (weight 0)")
    sb.add_argument("b", help="B.bvh or B.blend (weight 1)")
    # One weight, a ramp of them, or the one that travels at a speed; a length in seconds or cycles
    # (Duration and its Unit in one flag).
    weight = sb.add_mutually_exclusive_group(required=True)
    add_flag(weight, SyncOptions, "weight", unset=True, also=", constant")
    weight.add_argument("--ramp", help="weight keys SECONDS:WEIGHT,..., e.g. 0:0,4:1")
    add_flag(weight, SyncOptions, "speed_mps", unset=True, dest="speed")
    length = sb.add_mutually_exclusive_group(required=True)
    length.add_argument("--seconds", type=float, help="duration of the result (s)")
    length.add_argument("--cycles", type=float, help="duration in blended cycles (with --weight or --speed)")
    add_options(sb, SyncOptions)
    bs = sub.add_parser(
        "blend-space", parents=[p["bake_out"], p["feet"]],
        help="blend gaits (a walk, a run, ...) by speed, in step: --speed M or keys T:M,...",
        description="Blend BVH takes of one skeleton, one gait each (a walk, a jog, a run, ...), by the "
                    "speed the character travels at, in step: at each moment the two gaits whose speeds "
                    "bracket the target, their feet planting together. Writes a BVH, or a .blend with the "
                    "slowest take's armature and the baked action (footstep markers on it).")
    bs.add_argument("gaits", nargs="+", metavar="GAIT", help="GAIT.bvh takes or loops, two or more")
    add_flag(bs, BlendSpaceOptions, "speed", required=True,
             also="; or keys SECONDS:SPEED,... e.g. 0:1.2,8:4 (linear between them, held past the last)")
    add_flag(bs, BlendSpaceOptions, "duration", required=True, metavar="S")
    add_options(bs, BlendSpaceOptions, skip=("source",))  # BVH files, never an action: no read source
    fp = sub.add_parser(
        "follow-path", parents=[p["bake_out"], p["feet"]],
        help="walk gaits along a path at a speed, feet planted: --path PATH.csv, --circle R or --line L",
        description="Walk BVH takes of one skeleton, one gait each (a walk, a run, ...), along a path on "
                    "the floor at the speed asked, the gaits chosen and blended by speed, the feet planted "
                    "through the turns. The path starts where the first take starts, x ahead of it (the "
                    "way it faces) and y to its left, in meters. Writes a BVH, or a .blend with the first "
                    "take's armature and the baked action (footstep markers on it).")
    fp.add_argument("gaits", nargs="+", metavar="GAIT", help="GAIT.bvh takes or loops, one or more")
    way = fp.add_mutually_exclusive_group(required=True)
    way.add_argument("--path", metavar="PATH.csv",
                     help="rows x,y: meters on the floor (x along the first gait's facing, y to its left, "
                          "0,0 where it starts); or rows t,x,y: a target to follow in time (seconds), then "
                          "no --speed")
    way.add_argument("--circle", type=float, metavar="R",
                     help="a circle of radius R meters, turning left (counter-clockwise seen from above) "
                          "from the start, once round")
    way.add_argument("--line", type=float, metavar="L", help="L meters straight ahead")
    add_flag(fp, FollowPathOptions, "speed", unset=True, metavar="M", also=" (default: auto)")
    add_options(fp, FollowPathOptions, skip=("source",))  # BVH files, never an action: no read source
    tr = sub.add_parser(
        "transition", parents=[p["bake_out"], p["feet"]],
        help="bake a transition from one BVH take into another",
        description="Play A until --at seconds, then transition into B from --dst-at seconds until "
                    "--dst-end (B's end by default). Writes a BVH, or a .blend with A's armature and the "
                    "baked action.")
    tr.add_argument("a", help="source BVH")
    tr.add_argument("b", help="destination BVH (same skeleton)")
    add_flag(tr, TransitionOptions, "source_time", required=True)
    add_flag(tr, TransitionOptions, "halflife", unset=True, also=" (default: auto)")
    add_options(tr, TransitionOptions, skip=("source",))  # BVH files, never an action: no read source
    sq = sub.add_parser(
        "sequence", parents=[p["bake_out"], p["feet"]],
        help="chain BVH takes with transitions: A@0:2 B@0.5:3 ...",
        description="Each item is FILE@START:END (seconds in that file). Each take plays until its END, "
                    "then transitions into the next at its START.")
    sq.add_argument("items", nargs="+", help="FILE@START:END")
    add_options(sq, TransitionOptions, only=("blend_time", "method", "lock_feet", "allow_mismatch"))
    ins = sub.add_parser(
        "inspect", parents=[p["armature"], p["action"]],
        help="print what Stride reads from a skeleton: legs, feet, up, facing, unit",
        description="Print the body map of a BVH file, or of an armature's action (--armature, in the "
                    "open or given .blend): legs and feet by name with their evidence (names, motion, "
                    "user), root, static joints, up, facing, unit, fps, motion start.")
    ins.add_argument("input", nargs="?", help="IN.bvh, or IN.blend to open (default: the open file)")
    ins.add_argument("--feet", metavar="LEFT,RIGHT", help="the two ankle joints, to see the map around them")
    add_options(ins, FindFeetOptions)
    lf = sub.add_parser(
        "lock-feet", parents=[p["bake_out"], p["feet"]],
        help="hold planted feet where they land (a BVH take, or an armature's action)",
        description="Lock the planted feet of a BVH take, or of an armature's action in a .blend "
                    "(its stride_contact curves when it has them, else detected contacts), and write "
                    "the result as a BVH or as a new action in a .blend.")
    lf.add_argument("input", help="IN.bvh or IN.blend")
    lf.add_argument("--armature", help="armature object in a .blend (default: active or only armature)")
    lf.add_argument("--action", help="action name in a .blend (default: the armature's active action)")
    add_options(lf, LockFeetOptions)
    nl = sub.add_parser(
        "nla", parents=[p["blend"], p["armature"]],
        help="bake what an armature's NLA plays into one action (a .blend)",
        description="Bake what the NLA plays on an armature's tracks (--tracks, default every unmuted "
                    "track) into one new action, with transitions where one strip takes over from "
                    "another, and save the .blend (or write the action as a BVH). What a bake cannot "
                    "reproduce is refused, naming the track, strip and setting.")
    add_options(nl, NlaBakeOptions)
    nl.add_argument("--out", required=True, help="OUT.blend or OUT.bvh")
    export = sub.add_parser("export", parents=[p["blend"], p["armature"], p["action"]],
                            help="write an armature's action as a BVH file",
                            description="Write an armature's action as a BVH file.")
    add_options(export, ExportOptions)
    export.add_argument("--out", required=True, help="BVH file to write")
    ee = sub.add_parser(
        "export-engine", parents=[p["armature"], p["feet"]],
        help="an armature's actions as FBX or glTF for a game engine, events beside them",
        description="Write an armature and its actions through Blender's FBX or glTF exporter for a game "
                    "engine (a root bone carrying the travel: actions without one get Add Root Motion "
                    "first), and FILE.events.json beside the file: each action's markers and Stride's "
                    "curves. The input is a .blend (its --armature), or BVH takes: imported onto one "
                    "armature, their footsteps marked and event curves written, each take exported.")
    ee.add_argument("inputs", nargs="*", metavar="IN",
                    help="IN.blend, or BVH takes of one skeleton (default: the open file)")
    add_flag(ee, EngineExportOptions, "file_format", required=True)
    add_options(ee, EngineExportOptions)
    ee.add_argument("--out", required=True, help="FILE.fbx or FILE.glb (FILE.events.json is written beside)")
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
    """`cls` from the parsed flags that name its fields (a choice read in lower case as declared),
    the rest at their defaults."""
    given = {}
    for f in dataclasses.fields(cls):
        value = getattr(args, f.name, None)
        if value is not None and f.metadata["syntax"] == "lower":
            value = next(c[0] for c in f.metadata["choices"] if c[0].lower() == value)
        if value is not None:
            given[f.name] = value
    return cls(**{**given, **overrides})
