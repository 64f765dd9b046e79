"""How clip seconds map to an action's frames (no bpy here)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class Timing(NamedTuple):
    """How clip seconds map to an action's frames: frame = start + seconds * fps."""

    start: float
    fps: float

    def frame(self, seconds: Any) -> Any:
        return self.start + np.asarray(seconds) * self.fps

    def seconds(self, frame: Any) -> Any:
        return (np.asarray(frame, dtype=np.float64) - self.start) / self.fps
