"""The settings a user meets are those of the add-on before issue 40 split its Blender layer: every
operator property, sidebar and Rig panel setting and CLI flag, as tests/data/settings_snapshot.json
recorded them from that add-on (tests/settings_snapshot.py)."""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import json

import pytest
import settings_snapshot as snapshot

BEFORE = json.loads(snapshot.SNAPSHOT.read_text())


@pytest.fixture(scope="module")
def now(stride):
    return json.loads(json.dumps(snapshot.take(stride)))


@pytest.mark.parametrize("operator", sorted(BEFORE["operators"]))
def test_each_operators_properties_are_as_before_in_their_order(operator, now):
    assert now["operators"][operator] == BEFORE["operators"][operator]


def test_no_operator_came_or_went(now):
    assert sorted(now["operators"]) == sorted(BEFORE["operators"])


@pytest.mark.parametrize("owner", ["Scene", "Object"])
def test_the_sidebar_and_rig_settings_are_as_before(owner, now):
    got, want = now["settings"][owner], BEFORE["settings"][owner]
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name


@pytest.mark.parametrize("command", sorted(BEFORE["cli"]))
def test_each_subcommands_flags_are_as_before(command, now):
    got, want = now["cli"][command], BEFORE["cli"][command]
    assert sorted(got) == sorted(want)
    for flag in want:
        assert snapshot.comparable(flag, got[flag]) == snapshot.comparable(flag, want[flag]), flag


def test_no_subcommand_came_or_went(now):
    assert sorted(now["cli"]) == sorted(BEFORE["cli"])
