"""Packs for training: windows, features, statistics, split and mirroring against the core's own
clip-level answers (root.character_positions, root.trajectory, axes.mirror, resample) and hand counts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures import ROOT, cmu_path

from core import axes, bvh, contacts, dataset, events, pack, quat, resample, root

TAKES = ["02_03", "09_01", "02_02", "02_01"]  # one hierarchy; subjects 02 and 09
N, K = 40, 25


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("pack")
    src = base / "src"
    src.mkdir()
    for name in TAKES:
        shutil.copy(cmu_path(name), src / f"{name}.bvh")
    report = dataset.export([src], base / "dataset", workers=1)
    assert len(report.written) == len(TAKES)
    return base / "dataset"


def load(folder: Path, split: str) -> dict[str, np.ndarray]:
    """Every array of a split's files, concatenated in file order."""
    parts = sorted(folder.glob(f"{split}-*.npz"))
    out: dict[str, list[np.ndarray]] = {}
    for part in parts:
        with np.load(part) as d:
            for k in d.files:
                out.setdefault(k, []).append(d[k])
    return {k: np.concatenate(v) for k, v in out.items()}


def windows_of(manifest: dict, split: str) -> list[tuple[str, int, bool]]:
    """(take file, start frame, mirrored) of every window of a split, in file order."""
    out = []
    for f in manifest["files"]:
        if f["split"] == split:
            for take, first, count, mirrored in f["runs"]:
                out += [(manifest["takes"][take]["file"], first + K * k, mirrored) for k in range(count)]
    return out


def same_up_to_sign(a: np.ndarray, b: np.ndarray, atol: float) -> None:
    sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    np.testing.assert_allclose(a * sign, b, atol=atol)


def test_windows_and_features_match_the_clips(exported, tmp_path):
    manifest = pack.pack(exported, tmp_path, window=N, stride=K)
    got = load(tmp_path, "train")
    where = windows_of(manifest, "train")
    # floor((T - motion_start - N) / K) + 1 windows per take: 02_03 has 174 frames from frame 1.
    counts = {t["file"]: t["windows"] for t in manifest["takes"]}
    assert counts["02_03.npz"] == (174 - 1 - N) // K + 1 == 6
    for name in TAKES:
        clip = bvh.load(cmu_path(name))
        assert counts[f"{name}.npz"] == (clip.n_frames - clip.motion_start - N) // K + 1
    assert len(where) == sum(counts.values()) == got["rotations"].shape[0]
    assert sorted(f for f in got) == sorted(["rotations", "positions", "root_velocity", "contacts", "phase",
                                             "event_FootDown_L", "event_FootDown_R"])
    for key, value in got.items():
        assert value.shape[:2] == (len(where), N) and value.dtype != object, key
        assert list(value.shape[2:]) == manifest["features"][key]["shape"][1:], key
    clip = bvh.load(cmu_path("02_03"))
    mpu = clip.meters_per_unit
    rows = [i for i, (f, _, _) in enumerate(where) if f == "02_03.npz"]
    assert [where[i][1] for i in rows] == [1, 26, 51, 76, 101, 126]
    character = root.character_positions(clip) * mpu  # Y up: (side, up, forward) is (x, y, z)
    traj = root.trajectory(clip)
    fwd = np.stack([np.sin(traj.heading), np.zeros(clip.n_frames), np.cos(traj.heading)], axis=1)
    side = np.cross([0.0, 1.0, 0.0], fwd)
    step = np.diff(traj.position, axis=0) * clip.fps * mpu
    velocity = np.stack([np.sum(step * side[:-1], axis=1), np.sum(step * fwd[:-1], axis=1),
                         np.diff(traj.heading) * clip.fps], axis=1)
    planted = contacts.contacts(clip)
    steps = contacts.footsteps(clip)
    phase = contacts.phase(clip, steps)
    for i in rows:
        s = where[i][1]
        frames = slice(s, s + N)
        np.testing.assert_allclose(got["positions"][i], character[frames], atol=1e-9)
        same_up_to_sign(got["rotations"][i], clip.rotations[frames], 1e-12)
        q = got["rotations"][i]
        assert (q[0, :, 0] >= 0).all() and (np.sum(q[1:] * q[:-1], axis=-1) >= 0).all()
        np.testing.assert_allclose(got["root_velocity"][i], velocity[frames], atol=1e-9)
        np.testing.assert_array_equal(got["contacts"][i], np.stack([planted["L"], planted["R"]], 1)[frames])
        np.testing.assert_allclose(got["phase"][i], np.stack([np.sin(phase), np.cos(phase)], 1)[frames])
        sin, cos = events.encode(clip.times, steps["FootDown_R"], 0.5, 1 / 120)
        np.testing.assert_array_equal(got["event_FootDown_R"][i], np.stack([sin, cos], 1)[frames])


def test_statistics_are_over_the_training_windows(exported, tmp_path):
    manifest = pack.pack(exported, tmp_path, window=N, stride=K, splits={"val": 0.5},
                         group_by=r"^(\d+)_", seed=3, file_bytes=400_000)
    assert {t["file"] for t in manifest["takes"] if t["split"] == "val"} == {"09_01.npz"}
    train = load(tmp_path, "train")
    assert len(list(tmp_path.glob("train-*.npz"))) > 1  # small files: the split spans several
    for key, value in train.items():
        x = value.astype(np.float64)
        mean, std = x.mean(axis=(0, 1)), x.std(axis=(0, 1))
        np.testing.assert_allclose(manifest["features"][key]["mean"], mean, atol=1e-10, err_msg=key)
        np.testing.assert_allclose(manifest["features"][key]["std"], std, atol=1e-10, err_msg=key)
    on_disk = json.loads((tmp_path / "manifest.json").read_text())
    assert on_disk["features"]["positions"]["mean"] == manifest["features"]["positions"]["mean"]


def test_the_split_keeps_each_group_on_one_side(exported, tmp_path):
    manifest = pack.pack(exported, tmp_path, window=N, stride=K, splits={"val": 0.5}, group_by=r"^(\d+)_",
                         seed=3, file_bytes=2_000_000)
    split = {t["file"]: t["split"] for t in manifest["takes"]}
    groups = {t["file"]: t["group"] for t in manifest["takes"]}
    assert groups == {"02_01.npz": "02", "02_02.npz": "02", "02_03.npz": "02", "09_01.npz": "09"}
    # Two groups, half to val: one group each side, whole.
    assert {split[f] for f in split if groups[f] == "02"} != {split[f] for f in split if groups[f] == "09"}
    assert all(len({split[f] for f in split if groups[f] == g}) == 1 for g in ("02", "09"))
    for name in ("train", "val"):
        files = [w[0] for w in windows_of(manifest, name)]
        assert files and {split[f] for f in files} == {name}
        assert len(files) == manifest["splits"][name]["windows"] == load(tmp_path, name)["phase"].shape[0]
    assert sorted(p.name for p in tmp_path.iterdir())[-1] == "val-000.npz"
    # By take: the seed decides, each take whole on one side.
    by_take = pack.pack(exported, tmp_path, window=N, stride=K, splits={"val": 0.25}, seed=1)
    assert sum(t["split"] == "val" for t in by_take["takes"]) == 1
    assert pack.assign_splits(["a", "b", "c", "d"], {"val": 0.25}, 1) == \
        pack.assign_splits(["d", "c", "b", "a"], {"val": 0.25}, 1)


def test_mirrored_windows_are_the_mirrored_take(exported, tmp_path):
    manifest = pack.pack(exported, tmp_path, window=N, stride=K, mirror=True)
    got = load(tmp_path, "train")
    where = windows_of(manifest, "train")
    clip = bvh.load(cmu_path("02_03"))
    plain = {s: i for i, (f, s, m) in enumerate(where) if f == "02_03.npz" and not m}
    flipped = {s: i for i, (f, s, m) in enumerate(where) if f == "02_03.npz" and m}
    assert sorted(plain) == sorted(flipped) and len(flipped) == 6
    partner = axes.partners(clip.names)
    mirror = axes.mirror(clip)
    character = root.character_positions(mirror) * clip.meters_per_unit
    for s in plain:
        a, b = plain[s], flipped[s]
        # By hand: the other side's joint, its side coordinate negated; feet and events swap.
        swapped = got["positions"][a][:, partner] * [-1, 1, 1]
        np.testing.assert_allclose(got["positions"][b], swapped, atol=1e-9)
        np.testing.assert_allclose(got["root_velocity"][b], got["root_velocity"][a] * [-1, 1, -1], atol=1e-9)
        np.testing.assert_array_equal(got["contacts"][b], got["contacts"][a][:, ::-1])
        np.testing.assert_allclose(got["phase"][b], -got["phase"][a], atol=1e-12)
        np.testing.assert_array_equal(got["event_FootDown_L"][b], got["event_FootDown_R"][a])
        # And what axes.mirror makes of the clip.
        np.testing.assert_allclose(got["positions"][b], character[s:s + N], atol=1e-9)
        same_up_to_sign(got["rotations"][b], mirror.rotations[s:s + N], 1e-12)


def test_fps_resamples_before_windowing(exported, tmp_path):
    manifest = pack.pack(exported, tmp_path, window=N, stride=K, fps=30.0, float32=True)
    got = load(tmp_path, "train")
    clip = resample.resample(bvh.load(cmu_path("02_03")), 30.0)
    take = next(t for t in manifest["takes"] if t["file"] == "02_03.npz")
    assert take["frames"] == clip.n_frames == 44 and take["motion_start"] == clip.motion_start == 1
    assert take["windows"] == 1 == (44 - 1 - N) // K + 1
    i = next(i for i, (f, _, _) in enumerate(windows_of(manifest, "train")) if f == "02_03.npz")
    assert got["rotations"].dtype == np.float32 and got["contacts"].dtype == bool
    same_up_to_sign(got["rotations"][i].astype(np.float64), clip.rotations[1:1 + N], 1e-6)
    steps = contacts.footsteps(bvh.load(cmu_path("02_03")))
    sin, cos = events.encode(clip.times, steps["FootDown_L"], 0.5, 1 / 120)
    np.testing.assert_allclose(got["event_FootDown_L"][i], np.stack([sin, cos], 1)[1:1 + N], atol=1e-6)
    assert quat.angle(got["rotations"][i][0, 0].astype(np.float64), clip.rotations[1, 0]) < 1e-3


def test_pack_cli_refuses_bad_splits_and_writes_a_pack(exported, tmp_path):
    with pytest.raises(SystemExit):
        pack.main([str(exported), "--out", str(tmp_path), "--window", "4", "--stride", "2",
                   "--split", "val=1.5"])
    # As users run it: `python -m core.dataset pack ...`.
    out = subprocess.run([sys.executable, "-m", "core.dataset", "pack", str(exported), "--out", str(tmp_path),
                          "--window", "200", "--stride", "100", "--split", "val=0.25", "--seed", "2"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "pack: train" in out.stdout, out.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["settings"]["window"] == 200 and manifest["splits"]["val"]["takes"] == 1
    assert [t["windows"] for t in manifest["takes"]] == [(T - 1 - 200) // 100 + 1 if T - 1 >= 200 else 0
                                                          for T in (344, 299, 174, 149)]


def test_a_new_pack_replaces_the_old_one_and_nothing_else(exported, tmp_path):
    pack.pack(exported, tmp_path, window=N, stride=K, splits={"val": 0.25}, file_bytes=400_000)
    assert len(list(tmp_path.glob("train-*.npz"))) > 1
    (tmp_path / "notes-001.npz").write_bytes(b"mine")
    manifest = pack.pack(exported, tmp_path, window=N, stride=K)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "notes-001.npz", "train-000.npz"]
    assert [f["file"] for f in manifest["files"]] == ["train-000.npz"]
    with pytest.raises(ValueError, match="another folder"):
        pack.pack(exported, exported, window=N, stride=K)
    with pytest.raises(ValueError, match="--split"):
        pack.pack(exported, tmp_path, window=N, stride=K, splits={"../x": 0.1})
