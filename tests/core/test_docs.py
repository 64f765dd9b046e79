"""The README stays short and true; the docs' links lead somewhere.

The README quotes the demo's output: its clip table (no Blender needed) must be what
samples/demo.py's clip_summary prints today; the steps table is checked in every Blender version by
tests/blender/test_demo.py. Every relative link in the README, docs/ and CHANGELOG.md must name a
file of the repo and, with a `#fragment`, a heading of it (GitHub's anchors).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from samples import demo

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
MANUAL = ("animators.md", "batch.md", "api.md", "benchmarks.md", "architecture.md")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (outside fenced code)."""
    found: set[str] = set()
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


def test_the_readme_is_short_and_points_to_the_manual():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for command in ("python build.py demo", "python build.py test"):
        assert command in readme
    for page in MANUAL:
        assert (ROOT / "docs" / page).is_file()
        assert f"(docs/{page})" in readme
    assert "(CHANGELOG.md)" in readme


def test_the_readmes_clip_table_is_what_the_demo_prints_today():
    quoted, _ = demo.readme_tables((ROOT / "README.md").read_text())
    assert quoted == demo.clip_summary(), "the README's clip table differs: `python build.py demo` prints it"


def test_anchors_read_as_github_makes_them():
    page = ROOT / "docs" / "api.md"
    assert "contacts-and-footsteps-corecontactspy" in anchors(page)
    assert "foot-locking-corefootlockpy-coreikpy" in anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file_and_heading(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        name, _, fragment = target.partition("#")
        path = (page.parent / name).resolve() if name else page
        assert path.exists(), f"{page.name} links to {target}, which is not there"
        if fragment:
            assert fragment in anchors(path), f"{page.name} links to {target}: no such heading"
