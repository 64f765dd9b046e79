"""Axis conversion and left/right mirroring of clips.

Both act on the clip's data with one orthogonal matrix. `convert` re-expresses the same motion in
other axes (Y-up to Z-up, or a reflected, other-handed frame): world positions become A x and
world rotations A R A^T. `mirror` changes the performance: the left side does what the right side
did, reflected through the plane between them.

For any orthogonal A, A R A^T is a rotation, and its quaternion is (w, det(A) A v) for the
quaternion (w, v) of R: a reflection flips the sense of every turn, so the axis picks up the sign.
Channels stay as they are: rotations are stored as quaternions, and saving recomputes Euler angles
in each joint's channel order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import skeleton
from .clip import Clip

_AXIS = {"X": 0, "Y": 1, "Z": 2}
# Accept a matrix this far from orthogonal (e.g. single-precision input) and clean it up.
_ORTHO_TOL = 1e-6


# -- matrices -------------------------------------------------------------------------------------

def y_up_to_z_up() -> np.ndarray:
    """[3, 3] Y-up to Z-up, (x, y, z) -> (x, -z, y): +90 degrees about X, a proper rotation.

    Maps BVH's customary axes (Y up, facing +Z) to Blender's (Z up, facing -Y), the same matrix as
    Blender's BVH importer uses (`axis_conversion(from_forward='-Z', from_up='Y')`).
    """
    return np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def flip_handedness(axis: str = "X") -> np.ndarray:
    """[3, 3] reflection negating one axis ('X', 'Y' or 'Z'): left- <-> right-handed axes."""
    m = np.eye(3)
    m[_axis_index(axis), _axis_index(axis)] = -1.0
    return m


def matrix(from_forward: str = "Y", from_up: str = "Z", to_forward: str = "Y",
           to_up: str = "Z") -> np.ndarray:
    """[3, 3] rotation taking named axes ('X', '-Z', ...) from_forward -> to_forward and
    from_up -> to_up, as Blender's `bpy_extras.io_utils.axis_conversion` (same arguments).

    Always a proper rotation (det +1); forward and up must be perpendicular.
    """
    src = _frame(from_forward, from_up)
    dst = _frame(to_forward, to_up)
    return dst @ src.T


def _axis_index(axis: str) -> int:
    name = axis.upper().lstrip("+-") if isinstance(axis, str) else ""
    if name not in _AXIS:
        raise ValueError(f"axis must be 'X', 'Y' or 'Z' (optionally signed), not {axis!r}")
    return _AXIS[name]


def _named_axis(axis: str) -> np.ndarray:
    v = np.zeros(3)
    v[_axis_index(axis)] = -1.0 if axis.startswith("-") else 1.0
    return v


def _frame(forward: str, up: str) -> np.ndarray:
    f, u = _named_axis(forward), _named_axis(up)
    if abs(f @ u) > 0.0:
        raise ValueError(f"forward {forward!r} and up {up!r} must be different axes")
    # Written out: np.cross takes 14 us on two 3-vectors, 3x the rest of this function.
    side = np.array([f[1] * u[2] - f[2] * u[1], f[2] * u[0] - f[0] * u[2], f[0] * u[1] - f[1] * u[0]])
    return np.stack([f, u, side], axis=1)


def _orthogonal(A: npt.ArrayLike) -> tuple[np.ndarray, float]:
    """(A as an exactly orthogonal float64 [3, 3], det(A) = +-1); ValueError when it is not."""
    a = np.asarray(A, dtype=np.float64)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ValueError(f"axis matrix must be a finite 3x3 array, got shape {list(a.shape)}")
    error = float(np.abs(a @ a.T - np.eye(3)).max())
    if error > _ORTHO_TOL:
        raise ValueError(f"axis matrix is not orthogonal (|A A^T - I| = {error:.3g}): "
                         "it would scale or shear the skeleton")
    if error > 1e-12:
        # Nearest orthogonal matrix (polar factor), so A R A^T stays a rotation to double precision.
        u, _, vt = np.linalg.svd(a)
        a = u @ vt
    return a, float(np.sign(np.linalg.det(a)))


def _transform_rotations(q: np.ndarray, a: np.ndarray, det: float) -> np.ndarray:
    """Quaternions of A R A^T for the quaternions q [..., 4] of R."""
    out = np.empty_like(q)
    out[..., 0] = q[..., 0]
    out[..., 1:] = det * (q[..., 1:] @ a.T)
    return out


# -- conversion -----------------------------------------------------------------------------------

def convert(clip: Clip, A: npt.ArrayLike) -> Clip:
    """The same motion in axes mapped by orthogonal A [3, 3]: every position x becomes A x and
    every rotation R becomes A R A^T, so fk() of the result is A applied to fk() of `clip`.

    det(A) = -1 changes handedness (not a mirror: the performance is unchanged, only the axes it
    is written in). `up` and `forward` follow A.
    """
    a, det = _orthogonal(A)
    return clip.replace(
        offsets=clip.offsets @ a.T,
        positions=clip.positions @ a.T,
        rotations=_transform_rotations(clip.rotations, a, det),
        end_offsets=clip.end_offsets @ a.T,
        up=a @ clip.up, forward=a @ clip.forward)


# -- mirroring ------------------------------------------------------------------------------------

_LEFT_RIGHT = re.compile("left|right", re.IGNORECASE)
# Single-letter side marks, where skeleton.side looks for them (LHipJoint, l_foot, foot_L, Foot.R,
# arm_l_ik, lhand); group 1 is the letter to swap.
_PARTS = r"(?:hand|foot|toe|thumb|finger|arm|leg|shoulder|elbow|wrist|knee|ankle|hip|up|low|collar)"
_LETTER_MARKS = (
    re.compile(r"^([LR])(?=[A-Z_.\-\s])"),
    re.compile(r"^([lr])(?=[_.\-\s])"),
    re.compile(r"(?<=[_.\-\s])([lLrR])$"),
    re.compile(r"(?<=[_.\-\s])([lLrR])(?=[_.\-\s])"),
    re.compile(rf"^([lr])(?={_PARTS})"),
)
_SWAP_LETTER = str.maketrans("LRlr", "RLrl")


def mirror_name(name: str) -> str:
    """The name of the other side (LeftFoot <-> RightFoot, LHipJoint <-> RHipJoint, lhand <-> rhand,
    Foot.L <-> Foot.R, FootDown_L <-> FootDown_R); a name without a side is its own mirror.

    Case is kept, and mirror_name(mirror_name(n)) == n.
    """
    if skeleton.side(name) is None:
        return name
    if _LEFT_RIGHT.search(name):
        return _LEFT_RIGHT.sub(_swap_word, name)
    for pattern in _LETTER_MARKS:
        m = pattern.search(name)
        if m:
            i = m.start(1)
            return name[:i] + name[i].translate(_SWAP_LETTER) + name[i + 1:]
    return name


def _swap_word(m: re.Match[str]) -> str:
    word = m.group(0)
    other = "right" if word.lower() == "left" else "left"
    if word.isupper():
        return other.upper()
    if word[0].isupper():
        return other.capitalize()
    return other


def partners(names: Sequence[str], pairs: Mapping[str, str] | Iterable[tuple[str, str]] | None = None
             ) -> np.ndarray:
    """[J] index of each joint's other-side joint (itself when it has none).

    By name (see mirror_name) unless `pairs` lists them: {left: right} or [(left, right), ...],
    either direction; joints not listed are their own partners.
    """
    index = {n: j for j, n in enumerate(names)}
    partner = np.arange(len(names))
    if pairs is None:
        for j, n in enumerate(names):
            k = index.get(mirror_name(n))
            if k is not None and skeleton.side(names[k]) != skeleton.side(n):
                partner[j] = k
        return partner
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    for a, b in items:
        for n in (a, b):
            if n not in index:
                raise ValueError(f"mirror pair names joint {n!r}, which the clip does not have")
        partner[index[a]], partner[index[b]] = index[b], index[a]
    return partner


def reflection(normal: npt.ArrayLike) -> np.ndarray:
    """[3, 3] reflection through the plane through the origin perpendicular to `normal`."""
    n = np.asarray(normal, dtype=np.float64).reshape(3)
    length = float(np.linalg.norm(n))
    if not (length > 0 and np.isfinite(length)):
        raise ValueError(f"mirror normal must be a nonzero finite vector, not {list(n)}")
    n = n / length
    return np.eye(3) - 2.0 * np.outer(n, n)


def mirror(clip: Clip, axis: str | npt.ArrayLike | None = None,
           pairs: Mapping[str, str] | Iterable[tuple[str, str]] | None = None) -> Clip:
    """The performance mirrored left <-> right: each joint moves as its partner did, reflected.

    The mirror plane goes through the origin, perpendicular to `axis` ('X', 'Y', 'Z' or a vector;
    default the clip's side axis, cross(up, forward)). Partners come from joint names (LeftFoot /
    RightFoot, LHipJoint / RHipJoint, lhand / rhand, Foot.L / Foot.R) or from `pairs`. Each joint
    takes its partner's reflected rotation (M R M), translation and offset (M t), so the result's
    fk() at joint j is M applied to the source's fk() at partner(j), also on a skeleton whose two
    sides differ slightly (the bone lengths swap sides with the motion). End Sites, channels and
    event names (FootDown_L <-> FootDown_R) swap sides too. Mirroring twice gives the clip back.
    """
    if axis is None:
        normal = np.cross(clip.up, clip.forward)
    elif isinstance(axis, str):
        normal = _named_axis(axis)
    else:
        normal = np.asarray(axis, dtype=np.float64)
    m = reflection(normal)
    partner = partners(clip.names, pairs)
    parents = clip.parents
    mapped_parent = np.where(parents >= 0, partner[np.maximum(parents, 0)], -1)
    bad = np.flatnonzero(parents[partner] != mapped_parent)
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"cannot mirror: {clip.names[j]!r} pairs with {clip.names[partner[j]]!r}, but their "
            f"parents are not partners (give `pairs` for this skeleton)")
    name_map = {clip.names[j]: clip.names[partner[j]] for j in range(clip.n_joints)}
    return clip.replace(
        offsets=clip.offsets[partner] @ m.T,
        positions=clip.positions[:, partner] @ m.T,
        rotations=_transform_rotations(clip.rotations[:, partner], m, -1.0),
        channels=[clip.channels[k] for k in partner],
        end_offsets=_mirrored_end_offsets(clip, partner) @ m.T,
        events={name_map.get(k, mirror_name(k)): v.copy() for k, v in clip.events.items()},
        root=int(partner[clip.root]), up=m @ clip.up, forward=m @ clip.forward)


def _mirrored_end_offsets(clip: Clip, partner: np.ndarray) -> np.ndarray:
    """[E, 3] for each End Site, the offset of the matching End Site on its parent's partner."""
    sites: dict[int, list[int]] = {}
    for e, parent in enumerate(clip.end_parents):
        sites.setdefault(int(parent), []).append(e)
    source = np.empty(len(clip.end_parents), dtype=np.int64)
    for p, own in sites.items():
        other = sites.get(int(partner[p]), [])
        if len(other) != len(own):
            raise ValueError(f"cannot mirror: {clip.names[p]!r} has {len(own)} End Sites and its partner "
                             f"{clip.names[partner[p]]!r} has {len(other)}")
        source[own] = other
    return clip.end_offsets[source]
