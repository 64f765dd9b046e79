"""The docs' pictures (docs/*.png), made from the bundled samples and the Bandai takes with the core.

    python build.py demo                       (draws them into out/pictures/, and says whether
                                                docs/ shows what they show)
    .venv/bin/python -m samples.pictures        (draws them into docs/ and writes docs/pictures.json)

Each picture is two steps: its numbers, worked out with the core (`Picture.numbers`: arrays,
numbers and the words they are labelled with), and a drawing of those numbers alone
(`Picture.draw`). The manifest (`pictures.json`) holds, per picture, what it shows, a fingerprint
of its numbers (`fingerprint`: independent of how matplotlib renders them) and the hash of the PNG
drawn from them, so that tests/core/test_pictures.py can tell, without drawing, that every picture
in docs/ shows what the core computes today. matplotlib is a dev/demo dependency only; nothing in
core/ or blender_addon/ imports it, and the numbers need none. The images hold no timings and no
software tag.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from core import blend, blendspace, bvh, contacts, events, footlock, path, quat, root, sync, transition
from core.clip import Clip

SAMPLES = Path(__file__).resolve().parent
DOCS = SAMPLES.parent / "docs"
MANIFEST = "pictures.json"
COLORS = {"L": "#1f77b4", "R": "#d62728", "sin": "#2ca02c", "cos": "#9467bd", "d": "#444444"}
# A fingerprint sees a float to a ten-thousandth of the largest value in its array (a picture's
# pixel is about a thousandth of its axis): rounding between numpy versions never shows.
RESOLUTION = 1e-4

Numbers = dict[str, Any]


@dataclass(frozen=True)
class Picture:
    """A docs picture: its file name, one line on what it shows, its numbers and its drawing."""

    file: str
    shows: str
    numbers: Callable[[], Numbers]
    draw: Callable[[Numbers, Path], None]


# -- the fingerprint ---------------------------------------------------------------------------------


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value):
            digest.update(f"{key}:".encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, list | tuple):
        digest.update(f"[{len(value)}".encode())
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, str):
        digest.update(f"s{len(value)}:{value}".encode())
    else:
        a = np.asarray(value)
        digest.update(f"a{a.shape}".encode())
        if a.dtype.kind == "b":
            digest.update(a.astype(np.uint8).tobytes())
        elif a.dtype.kind in "iu":
            digest.update(a.astype(np.int64).tobytes())
        else:
            a = a.astype(np.float64)
            finite = np.isfinite(a)
            scale = float(np.abs(a[finite]).max()) if finite.any() else 0.0
            # The scale to 6 digits, each value in steps of RESOLUTION of it; NaN and inf as such.
            digest.update(f"{scale:.5e}".encode())
            steps = np.zeros(a.shape, dtype=np.int64)
            if scale > 0.0:
                steps[finite] = np.rint(a[finite] / (scale * RESOLUTION)).astype(np.int64)
            steps[np.isnan(a)] = np.iinfo(np.int64).min
            steps[np.isposinf(a)] = np.iinfo(np.int64).max
            steps[np.isneginf(a)] = np.iinfo(np.int64).max - 1
            digest.update(steps.tobytes())


def fingerprint(numbers: Numbers) -> str:
    """sha256 of what a picture plots: strings and integers exactly, floats to RESOLUTION of their
    array's largest magnitude."""
    digest = hashlib.sha256()
    _feed(digest, numbers)
    return digest.hexdigest()


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the takes ---------------------------------------------------------------------------------------


@cache
def _walk_run() -> tuple[Clip, Clip]:
    return bvh.load(SAMPLES / "02_01.bvh"), bvh.load(SAMPLES / "02_03.bvh")


@cache
def _bandai_gaits() -> tuple[Clip, ...]:
    data = SAMPLES.parent / "tests" / "data" / "bandai"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(sync.loop_cycle(bvh.load(data / f"dataset-1_{gait}_normal_001.bvh"))
                     for gait in ("walk", "run", "dash"))


def _walk_part() -> Clip:
    walk, _ = _walk_run()
    return walk[walk.motion_start:]


# -- event tracks ------------------------------------------------------------------------------------

WINDOW, SIGMA = 0.5, 1 / 120


def events_numbers() -> Numbers:
    """Footsteps of the walk, their (sin, cos) encoding, and the signed time decoded back."""
    walk = _walk_part()
    steps = contacts.footsteps(walk)
    feet = {}
    for foot in ("L", "R"):
        times = steps[f"FootDown_{foot}"]
        sin, cos = events.encode(walk.times, times, WINDOW, SIGMA)
        feet[foot] = {"events": times, "sin": sin, "cos": cos,
                      "decoded": events.decode(sin, cos, WINDOW) / WINDOW}
    return {"name": walk.name, "t": walk.times, "feet": feet, "window": WINDOW}


def events_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for foot, ax in zip(("L", "R"), axes, strict=True):
        f = n["feet"][foot]
        ax.plot(n["t"], f["sin"], color=COLORS["sin"], label="sin")
        ax.plot(n["t"], f["cos"], color=COLORS["cos"], label="cos")
        ax.plot(n["t"], f["decoded"], color=COLORS["d"], lw=1, ls="--", label="decoded d / window")
        for e in f["events"]:
            ax.axvline(e, color=COLORS[foot], lw=1)
        ax.set_ylabel(f"FootDown_{foot}")
        ax.set_ylim(-1.15, 1.15)
    axes[0].legend(loc="upper right", ncol=3, fontsize=8)
    axes[-1].set_xlabel("seconds")
    fig.suptitle(f"{n['name']}: footstep events (vertical lines) encoded with window {n['window']} s")
    _save(fig, out)


def one_step_detect(t: np.ndarray, sin: np.ndarray, cos: np.ndarray, window: float) -> np.ndarray:
    """A detector reading one frame step (what events.detect is compared with): a fall of d_hat
    through zero between two samples, both within window / 2 of it, at 0.5-1.5 s per second over
    that one step."""
    d = events.decode(sin, cos, window)
    k = np.flatnonzero((d[:-1] > 0.0) & (d[1:] <= 0.0))
    prev, cur, h = d[k], d[k + 1], t[k + 1] - t[k]
    slope = (cur - prev) / h
    ok = ((prev <= window / 2) & (cur >= -window / 2) & (prev - cur < window) & (slope >= -1.5)
          & (slope <= -0.5))
    return t[k + 1][ok] + h[ok] * cur[ok] / (prev[ok] - cur[ok])


def events_noisy_numbers(noise: float = 0.05, seed: int = 25) -> Numbers:
    """The walk's footsteps as a network might predict them (the encoding plus Gaussian noise on
    sin and cos), decoded, and the events a one-step detector and events.detect find in it."""
    walk = _walk_part()
    steps = contacts.footsteps(walk)
    t = walk.times
    rng = np.random.default_rng(seed)
    reach = max(2.0 / walk.fps, 0.02)
    feet = {}
    for foot in ("L", "R"):
        truth = steps[f"FootDown_{foot}"]
        sin, cos = events.encode(t, truth, WINDOW)
        sin = sin + rng.normal(0.0, noise, sin.size)
        cos = cos + rng.normal(0.0, noise, cos.size)
        old, new = one_step_detect(t, sin, cos, WINDOW), events.detect(t, sin, cos, WINDOW)
        found = {name: int(sum(np.abs(x - e).min(initial=np.inf) <= reach for e in truth))
                 for name, x in (("old", old), ("new", new))}
        feet[foot] = {"truth": truth, "sin": sin, "cos": cos,
                      "decoded": events.decode(sin, cos, WINDOW) / WINDOW,
                      "old": old, "new": new, "found_old": found["old"], "found_new": found["new"]}
    return {"name": walk.name, "fps": walk.fps, "noise": noise, "t": t, "feet": feet}


def events_noisy_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    t = n["t"]
    for foot, ax in zip(("L", "R"), axes, strict=True):
        f = n["feet"][foot]
        truth, old, new = f["truth"], f["old"], f["new"]
        ax.plot(t, f["sin"], color=COLORS["sin"], lw=0.6, alpha=0.5, label="predicted sin")
        ax.plot(t, f["cos"], color=COLORS["cos"], lw=0.6, alpha=0.5, label="predicted cos")
        ax.plot(t, f["decoded"], ".", color=COLORS["d"], ms=1.5, label="decoded d / window")
        for e in truth:
            ax.axvline(e, color=COLORS[foot], lw=1)
        ax.plot(old, np.full(old.size, 0.55), "x", color="#d62728", ms=7, mew=1.6,
                label=f"one-step detector: {f['found_old']} of {truth.size}, "
                      f"{old.size - f['found_old']} false")
        ax.plot(new, np.full(new.size, -0.55), "^", color="#2ca02c", ms=7,
                label=f"events.detect: {f['found_new']} of {truth.size}, {new.size - f['found_new']} false")
        ax.set_ylabel(f"FootDown_{foot}")
        ax.set_ylim(-1.25, 1.25)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
    axes[-1].set_xlabel("seconds")
    fig.suptitle(f"{n['name']} at {n['fps']:g} fps: footsteps (vertical lines) predicted with Gaussian "
                 f"noise {n['noise']} on sin and cos")
    _save(fig, out)


# -- contacts ----------------------------------------------------------------------------------------


def contacts_numbers() -> Numbers:
    """Foot height above the lowest point and planted frames: the walk, the run and their sync
    blend at weight 0.5."""
    walk, run = _walk_run()
    blended = sync.sync_blend(sync.loop_cycle(walk), sync.loop_cycle(run), 0.5, 2.5)
    rows = []
    for name, clip in ((walk.name, walk[walk.motion_start:]), (run.name, run[run.motion_start:]),
                       ("blend w=0.5", blended)):
        planted = contacts.contacts(clip)
        _, pos = clip.fk()
        feet = {}
        for foot, joints in contacts.default_feet(clip).items():
            height = (pos[:, joints] @ clip.up).min(axis=1) * clip.meters_per_unit * 100
            feet[foot] = {"height": height - height[clip.motion_start:].min(), "planted": planted[foot]}
        rows.append({"name": name, "t": clip.times, "feet": feet})
    return {"clips": rows}


def contacts_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    rows = n["clips"]
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.2 * len(rows)), squeeze=False)
    for ax, row in zip(axes[:, 0], rows, strict=True):
        t = row["t"]
        for foot, f in row["feet"].items():
            ax.plot(t, f["height"], color=COLORS[foot], lw=1.2, label=f"{foot} foot height (cm)")
            low = 0 if foot == "L" else -3
            ax.fill_between(t, low - 3, low, where=f["planted"], color=COLORS[foot], alpha=0.6,
                            step="mid", label=f"{foot} planted")
        ax.set_ylabel(row["name"])
        ax.set_xlim(t[0], t[-1])
    axes[0, 0].legend(loc="upper right", ncol=4, fontsize=7)
    axes[-1, 0].set_xlabel("seconds")
    fig.suptitle("Foot height and contacts")
    _save(fig, out)


# -- transitions -------------------------------------------------------------------------------------

SRC_TIME, DST_TIME, BLEND_TIME = 1.6, 0.3, 0.25  # the demo's transition


def transition_numbers() -> Numbers:
    """Mean joint angular speed (body joints) around the switch for each transition method."""
    src, dst = _walk_run()
    body = blend.mask_preset(src, "FINGERS") == 0
    i_s = round(SRC_TIME * src.fps)
    window = slice(i_s - 24, i_s + 48)
    methods = {"cut": transition.cut, "crossfade": transition.crossfade,
               "inertialize": transition.inertialize, "dead blend": transition.dead_blend}
    speeds = {}
    for label, fn in methods.items():
        clip = fn(src, dst, SRC_TIME, DST_TIME, BLEND_TIME)
        q = clip.rotations
        speed = quat.angle(q[1:], q[:-1])[:, body].mean(axis=1) * clip.fps
        speeds[label] = speed[window]
    t = (np.arange(window.start, window.stop) + 1 - i_s) / src.fps
    return {"src": src.name, "dst": dst.name, "blend_time": BLEND_TIME, "t": t, "speeds": speeds}


def transition_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    styles = {"cut": ("#bbbbbb", ":"), "crossfade": ("#ff7f0e", "-"), "inertialize": ("#9467bd", "-"),
              "dead blend": ("#2ca02c", "-")}
    top = max(float(v.max()) for k, v in n["speeds"].items() if k != "cut")
    for label, speed in n["speeds"].items():
        color, ls = styles[label]
        shown = f"cut (peaks at {speed.max():.0f} rad/s)" if label == "cut" else label
        ax.plot(n["t"], speed, color=color, ls=ls, lw=1.8, label=shown)
    ax.set_ylim(0, 1.6 * top)  # the cut's spike would flatten everything else
    ax.axvspan(0, n["blend_time"], color="#eeeeee", zorder=0, label="blend window")
    ax.set_xlabel("seconds from the switch")
    ax.set_ylabel("mean joint speed (rad/s)")
    ax.legend(loc="upper right", fontsize=8)
    fig.suptitle(f"{n['src']} -> {n['dst']}: joint angular speed through the transition")
    _save(fig, out)


def _root_speed(clip: Clip) -> np.ndarray:
    """[T - 1] the motion root's speed over the floor (m/s) from each frame to the next."""
    _, pos = root.root_world(clip)
    step = np.diff(pos, axis=0)
    step -= np.outer(step @ clip.up, clip.up)
    return np.linalg.norm(step, axis=-1) * clip.fps * clip.meters_per_unit


def root_speed_numbers() -> Numbers:
    """The root's speed over the floor through the demo's dead-blended walk -> run: the root's
    positions blended into the re-anchored run against its steps blended and integrated (what
    transitions do), with each take's own speed."""
    src, dst = _walk_run()
    steps = transition.dead_blend(src, dst, SRC_TIME, DST_TIME, BLEND_TIME)
    fps = src.fps
    i_s, i_d = round(SRC_TIME * fps), round(DST_TIME * fps)
    k = math.ceil(BLEND_TIME * fps - 1e-5)
    # The run placed where re-anchoring puts it (after the window the output is that placement
    # moved over the floor only, so its heading says where), its positions then blended.
    seen = dst.replace(up=src.up, forward=src.forward)
    own = root.trajectory(seen)
    heading = own.heading[i_d] + root.trajectory(steps).heading[i_s + k] - own.heading[i_d + k]
    placed = root.reanchor(seen, i_d, root.trajectory(src).position[i_s], heading)
    positions = transition.dead_blend(src, placed, SRC_TIME, DST_TIME, BLEND_TIME, reanchor=False)
    span = slice(i_s - round(0.4 * fps), i_s + k + round(0.4 * fps))
    t = (np.arange(steps.n_frames - 1) + 1 - i_s) / fps
    run = _root_speed(dst)
    run_t = (np.arange(len(run)) + 1 - i_d) / fps
    keep = (run_t > 0) & (run_t <= t[span][-1])
    return {"src": src.name, "dst": dst.name, "src_time": SRC_TIME, "dst_time": DST_TIME,
            "blend_time": BLEND_TIME, "t": t[span],
            "positions": _root_speed(positions)[span], "steps": _root_speed(steps)[span],
            "positions_peak": _root_speed(positions)[i_s:i_s + k].max(),
            "steps_peak": _root_speed(steps)[i_s:i_s + k].max(),
            "walk_t": t[span.start:i_s], "walk": _root_speed(src)[span.start:i_s],
            "run_t": run_t[keep], "run": run[keep]}


def root_speed_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.8))
    ax.plot(n["t"], n["positions"], color="#ff7f0e", lw=2.2, ls="--",
            label=f"root positions blended (peak {n['positions_peak']:.2f} m/s)")
    ax.plot(n["t"], n["steps"], color="#2ca02c", lw=3.0, alpha=0.8,
            label=f"root steps blended, as Stride does (peak {n['steps_peak']:.2f} m/s)")
    # The takes' own speeds on top: the output is the walk's before the switch, the run's after.
    ax.plot(n["walk_t"], n["walk"], color=COLORS["L"], lw=1.0, label=f"{n['src']} (source)")
    ax.plot(n["run_t"], n["run"], color=COLORS["R"], lw=1.0,
            label=f"{n['dst']} from {n['dst_time']:g} s (destination)")
    ax.axvspan(0, n["blend_time"], color="#eeeeee", zorder=0, label="blend window")
    ax.set_xlabel("seconds from the switch")
    ax.set_ylabel("root speed over the floor (m/s)")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"{n['src']} at {n['src_time']:g} s -> {n['dst']}: the hips' speed through a "
                 f"{n['blend_time']:g} s dead blend")
    _save(fig, out)


# -- sync blends -------------------------------------------------------------------------------------


def sync_numbers(seconds: float = 4.0) -> Numbers:
    """Blended cycle length and each clip's playback rate over a walk -> run ramp."""
    walk, run = _walk_run()
    a, b = sync.loop_cycle(walk), sync.loop_cycle(run)
    ramp = (np.array([0.0, seconds]), np.array([0.0, 1.0]))
    ta, tb = sync.sync_times(a, b, ramp, seconds)
    t = np.arange(len(ta)) / a.fps
    period_a, period_b = a.n_frames / a.fps, b.n_frames / b.fps
    w = np.interp(t, *ramp)
    return {"walk": walk.name, "run": run.name, "t": t, "weight": w, "period_a": period_a,
            "period_b": period_b, "length": (period_b - period_a) * w + period_a,  # linear: (T2 - T1) w + T1
            "rate_a": np.gradient(ta, t), "rate_b": np.gradient(tb, t)}


def sync_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    t, length, period_a, period_b = n["t"], n["length"], n["period_a"], n["period_b"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    top.plot(t, length, color="#444444", lw=1.8, label="blended cycle length L(w) (s)")
    top.axhline(period_a, color=COLORS["L"], ls=":", lw=1, label=f"walk cycle {period_a:.2f} s")
    top.axhline(period_b, color=COLORS["R"], ls=":", lw=1, label=f"run cycle {period_b:.2f} s")
    top.set_ylabel("seconds")
    top.legend(loc="upper right", fontsize=8)
    bottom.plot(t, period_a / length, color=COLORS["L"], lw=1, ls=":", label="walk rate T1 / L")
    bottom.plot(t, period_b / length, color=COLORS["R"], lw=1, ls=":", label="run rate T2 / L")
    bottom.plot(t, n["rate_a"], color=COLORS["L"], lw=1.6, label="walk rate, warped between plants")
    bottom.plot(t, n["rate_b"], color=COLORS["R"], lw=1.6, label="run rate, warped between plants")
    bottom.plot(t, n["weight"], color="#444444", lw=1, ls="--", label="weight")
    bottom.set_xlabel("seconds")
    bottom.legend(loc="upper left", fontsize=7, ncol=2)
    fig.suptitle(f"{n['walk']} -> {n['run']}: one phase, blended cycle length, scaled playback rates")
    _save(fig, out)


def sync_path_numbers(seconds: float = 6.0) -> Numbers:
    """A walk -> run sync-blend ramp's root path seen from above, from loops cut as the takes walk
    (the default) and from loops that repeat their cut cycle's own turn (straighten=False), along
    and across the first cycle's direction."""
    walk, run = _walk_run()
    ramp = (np.array([0.0, seconds]), np.array([0.0, 1.0]))
    paths = {}
    for key, straighten in (("default", None), ("cut_turn", False)):
        a, b = sync.loop_cycle(walk, straighten=straighten), sync.loop_cycle(run, straighten=straighten)
        blended = sync.sync_blend(a, b, ramp, seconds)
        track = root.trajectory(blended).position * blended.meters_per_unit
        i, j = (round(float(x)) for x in blended.events["FootDown_L"][:2] * blended.fps)
        along = track[j] - track[i]
        along /= np.linalg.norm(along)
        rel = track - track[i]
        paths[key] = {"along": rel @ along, "across": rel @ np.cross(blended.up, along) * 100}
    return {"walk": walk.name, "run": run.name, "seconds": seconds, "paths": paths}


def sync_path_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for key, label, color, ls in (("default", "loops as their takes walk (default)", "#2ca02c", "-"),
                                  ("cut_turn", "loops repeating their cut cycle's turn (straighten=False)",
                                   "#ff7f0e", "--")):
        p = n["paths"][key]
        ax.plot(p["along"], p["across"], color=color, ls=ls, lw=1.8,
                label=f"{label}: {abs(p['across'][-1]):.0f} cm off after {p['along'][-1]:.1f} m")
    ax.axhline(0.0, color="#999999", lw=0.8)
    ax.set_xlabel("metres along the first cycle's direction")
    ax.set_ylabel("across it (cm)")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"{n['walk']} -> {n['run']}, a {n['seconds']:g} s sync-blend ramp seen from above")
    _save(fig, out)


# -- foot locking ------------------------------------------------------------------------------------


def footlock_numbers(src_time: float = 1.0, blend_time: float = 0.3) -> Numbers:
    """A planted foot's lowest point and speed over the floor through a dead blend into the best
    target time, with and without lock_feet, and where the sources plant it."""
    src, dst = _walk_run()
    dst_time = transition.best_target_time(src, src_time, dst)
    i_s = round(src_time * src.fps)
    k = round(blend_time * src.fps)
    plain = transition.dead_blend(src, dst, src_time, dst_time, blend_time)
    with warnings.catch_warnings():
        # The picture shows where the lock cannot hold (the run's longer stride); no console note.
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        locked = transition.dead_blend(src, dst, src_time, dst_time, blend_time, lock_feet=True)
    planted = transition.switched_contacts(src, transition.at_rate(src, dst), i_s,
                                           round(dst_time * src.fps), k)
    foot = max(planted, key=lambda f: int(planted[f][i_s + 1:i_s + k].sum()))
    window = slice(i_s - 40, i_s + k + 40)
    lines = {}
    for key, clip in (("plain", plain), ("locked", locked)):
        wrot, wpos = clip.fk()
        joints = clip.body.feet[foot]
        sites = np.flatnonzero(np.isin(clip.end_parents, joints))
        p = np.concatenate([wpos[:, joints], clip.end_site_positions(wrot, wpos)[:, sites]], axis=1)
        p = p * clip.meters_per_unit
        step = np.diff(p, axis=0)
        step -= (step @ clip.up)[..., None] * clip.up
        speed = np.concatenate([[0.0], np.linalg.norm(step, axis=-1).min(axis=1) * clip.fps])
        lines[key] = {"height": (p @ clip.up).min(axis=1)[window] * 100, "speed": speed[window]}
    return {"src": src.name, "dst": dst.name, "src_time": src_time, "dst_time": dst_time,
            "blend_time": blend_time, "foot": foot,
            "t": (np.arange(window.start, window.stop) - i_s) / src.fps,
            "planted": planted[foot][window], "lines": lines}


def footlock_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    t, foot = n["t"], n["foot"]
    for key, label, color in (("plain", "dead blend", "#ff7f0e"),
                              ("locked", "dead blend, lock_feet", "#2ca02c")):
        top.plot(t, n["lines"][key]["height"], color=color, lw=1.6, label=label)
        bottom.plot(t, n["lines"][key]["speed"], color=color, lw=1.6, label=label)
    for ax in (top, bottom):
        ax.axvspan(0, n["blend_time"], color="#eeeeee", zorder=0)
        ax.fill_between(t, 0, 1, where=n["planted"], color=COLORS[foot], alpha=0.08,
                        transform=ax.get_xaxis_transform(), zorder=0)
    top.set_ylabel("lowest point (cm)")
    top.legend(loc="upper right", fontsize=8)
    bottom.set_ylabel("slowest point (m/s)")
    bottom.set_xlabel(f"seconds from the switch (grey: blend window; tint: {foot} foot planted)")
    fig.suptitle(f"{n['src']} at {n['src_time']:g} s -> {n['dst']} at {n['dst_time']:.2f} s "
                 f"(best_target_time): the {foot} foot through a dead blend")
    _save(fig, out)


# -- blend spaces and paths --------------------------------------------------------------------------


def blendspace_numbers(seconds: float = 8.0) -> Numbers:
    """A speed ramp through a blend space of the Bandai walk, run and dash and back: the target and
    the speed the pelvis travels at over each output cycle (and frame by frame), each gait's weight,
    and the footstep events with the touchdowns found on the output's own feet."""
    gaits = list(_bandai_gaits())
    speeds = blendspace.gait_speeds(gaits)
    target = (np.array([0.0, seconds, 2 * seconds]), np.array([speeds.min(), speeds.max(), speeds.min()]))
    clip = blendspace.blend_space(gaits, target, 2 * seconds)
    p = clip.fk()[1][:, clip.body.pelvis]
    floor = (p - np.outer(p @ clip.up, clip.up)) * clip.meters_per_unit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = contacts.footsteps(clip)
    frames = np.arange(clip.n_frames)
    cycles = []
    for a, b in itertools.pairwise(clip.events["FootDown_L"]):
        ends = [np.array([np.interp(x * clip.fps, frames, floor[:, k]) for k in range(3)]) for x in (a, b)]
        cycles.append([a, b, np.linalg.norm(ends[1] - ends[0]) / (b - a)])
    names = [g.name.split("_")[1] if g.name.count("_") >= 2 else g.name for g in gaits]
    return {"t": clip.times, "seconds": seconds, "target": np.interp(clip.times, *target),
            "frame_speed": np.linalg.norm(np.diff(floor, axis=0), axis=-1) * clip.fps,
            "cycles": np.array(cycles), "gaits": names, "speeds": speeds,
            "weights": blendspace.gait_weights(gaits, target, 2 * seconds),
            "events": {foot: clip.events[f"FootDown_{foot}"] for foot in ("L", "R")},
            "found": {foot: found[f"FootDown_{foot}"] for foot in ("L", "R")}}


def blendspace_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    t = n["t"]
    fig, (top, mid, bottom) = plt.subplots(3, 1, figsize=(9, 6.4), sharex=True,
                                           gridspec_kw={"height_ratios": [3, 2, 1]})
    top.plot(t[1:], n["frame_speed"], color="#bbbbbb", lw=0.8, label="pelvis, frame by frame")
    for i, (a, b, speed) in enumerate(n["cycles"]):
        top.plot([a, b], [speed] * 2, color="#444444", lw=2,
                 label="pelvis, over each cycle (left touchdown to the next)" if i == 0 else None)
    top.plot(t, n["target"], color="#ff7f0e", ls="--", lw=1.6, label="target")
    palette = ("#2ca02c", "#1f77b4", "#9467bd", "#8c564b", "#e377c2")
    for k, (name, v) in enumerate(zip(n["gaits"], n["speeds"], strict=True)):
        color = palette[k % len(palette)]
        top.axhline(v, color=color, ls=":", lw=1)
        top.annotate(f"{name} {v:.2f} m/s", (2 * n["seconds"], v), xytext=(4, 0), textcoords="offset points",
                     va="center", fontsize=8, color=color)
        mid.plot(t, n["weights"][:, k], color=color, lw=1.6, label=name)
    top.set_ylabel("m/s")
    top.legend(loc="upper left", fontsize=8)
    mid.set_ylabel("gait weight")
    mid.set_ylim(-0.05, 1.05)
    mid.legend(loc="upper left", fontsize=8, ncol=len(n["gaits"]))
    for row, foot in enumerate(("L", "R")):
        bottom.vlines(n["events"][foot], row + 0.05, row + 0.95, color=COLORS[foot], lw=1.2)
        bottom.plot(n["found"][foot], np.full(len(n["found"][foot]), row + 0.5), "k.", ms=3)
    bottom.set_yticks([0.5, 1.5], ["FootDown_L", "FootDown_R"])
    bottom.set_ylim(0, 2)
    bottom.set_xlabel("seconds (dots: touchdowns found on the output's feet)")
    fig.suptitle(f"Blend space over {len(n['gaits'])} gaits: a speed ramp and back, in step")
    _save(fig, out)


def _foot_tips(clip: Clip, world_rot: np.ndarray, world_pos: np.ndarray, side: str) -> np.ndarray:
    """[T, 2, 3] each frame's ankle and the foot point farthest from it (a toe's tip), meters."""
    feet = contacts.foot_points(clip)[side]
    ends = clip.end_site_positions(world_rot, world_pos)
    points = np.concatenate([world_pos[:, feet[0]], ends[:, feet[1]]], axis=1) * clip.meters_per_unit
    ankle = world_pos[:, clip.body.feet[side][0]] * clip.meters_per_unit
    reach = np.linalg.norm(points - ankle[:, None], axis=-1).mean(axis=0)
    return np.stack([ankle, points[:, int(np.argmax(reach))]], axis=1)


def _seen_from_above(clip: Clip, floor: np.ndarray) -> Numbers:
    """The hips' floor path and, per foot, the ankle-to-toe line on every planted frame, meters."""
    world_rot, world_pos = clip.fk()
    hips = world_pos[:, clip.body.pelvis] * clip.meters_per_unit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planted = contacts.contacts(clip, split_slides=False)
    feet = {}
    for foot in ("L", "R"):
        tips = _foot_tips(clip, world_rot, world_pos, foot) @ floor
        frames = [np.arange(a, b) for a, b in zip(*contacts.runs(planted[foot]), strict=True)]
        feet[foot] = tips[np.concatenate(frames)] if frames else np.zeros((0, 2, 2))
    return {"hips": hips @ floor, "feet": feet}


def path_numbers() -> Numbers:
    """Walking along paths seen from above (`path.follow` of the Bandai walk, run and dash): the
    path, the hips and each planted foot's ankle-to-toe line on every frame of its contact, on an
    S-curve of two 4 m arcs with the speed ramping from the walk's to the dash's and a 1.5 m circle
    at the walk's speed; close up, the circle next to the same bend with the feet neither turned
    nor locked."""
    gaits = list(_bandai_gaits())
    speeds = np.sort(blendspace.gait_speeds(gaits))
    up, mpu = gaits[0].up, gaits[0].meters_per_unit
    fwd, side = root.floor_axes(up)
    floor = np.stack([fwd, side], axis=1)

    def arcs(radii: list[float], turn: float) -> np.ndarray:
        step = np.repeat(np.sign(radii), 200) * turn / 200
        heading = np.concatenate([[0.0], np.cumsum(step)])
        mid = heading[:-1] + 0.5 * step
        chord = 2 * np.abs(np.repeat(radii, 200)) * np.sin(turn / 400)
        steps = chord[:, None] * np.stack([np.cos(mid), np.sin(mid)], axis=1)
        xy = np.concatenate([[[0.0, 0.0]], np.cumsum(steps, axis=0)])
        return (np.outer(xy[:, 0], fwd) + np.outer(xy[:, 1], side)) / mpu

    def flat(points: np.ndarray) -> np.ndarray:
        return (points - np.outer(points @ up, up)) * mpu @ floor

    s_curve, circle = arcs([4.0, -4.0], np.pi), arcs([1.5], 2 * np.pi)
    ramp = (np.array([0.0, 4 * np.pi]), np.array([speeds[0], speeds[-1]]))
    walked = _seen_from_above(path.follow(gaits, circle, float(speeds[0])), floor)
    bent = _seen_from_above(path.follow(gaits, circle, float(speeds[0]), lock_feet=False), floor)
    return {"speeds": speeds, "panels": [
        {"path": flat(s_curve), "walked": _seen_from_above(path.follow(gaits, s_curve, ramp), floor)},
        {"path": flat(circle), "walked": walked},
        {"path": flat(circle), "walked": walked, "bent": bent}]}


def path_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    slow, fast = n["speeds"][0], n["speeds"][-1]
    titles = (f"S-curve of two 4 m arcs, {slow:.2f} -> {fast:.2f} m/s (walk to dash)",
              f"circle of 1.5 m at {slow:.2f} m/s (walk)", "close up: locked (colours) and bent only (grey)")

    def draw(ax: Any, seen: Numbers, faint: bool = False) -> None:
        ax.plot(*seen["hips"].T, color="#999999" if faint else "k", lw=0.9, label=None if faint else "hips")
        for foot, tips in seen["feet"].items():
            for i, tip in enumerate(tips):
                label = None if faint or i else f"{foot} foot, each planted frame"
                ax.plot(*tip.T, color="#aaaaaa" if faint else COLORS[foot], lw=1.4, alpha=0.35,
                        solid_capstyle="round", label=label)

    fig, axes = plt.subplots(1, 3, figsize=(15, 6.2), gridspec_kw={"width_ratios": [1.0, 1.15, 1.15]})
    for ax, panel, title in zip(axes, n["panels"], titles, strict=True):
        ax.plot(*panel["path"].T, color="#dddddd", lw=7, solid_capstyle="round", label="path")
        if "bent" in panel:
            draw(ax, panel["bent"], faint=True)
        draw(ax, panel["walked"])
        ax.plot(*panel["path"][0], "o", color="#2ca02c", ms=6, label="start")
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("m")
    axes[2].set_xlim(1.25, 1.75)
    axes[2].set_ylim(1.4, 1.9)
    axes[1].legend(loc="center", fontsize=7)
    fig.suptitle("path.follow, Bandai walk, run and dash seen from above: feet held where they land, "
                 "legs turned over them through the turns")
    _save(fig, out)


# Blender's Bezier circle of radius 1 (Add > Curve > Circle): its points and handles, clockwise from
# (-1, 0) seen from above, cyclic: each segment's knot, handle, knot, handle (the next knot's left).
BEZIER_CIRCLE = np.array([[[-1.0, 0.0], [-1.0, 0.552125], [0.0, 1.0], [-0.552125, 1.0]],
                          [[0.0, 1.0], [0.552125, 1.0], [1.0, 0.0], [1.0, 0.552125]],
                          [[1.0, 0.0], [1.0, -0.552125], [0.0, -1.0], [0.552125, -1.0]],
                          [[0.0, -1.0], [-0.552125, -1.0], [-1.0, 0.0], [-1.0, -0.552125]]])


def follow_path_numbers(scale: float = 3.0, turn: float = 0.6,
                        at: tuple[float, float] = (2.0, -1.0)) -> Numbers:
    """Walk Along Path (stride.follow_path) as it bakes Blender's Bezier circle on an object scaled,
    turned about Z and moved, CMU 02's walk and jog imported in meters (CMU_TO_METERS): `path.follow`
    on the curve's points in the armature's space, which tests/blender/test_follow_path.py shows the
    bake equal to. Seen from above and a little from the side (a point at height h drawn 0.35 h
    right and 0.5 h up): the curve, the hips, the character once a second and the planted feet."""
    walk, run = _walk_run()
    c, s = math.cos(turn), math.sin(turn)
    spin = np.array([[c, -s], [s, c]])
    t = np.linspace(0.0, 1.0, 400)[:, None]
    pieces: list[np.ndarray] = []
    for k0, h0, k1, h1 in BEZIER_CIRCLE:
        seg = (1 - t) ** 3 * k0 + 3 * (1 - t) ** 2 * t * h0 + 3 * (1 - t) * t * t * h1 + t ** 3 * k1
        pieces.append(seg[1:] if pieces else seg)
    world = (np.concatenate(pieces) * scale) @ spin.T + np.array(at)
    unit = walk.meters_per_unit
    # World (x, y, 0) is BVH (x, 0, -y) (Blender's importer: forward -Z, up Y), in file units.
    points = np.stack([world[:, 0], np.zeros(len(world)), -world[:, 1]], axis=-1) / unit
    speed = float(blendspace.gait_speeds([walk, run]).min())
    clip = path.follow([walk, run], points, speed)
    world_rot, world_pos = clip.fk()

    def seen(p: np.ndarray) -> np.ndarray:
        m = p * unit
        return np.stack([m[..., 0] + 0.35 * m[..., 1], -m[..., 2] + 0.5 * m[..., 1]], axis=-1)

    hips = world_pos[:, clip.body.pelvis].copy()
    hips[:, 1] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planted = contacts.contacts(clip, split_slides=False)
    feet = {}
    for foot in ("L", "R"):
        tips = _foot_tips(clip, world_rot, world_pos, foot) / unit
        frames = [f for a, b in zip(*contacts.runs(planted[foot]), strict=True) for f in range(a, b, 4)]
        feet[foot] = seen(tips[frames])
    ends = clip.end_site_positions(world_rot, world_pos)
    bones = [(p, j) for j, p in enumerate(clip.parents.tolist()) if p >= 0]
    figures = []
    for f in range(0, clip.n_frames, round(clip.fps)):
        lines = [world_pos[f, [p, j]] for p, j in bones]
        lines += [np.stack([world_pos[f, q], ends[f, e]]) for e, q in enumerate(clip.end_parents.tolist())]
        figures.append(seen(np.array(lines)))
    return {"curve": world, "hips": seen(hips), "feet": feet, "figures": figures, "speed": speed,
            "scale": scale, "turn": turn}


def follow_path_draw(n: Numbers, out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 7.0))
    ax.plot(*n["curve"].T, color="#dddddd", lw=9, solid_capstyle="round", label="the curve")
    ax.plot(*n["hips"].T, color="#1f77b4", lw=1.0, label="hips (on the floor)")
    for foot, color in (("L", "#d62728"), ("R", "#2ca02c")):
        for line in n["feet"][foot]:
            ax.plot(*line.T, color=color, lw=1.4, alpha=0.5, solid_capstyle="round")
    for figure in n["figures"]:
        for line in figure:
            ax.plot(*line.T, color="k", lw=1.1)
    ax.plot(*n["curve"][0], "o", color="#2ca02c", ms=7, label="start (frame 10 in the test)")
    ax.set_aspect("equal")
    ax.set_xlabel("world X (m)")
    ax.set_ylabel("world Y (m)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Walk Along Path: Blender's Bezier circle scaled {n['scale']:g}x, turned "
                 f"{math.degrees(n['turn']):.0f} deg, moved;\nCMU 02 walk and jog at {n['speed']:.2f} m/s, "
                 "the character once a second, planted feet", fontsize=9)
    _save(fig, out)


PICTURES = (
    Picture("events.png", "the walk's footsteps, their (sin, cos) encoding and the time decoded back",
            events_numbers, events_draw),
    Picture("events_noisy.png", "a noisy prediction of the walk's footsteps decoded by a one-step detector "
            "and by events.detect", events_noisy_numbers, events_noisy_draw),
    Picture("contacts.png", "foot heights and contacts of the walk, the run and their sync blend",
            contacts_numbers, contacts_draw),
    Picture("transition.png", "joint speed through the demo's walk -> run switch: cut, crossfade, "
            "inertialization, dead blending", transition_numbers, transition_draw),
    Picture("root_speed.png", "the hips' speed through the demo's dead blend: positions blended against "
            "steps blended", root_speed_numbers, root_speed_draw),
    Picture("sync.png", "blended cycle length and playback rates over a walk -> run sync ramp",
            sync_numbers, sync_draw),
    Picture("sync_path.png", "a 6 s walk -> run sync ramp's path from above, loops straightened or not",
            sync_path_numbers, sync_path_draw),
    Picture("footlock.png", "a planted foot through a dead blend into the best target time, with and "
            "without lock_feet", footlock_numbers, footlock_draw),
    Picture("blendspace.png", "a walk > run > dash blend space ramp and back: speeds, weights, events",
            blendspace_numbers, blendspace_draw),
    Picture("path.png", "path.follow from above: an S-curve ramp, a walking circle, and a close-up "
            "against the bend alone", path_numbers, path_draw),
    Picture("follow_path.png", "Walk Along Path: Blender's Bezier circle on a turned, scaled object walked "
            "by the walk and jog, seen from above", follow_path_numbers, follow_path_draw),
)


# -- drawing and the manifest ------------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)


def read_manifest(folder: Path = DOCS) -> dict[str, dict[str, str]]:
    """{file: {"shows", "numbers", "png"}} from folder/pictures.json ({} when there is none)."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    return {entry["file"]: entry for entry in json.loads(path.read_text())["pictures"]}


def make_all(folder: Path = DOCS) -> dict[str, dict[str, str]]:
    """Every picture drawn into folder, with its manifest (folder/pictures.json); the manifest."""
    entries = []
    for picture in PICTURES:
        numbers = picture.numbers()
        png = folder / picture.file
        picture.draw(numbers, png)
        entries.append({"file": picture.file, "shows": picture.shows, "numbers": fingerprint(numbers),
                        "png": file_hash(png)})
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"about": "What each picture shows: `numbers`, the fingerprint of what it plots "
                                "(samples/pictures.py's fingerprint); `png`, the sha256 of the file drawn "
                                "from them. tests/core/test_pictures.py checks both.",
                       "pictures": entries}, indent=1)
    (folder / MANIFEST).write_text(text + "\n")
    return {entry["file"]: entry for entry in entries}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DOCS, help="folder for the PNGs and pictures.json "
                                                                "(default docs/)")
    out = parser.parse_args(argv).out
    made = make_all(out)
    docs = read_manifest(DOCS)
    for name, entry in made.items():
        same = docs.get(name, {}).get("numbers") == entry["numbers"]
        note = "" if out.resolve() == DOCS.resolve() else (
            "  (docs/ shows the same)" if same else "  (docs/ shows other numbers: "
                                                    ".venv/bin/python -m samples.pictures draws them there)")
        print(f"{out / name}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
