"""Event tracks a network can learn (issue 25) in Blender: FootUp events marked and encoded like
touchdowns, Events from Curves with its span, tolerance and causal reading, and a warning naming
the track whose events are too close for the window."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import re

import bpy
import numpy as np
from blender_fixtures import blender_import
from fixtures import cmu_path

from core import bvh, contacts, events


def clear_markers(action):
    for m in list(action.pose_markers):
        action.pose_markers.remove(m)


def test_lifts_are_marked_encoded_and_decoded_like_touchdowns(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    action = walk.animation_data.action
    assert bpy.ops.stride.detect_footsteps(lifts=True) == {"FINISHED"}
    # The core on the BVH file itself is the oracle for the exact times stored with the markers.
    want = contacts.footsteps(bvh.load(cmu_path("02_01")), lifts=True)
    stored = action["stride_events"].to_dict()
    for track in ("FootUp_L", "FootUp_R", "FootDown_L", "FootDown_R"):
        assert len(want[track]) >= 2, track
        np.testing.assert_allclose(stored[track], want[track], atol=1e-5)
        assert sum(m.name == track for m in action.pose_markers) == len(want[track])
    assert bpy.ops.stride.write_event_curves(tracks="FootUp_L,FootUp_R") == {"FINISHED"}
    paths = {fc.data_path for fc in stride.compat.fcurves(action, stride.compat.action_slot(action, walk))}
    assert '["stride_event_FootUp_L"]' in paths and '["stride_event_FootUp_R"]' in paths
    for m in [m for m in action.pose_markers if m.name.startswith("FootUp")]:
        action.pose_markers.remove(m)
    del action["stride_events"]["FootUp_L"], action["stride_events"]["FootUp_R"]
    assert bpy.ops.stride.detect_events_from_curves() == {"FINISHED"}
    decoded = action["stride_events"].to_dict()
    for track in ("FootUp_L", "FootUp_R"):
        # Keys are float32 in Blender: a decoded event lands within a hundredth of a frame.
        np.testing.assert_allclose(decoded[track], want[track], atol=0.01 / 120)


def test_events_from_curves_reads_noisy_curves_with_its_span_and_tolerance(scene, stride):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    action = walk.animation_data.action
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    truth = np.asarray(action["stride_events"].to_dict()["FootDown_L"])
    assert bpy.ops.stride.write_event_curves(tracks="FootDown_L") == {"FINISHED"}
    # A network's prediction: the curves with seeded noise of 0.05 keyed back.
    rng = np.random.default_rng(25)
    slot = stride.compat.action_slot(action, walk)
    for fc in stride.compat.fcurves(action, slot):
        if fc.data_path == '["stride_event_FootDown_L"]':
            keys = stride.compat.read_keys(fc)
            stride.compat.write_keys(fc, keys[:, 0], keys[:, 1] + rng.normal(0.0, 0.05, len(keys)), "LINEAR")
    clear_markers(action)
    del action["stride_events"]
    frames = np.array([1.0 + t * 120 for t in truth])
    for options in ({}, {"span": 0.15, "tolerance": 0.01}, {"causal": True}):
        assert bpy.ops.stride.detect_events_from_curves(**options) == {"FINISHED"}, options
        found = np.array(sorted(m.frame for m in action.pose_markers if m.name == "FootDown_L"))
        assert len(found) == len(truth), options
        assert np.abs(found - frames).max() <= 2.5, options  # within 2 frames, rounded to a frame
        clear_markers(action)
    # The core's detector on the same keys, as the operator read them, finds them all too.
    sin = [fc for fc in stride.compat.fcurves(action, slot) if fc.data_path == '["stride_event_FootDown_L"]']
    k0, k1 = (stride.compat.read_keys(fc) for fc in sorted(sin, key=lambda fc: fc.array_index))
    assert len(events.detect((k0[:, 0] - 1) / 120, k0[:, 1], k1[:, 1], 0.5)) == len(truth)


def test_close_events_are_named_by_track_and_gap(scene, stride, capfd, tmp_path):
    scene.render.fps = 120
    walk = blender_import(cmu_path("02_01"), rotate_mode="QUATERNION")
    action = walk.animation_data.action
    for frame in (40, 130, 230):  # 0.75 s then 0.83 s apart: under two windows of 0.5 s
        action.pose_markers.new("Hit").frame = frame
    capfd.readouterr()
    assert bpy.ops.stride.write_event_curves(tracks="Hit") == {"FINISHED"}
    out = capfd.readouterr().out
    said = re.findall(r"Warning: (Hit: .*)", out)
    assert len(said) == 1, out
    assert "2 gaps between events under two windows (1 s)" in said[0]
    assert "the shortest 0.75 s" in said[0]
    # The CLI says it on stderr, naming the track too.
    blend = tmp_path / "hit.blend"
    stride.jobs.save_blend(blend)
    assert stride.cli.main(["events", str(blend), "--out", str(tmp_path / "out.blend")]) == 0
    assert re.search(r"stride events: warning: Hit: 2 gaps", capfd.readouterr().err)
