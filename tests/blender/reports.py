"""What Stride's operators say: every report (Info, Warning, Error) and poll message of every
`bpy.ops.stride.*` call in the Blender tests, read from what Blender prints and raises for it, and
an independent check of each for Python and names of the code.

Blender writes an operator's reports to `sys.stdout` as `Error: <message>` lines (and raises the
errors as RuntimeError); a poll that fails raises `Operator bpy.ops.stride.X.poll() <message>`.
`watch()` wraps what `bpy.ops.stride.<name>` gives so that the reports of Stride's operators are
kept in `SAID`, with the test that made them, and still printed.
"""
# mypy: disable-error-code="attr-defined,union-attr"

from __future__ import annotations

import ast
import io
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

import bpy

ROOT = Path(__file__).resolve().parents[2]


class Said(NamedTuple):
    test: str  # the test's node id
    operator: str  # stride.<name>
    level: str  # Info, Warning, Error or Poll
    message: str


SAID: list[Said] = []
TEST = [""]  # the running test (conftest sets it)
LAST_TEST = "test_no_report_of_the_blender_tests_names_python_or_code"  # run last (conftest)
_LINE = re.compile(r"^(Info|Warning|Error): (.*)$")


class _Tee(io.TextIOBase):
    def __init__(self, *outs: Any) -> None:
        self.outs = outs

    def write(self, text: str) -> int:
        for out in self.outs:
            out.write(text)
        return len(text)

    def flush(self) -> None:
        # IOBase flushes again when the Tee is collected, by then pytest may have closed its capture
        for out in self.outs:
            if not out.closed:
                out.flush()


class _Watched:
    """A Stride operator as `bpy.ops.stride.<name>` gives it, whose calls keep what it says."""

    def __init__(self, op: Any, name: str) -> None:
        self._op, self._name = op, name

    def __getattr__(self, attr: str) -> Any:  # poll, idname, ...: the operator's own
        return getattr(self._op, attr)

    def __call__(self, *args: Any, **kw: Any) -> Any:
        heard = io.StringIO()
        before = sys.stdout
        sys.stdout = _Tee(before, heard)
        try:
            return self._op(*args, **kw)
        except RuntimeError as exc:
            poll = re.match(rf"Operator bpy\.ops\.{re.escape(self._name)}\.poll\(\) (.*)", str(exc), re.S)
            if poll:
                SAID.append(Said(TEST[0], self._name, "Poll", poll.group(1).strip()))
            raise
        finally:
            sys.stdout = before
            for line in heard.getvalue().splitlines():
                found = _LINE.match(line)
                if found:
                    SAID.append(Said(TEST[0], self._name, found.group(1), found.group(2)))


def watch() -> None:
    """Keep every report and poll message of Stride's operators in SAID (once a session).

    `bpy.ops.<module>.<name>` is made by one function of Blender's `bpy/ops.py` (4.2 to 5.2 alike;
    what it returns differs: a Python class up to 5.1, a C type after), which is wrapped here."""
    ops = bpy.ops
    make = ops._bpy_ops_submodule__getattr__
    if getattr(make, "watched", False):
        return

    def watched(module: str, func: str) -> Any:
        op = make(module, func)
        return _Watched(op, f"stride.{func}") if module == "stride" else op

    watched.watched = True
    ops._bpy_ops_submodule__getattr__ = watched


# -- the check: no Python, no names of the code ------------------------------------------------------

# Names of Blender data quoted in a message ('02_01 > 02_03 (dead)', "Bob's walk") are the user's:
# quotes open after a non-word character, so the apostrophe of "panel's" opens none.
_QUOTED = re.compile(r"(?<!\w)'[^']*'(?!\w)|(?<!\w)\"[^\"]*\"(?!\w)")
PYTHON = (("'='", re.compile(r"=")), ("a brace", re.compile(r"[{}]")), ("a backquote", re.compile(r"`")),
          ("a call", re.compile(r"\w\(\)|\b[a-z]+_\w*\(")), ("the word Python", re.compile(r"\bPython\b")),
          ("True/False/None", re.compile(r"\b(True|False|None)\b")))


def addon_sources() -> list[Path]:
    """Every .py file of the add-on, its packages' too (not its link to core/)."""
    addon = ROOT / "blender_addon"
    return [p for p in sorted(addon.rglob("*.py")) if p.relative_to(addon).parts[0] != "core"]


def _code_names() -> set[str]:
    """Names from the code a user never sees: every function, argument and keyword name with an
    underscore in core/ and blender_addon/, the exception and warning classes, `module.name`
    references to core and add-on modules."""
    names: set[str] = set()
    modules = set()
    for path in [*sorted((ROOT / "core").glob("*.py")), *addon_sources()]:
        modules.add(path.parent.name if path.stem == "__init__" else path.stem)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
                names |= {a.arg for a in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs)}
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.ClassDef) and node.name.endswith(("Error", "Warning", "Options")):
                names.add(node.name)
    internal = {n.lstrip("_") for n in names
                if "_" in n.strip("_") or n.endswith(("Error", "Warning", "Options"))}
    return internal | {f"{m}." for m in modules - {"blender_addon"}}


INTERNAL = _code_names()


def problems(message: str) -> list[str]:
    """What in `message` is Python or a name of the code (empty when it is in the UI's words)."""
    text = _QUOTED.sub(lambda m: "x" * len(m.group()), message)
    found = [what for what, pattern in PYTHON if pattern.search(text)]
    words = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", text))
    found += sorted(w for w in words if w in INTERNAL)
    found += sorted(m for m in INTERNAL if m.endswith(".") and re.search(rf"\b{re.escape(m)}\w", text))
    return found
