"""Ready for the engine: Add Root Motion and Export for Engine on a BVH take, a Mixamo-like rig
(through FBX: object rotated 90 degrees about X at scale 0.01) and a Rigify rig, read back with
Blender's own FBX and glTF importers (the GLB's JSON chunk parsed here for the extras Blender's
importer drops), the sidecar's events against the markers, undo, and bad input."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

import bpy
import numpy as np
import pytest
import rigs
from fixtures import bandai_path, cmu_path

UP = np.array([0.0, 0.0, 1.0])  # Blender's world up


def world_heads(obj, bones, frames) -> np.ndarray:
    """[F, B, 3] world positions of bone heads as Blender evaluates them at each frame."""
    return rigs.world_heads(obj, bones, frames)


def frames_of(action) -> np.ndarray:
    start, end = (round(f) for f in action.frame_range)
    return np.arange(start, end + 1)


def play(obj, action) -> None:
    """`action` on `obj`, every bone's pose cleared first: a bone an action does not key holds the
    pose the last action left it in, in Blender (the root, for actions made before it)."""
    for pb in obj.pose.bones:
        pb.matrix_basis.identity()
    adt = obj.animation_data or obj.animation_data_create()
    adt.action = action
    if hasattr(adt, "action_slot") and adt.action_slot is None and len(action.slots):
        adt.action_slot = action.slots[0]


def gaussian(x: np.ndarray, sigma: float) -> tuple[np.ndarray, slice]:
    """x [T, 3] smoothed by a Gaussian of sigma frames (cut at 4 sigma), and the frames where the
    kernel fits inside the take (where it is that Gaussian exactly)."""
    r = int(4 * sigma + 0.5)
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    out = np.stack([np.convolve(x[:, i], k, mode="same") for i in range(x.shape[1])], axis=1)
    return out, slice(r, len(x) - r)


def glb_document(path: Path) -> dict:
    """The JSON chunk of a GLB file (glTF 2.0 binary: 12-byte header, then chunks)."""
    data = path.read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF" and version == 2 and length == len(data)
    chunk, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A  # 'JSON'
    return json.loads(data[20:20 + chunk])


def marker_events(action, fps: float) -> list[tuple[str, float]]:
    """(name, seconds from the action's first frame) of its pose markers, in time order."""
    start = action.frame_range[0]
    return sorted(((m.name, (m.frame - start) / fps) for m in action.pose_markers),
                  key=lambda e: (e[1], e[0]))


def bvh_take(scene, stride, names=("02_01",)):
    """CMU takes imported with Stride in meters onto one armature at 120 fps, each take's footsteps
    marked and its event curves written; the first take active."""
    scene.render.fps = 120
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path(n) for n in names],
                                            options=stride.options.ImportOptions(scale_preset="CMU_TO_METERS"),
                                            single_armature=True)
    assert not failed
    obj = done[0][0]
    for _, action in done:
        stride.jobs.detect_footsteps(obj, options=stride.options.FootstepOptions(action=action.name))
        stride.jobs.write_event_curves(obj, options=stride.options.EventOptions(action=action.name))
    stride.compat.assign(obj, done[0][1])
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def test_add_root_motion_adds_a_root_bone_under_the_hips_and_keeps_every_action_playing(scene, stride):
    obj = bvh_take(scene, stride, ("02_01", "02_03"))
    walk, run = bpy.data.actions["02_01"], bpy.data.actions["02_03"]
    names = [b.name for b in obj.data.bones]
    before = {}
    for act in (walk, run):
        play(obj, act)
        before[act.name] = world_heads(obj, names, frames_of(act)[::7])
    play(obj, walk)
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.stride.add_root_motion("EXEC_DEFAULT", True) == {"FINISHED"}
    bones = obj.data.bones
    assert "root" in bones and bones["root"].parent is None and bones["Hips"].parent == bones["root"]
    rest = np.array(obj.matrix_world) @ np.array(bones["root"].matrix_local)
    np.testing.assert_allclose(rest[:3, 3], 0.0, atol=1e-6)  # at the armature's origin
    np.testing.assert_allclose(rest[:3, 2] / np.linalg.norm(rest[:3, 2]), UP, atol=1e-6)  # Z up
    baked = obj.animation_data.action
    assert baked.name == "02_01 (root motion)" and baked.use_fake_user
    assert walk.name in bpy.data.actions and walk.users >= 1
    # Every action the armature had plays as before: the root rests unkeyed at the origin.
    for act in (walk, run):
        play(obj, act)
        np.testing.assert_allclose(world_heads(obj, names, frames_of(act)[::7]), before[act.name], atol=1e-5)
    # The bake: every bone where it was, the root on the floor carrying the travel.
    play(obj, baked)
    frames = frames_of(baked)
    got = world_heads(obj, ["root", *names], frames)
    play(obj, walk)
    want = world_heads(obj, names, frames)
    np.testing.assert_allclose(got[:, 1:], want, atol=1e-5 * 1.7)
    path, hips = got[:, 0], want[:, names.index("Hips")]
    np.testing.assert_allclose(path @ UP, 0.0, atol=1e-6)
    ground = hips - np.outer(hips @ UP, UP)
    assert np.linalg.norm(path - ground, axis=-1)[1:].max() < 0.2  # a stride is 1.3 m
    moved = np.linalg.norm(path[-1] - path[1])
    assert moved > 2.0  # it carries the walk's travel
    # Undo takes the root bone and the bake away.
    bpy.ops.ed.undo()
    obj = bpy.data.objects["02_01"]
    assert "root" not in obj.data.bones and obj.data.bones["Hips"].parent is None
    assert "02_01 (root motion)" not in bpy.data.actions
    walk = bpy.data.actions["02_01"]
    play(obj, walk)
    np.testing.assert_allclose(world_heads(obj, names, frames_of(walk)[::7]), before["02_01"], atol=1e-5)


# -- Export for Engine, read back by Blender's own importers -------------------------------------------

HIPS = {"bvh": "Hips", "mixamo": "mixamorig:Hips", "rigify": "DEF-spine"}
SMOOTH = 0.15  # seconds: short enough that most of each take is away from its ends


def with_root_motion(kind, scene, stride, rig_folder):
    """(armature to export, its root-motion actions): a BVH take (walk and run), the Mixamo-like rig
    or the Rigify rig, footsteps marked and event curves written, then Add Root Motion."""
    if kind == "bvh":
        obj = bvh_take(scene, stride, ("02_01", "02_03"))
        sources = ["02_01", "02_03"]
    else:
        obj = rigs.open_rig(kind, rig_folder)
        sources = [obj.animation_data.action.name]
        stride.jobs.detect_footsteps(obj, options=stride.options.FootstepOptions())
        stride.jobs.write_event_curves(obj, options=stride.options.EventOptions())
    made = []
    for name in sources:
        bpy.context.view_layer.objects.active = obj
        assert bpy.ops.stride.add_root_motion(action=name, smooth=SMOOTH) == {"FINISHED"}
        made.append(bpy.data.actions[f"{name} (root motion)"])
    return bpy.context.view_layer.objects.active, made


def reference(obj, action, hips):
    """What the scene plays: frames, world heads of the root and the hips, and the height (m) the
    bones span at the first frame."""
    play(obj, action)
    frames = frames_of(action)
    heads = world_heads(obj, ["root", hips], frames)
    every = world_heads(obj, [b.name for b in obj.data.bones], frames[:1])[0]
    return heads, float(np.ptp(every @ UP))


def imported_action(name):
    """The action Blender's importer made of animation `name`: FBX names it `Armature|name`, glTF
    `name` (4.5+) or `name_Armature` (4.2)."""
    found = [a for a in bpy.data.actions if a.name in (name, f"Armature|{name}", f"{name}_Armature")]
    assert len(found) == 1, (name, [a.name for a in bpy.data.actions])
    return found[0]


def check_round_trip(kind, fmt, engine, scene, stride, rig_folder, tmp_path):
    obj, actions = with_root_motion(kind, scene, stride, rig_folder)
    hips = HIPS[kind]
    fps = stride.bridge.scene_fps()
    want = {a.name: reference(obj, a, hips) for a in actions}
    marks = {a.name: marker_events(a, fps) for a in actions}
    count = len(bpy.data.actions)
    out = tmp_path / f"take{stride.recipes.engine.EXTENSIONS[fmt]}"
    assert bpy.ops.stride.export_engine(filepath=str(out), actions=",".join(a.name for a in actions),
                                        file_format=fmt, engine=engine) == {"FINISHED"}
    assert len(bpy.data.actions) == count  # nothing new: they have root motion
    assert sorted(os.listdir(tmp_path)) == sorted([out.name, "take.events.json"])
    side = json.loads((tmp_path / "take.events.json").read_text())
    assert side["version"] == 1 and [a["name"] for a in side["actions"]] == [a.name for a in actions]
    for entry, action in zip(side["actions"], actions, strict=True):
        assert (entry["frame_start"], entry["frame_end"]) == tuple(action.frame_range) and entry["fps"] == fps
        # The markers, each at its exact time: within half a frame of the marker's frame.
        got = [(e["name"], e["time"]) for e in entry["events"]]
        assert [n for n, _ in got] == [n for n, _ in marks[action.name]] and len(got) >= 3
        assert np.abs(np.array([t for _, t in got]) - [t for _, t in marks[action.name]]).max() <= 0.5 / fps
        for e in entry["events"]:
            assert e["frame"] == pytest.approx(e["time"] * fps, abs=1e-3)
        n = len(frames_of(action))
        assert {"contact_L", "contact_R", "phase_sin", "phase_cos"} <= set(entry["curves"])
        assert all(len(v) == n for v in entry["curves"].values())
        assert set(entry["curves"]["contact_L"]) <= {0.0, 1.0}
    if fmt == "GLB":  # Blender's importer drops extras: read them from the file
        doc = glb_document(out)
        extras = {a["name"]: a.get("extras", {}) for a in doc["animations"]}
        for entry in side["actions"]:
            assert extras[entry["name"]]["events"] == entry["events"]
    # Read back by Blender's importer, into an empty scene at the take's rate.
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = round(fps), 1.0
    if fmt == "FBX":
        assert bpy.ops.import_scene.fbx(filepath=str(out)) == {"FINISHED"}
    else:
        assert bpy.ops.import_scene.gltf(filepath=str(out)) == {"FINISHED"}
    (back,) = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert back.name == "Armature" and back.data.bones["root"].parent is None
    assert back.data.bones[hips].parent.name == "root"
    assert not any(b.name.endswith("_end") for b in back.data.bones)  # no leaf bones
    assert len(bpy.data.actions) == len(actions)  # one animation per action
    sigma = SMOOTH * fps
    for name in [a["name"] for a in side["actions"]]:
        ref, height = want[name]
        back_action = imported_action(name)
        again, height_back = reference(back, back_action, hips)
        assert again.shape == ref.shape
        # Every frame keyed: no key simplification.
        slot = stride.compat.action_slot(back_action, back)
        hips_curves = [fc for fc in stride.compat.fcurves(back_action, slot)
                       if fc.data_path == f'pose.bones["{hips}"].location']
        assert hips_curves and min(len(fc.keyframe_points) for fc in hips_curves) >= len(ref)
        np.testing.assert_allclose(again[:, 1], ref[:, 1], atol=0.001)  # the hips: within a millimetre
        np.testing.assert_allclose(again[:, 0], ref[:, 0], atol=0.001)
        assert abs(height_back / height - 1.0) < 0.01 and 1.3 < height_back < 2.2  # meters, scale 1
        root_path, ground = again[:, 0], again[:, 1] - np.outer(again[:, 1] @ UP, UP)
        np.testing.assert_allclose(root_path @ UP, 0.0, atol=1e-4)
        smooth, inside = gaussian(ground, sigma)
        assert np.linalg.norm(root_path[inside] - smooth[inside], axis=-1).max() < 0.01
        assert np.linalg.norm(root_path[-1] - root_path[0]) > 1.0  # the root carries the travel


@pytest.mark.parametrize(("fmt", "engine"), [("FBX", "UNREAL"), ("FBX", "UNITY"), ("GLB", "UNREAL")])
def test_a_bvh_take_exports_for_engines(fmt, engine, scene, stride, rig_folder, tmp_path):
    check_round_trip("bvh", fmt, engine, scene, stride, rig_folder, tmp_path)


@pytest.mark.parametrize("fmt", ["FBX", "GLB"])
def test_a_mixamo_rig_exports_for_engines(fmt, scene, stride, rig_folder, tmp_path):
    check_round_trip("mixamo", fmt, "UNREAL", scene, stride, rig_folder, tmp_path)


@pytest.mark.parametrize("fmt", ["FBX", "GLB"])
def test_a_rigify_rig_exports_its_deform_skeleton_for_engines(fmt, scene, stride, rig_folder, tmp_path):
    check_round_trip("rigify", fmt, "UNREAL", scene, stride, rig_folder, tmp_path)


def test_on_a_mixamo_rig_the_root_lies_flat_in_its_rotated_centimetre_space(scene, stride, rig_folder):
    obj = rigs.open_rig("mixamo", rig_folder)
    assert obj.rotation_euler[0] == pytest.approx(math.pi / 2) and obj.scale[0] == pytest.approx(0.01)
    source = obj.animation_data.action
    bones_before = {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones}
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.stride.add_root_motion("EXEC_DEFAULT", True) == {"FINISHED"}
    root = obj.data.bones["root"]
    assert obj.data.bones["mixamorig:Hips"].parent == root
    rest = np.array(obj.matrix_world) @ np.array(root.matrix_local)
    np.testing.assert_allclose(rest[:3, 3], np.array(obj.matrix_world)[:3, 3], atol=1e-6)
    axes = rest[:3, :3] / np.linalg.norm(rest[:3, :3], axis=0)
    np.testing.assert_allclose(axes[:, 2], UP, atol=1e-6)  # its Z axis is the world's up
    assert abs(axes[:, 1] @ UP) < 1e-6  # and it lies flat
    baked = obj.animation_data.action
    play(obj, baked)
    path = world_heads(obj, ["root"], frames_of(baked))[:, 0]
    np.testing.assert_allclose(path @ UP, 0.0, atol=1e-4)
    assert np.linalg.norm(path[-1] - path[0]) > 2.0  # meters: the take walks about 4 m
    name, source_name, baked_name = obj.name, source.name, baked.name
    bpy.ops.ed.undo()
    obj = bpy.data.objects[name]
    assert {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones} == bones_before
    assert source_name in bpy.data.actions and baked_name not in bpy.data.actions


def test_an_armature_with_a_root_keeps_it(scene, stride, rig_folder):
    # Bandai's static joint_Root above the hips is a floor root already: it gets the motion.
    scene.render.fps = 30
    bpy.ops.stride.import_bvh(filepath=str(bandai_path("dataset-1_walk_normal_001")))
    obj = bpy.context.active_object
    bones = [b.name for b in obj.data.bones]
    assert bpy.ops.stride.add_root_motion() == {"FINISHED"}
    assert [b.name for b in obj.data.bones] == bones and bones[0] == "joint_Root"
    baked = obj.animation_data.action
    play(obj, baked)
    path = world_heads(obj, ["joint_Root"], frames_of(baked))[:, 0]
    assert np.linalg.norm(path[-1] - path[0]) > 100.0  # centimetres: it carries the walk
    # A Mixamo rig after Add Root Motion has its root: baking again (in Pose Mode) keeps it.
    rig = rigs.open_rig("mixamo", rig_folder)
    assert bpy.ops.stride.add_root_motion() == {"FINISHED"}
    bones = [b.name for b in rig.data.bones]
    first = rig.animation_data.action.name
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.stride.add_root_motion() == {"FINISHED"}
    assert [b.name for b in rig.data.bones] == bones and rig.mode == "POSE"
    assert rig.animation_data.action.name == f"{first}.001"


def test_on_a_rigify_rig_the_root_goes_on_its_deform_copy_and_the_rig_stays(scene, stride, rig_folder):
    obj = rigs.open_rig("rigify", rig_folder)
    bones_before = {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones}
    constraints = [len(pb.constraints) for pb in obj.pose.bones]
    deform = sorted(b.name for b in obj.data.bones if b.use_deform)
    source = obj.animation_data.action
    play_frames = frames_of(source)[::20]
    want = world_heads(obj, deform, play_frames)
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.stride.add_root_motion("EXEC_DEFAULT", True) == {"FINISHED"}
    copy = bpy.context.view_layer.objects.active
    assert copy is not obj and copy.name == f"{obj.name} (Stride)" and copy.data is not obj.data
    assert {b.name for b in copy.data.bones} == {*deform, "root"}
    assert copy.data.bones["DEF-spine"].parent.name == "root"
    assert not any(len(pb.constraints) for pb in copy.pose.bones)
    # The rig, its bones and constraints as they were; the copy plays its deform bones.
    assert {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones} == bones_before
    assert [len(pb.constraints) for pb in obj.pose.bones] == constraints and any(constraints)
    assert obj.animation_data.action == source
    got = world_heads(copy, deform, play_frames)
    np.testing.assert_allclose(got, want, atol=2e-5 * 2.0)
    # Baking the rig again goes onto the same copy.
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.stride.add_root_motion(action=source.name) == {"FINISHED"}
    assert [o.name for o in bpy.data.objects if o.get(stride.recipes.engine.COPY_OF)] == [copy.name]
    name = obj.name
    bpy.ops.ed.undo()
    assert f"{name} (Stride)" not in bpy.data.objects and name in bpy.data.objects


# -- bad input ------------------------------------------------------------------------------------------

def test_without_an_armature_both_commands_say_what_is_missing(scene, stride, tmp_path):
    for op in (bpy.ops.stride.add_root_motion, bpy.ops.stride.export_engine):
        with pytest.raises(RuntimeError, match="No armature in the scene"):
            op(**({"filepath": str(tmp_path / "x.fbx")} if op == bpy.ops.stride.export_engine else {}))
    stride.jobs.import_files(bpy.context, [cmu_path("02_01"), cmu_path("02_01")])  # two armatures

    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match=r"(?i)several armatures"):
        bpy.ops.stride.add_root_motion()
    assert os.listdir(tmp_path) == []


def test_an_action_of_another_skeleton_is_refused_and_nothing_is_made(scene, stride, rig_folder, tmp_path):
    rigs.open_rig("mixamo", rig_folder)
    mixamo_action = next(iter(bpy.data.actions))
    mixamo_action.use_fake_user = True
    stride.jobs.import_files(bpy.context, [cmu_path("02_01")])
    obj = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = obj
    actions, bones = set(bpy.data.actions), {b.name for b in obj.data.bones}
    with pytest.raises(RuntimeError, match="made for another skeleton"):
        bpy.ops.stride.add_root_motion(action=mixamo_action.name)
    with pytest.raises(RuntimeError, match="made for another skeleton"):
        bpy.ops.stride.export_engine(filepath=str(tmp_path / "x.fbx"), actions=mixamo_action.name,
                                     root_motion=False)
    assert set(bpy.data.actions) == actions and {b.name for b in obj.data.bones} == bones
    assert os.listdir(tmp_path) == []


def test_a_bake_that_fails_leaves_no_root_bone_behind(scene, stride):
    obj = bvh_take(scene, stride)
    walk = bpy.data.actions["02_01"]
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("walk", 1, walk)
    obj.animation_data.action = None
    obj.animation_data.use_tweak_mode = True  # where no action can be made active
    actions = set(bpy.data.actions)
    with pytest.raises(RuntimeError, match="tweak mode"):
        bpy.ops.stride.add_root_motion(action="02_01")
    assert "root" not in obj.data.bones and obj.data.bones["Hips"].parent is None
    assert set(bpy.data.actions) == actions


def unwritable(tmp_path: Path) -> Path:
    """A folder no file can be written in: read-only by its mode, or, for root (who writes
    anywhere a mode allows none), a sysfs folder."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    folder = Path("/sys/kernel")
    assert folder.is_dir()
    return folder


def test_an_unwritable_folder_or_file_is_refused_and_nothing_is_half_written(scene, stride, tmp_path):
    obj = bvh_take(scene, stride)
    assert bpy.ops.stride.add_root_motion() == {"FINISHED"}
    folder = unwritable(tmp_path)
    before = set(os.listdir(folder))
    actions = set(bpy.data.actions)
    for fmt in ("FBX", "GLB"):
        with pytest.raises(RuntimeError, match="nothing written"):
            bpy.ops.stride.export_engine(filepath=str(folder / f"take.{fmt.lower()}"), file_format=fmt)
    assert set(os.listdir(folder)) == before
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.stride.export_engine(filepath=str(tmp_path / "missing" / "take.fbx"))
    with pytest.raises(RuntimeError, match=r"does not end in \.glb"):
        bpy.ops.stride.export_engine(filepath=str(tmp_path / "take.fbx"), file_format="GLB")
    # A read-only sidecar in the way: neither file is written, no temporary file is left.
    (tmp_path / "take.events.json").write_text("old")
    (tmp_path / "take.events.json").chmod(0o444)
    with pytest.raises(RuntimeError, match="read-only"):
        bpy.ops.stride.export_engine(filepath=str(tmp_path / "take.fbx"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "locked") == ["take.events.json"]
    assert (tmp_path / "take.events.json").read_text() == "old"
    assert set(bpy.data.actions) == actions and obj.name == "02_01"
    assert "Armature" not in bpy.data.objects  # the export's temporary copy is gone


def test_exporting_keeps_the_armature_its_name_nla_and_selection(scene, stride, tmp_path):
    obj = bvh_take(scene, stride, ("02_01", "02_03"))
    obj.name = "Armature"  # the name the file gives it: the object keeps it afterwards
    other = bpy.data.objects.new("Empty", None)
    bpy.context.scene.collection.objects.link(other)
    other.select_set(True)
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("run", 1, bpy.data.actions["02_03"])
    active = obj.animation_data.action
    assert bpy.ops.stride.export_engine(filepath=str(tmp_path / "t.fbx"), actions="02_01") == {"FINISHED"}
    assert obj.name == "Armature" and obj.animation_data.action == active
    assert [s.name for t in obj.animation_data.nla_tracks for s in t.strips] == ["run"]
    assert other.select_get() and obj.select_get() and bpy.context.view_layer.objects.active == obj
    assert sorted(o.name for o in bpy.data.objects) == ["Armature", "Empty"]
    side = json.loads((tmp_path / "t.events.json").read_text())
    assert [a["name"] for a in side["actions"]] == ["02_01 (root motion)"]  # made on the way


# -- the exporters' options, version by version --------------------------------------------------------

@pytest.mark.parametrize(("fmt", "engine"), [("FBX", "UNREAL"), ("FBX", "UNITY"), ("GLB", "UNREAL")])
def test_every_exporter_option_exists_in_this_blender(fmt, engine, stride):
    props = getattr(bpy.ops.export_scene, "fbx" if fmt == "FBX" else "gltf").get_rna_type().properties
    for name, value in stride.jobs.engine.exporter_options(fmt, engine).items():
        assert name in props, (bpy.app.version_string, name)
        prop = props[name]
        if prop.type == "ENUM" and not prop.is_enum_flag and name != "export_format":
            assert value in [i.identifier for i in prop.enum_items], (name, value)


# -- the command line ----------------------------------------------------------------------------------

def test_cli_exports_bvh_takes_with_their_footsteps(scene, stride, tmp_path, capsys):
    out = tmp_path / "walks.glb"
    code = stride.cli.main(["export-engine", str(cmu_path("02_01")), str(cmu_path("02_03")),
                            "--format", "glb", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    side = json.loads((tmp_path / "walks.events.json").read_text())
    assert [a["name"] for a in side["actions"]] == ["02_01 (root motion)", "02_03 (root motion)"]
    for entry in side["actions"]:
        assert {e["name"] for e in entry["events"]} == {"FootDown_L", "FootDown_R"}
        assert entry["fps"] == 120.0 and "contact_L" in entry["curves"]
    doc = glb_document(out)
    assert sorted(a["name"] for a in doc["animations"]) == [a["name"] for a in side["actions"]]
    assert "wrote" in capsys.readouterr().out


def test_cli_exports_a_blends_armature_and_names_bad_flags(scene, stride, tmp_path, capsys):
    bvh_take(scene, stride, ("02_01", "02_03"))
    for action in bpy.data.actions:
        action.use_fake_user = True
    blend = tmp_path / "takes.blend"
    stride.jobs.save_blend(blend)
    out = tmp_path / "takes.fbx"
    assert stride.cli.main(["export-engine", str(blend), "--armature", "02_01", "--actions", "02_01,02_03",
                            "--format", "fbx", "--engine", "unity", "--out", str(out)]) == 0
    side = json.loads((tmp_path / "takes.events.json").read_text())
    assert [a["name"] for a in side["actions"]] == ["02_01 (root motion)", "02_03 (root motion)"]
    capsys.readouterr()
    assert stride.cli.main(["export-engine", str(blend), "--format", "obj", "--out", str(out)]) == 2
    assert stride.cli.main(["export-engine", str(blend), "--actions", "Nope", "--format", "fbx",
                            "--out", str(out)]) == 1
    assert "no action named 'Nope'" in capsys.readouterr().err
