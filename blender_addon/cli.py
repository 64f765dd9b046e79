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
    imp = sub.add_parser(
        "import", help="import BVH files into a .blend (one armature per file)",
        description="Import BVH files (or folders of them) with Stride's importer and save a .blend. "
                    "A bad file is reported and skipped; the exit code is 1 if any failed.")
    imp.add_argument("files", nargs="+", help="BVH files or folders")
    imp.add_argument("--out", required=True, help=".blend file to write")
    imp.add_argument("--into", help="add to this .blend instead of an empty scene")
    imp.add_argument("--single-armature", action="store_true",
                     help="one armature with one action per file (skeletons must match)")
    imp.add_argument("--axis-forward", default="-Z", choices=["X", "Y", "Z", "-X", "-Y", "-Z"])
    imp.add_argument("--axis-up", default="Y", choices=["X", "Y", "Z", "-X", "-Y", "-Z"])
    imp.add_argument("--scale", type=float, default=1.0, help="global scale (default 1)")
    imp.add_argument("--scale-preset", default="NONE", choices=["NONE", "CMU_TO_METERS", "CM_TO_METERS"])
    imp.add_argument("--rotate-mode", default="QUATERNION",
                     choices=["QUATERNION", "NATIVE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
    imp.add_argument("--frame-start", type=int, default=1)
    imp.add_argument("--fps-scale", action="store_true", help="key at the scene's frame rate")
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
        if args.command == "import":
            return _import(args)
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


def _import(args: argparse.Namespace) -> int:
    if args.into:
        bpy.ops.wm.open_mainfile(filepath=args.into)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
    context = bpy.context
    done, failed = jobs.import_files(
        context, args.files, single_armature=args.single_armature, axis_forward=args.axis_forward,
        axis_up=args.axis_up, global_scale=args.scale, scale_preset=args.scale_preset,
        rotate_mode=args.rotate_mode, frame_start=args.frame_start, use_fps_scale=args.fps_scale)
    for message in failed:
        print(f"stride import: error: {message}", file=sys.stderr)
    if done:
        jobs.save_blend(args.out)
        for obj, action in done:
            print(f"stride: imported {action.name!r} on armature {obj.name!r}")
        print(f"stride: wrote {args.out}")
    return 1 if failed else 0
