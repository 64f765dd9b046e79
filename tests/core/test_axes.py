"""Axis conversion and mirroring: world-space identities on CMU clips, scipy for the rotation maths."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import axes, bvh, quat
from core.clip import Clip

CLIPS = ["01_01", "02_01", "131_01"]


def same_rotations(a: np.ndarray, b: np.ndarray) -> float:
    """Largest component difference between two quaternion arrays, up to sign."""
    return float(np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1)).max(initial=0.0))


def world(clip: Clip) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(world rotation matrices [T, J, 3, 3], joint positions [T, J, 3], End Sites [T, E, 3])."""
    rot, pos = clip.fk()
    return quat.to_matrix(rot), pos, clip.end_site_positions(rot, pos)


def short(clip: Clip) -> Clip:
    return clip[:400]


# -- convert --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLIPS)
@pytest.mark.parametrize("A", [axes.y_up_to_z_up(), axes.flip_handedness("X"), axes.flip_handedness("Z"),
                               axes.flip_handedness("Y") @ axes.y_up_to_z_up()],
                         ids=["y_up_to_z_up", "flip_x", "flip_z", "z_up_left_handed"])
def test_converted_world_pose_is_A_applied_to_the_original(name, A, cmu_clips):
    clip = short(cmu_clips(name))
    out = axes.convert(clip, A)
    rot, pos, ends = world(clip)
    out_rot, out_pos, out_ends = world(out)
    tol = 1e-9 * clip.height
    assert np.abs(out_pos - pos @ A.T).max() <= tol
    assert np.abs(out_ends - ends @ A.T).max() <= tol
    assert np.abs(out_rot - A @ rot @ A.T).max() <= 1e-9
    assert np.abs(np.linalg.norm(out.rotations, axis=-1) - 1.0).max() <= 1e-12


def test_reflected_axes_rotation_matches_scipy_conjugation(cmu_clips):
    clip = short(cmu_clips("02_01"))
    A = axes.flip_handedness("Y") @ axes.y_up_to_z_up()
    j = clip.names.index("LeftUpLeg")
    local = Rotation.from_quat(clip.rotations[:, j][:, [1, 2, 3, 0]]).as_matrix()
    want = Rotation.from_matrix(A @ local @ A.T).as_quat()[:, [3, 0, 1, 2]]
    assert same_rotations(axes.convert(clip, A).rotations[:, j], want) <= 1e-12


@pytest.mark.parametrize("name", CLIPS)
def test_converting_back_with_the_transpose_is_identity(name, cmu_clips):
    clip = short(cmu_clips(name))
    for A in (axes.y_up_to_z_up(), axes.flip_handedness("X") @ axes.y_up_to_z_up()):
        back = axes.convert(axes.convert(clip, A), A.T)
        assert np.abs(back.rotations - clip.rotations).max() <= 1e-12
        assert np.abs(back.positions - clip.positions).max() <= 1e-12 * clip.height
        assert np.abs(back.offsets - clip.offsets).max() <= 1e-12 * clip.height
        assert np.abs(back.end_offsets - clip.end_offsets).max() <= 1e-12 * clip.height
        np.testing.assert_allclose(back.up, clip.up, atol=1e-15)
        np.testing.assert_allclose(back.forward, clip.forward, atol=1e-15)


def test_up_and_forward_follow_the_axes(cmu_clips):
    clip: Clip = cmu_clips("02_01")
    out = axes.convert(clip, axes.y_up_to_z_up())
    np.testing.assert_allclose(out.up, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(out.forward, axes.y_up_to_z_up() @ clip.forward, atol=1e-15)
    assert out.forward[1] < -0.99  # CMU walkers face +Z, which is -Y once Z is up (Blender's front)
    # A fresh guess in the new axes agrees, and so does the height.
    np.testing.assert_allclose(out.replace(forward=None).forward, out.forward, atol=1e-9)
    assert out.height == pytest.approx(clip.height, rel=1e-12)
    flipped = axes.convert(clip, axes.flip_handedness("X"))
    np.testing.assert_allclose(flipped.up, clip.up)
    np.testing.assert_allclose(flipped.forward, clip.forward * [-1, 1, 1], atol=1e-15)


def test_converted_clip_saves_and_loads_back_in_its_channel_orders(cmu_clips):
    clip = cmu_clips("09_01")
    out = axes.convert(clip, axes.flip_handedness("Z") @ axes.y_up_to_z_up())
    back = bvh.loads(bvh.dumps(out))
    assert back.channels == clip.channels
    assert same_rotations(back.rotations, out.rotations) <= 1e-9
    assert np.abs(world(back)[1] - world(out)[1]).max() <= 1e-9 * clip.height


@pytest.mark.parametrize("bad", [2 * np.eye(3), [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]], np.zeros((3, 3)),
                                 np.eye(4), [[1, 0, 0], [0, np.nan, 0], [0, 0, 1]]],
                         ids=["scale", "shear", "zero", "4x4", "nan"])
def test_non_orthogonal_matrices_are_refused(bad, cmu_clips):
    with pytest.raises(ValueError, match="axis matrix"):
        axes.convert(cmu_clips("02_01"), bad)


def test_nearly_orthogonal_single_precision_matrix_is_cleaned_up(cmu_clips):
    clip = short(cmu_clips("02_01"))
    A = Rotation.from_euler("XYZ", [0.3, -1.1, 2.0]).as_matrix()
    out = axes.convert(clip, A.astype(np.float32))
    assert np.abs(np.linalg.norm(out.rotations, axis=-1) - 1.0).max() <= 1e-12
    assert np.abs(world(out)[1] - world(clip)[1] @ A.T).max() <= 1e-6 * clip.height


def test_named_axes_follow_blender_axis_conversion():
    # Blender's BVH importer: axis_conversion(from_forward='-Z', from_up='Y') to its Y forward, Z up.
    np.testing.assert_array_equal(axes.matrix("-Z", "Y", "Y", "Z"), axes.y_up_to_z_up())
    np.testing.assert_array_equal(axes.matrix(), np.eye(3))
    signed = ["X", "Y", "Z", "-X", "-Y", "-Z"]
    count = 0
    for f, u in itertools.product(signed, signed):
        if f.strip("-") == u.strip("-"):
            with pytest.raises(ValueError, match="different axes"):
                axes.matrix(f, u)
            continue
        A = axes.matrix(f, u, "Y", "Z")
        assert np.linalg.det(A) == pytest.approx(1.0)
        np.testing.assert_array_equal(A @ axes._named_axis(f), [0, 1, 0])
        np.testing.assert_array_equal(A @ axes._named_axis(u), [0, 0, 1])
        count += 1
    assert count == 24  # the 24 rotations of the cube


def test_flip_handedness_negates_one_axis():
    np.testing.assert_array_equal(axes.flip_handedness("Y"), np.diag([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="axis"):
        axes.flip_handedness("W")


# -- mirror ---------------------------------------------------------------------------------------


def symmetric_clip(n_frames: int = 50) -> Clip:
    """A small left/right symmetric skeleton (Y up, facing +Z, left is +X) with random motion."""
    names = ["Hips", "LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg", "Spine",
             "l_arm", "l_hand", "r_arm", "r_hand", "Head"]
    parents = [-1, 0, 1, 0, 3, 0, 5, 6, 5, 8, 5]
    offsets = np.array([[0, 0, 0], [1.0, -0.2, 0.1], [0.1, -4, 0.3], [-1.0, -0.2, 0.1], [-0.1, -4, 0.3],
                        [0, 2, -0.1], [1.5, 1, 0.2], [2, -0.5, 0.1], [-1.5, 1, 0.2], [-2, -0.5, 0.1],
                        [0, 1.5, 0.2]])
    rng = np.random.default_rng(3)
    rotations = quat.normalize(rng.normal(size=(n_frames, len(names), 4)))
    positions = np.broadcast_to(offsets, (n_frames, len(names), 3)).copy()
    positions[:, 0] = rng.normal(size=(n_frames, 3)) * [1, 0.1, 1] + [0, 9, 0]
    end_parents = [2, 4, 7, 9, 10]
    end_offsets = np.array([[0.2, -0.5, 1], [-0.2, -0.5, 1], [0.5, 0, 0], [-0.5, 0, 0], [0, 1, 0]])
    events = {"FootDown_L": [0.1, 1.0], "FootDown_R": [0.5], "Jump": [1.2]}
    return Clip(names, parents, offsets, rotations, positions, 30.0, end_parents=end_parents,
                end_offsets=end_offsets, events=events)


def test_mirrored_symmetric_skeleton_moves_as_the_reflected_partner():
    clip = symmetric_clip()
    out = axes.mirror(clip)
    M = np.diag([-1.0, 1.0, 1.0])
    partner = [0, 3, 4, 1, 2, 5, 8, 9, 6, 7, 10]
    np.testing.assert_array_equal(axes.partners(clip.names), partner)
    np.testing.assert_array_equal(out.offsets, clip.offsets)  # symmetric: the skeleton is unchanged
    np.testing.assert_array_equal(out.end_offsets, clip.end_offsets)
    rot, pos, ends = world(clip)
    out_rot, out_pos, out_ends = world(out)
    assert np.abs(out_pos - pos[:, partner] @ M).max() <= 1e-12 * clip.height
    assert np.abs(out_rot - M @ rot[:, partner] @ M).max() <= 1e-12
    assert np.abs(out_ends - ends[:, [1, 0, 3, 2, 4]] @ M).max() <= 1e-12 * clip.height


def test_mirror_rotation_matches_scipy_reflection():
    clip = symmetric_clip()
    M = np.diag([-1.0, 1.0, 1.0])
    local = Rotation.from_quat(clip.rotations[:, 3][:, [1, 2, 3, 0]]).as_matrix()  # RightUpLeg
    want = Rotation.from_matrix(M @ local @ M).as_quat()[:, [3, 0, 1, 2]]
    assert same_rotations(axes.mirror(clip).rotations[:, 1], want) <= 1e-12  # onto LeftUpLeg


@pytest.mark.parametrize("name", CLIPS)
def test_mirrored_cmu_clip_moves_as_the_reflected_partner(name, cmu_clips):
    clip = short(cmu_clips(name))
    out = axes.mirror(clip)
    M = axes.reflection(np.cross(clip.up, clip.forward))
    partner = axes.partners(clip.names)
    rot, pos, _ = world(clip)
    out_rot, out_pos, _ = world(out)
    # Holds on CMU's slightly asymmetric skeletons too: bone lengths swap sides with the motion.
    assert np.abs(out_pos - pos[:, partner] @ M).max() <= 1e-9 * clip.height
    assert np.abs(out_rot - M @ rot[:, partner] @ M).max() <= 1e-9
    np.testing.assert_allclose(out.up, clip.up)
    np.testing.assert_allclose(out.forward, clip.forward, atol=1e-15)


@pytest.mark.parametrize("name", CLIPS)
def test_mirroring_twice_gives_the_clip_back(name, cmu_clips):
    clip = cmu_clips(name)
    back = axes.mirror(axes.mirror(clip))
    assert np.abs(back.rotations - clip.rotations).max() <= 1e-12
    assert np.abs(back.positions - clip.positions).max() <= 1e-12 * clip.height
    assert np.abs(back.offsets - clip.offsets).max() <= 1e-12 * clip.height
    assert np.abs(back.end_offsets - clip.end_offsets).max() <= 1e-12 * clip.height
    assert back.channels == clip.channels and back.names == clip.names


CMU_PAIRS = {
    "02_01": ["LHipJoint", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "LeftShoulder", "LeftArm",
              "LeftForeArm", "LeftHand", "LeftFingerBase", "LeftHandIndex1", "LThumb"],
    "01_01": ["LHipJoint", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "LeftShoulder", "LeftArm",
              "LeftForeArm", "LeftHand", "LeftFingerBase", "LFingers", "LThumb"],
    "131_01": ["LHipJoint", "LeftHip", "LeftKnee", "LeftAnkle", "LeftToe", "LeftCollar", "LeftShoulder",
               "LeftElbow", "LeftWrist", "lhand", "LFingers", "LThumb"],
}


@pytest.mark.parametrize("name", sorted(CMU_PAIRS))
def test_cmu_left_right_pairs_are_found_by_name(name, cmu_clips):
    clip: Clip = cmu_clips(name)
    partner = axes.partners(clip.names)
    found = {clip.names[j]: clip.names[k] for j, k in enumerate(partner) if j != k}
    right = {"LHipJoint": "RHipJoint", "lhand": "rhand", "LFingers": "RFingers", "LThumb": "RThumb"}
    want = {n: right.get(n, n.replace("Left", "Right")) for n in CMU_PAIRS[name]}
    assert found == want | {v: k for k, v in want.items()}
    unpaired = [clip.names[j] for j in range(clip.n_joints) if partner[j] == j]
    assert "Hips" in unpaired and "Head" in unpaired and len(unpaired) == clip.n_joints - 24


@pytest.mark.parametrize("name, other", [
    ("LeftFoot", "RightFoot"), ("RightHandIndex1", "LeftHandIndex1"), ("LHipJoint", "RHipJoint"),
    ("lhand", "rhand"), ("RThumb", "LThumb"), ("Foot.L", "Foot.R"), ("foot_l", "foot_r"),
    ("arm_l_ik", "arm_r_ik"), ("FootDown_L", "FootDown_R"), ("left_hand", "right_hand"),
    ("LEFT_ARM", "RIGHT_ARM"), ("l_foot", "r_foot"), ("Hips", "Hips"), ("lowerback", "lowerback"),
    ("LowerBack", "LowerBack"), ("Lhand", "Lhand"), ("Spine1", "Spine1"),
])
def test_mirror_name_swaps_the_side_mark_and_nothing_else(name, other):
    assert axes.mirror_name(name) == other
    assert axes.mirror_name(other) == name


def test_events_swap_sides_and_keep_their_times():
    clip = symmetric_clip()
    out = axes.mirror(clip)
    assert sorted(out.events) == ["FootDown_L", "FootDown_R", "Jump"]
    np.testing.assert_array_equal(out.events["FootDown_R"], [0.1, 1.0])
    np.testing.assert_array_equal(out.events["FootDown_L"], [0.5])
    np.testing.assert_array_equal(out.events["Jump"], [1.2])
    out.events["Jump"][0] = 9.0
    assert clip.events["Jump"][0] == 1.2


def test_mirror_plane_follows_the_clip_axes(cmu_clips):
    clip = short(cmu_clips("02_01"))
    A = axes.y_up_to_z_up()
    a = axes.mirror(axes.convert(clip, A))
    b = axes.convert(axes.mirror(clip), A)
    assert np.abs(a.rotations - b.rotations).max() <= 1e-12
    assert np.abs(a.positions - b.positions).max() <= 1e-12 * clip.height


def test_explicit_axis_and_pairs_for_unconventional_names():
    clip = symmetric_clip()
    names = ["root", "a1", "a2", "b1", "b2", "mid", "c1", "c2", "d1", "d2", "top"]
    odd = clip.replace(names=names)
    pairs = [("a1", "b1"), ("a2", "b2"), ("c1", "d1"), ("c2", "d2")]
    out = axes.mirror(odd, axis="X", pairs=pairs)
    np.testing.assert_array_equal(out.rotations, axes.mirror(clip).rotations)
    # Front/back mirror through the Z = 0 plane, every joint its own partner.
    front_back = axes.mirror(odd, axis=[0, 0, 2], pairs={})
    _, pos, _ = world(odd)
    assert np.abs(world(front_back)[1] - pos * [1, 1, -1]).max() <= 1e-12 * odd.height


def test_mirroring_an_asymmetric_hierarchy_is_refused():
    clip = symmetric_clip()
    # l_hand under the spine: its partner r_hand hangs under r_arm, whose partner is l_arm.
    lopsided = clip.replace(parents=[-1, 0, 1, 0, 3, 0, 5, 5, 5, 8, 5])
    with pytest.raises(ValueError, match="l_hand"):
        axes.mirror(lopsided)
    with pytest.raises(ValueError, match="nope"):
        axes.mirror(clip, pairs={"LeftUpLeg": "nope"})
