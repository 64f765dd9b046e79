"""Every command's settings, declared once: default, label, unit, help, bounds, choices and CLI
flag per field.

An operator reads its properties into one of these, the CLI its flags; both hand it to the job
(`jobs.X(data, options=...)`), as Blender's `anim_utils.bake_action` takes `BakeOptions`. Everything
a user sets is made from these fields, so that a field added here is everywhere: an operator's
properties are its options class's fields (`properties.FromOptions`), the sidebar holds the fields of
the commands it runs (`properties.SIDEBAR`), each subcommand's flags are its options' flagged fields
(`arguments.add_flags`), and users are told of an option by its label or flag (`wording.Face.called`).
No bpy here.

A new command's options: a dataclass here, added to OPTIONS.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .core.dataset import Settings as DatasetSettings
from .core.events import SPAN

# Choices of the fields that take one of a few values: (value, label, help), as Blender's enum items.
Choices = tuple[tuple[str, str, str], ...]
METHOD_CHOICES: Choices = (
    ("DEAD", "Dead Blending", "Extrapolate the source with decaying velocity, blend into the target"),
    ("INERTIALIZE", "Inertialization", "Target plus a decaying offset from the source"),
    ("CROSSFADE", "Crossfade", "Blend from the held source pose (as the NLA does)"))
SYNC_MODE_CHOICES: Choices = (
    ("LINEAR", "Linear", "Cycle length interpolated linearly (engines' default)"),
    ("HARMONIC", "Harmonic", "Cadence interpolated linearly"),
    ("LEADER", "Leader", "The clip with the higher weight sets the pace"))
WEIGHT_MODE_CHOICES: Choices = (
    ("CONSTANT", "Constant", "One weight for the whole bake"),
    ("CURVE", "Curve", "The armature property stride_blend_weight, keyed over time in action A"),
    ("SPEED", "Speed", "The weight that travels at Speed"))
SPEED_MODE_CHOICES: Choices = (
    ("CONSTANT", "Constant", "One speed for the whole bake"),
    ("RAMP", "Ramp", "From Ramp From to Ramp To over the duration"),
    ("CURVE", "Curve", "The armature's Speed, keyed over time (Graph Editor)"))
DURATION_UNIT_CHOICES: Choices = (
    ("SECONDS", "Seconds", "Duration in seconds"),
    ("CYCLES", "Cycles", "Duration in blended cycles (constant or speed weight)"))
HALFLIFE_CHOICES: Choices = (
    ("AUTO", "Auto", "Per joint and axis, from the pose difference and velocity at the switch"),
    ("FIXED", "Fixed", "One half-life for every joint"))
AXIS_CHOICES: Choices = tuple((a, a, f"{a} axis") for a in ("X", "Y", "Z", "-X", "-Y", "-Z"))
SCALE_PRESET_CHOICES: Choices = (
    ("NONE", "As in file", "Keep the file's units"),
    ("CMU_TO_METERS", "CMU to meters", "CMU units (0.05644 m)"),
    ("CM_TO_METERS", "cm to meters", "Centimeters"))
ROTATE_MODE_CHOICES: Choices = (
    ("QUATERNION", "Quaternion", "Quaternion keys (no gimbal lock)"),
    ("NATIVE", "Euler (native)", "Each bone's Euler order from the file"),
    *((m, f"Euler ({m})", f"Euler {m}") for m in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")))

SOURCE_CHOICES: Choices = (
    ("AUTO", "Auto", "What the viewport shows where constraints, IK or drivers move the bones read; "
                     "their keys otherwise"),
    ("EVALUATED", "Evaluated", "What the viewport shows: keys through constraints, IK and drivers, "
                               "frame by frame (slower)"),
    ("KEYS", "Keys", "The bones' keyed F-curves only (fast; misses what the rig adds)"))

ROOT_MODE_CHOICES: Choices = (
    ("YAW", "Yaw", "The root turns with the character's smoothed heading, about up only"),
    ("NONE", "None", "The root travels without turning"))
ENGINE_FORMAT_CHOICES: Choices = (
    ("FBX", "FBX (.fbx)", "Blender's FBX exporter: for Unreal and Unity"),
    ("GLB", "glTF Binary (.glb)", "Blender's glTF exporter: for Godot (and the glTF importers of Unreal "
                                  "and Unity); each animation's extras hold its events"))
PATH_SPEED_CHOICES: Choices = (
    ("CONSTANT", "Constant", "One speed along the whole path"),
    ("CURVE", "Curve", "The armature's Speed, keyed over time (Graph Editor)"))
ENGINE_CHOICES: Choices = (
    ("UNREAL", "Unreal", "FBX axes and scale as Epic's Send to Unreal writes them: Z up, Y forward"),
    ("UNITY", "Unity", "FBX axes and scale Unity imports at scale 1: Y up, -Z forward, FBX units"))

# Transition methods as the user names them -> the core's `transition.METHODS` key.
METHODS = {"DEAD": "dead", "INERTIALIZE": "quintic", "CROSSFADE": "crossfade"}
MASK_HELP = "LOWER_BODY, UPPER_BODY, FINGERS or joint names (with descendants); empty for all joints"


def opt(default: Any, help: str, unit: str = "", flag: str | None = None, *, label: str,
        choices: Choices = (), bounds: tuple[float, float] | None = None, ui: dict[str, Any] | None = None,
        syntax: str = "", metavar: str = "") -> Any:
    """A field with its default, its label and one-line help as the user sees them, its unit, its
    CLI flag (None: no flag), its choices (value, label, help) and its (min, max) bounds. `ui`: how
    Blender shows it (precision, subtype, soft_min, soft_max). `syntax`: how the CLI reads a value
    other than by its type (arguments.SYNTAX: `lower`/`upper` case, `auto_speed`, `auto_seconds`);
    `metavar`: the value as the CLI's help names it."""
    return field(default=default, metadata={"help": help, "unit": unit, "flag": flag, "label": label,
                                            "choices": choices, "bounds": bounds, "ui": ui or {},
                                            "syntax": syntax, "metavar": metavar})


# Foot Speed 0 is Auto: the core's threshold from the body and the take (contacts.thresholds).
AUTO = 0.0
# Tolerance 0 is Auto too: the detector's hysteresis from the curve's own noise.
AUTO_TOLERANCE = 0.0
FOOT_SPEED_MAX = 5.0  # m/s: a sprinting foot's stance speed is far below


def foot_speed() -> Any:
    """Foot Speed, the one declaration every command that finds contacts shares."""
    return opt(AUTO, "Foot speed under which a foot is planted; 0 = Auto (from the body and the take: "
                     "a slow shuffle, a walk, a run)", "m/s", "--speed", label="Foot Speed",
               bounds=(0.0, FOOT_SPEED_MAX), syntax="auto_speed")


def source() -> Any:
    """Read Source, the one declaration every command that reads an action shares
    (bridge.read_action's `source`)."""
    return opt("AUTO", "What to read of an action: AUTO, EVALUATED (what the viewport shows: constraints, "
                       "IK, drivers) or KEYS (the F-curves)", flag="--source", label="Read",
               choices=SOURCE_CHOICES, syntax="upper", metavar="keys|evaluated|auto")


def lock_feet() -> Any:
    return opt(True, "Hold each foot where it is planted in the sources through the blend (leg IK)",
               flag="--lock-feet", label="Lock Feet")


# The event encoding's defaults are the dataset export's (core.dataset.Settings), declared there once.
def window() -> Any:
    return opt(DatasetSettings.window, "Event encoding: seconds before/after an event over which the curve "
                                       "turns", "s", "--window", label="Window", bounds=(0.001, 60.0))


def sigma() -> Any:
    return opt(DatasetSettings.sigma, "Event encoding: Gaussian smoothing (0 for none)", "s", "--sigma",
               label="Smoothing", bounds=(0.0, 1.0), ui={"precision": 4})


def action() -> Any:
    return opt("", "Action (empty: the active one)", label="Action")


def method() -> Any:
    return opt("DEAD", "How the source goes into the target: DEAD, INERTIALIZE or CROSSFADE", flag="--method",
               label="Method", choices=METHOD_CHOICES, syntax="lower")


def mask(help: str) -> Any:
    return opt("", help, flag="--mask", label="Mask")


def allow_mismatch() -> Any:
    """Allow Mismatch, for every command that combines actions (see bridge.check_skeleton)."""
    return opt(False, "Combine actions made for bones of other lengths (another skeleton) instead of "
                      "refusing them", flag="--allow-mismatch", label="Allow Mismatch")


def root_smoothing() -> Any:
    """The root's smoothing, the one declaration Add Root Motion and Export for Engine share."""
    return opt(0.0, "Gaussian (sigma) that smooths the root's path and heading so it does not sway with "
                    "the steps; 0 = Auto (half a gait cycle)", "s", "--smooth", label="Root Smoothing",
               bounds=(0.0, 10.0))


def root_mode() -> Any:
    return opt("YAW", "How the root turns: YAW (with the character's heading, about up only) or NONE",
               flag="--root-mode", label="Root Turns", choices=ROOT_MODE_CHOICES, syntax="upper",
               metavar="yaw|none")


@dataclass(frozen=True)
class ImportOptions:
    axis_forward: str = opt("-Z", "Forward axis of the file", flag="--axis-forward", label="Forward",
                            choices=AXIS_CHOICES)
    axis_up: str = opt("Y", "Up axis of the file", flag="--axis-up", label="Up", choices=AXIS_CHOICES)
    global_scale: float = opt(1.0, "Scale applied to the file's units", flag="--scale", label="Scale",
                              bounds=(1e-6, 1e6), ui={"soft_min": 0.001, "soft_max": 1000.0})
    scale_preset: str = opt("NONE", "Convert file units to meters (times Scale)", flag="--scale-preset",
                            label="Units", choices=SCALE_PRESET_CHOICES)
    rotate_mode: str = opt("QUATERNION", "Rotation keys: quaternions, or Euler", flag="--rotate-mode",
                           label="Rotation", choices=ROTATE_MODE_CHOICES)
    frame_start: int = opt(1, "Frame of the file's first frame", flag="--frame-start", label="Start Frame")
    use_fps_scale: bool = opt(False, "Key at the scene's rate, so the motion plays in real time "
                                     "(else one key per frame)", flag="--fps-scale", label="Scale FPS")
    update_scene_fps: bool = opt(True, "Set the scene's frame rate to the file's (then Scale FPS has "
                                       "nothing to scale)", flag="--update-scene-fps",
                                 label="Update Scene FPS")
    update_scene_duration: bool = opt(True, "Extend the scene's frame range to the end of the take",
                                      flag="--update-scene-duration", label="Update Scene Duration")


@dataclass(frozen=True)
class ExportOptions:
    action: str = action()
    global_scale: float = opt(1.0, "Scale applied to every length written (1: the armature's own "
                                   "units: a BVH import's file units, else the scene's)", flag="--scale",
                              label="Scale", bounds=(1e-6, 1e6), ui={"soft_min": 0.001, "soft_max": 1000.0})
    source: str = source()


@dataclass(frozen=True)
class FootstepOptions:
    action: str = action()
    speed_mps: float = foot_speed()
    lifts: bool = opt(False, "Also mark where each foot lifts (FootUp_L, FootUp_R), to encode like the "
                             "touchdowns", flag="--lifts", label="Lifts")
    source: str = source()


@dataclass(frozen=True)
class EventOptions:
    """Write Event Curves."""

    action: str = action()
    window: float = window()
    sigma: float = sigma()
    tracks: str = opt("ALL", "Event tracks (marker names) to encode: ALL, or names separated by commas",
                      label="Tracks")
    speed_mps: float = foot_speed()
    source: str = source()


@dataclass(frozen=True)
class DatasetOptions:
    """`stride export-dataset` (no operator: a batch job); its defaults are core.dataset.Settings's."""

    window: float = window()
    sigma: float = sigma()
    speed_mps: float = foot_speed()
    feet: str = opt("", "The two ankle joints by name, LEFT,RIGHT, where Stride finds others", flag="--feet",
                    label="Feet", metavar="LEFT,RIGHT")
    workers: int = opt(1, "Processes; above 1 runs a separate Python on the bundled core", flag="--workers",
                       label="Workers")


@dataclass(frozen=True)
class DecodeOptions:
    """Events from Curves."""

    action: str = action()
    window: float = window()
    prefix: str = opt("stride_event_", "Curves named <prefix><track> are decoded", label="Prefix")
    span: float = opt(SPAN, "Seconds of samples each step is read through (a least-squares line; at "
                            "least 3 samples): longer holds up to noisier curves", "s", "--span",
                      label="Span", bounds=(0.0, 2.0))
    tolerance: float = opt(AUTO_TOLERANCE, "Hysteresis: seconds the decoded time must pass zero by "
                                           "before an event fires; 0 = Auto (3x the curve's noise, at "
                                           "most 0.02 s)", "s", "--tolerance", label="Tolerance",
                           bounds=(0.0, 1.0), ui={"precision": 3})
    causal: bool = opt(False, "Read past samples only, as at runtime (an event is known about a frame "
                              "after it)", flag="--causal", label="Causal")


@dataclass(frozen=True)
class TransitionOptions:
    source_action: str = opt("", "Action to leave (empty: the active one, or the action a Stride bake "
                                 "was baked from)", label="Source")
    source_time: float = opt(1.0, "Seconds into the source action where the transition starts", "s",
                             "--at", label="Source Time", bounds=(0.0, 1e6))
    target_action: str = opt("", "Action to go into", label="Target")
    target_time: float = opt(0.0, "Seconds into the target action to continue from", "s", "--dst-at",
                             label="Target Time", bounds=(0.0, 1e6), syntax="auto_seconds")
    target_end: float = opt(0.0, "Seconds into the target action where the bake ends (0: at the "
                                 "target's end)", "s", "--dst-end", label="Target End", bounds=(0.0, 1e6))
    blend_time: float = opt(0.25, "Seconds the source takes to blend into the target", "s", "--blend",
                            label="Blend Time", bounds=(0.0, 10.0))
    method: str = method()
    halflife_mode: str = opt("AUTO", "Dead blending's half-lives: AUTO (per joint and axis) or FIXED "
                                     "(Fixed Half-life for every joint)", label="Half-life",
                             choices=HALFLIFE_CHOICES)
    halflife: float = opt(0.3, "Dead blending: seconds in which the source's velocity halves, the same "
                               "for every joint", "s", "--halflife", label="Fixed Half-life",
                          bounds=(0.0, 10.0))
    mask: str = mask(MASK_HELP + "; joints outside it cut over")
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()
    source: str = source()


@dataclass(frozen=True)
class NlaBakeOptions:
    track: str = opt("", "NLA tracks to bake, names separated by commas (empty: every unmuted track), "
                         "played as the NLA stacks them", flag="--tracks", label="Tracks")
    blend_time: float = opt(0.25, "Seconds of each blend where strips set no Blend In/Out", "s", "--blend",
                            label="Blend Time", bounds=(0.0, 10.0))
    method: str = method()
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()
    reanchor: bool = opt(False, "Each strip after a transition continues the path of the one before it, "
                                "moved and turned to meet it; off: every strip plays where the NLA places "
                                "it, as Blender plays the tracks", flag="--reanchor", label="Continue Path")
    source: str = source()


@dataclass(frozen=True)
class LockFeetOptions:
    """Lock Feet."""

    action: str = action()
    blend_time: float = opt(0.1, "Seconds over which a lock eases out after the foot lifts", "s",
                            "--blend-time", label="Blend Time", bounds=(0.0, 2.0))
    lower_pelvis: bool = opt(False, "Where a leg cannot reach its planted foot, lower the hips just enough",
                             flag="--lower-pelvis", label="Lower Pelvis")
    speed_mps: float = foot_speed()
    source: str = source()


@dataclass(frozen=True)
class SyncOptions:
    action_a: str = opt("", "First cycle (empty: the active action, or the action a Stride bake was "
                            "baked from)", label="A")
    action_b: str = opt("", "Second cycle's action", label="B")
    weight: float = opt(0.5, "Blend weight: 0 = A, 1 = B", flag="--weight", label="Weight", bounds=(0.0, 1.0),
                        ui={"subtype": "FACTOR"})
    weight_mode: str = opt("CONSTANT", "Where the weight comes from: CONSTANT, CURVE (stride_blend_weight "
                                       "keyed) or SPEED", label="Weight From", choices=WEIGHT_MODE_CHOICES)
    speed_mps: float = opt(1.5, "The weight that travels at this speed", "m/s", "--speed", label="Speed",
                           bounds=(0.0, 20.0))
    duration: float = opt(4.0, "Duration of the result", "s or cycles", "--seconds", label="Duration",
                          bounds=(0.01, 600.0))
    duration_unit: str = opt("SECONDS", "Duration in SECONDS, or CYCLES: blended cycles (constant or speed "
                                        "weight)", label="Unit", choices=DURATION_UNIT_CHOICES)
    mode: str = opt("LINEAR", "Cycle length: LINEAR, HARMONIC (cadence linear) or LEADER", flag="--mode",
                    label="Cycle Length", choices=SYNC_MODE_CHOICES, syntax="lower")
    frames_a: tuple[int, int] = opt((0, 0), "A's cycle: first frame and the frame of the same phase "
                                            "(0, 0: from footsteps)", flag="--frames-a", label="A Frames")
    frames_b: tuple[int, int] = opt((0, 0), "B's cycle: first frame and the frame of the same phase "
                                            "(0, 0: from footsteps)", flag="--frames-b", label="B Frames")
    in_place: bool = opt(False, "Strip the root's travel (the character stays at the origin)",
                         flag="--in-place", label="In Place")
    cyclic: bool = opt(True, "A duration of whole cycles bakes one closed loop with Cycles modifiers",
                       flag="--cyclic", label="Cyclic")
    mask: str = mask(MASK_HELP)
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()
    source: str = source()


@dataclass(frozen=True)
class FindFeetOptions:
    """Find Feet (the Rig panel)."""

    source: str = source()


@dataclass(frozen=True)
class RootMotionOptions:
    """Add Root Motion."""

    action: str = action()
    smooth: float = root_smoothing()
    mode: str = root_mode()
    source: str = source()


@dataclass(frozen=True)
class EngineExportOptions:
    """Export for Engine."""

    actions: str = opt("", "Actions to export: names separated by commas, ALL (every action of this "
                           "armature's bones), or empty: the active one", flag="--actions", label="Actions",
                           metavar="A,B|ALL")
    file_format: str = opt("FBX", "FBX or GLB (glTF binary)", flag="--format", label="Format",
                           choices=ENGINE_FORMAT_CHOICES, syntax="upper", metavar="fbx|glb")
    engine: str = opt("UNREAL", "The engine an FBX is set up for (axes and scale): UNREAL or UNITY",
                      flag="--engine", label="Engine", choices=ENGINE_CHOICES, syntax="upper",
                      metavar="unreal|unity")
    root_motion: bool = opt(True, "Give an action without root motion a root first (Add Root Motion), and "
                                  "export that", flag="--root-motion", label="Add Root Motion")
    smooth: float = root_smoothing()
    mode: str = root_mode()
    source: str = source()


# How fast a gait can go: far above a sprint (about 10 m/s), so a typo is no bake of minutes.
SPEED_MAX = 20.0


@dataclass(frozen=True)
class BlendSpaceOptions:
    """Bake Blend Space: the armature's gaits (`obj.stride.gaits`, rig.py) played at a speed."""

    speed_mode: str = opt("CONSTANT", "Where the target speed comes from: CONSTANT (Speed), RAMP (Ramp From "
                                      "to Ramp To over the duration) or CURVE (the armature's Speed, keyed)",
                          label="Speed From", choices=SPEED_MODE_CHOICES)
    speed: float = opt(1.5, "Speed the character travels at over the floor", "m/s", "--speed", label="Speed",
                       bounds=(0.0, SPEED_MAX), syntax="speed_keys")
    ramp_from: float = opt(1.2, "Speed where a ramp starts", "m/s", label="Ramp From",
                           bounds=(0.0, SPEED_MAX))
    ramp_to: float = opt(3.0, "Speed where a ramp ends", "m/s", label="Ramp To", bounds=(0.0, SPEED_MAX))
    duration: float = opt(4.0, "Duration of the result", "s", "--duration", label="Duration",
                          bounds=(0.01, 600.0))
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()
    source: str = source()


# Walk Along Path's Speed 0 is Auto: the slowest gait's own speed.
AUTO_PATH_SPEED = 0.0


@dataclass(frozen=True)
class FollowPathOptions:
    """Walk Along Path: the armature's gaits (`obj.stride.gaits`) walked along a curve object, or after
    an animated object in time (`stride follow-path`: along a CSV path, a circle or a line)."""

    target: str = opt("", "The object to walk along: a curve (its path, as its object transform places "
                          "it) or any object animated over the scene's frames (followed in time)",
                      label="Target")
    speed_mode: str = opt("CONSTANT", "Where the speed along a curve comes from: CONSTANT (Speed) or CURVE "
                                      "(the armature's Speed, keyed over time)", label="Speed From",
                          choices=PATH_SPEED_CHOICES)
    speed: float = opt(AUTO_PATH_SPEED, "Speed along the path; 0 = Auto (the slowest gait's own speed)",
                       "m/s", "--speed", label="Speed", bounds=(0.0, SPEED_MAX))
    idle_action: str = opt("", "A standing take the character starts from and comes to rest in at the "
                               "path's end (empty: none)", flag="--idle", label="Idle", metavar="IDLE.bvh")
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()
    source: str = source()


# Every command's options. Users are told of an option by the label (flag) of its first declaration
# here (wording.py), so a class whose field of a shared name means something else comes later.
OPTIONS = (FootstepOptions, LockFeetOptions, EventOptions, DecodeOptions, TransitionOptions, NlaBakeOptions,
           SyncOptions, ExportOptions, ImportOptions, DatasetOptions, FindFeetOptions,
           RootMotionOptions, EngineExportOptions, BlendSpaceOptions, FollowPathOptions)


def field_of(cls: type, name: str) -> Any:
    """The dataclass field `name` of options class `cls`."""
    return {f.name: f for f in dataclasses.fields(cls)}[name]


def choice_values(cls: type, name: str) -> tuple[str, ...]:
    """The values `cls`'s field `name` takes: its choices', in their order."""
    return tuple(value for value, _, _ in field_of(cls, name).metadata["choices"])


def default(cls: type, name: str) -> Any:
    """The declared default of `cls`'s field `name` (for an operator property)."""
    return field_of(cls, name).default


def help_of(cls: type, name: str) -> str:
    """The field's help with its unit, as a property description or CLI help."""
    meta = field_of(cls, name).metadata
    return f"{meta['help']} ({meta['unit']})" if meta["unit"] else meta["help"]


def called(cls: type, name: str, by: str = "label") -> str:
    """How a user calls `cls`'s field `name`: by its label in Blender (`by="label"`: a property's
    name, an error's subject), by its flag on the command line (`by="flag"`)."""
    return str(field_of(cls, name).metadata[by])


def from_source(cls: type, source: Any, **overrides: Any) -> Any:
    """`cls` filled from the attributes of `source` (an operator) that name its fields."""
    values = {}
    for f in dataclasses.fields(cls):
        if hasattr(source, f.name):
            value = getattr(source, f.name)
            values[f.name] = tuple(value) if isinstance(f.default, tuple) else value
    return cls(**{**values, **overrides})
