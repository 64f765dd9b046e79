"""Export for Engine's arithmetic without Blender (blender_addon/recipes/engine.py): the events file's
name, the curves' names, each exporter's settings by Blender version, and a GLB's extras written
into its JSON chunk with its binary chunk untouched (checked against a GLB built here by hand, from
the glTF 2.0 binary layout)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from blender_addon.errors import JobError
from blender_addon.recipes import engine


def glb(doc: dict, binary: bytes) -> bytes:
    """A GLB file from the spec's layout: header, a JSON chunk padded with spaces, a BIN chunk."""
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    chunks = (struct.pack("<I4s", len(text), b"JSON") + text
              + struct.pack("<I4s", len(binary), b"BIN\0") + binary)
    return b"glTF" + struct.pack("<II", 2, 12 + len(chunks)) + chunks


def test_the_events_file_sits_beside_the_export_with_its_extension_replaced():
    assert engine.sidecar_path("/x/walk.cycle.fbx") == Path("/x/walk.cycle.events.json")
    assert engine.sidecar_path(Path("take.glb")) == Path("take.events.json")


def test_curve_names_drop_the_prefix_and_name_sin_cos_pairs():
    assert engine.curve_name("contact_L", 0, 1) == "contact_L"
    assert engine.curve_name("phase", 1, 2) == "phase_cos"
    assert engine.curve_name("event_FootDown_L", 0, 2) == "event_FootDown_L_sin"
    assert engine.curve_name("tag_run", 2, 3) == "tag_run_2"


def test_exporter_settings_follow_the_blender_version():
    fbx = engine.exporter_options("FBX", "UNREAL", (4, 2, 0))
    assert fbx["bake_anim_simplify_factor"] == 0.0 and fbx["add_leaf_bones"] is False
    assert (fbx["axis_up"], engine.exporter_options("FBX", "UNITY", (4, 2, 0))["axis_up"]) == ("Z", "Y")
    assert "export_merge_animation" not in engine.exporter_options("GLB", "UNREAL", (4, 2, 23))
    assert engine.exporter_options("GLB", "UNREAL", (4, 5, 0))["export_merge_animation"] == "ACTION"


def test_animation_extras_go_into_the_json_chunk_and_the_binary_stays():
    binary = bytes(range(7))
    doc = {"asset": {"version": "2.0"},
           "animations": [{"name": "walk", "extras": {"mine": 1}}, {"name": "run"}]}
    data = engine.with_animation_extras(glb(doc, binary), {"walk": {"events": [{"name": "FootDown_L"}]}})
    length, total = struct.unpack_from("<I", data, 8)[0], len(data)
    assert length == total and total % 4 == 0
    read = engine.glb_json(data)
    assert read["animations"][0]["extras"] == {"mine": 1, "events": [{"name": "FootDown_L"}]}
    assert "extras" not in read["animations"][1]
    json_length = struct.unpack_from("<I", data, 12)[0]
    assert data[20 + json_length:] == struct.pack("<I4s", 8, b"BIN\0") + binary + b"\0"
    with pytest.raises(ValueError, match="not a GLB"):
        engine.glb_json(b"PK\3\4 not a glb at all")


def test_an_export_into_a_missing_or_mistyped_file_is_refused(tmp_path):
    with pytest.raises(JobError, match=r"does not end in \.fbx"):
        engine.check_writable(tmp_path / "take.glb", tmp_path / "take.events.json", ".fbx")
    with pytest.raises(JobError, match="does not exist"):
        engine.check_writable(tmp_path / "no" / "take.fbx", tmp_path / "no" / "take.events.json", ".fbx")
    engine.check_writable(tmp_path / "take.fbx", tmp_path / "take.events.json", ".fbx")
