"""What Stride says in Blender: every error and warning names the fix in the UI (the Rig panel's
feet, the action to pick, the option's label), never a Python argument or a name of the code.

The last test checks every report and poll message the Blender tests made (`reports.SAID`: the
error tests' refusals, the bakes' warnings and notes) with an independent check (`reports.problems`:
Python syntax, the code's names read from its source)."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import ast
from collections import Counter

import bpy
import pytest
import reports
from fixtures import cmu_path

from core import bvh
from core.clip import Clip

TODAY = ("no legs found: no two sibling chains end lowest over the take; pass feet={'L': left_ankle, "
         "'R': right_ankle}")


def test_the_check_finds_python_and_the_codes_names():
    assert reports.problems(TODAY) == ["'='", "a brace"]
    assert "lower_pelvis" in reports.problems("held as near as the leg reaches. lower_pelvis=True lowers it")
    assert reports.problems("read below the speed_mps (contacts.step_seconds)") == [
        "speed_mps", "step_seconds", "contacts."]
    assert reports.problems("see loop_cycle()") == ["a call", "loop_cycle"]
    assert "FootLockWarning" in reports.problems("FootLockWarning: a foot could not reach its lock")
    # The user's names and plain words are not code.
    for fine in ("action 'a = {b}' has no keys", "the Rig panel's Left Foot", "'x.bvh', line 3: expected '{'",
                 "Blend Time must be at least 0 s", "3 channel(s) of 'walk' (pose.bones[\"Hips\"].scale)",
                 "key stride_blend_weight in action '02_01'", "feet foot_l, foot_r (from names)"):
        assert reports.problems(fine) == [], fine


def torso_take(path):
    """CMU 02_01's spine and head alone (no legs, no arms), as a BVH file at `path`."""
    clip = bvh.load(cmu_path("02_01"))
    keep = [clip.names.index(n) for n in ("Hips", "LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head")]
    ends = [k for k, p in enumerate(clip.end_parents.tolist()) if p == keep[-1]]
    torso = Clip([clip.names[j] for j in keep], [-1, 0, 1, 2, 3, 4, 5], clip.offsets[keep],
                 clip.rotations[:, keep], clip.positions[:, keep], clip.fps,
                 channels=[clip.channels[j] for j in keep], end_parents=[len(keep) - 1] * len(ends),
                 end_offsets=clip.end_offsets[ends], name="torso")
    bvh.save(torso, path)
    return path


def points_to_the_feet_pickers(said):
    """The advice names the Rig panel and its two feet pickers, whoever worded it (the core's
    "pick the feet: in Blender, ..." or the wording's own)."""
    return "Rig panel" in said and "(Left Foot, Right Foot)" in said


def test_a_rig_without_legs_points_to_the_rig_panels_feet(scene, stride, tmp_path):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(torso_take(tmp_path / "torso.bvh"))) == {"FINISHED"}
    obj = bpy.data.objects["torso"]
    for operator in ("detect_footsteps", "lock_feet", "find_feet"):
        with pytest.raises(RuntimeError, match="no legs found") as refused:
            getattr(bpy.ops.stride, operator)()
        said = str(refused.value)
        assert points_to_the_feet_pickers(said), said
        assert reports.problems(said) == [], said
    # Write Event Curves writes what needs no feet, and says why there is no phase or contact curve.
    scene.frame_set(1)
    obj.animation_data.action.pose_markers.new("Hit").frame = 40
    assert bpy.ops.stride.write_event_curves() == {"FINISHED"}
    (said,) = [s.message for s in reports.SAID if s.operator == "stride.write_event_curves" and "wrote" in
               s.message and s.test.endswith("test_a_rig_without_legs_points_to_the_rig_panels_feet")]
    assert "no phase curve (no legs found" in said and points_to_the_feet_pickers(said), said
    # The Rig panel's body map says the same.
    lines = [text for text, _ in stride.rig.body_lines(obj)]
    assert any(text.startswith("No legs found") and "Rig panel" in text for text in lines), lines
    assert all(reports.problems(text) == [] for text in lines), lines


def test_an_empty_action_says_it_has_no_keys(scene, stride, tmp_path):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    obj = bpy.data.objects["02_01"]
    empty = bpy.data.actions.new("EmptyAction")
    obj.animation_data.action = empty
    scene.stride.target_action = "02_01"
    calls = {"detect_footsteps": {}, "write_event_curves": {}, "lock_feet": {}, "find_feet": {},
             "export_bvh": {"filepath": str(tmp_path / "x.bvh")},
             "bake_transition": {"target_action": "02_01"}, "bake_sync_blend": {"action_b": "02_01"},
             "find_target_time": {}}
    for operator, options in calls.items():
        with pytest.raises(RuntimeError, match="action 'EmptyAction' has no keys") as refused:
            getattr(bpy.ops.stride, operator)(**options)
        assert "slot" not in str(refused.value) and reports.problems(str(refused.value)) == []
    # Going into it from a take with keys: the same words.
    obj.animation_data.action = bpy.data.actions["02_01"]
    with pytest.raises(RuntimeError, match="action 'EmptyAction' has no keys"):
        bpy.ops.stride.bake_transition(target_action="EmptyAction")
    assert not (tmp_path / "x.bvh").exists()


# Core messages as they read now, and as the other branches make them (feet chosen "in Blender with
# the Rig panel's foot pickers, in Python with feet=..."; contacts and locks naming Python arguments).
CORE_MESSAGES = [
    TODAY,
    "names and motion disagree about the legs: names say LeftFoot and RightFoot, the motion LeftHand and "
    "RightHand; using the names (pass feet= to choose)",
    "no pair of leg chains: looked for ankles by name and for two alike chains; pick the feet in Blender "
    "with the Rig panel's foot pickers, in Python with feet={'L': 'LeftFoot', 'R': 'RightFoot'}",
    "four limbs reach the floor: using Hips_L and Hips_R (`feet=` in Python, the Rig panel in Blender)",
    "walk: a foot could not reach its lock, held as near as the leg reaches: R on 3 frames. "
    "lower_pelvis=True lowers the pelvis instead",
    "walk: L steps twice in a row at frames 10-40; pass contacts={'L': mask, 'R': mask} or set speed_mps=0.3",
    "3 events closer than 2 frames (2 dt = 0.0167 s) to the previous one merged into it, the first at 1.2 s",
    "1 events decode exactly for less than 4 sigma + dt = 0.0583 s toward the previous one (exact_radius), "
    "the first at 2.3 s: smoothing blends their encodings",
    "blend_time must be finite and >= 0 seconds, not nan",
]


@pytest.mark.parametrize("message", CORE_MESSAGES)
def test_core_messages_read_in_the_uis_words_and_the_clis(message, stride):
    ui = stride.jobs.in_user_words(message)
    assert reports.problems(ui) == [], ui
    assert stride.jobs.in_user_words(ui) == ui  # nothing left to change
    if "feet" in message and "=" in message:
        assert "Rig panel" in ui and "in Python" not in ui, ui
    cli = stride.jobs.in_user_words(message, face=stride.wording.CLI)
    assert reports.problems(cli) == [], cli
    if "feet=" in message:
        assert "--feet" in cli, cli


def test_the_clauses_around_the_python_stay(stride):
    wording = stride.wording
    said = wording.in_user_words(CORE_MESSAGES[2])
    assert said == ("no pair of leg chains: looked for ankles by name and for two alike chains; pick the "
                    "feet in Blender with the Rig panel's foot pickers")
    # A command without Lower Pelvis (a transition) says nothing of it (jobs.NO_CORE_WORDS).
    assert stride.jobs.in_user_words(CORE_MESSAGES[4]) == (
        "walk: a foot could not reach its lock, held as near as the leg reaches: R on 3 frames")
    assert wording.in_user_words(CORE_MESSAGES[4]) == (
        "walk: a foot could not reach its lock, held as near as the leg reaches: R on 3 frames; turn on "
        "Lower Pelvis (Lock Feet) to lower the hips instead")
    assert wording.in_user_words(CORE_MESSAGES[5]) == ("walk: L steps twice in a row at frames 10-40; set "
                                                       "Foot Speed")
    assert wording.in_user_words(CORE_MESSAGES[-1]) == ("Blend Time must be finite and at least 0 seconds, "
                                                        "not nan")
    # File names are the user's, whatever they hold.
    bad_file = "/tmp/take=1/walk{2}.bvh, line 3: expected '{' to open the block"
    assert wording.in_user_words(bad_file) == bad_file
    # The clips the core names after what it made of an action: the action's names.
    assert wording.in_user_words("02_01.cycle+02_03.cycle: a foot could not reach its lock") == (
        "the blend of 02_01 and 02_03: a foot could not reach its lock")
    assert wording.in_user_words(">02_03 (times from 1.008 s): a foot") == (
        "the transition into 02_03 (times from 1.008 s): a foot")


def test_every_report_goes_through_the_wording(stride):
    """Each `report` and `poll_message_set` in the add-on says its text through in_user_words (or is
    `tell`, which does), so that a message added later reads in the UI's words too."""
    unworded = []
    for path in reports.addon_sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("report", "poll_message_set")
                    and getattr(node.func.value, "id", "") in ("self", "cls")):  # an operator's
                continue
            text = node.args[-1]
            worded = isinstance(text, ast.Call) and getattr(text.func, "attr", getattr(text.func, "id", "")) \
                == "in_user_words"
            if not worded and not isinstance(text, ast.Constant):
                unworded.append(f"{path.relative_to(reports.ROOT)}:{node.lineno}")
    assert unworded == []


def test_no_report_of_the_blender_tests_names_python_or_code():
    """Runs last (conftest): every report and poll message of every Stride operator the Blender tests
    ran. Alone, it still has this file's error tests'."""
    said = reports.SAID
    bad = [(s.test, s.operator, s.level, s.message, reports.problems(s.message)) for s in said
           if reports.problems(s.message)]
    assert bad == [], "\n".join(map(str, bad[:20]))
    levels = Counter(s.level for s in said)
    assert levels["Error"] >= 10 and levels["Info"] >= 1, levels
    assert len({s.operator for s in said if s.level == "Error"}) >= 5


def test_baked_and_imported_actions_keep_a_fake_user(scene, stride):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    assert bpy.data.actions["02_01"].use_fake_user
    assert bpy.ops.stride.lock_feet() == {"FINISHED"}
    baked = bpy.data.objects["02_01"].animation_data.action
    assert baked.name == "02_01 (feet locked)" and baked.use_fake_user
    said = {s.operator: s.message for s in reports.SAID if s.test.endswith("keep_a_fake_user")
            and s.level == "Info" and not s.message.startswith("read ")}
    assert said["stride.import_bvh"] == "Imported 1 of 1 BVH file(s): action '02_01' on armature '02_01'"
    assert said["stride.lock_feet"].startswith("Baked action '02_01 (feet locked)': 344 frames"), said
