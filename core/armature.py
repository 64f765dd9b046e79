"""Blender armature conventions as plain maths (no bpy), for the action <-> Clip bridge.

Blender's BVH importer builds bones in BVH space, keys pose values relative to each bone's rest,
then rotates the armature by the axis conversion C (`transform_apply`). With M a bone's rest
rotation (`bone.matrix_local`, after the conversion), B its pose rotation and L the BVH local
rotation of the joint:

    L = C^T M B M^T C        B = M^T C L C^T M

and with h the rest head relative to the parent (BVH units x global_scale, before C) and p the
pose-bone location, the BVH translation of a joint with position channels is
`t = (h + C^T M p) / scale`. Blender Euler modes name axes in the order they apply:
'XYZ' is Rz Ry Rx, i.e. the intrinsic order 'ZYX' of `quat.from_euler` with angles reversed.
"""

from __future__ import annotations

import math

import numpy as np

from . import axes, quat, skeleton
from .clip import POSITION_CHANNELS, Clip

EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def axis_conversion(from_forward: str = "-Z", from_up: str = "Y", to_forward: str = "Y",
                    to_up: str = "Z") -> np.ndarray:
    """3x3 rotation C of Blender's BVH importer (`bpy_extras.io_utils.axis_conversion`); the
    defaults are the importer's: BVH's Y-up, -Z-forward onto Blender's Z-up, Y-forward."""
    return axes.matrix(from_forward, from_up, to_forward, to_up)


def pose_to_local(rest: np.ndarray, pose: np.ndarray, conversion: np.ndarray) -> np.ndarray:
    """BVH local rotations L = C^T M B M^T C from rest rotations M [J, 4] and pose rotations
    B [T, J, 4]; `conversion` is C as a 3x3 matrix."""
    return _conjugate(pose, quat.inv(_rest_to_bvh(rest, conversion)))


def local_to_pose(rest: np.ndarray, local: np.ndarray, conversion: np.ndarray) -> np.ndarray:
    """Pose rotations B = M^T C L C^T M, the inverse of `pose_to_local`."""
    return _conjugate(local, _rest_to_bvh(rest, conversion))


def _conjugate(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """r^-1 q r for unit r [J, 4], q [..., J, 4]: w stays, the vector part turns by R(r)^T.

    One batched 4x4 product per joint over all poses, stored joint by joint and component by
    component ([J, 4, poses]) and returned as a [..., J, 4] view: numpy then runs long loops, where
    over [..., J, 4] every step loops over only J values (6x slower on 10k x 31 poses), and each
    joint's channel is contiguous, as an F-curve is written."""
    q = np.asarray(q, dtype=np.float64)
    shape = np.broadcast_shapes(q.shape, r.shape)
    m = np.zeros((r.shape[0], 4, 4))
    m[:, 0, 0] = 1.0
    m[:, 1:, 1:] = quat.to_matrix(quat.inv(r))
    poses = np.broadcast_to(q, shape).reshape(math.prod(shape[:-2]), *shape[-2:])
    return np.matmul(m, poses.transpose(1, 2, 0)).transpose(2, 0, 1).reshape(shape)


def _rest_to_bvh(rest: np.ndarray, conversion: np.ndarray) -> np.ndarray:
    """Per joint r = C^T M [J, 4]: both conversions are one conjugation, L = r B r^-1."""
    return quat.inv_mul(quat.from_matrix(conversion), rest)


def pose_location_to_translation(rest: np.ndarray, head: np.ndarray, location: np.ndarray,
                                 conversion: np.ndarray, scale: float) -> np.ndarray:
    """BVH translations [T, J, 3] = (h + C^T M p) / scale from rest rotations M [J, 4], rest heads
    relative to the parent h [J, 3] (Blender space, before C), pose locations p [T, J, 3]."""
    moved = quat.mul_vec(rest, location) @ conversion
    return (head + moved) / scale


def translation_to_pose_location(rest: np.ndarray, head: np.ndarray, translation: np.ndarray,
                                 conversion: np.ndarray, scale: float) -> np.ndarray:
    """Pose locations p = M^T C (scale t - h), the inverse of `pose_location_to_translation`."""
    return quat.mul_vec(quat.inv(rest), (translation * scale - head) @ conversion.T)


def pose_matrices_to_local(pose: np.ndarray, rest: np.ndarray, parents: np.ndarray | list[int],
                           conversion: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(BVH local rotations [T, J, 4], translations [T, J, 3]) from armature-space pose matrices
    [T, J, 4, 4] (`pose_bone.matrix`, what Blender shows) and rest matrices [J, 4, 4]
    (`bone.matrix_local`), for joints under `parents` (any tree: a joint's parent need not be its
    bone's parent, as when controls sit between deform bones).

    A bone's world turn from rest is W = P M^T (P, M its pose and rest rotations); in BVH axes
    that is the joint's global rotation G = C^T P M^T C (for a chain of plain bones it is the
    product of the `pose_to_local` rotations down the chain). Then L = G_parent^-1 G and
    t = G_parent^-1 C^T (head - head_parent) / scale; a top joint's t is C^T head / scale. Each
    matrix stands for its nearest rotation (the polar factor): scale in it (stretchy bones) is left
    out, and so is the drift of Blender's float32 IK solutions (off orthogonal by up to 4e-5).
    """
    pose = np.asarray(pose, dtype=np.float64)
    rest = np.asarray(rest, dtype=np.float64)
    up = np.asarray(parents, dtype=np.int64)
    turn = nearest_rotation(pose[..., :3, :3])
    axes_m = nearest_rotation(rest[:, :3, :3])
    c = quat.from_matrix(conversion)
    world = quat.mul_inv(quat.normalize(quat.from_matrix(turn)), quat.normalize(quat.from_matrix(axes_m)))
    glob = quat.mul(quat.inv_mul(c, world), c)
    heads = pose[..., :3, 3] @ conversion / scale
    top = up < 0
    above = np.maximum(up, 0)
    local = np.where(top[:, None], glob, quat.inv_mul(glob[..., above, :], glob))
    step = np.where(top[:, None], heads, heads - heads[..., above, :])
    shift = np.where(top[:, None], step, quat.mul_vec(quat.inv(glob[..., above, :]), step))
    return quat.normalize(local), shift


def nearest_rotation(m: np.ndarray) -> np.ndarray:
    """[..., 3, 3] the rotation nearest each matrix (the polar factor U V^T of its SVD).

    Higham's scaled Newton iteration X <- (g X + X^-T / g) / 2, X^-T from the cofactors, on
    whole arrays of each entry, reaches the polar factor in a few steps (a batched SVD solves one
    small LAPACK problem per matrix: ~10x slower on a Rigify read). Matrices that mirror, are
    (near) singular, or do not settle take the SVD."""
    m = np.asarray(m, dtype=np.float64)
    shape = m.shape
    flat = m.reshape(-1, 3, 3)
    x = np.ascontiguousarray(flat.transpose(1, 2, 0))  # [3, 3, N]: each entry one array
    cof = np.empty_like(x)
    size = (x * x).sum(axis=(0, 1))
    hard = ~(_cofactors(x, cof) > 1e-9 * size ** 1.5)  # mirroring, singular or not finite
    if hard.any():
        x[:, :, hard] = np.eye(3)[:, :, None]
    scaled = True
    for _ in range(40):
        det = _cofactors(x, cof)
        cof /= det  # X^-T
        if scaled:
            g = np.sqrt(np.sqrt((cof * cof).sum(axis=(0, 1)) / (x * x).sum(axis=(0, 1))))
            nxt = 0.5 * (g * x + cof / g)
        else:
            nxt = 0.5 * (x + cof)
        change = float(np.abs(nxt - x).max(initial=0.0))
        x = nxt
        if change < 1e-2:
            scaled = False  # near the answer plain Newton converges quadratically
        if change < 1e-15:
            break
    else:
        hard |= ~(np.abs(np.einsum("kin,kjn->ijn", x, x) - np.eye(3)[:, :, None]).max(axis=(0, 1)) < 1e-13)
    out = x.transpose(2, 0, 1)
    if hard.any():
        out[hard] = _nearest_rotation_svd(flat[hard])
    return out.reshape(shape)


def _cofactors(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Cofactor matrices of [3, 3, N] matrices into `out` (rows: r1 x r2, r2 x r0, r0 x r1); their
    determinants [N]."""
    for i in range(3):
        a, b = x[(i + 1) % 3], x[(i + 2) % 3]
        out[i, 0] = a[1] * b[2] - a[2] * b[1]
        out[i, 1] = a[2] * b[0] - a[0] * b[2]
        out[i, 2] = a[0] * b[1] - a[1] * b[0]
    return (x[0] * out[0]).sum(axis=0)


def _nearest_rotation_svd(m: np.ndarray) -> np.ndarray:
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    flip = np.linalg.det(r) < 0.0  # a mirroring matrix: its nearest proper rotation
    if flip.any():
        u[flip, :, -1] *= -1.0
        r = u @ vt
    return r


def from_blender_euler(angles: np.ndarray, mode: str) -> np.ndarray:
    """Quaternions from Blender Euler angles [..., 3] (x, y, z radians) in rotation mode `mode`."""
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler mode: {mode!r}")
    order = mode[::-1]
    ordered = np.stack([angles[..., "XYZ".index(a)] for a in order], axis=-1)
    return quat.from_euler(ordered, order)


def to_blender_euler(q: np.ndarray, mode: str, axis: int = 0) -> np.ndarray:
    """Blender Euler angles [..., 3] (x, y, z) for rotation mode `mode`, continuous along `axis`
    (time), as Blender's importer keys them (`to_euler(mode, previous)`).

    Every rotation has two Euler solutions, (a, b, c) and (a + pi, pi - b, c + pi) in the order's
    own axes. The principal one keeps the middle angle within +-pi/2, so a motion through gimbal
    lock makes it jump; each frame takes whichever solution is nearer the previous frame's, then
    angles are unwrapped so that keys never jump 360 degrees.
    """
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler mode: {mode!r}")
    order = mode[::-1]
    ordered = np.moveaxis(quat.to_euler(q, order), axis, 0)
    other = ordered + np.array([np.pi, 0.0, np.pi])
    other[..., 1] = np.pi - ordered[..., 1]
    other = _wrapped(other)
    # The first frame takes the solution nearer zero (as Blender's importer, which starts from a
    # zero Euler). After that, the other solution of a frame is nearer the previous frame exactly
    # when the solution in use switches, so each frame's choice is the parity of the switches
    # up to it.
    previous = np.concatenate([np.zeros_like(ordered[:1]), ordered[:-1]])
    switch = _wrapped_distance(other, previous) < _wrapped_distance(ordered, previous)
    flip = (np.cumsum(switch, axis=0) & 1).astype(bool)
    ordered = np.where(flip[..., None], other, ordered)
    if len(ordered) > 1:
        ordered = np.unwrap(ordered, axis=0)
    xyz = np.stack([ordered[..., order.index(a)] for a in "XYZ"], axis=-1)
    return np.moveaxis(xyz, 0, axis)


def _wrapped(angles: np.ndarray) -> np.ndarray:
    """Angles wrapped into [-pi, pi)."""
    return (angles + np.pi) % (2 * np.pi) - np.pi


def _wrapped_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum over the last axis of |a - b|, each difference wrapped into [-pi, pi)."""
    return np.abs(_wrapped(a - b)).sum(axis=-1)


def from_blender_axis_angle(values: np.ndarray) -> np.ndarray:
    """Quaternions from Blender axis-angle values [..., 4] (angle, x, y, z)."""
    axis = values[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    unit = np.where(norm > 0, axis / np.where(norm > 0, norm, 1.0), np.array([0.0, 1.0, 0.0]))
    return quat.from_scaled_angle_axis(unit * values[..., :1])


def _within_one_ulp(a: np.ndarray, b: np.ndarray) -> bool:
    """mathutils' Vector ==: float32 components at most one unit in the last place apart."""
    ordered = [x.astype(np.float32).view(np.int32).astype(np.int64) for x in (a, b)]
    # Negative floats' bit patterns, mirrored below zero: integer order is then float order.
    ai, bi = (np.where(x < 0, -(x + 2**31), x) for x in ordered)
    return bool((np.abs(ai - bi) <= 1).all())


def _rest_points(clip: Clip, s: float, legacy_multi_child_tail: bool, dtype: type,
                 short: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """(head_local, head_world, tail_local, tail_world, short) as `io_anim_bvh` reads them, in
    `dtype` arithmetic (float32 is Blender's own, operation for operation); `short`: which
    bones get lengthened by s / 10 (decided here when not given)."""
    J, parents = clip.n_joints, clip.parents
    scale = dtype(s)
    head_local = (scale * clip.offsets.astype(dtype)).astype(dtype)
    head_world = head_local.copy()
    for j in range(J):
        if parents[j] >= 0:
            head_world[j] = head_world[parents[j]] + head_local[j]
    kids = skeleton.children(parents)
    tail_world: np.ndarray = np.full((J, 3), np.nan, dtype=dtype)
    tail_local: np.ndarray = np.full((J, 3), np.nan, dtype=dtype)
    # The last End Site of a joint wins, as when the importer reads them in order.
    for p, offset in zip(clip.end_parents.tolist(), clip.end_offsets.astype(dtype), strict=True):
        tail_world[p] = head_world[p] + scale * offset
        tail_local[p] = head_local[p] + scale * offset
    for j in range(J):
        if not np.isnan(tail_world[j, 0]):
            continue
        if not kids[j]:
            tail_world[j] = head_world[j]
            tail_local[j] = head_local[j]
        elif len(kids[j]) == 1:
            tail_world[j] = head_world[kids[j][0]]
            tail_local[j] = head_local[j] + head_local[kids[j][0]]
        else:
            # Summed in order, then times the reciprocal, as the importer's Vector maths.
            world: np.ndarray = np.zeros(3, dtype=dtype)
            local: np.ndarray = np.zeros(3, dtype=dtype)
            for k in kids[j]:
                world, local = world + head_world[k], local + head_local[k]
            inverse = dtype(1.0 / len(kids[j]))
            tail_world[j] = world * inverse
            tail_local[j] = local * inverse if legacy_multi_child_tail else head_local[j] + local * inverse
    # Reading: "zero length node", pushed up along +Y by scale / 10 (Python float maths).
    if short is None:
        short = np.linalg.norm((tail_local - head_local).astype(np.float64), axis=-1) <= 0.001 * s
    tail_local[short, 1] = (tail_local[short, 1].astype(np.float64) + s / 10).astype(dtype)
    tail_world[short, 1] = (tail_world[short, 1].astype(np.float64) + s / 10).astype(dtype)
    return head_local, head_world, tail_local, tail_world, short


def rest_bones(clip: Clip, global_scale: float = 1.0, *,
               legacy_multi_child_tail: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(heads [J, 3], tails [J, 3], connected [J] bool) of the bones Blender's BVH importer builds
    for `clip`, in BVH axes before the axis conversion (scaled by `global_scale`).

    Follows `io_anim_bvh` rule for rule, quirks included, so an armature built from these matches
    Blender's: a tail is the End Site, else the only child's head, else the mean of the children's
    heads; a bone shorter than 0.001 x scale is lengthened along +Y (by scale / 10 when flagged
    while reading, then by the parent's length or the mean bone length when building). Blender
    before 4.5 measured a branching joint's length against the mean of its children's offsets
    alone (`legacy_multi_child_tail`).
    """
    s = float(global_scale)
    J = clip.n_joints
    parents = clip.parents
    # Blender decides which bones are too short on its float32 vectors, with the scale of a float32
    # operator property: near the 0.001 thresholds (a zero-length joint lengthened by scale / 10 at
    # scale 0.01) float64 decides otherwise.
    head_local32, heads32, tail_local32, tails32, short = _rest_points(
        clip, float(np.float32(s)), legacy_multi_child_tail, np.float32)
    head_local, head_world, tail_local, tail_world, _ = _rest_points(
        clip, s, legacy_multi_child_tail, np.float64, short)
    lengths = np.linalg.norm(head_local - tail_local, axis=-1)
    nonzero = lengths[lengths != 0]
    mean_length = float(nonzero.mean()) if nonzero.size else 0.1
    # Building: a bone still under 0.001 (absolute) borrows its parent's extent or the mean length.
    heads, tails = head_world, tail_world.copy()
    zero_area = np.linalg.norm((heads32 - tails32).astype(np.float64), axis=-1) < 0.001
    for j in np.nonzero(zero_area)[0].tolist():
        parent = int(parents[j])
        if parent >= 0:
            ofs = head_local[parent] - tail_local[parent]
            if np.linalg.norm(ofs):
                tails[j] = tails[j] - ofs
                continue
        tails[j, 1] += mean_length
    has_loc = np.array([any(c in POSITION_CHANNELS for c in ch) for ch in clip.channels])
    connected = np.zeros(J, dtype=bool)
    for j in range(J):
        p = parents[j]
        if p >= 0 and not has_loc[j] and not zero_area[p]:
            connected[j] = _within_one_ulp(tail_local32[p], head_local32[j])
    return heads, tails, connected
