"""What a user can set, as one JSON-able record: every operator property (name, type, default,
label, help, unit, bounds, choices), every sidebar and Rig panel setting, and every CLI flag per
subcommand (default, choices, help, and how sample values parse).

`tests/data/settings_snapshot.json` was taken from the add-on before issue 40 split its Blender
layer and made its settings from the options (`python tests/settings_snapshot.py --write`, run
inside a bpy wheel's Python with the extension installed), and taken again from main once issue
39's Add Root Motion and Export for Engine and issue 35's Unit had landed (they added to it and
changed nothing in it); issue 41's gaits, Speed, Bake Blend Space and `blend-space` were added to it
the same way (the new entries of a fresh record merged in, every other entry left as it was), and so
were issue 43's Walk Along Path, its sidebar settings and `follow-path`. The
tests compare the add-on of today with it, so that the split is shown to change no setting.
"""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "data" / "settings_snapshot.json"

# Values tried on every CLI flag that takes one: what each parses to (or 'error') is its syntax.
SAMPLES = ("auto", "0.25", "2", "-1", "1,113", "dead", "DEAD", "keys", "linear", "X", "-Z", "nope", "")


def _plain(value: Any) -> Any:
    """`value` as JSON keeps it (tuples as lists, floats as they are)."""
    return json.loads(json.dumps(value, default=list))


def rna_property(prop: Any) -> dict[str, Any]:
    """An RNA property as the user meets it: type, label, help, default, unit, bounds, choices."""
    out: dict[str, Any] = {"type": prop.type, "name": prop.name, "description": prop.description,
                           "subtype": prop.subtype, "hidden": prop.is_hidden, "skip_save": prop.is_skip_save}
    if prop.type in ("FLOAT", "INT", "BOOLEAN"):
        out["array_length"] = prop.array_length
        out["default"] = list(prop.default_array) if prop.array_length else prop.default
    if prop.type in ("FLOAT", "INT"):
        out.update(hard_min=prop.hard_min, hard_max=prop.hard_max, soft_min=prop.soft_min,
                   soft_max=prop.soft_max, step=prop.step)
    if prop.type == "FLOAT":
        out.update(unit=prop.unit, precision=prop.precision)
    if prop.type == "STRING":
        out["default"] = prop.default
    if prop.type == "ENUM":
        out["default"] = prop.default
        out["items"] = [[i.identifier, i.name, i.description] for i in prop.enum_items]
    if prop.type in ("POINTER", "COLLECTION"):
        out["fixed_type"] = prop.fixed_type.identifier
    return _plain(out)


def rna_properties(rna: Any, blenders: tuple[str, ...] = ("rna_type",)) -> list[list[Any]]:
    """[[identifier, property], ...] in declaration order (the order an operator's panel shows),
    without Blender's own (`blenders`)."""
    return [[p.identifier, rna_property(p)] for p in rna.properties if p.identifier not in blenders]


def operators() -> dict[str, Any]:
    import bpy

    return {name: rna_properties(getattr(bpy.ops.stride, name).get_rna_type())
            for name in sorted(dir(bpy.ops.stride)) if not name.startswith("_")}


def settings() -> dict[str, Any]:
    """The sidebar's settings (scene.stride) and the Rig panel's (obj.stride), by name (without the
    `name` every property group has, whose help Blender words differently by version)."""
    import bpy

    groups = {owner: getattr(bpy.types, owner).bl_rna.properties["stride"].fixed_type
              for owner in ("Scene", "Object")}
    return {owner: dict(rna_properties(rna, ("rna_type", "name"))) for owner, rna in groups.items()}


def _parsed(parser: argparse.ArgumentParser, action: argparse.Action, text: str) -> Any:
    try:
        return _plain(parser._get_values(action, [text]))  # type and choices, as a parse applies them
    except (argparse.ArgumentError, argparse.ArgumentTypeError, TypeError, ValueError):
        return "error"


def cli_flags(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """{subcommand: {flag (or positional's name): what it takes}}: dest, default, choices, required,
    nargs, metavar, help, its action's kind, its mutually exclusive partners, and how SAMPLES parse."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out: dict[str, Any] = {}
    for command, p in sorted(sub.choices.items()):
        groups = {id(a): sorted(b.option_strings[0] for b in g._group_actions if b is not a)
                  for g in p._mutually_exclusive_groups for a in g._group_actions}
        flags: dict[str, Any] = {}
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            takes = a.nargs not in (0, "+", "*") and not a.option_strings == [] and a.const is None
            flags["/".join(a.option_strings) or a.dest] = _plain({
                "dest": a.dest, "default": a.default, "choices": list(a.choices) if a.choices else None,
                "required": a.required, "nargs": a.nargs, "metavar": a.metavar, "help": a.help,
                "action": type(a).__name__, "exclusive_with": groups.get(id(a), []),
                "parses": {s: _parsed(p, a, s) for s in SAMPLES} if takes else None})
        out[command] = flags
    return out


# The one difference from the snapshot, on purpose: --source's choices come in its field's order (the
# sidebar's: AUTO, EVALUATED, KEYS; they were KEYS, EVALUATED, AUTO), which argparse shows only when it
# refuses a value. The same choices, read alike ("parses").
REORDERED = {"--source"}


def comparable(flag: str, record: dict[str, Any]) -> dict[str, Any]:
    """A flag's record as the tests compare it with the snapshot's."""
    if flag in REORDERED and record["choices"]:
        return {**record, "choices": sorted(record["choices"])}
    return record


def take(stride: Any) -> dict[str, Any]:
    """The whole record, from the installed extension package `stride`."""
    return {"operators": operators(), "settings": settings(), "cli": cli_flags(stride.cli.build_parser())}


if __name__ == "__main__":
    # Inside a bpy wheel's Python: STRIDE_EXTENSION_ZIP names the built extension (build.py extension).
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import build

    record = take(build.install_extension())
    # --write [PATH]: the snapshot (or another file, to compare); Blender prints to stdout too.
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else SNAPSHOT
    target.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {target}")
