"""Helpers for the Blender tests (imported by them; fixtures live in conftest.py)."""

from __future__ import annotations

import bpy


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
