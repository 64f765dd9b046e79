"""The `stride` command's flags without Blender: the parser (blender_addon/arguments.py needs no bpy)
offers every flag as the add-on did before issue 40 (tests/data/settings_snapshot.json), with its
default, choices, help and syntax; a field added to an options class is a flag of its subcommand."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest
import settings_snapshot as snapshot

from blender_addon import arguments, wording

BEFORE = json.loads(snapshot.SNAPSHOT.read_text())["cli"]
NOW = json.loads(json.dumps(snapshot.cli_flags(arguments.build_parser())))


@pytest.mark.parametrize("command", sorted(BEFORE))
def test_each_subcommands_flags_are_as_before(command):
    got, want = NOW[command], BEFORE[command]
    assert sorted(got) == sorted(want)
    for flag in want:
        assert snapshot.comparable(flag, got[flag]) == snapshot.comparable(flag, want[flag]), flag


def test_no_subcommand_came_or_went():
    assert sorted(NOW) == sorted(BEFORE)


def with_a_field(options):
    """`options.SyncOptions` with one more field, declared as every field is (`options.opt`)."""
    wobble = options.opt(0.25, "How far the feet wobble", "s", "--wobble", label="Wobble", bounds=(0.0, 1.0))
    return dataclasses.make_dataclass("SyncOptions", [("wobble", float, wobble)],
                                      bases=(options.SyncOptions,), frozen=True)


def test_a_field_added_to_an_options_class_is_a_flag_of_its_subcommand(monkeypatch):
    from blender_addon import options

    wobbly = with_a_field(options)
    monkeypatch.setattr(arguments, "SyncOptions", wobbly)
    parser = arguments.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["sync-blend"]
    (flag,) = [a for a in sub._actions if "--wobble" in a.option_strings]
    assert (flag.dest, flag.default) == ("wobble", 0.25)
    assert flag.help == "How far the feet wobble (s) (default 0.25)"
    args = parser.parse_args(["sync-blend", "a.bvh", "b.bvh", "--weight", "0.5", "--seconds", "2",
                              "--wobble", "0.5", "--out", "c.bvh"])
    assert arguments.options_from(wobbly, args).wobble == 0.5
    assert wording.CLI.called(wobbly, "wobble") == "--wobble"
    assert wording.UI.called(wobbly, "wobble") == "Wobble"
    # The other subcommands are as they were.
    others = {k: v for k, v in snapshot.cli_flags(parser).items() if k != "sync-blend"}
    assert "--wobble" not in json.dumps(others)
