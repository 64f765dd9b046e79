"""What Blender plays: pose bone matrices from Blender's own evaluation (frame_set), an oracle
independent of Stride's reading of keys."""

from __future__ import annotations

import bpy
import numpy as np


def played(obj, frames, names=None):
    """[F, B, 4, 4] armature-space pose bone matrices of `obj` (bones `names`, default all) as
    Blender evaluates them at each of `frames` (NLA, modifiers, constraints and all)."""
    scene = bpy.context.scene
    assert scene is not None
    names = names or [pb.name for pb in obj.pose.bones]
    out = np.empty((len(frames), len(names), 4, 4))
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        bones = obj.pose.bones
        for j, n in enumerate(names):
            out[i, j] = np.array(bones[n].matrix)
    return out


def in_root_frame(m, root=0):
    """Matrices [F, B, 4, 4] seen from bone `root`'s (its own frame: where the body travels and
    turns taken out)."""
    return np.linalg.inv(m[:, root:root + 1]) @ m
