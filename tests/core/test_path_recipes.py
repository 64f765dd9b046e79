"""Walk Along Path's recipes without Blender (blender_addon/recipes/path.py): path files read with
errors naming the file and line, circles and lines laid out in meters from where the first gait
starts in its own units and axes (the same in a Z-up, centimeter variant), points from Blender's
world in an armature's clip space (hand-worked), an animated target's track, a speed keyed over
time made a speed per meter (hand-integrated), and the core's PathWarning with the frame of each
distance it names."""

from __future__ import annotations

import math
import re
import warnings
from typing import cast

import numpy as np
import pytest
import variants
from fixtures import cmu_path

from blender_addon import wording
from blender_addon.arguments import build_parser
from blender_addon.core import armature, bvh, path, quat, sync
from blender_addon.core.clip import Clip
from blender_addon.errors import JobError
from blender_addon.options import FollowPathOptions
from blender_addon.recipes import path as recipe
from blender_addon.recipes.actions import clip_space
from blender_addon.timing import Timing

UI, CLI = wording.UI, wording.CLI
pytestmark = pytest.mark.filterwarnings("ignore:.*could not reach its lock")


@pytest.fixture(scope="module")
def walk() -> Clip:
    return bvh.load(cmu_path("02_01"))


@pytest.fixture(scope="module")
def jog() -> Clip:
    return bvh.load(cmu_path("02_03"))


# -- path files ---------------------------------------------------------------------------------


def write(tmp_path, text: str):
    file = tmp_path / "path.csv"
    file.write_text(text, encoding="utf-8")
    return file


def test_a_path_file_of_floor_points_reads_with_its_header_comments_and_blank_lines(tmp_path):
    file = write(tmp_path, "\ufeff# a square, meters\nx, y\n0,0\n\n2.5,0\n2.5 , 2.5\n0,2.5\n")
    got = recipe.read_path_csv(file)
    assert got.times is None
    np.testing.assert_array_equal(got.xy, [[0, 0], [2.5, 0], [2.5, 2.5], [0, 2.5]])


def test_a_timed_target_file_reads_its_times(tmp_path):
    got = recipe.read_path_csv(write(tmp_path, "t,x,y\n0,0,0\n1.5,2,0\n3,2,1e0\n"))
    np.testing.assert_array_equal(got.times, [0.0, 1.5, 3.0])
    np.testing.assert_array_equal(got.xy, [[0, 0], [2, 0], [2, 1]])


@pytest.mark.parametrize(("text", "says"), [
    ("0,0\n1,zero\n", r"path\.csv, line 2: 'zero' is not a number"),
    ("x,y\n0,0\n1,nan\n", r"path\.csv, line 3: 'nan' is not a finite number"),
    ("0,0\n1,2,3,4\n", r"path\.csv, line 2: 4 values; each row is x,y \(meters on the floor\) or t,x,y"),
    ("0,0\n1,1\n2,0,1\n", r"path\.csv, line 3: 3 values where the rows before have 2 \(x,y\)"),
    ("t,x,y\n0,0,0\n1,1\n", r"path\.csv, line 3: 2 values where the rows before have 3 \(t,x,y\)"),
    ("0,0,0\n1,1,0\n1,2,0\n", r"path\.csv, line 3: time 1 s is not after the row before's 1 s"),
    ("# nothing\n\n", r"path\.csv: 0 point\(s\); a path needs two or more rows"),
    ("x,y\n3,4\n", r"path\.csv: 1 point\(s\); a path needs two or more rows"),
    ("a,b\n0,0\n", r"path\.csv, line 1: 'a' is not a number"),
])
def test_a_bad_path_file_is_refused_naming_the_file_and_the_line(tmp_path, text, says):
    with pytest.raises(recipe.PathFileError, match=says) as refused:
        recipe.read_path_csv(write(tmp_path, text))
    assert str(tmp_path / "path.csv") in str(refused.value)
    assert isinstance(refused.value, JobError)  # reported to the user, never a traceback


def test_a_missing_or_binary_path_file_is_refused_by_name(tmp_path):
    with pytest.raises(recipe.PathFileError, match=r"cannot read the path file .*nowhere\.csv"):
        recipe.read_path_csv(tmp_path / "nowhere.csv")
    binary = tmp_path / "take.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x00")
    with pytest.raises(recipe.PathFileError, match=r"take\.csv: not a text file"):
        recipe.read_path_csv(binary)


def test_a_path_file_too_long_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(recipe, "MAX_ROWS", 5)
    file = write(tmp_path, "".join(f"{k},0\n" for k in range(100)))
    with pytest.raises(recipe.PathFileError, match=r"line 6: more than 5 rows"):
        recipe.read_path_csv(file)


# -- paths in meters, laid out from the first gait's start -----------------------------------------


def test_the_floor_starts_under_the_take_and_faces_the_way_it_walks(walk):
    floor = recipe.start_floor(walk)
    world = walk.fk()[1]
    hips, left_hip = world[:, walk.names.index("Hips")], world[:, walk.names.index("LeftUpLeg")]
    up = np.array([0.0, 1.0, 0.0])  # CMU's
    np.testing.assert_allclose(floor.origin, hips[0] - up * hips[0, 1], atol=1e-9)
    # Ahead: the way the walk travels (its hips from the first frame to the last), within 3 degrees.
    travel = hips[-1] - hips[0]
    travel -= up * travel[1]
    cos = travel @ floor.ahead / np.linalg.norm(travel)
    assert math.degrees(math.acos(min(cos, 1.0))) < 3.0
    # Left: where the left thigh is, and on the floor.
    assert abs(floor.ahead @ up) < 1e-12 and abs(floor.left @ up) < 1e-12
    assert (left_hip[0] - hips[0]) @ floor.left > 0.0
    np.testing.assert_allclose(np.cross(floor.ahead, floor.left), up, atol=1e-12)


def test_a_circle_turns_left_from_the_start_and_comes_back_to_it():
    xy = recipe.circle_xy(3.0)
    np.testing.assert_allclose(np.linalg.norm(xy - [0.0, 3.0], axis=-1), 3.0, atol=1e-12)
    np.testing.assert_allclose(xy[[0, -1]], [[0, 0], [0, 0]], atol=1e-12)
    chords = np.diff(xy, axis=0)
    assert chords[0, 0] > 0 and abs(chords[0, 1]) < 0.01 * np.linalg.norm(chords[0])  # ahead first
    assert np.all(chords[:-1, 0] * chords[1:, 1] - chords[:-1, 1] * chords[1:, 0] > 0)  # always left
    assert np.linalg.norm(chords, axis=-1).sum() == pytest.approx(2 * math.pi * 3.0, rel=1e-4)
    assert np.linalg.norm(chords, axis=-1).max() <= recipe.CIRCLE_SPACING
    np.testing.assert_array_equal(recipe.line_xy(20.0), [[0, 0], [20, 0]])
    for bad in (0.0, -2.0, math.inf, math.nan, 1e5):
        with pytest.raises(JobError, match=r"--circle must be above 0 m and at most 10000 m"):
            recipe.circle_xy(bad)
    with pytest.raises(JobError, match=r"--line must be above 0 m"):
        recipe.line_xy(-1.0)


def test_a_path_in_meters_lands_in_the_same_world_place_in_a_z_up_centimeter_take(walk):
    """The variant holds the same world motion turned Y-up -> Z-up and in centimeters (not CMU's
    unit): the circle laid out from its start is the original's, turned and scaled alike."""
    zup, _ = variants.z_up(walk)
    cm, _ = variants.scaled(zup, walk.meters_per_unit * 100.0)
    here = recipe.start_floor(walk).place(recipe.circle_xy(2.0))
    # (variants makes core's Clips; the add-on's core is that code under the add-on's name)
    there = recipe.start_floor(cast(Clip, cm)).place(recipe.circle_xy(2.0))
    turn = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # variants.z_up's
    assert cm.meters_per_unit == pytest.approx(0.01)
    np.testing.assert_allclose(there * 0.01, (here @ turn.T) * walk.meters_per_unit, atol=1e-9)


# -- points from Blender's world ----------------------------------------------------------------


def test_world_points_read_in_the_armatures_clip_space_whatever_its_object_transform():
    """By hand: Blender's BVH importer (forward -Z, up Y) puts BVH (x, y, z) at world (x, -z, y)
    times its scale, and the bridge reads an armature's bones in the world as they stand, so a
    world point is BVH (x, z, -y) / scale, however the armature object is moved, turned or
    scaled (evenly)."""
    settings = {"axis_forward": "-Z", "axis_up": "Y", "global_scale": 0.5}
    c = armature.axis_conversion("-Z", "Y")
    np.testing.assert_allclose(c @ [1.0, 2.0, 3.0], [1.0, -3.0, 2.0], atol=1e-12)
    p = np.array([[1.0, 2.0, 3.0], [-4.0, 0.5, 0.0]])
    want = np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=-1) / 0.5
    rot = quat.to_matrix(quat.normalize(np.array([0.9, 0.1, -0.3, 0.2])))
    moved = np.block([[2.5 * rot, np.array([[3.0], [-1.0], [0.25]])], [np.zeros((1, 3)), 1]])
    for world in (np.eye(4), moved):
        where = clip_space(world, settings, "arm")
        np.testing.assert_allclose(recipe.clip_points(p, world, where), want, atol=1e-12)


def test_an_animated_targets_track_ends_where_it_stops_and_a_still_one_is_refused():
    frames = np.arange(10, 20, dtype=np.float64)
    up = np.array([0.0, 1.0, 0.0])
    x = np.minimum(frames - 10, 5.0) * 10.0  # 10 cm a frame, standing from frame 15 on
    positions = np.stack([x, np.full_like(x, 3.0), np.zeros_like(x)], axis=-1)
    got = recipe.target_track(frames, positions, Timing(10.0, 24.0), up, 0.01, "Empty")
    np.testing.assert_allclose(got.times, np.arange(6) / 24.0)
    np.testing.assert_array_equal(got.positions, positions[:6])
    bobbing = np.stack([np.zeros(10), np.linspace(0, 50, 10), np.zeros(10)], axis=-1)  # only up and down
    for still in (bobbing, positions[6:]):
        with pytest.raises(JobError, match=r"^'Empty' is no curve and does not move over the floor \(fram"):
            recipe.target_track(frames[:len(still)], still, Timing(10.0, 24.0), up, 0.01, "Empty")


# -- the speed ----------------------------------------------------------------------------------


def test_a_speed_keyed_over_time_becomes_the_speed_at_each_meter():
    # 1 m/s to 2 m/s over 2 s: 3 m by then (the trapezoid), then 2 m/s held to the path's end.
    s, v = recipe.speed_along(np.array([0.0, 2.0]), np.array([1.0, 2.0]), 10.0, (0.5, 3.0))
    np.testing.assert_allclose(s, [0.0, 3.0, 10.0])
    np.testing.assert_allclose(v, [1.0, 2.0, 2.0])
    # Keyed every frame: s(t) is the speed's integral; the time to each meter back is t.
    t = np.linspace(0.0, 4.0, 97)
    keyed = 1.0 + 0.25 * t * t
    s, v = recipe.speed_along(t, keyed, 1.0, (0.1, 9.0))
    np.testing.assert_allclose(s, t + t ** 3 / 12.0, rtol=2e-4)
    # A speed below the gaits' reach is played at the slowest they reach, and travels that far.
    s, v = recipe.speed_along(np.array([0.0, 1.0]), np.array([0.0, 0.0]), 5.0, (0.8, 3.0))
    np.testing.assert_allclose(s, [0.0, 0.8, 5.0])
    with pytest.raises(JobError, match="increasing times"):
        recipe.speed_along(np.array([0.0, 0.0]), np.array([1.0, 1.0]), 1.0, (0.5, 2.0))


def test_speed_auto_is_the_slowest_gaits_and_a_bad_one_names_the_option():
    assert recipe.constant_speed(FollowPathOptions(), [1.3, 0.9, 2.0]) == 0.9
    assert recipe.constant_speed(FollowPathOptions(speed=1.7), [1.3, 0.9]) == 1.7
    with pytest.raises(JobError, match=r"^--speed must be 0 \(Auto\) or above, not -1$"):
        recipe.constant_speed(FollowPathOptions(speed=-1.0), [1.0], CLI)
    with pytest.raises(JobError, match=r"^Speed From must be one of CONSTANT, CURVE, not 'RAMP'$"):
        recipe.constant_speed(FollowPathOptions(speed_mode="RAMP"), [1.0], UI)
    with pytest.raises(JobError, match=r"^'Bob' has no gaits to walk with: add the action of a walk"):
        recipe.check_any([], "Bob")
    with pytest.raises(JobError, match=r"^no gaits to walk with: give one or more GAIT\.bvh takes"):
        recipe.check_any([], face=CLI)


# -- the bake -----------------------------------------------------------------------------------


def test_the_bake_is_the_cores_follow(walk):
    loop = sync.loop_cycle(walk)
    points = recipe.start_floor(walk).place(recipe.line_xy(3.0))
    got = recipe.follow_clip([loop], points, 1.3, options=FollowPathOptions(lock_feet=False), fps=60.0)
    want = path.follow([loop], points, 1.3, fps=60.0, lock_feet=False)
    assert got.n_frames == want.n_frames and got.fps == 60.0
    np.testing.assert_array_equal(got.rotations, want.rotations)
    np.testing.assert_array_equal(got.positions, want.positions)
    for k, times in want.events.items():
        np.testing.assert_array_equal(got.events[k], times)
    # Where it is along the line, each frame: from the start to the end, never back, and as far as
    # the hips are ahead of the start (the line is straight ahead).
    along = recipe.travelled(got, points)
    floor = recipe.start_floor(walk)
    hips = (got.fk()[1][:, got.names.index("Hips")] - floor.origin) @ floor.ahead * got.meters_per_unit
    assert np.all(np.diff(along) >= 0.0) and along[0] < 0.05 and along[-1] > 2.9
    np.testing.assert_allclose(along, np.clip(hips, 0.0, 3.0), atol=1e-6)


def test_a_timed_target_is_the_cores_follow_target_and_its_warnings_name_frames(walk):
    """A target going 4 m straight ahead in 2 s, then 4 m in 1 s (4 m/s: faster than the walk
    alone reaches): the core's follow_target, its warning's times with the bake's frames."""
    loop = sync.loop_cycle(walk)
    floor = recipe.start_floor(walk)
    times = np.array([0.0, 2.0, 3.0])
    track = recipe.Track(times, floor.place(np.array([[0.0, 0.0], [4.0, 0.0], [8.0, 0.0]])))
    options = FollowPathOptions(lock_feet=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = recipe.target_clip([loop], track, options=options, fps=60.0, timing=Timing(11.0, 60.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = path.follow_target([loop], times, track.positions, fps=60.0, lock_feet=False)
    np.testing.assert_array_equal(got.positions, want.positions)
    (said,) = [str(w.message) for w in caught if issubclass(w.category, path.PathWarning)]
    found = re.findall(r"(?:at|to) (\d+\.\d+) s \(frames? (?:\d+-)?(\d+)\)", said)
    assert found, said
    for seconds, frame in found:
        assert int(frame) == round(11.0 + float(seconds) * 60.0), (seconds, frame)


def test_a_turn_too_tight_warns_with_the_frame_of_each_distance(jog):
    """A 0.5 m circle at the jog's own speed: the core names distances along the path; the frame at
    each is the bake's (its first frame 101 at 120 fps) plus the time to get there at that speed."""
    loop = sync.loop_cycle(jog)
    v = float(path.blendspace.gait_speeds([loop])[0])
    points = recipe.start_floor(jog).place(recipe.circle_xy(0.5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recipe.follow_clip([loop], points, v, options=FollowPathOptions(lock_feet=False),
                           timing=Timing(101.0, 120.0))
    (said,) = [str(w.message) for w in caught if issubclass(w.category, path.PathWarning)]
    assert "along the path the turn is tighter than the speed allows" in said
    found = re.findall(r"at (\d+\.\d+) m \(frame (\d+)\)", said)
    found += [pair for a, b, fa, fb in re.findall(r"from (\d+\.\d+) to (\d+\.\d+) m \(frames (\d+)-(\d+)\)",
                                                  said) for pair in ((a, fa), (b, fb))]
    assert len(found) >= 3, said
    # Where the output's root is: at the jog's speed, that far in (within 0.05 s: the blend's speed is
    # its own to 2 %, its root sways).
    for meters, frame in found:
        assert abs(int(frame) - (101.0 + float(meters) / v * 120.0)) <= 6, (meters, frame)
    # The radius and the speeds get no frame; the user reads no equation.
    assert re.search(r"a radius of \d+\.\d+ m at", said) and "(frame" not in said.split("widen it")[-1]
    worded = wording.in_user_words(said)
    assert "sideways (v^2/R)" in worded and "=" not in worded and "radius of" in worded, worded
def test_the_follow_path_command_takes_one_way_and_the_speed_as_declared():
    parser = build_parser()
    args = parser.parse_args(["follow-path", "walk.bvh", "run.bvh", "--circle", "3", "--out", "o.bvh"])
    assert (args.gaits, args.circle, args.line, args.path, args.speed) == (["walk.bvh", "run.bvh"], 3.0,
                                                                           None, None, None)
    assert args.lock_feet is True
    args = parser.parse_args(["follow-path", "w.bvh", "--path", "p.csv", "--speed", "1.5", "--no-lock-feet",
                              "--out", "o.blend"])
    assert (args.path, args.speed, args.lock_feet) == ("p.csv", 1.5, False)
    for bad in (["--circle", "3", "--line", "4"], [], ["--circle", "big"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["follow-path", "w.bvh", *bad, "--out", "o.bvh"])
