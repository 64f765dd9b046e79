"""Foot locking and leg IK: the IK against scipy's minimiser on hand-made legs, and lock_feet on
CMU and Bandai takes whose root travel is sped up by 15 % (so the planted feet slide), with the
contacts of the original take."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import variants as V
from fixtures import take_path
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

from core import bvh, footlock, ik, quat, root, sync, transition
from core.contacts import contacts as detect

TAKES = ["02_01", "09_01", "dataset-1_walk_normal_001", "dataset-1_walk_happy_001"]


def sped_up(clip, factor=1.15):
    """The take with its root's travel over the floor (from frame 0) scaled by `factor`."""
    rot, pos = root.root_world(clip)
    d = pos - pos[0]
    d -= np.outer(d @ clip.up, clip.up)
    return root.with_root_world(clip, rot, pos + (factor - 1.0) * d)


def runs(mask):
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))


def foot_points(clip, side, wpos, wrot):
    joints = clip.body.feet[side]
    sites = np.flatnonzero(np.isin(clip.end_parents, joints))
    ends = clip.end_site_positions(wrot, wpos)[:, sites]
    return np.concatenate([wpos[:, joints], ends], axis=1) * clip.meters_per_unit


@pytest.fixture(scope="module", params=TAKES)
def locked(request):
    clip = bvh.load(take_path(request.param))
    planted = detect(clip)
    fast = sped_up(clip)
    return fast, planted, footlock.lock_feet(fast, contacts=planted, lower_pelvis=True)


def _leg_pose(x, a, b, c, axis):
    hip = Rotation.from_rotvec(x[:3])
    knee = hip.apply(b - a) + a
    return knee, knee + hip.apply(Rotation.from_rotvec(axis * x[3]).apply(c - b))


def _leg_cost(x, a, b, c, axis, target):
    return 1e4 * np.sum((_leg_pose(x, a, b, c, axis)[1] - target) ** 2) + 1e-3 * np.sum(x[:3] ** 2)


def _bend(p, hip, knee, ankle):
    return np.cross(p[:, hip] - p[:, knee], p[:, ankle] - p[:, knee])


def test_two_bone_matches_scipy_minimiser():
    rng = np.random.default_rng(3)
    for _ in range(5):
        a = rng.normal(size=3)
        b = a + np.array([0.05, -0.45, 0.1]) + 0.05 * rng.normal(size=3)
        c = b + np.array([-0.05, -0.42, -0.12]) + 0.05 * rng.normal(size=3)
        hip_rot, knee_rot = quat.normalize(rng.normal(size=4)), quat.normalize(rng.normal(size=4))
        reach = np.linalg.norm(b - a) + np.linalg.norm(c - b)
        target = a + reach * 0.85 * quat.normalize(rng.normal(size=4))[1:] / np.linalg.norm(
            quat.normalize(rng.normal(size=4))[1:]) * 0 + (c - a) * 0.9 + 0.05 * rng.normal(size=3)
        got = ik.two_bone(a, b, c, hip_rot, knee_rot, target, soft=False)
        np.testing.assert_allclose(got.ankle, target, atol=1e-9)
        # Independent: scipy rotates the thigh (rotvec) and bends the knee about its current
        # axis, reaching the target with the smallest hip rotation.
        axis = np.cross(a - b, c - b)
        axis /= np.linalg.norm(axis)

        res = minimize(_leg_cost, np.zeros(4), args=(a, b, c, axis, target), method="BFGS",
                       options={"gtol": 1e-10})
        knee_ref, ankle_ref = _leg_pose(res.x, a, b, c, axis)
        np.testing.assert_allclose(ankle_ref, target, atol=2e-3)
        knee_new = a + quat.mul_vec(got.hip, quat.mul_vec(quat.inv(hip_rot), b - a))
        np.testing.assert_allclose(knee_new, knee_ref, atol=5e-3)
        # The ankle sits at the knee's new rotation applied to the shin, in place.
        shin = quat.mul_vec(got.knee, quat.mul_vec(quat.inv(knee_rot), c - b))
        np.testing.assert_allclose(knee_new + shin, target, atol=1e-9)


def test_straight_legs_laid_end_to_end_take_their_own_legs_bend():
    """Two legs solved at once (segments) bend their straight frames as each leg alone does: a
    straight frame takes the nearest bent frame of its own leg, never the other leg's."""
    rng = np.random.default_rng(5)

    def leg(n, bend_x):
        a = np.zeros((n, 3))
        b = a + np.array([0.0, -0.45, 0.0])
        c = b + np.stack([bend_x * np.ones(n), -0.42 * np.ones(n), np.zeros(n)], axis=-1)
        c[:2] = b[:2] + np.array([0.0, -0.42, 0.0])  # straight on its first two frames
        rot = quat.normalize(rng.normal(size=(n, 4)))
        # Targets 10 cm nearer the hip: the straight frames must bend, about their borrowed axis.
        target = 0.9 * c + 0.01 * rng.normal(size=(n, 3))
        return a, b, c, rot, quat.normalize(rng.normal(size=(n, 4))), target

    legs = [leg(4, 0.1), leg(3, -0.1)]
    alone = [ik.solve(*(tuple(x.T) for x in one)) for one in legs]
    laid = ik.solve(*(tuple(np.concatenate(x).T) for x in zip(*legs, strict=True)), segments=[4])
    for field in ("hip", "knee", "ankle"):
        np.testing.assert_array_equal(np.concatenate([np.stack(getattr(s, field)) for s in alone], axis=1),
                                      np.stack(getattr(laid, field)))
    # A leg straight on every frame takes `bend`, given per frame too: each segment its own frames'.
    straight = [tuple(x.copy() for x in one) for one in legs]
    for one in straight:
        one[2][:] = one[1] + np.array([0.0, -0.42, 0.0])
    bends = [np.tile([1.0, 0.0, 0.0], (4, 1)), np.tile([0.0, 0.0, -1.0], (3, 1))]
    alone = [ik.solve(*(tuple(x.T) for x in one), bend=bend)
             for one, bend in zip(straight, bends, strict=True)]
    laid = ik.solve(*(tuple(np.concatenate(x).T) for x in zip(*straight, strict=True)),
                    bend=np.concatenate(bends), segments=[4])
    for field in ("hip", "knee", "ankle"):
        np.testing.assert_array_equal(np.concatenate([np.stack(getattr(s, field)) for s in alone], axis=1),
                                      np.stack(getattr(laid, field)))


def test_soft_reach_never_snaps_straight():
    d = np.linspace(0.5, 1.2, 200)
    soft = ik.soft_reach(d, 1.0, 0.0)
    assert np.all(np.diff(soft) > 0) and soft.max() < 1.0
    np.testing.assert_array_equal(soft[d <= ik.SOFT_START], d[d <= ik.SOFT_START])
    # Its slope is continuous at the start of the soft zone (no kink a knee would show as a snap).
    assert np.abs(np.diff(soft, 2)).max() < 1e-3


def test_planted_pivot_holds_over_each_contact(locked):
    """From the frame the lock is full (0.1 s after the touchdown: issue 36's locks ease in over
    the landing foot's deceleration, the slip measured from there) to the lift."""
    fast, planted, out = locked
    wrot, wpos = out.fk()
    frot, fpos = fast.fk()
    src = {side: foot_points(fast, side, fpos, frot) for side in planted}
    full = int(np.ceil(0.1 * fast.fps))
    for side, mask in planted.items():
        p = foot_points(out, side, wpos, wrot)
        up = out.up
        for a, b in runs(mask):
            step = np.diff(p[a + full:b], axis=0)
            flat = step - (step @ up)[..., None] * up
            assert np.linalg.norm(flat, axis=-1).min(axis=1).sum() < 0.01
            # No point of the foot goes below the floor the source stood it on in this contact.
            floor = (src[side][a:b] @ up).min()
            assert (p[a:b] @ up).min() >= floor - 0.005


def test_lock_keeps_bone_lengths_steps_and_knee_side(locked):
    fast, planted, out = locked
    _, pin = fast.fk()
    _, pout = out.fk()
    # Bones: joints whose translation the take never animates (the hips' is travel, not a bone).
    kids = np.flatnonzero((fast.parents >= 0) & (np.ptp(fast.positions, axis=0).max(axis=-1) == 0))
    bone_in = np.linalg.norm(pin[:, kids] - pin[:, fast.parents[kids]], axis=-1)
    bone_out = np.linalg.norm(pout[:, kids] - pout[:, fast.parents[kids]], axis=-1)
    np.testing.assert_allclose(bone_out, bone_in, atol=1e-9 * fast.height)

    def steps(clip):
        """Rotation step of each joint [T - 1, J] from the first captured frame on (scipy)."""
        q = clip.rotations[clip.motion_start:]
        a = Rotation.from_quat(q[1:].reshape(-1, 4)[:, [1, 2, 3, 0]])
        b = Rotation.from_quat(q[:-1].reshape(-1, 4)[:, [1, 2, 3, 0]])
        return (a * b.inv()).magnitude().reshape(len(q) - 1, clip.n_joints)

    # No joint steps beyond its largest step in the input, except a leg's joints between two
    # frames of one of its foot's contacts: with the foot held and the root 15 % faster, the
    # thigh turns faster over the stance and the knee straightens faster at push-off (1.7x at
    # most here), and lowering those steps would let the foot slip (reported with issue 24).
    largest = steps(fast).max(axis=0)
    got = steps(out)
    held = np.zeros(got.shape, bool)
    ms = fast.motion_start
    for side, leg in fast.body.legs.items():
        m = planted[side][ms:]
        ankle = fast.body.feet[side][0]
        held[:, [leg[0], fast.parents[ankle], ankle]] = (m[1:] & m[:-1])[:, None]
    assert np.all(np.where(held, 0.0, got) <= largest + 1e-9)
    assert np.all(got <= 1.8 * largest + 1e-9)
    for side, leg in fast.body.legs.items():
        ankle = fast.body.feet[side][0]
        knee = fast.parents[ankle]
        hip = leg[0]
        n_in, n_out = _bend(pin, hip, knee, ankle), _bend(pout, hip, knee, ankle)
        bent = np.linalg.norm(n_in, axis=-1) > np.sin(np.radians(5)) * np.linalg.norm(
            pin[:, hip] - pin[:, knee], axis=-1) * np.linalg.norm(pin[:, ankle] - pin[:, knee], axis=-1)
        assert np.all(np.sum(n_in * n_out, axis=-1)[bent] > 0)


def test_lock_leaves_root_and_upper_body_and_warns_when_out_of_reach():
    """Only the legs change (hip, knee, ankle, and the toes where a held foot turns heel up on its
    ball); a take sped up 30 % (15 % is now held within 1 cm: the foot turns heel up rather than
    reach further) is out of reach and says so."""
    clip = bvh.load(take_path("dataset-1_walk_normal_001"))
    fast = sped_up(clip, 1.3)
    with pytest.warns(footlock.FootLockWarning, match="could not reach.*lower_pelvis=True lowers the pelvis"):
        out = footlock.lock_feet(fast, contacts=detect(clip))
    # Already lowering the pelvis, and still short (the root's travel doubled): said so, no advice.
    with pytest.warns(footlock.FootLockWarning, match=r"could not reach.*short \(with the pelvis lowered\)$"):
        footlock.lock_feet(sped_up(clip, 2.0), contacts=detect(clip), lower_pelvis=True)
    legs = {j for side, leg in fast.body.legs.items() for j in (leg[0], fast.parents[fast.body.feet[side][0]],
                                                                  *fast.body.feet[side][:2])}
    others = [j for j in range(fast.n_joints) if j not in legs]
    np.testing.assert_array_equal(out.rotations[:, others], fast.rotations[:, others])
    np.testing.assert_array_equal(out.positions, fast.positions)


def test_lock_on_a_take_that_does_not_slide_changes_little():
    clip = bvh.load(take_path("dataset-1_walk_normal_001"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        out = footlock.lock_feet(clip)
    _, p0 = clip.fk()
    _, p1 = out.fk()
    moved = np.linalg.norm(p1 - p0, axis=-1) * clip.meters_per_unit
    assert np.percentile(moved, 95) < 0.06


def test_lock_feet_by_name_matches_the_body_map_and_checks_its_contacts():
    clip = sped_up(bvh.load(take_path("dataset-1_walk_normal_001")))
    planted = detect(clip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        mapped = footlock.lock_feet(clip, contacts=planted)
        named = footlock.lock_feet(clip, contacts=planted, feet={"L": "Foot_L", "R": "Foot_R"})
    np.testing.assert_array_equal(named.rotations, mapped.rotations)
    with pytest.raises(ValueError, match="shape"):
        footlock.lock_feet(clip, contacts={"L": planted["L"][:-1]})
    with pytest.raises(ValueError, match="foot 'X'"):
        footlock.lock_feet(clip, contacts={"X": planted["L"]})
    # No contact, nothing moves.
    still = footlock.lock_feet(clip, contacts={"L": np.zeros(clip.n_frames, bool)})
    np.testing.assert_array_equal(still.rotations, clip.rotations)


# -- the same world motion written in other conventions ------------------------------------------

@pytest.fixture(scope="module", params=["02_01", "dataset-1_walk_happy_001"])
def sliding(request):
    clip = bvh.load(take_path(request.param))
    planted = detect(clip)
    fast = sped_up(clip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        outs = {lower: footlock.lock_feet(fast, contacts=planted, lower_pelvis=lower)
                for lower in (False, True)}
    return fast, planted, outs


@pytest.mark.parametrize("variant", ["bones along +X", "random rest frames", "arms-down rest", "Z-up",
                                     "meters", "inches", "no names", "unreal names", "rigify names",
                                     "dummy root", "End Sites as joints", "zero-length end joints",
                                     "+X bones, no names, Z-up, cm"])
def test_lock_feet_reads_the_same_world_motion_the_same_in_any_convention(sliding, variant):
    """Locking the feet of a take written in another convention (rest frames, axes, units,
    names, extra joints; the body map, up and unit read again from it) moves every joint in the
    world as locking the original does, written in that convention: lock_feet commutes with
    re-expression, with and without lower_pelvis."""
    fast, planted, outs = sliding
    remake = V.remakes(fast)[variant]
    other, index = remake(fast)
    assert other.body.legs, other.body.problem
    height = fast.height * remake(fast)[0].meters_per_unit / fast.meters_per_unit
    for lower, out in outs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", footlock.FootLockWarning)
            got = footlock.lock_feet(other, contacts=planted, lower_pelvis=lower)
        want, _ = remake(out)
        np.testing.assert_allclose(V.world(got)[:, index], V.world(want)[:, index], rtol=0,
                                   atol=1e-6 * height, err_msg=f"lower_pelvis={lower}")


@pytest.mark.parametrize("variant", ["random rest frames", "Z-up", "inches", "no names", "dummy root",
                                     "+X bones, no names, Z-up, cm"])
@pytest.mark.parametrize("pair", [("02_01", "02_03", 1.6, 0.3),
                                  ("dataset-1_walk_normal_001", "dataset-1_run_happy_001", 3.0, 1.0)])
def test_transitions_and_sync_blends_with_locked_feet_are_the_same_in_any_convention(pair, variant):
    """Transitions and a sync blend with lock_feet=True (contacts detected on the sources, the
    path re-anchored by their travel): the same world motion whatever convention the takes are
    written in. The dead blend only where the joints' frames stay: its per-axis half-lives
    (issue 11's, D. Holden's) are taken along each parent frame's axes, so other rest frames
    give another blend (by up to 0.25 % of height on these switches)."""
    a, b, ts, td = pair
    src, dst = bvh.load(take_path(a)), bvh.load(take_path(b))
    remake = V.remakes(src)[variant]
    (src_v, index), (dst_v, _) = remake(src), remake(dst)
    bakes = {"inertialize": lambda s, d: transition.inertialize(s, d, ts, td, 0.3, lock_feet=True),
             "sync": lambda s, d: sync.sync_blend(sync.loop_cycle(s), sync.loop_cycle(d), 0.5, 2.0,
                                                  lock_feet=True)}
    if variant in ("Z-up", "inches", "no names", "dummy root"):
        bakes["dead"] = lambda s, d: transition.dead_blend(s, d, ts, td, 0.3, lock_feet=True)
    for method, bake in bakes.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", footlock.FootLockWarning)
            got = bake(src_v, dst_v)
            want, _ = remake(bake(src, dst))
        np.testing.assert_allclose(V.world(got)[:, index], V.world(want)[:, index], rtol=0,
                                   atol=1e-6 * src_v.height, err_msg=method)


@pytest.mark.parametrize("name", ["02_01", "dataset-1_walk_happy_001"])
def test_a_held_foot_keeps_the_source_heights_and_its_toes_their_world_rotation(name):
    """Issue 36: a lock takes out only the pivot's slide over the floor, and where the held ankle
    would be farther from the hip than the source's the foot turns heel up on its ball (the toe
    joint bends) rather than straighten the knee. On every contact frame of an unchanged take the
    ball and the toe tip stay at the source's heights, the toes keep their world rotation but for
    the few degrees a foot nearly on end turns on its tip, and the ankle only rises (the heel up)
    but for a millimetre (scipy's FK)."""
    import motion_checks as M

    clip = bvh.load(take_path(name))
    planted = detect(clip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        out = footlock.lock_feet(clip, contacts=planted)
    (m0, p0), (m1, p1) = M.world(clip), M.world(out)
    rose = 0.0
    for side, mask in planted.items():
        mask = mask & (np.arange(clip.n_frames) > clip.motion_start)
        dh = ((M.foot_points(out, side, m1, p1) - M.foot_points(clip, side, m0, p0)) @ clip.up)[mask]
        assert np.abs(dh[:, 1:]).max() < 0.0005, (side, np.abs(dh[:, 1:]).max())
        assert dh[:, 0].min() > -0.0015, (side, dh[:, 0].min())
        rose = max(rose, dh[:, 0].max())
        toe = clip.body.feet[side][1]
        turn = Rotation.from_matrix(m0[mask, toe]).inv() * Rotation.from_matrix(m1[mask, toe])
        assert np.degrees(turn.magnitude()).max() <= np.degrees(footlock.TIP_MAX) + 1e-6
    assert rose > 0.001  # a heel does go up somewhere
