"""The same world motion in other skeleton conventions, made in code.

Each variant keeps every joint's (and End Site's) world position at every frame, changing only
how the motion is written: rest frames, axes, units, names, extra joints. What Stride reads from
a skeleton must not change with them (tests/core/test_body.py).

A variant is returned as (clip, index) where index[j] is the variant's joint for the original's
joint j. Variants are built fresh (no up, forward, unit or body carried over), so every fact is
read again from the variant itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core import quat, skeleton
from core.clip import Clip

Variant = tuple[Clip, np.ndarray]


def fresh(clip: Clip, **changes: Any) -> Clip:
    """A new clip from the arrays of `clip` with nothing inferred carried over."""
    args: dict[str, Any] = dict(
        names=clip.names, parents=clip.parents, offsets=clip.offsets, rotations=clip.rotations,
        positions=clip.positions, fps=clip.fps, channels=clip.channels, end_parents=clip.end_parents,
        end_offsets=clip.end_offsets, name=clip.name, motion_start=clip.motion_start)
    args.update(changes)
    return Clip(**args)


def identity(clip: Clip) -> Variant:
    return fresh(clip), np.arange(clip.n_joints)


# -- rest frames ---------------------------------------------------------------------------------


def reframe(clip: Clip, frames: np.ndarray) -> Clip:
    """Each joint's local frame turned by frames[j] [J, 4] (world rotation G becomes G Q): local
    rotations Q_p^-1 L Q_j, offsets and translations Q_p^-1 o, End Sites Q_j^-1 e. World
    positions are unchanged."""
    Q = np.asarray(frames, dtype=np.float64)
    parents = clip.parents
    Qp = np.where((parents >= 0)[:, None], Q[np.maximum(parents, 0)], np.array([1.0, 0, 0, 0]))
    rot = quat.mul(quat.inv_mul(Qp, clip.rotations), Q)
    pos = quat.mul_vec(quat.inv(Qp), clip.positions)
    offsets = quat.mul_vec(quat.inv(Qp), clip.offsets)
    end_offsets = quat.mul_vec(quat.inv(Q[clip.end_parents]), clip.end_offsets) if len(clip.end_parents) \
        else clip.end_offsets
    every = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * clip.n_joints
    return fresh(clip, rotations=rot, positions=pos, offsets=offsets, end_offsets=end_offsets, channels=every)


def _bone_direction(clip: Clip, j: int) -> np.ndarray | None:
    """Direction of joint j's longest child bone (or End Site), in j's own frame."""
    kids = skeleton.children(clip.parents)[j]
    options = [clip.offsets[c] for c in kids] + [e for p, e in zip(clip.end_parents, clip.end_offsets,
                                                                   strict=True) if p == j]
    if not options:
        return None
    v = max(options, key=lambda o: float(np.linalg.norm(o)))
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def _aim(clip: Clip, target: Callable[[int], np.ndarray | None]) -> np.ndarray:
    """Frames whose own axes point each joint's bone along target(j) (a unit vector or None)."""
    Q = np.tile([1.0, 0, 0, 0], (clip.n_joints, 1))
    for j in range(clip.n_joints):
        d, t = _bone_direction(clip, j), target(j)
        if d is None or t is None:
            continue
        # Q^-1 d = t, i.e. Q turns t onto d.
        Q[j] = quat.between(t, d)
    return Q


def bones_along_x(clip: Clip) -> Variant:
    """Every bone along its joint's local +X at rest (Bandai's layout): no standing rest pose."""
    return reframe(clip, _aim(clip, lambda j: np.array([1.0, 0, 0]))), np.arange(clip.n_joints)


def random_frames(clip: Clip, seed: int = 0) -> Variant:
    from scipy.spatial.transform import Rotation  # tests only; Blender's Python has no scipy

    Q = Rotation.random(clip.n_joints, random_state=seed).as_quat()[:, [3, 0, 1, 2]]
    return reframe(clip, Q), np.arange(clip.n_joints)


def arms_down(clip: Clip, arms: Sequence[int]) -> Variant:
    """The given joints' bones pointing down (-Y) at rest, everything else along +Y."""
    down = set(int(j) for j in arms)
    return reframe(clip, _aim(clip, lambda j: np.array([0.0, -1.0, 0]) if j in down
                              else np.array([0.0, 1.0, 0]))), np.arange(clip.n_joints)


# -- axes and units --------------------------------------------------------------------------------


def z_up(clip: Clip) -> Variant:
    """The world turned so that the file's +Y is +Z (a Z-up file), only the top joints change."""
    a = quat.from_matrix(np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]))
    tops = clip.parents < 0
    rot, pos, off = clip.rotations.copy(), clip.positions.copy(), clip.offsets.copy()
    rot[:, tops] = quat.mul(a, rot[:, tops])
    pos[:, tops] = quat.mul_vec(a, pos[:, tops])
    off[tops] = quat.mul_vec(a, off[tops])
    return fresh(clip, rotations=rot, positions=pos, offsets=off), np.arange(clip.n_joints)


def scaled(clip: Clip, factor: float) -> Variant:
    return fresh(clip, offsets=clip.offsets * factor, positions=clip.positions * factor,
                 end_offsets=clip.end_offsets * factor), np.arange(clip.n_joints)


# -- names -----------------------------------------------------------------------------------------

# Leg joints (hip, knee, ankle, toe) per convention; {S} is the side as the convention writes it.
CONVENTIONS = {
    "cmu": (("Left", "Right"), "{S}UpLeg", "{S}Leg", "{S}Foot", "{S}ToeBase"),
    "biovision": (("Left", "Right"), "{S}Hip", "{S}Knee", "{S}Ankle", "{S}Toe"),
    "acclaim": (("l", "r"), "{S}femur", "{S}tibia", "{S}foot", "{S}toes"),
    "mixamo": (("Left", "Right"), "mixamorig:{S}UpLeg", "mixamorig:{S}Leg", "mixamorig:{S}Foot",
               "mixamorig:{S}ToeBase"),
    "unreal": (("l", "r"), "thigh_{S}", "calf_{S}", "foot_{S}", "ball_{S}"),
    "rigify": (("L", "R"), "DEF-thigh.{S}", "DEF-shin.{S}", "DEF-foot.{S}", "DEF-toe.{S}"),
    "bandai": (("L", "R"), "UpperLeg_{S}", "LowerLeg_{S}", "Foot_{S}", "Toes_{S}"),
    "blender": (("L", "R"), "Thigh.{S}", "Leg.{S}", "Foot.{S}", "Toe.{S}"),
    "snake": (("l", "r"), "{S}_hip", "{S}_knee", "{S}_ankle", "{S}_toe"),
}


def renamed(clip: Clip, legs: dict[str, list[int]], convention: str | None) -> Variant:
    """Leg joints named in `convention` (None: every joint j0..jN), the others neutral (b0, b1...)."""
    if convention is None:
        names = [f"j{j}" for j in range(clip.n_joints)]
    else:
        (left, right), *parts = CONVENTIONS[convention]
        names = [f"b{j}" for j in range(clip.n_joints)]
        for side, word in (("L", left), ("R", right)):
            for j, part in zip(legs[side], parts, strict=False):
                names[j] = part.format(S=word)
    return fresh(clip, names=names), np.arange(clip.n_joints)


# -- extra joints ----------------------------------------------------------------------------------


def _with_joints(clip: Clip, parents: Sequence[Any], names: list[str], offsets: np.ndarray,
                 rotations: np.ndarray, positions: np.ndarray, end_parents: np.ndarray,
                 end_offsets: np.ndarray) -> Clip:
    every = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * len(names)
    return fresh(clip, names=names, parents=parents, offsets=offsets, rotations=rotations,
                 positions=positions, channels=every, end_parents=end_parents, end_offsets=end_offsets)


def dummy_root(clip: Clip) -> Variant:
    """A static top joint at the origin above the clip's own (Bandai's joint_Root)."""
    T, J = clip.n_frames, clip.n_joints
    parents = [-1] + [p + 1 if p >= 0 else 0 for p in clip.parents]
    rot = np.concatenate([np.tile([1.0, 0, 0, 0], (T, 1, 1)), clip.rotations], axis=1)
    pos = np.concatenate([np.zeros((T, 1, 3)), clip.positions], axis=1)
    off = np.concatenate([np.zeros((1, 3)), clip.offsets])
    return _with_joints(clip, parents, ["joint_Root", *clip.names], off, rot, pos, clip.end_parents + 1,
                        clip.end_offsets), np.arange(J) + 1


def end_sites_as_joints(clip: Clip) -> Variant:
    """Each End Site made a leaf joint (LeftToeBaseEnd) with a zero-length End Site of its own."""
    T, J, E = clip.n_frames, clip.n_joints, len(clip.end_parents)
    parents = list(clip.parents) + [int(p) for p in clip.end_parents]
    names = clip.names + [f"{clip.names[p]}End" for p in clip.end_parents]
    off = np.concatenate([clip.offsets, clip.end_offsets])
    rot = np.concatenate([clip.rotations, np.tile([1.0, 0, 0, 0], (T, E, 1))], axis=1)
    pos = np.concatenate([clip.positions, np.broadcast_to(clip.end_offsets, (T, E, 3))], axis=1)
    ends = np.arange(J, J + E)
    return _with_joints(clip, parents, names, off, rot, pos, ends, np.zeros((E, 3))), np.arange(J)


def zero_length_ends(clip: Clip) -> Variant:
    """A zero-length leaf joint under every joint that has an End Site (Bandai's Head, Toes_L)."""
    T, J = clip.n_frames, clip.n_joints
    owners = sorted(set(int(p) for p in clip.end_parents))
    parents = list(clip.parents) + owners
    names = clip.names + [f"{clip.names[p]}_tip" for p in owners]
    off = np.concatenate([clip.offsets, np.zeros((len(owners), 3))])
    rot = np.concatenate([clip.rotations, np.tile([1.0, 0, 0, 0], (T, len(owners), 1))], axis=1)
    pos = np.concatenate([clip.positions, np.zeros((T, len(owners), 3))], axis=1)
    return _with_joints(clip, parents, names, off, rot, pos, clip.end_parents, clip.end_offsets), np.arange(J)


# -- parts cut off -------------------------------------------------------------------------------


def without(clip: Clip, joints: Sequence[int]) -> Variant:
    """The clip with `joints` and everything below them cut off, as a user cleaning a file would:
    the other joints keep their channels and world motion, and a joint left without children gets
    an End Site where its first cut child was (BVH writers close every leaf with one). index[j] is
    the new joint of the original's joint j, -1 where cut."""
    cut = np.zeros(clip.n_joints, dtype=bool)
    for j in joints:
        cut |= skeleton.descendants(clip.parents, int(j))
    keep = np.flatnonzero(~cut)
    index = np.full(clip.n_joints, -1, dtype=np.int64)
    index[keep] = np.arange(keep.size)
    parents = np.where(clip.parents[keep] >= 0, index[np.maximum(clip.parents[keep], 0)], -1)
    ends = [(int(index[owner]), e) for owner, e in zip(clip.end_parents, clip.end_offsets, strict=True)
            if not cut[owner]]
    has_child = {int(p) for p in parents if p >= 0} | {owner for owner, _ in ends}
    for gone in np.flatnonzero(cut):
        above = int(clip.parents[gone])
        if above >= 0 and not cut[above] and int(index[above]) not in has_child:
            ends.append((int(index[above]), clip.offsets[gone]))
            has_child.add(int(index[above]))
    ends.sort(key=lambda pe: pe[0])
    end_parents = np.array([owner for owner, _ in ends], dtype=np.int64)
    end_offsets = np.array([e for _, e in ends], dtype=np.float64).reshape(-1, 3)
    return fresh(clip, names=[clip.names[j] for j in keep], parents=parents, offsets=clip.offsets[keep],
                 rotations=clip.rotations[:, keep], positions=clip.positions[:, keep],
                 channels=[clip.channels[j] for j in keep], end_parents=end_parents,
                 end_offsets=end_offsets), index


def only(clip: Clip, joint: int) -> Variant:
    """Only `joint` and everything below it, `joint` now the root carrying its world motion (its
    world rotation and position as its own channels): an upper or lower body on its own."""
    keep = np.flatnonzero(skeleton.descendants(clip.parents, joint))
    index = np.full(clip.n_joints, -1, dtype=np.int64)
    index[keep] = np.arange(keep.size)
    wrot, wpos = clip.fk()
    rot, pos = clip.rotations[:, keep].copy(), clip.positions[:, keep].copy()
    rot[:, 0], pos[:, 0] = wrot[:, joint], wpos[:, joint]
    offsets = clip.offsets[keep].copy()
    offsets[0] = skeleton.rest_positions(clip.parents, clip.offsets)[joint]
    parents = np.where(clip.parents[keep] >= 0, index[np.maximum(clip.parents[keep], 0)], -1)
    parents[0] = -1
    inside = skeleton.descendants(clip.parents, joint)[clip.end_parents]
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                *[clip.channels[j] for j in keep[1:]]]
    return fresh(clip, names=[clip.names[j] for j in keep], parents=parents, offsets=offsets, rotations=rot,
                 positions=pos, channels=channels, end_parents=index[clip.end_parents[inside]],
                 end_offsets=clip.end_offsets[inside]), index


def travel_on(clip: Clip, joint: int, like: Clip) -> Clip:
    """The same world motion with its travel written on `joint` (a take of the skeleton that moves
    its dummy root re-expressed as one that moves its hips): the joints above it hold `like`'s
    first pose, and up and facing (a facing is in the root's frame) are `like`'s."""
    from core import root

    above = skeleton.chain(clip.parents, joint)[:-1]
    world_rot, world_pos = root.root_world_of(clip.rotations, clip.positions, clip.parents, joint)
    rot, pos = clip.rotations.copy(), clip.positions.copy()
    rot[:, above], pos[:, above] = like.rotations[0, above], like.positions[0, above]
    moved = clip.replace(rotations=rot, positions=pos, root=joint, up=like.up, forward=like.forward)
    return root.with_root_world(moved, world_rot, world_pos)


def played(loop: Clip, n: int, position: np.ndarray | None = None, heading: float | None = None,
           turn: float | None = None) -> Clip:
    """The loop played for n frames, each cycle moved rigidly (root.reanchor) to where the one
    before ends (`sync.cycle_travel`, turning by `turn` in place of its own when given), the first
    at (position, heading) (None: where the loop stands at its frame 0)."""
    from core import root, sync

    disp, own = sync.cycle_travel(loop)
    turn = own if turn is None else turn
    start = root.trajectory(loop)
    position = start.position[0] if position is None else position
    heading = float(start.heading[0]) if heading is None else heading
    rot: list[np.ndarray] = []
    pos: list[np.ndarray] = []
    while sum(len(r) for r in rot) < n:
        cycle = root.reanchor(loop, 0, position, heading)
        rot.append(cycle.rotations)
        pos.append(cycle.positions)
        position = position + quat.mul_vec(root.yaw_quat(np.asarray(heading), loop.up), disp)
        heading = heading + turn
    return loop.replace(rotations=np.concatenate(rot)[:n], positions=np.concatenate(pos)[:n], loop=False,
                        events={})


def world(clip: Clip) -> np.ndarray:
    """[T, J, 3] world joint positions."""
    return clip.fk()[1]


def moving_bone_first(clip: Clip) -> Variant:
    """A top-level bone that moves on its own, listed before the skeleton (as a rig's helper,
    Rigify's MCH-eyes_parent, comes before its deform bones): not the motion root."""
    T, J = clip.n_frames, clip.n_joints
    parents = [-1] + [p + 1 if p >= 0 else -1 for p in clip.parents]
    rot = np.concatenate([np.tile([1.0, 0, 0, 0], (T, 1, 1)), clip.rotations], axis=1)
    wobble = np.zeros((T, 1, 3))
    wobble[:, 0, 0] = np.sin(np.arange(T) / 7.0)
    pos = np.concatenate([wobble, clip.positions], axis=1)
    off = np.concatenate([np.zeros((1, 3)), clip.offsets])
    return _with_joints(clip, parents, ["MCH-eyes_parent", *clip.names], off, rot, pos, clip.end_parents + 1,
                        clip.end_offsets), np.arange(J) + 1


def remakes(clip: Clip) -> dict[str, Callable[[Clip], Variant]]:
    """The variants above by name, as functions of any clip of `clip`'s skeleton, so that one can
    be applied to a function's input and to its output alike (the output re-expressed is the
    oracle). Leg joints (for names) come from the body map of `clip`."""
    legs = {side: [clip.body.legs[side][0], int(clip.parents[clip.body.feet[side][0]]), *clip.body.feet[side]]
            for side in clip.body.legs}
    arms = [j for side in clip.body.arms.values() for j in side]
    unit = clip.meters_per_unit

    def all_at_once(c: Clip) -> Variant:
        anon, _ = renamed(bones_along_x(c)[0], legs, None)
        return scaled(z_up(anon)[0], unit / 0.01)

    return {
        "bones along +X": bones_along_x,
        "random rest frames": lambda c: random_frames(c, seed=11),
        "arms-down rest": lambda c: arms_down(c, arms),
        "Z-up": z_up,
        "meters": lambda c: scaled(c, unit),
        "inches": lambda c: scaled(c, unit / 0.0254),
        "no names": lambda c: renamed(c, legs, None),
        "unreal names": lambda c: renamed(c, legs, "unreal"),
        "rigify names": lambda c: renamed(c, legs, "rigify"),
        "dummy root": dummy_root,
        "End Sites as joints": end_sites_as_joints,
        "zero-length end joints": zero_length_ends,
        "+X bones, no names, Z-up, cm": all_at_once,
    }
