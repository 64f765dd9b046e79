"""Footsteps detected on real takes survive encode -> decode -> detect (issue 7 acceptance)."""

from __future__ import annotations

import numpy as np
import pytest

from core import contacts, events
from core.clip import Clip

TAKES = ["02_01", "02_02", "02_03", "09_01", "09_12", "131_03", "01_01"]


@pytest.mark.parametrize("name", TAKES)
def test_detected_footsteps_are_recovered_within_half_a_frame(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    steps = contacts.footsteps(clip)
    assert sum(len(t) for t in steps.values()) >= 2
    for track, times in steps.items():
        sin, cos = events.encode(clip.times, times, 0.5, 1 / 120)
        found = events.detect(clip.times, sin, cos, 0.5)
        assert found.shape == times.shape, (track, times, found)  # no extras, none missed
        assert np.abs(found - times).max(initial=0.0) <= 0.5 / clip.fps, track


@pytest.mark.parametrize("name", ["02_01", "09_01"])
def test_footsteps_survive_a_lower_frame_rate(name, cmu_clips):
    from core.resample import resample

    clip: Clip = cmu_clips(name)
    steps = contacts.footsteps(clip)
    slow = resample(clip, 30)
    for times in steps.values():
        sin, cos = events.encode(slow.times, times, 0.5, 1 / 120)
        found = events.detect(slow.times, sin, cos, 0.5)
        assert found.shape == times.shape
        assert np.abs(found - times).max(initial=0.0) <= 0.5 / slow.fps
