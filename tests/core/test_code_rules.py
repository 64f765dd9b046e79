"""House rules read from the code itself (ast, no imports): no module reads another's private
names, no import cycles, and no file of the Blender layer over 500 lines.

A private name is one with a single leading underscore (`_mul_c`, not `__version__`). Reading one
across modules is `from x import _y` or `x._y` where `x` is a module of the repo (however it was
imported: `from . import quat`, `from core import quat`, `import core.quat as quat`). Modules whose
own file name starts with an underscore (`bench/_bench.py`: what the bench scripts share) are
imported by name as such; their public names are what they share.

An import cycle counts every import a module makes, at module level or inside a function, except
under `if TYPE_CHECKING:` and in a script's `if __name__ == "__main__":` block (run so, the file is
module `__main__`, and what it imports loads the module afresh under its own name). The one allowed
is `Clip.body`'s import of the body map (core/clip.py says why where it stands).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("core", "blender_addon", "samples", "bench")
# (importer, imported, function): the import of the body map inside Clip.body.
ALLOWED_CYCLE_EDGES = {("core.clip", "core.body", "body")}


def modules() -> dict[str, Path]:
    """{dotted name: file} of every Python module under SCANNED (blender_addon/core, a link to core/,
    left out)."""
    found = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.parts[:2] == ("blender_addon", "core"):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def resolve(importer: str, level: int, module: str | None) -> str | None:
    """The dotted name an import statement's `from` part names, as seen from `importer`."""
    if level == 0:
        name = module or ""
        if importer.startswith("bench.") and f"bench.{name}" in MODULES:
            return f"bench.{name}"  # bench scripts import each other from bench/ on the path
        return name if name.split(".")[0] in SCANNED else None
    base = importer.split(".")
    if not is_package(importer):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


@functools.cache
def parse(path: Path) -> ast.Module:
    """A file's syntax tree, read once per run (each rule walks it)."""
    return ast.parse(path.read_text())


def normalize(name: str) -> str:
    return "core" + name[len("blender_addon.core"):] if name.startswith("blender_addon.core") else name


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def guarded_blocks(tree: ast.AST, guard: str) -> set[int]:
    """ids of nodes inside `if <guard ...>:` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and guard in ast.unparse(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def enclosing_functions(tree: ast.AST) -> dict[int, str]:
    """{id(node): the name of the innermost function around it}."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else name
            owner[id(child)] = inner
            visit(child, inner)

    visit(tree, "")
    return owner


def imports(name: str, run_as_script: bool = True
            ) -> Iterator[tuple[ast.Import | ast.ImportFrom, str, str | None, str]]:
    """(node, imported module, imported name or None, enclosing function) for each import of a
    repo module in module `name`, TYPE_CHECKING blocks left out (and `if __name__ == "__main__":`
    blocks unless run_as_script: run so, the file is module __main__, not `name`)."""
    tree = parse(MODULES[name])
    skip = guarded_blocks(tree, "TYPE_CHECKING")
    if not run_as_script:
        skip |= guarded_blocks(tree, "__name__ == '__main__'")
    owner = enclosing_functions(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = resolve(name, 0, alias.name)
                if target is not None:
                    yield node, normalize(target), None, owner.get(id(node), "")
        elif isinstance(node, ast.ImportFrom):
            target = resolve(name, node.level, node.module)
            if target is None:
                continue
            for alias in node.names:
                yield node, normalize(target), alias.name, owner.get(id(node), "")


def module_aliases(name: str) -> dict[str, str]:
    """{local name: repo module} for the names module `name` binds to modules by importing."""
    bound = {}
    for node, target, imported, _ in imports(name):
        if imported is None:
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = normalize(resolve(name, 0, alias.name) or "")
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = normalize(resolve(name, 0, top) or top)
        elif f"{target}.{imported}" in MODULES or normalize(f"{target}.{imported}") in MODULES:
            alias = next(a for a in node.names if a.name == imported)
            bound[alias.asname or imported] = normalize(f"{target}.{imported}")
    return bound


def attribute_module(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The repo module an expression like `quat` or `core.quat` names, if it names one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = attribute_module(node.value, bound)
        if parent is not None and f"{parent}.{node.attr}" in MODULES:
            return f"{parent}.{node.attr}"
    return None


def private_reads(name: str) -> list[str]:
    """Where module `name` reads another repo module's private names."""
    found = []
    for node, target, imported, _ in imports(name):
        if imported is not None and private(imported) and target != name:
            if f"{target}.{imported}" in MODULES:
                continue  # a module named with an underscore (bench/_bench.py), imported as such
            found.append(f"line {node.lineno}: from {target} import {imported}")
    bound = module_aliases(name)
    for expr in ast.walk(parse(MODULES[name])):
        if isinstance(expr, ast.Attribute) and private(expr.attr):
            owner = attribute_module(expr.value, bound)
            if owner is not None and owner != name and f"{owner}.{expr.attr}" not in MODULES:
                found.append(f"line {expr.lineno}: {ast.unparse(expr)}")
    return found


def import_graph(prefixes: tuple[str, ...], allowed: set[tuple[str, str, str]] = ALLOWED_CYCLE_EDGES
                 ) -> dict[str, set[str]]:
    """{module: the repo modules it imports} among the modules under `prefixes`; `from pkg import
    sub` is an edge to pkg.sub when sub is a module, and to pkg otherwise."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        if not name.startswith(prefixes):
            continue
        edges = graph.setdefault(name, set())
        for _, target, imported, function in imports(name, run_as_script=False):
            full = f"{target}.{imported}" if imported else target
            dest = full if full in MODULES else target
            if dest != name and dest.startswith(prefixes) and (name, dest, function) not in allowed:
                edges.add(dest)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_scan_finds_every_module_of_each_layer():
    assert {"core.quat", "core.clip", "blender_addon.bridge", "blender_addon.jobs.results",
            "samples.pictures", "bench._bench"} <= set(MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_reads_another_modules_private_names(name):
    assert private_reads(name) == []


def test_the_private_name_scan_sees_each_way_of_reading_one(tmp_path, monkeypatch):
    fake = tmp_path / "core" / "fake.py"
    fake.parent.mkdir()
    fake.write_text("from . import quat\nfrom .quat import _mul_c, mul\nimport core.transition as tr\n"
                    "from core import footlock\n\n"
                    "def f(self):\n"
                    "    return quat._rot_c, tr._at_rate, footlock.lock_feet, self._x, quat.__doc__\n")
    monkeypatch.setitem(MODULES, "core.fake", fake)
    assert private_reads("core.fake") == ["line 2: from core.quat import _mul_c", "line 7: quat._rot_c",
                                          "line 7: tr._at_rate"]


@pytest.mark.parametrize("layer", ["core", "blender_addon"])
def test_no_import_cycles(layer):
    assert cycles(import_graph((layer,))) == []


def test_the_cycle_scan_counts_imports_inside_functions():
    # Clip.body imports the body map inside the property: without its allowance, a cycle.
    graph = import_graph(("core",), allowed=set())
    assert "core.body" in graph["core.clip"]
    assert any({"core.clip", "core.body"} <= set(c) for c in cycles(graph))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


BLENDER_LINES = 500


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("blender_addon")))
def test_no_file_of_the_blender_layer_is_over_500_lines(name):
    """Issue 40: the Blender layer split by job, each file one responsibility, none over 500 lines."""
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= BLENDER_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines"
