"""The body map on parts of bodies and on bodies with more than two legs.

Every CMU and Bandai take, in every convention of tests/variants.py, is cut in code as a user
cleaning odd files would cut it (legs, one leg, the head off; the upper or the lower body alone):
the map has the take's own legs or none, never an arm; where it has none, asking for the feet
raises `body.NoLegsError` saying what was looked for and how to pick the feet; where only part of
a body is there, the unit is still the one the take is written in, reported as a guess. The
oracles are the cuts' construction (which joint was which in the take, named by its source) and
the unit each variant is written in, never the map of the cut skeleton itself.

Bodies with more than two limbs are built in code: a four-legged walker (its front legs reach the
floor too: a warning names the legs used and how to choose the others), and the takes with a tail
and long hair added (the take's legs and footsteps, no warning).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import variants as V
from fixtures import CMU, cmu_path

from core import body, bvh, contacts, footlock, quat, skeleton, sync
from core.clip import Clip

BANDAI_DIR = Path(__file__).resolve().parents[1] / "data" / "bandai"
TAKES = [("cmu", name) for name in CMU] + [("bandai", p.name) for p in sorted(BANDAI_DIR.glob("*.bvh"))]
UNIT = {"cmu": 0.05644, "bandai": 0.01}
# The unit each re-expression is written in, where it is not the take's own.
SCALED = {"meters": 1.0, "inches": 0.0254, "+X bones, no names, Z-up, cm": 0.01}
NO_LEGS = ("legs removed", "left leg removed", "right leg removed", "upper body only",
           "upper body from the chest", "the chest and arms alone", "legs and head removed")


def load(source: str, name: str) -> Clip:
    path = cmu_path(name) if source == "cmu" else BANDAI_DIR / name
    if not path.is_file():
        pytest.fail(f"missing test fixture {path}")
    return bvh.load(path)


def quiet_body(clip: Clip) -> body.Body:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", body.BodyWarning)
        return clip.body


class Parts(NamedTuple):
    """Joints of a take by the names its source gives them."""

    legs: list[int]  # each leg's first joint below the pelvis
    spine: int  # the spine's first joint
    chest: int  # where the arms branch
    neck: int
    head: int

    def moved(self, index: np.ndarray) -> Parts:
        """The same joints in a variant, index[j] the variant's joint for j."""
        return Parts([int(index[j]) for j in self.legs], *(int(index[j]) for j in self[1:]))


def parts(clip: Clip) -> Parts:
    names = clip.names
    if "UpperLeg_L" in names:  # Bandai
        return Parts([names.index("UpperLeg_L"), names.index("UpperLeg_R")], names.index("Spine"),
                     names.index("Chest"), names.index("Neck"), names.index("Head"))
    if "lowerback" in names:  # CMU 131
        return Parts([names.index("LHipJoint"), names.index("RHipJoint")], names.index("lowerback"),
                     names.index("Chest2"), names.index("lowerneck"), names.index("Head"))
    return Parts([names.index("LHipJoint"), names.index("RHipJoint")], names.index("LowerBack"),
                 names.index("Spine1"), names.index("Neck"), names.index("Head"))


def cut(clip: Clip, what: str, p: Parts) -> V.Variant:
    """`clip` cut as `what` says (NO_LEGS, "lower body only", "head removed")."""
    if what == "the chest and arms alone":
        upper, index = V.only(clip, p.chest)
        part, cut_index = V.without(upper, [int(index[p.neck])])
        return part, np.where(index >= 0, cut_index[np.maximum(index, 0)], -1)
    if what == "upper body only":
        return V.only(clip, p.spine)
    if what == "upper body from the chest":
        return V.only(clip, p.chest)
    return V.without(clip, {"legs removed": p.legs, "left leg removed": p.legs[:1],
                            "right leg removed": p.legs[1:], "legs and head removed": [*p.legs, p.head],
                            "lower body only": [p.spine], "head removed": [p.head]}[what])


def variants(clip: Clip, unit: float) -> dict[str, tuple[Callable[[Clip], V.Variant], float]]:
    """The take as read and re-expressed (tests/variants.py), with the unit each is written in."""
    b = clip.body
    legs = {side: [b.legs[side][0], int(clip.parents[b.feet[side][0]]), *b.feet[side]] for side in b.legs}
    out: dict[str, tuple[Callable[[Clip], V.Variant], float]] = {"as read": (V.identity, unit)}
    for name, remake in V.remakes(clip).items():
        out[name] = (remake, SCALED.get(name, unit))
    out["a moving helper bone first"] = (V.moving_bone_first, unit)
    for convention in V.CONVENTIONS:
        out[f"{convention} names"] = (partial(renamed, legs=legs, convention=convention), unit)
    return out


def renamed(clip: Clip, *, legs: dict[str, list[int]], convention: str) -> V.Variant:
    return V.renamed(clip, legs, convention)


# -- the cutting itself ---------------------------------------------------------------------------


@pytest.mark.parametrize("what", [*NO_LEGS, "lower body only", "head removed"])
def test_a_cut_keeps_the_world_motion_of_every_joint_left(what):
    clip = load("cmu", "02_01")
    part, index = cut(clip, what, parts(clip))
    kept = np.flatnonzero(index >= 0)
    assert part.n_joints == kept.size
    assert [part.names[index[j]] for j in kept] == [clip.names[j] for j in kept]
    wrot, wpos = clip.fk()
    prot, ppos = part.fk()
    np.testing.assert_allclose(ppos[:, index[kept]], wpos[:, kept], rtol=0, atol=1e-9 * clip.height)
    same = np.abs((prot[:, index[kept]] * wrot[:, kept]).sum(-1))  # |q . p| = 1: one rotation
    np.testing.assert_allclose(same, 1.0, rtol=0, atol=1e-12)
    # Every leaf keeps an End Site, as a BVH writer closes it, and the cut reads back from BVH.
    leaves = [j for j, k in enumerate(skeleton.children(part.parents)) if not k]
    assert set(leaves) <= set(part.end_parents.tolist())
    again = bvh.loads(bvh.dumps(part))
    np.testing.assert_allclose(again.fk()[1], ppos, rtol=0, atol=1e-6 * clip.height)


# -- cut skeletons of every take, in every convention -----------------------------------------------


@pytest.mark.parametrize(("source", "name"), TAKES)
def test_cut_skeletons_have_their_own_legs_or_none_never_an_arm(source, name):
    clip = load(source, name)
    p = parts(clip)
    legs, feet, arms = clip.body.legs, clip.body.feet, clip.body.arms
    assert all("Shoulder" in clip.names[a[0]] or "Collar" in clip.names[a[0]] for a in arms.values())
    arm_joints = {j for chain in arms.values() for j in chain}
    for label, (remake, unit) in variants(clip, UNIT[source]).items():
        other, index = remake(clip)
        named = "names" not in label  # the re-expressions that keep the take's own names
        for what in [*NO_LEGS, "lower body only", "head removed"]:
            part, cut_index = cut(other, what, p.moved(index))
            where = np.where(index >= 0, cut_index[np.maximum(index, 0)], -1)  # take's joint -> cut's
            back = {int(k): j for j, k in enumerate(where) if k >= 0}
            b = quiet_body(part)
            said = f"{name}, {label}, {what}"
            taken = {back.get(j) for chain in b.legs.values() for j in chain}  # None: a joint a variant added
            assert not taken & arm_joints, said
            assert b.meters_per_unit == unit, said
            if what in NO_LEGS:
                assert not b.legs and not b.feet, said
                assert b.evidence["unit"] == "guess", said
                with pytest.raises(body.NoLegsError, match="Rig panel's foot pickers"):
                    contacts.footsteps(part)
                continue
            assert {s: [back[j] for j in b.legs[s] if j in back] for s in "LR"} == legs, said
            assert {s: [back[j] for j in b.feet[s] if j in back] for s in "LR"} == feet, said
            if what == "lower body only" or named:
                assert b.evidence["unit"] == "guess", said
            assert not [w for w in b.warnings if "unit" not in w], said


def test_no_legs_says_what_was_looked_for_what_was_seen_and_how_to_pick_the_feet():
    clip = load("bandai", "dataset-1_walk_normal_001.bvh")
    part, _ = V.without(clip, parts(clip).legs)
    anonymous, _ = V.renamed(part, {}, None)
    for c in (part, anonymous):
        with pytest.raises(body.NoLegsError) as caught:
            contacts.footsteps(c)
        text = str(caught.value)
        assert isinstance(caught.value, ValueError)
        assert text.startswith(f"no legs found in {c.name!r}: looked for two leg chains (hip > knee > ankle")
        assert "in Blender, the Rig panel's foot pickers" in text and "feet={'L': left_ankle" in text
        shoulder = c.names[part.names.index("Shoulder_L")]  # the same joint, named or not
        assert f"{shoulder} > " in text and "hang from the shoulders or the neck side of the spine" in text
        assert caught.value.problem == c.body.problem
        with pytest.raises(body.NoLegsError):
            footlock.lock_feet(c)
        with pytest.raises(body.NoLegsError):
            sync.loop_cycle(c)
    # The feet can still be picked, even on the hands: the user decides.
    given = body.find(part, feet={"L": "Hand_L", "R": "Hand_R"})
    assert given.evidence["legs"] == "user" and part.names[given.feet["L"][0]] == "Hand_L"


def test_wrists_named_as_feet_are_not_taken_for_the_legs():
    clip = load("cmu", "02_01")
    legs = clip.body.legs
    names = list(clip.names)
    for s, word in (("L", "Left"), ("R", "Right")):
        names[legs[s][2]] = f"{word}Tarsus"
        names[clip.body.arms[s][3]] = f"{word}Foot"
    lying = V.fresh(clip, names=names)
    with pytest.warns(body.BodyWarning, match="hang from the shoulders or the neck side of the spine"):
        b = lying.body
    assert b.legs == legs and b.evidence["legs"] == "motion"


# -- the unit of part of a body ---------------------------------------------------------------------


def test_inspect_says_the_unit_is_a_guess_and_how_to_set_it(tmp_path):
    clip = load("cmu", "02_01")
    lower, _ = V.without(clip, [parts(clip).spine])
    path = tmp_path / "lower.bvh"
    bvh.save(lower, path)
    out = subprocess.run([sys.executable, "-m", "core.body", str(path)], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=True).stdout
    assert "unit 0.05644 m (guess)" in out
    assert "the unit is a guess (no head" in out and "the Rig panel's Unit" in out
    assert "clip.meters_per_unit = " in out
    assert "leg L: LeftUpLeg > LeftLeg > LeftFoot > LeftToeBase" in out
    # Set, the unit is the user's and no guess is reported.
    told = V.fresh(lower, meters_per_unit=0.05644)
    assert told.body.evidence["unit"] == "user" and not told.body.warnings


def test_the_whole_body_reads_its_unit_from_its_height_with_no_warning():
    for source, name in TAKES:
        b = load(source, name).body
        assert b.evidence["unit"] == "height" and not b.warnings, name


# -- four legs, a tail, long hair -------------------------------------------------------------------

LEG = ("thigh", "shin", "foot", "toe")


def quadruped(frames: int = 240, fps: float = 60.0, period: float = 1.0, speed: float = 0.6) -> Clip:
    """A four-legged walker in meters, Y up, facing +Z: a pelvis carrying the hind legs, a spine to
    the chest carrying the front legs, a neck and a head. Each leg (thigh, shin, foot, toe; the
    knee placed by two-bone IK) plants its foot on the floor for 70 % of the cycle and swings it
    forward, lifting 8 cm, in the rest; a walk: hind left, front left, hind right, front right a
    quarter cycle apart. Identity rotations: each joint's translation is its world offset from
    its parent."""
    names = ["pelvis", "spine", "chest", "neck", "head"]
    parents = [-1, 0, 1, 2, 3]
    rest = [np.zeros(3), [0, 0.01, 0.3], [0, 0.01, 0.3], [0, 0.15, 0.12], [0, 0.05, 0.15]]
    t = np.arange(frames) / fps
    body_z = speed * t
    world = {0: np.stack([np.zeros(frames), 0.6 + 0.01 * np.sin(4 * np.pi * t / period), body_z], axis=-1)}
    for j in range(1, 5):
        world[j] = world[parents[j]] + np.asarray(rest[j], dtype=np.float64)
    stance, stride, bone = 0.7, speed * period, 0.3
    for end, hip_parent, down in (("", 0, 0.0), ("front_", 2, 0.25)):
        for side, x, shift in (("L", 0.1, 0.0), ("R", -0.1, 0.5)):
            first = len(names)
            names += [f"{end}{part}.{side}" for part in LEG]
            parents += [hip_parent, first, first + 1, first + 2]
            hip = world[hip_parent] + [x, -0.05, 0.0]
            cycles = (t - (down + shift) * period) / period
            k = np.floor(cycles)
            u = np.clip(((cycles - k) - stance) / (1.0 - stance), 0.0, 1.0)
            zero = world[hip_parent][0, 2] + speed * (down + shift) * period + stride * stance / 2
            lift = 0.08 + 0.08 * np.sin(np.pi * u)
            ankle = np.stack([np.full(frames, x), lift, zero + stride * (k + u)], -1)
            reach = ankle - hip
            d = np.linalg.norm(reach, axis=-1, keepdims=True)
            assert d.max() < 2 * bone
            ahead = np.stack([np.zeros(frames), -reach[:, 2], reach[:, 1]], -1) / d  # knee forward
            if ahead[0, 2] < 0:
                ahead = -ahead
            knee = hip + reach / 2 + ahead * np.sqrt(bone**2 - (d / 2) ** 2)
            toe = ankle + np.array([0.0, -0.05, 0.1])
            for j, w in zip(range(first, first + 4), (hip, knee, ankle, toe), strict=True):
                world[j] = w
    J = len(names)
    positions = np.stack([world[j] - (world[parents[j]] if parents[j] >= 0 else 0.0) for j in range(J)],
                         axis=1)
    every = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] * J
    toes = [j for j, n in enumerate(names) if n.split(".")[0].endswith("toe")]
    return Clip(names, parents, positions[0], quat.identity((frames, J)), positions, fps, channels=every,
                end_parents=[*toes, 4], end_offsets=np.array([[0, 0, 0.04]] * len(toes) + [[0, 0.05, 0.1]]),
                motion_start=0, name="quadruped")


@pytest.mark.parametrize("convention", ["named", "no names", "+X bones, no names, Z-up"])
def test_a_four_legged_walker_warns_naming_the_legs_used_and_how_to_choose_the_others(convention):
    clip = quadruped()
    if convention != "named":
        clip, _ = V.renamed(clip, {}, None)
    if convention.startswith("+X"):
        clip, _ = V.z_up(V.bones_along_x(clip)[0])
    names = quadruped().names
    with pytest.warns(body.BodyWarning, match="more than two limbs reach the floor") as caught:
        b = clip.body
    (note,) = [str(w.message) for w in caught if "limbs" in str(w.message)]
    # The hind legs (at the pelvis, nearest the root) are used; the front ones are named with
    # their feet, ready to pass.
    assert {s: [names[j] for j in b.legs[s]] for s in "LR"} == {s: [f"{p}.{s}" for p in LEG] for s in "LR"}
    front = {s: clip.names[names.index(f"front_foot.{s}")] for s in "LR"}
    hind = clip.names[names.index("thigh.L")]
    assert f"using the legs {hind} > " in note
    assert f"feet={{'L': {front['L']!r}, 'R': {front['R']!r}}}" in note and "Rig panel's foot pickers" in note
    # Choosing the front feet stands on them: the user chose, no other pair is pointed out.
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always", body.BodyWarning)
        chosen = body.find(clip, feet=front)
    assert [names[j] for j in chosen.legs["L"]] == [f"front_{p}.L" for p in LEG]
    assert not [w for w in told if "limbs" in str(w.message)]
    steps = contacts.footsteps(clip)
    assert len(steps["FootDown_L"]) >= 3 and len(steps["FootDown_R"]) >= 3


def with_chains(clip: Clip, under: int, name: str, points: np.ndarray) -> Clip:
    """`clip` with a chain of joints `name`_1..n under joint `under`, through `points` [n + 1, 3]
    given in `under`'s own frame and carried rigidly by it (identity local rotations; the last
    point is the chain's End Site)."""
    T, J = clip.n_frames, clip.n_joints
    n = len(points) - 1
    offsets = np.diff(np.concatenate([np.zeros((1, 3)), points]), axis=0)
    parents = [*clip.parents.tolist(), under, *range(J, J + n - 1)]
    names = [*clip.names, *[f"{name}_{k + 1}" for k in range(n)]]
    every = [*clip.channels, *[("Zrotation", "Xrotation", "Yrotation")] * n]
    moving = np.broadcast_to(offsets[:n], (T, n, 3))
    return V.fresh(clip, names=names, parents=parents, offsets=np.concatenate([clip.offsets, offsets[:n]]),
                   rotations=np.concatenate([clip.rotations, quat.identity((T, n))], axis=1),
                   positions=np.concatenate([clip.positions, moving], axis=1),
                   channels=every, end_parents=[*clip.end_parents.tolist(), J + n - 1],
                   end_offsets=np.concatenate([clip.end_offsets, offsets[n:]]))


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize(("source", "name"), [("cmu", "02_01"), ("cmu", "131_03"),
                                              ("bandai", "dataset-1_walk_normal_001.bvh")])
def test_a_tail_and_long_hair_that_hang_low_leave_the_legs_and_say_nothing(source, name, named):
    clip = load(source, name)
    b = clip.body
    hips, head = b.pelvis, b.head
    assert hips is not None and head is not None
    H, up, f0 = clip.height, clip.up, clip.motion_start
    wrot, wpos = clip.fk()
    feet = [j for side in b.feet.values() for j in side]
    floor = float((wpos[:, feet] @ up).min())
    facing = quat.mul_vec(wrot[f0, clip.root], clip.forward)
    facing -= up * (facing @ up)
    facing /= np.linalg.norm(facing)
    left = np.cross(up, facing)
    # A tail from the hips, back and down to 4 % of the height above the floor (at the first
    # frame; the hips carry it), and a braid each side of the head, down to the waist.
    drop = float(wpos[f0, hips] @ up) - floor - 0.04 * H
    tail = np.array([-facing * 0.04 * H * k - up * drop * k / 7 for k in range(1, 8)])
    furry = with_chains(clip, hips, "Tail", quat.mul_vec(quat.inv(wrot[f0, hips]), tail))
    for side, x in (("L", 1.0), ("R", -1.0)):
        braid = np.array([left * x * 0.06 * H - facing * 0.04 * H - up * 0.055 * H * k for k in range(7)])
        furry = with_chains(furry, head, f"Hair.{side}", quat.mul_vec(quat.inv(wrot[f0, head]), braid))
    if not named:
        furry, _ = V.renamed(furry, {}, None)
    ends = furry.end_site_positions(*furry.fk())
    tip = ends[f0:, clip.end_parents.size] @ up
    assert np.median(tip) < floor + 0.1 * H  # the tail hangs low
    with warnings.catch_warnings():
        warnings.simplefilter("error", body.BodyWarning)
        got = furry.body
    assert got.legs == b.legs and got.feet == b.feet and got.head == head
    # The standing height ends at the head's top, not at the braids' ends.
    assert furry.height == pytest.approx(H, rel=1e-12)
    assert furry.meters_per_unit == clip.meters_per_unit and got.evidence["unit"] == "height"
    want = contacts.footsteps(clip)
    found = contacts.footsteps(furry)
    for key in want:
        np.testing.assert_allclose(found[key], want[key], rtol=0, atol=1e-6, err_msg=key)
