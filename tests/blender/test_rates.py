"""Rates stay exact: a scene at the fps_base Blender's importer leaves (0.999996 for a 120 fps file,
from its Frame Time's few digits) plays at the scene's whole rate, so transitions and sync blends
key whole frames at the source's rate and their BVH exports say 120 fps (they said 120.365, 138 of
a transition's keys off whole frames)."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import bpy
import numpy as np
import pytest
from blender_fixtures import blender_import
from fixtures import cmu_path

from core import bvh


def imported(scene):
    """CMU 02_01 (armature, active) and 02_03 by Blender's importer, which sets the scene's rate."""
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION", update_scene_fps=True)
    blender_import(cmu_path("02_03"), rotate_mode="QUATERNION", update_scene_fps=True)
    bpy.context.view_layer.objects.active = walk
    return walk


def key_frames(stride, obj, action) -> np.ndarray:
    curves = stride.compat.fcurves(action, stride.compat.action_slot(action, obj))
    return np.concatenate([stride.compat.read_keys(fc)[:, 0] for fc in curves
                           if fc.data_path.startswith("pose.bones")])


def frame_time(path) -> str:
    return next(line.split(":", 1)[1].strip() for line in open(path) if line.startswith("Frame Time"))


def test_the_importers_fps_base_is_the_scenes_whole_rate(scene, stride):
    imported(scene)
    assert scene.render.fps == 120 and scene.render.fps_base != 1.0
    assert abs(scene.render.fps_base - 1.0) < 1e-4
    assert stride.bridge.scene_fps() == 120.0
    # A rate a whole number over a base that means it (NTSC) stays itself.
    scene.render.fps, scene.render.fps_base = 30, 1.001
    assert stride.bridge.scene_fps() == pytest.approx(29.97, abs=1e-9)


@pytest.mark.parametrize("bake", ["transition", "sync blend"])
def test_bakes_key_whole_frames_at_the_sources_rate_and_export_at_it(bake, scene, stride, tmp_path):
    walk = imported(scene)
    if bake == "transition":
        assert bpy.ops.stride.bake_transition(source_action="02_01", source_time=1.6, target_action="02_03",
                                              target_time=0.3, blend_time=0.25) == {"FINISHED"}
        frames = 192 + 1 + (174 - 1 - 36)  # the walk to 1.6 s, then the run from 0.3 s to its end
    else:
        assert bpy.ops.stride.bake_sync_blend(action_a="02_01", action_b="02_03", weight=0.5,
                                              duration=2.0) == {"FINISHED"}
        frames = 241
    baked = walk.animation_data.action
    keys = key_frames(stride, walk, baked)
    np.testing.assert_array_equal(keys, np.rint(keys))  # float32 keys exactly on frames
    assert keys.min() == scene.frame_start and keys.max() == scene.frame_start + frames - 1
    clip = stride.bridge.action_to_clip(walk, baked)
    assert clip.fps == 120.0 and clip.n_frames == frames
    out = tmp_path / "baked.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out), action=baked.name) == {"FINISHED"}
    assert float(frame_time(out)) == pytest.approx(1 / 120, rel=1e-12)
    back = bvh.load(out)
    assert back.fps == 120.0 and back.n_frames == frames
