"""The `stride` command's flags without Blender: the parser (blender_addon/arguments.py needs no bpy)
offers every flag as the add-on did before issue 40 (tests/data/settings_snapshot.json), with its
default, choices, help and syntax."""

from __future__ import annotations

import json

import pytest
import settings_snapshot as snapshot

from blender_addon import arguments

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
