"""The body map inside Blender: rigs that are not CMU, read from actions Blender's own BVH importer
made, on armature objects transformed as FBX imports leave them (rotated 90 degrees about X,
scale 0.01), and `stride inspect`."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import itertools
import math
from pathlib import Path

import bpy
import numpy as np
import pytest
import variants as V
from blender_fixtures import steps_of
from fixtures import cmu_path

from core import bvh, contacts

BANDAI = Path(__file__).resolve().parents[1] / "data" / "bandai"


def _rig(tmp_path: Path, clip, name: str):
    """`clip` written as BVH and imported by Blender's own importer, the object then rotated and
    scaled as Blender's FBX importer leaves a Mixamo character."""
    path = tmp_path / f"{name}.bvh"
    bvh.save(clip, path)
    assert bpy.ops.import_anim.bvh(filepath=str(path), update_scene_fps=True,
                                   update_scene_duration=True) == {"FINISHED"}
    obj = bpy.context.active_object
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    obj.scale = (0.01, 0.01, 0.01)
    return obj


@pytest.mark.parametrize("convention", ["mixamo", "unreal", "rigify", None])
def test_detect_footsteps_finds_the_legs_of_rigs_named_otherwise(convention, scene, stride, tmp_path):
    take = bvh.load(cmu_path("02_01"))
    legs = take.body.legs
    clip, _ = V.renamed(take, legs, convention)
    if convention is None:  # no names and no standing rest pose: the motion alone
        clip, _ = V.bones_along_x(clip)
    obj = _rig(tmp_path, clip, f"walk_{convention}")
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    marks = steps_of(obj.animation_data.action)
    # The take's own footsteps (feet fixed by name), at the scene's frames.
    want = contacts.footsteps(take, feet={"L": "LeftFoot", "R": "RightFoot"})
    frames = sorted([(round(t * 120) + 1, f"FootDown_{k[-1]}") for k, ts in want.items() for t in ts])
    assert [n for _, n in marks] == [n for _, n in frames]
    np.testing.assert_allclose([f for f, _ in marks], [f for f, _ in frames], atol=1.0)
    assert len(marks) >= 4 and all(a[1] != b[1] for a, b in itertools.pairwise(marks))


def test_inspect_prints_the_map_of_a_file_and_of_an_armature(scene, stride, tmp_path, capsys):
    path = BANDAI / "dataset-1_walk_normal_001.bvh"
    assert stride.cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "leg L: UpperLeg_L > LowerLeg_L > Foot_L > Toes_L" in out
    assert "legs from: names" in out and "static: joint_Root" in out and "unit 0.01 m" in out
    bpy.ops.stride.import_bvh(filepath=str(path))
    assert stride.cli.main(["inspect", "--armature", bpy.context.active_object.name]) == 0
    out = capsys.readouterr().out
    assert "leg R: UpperLeg_R > LowerLeg_R > Foot_R > Toes_R" in out
    assert stride.cli.main(["inspect", str(path), "--feet", "Hand_L,Hand_R"]) == 0
    assert "legs from: user" in capsys.readouterr().out
    assert stride.cli.main(["inspect", str(path), "--feet", "Nope,Hand_R"]) == 1
    assert "no joint named 'Nope'" in capsys.readouterr().err


def test_foot_speed_is_auto_by_default_and_any_value_is_accepted(scene, stride):
    bpy.ops.stride.import_bvh(filepath=str(BANDAI / "dataset-1_walk_normal_001.bvh"))
    obj = bpy.context.active_object
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}  # Foot Speed 0: Auto
    marks = steps_of(obj.animation_data.action)
    assert len(marks) == 12 and all(a[1] != b[1] for a, b in itertools.pairwise(marks))
    for speed in (1.0, 2.5, 5.0):
        try:
            bpy.ops.stride.detect_footsteps(speed_mps=speed)
        except RuntimeError as exc:  # a report, never an internal parameter name
            assert "exit_mps" not in str(exc) and "speed_mps" not in str(exc), str(exc)
