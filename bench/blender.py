"""Stride inside Blender against Blender's own ways, side by side in one run.

    python build.py bench blender [--blender 4.5]

- write: `clip_to_action` (bulk foreach_set) vs a `keyframe_insert` loop, 31 joints x 1000 frames
- read: `action_to_clip` (bulk foreach_get) vs stepping `scene.frame_set` and reading the pose
- import: `stride.import_bvh` vs `bpy.ops.import_anim.bvh` on a 10,000-frame, 31-joint file

Runs itself inside a `bpy` wheel's Python with the built extension installed (as the tests do).
"""
# mypy: disable-error-code="attr-defined,union-attr,assignment"
# (bpy.ops.stride exists once the extension is installed; context members are never None here)

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from _bench import ROOT, machine, median_seconds, turns

import build

TARGETS = {"write": 50.0, "read": 20.0, "import": 10.0}


def blender_handles(stride, obj) -> int:
    """How many of `obj`'s action curves were checked to be BEZIER keys whose handles
    `fcurve.update()` leaves as they are (every 8th curve); 0 if any is not."""
    import numpy as np

    action = obj.animation_data.action
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))[::8]
    for fc in curves:
        kp = fc.keyframe_points
        modes = np.empty(len(kp), dtype=np.int32)
        kp.foreach_get("interpolation", modes)
        handles = []
        for _ in range(2):
            both = np.empty((2, 2 * len(kp)), dtype=np.float32)
            kp.foreach_get("handle_left", both[0])
            kp.foreach_get("handle_right", both[1])
            handles.append(both)
            fc.update()
        bezier = (modes == stride.compat.INTERPOLATION["BEZIER"]).all()
        if not bezier or not np.array_equal(handles[0], handles[1]):
            print(f"import keys: INVALID on {fc.data_path}[{fc.array_index}] (not BEZIER, or handles "
                  "fcurve.update() changes): the import row cannot pass")
            return 0
    print(f"import keys: BEZIER with Blender's own handles (fcurve.update() changes none; "
          f"{len(curves)} curves checked)")
    return len(curves)


def inside_blender() -> int:
    stride = build.install_extension()
    scratch = os.environ["BLENDER_USER_RESOURCES"]  # the throwaway folder, gone at exit
    import bpy
    import numpy as np

    from core import bvh

    source = ROOT / "tests" / "data" / "cmu" / "subject02" / "02_01.bvh"
    walk = bvh.load(source)
    rows = []

    # -- write and read: one skeleton, 1000 frames -------------------------------------------------
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 120
    bpy.ops.stride.import_bvh(filepath=str(source))
    obj = bpy.context.active_object
    reps = -(-1000 // walk.n_frames)
    clip = walk.replace(rotations=np.tile(walk.rotations, (reps, 1, 1))[:1000],
                        positions=np.tile(walk.positions, (reps, 1, 1))[:1000])
    n_keys = 0
    action = None

    def stride_write():
        nonlocal action, n_keys
        action = stride.bridge.clip_to_action(clip, obj, "bench write", frame_start=1)
        n_keys = sum(len(fc.keyframe_points)
                     for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, obj)))

    t_write = median_seconds(stride_write, 3)
    stride.compat.assign(obj, action)
    # The same pose values, keyed one by one as a script without Stride would.
    pose = stride.core.armature.local_to_pose(
        stride.bridge.rest_pose(obj, clip.names)[0], clip.rotations, stride.core.armature.axis_conversion())
    loose, _ = stride.compat.new_action("bench keyframe_insert", obj)
    stride.compat.assign(obj, loose)
    bones = [obj.pose.bones[n] for n in clip.names]
    t0 = time.perf_counter()
    for f in range(clip.n_frames):
        for j, pb in enumerate(bones):
            pb.rotation_quaternion = pose[f, j].tolist()
            pb.keyframe_insert("rotation_quaternion", frame=1 + f)
        bones[0].keyframe_insert("location", frame=1 + f)
    t_insert = time.perf_counter() - t0
    rows.append(("write 31 joints x 1000 frames", f"{n_keys} keys", t_write, t_insert, TARGETS["write"]))

    stride.compat.assign(obj, action)
    t_read = median_seconds(lambda: stride.bridge.action_to_clip(obj), 3)

    def step_frames():
        # The same output as action_to_clip: every bone's rotation and location at every frame.
        rot = np.empty((clip.n_frames, len(bones), 4))
        loc = np.empty((clip.n_frames, len(bones), 3))
        for f in range(clip.n_frames):
            scene.frame_set(1 + f)
            for j, pb in enumerate(bones):
                rot[f, j] = pb.rotation_quaternion
                loc[f, j] = pb.location
        return rot, loc

    t_step = median_seconds(step_frames, 1)
    rows.append(("read 31 joints x 1000 frames", "frame_set + rot, loc", t_read, t_step, TARGETS["read"]))

    # -- import: 10,000 frames ---------------------------------------------------------------------
    big = Path(scratch) / "walk_10k.bvh"
    reps = -(-10000 // walk.n_frames)
    bvh.save(walk.replace(rotations=np.tile(walk.rotations, (reps, 1, 1))[:10000],
                          positions=np.tile(walk.positions, (reps, 1, 1))[:10000]), big)

    def fresh():
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.context.scene.render.fps = 120

    def stride_import():
        bpy.ops.stride.import_bvh(filepath=str(big))

    def blender_import():
        bpy.ops.import_anim.bvh(filepath=str(big), rotate_mode="QUATERNION")

    # Each import into an empty scene; emptying it (freeing the last import) is not the import.
    t_stride_import, t_blender_import = np.median(turns([stride_import, blender_import], 5, setup=fresh),
                                                  axis=0)
    # The ratio counts only with valid keys: BEZIER, with the handles Blender itself computes.
    fresh()
    stride_import()
    handles_checked = blender_handles(stride, bpy.context.active_object)
    rows.append(("import 10,000 frames x 31 joints", f"{big.stat().st_size / 1e6:.1f} MB BVH",
                 t_stride_import, t_blender_import, TARGETS["import"] if handles_checked else float("inf")))

    print(f"Blender {bpy.app.version_string}, {machine()}")
    header = f"{'operation':<34} {'size':<18} {'Stride s':>9} {'Blender s':>10} {'ratio':>8} {'target':>7}"
    print(header)
    print("-" * len(header))
    results: list[dict[str, float | str]] = []
    ok = True
    for op, size, ours, theirs, target in rows:
        ratio = theirs / ours
        status = "PASS" if ratio >= target else "MISS"
        print(f"{op:<34} {size:<18} {ours:>9.3f} {theirs:>10.3f} {ratio:>7.1f}x {target:>5.0f}x  {status}")
        results.append({"operation": op, "stride_s": ours, "blender_s": theirs, "ratio": ratio,
                        "target": target})
        ok = ok and ratio >= target
    print("baselines: keyframe_insert per bone per frame; scene.frame_set per frame; "
          "bpy.ops.import_anim.bvh (QUATERNION)")
    print(json.dumps(results), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    import importlib.util

    # Only look for bpy: importing it here would read the user's config before the temp dir is set.
    if importlib.util.find_spec("bpy") is None:
        sys.exit(build.rerun_in_blender(Path(__file__), sys.argv[1:], __doc__))
    sys.exit(inside_blender())
