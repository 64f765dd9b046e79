"""The contact detector's all-contacts-at-once helpers against plain per-item oracles: numpy's own
median, sort and window minimum, and a scalar loop over each contact's window. Random inputs with
ties (small integers) and, where the oracle defines it, NaN."""

from __future__ import annotations

import numpy as np
import pytest

from core import contacts


def _cases(seed: int, count: int = 400):
    rng = np.random.default_rng(seed)
    for t in range(count):
        n = int(rng.integers(1, 70))
        x = rng.integers(0, 5, size=n).astype(float) if t % 2 else rng.normal(size=n)
        yield rng, t, n, x


@pytest.mark.parametrize("window", [1, 3, 5, 7])
def test_speed_median_is_numpys_median_over_the_padded_window(window):
    for _, _, _, x in _cases(1):
        for loop in (False, True):
            padded = np.pad(x, window // 2, mode="wrap" if loop else "edge")
            want = np.median(np.lib.stride_tricks.sliding_window_view(padded, window), axis=-1)
            np.testing.assert_array_equal(contacts._median(x, window, loop), want)


def test_running_floor_is_the_minimum_over_each_padded_window():
    for rng, t, n, x in _cases(2):
        if t % 9 == 0:
            x[rng.integers(0, n)] = np.nan
        radius = int(rng.integers(1, 40))
        for loop in (False, True):
            padded = np.pad(x, radius, mode="wrap" if loop else "edge")
            want = np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).min(axis=-1)
            np.testing.assert_array_equal(contacts._running_min(x, radius, loop), want)


def _windows(rng, n):
    cuts = np.sort(rng.choice(np.arange(1, n + 1), min(int(rng.integers(1, 6)), n), replace=False))
    cuts[-1] = n
    since = np.concatenate([[0], cuts[:-1]])
    return since, cuts, np.repeat(np.arange(cuts.size), cuts - since)


def test_standing_heights_are_each_groups_sorted_middle():
    for rng, t, n, _ in _cases(3):
        x = rng.integers(0, 5, size=(n, 3)).astype(float)
        if t % 7 == 0:
            x[rng.integers(0, n)] = np.nan  # the lexsort path, which sorts NaN last as np.sort does
        _, stops, owner = _windows(rng, n)
        frames = np.flatnonzero(rng.random(n) < rng.random())
        default = rng.normal(size=(stops.size, 3))
        got = contacts._middles(x, frames, owner, default)
        for k in range(stops.size):
            f = frames[owner[frames] == k]
            want = np.sort(x[f], axis=0)[f.size // 2] if f.size else default[k]
            np.testing.assert_array_equal(got[k], want)


def test_knees_match_a_window_by_window_argmax_and_parabola():
    for rng, _, n, bend in _cases(4):
        since, stops, _ = _windows(rng, n)
        lo = since + rng.integers(0, 3, size=since.size)
        hi = stops - 1 - rng.integers(0, 3, size=stops.size)
        default = rng.normal(size=lo.size)
        got = contacts._knees(bend, lo, hi, default)
        for k in range(lo.size):
            want = float(default[k])
            if hi[k] >= lo[k]:
                i = int(lo[k] + np.argmax(bend[lo[k]:hi[k] + 1]))
                if bend[i] > 0.0:
                    want = float(i)
                    if lo[k] < i < hi[k]:
                        y0, y1, y2 = (float(v) for v in bend[i - 1:i + 2])
                        if y0 - 2.0 * y1 + y2 < 0.0:
                            want = i + 0.5 * (y0 - y2) / (y0 - 2.0 * y1 + y2)
            assert got[k] == want


def test_contact_frames_cover_each_span_modulo_the_take():
    rng = np.random.default_rng(5)
    for _ in range(400):
        n = int(rng.integers(1, 40))
        first = rng.integers(0, n, size=int(rng.integers(0, 6)))
        last = first + rng.integers(-2, n + 3, size=first.size)
        want = np.zeros(n, bool)
        for a, b in zip(first, last, strict=True):
            want[np.arange(a, b + 1) % n] = True
        np.testing.assert_array_equal(contacts._cover(first, last, n), want)


def test_landings_match_a_window_by_window_scan():
    for rng, _, n, s in _cases(6):
        down = rng.integers(0, 4, size=n).astype(float) * 0.01
        since, stops, _ = _windows(rng, n)
        lo = np.minimum(since + rng.integers(0, 3, size=since.size), stops)  # at most a window's end
        hi = stops - 1 - rng.integers(0, 2, size=stops.size)
        touch_m, touch_mps = 0.015, 0.2
        landed, found = contacts._landing(s, down, lo, hi, since, touch_m, touch_mps)
        for k in range(lo.size):
            ok = [f for f in range(lo[k], hi[k] + 1) if down[f] <= touch_m and s[f] <= touch_mps]
            assert found[k] == bool(ok)
            if not ok:
                continue
            f, want = ok[0], float(ok[0])
            if f > lo[k]:
                # Each crossing between frames f - 1 and f, counted from the window's start.
                r = f - since[k]
                crossings = [r - 1 + (float(x[f - 1]) - limit) / (float(x[f - 1]) - float(x[f])) + since[k]
                             for x, limit in ((down, touch_m), (s, touch_mps)) if x[f - 1] > limit >= x[f]]
                want = max(crossings) if crossings else want
            assert landed[k] == want
