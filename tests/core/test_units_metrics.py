"""Units, root heading and motion metrics on real clips and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import CMU
from scipy.spatial.transform import Rotation

from core import metrics, root, units
from core.clip import Clip


@pytest.mark.parametrize("name", sorted(CMU))
def test_every_cmu_file_comes_out_between_1_5_and_2_m(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    assert clip.meters_per_unit == units.CMU_UNIT_M
    assert 1.5 <= clip.height * clip.meters_per_unit <= 2.0


@pytest.mark.parametrize("unit", ["m", "cm", "mm", "in", "cmu"])
def test_unit_guess_recognises_the_unit_a_file_was_written_in(unit, cmu_clips):
    cmu: Clip = cmu_clips("02_01")
    # The same performer written in another unit: lengths scale by CMU-unit / new unit.
    clip = cmu.scaled(units.CMU_UNIT_M / units.KNOWN_UNITS_M[unit]).replace(meters_per_unit=None)
    assert clip.meters_per_unit == units.KNOWN_UNITS_M[unit]


def test_unit_guess_scales_an_unknown_unit_to_1_7_m():
    # 5000 units: 5 m in mm, 50 m in cm: no plausible person in any known unit.
    assert units.guess_meters_per_unit(5000.0) == pytest.approx(1.7 / 5000.0, rel=1e-15)
    assert units.guess_meters_per_unit(0.0) == 1.0
    assert units.guess_meters_per_unit(float("nan")) == 1.0


def test_to_meters_scales_lengths_and_keeps_rotations(cmu_clips):
    clip: Clip = cmu_clips("02_03")
    m = units.to_meters(clip)
    assert m.meters_per_unit == 1.0
    np.testing.assert_allclose(m.fk()[1], clip.fk()[1] * units.CMU_UNIT_M, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(m.rotations, clip.rotations)
    assert m.height == pytest.approx(clip.height * units.CMU_UNIT_M, rel=1e-12)


def turned(clip: Clip, yaw: float, shift: np.ndarray) -> Clip:
    """The clip turned by `yaw` about +Y and moved by `shift` (a rigid move of the whole take)."""
    r = Rotation.from_euler("Y", yaw)
    rot = clip.rotations.copy()
    pos = clip.positions.copy()
    j = clip.root
    rot[:, j] = (r * Rotation.from_quat(rot[:, j], scalar_first=True)).as_quat(scalar_first=True)
    pos[:, j] = r.apply(pos[:, j]) + shift
    return clip.replace(rotations=rot, positions=pos)


def test_heading_follows_a_turn_about_up(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    delta = root.heading(turned(clip, 0.7, np.zeros(3))) - root.heading(clip)
    np.testing.assert_allclose(np.angle(np.exp(1j * (delta - 0.7))), 0.0, atol=1e-12)
    # CMU walks go along +Z facing forward: heading stays near 0 over the walk.
    assert np.abs(root.heading(clip)[clip.motion_start:]).max() < 0.5


def test_position_error_is_the_distance_in_meters(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    moved = turned(clip, 0.0, np.array([2.0, 0.0, 0.0]))
    mean, peak = metrics.position_error(moved, clip)
    assert mean == pytest.approx(2.0 * units.CMU_UNIT_M, rel=1e-12)
    assert peak == pytest.approx(2.0 * units.CMU_UNIT_M, rel=1e-12)
    assert metrics.position_error(clip, clip) == (0.0, 0.0)


def test_relative_error_ignores_where_the_take_is_and_which_way_it_faces(cmu_clips):
    clip: Clip = cmu_clips("09_01")
    moved = turned(clip, 2.0, np.array([30.0, 0.0, -12.0]))
    assert metrics.relative_error(moved, clip) < 1e-12


def test_relative_error_matches_a_hand_worked_case():
    # Root at the origin facing +Z, one child 1 m up; the other clip's child is 1 m up and
    # 0.5 m along X. h = 1 m (root to child), so joint 0 divides by 0.1 and joint 1 by 1.0.
    q = np.zeros((1, 2, 4))
    q[..., 0] = 1.0
    offsets = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    ref = Clip(["Hips", "Head"], [-1, 0], offsets, q, fps=30.0, meters_per_unit=1.0,
               forward=[0, 0, 1])
    pos = np.repeat(offsets[None], 1, axis=0).copy()
    pos[0, 1] = [0.5, 1.0, 0.0]
    other = ref.replace(positions=pos)
    # Errors: joint 0 -> 0; joint 1 -> 0.5 / max(1, 0.1) = 0.5; mean over 2 joints = 0.25.
    assert metrics.relative_error(other, ref) == pytest.approx(0.25, abs=1e-15)


def test_metrics_refuse_different_lengths(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    with pytest.raises(ValueError, match="344 and 100 frames"):
        metrics.position_error(clip, clip[:100])
