"""Transitions between clips: dead blending, inertialization, crossfades, and sequences of them.

Every transition switches from `src` at `src_time` to `dst` at `dst_time` and lays its output out
the same way, so the methods compare frame for frame (see `core.metrics`):

- The output runs at src.fps (dst is resampled first when its rate differs). With
  i_s = round(src_time fps) and i_d = round(dst_time fps), output frames 0..i_s are src's own and
  output frame i_s + k (k >= 1, t = k dt) is made from dst frame i_d + k, to the end of dst:
  T_out = i_s + 1 + (T_dst - 1 - i_d).
- dst is re-anchored first (`root.reanchor`, on the raw, unsmoothed trajectory) so its root
  trajectory at i_d is src's at i_s: the same planar position and heading (measured with src's
  `up` and `forward`), heights kept. From output frame i_s + ceil(blend_time fps) on, the output
  is that re-anchored dst: bit for bit after a crossfade or a cut; after dead blending and
  inertialization, which blend the root's travel by velocity (below), moved rigidly over the floor
  to go on from where the blend took the root (a joint that would turn too fast blends on into
  those frames, below). `reanchor=False` (every method, and `sequence`)
  leaves dst where it is and blends the root's positions: after the blend the output is dst's
  own frames, bit for bit (as Blender's NLA plays strips: each where its action puts it).
- Events: src's up to the switch, dst's strictly after i_d (moved to output time), and
  `events['Transition']` holds the switch time i_s / fps (the last frame that is src's alone).
- The output is src's skeleton (offsets, channels, overrides); after the switch dst's bone lengths
  come through its translations. Quaternion signs are the sources' own (not unrolled).

What blends: every joint's local rotation and translation, in its parent's frame, except the
motion root (`clip.root`), which blends its world transform (`root.root_world`) and is written
back through its parent chain (`root.with_root_world`); joints above it (a dummy ROOT) blend like
any joint. Velocities at the switch are backward differences, in the same frames:
v0 = (x[i_s] - x[i_s-1]) / dt and w0 = to_saa(hemi(q[i_s] inv(q[i_s-1]))) / dt (zero when
i_s = 0); a joint without position channels has a constant translation (its offset) and so v0 = 0.

The root's travel over the floor (dead blending and inertialization, re-anchored): blending root
positions whose distance grows while the weight moves fastest lurched the hips from a walk's 1.15
to 5.7-5.9 m/s within five frames of a switch into a run whose own fastest is 4.4. Instead each
frame's floor step is the source's step blended into dst's (`blend_steps`: by weight, never
shorter than the shorter nor longer than the longer), integrated from the source's position at
the switch, so the root's speed moves between the two takes' speeds: dead blending's source step
is its extrapolation's (decaying with `root_halflife`) by alpha; inertialization's is the
source's velocity at the switch, carried as the method's offset carries a velocity (its rate
from a unit rate), up to where that offset would turn back to give the distance back (which
took the root below both takes' speeds). Its height blends as the method blends positions. At
the first blended frame the steps add as the positions did (the two roots start at one place),
so the switch itself is unchanged.

Knees (`knees.keep`): every method keeps each knee within what the two takes do (the straightest
and the most bent, on the side it bends to): a dead-blended run -> walk carried a straightening
knee 29 degrees past straight where neither take goes past 6. A knee the window takes past that
range is eased back to within `knees.SOFT` of it (dead blending: its extrapolation too), smoothly,
so where a source knee runs into its own limit at the switch the output slows it there, as the
take itself does a frame later. The easing comes in from none on the first blended frame over
0.1 s (a smoothstep), so the knee crosses the switch at the blend's own velocity: eased at once,
the switch's velocity change grew on 109 of 936 test switches (the mean rotation change up to
2.18x the unmodified blend's). A frame still past the range by more than `knees.SOFT` is eased to
within SOFT + `knees.SLACK` (2.75 degrees): where a blend's first frame is past by more than
SOFT, the switch changes velocity there still (45 of the 936, up to 1.88x).

Joints that would turn too fast (dead blending and inertialization, re-anchored; the
`extend_fast_joints` option, whose default follows `reanchor`, since with reanchor=False the
output after the blend is dst's own frames as Blender's NLA plays them): a
joint whose poses in the two takes lie far apart turns through the whole difference within the
blend: Bandai's elbows, bent 7-22 degrees walking and 108-137 running, turned 110 degrees by a
0.2 s smoothstep at 1.6x the fastest any joint of either take turns (`metrics.peak_angular_speed`
over both whole takes), a pop no animator keeps. Such a joint, one whose window would turn faster
than 1.1x that, blends over a longer time of its own: the shortest whole number of frames, up to
3x blend_time, that keeps it within 1.1x (dead blending's smoothstep, inertialization's offset
decay, per joint). The rest of the body keeps blend_time, and the output's length, the switch and
the root are unchanged: the extended joints simply blend on into dst's frames past the window.
Where every joint is within it nothing changes, bit for bit; where no length brings a joint
within it (an offset carrying a fast source's velocity on for longer can turn it faster), it takes
the length it turns slowest at. Fingers are not read (CMU thumbs flip half a turn between frames).

Dead blending (D. Holden's "Dead Blending", 2023, and his later per-axis half-lives; Unreal
5.3's Dead Blending node): the source pose and velocity at the switch are extrapolated with
exponentially decaying velocity and crossfaded into dst with a smoothstep:

    x_t = x0 + v0 / (y + eps) (1 - exp(-y t)),   q_t = from_saa(w0 / (y + eps) (1 - exp(-y t))) q0,
    y = ln 2 / (halflife + eps), eps = 1e-8, per component of the translation and of the rotation's
    scaled angle-axis exponent; alpha = smoothstep(clamp(t / blend_time)) = x^2 (3 - 2 x).

Translations lerp, rotations go by `blend.slerp_via` (the path from the extrapolated source to
dst keeps the side it was on the frame before, starting from the switch frame's shortest path), so
a source spinning past the half turn from dst never flips. `halflife='auto'` estimates a half-life
per joint and axis at the switch, clamp(halflife_scale * diff / max_mag(velocity), min, max):
positive (and long) where the joint moves toward dst, clamped to halflife_min where it moves away
or fast, so joints do not overshoot. The root's world position and rotation (all three axes of
each: travel, heading, height and tilt alike) always use `root_halflife`: long, so the character
keeps travelling and turning while dst takes over instead of stopping and being dragged, which
is what a crossfade from the held pose does.

Inertialization (D. Bollo, GDC 2018, whose offset is a quintic; Holden's spring form): the output
is dst plus the offset src - dst at the switch (and its velocity), decaying to zero over
blend_time, see `inertialize`.
Crossfades blend toward dst from the held source pose or from the source still playing, as
Blender's NLA does, see `crossfade`.

`feet` ({'L': ankle, 'R': ankle}, names or indices) rebuilds both clips' body maps around those
ankles (`body.with_feet`) where the map's own are not the ones; up and facing come from it.
`lock_feet=True` (dead_blend, inertialize, crossfade, sequence) runs `footlock.lock_feet` after
the switch on the stances the blend would slide, read off the sources' contacts laid out on the
output's frames (`switched_contacts`: src's up to the switch, dst's after the blend, and in it
the stances the two takes share, from where both plant the foot for as long as dst does): a
foot planted across the switch is held from the frame after it, and one both takes plant inside
the blend from the first frame the blended foot is down (dead blending's extrapolation carries
a swinging foot on past the source's touchdown; held there, it stood 15 cm up in the air), each
at once (a blend's landing is no foot slowing down for a lock to ease in over: easing slid it)
and until dst lifts it, then let go up to the foot's next contact. The lock's knees are then
kept within the takes' range (`knees.keep`). The source and the switch frame's velocity are
untouched, and so is the root's floor travel; after those stances the output is the
re-anchored dst again. Where the blended feet of a switch whose phases do not match are far
apart a held foot can be out of the leg's reach (`footlock.FootLockWarning`); a target time
whose feet match (`best_target_time`) avoids it.
`mask` (`[J]` in [0, 1], e.g. from `blend.mask`) says how much of the transition each joint
gets: 1 the full transition, 0 a cut (the joint is dst's from output frame i_s + 1 on), in between
the source's share (1 - alpha, or the inertialization offset) scaled by it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import blend, footlock, knees, matching, metrics, quat
from .body import FeetSpec, with_feet
from .clip import Clip
from .contacts import contacts as detect_contacts
from .contacts import foot_points, leg_length
from .contacts import runs as contact_runs
from .resample import resample
from .root import (
    STILL_MPS,
    STRIDE_SECONDS,
    Trajectory,
    floor_axes,
    moving_tops,
    reanchor,
    root_world_of,
    slide_of,
    trajectory_of,
    with_root_world_of,
)

Array = npt.NDArray[np.float64]

EPS = 1e-8
LN2 = math.log(2.0)
# The spring's half-life as a fraction of blend_time: after 6 half-lives a critically damped
# spring (damping y = 2 ln 2 / halflife) keeps (1 + 12 ln 2) 2^-12 = 0.2% of its start offset.
SPRING_HALFLIVES = 6.0
# Output frame times within this many seconds of a frame boundary count as on it.
_TIME_SNAP = 1e-9
# Blend times often come from float32 UI fields (0.3 s is 0.30000001 s, 36.0000014 frames at
# 120 fps): a frame count within this of a whole number is that number.
_FRAME_SNAP = 1e-5
# Travel and facing turning the destination by angles this far apart (radians) are different
# gaits (forward into backward or sideways): the facing is used.
_SAME_GAIT = math.radians(45.0)
# lock_feet reads each take's contacts over this many seconds around its switch frame.
_CONTACT_SECONDS = 2.0
# A blended foot whose lowest point is this near (in leg lengths: 4-5 cm) the floor its takes
# stand it on is down: a planted foot blended between two plants stays well within it, one
# that dead blending's extrapolation carries on swinging past the source's touchdown comes in
# 10-15 cm up.
_DOWN_LEGS = 0.05
# Seconds a lock let go in the window has to fade out where the foot's next contact is not in sight.
_LETGO_SECONDS = 0.5
# A joint whose blend would turn faster than this times the takes' fastest joint blends for
# longer (issue 37 bounds a window's fastest turn at 1.2x the takes'; the margin leaves room for
# the knees' easing and the frames the search rounds to), up to _LONGEST x blend_time.
_FAST_JOINT = 1.1
_LONGEST = 3.0
_GRID = 8  # frame counts from blend_time to the longest, tried before halving between two
# Seconds over which a knee kept in range (`knees.keep`) takes its turn back in, from none on the
# first blended frame: eased there at once, the switch's velocity changed up to 2.18x more.
_KNEE_EASE = 0.1


def smoothstep(x: npt.ArrayLike) -> Array:
    """x^2 (3 - 2 x) on x clamped to [0, 1]: 0 and 1 with zero slope at both ends."""
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _fraction(t: Array, duration: Array) -> Array:
    """t / duration clamped to [0, 1], 1 where duration is 0 (broadcast): how far through its
    blend or its offset's decay a joint is t seconds after the switch."""
    return np.where(duration > 0.0, np.clip(t / np.where(duration > 0.0, duration, 1.0), 0.0, 1.0), 1.0)


def decay_offset(velocity: npt.ArrayLike, halflife: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """How far a velocity that halves every `halflife` seconds carries in t seconds:
    v / (y + eps) (1 - exp(-y t)) with y = ln 2 / (halflife + eps), per component.

    velocity `[..., n]` and halflife (broadcastable to it) give a result `[*t.shape, ..., n]`: t is
    a scalar or a `[K]` array of seconds, a leading axis. Its rate is v y / (y + eps) exp(-y t):
    halflife -> 0 gives 0 (the pose held), a long one about v t (minutes; eps caps it near 1e8 s).
    """
    v = np.asarray(velocity, dtype=np.float64)
    hl = np.asarray(halflife, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    y = LN2 / (hl + EPS)
    lead = np.broadcast_shapes(v.shape, hl.shape)
    tt = t.reshape(t.shape + (1,) * len(lead))
    # -expm1 keeps every digit of 1 - exp(-y t) when y t is small (a long root half-life).
    return v / (y + EPS) * -np.expm1(-y * tt)


def extrapolate(x0: npt.ArrayLike, v0: npt.ArrayLike, halflife: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """Translations `[..., 3]` moved on from x0 by a velocity v0 decaying with `halflife` (per
    axis): x0 + decay_offset(v0, halflife, t), shape `[*t.shape, ..., 3]`."""
    return np.asarray(x0, dtype=np.float64) + decay_offset(v0, halflife, t)


def extrapolate_rotation(q0: npt.ArrayLike, w0: npt.ArrayLike, halflife: npt.ArrayLike,
                         t: npt.ArrayLike) -> Array:
    """Rotations `[..., 4]` turned on from q0 by an angular velocity w0 `[..., 3]` (rad/s, in the
    frame q0 is expressed in) decaying with `halflife` per axis of the scaled angle-axis exponent:
    from_saa(decay_offset(w0, halflife, t)) q0, shape `[*t.shape, ..., 4]`."""
    return quat.mul(quat.from_scaled_angle_axis(decay_offset(w0, halflife, t)), q0)


def max_mag(x: npt.ArrayLike, eps: float = EPS) -> Array:
    """x pushed away from zero to at least eps in magnitude, keeping its sign (0 -> +eps)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0.0, np.maximum(x, eps), np.minimum(x, -eps))


def estimate_halflife(diff: npt.ArrayLike, velocity: npt.ArrayLike, scale: float = 0.3,
                      lo: float = 0.1, hi: float = 1.0) -> Array:
    """Per-component dead-blend half-lives, clamp(scale * diff / max_mag(velocity), lo, hi).

    diff is dst - src at the switch (rotations: to_saa(hemi(q_dst inv(q_src)))), velocity the
    source's (same frame and units per second). diff / velocity is how long the joint would take
    to reach dst at its current speed: long where it heads toward dst (positive, clamped to hi),
    short where it is fast, and negative (clamped to lo) where it moves away from dst.
    """
    ratio = np.asarray(diff, dtype=np.float64) / max_mag(velocity)
    return np.clip(scale * ratio, lo, hi)


# -- the switch ----------------------------------------------------------------------------------


class _Switch(NamedTuple):
    """Everything a method needs at one switch; root columns hold world transforms."""

    src: Clip
    dst: Clip  # at src.fps, re-anchored onto src at the switch
    i_s: int
    i_d: int
    t: Array  # [W + 1] seconds after the switch, k = 0..W (W blended frames)
    alpha: Array  # [W + 1, J] smoothstep weights with the mask applied (alpha[0] = 0 unless masked)
    mask: Array  # [J]
    q0: Array  # [J, 4] source at i_s
    x0: Array  # [J, 3]
    w0: Array  # [J, 3] source angular velocity at i_s (rad/s)
    v0: Array  # [J, 3] source velocity at i_s (units/s)
    qd: Array  # [W + 1, J, 4] dst frames i_d..i_d + W
    xd: Array  # [W + 1, J, 3]
    anchored: bool  # dst re-anchored onto src
    knees: list[knees.Knee]  # both takes' knee ranges
    durations: Array  # [J] seconds each joint blends over (blend_time, longer for a fast joint)

    @property
    def n_window(self) -> int:
        return len(self.t) - 1


def _rooted(clip: Clip, frames: npt.ArrayLike) -> tuple[Array, Array]:
    """Local rotations `[n, J, 4]` and translations `[n, J, 3]` at `frames`, except the root's
    column, which holds the root's world transform."""
    idx = np.asarray(frames, dtype=np.int64)
    rot, pos = clip.rotations[idx], clip.positions[idx]
    r = clip.root
    if clip.parents[r] >= 0:
        rot[:, r], pos[:, r] = root_world_of(rot, pos, clip.parents, r)
    return rot, pos


def _velocity(rot: Array, pos: Array, fps: float) -> tuple[Array, Array]:
    """(angular velocity, velocity) from frame 0 to frame 1 of `[2, J, ...]`, parent frame."""
    return quat.angular_velocity(rot[:2], fps)[0], (pos[1] - pos[0]) * fps


def _frame(clip_frames: int, seconds: float, fps: float, what: str) -> int:
    """round(seconds fps), checked to fall on one of `clip_frames` frames."""
    seconds = float(seconds)
    if not math.isfinite(seconds):
        raise ValueError(f"{what} must be a finite number of seconds, not {seconds}")
    frame = round(seconds * fps)
    if not 0 <= frame < clip_frames:
        raise ValueError(f"{what} {seconds:g} s is frame {frame}, outside the clip's {clip_frames} "
                         f"frames at {fps:g} fps")
    return frame


def at_rate(src: Clip, dst: Clip) -> Clip:
    """dst at src's rate, with src's root, up and forward (headings must be measured alike)."""
    src.check_compatible(dst)
    if dst.fps != src.fps:
        dst = resample(dst, src.fps)
    if dst.root != src.root or not np.array_equal(dst.up, src.up) or not np.array_equal(
            dst.forward, src.forward):
        dst = dst.replace(root=src.root, up=src.up, forward=src.forward)
    return dst


def _switch(src: Clip, dst: Clip, i_s: int, i_d: int, blend_time: float,
            mask: npt.ArrayLike | None, max_speed: float | None, anchored: bool = True) -> _Switch:
    """The switch from src frame i_s to dst frame i_d (dst already at src's rate); `anchored`:
    dst re-anchored onto src there."""
    if not (math.isfinite(blend_time) and blend_time >= 0.0):
        raise ValueError(f"blend_time must be finite and >= 0 seconds, not {blend_time}")
    if max_speed is not None and not max_speed > 0.0:
        raise ValueError(f"max_speed must be positive (rad/s) or None, not {max_speed}")
    m = blend.check_mask(mask, src.n_joints)
    # Frames up to the switch make its trajectory (unsmoothed, causal): a sequence's source is
    # the rest of a whole take.
    if anchored:
        anchor = _trajectory_until(src, i_s + 1)
        dst = reanchor(dst, i_d, anchor.position[i_s], _entry_heading(src, anchor, i_s, dst, i_d))
    prev = _rooted(src, [max(i_s - 1, 0), i_s])
    w0, v0 = _velocity(*prev, src.fps)
    if max_speed is not None:
        speed = np.linalg.norm(w0, axis=-1, keepdims=True)
        w0 = w0 * np.minimum(1.0, max_speed / np.maximum(speed, 1e-300))
    durations = np.full(src.n_joints, blend_time)
    t, alpha, qd, xd = _blend_frames(dst, i_d, m, durations)
    return _Switch(src, dst, i_s, i_d, t, alpha, m, prev[0][1], prev[1][1], w0, v0, qd, xd, anchored,
                   knees.ranges(src, dst) if len(t) > 1 else [], durations)


def _window_frames(durations: Array, fps: float, frames_left: int) -> int:
    """W, the frames that blend: frame i_s + K is the first with every joint at alpha = 1
    (K dt >= the longest duration), up to the frames dst has after i_d."""
    n_full = math.ceil(float(durations.max(initial=0.0)) * fps - _FRAME_SNAP)
    return max(min(n_full - 1, frames_left), 0)


def _blend_frames(dst: Clip, i_d: int, mask: Array, durations: Array) -> tuple[Array, Array, Array, Array]:
    """(t, alpha, qd, xd) of `_Switch` with each joint blending over its own duration (seconds,
    `[J]`; dst at the output's rate): the window as long as the longest, the smoothstep weights
    `[W + 1, J]` over it with the mask applied, and dst's frames i_d..i_d + W."""
    n_window = _window_frames(durations, dst.fps, dst.n_frames - 1 - i_d)
    t = np.arange(n_window + 1) / dst.fps
    alpha = smoothstep(_fraction(t[:, None], durations))
    qd, xd = _rooted(dst, np.arange(i_d, i_d + n_window + 1))
    # The mask scales the source's share, 1 - alpha: mask 0 is a cut.
    return t, 1.0 - mask * (1.0 - alpha), qd, xd


def _with_durations(sw: _Switch, durations: Array) -> _Switch:
    """The switch with each joint blending over its own duration (`_blend_frames`)."""
    t, alpha, qd, xd = _blend_frames(sw.dst, sw.i_d, sw.mask, durations)
    return sw._replace(t=t, alpha=alpha, qd=qd, xd=xd, durations=durations)


def _travel(clip: Clip, traj: Trajectory, frame: int) -> tuple[float, float]:
    """(travel direction, facing) on the floor, radians, over the stride before `frame` (the
    first stride when the clip has not gone that far): the root's chord over the window, and its
    mean heading there. The travel direction is nan when the root barely moves."""
    first = min(clip.motion_start, frame)  # not from a converter's T-pose
    n = min(round(STRIDE_SECONDS * clip.fps), len(traj.heading) - 1 - first)
    a = max(frame - n, first)
    b = a + n
    facing = float(np.mean(traj.heading[a:b + 1]))
    chord = traj.position[b] - traj.position[a]
    if n < 1 or np.linalg.norm(chord) * clip.meters_per_unit < STILL_MPS * n / clip.fps:
        return math.nan, facing
    fwd, side = floor_axes(clip.up)
    return math.atan2(float(chord @ side), float(chord @ fwd)), facing


def _entry_heading(src: Clip, anchor: Trajectory, i_s: int, dst: Clip, i_d: int) -> float:
    """The heading dst is given at i_d: its own there, turned by the angle between the two
    takes' directions of travel over the stride before their switch frames, so their paths go on
    straight whatever the pelvis swings within a stride. A take that barely travels, or one that
    travels at another angle to its facing than the other (a forward walk into a backward or a
    sidestep), is turned by the facings (root headings averaged over the stride) instead."""
    n = round(STRIDE_SECONDS * src.fps)
    dst.body  # noqa: B018  (read once, for reanchor too, and shared by the slice below)
    stop = min(max(i_d, dst.motion_start + n) + 1, dst.n_frames)
    traj = _trajectory_until(dst, stop)
    travel_s, facing_s = _travel(src, anchor, i_s)
    travel_d, facing_d = _travel(dst, traj, i_d)
    by_facing = facing_s - facing_d
    by_travel = travel_s - travel_d
    if math.isnan(by_travel) or abs(_wrap(by_travel - by_facing)) > _SAME_GAIT:
        return float(traj.heading[i_d]) + by_facing
    return float(traj.heading[i_d]) + by_travel


def _trajectory_until(clip: Clip, stop: int) -> Trajectory:
    """The unsmoothed trajectory of the clip's frames before `stop` (causal: what follows is unread)."""
    rot, pos = root_world_of(clip.rotations[:stop], clip.positions[:stop], clip.parents, clip.root)
    return trajectory_of(rot, pos, clip.up, clip.forward)


def _wrap(x: float) -> float:
    return (x + math.pi) % (2.0 * math.pi) - math.pi


def _blend_window(sw: _Switch, src_q: Array, src_x: Array) -> tuple[Array, Array]:
    """Source side `[W + 1, J, ...]` (k = 0..W) blended into dst by alpha: frames k = 1..W."""
    rot = blend.slerp_via(src_q, sw.qd, sw.alpha)
    pos = blend.lerp(src_x, sw.xd, sw.alpha)
    return rot[1:], pos[1:]


class Travel(NamedTuple):
    """How a method moves the root over the floor in its window: the source's steps `[W, 3]` (world,
    frame k - 1 to k, k = 1..W) blended into dst's by `weights` `[W]` (0: the source's, 1: dst's)."""

    steps: Array
    weights: Array


def blend_steps(a: Array, b: Array, weights: npt.ArrayLike, up: npt.ArrayLike) -> Array:
    """Floor steps `[n, 3]` (up components dropped) from a's toward b's by `weights` `[n]`: added by
    weight as vectors, and lengthened to the shorter of the two where they point so far apart
    that the sum is shorter still. So a step is never longer than the longer of the two (the
    sum of vectors never is) nor shorter than the shorter; a at weight 0, b at 1."""
    up = np.asarray(up, dtype=np.float64)
    flat_a, flat_b = a - np.outer(a @ up, up), b - np.outer(b @ up, up)
    out = blend.lerp(flat_a, flat_b, np.asarray(weights, dtype=np.float64))
    length = np.linalg.norm(out, axis=-1)
    least = np.minimum(np.linalg.norm(flat_a, axis=-1), np.linalg.norm(flat_b, axis=-1))
    scale = np.where(length < least, least / np.where(length > 0.0, length, 1.0), 1.0)
    # Opposite steps of one length add to nothing: no direction to lengthen (not walk/run pairs).
    return out * scale[:, None]


def _travelled(sw: _Switch, pos: Array, travel: Travel) -> tuple[Array, Array]:
    """The window's root translations `[W, J, 3]` with the root's floor position integrated from the
    blended steps (its height as the method made it), and the offset [3] on the floor from dst's
    root at the window's last frame: where dst goes on from, moved rigidly."""
    r, up = sw.src.root, sw.src.up
    dst_steps = np.diff(sw.xd[:, r], axis=0)
    path = np.cumsum(blend_steps(travel.steps, dst_steps, travel.weights, up), axis=0)
    floor = sw.x0[r] - np.outer(sw.x0[r] @ up, up) + path
    out = pos.copy()
    out[:, r] = floor + np.outer(pos[:, r] @ up, up)
    end = sw.xd[-1, r]
    return out, floor[-1] - (end - up * (end @ up))


def _assemble(sw: _Switch, rot: Array, pos: Array, shift: Array | None = None) -> tuple[Array, Array]:
    """Output arrays: src up to i_s, the window (root columns world -> local), dst after it (moved
    by `shift` [3] on the floor when given)."""
    src, dst, r = sw.src, sw.dst, sw.src.root
    n = sw.n_window
    if n and src.parents[r] >= 0:
        rot, pos = with_root_world_of(rot, pos, src.parents, r, rot[:, r], pos[:, r])
    after = sw.i_d + n + 1
    out_rot = np.concatenate([src.rotations[:sw.i_s + 1], rot, dst.rotations[after:]])
    out_pos = np.concatenate([src.positions[:sw.i_s + 1], pos, dst.positions[after:]])
    first = sw.i_s + n + 1
    if shift is not None and first < len(out_pos):
        slide_of(out_rot[first:], out_pos[first:], dst.parents, r, moving_tops(dst), shift)
    return out_rot, out_pos


def _events(src: Clip, dst: Clip, i_s: int, i_d: int, n_out: int) -> dict[str, np.ndarray]:
    fps = src.fps
    t_s, t_d, t_end = i_s / fps, i_d / fps, (n_out - 1) / fps
    out: dict[str, np.ndarray] = {}
    for name in {*src.events, *dst.events, "Transition"}:
        a = src.events.get(name, np.zeros(0))
        b = dst.events.get(name, np.zeros(0)) - t_d + t_s
        parts = [a[a <= t_s + _TIME_SNAP], b[(b > t_s + _TIME_SNAP) & (b <= t_end + _TIME_SNAP)]]
        if name == "Transition":
            parts.append(np.array([t_s]))
        out[name] = np.sort(np.concatenate(parts))
    return out


# A method's blend window: frames k = 1..W (root columns world) and, for methods that blend the
# root's travel by velocity, how (`Travel`); None: the root's positions blend as the window has them.
Window = Callable[[_Switch], tuple[Array, Array, "Travel | None"]]


def _transition(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float,
                mask: npt.ArrayLike | None, max_speed: float | None, window: Window, tag: str,
                feet: FeetSpec | None = None, lock_feet: bool = False, reanchor: bool = True,
                extend: bool | None = False) -> Clip:
    """The transition `window` makes; `extend`: fast joints blend for longer (`_extended`), None:
    as `reanchor` (the default of `extend_fast_joints`)."""
    extend = reanchor if extend is None else extend
    # Feet given: both maps rebuilt around them (up and facing, which the heading is measured by).
    src, dst = with_feet(src, feet), with_feet(dst, feet)
    dst_at = at_rate(src, dst)
    i_s = _frame(src.n_frames, src_time, src.fps, "src_time")
    i_d = _frame(dst_at.n_frames, dst_time, src.fps, "dst_time")
    sw = _switch(src, dst_at, i_s, i_d, float(blend_time), mask, max_speed, reanchor)
    n_user = sw.n_window  # the window the user asked for: the locks' (fast joints may blend on past it)
    shift = None
    if sw.n_window:
        sw, (rot, pos, shift) = _extended(sw, window) if extend else (sw, _made(sw, window))
    else:
        rot, pos = np.zeros((0, src.n_joints, 4)), np.zeros((0, src.n_joints, 3))
    rot, pos = _assemble(sw, rot, pos, shift)
    name = f"{src.name}>{dst.name}" if src.name or dst.name else tag
    out = src.replace(rotations=rot, positions=pos, events=_events(src, sw.dst, i_s, i_d, len(rot)),
                      loop=False, name=name, root=src.root, motion_start=min(src.motion_start, i_s))
    if lock_feet:
        out = _lock_window(out, src, dst_at, i_s, i_d, n_user, sw.knees or knees.ranges(src, dst_at))
    return out


def _made(sw: _Switch, window: Window) -> tuple[Array, Array, Array | None]:
    """The window's frames k = 1..W (rotations, translations; root columns world) as the method
    makes them, the root's travel integrated and the knees kept, and where dst goes on from (the
    floor shift of `_travelled`, None where the root's positions blend)."""
    rot, pos, travel = window(sw)
    shift = None
    if travel is not None and sw.anchored:
        pos, shift = _travelled(sw, pos, travel)
    return knees.keep(rot, pos, sw.src.parents, sw.knees, _knee_share(sw)[1:]), pos, shift


def _knee_share(sw: _Switch) -> Array:
    """[W + 1] how much of `knees.keep`'s turn each frame k = 0..W of the window takes: none up to
    the first blended frame, rising by a smoothstep over `_KNEE_EASE` seconds, so a knee eased
    back into its range keeps the velocity it crosses the switch with."""
    n = max(math.ceil(_KNEE_EASE * sw.src.fps - _FRAME_SNAP), 1)
    return smoothstep((np.arange(sw.n_window + 1) - 1.0) / n)


def _window_speeds(sw: _Switch, rot: Array) -> Array:
    """[J] each joint's fastest turn (rad/s) from the switch frame through the window into the
    first frame after it (local rotations; the root's column, world in the window, is not read)."""
    after = sw.i_d + sw.n_window + 1
    seq = [sw.q0[None], rot] + ([sw.dst.rotations[after:after + 1]] if after < sw.dst.n_frames else [])
    w = quat.angular_velocity(np.concatenate(seq), sw.src.fps)
    return np.linalg.norm(w, axis=-1).max(axis=0)


def _extended(sw: _Switch, window: Window) -> tuple[_Switch, tuple[Array, Array, Array | None]]:
    """The switch and its window (`_made`) with each joint whose blend would turn faster than
    `_FAST_JOINT` x the takes' fastest joint (`metrics.peak_angular_speed` over both whole takes)
    blending over the shortest whole number of frames, up to `_LONGEST` x blend_time, that keeps
    it within that; the other joints, the root and fingers over blend_time. Unchanged where
    every joint is within it."""
    src, dst, fps = sw.src, sw.dst, sw.src.fps
    made = _made(sw, window)
    limit = _FAST_JOINT * max(metrics.peak_angular_speed(src, (src.motion_start + 1, src.n_frames)),
                              metrics.peak_angular_speed(dst, (dst.motion_start + 1, dst.n_frames)))
    body = blend.mask_preset(src, "FINGERS") == 0.0
    body[src.root] = False
    plain = _window_speeds(sw, made[0])
    fast = np.flatnonzero(body & (plain > limit))
    blend_time = float(sw.durations.max())
    if not fast.size or limit <= 0.0:
        return sw, made

    def attempt(frames: np.ndarray) -> Array:
        """The fast joints' speeds with each blending over its `frames`."""
        durations = sw.durations.copy()
        durations[fast] = frames / fps
        trial = _with_durations(sw, durations)
        return _window_speeds(trial, _made(trial, window)[0])[fast]

    # A joint's local turn does not depend on the other joints' blends: every fast joint's frame
    # count is searched at once, first over a few counts up to the longest, then by halving
    # between the last too fast and the first within the limit. A joint that no count brings
    # within it takes the count it turns slowest at (an offset carrying a fast source's velocity
    # on for longer can turn it faster: inertialization's toes), the plain one included.
    first = math.ceil(blend_time * fps - _FRAME_SNAP)
    last = max(math.ceil(_LONGEST * blend_time * fps - _FRAME_SNAP), first + 1)
    grid = np.unique(np.linspace(first, last, _GRID + 1).round().astype(np.int64))
    speeds = [plain[fast]]
    for n in grid[1:]:
        speeds.append(attempt(np.full(fast.size, n)))
    table = np.array(speeds)  # [len(grid), fast]
    within = table <= limit
    found = within.any(axis=0)
    at = np.argmax(within, axis=0)
    hi = np.where(found, grid[at], grid[np.argmin(table, axis=0)])
    lo = np.where(found, grid[np.maximum(at - 1, 0)], hi)
    while np.any(hi - lo > 1):
        mid = np.where(hi - lo > 1, (lo + hi) // 2, hi)
        ok = attempt(mid) <= limit
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    if np.all(hi == first):
        return sw, made
    durations = sw.durations.copy()
    durations[fast] = np.where(hi == first, blend_time, hi / fps)
    trial = _with_durations(sw, durations)
    return trial, _made(trial, window)


def _lock_window(out: Clip, src: Clip, dst: Clip, i_s: int, i_d: int, n_window: int,
                 ranges: list[knees.Knee]) -> Clip:
    """out with the feet locked over the stances the blend would slide: the contacts of
    `switched_contacts` that hold across the switch frame i_s or start inside the blend (a
    landing, from the first frame the blended foot is down: `_down`), each held at once and to
    its end, then let go up to the foot's next contact; the knees kept within their `ranges`
    after the lock. The source and the switch frame are untouched; stances that start after
    the blend are dst's own."""
    planted = switched_contacts(src, dst, i_s, i_d, n_window)
    end = i_s + n_window + 1  # the first frame past the blend
    down = _down(out, src, dst, i_s, i_d, n_window)
    T = out.n_frames
    letgo = math.ceil(_LETGO_SECONDS * out.fps)
    keep: dict[str, np.ndarray] = {}
    stop = i_s + 1
    for foot, mask in planted.items():
        m = np.zeros(T, dtype=bool)
        starts, stops = contact_runs(mask)
        for n, (a, b) in enumerate(zip(starts, stops, strict=True)):
            if b <= i_s + 1 or a >= end:
                continue
            if a > i_s:
                # A landing in the blend: the contact is the sources', the landing the blend's,
                # which may carry the foot in from above (dead blending's extrapolation keeps a
                # swinging foot going past the source's touchdown): held from where it is down.
                at = down[foot][a - i_s - 1:]
                if not at.any():
                    continue
                a += int(np.argmax(at))
            m[max(a, i_s + 1):b] = True
            stop = max(stop, min(int(starts[n + 1]) if n + 1 < len(starts) else b + letgo, T))
        keep[foot] = m
    if stop <= i_s + 1:
        return out
    part = out.with_frames(out.rotations[i_s + 1:stop], out.positions[i_s + 1:stop])
    # A FootLockWarning names the output, with times counted from the part's first frame.
    part.name = f"{out.name or 'the transition'} (times from {(i_s + 1) / out.fps:.3f} s)"
    # Held at once (ease_in=0): a foot planted across the switch stands still there, and a
    # landing is held from where the blended foot is down, which is no foot decelerating for a
    # lock to ease in over. Eased in over the landing instead, the foot slid on over the blend's
    # slow stop: 76 of the 313 transition tests failed.
    locked = footlock.lock_feet(part, contacts={f: m[i_s + 1:stop] for f, m in keep.items()}, ease_in=0.0)
    rot = out.rotations.copy()
    # The lock's IK and its let-go may bend a knee past what the takes do: kept as the blend is.
    rot[i_s + 1:stop] = knees.keep(locked.rotations, locked.positions, out.parents, ranges)
    return out.replace(rotations=rot)


def _down(out: Clip, src: Clip, dst: Clip, i_s: int, i_d: int, n_window: int) -> dict[str, np.ndarray]:
    """{foot: bool [n_window]}: over the blend's frames, where the blended foot is down, its
    lowest point within _DOWN_LEGS leg lengths (`leg_length`, half the height without one) above
    the floor the takes stand it on (their foot's lowest points at the same frames, src still
    playing, weighted by the blend's smoothstep)."""
    k = np.arange(1, n_window + 1)
    alpha = smoothstep(k / (n_window + 1.0))
    points = foot_points(out)
    h_out = _lowest(out, i_s + k, points)
    h_src = _lowest(src, np.minimum(i_s + k, src.n_frames - 1), points)
    h_dst = _lowest(dst, i_d + k, points)
    down = {}
    for foot in points:
        reach = leg_length(out, foot) or 0.5 * out.height
        floor = (1.0 - alpha) * h_src[foot] + alpha * h_dst[foot]
        down[foot] = h_out[foot] <= floor + _DOWN_LEGS * reach
    return down


def _lowest(clip: Clip, frames: np.ndarray,
            points: dict[str, tuple[list[int], list[int]]]) -> dict[str, Array]:
    """{foot: [n]} the height along up (file units) of each foot's lowest point (its joints and
    End Sites) on the clip's `frames`."""
    part = clip.with_frames(clip.rotations[frames], clip.positions[frames])
    rot, pos = part.fk()
    ends = part.end_site_positions(rot, pos)
    return {foot: (np.concatenate([pos[:, joints], ends[:, sites]], axis=1) @ clip.up).min(axis=1)
            for foot, (joints, sites) in points.items()}


def _contacts_near(clip: Clip, frame: int, before: float, after: float) -> tuple[int, dict[str, np.ndarray]]:
    """(first frame, {foot: bool [n]}): contacts read on the clip's frames from `before` seconds
    before `frame` to `after` seconds after it (a few strides give the take's thresholds, at a
    cost that does not grow with the take)."""
    a = max(frame - round(before * clip.fps), min(clip.motion_start, frame))
    b = min(frame + round(after * clip.fps) + 1, clip.n_frames)
    return a, detect_contacts(clip.with_frames(clip.rotations[a:b], clip.positions[a:b]))


def switched_contacts(src: Clip, dst: Clip, i_s: int, i_d: int, n_window: int = 0) -> dict[str, np.ndarray]:
    """{foot: bool [T_out]}: the sources' contacts laid out on a transition's frames: src's up to
    the switch frame i_s, dst's after the n_window blended frames, and in the blend (src still
    playing, dst at src's rate) the stances the two share: a foot is planted from where both
    take plant it (across the switch: src at i_s and dst at i_d) for as long as dst does, and on
    past dst's lift while src still plants it in the blend's first half, where src leads. So a
    stance both takes have is one contact, carried on or lifted by dst, rather than cut where
    src lifts the foot and caught again where dst plants it. Each take is read over a few
    seconds around its switch frame (False beyond them)."""
    a_s, cs = _contacts_near(src, i_s, _CONTACT_SECONDS, n_window / src.fps)
    a_d, cd = _contacts_near(dst, i_d, STRIDE_SECONDS, _CONTACT_SECONDS)
    n_out = i_s + 1 + dst.n_frames - 1 - i_d
    n = min(n_window, n_out - 1 - i_s)
    k = np.arange(n + 1)  # the switch frame, then the blend's frames
    leads = 2 * k < n_window + 1  # src's weight above one half
    out = {}
    for foot in [f for f in cs if f in cd]:  # the detection's order, not a set's (which varies by run)
        m = np.zeros(n_out, dtype=bool)
        m[a_s:i_s + 1] = cs[foot][:i_s + 1 - a_s]
        after = cd[foot][i_d + 1 - a_d:]
        m[i_s + 1:i_s + 1 + len(after)] = after
        src_on = cs[foot][np.minimum(i_s + k, a_s + len(cs[foot]) - 1) - a_s]
        at = i_d + k - a_d
        dst_on = np.zeros(n + 1, dtype=bool)
        dst_on[at < len(cd[foot])] = cd[foot][at[at < len(cd[foot])]]
        m[i_s + 1:i_s + 1 + n] = _shared_stances(src_on, dst_on, leads)[1:]
        out[foot] = m
    return out


def _shared_stances(src_on: np.ndarray, dst_on: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """bool [n]: over a blend's frames (the switch frame first), the contacts of `switched_contacts`
    from each take's (src_on, dst_on) and where src leads the blend."""
    k = np.arange(len(dst_on))
    landed = dst_on & ~np.concatenate([[False], dst_on[:-1]])
    stance = np.maximum.accumulate(np.where(landed, k, 0))  # where dst's current stance began
    shared = np.maximum.accumulate(np.where(src_on & dst_on, k, -1))
    held = dst_on & (shared >= stance)
    # On past dst's lift while src plants the foot and leads (takes lifting a foot about together:
    # not let go while the blend is mostly src's stance); never into dst's next stance, which is
    # another place.
    _, stops = contact_runs(held)
    go = src_on & leads
    for b in stops:
        e = b + int(np.argmin(np.append(go[b:], False)))
        if not held[e:e + 2].any():
            held[b:e] = True
    return held


# -- the methods ---------------------------------------------------------------------------------


def dead_blend(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float = 0.25, *,
               halflife: str | float = "auto", halflife_scale: float = 0.3, halflife_min: float = 0.1,
               halflife_max: float = 1.0, root_halflife: float = 5.0, max_speed: float | None = None,
               mask: npt.ArrayLike | None = None, feet: FeetSpec | None = None, lock_feet: bool = False,
               reanchor: bool = True, extend_fast_joints: bool | None = None) -> Clip:
    """Dead-blended transition from src at src_time to dst at dst_time (seconds), at src.fps.

    The source pose at the switch keeps moving with its velocity decaying by `halflife` seconds
    ('auto': per joint and axis, `estimate_halflife` with halflife_scale/min/max; a number: the
    same for every joint), blended into the re-anchored dst by smoothstep(t / blend_time) (see the
    module docstring for the layout and formulas). The root's world position and rotation
    extrapolate with `root_halflife` whatever `halflife` says. `max_speed` (rad/s) caps each
    joint's angular speed at the switch before extrapolating, against mocap spikes such as a
    thumb flipping half a turn in a frame; translations are not capped. The root's travel over the
    floor blends its extrapolated steps into dst's by alpha (module notes; with reanchor=False
    its positions blend). halflife -> 0 (root's too) rotates every joint as
    `crossfade(hold_source=True)` does (the root then starts its travel from rest). Knees stay
    within the takes' range (`knees.keep`), the extrapolation's too. `extend_fast_joints`: a
    joint whose blend would turn faster than 1.1x the takes' fastest joint blends for longer (up
    to 3x blend_time, see the module notes); False blends every joint over blend_time; None (the
    default) is `reanchor`: with reanchor=False the output after the blend is dst's own frames,
    as Blender's NLA plays them, and stays so.
    """
    if isinstance(halflife, str):
        if halflife != "auto":
            raise ValueError(f"halflife must be 'auto' or seconds, not {halflife!r}")
    elif not (math.isfinite(halflife) and halflife >= 0.0):
        raise ValueError(f"halflife must be 'auto' or seconds >= 0, not {halflife}")
    if not 0.0 <= halflife_min <= halflife_max:
        raise ValueError(f"need 0 <= halflife_min <= halflife_max, got {halflife_min}, {halflife_max}")
    if not (math.isfinite(root_halflife) and root_halflife >= 0.0):
        raise ValueError(f"root_halflife must be seconds >= 0, not {root_halflife}")

    def window(sw: _Switch) -> tuple[Array, Array, Travel]:
        if halflife == "auto":
            diff_rot = quat.to_scaled_angle_axis(quat.hemi(quat.mul_inv(sw.qd[0], sw.q0)))
            hl_rot = estimate_halflife(diff_rot, sw.w0, halflife_scale, halflife_min, halflife_max)
            hl_pos = estimate_halflife(sw.xd[0] - sw.x0, sw.v0, halflife_scale, halflife_min,
                                       halflife_max)
        else:
            hl_rot = np.full(sw.w0.shape, float(halflife))
            hl_pos = hl_rot.copy()
        r = sw.src.root
        hl_rot[r] = hl_pos[r] = root_halflife
        ext_x = extrapolate(sw.x0, sw.v0, hl_pos, sw.t)
        # Eased in as the output is, and not held near the range meanwhile: the output's own
        # `knees.keep` does that, where the blend is past it.
        ext_q = knees.keep(extrapolate_rotation(sw.q0, sw.w0, hl_rot, sw.t), ext_x, sw.src.parents, sw.knees,
                           _knee_share(sw), slack=math.inf)
        rot, pos = _blend_window(sw, ext_q, ext_x)
        return rot, pos, Travel(np.diff(ext_x[:, r], axis=0), sw.alpha[1:, r])

    return _transition(src, dst, src_time, dst_time, blend_time, mask, max_speed, window, "dead_blend", feet,
                       lock_feet, reanchor, extend_fast_joints)


def spring_offset(x0: npt.ArrayLike, v0: npt.ArrayLike, halflife: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """A critically damped spring's offset from its goal: (x0 + (v0 + y x0) t) exp(-y t) with
    y = 2 ln 2 / (halflife + eps), starting at x0 with rate v0; `[*t.shape, ...]` (t leads;
    halflife a number, or per joint: broadcastable against x0)."""
    x0, v0 = np.asarray(x0, dtype=np.float64), np.asarray(v0, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    y = 2.0 * LN2 / (np.asarray(halflife, dtype=np.float64) + EPS)
    tt = t.reshape(t.shape + (1,) * np.broadcast(x0, v0, y).ndim)
    return (x0 + (v0 + y * x0) * tt) * np.exp(-y * tt)


def _unit_time(x0: npt.ArrayLike, v0: npt.ArrayLike, duration: npt.ArrayLike,
               t: npt.ArrayLike) -> tuple[Array, Array, Array, Array]:
    """(x0, v0, duration, s) for a polynomial offset: s = t / duration clamped to [0, 1] (1 where
    duration is 0), shaped `[*t.shape, ...]` to broadcast against x0 and v0 (and duration, a
    number or an array broadcastable against them: one per joint)."""
    x0, v0 = np.asarray(x0, dtype=np.float64), np.asarray(v0, dtype=np.float64)
    duration = np.asarray(duration, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    tt = t.reshape(t.shape + (1,) * np.broadcast(x0, v0, duration).ndim)
    return x0, v0, duration, _fraction(tt, duration)


def cubic_offset(x0: npt.ArrayLike, v0: npt.ArrayLike, duration: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """The cubic from x0 with rate v0 to 0 with rate 0 at `duration` seconds (0 after it):
    x0 (1 - 3 s^2 + 2 s^3) + v0 duration (s - 2 s^2 + s^3), s = t / duration; `[*t.shape, ...]`
    (duration a number, or per joint: broadcastable against x0)."""
    x0, v0, duration, s = _unit_time(x0, v0, duration, t)
    return x0 * (1.0 - s * s * (3.0 - 2.0 * s)) + v0 * duration * s * (1.0 - s) ** 2


def quintic_offset(x0: npt.ArrayLike, v0: npt.ArrayLike, duration: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """The quintic from x0 with rate v0 and no acceleration to 0 with no rate or acceleration at
    `duration` seconds (0 after it): x0 (1 - 10 s^3 + 15 s^4 - 6 s^5) + v0 duration
    (s - 6 s^3 + 8 s^4 - 3 s^5), s = t / duration; `[*t.shape, ...]` (duration a number, or per
    joint: broadcastable against x0)."""
    x0, v0, duration, s = _unit_time(x0, v0, duration, t)
    s3 = s * s * s
    return x0 * (1.0 - s3 * (10.0 - 15.0 * s + 6.0 * s * s)) + v0 * duration * (
        s - s3 * (6.0 - 8.0 * s + 3.0 * s * s))


INERTIALIZATIONS = ("quintic", "cubic", "spring")


def inertialize(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float = 0.25, *,
                kind: str = "quintic", max_speed: float | None = None,
                mask: npt.ArrayLike | None = None, feet: FeetSpec | None = None, lock_feet: bool = False,
                reanchor: bool = True, extend_fast_joints: bool | None = None) -> Clip:
    """Inertialized transition: the re-anchored dst plus the offset src - dst at the switch,
    decaying to zero over blend_time; same layout and arguments as `dead_blend`.

    Offsets are per joint in the parent frame (the root's in the world; its travel over the
    floor, re-anchored, goes from the source's velocity at the switch into dst's as the kind's
    offset carries a velocity, see the module notes): translations
    x0 - xd with rate v0 - vd, rotations a0 = to_saa(hemi(q0 inv(qd))) applied as
    from_saa(a(t)) qd(t), with the rate that makes the output turn at the source's angular
    velocity at the switch: a'(0) = scaled_angle_axis_rate(a0, w0 - R(a0) wd) (dst's velocity
    seen through the offset, and the exponent's rate, not the angular velocity; plain w0 - wd
    errs by about |a0| |wd|, and nearly tripled the cubic's worst jump on the tests' 13 real
    switches). The source's velocity is its last step (backward difference at i_s), the
    destination's the step the output takes out of the switch (forward difference at i_d), so
    the output's first step continues the source's last up to the offset's curvature. (A
    backward difference for dst would add dst's own acceleration x dt to the jump: 1-2 rad/s on
    CMU legs, as much as a crossfade's; the price is that a take switched into itself at the same
    frame gets a small offset, -acceleration x dt, smoothed away over the blend.)

    kind='quintic' (default): `quintic_offset`, which also starts with no acceleration, so the
    output's first step keeps the source's velocity up to its jerk, a jump of
    (10 x0 / T + 6 v0) (dt / T)^2; zero with zero rate and acceleration at blend_time T.
    kind='cubic' (`cubic_offset`): zero with zero rate at blend_time, but it starts decelerating
    at once, a jump of (3 x0 / T + 2 v0) dt / T.
    kind='spring': a critically damped spring of half-life blend_time / 6 (`spring_offset`),
    ~0.2% of the offset left at blend_time, then snapped to dst; stiff at the start, a jump of
    about (y^2 x0 / 2 + y v0) dt with y = 12 ln 2 / T. No overshoot clamp (Bollo's v0 = 0 when
    the offset grows): it would break the velocity continuity this method is for.
    `extend_fast_joints` as in `dead_blend`: a joint's offset decays over its own, longer time.
    """
    if kind not in INERTIALIZATIONS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, INERTIALIZATIONS))}, not {kind!r}")

    def offset(x0: Array, v0: Array, duration: Array, t: Array) -> Array:
        if kind == "spring":
            # Snapped to dst at its duration, as it is where the window ends at blend_time.
            live = t.reshape(t.shape + (1,) * duration.ndim) < duration
            return spring_offset(x0, v0, duration / SPRING_HALFLIVES, t) * live
        if kind == "cubic":
            return cubic_offset(x0, v0, duration, t)
        return quintic_offset(x0, v0, duration, t)

    def window(sw: _Switch) -> tuple[Array, Array, Travel]:
        wd, vd = _velocity(sw.qd[:2], sw.xd[:2], sw.src.fps)
        turn = quat.hemi(quat.mul_inv(sw.q0, sw.qd[0]))
        off_q = quat.to_scaled_angle_axis(turn)
        rate_q = quat.scaled_angle_axis_rate(off_q, sw.w0 - quat.mul_vec(turn, wd))
        t = sw.t[1:]
        each = sw.durations[:, None]  # blend_time, longer for a joint that would turn too fast
        dq, dx = offset(off_q, rate_q, each, t), offset(sw.x0 - sw.xd[0], sw.v0 - vd, each, t)
        m = sw.mask[:, None]
        # The root's travel: the source's velocity at the switch carried as this offset carries a
        # velocity (its rate from a unit rate and no offset), up to where the offset would turn
        # back to give the distance back: the root goes on from there instead of slowing below
        # both takes.
        r = sw.src.root
        carried = np.diff(offset(np.zeros(1), np.ones(1), sw.durations[r:r + 1], sw.t)[:, 0]) * sw.src.fps
        share = sw.mask[r] * np.clip(carried, 0.0, 1.0)
        steps = np.broadcast_to(sw.v0[r] / sw.src.fps, (len(t), 3))
        return (quat.mul(quat.from_scaled_angle_axis(m * dq), sw.qd[1:]), sw.xd[1:] + m * dx,
                Travel(steps, 1.0 - share))

    return _transition(src, dst, src_time, dst_time, blend_time, mask, max_speed, window, "inertialize", feet,
                       lock_feet, reanchor, extend_fast_joints)


def crossfade(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float = 0.25, *,
              hold_source: bool = True, mask: npt.ArrayLike | None = None,
              feet: FeetSpec | None = None, lock_feet: bool = False, reanchor: bool = True) -> Clip:
    """Crossfade into the re-anchored dst by smoothstep(t / blend_time); same layout as `dead_blend`.

    hold_source=True blends from the source pose held at the switch (the root stands still, then
    is pulled onto dst's path); False keeps the source playing (frames i_s + k, the last frame
    held past its end) as Blender's NLA does: two motions averaged, the root on both paths.
    """

    def window(sw: _Switch) -> tuple[Array, Array, None]:
        n = sw.n_window + 1
        if hold_source:
            rot, pos = _blend_window(sw, np.broadcast_to(sw.q0, (n, *sw.q0.shape)),
                                     np.broadcast_to(sw.x0, (n, *sw.x0.shape)))
        else:
            frames = np.minimum(sw.i_s + np.arange(n), sw.src.n_frames - 1)
            rot, pos = _blend_window(sw, *_rooted(sw.src, frames))
        return rot, pos, None

    return _transition(src, dst, src_time, dst_time, blend_time, mask, None, window, "crossfade", feet,
                       lock_feet, reanchor)


def cut(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float = 0.0, *,
        mask: npt.ArrayLike | None = None, feet: FeetSpec | None = None, lock_feet: bool = False,
        reanchor: bool = True) -> Clip:
    """A hard cut: src up to the switch, the re-anchored dst after it (blend_time, mask and
    lock_feet are accepted for a shared signature and ignored: there is no blend). The reference
    the blend-window error is measured against."""
    del blend_time, mask, lock_feet
    return _transition(src, dst, src_time, dst_time, 0.0, None, None, _no_window, "cut", feet,
                       reanchor=reanchor)


def _no_window(sw: _Switch) -> tuple[Array, Array, None]:
    raise AssertionError("unreachable: a cut has no blend window")


def _crossfade_playing(src: Clip, dst: Clip, src_time: float, dst_time: float, blend_time: float = 0.25,
                       **options: Any) -> Clip:
    return crossfade(src, dst, src_time, dst_time, blend_time, hold_source=False, **options)


# Transition methods by name, for `sequence` and side-by-side comparisons; each takes
# (src, dst, src_time, dst_time, blend_time, **options).
METHODS: dict[str, Callable[..., Clip]] = {
    "dead": dead_blend,
    **{kind: partial(inertialize, kind=kind) for kind in INERTIALIZATIONS},
    "crossfade": crossfade,
    "crossfade_playing": _crossfade_playing,
    "cut": cut,
}


def best_target_time(src: Clip, src_time: float, dst: Clip, *, search: tuple[float, float] | None = None,
                     feet: FeetSpec | None = None) -> float:
    """The dst time (seconds) to switch into from src at src_time: the frame whose pose and motion
    best continue src's there, as a motion-matching cost (`matching.costs`: leg joint positions
    and velocities in the character frame, the root's velocity and turn rate, which feet are
    planted, gait phase). search: (start, stop) seconds of dst to look in (None: all of it after
    a converter's T-pose); dst is read at src's rate."""
    src, dst = with_feet(src, feet), with_feet(dst, feet)
    dst_at = at_rate(src, dst)
    i_s = max(_frame(src.n_frames, src_time, src.fps, "src_time"), 1)
    lo, hi = (dst_at.motion_start / src.fps, dst_at.duration) if search is None else search
    a = max(_frame(dst_at.n_frames, lo, src.fps, "search start"), dst_at.motion_start, 1)
    b = _frame(dst_at.n_frames, hi, src.fps, "search stop")
    if b < a:
        raise ValueError(f"search ({lo:g}, {hi:g}) s holds no frame after the first")
    candidates = np.arange(a, b + 1)
    cost = matching.costs(src, i_s, dst_at, candidates)
    # The cost ranks by features; the best few with the fewest contact mismatches, spread over the
    # take, are then judged by what the switch does: the jump in joint velocities of a dead blend
    # into each, the quantity the match stands in for.
    mismatch = matching.contact_mismatch(src, i_s, dst_at, candidates)
    order = np.argsort(cost, kind="stable")
    same = order[mismatch[order] == mismatch.min()]
    # Spread over the take (a frame's neighbours at 120 fps are one candidate, not eight).
    apart = max(1, round(_REFINE_APART * src.fps))
    close: list[int] = []
    for k in same:
        if all(abs(int(candidates[k]) - int(candidates[c])) >= apart for c in close):
            close.append(int(k))
            if len(close) == _REFINE:
                break
    if len(close) < 2:
        return float(candidates[order[0]] / src.fps)
    jumps = [_switch_jump(src, i_s, dst_at, int(candidates[k])) for k in close]
    return float(candidates[close[int(np.argmin(jumps))]] / src.fps)


_REFINE = 12  # best-matching candidates judged by their switch
_REFINE_APART = 0.15  # seconds between them at least
_REFINE_BLEND = 0.25  # seconds: the operators' default blend time


def _switch_jump(src: Clip, i_s: int, dst: Clip, i_d: int) -> float:
    """Mean jump of the joints' world velocities (m/s) across a dead blend from src frame i_s into
    dst frame i_d (one rate), read on the frames around the switch alone."""
    stop = min(i_d + math.ceil(_REFINE_BLEND * src.fps) + 3, dst.n_frames)
    head = src.with_frames(src.rotations[:i_s + 2], src.positions[:i_s + 2])
    part = dst.with_frames(dst.rotations[:stop], dst.positions[:stop])
    out = dead_blend(head, part, i_s / src.fps, i_d / src.fps, _REFINE_BLEND, extend_fast_joints=False)
    if out.n_frames < i_s + 3:  # dst ends at the switch: nothing to continue into
        return math.inf
    return metrics.switch_velocity_change(out, i_s)["position"]


# -- sequences -----------------------------------------------------------------------------------


def sequence(clips: Sequence[tuple[Clip, float, float]], blend_time: float | Sequence[float] = 0.25,
             method: str = "dead", **options: Any) -> Clip:
    """Clips played one after another, each joined to the last by a transition, at the first
    clip's fps.

    clips is [(clip, start_s, end_s), ...] (seconds in each clip's own time). Clip 0 plays from its
    start_s; at the end_s of clip n the output switches (src_time) into clip n + 1 at its start_s
    (dst_time), which is re-anchored to continue the output's trajectory there and plays until
    its own end_s, where the next switch happens; the last clip stops at its end_s. A transition
    longer than a clip's span is cut short by the next switch, which then blends from what the
    output had become. `method` is a key of `METHODS` ('dead', 'quintic', 'spring', 'cubic',
    'crossfade', 'crossfade_playing', 'cut'), `options` go to it (e.g. halflife, mask). All clips must share
    the first one's skeleton (`SkeletonMismatch`). Events: each clip's within its span ((start,
    end], the first clip's [start, end]), moved to output time, and one 'Transition' per switch.
    `blend_time`: seconds for every switch, or one per switch (len(clips) - 1 values), as NLA
    strips carry their own blend-in times. `lock_feet=True` locks the feet through each
    transition (an option of every method; a cut has no blend to lock). `reanchor=False` (an
    option of every method) plays each clip where it is instead of continuing the last one's
    path: outside the blends the output is the clips' own frames.
    """
    if method not in METHODS:
        raise ValueError(f"unknown transition method {method!r}; methods are {', '.join(METHODS)}")
    transition = METHODS[method]
    items = [(c, float(a), float(b)) for c, a, b in clips]
    if not items:
        raise ValueError("sequence needs at least one (clip, start_s, end_s)")
    if isinstance(blend_time, int | float):
        blend_times = [float(blend_time)] * (len(items) - 1)
    else:
        blend_times = [float(b) for b in blend_time]
        if len(blend_times) != len(items) - 1:
            raise ValueError(f"{len(blend_times)} blend times for {len(items) - 1} switches")
    first = items[0][0]
    fps = first.fps
    spans = []
    for n, (clip, a, b) in enumerate(items):
        first.check_compatible(clip)
        frames = clip.n_frames if clip.fps == fps else math.floor(clip.duration * fps + _TIME_SNAP) + 1
        fa = _frame(frames, a, fps, f"clip {n} start_s")
        fb = _frame(frames, b, fps, f"clip {n} end_s")
        if fb <= fa:
            raise ValueError(f"clip {n} ends ({b:g} s, frame {fb}) before it starts ({a:g} s, frame {fa}) "
                             f"at {fps:g} fps")
        spans.append((fa, fb))

    rot_parts: list[Array] = []
    pos_parts: list[Array] = []
    events: dict[str, list[np.ndarray]] = {"Transition": []}

    def add_events(clip: Clip, lo: float, hi: float, shift: float, closed: bool) -> None:
        for name, times in clip.events.items():
            inside = (times <= hi + _TIME_SNAP) & ((times >= lo - _TIME_SNAP) if closed else
                                                     (times > lo + _TIME_SNAP))
            events.setdefault(name, []).append(times[inside] + shift)

    fa, fb = spans[0]
    cur = first.with_frames(first.rotations[fa:], first.positions[fa:])
    lead, end, base = fa, fb, 0  # clip frame = cur frame + lead; cur frame 0 = output frame base
    add_events(first, fa / fps, fb / fps, -fa / fps, closed=True)
    for (clip, a, _), (fa, fb), switch_blend in zip(items[1:], spans[1:], blend_times, strict=True):
        s = end - lead  # the switch, in cur's frames
        # Frames before the stride the re-anchoring reads (and the two the velocity needs) are final.
        keep = max(s - round(STRIDE_SECONDS * fps), 0)
        rot_parts.append(cur.rotations[:keep])
        pos_parts.append(cur.positions[:keep])
        # The source of the next transition: cur from `keep` on (a view; Clip slices copy twice).
        tail, base = cur.with_frames(cur.rotations[keep:], cur.positions[keep:]), base + keep
        cur = transition(tail, clip, (s - keep) / fps, a, switch_blend, **options)
        switch = base + s - keep
        events["Transition"].append(np.array([switch / fps]))
        add_events(clip, fa / fps, fb / fps, (switch - fa) / fps, closed=False)
        lead, end = fa - (s - keep), fb
    s = end - lead
    rot_parts.append(cur.rotations[:s + 1])
    pos_parts.append(cur.positions[:s + 1])
    rot, pos = np.concatenate(rot_parts), np.concatenate(pos_parts)
    merged = {k: np.sort(np.concatenate(v)) if v else np.zeros(0) for k, v in events.items()}
    if len(items) == 1:
        del merged["Transition"]
    return first.replace(rotations=rot, positions=pos, events=merged, loop=False, root=first.root,
                         name="+".join(c.name for c, _, _ in items if c.name),
                         motion_start=min(max(first.motion_start - spans[0][0], 0), len(rot) - 1))
