"""Lock Feet in Blender: the operator and `stride lock-feet` on a take whose feet slide (its root
travel sped up 15 %), against the contacts of the original take: each planted foot's slowest
point stays within a centimetre over each contact."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
from fixtures import cmu_path

from core import bvh, contacts, root
from core.clip import Clip


def sliding(clip: Clip) -> Clip:
    """The take with its root travel over the floor 15 % faster: the feet slide."""
    traj, res = root.decompose(clip)
    start = traj.position[:1]
    faster = root.Trajectory(start + (traj.position - start) * 1.15, traj.heading)
    return root.recompose(clip, faster, res)


def worst_slip_cm(clip: Clip, planted: dict[str, np.ndarray]) -> float:
    """Largest drift (cm, on the floor) of a foot's slowest point over one of its contacts, from
    the frame the lock is full (0.1 s after the touchdown: issue 36's locks ease in over the
    landing, and its slip is measured from there)."""
    world = clip.fk()[1]
    ends = clip.end_site_positions(*clip.fk())
    worst = 0.0
    up = clip.up
    for side, mask in planted.items():
        joints = clip.body.feet[side]
        sites = [int(e) for e in np.flatnonzero(np.isin(clip.end_parents, joints))]
        p = np.concatenate([world[:, joints], ends[:, sites]], axis=1)
        p = p - np.outer(p.reshape(-1, 3) @ up, up).reshape(p.shape)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
        full = int(np.ceil(0.1 * clip.fps))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            a += full
            if b - a < 3:
                continue
            drift = np.linalg.norm(p[a:b] - p[a], axis=-1).max(axis=0)  # per point
            worst = max(worst, float(drift.min()) * clip.meters_per_unit * 100.0)
    return worst


def test_lock_feet_holds_sliding_feet_and_leaves_the_source(scene, stride, tmp_path):
    original = bvh.load(cmu_path("02_01"))[1:]
    planted = contacts.contacts(original)
    path = Path(tmp_path) / "sliding.bvh"
    bvh.save(sliding(original), path)
    bpy.ops.stride.import_bvh(filepath=str(path))
    obj = bpy.context.active_object
    before = obj.animation_data.action.name
    bpy.ops.ed.undo_push(message="before")
    # 15 % faster travel outruns the legs over a stance: the hips come down to keep the feet.
    assert bpy.ops.stride.lock_feet("EXEC_DEFAULT", True, lower_pelvis=True) == {"FINISHED"}
    locked = obj.animation_data.action
    assert locked.name != before and before in bpy.data.actions
    clip = stride.bridge.action_to_clip(obj, locked)
    read_back = Clip(clip.names, clip.parents, clip.offsets, clip.rotations, clip.positions, clip.fps,
                     end_parents=clip.end_parents, end_offsets=clip.end_offsets)
    assert worst_slip_cm(sliding(original), planted) > 3.0  # the input slides
    assert worst_slip_cm(read_back, planted) < 1.0
    name = locked.name
    bpy.ops.ed.undo()
    assert name not in bpy.data.actions and before in bpy.data.actions


def test_cli_lock_feet_writes_a_bvh_whose_feet_stay(scene, stride, tmp_path, capsys):
    original = bvh.load(cmu_path("02_01"))[1:]
    planted = contacts.contacts(original)
    path = Path(tmp_path) / "sliding.bvh"
    bvh.save(sliding(original), path)
    out = Path(tmp_path) / "locked.bvh"
    assert stride.cli.main(["lock-feet", str(path), "--lower-pelvis", "--out", str(out)]) == 0
    assert worst_slip_cm(bvh.load(out), planted) < 1.0
    assert "wrote" in capsys.readouterr().out


def test_bakes_lock_feet_by_default_and_find_picks_the_matching_target_time(scene, stride, tmp_path):
    from blender_fixtures import blender_import

    from core import transition

    for op in ("bake_transition", "bake_sync_blend", "bake_nla_track"):
        prop = getattr(bpy.ops.stride, op).get_rna_type().properties["lock_feet"]
        assert prop.default is True and prop.description
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION")
    bpy.context.view_layer.objects.active = walk
    settings = scene.stride
    settings.source_time, settings.target_action = 1.5, "02_03"
    assert bpy.ops.stride.find_target_time() == {"FINISHED"}
    want = transition.best_target_time(bvh.load(cmu_path("02_01")), 1.5, bvh.load(cmu_path("02_03")))
    assert abs(settings.target_time - want) < 1e-5


def test_cli_transition_finds_the_target_time_and_locks_feet_unless_told(scene, stride, tmp_path, capsys):
    from core import transition

    src, dst = bvh.load(cmu_path("02_01")), bvh.load(cmu_path("02_03"))
    at = transition.best_target_time(src, 1.5, dst)
    out = Path(tmp_path) / "auto.bvh"
    assert stride.cli.main(["transition", str(cmu_path("02_01")), str(cmu_path("02_03")), "--at", "1.5",
                            "--dst-at", "auto", "--no-lock-feet", "--out", str(out)]) == 0
    assert f"{at:.3f} s" in capsys.readouterr().out
    want = transition.dead_blend(src, dst, 1.5, at, 0.25)
    assert np.abs(bvh.load(out).fk()[1] - want.fk()[1]).max() <= 1e-9 * want.height
