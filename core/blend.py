"""Blend primitives: pose blends, joint masks and additive layers, over whole clips or bare arrays.

Conventions shared by every function here:

- Poses are local rotations `[..., J, 4]` and local translations `[..., J, 3]`; a leading time
  axis makes them clips `[T, J, ...]`.
- A blend weight is a scalar or an array over the leading axes (e.g. `[T]`, one per frame);
  0 gives the first pose, 1 the second, exactly (the inputs are returned, not recomputed).
- A mask is a weight per joint, `[J]` floats in [0, 1] (None: all ones), multiplied into the blend
  weight: a joint with mask 0 keeps the first pose. `mask()` builds them from joint names and
  from presets found in the hierarchy.
- Rotations blend by slerp with hemisphere alignment (the shortest path) unless a function says
  it keeps the path's side over time (`slerp_via`); translations blend linearly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import quat, skeleton
from .clip import Clip

Array = npt.NDArray[np.float64]

SPACES = ("local", "parent", "world")
PRESETS = ("ALL", "LOWER_BODY", "UPPER_BODY", "FINGERS")


# -- pose blending -------------------------------------------------------------------------------


def _exact_ends(out: Array, a: Array, b: Array, t: Array) -> Array:
    """`out` with the inputs themselves where t == 0 (a) and t == 1 (b); t is `out.shape[:-1]`."""
    te = t[..., None]
    return np.where(te == 0.0, a, np.where(te == 1.0, b, out))


def _joint_weights(weight: npt.ArrayLike, mask: npt.ArrayLike | None, lead: tuple[int, ...],
                   n_joints: int) -> Array:
    """Blend weight per frame times mask per joint, broadcast to `[*lead, J]`."""
    w = np.asarray(weight, dtype=np.float64)
    m = np.ones(n_joints) if mask is None else np.asarray(mask, dtype=np.float64)
    if m.shape != (n_joints,):
        raise ValueError(f"mask has shape {list(m.shape)}, expected [{n_joints}] (one weight per joint)")
    try:
        return np.broadcast_to(w[..., None] * m, (*lead, n_joints))
    except ValueError:
        raise ValueError(f"weight of shape {list(w.shape)} does not broadcast over the pose's leading "
                         f"axes {list(lead)}") from None


def lerp(a: npt.ArrayLike, b: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """a + t (b - a) over `[..., n]` with t `[...]`; exactly a at t == 0 and b at t == 1."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    return _exact_ends(a + t[..., None] * (b - a), a, b, t)


def slerp(q0: npt.ArrayLike, q1: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """Shortest-path slerp `[..., 4]` (hemisphere aligned); exactly q0 at t == 0 and q1 at t == 1."""
    q0, q1 = np.asarray(q0, dtype=np.float64), np.asarray(q1, dtype=np.float64)
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), np.broadcast_shapes(q0.shape, q1.shape)[:-1])
    return _exact_ends(quat.slerp(q0, q1, t), q0, q1, t)


def via_path(q0: npt.ArrayLike, q1: npt.ArrayLike, prev: npt.ArrayLike | None = None) -> Array:
    """Rotation vectors `[T, ..., 3]` from q0 to q1 over time (axis 0), kept on one side.

    Each frame's v_t is a rotation vector (axis * angle, radians) of inv(q0_t) q1_t, so
    q1_t = q0_t exp(v_t / 2) up to sign. Of the rotation's equivalent vectors n (angle + 2 pi k),
    v_t is the one continuous with v_{t-1}: the angle may pass pi, and 2 pi, rather than jump to
    the other side as the shortest path does when the difference crosses pi (a fast-spinning
    source). Frame 0 takes the shortest path (|v_0| <= pi), or, given `prev` `[..., 3]` (the
    v of the frame before, e.g. `via_path(...)[-1]` of the previous chunk), the one nearest it.
    """
    q0, q1 = np.asarray(q0, dtype=np.float64), np.asarray(q1, dtype=np.float64)
    if np.broadcast_shapes(q0.shape, q1.shape)[:-1] == ():
        raise ValueError("via_path needs a time axis first: pass [T, ..., 4] (one frame: [1, ..., 4])")
    v = quat.to_scaled_angle_axis(quat.hemi(quat.inv_mul(q0, q1)))
    if prev is not None:
        v = np.concatenate([np.broadcast_to(np.asarray(prev, dtype=np.float64), v[:1].shape), v])
    theta = np.linalg.norm(v, axis=-1)
    # Orient each axis like the one before (a sign parity, as in quat.unroll), so the signed angle
    # along it is continuous up to whole turns; np.unwrap then removes the whole turns.
    flip = np.sum(v[1:] * v[:-1], axis=-1) < 0.0
    sign = np.ones(theta.shape)
    sign[1:] = 1.0 - 2.0 * (np.cumsum(flip, axis=0) % 2)
    axis = sign[..., None] * v / np.where(theta > 0.0, theta, 1.0)[..., None]
    angle = np.unwrap(sign * theta, axis=0, period=2.0 * np.pi)
    path = axis * angle[..., None]
    return path[1:] if prev is not None else path


def slerp_via(q0: npt.ArrayLike, q1: npt.ArrayLike, t: npt.ArrayLike,
              prev: npt.ArrayLike | None = None) -> Array:
    """Blends `[T, ..., 4]` from q0 toward q1 by t over time (axis 0), the path kept on the side it
    was on at the previous frame: q0_t exp(t_t v_t / 2) with v = via_path(q0, q1, prev).

    Where the shortest path would flip hemisphere mid-blend (the source spins past the half
    turn from the target), this keeps going the way it went, so the result never jumps. t is a
    scalar, `[T]` or `[T, ...]`, aligned from the time axis (`[T]` weights every joint of a
    frame alike); exactly q0 at t == 0 and q1 at t == 1. Equals shortest-path slerp as long as
    the difference stays under a half turn. To continue in chunks, pass the previous chunk's
    `via_path(...)[-1]` as prev.
    """
    q0, q1 = np.asarray(q0, dtype=np.float64), np.asarray(q1, dtype=np.float64)
    path = via_path(q0, q1, prev)
    t = np.asarray(t, dtype=np.float64)
    # Aligned from the time axis: [T] weights apply to every joint of their frame.
    t = np.broadcast_to(t.reshape(t.shape + (1,) * (path.ndim - 1 - t.ndim)), path.shape[:-1])
    out = quat.mul(q0, quat.from_scaled_angle_axis(t[..., None] * path))
    return _exact_ends(out, np.broadcast_to(q0, out.shape), np.broadcast_to(q1, out.shape), t)


def blend_poses(rot_a: npt.ArrayLike, pos_a: npt.ArrayLike, rot_b: npt.ArrayLike, pos_b: npt.ArrayLike,
                weight: npt.ArrayLike, mask: npt.ArrayLike | None = None,
                continuous: bool = False) -> tuple[Array, Array]:
    """Blend poses a -> b: rotations `[..., J, 4]` by slerp, translations `[..., J, 3]` by lerp.

    weight is a scalar or broadcasts over the leading axes (`[T]` for clips); the weight used at
    joint j is weight * mask[j]. `continuous=True` keeps each joint's path on its previous
    frame's side (`slerp_via`, axis 0 is time) instead of the shortest path per frame.
    Returns (rotations, translations) of the broadcast shape.
    """
    rot_a, rot_b = np.asarray(rot_a, dtype=np.float64), np.asarray(rot_b, dtype=np.float64)
    pos_a, pos_b = np.asarray(pos_a, dtype=np.float64), np.asarray(pos_b, dtype=np.float64)
    shape = np.broadcast_shapes(rot_a.shape, rot_b.shape)
    if continuous and len(shape) < 3:
        raise ValueError(f"a continuous blend needs a time axis: rotations [T, J, 4], not {list(shape)}")
    t = _joint_weights(weight, mask, shape[:-2], shape[-2])
    rot_a, rot_b = np.broadcast_to(rot_a, shape), np.broadcast_to(rot_b, shape)
    rot = slerp_via(rot_a, rot_b, t) if continuous else slerp(rot_a, rot_b, t)
    return rot, lerp(pos_a, pos_b, t)


def _frames(*clips: Clip) -> int:
    """The frame count clips broadcast to (a one-frame clip is a pose that fits any length)."""
    counts = {c.n_frames for c in clips} - {1}
    if len(counts) > 1:
        raise ValueError(f"clips have {sorted(c.n_frames for c in clips)} frames; they must match or "
                         "one must be a single pose")
    return counts.pop() if counts else 1


def blend(a: Clip, b: Clip, weight: npt.ArrayLike, mask: npt.ArrayLike | None = None,
          continuous: bool = False) -> Clip:
    """Clip a blended toward b by weight (scalar or `[T]` per frame) and mask `[J]`, every joint
    including the root's local motion; frame times, fps and events are a's.

    The clips share a skeleton (SkeletonMismatch otherwise) and frame count; b may be a single
    frame (a pose to blend toward). See `blend_poses` for `continuous`.
    """
    a.check_compatible(b)
    n = _frames(a, b)
    if a.n_frames != n:
        raise ValueError(f"the first clip sets the timing: it has {a.n_frames} frames, the second {n}")
    rot, pos = blend_poses(a.rotations, a.positions, b.rotations, b.positions,
                           np.asarray(weight, dtype=np.float64), mask, continuous)
    return a.replace(rotations=np.ascontiguousarray(rot), positions=np.ascontiguousarray(pos))


def blend_many(rotations: Sequence[npt.ArrayLike], positions: Sequence[npt.ArrayLike],
               weights: npt.ArrayLike, masks: npt.ArrayLike | None = None) -> tuple[Array, Array]:
    """Weighted blend of N poses `[..., J, 4]` / `[..., J, 3]` (same shapes): (rotations, positions).

    weights is `[N]` or `[N, ...]` over the poses' leading axes (e.g. `[N, T]`), non-negative and
    normalized here; masks `[N, J]` multiply pose n's weight at joint j (None: all ones). A joint
    whose weights are all zero takes the first pose. Rotations are the weighted chordal mean
    (`quat.average`, Markley's eigenvector method: order- and sign-independent, the same as
    scipy's `Rotation.mean`); for two poses it matches slerp only at weights 0, 1/2 and 1, so
    two-pose blends use `blend_poses`. Positions are the weighted mean.
    """
    rot = np.stack([np.asarray(r, dtype=np.float64) for r in rotations])
    pos = np.stack([np.asarray(p, dtype=np.float64) for p in positions])
    n, n_joints = rot.shape[0], rot.shape[-2]
    if pos.shape[0] != n or pos.shape[:-1] != rot.shape[:-1]:
        raise ValueError(f"{n} rotation poses {list(rot.shape[1:])} and {pos.shape[0]} position poses "
                         f"{list(pos.shape[1:])} do not match")
    w = np.asarray(weights, dtype=np.float64)
    if w.shape[:1] != (n,):
        raise ValueError(f"weights has shape {list(w.shape)}; it needs one weight per pose first ({n})")
    if np.any(w < 0.0) or not np.all(np.isfinite(w)):
        raise ValueError("blend weights must be finite and non-negative")
    m = np.ones((n, n_joints)) if masks is None else np.asarray(masks, dtype=np.float64)
    if m.shape != (n, n_joints):
        raise ValueError(f"masks has shape {list(m.shape)}, expected [{n}, {n_joints}]")
    lead = rot.shape[1:-2]
    # [N, ..., J]: the weight per pose, frame and joint; m broadcasts over the leading axes.
    wj = w.reshape(w.shape + (1,) * (len(lead) + 2 - w.ndim)) * m.reshape(n, *(1,) * len(lead), n_joints)
    wj = np.broadcast_to(wj, rot.shape[:-1]).copy()
    total = wj.sum(axis=0)
    wj[0] = np.where(total > 0.0, wj[0], 1.0)
    wj /= wj.sum(axis=0)
    return quat.average(rot, wj, axis=0), np.sum(wj[..., None] * pos, axis=0)


# -- joint masks ---------------------------------------------------------------------------------


def lower_body(clip: Clip) -> np.ndarray:
    """bool `[J]`: the root (and any joints above it), the joints down to where the legs branch,
    and everything below each leg's first joint (CMU: Hips and LHipJoint .. LeftToeBase, ...)."""
    parents = clip.parents
    lower = np.zeros(clip.n_joints, dtype=bool)
    lower[skeleton.chain(parents, clip.root)] = True
    for leg in clip.legs() or ():
        lower[skeleton.chain(parents, leg[0])] = True
        lower |= skeleton.descendants(parents, leg[0])
    return lower


def hands(clip: Clip) -> list[int]:
    """Joints where an arm splits into finger chains (CMU: LeftHand, RightHand; the 131 takes:
    LeftWrist, RightWrist), ascending.

    A hand is an upper-body joint with two or more children, each starting a chain that never
    branches again, and neither the head nor on the path to it or below it (eyes and jaw could
    look like fingers otherwise). The head is the body map's, read from the animated pose: a rest
    pose need not stand (Bandai's bones lie along +X), so its highest tip is the head's only
    when the body map finds none. A skeleton whose arms end in a single chain has no hands here
    (and no FINGERS).
    """
    parents = clip.parents
    kids = skeleton.children(parents)
    upper = ~lower_body(clip)
    branches = np.array([len(k) > 1 for k in kids])
    # Bottom-up: does anything at or below j branch? Children come after parents in BVH order.
    below = branches.copy()
    for j in range(clip.n_joints - 1, 0, -1):
        if below[j] and parents[j] >= 0:
            below[parents[j]] = True
    top = clip.body.head
    if top is None:
        rest = skeleton.rest_positions(parents, clip.offsets)
        tips = [(float((rest[p] + e) @ clip.up), int(p)) for p, e in zip(clip.end_parents, clip.end_offsets,
                                                                         strict=True) if upper[p]]
        tips += [(float(rest[j] @ clip.up), j) for j in range(clip.n_joints) if upper[j] and not kids[j]]
        if not tips:
            return []
        top = max(tips)[1]
    head = set(skeleton.chain(parents, top))
    face = set(np.flatnonzero(skeleton.descendants(parents, top)).tolist())
    if not face & {j for arm in clip.body.arms.values() for j in arm}:
        head |= face  # eyes and jaw, unless the arms hang below that joint too
    return [j for j in range(clip.n_joints)
            if upper[j] and len(kids[j]) > 1 and j not in head and not any(below[c] for c in kids[j])]


def check_mask(mask: npt.ArrayLike | None, n_joints: int) -> Array:
    """A mask as `[J]` float64 weights in [0, 1] (None: all ones); ValueError otherwise."""
    m = np.ones(n_joints) if mask is None else np.asarray(mask, dtype=np.float64)
    if m.shape != (n_joints,):
        raise ValueError(f"mask has shape {list(m.shape)}, expected [{n_joints}] (one weight per joint)")
    if not np.all((m >= 0.0) & (m <= 1.0)):
        raise ValueError("mask weights must be in [0, 1]")
    return m


def mask_preset(clip: Clip, name: str) -> Array:
    """`[J]` 0/1 mask of a preset found from the hierarchy:

    ALL: every joint. LOWER_BODY: `lower_body` (root, legs). UPPER_BODY: the rest (spine, head,
    arms). FINGERS: fingers and thumbs, the chains below each of `hands` (not the hands).
    """
    if name == "ALL":
        return np.ones(clip.n_joints)
    if name == "LOWER_BODY":
        return lower_body(clip).astype(np.float64)
    if name == "UPPER_BODY":
        return (~lower_body(clip)).astype(np.float64)
    if name == "FINGERS":
        out = np.zeros(clip.n_joints)
        for hand in hands(clip):
            out[skeleton.descendants(clip.parents, hand)] = 1.0
            out[hand] = 0.0
        return out
    raise ValueError(f"unknown mask preset {name!r}; presets are {', '.join(PRESETS)}")


def mask(clip: Clip, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
         weights: Mapping[str, float] | Sequence[float] | None = None,
         preset: str | None = None) -> Array:
    """`[J]` joint weights in [0, 1] from joint names; a name stands for the joint and everything
    below it. Names may also be presets (`PRESETS`), a joint of that name taking precedence.

    Start from `preset` if given, else from all ones when `include` is None, else zeros. Each
    included name sets its joints to its weight (`weights[name]`, or `weights[i]` for the i-th
    include; default 1), presets first, then joints from the top down, so a deeper name
    overrides its ancestor's weight. Excluded names then set their joints to 0.
    """
    if preset is not None:
        out = mask_preset(clip, preset)
    else:
        out = np.ones(clip.n_joints) if include is None else np.zeros(clip.n_joints)
    include = list(include or [])
    if isinstance(weights, Mapping):
        unknown = set(weights) - set(include)
        if unknown:
            raise ValueError(f"weights given for names not included: {sorted(unknown)}")
        values = [float(weights.get(n, 1.0)) for n in include]
    elif weights is not None:
        values = [float(x) for x in weights]
        if len(values) != len(include):
            raise ValueError(f"{len(values)} weights for {len(include)} included names")
    else:
        values = [1.0] * len(include)
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"mask weights must be in [0, 1], got {values}")
    picked = [(_select(clip, n), v, n) for n, v in zip(include, values, strict=True)]
    # Presets (key -1) before joints, joints by index: parents come before their children.
    picked.sort(key=lambda item: clip.names.index(item[2]) if item[2] in clip.names else -1)
    for joints, value, _ in picked:
        out[joints] = value
    for n in exclude or []:
        out[_select(clip, n)] = 0.0
    return out


def _select(clip: Clip, name: str) -> np.ndarray:
    """bool `[J]` for a joint name (with its descendants) or a preset name."""
    if name in clip.names:
        return skeleton.descendants(clip.parents, clip.names.index(name))
    if name in PRESETS:
        return mask_preset(clip, name) > 0.0
    raise ValueError(f"no joint or preset named {name!r} (presets: {', '.join(PRESETS)}; "
                     f"joints: {', '.join(clip.names)})")


# -- additive layers -----------------------------------------------------------------------------


def _toward(q: Array, w: Array) -> Array:
    """The rotation from identity toward q `[..., 4]` by fraction w `[...]`, shortest path;
    exactly the identity at w == 0 and q at w == 1."""
    out = quat.exp(w[..., None] * quat.log(quat.hemi(q)))
    return _exact_ends(out, quat.identity(out.shape[:-1]), np.broadcast_to(q, out.shape), w)


def _check_space(space: str) -> None:
    if space not in SPACES:
        raise ValueError(f"unknown additive space {space!r}; spaces are {', '.join(SPACES)}")


def _pose(clip: Clip, ref: Clip | int) -> Clip:
    if isinstance(ref, Clip):
        clip.check_compatible(ref)
        _frames(clip, ref)
        return ref
    frame = int(ref)
    if not -clip.n_frames <= frame < clip.n_frames:
        raise IndexError(f"reference frame {frame} is outside the clip's {clip.n_frames} frames")
    frame %= clip.n_frames
    return clip[frame:frame + 1]


def additive_extract(clip: Clip, ref: Clip | int, space: str = "local") -> Clip:
    """The additive layer taking `ref` to `clip`, as a Clip on the same skeleton and frames.

    `ref` is a clip on the same skeleton with the same frame count, a one-frame clip, or a frame
    index of `clip` (a reference pose). Its rotations hold q_add per frame and joint and its
    positions the translation deltas p_src - p_ref: a layer for `additive_apply`, not a pose.
      local:  q_add = inv(q_ref) q_src (local rotations; applied on the right)
      parent: q_add = q_src inv(q_ref) (local rotations; applied on the left, in the parent frame)
      world:  q_add = G_src inv(G_ref) (global rotations from FK; applied in the world frame)
    """
    _check_space(space)
    ref = _pose(clip, ref)
    if space == "local":
        rot = quat.inv_mul(ref.rotations, clip.rotations)
    elif space == "parent":
        rot = quat.mul_inv(clip.rotations, ref.rotations)
    else:
        rot = quat.mul_inv(clip.fk()[0], ref.fk()[0])
    pos = clip.positions - ref.positions
    n = _frames(clip, ref)
    rot, pos = np.broadcast_to(rot, (n, clip.n_joints, 4)), np.broadcast_to(pos, (n, clip.n_joints, 3))
    timing = clip if clip.n_frames == n else ref
    return timing.replace(rotations=np.ascontiguousarray(rot), positions=np.ascontiguousarray(pos),
                          name=f"{clip.name}.additive" if clip.name else "additive")


def additive_apply(base: Clip, add: Clip, weight: npt.ArrayLike = 1.0, space: str = "local",
                   mask: npt.ArrayLike | None = None) -> Clip:
    """`base` with the additive layer `add` (from `additive_extract` in the same space) on top.

    Weight w = weight (scalar or `[T]`) * mask[j] scales each joint's layer, the rotation by
    slerp from the identity (shortest path), the translation linearly:
      local:  q = q_base slerp(1, q_add, w)
      parent: q = slerp(1, q_add, w) q_base
      world:  G = slerp(1, q_add, w) G_base on global rotations, then q = inv(G_parent) G with the
              parent's new global rotation; a joint with w == 0 under a moved parent therefore
              keeps its world rotation, not its local one.
      translations: p = p_base + w (p_src - p_ref).
    A one-frame base or layer is a pose that fits the other's frames. w == 0 returns the base's
    own values exactly (in world space: where the parent's w is 0 too).
    """
    _check_space(space)
    base.check_compatible(add)
    n = _frames(base, add)
    J = base.n_joints
    w = _joint_weights(weight, mask, (n,), J)
    rot_base = np.broadcast_to(base.rotations, (n, J, 4))
    q_add = np.broadcast_to(add.rotations, (n, J, 4))
    step = _toward(q_add, w)
    if space == "local":
        rot = quat.mul(rot_base, step)
    elif space == "parent":
        rot = quat.mul(step, rot_base)
    else:
        parents = base.parents
        top = parents < 0
        glob = quat.mul(step, quat.fk(rot_base, np.broadcast_to(base.positions, (n, J, 3)), parents)[0])
        rot = np.where(top[:, None], glob, quat.inv_mul(glob[:, np.maximum(parents, 0)], glob))
        # Where nothing moved (the joint and its parent both at w == 0) keep the base exactly
        # rather than its FK round trip.
        still = (w == 0.0) & (top | (w[:, np.maximum(parents, 0)] == 0.0))
        rot = np.where(still[..., None], rot_base, rot)
    # Adding w * delta, not lerping toward base + delta: exact at w == 0, no rounding of p_base.
    pos = base.positions + w[..., None] * add.positions
    timing = base if base.n_frames == n else add
    return timing.replace(rotations=np.ascontiguousarray(rot), positions=np.ascontiguousarray(pos),
                          name=base.name)
