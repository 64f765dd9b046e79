"""Test data shared by every suite: the CMU clips copied into the repo.

A missing file fails the tests that use it, never skips them.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CMU_DIR = DATA / "cmu"
# Every fixture file by clip name; tests that loop over "all CMU files" use this list, so a file
# that goes missing fails them instead of shrinking them.
CMU = {
    "01_01": "cmu_01/01_01.bvh",
    "131_01": "cmu_131/131_01.bvh",
    "131_02": "cmu_131/131_02.bvh",
    "131_03": "cmu_131/131_03.bvh",
    "02_01": "subject02/02_01.bvh",
    "02_02": "subject02/02_02.bvh",
    "02_03": "subject02/02_03.bvh",
    "09_01": "subject09/09_01.bvh",
    "09_12": "subject09/09_12.bvh",
}


def cmu_path(name: str) -> Path:
    """Path of a CMU fixture by clip name ('02_01'); fails the test when the file is missing."""
    path = CMU_DIR / CMU[name]
    if not path.is_file():
        pytest.fail(f"missing test fixture {path} (copy it from ../shared/bvh/)")
    return path


BANDAI_DIR = DATA / "bandai"


def bandai_path(name: str) -> Path:
    """Path of a Bandai take by file stem ('dataset-1_walk_normal_001'); fails when missing."""
    path = BANDAI_DIR / f"{name}.bvh"
    if not path.is_file():
        pytest.fail(f"missing test fixture {path} (copy it from ../shared/bvh-bandai/)")
    return path


def take_path(name: str) -> Path:
    """A CMU clip name ('02_01') or a Bandai file stem."""
    return cmu_path(name) if name in CMU else bandai_path(name)


# The hand-labelled touchdown frames (tests/data/footsteps/README.md) and the frame rate each file
# counts them in: CMU takes at 120 fps, the Bandai takes at 30.
TOUCHDOWN_LABELS = {"footsteps.csv": 120.0, "footsteps_bandai.csv": 30.0}


def labelled_touchdowns() -> dict[str, dict[str, np.ndarray]]:
    """{take: {"L": seconds, "R": seconds}}: every hand-labelled touchdown of the CMU and Bandai
    takes, sorted, as file frame / the take's frame rate."""
    out: dict[str, dict[str, list[float]]] = {}
    for name, fps in TOUCHDOWN_LABELS.items():
        path = DATA / name
        if not path.is_file():
            pytest.fail(f"missing test data {path}")
        with path.open(newline="") as f:
            rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")][1:]
        for clip, foot, frame in rows:
            out.setdefault(clip, {"L": [], "R": []})[foot].append(int(frame) / fps)
    return {clip: {foot: np.sort(np.array(t)) for foot, t in feet.items()} for clip, feet in out.items()}
