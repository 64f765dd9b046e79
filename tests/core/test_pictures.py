"""The docs' pictures show what the core computes today.

docs/pictures.json holds, per picture, the fingerprint of the numbers it plots and the hash of the
PNG drawn from them (samples/pictures.py writes both). Here the numbers are worked out again with
today's core (no drawing, no matplotlib: about 2 s for all ten) and compared with the manifest, and
each PNG with the hash the manifest holds for it. When one fails, the maths changed what a picture
shows: `.venv/bin/python -m samples.pictures` draws them all again into docs/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from samples import pictures

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REDRAW = ("the core computes other numbers for it today: `.venv/bin/python -m samples.pictures` draws "
          "docs/ again")


@pytest.fixture(scope="module")
def manifest() -> dict[str, dict[str, str]]:
    return pictures.read_manifest(DOCS)


def test_every_docs_picture_is_made_by_samples_pictures_and_listed(manifest):
    made = {p.file for p in pictures.PICTURES}
    assert {p.name for p in DOCS.glob("*.png")} == made
    assert set(manifest) == made


def test_every_docs_picture_is_the_file_drawn_with_its_numbers(manifest):
    for name, entry in manifest.items():
        assert pictures.file_hash(DOCS / name) == entry["png"], f"docs/{name} is not the picture drawn " \
                                                                "with the manifest's numbers"
        assert entry["shows"] == next(p.shows for p in pictures.PICTURES if p.file == name)


@pytest.mark.parametrize("picture", pictures.PICTURES, ids=lambda p: p.file)
def test_each_docs_picture_shows_what_the_core_computes_today(picture, manifest):
    assert pictures.fingerprint(picture.numbers()) == manifest[picture.file]["numbers"], \
        f"docs/{picture.file}: {REDRAW}"


def test_a_fingerprint_sees_what_a_picture_would_show_and_not_rounding():
    rng = np.random.default_rng(7)
    curve = np.cumsum(rng.normal(size=500))
    numbers: dict[str, Any] = {"t": np.arange(500) / 120, "curve": curve, "planted": curve > 0,
                               "label": "walk"}
    same = pictures.fingerprint(numbers)
    # Rounding between numpy versions (measured: at most 3e-13 of an array's largest value) is
    # not seen; a thousandth of it (a pixel), a flipped contact, a word or a moved key are.
    assert pictures.fingerprint({**numbers, "curve": curve * (1 + 1e-12)}) == same
    assert pictures.fingerprint({**numbers, "curve": curve + 1e-12 * np.abs(curve).max()}) == same
    nudged = curve.copy()
    nudged[250] += 1e-3 * np.abs(curve).max()
    assert pictures.fingerprint({**numbers, "curve": nudged}) != same
    assert pictures.fingerprint({**numbers, "curve": curve * 1.001}) != same
    flipped = numbers["planted"].copy()
    flipped[3] = not flipped[3]
    assert pictures.fingerprint({**numbers, "planted": flipped}) != same
    assert pictures.fingerprint({**numbers, "label": "run"}) != same
    renamed = {"time": numbers["t"], **{k: v for k, v in numbers.items() if k != "t"}}
    assert pictures.fingerprint(renamed) != same
    assert pictures.fingerprint({**numbers, "curve": np.where(np.arange(500) == 9, np.nan, curve)}) != same


def test_every_picture_the_docs_show_is_a_docs_picture(manifest):
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    shown = set()
    for page in pages:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text()):
            path = (page.parent / target).resolve()
            assert path.is_file(), f"{page.name} shows {target}, which is not there"
            shown.add(path.relative_to(DOCS).as_posix())
    assert shown <= set(manifest)
