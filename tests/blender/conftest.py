"""Blender tests run inside the real Blender Python module (a `bpy` wheel), never against mocks.

The extension zip is installed the way a user installs it, into a throwaway user folder
(build.install_extension, as the demo and the Blender benchmarks install it). The zip comes from
STRIDE_EXTENSION_ZIP (set by `python build.py test`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for entry in (ROOT, ROOT / "tests", ROOT / "tests" / "blender"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

import build  # noqa: E402

STRIDE = build.install_extension()  # before bpy is imported: into a throwaway user folder

import bpy  # noqa: E402
import reports  # noqa: E402  (tests/blender: after sys.path has it)

reports.watch()  # every report of Stride's operators, for test_messages' last test


@pytest.fixture(autouse=True)
def _reports_name_their_test(request):
    reports.TEST[0] = request.node.nodeid


def pytest_collection_modifyitems(items):
    """The check of every report the tests made runs last, after the tests that made them."""
    last = [item for item in items if item.name == reports.LAST_TEST]
    items[:] = [item for item in items if item.name != reports.LAST_TEST] + last


@pytest.fixture(scope="session")
def stride():
    """The installed extension package (bl_ext.user_default.stride)."""
    return STRIDE


@pytest.fixture(scope="session")
def rig_folder(tmp_path_factory):
    """Where each test rig (tests/blender/rigs.py) is built once a session and saved;
    rigs.open_rig opens a fresh copy."""
    return tmp_path_factory.mktemp("rigs")


@pytest.fixture
def scene():
    """An empty scene (the extension stays enabled), 24 fps, frame_start 1."""
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    assert sc is not None
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start = 1
    return sc


# The bpy 4.2 module crashes in C++ static destructors after Python has shut down once Blender's
# glTF exporter has run (a SpaceType's destructor frees a Python class without an interpreter:
# PyGILState_Ensure on a null interpreter; seen in 4.2.23, not 4.5-5.2), turning a passing run's
# exit code into 139. On 4.2 the run leaves with its own exit code once pytest has reported.
_EXIT = {"status": 0}


def pytest_sessionfinish(session, exitstatus):
    _EXIT["status"] = int(exitstatus)


def pytest_unconfigure(config):
    if bpy.app.version < (4, 5, 0):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])
