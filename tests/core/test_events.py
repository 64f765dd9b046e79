"""Event encoding, detection and tags: hand-worked tables, brute-force and scipy oracles.

Oracles are independent of core.events: the nearest event by comparing every event with every
sample, the target angle sample by sample from its two neighbouring events (the definition, case by
case), the phase by np.sin / np.cos in long double, smoothing by scipy's adaptive quadrature of the
continuous track and by scipy's gaussian_filter1d on a finely sampled, extended grid.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from scipy import integrate
from scipy.ndimage import gaussian_filter1d

from core import events
from core.events import EventWarning

WINDOW = 0.5
SIGMA = 1.0 / 120.0

# -- oracles --------------------------------------------------------------------------------------


def nearest(times: Any, event_times: Any) -> np.ndarray:
    """[N] signed seconds to the nearest event by brute force; ties to the upcoming one."""
    diff = np.asarray(event_times, dtype=np.float64)[None, :] - np.asarray(times)[:, None]
    if diff.shape[1] == 0:
        return np.full(len(times), np.inf)
    gap = np.abs(diff)
    closest = gap == gap.min(axis=1, keepdims=True)
    return np.where(closest, diff, -np.inf).max(axis=1)


def phase(d: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of pi clip(d / window, -1, 1) in long double."""
    theta = np.pi * np.clip(np.asarray(d, dtype=np.longdouble) / window, -1, 1)
    return np.sin(theta), np.cos(theta)


def angle(tau: float, event_times: Any, window: float) -> float:
    """The target angle at time tau, unwrapped: from the events either side of it, 0 on an event.

    Within the window of the nearer one, pi d / window (d = nearest - tau; a tie goes to the later);
    a window or more from both, +-pi. Between events a gap g apart with window <= g < 2 window,
    pi d / window within c = g - window of either, and between those the angle goes on falling at
    2 pi / window per second (through -pi, the far side)."""
    e = np.asarray(event_times, dtype=np.float64)
    before, after = e[e <= tau], e[e > tau]
    prev = before.max() if before.size else -np.inf
    nxt = after.min() if after.size else np.inf
    since, until = tau - prev, nxt - tau
    if since == 0.0:
        return 0.0
    gap = nxt - prev
    if window <= gap < 2 * window:
        c = gap - window
        if since <= c:
            return -np.pi * since / window
        if until <= c:
            return np.pi * until / window
        return -np.pi * c / window - 2 * np.pi * (since - c) / window
    if since < until:
        return -np.pi * min(since / window, 1.0)
    return np.pi * min(until / window, 1.0)


def target(times: Any, event_times: Any, window: float) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of `angle` at each time, in long double."""
    theta = np.array([angle(float(x), event_times, window) for x in times], dtype=np.longdouble)
    return np.sin(theta), np.cos(theta)


def smoothed(times: np.ndarray, event_times: np.ndarray, window: float, sigma: float) -> np.ndarray:
    """[2, N] (sin, cos) of the continuous track convolved with a Gaussian truncated at 4 sigma,
    by adaptive quadrature split at the track's jumps and kinks."""
    e = np.sort(event_times)
    gap = np.diff(e)
    breaks = np.concatenate([e - window, e + window, 0.5 * (e[:-1] + e[1:]), e[:-1] + gap - window,
                             e[1:] - gap + window])
    reach = 4.0 * sigma
    out = np.zeros((2, len(times)))
    for n, t in enumerate(times):
        inside = breaks[(breaks > t - reach) & (breaks < t + reach)]
        kw = {"points": inside if inside.size else None, "limit": 200, "epsabs": 1e-13, "epsrel": 1e-13}

        def weight(x: float, t: float = t) -> float:
            return float(np.exp(-0.5 * ((x - t) / sigma) ** 2))

        def part(x: float, which: int, t: float = t) -> float:
            return weight(x) * float((np.sin, np.cos)[which](angle(x, e, window)))

        mass = integrate.quad(weight, t - reach, t + reach, epsabs=1e-14)[0]
        for which in (0, 1):
            out[which, n] = integrate.quad(part, t - reach, t + reach, args=(which,), **kw)[0] / mass
    return out


def footsteps(rng: np.random.Generator, duration: float) -> np.ndarray:
    """Alternating footsteps like a CMU walk: every ~0.55 s with jitter, sub-frame times."""
    steps = rng.uniform(0.05, 0.5) + np.cumsum(rng.normal(0.55, 0.04, int(duration / 0.4)))
    return steps[steps < duration]


def grid(fps: float, duration: float) -> np.ndarray:
    return np.arange(round(duration * fps) + 1) / fps


# -- the hand-worked table ------------------------------------------------------------------------

TABLE_SIN = [.866025, .866025, 0, -.866025, -.866025, .866025, .866025, 0, -.866025, -.866025]
TABLE_COS = [-.5, .5, 1, .5, -.5, -.5, .5, 1, .5, -.5]


def test_events_2_and_7_with_window_3_at_1_fps_match_the_table():
    t = np.arange(10.0)
    sin, cos = events.encode(t, [2, 7], 3.0)
    np.testing.assert_allclose(sin, TABLE_SIN, atol=1e-6)
    np.testing.assert_allclose(cos, TABLE_COS, atol=1e-6)
    assert sin.dtype == cos.dtype == np.float64 and sin.shape == cos.shape == (10,)
    np.testing.assert_allclose(events.decode(sin, cos, 3.0), [2, 1, 0, -1, -2, 2, 1, 0, -1, -2], atol=1e-12)
    np.testing.assert_array_equal(events.detect(t, sin, cos, 3.0), [2.0, 7.0])


def test_on_an_event_the_pair_is_exactly_0_1_and_beyond_the_window_exactly_0_minus_1():
    t = np.array([-4.5, -3.0, -1.5, 0.0, 1.5, 3.0, 4.5])
    sin, cos = events.encode(t, [0.0], 3.0)
    np.testing.assert_array_equal(sin[[0, 1, 3, 5, 6]], 0.0)
    np.testing.assert_array_equal(cos[[0, 1, 3, 5, 6]], [-1, -1, 1, -1, -1])


def test_a_sample_halfway_between_events_closer_than_a_window_counts_toward_the_upcoming_one():
    t = np.array([3.0 - 2**-40, 3.0, 3.0 + 2**-40])
    d = events.decode(*events.encode(t, [2, 4], 3.0), 3.0)
    np.testing.assert_allclose(d, [-1.0 + 2**-40, 1.0, 1.0 - 2**-40], atol=1e-12)


def test_halfway_between_events_one_to_two_windows_apart_the_pair_is_on_the_far_side():
    # Events 2 and 7, window 3: exact within 5 - 3 = 2 s of each, and from 4 s to 5 s the angle
    # turns on from -2 pi / 3 through -pi (at 4.5 s) to +2 pi / 3, at 2 pi / 3 per second.
    t = np.array([4.0, 4.25, 4.5, 4.75, 5.0])
    sin, cos = events.encode(t, [2, 7], 3.0)
    want = np.pi * np.array([-2, -2.5, -3, -3.5, -4]) / 3
    np.testing.assert_allclose(sin, np.sin(want), atol=1e-15)
    np.testing.assert_allclose(cos, np.cos(want), atol=1e-15)
    assert (sin[2], cos[2]) == (0.0, -1.0)
    np.testing.assert_allclose(events.decode(sin, cos, 3.0)[[0, 4]], [-2.0, 2.0], atol=1e-12)


def test_no_events_is_far_everywhere_and_never_fires():
    t = grid(30, 2.0)
    for sigma in (0.0, SIGMA, 0.1):
        sin, cos = events.encode(t, [], WINDOW, sigma)
        np.testing.assert_array_equal(sin, 0.0)
        np.testing.assert_array_equal(cos, -1.0)
        assert events.detect(t, sin, cos, WINDOW).size == 0


# -- encode and decode against brute force --------------------------------------------------------


def test_phase_matches_sin_and_cos_to_rounding():
    d = np.concatenate([np.linspace(-1.5, 1.5, 300_001), np.random.default_rng(1).uniform(-1, 1, 100_000)])
    t = np.sort(-d)
    sin, cos = events.encode(t, [0.0], 1.0)
    want_sin, want_cos = phase(-t, 1.0)
    assert np.abs(sin - want_sin).max() <= 1e-15
    assert np.abs(cos - want_cos).max() <= 1e-15


@pytest.mark.parametrize("seed", range(5))
def test_the_pair_is_the_target_angle_and_decodes_to_the_nearest_event_in_its_exact_stretch(seed):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1, 11, 2000))
    e = rng.uniform(0, 10, rng.integers(1, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EventWarning)
        sin, cos = events.encode(t, e, 0.8)
    e = np.sort(e)
    e = e[np.append(True, np.diff(e) >= 2 * np.diff(t).max())]  # as merged
    want_sin, want_cos = target(t, e, 0.8)
    assert np.abs(sin - want_sin).max() <= 1e-12
    assert np.abs(cos - want_cos).max() <= 1e-12
    # Exact stretch, by hand: toward a neighbour g away, the window if g >= 2 window, g - window
    # if g >= window, g / 2 below that.
    d = nearest(t, e)
    side_gap = np.full(t.size, np.inf)
    for n, (x, dn) in enumerate(zip(t, d, strict=True)):
        near = x + dn
        others = e[(e > near) if dn <= 0 else (e < near)]
        if others.size:
            side_gap[n] = np.abs(others - near).min()
    radius = np.where(side_gap >= 1.6, 0.8, np.where(side_gap >= 0.8, side_gap - 0.8, side_gap / 2))
    inside = np.abs(d) <= radius - 1e-12
    assert inside.sum() > t.size // 4
    got = events.decode(sin, cos, 0.8)
    assert np.abs(got[inside] - d[inside]).max() <= 1e-12
    far = np.abs(d) >= 0.8
    assert np.abs(np.abs(got[far]) - 0.8).max(initial=0.0) <= 1e-12


def test_event_order_does_not_matter():
    t = grid(60, 4.0)
    e = np.array([3.1, 0.4, 2.05, 1.2])
    a = events.encode(t, e, WINDOW, SIGMA)
    b = events.encode(t, np.sort(e), WINDOW, SIGMA)
    np.testing.assert_array_equal(a, b)


def test_close_gaps_names_every_gap_under_two_windows_with_the_event_opening_it():
    e = [3.0, 0.0, 0.4, 1.2]  # gaps 0.4, 0.8 (both under 1 s), 1.8
    np.testing.assert_allclose(events.close_gaps(e, WINDOW), [[0.4, 0.0], [0.8, 0.4]], atol=1e-12)
    # Around a loop of 3.5 s the gap from 3.0 to 3.5 + 0.0 counts too.
    np.testing.assert_allclose(events.close_gaps(e, WINDOW, loop_period=3.5),
                               [[0.4, 0.0], [0.8, 0.4], [0.5, 3.0]], atol=1e-12)
    assert events.close_gaps([0.0, 1.0], WINDOW).shape == (0, 2)  # two windows apart: exact
    assert events.close_gaps([], WINDOW).shape == events.close_gaps([1.0], WINDOW).shape == (0, 2)
    text = events.describe_close_gaps("FootDown_L", events.close_gaps(e, WINDOW), WINDOW)
    assert text.startswith("FootDown_L: 2 gaps between events under two windows (1 s), 1 under one window")
    assert "the shortest 0.4 s from the event at 0.000 s" in text and "a window of 0.2 s" in text
    assert events.describe_close_gaps("Jump", np.zeros((0, 2)), WINDOW) == ""


def test_exact_radius_is_how_far_from_each_event_decode_stays_exact():
    e = np.array([0.0, 0.4, 1.2, 3.0])
    radius = events.exact_radius(e, WINDOW)
    # 0.4 apart (under a window): half the gap; 0.8 apart: 0.8 - 0.5; 1.8 apart: the window.
    np.testing.assert_allclose(radius, [0.2, 0.2, 0.3, 0.5], atol=1e-12)
    t = np.linspace(-1.0, 4.0, 50_001)
    d = events.decode(*events.encode(t, e, WINDOW), WINDOW)
    want = nearest(t, e)
    for event, r in zip(e, radius, strict=True):
        inside = np.abs(t - event) < r - 1e-9  # at gap / 2 (to a few ulp), the later one
        assert np.abs(d[inside] - want[inside]).max() <= 1e-12
    # Between 0.4 and 1.2 s, past 0.3 s from both, the angle turns at twice the rate instead.
    turn = (t > 0.7 + 1e-9) & (t < 0.9 - 1e-9)
    np.testing.assert_allclose(np.abs(d[turn]), 0.3 + 2 * (0.1 - np.abs(t[turn] - 0.8)), atol=1e-12)


# -- smoothing ------------------------------------------------------------------------------------

SMOOTH_CASES = [
    # (events, window, sigma, fps): isolated, close (jumps between events), wide kernel, sigma > window
    ([1.0, 2.6], 0.5, SIGMA, 120),
    ([1.0, 1.45, 1.8, 2.9], 0.5, 0.03, 60),
    ([0.0, 2.0, 7.0, 7.8], 3.0, 0.3, 20),
    ([0.5, 1.7], 0.25, 0.4, 24),
]


@pytest.mark.filterwarnings("ignore:.*smoothing blends:core.events.EventWarning")  # close on purpose
@pytest.mark.parametrize("event_times, window, sigma, fps", SMOOTH_CASES)
def test_smoothing_is_the_continuous_track_convolved_with_a_truncated_gaussian(event_times, window, sigma,
                                                                              fps):
    t = grid(fps, 3.0)[::3][:60]
    sin, cos = events.encode(t, event_times, window, sigma)
    want = smoothed(t, np.array(event_times), window, sigma)
    assert np.abs(sin - want[0]).max() <= 1e-9
    assert np.abs(cos - want[1]).max() <= 1e-9


@pytest.mark.filterwarnings("ignore:.*smoothing blends:core.events.EventWarning")  # close on purpose
def test_smoothing_equals_the_extended_grid_gaussian_filter_in_the_fine_sampling_limit():
    # The recipe: sample d on the grid extended by the kernel radius (no events beyond
    # those given), filter, crop. On a grid 400x finer than the clip's it converges to encode
    # (to about step / sigma where the track jumps).
    fps, fine, sigma = 30, 400, 0.05
    e = np.array([0.0, 0.6, 0.95, 2.0])
    t = grid(fps, 2.0)
    step = 1.0 / (fps * fine)
    radius = int(np.ceil(4 * sigma / step))
    t_fine = np.arange(-radius, len(t) * fine - fine + 1 + radius) * step
    sin_fine, cos_fine = (np.asarray(x, dtype=np.float64) for x in target(t_fine, e, WINDOW))
    sd = sigma / step
    crop = slice(radius, radius + len(t) * fine - fine + 1, fine)
    want_sin = gaussian_filter1d(sin_fine, sd, truncate=radius / sd)[crop]
    want_cos = gaussian_filter1d(cos_fine, sd, truncate=radius / sd)[crop]
    sin, cos = events.encode(t, e, WINDOW, sigma)
    assert np.abs(sin - want_sin).max() <= 1e-3
    assert np.abs(cos - want_cos).max() <= 1e-3


def test_smoothing_keeps_the_phase_where_no_jump_or_kink_is_within_4_sigma():
    t = grid(120, 4.0)
    e = np.array([0.0, 1.3, 2.0, 4.0])
    sigma = 0.02
    sin, cos = events.encode(t, e, WINDOW, sigma)
    raw = events.decode(*events.encode(t, e, WINDOW), WINDOW)
    mid = 0.5 * (e[:-1] + e[1:])
    breaks = np.concatenate([e - WINDOW, e + WINDOW, mid[mid - e[:-1] < WINDOW]])
    clear = np.abs(t[:, None] - breaks[None]).min(axis=1) > 4 * sigma
    clear &= np.abs(raw) < WINDOW
    assert clear.sum() > len(t) // 3
    assert np.abs(events.decode(sin, cos, WINDOW)[clear] - raw[clear]).max() <= 1e-12
    # The pair shrinks by int G(x) cos(pi x / window) / int G over [-4 sigma, 4 sigma].
    g = lambda x: np.exp(-0.5 * (x / sigma) ** 2)  # noqa: E731
    shrink = (integrate.quad(lambda x: g(x) * np.cos(np.pi * x / WINDOW), -4 * sigma, 4 * sigma)[0]
              / integrate.quad(g, -4 * sigma, 4 * sigma)[0])
    assert np.abs(np.hypot(sin, cos)[clear] - shrink).max() <= 1e-12


def test_smoothed_track_far_from_events_stays_exactly_0_minus_1():
    t = grid(120, 6.0)
    sin, cos = events.encode(t, [1.0, 5.0], WINDOW, SIGMA)
    far = np.abs(nearest(t, [1.0, 5.0])) > WINDOW + 4 * SIGMA
    np.testing.assert_array_equal(sin[far], 0.0)
    np.testing.assert_array_equal(cos[far], -1.0)


# -- frame rates ----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*smoothing blends:core.events.EventWarning")  # close on purpose
@pytest.mark.parametrize("sigma", [0.0, SIGMA, 0.02, 0.1])
@pytest.mark.parametrize("window", [WINDOW, 3.0])
def test_same_events_at_20_and_40_fps_agree_at_common_times(sigma, window):
    rng = np.random.default_rng(3)
    e = np.concatenate([[0.0], np.cumsum(rng.uniform(0.3, 1.5, 10))])
    t20, t40 = grid(20, e[-1] + 0.5), grid(40, e[-1] + 0.5)
    a = events.encode(t20, e, window, sigma)
    b = events.encode(t40, e, window, sigma)
    if sigma == 0.0:
        np.testing.assert_array_equal(a[0], b[0][::2])
        np.testing.assert_array_equal(a[1], b[1][::2])
    else:
        # The issue asks for 1e-3; the track is smoothed in continuous time, so rounding is all.
        assert np.abs(np.asarray(a) - np.asarray(b)[:, ::2]).max() <= 1e-12
    got20 = events.detect(t20, *a, window)
    got40 = events.detect(t40, *b, window)
    if sigma <= 0.02:  # the kernel stays clear of the jumps between events near each crossing
        np.testing.assert_allclose(got20, e, atol=1e-9)
        np.testing.assert_allclose(got40, e, atol=1e-9)
    else:  # it reaches them: d_hat bends near some crossings, which each rate reads through its
        # own samples. With window 3 every gap is under the window, d_hat bends everywhere and
        # detect reads it as noise, through lines over 0.1 s; the one at 0 s, whose line reaches
        # into the blur of the jump 0.2 s later, falls too slowly at 20 fps and is not found.
        if window == 3.0:
            got20, got40, e = (x[x > e[1] / 2] for x in (got20, got40, e))
        assert got20.shape == got40.shape == e.shape
        assert np.abs(got20 - got40).max() <= 0.5 / 40


# -- detect: recovering events --------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.0, SIGMA, 0.05])
@pytest.mark.parametrize("fps", [30, 120])
def test_events_on_the_first_and_last_samples_fire_exactly_there(sigma, fps):
    t = grid(fps, 3.0)
    for e in ([0.0, 3.0], [0.0, 1.5, 3.0], [t[-1]], [t[0]]):
        sin, cos = events.encode(t, e, WINDOW, sigma)
        np.testing.assert_array_equal(events.detect(t, sin, cos, WINDOW), e)


@pytest.mark.parametrize("fps", [30, 120])
@pytest.mark.parametrize("seed", range(4))
def test_footsteps_at_sub_frame_times_are_recovered_within_half_a_frame(fps, seed):
    rng = np.random.default_rng(seed)
    t = grid(fps, 20.0)
    steps = footsteps(rng, 20.0)
    # Each foot's steps ~1.1 s apart with the default window; both feet's, ~0.55 s apart, with a
    # window under half of that: within a frame or two of one window apart an event's exact
    # stretch (gap - window) is shorter than a frame, and the turn beside it bends its crossing.
    for track, window in ((steps[0::2], WINDOW), (steps[1::2], WINDOW), (steps, 0.25)):
        for sigma in (0.0, SIGMA):
            got = events.detect(t, *events.encode(t, track, window, sigma), window)
            assert got.shape == track.shape, (sigma, got, track)
            assert np.abs(got - track).max() <= 0.5 / fps
            assert np.abs(got - track).max() <= 1e-9  # exact, in fact


def test_both_feet_a_window_apart_are_named_and_still_fire_within_a_frame():
    # The same walk with both feet on one track and the default window: most gaps are within a
    # frame or two of the window, where the exact stretch beside an event shrinks to nothing.
    rng = np.random.default_rng(0)
    steps = footsteps(rng, 20.0)
    gaps = events.close_gaps(steps, WINDOW)
    np.testing.assert_array_equal(gaps[:, 0], np.diff(steps))  # every one under two windows
    np.testing.assert_array_equal(gaps[:, 1], steps[:-1])
    for fps in (30, 120):
        t = grid(fps, 20.0)
        got = events.detect(t, *events.encode(t, steps, WINDOW), WINDOW)
        found = np.abs(got[:, None] - steps[None]).min(axis=0) <= 1.0 / fps
        assert found.mean() >= 0.95, (fps, found.mean())


@pytest.mark.parametrize("fps", [20, 30, 60, 120, 240])
def test_random_event_sets_are_recovered_at_every_common_frame_rate(fps):
    rng = np.random.default_rng(fps)
    t = grid(fps, 30.0)
    for _ in range(5):
        # At least 2 (4 sigma + dt) apart: no jump within the kernel's reach of a crossing; and
        # none from one window to 4 sigma + dt beyond it, where the kink where the turn begins
        # would be within the kernel's reach of the crossing too.
        gaps = rng.uniform(2 * (4 * SIGMA + 1 / fps), 1.5, 40)
        gaps[(gaps >= WINDOW) & (gaps < WINDOW + 4 * SIGMA + 1 / fps)] += 4 * SIGMA + 1 / fps
        e = np.cumsum(gaps)
        e = e[e <= t[-1]]
        got = events.detect(t, *events.encode(t, e, WINDOW, SIGMA), WINDOW)
        assert got.shape == e.shape
        assert np.abs(got - e).max() <= 1e-9


def test_events_two_frames_apart_both_fire_and_closer_ones_merge_with_a_warning():
    t = grid(120, 2.0)
    dt = 1 / 120
    e = [0.5, 0.5 + 2 * dt, 1.2]
    np.testing.assert_allclose(events.detect(t, *events.encode(t, e, WINDOW), WINDOW), e, atol=1e-12)
    with pytest.warns(EventWarning, match="closer than 2 frames"):
        sin, cos = events.encode(t, [0.5, 0.5 + 1.5 * dt, 0.5 + 3 * dt, 1.2], WINDOW)
    np.testing.assert_allclose(events.detect(t, sin, cos, WINDOW), [0.5, 1.2], atol=1e-12)


def test_detected_events_closer_than_two_frames_merge_into_the_first_with_a_warning():
    dt = 0.01
    t = np.arange(8) * dt
    d = np.array([0.03, 0.02, 0.01, 0.0, 0.005, -0.005, -0.015, -0.025])  # falls through 0 twice
    with pytest.warns(EventWarning, match="detected events"):
        got = events.detect(t, np.sin(np.pi * d / 0.1), np.cos(np.pi * d / 0.1), 0.1)
    np.testing.assert_allclose(got, [0.03], atol=1e-12)


def test_dropped_frames_still_fire_at_the_right_time():
    t = grid(60, 5.0)
    e = np.array([0.71, 1.9, 3.333, 4.2])
    keep = np.ones(t.size, dtype=bool)
    keep[[42, 43, 113, 114, 115, 199]] = False  # frames around the events go missing
    sin, cos = events.encode(t, e, WINDOW)
    np.testing.assert_allclose(events.detect(t[keep], sin[keep], cos[keep], WINDOW), e, atol=1e-9)


def test_an_event_just_before_the_first_sample_fires_only_within_a_frame():
    t = grid(30, 2.0)
    for before, fires in ((0.4 / 30, True), (1.2 / 30, False)):
        got = events.detect(t, *events.encode(t, [-before, 1.0], WINDOW), WINDOW)
        np.testing.assert_allclose(got, [-before, 1.0] if fires else [1.0], atol=1e-12)


# -- detect: gates --------------------------------------------------------------------------------


def test_never_fires_while_rising():
    t = grid(60, 4.0)
    sin, cos = events.encode(t, [1.0, 2.2, 3.5], WINDOW, SIGMA)
    assert events.detect(t, -sin, cos, WINDOW).size == 0  # time reversed: d_hat rises through 0


def test_never_fires_across_the_window_wrap():
    # Far from events the pair sits at (0, -1); noise flips sin's sign, so d_hat flips between
    # about +window and -window: a fall through "0" that is no event.
    t = grid(60, 4.0)
    sin = 1e-3 * np.where(np.arange(t.size) % 2 == 0, 1.0, -1.0)
    cos = -np.ones(t.size)
    assert events.detect(t, sin, cos, WINDOW).size == 0
    # A clean wrap from just under +window to just over -window, at the right speed as well.
    d = np.array([0.2, 0.1, -0.5 + 1e-9, -0.45, -0.4]) + 0.2
    d = np.where(d > WINDOW, d - 2 * WINDOW, d)
    assert events.detect(np.arange(5) * 0.1, np.sin(np.pi * d / WINDOW), np.cos(np.pi * d / WINDOW),
                         WINDOW).size == 0


def test_playback_rate_gates_the_falling_speed():
    t = grid(60, 3.0)
    e = np.array([0.8, 2.2])
    sin, cos = events.encode(2.0 * t, e, 2.0)  # played twice as fast: d_hat falls 2 s per second
    assert events.detect(t, sin, cos, 2.0).size == 0
    np.testing.assert_allclose(events.detect(t, sin, cos, 2.0, rate=2.0), e / 2, atol=1e-12)
    np.testing.assert_allclose(events.detect(t, sin, cos, 2.0, speed_tol=1.5), e / 2, atol=1e-12)


def test_near_gates_how_far_from_zero_the_crossing_samples_may_be():
    t = grid(10, 3.0)
    sin, cos = events.encode(t, [1.05, 2.02], WINDOW)  # samples 0.05 s either side; 0.02 and 0.08
    np.testing.assert_allclose(events.detect(t, sin, cos, WINDOW), [1.05, 2.02], atol=1e-12)
    np.testing.assert_allclose(events.detect(t, sin, cos, WINDOW, near=0.06), [1.05], atol=1e-12)


@pytest.mark.parametrize("lead", [0.1, 0.3, -0.2])
def test_lead_fires_that_many_seconds_early(lead):
    t = grid(60, 4.0)
    e = np.array([0.7, 1.9, 3.3])
    for sigma in (0.0, SIGMA):
        got = events.detect(t, *events.encode(t, e, WINDOW, sigma), WINDOW, lead=lead)
        np.testing.assert_allclose(got, e - lead, atol=1e-9)


def test_lead_within_a_frame_of_the_start_fires_through_the_first_sample():
    t = grid(60, 2.0)
    got = events.detect(t, *events.encode(t, [0.1 + 0.3 / 60, 1.0], WINDOW), WINDOW, lead=0.1)
    np.testing.assert_allclose(got, [0.3 / 60, 0.9], atol=1e-12)


def test_lead_must_stay_two_frames_inside_the_window():
    t = grid(60, 2.0)
    sin, cos = events.encode(t, [1.0], WINDOW)
    with pytest.raises(ValueError, match="lead"):
        events.detect(t, sin, cos, WINDOW, lead=WINDOW - 1.5 / 60)


def test_window_shorter_than_two_frames_is_an_error():
    t = grid(30, 1.0)
    with pytest.raises(ValueError, match="two frames"):
        events.encode(t, [0.5], 1.5 / 30)
    sin, cos = events.encode(t, [0.5], 2.0 / 30)
    with pytest.raises(ValueError, match="two frames"):
        events.detect(t, sin, cos, 1.9 / 30)
    np.testing.assert_allclose(events.detect(t, sin, cos, 2.0 / 30), [0.5], atol=1e-12)


def wobble(dt: float) -> np.ndarray:
    """d at samples dt apart: falling at 1 s/s through 0 (at 6 dt), back up to 0.008 s over three
    steps, then falling at 1 s/s again (through 0 at 9 dt + 0.008 s)."""
    fall = 6 * dt - dt * np.arange(7)
    back = np.array([-0.005, 0.0015, 0.008])
    return np.concatenate([fall, back, back[-1] - dt * np.arange(1, 20)])


def test_hysteresis_fires_once_where_d_hat_wobbles_about_zero():
    dt = 1 / 60
    d = wobble(dt)
    t = np.arange(d.size) * dt
    sin, cos = np.sin(np.pi * d / WINDOW), np.cos(np.pi * d / WINDOW)
    once = events.detect(t, sin, cos, WINDOW, tolerance=0.02)
    np.testing.assert_allclose(once, [6 * dt], atol=1e-9)
    twice = events.detect(t, sin, cos, WINDOW, tolerance=0.001)  # re-armed at 0.008 s
    np.testing.assert_allclose(twice, [6 * dt, 9 * dt + 0.008], atol=1e-9)


def test_span_and_tolerance_are_checked():
    t = grid(30, 2.0)
    sin, cos = events.encode(t, [1.0], WINDOW)
    with pytest.raises(ValueError, match="span"):
        events.detect(t, sin, cos, WINDOW, span=-0.1)
    with pytest.raises(ValueError, match="tolerance"):
        events.detect(t, sin, cos, WINDOW, tolerance=WINDOW)
    with pytest.raises(ValueError, match="tolerance"):
        events.detect(t, sin, cos, WINDOW, tolerance=-1e-3)
    for span in (0.0, 0.05, 0.2):  # a span under three samples reads three
        np.testing.assert_allclose(events.detect(t, sin, cos, WINDOW, span=span), [1.0], atol=1e-12)


@pytest.mark.parametrize("fps", [30, 120])
def test_causal_detection_on_a_prefix_finds_what_the_whole_track_found_by_then(fps):
    rng = np.random.default_rng(fps)
    t = grid(fps, 12.0)
    e = footsteps(rng, 12.0)[0::2]
    sin, cos = events.encode(t, e, WINDOW)
    sin = sin + rng.normal(0.0, 0.03, sin.size)
    cos = cos + rng.normal(0.0, 0.03, cos.size)
    full = events.detect(t, sin, cos, WINDOW, causal=True)
    assert full.size == e.size and np.abs(full - e).max() <= 0.02
    for end in range(t.size // 3, t.size, 17):
        part = events.detect(t[:end], sin[:end], cos[:end], WINDOW, causal=True)
        # Known by the prefix's last sample (to the noise spread, which the prefix reads itself).
        np.testing.assert_allclose(part, full[full <= t[end - 1]], atol=2e-3)


# -- loops ----------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*smoothing blends:core.events.EventWarning")  # close on purpose
@pytest.mark.parametrize("sigma", [0.0, SIGMA, 0.2])
def test_a_loop_is_the_same_as_its_events_repeated_every_period(sigma):
    period = 1.1
    t = np.arange(132) / 120  # one cycle; the last frame is the first one again
    e = np.array([0.03, 0.58, 1.09])
    looped = events.encode(t, e, WINDOW, sigma, loop_period=period)
    tiled = events.encode(t, np.concatenate([e - period, e, e + period]), WINDOW, sigma)
    assert np.abs(np.asarray(looped) - np.asarray(tiled)).max() <= 1e-12
    # Events and times outside [0, period) wrap.
    shifted = events.encode(t + 3 * period, e - period, WINDOW, sigma, loop_period=period)
    assert np.abs(np.asarray(shifted) - np.asarray(looped)).max() <= 1e-9


def test_loop_events_closer_than_two_frames_across_the_wrap_merge():
    t = np.arange(120) / 120
    with pytest.warns(EventWarning):
        looped = events.encode(t, [0.001, 0.5, 0.999], WINDOW, loop_period=1.0)
    np.testing.assert_array_equal(looped, events.encode(t, [0.5, 0.999], WINDOW, loop_period=1.0))


# -- bad input ------------------------------------------------------------------------------------


def test_bad_input_raises_value_errors_at_the_boundary():
    t = grid(30, 1.0)
    sin, cos = events.encode(t, [0.5], WINDOW)
    with pytest.raises(ValueError, match="increase"):
        events.encode(t[::-1], [0.5], WINDOW)
    with pytest.raises(ValueError, match="finite"):
        events.encode(t, [np.nan], WINDOW)
    with pytest.raises(ValueError, match="sigma"):
        events.encode(t, [0.5], WINDOW, sigma=-1.0)
    with pytest.raises(ValueError, match="window"):
        events.encode(t, [0.5], 0.0)
    with pytest.raises(ValueError, match="loop_period"):
        events.encode(t, [0.5], WINDOW, loop_period=0.0)
    with pytest.raises(ValueError, match="shape"):
        events.detect(t, sin[:-1], cos[:-1], WINDOW)
    with pytest.raises(ValueError, match="two samples"):
        events.detect(t[:1], sin[:1], cos[:1], WINDOW)
    assert events.detect(t[:0], sin[:0], cos[:0], WINDOW).size == 0
    assert events.encode(t[:0], [0.5], WINDOW, SIGMA)[0].shape == (0,)
    one = np.array([3.0])  # a single sample smooths too: no frame step is needed
    want = smoothed(one, np.array([2.0, 7.0]), 3.0, 0.1)
    np.testing.assert_allclose(events.encode(one, [2, 7], 3.0, 0.1), want, atol=1e-9)


# -- tags -----------------------------------------------------------------------------------------


def test_ranges_are_sorted_merged_half_open_intervals():
    got = events.ranges([(5, 6), (1, 2), (2, 3), (1.5, 1.8), (4, 4), (7, 9), (8, 8.5)])
    np.testing.assert_array_equal(got, [[1, 3], [5, 6], [7, 9]])
    assert events.ranges([]).shape == (0, 2)
    with pytest.raises(ValueError, match=r"\[3, 2\)"):
        events.ranges([(0, 1), (3, 2)])


def test_one_hot_includes_the_start_and_excludes_the_end():
    t = np.array([0.0, 0.999, 1.0, 1.5, 2.0, 2.5, 3.0])
    np.testing.assert_array_equal(events.one_hot(t, [(1, 2), (2.5, 3)]), [0, 0, 1, 1, 0, 1, 0])
    assert events.one_hot(t, []).sum() == 0.0
    tags = events.one_hot_tags(t, {"jump": [(1, 2)], "idle": []})
    assert set(tags) == {"jump", "idle"}
    np.testing.assert_array_equal(tags["jump"], [0, 0, 1, 1, 0, 0, 0])


@pytest.mark.parametrize("seed", range(6))
def test_union_intersection_and_difference_agree_with_pointwise_logic(seed):
    rng = np.random.default_rng(seed)

    def random_ranges() -> np.ndarray:
        start = rng.integers(0, 40, rng.integers(0, 8)) / 4
        return np.stack([start, start + rng.integers(0, 12, start.size) / 4], axis=-1)

    a, b = random_ranges(), random_ranges()
    t = np.arange(-4, 240) / 20  # every bound (a multiple of 0.25) is sampled exactly
    in_a, in_b = events.one_hot(t, a) > 0, events.one_hot(t, b) > 0
    for op, want in ((events.union, in_a | in_b), (events.intersection, in_a & in_b),
                     (events.difference, in_a & ~in_b)):
        r = op(a, b)
        np.testing.assert_array_equal(events.one_hot(t, r) > 0, want)
        np.testing.assert_array_equal(r, events.ranges(r))  # normalized
    np.testing.assert_array_equal(events.difference(a, a), np.zeros((0, 2)))


def test_markers_pair_into_tag_ranges():
    markers = [("run_end", 2.0), ("run_start", 0.5), ("crouch_start", 3.0), ("run_start", 2.0),
               ("crouch_end", 3.5), ("run_end", 4.0), ("footstep_l", 1.0), ("_start", 9.0)]
    got = events.from_markers(markers)
    assert set(got) == {"run", "crouch"}
    np.testing.assert_array_equal(got["run"], [[0.5, 4.0]])  # end and start at 2.0 touch
    np.testing.assert_array_equal(got["crouch"], [[3.0, 3.5]])


@pytest.mark.parametrize("markers, message", [
    ([("run_start", 1.0)], r"'run'.*run_start at 1 s has no run_end"),
    ([("run_end", 1.0)], r"'run'.*run_end at 1 s has no run_start"),
    ([("run_start", 1.0), ("run_start", 2.0), ("run_end", 3.0)], r"'run'.*run_start at 2 s"),
    ([("run_end", 1.0), ("run_start", 1.0)], r"'run'.*both at 1 s make an empty range"),
])
def test_unmatched_markers_name_the_tag_and_time(markers, message):
    with pytest.raises(ValueError, match=message):
        events.from_markers(markers)


@pytest.mark.parametrize("fps", [24.0, 30.0, 30000 / 1001, 60.0, 120.0])
def test_events_two_frames_apart_both_decode_wherever_they_fall(fps):
    # The sample between them sits on their midpoint, up to an ulp of k / fps either side; it
    # must go to the later event whichever side it lands, or that event is lost.
    t = np.arange(int(2 * fps)) / fps
    for k in range(1, t.size - 3):
        want = t[[k, k + 2]]
        sin, cos = events.encode(t, want, WINDOW, 0.0)
        np.testing.assert_allclose(events.detect(t, sin, cos, WINDOW), want, atol=1e-9, err_msg=str(k))


def test_smoothing_warns_where_it_blends_close_events():
    t = np.arange(240) / 120
    with pytest.warns(events.EventWarning, match="smoothing blends"):
        sin, cos = events.encode(t, [1.0, 1.025], 0.5, 1 / 120)
    found = events.detect(t, sin, cos, 0.5)
    assert found.size < 2 or np.abs(found - [1.0, 1.025]).max() > 1e-3  # what the warning is about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sin, cos = events.encode(t, [1.0, 1.1], 0.5, 1 / 120)  # 12 frames apart: clear of it
    np.testing.assert_allclose(events.detect(t, sin, cos, 0.5), [1.0, 1.1], atol=1e-9)
