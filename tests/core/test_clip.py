"""The Clip: slicing, copies, overrides, skeleton compatibility."""

from __future__ import annotations

import numpy as np
import pytest

from core.clip import Clip, SkeletonMismatch


def test_slice_keeps_events_inside_and_shifts_them(cmu_clips):
    clip: Clip = cmu_clips("02_01").copy()
    clip.events["FootDown_L"] = np.array([0.05, 0.5, 1.0, 2.0])
    part = clip[60:121]
    assert part.n_frames == 61 and part.fps == 120.0
    np.testing.assert_allclose(part.events["FootDown_L"], [0.0, 0.5], atol=1e-12)
    np.testing.assert_array_equal(part.rotations, clip.rotations[60:121])
    assert part.motion_start == 0


def test_slice_with_step_divides_fps_and_keeps_motion_start(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    part = clip[::4]
    assert part.fps == 30.0 and part.n_frames == 86
    np.testing.assert_array_equal(part.positions, clip.positions[::4])
    assert part.motion_start == 1  # frame 0 is still the converter T-pose


def test_time_slice_takes_seconds(cmu_clips):
    clip: Clip = cmu_clips("02_03")
    part = clip.time_slice(0.5, 1.0)
    assert part.n_frames == 61
    np.testing.assert_array_equal(part.rotations[0], clip.rotations[60])


def test_slices_and_copies_never_alias_the_source(cmu_clips):
    clip: Clip = cmu_clips("09_01")
    before = clip.rotations.copy()
    part = clip[10:20]
    part.rotations[:] = 0.0
    copy = clip.copy()
    copy.positions[:] = 0.0
    np.testing.assert_array_equal(clip.rotations, before)
    assert np.abs(clip.positions).max() > 0


def test_overrides_win_over_guesses_and_carry_into_copies(cmu_clips):
    clip: Clip = cmu_clips("02_01").copy()
    clip.meters_per_unit = 0.01
    clip.up = [0, 0, 2]
    clip.motion_start = 5
    copy = clip.replace(fps=60.0)
    assert copy.meters_per_unit == 0.01
    np.testing.assert_array_equal(copy.up, [0, 0, 1])
    assert copy.motion_start == 5 and copy.fps == 60.0


def test_root_skips_a_static_dummy_root():
    T = 4
    names = ["Scene", "Hips", "Spine"]
    rotations = np.zeros((T, 3, 4))
    rotations[..., 0] = 1.0
    offsets = np.array([[0, 0, 0], [0, 1, 0], [0, 0.5, 0]], dtype=float)
    positions = np.repeat(offsets[None], T, axis=0)
    positions[:, 1, 2] = np.linspace(0, 1, T)
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * 2 + [
        ("Zrotation", "Xrotation", "Yrotation")]
    clip = Clip(names, [-1, 0, 1], offsets, rotations, positions, 30.0, channels=channels)
    assert clip.root == 1


def test_mismatched_skeletons_name_the_first_differing_joint(cmu_clips):
    walk: Clip = cmu_clips("02_01")
    other: Clip = cmu_clips("131_01")
    assert walk.compatible(cmu_clips("02_03"))
    with pytest.raises(SkeletonMismatch, match=r"joint 2: 'LeftUpLeg' .* vs 'LeftHip'"):
        walk.check_compatible(other)
    assert not walk.compatible(other)


def test_constructor_refuses_inconsistent_shapes():
    rotations = np.zeros((2, 2, 4))
    rotations[..., 0] = 1
    with pytest.raises(ValueError, match=r"offsets has shape \[3, 3\], expected \[2, 3\]"):
        Clip(["a", "b"], [-1, 0], np.zeros((3, 3)), rotations)
    with pytest.raises(ValueError, match="parents"):
        Clip(["a", "b"], [1, -1], np.zeros((2, 3)), rotations)


def test_bone_length_mismatch_names_the_bone_whatever_the_names_say(cmu_clips):
    from core import skeleton

    walk, run, other = cmu_clips("02_01"), cmu_clips("02_03"), cmu_clips("09_01")
    lengths = [skeleton.bone_lengths(c.parents, c.offsets) for c in (walk, run, other)]
    assert skeleton.length_mismatch(lengths[0], lengths[1]) is None  # one subject, one skeleton
    j = skeleton.length_mismatch(lengths[0], lengths[2])  # subjects 02 and 09: same names, other bones
    assert j is not None and walk.parents[j] >= 0
    assert abs(lengths[0][j] - lengths[2][j]) == np.abs(lengths[0] - lengths[2]).max()
    # Top joints place a skeleton; they are no bone.
    moved = walk.offsets.copy()
    moved[0] += 10.0
    assert skeleton.length_mismatch(lengths[0], skeleton.bone_lengths(walk.parents, moved)) is None
