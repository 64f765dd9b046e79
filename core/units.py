"""Units: guess meters per file unit from skeleton height, convert clips to meters."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .clip import Clip

STATURE_M = 1.7
"""Assumed standing height of an adult performer, in meters."""

CMU_UNIT_M = 0.05644
"""One CMU BVH unit in meters (the converter's (1/0.45) * 2.54 cm)."""

# Units mocap files are written in. A skeleton whose height in file units reads as a plausible
# human stature in one of these (children to tall adults) gets that unit exactly.
KNOWN_UNITS_M = {
    "m": 1.0,
    "dm": 0.1,
    "cm": 0.01,
    "mm": 0.001,
    "in": 0.0254,
    "ft": 0.3048,
    "cmu": CMU_UNIT_M,
}


def guess_meters_per_unit(height_units: float) -> float:
    """Meters per file unit from a skeleton's height in file units.

    Picks the known unit that makes the skeleton closest to a 1.7 m stature (in log scale)
    when it lands within 1.0-2.3 m; otherwise scales the skeleton to 1.7 m.
    """
    if not (height_units > 0.0 and math.isfinite(height_units)):
        return 1.0
    best, best_err = None, math.inf
    for unit in KNOWN_UNITS_M.values():
        h_m = height_units * unit
        err = abs(math.log(h_m / STATURE_M))
        if 1.0 <= h_m <= 2.3 and err < best_err:
            best, best_err = unit, err
    return best if best is not None else STATURE_M / height_units


def to_meters(clip: Clip) -> Clip:
    """A copy of `clip` in meters (offsets, positions, End Sites scaled; meters_per_unit = 1)."""
    return clip.scaled(clip.meters_per_unit)
