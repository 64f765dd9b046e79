"""Every command's settings, declared once: default, unit and help per field.

An operator reads its properties into one of these, the CLI its flags; both hand it to the job
(`jobs.X(data, options=...)`), as Blender's `anim_utils.bake_action` takes `BakeOptions`. Operator
property names are the field names; a test checks that each operator property and CLI flag has its
field's default. No bpy here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Transition methods as the user names them -> the core's `transition.METHODS` key.
METHODS = {"DEAD": "dead", "INERTIALIZE": "quintic", "CROSSFADE": "crossfade"}
SYNC_MODES = ("LINEAR", "HARMONIC", "LEADER")
WEIGHT_MODES = ("CONSTANT", "CURVE", "SPEED")
DURATION_UNITS = ("SECONDS", "CYCLES")
MASK_HELP = "LOWER_BODY, UPPER_BODY, FINGERS or joint names (with descendants); empty for all joints"


def opt(default: Any, help: str, unit: str = "", flag: str | None = None) -> Any:
    """A field with its default, its one-line help, its unit and its CLI flag (None: no flag)."""
    return field(default=default, metadata={"help": help, "unit": unit, "flag": flag})


# Foot Speed 0 is Auto: the core's threshold from the body and the take (contacts.thresholds).
AUTO = 0.0


def foot_speed() -> Any:
    """Foot Speed, the one declaration every command that finds contacts shares."""
    return opt(AUTO, "Foot speed under which a foot is planted; 0 = Auto (from the body and the take: "
                     "a slow shuffle, a walk, a run)", "m/s", "--speed")


def lock_feet() -> Any:
    return opt(True, "Hold each foot where it is planted in the sources through the blend (leg IK)",
               flag="--lock-feet")


def window() -> Any:
    return opt(0.5, "Event encoding: seconds before/after an event over which the curve turns", "s",
               "--window")


def sigma() -> Any:
    return opt(1 / 120, "Event encoding: Gaussian smoothing (0 for none)", "s", "--sigma")


def action() -> Any:
    return opt("", "Action (empty: the active one)")


def allow_mismatch() -> Any:
    """Allow Mismatch, for every command that combines actions (see bridge.check_skeleton)."""
    return opt(False, "Combine actions made for bones of other lengths (another skeleton) instead of "
                      "refusing them", flag="--allow-mismatch")


@dataclass(frozen=True)
class ImportOptions:
    axis_forward: str = opt("-Z", "Forward axis of the file", flag="--axis-forward")
    axis_up: str = opt("Y", "Up axis of the file", flag="--axis-up")
    global_scale: float = opt(1.0, "Scale applied to the file's units", flag="--scale")
    scale_preset: str = opt("NONE", "Convert file units to meters (times Scale)", flag="--scale-preset")
    rotate_mode: str = opt("QUATERNION", "Rotation keys: quaternions, or Euler", flag="--rotate-mode")
    frame_start: int = opt(1, "Frame of the file's first frame", flag="--frame-start")
    use_fps_scale: bool = opt(False, "Key at the scene's rate, so the motion plays in real time "
                                     "(else one key per frame)", flag="--fps-scale")
    update_scene_fps: bool = opt(True, "Set the scene's frame rate to the file's (then Scale FPS has "
                                       "nothing to scale)", flag="--update-scene-fps")
    update_scene_duration: bool = opt(True, "Extend the scene's frame range to the end of the take",
                                      flag="--update-scene-duration")


@dataclass(frozen=True)
class ExportOptions:
    action: str = action()
    global_scale: float = opt(1.0, "Scale applied to every length written (1: the armature's own "
                                   "units: a BVH import's file units, else the scene's)", flag="--scale")


@dataclass(frozen=True)
class FootstepOptions:
    action: str = action()
    speed_mps: float = foot_speed()


@dataclass(frozen=True)
class EventOptions:
    """Write Event Curves."""

    action: str = action()
    window: float = window()
    sigma: float = sigma()
    tracks: str = opt("ALL", "Event tracks (marker names) to encode: ALL, or names separated by commas")
    speed_mps: float = foot_speed()


@dataclass(frozen=True)
class DatasetOptions:
    """`stride export-dataset` (no operator: a batch job)."""

    window: float = window()
    sigma: float = sigma()
    speed_mps: float = foot_speed()
    feet: str = opt("", "The two ankle joints by name, LEFT,RIGHT, where Stride finds others", flag="--feet")
    workers: int = opt(1, "Processes; above 1 runs a separate Python on the bundled core", flag="--workers")


@dataclass(frozen=True)
class DecodeOptions:
    """Events from Curves."""

    action: str = action()
    window: float = window()
    prefix: str = opt("stride_event_", "Curves named <prefix><track> are decoded")


@dataclass(frozen=True)
class TransitionOptions:
    source_action: str = opt("", "Action to leave (empty: the active one, or the action a Stride bake "
                                 "was baked from)")
    source_time: float = opt(1.0, "Seconds into the source action where the transition starts", "s",
                             "--at")
    target_action: str = opt("", "Action to go into")
    target_time: float = opt(0.0, "Seconds into the target action to continue from", "s", "--dst-at")
    blend_time: float = opt(0.25, "Blend time", "s", "--blend")
    method: str = opt("DEAD", "DEAD, INERTIALIZE or CROSSFADE", flag="--method")
    halflife_mode: str = opt("AUTO", "AUTO: per joint and axis; FIXED: Half-life for every joint")
    halflife: float = opt(0.3, "Fixed half-life (dead blending)", "s", "--halflife")
    mask: str = opt("", MASK_HELP + "; joints outside it cut over", flag="--mask")
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()


@dataclass(frozen=True)
class NlaBakeOptions:
    track: str = opt("", "NLA track (empty: the active one)")
    blend_time: float = opt(0.25, "Where strips set no Blend In/Out", "s", "--blend")
    method: str = opt("DEAD", "DEAD, INERTIALIZE or CROSSFADE", flag="--method")
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()


@dataclass(frozen=True)
class LockFeetOptions:
    """Lock Feet."""

    action: str = action()
    blend_time: float = opt(0.1, "Seconds over which a lock eases out after the foot lifts", "s",
                            "--blend-time")
    lower_pelvis: bool = opt(False, "Where a leg cannot reach its planted foot, lower the hips just enough",
                             flag="--lower-pelvis")
    speed_mps: float = foot_speed()


@dataclass(frozen=True)
class SyncOptions:
    action_a: str = opt("", "First cycle (empty: the active action, or the action a Stride bake was "
                            "baked from)")
    action_b: str = opt("", "Second cycle's action")
    weight: float = opt(0.5, "0 = A, 1 = B", flag="--weight")
    weight_mode: str = opt("CONSTANT", "CONSTANT, CURVE (stride_blend_weight keyed) or SPEED")
    speed_mps: float = opt(1.5, "The weight that travels at this speed", "m/s", "--speed")
    duration: float = opt(4.0, "Duration of the result", "s or cycles", "--seconds")
    duration_unit: str = opt("SECONDS", "SECONDS, or CYCLES: blended cycles (constant or speed weight)")
    mode: str = opt("LINEAR", "Cycle length: LINEAR, HARMONIC (cadence linear) or LEADER", flag="--mode")
    frames_a: tuple[int, int] = opt((0, 0), "A's cycle: first frame and the frame of the same phase "
                                            "(0, 0: from footsteps)", flag="--frames-a")
    frames_b: tuple[int, int] = opt((0, 0), "B's cycle (0, 0: from footsteps)", flag="--frames-b")
    in_place: bool = opt(False, "Strip the root's travel (the character stays at the origin)",
                         flag="--in-place")
    cyclic: bool = opt(True, "A duration of whole cycles bakes one closed loop with Cycles modifiers",
                       flag="--cyclic")
    mask: str = opt("", MASK_HELP, flag="--mask")
    lock_feet: bool = lock_feet()
    allow_mismatch: bool = allow_mismatch()


def default(cls: type, name: str) -> Any:
    """The declared default of `cls`'s field `name` (for an operator property)."""
    return {f.name: f for f in dataclasses.fields(cls)}[name].default


def help_of(cls: type, name: str) -> str:
    """The field's help with its unit, as a property description or CLI help."""
    meta = {f.name: f for f in dataclasses.fields(cls)}[name].metadata
    return f"{meta['help']} ({meta['unit']})" if meta["unit"] else meta["help"]


def prop(cls: type, name: str) -> dict[str, Any]:
    """An operator or sidebar property's default and description, from its options field."""
    return {"default": default(cls, name), "description": help_of(cls, name)}


def from_source(cls: type, source: Any, **overrides: Any) -> Any:
    """`cls` filled from the attributes of `source` (an operator) that name its fields."""
    values = {}
    for f in dataclasses.fields(cls):
        if hasattr(source, f.name):
            value = getattr(source, f.name)
            values[f.name] = tuple(value) if isinstance(f.default, tuple) else value
    return cls(**{**values, **overrides})


def flags(cls: type) -> dict[str, str]:
    """CLI flag -> field name for the fields that have a flag."""
    return {f.metadata["flag"]: f.name for f in dataclasses.fields(cls) if f.metadata["flag"]}
