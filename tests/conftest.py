"""Shared pytest setup: the repo on sys.path, cached CMU clips."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT, ROOT / "tests"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from fixtures import CMU, cmu_path  # noqa: E402,F401  (re-exported for older imports)


@pytest.fixture(scope="session")
def cmu_clips():
    """Loaded CMU clips by name, cached for the session (treat as read-only)."""
    from core import bvh

    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = bvh.load(cmu_path(name))
        return cache[name]

    return get
