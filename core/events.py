"""Event tracks as smooth training targets, and tags as ranges of seconds.

Games attach single-frame events (footsteps, sound triggers, sync points) to animations, and a
neural model must learn to emit them. A one-hot spike is a poor target: almost every frame is
empty, and a spike between two frames is missed when the frame rate drops. Instead each sample
carries the signed time to its nearest event, as a point on the unit circle:

    d     = nearest event time - sample time    (> 0 before the event, < 0 after; seconds)
    u     = clip(d / window, -1, 1)
    theta = pi * u,   target = (sin theta, cos theta)

Next to an event theta turns at pi / window per second, and a window or more away it rests on
the far side, (0, -1). Where two events are closer than two windows the nearest event changes
mid-gap; instead of jumping there, theta goes on turning through the far side at twice the rate,
2 pi / window per second, over the middle 2 window - gap of the gap: the only rate that keeps
theta = pi d / window within gap - window of both events. So the pair is bounded and continuous
(never turning faster than twice its rate next to an event), the same at every frame rate, and
`decode` recovers d with atan2 within the window of an event, or within gap - window of it where
its neighbour is closer than two windows (`close_gaps` names those). Events closer than one
window leave no room for that turn: there d jumps at the midpoint, as the nearest event changes,
and decodes exactly throughout.

`detect` turns a (predicted) pair back into event times: where a least-squares line through
d_hat over a short span of samples falls through zero at about real-time speed, with hysteresis,
so noise on a network's output neither hides events nor adds any. Gaussian smoothing of the pair
keeps the phase of the linear parts exactly (a symmetric kernel scales a uniformly turning phasor
without turning it), so smoothed tracks decode to the same crossings.

Tags are ranges of seconds: `[K, 2]` float64 arrays of half-open `[start, end)` intervals, sorted
and merged, with set operations and one-hot curves.

Times are seconds everywhere; `times` is the `[N]` sample times of a clip (`clip.times`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

# The Gaussian is truncated at this many sigmas (and renormalised).
_TRUNCATE = 4.0
# Cells of the tabulated Gaussian integrals over [-4 sigma, 4 sigma], per unit of sigma * omega
# (at least this many): cubic Hermite interpolation between them is good to ~1e-12.
_TABLE_CELLS = 2048
# "Closer than two frames" allows for the rounding in frame times k / fps: two frames of the
# grid apart is two frames, even when t[k + 2] - t[k] comes out an ulp short of 2 * max step.
_FRAME_TOL = 1e-9
# detect: |d_hat| up to this fraction of the window is 0. Rounding (a few ulp of the window, less
# after smoothing) must not move an event on a sample to the next one, or lose it on the last.
_SNAP = 1e-9
# detect's defaults, seconds. A span of 0.1 s averages 13 samples at 120 fps, enough to read the
# slope of d_hat through Gaussian noise of 0.05 on sin and cos (0.008 s on d_hat, as much as a
# frame step) to +-0.1, and still fits between footsteps of a run at the default window of 0.5 s
# (gap - window >= 0.1 s on either side of each). The hysteresis only has to outlast the wobble
# of the fitted line around zero, a few milliseconds: by default 3x the track's noise, at most this.
SPAN = 0.1
TOLERANCE = 0.02


class EventWarning(UserWarning):
    """Events closer than two frames were merged (one frame step cannot hold two of them),
    smoothing blends events too close for it, or events are too close for their window to
    decode exactly (`close_gaps`)."""


# -- encoding -------------------------------------------------------------------------------------


def encode(times: Any, event_times: Any, window: float, sigma: float = 0.0,
           loop_period: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(sin [N], cos [N]) float64: the event phase of each sample time, optionally smoothed.

    `times` [N] seconds, increasing; `event_times` seconds, any order, sub-frame allowed (events
    outside the clip count as given). d = signed time to the nearest event (> 0 before it, ties
    go to the upcoming event, +inf without events), theta = pi clip(d / window, -1, 1): exactly
    (0, 1) on an event and (0, -1) at |d| >= window. Between two events g seconds apart with
    window <= g < 2 window, theta turns on through the far side at 2 pi / window per second
    over the middle 2 window - g of the gap (no jump where the nearest event changes), so
    decoding is exact within g - window of each; events closer than a window keep the jump at
    their midpoint (see the module docstring, and `close_gaps`).

    `sigma` > 0 smooths sin and cos (each; no renormalising, decode uses atan2) with a Gaussian of
    `sigma` seconds truncated at 4 sigma: the continuous track convolved exactly, then sampled, so
    the values do not depend on the frame rate (a kernel sampled at the frame rate smooths a
    30 fps and a 120 fps track differently near its kinks). Where no kink or jump lies within
    4 sigma the phase is untouched (the pair shrinks by a constant), so decode is exact there;
    beyond the clip's ends the track goes on with no events but those given, so an event on the
    first or last sample still decodes to exactly 0.

    `loop_period` makes the track periodic: events and times wrap over [0, loop_period), and d is
    the signed distance around the loop.

    Events closer than 2 dt (dt: the largest time step) merge into the first of each run, with an
    EventWarning: a falling crossing needs two samples. With smoothing, events whose exact
    stretch (see `exact_radius`) is shorter than 4 sigma + dt get an EventWarning too: the kernel
    bends d_hat at the samples that locate them. `window` must be at least 2 dt.
    """
    t = _times(times, "times")
    window = _positive(window, "window")
    sigma = float(sigma)
    if not (sigma >= 0.0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be >= 0 and finite, not {sigma}")
    period = None if loop_period is None else _positive(loop_period, "loop_period")
    N = t.size
    step = _frame_steps(t, window) if N > 1 else None
    dt = None if step is None else float(step.max())
    search = _searcher(t, step)
    events = _merge_events(_event_times(event_times, period), dt, period)
    if N == 0:
        return np.zeros(0), np.zeros(0)
    reach = _TRUNCATE * sigma
    if sigma > 0.0:
        _warn_blurred(events, window, dt, reach, period)
    if period is not None and events.size:
        # The loop's events copied over every period the times (and the kernel's reach) touch,
        # and one more each side, so the times stay sorted: the nearest event and its neighbours
        # (whose gaps decide the turn between them) are in the copies.
        k = np.arange(math.floor((t[0] - reach) / period) - 1, math.floor((t[-1] + reach) / period) + 2)
        events = (events + period * k[:, None].astype(np.float64)).ravel()
    d, turning = _turned_distance(t, events, window, search)
    if sigma == 0.0 or events.size == 0:
        return _phasor(d, window)
    return _smoothed_phasor(t, d, turning, events, window, sigma, search)


def exact_radius(event_times: Any, window: float) -> np.ndarray:
    """[K] seconds either side of each (sorted, distinct) event within which `decode` of its
    encoding is exact: the window, or gap - window toward a neighbour closer than two windows,
    or half the gap toward one closer than one window (the jump at the midpoint)."""
    e = np.sort(np.asarray(event_times, dtype=np.float64).reshape(-1))
    window = _positive(window, "window")
    side = _side_radius(np.diff(e), window)
    both = np.full((2, e.size), window)
    both[0, 1:] = side
    both[1, :-1] = side
    return both.min(axis=0)


def close_gaps(event_times: Any, window: float, loop_period: float | None = None) -> np.ndarray:
    """[K, 2] (gap, time) in seconds: every gap between consecutive events shorter than two
    windows, with the time of the event that opens it, in time order (around the loop too, with
    `loop_period`). Next to such a gap `decode` is exact only within gap - window of the events
    (gap / 2 when the gap is under one window), not the whole window: the encoding turns through
    the far side between them (or, under one window, jumps). A window of half the shortest gap
    keeps every event exact to its full window."""
    window = _positive(window, "window")
    period = None if loop_period is None else _positive(loop_period, "loop_period")
    e = _event_times(event_times, period)
    if e.size < 2 - (period is not None) or e.size == 0:
        return np.zeros((0, 2))
    gaps = np.diff(e, append=e[0] + period) if period is not None else np.diff(e)
    close = gaps < 2.0 * window
    return np.stack([gaps[close], e[:gaps.size][close]], axis=-1)


def describe_close_gaps(track: str, gaps: Any, window: float) -> str:
    """One line naming `track` and its gaps from `close_gaps` (empty when there are none), for a
    warning or an operator's report."""
    g = np.asarray(gaps, dtype=np.float64).reshape(-1, 2)
    if g.shape[0] == 0:
        return ""
    shortest = int(np.argmin(g[:, 0]))
    gap, at = g[shortest]
    under = int((g[:, 0] < window).sum())
    jumps = f", {under} under one window (there it jumps)" if under else ""
    radius = float(_side_radius(np.array([gap]), window)[0])
    return (f"{track}: {g.shape[0]} gap{'s' if g.shape[0] > 1 else ''} between events under two windows "
            f"({2.0 * window:g} s){jumps}, the shortest {gap:.3g} s from the event at {at:.3f} s: there "
            f"the encoding decodes exactly only {radius:.3g} s either side of an event, not the window; a "
            f"window of {gap / 2.0:.3g} s keeps it exact")


def _side_radius(gaps: np.ndarray, window: float) -> np.ndarray:
    """How far from an event, toward a neighbour `gaps` away, the encoding stays exact."""
    return np.where(gaps >= 2.0 * window, window, np.where(gaps >= window, gaps - window, 0.5 * gaps))


def _warn_blurred(events: np.ndarray, window: float, dt: float | None, reach: float,
                  period: float | None) -> None:
    """Warn where smoothing reaches from a kink or jump of the track to the samples that locate
    an event (its exact stretch shorter than reach + dt): their crossings may merge or move."""
    if dt is None or events.size < 2 - (period is not None) or events.size == 0:
        return
    gaps = np.diff(events, append=events[0] + period) if period is not None else np.diff(events)
    close = _side_radius(gaps, window) < reach + dt
    if close.any():
        first = np.roll(events, -1)[:gaps.size][close][0] % (period or np.inf)
        warnings.warn(f"{int(close.sum())} events decode exactly for less than 4 sigma + dt = "
                      f"{reach + dt:g} s toward the previous one (exact_radius), the first at {first:g} s: "
                      "smoothing blends their encodings, so they may decode merged or moved (smooth less, "
                      "narrow the window, or keep events further apart)", EventWarning, stacklevel=3)


def decode(sin: Any, cos: Any, window: float) -> np.ndarray:
    """Signed seconds to the nearest event, d_hat = window * atan2(sin, cos) / pi, in [-window,
    window]: exact inside an event's exact stretch (`exact_radius`) for encoded tracks,
    +-window far from events."""
    window = _positive(window, "window")
    d = np.arctan2(np.asarray(sin, dtype=np.float64), np.asarray(cos, dtype=np.float64))
    d *= window / np.pi
    return d


def detect(times: Any, sin: Any, cos: Any, window: float, *, rate: float = 1.0, speed_tol: float = 0.5,
           near: float | None = None, lead: float = 0.0, span: float = SPAN,
           tolerance: float | None = None, causal: bool = False) -> np.ndarray:
    """Event times (seconds, sorted) recovered from an event track (sin, cos) sampled at `times`.

    d' = decode(sin, cos, window) - lead is read through least-squares lines: for each frame step
    k-1 -> k, the line through d' over the samples up to `span` / 2 seconds either side of it
    (the median frame step decides how many, at least one each side; with `causal`, over the
    `span` seconds up to sample k, at least two steps), unwrapped across the +-window wrap. A line
    stops short at a bend: a sample where d' changes slope by more than its noise explains (8
    times a robust spread of its second differences over the track, and at least 1e-9 window).
    So on a clean track a line follows d' exactly, however close its kinks and jumps, and on a
    noisy one it averages over the span, and no single noisy sample decides. An event fires in
    the step where the line falls from > 0 at t_k-1 to <= 0 at t_k, at its zero crossing
    (sub-frame); |d'| <= 1e-9 window counts as 0, so rounding neither moves an event on a sample
    nor loses one on the last. Gates, on the line:
      - falling at about `rate` seconds per second (the playback rate): its slope lies in
        [-rate (1 + speed_tol), -rate (1 - speed_tol)], so never while rising;
      - near zero: within `near` seconds of 0 at both samples (default (window - |lead|) / 2, as
        far as the track can be from its +-window wrap and still be read unambiguously);
      - never across the wrap: a fall of window or more (from about +window to -window);
      - hysteresis: after a firing, the next needs the line to have been above `tolerance`
        seconds at some sample first, so a line wobbling about zero fires once. Default: three
        times d''s noise (the spread above), at most 0.02 s; between two events of an encoded
        track d' passes +window, so none is lost to it.
    The first sample has a virtual predecessor, a step earlier, falling at `rate`, so an event on
    it (or up to a frame before it) fires. `lead` fires that many seconds early: at d_hat = lead,
    returning event - lead (negative `lead` fires late; |lead| < window - 2 dt). `times` must
    increase, not necessarily uniformly (dropped frames fire all the same); `window` must be
    >= 2 dt (dt: largest step). Firings closer than 2 dt merge into the first, with an
    EventWarning.

    On an encoded track the events come back exactly (to rounding) wherever the steps on each
    side of them lie in their exact stretch (`exact_radius`), clear of smoothing's reach; a step
    with a kink inside it (a turn beginning within a frame of its event) is read from the line
    beside it that falls nearest the rate, as the track falls at exactly the rate next to an
    event and at twice it in a turn. Under
    noise the kinks of the track hide in it, so the line spans them: an event fires where
    expected when the stretch holds span / 2 + 2 dt (0.1 s at the defaults; from 30 fps up,
    gaps of window + 0.1 s and more), and may fire moved, or not at all (its line, read across
    the turn beside it, falls too steeply), when it is shorter.

    `causal` reads each step from samples up to its later one only, so it can run as frames
    arrive: an event is known at the first sample at or after it (0 to 1 frame late), and the
    time returned is the line's zero crossing, at or before that sample. Noise adds a little:
    with 0.02-0.05 on sin and cos, known 0.4-0.8 frames after the event at the median, 1.0 at
    the 95th percentile, at 30 and 120 fps (tests/core/test_events_noisy.py prints it). A `lead`
    of a frame or more hides it. Only the noise spread (one number) is read from the whole track, as a runtime
    would calibrate it once. The default, centred lines need span / 2 + 1 frame of samples after
    an event.
    """
    t = _times(times, "times")
    window = _positive(window, "window")
    rate = _positive(rate, "rate")
    speed_tol = float(speed_tol)
    if not (speed_tol >= 0.0 and math.isfinite(speed_tol)):
        raise ValueError(f"speed_tol must be >= 0 and finite, not {speed_tol}")
    span = float(span)
    if not (span >= 0.0 and math.isfinite(span)):
        raise ValueError(f"span must be >= 0 and finite (seconds), not {span}")
    lead = float(lead)
    N = t.size
    d = decode(sin, cos, window)
    if d.shape != (N,):
        raise ValueError(f"sin and cos have shape {list(d.shape)}, expected [{N}] like times")
    if N == 0:
        return np.zeros(0)
    if N == 1:
        raise ValueError("detect needs at least two samples (the frame step comes from times)")
    step = _frame_steps(t, window)
    dt = float(step.max())
    if not abs(lead) < window - _two_frames(dt):
        raise ValueError(f"|lead| must be below window - 2 dt = {window - 2.0 * dt} s, not {lead}")
    near = (window - abs(lead)) / 2.0 if near is None else _positive(near, "near")
    # d' one step at a time, unwrapped: a jump of about 2 window (noise across the wrap) is none.
    jump = np.diff(d)
    wraps = np.round(jump / (2.0 * window))
    jump -= (2.0 * window) * wraps
    bends, noise = _bends(step, jump, window)
    if tolerance is None:
        tolerance = min(TOLERANCE, 3.0 * noise)
    tolerance = float(tolerance)
    if not (0.0 <= tolerance < window - abs(lead)):
        raise ValueError(f"tolerance must be >= 0 and below window - |lead| = {window - abs(lead)} s (the "
                         f"highest d_hat - lead reaches), not {tolerance}")
    uniform = float(step.max() - step.min()) <= 1e-9 * dt
    frame = (t[-1] - t[0]) / (N - 1) if uniform else float(np.median(step))
    if causal:  # each sample's level from the line of the step that ends on it
        before, after = max(2, math.floor(span / frame + 1e-9)) - 1, 1
    else:  # from the line of the step that starts on it, centred on that step
        before = max(1, math.floor(0.5 * span / frame + 1e-9))
        after = before + 1
    if noise == 0.0:  # clean: a line through a straight run is the line through its two samples
        before, after = 0, 1
    # Each step's run of samples: up to before / after samples from its first one, not past a bend
    # (which may end a run: the line is straight up to it).
    index = np.arange(N)
    bends[[0, -1]] = True  # the clip's ends end runs too
    last_end = np.maximum.accumulate(np.where(bends, index, 0))
    next_end = np.minimum.accumulate(np.where(bends, index, N - 1)[::-1])[::-1]
    left = np.minimum(before, index[:-1] - last_end[:-1])
    right = np.minimum(after, next_end[1:] - index[:-1])
    start, slope = _fit_lines(t, d, jump, wraps, left, right, before, after, window, uniform)
    if causal:
        level = np.concatenate([[d[0]], start + slope * step])
        fall = np.concatenate([[-rate], slope])  # each sample's line; the first has none yet
    else:
        level = np.append(start, start[-1] + slope[-1] * step[-1])
        fall = np.append(slope, slope[-1])
    if lead:
        level -= lead
    eps = _SNAP * window
    k = np.flatnonzero((level[:-1] > eps) & (level[1:] <= eps)) + 1
    prev, cur, h = level[k - 1], level[k], step[k - 1]
    along = fall[k] if causal else fall[k - 1]  # the line across the step k-1 -> k
    virtual = level[0] + rate * step[0]  # the first sample's predecessor: a step earlier, falling at `rate`
    if virtual > eps >= level[0]:
        k = np.concatenate([[0], k])
        prev = np.concatenate([[virtual], prev])
        cur = np.concatenate([[level[0]], cur])
        h = np.concatenate([[step[0]], h])
        along = np.concatenate([[-rate], along])
    cur = np.where(np.abs(cur) <= eps, 0.0, cur)
    if causal:  # the zero of the line that ends on sample k
        fired = t[k] + np.where(k > 0, cur / -np.minimum(along, -1e-300), h * cur / (prev - cur))
    else:  # from the later sample, so a crossing exactly on a sample is that sample's time, bit for bit
        fired = t[k] + h * cur / (prev - cur)
    # A step with a kink inside it (a bend on both its samples, so its line is just the two) is read
    # from the line beside it that falls nearest the rate, if that one crosses zero within the
    # step: next to an event an encoded track falls at exactly the rate, and a turn at twice it.
    kinked = np.flatnonzero((k > 0) & (left[k - 1] == 0) & (right[k - 1] == 1))
    for beside in ((k[kinked] - 2,) if causal else (k[kinked] - 2, k[kinked])):
        kk = k[kinked]
        ok = (beside >= 0) & (beside < N - 1)
        s_ = np.clip(beside, 0, N - 2)
        line = slope[s_]
        zero = t[s_] - (start[s_] - lead) / np.minimum(line, -1e-300)
        better = (ok & (line < 0.0) & (zero >= t[kk - 1]) & (zero <= t[kk])
                  & (np.abs(line + rate) < np.abs(along[kinked] + rate)))
        along[kinked] = np.where(better, line, along[kinked])
        fired[kinked] = np.where(better, zero, fired[kinked])
    ok = ((prev <= near) & (cur >= -near) & (prev - cur < window)
          & (along >= -rate * (1.0 + speed_tol)) & (along <= -rate * (1.0 - speed_tol)))
    k, fired = k[ok], fired[ok]
    # Hysteresis: of the crossings after each sample above the tolerance, the first fires (before
    # any such sample, the track counts as armed).
    armed = np.flatnonzero(level > tolerance)
    since = np.searchsorted(armed, k, side="left") - 1
    once = np.ones(k.size, dtype=bool)
    once[1:] = since[1:] != since[:-1]
    fired = fired[once]
    return _merge_events(np.sort(fired), dt, None, what="detected events")


def _bends(step: np.ndarray, jump: np.ndarray, window: float) -> tuple[np.ndarray, float]:
    """([N] bool, noise): samples where d changes slope by more than its noise explains, and the
    noise of d (seconds per sample, a robust estimate from its second differences; 0 when it is
    below rounding, 1e-9 window).

    Second differences of white noise of spread s spread by sqrt(6) s; a quarter of them lie
    within 0.3186 of that (the Gaussian's 25th percentile of |x|), whatever the other three
    quarters (kinks, jumps, smoothed bends) do, so a track that is mostly linear between its
    events reads as clean however many kinks it has.
    """
    N = step.size + 1
    bends = np.zeros(N, dtype=bool)
    if N < 3:
        return bends, 0.0
    rise = jump / step
    second = np.abs(np.diff(rise)) * (0.5 * (step[:-1] + step[1:]))
    # Every k-th of a long track's is as good an estimate: 2^16 of them pin it to a percent or so.
    spread = float(np.percentile(second[::max(1, second.size >> 16)], 25.0)) / 0.3186
    floor = _SNAP * window  # rounding: below it a track is clean, its noise 0
    bends[1:-1] = second > max(8.0 * spread, floor)
    return bends, (spread / math.sqrt(6.0) if 8.0 * spread > floor else 0.0)


def _fit_lines(t: np.ndarray, d: np.ndarray, jump: np.ndarray, wraps: np.ndarray, left: np.ndarray,
               right: np.ndarray, before: int, after: int, window: float,
               uniform: bool) -> tuple[np.ndarray, np.ndarray]:
    """([N-1] level at t_b, [N-1] slope) of the least-squares line through d over the samples
    b - left[b] .. b + right[b] of each step b -> b + 1 (right >= 1), d unwrapped from d_b
    outward along `jump` (its steps, `wraps` times 2 window taken off each).

    On a uniform grid the steps with the whole run (left = before, right = after: all but those
    near a bend or the clip's ends) are sums over a fixed stencil, two correlations of d unwrapped
    from the first sample on. That grows by 2 window per wrap (about one per event), so on a
    million samples its sums over the stencil round to ~1e-11 s: far below the noise that sends a
    track here (a clean one is read step by step)."""
    M = t.size - 1
    step = np.diff(t)
    if before == 0 and after == 1:  # each step's own two samples
        return d[:M].copy(), jump / step
    level, slope = np.empty(M), np.empty(M)
    rows = np.arange(M)
    if before + after > 1 and uniform and M - after + 1 > before:
        h = (t[-1] - t[0]) / M
        o = np.arange(-before, after + 1, dtype=np.float64)
        n, so, soo = float(o.size), float(o.sum()), float(o @ o)
        u = d + (2.0 * window) * np.concatenate([[0.0], -np.cumsum(wraps)])
        inner = slice(before, M - after + 1)  # the steps with room for the whole stencil
        at = u[inner]
        sy = np.correlate(u, np.ones(o.size), "valid") - n * at
        sxy = h * (np.correlate(u, o, "valid") - so * at)
        sx, sxx = h * so, h * h * soo
        slope[inner] = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        level[inner] = d[inner] + (sy - slope[inner] * sx) / n
        rows = np.flatnonzero((left != before) | (right != after))
    n_, sx_, sxx_, sy_, sxy_ = (np.ones(rows.size), np.zeros(rows.size), np.zeros(rows.size),
                                np.zeros(rows.size), np.zeros(rows.size))
    for side, reach in ((1, right[rows]), (-1, left[rows])):
        y = np.zeros(rows.size)
        for k in range(1, int(reach.max(initial=0)) + 1):
            # The steps whose run holds sample b + side * k: x, y measured from sample b.
            ok = np.flatnonzero(reach >= k)
            b = rows[ok]
            y[ok] += jump[b + k - 1] if side > 0 else -jump[b - k]
            x = t[b + side * k] - t[b]
            yk = y[ok]
            n_[ok] += 1.0
            sx_[ok] += x
            sxx_[ok] += x * x
            sy_[ok] += yk
            sxy_[ok] += x * yk
    slope[rows] = (n_ * sxy_ - sx_ * sy_) / (n_ * sxx_ - sx_ * sx_)
    level[rows] = d[rows] + (sy_ - slope[rows] * sx_) / n_
    return level, slope


def _searcher(t: np.ndarray, step: np.ndarray | None) -> Any:
    """search(x, side) = np.searchsorted(t, x, side): on a uniform grid (steps equal to 1e-9) from
    the frame step, a division and a check of the neighbours, where a binary search through a
    long take's times misses the cache at every level."""
    if step is None or float(step.max() - step.min()) > 1e-9 * float(step.max()):
        return lambda x, side="left": np.searchsorted(t, x, side=side)
    N = t.size
    t0, h = float(t[0]), float(t[-1] - t[0]) / (N - 1)

    def search(x: Any, side: str = "left") -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        i = np.clip(np.ceil((x - t0) / h), 0, N).astype(np.int64)
        # The first index whose time is >= x (side left) or > x (right): at most one off.
        before = t[np.maximum(i - 1, 0)]
        i -= (i > 0) & ((before >= x) if side == "left" else (before > x))
        at = t[np.minimum(i, N - 1)]
        i += (i < N) & ((at < x) if side == "left" else (at <= x))
        return i

    return search


def _phasor(d: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of pi clip(d / window, -1, 1); overwrites `d` (it becomes cos).

    The angle is folded into [0, pi/2] first, so u = 0 and |u| = 1 give exactly (0, 1) and
    (0, -1) (np.sin(np.pi) is 1.2e-16, not 0). Both come from one tangent of the folded half
    angle, q = tan(pi w / 2) in [0, 1]: h = 2 / (1 + q^2), sin = q h, cos = h - 1, within 1e-15 of
    np.sin and np.cos. numpy vectorizes float64 tan with SIMD but not sin or cos, so this is
    several times faster than calling both (bench/events.py); buffers are reused for the same reason.
    """
    u = np.divide(d, window, out=d)
    np.clip(u, -1.0, 1.0, out=u)
    v = np.abs(u)
    q = np.subtract(1.0, v)
    np.minimum(v, q, out=q)  # sin(pi v) = sin(pi w), cos(pi v) = +-cos(pi w), w = min(v, 1 - v)
    q *= np.pi / 2.0
    np.tan(q, out=q)
    np.copysign(q, u, out=q)
    np.subtract(0.5, v, out=v)  # the sign of cos
    h = np.square(q, out=u)
    h += 1.0
    np.divide(2.0, h, out=h)
    sin = np.multiply(q, h, out=q)
    cos = np.subtract(h, 1.0, out=h)
    np.copysign(cos, v, out=cos)
    return sin, cos


def _turned_distance(t: np.ndarray, events: np.ndarray, window: float,
                     search: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """([N] d', [K] int or None): the signed distance d' whose phase pi clip(d' / window, -1, 1)
    is the encoding, and the samples where it turns at twice the rate (None when none do). d' is d, the
    nearest event time minus t (+inf without events), except in the middle of a gap g between
    window and 2 window: past the exact stretch c = g - window, |d'| = 2 |d| - c (reaching the
    window, the far side, at the midpoint).

    For increasing t and sorted events. Sample t belongs to event j+1 from the midpoint
    m_j = (e_j + e_j+1) / 2 on, a tie going to the upcoming event. A tie within a few ulp counts:
    events two frames apart put a sample on their midpoint, and whether k / fps lands an ulp
    either side of it must not decide whether the second event decodes (from that sample on, d
    falls to it; otherwise d rises and it is lost).
    """
    if events.size == 0:
        return np.full(t.shape, np.inf), None
    search = search or _searcher(t, None)
    mid = 0.5 * (events[:-1] + events[1:])
    # One run of samples per event: a search per event, not per sample.
    starts = search(mid - 8.0 * np.spacing(np.abs(mid)), side="left")
    runs = np.diff(starts, prepend=0, append=t.size)
    nearest = np.repeat(events, runs)
    d = np.subtract(nearest, t, out=nearest)
    gaps = np.diff(events)
    turns = np.flatnonzero((gaps >= window) & (gaps < 2.0 * window))
    if turns.size == 0:
        return d, None
    # Only the samples in the middle of those gaps change: a few runs of them, not every sample.
    c = gaps[turns] - window
    lo = search(events[turns] + c, side="right")
    count = np.maximum(search(events[turns + 1] - c, side="left") - lo, 0)
    i = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
    if i.size == 0:
        return d, None
    di = d[i]
    d[i] = np.copysign(2.0 * np.abs(di) - np.repeat(c, count), di)
    return d, i


def _smoothed_phasor(t: np.ndarray, d: np.ndarray, turning: np.ndarray | None, events: np.ndarray,
                     window: float, sigma: float, search: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of the track convolved with a Gaussian of `sigma` seconds (truncated at L = 4 sigma).

    As a complex number z = cos + i sin, the track is piecewise exp(i (phi_s - r_s tau)) over
    segments s: the plateau (z = -1, r = 0) a window or more from events; next to event e_j
    (z = exp(i omega (e_j - tau)), r = omega = pi / window), from e_j - window or the exact
    stretch's end toward the previous event to the same toward the next; and, in a gap between
    window and 2 window, the turn (z = -exp(2 i omega (m_j - tau)), r = 2 omega, m_j the
    gap's midpoint). A gap under a window has an empty middle segment at its midpoint: the jump.
    With x = tau - t, P(x) = int_-L^x G and C_r(x) = int_-L^x G(s) exp(-i r s) ds (tabulated,
    C_0 = P), an antiderivative of the integrand on segment s is Z_s(t) C_r(x), Z_s(t) its value
    at t continued. Summing them segment by segment over [-L, L] telescopes into
        Z(t) P(L) = Z_last(t) C_last(L) + sum over bounds x_b in (-L, L] of
                    (Z_left(t) C_left(x_b) - Z_right(t) C_right(x_b)).
    A sample with no bound within L is -1, or its bare phasor times C_r(L) / P(L) (real, as G is
    even): its phase is exact.
    """
    reach = _TRUNCATE * sigma
    omega = np.pi / window
    search = search or _searcher(t, None)
    xs, table = _gaussian_integrals(sigma, omega, reach)
    mass = table[0, -1]
    gaps = np.diff(events)
    turns = (gaps >= window) & (gaps < 2.0 * window)
    half = 0.5 * (events[:-1] + events[1:])
    # The middle of each gap: the plateau between the two windows, the turn where they overlap (from
    # e_j + (g - window) to e_j+1 - (g - window)), or the midpoint.
    far = gaps >= 2.0 * window
    inner_lo = np.where(far, events[:-1] + window, np.where(turns, events[1:] - window, half))
    inner_hi = np.where(far, events[1:] - window, np.where(turns, events[:-1] + window, half))
    bounds = np.concatenate([[events[0] - window], np.stack([inner_lo, inner_hi], axis=-1).ravel(),
                             [events[-1] + window]])
    # Segment s lies left of bound s: plateau, near e_0, middle of gap 0, near e_1, ..., plateau.
    kind = np.zeros(bounds.size + 1, dtype=np.int8)  # 0 plateau, 1 near an event, 2 turn
    kind[1::2] = 1
    kind[2:-1:2] = np.where(turns, 2, 0)
    anchor = np.zeros(bounds.size + 1)
    anchor[1::2] = events
    anchor[2:-1:2] = half
    ends = np.zeros((3, 2))  # C_r(L) per kind, (real, imaginary)
    ends[0, 0] = mass
    ends[1] = table[1:3, -1]
    tables = [(xs, table)]
    if turns.any():
        xs2, table2 = _gaussian_integrals(sigma, 2.0 * omega, reach)
        tables.append((xs2, table2))
        ends[2] = table2[1:3, -1]
        gap_cos, gap_sin = np.cos(omega * gaps), np.sin(omega * gaps)

    sin, cos = _phasor(d, window)
    if turning is not None:
        turn_sin, turn_cos = sin[turning] * (ends[2, 0] / mass), cos[turning] * (ends[2, 0] / mass)
    plateau = cos == -1.0  # exactly (0, -1) there, and nowhere else
    sin *= ends[1, 0] / mass  # 0 on the plateau
    cos *= ends[1, 0] / mass
    np.copyto(cos, -1.0, where=plateau)
    if turning is not None:  # the far side halfway through a turn is no plateau
        sin[turning] = turn_sin
        cos[turning] = turn_cos

    # The samples with a bound within reach: the union of the bounds' runs of samples (which start
    # and end in order, so each adds what lies past the previous one's end).
    first = search(bounds - reach, side="left")
    end = search(bounds + reach, side="left")
    new_first = np.maximum(first, np.concatenate([[0], np.maximum.accumulate(end)[:-1]]))
    new_count = np.maximum(end - new_first, 0)
    near = np.repeat(new_first - (np.cumsum(new_count) - new_count), new_count)
    if near.size == 0:
        return sin, cos
    near += np.arange(near.size)
    tn = t[near]
    # Each one's bounds in (t - L, t + L]: a run of them, from lo (the bounds at or before t - L:
    # those whose run of samples ended by t) to last (those at or before t + L: whose run began by
    # t; the last segment is the one after them). Counted where the runs begin and end among these
    # samples: a search per bound, not per sample.
    lo = np.cumsum(np.bincount(np.searchsorted(near, end), minlength=near.size + 1))[:near.size]
    last = np.cumsum(np.bincount(np.searchsorted(near, first), minlength=near.size + 1))[:near.size]
    count = last - lo
    owner = np.repeat(np.arange(near.size), count)
    b = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(owner.size)
    ti = tn[owner]
    x = bounds[b] - ti
    # Of a bound's two segments one is next to an event (odd) and one a middle (even): the plateau,
    # whose value -1 needs no trigonometry, or a turn.
    odd = (b & 1).astype(bool)
    s_near = b + ~odd
    p, c_re, c_im = _hermite(xs, table, x)
    phase = omega * (anchor[s_near] - ti)
    n_cos, n_sin = np.cos(phase), np.sin(phase)
    z_cos = n_cos * c_re - n_sin * c_im  # Z_near C_near
    z_sin = n_sin * c_re + n_cos * c_im
    z_cos += p  # minus Z_middle C_middle on the plateau: -(-1) P
    if len(tables) > 1:
        s_mid = b + odd
        turn = np.flatnonzero(kind[s_mid] == 2)
        t_re, t_im = _hermite(*tables[1], x[turn], rows=(1, 2))
        # The turn's value from the event's beside it, no trigonometry: 2 omega (m_j - t) is twice
        # omega (e - t), plus omega g_j from the gap's start e_j, minus it from its end e_j+1.
        c, s_ = n_cos[turn], n_sin[turn]
        sq_cos, sq_sin = c * c - s_ * s_, 2.0 * c * s_
        gap = s_mid[turn] // 2 - 1
        r_cos, r_sin = gap_cos[gap], np.where(odd[turn], gap_sin[gap], -gap_sin[gap])
        m_cos = r_sin * sq_sin - r_cos * sq_cos  # -(square times rotation)
        m_sin = -(r_sin * sq_cos + r_cos * sq_sin)
        z_cos[turn] -= p[turn] + m_cos * t_re - m_sin * t_im
        z_sin[turn] -= m_sin * t_re + m_cos * t_im
    np.negative(z_cos, out=z_cos, where=~odd)  # the near segment lies right of the bound
    np.negative(z_sin, out=z_sin, where=~odd)
    total_cos = np.bincount(owner, z_cos, minlength=near.size)
    total_sin = np.bincount(owner, z_sin, minlength=near.size)
    # The last segment's term, Z_last(t) C_last(L) (C(L) is real: G is even). The last segment
    # lies right of a sample's last bound, so its value is that pair's, already at hand.
    some = np.flatnonzero(count)  # (every one, but for a tie at exactly +-L rounding may split)
    final = (np.cumsum(count) - 1)[some]
    k = kind[last[some]]
    z_cos, z_sin = n_cos[final], n_sin[final]
    np.copyto(z_cos, -1.0, where=k == 0)
    np.copyto(z_sin, 0.0, where=k == 0)
    if len(tables) > 1:
        mid_cos, mid_sin = np.full(owner.size, -1.0), np.zeros(owner.size)
        mid_cos[turn], mid_sin[turn] = m_cos, m_sin
        z_cos = np.where(k == 2, mid_cos[final], z_cos)
        z_sin = np.where(k == 2, mid_sin[final], z_sin)
    cos[near[some]] = (total_cos[some] + z_cos * ends[k, 0]) / mass
    sin[near[some]] = (total_sin[some] + z_sin * ends[k, 0]) / mass
    return sin, cos


def _gaussian_integrals(sigma: float, omega: float, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes x [K+1] over [-reach, reach]; at them [6, K+1]: the integrals from -reach of G(s)
    times (1, cos omega s, -sin omega s), then those integrands times the node spacing (the
    slopes Hermite interpolation needs). G(s) = exp(-s^2 / 2 sigma^2). Each cell by 8-point
    Gauss-Legendre: exact to rounding for so smooth an integrand."""
    cells = _TABLE_CELLS * max(1, math.ceil(sigma * omega))
    xs = np.linspace(-reach, reach, cells + 1)
    h = xs[1] - xs[0]
    nodes, weights = np.polynomial.legendre.leggauss(8)
    s = (0.5 * (xs[:-1] + xs[1:]))[:, None] + 0.5 * h * nodes
    cell = (_integrand(s, sigma, omega) @ weights) * (0.5 * h)
    values = np.concatenate([np.zeros((3, 1)), np.cumsum(cell, axis=-1)], axis=-1)
    return xs, np.ascontiguousarray(np.concatenate([values, _integrand(xs, sigma, omega) * h]))


def _integrand(s: np.ndarray, sigma: float, omega: float) -> np.ndarray:
    """[3, ...] G(s) times (1, cos omega s, -sin omega s)."""
    g = np.exp(-0.5 * (s / sigma) ** 2)
    return np.stack([g, g * np.cos(omega * s), -g * np.sin(omega * s)])


def _hermite(xs: np.ndarray, table: np.ndarray, x: np.ndarray,
             rows: tuple[int, ...] = (0, 1, 2)) -> list[np.ndarray]:
    """The tabulated integrals (`rows` of the three) at x [n] by cubic Hermite interpolation
    (values and slopes at the nodes are both known), error ~1e-12."""
    f = (x - xs[0]) * (1.0 / (xs[1] - xs[0]))
    i = np.clip(f.astype(np.int64), 0, xs.size - 2)
    s = f - i
    s2 = s * s
    h01 = s2 * (3.0 - 2.0 * s)
    h11 = s2 * (s - 1.0)
    h10 = h11 - s2 + s  # s^3 - 2 s^2 + s
    j = i + 1
    out = []
    for row in rows:
        v0, v1 = table[row].take(i), table[row].take(j)
        out.append(v0 + h01 * (v1 - v0) + h10 * table[row + 3].take(i) + h11 * table[row + 3].take(j))
    return out


def _event_times(event_times: Any, period: float | None) -> np.ndarray:
    """Sorted float64 event times, wrapped into [0, period) when looping."""
    e = np.asarray(event_times, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(e)):
        raise ValueError("event times must be finite")
    if period is not None:
        e = np.mod(e, period)
        e[e >= period] = 0.0  # -1e-17 % 1.0 is 1.0 in floating point
    return np.sort(e)


def _merge_events(e: np.ndarray, dt: float | None, period: float | None,
                  what: str = "events") -> np.ndarray:
    """Sorted `e` with every run of events closer than 2 dt to the previous one reduced to its
    first (around the loop too), warning when any merged."""
    if dt is None or e.size < 2:
        return e
    keep = np.ones(e.size, dtype=bool)
    keep[1:] = np.diff(e) >= _two_frames(dt)
    if period is not None and e[0] + period - e[-1] < _two_frames(dt):
        keep[0] = False  # the run wraps: it started before the loop's end
        if not keep.any():
            keep[0] = True
    if keep.all():
        return e
    first = e[np.flatnonzero(~keep)[0]]
    warnings.warn(f"{int((~keep).sum())} {what} closer than 2 frames (2 dt = {2 * dt:g} s) to the "
                  f"previous one merged into it, the first at {first:g} s", EventWarning, stacklevel=3)
    return e[keep]


def _frame_steps(t: np.ndarray, window: float) -> np.ndarray:
    """Steps between increasing sample times (>= 2 samples); the window must span two of the
    largest."""
    step = np.diff(t)
    if step.min() <= 0.0:
        raise ValueError("times must increase")
    dt = float(step.max())
    if window < _two_frames(dt):
        raise ValueError(f"window {window} s is shorter than two frames (2 dt = {2 * dt} s)")
    return step


def _two_frames(dt: float) -> float:
    return 2.0 * dt * (1.0 - _FRAME_TOL)


def _times(x: Any, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional [N], not shape {list(a.shape)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be finite")
    return a


def _positive(x: float, what: str) -> float:
    value = float(x)
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError(f"{what} must be positive and finite, not {x}")
    return value


# -- tags: ranges of seconds ----------------------------------------------------------------------


def ranges(pairs: Any) -> np.ndarray:
    """[K, 2] float64 half-open [start, end) intervals from (start, end) pairs: empty ones dropped,
    overlapping and touching ones merged, sorted. ValueError if an end comes before its start."""
    r = np.asarray(pairs, dtype=np.float64).reshape(-1, 2)
    if np.isnan(r).any():
        raise ValueError("range bounds must not be NaN")
    bad = np.flatnonzero(r[:, 1] < r[:, 0])
    if bad.size:
        start, end = r[bad[0]]
        raise ValueError(f"range [{start:g}, {end:g}) ends before it starts")
    r = r[r[:, 1] > r[:, 0]]
    r = r[np.argsort(r[:, 0], kind="stable")]
    if r.shape[0] < 2:
        return r.copy()
    furthest = np.maximum.accumulate(r[:, 1])
    new = np.ones(r.shape[0], dtype=bool)
    new[1:] = r[1:, 0] > furthest[:-1]  # a range starting where the last ended continues it
    last = np.append(np.flatnonzero(new)[1:] - 1, r.shape[0] - 1)
    return np.stack([r[new, 0], furthest[last]], axis=-1)


def union(a: Any, b: Any) -> np.ndarray:
    """Ranges covered by a or b."""
    return _combine(a, b, np.logical_or)


def intersection(a: Any, b: Any) -> np.ndarray:
    """Ranges covered by both a and b."""
    return _combine(a, b, np.logical_and)


def difference(a: Any, b: Any) -> np.ndarray:
    """Ranges covered by a and not by b."""
    return _combine(a, b, lambda x, y: x & ~y)


def contains(times: Any, r: Any) -> np.ndarray:
    """[N] bool: each time lies in some [start, end) of the ranges `r`."""
    r = ranges(r)
    t = np.asarray(times, dtype=np.float64)
    i = np.searchsorted(r[:, 0], t, side="right") - 1
    return (i >= 0) & (t < r[np.maximum(i, 0), 1]) if r.size else np.zeros(t.shape, dtype=bool)


def one_hot(times: Any, r: Any) -> np.ndarray:
    """[N] float64: 1.0 at times inside a range [start, end), else 0.0."""
    return contains(times, r).astype(np.float64)


def one_hot_tags(times: Any, tags: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """{tag: [N] one-hot curve} for {tag: ranges}."""
    return {tag: one_hot(times, r) for tag, r in tags.items()}


def from_markers(markers: Iterable[tuple[str, float]]) -> dict[str, np.ndarray]:
    """{tag: ranges} from (name, seconds) markers named `<tag>_start` and `<tag>_end`, paired in
    time order per tag (an end before a start at the same time, so ranges may touch). Other names
    are ignored. ValueError names the tag and time of a start without an end, an end without a
    start, a start while the tag is already open, or a start and end at one time (empty)."""
    marks: dict[str, list[tuple[float, int]]] = {}
    for name, seconds in markers:
        for suffix, kind in (("_start", 1), ("_end", 0)):
            if name.endswith(suffix) and len(name) > len(suffix):
                marks.setdefault(name[:-len(suffix)], []).append((float(seconds), kind))
    out: dict[str, np.ndarray] = {}
    for tag, items in marks.items():
        pairs: list[tuple[float, float]] = []
        opened: float | None = None
        for seconds, kind in sorted(items):
            if kind == 1:
                if opened is not None:
                    raise ValueError(f"tag {tag!r}: {tag}_start at {seconds:g} s, but the range opened at "
                                     f"{opened:g} s has no {tag}_end yet")
                opened = seconds
            else:
                if opened is None and (seconds, 1) in items:
                    raise ValueError(f"tag {tag!r}: {tag}_start and {tag}_end both at {seconds:g} s make an "
                                     "empty range (the end is excluded)")
                if opened is None:
                    raise ValueError(f"tag {tag!r}: {tag}_end at {seconds:g} s has no {tag}_start before it")
                pairs.append((opened, seconds))
                opened = None
        if opened is not None:
            raise ValueError(f"tag {tag!r}: {tag}_start at {opened:g} s has no {tag}_end after it")
        out[tag] = ranges(pairs)
    return out


def _combine(a: Any, b: Any, op: Any) -> np.ndarray:
    """Ranges where op(in a, in b) holds: membership is constant between consecutive bounds."""
    a, b = ranges(a), ranges(b)
    bounds = np.unique(np.concatenate([a.ravel(), b.ravel()]))
    if bounds.size < 2:
        return np.zeros((0, 2))
    lo = bounds[:-1]
    keep = op(contains(lo, a), contains(lo, b))
    return ranges(np.stack([lo[keep], bounds[1:][keep]], axis=-1))
