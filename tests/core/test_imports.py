"""The core runs inside Blender: numpy and the standard library only, never bpy or scipy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE_MODULES = sorted(p.stem for p in (ROOT / "core").glob("*.py") if p.stem != "__init__")


def test_every_core_module_imports_with_scipy_blocked():
    assert len(CORE_MODULES) >= 6
    code = (
        "import sys\n"
        "for blocked in ('scipy', 'bpy', 'mathutils', 'matplotlib'):\n"
        "    sys.modules[blocked] = None\n"
        f"for name in {CORE_MODULES!r}:\n"
        "    __import__('core.' + name)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_core_imports_relatively_so_it_can_be_bundled():
    # Inside the extension the core is a subpackage (bl_ext.<repo>.stride.core): an absolute
    # `import core` or `from core` would find nothing there.
    for path in (ROOT / "core").rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            assert not stripped.startswith(("import core", "from core")), f"{path.name}: {line}"
            assert not stripped.startswith(("import bpy", "from bpy")), f"{path.name}: {line}"
