"""Stride's events into Unreal Engine 5: notifies, sync markers and float curves on the Animation
Sequences imported from a Stride export (an example to adapt).

Run it in the Unreal Editor (Python Editor Script Plugin on) after importing FILE.fbx, from the
Output Log's Python console:

    import unreal_events
    unreal_events.apply("C:/exports/Hero.events.json", "/Game/Hero/Animations")

or set SIDECAR and FOLDER below and use Tools > Execute Python Script. Running it again replaces
what it added. Each event becomes a notify on a track named after it (FootDown_L, ...): NOTIFIES
maps an event to your notify Blueprint (a footstep sound, say), else a plain AnimNotify marks the
time; footsteps also become sync markers (for sync groups); each curve becomes a float curve
`stride_<name>` (contact_L for foot IK, phase for motion matching).
"""

import json
import re

import unreal

SIDECAR = ""  # e.g. "C:/exports/Hero.events.json"
FOLDER = ""  # e.g. "/Game/Hero/Animations": where the sequences were imported
NOTIFIES = {}  # event name -> notify Blueprint path, e.g. {"FootDown_L": "/Game/Notifies/AN_Footstep"}
SYNC_EVENTS = ("FootDown_L", "FootDown_R")
SYNC_TRACK = "Stride Sync"
CURVE_PREFIX = "stride_"


def _key(name):
    """A name as Unreal keeps it in an asset name: letters and digits only, lower case."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def find_sequence(folder, action):
    """The Animation Sequence in `folder` imported from `action` (Unreal names it
    <file>_<take>, characters it does not allow replaced)."""
    want = _key(action)
    for path in unreal.EditorAssetLibrary.list_assets(folder, recursive=True):
        asset = unreal.EditorAssetLibrary.load_asset(path)
        if isinstance(asset, unreal.AnimSequence) and _key(asset.get_name()).endswith(want):
            return asset
    return None


def _notify_class(event):
    path = NOTIFIES.get(event)
    return unreal.EditorAssetLibrary.load_blueprint_class(path) if path else unreal.AnimNotify


def _fresh_track(lib, sequence, track):
    if lib.is_valid_anim_notify_track_name(sequence, track):
        lib.remove_animation_notify_track(sequence, track)
    lib.add_animation_notify_track(sequence, track, unreal.LinearColor(0.2, 0.7, 1.0, 1.0))


def apply(sidecar=SIDECAR, folder=FOLDER):
    with open(sidecar, encoding="utf-8") as f:
        data = json.load(f)
    if data.get("version") != 1:
        raise ValueError(f"{sidecar}: a Stride events file version 1 expected")
    lib = unreal.AnimationLibrary
    curve_type = unreal.RawCurveTrackTypes.RCT_FLOAT
    for action in data["actions"]:
        sequence = find_sequence(folder, action["name"])
        if sequence is None:
            unreal.log_warning(f"Stride: no Animation Sequence for {action['name']!r} in {folder}")
            continue
        names = sorted({e["name"] for e in action["events"]})
        for track in [*names, SYNC_TRACK]:
            _fresh_track(lib, sequence, track)
        for event in action["events"]:
            notify = _notify_class(event["name"])
            lib.add_animation_notify_event(sequence, event["name"], event["time"], notify)
            if event["name"] in SYNC_EVENTS:
                lib.add_animation_sync_marker(sequence, event["name"], event["time"], SYNC_TRACK)
        for name, values in action["curves"].items():
            curve = CURVE_PREFIX + name
            if lib.does_curve_exist(sequence, curve, curve_type):
                lib.remove_curve(sequence, curve, False)
            lib.add_curve(sequence, curve, curve_type, False)
            lib.add_float_curve_keys(sequence, curve, [k / action["fps"] for k in range(len(values))], values)
        unreal.EditorAssetLibrary.save_loaded_asset(sequence)
        unreal.log(f"Stride: {sequence.get_name()}: {len(action['events'])} events, "
                   f"{len(action['curves'])} curves")


if __name__ == "__main__" and SIDECAR and FOLDER:
    apply()
