"""Loops that go where their take goes: `sync.loop_cycle` cuts one whole cycle as long as the take's
cycle (its median same-foot touchdown interval, from `contacts.footsteps`) on every locomotion take
in tests/data, pre-cut loops are taken whole, and a reference pose before the motion (a T-pose or
a rest pose, made in code at 30 and 120 fps) is found and changes nothing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixtures import CMU, take_path

from core import bvh, contacts, quat, sync
from core.clip import Clip
from core.resample import resample

BANDAI = ["dataset-1_walk_normal_001", "dataset-1_walk_happy_001", "dataset-1_walk_tired_001",
          "dataset-1_walk-left_normal_001", "dataset-1_walk-right_normal_001", "dataset-1_run_happy_001",
          "dataset-1_run_tired_001"]
LOOPS = ["dataset-1_walk_normal_002", "dataset-1_run_normal_001", "dataset-1_dash_normal_001",
         "dataset-1_walk-back_normal_001"]
# Every take in tests/data that steps (all but the Bandai bow); 01_01 jumps, 131_03 hops.
TAKES = sorted(CMU) + BANDAI


def load(name: str) -> Clip:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # footstep doubts on the takes that start or stop
        return bvh.load(take_path(name))


def median_interval(clip: Clip) -> float:
    """Median frames from a touchdown to the next of the same foot (both feet)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = contacts.footsteps(clip)
    return float(np.median(np.concatenate([np.diff(t) for t in steps.values()])) * clip.fps)


def tiled(loop: Clip, times: int = 3) -> Clip:
    """A pre-cut loop (last frame = first pose) played `times` over, each cycle's top joints moved on
    by the cycle's travel (they travel straight): a take to read its touchdowns from."""
    n = loop.n_frames - 1
    tops = loop.parents < 0
    travel = loop.positions[n, tops] - loop.positions[0, tops]
    pos = np.concatenate([loop.positions[:n] + np.where(tops[:, None], k * travel[0], 0.0)
                          for k in range(times)])
    return loop.replace(rotations=np.concatenate([loop.rotations[:n]] * times), positions=pos, loop=False,
                        events={})


@pytest.mark.parametrize("name", TAKES)
def test_a_cut_loop_lasts_the_takes_median_touchdown_interval(name):
    clip = load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = sync.loop_cycle(clip)
    median = median_interval(clip)
    assert abs(loop.n_frames - median) <= max(1.0, 0.03 * median), (loop.n_frames, median)


@pytest.mark.parametrize("name", LOOPS)
def test_a_pre_cut_loop_is_taken_whole_its_repeated_last_frame_counted_once(name):
    clip = load(name)
    assert clip.loop and clip.seam_repeats
    loop = sync.loop_cycle(clip)
    # One cycle of the loop played over and over: its touchdowns one cycle apart.
    median = median_interval(tiled(clip))
    assert loop.n_frames == clip.n_frames - 1
    assert abs(loop.n_frames - median) <= max(1.0, 0.03 * median)
    # The frames are the take's, but for the seam's offset (its last frame against its first)
    # spread over them; the root's world motion is its trajectory's.
    joints = np.arange(clip.n_joints) != clip.root
    seam = quat.angle(clip.rotations[-1], clip.rotations[0])[joints]
    assert np.all(quat.angle(loop.rotations, clip.rotations[:-1])[:, joints] <= seam + 1e-9)


def with_reference(clip: Clip, pose: np.ndarray) -> Clip:
    """The clip with one frame of local rotations `pose` [J, 4] before it, its translations the
    first frame's: a reference pose one frame before the motion."""
    return Clip(clip.names, clip.parents, clip.offsets, np.concatenate([pose[None], clip.rotations]),
                np.concatenate([clip.positions[:1], clip.positions]), clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, name=clip.name)


REFERENCES = [("02_01", "the converter's T-pose"), ("02_03", "the converter's T-pose"),
              ("09_01", "the converter's T-pose"), ("dataset-1_walk_normal_001", "the rest pose"),
              ("dataset-1_run_happy_001", "the rest pose")]


@pytest.mark.parametrize("fps", [30.0, 120.0])
@pytest.mark.parametrize("name, reference", REFERENCES)
def test_a_reference_pose_before_the_motion_is_found_and_leaves_the_loop_as_it_is(name, reference, fps):
    take = load(name)
    # CMU's own T-pose (frame 0), or a rest pose that does not stand (Bandai's: bones along their
    # axes), one frame before the motion at either rate.
    pose = take.rotations[0] if reference.startswith("the converter") else quat.identity((take.n_joints,))
    motion = take[take.motion_start:]
    motion = resample(motion, fps) if motion.fps != fps else motion
    plain = Clip(motion.names, motion.parents, motion.offsets, motion.rotations, motion.positions, fps,
                 channels=motion.channels, end_parents=motion.end_parents, end_offsets=motion.end_offsets,
                 name=motion.name)
    assert plain.motion_start == 0  # a real first frame is not taken for a reference pose
    posed = with_reference(plain, pose)
    assert posed.motion_start == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = sync.loop_cycle(plain), sync.loop_cycle(posed)
    assert a.n_frames == b.n_frames
    assert quat.angle(a.rotations, b.rotations).max() < 1e-12
    np.testing.assert_allclose(a.positions, b.positions, rtol=0, atol=1e-9 * a.height)
    assert a.events.keys() == b.events.keys()
    for k in a.events:
        np.testing.assert_allclose(a.events[k], b.events[k], rtol=0, atol=1e-9)


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0, 120.0])
def test_real_first_frames_are_not_taken_for_reference_poses_at_any_rate(fps):
    for name in TAKES + LOOPS:
        take = load(name)
        motion = take[take.motion_start:]
        motion = resample(motion, fps) if motion.fps != fps else motion
        assert motion.replace(motion_start=None).motion_start == 0, name
