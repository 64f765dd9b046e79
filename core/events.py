"""Event tracks as smooth training targets, and tags as ranges of seconds.

Games attach single-frame events (footsteps, sound triggers, sync points) to animations, and a
neural model must learn to emit them. A one-hot spike is a poor target: almost every frame is
empty, and a spike between two frames is missed when the frame rate drops. Instead each sample
carries the signed time to its nearest event, as a point on the unit circle:

    d     = nearest event time - sample time    (> 0 before the event, < 0 after; seconds)
    u     = clip(d / window, -1, 1)
    theta = pi * u,   target = (sin theta, cos theta)

The pair is bounded, continuous where events are at least 2 * window apart (both clip limits
are the point (0, -1)), and `decode` recovers d inside the window with atan2. `detect` turns a
(predicted) pair back into event times, exactly for encoded tracks: by sub-frame interpolation of
the zero crossing of d. Gaussian smoothing of the pair keeps the phase of the linear part exactly
(a symmetric kernel scales a uniformly turning phasor without turning it), so smoothed tracks
decode to the same crossings.

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
# of the fitted line around zero, a few milliseconds.
SPAN = 0.1
TOLERANCE = 0.02


class EventWarning(UserWarning):
    """Events closer than two frames were merged (one frame step cannot hold two of them), or
    smoothing blends events too close for it."""


# -- encoding -------------------------------------------------------------------------------------


def encode(times: Any, event_times: Any, window: float, sigma: float = 0.0,
           loop_period: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(sin [N], cos [N]) float64: the event phase of each sample time, optionally smoothed.

    `times` [N] seconds, increasing; `event_times` seconds, any order, sub-frame allowed (events
    outside the clip count as given). d = signed time to the nearest event (> 0 before it, ties
    go to the upcoming event, +inf without events), theta = pi clip(d / window, -1, 1): exactly
    (0, 1) on an event and (0, -1) at |d| >= window.

    `sigma` > 0 smooths sin and cos (each; no renormalising, decode uses atan2) with a Gaussian of
    `sigma` seconds truncated at 4 sigma: the continuous track convolved exactly, then sampled, so
    the values do not depend on the frame rate (a kernel sampled at the frame rate smooths a
    30 fps and a 120 fps track differently near its jumps and kinks). Where no jump or kink lies
    within 4 sigma the phase is untouched (the pair shrinks by a constant), so decode is exact
    there; beyond the clip's ends the track goes on with no events but those given, so an event
    on the first or last sample still decodes to exactly 0.

    `loop_period` makes the track periodic: events and times wrap over [0, loop_period), and d is
    the signed distance around the loop.

    Events closer than 2 dt (dt: the largest time step) merge into the first of each run, with an
    EventWarning: a falling crossing needs two samples. With smoothing, events closer than
    2 (4 sigma + dt) get an EventWarning too: the kernel blends the jump between them into the
    samples that locate the later one. `window` must be at least 2 dt.
    """
    t = _times(times, "times")
    window = _positive(window, "window")
    sigma = float(sigma)
    if not (sigma >= 0.0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be >= 0 and finite, not {sigma}")
    period = None if loop_period is None else _positive(loop_period, "loop_period")
    N = t.size
    dt = float(_frame_steps(t, window).max()) if N > 1 else None
    events = _merge_events(_event_times(event_times, period), dt, period)
    if N == 0:
        return np.zeros(0), np.zeros(0)
    reach = _TRUNCATE * sigma
    if sigma > 0.0:
        _warn_blurred(events, dt, reach, period)
    if period is not None and events.size:
        # The loop's events copied over every period the times (and the kernel's reach) touch,
        # and one more each side, so the times stay sorted: the nearest event is in the copies.
        k = np.arange(math.floor((t[0] - reach) / period) - 1, math.floor((t[-1] + reach) / period) + 2)
        events = (events + period * k[:, None].astype(np.float64)).ravel()
    d = _signed_distance(t, events)
    if sigma == 0.0 or events.size == 0:
        return _phasor(d, window)
    return _smoothed_phasor(t, d, events, window, sigma)


def _warn_blurred(events: np.ndarray, dt: float | None, reach: float, period: float | None) -> None:
    """Warn where smoothing reaches from the jump between two events to the samples that locate
    the later one (its half gap within reach + dt): their crossings may merge or move."""
    if dt is None or events.size < 2 - (period is not None):
        return
    gaps = np.diff(events, append=events[0] + period) if period is not None else np.diff(events)
    close = gaps < 2.0 * (reach + dt)
    if close.any():
        first = np.roll(events, -1)[:gaps.size][close][0] % (period or np.inf)
        warnings.warn(f"{int(close.sum())} events closer than 2 (4 sigma + dt) = {2.0 * (reach + dt):g} s "
                      f"to the previous one, the first at {first:g} s: smoothing blends their encodings, "
                      "so they may decode merged or moved (smooth less, or keep events further apart)",
                      EventWarning, stacklevel=3)


def decode(sin: Any, cos: Any, window: float) -> np.ndarray:
    """Signed seconds to the nearest event, d_hat = window * atan2(sin, cos) / pi, in [-window,
    window]: exact inside the window for encoded tracks, +-window far from events."""
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
    side of them are straight: within the window, short of the midpoint to a neighbour, clear of
    smoothing's reach. Under noise the kinks and jumps of the track hide in it, so the line
    spans them: an event fires where expected when d is straight for span / 2 + 2 dt around it
    (0.1 s at the defaults), and may fire moved, or not at all, when it is not.

    `causal` reads each step from samples up to its later one only, so it can run as frames
    arrive: an event is known at the first sample at or after it (0 to 1 frame late), and the
    time returned is the line's zero crossing, at or before that sample. Noise adds a little:
    tests/core/test_events_noisy.py prints the measured latency. A `lead` of a frame or more
    hides it. Only the noise spread (one number) is read from the whole track, as a runtime
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
    near a bend or the clip's ends) are sums over a fixed stencil: correlations of d and of its
    whole number of wraps (kept apart, so no large unwrapped value loses the small ones)."""
    M = t.size - 1
    step = np.diff(t)
    if before == 0 and after == 1:  # each step's own two samples
        return d[:M].copy(), jump / step
    level, slope = np.empty(M), np.empty(M)
    h = (t[-1] - t[0]) / M
    rows = np.arange(M)
    if before + after > 1 and uniform:
        full = (left == before) & (right == after)
        b = np.flatnonzero(full)
        if b.size:
            o = np.arange(-before, after + 1, dtype=np.float64)
            n, so, soo = float(o.size), float(o.sum()), float(o @ o)
            turns = np.concatenate([[0.0], -np.cumsum(wraps)])  # d + 2 window turns: d unwrapped
            v = b - before
            box_d = np.correlate(d, np.ones(o.size), "valid")[v]
            box_k = np.correlate(turns, np.ones(o.size), "valid")[v]
            ramp_d = np.correlate(d, o, "valid")[v]
            ramp_k = np.correlate(turns, o, "valid")[v]
            sy = (box_d - n * d[b]) + (2.0 * window) * (box_k - n * turns[b])
            sxy = h * ((ramp_d - so * d[b]) + (2.0 * window) * (ramp_k - so * turns[b]))
            sx, sxx = h * so, h * h * soo
            slope[b] = (n * sxy - sx * sy) / (n * sxx - sx * sx)
            level[b] = d[b] + (sy - slope[b] * sx) / n
            rows = np.flatnonzero(~full)
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


def _signed_distance(t: np.ndarray, events: np.ndarray) -> np.ndarray:
    """[N] nearest event time minus t (+inf without events), for increasing t and sorted events.

    Sample t belongs to event j+1 from the midpoint m_j = (e_j + e_j+1) / 2 on, a tie going to the
    upcoming event. A tie within a few ulp counts: events two frames apart put a sample on their
    midpoint, and whether k / fps lands an ulp either side of it must not decide whether the
    second event decodes (from that sample on, d falls to it; otherwise d rises and it is lost).
    """
    if events.size == 0:
        return np.full(t.shape, np.inf)
    mid = 0.5 * (events[:-1] + events[1:])
    # One run of samples per event: a search per event, not per sample.
    starts = np.searchsorted(t, mid - 8.0 * np.spacing(np.abs(mid)), side="left")
    nearest = np.repeat(events, np.diff(starts, prepend=0, append=t.size))
    return np.subtract(nearest, t, out=nearest)


def _smoothed_phasor(t: np.ndarray, d: np.ndarray, events: np.ndarray, window: float,
                     sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of the track convolved with a Gaussian of `sigma` seconds (truncated at L = 4 sigma).

    As a complex number z = cos + i sin, the track is -1 (the plateau) except on one piece
    A_j = [a_j, b_j) per event, where z = exp(i omega (e_j - tau)), omega = pi / window: from
    e_j - window (or the midpoint to the previous event, if later) to e_j + window (or the next
    midpoint). With x = tau - t, P(x) = int_-L^x G and C(x) = int_-L^x G(s) exp(-i omega s) ds
    (tabulated), an antiderivative of the integrand is -P(x) on the plateau and
    E_j C(x), E_j = exp(i omega (e_j - t)), on piece j. Summing them segment by segment over
    [-L, L] telescopes into
        Z(t) P(L) = (the last segment's antiderivative at L)
                    + sum over piece ends x_k in (-L, L) of s_k (E_j C(x_k) + P(x_k)),
    s_k = +1 at b_j and -1 at a_j. A sample with no piece end within L is -1, or its bare phasor
    times C(L) / P(L) (real, as G is even): its phase is exact.
    """
    reach = _TRUNCATE * sigma
    omega = np.pi / window
    xs, table = _gaussian_integrals(sigma, omega, reach)
    mass, c_end, s_end = table[0, -1], table[1, -1], table[2, -1]
    plateau = np.abs(d) >= window
    sin, cos = _phasor(d, window)
    sin *= c_end / mass  # 0 on the plateau
    cos *= c_end / mass
    np.copyto(cos, -1.0, where=plateau)
    mid = 0.5 * (events[:-1] + events[1:])
    a = np.maximum(np.concatenate([[-np.inf], mid]), events - window)
    b = np.minimum(np.concatenate([mid, [np.inf]]), events + window)
    bounds = np.stack([a, b], axis=-1).ravel()  # sorted: a_0 < b_0 <= a_1 < b_1 ...
    # Every (sample, piece end) pair closer than L, in bound order.
    below = np.append(bounds - reach, np.inf)
    first = np.searchsorted(t, below[:-1], side="right")
    count = np.maximum(np.searchsorted(t, bounds + reach, side="left") - first, 0)
    k = np.repeat(np.arange(bounds.size), count)
    i = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
    if i.size == 0:
        return sin, cos
    ti = t[i]
    p, cr, ci = _hermite(xs, table, bounds[k] - ti)
    theta = omega * (events[k >> 1] - ti)
    c, s = np.cos(theta), np.sin(theta)
    z_cos = c * cr - s * ci + p
    z_sin = s * cr + c * ci
    # A sample's last piece end before t + L decides the last segment: piece j after a_j, the
    # plateau after b_j (at a midpoint, a_j+1 = b_j follows b_j, so it is the last).
    last = ~(ti > below[k + 1])
    is_b = (k & 1).astype(bool)
    z_cos = np.where(is_b, z_cos - last * mass, last * (c * c_end - s * s_end) - z_cos)
    z_sin = np.where(is_b, z_sin, last * (s * c_end + c * s_end) - z_sin)
    cos[i] = 0.0
    sin[i] = 0.0
    np.add.at(cos, i, z_cos / mass)
    np.add.at(sin, i, z_sin / mass)
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


def _hermite(xs: np.ndarray, table: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    """The three tabulated integrals at x [n] by cubic Hermite interpolation (values and slopes
    at the nodes are both known), error ~1e-12."""
    f = (x - xs[0]) * (1.0 / (xs[1] - xs[0]))
    i = np.clip(f.astype(np.int64), 0, xs.size - 2)
    s = f - i
    s2 = s * s
    h01 = s2 * (3.0 - 2.0 * s)
    h11 = s2 * (s - 1.0)
    h10 = h11 - s2 + s  # s^3 - 2 s^2 + s
    j = i + 1
    out = []
    for row in range(3):
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
