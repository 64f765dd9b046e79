"""Helpers for the Blender tests (imported by them; fixtures live in conftest.py)."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools

import bpy
import numpy as np
from fixtures import cmu_path


def blender_import(path, undo=False, **options):
    """Import with Blender's own BVH importer; returns the new armature object.

    `undo`: run it as an undoable step. The bpy module's undo stack starts empty, and `ed.undo`
    only polls after an `undo_push` followed by an operator run with undo on.
    """
    before = set(bpy.data.objects)
    if undo:
        bpy.ops.ed.undo_push(message="before import")
    args = ("EXEC_DEFAULT", True) if undo else ()
    result = bpy.ops.import_anim.bvh(*args, filepath=str(path), **options)
    assert result == {"FINISHED"}, result
    (obj,) = set(bpy.data.objects) - before
    return obj


def steps_of(action) -> list[tuple[int, str]]:
    """(frame, name) of the action's footstep markers, in time order."""
    return sorted((m.frame, m.name) for m in action.pose_markers if m.name.startswith("FootDown"))


def walk_and_run(scene, stride):
    """CMU 02_01 (a walk) and 02_03 (a run) imported onto one armature at 120 fps, made active
    with no action of its own, for NLA tracks to play them."""
    scene.render.fps = 120
    stride.jobs.import_files(bpy.context, [cmu_path("02_01"), cmu_path("02_03")], single_armature=True)
    obj = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = obj
    obj.animation_data.action = None
    return obj


def cmu_gaits(stride, options=None):
    """CMU 02_01 (a walk) and 02_03 (a jog) imported onto one armature (`options`: ImportOptions),
    each added as a gait while it is the armature's active action (Add Gait)."""
    names = ("02_01", "02_03")
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path(n) for n in names], options=options,
                                            single_armature=True)
    assert not failed
    obj = done[0][0]
    bpy.context.view_layer.objects.active = obj
    for name in names:
        stride.compat.assign(obj, bpy.data.actions[name])
        assert bpy.ops.stride.gait_add() == {"FINISHED"}
    return obj


def speeds_per_cycle(floor, speed, lefts, fps, unit=1.0):
    """[cycles, 2] m/s per cycle, from each left touchdown to the next (`lefts`: indices into the
    arrays): the travel over the floor of `floor` [n, k] (positions, `unit` meters each) over the
    cycle's time, and `speed` [n] (m/s) averaged over the same span."""
    out = []
    for i, j in itertools.pairwise(lefts):
        travel = np.linalg.norm(floor[j] - floor[i]) * unit
        mean = (speed[i:j].sum() + speed[i + 1:j + 1].sum()) / 2 / (j - i)  # trapezoids over the span
        out.append((travel * fps / (j - i), mean))
    return np.array(out)
