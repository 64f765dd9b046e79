"""The add-on's modules that need no Blender import in a plain Python: its settings (options), its
words (wording, errors), the CLI's arguments, and what each job does to clips (recipes), so that
tests/core runs them in seconds. bpy, bpy_extras and mathutils are blocked while they import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "blender_addon"
RECIPES = sorted(p.stem for p in (ADDON / "recipes").glob("*.py") if p.stem != "__init__")
NO_BPY = ["blender_addon", "blender_addon.options", "blender_addon.wording", "blender_addon.errors",
          "blender_addon.timing", "blender_addon.arguments", "blender_addon.recipes",
          *(f"blender_addon.recipes.{name}" for name in RECIPES)]


def test_the_addons_bpy_free_modules_import_with_blender_blocked():
    assert len(RECIPES) >= 4
    code = (
        "import importlib, json, sys\n"
        "for blocked in ('bpy', 'bpy_extras', 'mathutils', 'scipy'):\n"
        "    sys.modules[blocked] = None\n"
        f"for name in {NO_BPY!r}:\n"
        "    importlib.import_module(name)\n"
        "came = [m for m in sys.modules if m.startswith('blender_addon.') and '.core' not in m]\n"
        "print(json.dumps(sorted(came)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # Nothing else of the add-on came along (a bpy module imported lazily would have failed above).
    assert json.loads(out.stdout) == sorted(NO_BPY[1:])
