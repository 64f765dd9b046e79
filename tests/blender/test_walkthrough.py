"""A new user's first session, scripted: every operator through bpy.ops, in the states people hit
(nothing selected, no action, mismatched skeletons, empty tracks), and what each report says."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import bpy
import pytest
from fixtures import cmu_path

OPERATORS = ["import_bvh", "export_bvh", "detect_footsteps", "write_event_curves",
             "detect_events_from_curves", "bake_transition", "bake_nla_track", "pick_time",
             "bake_sync_blend"]


def report_of(call) -> str:
    """The error a user would read in the status bar (bpy.ops raises it as RuntimeError)."""
    with pytest.raises(RuntimeError) as exc:
        call()
    return str(exc.value)


def test_every_operator_is_registered_with_a_description_and_the_panels_exist(stride):
    for name in OPERATORS:
        op = getattr(bpy.ops.stride, name)
        rna = op.get_rna_type()
        assert rna.description, name
    for panel in ("VIEW3D_PT_stride", "VIEW3D_PT_stride_events", "VIEW3D_PT_stride_sync",
                  "VIEW3D_PT_stride_transition"):
        assert getattr(bpy.types, panel).bl_category == "Stride"


@pytest.mark.parametrize("name, kwargs, says", [
    ("export_bvh", {"filepath": "/tmp/stride_never.bvh"}, "import a BVH file or select an armature"),
    ("detect_footsteps", {}, "import a BVH file or select an armature"),
    ("write_event_curves", {}, "import a BVH file or select an armature"),
    ("detect_events_from_curves", {}, "import a BVH file or select an armature"),
    ("bake_transition", {"target_action": "x"}, "import a BVH file or select an armature"),
    ("bake_nla_track", {}, "import a BVH file or select an armature"),
    ("bake_sync_blend", {"action_b": "x"}, "import a BVH file or select an armature"),
    ("import_bvh", {}, "Choose a .bvh file"),
])
def test_an_empty_scene_tells_the_user_what_to_do(name, kwargs, says, scene, stride):
    message = report_of(lambda: getattr(bpy.ops.stride, name)(**kwargs))
    assert says in message
    assert "Traceback" not in message
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0


def test_an_armature_without_an_action(scene, stride):
    bpy.ops.stride.import_bvh(filepath=str(cmu_path("09_01")))
    obj = bpy.data.objects["09_01"]
    obj.animation_data.action = None
    for name in ("detect_footsteps", "write_event_curves", "detect_events_from_curves", "export_bvh"):
        kwargs = {"filepath": "/tmp/stride_never.bvh"} if name == "export_bvh" else {}
        message = report_of(lambda name=name, kwargs=kwargs: getattr(bpy.ops.stride, name)(**kwargs))
        assert "'09_01' has no action: import a BVH take, or assign an action in the Action Editor" \
            in message, name
    message = report_of(lambda: bpy.ops.stride.bake_nla_track())
    assert "push actions down" in message


def test_mismatched_skeletons_and_empty_tracks(scene, stride):
    bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01")))
    bpy.ops.stride.import_bvh(filepath=str(cmu_path("131_01")))
    walk = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = walk
    message = report_of(lambda: bpy.ops.stride.bake_transition(source_time=1.0, target_action="131_01"))
    assert "made for another skeleton" in message
    message = report_of(lambda: bpy.ops.stride.bake_sync_blend(action_b="131_01"))
    assert "made for another skeleton" in message
    message = report_of(lambda: bpy.ops.stride.bake_transition(source_time=1.0, target_action="nope"))
    assert "no action named 'nope'" in message
    message = report_of(lambda: bpy.ops.stride.write_event_curves(tracks="Jump"))
    assert "has no event track 'Jump'" in message
    walk.animation_data.nla_tracks.new()
    message = report_of(lambda: bpy.ops.stride.bake_nla_track())
    assert "'02_01' has no NLA strips: add action strips to a track" in message
    message = report_of(lambda: bpy.ops.stride.bake_transition(source_time=99.0, target_action="02_01"))
    assert "Source Time 99 s is outside '02_01', which lasts 2.86 s: pick a time inside it" in message


def test_a_new_users_happy_path_creates_what_the_docs_promise(scene, stride, tmp_path):
    scene.render.fps = 120
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_01"))) == {"FINISHED"}
    assert bpy.ops.stride.import_bvh(filepath=str(cmu_path("02_03"))) == {"FINISHED"}
    walk = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = walk
    assert bpy.ops.stride.detect_footsteps() == {"FINISHED"}
    assert bpy.ops.stride.write_event_curves() == {"FINISHED"}
    assert {"stride_event_FootDown_L", "stride_phase", "stride_contact_L"} <= set(walk.keys())
    scene.stride.source_action = "02_01"
    scene.frame_current = 1 + 150
    assert bpy.ops.stride.pick_time(which="SOURCE") == {"FINISHED"}
    assert scene.stride.source_time == pytest.approx(150 / 120, abs=1e-6)
    assert bpy.ops.stride.bake_transition(source_time=scene.stride.source_time,
                                          target_action="02_03") == {"FINISHED"}
    baked = walk.animation_data.action
    assert baked.name == "02_01 > 02_03 (dead)" and "02_01" in bpy.data.actions
    out = tmp_path / "baked.bvh"
    assert bpy.ops.stride.export_bvh(filepath=str(out)) == {"FINISHED"}
    assert out.is_file()
