"""Options declared once: every operator property and CLI flag of a command is its options field,
with the same default; an operator and its CLI subcommand given the same options bake the same keys."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import argparse
import dataclasses
import types

import bpy
import numpy as np
import pytest
from fixtures import cmu_path
from test_sync import keys_of

# (operator, CLI subcommand or None, options class name)
COMMANDS = [
    ("import_bvh", "import", "ImportOptions"),
    ("export_bvh", "export", "ExportOptions"),
    ("detect_footsteps", "events", "FootstepOptions"),
    ("write_event_curves", "events", "EventOptions"),
    ("detect_events_from_curves", None, "DecodeOptions"),
    ("bake_transition", "transition", "TransitionOptions"),
    ("bake_nla_track", "nla", "NlaBakeOptions"),
    ("bake_sync_blend", "sync-blend", "SyncOptions"),
    ("lock_feet", "lock-feet", "LockFeetOptions"),
    ("add_root_motion", None, "RootMotionOptions"),
    ("export_engine", "export-engine", "EngineExportOptions"),
    ("bake_blend_space", "blend-space", "BlendSpaceOptions"),
    ("follow_path", "follow-path", "FollowPathOptions"),
]
# Operator properties that are no setting of the job: the file browser's.
FILE_BROWSER = {"rna_type", "filepath", "directory", "files", "filter_glob", "check_existing"}


def fields_of(stride, name):
    cls = getattr(stride.options, name)
    return cls, {f.name: f for f in dataclasses.fields(cls)}


def rna_default(prop):
    return tuple(prop.default_array) if getattr(prop, "is_array", False) else prop.default


# A field's unit -> the Blender unit its property shows (and converts) values in.
BLENDER_UNITS = {"s": "TIME_ABSOLUTE", "m/s": "VELOCITY"}


def assert_is_field(prop, cls, name, stride):
    """An operator or sidebar property is the field: its default, label, help, unit, choices."""
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    want = field.default
    got = rna_default(prop)
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-6), name  # RNA floats are float32
    else:
        assert got == want, name
    assert prop.description == stride.options.help_of(cls, name), name
    assert prop.name == field.metadata["label"], name
    if isinstance(want, float) and not isinstance(want, bool):
        assert prop.unit == BLENDER_UNITS.get(field.metadata["unit"], "NONE"), name
    if field.metadata["choices"]:
        assert [(i.identifier, i.name, i.description) for i in prop.enum_items] == \
            [tuple(c) for c in field.metadata["choices"]], name


@pytest.mark.parametrize(("operator", "command", "options"), COMMANDS)
def test_each_operator_property_is_its_options_field_with_its_default(operator, command, options, stride):
    cls, fields = fields_of(stride, options)
    props = {p.identifier: p for p in getattr(bpy.ops.stride, operator).get_rna_type().properties
             if p.identifier not in FILE_BROWSER}
    assert set(props) == set(fields)
    for name, prop in props.items():
        assert_is_field(prop, cls, name, stride)


def test_every_operator_property_has_a_description(stride):
    operators = [name for name in dir(bpy.ops.stride) if not name.startswith("_")]
    assert len(operators) == 21  # the sidebar's 19 and the Rig panel's 2
    for operator in operators:
        for prop in getattr(bpy.ops.stride, operator).get_rna_type().properties:
            if prop.identifier != "rna_type":
                assert prop.description.strip(), f"{operator}.{prop.identifier}"


@pytest.mark.parametrize(("operator", "command", "options"), [c for c in COMMANDS if c[1]])
def test_each_cli_flag_is_its_options_field_with_its_default(operator, command, options, stride):
    _, fields = fields_of(stride, options)
    parser = stride.cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    offered = {s for a in sub._actions for s in a.option_strings}
    # transition, sequence, blend-space and follow-path read BVH files, never an action: no read source.
    reads_files = ("transition", "sequence", "blend-space", "follow-path")
    files_only = {"--source"} if command in reads_files else set()
    declared = {f.metadata["flag"] for f in fields.values() if f.metadata["flag"]} - files_only
    assert declared <= offered
    checked = 0
    for action in sub._actions:
        if action.dest not in fields or action.required or action.default is None:
            continue
        want = fields[action.dest].default
        got = action.default.upper() if action.dest in ("method", "mode") else action.default
        assert got == want, action.dest
        assert fields[action.dest].metadata["flag"] in action.option_strings, action.dest
        checked += 1
    assert checked >= 1


def test_foot_speed_is_declared_once_and_auto_by_default(stride):
    from core import dataset

    o = stride.options
    assert o.default(o.FootstepOptions, "speed_mps") == o.default(o.EventOptions, "speed_mps") \
        == o.default(o.LockFeetOptions, "speed_mps") == o.AUTO == 0.0
    assert stride.jobs.foot_speed(o.AUTO) is None is dataset.Settings().speed_mps  # the core's Auto
    assert stride.jobs.foot_speed(0.2) == 0.2
    assert bpy.types.Scene.bl_rna.properties["stride"].fixed_type.properties["speed_mps"].default == 0.0
    parser = stride.cli.build_parser()
    assert parser.parse_args(["events", "x.bvh", "--out", "y.blend", "--speed", "auto"]).speed_mps == 0.0
    assert parser.parse_args(["events", "x.bvh", "--out", "y.blend", "--speed", "0.3"]).speed_mps == 0.3
    with pytest.raises(SystemExit):
        parser.parse_args(["events", "x.bvh", "--out", "y.blend", "--speed", "-1"])


def two_blends(stride, tmp_path):
    """a.blend and b.blend: one armature with the walk and the run, the walk or the run active."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps = 120
    done, failed = stride.jobs.import_files(bpy.context, [cmu_path("02_01"), cmu_path("02_03")],
                                            single_armature=True)
    assert not failed
    obj = done[0][0]
    bpy.context.view_layer.objects.active = obj
    for action in bpy.data.actions:
        action.use_fake_user = True  # saved though not active
    stride.compat.assign(obj, bpy.data.actions["02_01"])
    stride.jobs.save_blend(tmp_path / "a.blend")
    stride.compat.assign(obj, bpy.data.actions["02_03"])
    stride.jobs.save_blend(tmp_path / "b.blend")
    return tmp_path / "a.blend", tmp_path / "b.blend"


# Values a float32 holds exactly: an operator's float properties are float32, the CLI's floats not.
@pytest.mark.parametrize(("flags", "props"), [
    (["--weight", "0.375", "--seconds", "1.5", "--mask", "LOWER_BODY", "--in-place"],
     {"weight": 0.375, "duration": 1.5, "mask": "LOWER_BODY", "in_place": True}),
    (["--speed", "1.75", "--cycles", "2", "--mode", "harmonic"],
     {"weight_mode": "SPEED", "speed_mps": 1.75, "duration": 2.0, "duration_unit": "CYCLES",
      "mode": "HARMONIC"}),
    (["--weight", "0.5", "--cycles", "1", "--no-cyclic", "--frames-a", "1,113"],
     {"weight": 0.5, "duration": 1.0, "duration_unit": "CYCLES", "cyclic": False, "frames_a": (1, 113)}),
])
def test_the_operator_and_the_cli_bake_the_same_keys(flags, props, stride, tmp_path):
    a, b = two_blends(stride, tmp_path)
    out = tmp_path / "out.blend"
    assert stride.cli.main(["sync-blend", str(a), str(b), *flags, "--out", str(out)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(out))
    obj = bpy.data.objects["02_01"]
    cli_action = obj.animation_data.action
    cli_name = cli_action.name
    cli_keys = keys_of(stride, obj, cli_action)
    cli_modifiers = [len(fc.modifiers) for fc in stride.compat.fcurves(
        cli_action, stride.compat.action_slot(cli_action, obj))]
    bpy.ops.wm.open_mainfile(filepath=str(a))
    obj = bpy.data.objects["02_01"]
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.stride.bake_sync_blend(action_b="02_03", **props) == {"FINISHED"}
    action = obj.animation_data.action
    assert action.name == cli_name
    keys = keys_of(stride, obj, action)
    assert len(keys) == len(cli_keys) > 0
    for got, want in zip(keys, cli_keys, strict=True):
        np.testing.assert_array_equal(got, want)
    slot = stride.compat.action_slot(action, obj)
    assert [len(fc.modifiers) for fc in stride.compat.fcurves(action, slot)] == cli_modifiers


def test_cli_errors_name_the_flag_once(stride, tmp_path, capsys):
    out = str(tmp_path / "t.bvh")
    walk, run = str(cmu_path("02_01")), str(cmu_path("02_03"))
    assert stride.cli.main(["transition", walk, run, "--at", "99", "--out", out]) == 1
    err = capsys.readouterr().err
    assert "stride transition: error: --at 99 s is outside '02_01', which lasts 2.86 s" in err
    assert "src_time" not in err and "Source Time" not in err
    assert stride.cli.main(["transition", walk, run, "--at", "1", "--mask", "Nope", "--out", out]) == 1
    err = capsys.readouterr().err
    assert "--mask: no joint named 'Nope'; use a preset (LOWER_BODY, UPPER_BODY, FINGERS)" in err
    assert stride.cli.main(["sync-blend", walk, run, "--weight", "0.5", "--seconds", "1",
                            "--frames-a", "5,2", "--out", out]) == 1
    assert "--frames-a 5-2 are not a cycle inside '02_01'" in capsys.readouterr().err
    assert stride.cli.main(["export", str(tmp_path / "missing.blend"), "--out", out]) == 1
    err = capsys.readouterr().err
    assert err.startswith("stride export: error: ") and "Error" not in err


# Sidebar setting -> the (options class, field)s it feeds through panels.fill_operator.
FOOTSTEPS, EVENTS, DECODE, LOCK = "FootstepOptions", "EventOptions", "DecodeOptions", "LockFeetOptions"
TRANSITION, NLA, SYNC = "TransitionOptions", "NlaBakeOptions", "SyncOptions"
ROOT, ENGINE, BLEND = "RootMotionOptions", "EngineExportOptions", "BlendSpaceOptions"
PATH = "FollowPathOptions"
# The options classes of the commands the sidebar runs.
SIDEBAR_CLASSES = (FOOTSTEPS, EVENTS, DECODE, LOCK, TRANSITION, NLA, SYNC, ROOT, ENGINE, BLEND, PATH)
SIDEBAR = {
    "action": [(FOOTSTEPS, "action"), (EVENTS, "action"), (DECODE, "action"), (LOCK, "action"),
               (ROOT, "action")],
    "speed_mps": [(FOOTSTEPS, "speed_mps"), (EVENTS, "speed_mps"), (LOCK, "speed_mps")],
    "window": [(EVENTS, "window"), (DECODE, "window")],
    "sigma": [(EVENTS, "sigma")], "tracks": [(EVENTS, "tracks")], "prefix": [(DECODE, "prefix")],
    "span": [(DECODE, "span")], "tolerance": [(DECODE, "tolerance")], "causal": [(DECODE, "causal")],
    "lifts": [(FOOTSTEPS, "lifts")],
    "source": [(FOOTSTEPS, "source"), (EVENTS, "source"), (LOCK, "source"), (TRANSITION, "source"),
               (NLA, "source"), (SYNC, "source"), (ROOT, "source"), (ENGINE, "source"), (BLEND, "source"),
               (PATH, "source")],
    "lock_blend_time": [(LOCK, "blend_time")], "lower_pelvis": [(LOCK, "lower_pelvis")],
    **{name: [(TRANSITION, name)] for name in (
        "source_action", "source_time", "target_action", "target_time", "target_end", "blend_time",
        "method", "halflife_mode", "halflife", "mask")},
    "track": [(NLA, "track")], "nla_blend_time": [(NLA, "blend_time")], "nla_method": [(NLA, "method")],
    "reanchor": [(NLA, "reanchor")],
    **{name: [(SYNC, name)] for name in (
        "action_a", "action_b", "weight", "weight_mode", "duration", "duration_unit", "frames_a",
        "frames_b", "cyclic", "in_place")},
    "target_speed": [(SYNC, "speed_mps")], "sync_mode": [(SYNC, "mode")], "sync_mask": [(SYNC, "mask")],
    "lock_feet": [(TRANSITION, "lock_feet"), (NLA, "lock_feet"), (SYNC, "lock_feet"), (BLEND, "lock_feet"),
                  (PATH, "lock_feet")],
    "allow_mismatch": [(TRANSITION, "allow_mismatch"), (NLA, "allow_mismatch"), (SYNC, "allow_mismatch"),
                       (BLEND, "allow_mismatch"), (PATH, "allow_mismatch")],
    "root_smooth": [(ROOT, "smooth"), (ENGINE, "smooth")], "root_mode": [(ROOT, "mode"), (ENGINE, "mode")],
    "engine_actions": [(ENGINE, "actions")], "file_format": [(ENGINE, "file_format")],
    "engine": [(ENGINE, "engine")], "root_motion": [(ENGINE, "root_motion")],
    "speed_mode": [(BLEND, "speed_mode")], "space_speed": [(BLEND, "speed")],
    "ramp_from": [(BLEND, "ramp_from")], "ramp_to": [(BLEND, "ramp_to")],
    "space_duration": [(BLEND, "duration")],
    "path_target": [(PATH, "target")], "path_speed_mode": [(PATH, "speed_mode")],
    "path_speed": [(PATH, "speed")],
    "idle_action": [(PATH, "idle_action")],
}


def test_sidebar_settings_are_options_fields_and_hold_every_option(scene, stride):
    props = {p.identifier: p for p in scene.stride.bl_rna.properties
             if p.identifier not in ("rna_type", "name")}
    assert set(props) == set(SIDEBAR)
    for name, fed in SIDEBAR.items():
        (cls_name, field), *others = fed
        first = stride.options.field_of(getattr(stride.options, cls_name), field)
        assert_is_field(props[name], getattr(stride.options, cls_name), field, stride)
        for other_cls, other_field in others:  # one setting for several commands: one declaration
            other = stride.options.field_of(getattr(stride.options, other_cls), other_field)
            assert (other.default, other.metadata) == (first.default, first.metadata), (name, other_cls)
    # Every option of every command the sidebar runs is one of its settings.
    covered = {pair for pairs in SIDEBAR.values() for pair in pairs}
    for cls_name in SIDEBAR_CLASSES:
        for f in dataclasses.fields(getattr(stride.options, cls_name)):
            assert (cls_name, f.name) in covered, (cls_name, f.name)


def other_value(prop):
    """A value of a sidebar setting that is not its default."""
    if prop.type == "ENUM":
        return next(i.identifier for i in prop.enum_items if i.identifier != prop.default)
    if prop.type == "BOOLEAN":
        return not prop.default
    if prop.type == "INT":
        return (3, 7)
    if prop.type == "FLOAT":
        return min(prop.default + 0.125, prop.hard_max)
    return f"x_{prop.identifier}"


def test_sidebar_settings_reach_the_operator_buttons(scene, stride):
    settings = scene.stride
    props = {p.identifier: p for p in settings.bl_rna.properties if p.identifier in SIDEBAR}
    for name, prop in props.items():
        if name != "weight_mode":  # its Curve keys a curve; the value is what matters here
            setattr(settings, name, other_value(prop))
    for cls_name in SIDEBAR_CLASSES:
        op = types.SimpleNamespace()
        stride.panels.fill_operator(op, settings, getattr(stride.options, cls_name))
        for name, fed in SIDEBAR.items():
            for _, field in (pair for pair in fed if pair[0] == cls_name):
                got, want = getattr(op, field), getattr(settings, name)
                assert (tuple(got) if field.startswith("frames") else got) == \
                    (tuple(want) if field.startswith("frames") else want), (cls_name, field)
        assert set(vars(op)) == {f.name for f in dataclasses.fields(getattr(stride.options, cls_name))}


def test_a_field_added_to_an_options_class_is_a_property_a_sidebar_setting_and_a_flag(scene, stride,
                                                                                      monkeypatch):
    """One more field in SyncOptions, declared in code as every field is (options.opt), is Bake Sync
    Blend's property, a sidebar setting that reaches the bake's button, and a flag of sync-blend,
    with nothing else written: each is made from the options."""
    o = stride.options
    wobble = o.opt(0.25, "How far the feet wobble", "s", "--wobble", label="Wobble", bounds=(0.0, 1.0))
    wobbly = dataclasses.make_dataclass("SyncOptions", [("wobble", float, wobble)], bases=(o.SyncOptions,),
                                        frozen=True)
    # An operator declared as Bake Sync Blend is: by its options class.
    assert stride.operators.STRIDE_OT_bake_sync_blend.options_class is o.SyncOptions
    read = []

    def execute(self, context):
        read.append(self.read_options())
        return {"FINISHED"}

    operator = type("STRIDE_OT_wobbly_sync_blend", (stride.properties.FromOptions, bpy.types.Operator),
                    {"bl_idname": "stride.wobbly_sync_blend", "bl_label": "Wobbly Sync Blend",
                     "options_class": wobbly, "execute": execute})
    bpy.utils.register_class(operator)
    try:
        props = [p for p in bpy.ops.stride.wobbly_sync_blend.get_rna_type().properties
                 if p.identifier != "rna_type"]
        assert [p.identifier for p in props] == [f.name for f in dataclasses.fields(wobbly)]
        assert_is_field(props[-1], wobbly, "wobble", stride)
        assert bpy.ops.stride.wobbly_sync_blend(wobble=0.5) == {"FINISHED"}
        assert read[-1].wobble == 0.5 and read[-1].weight == 0.5
    finally:
        bpy.utils.unregister_class(operator)
    # The sidebar, made from the commands it runs, the one with the field among them.
    sidebar = tuple(wobbly if c is o.SyncOptions else c for c in stride.properties.SIDEBAR)
    monkeypatch.setattr(stride.properties, "SIDEBAR", sidebar)
    group = type("StrideWobblySettings", (bpy.types.PropertyGroup,),
                 {"__annotations__": stride.properties.sidebar_properties()})
    bpy.utils.register_class(group)
    bpy.types.Scene.stride_wobbly = bpy.props.PointerProperty(type=group)
    try:
        settings = scene.stride_wobbly
        names = {p.identifier for p in settings.bl_rna.properties} - {"rna_type", "name"}
        assert names == set(SIDEBAR) | {"wobble"}
        assert_is_field(settings.bl_rna.properties["wobble"], wobbly, "wobble", stride)
        settings.wobble = 0.5
        assert stride.properties.settings_options(wobbly, settings).wobble == 0.5
        button = types.SimpleNamespace()
        stride.panels.fill_operator(button, settings, wobbly)
        assert button.wobble == 0.5
    finally:
        del bpy.types.Scene.stride_wobbly
        bpy.utils.unregister_class(group)
    # The CLI: a flag of sync-blend, read into the options.
    monkeypatch.setattr(stride.arguments, "SyncOptions", wobbly)
    args = stride.arguments.build_parser().parse_args(["sync-blend", "a.bvh", "b.bvh", "--weight", "0.5",
                                                       "--seconds", "2", "--wobble", "0.5", "--out", "c.bvh"])
    assert stride.arguments.options_from(wobbly, args).wobble == 0.5
