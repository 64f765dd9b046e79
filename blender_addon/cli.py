"""The `stride` command: `blender -b [FILE.blend] --command stride SUBCOMMAND ...`.

`main(argv) -> int` is registered with `bpy.utils.register_cli_command`, and is callable from
Python with the `bpy` module. Exit codes: 0 done, 1 failed (one message on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import bpy

from . import jobs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blender -b --command stride",
        description="Stride motion-capture tools in batch.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    export = sub.add_parser("export", help="write an armature's action as a BVH file",
                            description="Write an armature's action as a BVH file.")
    export.add_argument("blend", nargs="?", help=".blend file to open first (default: the open file)")
    export.add_argument("--armature", help="armature object name (default: active or only armature)")
    export.add_argument("--action", help="action name (default: the armature's active action)")
    export.add_argument("--out", required=True, help="BVH file to write")
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # --help, or bad usage
        return int(exc.code or 0)
    try:
        if getattr(args, "blend", None):
            bpy.ops.wm.open_mainfile(filepath=args.blend)
        if args.command == "export":
            obj = jobs.find_armature(args.armature)
            clip = jobs.export_bvh(obj, args.action, args.out)
            print(f"stride: wrote {args.out}: {clip.n_joints} joints, {clip.n_frames} frames "
                  f"at {clip.fps:g} fps")
    except jobs.USER_ERRORS as exc:
        print(f"stride {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # bpy.ops failures (e.g. a .blend that cannot be opened)
        print(f"stride {args.command}: error: {exc}", file=sys.stderr)
        return 1
    return 0
