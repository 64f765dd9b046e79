"""core.quat against scipy.spatial.transform.Rotation (scalar-last quaternions) as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from core import quat

TAIT_BRYAN = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
PROPER = ["XYX", "XZX", "YXY", "YZY", "ZXZ", "ZYZ"]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240611)


def rand_quats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return quat.normalize(rng.normal(size=(*shape, 4)))


def to_scipy(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.asarray(q).reshape(-1, 4)[:, [1, 2, 3, 0]])


def from_scipy(r: Rotation) -> np.ndarray:
    return r.as_quat().reshape(-1, 4)[:, [3, 0, 1, 2]]


def sign_free_error(q: np.ndarray, p: np.ndarray) -> float:
    """Largest componentwise difference between q and p, allowing a sign flip per quaternion."""
    q = np.asarray(q).reshape(-1, 4)
    p = np.asarray(p).reshape(-1, 4)
    return float(np.minimum(np.abs(q - p).max(-1), np.abs(q + p).max(-1)).max())


# --- products, inverse, vectors, matrices -----------------------------------------------------


def test_identity_has_requested_shape_and_is_neutral(rng):
    assert quat.identity().shape == (4,)
    assert quat.identity(5).shape == (5, 4)
    ident = quat.identity((3, 2))
    assert ident.shape == (3, 2, 4) and ident.dtype == np.float64
    q = rand_quats(rng, 3, 2)
    np.testing.assert_allclose(quat.mul(ident, q), q, atol=0)
    np.testing.assert_allclose(quat.mul(q, ident), q, atol=0)


def test_normalize_gives_unit_norm_and_survives_zero():
    q = np.array([[2.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    n = quat.normalize(q)
    np.testing.assert_allclose(np.linalg.norm(n[:2], axis=-1), 1.0, atol=1e-15)
    assert np.all(np.isfinite(n))


def test_mul_matches_scipy_composition(rng):
    q, p = rand_quats(rng, 200), rand_quats(rng, 200)
    expected = from_scipy(to_scipy(q) * to_scipy(p))
    assert sign_free_error(quat.mul(q, p), expected) < 1e-14
    # R(mul(q, p)) = R(q) R(p) for column vectors
    np.testing.assert_allclose(
        quat.to_matrix(quat.mul(q, p)), quat.to_matrix(q) @ quat.to_matrix(p), atol=1e-14
    )


def test_mul_vec_matches_scipy_apply(rng):
    q = rand_quats(rng, 200)
    v = rng.normal(size=(200, 3)) * 10.0
    np.testing.assert_allclose(quat.mul_vec(q, v), to_scipy(q).apply(v), atol=1e-13)


def test_inv_matches_scipy_and_composes_to_identity(rng):
    q, p = rand_quats(rng, 100), rand_quats(rng, 100)
    assert sign_free_error(quat.inv(q), from_scipy(to_scipy(q).inv())) < 1e-15
    assert sign_free_error(quat.mul(q, quat.inv(q)), quat.identity(100)) < 1e-15
    np.testing.assert_allclose(quat.inv_mul(q, p), quat.mul(quat.inv(q), p), atol=1e-15)
    np.testing.assert_allclose(quat.mul_inv(q, p), quat.mul(q, quat.inv(p)), atol=1e-15)
    assert sign_free_error(quat.mul_inv(q, p), from_scipy(to_scipy(q) * to_scipy(p).inv())) < 1e-14


def test_to_matrix_matches_scipy(rng):
    q = rand_quats(rng, 200)
    np.testing.assert_allclose(quat.to_matrix(q), to_scipy(q).as_matrix(), atol=1e-15)


def test_from_matrix_matches_scipy_including_half_turns(rng):
    half_turns = np.concatenate(
        [np.zeros((4, 1)), quat.normalize(rng.normal(size=(4, 3)))], axis=-1
    )  # w == 0: trace -1, the branch a trace-only formula gets wrong
    axis_half_turns = np.array(
        [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.6, 0.8, 0.0]]
    )
    near_half = quat.normalize(np.concatenate([np.full((4, 1), 1e-9), axis_half_turns[:, 1:]], axis=-1))
    q = np.concatenate([rand_quats(rng, 200), half_turns, axis_half_turns, near_half, quat.identity(1)])
    m = to_scipy(q).as_matrix()
    got = quat.from_matrix(m)
    assert sign_free_error(got, from_scipy(Rotation.from_matrix(m))) < 1e-14
    assert sign_free_error(got, q) < 1e-14
    assert np.all(got[:, 0] >= 0.0)
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, atol=1e-15)


def test_from_matrix_round_trips_batched_shape(rng):
    q = quat.hemi(rand_quats(rng, 5, 7))
    np.testing.assert_allclose(quat.from_matrix(quat.to_matrix(q)), q, atol=1e-14)


def test_hemi_makes_w_nonnegative_and_keeps_rotation(rng):
    q = rand_quats(rng, 100)
    h = quat.hemi(q)
    assert np.all(h[:, 0] >= 0.0)
    assert sign_free_error(h, q) == 0.0
    w_zero = np.array([0.0, -1.0, 0.0, 0.0])
    np.testing.assert_array_equal(quat.hemi(w_zero), w_zero)


def test_dot_and_angle_match_scipy_magnitude(rng):
    q, p = rand_quats(rng, 200), rand_quats(rng, 200)
    np.testing.assert_allclose(quat.dot(q, p), np.sum(q * p, axis=-1), atol=1e-15)
    expected = (to_scipy(q).inv() * to_scipy(p)).magnitude()
    np.testing.assert_allclose(quat.angle(q, p), expected, atol=1e-13)
    np.testing.assert_allclose(quat.angle(q, -p), expected, atol=1e-13)
    assert np.all((quat.angle(q, p) >= 0.0) & (quat.angle(q, p) <= np.pi))


def test_angle_is_precise_for_tiny_and_half_turn_differences():
    ident = quat.identity()
    tiny = quat.from_scaled_angle_axis([1e-10, 0.0, 0.0])
    assert quat.angle(ident, tiny) == pytest.approx(1e-10, rel=1e-12)
    half = quat.from_scaled_angle_axis([0.0, 0.0, np.pi - 1e-9])
    assert quat.angle(ident, half) == pytest.approx(np.pi - 1e-9, abs=1e-15)


def test_broadcasting_pose_against_clip(rng):
    clip = rand_quats(rng, 6, 4)
    pose = rand_quats(rng, 4)
    v = rng.normal(size=(6, 4, 3))
    got = quat.mul(clip, pose)
    assert got.shape == (6, 4, 4)
    np.testing.assert_allclose(got[2], quat.mul(clip[2], pose), atol=0)
    rotated = quat.mul_vec(pose, v)
    assert rotated.shape == (6, 4, 3)
    np.testing.assert_allclose(rotated[3], quat.mul_vec(pose, v[3]), atol=0)
    assert quat.mul(pose[0], quat.identity((6, 4))).shape == (6, 4, 4)


# --- Euler angles -----------------------------------------------------------------------------


@pytest.mark.parametrize("order", TAIT_BRYAN + PROPER)
def test_from_euler_matches_scipy_intrinsic_all_orders(rng, order):
    angles = np.concatenate(
        [rng.uniform(-np.pi, np.pi, size=(100, 3)), rng.uniform(-20.0, 20.0, size=(100, 3))]
    )
    got = quat.from_euler(angles, order)
    assert sign_free_error(got, from_scipy(Rotation.from_euler(order, angles))) < 1e-12


def test_from_euler_zxy_is_rz_rx_ry_product_of_column_matrices(rng):
    # BVH "Zrotation Xrotation Yrotation": v_parent = Rz(a0) Rx(a1) Ry(a2) v_child.
    a0, a1, a2 = rng.uniform(-np.pi, np.pi, size=3)

    def rx(a):
        return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])

    def ry(a):
        return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])

    def rz(a):
        return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])

    q = quat.from_euler([a0, a1, a2], "ZXY")
    np.testing.assert_allclose(quat.to_matrix(q), rz(a0) @ rx(a1) @ ry(a2), atol=1e-15)


@pytest.mark.parametrize("order", TAIT_BRYAN + PROPER)
def test_to_euler_rebuilds_random_quats_all_orders(rng, order):
    q = rand_quats(rng, 500)
    angles = quat.to_euler(q, order)
    assert angles.shape == (500, 3)
    assert quat.angle(q, quat.from_euler(angles, order)).max() <= 1e-12


@pytest.mark.parametrize("order", TAIT_BRYAN)
def test_to_euler_matches_scipy_away_from_gimbal_lock(rng, order):
    angles = rng.uniform(-np.pi, np.pi, size=(300, 3))
    angles[:, 1] = rng.uniform(-1.3, 1.3, size=300)
    got = quat.to_euler(quat.from_euler(angles, order), order)
    expected = Rotation.from_euler(order, angles).as_euler(order)
    wrapped = np.angle(np.exp(1j * (got - expected)))
    assert np.abs(wrapped).max() < 1e-12


@pytest.mark.parametrize("order", TAIT_BRYAN)
@pytest.mark.parametrize("middle", [np.pi / 2, -np.pi / 2])
def test_to_euler_rebuilds_exact_gimbal_lock(rng, order, middle):
    angles = rng.uniform(-np.pi, np.pi, size=(200, 3))
    angles[:, 1] = middle
    q = quat.from_euler(angles, order)
    got = quat.to_euler(q, order)
    assert quat.angle(q, quat.from_euler(got, order)).max() <= 1e-12
    # Documented lock convention: the middle angle is the lock angle, the last angle is ~0.
    np.testing.assert_allclose(got[:, 1], middle, atol=1e-7)
    assert np.abs(got[:, 2]).max() < 1e-12


@pytest.mark.parametrize("order", PROPER)
@pytest.mark.parametrize("middle", [0.0, np.pi])
def test_to_euler_rebuilds_proper_euler_lock(rng, order, middle):
    angles = rng.uniform(-np.pi, np.pi, size=(200, 3))
    angles[:, 1] = middle
    q = quat.from_euler(angles, order)
    got = quat.to_euler(q, order)
    assert quat.angle(q, quat.from_euler(got, order)).max() <= 1e-12
    assert np.abs(got[:, 2]).max() < 1e-12


@pytest.mark.parametrize("order", TAIT_BRYAN)
def test_to_euler_rebuilds_within_1e9_of_gimbal_lock(rng, order):
    angles = rng.uniform(-np.pi, np.pi, size=(400, 3))
    side = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    angles[:, 1] = side * np.pi / 2 + rng.uniform(-1e-9, 1e-9, size=400)
    angles[:4, 1] = [np.pi / 2 - 1e-9, np.pi / 2 + 1e-9, -np.pi / 2 + 1e-9, -np.pi / 2 - 1e-9]
    q = quat.from_euler(angles, order)
    got = quat.to_euler(q, order)
    assert quat.angle(q, quat.from_euler(got, order)).max() <= 1e-12
    assert np.all(np.abs(got[:, 1]) <= np.pi / 2)


def test_euler_ranges(rng):
    q = rand_quats(rng, 500)
    tb = quat.to_euler(q, "ZXY")
    assert np.all(np.abs(tb[:, [0, 2]]) <= np.pi) and np.all(np.abs(tb[:, 1]) <= np.pi / 2)
    pe = quat.to_euler(q, "ZXZ")
    assert np.all((pe[:, 1] >= 0.0) & (pe[:, 1] <= np.pi))


def test_euler_broadcasts_over_clip_shape(rng):
    angles = rng.uniform(-np.pi, np.pi, size=(5, 3, 3))
    q = quat.from_euler(angles, "ZYX")
    assert q.shape == (5, 3, 4)
    assert quat.to_euler(q, "ZYX").shape == (5, 3, 3)


@pytest.mark.parametrize("order", ["XXY", "xyz", "XY", "XYZW", "ABC", "XYY"])
def test_euler_rejects_invalid_orders(order):
    with pytest.raises(ValueError):
        quat.from_euler([0.1, 0.2, 0.3], order)
    with pytest.raises(ValueError):
        quat.to_euler(quat.identity(), order)


# --- log / exp, rotation vectors ----------------------------------------------------------------


def test_scaled_angle_axis_matches_scipy_rotvec_for_hemi_input(rng):
    q = quat.hemi(rand_quats(rng, 300))
    np.testing.assert_allclose(quat.to_scaled_angle_axis(q), to_scipy(q).as_rotvec(), atol=1e-13)
    v = rng.normal(size=(300, 3))
    assert sign_free_error(quat.from_scaled_angle_axis(v), from_scipy(Rotation.from_rotvec(v))) < 1e-14


def test_scaled_angle_axis_round_trips_random(rng):
    q = rand_quats(rng, 300)
    np.testing.assert_allclose(quat.from_scaled_angle_axis(quat.to_scaled_angle_axis(q)), q, atol=1e-14)
    v = quat.normalize(rng.normal(size=(300, 3))) * rng.uniform(0.0, np.pi, size=(300, 1))
    np.testing.assert_allclose(quat.to_scaled_angle_axis(quat.from_scaled_angle_axis(v)), v, atol=1e-14)


@pytest.mark.parametrize("magnitude", [1e-12, 1e-8, 1e-6])
def test_scaled_angle_axis_near_identity_keeps_relative_precision(rng, magnitude):
    v = quat.normalize(rng.normal(size=(50, 3))) * magnitude
    q = quat.from_scaled_angle_axis(v)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    back = quat.to_scaled_angle_axis(q)
    np.testing.assert_allclose(back, v, rtol=1e-12, atol=magnitude * 1e-12)


def test_scaled_angle_axis_of_identity_is_zero():
    np.testing.assert_array_equal(quat.to_scaled_angle_axis(quat.identity(3)), np.zeros((3, 3)))
    np.testing.assert_array_equal(quat.from_scaled_angle_axis(np.zeros((2, 3))), quat.identity(2))
    np.testing.assert_array_equal(quat.log(quat.identity()), np.zeros(3))
    assert np.all(np.isfinite(quat.log(-quat.identity())))


@pytest.mark.parametrize("theta", [np.pi - 1e-9, np.pi, np.pi + 1e-9])
def test_scaled_angle_axis_near_half_turn(rng, theta):
    axis = quat.normalize(rng.normal(size=(20, 3)))
    q = quat.from_scaled_angle_axis(axis * theta)
    back = quat.to_scaled_angle_axis(q)
    np.testing.assert_allclose(back, axis * theta, atol=1e-14)
    short = quat.to_scaled_angle_axis(quat.hemi(q))
    np.testing.assert_allclose(np.linalg.norm(short, axis=-1), min(theta, 2 * np.pi - theta), atol=1e-14)


def test_to_scaled_angle_axis_exceeds_pi_for_negative_w(rng):
    q = quat.hemi(rand_quats(rng, 50))
    long = np.linalg.norm(quat.to_scaled_angle_axis(-q), axis=-1)
    short = np.linalg.norm(quat.to_scaled_angle_axis(q), axis=-1)
    np.testing.assert_allclose(long + short, 2 * np.pi, atol=1e-13)
    assert np.all(long >= np.pi)


def test_log_exp_are_inverse_and_half_the_rotation_vector(rng):
    q = rand_quats(rng, 300)
    np.testing.assert_allclose(quat.exp(quat.log(q)), q, atol=1e-14)
    v = rng.normal(size=(300, 3))
    np.testing.assert_allclose(quat.from_scaled_angle_axis(v), quat.exp(v / 2.0), atol=0)
    np.testing.assert_allclose(quat.log(q), quat.to_scaled_angle_axis(q) / 2.0, atol=0)


def test_angular_velocity_convention_integrates_back(rng):
    dt = 1.0 / 120.0
    steps = from_scipy(Rotation.from_rotvec(rng.normal(scale=0.3, size=(200, 3))))
    q = np.empty((201, 4))
    q[0] = rand_quats(rng)
    for t in range(200):
        q[t + 1] = quat.mul(steps[t], q[t])
    q *= np.where(rng.random(201) < 0.5, -1.0, 1.0)[:, None]  # random stored signs
    omega = quat.to_scaled_angle_axis(quat.hemi(quat.mul(q[1:], quat.inv(q[:-1])))) / dt
    rebuilt = quat.mul(quat.from_scaled_angle_axis(omega * dt), q[:-1])
    assert sign_free_error(rebuilt, q[1:]) < 1e-14
    # World-frame angular velocity: a steady spin about world Z reads as (0, 0, rate).
    spin = quat.mul(quat.from_euler(np.c_[np.zeros(10), np.zeros(10), 2.0 * dt * np.arange(10)], "XYZ"), q[0])
    omega_spin = quat.to_scaled_angle_axis(quat.hemi(quat.mul_inv(spin[1:], spin[:-1]))) / dt
    np.testing.assert_allclose(omega_spin, np.tile([0.0, 0.0, 2.0], (9, 1)), atol=1e-11)


# --- interpolation ------------------------------------------------------------------------------


def test_slerp_matches_scipy_slerp(rng):
    q, p = rand_quats(rng), rand_quats(rng)
    t = np.linspace(0.0, 1.0, 11)
    expected = from_scipy(Slerp([0.0, 1.0], to_scipy(np.stack([q, p])))(t))
    got = quat.slerp(q, p, t)
    assert got.shape == (11, 4)
    assert sign_free_error(got, expected) < 1e-14


def test_slerp_endpoints_are_exact(rng):
    q, p = rand_quats(rng, 50), rand_quats(rng, 50)
    np.testing.assert_allclose(quat.slerp(q, p, 0.0), q, atol=1e-15)
    assert sign_free_error(quat.slerp(q, p, 1.0), p) < 1e-15


def test_slerp_midpoint_halves_the_angle(rng):
    q, p = rand_quats(rng, 50), rand_quats(rng, 50)
    mid = quat.slerp(q, p, 0.5)
    np.testing.assert_allclose(quat.angle(q, mid), quat.angle(q, p) / 2.0, atol=1e-13)
    np.testing.assert_allclose(quat.angle(mid, p), quat.angle(q, p) / 2.0, atol=1e-13)


def test_slerp_takes_shortest_path_when_dot_negative(rng):
    q, p = rand_quats(rng, 50), rand_quats(rng, 50)
    p = np.where(quat.dot(q, p)[:, None] > 0.0, -p, p)  # all dots negative
    t = rng.random(50)
    assert sign_free_error(quat.slerp(q, p, t), quat.slerp(q, -p, t)) < 1e-14
    np.testing.assert_allclose(quat.angle(q, quat.slerp(q, p, t)), t * quat.angle(q, p), atol=1e-13)


def test_slerp_is_stable_when_inputs_nearly_equal(rng):
    q = rand_quats(rng, 20)
    for eps in [0.0, 1e-15, 1e-12, 1e-9]:
        p = quat.normalize(q + eps * rng.normal(size=q.shape))
        s = quat.slerp(q, p, 0.3)
        assert np.all(np.isfinite(s))
        np.testing.assert_allclose(np.linalg.norm(s, axis=-1), 1.0, atol=1e-15)
        np.testing.assert_allclose(quat.angle(q, s), 0.3 * quat.angle(q, p), atol=1e-15)
    np.testing.assert_allclose(quat.slerp(q, q, 0.7), q, atol=1e-15)


def test_nlerp_is_normalized_shortest_and_hits_endpoints(rng):
    q, p = rand_quats(rng, 50), rand_quats(rng, 50)
    np.testing.assert_allclose(quat.nlerp(q, p, 0.0), q, atol=1e-15)
    assert sign_free_error(quat.nlerp(q, p, 1.0), p) < 1e-15
    t = rng.random(50)
    n = quat.nlerp(q, p, t)
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0, atol=1e-15)
    assert sign_free_error(n, quat.nlerp(q, -p, t)) < 1e-15
    # On the short arc: the two partial angles add up to the whole.
    np.testing.assert_allclose(quat.angle(q, n) + quat.angle(n, p), quat.angle(q, p), atol=1e-12)
    mid = quat.nlerp(q, p, 0.5)
    assert sign_free_error(mid, quat.slerp(q, p, 0.5)) < 1e-14


# --- sign continuity, averaging, shortest arc ------------------------------------------------------


def _random_walk(rng: np.random.Generator, frames: int, joints: int) -> np.ndarray:
    steps = from_scipy(Rotation.from_rotvec(rng.normal(scale=0.4, size=(frames * joints, 3))))
    steps = steps.reshape(frames, joints, 4)
    q = np.empty((frames, joints, 4))
    q[0] = rand_quats(rng, joints)
    for t in range(1, frames):
        q[t] = quat.mul(steps[t], q[t - 1])
    return q


def test_unroll_makes_consecutive_dots_nonnegative_and_keeps_rotations(rng):
    smooth = _random_walk(rng, 60, 5)
    flipped = smooth * np.where(rng.random((60, 5, 1)) < 0.5, -1.0, 1.0)
    assert np.any(quat.dot(flipped[1:], flipped[:-1]) < 0.0)
    out = quat.unroll(flipped, axis=0)
    assert out.shape == flipped.shape
    assert np.all(quat.dot(out[1:], out[:-1]) >= 0.0)
    assert sign_free_error(out, flipped) == 0.0
    np.testing.assert_array_equal(out[0], flipped[0])
    # Same answer along another axis.
    along_1 = quat.unroll(np.swapaxes(flipped, 0, 1), axis=1)
    np.testing.assert_array_equal(np.swapaxes(along_1, 0, 1), out)


def test_average_of_identical_quats_is_that_quat(rng):
    q = rand_quats(rng)
    np.testing.assert_allclose(quat.average(np.tile(q, (7, 1))), q, atol=1e-14)


def test_average_is_sign_insensitive(rng):
    q = rand_quats(rng, 9)
    signs = np.where(rng.random((9, 1)) < 0.5, -1.0, 1.0)
    assert sign_free_error(quat.average(q * signs), quat.average(q)) < 1e-13
    a = quat.average(q)
    assert quat.dot(a, q[0]) >= 0.0


def test_average_of_two_equal_weights_is_slerp_midpoint(rng):
    q, p = rand_quats(rng), rand_quats(rng)
    mean = quat.average(np.stack([q, p]), weights=[1.0, 1.0])
    assert quat.angle(mean, quat.slerp(q, p, 0.5)) <= 1e-9


def test_average_matches_scipy_weighted_mean_batched(rng):
    q = rand_quats(rng, 8, 3)  # 8 samples for each of 3 independent batches
    w = rng.random(8)
    got = quat.average(q, weights=w, axis=0)
    assert got.shape == (3, 4)
    for b in range(3):
        expected = from_scipy(to_scipy(q[:, b]).mean(weights=w))
        assert sign_free_error(got[b], expected) < 1e-12
    np.testing.assert_allclose(quat.average(np.swapaxes(q, 0, 1), weights=w, axis=1), got, atol=1e-14)
    one_hot = quat.average(q, weights=[0, 0, 1, 0, 0, 0, 0, 0])
    assert sign_free_error(one_hot, q[2]) < 1e-14


def test_between_maps_u_onto_v_along_shortest_arc(rng):
    u = rng.normal(size=(200, 3)) * 3.0
    v = rng.normal(size=(200, 3)) * 0.5
    q = quat.between(u, v)
    un, vn = quat.normalize(u), quat.normalize(v)
    np.testing.assert_allclose(to_scipy(q).apply(un), vn, atol=1e-14)
    np.testing.assert_allclose(
        quat.angle(quat.identity(), q), np.arccos(np.clip(np.sum(un * vn, -1), -1, 1)), atol=1e-7
    )
    axis = quat.normalize(q[:, 1:])
    np.testing.assert_allclose(np.sum(axis * un, -1), 0.0, atol=1e-14)


def test_between_handles_opposite_and_equal_vectors(rng):
    u = np.concatenate([np.eye(3), -np.eye(3), quat.normalize(rng.normal(size=(5, 3)))])
    q = quat.between(u, -u)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    np.testing.assert_allclose(to_scipy(q).apply(u), -u, atol=1e-14)
    np.testing.assert_allclose(quat.angle(quat.identity(), q), np.pi, atol=1e-14)
    same = quat.between(u, 2.0 * u)
    assert sign_free_error(same, quat.identity(len(u))) < 1e-15


# --- forward kinematics ---------------------------------------------------------------------------


PARENTS = [-1, 0, 1, 2, 1, 4, -1, 6, 7, 0, 3]  # two roots (0 and 6), branching at 1 and 0


def _scipy_fk(lrot: np.ndarray, lpos: np.ndarray, parents: list[int]) -> tuple[np.ndarray, np.ndarray]:
    frames, joints = lrot.shape[:2]
    grot = np.empty((frames, joints, 4))
    gpos = np.empty((frames, joints, 3))
    g: list[Rotation] = []
    for j, p in enumerate(parents):
        local = to_scipy(lrot[:, j])
        if p < 0:
            g.append(local)
            gpos[:, j] = lpos[:, j]
        else:
            g.append(g[p] * local)
            gpos[:, j] = gpos[:, p] + g[p].apply(lpos[:, j])
        grot[:, j] = from_scipy(g[j])
    return grot, gpos


def test_fk_matches_per_joint_scipy_loop_with_two_roots(rng):
    lrot = rand_quats(rng, 7, len(PARENTS))
    lpos = rng.normal(size=(7, len(PARENTS), 3))
    grot, gpos = quat.fk(lrot, lpos, PARENTS)
    exp_rot, exp_pos = _scipy_fk(lrot, lpos, PARENTS)
    assert grot.shape == (7, len(PARENTS), 4) and gpos.shape == (7, len(PARENTS), 3)
    assert sign_free_error(grot, exp_rot) < 1e-12
    np.testing.assert_allclose(gpos, exp_pos, atol=1e-12)


def test_fk_broadcasts_pose_clip_and_static_offsets(rng):
    joints = len(PARENTS)
    lrot = rand_quats(rng, 5, joints)
    offsets = rng.normal(size=(joints, 3))
    grot, gpos = quat.fk(lrot, offsets, np.array(PARENTS))
    pose_rot, pose_pos = quat.fk(lrot[3], offsets, PARENTS)
    assert pose_rot.shape == (joints, 4) and pose_pos.shape == (joints, 3)
    np.testing.assert_allclose(pose_rot, grot[3], atol=0)
    np.testing.assert_allclose(pose_pos, gpos[3], atol=0)
    batched_rot, batched_pos = quat.fk(lrot.reshape(5, 1, joints, 4), offsets, PARENTS)
    assert batched_rot.shape == (5, 1, joints, 4)
    np.testing.assert_allclose(batched_pos[:, 0], gpos, atol=0)


def test_fk_rejects_unsorted_or_mismatched_parents(rng):
    lrot = rand_quats(rng, 2, 3)
    lpos = np.zeros((2, 3, 3))
    with pytest.raises(ValueError):
        quat.fk(lrot, lpos, [-1, 2, 0])
    with pytest.raises(ValueError):
        quat.fk(lrot, lpos, [-1, 0])


def test_scaled_angle_axis_rate_is_the_rotation_vectors_derivative_under_an_angular_velocity(rng):
    # Oracle: d/dt rotvec(exp(w t) exp(v)) at t = 0, central differences in scipy. Angles from
    # 0 (series branch) through the 1e-4 switch to just under the half turn (scipy wraps there).
    v = rng.normal(size=(300, 3))
    angles = np.concatenate([[0.0, 1e-9, 9e-5, 1.1e-4], rng.uniform(0.0, np.pi - 1e-3, 295), [np.pi - 1e-3]])
    v *= (angles / np.linalg.norm(v, axis=-1))[:, None]
    w = rng.normal(size=(300, 3)) * 3.0
    h = 1e-6
    plus = (Rotation.from_rotvec(w * h) * Rotation.from_rotvec(v)).as_rotvec()
    minus = (Rotation.from_rotvec(-w * h) * Rotation.from_rotvec(v)).as_rotvec()
    np.testing.assert_allclose(quat.scaled_angle_axis_rate(v, w), (plus - minus) / (2 * h), rtol=0, atol=1e-8)
    # About the rotation's own axis the exponent just grows at w.
    axis = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)
    np.testing.assert_allclose(quat.scaled_angle_axis_rate(v[4:], 2.0 * axis[4:]), 2.0 * axis[4:], atol=1e-14)


def test_angular_velocity_matches_scipy_and_takes_the_short_way():
    rng = np.random.default_rng(20)
    rot = quat.normalize(rng.normal(size=(6, 3, 4)))
    rot[3] *= -1.0  # the same rotations with the other sign: no extra turn
    fps = 30.0
    want = np.stack([(to_scipy(rot[t + 1]) * to_scipy(rot[t]).inv()).as_rotvec() * fps for t in range(5)])
    got = quat.angular_velocity(rot, fps)
    assert got.shape == (5, 3, 3)
    np.testing.assert_allclose(got, want, atol=1e-10)
    assert np.linalg.norm(got, axis=-1).max() <= np.pi * fps + 1e-9


def _scipy_slerp(q: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Slerp of each pair by its own t, one scipy Slerp per pair (w, x, y, z out, sign free)."""
    out = []
    for a, b, s in zip(q.reshape(-1, 4), p.reshape(-1, 4), t.reshape(-1), strict=True):
        pair = Rotation.from_quat(np.stack([a, b])[:, [1, 2, 3, 0]])
        out.append(from_scipy(Slerp([0.0, 1.0], pair)([s]))[0])
    return np.array(out).reshape(q.shape)


def same_rotation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.sum(a * b, axis=-1))  # 1 where a and b are the same rotation


def test_slerp_planes_matches_scipy_with_its_ends_exact(rng):
    m, J = 40, 3
    q, p = rand_quats(rng, m, J), rand_quats(rng, m, J)
    p[:5] = quat.normalize(q[:5] + 1e-9 * rng.normal(size=(5, J, 4)))  # nearly equal: h near 0
    p[5:8] = -q[5:8]  # the same rotations, opposite signs
    t = rng.uniform(0.0, 1.0, size=(m, J))
    t[10], t[11] = 0.0, 1.0
    got = np.moveaxis(quat.slerp_planes(np.moveaxis(q, -1, 0).copy(), np.moveaxis(p, -1, 0).copy(), t), 0, -1)
    np.testing.assert_allclose(same_rotation(got, _scipy_slerp(q, p, t)), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, atol=1e-14)
    np.testing.assert_array_equal(got[10], q[10])
    np.testing.assert_array_equal(got[11], p[11])


def test_sample_table_slerps_each_frame_toward_the_next_and_wraps(rng):
    N, J = 7, 2
    loop = rand_quats(rng, N, J)
    table = quat.slerp_table(loop)
    i = np.array([0, 3, 6, 6, 2])
    frac = np.array([0.0, 0.25, 0.5, 0.999, 1.0])
    got = np.moveaxis(quat.sample_table(table, i, frac), 0, -1)
    want = _scipy_slerp(loop[i], loop[(i + 1) % N], np.repeat(frac[:, None], J, axis=1))
    np.testing.assert_allclose(same_rotation(got, want), 1.0, atol=1e-12)
    np.testing.assert_array_equal(got[0], loop[0])
