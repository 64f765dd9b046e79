"""What an NLA stack plays (core.nla), on hand-worked stacks, and transitions that leave the
destination where it is (reanchor=False), as NLA bakes need."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import cmu_path

from core import nla
from core import transition as tr
from core.bvh import load

S = nla.Strip


def test_influence_ramps_over_blend_in_and_out_as_blender_computes_it():
    s = S("s", 0, 10.0, 30.0, blend_in=4.0, blend_out=5.0)
    got = nla.influence(s, [10, 12, 14, 20, 25, 27.5, 30])
    np.testing.assert_allclose(got, [0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 0.0])


def test_one_track_of_meeting_strips_plays_each_in_turn():
    strips = [S("a", 0, 1, 61, extend="HOLD"), S("b", 0, 61, 151, blend_in=12), S("c", 0, 151, 211)]
    segments, blends = nla.plays(strips, 1, 211)
    # Where two strips touch the first listed plays; b blends in over 12 frames, c cuts in.
    assert segments == [nla.Segment(0, 1, 61), nla.Segment(1, 61, 151), nla.Segment(2, 151, 211)]
    assert blends == [12, 0]


def test_an_upper_track_takes_over_over_its_blend_in_and_gives_back_over_its_blend_out():
    strips = [S("walk", 0, 1, 301, extend="HOLD"), S("run", 1, 121, 201, blend_in=20, blend_out=10)]
    segments, blends = nla.plays(strips, 1, 301)
    assert segments == [nla.Segment(0, 1, 121), nla.Segment(1, 121, 191), nla.Segment(0, 191, 301)]
    assert blends == [20, 10]
    which, weight, _ = nla.evaluate(strips, [100, 131, 195, 250])
    assert which.tolist() == [[0, 0, 0, 0], [-1, 1, 1, -1]]
    np.testing.assert_allclose(weight[1], [0.0, 0.5, 0.6, 0.0])


def test_a_strip_held_forward_overrides_the_track_below_after_its_end():
    strips = [S("walk", 0, 1, 301, extend="HOLD"), S("run", 1, 121, 201, blend_in=20)]
    segments, _ = nla.plays(strips, 1, 301)
    assert segments[-1] == nla.Segment(1, 121, 301)  # held at its last frame to the end
    _, _, held = nla.evaluate(strips, [250])
    assert held[1].tolist() == [201.0]


def test_a_gap_without_hold_nothing_playing_and_a_fade_that_never_takes_over_are_refused():
    with pytest.raises(nla.NlaError, match=r"nothing plays at frames 101-119, between A and B"):
        nla.plays([S("A", 0, 1, 100, extend="NOTHING"), S("B", 0, 120, 200, extend="NOTHING")], 1, 200)
    with pytest.raises(nla.NlaError, match=r"at frames 1-5 A plays at partial influence before any strip"):
        nla.plays([S("A", 0, 1, 300, blend_in=5)], 1, 300)
    fade = S("B", 1, 121, 136, blend_in=7.5, blend_out=7.5)
    with pytest.raises(nla.NlaError, match=r"frames 122-135 B plays at partial influence over A, fading in"):
        nla.plays([S("A", 0, 1, 300, extend="HOLD"), fade], 1, 300)
    # A muted strip found at a frame plays nothing there: the hold of the strip before does not.
    with pytest.raises(nla.NlaError, match=r"nothing plays at frames 50-60"):
        nla.plays([S("A", 0, 1, 49), S("M", 0, 50, 60, muted=True), S("B", 0, 61, 100)], 1, 100)


def test_three_strips_blending_at_once_are_refused():
    strips = [S("A", 0, 1, 300, extend="HOLD"), S("B", 1, 100, 200, blend_in=20),
              S("C", 2, 110, 200, blend_in=20)]
    with pytest.raises(nla.NlaError, match=r"frames 101-129 B plays at partial influence while A blends "
                                           r"into C"):
        nla.plays(strips, 1, 300)


def test_strip_frames_map_scale_and_repeat_as_blender_and_hold_at_the_ends():
    # 30 action frames (101..131) repeated twice over 60 scene frames (151..211).
    got = nla.strip_frames(151, 211, 1.0, 2.0, 101, 131, [140, 151, 160, 181, 190, 211, 230])
    np.testing.assert_allclose(got, [101, 101, 110, 101, 110, 131, 131])
    # Scale 1.5: 60 action frames over 90 scene frames.
    np.testing.assert_allclose(nla.strip_frames(61, 151, 1.5, 1.0, 21, 81, [61, 76, 151]), [21, 31, 81])


@pytest.mark.parametrize("method", ["dead", "quintic", "crossfade", "cut"])
def test_without_reanchoring_the_output_is_the_destination_itself_after_the_blend(method):
    walk, run = load(cmu_path("02_01")), load(cmu_path("02_03"))
    out = tr.METHODS[method](walk, run, 1.0, 0.5, 0.25, reanchor=False)
    i_s, i_d, n = 120, 60, 30
    np.testing.assert_array_equal(out.rotations[:i_s + 1], walk.rotations[:i_s + 1])
    np.testing.assert_array_equal(out.rotations[i_s + n:], run.rotations[i_d + n:])
    np.testing.assert_array_equal(out.positions[i_s + n:], run.positions[i_d + n:])
    moved = tr.METHODS[method](walk, run, 1.0, 0.5, 0.25)  # re-anchored: the run's root moves
    # (not far: both takes cross one walkway, and where the blended travel ends the run goes on
    # 3.6 cm from its own place)
    assert np.abs(moved.positions[-1, 0] - run.positions[-1, 0]).max() > 0.3
