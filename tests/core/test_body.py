"""The body map: legs, feet, up, facing and unit read right from any source.

Invariance: every CMU and Bandai take, re-expressed in code with the same world motion in other
conventions (tests/variants.py: rest frames, axes, units, names, extra and dummy joints), gives
the same legs and feet, up, unit, facing within 2 degrees and the same footsteps. The oracles are
the variants' own construction (which joint is which, the axis and unit they were written in)
and the original take's footsteps, never the map of the variant itself.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import variants as V
from fixtures import CMU, cmu_path

from core import blend, body, bvh, contacts, quat, root, sync
from core.clip import Clip

DATA = Path(__file__).resolve().parents[1] / "data"
BANDAI_DIR = DATA / "bandai"
BANDAI = sorted(p.name for p in BANDAI_DIR.glob("*.bvh"))
TAKES = [("cmu", name) for name in CMU] + [("bandai", name) for name in BANDAI]
# The joints each source names as legs (hip, knee, ankle, toe), the oracle for the real takes.
LEG_NAMES = {
    "cmu": ("{S}UpLeg", "{S}Leg", "{S}Foot", "{S}ToeBase"),
    "cmu131": ("{S}Hip", "{S}Knee", "{S}Ankle", "{S}Toe"),
    "bandai": ("UpperLeg_{s}", "LowerLeg_{s}", "Foot_{s}", "Toes_{s}"),
}
UNIT = {"cmu": 0.05644, "bandai": 0.01}


def load(source: str, name: str) -> Clip:
    path = cmu_path(name) if source == "cmu" else BANDAI_DIR / name
    if not path.is_file():
        pytest.fail(f"missing test fixture {path} (copy it from ../shared/bvh-bandai/)")
    return bvh.load(path)


def expected_legs(source: str, name: str, clip: Clip) -> dict[str, list[int]]:
    key = "cmu131" if name.startswith("131") else source
    out = {}
    for side, word in (("L", "Left"), ("R", "Right")):
        out[side] = [clip.names.index(p.format(S=word, s=side)) for p in LEG_NAMES[key]]
    return out


def world_facing(clip: Clip) -> np.ndarray:
    """[T, 3] the performer's facing on the floor, unit, from the clip's own body map."""
    rot = root.root_world(clip)[0]
    f = quat.mul_vec(rot, clip.forward)
    up = clip.up
    f = f - np.outer(f @ up, up)
    return f / np.linalg.norm(f, axis=-1, keepdims=True)


def angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.degrees(np.arccos(np.clip(np.sum(a * b, axis=-1), -1.0, 1.0)))


_CACHE: dict[tuple[str, str], tuple[Clip, dict[str, np.ndarray]]] = {}


def original(source: str, name: str) -> tuple[Clip, dict[str, np.ndarray]]:
    """The take and its footsteps with the feet fixed by name (the invariance oracle)."""
    if (source, name) not in _CACHE:
        clip = load(source, name)
        legs = expected_legs(source, name, clip)
        steps = contacts.footsteps(clip, feet={s: legs[s][2] for s in "LR"})
        _CACHE[source, name] = (clip, steps)
    return _CACHE[source, name]


def _variants(clip: Clip, unit: float, legs: dict[str, list[int]]) -> dict[str, tuple[V.Variant, float]]:
    arms = [j for side in clip.body.arms.values() for j in side]
    out = {
        "fresh": (V.identity(clip), unit),
        "bones along +X": (V.bones_along_x(clip), unit),
        "random rest frames": (V.random_frames(clip, seed=7), unit),
        "arms-down rest": (V.arms_down(clip, arms), unit),
        "Z-up": (V.z_up(clip), unit),
        "meters": (V.scaled(clip, unit), 1.0),
        "cm": (V.scaled(clip, unit / 0.01), 0.01),
        "inches": (V.scaled(clip, unit / 0.0254), 0.0254),
        "no names": (V.renamed(clip, legs, None), unit),
        "dummy root": (V.dummy_root(clip), unit),
        "a moving helper bone first": (V.moving_bone_first(clip), unit),
        "End Sites as joints": (V.end_sites_as_joints(clip), unit),
        "zero-length end joints": (V.zero_length_ends(clip), unit),
    }
    for convention in V.CONVENTIONS:
        out[f"{convention} names"] = (V.renamed(clip, legs, convention), unit)
    # Everything at once: lying bones, no names, Z-up, cm.
    lying, _ = V.bones_along_x(clip)
    anon, _ = V.renamed(lying, legs, None)
    turned, _ = V.z_up(anon)
    out["+X bones, no names, Z-up, cm"] = (V.scaled(turned, unit / 0.01), 0.01)
    return out


VARIANT_NAMES = ["fresh", "bones along +X", "random rest frames", "arms-down rest", "Z-up", "meters", "cm",
                 "inches", "no names", "dummy root", "a moving helper bone first", "End Sites as joints",
                 "zero-length end joints",
                 *[f"{c} names" for c in V.CONVENTIONS], "+X bones, no names, Z-up, cm"]


@pytest.mark.parametrize(("source", "name"), TAKES)
def test_real_takes_have_their_named_legs_unit_and_up(source: str, name: str) -> None:
    clip, _ = original(source, name)
    legs = expected_legs(source, name, clip)
    b = clip.body
    assert b.legs == legs
    assert b.feet == {s: [legs[s][2], legs[s][3]] for s in "LR"}  # ankle, toe (End Sites are not joints)
    assert clip.meters_per_unit == UNIT[source]
    np.testing.assert_array_equal(clip.up, [0.0, 1.0, 0.0])
    assert b.head is not None and clip.names[b.head] == "Head"
    assert contacts.default_feet(clip) == b.feet
    assert clip.legs() == (legs["L"], legs["R"])


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize(("source", "name"), TAKES)
def test_the_same_world_motion_in_another_convention_reads_the_same(source: str, name: str,
                                                                    variant: str) -> None:
    clip, steps = original(source, name)
    legs = expected_legs(source, name, clip)
    (other, index), unit = _variants(clip, UNIT[source], legs)[variant]
    b = other.body
    kept = set(int(j) for j in index)
    for s in "LR":
        assert [j for j in b.legs[s] if j in kept] == [int(index[j]) for j in legs[s]], s
        assert [j for j in b.feet[s] if j in kept] == [int(index[j]) for j in legs[s][2:]], s
    assert other.root == int(index[clip.root])
    # Hands (where the fingers branch off, blend's FINGERS preset): from the body map's head,
    # never from a rest pose that need not stand.
    assert blend.hands(other) == [int(index[j]) for j in blend.hands(clip)]
    z_up = "Z-up" in variant
    np.testing.assert_array_equal(other.up, [0.0, 0.0, 1.0] if z_up else [0.0, 1.0, 0.0])
    assert other.meters_per_unit == unit
    want = world_facing(clip)
    if z_up:
        want = want @ np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]).T
    got = world_facing(other)
    start = clip.motion_start
    assert angle_deg(got[start:], want[start:]).max() < 2.0
    found = contacts.footsteps(other, feet={s: int(index[legs[s][2]]) for s in "LR"})
    assert found.keys() == steps.keys()
    for key in steps:
        np.testing.assert_allclose(found[key], steps[key], rtol=0, atol=1e-6, err_msg=key)


# -- facing on the Bandai takes ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in BANDAI if "bow" not in n])
def test_bandai_facing_points_along_the_walk_and_against_it_walking_back(name: str) -> None:
    clip = load("bandai", name)
    start = clip.motion_start
    p = root.root_world(clip)[1][start:]
    travel = p[-1] - p[0]
    travel[1] = 0.0
    travel /= np.linalg.norm(travel)
    facing = world_facing(clip)[start:].mean(axis=0)
    facing /= np.linalg.norm(facing)
    cos = float(facing @ travel)
    if "walk-back" in name:
        assert cos < -math.cos(math.radians(20))
    else:
        assert cos > math.cos(math.radians(20))


def test_bandai_walks_cycle_and_phase_on_their_own_legs() -> None:
    clip = load("bandai", "dataset-1_walk_normal_001.bvh")
    steps = contacts.footsteps(clip)
    assert len(steps["FootDown_L"]) >= 3 and len(steps["FootDown_R"]) >= 3
    ph = contacts.phase(clip, steps)
    assert np.isfinite(ph).all()
    loop = sync.loop_cycle(clip)
    assert loop.n_frames > 10


# -- overrides, warnings, errors --------------------------------------------------------------------


def test_feet_given_by_name_rebuild_the_map_around_them() -> None:
    clip = load("cmu", "02_01")
    anon, _ = V.renamed(clip, clip.body.legs, None)
    # Hand the map the arms as feet: it follows the user.
    arms = clip.body.arms
    wrists = {s: arms[s][3] for s in "LR"}
    b = body.find(anon, feet=wrists)
    assert b.evidence["legs"] == "user"
    assert b.feet["L"][0] == wrists["L"] and b.feet["R"][0] == wrists["R"]
    with pytest.raises(ValueError, match="no joint named 'Nope'"):
        body.find(clip, feet={"L": "Nope", "R": "RightFoot"})


def test_feet_accept_ankle_names_in_every_core_function() -> None:
    clip = load("cmu", "02_01")
    by_name = contacts.footsteps(clip, feet={"L": "LeftFoot", "R": "RightFoot"})
    default = contacts.footsteps(clip)
    for key in default:
        np.testing.assert_array_equal(by_name[key], default[key])


def test_no_legs_says_what_was_tried_and_how_to_pass_feet() -> None:
    # A single chain (an arm, a prop): nothing is a pair of legs.
    T = 5
    clip = Clip(["a", "b", "c", "d"], [-1, 0, 1, 2], np.tile([0.0, 1.0, 0.0], (4, 1)),
                np.tile([1.0, 0, 0, 0], (T, 4, 1)), fps=30)
    assert clip.legs() is None
    with pytest.raises(ValueError, match="feet="):
        contacts.default_feet(clip)


def test_names_that_disagree_with_the_motion_are_warned_about() -> None:
    clip = load("cmu", "02_01")
    legs = clip.body.legs
    names = list(clip.names)
    # Call the wrists feet: names say arms, the motion says legs.
    for s, word in (("L", "Left"), ("R", "Right")):
        names[legs[s][2]] = f"{word}Tarsus"
        names[clip.body.arms[s][3]] = f"{word}Foot"
    lying = V.fresh(clip, names=names)
    with pytest.warns(body.BodyWarning, match="names and motion disagree"):
        lying.body  # noqa: B018


def test_set_facts_win_over_inferred_ones() -> None:
    clip = load("cmu", "02_01")
    other = V.fresh(clip, up=[0.0, 0.0, 1.0], meters_per_unit=0.5)
    assert other.body.evidence["up"] == "user" and other.body.evidence["unit"] == "user"
    assert other.meters_per_unit == 0.5


def test_body_map_prints_from_the_command_line() -> None:
    path = BANDAI_DIR / "dataset-1_walk_normal_001.bvh"
    out = subprocess.run([sys.executable, "-m", "core.body", str(path)], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=True).stdout
    assert "leg L: UpperLeg_L > LowerLeg_L > Foot_L > Toes_L" in out
    assert "static: joint_Root" in out
    assert "unit 0.01 m" in out
    assert "30 fps" in out


def test_static_joints_are_those_the_take_never_moves() -> None:
    clip = load("bandai", "dataset-1_walk_normal_001.bvh")
    assert clip.body.static == [clip.names.index("joint_Root")]
    assert clip.root == clip.names.index("Hips")
    loop = load("bandai", "dataset-1_walk_normal_002.bvh")
    assert loop.root == loop.names.index("joint_Root")  # the pre-cut loops travel on joint_Root


def test_warnings_are_quiet_on_real_takes() -> None:
    for source, name in TAKES:
        clip = load(source, name)
        with warnings.catch_warnings():
            warnings.simplefilter("error", body.BodyWarning)
            assert not clip.body.warnings


# -- transitions on skeletons whose root's rest frame is not upright --------------------------------


def _travel_angle(clip: Clip, a: float, b: float) -> float:
    """Direction (radians about up, from heading 0) of the root's travel over [a, b] seconds."""
    p = root.trajectory(clip).position
    i, j = clip.frame(max(a, 0.0)), clip.frame(b)
    fwd, side = root.floor_axes(clip.up)
    d = p[j] - p[i]
    return math.atan2(float(d @ side), float(d @ fwd))


def _wrapped(x: float) -> float:
    return (x + math.pi) % (2 * math.pi) - math.pi


@pytest.mark.parametrize(("pair", "src_time", "dst_time"), [
    (("cmu", "02_01", "02_03"), 1.6, 0.3),
    (("cmu", "02_03", "02_01"), 0.9, 1.0),
    (("bandai", "dataset-1_walk_normal_001.bvh", "dataset-1_run_happy_001.bvh"), 3.0, 1.0),
    (("bandai", "dataset-1_run_happy_001.bvh", "dataset-1_walk_tired_001.bvh"), 2.5, 2.0),
])
def test_a_transition_between_lying_root_frames_continues_the_source_path(pair, src_time, dst_time) -> None:
    source, a, b = pair
    src, _ = V.bones_along_x(load(source, a))
    dst, _ = V.bones_along_x(load(source, b))
    blend_time = 0.3
    out = transition_dead_blend(src, dst, src_time, dst_time, blend_time)
    span = 1.0
    before = _travel_angle(src, src_time - span, src_time)
    after_start = src_time + blend_time
    after_end = min(after_start + span, out.duration)
    after = _travel_angle(out, after_start, after_end)
    d0 = dst_time + blend_time
    own_turn = (_travel_angle(dst, d0, d0 + (after_end - after_start))
                - _travel_angle(dst, dst_time - span, dst_time))
    assert abs(math.degrees(_wrapped(after - before - own_turn))) < 15.0


def transition_dead_blend(src: Clip, dst: Clip, ts: float, td: float, blend_time: float) -> Clip:
    from core import transition

    return transition.dead_blend(src, dst, ts, td, blend_time)


@pytest.mark.parametrize("method", ["dead", "quintic", "crossfade"])
def test_transitions_and_sequences_of_bandai_takes_keep_joint_root_where_the_takes_keep_it(method) -> None:
    from core import transition

    walk = load("bandai", "dataset-1_walk_normal_001.bvh")
    run = load("bandai", "dataset-1_run_happy_001.bvh")
    j = walk.names.index("joint_Root")
    assert j in walk.body.static and j in run.body.static
    out = transition.METHODS[method](walk, run, 3.0, 1.0, 0.3)
    seq = transition.sequence([(walk, 0.5, 3.0), (run, 0.5, 3.0), (walk, 1.0, 4.0)], blend_time=0.3,
                              method=method)
    for clip in (out, seq):
        np.testing.assert_array_equal(clip.positions[:, j] - walk.positions[0, j], 0.0)
        np.testing.assert_array_equal(clip.rotations[:, j] - walk.rotations[0, j], 0.0)


def test_sync_blends_and_in_place_keep_joint_root_still() -> None:
    walk = load("bandai", "dataset-1_walk_normal_001.bvh")
    run = load("bandai", "dataset-1_run_happy_001.bvh")
    j = walk.names.index("joint_Root")
    out = sync.sync_blend(sync.loop_cycle(walk), sync.loop_cycle(run), 0.5, 3.0)
    np.testing.assert_array_equal(out.positions[:, j], 0.0)
    np.testing.assert_array_equal(out.rotations[:, j], np.broadcast_to([1.0, 0, 0, 0], (out.n_frames, 4)))
    still = root.in_place(walk)
    np.testing.assert_array_equal(still.positions[:, j], walk.positions[:, j])
    moved = root.reanchor(walk, 30, [100.0, 0.0, -50.0], 1.0)
    np.testing.assert_array_equal(moved.positions[:, j], walk.positions[:, j])
    happy = load("bandai", "dataset-1_walk_happy_001.bvh")[:walk.n_frames]
    for space in ("local", "parent", "world"):
        layered = blend.additive_apply(walk, blend.additive_extract(happy, walk, space), 0.7, space)
        np.testing.assert_array_equal(layered.positions[:, j], walk.positions[:, j])
        np.testing.assert_array_equal(layered.rotations[:, j], walk.rotations[:, j])


def test_joints_a_float_away_from_their_parent_sit_on_it(cmu_clips):
    # CMU's zero-length LHipJoint / RHipJoint come back 1e-7 m long from an FBX round trip: they must
    # not become the hips (the hip line would be noise, and the facing with it).
    clip = cmu_clips("02_01")
    zero = np.linalg.norm(clip.offsets, axis=-1) == 0.0
    assert zero[clip.names.index("LHipJoint")]
    noise = np.where(zero[:, None], np.random.default_rng(0).normal(scale=2e-6, size=clip.offsets.shape), 0.0)
    noisy = V.fresh(clip, offsets=clip.offsets + noise, positions=clip.positions + noise)
    with warnings.catch_warnings():
        warnings.simplefilter("error", body.BodyWarning)  # no 'mirrored skeleton' doubt
        got = noisy.body
    want = clip.body
    assert got.legs == want.legs and got.feet == want.feet
    np.testing.assert_allclose(got.forward, want.forward, atol=1e-4)
