"""Stride: motion-capture locomotion tools for Blender.

The core (maths, BVH, events, blends, transitions) is bundled as the `core` subpackage and imported
relatively; this package only holds the Blender layer: the action bridge, operators, panels and
the `stride` CLI command.
"""

from __future__ import annotations

import bpy

from . import cli, operators, panels, properties, rig

_CLASSES = (*properties.CLASSES, *operators.CLASSES, *panels.CLASSES, *rig.CLASSES)


def register() -> None:
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.register()
    rig.register()
    operators.register_menus()
    global _cli_handle
    _cli_handle = bpy.utils.register_cli_command("stride", cli.main)


def unregister() -> None:
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    operators.unregister_menus()
    rig.unregister()
    properties.unregister()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)


_cli_handle = None
