"""Frame-rate conversion: exact on shared frames, scipy's Slerp in between, seconds kept."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from core import bvh, quat
from core.clip import Clip
from core.resample import resample, source_frames

WALKS = ["01_01", "02_01", "09_12", "131_01"]


def same_rotations(a: np.ndarray, b: np.ndarray) -> float:
    """Largest component difference between two quaternion arrays, up to sign."""
    return float(np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1)).max(initial=0.0))


def tiny_clip(n_frames: int, fps: float = 30.0) -> Clip:
    rng = np.random.default_rng(7)
    rotations = quat.unroll(quat.normalize(rng.normal(size=(n_frames, 2, 4))))
    positions = rng.normal(size=(n_frames, 2, 3))
    return Clip(["Hips", "Spine"], [-1, 0], np.ones((2, 3)), rotations, positions, fps)


@pytest.mark.parametrize("name", WALKS)
def test_120_to_30_is_every_fourth_frame(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    out = resample(clip, 30)
    want = clip[::4]
    assert out.fps == 30.0 and out.n_frames == want.n_frames
    assert same_rotations(out.rotations, want.rotations) <= 1e-9
    assert np.abs(out.positions - want.positions).max() <= 1e-9 * clip.height
    assert out.motion_start == want.motion_start


def test_samples_on_source_frames_are_the_source_frames_bit_for_bit(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    out = resample(clip, 40)  # every third source frame
    np.testing.assert_array_equal(out.rotations, clip.rotations[::3])
    np.testing.assert_array_equal(out.positions, clip.positions[::3])


def test_same_rate_returns_the_same_frames(cmu_clips):
    clip: Clip = cmu_clips("09_01")
    out = resample(clip, 120)
    np.testing.assert_array_equal(out.rotations, clip.rotations)
    np.testing.assert_array_equal(out.positions, clip.positions)


def test_30_to_60_and_back_is_identity(cmu_clips):
    clip = cmu_clips("02_03")[::4]
    back = resample(resample(clip, 60), 30)
    assert back.n_frames == clip.n_frames and back.fps == 30.0
    assert same_rotations(back.rotations, clip.rotations) <= 1e-9
    assert np.abs(back.positions - clip.positions).max() <= 1e-9 * clip.height


@pytest.mark.parametrize("fps_in, fps_out", [(120, 29.97), (100, 24), (120, 10 * math.pi), (29.97, 59.94),
                                             (120, 144), (24, 25)])
def test_inbetweens_match_scipy_slerp_and_linear_interpolation(fps_in, fps_out, cmu_clips):
    clip: Clip = cmu_clips("02_01").replace(fps=float(fps_in))
    out = resample(clip, fps_out)
    times = np.arange(out.n_frames) / fps_out
    assert out.fps == fps_out
    assert times[-1] <= clip.duration + 1e-12 and clip.duration - times[-1] < 1 / fps_out
    joint = clip.names.index("LeftUpLeg")
    key = Rotation.from_quat(clip.rotations[:, joint][:, [1, 2, 3, 0]])
    want = Slerp(clip.times, key)(np.minimum(times, clip.times[-1])).as_quat()[:, [3, 0, 1, 2]]
    assert same_rotations(out.rotations[:, joint], want) <= 1e-9
    root = clip.positions[:, 0]
    want_pos = np.stack([np.interp(times, clip.times, root[:, i]) for i in range(3)], axis=-1)
    assert np.abs(out.positions[:, 0] - want_pos).max() <= 1e-9 * clip.height


@pytest.mark.parametrize("name", WALKS)
@pytest.mark.parametrize("fps", [30, 29.97, 24, 7])
def test_duration_is_kept_within_one_output_frame(name, fps, cmu_clips):
    clip: Clip = cmu_clips(name)
    out = resample(clip, fps)
    assert 0.0 <= clip.duration - out.duration < 1.0 / fps


def test_upsampled_rotations_stay_unit_and_continuous(cmu_clips):
    clip: Clip = cmu_clips("131_01")
    clip = clip.replace(rotations=quat.unroll(clip.rotations))
    out = resample(clip, 145.5)
    assert np.abs(np.linalg.norm(out.rotations, axis=-1) - 1.0).max() <= 1e-12
    assert quat.dot(out.rotations[1:], out.rotations[:-1]).min() >= 0.0
    source_step = quat.angle(clip.rotations[1:], clip.rotations[:-1]).max(axis=0)
    out_step = quat.angle(out.rotations[1:], out.rotations[:-1]).max(axis=0)
    assert np.all(out_step <= source_step + 1e-12)


def test_slerp_takes_the_short_way_between_opposite_signed_neighbours():
    half_turn = np.deg2rad(170.0)
    q = np.array([[[1.0, 0.0, 0.0, 0.0]], [[-np.cos(half_turn / 2), 0.0, -np.sin(half_turn / 2), 0.0]]])
    clip = Clip(["Hips"], [-1], np.zeros((1, 3)), q, fps=1.0)
    mid = resample(clip, 2.0).rotations[1, 0]
    assert np.isclose(quat.angle(mid, q[0, 0]), half_turn / 2)


def test_events_loop_and_overrides_carry_over(cmu_clips):
    clip = cmu_clips("02_01").replace(loop=True, meters_per_unit=0.01, up=[0, 0, 1], name="walk")
    clip.events["FootDown_L"] = np.array([0.0, 0.1234567, 2.85])
    clip.events["Late"] = np.array([99.0])
    out = resample(clip, 29.97)
    assert out.loop and out.name == "walk" and out.meters_per_unit == 0.01
    np.testing.assert_array_equal(out.up, [0.0, 0.0, 1.0])
    assert out.events.keys() == clip.events.keys()
    for k, v in clip.events.items():
        np.testing.assert_array_equal(out.events[k], v)
        assert out.events[k] is not v


@pytest.mark.parametrize("motion_start, fps, expected", [(1, 30, 1), (4, 30, 1), (5, 30, 2), (8, 30, 2),
                                                         (1, 240, 2), (3, 100, 3), (0, 24, 0)])
def test_motion_start_is_the_first_output_frame_at_or_after_it(motion_start, fps, expected, cmu_clips):
    clip = cmu_clips("02_01").replace(motion_start=motion_start)
    assert resample(clip, fps).motion_start == expected


def test_empty_and_single_frame_clips():
    empty = resample(tiny_clip(0), 60)
    assert empty.n_frames == 0 and empty.fps == 60.0 and empty.rotations.shape == (0, 2, 4)
    one = resample(tiny_clip(1), 7.5)
    assert one.n_frames == 1 and one.fps == 7.5
    np.testing.assert_array_equal(one.rotations, tiny_clip(1).rotations)


def test_non_positive_fps_is_refused():
    for fps in (0, -30, math.inf, math.nan):
        with pytest.raises(ValueError, match="fps"):
            resample(tiny_clip(3), fps)


def test_ntsc_rates_hit_source_frames_exactly_where_floats_would_round():
    # In floats 11 * 59.94 / 29.97 is 21.999999999999996, which floor() sends to frame 21.
    assert math.floor(11 * 59.94 / 29.97) == 21
    base, frac = source_frames(100_001, 59.94, 29.97)
    np.testing.assert_array_equal(base, np.arange(50_001) * 2)
    assert not frac.any()
    base, frac = source_frames(1001, 29.97, 29.97)
    np.testing.assert_array_equal(base, np.arange(1001))
    assert not frac.any()


def test_source_positions_step_by_the_rate_ratio():
    base, frac = source_frames(11, 30.0, 45.0)  # 2/3 of a source frame per output frame
    np.testing.assert_array_equal(base, [0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10])
    np.testing.assert_allclose(frac, np.tile([0, 2 / 3, 1 / 3], 6)[:16], atol=1e-15)
    base, frac = source_frames(5, 10.0, math.pi)  # float path: no exact ratio
    np.testing.assert_array_equal(base, [0, 3])
    np.testing.assert_allclose(frac, [0, 10 / math.pi - 3], atol=1e-15)


@pytest.mark.parametrize("fps", [30, 29.97, 24, 60])
def test_saved_resampled_clip_loads_back_at_the_requested_fps(fps, cmu_clips):
    out = resample(cmu_clips("09_01"), fps)
    back = bvh.loads(bvh.dumps(out))
    assert back.fps == float(fps) and back.n_frames == out.n_frames


def test_sample_at_arbitrary_times_matches_frames_and_slerp(cmu_clips):
    from core.resample import sample

    clip = cmu_clips("09_01")
    times = np.array([0.0, 10 / 120, 10.5 / 120, 3 / 120, 3 / 120, 99.0])
    out = sample(clip, times, 30.0)
    assert out.fps == 30.0 and out.n_frames == 6
    np.testing.assert_array_equal(out.rotations[1], clip.rotations[10])
    np.testing.assert_array_equal(out.rotations[3], out.rotations[4])
    np.testing.assert_array_equal(out.rotations[5], clip.rotations[-1])  # clamped
    half = Slerp([0, 1], Rotation.from_quat(clip.rotations[10:12, 5], scalar_first=True))([0.5])
    got = Rotation.from_quat(out.rotations[2, 5], scalar_first=True)
    assert (got * half.inv()).magnitude()[0] < 1e-12
    np.testing.assert_allclose(out.positions[2], 0.5 * (clip.positions[10] + clip.positions[11]), atol=1e-12)
