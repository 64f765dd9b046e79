"""Motion metrics, all in meters and seconds (the one home for them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import quat
from .blend import mask_preset
from .clip import Clip
from .contacts import foot_points
from .root import character_positions


def root_speed(clip: Clip) -> float:
    """Mean horizontal speed of the motion root over the captured frames, in m/s.

    Path length of the root's floor projection divided by its duration, so a walk that turns
    keeps its speed; a converter T-pose at frame 0 is left out.
    """
    _, world = clip.fk()
    root = world[clip.motion_start:, clip.root]
    if len(root) < 2:
        return 0.0
    up = clip.up
    step = np.diff(root, axis=0)
    planar = step - np.outer(step @ up, up)
    return float(np.linalg.norm(planar, axis=-1).sum() * clip.meters_per_unit / ((len(root) - 1) / clip.fps))


def _world_meters(clip: Clip) -> np.ndarray:
    return clip.fk()[1] * clip.meters_per_unit


def _check_same_frames(a: Clip, b: Clip) -> None:
    a.check_compatible(b)
    if a.n_frames != b.n_frames:
        raise ValueError(f"clips have {a.n_frames} and {b.n_frames} frames; compare equal lengths")


def position_error(a: Clip, b: Clip) -> tuple[float, float]:
    """(mean, max) distance in meters between world joint positions of two clips on one skeleton
    (each converted with its own meters_per_unit)."""
    _check_same_frames(a, b)
    dist = np.linalg.norm(_world_meters(a) - _world_meters(b), axis=-1)
    if dist.size == 0:
        return 0.0, 0.0
    return float(dist.mean()), float(dist.max())


def relative_error(a: Clip, b: Clip) -> float:
    """Relative position error of `a` against the reference `b`, as used to score motion models.

    Positions are taken in each clip's character frame (root on the floor at the origin, heading
    aligned), in meters; per frame and joint |p_a - p_b| / max(|p_b|, 0.1 h) with h the height of
    b's skeleton in meters; the mean over frames and joints.
    """
    _check_same_frames(a, b)
    pa = character_positions(a) * a.meters_per_unit
    pb = character_positions(b) * b.meters_per_unit
    h = b.height * b.meters_per_unit
    err = np.linalg.norm(pa - pb, axis=-1) / np.maximum(np.linalg.norm(pb, axis=-1), 0.1 * h)
    return float(err.mean()) if err.size else 0.0


# -- transitions ---------------------------------------------------------------------------------
#
# Angular velocity at frame f is the backward difference to_saa(hemi(q[f] inv(q[f-1]))) / dt of
# each joint's local rotation (in its parent's frame), defined for f >= 1; acceleration at f is
# (w[f] - w[f-1]) / dt, for f >= 2. By default finger and thumb joints are left out
# (`blend.mask_preset(clip, 'FINGERS')`): CMU thumbs flip by up to half a turn between frames.


def _joints(clip: Clip, joints: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """Joint indices: given, or every joint but fingers and thumbs."""
    if joints is None:
        return np.flatnonzero(mask_preset(clip, "FINGERS") == 0.0)
    idx = np.asarray(joints)
    return np.flatnonzero(idx) if idx.dtype == bool else idx.astype(np.int64).reshape(-1)


def _frame_range(clip: Clip, frames: tuple[int, int] | None, first: int) -> tuple[int, int]:
    """[a, b) clipped to the clip and to frames >= first (where the quantity is defined)."""
    a, b = (0, clip.n_frames) if frames is None else (int(frames[0]), int(frames[1]))
    return max(a, first), min(b, clip.n_frames)


def _world_meters_at(clip: Clip, a: int, b: int) -> np.ndarray:
    """[b - a, J, 3] world joint positions in meters of frames [a, b) (FK of those frames only)."""
    return quat.fk(clip.rotations[a:b], clip.positions[a:b], clip.parents)[1] * clip.meters_per_unit


def switch_velocity_change(clip: Clip, frame: int,
                           joints: Sequence[int] | np.ndarray | None = None) -> dict[str, float]:
    """How much velocities jump across a switch at `frame` (the last frame before the change):
    per joint |v(frame + 1) - v(frame)| with v the backward difference, so the step into the
    switch frame against the step out of it.

    Returns {'rotation': mean over joints (rad/s), 'rotation_max', 'position': mean over joints of
    world positions (m/s), 'position_max'}. A held-source crossfade's rotation change is about the
    source's angular speed; a velocity-continuous transition's is a small fraction of it.
    """
    if not 1 <= frame <= clip.n_frames - 2:
        raise ValueError(f"a switch at frame {frame} needs frames {frame - 1}..{frame + 1} "
                         f"(the clip has {clip.n_frames})")
    idx = _joints(clip, joints)
    w = quat.angular_velocity(clip.rotations[frame - 1:frame + 2, idx], clip.fps)
    v = np.diff(_world_meters_at(clip, frame - 1, frame + 2)[:, idx], axis=0) * clip.fps
    dw = np.linalg.norm(w[1] - w[0], axis=-1)
    dv = np.linalg.norm(v[1] - v[0], axis=-1)
    if idx.size == 0:
        return {"rotation": 0.0, "rotation_max": 0.0, "position": 0.0, "position_max": 0.0}
    return {"rotation": float(dw.mean()), "rotation_max": float(dw.max()),
            "position": float(dv.mean()), "position_max": float(dv.max())}


def peak_angular_speed(clip: Clip, frames: tuple[int, int] | None = None,
                       joints: Sequence[int] | np.ndarray | None = None) -> float:
    """Largest joint angular speed (rad/s) at frames [a, b) (frames >= 1), fingers left out."""
    w = _joint_angular_velocity(clip, frames, joints, 1)
    return 0.0 if w is None else float(np.linalg.norm(w, axis=-1).max())


def peak_angular_acceleration(clip: Clip, frames: tuple[int, int] | None = None,
                              joints: Sequence[int] | np.ndarray | None = None) -> float:
    """Largest joint angular acceleration (rad/s^2) at frames [a, b) (frames >= 2), fingers left out."""
    w = _joint_angular_velocity(clip, frames, joints, 2)
    return 0.0 if w is None else float(np.linalg.norm(np.diff(w, axis=0), axis=-1).max() * clip.fps)


def _joint_angular_velocity(clip: Clip, frames: tuple[int, int] | None,
                            joints: Sequence[int] | np.ndarray | None, back: int) -> np.ndarray | None:
    """Angular velocities of the chosen joints from `back` frames before the range on; None for
    an empty range or no joints."""
    a, b = _frame_range(clip, frames, back)
    idx = _joints(clip, joints)
    if b <= a or idx.size == 0:
        return None
    return quat.angular_velocity(clip.rotations[a - back:b, idx], clip.fps)


def foot_sliding(clip: Clip, contacts: Mapping[str, np.ndarray] | None = None, *,
                 feet: Mapping[str, Sequence[int]] | None = None,
                 frames: tuple[int, int] | None = None) -> float:
    """Mean speed over the floor (m/s) of planted feet: over each foot's contact frames (f >= 1,
    within `frames` [a, b)), the horizontal speed of its slowest point, averaged over all of them.

    A planted foot rolls from heel to toe, so one of its points (ankle, toe, toe tip) is the pivot
    and stays put; sliding is when even the slowest one moves. contacts is {foot: bool [T]}
    (None: `contacts.contacts(clip)`, detected on the clip itself; for a transition, pass the
    sources' contacts laid out on its frames instead); feet {foot: joint indices} (None: ankle,
    toe and the toe's End Sites, `foot_points`). 0.0 when no frame is in contact.
    """
    if contacts is None:
        # Imported here: contact detection may come to use these metrics itself.
        from .contacts import contacts as detect

        contacts = detect(clip)
    points = foot_points(clip) if feet is None else {k: (list(v), []) for k, v in feet.items()}
    a, b = _frame_range(clip, frames, 1)
    if b <= a:
        return 0.0
    world_rot, world_pos = quat.fk(clip.rotations[a - 1:b], clip.positions[a - 1:b], clip.parents)
    ends = clip.end_site_positions(world_rot, world_pos)
    up = clip.up
    speeds = []
    for name, planted in contacts.items():
        if name not in points:
            raise ValueError(f"contacts name a foot {name!r} not in feet {sorted(points)}")
        joint_idx, end_idx = points[name]
        p = np.concatenate([world_pos[:, joint_idx], ends[:, end_idx]], axis=1)
        step = np.diff(p, axis=0)
        step -= (step @ up)[..., None] * up
        speed = np.linalg.norm(step, axis=-1).min(axis=1) * clip.fps * clip.meters_per_unit
        speeds.append(speed[np.asarray(planted, dtype=bool)[a:b]])
    every = np.concatenate(speeds) if speeds else np.zeros(0)
    return float(every.mean()) if every.size else 0.0


def blend_window_error(out: Clip, target: Clip, frames: tuple[int, int]) -> tuple[float, float]:
    """(mean, max) distance in meters between world joint positions of `out` and `target` over
    frames [a, b): how far a transition's blend window strays from the re-anchored destination
    (`transition.cut` with the same arguments lays it out on the same frames)."""
    _check_same_frames(out, target)
    a, b = _frame_range(out, frames, 0)
    if b <= a:
        return 0.0, 0.0
    dist = np.linalg.norm(_world_meters_at(out, a, b) - _world_meters_at(target, a, b), axis=-1)
    return float(dist.mean()), float(dist.max())
