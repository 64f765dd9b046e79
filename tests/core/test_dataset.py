"""Dataset export: schema, parallel == serial, resumable after a kill, bad files reported."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fixtures import CMU, cmu_path

from core import bvh, contacts, dataset, events

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["02_03", "09_01", "02_02", "131_01"]


def copy_clips(names, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(cmu_path(name), folder / f"{name}.bvh")
    return folder


def test_npz_holds_the_schema_with_values_from_the_core(tmp_path):
    out = dataset.export_one(cmu_path("02_03"), tmp_path)
    clip = bvh.load(cmu_path("02_03"))
    steps = contacts.footsteps(clip)
    with np.load(out) as data:
        assert list(data["names"]) == clip.names
        assert data["parents"].tolist() == clip.parents.tolist()
        assert float(data["fps"]) == 120.0 and int(data["motion_start"]) == 1
        assert float(data["meters_per_unit"]) == clip.meters_per_unit
        np.testing.assert_array_equal(data["rotations"], clip.rotations)
        np.testing.assert_allclose(data["world_positions"], clip.fk()[1] * clip.meters_per_unit, atol=1e-12)
        assert list(data["contact_feet"]) == ["L", "R"] and data["contacts"].shape == (clip.n_frames, 2)
        assert sorted(data["event_tracks"]) == sorted(steps)
        for track, times in steps.items():
            sin, cos = events.encode(clip.times, times, 0.5, 1 / 120)
            np.testing.assert_array_equal(data[f"event_{track}"], np.stack([sin, cos], axis=1))
            np.testing.assert_array_equal(data[f"event_{track}_times"], times)
        assert float(data["event_window"]) == 0.5 and float(data["event_sigma"]) == 1 / 120
        np.testing.assert_allclose(data["phase"], contacts.phase(clip, steps))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["02_03.npz"]


def test_two_workers_write_what_the_serial_run_writes(tmp_path):
    src = copy_clips(SMALL, tmp_path / "src")
    serial = dataset.export([src], tmp_path / "serial", workers=1)
    parallel = dataset.export([src], tmp_path / "parallel", workers=2)
    assert len(serial.written) == len(parallel.written) == len(SMALL) and not parallel.failed
    for a, b in zip(serial.written, parallel.written, strict=True):
        assert a.name == b.name
        with np.load(a) as x, np.load(b) as y:
            assert sorted(x.files) == sorted(y.files)
            for key in x.files:
                np.testing.assert_array_equal(x[key], y[key], err_msg=f"{a.name}:{key}")


def test_a_killed_run_resumes_without_redoing_done_files(tmp_path):
    src = copy_clips(sorted(CMU), tmp_path / "src")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "core.dataset", str(src), "--out", str(out),
                             "--workers", "1", "--quiet"], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(out.glob("*.npz"))) < 2:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    done = {p.name: p.stat().st_mtime_ns for p in out.glob("*.npz")}
    assert 2 <= len(done) < len(CMU), "the run should have been killed midway"
    report = dataset.export([src], out, workers=1)
    assert sorted(p.name for p in report.skipped) == sorted(done)
    assert len(report.written) == len(CMU) - len(done) and not report.failed
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.npz") if p.name in done} == done
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.npz" for n in CMU)  # no temp files
    # Other settings redo everything.
    again = dataset.export([src], out, settings=dataset.Settings(window=0.4), workers=1)
    assert len(again.written) == len(CMU) and not again.skipped


def test_a_bad_file_is_reported_and_the_rest_are_written(tmp_path, capsys):
    src = copy_clips(["09_01", "02_03"], tmp_path / "src")
    (src / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n")
    code = dataset.main([str(src), "--out", str(tmp_path / "out"), "--workers", "2"])
    assert code == 1
    captured = capsys.readouterr()
    assert "broken.bvh, line 4: file ends inside the HIERARCHY" in captured.err
    assert "2 written, 0 already done, 1 failed" in captured.out
    assert sorted(p.name for p in (tmp_path / "out").glob("*.npz")) == ["02_03.npz", "09_01.npz"]


def test_npz_loads_with_plain_numpy(tmp_path):
    out = dataset.export_one(cmu_path("09_01"), tmp_path)
    with np.load(out, allow_pickle=False) as data:
        assert data["rotations"].dtype == np.float64 and data["names"].dtype.kind == "U"


def test_cli_help_runs():
    with pytest.raises(SystemExit) as exc:
        dataset.main(["--help"])
    assert exc.value.code == 0
