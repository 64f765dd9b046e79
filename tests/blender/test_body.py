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


# -- parts of bodies -----------------------------------------------------------------------------


def test_a_rig_without_legs_reports_an_error_naming_the_rig_panels_foot_pickers(scene, stride, tmp_path):
    take = bvh.load(cmu_path("02_01"))
    legless, _ = V.without(take, [take.names.index("LHipJoint"), take.names.index("RHipJoint")])
    obj = _rig(tmp_path, legless, "legless")
    for operator in ("detect_footsteps", "lock_feet"):
        with pytest.raises(RuntimeError) as caught:
            getattr(bpy.ops.stride, operator)()
        said = str(caught.value)
        assert "no legs found" in said and "in Blender, the Rig panel's foot pickers" in said, said
        assert "LeftShoulder > " in said and "hang from the shoulders or the neck side of the spine" in said
    assert not steps_of(obj.animation_data.action) and len(bpy.data.actions) == 1  # nothing written
    with pytest.raises(RuntimeError, match="Rig panel's foot pickers"):
        bpy.ops.stride.find_feet()
    lines = stride.rig.body_lines(obj)
    assert any(t.startswith("No legs found: ") and "Rig panel's foot pickers" in t and icon == "ERROR"
               for t, icon in lines), lines
    # Picked by hand (here the hands), the feet are the user's: the map stands on them.
    obj.stride.left_foot, obj.stride.right_foot = "LeftHand", "RightHand"
    clip, _ = stride.bridge.read_action(obj)
    assert clip.body.evidence["legs"] == "user" and clip.names[clip.body.feet["L"][0]] == "LeftHand"


def test_a_lower_body_says_its_unit_is_a_guess_and_takes_the_rig_panels_unit(scene, stride, tmp_path, capfd):
    take = bvh.load(cmu_path("02_01"))
    lower, _ = V.without(take, [take.names.index("LowerBack")])
    path = tmp_path / "lower.bvh"
    bvh.save(lower, path)
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(path)) == {"FINISHED"}
    obj = bpy.context.active_object
    capfd.readouterr()
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    out = capfd.readouterr().out
    warned = [line for line in out.splitlines() if line.startswith("Warning:") and "unit is a guess" in line]
    assert warned and all("0.05644 m per file unit" in w and "the Rig panel's Unit" in w for w in warned), out
    # The footstep report itself, beside the core's warning.
    assert any(w.startswith("Warning: lower: ") and "(from names)" in w for w in warned), warned
    lines = dict(stride.rig.body_lines(obj))
    (unit,) = [t for t in lines if t.startswith("Unit: ")]
    assert unit.startswith("Unit: 0.05644 m (guess)") and lines[unit] == "ERROR"
    assert any("the unit is a guess (no head" in t for t in lines)
    for args in ([str(path)], ["--armature", obj.name]):  # stride inspect, of the file and the armature
        assert stride.cli.main(["inspect", *args]) == 0
        out = capfd.readouterr().out
        assert "unit 0.05644 m (guess)" in out and "the Rig panel's Unit" in out, out
    # Set in the Rig panel, the unit is the user's: every read takes it, and nothing is guessed.
    obj.stride.meters_per_unit = 0.056
    lines = dict(stride.rig.body_lines(obj))
    assert any(t.startswith("Unit: 0.056 m (user)") for t in lines) and not any("guess" in t for t in lines)
    clip, _ = stride.bridge.read_action(obj)
    assert clip.meters_per_unit == pytest.approx(0.056) and clip.body.evidence["unit"] == "user"
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    assert "guess" not in capfd.readouterr().out
