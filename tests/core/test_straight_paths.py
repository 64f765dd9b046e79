"""Sync blends that walk where their takes walk. Straight takes (CMU 02_01 and 02_03, the Bandai walks
and runs, and re-expressions of them made in code) blended at weights 0, 0.5 and 1 and over a
0 -> 1 ramp of 6 s: the travel direction over the output's last whole cycle within 2 degrees (plus
the loops' own mean turn rate times the time between them) of its first whole cycle's, and the end
within 2 % of the distance travelled from the initial line. Takes made in code to turn keep their
turn rate within 10 %. Paths are the root's floor path measured by tests/blend_checks.py (scipy
FK), cut into whole cycles at the output's touchdown markers; their knees stay within the takes'
range."""

from __future__ import annotations

import math
import warnings

import blend_checks as bc
import numpy as np
import pytest
import variants as V
from fixtures import take_path
from scipy.spatial.transform import Rotation

from core import bvh, sync
from core.clip import Clip

B = "dataset-1_"
WALKS = [B + n for n in ("walk_normal_001", "walk_happy_001", "walk_tired_001", "walk-left_normal_001",
                         "walk-right_normal_001")]
RUNS = [B + "run_happy_001", B + "run_tired_001"]
STRAIGHT = ([("02_01", "02_03")] + [(w, r) for w in WALKS for r in RUNS]
            + [(B + "walk_normal_002", B + "run_normal_001"), (B + "walk_normal_002", B + "dash_normal_001")])
WEIGHTS = [0.0, 0.5, 1.0, "ramp"]
SECONDS = 6.0
Y_UP = np.array([0.0, 1.0, 0.0])

_LOADED: dict[str, Clip] = {}


def load(name: str) -> Clip:
    if name not in _LOADED:
        _LOADED[name] = bvh.load(take_path(name))
    return _LOADED[name]


def weight_of(w):
    return (np.array([0.0, SECONDS]), np.array([0.0, 1.0])) if w == "ramp" else w


def blended(a: Clip, b: Clip, w) -> tuple[Clip, Clip, Clip]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # footstep doubts where a take starts or stops
        la, lb = sync.loop_cycle(a), sync.loop_cycle(b)
    return la, lb, sync.sync_blend(la, lb, weight_of(w), SECONDS)


def cycle_starts(out: Clip) -> np.ndarray:
    """Output frames of its whole cycles' starts: its FootDown_L markers (FootDown_R when the loops
    start on the right foot)."""
    key = "FootDown_L" if len(out.events.get("FootDown_L", [])) >= 3 else "FootDown_R"
    return np.rint(out.events[key] * out.fps).astype(np.int64)


def own_turn_rate(loop: Clip) -> float:
    """A loop's mean turn rate (rad/s): its turn per cycle over its length."""
    return sync.cycle_travel(loop)[1] / (loop.n_frames / loop.fps)


def check_straight(out: Clip, hips: int, up: np.ndarray, allowance: float, label: str) -> None:
    path = bc.world_positions(out)[:, hips]
    starts = cycle_starts(out)
    assert len(starts) >= 4, label
    first = bc.travel_direction(path, up, starts[0], starts[1])
    last = bc.travel_direction(path, up, starts[-2], starts[-1])
    elapsed = ((starts[-2] + starts[-1]) - (starts[0] + starts[1])) / 2.0 / out.fps
    turn = abs(float(bc.wrap(last - first)))
    assert turn <= math.radians(2.0) + allowance * elapsed, (label, math.degrees(turn))
    off = bc.distance_from_line(path, up, starts[0], first, out.n_frames - 1)
    travelled = float(np.linalg.norm(bc.on_floor(path[-1] - path[starts[0]], up)))
    assert off <= 0.02 * travelled, (label, off / travelled)


@pytest.mark.parametrize("w", WEIGHTS)
@pytest.mark.parametrize("pair", STRAIGHT, ids=lambda p: f"{p[0][-16:]}+{p[1][-16:]}")
def test_straight_takes_blend_straight(pair, w):
    a, b = load(pair[0]), load(pair[1])
    la, lb, out = blended(a, b, w)
    allowance = abs(own_turn_rate(la) + own_turn_rate(lb)) / 2.0
    check_straight(out, a.names.index("Hips"), Y_UP, allowance, f"{pair} w={w}")
    # The blend's knees within what the two takes do (3 degrees either way), on their side.
    legs = bc.legs(a.names)
    ka, kb, ko = bc.knees(a, legs), bc.knees(b, legs), bc.knees(out, legs)
    for f in "LR":
        lo = min(ka[f][a.motion_start:].min(), kb[f][b.motion_start:].min())
        hi = max(ka[f][a.motion_start:].max(), kb[f][b.motion_start:].max())
        assert lo - math.radians(3.0) <= ko[f].min() and ko[f].max() <= hi + math.radians(3.0), (pair, w, f)


VARIANTS = ["Z-up", "random rest frames", "dummy root", "+X bones, no names, Z-up, cm"]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("pair", [("02_01", "02_03"), (B + "walk_happy_001", B + "run_tired_001")],
                         ids=lambda p: f"{p[0][-16:]}+{p[1][-16:]}")
def test_straight_takes_written_in_other_conventions_blend_straight(pair, variant):
    a, b = load(pair[0]), load(pair[1])
    remake = V.remakes(a)[variant]
    (va, index), (vb, _) = remake(a), remake(b)
    up = np.array([0.0, 0.0, 1.0]) if "Z-up" in variant else Y_UP
    hips = int(index[a.names.index("Hips")])
    for w in WEIGHTS:
        la, lb, out = blended(va, vb, w)
        allowance = abs(own_turn_rate(la) + own_turn_rate(lb)) / 2.0
        check_straight(out, hips, up, allowance, f"{pair} {variant} w={w}")


def bent(clip: Clip, rate: float) -> Clip:
    """The take walked along a curve, turning `rate` radians per second (counter-clockwise seen from
    above, Y up): each frame's floor step of the hips, and the whole body, turned by rate x t. The
    hips' parents (Bandai's joint_Root) must hold still at the origin."""
    hips = clip.names.index("Hips")
    for j in range(hips):
        assert np.allclose(clip.rotations[:, j], [1.0, 0.0, 0.0, 0.0])
        assert np.allclose(clip.positions[:, j], 0.0)
    t = np.arange(clip.n_frames) / clip.fps
    yaw = Rotation.from_rotvec(np.outer(rate * t, Y_UP))
    pos = clip.positions[:, hips]
    step = np.diff(pos, axis=0)
    step[:, 1] = 0.0
    path = pos[0] + np.concatenate([np.zeros((1, 3)), np.cumsum(yaw[:-1].apply(step), axis=0)])
    path[:, 1] = pos[:, 1]
    turned = (yaw * Rotation.from_quat(clip.rotations[:, hips][:, [1, 2, 3, 0]])).as_quat()[:, [3, 0, 1, 2]]
    rot, moved = clip.rotations.copy(), clip.positions.copy()
    rot[:, hips], moved[:, hips] = turned, path
    return Clip(clip.names, clip.parents, clip.offsets, rot, moved, clip.fps, channels=clip.channels,
                end_parents=clip.end_parents, end_offsets=clip.end_offsets, name=f"{clip.name} turning")


RATE = math.radians(20.0)


@pytest.mark.parametrize("w", WEIGHTS)
@pytest.mark.parametrize("pair", [("02_01", "02_03"), (B + "walk_normal_001", B + "run_happy_001")],
                         ids=lambda p: f"{p[0][-16:]}+{p[1][-16:]}")
def test_turning_takes_blend_at_their_turn_rate(pair, w):
    a, b = bent(load(pair[0]), RATE), bent(load(pair[1]), RATE)
    _, _, out = blended(a, b, w)
    hips = a.names.index("Hips")
    rate = bc.cycle_turn_rate(bc.world_positions(out)[:, hips], Y_UP, cycle_starts(out), out.fps)
    assert rate == pytest.approx(RATE, rel=0.1), math.degrees(rate)


def test_a_turning_take_loops_as_it_turns_and_the_straight_one_does_not():
    walk = load(B + "walk_normal_001")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        straight, turning = sync.loop_cycle(walk), sync.loop_cycle(bent(walk, RATE))
    assert abs(own_turn_rate(straight)) < 1e-12
    assert own_turn_rate(turning) == pytest.approx(RATE, rel=0.05)
    # The cut cycle's own turn (its ends' facings) is neither: what the loop repeated before.
    own = sync.loop_cycle(walk, straighten=False)
    assert abs(sync.cycle_travel(own)[1]) > math.radians(0.5)
