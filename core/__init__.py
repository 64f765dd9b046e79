"""Stride's core: motion-capture clips, events, blends and transitions in numpy (no Blender).

Imported relatively everywhere, so the package works as `core` in the repo and bundled inside the
Blender extension.
"""

__version__ = "0.1.0"
