"""Skeleton analysis from the hierarchy alone: rest pose, height, legs, left/right sides.

Everything here reads the joint tree (names, parents, offsets), never the motion, so a
skeleton's facts (its feet, its height, which way it faces) are the same for every clip on it.
Names only break ties: real files name joints every which way (CMU's 131 takes say LeftAnkle
where the others say LeftFoot, and repeat names).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# Single-letter side marks, as rigs spell them: LHipJoint, L_Foot, l.hand, foot_L, Foot.R, arm_l_ik.
# A lower-case letter after the l/r (lowerback, rhythm) is not a side mark, except for body-part
# words (CMU's lhand, rhand).
_PARTS = r"(hand|foot|toe|thumb|finger|arm|leg|shoulder|elbow|wrist|knee|ankle|hip|up|low|collar)"
_SIDE_MARKS = {
    "L": re.compile(rf"^L(?=[A-Z_.\-\s])|^l[_.\-\s]|[_.\-\s][lL]$|[_.\-\s][lL][_.\-\s]|^l{_PARTS}"),
    "R": re.compile(rf"^R(?=[A-Z_.\-\s])|^r[_.\-\s]|[_.\-\s][rR]$|[_.\-\s][rR][_.\-\s]|^r{_PARTS}"),
}


def side(name: str) -> str | None:
    """'L', 'R' or None from a joint name (LeftFoot, l_foot, Foot.L, LHipJoint, lhand, ...)."""
    lower = name.lower()
    if "left" in lower:
        return "L"
    if "right" in lower:
        return "R"
    for mark, pattern in _SIDE_MARKS.items():
        if pattern.search(name):
            return mark
    return None


def children(parents: Sequence[int] | np.ndarray) -> list[list[int]]:
    """Child joint indices of every joint."""
    kids: list[list[int]] = [[] for _ in range(len(parents))]
    for j, p in enumerate(parents):
        if p >= 0:
            kids[int(p)].append(j)
    return kids


def descendants(parents: Sequence[int] | np.ndarray, joint: int) -> np.ndarray:
    """bool [J]: the joint and everything below it (parents[j] < j holds for BVH order)."""
    parents = np.asarray(parents)
    mask = np.zeros(len(parents), dtype=bool)
    mask[joint] = True
    for j in range(joint + 1, len(parents)):
        if parents[j] >= 0 and mask[parents[j]]:
            mask[j] = True
    return mask


def chain(parents: Sequence[int] | np.ndarray, joint: int) -> list[int]:
    """Joint indices from the top root down to `joint`, inclusive."""
    path = []
    while joint >= 0:
        path.append(int(joint))
        joint = int(parents[joint])
    return path[::-1]


def rest_positions(parents: Sequence[int] | np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """[J, 3] joint positions of the rest pose (offsets summed down the tree)."""
    pos = np.array(offsets, dtype=np.float64, copy=True)
    for j, p in enumerate(parents):
        if p >= 0:
            pos[j] += pos[p]
    return pos


def bone_lengths(parents: Sequence[int] | np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """[J] each joint's distance from its parent (its offset's length); 0 for top joints, whose
    offsets place the skeleton rather than measure it."""
    return np.where(np.asarray(parents) >= 0, np.linalg.norm(offsets, axis=-1), 0.0)


def length_mismatch(a: np.ndarray, b: np.ndarray, rtol: float = 1e-4) -> int | None:
    """The joint whose bone lengths a, b [J] (of the same joints in two skeletons) differ most,
    when by more than `rtol` of the longest bone; None when every length agrees."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size == 0:
        return None
    err = np.abs(a - b)
    j = int(np.argmax(err))
    return j if err[j] > rtol * max(float(a.max()), float(b.max()), 1e-300) else None


def height(parents: Sequence[int] | np.ndarray, offsets: np.ndarray, end_parents: np.ndarray,
           end_offsets: np.ndarray, up: np.ndarray) -> float:
    """Skeleton height in file units: the skeleton stood straight, i.e. bone lengths summed along
    the path from the lowest tip of the rest pose (toe End Site) to the highest (head End Site).

    Unlike the rest pose's extent along `up`, this does not depend on the rest posture (CMU rest
    poses splay the legs 20 degrees; A-poses bend the knees), only on which tips are lowest and
    highest. Falls back to the rest pose's largest extent for a skeleton with a single tip.
    """
    parents = np.asarray(parents)
    if len(parents) == 0:
        return 0.0
    rest = rest_positions(parents, offsets)
    bone = np.linalg.norm(offsets, axis=-1)
    # Tips: End Sites, and leaf joints that have none.
    kids = children(parents)
    with_end = set(int(p) for p in end_parents)
    tip_joint = [int(p) for p in end_parents] + [j for j in range(len(parents))
                                                  if not kids[j] and j not in with_end]
    tip_pos = np.concatenate([rest[np.asarray(end_parents, dtype=np.int64)] + end_offsets,
                              rest[tip_joint[len(end_parents):]]])
    tip_len = np.concatenate([np.linalg.norm(end_offsets, axis=-1),
                              np.zeros(len(tip_joint) - len(end_parents))])
    along = tip_pos @ np.asarray(up, dtype=np.float64)
    lo, hi = int(np.argmin(along)), int(np.argmax(along))
    path_lo = chain(parents, tip_joint[lo])
    path_hi = chain(parents, tip_joint[hi])
    shared = 0
    while shared < min(len(path_lo), len(path_hi)) and path_lo[shared] == path_hi[shared]:
        shared += 1
    if shared == 0:
        extent = np.concatenate([rest, tip_pos])
        return float((extent.max(axis=0) - extent.min(axis=0)).max())
    length = (bone[path_lo[shared:]].sum() + bone[path_hi[shared:]].sum()
              + tip_len[lo] + tip_len[hi])
    if lo == hi or length <= 0.0:
        extent = np.concatenate([rest, tip_pos])
        return float((extent.max(axis=0) - extent.min(axis=0)).max())
    return float(length)


def legs(names: Sequence[str], parents: Sequence[int] | np.ndarray, offsets: np.ndarray,
         up: np.ndarray, root: int = 0) -> tuple[list[int], list[int]] | None:
    """(left, right) leg chains below `root`, each from the first joint below the branch point
    down to the lowest leaf (CMU: LHipJoint .. LeftToeBase).

    Legs are the two lowest leaf chains of the rest pose that branch apart below `root`; names
    decide which is left (else +X is left for a Y-up skeleton facing +Z, as in CMU files).
    None when the skeleton has no two such chains.
    """
    parents = np.asarray(parents)
    J = len(parents)
    if J < 3:
        return None
    below = descendants(parents, root)
    kids = children(parents)
    rest = rest_positions(parents, offsets)
    up = np.asarray(up, dtype=np.float64)
    h_along = rest @ up
    leaves = [j for j in range(J) if below[j] and not kids[j] and j != root]
    if len(leaves) < 2:
        return None
    # Lowest first; a name with a side breaks ties between equally low leaves.
    leaves.sort(key=lambda j: (round(float(h_along[j] - h_along.min()), 9), side(names[j]) is None))
    first = leaves[0]
    first_chain = chain(parents, first)
    for other in leaves[1:]:
        other_chain = chain(parents, other)
        split = 0
        while (split < min(len(first_chain), len(other_chain))
               and first_chain[split] == other_chain[split]):
            split += 1
        a, b = first_chain[split:], other_chain[split:]
        if a and b and root in first_chain[:split]:
            break
    else:
        return None
    left, right = a, b
    sa = chain_side(names, a)
    sb = chain_side(names, b)
    if sa == "R" or sb == "L":
        left, right = b, a
    elif sa is None and sb is None:
        # No names to go by: take +X as left (CMU and most Y-up rigs face +Z).
        side_axis = np.cross(up, np.array([0.0, 0.0, 1.0]))
        if np.linalg.norm(side_axis) < 1e-9:
            side_axis = np.array([1.0, 0.0, 0.0])
        if rest[a[-1]] @ side_axis < rest[b[-1]] @ side_axis:
            left, right = b, a
    return left, right


def chain_side(names: Sequence[str], joints: Sequence[int]) -> str | None:
    """'L' or 'R' when more of the chain's joint names say that side than the other, else None."""
    votes = [side(names[j]) for j in joints]
    n_left, n_right = votes.count("L"), votes.count("R")
    if n_left > n_right:
        return "L"
    if n_right > n_left:
        return "R"
    return None
