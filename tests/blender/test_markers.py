"""Footstep markers corrected by hand survive Detect Footsteps again: one marker per step, the
user's where the user put it, and the step kept through event curves and back."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import bpy
import numpy as np
from blender_fixtures import blender_import
from fixtures import cmu_path


def detected(scene):
    """02_01 imported at 120 fps (frame 1 = 0 s) with Detect Footsteps run once."""
    scene.render.fps = 120
    obj = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    return obj, obj.animation_data.action


def frames_of(action, track):
    return sorted(m.frame for m in action.pose_markers if m.name == track)


def test_a_marker_moved_by_hand_stays_and_is_not_added_again(scene, stride):
    _obj, action = detected(scene)
    before = frames_of(action, "FootDown_L")
    assert len(before) >= 2
    old = before[1]
    (moved,) = [m for m in action.pose_markers if m.name == "FootDown_L" and m.frame == old]
    moved.frame = old + 3
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    after = frames_of(action, "FootDown_L")
    # One marker per step: the moved one at its new frame, none at its old one.
    assert after == sorted([f for f in before if f != old] + [old + 3])
    assert old not in action["stride_auto_markers"]["FootDown_L"]
    assert old + 3 not in action["stride_auto_markers"]["FootDown_L"]  # the user's, not Stride's
    # The exact times hold the user's frame for that step (frame 1 is 0 s).
    exact = np.asarray(action["stride_events"]["FootDown_L"])
    assert len(exact) == len(before)
    assert np.abs(exact - (old + 3 - 1) / 120).min() < 1e-9
    assert np.abs(exact - (old - 1) / 120).min() > 2.5 / 120
    # Again: nothing changes.
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    assert frames_of(action, "FootDown_L") == after


def test_a_marker_added_by_hand_near_a_step_replaces_it_and_one_far_away_is_kept(scene, stride):
    _obj, action = detected(scene)
    before = frames_of(action, "FootDown_R")
    near = before[0] + 2
    action.pose_markers.new("FootDown_R").frame = near
    far = (before[0] + before[1]) // 2  # between two steps: the user's extra event
    action.pose_markers.new("FootDown_R").frame = far
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    after = frames_of(action, "FootDown_R")
    assert after == sorted([near, far, *before[1:]])
    assert len(set(after)) == len(after)
    assert len(action["stride_events"]["FootDown_R"]) == len(after)


def test_corrected_steps_survive_event_curves_and_decoding(scene, stride):
    _obj, action = detected(scene)
    left = frames_of(action, "FootDown_L")
    old = left[1]
    (moved,) = [m for m in action.pose_markers if m.name == "FootDown_L" and m.frame == old]
    moved.frame = old + 4
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    want = {t: frames_of(action, t) for t in ("FootDown_L", "FootDown_R")}
    assert bpy.ops.stride.write_event_curves(window=0.5, sigma=1 / 120) == {"FINISHED"}
    for m in [m for m in action.pose_markers if m.name.startswith("FootDown")]:
        action.pose_markers.remove(m)
    action["stride_events"] = {}
    action["stride_auto_markers"] = {}
    assert bpy.ops.stride.detect_events_from_curves(window=0.5) == {"FINISHED"}
    for track, frames in want.items():
        got = frames_of(action, track)
        assert got == frames, track  # every step, the corrected one where the user put it
        exact = np.asarray(action["stride_events"][track])
        assert np.abs(exact - (np.asarray(frames) - 1) / 120).max() <= 0.5 / 120, track
