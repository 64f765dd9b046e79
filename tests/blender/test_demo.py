"""The README's demo table is what the demo makes today.

The demo's steps (samples/demo.py's run_steps: Blender's importer, the operators, the bakes, the
save, the exports) run here, in each Blender version, as `python build.py demo` runs them, into a
temporary folder; the table they make must equal the README's copy in every column but `time s`.
The clip table above it needs no Blender: tests/core/test_docs.py checks it.
"""

from __future__ import annotations

from pathlib import Path

from samples import demo

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_makes_the_steps_table_the_readme_shows(stride, tmp_path):
    _, quoted = demo.readme_tables((ROOT / "README.md").read_text())
    made = demo.run_steps(stride, tmp_path / "out").table()
    assert demo.without_times(made) == demo.without_times(quoted), (
        "the demo's table differs from README.md's: `python build.py demo` prints it\n" + made)
