"""Dataset export: schema, engines and shards write the same files, resumable after a kill on any
engine, bad files reported, quality flags against hand counts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import variants as V
from fixtures import CMU, DATA, cmu_path

from core import axes, bvh, contacts, dataset, events
from core.clip import Clip

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["02_03", "09_01", "02_02", "131_01"]
# Running takes' footsteps are closer than two event windows: every export of one says so
# (test_export_names_the_take_track_and_gap... checks what it says).
pytestmark = pytest.mark.filterwarnings("ignore::core.events.EventWarning")
BANDAI = DATA / "bandai"


def copy_clips(names, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(cmu_path(name), folder / f"{name}.bvh")
    return folder


def test_npz_holds_the_schema_with_values_from_the_core(tmp_path):
    with pytest.warns(events.EventWarning, match="02_03.bvh: FootDown_"):  # a run: steps < 2 windows apart
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


def test_export_names_the_take_track_and_gap_where_events_are_closer_than_two_windows(tmp_path, capsys):
    # The run 02_03 steps every 0.80-0.81 s with each foot, under two windows of 0.5 s; the walk
    # 02_01 every 1.1 s.
    src = copy_clips(["02_03", "02_01"], tmp_path / "in")
    assert dataset.main([str(src), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("dataset: warning:")]
    assert len(lines) == 2 and all("02_03.bvh" in line for line in lines)
    assert "FootDown_L: 1 gap between events under two windows (1 s), the shortest 0.807 s from the " \
           "event at 0.460 s: there the encoding decodes exactly only 0.307 s either side" in lines[0]
    assert "FootDown_R" in lines[1] and "0.804 s" in lines[1]
    report = dataset.export([src], tmp_path / "again", workers=1)
    assert [(p.name, m.split(": ")[1]) for p, m in report.warned] == [("02_03.bvh", "FootDown_L"),
                                                                      ("02_03.bvh", "FootDown_R")]
    assert "2 event warnings" in report.summary()
    assert not dataset.export([src], tmp_path / "again", workers=1).warned  # done: nothing redone


def test_the_schema_version_names_the_event_encoding(tmp_path):
    with np.load(dataset.export_one(cmu_path("02_01"), tmp_path)) as data:
        assert int(data["schema_version"]) == dataset.SCHEMA_VERSION == 3


@pytest.fixture(scope="module")
def dask_cluster():
    """Two Dask workers as threads of this process: starts and stops in well under a second."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield cluster, client


def same_files(a: Path, b: Path) -> list[str]:
    """The .npz names both folders hold, after checking they hold the same arrays, byte for byte."""
    names = sorted(p.name for p in a.glob("*.npz"))
    assert names == sorted(p.name for p in b.glob("*.npz"))
    for name in names:
        with np.load(a / name) as x, np.load(b / name) as y:
            assert list(x.files) == list(y.files)
            for key in x.files:
                assert x[key].dtype == y[key].dtype and x[key].dtype != object
                np.testing.assert_array_equal(x[key], y[key], err_msg=f"{name}:{key}")
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    return names


def test_dask_with_two_workers_writes_what_the_local_pool_writes(tmp_path, dask_cluster):
    src = copy_clips(SMALL, tmp_path / "src")
    local = dataset.export([src], tmp_path / "local", workers=2)
    _, client = dask_cluster
    on_dask = dataset.export([src], tmp_path / "dask", executor=client.get_executor(), workers=2)
    assert len(on_dask.written) == len(SMALL) and not on_dask.failed and not local.failed
    assert same_files(tmp_path / "local", tmp_path / "dask") == sorted(f"{n}.npz" for n in SMALL)
    manifests = [(tmp_path / run / "manifest.json").read_bytes() for run in ("local", "dask")]
    assert manifests[0] == manifests[1]


def test_dask_cli_runs_on_a_scheduler_address(tmp_path, dask_cluster):
    src = copy_clips(["02_03", "09_01"], tmp_path / "src")
    cluster, _ = dask_cluster
    code = dataset.main([str(src), "--out", str(tmp_path / "out"), "--engine", "dask",
                         "--scheduler", cluster.scheduler_address, "--quiet"])
    assert code == 0
    dataset.export([src], tmp_path / "want", workers=1)
    assert same_files(tmp_path / "out", tmp_path / "want") == ["02_03.npz", "09_01.npz"]


def test_three_shards_write_exactly_the_unsharded_set(tmp_path):
    names = ["02_03", "09_01", "02_02", "02_01"]
    src = copy_clips(names, tmp_path / "src")
    for bandai in ("dataset-1_walk_normal_002.bvh", "dataset-1_run_normal_001.bvh", "LICENSE"):
        shutil.copy(BANDAI / bandai, src / bandai)
    whole = dataset.export([src], tmp_path / "whole", workers=1)
    shards = [dataset.export([src], tmp_path / "sharded", workers=1, shard=(i, 3)) for i in (1, 2, 3)]
    got = [sorted(p.name for p in r.written) for r in shards]
    assert sorted(n for g in got for n in g) == sorted(p.name for p in whole.written)
    assert len(whole.written) == 6
    assert all(len(g) == 2 for g in got)  # 6 files, every third from the first, second and third
    assert not set(got[0]) & set(got[1]) and not set(got[1]) & set(got[2])
    assert not (tmp_path / "sharded" / "manifest.json").exists()  # never written by a shard
    same_files(tmp_path / "whole", tmp_path / "sharded")
    assert dataset.main(["manifest", str(tmp_path / "nowhere")]) == 2
    assert dataset.main(["manifest", str(tmp_path / "sharded")]) == 0
    manifests = [(tmp_path / run / "manifest.json").read_bytes() for run in ("whole", "sharded")]
    assert manifests[0] == manifests[1]
    # A shard run again finds its own files done, and none of the other shards'.
    again = dataset.export([src], tmp_path / "sharded", workers=1, shard=(2, 3))
    assert sorted(p.name for p in again.skipped) == got[1] and not again.written


def test_shard_arguments_are_checked():
    for bad in ("0/3", "4/3", "1-3", "x/2"):
        with pytest.raises(ValueError, match="I/N"):
            dataset.parse_shard(bad)
    assert dataset.parse_shard(" 2 / 8 ") == (2, 8)


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


def test_a_killed_run_resumes_on_another_engine_without_redoing_done_files(tmp_path, dask_cluster):
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
    _, client = dask_cluster
    report = dataset.export([src], out, executor=client.get_executor(), workers=2)
    assert sorted(p.name for p in report.skipped) == sorted(done)
    assert len(report.written) == len(CMU) - len(done) and not report.failed
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.npz") if p.name in done} == done
    # No temp files; the manifest lists every take.
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}.npz" for n in CMU] + ["manifest.json"])
    # Other settings redo everything.
    again = dataset.export([src], out, settings=dataset.Settings(window=0.4), workers=1)
    assert len(again.written) == len(CMU) and not again.skipped


@pytest.mark.parametrize("engine", ["serial", "local", "dask"])
def test_a_bad_file_fails_alone_on_every_engine(engine, tmp_path, capsys, dask_cluster):
    src = copy_clips(["09_01", "02_03"], tmp_path / "src")
    (src / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n")
    args = [str(src), "--out", str(tmp_path / "out")]
    args += {"serial": ["--workers", "1"], "local": ["--workers", "2"],
             "dask": ["--engine", "dask", "--scheduler", dask_cluster[0].scheduler_address]}[engine]
    code = dataset.main(args)
    assert code == 1
    captured = capsys.readouterr()
    assert "broken.bvh, line 4: file ends inside the HIERARCHY" in captured.err
    assert "2 written, 0 already done, 1 failed, 0 excluded" in captured.out
    assert sorted(p.name for p in (tmp_path / "out").glob("*.npz")) == ["02_03.npz", "09_01.npz"]


def test_npz_loads_with_plain_numpy(tmp_path):
    out = dataset.export_one(cmu_path("09_01"), tmp_path)
    with np.load(out, allow_pickle=False) as data:
        assert data["rotations"].dtype == np.float64 and data["names"].dtype.kind == "U"


def test_cli_help_runs():
    with pytest.raises(SystemExit) as exc:
        dataset.main(["--help"])
    assert exc.value.code == 0


# -- quality flags ----------------------------------------------------------------------------------

LEGS = ["Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "RightUpLeg", "RightLeg", "RightFoot",
        "RightToeBase", "Spine", "Head"]
PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9]
FPS = 30.0


def two_legs(ankles: np.ndarray, hips: np.ndarray) -> Clip:
    """A Y-up skeleton in meters, facing +Z, whose hips are at hips [T, 3] and whose ankles are
    at ankles [T, 2, 3] (L, R): each ankle is carried by its own translation, so the feet go where
    they are told whatever the hips do. The toes' tips sit 6 cm below the ankles."""
    offsets = np.array([[0, 0.9, 0], [0.1, 0, 0], [0, -0.42, 0], [0, -0.4, 0], [0, -0.04, 0.12],
                        [-0.1, 0, 0], [0, -0.42, 0], [0, -0.4, 0], [0, -0.04, 0.12],
                        [0, 0.3, 0], [0, 0.4, 0]])
    T = len(hips)
    positions = np.broadcast_to(offsets, (T, len(LEGS), 3)).copy()
    positions[:, 0] = hips
    for k, (knee, ankle) in enumerate([(2, 3), (6, 7)]):
        knee_world = hips + offsets[knee - 1] + offsets[knee]
        positions[:, ankle] = ankles[:, k] - knee_world
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * len(LEGS)
    rotations = np.tile([1.0, 0, 0, 0], (T, len(LEGS), 1))
    return Clip(LEGS, PARENTS, offsets, rotations, positions, FPS, channels=channels,
                end_parents=[4, 8, 10],
                end_offsets=np.array([[0, -0.02, 0.05], [0, -0.02, 0.05], [0, 0.1, 0]]),
                up=[0, 1, 0], forward=[0, 0, 1], meters_per_unit=1.0, motion_start=0)


def standing(T: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Hips swaying 10 cm side to side once a second (0.63 m/s at the middle) over feet that stay."""
    t = np.arange(T) / FPS
    hips = np.stack([0.1 * np.sin(2 * np.pi * t), np.full(T, 0.9), np.zeros(T)], axis=1)
    ankles = np.tile([[[0.1, 0.08, 0.0], [-0.1, 0.08, 0.0]]], (T, 1, 1))
    return ankles, hips


def test_skating_counts_steps_of_low_fast_foot_points():
    # One foot, one point, 1 cm above the floor; moving along the floor at these speeds per step.
    speeds = np.array([0.0, 0.49, 0.51, 1.0, 0.51, 0.0, 2.0])  # m/s
    heights = np.array([0.0, 0.01, 0.01, 0.049, 0.049, 0.051, 0.051, 0.01])  # per frame, m
    x = np.concatenate([[0.0], np.cumsum(speeds / FPS)])
    points = np.stack([x, heights, np.zeros(8)], axis=1)[:, None, None]
    # Step by step: still, too slow, counts, counts (4.9 cm), 0.051 m at its end, still, 0.051 m at
    # its start: two steps of seven.
    assert dataset.skating_ratio(points, np.array([0.0, 1.0, 0.0]), FPS) == pytest.approx(2 / 7, abs=1e-15)
    # Vertical speed is not skating.
    up_down = np.stack([np.zeros(8), np.linspace(0, 0.04, 8), np.zeros(8)], axis=1)[:, None, None]
    assert dataset.skating_ratio(up_down * 100, np.array([0.0, 1.0, 0.0]), FPS) == 0.0


def test_skating_is_zero_with_feet_locked_and_a_hand_count_on_a_slide():
    ankles, hips = standing()
    locked = dataset.take_arrays(two_legs(ankles, hips))
    assert bool(locked["quality_feet_found"]) and str(locked["quality_feet_from"]) == "names"
    assert float(locked["quality_skating_ratio"]) == 0.0
    assert float(locked["quality_planted_fraction"]) == 1.0 and not bool(locked["quality_airborne"])
    assert not bool(locked["quality_static"])  # the hips move 10 cm
    # The right foot slides on the floor at 1 m/s over steps 20 -> 30, the left slowly (0.3 m/s)
    # over 5 -> 15, and swings at 1 m/s but 20 cm up over 40 -> 50 (lifted at 40, set down at 50).
    slide = ankles.copy()
    slide[20:, 1, 2] += np.minimum(np.arange(40), 10) / FPS
    slide[5:, 0, 2] += np.minimum(np.arange(55), 10) * 0.3 / FPS
    slide[40:50, 0, 1] += 0.2
    slide[40:, 0, 2] += np.minimum(np.arange(20), 10) / FPS
    got = dataset.take_arrays(two_legs(slide, hips))
    # Hand count: the ten steps of the right foot's slide; the lift (39 -> 40) and set-down
    # (49 -> 50) steps have one end high, so they are not on the floor.
    assert float(got["quality_skating_ratio"]) == pytest.approx(10 / 59, abs=1e-15)


def test_a_take_without_feet_is_written_flagged_with_no_contacts(tmp_path, capsys):
    ankles, hips = standing()
    clip = two_legs(ankles, hips)
    chain = Clip(["a", "b", "c"], [-1, 0, 1], clip.offsets[[0, 9, 10]], clip.rotations[:, :3],
                 clip.positions[:, [0, 9, 10]], FPS, channels=[clip.channels[0]] * 3)
    assert clip.legs() is not None and chain.legs() is None
    src = tmp_path / "src"
    src.mkdir()
    bvh.save(chain, src / "chain.bvh")
    bvh.save(clip, src / "legs.bvh")
    report = dataset.export([src], tmp_path / "out", workers=1)
    assert sorted(p.name for p in report.written) == ["chain.npz", "legs.npz"] and not report.failed
    with np.load(tmp_path / "out" / "chain.npz") as data:
        assert data["contacts"].shape == (60, 0) and list(data["contact_feet"]) == []
        assert list(data["event_tracks"]) == [] and np.isnan(data["phase"]).all()
        assert dataset.flags(data) == {"feet_found": False, "feet_from": "", "steps": {}, "cadence": None,
                                       "planted": None, "skating": None, "static": False,
                                       "airborne": False, "licence": ""}
    # Only --exclude drops it; the exit code stays 0.
    code = dataset.main([str(src), "--out", str(tmp_path / "out"), "--exclude", "no-feet", "--quiet"])
    assert code == 0 and "0 written, 1 already done, 0 failed, 1 excluded" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "out").glob("*.npz")) == ["legs.npz"]
    takes = json.loads((tmp_path / "out" / "manifest.json").read_text())["takes"]
    assert [t["file"] for t in takes] == ["legs.npz"]


def test_flags_on_real_takes_and_rules_that_exclude_by_them(tmp_path):
    src = copy_clips(["02_03"], tmp_path / "src")
    (src / "bandai").mkdir()
    for name in ("dataset-1_walk_normal_001.bvh", "LICENSE"):
        shutil.copy(BANDAI / name, src / "bandai" / name)
    report = dataset.export([src], tmp_path / "out", workers=1)
    assert len(report.written) == 2
    clip = bvh.load(cmu_path("02_03"))
    steps = contacts.footsteps(clip)
    planted = contacts.contacts(clip)
    with np.load(tmp_path / "out" / "02_03.npz") as data:
        got = dataset.flags(data)
    assert got["steps"] == {"L": len(steps["FootDown_L"]), "R": len(steps["FootDown_R"])}
    seconds = (clip.n_frames - 1 - clip.motion_start) / clip.fps
    assert got["cadence"] == pytest.approx(60 * sum(map(len, steps.values())) / seconds)
    ms = clip.motion_start
    assert got["planted"] == pytest.approx(np.mean(planted["L"][ms:] | planted["R"][ms:]))
    assert got["licence"] == "" and got["feet_from"] == "names" and not got["static"]
    with np.load(tmp_path / "out" / "dataset-1_walk_normal_001.npz") as data:
        assert dataset.flags(data)["licence"] == "Attribution-NonCommercial 4.0 International"
    # Rules: numbers compare, unknown numbers never match, bad rules are refused.
    assert dataset.excluded_by(got, ["static", f"steps<{sum(got['steps'].values())}"]) is None
    assert dataset.excluded_by(got, ["no-licence"]) == "no-licence"
    assert dataset.excluded_by(got, [f"cadence>={got['cadence']}"]) == f"cadence>={got['cadence']}"
    assert dataset.excluded_by({**got, "skating": None}, ["skating>0"]) is None
    with pytest.raises(ValueError, match="unknown --exclude rule"):
        dataset.check_rule("speed>2")
    # Feet given by the user are flagged as such.
    user = dataset.take_arrays(clip, dataset.Settings(feet=("LeftFoot", "RightFoot")))
    assert str(user["quality_feet_from"]) == "user"
    again = dataset.export([src], tmp_path / "out", workers=1, exclude=["no-licence"])
    assert [p.name for p, _ in again.excluded] == ["02_03.bvh"]
    assert not (tmp_path / "out" / "02_03.npz").exists()


@pytest.mark.parametrize("take", ["cmu", "bandai"])
def test_mirror_partners_from_the_body_map_match_the_names(take):
    clip = bvh.load(cmu_path("02_03") if take == "cmu" else BANDAI / "dataset-1_walk_normal_001.bvh")
    by_names = axes.partners(clip.names)
    assert (by_names != np.arange(clip.n_joints)).sum() >= 12
    np.testing.assert_array_equal(dataset.mirror_partners(clip), by_names)
    nameless, _ = V.renamed(clip, clip.body.legs, None)
    np.testing.assert_array_equal(dataset.mirror_partners(nameless), by_names)
