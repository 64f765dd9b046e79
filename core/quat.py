"""Quaternions as (w, x, y, z) float64 arrays of shape `[..., 4]`, Hamilton product, column vectors.

`mul(q, p)` rotates by p then q: R(mul(q, p)) = R(q) R(p). Every function broadcasts over the
leading dimensions, so one call handles a pose `[J, 4]`, a clip `[T, J, 4]` or any batch.
Euler angles are radians and intrinsic, in BVH channel order: order "ZXY" with angles
(a0, a1, a2) is Rz(a0) Rx(a1) Ry(a2), the same as scipy's uppercase `from_euler("ZXY", ...)`.
Inputs are assumed to be unit quaternions unless a docstring says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]

_AXES = {"X": 0, "Y": 1, "Z": 2}

# Below this sine of the half angle the series forms are exact to double precision, and they
# avoid 0/0 at the identity.
_SMALL = 1e-8

# |cos(middle)| (Tait-Bryan) or |sin(middle)| (proper Euler) under which to_euler treats the
# pose as gimbal-locked. Matrix entries carry ~1e-16 noise, so exact-lock inputs land well
# below it; the lock branch's rebuild error is bounded by pi times this value.
_LOCK = 1e-14

# |u + v| under which between() treats u and v as opposite: the shortest arc's axis is then
# ill-conditioned (axis error ~ 1e-16 / |u + v|), so balance it against the fallback's error.
OPPOSITE = 1e-8


def _f(x: npt.ArrayLike) -> Array:
    return np.asarray(x, dtype=np.float64)


def _parts(x: Array) -> tuple[Array, ...]:
    """The components of `[..., n]` as n views (cheaper than np.moveaxis on small arrays)."""
    return tuple(x[..., i] for i in range(x.shape[-1]))


def mul_components(
    aw: Array, ax: Array, ay: Array, az: Array, bw: Array, bx: Array, by: Array, bz: Array
) -> tuple[Array, Array, Array, Array]:
    """Hamilton product on unpacked components (w, x, y, z) of a and b."""
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def mul_vec_components(
    qw: Array, qx: Array, qy: Array, qz: Array, vx: Array, vy: Array, vz: Array
) -> tuple[Array, Array, Array]:
    """R(q) v on unpacked components: v + w t + u x t with t = 2 u x v (u = vector part of q)."""
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )


def _axis_quat(theta: Array, axis: int) -> Array:
    """[...] angles (radians) about basis axis 0/1/2 -> [..., 4]."""
    q = np.zeros((*theta.shape, 4))
    q[..., 0] = np.cos(0.5 * theta)
    q[..., 1 + axis] = np.sin(0.5 * theta)
    return q


def _parse_order(order: str) -> tuple[int, int, int]:
    if (
        not isinstance(order, str)
        or len(order) != 3
        or any(c not in _AXES for c in order)
        or order[0] == order[1]
        or order[1] == order[2]
    ):
        raise ValueError(
            f"Euler order must be 3 uppercase letters from 'XYZ' with no repeated neighbours "
            f"(intrinsic, e.g. 'ZXY'), got {order!r}"
        )
    return _AXES[order[0]], _AXES[order[1]], _AXES[order[2]]


def identity(shape: int | Sequence[int] = ()) -> Array:
    """Identity quaternions of shape `[*shape, 4]`."""
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    q = np.zeros((*shape, 4))
    q[..., 0] = 1.0
    return q


def normalize(q: npt.ArrayLike, eps: float = 1e-12, out: Array | None = None) -> Array:
    """Unit-length along the last axis (any `[..., n]`); norms below eps divide by eps instead.
    `out`: where to write (may be q itself)."""
    q = _f(q)
    # einsum sums the squares without linalg.norm's temporaries: 3x faster on [T, J, 4].
    norm = np.maximum(np.sqrt(np.einsum("...i,...i->...", q, q)), eps)[..., None]
    return q / norm if out is None else np.divide(q, norm, out=out)


def mul(q: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """Hamilton product q * p, `[..., 4]` x `[..., 4]`: rotates by p then q."""
    q, p = _f(q), _f(p)
    return np.stack(mul_components(*_parts(q), *_parts(p)), axis=-1)


def inv(q: npt.ArrayLike) -> Array:
    """Inverse of unit quaternions `[..., 4]` (the conjugate)."""
    return _f(q) * np.array([1.0, -1.0, -1.0, -1.0])


def inv_mul(q: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """inv(q) * p, `[..., 4]`: p expressed relative to q (unit q)."""
    q, p = _f(q), _f(p)
    qw, qx, qy, qz = _parts(q)
    return np.stack(mul_components(qw, -qx, -qy, -qz, *_parts(p)), axis=-1)


def mul_inv(q: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """q * inv(p), `[..., 4]`: the rotation taking p to q in the world frame (unit p)."""
    q, p = _f(q), _f(p)
    qw, qx, qy, qz = _parts(q)
    pw, px, py, pz = _parts(p)
    return np.stack(mul_components(qw, qx, qy, qz, pw, -px, -py, -pz), axis=-1)


def mul_vec(q: npt.ArrayLike, v: npt.ArrayLike) -> Array:
    """R(q) v for unit q `[..., 4]` and vectors v `[..., 3]` -> `[..., 3]`."""
    q, v = _f(q), _f(v)
    return np.stack(mul_vec_components(*_parts(q), *_parts(v)), axis=-1)


def hemi(q: npt.ArrayLike) -> Array:
    """The representative with w >= 0 of each `[..., 4]` (w == 0 is left as is)."""
    q = _f(q)
    return np.where(q[..., :1] < 0.0, -q, q)


def unroll(q: npt.ArrayLike, axis: int = 0) -> Array:
    """Flip signs along a batch axis of `[..., 4]` (e.g. time) so consecutive dots are >= 0."""
    q = _f(q)
    axis = axis % (q.ndim - 1)  # counts over the batch axes, never the component axis
    q = np.moveaxis(q, axis, 0)
    d = np.einsum("...i,...i->...", q[1:], q[:-1])
    # Each frame's sign is the parity of all flips before it, which removes the loop over frames.
    # Signs and result laid out as q is: mixing layouts (say channel-major q, as
    # armature.local_to_pose gives) makes numpy stride across memory, at 2.5x the cost.
    sign = np.ones_like(q[..., 0])
    sign[1:] -= 2.0 * (np.cumsum(d < 0.0, axis=0, dtype=np.int32) & 1)
    return np.moveaxis(np.multiply(q, sign[..., None], out=np.empty_like(q)), 0, axis)


def dot(q: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """4D dot product `[..., 4]` x `[..., 4]` -> `[...]`."""
    return np.sum(_f(q) * _f(p), axis=-1)


def angle(q: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """Rotation angle between q and p in radians, `[...]` in [0, pi], sign-insensitive."""
    d = inv_mul(q, p)
    # atan2 keeps full precision at both 0 and pi, where acos(|dot|) loses half the digits.
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))


def log(q: npt.ArrayLike) -> Array:
    """Log map `[..., 4]` -> `[..., 3]` = axis * angle / 2 (half angle in [0, pi]; log(-1) = 0)."""
    q = _f(q)
    v = q[..., 1:]
    w = q[..., 0]
    s = np.linalg.norm(v, axis=-1)
    w_safe = np.where(w > 0.0, w, 1.0)
    # atan(s/w)/s = (1 - s^2/(3 w^2)) / w + O(s^4): exact here and defined at s == 0.
    series = (1.0 - (s / w_safe) ** 2 / 3.0) / w_safe
    direct = np.arctan2(s, w) / np.where(s > 0.0, s, 1.0)
    k = np.where((s < _SMALL) & (w > 0.0), series, np.where(s > 0.0, direct, 0.0))
    return v * k[..., None]


def exp(v: npt.ArrayLike) -> Array:
    """Exp map `[..., 3]` -> unit `[..., 4]`: (cos|v|, v sin|v| / |v|); inverse of log."""
    v = _f(v)
    theta = np.linalg.norm(v, axis=-1)
    series = 1.0 - theta**2 / 6.0
    sinc = np.where(theta < _SMALL, series, np.sin(theta) / np.where(theta > 0.0, theta, 1.0))
    return np.concatenate([np.cos(theta)[..., None], v * sinc[..., None]], axis=-1)


def to_scaled_angle_axis(q: npt.ArrayLike) -> Array:
    """`[..., 4]` -> axis * angle `[..., 3]`, angle = 2 atan2(|v|, w): above pi when w < 0 (hemi first)."""
    return 2.0 * log(q)


def from_scaled_angle_axis(v: npt.ArrayLike) -> Array:
    """Axis * angle `[..., 3]` -> unit `[..., 4]` (rotation vector / exp map)."""
    return exp(0.5 * _f(v))


def angular_velocity(rotations: npt.ArrayLike, fps: float) -> Array:
    """[T - 1, ...] angular velocities (rad/s, in the parent's frame, applied on the left) between
    consecutive frames of rotations [T, ..., 4], the shorter way round."""
    rot = _f(rotations)
    return to_scaled_angle_axis(hemi(mul_inv(rot[1:], rot[:-1]))) * fps


def scaled_angle_axis_rate(v: npt.ArrayLike, w: npt.ArrayLike) -> Array:
    """Rate `[..., 3]` (per second) of the scaled angle-axis v `[..., 3]` of a rotation turning at
    angular velocity w `[..., 3]` (rad/s, applied on the left: q(t + dt) = from_saa(w dt) q(t)).

    The inverse left Jacobian of SO(3): w - v x w / 2 + c v x (v x w), c = (1 - (a/2) cot(a/2)) / a^2
    with a = |v|. It equals w only where w is parallel to v; for |v| <= pi (`hemi`), fine up to
    the half turn, singular at a whole turn.
    """
    v, w = _f(v), _f(w)
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    half = 0.5 * np.where(angle > 1e-4, angle, 1.0)
    # Below 1e-4 the series 1/12 + a^2/720 is exact to double precision; the closed form cancels.
    c = np.where(angle > 1e-4, (1.0 - half * np.cos(half) / np.sin(half)) / (4.0 * half * half),
                 1.0 / 12.0 + angle * angle / 720.0)
    vw = np.cross(v, w)
    return w - 0.5 * vw + c * np.cross(v, vw)


def nlerp(q: npt.ArrayLike, p: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """Normalized lerp along the shortest path; q, p `[..., 4]`, t `[...]` or scalar."""
    q, p = _f(q), _f(p)
    t = _f(t)[..., None]
    p = np.where(dot(q, p)[..., None] < 0.0, -p, p)
    return normalize((1.0 - t) * q + t * p)


def slerp(q: npt.ArrayLike, p: npt.ArrayLike, t: npt.ArrayLike) -> Array:
    """Spherical lerp along the shortest path; q, p `[..., 4]`, t `[...]` or scalar; t=0 gives q."""
    q, p = _f(q), _f(p)
    t = _f(t)[..., None]
    p = np.where(dot(q, p)[..., None] < 0.0, -p, p)
    # Angle between the 4D unit vectors from chord lengths: exact near 0, unlike acos(dot).
    half = 2.0 * np.arctan2(np.linalg.norm(q - p, axis=-1), np.linalg.norm(q + p, axis=-1))[..., None]
    sin_half = np.sin(half)
    close = sin_half < _SMALL
    sin_safe = np.where(close, 1.0, sin_half)
    a = np.where(close, 1.0 - t, np.sin((1.0 - t) * half) / sin_safe)
    b = np.where(close, t, np.sin(t * half) / sin_safe)
    return normalize(a * q + b * p)


# -- slerp in bulk ------------------------------------------------------------------------------


class SlerpTable(NamedTuple):
    """A loop's rotations `[N, J, 4]` made ready for many slerps between neighbouring frames:
    component-major `[4, N, J]` (each component one contiguous plane), each frame's next frame
    (frame 0 after the last) on its side and, per frame `[N, J]`, the half angle h between them,
    cot h and 1 / sin h (both 0 where h is 0)."""

    q: Array
    q_next: Array
    half: Array
    cot: Array
    csc: Array


def slerp_table(rotations: Array) -> SlerpTable:
    """The `SlerpTable` of a loop's rotations `[N, J, 4]` (see `sample_table`)."""
    q = np.ascontiguousarray(np.moveaxis(rotations, -1, 0))
    nxt = np.roll(q, -1, axis=1)
    d = np.sum(q * nxt, axis=0)
    nxt = np.where(d < 0.0, -nxt, nxt)
    d = np.minimum(np.abs(d), 1.0)
    half = np.arccos(d)
    s = _sin(half)
    safe = np.where(s > 0.0, s, 1.0)
    return SlerpTable(q, nxt, half, np.where(s > 0.0, d / safe, 0.0), np.where(s > 0.0, 1.0 / safe, 0.0))


# sin x = x (1 - x^2/3! + x^4/5! - ...): ten terms are good to 2 ulp for |x| <= pi/2 (the next is
# under 2.6e-16 there), and numpy's float64 np.sin is several times slower on common x86 builds.
# Fewer do for smaller x (the first term left out under 1e-16 of the sum): slerps between a loop's
# neighbouring frames turn by tenths of a radian.
_SIN = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(10))
_SIN_TERMS = ((0.25, 6), (0.5, 7), (1.0, 9))


def _sin(x: Array) -> Array:
    """sin x for |x| <= pi/2 (Taylor polynomial, Horner in x^2); exactly 0 at 0."""
    top = float(np.max(np.abs(x), initial=0.0))
    terms = next((k for bound, k in _SIN_TERMS if top <= bound), len(_SIN))
    x2 = x * x
    out = np.full_like(x, _SIN[terms - 1])
    for c in _SIN[terms - 2::-1]:
        out *= x2
        out += c
    out *= x
    return out


def _weights_of(x: Array, cot: Array, csc: Array) -> tuple[Array, Array]:
    """Slerp weights of q and p at x = t h in [0, pi/2] ([m, J]): sin((1 - t) h) / sin h =
    cos x - cot h sin x, and sin x / sin h. Exactly 1 and 0 at x == 0, and where h is 0 (cot = csc
    = 0). cos x is sqrt(1 - sin^2 x), good to 2e-15 up to 1.5 rad (cos x > 0.07); above that
    (half turns: flipping thumbs) it is np.cos."""
    sx = _sin(x)
    ca = sx * sx
    np.subtract(1.0, ca, out=ca)
    np.sqrt(ca, out=ca)
    if x.max(initial=0.0) > 1.5:
        wide = x > 1.5
        ca[wide] = np.cos(x[wide])
    ca -= cot * sx
    sx *= csc
    return ca, sx


def sample_table(fr: SlerpTable, i: np.ndarray, frac: Array) -> Array:
    """Slerp from frame i [m] toward the next by frac [m]: component-major `[4, m, J]`; exactly
    frame i at frac 0."""
    ca, cb = _weights_of(frac[:, None] * fr.half[i], fr.cot[i], fr.csc[i])
    out = fr.q[:, i]
    out *= ca
    nxt = fr.q_next[:, i]
    nxt *= cb
    out += nxt
    return out


def slerp_planes(q: Array, p: Array, t: Array) -> Array:
    """Shortest-path slerp of component-major `[4, m, J]` q toward p by t `[m, J]`: `slerp`'s
    result (to rounding), q itself at t == 0 and p itself at t == 1; the fast kernel for many
    joints and frames (no `[..., 4]` gathers, no np.sin over the whole array).

    sin x / sin h with x = t h from one h: the ratio stays exact near h = 0 even where acos lost
    digits (as quat.slerp's chord lengths do)."""
    d = q[0] * p[0]
    for c in (1, 2, 3):
        d += q[c] * p[c]
    flip = d < 0.0
    np.abs(d, out=d)
    np.minimum(d, 1.0, out=d)
    half = np.arccos(d)
    sin_half = _sin(half)
    csc = np.zeros_like(sin_half)
    np.divide(1.0, sin_half, out=csc, where=sin_half > 0.0)
    d *= csc
    half *= t
    ca, cb = _weights_of(half, d, csc)
    np.negative(cb, out=cb, where=flip)
    out = q * ca
    p_part = p * cb
    out += p_part
    one = t == 1.0
    if one.any():
        out[:, one] = p[:, one]
    return out


def to_matrix(q: npt.ArrayLike) -> Array:
    """Unit `[..., 4]` -> rotation matrices `[..., 3, 3]` acting on column vectors."""
    q = _f(q)
    w, x, y, z = np.moveaxis(q, -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.empty((*q.shape[:-1], 3, 3))
    m[..., 0, 0] = 1.0 - 2.0 * (yy + zz)
    m[..., 0, 1] = 2.0 * (xy - wz)
    m[..., 0, 2] = 2.0 * (xz + wy)
    m[..., 1, 0] = 2.0 * (xy + wz)
    m[..., 1, 1] = 1.0 - 2.0 * (xx + zz)
    m[..., 1, 2] = 2.0 * (yz - wx)
    m[..., 2, 0] = 2.0 * (xz - wy)
    m[..., 2, 1] = 2.0 * (yz + wx)
    m[..., 2, 2] = 1.0 - 2.0 * (xx + yy)
    return m


def from_matrix(m: npt.ArrayLike) -> Array:
    """Rotation matrices `[..., 3, 3]` -> unit `[..., 4]` with w >= 0 (Shepperd's method)."""
    m = _f(m)
    m00, m01, m02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    m10, m11, m12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    m20, m21, m22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    # Row b is 4 q_b q: every row is proportional to q, and the row with the largest diagonal
    # (4 q_b^2 >= 1) is the best conditioned; no sqrt or division needed before normalizing.
    rows = np.stack(
        [
            np.stack([1.0 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01], axis=-1),
            np.stack([m21 - m12, 1.0 + m00 - m11 - m22, m01 + m10, m02 + m20], axis=-1),
            np.stack([m02 - m20, m01 + m10, 1.0 - m00 + m11 - m22, m12 + m21], axis=-1),
            np.stack([m10 - m01, m02 + m20, m12 + m21, 1.0 - m00 - m11 + m22], axis=-1),
        ],
        axis=-2,
    )
    best = np.argmax(np.diagonal(rows, axis1=-2, axis2=-1), axis=-1)
    q = np.take_along_axis(rows, best[..., None, None], axis=-2)[..., 0, :]
    return hemi(normalize(q))


def from_euler(angles: npt.ArrayLike, order: str) -> Array:
    """Intrinsic Euler angles `[..., 3]` (radians, BVH channel order, e.g. 'ZXY') -> `[..., 4]`."""
    i, j, k = _parse_order(order)
    a = _f(angles)
    if i == k:
        return mul(mul(_axis_quat(a[..., 0], i), _axis_quat(a[..., 1], j)), _axis_quat(a[..., 2], k))
    # Tait-Bryan: the product q_i(a) q_j(b) q_k(c) written out (e = parity of (i, j, k)), one pass
    # instead of two full products: importing 10k frames x 31 joints spends its time here.
    e = 1.0 if (j - i) % 3 == 1 else -1.0
    half = 0.5 * a
    c = np.cos(half)
    s = np.sin(half)
    ca, cb, cc = c[..., 0], c[..., 1], c[..., 2]
    sa, sb, sc = s[..., 0], s[..., 1], s[..., 2]
    cacb, sasb = ca * cb, sa * sb
    q = np.empty((*a.shape[:-1], 4))
    q[..., 0] = cacb * cc - e * sasb * sc
    q[..., 1 + i] = sa * cb * cc + e * ca * sb * sc
    q[..., 1 + j] = ca * sb * cc - e * sa * cb * sc
    q[..., 1 + k] = cacb * sc + e * sasb * cc
    return q


def to_euler(q: npt.ArrayLike, order: str) -> Array:
    """`[..., 4]` -> intrinsic Euler angles `[..., 3]` in radians for order (e.g. 'ZXY').

    Ranges: first and last in (-pi, pi]; middle in [-pi/2, pi/2] (Tait-Bryan) or [0, pi]
    (proper Euler, e.g. 'ZXZ'). At gimbal lock the last angle is 0 and the first absorbs the
    combined twist. from_euler(to_euler(q)) rebuilds q exactly, also at and near lock.
    """
    i, j, last = _parse_order(order)
    q = normalize(_f(q))
    m = to_matrix(q)
    proper = i == last
    k = 3 - i - j
    e = 1.0 if (j - i) % 3 == 1 else -1.0  # parity of the axis permutation (i, j, k)
    if proper:
        # Column i of R_i(a0) R_j(a1) R_i(a2): (cos a1, sin a0 sin a1, -e cos a0 sin a1) on (i, j, k).
        s = np.hypot(m[..., j, i], m[..., k, i])
        a1 = np.arctan2(s, m[..., i, i])
        a0 = np.arctan2(m[..., j, i], -e * m[..., k, i])
    else:
        # Column k of R_i(a0) R_j(a1) R_k(a2): (e sin a1, -e sin a0 cos a1, cos a0 cos a1).
        s = np.hypot(m[..., j, k], m[..., k, k])
        a1 = np.arctan2(e * m[..., i, k], s)
        a0 = np.arctan2(-e * m[..., j, k], m[..., k, k])
    # At lock column k above vanishes; column j of R_i(a0) R_j(a1) (last angle 0) stays valid.
    a0 = np.where(s < _LOCK, np.arctan2(e * m[..., k, j], m[..., j, j]), a0)
    # The last angle comes from what is left after the first two rotations, so any error in
    # a0 near lock is absorbed here rather than breaking the rebuild.
    r = inv_mul(mul(_axis_quat(a0, i), _axis_quat(a1, j)), q)
    rw, rk = r[..., 0], r[..., 1 + last]
    a2 = np.arctan2(2.0 * rw * rk, rw * rw - rk * rk)
    return np.stack([a0, a1, a2], axis=-1)


def average(q: npt.ArrayLike, weights: npt.ArrayLike | None = None, axis: int = 0) -> Array:
    """Weighted mean rotation over a batch axis of `[..., 4]` (Markley's eigenvector method).

    Sign-insensitive. weights is `[N]` along axis, or broadcastable to q.shape[:-1]. The result
    is signed toward the first sample along axis.
    """
    q = _f(q)
    axis = axis % (q.ndim - 1)
    if weights is None:
        w = np.ones(q.shape[:-1])
    else:
        w = _f(weights)
        if w.ndim == 1:
            shape = [1] * (q.ndim - 1)
            shape[axis] = -1
            w = w.reshape(shape)
        w = np.broadcast_to(w, q.shape[:-1])
    qa = np.moveaxis(q, axis, -2)
    wa = np.moveaxis(w, axis, -1)
    m = np.einsum("...n,...ni,...nj->...ij", wa, qa, qa)
    _, vecs = np.linalg.eigh(m)
    r = vecs[..., :, -1]  # eigh sorts eigenvalues ascending
    r = np.where(dot(r, qa[..., 0, :])[..., None] < 0.0, -r, r)
    return normalize(r)


def between(u: npt.ArrayLike, v: npt.ArrayLike) -> Array:
    """Shortest-arc unit `[..., 4]` rotating direction u `[..., 3]` onto v (any nonzero lengths)."""
    u, v = np.broadcast_arrays(normalize(u), normalize(v))
    # 1 + u.v written as |u + v|^2 / 2 avoids cancellation when u and v are nearly opposite.
    uv = u + v
    w = 0.5 * np.sum(uv * uv, axis=-1)
    q = np.concatenate([w[..., None], np.cross(u, v)], axis=-1)
    # Opposite vectors: half turn about any axis orthogonal to u; the basis axis least aligned
    # with u gives a well-conditioned one.
    helper = np.eye(3)[np.argmin(np.abs(u), axis=-1)]
    flip = np.concatenate([np.zeros((*u.shape[:-1], 1)), normalize(np.cross(u, helper))], axis=-1)
    opposite = np.sqrt(2.0 * w) < OPPOSITE
    return normalize(np.where(opposite[..., None], flip, q))


def fk(
    lrot: npt.ArrayLike, lpos: npt.ArrayLike, parents: Sequence[int] | npt.ArrayLike
) -> tuple[Array, Array]:
    """Forward kinematics: local `[..., J, 4]`, `[..., J, 3]` -> global rotations and positions.

    parents[j] < j, -1 for roots. G_j = G_parent L_j, x_j = x_parent + G_parent t_j.
    """
    lrot, lpos = _f(lrot), _f(lpos)
    par = [int(p) for p in np.asarray(parents).reshape(-1)]
    n_joints = lrot.shape[-2]
    if lpos.shape[-2] != n_joints or len(par) != n_joints:
        raise ValueError(f"joint counts differ: lrot {lrot.shape}, lpos {lpos.shape}, {len(par)} parents")
    if any(p >= j for j, p in enumerate(par)):
        raise ValueError("parents must list every parent before its children (parents[j] < j)")
    batch = np.broadcast_shapes(lrot.shape[:-2], lpos.shape[:-2])
    n = int(np.prod(batch, dtype=np.int64))
    # Component-major, per-joint contiguous [J, C, N]: each per-joint operation then streams
    # over N contiguous values instead of striding through [..., J, C].
    lr = np.ascontiguousarray(
        np.broadcast_to(lrot, (*batch, n_joints, 4)).reshape(n, n_joints, 4).transpose(1, 2, 0)
    )
    lp = np.ascontiguousarray(
        np.broadcast_to(lpos, (*batch, n_joints, 3)).reshape(n, n_joints, 3).transpose(1, 2, 0)
    )
    gr, gp = fk_components(lr, lp, par)
    grot = gr.transpose(2, 0, 1).reshape(*batch, n_joints, 4)
    gpos = gp.transpose(2, 0, 1).reshape(*batch, n_joints, 3)
    return grot, gpos


def components(x: Array, joints: Sequence[int]) -> Array:
    """Joints `joints` of `[T, J, C]` laid out component-major `[len(joints), C, T]` (contiguous),
    as `fk_components` takes them: one strided copy per joint, cheaper than fancy indexing."""
    out = np.empty((len(joints), x.shape[2], x.shape[0]))
    for i, j in enumerate(joints):
        out[i] = x[:, j].T
    return out


def fk_components(lr: Array, lp: Array, parents: Sequence[int]) -> tuple[Array, Array]:
    """`fk` on component-major arrays: local `[J, 4, N]`, `[J, 3, N]` -> world, the same layout.
    parents[j] < j, -1 for roots. Each per-joint operation streams over N contiguous values."""
    gr = np.empty_like(lr)
    gp = np.empty_like(lp)
    for j, p in enumerate(parents):
        if p < 0:
            gr[j] = lr[j]
            gp[j] = lp[j]
            continue
        for c, value in enumerate(mul_components(*gr[p], *lr[j])):
            gr[j, c] = value
        for c, value in enumerate(mul_vec_components(*gr[p], *lp[j])):
            np.add(gp[p, c], value, out=gp[j, c])
    return gr, gp


def fk_joints(lrot: Array, lpos: Array, parents: Sequence[int] | np.ndarray,
              joints: Iterable[int]) -> tuple[np.ndarray, Array, Array, Array]:
    """`fk_components` of some joints of `[T, J, 4]`, `[T, J, 3]` locals: `joints` must hold each
    one's ancestors (the chains down to the feet, say). Returns (index [J]: each joint's row in
    what follows, -1 if left out; their local rotations, world rotations and positions,
    `[n, 4 | 3, T]`)."""
    used = sorted(joints)
    index = np.full(len(parents), -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    sub_parents = [int(index[parents[j]]) if parents[j] >= 0 else -1 for j in used]
    local = components(lrot, used)
    gr, gp = fk_components(local, components(lpos, used), sub_parents)
    return index, local, gr, gp
