"""What the core makes of a take does not depend on how the take is written.

Each take is re-expressed in code with the same world motion in other conventions
(tests/variants.py: rest frames, bones along +X, Z-up, units, names, a dummy root, End Sites as
joints); every function that reads the skeleton (its body map, up, unit and facts read again from
the variant) must then make the same world motion, written in that convention: the original's
result re-expressed the same way is the oracle, within 1e-6 of the height. Numbers (times,
speeds in m/s, weights) must be equal. The dead blend is left out where joint frames change: its
pinned per-axis half-lives are along each parent frame's axes (tests/core/test_footlock.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import variants as V
from fixtures import take_path

from core import blend, bvh, contacts, footlock, metrics, root, sync, transition

PAIRS = {"cmu": ("02_01", "02_03", 1.6, 0.3),
         "bandai": ("dataset-1_walk_normal_001", "dataset-1_run_happy_001", 3.0, 1.0)}
VARIANTS = ["random rest frames", "bones along +X", "Z-up", "inches", "no names", "dummy root",
            "End Sites as joints", "+X bones, no names, Z-up, cm"]


_LOADED: dict[str, tuple] = {}


def _pair(source):
    if source not in _LOADED:
        a, b, ts, td = PAIRS[source]
        _LOADED[source] = (bvh.load(take_path(a)), bvh.load(take_path(b)), ts, td)
    return _LOADED[source]


def _clip_makers(ts, td):
    return {
        "lock_feet (detected contacts)": lambda s, d: footlock.lock_feet(s),
        "lock_feet, lower_pelvis": lambda s, d: footlock.lock_feet(s, lower_pelvis=True),
        "loop_cycle, straightened": lambda s, d: sync.loop_cycle(s, straighten=True),
        "sync_blend, a weight ramp": lambda s, d: sync.sync_blend(
            sync.loop_cycle(s), sync.loop_cycle(d), (np.array([0.0, 2.0]), np.array([0.0, 1.0])), 2.0),
        "sequence, quintic": lambda s, d: transition.sequence(
            [(s, 0.2, ts), (d, td, td + 1.0), (s, 0.5, 1.5)], blend_time=0.3, method="quintic"),
        "crossfade": lambda s, d: transition.crossfade(s, d, ts, td, 0.3),
        "in_place": lambda s, d: root.in_place(s),
        "additive layer": lambda s, d: blend.additive_apply(s, blend.additive_extract(s, 0), 0.5),
        "blend, UPPER_BODY mask": lambda s, d: blend.blend(
            s, d.replace(rotations=d.rotations[:20].repeat(s.n_frames // 20 + 1, axis=0)[:s.n_frames],
                         positions=d.positions[:20].repeat(s.n_frames // 20 + 1, axis=0)[:s.n_frames]),
            0.5, mask=blend.mask_preset(s, "UPPER_BODY")),
    }


def _number_makers(ts, td):
    return {
        "best_target_time": lambda s, d: transition.best_target_time(s, ts, d),
        "root_speed": lambda s, d: metrics.root_speed(s),
        "foot_sliding": lambda s, d: metrics.foot_sliding(s),
        "cycle_length": lambda s, d: sync.cycle_length(sync.loop_cycle(s), sync.loop_cycle(d), 0.5),
        "weight_for_speed": lambda s, d: sync.weight_for_speed(sync.loop_cycle(s), sync.loop_cycle(d), 1.8),
        "footsteps": lambda s, d: np.concatenate([v for _, v in sorted(contacts.footsteps(s).items())]),
        "peak_angular_speed": lambda s, d: metrics.peak_angular_speed(s),
    }


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("source", sorted(PAIRS))
def test_every_bake_is_the_same_world_motion_in_any_convention(source, variant):
    src, dst, ts, td = _pair(source)
    remake = V.remakes(src)[variant]
    (src_v, index), (dst_v, _) = remake(src), remake(dst)
    height = src_v.height
    for name, make in _clip_makers(ts, td).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", footlock.FootLockWarning)
            got = make(src_v, dst_v)
            want, _ = remake(make(src, dst))
        np.testing.assert_allclose(V.world(got)[:, index], V.world(want)[:, index], rtol=0,
                                   atol=1e-6 * height, err_msg=name)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("source", sorted(PAIRS))
def test_every_measure_is_the_same_in_any_convention(source, variant):
    src, dst, ts, td = _pair(source)
    remake = V.remakes(src)[variant]
    src_v, dst_v = remake(src)[0], remake(dst)[0]
    for name, measure in _number_makers(ts, td).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want, got = measure(src, dst), measure(src_v, dst_v)
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                   rtol=1e-9, atol=1e-9, err_msg=name)
