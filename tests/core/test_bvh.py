"""BVH reading and writing against an independent oracle on the real CMU files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from fixtures import CMU, cmu_path
from scipy.spatial.transform import Rotation

from core import bvh
from core.clip import Clip

# -- an independent reader: tokens and scipy, nothing from core ---------------------------------


def oracle_fk(path: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """(world joint positions [T, J, 3], End Site positions [T, E, 3], frame time) of a
    well-formed BVH file, by a token walk and per-joint scipy rotations."""
    tokens = path.read_text().split()
    assert tokens[0] == "HIERARCHY"
    i = 1
    parents: list[int] = []
    offsets: list[np.ndarray] = []
    channels: list[list[str]] = []
    end_parent: list[int] = []
    end_offset: list[np.ndarray] = []
    stack: list[int] = []
    current = -1
    in_end = False
    while tokens[i] != "MOTION":
        tok = tokens[i]
        if tok in ("ROOT", "JOINT"):
            parents.append(stack[-1] if stack else -1)
            offsets.append(np.zeros(3))
            channels.append([])
            current = len(parents) - 1
            i += 2
        elif tok == "End":
            in_end = True
            end_parent.append(stack[-1])
            end_offset.append(np.zeros(3))
            i += 2
        elif tok == "{":
            stack.append(-2 if in_end else current)
            i += 1
        elif tok == "}":
            stack.pop()
            in_end = False
            i += 1
        elif tok == "OFFSET":
            value = np.array([float(t) for t in tokens[i + 1:i + 4]])
            if in_end:
                end_offset[-1] = value
            else:
                offsets[current] = value
            i += 4
        elif tok == "CHANNELS":
            n = int(tokens[i + 1])
            channels[current] = tokens[i + 2:i + 2 + n]
            i += 2 + n
        else:
            raise AssertionError(f"oracle cannot read token {tok!r}")
    frames = int(tokens[i + 2])
    frame_time = float(tokens[i + 5])
    values = np.array(tokens[i + 6:], dtype=np.float64).reshape(frames, -1)
    T, J = frames, len(parents)
    world_rot: list[Rotation] = []
    world_pos = np.zeros((T, J, 3))
    col = 0
    for j in range(J):
        translation = np.repeat(offsets[j][None], T, axis=0)
        rot_axes, rot_cols = "", []
        pos_axes = [c for c in channels[j] if c.endswith("position")]
        if pos_axes:
            translation[:] = 0.0
        for c in channels[j]:
            if c.endswith("position"):
                translation[:, "XYZ".index(c[0])] = values[:, col]
            else:
                rot_axes += c[0]
                rot_cols.append(col)
            col += 1
        local = (Rotation.from_euler(rot_axes.upper(), values[:, rot_cols], degrees=True)
                 if rot_axes else Rotation.identity(T))
        p = parents[j]
        if p < 0:
            world_rot.append(local)
            world_pos[:, j] = translation
        else:
            world_rot.append(world_rot[p] * local)
            world_pos[:, j] = world_pos[:, p] + world_rot[p].apply(translation)
    ends = np.stack([world_pos[:, p] + world_rot[p].apply(np.repeat(o[None], T, axis=0))
                     for p, o in zip(end_parent, end_offset, strict=True)], axis=1)
    return world_pos, ends, frame_time


def same_rotations(a: np.ndarray, b: np.ndarray) -> float:
    """Largest component difference between two quaternion arrays, up to sign."""
    return float(np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1)).max(initial=0.0))


# -- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CMU))
def test_world_positions_match_independent_scipy_oracle(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    want_joints, want_ends, frame_time = oracle_fk(cmu_path(name))
    world_rot, world_pos = clip.fk()
    tol = 1e-9 * clip.height
    assert world_pos.shape == want_joints.shape
    assert np.abs(world_pos - want_joints).max() <= tol
    assert np.abs(clip.end_site_positions(world_rot, world_pos) - want_ends).max() <= tol
    assert abs(frame_time - 1 / 120) < 1e-6 and clip.fps == 120.0


@pytest.mark.parametrize("name", sorted(CMU))
def test_save_load_round_trips_every_cmu_file(name, cmu_clips, tmp_path):
    clip: Clip = cmu_clips(name)
    out = tmp_path / f"{name}.bvh"
    bvh.save(clip, out)
    back = bvh.load(out)
    assert back.names == clip.names
    assert back.parents.tolist() == clip.parents.tolist()
    assert back.channels == clip.channels
    assert back.fps == clip.fps and back.n_frames == clip.n_frames
    assert same_rotations(back.rotations, clip.rotations) <= 1e-9
    assert np.abs(back.positions - clip.positions).max() <= 1e-9 * clip.height
    assert np.abs(back.offsets - clip.offsets).max() <= 1e-9 * clip.height
    assert back.end_parents.tolist() == clip.end_parents.tolist()
    assert np.abs(back.end_offsets - clip.end_offsets).max() <= 1e-9 * clip.height
    assert sorted(os.listdir(tmp_path)) == [out.name], "save left a temp file behind"


@pytest.mark.parametrize("name, expected", [
    ("01_01", 1), ("02_01", 1), ("02_02", 1), ("02_03", 1), ("09_01", 1), ("09_12", 1),
    ("131_01", 0), ("131_02", 0), ("131_03", 0),
])
def test_motion_start_skips_only_converter_t_pose(name, expected, cmu_clips):
    assert cmu_clips(name).motion_start == expected


@pytest.mark.parametrize("name", sorted(CMU))
def test_cmu_skeleton_facts_come_from_the_hierarchy(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    assert clip.root == 0 and clip.names[0] == "Hips"
    assert clip.meters_per_unit == 0.05644
    assert 1.5 <= clip.height * clip.meters_per_unit <= 2.0
    # CMU performers face +Z in the hips' frame (LeftUpLeg sits at +X), tilted up or down by the
    # take's mean pelvis tilt about the hip line (real hips are a hair off symmetric).
    assert abs(clip.forward[0]) < 1e-2 and clip.forward[2] > np.cos(np.radians(10.0))
    legs = clip.legs()
    assert legs is not None
    left, right = legs
    assert clip.names[left[-1]] in ("LeftToeBase", "LeftToe")
    assert clip.names[right[-1]] in ("RightToeBase", "RightToe")


def test_mixed_rotation_orders_and_line_endings_read_per_joint(cmu_clips):
    clip: Clip = cmu_clips("131_01")
    raw = cmu_path("131_01").read_bytes()
    assert b"\r\n" in raw and b"\n" in raw.replace(b"\r\n", b"")
    orders = {"".join(c[0] for c in ch if c.endswith("rotation")) for ch in clip.channels}
    assert orders == {"ZYX", "ZXY"}


def test_save_is_atomic_and_leaves_the_old_file_on_failure(cmu_clips, tmp_path, monkeypatch):
    clip: Clip = cmu_clips("09_01")
    out = tmp_path / "keep.bvh"
    out.write_text("the user's file")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        bvh.save(clip, out)
    assert out.read_text() == "the user's file"
    assert sorted(os.listdir(tmp_path)) == ["keep.bvh"]


def test_dumps_promotes_a_joint_only_when_its_channels_cannot_hold_the_motion():
    text = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Knee
  {
    OFFSET 0 -1 0
    CHANNELS 1 Xrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3 10 20 30 45
1 2 3 10 20 30 -45
"""
    clip = bvh.loads(text)
    assert clip.fps == 25.0
    assert bvh.loads(bvh.dumps(clip)).channels == [clip.channels[0], ("Xrotation",)]
    # Twist the knee about Y: one X channel can no longer hold it, so it gets three.
    twisted = clip.rotations.copy()
    twisted[:, 1] = Rotation.from_euler("XY", [[45, 30], [-45, 30]], degrees=True).as_quat(
        scalar_first=True)
    moved = clip.replace(rotations=twisted)
    back = bvh.loads(bvh.dumps(moved))
    assert sorted(back.channels[1]) == ["Xrotation", "Yrotation", "Zrotation"]
    assert same_rotations(back.rotations, twisted) <= 1e-9
    # Move the knee: it has no position channels, so it gets them.
    shifted = clip.positions.copy()
    shifted[:, 1] += [0.5, 0.0, 0.0]
    back = bvh.loads(bvh.dumps(clip.replace(positions=shifted)))
    assert back.channels[1][:3] == ("Xposition", "Yposition", "Zposition")
    assert np.abs(back.positions - shifted).max() <= 1e-12


def test_frame_time_snaps_to_common_rates():
    base = ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
            "MOTION\nFrames: 1\nFrame Time: {}\n0\n")
    assert bvh.loads(base.replace("{}", ".0083333")).fps == 120.0
    assert bvh.loads(base.replace("{}", "0.0333333")).fps == 30.0
    assert bvh.loads(base.replace("{}", "0.0416667")).fps == 24.0
    assert bvh.loads(base.replace("{}", "0.0333667")).fps == 29.97
    odd = bvh.loads(base.replace("{}", "0.027")).fps
    assert odd == pytest.approx(1 / 0.027, rel=1e-12)
