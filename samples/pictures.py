"""Pictures for the README (docs/*.png), made from the bundled samples with the core.

    python build.py demo      (makes them as one of its steps)

matplotlib is a dev/demo dependency only; nothing in core/ or blender_addon/ imports it. The
images hold no timings and no software tag, so they only change when the maths does.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from core import bvh, contacts, events
from core.clip import Clip

SAMPLES = Path(__file__).resolve().parent
DOCS = SAMPLES.parent / "docs"
COLORS = {"L": "#1f77b4", "R": "#d62728", "sin": "#2ca02c", "cos": "#9467bd", "d": "#444444"}


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path


def event_encoding(walk: Clip, out: Path, window: float = 0.5, sigma: float = 1 / 120) -> Path:
    """Footsteps of a walk, their (sin, cos) encoding, and the signed time decoded back."""
    steps = contacts.footsteps(walk)
    t = walk.times
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for foot, ax in zip(("L", "R"), axes, strict=True):
        times = steps[f"FootDown_{foot}"]
        sin, cos = events.encode(t, times, window, sigma)
        ax.plot(t, sin, color=COLORS["sin"], label="sin")
        ax.plot(t, cos, color=COLORS["cos"], label="cos")
        ax.plot(t, events.decode(sin, cos, window) / window, color=COLORS["d"], lw=1, ls="--",
                label="decoded d / window")
        for e in times:
            ax.axvline(e, color=COLORS[foot], lw=1)
        ax.set_ylabel(f"FootDown_{foot}")
        ax.set_ylim(-1.15, 1.15)
    axes[0].legend(loc="upper right", ncol=3, fontsize=8)
    axes[-1].set_xlabel("seconds")
    fig.suptitle(f"{walk.name}: footstep events (vertical lines) encoded with window {window} s")
    return _save(fig, out)


def one_step_detect(t: np.ndarray, sin: np.ndarray, cos: np.ndarray, window: float) -> np.ndarray:
    """The detector events.detect replaced (issue 25), for the picture: a fall of d_hat through
    zero between two samples, both within window / 2 of it, at 0.5-1.5 s per second over that one
    step."""
    d = events.decode(sin, cos, window)
    k = np.flatnonzero((d[:-1] > 0.0) & (d[1:] <= 0.0))
    prev, cur, h = d[k], d[k + 1], t[k + 1] - t[k]
    slope = (cur - prev) / h
    ok = ((prev <= window / 2) & (cur >= -window / 2) & (prev - cur < window) & (slope >= -1.5)
          & (slope <= -0.5))
    return t[k + 1][ok] + h[ok] * cur[ok] / (prev[ok] - cur[ok])


def event_noisy(walk: Clip, out: Path, window: float = 0.5, noise: float = 0.05, seed: int = 25) -> Path:
    """A walk's footsteps as a network might predict them (the encoding plus Gaussian noise on sin
    and cos), decoded, and the events the one-step detector and events.detect find in it."""
    steps = contacts.footsteps(walk)
    t = walk.times
    rng = np.random.default_rng(seed)
    reach = max(2.0 / walk.fps, 0.02)
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for foot, ax in zip(("L", "R"), axes, strict=True):
        truth = steps[f"FootDown_{foot}"]
        sin, cos = events.encode(t, truth, window)
        sin = sin + rng.normal(0.0, noise, sin.size)
        cos = cos + rng.normal(0.0, noise, cos.size)
        ax.plot(t, sin, color=COLORS["sin"], lw=0.6, alpha=0.5, label="predicted sin")
        ax.plot(t, cos, color=COLORS["cos"], lw=0.6, alpha=0.5, label="predicted cos")
        ax.plot(t, events.decode(sin, cos, window) / window, ".", color=COLORS["d"], ms=1.5,
                label="decoded d / window")
        for e in truth:
            ax.axvline(e, color=COLORS[foot], lw=1)
        old, new = one_step_detect(t, sin, cos, window), events.detect(t, sin, cos, window)
        found = {name: int(sum(np.abs(x - e).min(initial=np.inf) <= reach for e in truth))
                 for name, x in (("old", old), ("new", new))}
        ax.plot(old, np.full(old.size, 0.55), "x", color="#d62728", ms=7, mew=1.6,
                label=f"one-step detector: {found['old']} of {truth.size}, {old.size - found['old']} false")
        ax.plot(new, np.full(new.size, -0.55), "^", color="#2ca02c", ms=7,
                label=f"events.detect: {found['new']} of {truth.size}, {new.size - found['new']} false")
        ax.set_ylabel(f"FootDown_{foot}")
        ax.set_ylim(-1.25, 1.25)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
    axes[-1].set_xlabel("seconds")
    fig.suptitle(f"{walk.name} at {walk.fps:g} fps: footsteps (vertical lines) predicted with Gaussian "
                 f"noise {noise} on sin and cos")
    return _save(fig, out)


def contact_timelines(clips: list[Clip], out: Path) -> Path:
    """Foot height above the lowest point and planted frames, per clip."""
    fig, axes = plt.subplots(len(clips), 1, figsize=(9, 2.2 * len(clips)), squeeze=False)
    for ax, clip in zip(axes[:, 0], clips, strict=True):
        planted = contacts.contacts(clip)
        feet = contacts.default_feet(clip)
        _, pos = clip.fk()
        t = clip.times
        for foot, joints in feet.items():
            height = (pos[:, joints] @ clip.up).min(axis=1) * clip.meters_per_unit * 100
            height -= height[clip.motion_start:].min()
            ax.plot(t, height, color=COLORS[foot], lw=1.2, label=f"{foot} foot height (cm)")
            low = 0 if foot == "L" else -3
            ax.fill_between(t, low - 3, low, where=planted[foot], color=COLORS[foot], alpha=0.6,
                            step="mid", label=f"{foot} planted")
        ax.set_ylabel(clip.name)
        ax.set_xlim(t[0], t[-1])
    axes[0, 0].legend(loc="upper right", ncol=4, fontsize=7)
    axes[-1, 0].set_xlabel("seconds")
    fig.suptitle("Foot height and contacts")
    return _save(fig, out)


def transition_speeds(src: Clip, dst: Clip, out: Path, src_time: float = 1.6, dst_time: float = 0.3,
                      blend_time: float = 0.25) -> Path:
    """Mean joint angular speed (body joints) around the switch for each transition method."""
    from core import blend, quat, transition

    body = blend.mask_preset(src, "FINGERS") == 0
    i_s = round(src_time * src.fps)
    window = slice(i_s - 24, i_s + 48)
    fig, ax = plt.subplots(figsize=(9, 3.6))
    styles = {"cut": ("#bbbbbb", ":"), "crossfade": ("#ff7f0e", "-"), "inertialize": ("#9467bd", "-"),
              "dead blend": ("#2ca02c", "-")}
    methods = {"cut": transition.cut, "crossfade": transition.crossfade,
               "inertialize": transition.inertialize, "dead blend": transition.dead_blend}
    top = 0.0
    for label, fn in methods.items():
        clip = fn(src, dst, src_time, dst_time, blend_time)
        q = clip.rotations
        speed = quat.angle(q[1:], q[:-1])[:, body].mean(axis=1) * clip.fps
        t = (np.arange(len(speed)) + 1 - i_s) / clip.fps
        color, ls = styles[label]
        if label == "cut":
            peak = speed[window].max()
            label = f"cut (peaks at {peak:.0f} rad/s)"
        else:
            top = max(top, float(speed[window].max()))
        ax.plot(t[window], speed[window], color=color, ls=ls, lw=1.8, label=label)
    ax.set_ylim(0, 1.6 * top)  # the cut's spike would flatten everything else
    ax.axvspan(0, blend_time, color="#eeeeee", zorder=0, label="blend window")
    ax.set_xlabel("seconds from the switch")
    ax.set_ylabel("mean joint speed (rad/s)")
    ax.legend(loc="upper right", fontsize=8)
    fig.suptitle(f"{src.name} -> {dst.name}: joint angular speed through the transition")
    return _save(fig, out)


def sync_ramp(walk: Clip, run: Clip, out: Path, seconds: float = 4.0) -> Path:
    """Blended cycle length and each clip's playback rate over a walk -> run ramp."""
    from core import sync

    a, b = sync.loop_cycle(walk), sync.loop_cycle(run)
    ramp = (np.array([0.0, seconds]), np.array([0.0, 1.0]))
    ta, tb = sync.sync_times(a, b, ramp, seconds)
    t = np.arange(len(ta)) / a.fps
    rate_a, rate_b = np.gradient(ta, t), np.gradient(tb, t)
    period_a, period_b = a.n_frames / a.fps, b.n_frames / b.fps
    w = np.interp(t, *ramp)
    length = (period_b - period_a) * w + period_a  # linear mode: L = (T2 - T1) w + T1
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    top.plot(t, length, color="#444444", lw=1.8, label="blended cycle length L(w) (s)")
    top.axhline(period_a, color=COLORS["L"], ls=":", lw=1, label=f"walk cycle {period_a:.2f} s")
    top.axhline(period_b, color=COLORS["R"], ls=":", lw=1, label=f"run cycle {period_b:.2f} s")
    top.set_ylabel("seconds")
    top.legend(loc="upper right", fontsize=8)
    bottom.plot(t, period_a / length, color=COLORS["L"], lw=1, ls=":", label="walk rate T1 / L")
    bottom.plot(t, period_b / length, color=COLORS["R"], lw=1, ls=":", label="run rate T2 / L")
    bottom.plot(t, rate_a, color=COLORS["L"], lw=1.6, label="walk rate, warped between plants")
    bottom.plot(t, rate_b, color=COLORS["R"], lw=1.6, label="run rate, warped between plants")
    bottom.plot(t, w, color="#444444", lw=1, ls="--", label="weight")
    bottom.set_xlabel("seconds")
    bottom.legend(loc="upper left", fontsize=7, ncol=2)
    fig.suptitle(f"{walk.name} -> {run.name}: one phase, blended cycle length, scaled playback rates")
    return _save(fig, out)


def foot_locking(src: Clip, dst: Clip, out: Path, src_time: float = 1.0, blend_time: float = 0.3) -> Path:
    """A planted foot's height and speed over the floor through a dead blend into the best target
    time, with and without lock_feet, shading where it is planted."""
    from core import footlock, transition

    dst_time = transition.best_target_time(src, src_time, dst)
    i_s = round(src_time * src.fps)
    n = round(blend_time * src.fps)
    plain = transition.dead_blend(src, dst, src_time, dst_time, blend_time)
    with warnings.catch_warnings():
        # The picture shows where the lock cannot hold (the run's longer stride); no console note.
        warnings.simplefilter("ignore", footlock.FootLockWarning)
        locked = transition.dead_blend(src, dst, src_time, dst_time, blend_time, lock_feet=True)
    planted = transition.switched_contacts(src, transition._at_rate(src, dst), i_s,
                                           round(dst_time * src.fps), n)
    foot = max(planted, key=lambda f: int(planted[f][i_s + 1:i_s + n].sum()))
    window = slice(i_s - 40, i_s + n + 40)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    lines = (("dead blend", plain, "#ff7f0e"), ("dead blend, lock_feet", locked, "#2ca02c"))
    for label, clip, color in lines:
        wrot, wpos = clip.fk()
        joints = clip.body.feet[foot]
        sites = np.flatnonzero(np.isin(clip.end_parents, joints))
        p = np.concatenate([wpos[:, joints], clip.end_site_positions(wrot, wpos)[:, sites]], axis=1)
        p = p * clip.meters_per_unit
        up = clip.up
        step = np.diff(p, axis=0)
        step -= (step @ up)[..., None] * up
        speed = np.concatenate([[0.0], np.linalg.norm(step, axis=-1).min(axis=1) * clip.fps])
        t = (np.arange(clip.n_frames) - i_s) / clip.fps
        top.plot(t[window], (p @ up).min(axis=1)[window] * 100, color=color, lw=1.6, label=label)
        bottom.plot(t[window], speed[window], color=color, lw=1.6, label=label)
    t = (np.arange(plain.n_frames) - i_s) / plain.fps
    for ax in (top, bottom):
        ax.axvspan(0, blend_time, color="#eeeeee", zorder=0)
        ax.fill_between(t[window], 0, 1, where=planted[foot][window], color=COLORS[foot], alpha=0.08,
                        transform=ax.get_xaxis_transform(), zorder=0)
    top.set_ylabel("lowest point (cm)")
    top.legend(loc="upper right", fontsize=8)
    bottom.set_ylabel("slowest point (m/s)")
    bottom.set_xlabel(f"seconds from the switch (grey: blend window; tint: {foot} foot planted)")
    fig.suptitle(f"{src.name} at {src_time:g} s -> {dst.name} at {dst_time:.2f} s (best_target_time): "
                 f"the {foot} foot through a dead blend")
    return _save(fig, out)


def _root_speed(clip: Clip) -> np.ndarray:
    """[T - 1] the motion root's speed over the floor (m/s) from each frame to the next."""
    from core import root

    _, pos = root.root_world(clip)
    step = np.diff(pos, axis=0)
    step -= np.outer(step @ clip.up, clip.up)
    return np.linalg.norm(step, axis=-1) * clip.fps * clip.meters_per_unit


def transition_root_speed(src: Clip, dst: Clip, out: Path, src_time: float = 1.6, dst_time: float = 0.3,
                          blend_time: float = 0.25) -> Path:
    """The root's speed over the floor through a dead-blended walk -> run: the root's positions
    blended into the re-anchored run (as transitions did) against its steps blended and integrated
    (as they do), with each take's own speed."""
    import math

    from core import root, transition

    after = transition.dead_blend(src, dst, src_time, dst_time, blend_time)
    fps = src.fps
    i_s, i_d = round(src_time * fps), round(dst_time * fps)
    k = math.ceil(blend_time * fps - 1e-5)
    # The run placed where re-anchoring puts it (after the window the new output is that placement
    # moved over the floor only, so its heading says where), its positions then blended as before.
    seen = dst.replace(up=src.up, forward=src.forward)
    own = root.trajectory(seen)
    heading = own.heading[i_d] + root.trajectory(after).heading[i_s + k] - own.heading[i_d + k]
    placed = root.reanchor(seen, i_d, root.trajectory(src).position[i_s], heading)
    before = transition.dead_blend(src, placed, src_time, dst_time, blend_time, reanchor=False)
    span = slice(i_s - round(0.4 * fps), i_s + k + round(0.4 * fps))
    t = (np.arange(after.n_frames - 1) + 1 - i_s) / fps
    fig, ax = plt.subplots(figsize=(9, 3.8))
    walk, run = _root_speed(src), _root_speed(dst)
    ax.plot(t[span], _root_speed(before)[span], color="#ff7f0e", lw=2.2, ls="--",
            label=f"before: positions blended (peak {_root_speed(before)[i_s:i_s + k].max():.2f} m/s)")
    ax.plot(t[span], _root_speed(after)[span], color="#2ca02c", lw=3.0, alpha=0.8,
            label=f"now: steps blended (peak {_root_speed(after)[i_s:i_s + k].max():.2f} m/s)")
    # The takes' own speeds on top: the output is the walk's before the switch, the run's after.
    ax.plot(t[:i_s][span.start:], walk[span.start:i_s], color=COLORS["L"], lw=1.0,
            label=f"{src.name} (source)")
    own_t = (np.arange(len(run)) + 1 - i_d) / fps
    keep = (own_t > 0) & (own_t <= t[span][-1])
    ax.plot(own_t[keep], run[keep], color=COLORS["R"], lw=1.0,
            label=f"{dst.name} from {dst_time:g} s (destination)")
    ax.axvspan(0, blend_time, color="#eeeeee", zorder=0, label="blend window")
    ax.set_xlabel("seconds from the switch")
    ax.set_ylabel("root speed over the floor (m/s)")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"{src.name} at {src_time:g} s -> {dst.name}: the hips' speed through a {blend_time:g} s "
                 "dead blend")
    return _save(fig, out)


def sync_path(walk: Clip, run: Clip, out: Path, seconds: float = 6.0) -> Path:
    """A walk -> run sync-blend ramp's root path seen from above, from loops cut as the takes walk
    (straight) and from loops that repeat their cut cycle's own turn (straighten=False, what
    loop_cycle made before), drawn along and across the initial line (the lateral axis stretched)."""
    from core import root, sync

    ramp = (np.array([0.0, seconds]), np.array([0.0, 1.0]))
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for label, straighten, color, ls in (("loops as their takes walk (default)", None, "#2ca02c", "-"),
                                         ("loops repeating their cut cycle's turn (straighten=False)", False,
                                          "#ff7f0e", "--")):
        a, b = sync.loop_cycle(walk, straighten=straighten), sync.loop_cycle(run, straighten=straighten)
        blend = sync.sync_blend(a, b, ramp, seconds)
        path = root.trajectory(blend).position * blend.meters_per_unit
        i, j = (round(float(x)) for x in blend.events["FootDown_L"][:2] * blend.fps)
        along = path[j] - path[i]
        along /= np.linalg.norm(along)
        across = np.cross(blend.up, along)
        rel = path - path[i]
        ax.plot(rel @ along, (rel @ across) * 100, color=color, ls=ls, lw=1.8,
                label=f"{label}: {abs(rel[-1] @ across) * 100:.0f} cm off after {rel[-1] @ along:.1f} m")
    ax.axhline(0.0, color="#999999", lw=0.8)
    ax.set_xlabel("metres along the first cycle's direction")
    ax.set_ylabel("across it (cm)")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"{walk.name} -> {run.name}, a {seconds:g} s sync-blend ramp seen from above")
    return _save(fig, out)


def blend_space_ramp(gaits: list[Clip], out: Path, seconds: float = 8.0) -> Path:
    """A speed ramp through a blend space of gaits and back: the target and the speed the pelvis
    travels at over each output cycle (and frame by frame), each gait's weight, and the footstep
    events with the touchdowns found on the output's own feet."""
    from core import blendspace

    speeds = blendspace.gait_speeds(gaits)
    target = (np.array([0.0, seconds, 2 * seconds]), np.array([speeds.min(), speeds.max(), speeds.min()]))
    clip = blendspace.blend_space(gaits, target, 2 * seconds)
    weights = blendspace.gait_weights(gaits, target, 2 * seconds)
    t = clip.times
    p = clip.fk()[1][:, clip.body.pelvis]
    floor = (p - np.outer(p @ clip.up, clip.up)) * clip.meters_per_unit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = contacts.footsteps(clip)
    fig, (top, mid, bottom) = plt.subplots(3, 1, figsize=(9, 6.4), sharex=True,
                                           gridspec_kw={"height_ratios": [3, 2, 1]})
    frame_speed = np.linalg.norm(np.diff(floor, axis=0), axis=-1) * clip.fps
    top.plot(t[1:], frame_speed, color="#bbbbbb", lw=0.8, label="pelvis, frame by frame")
    left = clip.events["FootDown_L"]
    for i, (a, b) in enumerate(itertools.pairwise(left)):
        ends = [np.array([np.interp(x * clip.fps, np.arange(clip.n_frames), floor[:, k]) for k in range(3)])
                for x in (a, b)]
        top.plot([a, b], [np.linalg.norm(ends[1] - ends[0]) / (b - a)] * 2, color="#444444", lw=2,
                 label="pelvis, over each cycle (left touchdown to the next)" if i == 0 else None)
    top.plot(t, np.interp(t, *target), color="#ff7f0e", ls="--", lw=1.6, label="target")
    palette = ("#2ca02c", "#1f77b4", "#9467bd", "#8c564b", "#e377c2")
    for k, (g, v) in enumerate(zip(gaits, speeds, strict=True)):
        name = g.name.split("_")[1] if g.name.count("_") >= 2 else g.name
        top.axhline(v, color=palette[k % len(palette)], ls=":", lw=1)
        top.annotate(f"{name} {v:.2f} m/s", (2 * seconds, v), xytext=(4, 0), textcoords="offset points",
                     va="center", fontsize=8, color=palette[k % len(palette)])
        mid.plot(t, weights[:, k], color=palette[k % len(palette)], lw=1.6, label=name)
    top.set_ylabel("m/s")
    top.legend(loc="upper left", fontsize=8)
    mid.set_ylabel("gait weight")
    mid.set_ylim(-0.05, 1.05)
    mid.legend(loc="upper left", fontsize=8, ncol=len(gaits))
    for row, foot in enumerate(("L", "R")):
        key = f"FootDown_{foot}"
        bottom.vlines(clip.events[key], row + 0.05, row + 0.95, color=COLORS[foot], lw=1.2)
        bottom.plot(found[key], np.full(len(found[key]), row + 0.5), "k.", ms=3)
    bottom.set_yticks([0.5, 1.5], ["FootDown_L", "FootDown_R"])
    bottom.set_ylim(0, 2)
    bottom.set_xlabel("seconds (dots: touchdowns found on the output's feet)")
    fig.suptitle(f"Blend space over {len(gaits)} gaits: a speed ramp and back, in step")
    return _save(fig, out)


def _foot_tips(clip: Clip, world_rot: np.ndarray, world_pos: np.ndarray, side: str) -> np.ndarray:
    """[T, 2, 3] each frame's ankle and the foot point farthest from it (a toe's tip), meters."""
    feet = contacts.foot_points(clip)[side]
    ends = clip.end_site_positions(world_rot, world_pos)
    points = np.concatenate([world_pos[:, feet[0]], ends[:, feet[1]]], axis=1) * clip.meters_per_unit
    ankle = world_pos[:, clip.body.feet[side][0]] * clip.meters_per_unit
    reach = np.linalg.norm(points - ankle[:, None], axis=-1).mean(axis=0)
    return np.stack([ankle, points[:, int(np.argmax(reach))]], axis=1)


def path_from_above(gaits: list[Clip], out: Path) -> Path:
    """Walking along paths seen from above (`path.follow`): the path, the hips, and each planted
    foot drawn from its ankle to its toe on every frame of its contact (one line where it holds,
    a fan where it spins or slides): an S-curve of two 4 m arcs with the speed ramping from the
    walk's to the dash's, a 1.5 m circle at the walk's speed, and a stretch of that circle close
    up, next to the same bend with the feet neither turned nor locked."""
    from core import blendspace, path, root

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

    def draw(ax: plt.Axes, clip: Clip, faint: bool = False) -> None:
        world_rot, world_pos = clip.fk()
        hips = world_pos[:, clip.body.pelvis] * mpu
        ax.plot(*(hips @ floor).T, color="#999999" if faint else "k", lw=0.9,
                label=None if faint else "hips")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            planted = contacts.contacts(clip, split_slides=False)
        for foot in ("L", "R"):
            tips = _foot_tips(clip, world_rot, world_pos, foot)
            first = True
            for a, b in zip(*contacts.runs(planted[foot]), strict=True):
                for t in range(a, b):
                    label = None if faint or not first else f"{foot} foot, each planted frame"
                    ax.plot(*(tips[t] @ floor).T, color="#aaaaaa" if faint else COLORS[foot], lw=1.4,
                            alpha=0.35, solid_capstyle="round", label=label)
                    first = False

    s_curve = arcs([4.0, -4.0], np.pi)
    ramp = (np.array([0.0, 4 * np.pi]), np.array([speeds[0], speeds[-1]]))
    circle = arcs([1.5], 2 * np.pi)
    fig, axes = plt.subplots(1, 3, figsize=(15, 6.2), gridspec_kw={"width_ratios": [1.0, 1.15, 1.15]})
    walked = path.follow(gaits, circle, float(speeds[0]))
    for ax, points, clip, title in (
            (axes[0], s_curve, path.follow(gaits, s_curve, ramp),
             f"S-curve of two 4 m arcs, {speeds[0]:.2f} -> {speeds[-1]:.2f} m/s (walk to dash)"),
            (axes[1], circle, walked, f"circle of 1.5 m at {speeds[0]:.2f} m/s (walk)"),
            (axes[2], circle, walked, "close up: locked (colours) and bent only (grey)")):
        flat = (points - np.outer(points @ up, up)) * mpu
        ax.plot(*(flat @ floor).T, color="#dddddd", lw=7, solid_capstyle="round", label="path")
        if ax is axes[2]:
            draw(ax, path.follow(gaits, circle, float(speeds[0]), lock_feet=False), faint=True)
        draw(ax, clip)
        ax.plot(*(flat[0] @ floor), "o", color="#2ca02c", ms=6, label="start")
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("m")
    axes[2].set_xlim(1.25, 1.75)
    axes[2].set_ylim(1.4, 1.9)
    axes[1].legend(loc="center", fontsize=7)
    fig.suptitle("path.follow, Bandai walk, run and dash seen from above: feet held where they land, "
                 "legs turned over them through the turns")
    return _save(fig, out)


# Blender's Bezier circle of radius 1 (Add > Curve > Circle): its points and handles, clockwise from
# (-1, 0) seen from above, cyclic.
BEZIER_CIRCLE = np.array([[[-1.0, 0.0], [-1.0, 0.552125], [0.0, 1.0], [-0.552125, 1.0]],
                          [[0.0, 1.0], [0.552125, 1.0], [1.0, 0.0], [1.0, 0.552125]],
                          [[1.0, 0.0], [1.0, -0.552125], [0.0, -1.0], [0.552125, -1.0]],
                          [[0.0, -1.0], [-0.552125, -1.0], [-1.0, 0.0], [-1.0, -0.552125]]])


def walk_along_curve(walk: Clip, run: Clip, out: Path, scale: float = 3.0, turn: float = 0.6,
                     at: tuple[float, float] = (2.0, -1.0)) -> Path:
    """Walk Along Path (stride.follow_path) as it bakes Blender's Bezier circle on an object scaled,
    turned about Z and moved, the walk and jog in meters (CMU_TO_METERS): `path.follow` on the
    curve's points in the armature's space, which tests/blender/test_follow_path.py shows the bake
    equal to. Seen from above and a little from the side (a point at height h drawn 0.35 h right
    and 0.5 h up): the curve, the hips, the character once a second and each planted foot."""
    from core import blendspace, path

    # The circle in the world (Blender's Z up, meters): each segment knot, handle, handle, knot.
    c, s = np.cos(turn), np.sin(turn)
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
        """Clip positions [..., 3] (file units) as drawn: world x, y (meters), lifted by the height."""
        m = p * unit
        return np.stack([m[..., 0] + 0.35 * m[..., 1], -m[..., 2] + 0.5 * m[..., 1]], axis=-1)

    fig, ax = plt.subplots(figsize=(7.5, 7.0))
    ax.plot(*world.T, color="#dddddd", lw=9, solid_capstyle="round", label="the curve")
    hips = world_pos[:, clip.body.pelvis].copy()
    hips[:, 1] = 0.0
    ax.plot(*seen(hips).T, color="#1f77b4", lw=1.0, label="hips (on the floor)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planted = contacts.contacts(clip, split_slides=False)
    for foot, color in (("L", "#d62728"), ("R", "#2ca02c")):
        tips = _foot_tips(clip, world_rot, world_pos, foot) / unit
        for a, b in zip(*contacts.runs(planted[foot]), strict=True):
            for f in range(a, b, 4):
                ax.plot(*seen(tips[f]).T, color=color, lw=1.4, alpha=0.5, solid_capstyle="round")
    ends = clip.end_site_positions(world_rot, world_pos)
    for f in range(0, clip.n_frames, round(clip.fps)):
        for j, p in enumerate(clip.parents.tolist()):
            if p >= 0:
                ax.plot(*seen(world_pos[f, np.array([p, j])]).T, color="k", lw=1.1)
        for e, q in enumerate(clip.end_parents.tolist()):
            ax.plot(*seen(np.stack([world_pos[f, q], ends[f, e]])).T, color="k", lw=1.1)
    ax.plot(*world[0], "o", color="#2ca02c", ms=7, label="start (frame 10 in the test)")
    ax.set_aspect("equal")
    ax.set_xlabel("world X (m)")
    ax.set_ylabel("world Y (m)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Walk Along Path: Blender's Bezier circle scaled {scale:g}x, turned "
                 f"{np.degrees(turn):.0f} deg, moved;\nCMU 02 walk and jog at {speed:.2f} m/s, the character "
                 "once a second, planted feet", fontsize=9)
    return _save(fig, out)


def _blend_for_timeline(walk: Clip, run: Clip) -> Clip:
    from core import sync

    clip = sync.sync_blend(sync.loop_cycle(walk), sync.loop_cycle(run), 0.5, 2.5)
    clip.name = "blend w=0.5"
    return clip


def _bandai_gaits() -> list[Clip]:
    from core import sync

    data = SAMPLES.parent / "tests" / "data" / "bandai"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [sync.loop_cycle(bvh.load(data / f"dataset-1_{gait}_normal_001.bvh"))
                for gait in ("walk", "run", "dash")]


def make_all(docs: Path = DOCS, extra: dict[str, Callable[[Path], Path]] | None = None) -> list[Path]:
    walk = bvh.load(SAMPLES / "02_01.bvh")
    run = bvh.load(SAMPLES / "02_03.bvh")
    walk_part = walk[walk.motion_start:]
    paths = [
        event_encoding(walk_part, docs / "events.png"),
        event_noisy(walk_part, docs / "events_noisy.png"),
        contact_timelines([walk_part, run[run.motion_start:], _blend_for_timeline(walk, run)],
                          docs / "contacts.png"),
        transition_speeds(walk, run, docs / "transition.png"),
        sync_ramp(walk, run, docs / "sync.png"),
        foot_locking(walk, run, docs / "footlock.png"),
        transition_root_speed(walk, run, docs / "root_speed.png"),
        sync_path(walk, run, docs / "sync_path.png"),
        blend_space_ramp(_bandai_gaits(), docs / "blendspace.png"),
        path_from_above(_bandai_gaits(), docs / "path.png"),
        walk_along_curve(walk, run, docs / "follow_path.png"),
    ]
    for name, make in (extra or {}).items():
        paths.append(make(docs / name))
    return paths


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DOCS, help="folder for the PNGs (default docs/)")
    for p in make_all(parser.parse_args().out):
        print(p)
