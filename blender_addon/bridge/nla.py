"""What an armature's NLA plays, as clips a bake can sequence: the tracks chosen, each strip that
plays alone sampled at scene frames with its blend in and out, and a refusal (naming the track,
strip and setting, and how to change it) of what a bake cannot reproduce.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import compat
from ..core import resample
from ..core.clip import Clip
from ..errors import BridgeError
from ..recipes.actions import quoted_name
from ..timing import Timing
from .checks import check_skeleton
from .reading import read_action
from .space import scene_fps


def nla_tracks(obj: Any, tracks: str = "") -> list[Any]:
    """The NLA tracks a bake plays, bottom first: those named in `tracks` (separated by commas),
    or every unmuted track for an empty string. BridgeError for a name that is no track, a muted
    track named, a solo track (the NLA then plays it alone), or NLA tweak mode."""
    adt = obj.animation_data
    every = list(adt.nla_tracks) if adt is not None else []
    if not every:
        raise BridgeError(f"armature {obj.name!r} has no NLA tracks: push actions down in the Action "
                          "Editor and arrange them as strips first")
    if adt.use_tweak_mode:
        raise BridgeError(f"{obj.name!r} is in NLA tweak mode, where the NLA plays only the tracks below the "
                          "strip being edited: leave it (Tab in the NLA Editor), then bake again")
    solo = [t.name for t in every if t.is_solo]
    if solo:
        raise BridgeError(f"NLA track {solo[0]!r} is solo (the star in the NLA Editor), so the NLA plays it "
                          "alone: turn solo off, then name the tracks to bake")
    wanted = [n.strip() for n in tracks.split(",") if n.strip()]
    if not wanted:
        return [t for t in every if not t.mute]
    names = [t.name for t in every]
    for name in wanted:
        if name not in names:
            raise BridgeError(f"no NLA track named {name!r} on {obj.name!r} (tracks: {', '.join(names)})")
    chosen = [t for t in every if t.name in wanted]
    for t in chosen:
        if t.mute:
            raise BridgeError(f"NLA track {t.name!r} is muted, so the NLA does not play it: unmute it (its "
                              "checkbox in the NLA Editor) or leave it out of the tracks to bake")
    return chosen


def _strip_problems(s: Any) -> list[str]:
    """What Stride cannot bake exactly in an NLA strip, each with how to change it."""
    return [what for what, on in (
        ("a reversed strip (turn Reversed off)", s.use_reverse),
        ("animated influence (turn Animated Influence off)", s.use_animated_influence),
        ("animated strip time (turn Animated Strip Time off)", s.use_animated_time),
        ("a cyclic animated time (turn Cyclic Strip Time off)", s.use_animated_time_cyclic),
        (f"blending '{s.blend_type}' (only Replace: set Blending to Replace)", s.blend_type != "REPLACE"),
        (f"a {s.type.lower()} strip (only action strips)", s.type != "CLIP"),
        ("strip modifiers (remove them in the strip's Modifiers tab)", len(s.modifiers) > 0),
        ("no action (choose its action)", s.action is None)) if on]


def _keyed_channels(obj: Any, strip: Any) -> set[tuple[str, str]]:
    """{(bone, 'location' | 'rotation' | 'scale')} the strip's action keys for `obj`."""
    slot = getattr(strip, "action_slot", None) or compat.action_slot(strip.action, obj)
    out = set()
    for fc in compat.fcurves(strip.action, slot):
        named = quoted_name(fc.data_path, "pose.bones")
        if named is not None:
            prop = named[1].lstrip(".")
            out.add((named[0], "rotation" if prop.startswith("rotation_") else prop))
    return out


def _check_whole_poses(obj: Any, strips: list[Any], names: list[str], shown: list[int]) -> None:
    """Refuse strips of a stack whose actions key different channels: under the NLA a channel a
    strip does not key shows the track below, which a bake of whole poses cannot reproduce."""
    keyed = {i: _keyed_channels(obj, strips[i]) for i in sorted(set(shown))}
    union = set().union(*keyed.values())
    for i, channels in keyed.items():
        missing = sorted(union - channels)
        if missing:
            bone, prop = missing[0]
            other = next(names[j] for j, c in keyed.items() if (bone, prop) in c)
            raise BridgeError(f"NLA {names[i]} (action {strips[i].action.name!r}) keys no {prop} of bone "
                              f"{bone!r}, which {other} keys: there the NLA shows what is below it, which "
                              "Stride cannot bake; key that channel in the action, or bake the tracks "
                              "one at a time")


def nla_items(obj: Any, track: str = "", default_blend: float = 0.25,
              allow_mismatch: bool = False, source: str = "KEYS") -> tuple[list, list[float], float, str]:
    """([(clip, start_s, end_s)] at the scene rate, blend time per junction, first frame, track
    names) of what the NLA plays on tracks `track` (names separated by commas; empty: every
    unmuted track), in stack order with the strips' extrapolation, blend in/out, scale, repeat
    and slot: each strip that plays alone (`core.nla.plays`) from the switch into it to the switch
    out of it, sampled at scene frames; where the NLA blends one into the next the blend time is
    that blend's, where it cuts `default_blend`. Refused (BridgeError naming the track, strip and
    setting, and how to change it) when that is not what the NLA plays: see nla_tracks,
    _strip_problems and core.nla.plays. Strips of another skeleton's actions are refused unless
    `allow_mismatch` (check_skeleton)."""
    from ..core import nla

    chosen = nla_tracks(obj, track)
    strips: list[Any] = []
    specs: list[nla.Strip] = []
    for k, t in enumerate(chosen):
        for s in t.strips:
            where = f"strip {s.name!r} on track {t.name!r}"
            if not s.mute:
                problems = _strip_problems(s)
                if problems:
                    raise BridgeError(f"NLA {where} uses {problems[0]}, which Stride cannot bake; change it "
                                      "(Strip sidebar, N in the NLA Editor), mute the strip, or bake without "
                                      "that track")
            strips.append(s)
            specs.append(nla.Strip(where, k, float(s.frame_start), float(s.frame_end), float(s.blend_in),
                                   float(s.blend_out), str(s.extrapolation), bool(s.mute)))
    playing = [sp for sp in specs if not sp.muted]
    if not playing:
        raise BridgeError(f"NLA track {chosen[0].name!r} has no (unmuted) strips: add action strips to it "
                          "first" if len(chosen) == 1 else
                          f"NLA tracks {', '.join(repr(t.name) for t in chosen)} have no unmuted strips")
    first = math.ceil(min(sp.start for sp in playing) - 1e-6)
    last = math.floor(max(sp.end for sp in playing) + 1e-6)
    try:
        segments, blend_frames = nla.plays(specs, first, last)
    except nla.NlaError as exc:
        raise BridgeError(f"the NLA of {obj.name!r}: {exc}") from None
    if len({sp.track for sp in playing}) > 1:  # strips over strips: all of them, hidden or not
        _check_whole_poses(obj, strips, [sp.name for sp in specs],
                           [i for i, sp in enumerate(specs) if not sp.muted])
    rate = scene_fps()
    items: list[tuple[Clip, float, float]] = []
    read: dict[int, tuple[Clip, Timing]] = {}
    for seg in segments:
        s = strips[seg.strip]
        if seg.strip not in read:
            read[seg.strip] = read_action(obj, s.action, slot=getattr(s, "action_slot", None),
                                        source=source)
            check_skeleton(obj, s.action, allow_mismatch)
        clip, timing = read[seg.strip]
        frames = np.arange(seg.first, seg.last + 1, dtype=np.float64)
        at = nla.strip_frames(s.frame_start, s.frame_end, s.scale, s.repeat, s.action_frame_start,
                              s.action_frame_end, frames)
        items.append((resample.sample(clip, timing.seconds(at), rate), 0.0, (seg.last - seg.first) / rate))
    blends = [n / rate if n else default_blend for n in blend_frames]
    return items, blends, float(first), " + ".join(t.name for t in chosen)
