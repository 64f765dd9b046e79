"""Frame-rate conversion: a clip sampled again at another fps, same seconds.

Output frame k sits at k / fps seconds, for every k whose time falls inside the source clip
(duration (T - 1) / fps_in, so the last source frame is reached only when the rates line up).
Rotations slerp along the shortest path between the two neighbouring source frames, translations
lerp; a sample that lands on a source frame is that frame, bit for bit. No low-pass filter:
downsampling picks values, it does not average them (120 -> 30 is `clip[::4]`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import quat
from .clip import Clip

# Rates are exact fractions when they are whole numbers or decimals like 29.97 (2997/100) and
# 23.976 (2997/125): then source positions k * fps_in / fps_out are computed in integers and land
# exactly on source frames wherever the two grids meet (120 -> 30 hits frame 4k, not 4k - 1e-15).
_MAX_DENOMINATOR = 1000
# Largest integer numerator the exact path lets numpy handle (int64, with headroom).
_MAX_NUMERATOR = 2**62
# Float path only: a source position this close to a whole frame (in frames) is that frame.
SNAP_FRAMES = 1e-9


def snap_frames(s: np.ndarray) -> np.ndarray:
    """Frame positions, those within SNAP_FRAMES frames of a whole frame moved onto it (a time that is a
    frame in exact arithmetic must not sample the frame before it)."""
    whole = np.rint(s)
    return np.where(np.abs(s - whole) <= SNAP_FRAMES, whole, s)


def resample(clip: Clip, fps: float) -> Clip:
    """`clip` sampled at `fps` frames per second: frames at k / fps seconds within its duration.

    Events stay in seconds, loop and overrides carry over, and motion_start becomes the first
    output frame at or after the source's.
    """
    fps_out = float(fps)
    if not (fps_out > 0 and math.isfinite(fps_out)):
        raise ValueError(f"fps must be positive and finite, not {fps}")
    T = clip.n_frames
    base, frac = source_frames(T, clip.fps, fps_out)
    rotations, positions = _between(clip, base, frac)
    motion_start = _first_frame_at_or_after(clip.motion_start, clip.fps, fps_out) if T else 0
    return clip.replace(rotations=rotations, positions=positions, fps=fps_out,
                        motion_start=motion_start, root=clip.root)


def sample(clip: Clip, times: np.ndarray, fps: float) -> Clip:
    """A clip at `fps` whose frame k is `clip` at `times[k]` seconds (clamped to the clip, any
    order, repeats allowed: for time warps such as NLA strips' scale and repeat). Events and
    motion_start are dropped (they have no meaning under an arbitrary warp)."""
    if clip.n_frames == 0:
        raise ValueError("cannot sample an empty clip")
    s = np.clip(np.asarray(times, dtype=np.float64) * clip.fps, 0.0, clip.n_frames - 1)
    s = snap_frames(s)
    base = np.minimum(np.floor(s).astype(np.int64), clip.n_frames - 1)
    rotations, positions = _between(clip, base, s - base)
    return clip.replace(rotations=rotations, positions=positions, fps=float(fps), events={},
                        motion_start=0, loop=False, root=clip.root)


def _between(clip: Clip, base: np.ndarray, frac: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poses a fraction of the way from frame `base` to the next: slerp and lerp."""
    nxt = np.minimum(base + 1, max(clip.n_frames - 1, 0))
    q0 = clip.rotations[base]
    p0 = clip.positions[base]
    # On a source frame, take it as is: slerp at t = 0 is only equal to q up to rounding.
    on_frame = (frac == 0.0)[:, None, None]
    rotations = np.where(on_frame, q0, quat.slerp(q0, clip.rotations[nxt], frac[:, None]))
    f = frac[:, None, None]
    positions = np.where(on_frame, p0, (1.0 - f) * p0 + f * clip.positions[nxt])
    return rotations, positions


def source_frames(n_frames: int, fps_in: float, fps_out: float) -> tuple[np.ndarray, np.ndarray]:
    """Where output frames k = 0, 1, ... at fps_out fall among n_frames source frames at fps_in:
    (base [K] int, fraction [K] in [0, 1)), output k = source base + fraction toward base + 1.

    K = floor(duration * fps_out) + 1 with duration (n_frames - 1) / fps_in; 0 for an empty clip.
    """
    if n_frames == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ratio = _ratio(fps_in, fps_out)
    if ratio is not None:
        num, den = ratio  # fps_in / fps_out = num / den
        last = (n_frames - 1) * den // num
        if last * num < _MAX_NUMERATOR:
            n = np.arange(last + 1, dtype=np.int64) * num
            return n // den, (n % den) / den
    last = math.floor((n_frames - 1) / fps_in * fps_out + 1e-9)
    s = np.arange(last + 1) * fps_in / fps_out
    s = np.minimum(snap_frames(s), n_frames - 1)
    base = np.floor(s).astype(np.int64)
    return base, s - base


def _first_frame_at_or_after(frame: int, fps_in: float, fps_out: float) -> int:
    """The first frame at fps_out whose time is at or after source `frame` at fps_in."""
    ratio = _ratio(fps_in, fps_out)
    if ratio is not None:
        num, den = ratio
        return max(0, -(-frame * den // num))
    return max(0, math.ceil(frame * fps_out / fps_in - 1e-9))


def _ratio(fps_in: float, fps_out: float) -> tuple[int, int] | None:
    """fps_in / fps_out as integers (numerator, denominator) when both rates are exact small
    fractions (whole numbers, 29.97, 23.976), else None."""
    a = Fraction(fps_in).limit_denominator(_MAX_DENOMINATOR)
    b = Fraction(fps_out).limit_denominator(_MAX_DENOMINATOR)
    if float(a) != fps_in or float(b) != fps_out:
        return None
    r = a / b
    return r.numerator, r.denominator
