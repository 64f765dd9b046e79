"""The body map: which joints are the legs, feet, pelvis, spine, head and arms; which way is up and
forward; the unit; the motion root and the joints a take never moves.

Read once per clip (`clip.body`) and used by everything that needs any of these. Evidence, in
order:

1. the user: `find(clip, feet={"L": "LeftFoot", "R": "RightFoot"})` (ankles by name or index; the
   joints below follow), or `clip.up` / `clip.forward` / `clip.meters_per_unit` set by hand;
2. joint names where they say it (LeftFoot, LeftAnkle, lfoot, mixamorig:LeftFoot, foot_l,
   DEF-foot.L, Foot_L, Foot.L, l_ankle, ...): the ankle of each side;
3. the hierarchy and the animated pose: legs are two sibling chains of at least three joints that
   look alike, sit on opposite sides and whose ends are the lowest points of the body over the take.

Arms are never legs, whatever their motion: a pair that hangs from the shoulders or the neck side
of the spine (by names, else by where it branches: `_neck_side`) is never taken, so a skeleton
with its legs cut off has none, and what needs them raises `NoLegsError`. Where more than two
limbs reach the floor (a quadruped), the pair nearest the root is used and a `BodyWarning` names
the others with the `feet=` that stands on them.

Never the rest pose alone: the rest poses of other sources do not stand (bones along their local
axes, arms down, lying). Up is the direction from the ankles to the pelvis and head over the take,
snapped to a file axis; facing is the hip line turned a quarter about up, its sign from where the
toes point (not from travel: takes walk backwards); the unit is the known unit that makes the
standing height (bone lengths from the sole to the head) a person's, a guess (evidence 'guess',
and a `BodyWarning` saying how to set it) where part of the body (the legs, the head) is missing.

`clip.forward` is the facing in the motion root's own (rest) frame: the world facing at frame t is
the root's world rotation applied to it, projected on the floor. The floor axes that heading 0
is measured from are built from `up` alone (`root.floor_axes`), so a root whose rest frame is not
upright still gives a steady heading.

`python -m core.body FILE...` prints the map of BVH files.
"""

from __future__ import annotations

import copy
import math
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import quat, skeleton, units
from . import root as root_motion

if TYPE_CHECKING:
    from .clip import Clip

# The animated pose is read on this many frames at most, spread over the take: enough to see the
# feet at their lowest and the facing over the whole take, at a fraction of FK's cost.
_SAMPLES = 96
# A leg's ankle is the first joint down the chain at least this far along the hip-to-sole path:
# hip->ankle is about 0.49 of stature and ankle->toe tip 0.14, so the ankle sits at 0.75-0.8 of
# the path and the knee at 0.4 (a thigh split in two, as Rigify's, puts its joints at 0.2 and 0.6).
_ANKLE_FRACTION = 0.68
# An inferred up within this angle of a file axis is that axis: files are written axis-aligned.
_SNAP_DEGREES = 30.0
# A joint this near its parent (a fraction of the longest bone) sits on it: CMU's zero-length
# LHipJoint is 1e-7 m long after a trip through FBX, and must not become the hip.
_SAME_POINT = 1e-5

# A joint translates when its position channels move by more than this fraction of the longest
# bone over the take: Bandai writes six channels on every joint, still ones varying by 1e-12.
_TRANSLATES = 1e-3
# Another pair of limbs reaches the floor when, on a quarter of the frames or more, its lowest
# point comes within this many leg lengths (hip to ankle) of the legs' lowest point.
_FLOOR_LEGS = 0.15
# Parts of a standing height, for a unit guessed from part of a body: thigh + shin is 0.48-0.50
# of the height in CMU takes (0.49 in Drillis and Contini's tables), the arm from the collar
# bone's end to the last tip 0.42-0.45 (Bandai's, which ends at the wrist, 0.35).
_LEG_OF_HEIGHT = 0.5
_ARM_OF_HEIGHT = 0.42

FeetSpec = Mapping[str, "str | int | Sequence[str | int]"]

PICK_FEET = ("pick the feet: in Blender, the Rig panel's foot pickers (Left Foot, Right Foot); in Python, "
             "feet={'L': left_ankle, 'R': right_ankle}")
"""How a user chooses the feet, as the body map's messages say it."""
SET_UNIT = ("set it: in Blender, the Rig panel's Unit; in Python, clip.meters_per_unit = "
            "<meters per file unit>")
"""How a user sets the unit, as the body map's messages say it."""


class BodyWarning(UserWarning):
    """The body map found something doubtful: names and motion disagree, more than two limbs reach
    the floor, a unit guessed from part of a body."""


class NoLegsError(ValueError):
    """No pair of legs in a skeleton that needs them: what was looked for and how to pick the feet
    (`problem`, the body map's reason)."""

    def __init__(self, problem: str, name: str = "") -> None:
        super().__init__(f"no legs found{f' in {name!r}' if name else ''}: {problem}")
        self.problem = problem


@dataclass(eq=False)
class Body:
    """What a clip's joints are. Joint indices; sides 'L' and 'R'.

    legs: {side: [hip, knee, ankle, ...toes]} along each leg's main chain (empty when none found).
    feet: {side: [ankle, ...every joint below it]}.
    pelvis: where the legs branch; spine: joints from the pelvis up to the head, both excluded;
    head: the top of the spine (None when there is none); arms: {side: [shoulder, ..., hand]}.
    static: joints whose world transform the take never changes.
    root: the motion root (`clip.root`). up, forward: unit vectors (forward in the root's frame).
    height: standing height in file units; meters_per_unit.
    evidence: what each decision came from, for 'legs', 'sides', 'up', 'facing', 'unit':
        'names', 'motion', 'user', 'hierarchy' or 'default'; the unit's 'height' (the whole body's)
        or 'guess' (part of a body: no legs or no head).
    warnings: doubts worth telling the user; problem: why no legs were found ('' when found).
    """

    names: list[str]
    legs: dict[str, list[int]]
    feet: dict[str, list[int]]
    pelvis: int | None
    spine: list[int]
    head: int | None
    arms: dict[str, list[int]]
    static: list[int]
    root: int
    up: np.ndarray
    forward: np.ndarray
    height: float
    meters_per_unit: float
    evidence: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    problem: str = ""

    def joint_names(self, joints: Sequence[int]) -> list[str]:
        return [self.names[j] for j in joints]

    def check_legs(self, name: str = "") -> None:
        """NoLegsError (a ValueError) saying what was looked for and how to pick the feet, when the
        map has no legs; `name`: the clip's, for the message."""
        if not self.legs:
            raise NoLegsError(self.problem, name)

    def describe(self) -> str:
        """A few lines for people: legs and feet by name with their evidence, root, static
        joints, up, facing, unit."""
        lines = []
        if self.legs:
            for s in ("L", "R"):
                lines.append(f"leg {s}: {' > '.join(self.joint_names(self.legs[s]))}")
                lines.append(f"foot {s}: {', '.join(self.joint_names(self.feet[s]))}")
            lines.append(f"legs from: {self.evidence.get('legs')}, sides from: {self.evidence.get('sides')}")
        else:
            lines.append(f"legs: none found ({self.problem})")
        if self.pelvis is not None:
            lines.append(f"pelvis: {self.names[self.pelvis]}")
        if self.head is not None:
            lines.append(f"head: {self.names[self.head]} (spine: {', '.join(self.joint_names(self.spine))})")
        for s in sorted(self.arms):
            lines.append(f"arm {s}: {' > '.join(self.joint_names(self.arms[s]))}")
        lines.append(f"root: {self.names[self.root]}" if self.names else "root: -")
        lines.append(f"static: {', '.join(self.joint_names(self.static)) or 'none'}")
        lines.append(f"up: {_vector(self.up)} ({self.evidence.get('up')})")
        lines.append(f"forward (root frame): {_vector(self.forward)} ({self.evidence.get('facing')})")
        lines.append(f"height: {self.height:.4g} units = {self.height * self.meters_per_unit:.3f} m; "
                     f"unit {self.meters_per_unit:g} m ({self.evidence.get('unit')})")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def find(clip: Clip, *, feet: FeetSpec | None = None) -> Body:
    """The body map of `clip` (see the module notes); `feet` {side: ankle} overrides the legs."""
    names, parents = clip.names, clip.parents
    J = clip.n_joints
    kids = skeleton.children(parents)
    bone = _bone_lengths(clip)
    end_len = np.zeros(J)
    for p, e in zip(clip.end_parents, clip.end_offsets, strict=True):
        end_len[p] = max(end_len[p], float(np.linalg.norm(e)))
    reach, main = _reach(kids, bone, end_len)
    frames = _sample_frames(clip)
    static = _static(clip, frames)
    given = clip.stated
    root = given.root if given.root is not None else clip.first_moving_root()
    evidence: dict[str, str] = {}
    notes: list[str] = []

    if J and frames.size:
        wrot, wpos = quat.fk(clip.rotations[frames], clip.positions[frames], parents)
        ends = clip.end_site_positions(wrot, wpos)
    else:
        wrot, wpos, ends = np.zeros((0, J, 4)), np.zeros((0, J, 3)), np.zeros((0, len(clip.end_parents), 3))
    tips = _tips(clip, kids, main, wpos, ends)  # [S, J, 3]: the end of each joint's main chain
    pairs = _pairs(names, parents, kids, main, reach, bone)
    upper, hanging = _neck_side(names, parents, kids, main, pairs, _translating(clip, frames, bone), bone,
                                 static, wpos, tips)

    user_up = given.up
    ankles: tuple[int, int] | None = None
    problem = ""
    if feet is not None:
        ankles = _user_ankles(clip, feet)
        evidence["legs"] = "user"
    else:
        named = _named_ankles(names, parents, bone)
        refused = None  # joints named as feet that hang from the neck side: arms, never legs
        if named is not None and upper[list(named)].any():
            refused, named = named, _named_ankles(names, parents, bone, upper)
        lower = [p for p in pairs if p not in hanging]
        moved = _moving_legs(clip, kids, reach, lower, upper, wpos, tips) if wpos.shape[0] else None
        if named is not None:
            ankles = named
            evidence["legs"] = "names"
            if moved is not None and set(_pair_chains(parents, moved)) != set(_pair_chains(parents, named)):
                a, b = (names[_ankle_on(parents, bone, end_len, main, j)] for j in moved)
                notes.append(f"names and motion disagree about the legs: names say {names[named[0]]} and "
                             f"{names[named[1]]}, the motion {a} and {b}; using the names "
                             f"(pass feet= to choose)")
        elif moved is not None:
            left, right = (_ankle_on(parents, bone, end_len, main, j) for j in moved)
            ankles = (left, right)
            evidence["legs"] = "motion"
            if refused is not None:
                notes.append(f"names and motion disagree about the legs: names say {names[refused[0]]} and "
                             f"{names[refused[1]]}, which hang from the shoulders or the neck side of the "
                             f"spine (never legs), the motion {names[left]} and {names[right]}; "
                             f"using the motion's (pass feet= to choose)")
        else:
            problem = _no_legs(names, parents, main, hanging, refused)

    legs: dict[str, list[int]] = {}
    foot_map: dict[str, list[int]] = {}
    pelvis: int | None = None
    up = np.array([0.0, 1.0, 0.0]) if user_up is None else user_up.copy()
    evidence["up"] = "default" if user_up is None else "user"
    forward: np.ndarray | None = None
    spine: list[int] = []
    head: int | None = None
    arms: dict[str, list[int]] = {}
    if ankles is not None:
        pelvis = _common_ancestor(parents, *ankles)
        if given.root is None:
            root = _motion_root(clip, pelvis, root)
        chains = [_leg_chain(parents, bone, main, pelvis, a) for a in ankles]
        spine, head = _spine(names, parents, kids, reach, pelvis, set(chains[0] + chains[1]))
        if user_up is None and wpos.shape[0]:
            up = _infer_up(wpos, pelvis, list(ankles), head)
            evidence["up"] = "motion"
        first, second, sides_from = _sides(names, chains, evidence["legs"])
        order, fwd, facing_from, facing_note = _facing(clip, wrot, wpos, tips, up, chains, ankles, root,
                                                       sides_from)
        if facing_note:
            notes.append(facing_note)
        if order == 1:
            first, second = second, first
        evidence["sides"] = sides_from or ("motion" if facing_from == "motion" else "default")
        if given.forward is None:
            forward = fwd
            evidence["facing"] = facing_from
        for s, k in (("L", first), ("R", second)):
            legs[s] = chains[k]
            ankle = ankles[k]
            foot_map[s] = [int(j) for j in np.flatnonzero(skeleton.descendants(parents, ankle))]
        arms = _arms(names, parents, kids, reach, main, spine, head, up, forward if forward is not None else
                     given.forward, root, wrot, wpos)
        if evidence["legs"] != "user" and wpos.shape[0]:
            notes += _more_limbs(names, parents, bone, end_len, main, pairs, legs, foot_map, evidence["legs"],
                                 wpos, tips)
    if forward is None:
        if given.forward is not None:
            forward = given.forward.copy()
            evidence["facing"] = "user"
        else:
            forward = _default_forward(up)
            evidence.setdefault("facing", "default")

    whole = bool(legs) and _has_head(names, parents, spine, head, arms)
    if whole:
        height = _height(clip, parents, bone, end_len, main, up, foot_map, head)
    else:
        height, measured = _height_guessed(clip, parents, bone, end_len, main, up, legs, foot_map, head,
                                           hanging)
    if given.meters_per_unit is not None:
        mpu = float(given.meters_per_unit)
        evidence["unit"] = "user"
    else:
        mpu = units.guess_meters_per_unit(height)
        evidence["unit"] = "height" if whole else "guess"
        if not whole:
            missing = "no legs" if not legs else "no head"
            notes.append(f"the unit is a guess ({missing}: only part of a body): {mpu:g} m per file unit, "
                         f"from {measured}, not the standing height; if it is wrong, {SET_UNIT}")
    for note in notes:
        warnings.warn(note, BodyWarning, stacklevel=3)
    return Body(names=list(names), legs=legs, feet=foot_map, pelvis=pelvis, spine=spine, head=head, arms=arms,
                static=static, root=root, up=up, forward=forward, height=height, meters_per_unit=mpu,
                evidence=evidence, warnings=notes, problem=problem)


# -- the tree ------------------------------------------------------------------------------------


def _bone_lengths(clip: Clip) -> np.ndarray:
    """[J] each joint's offset length, 0 where it is float noise (_SAME_POINT)."""
    if not clip.n_joints:
        return np.zeros(0)
    bone = np.linalg.norm(clip.offsets, axis=-1)
    return np.where(bone > _SAME_POINT * bone.max(), bone, 0.0)


def _reach(kids: list[list[int]], bone: np.ndarray, end_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(reach [J], main [J]): the longest bone path from each joint down to a tip (End Sites
    included), and the child it goes through (-1 at a tip)."""
    J = len(kids)
    reach = end_len.copy()
    main = np.full(J, -1, dtype=np.int64)
    for j in range(J - 1, -1, -1):  # children come after parents
        for c in kids[j]:
            r = bone[c] + reach[c]
            # A joint child as long as the End Site continues the chain (an End Site made a joint).
            if r > reach[j] or (main[j] < 0 and r >= reach[j]):
                reach[j], main[j] = r, c
    return reach, main


def _main_path(main: np.ndarray, j: int) -> list[int]:
    path = [j]
    while main[path[-1]] >= 0:
        path.append(int(main[path[-1]]))
    return path


def _subtree(parents: np.ndarray, j: int) -> np.ndarray:
    return np.flatnonzero(skeleton.descendants(parents, j))


def _common_ancestor(parents: np.ndarray, a: int, b: int) -> int:
    up_a = skeleton.chain(parents, a)
    up_b = skeleton.chain(parents, b)
    common = -1
    for x, y in zip(up_a, up_b, strict=False):
        if x != y:
            break
        common = x
    if common < 0:
        raise ValueError("the two feet are in separate skeletons (no common ancestor)")
    return common


def _static(clip: Clip, frames: np.ndarray) -> list[int]:
    """Joints whose world transform never changes: their own channels and every ancestor's hold.
    Joints seen moving on the sampled `frames` move; only the others are checked on every frame
    (a full pass over the take's channels would cost as much as FK)."""
    if clip.n_frames == 0:
        return list(range(clip.n_joints))
    rot, pos = clip.rotations, clip.positions
    first_r, first_p = rot[:1], pos[:1]
    still = ~((rot[frames] != first_r).any(axis=(0, 2)) | (pos[frames] != first_p).any(axis=(0, 2)))
    for k in np.flatnonzero(still):
        still[k] = bool((rot[:, k] == first_r[:, k]).all() and (pos[:, k] == first_p[:, k]).all())
    for j, parent in enumerate(clip.parents):
        if parent >= 0 and not still[parent]:
            still[j] = False
    return [int(j) for j in np.flatnonzero(still)]


def _motion_root(clip: Clip, pelvis: int, fallback: int) -> int:
    """The joint that carries the travel: the first on the way down to the pelvis whose position
    channels move (a still dummy root above the hips is passed; a rig's other moving bones, such as
    Rigify's MCH-eyes_parent, are never it)."""
    for j in skeleton.chain(clip.parents, pelvis):
        if any(c.endswith("position") for c in clip.channels[j]) and bool(
                (clip.positions[:, j] != clip.positions[:1, j]).any()):
            return j
    return fallback if fallback in skeleton.chain(clip.parents, pelvis) else pelvis


def _sample_frames(clip: Clip) -> np.ndarray:
    T = clip.n_frames
    if T == 0:
        return np.zeros(0, dtype=np.int64)
    start = min(clip.motion_start, T - 1)
    n = T - start
    if n <= _SAMPLES:
        return np.arange(start, T)
    return np.unique(np.round(np.linspace(start, T - 1, _SAMPLES)).astype(np.int64))


def _tips(clip: Clip, kids: list[list[int]], main: np.ndarray, wpos: np.ndarray,
          ends: np.ndarray) -> np.ndarray:
    """[S, J, 3]: where each joint's main chain ends (its deepest joint's longest End Site)."""
    J = clip.n_joints
    tip = wpos.copy()
    longest: dict[int, int] = {}
    for e, p in enumerate(clip.end_parents):
        if int(p) not in longest or np.linalg.norm(clip.end_offsets[e]) > np.linalg.norm(
                clip.end_offsets[longest[int(p)]]):
            longest[int(p)] = e
    for j in range(J - 1, -1, -1):
        if main[j] >= 0:
            tip[:, j] = tip[:, main[j]]
        elif j in longest:
            tip[:, j] = ends[:, longest[j]]
    return tip


# -- legs by name ----------------------------------------------------------------------------------

_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ANKLE_WORDS = ("foot", "ankle")
# Helper and control bones that carry a foot word but are not the foot (Rigify's MCH-foot_ik.L,
# foot_heel_ik.L, IK targets, twist and roll helpers, End joints).
_NOT_A_JOINT = {"ik", "fk", "pole", "target", "tgt", "ctrl", "control", "mch", "heel", "spin", "roll",
                "tweak", "pivot", "end", "nub", "site", "twist", "helper", "ref", "toe", "toes", "ball",
                "index", "socket", "rev", "ctl", "vis", "parent", "bend", "pin"}


def _words(name: str) -> list[str]:
    """Lower-case words of a name: prefixes split off (mixamorig:LeftFoot -> mixamorig, left, foot)."""
    return [w for w in _SPLIT.split(_CAMEL.sub(" ", name).lower()) if w]


def _ankle_word(name: str) -> bool:
    words = _words(name)
    if any(w in _NOT_A_JOINT for w in words):
        return False
    for w in words:
        # 'lfoot' (Acclaim), 'footl' glued forms: the word with a side letter peeled off.
        if w in _ANKLE_WORDS or (w[:1] in "lr" and w[1:] in _ANKLE_WORDS) or (
                w[-1:] in "lr" and w[:-1] in _ANKLE_WORDS):
            return True
    return False


def _named_ankles(names: Sequence[str], parents: np.ndarray, bone: np.ndarray,
                  leave_out: np.ndarray | None = None) -> tuple[int, int] | None:
    """(left, right) ankles from names, or None when names do not say it for both sides; joints
    in `leave_out` (bool [J]) are never taken."""
    best: dict[str, tuple[tuple[int, int, int], int]] = {}
    for j, name in enumerate(names):
        s = skeleton.side(name)
        if s is None or not _ankle_word(name) or (leave_out is not None and leave_out[j]):
            continue
        above = skeleton.chain(parents, j)[:-1]
        # An ankle has a thigh and a shin above it: two bones of length.
        if len(above) < 2 or bone[j] <= 0.0 or bone[above[-1]] <= 0.0:
            continue
        words = _words(name)
        rank = (0 if "def" in words else 1 if "org" not in words else 2, -len(above), j)
        if s not in best or rank < best[s][0]:
            best[s] = (rank, j)
    if "L" not in best or "R" not in best:
        return None
    left, right = best["L"][1], best["R"][1]
    pelvis = _common_ancestor(parents, left, right)
    if pelvis in (left, right):
        return None
    return left, right


def _user_ankles(clip: Clip, feet: FeetSpec) -> tuple[int, int]:
    if not isinstance(feet, Mapping) or set(feet) != {"L", "R"}:
        raise ValueError("feet must name the two ankles, e.g. {'L': 'LeftFoot', 'R': 'RightFoot'}")
    out = []
    for s in ("L", "R"):
        value = feet[s]
        if not isinstance(value, (str, int, np.integer)):
            seq = list(value)
            if not seq:
                raise ValueError(f"foot {s!r} has no joints")
            value = seq[0]
        out.append(joint_index(clip, value, f"foot {s!r}"))
    if out[0] == out[1]:
        raise ValueError(f"both feet are {clip.names[out[0]]!r}: give two ankles")
    return out[0], out[1]


def with_feet(clip: Clip, feet: FeetSpec | None) -> Clip:
    """`clip` itself when feet is None, else a shallow copy (motion shared) whose body map is
    rebuilt around the given ankles: what every core function that reads feet does with its
    `feet=` argument."""
    if feet is None:
        return clip
    out = copy.copy(clip)
    out.body = find(clip, feet=feet)
    return out


def joint_index(clip: Clip, joint: str | int | np.integer, what: str = "joint") -> int:
    """A joint's index from its name or index; ValueError naming `what` otherwise."""
    if isinstance(joint, str):
        if joint not in clip.names:
            raise ValueError(f"{what}: no joint named {joint!r}")
        return clip.names.index(joint)
    if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool) and 0 <= joint < clip.n_joints:
        return int(joint)
    raise ValueError(f"{what}: {joint!r} is not a joint of the clip")


# -- the neck side: arms, neck, head ---------------------------------------------------------------

# Words that name a joint at or above the shoulders: the arms, hands and fingers, the collar
# bones, chest, neck and head. Chains with more of these than leg words, and everything below a
# joint so named, are never legs.
_UPPER_WORDS = {"neck", "lowerneck", "upperneck", "head", "chest", "upperchest", "thorax", "clavicle",
                "collar", "shoulder", "scapula", "arm", "uparm", "upperarm", "forearm", "lowerarm", "humerus",
                "radius", "ulna", "elbow", "wrist", "hand", "palm", "finger", "fingers", "thumb"}
_LEG_WORDS = {"leg", "upleg", "upperleg", "lowerleg", "thigh", "femur", "knee", "shin", "calf", "tibia",
              "ankle", "foot", "toe", "toes", "toebase", "hip", "heel", "ball"}
_NECK_WORDS = {"neck", "lowerneck", "upperneck"}


def _stems(name: str) -> set[str]:
    """A name's words without digits, each also with a glued side letter peeled off (lhand, footl)."""
    out = set()
    for w in _words(name):
        w = w.strip("0123456789")
        if not w:
            continue
        out.add(w)
        if len(w) > 3 and w[0] in "lr":
            out.add(w[1:])
        if len(w) > 3 and w[-1] in "lr":
            out.add(w[:-1])
    return out


def _translating(clip: Clip, frames: np.ndarray, bone: np.ndarray) -> np.ndarray:
    """bool [J]: joints whose position channels move (by more than _TRANSLATES of the longest bone)
    over the sampled frames: the one that carries the body (the pelvis, or a root above it)."""
    if not frames.size or not bone.size:
        return np.zeros(clip.n_joints, dtype=bool)
    pos = clip.positions[frames]
    spread = np.abs(pos.max(axis=0) - pos.min(axis=0)).max(axis=-1)
    return spread > _TRANSLATES * float(bone.max())


def _neck_side(names: Sequence[str], parents: np.ndarray, kids: list[list[int]], main: np.ndarray,
               pairs: Sequence[tuple[int, int, int]], translating: np.ndarray, bone: np.ndarray,
               static: Sequence[int], wpos: np.ndarray,
               tips: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """(bool [J]: the joints on the neck side of the spine, the pairs of `pairs` that hang there).

    A pair hangs from the shoulders or the neck side of the spine, and is never a pair of legs,
    whatever its motion, when
    1. names say so: its chains are named more as arms than as legs (LeftArm, UpperArm_L, hand_r,
       clavicle_l, ...), or it branches below a joint named as the chest, a shoulder, the neck or
       the head;
    2. another pair branches nearer the root, below it on the trunk (the legs below the arms, a
       quadruped's hind legs below its front legs);
    3. no other pair is on the trunk, names do not call it legs, and either there is a spine
       between it and the joint that carries the body (the nearest that translates: legs branch at
       that joint, or a point on it, arms a spine above it: a skeleton cut below the chest), or
       the chains start toward the trunk that goes on from their branch, or where none does,
       against the way they hang (shoulders sit toward the neck, 0.12-1.3 shoulder widths along it
       in CMU and Bandai takes; hips away from the spine, 0.16-0.74 widths: an upper body whose
       root is the chest).
    """
    J = len(parents)
    upper = np.zeros(J, dtype=bool)
    for j, name in enumerate(names):
        if not upper[j] and _stems(name) & _UPPER_WORDS:
            upper |= skeleton.descendants(parents, j)
    below = {j: skeleton.descendants(parents, j) for p in pairs for j in p}
    # The joints on the trunk side of each pair's branch: below it, but not in its chains.
    trunk = []
    for b, c1, c2 in pairs:
        side = below[b] & ~below[c1] & ~below[c2]
        side[b] = False
        trunk.append(side)
    hanging = []
    for k, (b, c1, c2) in enumerate(pairs):
        stems = [_stems(names[j]) for c in (c1, c2) for j in _main_path(main, c)]
        upper_votes = sum(bool(s & _UPPER_WORDS) for s in stems)
        leg_votes = sum(bool(s & _LEG_WORDS) for s in stems)
        if upper[b] or upper_votes > leg_votes:
            hanging.append((b, c1, c2))
        elif any(trunk[i][b] for i in range(len(pairs)) if i != k):
            hanging.append((b, c1, c2))
        elif leg_votes > upper_votes or any(trunk[k][q[0]] for q in pairs):
            continue
        elif not _at_pelvis(parents, bone, translating, static, b) or _toward_trunk(parents, kids, b, c1, c2,
                                                                                      wpos, tips, bone):
            hanging.append((b, c1, c2))
    for _, c1, c2 in hanging:
        upper |= below[c1] | below[c2]
    return upper, hanging


def _at_pelvis(parents: np.ndarray, bone: np.ndarray, translating: np.ndarray, static: Sequence[int],
               b: int) -> bool:
    """Whether `b` is the joint that carries the body (the nearest at or above it that translates,
    else the highest that moves) or sits on it (zero-length bones between)."""
    path = skeleton.chain(parents, b)
    still = set(static)
    carrier = next((k for k in range(len(path) - 1, -1, -1) if translating[path[k]]), None)
    if carrier is None:
        carrier = next((k for k, j in enumerate(path) if j not in still), len(path) - 1)
    return not bool((bone[path[carrier + 1:]] > 0.0).any())


def _toward_trunk(parents: np.ndarray, kids: list[list[int]], b: int, c1: int, c2: int, wpos: np.ndarray,
                  tips: np.ndarray, bone: np.ndarray) -> bool:
    """Whether the chains' first joints off the branch sit toward the rest of the branch's
    children (the neck and head beside the arms), or where there are none against the way the
    chains hang, in widths between them (median over the sampled frames)."""
    if not wpos.shape[0]:
        return False
    others = [c for c in kids[b] if c not in (c1, c2)]
    if others:
        rest = np.zeros(len(parents), dtype=bool)
        for c in others:
            rest |= skeleton.descendants(parents, c)
        toward = wpos[:, rest].mean(axis=1) - wpos[:, b]
    else:
        toward = wpos[:, b] - (tips[:, c1] + tips[:, c2]) / 2.0
    toward /= np.maximum(np.linalg.norm(toward, axis=-1, keepdims=True), 1e-300)
    near = _SAME_POINT * float(bone.max())
    h1, h2 = (wpos[:, _off_branch(parents, b, c, wpos, near)] for c in (c1, c2))
    width = np.maximum(np.linalg.norm(h1 - h2, axis=-1), 1e-300)
    along = (((h1 + h2) / 2.0 - wpos[:, b]) * toward).sum(axis=-1)
    return float(np.median(along / width)) > 0.0


def _chain_text(names: Sequence[str], main: np.ndarray, c: int) -> str:
    path = [names[j] for j in _main_path(main, c)]
    return " > ".join(path if len(path) <= 4 else [*path[:3], "...", path[-1]])


def _no_legs(names: Sequence[str], parents: np.ndarray, main: np.ndarray,
             hanging: Sequence[tuple[int, int, int]], refused: tuple[int, int] | None) -> str:
    """Why no legs were found: what was looked for, what was seen, how to pick the feet."""
    seen = []
    if refused is not None:
        seen.append(f"{names[refused[0]]} and {names[refused[1]]}, named as feet, hang from the shoulders "
                    "or the neck side of the spine")
    # The pair nearest the root, the likeliest to be taken for legs.
    for _, c1, c2 in sorted(hanging, key=lambda p: len(skeleton.chain(parents, p[0])))[:1]:
        seen.append(f"{_chain_text(names, main, c1)} and {_chain_text(names, main, c2)} hang from the "
                    "shoulders or the neck side of the spine: arms, never legs")
    if not seen:
        seen.append("no joint is named as a foot or ankle, and no such pair ends lowest over the take")
    return ("looked for two leg chains (hip > knee > ankle: sibling chains of three or more joints, alike, "
            "on opposite sides of the pelvis, reaching the floor) and for feet by name (LeftFoot, foot_l, "
            f"Foot.L, lfoot, ...); {'; '.join(seen)}; {PICK_FEET}")


def _more_limbs(names: Sequence[str], parents: np.ndarray, bone: np.ndarray, end_len: np.ndarray,
                main: np.ndarray, pairs: Sequence[tuple[int, int, int]], legs: Mapping[str, list[int]],
                feet: Mapping[str, list[int]], legs_from: str, wpos: np.ndarray,
                tips: np.ndarray) -> list[str]:
    """A note for each other pair of limbs that reaches the floor as the legs do (a quadruped's
    front legs): which legs are used, and how to stand on the others."""
    used = np.zeros(len(parents), dtype=bool)
    for leg in legs.values():
        used |= skeleton.descendants(parents, leg[0])
    # Heights along the way the legs hang, not `up`, which may be given (and wrong).
    pelvis = int(parents[legs["L"][0]])
    hang = ((tips[:, legs["L"][0]] + tips[:, legs["R"][0]]) / 2.0 - wpos[:, pelvis]).mean(axis=0)
    up = -hang / max(float(np.linalg.norm(hang)), 1e-300)
    height = wpos @ up  # [S, J]
    lowest = np.minimum(height[:, used].min(axis=1),
                        np.minimum(tips[:, legs["L"][0]] @ up, tips[:, legs["R"][0]] @ up))
    leg_len = max(float(bone[leg[1:leg.index(feet[s][0]) + 1]].sum()) for s, leg in legs.items())
    # Left is where the left hip sits across the body: for naming the other pair's sides.
    left = (wpos[:, legs["L"][0]] - wpos[:, legs["R"][0]]).mean(axis=0)
    notes = []
    for b, c1, c2 in pairs:
        pair = skeleton.descendants(parents, c1) | skeleton.descendants(parents, c2)
        if (pair & used).any() or used[b]:
            continue
        if not _opposite(parents, b, c1, c2, wpos, -up, _SAME_POINT * float(bone.max())):
            continue
        low = np.minimum(height[:, pair].min(axis=1), np.minimum(tips[:, c1] @ up, tips[:, c2] @ up))
        if not np.percentile(low - lowest, 25) < _FLOOR_LEGS * leg_len:
            continue
        a1, a2 = (_ankle_on(parents, bone, end_len, main, c) for c in (c1, c2))
        if (wpos[:, a1] - wpos[:, a2]).mean(axis=0) @ left < 0.0:
            a1, a2 = a2, a1
        used_l, used_r = (_chain_text(names, main, legs[s][0]) for s in "LR")
        notes.append(f"more than two limbs reach the floor: using the legs {used_l} and {used_r} (from "
                     f"{legs_from}), not "
                     f"{_chain_text(names, main, c1)} and {_chain_text(names, main, c2)}; to stand on those, "
                     f"pick their feet: in Blender, the Rig panel's foot pickers (Left Foot, Right Foot); in "
                     f"Python, feet={{'L': {names[a1]!r}, 'R': {names[a2]!r}}}")
    return notes


# -- legs from the hierarchy and the motion ------------------------------------------------------


def _pairs(names: Sequence[str], parents: np.ndarray, kids: list[list[int]], main: np.ndarray,
           reach: np.ndarray, bone: np.ndarray) -> list[tuple[int, int, int]]:
    """(branch, first, second): sibling chains of three or more joints that look alike (lengths
    within 0.7 of each other, joint counts within half) and are not named for one side: the pairs
    of limbs a skeleton may have (legs, arms, a quadruped's front legs, hair), from the hierarchy
    alone."""
    count = np.array([_subtree(parents, j).size for j in range(len(parents))])
    out = []
    for b, children in enumerate(kids):
        chains = [c for c in children if len(_main_path(main, c)) >= 3 and bone[c] + reach[c] > 0.0]
        for i, c1 in enumerate(chains):
            for c2 in chains[i + 1:]:
                l1, l2 = bone[c1] + reach[c1], bone[c2] + reach[c2]
                n1, n2 = count[c1], count[c2]
                if min(l1, l2) < 0.7 * max(l1, l2) or min(n1, n2) < 0.5 * max(n1, n2):
                    continue
                s1, s2 = (skeleton.chain_side(names, _main_path(main, c)) for c in (c1, c2))
                if s1 is not None and s1 == s2:
                    continue  # two chains on one side are never a pair of legs
                out.append((b, c1, c2))
    return out


def _moving_legs(clip: Clip, kids: list[list[int]], reach: np.ndarray, pairs: Sequence[tuple[int, int, int]],
                 upper: np.ndarray, wpos: np.ndarray, tips: np.ndarray) -> tuple[int, int] | None:
    """Of `pairs` (the ones that may be legs), the two chains whose ends are the lowest points of
    the body over the take, on opposite sides; what hangs from the neck side (`upper`: arms, a
    quadruped's front legs) is not compared. Returns their first joints (children of the
    pelvis), or None."""
    parents = clip.parents
    bone = _bone_lengths(clip)
    best, best_score = None, 0.0
    for b, c1, c2 in pairs:
        length = max(bone[c1] + reach[c1], bone[c2] + reach[c2])
        score = _low_score(parents, b, c1, c2, ~upper & ~_tails(parents, kids, bone, reach, b, c1, c2), wpos,
                           tips, length)
        if score > best_score:
            best, best_score = (c1, c2), score
    return best


def _tails(parents: np.ndarray, kids: list[list[int]], bone: np.ndarray, reach: np.ndarray, b: int, c1: int,
           c2: int) -> np.ndarray:
    """bool [J]: the tails off branch `b` beside the pair (c1, c2): unbranched chains that are no
    twin of either (another joint count or length), which may hang as low as the feet."""
    out = np.zeros(len(parents), dtype=bool)
    size = {c: _subtree(parents, c).size for c in kids[b]}
    for c in kids[b]:
        below = _subtree(parents, c)
        if c in (c1, c2) or any(len(kids[j]) > 1 for j in below):
            continue
        length = bone[c] + reach[c]
        others = [bone[x] + reach[x] for x in (c1, c2) if size[x] == size[c]]
        if any(abs(o - length) <= 0.1 * max(o, length) for o in others):
            continue  # a twin of the pair's: the other leg when the pair is a leg and a tail
        out[below] = True
    return out


def _low_score(parents: np.ndarray, b: int, c1: int, c2: int, body: np.ndarray,
               wpos: np.ndarray, tips: np.ndarray, length: float) -> float:
    """How far the pair's ends reach past every other joint of `body` (bool [J]), along the
    direction they hang in (median over the sampled frames, in chain lengths); <= 0 when the pair
    is not on opposite sides of its branch or something else hangs lower."""
    down = (tips[:, c1] + tips[:, c2]) / 2.0 - wpos[:, b]
    mean_down = down.mean(axis=0)
    norm = float(np.linalg.norm(mean_down))
    if not norm > 0.0:
        return 0.0
    d = mean_down / norm
    if not _opposite(parents, b, c1, c2, wpos, d, _SAME_POINT * length):
        return 0.0
    pair = skeleton.descendants(parents, c1) | skeleton.descendants(parents, c2)
    along = wpos @ d  # [S, J]
    tip_along = np.maximum(tips[:, c1] @ d, tips[:, c2] @ d)
    inside = np.maximum(along[:, pair].max(axis=1), tip_along)
    # Joints above the branch are not the body (a dummy root may sit on the floor at the origin).
    others = body & ~pair
    others[b] = True
    others[skeleton.chain(parents, b)[:-1]] = False
    outside = along[:, others].max(axis=1)  # the branch joint at least
    return float(np.median(inside - outside)) / length


def _opposite(parents: np.ndarray, b: int, c1: int, c2: int, wpos: np.ndarray, d: np.ndarray,
              near: float) -> bool:
    """Whether the chains' first joints off the branch (the hips) sit on either side of the line
    the pair hangs along, `d` (the feet may both be ahead of it, toes forward)."""
    o1 = (wpos[:, _off_branch(parents, b, c1, wpos, near)] - wpos[:, b]).mean(axis=0)
    o2 = (wpos[:, _off_branch(parents, b, c2, wpos, near)] - wpos[:, b]).mean(axis=0)
    o1, o2 = o1 - d * (o1 @ d), o2 - d * (o2 @ d)
    return bool(o1 @ o2 < 0.0)


def _off_branch(parents: np.ndarray, b: int, c: int, wpos: np.ndarray, near: float = 0.0) -> int:
    """The first joint down from c (toward its deepest descendant) that sits away from the branch
    joint b (further than `near`): CMU's LHipJoint sits on the pelvis, LeftUpLeg is the hip."""
    j = c
    while True:
        if float(np.abs(wpos[:, j] - wpos[:, b]).max()) > near:
            return j
        below = [k for k in range(j + 1, len(parents)) if parents[k] == j]
        if not below:
            return j
        j = below[0]


def _ankle_on(parents: np.ndarray, bone: np.ndarray, end_len: np.ndarray, main: np.ndarray,
              first: int) -> int:
    """The ankle of the leg chain starting at `first`: two long bones below the hip."""
    path = _main_path(main, first)
    # The hip is the first joint away from the branch point (CMU's LHipJoint sits on it).
    k0 = next((k for k, j in enumerate(path) if bone[j] > 0.0), 0)
    path = path[k0:]
    along = np.concatenate([[0.0], np.cumsum(bone[path[1:]])])
    total = along[-1] + end_len[path[-1]]
    if total <= 0.0:
        return path[-1]
    k = int(np.argmax(along >= _ANKLE_FRACTION * total - 1e-12 * total))
    return path[max(k, min(2, len(path) - 1))]


def _pair_chains(parents: np.ndarray, pair: tuple[int, int]) -> tuple[int, int]:
    """The children of the pair's common ancestor that lead to each of the two joints."""
    top = _common_ancestor(parents, *pair)
    out = []
    for j in pair:
        path = skeleton.chain(parents, j)
        out.append(path[path.index(top) + 1] if path[-1] != top else top)
    return out[0], out[1]


def _leg_chain(parents: np.ndarray, bone: np.ndarray, main: np.ndarray, pelvis: int, ankle: int) -> list[int]:
    """[hip, ..., ankle, ...toes]: from the first joint below the pelvis that sits away from it,
    down the ankle's main chain."""
    path = skeleton.chain(parents, ankle)
    path = path[path.index(pelvis) + 1:]
    k0 = next((k for k, j in enumerate(path) if bone[j] > 0.0), 0)
    return path[k0:] + _main_path(main, ankle)[1:]


# -- up, sides, facing -----------------------------------------------------------------------------


def _infer_up(wpos: np.ndarray, pelvis: int, ankles: list[int], head: int | None) -> np.ndarray:
    """Up from the animated pose: from the ankles to the pelvis (and on to the head), snapped to a
    file axis when within _SNAP_DEGREES of one. Along a take's travel the feet trail and lead the
    pelvis, so the part along the travel is left out (travel is over the floor)."""
    rise = wpos[:, pelvis] - wpos[:, ankles].mean(axis=1)
    v = rise.mean(axis=0)
    leg = float(np.linalg.norm(rise, axis=-1).mean())
    v = v / max(float(np.linalg.norm(v)), 1e-300)
    if head is not None and head != pelvis:
        w = (wpos[:, head] - wpos[:, pelvis]).mean(axis=0)
        n = float(np.linalg.norm(w))
        if n > 0.0:
            v = v + w / n
    travel = wpos[-1, pelvis] - wpos[0, pelvis]
    n = float(np.linalg.norm(travel))
    v = v / max(float(np.linalg.norm(v)), 1e-300)
    # Where the feet travel as far as the pelvis, the travel is over the floor (a take that sits
    # down or gets up moves the pelvis alone).
    feet = wpos[-1, ankles].mean(axis=0) - wpos[0, ankles].mean(axis=0)
    if n > 0.25 * leg and np.linalg.norm(feet - travel) < 0.5 * n:
        along = travel / n
        v = v - along * (v @ along)
    v = v / max(float(np.linalg.norm(v)), 1e-300)
    return _snap(v, _SNAP_DEGREES)


def _snap(v: np.ndarray, degrees: float) -> np.ndarray:
    """The signed file axis nearest the unit v when within `degrees` of it, else v."""
    axis = int(np.argmax(np.abs(v)))
    if abs(v[axis]) >= math.cos(math.radians(degrees)):
        snapped = np.zeros(3)
        snapped[axis] = math.copysign(1.0, v[axis])
        return snapped
    return v


def _sides(names: Sequence[str], chains: list[list[int]], legs_from: str) -> tuple[int, int, str | None]:
    """(left chain, right chain, evidence) from names; evidence None when names do not say."""
    if legs_from == "user":
        return 0, 1, "user"
    s0, s1 = skeleton.chain_side(names, chains[0]), skeleton.chain_side(names, chains[1])
    if s0 is not None and s1 is not None and s0 != s1:
        return (0, 1, "names") if s0 == "L" else (1, 0, "names")
    if s0 is not None and s1 is None:
        return (0, 1, "names") if s0 == "L" else (1, 0, "names")
    if s1 is not None and s0 is None:
        return (1, 0, "names") if s1 == "L" else (0, 1, "names")
    return 0, 1, None


def _floor(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    return v - (v @ up)[..., None] * up


def _facing(clip: Clip, wrot: np.ndarray, wpos: np.ndarray, tips: np.ndarray, up: np.ndarray,
            chains: list[list[int]], ankles: Sequence[int], root: int,
            sides_from: str | None) -> tuple[int, np.ndarray | None, str, str]:
    """(swap, forward in the root's frame, evidence, note). The facing is up x (right hip - left
    hip) over the take; the toes say its sign. When sides came from names and the toes disagree,
    the names win and the note says so; without names the toes set the sides (swap 1)."""
    if not wpos.shape[0]:
        return 0, None, "default", ""
    left, right = chains[0][0], chains[1][0]
    across = _floor(wpos[:, right] - wpos[:, left], up)
    facing = np.cross(up, across)
    norm = np.linalg.norm(facing, axis=-1, keepdims=True)
    ok = norm[:, 0] > 0.0
    if not ok.any():
        return 0, None, "default", ""
    facing = np.where(norm > 0.0, facing / np.maximum(norm, 1e-300), 0.0)
    toes = np.zeros(3)
    for a in ankles:
        toes += _floor(tips[:, a] - wpos[:, a], up).mean(axis=0)
    sign = float(np.sign(toes @ facing.mean(axis=0)))
    note = ""
    swap = 0
    if sign < 0.0:
        if sides_from in ("names", "user"):
            note = (f"the toes point away from the facing the {sides_from} give (left "
                    f"{clip.names[left]}, right {clip.names[right]}): a mirrored skeleton?")
            sign = 1.0
        else:
            swap = 1
            facing = -facing
            sign = 1.0
    if sign == 0.0:
        sign = 1.0
    # Into the root's own frame, where the facing is fixed while the root turns.
    inv = quat.inv(wrot[:, root])
    local = quat.mul_vec(inv, facing).mean(axis=0)
    hips = quat.mul_vec(inv, across).mean(axis=0)
    n, m = float(np.linalg.norm(local)), float(np.linalg.norm(hips))
    if not (n > 0.0 and m > 0.0):
        return swap, None, "default", note
    return swap, _square(local / n, hips / m), "motion", note


def _square(f: np.ndarray, hips: np.ndarray) -> np.ndarray:
    """The facing f made square to the hip line: the mean over the take keeps the pelvis's mean
    tilt about the hip line (4-8 degrees forward in CMU takes), which moves the facing up or
    down, never along the floor. Not snapped to an axis of the root's frame: the same world
    motion written with other rest frames must face the same way."""
    f = f - hips * (f @ hips)
    return f / np.linalg.norm(f)


def _default_forward(up: np.ndarray) -> np.ndarray:
    return root_motion.floor_axes(up)[0]


# -- spine, head, arms ------------------------------------------------------------------------------


def _spine(names: Sequence[str], parents: np.ndarray, kids: list[list[int]], reach: np.ndarray,
           pelvis: int, legs: set[int]) -> tuple[list[int], int | None]:
    """(spine joints between pelvis and head, head): up the children that are not legs, at each
    branch taking the one that has no look-alike sibling (the neck, not a collar bone)."""
    spine: list[int] = []
    j = pelvis
    while True:
        if j != pelvis and "head" in _words(names[j]):
            break
        options = [c for c in kids[j] if not any(x in legs for x in _subtree(parents, c))]
        options = [c for c in options if not _has_twin(parents, kids[j], c)]
        if not options:
            break
        nxt = max(options, key=lambda c: (_subtree(parents, c).size, reach[c], -c))
        spine.append(nxt)
        j = nxt
    if not spine:
        return [], None
    return spine[:-1], spine[-1]


def _has_twin(parents: np.ndarray, siblings: list[int], c: int) -> bool:
    """Whether a sibling of `c` has a subtree of the same size (a collar bone's twin)."""
    n = _subtree(parents, c).size
    for o in siblings:
        if o != c and _subtree(parents, o).size == n and n > 1:
            return True
    return False


def _arms(names: Sequence[str], parents: np.ndarray, kids: list[list[int]], reach: np.ndarray,
          main: np.ndarray, spine: list[int], head: int | None, up: np.ndarray, forward: np.ndarray | None,
          root: int, wrot: np.ndarray, wpos: np.ndarray) -> dict[str, list[int]]:
    """{side: [shoulder, ..., hand]}: the twin chains that branch off the spine."""
    for j in spine + ([head] if head is not None else []):
        twins = [c for c in kids[j] if _has_twin(parents, kids[j], c) and len(_main_path(main, c)) >= 3]
        if len(twins) != 2:
            continue
        a, b = twins
        sa, sb = (skeleton.chain_side(names, _main_path(main, c)) for c in (a, b))
        if sa == "R" or sb == "L":
            a, b = b, a
        elif sa is None and sb is None and forward is not None and wpos.shape[0]:
            facing = quat.mul_vec(wrot[:, root], forward)
            left = np.cross(up, facing)
            if ((wpos[:, a] - wpos[:, b]) * left).sum(axis=-1).mean() < 0.0:
                a, b = b, a
        return {"L": _main_path(main, a), "R": _main_path(main, b)}
    return {}


# -- height ------------------------------------------------------------------------------------


def _height(clip: Clip, parents: np.ndarray, bone: np.ndarray, end_len: np.ndarray, main: np.ndarray,
            up: np.ndarray, feet: Mapping[str, list[int]], head: int | None) -> float:
    """Standing height in file units: bone lengths from a sole (the foot's deepest tip) up to the
    head's top, as if stood straight; the rest pose's tips when there are no legs or head."""
    if not feet or head is None:
        return skeleton.height(parents, clip.offsets, clip.end_parents, clip.end_offsets, up)
    # The head's top: down its main path, but not into a pair of chains (long hair, a hat's
    # ribbons), which hang from the head rather than top it.
    kids = skeleton.children(parents)
    crown = _main_path(main, head)
    for k in range(1, len(crown)):
        if _has_twin(parents, kids[crown[k - 1]], crown[k]):
            crown = crown[:k]
            break
    top = crown[-1]
    lengths = []
    for foot in feet.values():
        sole = _main_path(main, foot[0])[-1]
        pelvis = _common_ancestor(parents, sole, top)
        down = skeleton.chain(parents, sole)
        down = down[down.index(pelvis) + 1:]
        rise = skeleton.chain(parents, top)
        rise = rise[rise.index(pelvis) + 1:]
        lengths.append(bone[down].sum() + end_len[sole] + bone[rise].sum() + end_len[top])
    return float(max(lengths))


def _has_head(names: Sequence[str], parents: np.ndarray, spine: list[int], head: int | None,
              arms: Mapping[str, list[int]]) -> bool:
    """Whether the spine's top is a head: named so; else, where no joint of the spine is named as
    the neck either (names that say nothing), a top past the joint the arms branch from."""
    if head is None:
        return False
    trunk = [*spine, head]
    stems = [_stems(names[j]) for j in trunk]
    if any(s & {"head", "skull"} for s in stems):
        return True
    if any(s & _NECK_WORDS for s in stems) or not arms:
        return False  # a neck and no head: the head was cut off
    return int(parents[arms["L"][0]]) in trunk[:-1]


def _height_guessed(clip: Clip, parents: np.ndarray, bone: np.ndarray, end_len: np.ndarray, main: np.ndarray,
                    up: np.ndarray, legs: Mapping[str, list[int]], feet: Mapping[str, list[int]],
                    head: int | None, hanging: Sequence[tuple[int, int, int]]) -> tuple[float, str]:
    """(standing height in file units, what it was read from) for part of a body: from the legs
    (thigh and shin, _LEG_OF_HEIGHT of a height; at least sole to the spine's top), else from the
    arms (the pair that hangs nearest the root, _ARM_OF_HEIGHT), else the rest pose's tips."""
    if legs:
        thigh_shin = max(float(bone[leg[1:leg.index(feet[s][0]) + 1]].sum()) for s, leg in legs.items())
        measured = _height(clip, parents, bone, end_len, main, up, feet, head) if head is not None else 0.0
        return max(thigh_shin / _LEG_OF_HEIGHT, measured), "the legs' length"
    if hanging:
        _, c1, c2 = min(hanging, key=lambda p: len(skeleton.chain(parents, p[0])))
        arm = max(float(bone[path[1:]].sum() + end_len[path[-1]])
                  for path in (_main_path(main, c1), _main_path(main, c2)))
        if arm > 0.0:
            return arm / _ARM_OF_HEIGHT, "the arms' length"
    return skeleton.height(parents, clip.offsets, clip.end_parents, clip.end_offsets, up), "the rest pose"


# -- printing --------------------------------------------------------------------------------------


def _vector(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:+.3f}" for x in v) + ")"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m core.body FILE...`: print the body map of each BVH file."""
    import argparse

    from . import bvh

    parser = argparse.ArgumentParser(prog="python -m core.body", description=main.__doc__)
    parser.add_argument("files", nargs="+", help="BVH files")
    parser.add_argument("--feet", help="LEFT,RIGHT ankle joint names, to override the legs")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.files:
        try:
            clip = bvh.load(path)
            if args.feet:
                left, _, right = args.feet.partition(",")
                clip.body = find(clip, feet={"L": left.strip(), "R": right.strip()})
            print(f"== {path}")
            print(inspect(clip))
        except (ValueError, OSError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def inspect(clip: Clip) -> str:
    """The body map and the take's facts (fps, frames, motion start) as lines for people."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BodyWarning)
        body = clip.body
    return (f"{clip.n_joints} joints, {clip.n_frames} frames at {clip.fps:g} fps, motion start "
            f"{clip.motion_start}\n" + body.describe())


if __name__ == "__main__":
    sys.exit(main())
