"""The evaluated read (issue 23) on takes from other sources and in other conventions: what
Blender plays of a plain import is its keys, so reading it evaluated must give the keys' clip
and the same footsteps, whatever the source's layout, the import's axes, scale or rotation mode."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

from typing import Any

import bpy
import numpy as np
import pytest
import rigs
from blender_fixtures import blender_import, steps_of
from fixtures import bandai_path, cmu_path

CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    # Bandai: Y up, centimetres, its own joint names and rest pose.
    "bandai walk": (lambda: bandai_path("dataset-1_walk_normal_001"), {}),
    # The same take imported Z up, Y forward and scaled to metres.
    "bandai walk, Z up, 0.01": (lambda: bandai_path("dataset-1_walk_normal_001"),
                                {"axis_forward": "Y", "axis_up": "Z", "global_scale": 0.01}),
    # CMU on Euler bones (the importer's native rotation mode).
    "cmu 09_12, euler": (lambda: cmu_path("09_12"), {"rotate_mode": "NATIVE"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_evaluated_read_of_a_plain_import_is_its_keys(case, scene, stride):
    path, options = CASES[case]
    obj = blender_import(path(), **options)
    scene.render.fps = 120 if case.startswith("cmu") else 30
    keys, timing_k = stride.bridge.read_action(obj, source="KEYS")
    played, timing_e = stride.bridge.read_action(obj, source="EVALUATED")
    assert played.names == keys.names and np.array_equal(played.parents, keys.parents)
    assert played.n_frames == keys.n_frames
    np.testing.assert_allclose(timing_e.frame(played.times), timing_k.frame(keys.times), atol=1e-6)
    _, pos_k = keys.fk()
    _, pos_e = played.fk()
    # float32 matrices read back: well within a thousandth of a percent of the skeleton's height.
    assert np.abs(pos_k - pos_e).max() < 1e-5 * keys.height

    action = obj.animation_data.action
    assert bpy.ops.stride.detect_footsteps(source="KEYS") == {"FINISHED"}
    by_keys = steps_of(action)
    assert bpy.ops.stride.detect_footsteps(source="EVALUATED") == {"FINISHED"}
    by_play = steps_of(action)
    assert by_keys == by_play
    for side in "LR":  # a walk: steps on both feet
        assert sum(name == f"FootDown_{side}" for _, name in by_keys) >= 2, by_keys


def test_find_feet_on_an_ik_rig_reads_what_it_plays(stride, rig_folder):
    """The small IK rig's deform bones carry no keys of their own (the controllers do): Find Feet
    reads what the rig plays and picks the deform ankles, never the controllers; the Rig panel's
    body map, which reads keys, says so and names Find Feet."""
    obj = rigs.open_rig("small_ik", rig_folder)
    lines = [text for text, _ in stride.rig.body_lines(obj)]
    assert any(t.startswith("Read from keys, but constraints or drivers move") and
               t.endswith("Find Feet reads what the rig plays") for t in lines), lines
    assert bpy.ops.stride.find_feet() == {"FINISHED"}  # AUTO: what the rig plays
    assert (obj.stride.left_foot, obj.stride.right_foot) == ("foot.L", "foot.R")
    clip, _ = stride.bridge.read_action(obj, source="EVALUATED")
    legs = clip.body.legs
    assert [clip.names[j] for j in legs["L"]][-3:] == ["shin.L", "foot.L", "toe.L"]
    assert not any("_ik" in clip.names[j] for side in "LR" for j in legs[side])
