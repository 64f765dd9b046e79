"""Foot height and speed plots for hand-labelling touchdowns and flights (a dev tool, not a test).

Per clip and foot (left, right): ankle, toe and toe-tip (the toe's End Site) height above the
lowest foot point of the plotted captured frames, in cm, and ankle and toe speed in m/s (central
differences over one frame each side, captured frames only), over the 0-based frame index of the
file, with a fine frame grid. The labels in ../footsteps.csv (black triangles under the height
panels) and ../flight.csv (grey spans) are drawn on top so a reviewer can check them against the
curves; --bare leaves them out, as the labels were read off bare plots. Nothing here runs the
contact detector.

    .venv/bin/python tests/data/footsteps/plot.py            # rewrite every committed plot
    .venv/bin/python tests/data/footsteps/plot.py 02_01 --range 110 230 --minor 1 --bare --out /tmp/z.png

Needs matplotlib (a dev-only dependency).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MultipleLocator
from PIL import Image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixtures import take_path  # noqa: E402

from core import bvh  # noqa: E402
from core.clip import Clip  # noqa: E402

# Long takes are cut into pages of this many frames, so a frame stays ~4 px wide.
PAGE = 400
# The committed plots: (file stem, clip, first frame, last frame); last None = the clip's end.
COMMITTED: list[tuple[str, str, int, int | None]] = [
    ("02_01", "02_01", 0, None),
    ("02_02", "02_02", 0, None),
    ("02_03", "02_03", 0, None),
    ("09_01", "09_01", 0, None),
    ("09_12", "09_12", 0, 479),
    *[(f"131_03_{a:04d}", "131_03", a, a + PAGE - 1) for a in range(0, 1102, PAGE)],
    *[(f"01_01_{a:04d}", "01_01", a, a + PAGE - 1) for a in range(0, 2752, PAGE)],
]
SPEED_TOP = 2.0  # m/s shown: swing speeds are clipped, touchdowns happen well below
# Takes labelled only up to a frame (README): the rest of the plot is context.
LABELLED_LAST = {"09_12": 380}


def foot_tracks(clip: Clip) -> dict[str, dict[str, np.ndarray]]:
    """Per foot ('L', 'R'): world positions [T, 3] in meters of its ankle, toe and toe tip."""
    legs = clip.legs()
    if legs is None:
        raise SystemExit(f"{clip.name}: no legs found")
    rot, pos = clip.fk()
    ends = clip.end_site_positions(rot, pos)
    m = clip.meters_per_unit
    out = {}
    for side, leg in zip("LR", legs, strict=True):
        toe = leg[-1]
        sites = np.flatnonzero(clip.end_parents == toe)
        tip = ends[:, sites[0]] if sites.size else pos[:, toe]
        out[side] = {"ankle": pos[:, leg[-2]] * m, "toe": pos[:, toe] * m, "tip": tip * m}
    return out


def read_labels(path: Path, clip: str) -> list[list[str]]:
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    return [r for r in rows[1:] if r[0] == clip]


def plot(name: str, first: int, last: int | None, out: Path, bare: bool = False, minor: int = 5) -> None:
    clip = bvh.load(take_path(name))
    last = clip.n_frames - 1 if last is None else min(last, clip.n_frames - 1)
    tracks = foot_tracks(clip)
    frames = np.arange(first, last + 1)
    up = clip.up
    start = clip.motion_start
    # The converter's T-pose frame stays in view but neither sets the floor nor feeds a speed.
    lo = max(first, start)
    floor = min(float((t[k][lo:last + 1] @ up).min()) for t in tracks.values() for k in t)
    steps = [] if bare else read_labels(HERE.parent / "footsteps.csv", name)
    flights = [] if bare else read_labels(HERE.parent / "flight.csv", name)

    fig, axes = plt.subplots(4, 1, figsize=(max(12.0, 0.042 * len(frames) + 2.0), 9.0), sharex=True, dpi=100)
    fig.suptitle(f"{name}  frames {first}-{last}  (motion_start {start}, {clip.fps:g} fps)")
    styles = {"ankle": ("tab:blue", "-"), "toe": ("tab:orange", "-"), "tip": ("tab:green", ":")}
    for row, side in enumerate("LR"):
        h_ax, v_ax = axes[2 * row], axes[2 * row + 1]
        for key, (color, ls) in styles.items():
            p = tracks[side][key]
            h_ax.plot(frames, (p[first:last + 1] @ up - floor) * 100.0, color=color, ls=ls, lw=1.0, label=key)
            if key != "tip":
                v = np.full(clip.n_frames, np.nan)
                v[start:] = np.linalg.norm(np.gradient(p[start:], axis=0), axis=-1) * clip.fps
                v_ax.plot(frames, np.minimum(v[first:last + 1], SPEED_TOP), color=color, ls=ls, lw=1.0)
        h_ax.set_ylabel(f"{side} height cm")
        v_ax.set_ylabel(f"{side} speed m/s")
        v_ax.set_ylim(0.0, SPEED_TOP)
        top = h_ax.get_ylim()[1]
        h_ax.set_ylim(-2.0, top)
        h_ax.yaxis.set_major_locator(MultipleLocator(5.0 if top < 40 else 10.0))
        v_ax.yaxis.set_major_locator(MultipleLocator(0.5))
        v_ax.yaxis.set_minor_locator(MultipleLocator(0.1))
        for _, foot, frame in steps:
            f = int(frame)
            if foot == side and first <= f <= last:
                h_ax.plot([f], [-1.0], marker="^", color="black", ms=6)
                h_ax.annotate(str(f), (f, -1.0), xytext=(2, 4), textcoords="offset points", fontsize=7)
        for ax in (h_ax, v_ax):
            for _, a, b in flights:
                if int(b) >= first and int(a) <= last:
                    ax.axvspan(int(a) - 0.5, int(b) + 0.5, color="0.6", alpha=0.3, lw=0)
        h_ax.legend(loc="upper right", fontsize=7)
    end = LABELLED_LAST.get(name)
    if end is not None and first <= end < last:
        for ax in axes:
            ax.axvline(end + 0.5, color="black", ls="--", lw=1.0)
        axes[0].annotate("end of labelled range", (end + 0.5, 1.0), xycoords=("data", "axes fraction"),
                         xytext=(4, -12), textcoords="offset points", fontsize=8)
    for ax in axes:
        ax.xaxis.set_major_locator(MultipleLocator(20))
        ax.xaxis.set_minor_locator(MultipleLocator(minor))
        ax.grid(True, which="major", color="0.7", lw=0.6)
        ax.grid(True, which="minor", color="0.9", lw=0.4)
        ax.tick_params(axis="x", labelsize=7, labelbottom=True)
        ax.set_xlim(first - 0.5, last + 0.5)
    axes[-1].set_xlabel("frame (0-based file index)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    # A line plot needs few colours: a 64-colour palette keeps the committed files small.
    buf.seek(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.open(buf).convert("RGB").quantize(64).save(out, optimize=True)
    print(f"{out}  {out.stat().st_size // 1024} KB")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("clips", nargs="*", help="clip names (default: every committed plot)")
    ap.add_argument("--range", nargs=2, type=int, metavar=("FIRST", "LAST"), help="frames, both included")
    ap.add_argument("--out", type=Path, help="output PNG (one clip) or folder")
    ap.add_argument("--bare", action="store_true", help="leave the labels out")
    ap.add_argument("--minor", type=int, default=5, help="frames between minor ticks (1 for zooms)")
    args = ap.parse_args(argv)
    if not args.clips:
        for stem, name, a, b in COMMITTED:
            plot(name, a, b, (args.out or HERE) / f"{stem}.png", args.bare, args.minor)
        return
    for name in args.clips:
        a, b = args.range if args.range else (0, None)
        stem = f"{name}_{a}_{b}" if args.range else name
        out = args.out if args.out and args.out.suffix == ".png" else (args.out or HERE) / f"{stem}.png"
        plot(name, a, b, out, args.bare, args.minor)


if __name__ == "__main__":
    main()
