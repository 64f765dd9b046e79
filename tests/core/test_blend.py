"""Blend primitives: pose blends against scipy, the fast-spin case, masks on real and made-up
skeletons, additive layers round-tripping on CMU clips."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import blend, quat
from core.clip import Clip, SkeletonMismatch

SPIN_FPS = 30.0


def to_scipy(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.asarray(q).reshape(-1, 4)[:, [1, 2, 3, 0]])


def from_scipy(r: Rotation, shape: tuple[int, ...]) -> np.ndarray:
    return r.as_quat().reshape(-1, 4)[:, [3, 0, 1, 2]].reshape(*shape, 4)


def sign_free_error(q: np.ndarray, p: np.ndarray) -> float:
    """Largest componentwise difference between q and p, allowing a sign flip per quaternion."""
    q, p = np.broadcast_arrays(np.asarray(q), np.asarray(p))
    return float(np.minimum(np.abs(q - p).max(-1), np.abs(q + p).max(-1)).max(initial=0.0))


def rot_about(axis, angle) -> np.ndarray:
    """[..., 4] rotations by `angle` [...] radians about a fixed unit axis (hand-made, not quat.*)."""
    angle = np.asarray(angle, dtype=np.float64)
    q = np.zeros((*angle.shape, 4))
    q[..., 0] = np.cos(angle / 2)
    q[..., 1:] = np.sin(angle / 2)[..., None] * np.asarray(axis, dtype=np.float64)
    return q


def max_step(q: np.ndarray) -> float:
    """Largest rotation angle between consecutive frames of [T, 4] (scipy)."""
    return float((to_scipy(q[1:]) * to_scipy(q[:-1]).inv()).magnitude().max())


def same_length(cmu_clips, a: str, b: str, n: int = 140) -> tuple[Clip, Clip]:
    clip_a: Clip = cmu_clips(a)
    clip_b: Clip = cmu_clips(b)
    return clip_a[1:1 + n], clip_b[1:1 + n]


# --- pose blending ----------------------------------------------------------------------------


@pytest.mark.parametrize("continuous", [False, True])
def test_blending_a_clip_with_itself_returns_it(continuous, cmu_clips):
    clip: Clip = cmu_clips("02_01")
    weight = np.random.default_rng(3).uniform(0.0, 1.0, clip.n_frames)
    out = blend.blend(clip, clip, weight, continuous=continuous)
    np.testing.assert_allclose(out.rotations, clip.rotations, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.positions, clip.positions, rtol=0, atol=1e-12)
    assert out.fps == clip.fps and out.n_frames == clip.n_frames


@pytest.mark.parametrize("continuous", [False, True])
def test_weight_0_and_1_return_the_inputs_exactly(continuous, cmu_clips):
    a, b = same_length(cmu_clips, "02_01", "09_01")
    for w, want in ((0.0, a), (1.0, b)):
        out = blend.blend(a, b, w, continuous=continuous)
        np.testing.assert_array_equal(out.rotations, want.rotations)
        np.testing.assert_array_equal(out.positions, want.positions)
    # Per frame too: frames at 0 are a's, frames at 1 are b's, bit for bit.
    weight = np.where(np.arange(a.n_frames) % 2 == 0, 0.0, 1.0)
    out = blend.blend(a, b, weight, continuous=continuous)
    np.testing.assert_array_equal(out.rotations[::2], a.rotations[::2])
    np.testing.assert_array_equal(out.rotations[1::2], b.rotations[1::2])
    np.testing.assert_array_equal(out.positions[1::2], b.positions[1::2])


def test_blend_is_per_joint_slerp_and_lerp_as_scipy_computes_them(cmu_clips):
    a, b = same_length(cmu_clips, "02_01", "09_01")
    weight = np.linspace(0.1, 0.9, a.n_frames)
    out = blend.blend(a, b, weight)
    w = np.broadcast_to(weight[:, None], (a.n_frames, a.n_joints)).reshape(-1, 1)
    ra, rb = to_scipy(a.rotations), to_scipy(b.rotations)
    # scipy's as_rotvec is the shortest path (angle <= pi): the hemisphere-aligned slerp.
    want = from_scipy(ra * Rotation.from_rotvec(w * (ra.inv() * rb).as_rotvec()), a.rotations.shape[:-1])
    assert sign_free_error(out.rotations, want) < 1e-12
    want_pos = a.positions + weight[:, None, None] * (b.positions - a.positions)
    np.testing.assert_allclose(out.positions, want_pos, rtol=0, atol=1e-12 * a.height)


def test_mask_scales_the_weight_per_joint(cmu_clips):
    a, b = same_length(cmu_clips, "02_01", "09_01")
    lower = blend.mask_preset(a, "LOWER_BODY")
    out = blend.blend(a, b, 0.6, mask=lower)
    full = blend.blend(a, b, 0.6)
    upper = lower == 0.0
    np.testing.assert_array_equal(out.rotations[:, upper], a.rotations[:, upper])
    np.testing.assert_array_equal(out.positions[:, upper], a.positions[:, upper])
    np.testing.assert_array_equal(out.rotations[:, ~upper], full.rotations[:, ~upper])
    # A half mask is half the weight.
    half = blend.blend(a, b, 0.6, mask=np.full(a.n_joints, 0.5))
    np.testing.assert_allclose(half.rotations, blend.blend(a, b, 0.3).rotations, rtol=0, atol=1e-15)


def test_blend_toward_a_single_pose_uses_it_on_every_frame(cmu_clips):
    a, b = same_length(cmu_clips, "02_01", "09_01")
    pose = b[40:41]
    out = blend.blend(a, pose, 0.5)
    want = blend.blend(a, b.replace(rotations=np.repeat(pose.rotations, a.n_frames, axis=0),
                                    positions=np.repeat(pose.positions, a.n_frames, axis=0)), 0.5)
    np.testing.assert_array_equal(out.rotations, want.rotations)


def test_blend_refuses_other_skeletons_and_lengths(cmu_clips):
    with pytest.raises(SkeletonMismatch):
        blend.blend(cmu_clips("02_01"), cmu_clips("131_01"), 0.5)
    a: Clip = cmu_clips("02_01")
    with pytest.raises(ValueError, match="frames"):
        blend.blend(a, a[:100], 0.5)
    with pytest.raises(ValueError, match="mask"):
        blend.blend(a, a, 0.5, mask=np.ones(3))


# --- keeping the path's side: slerp_via -----------------------------------------------------------


def spin_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A source spinning at 10 rad/s about Z, a fixed pose 2.5 rad away (about X), and a blend
    weight rising linearly from 0 to 1 over 1 s at 30 fps."""
    n = int(SPIN_FPS) + 1
    t = np.arange(n) / SPIN_FPS
    source = rot_about([0.0, 0.0, 1.0], 10.0 * t)
    target = np.broadcast_to(rot_about([1.0, 0.0, 0.0], 2.5), source.shape)
    return source, target, t


def test_a_fast_spin_blend_never_flips_to_the_other_side():
    source, target, weight = spin_case()
    via = blend.slerp_via(source, target, weight)
    assert max_step(via) <= 0.34
    # The shortest path flips hemisphere mid-blend: a pop of more than 1.7 rad in one frame.
    assert max_step(blend.slerp(source, target, weight)) > 1.71
    np.testing.assert_array_equal(via[0], source[0])
    np.testing.assert_array_equal(via[-1], target[-1])


def test_a_continuous_clip_blend_keeps_every_joints_path_on_its_side():
    source, target, weight = spin_case()
    # Joint 1 spins; joint 0 stays put in both clips.
    spin = Clip(["Hips", "Spine"], [-1, 0], np.ones((2, 3)),
                np.stack([quat.identity(len(weight)), source], axis=1), fps=SPIN_FPS)
    pose = spin.replace(rotations=np.stack([quat.identity(len(weight)), target], axis=1))
    smooth = blend.blend(spin, pose, weight, continuous=True)
    assert max_step(smooth.rotations[:, 1]) <= 0.34
    assert max_step(blend.blend(spin, pose, weight).rotations[:, 1]) > 1.71
    np.testing.assert_array_equal(smooth.rotations[:, 0], spin.rotations[:, 0])


def test_slerp_via_is_the_shortest_slerp_while_the_difference_stays_under_a_half_turn():
    rng = np.random.default_rng(11)
    base = to_scipy(quat.normalize(rng.normal(size=(1, 4))))
    t = np.linspace(0.0, 1.0, 50)
    # Both ends drift slowly; their difference stays under 2 rad.
    q0 = from_scipy(base * Rotation.from_rotvec(np.outer(t, [0.3, 0.0, 0.2])), (50,))
    q1 = from_scipy(base * Rotation.from_rotvec(np.outer(1 + t, [0.0, 0.8, 0.1])), (50,))
    weight = rng.uniform(0.0, 1.0, 50)
    step = (to_scipy(q0).inv() * to_scipy(q1)).as_rotvec()
    want = to_scipy(q0) * Rotation.from_rotvec(weight[:, None] * step)
    assert sign_free_error(blend.slerp_via(q0, q1, weight), from_scipy(want, (50,))) < 1e-12


def test_via_path_keeps_counting_past_a_full_turn():
    # Hand-worked: from the identity to a rotation about Z that winds up to 9 rad; the path is
    # the winding angle itself, not its shortest equivalent.
    angle = np.linspace(0.0, 9.0, 120)
    path = blend.via_path(quat.identity(120), rot_about([0.0, 0.0, 1.0], angle))
    np.testing.assert_allclose(path[:, 2], angle, rtol=0, atol=1e-12)
    np.testing.assert_allclose(path[:, :2], 0.0, rtol=0, atol=1e-12)


def test_via_path_starts_on_the_side_of_prev():
    # pi + 0.3 about Z is the same rotation as pi - 0.3 about -Z; prev says which way we were going.
    target = rot_about([0.0, 0.0, 1.0], np.array([np.pi + 0.3]))
    fresh = blend.via_path(quat.identity(1), target)
    np.testing.assert_allclose(fresh[0], [0.0, 0.0, -(np.pi - 0.3)], atol=1e-12)
    kept = blend.via_path(quat.identity(1), target, prev=[0.0, 0.0, np.pi + 0.25])
    np.testing.assert_allclose(kept[0], [0.0, 0.0, np.pi + 0.3], atol=1e-12)


def test_slerp_via_in_two_chunks_equals_one_pass():
    source, target, weight = spin_case()
    whole = blend.slerp_via(source, target, weight)
    first = blend.slerp_via(source[:12], target[:12], weight[:12])
    prev = blend.via_path(source[:12], target[:12])[-1]
    second = blend.slerp_via(source[12:], target[12:], weight[12:], prev=prev)
    np.testing.assert_allclose(np.concatenate([first, second]), whole, rtol=0, atol=1e-14)


def test_slerp_via_weights_per_frame_apply_to_every_joint_of_the_frame():
    source, target, weight = spin_case()
    joints = np.stack([source, quat.identity(len(weight)), source], axis=1)
    goals = np.stack([target, target, quat.identity(len(weight))], axis=1)
    out = blend.slerp_via(joints, goals, weight)
    for j in range(3):
        np.testing.assert_array_equal(out[:, j], blend.slerp_via(joints[:, j], goals[:, j], weight))


def test_slerp_via_needs_a_time_axis():
    with pytest.raises(ValueError, match="time axis"):
        blend.slerp_via(quat.identity(), quat.identity(), 0.5)
    with pytest.raises(ValueError, match="time axis"):
        blend.blend_poses(quat.identity(3), np.zeros((3, 3)), quat.identity(3), np.ones((3, 3)), 0.5,
                          continuous=True)


# --- several poses ------------------------------------------------------------------------------


def three_poses(cmu_clips) -> list[Clip]:
    return [cmu_clips(name)[30:31] for name in ("02_01", "02_03", "09_01")]


def test_equal_weights_give_scipys_mean_rotation(cmu_clips):
    poses = three_poses(cmu_clips)
    rot, pos = blend.blend_many([p.rotations[0] for p in poses], [p.positions[0] for p in poses], [2, 2, 2])
    for j in range(poses[0].n_joints):
        mean = to_scipy(np.stack([p.rotations[0, j] for p in poses])).mean()
        assert sign_free_error(rot[j], from_scipy(mean, ())) < 1e-12
    np.testing.assert_allclose(pos, np.mean([p.positions[0] for p in poses], axis=0), rtol=0, atol=1e-12)


def test_weights_are_normalized_and_match_scipys_weighted_mean(cmu_clips):
    poses = three_poses(cmu_clips)
    rots, poss = [p.rotations[0] for p in poses], [p.positions[0] for p in poses]
    rot, pos = blend.blend_many(rots, poss, [1.0, 3.0, 6.0])
    rot_scaled, _ = blend.blend_many(rots, poss, [0.1, 0.3, 0.6])
    assert sign_free_error(rot, rot_scaled) < 1e-12
    j = poses[0].names.index("LeftUpLeg")
    mean = to_scipy(np.stack([r[j] for r in rots])).mean(weights=[0.1, 0.3, 0.6])
    assert sign_free_error(rot[j], from_scipy(mean, ())) < 1e-12
    np.testing.assert_allclose(pos, 0.1 * poss[0] + 0.3 * poss[1] + 0.6 * poss[2], rtol=0, atol=1e-12)


def test_blend_many_with_one_weight_returns_that_pose(cmu_clips):
    poses = three_poses(cmu_clips)
    rot, pos = blend.blend_many([p.rotations for p in poses], [p.positions for p in poses], [0, 1, 0])
    assert sign_free_error(rot, poses[1].rotations) < 1e-12
    np.testing.assert_allclose(pos, poses[1].positions, rtol=0, atol=1e-12)


def test_blend_many_takes_weights_per_frame_and_masks_per_pose(cmu_clips):
    a, b = same_length(cmu_clips, "02_01", "09_01", n=20)
    weights = np.stack([np.linspace(1, 0, 20), np.linspace(0, 1, 20)])
    masks = np.ones((2, a.n_joints))
    masks[1, a.names.index("Head")] = 0.0
    masks[:, a.names.index("Neck")] = 0.0
    rot, _ = blend.blend_many([a.rotations, b.rotations], [a.positions, b.positions], weights, masks)
    assert sign_free_error(rot[0], a.rotations[0]) < 1e-12
    head, neck = a.names.index("Head"), a.names.index("Neck")
    # b masked out: a's head on every frame; nobody weighted: the first pose's neck.
    assert sign_free_error(rot[:, head], a.rotations[:, head]) < 1e-12
    assert sign_free_error(rot[:, neck], a.rotations[:, neck]) < 1e-12
    leg = a.names.index("LeftUpLeg")
    assert sign_free_error(rot[-1, leg], b.rotations[-1, leg]) < 1e-12
    with pytest.raises(ValueError, match="non-negative"):
        blend.blend_many([a.rotations, b.rotations], [a.positions, b.positions], [1.0, -1.0])


# --- masks --------------------------------------------------------------------------------------


def named(clip: Clip, m: np.ndarray) -> set[str]:
    return {clip.names[j] for j in np.flatnonzero(m)}


CMU_LEGS = {"LHipJoint", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
            "RHipJoint", "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"}


def test_presets_on_cmu_02(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    lower = named(clip, blend.mask_preset(clip, "LOWER_BODY"))
    assert lower == {"Hips"} | CMU_LEGS
    assert named(clip, blend.mask_preset(clip, "UPPER_BODY")) == set(clip.names) - lower
    assert [clip.names[j] for j in blend.hands(clip)] == ["LeftHand", "RightHand"]
    assert named(clip, blend.mask_preset(clip, "FINGERS")) == {
        "LeftFingerBase", "LeftHandIndex1", "LThumb", "RightFingerBase", "RightHandIndex1", "RThumb"}
    np.testing.assert_array_equal(blend.mask_preset(clip, "ALL"), np.ones(clip.n_joints))


def test_hands_are_found_below_the_body_maps_head_not_the_rest_poses_highest_tip(cmu_clips):
    """The head is the body map's (from the motion): a joint below it is no hand (eyes, jaw),
    unless the arms hang below that joint too (its chain still is not)."""
    import dataclasses

    clip: Clip = cmu_clips("02_01")
    neck = clip.names.index("Spine1")  # the shoulders hang from it
    below_arms = clip.replace(body=dataclasses.replace(clip.body, head=neck))
    assert [clip.names[j] for j in blend.hands(below_arms)] == ["LeftHand", "RightHand"]
    # A head with a branching face: its eyes are not a hand.
    eyes = clip.names.index("Head")
    face = Clip([*clip.names, "LeftEye", "RightEye"], [*clip.parents, eyes, eyes],
                np.concatenate([clip.offsets, [[1.0, 1.0, 1.0], [-1.0, 1.0, 1.0]]]),
                np.concatenate([clip.rotations, np.tile([1.0, 0, 0, 0], (clip.n_frames, 2, 1))], axis=1),
                np.concatenate([clip.positions, np.zeros((clip.n_frames, 2, 3))], axis=1), clip.fps,
                name="with eyes")
    face.positions[:, -2:] = face.offsets[-2:]
    assert [face.names[j] for j in blend.hands(face)] == ["LeftHand", "RightHand"]


def test_presets_on_cmu_131_where_the_wrist_holds_the_thumb(cmu_clips):
    clip: Clip = cmu_clips("131_01")
    assert named(clip, blend.mask_preset(clip, "LOWER_BODY")) == {
        "Hips", "LHipJoint", "LeftHip", "LeftKnee", "LeftAnkle", "LeftToe",
        "RHipJoint", "RightHip", "RightKnee", "RightAnkle", "RightToe"}
    # 131's wrist carries the thumb and `lhand`, the finger base (LFingers below it).
    assert [clip.names[j] for j in blend.hands(clip)] == ["LeftWrist", "RightWrist"]
    assert named(clip, blend.mask_preset(clip, "FINGERS")) == {
        "lhand", "LFingers", "LThumb", "rhand", "RFingers", "RThumb"}


def suffix_rig() -> Clip:
    """A Y-up, +Z-facing T-pose with `_L`/`_R` names, arms listed before legs, eyes on the head
    and three fingers per hand."""
    joints: list[tuple[str, str | None, tuple[float, float, float]]] = [
        ("pelvis", None, (0.0, 1.0, 0.0)),
        ("spine", "pelvis", (0.0, 0.1, 0.0)),
        ("chest", "spine", (0.0, 0.3, 0.0)),
        ("neck", "chest", (0.0, 0.15, 0.0)),
        ("head", "neck", (0.0, 0.1, 0.0)),
        ("head_top", "head", (0.0, 0.2, 0.0)),
        ("eye_L", "head", (0.03, 0.08, 0.08)),
        ("eye_R", "head", (-0.03, 0.08, 0.08)),
    ]
    for s, x in (("L", 1.0), ("R", -1.0)):
        joints += [
            (f"shoulder_{s}", "chest", (x * 0.05, 0.12, 0.0)),
            (f"upper_arm_{s}", f"shoulder_{s}", (x * 0.15, 0.0, 0.0)),
            (f"forearm_{s}", f"upper_arm_{s}", (x * 0.28, 0.0, 0.0)),
            (f"hand_{s}", f"forearm_{s}", (x * 0.25, 0.0, 0.0)),
            (f"thumb_01_{s}", f"hand_{s}", (x * 0.03, 0.0, 0.03)),
            (f"thumb_02_{s}", f"thumb_01_{s}", (x * 0.03, 0.0, 0.0)),
            (f"index_01_{s}", f"hand_{s}", (x * 0.08, 0.0, 0.01)),
            (f"index_02_{s}", f"index_01_{s}", (x * 0.03, 0.0, 0.0)),
            (f"pinky_01_{s}", f"hand_{s}", (x * 0.07, 0.0, -0.02)),
        ]
    for s, x in (("L", 1.0), ("R", -1.0)):
        joints += [
            (f"thigh_{s}", "pelvis", (x * 0.1, -0.05, 0.0)),
            (f"shin_{s}", f"thigh_{s}", (0.0, -0.45, 0.0)),
            (f"foot_{s}", f"shin_{s}", (0.0, -0.42, 0.0)),
            (f"toe_{s}", f"foot_{s}", (0.0, -0.05, 0.1)),
        ]
    names = [n for n, _, _ in joints]
    parents = [-1 if p is None else names.index(p) for _, p, _ in joints]
    offsets = np.array([o for _, _, o in joints])
    return Clip(names, parents, offsets, quat.identity((2, len(names))), fps=30.0)


def test_presets_on_a_rig_with_suffix_side_names():
    clip = suffix_rig()
    legs = {f"{part}_{s}" for part in ("thigh", "shin", "foot", "toe") for s in "LR"}
    assert named(clip, blend.mask_preset(clip, "LOWER_BODY")) == {"pelvis"} | legs
    assert named(clip, blend.mask_preset(clip, "UPPER_BODY")) == set(clip.names) - legs - {"pelvis"}
    # The head also splits into leaf chains (eyes), but it is on the way to the top of the body.
    assert [clip.names[j] for j in blend.hands(clip)] == ["hand_L", "hand_R"]
    assert named(clip, blend.mask_preset(clip, "FINGERS")) == {
        f"{f}_{s}" for f in ("thumb_01", "thumb_02", "index_01", "index_02", "pinky_01") for s in "LR"}


def test_a_name_includes_everything_below_it():
    clip = suffix_rig()
    arm = blend.mask(clip, include=["upper_arm_L"])
    assert named(clip, arm) == {"upper_arm_L", "forearm_L", "hand_L", "thumb_01_L", "thumb_02_L",
                                "index_01_L", "index_02_L", "pinky_01_L"}
    no_hand = blend.mask(clip, include=["upper_arm_L"], exclude=["hand_L"])
    assert named(clip, no_hand) == {"upper_arm_L", "forearm_L"}
    np.testing.assert_array_equal(blend.mask(clip), np.ones(clip.n_joints))
    everything_but = blend.mask(clip, exclude=["chest"])
    assert named(clip, everything_but) == {"pelvis", "spine"} | {
        f"{p}_{s}" for p in ("thigh", "shin", "foot", "toe") for s in "LR"}


def test_deeper_names_override_their_ancestors_weight_whatever_the_order():
    clip = suffix_rig()
    m = blend.mask(clip, include=["hand_L", "spine"], weights={"spine": 0.5})
    assert m[clip.names.index("chest")] == 0.5
    assert m[clip.names.index("forearm_L")] == 0.5
    assert m[clip.names.index("index_02_L")] == 1.0
    assert m[clip.names.index("pelvis")] == 0.0
    seq = blend.mask(clip, include=["spine", "hand_L"], weights=[0.5, 0.25])
    assert seq[clip.names.index("thumb_01_L")] == 0.25 and seq[clip.names.index("neck")] == 0.5


def test_presets_mix_with_names():
    clip = suffix_rig()
    m = blend.mask(clip, preset="UPPER_BODY", exclude=["FINGERS", "head"])
    assert named(clip, m) == {"spine", "chest", "neck"} | {
        f"{p}_{s}" for p in ("shoulder", "upper_arm", "forearm", "hand") for s in "LR"}
    legs_and_left_arm = blend.mask(clip, include=["LOWER_BODY", "shoulder_L"])
    assert "upper_arm_L" in named(clip, legs_and_left_arm) and "pelvis" in named(clip, legs_and_left_arm)


def test_bad_mask_requests_name_the_problem():
    clip = suffix_rig()
    with pytest.raises(ValueError, match="Hand_L"):
        blend.mask(clip, include=["Hand_L"])
    with pytest.raises(ValueError, match="preset"):
        blend.mask_preset(clip, "ARMS")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        blend.mask(clip, include=["spine"], weights=[1.5])


# --- additive layers ----------------------------------------------------------------------------


@pytest.mark.parametrize("space", blend.SPACES)
@pytest.mark.parametrize("ref_kind", ["clip", "pose", "frame"])
def test_an_additive_layer_on_its_reference_rebuilds_the_source(space, ref_kind, cmu_clips):
    src, other = same_length(cmu_clips, "02_01", "09_01")
    ref: Clip | int = {"clip": other, "pose": other[60:61]}.get(ref_kind, 25)
    layer = blend.additive_extract(src, ref, space)
    base = src[25:26] if ref_kind == "frame" else ref
    assert isinstance(base, Clip)
    out = blend.additive_apply(base, layer, 1.0, space)
    assert out.n_frames == src.n_frames
    assert sign_free_error(out.rotations, src.rotations) < 1e-9
    np.testing.assert_allclose(out.positions, src.positions, rtol=0, atol=1e-9 * src.height)


@pytest.mark.parametrize("space", blend.SPACES)
def test_an_additive_layer_round_trips_on_the_131_skeleton(space, cmu_clips):
    src: Clip = cmu_clips("131_02")[:300]
    ref: Clip = cmu_clips("131_01")[:300]
    out = blend.additive_apply(ref, blend.additive_extract(src, ref, space), 1.0, space)
    assert sign_free_error(out.rotations, src.rotations) < 1e-9
    np.testing.assert_allclose(out.positions, src.positions, rtol=0, atol=1e-9 * src.height)


@pytest.mark.parametrize("space", blend.SPACES)
def test_weight_0_or_a_zero_mask_returns_the_base(space, cmu_clips):
    src, base = same_length(cmu_clips, "02_01", "09_01")
    layer = blend.additive_extract(src, 0, space)
    for out in (blend.additive_apply(base, layer, 0.0, space),
                blend.additive_apply(base, layer, 1.0, space, mask=np.zeros(base.n_joints))):
        np.testing.assert_array_equal(out.rotations, base.rotations)
        np.testing.assert_array_equal(out.positions, base.positions)


def test_partial_additive_layers_match_scipy_in_every_space(cmu_clips):
    src, base = same_length(cmu_clips, "02_01", "09_01", n=30)
    w = np.linspace(0.2, 0.8, src.n_frames)
    wj = np.repeat(w, src.n_joints)[:, None]
    shape = src.rotations.shape[:-1]

    def scaled(q: np.ndarray) -> Rotation:
        return Rotation.from_rotvec(wj * to_scipy(q).as_rotvec())  # slerp from identity, short way

    local = blend.additive_apply(base, blend.additive_extract(src, 0, "local"), w, "local")
    want = to_scipy(base.rotations) * scaled(quat.inv_mul(src.rotations[:1], src.rotations))
    assert sign_free_error(local.rotations, from_scipy(want, shape)) < 1e-12

    parent = blend.additive_apply(base, blend.additive_extract(src, 0, "parent"), w, "parent")
    want = scaled(quat.mul_inv(src.rotations, src.rotations[:1])) * to_scipy(base.rotations)
    assert sign_free_error(parent.rotations, from_scipy(want, shape)) < 1e-12

    world = blend.additive_apply(base, blend.additive_extract(src, 0, "world"), w, "world")
    g_src, g_base, g_out = src.fk()[0], base.fk()[0], world.fk()[0]
    want = scaled(quat.mul_inv(g_src, g_src[:1])) * to_scipy(g_base)
    assert sign_free_error(g_out, from_scipy(want, shape)) < 1e-12
    delta = src.positions - src.positions[:1]
    np.testing.assert_allclose(world.positions, base.positions + w[:, None, None] * delta,
                               rtol=0, atol=1e-12 * src.height)


def test_world_layer_leaves_masked_out_joints_facing_the_same_way(cmu_clips):
    src, base = same_length(cmu_clips, "02_01", "09_01", n=30)
    m = np.zeros(src.n_joints)
    arm = src.names.index("LeftArm")
    m[arm] = 1.0
    out = blend.additive_apply(base, blend.additive_extract(src, 0, "world"), 1.0, "world", mask=m)
    g_out, g_base = out.fk()[0], base.fk()[0]
    assert sign_free_error(g_out[:, arm + 1:arm + 6], g_base[:, arm + 1:arm + 6]) < 1e-12
    assert sign_free_error(g_out[:, arm], g_base[:, arm]) > 0.1
    # Local and parent layers, masked the same way, carry the forearm along instead.
    local = blend.additive_apply(base, blend.additive_extract(src, 0, "local"), 1.0, "local", mask=m)
    np.testing.assert_array_equal(local.rotations[:, arm + 1], base.rotations[:, arm + 1])


def test_additive_rejects_unknown_spaces_and_mismatched_clips(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    with pytest.raises(ValueError, match="space"):
        blend.additive_extract(clip, 0, "global")
    with pytest.raises(SkeletonMismatch):
        blend.additive_extract(clip, cmu_clips("131_01"), "local")
    with pytest.raises(IndexError):
        blend.additive_extract(clip, clip.n_frames, "local")
